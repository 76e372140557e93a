//! Kernel arguments in a capture (format 2.1): blocks submitted through the
//! writer API are stored once per distinct content, read back and decoded
//! from the capture alone (its KernelArgs frame), with the runtime's pointer
//! findings; `softgpu inspect`, `replay` and `diff --level args` show them.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use softgpu_hsa::aql::{PacketRecord, ReasonSet, Status};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, Capture, CaptureHeader, CaptureWriter, CapturedRecord, KERNARG_BOUND,
    KernargClass, KernargSubmit, KernelArgSources, RecordKernarg, Unreadable, read_file,
};
use softgpu_hsa::code_object::{KernelArg, KernelMetadata};
use softgpu_hsa::kernargs::{ArgFinding, ArgValue, KernelSources, PointerFinding};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_kernargs");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.sgcap"));
    let _ = std::fs::remove_file(&p);
    p
}

fn header() -> CaptureHeader {
    CaptureHeader {
        pid: 99,
        start_unix_ns: 1,
        mode: "virtual".into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    }
}

const KO: u64 = 0x5000;
const KERNARG: u64 = 0x7000_0000_0000;

fn dispatch_raw(kernel_object: u64, grid: u32) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(&(2u16 | (2 << 9) | (2 << 11)).to_le_bytes());
    b[2..4].copy_from_slice(&1u16.to_le_bytes());
    b[4..6].copy_from_slice(&64u16.to_le_bytes());
    b[6..8].copy_from_slice(&1u16.to_le_bytes());
    b[8..10].copy_from_slice(&1u16.to_le_bytes());
    b[12..16].copy_from_slice(&grid.to_le_bytes());
    b[16..20].copy_from_slice(&1u32.to_le_bytes());
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    b[32..40].copy_from_slice(&kernel_object.to_le_bytes());
    b[40..48].copy_from_slice(&KERNARG.to_le_bytes());
    b[56..64].copy_from_slice(&0x9000u64.to_le_bytes());
    b
}

fn rec(i: u64, raw: [u8; 64]) -> PacketRecord {
    PacketRecord {
        queue_id: 1,
        packet_index: i,
        raw,
        status: Status::Validated,
        reasons: ReasonSet(0),
        observed_ns: 1000 + i * 10,
        done_ns: 1005 + i * 10,
        thread: 7,
    }
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

/// `saxpy(float a, float* x, float const* y, int n)` with a v5 hidden
/// block count: 40 bytes.
fn saxpy_sources() -> KernelArgSources {
    KernelArgSources {
        kernel_object: KO,
        metadata: KernelMetadata {
            symbol: "_Z5saxpyfPfPKfi.kd".into(),
            kernarg_segment_size: 40,
            args: vec![
                arg(0, 4, "by_value"),
                arg(8, 8, "global_buffer"),
                arg(16, 8, "global_buffer"),
                arg(24, 4, "by_value"),
                arg(32, 4, "hidden_block_count_x"),
            ],
            ..KernelMetadata::default()
        },
        sources: KernelSources {
            symbol: "_Z5saxpyfPfPKfi.kd".into(),
            signature: Some("saxpy(float, float*, float const*, int)".into()),
            names: Some(vec![
                Some("a".into()),
                Some("x".into()),
                Some("y".into()),
                Some("n".into()),
            ]),
        },
    }
}

const X: u64 = 0x7f00_0000_1000;
const Y: u64 = 0x7f00_0000_9000;

fn saxpy_block(a: f32, n: i32, blocks: u32) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b[0..4].copy_from_slice(&a.to_le_bytes());
    b[8..16].copy_from_slice(&X.to_le_bytes());
    b[16..24].copy_from_slice(&Y.to_le_bytes());
    b[24..28].copy_from_slice(&n.to_le_bytes());
    b[32..36].copy_from_slice(&blocks.to_le_bytes());
    b
}

fn classify() -> Box<dyn Fn(u64) -> KernargClass + Send + Sync> {
    Box::new(|_| KernargClass::Softgpu)
}

