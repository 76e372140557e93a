//! The real-world suite: ROCm software this project did not write, run under the shim on both
//! HIP versions, every dispatch it issues cross-checked against an independent HIP-API witness.
//!
//! What runs: ROCm's libraries from Debian, driven through their main entry points by clients
//! of our own (`integration/realworld/*.cpp`, built with the real `hipcc` and linked against the
//! real libraries), filtered subsets of the libraries' packaged GoogleTest suites
//! (`/usr/libexec/rocm/...` in the sid chroot), and rocminfo. HIP 5.2.3 programs run on the
//! host (`./scripts/setup --tests` installs the packages), HIP 6.4.3 programs in the sid chroot
//! (`./scripts/sid-chroot --realworld`). The list is [`programs`].
//!
//! Every program runs with `LD_PRELOAD=witness.so:libsoftgpu_hsa.so`. The witness
//! (`integration/witness/witness.c`, compiled here against the real HIP headers of the version,
//! with the host's `cc` or the chroot's `clang-21`) records every kernel launch HIP accepts. For
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
//! library and the HIP version).

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

use common::{Hip, Place, cli, repo, run_with_deadline, shim, sid_root};

const SETUP_HINT: &str = "run ./scripts/setup --tests (scripts/test does)";
const CHROOT_HINT: &str = "run ./scripts/sid-chroot --realworld (scripts/test does)";
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
    let s: &'static Site = Box::leak(Box::new(match hip {
        Hip::V5_2 => host_site(),
        Hip::V6_4 => chroot_site(),
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

fn chroot_site() -> Site {
    let root = sid_root();
    for (marker, what) in [
        (".softgpu-ready", "the sid chroot with HIP 6.4.3"),
        (
            ".softgpu-realworld-ready",
            "the sid chroot's real-world stage",
        ),
    ] {
        assert!(
            root.join(marker).is_file(),
            "{what} is not ready ({} is missing): {CHROOT_HINT}",
            root.join(marker).display()
        );
    }
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
        hip: Hip::V6_4,
        witness: base.join("witness.so"),
        memavailable: base.join("memavailable.so"),
        shim: shim_place,
        src,
        base,
    };
    build_witness(&site);
    site
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

/// A command running `argv` (paths as the program sees them) with exactly `env`, in `cwd`: on
/// the host directly, in the chroot through `scripts/sid-chroot --run` (which execs, so the
/// child's pid is the program's). With `stand_ins`, through
/// `integration/realworld/with-amdgpu-stand-ins` (see [`Workaround::AmdgpuStandIns`]).
fn command(
    hip: Hip,
    cwd: &Place,
    env: &[(String, String)],
    argv: &[String],
    stand_ins: bool,
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
    match (hip, stand_ins) {
        (Hip::V5_2, false) => {
            full.extend(env_i);
            full.extend(assign(&mut env.iter()));
        }
        // On the host the stand-ins go inside the neutral environment, so that the stand-in
        // `lsmod` the script puts first on PATH stays there; the preloads come last, for the
        // program alone.
        (Hip::V5_2, true) => {
            full.extend(env_i);
            full.extend(assign(&mut env.iter().filter(|(k, _)| k != "LD_PRELOAD")));
            full.extend([
                script,
                "/".into(),
                "--lsmod".into(),
                "--".into(),
                "/usr/bin/env".into(),
            ]);
            full.extend(assign(&mut env.iter().filter(|(k, _)| k == "LD_PRELOAD")));
        }
        // For the chroot, the namespace is made on the host, around scripts/sid-chroot.
        (Hip::V6_4, _) => {
            if stand_ins {
                full.extend([script, sid_root().display().to_string(), "--".into()]);
            }
            full.extend([
                repo().join("scripts/sid-chroot").display().to_string(),
                "--run".into(),
                "--".into(),
            ]);
            full.extend(env_i);
            full.extend(assign(&mut env.iter()));
        }
    }
    full.extend(argv.iter().cloned());
    let mut cmd = Command::new(&full[0]);
    cmd.args(&full[1..]).stdin(Stdio::null());
    if hip == Hip::V6_4 {
        cmd.env("SOFTGPU_SID_CHROOT", sid_root());
    }
    cmd
}

