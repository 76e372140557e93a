//! The real-world suite: ROCm software this project did not write, run under the shim on three
//! HIP versions, every dispatch it issues cross-checked against an independent HIP-API witness.
//!
//! What runs: ROCm's libraries from Debian, driven through their main entry points by clients
//! of our own (`integration/realworld/*.cpp`, built with the real `hipcc` and linked against the
//! real libraries), filtered subsets of the libraries' packaged GoogleTest suites
//! (`/usr/libexec/rocm/...` in the chroots), and rocminfo. HIP 5.2.3 programs run on the host
//! (`./scripts/setup --tests` installs the packages), HIP 6.4.3 programs in the sid chroot
//! (`./scripts/sid-chroot --realworld`) and HIP 7.2.4 programs in the ROCm 7 chroot
//! (`./scripts/sid-chroot --rocm7 --realworld`), on a virtual gfx90a and again on a virtual
//! gfx942 ([`COLUMNS`]). The list is [`programs`].
//!
//! Every program runs with `LD_PRELOAD=witness.so:libsoftgpu_hsa.so`. The witness
//! (`integration/witness/witness.c`, compiled here against the real HIP headers of the version,
//! with the host's `cc` or the chroots' `clang-21` and `clang-22`) records every kernel launch
//! HIP accepts. For
//! every process the run left behind, its witness log and its capture must agree as
//! `realworld/compare.rs` says (every successful launch captured exactly once, on its stream's
//! queue, in order, with the same geometry; no unexplained user dispatch; blits by name).
//!
//! A program passes when, besides that: it exits as its kind requires (a client: status 0 and
//! `rw: done=1`; a packaged gtest: it reaches its summary, and every failure is a numerical
//! comparison, see `realworld/gtest.rs`; rocminfo: it lists the CPU agent and the GPU agent),
//! it finishes before its deadline, every capture is complete, nothing is rejected, and the shim
//! logged no warning or error.
//!
//! Outside-the-runtime workarounds are supplied from outside and named in the program's notes
//! (and so in the README matrix): see [`Workaround`].
//!
//! The README's compatibility matrix (between `<!-- realworld-matrix:begin -->` and
//! `<!-- realworld-matrix:end -->`) is produced here: the test
//! `the_readme_compatibility_matrix_is_what_the_suite_measured` runs every program and fails when
//! the table differs from what it measured; `SOFTGPU_BLESS=1` rewrites it.
//!
//! One library by hand: `cargo test --release --test realworld rocrand` (test names carry the
//! library, the HIP version and, on 7.2, the target).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

mod common;
#[path = "realworld/compare.rs"]
mod compare;
#[path = "realworld/gtest.rs"]
mod gtest;
#[path = "realworld/rocrtst.rs"]
mod rocrtst;

use common::{Chroot, Hip, Place, cli, repo, run_with_deadline, shim};

const SETUP_HINT: &str = "run ./scripts/setup --tests (scripts/test does)";

/// What makes `hip`'s programs present: the host's setup, or the chroot's real-world stage.
fn install_hint(hip: Hip) -> String {
    match hip.chroot() {
        None => SETUP_HINT.to_string(),
        Some(c) => format!("run {} --realworld (scripts/test does)", c.build),
    }
}
const SHIM_LOG_MARKS: [&str; 2] = [" WARN softgpu_hsa", " ERROR softgpu_hsa"];

// ---------------------------------------------------------------------------------------------
// Where things are
// ---------------------------------------------------------------------------------------------

/// One HIP version's corner: the run directory, the shim and witness as the programs see them,
/// and the client sources.
struct Site {
    hip: Hip,
    base: Place,
    shim: Place,
    witness: Place,
    /// `integration/realworld/memavailable.c`, built (see [`Workaround::HostMemAvailable`]).
    memavailable: Place,
    src: Place,
}

fn site(hip: Hip) -> &'static Site {
    static SITES: OnceLock<Mutex<BTreeMap<&'static str, &'static Site>>> = OnceLock::new();
    let mut map = SITES.get_or_init(Default::default).lock().unwrap();
    if let Some(s) = map.get(hip.label()) {
        return s;
    }
    let s: &'static Site = Box::leak(Box::new(match hip.chroot() {
        None => host_site(),
        Some(c) => chroot_site(hip, c),
    }));
    map.insert(hip.label(), s);
    s
}

fn host_site() -> Site {
    for f in [
        "/usr/bin/hipcc",
        "/usr/include/rocrand/rocrand.h",
        "/usr/bin/rocminfo",
    ] {
        assert!(Path::new(f).exists(), "{f} is missing: {SETUP_HINT}");
    }
    let base = Place::host(Path::new(env!("CARGO_TARGET_TMPDIR")).join("realworld/hip-5.2"));
    std::fs::create_dir_all(&base.host).unwrap();
    let src = Place::host(repo().join("integration"));
    let site = Site {
        hip: Hip::V5_2,
        witness: base.join("witness.so"),
        memavailable: base.join("memavailable.so"),
        shim: Place::host(shim()),
        src,
        base,
    };
    build_witness(&site);
    site
}

