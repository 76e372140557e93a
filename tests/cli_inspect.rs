//! `softgpu inspect` on captures written by the real writer: every JSONL field,
//! the table and CSV forms, cut files, and files that are not captures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use softgpu_hsa::abi::{FenceScope, HsaSignal, KernelDispatchPacket, PacketType};
use softgpu_hsa::aql::parse::{encode_kernel_dispatch, make_header};
use softgpu_hsa::aql::{PacketRecord, ReasonSet, Status};
use softgpu_hsa::capture::format::{FRAME_CRC_LEN, FRAME_HEAD_LEN, PREAMBLE_LEN, kind};
use softgpu_hsa::capture::{AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass};

/// `(offset, kind, total length)` of every frame of a capture.
fn frames(data: &[u8]) -> Vec<(usize, u16, usize)> {
    let mut out = Vec::new();
    let mut pos = PREAMBLE_LEN;
    while pos + FRAME_HEAD_LEN <= data.len() {
        let k = u16::from_le_bytes([data[pos], data[pos + 1]]);
        let len = u32::from_le_bytes(data[pos + 2..pos + 6].try_into().unwrap()) as usize;
        let total = FRAME_HEAD_LEN + len + FRAME_CRC_LEN;
        out.push((pos, k, total));
        pos += total;
    }
    out
}

/// The first PacketBatch frame: `(offset, total length)`.
fn first_batch(data: &[u8]) -> (usize, usize) {
    frames(data)
        .into_iter()
        .find(|f| f.1 == kind::PACKET_BATCH)
        .map(|f| (f.0, f.2))
        .unwrap()
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_inspect");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn softgpu(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(&args[..1])
        .arg(file)
        .args(&args[1..])
        .output()
        .unwrap()
}

fn dispatch(kernel_object: u64, kernarg: u64, grid_x: u32, signal: u64) -> [u8; 64] {
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
        private_segment_size: 16,
        group_segment_size: 2048,
        kernel_object,
        kernarg_address: kernarg,
        completion_signal: HsaSignal { handle: signal },
        ..Default::default()
    })
}

fn barrier_and(signal: u64) -> [u8; 64] {
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
    b[56..64].copy_from_slice(&signal.to_le_bytes());
    b
}

fn rec(i: u64, raw: [u8; 64], status: Status, reasons: u64) -> PacketRecord {
    PacketRecord {
        queue_id: 5,
        packet_index: i,
        raw,
        status,
        reasons: ReasonSet(reasons),
        observed_ns: 100 + i,
        done_ns: 200 + i,
        thread: 4321,
    }
}

/// Three records: a validated dispatch of a known kernel with the shim's
/// kernargs, a validated barrier-AND, and a rejected dispatch (grid 0) of an
/// unknown kernel object with foreign kernargs.
fn write_sample(name: &str) -> PathBuf {
    let path = dir().join(format!("{name}.sgcap"));
    let header = CaptureHeader {
        pid: 777,
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
    };
    let w = CaptureWriter::create(
        &path,
        header,
        Box::new(|a| {
            if a == 0x7000_0000 {
                KernargClass::Softgpu
            } else {
                KernargClass::ForeignOpaque
            }
        }),
    )
    .unwrap();
    w.add_code_object(vec![(0x1000, "_Z6vecAddPfS_S_i.kd".into())]);
    let mut q = w.register_queue(5, 1, 64, 0);
    q.push(&rec(
        0,
        dispatch(0x1000, 0x7000_0000, 1024, 0xabc0),
        Status::Validated,
        0,
    ));
    q.push(&rec(1, barrier_and(0), Status::Validated, 0));
    q.push(&rec(
        2,
        dispatch(0x2040, 0x5550, 0, 0xdef0),
        Status::Rejected,
        1 << 2, // grid_size_zero
    ));
    w.finish(0, 1).unwrap();
    path
}

