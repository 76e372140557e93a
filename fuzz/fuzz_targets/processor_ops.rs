//! The `processor_ops` fuzz target: see `fuzz/src/processor_ops.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::processor_ops::run(data));
