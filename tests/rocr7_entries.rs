//! The functions ROCr 7.2.4 adds, called by a raw HSA program built against
//! ROCr 7.2.4's own headers and linked against its `libhsa-runtime64.so.1`
//! (`integration/rocr7_entries.c`, in the ROCm 7 chroot of
//! `scripts/sid-chroot --rocm7`, compiled there with clang-22), run with the
//! shim preloaded in virtual mode.
//!
//! Before the entry table had a row for each, the dynamic linker bound these
//! calls to the real ROCr, which the virtual runtime never initialised: every
//! check below failed (the calls returned `HSA_STATUS_ERROR_NOT_INITIALIZED`).

use std::path::PathBuf;
use std::time::Duration;

mod common;
use common::{Hip, output_within, repo, shim};

const CHECKS: &[&str] = &[
    "hsa_amd_agent_set_async_scratch_limit",
    "hsa_amd_ais_file_read",
    "hsa_amd_ais_file_write",
    "ais_errors",
    "hsa_amd_memory_get_preferred_copy_engine",
    "hsa_amd_vmem_address_reserve_align",
    "hsa_amd_vmem_retain_alloc_handle",
    "hsa_amd_vmem_get_alloc_properties_from_handle",
    "vmem_references",
    "hsa_ext_sampler_create_v2",
    "hsa_amd_register_system_event_handler",
    "hsa_amd_queue_get_info",
    "hsa_amd_signal_wait_all",
    "hsa_amd_portable_export_dmabuf_fails_closed",
];

/// The program built in this test process's corner of the chroot:
/// (the chroot, the directory as the host sees it, as the chroot sees it).
fn built() -> (common::Chroot, PathBuf, String) {
    let chroot = Hip::V7_2.chroot().unwrap();
    assert!(
        chroot.root.join(".softgpu-ready").is_file(),
        "the ROCm 7.2.4 chroot is not ready at {}: run {} (scripts/test does)",
        chroot.root.display(),
        chroot.build
    );
    let dir = common::process_dir_in_chroot(&chroot.root, "rocr7_entries");
    for f in ["rocr7_entries.c", "common.h"] {
        std::fs::copy(repo().join("integration").join(f), dir.host.join(f)).unwrap();
    }
    std::fs::copy(shim(), dir.host.join("libsoftgpu_hsa.so")).unwrap();
    // Against ROCr 7.2.4's headers, in its chroot.
    common::clang_in_chroot(
        &chroot,
        &["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"],
        &format!("{}/rocr7_entries", dir.seen),
        &format!("{}/rocr7_entries.c", dir.seen),
        &["-lhsa-runtime64"],
    );
    (chroot, dir.host, dir.seen)
}

#[test]
fn every_function_rocr_7_2_4_adds_is_answered_in_virtual_mode_as_rocr_would() {
    let (chroot, host, seen) = built();
    let out = output_within(
        chroot.run_command().args([
            "/usr/bin/env",
            "-i",
            "-C",
            &seen,
            "PATH=/usr/bin:/bin",
            &format!("LD_PRELOAD={seen}/libsoftgpu_hsa.so"),
            "SOFTGPU_MODE=virtual",
            "SOFTGPU_CAPTURE=off",
            &format!("{seen}/rocr7_entries"),
        ]),
        Duration::from_secs(120),
        "integration/rocr7_entries.c under the shim",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = format!(
        "in {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        host.display()
    );
    assert!(out.status.success(), "the program failed: {shown}");
    for c in CHECKS {
        assert!(
            stdout.lines().any(|l| l == format!("sg: ok={c}")),
            "check {c} did not pass: {shown}"
        );
    }
    assert!(stdout.contains("sg: done=1"), "{shown}");
    // The fail-closed call and the unknown queue attribute (77) name
    // themselves; nothing else warns: in particular the loaded ROCr 7.2.4
    // exports nothing the shim does not.
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains(" WARN ")).collect();
    assert!(
        warnings.len() == 2
            && warnings[0].contains("hsa_amd_queue_get_info: attribute 0x4d is not answered")
            && warnings[1].contains("hsa_amd_portable_export_dmabuf is not implemented"),
        "expected two warnings, the unknown queue attribute and the fail-closed dmabuf export: \
         {shown}"
    );
}