/// x is inside allocation 3; y is inside allocation 4, freed at event 9.
fn checker() -> softgpu_hsa::capture::ArgCheck {
    Box::new(|input| {
        assert_eq!(input.kernel_object, KO);
        let p = |o: usize| u64::from_le_bytes(input.block[o..o + 8].try_into().unwrap());
        vec![
            ArgFinding {
                index: 1,
                address: p(8),
                finding: PointerFinding::InAllocation {
                    allocation: 3,
                    offset: p(8) - X,
                    remaining: 4000 - (p(8) - X),
                },
            },
            ArgFinding {
                index: 2,
                address: p(16),
                finding: PointerFinding::UseAfterFree {
                    allocation: 4,
                    offset: 0,
                    freed_at: 9,
                },
            },
        ]
    })
}

/// A checker that counts its calls: each call's one finding carries the
/// call's number as its address, so a record shows which check it got.
fn counting_checker() -> (softgpu_hsa::capture::ArgCheck, Arc<AtomicU64>) {
    let calls = Arc::new(AtomicU64::new(0));
    let c = calls.clone();
    let check: softgpu_hsa::capture::ArgCheck = Box::new(move |_| {
        vec![ArgFinding {
            index: 0,
            address: c.fetch_add(1, Ordering::SeqCst),
            finding: PointerFinding::Unknown,
        }]
    });
    (check, calls)
}

/// A capture of `n` saxpy dispatches (args from `block(i)`), with or
/// without argument capture.
fn write(name: &str, n: u64, with_args: bool, block: impl Fn(u64) -> Vec<u8>) -> PathBuf {
    let path = tmp(name);
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    w.add_code_object(vec![(KO, "_Z5saxpyfPfPKfi.kd".into())]);
    if with_args {
        w.add_kernel_args(vec![saxpy_sources()]);
        assert!(w.set_arg_checker(checker()));
    }
    let mut q = w.register_queue(1, 1, 64, 0);
    for i in 0..n {
        let r = rec(i, dispatch_raw(KO, 64 * 16));
        if with_args {
            let b = block(i);
            q.push_with_kernarg(
                &r,
                KernargSubmit::Bytes {
                    bytes: &b,
                    segment_size: 40,
                },
            );
        } else {
            q.push(&r);
        }
    }
    w.finish(0, 1).unwrap();
    path
}

#[test]
fn identical_blocks_are_stored_once_and_every_record_decodes_to_the_values_passed() {
    let path = write("identical", 1000, true, |_| saxpy_block(2.0, 1000, 16));
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.version, (2, 1));
    assert!(cap.complete);
    assert_eq!(cap.kernarg_blocks.len(), 1, "one distinct block");
    assert_eq!(cap.kernarg_findings.len(), 1, "one distinct findings blob");
    assert_eq!(cap.records.len(), 1000);
    for r in &cap.records {
        assert!(matches!(
            r.kernarg,
            RecordKernarg::Block {
                findings: Some(_),
                truncated_from: None,
                ..
            }
        ));
        let d = cap.decode_args(r).expect("decodes from the capture alone");
        assert!(d.disagreements.is_empty(), "{:?}", d.disagreements);
        assert_eq!(d.args[0].value, ArgValue::F32(2.0));
        assert_eq!(d.args[0].name.as_deref(), Some("a"));
        assert_eq!(d.args[1].value, ArgValue::Pointer(X));
        assert_eq!(d.args[2].type_text.as_deref(), Some("float const*"));
        assert_eq!(d.args[3].value, ArgValue::Int(1000));
        assert_eq!(d.args[4].value, ArgValue::Uint(16));
        assert_eq!(cap.arg_findings(r).len(), 2);
    }
}

