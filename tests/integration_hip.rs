//! Real HIP programs run under the shim, on three HIP versions and in both completion modes.
//!
//! Each program in `integration/hip/` is an ordinary HIP program (see `integration/hip/sg_hip.h`
//! for its output contract). This harness builds it with `hipcc --offload-arch=gfx90a -O1`,
//! runs it with `LD_PRELOAD=libsoftgpu_hsa.so` (virtual mode: no GPU, no real ROCr), and checks
//! two things:
//!
//! 1. The program's own verdict: exit status 0, `sg: done=1`, every HIP call returned
//!    hipSuccess, every copy the runtime performs moved the bytes exactly (the program checks),
//!    and the `sg: key=value` facts it prints have the expected values.
//! 2. The capture, through `softgpu inspect --format jsonl`: the exact number of user kernel
//!    dispatches per (kernel symbol, kernel name, grid, workgroup, group segment size incl.
//!    dynamic LDS), HIP's own blit kernels (`__amd_rocclr_*`) present where the program asked
//!    for them and flagged `runtime_blit_kernel_not_executed`, every record validated (nothing
//!    rejected), a complete capture (trailer), one capture file per run and no other (a child
//!    process never writes one), and the exit summary line agreeing with the records.
//!
//! HIP versions: 5.2.3 is the host's (`./scripts/setup` installs it). 6.4.3 lives in the Debian
//! sid chroot that `./scripts/sid-chroot` builds and caches, 7.2.4 (ROCm 7.2.4: hipcc with
//! clang 22, libamdhip64.so.7, ROCr 7.2.4) in the sid + experimental chroot of
//! `./scripts/sid-chroot --rocm7` (`./scripts/test` builds both before `cargo test`); the
//! programs are compiled by the chroot's hipcc and run inside it with the host-built shim copied
//! in. A missing chroot fails its version's tests with the command that builds it, never skips.
//! Every program test exists once per version, as `hip_5_2::<test>`, `hip_6_4::<test>` and
//! `hip_7_2::<test>`.
//!
//! Completion modes: every program runs with `SOFTGPU_COMPLETION=inline` and with
//! `SOFTGPU_COMPLETION=thread` plus `SOFTGPU_COMPLETION_DELAY_US=200`.
//!
//! The shim and CLI come from the same target directory as this test binary's `softgpu`
//! (`CARGO_BIN_EXE_softgpu`), as in `tests/integration_raw_hsa.rs`.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

mod common;
use common::{Hip, Kill, Place, cli, kill_group, repo, shim, wait_within};

/// A program that has not exited after this long is hung: it is killed with its whole process
/// group and the test fails. Every program takes a few seconds at most; a hung inline run skips
/// the thread-mode run, so a suite where everything hangs still ends within CI's budget.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
/// Per-packet delay used for the completion-thread mode.
const THREAD_DELAY_US: &str = "200";
/// The reason code every record of a runtime blit kernel carries.
const BLIT_REASON: &str = "runtime_blit_kernel_not_executed";
const BLIT_PREFIX: &str = "__amd_rocclr_";
const SETUP_HINT: &str = "run ./scripts/setup (installs hipcc and libamdhip64-dev, HIP 5.2.3)";
/// Problems listed per run before the rest are summarised.
const MAX_PROBLEMS: usize = 60;

// ---------------------------------------------------------------------------
// HIP versions, completion modes, where things are
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Completion {
    Inline,
    /// A separate completion thread, with a per-packet delay.
    Thread,
}

const MODES: [Completion; 2] = [Completion::Inline, Completion::Thread];

impl Completion {
    fn label(self) -> &'static str {
        match self {
            Completion::Inline => "inline",
            Completion::Thread => "thread",
        }
    }
    fn env(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Completion::Inline => vec![("SOFTGPU_COMPLETION", "inline")],
            Completion::Thread => vec![
                ("SOFTGPU_COMPLETION", "thread"),
                ("SOFTGPU_COMPLETION_DELAY_US", THREAD_DELAY_US),
            ],
        }
    }
}

/// This test process's corner of a chroot of `scripts/sid-chroot` (HIP 6.4.3's sid chroot, or
/// the ROCm 7.2.4 one): `<root>/softgpu/integration_hip-<pid>/`, with the sources of
/// `integration/hip/` in `src/` and the host-built shim.
struct Corner {
    chroot: common::Chroot,
    work: Place,
    shim: Place,
}

/// The corner of `hip`'s chroot, set up once per test process; None for the host's HIP.
/// A chroot that is not ready fails the test with the command that builds it.
fn corner(hip: Hip) -> Option<&'static Corner> {
    static CORNERS: [OnceLock<Corner>; Hip::ALL.len()] = [const { OnceLock::new() }; 3];
    let chroot = hip.chroot()?;
    let i = Hip::ALL.iter().position(|h| *h == hip).unwrap();
    Some(CORNERS[i].get_or_init(|| {
        let ready = chroot.root.join(".softgpu-ready");
        let hint = format!("run {} (scripts/test does it)", chroot.build);
        let stamp = std::fs::read_to_string(&ready).unwrap_or_else(|_| {
            panic!(
                "the chroot with HIP {} is not ready ({} is missing): {hint}",
                hip.release(),
                ready.display()
            )
        });
        assert!(
            stamp.contains(chroot.hip_package),
            "the chroot at {} holds `{}`, not HIP {} ({}*): remove it and {hint}",
            chroot.root.display(),
            stamp.trim(),
            hip.version(),
            chroot.hip_package
        );
        let work = common::process_dir_in_chroot(&chroot.root, "integration_hip");
        std::fs::create_dir_all(work.host.join("src")).unwrap();
        for entry in std::fs::read_dir(repo().join("integration/hip")).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                std::fs::copy(&path, work.host.join("src").join(path.file_name().unwrap()))
                    .unwrap();
            }
        }
        let shim = work.join("libsoftgpu_hsa.so");
        std::fs::copy(self::shim(), &shim.host).unwrap();
        Corner { chroot, work, shim }
    }))
}

/// The directory for `hip`'s binaries and runs.
fn base(hip: Hip) -> Place {
    match corner(hip) {
        None => Place::host(
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join("integration_hip")
                .join(hip.label()),
        ),
        Some(c) => c.work.join(hip.label()),
    }
}

fn sub(p: &Place, name: &str) -> Place {
    p.join(name)
}

fn shim_for(hip: Hip) -> Place {
    match corner(hip) {
        None => Place::host(shim()),
        Some(c) => c.shim.clone(),
    }
}

/// A command that runs `argv` as seen by the program: directly on the host, or inside the
/// chroot through `scripts/sid-chroot [--rocm7] --run` (which execs, so the child's pid is the
/// program's). `env` replaces the whole environment.
fn command(hip: Hip, cwd: &Place, env: &[(String, String)], argv: &[String]) -> Command {
    match corner(hip) {
        None => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..])
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k, v)))
                .current_dir(&cwd.host);
            cmd
        }
        Some(c) => {
            let mut cmd = c.chroot.run_command();
            cmd.args(["/usr/bin/env", "-i", "-C", &cwd.seen])
                .args(env.iter().map(|(k, v)| format!("{k}={v}")))
                .args(argv);
            cmd
        }
    }
}

fn base_env() -> Vec<(String, String)> {
    vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("HOME".into(), "/root".into()),
    ]
}

// ---------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------

type Built = Result<Place, String>;
type BuildCache = Mutex<HashMap<(Hip, String), Arc<OnceLock<Built>>>>;

/// Build once per (HIP version, artifact) for the whole test process.
fn cached(hip: Hip, what: &str, build: impl FnOnce() -> Built) -> Place {
    static CACHE: OnceLock<BuildCache> = OnceLock::new();
    let cell = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry((hip, what.to_string()))
        .or_default()
        .clone();
    match cell.get_or_init(build) {
        Ok(p) => p.clone(),
        Err(e) => panic!("{e}"),
    }
}

fn src(hip: Hip, file: &str) -> String {
    format!("{}/{file}", include_dir(hip))
}

/// `integration/hip/` as the compiler sees it (the headers' directory too).
fn include_dir(hip: Hip) -> String {
    match corner(hip) {
        None => repo().join("integration/hip").display().to_string(),
        Some(c) => format!("{}/src", c.work.seen),
    }
}

fn hipcc(hip: Hip, args: Vec<String>, what: &str) -> Result<(), String> {
    if corner(hip).is_none() && !Path::new("/usr/bin/hipcc").exists() {
        return Err(format!("hipcc is not installed on the host: {SETUP_HINT}"));
    }
    let dir = base(hip);
    std::fs::create_dir_all(&dir.host).unwrap();
    let mut argv = vec!["hipcc".to_string()];
    argv.extend(args);
    let out = command(hip, &dir, &base_env(), &argv)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run hipcc ({}): {e}", hip.label()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} hipcc failed to build {what} ({}):\n{}\n{}",
            hip.label(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The libraries `integration/hip/<name>.cpp` is linked with besides HIP's own: hipRTC is in
/// `libhiprtc.so.6` and `.so.7` on HIP 6.4 and 7.2, and inside `libamdhip64.so.5` on HIP 5.2,
/// which has no `libhiprtc` (`hiprtc.cpp` reports which file holds it).
fn libs(hip: Hip, name: &str) -> &'static [&'static str] {
    match (name, hip) {
        ("hiprtc", Hip::V5_2) => &[],
        ("hiprtc", _) => &["-lhiprtc"],
        _ => &[],
    }
}

/// `integration/hip/<name>.cpp` built with `hipcc --offload-arch=gfx90a -O1` (and [`libs`]).
fn build(hip: Hip, name: &str) -> Place {
    cached(hip, name, || {
        let exe = sub(&sub(&base(hip), "bin"), name);
        std::fs::create_dir_all(exe.host.parent().unwrap()).unwrap();
        let include = include_dir(hip);
        let mut args: Vec<String> = vec![
            "--offload-arch=gfx90a".into(),
            "-O1".into(),
            "-Wall".into(),
            "-I".into(),
            include,
            src(hip, &format!("{name}.cpp")),
            "-o".into(),
            exe.seen.clone(),
        ];
        args.extend(libs(hip, name).iter().map(|l| l.to_string()));
        hipcc(hip, args, &format!("integration/hip/{name}.cpp"))?;
        Ok(exe)
    })
}

/// `integration/hip/<name>.cpp` built for AddressSanitizer (host code; device code has no
/// sanitizer on gfx90a without xnack+, and kernels never run anyway), as `<name>-asan`.
fn build_asan(hip: Hip, name: &str) -> Place {
    let what = format!("{name}-asan");
    cached(hip, &what, || {
        let exe = sub(&sub(&base(hip), "bin"), &what);
        std::fs::create_dir_all(exe.host.parent().unwrap()).unwrap();
        let include = include_dir(hip);
        hipcc(
            hip,
            vec![
                "--offload-arch=gfx90a".into(),
                "-O1".into(),
                "-g".into(),
                "-fsanitize=address".into(),
                "-fno-omit-frame-pointer".into(),
                "-I".into(),
                include,
                src(hip, &format!("{name}.cpp")),
                "-o".into(),
                exe.seen.clone(),
            ],
            &format!("integration/hip/{name}.cpp (-fsanitize=address)"),
        )?;
        Ok(exe)
    })
}

/// `integration/hip/module_kernels.cpp` built into a code object with `hipcc --genco`.
fn build_code_object(hip: Hip) -> Place {
    cached(hip, "module_kernels.co", || {
        let co = sub(&sub(&base(hip), "bin"), "module_kernels.co");
        std::fs::create_dir_all(co.host.parent().unwrap()).unwrap();
        hipcc(
            hip,
            vec![
                "--genco".into(),
                "--offload-arch=gfx90a".into(),
                "-O1".into(),
                src(hip, "module_kernels.cpp"),
                "-o".into(),
                co.seen.clone(),
            ],
            "integration/hip/module_kernels.cpp (--genco)",
        )?;
        Ok(co)
    })
}

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

/// What sits below the program: the shim as the runtime (`virtual`), or the shim over a
/// "real" runtime in `intercept` or `observe` mode. No GPU is here, so the real runtime is
/// stood in for by a second copy of SoftGPU, loaded as `libhsa-runtime64.so.1` from a directory
/// on `LD_LIBRARY_PATH` (see [`lower_dir`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setup {
    Virtual,
    Intercept,
    Observe,
}

impl Setup {
    fn label(self) -> &'static str {
        match self {
            Setup::Virtual => "virtual",
            Setup::Intercept => "intercept",
            Setup::Observe => "observe",
        }
    }
}

/// The label every record of an observe-mode capture carries.
const OBSERVED_LABEL: &str = "observed_forwarded_to_runtime";

/// One finished (or killed) run of a program under the shim.
struct Run {
    setup: Setup,
    /// `program [args] (hip-x.y, mode)`, for messages.
    what: String,
    hip: Hip,
    mode: Completion,
    pid: u32,
    /// None: killed after RUN_TIMEOUT.
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
    facts: BTreeMap<String, String>,
    dir: Place,
    /// `capture-<pid>.sgcap` in the run directory.
    capture: Place,
    /// Every `*.sgcap` file in the run directory after the run.
    captures: Vec<String>,
    records: Vec<Value>,
    /// Problems reading the capture back (inspect failed, incomplete capture, bad JSON).
    read_problems: Vec<String>,
    /// Processes of the program's group still running after it exited (then killed).
    stragglers: Vec<u32>,
}

impl Run {
    fn fact(&self, key: &str) -> Option<&str> {
        self.facts.get(key).map(String::as_str)
    }
    fn context(&self) -> String {
        format!(
            "--- {} stdout ---\n{}--- stderr ---\n{}--- capture {} ---",
            self.what,
            self.stdout,
            self.stderr,
            self.capture.host.display()
        )
    }
}

/// Run `exe` with `args` under the shim (extra environment `env` on top of the standard one),
/// in a fresh run directory named `tag`, then read its capture back.
fn run(
    hip: Hip,
    exe: &Place,
    args: &[String],
    mode: Completion,
    tag: &str,
    env: &[(&str, &str)],
) -> Run {
    let name = exe.host.file_name().unwrap().to_string_lossy().into_owned();
    let what = format!(
        "{name}{}{} ({}, completion {}{})",
        if args.is_empty() { "" } else { " " },
        args.join(" "),
        hip.label(),
        mode.label(),
        env.iter()
            .find(|(k, _)| *k == "SOFTGPU_MODE")
            .map(|(_, v)| format!(", mode {v} over a stand-in ROCr"))
            .unwrap_or_default()
    );
    let dir = sub(&sub(&base(hip), "runs"), &format!("{tag}-{}", mode.label()));
    let _ = std::fs::remove_dir_all(&dir.host);
    std::fs::create_dir_all(&dir.host).unwrap();
    let stdout_path = dir.host.join("stdout.txt");
    let stderr_path = dir.host.join("stderr.txt");

    let mut vars = base_env();
    let shim = shim_for(hip);
    for (k, v) in [
        ("LD_PRELOAD", shim.seen.as_str()),
        ("SOFTGPU_CAPTURE", &format!("{}/capture-%p.sgcap", dir.seen)),
        ("SOFTGPU_MODE", "virtual"),
        ("SOFTGPU_SUMMARY", "1"),
        ("SOFTGPU_LOG", "warn"),
    ] {
        vars.push((k.into(), v.into()));
    }
    for (k, v) in mode.env().into_iter().chain(env.iter().copied()) {
        vars.retain(|(key, _)| key != k);
        vars.push((k.into(), v.into()));
    }
    let mut argv = vec![exe.seen.clone()];
    argv.extend(args.iter().cloned());

    // Its own process group, so a child it forks can be found and killed with it.
    let mut child = command(hip, &dir, &vars, &argv)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).unwrap())
        .stderr(File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let pid = child.id();
    let status = wait_within(&mut child, RUN_TIMEOUT, Kill::Group);
    // Anything of its process group still running outlived the program (a forked child).
    let stragglers = group_members(pid);
    if !stragglers.is_empty() {
        kill_group(pid);
    }
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let facts = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("sg: "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut captures: Vec<String> = std::fs::read_dir(&dir.host)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sgcap"))
        .collect();
    captures.sort();
    let capture = sub(&dir, &format!("capture-{pid}.sgcap"));
    let setup = match vars
        .iter()
        .find(|(k, _)| k == "SOFTGPU_MODE")
        .map(|(_, v)| v.as_str())
    {
        Some("intercept") => Setup::Intercept,
        Some("observe") => Setup::Observe,
        _ => Setup::Virtual,
    };
    let mut run = Run {
        setup,
        what,
        hip,
        mode,
        pid,
        status,
        stdout,
        stderr,
        facts,
        dir,
        capture,
        captures,
        records: Vec::new(),
        read_problems: Vec::new(),
        stragglers,
    };
    if run.capture.host.is_file() {
        read_capture(&mut run);
    }
    run
}

/// Live (not zombie) processes whose process group is `pgid`, from /proc.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            out.push(pid);
        }
    }
    out
}

