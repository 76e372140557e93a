//! Findings are reasons: a record's `reasons` list carries the code of every
//! finding on its arguments that reports a problem (pointer findings other
//! than `pointer_in_allocation` and `pointer_null`, hidden-argument
//! mismatches), besides the packet's own reason codes, in every report
//! (`inspect` JSONL, table, CSV, Chrome trace, stats, rocpd). `status` stays
//! as captured. The codes are added when the capture is read, so a capture
//! written before they were (`tests/fixtures/capture-2.1-findings.sgcap`)
//! shows them too.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use softgpu_hsa::aql::{PacketRecord, Reason, ReasonSet, Status};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass, KernargSubmit,
    KernelArgSources, WriterOptions,
};
use softgpu_hsa::code_object::{KernelArg, KernelMetadata};
use softgpu_hsa::kernargs::{ArgFinding, KernelSources, PointerFinding};

const KO: u64 = 0x5000;
const KERNARG: u64 = 0x7000_0000_0000;
const A: u64 = 0x7f00_0000_1000;
const B: u64 = 0x7f00_0000_9000;
const C: u64 = 0x7f00_0001_1000;

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("finding_reasons");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.sgcap"));
    let _ = std::fs::remove_file(&p);
    p
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capture-2.1-findings.sgcap")
}

fn header() -> CaptureHeader {
    CaptureHeader {
        pid: 4242,
        start_unix_ns: 1,
        mode: "virtual".into(),
        agents: vec![
            AgentDesc {
                index: 0,
                kind: AgentKind::Cpu,
                name: "cpu".into(),
                target: None,
            },
            AgentDesc {
                index: 1,
                kind: AgentKind::Gpu,
                name: "gfx90a".into(),
                target: Some("gfx90a".into()),
            },
        ],
    }
}

/// A 1-D dispatch of `probe` over `grid` work-items in workgroups of 64.
fn dispatch_raw(grid: u32) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(&(2u16 | (2 << 9) | (2 << 11)).to_le_bytes());
    b[2..4].copy_from_slice(&1u16.to_le_bytes());
    b[4..6].copy_from_slice(&64u16.to_le_bytes());
    b[6..8].copy_from_slice(&1u16.to_le_bytes());
    b[8..10].copy_from_slice(&1u16.to_le_bytes());
    b[12..16].copy_from_slice(&grid.to_le_bytes());
    b[16..20].copy_from_slice(&1u32.to_le_bytes());
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    b[32..40].copy_from_slice(&KO.to_le_bytes());
    b[40..48].copy_from_slice(&KERNARG.to_le_bytes());
    b[56..64].copy_from_slice(&0x9000u64.to_le_bytes());
    b
}

fn barrier_raw() -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(&(3u16 | (1 << 8) | (2 << 9) | (2 << 11)).to_le_bytes());
    b[56..64].copy_from_slice(&0x9000u64.to_le_bytes());
    b
}

fn arg(offset: u64, size: u64, kind: &str) -> KernelArg {
    KernelArg {
        offset,
        size,
        value_kind: kind.into(),
        address_space: (kind == "global_buffer").then(|| "global".into()),
        ..KernelArg::default()
    }
}

/// `probe(float* a, float const* b, float* c, int n)` with a v5 hidden block
/// count: 40 bytes.
fn probe_sources() -> KernelArgSources {
    KernelArgSources {
        kernel_object: KO,
        metadata: KernelMetadata {
            symbol: "_Z5probePfPKfS_i.kd".into(),
            kernarg_segment_size: 40,
            args: vec![
                arg(0, 8, "global_buffer"),
                arg(8, 8, "global_buffer"),
                arg(16, 8, "global_buffer"),
                arg(24, 4, "by_value"),
                arg(32, 4, "hidden_block_count_x"),
            ],
            ..KernelMetadata::default()
        },
        sources: KernelSources {
            symbol: "_Z5probePfPKfS_i.kd".into(),
            signature: Some("probe(float*, float const*, float*, int)".into()),
            names: Some(vec![
                Some("a".into()),
                Some("b".into()),
                Some("c".into()),
                Some("n".into()),
            ]),
        },
    }
}

