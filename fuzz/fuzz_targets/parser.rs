//! The `parser` fuzz target: see `fuzz/src/parser.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::parser::run(data));
