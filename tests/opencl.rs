//! ROCm's OpenCL runtime over the shim: Debian experimental's `rocm-opencl-icd` 7.2.4 (ROCclr
//! over HSA, behind the `ocl-icd` loader) in the ROCm 7.2.4 chroot of
//! `scripts/sid-chroot --rocm7 --realworld`, with the shim preloaded in virtual mode, on one
//! virtual GPU (`gfx90a`) and on two (`gfx90a,gfx942`).
//!
//! - `clinfo` lists every virtual agent as an OpenCL GPU device.
//! - Our program (`integration/opencl/vector.c`, built in the chroot with clang-22 against
//!   Debian's OpenCL headers) prints every `clEnqueueNDRangeKernel` it makes; each one must be in
//!   the capture, in order, on its device's queue and target, with its kernel name, grid and
//!   workgroup, its arguments decoded from the OpenCL kernel's `.args` (names, types, values,
//!   the hidden arguments OpenCL's code objects carry), no disagreement, no hidden mismatch, and
//!   every buffer argument inside an allocation (sub-buffers at their offset).
//! - Debian's OpenCL software: pyopencl's own library kernels (`integration/opencl/pyopencl_lib.py`
//!   drives python3-pyopencl's arrays, elementwise, reduction, scan and random modules) and
//!   `clpeak` (its global bandwidth, single-precision compute and kernel latency tests). Every
//!   dispatch of theirs is validated, named, its arguments decoded with no disagreement, and its
//!   buffer arguments inside allocations. The counts are the README's OpenCL matrix
//!   (`<!-- opencl-matrix -->`), which this file checks (`SOFTGPU_BLESS=1` rewrites it).
//!
//! - The witness (`integration/witness/witness.c`, its OpenCL side) is preloaded in front of the
//!   shim in every run and logs each `clEnqueueNDRangeKernel` / `clEnqueueTask` with its kernel
//!   name, sizes, offset, device and the argument values `clSetKernelArg` set. For every
//!   program on one and two devices, [`compare_witness`] holds: each device's enqueues are its
//!   dispatches in order, same name, global and local size, offset and argument values, each
//!   device on queues of its own, nothing more and nothing less. The vector test shows the
//!   comparison failing on a doctored capture and doctored logs. Dispatches of the runtime's own
//!   blit kernels (`__amd_rocclr_*`) would have no enqueue and are counted apart (none occur).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{Hip, Place, cli, output_within, repo, shim};

/// The two set-ups every program runs on: (SOFTGPU_TARGET, the README's column).
const TARGETS: [(&str, &str); 2] = [("gfx90a", "gfx90a"), ("gfx90a,gfx942", "gfx90a + gfx942")];

/// The chroot, ready with its real-world stage, and this test process's directory in it with
/// the shim and our sources copied in and `vector` built. One per test process.
fn built() -> &'static (common::Chroot, Place) {
    static BUILT: std::sync::OnceLock<(common::Chroot, Place)> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let chroot = Hip::V7_2.chroot().unwrap();
        assert!(
            chroot.root.join(".softgpu-realworld-ready").is_file(),
            "the ROCm 7.2.4 chroot's real-world stage is not ready at {}: run \
             scripts/sid-chroot --rocm7 --realworld (scripts/test does)",
            chroot.root.display()
        );
        let dir = common::process_dir_in_chroot(&chroot.root, "opencl");
        for f in ["vector.c", "pyopencl_lib.py"] {
            std::fs::copy(repo().join("integration/opencl").join(f), dir.host.join(f)).unwrap();
        }
        std::fs::copy(shim(), dir.host.join("libsoftgpu_hsa.so")).unwrap();
        std::fs::copy(
            repo().join("integration/witness/witness.c"),
            dir.host.join("witness.c"),
        )
        .unwrap();
        // The witness, against the chroot's HIP 7.2.4 headers (its OpenCL side needs none).
        common::clang_in_chroot(
            &chroot,
            &[
                "-std=gnu11",
                "-O1",
                "-g",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fPIC",
                "-shared",
            ],
            &format!("{}/witness.so", dir.seen),
            &format!("{}/witness.c", dir.seen),
            &["-ldl", "-lpthread"],
        );
        common::clang_in_chroot(
            &chroot,
            &["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"],
            &format!("{}/vector", dir.seen),
            &format!("{}/vector.c", dir.seen),
            &["-lOpenCL"],
        );
        (chroot, dir)
    })
}

