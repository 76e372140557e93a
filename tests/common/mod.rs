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

/// The shim built with the CLI. `cargo build` copies it to
/// `<profile>/libsoftgpu_hsa.so`, but `cargo test` rebuilds only
/// `<profile>/deps/libsoftgpu_hsa.so` and does not copy it up, so the newer of
/// the two is the one built from the current sources.
pub fn shim() -> PathBuf {
    let cli = cli();
    let dir = cli.parent().expect("the CLI path has a directory");
    [
        dir.join("libsoftgpu_hsa.so"),
        dir.join("deps/libsoftgpu_hsa.so"),
    ]
    .into_iter()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max()
    .map(|(_, p)| p)
    .unwrap_or_else(|| {
        panic!(
            "the shim libsoftgpu_hsa.so is not in {} (nor in deps/): run `cargo build --release` \
                 first (./scripts/test does), then `cargo test --release`",
            dir.display()
        )
    })
}

/// The two HIP versions the suite runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hip {
    /// Debian bookworm's HIP 5.2.3, on the host.
    V5_2,
    /// Debian sid's HIP 6.4.3, in the chroot of scripts/sid-chroot.
    V6_4,
}

impl Hip {
    pub fn label(self) -> &'static str {
        match self {
            Hip::V5_2 => "hip-5.2",
            Hip::V6_4 => "hip-6.4",
        }
    }
    /// What a program reports as HIP_VERSION_MAJOR.MINOR of the headers used.
    pub fn version(self) -> &'static str {
        match self {
            Hip::V5_2 => "5.2",
            Hip::V6_4 => "6.4",
        }
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
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {deadline:?}: it hung (killed)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
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
