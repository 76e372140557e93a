//! `softgpu objects` and the bundle reader against real files: HIP executables,
//! shared libraries, multi-arch and multi-file builds, `--genco` bundles and
//! bare code objects built at test time by hipcc (HIP 5.2.3, clang 15), and
//! compressed bundles (`CCOB`, zstd, versions 2 and 3) built by HIP 6.4's
//! hipcc and clang-offload-bundler 21 in the Debian sid chroot. Independent
//! oracles: llvm-readelf (metadata notes, sections), llvm-objcopy (section
//! bytes), clang-offload-bundler (unbundling, decompression) and llvm-cxxfilt
//! (demangling).
//!
//! A missing compiler or chroot is a failure, not a skip: `scripts/test` runs
//! `scripts/setup` (hipcc, clang-15, llvm-15) and `scripts/sid-chroot` first.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;
use softgpu_hsa::code_object::bundle::{self, BundleErrorKind, CompressionMethod, Container};
use softgpu_hsa::code_object::parse;

const SETUP_HINT: &str =
    "run ./scripts/setup (installs hipcc, which brings clang-15, lld-15 and llvm-15)";
const CHROOT_HINT: &str = "run ./scripts/sid-chroot (scripts/test does it)";
const LLVM_BIN: &str = "/usr/lib/llvm-15/bin";

const KERNELS: &str = r#"
#include <hip/hip_runtime.h>
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void __launch_bounds__(128) lds(float* out) {
  __shared__ float tile[256];
  tile[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[255 - threadIdx.x];
}
__global__ void priv(float* out, int k) {
  volatile float arr[1024];
  for (int i = 0; i < 1024; i++) arr[i] = out[i] * k;
  out[threadIdx.x] = arr[(threadIdx.x * k) & 1023];
}
extern "C" __global__ void plain_c(int* p) { p[0] = 1; }
int main() { return 0; }
"#;

const LIBRARY: &str = r#"
#include <hip/hip_runtime.h>
__global__ void scale(float* p, float s) { p[threadIdx.x] *= s; }
extern "C" void launch_scale(float* p) { hipLaunchKernelGGL(scale, 1, 64, 0, 0, p, 2.0f); }
"#;

const UNIT_A: &str = r#"
#include <hip/hip_runtime.h>
__global__ void unit_a(int* p) { p[0] = 1; }
void run_a() { hipLaunchKernelGGL(unit_a, 1, 1, 0, 0, nullptr); }
"#;

const UNIT_B: &str = r#"
#include <hip/hip_runtime.h>
__global__ void unit_b(int* p, int q) { p[q] = 2; }
void run_a();
int main() { run_a(); hipLaunchKernelGGL(unit_b, 1, 1, 0, 0, nullptr, 0); return 0; }
"#;

/// OpenCL states a required workgroup size; HIP cannot.
const OPENCL: &str = r#"
__attribute__((reqd_work_group_size(64, 2, 1)))
__kernel void fixed(__global int* p) { p[0] = 1; }
"#;

// ---- building ----

struct Built {
    path: PathBuf,
    bytes: Vec<u8>,
}

fn work_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("objects");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command, hint: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}; {hint}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{hint}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn llvm(tool: &str) -> PathBuf {
    let p = Path::new(LLVM_BIN).join(tool);
    assert!(p.exists(), "{} is missing: {SETUP_HINT}", p.display());
    p
}

fn built(path: PathBuf) -> Built {
    Built {
        bytes: std::fs::read(&path).unwrap(),
        path,
    }
}

/// hipcc (HIP 5.2.3) on the host: `sources` compiled and linked together.
fn hipcc(name: &str, sources: &[(&str, &str)], args: &[&str]) -> Built {
    let dir = work_dir();
    let path = dir.join(name);
    let mut cmd = Command::new("hipcc");
    cmd.args(args).arg("-o").arg(&path);
    for (file, text) in sources {
        let src = dir.join(format!("{name}-{file}"));
        std::fs::write(&src, text).unwrap();
        cmd.arg(&src);
    }
    // hipcc prints a traceback from rocm_agent_enumerator when no GPU
    // exists; only its exit status matters.
    run(&mut cmd, SETUP_HINT);
    built(path)
}

/// This test process's corner of the sid chroot (`<root>/softgpu/objects-<pid>`):
/// (host path, path inside the chroot).
fn chroot_dir() -> &'static (PathBuf, String) {
    static DIR: OnceLock<(PathBuf, String)> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = common::sid_root();
        let ready = root.join(".softgpu-ready");
        assert!(
            ready.exists(),
            "the Debian sid chroot with HIP 6.4 is not ready ({} is missing): {CHROOT_HINT}",
            ready.display()
        );
        let dir = common::process_dir_in_chroot(&root, "objects");
        (dir.host, dir.seen)
    })
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `argv` inside the sid chroot with `env` set.
fn in_chroot(env: &[&str], argv: &[&str]) -> Output {
    let _ = chroot_dir();
    let mut cmd = Command::new(repo().join("scripts/sid-chroot"));
    cmd.args(["--run", "--", "/usr/bin/env"])
        .args(env)
        .args(argv);
    run(&mut cmd, CHROOT_HINT)
}