fn jsonl(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const INTERFACE_FIELDS: &[&str] = &[
    "seq",
    "pid",
    "queue_id",
    "packet_index",
    "type",
    "status",
    "label",
    "reasons",
    "header",
    "dimensions",
    "workgroup",
    "grid",
    "private_segment_size",
    "group_segment_size",
    "kernel_object",
    "kernarg_address",
    "completion_signal",
    "kernarg_class",
    "kernel_symbol",
    "kernel_name",
    "target",
    "raw",
];

#[test]
fn jsonl_has_every_interface_field_with_the_right_values() {
    let path = write_sample("golden");
    let out = softgpu(&["inspect", "--format", "jsonl"], &path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "a complete capture prints no warning"
    );
    let recs = jsonl(&out);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        let obj = r.as_object().unwrap();
        for f in INTERFACE_FIELDS {
            assert!(obj.contains_key(*f), "field {f} missing in {r}");
        }
        let keys: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
        for k in keys {
            assert!(
                INTERFACE_FIELDS.contains(&k)
                    || [
                        "result_label",
                        "observed_ns",
                        "done_ns",
                        "thread",
                        "sgpr_count",
                        "vgpr_count",
                        "agpr_count",
                        "static_group_segment_size",
                        "static_private_segment_size",
                        // 2.1, only for dispatches with argument information.
                        "kernarg_state",
                        "kernarg_unreadable",
                        "kernarg_segment_size",
                        "kernarg",
                        "call",
                        "args",
                        "arg_disagreements",
                        "arg_findings",
                        "hidden_mismatches",
                    ]
                    .contains(&k),
                "unexpected field {k}"
            );
        }
        assert_eq!(r["pid"], 777);
        assert_eq!(r["queue_id"], 5);
        assert_eq!(r["target"], "gfx90a");
        assert_eq!(r["thread"], 4321);
        let raw = r["raw"].as_str().unwrap();
        assert_eq!(raw.len(), 128);
        assert!(
            raw.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }

    let d = &recs[0];
    assert_eq!(d["seq"], 0);
    assert_eq!(d["packet_index"], 0);
    assert_eq!(d["type"], "kernel_dispatch");
    assert_eq!(d["status"], "validated");
    assert_eq!(d["label"], "diagnostic_complete_no_execution");
    assert_eq!(d["result_label"], "not_kernel_success");
    assert_eq!(d["reasons"], serde_json::json!([]));
    assert_eq!(
        d["header"],
        serde_json::json!({"barrier": true, "acquire_fence_scope": "agent", "release_fence_scope": "system"})
    );
    assert_eq!(d["dimensions"], 1);
    assert_eq!(d["workgroup"], serde_json::json!([64, 1, 1]));
    assert_eq!(d["grid"], serde_json::json!([1024, 1, 1]));
    assert_eq!(d["private_segment_size"], 16);
    assert_eq!(d["group_segment_size"], 2048);
    assert_eq!(d["kernel_object"], "0x1000");
    assert_eq!(d["kernarg_address"], "0x70000000");
    assert_eq!(d["completion_signal"], "0xabc0");
    assert_eq!(d["kernarg_class"], "softgpu");
    assert_eq!(d["kernel_symbol"], "_Z6vecAddPfS_S_i.kd");
    assert_eq!(d["kernel_name"], "vecAdd(float*, float*, float*, int)");
    assert_eq!(d["observed_ns"], 100);
    assert_eq!(d["done_ns"], 200);
    assert!(d["raw"].as_str().unwrap().starts_with("02130100"));

    let b = &recs[1];
    assert_eq!(b["type"], "barrier_and");
    assert_eq!(b["status"], "validated");
    assert_eq!(
        b["header"],
        serde_json::json!({"barrier": false, "acquire_fence_scope": "none", "release_fence_scope": "system"})
    );
    for f in [
        "dimensions",
        "workgroup",
        "grid",
        "private_segment_size",
        "group_segment_size",
        "kernel_object",
        "kernarg_address",
        "kernarg_class",
        "kernel_symbol",
        "kernel_name",
    ] {
        assert!(b[f].is_null(), "{f} should be null for a barrier: {}", b[f]);
    }
    assert_eq!(b["completion_signal"], "0x0");

    let r = &recs[2];
    assert_eq!(r["status"], "rejected");
    assert_eq!(r["label"], "diagnostic_rejected");
    assert!(r["result_label"].is_null());
    assert_eq!(r["reasons"], serde_json::json!(["grid_size_zero"]));
    assert_eq!(r["grid"], serde_json::json!([0, 1, 1]));
    assert_eq!(r["kernel_object"], "0x2040");
    assert_eq!(r["kernarg_class"], "foreign_opaque");
    assert!(r["kernel_symbol"].is_null());
    assert!(r["kernel_name"].is_null());
}

#[test]
fn the_table_has_a_header_line_one_line_per_record_and_a_summary() {
    let path = write_sample("table");
    let out = softgpu(&["inspect"], &path);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(
        lines[0].starts_with("capture ") && lines[0].contains("pid 777"),
        "{text}"
    );
    assert!(
        lines[1].contains("SEQ") && lines[1].contains("STATUS"),
        "{text}"
    );
    assert!(
        lines[2].contains("vecAdd(float*, float*, float*, int)"),
        "{text}"
    );
    assert!(lines[4].contains("grid_size_zero"), "{text}");
    assert_eq!(
        lines[5],
        "3 records: 1 dispatches validated (diagnostic_complete_no_execution, not_kernel_success), 1 rejected, 1 barriers; capture complete"
    );
}

#[test]
fn csv_has_a_header_row_and_quotes_demangled_names() {
    let path = write_sample("csv");
    let out = softgpu(&["inspect", "--format", "csv"], &path);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    let cols: Vec<&str> = lines[0].split(',').collect();
    for c in [
        "Kind",
        "Agent_Id",
        "Queue_Id",
        "Thread_Id",
        "Dispatch_Id",
        "Kernel_Name",
        "LDS_Block_Size",
        "Scratch_Size",
        "Workgroup_Size_X",
        "Grid_Size_Z",
        "Status",
        "Reasons",
    ] {
        assert!(cols.contains(&c), "column {c} missing: {}", lines[0]);
    }
    assert!(
        // VGPR/AGPR/SGPR columns are empty: this capture has no KernelInfo frame.
        lines[1].starts_with("KERNEL_DISPATCH,1,5,4321,0,\"vecAdd(float*, float*, float*, int)\",2048,16,,,,64,1,1,1024,1,1,"),
        "{}",
        lines[1]
    );
}

#[test]
fn a_cut_capture_is_still_listed_with_a_warning() {
    let path = write_sample("cut_src");
    let data = std::fs::read(&path).unwrap();
    let cut = dir().join("cut.sgcap");
    // Drop the trailer and half of the last packet batch frame.
    let (off, _, total) = *frames(&data)
        .iter()
        .rfind(|f| f.1 == kind::PACKET_BATCH)
        .unwrap();
    std::fs::write(&cut, &data[..off + total / 2]).unwrap();
    let out = softgpu(&["inspect", "--format", "jsonl"], &cut);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("incomplete"),
        "{err}"
    );
    assert!(err.contains(&cut.display().to_string()), "{err}");
    assert!(err.contains("cut at offset"), "{err}");
    assert!(
        err.contains("recovered from the capture's live ring"),
        "{err}"
    );
    // The cut frame's records are still in the capture's live ring.
    let recs = jsonl(&out);
    assert_eq!(recs.len(), 3);

    let out = softgpu(&["inspect"], &cut);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("capture INCOMPLETE (cut at offset"),
        "{text}"
    );
}