/// `softgpu inspect --format jsonl` on the run's capture.
fn read_capture(run: &mut Run) {
    let out = Command::new(cli())
        .arg("inspect")
        .arg(&run.capture.host)
        .args(["--format", "jsonl"])
        .output()
        .expect("cannot run softgpu inspect");
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        run.read_problems.push(format!(
            "softgpu inspect --format jsonl exited with {}: {}",
            out.status,
            err.trim()
        ));
        return;
    }
    if !err.trim().is_empty() {
        // Notably "capture is incomplete (no trailer ...)": the process did not finish it.
        run.read_problems.push(format!(
            "softgpu inspect warned about the capture: {}",
            err.trim()
        ));
    }
    for (i, line) in String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
    {
        match serde_json::from_str(line) {
            Ok(v) => run.records.push(v),
            Err(e) => run.read_problems.push(format!(
                "inspect JSONL line {} is not JSON ({e}): {line}",
                i + 1
            )),
        }
    }
}

// ---------------------------------------------------------------------------
// What a run must show
// ---------------------------------------------------------------------------

/// User kernel dispatches with one geometry, and how many of them.
#[derive(Clone, Debug)]
struct Kd {
    symbol: &'static str,
    name: &'static str,
    grid: [u64; 3],
    workgroup: [u64; 3],
    group_segment: u64,
    count: u64,
}

fn kd(
    symbol: &'static str,
    name: &'static str,
    grid: [u64; 3],
    workgroup: [u64; 3],
    group_segment: u64,
    count: u64,
) -> Kd {
    Kd {
        symbol,
        name,
        grid,
        workgroup,
        group_segment,
        count,
    }
}

#[derive(Clone, Debug, Default)]
struct Expect {
    /// Exactly these user dispatches (any other user dispatch is a problem).
    dispatches: Vec<Kd>,
    /// Blit kernel families (symbol prefixes) and exactly how many dispatches of each. A blit of
    /// no listed family is a problem.
    blits: Vec<(&'static str, u64)>,
    /// User dispatches that must be rejected, exactly this many, each with a reason containing
    /// the given text (any other rejected record is a problem).
    rejected: Vec<(Kd, &'static str)>,
    /// Facts the program must print with exactly these values.
    facts: Vec<(&'static str, String)>,
    /// How the program ends.
    ending: Ending,
}

/// How a program ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Ending {
    /// Its own exit: status 0 after `sg: done=1`, a complete capture, and the exit summary.
    #[default]
    Exit,
    /// HIP's queue error callback aborts it, as HIP 6.4's (CLR's `callbackQueue`) does for any
    /// error status a queue reports: killed by SIGABRT after HIP's `Callback: Queue 0x...
    /// aborting with error : ...` line, without `sg: done=1` and without the exit summary (no
    /// exit handler runs). The capture has no trailer; every record pushed before the abort is
    /// in it, those the writer had not encoded yet recovered from the live ring (see
    /// [`recovered_by_the_reader`]).
    HipAbort,
}

/// The start of the line HIP's queue error callback prints (CLR's `callbackQueue`, in
/// `rocdevice.cpp`: `Callback: Queue %p aborting with error : %s code: 0x%x`, after CLR's log
/// prefix), with the status string and code after it.
const HIP_QUEUE_CALLBACK: &str = "Callback: Queue 0x";
const HIP_QUEUE_CALLBACK_ABORTING: &str = " aborting with error : ";

/// The lines of `stderr` HIP's queue error callback printed.
fn hip_queue_callback_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(HIP_QUEUE_CALLBACK) && l.contains(HIP_QUEUE_CALLBACK_ABORTING))
        .collect()
}

/// How many records `softgpu inspect` says it recovered from the live ring of a capture whose
/// process ended without running its exit handlers (abort), and how many it shows: its warning
/// must be exactly that one (a cut after a whole frame or inside one, nothing missing).
fn recovered_by_the_reader(warning: &str) -> Option<(u64, u64)> {
    let rest = warning
        .strip_prefix("softgpu inspect warned about the capture: softgpu: warning: file ")?;
    let (_, rest) = rest.split_once(": capture is incomplete (")?;
    let rest = rest.strip_prefix(
        "no trailer: the process did not finish it: it ended without running its exit handlers \
         (abort, _exit, or a kill); ",
    )?;
    let rest = match rest.strip_prefix("the file ends after a whole frame; ") {
        Some(r) => r,
        None => {
            rest.strip_prefix("the file is cut at offset ")?
                .split_once("; ")?
                .1
        }
    };
    let (recovered, rest) =
        rest.split_once(" records recovered from the capture's live ring); showing the ")?;
    let shown = rest.strip_suffix(" records it holds")?;
    Some((recovered.parse().ok()?, shown.parse().ok()?))
}

type DispatchKey = (String, String, [u64; 3], [u64; 3], u64);

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

fn json_triple(v: &Value) -> Option<[u64; 3]> {
    let a = v.as_array()?;
    if a.len() != 3 {
        return None;
    }
    Some([a[0].as_u64()?, a[1].as_u64()?, a[2].as_u64()?])
}

fn reasons(r: &Value) -> Option<Vec<&str>> {
    r["reasons"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
}

/// The codes of a record's pointer findings that report a problem (all but
/// `pointer_in_allocation` and `pointer_null`, which is recorded but legal: kernels, HIP's blits
/// among them, take null for optional buffers), in argument order.
fn problem_findings(r: &Value) -> Vec<String> {
    r["arg_findings"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f["code"].as_str())
                .filter(|c| *c != "pointer_in_allocation" && *c != "pointer_null")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn is_blit(r: &Value) -> bool {
    r["kernel_symbol"]
        .as_str()
        .is_some_and(|s| s.starts_with(BLIT_PREFIX))
}

/// The exit summary line's numbers: (validated, rejected, barriers, capture path).
fn parse_summary(stderr: &str) -> Result<(u64, u64, u64, String), String> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("softgpu: ") && l.contains(" dispatches validated "))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => return Err("no exit summary line (`softgpu: N dispatches validated ...`)".into()),
        many => return Err(format!("{} exit summary lines, expected one", many.len())),
    };
    let bad = || format!("malformed exit summary line: {line:?}");
    let rest = line.strip_prefix("softgpu: ").ok_or_else(bad)?;
    let (n, rest) = rest
        .split_once(
            " dispatches validated (diagnostic_complete_no_execution, not_kernel_success), ",
        )
        .ok_or_else(bad)?;
    let (m, rest) = rest.split_once(" rejected, ").ok_or_else(bad)?;
    let (b, path) = rest.split_once(" barriers; capture: ").ok_or_else(bad)?;
    Ok((
        n.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        b.parse().map_err(|_| bad())?,
        path.to_string(),
    ))
}

/// The observe-mode exit summary's numbers: (dispatches, barriers, capture path).
fn parse_observe_summary(stderr: &str) -> Result<(u64, u64, String), String> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("softgpu: observe mode: "))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => {
            return Err("no observe-mode exit summary line (`softgpu: observe mode: ...`)".into());
        }
        many => return Err(format!("{} exit summary lines, expected one", many.len())),
    };
    if stderr.contains("diagnostic_complete_no_execution") {
        return Err("an observe-mode run printed the diagnostic completion label".into());
    }
    let bad = || format!("malformed observe exit summary line: {line:?}");
    let rest = line
        .strip_prefix("softgpu: observe mode: ")
        .ok_or_else(bad)?;
    // The runtime below is the SoftGPU stand-in: the summary must not say kernels ran.
    if line.contains("kernels ran") {
        return Err(format!(
            "the observe summary over the SoftGPU stand-in says kernels ran: {line:?}"
        ));
    }
    let (d, rest) = rest
        .split_once(
            " dispatches observed and forwarded to the runtime below, a SoftGPU stand-in \
             (kernels did not run there either), ",
        )
        .ok_or_else(bad)?;
    let (_, rest) = rest.split_once(" with findings, ").ok_or_else(bad)?;
    let (b, path) = rest.split_once(" barriers; capture: ").ok_or_else(bad)?;
    Ok((
        d.parse().map_err(|_| bad())?,
        b.parse().map_err(|_| bad())?,
        path.to_string(),
    ))
}