/// hipcc of HIP 6.4 (clang 21) in the chroot, on KERNELS; the result is
/// copied out to the host work directory.
fn hipcc_6_4(name: &str, env: &[&str], args: &[&str]) -> Built {
    let (host, seen) = chroot_dir();
    std::fs::write(host.join(format!("{name}.hip")), KERNELS).unwrap();
    let out = format!("{seen}/{name}");
    let mut argv = vec!["hipcc", "--offload-arch=gfx90a"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["-o", &out]);
    let src = format!("{seen}/{name}.hip");
    argv.push(&src);
    in_chroot(env, &argv);
    let path = work_dir().join(name);
    std::fs::copy(host.join(name), &path).unwrap();
    built(path)
}

macro_rules! artifact {
    ($name:ident, $build:expr) => {
        fn $name() -> &'static Built {
            static B: OnceLock<Built> = OnceLock::new();
            B.get_or_init(|| $build)
        }
    };
}

const GFX90A: &str = "--offload-arch=gfx90a";

artifact!(exe, hipcc("exe", &[("k.hip", KERNELS)], &[GFX90A]));
artifact!(
    multi_arch,
    hipcc(
        "multi_arch",
        &[("k.hip", KERNELS)],
        &[GFX90A, "--offload-arch=gfx1030"]
    )
);
artifact!(
    shared_lib,
    hipcc(
        "libscale.so",
        &[("lib.hip", LIBRARY)],
        &[GFX90A, "-shared", "-fPIC"]
    )
);
artifact!(
    two_units,
    hipcc(
        "two_units",
        &[("a.hip", UNIT_A), ("b.hip", UNIT_B)],
        &[GFX90A]
    )
);
artifact!(
    genco_bundle,
    hipcc("genco.bundle", &[("k.hip", KERNELS)], &[GFX90A, "--genco"])
);
artifact!(
    raw_code_object,
    hipcc(
        "raw.hsaco",
        &[("k.hip", KERNELS)],
        &[GFX90A, "--genco", "--no-gpu-bundle-output"]
    )
);
artifact!(
    compressed_exe,
    hipcc_6_4("compressed_exe", &[], &["--offload-compress"])
);
artifact!(
    compressed_exe_v3,
    hipcc_6_4(
        "compressed_exe_v3",
        &["COMPRESSED_BUNDLE_FORMAT_VERSION=3"],
        &["--offload-compress"]
    )
);
artifact!(
    uncompressed_exe_6_4,
    hipcc_6_4("uncompressed_exe_6_4", &[], &["--no-offload-compress"])
);
artifact!(opencl_code_object, {
    let dir = work_dir();
    let src = dir.join("fixed.cl");
    let obj = dir.join("fixed.o");
    let out = dir.join("fixed.hsaco");
    std::fs::write(&src, OPENCL).unwrap();
    run(
        Command::new(llvm("clang"))
            .args(["-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a"])
            .args(["-nogpulib", "-c", "-o"])
            .arg(&obj)
            .arg(&src),
        SETUP_HINT,
    );
    run(
        Command::new(llvm("ld.lld"))
            .args(["-shared", "-o"])
            .arg(&out)
            .arg(&obj),
        SETUP_HINT,
    );
    built(out)
});

/// The compressed bundle HIP 6.4 placed in `compressed_exe`'s .hip_fatbin,
/// dumped by llvm-objcopy.
fn ccob_of(b: &Built, name: &str) -> Built {
    let path = work_dir().join(name);
    run(
        Command::new(llvm("llvm-objcopy"))
            .arg(format!("--dump-section=.hip_fatbin={}", path.display()))
            .arg(&b.path)
            .arg(work_dir().join(format!("{name}.stripped"))),
        SETUP_HINT,
    );
    built(path)
}

artifact!(ccob_v2, ccob_of(compressed_exe(), "v2.ccob"));
artifact!(ccob_v3, ccob_of(compressed_exe_v3(), "v3.ccob"));

// The uncompressed fat binary HIP 5.2 placed in `exe`'s .hip_fatbin.
artifact!(exe_fatbin, ccob_of(exe(), "exe.fatbin"));

// ---- oracles ----