#[test]
fn a_file_that_is_not_a_capture_exits_2_naming_the_file_and_offset() {
    let p = dir().join("notes.txt");
    std::fs::write(&p, "these are not the packets you are looking for\n").unwrap();
    for fmt in ["table", "jsonl", "csv"] {
        let out = softgpu(&["inspect", "--format", fmt], &p);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "file {}: offset 0: not a SoftGPU capture",
                p.display()
            )),
            "{err}"
        );
    }
}

#[test]
fn a_corrupt_capture_exits_2_with_the_offset_and_a_missing_file_exits_2() {
    let path = write_sample("corrupt_src");
    let mut data = std::fs::read(&path).unwrap();
    let (first_packet, _) = first_batch(&data);
    data[first_packet + 12] ^= 1;
    let bad = dir().join("corrupt.sgcap");
    std::fs::write(&bad, &data).unwrap();
    let out = softgpu(&["inspect"], &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("offset {first_packet}: checksum mismatch")),
        "{err}"
    );

    let out = softgpu(&["inspect"], &dir().join("no-such-file.sgcap"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-file.sgcap"));
}

#[test]
fn a_flipped_length_in_a_middle_frame_exits_2_with_its_offset_instead_of_reading_as_a_cut() {
    let path = write_sample("flipped_len_src");
    let data = std::fs::read(&path).unwrap();
    let (first_packet, total) = first_batch(&data);
    let len = (total - FRAME_HEAD_LEN - FRAME_CRC_LEN) as u32;
    for bad_len in [len + 1, 1 << 20] {
        let mut bad = data.clone();
        bad[first_packet + 2..first_packet + 6].copy_from_slice(&bad_len.to_le_bytes());
        let p = dir().join("flipped_len.sgcap");
        std::fs::write(&p, &bad).unwrap();
        for verb in ["inspect", "replay"] {
            let out = softgpu(&[verb], &p);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{verb}, len {bad_len}: {err}");
            assert!(
                err.contains(&format!("offset {first_packet}: ")) && err.contains("corrupt"),
                "{verb}: {err}"
            );
            assert!(!err.contains("did not finish"), "{verb}: {err}");
        }
    }
}

#[test]
fn every_verb_has_help_and_bad_usage_exits_2() {
    let bin = env!("CARGO_BIN_EXE_softgpu");
    for verb in ["inspect", "replay", "run"] {
        let out = Command::new(bin).args([verb, "--help"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{verb} --help");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Usage: softgpu"), "{text}");
        assert!(
            text.contains("Exit status"),
            "{verb} --help says its exit codes"
        );
    }
    let out = Command::new(bin)
        .args(["inspect", "x", "--format", "xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(bin).args(["frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// What a user-facing text must never name: the internal spec files, which
/// live outside the repository (next to it, in `../shared/`) and are not
/// shipped with the project.
const OUTSIDE_THE_REPOSITORY: [&str; 6] = [
    "INTERFACES.md",
    "../shared/",
    "shared/STYLE.md",
    "shared/ANCHORS.md",
    "shared/HSA-SURFACE.md",
    "/work/shared",
];

#[test]
fn no_help_text_readme_or_doc_points_at_a_file_outside_the_repository() {
    let bin = env!("CARGO_BIN_EXE_softgpu");
    let help = |args: &[&str]| -> String {
        let out = Command::new(bin).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "softgpu {}", args.join(" "));
        String::from_utf8(out.stdout).unwrap()
    };
    let top = help(&["--help"]);
    // Every verb `softgpu --help` lists (clap's own `help` verb prints the
    // verbs' texts, which are read here directly).
    let verbs: Vec<&str> = top
        .lines()
        .skip_while(|l| l.trim_end() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|v| *v != "help")
        .collect();
    for v in ["inspect", "replay", "run", "objects", "targets", "diff"] {
        assert!(verbs.contains(&v), "{v} not among the verbs {verbs:?}");
    }
    let mut texts = vec![
        ("softgpu --help".to_string(), top.clone()),
        ("softgpu -h".to_string(), help(&["-h"])),
    ];
    for v in &verbs {
        for flag in ["--help", "-h"] {
            texts.push((format!("softgpu {v} {flag}"), help(&[v, flag])));
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(
        docs.iter().any(|p| p.ends_with("docs/OUTPUT.md")),
        "docs/OUTPUT.md, which the help texts point to, is missing"
    );
    files.extend(docs);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        texts.push((f.strip_prefix(root).unwrap().display().to_string(), text));
    }
    let mut found = Vec::new();
    for (what, text) in &texts {
        for (n, line) in text.lines().enumerate() {
            for needle in OUTSIDE_THE_REPOSITORY {
                if line.contains(needle) {
                    found.push(format!("{what}, line {}: {needle}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "user-facing texts name files that are not in the repository:\n{}",
        found.join("\n")
    );
}
