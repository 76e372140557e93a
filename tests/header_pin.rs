//! The installed HSA headers are exactly the ones `hsa-headers/PINNED` names
//! (ROCr 5.2.3's, on the host), and ROCr 7.2.4's in the ROCm 7 chroot are
//! exactly the ones `hsa-headers/PINNED-rocm7` names.
//!
//! `src/abi.rs` mirrors layouts from these headers. If a header on this machine
//! differs from the pinned one, the layout test may be checking against a different
//! ABI than the one we claim to follow. This test says which header differs, and
//! how to fix it.
//!
//! Hashes are computed by `sha256sum` (coreutils, present on every Debian system),
//! so the crate needs no hashing dependency.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SETUP_HINT: &str = "run ./scripts/setup (it installs the pinned libhsa-runtime-dev)";

/// What `hsa-headers/PINNED` says.
#[derive(Debug, Default)]
struct Pin {
    package: Option<(String, String)>,
    /// `chroot rocm7`: the include directory is inside the ROCm 7 chroot.
    chroot: Option<PathBuf>,
    include: Option<PathBuf>,
    /// file name -> sha256 hex, in file order.
    headers: Vec<(String, String)>,
}

fn parse_pin(text: &str) -> Result<Pin, String> {
    let mut pin = Pin::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["package", name, version] => {
                pin.package = Some((name.to_string(), version.to_string()));
            }
            ["chroot", "rocm7"] => {
                pin.chroot = Some(
                    std::env::var_os("SOFTGPU_ROCM7_CHROOT")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/rocm7")),
                )
            }
            ["include", dir] => pin.include = Some(PathBuf::from(dir)),
            ["sha256", hex, file]
                if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                pin.headers
                    .push((file.to_string(), hex.to_ascii_lowercase()));
            }
            _ => {
                return Err(format!(
                    "hsa-headers/PINNED line {}: cannot parse {line:?}",
                    n + 1
                ));
            }
        }
    }
    if pin.package.is_none() {
        return Err("hsa-headers/PINNED has no `package` line".into());
    }
    if pin.include.is_none() {
        return Err("hsa-headers/PINNED has no `include` line".into());
    }
    if pin.headers.is_empty() {
        return Err("hsa-headers/PINNED has no `sha256` lines".into());
    }
    Ok(pin)
}

fn read_pin() -> Pin {
    read_pin_file("PINNED")
}

fn read_pin_file(name: &str) -> Pin {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("hsa-headers")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_pin(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// sha256 of each existing file, by running `sha256sum` once over all of them.
fn sha256_of(files: &[PathBuf]) -> BTreeMap<PathBuf, String> {
    let existing: Vec<&PathBuf> = files.iter().filter(|p| p.is_file()).collect();
    let mut out = BTreeMap::new();
    if existing.is_empty() {
        return out;
    }
    let result = Command::new("sha256sum")
        .args(&existing)
        .output()
        .unwrap_or_else(|e| panic!("cannot run sha256sum (coreutils): {e}"));
    assert!(
        result.status.success(),
        "sha256sum failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    // Output lines are "<hex>  <path>" in argument order.
    let stdout = String::from_utf8_lossy(&result.stdout);
    for (line, path) in stdout.lines().zip(existing) {
        let hex = line
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        out.insert(path.clone(), hex);
    }
    out
}

#[test]
fn every_pinned_header_is_installed_with_its_pinned_sha256() {
    check_installed(read_pin(), "hsa-headers/PINNED", SETUP_HINT);
}

#[test]
fn every_header_pinned_for_rocr_7_2_4_is_in_the_rocm7_chroot_with_its_pinned_sha256() {
    let pin = read_pin_file("PINNED-rocm7");
    assert!(
        pin.chroot.is_some(),
        "hsa-headers/PINNED-rocm7 must say `chroot rocm7`"
    );
    check_installed(
        pin,
        "hsa-headers/PINNED-rocm7",
        "run ./scripts/sid-chroot --rocm7 (scripts/test does)",
    );
}

fn check_installed(pin: Pin, file: &str, hint: &str) {
    let include = pin.include.clone().unwrap();
    let dir = match &pin.chroot {
        Some(root) => root.join(include.strip_prefix("/").unwrap_or(&include)),
        None => include,
    };
    let (package, version) = pin.package.clone().unwrap();
    let paths: Vec<PathBuf> = pin.headers.iter().map(|(f, _)| dir.join(f)).collect();
    let actual = sha256_of(&paths);

    let mut problems = Vec::new();
    for ((file, want), path) in pin.headers.iter().zip(&paths) {
        match actual.get(path) {
            None => problems.push(format!("{file}: missing ({}); {hint}", path.display())),
            Some(got) if got != want => problems.push(format!(
                "{file}: sha256 {got} differs from pinned {want} ({})",
                path.display()
            )),
            Some(_) => {}
        }
    }
    if !problems.is_empty() {
        let admindir = pin.chroot.as_ref().map_or_else(
            || PathBuf::from("/var/lib/dpkg"),
            |r| r.join("var/lib/dpkg"),
        );
        let installed = Command::new("dpkg-query")
            .arg(format!("--admindir={}", admindir.display()))
            .args(["-W", "-f=${Version}", &package])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|| "not installed".into());
        panic!(
            "{} of {} pinned HSA headers do not match {file} \
             (pinned {package} {version}; installed: {installed}):\n  {}\n\
             {hint}. If you meant to move to new headers, follow hsa-headers/README.md \
             (re-pin, then fix src/abi.rs).",
            problems.len(),
            pin.headers.len(),
            problems.join("\n  ")
        );
    }
}

#[test]
fn the_pin_names_every_header_the_abi_mirrors() {
    for file in ["PINNED", "PINNED-rocm7"] {
        the_pin_file_names_every_header_the_abi_mirrors(file);
    }
}

fn the_pin_file_names_every_header_the_abi_mirrors(file: &str) {
    let pin = read_pin_file(file);
    let names: Vec<&str> = pin.headers.iter().map(|(f, _)| f.as_str()).collect();
    for needed in [
        "hsa.h",
        "hsa_ext_amd.h",
        "amd_hsa_queue.h",
        "amd_hsa_signal.h",
        "amd_hsa_kernel_code.h",
        "hsa_ven_amd_loader.h",
    ] {
        assert!(
            names.contains(&needed),
            "hsa-headers/{file} has no sha256 line for {needed}"
        );
    }
    assert_eq!(
        pin.package.as_ref().map(|(n, _)| n.as_str()),
        Some("libhsa-runtime-dev"),
        "hsa-headers/{file} must pin the libhsa-runtime-dev package"
    );
}

#[test]
fn a_malformed_pin_line_is_reported_with_its_line_number() {
    let err =
        parse_pin("package libhsa-runtime-dev 1\ninclude /x\nsha256 nothex hsa.h\n").unwrap_err();
    assert!(err.contains("line 3"), "{err}");
}