/// A chroot of `scripts/sid-chroot` whose base is ready for `hip` (its `.softgpu-ready` names
/// that HIP) and whose real-world stage is installed; the shim and the sources copied in.
fn chroot_site(hip: Hip, chroot: Chroot) -> Site {
    let root = chroot.root.clone();
    let hint = install_hint(hip);
    let ready = root.join(".softgpu-ready");
    let marker = std::fs::read_to_string(&ready).unwrap_or_else(|_| {
        panic!(
            "the chroot for HIP {} is not ready ({} is missing): {hint}",
            hip.release(),
            ready.display()
        )
    });
    assert!(
        marker.contains(chroot.hip_package),
        "{} names {:?}, not {}*: {} is another chroot; {hint}",
        ready.display(),
        marker.trim(),
        chroot.hip_package,
        root.display()
    );
    let stage = root.join(".softgpu-realworld-ready");
    assert!(
        stage.is_file(),
        "the real-world stage of the HIP {} chroot is not installed ({} is missing): {hint}",
        hip.release(),
        stage.display()
    );
    let base = common::process_dir_in_chroot(&root, "realworld");
    let src = base.join("src");
    for sub in ["realworld", "witness"] {
        let to = src.host.join(sub);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(repo().join("integration").join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    let shim_place = base.join("libsoftgpu_hsa.so");
    std::fs::copy(shim(), &shim_place.host).unwrap();
    let site = Site {
        hip,
        witness: base.join("witness.so"),
        memavailable: base.join("memavailable.so"),
        shim: shim_place,
        src,
        base,
    };
    build_witness(&site);
    site
}

/// Where a program installed at `path` (as the program sees it) is on the host.
fn host_path(hip: Hip, path: &str) -> PathBuf {
    match hip.chroot() {
        None => PathBuf::from(path),
        Some(c) => c.root.join(path.trim_start_matches('/')),
    }
}

fn neutral_env(home: &str) -> Vec<(String, String)> {
    vec![
        (
            "PATH".into(),
            "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin".into(),
        ),
        ("HOME".into(), home.into()),
        ("LC_ALL".into(), "C.UTF-8".into()),
    ]
}

/// What `integration/realworld/with-amdgpu-stand-ins` supplies around a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StandIns {
    None,
    /// The amdgpu module and `/dev/kfd` (see [`Workaround::AmdgpuStandIns`]).
    Amdgpu,
    /// Those, and KFD's sysfs topology of this many virtual GPUs (see
    /// [`Workaround::KfdTopology`]).
    KfdTopology(usize),
}

/// A command running `argv` (paths as the program sees them) with exactly `env`, in `cwd`: on
/// the host directly, in a chroot through `scripts/sid-chroot [--rocm7] --run` (which execs, so
/// the child's pid is the program's). With stand-ins, through
/// `integration/realworld/with-amdgpu-stand-ins`.
fn command(
    hip: Hip,
    cwd: &Place,
    env: &[(String, String)],
    argv: &[String],
    stand_ins: StandIns,
) -> Command {
    let script = repo()
        .join("integration/realworld/with-amdgpu-stand-ins")
        .display()
        .to_string();
    let assign = |pairs: &mut dyn Iterator<Item = &(String, String)>| -> Vec<String> {
        pairs.map(|(k, v)| format!("{k}={v}")).collect()
    };
    let env_i: Vec<String> = vec![
        "/usr/bin/env".into(),
        "-i".into(),
        "-C".into(),
        cwd.seen.clone(),
    ];
    let mut full: Vec<String> = Vec::new();
    let chroot = hip.chroot();
    match (&chroot, stand_ins) {
        (None, StandIns::None) => {
            full.extend(env_i);
            full.extend(assign(&mut env.iter()));
        }
        // On the host the stand-ins go inside the neutral environment, so that the stand-in
        // `lsmod` the script puts first on PATH stays there; the preloads come last, for the
        // program alone.
        (None, _) => {
            full.extend(env_i);
            full.extend(assign(&mut env.iter().filter(|(k, _)| k != "LD_PRELOAD")));
            full.extend([script, "/".into(), "--lsmod".into()]);
            if let StandIns::KfdTopology(n) = stand_ins {
                full.extend(["--kfd-gpus".into(), n.to_string()]);
            }
            full.extend(["--".into(), "/usr/bin/env".into()]);
            full.extend(assign(&mut env.iter().filter(|(k, _)| k == "LD_PRELOAD")));
        }
        // For a chroot, the namespace is made on the host, around scripts/sid-chroot.
        (Some(c), _) => {
            if stand_ins != StandIns::None {
                full.extend([script, c.root.display().to_string()]);
                if let StandIns::KfdTopology(n) = stand_ins {
                    full.extend(["--kfd-gpus".into(), n.to_string()]);
                }
                full.push("--".into());
            }
            full.push(repo().join("scripts/sid-chroot").display().to_string());
            full.extend(c.flag.map(str::to_string));
            full.extend(["--run".into(), "--".into()]);
            full.extend(env_i);
            full.extend(assign(&mut env.iter()));
        }
    }
    full.extend(argv.iter().cloned());
    let mut cmd = Command::new(&full[0]);
    cmd.args(&full[1..]).stdin(Stdio::null());
    if chroot.is_some() {
        cmd.env("SOFTGPU_SID_CHROOT", common::sid_root())
            .env("SOFTGPU_ROCM7_CHROOT", common::rocm7_root());
    }
    cmd
}

/// Run a build step (compiler) to completion; Err with its output when it fails.
fn build_step(site: &Site, argv: &[String], what: &str) -> Result<(), String> {
    let env = neutral_env("/root");
    let out = command(site.hip, &site.base, &env, argv, StandIns::None)
        .output()
        .map_err(|e| format!("cannot run {} ({}): {e}", argv[0], site.hip.label()))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{} {what} failed ({}):\n{}\n{}",
        site.hip.label(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The witness, compiled against this HIP's own headers with the real C compiler, and the
/// `sysinfo` stand-in of [`Workaround::HostMemAvailable`].
fn build_witness(site: &Site) {
    let compiler = match site.hip {
        Hip::V5_2 => "cc",
        Hip::V6_4 => "clang-21",
        Hip::V7_2 => "clang-22",
    };
    for (out, src) in [
        (&site.witness, "witness/witness.c"),
        (&site.memavailable, "realworld/memavailable.c"),
    ] {
        let argv: Vec<String> = [
            compiler,
            "-std=gnu11",
            "-O1",
            "-g",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fPIC",
            "-shared",
            "-o",
            &out.seen,
            &format!("{}/{src}", site.src.seen),
            "-ldl",
            "-lpthread",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Err(e) = build_step(site, &argv, &format!("build of integration/{src}")) {
            panic!("{e}");
        }
    }
}

type Built = Result<Place, String>;
/// Values computed once per test process, by key, whichever test asks first.
type Cache<T> = OnceLock<Mutex<BTreeMap<String, Arc<OnceLock<T>>>>>;

fn once<T: Clone>(cache: &'static Cache<T>, key: String, f: impl FnOnce() -> T) -> T {
    let cell = cache
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_default()
        .clone();
    cell.get_or_init(f).clone()
}

/// The targets clients are built for: gfx90a, and on HIP 7.2.4 gfx942 too (one build serves both
/// of its columns).
fn offload_arch(hip: Hip) -> &'static str {
    match hip {
        Hip::V5_2 | Hip::V6_4 => "--offload-arch=gfx90a",
        Hip::V7_2 => "--offload-arch=gfx90a,gfx942",
    }
}

/// `integration/realworld/<name>.cpp` built once per HIP version with the real hipcc and linked
/// against `libs`.
fn client(hip: Hip, name: &str, libs: &[&str], extra: &[&str]) -> Place {
    static CACHE: Cache<Built> = OnceLock::new();
    let built = once(&CACHE, format!("{}/{name}", hip.label()), || {
        let site = site(hip);
        let exe = site.base.join("bin").join(name);
        std::fs::create_dir_all(exe.host.parent().unwrap()).unwrap();
        let mut argv: Vec<String> = [
            "hipcc",
            offload_arch(hip),
            "-O1",
            "-std=c++17",
            "-w",
            "-I",
            &format!("{}/realworld", site.src.seen),
            &format!("{}/realworld/{name}.cpp", site.src.seen),
            "-o",
            &exe.seen,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv.extend(libs.iter().map(|l| format!("-l{l}")));
        build_step(
            site,
            &argv,
            &format!("hipcc of integration/realworld/{name}.cpp"),
        )?;
        Ok(exe)
    });
    built.unwrap_or_else(|e| panic!("{e}"))
}

/// `integration/witness/selftest.cpp` and its module `selftest_module.cpp` (`--genco`), built
/// once per HIP version.
fn witness_selftest(hip: Hip) -> (Place, Place) {
    static CACHE: Cache<Result<(Place, Place), String>> = OnceLock::new();
    once(&CACHE, hip.label().to_string(), || {
        let site = site(hip);
        let bin = site.base.join("bin");
        std::fs::create_dir_all(&bin.host).unwrap();
        let (exe, module) = (
            bin.join("witness_selftest"),
            bin.join("witness_selftest_module.co"),
        );
        let src = |f: &str| format!("{}/witness/{f}", site.src.seen);
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        build_step(
            site,
            &argv(&[
                "hipcc",
                offload_arch(hip),
                "-O1",
                "-w",
                &src("selftest.cpp"),
                "-o",
                &exe.seen,
            ]),
            "hipcc of integration/witness/selftest.cpp",
        )?;
        build_step(
            site,
            &argv(&[
                "hipcc",
                "--genco",
                offload_arch(hip),
                "-O1",
                &src("selftest_module.cpp"),
                "-o",
                &module.seen,
            ]),
            "hipcc --genco of integration/witness/selftest_module.cpp",
        )?;
        Ok((exe, module))
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

// ---------------------------------------------------------------------------------------------
// The programs
// ---------------------------------------------------------------------------------------------

/// A cause outside any HSA runtime that stops a program, and the documented workaround the
/// suite supplies from outside. The shim's part must still be right.
#[allow(dead_code)] // until every workaround's program is in the list
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Workaround {
    /// rocminfo checks for the amdgpu kernel module (`/sys/module/amdgpu`, `lsmod`) and opens
    /// `/dev/kfd` before `hsa_init`: stand-ins in a private mount namespace.
    AmdgpuStandIns,
    /// comgr 7.0.2's cache hands back the first compressed bundle for later ones:
    /// `AMD_COMGR_CACHE=0`.
    ComgrCache,
    /// MIOpen 6.4.3 as packaged looks for clang-21 in its build tree and compiles HIP kernels
    /// with `-isystem /usr/include`: `MIOPEN_DEBUG_HIP_KERNELS=0`.
    MiopenHipKernels,
    /// MIOpen 7.2.4 as packaged offers its assembly convolution solvers (its comgr build can
    /// assemble now) although Debian's `0002-remove-assembly-code-integration.patch` removed their
    /// kernels' sources: a find that ranks one (`ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC` for a
    /// 1x1 convolution on gfx90a) fails with `Failed to load kernel source:
    /// igemm_fwd_gtcx2_nhwc_fp32_...s` and miopenStatusUnknownError: `MIOPEN_DEBUG_GCN_ASM_KERNELS=0`.
    MiopenAsmKernels,
    /// RCCL maps each HIP device to a node of KFD's sysfs topology
    /// (`/sys/class/kfd/kfd/topology/nodes`, read by its `alt_rsmi.cc`) by PCI bus id and reads the
    /// links between them; without it every communicator fails in `ncclGroupEnd` with
    /// ncclInternalError after `Failed to open topo/nodes directory` and `ARSMI failure 1`. The
    /// stand-ins add a topology of the virtual GPUs as the shim advertises them (node n at bus n,
    /// domain 0, XGMI links between GPUs), in a private mount namespace.
    KfdTopology,
    /// RCCL on gfx942 reads the GPUs' MEC firmware version through ROCm SMI (amdgpu sysfs,
    /// absent here, so -1) and, for a firmware older than the one that fixed scratch reclaim,
    /// stops in `ncclGetUniqueId` with `HSA_NO_SCRATCH_RECLAIM=1 must be set to avoid performance
    /// degradation with the current HIP configuration. (Runtime version:70253211, GPU Firmware
    /// version:-1)`: `HSA_NO_SCRATCH_RECLAIM=1`, a setting of ROCr's that the shim (which
    /// reclaims no scratch, since no kernel runs) has no use for.
    ScratchReclaim,
    /// rocFFT's and hipFFT's test programs (6.4.3; 7.2.4's still call `sysinfo`) take sysinfo's
    /// `freeram` (MemFree, which
    /// leaves out the page cache) as the host memory they may use, and below 1 GiB skip every
    /// test that needs a host buffer: after a build filled the page cache, hipfft-test skipped
    /// all 6 tests (6 dispatches instead of 24) and rocfft-test most of its (23 instead of 92),
    /// on a machine with 23 GiB available. `integration/realworld/memavailable.c`, preloaded
    /// first, reports MemAvailable as `freeram`.
    HostMemAvailable,
    /// rocrtst64 (Debian's `libhsa-runtime64-tests` 7.2.4, in experimental) is linked against
    /// libamd_smi.so.26, whose package sid no longer has; sid's libamd-smi27 exports all 13
    /// functions it calls. `scripts/sid-chroot --rocm7 --realworld` unpacks the package and a
    /// directory with the link `libamd_smi.so.26 -> libamd_smi.so.27`, on `LD_LIBRARY_PATH`.
    AmdSmiSoname,
}

impl Workaround {
    fn note(self) -> &'static str {
        match self {
            Workaround::AmdgpuStandIns => {
                "amdgpu module and /dev/kfd checks before hsa_init: stand-ins in a private mount namespace"
            }
            Workaround::ComgrCache => "comgr 7.0.2 cache returns a stale bundle: AMD_COMGR_CACHE=0",
            Workaround::MiopenHipKernels => {
                "MIOpen's packaged HIP kernel build is broken: MIOPEN_DEBUG_HIP_KERNELS=0"
            }
            Workaround::MiopenAsmKernels => {
                "Debian removed MIOpen's assembly kernels but not its assembly solvers (\"Failed to load kernel source: igemm_fwd_gtcx2_nhwc_...s\"): MIOPEN_DEBUG_GCN_ASM_KERNELS=0"
            }
            Workaround::ScratchReclaim => {
                "RCCL reads the GPU firmware version through ROCm SMI (none here: -1) and on gfx942 stops with \"HSA_NO_SCRATCH_RECLAIM=1 must be set\": HSA_NO_SCRATCH_RECLAIM=1"
            }
            Workaround::KfdTopology => {
                "RCCL reads KFD's sysfs topology (\"Failed to open topo/nodes directory\", ncclInternalError): a topology of the virtual GPUs in a private mount namespace"
            }
            Workaround::HostMemAvailable => {
                "the test program's host memory check reads MemFree (page cache counted as used): sysinfo reports MemAvailable"
            }
            Workaround::AmdSmiSoname => {
                "rocrtst64 needs libamd_smi.so.26, whose package (libamd-smi26) sid no longer has: the package is unpacked, not installed, with libamd_smi.so.26 linked to sid's libamd_smi.so.27 on LD_LIBRARY_PATH"
            }
        }
    }
    fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Workaround::AmdgpuStandIns => &[],
            Workaround::ComgrCache => &[("AMD_COMGR_CACHE", "0")],
            Workaround::MiopenHipKernels => &[("MIOPEN_DEBUG_HIP_KERNELS", "0")],
            Workaround::MiopenAsmKernels => &[("MIOPEN_DEBUG_GCN_ASM_KERNELS", "0")],
            Workaround::KfdTopology => &[],
            Workaround::ScratchReclaim => &[("HSA_NO_SCRATCH_RECLAIM", "1")],
            Workaround::HostMemAvailable => &[],
            Workaround::AmdSmiSoname => &[("LD_LIBRARY_PATH", rocrtst::SONAMES)],
        }
    }
}

#[derive(Clone, Debug)]
enum Exe {
    /// `integration/realworld/<src>.cpp`, linked against `libs`.
    Client {
        src: &'static str,
        libs: &'static [&'static str],
    },
    /// An installed program (path as the program sees it).
    Installed(&'static str),
    /// The witness's own test program `integration/witness/selftest.cpp`, given its module.
    WitnessSelftest,
    /// Nothing to run: the library as packaged has no code object for the column's target in
    /// `dir` (as the program sees it), where it keeps one file or more per target it was built
    /// for. The row's test checks that this is still so (and that `dir` holds code objects for
    /// another target), so the cell says a fact, not a guess; when a later package brings the
    /// target, the test fails and the programs belong in the list.
    NoCodeFor { dir: &'static str },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Judge {
    /// Exit 0 and `rw: done=1`.
    Client,
    /// A packaged GoogleTest suite: completes, every failure a numerical comparison (gtest's
    /// value comparisons, or a block holding one of these library-specific result checks).
    Gtest { numerical: &'static [&'static str] },
    /// A rocThrust test program (Thrust's own unit-test driver): completes with
    /// `Totals: F failures, K known failures, 0 errors, and P passes.`, every failure a
    /// comparison of values or sequences.
    Thrust,
    /// RCCL's unit tests (`rccl-UnitTests`): as [`Judge::Gtest`], but RCCL reports a failed
    /// result check on `[ ERROR    ]` lines of its own (`Expected output: X.  Actual output: Y
    /// at index N` and the lines that go with it, see `gtest::is_rccl_validation`) besides its
    /// harness's gtest failure; any other error line (a failed NCCL call, a failed command)
    /// fails, and so does any `NCCL WARN` not in `gtest::RCCL_KNOWN_WARNINGS`.
    Rccl,
    /// rocminfo: exit 0, the CPU agent and every GPU agent of the program's targets listed,
    /// `*** Done ***`.
    Rocminfo,
    /// rocm_agent_enumerator: exit 0, lists exactly the program's targets (and, 5.2.3, the CPU as
    /// gfx000).
    AgentEnumerator,
    /// [`Exe::NoCodeFor`]: the package still has no code object for the target.
    NoCode,
    /// One test of rocrtst (ROCr's own suite), run alone: as its [`rocrtst::Case`] expects.
    Rocrtst { test: &'static str },
}

#[derive(Clone, Debug)]
struct Program {
    /// Unique, for directories and messages: `<library>-<what>`.
    id: String,
    /// The matrix row's library.
    library: &'static str,
    hip: Hip,
    /// `SOFTGPU_TARGET`: the virtual GPUs, comma separated. The matrix column is the HIP
    /// version and the first of them.
    target: &'static str,
    exe: Exe,
    args: Vec<String>,
    judge: Judge,
    /// Extra environment that is not a workaround (e.g. a test driver's output option).
    env: Vec<(&'static str, &'static str)>,
    workarounds: Vec<Workaround>,
    deadline: Duration,
    /// Preload the witness in front of the shim (false only to show that it changes nothing).
    witness: bool,
    /// A fact about the package the matrix states in the row's notes, and the line the program
    /// prints that shows it (checked on every run: when the line goes, the note goes with it).
    fact: Option<Fact>,
    /// rocSPARSE 7.2.4's tests print each failed value comparison on stderr (`ASSERT_NEAR(a, b)
    /// failed: d exceeds permissive range [lo,hi ]`) and then fail `ASSERT_TRUE(passed)` on
    /// stdout: such a verdict counts as numerical while stderr shows a comparison for each.
    near_checks_on_stderr: bool,
}

/// See [`Program::fact`].
#[derive(Clone, Copy, Debug)]
struct Fact {
    printed: &'static str,
    note: &'static str,
}

fn client_program(
    library: &'static str,
    hip: Hip,
    src: &'static str,
    libs: &'static [&'static str],
) -> Program {
    Program {
        id: format!("{src}-client"),
        library,
        hip,
        target: "gfx90a",
        exe: Exe::Client { src, libs },
        args: vec![],
        judge: Judge::Client,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(300),
        witness: true,
        fact: None,
        near_checks_on_stderr: false,
    }
}

/// A packaged test program of a chroot (`/usr/libexec/rocm/<package>/<binary>`), its id
/// `<binary>` (unique per column), run with a gtest filter; [`in_column`] sets its HIP version
/// and target.
fn gtest_program(
    library: &'static str,
    path: &'static str,
    filter: &str,
    deadline_s: u64,
) -> Program {
    Program {
        id: path.rsplit('/').next().unwrap().to_string(),
        library,
        hip: Hip::V6_4,
        target: "gfx90a",
        exe: Exe::Installed(path),
        args: vec![
            format!("--gtest_filter={filter}"),
            "--gtest_color=no".into(),
        ],
        judge: Judge::Gtest { numerical: &[] },
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(deadline_s),
        witness: true,
        fact: None,
        near_checks_on_stderr: false,
    }
}

/// A rocThrust test program, run on the named tests only.
fn thrust_program(path: &'static str, tests: &[&str], deadline_s: u64) -> Program {
    Program {
        id: path.rsplit('/').next().unwrap().to_string(),
        library: "rocThrust",
        hip: Hip::V6_4,
        target: "gfx90a",
        exe: Exe::Installed(path),
        args: tests.iter().map(|t| t.to_string()).collect(),
        judge: Judge::Thrust,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(deadline_s),
        witness: true,
        fact: None,
        near_checks_on_stderr: false,
    }
}

/// Library-specific messages of a failed result check.
fn numerical(mut p: Program, marks: &'static [&'static str]) -> Program {
    p.judge = Judge::Gtest { numerical: marks };
    p
}

/// Extra command-line arguments after the filter.
fn args(mut p: Program, extra: &[&str]) -> Program {
    p.args.extend(extra.iter().map(|a| a.to_string()));
    p
}

fn env(mut p: Program, vars: &[(&'static str, &'static str)]) -> Program {
    p.env.extend_from_slice(vars);
    p
}

fn with(mut p: Program, w: &[Workaround]) -> Program {
    p.workarounds.extend_from_slice(w);
    p
}

/// The rocBLAS gtest subset: single-precision GEMMs of the quick small category without
/// transposes (Tensile), the argument checks of GEMM, GEMV, AXPY, DOT and TRSM, Fortran GEMV,
/// single-precision AXPY with alpha, and TRSM with zero sizes.
const ROCBLAS_FILTER: &str = "_/gemm.blas3_tensile/quick_gemm_small_f32_r_NN_*:\
    _/gemm.blas3_tensile/quick_gemm_bad_arg*:_/gemv.blas2/quick_gemv_fortran*:\
    _/gemv.blas2/quick_gemv_bad_arg*:_/axpy.blas1/quick_blas1_bad_arg*:\
    _/dot.blas1/quick_blas1_bad_arg*:_/trsm.blas3_tensile/quick_trsm_bad_arg*:\
    _/trsm.blas3_tensile/quick_trsm_zero*:_/axpy.blas1/quick_blas1_with_alpha_f32_r_*";

/// rocFFT's and hipFFT's test programs draw a random seed per run unless given one, and the
/// seed decides which planar and callback variants of a filtered test run (`--planar_prob`,
/// `--callback_prob`, 0.1 by default) and so how many dispatches the run issues (22 in one
/// run, 100 in the next, same filter). A fixed seed makes the run, and the matrix, the same
/// every time.
const FFT_SEED: &[&str] = &["--seed", "1"];

/// rocFFT's and hipFFT's test programs turn a failed HIP call (a hipMalloc, a hipMemcpy, a
/// work buffer) into a skipped test unless told otherwise, and hipfft-test prints no count of
/// such calls. Under the shim a failed call is a fault to see, not a skip: with this, the test
/// fails with the call's message and the judge reports it.
const FFT_RUNTIME_FAILS: &[&str] = &["--skip_runtime_fails", "false"];

/// rocFFT's and hipFFT's accuracy checks against FFTW (norms of the difference over cutoffs),
/// and their check that the output's norm is finite.
const FFT_CHECKS: &[&str] = &[
    "Linf test failed",
    "L2 test failed",
    "std::isfinite(gpu_norm",
];

/// rocPRIM's and hipCUB's device-wide tests without those over 4 GiB of data (hours of host
/// reference work each here).
const LARGE_EXCLUDED: &str = "-*LargeIndices*:*Over4G*:*LargeInput*";

/// A program in a column: its HIP version and target set (a program over several GPUs, RCCL's,
/// names them all already and keeps them).
fn in_column(mut p: Program, hip: Hip, target: &'static str) -> Program {
    p.hip = hip;
    if !p.target.contains(',') {
        p.target = target;
    }
    p
}

/// `target` repeated `n` times, comma separated (several virtual GPUs of one kind).
fn gpus(target: &str, n: usize) -> &'static str {
    static MADE: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let want = vec![target; n].join(",");
    let mut made = MADE.lock().unwrap();
    if let Some(s) = made.iter().find(|s| **s == want) {
        return s;
    }
    let s: &'static str = Box::leak(want.into_boxed_str());
    made.push(s);
    s
}

/// Every program of the suite, in matrix order (a row's library where it first appears).
fn programs() -> &'static [Program] {
    static LIST: OnceLock<Vec<Program>> = OnceLock::new();
    LIST.get_or_init(|| {
        use Hip::V5_2;
        let mut list = vec![
            // HIP 5.2.3 (bookworm, host)
            rocminfo(V5_2, "gfx90a"),
            enumerator(V5_2, "gfx90a"),
            client_program("rocRAND", V5_2, "rocrand", &["rocrand"]),
            client_program("hipRAND", V5_2, "hiprand", &["hiprand"]),
            client_program("rocSPARSE", V5_2, "rocsparse", &["rocsparse"]),
            client_program("rocPRIM", V5_2, "rocprim", &[]),
        ];
        for c in COLUMNS.into_iter().filter(|c| c.hip != V5_2) {
            list.extend(
                chroot_programs(c.hip, c.target)
                    .into_iter()
                    .map(|p| in_column(p, c.hip, c.target)),
            );
        }
        list
    })
}

fn rocminfo(hip: Hip, target: &'static str) -> Program {
    Program {
        id: "rocminfo".into(),
        library: "rocminfo",
        hip,
        target,
        exe: Exe::Installed("/usr/bin/rocminfo"),
        args: vec![],
        judge: Judge::Rocminfo,
        env: vec![],
        workarounds: vec![Workaround::AmdgpuStandIns],
        deadline: Duration::from_secs(120),
        witness: true,
        fact: None,
        near_checks_on_stderr: false,
    }
}

fn enumerator(hip: Hip, target: &'static str) -> Program {
    Program {
        id: "rocm_agent_enumerator".into(),
        library: "rocminfo",
        exe: Exe::Installed("/usr/bin/rocm_agent_enumerator"),
        judge: Judge::AgentEnumerator,
        ..rocminfo(hip, target)
    }
}

/// A library with no code object for `target` in the package (see [`Exe::NoCodeFor`]).
fn no_code(library: &'static str, dir: &'static str) -> Program {
    Program {
        id: format!("{}-no-code", library.to_lowercase()),
        library,
        hip: Hip::V7_2,
        target: "gfx90a",
        exe: Exe::NoCodeFor { dir },
        args: vec![],
        judge: Judge::NoCode,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(1),
        witness: false,
        fact: None,
        near_checks_on_stderr: false,
    }
}

/// The programs of a chroot's column: HIP 6.4.3 (sid) or 7.2.4 (sid + experimental) on
/// `target`. The packaged tests are the same programs in both, under the package names of each
/// release (their sonames moved: librocblas4 to 5, libhipsolver0 to 1, libhipsparse1 to 4);
/// HIP 7.2.4 adds the test programs Debian packages only there (hipBLAS's, hipBLASLt's, RCCL's,
/// rocWMMA's, rocALUTION's, hipSPARSELt's).
fn chroot_programs(hip: Hip, target: &'static str) -> Vec<Program> {
    use Workaround::*;
    let v7 = hip == Hip::V7_2;
    let pick = |v6: &'static str, v7p: &'static str| if v7 { v7p } else { v6 };
    // rocblas-test and rocsparse-test cost minutes whatever their filter (a filter of argument
    // checks alone too): before any test they parse their data files (rocBLAS's 0.9 GB one
    // again and again, 16 million reads; `--gtest_list_tests` of rocSPARSE's takes two minutes
    // here). On 7.2.4 they run in the gfx90a column, as on 6.4.3; the
    // gfx942 column drives both libraries through their clients (and through hipBLAS, hipSOLVER,
    // MIOpen and hipSPARSE's tests).
    let data_heavy = !(v7 && target == "gfx942");
    let mut list = vec![
        rocminfo(hip, target),
        enumerator(hip, target),
        client_program("rocBLAS", hip, "rocblas", &["rocblas"]),
    ];
    if data_heavy {
        list.push(env(
            gtest_program(
                "rocBLAS",
                pick(
                    "/usr/libexec/rocm/librocblas4-tests/rocblas-test",
                    "/usr/libexec/rocm/librocblas5-tests/rocblas-test",
                ),
                ROCBLAS_FILTER,
                1200,
            ),
            // rocblas-test prints no per-test lines unless asked (its run-tests script asks).
            &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
        ));
    }
    list.push(client_program("hipBLAS", hip, "hipblas", &["hipblas"]));
    if v7 {
        list.extend(hip7_hipblas());
    }
    let hipblaslt_here = !(v7 && target == "gfx942");
    if hipblaslt_here {
        list.push(client_program(
            "hipBLASLt",
            hip,
            "hipblaslt",
            &["hipblaslt"],
        ));
        if v7 {
            list.extend(hip7_hipblaslt());
        }
    } else {
        // Debian's hipBLASLt 7.2.4 is built for gfx908, gfx90a and RDNA 3/4 only.
        list.push(no_code(
            "hipBLASLt",
            "/usr/lib/x86_64-linux-gnu/hipblaslt/library",
        ));
    }
    list.extend([
        client_program("rocFFT", hip, "rocfft", &["rocfft"]),
        with(
            numerical(
                args(
                    gtest_program(
                        "rocFFT",
                        "/usr/libexec/rocm/librocfft0-tests/rocfft-test",
                        "pow2_1D/accuracy_test.vs_fftw/complex_forward_len_1024_single_*:\
                         pow2_1D/accuracy_test.vs_fftw/real_forward_len_4096_single_*:\
                         pow2_2D/accuracy_test.vs_fftw/complex_forward_len_64_64_single_op_batch_1_*",
                        900,
                    ),
                    &[FFT_SEED, FFT_RUNTIME_FAILS].concat(),
                ),
                FFT_CHECKS,
            ),
            &[HostMemAvailable],
        ),
        client_program("hipFFT", hip, "hipfft", &["hipfft"]),
        with(
            numerical(
                args(
                    gtest_program(
                        "hipFFT",
                        "/usr/libexec/rocm/libhipfft0-tests/hipfft-test",
                        "pow2_1D/accuracy_test.vs_fftw/complex_forward_len_1024_single_*:\
                         pow2_1D/accuracy_test.vs_fftw/real_forward_len_1024_single_op_*",
                        600,
                    ),
                    &[FFT_SEED, FFT_RUNTIME_FAILS].concat(),
                ),
                FFT_CHECKS,
            ),
            &[HostMemAvailable],
        ),
        client_program("rocSOLVER", hip, "rocsolver", &["rocsolver", "rocblas"]),
        gtest_program(
            "rocSOLVER",
            "/usr/libexec/rocm/librocsolver0-tests/rocsolver-test",
            "checkin_lapack/GETRF.__float/*:checkin_lapack/POTRF.__float/*",
            900,
        ),
        client_program("hipSOLVER", hip, "hipsolver", &["hipsolver"]),
        env(
            gtest_program(
                "hipSOLVER",
                pick(
                    "/usr/libexec/rocm/libhipsolver0-tests/hipsolver-test",
                    "/usr/libexec/rocm/libhipsolver1-tests/hipsolver-test",
                ),
                "checkin_lapack/GETRF.__float/*:checkin_lapack/POTRF.__float/*",
                600,
            ),
            &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
        ),
        client_program("rocSPARSE", hip, "rocsparse", &["rocsparse"]),
    ]);
    if data_heavy {
        list.push(Program {
            near_checks_on_stderr: v7,
            ..gtest_program(
                "rocSPARSE",
                "/usr/libexec/rocm/librocsparse1-tests/rocsparse-test",
                "quick/csrmv.level2/f32_r_*",
                900,
            )
        });
    }
    list.extend([
        client_program("hipSPARSE", hip, "hipsparse", &["hipsparse"]),
        gtest_program(
            "hipSPARSE",
            pick(
                "/usr/libexec/rocm/libhipsparse1-tests/hipsparse-test",
                "/usr/libexec/rocm/libhipsparse4-tests/hipsparse-test",
            ),
            "csrmv/parameterized_csrmv.csrmv_float/*:\
             spmv_coo/parameterized_spmv_coo.spmv_coo_i32_float/*:csrmv_bad_arg.*",
            600,
        ),
    ]);
    if v7 {
        list.extend(hip7_hipsparselt(target));
    }
    list.extend([
        client_program("rocRAND", hip, "rocrand", &["rocrand"]),
        gtest_program(
            "rocRAND",
            "/usr/libexec/rocm/librocrand1-tests/test_rocrand_basic",
            "*",
            300,
        ),
        gtest_program(
            "rocRAND",
            "/usr/libexec/rocm/librocrand1-tests/test_rocrand_generate",
            "*",
            300,
        ),
        gtest_program(
            "rocRAND",
            "/usr/libexec/rocm/librocrand1-tests/test_rocrand_hipgraphs",
            "*",
            300,
        ),
        gtest_program(
            "rocRAND",
            "/usr/libexec/rocm/librocrand1-tests/test_rocrand_kernel_xorwow",
            "*",
            300,
        ),
        client_program("hipRAND", hip, "hiprand", &["hiprand"]),
        gtest_program(
            "hipRAND",
            "/usr/libexec/rocm/libhiprand1-tests/test_hiprand_api",
            "*",
            300,
        ),
        gtest_program(
            "hipRAND",
            "/usr/libexec/rocm/libhiprand1-tests/test_hiprand_kernel",
            "*",
            300,
        ),
        client_program("rocPRIM", hip, "rocprim", &[]),
        gtest_program(
            "rocPRIM",
            "/usr/libexec/rocm/librocprim-tests/test_device_reduce",
            LARGE_EXCLUDED,
            600,
        ),
        gtest_program(
            "rocPRIM",
            "/usr/libexec/rocm/librocprim-tests/test_device_radix_sort",
            LARGE_EXCLUDED,
            600,
        ),
        gtest_program(
            "rocPRIM",
            "/usr/libexec/rocm/librocprim-tests/test_hipgraph_algs",
            "*",
            300,
        ),
        client_program("hipCUB", hip, "hipcub", &[]),
        gtest_program(
            "hipCUB",
            "/usr/libexec/rocm/libhipcub-tests/test_hipcub_device_reduce",
            LARGE_EXCLUDED,
            600,
        ),
        gtest_program(
            "hipCUB",
            "/usr/libexec/rocm/libhipcub-tests/test_hipcub_device_scan",
            LARGE_EXCLUDED,
            600,
        ),
        client_program("rocThrust", hip, "rocthrust", &[]),
        thrust_program(
            "/usr/libexec/rocm/librocthrust-tests/test_thrust_sort",
            &[],
            300,
        ),
        thrust_program(
            "/usr/libexec/rocm/librocthrust-tests/test_thrust_reduce",
            &[],
            300,
        ),
        thrust_program(
            "/usr/libexec/rocm/librocthrust-tests/test_thrust_scan",
            &[],
            300,
        ),
    ]);
    // MIOpen 6.4.3's HIP kernels do not build as packaged; 7.2.4's do (through hipRTC), but its
    // assembly solvers lack their kernels.
    let miopen = if v7 {
        MiopenAsmKernels
    } else {
        MiopenHipKernels
    };
    // MIOpen 7.2.4 builds its HIP kernels, so each test computes its reference with a naive
    // convolution kernel compiled through hipRTC at run time (about 20 s a test here): on 7.2.4
    // the subset keeps the single-precision cases.
    let miopen_filter = if v7 {
        "Smoke/GPU_UnitTestConvSolverGemmFwd1x1_0_1Fwd_FP32.*:\
         Smoke/GPU_UnitTestConvSolverGemmBwd1x1_Stride1Bwd_FP32.*"
    } else {
        "Smoke/GPU_UnitTestConvSolverGemmFwd1x1_0_1Fwd_*:\
         Smoke/GPU_UnitTestConvSolverGemmBwd1x1_Stride1Bwd_*"
    };
    list.extend([
        with(
            client_program("MIOpen", hip, "miopen", &["MIOpen"]),
            &[miopen],
        ),
        with(
            numerical(
                gtest_program(
                    "MIOpen",
                    "/usr/libexec/rocm/libmiopen1-tests/miopen_gtest",
                    miopen_filter,
                    600,
                ),
                // The solver's output, and (7.2.4) the reference the naive_conv kernels compute
                // on the GPU, checked to be not all zeros: kernels never run, so both are.
                &["Gpu data is all zeros", "Reference data is all zeros"],
            ),
            &[miopen],
        ),
    ]);
    if v7 {
        list.extend(hip7_rccl(target));
        list.extend(hip7_rocwmma());
        list.extend(hip7_rocalution());
    }
    list
}

/// hipBLAS's packaged tests (Debian packages them from 7.2.4 on): single-precision GEMM without
/// transposes, GEMV, AXPY and DOT of the quick category (80 tests).
fn hip7_hipblas() -> Vec<Program> {
    vec![env(
        gtest_program(
            "hipBLAS",
            "/usr/libexec/rocm/libhipblas3-tests/hipblas-test",
            "_/gemm.blas3/quick_gemm_a_type_f32_r_transA_N_transB_N_*:\
             _/gemv.blas2/quick_gemv_a_type_f32_r_*:_/axpy.blas1/quick_axpy_a_type_f32_r_*:\
             _/dot.blas1/quick_dot_a_type_f32_r_*",
            600,
        ),
        &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
    )]
}

/// hipBLASLt's packaged tests (`libhipblaslt1-tests`, with its `-tests-data`, from 7.2.4 on):
/// single-precision matmuls without transposes of the quick category and the auxiliary API
/// (handles, layouts, attributes and their argument checks).
fn hip7_hipblaslt() -> Vec<Program> {
    vec![env(
        gtest_program(
            "hipBLASLt",
            "/usr/libexec/rocm/libhipblaslt1-tests/hipblaslt-test",
            "_/matmul_test.matmul/quick_matmul_one_f32_rf32_rf32_rf32_rf32_r_NN_*:_/aux_test.*",
            600,
        ),
        &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
    )]
}

/// hipSPARSELt's packaged tests (7.2.4; built for gfx942 and gfx950 only).
fn hip7_hipsparselt(target: &'static str) -> Vec<Program> {
    if target != "gfx942" {
        return vec![no_code(
            "hipSPARSELt",
            "/usr/lib/x86_64-linux-gnu/hipsparselt/library",
        )];
    }
    // The auxiliary API with its argument checks, and the smallest half-precision structured
    // SpMMs of the smoke category (which compress the sparse matrix first). Debian installs the
    // program in /usr/bin.
    vec![numerical(
        env(
            gtest_program(
                "hipSPARSELt",
                "/usr/bin/hipsparselt-test",
                "_/aux_test.*:\
                 _/spmm_test.spmm/smoke_spmm_strided_batched_smoke_f16_rf16_rf16_rf16_rf32_r_SB_avs_NN_8_8_16_*",
                600,
            ),
            &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
        ),
        // unit.hpp's comparison of each result element with the reference, relative to their
        // sizes.
        &["absDiff / (absA + absB + 1) < 0.01"],
    )]
}

/// RCCL's unit tests in one process over two and then four virtual GPUs of the column's target.
fn hip7_rccl(target: &'static str) -> Vec<Program> {
    [2usize, 4]
        .into_iter()
        .map(|n| {
            let mut p = with(
                env(
                    gtest_program(
                        "RCCL",
                        "/usr/libexec/rocm/librccl1-tests/rccl-UnitTests",
                        "AllReduce.OutOfPlace",
                        600,
                    ),
                    &[
                        // One process drives every GPU (1: single-process only), each test on
                        // exactly n GPUs, with one data type and one reduction.
                        ("UT_PROCESS_MASK", "1"),
                        ("UT_DATATYPES", "ncclFloat32"),
                        ("UT_REDOPS", "sum"),
                        ("NCCL_DEBUG", "WARN"),
                    ],
                ),
                &[Workaround::KfdTopology],
            );
            if target == "gfx942" {
                p.workarounds.push(Workaround::ScratchReclaim);
            }
            p.id = format!("rccl-UnitTests-{n}gpus");
            p.env.push(("UT_MIN_GPUS", if n == 2 { "2" } else { "4" }));
            p.env.push(("UT_MAX_GPUS", if n == 2 { "2" } else { "4" }));
            p.judge = Judge::Rccl;
            p.target = gpus(target, n);
            p
        })
        .collect()
}

/// rocWMMA's packaged tests (7.2.4): matrix fragments loaded and stored (`load_store_matrix_sync`,
/// 16x16 blocks of the first kernel parameters). Its kernel tests validate on the device (a
/// comparison kernel writes the verdict), so under the shim they report PASSED: their verdicts
/// say nothing here, the witness and the captures do.
fn hip7_rocwmma() -> Vec<Program> {
    vec![gtest_program(
        "rocWMMA",
        "/usr/libexec/rocm/librocwmma-tests/load_store_matrix_sync_test",
        "KernelTests/LoadStoreMatrixSyncATest16.RunKernel/1?",
        300,
    )]
}

/// rocALUTION's packaged tests (7.2.4): conjugate gradients in single precision and the argument
/// checks of local vectors and matrices.
fn hip7_rocalution() -> Vec<Program> {
    let mut p = gtest_program(
        "rocALUTION",
        "/usr/libexec/rocm/librocalution1-tests/rocalution-test",
        "cg/parameterized_cg.cg_float/*:local_vector_bad_args.*:local_matrix_bad_args.*",
        300,
    );
    p.fact = Some(Fact {
        printed: "Accelerator backend: None",
        note: "Debian builds rocALUTION without its HIP backend (librocalution_hip; the tests print \"Accelerator backend: None\"): its solvers run on the host and launch nothing",
    });
    vec![p]
}

// ---------------------------------------------------------------------------------------------
// Running and judging
// ---------------------------------------------------------------------------------------------

/// What one program's run showed.
#[derive(Debug, Default)]
struct Outcome {
    problems: Vec<String>,
    /// Kernel dispatches captured (user and blit), over every process of the run.
    dispatches: u64,
    user_dispatches: u64,
    blits: u64,
    launches: u64,
    processes: usize,
    elapsed: Duration,
    /// For gtest programs: tests run, passed, failed numerically.
    gtest: Option<(usize, usize, usize)>,
    /// For gtest programs: each test gtest reported as skipped, and the reason it printed.
    skips: Vec<(String, String)>,
    /// Kernel dispatches whose arguments were captured and checked.
    args_checked: u64,
    /// Pointer arguments checked (one finding each) over those dispatches.
    pointers_checked: u64,
    /// Of those, `pointer_null` (recorded, no problem).
    pointers_null: u64,
    /// The run directory (captures, witness logs, stdout.txt, stderr.txt).
    dir: PathBuf,
    /// For [`Exe::NoCodeFor`]: what the package's code-object directory holds.
    no_code: Option<String>,
    /// Packets of any type the shim rejected (without the witness; with it, a rejection is a
    /// problem of the comparison).
    rejected: u64,
    /// For rocrtst: the assertions that failed, each (place, message).
    assertions: Vec<(String, String)>,
}

/// A column of the matrix: a HIP version on one target (a program's first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Column {
    hip: Hip,
    target: &'static str,
}

