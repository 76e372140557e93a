//! The `demangle` fuzz target: see `fuzz/src/demangle.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::demangle::run(data));
