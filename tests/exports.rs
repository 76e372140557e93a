//! The shim's exported symbols match the one entry-point table, that table
//! covers every function of every real ROCr the suite has (5.2.3 on the host,
//! 6.4.3 in the sid chroot, 7.2.4 in the ROCm 7 chroot) and every function
//! real HIP imports, and when a loaded ROCr exports one the shim does not, the
//! shim (at start-up) and `softgpu run` (before the command) say so in one line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use softgpu_hsa::interpose::{Answer, ENTRY_POINTS};

mod common;
use common::{Hip, cli, shim};

/// Where a HIP version's libraries are, as the host sees them.
fn lib_dir(hip: Hip) -> PathBuf {
    let dir = match hip.chroot() {
        None => PathBuf::from("/"),
        Some(c) => {
            assert!(
                c.root.join(".softgpu-ready").is_file(),
                "the chroot for HIP {} is not ready at {}: run {} (scripts/test does)",
                hip.release(),
                c.root.display(),
                c.build
            );
            c.root
        }
    };
    dir.join("usr/lib/x86_64-linux-gnu")
}

/// The `hsa_*` dynamic symbols of `lib` that `nm -D <filter>` lists
/// (`--undefined-only`: what it imports; `--defined-only`: what it exports).
fn hsa_symbols(lib: &Path, filter: &str) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", filter])
        .arg(lib)
        .output()
        .unwrap_or_else(|e| panic!("cannot run nm (binutils): {e}"));
    assert!(out.status.success(), "nm failed on {}", lib.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        // The name is the last field of both kinds of line (`U name`, `addr T name`).
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap().to_string())
        .filter(|s| s.starts_with("hsa_"))
        .collect()
}

/// The `hsa_*` functions `lib` imports (undefined dynamic symbols).
fn imported_hsa(lib: &Path) -> BTreeSet<String> {
    hsa_symbols(lib, "--undefined-only")
}

fn exported_hsa(lib: &Path) -> BTreeSet<String> {
    hsa_symbols(lib, "--defined-only")
}

#[test]
fn the_shim_exports_exactly_the_entry_point_table() {
    let exported = exported_hsa(&shim());
    let table: BTreeSet<String> = ENTRY_POINTS.iter().map(|e| e.name.to_string()).collect();
    let missing: Vec<_> = table.difference(&exported).collect();
    let extra: Vec<_> = exported.difference(&table).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "table entries not exported: {missing:?}; exports not in the table: {extra:?}"
    );
}

/// Every `hsa_*` function the real ROCr of `hip` exports is exported by the
/// shim, so no call a program makes can bind to a ROCr the virtual runtime
/// never initialised; also checked through `code_object::dynsym`, the reader
/// the shim and `softgpu run` use for the same question at run time.
fn every_function_of_the_real_rocr_is_exported_by_the_shim(hip: Hip, at_least: usize) {
    let real = lib_dir(hip).join("libhsa-runtime64.so.1");
    assert!(
        real.exists(),
        "{} is missing: run ./scripts/setup --tests and ./scripts/sid-chroot [--rocm7]",
        real.display()
    );
    let rocr = exported_hsa(&real);
    assert!(
        rocr.len() >= at_least,
        "ROCr {} at {} exports only {} hsa_* functions (expected at least {at_least})",
        hip.release(),
        real.display(),
        rocr.len()
    );
    let ours = exported_hsa(&shim());
    let missing: Vec<_> = rocr.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "ROCr {} exports functions the shim does not: {missing:?}",
        hip.release()
    );
    let read = softgpu_hsa::code_object::dynsym::exported_functions(&real, "hsa_").unwrap();
    assert_eq!(
        read.into_iter().collect::<BTreeSet<_>>(),
        rocr,
        "code_object::dynsym and nm disagree on ROCr {}'s exports",
        hip.release()
    );
}

#[test]
fn every_function_rocr_5_2_3_exports_is_exported_by_the_shim() {
    every_function_of_the_real_rocr_is_exported_by_the_shim(Hip::V5_2, 224);
}

#[test]
fn every_function_rocr_6_4_3_exports_is_exported_by_the_shim() {
    every_function_of_the_real_rocr_is_exported_by_the_shim(Hip::V6_4, 256);
}

#[test]
fn every_function_rocr_7_2_4_exports_is_exported_by_the_shim() {
    every_function_of_the_real_rocr_is_exported_by_the_shim(Hip::V7_2, 260);
}

