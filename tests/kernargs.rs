//! Kernel argument decoding against real code objects: HIP programs built at
//! test time by the host's hipcc (HIP 5.2.3, clang 15, code object v4), with
//! and without `-g`, and by the sid chroot's hipcc (HIP 6.4.3, LLVM 21, code
//! object v5). The device code object is read out of the executable by the
//! crate's bundle reader; the test writes known values at the offsets the
//! metadata gives and checks that the decoder returns exactly those values,
//! the types the source declares and (with `-g`) the source's names.
//!
//! A missing compiler or chroot is a failure that says what to install, never
//! a skip: `scripts/test` runs `scripts/setup` and `scripts/sid-chroot`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use softgpu_hsa::code_object::{self, KernelMetadata, bundle, demangle};
use softgpu_hsa::kernargs::{
    ArgType, ArgValue, DecodedArgs, DispatchGeometry, HiddenKind, ParameterNames, Scalar, Sources,
    check_hidden, decode, expected_hidden,
};

mod common;
use common::repo;

const SETUP_HINT: &str = "run ./scripts/setup (installs hipcc, HIP 5.2.3)";
const CHROOT_HINT: &str = "run ./scripts/sid-chroot (scripts/test does it)";

/// Kernels with every argument shape the decoder distinguishes.
const PROBE: &str = r#"
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <cstdio>
struct Pair { int a; float b; };
__global__ void kargs_probe(float f, int i, unsigned long long u, Pair p, double* d,
                            const int* ci, bool b, char c, short s, unsigned short us,
                            long long ll, __half h, float4 v) {
  if (b && threadIdx.x == 0)
    d[0] = f + i + u + p.a + p.b + ci[0] + c + s + us + ll + (float)h + v.x + v.y + v.z + v.w;
}
template <typename T, int N> struct Wrap { T v[N]; };
template <typename T, int N>
__global__ void tmpl_probe(Wrap<T, N> w, T* out, int (*fp)(int), unsigned char tag) {
  if (tag) out[blockIdx.x] = w.v[N - 1] + (fp ? 1 : 0);
}
template __global__ void tmpl_probe<float, 3>(Wrap<float, 3>, float*, int (*)(int), unsigned char);
__global__ void hidden_probe(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = gridDim.x + blockDim.y;
  if (i == n) printf("%d\n", n);
}
int main() { return 0; }
"#;

const PROBE_NAME: &str = "_Z11kargs_probefiy4PairPdPKibcstx6__half15HIP_vector_typeIfLj4EE";
const TMPL_NAME: &str = "_Z10tmpl_probeIfLi3EEv4WrapIT_XT0_EEPS1_PFiiEh";
const HIDDEN_NAME: &str = "_Z12hidden_probePii";

fn work_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernargs");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The probe program built by the host's hipcc with `extra` flags.
fn host_build(name: &str, extra: &[&str]) -> Vec<u8> {
    let dir = work_dir();
    let src = dir.join("probe.hip");
    std::fs::write(&src, PROBE).unwrap();
    let exe = dir.join(name);
    let out = Command::new("hipcc")
        .args(["--offload-arch=gfx90a", "-O1"])
        .args(extra)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run hipcc: {e}; {SETUP_HINT}"));
    // hipcc prints a traceback from rocm_agent_enumerator when no GPU exists;
    // only its exit status matters.
    assert!(
        out.status.success(),
        "hipcc failed: {}\n{SETUP_HINT}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&exe).unwrap()
}

fn chroot_root() -> PathBuf {
    std::env::var_os("SOFTGPU_SID_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/sid"))
}

/// The probe program built by the sid chroot's hipcc (HIP 6.4.3).
fn sid_build(name: &str, extra: &[&str]) -> Vec<u8> {
    let root = chroot_root();
    assert!(
        root.join(".softgpu-ready").exists(),
        "the Debian sid chroot is not ready at {}: {CHROOT_HINT}",
        root.display()
    );
    let inside = format!("/softgpu/kernargs-{}-{name}", std::process::id());
    let host = root.join(inside.trim_start_matches('/'));
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("probe.hip"), PROBE).unwrap();
    let out = Command::new(repo().join("scripts/sid-chroot"))
        .args(["--run", "--", "hipcc", "--offload-arch=gfx90a", "-O1"])
        .args(extra)
        .arg(format!("{inside}/probe.hip"))
        .arg("-o")
        .arg(format!("{inside}/{name}"))
        .env("SOFTGPU_SID_CHROOT", &root)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/sid-chroot: {e}; {CHROOT_HINT}"));
    assert!(
        out.status.success(),
        "hipcc in the sid chroot failed: {}\n{CHROOT_HINT}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(host.join(name)).unwrap();
    let _ = std::fs::remove_dir_all(&host);
    bytes
}