#[test]
fn dispatches_of_a_kernel_without_a_kernarg_segment_each_record_an_empty_captured_block() {
    // The producer marks an empty block after an empty block as a repeat
    // without comparing them (see `push_with_kernarg`); every record still
    // says "captured, 0 bytes", around a non-empty block and an unreadable one.
    let path = tmp("empty_blocks");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    w.add_code_object(vec![(KO, "_Z5saxpyfPfPKfi.kd".into())]);
    let mut q = w.register_queue(1, 1, 64, 0);
    let full = saxpy_block(2.0, 1000, 16);
    for i in 0..8u64 {
        let r = rec(i, dispatch_raw(KO, 64 * 16));
        let k = match i {
            4 => KernargSubmit::Bytes {
                bytes: &full,
                segment_size: 40,
            },
            5 => KernargSubmit::Unreadable(softgpu_hsa::capture::Unreadable::NullAddress),
            _ => KernargSubmit::Bytes {
                bytes: &[],
                segment_size: 0,
            },
        };
        q.push_with_kernarg(&r, k);
    }
    drop(q);
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.records.len(), 8);
    for (i, r) in cap.records.iter().enumerate() {
        match (i, &r.kernarg) {
            (4, RecordKernarg::Block { block, .. }) => {
                assert_eq!(cap.kernarg_blocks[block], full, "record {i}")
            }
            (5, k) => assert!(
                matches!(k, RecordKernarg::Unreadable(_)),
                "record {i}: {k:?}"
            ),
            (
                _,
                RecordKernarg::Block {
                    block,
                    truncated_from: None,
                    ..
                },
            ) => assert!(cap.kernarg_blocks[block].is_empty(), "record {i}"),
            (_, k) => panic!("record {i}: {k:?}, not an empty captured block"),
        }
    }
}

#[test]
fn a_repeated_launch_with_identical_arguments_adds_at_most_16_bytes_for_them() {
    let n = 20_000;
    let with = write("bytes_with", n, true, |_| saxpy_block(2.0, 1000, 16));
    let without = write("bytes_without", n, false, |_| Vec::new());
    let ring = |p: &PathBuf| {
        let c = read_file(p).unwrap();
        let r = c.end.ring.unwrap();
        softgpu_hsa::capture::ring::region_bytes(r.capacity)
    };
    let a = std::fs::metadata(&with).unwrap().len() - ring(&with);
    let b = std::fs::metadata(&without).unwrap().len() - ring(&without);
    let per = (a as f64 - b as f64) / n as f64;
    println!(
        "stream bytes per dispatch: {:.2} with arguments, {:.2} without; {per:.2} for the arguments",
        a as f64 / n as f64,
        b as f64 / n as f64
    );
    assert!(
        per <= 16.0,
        "{per} bytes per dispatch for identical arguments"
    );
}

#[test]
fn distinct_blocks_are_each_stored_once_and_keep_their_own_values() {
    let path = write("distinct", 300, true, |i| {
        saxpy_block(i as f32 * 0.5, (i % 3) as i32, 16)
    });
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.kernarg_blocks.len(), 300);
    for (i, r) in cap.records.iter().enumerate() {
        let d = cap.decode_args(r).unwrap();
        assert_eq!(d.args[0].value, ArgValue::F32(i as f32 * 0.5));
        assert_eq!(d.args[3].value, ArgValue::Int((i % 3) as i64 as i128));
    }
}

#[test]
fn a_segment_past_the_bound_is_recorded_truncated_with_its_size_and_unreadable_with_its_reason() {
    let path = tmp("bounds");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    let big = vec![0xABu8; 10_000];
    q.push_with_kernarg(
        &rec(0, dispatch_raw(KO, 64)),
        KernargSubmit::Bytes {
            bytes: &big,
            segment_size: 10_000,
        },
    );
    q.push_with_kernarg(
        &rec(1, dispatch_raw(KO, 64)),
        KernargSubmit::Unreadable(Unreadable::NotKnownReadable),
    );
    q.push(&rec(2, dispatch_raw(KO, 64)));
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    let r = &cap.records;
    assert!(matches!(
        r[0].kernarg,
        RecordKernarg::Block {
            truncated_from: Some(10_000),
            ..
        }
    ));
    assert_eq!(cap.kernarg_bytes(&r[0]).unwrap(), &big[..KERNARG_BOUND]);
    assert_eq!(
        r[1].kernarg,
        RecordKernarg::Unreadable(Unreadable::NotKnownReadable)
    );
    assert_eq!(r[2].kernarg, RecordKernarg::None);
}

