//! Raw-HSA C programs run under the shim, checked through the capture.
//!
//! Each program in `integration/` is compiled with `cc` against the system HSA
//! headers and linked against the system `libhsa-runtime64`. It then runs with
//! `LD_PRELOAD=<target>/libsoftgpu_hsa.so`, so the shim answers every HSA call
//! (virtual mode: no GPU and no real ROCr needed). Each program checks the
//! runtime's behaviour itself (signal values, read index, holds) and exits
//! nonzero on any surprise. This harness then checks what was recorded:
//! `softgpu inspect --format jsonl` on the capture, record by record, and the
//! exit summary line on stderr.
//!
//! The shim and CLI come from the same target directory as this test binary's
//! `softgpu` (`CARGO_BIN_EXE_softgpu`). `./scripts/test` runs `cargo build
//! --release` and then `cargo test --release`, so both are fresh.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{Kill, cli, repo, shim, wait_within};

/// A program that has not exited after this long is hung.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);
const SETUP_HINT: &str = "run ./scripts/setup (installs gcc and the pinned libhsa-runtime-dev)";

// ---------------------------------------------------------------------------
// Artifacts and running programs
// ---------------------------------------------------------------------------

fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("integration_raw_hsa")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compile `integration/<name>.c` into the work dir, once per test process
/// (tests run in parallel and several use the same program: compiling it twice
/// at once would race on the executable file); returns the executable.
fn compile(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<BTreeMap<String, PathBuf>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get(name) {
        return p.clone();
    }
    let exe = compile_uncached(name);
    built.insert(name.to_string(), exe.clone());
    exe
}

