//! The code object reader against real code objects: built at test time by
//! hipcc (HIP 5.2.3, clang 15) and by clang + ld.lld, and checked against what
//! llvm-readelf reports about the same files (an independent reader).
//!
//! A missing compiler is a failure, not a skip: `scripts/test` runs
//! `scripts/setup` first, which installs hipcc (and with it clang-15, lld-15
//! and llvm-15).

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use softgpu_hsa::code_object::{
    CodeObject, CodeObjectError, Feature, MACH_GFX90A, RelocationType, SymbolKind, kernel_name,
    parse,
};

const SETUP_HINT: &str =
    "run ./scripts/setup (installs hipcc, which brings clang-15, lld-15 and llvm-15)";
const LLVM_BIN: &str = "/usr/lib/llvm-15/bin";

/// Kernels covering each symbol and descriptor shape the loader meets.
const KERNELS: &str = r#"
#include <hip/hip_runtime.h>
__device__ int counter[16];
__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void lds(float* out) {
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
__global__ void bump(int n) { atomicAdd(&counter[n & 15], 1); }
extern "C" __global__ void plain_c(int* p) { p[0] = 1; }
"#;

/// Device variables initialised with addresses: dynamic relocations.
const RELOCS: &str = r#"
#include <hip/hip_runtime.h>
__device__ int counter[16];
__device__ int* counter_ptr = &counter[3];
__device__ int scalar = 7;
__device__ int* ptrs[2] = {&scalar, &counter[0]};
__global__ void usep(int n) { *counter_ptr += n; *ptrs[n & 1] += 1; }
"#;

/// Preemptible (default-visibility) data: ld.lld emits R_AMDGPU_ABS64 against
/// symbols, including a weak and (optionally) a plain undefined one.
fn abs_source(with_undefined: bool) -> String {
    format!(
        "\t.data\n\t.globl table\n\t.type table,@object\n\t.p2align 3\ntable:\n\
         \t.quad gvar\n\t.quad gvar+8\n\t.quad weak_sym+4\n{}\
         \t.size table, {}\n\t.globl gvar\n\t.type gvar,@object\ngvar:\n\
         \t.quad 0\n\t.quad 0\n\t.size gvar, 16\n\t.weak weak_sym\n",
        if with_undefined {
            "\t.quad undef_sym\n"
        } else {
            ""
        },
        if with_undefined { 32 } else { 24 }
    )
}

struct Built {
    path: PathBuf,
    bytes: Vec<u8>,
}

fn work_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("code_object");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}; {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{SETUP_HINT}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn llvm(tool: &str) -> PathBuf {
    let p = Path::new(LLVM_BIN).join(tool);
    assert!(p.exists(), "{} is missing: {SETUP_HINT}", p.display());
    p
}

fn hipcc(name: &str, source: &str, args: &[&str]) -> Built {
    let dir = work_dir();
    let src = dir.join(format!("{name}.hip"));
    let path = dir.join(format!("{name}.hsaco"));
    std::fs::write(&src, source).unwrap();
    // hipcc prints a traceback from rocm_agent_enumerator when no GPU exists;
    // only its exit status matters.
    run(Command::new("hipcc")
        .arg("--genco")
        .args(args)
        .arg("-o")
        .arg(&path)
        .arg(&src));
    Built {
        bytes: std::fs::read(&path).unwrap(),
        path,
    }
}

fn assemble(name: &str, source: &str, link: bool) -> Built {
    let dir = work_dir();
    let src = dir.join(format!("{name}.s"));
    let obj = dir.join(format!("{name}.o"));
    std::fs::write(&src, source).unwrap();
    run(Command::new(llvm("clang"))
        .args(["-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&obj));
    let path = if link {
        let so = dir.join(format!("{name}.so"));
        run(Command::new(llvm("ld.lld"))
            .arg("-shared")
            .arg(&obj)
            .arg("-o")
            .arg(&so));
        so
    } else {
        obj
    };
    Built {
        bytes: std::fs::read(&path).unwrap(),
        path,
    }
}

fn host_object(name: &str, target: &str) -> Built {
    let dir = work_dir();
    let src = dir.join(format!("{name}.c"));
    let path = dir.join(format!("{name}.o"));
    std::fs::write(&src, "int x;\n").unwrap();
    run(Command::new(llvm("clang"))
        .args(["-target", target, "-c"])
        .arg(&src)
        .arg("-o")
        .arg(&path));
    Built {
        bytes: std::fs::read(&path).unwrap(),
        path,
    }
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
const ELF_ONLY: &str = "--no-gpu-bundle-output";

artifact!(kernels, hipcc("kernels", KERNELS, &[GFX90A, ELF_ONLY]));
artifact!(
    kernels_wave32,
    hipcc(
        "kernels_gfx1030",
        KERNELS,
        &["--offload-arch=gfx1030", ELF_ONLY]
    )
);
artifact!(kernels_bundle, hipcc("kernels_bundle", KERNELS, &[GFX90A]));
artifact!(
    relocs_v3,
    hipcc(
        "relocs_v3",
        RELOCS,
        &[GFX90A, ELF_ONLY, "-mcode-object-version=3"]
    )
);
artifact!(
    relocs_v4,
    hipcc(
        "relocs_v4",
        RELOCS,
        &[GFX90A, ELF_ONLY, "-mcode-object-version=4"]
    )
);
artifact!(
    relocs_v5,
    hipcc(
        "relocs_v5",
        RELOCS,
        &[GFX90A, ELF_ONLY, "-mcode-object-version=5"]
    )
);
artifact!(
    relocs_xnack,
    hipcc(
        "relocs_xnack",
        RELOCS,
        &["--offload-arch=gfx90a:xnack+", ELF_ONLY]
    )
);
artifact!(
    abs_defined,
    assemble("abs_defined", &abs_source(false), true)
);
artifact!(
    abs_undefined,
    assemble("abs_undefined", &abs_source(true), true)
);
artifact!(
    abs_relocatable,
    assemble("abs_relocatable", &abs_source(false), false)
);
artifact!(elf32, host_object("elf32", "i686-linux-gnu"));
artifact!(
    elf64_big_endian,
    host_object("elf64be", "powerpc64-linux-gnu")
);

fn parsed(b: &Built) -> CodeObject {
    parse(&b.bytes).unwrap_or_else(|e| panic!("{}: {e}", b.path.display()))
}

// ---- llvm-readelf as the oracle ----

fn readelf(path: &Path, args: &[&str]) -> String {
    let out = run(Command::new(llvm("llvm-readelf")).args(args).arg(path));
    String::from_utf8(out.stdout).unwrap()
}

fn num(s: &str) -> u64 {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).unwrap(),
        None => s.parse().unwrap(),
    }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

#[derive(Debug)]
struct OracleSymbol {
    num: u64,
    value: u64,
    size: u64,
    kind: String,
    bind: String,
    ndx: String,
    name: String,
}

fn oracle_dynsyms(path: &Path) -> Vec<OracleSymbol> {
    readelf(path, &["-W", "--dyn-syms"])
        .lines()
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let n = t.first()?.strip_suffix(':')?.parse().ok()?;
            Some(OracleSymbol {
                num: n,
                value: hex(t[1]),
                size: num(t[2]),
                kind: t[3].to_string(),
                bind: t[4].to_string(),
                ndx: t[6].to_string(),
                name: t.get(7).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// (offset, type, symbol index, addend) of every dynamic relocation.
fn oracle_relocs(path: &Path) -> Vec<(u64, u32, u64, i64)> {
    readelf(path, &["-rW"])
        .lines()
        .filter(|l| l.contains("R_AMDGPU_"))
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let info = hex(t[1]);
            let addend = if t.len() == 4 {
                hex(t[3]) as i64
            } else {
                let a = hex(t[t.len() - 1]) as i64;
                if t[t.len() - 2] == "-" { -a } else { a }
            };
            (hex(t[0]), (info & 0xffff_ffff) as u32, info >> 32, addend)
        })
        .collect()
}

/// (offset, vaddr, filesz, memsz, align) of every PT_LOAD.
fn oracle_loads(path: &Path) -> Vec<(u64, u64, u64, u64, u64)> {
    readelf(path, &["-lW"])
        .lines()
        .filter(|l| l.trim_start().starts_with("LOAD "))
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (
                hex(t[1]),
                hex(t[2]),
                hex(t[4]),
                hex(t[5]),
                hex(t[t.len() - 1]),
            )
        })
        .collect()
}

/// File offset of a section, by name.
fn oracle_section_offset(path: &Path, name: &str) -> u64 {
    let text = readelf(path, &["-SW"]);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().any(|w| w == name))
        .unwrap_or_else(|| panic!("no section {name}"));
    let t: Vec<&str> = line.split_whitespace().collect();
    let i = t.iter().position(|w| *w == name).unwrap();
    hex(t[i + 3])
}

fn oracle_header(path: &Path, field: &str) -> u64 {
    let text = readelf(path, &["-h"]);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(field))
        .unwrap();
    num(line
        .split(':')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap())
}

/// The kernel-level `key: value` scalars of each `amdhsa.kernels` entry that
/// llvm-readelf decodes from the metadata note, and `amdhsa.target`.
fn oracle_metadata(path: &Path) -> (Vec<BTreeMap<String, String>>, Option<String>) {
    let text = readelf(path, &["--notes"]);
    let mut kernels: Vec<BTreeMap<String, String>> = Vec::new();
    let mut target = None;
    let mut in_kernels = false;
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
            if rest.starts_with(' ') || rest.starts_with('-') {
                continue; // nested (args, lists)
            }
            rest
        } else {
            continue;
        };
        if let (Some(k), Some((key, value))) = (kernels.last_mut(), entry.split_once(':')) {
            k.insert(key.trim().to_string(), value.trim().to_string());
        }
    }
    (kernels, target)
}