/// The block of case `n` (the checker reads the case from `n`), with
/// `blocks` as the hidden block count.
fn block(n: i32, blocks: u32) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b[0..8].copy_from_slice(&A.to_le_bytes());
    b[8..16].copy_from_slice(&B.to_le_bytes());
    b[16..24].copy_from_slice(&C.to_le_bytes());
    b[24..28].copy_from_slice(&n.to_le_bytes());
    b[32..36].copy_from_slice(&blocks.to_le_bytes());
    b
}

fn in_alloc(allocation: u64) -> PointerFinding {
    PointerFinding::InAllocation {
        allocation,
        offset: 0,
        remaining: 4096,
    }
}

/// The runtime's findings per case: the pointers a, b and c.
fn findings(case: i32) -> [PointerFinding; 3] {
    let uaf = PointerFinding::UseAfterFree {
        allocation: 4,
        offset: 16,
        freed_at: 9,
    };
    let past = PointerFinding::PastEnd {
        allocation: 5,
        size: 4000,
        past: 0,
    };
    match case {
        // Clean: two live allocations and a null (an optional buffer).
        0 => [in_alloc(3), PointerFinding::Null, in_alloc(6)],
        1 => [in_alloc(3), uaf, in_alloc(6)],
        // Arguments out of the codes' order, one code twice.
        2 => [PointerFinding::PageableHost, past.clone(), past],
        3 => [
            PointerFinding::NoAccess {
                allocation: 7,
                offset: 0,
                owner: Some(2),
                agent: 1,
            },
            PointerFinding::Unknown,
            in_alloc(6),
        ],
        _ => [in_alloc(3), in_alloc(3), uaf],
    }
}

fn checker() -> softgpu_hsa::capture::ArgCheck {
    Box::new(|input| {
        let case = i32::from_le_bytes(input.block[24..28].try_into().unwrap());
        let addrs = [A, B, C];
        findings(case)
            .into_iter()
            .enumerate()
            .map(|(i, finding)| ArgFinding {
                index: i,
                address: addrs[i],
                finding,
            })
            .collect()
    })
}

/// One record per row: `(raw, status, captured reasons, block)`.
type Row = ([u8; 64], Status, ReasonSet, Option<Vec<u8>>);

fn rows() -> Vec<Row> {
    let v = Status::Validated;
    let none = ReasonSet(0);
    let bit = |r: Reason| ReasonSet(1 << (r as u8));
    let g = 64 * 16;
    vec![
        // 0: clean (null is no problem).
        (dispatch_raw(g), v, none, Some(block(0, 16))),
        // 1: a use after free.
        (dispatch_raw(g), v, none, Some(block(1, 16))),
        // 2: pageable host memory, past the end twice.
        (dispatch_raw(g), v, none, Some(block(2, 16))),
        // 3: no access, unknown, and a hidden block count of 15 for 16.
        (dispatch_raw(g), v, none, Some(block(3, 15))),
        // 4: rejected for its workgroup, with a use after free.
        (
            dispatch_raw(g),
            Status::Rejected,
            bit(Reason::WorkgroupSizeExceedsKernelMax),
            Some(block(4, 16)),
        ),
        // 5: a barrier.
        (barrier_raw(), v, none, None),
        // 6: a dispatch of a blit, which carries its finding, and a use after free.
        (
            dispatch_raw(g),
            v,
            bit(Reason::RuntimeBlitKernelNotExecuted),
            Some(block(1, 16)),
        ),
    ]
}

/// What each record's `reasons` must be.
fn want_reasons() -> Vec<Value> {
    vec![
        json!([]),
        json!(["pointer_use_after_free"]),
        json!(["pointer_past_end", "pointer_pageable_host"]),
        json!([
            "pointer_no_access",
            "pointer_unknown",
            "hidden_arg_mismatch"
        ]),
        json!([
            "workgroup_size_exceeds_kernel_max",
            "pointer_use_after_free"
        ]),
        json!([]),
        json!(["runtime_blit_kernel_not_executed", "pointer_use_after_free"]),
    ]
}

