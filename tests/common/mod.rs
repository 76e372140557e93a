//! Helpers shared by the integration tests: where the repository, the CLI and
//! the freshly built shim are. (Each test binary uses a subset.)
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `softgpu` binary built for this test run.
pub fn cli() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_softgpu"))
}

/// The environment variable that names the shim the tests load, overriding
/// the choice below.
pub const SHIM_VAR: &str = "SOFTGPU_TEST_SHIM";

/// The shim the tests load: `$SOFTGPU_TEST_SHIM` when set, else the one this
/// test run built. Cargo builds the library, its `cdylib` included, before it
/// runs any integration test, into `<profile>/deps/libsoftgpu_hsa.so`; that
/// file is the build of the current sources with this run's profile and
/// features. `cargo build` also leaves a copy in `<profile>/`, which
/// `cargo test` does not update, so it may be stale or built with other
/// features: the harness never picks between the two by time stamp, and never
/// loads another profile's build. Without the variable and without this run's
/// build it fails, saying what to build or how to choose.
pub fn shim() -> PathBuf {
    static CHOSEN: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match CHOSEN.get_or_init(choose_shim) {
        Ok(p) => p.clone(),
        Err(why) => panic!("{why}"),
    }
}

fn choose_shim() -> Result<PathBuf, String> {
    let cli = cli();
    let dir = cli
        .parent()
        .ok_or_else(|| format!("the CLI path {} has no directory", cli.display()))?;
    choose_shim_in(dir, std::env::var_os(SHIM_VAR).map(PathBuf::from))
}

/// [`shim`]'s choice in the profile directory `dir`, with `chosen` the value
/// of `$SOFTGPU_TEST_SHIM` (tested by `tests/harness.rs`).
pub fn choose_shim_in(dir: &Path, chosen: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(p) = chosen {
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{SHIM_VAR}={} is not a file", p.display()))
        };
    }
    let profile = dir
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let build = if profile == "release" {
        "cargo test --release"
    } else {
        "cargo test"
    };
    let deps = dir.join("deps/libsoftgpu_hsa.so");
    if deps.is_file() {
        return Ok(deps);
    }
    let top = dir.join("libsoftgpu_hsa.so");
    Err(if top.is_file() {
        format!(
            "this test run built no shim ({} is missing); {} is there but may be stale or \
             another build's, and the harness does not guess: run the tests with `{build}`, \
             or set {SHIM_VAR}=PATH to choose a shim",
            deps.display(),
            top.display()
        )
    } else {
        format!(
            "the shim libsoftgpu_hsa.so is not in {} (nor in deps/): run the tests with \
             `{build}` (./scripts/test does), or set {SHIM_VAR}=PATH",
            dir.display()
        )
    })
}

/// How [`wait_within`] ends a child that overran its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// The child alone.
    Child,
    /// The child's whole process group (the child was started with
    /// `process_group(0)`, so whatever it forked goes too).
    Group,
}

/// Waits for `child` until `deadline` has passed; then kills it (and, with
/// [`Kill::Group`], its process group) and returns `None`. The one
/// run-with-deadline loop of the suite: a hang fails the test that saw it
/// instead of hanging the suite. Not a timing assertion: deadlines are
/// generous.
pub fn wait_within(
    child: &mut std::process::Child,
    deadline: std::time::Duration,
    kill: Kill,
) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) => {}
            Err(e) => panic!("waiting for process {}: {e}", child.id()),
        }
        if start.elapsed() >= deadline {
            if kill == Kill::Group {
                kill_group(child.id());
            }
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// SIGKILL to every process of the group `pgid`.
pub fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(std::process::Stdio::null())
        .status();
}

/// The three HIP versions the suite runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hip {
    /// Debian bookworm's HIP 5.2.3, on the host.
    V5_2,
    /// Debian sid's HIP 6.4.3, in the chroot of scripts/sid-chroot.
    V6_4,
    /// Debian experimental's HIP 7.2.4 (ROCm 7.2.4), in the chroot of
    /// `scripts/sid-chroot --rocm7`.
    V7_2,
}