/// One program's run under the shim.
struct Run {
    stdout: String,
    stderr: String,
    /// The capture's records (`softgpu inspect --format jsonl`).
    records: Vec<Value>,
    /// The witness's lines, every process's log (one here: none of these programs forks).
    witness: Vec<Value>,
    /// How many witness logs the run left.
    witness_logs: usize,
    /// Where it ran, for messages.
    dir: PathBuf,
    elapsed: Duration,
}

impl Run {
    fn dispatches(&self) -> Vec<&Value> {
        self.records
            .iter()
            .filter(|r| r["type"] == "kernel_dispatch")
            .collect()
    }
    fn shown(&self) -> String {
        let tail: String = {
            let lines: Vec<&str> = self.stdout.lines().collect();
            lines[lines.len().saturating_sub(40)..].join("\n")
        };
        format!(
            "in {}\nstdout (end):\n{tail}\nstderr:\n{}",
            self.dir.display(),
            self.stderr
        )
    }
}

/// Runs `cmd` (as the chroot sees it) in our directory with the witness and the shim preloaded,
/// virtual mode, `SOFTGPU_TARGET=targets`, and reads its capture and witness logs back. `name`
/// names the capture and the logs.
fn run(name: &str, targets: &str, cmd: &[&str]) -> Run {
    let (chroot, dir) = built();
    // Unique per run: the tests run in parallel, and two of them run `vector`.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stem = format!("{name}-{}-{n}", targets.replace(',', "+"));
    let capture = dir.join(&format!("{stem}.sgcap"));
    let _ = std::fs::remove_file(&capture.host);
    let log_prefix = format!("witness-{stem}-");
    let logs = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir.host)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&log_prefix)
            })
            .collect();
        v.sort();
        v
    };
    for l in logs() {
        std::fs::remove_file(l).unwrap();
    }
    let start = Instant::now();
    let out = output_within(
        chroot
            .run_command()
            .args([
                "/usr/bin/env",
                "-i",
                "-C",
                &dir.seen,
                "PATH=/usr/bin:/bin",
                &format!("HOME={}", dir.seen),
                &format!(
                    "LD_PRELOAD={}/witness.so:{}/libsoftgpu_hsa.so",
                    dir.seen, dir.seen
                ),
                "SOFTGPU_MODE=virtual",
                &format!("SOFTGPU_TARGET={targets}"),
                &format!("SOFTGPU_CAPTURE={}", capture.seen),
                &format!("SOFTGPU_WITNESS_LOG={}/{log_prefix}%p.jsonl", dir.seen),
            ])
            .args(cmd),
        Duration::from_secs(600),
        &format!("{cmd:?} under the shim"),
    );
    let elapsed = start.elapsed();
    let mut run = Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        records: Vec::new(),
        witness: Vec::new(),
        witness_logs: 0,
        dir: dir.host.clone(),
        elapsed,
    };
    for l in logs() {
        run.witness_logs += 1;
        let text = std::fs::read_to_string(&l).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            run.witness.push(
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("witness log {}: {e}: {line}", l.display())),
            );
        }
        std::fs::remove_file(l).unwrap();
    }
    assert!(
        out.status.success(),
        "{cmd:?} with SOFTGPU_TARGET={targets} failed ({}): {}",
        out.status,
        run.shown()
    );
    let inspect = output_within(
        std::process::Command::new(cli()).args([
            "inspect",
            &capture.host.display().to_string(),
            "--format",
            "jsonl",
        ]),
        Duration::from_secs(300),
        "softgpu inspect",
    );
    assert!(
        inspect.status.success(),
        "softgpu inspect {}: {}",
        capture.host.display(),
        String::from_utf8_lossy(&inspect.stderr)
    );
    run.records = String::from_utf8_lossy(&inspect.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let _ = std::fs::remove_file(&capture.host);
    run
}

