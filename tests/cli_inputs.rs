//! Inputs that are not what a verb expects: every verb that reads a file
//! (`inspect`, `replay`, `diff` on either side, `objects`) refuses a FIFO, a
//! device, a directory and a huge sparse file with a clear error naming the
//! file, at once (a FIFO must not block: each run has a deadline); `diff` opens each
//! input once; file names and option values that are not UTF-8 get clear
//! errors, never a panic.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use softgpu_hsa::aql::{PacketRecord, ReasonSet, Status};
use softgpu_hsa::capture::{AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass};

/// Generous: each of these runs takes milliseconds when it does not hang.
const DEADLINE: Duration = Duration::from_secs(30);

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_inputs");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn softgpu<S: AsRef<OsStr>>(args: &[S], what: &str) -> Output {
    let mut cmd = Command::new(common::cli());
    cmd.args(args);
    common::output_within(&mut cmd, DEADLINE, what)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A small complete capture with one kernel dispatch.
fn capture(path: &Path) {
    let header = CaptureHeader {
        pid: 7,
        start_unix_ns: 0,
        mode: "virtual".into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    };
    let w = CaptureWriter::create(path, header, Box::new(|_| KernargClass::Softgpu)).unwrap();
    let mut q = w.register_queue(3, 1, 64, 0);
    w.add_code_object(vec![(0x1000, "_Z4vaddPKfS0_Pfi.kd".into())]);
    let mut raw = [0u8; 64];
    raw[0] = 2; // kernel dispatch
    raw[32..40].copy_from_slice(&0x1000u64.to_le_bytes());
    // Classified as the parser does, so that replay matches.
    let (status, reasons) = match softgpu_hsa::aql::parse_supported_packet(&raw) {
        Ok(_) => (Status::Validated, ReasonSet::EMPTY),
        Err(r) => (Status::Rejected, r),
    };
    q.push(&PacketRecord {
        queue_id: 3,
        packet_index: 0,
        raw,
        status,
        reasons,
        observed_ns: 1,
        done_ns: 2,
        thread: 9,
    });
    w.finish(0, 3).unwrap();
}

fn fifo(name: &str) -> PathBuf {
    let p = dir().join(name);
    let _ = std::fs::remove_file(&p);
    let ok = Command::new("mkfifo").arg(&p).status().unwrap().success();
    assert!(ok, "mkfifo {} failed", p.display());
    p
}

/// A sparse file that claims 1 TiB and holds nothing.
fn huge_sparse(name: &str) -> PathBuf {
    let p = dir().join(name);
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(1 << 40).unwrap();
    p
}