/// Every `hsa_*` function HIP `hip` imports has a row in the table, and the
/// virtual runtime answers it (`Shim`) or fails closed by name, never through
/// the real ROCr.
fn every_function_hip_imports_is_in_the_table(hip: Hip, soname: &str, at_least: usize) {
    let lib = lib_dir(hip).join(soname);
    let imports = imported_hsa(&lib);
    assert!(
        imports.len() >= at_least,
        "expected {} to import at least {at_least} hsa_* functions, got {}",
        lib.display(),
        imports.len()
    );
    let table: BTreeSet<&str> = ENTRY_POINTS.iter().map(|e| e.name).collect();
    let missing: Vec<&String> = imports
        .iter()
        .filter(|n| !table.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{} (ROCm {}) imports functions with no row in the entry table: {missing:?}",
        lib.display(),
        hip.release()
    );
}

#[test]
fn every_function_hip_6_4_3_imports_is_in_the_table() {
    every_function_hip_imports_is_in_the_table(Hip::V6_4, "libamdhip64.so.6", 90);
}

#[test]
fn every_function_hip_7_2_4_imports_is_in_the_table() {
    every_function_hip_imports_is_in_the_table(Hip::V7_2, "libamdhip64.so.7", 95);
}

#[test]
fn every_function_rocms_opencl_runtime_7_2_4_imports_is_in_the_table() {
    // rocm-opencl-icd (libamdocl64.so.2) is ROCclr too, and binds the same
    // entry points HIP does.
    every_function_hip_imports_is_in_the_table(Hip::V7_2, "libamdocl64.so.2", 90);
}

#[test]
fn the_eight_functions_hip_7_2_4_binds_that_rocr_6_4_3_lacks_are_answered_by_the_virtual_runtime() {
    // HIP 7.2.4 imports them; before they had rows, the dynamic linker bound
    // them in the real, uninitialised ROCr, and the bundled example crashed.
    for name in [
        "hsa_amd_agent_set_async_scratch_limit",
        "hsa_amd_ais_file_read",
        "hsa_amd_ais_file_write",
        "hsa_amd_memory_get_preferred_copy_engine",
        "hsa_amd_vmem_address_reserve_align",
        "hsa_amd_vmem_retain_alloc_handle",
        "hsa_ext_sampler_create_v2",
        "hsa_amd_register_system_event_handler",
    ] {
        let e = ENTRY_POINTS
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("{name} has no row"));
        assert_eq!(e.virtual_mode, Answer::Shim, "{name}");
    }
    // Exported dmabuf stays a named failure in virtual mode (no dmabuf exists).
    let e = ENTRY_POINTS
        .iter()
        .find(|e| e.name == "hsa_amd_portable_export_dmabuf")
        .unwrap();
    assert_eq!(e.virtual_mode, Answer::FailClosed);
}

// ---------------------------------------------------------------------------
// A ROCr newer than the shim: one warning line naming what is not shadowed
// ---------------------------------------------------------------------------

/// A library named `libhsa-runtime64.so.1` that exports `hsa_init` and
/// `hsa_shut_down` (as any ROCr does) and two functions no ROCr has (as a
/// future one would), and a raw-HSA program linked against it. Built with the
/// host's C compiler; the shim, preloaded, answers `hsa_init`.
fn future_rocr() -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exports-future-rocr");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("future.c"),
        "int hsa_init(void) { return 0x1001; }\n\
         int hsa_shut_down(void) { return 0x1001; }\n\
         int hsa_amd_softgpu_future_one(void) { return 0x1001; }\n\
         int hsa_amd_softgpu_future_two(void) { return 0x1001; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("prog.c"),
        "#include <stdio.h>\nint hsa_init(void); int hsa_shut_down(void);\n\
         int main(void) { int s = hsa_init(); printf(\"hsa_init %#x\\n\", s); hsa_shut_down(); return s; }\n",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let run = |args: &[&str]| {
        let out = Command::new(&cc)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}; run ./scripts/setup"));
        assert!(
            out.status.success(),
            "{cc} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "-shared",
        "-fPIC",
        "-Wl,-soname,libhsa-runtime64.so.1",
        "-o",
        "libhsa-runtime64.so.1",
        "future.c",
    ]);
    run(&[
        "-o",
        "prog",
        "prog.c",
        "-L.",
        "-l:libhsa-runtime64.so.1",
        "-Wl,-rpath,$ORIGIN",
    ]);
    (dir.clone(), dir.join("prog"))
}