/// What every OpenCL dispatch must be, whatever the program: validated with no reason, named,
/// its target one of `targets`, its kernarg block captured and decoded with no disagreement
/// and no hidden mismatch, every buffer argument inside an allocation or null. Returns the
/// hidden argument kinds seen.
fn check_dispatches(run: &Run, targets: &str) -> BTreeSet<String> {
    let want: BTreeSet<&str> = targets.split(',').collect();
    let mut hidden = BTreeSet::new();
    let dispatches = run.dispatches();
    assert!(
        !dispatches.is_empty(),
        "no dispatch captured: {}",
        run.shown()
    );
    for r in dispatches {
        let what = format!("record {r}\n{}", run.shown());
        assert_eq!(r["status"], "validated", "{what}");
        assert_eq!(r["reasons"], serde_json::json!([]), "{what}");
        assert!(r["kernel_name"].is_string(), "no kernel name: {what}");
        assert!(
            want.contains(r["target"].as_str().unwrap_or("")),
            "target not one of {targets}: {what}"
        );
        assert_eq!(r["kernarg_state"], "captured", "{what}");
        assert_eq!(r["arg_disagreements"], serde_json::json!([]), "{what}");
        assert_eq!(r["hidden_mismatches"], serde_json::json!([]), "{what}");
        let args = r["args"]
            .as_array()
            .unwrap_or_else(|| panic!("no args: {what}"));
        let findings = r["arg_findings"].as_array().unwrap();
        let buffers: Vec<&Value> = args
            .iter()
            .filter(|a| a["kind"] == "global_buffer")
            .collect();
        assert_eq!(findings.len(), buffers.len(), "{what}");
        for f in findings {
            assert!(
                f["code"] == "pointer_in_allocation" || f["code"] == "pointer_null",
                "a buffer argument outside every allocation: {what}"
            );
        }
        for a in args {
            let kind = a["kind"].as_str().unwrap();
            if kind.starts_with("hidden_") {
                hidden.insert(kind.to_owned());
            }
        }
    }
    hidden
}

/// The value of the argument of kind `kind` in a record.
fn arg<'r>(r: &'r Value, kind: &str) -> &'r Value {
    r["args"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == kind)
        .map(|a| &a["value"])
        .unwrap_or_else(|| panic!("no argument of kind {kind} in {r}"))
}

#[test]
fn clinfo_lists_every_virtual_agent_as_an_opencl_gpu() {
    for (targets, _) in TARGETS {
        let list = run("clinfo-l", targets, &["clinfo", "-l"]);
        let devices: Vec<&str> = list
            .stdout
            .lines()
            .filter_map(|l| l.split_once("-- Device #").map(|(_, d)| d))
            .collect();
        let want: Vec<String> = targets
            .split(',')
            .enumerate()
            .map(|(i, t)| format!("{i}: {t}:sramecc+:xnack-"))
            .collect();
        assert_eq!(devices, want, "clinfo -l: {}", list.shown());
        assert!(
            list.stdout
                .contains("Platform #0: AMD Accelerated Parallel Processing"),
            "{}",
            list.shown()
        );
        // The full listing queries every device property; it must not fail or warn.
        let full = run("clinfo", targets, &["clinfo"]);
        let count = targets.split(',').count();
        assert!(
            full.stdout
                .lines()
                .any(|l| l.starts_with("Number of devices") && l.ends_with(&format!(" {count}"))),
            "clinfo: {}",
            full.shown()
        );
        assert!(!full.stderr.contains(" WARN "), "{}", full.shown());
        assert!(full.dispatches().is_empty(), "{}", full.shown());
        assert!(full.witness.is_empty(), "{:?}", full.witness);
    }
}

/// One `sg: enqueue` line of our program.
#[derive(Debug)]
struct Enqueue {
    device: usize,
    kernel: String,
    grid: Vec<u64>,
    block: Vec<u64>,
}

fn enqueues(stdout: &str) -> Vec<Enqueue> {
    let triple = |s: &str| {
        s.split(',')
            .map(|v| v.parse().unwrap())
            .collect::<Vec<u64>>()
    };
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("sg: enqueue "))
        .map(|l| {
            let f: BTreeMap<&str, &str> = l.split(' ').filter_map(|w| w.split_once('=')).collect();
            assert_eq!(f["status"], "0", "{l}");
            Enqueue {
                device: f["device"].parse().unwrap(),
                kernel: f["kernel"].to_owned(),
                grid: triple(f["grid"]),
                block: triple(f["block"]),
            }
        })
        .collect()
}