fn readelf(path: &Path, args: &[&str]) -> String {
    let out = run(
        Command::new(llvm("llvm-readelf")).args(args).arg(path),
        SETUP_HINT,
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The kernels of a code object's metadata note as llvm-readelf prints them:
/// one map of top-level `.key: value` lines per kernel, and `amdhsa.target`.
fn oracle_metadata(path: &Path) -> (Vec<BTreeMap<String, String>>, Option<String>) {
    let text = readelf(path, &["--notes"]);
    let mut kernels: Vec<BTreeMap<String, String>> = Vec::new();
    let mut target = None;
    let mut in_kernels = false;
    let mut list_key: Option<String> = None;
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("amdhsa.target:") {
            target = Some(t.trim().to_string());
        }
        if !line.starts_with(' ') {
            in_kernels = line.starts_with("amdhsa.kernels:");
            continue;
        }
        if !in_kernels {
            continue;
        }
        let entry = if let Some(rest) = line.strip_prefix("  - ") {
            kernels.push(BTreeMap::new());
            rest
        } else if let Some(rest) = line.strip_prefix("    ") {
            if let Some(item) = rest.strip_prefix("  - ") {
                // A list item of a kernel key (.reqd_workgroup_size).
                if let (Some(k), Some(key)) = (kernels.last_mut(), &list_key) {
                    let v = k.entry(key.clone()).or_default();
                    if !v.is_empty() {
                        v.push(',');
                    }
                    v.push_str(item.trim());
                }
                continue;
            }
            if rest.starts_with(' ') || rest.starts_with('-') {
                continue;
            }
            rest
        } else {
            continue;
        };
        if let (Some(k), Some((key, value))) = (kernels.last_mut(), entry.split_once(':')) {
            let value = value.trim();
            list_key = value.is_empty().then(|| key.trim().to_string());
            if !value.is_empty() {
                k.insert(key.trim().to_string(), value.to_string());
            }
        }
    }
    (kernels, target)
}

fn section_offset(path: &Path, name: &str) -> u64 {
    let text = readelf(path, &["-SW"]);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == name))
        .unwrap_or_else(|| panic!("{} has no {name}", path.display()));
    let after = line.split(name).nth(1).unwrap();
    let offset = after.split_whitespace().nth(2).unwrap();
    u64::from_str_radix(offset, 16).unwrap()
}