#[test]
fn a_loaded_rocr_exporting_functions_the_shim_lacks_is_named_in_one_warning_line_at_start_up() {
    let (dir, prog) = future_rocr();
    let out = Command::new(&prog)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_CAPTURE", "off")
        .env("SOFTGPU_SUMMARY", "0")
        .env("SOFTGPU_MODE", "virtual")
        .env_remove("SOFTGPU_LOG")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The shim answered hsa_init (the stand-in's would return 0x1001).
    assert!(
        out.status.success() && stdout.contains("hsa_init 0"),
        "the shim did not answer hsa_init: {stdout}{stderr}"
    );
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("SoftGPU does not provide"))
        .collect();
    assert_eq!(lines.len(), 1, "want one warning line:\n{stderr}");
    let l = lines[0];
    assert!(
        l.contains("WARN")
            && l.contains("libhsa-runtime64.so.1")
            && l.contains("exports 2 functions")
            && l.contains("hsa_amd_softgpu_future_one, hsa_amd_softgpu_future_two")
            && l.contains("uninitialised"),
        "{l}"
    );
    // hsa_init and hsa_shut_down are shadowed, so they are not named.
    assert!(
        !l.contains("hsa_init") && !l.contains("hsa_shut_down"),
        "{l}"
    );
}

#[test]
fn softgpu_run_names_what_the_rocr_the_loader_finds_exports_and_the_shim_lacks_before_it_starts() {
    let (dir, _) = future_rocr();
    let out = Command::new(cli())
        .args([
            "run",
            "--capture",
            "off",
            "--",
            "/bin/sh",
            "-c",
            "echo started >&2",
        ])
        .env("LD_LIBRARY_PATH", &dir)
        .env_remove("SOFTGPU_MODE")
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warn = stderr
        .find("softgpu run: the HSA runtime")
        .unwrap_or_else(|| panic!("no warning:\n{stderr}"));
    let started = stderr.find("started").expect("the command did not run");
    assert!(warn < started, "the warning must come first:\n{stderr}");
    assert!(
        stderr.contains("exports 2 functions SoftGPU does not provide: hsa_amd_softgpu_future_one, hsa_amd_softgpu_future_two"),
        "{stderr}"
    );
    // With the machine's own ROCr (5.2.3, every function shadowed) it says nothing.
    let out = Command::new(cli())
        .args(["run", "--capture", "off", "--", "/bin/true"])
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("SOFTGPU_MODE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("does not provide"), "{stderr}");
}

#[test]
fn every_function_hip_5_2_3_imports_is_in_the_table() {
    let hip = Path::new("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5");
    assert!(
        hip.exists(),
        "{} is missing: run ./scripts/setup",
        hip.display()
    );
    let out = Command::new("nm")
        .args(["-D", "--undefined-only"])
        .arg(hip)
        .output()
        .unwrap();
    let imports: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap().to_string())
        .filter(|s| s.starts_with("hsa_"))
        .collect();
    assert!(
        imports.len() >= 70,
        "expected HIP 5.2.3 to import about 76 hsa_* functions, got {}",
        imports.len()
    );
    let table: BTreeSet<&str> = ENTRY_POINTS.iter().map(|e| e.name).collect();
    for name in &imports {
        assert!(
            table.contains(name.as_str()),
            "HIP imports {name}, which is not in the table"
        );
    }
    let implemented = ENTRY_POINTS
        .iter()
        .filter(|e| e.virtual_mode == Answer::Shim)
        .count();
    assert!(
        implemented > 100,
        "only {implemented} entry points implemented"
    );
}

#[test]
fn every_export_carries_the_rocr_1_symbol_version() {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(shim())
        .output()
        .unwrap_or_else(|e| panic!("cannot run objdump (binutils): {e}"));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut unversioned = Vec::new();
    let mut versioned = 0;
    for line in text
        .lines()
        .filter(|l| l.contains(" g ") && l.contains(".text"))
    {
        let name = line.split_whitespace().last().unwrap_or("");
        if !name.starts_with("hsa_") {
            unversioned.push(format!("unexpected global export {name}"));
        } else if line.contains(" ROCR_1 ") {
            versioned += 1;
        } else {
            unversioned.push(name.to_string());
        }
    }
    assert!(
        unversioned.is_empty(),
        "exports without ROCR_1: {unversioned:?}"
    );
    assert_eq!(versioned, ENTRY_POINTS.len());
}