fn compile_uncached(name: &str) -> PathBuf {
    assert!(
        Path::new("/usr/include/hsa/hsa.h").is_file()
            && Path::new("/usr/include/hsa/hsa_ext_amd.h").is_file(),
        "HSA headers not found under /usr/include/hsa; {SETUP_HINT}"
    );
    let src = repo().join("integration").join(format!("{name}.c"));
    let exe = work_dir(name).join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=c11", "-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(repo().join("integration"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-lhsa-runtime64")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}; {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "compiling {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// One finished run of a program under the shim.
struct Run {
    name: String,
    pid: u32,
    stdout: String,
    stderr: String,
    /// `sg: key=value` lines the program printed.
    facts: BTreeMap<String, String>,
    capture: PathBuf,
    /// JSONL records, in file order.
    records: Vec<Value>,
}

impl Run {
    fn fact(&self, key: &str) -> &str {
        self.facts
            .get(key)
            .unwrap_or_else(|| panic!("{}: the program printed no `sg: {key}=` line", self.name))
    }
    fn fact_u64(&self, key: &str) -> u64 {
        let v = self.fact(key);
        parse_u64(v).unwrap_or_else(|| panic!("{}: fact {key}={v} is not a number", self.name))
    }
    fn context(&self) -> String {
        format!(
            "--- {} stdout ---\n{}--- {} stderr ---\n{}--- capture {} ---",
            self.name,
            self.stdout,
            self.name,
            self.stderr,
            self.capture.display()
        )
    }
}

/// Compile `name`, run it under the shim, then read its capture back.
fn run(name: &str) -> Run {
    let mut run = run_with(name, name, &[]);
    run.records = inspect_jsonl(&run);
    run
}

/// Compile `name`, run it with `args` under the shim (capture file named after
/// `tag`), and check it exited cleanly. Records are not read.
fn run_with(name: &str, tag: &str, args: &[&str]) -> Run {
    run_over(name, tag, args, &[])
}

/// `run_with` with extra environment on top of the standard one (which it overrides).
fn run_over(name: &str, tag: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let exe = compile(name);
    let shim = shim();
    let dir = work_dir(name);
    let capture = dir.join(format!("{tag}.sgcap"));
    let _ = std::fs::remove_file(&capture);
    // Per tag: tests running the same program at once must not share output files.
    let stdout_path = dir.join(format!("{tag}.stdout.txt"));
    let stderr_path = dir.join(format!("{tag}.stderr.txt"));

    let mut child = Command::new(&exe)
        .args(args)
        .current_dir(&dir)
        .env("LD_PRELOAD", &shim)
        .env("SOFTGPU_CAPTURE", &capture)
        .env("SOFTGPU_MODE", "virtual")
        .env("SOFTGPU_SUMMARY", "1")
        .env("SOFTGPU_LOG", "warn")
        .env_remove("SOFTGPU_TARGET")
        .env_remove("SOFTGPU_LOG_FILE")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).unwrap())
        .stderr(File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let pid = child.id();
    let status = wait_within(&mut child, RUN_TIMEOUT, Kill::Child);
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let facts = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("sg: "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let run = Run {
        name: name.to_string(),
        pid,
        stdout,
        stderr,
        facts,
        capture,
        records: Vec::new(),
    };
    match status {
        None => panic!(
            "{name} did not exit within {RUN_TIMEOUT:?} under the shim (hung; killed)\n{}",
            run.context()
        ),
        Some(s) if !s.success() => panic!(
            "{name} failed under the shim ({s}); its own checks say why:\n{}",
            run.context()
        ),
        Some(_) => {}
    }
    assert!(
        !run.stderr.contains("panicked"),
        "{name}: a panic message reached stderr\n{}",
        run.context()
    );
    let capture_off = env
        .iter()
        .any(|&(k, v)| k == "SOFTGPU_CAPTURE" && v == "off");
    assert!(
        capture_off || run.capture.is_file(),
        "{name}: no capture file at SOFTGPU_CAPTURE={}\n{}",
        run.capture.display(),
        run.context()
    );
    run
}

fn inspect_jsonl(run: &Run) -> Vec<Value> {
    let out = Command::new(cli())
        .arg("inspect")
        .arg(&run.capture)
        .args(["--format", "jsonl"])
        .output()
        .expect("cannot run softgpu inspect");
    assert!(
        out.status.success(),
        "softgpu inspect {} --format jsonl exited with {}:\n{}\n{}",
        run.capture.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr),
        run.context()
    );
    String::from_utf8(out.stdout)
        .expect("inspect prints UTF-8")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("inspect JSONL line {} is not JSON ({e}): {l}", i + 1))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The exit summary line
// ---------------------------------------------------------------------------

#[derive(Debug, PartialEq, Eq)]
struct Summary {
    validated: u64,
    rejected: u64,
    barriers: u64,
    capture: String,
}

const SUMMARY_MIDDLE: &str =
    " dispatches validated (diagnostic_complete_no_execution, not_kernel_success), ";

/// Parse the one exit summary line in `stderr`.
fn parse_summary(stderr: &str) -> Result<Summary, String> {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("softgpu: ") && l.contains(" dispatches validated "))
        .collect();
    let line = match lines.as_slice() {
        [one] => *one,
        [] => {
            return Err(
                "no exit summary line (`softgpu: N dispatches validated ...`) on stderr".into(),
            );
        }
        many => {
            return Err(format!(
                "{} exit summary lines on stderr, expected one",
                many.len()
            ));
        }
    };
    let bad = || format!("malformed exit summary line: {line:?}");
    let rest = line.strip_prefix("softgpu: ").ok_or_else(bad)?;
    let (n, rest) = rest.split_once(SUMMARY_MIDDLE).ok_or_else(bad)?;
    let (m, rest) = rest.split_once(" rejected, ").ok_or_else(bad)?;
    let (b, path) = rest.split_once(" barriers; capture: ").ok_or_else(bad)?;
    Ok(Summary {
        validated: n.parse().map_err(|_| bad())?,
        rejected: m.parse().map_err(|_| bad())?,
        barriers: b.parse().map_err(|_| bad())?,
        capture: path.to_string(),
    })
}

// ---------------------------------------------------------------------------
// Expected records
// ---------------------------------------------------------------------------

/// What one record must say. `None` fields are not checked.
#[derive(Clone, Debug)]
struct Want {
    ty: &'static str,
    status: &'static str,
    reasons: Option<Vec<&'static str>>,
    dims: Option<u64>,
    grid: Option<[u64; 3]>,
    workgroup: Option<[u64; 3]>,
    /// Key of the `sg: kernel_object_N=` fact the record's kernel object must equal.
    kernel_object: Option<String>,
    kernarg_class: Option<&'static str>,
    /// Whether the packet carries a completion signal (a nonzero handle).
    signal: Option<bool>,
    header: Option<(bool, &'static str, &'static str)>,
    segments: Option<(u64, u64)>,
}

impl Want {
    fn new(ty: &'static str, status: &'static str) -> Want {
        Want {
            ty,
            status,
            reasons: None,
            dims: None,
            grid: None,
            workgroup: None,
            kernel_object: None,
            kernarg_class: None,
            signal: None,
            header: None,
            segments: None,
        }
    }
    /// A validated dispatch with kernargs from the shim's pool and no findings.
    fn dispatch(dims: u64, grid: [u64; 3], workgroup: [u64; 3], kobj: usize) -> Want {
        Want {
            // The programs' kernel objects are fake (no code object is loaded),
            // so every validated dispatch carries this finding.
            reasons: Some(vec!["unknown_kernel_object"]),
            dims: Some(dims),
            grid: Some(grid),
            workgroup: Some(workgroup),
            kernel_object: Some(format!("kernel_object_{kobj}")),
            kernarg_class: Some("softgpu"),
            signal: Some(true),
            ..Want::new("kernel_dispatch", "validated")
        }
    }
    fn barrier_and() -> Want {
        Want {
            reasons: Some(vec![]),
            header: Some((true, "system", "system")),
            signal: Some(true),
            ..Want::new("barrier_and", "validated")
        }
    }
    fn barrier_or() -> Want {
        Want {
            reasons: Some(vec![]),
            header: Some((true, "system", "system")),
            signal: Some(true),
            ..Want::new("barrier_or", "validated")
        }
    }
    fn rejected(ty: &'static str, reason: &'static str) -> Want {
        Want {
            reasons: Some(vec![reason]),
            signal: Some(true),
            ..Want::new(ty, "rejected")
        }
    }
    fn no_signal(mut self) -> Want {
        self.signal = Some(false);
        self
    }
    fn header(mut self, barrier: bool, acquire: &'static str, release: &'static str) -> Want {
        self.header = Some((barrier, acquire, release));
        self
    }
    fn geometry(mut self, dims: u64, grid: [u64; 3], workgroup: [u64; 3]) -> Want {
        self.dims = Some(dims);
        self.grid = Some(grid);
        self.workgroup = Some(workgroup);
        self
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

fn json_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_str().and_then(parse_u64))
}

fn json_triple(v: &Value) -> Option<[u64; 3]> {
    let a = v.as_array()?;
    if a.len() != 3 {
        return None;
    }
    Some([a[0].as_u64()?, a[1].as_u64()?, a[2].as_u64()?])
}

/// The header type byte each JSONL `type` name stands for (None: any undefined type).
fn type_code(name: &str) -> Option<u8> {
    Some(match name {
        "vendor_specific" => 0,
        "invalid" => 1,
        "kernel_dispatch" => 2,
        "barrier_and" => 3,
        "agent_dispatch" => 4,
        "barrier_or" => 5,
        _ => return None,
    })
}

/// Check every record of `run` against `wants` and the JSONL contract, and the
/// exit summary against the counts. Panics with every problem found.
fn check(run: &Run, wants: &[Want]) {
    let problems = find_problems(run, wants);
    if !problems.is_empty() {
        let dump: Vec<String> = run.records.iter().take(40).map(|r| r.to_string()).collect();
        panic!(
            "{}: {} problem(s) with the capture:\n  {}\nrecords (first 40):\n{}\n{}",
            run.name,
            problems.len(),
            problems.join("\n  "),
            dump.join("\n"),
            run.context()
        );
    }
}

fn find_problems(run: &Run, wants: &[Want]) -> Vec<String> {
    let mut problems = Vec::new();
    let recs = &run.records;
    if recs.len() != wants.len() {
        problems.push(format!(
            "{} records in the capture, expected {}",
            recs.len(),
            wants.len()
        ));
    }
    let queue_id = run.fact_u64("queue_id");

    // Records in processing order must be the packets in index order, each once.
    let mut by_seq: Vec<&Value> = recs.iter().collect();
    by_seq.sort_by_key(|r| r["seq"].as_u64().unwrap_or(u64::MAX));
    for (i, r) in by_seq.iter().enumerate() {
        let at = format!("record seq={}", r["seq"]);
        if r["seq"].as_u64() != Some(i as u64) {
            problems.push(format!(
                "{at}: seq should be {i} (0, 1, 2, ... without gaps)"
            ));
        }
        if r["packet_index"].as_u64() != Some(i as u64) {
            problems.push(format!(
                "{at}: packet_index {} but the {i}th record processed should be packet {i}",
                r["packet_index"]
            ));
        }
        if json_u64(&r["queue_id"]) != Some(queue_id) {
            problems.push(format!(
                "{at}: queue_id {} , the program's queue is {queue_id}",
                r["queue_id"]
            ));
        }
        if r["pid"].as_u64() != Some(u64::from(run.pid)) {
            problems.push(format!(
                "{at}: pid {} , the program's pid is {}",
                r["pid"], run.pid
            ));
        }
        check_common(r, &at, &mut problems);
        if let Some(w) = wants.get(i) {
            check_want(run, r, w, &at, &mut problems);
        }
    }

    // The exit summary agrees with the records and the expectations.
    let want_validated = wants
        .iter()
        .filter(|w| w.ty == "kernel_dispatch" && w.status == "validated")
        .count() as u64;
    let want_rejected = wants.iter().filter(|w| w.status == "rejected").count() as u64;
    let want_barriers = wants
        .iter()
        .filter(|w| w.ty == "barrier_and" || w.ty == "barrier_or")
        .count() as u64;
    match parse_summary(&run.stderr) {
        Err(e) => problems.push(e),
        Ok(s) => {
            let want = Summary {
                validated: want_validated,
                rejected: want_rejected,
                barriers: want_barriers,
                capture: run.capture.display().to_string(),
            };
            if s != want {
                problems.push(format!("exit summary says {s:?}, expected {want:?}"));
            }
        }
    }
    let said = run.facts.get("packets");
    if said.is_some_and(|n| parse_u64(n) != Some(wants.len() as u64)) {
        problems.push(format!(
            "the program says it submitted {} packets; the test expects {}",
            said.unwrap(),
            wants.len()
        ));
    }

    problems
}

/// Checks every record must pass, whatever the packet.
fn check_common(r: &Value, at: &str, problems: &mut Vec<String>) {
    let status = r["status"].as_str().unwrap_or("");
    let label = r["label"].as_str().unwrap_or("");
    match (status, label) {
        ("validated", "diagnostic_complete_no_execution") | ("rejected", "diagnostic_rejected") => {
        }
        _ => problems.push(format!("{at}: status {status:?} with label {label:?}")),
    }
    match r["raw"].as_str() {
        Some(raw)
            if raw.len() == 128
                && raw
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            let type_byte = u8::from_str_radix(&raw[0..2], 16).unwrap();
            let ty = r["type"].as_str().unwrap_or("");
            match type_code(ty) {
                Some(code) if code != type_byte => problems.push(format!(
                    "{at}: type {ty:?} but the raw header's type byte is {type_byte}"
                )),
                None if ty != "unknown" => problems.push(format!("{at}: unknown type name {ty:?}")),
                None if type_byte <= 5 => problems.push(format!(
                    "{at}: type \"unknown\" but the raw header's type byte {type_byte} is defined"
                )),
                _ => {}
            }
        }
        _ => problems.push(format!(
            "{at}: raw is not 128 lower-case hex characters: {}",
            r["raw"]
        )),
    }
    if !r["reasons"].is_array() {
        problems.push(format!("{at}: reasons is not a list"));
    }
    if status == "rejected" && r["reasons"].as_array().is_some_and(|a| a.is_empty()) {
        problems.push(format!("{at}: rejected with no reason"));
    }
    for f in ["kernel_symbol", "kernel_name"] {
        // The kernel objects are fake: nothing may be invented for them.
        if !r[f].is_null() {
            problems.push(format!(
                "{at}: {f} is {} for a fake kernel object, expected null",
                r[f]
            ));
        }
    }
    if json_u64(&r["completion_signal"]).is_none() {
        problems.push(format!(
            "{at}: completion_signal {} is not a hex string",
            r["completion_signal"]
        ));
    }
    let ty = r["type"].as_str().unwrap_or("");
    if ty == "kernel_dispatch" {
        if r["target"].as_str() != Some("gfx90a") {
            problems.push(format!(
                "{at}: target {} , expected \"gfx90a\"",
                r["target"]
            ));
        }
    } else {
        for f in ["dimensions", "grid", "workgroup"] {
            if !r[f].is_null() {
                problems.push(format!(
                    "{at}: {f} is {} for a {ty} packet, expected null",
                    r[f]
                ));
            }
        }
        if !(r["target"].is_null() || r["target"].as_str() == Some("gfx90a")) {
            problems.push(format!(
                "{at}: target {} , expected \"gfx90a\" or null",
                r["target"]
            ));
        }
    }
}

fn check_want(run: &Run, r: &Value, w: &Want, at: &str, problems: &mut Vec<String>) {
    let mut expect = |field: &str, ok: bool, want: String| {
        if !ok {
            problems.push(format!("{at}: {field} is {}, expected {want}", r[field]));
        }
    };
    expect(
        "type",
        r["type"].as_str() == Some(w.ty),
        format!("{:?}", w.ty),
    );
    expect(
        "status",
        r["status"].as_str() == Some(w.status),
        format!("{:?}", w.status),
    );
    if let Some(reasons) = &w.reasons {
        let got: Option<Vec<&str>> = r["reasons"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect());
        expect(
            "reasons",
            got.as_ref() == Some(reasons),
            format!("{reasons:?}"),
        );
    }
    if let Some(d) = w.dims {
        expect(
            "dimensions",
            r["dimensions"].as_u64() == Some(d),
            d.to_string(),
        );
    }
    if let Some(g) = w.grid {
        expect("grid", json_triple(&r["grid"]) == Some(g), format!("{g:?}"));
    }
    if let Some(g) = w.workgroup {
        expect(
            "workgroup",
            json_triple(&r["workgroup"]) == Some(g),
            format!("{g:?}"),
        );
    }
    if let Some(key) = &w.kernel_object {
        let want = run.fact_u64(key);
        expect(
            "kernel_object",
            json_u64(&r["kernel_object"]) == Some(want),
            format!("{want:#x} ({key})"),
        );
    }
    if let Some(class) = w.kernarg_class {
        expect(
            "kernarg_class",
            r["kernarg_class"].as_str() == Some(class),
            format!("{class:?}"),
        );
    }
    match w.signal {
        Some(false) => expect(
            "completion_signal",
            json_u64(&r["completion_signal"]) == Some(0),
            "0x0 (no signal)".into(),
        ),
        Some(true) => expect(
            "completion_signal",
            json_u64(&r["completion_signal"]).is_some_and(|s| s != 0),
            "a nonzero handle".into(),
        ),
        None => {}
    }
    if let Some((barrier, acq, rel)) = w.header {
        let h = &r["header"];
        let ok = h["barrier"].as_bool() == Some(barrier)
            && h["acquire_fence_scope"].as_str() == Some(acq)
            && h["release_fence_scope"].as_str() == Some(rel);
        expect(
            "header",
            ok,
            format!("barrier {barrier}, acquire {acq:?}, release {rel:?}"),
        );
    }
    if let Some((private, group)) = w.segments {
        expect(
            "private_segment_size",
            r["private_segment_size"].as_u64() == Some(private),
            private.to_string(),
        );
        expect(
            "group_segment_size",
            r["group_segment_size"].as_u64() == Some(group),
            group.to_string(),
        );
    }
}

// ---------------------------------------------------------------------------
// The programs
// ---------------------------------------------------------------------------

#[test]
fn the_bundled_example_validates_three_dispatches_and_two_barriers_and_rejects_one_packet() {
    let run = run("example_vector");
    let mut wants = vec![
        Want::dispatch(1, [1024, 1, 1], [256, 1, 1], 0),
        Want::dispatch(1, [4096, 1, 1], [256, 1, 1], 0).no_signal(),
        Want::dispatch(3, [64, 64, 4], [8, 8, 4], 1),
        Want::barrier_and(),
        Want::rejected("kernel_dispatch", "workgroup_size_zero").geometry(
            1,
            [1024, 1, 1],
            [0, 1, 1],
        ),
        Want::barrier_and(),
    ];
    wants[2].segments = Some((0, 1024));
    check(&run, &wants);
    assert!(
        run.stdout.contains("c[1] = -1.0"),
        "the example's output buffer changed, but kernels never run:\n{}",
        run.context()
    );
}

#[test]
fn valid_dispatches_complete_by_decrementing_their_signal_and_are_recorded_with_their_geometry() {
    let run = run("dispatch_valid");
    let mut wants = vec![
        Want::dispatch(1, [1024, 1, 1], [64, 1, 1], 0).header(true, "system", "system"),
        Want::dispatch(3, [64, 32, 8], [8, 8, 4], 1).header(false, "agent", "agent"),
        Want::dispatch(2, [128, 64, 1], [16, 16, 1], 2).header(false, "none", "none"),
        Want::dispatch(1, [256, 1, 1], [64, 1, 1], 3).no_signal(),
        Want::dispatch(1, [512, 1, 1], [128, 1, 1], 4),
        Want::dispatch(1, [64, 1, 1], [64, 1, 1], 5),
        Want::dispatch(1, [2048, 1, 1], [256, 1, 1], 6),
    ];
    // Packet 5's kernargs are malloc'd, not from the shim's pool; whether that
    // is worth a finding is the validator's call, so its reasons are not checked.
    wants[5].kernarg_class = Some("foreign_opaque");
    wants[5].reasons = None;
    wants[6].segments = Some((256, 4096));
    check(&run, &wants);
}

#[test]
fn barriers_hold_their_queue_until_their_dependencies_are_satisfied() {
    let run = run("barriers");
    let wants = vec![
        Want::barrier_and(),
        Want::barrier_and(),
        Want::dispatch(1, [256, 1, 1], [64, 1, 1], 0),
        Want::barrier_or(),
        Want::dispatch(1, [512, 1, 1], [64, 1, 1], 1),
        Want::barrier_and(),
        Want::barrier_or(),
    ];
    check(&run, &wants);
}

/// The reject table of `integration/rejects.c`, in packet order: JSONL type and reason.
const REJECTS: &[(&str, &str)] = &[
    ("kernel_dispatch", "dimensions_out_of_range"),
    ("kernel_dispatch", "workgroup_size_zero"),
    ("kernel_dispatch", "grid_size_zero"),
    ("kernel_dispatch", "unused_dimension_not_one"),
    ("kernel_dispatch", "workgroup_size_exceeds_max"),
    ("kernel_dispatch", "setup_reserved_bits_set"),
    ("kernel_dispatch", "reserved_field_nonzero"),
    ("kernel_dispatch", "reserved_field_nonzero"),
    ("kernel_dispatch", "kernel_object_null"),
    ("kernel_dispatch", "kernel_object_misaligned"),
    ("kernel_dispatch", "kernarg_address_misaligned"),
    ("kernel_dispatch", "acquire_fence_scope_invalid"),
    ("kernel_dispatch", "release_fence_scope_invalid"),
    ("agent_dispatch", "agent_dispatch_unsupported"),
    ("vendor_specific", "vendor_specific_unsupported"),
    ("unknown", "unknown_packet_type"),
];

#[test]
fn every_reject_class_is_recorded_with_its_reason_and_leaves_the_completion_signal_untouched() {
    let run = run("rejects");
    assert_eq!(
        run.fact_u64("rejects"),
        REJECTS.len() as u64,
        "integration/rejects.c and this test disagree on the reject table"
    );
    let mut wants: Vec<Want> = REJECTS
        .iter()
        .enumerate()
        .map(|(i, &(ty, reason))| {
            assert_eq!(
                run.fact(&format!("reject_{i}")),
                reason,
                "integration/rejects.c packet {i} is not the case this test expects"
            );
            Want::rejected(ty, reason)
        })
        .collect();
    // Geometry is decoded even for rejected dispatches.
    wants[0] = wants[0].clone().geometry(0, [1, 1, 1], [1, 1, 1]);
    wants[1] = wants[1].clone().geometry(1, [64, 1, 1], [0, 1, 1]);
    wants[2] = wants[2].clone().geometry(1, [0, 1, 1], [64, 1, 1]);
    wants[3] = wants[3].clone().geometry(1, [64, 2, 1], [64, 1, 1]);
    wants[4] = wants[4].clone().geometry(2, [64, 32, 1], [64, 32, 1]);
    wants[11] = wants[11].clone().header(false, "invalid", "system");
    wants[12] = wants[12].clone().header(false, "system", "invalid");
    wants.push(Want::dispatch(1, [64, 1, 1], [64, 1, 1], 0));
    check(&run, &wants);
    // Each reject is logged loudly, naming its reasons: a waiter on its
    // completion signal would otherwise hang with no clue.
    for (i, &(_, reason)) in REJECTS.iter().enumerate() {
        assert!(
            run.stderr
                .lines()
                .any(|l| l.contains(&format!("packet {i} "))
                    && l.contains("rejected")
                    && l.contains(reason)),
            "no warning names rejected packet {i} ({reason})\n{}",
            run.context()
        );
    }
}

#[test]
fn a_batch_under_one_doorbell_and_a_ring_wrapped_three_times_lose_no_packet() {
    let run = run("batch_wrap");
    let batch = run.fact_u64("batch_packets");
    let wrap = run.fact_u64("wrap_packets");
    assert_eq!(batch, 8, "the batch phase is 8 packets under one doorbell");
    assert!(
        wrap >= 3 * run.fact_u64("queue_size"),
        "{wrap} packets do not wrap a {}-slot ring three times",
        run.fact_u64("queue_size")
    );
    let total = batch + wrap;
    let wants: Vec<Want> = (0..total)
        .map(|k| {
            let w = Want::dispatch(1, [64 * (k % 16 + 1), 1, 1], [64, 1, 1], (k % 8) as usize);
            // Only the last packet of each doorbell (the batch, then chunks of 10)
            // carries a completion signal.
            let last_of_doorbell =
                k == batch - 1 || (k >= batch && ((k - batch) % 10 == 9 || k == total - 1));
            if last_of_doorbell { w } else { w.no_signal() }
        })
        .collect();
    check(&run, &wants);
}

#[test]
fn a_slot_published_late_holds_back_later_slots_and_each_packet_is_recorded_once_in_index_order() {
    let run = run("unpublished");
    let wants = vec![
        Want::dispatch(1, [128, 1, 1], [64, 1, 1], 0),
        Want::dispatch(1, [256, 1, 1], [64, 1, 1], 1),
        Want::dispatch(1, [64, 1, 1], [64, 1, 1], 2),
    ];
    check(&run, &wants);
    // The doorbell rung while slot 0 was unpublished made a drain stop there.
    let capture = softgpu_hsa::capture::read_file(&run.capture)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", run.capture.display()));
    let trailer = capture.trailer.unwrap_or_else(|| {
        panic!(
            "{} has no trailer (capture not finished)",
            run.capture.display()
        )
    });
    assert!(
        trailer.stalls >= 1,
        "the capture trailer counts {} stalls; the drain at the unpublished slot 0 should count one\n{}",
        trailer.stalls,
        run.context()
    );
}

// ---------------------------------------------------------------------------
// The harness itself
// ---------------------------------------------------------------------------

#[test]
fn the_exit_summary_line_is_parsed_field_by_field() {
    let stderr = "noise\nsoftgpu: 3 dispatches validated (diagnostic_complete_no_execution, \
                  not_kernel_success), 1 rejected, 2 barriers; capture: /tmp/a b.sgcap\n";
    assert_eq!(
        parse_summary(stderr),
        Ok(Summary {
            validated: 3,
            rejected: 1,
            barriers: 2,
            capture: "/tmp/a b.sgcap".into()
        })
    );
    assert!(parse_summary("nothing here\n").is_err());
    assert!(
        parse_summary("softgpu: x dispatches validated (diagnostic_complete_no_execution, not_kernel_success), 1 rejected, 2 barriers; capture: p\n")
            .is_err()
    );
}

#[test]
fn every_program_in_the_integration_directory_is_run_by_some_test() {
    // Programs are compiled by name from a test (`run("name")` here, or another
    // test file); a program no test names is never built or run.
    let mut tests_text = String::new();
    for entry in std::fs::read_dir(repo().join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            tests_text.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    let mut unrun = Vec::new();
    for entry in std::fs::read_dir(repo().join("integration")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "c") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if !tests_text.contains(&format!("\"{stem}\"")) {
                unrun.push(format!("integration/{stem}.c"));
            }
        }
    }
    assert!(
        unrun.is_empty(),
        "no test under tests/ names these programs (as \"<name>\"), so nothing builds or runs them: {unrun:?}"
    );
}