/// Everything wrong with `run` against `want`. Empty means the run is as expected.
fn problems(run: &Run, want: &Expect) -> Vec<String> {
    let mut p = Vec::new();

    // The program's own verdict.
    let aborted = want.ending == Ending::HipAbort;
    match run.status {
        None => p.push(format!(
            "did not exit within {RUN_TIMEOUT:?} (hung; killed)"
        )),
        Some(s) if aborted => {
            use std::os::unix::process::ExitStatusExt;
            if s.signal() != Some(libc::SIGABRT) {
                p.push(format!(
                    "exited with {s}, expected to be killed by SIGABRT from HIP's queue error \
                     callback"
                ));
            }
        }
        Some(s) if !s.success() => p.push(format!("exited with {s}; its own checks say why")),
        Some(_) => {}
    }
    for line in run.stderr.lines().filter(|l| l.starts_with("FAIL")) {
        p.push(format!("the program reports: {line}"));
    }
    if aborted {
        if run.fact("done").is_some() {
            p.push("the program printed `sg: done=` but HIP must have aborted it before".into());
        }
        if hip_queue_callback_lines(&run.stderr).len() != 1 {
            p.push(format!(
                "HIP's queue error callback must print one line `...{HIP_QUEUE_CALLBACK}...\
                 {HIP_QUEUE_CALLBACK_ABORTING}...` before aborting, found {:?}",
                hip_queue_callback_lines(&run.stderr)
            ));
        }
    } else if run.fact("done") != Some("1") {
        p.push("the program did not finish its checks (no `sg: done=1`)".into());
    }
    if run
        .fact("hip_version")
        .is_some_and(|v| v != run.hip.version())
    {
        p.push(format!(
            "built against HIP {}, expected {}",
            run.fact("hip_version").unwrap(),
            run.hip.version()
        ));
    }
    for (key, value) in &want.facts {
        match run.fact(key) {
            Some(v) if v == value => {}
            Some(v) => p.push(format!("fact {key}={v}, expected {value}")),
            None => p.push(format!("no `sg: {key}=` fact (expected {value})")),
        }
    }
    if !run.stragglers.is_empty() {
        p.push(format!(
            "processes of the program's group were still running after it exited (killed): {:?}",
            run.stragglers
        ));
    }
    if run.stderr.contains("panicked") {
        p.push("a panic message reached stderr".into());
    }
    if run.stderr.contains("SOFTGPU_COMPLETION") {
        p.push(
            "the shim complained about SOFTGPU_COMPLETION*: the completion mode was not taken"
                .into(),
        );
    }
    if run.stdout.contains("SG-KERNEL-PRINTF") || run.stderr.contains("SG-KERNEL-PRINTF") {
        p.push("a kernel's printf output appeared, but kernels never run".into());
    }

    // One capture, this process's own.
    let own = run
        .capture
        .host
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    if !run.captures.contains(&own) {
        p.push(format!(
            "no capture file {own} for the program's pid {} in {}",
            run.pid,
            run.dir.host.display()
        ));
    }
    let others: Vec<&String> = run.captures.iter().filter(|c| **c != own).collect();
    if !others.is_empty() {
        p.push(format!(
            "other capture files appeared (a child process captured): {others:?}"
        ));
    }
    // An aborted program leaves a capture without a trailer: `softgpu inspect` says so, and how
    // many records it recovered from the live ring; nothing else may be wrong with it.
    let mut recovered: Option<u64> = None;
    for w in &run.read_problems {
        match recovered_by_the_reader(w) {
            Some((n, shown)) if aborted && recovered.is_none() => {
                recovered = Some(n);
                if shown != run.records.len() as u64 {
                    p.push(format!(
                        "inspect says it shows {shown} records, but printed {}",
                        run.records.len()
                    ));
                }
            }
            _ => p.push(w.clone()),
        }
    }
    if aborted && recovered.is_none() && run.captures.contains(&own) {
        p.push(
            "inspect did not warn that the capture is incomplete (no trailer: the process ended \
             without running its exit handlers), but HIP aborted the program"
                .into(),
        );
    }
    if !run.captures.contains(&own) {
        return p;
    }

    // Record by record.
    let recs = &run.records;
    let mut by_seq: Vec<&Value> = recs.iter().collect();
    by_seq.sort_by_key(|r| r["seq"].as_u64().unwrap_or(u64::MAX));
    let mut next_index: BTreeMap<String, u64> = BTreeMap::new();
    let mut user: BTreeMap<DispatchKey, u64> = BTreeMap::new();
    let mut blits: BTreeMap<String, u64> = BTreeMap::new();
    let mut user_rejected: BTreeMap<DispatchKey, (u64, Vec<String>)> = BTreeMap::new();
    let (mut validated, mut barriers, mut vendor, mut rejected) = (0u64, 0u64, 0u64, 0u64);
    // Records of an aborted program recovered from the live ring: the writer thread never saw
    // them, so their kernel arguments are lost (the arena was process memory), their kernarg
    // class is `foreign_opaque`, and a queue whose first records it never wrote has no target.
    let mut recovered_seen = 0u64;
    for (i, r) in by_seq.iter().enumerate() {
        let name = r["kernel_name"].as_str().unwrap_or("");
        let at = format!("record seq={} ({} {name})", r["seq"], r["type"]);
        if r["seq"].as_u64() != Some(i as u64) {
            p.push(format!(
                "{at}: seq should be {i} (0, 1, 2, ... without gaps)"
            ));
        }
        if r["pid"].as_u64() != Some(u64::from(run.pid)) {
            p.push(format!(
                "{at}: pid {} but the program's pid is {}",
                r["pid"], run.pid
            ));
        }
        // Per queue, every packet once, in index order, from 0.
        let queue = r["queue_id"].to_string();
        let want_index = next_index.entry(queue.clone()).or_insert(0);
        if r["packet_index"].as_u64() != Some(*want_index) {
            p.push(format!(
                "{at}: packet_index {} on queue {queue}, expected {want_index} (lost, repeated \
                 or out-of-order packet)",
                r["packet_index"]
            ));
        }
        *want_index = r["packet_index"].as_u64().unwrap_or(*want_index) + 1;

        let observed = run.setup == Setup::Observe;
        match (r["status"].as_str(), r["label"].as_str()) {
            (Some("validated"), Some("diagnostic_complete_no_execution")) if !observed => {}
            (Some("validated"), Some(OBSERVED_LABEL)) if observed => {}
            (Some("rejected"), Some(l))
                if (!observed && l == "diagnostic_rejected")
                    || (observed && l == OBSERVED_LABEL) =>
            {
                rejected += 1;
                // Only user dispatches the expectation names may be rejected (checked below).
                if r["type"].as_str() != Some("kernel_dispatch") || is_blit(r) {
                    p.push(format!("{at}: rejected, reasons {}", r["reasons"]));
                }
            }
            (s, l) => p.push(format!("{at}: status {s:?} with label {l:?}")),
        }
        match r["raw"].as_str() {
            Some(raw)
                if raw.len() == 128
                    && raw
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => {}
            _ => p.push(format!("{at}: raw is not 128 lower-case hex characters")),
        }
        let got_reasons = reasons(r);
        let from_the_ring = recovered.is_some()
            && (r["target"].is_null() || r["kernarg_state"].as_str() == Some("lost"));
        if from_the_ring {
            recovered_seen += 1;
        }
        match r["type"].as_str().unwrap_or("") {
            "kernel_dispatch" if from_the_ring => {
                if r["status"].as_str() == Some("validated") {
                    validated += 1;
                }
                if r["kernarg_state"].as_str() != Some("lost")
                    || r["kernarg_class"].as_str() != Some("foreign_opaque")
                    || r["args"].as_array().is_some_and(|a| !a.is_empty())
                {
                    p.push(format!(
                        "{at}: recovered from the live ring, but kernarg_state {} kernarg_class \
                         {} args {}: expected \"lost\", \"foreign_opaque\", none",
                        r["kernarg_state"], r["kernarg_class"], r["args"]
                    ));
                }
                if !(r["target"].is_null() || r["target"].as_str() == Some("gfx90a")) {
                    p.push(format!(
                        "{at}: target {}, expected \"gfx90a\" or null",
                        r["target"]
                    ));
                }
                let symbol = r["kernel_symbol"].as_str();
                let kname = r["kernel_name"].as_str();
                let key = (
                    symbol.unwrap_or("<null>").to_string(),
                    kname.unwrap_or("<null>").to_string(),
                    json_triple(&r["grid"]).unwrap_or([0; 3]),
                    json_triple(&r["workgroup"]).unwrap_or([0; 3]),
                    r["group_segment_size"].as_u64().unwrap_or(u64::MAX),
                );
                if is_blit(r) {
                    *blits.entry(key.0).or_default() += 1;
                } else if r["status"].as_str() == Some("rejected") {
                    let e = user_rejected.entry(key).or_default();
                    e.0 += 1;
                    e.1.push(r["reasons"].to_string());
                } else {
                    if got_reasons.as_deref() != Some(&[][..]) {
                        p.push(format!(
                            "{at}: a user kernel with reasons {}, expected none",
                            r["reasons"]
                        ));
                    }
                    *user.entry(key).or_default() += 1;
                }
            }
            "kernel_dispatch" => {
                if r["status"].as_str() == Some("validated") {
                    validated += 1;
                }
                // These programs pass only valid pointers, and HIP's blits
                // too: every pointer check is clean (integration/hip/lint.cpp
                // makes each problem finding on purpose, in its own test).
                let bad = problem_findings(r);
                if !bad.is_empty() {
                    p.push(format!(
                        "{at}: pointer findings {bad:?} (call {}), expected only \
                         pointer_in_allocation and pointer_null",
                        r["call"]
                    ));
                }
                let symbol = r["kernel_symbol"].as_str();
                let kname = r["kernel_name"].as_str();
                match (symbol, kname) {
                    (Some(s), Some(n))
                        if s.ends_with(".kd") && !n.is_empty() && !n.ends_with(".kd") => {}
                    _ => p.push(format!(
                        "{at}: kernel_symbol {} / kernel_name {}: both must be known (symbol \
                         ending in .kd, name without it)",
                        r["kernel_symbol"], r["kernel_name"]
                    )),
                }
                if r["target"].as_str() != Some("gfx90a") {
                    p.push(format!("{at}: target {}, expected \"gfx90a\"", r["target"]));
                }
                let grid = json_triple(&r["grid"]);
                let wg = json_triple(&r["workgroup"]);
                let group = r["group_segment_size"].as_u64();
                if grid.is_none() || wg.is_none() || group.is_none() {
                    p.push(format!(
                        "{at}: grid {} workgroup {} group_segment_size {}: not numbers",
                        r["grid"], r["workgroup"], r["group_segment_size"]
                    ));
                }
                if is_blit(r) {
                    // HIP 6.4 launches __amd_rocclr_copyBuffer with more
                    // work-items than the kernel's declared max flat workgroup
                    // size; for the runtime's own kernels that is a recorded
                    // finding (the packet stays validated).
                    // In observe mode the real runtime ran the blit: no "not executed".
                    let blit_ok = got_reasons.as_deref().is_some_and(|rs| {
                        let rest = if run.setup == Setup::Observe {
                            rs
                        } else if rs.first() == Some(&BLIT_REASON) {
                            &rs[1..]
                        } else {
                            return false;
                        };
                        rest.iter()
                            .all(|x| *x == "workgroup_size_exceeds_kernel_max")
                    });
                    if !blit_ok {
                        p.push(format!(
                            "{at}: a runtime blit kernel with reasons {}, expected [\"{BLIT_REASON}\"]",
                            r["reasons"]
                        ));
                    }
                    *blits.entry(symbol.unwrap_or("").to_string()).or_default() += 1;
                } else {
                    let is_rejected = r["status"].as_str() == Some("rejected");
                    if !is_rejected && got_reasons.as_deref() != Some(&[][..]) {
                        p.push(format!(
                            "{at}: a user kernel with reasons {}, expected none",
                            r["reasons"]
                        ));
                    }
                    // Over a real runtime the kernargs are its memory, opaque to the shim.
                    let want_class = if run.setup == Setup::Virtual {
                        "softgpu"
                    } else {
                        "foreign_opaque"
                    };
                    if r["kernarg_class"].as_str() != Some(want_class) {
                        p.push(format!(
                            "{at}: kernarg_class {}, expected {want_class:?} (HIP allocates \
                             kernargs from the runtime's pools)",
                            r["kernarg_class"]
                        ));
                    }
                    let key = (
                        symbol.unwrap_or("<null>").to_string(),
                        kname.unwrap_or("<null>").to_string(),
                        grid.unwrap_or([0; 3]),
                        wg.unwrap_or([0; 3]),
                        group.unwrap_or(u64::MAX),
                    );
                    if is_rejected {
                        let e = user_rejected.entry(key).or_default();
                        e.0 += 1;
                        e.1.push(r["reasons"].to_string());
                    } else {
                        *user.entry(key).or_default() += 1;
                    }
                }
            }
            "barrier_and" | "barrier_or" => {
                barriers += 1;
                if got_reasons.as_deref() != Some(&[][..]) {
                    p.push(format!("{at}: a barrier with reasons {}", r["reasons"]));
                }
            }
            // AMD's vendor-specific packets (HIP 6 submits barrier-value packets).
            "vendor_specific" => {
                vendor += 1;
                if r["status"].as_str() == Some("validated")
                    && got_reasons.as_deref() != Some(&[][..])
                {
                    p.push(format!(
                        "{at}: a vendor packet with reasons {}",
                        r["reasons"]
                    ));
                }
            }
            other => p.push(format!(
                "{at}: type {other:?}; HIP submits only kernel dispatches, barriers and AMD \
                 vendor packets"
            )),
        }
    }

    // Exact user dispatches.
    let mut expected: BTreeMap<DispatchKey, u64> = BTreeMap::new();
    for k in &want.dispatches {
        *expected
            .entry((
                k.symbol.to_string(),
                k.name.to_string(),
                k.grid,
                k.workgroup,
                k.group_segment,
            ))
            .or_default() += k.count;
    }
    for (key, n) in &expected {
        let got = user.get(key).copied().unwrap_or(0);
        if got != *n {
            p.push(format!(
                "{got} dispatches of {} `{}` grid {:?} workgroup {:?} group_segment_size {}, \
                 expected {n}",
                key.0, key.1, key.2, key.3, key.4
            ));
        }
    }
    for (key, n) in &user {
        if !expected.contains_key(key) {
            p.push(format!(
                "{n} unexpected dispatches of {} `{}` grid {:?} workgroup {:?} \
                 group_segment_size {}",
                key.0, key.1, key.2, key.3, key.4
            ));
        }
    }

    // Rejected user dispatches: exactly the expected ones, for the expected reason.
    let mut want_rejected: BTreeMap<DispatchKey, (u64, &str)> = BTreeMap::new();
    for (k, reason) in &want.rejected {
        let key = (
            k.symbol.to_string(),
            k.name.to_string(),
            k.grid,
            k.workgroup,
            k.group_segment,
        );
        want_rejected.entry(key).or_insert((0, reason)).0 += k.count;
    }
    for (key, (n, reason)) in &want_rejected {
        let (got, reasons) = user_rejected.get(key).cloned().unwrap_or_default();
        if got != *n {
            p.push(format!(
                "{got} rejected dispatches of {} `{}` grid {:?} workgroup {:?} \
                 group_segment_size {}, expected {n} (rejected for {reason})",
                key.0, key.1, key.2, key.3, key.4
            ));
        }
        for rs in reasons.iter().filter(|rs| !rs.contains(reason)) {
            p.push(format!(
                "a rejected dispatch of `{}` has reasons {rs}, expected one containing {reason:?}",
                key.1
            ));
        }
    }
    for (key, (n, reasons)) in &user_rejected {
        if !want_rejected.contains_key(key) {
            p.push(format!(
                "{n} dispatches of {} `{}` grid {:?} workgroup {:?} group_segment_size {} were \
                 rejected ({}), expected them validated or absent",
                key.0,
                key.1,
                key.2,
                key.3,
                key.4,
                reasons.join(", ")
            ));
        }
    }

    // Blit kernels: the expected families, nothing else.
    for (family, min) in &want.blits {
        let got: u64 = blits
            .iter()
            .filter(|(s, _)| s.starts_with(family))
            .map(|(_, n)| n)
            .sum();
        if got != *min {
            p.push(format!(
                "{got} blit dispatches of {family}*, expected {min} (blits seen: {blits:?})"
            ));
        }
    }
    for (symbol, n) in &blits {
        if !want.blits.iter().any(|(f, _)| symbol.starts_with(f)) {
            p.push(format!(
                "{n} unexpected blit dispatches of {symbol} (expected families: {:?})",
                want.blits
            ));
        }
    }

    if let Some(n) = recovered
        && recovered_seen > n
    {
        p.push(format!(
            "{recovered_seen} records look recovered from the live ring (no target, or kernel \
             arguments lost), but inspect recovered {n}"
        ));
    }

    // The exit summary agrees with the records; an aborted program prints none.
    if aborted {
        if run.stderr.lines().any(|l| l.starts_with("softgpu: ")) {
            p.push(
                "an exit summary line (`softgpu: ...`) was printed, but HIP aborted the program \
                 (no exit handler runs)"
                    .into(),
            );
        }
        return p;
    }
    if run.setup == Setup::Observe {
        match parse_observe_summary(&run.stderr) {
            Err(e) => p.push(e),
            Ok((d, b, path)) => {
                let b_ok = b == barriers || b == barriers + vendor;
                if d != validated + rejected || !b_ok || path != run.capture.seen {
                    p.push(format!(
                        "observe exit summary says {d} dispatches, {b} barriers, capture {path}; \
                         the records say {}, {barriers}, {}",
                        validated + rejected,
                        run.capture.seen
                    ));
                }
            }
        }
        return p;
    }
    match parse_summary(&run.stderr) {
        Err(e) => p.push(e),
        Ok((v, m, b, path)) => {
            // Whether AMD vendor packets count as barriers in the summary is the shim's choice.
            let b_ok = b == barriers || b == barriers + vendor;
            if (v, m) != (validated, rejected) || !b_ok || path != run.capture.seen {
                p.push(format!(
                    "exit summary says {v} validated, {m} rejected, {b} barriers, capture {path}; \
                     the records say {validated}, {rejected}, {barriers}, {}",
                    run.capture.seen
                ));
            }
        }
    }
    p
}

/// Run `name` in both completion modes and check each run; panic with every problem found.
fn check_program(hip: Hip, name: &str, args: &[String], want: &Expect) {
    check_runs(hip, name, args, name, |_| want.clone(), |_, _| {});
}

/// As `check_program`, with a run directory tag, the expectation chosen per run (from what the
/// program says it did), and extra checks on each run.
fn check_runs(
    hip: Hip,
    name: &str,
    args: &[String],
    tag: &str,
    want: impl Fn(&Run) -> Expect,
    extra: impl Fn(&Run, &mut Vec<String>),
) {
    check_runs_env(hip, name, args, tag, &[], want, extra)
}

/// As `check_runs`, with extra environment for the program (virtual mode only).
fn check_runs_env(
    hip: Hip,
    name: &str,
    args: &[String],
    tag: &str,
    env: &[(&str, &str)],
    want: impl Fn(&Run) -> Expect,
    extra: impl Fn(&Run, &mut Vec<String>),
) {
    if FORWARDED.with(|f| f.get()) {
        return check_forwarded(hip, name, args, tag, want, extra);
    }
    let exe = build(hip, name);
    let mut report = Vec::new();
    let mut hung = false;
    for mode in MODES {
        if hung {
            report.push(format!(
                "{name} ({}, completion {}): not run, because the previous mode hung",
                hip.label(),
                mode.label()
            ));
            continue;
        }
        let run = run(hip, &exe, args, mode, tag, env);
        hung = run.status.is_none();
        let mut p = problems(&run, &want(&run));
        extra(&run, &mut p);
        if !p.is_empty() {
            let n = p.len();
            p.truncate(MAX_PROBLEMS);
            let records: Vec<String> = run.records.iter().take(30).map(compact).collect();
            report.push(format!(
                "{}: {n} problem(s):\n  {}{}\nrecords (first 30 of {}):\n  {}\n{}",
                run.what,
                p.join("\n  "),
                if n > MAX_PROBLEMS { "\n  ..." } else { "" },
                run.records.len(),
                records.join("\n  "),
                run.context()
            ));
        }
    }
    assert!(report.is_empty(), "\n{}", report.join("\n\n"));
}

thread_local! {
    /// Set by [`over_a_stand_in_rocr`]: `check_runs` on this test's thread runs the program in
    /// intercept and observe mode instead of the two completion modes.
    static FORWARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run a program test in intercept and observe mode over a stand-in real runtime.
fn over_a_stand_in_rocr(hip: Hip, test: impl FnOnce(Hip)) {
    FORWARDED.with(|f| f.set(true));
    test(hip);
}

/// A directory holding a copy of the shim named `libhsa-runtime64.so.1`: on `LD_LIBRARY_PATH`
/// it stands in for the real ROCr below the preloaded shim. A copy, not a link, so the dynamic
/// loader sees two distinct objects (it would merge two names for one file).
fn lower_dir(hip: Hip) -> Place {
    cached(hip, "lower", || {
        let dir = sub(&base(hip), "lower");
        std::fs::create_dir_all(&dir.host).unwrap();
        let lib = dir.host.join("libhsa-runtime64.so.1");
        let _ = std::fs::remove_file(&lib);
        std::fs::copy(shim_for(hip).host, &lib).map_err(|e| format!("copy the shim: {e}"))?;
        Ok(dir)
    })
}

/// The call counts both copies of SoftGPU appended (SOFTGPU_CALL_COUNTS), as (shim, lower).
fn call_counts(path: &Path) -> Result<(Value, Value), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("no call-count file {}: {e}", path.display()))?;
    let lines: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| format!("bad call-count line {l}: {e}")))
        .collect::<Result<_, _>>()?;
    let pick = |role: &str| {
        let v: Vec<&Value> = lines.iter().filter(|l| l["role"] == role).collect();
        match v.as_slice() {
            [one] => Ok((*one).clone()),
            _ => Err(format!(
                "{} `{role}` lines in {}, expected one: {text}",
                v.len(),
                path.display()
            )),
        }
    };
    Ok((pick("shim")?, pick("lower")?))
}

fn count(v: &Value, kind: &str, name: &str) -> u64 {
    v[kind][name].as_u64().unwrap_or(0)
}