/// `(input, what the error must say about it)`.
fn bad_inputs(tag: &str) -> Vec<(PathBuf, &'static str)> {
    let d = dir().join(format!("a-directory-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    vec![
        (
            fifo(&format!("fifo-{tag}")),
            "not a regular file (it is a FIFO)",
        ),
        (
            PathBuf::from("/dev/zero"),
            "not a regular file (it is a character device)",
        ),
        (d, "not a regular file (it is a directory)"),
        (
            huge_sparse(&format!("sparse-{tag}.sgcap")),
            "the file is 1099511627776 bytes, more than the 1073741824 bytes",
        ),
    ]
}

fn assert_refused(o: &Output, input: &Path, says: &str, what: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {e}");
    assert!(
        e.contains(&format!("file {}: ", input.display())),
        "{what}: the error names the file: {e}"
    );
    assert!(e.contains(says), "{what}: expected {says:?} in: {e}");
    assert!(!e.contains("panicked"), "{what}: {e}");
}

#[test]
fn inspect_and_replay_refuse_fifos_devices_directories_and_huge_files_at_once() {
    for (input, says) in bad_inputs("ir") {
        for verb in ["inspect", "replay"] {
            let what = format!("softgpu {verb} {}", input.display());
            let o = softgpu(&[OsStr::new(verb), input.as_os_str()], &what);
            assert_refused(&o, &input, says, &what);
        }
    }
}

#[test]
fn diff_refuses_fifos_devices_directories_and_huge_files_on_either_side() {
    let good = dir().join("good.sgcap");
    capture(&good);
    for (input, says) in bad_inputs("diff") {
        for (a, b) in [(&good, &input), (&input, &good)] {
            let what = format!("softgpu diff {} {}", a.display(), b.display());
            let o = softgpu(&[OsStr::new("diff"), a.as_os_str(), b.as_os_str()], &what);
            assert_refused(&o, &input, says, &what);
        }
    }
}

#[test]
fn objects_refuses_fifos_devices_and_directories_at_once_and_reads_a_huge_file_only_where_it_looks()
{
    // `objects` reads a file of any size with positioned reads, one bundle at
    // a time, so a 1 TiB file is not refused for its size: its first bytes are
    // read, are no known format, and that is the error (at once, reading
    // nothing more).
    for (input, says) in bad_inputs("objects") {
        let says = if says.starts_with("the file is") {
            "offset 0: not an ELF file"
        } else {
            says
        };
        let what = format!("softgpu objects {}", input.display());
        let o = softgpu(&[OsStr::new("objects"), input.as_os_str()], &what);
        assert_refused(&o, &input, says, &what);
    }
}

/// Builds an `LD_PRELOAD` library that counts the `open`/`openat` calls on the
/// path in `OPEN_COUNT_PATH` and writes the count to `OPEN_COUNT_OUT` at exit.
fn open_counter() -> PathBuf {
    let src = dir().join("open_counter.c");
    let lib = dir().join("open_counter.so");
    std::fs::write(
        &src,
        r#"#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static int count;

static void note(const char *path) {
    const char *want = getenv("OPEN_COUNT_PATH");
    if (want && path && strcmp(want, path) == 0)
        __atomic_fetch_add(&count, 1, __ATOMIC_SEQ_CST);
}

static mode_t mode_of(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define PATH_OPEN(name)                                                 \
    int name(const char *path, int flags, ...) {                        \
        va_list ap;                                                     \
        va_start(ap, flags);                                            \
        mode_t mode = mode_of(flags, ap);                               \
        va_end(ap);                                                     \
        note(path);                                                     \
        int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, #name);  \
        return real(path, flags, mode);                                 \
    }
#define AT_OPEN(name)                                                        \
    int name(int dir, const char *path, int flags, ...) {                    \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode_t mode = mode_of(flags, ap);                                    \
        va_end(ap);                                                          \
        note(path);                                                          \
        int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, #name);  \
        return real(dir, path, flags, mode);                                 \
    }
PATH_OPEN(open)
PATH_OPEN(open64)
AT_OPEN(openat)
AT_OPEN(openat64)

__attribute__((destructor)) static void report(void) {
    const char *out = getenv("OPEN_COUNT_OUT");
    if (!out) return;
    FILE *f = fopen(out, "w");
    if (f) {
        fprintf(f, "%d\n", count);
        fclose(f);
    }
}
"#,
    )
    .unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&src)
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| panic!("cannot run cc ({e}): run ./scripts/setup"));
    assert!(st.success(), "cc failed on {}", src.display());
    lib
}

#[test]
fn diff_opens_each_input_once() {
    let lib = open_counter();
    let a = dir().join("once-a.sgcap");
    let b = dir().join("once-b.sgcap");
    capture(&a);
    capture(&b);
    let csv = dir().join("once-c.csv");
    let inspect = softgpu(
        &[
            OsStr::new("inspect"),
            b.as_os_str(),
            OsStr::new("--format"),
            OsStr::new("csv"),
        ],
        "inspect --format csv",
    );
    assert_eq!(inspect.status.code(), Some(0), "{}", stderr(&inspect));
    std::fs::write(&csv, &inspect.stdout).unwrap();
    for (x, y, counted) in [(&a, &b, &a), (&a, &b, &b), (&a, &csv, &csv)] {
        let out = dir().join("once.count");
        let _ = std::fs::remove_file(&out);
        let mut cmd = Command::new(common::cli());
        cmd.arg("diff")
            .arg(x)
            .arg(y)
            .env("LD_PRELOAD", &lib)
            .env("OPEN_COUNT_PATH", counted)
            .env("OPEN_COUNT_OUT", &out);
        let o = common::output_within(&mut cmd, DEADLINE, "softgpu diff under the open counter");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let n = std::fs::read_to_string(&out).unwrap_or_else(|e| {
            panic!("the open counter wrote no count to {}: {e}", out.display())
        });
        assert_eq!(
            n.trim(),
            "1",
            "softgpu diff {} {} opened {} {} times",
            x.display(),
            y.display(),
            counted.display(),
            n.trim()
        );
    }
}

