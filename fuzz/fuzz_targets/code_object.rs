//! The `code_object` fuzz target: see `fuzz/src/code_object.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::code_object::run(data));
