//! Labels of observe-mode captures: the shim captured each packet before
//! forwarding the doorbell to a real ROCr, which ran the kernels, so no report
//! of such a capture may carry a diagnostic completion label. Captures of the
//! other modes keep the diagnostic labels.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use softgpu_hsa::abi::{FenceScope, HsaSignal, KernelDispatchPacket, PacketType};
use softgpu_hsa::aql::parse::{encode_kernel_dispatch, make_header};
use softgpu_hsa::aql::{
    LABEL_COMPLETE, LABEL_NOT_KERNEL_SUCCESS, LABEL_OBSERVED, LABEL_REJECTED, PacketRecord,
    ReasonSet, Status, parse_supported_packet,
};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass, MODE_OBSERVE,
};

/// Every label an observe-mode report must never show.
const DIAGNOSTIC_LABELS: [&str; 3] = [LABEL_COMPLETE, LABEL_NOT_KERNEL_SUCCESS, LABEL_REJECTED];

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_observe");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn softgpu(verb: &str, file: &Path, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg(verb)
        .arg(file)
        .args(["--format", format])
        .output()
        .unwrap()
}

/// Runs `verb` and returns stdout followed by stderr, after checking exit 0.
fn text(verb: &str, file: &Path, format: &str) -> String {
    let out = softgpu(verb, file, format);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "softgpu {verb} --format {format}: {all}"
    );
    all
}

fn assert_no_diagnostic_label(what: &str, text: &str) {
    for l in DIAGNOSTIC_LABELS {
        assert!(
            !text.contains(l),
            "{what} of an observe-mode capture contains {l}:\n{text}"
        );
    }
}

fn dispatch(grid_x: u32) -> [u8; 64] {
    encode_kernel_dispatch(&KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            true,
            FenceScope::AGENT,
            FenceScope::SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: 64,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: grid_x,
        grid_size_y: 1,
        grid_size_z: 1,
        kernel_object: 0x1000,
        kernarg_address: 0x7000_0000,
        completion_signal: HsaSignal { handle: 0xabc0 },
        ..Default::default()
    })
}

fn barrier_and() -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(
        &make_header(
            PacketType::BARRIER_AND,
            false,
            FenceScope::NONE,
            FenceScope::SYSTEM,
        )
        .to_le_bytes(),
    );
    b
}

/// Four records, each classified as the parser classifies its bytes (so
/// `replay` matches them all): two validated dispatches, a validated
/// barrier-AND and a dispatch rejected for its zero grid.
fn write_capture(name: &str, mode: &str) -> PathBuf {
    let path = dir().join(format!("{name}.sgcap"));
    let header = CaptureHeader {
        pid: 4242,
        start_unix_ns: 1,
        mode: mode.into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    };
    let w =
        CaptureWriter::create(&path, header, Box::new(|_| KernargClass::ForeignOpaque)).unwrap();
    w.add_code_object(vec![(0x1000, "_Z6vecAddPfS_S_i.kd".into())]);
    let mut q = w.register_queue(5, 1, 64, 0);
    for (i, raw) in [dispatch(1024), barrier_and(), dispatch(0), dispatch(256)]
        .into_iter()
        .enumerate()
    {
        let (status, reasons) = match parse_supported_packet(&raw) {
            Ok(_) => (Status::Validated, ReasonSet::default()),
            Err(rs) => (Status::Rejected, rs),
        };
        q.push(&PacketRecord {
            queue_id: 5,
            packet_index: i as u64,
            raw,
            status,
            reasons,
            observed_ns: 100 + i as u64,
            done_ns: 200 + i as u64,
            thread: 7,
        });
    }
    w.finish(0, 1).unwrap();
    path
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn observe_jsonl_labels_every_record_observed_and_never_diagnostic() {
    assert_eq!(MODE_OBSERVE, "observe");
    assert_eq!(LABEL_OBSERVED, "observed_forwarded_to_runtime");
    let path = write_capture("observe_jsonl", MODE_OBSERVE);
    let out = text("inspect", &path, "jsonl");
    assert_no_diagnostic_label("inspect --format jsonl", &out);
    let recs = jsonl(&out);
    assert_eq!(recs.len(), 4);
    for r in &recs {
        assert_eq!(r["label"], LABEL_OBSERVED, "{r}");
        assert!(r["result_label"].is_null(), "{r}");
    }
    // Status and reasons stay as captured.
    let statuses: Vec<&str> = recs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        ["validated", "validated", "rejected", "validated"],
        "{out}"
    );
    assert_eq!(recs[2]["reasons"], serde_json::json!(["grid_size_zero"]));
    assert_eq!(recs[0]["reasons"], serde_json::json!([]));
}

