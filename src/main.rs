//! The `softgpu` command line. All logic lives in [`softgpu_hsa::cli`].
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

fn main() {
    std::process::exit(softgpu_hsa::cli::main());
}