/// The records of [`rows`] through the capture writer, with the checker of
/// [`findings`]. `tests/fixtures/capture-2.1-findings.sgcap` holds the same
/// capture, written before `reasons` carried finding codes.
fn findings_capture(path: &Path) {
    // A small ring keeps the file (and the fixture) small.
    let options = WriterOptions {
        ring_capacity: 8,
        ..WriterOptions::default()
    };
    let w =
        CaptureWriter::create_with(path, header(), Box::new(|_| KernargClass::Softgpu), options)
            .unwrap();
    w.add_code_object(vec![(KO, "_Z5probePfPKfS_i.kd".into())]);
    w.add_kernel_args(vec![probe_sources()]);
    assert!(w.set_arg_checker(checker()));
    let mut q = w.register_queue(1, 1, 64, 0);
    for (i, (raw, status, reasons, block)) in rows().into_iter().enumerate() {
        let i = i as u64;
        let r = PacketRecord {
            queue_id: 1,
            packet_index: i,
            raw,
            status,
            reasons,
            observed_ns: 1000 + i * 10,
            done_ns: 1005 + i * 10,
            thread: 7,
        };
        match block {
            Some(b) => q.push_with_kernarg(
                &r,
                KernargSubmit::Bytes {
                    bytes: &b,
                    segment_size: 40,
                },
            ),
            None => q.push(&r),
        }
    }
    w.finish(0, 1).unwrap();
}