/// The gfx90a code object inside an executable.
fn device_code_object(exe: &[u8]) -> Vec<u8> {
    let contents = bundle::read(exe).unwrap_or_else(|e| panic!("bundle: {e:?}"));
    let mut found = Vec::new();
    for b in &contents.bundles {
        for e in b.entries.iter().filter(|e| e.is_device_code()) {
            found.push(b.entry_bytes(e).to_vec());
        }
    }
    assert_eq!(found.len(), 1, "one gfx90a code object in the executable");
    found.pop().unwrap()
}

struct Built {
    code_object: Vec<u8>,
    parsed: code_object::CodeObject,
}

impl Built {
    fn new(exe: Vec<u8>) -> Built {
        let code_object = device_code_object(&exe);
        let parsed = code_object::parse(&code_object).unwrap();
        Built {
            code_object,
            parsed,
        }
    }

    fn kernel(&self, name: &str) -> &KernelMetadata {
        self.parsed
            .metadata()
            .and_then(|m| m.kernel(&format!("{name}.kd")))
            .unwrap_or_else(|| panic!("no metadata for {name}.kd"))
    }
}

macro_rules! artifact {
    ($name:ident, $build:expr) => {
        fn $name() -> &'static Built {
            static B: OnceLock<Built> = OnceLock::new();
            B.get_or_init(|| Built::new($build))
        }
    };
}

artifact!(host_plain, host_build("probe", &[]));
artifact!(host_debug, host_build("probe_g", &["-g"]));
artifact!(sid_debug, sid_build("probe_g", &["-g"]));
artifact!(sid_v5, sid_build("probe_v5", &["-mcode-object-version=5"]));

/// What the test writes for each explicit argument of `kargs_probe`, and what
/// the decoder must return: (source name, type text, bytes, value).
fn probe_values() -> Vec<(&'static str, &'static str, Vec<u8>, ArgValue)> {
    let pair: Vec<u8> = [7i32.to_le_bytes(), 1.5f32.to_le_bytes()].concat();
    let mut v4 = Vec::new();
    for x in [1.0f32, 2.0, 3.0, 4.0] {
        v4.extend_from_slice(&x.to_le_bytes());
    }
    vec![
        (
            "f",
            "float",
            2.5f32.to_le_bytes().to_vec(),
            ArgValue::F32(2.5),
        ),
        (
            "i",
            "int",
            (-3i32).to_le_bytes().to_vec(),
            ArgValue::Int(-3),
        ),
        (
            "u",
            "unsigned long long",
            0xfedc_ba98_7654_3210u64.to_le_bytes().to_vec(),
            ArgValue::Uint(0xfedc_ba98_7654_3210),
        ),
        ("p", "Pair", pair.clone(), ArgValue::Bytes(pair)),
        (
            "d",
            "double*",
            0x7f00_0000_1000u64.to_le_bytes().to_vec(),
            ArgValue::Pointer(0x7f00_0000_1000),
        ),
        (
            "ci",
            "int const*",
            0x7f00_0000_2000u64.to_le_bytes().to_vec(),
            ArgValue::Pointer(0x7f00_0000_2000),
        ),
        ("b", "bool", vec![1], ArgValue::Bool(true)),
        ("c", "char", vec![0xfb], ArgValue::Int(-5)),
        (
            "s",
            "short",
            (-300i16).to_le_bytes().to_vec(),
            ArgValue::Int(-300),
        ),
        (
            "us",
            "unsigned short",
            65000u16.to_le_bytes().to_vec(),
            ArgValue::Uint(65000),
        ),
        (
            "ll",
            "long long",
            (i64::MIN + 1).to_le_bytes().to_vec(),
            ArgValue::Int(i128::from(i64::MIN + 1)),
        ),
        (
            "h",
            "__half",
            0x3e00u16.to_le_bytes().to_vec(),
            ArgValue::F16(0x3e00),
        ),
        (
            "v",
            "HIP_vector_type<float, (unsigned int)4>",
            v4,
            ArgValue::Vector(vec![
                ArgValue::F32(1.0),
                ArgValue::F32(2.0),
                ArgValue::F32(3.0),
                ArgValue::F32(4.0),
            ]),
        ),
    ]
}