/// Every forwarded call reached the stand-in runtime, the queues went where the mode says, and
/// the stand-in itself stayed a plain runtime.
fn forwarding_problems(run: &Run, counts: &Path) -> Vec<String> {
    let mut p = Vec::new();
    let (shim, lower) = match call_counts(counts) {
        Ok(x) => x,
        Err(e) => return vec![e],
    };
    if shim["mode"] != run.setup.label() {
        p.push(format!(
            "the shim reports mode {}, expected {}",
            shim["mode"],
            run.setup.label()
        ));
    }
    if lower["mode"] != "virtual" {
        p.push(format!(
            "the stand-in runtime reports mode {}, expected virtual",
            lower["mode"]
        ));
    }
    let mut names: Vec<String> = Vec::new();
    for v in [&shim["forwarded"], &lower["received"]] {
        if let Some(o) = v.as_object() {
            names.extend(o.keys().cloned());
        }
    }
    names.sort();
    names.dedup();
    // The shim writes its counts at exit before the stand-in does (exit handlers run in reverse
    // order of registration). A background thread of HIP's (the hostcall listener behind
    // printf) may still be waiting on a signal in between: such a call reaches the stand-in
    // after the shim's report, so for the wait functions the stand-in may count a few more.
    // Every other count must be equal, and none may be lower below.
    let mut mismatched = Vec::new();
    for n in &names {
        let (f, r) = (count(&shim, "forwarded", n), count(&lower, "received", n));
        let in_flight_ok = n.starts_with("hsa_signal_wait_") && r > f && r - f <= 2;
        if f != r && !in_flight_ok {
            mismatched.push(format!("{n}: shim forwarded {f}, stand-in received {r}"));
        }
    }
    if !mismatched.is_empty() {
        p.push(format!(
            "forwarded calls did not all arrive: {}",
            mismatched.join("; ")
        ));
    }
    let total: u64 = names.iter().map(|n| count(&shim, "forwarded", n)).sum();
    if total < 50 {
        p.push(format!(
            "only {total} calls were forwarded: HIP did not run over the stand-in"
        ));
    }
    for n in [
        "hsa_init",
        "hsa_iterate_agents",
        "hsa_amd_memory_pool_allocate",
    ] {
        if count(&lower, "received", n) == 0 {
            p.push(format!("the stand-in runtime never received {n}"));
        }
    }
    let created = count(&shim, "received", "hsa_queue_create");
    let below = count(&lower, "received", "hsa_queue_create");
    // HIP 6.4 creates its queues lazily: a program that dispatches nothing may create none.
    let created_any = created > 0 || !run.records.is_empty();
    match run.setup {
        Setup::Intercept if created_any && (created == 0 || below != 0) => p.push(format!(
            "intercept: the program created {created} queues and {below} reached the stand-in; \
             the shim must own every GPU queue"
        )),
        Setup::Observe if created_any && (created == 0 || below != created) => p.push(format!(
            "observe: the program created {created} queues, {below} reached the stand-in; \
             observe keeps the real queues"
        )),
        _ => {}
    }
    if shim["reentries"].as_u64().unwrap_or(0) == 0 {
        p.push(
            "no re-entry was counted, but HIP's hsa_iterate_agents callbacks call back into the \
             shim while the real runtime is iterating"
                .into(),
        );
    }
    p
}