fn cli(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn jsonl(path: &Path) -> Vec<Value> {
    cli(&["inspect", path.to_str().unwrap(), "--format", "jsonl"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fresh(name: &str) -> PathBuf {
    let p = tmp(name);
    findings_capture(&p);
    p
}

/// The JSONL `reasons` carry the problem codes after the packet's own, each
/// once, in the order of the codes; `arg_findings` and `hidden_mismatches`
/// keep the detail; `status` and `label` stay as captured.
fn check_jsonl(recs: &[Value]) {
    let want = want_reasons();
    assert_eq!(recs.len(), want.len());
    for (i, (r, w)) in recs.iter().zip(&want).enumerate() {
        assert_eq!(&r["reasons"], w, "record {i}: {r}");
    }
    for (i, r) in recs.iter().enumerate() {
        let (status, label) = if i == 4 {
            ("rejected", "diagnostic_rejected")
        } else {
            ("validated", "diagnostic_complete_no_execution")
        };
        assert_eq!(r["status"], status, "record {i}: {r}");
        assert_eq!(r["label"], label, "record {i}: {r}");
    }
    // The detail stays where it was.
    assert_eq!(recs[1]["arg_findings"][1]["code"], "pointer_use_after_free");
    assert_eq!(recs[1]["arg_findings"][1]["offset"], 16);
    assert_eq!(recs[0]["arg_findings"][1]["code"], "pointer_null");
    assert_eq!(recs[3]["hidden_mismatches"][0]["expected"], 16);
    assert_eq!(recs[2]["arg_findings"].as_array().unwrap().len(), 3);
}

#[test]
fn jsonl_reasons_carry_the_code_of_every_problem_finding_and_status_stays() {
    check_jsonl(&jsonl(&fresh("jsonl")));
}

#[test]
fn a_capture_written_before_findings_were_reasons_shows_them_when_read() {
    // The fixture was written by the writer of commit ba76d01: its Packet
    // frames' reason bits hold the packet's reasons only.
    let cap = softgpu_hsa::capture::read_file(&fixture()).unwrap();
    assert_eq!(cap.version, (2, 1));
    assert!(cap.complete);
    let bits: Vec<u64> = cap.records.iter().map(|r| r.reasons.0).collect();
    let want_bits: Vec<u64> = rows().iter().map(|r| r.2.0).collect();
    assert_eq!(bits, want_bits);
    let old = jsonl(&fixture());
    check_jsonl(&old);
    // And it reads as the same capture written today does.
    assert_eq!(old, jsonl(&fresh("fixture_twin")));
}

/// The table's REASONS column: codes joined by commas, `-` for none.
#[test]
fn the_table_shows_the_finding_codes_in_its_reasons_column() {
    for path in [fresh("table"), fixture()] {
        let table = cli(&["inspect", path.to_str().unwrap()]);
        let lines: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("SEQ"))
            .skip(1)
            .take(7)
            .collect();
        assert_eq!(lines.len(), 7, "{table}");
        for (i, (line, want)) in lines.iter().zip(want_reasons()).enumerate() {
            let codes: Vec<&str> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            let col = if codes.is_empty() {
                "-".to_string()
            } else {
                codes.join(",")
            };
            assert!(
                line.ends_with(&format!("  {col}")),
                "record {i}: REASONS {col}:\n{line}\n{table}"
            );
        }
        assert!(lines[1].contains(" validated "), "{table}");
        assert!(
            lines[1].contains("(freed alloc 4 +16, freed at #9)"),
            "{table}"
        );
    }
}

/// The CSV's `Reasons` column: codes joined by `;`.
#[test]
fn the_csv_shows_the_finding_codes_in_its_reasons_column() {
    for path in [fresh("csv"), fixture()] {
        let text = cli(&["inspect", path.to_str().unwrap(), "--format", "csv"]);
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let head = rd.headers().unwrap().clone();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let (reasons, status) = (col("Reasons"), col("Status"));
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 7);
        for (i, (row, want)) in rows.iter().zip(want_reasons()).enumerate() {
            let codes: Vec<&str> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            assert_eq!(&row[reasons], codes.join(";"), "record {i}: {row:?}");
        }
        assert_eq!(&rows[1][status], "validated");
        assert_eq!(&rows[4][status], "rejected");
    }
}

/// The Chrome trace's `args.reasons` and the stats' `Findings` count the same.
#[test]
fn chrome_trace_and_stats_count_the_finding_codes() {
    let path = fresh("chrome");
    let p = path.to_str().unwrap();
    let chrome: Value = serde_json::from_str(&cli(&["inspect", p, "--format", "chrome"])).unwrap();
    let events: Vec<&Value> = chrome["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    assert_eq!(events.len(), 7);
    for (i, (e, want)) in events.iter().zip(want_reasons()).enumerate() {
        assert_eq!(e["args"]["reasons"], want, "record {i}: {e}");
    }
    let stats = cli(&["inspect", p, "--format", "stats"]);
    let mut rd = csv::Reader::from_reader(stats.as_bytes());
    let head = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let at = |name: &str| row[head.iter().position(|h| h == name).unwrap()].to_string();
    assert_eq!(at("Calls"), "6", "{stats}");
    assert_eq!(at("Rejected"), "1", "{stats}");
    // Every dispatch but the clean one has a reason.
    assert_eq!(at("Findings"), "5", "{stats}");
}

/// The rocpd database's `extdata.reasons`, dispatch by dispatch.
#[test]
fn the_rocpd_extdata_reasons_carry_the_finding_codes() {
    let path = fresh("rocpd");
    let db = path.with_extension("db");
    let _ = std::fs::remove_file(&db);
    cli(&[
        "inspect",
        path.to_str().unwrap(),
        "--format",
        "rocpd",
        "--output",
        db.to_str().unwrap(),
    ]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut st = conn
        .prepare(
            "SELECT E.extdata FROM rocpd_kernel_dispatch K JOIN rocpd_event E ON K.event_id = E.id
             ORDER BY K.id",
        )
        .unwrap();
    let got: Vec<Value> = st
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|e| serde_json::from_str(&e.unwrap()).unwrap())
        .collect();
    // Every record but the barrier (5) is a dispatch.
    let mut want = want_reasons();
    want.remove(5);
    assert_eq!(got.len(), want.len());
    for (i, (e, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(&e["reasons"], w, "dispatch {i}: {e}");
    }
    assert_eq!(got[1]["status"], "validated");
}