/// A block of `kernarg_segment_size` bytes with `values` written at the
/// explicit arguments' offsets and, at each hidden argument, a value that
/// names it: `0x1000 + index` for integers (truncated to the size),
/// `0x7e00_0000_0000 + index * 0x100` for pointers, `0xa5` bytes for
/// `hidden_none`.
fn block_for(k: &KernelMetadata, values: &[Vec<u8>]) -> Vec<u8> {
    let mut block = vec![0u8; k.kernarg_segment_size as usize];
    let mut explicit = values.iter();
    for (index, a) in k.args.iter().enumerate() {
        let at = a.offset as usize..(a.offset + a.size) as usize;
        let bytes: Vec<u8> = match HiddenKind::from_value_kind(&a.value_kind) {
            Some(HiddenKind::None) => vec![0xa5; a.size as usize],
            Some(h) if h.is_pointer() => (0x7e00_0000_0000u64 + index as u64 * 0x100)
                .to_le_bytes()
                .to_vec(),
            Some(_) => (0x1000u64 + index as u64).to_le_bytes()[..a.size as usize].to_vec(),
            None if a.value_kind.starts_with("hidden_") => vec![0x5a; a.size as usize],
            None => explicit
                .next()
                .expect("a value per explicit argument")
                .clone(),
        };
        assert_eq!(bytes.len(), at.len(), "argument {index} ({})", a.value_kind);
        block[at].copy_from_slice(&bytes);
    }
    assert!(
        explicit.next().is_none(),
        "more values than explicit arguments"
    );
    block
}

/// Checks the hidden arguments decode to what [`block_for`] wrote.
fn check_written_hidden(k: &KernelMetadata, d: &DecodedArgs) {
    for (index, (a, got)) in k.args.iter().zip(&d.args).enumerate() {
        let want = match HiddenKind::from_value_kind(&a.value_kind) {
            Some(HiddenKind::None) => ArgValue::Bytes(vec![0xa5; a.size as usize]),
            Some(h) if h.is_pointer() => ArgValue::Pointer(0x7e00_0000_0000 + index as u64 * 0x100),
            Some(_) => {
                let mask = if a.size >= 8 {
                    u64::MAX
                } else {
                    (1u64 << (8 * a.size)) - 1
                };
                ArgValue::Uint(u128::from((0x1000 + index as u64) & mask))
            }
            None if a.value_kind.starts_with("hidden_") => {
                panic!("a hidden kind the decoder does not know: {}", a.value_kind)
            }
            None => continue,
        };
        assert_eq!(
            got.value, want,
            "hidden argument {index} ({})",
            a.value_kind
        );
        assert_eq!(got.type_text, None);
    }
}

fn decoded(built: &Built, name: &str, values: &[Vec<u8>], with_names: bool) -> DecodedArgs {
    let k = built.kernel(name);
    let block = block_for(k, values);
    let signature = demangle(name).expect("the kernel name demangles");
    let names = ParameterNames::read(&built.code_object).unwrap();
    let d = decode(
        &block,
        k,
        Sources {
            signature: Some(&signature),
            names: if with_names { names.kernel(name) } else { None },
        },
    );
    check_written_hidden(k, &d);
    d
}

fn check_probe(built: &Built, with_names: bool) -> DecodedArgs {
    let values = probe_values();
    let bytes: Vec<Vec<u8>> = values.iter().map(|v| v.2.clone()).collect();
    let d = decoded(built, PROBE_NAME, &bytes, with_names);
    assert_eq!(d.disagreements, [], "{d:#?}");
    assert_eq!(d.kernel, "kargs_probe");
    let explicit: Vec<_> = d.args.iter().filter(|a| !a.is_hidden()).collect();
    assert_eq!(explicit.len(), values.len());
    for (a, (name, ty, _, value)) in explicit.iter().zip(&values) {
        assert_eq!(a.type_text.as_deref(), Some(*ty), "argument {name}");
        assert_eq!(&a.value, value, "argument {name}");
        let want_name = with_names.then(|| name.to_string());
        assert_eq!(a.name, want_name, "argument {name}");
    }
    assert_eq!(
        explicit[12].arg_type,
        Some(ArgType::Vector {
            element: Scalar::F32,
            lanes: 4
        })
    );
    d
}