impl Hip {
    pub const ALL: [Hip; 3] = [Hip::V5_2, Hip::V6_4, Hip::V7_2];

    pub fn label(self) -> &'static str {
        match self {
            Hip::V5_2 => "hip-5.2",
            Hip::V6_4 => "hip-6.4",
            Hip::V7_2 => "hip-7.2",
        }
    }
    /// What a program reports as HIP_VERSION_MAJOR.MINOR of the headers used.
    pub fn version(self) -> &'static str {
        match self {
            Hip::V5_2 => "5.2",
            Hip::V6_4 => "6.4",
            Hip::V7_2 => "7.2",
        }
    }
    /// The full ROCm release, for messages and the matrix.
    pub fn release(self) -> &'static str {
        match self {
            Hip::V5_2 => "5.2.3",
            Hip::V6_4 => "6.4.3",
            Hip::V7_2 => "7.2.4",
        }
    }
    /// The chroot this version runs in (None: the host), its readiness
    /// marker's expected HIP package, and the command that builds it.
    pub fn chroot(self) -> Option<Chroot> {
        match self {
            Hip::V5_2 => None,
            Hip::V6_4 => Some(Chroot {
                root: sid_root(),
                hip_package: "libamdhip64-6=6.4.",
                build: "./scripts/sid-chroot",
                flag: None,
            }),
            Hip::V7_2 => Some(Chroot {
                root: rocm7_root(),
                hip_package: "libamdhip64-7=7.2.",
                build: "./scripts/sid-chroot --rocm7",
                flag: Some("--rocm7"),
            }),
        }
    }
}

/// A chroot of `scripts/sid-chroot`.
#[derive(Clone, Debug)]
pub struct Chroot {
    pub root: PathBuf,
    /// The start of the `package=version` its `.softgpu-ready` marker names.
    pub hip_package: &'static str,
    /// The command that builds it (for hints).
    pub build: &'static str,
    /// The flavour flag `scripts/sid-chroot` takes first for it.
    pub flag: Option<&'static str>,
}

impl Chroot {
    /// `scripts/sid-chroot [--rocm7] --run -- ` with the chroot's location in
    /// the environment: append the command (paths as the chroot sees them).
    pub fn run_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(repo().join("scripts/sid-chroot"));
        cmd.args(self.flag)
            .args(["--run", "--"])
            .env("SOFTGPU_SID_CHROOT", sid_root())
            .env("SOFTGPU_ROCM7_CHROOT", rocm7_root());
        cmd
    }
}

/// Runs `cmd` with its output captured; if it has not exited within
/// `deadline`, kills it and panics saying that `what` hung. For inputs that
/// must not block (a FIFO, a device): a hang fails the test instead of hanging
/// the suite. Not a timing assertion: the deadline is generous.
pub fn output_within(
    cmd: &mut std::process::Command,
    deadline: std::time::Duration,
    what: &str,
) -> std::process::Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    // Drain both pipes on threads so a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let Some(status) = wait_within(&mut child, deadline, Kill::Child) else {
        panic!("{what}: still running after {deadline:?}: it hung (killed)");
    };
    std::process::Output {
        status,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
    }
}

/// Checks (or, with `SOFTGPU_BLESS=1`, rewrites) the text between
/// `<!-- NAME:begin -->` and `<!-- NAME:end -->` in `file` (relative to the
/// repository): a generated section of the docs must match its source.
pub fn generated_section(file: &str, name: &str, want: &str) {
    let path = repo().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let start = text
        .find(&begin)
        .unwrap_or_else(|| panic!("{file} has no {begin:?} marker"))
        + begin.len();
    let stop = start
        + text[start..]
            .find(&end)
            .unwrap_or_else(|| panic!("{file} has no {end:?} marker"));
    if text[start..stop] == *want {
        return;
    }
    if std::env::var_os("SOFTGPU_BLESS").is_some_and(|v| v == "1") {
        let new = format!("{}{want}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    panic!(
        "{file}: the generated section `{name}` does not match its source; rerun with \
         SOFTGPU_BLESS=1 to rewrite it. Expected:\n{want}"
    );
}

/// The Debian sid chroot with HIP 6.4.3 (`scripts/sid-chroot`): `$SOFTGPU_SID_CHROOT`, default
/// `/var/cache/softgpu/sid`.
pub fn sid_root() -> PathBuf {
    std::env::var_os("SOFTGPU_SID_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/sid"))
}