/// The matrix's columns, in order: HIP 5.2.3 and 6.4.3 run on gfx90a, HIP 7.2.4 on gfx90a and
/// on gfx942 (where HIP 7 puts kernel arguments in device memory, see docs/DESIGN.md).
const COLUMNS: [Column; 4] = [
    Column {
        hip: Hip::V5_2,
        target: "gfx90a",
    },
    Column {
        hip: Hip::V6_4,
        target: "gfx90a",
    },
    Column {
        hip: Hip::V7_2,
        target: "gfx90a",
    },
    Column {
        hip: Hip::V7_2,
        target: "gfx942",
    },
];

impl Column {
    /// The run directory's level under `runs/`.
    fn dir(self) -> &'static str {
        self.target
    }
    /// The matrix header: the release, and the target where the release has several columns.
    fn title(self) -> String {
        if COLUMNS.iter().filter(|c| c.hip == self.hip).count() > 1 {
            format!("{} {}", self.hip.release(), self.target)
        } else {
            self.hip.release().to_string()
        }
    }
    /// The `library_tests!` spelling: `V7_2 "gfx942"`, or `V6_4` for a version's only column.
    fn spelled(self) -> String {
        let hip = format!("{:?}", self.hip);
        if COLUMNS.iter().filter(|c| c.hip == self.hip).count() > 1 {
            format!("{hip} \"{}\"", self.target)
        } else {
            hip
        }
    }
}

