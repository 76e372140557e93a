//! The `capture_reader` fuzz target: see `fuzz/src/capture_reader.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::capture_reader::run(data));
