//! The `bundle` fuzz target: see `fuzz/src/bundle.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::bundle::run(data));
