//! `softgpu objects`, the code object reader and the loader against the real
//! code objects of Debian's ROCm libraries in the sid chroot (HIP 6.4.3):
//! hipBLASLt's Tensile code objects (one metadata note per kernel),
//! rocSPARSE's 1.6 GB shared library, code objects for processors newer than
//! gfx942, and a real load through HIP 6.4's `hipModuleLoad`; and in the
//! ROCm 7.2.4 chroot: code objects hipcc 7.2.4 (clang 22) builds for generic
//! processors and for gfx1250 and gfx1251, and RCCL's compressed bundle of
//! 1.2 GB, read one code object at a time. Independent oracles:
//! clang-offload-bundler-21 and -22 (unbundling, listing), llvm-readelf-21
//! (notes, file headers, sections), llvm-readobj-22, -21 and -15 (`e_flags`).
//!
//! A missing chroot or package is a failure that says what to install, never a
//! skip: `scripts/test` builds the chroots (`scripts/sid-chroot`, and
//! `scripts/sid-chroot --rocm7 --realworld`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

mod common;
use common::{cli, repo, shim};

const CHROOT_HINT: &str = "run ./scripts/sid-chroot (scripts/test does it)";

/// hipBLASLt's Tensile library whose code object holds 251 metadata notes.
const HIPBLASLT_251: &str = "/usr/lib/x86_64-linux-gnu/hipblaslt/library/\
     TensileLibrary_SS_SS_HA_Bias_SAV_Type_SS_Contraction_l_Ailk_Bljk_Cijk_Dijk_CU104_gfx90a.co";
/// rocSPARSE's shared library: 1.6 GB, most of it `.hip_fatbin`.
const ROCSPARSE: &str = "/usr/lib/x86_64-linux-gnu/librocsparse.so.1.0";

fn chroot_root() -> PathBuf {
    std::env::var_os("SOFTGPU_SID_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/sid"))
}

const ROCM7_HINT: &str = "run ./scripts/sid-chroot --rocm7 --realworld (scripts/test does it)";

/// The ROCm 7.2.4 chroot: `$SOFTGPU_ROCM7_CHROOT`, default
/// `/var/cache/softgpu/rocm7`.
fn rocm7_root() -> PathBuf {
    std::env::var_os("SOFTGPU_ROCM7_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/rocm7"))
}

/// This test process's directory in the ROCm 7.2.4 chroot: (host path, path
/// inside). Its real-world stage (the libraries) must be ready.
fn rocm7_work() -> &'static (PathBuf, String) {
    static WORK: OnceLock<(PathBuf, String)> = OnceLock::new();
    WORK.get_or_init(|| {
        let root = rocm7_root();
        for marker in [".softgpu-ready", ".softgpu-realworld-ready"] {
            assert!(
                root.join(marker).exists(),
                "the ROCm 7.2.4 chroot is not ready at {} ({marker} is missing): {ROCM7_HINT}",
                root.display()
            );
        }
        let place = common::process_dir_in_chroot(&root, "real_code_objects");
        (place.host, place.seen)
    })
}

/// The host path of a path inside the ROCm 7.2.4 chroot, which must exist;
/// `package` is the Debian package that ships it.
fn in_rocm7(path: &str, package: &str) -> PathBuf {
    let _ = rocm7_work();
    let host = rocm7_root().join(path.trim_start_matches('/'));
    assert!(
        host.exists(),
        "{path} is missing in the ROCm 7.2.4 chroot: Debian experimental's {package} \
         should be there; {ROCM7_HINT}"
    );
    host
}