fn demangle(name: &str) -> String {
    let out = run(Command::new(llvm("llvm-cxxfilt")).arg(name), SETUP_HINT);
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Unbundles one target with clang-offload-bundler: llvm 15 on the host for
/// plain bundles, llvm 21 in the chroot for compressed ones.
fn unbundle(b: &Built, target: &str, compressed: bool) -> Vec<u8> {
    let name = format!(
        "{}.{}.unbundled",
        b.path.file_name().unwrap().to_string_lossy(),
        target.replace(':', "_")
    );
    if !compressed {
        let out = work_dir().join(&name);
        run(
            Command::new(llvm("clang-offload-bundler"))
                .args(["-type=o", &format!("-targets={target}")])
                .arg(format!("-input={}", b.path.display()))
                .arg(format!("-output={}", out.display()))
                .arg("-unbundle"),
            SETUP_HINT,
        );
        return std::fs::read(out).unwrap();
    }
    let (host, seen) = chroot_dir();
    let input = host.join(b.path.file_name().unwrap());
    std::fs::copy(&b.path, &input).unwrap();
    let input_seen = format!("{seen}/{}", b.path.file_name().unwrap().to_string_lossy());
    in_chroot(
        &[],
        &[
            "clang-offload-bundler-21",
            "-type=o",
            &format!("-targets={target}"),
            &format!("-input={input_seen}"),
            &format!("-output={seen}/{name}"),
            "-unbundle",
        ],
    );
    std::fs::read(host.join(name)).unwrap()
}

// ---- the CLI ----

fn softgpu(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("objects")
        .arg(file)
        .args(args)
        .output()
        .unwrap()
}

fn objects_json(b: &Built) -> Value {
    let out = softgpu(&["--json"], &b.path);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        b.path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn write_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let p = work_dir().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Every kernel the JSON lists for `co` agrees with llvm-readelf's reading of
/// the code object bytes `bytes`, and every kernel readelf sees is listed.
fn check_against_readelf(co: &Value, bytes: &[u8], name: &str) {
    let path = write_temp(&format!("{name}.co"), bytes);
    let (oracle, target) = oracle_metadata(&path);
    assert_eq!(co["metadata_target"].as_str(), target.as_deref(), "{name}");
    let kernels = co["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), oracle.len(), "{name}: kernel count");
    for k in &oracle {
        let sym = &k[".symbol"];
        let j = kernels
            .iter()
            .find(|j| j["symbol"] == sym.as_str())
            .unwrap_or_else(|| panic!("{name}: {sym} missing"));
        let num = |key: &str| k.get(key).map(|v| v.parse::<u64>().unwrap());
        for (field, key) in [
            ("kernarg_size", ".kernarg_segment_size"),
            ("kernarg_align", ".kernarg_segment_align"),
            ("group_segment_fixed_size", ".group_segment_fixed_size"),
            ("private_segment_fixed_size", ".private_segment_fixed_size"),
            ("max_flat_workgroup_size", ".max_flat_workgroup_size"),
            ("wavefront_size", ".wavefront_size"),
            ("sgpr_count", ".sgpr_count"),
            ("vgpr_count", ".vgpr_count"),
            ("agpr_count", ".agpr_count"),
        ] {
            assert_eq!(j[field].as_u64(), num(key), "{name}: {sym}: {field}");
        }
        let reqd = k.get(".reqd_workgroup_size").map(|v| {
            v.split(',')
                .map(|n| n.trim().parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        });
        let got = j["reqd_workgroup_size"]
            .as_array()
            .map(|a| a.iter().map(|n| n.as_u64().unwrap()).collect::<Vec<_>>());
        assert_eq!(got, reqd, "{name}: {sym}: reqd_workgroup_size");
        assert_eq!(
            j["uses_dynamic_stack"].as_bool(),
            k.get(".uses_dynamic_stack").map(|v| v == "true"),
            "{name}: {sym}"
        );
        assert_eq!(j["name"], demangle(&k[".name"]).as_str(), "{name}: {sym}");
        assert_eq!(j["source"], "metadata");
    }
}

/// The code object bytes a JSON code object names in an uncompressed file.
fn bytes_at<'a>(b: &'a Built, co: &Value) -> &'a [u8] {
    let at = co["file_offset"].as_u64().unwrap() as usize;
    let size = co["size"].as_u64().unwrap() as usize;
    &b.bytes[at..at + size]
}

// ---- real files ----

#[test]
fn a_hipcc_executable_lists_its_gfx90a_kernels_as_llvm_readelf_reads_them() {
    let b = exe();
    let j = objects_json(b);
    assert_eq!(j["label"], "metadata_only_no_isa_execution");
    assert_eq!(j["container"], "host_elf");
    assert_eq!(j["host_machine"], 62);
    let fatbin = section_offset(&b.path, ".hip_fatbin");
    assert_eq!(j["fatbin_sections"][0]["offset"], fatbin);
    let bundles = j["bundles"].as_array().unwrap();
    assert_eq!(bundles.len(), 1);
    assert_eq!(bundles[0]["offset"], fatbin);
    assert_eq!(bundles[0]["compression"], Value::Null);
    let ids: Vec<&str> = bundles[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx90a"
        ]
    );
    let cos = j["code_objects"].as_array().unwrap();
    assert_eq!(cos.len(), 1);
    let co = &cos[0];
    assert_eq!(co["target"], "gfx90a");
    assert_eq!(co["elf_target"], "gfx90a");
    assert_eq!(co["entry_id"], "hipv4-amdgcn-amd-amdhsa--gfx90a");
    assert_eq!(co["metadata_error"], Value::Null);
    let bytes = bytes_at(b, co);
    check_against_readelf(co, bytes, "exe");
    // The entry's bytes are what clang-offload-bundler unbundles from the section.
    assert_eq!(
        bytes,
        unbundle(exe_fatbin(), "hipv4-amdgcn-amd-amdhsa--gfx90a", false)
    );
    let by_symbol = |s: &str| {
        co["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["symbol"] == s)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_symbol("_Z3ldsPf.kd")["group_segment_fixed_size"], 1024);
    assert_eq!(by_symbol("_Z3ldsPf.kd")["max_flat_workgroup_size"], 128);
    assert!(by_symbol("_Z4privPfi.kd")["private_segment_fixed_size"].as_u64() >= Some(4096));
    assert_eq!(by_symbol("plain_c.kd")["name"], "plain_c");
    assert_eq!(
        by_symbol("_Z4vaddPKfS0_Pfi.kd")["name"],
        "vadd(float const*, float const*, float*, int)"
    );
}

#[test]
fn multi_arch_executables_list_one_code_object_per_offload_arch() {
    let b = multi_arch();
    let j = objects_json(b);
    let cos = j["code_objects"].as_array().unwrap();
    let targets: BTreeSet<&str> = cos.iter().map(|c| c["target"].as_str().unwrap()).collect();
    assert_eq!(targets, BTreeSet::from(["gfx1030", "gfx90a"]));
    for co in cos {
        let t = co["target"].as_str().unwrap();
        check_against_readelf(co, bytes_at(b, co), &format!("multi-{t}"));
        let wave = if t == "gfx1030" { 32 } else { 64 };
        assert!(
            co["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .all(|k| k["wavefront_size"] == wave),
            "{t}"
        );
        assert_eq!(co["elf_target"], t);
    }
}

#[test]
fn a_shared_library_lists_its_kernels_like_an_executable() {
    let b = shared_lib();
    let j = objects_json(b);
    assert_eq!(j["container"], "host_elf");
    let co = &j["code_objects"][0];
    check_against_readelf(co, bytes_at(b, co), "shared");
    assert_eq!(co["kernels"][0]["symbol"], "_Z5scalePff.kd");
    assert_eq!(co["kernels"][0]["name"], "scale(float*, float)");
}

#[test]
fn each_translation_unit_is_its_own_bundle_in_one_fatbin_section() {
    let b = two_units();
    let j = objects_json(b);
    assert_eq!(j["fatbin_sections"].as_array().unwrap().len(), 1);
    let bundles = j["bundles"].as_array().unwrap();
    assert_eq!(bundles.len(), 2);
    // The second starts at an aligned offset after the first's padding.
    let (a, b2) = (
        bundles[0]["offset"].as_u64().unwrap(),
        bundles[1]["offset"].as_u64().unwrap(),
    );
    assert!(b2 >= a + bundles[0]["size"].as_u64().unwrap());
    assert_eq!(b2 % 4096, 0);
    let symbols: BTreeSet<&str> = j["code_objects"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kernels"].as_array().unwrap())
        .map(|k| k["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(
        symbols,
        BTreeSet::from(["_Z6unit_aPi.kd", "_Z6unit_bPii.kd"])
    );
}

#[test]
fn a_genco_bundle_holds_what_clang_offload_bundler_unbundles() {
    let b = genco_bundle();
    let j = objects_json(b);
    assert_eq!(j["container"], "offload_bundle");
    assert_eq!(j["host_machine"], Value::Null);
    let co = &j["code_objects"][0];
    let bytes = bytes_at(b, co);
    assert_eq!(bytes, unbundle(b, "hipv4-amdgcn-amd-amdhsa--gfx90a", false));
    assert_eq!(bytes, &raw_code_object().bytes[..]);
    check_against_readelf(co, bytes, "genco");
}

#[test]
fn a_bare_code_object_is_listed_with_the_target_its_metadata_states() {
    let b = raw_code_object();
    let j = objects_json(b);
    assert_eq!(j["container"], "code_object");
    assert_eq!(j["bundles"], serde_json::json!([]));
    let co = &j["code_objects"][0];
    assert_eq!(co["target"], "gfx90a");
    assert_eq!(co["metadata_target"], "amdgcn-amd-amdhsa--gfx90a");
    assert_eq!(co["bundle"], Value::Null);
    assert_eq!(co["file_offset"], 0);
    check_against_readelf(co, &b.bytes, "raw");
}

#[test]
fn an_opencl_kernel_reports_its_required_workgroup_size() {
    let b = opencl_code_object();
    let j = objects_json(b);
    let co = &j["code_objects"][0];
    check_against_readelf(co, &b.bytes, "opencl");
    assert_eq!(
        co["kernels"][0]["reqd_workgroup_size"],
        serde_json::json!([64, 2, 1])
    );
    let table = String::from_utf8(softgpu(&[], &b.path).stdout).unwrap();
    assert!(table.contains("64x2x1"), "{table}");
}

#[test]
fn hip_6_4_compressed_executables_are_zstd_bundles_of_version_2() {
    let b = compressed_exe();
    let j = objects_json(b);
    let c = &j["bundles"][0]["compression"];
    assert_eq!(c["method"], "zstd");
    assert_eq!(c["version"], 2);
    assert_eq!(c["header_size"], 24);
    assert_eq!(j["bundles"][0]["size"], c["total_size"]);
    let ids: Vec<&str> = j["bundles"][0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgcn-amd-amdhsa--gfx90a"
        ]
    );
    let co = &j["code_objects"][0];
    assert_eq!(co["file_offset"], Value::Null);
    assert_eq!(co["target"], "gfx90a");
    // The decompressed entry is byte for byte what clang-offload-bundler 21
    // extracts, and its metadata is what llvm-readelf reads.
    let contents = bundle::read(&b.bytes).unwrap();
    let bun = &contents.bundles[0];
    let entry = bun.entries.iter().find(|e| e.is_device_code()).unwrap();
    let ours = bun.entry_bytes(entry);
    assert_eq!(
        ours,
        unbundle(ccob_v2(), "hipv4-amdgcn-amd-amdhsa--gfx90a", true)
    );
    check_against_readelf(co, ours, "ccob-v2");
    // The same kernels as the uncompressed build of the same HIP.
    let plain = objects_json(uncompressed_exe_6_4());
    assert_eq!(plain["bundles"][0]["compression"], Value::Null);
    assert_eq!(plain["code_objects"][0]["kernels"], co["kernels"]);
}

#[test]
fn compressed_bundle_version_3_has_64_bit_sizes_and_reads_the_same() {
    let b = compressed_exe_v3();
    let j = objects_json(b);
    let c = &j["bundles"][0]["compression"];
    assert_eq!(
        (c["method"].as_str(), c["version"].as_u64()),
        (Some("zstd"), Some(3))
    );
    assert_eq!(c["header_size"], 32);
    let contents = bundle::read(&b.bytes).unwrap();
    let bun = &contents.bundles[0];
    let entry = bun.entries.iter().find(|e| e.is_device_code()).unwrap();
    assert_eq!(
        bun.entry_bytes(entry),
        unbundle(ccob_v3(), "hipv4-amdgcn-amd-amdhsa--gfx90a", true)
    );
    let v2 = objects_json(compressed_exe());
    assert_eq!(
        j["code_objects"][0]["kernels"],
        v2["code_objects"][0]["kernels"]
    );
    // The section alone (a .ccob file) reads the same.
    let alone = objects_json(ccob_v3());
    assert_eq!(alone["container"], "compressed_offload_bundle");
    assert_eq!(
        alone["code_objects"][0]["kernels"],
        j["code_objects"][0]["kernels"]
    );
}

/// Rewrites a real v2 CCOB: to v1 (no total size), or to zlib of the same
/// plain bundle.
fn rewrite_ccob(v2: &[u8], plain: &[u8], to: &str) -> Vec<u8> {
    assert_eq!(&v2[..6], b"CCOB\x02\x00");
    let total = u32::from_le_bytes(v2[8..12].try_into().unwrap()) as usize;
    match to {
        "v1" => {
            let mut out = b"CCOB\x01\x00".to_vec();
            out.extend_from_slice(&v2[6..8]);
            out.extend_from_slice(&v2[12..total]);
            out
        }
        _ => {
            let payload = miniz_oxide::deflate::compress_to_vec_zlib(plain, 6);
            let mut out = b"CCOB\x02\x00\x00\x00".to_vec();
            out.extend_from_slice(&((24 + payload.len()) as u32).to_le_bytes());
            out.extend_from_slice(&(plain.len() as u32).to_le_bytes());
            out.extend_from_slice(&v2[16..24]);
            out.extend_from_slice(&payload);
            out
        }
    }
}

#[test]
fn version_1_and_zlib_compressed_bundles_of_a_real_bundle_are_read() {
    let v2 = &ccob_v2().bytes;
    let contents = bundle::read(v2).unwrap();
    let plain_bundle = &contents.bundles[0];
    assert_eq!(
        plain_bundle.compression.unwrap().method,
        CompressionMethod::ZSTD
    );
    let want: Vec<(String, Vec<u8>)> = plain_bundle
        .entries
        .iter()
        .map(|e| (e.id.clone(), plain_bundle.entry_bytes(e).to_vec()))
        .collect();
    // The plain bundle inside, rebuilt from its entries at their offsets:
    // what the zlib variant compresses.
    let size = plain_bundle.compression.unwrap().uncompressed_size as usize;
    let plain = {
        let mut header = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
        header.extend_from_slice(&(plain_bundle.entries.len() as u64).to_le_bytes());
        for e in &plain_bundle.entries {
            header.extend_from_slice(&e.offset.to_le_bytes());
            header.extend_from_slice(&e.size.to_le_bytes());
            header.extend_from_slice(&(e.id.len() as u64).to_le_bytes());
            header.extend_from_slice(e.id.as_bytes());
        }
        header.resize(size, 0);
        for e in &plain_bundle.entries {
            let at = e.offset as usize;
            header[at..at + e.size as usize].copy_from_slice(plain_bundle.entry_bytes(e));
        }
        header
    };
    for (to, method, version) in [
        ("v1", CompressionMethod::ZSTD, 1),
        ("zlib", CompressionMethod::ZLIB, 2),
    ] {
        let file = rewrite_ccob(v2, &plain, to);
        let c = bundle::read(&file).unwrap_or_else(|e| panic!("{to}: offset {}: {e}", e.offset));
        let b = &c.bundles[0];
        let comp = b.compression.unwrap();
        assert_eq!((comp.method, comp.version), (method, version), "{to}");
        let got: Vec<(String, Vec<u8>)> = b
            .entries
            .iter()
            .map(|e| (e.id.clone(), b.entry_bytes(e).to_vec()))
            .collect();
        assert_eq!(got, want, "{to}");
        let path = write_temp(&format!("{to}.ccob"), &file);
        let j = objects_json(&Built { path, bytes: file });
        assert_eq!(j["code_objects"][0]["kernels"].as_array().unwrap().len(), 4);
    }
}

#[test]
fn a_code_object_with_a_corrupt_metadata_note_is_listed_from_its_kernel_descriptors() {
    let b = raw_code_object();
    let (oracle, _) = oracle_metadata(&b.path);
    // Note header (12 bytes), then "AMDGPU\0" padded to 8.
    let desc = section_offset(&b.path, ".note") as usize + 12 + 8;
    let mut bytes = b.bytes.clone();
    bytes[desc] = 0xc1;
    let path = write_temp("corrupt-note.hsaco", &bytes);
    let out = softgpu(&["--json"], &path);
    assert_eq!(out.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let co = &j["code_objects"][0];
    let err = co["metadata_error"].as_str().unwrap();
    assert!(err.contains("0xc1"), "{err}");
    assert_eq!(co["target"], "gfx90a", "from e_flags");
    let kernels = co["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), oracle.len());
    for k in &oracle {
        let j = kernels
            .iter()
            .find(|j| j["symbol"] == k[".symbol"].as_str())
            .unwrap();
        assert_eq!(j["source"], "kernel_descriptor");
        for (field, key) in [
            ("kernarg_size", ".kernarg_segment_size"),
            ("group_segment_fixed_size", ".group_segment_fixed_size"),
            ("private_segment_fixed_size", ".private_segment_fixed_size"),
            ("wavefront_size", ".wavefront_size"),
        ] {
            assert_eq!(j[field].as_u64(), Some(k[key].parse().unwrap()), "{field}");
        }
        for field in [
            "kernarg_align",
            "max_flat_workgroup_size",
            "sgpr_count",
            "vgpr_count",
        ] {
            assert_eq!(j[field], Value::Null, "{field} is not invented");
        }
    }
    let table = String::from_utf8(softgpu(&[], &path).stdout).unwrap();
    assert!(table.contains("metadata note unusable"), "{table}");

    // No metadata note at all (its type changed from NT_AMDGPU_METADATA):
    // not an error, the same kernels from the descriptors.
    let note_type = section_offset(&b.path, ".note") as usize + 8;
    let mut bytes = b.bytes.clone();
    assert_eq!(bytes[note_type..note_type + 4], 32u32.to_le_bytes());
    bytes[note_type] = 33;
    let path = write_temp("no-note.hsaco", &bytes);
    let j: Value = serde_json::from_slice(&softgpu(&["--json"], &path).stdout).unwrap();
    let co2 = &j["code_objects"][0];
    assert_eq!(co2["metadata_error"], Value::Null);
    assert_eq!(co2["metadata_target"], Value::Null);
    assert_eq!(co2["kernels"], co["kernels"]);
    let table = String::from_utf8(softgpu(&[], &path).stdout).unwrap();
    assert!(table.contains("listed from kernel descriptors"), "{table}");
}

// ---- the CLI contract ----

#[test]
fn json_output_has_exactly_the_documented_fields() {
    let j = objects_json(compressed_exe());
    assert_eq!(
        keys(&j),
        BTreeSet::from([
            "label",
            "file",
            "container",
            "host_machine",
            "fatbin_sections",
            "bundles",
            "code_objects"
        ])
    );
    let b = &j["bundles"][0];
    assert_eq!(
        keys(b),
        BTreeSet::from(["offset", "size", "compression", "entries"])
    );
    assert_eq!(
        keys(&b["compression"]),
        BTreeSet::from([
            "method",
            "version",
            "header_size",
            "total_size",
            "uncompressed_size",
            "hash"
        ])
    );
    assert_eq!(
        keys(&b["entries"][0]),
        BTreeSet::from([
            "id",
            "kind",
            "triple",
            "target_id",
            "offset",
            "size",
            "file_offset"
        ])
    );
    let co = &j["code_objects"][0];
    assert_eq!(
        keys(co),
        BTreeSet::from([
            "target",
            "bundle",
            "entry_id",
            "file_offset",
            "size",
            "code_object_version",
            "elf_target",
            "generic_version",
            "metadata_target",
            "metadata_notes",
            "metadata_error",
            "metadata_errors",
            "kernels"
        ])
    );
    // the required kernel fields (docs/OUTPUT.md), plus the documented extras.
    assert_eq!(
        keys(&co["kernels"][0]),
        BTreeSet::from([
            "symbol",
            "name",
            "kernarg_size",
            "kernarg_align",
            "group_segment_fixed_size",
            "private_segment_fixed_size",
            "max_flat_workgroup_size",
            "wavefront_size",
            "sgpr_count",
            "vgpr_count",
            "agpr_count",
            "reqd_workgroup_size",
            "uses_dynamic_stack",
            "source"
        ])
    );
    assert_eq!(b["entries"][1]["kind"], "hipv4");
    assert_eq!(b["entries"][1]["triple"], "amdgcn-amd-amdhsa");
    assert_eq!(b["entries"][1]["target_id"], "gfx90a");
    assert!(
        co["code_object_version"].as_u64() >= Some(5),
        "HIP 6.4 writes v5 or v6"
    );
}

#[test]
fn the_table_is_labelled_and_names_every_bundle_entry_and_kernel() {
    let out = softgpu(&[], &multi_arch().path);
    assert_eq!(out.status.code(), Some(0));
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(
        t.starts_with("label: metadata_only_no_isa_execution\n"),
        "{t}"
    );
    for s in [
        "hipv4-amdgcn-amd-amdhsa--gfx1030",
        "hipv4-amdgcn-amd-amdhsa--gfx90a",
        "_Z4vaddPKfS0_Pfi.kd",
        "vadd(float const*, float const*, float*, int)",
        "plain_c",
        "lds(float*)",
    ] {
        assert!(t.contains(s), "{s} missing:\n{t}");
    }
    let help = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(["objects", "--help"])
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("metadata_only_no_isa_execution"));
}

fn error_of(path: &Path) -> String {
    let out = softgpu(&["--json"], path);
    assert_eq!(out.status.code(), Some(2), "{}", path.display());
    assert!(out.stdout.is_empty());
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.starts_with(&format!("softgpu: file {}: ", path.display())),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
    e
}

#[test]
fn a_host_elf_without_hip_fatbin_is_exit_2_with_a_clear_message() {
    let e = error_of(Path::new(env!("CARGO_BIN_EXE_softgpu")));
    assert!(
        e.contains("offset 0: ELF file (machine 62) has no .hip_fatbin section"),
        "{e}"
    );
}

#[test]
fn non_elf_missing_and_truncated_files_are_exit_2_naming_the_file_and_offset() {
    let text = write_temp("text.txt", b"hello, world\n");
    assert!(error_of(&text).contains("offset 0: not an ELF file"));
    let missing = work_dir().join("no-such-file");
    assert!(error_of(&missing).contains("cannot read"));
    assert!(error_of(&work_dir()).contains("not a regular file (it is a directory)"));
    // Cut inside the code object of the only bundle entry.
    let b = genco_bundle();
    let cut = write_temp("cut.bundle", &b.bytes[..b.bytes.len() - 100]);
    let e = error_of(&cut);
    assert!(e.contains("entry 1: bytes ["), "{e}");
    // Cut inside the compressed payload.
    let c = ccob_v2();
    let cut = write_temp("cut.ccob", &c.bytes[..c.bytes.len() / 2]);
    let e = error_of(&cut);
    assert!(e.contains("offset 8: compressed bundle declares"), "{e}");
    // A truncated host ELF: the section header table is gone.
    let x = exe();
    let cut = write_temp("cut.exe", &x.bytes[..x.bytes.len() / 2]);
    let e = error_of(&cut);
    assert!(e.contains("section header table runs past the end"), "{e}");
}

// ---- robustness ----

/// Reads `input` as `objects` does (bundles, then every code object and its
/// metadata); a panic is a failure that saves the input.
fn check_no_panic(input: &[u8], what: &str) -> Result<usize, String> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let c = bundle::read(input).map_err(|e| e.to_string())?;
        let mut n = 0;
        if c.container == Container::CodeObject {
            parse(input).map_err(|e| e.to_string())?;
            n += 1;
        }
        for b in &c.bundles {
            for e in b.entries.iter().filter(|e| e.is_device_code()) {
                let co = parse(b.entry_bytes(e)).map_err(|e| e.to_string())?;
                for s in co.kernels() {
                    let _ = co.kernel_descriptor(s);
                }
                let _ = (co.metadata(), co.target_id());
                n += 1;
            }
        }
        Ok(n)
    }));
    match r {
        Ok(r) => r,
        Err(_) => {
            let path = write_temp("panic-input.bin", input);
            panic!("{what}: panicked; input saved to {}", path.display());
        }
    }
}

#[test]
fn truncating_fat_binaries_at_many_offsets_is_an_error_or_fewer_objects_never_a_panic() {
    for b in [genco_bundle(), ccob_v2(), ccob_v3(), exe_fatbin()] {
        let whole = check_no_panic(&b.bytes, "whole").unwrap();
        assert!(whole >= 1);
        for cut in 0..b.bytes.len() {
            if let Ok(n) = check_no_panic(
                &b.bytes[..cut],
                &format!("{} cut at {cut}", b.path.display()),
            ) {
                assert!(n <= whole);
            }
        }
    }
    // Host files: every 7th cut (the fat binary sits in the middle).
    for b in [exe(), compressed_exe()] {
        for cut in (0..b.bytes.len()).step_by(7) {
            let _ = check_no_panic(
                &b.bytes[..cut],
                &format!("{} cut at {cut}", b.path.display()),
            );
        }
    }
}

/// xorshift64*: a fixed, reproducible stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn thousands_of_random_mutations_of_bundles_never_panic() {
    let mut rng = Rng(0xb0_0d1e_5eed);
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for b in [genco_bundle(), ccob_v2(), ccob_v3(), exe_fatbin(), exe()] {
        // Aim most mutations at the bundle headers and entry tables.
        let hot = if b.bytes.starts_with(b"\x7fELF") {
            let at = section_offset(&b.path, ".hip_fatbin") as usize;
            at..at + 200
        } else {
            0..200.min(b.bytes.len())
        };
        for i in 0..1200 {
            let mut m = b.bytes.clone();
            for _ in 0..1 + rng.below(3) {
                let at = if rng.next() & 3 != 0 {
                    hot.start + rng.below(hot.len())
                } else {
                    rng.below(m.len())
                };
                match rng.below(4) {
                    0 => m[at] ^= 1 << rng.below(8),
                    1 => m[at] = rng.next() as u8,
                    2 => m[at] = [0, 0xff, 0x7f, 0x80][rng.below(4)],
                    _ => {
                        let v: u64 =
                            [0, 1, u64::MAX, m.len() as u64, 1 << 32, rng.next()][rng.below(6)];
                        let at = at & !7;
                        let n = 8.min(m.len() - at);
                        m[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
                    }
                }
            }
            let what = format!("{} mutation {i}", b.path.display());
            let key = match check_no_panic(&m, &what) {
                Ok(_) => "read".to_string(),
                Err(e) => e.split(':').next().unwrap_or("").to_string(),
            };
            *outcomes.entry(key).or_default() += 1;
        }
    }
    // Both outcomes happen: the mutations reach past the first check.
    assert!(outcomes.contains_key("read"), "{outcomes:?}");
    assert!(outcomes.len() > 3, "{outcomes:?}");
}

#[test]
fn a_decompression_bomb_is_refused_by_the_declared_size_and_the_limit() {
    // 64 MiB of zeros in a zlib stream of a few KiB, declared as 64 MiB: over
    // a 16 MiB limit, refused before decompressing.
    let zeros = vec![0u8; 64 << 20];
    let payload = miniz_oxide::deflate::compress_to_vec_zlib(&zeros, 6);
    let mut file = b"CCOB\x02\x00\x00\x00".to_vec();
    file.extend_from_slice(&((24 + payload.len()) as u32).to_le_bytes());
    file.extend_from_slice(&(zeros.len() as u32).to_le_bytes());
    file.extend_from_slice(&0u64.to_le_bytes());
    file.extend_from_slice(&payload);
    let limits = bundle::Limits {
        max_decompressed: 16 << 20,
        ..bundle::Limits::DEFAULT
    };
    let e = bundle::read_with_limits(&file, &limits).unwrap_err();
    assert_eq!(
        e.kind,
        BundleErrorKind::DecompressedTooLarge {
            size: 64 << 20,
            limit: 16 << 20
        }
    );
    // Declared small, it stops at the declared size instead of inflating it all.
    file[12..16].copy_from_slice(&4096u32.to_le_bytes());
    let e = bundle::read(&file).unwrap_err();
    assert_eq!(
        e.kind,
        BundleErrorKind::DecompressedLonger { declared: 4096 }
    );
    // Within the limit, all zeros is not a bundle.
    file[12..16].copy_from_slice(&(zeros.len() as u32).to_le_bytes());
    assert_eq!(
        bundle::read(&file).unwrap_err().kind,
        BundleErrorKind::NotABundle
    );
}
