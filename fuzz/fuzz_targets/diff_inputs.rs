//! The `diff_inputs` fuzz target: see `fuzz/src/diff_inputs.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::diff_inputs::run(data));
