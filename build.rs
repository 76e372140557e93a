//! Defines the `ROCR_1` version node for the shim's exports (see
//! `src/interpose/mod.rs`): only for the cdylib, never for tests or the CLI.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

fn main() {
    // Cargo always sets it for a build script; without it, link with a
    // relative path rather than stop the build here.
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    println!("cargo:rerun-if-changed=hsa-headers/rocr.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/hsa-headers/rocr.map");
    // `SOFTGPU_BLESS=1 cargo test --test entry_signatures` regenerates
    // src/interpose/signatures.rs. A row just added to the entry-point table has
    // no signature there yet, so under this cfg the table does not ask for one
    // (no signature check, an untyped stand-in) and the generator can run.
    println!("cargo::rustc-check-cfg=cfg(softgpu_bless)");
    println!("cargo:rerun-if-env-changed=SOFTGPU_BLESS");
    if std::env::var_os("SOFTGPU_BLESS").is_some_and(|v| v == "1") {
        println!("cargo:rustc-cfg=softgpu_bless");
    }
}
