//! Defines the `ROCR_1` version node for the shim's exports (see
//! `src/interpose/mod.rs`): only for the cdylib, never for tests or the CLI.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rerun-if-changed=hsa-headers/rocr.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/hsa-headers/rocr.map");
}