#[test]
fn every_enqueue_of_our_opencl_program_is_captured_with_its_arguments() {
    for (targets, _) in TARGETS {
        let run = run("vector", targets, &["./vector"]);
        assert!(run.stdout.contains("sg: done=1"), "{}", run.shown());
        let names: Vec<&str> = targets.split(',').collect();
        let calls = enqueues(&run.stdout);
        assert_eq!(calls.len(), 4 * names.len(), "{}", run.shown());
        let hidden = check_dispatches(&run, targets);
        let dispatches = run.dispatches();
        // In order: the program enqueues on one device, waits for it, then on the next.
        assert_eq!(dispatches.len(), calls.len(), "{}", run.shown());
        let mut queue_of_device: BTreeMap<usize, &Value> = BTreeMap::new();
        for (call, r) in calls.iter().zip(&dispatches) {
            let what = format!("{call:?} against {r}\n{}", run.shown());
            assert_eq!(r["kernel_name"], call.kernel.as_str(), "{what}");
            assert_eq!(r["kernel_symbol"], format!("{}.kd", call.kernel), "{what}");
            assert_eq!(r["grid"], serde_json::json!(call.grid), "{what}");
            assert_eq!(r["workgroup"], serde_json::json!(call.block), "{what}");
            assert_eq!(r["target"], names[call.device], "{what}");
            let q = queue_of_device.entry(call.device).or_insert(&r["queue_id"]);
            assert_eq!(*q, &r["queue_id"], "one queue per device: {what}");
        }
        let queues: BTreeSet<String> = queue_of_device.values().map(|q| q.to_string()).collect();
        assert_eq!(
            queues.len(),
            names.len(),
            "a queue per device: {}",
            run.shown()
        );
        for (d, _) in names.iter().enumerate() {
            let mine: Vec<&&Value> = calls
                .iter()
                .zip(&dispatches)
                .filter(|(c, _)| c.device == d)
                .map(|(_, r)| r)
                .collect();
            let [vadd, scale, fill, sub] = mine[..] else {
                panic!("device {d}: {} dispatches: {}", mine.len(), run.shown())
            };
            // Names and types from the OpenCL metadata, values as set by clSetKernelArg.
            assert!(
                vadd["call"]
                    .as_str()
                    .unwrap()
                    .starts_with("vadd(float* a=0x"),
                "{vadd}"
            );
            assert!(
                vadd["call"].as_str().unwrap().ends_with("uint n=1024)"),
                "{vadd}"
            );
            assert_eq!(arg(vadd, "hidden_global_offset_x"), 0, "{vadd}");
            assert_eq!(arg(vadd, "hidden_block_count_x"), 16, "{vadd}");
            assert_eq!(arg(vadd, "hidden_grid_dims"), 1, "{vadd}");
            // The local buffer: 512 bytes in the packet, at LDS offset 0; the global offset.
            assert_eq!(scale["group_segment_size"], 512, "{scale}");
            assert!(
                scale["call"]
                    .as_str()
                    .unwrap()
                    .ends_with("float* tile=0, float factor=2.5, int4 shift=(1, -2, 3, -4))"),
                "{scale}"
            );
            assert_eq!(arg(scale, "hidden_global_offset_x"), 32, "{scale}");
            assert_eq!(arg(scale, "hidden_dynamic_lds_size"), 0, "{scale}");
            assert_eq!(arg(fill, "hidden_grid_dims"), 2, "{fill}");
            assert_eq!(arg(fill, "hidden_block_count_y"), 2, "{fill}");
            assert!(
                fill["call"]
                    .as_str()
                    .unwrap()
                    .ends_with("int width=16, int value=7)"),
                "{fill}"
            );
            // Sub-buffers: the same three allocations, 1 KiB in.
            for (whole, part) in vadd["arg_findings"]
                .as_array()
                .unwrap()
                .iter()
                .zip(sub["arg_findings"].as_array().unwrap())
            {
                assert_eq!(whole["allocation"], part["allocation"], "{sub}");
                assert_eq!(whole["offset"], 0, "{vadd}");
                assert_eq!(part["offset"], 1024, "{sub}");
            }
        }
        for k in [
            "hidden_block_count_x",
            "hidden_group_size_x",
            "hidden_remainder_x",
            "hidden_global_offset_x",
            "hidden_grid_dims",
            "hidden_dynamic_lds_size",
        ] {
            assert!(hidden.contains(k), "{k} not among {hidden:?}");
        }
        // The witness saw what the program printed, and the capture agrees with it, argument
        // values included: 6 values, 8 buffers and 1 local buffer per device.
        let a = check_witness(&run, targets);
        assert_eq!(a.enqueues, calls.len(), "{a:?}");
        assert_eq!(a.internal, 0, "{a:?}");
        assert_eq!(a.locals, names.len(), "{a:?}");
        assert_eq!(a.values, 6 * names.len(), "{a:?}");
        assert_eq!(a.buffers, 8 * names.len(), "{a:?}");
        // And the comparison fails when they do not agree: a dispatch the capture dropped, an
        // enqueue of another size, another argument value, a dispatch on another device.
        let mut dropped = run.records.clone();
        let at = dropped
            .iter()
            .rposition(|r| r["type"] == "kernel_dispatch")
            .unwrap();
        dropped.remove(at);
        let e = compare_witness(&run.witness, &dropped).unwrap_err();
        assert!(e.contains("enqueues witnessed"), "{e}");
        let mut resized = run.witness.clone();
        resized[1]["grid"][0] = serde_json::json!(512);
        let e = compare_witness(&resized, &run.records).unwrap_err();
        assert!(e.contains("global size"), "{e}");
        let mut revalued = run.witness.clone();
        revalued[0]["args"][3]["hex"] = serde_json::json!("00080000");
        let e = compare_witness(&revalued, &run.records).unwrap_err();
        assert!(e.contains("an argument value"), "{e}");
        if names.len() > 1 {
            let mut moved = run.witness.clone();
            moved[0]["device_name"] = moved[moved.len() - 1]["device_name"].clone();
            let e = compare_witness(&moved, &run.records).unwrap_err();
            assert!(e.contains("device indices"), "{e}");
        }
        println!(
            "opencl: vector on {targets}: {} dispatches in {:.1} s; hidden arguments {hidden:?}; \
             witness: {a:?}",
            dispatches.len(),
            run.elapsed.as_secs_f64()
        );
    }
}