#[test]
fn many_queues_and_a_full_arena_lose_no_block() {
    let path = tmp("churn");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut seq = 0u64;
    for qid in 1..=20u64 {
        let mut q = w.register_queue(qid, 1, 64, 0);
        for i in 0..200u64 {
            let b = vec![(seq % 251) as u8; 4000];
            let mut r = rec(i, dispatch_raw(KO, 64));
            r.queue_id = qid;
            q.push_with_kernarg(
                &r,
                KernargSubmit::Bytes {
                    bytes: &b,
                    segment_size: 4000,
                },
            );
            seq += 1;
        }
        q.end(0, 1);
    }
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), 4000);
    for (n, r) in cap.records.iter().enumerate() {
        let b = cap.kernarg_bytes(r).unwrap_or_else(|| panic!("record {n}"));
        assert_eq!(b, &vec![(n as u64 % 251) as u8; 4000][..], "record {n}");
    }
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

#[test]
fn inspect_shows_the_call_args_and_raw_block_in_every_format() {
    let path = write("inspect", 2, true, |_| saxpy_block(2.0, 1000, 16));
    let p = path.to_str().unwrap();
    let jsonl = cli(&["inspect", p, "--format", "jsonl"]);
    let line: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    let args = line["args"].as_array().unwrap();
    assert_eq!(args.len(), 5);
    assert_eq!(
        args[0],
        serde_json::json!({"index": 0, "name": "a", "type": "float", "kind": "by_value", "offset": 0, "size": 4, "value": 2.0})
    );
    assert_eq!(args[1]["value"], format!("{X:#x}"));
    assert_eq!(args[3]["value"], 1000);
    assert_eq!(args[4]["value"], 16);
    assert_eq!(
        line["kernarg"],
        softgpu_hsa::kernargs::hex(&saxpy_block(2.0, 1000, 16))
    );
    assert_eq!(line["kernarg_state"], "captured");
    assert_eq!(line["arg_findings"][1]["code"], "pointer_use_after_free");
    assert_eq!(line["hidden_mismatches"], serde_json::json!([]));
    let call = line["call"].as_str().unwrap();
    assert_eq!(
        call,
        format!(
            "saxpy(float a=2.0, float* x={X:#x} (alloc 3 +0 of 4000 B), float const* y={Y:#x} (freed alloc 4 +0, freed at #9), int n=1000)"
        )
    );
    let table = cli(&["inspect", p]);
    assert!(table.contains(call), "{table}");
    let csv = cli(&["inspect", p, "--format", "csv"]);
    assert!(csv.lines().next().unwrap().ends_with("Kernel_Call,Kernarg"));
    assert!(csv.contains(&format!("\"{call}\"")), "{csv}");
    let chrome: serde_json::Value =
        serde_json::from_str(&cli(&["inspect", p, "--format", "chrome"])).unwrap();
    let ev = chrome["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["ph"] == "X")
        .unwrap();
    assert_eq!(ev["args"]["call"], call);
    assert_eq!(ev["name"], "saxpy(float, float*, float const*, int)");
}

#[test]
fn a_hidden_argument_that_disagrees_with_the_packet_is_a_finding_naming_both_values() {
    let path = write("hidden", 1, true, |_| saxpy_block(2.0, 1000, 15));
    let jsonl = cli(&["inspect", path.to_str().unwrap(), "--format", "jsonl"]);
    let line: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(
        line["hidden_mismatches"],
        serde_json::json!([{"code": "hidden_arg_mismatch", "index": 4, "kind": "hidden_block_count_x", "value": 15, "expected": 16}])
    );
}

#[test]
fn a_capture_without_arguments_has_no_args_fields() {
    let path = write("none", 2, false, |_| Vec::new());
    let jsonl = cli(&["inspect", path.to_str().unwrap(), "--format", "jsonl"]);
    let line: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert!(line["args"].is_null());
    assert!(line["kernarg"].is_null());
    assert!(line["kernarg_state"].is_null());
}

#[test]
fn replay_decodes_the_same_call_offline_from_the_capture_alone() {
    let path = write("replay", 2, true, |_| saxpy_block(2.0, 1000, 15));
    let p = path.to_str().unwrap();
    let inspect: serde_json::Value = serde_json::from_str(
        cli(&["inspect", p, "--format", "jsonl"])
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let jsonl = cli(&["replay", p, "--format", "jsonl"]);
    let line: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(line["call"], inspect["call"]);
    assert_eq!(line["args"], inspect["args"]);
    assert_eq!(line["hidden_mismatches"][0]["expected"], 16);
    let table = cli(&["replay", p]);
    assert!(table.contains(inspect["call"].as_str().unwrap()), "{table}");
    assert!(
        table.contains(
            "hidden_arg_mismatch hidden_block_count_x: 15 in the block, 16 from the packet"
        ),
        "{table}"
    );
}

/// A capture whose pointers are at other addresses (another run) but name
/// the same allocations and offsets.
fn moved_block(a: f32, n: i32) -> Vec<u8> {
    let mut b = saxpy_block(a, n, 16);
    b[8..16].copy_from_slice(&(X + 0x10_0000).to_le_bytes());
    b[16..24].copy_from_slice(&(Y + 0x10_0000).to_le_bytes());
    b
}

fn diff(a: &PathBuf, b: &PathBuf, level: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(["--level", level])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn diff_level_args_compares_values_exactly_and_pointers_by_allocation_never_by_address() {
    let a = write("diff_a", 3, true, |_| saxpy_block(2.0, 1000, 16));
    // Same allocations and offsets at other addresses: the same arguments.
    let moved = write("diff_moved", 3, true, |_| {
        let mut b = moved_block(2.0, 1000);
        // The checker names offsets from X; keep x at X + 0 in allocation terms.
        b[8..16].copy_from_slice(&X.to_le_bytes());
        b
    });
    let (code, out) = diff(&a, &moved, "args");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("SAME at level args"), "{out}");
    // A by-value argument that differs in one dispatch.
    let other = write("diff_value", 3, true, |i| {
        saxpy_block(if i == 1 { 2.5 } else { 2.0 }, 1000, 16)
    });
    let (code, out) = diff(&a, &other, "args");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("dispatch 1: saxpy(float, float*, float const*, int): argument 0: float a=2.0 in A, float a=2.5 in B"),
        "{out}"
    );
    // The same at level exact: arguments are not compared there.
    assert_eq!(diff(&a, &other, "exact").0, 0);
    // A pointer into the same allocation at another offset.
    let offset = write("diff_offset", 3, true, |_| {
        let mut b = saxpy_block(2.0, 1000, 16);
        b[8..16].copy_from_slice(&(X + 16).to_le_bytes());
        b
    });
    let (code, out) = diff(&a, &offset, "args");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("argument 1: float* x=alloc 3 +0 in A, float* x=alloc 3 +16 in B"),
        "{out}"
    );
    // A capture without arguments cannot be compared at this level.
    let none = write("diff_none", 3, false, |_| Vec::new());
    let (code, out) = diff(&a, &none, "args");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("arguments not captured in B"), "{out}");
}

