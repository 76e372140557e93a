//! The `softgpu` command line. All logic lives in [`softgpu_hsa::cli`].
fn main() {
    std::process::exit(softgpu_hsa::cli::main());
}