#[test]
fn hip_5_2_kernel_arguments_decode_to_the_values_written_with_their_signature_types() {
    let d = check_probe(host_plain(), false);
    assert_eq!(
        d.call_text_plain(),
        "kargs_probe(float 2.5, int -3, unsigned long long 18364758544493064720, \
         Pair {070000000000c03f}, double* 0x7f0000001000, int const* 0x7f0000002000, \
         bool true, char -5, short -300, unsigned short 65000, \
         long long -9223372036854775807, __half 1.5, \
         HIP_vector_type<float, (unsigned int)4> (1.0, 2.0, 3.0, 4.0))"
    );
}

#[test]
fn kernel_sources_gather_signatures_and_names_once_per_code_object() {
    use softgpu_hsa::kernargs::kernel_sources;
    for (built, named) in [(host_plain(), false), (host_debug(), true)] {
        let md = built.parsed.metadata().unwrap();
        let (all, error) = kernel_sources(&built.code_object, md);
        assert_eq!(error, None);
        assert_eq!(all.len(), md.kernels.len());
        let probe = all
            .iter()
            .find(|k| k.symbol == format!("{PROBE_NAME}.kd"))
            .unwrap();
        assert!(
            probe
                .signature
                .as_deref()
                .unwrap()
                .starts_with("kargs_probe(float, int,")
        );
        assert_eq!(probe.names.is_some(), named);
        let bytes: Vec<Vec<u8>> = probe_values().into_iter().map(|v| v.2).collect();
        let k = built.kernel(PROBE_NAME);
        let d = decode(&block_for(k, &bytes), k, probe.sources());
        assert_eq!(d.disagreements, []);
        assert_eq!(d.args[0].name.is_some(), named);
    }
}

#[test]
fn hip_5_2_without_g_has_no_dwarf_names() {
    let names = ParameterNames::read(&host_plain().code_object).unwrap();
    assert!(names.is_empty());
    assert_eq!(names.kernel(PROBE_NAME), None);
}

#[test]
fn debug_sections_are_found_by_name_only_in_a_g_build() {
    let plain = &host_plain().code_object;
    let debug = &host_debug().code_object;
    let info = code_object::section_named(debug, ".debug_info").unwrap();
    assert!(info.is_some_and(|s| s.len() > 100));
    assert!(
        code_object::section_named(debug, ".debug_abbrev")
            .unwrap()
            .is_some()
    );
    assert_eq!(code_object::section_named(plain, ".debug_info"), Ok(None));
    assert!(
        code_object::section_named(plain, ".text")
            .unwrap()
            .is_some()
    );
    assert_eq!(
        code_object::section_named(plain, ".tex"),
        Ok(None),
        "a prefix of a name is not the name"
    );
    assert_eq!(
        code_object::section_named(b"MZ", ".text"),
        Err(code_object::CodeObjectError::NotElf)
    );
    // Cut inside the section header table: a typed error at every length.
    for cut in (0..plain.len()).step_by(97) {
        let _ = code_object::section_named(&plain[..cut], ".text");
        let _ = ParameterNames::read(&debug[..cut.min(debug.len())]);
    }
}

#[test]
fn mutated_dwarf_is_a_typed_error_or_names_never_a_panic() {
    let debug = &host_debug().code_object;
    let want = ParameterNames::read(debug).unwrap();
    let info = code_object::section_named(debug, ".debug_info")
        .unwrap()
        .unwrap();
    // Where .debug_info lies in the file.
    let start = info.as_ptr() as usize - debug.as_ptr() as usize;
    let mut seed = 0x9e37_79b9u32;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as usize
    };
    let (mut errors, mut changed) = (0, 0);
    for _ in 0..3000 {
        let mut m = debug.clone();
        for _ in 0..1 + next() % 4 {
            let at = start + next() % info.len();
            m[at] ^= 1 << (next() % 8);
        }
        match ParameterNames::read(&m) {
            Err(_) => errors += 1,
            Ok(p) if p != want => changed += 1,
            Ok(_) => {}
        }
    }
    assert!(
        errors > 0,
        "no mutation was refused ({changed} changed the names)"
    );
}

