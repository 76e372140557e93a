//! A code object built for another target is refused at load, the way ROCr
//! refuses it, and the HIP program gets an error instead of crashing.

use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::shim;

fn hipcc(args: &[&str], out: &Path) {
    let o = Command::new("hipcc")
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run hipcc: {e}; run ./scripts/setup"));
    assert!(
        o.status.success(),
        "hipcc {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_module_for_another_target_is_refused_and_hip_reports_an_error_without_crashing() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("target_mismatch");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("module_mismatch");
    let src = repo.join("integration/module_mismatch.cpp");
    hipcc(
        &["--offload-arch=gfx90a", "-O1", src.to_str().unwrap()],
        &exe,
    );
    let co = dir.join("kernels-gfx1030.elf");
    let ksrc = repo.join("integration/kernel_checks_kernels.hip");
    hipcc(
        &[
            "--genco",
            "--no-gpu-bundle-output",
            "--offload-arch=gfx1030",
            "-O1",
            ksrc.to_str().unwrap(),
        ],
        &co,
    );
    let out = Command::new(&exe)
        .arg(&co)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_CAPTURE", "off")
        .env("SOFTGPU_MODE", "virtual")
        .env("SOFTGPU_TARGET", "gfx90a")
        .env("SOFTGPU_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the program must get an error, not crash:\n{stdout}\n{stderr}"
    );
    assert!(
        !stdout.contains("sg: hipModuleLoad=0\n"),
        "a gfx1030 module loaded on a gfx90a agent:\n{stdout}"
    );
    assert!(
        stdout.contains("sg: hipModuleLoad="),
        "no result line:\n{stdout}"
    );
}