#[test]
fn a_block_repeated_around_changes_unreadable_records_and_other_queues_keeps_every_records_own_bytes_size_and_findings()
 {
    let path = tmp("repeats");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    // The checker runs once per record, repeats included (no generation is
    // given, so no check is reused).
    let (check, calls) = counting_checker();
    assert!(w.set_arg_checker(check));
    let a = saxpy_block(2.0, 1000, 16);
    let b = saxpy_block(3.0, 1000, 16);
    let big = vec![0xCDu8; 5000];
    enum S<'a> {
        Bytes(&'a [u8], u64),
        Unreadable,
    }
    // (queue, what is submitted)
    let plan: Vec<(u64, S)> = vec![
        (1, S::Bytes(&a, 40)),
        (1, S::Bytes(&a, 40)),
        (1, S::Unreadable),
        (1, S::Bytes(&a, 40)),
        (2, S::Bytes(&a, 40)),
        (2, S::Bytes(&b, 40)),
        (1, S::Bytes(&a, 40)),
        (1, S::Bytes(&b, 40)),
        (1, S::Bytes(&b, 40)),
        (1, S::Bytes(&a, 48)),
        (1, S::Bytes(&big, 5000)),
        (1, S::Bytes(&big, 5000)),
        (1, S::Bytes(&big, 6000)),
        (2, S::Bytes(&b, 40)),
        (1, S::Bytes(&a, 40)),
    ];
    let mut qs = [w.register_queue(1, 1, 64, 0), w.register_queue(2, 1, 64, 0)];
    let mut index = [0u64; 2];
    for (qid, s) in &plan {
        let k = (*qid - 1) as usize;
        let mut r = rec(index[k], dispatch_raw(KO, 64));
        r.queue_id = *qid;
        index[k] += 1;
        qs[k].push_with_kernarg(
            &r,
            match s {
                S::Bytes(bytes, seg) => KernargSubmit::Bytes {
                    bytes,
                    segment_size: *seg,
                },
                S::Unreadable => KernargSubmit::Unreadable(Unreadable::NotKnownReadable),
            },
        );
    }
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), plan.len());
    let mut call = 0u64;
    for (n, (r, (qid, s))) in cap.records.iter().zip(&plan).enumerate() {
        assert_eq!(r.queue_id, *qid, "record {n}");
        match s {
            S::Unreadable => assert_eq!(
                r.kernarg,
                RecordKernarg::Unreadable(Unreadable::NotKnownReadable),
                "record {n}"
            ),
            S::Bytes(bytes, seg) => {
                assert_block_kept(&cap, r, bytes, *seg, n);
                let f = cap.arg_findings(r);
                assert_eq!(f.len(), 1, "record {n}");
                assert_eq!(f[0].address, call, "record {n}: its own check");
                call += 1;
            }
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), call);
    // a, b, a-as-48 is the same bytes: a, b and big are the distinct blocks.
    assert_eq!(cap.kernarg_blocks.len(), 3);
}