/// The Debian sid + experimental chroot with ROCm 7.2.4 (`scripts/sid-chroot --rocm7`):
/// `$SOFTGPU_ROCM7_CHROOT`, default `/var/cache/softgpu/rocm7`.
pub fn rocm7_root() -> PathBuf {
    std::env::var_os("SOFTGPU_ROCM7_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/rocm7"))
}

/// A file or directory as the host sees it (`host`) and as the program sees it (`seen`: the
/// same path on the host; inside the chroot, the path below the chroot's root).
#[derive(Clone, Debug)]
pub struct Place {
    pub host: PathBuf,
    pub seen: String,
}

impl Place {
    /// A place on the host, seen under the same path.
    pub fn host(path: PathBuf) -> Place {
        let seen = path.display().to_string();
        Place { host: path, seen }
    }
    pub fn join(&self, name: &str) -> Place {
        Place {
            host: self.host.join(name),
            seen: format!("{}/{name}", self.seen),
        }
    }
}

/// This test process's own empty directory in the chroot at `root`, `softgpu/<prefix>-<pid>`,
/// as the host and the chroot see it. The directories of earlier test processes of the same
/// prefix that are gone are removed first.
pub fn process_dir_in_chroot(root: &Path, prefix: &str) -> Place {
    let base = root.join("softgpu");
    std::fs::create_dir_all(&base).unwrap();
    for entry in std::fs::read_dir(&base).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix(&format!("{prefix}-")) {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = format!("softgpu/{prefix}-{}", std::process::id());
    let host = root.join(&dir);
    let _ = std::fs::remove_dir_all(&host);
    std::fs::create_dir_all(&host).unwrap();
    Place {
        host,
        seen: format!("/{dir}"),
    }
}

/// Compile in the chroot with clang-22: `flags`, then `-o out src`, then `libs` (paths as the
/// chroot sees them). Panics with the compiler's output when it fails.
pub fn clang_in_chroot(chroot: &Chroot, flags: &[&str], out: &str, src: &str, libs: &[&str]) {
    let mut args = vec!["clang-22"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-o", out, src]);
    args.extend_from_slice(libs);
    let what = format!("clang-22 of {src}");
    let done = output_within(
        chroot.run_command().args(&args),
        std::time::Duration::from_secs(120),
        &what,
    );
    assert!(
        done.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// How a run under a deadline ended.
#[derive(Debug)]
pub struct Ended {
    pub pid: u32,
    /// None: still running at the deadline, then killed with its process group.
    pub status: Option<std::process::ExitStatus>,
    /// Processes of its group still alive after it exited (then killed).
    pub stragglers: Vec<u32>,
    pub elapsed: std::time::Duration,
}

/// Spawn `cmd` in its own process group and wait for it, at most `deadline`; at the deadline
/// the whole group gets SIGKILL. Anything of the group still alive after the program exited is
/// killed too, and reported.
pub fn run_with_deadline(
    cmd: &mut std::process::Command,
    deadline: std::time::Duration,
) -> std::io::Result<Ended> {
    use std::os::unix::process::CommandExt;
    let start = std::time::Instant::now();
    let mut child = cmd.process_group(0).spawn()?;
    let pid = child.id();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if start.elapsed() >= deadline {
            kill_group(pid);
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let stragglers = group_members(pid);
    if !stragglers.is_empty() {
        kill_group(pid);
    }
    Ok(Ended {
        pid,
        status,
        stragglers,
        elapsed,
    })
}

/// Live (not zombie) processes whose process group is `pgid`, from /proc.
pub fn group_members(pgid: u32) -> Vec<u32> {
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
