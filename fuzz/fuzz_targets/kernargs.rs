//! The `kernargs` fuzz target: see `fuzz/src/kernargs.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::kernargs::run(data));