/// A record that says exactly what `w` asks for, the way the CLI should print it.
fn faithful_record(run: &Run, w: &Want, seq: u64) -> Value {
    let kobj = w
        .kernel_object
        .as_ref()
        .map(|k| run.fact_u64(k))
        .unwrap_or(0);
    let is_dispatch = w.ty == "kernel_dispatch";
    let code = type_code(w.ty).unwrap_or(7);
    let mut raw = format!("{code:02x}");
    raw.push_str(&"0".repeat(126));
    let triple = |t: Option<[u64; 3]>| match t {
        Some(t) => serde_json::json!(t),
        None if is_dispatch => serde_json::json!([1, 1, 1]),
        None => Value::Null,
    };
    let (barrier, acq, rel) = w.header.unwrap_or((false, "system", "system"));
    let (private, group) = w.segments.unwrap_or((0, 0));
    serde_json::json!({
        "seq": seq,
        "pid": run.pid,
        "queue_id": run.fact_u64("queue_id"),
        "packet_index": seq,
        "type": w.ty,
        "status": w.status,
        "label": if w.status == "validated" { "diagnostic_complete_no_execution" } else { "diagnostic_rejected" },
        "reasons": w.reasons.clone().unwrap_or_default(),
        "header": { "barrier": barrier, "acquire_fence_scope": acq, "release_fence_scope": rel },
        "dimensions": if is_dispatch { serde_json::json!(w.dims.unwrap_or(1)) } else { Value::Null },
        "workgroup": triple(w.workgroup),
        "grid": triple(w.grid),
        "private_segment_size": private,
        "group_segment_size": group,
        "kernel_object": format!("{kobj:#x}"),
        "kernarg_address": "0x1000",
        "completion_signal": if w.signal == Some(false) { "0x0" } else { "0x7f0000001000" },
        "kernarg_class": w.kernarg_class,
        "kernel_symbol": null,
        "kernel_name": null,
        "target": "gfx90a",
        "raw": raw,
    })
}

#[test]
fn the_record_checker_accepts_a_faithful_capture_and_reports_every_difference() {
    let mut run = Run {
        name: "synthetic".into(),
        pid: 4242,
        stdout: String::new(),
        stderr: "softgpu: 1 dispatches validated (diagnostic_complete_no_execution, not_kernel_success), \
                 1 rejected, 1 barriers; capture: /tmp/synthetic.sgcap\n"
            .to_string(),
        facts: [
            ("queue_id", "7"),
            ("kernel_object_0", "0x1000"),
            ("packets", "3"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        capture: PathBuf::from("/tmp/synthetic.sgcap"),
        records: Vec::new(),
    };
    let wants = vec![
        Want::dispatch(1, [64, 1, 1], [64, 1, 1], 0),
        Want::barrier_and(),
        Want::rejected("unknown", "unknown_packet_type"),
    ];
    run.records = wants
        .iter()
        .enumerate()
        .map(|(i, w)| faithful_record(&run, w, i as u64))
        .collect();
    assert_eq!(find_problems(&run, &wants), Vec::<String>::new());

    // Break three things; all three are reported, each naming its field.
    run.records[0]["grid"] = serde_json::json!([65, 1, 1]);
    run.records[1]["label"] = serde_json::json!("diagnostic_rejected");
    run.records[2]["packet_index"] = serde_json::json!(5);
    let problems = find_problems(&run, &wants);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("grid"), "{problems:#?}");
    assert!(problems[1].contains("label"), "{problems:#?}");
    assert!(problems[2].contains("packet_index"), "{problems:#?}");

    // A missing record and a wrong summary are reported too.
    run.records.pop();
    run.stderr = run.stderr.replace("1 rejected", "0 rejected");
    let problems = find_problems(&run, &wants);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("2 records in the capture, expected 3")),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("exit summary")),
        "{problems:#?}"
    );
}

/// Many producers at once, through the real shim: every published packet is
/// captured exactly once, in index order per queue, and nothing is lost to
/// back-pressure. Read through the library's capture reader (400,000 records).
fn stress(mode: &str) {
    stress_over(mode, None);
}

/// The stress program in `mode` (`multi`: one MULTI queue; else one queue per thread), over
/// the virtual runtime or, with `over`, in that SoftGPU mode over the stand-in ROCr.
fn stress_over(mode: &str, over: Option<&str>) {
    const THREADS: u64 = 4;
    const PACKETS: u64 = 100_000;
    let lower = stand_in_rocr();
    let env: Vec<(&str, &str)> = match over {
        None => Vec::new(),
        Some(m) => vec![
            ("SOFTGPU_MODE", m),
            ("LD_LIBRARY_PATH", lower.to_str().unwrap()),
        ],
    };
    let run = run_over(
        "stress",
        &format!("stress-{mode}-{}", over.unwrap_or("virtual")),
        &[mode, &THREADS.to_string(), &PACKETS.to_string()],
        &env,
    );
    let cap = softgpu_hsa::capture::read_file(&run.capture)
        .unwrap_or_else(|e| panic!("stress {mode}: capture unreadable: {e}\n{}", run.context()));
    assert!(
        cap.complete,
        "stress {mode}: capture has no trailer\n{}",
        run.context()
    );
    assert_eq!(
        cap.records.len() as u64,
        THREADS * PACKETS,
        "stress {mode}: captured count != submitted count"
    );
    let mut seen = std::collections::HashSet::new();
    let mut next_index: BTreeMap<u64, u64> = BTreeMap::new();
    for (i, r) in cap.records.iter().enumerate() {
        assert_eq!(r.seq, i as u64, "stress {mode}: seq is not contiguous");
        let kobj = u64::from_le_bytes(r.raw[32..40].try_into().unwrap());
        assert!(
            seen.insert(kobj),
            "stress {mode}: packet {kobj:#x} captured twice"
        );
        let want = next_index.entry(r.queue_id).or_insert(0);
        assert_eq!(
            r.packet_index, *want,
            "stress {mode}: queue {} out of index order",
            r.queue_id
        );
        *want += 1;
        assert_eq!(
            r.status,
            softgpu_hsa::aql::Status::Validated,
            "stress {mode}: record {i} rejected"
        );
    }
    let expected_queues = if mode == "multi" { 1 } else { THREADS as usize };
    assert_eq!(
        next_index.len(),
        expected_queues,
        "stress {mode}: unexpected queue count"
    );
    if over == Some("observe") {
        assert!(
            run.stderr.contains(&format!(
                "softgpu: observe mode: {} dispatches observed",
                THREADS * PACKETS
            )),
            "stress {mode} (observe): the exit summary does not count every dispatch\n{}",
            run.context()
        );
        return;
    }
    let summary = parse_summary(&run.stderr)
        .unwrap_or_else(|e| panic!("stress {mode}: {e}\n{}", run.context()));
    assert_eq!(summary.validated, THREADS * PACKETS);
}

#[test]
fn observe_mode_captures_every_packet_of_four_producers_racing_on_one_multi_queue_before_it_runs() {
    // Four producers publish out of order into one real queue and each rings with its own
    // index. The stand-in consumes only up to the doorbell values it is given, as AMD's packet
    // processor does, so a packet the shim rang past before capturing it would be missing.
    stress_over("multi", Some("observe"));
}

#[test]
fn intercept_mode_loses_no_packet_of_four_producers_on_one_multi_queue() {
    stress_over("multi", Some("intercept"));
}

#[test]
fn four_threads_publishing_100k_packets_each_into_one_multi_queue_lose_and_duplicate_nothing() {
    stress("multi");
}

#[test]
fn four_threads_on_four_queues_publishing_100k_packets_each_lose_and_duplicate_nothing() {
    stress("queues");
}

#[test]
fn runtime_api_semantics_hold_and_a_fail_closed_entry_point_logs_its_name() {
    let run = run("runtime_api");
    assert_eq!(
        run.records.len(),
        1,
        "runtime_api submits exactly one dispatch\n{}",
        run.context()
    );
    assert_eq!(run.records[0]["status"], "validated");
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("hsa_soft_queue_create") && l.contains("not implemented")),
        "no log line names the fail-closed function\n{}",
        run.context()
    );
}

/// The lifecycle (`integration/lifecycle.c`): calls before `hsa_init` and after the last
/// `hsa_shut_down` say `HSA_STATUS_ERROR_NOT_INITIALIZED`; eight threads calling `hsa_init` at
/// once all succeed (the runtime is built once) and eight calling `hsa_shut_down` at once all
/// succeed; a new `hsa_init` brings it back; an exit handler that runs after SoftGPU's own
/// (which finalised the capture) is still answered, and its dispatch-free calls do not disturb
/// the finalised capture.
#[test]
fn early_late_and_concurrent_init_and_shut_down_are_answered_by_the_state_they_find() {
    let run = run("lifecycle");
    for fact in ["early", "concurrent", "late", "again", "at_exit"] {
        assert_eq!(run.fact(fact), "ok", "{fact}\n{}", run.context());
    }
    assert_eq!(
        run.records.len() as u64,
        run.fact_u64("dispatches"),
        "one record per dispatch of both lives\n{}",
        run.context()
    );
    assert!(
        run.records.iter().all(|r| r["status"] == "validated"),
        "{}",
        run.context()
    );
    assert!(
        !run.stderr.contains("panic"),
        "no panic may reach the log\n{}",
        run.context()
    );
}