#[test]
fn hip_5_2_with_g_names_every_argument_from_dwarf() {
    let d = check_probe(host_debug(), true);
    assert!(
        d.call_text_plain().starts_with(
            "kargs_probe(float f=2.5, int i=-3, unsigned long long u=18364758544493064720, \
             Pair p={070000000000c03f}, double* d=0x7f0000001000,"
        ),
        "{}",
        d.call_text_plain()
    );
    let names = ParameterNames::read(&host_debug().code_object).unwrap();
    let tmpl: Vec<Option<&str>> = names
        .kernel(TMPL_NAME)
        .unwrap()
        .iter()
        .map(|n| n.as_deref())
        .collect();
    assert_eq!(tmpl, [Some("w"), Some("out"), Some("fp"), Some("tag")]);
}

#[test]
fn a_template_kernel_with_a_record_and_a_function_pointer_decodes() {
    for built in [host_plain(), host_debug()] {
        let w: Vec<u8> = [1.0f32, 2.0, 3.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let values = vec![
            w.clone(),
            0x7f00_0000_3000u64.to_le_bytes().to_vec(),
            0x7f00_0000_4000u64.to_le_bytes().to_vec(),
            vec![200],
        ];
        let d = decoded(built, TMPL_NAME, &values, false);
        assert_eq!(d.disagreements, []);
        assert_eq!(d.kernel, "void tmpl_probe<float, 3>");
        let types: Vec<Option<ArgType>> = d.args.iter().map(|a| a.arg_type.clone()).collect();
        assert_eq!(
            types,
            [
                Some(ArgType::Record {
                    name: "Wrap<float, 3>".into()
                }),
                Some(ArgType::Pointer {
                    pointee: "float".into()
                }),
                Some(ArgType::Pointer {
                    pointee: "int (int)".into()
                }),
                Some(ArgType::Scalar(Scalar::U8)),
            ]
        );
        assert_eq!(
            d.call_text_plain(),
            "void tmpl_probe<float, 3>(Wrap<float, 3> {0000803f0000004000004040}, \
             float* 0x7f0000003000, int (*)(int) 0x7f0000004000, unsigned char 200)"
        );
    }
}

#[test]
fn hip_5_2_code_object_v4_hidden_arguments_decode_by_kind() {
    let built = host_plain();
    assert_eq!(built.parsed.code_object_version(), 4);
    let k = built.kernel(HIDDEN_NAME);
    let kinds: Vec<&str> = k.args.iter().map(|a| a.value_kind.as_str()).collect();
    // The v4 implicit arguments of a kernel that calls printf (clang 15).
    for want in [
        "hidden_global_offset_x",
        "hidden_global_offset_y",
        "hidden_global_offset_z",
        "hidden_hostcall_buffer",
    ] {
        assert!(kinds.contains(&want), "{want} missing from {kinds:?}");
    }
    let values = vec![
        0x7f00_0000_5000u64.to_le_bytes().to_vec(),
        77i32.to_le_bytes().to_vec(),
    ];
    let d = decoded(built, HIDDEN_NAME, &values, false);
    assert_eq!(d.disagreements, []);
    assert_eq!(
        d.call_text_plain(),
        "hidden_probe(int* 0x7f0000005000, int 77)"
    );
}

/// The code object v5 implicit arguments (v6 has the same), and their sizes.
fn check_v5_hidden(built: &Built, with_names: bool) {
    let k = built.kernel(HIDDEN_NAME);
    let kinds: Vec<&str> = k.args.iter().map(|a| a.value_kind.as_str()).collect();
    for want in [
        "hidden_block_count_x",
        "hidden_block_count_y",
        "hidden_block_count_z",
        "hidden_group_size_x",
        "hidden_group_size_y",
        "hidden_group_size_z",
        "hidden_remainder_x",
        "hidden_remainder_y",
        "hidden_remainder_z",
        "hidden_global_offset_x",
        "hidden_grid_dims",
    ] {
        assert!(kinds.contains(&want), "{want} missing from {kinds:?}");
    }
    let size_of = |kind: &str| k.args.iter().find(|a| a.value_kind == kind).unwrap().size;
    assert_eq!(size_of("hidden_block_count_x"), 4);
    assert_eq!(size_of("hidden_group_size_x"), 2);
    assert_eq!(size_of("hidden_remainder_x"), 2);
    assert_eq!(size_of("hidden_grid_dims"), 2);
    assert_eq!(size_of("hidden_global_offset_x"), 8);
    let values = vec![
        0x7f00_0000_5000u64.to_le_bytes().to_vec(),
        77i32.to_le_bytes().to_vec(),
    ];
    let d = decoded(built, HIDDEN_NAME, &values, with_names);
    assert_eq!(d.disagreements, []);
    let want = if with_names {
        "hidden_probe(int* out=0x7f0000005000, int n=77)"
    } else {
        "hidden_probe(int* 0x7f0000005000, int 77)"
    };
    assert_eq!(d.call_text_plain(), want);
    let index = k
        .args
        .iter()
        .position(|a| a.value_kind == "hidden_block_count_x")
        .unwrap();
    assert_eq!(
        d.hidden(HiddenKind::BlockCountX),
        Some(0x1000 + index as u64)
    );
}

#[test]
fn hip_6_4_code_object_v5_hidden_arguments_decode_by_kind() {
    let built = sid_v5();
    assert_eq!(built.parsed.code_object_version(), 5);
    check_v5_hidden(built, false);
    check_probe(built, false);
}

#[test]
fn hip_6_4_hidden_arguments_filled_as_hip_fills_them_match_the_packet() {
    let built = sid_v5();
    let k = built.kernel(HIDDEN_NAME);
    // hipLaunchKernelGGL(hidden_probe, dim3(4, 3), dim3(64, 2), 256, ...):
    // a 256 x 6 grid, 256 bytes of dynamic LDS.
    let packet = DispatchGeometry {
        dimensions: 2,
        workgroup_size: [64, 2, 1],
        grid_size: [256, 6, 1],
        group_segment_size: k.group_segment_fixed_size as u32 + 256,
    };
    let mut block = vec![0u8; k.kernarg_segment_size as usize];
    let mut checked = 0;
    for a in &k.args {
        if let Some(v) = HiddenKind::from_value_kind(&a.value_kind)
            .and_then(|h| expected_hidden(h, &packet, k.group_segment_fixed_size))
        {
            let at = a.offset as usize;
            block[at..at + a.size as usize].copy_from_slice(&v.to_le_bytes()[..a.size as usize]);
            checked += 1;
        }
    }
    assert!(
        checked >= 10,
        "only {checked} hidden arguments the packet determines"
    );
    let d = decode(&block, k, Sources::default());
    assert_eq!(d.hidden(HiddenKind::BlockCountX), Some(4));
    assert_eq!(d.hidden(HiddenKind::BlockCountY), Some(3));
    assert_eq!(d.hidden(HiddenKind::GroupSizeY), Some(2));
    assert_eq!(d.hidden(HiddenKind::GridDims), Some(2));
    assert_eq!(check_hidden(&d, &packet, k.group_segment_fixed_size), []);
    // A block that launches one workgroup too few in x.
    let x = k
        .args
        .iter()
        .find(|a| a.value_kind == "hidden_block_count_x")
        .unwrap();
    block[x.offset as usize] = 3;
    let d = decode(&block, k, Sources::default());
    let found = check_hidden(&d, &packet, k.group_segment_fixed_size);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].kind, found[0].value, found[0].expected),
        ("hidden_block_count_x", 3, 4)
    );
}