fn column_of(p: &Program) -> Column {
    Column {
        hip: p.hip,
        target: p.target.split(',').next().unwrap_or(p.target),
    }
}

fn outcome(p: &Program) -> Arc<Outcome> {
    static CACHE: Cache<Arc<Outcome>> = OnceLock::new();
    let key = format!("{}/{}/{}", p.hip.label(), column_of(p).target, p.id);
    once(&CACHE, key, || {
        let o = run_program(p);
        record_timing(p, &o);
        // A passing run's directory goes (the suite's captures would otherwise keep gigabytes
        // in the chroots after the run); a failing one stays for its problems to be read. The
        // witness self-test reads its own after the run, and it is small.
        if o.problems.is_empty() && p.library != "witness" {
            let _ = std::fs::remove_dir_all(&o.dir);
        }
        Arc::new(o)
    })
}

/// One line per program run, appended to `target/tmp/realworld/runs.tsv` (a measurement for
/// the docs, never asserted on): HIP version, targets, program, seconds, processes, launches,
/// dispatches, verdict.
fn record_timing(p: &Program, o: &Outcome) {
    use std::io::Write;
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("realworld/runs.tsv");
    let _ = std::fs::create_dir_all(path.parent().unwrap());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(
            f,
            "{}\t{}\t{}\t{}\t{:.1}\t{}\t{}\t{}\t{}",
            std::process::id(),
            p.hip.label(),
            p.target,
            p.id,
            o.elapsed.as_secs_f64(),
            o.processes,
            o.launches,
            o.dispatches,
            if o.problems.is_empty() {
                "ok"
            } else {
                "FAILED"
            }
        );
    }
}

fn run_program(p: &Program) -> Outcome {
    if let Exe::NoCodeFor { dir } = &p.exe {
        return no_code_for(p, dir);
    }
    let site = site(p.hip);
    let mut args = p.args.clone();
    let exe = match &p.exe {
        Exe::Client { src, libs } => client(p.hip, src, libs, &[]).seen,
        Exe::WitnessSelftest => {
            let (exe, module) = witness_selftest(p.hip);
            args.insert(0, module.seen);
            exe.seen
        }
        Exe::Installed(path) => {
            assert!(
                host_path(p.hip, path).exists(),
                "{} ({}) is not installed: {}",
                path,
                p.hip.label(),
                install_hint(p.hip)
            );
            path.to_string()
        }
        Exe::NoCodeFor { .. } => unreachable!("answered above"),
    };
    let dir = site.base.join("runs").join(column_of(p).dir()).join(&p.id);
    let _ = std::fs::remove_dir_all(&dir.host);
    let home = dir.join("home");
    std::fs::create_dir_all(&home.host).unwrap();
    let mut env = neutral_env(&home.seen);
    env.extend(
        [
            ("LD_PRELOAD", {
                let mut preload = Vec::new();
                if p.workarounds.contains(&Workaround::HostMemAvailable) {
                    preload.push(site.memavailable.seen.as_str());
                }
                if p.witness {
                    preload.push(site.witness.seen.as_str());
                }
                preload.push(site.shim.seen.as_str());
                preload.join(":")
            }),
            ("SOFTGPU_CAPTURE", format!("{}/capture-%p.sgcap", dir.seen)),
            (
                "SOFTGPU_WITNESS_LOG",
                format!("{}/witness-%p.jsonl", dir.seen),
            ),
            ("SOFTGPU_MODE", "virtual".into()),
            ("SOFTGPU_TARGET", p.target.into()),
            ("SOFTGPU_LOG", "warn".into()),
            ("SOFTGPU_SUMMARY", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v)),
    );
    for (k, v) in p
        .env
        .iter()
        .chain(p.workarounds.iter().flat_map(|w| w.env()))
    {
        env.retain(|(key, _)| key != k);
        env.push((k.to_string(), v.to_string()));
    }
    let mut argv = vec![exe];
    argv.extend(args);
    let stdout_path = dir.host.join("stdout.txt");
    let stderr_path = dir.host.join("stderr.txt");
    let stand_ins = if p.workarounds.contains(&Workaround::KfdTopology) {
        StandIns::KfdTopology(p.target.split(',').count())
    } else if p.workarounds.contains(&Workaround::AmdgpuStandIns) {
        StandIns::Amdgpu
    } else {
        StandIns::None
    };
    let mut cmd = command(p.hip, &dir, &env, &argv, stand_ins);
    cmd.stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::fs::File::create(&stderr_path).unwrap());
    let ended = run_with_deadline(&mut cmd, p.deadline)
        .unwrap_or_else(|e| panic!("cannot start {} ({}): {e}", p.id, p.hip.label()));
    // Lossy: test programs print raw bytes (Thrust prints `signed char` values as they are).
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let stdout = read(&stdout_path);
    let stderr = read(&stderr_path);

    let mut o = Outcome {
        elapsed: ended.elapsed,
        dir: dir.host.clone(),
        ..Outcome::default()
    };
    match ended.status {
        None => o.problems.push(format!(
            "hung: still running after {} s, killed",
            p.deadline.as_secs()
        )),
        Some(status) => judge(p, status, &stdout, &stderr, &mut o),
    }
    if !ended.stragglers.is_empty() {
        o.problems.push(format!(
            "processes {:?} of its group outlived it",
            ended.stragglers
        ));
    }
    for line in stderr.lines().chain(stdout.lines()) {
        if SHIM_LOG_MARKS.iter().any(|m| line.contains(m)) && !expected_rejection(p, line) {
            o.problems.push(format!("the shim logged: {}", line.trim()));
        }
    }
    compare_processes(&dir.host, p.witness, &mut o);
    if !o.problems.is_empty() {
        o.problems.push(format!(
            "(run directory {}; stdout.txt and stderr.txt are there)",
            dir.host.display()
        ));
    }
    o
}