/// Record `n` holds `bytes` (its first [`KERNARG_BOUND`]) as its own block,
/// marked truncated exactly when its segment size `seg` is over the bound.
fn assert_block_kept(cap: &Capture, r: &CapturedRecord, bytes: &[u8], seg: u64, n: usize) {
    let kept = &bytes[..bytes.len().min(KERNARG_BOUND)];
    assert_eq!(cap.kernarg_bytes(r).unwrap(), kept, "record {n}");
    let RecordKernarg::Block { truncated_from, .. } = r.kernarg else {
        panic!("record {n}: {:?}", r.kernarg);
    };
    assert_eq!(
        truncated_from,
        (seg > KERNARG_BOUND as u64).then_some(seg),
        "record {n}"
    );
}

#[test]
fn blocks_staged_in_place_and_blocks_submitted_as_bytes_repeat_each_other_and_keep_every_records_own_bytes()
 {
    // The virtual runtime compares a dispatch's block with the queue's
    // previous one in place (`kernarg_stage`, `push_staged`); other paths
    // push `Bytes`. Both share the queue's previous block.
    let path = tmp("staged");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let a = saxpy_block(2.0, 1000, 16);
    let b = saxpy_block(3.0, 1000, 16);
    let big = vec![0xABu8; 5000];
    // (staged?, bytes, segment size)
    let plan: Vec<(bool, &[u8], u64)> = vec![
        (true, &a, 40),
        (true, &a, 40),
        (false, &a, 40),
        (true, &a, 40),
        (true, &b, 40),
        (false, &b, 40),
        (true, &b, 48), // the same bytes under another segment size
        (true, &b, 48),
        (true, &a, 40),
        (true, &big, 5000),
        (true, &big, 5000),
        (false, &a, 40),
        (true, &[], 0),
        (true, &a, 40),
    ];
    let mut q = w.register_queue(1, 1, 64, 0);
    let mut copies = 0;
    for (i, (staged, bytes, seg)) in plan.iter().enumerate() {
        let r = rec(i as u64, dispatch_raw(KO, 64));
        if *staged {
            let (last, last_len) = q.kernarg_stage();
            let len = bytes.len().min(KERNARG_BOUND);
            let unchanged = last_len == Some(len) && last[..len] == bytes[..len];
            if !unchanged {
                last[..len].copy_from_slice(&bytes[..len]);
                copies += 1;
            }
            q.push_staged(&r, len, *seg, unchanged);
        } else {
            q.push_with_kernarg(
                &r,
                KernargSubmit::Bytes {
                    bytes,
                    segment_size: *seg,
                },
            );
        }
    }
    w.finish(0, 1).unwrap();
    // Staged copies only on a change of bytes or length: a, b, a, big, the
    // empty block, a.
    assert_eq!(copies, 6);
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), plan.len());
    for (n, (r, (_, bytes, seg))) in cap.records.iter().zip(&plan).enumerate() {
        assert_block_kept(&cap, r, bytes, *seg, n);
    }
    // a, b, big and the empty block.
    assert_eq!(cap.kernarg_blocks.len(), 4);
}