#[test]
fn hip_6_4_default_code_object_v6_decodes_with_dwarf_names() {
    // Measured: HIP 6.4.3's hipcc (LLVM 21) writes code object v6 by default.
    let built = sid_debug();
    assert_eq!(built.parsed.code_object_version(), 6);
    check_v5_hidden(built, true);
    check_probe(built, true);
}

#[test]
fn a_block_shorter_than_the_segment_is_reported_and_the_rest_still_decodes() {
    let built = host_plain();
    let k = built.kernel(PROBE_NAME);
    let bytes: Vec<Vec<u8>> = probe_values().into_iter().map(|v| v.2).collect();
    let block = block_for(k, &bytes);
    let signature = demangle(PROBE_NAME).unwrap();
    let d = decode(
        &block[..20],
        k,
        Sources {
            signature: Some(&signature),
            names: None,
        },
    );
    assert_eq!(d.disagreements[0].code(), "block_short");
    assert_eq!(d.args[0].value, ArgValue::F32(2.5));
    assert_eq!(d.args[4].value, ArgValue::Unavailable);
    assert!(d.call_text_plain().contains("double* ?"));
}

/// Debian's ROCm libraries and test programs in the sid chroot (HIP 6.4.3)
/// whose gfx90a device code is checked kernel by kernel: rocFFT and rocRAND,
/// and the deeply templated kernels (lambdas, iterators, nested templates) of
/// hipCUB, rocThrust and rocPRIM tests.
const LIBRARIES: [(&str, &str); 5] = [
    ("/usr/lib/x86_64-linux-gnu/librocfft.so.0.1", "librocfft0"),
    ("/usr/lib/x86_64-linux-gnu/librocrand.so.1.1", "librocrand1"),
    (
        "/usr/libexec/rocm/libhipcub-tests/test_hipcub_device_scan",
        "libhipcub-tests",
    ),
    (
        "/usr/libexec/rocm/librocthrust-tests/test_thrust_scan",
        "librocthrust-tests",
    ),
    (
        "/usr/libexec/rocm/librocprim-tests/test_warp_scan",
        "librocprim-tests",
    ),
];