/// `softgpu diff A B --level LEVEL`: problems unless it says SAME (exit 0).
fn diff_problems(a: &Run, b: &Run, level: &str) -> Vec<String> {
    let out = Command::new(cli())
        .arg("diff")
        .arg(&a.capture.host)
        .arg(&b.capture.host)
        .args(["--level", level])
        .output()
        .expect("cannot run softgpu diff");
    if out.status.code() == Some(0) {
        return Vec::new();
    }
    vec![format!(
        "softgpu diff --level {level} of the virtual capture and this one exited {}:\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )]
}

/// The forwarded form of `check_runs`: a virtual reference run, then the program in intercept
/// and in observe mode over the stand-in runtime. Each forwarded run must pass the same checks
/// as a virtual run (with the mode's labels), every forwarded call must reach the stand-in, and
/// its capture must match the reference under `softgpu diff --level count` and `--level order`
/// (order only for single-threaded programs: threads race for HIP's queues).
fn check_forwarded(
    hip: Hip,
    name: &str,
    args: &[String],
    tag: &str,
    want: impl Fn(&Run) -> Expect,
    extra: impl Fn(&Run, &mut Vec<String>),
) {
    let exe = build(hip, name);
    let lower = lower_dir(hip);
    let mut report = Vec::new();
    let reference = run(
        hip,
        &exe,
        args,
        Completion::Inline,
        &format!("{tag}-reference"),
        &[],
    );
    // The reference ends as the program must (HIP 6.4's queue error callback may abort it).
    let ended_right = match want(&reference).ending {
        Ending::Exit => reference.status.is_some_and(|s| s.success()),
        Ending::HipAbort => {
            use std::os::unix::process::ExitStatusExt;
            reference.status.and_then(|s| s.signal()) == Some(libc::SIGABRT)
        }
    };
    if !ended_right || !reference.capture.host.is_file() {
        panic!("the virtual reference run failed:\n{}", reference.context());
    }
    for setup in [Setup::Intercept, Setup::Observe] {
        let run_tag = format!("{tag}-{}", setup.label());
        let dir = sub(
            &sub(&base(hip), "runs"),
            &format!("{run_tag}-{}", Completion::Inline.label()),
        );
        let counts_seen = format!("{}/calls.jsonl", dir.seen);
        let env = [
            ("SOFTGPU_MODE", setup.label()),
            ("LD_LIBRARY_PATH", lower.seen.as_str()),
            ("SOFTGPU_CALL_COUNTS", counts_seen.as_str()),
        ];
        let r = run(hip, &exe, args, Completion::Inline, &run_tag, &env);
        let want_r = want(&r);
        let mut p = problems(&r, &want_r);
        extra(&r, &mut p);
        let counts = r.dir.host.join("calls.jsonl");
        match want_r.ending {
            Ending::Exit => p.extend(forwarding_problems(&r, &counts)),
            // Both copies of SoftGPU write their call counts from an exit handler, and none runs
            // after abort(): what reached the stand-in shows in the records (their labels and
            // kernarg classes) and in the diffs against the reference below.
            Ending::HipAbort => {
                if counts.exists() {
                    p.push(format!(
                        "{} exists, but HIP aborted the program before any exit handler ran",
                        counts.display()
                    ));
                }
            }
        }
        if r.capture.host.is_file() {
            p.extend(diff_problems(&reference, &r, "count"));
            if name != "threads" {
                p.extend(diff_problems(&reference, &r, "order"));
            }
        }
        if !p.is_empty() {
            let n = p.len();
            p.truncate(MAX_PROBLEMS);
            let records: Vec<String> = r.records.iter().take(30).map(compact).collect();
            report.push(format!(
                "{}: {n} problem(s):\n  {}\nrecords (first 30 of {}):\n  {}\n{}",
                r.what,
                p.join("\n  "),
                r.records.len(),
                records.join("\n  "),
                r.context()
            ));
        }
    }
    assert!(report.is_empty(), "\n{}", report.join("\n\n"));
}

/// A record without its raw bytes, for failure messages.
fn compact(r: &Value) -> String {
    let mut r = r.clone();
    if let Some(o) = r.as_object_mut() {
        o.remove("raw");
        o.remove("header");
    }
    r.to_string()
}

// ---------------------------------------------------------------------------
// The programs
// ---------------------------------------------------------------------------

fn facts(list: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    list.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

fn example(hip: Hip) {
    let want = Expect {
        dispatches: vec![kd(
            "_Z4vaddPKfS0_Pfi.kd",
            "vadd(float const*, float const*, float*, int)",
            [1 << 20, 1, 1],
            [256, 1, 1],
            0,
            1,
        )],
        rejected: vec![],
        blits: vec![],
        facts: facts(&[("kernel_output", "unchanged"), ("launches.vadd", "1")]),
        ending: Ending::Exit,
    };
    check_program(hip, "example", &[], &want);
}

fn memcpy(hip: Hip) {
    let want = Expect {
        dispatches: vec![],
        // hipMemset, the device-to-device copy, hipStreamWriteValue32, hipStreamWaitValue32.
        rejected: vec![],
        blits: vec![
            ("__amd_rocclr_fillBuffer", 1),
            ("__amd_rocclr_copyBuffer", 1),
            ("__amd_rocclr_streamOpsWrite", 1),
            ("__amd_rocclr_streamOpsWait", 1),
        ],
        facts: facts(&[
            ("pageable", "ok"),
            ("pinned", "ok"),
            ("registered", "ok"),
            ("host_to_host", "ok"),
            ("memcpy2d", "ok"),
            ("symbols", "ok"),
            ("copies_checked", "70"),
            // The blits were recorded and did not run: their destinations are unchanged.
            ("memset_result", "unchanged"),
            ("d2d_result", "unchanged"),
            ("write_value_result", "unchanged"),
            ("wait_value", "returned"),
        ]),
        ending: Ending::Exit,
    };
    check_program(hip, "memcpy", &[], &want);
}

fn streams(hip: Hip) {
    let want = Expect {
        dispatches: vec![
            kd(
                "_Z6k_nullPi.kd",
                "k_null(int*)",
                [256, 1, 1],
                [64, 1, 1],
                0,
                2,
            ),
            kd(
                "_Z8k_streamPii.kd",
                "k_stream(int*, int)",
                [1024, 1, 1],
                [128, 1, 1],
                0,
                5,
            ),
            kd(
                "_Z6k_prioPi.kd",
                "k_prio(int*)",
                [512, 1, 1],
                [256, 1, 1],
                0,
                2,
            ),
            kd(
                "_Z8k_cumaskPff.kd",
                "k_cumask(float*, float)",
                [1024, 1, 1],
                [64, 1, 1],
                0,
                2,
            ),
            kd(
                "_Z7k_timedPf.kd",
                "k_timed(float*)",
                [8192, 1, 1],
                [256, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z6k_syncPi.kd",
                "k_sync(int*)",
                [64, 1, 1],
                [64, 1, 1],
                0,
                5,
            ),
        ],
        rejected: vec![],
        blits: vec![],
        facts: facts(&[
            ("callbacks", "3"),
            ("elapsed_ms_nonnegative", "1"),
            ("cu_mask", "0x0000ffff"),
        ]),
        ending: Ending::Exit,
    };
    check_runs(
        hip,
        "streams",
        &[],
        "streams",
        |_| want.clone(),
        |run, p| {
            // With the completion thread, every completion signal is decremented only after the
            // delay: a launch followed by hipStreamSynchronize cannot return sooner.
            let min_us: u64 = THREAD_DELAY_US.parse().unwrap();
            match run.fact("launch_sync_min_us").and_then(parse_u64) {
                Some(us) if run.mode == Completion::Thread && us < min_us => p.push(format!(
                    "launch + hipStreamSynchronize took {us} us at best with \
                 SOFTGPU_COMPLETION_DELAY_US={min_us}: the completion delay was not waited for"
                )),
                Some(_) => {}
                None => p.push("no `sg: launch_sync_min_us=` fact".into()),
            }
        },
    );
}

fn module(hip: Hip) {
    let co = build_code_object(hip);
    let want = Expect {
        dispatches: vec![
            kd(
                "module_scale.kd",
                "module_scale",
                [16384, 1, 1],
                [256, 1, 1],
                0,
                2,
            ),
            kd(
                "module_scale.kd",
                "module_scale",
                [64, 1, 1],
                [64, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z10module_addPfPKfi.kd",
                "module_add(float*, float const*, int)",
                [1000, 1, 1],
                [100, 1, 1],
                0,
                1,
            ),
            kd("module_3d.kd", "module_3d", [32, 8, 6], [8, 4, 2], 512, 1),
        ],
        rejected: vec![],
        blits: vec![],
        facts: facts(&[("module_global", "ok")]),
        ending: Ending::Exit,
    };
    check_program(hip, "module", &[co.seen], &want);
}

fn lds(hip: Hip) {
    let mut want = Expect {
        dispatches: vec![
            kd(
                "_Z10lds_staticPf.kd",
                "lds_static(float*)",
                [2048, 1, 1],
                [256, 1, 1],
                1024,
                1,
            ),
            kd(
                "_Z11lds_dynamicPf.kd",
                "lds_dynamic(float*)",
                [2048, 1, 1],
                [256, 1, 1],
                4096,
                1,
            ),
            kd(
                "_Z11lds_dynamicPf.kd",
                "lds_dynamic(float*)",
                [128, 1, 1],
                [64, 1, 1],
                65536,
                1,
            ),
            kd(
                "_Z8lds_bothPf.kd",
                "lds_both(float*)",
                [512, 1, 1],
                [128, 1, 1],
                1024 + 2048,
                2,
            ),
        ],
        rejected: vec![],
        blits: vec![],
        facts: facts(&[
            ("shared_mem_per_block", "65536"),
            ("static_lds.lds_static", "1024"),
            ("static_lds.lds_both", "1024"),
            ("static_lds.lds_dynamic", "0"),
        ]),
        ending: Ending::Exit,
    };
    // lds_both with 1024 static + 65536 dynamic bytes, the program's last launch: HIP 5.2
    // refuses it, and the program finishes. HIP 6.4 and 7.2 submit it; SoftGPU must reject the
    // packet (more LDS than a gfx90a workgroup has), leave its completion signal untouched and
    // call the queue's error callback with HSA_STATUS_ERROR_INVALID_ALLOCATION, as ROCr does on
    // a GPU. HIP's callback prints its line; then HIP 6.4 aborts the program, and HIP 7.2
    // (HIP_SKIP_ABORT_ON_GPU_ERROR, on by default) marks the device in error: every later HIP
    // call returns hipErrorIllegalAddress (700), and the program finishes.
    let over = kd(
        "_Z8lds_bothPf.kd",
        "lds_both(float*)",
        [64, 1, 1],
        [64, 1, 1],
        1024 + 65536,
        1,
    );
    want.facts.push(("checks_before_over_limit", "done".into()));
    match hip {
        Hip::V5_2 => want
            .facts
            .push(("over_limit_static_plus_dynamic", "refused".into())),
        Hip::V6_4 => {
            want.rejected
                .push((over, "group_segment_size_exceeds_limit"));
            want.ending = Ending::HipAbort;
        }
        Hip::V7_2 => {
            want.rejected
                .push((over, "group_segment_size_exceeds_limit"));
            want.facts.extend(facts(&[
                ("over_limit_static_plus_dynamic", "submitted"),
                ("gpu_error_after_over_limit", "700"),
                ("after_gpu_error.hipGetLastError", "700"),
                ("after_gpu_error.hipStreamDestroy", "700"),
                ("after_gpu_error.hipFree", "700"),
            ]));
        }
    }
    check_runs(
        hip,
        "lds",
        &[],
        "lds",
        |_| want.clone(),
        |run, p| {
            if hip == Hip::V5_2 {
                if !hip_queue_callback_lines(&run.stderr).is_empty() {
                    p.push(
                        "HIP's queue error callback printed, but HIP 5.2 refused the launch".into(),
                    );
                }
                return;
            }
            // Printed only when the abort came after it (HIP 6.4), always (HIP 7.2).
            if let Some(v) = run.fact("over_limit_static_plus_dynamic")
                && v != "submitted"
            {
                p.push(format!(
                    "over_limit_static_plus_dynamic={v}, expected submitted"
                ));
            }
            if hip == Hip::V6_4 && run.fact("gpu_error_after_over_limit").is_some() {
                p.push(
                    "HIP 6.4 returned the queue error to the program instead of aborting".into(),
                );
            }
            // HIP's callback names the status ROCr reports for the defect.
            let lines = hip_queue_callback_lines(&run.stderr);
            let status = "aborting with error : HSA_STATUS_ERROR_INVALID_ALLOCATION: The \
                          requested allocation is not valid. code: 0x1003";
            if lines.len() != 1 || !lines[0].ends_with(status) {
                p.push(format!(
                    "HIP's queue error callback printed {lines:?}, expected one line ending \
                     {status:?}"
                ));
            }
            // The rejected packet: its completion signal untouched, as the shim says.
            for r in run
                .records
                .iter()
                .filter(|r| r["status"].as_str() == Some("rejected"))
            {
                if !r["result_label"].is_null() {
                    p.push(format!(
                        "the rejected packet has result_label {}, expected null (never completed)",
                        r["result_label"]
                    ));
                }
                let warn = format!(
                    "packet {} (kernel_dispatch) rejected: group_segment_size_exceeds_limit; \
                     label diagnostic_rejected; completion signal {} left untouched",
                    r["packet_index"],
                    r["completion_signal"].as_str().unwrap_or("?")
                );
                if !run.stderr.contains(&warn) {
                    p.push(format!("no shim warning `...{warn}...` on stderr"));
                }
            }
        },
    );
}

fn threads(hip: Hip) {
    let mut dispatches: Vec<Kd> = (1..=4)
        .map(|t| {
            kd(
                "_Z10per_threadPii.kd",
                "per_thread(int*, int)",
                [64 * t, 1, 1],
                [64, 1, 1],
                0,
                250,
            )
        })
        .collect();
    dispatches.push(kd(
        "_Z20shared_stream_kernelPi.kd",
        "shared_stream_kernel(int*)",
        [96, 1, 1],
        [32, 1, 1],
        0,
        4 * 62,
    ));
    let want = Expect {
        dispatches,
        rejected: vec![],
        blits: vec![],
        facts: facts(&[
            ("threads", "4"),
            ("launches_per_thread", "250"),
            ("shared_launches_per_thread", "62"),
        ]),
        ending: Ending::Exit,
    };
    check_program(hip, "threads", &[], &want);
}

fn printf(hip: Hip) {
    let want = Expect {
        dispatches: vec![
            kd(
                "_Z12print_kerneli.kd",
                "print_kernel(int)",
                [64, 1, 1],
                [32, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z12print_kerneli.kd",
                "print_kernel(int)",
                [64, 1, 1],
                [64, 1, 1],
                0,
                1,
            ),
        ],
        rejected: vec![],
        blits: vec![],
        facts: vec![],
        ending: Ending::Exit,
    };
    check_program(hip, "printf", &[], &want);
}

fn fork(hip: Hip, variant: &str) {
    let want = Expect {
        dispatches: vec![
            kd(
                "_Z11before_forkPi.kd",
                "before_fork(int*)",
                [64, 1, 1],
                [64, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z10after_forkPi.kd",
                "after_fork(int*)",
                [128, 1, 1],
                [64, 1, 1],
                0,
                1,
            ),
        ],
        rejected: vec![],
        blits: vec![],
        facts: if variant == "system" {
            facts(&[("mode", "system"), ("system_status", "0")])
        } else {
            facts(&[("mode", variant), ("child_status", "0")])
        },
        ending: Ending::Exit,
    };
    // Besides `problems` (one capture file, this pid's, complete, every record this pid's):
    check_runs(
        hip,
        "fork",
        &[variant.to_string()],
        &format!("fork-{variant}"),
        |_| want.clone(),
        |run, p| {
            if run.fact("parent_pid") != Some(run.pid.to_string().as_str()) {
                p.push(format!(
                    "the program says its pid is {:?}, the harness started {}",
                    run.fact("parent_pid"),
                    run.pid
                ));
            }
            if let Some(child) = run.fact("child_pid") {
                if run
                    .captures
                    .iter()
                    .any(|c| c.contains(&format!("-{child}.")))
                {
                    p.push(format!(
                        "the forked child {child} wrote a capture of its own"
                    ));
                }
                if run
                    .records
                    .iter()
                    .any(|r| r["pid"].as_u64().map(|x| x.to_string()).as_deref() == Some(child))
                {
                    p.push(format!(
                        "records with the forked child's pid {child} are in the parent's capture"
                    ));
                }
            }
        },
    );
}

/// Arrays, textures and surfaces (`integration/hip/images.cpp`). HIP moves array data with its
/// own blit kernels on both versions (as on a real GPU: ROCclr's image DMA is off on ROCm), so
/// every array copy is a flagged blit and its destination is unchanged. The descriptors HIP
/// copies out of SoftGPU's image and sampler handles into its texture and surface objects are
/// checked field by field by the program itself.
fn images(hip: Hip) {
    let want = Expect {
        dispatches: vec![
            kd(
                "_Z8tex_readP13__hip_texturePfi.kd",
                "tex_read(__hip_texture*, float*, int)",
                [1024, 1, 1],
                [64, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z8tex_readP13__hip_texturePfi.kd",
                "tex_read(__hip_texture*, float*, int)",
                [700, 1, 1],
                [100, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z10surf_writeP13__hip_surfacei.kd",
                "surf_write(__hip_surface*, int)",
                [1024, 1, 1],
                [64, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z11tex_read_3dP13__hip_texturePf.kd",
                "tex_read_3d(__hip_texture*, float*)",
                [32, 8, 1],
                [8, 8, 1],
                0,
                1,
            ),
            kd(
                "_Z9tex_fetchP13__hip_texturePf.kd",
                "tex_fetch(__hip_texture*, float*)",
                [1024, 1, 1],
                [256, 1, 1],
                0,
                1,
            ),
        ],
        rejected: vec![],
        // hipMemcpy2DToArray, hipMemcpyToArray, hipMemcpyHtoA and hipMemcpy3D (host to array);
        // the same four back; one hipMemcpy3D array to array.
        blits: vec![
            ("__amd_rocclr_copyBufferToImage.kd", 4),
            ("__amd_rocclr_copyImageToBuffer.kd", 4),
            ("__amd_rocclr_copyImage.kd", 1),
        ],
        facts: facts(&[
            ("max_texture_1d", "16384"),
            ("max_texture_2d", "16384x16384"),
            ("max_texture_3d", "16384x16384x8192"),
            // The blits were recorded and did not run.
            ("array2d_round_trip_result", "unchanged"),
            ("array_1d_copies_result", "unchanged"),
            ("array3d_round_trip_result", "unchanged"),
            ("texture_descriptors", "ok"),
            ("surface_descriptor", "ok"),
            ("linear_texture_descriptor", "ok"),
            ("pitched_texture_descriptor", "ok"),
            ("pitch", "512"),
        ]),
        ending: Ending::Exit,
    };
    check_program(hip, "images", &[], &want);
}

fn properties(hip: Hip) {
    let want = Expect {
        dispatches: vec![],
        rejected: vec![],
        blits: vec![],
        facts: facts(&[
            ("device_count", "1"),
            ("multi_processor_count", "104"),
            ("warp_size", "64"),
            ("max_threads_per_block", "1024"),
            ("shared_mem_per_block", "65536"),
            ("major_minor", "9.0"),
            // ROCr's gfx9 image limits, read by HIP as uint32_t values (HIP 5.2 once saw
            // maxTexture2D = 16384,0 when they were written as 64-bit values).
            ("max_texture_1d", "16384"),
            ("max_texture_1d_linear", "2147483647"),
            ("max_texture_2d", "16384,16384"),
            ("max_texture_3d", "16384,16384,8192"),
            // A real MI210 has cooperative queues.
            ("cooperative_launch", "1"),
            ("cooperative_multi_device_launch", "1"),
            // hipDeviceMallocFinegrained memory comes from the fine-grained VRAM pool.
            ("fine_grained_malloc_flags", "2"),
        ]),
        ending: Ending::Exit,
    };
    check_runs(
        hip,
        "properties",
        &[],
        "properties",
        |_| want.clone(),
        |run, p| {
            match run.fact("gcn_arch_name") {
                Some(a) if a.starts_with("gfx90a") => {}
                other => p.push(format!("gcnArchName {other:?}, expected gfx90a...")),
            }
            match run.fact("total_global_mem").and_then(parse_u64) {
                Some(n) if n > 0 => {}
                other => p.push(format!("totalGlobalMem {other:?}, expected > 0")),
            }
            if run.fact("name").is_none_or(str::is_empty) {
                p.push("the device has no name".into());
            }
        },
    );
}

/// The image limits ROCr reports for gfx9 (its image look-up table), as HIP reads them.
fn image_limit_facts() -> Vec<(&'static str, String)> {
    facts(&[
        ("image_1d", "16384"),
        ("image_1da", "16384"),
        ("image_1db", "4294967295"),
        ("image_2d", "16384,16384"),
        ("image_2da", "16384,16384"),
        ("image_2ddepth", "16384,16384"),
        ("image_2dadepth", "16384,16384"),
        ("image_3d", "16384,16384,8192"),
        ("image_layers", "8192"),
        ("image_handles", "128,64,16"),
    ])
}

fn image_limits(hip: Hip) {
    let want = Expect {
        facts: image_limit_facts(),
        ..Default::default()
    };
    check_program(hip, "image_limits", &[], &want);
}

/// The same program built with AddressSanitizer: its uint32_t buffers on its own stack get
/// exactly the bytes ROCr writes, and nothing past them (no stack-buffer-overflow report).
fn image_limits_under_asan(hip: Hip) {
    let exe = build_asan(hip, "image_limits");
    let want = Expect {
        facts: image_limit_facts(),
        ..Default::default()
    };
    let run = run(
        hip,
        &exe,
        &[],
        Completion::Inline,
        "image_limits-asan",
        &[("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1")],
    );
    let mut p = problems(&run, &want);
    if run.stderr.contains("AddressSanitizer") {
        p.push("AddressSanitizer reported an error".into());
    }
    assert!(
        p.is_empty(),
        "{}:\n  {}\n{}",
        run.what,
        p.join("\n  "),
        run.context()
    );
}

/// Cooperative launches on `gpus` gfx90a devices: hipLaunchCooperativeKernel twice and one
/// hipLaunchCooperativeKernelMultiDevice over every device, each dispatch after HIP's
/// `__amd_rocclr_gwsInit` blit on the device's cooperative queue; a launch larger than the
/// device can hold at once is refused by HIP.
fn cooperative(hip: Hip, gpus: u64) {
    let targets = vec!["gfx90a"; gpus as usize].join(",");
    let want = Expect {
        dispatches: vec![
            kd(
                "_Z8grid_sumPiS_.kd",
                "grid_sum(int*, int*)",
                [104 * 256, 1, 1],
                [256, 1, 1],
                0,
                1,
            ),
            kd(
                "_Z8grid_sumPiS_.kd",
                "grid_sum(int*, int*)",
                [8 * 64, 1, 1],
                [64, 1, 1],
                1024,
                1,
            ),
            kd(
                "_Z14multi_grid_sumPiS_.kd",
                "multi_grid_sum(int*, int*)",
                [16 * 128, 1, 1],
                [128, 1, 1],
                0,
                gpus,
            ),
        ],
        rejected: vec![],
        blits: vec![("__amd_rocclr_gwsInit", 2 + gpus)],
        facts: facts(&[
            ("devices", &gpus.to_string()),
            ("cooperative_launch", "1"),
            ("cooperative_multi_device_launch", "1"),
            ("multiprocessors", "104"),
            // 8 blocks of 256 threads per CU (32 waves of 64) on 104 CUs.
            ("max_cooperative_blocks", "832"),
            ("too_large", "refused"),
        ]),
        ending: Ending::Exit,
    };
    let tag = format!("cooperative-{gpus}");
    check_runs_env(
        hip,
        "cooperative",
        &[],
        &tag,
        &[("SOFTGPU_TARGET", &targets)],
        |_| want.clone(),
        |run, p| {
            // Every cooperative dispatch, and its gwsInit, on one queue per device, and
            // nothing else on that queue but barriers.
            let mut queues: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for r in &run.records {
                if r["type"].as_str() == Some("kernel_dispatch") {
                    queues
                        .entry(r["queue_id"].to_string())
                        .or_default()
                        .push(r["kernel_symbol"].as_str().unwrap_or("").to_string());
                }
            }
            let coop: Vec<&Vec<String>> = queues
                .values()
                .filter(|v| v.iter().any(|k| k.contains("grid_sum")))
                .collect();
            if coop.len() as u64 != gpus {
                p.push(format!(
                    "cooperative dispatches on {} queues, expected one per device ({gpus}): {queues:?}",
                    coop.len()
                ));
            }
            for v in coop {
                for pair in v.chunks(2) {
                    if !(pair.len() == 2
                        && pair[0] == "__amd_rocclr_gwsInit.kd"
                        && pair[1].contains("grid_sum"))
                    {
                        p.push(format!(
                            "a cooperative queue holds {v:?}; expected gwsInit, kernel, gwsInit, ..."
                        ));
                        break;
                    }
                }
            }
        },
    );
}

/// The three `kargs_probe` records of a `kargs` run, checked: every argument decodes to the
/// value the program passed; a pointer freed before the launch is `pointer_use_after_free`
/// naming its allocation, a null one `pointer_null`, and valid ones `pointer_in_allocation`.
fn kargs_probes(run: &Run) -> Vec<Value> {
    let ctx = run.context();
    let what = &run.what;
    assert!(
        run.status.is_some_and(|s| s.success()),
        "{} exited with {:?}\n{ctx}",
        run.what,
        run.status
    );
    assert_eq!(run.fact("done"), Some("1"), "{ctx}");
    assert!(
        run.read_problems.is_empty(),
        "{:?}\n{ctx}",
        run.read_problems
    );
    let addr = |k: &str| {
        let v = run.fact(k).unwrap_or_else(|| panic!("no fact {k}\n{ctx}"));
        u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
    };
    let (a, b, freed) = (addr("a"), addr("b"), addr("freed"));
    let probes: Vec<Value> = run
        .records
        .iter()
        .filter(|r| r["kernel_symbol"] == "_Z11kargs_probefiyPfPKi.kd")
        .cloned()
        .collect();
    assert_eq!(probes.len(), 3, "{ctx}");
    let hexa = |v: u64| format!("{v:#x}");
    for (p, want) in probes.iter().zip([
        (2.5, -7, 0x1_2345_6789u64, hexa(a), hexa(b)),
        (1.0, 3, 1, hexa(a), hexa(freed + 16)),
        (1.0, 4, 2, "0x0".to_string(), hexa(b)),
    ]) {
        assert_eq!(p["kernarg_state"], "captured", "{what}: {p}");
        let args = p["args"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: no args: {p}"));
        assert_eq!(args[0]["type"], "float", "{what}: {p}");
        assert_eq!(args[0]["value"], want.0, "{what}: {p}");
        assert_eq!(args[1]["value"], want.1, "{what}: {p}");
        assert_eq!(args[2]["type"], "unsigned long long", "{what}: {p}");
        assert_eq!(args[2]["value"], want.2, "{what}: {p}");
        assert_eq!(args[3]["value"], want.3, "{what}: {p}");
        assert_eq!(args[4]["value"], want.4, "{what}: {p}");
        assert!(
            p["arg_disagreements"].as_array().unwrap().is_empty(),
            "{what}: {p}"
        );
    }
    let codes = |p: &Value| -> Vec<String> {
        p["arg_findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        codes(&probes[0]),
        ["pointer_in_allocation", "pointer_in_allocation"],
        "{what}: {}",
        probes[0]
    );
    assert_eq!(
        codes(&probes[1]),
        ["pointer_in_allocation", "pointer_use_after_free"],
        "{what}: {}",
        probes[1]
    );
    assert_eq!(
        probes[1]["arg_findings"][1]["offset"], 16,
        "{what}: {}",
        probes[1]
    );
    assert_eq!(
        codes(&probes[2]),
        ["pointer_null", "pointer_in_allocation"],
        "{what}: {}",
        probes[2]
    );
    let call = probes[0]["call"].as_str().unwrap();
    assert!(
        call.starts_with("kargs_probe(float 2.5, int -7, unsigned long long 4886718345, float* ")
            && call.contains("(alloc ")
            && call.contains(" of 4000 B)"),
        "{what}: {call}"
    );
    assert!(
        probes[1]["call"]
            .as_str()
            .unwrap()
            .contains("(freed alloc "),
        "{what}: {}",
        probes[1]["call"]
    );
    probes
}

/// A probe's pointer findings without the allocation numbers and event numbers, which
/// count the runtime's own allocations (virtual mode) or what passed through (forwarded),
/// and without the addresses, which differ from run to run.
fn findings_shape(p: &Value) -> Vec<Value> {
    p["arg_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut f = f.clone();
            if let Some(o) = f.as_object_mut() {
                o.remove("allocation");
                o.remove("freed_at");
                // Checked against the program's own values by `kargs_probes`.
                o.remove("address");
            }
            f
        })
        .collect()
}

/// `kargs`: every dispatch's kernel arguments are captured and decode to the
/// values the program passed, with the pointer findings of [`kargs_probes`],
/// and the same arguments land in a rocpd database.
fn kernel_arguments(hip: Hip) {
    let exe = build(hip, "kargs");
    let run = run(hip, &exe, &[], Completion::Inline, "kargs", &[]);
    let probes = kargs_probes(&run);
    assert_eq!(probes.len(), 3);
    let addr = |k: &str| {
        let v = run.fact(k).unwrap();
        u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
    };
    let (a, b) = (addr("a"), addr("b"));
    let hexa = |v: u64| format!("{v:#x}");
    // The same arguments in a rocpd database, read back through SQL.
    let db = run.capture.host.with_extension("db");
    let _ = std::fs::remove_file(&db);
    let out = Command::new(cli())
        .arg("inspect")
        .arg(&run.capture.host)
        .args(["--format", "rocpd", "--output"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "inspect --format rocpd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let tag: String = conn
        .query_row(
            "SELECT value FROM rocpd_metadata WHERE tag = 'softgpu_kernel_args'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tag, "decoded into rocpd_arg");
    let rows: Vec<(u32, String, Option<String>)> = conn
        .prepare(
            "SELECT position, type, value FROM rocpd_arg WHERE event_id IN \
             (SELECT event_id FROM rocpd_arg WHERE position = 2 AND value = '4886718345') \
             ORDER BY position",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(rows.len() >= 5, "{rows:?}");
    assert_eq!(rows[0], (0, "float".into(), Some("2.5".into())), "{rows:?}");
    assert_eq!(rows[1], (1, "int".into(), Some("-7".into())), "{rows:?}");
    assert_eq!(rows[3].2.as_deref(), Some(hexa(a).as_str()), "{rows:?}");
    assert_eq!(rows[4].2.as_deref(), Some(hexa(b).as_str()), "{rows:?}");
}

/// `kargs` in intercept and in observe mode over a stand-in ROCr: the kernel arguments are
/// copied from the real runtime's kernarg pool (in observe mode before the doorbell is
/// forwarded), decode to the values passed, and the pointer findings, made against the
/// allocations that passed through the shim, are those of the virtual run. Every forwarded
/// call reached the stand-in, and every allocation and free of the program went through the
/// shim to it exactly once.
fn kernel_arguments_forwarded(hip: Hip) {
    let exe = build(hip, "kargs");
    let lower = lower_dir(hip);
    let reference = run(
        hip,
        &exe,
        &[],
        Completion::Inline,
        "kargs-fwd-reference",
        &[],
    );
    let want: Vec<Vec<Value>> = kargs_probes(&reference)
        .iter()
        .map(findings_shape)
        .collect();
    let mut report = Vec::new();
    for setup in [Setup::Intercept, Setup::Observe] {
        let tag = format!("kargs-{}", setup.label());
        let dir = sub(
            &sub(&base(hip), "runs"),
            &format!("{tag}-{}", Completion::Inline.label()),
        );
        let counts_seen = format!("{}/calls.jsonl", dir.seen);
        let env = [
            ("SOFTGPU_MODE", setup.label()),
            ("LD_LIBRARY_PATH", lower.seen.as_str()),
            ("SOFTGPU_CALL_COUNTS", counts_seen.as_str()),
        ];
        let r = run(hip, &exe, &[], Completion::Inline, &tag, &env);
        let probes = kargs_probes(&r);
        let got: Vec<Vec<Value>> = probes.iter().map(findings_shape).collect();
        assert_eq!(
            got,
            want,
            "{}: the pointer findings differ from the virtual run's\n{}",
            r.what,
            r.context()
        );
        let mut p = forwarding_problems(&r, &r.dir.host.join("calls.jsonl"));
        match call_counts(&r.dir.host.join("calls.jsonl")) {
            Ok((shim, below)) => {
                for n in ["hsa_amd_memory_pool_allocate", "hsa_amd_memory_pool_free"] {
                    let (recv, fwd, low) = (
                        count(&shim, "received", n),
                        count(&shim, "forwarded", n),
                        count(&below, "received", n),
                    );
                    // hipMalloc three times and hipFree three times at least, plus HIP's own.
                    if recv < 3 || recv != fwd || fwd != low {
                        p.push(format!(
                            "{n}: the program called it {recv} times, the shim forwarded {fwd}, \
                             the stand-in received {low}"
                        ));
                    }
                }
            }
            Err(e) => p.push(e),
        }
        if !p.is_empty() {
            report.push(format!(
                "{}:\n  {}\n{}",
                r.what,
                p.join("\n  "),
                r.context()
            ));
        }
    }
    assert!(report.is_empty(), "\n{}", report.join("\n\n"));
}

/// `lint <class>`: one run per pointer-check class, each launching `lint_probe(float*, int)`
/// with one kind of pointer. Each probe's only finding is its class's (naming the allocation,
/// offset, agents as the run's facts say); no other record of the run has a problem finding
/// (HIP's own blits included). `no_access` and `peer` run on two GPUs: device 0's memory used
/// on device 1 is `pointer_no_access` until `hipDeviceEnablePeerAccess` grants it.
fn lint_classes(hip: Hip) {
    let exe = build(hip, "lint");
    let classes: [(&str, &str, usize); 7] = [
        ("clean", "pointer_in_allocation", 1),
        ("use_after_free", "pointer_use_after_free", 1),
        ("pageable_host", "pointer_pageable_host", 2),
        ("past_end", "pointer_past_end", 1),
        ("null", "pointer_null", 1),
        ("no_access", "pointer_no_access", 1),
        ("peer", "pointer_in_allocation", 1),
    ];
    for (class, code, launches) in classes {
        let two_gpus = matches!(class, "no_access" | "peer");
        let env: &[(&str, &str)] = if two_gpus {
            &[("SOFTGPU_TARGET", "gfx90a,gfx90a")]
        } else {
            &[]
        };
        let run = run(
            hip,
            &exe,
            &[class.to_string()],
            Completion::Inline,
            &format!("lint-{class}"),
            env,
        );
        let ctx = run.context();
        assert!(
            run.status.is_some_and(|s| s.success()),
            "{} exited with {:?}\n{ctx}",
            run.what,
            run.status
        );
        assert_eq!(run.fact("done"), Some("1"), "{ctx}");
        assert!(
            run.read_problems.is_empty(),
            "{:?}\n{ctx}",
            run.read_problems
        );
        let addr = |k: &str| {
            let v = run.fact(k).unwrap_or_else(|| panic!("no fact {k}\n{ctx}"));
            u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
        };
        let (probes, others): (Vec<&Value>, Vec<&Value>) = run
            .records
            .iter()
            .filter(|r| r["type"] == "kernel_dispatch")
            .partition(|r| r["kernel_symbol"] == "_Z10lint_probePfi.kd");
        assert_eq!(probes.len(), launches, "{class}: probes\n{ctx}");
        let want_addrs: Vec<u64> = match class {
            "null" => vec![0],
            "pageable_host" => vec![addr("ptr"), addr("ptr2")],
            _ => vec![addr("ptr")],
        };
        for (p, want_addr) in probes.iter().zip(want_addrs) {
            let f = p["arg_findings"]
                .as_array()
                .unwrap_or_else(|| panic!("{class}: no arg_findings: {p}"));
            assert_eq!(
                f.len(),
                1,
                "{class}: one pointer argument, one finding: {p}"
            );
            let f = &f[0];
            assert_eq!(f["code"], code, "{class}: {p}");
            assert_eq!(f["index"], 0, "{class}: {p}");
            assert_eq!(f["address"].as_u64(), Some(want_addr), "{class}: {p}");
            let call = p["call"].as_str().unwrap_or_default();
            match class {
                "use_after_free" => {
                    assert_eq!(f["offset"], 16, "{p}");
                    assert!(f["allocation"].as_u64().is_some_and(|a| a > 0), "{p}");
                    assert!(f["freed_at"].as_u64().is_some_and(|a| a > 0), "{p}");
                    assert!(call.contains("(freed alloc "), "{call}");
                }
                "past_end" => {
                    assert_eq!(addr("ptr"), addr("base") + 4000, "{ctx}");
                    assert_eq!(f["size"], 4000, "{p}");
                    assert_eq!(f["past"], 0, "{p}");
                    assert!(call.contains("0 B past the end of alloc "), "{call}");
                }
                "pageable_host" => {
                    assert!(
                        call.contains("(pageable host memory, not registered)"),
                        "{call}"
                    )
                }
                "null" => assert!(call.contains("(null)"), "{call}"),
                "no_access" => {
                    // Device 0 is capture agent 1, device 1 agent 2.
                    assert_eq!(f["owner"], 1, "{p}");
                    assert_eq!(f["agent"], 2, "{p}");
                    assert_eq!(f["offset"], 0, "{p}");
                    assert!(call.contains("of agent 1, no access granted)"), "{call}");
                }
                _ => {
                    assert_eq!(f["offset"], 0, "{p}");
                    assert_eq!(f["remaining"], 4000, "{p}");
                }
            }
        }
        if two_gpus {
            assert_eq!(run.fact("devices"), Some("2"), "{ctx}");
            assert_eq!(run.fact("can_access_peer"), Some("1"), "{ctx}");
        }
        for r in others {
            assert_eq!(
                problem_findings(r),
                Vec::<String>::new(),
                "{class}: a problem finding outside the probe: {r}\n{ctx}"
            );
        }
    }
}

/// `sg_pattern_byte` of `integration/hip/sg_hip.h`: the byte a program's pattern `seed` has at
/// offset `i`.
fn pattern_byte(seed: u32, i: u64) -> u8 {
    let mut x = u64::from(seed)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i.wrapping_mul(0xD1B5_4A32_D192_ED03));
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    x as u8
}

/// What `rocr7`'s file (`rocr7-ais.bin`, in its run directory) holds after the run: 4096 zero
/// bytes, the 64 KiB the program wrote there (pattern 71, read into device memory by
/// hipAmdFileRead), then the 64 KiB hipAmdFileWrite wrote from device memory (pattern 72).
fn rocr7_file_problems(run: &Run) -> Vec<String> {
    const N: u64 = 64 * 1024;
    let path = run.dir.host.join("rocr7-ais.bin");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return vec![format!("the program's file {}: {e}", path.display())],
    };
    if bytes.len() as u64 != 4096 + 2 * N {
        return vec![format!(
            "the program's file holds {} bytes, expected {}",
            bytes.len(),
            4096 + 2 * N
        )];
    }
    let mut p = Vec::new();
    if let Some(i) = bytes[..4096].iter().position(|b| *b != 0) {
        p.push(format!("file byte {i} is {:#x}, expected 0", bytes[i]));
    }
    for (seed, start, what) in [
        (71, 4096, "the block hipAmdFileRead read"),
        (72, 4096 + N, "the block hipAmdFileWrite wrote"),
    ] {
        let block = &bytes[start as usize..(start + N) as usize];
        if let Some(i) = (0..N).find(|&i| block[i as usize] != pattern_byte(seed, i)) {
            p.push(format!(
                "{what}: file byte {} is {:#x}, expected {:#x}",
                start + i,
                block[i as usize],
                pattern_byte(seed, i)
            ));
        }
    }
    p
}

/// How often the shim received each function (`SOFTGPU_CALL_COUNTS`, virtual mode).
fn received_counts(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("no call-count file {}: {e}", path.display()))?;
    let shim: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["role"] == "shim")
        .collect();
    match shim.as_slice() {
        [one] => Ok(one["received"].clone()),
        _ => Err(format!(
            "{} `shim` lines in {}, expected one: {text}",
            shim.len(),
            path.display()
        )),
    }
}

/// `rocr7`: the ROCr 7.2.4 functions HIP 7.2.4 binds, reached through HIP's public API (see
/// `integration/hip/rocr7.cpp`). On HIP 7.2 every check holds, the shim received each function
/// the program reaches (and `hsa_amd_vmem_address_reserve_align` never: HIP 7.2.4 calls it only
/// for managed memory under HMM, which SoftGPU does not offer), the refused dma-buf export is
/// logged once, the program's file holds exactly the bytes that moved, and the one probe's
/// pointers (the texture, a VMM mapping, the file's device buffer) are each in an allocation.
/// On HIP 5.2 and 6.4 the program reports the APIs absent and checks nothing else.
fn rocr7(hip: Hip) {
    let exe = build(hip, "rocr7");
    let seven = hip == Hip::V7_2;
    let want = if seven {
        Expect {
            dispatches: vec![kd(
                "_Z11rocr7_probeP13__hip_texturePfS1_.kd",
                "rocr7_probe(__hip_texture*, float*, float*)",
                [64, 1, 1],
                [64, 1, 1],
                0,
                1,
            )],
            rejected: vec![],
            blits: vec![],
            facts: facts(&[
                ("rocr7_apis", "present"),
                // HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_MAX and _CURRENT as the shim answers them;
                // HIP has no minimum from the runtime.
                ("scratch_min", "0"),
                ("scratch_max", "4294967296"),
                ("scratch_current_initial", "4294967296"),
                ("scratch_current_set", "1073741824"),
                ("scratch_over_max", "refused"),
                ("scratch", "ok"),
                ("file_read_status", "0"),
                ("file_write_status", "0"),
                ("file_refusals", "host,past_end"),
                ("file_io", "ok"),
                // CLR 7.2.4's hipMemAddressReserve passes no alignment to the runtime.
                ("reserve_requested_alignment", "ignored"),
                ("reserve_align", "ok"),
                ("vmm_export", "fd"),
                ("retain", "ok"),
                // CLAMP_LAST_TEXEL, MIRROR, CLAMP_BORDER: one address mode per axis.
                ("sampler_clamp_xyz", "2,1,6"),
                ("sampler", "ok"),
                // hipErrorInvalidValue, from the refused hsa_amd_portable_export_dmabuf.
                ("dmabuf_export", "refused:1"),
                ("dmabuf", "ok"),
                ("copy_engine", "ok"),
                ("checks", "7"),
                ("probe", "launched"),
                ("unmapped_retain", "refused"),
            ]),
            ending: Ending::Exit,
        }
    } else {
        Expect {
            facts: facts(&[("rocr7_apis", "absent")]),
            ..Default::default()
        }
    };
    let mut report = Vec::new();
    for mode in MODES {
        let tag = "rocr7";
        let dir = sub(&sub(&base(hip), "runs"), &format!("{tag}-{}", mode.label()));
        let counts = sub(&dir, "calls.jsonl");
        let run = run(
            hip,
            &exe,
            &[],
            mode,
            tag,
            &[("SOFTGPU_CALL_COUNTS", counts.seen.as_str())],
        );
        let mut p = problems(&run, &want);
        if seven {
            p.extend(rocr7_file_problems(&run));
            match received_counts(&counts.host) {
                Err(e) => p.push(e),
                Ok(got) => {
                    let n = |f: &str| got[f].as_u64().unwrap_or(0);
                    for (f, want) in [
                        // The limit set, and the one past the maximum (refused).
                        ("hsa_amd_agent_set_async_scratch_limit", 2),
                        // Two read, one refused for host memory, one past the end.
                        ("hsa_amd_ais_file_read", 3),
                        ("hsa_amd_ais_file_write", 1),
                        ("hsa_amd_vmem_retain_alloc_handle", 1),
                        ("hsa_amd_vmem_export_shareable_handle", 1),
                        ("hsa_ext_sampler_create_v2", 1),
                        ("hsa_amd_portable_export_dmabuf", 1),
                        ("hsa_amd_vmem_address_reserve_align", 0),
                    ] {
                        if n(f) != want {
                            p.push(format!(
                                "the shim received {f} {} times, expected {want}",
                                n(f)
                            ));
                        }
                    }
                    if n("hsa_amd_memory_get_preferred_copy_engine") == 0 {
                        p.push(
                            "the shim never received hsa_amd_memory_get_preferred_copy_engine"
                                .into(),
                        );
                    }
                }
            }
            let refusals = run
                .stderr
                .lines()
                .filter(|l| {
                    l.contains("hsa_amd_portable_export_dmabuf is not implemented by SoftGPU")
                })
                .count();
            if refusals != 1 {
                p.push(format!(
                    "{refusals} log lines say hsa_amd_portable_export_dmabuf was refused, expected one"
                ));
            }
            for r in run
                .records
                .iter()
                .filter(|r| r["type"] == "kernel_dispatch")
            {
                let codes: Vec<&str> = r["arg_findings"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|f| f["code"].as_str()).collect())
                    .unwrap_or_default();
                if codes != ["pointer_in_allocation"; 3] {
                    p.push(format!(
                        "the probe's pointer findings are {codes:?}, expected three \
                         pointer_in_allocation (call {})",
                        r["call"]
                    ));
                }
            }
        }
        if !p.is_empty() {
            report.push(format!(
                "{}: {} problem(s):\n  {}\n{}",
                run.what,
                p.len(),
                p.join("\n  "),
                run.context()
            ));
        }
    }
    assert!(report.is_empty(), "\n{}", report.join("\n\n"));
}

/// The bytes of a record's kernel argument segment (`kernarg`, hex), empty if it has none.
fn kernarg_bytes(r: &Value) -> Vec<u8> {
    let hex = r["kernarg"].as_str().unwrap_or("");
    (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// `n` little-endian bytes of `bytes` at `at`, or None past the end.
fn le(bytes: &[u8], at: usize, n: usize) -> Option<u64> {
    let b = bytes.get(at..at + n)?;
    Some(b.iter().rev().fold(0u64, |v, x| (v << 8) | u64::from(*x)))
}

/// The records of user kernel `symbol` in a run.
fn dispatches_of<'a>(run: &'a Run, symbol: &str) -> Vec<&'a Value> {
    run.records
        .iter()
        .filter(|r| r["type"] == "kernel_dispatch" && r["kernel_symbol"] == symbol)
        .collect()
}

/// HIP graphs (`integration/hip/graph.cpp`): one built by stream capture (a memset, a
/// host-to-device copy, a kernel and a device-to-device copy), launched 3 times; one built from
/// kernel nodes with dependencies (graph_add -> graph_tail, graph_add -> graph_side), launched 3
/// times, twice more after `hipGraphExecKernelNodeSetParams` gave graph_tail another grid and
/// argument, and twice more after `hipGraphExecUpdate` from a graph whose graph_side has another
/// grid. Every graph launch is in the capture as the dispatches of its kernel nodes, exactly:
/// N launches, N dispatches per node. The memset node is one `fillBufferAligned` blit per launch
/// on every version; the device-to-device copy is one `copyBuffer` blit per launch, and from HIP
/// 6.4 on the host-to-device copy is one too (HIP 5.2 copies those bytes itself, and the program
/// checks them): 3 `copyBuffer` blits on 5.2, 6 on 6.4 and 7.2.
fn graph(hip: Hip) {
    let d =
        |sym, name, grid: u64, wg: u64, count| kd(sym, name, [grid, 1, 1], [wg, 1, 1], 0, count);
    let scale = ("_Z11graph_scalePffi.kd", "graph_scale(float*, float, int)");
    let add = (
        "_Z9graph_addPfPKfi.kd",
        "graph_add(float*, float const*, int)",
    );
    let tail = ("_Z10graph_tailPff.kd", "graph_tail(float*, float)");
    let side = ("_Z10graph_sidePii.kd", "graph_side(int*, int)");
    // 3 launches first built, 2 after SetParams, 2 after ExecUpdate (graph.cpp's header).
    let want = Expect {
        dispatches: vec![
            d(scale.0, scale.1, 4096, 256, 3),
            d(add.0, add.1, 1024, 128, 3 + 2 + 2),
            d(tail.0, tail.1, 256, 64, 3 + 2),
            d(tail.0, tail.1, 128, 64, 2),
            d(side.0, side.1, 64, 64, 3 + 2),
            d(side.0, side.1, 192, 64, 2),
        ],
        rejected: vec![],
        blits: vec![
            ("__amd_rocclr_fillBufferAligned.kd", 3),
            (
                "__amd_rocclr_copyBuffer.kd",
                if hip == Hip::V5_2 { 3 } else { 6 },
            ),
        ],
        facts: facts(&[
            ("captured_nodes", "4"),
            ("captured_edges", "3"),
            ("captured_launches", "3"),
            (
                "captured_h2d_result",
                if hip == Hip::V5_2 {
                    "copied"
                } else {
                    "unchanged"
                },
            ),
            ("captured_d2d_result", "unchanged"),
            ("explicit_nodes", "3"),
            ("explicit_edges", "2"),
            ("set_params", "ok"),
            ("exec_update", "success"),
            ("explicit_launches", "7"),
        ]),
        ending: Ending::Exit,
    };
    check_runs(
        hip,
        "graph",
        &[],
        "graph",
        |_| want.clone(),
        |run, p| {
            // The arguments each launch carried: graph_tail's value is the one SetParams gave
            // it exactly when its grid is SetParams' one.
            let arg = |r: &Value, i: usize| r["args"][i]["value"].clone();
            for r in run
                .records
                .iter()
                .filter(|r| r["type"] == "kernel_dispatch" && !is_blit(r))
            {
                let symbol = r["kernel_symbol"].as_str().unwrap_or("");
                let ok = match symbol {
                    s if s == scale.0 => arg(r, 1) == json!(2.0) && arg(r, 2) == json!(4096),
                    s if s == add.0 => arg(r, 2) == json!(1024),
                    s if s == tail.0 => {
                        arg(r, 1) == json!(if r["grid"][0] == 128 { 3.0 } else { 1.0 })
                    }
                    s if s == side.0 => arg(r, 1) == json!(7),
                    // Counted (as unexpected) by `problems`.
                    _ => true,
                };
                // Over a real runtime the shim reads kernel arguments only from memory the
                // pass-through table knows as host memory: HIP 6.4 puts a stream-captured
                // graph's kernel arguments, HIP 7.2 every graph's, in memory it does not.
                let below = run.setup != Setup::Virtual
                    && match hip {
                        Hip::V5_2 => false,
                        Hip::V6_4 => symbol == scale.0,
                        Hip::V7_2 => true,
                    };
                let as_expected = if below {
                    r["kernarg_state"] == "unreadable"
                        && r["kernarg_unreadable"] == "not_known_readable"
                } else {
                    r["kernarg_state"] == "captured" && ok
                };
                if !as_expected {
                    p.push(format!(
                        "a graph launch of {symbol} grid {} has kernarg_state {} ({}) and \
                         arguments {}, expected {}",
                        r["grid"],
                        r["kernarg_state"],
                        r["kernarg_unreadable"],
                        r["call"],
                        if below {
                            "unreadable (not_known_readable)"
                        } else {
                            "the values passed"
                        }
                    ));
                }
            }
        },
    );
}

/// hipRTC (`integration/hip/hiprtc.cpp`): a source string compiled at run time for the
/// device's gcnArchName, the code object loaded with `hipModuleLoadData` and launched with
/// `hipModuleLaunchKernel`. The dispatches carry the run-time compiled kernels' names (an
/// extern "C" one and a template instance found through its lowered name), and their kernel
/// argument bytes hold the values passed. hipRTC is `libamdhip64.so.5` itself on HIP 5.2,
/// `libhiprtc.so.6` on 6.4 and `libhiprtc.so.7` on 7.2.
fn hiprtc(hip: Hip) {
    let axpy = ("rtc_axpy.kd", "rtc_axpy");
    let fill = ("_Z8rtc_fillIiEvPT_S0_.kd", "void rtc_fill<int>(int*, int)");
    let want = Expect {
        dispatches: vec![
            kd(axpy.0, axpy.1, [1024, 1, 1], [256, 1, 1], 0, 1),
            kd(axpy.0, axpy.1, [64, 1, 1], [64, 1, 1], 0, 1),
            kd(fill.0, fill.1, [256, 1, 1], [128, 1, 1], 0, 1),
        ],
        rejected: vec![],
        blits: vec![],
        facts: facts(&[
            (
                "hiprtc_library",
                match hip {
                    Hip::V5_2 => "libamdhip64.so.5",
                    Hip::V6_4 => "libhiprtc.so.6",
                    Hip::V7_2 => "libhiprtc.so.7",
                },
            ),
            ("gcn_arch_name", "gfx90a:sramecc+:xnack-"),
            ("lowered_fill", "_Z8rtc_fillIiEvPT_S0_"),
            ("code_object", "elf"),
            ("launches", "3"),
        ]),
        ending: Ending::Exit,
    };
    check_runs(
        hip,
        "hiprtc",
        &[],
        "hiprtc",
        |_| want.clone(),
        |run, p| {
            let [Some(x), Some(y), Some(ptr)] =
                ["x", "y", "p"].map(|k| run.fact(k).and_then(parse_u64))
            else {
                p.push("the program did not print the addresses x, y and p".into());
                return;
            };
            // rtc_axpy(float a, const float *x, float *y, int n): an extern "C" name carries
            // no types, so the argument bytes are read from the segment at the offsets of the
            // code object's metadata (0, 8, 16, 24).
            for r in dispatches_of(run, axpy.0) {
                let (a, n) = if r["grid"][0] == 1024 {
                    (2.5f32, 1000u64)
                } else {
                    (-0.5, 64)
                };
                let k = kernarg_bytes(r);
                let got = (le(&k, 0, 4), le(&k, 8, 8), le(&k, 16, 8), le(&k, 24, 4));
                let offsets: Vec<&Value> = (0..4).map(|i| &r["args"][i]["offset"]).collect();
                if r["kernarg_state"] != "captured"
                    || got != (Some(u64::from(a.to_bits())), Some(x), Some(y), Some(n))
                    || offsets != [&json!(0), &json!(8), &json!(16), &json!(24)]
                {
                    p.push(format!(
                        "rtc_axpy grid {}: kernarg_state {}, kernel arguments {:?} at offsets \
                         {offsets:?}, expected a={a} x={x:#x} y={y:#x} n={n} (segment {})",
                        r["grid"], r["kernarg_state"], got, r["kernarg"]
                    ));
                }
            }
            // rtc_fill<int>(int *p, int v): its mangled name types the arguments.
            for r in dispatches_of(run, fill.0) {
                let k = kernarg_bytes(r);
                let typed = r["args"][0]["type"] == "int*"
                    && r["args"][0]["value"] == format!("{ptr:#x}")
                    && r["args"][1]["type"] == "int"
                    && r["args"][1]["value"] == -7;
                if r["kernarg_state"] != "captured"
                    || !typed
                    || le(&k, 0, 8) != Some(ptr)
                    || le(&k, 8, 4) != Some(u64::from((-7i32) as u32))
                {
                    p.push(format!(
                        "rtc_fill<int>: kernarg_state {}, arguments {}, expected p={ptr:#x} \
                         v=-7 (segment {})",
                        r["kernarg_state"], r["call"], r["kernarg"]
                    ));
                }
            }
        },
    );
}

/// The same tests for each HIP version: `hip_5_2::<test>`, `hip_6_4::<test>` and
/// `hip_7_2::<test>` (`cargo test --release --test integration_hip hip_7_2::` runs one version).
macro_rules! per_hip_version {
    ($($test:ident => $body:expr;)*) => {
        mod hip_5_2 {
            use super::*;
            $(#[test] fn $test() { ($body)(Hip::V5_2) })*
        }
        mod hip_6_4 {
            use super::*;
            $(#[test] fn $test() { ($body)(Hip::V6_4) })*
        }
        mod hip_7_2 {
            use super::*;
            $(#[test] fn $test() { ($body)(Hip::V7_2) })*
        }
    };
}

/// `exit_launching`: the program exits while 3 threads are still launching.
/// Every launch whose completion a thread observed (counted after the shim
/// finalised the capture) is in the capture; the ones after its trailer are
/// reported as late, and the capture is never complete.
fn exit_while_launching(hip: Hip) {
    let exe = build(hip, "exit_launching");
    let run = run(hip, &exe, &[], Completion::Inline, "exit_launching", &[]);
    let ctx = run.context();
    assert!(
        run.status.is_some_and(|s| s.success()),
        "{} exited with {:?}\n{ctx}",
        run.what,
        run.status
    );
    assert_eq!(run.fact("done"), Some("1"), "{ctx}");
    let cap = softgpu_hsa::capture::read_file(&run.capture.host)
        .unwrap_or_else(|e| panic!("capture unreadable: {e}\n{ctx}"));
    for t in 0..3u32 {
        let observed: u64 = run
            .fact(&format!("observed_{t}"))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no observed_{t} fact\n{ctx}"));
        let grid = 64 * (t + 1);
        let captured = cap
            .records
            .iter()
            .filter(|r| {
                let ko = u64::from_le_bytes(r.raw[32..40].try_into().unwrap());
                let gx = u32::from_le_bytes(r.raw[12..16].try_into().unwrap());
                r.raw[0] == 2 && gx == grid && cap.kernel_symbol(ko) == Some("_Z4tickPii.kd")
            })
            .count() as u64;
        assert!(
            captured >= observed,
            "thread {t}: {captured} launches captured, {observed} observed complete\n{ctx}"
        );
    }
    assert!(cap.trailer.is_some(), "{ctx}");
    assert!(cap.end.late_records > 0, "{:?}\n{ctx}", cap.end);
    assert!(!cap.complete);
    assert!(
        run.read_problems
            .iter()
            .any(|p| p.contains("arrived after the program's exit began")),
        "inspect says so: {:?}",
        run.read_problems
    );
}

per_hip_version! {
    a_kernels_arguments_decode_to_the_values_passed_and_freed_and_null_pointers_are_found
        => kernel_arguments;
    intercept_and_observe_copy_kernel_arguments_from_the_real_kernarg_pool_and_find_what_virtual_finds
        => kernel_arguments_forwarded;
    each_bad_pointer_class_gets_its_own_finding_and_nothing_else_does
        => lint_classes;
    a_program_exiting_while_three_threads_still_launch_keeps_every_observed_launch_in_its_capture
        => exit_while_launching;
    the_bundled_example_launches_vadd_once_with_its_geometry_and_its_output_is_not_computed
        => example;
    every_copy_direction_moves_the_bytes_exactly_and_memset_and_device_copies_are_flagged_blits
        => memcpy;
    streams_events_and_callbacks_complete_in_order_and_every_launch_on_every_stream_is_counted
        => streams;
    code_objects_load_from_file_and_memory_and_module_launches_keep_their_geometry_and_lds
        => module;
    group_segment_size_is_static_plus_dynamic_lds_and_no_launch_over_the_limit_is_validated
        => lds;
    four_host_threads_launching_at_once_lose_and_duplicate_no_dispatch => threads;
    a_kernel_calling_printf_neither_hangs_nor_crashes_nor_prints => printf;
    a_child_forked_after_hip_init_writes_nothing_into_the_parents_capture
        => |hip| fork(hip, "fork");
    a_shell_started_by_system_after_hip_init_writes_no_capture => |hip| fork(hip, "system");
    hip_discovers_one_gfx90a_device_with_the_advertised_properties => properties;
    arrays_textures_and_surfaces_work_their_descriptors_are_softgpus_and_array_copies_are_flagged_blits
        => images;
    the_image_limits_are_uint32_values_as_hip_reads_them => image_limits;
    under_address_sanitizer_no_image_limit_write_overflows_its_uint32_buffer
        => image_limits_under_asan;
    grid_synchronising_cooperative_launches_go_to_the_cooperative_queue_and_are_captured
        => |hip| cooperative(hip, 1);
    a_cooperative_multi_device_launch_over_two_gpus_is_captured_on_each_cooperative_queue
        => |hip| cooperative(hip, 2);
    intercept_and_observe_run_the_example_over_a_stand_in_rocr_and_capture_what_virtual_does
        => |hip| over_a_stand_in_rocr(hip, example);
    intercept_and_observe_move_every_copy_and_capture_every_blit => |hip| over_a_stand_in_rocr(hip, memcpy);
    intercept_and_observe_keep_stream_event_and_callback_order => |hip| over_a_stand_in_rocr(hip, streams);
    intercept_and_observe_name_kernels_of_modules_the_real_runtime_loads
        => |hip| over_a_stand_in_rocr(hip, module);
    intercept_and_observe_check_lds_against_the_real_agent => |hip| over_a_stand_in_rocr(hip, lds);
    intercept_and_observe_lose_no_dispatch_of_four_threads => |hip| over_a_stand_in_rocr(hip, threads);
    intercept_and_observe_survive_a_printf_kernel => |hip| over_a_stand_in_rocr(hip, printf);
    intercept_and_observe_forward_device_properties => |hip| over_a_stand_in_rocr(hip, properties);
    intercept_and_observe_forward_the_image_extension => |hip| over_a_stand_in_rocr(hip, images);
    intercept_and_observe_keep_a_forked_child_out_of_the_capture
        => |hip| over_a_stand_in_rocr(hip, |hip| fork(hip, "fork"));
    intercept_and_observe_keep_a_shell_from_system_out_of_the_capture
        => |hip| over_a_stand_in_rocr(hip, |hip| fork(hip, "system"));
    the_rocr_7_2_functions_hip_7_binds_answer_as_rocr_does_and_older_hips_report_them_absent
        => rocr7;
    graph_launches_from_stream_capture_and_explicit_nodes_are_each_node_dispatched_once_per_launch
        => graph;
    a_hiprtc_compiled_kernel_is_dispatched_under_its_own_name_with_the_arguments_passed
        => hiprtc;
    intercept_and_observe_capture_every_graph_launch_as_virtual_does
        => |hip| over_a_stand_in_rocr(hip, graph);
    intercept_and_observe_capture_hiprtc_kernels_with_their_arguments
        => |hip| over_a_stand_in_rocr(hip, hiprtc);
}

// ---------------------------------------------------------------------------
// The harness itself
// ---------------------------------------------------------------------------

#[test]
fn every_hip_program_in_integration_hip_is_run_by_some_test() {
    let this = std::fs::read_to_string(repo().join("tests/integration_hip.rs")).unwrap();
    let mut unrun = Vec::new();
    for entry in std::fs::read_dir(repo().join("integration/hip")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cpp") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            // bench_launch is scripts/bench-launch's; module_kernels is module's code object.
            if stem == "bench_launch" {
                continue;
            }
            if !this.contains(&format!("\"{stem}\"")) && !this.contains(&format!("\"{stem}.cpp\""))
            {
                unrun.push(format!("integration/hip/{stem}.cpp"));
            }
        }
    }
    assert!(
        unrun.is_empty(),
        "no test in tests/integration_hip.rs names these programs, so nothing runs them: {unrun:?}"
    );
}

/// The chroot of `hip` is ready and the host-built shim loads inside it (its glibc and the rest
/// are new enough for it).
fn chroot_runs_the_host_built_shim(hip: Hip) {
    let c = corner(hip).expect("a HIP version that runs in a chroot");
    let out = c
        .chroot
        .run_command()
        .args(["/usr/bin/env", "-i"])
        .arg(format!("LD_PRELOAD={}", c.shim.seen))
        .args(["SOFTGPU_SUMMARY=0", "/bin/true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("cannot be preloaded"),
        "running /bin/true with the shim preloaded inside the chroot at {} failed ({}): {err}",
        c.chroot.root.display(),
        out.status
    );
}

#[test]
fn the_sid_chroot_is_ready_with_hip_6_4_and_runs_the_host_built_shim() {
    chroot_runs_the_host_built_shim(Hip::V6_4);
}

#[test]
fn the_rocm7_chroot_is_ready_with_hip_7_2_and_runs_the_host_built_shim() {
    chroot_runs_the_host_built_shim(Hip::V7_2);
}

#[test]
fn bad_completion_settings_are_reported_once_by_name_and_the_program_still_completes() {
    let hip = Hip::V5_2;
    let exe = build(hip, "example");
    let run = run(
        hip,
        &exe,
        &[],
        Completion::Inline,
        "bad-completion",
        &[
            ("SOFTGPU_COMPLETION", "sideways"),
            ("SOFTGPU_COMPLETION_DELAY_US", "soon"),
        ],
    );
    let mut p = Vec::new();
    for var in ["SOFTGPU_COMPLETION", "SOFTGPU_COMPLETION_DELAY_US"] {
        // "softgpu: ignoring VAR=\"value\": accepted values are ...; using the default (...)"
        let needle = format!("{var}=");
        let n = run.stderr.lines().filter(|l| l.contains(&needle)).count();
        if n != 1 {
            p.push(format!(
                "{n} stderr lines name {var}=<bad value>, expected exactly one"
            ));
        }
    }
    let want = Expect {
        dispatches: vec![kd(
            "_Z4vaddPKfS0_Pfi.kd",
            "vadd(float const*, float const*, float*, int)",
            [1 << 20, 1, 1],
            [256, 1, 1],
            0,
            1,
        )],
        rejected: vec![],
        blits: vec![],
        facts: vec![],
        ending: Ending::Exit,
    };
    // The bad values are reported, so drop that one check of `problems`.
    p.extend(
        problems(&run, &want)
            .into_iter()
            .filter(|x| !x.contains("complained about SOFTGPU_COMPLETION")),
    );
    assert!(
        p.is_empty(),
        "{}:\n  {}\n{}",
        run.what,
        p.join("\n  "),
        run.context()
    );
}

/// A record as `softgpu inspect --format jsonl` prints it, for the checker's own test.
fn record(seq: u64, queue: u64, index: u64, ty: &str, symbol: Option<&str>) -> Value {
    let type_byte = match ty {
        "kernel_dispatch" => "02",
        _ => "03",
    };
    let mut r = json!({
        "seq": seq, "pid": 4242, "queue_id": queue, "packet_index": index, "type": ty,
        "status": "validated", "label": "diagnostic_complete_no_execution", "reasons": [],
        "kernel_symbol": null, "kernel_name": null, "target": "gfx90a",
        "kernarg_class": null, "grid": null, "workgroup": null, "group_segment_size": 0,
        "raw": format!("{type_byte}{}", "0".repeat(126)),
    });
    if let Some(s) = symbol {
        r["kernel_symbol"] = json!(s);
        r["kernel_name"] = json!(s.trim_end_matches(".kd"));
        r["grid"] = json!([64, 1, 1]);
        r["workgroup"] = json!([64, 1, 1]);
        r["kernarg_class"] = json!("softgpu");
        if s.starts_with(BLIT_PREFIX) {
            r["reasons"] = json!([BLIT_REASON]);
        }
    }
    r
}

#[test]
fn the_capture_checker_accepts_a_faithful_run_and_reports_each_kind_of_difference() {
    let dir = Place {
        host: PathBuf::from("/nonexistent/run"),
        seen: "/nonexistent/run".into(),
    };
    let faithful = || {
        Run {
            setup: Setup::Virtual,
        what: "synthetic".into(),
        hip: Hip::V5_2,
        mode: Completion::Inline,
        pid: 4242,
        status: None,
        stdout: "sg: hip_version=5.2\nsg: x=1\nsg: done=1\n".into(),
        stderr: "softgpu: 2 dispatches validated (diagnostic_complete_no_execution, \
                 not_kernel_success), 0 rejected, 1 barriers; capture: /nonexistent/run/capture-4242.sgcap\n"
            .into(),
        facts: [("hip_version", "5.2"), ("x", "1"), ("done", "1")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        capture: sub(&dir, "capture-4242.sgcap"),
        dir: dir.clone(),
        captures: vec!["capture-4242.sgcap".into()],
        records: vec![
            record(0, 7, 0, "kernel_dispatch", Some("k.kd")),
            record(1, 7, 1, "kernel_dispatch", Some("__amd_rocclr_fillBufferAligned.kd")),
            record(2, 7, 2, "barrier_and", None),
        ],
        read_problems: vec![],
        stragglers: vec![],
    }
    };
    let want = Expect {
        dispatches: vec![kd("k.kd", "k", [64, 1, 1], [64, 1, 1], 0, 1)],
        rejected: vec![],
        blits: vec![("__amd_rocclr_fillBuffer", 1)],
        facts: facts(&[("x", "1")]),
        ending: Ending::Exit,
    };
    // `status: None` means killed; a faithful run exited 0.
    let ok = || {
        let mut r = faithful();
        r.status = Command::new("true").status().ok();
        r
    };
    assert_eq!(problems(&ok(), &want), Vec::<String>::new());

    let expect_problem = |mutate: &dyn Fn(&mut Run), needle: &str| {
        let mut r = ok();
        mutate(&mut r);
        let p = problems(&r, &want);
        assert!(
            p.iter().any(|x| x.contains(needle)),
            "expected a problem containing {needle:?}, got {p:?}"
        );
    };
    expect_problem(&|r| r.status = None, "hung");
    expect_problem(
        &|r| r.facts.remove("done").map(|_| ()).unwrap_or(()),
        "sg: done=1",
    );
    expect_problem(
        &|r| {
            r.facts.insert("x".into(), "2".into());
        },
        "fact x=2",
    );
    expect_problem(&|r| r.records[0]["grid"] = json!([128, 1, 1]), "expected 1");
    expect_problem(
        &|r| r.records[0]["grid"] = json!([128, 1, 1]),
        "unexpected dispatches",
    );
    expect_problem(
        &|r| r.records[0]["kernel_name"] = json!(null),
        "both must be known",
    );
    expect_problem(
        &|r| r.records[0]["group_segment_size"] = json!(512),
        "expected 1",
    );
    expect_problem(
        &|r| r.records[1]["reasons"] = json!([]),
        "runtime blit kernel with reasons",
    );
    expect_problem(
        &|r| r.records[0]["reasons"] = json!([BLIT_REASON]),
        "user kernel with reasons",
    );
    expect_problem(
        &|r| r.records[1]["kernel_symbol"] = json!("__amd_rocclr_copyBuffer.kd"),
        "unexpected blit",
    );
    expect_problem(
        &|r| {
            r.records[1]["arg_findings"] = json!([
                {"index": 0, "address": 4096, "code": "pointer_in_allocation",
                 "allocation": 1, "offset": 0, "remaining": 64},
                {"index": 1, "address": 0, "code": "pointer_null"},
                {"index": 2, "address": 12345, "code": "pointer_unknown"},
            ])
        },
        "pointer findings [\"pointer_unknown\"]",
    );
    expect_problem(&|r| r.records[2]["packet_index"] = json!(5), "packet_index");
    expect_problem(&|r| r.records[2]["pid"] = json!(1), "pid");
    expect_problem(
        &|r| r.records[2]["type"] = json!("agent_dispatch"),
        "only kernel dispatches",
    );
    expect_problem(
        &|r| {
            r.records[0]["status"] = json!("rejected");
            r.records[0]["label"] = json!("diagnostic_rejected");
        },
        "rejected",
    );
    expect_problem(
        &|r| r.captures.push("capture-4243.sgcap".into()),
        "child process captured",
    );
    expect_problem(&|r| r.stderr.clear(), "no exit summary line");
    expect_problem(
        &|r| r.records.pop().map(|_| ()).unwrap_or(()),
        "exit summary says",
    );
    expect_problem(&|r| r.stdout.push_str("SG-KERNEL-PRINTF tag=1\n"), "printf");
    expect_problem(
        &|r| {
            r.read_problems
                .push("softgpu inspect warned about the capture: incomplete".into())
        },
        "incomplete",
    );

    // An expected rejection: a user dispatch over the LDS limit.
    let reject = |r: &mut Run| {
        let mut extra = record(3, 7, 3, "kernel_dispatch", Some("k.kd"));
        extra["status"] = json!("rejected");
        extra["label"] = json!("diagnostic_rejected");
        extra["reasons"] = json!(["group_segment_too_large"]);
        extra["group_segment_size"] = json!(66560);
        r.records.push(extra);
        r.stderr = r.stderr.replace("0 rejected", "1 rejected");
    };
    let mut want_reject = want.clone();
    want_reject.rejected.push((
        kd("k.kd", "k", [64, 1, 1], [64, 1, 1], 66560, 1),
        "group_segment",
    ));
    let mut r = ok();
    reject(&mut r);
    assert_eq!(problems(&r, &want_reject), Vec::<String>::new());
    let p = problems(&r, &want);
    assert!(
        p.iter().any(|x| x.contains("were rejected")),
        "an unexpected rejection must be reported: {p:?}"
    );
    let p = problems(&ok(), &want_reject);
    assert!(
        p.iter().any(|x| x.contains("0 rejected dispatches")),
        "a missing rejection must be reported: {p:?}"
    );
    let mut r = ok();
    reject(&mut r);
    r.records[3]["reasons"] = json!(["kernarg_misaligned"]);
    let p = problems(&r, &want_reject);
    assert!(
        p.iter().any(|x| x.contains("expected one containing")),
        "a rejection for another reason must be reported: {p:?}"
    );

    // A program HIP's queue error callback aborted (HIP 6.4): SIGABRT after HIP's line, no
    // `sg: done=1`, no exit summary, and a capture without a trailer whose last records the
    // reader recovered from the live ring.
    let want_abort = Expect {
        ending: Ending::HipAbort,
        ..want.clone()
    };
    let aborted = || {
        let mut r = faithful();
        r.status = Command::new("sh")
            .args(["-c", "kill -ABRT $$"])
            .status()
            .ok();
        r.facts.remove("done");
        r.stdout = "sg: hip_version=5.2\nsg: x=1\n".into();
        r.stderr = ":0:rocdevice.cpp            :2992: 1 us:  Callback: Queue 0x7f0000 aborting \
                    with error : HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation \
                    is not valid. code: 0x1003\n"
            .into();
        r.read_problems.push(
            "softgpu inspect warned about the capture: softgpu: warning: file \
             /nonexistent/run/capture-4242.sgcap: capture is incomplete (no trailer: the process \
             did not finish it: it ended without running its exit handlers (abort, _exit, or a \
             kill); the file ends after a whole frame; 1 records recovered from the capture's \
             live ring); showing the 3 records it holds"
                .into(),
        );
        // The barrier, recovered on a queue whose first records the writer never wrote.
        r.records[2]["target"] = json!(null);
        r
    };
    assert_eq!(problems(&aborted(), &want_abort), Vec::<String>::new());
    let abort_problem = |mutate: &dyn Fn(&mut Run), needle: &str| {
        let mut r = aborted();
        mutate(&mut r);
        let p = problems(&r, &want_abort);
        assert!(
            p.iter().any(|x| x.contains(needle)),
            "expected a problem containing {needle:?}, got {p:?}"
        );
    };
    let p = problems(&aborted(), &want);
    assert!(
        p.iter().any(|x| x.contains("sg: done=1")) && p.iter().any(|x| x.contains("incomplete")),
        "an aborted run must fail an expectation of a normal exit: {p:?}"
    );
    abort_problem(
        &|r| r.status = Command::new("true").status().ok(),
        "expected to be killed by SIGABRT",
    );
    abort_problem(
        &|r| r.stderr.clear(),
        "queue error callback must print one line",
    );
    abort_problem(
        &|r| {
            r.facts.insert("done".into(), "1".into());
        },
        "printed `sg: done=`",
    );
    abort_problem(&|r| r.read_problems.clear(), "did not warn");
    abort_problem(
        &|r| {
            r.read_problems[0] = r.read_problems[0].replace("1 records recovered", "1 records were being written when the process died, or lost with the end of the file, and are missing; 1 records recovered")
        },
        "are missing",
    );
    abort_problem(&|r| r.stderr.push_str(&ok().stderr), "exit summary line");
    abort_problem(&|r| r.records[1]["seq"] = json!(5), "without gaps");
    abort_problem(
        &|r| {
            r.records[0]["kernarg_state"] = json!("lost");
            r.records[0]["kernarg_class"] = json!("foreign_opaque");
        },
        "look recovered",
    );
    abort_problem(
        &|r| r.records[0]["kernarg_state"] = json!("lost"),
        "recovered from the live ring, but",
    );
}