#[test]
fn with_a_generation_the_checker_is_called_again_only_when_the_kernel_agent_block_or_generation_changes()
 {
    let path = tmp("generation");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let (check, calls) = counting_checker();
    assert!(w.set_arg_checker(check));
    let generation = Arc::new(AtomicU64::new(0));
    let g = generation.clone();
    assert!(w.set_arg_generation(Box::new(move || g.load(Ordering::SeqCst))));
    assert!(!w.set_arg_generation(Box::new(|| 0)), "set once");
    let a = saxpy_block(2.0, 1000, 16);
    let b = saxpy_block(3.0, 1000, 16);
    let mut q = w.register_queue(1, 1, 64, 0);
    // (block, kernel object, generation before the push, the check expected)
    let plan: Vec<(&[u8], u64, u64, u64)> = vec![
        (&a, KO, 0, 0),
        (&a, KO, 0, 0),
        (&a, KO, 0, 0),
        (&a, KO, 1, 1), // an allocation or free happened
        (&a, KO, 1, 1),
        (&b, KO, 1, 2),        // another block
        (&a, KO, 1, 3),        // back to the first: the last check was b's
        (&a, KO + 0x40, 1, 4), // another kernel
        (&a, KO + 0x40, 1, 4),
    ];
    for (i, (block, ko, gen_before, _)) in plan.iter().enumerate() {
        // The writer reads the generation when it encodes: wait until it has
        // encoded what came before, then move it.
        w.flush().unwrap();
        generation.store(*gen_before, Ordering::SeqCst);
        q.push_with_kernarg(
            &rec(i as u64, dispatch_raw(*ko, 64)),
            KernargSubmit::Bytes {
                bytes: block,
                segment_size: 40,
            },
        );
    }
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), plan.len());
    for (n, (r, (block, _, _, check))) in cap.records.iter().zip(&plan).enumerate() {
        assert_eq!(cap.kernarg_bytes(r).unwrap(), *block, "record {n}");
        let f = cap.arg_findings(r);
        assert_eq!(f.len(), 1, "record {n}: every record keeps its findings");
        assert_eq!(f[0].address, *check, "record {n}");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        5,
        "five checks for nine dispatches"
    );
}