#[test]
fn observe_table_shows_the_mode_and_the_observe_summary() {
    let path = write_capture("observe_table", MODE_OBSERVE);
    let out = text("inspect", &path, "table");
    assert_no_diagnostic_label("inspect --format table", &out);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 7, "{out}");
    assert!(lines[0].contains("mode observe"), "{out}");
    assert_eq!(
        lines[6],
        "4 records: 3 dispatches observed and forwarded to the real runtime (kernels ran there), 1 with findings, 1 barriers; capture complete"
    );
}

#[test]
fn observe_csv_and_chrome_label_every_record_observed() {
    let path = write_capture("observe_csv", MODE_OBSERVE);
    let out = text("inspect", &path, "csv");
    assert_no_diagnostic_label("inspect --format csv", &out);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(lines[0].contains(",Status,Label,Reasons,"), "{}", lines[0]);
    for (row, status) in lines[1..]
        .iter()
        .zip(["validated", "validated", "rejected", "validated"])
    {
        assert!(
            row.contains(&format!(",{status},{LABEL_OBSERVED},")),
            "{row}"
        );
    }

    let chrome = text("inspect", &path, "chrome");
    assert_no_diagnostic_label("inspect --format chrome", &chrome);
    let doc: Value = serde_json::from_str(chrome.trim()).unwrap();
    let events: Vec<&Value> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    assert_eq!(events.len(), 4);
    for e in events {
        assert_eq!(e["args"]["label"], LABEL_OBSERVED, "{e}");
    }
}

#[test]
fn replay_of_an_observe_capture_exits_0_without_diagnostic_labels() {
    let path = write_capture("observe_replay", MODE_OBSERVE);
    for format in ["table", "jsonl"] {
        let out = text("replay", &path, format);
        assert_no_diagnostic_label(&format!("replay --format {format}"), &out);
        assert!(out.contains("4 records, 4 match, 0 differ"), "{out}");
    }
}

#[test]
fn virtual_and_intercept_captures_keep_the_diagnostic_labels() {
    for mode in ["virtual", "intercept"] {
        let path = write_capture(&format!("{mode}_labels"), mode);
        let out = text("inspect", &path, "jsonl");
        assert!(!out.contains(LABEL_OBSERVED), "{out}");
        let recs = jsonl(&out);
        assert_eq!(recs.len(), 4);
        for r in &recs {
            match r["status"].as_str().unwrap() {
                "validated" => {
                    assert_eq!(r["label"], LABEL_COMPLETE, "{r}");
                    assert_eq!(r["result_label"], LABEL_NOT_KERNEL_SUCCESS, "{r}");
                }
                "rejected" => {
                    assert_eq!(r["label"], LABEL_REJECTED, "{r}");
                    assert!(r["result_label"].is_null(), "{r}");
                }
                s => panic!("status {s}"),
            }
        }

        let table = text("inspect", &path, "table");
        assert!(!table.contains(LABEL_OBSERVED), "{table}");
        assert!(
            table
                .lines()
                .next()
                .unwrap()
                .contains(&format!("mode {mode}"))
        );
        assert_eq!(
            table.lines().last().unwrap(),
            "4 records: 2 dispatches validated (diagnostic_complete_no_execution, not_kernel_success), 1 rejected, 1 barriers; capture complete"
        );

        let csv = text("inspect", &path, "csv");
        assert!(!csv.contains(LABEL_OBSERVED), "{csv}");
        assert!(
            csv.contains(",validated,diagnostic_complete_no_execution,"),
            "{csv}"
        );
        assert!(
            csv.contains(",rejected,diagnostic_rejected,grid_size_zero,"),
            "{csv}"
        );
    }
}