/// Runs `argv` inside the ROCm 7.2.4 chroot; panics with its output unless it
/// succeeds.
fn rocm7_run(argv: &[&str]) -> Output {
    let _ = rocm7_work();
    let out = Command::new(repo().join("scripts/sid-chroot"))
        .args(["--rocm7", "--run", "--"])
        .args(argv)
        .env("SOFTGPU_ROCM7_CHROOT", rocm7_root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/sid-chroot --rocm7: {e}; {ROCM7_HINT}"));
    assert!(
        out.status.success(),
        "{argv:?} in the ROCm 7.2.4 chroot failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// This test process's directory in the chroot: (host path, path inside).
fn work() -> &'static (PathBuf, String) {
    static WORK: OnceLock<(PathBuf, String)> = OnceLock::new();
    WORK.get_or_init(|| {
        let root = chroot_root();
        assert!(
            root.join(".softgpu-ready").exists(),
            "the Debian sid chroot is not ready at {}: {CHROOT_HINT}",
            root.display()
        );
        let place = common::process_dir_in_chroot(&root, "real_code_objects");
        (place.host, place.seen)
    })
}

/// The host path of a path inside the chroot, which must exist; `package` is
/// the Debian package that ships it.
fn in_chroot(path: &str, package: &str) -> PathBuf {
    let host = chroot_root().join(path.trim_start_matches('/'));
    assert!(
        host.exists(),
        "{path} is missing in the sid chroot: install Debian's {package} there \
         (./scripts/sid-chroot --run -- apt-get install -y {package}); {CHROOT_HINT}"
    );
    host
}

/// Runs `argv` inside the chroot; panics with its output unless it succeeds.
fn chroot_run(argv: &[&str]) -> Output {
    let out = Command::new(repo().join("scripts/sid-chroot"))
        .args(["--run", "--"])
        .args(argv)
        .env("SOFTGPU_SID_CHROOT", chroot_root())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/sid-chroot: {e}; {CHROOT_HINT}"));
    assert!(
        out.status.success(),
        "{argv:?} in the sid chroot failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn objects_json(path: &Path) -> Value {
    let out = Command::new(cli())
        .args(["objects", "--json"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "softgpu objects {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Per kernel symbol, the keys of its `amdhsa.kernels` entry that
/// llvm-readelf --notes prints (top-level kernel keys only), and the number of
/// NT_AMDGPU_METADATA notes it shows.
fn readelf_notes(text: &str) -> (usize, BTreeMap<String, BTreeMap<String, String>>) {
    let notes = text.matches("NT_AMDGPU_METADATA").count();
    let mut kernels = BTreeMap::new();
    let mut current: Option<BTreeMap<String, String>> = None;
    let mut flush = |k: Option<BTreeMap<String, String>>| {
        if let Some(k) = k {
            if let Some(sym) = k.get(".symbol") {
                kernels.insert(sym.clone(), k);
            }
        }
    };
    for line in text.lines() {
        let entry = line.strip_prefix("  - ");
        if entry.is_some() || !line.starts_with("    ") {
            // A new entry of amdhsa.kernels, or anything that ends one.
            flush(current.take());
            if entry.is_some() {
                current = Some(BTreeMap::new());
            }
        }
        // A kernel-level key: right after "  - ", or at exactly four spaces.
        let Some(kv) = entry.or_else(|| line.strip_prefix("    ")) else {
            continue;
        };
        if kv.starts_with(' ') {
            continue;
        }
        if let (Some(k), Some((key, value))) = (current.as_mut(), kv.split_once(':')) {
            let value = value.trim();
            if key.starts_with('.') && !value.is_empty() {
                k.insert(key.to_string(), value.trim_matches('\'').to_string());
            }
        }
    }
    flush(current.take());
    (notes, kernels)
}

/// Unbundles the gfx90a code object of a bundle file inside the chroot and
/// returns llvm-readelf-21 --notes of it.
fn notes_of_bundled(path: &str, target: &str) -> String {
    let (host, seen) = work();
    let name = Path::new(path).file_name().unwrap().to_string_lossy();
    let out_seen = format!("{seen}/{name}.hsaco");
    chroot_run(&[
        "clang-offload-bundler-21",
        "--unbundle",
        "--type=o",
        &format!("--input={path}"),
        &format!("--targets=hipv4-amdgcn-amd-amdhsa--{target}"),
        &format!("--output={out_seen}"),
    ]);
    assert!(host.join(format!("{name}.hsaco")).exists());
    let out = chroot_run(&["llvm-readelf-21", "--notes", &out_seen]);
    String::from_utf8(out.stdout).unwrap()
}

fn u64_of(v: &Value) -> Option<u64> {
    v.as_u64()
}

#[test]
fn every_metadata_note_of_a_hipblaslt_code_object_is_read_and_merged() {
    let host = in_chroot(HIPBLASLT_251, "libhipblaslt1");
    let j = objects_json(&host);
    let cos = j["code_objects"].as_array().unwrap();
    assert_eq!(cos.len(), 1);
    let co = &cos[0];
    let (notes, oracle) = readelf_notes(&notes_of_bundled(HIPBLASLT_251, "gfx90a:xnack-"));
    assert_eq!(notes, 251, "llvm-readelf shows 251 metadata notes");
    assert_eq!(oracle.len(), 251, "one kernel per note");
    assert_eq!(co["metadata_notes"].as_u64(), Some(251));
    assert_eq!(co["metadata_error"], Value::Null);
    assert_eq!(co["metadata_errors"], Value::Array(vec![]));
    let kernels = co["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 251);
    for k in kernels {
        let sym = k["symbol"].as_str().unwrap();
        let o = oracle
            .get(sym)
            .unwrap_or_else(|| panic!("{sym} is not in llvm-readelf's notes"));
        assert_eq!(k["source"], "metadata", "{sym}");
        for (field, key) in [
            ("sgpr_count", ".sgpr_count"),
            ("vgpr_count", ".vgpr_count"),
            ("max_flat_workgroup_size", ".max_flat_workgroup_size"),
            ("kernarg_size", ".kernarg_segment_size"),
            ("group_segment_fixed_size", ".group_segment_fixed_size"),
            ("wavefront_size", ".wavefront_size"),
        ] {
            let want: u64 = o[key].parse().unwrap();
            assert_eq!(u64_of(&k[field]), Some(want), "{sym}: {field}");
        }
        assert!(k["vgpr_count"].as_u64().unwrap() > 0, "{sym}");
    }
}

#[test]
fn hip_6_4_loads_a_hipblaslt_code_object_and_every_dispatch_carries_its_register_counts() {
    let co_host = in_chroot(HIPBLASLT_251, "libhipblaslt1");
    let j = objects_json(&co_host);
    let kernels = j["code_objects"][0]["kernels"].as_array().unwrap().clone();
    let (host, seen) = work();
    // The kernel list the program launches: name and kernarg size.
    let list: String = kernels
        .iter()
        .map(|k| {
            format!(
                "{} {}\n",
                k["symbol"].as_str().unwrap().trim_end_matches(".kd"),
                k["kernarg_size"]
            )
        })
        .collect();
    std::fs::write(host.join("kernels.txt"), list).unwrap();
    std::fs::copy(
        repo().join("integration/module_launch_all.cpp"),
        host.join("module_launch_all.cpp"),
    )
    .unwrap();
    std::fs::copy(shim(), host.join("libsoftgpu_hsa.so")).unwrap();
    let exe = format!("{seen}/module_launch_all");
    chroot_run(&[
        "hipcc",
        "--offload-arch=gfx90a",
        "-O1",
        &format!("{seen}/module_launch_all.cpp"),
        "-o",
        &exe,
    ]);
    let capture = format!("{seen}/launch_all.sgcap");
    // AMD_COMGR_CACHE=0: comgr 7.0.2's cache hands back the first compressed
    // bundle for later ones (a comgr problem, outside any HSA runtime).
    let out = chroot_run(&[
        "/usr/bin/env",
        "-i",
        "PATH=/usr/bin:/bin",
        "AMD_COMGR_CACHE=0",
        &format!("LD_PRELOAD={seen}/libsoftgpu_hsa.so"),
        &format!("SOFTGPU_CAPTURE={capture}"),
        "SOFTGPU_MODE=virtual",
        "SOFTGPU_TARGET=gfx90a",
        "SOFTGPU_LOG=warn",
        &exe,
        HIPBLASLT_251,
        &format!("{seen}/kernels.txt"),
        "64",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("sg: launched=251 failed=0"), "{stdout}");
    let csv = Command::new(cli())
        .args(["inspect", "--format", "csv"])
        .arg(host.join("launch_all.sgcap"))
        .output()
        .unwrap();
    assert_eq!(csv.status.code(), Some(0));
    let text = String::from_utf8(csv.stdout).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (kind, vgpr, sgpr, sym) = (
        col("Kind"),
        col("VGPR_Count"),
        col("SGPR_Count"),
        col("Kernel_Symbol"),
    );
    let want: BTreeMap<&str, (u64, u64)> = kernels
        .iter()
        .map(|k| {
            (
                k["symbol"].as_str().unwrap(),
                (
                    k["vgpr_count"].as_u64().unwrap(),
                    k["sgpr_count"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let mut seen_kernels = 0;
    for line in lines {
        // Tensile names hold no commas, so a plain split is exact here.
        let f: Vec<&str> = line.split(',').collect();
        if f[kind] != "KERNEL_DISPATCH" {
            continue;
        }
        let (v, s) = want
            .get(f[sym])
            .unwrap_or_else(|| panic!("dispatch of an unknown kernel: {line}"));
        assert_eq!(f[vgpr], v.to_string(), "VGPR_Count of {}", f[sym]);
        assert_eq!(f[sgpr], s.to_string(), "SGPR_Count of {}", f[sym]);
        assert_ne!(f[vgpr], "0", "{}", f[sym]);
        seen_kernels += 1;
    }
    assert_eq!(seen_kernels, 251, "one dispatch per kernel");
}

/// `EF_AMDGPU_MACH` value → processor, from `llvm-readobj --file-headers`
/// of the files `<hex>.o`: its `Flags [` list names
/// `EF_AMDGPU_MACH_AMDGCN_GFX90A`, `..._GFX9_GENERIC` (processors `gfx90a`,
/// `gfx9-generic`), or nothing for a value LLVM does not know.
fn readobj_processors(text: &str) -> BTreeMap<u32, Option<String>> {
    let mut out = BTreeMap::new();
    let mut file = None;
    let mut in_flags = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(f) = line.strip_prefix("File: ") {
            let stem = Path::new(f).file_stem().unwrap().to_string_lossy();
            file = Some(u32::from_str_radix(&stem, 16).unwrap());
            continue;
        }
        if line.starts_with("Flags [") {
            in_flags = true;
            if let Some(m) = file {
                out.insert(m, None);
            }
            continue;
        }
        if in_flags && line == "]" {
            in_flags = false;
            file = None;
            continue;
        }
        if let (true, Some(m), Some(rest)) =
            (in_flags, file, line.strip_prefix("EF_AMDGPU_MACH_AMDGCN_"))
        {
            let name = rest.split_whitespace().next().unwrap_or_default();
            out.insert(m, Some(name.to_ascii_lowercase().replace('_', "-")));
        }
    }
    out
}

#[test]
fn every_elf_machine_value_names_the_processor_llvm_names() {
    // A 64-byte AMDGPU ELF header for each AMDGCN EF_AMDGPU_MACH value, read
    // by llvm-readobj-22 (ROCm 7.2.4 chroot), llvm-readobj-21 (sid) and
    // llvm-readobj-15 (host). LLVM 20 dropped gfx940 and gfx941 (0x40,
    // 0x4b), which ROCr's amd_hsa_elf.h still lists and SoftGPU models, and
    // LLVM 22 added gfx1251 (0x5a), so a value is named as the newest LLVM
    // that names it does (gfx941 is in none: see below); where two name a
    // value they must agree.
    let (host, seen) = work();
    let (host7, seen7) = rocm7_work();
    let dir = host.join("machines");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(host7.join("machines")).unwrap();
    let mut argv21 = vec!["llvm-readobj-21".to_string(), "--file-headers".to_string()];
    let mut argv22 = vec!["llvm-readobj-22".to_string(), "--file-headers".to_string()];
    let mut cmd15 = Command::new("/usr/lib/llvm-15/bin/llvm-readobj");
    cmd15.arg("--file-headers");
    for m in 0x20u32..=0xff {
        let mut h = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 64, 3, 0, 0, 0, 0, 0, 0, 0];
        h.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
        h.extend_from_slice(&224u16.to_le_bytes()); // EM_AMDGPU
        h.extend_from_slice(&1u32.to_le_bytes());
        h.extend_from_slice(&[0; 24]); // entry, phoff, shoff
        h.extend_from_slice(&m.to_le_bytes());
        for v in [64u16, 56, 0, 64, 0, 0] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        let name = format!("{m:02x}.o");
        std::fs::write(dir.join(&name), &h).unwrap();
        std::fs::write(host7.join("machines").join(&name), &h).unwrap();
        argv21.push(format!("{seen}/machines/{name}"));
        argv22.push(format!("{seen7}/machines/{name}"));
        cmd15.arg(dir.join(&name));
    }
    let argv21: Vec<&str> = argv21.iter().map(String::as_str).collect();
    let llvm21 = readobj_processors(&String::from_utf8(chroot_run(&argv21).stdout).unwrap());
    let argv22: Vec<&str> = argv22.iter().map(String::as_str).collect();
    let llvm22 = readobj_processors(&String::from_utf8(rocm7_run(&argv22).stdout).unwrap());
    let out15 = cmd15
        .output()
        .unwrap_or_else(|e| panic!("cannot run llvm-readobj-15: {e}; run ./scripts/setup"));
    let llvm15 = readobj_processors(&String::from_utf8(out15.stdout).unwrap());
    for (v, names) in [(22, &llvm22), (21, &llvm21), (15, &llvm15)] {
        assert_eq!(names.len(), 0xe0, "LLVM {v}: one header per value");
    }
    let mut named = 0;
    for m in 0x20u32..=0xff {
        let (c, a, b) = (&llvm22[&m], &llvm21[&m], &llvm15[&m]);
        for (x, y, what) in [
            (c, a, "22 and 21"),
            (c, b, "22 and 15"),
            (a, b, "21 and 15"),
        ] {
            if let (Some(x), Some(y)) = (x, y) {
                assert_eq!(x, y, "LLVM {what} disagree about {m:#x}");
            }
        }
        // gfx941 came after LLVM 15 and went before LLVM 21: only ROCr's
        // amd_hsa_elf.h (and LLVM 16 to 19) name it.
        let rocr_only = (m == 0x4b).then_some("gfx941");
        let want = c.as_deref().or(a.as_deref()).or(b.as_deref()).or(rocr_only);
        assert_eq!(
            softgpu_hsa::code_object::processor_name(m),
            want,
            "EF_AMDGPU_MACH {m:#x}"
        );
        named += usize::from(want.is_some());
    }
    assert_eq!(
        llvm22[&0x5a].as_deref(),
        Some("gfx1251"),
        "LLVM 22 names gfx1251"
    );
    assert!(named >= 54, "{named} values named");
}

#[test]
fn code_objects_for_processors_after_gfx942_name_their_elf_target() {
    // Built by hipcc 7.0.2 (clang 21) for processors newer than gfx942, for
    // one SoftGPU does not model, and for generic targets.
    let (host, seen) = work();
    std::fs::write(
        host.join("tiny.hip"),
        "#include <hip/hip_runtime.h>\n__global__ void k(int* p) { p[0] = 1; }\n",
    )
    .unwrap();
    let archs = [
        "gfx950",
        "gfx1200",
        "gfx1201",
        "gfx1103",
        "gfx1152",
        "gfx9-generic",
        "gfx9-4-generic",
        "gfx12-generic",
    ];
    let mut argv = vec![
        "hipcc".to_string(),
        "--genco".to_string(),
        "-O1".to_string(),
    ];
    argv.extend(archs.iter().map(|a| format!("--offload-arch={a}")));
    argv.extend([
        format!("{seen}/tiny.hip"),
        "-o".to_string(),
        format!("{seen}/tiny.co"),
    ]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    chroot_run(&argv);
    let j = objects_json(&host.join("tiny.co"));
    let mut got: Vec<(String, String)> = j["code_objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let entry = c["entry_id"].as_str().unwrap();
            let processor = entry.rsplit("--").next().unwrap().to_string();
            (
                processor,
                c["elf_target"].as_str().unwrap_or("null").to_string(),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, String)> = archs
        .iter()
        .map(|a| (a.to_string(), a.to_string()))
        .collect();
    want.sort();
    assert_eq!(got, want, "elf_target of each entry is its processor");
}

#[test]
fn softgpu_objects_reads_a_library_larger_than_a_gibibyte() {
    let host = in_chroot(ROCSPARSE, "librocsparse1");
    let size = std::fs::metadata(&host).unwrap().len();
    assert!(
        size > 1 << 30,
        "{ROCSPARSE} is {size} bytes: no test of a large file"
    );
    let j = objects_json(&host);
    assert_eq!(j["container"], "host_elf");
    // The .hip_fatbin section as binutils' readelf sees it.
    let out = Command::new("readelf")
        .arg("-SW")
        .arg(&host)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains(" .hip_fatbin "))
        .expect("readelf lists .hip_fatbin");
    let f: Vec<&str> = line
        .split_whitespace()
        .skip_while(|t| *t != ".hip_fatbin")
        .collect();
    let (off, sz) = (
        u64::from_str_radix(f[3], 16).unwrap(),
        u64::from_str_radix(f[4], 16).unwrap(),
    );
    assert_eq!(j["fatbin_sections"][0]["offset"].as_u64(), Some(off));
    assert_eq!(j["fatbin_sections"][0]["size"].as_u64(), Some(sz));
    assert!(sz > 1 << 30, "the section itself is over 1 GiB");
    let bundles = j["bundles"].as_array().unwrap();
    assert!(bundles.len() > 1);
    // The last bundle ends inside the section, and the first and last list
    // the entries clang-offload-bundler-21 lists for them.
    let last = bundles.last().unwrap();
    let end = last["offset"].as_u64().unwrap() + last["size"].as_u64().unwrap();
    assert!(end <= off + sz);
    let (work_host, seen) = work();
    for (i, b) in [(0, &bundles[0]), (bundles.len() - 1, last)] {
        let (at, n) = (b["offset"].as_u64().unwrap(), b["size"].as_u64().unwrap());
        let mut bytes = vec![0u8; n as usize];
        use std::os::unix::fs::FileExt;
        std::fs::File::open(&host)
            .unwrap()
            .read_exact_at(&mut bytes, at)
            .unwrap();
        std::fs::write(work_host.join(format!("rocsparse-{i}.bundle")), &bytes).unwrap();
        let out = chroot_run(&[
            "clang-offload-bundler-21",
            "--list",
            "--type=o",
            &format!("--input={seen}/rocsparse-{i}.bundle"),
        ]);
        let mut theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        let mut ours: Vec<String> = b["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs, "entries of bundle {i}");
    }
    // Every device entry became a code object, and each lists kernels.
    let devices: usize = bundles
        .iter()
        .map(|b| {
            b["entries"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["kind"] != "host" && e["size"].as_u64() > Some(0))
                .count()
        })
        .sum();
    let cos = j["code_objects"].as_array().unwrap();
    assert_eq!(cos.len(), devices);
    assert!(cos.iter().all(|c| c["metadata_error"].is_null()));
    assert!(
        cos.iter()
            .any(|c| !c["kernels"].as_array().unwrap().is_empty())
    );
}

/// `EF_AMDGPU_GENERIC_VERSION_V<N>` in llvm-readobj's `Flags [` list of one
/// file, or None.
fn readobj_generic_version(text: &str) -> Option<u8> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("EF_AMDGPU_GENERIC_VERSION_V"))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .next()
}

#[test]
fn hipcc_7_2_code_objects_for_generic_processors_are_reported_as_generic_with_their_version() {
    // Built by hipcc 7.2.4 (clang 22, code object v6 by default) for every
    // generic processor it knows and for gfx1250 and gfx1251 (new in LLVM
    // 21 and 22); gfx90a for comparison. A generic code object is named as
    // its generic processor and never as one it runs on; its generic
    // version is the one llvm-readobj-22 reads in e_flags.
    let (host, seen) = rocm7_work();
    std::fs::write(
        host.join("tiny.hip"),
        "#include <hip/hip_runtime.h>\n__global__ void k(int* p) { p[0] = 1; }\n",
    )
    .unwrap();
    let archs = [
        "gfx9-generic",
        "gfx9-4-generic",
        "gfx10-1-generic",
        "gfx10-3-generic",
        "gfx11-generic",
        "gfx12-generic",
        "gfx1250",
        "gfx1251",
        "gfx90a",
    ];
    let mut argv = vec!["hipcc".to_string(), "--genco".into(), "-O1".into()];
    argv.extend(archs.iter().map(|a| format!("--offload-arch={a}")));
    argv.extend([
        format!("{seen}/tiny.hip"),
        "-o".to_string(),
        format!("{seen}/tiny.co"),
    ]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    rocm7_run(&argv);
    let j = objects_json(&host.join("tiny.co"));
    let cos = j["code_objects"].as_array().unwrap();
    assert_eq!(cos.len(), archs.len());
    for arch in archs {
        let co = cos
            .iter()
            .find(|c| {
                c["entry_id"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("--{arch}"))
            })
            .unwrap_or_else(|| panic!("no code object for {arch}"));
        let target = format!("hipv4-amdgcn-amd-amdhsa--{arch}");
        rocm7_run(&[
            "clang-offload-bundler-22",
            "--unbundle",
            "--type=o",
            &format!("--input={seen}/tiny.co"),
            &format!("--targets={target}"),
            &format!("--output={seen}/{arch}.hsaco"),
        ]);
        let out = rocm7_run(&[
            "llvm-readobj-22",
            "--file-headers",
            &format!("{seen}/{arch}.hsaco"),
        ]);
        let text = String::from_utf8(out.stdout).unwrap();
        let llvm =
            readobj_processors(&text.replace(&format!("File: {seen}/{arch}.hsaco"), "File: 0.o"));
        assert_eq!(
            llvm[&0].as_deref(),
            Some(arch),
            "llvm-readobj-22 names {arch}"
        );
        assert_eq!(co["code_object_version"], 6, "{arch}");
        assert_eq!(co["elf_target"].as_str(), Some(arch), "{arch}");
        assert_eq!(co["target"].as_str(), Some(arch), "{arch}");
        let generic = arch.ends_with("-generic");
        let version = readobj_generic_version(&text);
        assert_eq!(version.is_some(), generic, "{arch}: {text}");
        assert_eq!(
            co["generic_version"].as_u64(),
            version.map(u64::from),
            "{arch}"
        );
        assert_eq!(co["kernels"][0]["name"], "k(int*)", "{arch}");
    }
    let table = Command::new(cli())
        .arg("objects")
        .arg(host.join("tiny.co"))
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.lines().any(|l| l.starts_with("code object ")
            && l.contains(": gfx9-generic (")
            && l.contains("code object v6, generic version 1,")),
        "{table}"
    );
}

#[test]
fn rccl_7_2_s_compressed_bundle_over_a_gibibyte_is_read_one_code_object_at_a_time() {
    // RCCL 7.2.4's device code is one zstd bundle (v3) that decompresses to
    // 1.2 GB: more than softgpu objects holds at once (1 GiB), read as a
    // stream. Oracles: clang-offload-bundler-22 lists the entries and
    // unbundles the gfx90a code object, whose kernels llvm-readelf-22 reads.
    const RCCL: &str = "/usr/lib/x86_64-linux-gnu/librccl.so.1.0";
    let host = in_rocm7(RCCL, "librccl1");
    let (work_host, seen) = rocm7_work();
    let started = std::time::Instant::now();
    let j = objects_json(&host);
    eprintln!("softgpu objects --json {RCCL}: {:?}", started.elapsed());
    let big: Vec<&Value> = j["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["compression"]["uncompressed_size"].as_u64() > Some(1 << 30))
        .collect();
    assert!(!big.is_empty(), "{RCCL} no longer has a bundle over 1 GiB");
    let b = big[0];
    let (at, n) = (b["offset"].as_u64().unwrap(), b["size"].as_u64().unwrap());
    let mut bytes = vec![0u8; n as usize];
    use std::os::unix::fs::FileExt;
    std::fs::File::open(&host)
        .unwrap()
        .read_exact_at(&mut bytes, at)
        .unwrap();
    std::fs::write(work_host.join("rccl.bundle"), &bytes).unwrap();
    drop(bytes);
    let out = rocm7_run(&[
        "clang-offload-bundler-22",
        "--list",
        "--type=o",
        &format!("--input={seen}/rccl.bundle"),
    ]);
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let ours: Vec<String> = b["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    assert_eq!(sorted(&ours), sorted(&theirs), "entries");
    // The code objects: one per device entry, in the table's order.
    let bi = j["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .position(|x| x == b)
        .unwrap();
    let cos: Vec<&Value> = j["code_objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["bundle"].as_u64() == Some(bi as u64))
        .collect();
    let devices: Vec<&String> = ours.iter().filter(|id| !id.starts_with("host-")).collect();
    let listed: Vec<&str> = cos
        .iter()
        .map(|c| c["entry_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        devices.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "code objects in table order"
    );
    let co = cos
        .iter()
        .find(|c| c["target"] == "gfx90a")
        .expect("a gfx90a code object");
    rocm7_run(&[
        "clang-offload-bundler-22",
        "--unbundle",
        "--type=o",
        &format!("--input={seen}/rccl.bundle"),
        "--targets=hipv4-amdgcn-amd-amdhsa--gfx90a",
        &format!("--output={seen}/rccl-gfx90a.hsaco"),
    ]);
    let _ = std::fs::remove_file(work_host.join("rccl.bundle"));
    let size = std::fs::metadata(work_host.join("rccl-gfx90a.hsaco"))
        .unwrap()
        .len();
    assert_eq!(co["size"].as_u64(), Some(size));
    let out = rocm7_run(&[
        "llvm-readelf-22",
        "--notes",
        &format!("{seen}/rccl-gfx90a.hsaco"),
    ]);
    let _ = std::fs::remove_file(work_host.join("rccl-gfx90a.hsaco"));
    let (_, oracle) = readelf_notes(&String::from_utf8(out.stdout).unwrap());
    let kernels = co["kernels"].as_array().unwrap();
    assert_eq!(
        kernels.len(),
        oracle.len(),
        "kernels of the gfx90a code object"
    );
    for k in kernels {
        let sym = k["symbol"].as_str().unwrap();
        let o = oracle
            .get(sym)
            .unwrap_or_else(|| panic!("{sym} is not in llvm-readelf's notes"));
        let want: u64 = o[".kernarg_segment_size"].parse().unwrap();
        assert_eq!(k["kernarg_size"].as_u64(), Some(want), "{sym}");
    }
}
