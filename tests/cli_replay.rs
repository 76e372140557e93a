//! `softgpu replay`: offline re-parse of every captured packet, exit codes 0/1/2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use softgpu_hsa::abi::{FenceScope, HsaSignal, KernelDispatchPacket, PacketType};
use softgpu_hsa::aql::parse::{encode_kernel_dispatch, make_header};
use softgpu_hsa::aql::{PacketRecord, Reason, ReasonSet, Status, parse_supported_packet};
use softgpu_hsa::capture::{AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass};

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_replay");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn replay(file: &Path, format: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("replay")
        .arg(file)
        .args(["--format", format])
        .output()
        .unwrap()
}

fn dispatch(grid_x: u32, kernarg: u64) -> [u8; 64] {
    encode_kernel_dispatch(&KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            true,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: 64,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: grid_x,
        grid_size_y: 1,
        grid_size_z: 1,
        kernel_object: 0x4000,
        kernarg_address: kernarg,
        completion_signal: HsaSignal { handle: 0x100 },
        ..Default::default()
    })
}

fn barrier_or() -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(
        &make_header(
            PacketType::BARRIER_OR,
            true,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        )
        .to_le_bytes(),
    );
    b
}

/// What the parser says about `raw`, as a capture would record it.
fn honest(raw: [u8; 64]) -> (Status, ReasonSet) {
    match parse_supported_packet(&raw) {
        Ok(_) => (Status::Validated, ReasonSet(0)),
        Err(rs) => (Status::Rejected, rs),
    }
}

fn write(name: &str, recs: &[([u8; 64], Status, ReasonSet)]) -> PathBuf {
    let path = dir().join(format!("{name}.sgcap"));
    let header = CaptureHeader {
        pid: 1,
        start_unix_ns: 0,
        mode: "virtual".into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    };
    let w = CaptureWriter::create(&path, header, Box::new(|_| KernargClass::Softgpu)).unwrap();
    let mut q = w.register_queue(3, 1, 64, 0);
    for (i, (raw, status, reasons)) in recs.iter().enumerate() {
        q.push(&PacketRecord {
            queue_id: 3,
            packet_index: i as u64,
            raw: *raw,
            status: *status,
            reasons: *reasons,
            observed_ns: 0,
            done_ns: 0,
            thread: 1,
        });
    }
    w.finish(0, 0).unwrap();
    path
}

fn with(r: Reason) -> ReasonSet {
    let mut s = ReasonSet::default();
    s.insert(r);
    s
}

fn matching_capture(name: &str) -> PathBuf {
    let valid = dispatch(256, 0x7000);
    let bad = dispatch(0, 0x7000);
    let (vs, vr) = honest(valid);
    let (bs, br) = honest(bad);
    assert_eq!(vs, Status::Validated);
    assert_eq!(bs, Status::Rejected);
    let mut br_plus_runtime = br;
    br_plus_runtime.insert(Reason::CompletionSignalUnknown);
    write(
        name,
        &[
            (valid, vs, vr),
            (barrier_or(), Status::Validated, ReasonSet(0)),
            (bad, bs, br),
            // Valid bytes rejected by the runtime for a signal it did not know:
            // the bytes alone cannot show that, so it is excluded and matches.
            (
                valid,
                Status::Rejected,
                with(Reason::CompletionSignalUnknown),
            ),
            (bad, Status::Rejected, br_plus_runtime),
        ],
    )
}

#[test]
fn a_capture_that_re_parses_to_its_own_classification_exits_0() {
    let path = matching_capture("all_match");
    let out = replay(&path, "table");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(text.lines().last().unwrap(), "5 records, 5 match, 0 differ");
    assert!(!text.contains("DIFFER"), "{text}");
    assert!(
        text.contains("not replayable: [completion_signal_unknown]"),
        "{text}"
    );
}