/// The runtime defects rocrtst 7.2.4 found (`integration/rocrtst_defects.c`), each the way
/// its rocrtst test asks it: deallocation callbacks run once, at the free, in ROCr's order and
/// with its errors (`Deallocation_Notifier_Test`); an unwritten GiB allocation stays
/// unresident (`Memory_Max_Mem`); `HSA_AMD_AGENT_INFO_MEMORY_AVAIL` falls by what is allocated
/// and comes back at the free, and more than what is left is refused (`Memory_Available`);
/// another process attaches an IPC handle and reads and writes the same bytes (`IPC`);
/// `HSA_AMD_AGENT_INFO_CLOCK_COUNTERS` is answered
/// (`AgentPropertiesTests`); a million nested `hsa_init`/`hsa_shut_down` pairs succeed
/// (`Max_Reference_Count` makes 2^31 of them); a write index stored by hand past the ring
/// leaves nothing pending (`Queue_LoadStore_Write_Index_ConcurrentTest`).
#[test]
fn the_runtime_defects_rocrtst_found_are_fixed_as_rocr_behaves() {
    let run = run_with("rocrtst_defects", "rocrtst_defects", &[]);
    for fact in [
        "dealloc",
        "noreserve",
        "avail",
        "ipc",
        "clock",
        "refs",
        "write_index_by_hand",
    ] {
        assert_eq!(run.fact(fact), "ok", "{fact}\n{}", run.context());
    }
    // A write index stored by hand past the ring reserves nothing: no pending packets, and
    // the capture is complete (`Queue_LoadStore_Write_Index_ConcurrentTest`).
    assert!(!run.stderr.contains("never processed"), "{}", run.context());
    let cap = softgpu_hsa::capture::read_file(&run.capture).unwrap();
    assert!(cap.complete, "{:?}\n{}", cap.end, run.context());
    // The pair's cost (`init_pair_ns`, printed by the program) is a measurement, not a
    // verdict: rocrtst's Max_Reference_Count in tests/realworld.rs is its real user.
}

/// The image extension (`integration/images.c`): every format's capability on every geometry,
/// data sizes with and without a layout, the descriptors behind image and sampler handles,
/// import, export, copy and clear checked byte for byte in the linear layout (padding and gaps
/// untouched), and the status of every bad argument, forged handle and destroyed handle.
#[test]
fn the_image_extension_answers_as_rocr_moves_bytes_in_the_image_layout_and_refuses_bad_handles() {
    let run = run("images");
    for key in [
        "capabilities",
        "data_info",
        "create_destroy",
        "import_export",
        "copy",
        "clear",
        "samplers",
        "amd_and_table",
    ] {
        assert_eq!(run.fact(key), "ok", "{key}\n{}", run.context());
    }
    // ROCr's table: 86 (order, type) pairs on 2D images.
    assert_eq!(run.fact_u64("formats_2d"), 86, "{}", run.context());
    assert!(
        run.fact_u64("byte_checks") >= 60,
        "fewer byte-exact checks than the program makes\n{}",
        run.context()
    );
    assert_eq!(run.fact("done"), "1");
    assert!(
        run.records.is_empty(),
        "the image functions submit no packet, but the capture holds {} records\n{}",
        run.records.len(),
        run.context()
    );
    // Nothing in the image extension fails closed any more.
    assert!(
        !run.stderr.contains("not implemented"),
        "an image function failed closed\n{}",
        run.context()
    );
}

/// Run a compiled program under the shim with extra environment, without
/// judging its exit status. Returns (status, stdout, stderr).
fn run_env(
    name: &str,
    tag: &str,
    env: &[(&str, &str)],
) -> (std::process::ExitStatus, String, String) {
    let exe = compile(name);
    let dir = work_dir(tag);
    let mut cmd = Command::new(&exe);
    cmd.current_dir(&dir)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_MODE", "virtual")
        .env_remove("SOFTGPU_CAPTURE")
        .env_remove("SOFTGPU_SUMMARY")
        .env_remove("SOFTGPU_LOG")
        .env_remove("SOFTGPU_LOG_FILE")
        .env_remove("SOFTGPU_TARGET")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_environment_values_are_reported_once_by_name_and_the_defaults_are_used() {
    let dir = work_dir("bad_env");
    let cap = dir.join("bad_env.sgcap");
    let _ = std::fs::remove_file(&cap);
    let (status, _out, err) = run_env(
        "example_vector",
        "bad_env",
        &[
            ("SOFTGPU_CAPTURE", cap.to_str().unwrap()),
            ("SOFTGPU_MODE", "turbo"),
            ("SOFTGPU_LOG", "loud"),
            ("SOFTGPU_SUMMARY", "maybe"),
            ("SOFTGPU_TARGET", "gfx9999"),
        ],
    );
    assert!(
        status.success(),
        "a bad value must not stop the host program\n{err}"
    );
    for var in [
        "SOFTGPU_MODE",
        "SOFTGPU_LOG",
        "SOFTGPU_SUMMARY",
        "SOFTGPU_TARGET",
    ] {
        let n = err
            .lines()
            .filter(|l| l.contains(var) && l.contains("accepted values"))
            .count();
        assert_eq!(n, 1, "{var} must be reported exactly once\n{err}");
    }
    let summary = parse_summary(&err).unwrap_or_else(|e| panic!("{e}\n{err}"));
    assert_eq!(
        (summary.validated, summary.rejected, summary.barriers),
        (3, 1, 2)
    );
    assert!(cap.is_file());
}

#[test]
fn capture_off_writes_no_file_and_summary_zero_prints_nothing() {
    let dir = work_dir("capture_off");
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let (status, _out, err) = run_env(
        "example_vector",
        "capture_off",
        &[("SOFTGPU_CAPTURE", "off")],
    );
    assert!(status.success(), "{err}");
    let after: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(
        before.len(),
        after.len(),
        "SOFTGPU_CAPTURE=off must not create a file"
    );
    assert!(
        err.contains("; capture: off"),
        "summary must say capture is off\n{err}"
    );
    let (status, _out, err) = run_env(
        "example_vector",
        "capture_off",
        &[("SOFTGPU_CAPTURE", "off"), ("SOFTGPU_SUMMARY", "0")],
    );
    assert!(status.success());
    assert!(
        !err.contains(" dispatches validated ("),
        "SOFTGPU_SUMMARY=0 must silence the summary\n{err}"
    );
}

#[test]
fn the_default_capture_path_expands_the_pid_in_the_working_directory() {
    let dir = work_dir("default_path");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "sgcap") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let (status, _out, err) = run_env("example_vector", "default_path", &[]);
    assert!(status.success(), "{err}");
    let caps: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sgcap"))
        .collect();
    assert_eq!(caps.len(), 1, "{caps:?}");
    let pid: String = caps[0]
        .trim_start_matches("softgpu-")
        .trim_end_matches(".sgcap")
        .to_string();
    assert!(
        pid.parse::<u32>().is_ok(),
        "capture name {} is not softgpu-<pid>.sgcap",
        caps[0]
    );
    assert!(
        err.contains(&format!("capture: softgpu-{pid}.sgcap")),
        "{err}"
    );
}

#[test]
fn log_file_receives_the_logs_instead_of_stderr() {
    let dir = work_dir("log_file");
    let log = dir.join("softgpu.log");
    let _ = std::fs::remove_file(&log);
    let (status, _out, err) = run_env(
        "runtime_api",
        "log_file",
        &[
            ("SOFTGPU_CAPTURE", "off"),
            ("SOFTGPU_LOG_FILE", log.to_str().unwrap()),
            ("SOFTGPU_LOG", "warn"),
        ],
    );
    assert!(status.success(), "{err}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        text.contains("hsa_soft_queue_create"),
        "log file lacks the fail-closed line:\n{text}"
    );
    assert!(
        !err.contains("hsa_soft_queue_create"),
        "logs went to stderr too\n{err}"
    );
}

#[test]
fn a_process_killed_abruptly_leaves_a_capture_whose_complete_records_are_recovered() {
    let dir = work_dir("killed");
    let cap = dir.join("killed.sgcap");
    let _ = std::fs::remove_file(&cap);
    let (status, out, err) = run_env(
        "killed",
        "killed",
        &[("SOFTGPU_CAPTURE", cap.to_str().unwrap())],
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(9),
        "killed.c must die by SIGKILL\n{out}\n{err}"
    );
    let c = softgpu_hsa::capture::read_file(&cap)
        .unwrap_or_else(|e| panic!("cut capture unreadable: {e}"));
    assert!(
        !c.complete,
        "a killed process cannot have written a trailer"
    );
    assert_eq!(
        c.records.len(),
        10,
        "every flushed record must be recovered"
    );
    let inspect = Command::new(cli())
        .args(["inspect", cap.to_str().unwrap(), "--format", "jsonl"])
        .output()
        .unwrap();
    assert!(
        inspect.status.success(),
        "inspect of a cut capture must still succeed"
    );
    assert_eq!(String::from_utf8_lossy(&inspect.stdout).lines().count(), 10);
    assert!(
        !inspect.stderr.is_empty(),
        "inspect must warn that the capture is incomplete"
    );
}

#[test]
fn the_shim_works_as_a_drop_in_libhsa_runtime64_on_the_library_path() {
    let exe = compile("example_vector");
    let dir = work_dir("drop_in");
    let lib_dir = dir.join("lib");
    std::fs::create_dir_all(&lib_dir).unwrap();
    let link = lib_dir.join("libhsa-runtime64.so.1");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(shim(), &link).unwrap();
    let cap = dir.join("drop_in.sgcap");
    let _ = std::fs::remove_file(&cap);
    let out = Command::new(&exe)
        .current_dir(&dir)
        .env_remove("LD_PRELOAD")
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("SOFTGPU_CAPTURE", &cap)
        .env("SOFTGPU_MODE", "virtual")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "example_vector failed with the drop-in library\n{err}"
    );
    let summary = parse_summary(&err).unwrap_or_else(|e| panic!("{e}\n{err}"));
    assert_eq!(
        (summary.validated, summary.rejected, summary.barriers),
        (3, 1, 2)
    );
    assert!(cap.is_file(), "no capture from the drop-in library");
}

#[test]
fn every_contract_program_also_passes_with_deferred_completion_on_a_separate_thread() {
    for name in [
        "example_vector",
        "dispatch_valid",
        "barriers",
        "rejects",
        "batch_wrap",
        "unpublished",
        "runtime_api",
    ] {
        let dir = work_dir(&format!("{name}_thread"));
        let cap = dir.join("thread.sgcap");
        let (status, out, err) = run_env(
            name,
            &format!("{name}_thread"),
            &[
                ("SOFTGPU_CAPTURE", cap.to_str().unwrap()),
                ("SOFTGPU_COMPLETION", "thread"),
                ("SOFTGPU_COMPLETION_DELAY_US", "200"),
            ],
        );
        assert!(
            status.success(),
            "{name} failed with SOFTGPU_COMPLETION=thread\n{out}\n{err}"
        );
        parse_summary(&err).unwrap_or_else(|e| panic!("{name}: {e}\n{err}"));
        let c = softgpu_hsa::capture::read_file(&cap).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.complete, "{name}: capture incomplete");
    }
}

#[test]
fn loading_the_shim_into_a_program_that_never_calls_hsa_init_starts_no_thread_and_writes_no_file() {
    let dir = work_dir("inert");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let _ = std::fs::remove_file(e.path());
    }
    // A shell (what `softgpu run` and `system()` start) counts its own threads.
    let out = Command::new("sh")
        .args(["-c", "ls /proc/self/task | wc -l; ls -A"])
        .current_dir(&dir)
        .env("LD_PRELOAD", shim())
        .env_remove("SOFTGPU_CAPTURE")
        .env_remove("SOFTGPU_LOG_FILE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let mut lines = stdout.lines();
    // `ls` runs in its own process: its task count is that child's, also preloaded.
    assert_eq!(
        lines.next(),
        Some("1"),
        "a preloaded process without hsa_init must stay single-threaded"
    );
    assert_eq!(
        lines.next(),
        None,
        "no file may appear in the working directory: {stdout}"
    );
    assert!(
        stderr.is_empty(),
        "nothing may be printed (no summary without hsa_init): {stderr}"
    );
}

