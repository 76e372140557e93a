//! Helpers shared by the integration tests: where the repository, the CLI and
//! the freshly built shim are. (Each test binary uses a subset.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `softgpu` binary built for this test run.
pub fn cli() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_softgpu"))
}

/// The shim built with the CLI. `cargo build` copies it to
/// `<profile>/libsoftgpu_hsa.so`, but `cargo test` rebuilds only
/// `<profile>/deps/libsoftgpu_hsa.so` and does not copy it up, so the newer of
/// the two is the one built from the current sources.
pub fn shim() -> PathBuf {
    let cli = cli();
    let dir = cli.parent().expect("the CLI path has a directory");
    [
        dir.join("libsoftgpu_hsa.so"),
        dir.join("deps/libsoftgpu_hsa.so"),
    ]
    .into_iter()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max()
    .map(|(_, p)| p)
    .unwrap_or_else(|| {
        panic!(
            "the shim libsoftgpu_hsa.so is not in {} (nor in deps/): run `cargo build --release` \
                 first (./scripts/test does), then `cargo test --release`",
            dir.display()
        )
    })
}

/// The two HIP versions the suite runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hip {
    /// Debian bookworm's HIP 5.2.3, on the host.
    V5_2,
    /// Debian sid's HIP 6.4.3, in the chroot of scripts/sid-chroot.
    V6_4,
}

impl Hip {
    pub fn label(self) -> &'static str {
        match self {
            Hip::V5_2 => "hip-5.2",
            Hip::V6_4 => "hip-6.4",
        }
    }
    /// What a program reports as HIP_VERSION_MAJOR.MINOR of the headers used.
    pub fn version(self) -> &'static str {
        match self {
            Hip::V5_2 => "5.2",
            Hip::V6_4 => "6.4",
        }
    }
}