fn u64_le(b: &[u8], at: u64) -> u64 {
    let at = at as usize;
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

// ---- symbols ----

#[test]
fn every_defined_dynamic_symbol_is_found_with_its_value_size_and_kind() {
    for b in [kernels(), relocs_v4(), abs_defined()] {
        let co = parsed(b);
        let oracle = oracle_dynsyms(&b.path);
        let defined: Vec<&OracleSymbol> = oracle
            .iter()
            .filter(|s| s.ndx != "UND" && !s.name.is_empty())
            .collect();
        assert!(!defined.is_empty());
        for o in defined {
            let s = co
                .symbol(&o.name)
                .unwrap_or_else(|| panic!("{}: {} missing", b.path.display(), o.name));
            assert_eq!((s.value, s.size), (o.value, o.size), "{}", o.name);
            let kind = match o.kind.as_str() {
                "OBJECT" if o.name.ends_with(".kd") => SymbolKind::Kernel,
                "OBJECT" => SymbolKind::Variable,
                "FUNC" => SymbolKind::Function,
                _ => SymbolKind::Other,
            };
            assert_eq!(s.kind, kind, "{}", o.name);
            assert_eq!(s.global, o.bind != "LOCAL", "{}", o.name);
        }
    }
}

#[test]
fn hip_kernels_variables_and_extern_c_kernels_have_the_expected_symbols() {
    let co = parsed(kernels());
    let vadd = co.symbol("_Z4vaddPKfS0_Pfi.kd").unwrap();
    assert_eq!(
        (vadd.kind, vadd.size, vadd.global),
        (SymbolKind::Kernel, 64, true)
    );
    assert_eq!(
        co.symbol("_Z4vaddPKfS0_Pfi").unwrap().kind,
        SymbolKind::Function
    );
    assert_eq!(co.symbol("plain_c.kd").unwrap().kind, SymbolKind::Kernel);
    let counter = co.symbol("counter").unwrap();
    assert_eq!((counter.kind, counter.size), (SymbolKind::Variable, 64));
    let mut kernels: Vec<&str> = co.kernels().map(|s| s.name.as_str()).collect();
    kernels.sort();
    assert_eq!(
        kernels,
        [
            "_Z3ldsPf.kd",
            "_Z4bumpi.kd",
            "_Z4privPfi.kd",
            "_Z4vaddPKfS0_Pfi.kd",
            "plain_c.kd"
        ]
    );
    assert!(co.symbol("no_such_symbol").is_none());
}

#[test]
fn kernel_names_are_the_demangled_source_signatures() {
    assert_eq!(
        kernel_name("_Z4vaddPKfS0_Pfi.kd"),
        "vadd(float const*, float const*, float*, int)"
    );
    assert_eq!(kernel_name("_Z3ldsPf.kd"), "lds(float*)");
    assert_eq!(kernel_name("plain_c.kd"), "plain_c");
    assert_eq!(kernel_name("plain_c"), "plain_c");
}

// ---- header ----

#[test]
fn header_fields_match_what_llvm_readelf_reports() {
    let cases: [(&Built, u8, Feature, Feature); 5] = [
        (kernels(), 2, Feature::Any, Feature::Any),
        (relocs_v3(), 1, Feature::On, Feature::On),
        (relocs_v4(), 2, Feature::Any, Feature::Any),
        (relocs_v5(), 3, Feature::Any, Feature::Any),
        (relocs_xnack(), 2, Feature::On, Feature::Any),
    ];
    for (b, abi, xnack, sramecc) in cases {
        let co = parsed(b);
        assert_eq!(u64::from(co.e_flags), oracle_header(&b.path, "Flags:"));
        assert_eq!(
            u64::from(co.abi_version),
            oracle_header(&b.path, "ABI Version:")
        );
        assert_eq!(co.abi_version, abi, "{}", b.path.display());
        assert_eq!(co.code_object_version(), abi + 2);
        assert_eq!(co.mach, MACH_GFX90A);
        assert_eq!(
            (co.xnack, co.sramecc),
            (xnack, sramecc),
            "{}",
            b.path.display()
        );
    }
    assert_eq!(parsed(kernels_wave32()).mach, 0x36, "gfx1030");
}

#[test]
fn segments_load_size_and_alignment_follow_the_program_headers() {
    for b in [kernels(), relocs_v4(), abs_defined()] {
        let co = parsed(b);
        let loads: Vec<_> = oracle_loads(&b.path)
            .into_iter()
            .filter(|l| l.3 > 0)
            .collect();
        let ours: Vec<_> = co
            .segments()
            .iter()
            .map(|s| (s.vaddr, s.file_size, s.mem_size, s.align))
            .collect();
        let theirs: Vec<_> = loads.iter().map(|l| (l.1, l.2, l.3, l.4)).collect();
        assert_eq!(ours, theirs);
        let end = loads.iter().map(|l| l.1 + l.3).max().unwrap();
        assert_eq!(co.load_size, end.next_multiple_of(4096));
        assert_eq!(co.load_align, 4096);
    }
}

// ---- kernel descriptors and metadata ----

#[test]
fn kernel_descriptors_agree_with_the_metadata_llvm_readelf_decodes() {
    for b in [kernels(), kernels_wave32()] {
        let co = parsed(b);
        let (oracle, _) = oracle_metadata(&b.path);
        assert_eq!(oracle.len(), 5, "{}", b.path.display());
        for k in &oracle {
            let sym = co.symbol(&k[".symbol"]).unwrap();
            let kd = co.kernel_descriptor(sym).unwrap();
            let field = |key: &str| num(&k[key]);
            assert_eq!(
                u64::from(kd.group_segment_fixed_size),
                field(".group_segment_fixed_size")
            );
            assert_eq!(
                u64::from(kd.private_segment_fixed_size),
                field(".private_segment_fixed_size")
            );
            assert_eq!(u64::from(kd.kernarg_size), field(".kernarg_segment_size"));
            assert_eq!(u64::from(kd.wavefront_size()), field(".wavefront_size"));
            assert_eq!(kd.uses_dynamic_stack(), k[".uses_dynamic_stack"] == "true");
        }
    }
    let co = parsed(kernels());
    let kd = |name: &str| co.kernel_descriptor(co.symbol(name).unwrap()).unwrap();
    assert_eq!(kd("_Z3ldsPf.kd").group_segment_fixed_size, 256 * 4);
    assert!(kd("_Z4privPfi.kd").private_segment_fixed_size >= 1024 * 4);
    assert_eq!(kd("_Z4vaddPKfS0_Pfi.kd").group_segment_fixed_size, 0);
    let wave32 = parsed(kernels_wave32());
    let v = wave32.symbol("_Z4vaddPKfS0_Pfi.kd").unwrap();
    assert_eq!(wave32.kernel_descriptor(v).unwrap().wavefront_size(), 32);
    // Only kernel descriptors have one.
    assert!(
        co.kernel_descriptor(co.symbol("counter").unwrap())
            .is_none()
    );
}

#[test]
fn kernel_entry_offsets_point_at_the_kernel_code_symbols() {
    let co = parsed(kernels());
    for kd_sym in co.kernels() {
        let code = co.symbol(kd_sym.name.strip_suffix(".kd").unwrap()).unwrap();
        let kd = co.kernel_descriptor(kd_sym).unwrap();
        assert_eq!(code.kind, SymbolKind::Function);
        assert_eq!(
            kd_sym.value as i64 + kd.kernel_code_entry_byte_offset,
            code.value as i64,
            "{}",
            kd_sym.name
        );
        assert_eq!(code.value % 256, 0, "entry points are 256-byte aligned");
    }
}

#[test]
fn the_metadata_note_decodes_to_what_llvm_readelf_shows() {
    for b in [kernels(), kernels_wave32(), relocs_v3(), relocs_v5()] {
        let co = parsed(b);
        assert_eq!(co.metadata_error(), None);
        let md = co.metadata().unwrap();
        let (oracle, target) = oracle_metadata(&b.path);
        assert_eq!(md.target, target, "{}", b.path.display());
        assert_eq!(md.kernels.len(), oracle.len());
        for o in &oracle {
            let k = md.kernel(&o[".symbol"]).unwrap();
            let want = |key: &str| o.get(key).map(|v| num(v));
            assert_eq!(k.name.as_deref(), o.get(".name").map(String::as_str));
            assert_eq!(Some(k.kernarg_segment_size), want(".kernarg_segment_size"));
            assert_eq!(
                Some(k.kernarg_segment_align),
                want(".kernarg_segment_align")
            );
            assert_eq!(
                Some(k.group_segment_fixed_size),
                want(".group_segment_fixed_size")
            );
            assert_eq!(
                Some(k.private_segment_fixed_size),
                want(".private_segment_fixed_size")
            );
            assert_eq!(k.sgpr_count, want(".sgpr_count"));
            assert_eq!(k.vgpr_count, want(".vgpr_count"));
            assert_eq!(k.agpr_count, want(".agpr_count"));
            assert_eq!(k.wavefront_size, want(".wavefront_size"));
            assert_eq!(k.max_flat_workgroup_size, want(".max_flat_workgroup_size"));
        }
    }
    let co = parsed(kernels());
    let vadd = co
        .metadata()
        .unwrap()
        .kernel("_Z4vaddPKfS0_Pfi.kd")
        .unwrap();
    let kinds: Vec<&str> = vadd.args.iter().map(|a| a.value_kind.as_str()).collect();
    assert_eq!(
        &kinds[..4],
        [
            "global_buffer",
            "global_buffer",
            "global_buffer",
            "by_value"
        ]
    );
    assert_eq!(
        vadd.args
            .iter()
            .map(|a| (a.offset, a.size))
            .take(4)
            .collect::<Vec<_>>(),
        [(0, 8), (8, 8), (16, 8), (24, 4)]
    );
    assert_eq!(
        parsed(relocs_v5()).metadata().unwrap().version,
        Some([1, 2])
    );
}

// ---- load images and relocations ----

#[test]
fn the_image_holds_each_segments_file_bytes_and_zeros_everywhere_else() {
    let b = kernels();
    let co = parsed(b);
    assert!(co.relocations().is_empty(), "readelf: no relocations");
    let img = co.build_image(0x7f00_0000_0000).unwrap();
    assert_eq!(img.len() as u64, co.load_size);
    let mut covered = vec![false; img.len()];
    for (off, vaddr, filesz, memsz, _) in oracle_loads(&b.path) {
        let (off, vaddr, filesz, memsz) = (
            off as usize,
            vaddr as usize,
            filesz as usize,
            memsz as usize,
        );
        assert_eq!(img[vaddr..vaddr + filesz], b.bytes[off..off + filesz]);
        assert!(img[vaddr + filesz..vaddr + memsz].iter().all(|&x| x == 0));
        covered[vaddr..vaddr + memsz].fill(true);
    }
    assert!(img.iter().zip(&covered).all(|(&x, &c)| c || x == 0));
}

#[test]
fn images_at_two_bases_differ_exactly_at_the_relocation_sites_by_the_base_delta() {
    for b in [relocs_v3(), relocs_v4(), relocs_v5(), abs_defined()] {
        let co = parsed(b);
        let oracle = oracle_relocs(&b.path);
        assert!(!oracle.is_empty());
        let ours: BTreeSet<_> = co
            .relocations()
            .iter()
            .map(|r| (r.offset, r.kind.0, r.addend))
            .collect();
        let theirs: BTreeSet<_> = oracle.iter().map(|r| (r.0, r.1, r.3)).collect();
        assert_eq!(ours, theirs, "{}", b.path.display());

        let (base1, base2) = (0x7f12_3450_0000u64, 0x7f13_3455_5000u64);
        let (img1, img2) = (
            co.build_image(base1).unwrap(),
            co.build_image(base2).unwrap(),
        );
        let mut site = vec![false; img1.len()];
        for r in co.relocations() {
            assert_eq!(r.kind.width(), Some(8));
            site[r.offset as usize..r.offset as usize + 8].fill(true);
            let (v1, v2) = (u64_le(&img1, r.offset), u64_le(&img2, r.offset));
            // Addresses inside the image move with it; an undefined weak
            // symbol is 0 at every base.
            let moves = co
                .relocation_symbol(r)
                .is_none_or(|n| co.symbol(n).is_some());
            let delta = if moves { base2 - base1 } else { 0 };
            assert_eq!(v2.wrapping_sub(v1), delta, "{:#x}", r.offset);
        }
        for (i, (x, y)) in img1.iter().zip(&img2).enumerate() {
            assert!(
                site[i] || x == y,
                "{}: byte {i:#x} differs",
                b.path.display()
            );
        }
    }
}

#[test]
fn relative_relocations_point_device_pointers_at_their_targets() {
    for b in [relocs_v3(), relocs_v4(), relocs_v5()] {
        let co = parsed(b);
        assert!(
            co.relocations()
                .iter()
                .all(|r| r.kind == RelocationType::RELATIVE64)
        );
        let base = 0x7f00_1234_0000u64;
        let img = co.build_image(base).unwrap();
        let at = |n: &str| co.symbol(n).unwrap().value;
        assert_eq!(
            u64_le(&img, at("counter_ptr")),
            base + at("counter") + 3 * 4
        );
        assert_eq!(u64_le(&img, at("ptrs")), base + at("scalar"));
        assert_eq!(u64_le(&img, at("ptrs") + 8), base + at("counter"));
        // Initial values that are not addresses are copied as is.
        assert_eq!(&img[at("scalar") as usize..][..4], &7i32.to_le_bytes());
        assert_eq!(co.symbol("counter").unwrap().kind, SymbolKind::Variable);
    }
}

#[test]
fn symbol_relocations_resolve_to_base_plus_value_and_weak_undefined_to_zero() {
    let co = parsed(abs_defined());
    assert!(
        co.relocations()
            .iter()
            .all(|r| r.kind == RelocationType::ABS64)
    );
    assert_eq!(co.undefined_symbols().count(), 0);
    let base = 0x7e00_0000_0000u64;
    let img = co.build_image(base).unwrap();
    let (table, gvar) = (co.symbol("table").unwrap(), co.symbol("gvar").unwrap());
    assert_eq!(
        (table.kind, gvar.kind),
        (SymbolKind::Variable, SymbolKind::Variable)
    );
    assert_eq!(u64_le(&img, table.value), base + gvar.value);
    assert_eq!(u64_le(&img, table.value + 8), base + gvar.value + 8);
    assert_eq!(
        u64_le(&img, table.value + 16),
        4,
        "weak_sym + 4 with weak_sym = 0"
    );
    let names: BTreeSet<_> = co
        .relocations()
        .iter()
        .filter_map(|r| co.relocation_symbol(r))
        .collect();
    assert_eq!(names, BTreeSet::from(["gvar", "weak_sym"]));
}

#[test]
fn a_relocation_against_an_undefined_symbol_fails_unless_the_caller_resolves_it() {
    let co = parsed(abs_undefined());
    assert_eq!(co.undefined_symbols().collect::<Vec<_>>(), ["undef_sym"]);
    assert_eq!(
        co.build_image(0x1_0000_0000),
        Err(CodeObjectError::UndefinedSymbol {
            name: "undef_sym".into()
        })
    );
    let mut img = vec![0xaau8; co.load_size as usize + 16];
    let resolve = |n: &str| (n == "undef_sym").then_some(0xdead_beef_0000);
    co.load_into(0x1_0000_0000, &mut img, &resolve).unwrap();
    let table = co.symbol("table").unwrap().value;
    assert_eq!(u64_le(&img, table + 24), 0xdead_beef_0000);
    assert!(
        img[co.load_size as usize..].iter().all(|&x| x == 0xaa),
        "untouched"
    );
    assert_eq!(
        co.load_into(0, &mut [0u8; 16], &|_| None),
        Err(CodeObjectError::ImageTooSmall {
            len: 16,
            needed: co.load_size
        })
    );
    assert_eq!(
        co.build_image(u64::MAX - 4096),
        Err(CodeObjectError::BadBase {
            base: u64::MAX - 4096
        })
    );
}

// ---- refusals ----

#[test]
fn inputs_that_are_not_loadable_amdgpu_code_objects_are_typed_errors() {
    assert_eq!(parse(b"").unwrap_err(), CodeObjectError::NotElf);
    assert_eq!(
        parse(b"#!/bin/sh\necho hi\n").unwrap_err(),
        CodeObjectError::NotElf
    );
    assert_eq!(
        parse(b"\x7fELF\x02\x01\x01").unwrap_err(),
        CodeObjectError::Truncated {
            what: "ELF header",
            offset: 0
        }
    );
    // What hipcc --genco writes by default is an offload bundle, not an ELF.
    assert_eq!(
        parse(&kernels_bundle().bytes).unwrap_err(),
        CodeObjectError::NotElf
    );
    assert_eq!(
        parse(&elf32().bytes).unwrap_err(),
        CodeObjectError::Not64BitLittleEndian { class: 1, data: 1 }
    );
    assert_eq!(
        parse(&elf64_big_endian().bytes).unwrap_err(),
        CodeObjectError::Not64BitLittleEndian { class: 2, data: 2 }
    );
    let host = std::fs::read("/bin/true").unwrap();
    assert_eq!(
        parse(&host).unwrap_err(),
        CodeObjectError::NotAmdgpu { machine: 62 }
    );
    assert_eq!(
        parse(&abs_relocatable().bytes).unwrap_err(),
        CodeObjectError::NotSharedObject { e_type: 1 }
    );
    let mut pal = kernels().bytes.clone();
    pal[7] = 65; // ELFOSABI_AMDGPU_PAL
    assert_eq!(
        parse(&pal).unwrap_err(),
        CodeObjectError::UnsupportedOsAbi { osabi: 65 }
    );
    let mut v2 = kernels().bytes.clone();
    v2[8] = 0;
    assert_eq!(
        parse(&v2).unwrap_err(),
        CodeObjectError::UnsupportedAbiVersion { version: 0 }
    );
}

#[test]
fn corrupt_structures_are_reported_with_where_they_are() {
    let b = relocs_v4();
    let co = parsed(b);
    let rela = oracle_section_offset(&b.path, ".rela.dyn") as usize;
    let first = co.relocations()[0].offset;

    let mut bad_type = b.bytes.clone();
    bad_type[rela + 8] = 7; // r_info type: R_AMDGPU_GOTPCREL
    assert_eq!(
        parse(&bad_type).unwrap_err(),
        CodeObjectError::UnsupportedRelocation {
            kind: RelocationType::GOTPCREL,
            offset: first
        }
    );
    let mut outside = b.bytes.clone();
    outside[rela..rela + 8].copy_from_slice(&(co.load_size - 4).to_le_bytes());
    assert_eq!(
        parse(&outside).unwrap_err(),
        CodeObjectError::RelocationOutOfImage {
            kind: RelocationType::RELATIVE64,
            offset: co.load_size - 4
        }
    );

    let dynsym = oracle_section_offset(&b.path, ".dynsym") as usize;
    let counter = oracle_dynsyms(&b.path)
        .into_iter()
        .find(|s| s.name == "counter")
        .unwrap();
    let at = dynsym + counter.num as usize * 24 + 8;
    let mut far = b.bytes.clone();
    far[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert_eq!(
        parse(&far).unwrap_err(),
        CodeObjectError::SymbolOutOfImage {
            name: "counter".into(),
            value: 1 << 40,
            size: 64
        }
    );

    let shoff = oracle_header(&b.path, "Start of section headers:");
    assert_eq!(
        parse(&b.bytes[..b.bytes.len() - 1]).unwrap_err(),
        CodeObjectError::Truncated {
            what: "section header table",
            offset: shoff
        }
    );
}

#[test]
fn corrupt_metadata_leaves_the_object_loadable_and_says_why() {
    let b = kernels();
    // Note header (12 bytes) and the name "AMDGPU\0" padded to 8.
    let desc = oracle_section_offset(&b.path, ".note") as usize + 12 + 8;
    assert_eq!(b.bytes[desc], 0x83, "a fixmap of 3 entries");
    let mut bytes = b.bytes.clone();
    bytes[desc] = 0xc1;
    let co = parse(&bytes).unwrap();
    assert!(co.metadata().is_none());
    assert_eq!(
        co.metadata_error(),
        Some(&CodeObjectError::MetadataReservedByte { offset: 0 })
    );
    assert!(co.symbol("_Z4vaddPKfS0_Pfi.kd").is_some());
}

// ---- robustness ----

/// Everything a caller may do with a parsed object; none of it may panic.
fn exercise(co: &CodeObject) {
    for s in &co.symbols {
        let _ = co.kernel_descriptor(s);
        let _ = co.symbol(&s.name);
        let _ = kernel_name(&s.name);
    }
    for r in co.relocations() {
        let _ = co.relocation_symbol(r);
    }
    let _ = (
        co.metadata(),
        co.metadata_error(),
        co.undefined_symbols().count(),
    );
    if co.load_size <= 64 << 20 {
        let _ = co.build_image(0x7f00_0000_0000);
        let _ = co.build_image(0);
    }
}

fn check_no_panic(input: &[u8], what: &str) -> Result<CodeObject, CodeObjectError> {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let r = parse(input);
        if let Ok(co) = &r {
            exercise(co);
        }
        r
    }));
    match r {
        Ok(r) => r,
        Err(_) => {
            let path = work_dir().join("panic-input.bin");
            std::fs::write(&path, input).unwrap();
            panic!("{what}: panicked; input saved to {}", path.display());
        }
    }
}