/// Build the code objects kernel_checks.c loads: HIP kernels with `hipcc
/// --genco` (plain ELF, no bundle) and an OpenCL kernel with a required
/// workgroup size (HIP has no such attribute) with clang and ld.lld.
fn kernel_check_code_objects() -> (PathBuf, PathBuf, PathBuf) {
    let dir = work_dir("kernel_checks");
    let kernels = dir.join("kernels.hsaco");
    let out = Command::new("hipcc")
        .args([
            "--genco",
            "--offload-arch=gfx90a",
            "--no-gpu-bundle-output",
            "-O1",
            "-o",
        ])
        .arg(&kernels)
        .arg(repo().join("integration/kernel_checks_kernels.hip"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run hipcc: {e}; {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "hipcc --genco failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let llvm = Path::new("/usr/lib/llvm-15/bin");
    let obj = dir.join("reqd.o");
    let out = Command::new(llvm.join("clang"))
        .args([
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx90a",
            "-nogpulib",
            "-O1",
            "-c",
            "-o",
        ])
        .arg(&obj)
        .arg(repo().join("integration/kernel_checks_reqd.cl"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run clang (comes with hipcc): {e}; {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "clang -x cl failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqd = dir.join("reqd.hsaco");
    let out = Command::new(llvm.join("ld.lld"))
        .arg("-shared")
        .arg("-o")
        .arg(&reqd)
        .arg(&obj)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ld.lld failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let other = dir.join("kernels-gfx1030.hsaco");
    let out = Command::new("hipcc")
        .args([
            "--genco",
            "--offload-arch=gfx1030",
            "--no-gpu-bundle-output",
            "-O1",
            "-o",
        ])
        .arg(&other)
        .arg(repo().join("integration/kernel_checks_kernels.hip"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hipcc --genco gfx1030 failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (kernels, reqd, other)
}

#[test]
fn dispatches_are_checked_against_the_kernel_they_name_with_one_reason_per_rule() {
    let (kernels, reqd, other) = kernel_check_code_objects();
    let dir = work_dir("kernel_checks");
    let cap = dir.join("kernel_checks.sgcap");
    let _ = std::fs::remove_file(&cap);
    let exe = compile("kernel_checks");
    let out = Command::new(&exe)
        .arg(&kernels)
        .arg(&reqd)
        .arg(&other)
        .current_dir(&dir)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_CAPTURE", &cap)
        .env("SOFTGPU_MODE", "virtual")
        .env("SOFTGPU_TARGET", "gfx90a,gfx90a")
        .env("SOFTGPU_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "kernel_checks failed\n{stdout}\n{stderr}"
    );
    let inspect = Command::new(cli())
        .args(["inspect", cap.to_str().unwrap(), "--format", "jsonl"])
        .output()
        .unwrap();
    assert!(inspect.status.success());
    let recs: Vec<Value> = String::from_utf8_lossy(&inspect.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let want: &[(&str, &[&str], &str)] = &[
        ("validated", &[], "k_max64"),
        (
            "rejected",
            &["workgroup_size_exceeds_kernel_max"],
            "k_max64",
        ),
        ("validated", &[], "k_reqd32"),
        (
            "rejected",
            &["workgroup_size_differs_from_required"],
            "k_reqd32",
        ),
        ("validated", &[], "k_lds"),
        ("rejected", &["group_segment_size_below_static"], "k_lds"),
        ("validated", &[], "k_private"),
        (
            "rejected",
            &["private_segment_size_below_static"],
            "k_private",
        ),
        ("validated", &[], "k_args"),
        ("rejected", &["kernarg_address_null"], "k_args"),
        ("validated", &["unknown_kernel_object"], ""),
        ("rejected", &["kernel_object_wrong_agent"], "k_args"),
    ];
    assert_eq!(recs.len(), want.len(), "{stdout}");
    for (i, (r, (status, reasons, name))) in recs.iter().zip(want).enumerate() {
        assert_eq!(r["status"], *status, "record {i}: {r}");
        let got: Vec<&str> = r["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(&got, reasons, "record {i}: {r}");
        if name.is_empty() {
            assert!(
                r["kernel_name"].is_null(),
                "record {i}: a fake kernel object has no name"
            );
        } else {
            assert_eq!(r["kernel_name"], *name, "record {i}: {r}");
        }
    }
}

// ---------------------------------------------------------------------------
// Over a real runtime: intercept and auto mode
// ---------------------------------------------------------------------------

/// A directory holding a copy of the shim named `libhsa-runtime64.so.1`: on `LD_LIBRARY_PATH`
/// it stands in for a real ROCr below the preloaded shim (a copy, so the loader sees two
/// objects).
fn stand_in_rocr() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = work_dir("stand_in_rocr");
        let lib = dir.join("libhsa-runtime64.so.1");
        let _ = std::fs::remove_file(&lib);
        std::fs::copy(shim(), &lib).unwrap();
        dir
    })
    .clone()
}

/// What must match between two captures of the same program: per record, in order.
fn contract_view(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            format!(
                "queue#{} index {} {} {} {} reasons {} grid {} wg {} segments {}/{} label {}",
                r["queue_id"].as_u64().is_some(),
                r["packet_index"],
                r["type"],
                r["status"],
                r["kernel_name"],
                r["reasons"],
                r["grid"],
                r["workgroup"],
                r["private_segment_size"],
                r["group_segment_size"],
                r["label"],
            )
        })
        .collect()
}

/// The mode a capture's header records, from `softgpu inspect`'s first line.
fn capture_mode(capture: &Path) -> String {
    let out = Command::new(cli())
        .arg("inspect")
        .arg(capture)
        .output()
        .expect("cannot run softgpu inspect");
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().next().unwrap_or("");
    first
        .split(", ")
        .find_map(|f| f.strip_prefix("mode "))
        .unwrap_or("?")
        .to_string()
}

#[test]
fn in_intercept_and_observe_mode_the_contract_holds_with_the_real_runtimes_signals_and_queues() {
    // Each program checks the contract itself: completion signals (created by the real
    // runtime) reach 0, barriers hold until their real dependency signals are satisfied,
    // rejected packets leave their completion signals alone. In intercept mode the shim owns
    // the queues and does that; in observe mode the real runtime (here the stand-in) does it
    // after the shim captured each packet. The records must equal the virtual run's, one by
    // one, except that observe-mode records carry the observe label.
    let lower = stand_in_rocr();
    let lower = lower.to_str().unwrap();
    for name in [
        "dispatch_valid",
        "barriers",
        "rejects",
        "example_vector",
        "unpublished",
    ] {
        let virt = run(name);
        for mode in ["intercept", "observe"] {
            let mut fwd = run_over(
                name,
                &format!("{name}-{mode}"),
                &[],
                &[("SOFTGPU_MODE", mode), ("LD_LIBRARY_PATH", lower)],
            );
            fwd.records = inspect_jsonl(&fwd);
            assert_eq!(
                capture_mode(&fwd.capture),
                mode,
                "{name}: the capture header does not say {mode}\n{}",
                fwd.context()
            );
            assert!(
                !fwd.records.is_empty(),
                "{name} ({mode}): nothing captured\n{}",
                fwd.context()
            );
            let mut want = contract_view(&virt.records);
            if mode == "observe" {
                for w in &mut want {
                    *w = w
                        .replace(
                            "\"diagnostic_complete_no_execution\"",
                            "\"observed_forwarded_to_runtime\"",
                        )
                        .replace(
                            "\"diagnostic_rejected\"",
                            "\"observed_forwarded_to_runtime\"",
                        );
                }
                assert!(
                    !fwd.stderr.contains("diagnostic_complete_no_execution"),
                    "{name}: observe mode printed the diagnostic label\n{}",
                    fwd.context()
                );
            }
            assert_eq!(
                want,
                contract_view(&fwd.records),
                "{name}: the {mode}-mode records differ from the virtual-mode ones\n{}",
                fwd.context()
            );
        }
    }
}

#[test]
fn in_intercept_and_observe_mode_the_image_extension_is_the_real_runtimes_and_its_checks_still_hold()
 {
    // Over a real ROCr every image function is a pass-through: here the stand-in answers, and
    // the program's own byte-exact checks must hold through it. Call counts at both ends show
    // the calls were forwarded, and arrived, once each.
    let lower = stand_in_rocr();
    let lower = lower.to_str().unwrap();
    for mode in ["intercept", "observe"] {
        let counts = work_dir("images").join(format!("images-{mode}.counts.jsonl"));
        let _ = std::fs::remove_file(&counts);
        let run = run_over(
            "images",
            &format!("images-{mode}"),
            &[],
            &[
                ("SOFTGPU_MODE", mode),
                ("LD_LIBRARY_PATH", lower),
                ("SOFTGPU_CALL_COUNTS", counts.to_str().unwrap()),
            ],
        );
        assert_eq!(run.fact("done"), "1", "{mode}\n{}", run.context());
        assert_eq!(run.fact("import_export"), "ok", "{mode}\n{}", run.context());
        let text = std::fs::read_to_string(&counts).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let by_role = |role: &str| {
            lines
                .iter()
                .find(|v| v["role"] == role)
                .unwrap_or_else(|| panic!("{mode}: no `{role}` call-count line in {text}"))
                .clone()
        };
        let (shim, below) = (by_role("shim"), by_role("lower"));
        for f in [
            "hsa_ext_image_create",
            "hsa_ext_image_create_with_layout",
            "hsa_ext_image_import",
            "hsa_ext_image_export",
            "hsa_ext_image_copy",
            "hsa_ext_image_clear",
            "hsa_ext_image_destroy",
            "hsa_ext_sampler_create",
            "hsa_amd_image_get_info_max_dim",
        ] {
            let fwd = shim["forwarded"][f].as_u64().unwrap_or(0);
            let got = below["received"][f].as_u64().unwrap_or(0);
            assert!(
                fwd > 0 && fwd == got,
                "{mode}: {f} forwarded {fwd} times, received below {got} times"
            );
        }
    }
}

#[test]
fn kernel_arguments_are_read_only_from_memory_known_readable_and_anything_else_is_never_touched() {
    // `kargs_readable` puts k_args's kernarg block in the kernarg pool, in device memory, in a
    // PROT_NONE mapping (a read would kill the process) and in a freed kernarg block. Virtual
    // mode reads its own allocations (both pools); intercept and observe mode read only memory
    // the real runtime allocated through the shim from a CPU agent's pool, so the device-pool
    // block is `not_known_readable` there. The mapping and the freed block are never read in any
    // mode. Call counts at both ends show every forwarded call arrived below exactly once.
    let (kernels, _, _) = kernel_check_code_objects();
    let kernels = kernels.to_str().unwrap().to_string();
    let lower = stand_in_rocr();
    let lower = lower.to_str().unwrap();
    for mode in ["virtual", "intercept", "observe"] {
        let counts = work_dir("kargs_readable").join(format!("kargs-{mode}.counts.jsonl"));
        let _ = std::fs::remove_file(&counts);
        let mut env = vec![("SOFTGPU_MODE", mode)];
        let counts_text = counts.to_str().unwrap().to_string();
        if mode != "virtual" {
            env.push(("LD_LIBRARY_PATH", lower));
            env.push(("SOFTGPU_CALL_COUNTS", counts_text.as_str()));
        }
        let mut run = run_over(
            "kargs_readable",
            &format!("kargs-{mode}"),
            &[kernels.as_str()],
            &env,
        );
        run.records = inspect_jsonl(&run);
        let ctx = run.context();
        assert_eq!(run.fact("done"), "1", "{mode}\n{ctx}");
        let dispatches: Vec<&Value> = run
            .records
            .iter()
            .filter(|r| r["type"] == "kernel_dispatch")
            .collect();
        assert_eq!(dispatches.len(), 4, "{mode}\n{ctx}");
        let out = format!("{:#x}", run.fact_u64("out"));
        let forwarded = mode != "virtual";
        for (r, (what, readable)) in dispatches.iter().zip([
            ("kernarg_pool", true),
            ("device_pool", !forwarded),
            ("no_access", false),
            ("freed", false),
        ]) {
            let at = format!("{:#x}", run.fact_u64(what));
            assert_eq!(r["kernarg_address"], at, "{mode} {what}: {r}");
            assert_eq!(r["kernel_symbol"], "k_args.kd", "{mode} {what}: {r}");
            if readable {
                assert_eq!(r["kernarg_state"], "captured", "{mode} {what}: {r}");
                assert_eq!(r["args"][0]["value"], out, "{mode} {what}: {r}");
                let codes: Vec<&str> = r["arg_findings"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{mode} {what}: no findings: {r}"))
                    .iter()
                    .map(|f| f["code"].as_str().unwrap())
                    .collect();
                assert_eq!(codes, ["pointer_in_allocation"], "{mode} {what}: {r}");
            } else {
                assert_eq!(r["kernarg_state"], "unreadable", "{mode} {what}: {r}");
                assert_eq!(
                    r["kernarg_unreadable"], "not_known_readable",
                    "{mode} {what}: {r}"
                );
                assert!(r.get("args").is_none(), "{mode} {what}: {r}");
            }
        }
        if !forwarded {
            continue;
        }
        let text = std::fs::read_to_string(&counts).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let by_role = |role: &str| {
            lines
                .iter()
                .find(|v| v["role"] == role)
                .unwrap_or_else(|| panic!("{mode}: no `{role}` call-count line in {text}"))
                .clone()
        };
        let (shim, below) = (by_role("shim"), by_role("lower"));
        let mut names: Vec<String> = Vec::new();
        for v in [&shim["forwarded"], &below["received"]] {
            names.extend(v.as_object().unwrap().keys().cloned());
        }
        names.sort();
        names.dedup();
        for n in &names {
            let fwd = shim["forwarded"][n].as_u64().unwrap_or(0);
            let got = below["received"][n].as_u64().unwrap_or(0);
            assert_eq!(
                fwd, got,
                "{mode}: {n} forwarded {fwd} times, received below {got}"
            );
        }
        // The calls the pass-through table hooks: each received by the shim, forwarded once.
        for (n, at_least) in [
            ("hsa_amd_memory_pool_allocate", 4),
            ("hsa_amd_memory_pool_free", 4),
            ("hsa_code_object_reader_create_from_memory", 1),
            ("hsa_executable_load_agent_code_object", 1),
        ] {
            let recv = shim["received"][n].as_u64().unwrap_or(0);
            let fwd = shim["forwarded"][n].as_u64().unwrap_or(0);
            assert!(
                recv >= at_least && recv == fwd,
                "{mode}: {n} received {recv} times by the shim, forwarded {fwd}"
            );
        }
    }
}

#[test]
fn auto_mode_picks_virtual_when_the_real_rocr_has_no_gpu_and_intercept_over_a_runtime_with_one() {
    if Path::new("/dev/kfd").exists() {
        eprintln!("skipped: this machine has /dev/kfd, so the real ROCr may well have a GPU");
        return;
    }
    // The program links the system's real ROCr 5.2.3; without /dev/kfd its hsa_init fails.
    let run = run_over(
        "dispatch_valid",
        "auto-real",
        &[],
        &[("SOFTGPU_MODE", "auto")],
    );
    assert_eq!(capture_mode(&run.capture), "virtual", "{}", run.context());
    let lower = stand_in_rocr();
    let run = run_over(
        "dispatch_valid",
        "auto-stand-in",
        &[],
        &[
            ("SOFTGPU_MODE", "auto"),
            ("LD_LIBRARY_PATH", lower.to_str().unwrap()),
        ],
    );
    assert_eq!(capture_mode(&run.capture), "intercept", "{}", run.context());
}

#[test]
fn explicit_intercept_or_observe_without_a_usable_real_runtime_fails_hsa_init_and_says_why() {
    if Path::new("/dev/kfd").exists() {
        eprintln!("skipped: this machine has /dev/kfd, so the real ROCr may initialise");
        return;
    }
    let exe = compile("dispatch_valid");
    for mode in ["intercept", "observe"] {
        let out = Command::new(&exe)
            .current_dir(work_dir("dispatch_valid"))
            .env("LD_PRELOAD", shim())
            .env("SOFTGPU_MODE", mode)
            .env("SOFTGPU_CAPTURE", "off")
            .env("SOFTGPU_LOG", "warn")
            .env_remove("LD_LIBRARY_PATH")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{mode}: the program succeeded although the real runtime cannot initialise:\n{err}"
        );
        assert!(
            err.contains(&format!("SOFTGPU_MODE={mode}"))
                && err.contains("real runtime's hsa_init")
                && err.contains("hsa_init fails"),
            "{mode}: no log line naming the mode and why hsa_init failed:\n{err}"
        );
        assert!(
            !err.contains("panicked"),
            "{mode}: a panic reached stderr:\n{err}"
        );
    }
}

// ---------------------------------------------------------------------------
// Endings: every packet whose completion the program observed is in the file
// ---------------------------------------------------------------------------

/// An `endings` run: its exit status, `sg:` facts, stderr and capture.
struct Ended {
    status: std::process::ExitStatus,
    facts: BTreeMap<String, String>,
    stdout: String,
    stderr: String,
    capture: PathBuf,
    /// `/proc/PID/status` read when the program said it was ready (with
    /// signals to send; empty otherwise).
    proc_status_at_ready: String,
    /// Each thread of the program at its `sg: ready=1` but its main one
    /// (the only thread the program itself starts in these modes): its name
    /// and its blocked-signal mask (`SigBlk`).
    threads_at_ready: Vec<(String, u64)>,
}

impl Ended {
    fn fact(&self, key: &str) -> u64 {
        self.facts
            .get(key)
            .and_then(|v| parse_u64(v))
            .unwrap_or_else(|| panic!("no numeric `sg: {key}=` fact\n{}", self.context()))
    }
    fn context(&self) -> String {
        format!(
            "status {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
    fn read(&self) -> softgpu_hsa::capture::Capture {
        softgpu_hsa::capture::read_file(&self.capture)
            .unwrap_or_else(|e| panic!("capture unreadable: {e}\n{}", self.context()))
    }
    /// `softgpu inspect` on the capture: (exit code, stderr).
    fn inspect(&self) -> (Option<i32>, String, usize) {
        let out = Command::new(cli())
            .arg("inspect")
            .arg(&self.capture)
            .args(["--format", "jsonl"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            String::from_utf8_lossy(&out.stdout).lines().count(),
        )
    }
}

fn facts_of(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("sg: "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Runs `endings MODE` under the shim. With `kill`, waits for its
/// `sg: ready=1` line (printed after every wait returned) and sends the
/// signal at once: no sleep, no hoping.
fn run_ending(mode: &str, tag: &str, kill: Option<i32>) -> Ended {
    run_ending_signals(mode, tag, "--default-signal=INT,TERM", kill.as_slice())
}

/// [`run_ending`] with the program's starting signal dispositions given as
/// an `env` option, and a list of signals sent one after the other.
fn run_ending_signals(mode: &str, tag: &str, dispositions: &str, kill: &[i32]) -> Ended {
    run_ending_under(&[], mode, tag, dispositions, kill)
}

/// [`run_ending_signals`] with the program run under `wrapper` (a command
/// and its arguments, such as `strace ...`, which must exec the program as
/// its only child); the signals then go to that child, the program.
fn run_ending_under(
    wrapper: &[&str],
    mode: &str,
    tag: &str,
    dispositions: &str,
    kill: &[i32],
) -> Ended {
    use std::io::{BufRead, Read};
    let exe = compile("endings");
    let dir = work_dir("endings");
    let capture = dir.join(format!("{tag}.sgcap"));
    let _ = std::fs::remove_file(&capture);
    // The program starts with SIGINT and SIGTERM at their default action,
    // whatever this test inherited: a shell without job control starts a
    // background job with SIGINT ignored (`./scripts/test &`), and the shim
    // rightly leaves an ignored signal alone, so the SIGINT test would wait
    // for an ending that never comes. `env` execs the program (same pid).
    let mut cmd = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg("env");
            c
        }
        None => Command::new("env"),
    };
    let mut child = cmd
        .arg(dispositions)
        .arg(&exe)
        .arg(mode)
        .current_dir(&dir)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_CAPTURE", &capture)
        .env("SOFTGPU_MODE", "virtual")
        .env("SOFTGPU_SUMMARY", "1")
        .env("SOFTGPU_LOG", "warn")
        .env_remove("SOFTGPU_TARGET")
        .env_remove("SOFTGPU_LOG_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let out_pipe = child.stdout.take().unwrap();
    let mut pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        for line in std::io::BufReader::new(out_pipe).lines() {
            let Ok(line) = line else { break };
            if line == "sg: ready=1" {
                let _ = tx.send(());
            }
            s.push_str(&line);
            s.push('\n');
        }
        s
    });
    let mut proc_status_at_ready = String::new();
    let mut threads_at_ready = Vec::new();
    if !kill.is_empty() {
        rx.recv_timeout(RUN_TIMEOUT)
            .unwrap_or_else(|_| panic!("endings {mode} never said it was ready"));
        if !wrapper.is_empty() {
            let children = format!("/proc/{pid}/task/{pid}/children");
            let list = std::fs::read_to_string(&children).unwrap_or_default();
            pid = match list.split_whitespace().collect::<Vec<_>>()[..] {
                [one] => one.parse().unwrap(),
                _ => panic!(
                    "{} has not exactly one child ({children}: {list:?})",
                    wrapper[0]
                ),
            };
        }
        proc_status_at_ready =
            std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        threads_at_ready = threads_of(pid);
    }
    for sig in kill {
        // Our own child, still unreaped (we have not waited for it): `kill`
        // returns once the signal is sent, so the signals arrive in order.
        let st = Command::new("kill")
            .args([format!("-{sig}"), pid.to_string()])
            .status()
            .unwrap();
        assert!(st.success(), "kill -{sig} {pid}");
    }
    let status = common::wait_within(&mut child, RUN_TIMEOUT, common::Kill::Child)
        .unwrap_or_else(|| panic!("endings {mode} did not end within {RUN_TIMEOUT:?} (hung)"));
    let stdout = out_t.join().unwrap();
    Ended {
        status,
        facts: facts_of(&stdout),
        stdout,
        stderr: err_t.join().unwrap(),
        capture,
        proc_status_at_ready,
        threads_at_ready,
    }
}

/// The threads of process `pid` but its main one: each one's name and
/// blocked-signal mask.
fn threads_of(pid: i32) -> Vec<(String, u64)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    let mut threads = Vec::new();
    for t in tasks {
        let t = t.unwrap();
        if t.file_name().to_str() == Some(&pid.to_string()) {
            continue;
        }
        // A thread may end between the listing and this read (its
        // directory is then gone): it is not a thread of the ready program.
        let status = match std::fs::read_to_string(t.path().join("status")) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{}: {e}", t.path().display()),
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_string())
                .unwrap_or_else(|| panic!("no {key} in\n{status}"))
        };
        let blocked = u64::from_str_radix(&field("SigBlk:"), 16).unwrap();
        threads.push((field("Name:"), blocked));
    }
    threads
}

/// Every thread SoftGPU started had SIGTERM and SIGINT blocked when the
/// program said it was ready, so a termination signal is taken by one of
/// the program's threads and the hook never waits on the thread it runs on.
/// In these modes the program's only thread is its main one, so every other
/// thread is SoftGPU's, including one not yet named `softgpu-...` because it
/// has not run yet (a loaded machine can keep it waiting that long).
/// Returns the names of SoftGPU's threads.
fn softgpu_threads_block_termination_signals(e: &Ended) -> Vec<String> {
    let bit = |sig: i32| 1u64 << (sig - 1);
    let both = bit(libc::SIGTERM) | bit(libc::SIGINT);
    let ours: Vec<_> = e.threads_at_ready.iter().collect();
    for (name, blocked) in &ours {
        assert_eq!(
            blocked & both,
            both,
            "thread {name} does not block SIGTERM and SIGINT (SigBlk {blocked:x})\n{:?}\n{}",
            e.threads_at_ready,
            e.context()
        );
    }
    ours.iter().map(|(name, _)| name.clone()).collect()
}

/// The program ended killed by SIGTERM, and the shim's handler finalised its
/// capture (a Trailer that says so). Returns the capture.
fn killed_by_sigterm_and_finalised(e: &Ended) -> softgpu_hsa::capture::Capture {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(e.status.signal(), Some(libc::SIGTERM), "{}", e.context());
    let cap = e.read();
    assert_eq!(
        cap.end.kind,
        Some(softgpu_hsa::capture::EndKind::Signal(libc::SIGTERM as u32)),
        "{}",
        e.context()
    );
    cap
}

/// Every one of the `observed` launches on `queue` is in `cap`, once, with
/// packet indices 0.. in order.
fn all_observed_are_captured(
    cap: &softgpu_hsa::capture::Capture,
    queue: u64,
    observed: u64,
    e: &Ended,
) {
    let idx: Vec<u64> = cap
        .records
        .iter()
        .filter(|r| r.queue_id == queue)
        .map(|r| r.packet_index)
        .collect();
    assert!(
        idx.len() as u64 >= observed,
        "queue {queue}: {} records for {observed} observed completions\n{}",
        idx.len(),
        e.context()
    );
    assert!(
        idx.iter().enumerate().all(|(i, &p)| p == i as u64),
        "queue {queue}: packet indices are not 0.. in order\n{}",
        e.context()
    );
}

#[test]
fn a_normal_exit_captures_every_launch_completely_and_the_summary_counts_them_all() {
    let e = run_ending("exit", "exit", None);
    assert!(e.status.success(), "{}", e.context());
    let cap = e.read();
    assert!(cap.complete, "{:?}\n{}", cap.end, e.context());
    all_observed_are_captured(&cap, e.fact("queue_id"), LAUNCHES, &e);
    assert_eq!(cap.records.len() as u64, LAUNCHES);
    let s = parse_summary(&e.stderr).unwrap();
    assert_eq!(s.validated, LAUNCHES, "{}", e.context());
    let (code, err, lines) = e.inspect();
    assert_eq!((code, lines as u64), (Some(0), LAUNCHES));
    assert!(err.is_empty(), "{err}");
}

const LAUNCHES: u64 = 5000;

fn check_cut(e: &Ended, what: &str) {
    let cap = e.read();
    assert!(
        !cap.complete,
        "{what}: a cut capture must not read as complete"
    );
    assert!(
        cap.trailer.is_none(),
        "{what}: nothing ran to write a trailer"
    );
    all_observed_are_captured(&cap, e.fact("queue_id"), e.fact("observed"), e);
    let (code, err, lines) = e.inspect();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines as u64, e.fact("observed"), "{err}");
    assert!(err.contains("incomplete"), "{what}: {err}");
    assert!(err.contains("recovered"), "{what}: {err}");
}

#[test]
fn abort_keeps_every_synchronised_launch_in_the_file() {
    let e = run_ending("abort", "abort", None);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(e.status.signal(), Some(libc::SIGABRT), "{}", e.context());
    check_cut(&e, "abort()");
}

#[test]
fn underscore_exit_keeps_every_synchronised_launch_in_the_file() {
    let e = run_ending("_exit", "underscore_exit", None);
    assert!(e.status.success(), "{}", e.context());
    check_cut(&e, "_exit()");
}

#[test]
fn sigkill_right_after_the_waits_returned_keeps_every_launch_in_the_file() {
    let e = run_ending("wait_kill", "sigkill", Some(libc::SIGKILL));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(e.status.signal(), Some(libc::SIGKILL), "{}", e.context());
    check_cut(&e, "SIGKILL");
}

fn check_signal_finalised(sig: i32, tag: &str) {
    check_finalised_by(&run_ending("wait_kill", tag, Some(sig)), sig);
}

fn check_finalised_by(e: &Ended, sig: i32) {
    use std::os::unix::process::ExitStatusExt;
    // At least the capture writer (it may not have run yet, nor be named).
    let ours = softgpu_threads_block_termination_signals(e);
    assert!(!ours.is_empty(), "no thread but the program's main one");
    assert_eq!(
        e.status.signal(),
        Some(sig),
        "the program must still end killed by the signal\n{}",
        e.context()
    );
    let cap = e.read();
    assert_eq!(
        cap.end.kind,
        Some(softgpu_hsa::capture::EndKind::Signal(sig as u32)),
        "the shim's handler finalised the capture\n{}",
        e.context()
    );
    assert!(cap.trailer.is_some());
    assert_eq!(cap.end.recovered, 0, "the writer encoded everything first");
    assert_eq!(cap.records.len() as u64, e.fact("observed"));
    all_observed_are_captured(&cap, e.fact("queue_id"), e.fact("observed"), e);
    assert!(!cap.complete, "a program killed by a signal did not finish");
    let (code, err, _) = e.inspect();
    assert_eq!(code, Some(0));
    assert!(err.contains(&format!("signal {sig}")), "{err}");
}

#[test]
fn sigterm_without_a_program_handler_finalises_the_capture_then_kills_the_program() {
    check_signal_finalised(libc::SIGTERM, "sigterm");
}

#[test]
fn sigint_without_a_program_handler_finalises_the_capture_then_kills_the_program() {
    check_signal_finalised(libc::SIGINT, "sigint");
}

#[test]
fn every_thread_softgpu_starts_blocks_the_termination_signals_and_sigterm_still_finalises() {
    // The event thread runs (a barrier waits on a dependency), beside the
    // capture writer: SoftGPU's threads are born with SIGTERM and SIGINT
    // blocked, so the SIGTERM sent to the process runs the hook on the
    // program's thread. (Before, the event thread left them unblocked, and
    // the writer blocked them only once it ran: a writer thread still
    // waiting for a CPU when the signal came took it, and the hook then
    // waited 2 s on its own thread for a Trailer only that thread writes,
    // in about one run in twenty beside a busy test binary.)
    let e = run_ending_under(
        &[],
        "barrier_wait_kill",
        "sigterm_barrier",
        "--default-signal=INT,TERM",
        &[libc::SIGTERM],
    );
    // At least the writer and the event thread (both spawned before ready;
    // either may not have run yet, nor be named).
    let ours = softgpu_threads_block_termination_signals(&e);
    assert!(ours.len() >= 2, "{:?}", e.threads_at_ready);
    let cap = killed_by_sigterm_and_finalised(&e);
    assert_eq!(cap.end.recovered, 0, "the writer encoded everything first");
}

#[test]
fn sigterm_finalises_the_capture_while_the_disk_takes_seconds_to_sync() {
    // A busy disk, made certain: strace holds every fdatasync and fsync of
    // the program for 3 s before it enters the kernel. The writer thread
    // used to make the new file durable itself, first thing; a signal that
    // came before that sync returned lost the Trailer (as this test showed).
    // The hook waits at most 2 s for the writer, so the Trailer must not
    // wait behind any sync: neither the one that makes the new file durable,
    // nor its own (the Trailer is in the file once written; its sync only
    // adds durability against an OS crash).
    let strace = [
        "strace",
        "-f",
        "--seccomp-bpf",
        "-o",
        "/dev/null",
        "-e",
        "trace=fdatasync,fsync",
        "-e",
        "inject=fdatasync,fsync:delay_enter=3000000",
    ];
    let e = run_ending_under(
        &strace,
        "wait_kill",
        "sigterm_slow_sync",
        "--default-signal=INT,TERM",
        &[libc::SIGTERM],
    );
    check_finalised_by(&e, libc::SIGTERM);
}

#[test]
fn a_program_started_with_sigint_ignored_keeps_ignoring_it() {
    // The shim arms only signals at their default action: SIGINT, ignored
    // from the start, stays ignored (the kernel's view of the running
    // program, read once the shim is set up), and the SIGINT sent does not
    // end the program nor the capture; the SIGTERM after it does, through
    // the shim's hook.
    let e = run_ending_signals(
        "wait_kill",
        "sigint_ignored",
        "--ignore-signal=INT",
        &[libc::SIGINT, libc::SIGTERM],
    );
    let mask = |key: &str| {
        e.proc_status_at_ready
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or_else(|| panic!("no {key} in /proc status\n{}", e.context()))
    };
    let bit = |sig: i32| 1u64 << (sig - 1);
    let (ignored, caught) = (mask("SigIgn:"), mask("SigCgt:"));
    assert!(
        ignored & bit(libc::SIGINT) != 0,
        "SIGINT no longer ignored: {ignored:x}"
    );
    assert!(
        caught & bit(libc::SIGINT) == 0,
        "the shim caught SIGINT: {caught:x}"
    );
    assert!(
        caught & bit(libc::SIGTERM) != 0,
        "SIGTERM not armed: {caught:x}"
    );
    let cap = killed_by_sigterm_and_finalised(&e);
    all_observed_are_captured(&cap, e.fact("queue_id"), e.fact("observed"), &e);
}

#[test]
fn sigterm_with_the_programs_own_handler_leaves_it_alone_and_the_ring_keeps_every_launch() {
    let e = run_ending("own_handler", "own_handler", Some(libc::SIGTERM));
    assert_eq!(
        e.status.code(),
        Some(42),
        "the program's handler ran\n{}",
        e.context()
    );
    assert_eq!(e.fact("own_handler_ran"), 1);
    check_cut(&e, "the program's own SIGTERM handler calling _exit");
}

#[test]
fn threads_still_launching_at_exit_are_captured_after_the_trailer_and_the_capture_says_so() {
    let e = run_ending("threads", "threads", None);
    assert!(e.status.success(), "{}", e.context());
    let cap = e.read();
    for t in 0..3 {
        let q = e.fact(&format!("thread_{t}_queue"));
        let n = e.fact(&format!("thread_{t}_observed"));
        all_observed_are_captured(&cap, q, n, &e);
    }
    assert!(cap.trailer.is_some(), "{}", e.context());
    assert!(
        cap.end.late_records > 0,
        "every thread completed launches after the trailer: {:?}",
        cap.end
    );
    assert!(!cap.complete, "late records: never complete");
    let (code, err, lines) = e.inspect();
    assert_eq!(code, Some(0));
    assert_eq!(lines, cap.records.len());
    assert!(
        err.contains("arrived after the program's exit began"),
        "{err}"
    );
    // The exit summary counts what the trailer holds.
    let s = parse_summary(&e.stderr).unwrap();
    assert_eq!(
        s.validated,
        cap.trailer.unwrap().counts.dispatches_validated,
        "{}",
        e.context()
    );
}

#[test]
fn packets_pending_behind_an_unsatisfied_barrier_at_exit_are_recorded_and_warned_about() {
    let e = run_ending("barrier_exit", "barrier_exit", None);
    assert!(e.status.success(), "{}", e.context());
    let cap = e.read();
    let q = e.fact("queue_id");
    assert_eq!(cap.end.pending_at_exit, vec![(q, 2)], "{:?}", cap.end);
    assert!(!cap.complete);
    assert!(
        e.stderr.contains("never processed"),
        "a warning at exit\n{}",
        e.context()
    );
    let (_, err, _) = e.inspect();
    assert!(err.contains("pending"), "{err}");
    assert!(err.contains(&format!("queue {q}")), "{err}");
}

#[test]
fn packets_pending_behind_an_unsatisfied_barrier_at_queue_destroy_are_recorded_and_warned_about() {
    let e = run_ending("barrier_destroy", "barrier_destroy", None);
    assert!(e.status.success(), "{}", e.context());
    let cap = e.read();
    let q = e.fact("queue_id");
    assert_eq!(cap.end.pending_at_destroy, vec![(q, 2)], "{:?}", cap.end);
    assert!(cap.end.pending_at_exit.is_empty());
    assert!(!cap.complete);
    assert!(e.stderr.contains("destroyed with 2"), "{}", e.context());
    let (_, err, _) = e.inspect();
    assert!(err.contains("destroyed"), "{err}");
}

#[test]
fn a_forked_child_never_writes_into_its_parents_capture() {
    let e = run_ending("fork", "fork", None);
    assert!(e.status.success(), "{}", e.context());
    let cap = e.read();
    assert!(cap.complete, "{:?}\n{}", cap.end, e.context());
    assert_eq!(
        cap.records.len() as u64,
        e.fact("parent_launches"),
        "only the parent's launches\n{}",
        e.context()
    );
    let s = parse_summary(&e.stderr).unwrap();
    assert_eq!(
        s.validated,
        120,
        "one summary, the parent's\n{}",
        e.context()
    );
}

#[test]
fn a_fifo_symlink_or_device_at_the_capture_name_is_refused_and_the_program_runs_on_without_a_capture()
 {
    use std::os::unix::fs::FileTypeExt;
    let exe = compile("dispatch_valid");
    let dir = work_dir("planted");
    let fifo = dir.join("fifo.sgcap");
    let link = dir.join("link.sgcap");
    let node = dir.join("full");
    let target = dir.join("precious.txt");
    for p in [&fifo, &link, &target, &node] {
        let _ = std::fs::remove_file(p);
    }
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // A node of our own with /dev/full's numbers: run as root, the 2.x shim
    // renamed its file over SOFTGPU_CAPTURE=/dev/full.
    assert!(
        Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "7"])
            .status()
            .unwrap()
            .success(),
        "mknod needs root (./scripts/setup)"
    );
    std::fs::write(&target, b"not yours").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    type Kind = fn(&std::fs::FileType) -> bool;
    let cases: [(&PathBuf, &str, Kind); 3] = [
        (&fifo, "a FIFO", |t| t.is_fifo()),
        (&link, "a symbolic link", |t| t.is_symlink()),
        (&node, "a device node", |t| t.is_char_device()),
    ];
    for (cap, what, still) in cases {
        let mut cmd = Command::new(&exe);
        cmd.current_dir(&dir)
            .env("LD_PRELOAD", shim())
            .env("SOFTGPU_MODE", "virtual")
            .env("SOFTGPU_CAPTURE", cap)
            .env_remove("SOFTGPU_LOG_FILE")
            .env_remove("SOFTGPU_TARGET");
        // The 1.x shim opened the name for writing: on a FIFO with no reader
        // that blocked hsa_init forever.
        let out = common::output_within(
            &mut cmd,
            RUN_TIMEOUT,
            &format!("a program with {what} at its capture name"),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{what} is at the capture's name; refusing to replace it"
            )) && stderr.contains("capture disabled"),
            "{what}: {stderr}"
        );
        let meta = std::fs::symlink_metadata(cap).unwrap();
        assert!(still(&meta.file_type()), "{what}: the name is unchanged");
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"not yours");
    use std::os::unix::fs::PermissionsExt;
    assert_ne!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600,
        "the symlink's target was not chmod-ed"
    );
}

