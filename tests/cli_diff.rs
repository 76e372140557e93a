//! `softgpu diff`: hand-built inputs of every kind (captures written by the real
//! writer, rocprofv3 kernel_trace.csv in current and older columns, rocprofv3 JSON,
//! rocprof v1 results.csv), every level with divergences it must and must not
//! report, `--ignore`, exit codes, corrupt inputs, and the `inspect --format csv`
//! round trip; and `softgpu inspect --format chrome`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use softgpu_hsa::abi::{FenceScope, HsaSignal, KernelDispatchPacket, PacketType};
use softgpu_hsa::aql::parse::{encode_kernel_dispatch, make_header};
use softgpu_hsa::aql::{PacketRecord, ReasonSet, Status};
use softgpu_hsa::capture::{AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass};

const VECADD: u64 = 0x1000;
const PLAIN: u64 = 0x2000;
const BLIT: u64 = 0x3000;
const VECADD_NAME: &str = "vecAdd(float*, float*, float*, int)";

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_diff");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, text: &str) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn softgpu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .unwrap()
}

fn diff(a: &Path, b: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(extra)
        .output()
        .unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the exit code of `diff a b --level L` for each level.
fn levels(a: &Path, b: &Path, extra: &[&str], expect: [(&str, i32); 4]) {
    for (level, want) in expect {
        let mut args = vec!["--level", level];
        args.extend_from_slice(extra);
        let o = diff(a, b, &args);
        assert_eq!(
            code(&o),
            want,
            "level {level}: {}\n{}",
            stdout(&o),
            stderr(&o)
        );
    }
}

fn dispatch(kernel_object: u64, grid_x: u32, wg_x: u16, lds: u32) -> [u8; 64] {
    encode_kernel_dispatch(&KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            true,
            FenceScope::AGENT,
            FenceScope::SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: wg_x,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: grid_x,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: 0,
        group_segment_size: lds,
        kernel_object,
        kernarg_address: 0x7000_0000,
        completion_signal: HsaSignal { handle: 0 },
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

/// One entry: queue id, kernel object (0 = a barrier), grid x.
type Entry = (u64, u64, u32);

/// A capture of `entries` in this order; every dispatch has workgroup 64 and LDS 2048.
fn capture(name: &str, entries: &[Entry]) -> PathBuf {
    let path = dir().join(format!("{name}.sgcap"));
    let _ = std::fs::remove_file(&path);
    let header = CaptureHeader {
        pid: 1,
        start_unix_ns: 1,
        mode: "virtual".into(),
        agents: vec![AgentDesc {
            index: 0,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    };
    let w = CaptureWriter::create(&path, header, Box::new(|_| KernargClass::Softgpu)).unwrap();
    w.add_code_object(vec![
        (VECADD, "_Z6vecAddPfS_S_i.kd".into()),
        (PLAIN, "plain_kernel.kd".into()),
        (BLIT, "__amd_rocclr_fillBufferAligned.kd".into()),
    ]);
    let mut queues: Vec<(u64, softgpu_hsa::capture::QueueProducer)> = Vec::new();
    for (i, &(q, ko, grid)) in entries.iter().enumerate() {
        if !queues.iter().any(|(id, _)| *id == q) {
            queues.push((q, w.register_queue(q, 0, 64, 0)));
        }
        let raw = if ko == 0 {
            barrier_and()
        } else {
            dispatch(ko, grid, 64, 2048)
        };
        let p = &mut queues.iter_mut().find(|(id, _)| *id == q).unwrap().1;
        p.push(&PacketRecord {
            queue_id: q,
            packet_index: i as u64,
            raw,
            status: Status::Validated,
            reasons: ReasonSet(0),
            observed_ns: 100 + i as u64,
            done_ns: 200 + i as u64,
            thread: 7,
        });
        // Keep the capture's sequence numbers in push order across queues.
        w.drain();
    }
    w.finish(0, 1).unwrap();
    path
}

/// The reference stream: queue 5 runs vecAdd, plain, vecAdd (and a barrier, which
/// other tools do not trace); queue 9 runs plain.
const BASE: &[Entry] = &[
    (5, VECADD, 1024),
    (5, PLAIN, 256),
    (9, PLAIN, 512),
    (5, 0, 0),
    (5, VECADD, 1024),
];

const V3_HEADER: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"";

/// rocprofv3 current kernel_trace.csv: (queue, dispatch id, name, grid x, lds).
fn v3_current(rows: &[(u64, u64, &str, u32, u32)]) -> String {
    let mut s = format!("{V3_HEADER}\r\n");
    for (q, id, name, grid, lds) in rows {
        s.push_str(&format!(
            "\"KERNEL_DISPATCH\",\"Agent 4\",{q},0,77,{id},3,\"{name}\",{id},1000,2000,{lds},0,8,0,16,64,1,1,{grid},1,1\r\n"
        ));
    }
    s
}

/// rocprofv3 older kernel_trace.csv (Private/Group_Segment_Size columns).
fn v3_older(rows: &[(u64, u64, &str, u32, u32)]) -> String {
    let mut s = String::from(
        "Kind,Agent_Id,Queue_Id,Kernel_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,Private_Segment_Size,Group_Segment_Size,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z\n",
    );
    for (q, id, name, grid, lds) in rows {
        s.push_str(&format!(
            "KERNEL_DISPATCH,1,{q},3,\"{name}\",{id},1000,2000,0,{lds},64,1,1,{grid},1,1\n"
        ));
    }
    s
}

/// rocprof v1 results.csv: (queue, index, name, grid total).
fn v1(rows: &[(u64, u64, &str, u32)]) -> String {
    let mut s = String::from(
        "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,wave_size,sig,obj,DispatchNs,BeginNs,EndNs,CompleteNs\n",
    );
    for (q, idx, name, grid) in rows {
        s.push_str(&format!(
            "{idx},\"{name}\",2,{q},{idx},100,100,{grid},64,2560,0,8,0,16,64,0x0,0x0,1,2,3,4\n"
        ));
    }
    s
}

fn base_rows() -> Vec<(u64, u64, &'static str, u32, u32)> {
    vec![
        (1, 0, "_Z6vecAddPfS_S_i.kd", 1024, 2048),
        (1, 1, "plain_kernel", 256, 2048),
        (2, 2, "plain_kernel.kd", 512, 2048),
        (1, 3, VECADD_NAME, 1024, 2048),
    ]
}

#[test]
fn a_capture_equals_itself_at_every_level() {
    let a = capture("self", BASE);
    levels(
        &a,
        &a,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let o = diff(&a, &a, &[]);
    assert!(
        stdout(&o).contains("softgpu diff: SAME at level count (4 dispatches)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn rocprofv3_current_csv_matches_the_capture_and_lds_is_not_compared() {
    let a = capture("v3cur", BASE);
    // Rows out of Dispatch_Id order; LDS_Block_Size is static and rounded, so a
    // different value must not matter, even at exact.
    let mut rows = base_rows();
    rows.swap(0, 3);
    rows.iter_mut().for_each(|r| r.4 = 4096);
    let b = write("v3cur.csv", &v3_current(&rows));
    levels(
        &a,
        &b,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let o = diff(&a, &b, &["--level", "exact"]);
    assert!(stdout(&o).contains("LDS not compared"), "{}", stdout(&o));
}

#[test]
fn rocprofv3_older_csv_compares_lds_at_exact_only() {
    let a = capture("v3old", BASE);
    let b = write("v3old_same.csv", &v3_older(&base_rows()));
    levels(
        &a,
        &b,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let mut rows = base_rows();
    rows[1].4 = 1024;
    let c = write("v3old_lds.csv", &v3_older(&rows));
    levels(
        &a,
        &c,
        &[],
        [("exact", 1), ("count", 0), ("order", 0), ("events", 0)],
    );
}

#[test]
fn rocprof_v1_csv_compares_total_sizes() {
    let a = capture("v1", BASE);
    let b = write(
        "v1.csv",
        &v1(&[
            (0, 0, "_Z6vecAddPfS_S_i.kd", 1024),
            (0, 1, "plain_kernel.kd", 256),
            (1, 2, "plain_kernel.kd", 512),
            (
                0,
                3,
                "vecAdd(float*, float*, float*, int) [clone .kd]",
                1024,
            ),
        ]),
    );
    levels(
        &a,
        &b,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let c = write(
        "v1_grid.csv",
        &v1(&[
            (0, 0, "_Z6vecAddPfS_S_i.kd", 2048),
            (0, 1, "plain_kernel.kd", 256),
            (1, 2, "plain_kernel.kd", 512),
            (0, 3, "_Z6vecAddPfS_S_i.kd", 1024),
        ]),
    );
    levels(
        &a,
        &c,
        &[],
        [("exact", 1), ("count", 0), ("order", 0), ("events", 0)],
    );
}

fn v3_json(dispatches: &[(u64, u64, u64, u32)]) -> String {
    let recs: Vec<Value> = dispatches
        .iter()
        .map(|(q, id, kid, grid)| {
            serde_json::json!({
                "size": 128, "kind": 11, "operation": 1,
                "thread_id": 77, "start_timestamp": 1000, "end_timestamp": 2000,
                "correlation_id": { "internal": id, "external": 0 },
                "dispatch_info": {
                    "size": 88, "agent_id": { "handle": 4 }, "queue_id": { "handle": q },
                    "kernel_id": kid, "dispatch_id": id,
                    "private_segment_size": 0, "group_segment_size": 2048,
                    "workgroup_size": { "x": 64, "y": 1, "z": 1 },
                    "grid_size": { "x": grid, "y": 1, "z": 1 }
                }
            })
        })
        .collect();
    serde_json::json!({
        "rocprofiler-sdk-tool": [{
            "metadata": { "pid": 1 },
            "agents": [],
            "kernel_symbols": [
                { "kernel_id": 1, "kernel_name": "_Z6vecAddPfS_S_i.kd", "formatted_kernel_name": "vecAdd" },
                { "kernel_id": 2, "kernel_name": "plain_kernel.kd" }
            ],
            "buffer_records": { "kernel_dispatch": recs }
        }]
    })
    .to_string()
}

#[test]
fn rocprofv3_json_matches_the_capture() {
    let a = capture("json", BASE);
    // kernel_symbols give the mangled kernel_name and a short formatted name: the
    // symbol is demangled here, so it matches the capture's full name.
    let b = write(
        "v3.json",
        &v3_json(&[
            (1, 1, 1, 1024),
            (1, 2, 2, 256),
            (2, 3, 2, 512),
            (1, 4, 1, 1024),
        ]),
    );
    levels(
        &a,
        &b,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let c = write(
        "v3_swapped.json",
        &v3_json(&[
            (1, 1, 2, 256),
            (1, 2, 1, 1024),
            (2, 3, 2, 512),
            (1, 4, 1, 1024),
        ]),
    );
    levels(
        &a,
        &c,
        &[],
        [("exact", 1), ("count", 0), ("order", 1), ("events", 0)],
    );
}

#[test]
fn levels_report_what_they_must_and_nothing_else() {
    let a = capture("lv_a", BASE);
    // Same dispatches, one grid changed: only exact sees it.
    let grid = capture(
        "lv_grid",
        &[
            (5, VECADD, 1024),
            (5, PLAIN, 128),
            (9, PLAIN, 512),
            (5, VECADD, 1024),
        ],
    );
    levels(
        &a,
        &grid,
        &[],
        [("exact", 1), ("count", 0), ("order", 0), ("events", 0)],
    );
    // Reordered within a queue: exact and order.
    let swapped = capture(
        "lv_order",
        &[
            (5, PLAIN, 256),
            (5, VECADD, 1024),
            (9, PLAIN, 512),
            (5, VECADD, 1024),
        ],
    );
    levels(
        &a,
        &swapped,
        &[],
        [("exact", 1), ("count", 0), ("order", 1), ("events", 0)],
    );
    // Interleaving across queues differs but per-queue order is the same: same.
    let interleaved = capture(
        "lv_inter",
        &[
            (9, PLAIN, 512),
            (5, VECADD, 1024),
            (5, PLAIN, 256),
            (5, VECADD, 1024),
        ],
    );
    // Queue 9 now appears first, so queues pair up differently: order differs.
    levels(
        &a,
        &interleaved,
        &[],
        [("exact", 1), ("count", 0), ("order", 1), ("events", 0)],
    );
    let interleaved2 = capture(
        "lv_inter2",
        &[
            (5, VECADD, 1024),
            (9, PLAIN, 512),
            (5, PLAIN, 256),
            (5, VECADD, 1024),
        ],
    );
    levels(
        &a,
        &interleaved2,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    // One more vecAdd: count, order, exact; not events.
    let extra = capture(
        "lv_count",
        &[
            (5, VECADD, 1024),
            (5, PLAIN, 256),
            (9, PLAIN, 512),
            (5, VECADD, 1024),
            (5, VECADD, 1024),
        ],
    );
    levels(
        &a,
        &extra,
        &[],
        [("exact", 1), ("count", 1), ("order", 1), ("events", 0)],
    );
    // A kernel A never ran: every level.
    let new = capture(
        "lv_events",
        &[
            (5, VECADD, 1024),
            (5, PLAIN, 256),
            (9, PLAIN, 512),
            (5, VECADD, 1024),
            (5, BLIT, 64),
        ],
    );
    levels(
        &a,
        &new,
        &[],
        [("exact", 1), ("count", 1), ("order", 1), ("events", 1)],
    );
    let o = diff(&a, &new, &["--level", "events"]);
    let out = stdout(&o);
    assert!(out.contains("DIFFERENT at level events"), "{out}");
    assert!(out.contains("__amd_rocclr_fillBufferAligned"), "{out}");
}

#[test]
fn ignore_drops_matching_kernels() {
    let a = capture("ig_a", BASE);
    let b = capture(
        "ig_b",
        &[
            (5, BLIT, 64),
            (5, VECADD, 1024),
            (5, PLAIN, 256),
            (9, PLAIN, 512),
            (5, VECADD, 1024),
        ],
    );
    levels(
        &a,
        &b,
        &[],
        [("exact", 1), ("count", 1), ("order", 1), ("events", 1)],
    );
    levels(
        &a,
        &b,
        &["--ignore", "__amd_rocclr_.*"],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    // Two patterns, the second dropping plain_kernel on both sides.
    let c = capture(
        "ig_c",
        &[(5, BLIT, 64), (5, VECADD, 1024), (5, VECADD, 1024)],
    );
    levels(
        &a,
        &c,
        &["--ignore", "^__amd", "--ignore", "^plain"],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let o = diff(&a, &b, &["--ignore", "("]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--ignore"), "{}", stderr(&o));
}

#[test]
fn json_output_has_the_first_divergence_in_context_and_count_differences() {
    let a = capture("js_a", BASE);
    let b = capture(
        "js_b",
        &[
            (5, VECADD, 1024),
            (5, VECADD, 1024),
            (9, PLAIN, 512),
            (5, VECADD, 1024),
        ],
    );
    let o = diff(&a, &b, &["--level", "order", "--format", "json"]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["verdict"]
            .as_str()
            .unwrap()
            .starts_with("softgpu diff: DIFFERENT at level order: queue 0, dispatch 1")
    );
    let d = &v["result"]["first_divergence"];
    assert_eq!(d["queue"], 0);
    assert_eq!(d["index"], 1);
    assert_eq!(d["a"][1]["name"], "plain_kernel");
    assert_eq!(d["b"][1]["name"], VECADD_NAME);
    assert_eq!(d["a"][0]["grid"], serde_json::json!([1024, 1, 1]));
    let counts = v["result"]["count_differences"].as_array().unwrap();
    assert_eq!(counts.len(), 2);
    assert_eq!(v["a"]["kind"], "softgpu_capture");
    // The table names the divergence too.
    let t = stdout(&diff(&a, &b, &["--level", "order"]));
    assert!(t.contains("first divergence: queue 0, dispatch 1"), "{t}");
    assert!(t.contains("per-kernel counts that differ"), "{t}");
}

#[test]
fn inspect_csv_round_trips_against_its_capture() {
    let a = capture("rt", BASE);
    let o = softgpu(&["inspect", a.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code(&o), 0);
    let csv = dir().join("rt_inspect.csv");
    std::fs::write(&csv, &o.stdout).unwrap();
    levels(
        &a,
        &csv,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    levels(
        &csv,
        &a,
        &[],
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
}

#[test]
fn bad_inputs_exit_2_naming_the_file() {
    let good = capture("bad_good", BASE);
    let mut cut = std::fs::read(&good).unwrap();
    cut.truncate(8);
    cut.extend_from_slice(&[0xff; 40]);
    let corrupt = dir().join("corrupt.sgcap");
    std::fs::write(&corrupt, &cut).unwrap();
    let mut bad_num = v3_current(&base_rows());
    bad_num = bad_num.replacen(",1024,1,1", ",12x4,1,1", 1);
    let cases = [
        corrupt,
        write("bad_num.csv", &bad_num),
        write(
            "bad_quote.csv",
            &format!("{V3_HEADER}\n\"KERNEL_DISPATCH\",\"A"),
        ),
        write("bad.json", "{\"rocprofiler-sdk-tool\": [ {"),
        write("other.json", "{\"something\": 1}"),
        write("other.txt", "hello,world\n1,2\n"),
        write("empty.csv", ""),
        write("binary.bin", "\u{0}\u{1}"),
        dir().join("does_not_exist.csv"),
    ];
    for c in &cases {
        for (x, y) in [(&good, c), (c, &good)] {
            let o = diff(x, y, &[]);
            assert_eq!(code(&o), 2, "{}: {}", c.display(), stderr(&o));
            let e = stderr(&o);
            assert!(e.contains(c.to_str().unwrap()), "{e}");
            assert!(!e.contains("panicked"), "{e}");
        }
    }
    let e = stderr(&diff(&good, &cases[1], &[]));
    assert!(e.contains("offset") && e.contains("Grid_Size_X"), "{e}");
    let mut bin = vec![0u8; 16];
    bin.extend_from_slice(&[0xfe; 4]);
    let p = dir().join("latin.csv");
    std::fs::write(&p, bin).unwrap();
    assert_eq!(code(&diff(&good, &p, &[])), 2);
}

/// `softgpu inspect --format chrome` (written with the diff work, and it uses the
/// same captures): valid JSON, one complete event per record on its queue's track.
#[test]
fn inspect_chrome_trace_has_one_event_per_record() {
    let a = capture("chrome", BASE);
    let o = softgpu(&["inspect", a.to_str().unwrap(), "--format", "chrome"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let x: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(x.len(), BASE.len());
    for (e, (q, ko, _)) in x.iter().zip(BASE) {
        assert_eq!(e["tid"], *q);
        assert_eq!(e["args"]["status"], "validated");
        assert!(e["args"]["reasons"].as_array().unwrap().is_empty());
        assert!(e["ts"].as_f64().is_some() && e["dur"].as_f64().unwrap() >= 0.0);
        let want = match *ko {
            0 => "barrier_and",
            VECADD => VECADD_NAME,
            _ => "plain_kernel",
        };
        assert_eq!(e["name"], want);
    }
    // One named track per queue.
    let tracks = events.iter().filter(|e| e["ph"] == "M").count();
    assert_eq!(tracks, 2);
}

/// `v3_json` of the base dispatches, pretty-printed (one value per line), with
/// `edit` applied to the first dispatch record's `dispatch_info`.
fn v3_json_edited(edit: impl Fn(&mut serde_json::Map<String, Value>)) -> String {
    let mut doc: Value = serde_json::from_str(&v3_json(&[
        (1, 1, 1, 1024),
        (1, 2, 2, 256),
        (2, 3, 2, 512),
        (1, 4, 1, 1024),
    ]))
    .unwrap();
    let info =
        doc["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"][0]["dispatch_info"]
            .as_object_mut()
            .unwrap();
    edit(info);
    serde_json::to_string_pretty(&doc).unwrap()
}

#[test]
fn strict_readers_refuse_rows_and_values_a_lenient_reader_would_guess_at() {
    let a = capture("strict_a", BASE);
    // The base rows compare SAME at level count; each case below damages them
    // in one way that a lenient reader reads as something else.
    let same = write("strict_same.csv", &v3_older(&base_rows()));
    assert_eq!(code(&diff(&a, &same, &[])), 0);
    let unquoted = v3_older(&base_rows()).replace(
        &format!("\"{VECADD_NAME}\""),
        VECADD_NAME, // an unquoted name with commas: more fields than the header
    );
    let stray_after = v3_current(&base_rows()).replacen("\"Agent 4\"", "\"Agent 4\"x", 1);
    let stray_inside =
        v3_older(&base_rows()).replacen("KERNEL_DISPATCH,1,", "KERNEL_\"DISPATCH,1,", 1);
    // A second Kernel_Name column (a lenient reader takes the first).
    let duplicate: String = v3_older(&base_rows())
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{l},Kernel_Name\n")
            } else {
                format!("{l},\"other\"\n")
            }
        })
        .collect();
    let fewer =
        v3_older(&base_rows()).replacen(",0,2048,64,1,1,1024,1,1\n", ",0,2048,64,1,1,1024,1\n", 1);
    let bad_lds = v3_older(&base_rows()).replacen(",0,2048,64,", ",0,2k,64,", 1);
    let cases: Vec<(&str, String, &[&str])> = vec![
        (
            "unquoted.csv",
            unquoted,
            &["line 5,", "the row has 19 fields but the header has 16"],
        ),
        (
            "stray_after.csv",
            stray_after,
            &["line 2,", "text after the closing quote"],
        ),
        (
            "stray_inside.csv",
            stray_inside,
            &["line 2,", "a quote inside an unquoted field"],
        ),
        (
            "duplicate.csv",
            duplicate,
            &[
                "line 1,",
                "column Kernel_Name: the header names this column twice (fields 5 and 17)",
            ],
        ),
        (
            "fewer.csv",
            fewer,
            &["line 2,", "the row has 15 fields but the header has 16"],
        ),
        (
            "bad_lds.csv",
            bad_lds,
            &[
                "line 2,",
                "column Group_Segment_Size: not a non-negative integer: \"2k\"",
            ],
        ),
        (
            "grid_y_missing.json",
            v3_json_edited(|i| {
                i["grid_size"].as_object_mut().unwrap().remove("y");
            }),
            &["dispatch_info.grid_size: missing field `y`"],
        ),
        (
            "grid_x_string.json",
            v3_json_edited(|i| i["grid_size"]["x"] = "1024".into()),
            &["dispatch_info.grid_size.x: invalid type: string \"1024\", expected u64"],
        ),
        (
            "grid_x_negative.json",
            v3_json_edited(|i| i["grid_size"]["x"] = (-1).into()),
            &["dispatch_info.grid_size.x: invalid value: integer `-1`, expected u64"],
        ),
        (
            "grid_missing.json",
            v3_json_edited(|i| {
                i.remove("grid_size");
            }),
            &["dispatch_info: missing field `grid_size`"],
        ),
        (
            "workgroup_fraction.json",
            v3_json_edited(|i| i["workgroup_size"]["z"] = 1.5.into()),
            &["dispatch_info.workgroup_size.z: invalid type: floating point `1.5`, expected u64"],
        ),
        (
            "kernel_id_string.json",
            v3_json_edited(|i| i["kernel_id"] = "1".into()),
            &["dispatch_info.kernel_id: "],
        ),
    ];
    for (name, text, says) in &cases {
        let b = write(name, text);
        let o = diff(&a, &b, &[]);
        let e = stderr(&o);
        assert_eq!(code(&o), 2, "{name}: {}{e}", stdout(&o));
        assert!(
            e.contains(&format!("file {}: line ", b.display())),
            "{name}: {e}"
        );
        assert!(e.contains("offset "), "{name}: {e}");
        for s in *says {
            assert!(e.contains(s), "{name}: expected {s:?} in: {e}");
        }
        if name.ends_with(".json") {
            assert!(
                e.contains("rocprofiler-sdk-tool[0].buffer_records.kernel_dispatch[0]"),
                "{name}: the error names the record: {e}"
            );
        }
    }
}

#[test]
fn csv_error_positions_are_the_byte_and_line_of_the_record() {
    let text = v3_current(&base_rows()).replacen(",1024,1,1\r\n", ",10x,1,1\r\n", 1);
    let at = text.find("\"KERNEL_DISPATCH\"").unwrap();
    let b = write("positions.csv", &text);
    let o = diff(&capture("positions_a", BASE), &b, &[]);
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    assert!(
        e.contains(&format!("line 2, offset {at}: column Grid_Size_X")),
        "{e}"
    );
}