/// Run a build step (compiler) to completion; Err with its output when it fails.
fn build_step(site: &Site, argv: &[String], what: &str) -> Result<(), String> {
    let env = neutral_env("/root");
    let out = command(site.hip, &site.base, &env, argv, false)
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
            "--offload-arch=gfx90a",
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
                "--offload-arch=gfx90a",
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
                "--offload-arch=gfx90a",
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
    /// rocFFT's and hipFFT's test programs (6.4.3) take sysinfo's `freeram` (MemFree, which
    /// leaves out the page cache) as the host memory they may use, and below 1 GiB skip every
    /// test that needs a host buffer: after a build filled the page cache, hipfft-test skipped
    /// all 6 tests (6 dispatches instead of 24) and rocfft-test most of its (23 instead of 92),
    /// on a machine with 23 GiB available. `integration/realworld/memavailable.c`, preloaded
    /// first, reports MemAvailable as `freeram`.
    HostMemAvailable,
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
            Workaround::HostMemAvailable => {
                "the test program's host memory check reads MemFree (page cache counted as used): sysinfo reports MemAvailable"
            }
        }
    }
    fn env(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Workaround::AmdgpuStandIns => &[],
            Workaround::ComgrCache => &[("AMD_COMGR_CACHE", "0")],
            Workaround::MiopenHipKernels => &[("MIOPEN_DEBUG_HIP_KERNELS", "0")],
            Workaround::HostMemAvailable => &[],
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
    /// rocminfo: exit 0, the CPU agent and a gfx90a GPU agent listed, `*** Done ***`.
    Rocminfo,
    /// rocm_agent_enumerator: exit 0, lists gfx90a.
    AgentEnumerator,
}

#[derive(Clone, Debug)]
struct Program {
    /// Unique, for directories and messages: `<library>-<what>`.
    id: String,
    /// The matrix row's library.
    library: &'static str,
    hip: Hip,
    exe: Exe,
    args: Vec<String>,
    judge: Judge,
    /// Extra environment that is not a workaround (e.g. a test driver's output option).
    env: Vec<(&'static str, &'static str)>,
    workarounds: Vec<Workaround>,
    deadline: Duration,
    /// Preload the witness in front of the shim (false only to show that it changes nothing).
    witness: bool,
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
        exe: Exe::Client { src, libs },
        args: vec![],
        judge: Judge::Client,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(300),
        witness: true,
    }
}

/// A packaged test program of the sid chroot: `/usr/libexec/rocm/<package>/<binary>`, its
/// id `<binary>` (unique per HIP version), run with a gtest filter.
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
    }
}