#[test]
fn every_kernel_of_real_rocm_libraries_decodes_with_no_disagreement() {
    let root = chroot_root();
    let mut total = 0usize;
    let mut typed = 0usize;
    let mut problems = Vec::new();
    // Explicit arguments by what their type is: scalar, vector, pointer,
    // record, unknown, untyped.
    let mut classes = [0usize; 6];
    for (path, package) in LIBRARIES {
        let host = root.join(path.trim_start_matches('/'));
        let bytes = std::fs::read(&host).unwrap_or_else(|e| {
            panic!(
                "{path} in the sid chroot: {e}: install Debian's {package} there \
                 (./scripts/sid-chroot --run -- apt-get install -y {package}); {CHROOT_HINT}"
            )
        });
        let contents = bundle::read(&bytes).unwrap_or_else(|e| panic!("{path}: {e:?}"));
        for b in &contents.bundles {
            for e in b.entries.iter().filter(|e| e.is_device_code()) {
                if !e.id.contains("gfx90a") {
                    continue;
                }
                let co = code_object::parse(b.entry_bytes(e)).unwrap();
                let Some(md) = co.metadata() else { continue };
                for k in &md.kernels {
                    total += 1;
                    let base = k.symbol.strip_suffix(".kd").unwrap_or(&k.symbol);
                    let signature = demangle(base);
                    if signature.is_some() {
                        typed += 1;
                    }
                    let block = vec![0u8; k.kernarg_segment_size as usize];
                    let d = decode(
                        &block,
                        k,
                        Sources {
                            signature: signature.as_deref(),
                            names: None,
                        },
                    );
                    for a in d.args.iter().filter(|a| !a.is_hidden()) {
                        classes[match a.arg_type {
                            Some(ArgType::Scalar(_)) => 0,
                            Some(ArgType::Vector { .. }) => 1,
                            Some(ArgType::Pointer { .. }) => 2,
                            Some(ArgType::Record { .. }) => 3,
                            Some(ArgType::Unknown) => 4,
                            None => 5,
                        }] += 1;
                    }
                    if !d.disagreements.is_empty() {
                        problems.push(format!(
                            "{path}: {}: {:?}",
                            signature.as_deref().unwrap_or(base),
                            d.disagreements
                        ));
                    }
                }
            }
        }
    }
    eprintln!(
        "{total} kernels, {typed} with a demangled signature; explicit arguments: \
         {} scalar, {} vector, {} pointer, {} record, {} unknown, {} untyped",
        classes[0], classes[1], classes[2], classes[3], classes[4], classes[5]
    );
    assert_eq!(classes[4], 0, "no argument type is unrecognised");
    assert!(total > 100, "only {total} kernels found");
    assert!(
        problems.is_empty(),
        "{} of {total} kernels disagree:\n{}",
        problems.len(),
        problems[..problems.len().min(30)].join("\n")
    );
}