/// [`Exe::NoCodeFor`]: `dir` (in the program's HIP's chroot) holds files named for another
/// target of the suite and none named for the program's; the outcome's note says how many.
fn no_code_for(p: &Program, dir: &str) -> Outcome {
    let mut o = Outcome::default();
    let host = host_path(p.hip, dir);
    let target = column_of(p).target;
    let names: Vec<String> = match std::fs::read_dir(&host) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) => {
            o.problems.push(format!(
                "cannot list {} ({e}): {}",
                host.display(),
                install_hint(p.hip)
            ));
            return o;
        }
    };
    // gfx90a must not count as gfx90: names end a target with '-', '.' or '_'.
    let named = |t: &str| {
        names
            .iter()
            .filter(|n| {
                n.match_indices(t).any(|(i, _)| {
                    !n[i + t.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
                })
            })
            .count()
    };
    let mine = named(target);
    let others: Vec<(&str, usize)> = ["gfx90a", "gfx942"]
        .into_iter()
        .filter(|t| *t != target)
        .map(|t| (t, named(t)))
        .collect();
    if mine > 0 {
        o.problems.push(format!(
            "{dir} now holds {mine} files for {target}: the package was built for {target}, so \
             run its programs in this column instead of recording that it has no code for it"
        ));
    }
    if others.iter().all(|(_, n)| *n == 0) {
        o.problems.push(format!(
            "{dir} holds no file for {others:?} either: it is not where the library keeps its \
             code objects, so it shows nothing about {target}"
        ));
    }
    o.no_code = Some(format!(
        "{dir} holds {} and none for {target}",
        others
            .iter()
            .map(|(t, n)| format!("{n} files for {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    o
}

/// The program's own verdict, by its kind.
fn judge(
    p: &Program,
    status: std::process::ExitStatus,
    stdout: &str,
    stderr: &str,
    o: &mut Outcome,
) {
    if let Some(f) = p.fact {
        if !stdout.lines().any(|l| l.trim() == f.printed) {
            o.problems.push(format!(
                "the program no longer prints {:?}, which shows the matrix's note: {}",
                f.printed, f.note
            ));
        }
    }
    let rw_error = stdout.lines().find(|l| l.starts_with("rw: error="));
    match p.judge {
        Judge::Client => {
            if let Some(e) = rw_error {
                o.problems.push(format!("the client reports {e}"));
            }
            if !status.success() {
                o.problems.push(format!("exited with {status}"));
            }
            if !stdout.lines().any(|l| l == "rw: done=1") {
                o.problems.push("never printed rw: done=1".into());
            }
        }
        Judge::Gtest { .. } | Judge::Rccl => {
            let r = gtest::parse(stdout);
            let marks = match p.judge {
                Judge::Gtest { numerical } => numerical,
                _ => &[],
            };
            let rccl = p.judge == Judge::Rccl;
            // rocSPARSE 7.2.4's near_check prints each comparison that fails on stderr and then
            // fails `ASSERT_TRUE(passed)`: its verdicts are numerical as far as stderr shows
            // their comparisons, one for each.
            let near_verdicts = r
                .failed
                .iter()
                .flat_map(|f| &f.blocks)
                .filter(|b| gtest::is_rocsparse_near_verdict(b))
                .count();
            let near_shown = gtest::rocsparse_near_failures(stderr);
            if p.near_checks_on_stderr && near_verdicts > near_shown {
                o.problems.push(format!(
                    "{near_verdicts} of rocSPARSE's near_check verdicts failed, but stderr shows \
                     only {near_shown} failed comparisons (ASSERT_NEAR(a, b) failed: ...)"
                ));
            }
            let is_numerical = |b: &str| {
                if rccl {
                    gtest::is_rccl_validation(b)
                } else {
                    gtest::is_numerical(b)
                        || gtest::names_result_check(b, marks)
                        || p.near_checks_on_stderr
                            && near_verdicts <= near_shown
                            && gtest::is_rocsparse_near_verdict(b)
                }
            };
            let test_is_numerical = |f: &gtest::Failed| {
                if rccl {
                    gtest::is_rccl_result_check(&f.blocks)
                } else {
                    !f.blocks.is_empty()
                        && gtest::judged_blocks(&f.blocks)
                            .iter()
                            .all(|b| is_numerical(b))
                }
            };
            let numerical = r.failed.iter().filter(|f| test_is_numerical(f)).count();
            if rccl {
                for w in gtest::rccl_warnings(stdout) {
                    o.problems.push(format!("RCCL warned: {w}"));
                }
            }
            o.gtest = Some((r.ran, r.passed, numerical));
            o.skips = r.skips.clone();
            if r.ran > 0 && r.skips.len() == r.ran {
                o.problems.push(format!(
                    "every one of the {} selected tests skipped, so the run tested nothing; \
                     first reason: {}",
                    r.ran,
                    r.skips.first().map_or("", |(_, why)| why.as_str())
                ));
            }
            // rocFFT's tests skip a test (and count it in this line) when a HIP call fails,
            // unless told `--skip_runtime_fails false` (see FFT_RUNTIME_FAILS): a HIP failure
            // under the shim must not pass as a skip.
            if let Some(n) = stdout.lines().find_map(|l| {
                l.strip_prefix("Number of runtime issues: ")
                    .and_then(|n| n.trim().parse::<u64>().ok())
            }) {
                if n > 0 {
                    o.problems.push(format!(
                        "the program counted {n} runtime issues (HIP calls that failed); \
                         {} tests skipped",
                        r.skips.len()
                    ));
                }
            }
            if r.ran == 0 {
                o.problems.push("the gtest filter selected no test".into());
            }
            if let Some(t) = &r.unfinished {
                o.problems
                    .push(format!("output stops inside test {t} ({status})"));
            } else if !r.complete {
                o.problems
                    .push(format!("never printed gtest's final summary ({status})"));
            }
            for f in &r.failed {
                if f.blocks.is_empty() {
                    o.problems
                        .push(format!("test {} failed without a failure message", f.name));
                }
                let mut odd = 0;
                for b in gtest::judged_blocks(&f.blocks)
                    .into_iter()
                    .filter(|b| !is_numerical(b))
                {
                    odd += 1;
                    o.problems.push(format!(
                        "test {} failed on something other than a numerical comparison:\n{}",
                        f.name,
                        b.trim_end()
                    ));
                }
                if odd == 0 && !f.blocks.is_empty() && !test_is_numerical(f) {
                    o.problems.push(format!(
                        "test {} failed with RCCL's lines around a result check but without the \
                         comparison itself (Expected output: ... Actual output: ...)",
                        f.name
                    ));
                }
            }
            // gtest exits 1 when a test failed; a signal or any other status is a crash.
            let code = status.code();
            if !(code == Some(0) || code == Some(1) && !r.failed.is_empty()) {
                o.problems.push(format!("exited with {status}"));
            }
        }
        Judge::Thrust => {
            let r = gtest::parse_thrust(stdout);
            o.gtest = Some((r.ran, r.passed, r.failures.len()));
            match r.totals {
                None => o
                    .problems
                    .push(format!("never printed Thrust's Totals line ({status})")),
                Some((_, _, errors, _)) if errors > 0 => {
                    o.problems.push(format!("Thrust reports {errors} errors"))
                }
                Some(_) => {}
            }
            for (name, block) in &r.errors {
                o.problems.push(format!(
                    "test {name} ended in an error:\n{}",
                    block.trim_end()
                ));
            }
            for (name, block) in r
                .failures
                .iter()
                .filter(|(_, b)| !gtest::is_thrust_value_check(b))
            {
                o.problems.push(format!(
                    "test {name} failed on something other than a comparison of values:\n{}",
                    block.trim_end()
                ));
            }
            let code = status.code();
            if !(code == Some(0) || code == Some(1) && !r.failures.is_empty()) {
                o.problems.push(format!("exited with {status}"));
            }
        }
        Judge::Rocminfo => {
            if !status.success() {
                o.problems.push(format!("exited with {status}"));
            }
            if stdout.contains("hsa api call failure") {
                o.problems.push(format!(
                    "an HSA call failed: {}",
                    stdout
                        .lines()
                        .skip_while(|l| !l.contains("hsa api call failure"))
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" / ")
                ));
            }
            let agents = stdout.matches("\nAgent ").count();
            let cpu = stdout
                .lines()
                .any(|l| l.trim_start().starts_with("Device Type:") && l.contains("CPU"));
            let gpus: Vec<&str> = stdout
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("Name:"))
                .map(str::trim)
                .filter(|n| n.starts_with("gfx"))
                .collect();
            let want: Vec<&str> = p.target.split(',').collect();
            if agents != want.len() + 1 || !cpu || gpus != want {
                o.problems.push(format!(
                    "expected the CPU agent and GPU agents {want:?}: {agents} agents listed, CPU {cpu}, GPUs {gpus:?}"
                ));
            }
            if !stdout.contains("*** Done ***") {
                o.problems.push("never printed *** Done ***".into());
            }
        }
        Judge::AgentEnumerator => {
            if !status.success() {
                o.problems.push(format!("exited with {status}"));
            }
            // 5.2.3 lists the CPU agent too, as gfx000.
            let listed: Vec<&str> = stdout
                .lines()
                .map(str::trim)
                .filter(|l| *l != "gfx000")
                .collect();
            let want: Vec<&str> = p.target.split(',').collect();
            if listed != want {
                o.problems.push(format!(
                    "listed {listed:?}, expected {want:?} (the targets, one a line)"
                ));
            }
        }
        Judge::NoCode => {}
        Judge::Rocrtst { test } => judge_rocrtst(test, status, stdout, o),
    }
}

/// For every process that left a capture or a witness log: the comparison (without the
/// witness, only that every capture reads back complete).
fn compare_processes(dir: &Path, with_witness: bool, o: &mut Outcome) {
    let mut pids: BTreeMap<u32, (Option<PathBuf>, Option<PathBuf>)> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = |prefix: &str, suffix: &str| {
            name.strip_prefix(prefix)?
                .strip_suffix(suffix)?
                .parse::<u32>()
                .ok()
        };
        if let Some(pid) = pid("capture-", ".sgcap") {
            pids.entry(pid).or_default().0 = Some(entry.path());
        } else if let Some(pid) = pid("witness-", ".jsonl") {
            pids.entry(pid).or_default().1 = Some(entry.path());
        }
    }
    o.processes = pids.len();
    for (pid, (capture, witness)) in pids {
        let events = match &witness {
            None => Vec::new(),
            Some(w) => {
                match compare::parse_witness(&std::fs::read_to_string(w).unwrap_or_default()) {
                    Ok(e) => e,
                    Err(e) => {
                        o.problems.push(format!("pid {pid}: {e}"));
                        continue;
                    }
                }
            }
        };
        let records = match &capture {
            None => {
                if events
                    .iter()
                    .any(|e| matches!(e, compare::Event::Launch(_)))
                {
                    o.problems.push(format!(
                        "pid {pid}: the witness recorded launches but there is no capture"
                    ));
                }
                Vec::new()
            }
            Some(c) => match inspect(c) {
                Ok(r) => r,
                Err(e) => {
                    o.problems.push(format!("pid {pid}: {e}"));
                    continue;
                }
            },
        };
        let (dispatches, mut problems) = compare::dispatches(&records);
        if !with_witness {
            o.rejected += records.iter().filter(|r| r["status"] == "rejected").count() as u64;
            o.dispatches += dispatches.len() as u64;
            for p in argument_findings(&records, o) {
                o.problems.push(format!("pid {pid}: {p}"));
            }
            continue;
        }
        problems.extend(argument_findings(&records, o));
        let v = compare::compare(&events, &dispatches);
        problems.extend(v.problems.iter().cloned());
        for p in problems.iter().take(40) {
            o.problems.push(format!("pid {pid}: {p}"));
        }
        if problems.len() > 40 {
            o.problems
                .push(format!("pid {pid}: ... and {} more", problems.len() - 40));
        }
        o.dispatches += v.dispatches();
        o.user_dispatches += v.user_dispatches;
        o.blits += v.blit_total();
        o.launches += v.launches;
    }
}

/// The kernel-argument checks of one capture's records (argument capture is on by default,
/// `SOFTGPU_KERNARGS`): counted into `o`, and every finding that reports a problem (a pointer
/// finding other than `pointer_in_allocation` and `pointer_null`, a hidden-argument mismatch;
/// null is recorded but legal: these libraries pass null for optional buffers) returned as a
/// problem, as at most one line per (kernel, code) with its count and first call. These are
/// libraries that work on real GPUs, so a finding here is a false one until shown otherwise.
fn argument_findings(records: &[serde_json::Value], o: &mut Outcome) -> Vec<String> {
    let mut found: BTreeMap<(String, String), (u64, String)> = BTreeMap::new();
    let mut dispatches = 0u64;
    let mut checked = 0u64;
    for r in records.iter().filter(|r| r["type"] == "kernel_dispatch") {
        // A rejected dispatch that names no kernel (rocrtstNeg's null kernel object) has no
        // argument layout to check; any other rejection is a problem of its own.
        if r["status"] == "rejected" && r["arg_findings"].as_array().is_none() {
            continue;
        }
        dispatches += 1;
        let Some(fs) = r["arg_findings"].as_array() else {
            continue;
        };
        checked += 1;
        o.pointers_checked += fs.len() as u64;
        o.pointers_null += fs.iter().filter(|f| f["code"] == "pointer_null").count() as u64;
        let name = r["kernel_name"].as_str().unwrap_or("?").to_string();
        let codes = fs
            .iter()
            .filter_map(|f| f["code"].as_str())
            .filter(|c| *c != "pointer_in_allocation" && *c != "pointer_null")
            .chain(
                r["hidden_mismatches"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m["code"].as_str()),
            );
        for code in codes {
            let e = found
                .entry((name.clone(), code.to_string()))
                .or_insert_with(|| (0, r["call"].as_str().unwrap_or("").to_string()));
            e.0 += 1;
        }
    }
    o.args_checked += checked;
    let mut problems: Vec<String> = found
        .into_iter()
        .map(|((name, code), (n, call))| {
            format!("{n} {code} finding(s) in dispatches of {name}, e.g. {call}")
        })
        .collect();
    if dispatches > 0 && checked == 0 {
        problems.push(format!(
            "none of {dispatches} dispatches had its arguments checked (argument capture off?)"
        ));
    }
    problems
}

/// `softgpu inspect --format jsonl`: the records, or why they cannot be read (an incomplete
/// capture included).
fn inspect(capture: &Path) -> Result<Vec<serde_json::Value>, String> {
    let out = Command::new(cli())
        .arg("inspect")
        .arg(capture)
        .args(["--format", "jsonl"])
        .output()
        .map_err(|e| format!("cannot run softgpu inspect: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "softgpu inspect {} exited with {}: {}",
            capture.display(),
            out.status,
            err.trim()
        ));
    }
    if !err.trim().is_empty() {
        return Err(format!(
            "softgpu inspect warned about {}: {}",
            capture.display(),
            err.trim()
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|e| format!("inspect JSONL is not JSON ({e}): {l}"))
        })
        .collect()
}