/// The OpenCL programs of the README's matrix: (program as the README names it, command).
const PROGRAMS: &[(&str, &[&str])] = &[
    ("`vector` (ours)", &["./vector"]),
    (
        "pyopencl (`pyopencl_lib.py`)",
        &["python3", "pyopencl_lib.py"],
    ),
    (
        "clpeak (`--global-bandwidth --compute-sp --kernel-latency -i 2`)",
        &[
            "clpeak",
            "--global-bandwidth",
            "--compute-sp",
            "--kernel-latency",
            "-i",
            "2",
        ],
    ),
];

#[test]
fn the_readme_opencl_matrix_is_what_the_suite_measured() {
    let mut rows = String::from(
        "| program | gfx90a | gfx90a + gfx942 | hidden arguments seen |\n| --- | --- | --- | --- |\n",
    );
    for (program, cmd) in PROGRAMS {
        let mut cells = Vec::new();
        let mut hidden = BTreeSet::new();
        for (targets, _) in TARGETS {
            let run = run(&cmd[0].replace(['.', '/'], ""), targets, cmd);
            hidden.extend(check_dispatches(&run, targets));
            let per_target: BTreeMap<&str, usize> =
                run.dispatches().iter().fold(BTreeMap::new(), |mut m, r| {
                    *m.entry(r["target"].as_str().unwrap()).or_default() += 1;
                    m
                });
            // Every device got work.
            for t in targets.split(',') {
                assert!(
                    per_target.contains_key(t),
                    "{program}: nothing dispatched on {t}: {}",
                    run.shown()
                );
            }
            let a = check_witness(&run, targets);
            assert_eq!(
                a.enqueues + a.internal,
                run.dispatches().len(),
                "{a:?}: {}",
                run.shown()
            );
            println!(
                "opencl: {program} on {targets}: {} dispatches {per_target:?} in {:.1} s; \
                 witness: {a:?}",
                run.dispatches().len(),
                run.elapsed.as_secs_f64()
            );
            cells.push(if a.internal == 0 {
                format!("runs, witness holds ({} enqueues)", a.enqueues)
            } else {
                format!(
                    "runs, witness holds ({} enqueues, {} runtime kernels)",
                    a.enqueues, a.internal
                )
            });
        }
        let hidden: Vec<String> = hidden
            .iter()
            .map(|h| format!("`{}`", h.trim_start_matches("hidden_")))
            .collect();
        rows.push_str(&format!(
            "| {program} | {} | {} | {} |\n",
            cells[0],
            cells[1],
            hidden.join(", ")
        ));
    }
    common::generated_section("README.md", "opencl-matrix", &rows);
}