#[test]
fn truncating_a_code_object_at_any_offset_is_an_error_never_a_panic() {
    for b in [kernels(), relocs_v4(), abs_undefined()] {
        for cut in 0..b.bytes.len() {
            let r = check_no_panic(
                &b.bytes[..cut],
                &format!("{} cut at {cut}", b.path.display()),
            );
            // The section header table is the last thing in these files.
            assert!(r.is_err(), "{} cut at {cut} parsed", b.path.display());
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
fn thousands_of_random_mutations_never_panic() {
    let mut rng = Rng(0x5eed_c0de_0bad_f00d);
    let mut parsed_ok = 0;
    let mut refusals = BTreeMap::new();
    for b in [kernels(), relocs_v4(), abs_undefined(), kernels_wave32()] {
        // Header, program headers and section headers are where one byte
        // changes the most; aim half of the mutations there.
        let shoff = oracle_header(&b.path, "Start of section headers:") as usize;
        let hot = [0..64 + 9 * 56, shoff..b.bytes.len()];
        for i in 0..1500 {
            let mut m = b.bytes.clone();
            for _ in 0..1 + rng.below(4) {
                let at = if rng.next() & 1 == 0 {
                    let r = &hot[rng.below(2)];
                    r.start + rng.below(r.len().min(m.len() - r.start))
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
            match check_no_panic(&m, &format!("{} mutation {i}", b.path.display())) {
                Ok(_) => parsed_ok += 1,
                Err(e) => {
                    let d = format!("{e:?}");
                    let variant = d.split([' ', '{', '(']).next().unwrap_or("").to_string();
                    *refusals.entry(variant).or_insert(0u32) += 1;
                }
            }
        }
    }
    // Many single-byte changes land in code or padding: the mutations must
    // reach the loader paths too, not only the early refusals.
    eprintln!("{parsed_ok} mutants parsed; refusals: {refusals:?}");
    assert!(parsed_ok > 500, "only {parsed_ok} mutants parsed");
}