/// Run every program of `library` in `column` and fail with everything that went wrong.
fn check_library(library: &str, column: Column) {
    let list: Vec<&Program> = programs()
        .iter()
        .filter(|p| p.library == library && column_of(p) == column)
        .collect();
    assert!(
        !list.is_empty(),
        "no program for {library} on HIP {}",
        column.title()
    );
    let mut report = String::new();
    for p in list {
        let o = outcome(p);
        let place = format!("{}, {}", p.hip.label(), p.target);
        if let Some(fact) = &o.no_code {
            eprintln!(
                "realworld: {} ({place}): not run, no code for the target: {fact}{}",
                p.library,
                if o.problems.is_empty() {
                    ""
                } else {
                    ": FAILED"
                }
            );
        } else {
            eprintln!(
                "realworld: {} {} ({place}): {} s, {} processes, {} launches, {} dispatches ({} user, {} blit), arguments checked on {} ({} pointers, {} null){}{}",
                p.library,
                p.id,
                o.elapsed.as_secs(),
                o.processes,
                o.launches,
                o.dispatches,
                o.user_dispatches,
                o.blits,
                o.args_checked,
                o.pointers_checked,
                o.pointers_null,
                o.gtest
                    .map(|(ran, passed, num)| format!(
                        ", gtest {ran} run, {passed} passed, {num} failed numerically, {} skipped",
                        o.skips.len()
                    ))
                    .unwrap_or_default(),
                if o.problems.is_empty() {
                    ""
                } else {
                    ": FAILED"
                }
            );
        }
        for (test, why) in &o.skips {
            eprintln!("  skipped {test}: {why}");
        }
        if !o.problems.is_empty() {
            report.push_str(&format!("{} ({place}):\n", p.id));
            for problem in &o.problems {
                report.push_str("  - ");
                report.push_str(&problem.replace('\n', "\n    "));
                report.push('\n');
            }
        }
    }
    assert!(
        report.is_empty(),
        "{library} on HIP {}:\n{report}",
        column.title()
    );
}

// ---------------------------------------------------------------------------------------------
// rocrtst: ROCr's own test suite
// ---------------------------------------------------------------------------------------------

/// A shim warning that is the rejection of a packet the program's rocrtst test submits invalid
/// on purpose (`rejected: <reasons>;` with every reason one its case names).
fn expected_rejection(p: &Program, line: &str) -> bool {
    let Judge::Rocrtst { test } = p.judge else {
        return false;
    };
    let Some(case) = rocrtst::case(test) else {
        return false;
    };
    let Some(rest) = line.split(") rejected: ").nth(1) else {
        return false;
    };
    let reasons = rest.split(';').next().unwrap_or("");
    !case.rejects.is_empty()
        && reasons
            .split(',')
            .map(str::trim)
            .all(|r| case.rejects.contains(&r))
}

/// One rocrtst test, run alone on `target` (see `tests/realworld/rocrtst.rs`).
fn rocrtst_program(case: &'static rocrtst::Case, target: &'static str) -> Program {
    let args = vec![
        format!("--gtest_filter={}", case.name),
        "--gtest_color=no".into(),
    ];
    Program {
        id: format!("rocrtst-{}", case.name),
        library: "rocrtst",
        hip: Hip::V7_2,
        target,
        exe: Exe::Installed(rocrtst::BINARY),
        args,
        judge: Judge::Rocrtst { test: case.name },
        env: vec![("ROCRTST_KERNELS_PATH", rocrtst::KERNELS)],
        workarounds: vec![Workaround::AmdSmiSoname],
        deadline: Duration::from_secs(case.deadline_s),
        // rocrtst calls ROCr's C API directly: no HIP launch for a witness to see. Every
        // capture must still read back complete.
        witness: false,
        fact: None,
        near_checks_on_stderr: false,
    }
}

/// rocrtst's verdict on one test, against its case.
fn judge_rocrtst(test: &str, status: std::process::ExitStatus, stdout: &str, o: &mut Outcome) {
    let Some(case) = rocrtst::case(test) else {
        o.problems.push(format!("{test} is not in rocrtst::CASES"));
        return;
    };
    let r = gtest::parse(stdout);
    o.gtest = Some((r.ran, r.passed, 0));
    o.skips = rocrtst::skip_notes(stdout)
        .into_iter()
        .map(|n| (test.to_string(), n))
        .chain(r.skips.iter().cloned())
        .collect();
    if r.ran != 1 {
        o.problems
            .push(format!("the filter {test} ran {} tests, not 1", r.ran));
    }
    if let Some(t) = &r.unfinished {
        o.problems
            .push(format!("output stops inside test {t} ({status})"));
    } else if !r.complete {
        o.problems
            .push(format!("never printed gtest's final summary ({status})"));
    }
    for f in &r.failed {
        if f.blocks.is_empty() {
            o.problems
                .push(format!("{} failed without a failure message", f.name));
        }
        for b in &f.blocks {
            let a = rocrtst::assertion(b);
            if !o.assertions.contains(&a) {
                o.assertions.push(a);
            }
        }
    }
    let shown = |a: &(String, String)| format!("{}: {}", a.0, a.1);
    match case.expect {
        rocrtst::Expect::Pass => {
            for a in &o.assertions {
                o.problems.push(format!("failed at {}", shown(a)));
            }
        }
        rocrtst::Expect::KernelValues { .. } | rocrtst::Expect::Fails { .. } => {
            let (kernel, assertions) = match case.expect {
                rocrtst::Expect::KernelValues { kernel, assertions } => (kernel, assertions),
                rocrtst::Expect::Fails { why, assertions } => (why, assertions),
                rocrtst::Expect::Pass => unreachable!(),
            };
            if r.failed.is_empty() && r.ran == 1 && r.complete {
                o.problems.push(format!(
                    "passes, but it was expected to fail ({kernel}): find out what changed, \
                     and update its case in tests/realworld/rocrtst.rs"
                ));
            }
            for a in &o.assertions {
                if !assertions.iter().any(|e| e.at == a.0 && e.message == a.1) {
                    o.problems.push(format!(
                        "failed at {}, which is not one of its checks of a kernel's values",
                        shown(a)
                    ));
                }
            }
            for e in assertions {
                if !r.failed.is_empty()
                    && !o.assertions.iter().any(|a| e.at == a.0 && e.message == a.1)
                {
                    o.problems.push(format!(
                        "no longer fails at {}: {} (a check of {kernel})",
                        e.at, e.message
                    ));
                }
            }
        }
    }
    let code = status.code();
    if !(code == Some(0) || code == Some(1) && !r.failed.is_empty()) {
        o.problems.push(format!("exited with {status}"));
    }
}