// ------------------------------------------------------------------------------------------
// The witness's OpenCL side against the capture
// ------------------------------------------------------------------------------------------

/// Whether a captured kernel is one ROCm's OpenCL runtime dispatches on its own (its blit
/// kernels, for copies and fills it does with shaders): no enqueue of the program's stands
/// behind it, so it has nothing to be compared with and is counted apart.
fn runtime_internal(name: &str) -> bool {
    name.starts_with("__amd_rocclr_")
}

/// What the comparison of a witness log with a capture found when they agree.
#[derive(Debug, Default, PartialEq)]
struct Agreement {
    /// Successful enqueues, each matched to its dispatch.
    enqueues: usize,
    /// Enqueues the runtime refused (nothing may be captured for them).
    failed: usize,
    /// Per target (the device's agent): enqueues.
    per_target: BTreeMap<String, usize>,
    /// Argument values set with clSetKernelArg found byte for byte in the kernarg block, and
    /// local buffers (NULL values) found as local pointer arguments.
    values: usize,
    locals: usize,
    /// Buffer (cl_mem) arguments: the witness has the handle, the capture the address; not
    /// comparable, counted.
    buffers: usize,
    /// Captured dispatches of the runtime's own kernels (see [`runtime_internal`]).
    internal: usize,
}