#[test]
fn file_names_that_are_not_utf8_are_read_and_named_with_their_bytes_escaped() {
    let name = OsStr::from_bytes(b"cap-\xff\xfe.sgcap");
    let path = dir().join(name);
    capture(&path);
    let escaped = r#"cap-\xFF\xFE.sgcap"#;
    let o = softgpu(
        &[OsStr::new("inspect"), path.as_os_str()],
        "inspect non-UTF-8",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(first.lines().next().unwrap().contains(escaped), "{first}");
    let o = softgpu(
        &[OsStr::new("replay"), path.as_os_str()],
        "replay non-UTF-8",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = softgpu(
        &[OsStr::new("diff"), path.as_os_str(), path.as_os_str()],
        "diff non-UTF-8",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8(o.stdout).unwrap().contains(escaped));
    // A missing one: the error shows the real bytes, not U+FFFD.
    let missing = dir().join(OsStr::from_bytes(b"missing-\xff.sgcap"));
    for verb in ["inspect", "replay"] {
        let o = softgpu(
            &[OsStr::new(verb), missing.as_os_str()],
            "missing non-UTF-8",
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(r#"missing-\xFF.sgcap"#), "{e}");
        assert!(!e.contains('\u{fffd}'), "{e}");
    }
}

#[test]
fn option_values_that_are_not_utf8_are_refused_naming_the_option() {
    let bad = OsStr::from_bytes(b"x\xff");
    let cases: [(&[&OsStr], &str); 5] = [
        (
            &[
                OsStr::new("run"),
                OsStr::new("--capture"),
                bad,
                OsStr::new("--"),
                OsStr::new("true"),
            ],
            "--capture",
        ),
        (
            &[
                OsStr::new("run"),
                OsStr::new("--target"),
                bad,
                OsStr::new("--"),
                OsStr::new("true"),
            ],
            "--target",
        ),
        (
            &[
                OsStr::new("run"),
                OsStr::new("--mode"),
                bad,
                OsStr::new("--"),
                OsStr::new("true"),
            ],
            "--mode",
        ),
        (
            &[
                OsStr::new("diff"),
                OsStr::new("a"),
                OsStr::new("b"),
                OsStr::new("--ignore"),
                bad,
            ],
            "--ignore",
        ),
        (&[OsStr::new("targets"), bad], "TARGET"),
    ];
    for (args, option) in cases {
        let o = softgpu(args, option);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{option}: {e}");
        assert!(e.contains(option), "{option}: {e}");
        assert!(e.contains(r#""x\xFF" is not valid UTF-8"#), "{option}: {e}");
        assert!(!e.contains("panicked"), "{option}: {e}");
    }
}

#[test]
fn run_in_a_directory_whose_name_is_not_utf8_refuses_a_relative_capture_path() {
    let d = dir().join(OsStr::from_bytes(b"cwd-\xff"));
    std::fs::create_dir_all(&d).unwrap();
    let mut cmd = Command::new(common::cli());
    cmd.args(["run", "--", "true"]).current_dir(&d);
    let o = common::output_within(&mut cmd, DEADLINE, "run in a non-UTF-8 directory");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("is not UTF-8") && e.contains(r#"cwd-\xFF"#),
        "{e}"
    );
}