#[test]
fn a_capture_path_that_is_not_utf8_is_written_under_its_own_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let exe = compile("dispatch_valid");
    let dir = work_dir("not_utf8");
    let name = std::ffi::OsStr::from_bytes(b"cap-\xff\xfe-%p.sgcap");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let _ = std::fs::remove_file(e.path());
    }
    let mut cmd = Command::new(&exe);
    cmd.current_dir(&dir)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_MODE", "virtual")
        .env("SOFTGPU_CAPTURE", name)
        .env_remove("SOFTGPU_LOG_FILE")
        .env_remove("SOFTGPU_TARGET");
    let out = common::output_within(&mut cmd, RUN_TIMEOUT, "a program with a non-UTF-8 capture");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not UTF-8"), "{stderr}");
    // The one file written, named by the template's bytes with %p expanded.
    let written: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let [path] = &written[..] else {
        panic!(
            "one capture expected in {}: {written:?}\n{stderr}",
            dir.display()
        )
    };
    let bytes = path.file_name().unwrap().as_bytes();
    let pid = bytes
        .strip_prefix(b"cap-\xff\xfe-")
        .and_then(|r| r.strip_suffix(b".sgcap"))
        .unwrap_or_else(|| panic!("{path:?} is not cap-\\xff\\xfe-<pid>.sgcap"));
    assert!(
        !pid.is_empty() && pid.iter().all(u8::is_ascii_digit),
        "{path:?}"
    );
    assert!(softgpu_hsa::capture::read_file(path).unwrap().complete);
}