/// A rocThrust test program, run on the named tests only.
fn thrust_program(path: &'static str, tests: &[&str], deadline_s: u64) -> Program {
    Program {
        id: path.rsplit('/').next().unwrap().to_string(),
        library: "rocThrust",
        hip: Hip::V6_4,
        exe: Exe::Installed(path),
        args: tests.iter().map(|t| t.to_string()).collect(),
        judge: Judge::Thrust,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(deadline_s),
        witness: true,
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

/// Every program of the suite, in matrix order.
fn programs() -> &'static [Program] {
    static LIST: OnceLock<Vec<Program>> = OnceLock::new();
    LIST.get_or_init(|| {
        use Hip::{V5_2, V6_4};
        use Workaround::*;
        let rocminfo = |hip: Hip| Program {
            id: "rocminfo".into(),
            library: "rocminfo",
            hip,
            exe: Exe::Installed("/usr/bin/rocminfo"),
            args: vec![],
            judge: Judge::Rocminfo,
            env: vec![],
            workarounds: vec![AmdgpuStandIns],
            deadline: Duration::from_secs(120),
            witness: true,
        };
        let enumerator = |hip: Hip| Program {
            id: "rocm_agent_enumerator".into(),
            library: "rocminfo",
            hip,
            exe: Exe::Installed("/usr/bin/rocm_agent_enumerator"),
            args: vec![],
            judge: Judge::AgentEnumerator,
            env: vec![],
            workarounds: vec![AmdgpuStandIns],
            deadline: Duration::from_secs(120),
            witness: true,
        };
        vec![
            // HIP 5.2.3 (bookworm, host)
            rocminfo(V5_2),
            enumerator(V5_2),
            client_program("rocRAND", V5_2, "rocrand", &["rocrand"]),
            client_program("hipRAND", V5_2, "hiprand", &["hiprand"]),
            client_program("rocSPARSE", V5_2, "rocsparse", &["rocsparse"]),
            client_program("rocPRIM", V5_2, "rocprim", &[]),
            // HIP 6.4.3 (sid chroot)
            rocminfo(V6_4),
            enumerator(V6_4),
            client_program("rocBLAS", V6_4, "rocblas", &["rocblas"]),
            env(
                gtest_program(
                    "rocBLAS",
                    "/usr/libexec/rocm/librocblas4-tests/rocblas-test",
                    ROCBLAS_FILTER,
                    1200,
                ),
                // rocblas-test prints no per-test lines unless asked (its run-tests script asks).
                &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
            ),
            client_program("hipBLAS", V6_4, "hipblas", &["hipblas"]),
            client_program("hipBLASLt", V6_4, "hipblaslt", &["hipblaslt"]),
            client_program("rocFFT", V6_4, "rocfft", &["rocfft"]),
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
            client_program("hipFFT", V6_4, "hipfft", &["hipfft"]),
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
            client_program("rocSOLVER", V6_4, "rocsolver", &["rocsolver", "rocblas"]),
            gtest_program(
                "rocSOLVER",
                "/usr/libexec/rocm/librocsolver0-tests/rocsolver-test",
                "checkin_lapack/GETRF.__float/*:checkin_lapack/POTRF.__float/*",
                900,
            ),
            client_program("hipSOLVER", V6_4, "hipsolver", &["hipsolver"]),
            env(
                gtest_program(
                    "hipSOLVER",
                    "/usr/libexec/rocm/libhipsolver0-tests/hipsolver-test",
                    "checkin_lapack/GETRF.__float/*:checkin_lapack/POTRF.__float/*",
                    600,
                ),
                &[("GTEST_LISTENER", "PASS_LINE_IN_LOG")],
            ),
            client_program("rocSPARSE", V6_4, "rocsparse", &["rocsparse"]),
            gtest_program(
                "rocSPARSE",
                "/usr/libexec/rocm/librocsparse1-tests/rocsparse-test",
                "quick/csrmv.level2/f32_r_*",
                900,
            ),
            client_program("hipSPARSE", V6_4, "hipsparse", &["hipsparse"]),
            gtest_program(
                "hipSPARSE",
                "/usr/libexec/rocm/libhipsparse1-tests/hipsparse-test",
                "csrmv/parameterized_csrmv.csrmv_float/*:\
                 spmv_coo/parameterized_spmv_coo.spmv_coo_i32_float/*:csrmv_bad_arg.*",
                600,
            ),
            client_program("rocRAND", V6_4, "rocrand", &["rocrand"]),
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
            client_program("hipRAND", V6_4, "hiprand", &["hiprand"]),
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
            client_program("rocPRIM", V6_4, "rocprim", &[]),
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
            client_program("hipCUB", V6_4, "hipcub", &[]),
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
            client_program("rocThrust", V6_4, "rocthrust", &[]),
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
            with(
                client_program("MIOpen", V6_4, "miopen", &["MIOpen"]),
                &[MiopenHipKernels],
            ),
            with(
                numerical(
                    gtest_program(
                        "MIOpen",
                        "/usr/libexec/rocm/libmiopen1-tests/miopen_gtest",
                        "Smoke/GPU_UnitTestConvSolverGemmFwd1x1_0_1Fwd_*:\
                         Smoke/GPU_UnitTestConvSolverGemmBwd1x1_Stride1Bwd_*",
                        600,
                    ),
                    &["Gpu data is all zeros"],
                ),
                &[MiopenHipKernels],
            ),
        ]
    })
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
}

fn outcome(p: &Program) -> Arc<Outcome> {
    static CACHE: Cache<Arc<Outcome>> = OnceLock::new();
    once(&CACHE, format!("{}/{}", p.hip.label(), p.id), || {
        let o = run_program(p);
        record_timing(p, &o);
        Arc::new(o)
    })
}

/// One line per program run, appended to `target/tmp/realworld/runs.tsv` (a measurement for
/// the docs, never asserted on): HIP version, program, seconds, processes, launches,
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
            "{}\t{}\t{}\t{:.1}\t{}\t{}\t{}\t{}",
            std::process::id(),
            p.hip.label(),
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
            let host = match p.hip {
                Hip::V5_2 => PathBuf::from(path),
                Hip::V6_4 => sid_root().join(path.trim_start_matches('/')),
            };
            assert!(
                host.exists(),
                "{} ({}) is not installed: {}",
                path,
                p.hip.label(),
                if p.hip == Hip::V5_2 {
                    SETUP_HINT
                } else {
                    CHROOT_HINT
                }
            );
            path.to_string()
        }
    };
    let dir = site.base.join("runs").join(&p.id);
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
    let mut cmd = command(
        p.hip,
        &dir,
        &env,
        &argv,
        p.workarounds.contains(&Workaround::AmdgpuStandIns),
    );
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
        Some(status) => judge(p, status, &stdout, &mut o),
    }
    if !ended.stragglers.is_empty() {
        o.problems.push(format!(
            "processes {:?} of its group outlived it",
            ended.stragglers
        ));
    }
    for line in stderr.lines().chain(stdout.lines()) {
        if SHIM_LOG_MARKS.iter().any(|m| line.contains(m)) {
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

/// The program's own verdict, by its kind.
fn judge(p: &Program, status: std::process::ExitStatus, stdout: &str, o: &mut Outcome) {
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
        Judge::Gtest { numerical: marks } => {
            let r = gtest::parse(stdout);
            let is_numerical =
                |b: &str| gtest::is_numerical(b) || gtest::names_result_check(b, marks);
            let numerical = r
                .failed
                .iter()
                .filter(|f| {
                    !f.blocks.is_empty()
                        && gtest::judged_blocks(&f.blocks)
                            .iter()
                            .all(|b| is_numerical(b))
                })
                .count();
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
                for b in gtest::judged_blocks(&f.blocks)
                    .into_iter()
                    .filter(|b| !is_numerical(b))
                {
                    o.problems.push(format!(
                        "test {} failed on something other than a numerical comparison:\n{}",
                        f.name,
                        b.trim_end()
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
            let gpu = stdout
                .lines()
                .any(|l| l.trim_start().starts_with("Name:") && l.contains("gfx90a"));
            if agents < 2 || !cpu || !gpu {
                o.problems.push(format!(
                    "expected the CPU agent and a gfx90a GPU agent: {agents} agents listed, CPU {cpu}, gfx90a {gpu}"
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
            if !stdout.lines().any(|l| l.trim() == "gfx90a") {
                o.problems
                    .push(format!("did not list gfx90a: {:?}", stdout.trim()));
            }
        }
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

/// Run every program of `library` on `hip` and fail with everything that went wrong.
fn check_library(library: &str, hip: Hip) {
    let list: Vec<&Program> = programs()
        .iter()
        .filter(|p| p.library == library && p.hip == hip)
        .collect();
    assert!(
        !list.is_empty(),
        "no program for {library} on {}",
        hip.label()
    );
    let mut report = String::new();
    for p in list {
        let o = outcome(p);
        eprintln!(
            "realworld: {} {} ({}): {} s, {} processes, {} launches, {} dispatches ({} user, {} blit), arguments checked on {} ({} pointers, {} null){}{}",
            p.library,
            p.id,
            p.hip.label(),
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
        for (test, why) in &o.skips {
            eprintln!("  skipped {test}: {why}");
        }
        if !o.problems.is_empty() {
            report.push_str(&format!("{} ({}):\n", p.id, p.hip.label()));
            for problem in &o.problems {
                report.push_str("  - ");
                report.push_str(&problem.replace('\n', "\n    "));
                report.push('\n');
            }
        }
    }
    assert!(report.is_empty(), "{library} on {}:\n{report}", hip.label());
}

// ---------------------------------------------------------------------------------------------
// The matrix
// ---------------------------------------------------------------------------------------------

/// Dispatch counts in the matrix, exact: every program of the suite launches the same
/// kernels on every run with a fresh HOME. (rocfft-test's and hipfft-test's counts once varied,
/// 92 and 24 here against as low as 44 and 6 in CI, with the witness holding: their
/// host-memory check skipped tests whenever the page cache had taken all but 1 GiB, see
/// [`Workaround::HostMemAvailable`]. With MemFree pushed to 0.25 GiB here they launched 23
/// and 6, and 92 and 24 with the workaround.)
fn matrix() -> String {
    let mut rows: Vec<(&'static str, Hip)> = Vec::new();
    for p in programs() {
        if !rows.contains(&(p.library, p.hip)) {
            rows.push((p.library, p.hip));
        }
    }
    let mut s = String::from(
        "| library | HIP | status | dispatches captured | programs | notes |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for (library, hip) in rows {
        let list: Vec<&Program> = programs()
            .iter()
            .filter(|p| p.library == library && p.hip == hip)
            .collect();
        let outcomes: Vec<Arc<Outcome>> = list.iter().map(|p| outcome(p)).collect();
        let failing: Vec<&str> = list
            .iter()
            .zip(&outcomes)
            .filter(|(_, o)| !o.problems.is_empty())
            .map(|(p, _)| p.id.as_str())
            .collect();
        let status = if failing.is_empty() {
            "runs, witness holds".to_string()
        } else {
            format!("**fails**: {}", failing.join(", "))
        };
        let count: u64 = outcomes.iter().map(|o| o.dispatches).sum();
        let mut notes: Vec<&str> = Vec::new();
        for p in &list {
            for w in &p.workarounds {
                if !notes.contains(&w.note()) {
                    notes.push(w.note());
                }
            }
        }
        let names: Vec<String> = list.iter().map(|p| format!("`{}`", p.id)).collect();
        s.push_str(&format!(
            "| {library} | {} | {status} | {count} | {} | {} |\n",
            hip.version_full(),
            names.join(", "),
            if notes.is_empty() {
                "-".to_string()
            } else {
                notes.join("; ")
            }
        ));
    }
    s
}

trait VersionFull {
    fn version_full(self) -> &'static str;
}

impl VersionFull for Hip {
    fn version_full(self) -> &'static str {
        match self {
            Hip::V5_2 => "5.2.3",
            Hip::V6_4 => "6.4.3",
        }
    }
}

#[test]
fn the_readme_compatibility_matrix_is_what_the_suite_measured() {
    let table = matrix();
    eprintln!("{table}");
    // Each program's count, so that a count that differs on another machine names its program.
    for p in programs() {
        let o = outcome(p);
        eprintln!(
            "{} {} ({}): {} dispatches{}",
            p.library,
            p.id,
            p.hip.version_full(),
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
    for (hip, lib) in [
        (
            Hip::V5_2,
            PathBuf::from("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"),
        ),
        (
            Hip::V6_4,
            sid_root().join("usr/lib/x86_64-linux-gnu/libamdhip64.so.6"),
        ),
    ] {
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
        exe: Exe::WitnessSelftest,
        args: vec![],
        judge: Judge::Client,
        env: vec![],
        workarounds: vec![],
        deadline: Duration::from_secs(300),
        witness: true,
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

// ---------------------------------------------------------------------------------------------
// One test per library and HIP version
// ---------------------------------------------------------------------------------------------

/// The matrix test records a failing program as `**fails**` and passes once that is blessed, so
/// a failure is only ever a test failure through its row's own test: every row needs one.
#[test]
fn every_library_and_hip_version_of_the_matrix_has_its_own_test() {
    let src = include_str!("realworld.rs");
    let at = src
        .rfind("\nlibrary_tests! {")
        .expect("the library_tests! invocation");
    let mut tested: Vec<(String, &str)> = Vec::new();
    for line in src[at..].lines() {
        let Some((_, rest)) = line.split_once(": \"") else {
            continue;
        };
        let Some((library, hip)) = rest.split_once("\" on ") else {
            continue;
        };
        tested.push((library.to_string(), hip.trim_end_matches(';').trim()));
    }
    let mut rows: Vec<(String, &str)> = Vec::new();
    for p in programs() {
        let hip = match p.hip {
            Hip::V5_2 => "V5_2",
            Hip::V6_4 => "V6_4",
        };
        if !rows.contains(&(p.library.to_string(), hip)) {
            rows.push((p.library.to_string(), hip));
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

/// One test per (library, HIP version): `cargo test --release --test realworld <name>`.
macro_rules! library_tests {
    ($($name:ident: $library:literal on $hip:ident;)*) => {
        $(
            #[test]
            fn $name() {
                check_library($library, Hip::$hip);
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
}
