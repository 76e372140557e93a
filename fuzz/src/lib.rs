//! The bodies of SoftGPU's fuzz targets, one module per target, each with
//! `run(data)`: the fuzz target (`fuzz_targets/<name>.rs`) calls it, and so
//! does `tests/fuzz_regressions.rs` in the main package, which replays every
//! input a fuzzer once failed on (`fuzz/regressions/<name>/`) under plain
//! `cargo test`. Nothing here depends on libFuzzer.

pub mod bundle;
pub mod capture_reader;
pub mod code_object;
pub mod demangle;
pub mod diff_inputs;
pub mod kernargs;
pub mod msgpack;
pub mod parser;
pub mod processor_ops;