/// The enabled tests `rocrtst64 --gtest_list_tests` lists (once per process).
fn rocrtst_listed() -> Result<Vec<String>, String> {
    static LISTED: OnceLock<Result<Vec<String>, String>> = OnceLock::new();
    LISTED
        .get_or_init(|| {
            let hip = Hip::V7_2;
            if !host_path(hip, rocrtst::BINARY).exists() {
                return Err(format!(
                    "{} is not unpacked in the ROCm 7 chroot: {}",
                    rocrtst::BINARY,
                    install_hint(hip)
                ));
            }
            let site = site(hip);
            let mut env = neutral_env("/root");
            env.extend(
                Workaround::AmdSmiSoname
                    .env()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
            let out = command(
                hip,
                &site.base,
                &env,
                &[rocrtst::BINARY.to_string(), "--gtest_list_tests".into()],
                StandIns::None,
            )
            .output()
            .map_err(|e| format!("cannot run {}: {e}", rocrtst::BINARY))?;
            if !out.status.success() {
                return Err(format!(
                    "{} --gtest_list_tests failed ({}):\n{}{}",
                    rocrtst::BINARY,
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(rocrtst::listed(&String::from_utf8_lossy(&out.stdout)))
        })
        .clone()
}

/// Every rocrtst test on `target`, each in its own process, as its case expects; the list of
/// tests must be the package's.
fn check_rocrtst(target: &'static str) {
    let listed = rocrtst_listed().unwrap_or_else(|e| panic!("{e}"));
    let mut report = String::new();
    for t in listed.iter().filter(|t| rocrtst::case(t).is_none()) {
        report.push_str(&format!(
            "  - rocrtst64 lists {t}, which rocrtst::CASES does not know: run it, classify it \
             and add it\n"
        ));
    }
    for c in rocrtst::CASES
        .iter()
        .filter(|c| !listed.contains(&c.name.to_string()))
    {
        report.push_str(&format!(
            "  - rocrtst::CASES has {}, which rocrtst64 no longer lists\n",
            c.name
        ));
    }
    let mut total = Duration::ZERO;
    let mut times: Vec<(Duration, &str)> = Vec::new();
    for case in rocrtst::CASES
        .iter()
        .filter(|c| listed.contains(&c.name.to_string()))
    {
        if case.not_run.0.contains(&target) {
            eprintln!(
                "realworld: rocrtst {} ({target}): not run: {}",
                case.name, case.not_run.1
            );
            continue;
        }
        let o = rocrtst_outcome(case, target);
        total += o.elapsed;
        times.push((o.elapsed, case.name));
        eprintln!(
            "realworld: rocrtst {} ({target}): {:.1} s, {} dispatches, {} rejected{}{}",
            case.name,
            o.elapsed.as_secs_f64(),
            o.dispatches,
            o.rejected,
            o.assertions
                .iter()
                .map(|(at, m)| format!("; fails at {at}: {m}"))
                .collect::<String>(),
            if o.problems.is_empty() {
                ""
            } else {
                ": FAILED"
            }
        );
        for (_, why) in &o.skips {
            eprintln!("  rocrtst skipped part of {}: {why}", case.name);
        }
        if !o.problems.is_empty() {
            report.push_str(&format!("{} ({target}):\n", case.name));
            for problem in &o.problems {
                report.push_str("  - ");
                report.push_str(&problem.replace('\n', "\n    "));
                report.push('\n');
            }
        }
    }
    times.sort();
    eprintln!(
        "realworld: rocrtst on {target}: {} tests in {:.0} s; slowest: {}",
        times.len(),
        total.as_secs_f64(),
        times
            .iter()
            .rev()
            .take(5)
            .map(|(d, n)| format!("{n} {:.1} s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(report.is_empty(), "rocrtst on {target}:\n{report}");
}

/// The outcome of one rocrtst test on `target` (once per process), with the rejection check:
/// packets rejected exactly when the case submits invalid ones.
fn rocrtst_outcome(case: &'static rocrtst::Case, target: &'static str) -> Arc<Outcome> {
    static PROGRAMS: Mutex<Vec<&'static Program>> = Mutex::new(Vec::new());
    let p: &'static Program = {
        let mut made = PROGRAMS.lock().unwrap();
        let id = format!("rocrtst-{}", case.name);
        match made.iter().find(|p| p.id == id && p.target == target) {
            Some(p) => p,
            None => {
                let p: &'static Program = Box::leak(Box::new(rocrtst_program(case, target)));
                made.push(p);
                p
            }
        }
    };
    static CHECKED: Cache<Arc<Outcome>> = OnceLock::new();
    once(&CHECKED, format!("{target}/{}", case.name), || {
        let o = outcome(p);
        let mut extra = Vec::new();
        if case.rejects.is_empty() && o.rejected > 0 {
            extra.push(format!(
                "the shim rejected {} packets of a test that submits none invalid",
                o.rejected
            ));
        }
        if !case.rejects.is_empty() && o.rejected == 0 {
            extra.push(format!(
                "the test submits invalid packets ({}) but the shim rejected none",
                case.rejects.join(", ")
            ));
        }
        // A warning the test provokes on purpose (its case names it) is no problem.
        let kept: Vec<String> = o
            .problems
            .iter()
            .filter(|p| {
                case.logs.is_empty()
                    || !(p.starts_with("the shim logged:") && p.contains(case.logs))
            })
            .cloned()
            .collect();
        let only_the_directory = kept.iter().all(|p| p.starts_with("(run directory "));
        let kept = if only_the_directory && extra.is_empty() {
            Vec::new()
        } else {
            kept
        };
        if extra.is_empty() && kept.len() == o.problems.len() {
            return o;
        }
        Arc::new(Outcome {
            problems: kept.into_iter().chain(extra).collect(),
            dispatches: o.dispatches,
            rejected: o.rejected,
            elapsed: o.elapsed,
            gtest: o.gtest,
            skips: o.skips.clone(),
            assertions: o.assertions.clone(),
            dir: o.dir.clone(),
            ..Outcome::default()
        })
    })
}

/// The README's rocrtst table: a row per test, a column per target, each cell what the test
/// did there (`passes`, `kernel values` with the assertions, or `**fails**`).
fn rocrtst_matrix() -> String {
    let mut s = String::from("| test |");
    for t in rocrtst::TARGETS {
        s.push_str(&format!(" 7.2.4 {t} |"));
    }
    s.push_str(" notes |\n|");
    for _ in 0..rocrtst::TARGETS.len() + 2 {
        s.push_str(" --- |");
    }
    s.push('\n');
    let listed = rocrtst_listed().unwrap_or_else(|e| panic!("{e}"));
    for case in rocrtst::CASES
        .iter()
        .filter(|c| listed.contains(&c.name.to_string()))
    {
        let mut notes: Vec<String> = Vec::new();
        s.push_str(&format!("| `{}` |", case.name));
        for t in rocrtst::TARGETS {
            if case.not_run.0.contains(&t) {
                s.push_str(" not run |");
                let n = format!(
                    "not run on {}: {}",
                    case.not_run.0.join(", "),
                    case.not_run.1
                );
                if !notes.contains(&n) {
                    notes.push(n);
                }
                continue;
            }
            let o = rocrtst_outcome(case, t);
            let cell = if !o.problems.is_empty() {
                "**fails**".to_string()
            } else if o.assertions.is_empty() {
                "passes".to_string()
            } else if matches!(case.expect, rocrtst::Expect::Fails { .. }) {
                format!(
                    "**fails**: {}",
                    o.assertions
                        .iter()
                        .map(|(at, _)| format!("`{}`", at.rsplit('/').next().unwrap_or(at)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                format!(
                    "kernel values: {}",
                    o.assertions
                        .iter()
                        .map(|(at, _)| format!("`{}`", at.rsplit('/').next().unwrap_or(at)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            s.push_str(&format!(" {cell} |"));
            // What rocrtst skipped in a failing run depends on how far it got: only a
            // passing run's skips are noted.
            if !o.problems.is_empty() {
                continue;
            }
            for (_, why) in &o.skips {
                let n = format!("rocrtst: \"{why}\"");
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        match case.expect {
            rocrtst::Expect::KernelValues { kernel, .. } => {
                notes.insert(0, format!("checks {kernel}"))
            }
            rocrtst::Expect::Fails { why, .. } => {
                notes.insert(0, format!("not a kernel's value: {why}"))
            }
            rocrtst::Expect::Pass => {}
        }
        if !case.rejects.is_empty() {
            notes.push(format!(
                "the shim rejects its invalid packets ({})",
                case.rejects.join(", ")
            ));
        }
        s.push_str(&format!(
            " {} |\n",
            if notes.is_empty() {
                "-".to_string()
            } else {
                notes.join("; ")
            }
        ));
    }
    s
}

#[test]
fn rocrtst_on_hip_7_2_gfx90a_passes_or_fails_only_on_values_a_kernel_computes() {
    check_rocrtst("gfx90a");
}

#[test]
fn rocrtst_on_hip_7_2_gfx942_passes_or_fails_only_on_values_a_kernel_computes() {
    check_rocrtst("gfx942");
}

#[test]
fn rocrtst_on_hip_7_2_gfx1100_passes_or_fails_only_on_values_a_kernel_computes() {
    check_rocrtst("gfx1100");
}

#[test]
fn the_readme_rocrtst_table_is_what_rocrtst_measured() {
    let table = rocrtst_matrix();
    eprintln!("{table}");
    common::generated_section("README.md", "rocrtst-matrix", &table);
}

// ---------------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------------

/// The README's compatibility matrix: a row per library, a column per HIP version and target
/// (each cell the row's status there and, in parentheses, the kernel dispatches captured over
/// every program of the cell), then the programs and the notes. A program or a note that does
/// not hold in every column of its row where the row runs names its columns.
///
/// Dispatch counts are exact: every program of the suite launches the same kernels on every run
/// with a fresh HOME. (rocfft-test's and hipfft-test's counts once varied, 92 and 24 here against
/// as low as 44 and 6 in CI, with the witness holding: their host-memory check skipped tests
/// whenever the page cache had taken all but 1 GiB, see [`Workaround::HostMemAvailable`]. With
/// MemFree pushed to 0.25 GiB here they launched 23 and 6, and 92 and 24 with the workaround.)
fn matrix() -> String {
    let mut libraries: Vec<&'static str> = Vec::new();
    for p in programs() {
        if !libraries.contains(&p.library) {
            libraries.push(p.library);
        }
    }
    let mut s = String::from("| library |");
    for c in COLUMNS {
        s.push_str(&format!(" {} |", c.title()));
    }
    s.push_str(" programs | notes |\n|");
    for _ in 0..COLUMNS.len() + 3 {
        s.push_str(" --- |");
    }
    s.push('\n');
    for library in libraries {
        let of = |c: Column| -> Vec<&'static Program> {
            programs()
                .iter()
                .filter(|p| p.library == library && column_of(p) == c)
                .collect()
        };
        // The columns where the row's programs run (not those where the library has no code).
        let ran: Vec<Column> = COLUMNS
            .into_iter()
            .filter(|c| {
                of(*c)
                    .iter()
                    .any(|p| !matches!(p.exe, Exe::NoCodeFor { .. }))
            })
            .collect();
        let mut cells = Vec::new();
        // (text, columns it holds in), in order of first appearance.
        let mut names: Vec<(String, Vec<Column>)> = Vec::new();
        let mut notes: Vec<(String, Vec<Column>)> = Vec::new();
        let add = |list: &mut Vec<(String, Vec<Column>)>, text: String, c: Column| match list
            .iter_mut()
            .find(|(t, _)| *t == text)
        {
            Some((_, cs)) => {
                if !cs.contains(&c) {
                    cs.push(c)
                }
            }
            None => list.push((text, vec![c])),
        };
        for c in COLUMNS {
            let list = of(c);
            if list.is_empty() {
                cells.push("-".to_string());
                continue;
            }
            let outcomes: Vec<Arc<Outcome>> = list.iter().map(|p| outcome(p)).collect();
            let failing: Vec<&str> = list
                .iter()
                .zip(&outcomes)
                .filter(|(_, o)| !o.problems.is_empty())
                .map(|(p, _)| p.id.as_str())
                .collect();
            let no_code = list.iter().all(|p| matches!(p.exe, Exe::NoCodeFor { .. }));
            let count: u64 = outcomes.iter().map(|o| o.dispatches).sum();
            cells.push(match (no_code, failing.is_empty()) {
                (true, true) => format!("no {} code in the package", c.target),
                (true, false) => format!("**fails**: {}", failing.join(", ")),
                (false, true) => format!("runs, witness holds ({count})"),
                (false, false) => format!("**fails**: {} ({count})", failing.join(", ")),
            });
            for (p, o) in list.iter().zip(&outcomes) {
                match &o.no_code {
                    Some(fact) => add(&mut notes, format!("no {} code: {fact}", c.target), c),
                    None => add(&mut names, format!("`{}`", p.id), c),
                }
                for w in &p.workarounds {
                    add(&mut notes, w.note().to_string(), c);
                }
                if let Some(f) = p.fact {
                    add(&mut notes, f.note.to_string(), c);
                }
            }
        }
        let render = |list: &Vec<(String, Vec<Column>)>| -> String {
            if list.is_empty() {
                return "-".to_string();
            }
            list.iter()
                .map(|(text, cs)| {
                    // Where the row runs: everywhere goes unsaid; otherwise the columns it holds
                    // in, or those it does not, whichever list is shorter.
                    let here: Vec<Column> =
                        ran.iter().copied().filter(|c| cs.contains(c)).collect();
                    let not: Vec<Column> =
                        ran.iter().copied().filter(|c| !cs.contains(c)).collect();
                    let titles =
                        |l: &[Column]| l.iter().map(|c| c.title()).collect::<Vec<_>>().join(", ");
                    if here.is_empty() || not.is_empty() {
                        text.clone()
                    } else if not.len() < here.len() {
                        format!("{text} (not {})", titles(&not))
                    } else {
                        format!("{text} ({})", titles(&here))
                    }
                })
                .collect::<Vec<_>>()
                .join(if list.first().is_some_and(|(t, _)| t.starts_with('`')) {
                    ", "
                } else {
                    "; "
                })
        };
        s.push_str(&format!(
            "| {library} | {} | {} | {} |\n",
            cells.join(" | "),
            render(&names),
            render(&notes)
        ));
    }
    s
}

#[test]
fn the_readme_compatibility_matrix_is_what_the_suite_measured() {
    let table = matrix();
    eprintln!("{table}");
    // Each program's count, so that a count that differs on another machine names its program.
    for p in programs() {
        let o = outcome(p);
        eprintln!(
            "{} {} ({}, {}): {} dispatches{}",
            p.library,
            p.id,
            p.hip.release(),
            p.target,
            o.dispatches,
            o.gtest
                .map(|(ran, passed, _)| format!(
                    " (gtest {ran} run, {passed} passed, {} skipped)",
                    o.skips.len()
                ))
                .unwrap_or_default()
        );
        for (test, why) in &o.skips {
            eprintln!("  skipped {test}: {why}");
        }
    }
    common::generated_section("README.md", "realworld-matrix", &table);
}

/// The judge on gtest output written here (no program runs): a run whose every selected test
/// skipped fails with the first reason, a partial skip is recorded without failing, and a HIP
/// failure that `--skip_runtime_fails false` turns into a failed test is not numerical.
#[test]
fn the_judge_fails_a_run_whose_every_test_skipped_and_a_hip_failure_the_fft_tests_report() {
    use std::os::unix::process::ExitStatusExt;
    let p = numerical(
        gtest_program("hipFFT", "/nowhere/hipfft-test", "*", 1),
        FFT_CHECKS,
    );
    let skip = |name: &str| {
        format!(
            "[ RUN      ] s.{name}\nshared/accuracy_test.h:958: Skipped\nhipMalloc failure for input buffer 0\n\n[  SKIPPED ] s.{name} (0 ms)\n"
        )
    };
    let end = "[==========] 2 tests from 1 test suite ran. (1 ms total)\n";
    let judged = |out: &str, code: i32| {
        let mut o = Outcome::default();
        judge(
            &p,
            std::process::ExitStatus::from_raw(code << 8),
            out,
            "",
            &mut o,
        );
        o
    };

    let all = judged(&format!("{}{}{end}", skip("a"), skip("b")), 0);
    assert_eq!(all.skips.len(), 2);
    assert_eq!(all.problems.len(), 1, "{:?}", all.problems);
    assert!(
        all.problems[0].contains("every one of the 2 selected tests skipped")
            && all.problems[0].contains("hipMalloc failure for input buffer 0"),
        "{:?}",
        all.problems
    );

    let linf = "[ RUN      ] s.c\nshared/accuracy_test.h:1462: Failure\nValue of: diff.l_inf <= linf_cutoff\n  Actual: false\nExpected: true\nLinf test failed.  Linf:1\n\n[  FAILED  ] s.c (1 ms)\n";
    let some = judged(&format!("{}{linf}{end}", skip("a")), 1);
    assert!(some.problems.is_empty(), "{:?}", some.problems);
    assert_eq!(
        some.skips,
        vec![(
            "s.a".to_string(),
            "hipMalloc failure for input buffer 0".to_string()
        )]
    );
    assert_eq!(some.gtest, Some((2, 0, 1)));

    let refused = "[ RUN      ] s.d\nshared/accuracy_test.h:961: Failure\nFailed\nhipMalloc failure for input buffer 0 size 8192(0 GiB) with code hipErrorOutOfMemory\n\n[  FAILED  ] s.d (1 ms)\n";
    let failed = judged(&format!("{refused}{linf}{end}"), 1);
    assert_eq!(failed.problems.len(), 1, "{:?}", failed.problems);
    assert!(
        failed.problems[0].contains("test s.d failed on something other than a numerical"),
        "{:?}",
        failed.problems
    );
}

// ---------------------------------------------------------------------------------------------
// The witness itself
// ---------------------------------------------------------------------------------------------

/// The launch entry points a HIP library exports (`nm -D --defined-only`).
fn exported_launch_functions(lib: &Path) -> Vec<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .expect("cannot run nm (binutils)");
    assert!(out.status.success(), "nm {} failed", lib.display());
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|s| s.split('@').next().unwrap().to_string())
        .filter(|s| {
            let launch = s.contains("LaunchKernel")
                || s.contains("LaunchCooperativeKernel")
                || s.contains("LaunchMultiKernel")
                || s.starts_with("hipGraphLaunch")
                || s == "hipLaunchByPtr";
            launch && !s.contains("hip_impl") && !s.contains("GGL")
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_witness_interposes_every_kernel_launch_entry_point_each_hip_exports() {
    for hip in Hip::ALL {
        let major = hip.version().split('.').next().unwrap_or("?");
        let lib = host_path(
            hip,
            &format!("/usr/lib/x86_64-linux-gnu/libamdhip64.so.{major}"),
        );
        let site = site(hip);
        let hip_launches = exported_launch_functions(&lib);
        assert!(
            hip_launches.len() >= 8,
            "{}: too few launch functions found: {hip_launches:?}",
            lib.display()
        );
        let witness = exported_launch_functions(&site.witness.host);
        let missing: Vec<&String> = hip_launches
            .iter()
            .filter(|f| !witness.contains(f))
            .collect();
        assert!(
            missing.is_empty(),
            "{}: the witness does not interpose {missing:?} (HIP exports {hip_launches:?})",
            hip.label()
        );
    }
}

/// The witness on its own test program: what it logged is what the program did (every launch
/// entry point, refused launches, stream capture, graphs with child graphs and updated nodes,
/// racing threads, a reused stream handle, exit() from another thread), and the comparison with
/// the capture holds.
fn witness_selftest_holds(hip: Hip) {
    let p = Program {
        id: "witness-selftest".into(),
        library: "witness",
        hip,
        target: "gfx90a",
        exe: Exe::WitnessSelftest,
        args: vec![],
        judge: Judge::Client,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(300),
        witness: true,
        fact: None,
        near_checks_on_stderr: false,
    };
    let o = outcome(&p);
    let mut problems = o.problems.clone();
    // The same program without the witness: the same output and the same dispatches (counted
    // per kernel and geometry: its threads race, so the order across queues may differ).
    let bare = Program {
        id: "witness-selftest-without-witness".into(),
        witness: false,
        ..p.clone()
    };
    let b = outcome(&bare);
    problems.extend(
        b.problems
            .iter()
            .filter(|p| !p.contains("run directory"))
            .map(|p| format!("without the witness: {p}")),
    );
    let facts = |dir: &Path| -> Vec<String> {
        String::from_utf8_lossy(&std::fs::read(dir.join("stdout.txt")).unwrap_or_default())
            .lines()
            .filter(|l| l.starts_with("rw: "))
            // Whether the new stream gets the destroyed one's address is up to the heap, which
            // the witness's own allocations change (CI saw 1 with it and 0 without on 6.4.3);
            // the comparison of the witness log handles both.
            .filter(|l| !l.starts_with("rw: stream_handle_reused="))
            .map(str::to_string)
            .collect()
    };
    if facts(&o.dir) != facts(&b.dir) {
        problems.push(format!(
            "the program printed {:?} with the witness and {:?} without it",
            facts(&o.dir),
            facts(&b.dir)
        ));
    }
    let capture_of = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "sgcap"))
    };
    match (capture_of(&o.dir), capture_of(&b.dir)) {
        (Some(with), Some(without)) => {
            let out = Command::new(cli())
                .arg("diff")
                .arg(&with)
                .arg(&without)
                .args(["--level", "count"])
                .output()
                .expect("cannot run softgpu diff");
            if !out.status.success() {
                problems.push(format!(
                    "softgpu diff --level count of the captures with and without the witness: {}\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout)
                ));
            }
        }
        _ => problems.push("a capture is missing (with or without the witness)".into()),
    }
    let logs: Vec<PathBuf> = std::fs::read_dir(&o.dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(
        logs.len(),
        1,
        "one witness log expected in {}",
        o.dir.display()
    );
    let events = compare::parse_witness(&std::fs::read_to_string(&logs[0]).unwrap()).unwrap();
    let launches: Vec<&compare::Launch> = events
        .iter()
        .filter_map(|e| match e {
            compare::Event::Launch(l) => Some(l),
            _ => None,
        })
        .collect();
    let count = |f: &dyn Fn(&compare::Launch) -> bool| launches.iter().filter(|l| f(l)).count();
    let named = |l: &compare::Launch, n: &str| l.name.as_deref() == Some(n);
    let mut expect = |what: &str, got: usize, want: usize| {
        if got != want {
            problems.push(format!("{what}: {got} in the witness log, expected {want}"));
        }
    };
    expect(
        "chevron k_one<<<4, 64>>> on the null stream",
        count(&|l| {
            l.api == "hipLaunchKernel"
                && named(l, "_Z5k_onePi")
                && l.grid == [256, 1, 1]
                && l.stream == 0
        }),
        1,
    );
    expect(
        "hipLaunchKernel_spt on the per-thread stream",
        count(&|l| {
            l.api == "hipLaunchKernel_spt" && l.spt && l.grid == [192, 1, 1] && l.status == 0
        }),
        1,
    );
    expect(
        "hipExtLaunchKernel",
        count(&|l| {
            l.api == "hipExtLaunchKernel" && named(l, "_Z5k_twoPi") && l.grid == [320, 1, 1]
        }),
        1,
    );
    expect(
        "hipModuleLaunchKernel of m_kernel, 6 blocks of 64",
        count(&|l| {
            l.api == "hipModuleLaunchKernel" && named(l, "m_kernel") && l.grid == [384, 1, 1]
        }),
        1,
    );
    expect(
        "hipExtModuleLaunchKernel of m_kernel, 448 work-items",
        count(&|l| {
            l.api == "hipExtModuleLaunchKernel"
                && named(l, "m_kernel")
                && l.grid == [448, 1, 1]
                && l.block == [64, 1, 1]
        }),
        1,
    );
    // HIP 7's launches with a configuration (the program makes them on HIP 7 only).
    let hip7 = usize::from(hip == Hip::V7_2);
    expect(
        "hipLaunchKernelExC of k_two, 9 blocks of 64",
        count(&|l| {
            l.api == "hipLaunchKernelExC"
                && named(l, "_Z5k_twoPi")
                && l.grid == [576, 1, 1]
                && !l.cooperative
        }),
        hip7,
    );
    expect(
        "hipDrvLaunchKernelEx of m_kernel, 10 blocks of 64",
        count(&|l| {
            l.api == "hipDrvLaunchKernelEx" && named(l, "m_kernel") && l.grid == [640, 1, 1]
        }),
        hip7,
    );
    expect(
        "the refused launch (2048 work-items per block), with its error status",
        count(&|l| l.block == [2048, 1, 1] && l.status != 0),
        1,
    );
    for api in [
        "hipLaunchCooperativeKernel",
        "hipLaunchCooperativeKernelMultiDevice",
        "hipExtLaunchMultiKernelMultiDevice",
    ] {
        expect(api, count(&|l| l.api == api), 1);
    }
    expect(
        "launches captured into a graph (not dispatched)",
        count(&|l| l.capturing == Some(true)),
        2,
    );
    let graph = |l: &compare::Launch| {
        let mut n: Vec<(String, u64)> = l
            .nodes
            .iter()
            .flatten()
            .map(|n| (n.name.clone(), n.grid[0]))
            .collect();
        n.sort();
        n
    };
    let shape = |name: &str, grid: u64| (name.to_string(), grid);
    expect(
        "launches of the captured graph with its two kernel nodes",
        count(&|l| {
            l.is_graph && graph(l) == vec![shape("_Z5k_onePi", 448), shape("_Z5k_twoPi", 512)]
        }),
        2,
    );
    expect(
        "the explicit graph's launch: the updated node and the child graph's node",
        count(&|l| {
            l.is_graph && graph(l) == vec![shape("_Z5k_onePi", 320), shape("_Z5k_twoPi", 352)]
        }),
        1,
    );
    for blocks in 14..17u64 {
        expect(
            &format!("launches from the stream-owning thread of {blocks} blocks of 64"),
            count(&|l| {
                named(l, "_Z5k_onePi") && l.grid == [blocks * 64, 1, 1] && l.block == [64, 1, 1]
            }),
            20,
        );
    }
    expect(
        "racing launches of two threads on one stream",
        count(&|l| named(l, "_Z5k_twoPi") && l.grid == [128, 1, 1]),
        40,
    );
    let racers: std::collections::BTreeSet<u64> = launches
        .iter()
        .filter(|l| named(l, "_Z5k_twoPi") && l.grid == [128, 1, 1])
        .map(|l| l.tid)
        .collect();
    expect("threads among the racing launches", racers.len(), 2);
    expect(
        "stream_destroy events (the three threads' streams and s5)",
        events
            .iter()
            .filter(|e| matches!(e, compare::Event::StreamDestroy { .. }))
            .count(),
        4,
    );
    expect(
        "k_last, launched just before exit() from another thread",
        count(&|l| named(l, "_Z6k_lastPi") && l.status == 0),
        1,
    );
    assert!(
        problems.is_empty(),
        "witness self-test on {}:\n  - {}",
        hip.label(),
        problems.join("\n  - ")
    );
}

#[test]
fn the_witness_logs_every_kind_of_launch_and_its_capture_agrees_on_hip_5_2() {
    witness_selftest_holds(Hip::V5_2);
}

#[test]
fn the_witness_logs_every_kind_of_launch_and_its_capture_agrees_on_hip_6_4() {
    witness_selftest_holds(Hip::V6_4);
}

#[test]
fn the_witness_logs_every_kind_of_launch_and_its_capture_agrees_on_hip_7_2() {
    witness_selftest_holds(Hip::V7_2);
}

// ---------------------------------------------------------------------------------------------
// One test per library and HIP version
// ---------------------------------------------------------------------------------------------

/// The matrix test records a failing program as `**fails**` and passes once that is blessed, so
/// a failure is only ever a test failure through its own test: every library needs one per
/// column it has programs in.
#[test]
fn every_library_and_hip_version_of_the_matrix_has_its_own_test() {
    let src = include_str!("realworld.rs");
    let at = src
        .rfind("\nlibrary_tests! {")
        .expect("the library_tests! invocation");
    let mut tested: Vec<(String, String)> = Vec::new();
    for line in src[at..].lines() {
        let Some((_, rest)) = line.split_once(": \"") else {
            continue;
        };
        let Some((library, column)) = rest.split_once("\" on ") else {
            continue;
        };
        tested.push((
            library.to_string(),
            column.trim_end_matches(';').trim().to_string(),
        ));
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    for p in programs() {
        let row = (p.library.to_string(), column_of(p).spelled());
        if !rows.contains(&row) {
            rows.push(row);
        }
    }
    let untested: Vec<_> = rows.iter().filter(|r| !tested.contains(r)).collect();
    let unknown: Vec<_> = tested.iter().filter(|t| !rows.contains(t)).collect();
    assert!(
        untested.is_empty() && unknown.is_empty(),
        "rows without a test: {untested:?}; tests of no row: {unknown:?}"
    );
    assert_eq!(tested.len(), rows.len(), "a row tested twice: {tested:?}");
}

/// One test per library and column (`V6_4`: a version's only column, gfx90a; `V7_2 "gfx942"`):
/// `cargo test --release --test realworld <name>`.
macro_rules! library_tests {
    ($($name:ident: $library:literal on $hip:ident $($target:literal)?;)*) => {
        $(
            #[test]
            fn $name() {
                let target = ["gfx90a" $(, $target)?];
                check_library(
                    $library,
                    Column {
                        hip: Hip::$hip,
                        target: target[target.len() - 1],
                    },
                );
            }
        )*
    };
}

library_tests! {
    rocminfo_on_hip_5_2_lists_every_agent_under_the_shim: "rocminfo" on V5_2;
    rocminfo_on_hip_6_4_lists_every_agent_under_the_shim: "rocminfo" on V6_4;
    rocrand_on_hip_5_2_runs_under_the_shim_and_the_witness_holds: "rocRAND" on V5_2;
    rocrand_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocRAND" on V6_4;
    hiprand_on_hip_5_2_runs_under_the_shim_and_the_witness_holds: "hipRAND" on V5_2;
    hiprand_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipRAND" on V6_4;
    rocsparse_on_hip_5_2_runs_under_the_shim_and_the_witness_holds: "rocSPARSE" on V5_2;
    rocsparse_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocSPARSE" on V6_4;
    rocprim_on_hip_5_2_runs_under_the_shim_and_the_witness_holds: "rocPRIM" on V5_2;
    rocprim_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocPRIM" on V6_4;
    rocblas_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocBLAS" on V6_4;
    hipblas_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipBLAS" on V6_4;
    hipblaslt_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipBLASLt" on V6_4;
    rocfft_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocFFT" on V6_4;
    hipfft_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipFFT" on V6_4;
    rocsolver_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocSOLVER" on V6_4;
    hipsolver_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipSOLVER" on V6_4;
    hipsparse_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipSPARSE" on V6_4;
    hipcub_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "hipCUB" on V6_4;
    rocthrust_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "rocThrust" on V6_4;
    miopen_on_hip_6_4_runs_under_the_shim_and_the_witness_holds: "MIOpen" on V6_4;
    rocminfo_on_hip_7_2_gfx90a_lists_every_agent_under_the_shim: "rocminfo" on V7_2 "gfx90a";
    rocblas_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocBLAS" on V7_2 "gfx90a";
    hipblas_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipBLAS" on V7_2 "gfx90a";
    hipblaslt_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipBLASLt" on V7_2 "gfx90a";
    rocfft_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocFFT" on V7_2 "gfx90a";
    hipfft_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipFFT" on V7_2 "gfx90a";
    rocsolver_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocSOLVER" on V7_2 "gfx90a";
    hipsolver_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipSOLVER" on V7_2 "gfx90a";
    rocsparse_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocSPARSE" on V7_2 "gfx90a";
    hipsparse_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipSPARSE" on V7_2 "gfx90a";
    hipsparselt_as_packaged_for_hip_7_2_has_no_gfx90a_code_objects: "hipSPARSELt" on V7_2 "gfx90a";
    rocrand_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocRAND" on V7_2 "gfx90a";
    hiprand_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipRAND" on V7_2 "gfx90a";
    rocprim_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocPRIM" on V7_2 "gfx90a";
    hipcub_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "hipCUB" on V7_2 "gfx90a";
    rocthrust_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocThrust" on V7_2 "gfx90a";
    miopen_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "MIOpen" on V7_2 "gfx90a";
    rccl_on_hip_7_2_runs_over_two_and_four_gfx90a_gpus_under_the_shim_and_the_witness_holds: "RCCL" on V7_2 "gfx90a";
    rocwmma_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocWMMA" on V7_2 "gfx90a";
    rocalution_on_hip_7_2_gfx90a_runs_under_the_shim_and_the_witness_holds: "rocALUTION" on V7_2 "gfx90a";
    rocminfo_on_hip_7_2_gfx942_lists_every_agent_under_the_shim: "rocminfo" on V7_2 "gfx942";
    rocblas_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocBLAS" on V7_2 "gfx942";
    hipblas_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipBLAS" on V7_2 "gfx942";
    hipblaslt_as_packaged_for_hip_7_2_has_no_gfx942_code_objects: "hipBLASLt" on V7_2 "gfx942";
    rocfft_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocFFT" on V7_2 "gfx942";
    hipfft_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipFFT" on V7_2 "gfx942";
    rocsolver_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocSOLVER" on V7_2 "gfx942";
    hipsolver_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipSOLVER" on V7_2 "gfx942";
    rocsparse_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocSPARSE" on V7_2 "gfx942";
    hipsparse_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipSPARSE" on V7_2 "gfx942";
    hipsparselt_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipSPARSELt" on V7_2 "gfx942";
    rocrand_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocRAND" on V7_2 "gfx942";
    hiprand_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipRAND" on V7_2 "gfx942";
    rocprim_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocPRIM" on V7_2 "gfx942";
    hipcub_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "hipCUB" on V7_2 "gfx942";
    rocthrust_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocThrust" on V7_2 "gfx942";
    miopen_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "MIOpen" on V7_2 "gfx942";
    rccl_on_hip_7_2_runs_over_two_and_four_gfx942_gpus_under_the_shim_and_the_witness_holds: "RCCL" on V7_2 "gfx942";
    rocwmma_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocWMMA" on V7_2 "gfx942";
    rocalution_on_hip_7_2_gfx942_runs_under_the_shim_and_the_witness_holds: "rocALUTION" on V7_2 "gfx942";
}