/// A launch loop whose records the writer encodes in one pass (its fast
/// path appends a record that merely follows the last one), while the
/// generation moves in the middle of that pass: the records before the move
/// keep the first check's findings, those after it get a new check.
#[test]
fn a_generation_moved_in_the_middle_of_a_launch_loop_gets_the_records_after_it_a_new_check() {
    let path = tmp("generation-mid-pass");
    let generation = Arc::new(AtomicU64::new(0));
    // The classifier runs on the writer thread, once per record, as it
    // encodes: it moves the generation when it meets record 300's kernarg
    // address (as a free on another thread could, while the writer runs).
    let moved_at = KERNARG + 300 * 0x40;
    let g = generation.clone();
    let w = CaptureWriter::create(
        &path,
        header(),
        Box::new(move |addr| {
            if addr == moved_at {
                g.store(1, Ordering::SeqCst);
            }
            KernargClass::Softgpu
        }),
    )
    .unwrap();
    let (check, calls) = counting_checker();
    assert!(w.set_arg_checker(check));
    let g = generation.clone();
    assert!(w.set_arg_generation(Box::new(move || g.load(Ordering::SeqCst))));
    let a = saxpy_block(2.0, 1000, 16);
    let mut q = w.register_queue(1, 1, 4096, 0);
    for i in 0..600u64 {
        let mut raw = dispatch_raw(KO, 64);
        raw[40..48].copy_from_slice(&(KERNARG + i * 0x40).to_le_bytes());
        q.push_with_kernarg(
            &rec(i, raw),
            KernargSubmit::Bytes {
                bytes: &a,
                segment_size: 40,
            },
        );
    }
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), 600);
    for (n, r) in cap.records.iter().enumerate() {
        assert_eq!(cap.kernarg_bytes(r).unwrap(), a, "record {n}");
        let f = cap.arg_findings(r);
        assert_eq!(f.len(), 1, "record {n}");
        // Record 300 itself may be encoded either side of the move.
        match n {
            0..300 => assert_eq!(f[0].address, 0, "record {n}: the first check"),
            300 => assert!(f[0].address <= 1, "record {n}"),
            _ => assert_eq!(f[0].address, 1, "record {n}: checked again after the move"),
        }
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "two checks for 600 dispatches"
    );
}

#[test]
fn only_dispatched_kernels_get_a_kernel_args_entry_and_each_is_written_once() {
    // A library registers many kernels and launches few: 2,000 registered
    // (each with a long signature), one dispatched 100 times.
    let path = tmp("only-dispatched");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    w.add_code_object(vec![(KO, "_Z5saxpyfPfPKfi.kd".into())]);
    let mut many = Vec::new();
    for i in 0..2000u64 {
        let mut s = saxpy_sources();
        s.kernel_object = 0x9000_0000 + i * 0x100;
        s.metadata.symbol = format!("_Z{}unlaunched_kernel_number_{i:04}v.kd", 26 + 4);
        many.push(s);
    }
    w.add_kernel_args(many);
    w.add_kernel_args(vec![saxpy_sources()]);
    assert!(w.set_arg_checker(checker()));
    let mut q = w.register_queue(1, 1, 64, 0);
    for i in 0..100 {
        let b = saxpy_block(2.0, 1000, 16);
        q.push_with_kernarg(
            &rec(i, dispatch_raw(KO, 64 * 16)),
            KernargSubmit::Bytes {
                bytes: &b,
                segment_size: 40,
            },
        );
    }
    w.finish(0, 1).unwrap();
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.records.len(), 100);
    assert_eq!(
        cap.kernel_args.keys().copied().collect::<Vec<_>>(),
        vec![KO],
        "only the dispatched kernel's sources are in the capture"
    );
    // Decoded from the capture alone, from the first record on.
    let out = cli(&["inspect", path.to_str().unwrap(), "--format", "jsonl"]);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["args"][0]["value"], 2.0, "{first}");
}
