//! Defines the `ROCR_1` version node for the shim's exports (see
//! `src/interpose/mod.rs`): only for the cdylib, never for tests or the CLI.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

fn main() {
    // Cargo always sets it for a build script; without it, link with a
    // relative path rather than stop the build here.
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rerun-if-changed=hsa-headers/rocr.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/hsa-headers/rocr.map");
}