/// Compares every enqueue the witness logged with the capture's `kernel_dispatch` records: the
/// same number per device, in the same order per device (each device's dispatches in capture
/// order against its enqueues in call order), each with the same kernel name, global size,
/// local size (when the program gave one), global offset (the `hidden_global_offset_*`
/// arguments), argument values, and each device's dispatches on queues of its own. Returns
/// what agreed or every difference found.
fn compare_witness(witness: &[Value], records: &[Value]) -> Result<Agreement, String> {
    let mut problems = Vec::new();
    let mut a = Agreement::default();
    let mut enqueues: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let mut device_index: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    let mut lines: Vec<&Value> = witness.iter().collect();
    lines.sort_by_key(|l| l["seq"].as_u64());
    for l in lines {
        let api = l["api"].as_str().unwrap_or("");
        if !api.starts_with("clEnqueue") {
            problems.push(format!("a witness line that is not an OpenCL enqueue: {l}"));
            continue;
        }
        if l["status"] != 0 {
            a.failed += 1;
            continue;
        }
        let Some(target) = l["device_name"].as_str().and_then(|n| n.split(':').next()) else {
            problems.push(format!("an enqueue without its device's name: {l}"));
            continue;
        };
        if l["name"].as_str().is_none() {
            problems.push(format!("an enqueue without its kernel's name: {l}"));
        }
        device_index
            .entry(target.to_owned())
            .or_default()
            .insert(l["device_index"].as_i64().unwrap_or(-1));
        enqueues.entry(target.to_owned()).or_default().push(l);
    }
    let mut dispatches: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    let mut recs: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "kernel_dispatch")
        .collect();
    recs.sort_by_key(|r| r["seq"].as_u64());
    for r in recs {
        if r["kernel_name"].as_str().is_some_and(runtime_internal) {
            a.internal += 1;
            continue;
        }
        let target = r["target"].as_str().unwrap_or("?").to_owned();
        dispatches.entry(target).or_default().push(r);
    }
    // One device per target here (the set-ups have distinct targets), and each its own queues.
    let mut queue_owner: BTreeMap<String, String> = BTreeMap::new();
    for (target, indices) in &device_index {
        if indices.len() != 1 || indices.contains(&-1) {
            problems.push(format!(
                "{target}: enqueues on device indices {indices:?} (one known index expected)"
            ));
        }
    }
    for (target, ds) in &dispatches {
        for d in ds {
            let q = d["queue_id"].to_string();
            let owner = queue_owner
                .entry(q.clone())
                .or_insert_with(|| target.clone());
            if owner != target {
                problems.push(format!(
                    "queue {q} has dispatches for {owner} and {target}: {d}"
                ));
            }
        }
    }
    let targets: BTreeSet<&String> = enqueues.keys().chain(dispatches.keys()).collect();
    for target in targets {
        let want = enqueues.get(target).map(Vec::as_slice).unwrap_or(&[]);
        let got = dispatches.get(target).map(Vec::as_slice).unwrap_or(&[]);
        if want.len() != got.len() {
            let count = |names: Vec<&str>| {
                names.into_iter().fold(BTreeMap::new(), |mut m, n| {
                    *m.entry(n.to_owned()).or_insert(0usize) += 1;
                    m
                })
            };
            let w = count(
                want.iter()
                    .map(|l| l["name"].as_str().unwrap_or("?"))
                    .collect(),
            );
            let g = count(
                got.iter()
                    .map(|r| r["kernel_name"].as_str().unwrap_or("?"))
                    .collect(),
            );
            let differ: Vec<String> = w
                .keys()
                .chain(g.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .filter(|k| w.get(*k) != g.get(*k))
                .map(|k| {
                    format!(
                        "{k}: {} enqueued, {} captured",
                        w.get(k).unwrap_or(&0),
                        g.get(k).unwrap_or(&0)
                    )
                })
                .collect();
            problems.push(format!(
                "{target}: {} enqueues witnessed, {} dispatches captured ({})",
                want.len(),
                got.len(),
                differ.join("; ")
            ));
        }
        for (i, (l, r)) in want.iter().zip(got).enumerate() {
            let mut diff = Vec::new();
            if l["name"] != r["kernel_name"] {
                diff.push("kernel name");
            }
            if l["grid"] != r["grid"] {
                diff.push("global size");
            }
            if !l["block"].is_null() && l["block"] != r["workgroup"] {
                diff.push("local size");
            }
            let captured_args = r["args"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            for (axis, kind) in ["x", "y", "z"].iter().enumerate() {
                let kind = format!("hidden_global_offset_{kind}");
                if let Some(c) = captured_args.iter().find(|c| c["kind"] == kind.as_str()) {
                    if c["value"] != l["offset"][axis] {
                        diff.push("global offset");
                    }
                }
            }
            let kernarg = r["kernarg"].as_str().unwrap_or("");
            for (index, w) in l["args"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .enumerate()
            {
                if w.is_null() {
                    continue;
                }
                let Some(c) = captured_args.iter().find(|c| {
                    c["index"] == index && !c["kind"].as_str().unwrap_or("").starts_with("hidden_")
                }) else {
                    diff.push("an argument the capture does not decode");
                    continue;
                };
                let kind = c["kind"].as_str().unwrap_or("");
                if w["local"] == true {
                    if kind == "dynamic_shared_pointer" {
                        a.locals += 1;
                    } else {
                        diff.push("a local buffer argument");
                    }
                } else if kind == "global_buffer" {
                    a.buffers += 1;
                } else if let (Some(hex), Some(off), Some(size)) =
                    (w["hex"].as_str(), c["offset"].as_u64(), c["size"].as_u64())
                {
                    let (off, size) = (off as usize * 2, size as usize * 2);
                    if w["size"].as_u64() == c["size"].as_u64()
                        && kernarg.get(off..off + size.min(hex.len()))
                            == Some(&hex[..size.min(hex.len())])
                    {
                        a.values += 1;
                    } else {
                        diff.push("an argument value");
                    }
                }
            }
            if !diff.is_empty() {
                diff.dedup();
                problems.push(format!(
                    "{target} #{i}: {} differ between the enqueue {l} and the dispatch {r}",
                    diff.join(", ")
                ));
            }
        }
        a.enqueues += want.len().min(got.len());
        a.per_target.insert(target.clone(), want.len());
    }
    if problems.is_empty() {
        Ok(a)
    } else {
        problems.truncate(10);
        Err(problems.join("\n"))
    }
}

/// The comparison on a run: every enqueue the witness saw is captured and nothing else is.
fn check_witness(run: &Run, targets: &str) -> Agreement {
    assert_eq!(
        run.witness_logs,
        1,
        "one witness log expected: {}",
        run.shown()
    );
    let a = compare_witness(&run.witness, &run.records).unwrap_or_else(|e| {
        panic!(
            "on {targets} the witness and the capture differ:\n{e}\n{}",
            run.shown()
        )
    });
    assert_eq!(a.failed, 0, "{a:?}: {}", run.shown());
    assert!(a.enqueues > 0, "nothing witnessed: {}", run.shown());
    a
}
