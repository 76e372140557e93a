//! The `msgpack` fuzz target: see `fuzz/src/msgpack.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| softgpu_fuzz::msgpack::run(data));
