//! `softgpu run`: environment for the command, exit codes, and the capture
//! summary after a real HSA program (when a C compiler and the HSA headers are
//! installed; otherwise that test says why and skips).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A `softgpu` with the shim next to it. `cargo build` puts both in the target
/// directory; a bare `cargo test` builds the shim only under `deps/`, so then
/// both are copied into a private directory.
fn bin() -> PathBuf {
    static KIT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    KIT.get_or_init(|| {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_softgpu"));
        let dir = exe.parent().unwrap();
        if dir.join("libsoftgpu_hsa.so").is_file() {
            return exe;
        }
        let built = dir.join("deps").join("libsoftgpu_hsa.so");
        assert!(
            built.is_file(),
            "no shim next to {} nor at {}",
            exe.display(),
            built.display()
        );
        let kit = self::dir("kit");
        std::fs::copy(&exe, kit.join("softgpu")).unwrap();
        std::fs::copy(&built, kit.join("libsoftgpu_hsa.so")).unwrap();
        kit.join("softgpu")
    })
    .clone()
}

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_run")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(cwd)
        .arg("run")
        .args(args)
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap()
}

#[test]
fn the_command_gets_the_shim_and_the_softgpu_environment() {
    let cwd = dir("env");
    let out = run_in(
        &cwd,
        &[
            "--capture",
            "rel-%p.sgcap",
            "--target",
            "gfx942",
            "--mode",
            "virtual",
            "--",
            "sh",
            "-c",
            "echo \"$LD_PRELOAD|$SOFTGPU_CAPTURE|$SOFTGPU_TARGET|$SOFTGPU_MODE\"",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    let parts: Vec<&str> = line.trim_end().split('|').collect();
    let shim = bin().parent().unwrap().join("libsoftgpu_hsa.so");
    assert_eq!(parts[0], shim.to_str().unwrap());
    let cwd = cwd.canonicalize().unwrap();
    assert_eq!(
        parts[1],
        cwd.join("rel-%p.sgcap").to_str().unwrap(),
        "made absolute, %p kept"
    );
    assert_eq!(parts[2], "gfx942");
    assert_eq!(parts[3], "virtual");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("softgpu run: no capture at"), "{err}");
}

#[test]
fn the_exit_code_is_the_commands_own() {
    let cwd = dir("codes");
    let out = run_in(&cwd, &["--capture", "off", "--", "sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    let out = run_in(&cwd, &["--capture", "off", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(out.status.code(), Some(128 + 9));
    assert!(String::from_utf8_lossy(&out.stderr).contains("killed by signal 9"));
    let out = run_in(&cwd, &["--", "/no/such/program"]);
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run /no/such/program"));
}

#[test]
fn a_missing_shim_is_a_clear_error_with_exit_2() {
    let lonely = dir("lonely");
    let copy = lonely.join("softgpu");
    std::fs::copy(env!("CARGO_BIN_EXE_softgpu"), &copy).unwrap();
    let out = Command::new(&copy)
        .args(["run", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the shim {} is missing",
            lonely.join("libsoftgpu_hsa.so").display()
        )),
        "{err}"
    );
}

#[test]
fn a_real_hsa_program_is_summarised_from_its_capture() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("integration/barriers.c");
    let cwd = dir("barriers");
    let exe = cwd.join("barriers");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-std=c11", "-O2", "-I"])
        .arg(src.parent().unwrap())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-lhsa-runtime64")
        .output();
    match built {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "skipping: cannot build {} (run ./scripts/setup for gcc and the HSA headers): {}",
                src.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            return;
        }
        Err(e) => {
            eprintln!("skipping: no C compiler `{cc}` ({e}); run ./scripts/setup");
            return;
        }
    }
    let out = run_in(
        &cwd,
        &["--capture", "cap-%p.sgcap", "--", exe.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("softgpu run: "))
        .unwrap_or_else(|| panic!("no summary line: {err}"));
    assert!(
        line.starts_with("softgpu run: 2 dispatches validated (diagnostic_complete_no_execution, not_kernel_success), 0 rejected, 5 barriers; capture: "),
        "{line}"
    );
    assert!(line.ends_with(".sgcap (complete)"), "{line}");
    let path = line
        .split("capture: ")
        .nth(1)
        .unwrap()
        .trim_end_matches(" (complete)");
    assert!(Path::new(path).is_file(), "{path}");
    let cap = softgpu_hsa::capture::read_file(Path::new(path)).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), 7);
    let _ = std::fs::remove_file(path);
}