#[test]
fn jsonl_reports_each_comparison_and_never_trusts_a_captured_address() {
    let path = matching_capture("jsonl");
    let out = replay(&path, "jsonl");
    assert_eq!(out.status.code(), Some(0));
    let recs: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 5);
    assert!(recs.iter().all(|r| r["match"] == true));
    // The capture classified the kernarg as the shim's; offline it is opaque.
    assert_eq!(recs[0]["kernarg_class"], "foreign_opaque");
    assert_eq!(recs[0]["kernarg_address"], "0x7000");
    assert!(recs[1]["kernarg_class"].is_null());
    assert_eq!(recs[2]["captured_status"], "rejected");
    assert_eq!(
        recs[2]["replayed_reasons"],
        serde_json::json!(["grid_size_zero"])
    );
    assert_eq!(recs[3]["captured_status"], "rejected");
    assert_eq!(recs[3]["replayed_status"], "validated");
    assert_eq!(
        recs[3]["excluded_reasons"],
        serde_json::json!(["completion_signal_unknown"])
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("5 records, 5 match, 0 differ"), "{err}");
}

#[test]
fn a_record_whose_bytes_do_not_give_its_classification_exits_1() {
    let bad = dispatch(0, 0);
    let valid = dispatch(64, 0);
    let path = write(
        "differs",
        &[
            (valid, Status::Validated, ReasonSet(0)),
            // Claims validated, but grid 0 is rejected.
            (bad, Status::Validated, ReasonSet(0)),
            // Rejected, but for a reason the bytes do not give.
            (bad, Status::Rejected, with(Reason::WorkgroupSizeZero)),
        ],
    );
    let out = replay(&path, "table");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().last().unwrap(), "3 records, 1 match, 2 differ");
    assert_eq!(text.matches("DIFFER").count(), 2, "{text}");
    assert!(
        text.contains("captured reasons [workgroup_size_zero], replayed [grid_size_zero]"),
        "{text}"
    );
    let out = replay(&path, "jsonl");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_unreadable_capture_exits_2() {
    let p = dir().join("garbage.sgcap");
    std::fs::write(&p, [0xffu8; 100]).unwrap();
    let out = replay(&p, "table");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("file {}: offset 0:", p.display())),
        "{err}"
    );
    let out = replay(&dir().join("missing.sgcap"), "jsonl");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_cut_capture_is_replayed_with_a_warning() {
    let path = matching_capture("cut_src");
    let data = std::fs::read(&path).unwrap();
    let cut = dir().join("cut.sgcap");
    std::fs::write(&cut, &data[..data.len() - 100]).unwrap();
    let out = replay(&cut, "table");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("incomplete"));
    // The cut frames' records are still in the capture's live ring: all
    // five are replayed.
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().last().unwrap(),
        "5 records, 5 match, 0 differ (capture incomplete)"
    );
}

#[test]
fn the_table_says_every_non_null_kernarg_is_foreign_opaque() {
    // The capture classified the kernargs as the shim's own; offline nothing
    // is dereferenced, so the default output must say foreign_opaque.
    let path = write(
        "kernarg_table",
        &[
            (dispatch(256, 0x7000), Status::Validated, ReasonSet(0)),
            (dispatch(256, 0), Status::Validated, ReasonSet(0)),
            (barrier_or(), Status::Validated, ReasonSet(0)),
        ],
    );
    let out = replay(&path, "table");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let col = lines[0].find("KERNARG").expect("a KERNARG column");
    let cell = |l: &str| l[col..].split_whitespace().next().unwrap_or("").to_string();
    assert_eq!(cell(lines[1]), "foreign_opaque", "{text}");
    assert_eq!(cell(lines[2]), "null", "{text}");
    assert_eq!(cell(lines[3]), "-", "{text}");
}

/// `replay --help` names every reason it leaves out of the comparison: each
/// runtime-level reason of the one reason list (and no parser-level one),
/// so adding a reason that needs the runtime's state fails here until the
/// help says so.
#[test]
fn help_names_every_reason_left_out_of_the_comparison() {
    let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(["replay", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout)
        .unwrap()
        .replace(['\n', ' '], "");
    for r in Reason::ALL {
        let named = help.contains(r.code());
        if r.is_runtime() {
            assert!(
                named,
                "replay --help does not name {} as excluded",
                r.code()
            );
        } else {
            assert!(
                !named,
                "replay --help names the parser-level {} as excluded",
                r.code()
            );
        }
    }
}