#[test]
fn queues_created_and_destroyed_thousands_of_times_each_end_in_the_capture_with_their_record() {
    // The capture's cost of a queue goes with it (QueueEnd); the 1.x writer
    // kept every queue's ring and polled it forever. RSS and time are
    // measured by scripts/bench-queue-cycles, not here.
    let run = run_with("queue_cycles", "queue_cycles", &["3000"]);
    let cap = softgpu_hsa::capture::read_file(&run.capture).unwrap();
    assert!(cap.complete, "{:?}\n{}", cap.end, run.context());
    assert_eq!(cap.records.len(), 3000);
    assert_eq!(cap.queues.len(), 3000);
    assert!(cap.end.pending_at_destroy.is_empty());
    let queues: std::collections::BTreeSet<u64> = cap.records.iter().map(|r| r.queue_id).collect();
    assert_eq!(queues.len(), 3000, "one record per queue");
}

/// `integration/attr_guard_kernels.hip` as a gfx90a code object: one kernel and
/// one global variable, so the executable has both kinds of symbol.
fn attr_guard_code_object() -> PathBuf {
    // Built once per test process: tests running at once must not race on the file.
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_attr_guard_code_object).clone()
}

fn build_attr_guard_code_object() -> PathBuf {
    let dir = work_dir("attr_guard");
    let out_path = dir.join("attr_guard_kernels.hsaco");
    let out = Command::new("hipcc")
        .args([
            "--genco",
            "--offload-arch=gfx90a",
            "--no-gpu-bundle-output",
            "-O1",
            "-o",
        ])
        .arg(&out_path)
        .arg(repo().join("integration/attr_guard_kernels.hip"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run hipcc: {e}; {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "hipcc --genco attr_guard_kernels.hip failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out_path
}

/// Run `attr_guard` on the given targets; returns its facts.
fn attr_guard(tag: &str, targets: &str) -> Run {
    let co = attr_guard_code_object();
    let co = co.to_string_lossy().into_owned();
    let run = run_over("attr_guard", tag, &[&co], &[("SOFTGPU_TARGET", targets)]);
    assert_eq!(run.fact("done"), "1", "{}", run.context());
    assert_eq!(run.fact("problems"), "0", "{}", run.context());
    run
}

#[test]
fn every_attribute_rocr_answers_is_answered_and_no_byte_outside_the_width_rocr_writes_is_touched() {
    // One GPU with images (gfx90a), one ROCr 6.4 gives none (gfx942: every image
    // limit a 4-byte zero), one RDNA3: the system, the CPU and each GPU agent,
    // every pool and agent/pool pair, regions, ISAs, wavefronts, caches, and a
    // loaded executable with a kernel and variables.
    let run = attr_guard("three_gpus", "gfx90a,gfx942,gfx1100");
    assert_eq!(run.fact("agents"), "4", "{}", run.context());
    assert!(run.fact("kernels") != "0" && run.fact("variables") != "0");
    let checked = run.fact_u64("checked");
    assert!(
        checked > 900,
        "only {checked} attribute queries were checked\n{}",
        run.context()
    );
}

#[test]
fn the_default_gfx90a_agent_answers_every_attribute_within_its_width() {
    let run = attr_guard("default", "gfx90a");
    assert_eq!(run.fact("agents"), "2", "{}", run.context());
}

#[test]
fn symbols_answer_the_same_type_and_name_on_every_pass_as_hip_asks_them() {
    // `integration/bench_symbols.c` (scripts/bench-launch's part 5 times it) asks
    // every symbol its type, name length and name on each pass, as HIP 6.4 does
    // once per kernel it registers; its checked passes before and after the
    // timed ones must agree, and no name may be written past its length.
    let co = attr_guard_code_object();
    let co = co.to_string_lossy().into_owned();
    let run = run_over("bench_symbols", "attr_guard_co", &[&co, "50"], &[]);
    let guard = attr_guard("for_bench_symbols", "gfx90a");
    let kernels = guard.fact_u64("kernels");
    let symbols = kernels + guard.fact_u64("variables");
    assert_eq!(run.fact_u64("symbols"), symbols, "{}", run.context());
    assert_eq!(run.fact_u64("kernels"), kernels, "{}", run.context());
    assert_eq!(
        run.fact_u64("get_info_calls"),
        3 * 50 * symbols,
        "{}",
        run.context()
    );
}

// ---------------------------------------------------------------------------
// Probes: bad input that once hurt the host or told it something false
// (integration/probes.c, one process per probe)
// ---------------------------------------------------------------------------

fn probe(name: &str) -> Run {
    let mut run = run_with("probes", name, &[name]);
    assert_eq!(run.fact("done"), "1", "{}", run.context());
    run.records = inspect_jsonl(&run);
    run
}

#[test]
fn wait_any_on_uint32_max_signals_is_refused_without_touching_the_host() {
    // Before: a 103 GB Vec::with_capacity; the allocation failure aborted the program.
    let run = probe("wait_any_huge");
    assert_eq!(run.fact("wait_any_huge"), "refused", "{}", run.context());
}

#[test]
fn a_copy_with_uint32_max_dependencies_is_refused_without_touching_the_host() {
    // Before: a 32 GiB Vec::with_capacity in read_deps aborted the program.
    let run = probe("copy_huge_deps");
    assert_eq!(
        run.fact_u64("copy_huge_deps"),
        0x1001,
        "HSA_STATUS_ERROR_INVALID_ARGUMENT\n{}",
        run.context()
    );
}

#[test]
fn waits_loads_and_cas_on_a_destroyed_signal_never_read_as_completed_and_their_log_is_rate_limited()
{
    // Before: every call returned 0 ("completed") and logged one ERROR line:
    // 40,000 lines for these 40,000 calls.
    let run = probe("dead_signal");
    assert_eq!(run.fact("dead_signal"), "refused", "{}", run.context());
    let lines = run
        .stderr
        .lines()
        .filter(|l| l.contains("is not a live signal"))
        .count();
    assert!(
        (1..=100).contains(&lines),
        "{lines} log lines for 40,000 calls on a dead signal (rate limited to a few per function)\n{}",
        &run.stderr[..run.stderr.len().min(4000)]
    );
}

#[test]
fn a_destroyed_signals_handle_is_refused_after_newer_signals_are_made() {
    // Before: slots were reused last-in first-out, so the stale handle was the next signal's.
    let run = probe("stale_signal");
    assert_eq!(run.fact("stale_signal"), "refused", "{}", run.context());
}

#[test]
fn a_destroyed_queues_pointer_is_refused_after_a_newer_queue_is_made() {
    // Before: the next queue got the same hsa_queue_t*, and the stale pointer moved its indices.
    let run = probe("stale_queue");
    assert_eq!(run.fact("stale_queue"), "refused", "{}", run.context());
}

#[test]
fn index_operations_on_a_forged_queue_never_hand_out_a_slot() {
    // Before: add_write_index answered 0 on every call: one slot for every producer.
    let run = probe("forged_queue");
    assert_eq!(run.fact("forged_queue"), "refused", "{}", run.context());
}

#[test]
fn a_dispatch_naming_its_queues_doorbell_as_completion_signal_is_rejected_and_the_doorbell_untouched()
 {
    // Before: the doorbell was decremented as if it were the program's signal.
    let run = probe("doorbell_completion");
    assert_eq!(
        run.fact("doorbell_completion"),
        "refused",
        "{}",
        run.context()
    );
    assert_eq!(run.records.len(), 2, "{}", run.context());
    assert_eq!(run.records[0]["status"], "validated", "{}", run.context());
    assert_eq!(run.records[1]["status"], "rejected", "{}", run.context());
    assert_eq!(
        run.records[1]["reasons"],
        serde_json::json!(["completion_signal_unknown"]),
        "{}",
        run.context()
    );
}

#[test]
fn hsa_memory_copy_translates_agent_addresses_of_locked_memory() {
    // Before: it dereferenced the PROT_NONE agent address and the program segfaulted.
    let run = probe("locked_copy");
    assert_eq!(run.fact("locked_copy"), "ok", "{}", run.context());
}

#[test]
fn twenty_thousand_queue_create_destroy_cycles_keep_the_resident_size_bounded() {
    // Before: every VirtualQueue and its kernel cache were leaked (about 3.3 kB a
    // queue: 66 MB for these cycles; 0.66 GB for 200,000).
    let mut run = run_over(
        "probes",
        "queue_cycles",
        &["queue_cycles", "20000"],
        &[("SOFTGPU_CAPTURE", "off")],
    );
    run.records = Vec::new();
    let (before, after) = (
        run.fact_u64("rss_before_kib"),
        run.fact_u64("rss_after_kib"),
    );
    assert!(
        after <= before + 8 * 1024,
        "20,000 create/destroy cycles grew the resident size from {before} kB to {after} kB\n{}",
        run.context()
    );
}

#[test]
fn a_non_utf8_capture_path_is_honoured_and_a_long_bad_value_is_echoed_cut_short() {
    use std::os::unix::ffi::OsStrExt;
    // Before: the non-UTF-8 value was taken as unset without a word (the
    // default path was written), and a bad value was echoed in full. A
    // capture path is a file name, which is bytes: it is honoured as it is.
    let exe = compile("example_vector");
    let dir = work_dir("non_utf8_env");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let long = "y".repeat(100_000);
    let out = Command::new(&exe)
        .current_dir(&dir)
        .env("LD_PRELOAD", shim())
        .env("SOFTGPU_MODE", "virtual")
        .env(
            "SOFTGPU_CAPTURE",
            std::ffi::OsStr::from_bytes(b"cap-\xff\xfe.sgcap"),
        )
        .env("SOFTGPU_LOG", &long)
        .env_remove("SOFTGPU_SUMMARY")
        .env_remove("SOFTGPU_LOG_FILE")
        .env_remove("SOFTGPU_TARGET")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        !err.lines().any(|l| l.contains("not UTF-8")),
        "the non-UTF-8 SOFTGPU_CAPTURE is a file name, not a bad value\n{}",
        &err[..err.len().min(4000)]
    );
    assert!(
        dir.join(std::ffi::OsStr::from_bytes(b"cap-\xff\xfe.sgcap"))
            .is_file(),
        "the capture is written under the value's own bytes\n{}",
        &err[..err.len().min(4000)]
    );
    let log_line = err
        .lines()
        .find(|l| l.contains("SOFTGPU_LOG"))
        .unwrap_or_else(|| {
            panic!(
                "SOFTGPU_LOG's bad value is not reported\n{}",
                &err[..err.len().min(4000)]
            )
        });
    assert!(
        log_line.len() < 400,
        "the bad value is echoed in a {}-byte line",
        log_line.len()
    );
}

#[test]
fn a_rejected_packet_calls_its_queues_error_callback_once_with_rocrs_status_on_a_shim_thread() {
    // `queue_errors` submits each defect on a queue of its own with an error callback and
    // checks, in the program, ROCr's status for it (rocrtst's Queue_Validation cases and
    // ROCr's error table), the queue and data the callback got, that it ran once and not on
    // the thread that rang the doorbell, and the diagnostic contract (read index past the
    // packet, completion signal untouched). It also checks the kernel's kernarg segment
    // alignment, which ROCr reports as 16. Here: the capture holds every reject with its
    // reasons, and the valid dispatch after a reject.
    let (kernels, _, _) = kernel_check_code_objects();
    let mut run = run_with("queue_errors", "queue_errors", &[kernels.to_str().unwrap()]);
    run.records = inspect_jsonl(&run);
    let ctx = run.context();
    assert_eq!(run.fact("done"), "1", "{ctx}");
    assert_eq!(run.fact("kernarg_align"), "16", "{ctx}");
    assert_eq!(run.fact("after_reject"), "completed", "{ctx}");
    assert_eq!(run.fact("destroyed_after_reject"), "called", "{ctx}");
    let want = [
        ("dimensions", 0x100d),
        ("group_segment", 0x1003),
        ("kernel_object", 0x1010),
        ("packet_type", 0x1009),
        ("workgroup_size", 0x1001),
        ("vendor_specific", 0x1009),
        ("agent_dispatch", 0x1009),
        ("dependency_signal", 0x1006),
        ("code_object_before_format", 0x1010),
    ];
    assert_eq!(run.fact_u64("cases"), want.len() as u64, "{ctx}");
    for (i, (name, status)) in want.iter().enumerate() {
        assert_eq!(
            run.fact(&format!("case_{i}")),
            format!("{name} status={status:#x}"),
            "{ctx}"
        );
    }
    // Every case, the destroyed queue's and the quiet queue's: rejected, with reasons.
    let rejected: Vec<&Value> = run
        .records
        .iter()
        .filter(|r| r["status"] == "rejected")
        .collect();
    assert_eq!(rejected.len(), want.len() + 2, "{ctx}");
    for r in &rejected {
        assert!(
            r["reasons"].as_array().is_some_and(|a| !a.is_empty()),
            "a reject without reasons: {r}\n{ctx}"
        );
    }
    let validated = run
        .records
        .iter()
        .filter(|r| r["status"] == "validated" && r["type"] == "kernel_dispatch")
        .count();
    assert_eq!(validated, 1, "{ctx}");
}
