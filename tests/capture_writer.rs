//! The capture writer: round trip through the real writer and reader,
//! back-pressure, concurrent producers, durability and file mode.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use softgpu_hsa::aql::{PacketRecord, ReasonSet, Status};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass, WriterOptions, read_bytes,
    read_file,
};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_writer");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.sgcap"));
    let _ = std::fs::remove_file(&p);
    p
}

fn header() -> CaptureHeader {
    CaptureHeader {
        pid: 4242,
        start_unix_ns: 1_700_000_000_123_456_789,
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

/// Kernarg addresses at or above this are "ours".
const SOFTGPU_BASE: u64 = 0x7000_0000_0000;

fn classify() -> Box<dyn Fn(u64) -> KernargClass + Send + Sync> {
    Box::new(|a| {
        if a >= SOFTGPU_BASE {
            KernargClass::Softgpu
        } else {
            KernargClass::ForeignOpaque
        }
    })
}

fn dispatch_raw(i: u64, kernarg: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..2].copy_from_slice(&(2u16 | (2 << 9) | (2 << 11)).to_le_bytes());
    b[2..4].copy_from_slice(&1u16.to_le_bytes());
    b[4..6].copy_from_slice(&64u16.to_le_bytes());
    b[6..8].copy_from_slice(&1u16.to_le_bytes());
    b[8..10].copy_from_slice(&1u16.to_le_bytes());
    b[12..16].copy_from_slice(&(64 * (i as u32 + 1)).to_le_bytes());
    b[16..20].copy_from_slice(&1u32.to_le_bytes());
    b[20..24].copy_from_slice(&1u32.to_le_bytes());
    b[32..40].copy_from_slice(&(0x1000 + i * 64).to_le_bytes());
    b[40..48].copy_from_slice(&kernarg.to_le_bytes());
    b[56..64].copy_from_slice(&(0x9000 + i).to_le_bytes());
    b
}

fn barrier_raw(kind: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = kind;
    b[1] = 1; // barrier bit
    b
}

fn rec(queue_id: u64, i: u64, raw: [u8; 64], status: Status, reasons: u64) -> PacketRecord {
    PacketRecord {
        queue_id,
        packet_index: i,
        raw,
        status,
        reasons: ReasonSet(reasons),
        observed_ns: 1000 + i * 10,
        done_ns: 1005 + i * 10,
        thread: 77 + queue_id as u32,
    }
}

#[test]
fn records_round_trip_through_the_writer_and_reader() {
    let path = tmp("round_trip");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    assert_eq!(w.path(), path.as_path());
    let mut q1 = w.register_queue(1, 1, 256, 111);
    let mut q2 = w.register_queue(2, 1, 1024, 222);
    let co = w.add_code_object(vec![
        (0x1000, "_Z6vecAddPfS_S_i.kd".into()),
        (0x1040, "plain_kernel.kd".into()),
    ]);
    assert_eq!(co, 0);
    let mut pushed = Vec::new();
    for i in 0..50u64 {
        let (q, p) = if i % 3 == 0 {
            (2, &mut q2)
        } else {
            (1, &mut q1)
        };
        let r = match i % 5 {
            0 => rec(q, i, dispatch_raw(i, 0), Status::Validated, 0),
            1 => rec(
                q,
                i,
                dispatch_raw(i, SOFTGPU_BASE + i),
                Status::Validated,
                0,
            ),
            2 => rec(q, i, dispatch_raw(i, 0x1234_5678), Status::Rejected, 1 << 4),
            3 => rec(q, i, barrier_raw(3), Status::Validated, 0),
            _ => rec(
                q,
                i,
                barrier_raw(5),
                Status::Rejected,
                (1 << 17) | (1 << 63),
            ),
        };
        p.push(&r);
        pushed.push(r);
    }
    let summary = w.finish(3, 99_999).unwrap();
    assert_eq!(summary.path, path);
    assert_eq!(summary.stalls, 3);
    assert_eq!(summary.counts.records, 50);
    assert_eq!(summary.counts.validated, 30);
    assert_eq!(summary.counts.rejected, 20);
    assert_eq!(summary.counts.barriers, 20);
    assert_eq!(summary.counts.dispatches_validated, 20);

    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.truncated_at, None);
    assert_eq!(
        cap.version,
        (
            softgpu_hsa::capture::format::FORMAT_MAJOR,
            softgpu_hsa::capture::format::FORMAT_MINOR
        )
    );
    assert_eq!(cap.header, header());
    assert_eq!(cap.queues.len(), 2);
    assert_eq!(
        (
            cap.queues[0].queue_id,
            cap.queues[0].ring_size,
            cap.queues[0].created_ns
        ),
        (1, 256, 111)
    );
    assert_eq!(cap.queues[1].agent_index, 1);
    assert_eq!(cap.kernel_symbol(0x1000), Some("_Z6vecAddPfS_S_i.kd"));
    assert_eq!(cap.kernel_symbol(0x1040), Some("plain_kernel.kd"));
    assert_eq!(cap.kernel_symbol(0x2000), None);
    assert_eq!(
        cap.agent_of_queue(2).and_then(|a| a.target.as_deref()),
        Some("gfx90a")
    );
    let t = cap.trailer.unwrap();
    assert_eq!(
        (t.stalls, t.end_ns, t.queues, t.code_objects),
        (3, 99_999, 2, 1)
    );
    assert_eq!(t.counts, summary.counts);
    assert_eq!(cap.counts(), summary.counts);

    assert_eq!(cap.records.len(), pushed.len());
    for (i, (got, want)) in cap.records.iter().zip(&pushed).enumerate() {
        assert_eq!(
            got.seq, i as u64,
            "single producer thread: seq is push order"
        );
        assert_eq!(got.packet_record(), *want);
        let expect_class = match i % 5 {
            1 => KernargClass::Softgpu,
            2 => KernargClass::ForeignOpaque,
            _ => KernargClass::Null,
        };
        assert_eq!(got.kernarg_class, expect_class, "record {i}");
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn classify_runs_only_for_dispatches_with_a_kernarg_address() {
    let path = tmp("classify_calls");
    let calls = Arc::new(AtomicU64::new(0));
    let c2 = calls.clone();
    let w = CaptureWriter::create(
        &path,
        header(),
        Box::new(move |_| {
            c2.fetch_add(1, Ordering::Relaxed);
            KernargClass::ForeignOpaque
        }),
    )
    .unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    q.push(&rec(1, 0, dispatch_raw(0, 0), Status::Validated, 0));
    q.push(&rec(1, 1, dispatch_raw(1, 0x40), Status::Validated, 0));
    let mut b = barrier_raw(3);
    b[40] = 0xff; // not a kernarg field in a barrier
    q.push(&rec(1, 2, b, Status::Validated, 0));
    w.finish(0, 0).unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    let cap = read_file(&path).unwrap();
    let classes: Vec<_> = cap.records.iter().map(|r| r.kernarg_class).collect();
    assert_eq!(
        classes,
        [
            KernargClass::Null,
            KernargClass::ForeignOpaque,
            KernargClass::Null
        ]
    );
    let _ = std::fs::remove_file(&path);
}

/// A launch loop as HIP makes one: one queue, one kernel and grid, the
/// kernarg address advancing, only the times and the index moving
/// otherwise. The writer appends such records without a full encoding (its
/// fast path); what is read back must still be every record as pushed, with
/// its own kernarg class, whatever changes in between.
#[test]
fn a_launch_loop_reads_back_record_for_record_with_each_kernarg_class_and_one_classify_each() {
    let path = tmp("launch_loop");
    let calls = Arc::new(AtomicU64::new(0));
    let c2 = calls.clone();
    let inner = classify();
    let w = CaptureWriter::create(
        &path,
        header(),
        Box::new(move |a| {
            c2.fetch_add(1, Ordering::Relaxed);
            inner(a)
        }),
    )
    .unwrap();
    let mut q = w.register_queue(1, 1, 4096, 0);
    let mut q2 = w.register_queue(2, 1, 4096, 0);
    let mut pushed = Vec::new();
    let mut dispatches_with_address = 0;
    let mut index2 = 0;
    for i in 0..3000u64 {
        // Kernarg addresses cross the class boundary and come back; one
        // stretch has none; times move irregularly.
        let addr = match i {
            0..=999 => SOFTGPU_BASE + 0x100_0000 - 500 * 0x40 + i * 0x40,
            1000..=1099 => 0,
            _ => SOFTGPU_BASE + (i % 700) * 0x40 - 0x40 * 300,
        };
        let mut raw = dispatch_raw(0, addr);
        let status = if i % 997 == 5 {
            Status::Rejected
        } else {
            Status::Validated
        };
        let reasons = if status == Status::Rejected {
            1 << 3
        } else {
            0
        };
        if i == 1500 {
            raw = barrier_raw(3);
        }
        if i == 2000 {
            raw[56..64].copy_from_slice(&0x7777u64.to_le_bytes()); // a completion signal
        }
        let mut r = rec(1, i, raw, status, reasons);
        r.observed_ns = 1_000_000 + i * 900 + (i % 7) * 13;
        r.done_ns = r.observed_ns + (i % 5) * 40;
        if i % 401 == 400 {
            r.packet_index += 5; // packets the program skipped
        }
        if raw[0] == 2 && addr != 0 {
            dispatches_with_address += 1;
        }
        q.push(&r);
        pushed.push(r);
        if i % 1234 == 1233 {
            // Another queue in between.
            let r2 = rec(
                2,
                index2,
                dispatch_raw(0, SOFTGPU_BASE + 0x80),
                Status::Validated,
                0,
            );
            index2 += 1;
            dispatches_with_address += 1;
            q2.push(&r2);
            pushed.push(r2);
        }
    }
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len(), pushed.len());
    for (n, (got, want)) in cap.records.iter().zip(&pushed).enumerate() {
        assert_eq!(got.seq, n as u64);
        assert_eq!(got.packet_record(), *want, "record {n}");
        let addr = u64::from_le_bytes(want.raw[40..48].try_into().unwrap());
        let class = if want.raw[0] != 2 || addr == 0 {
            KernargClass::Null
        } else if addr >= SOFTGPU_BASE {
            KernargClass::Softgpu
        } else {
            KernargClass::ForeignOpaque
        };
        assert_eq!(got.kernarg_class, class, "record {n} (address {addr:#x})");
    }
    assert_eq!(
        calls.load(Ordering::Relaxed),
        dispatches_with_address,
        "the classifier runs once per dispatch with a kernarg address"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_panicking_classifier_is_recorded_as_foreign_opaque() {
    let path = tmp("classify_panics");
    let w = CaptureWriter::create(&path, header(), Box::new(|_| panic!("classifier bug"))).unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    q.push(&rec(1, 0, dispatch_raw(0, 0x40), Status::Validated, 0));
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.records[0].kernarg_class, KernargClass::ForeignOpaque);
    let _ = std::fs::remove_file(&path);
}

fn tiny(ring_capacity: usize) -> WriterOptions {
    WriterOptions {
        ring_capacity,
        ..WriterOptions::default()
    }
}

#[test]
fn a_slow_writer_makes_producers_wait_and_loses_nothing() {
    let path = tmp("backpressure_slow");
    // The classifier runs on the writer thread: sleeping there makes it slow.
    let slow: Box<dyn Fn(u64) -> KernargClass + Send + Sync> = Box::new(|_| {
        std::thread::sleep(Duration::from_micros(20));
        KernargClass::ForeignOpaque
    });
    let w = CaptureWriter::create_with(&path, header(), slow, tiny(4)).unwrap();
    let mut q = w.register_queue(9, 1, 64, 0);
    let n = 2_000u64;
    for i in 0..n {
        q.push(&rec(
            9,
            i,
            dispatch_raw(i, 0x40 + i * 8),
            Status::Validated,
            0,
        ));
    }
    let s = w.finish(0, 1).unwrap();
    assert_eq!(s.counts.records, n);
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    let seqs: Vec<u64> = cap.records.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, (0..n).collect::<Vec<_>>());
    let idx: Vec<u64> = cap.records.iter().map(|r| r.packet_index).collect();
    assert_eq!(idx, (0..n).collect::<Vec<_>>());
    assert_eq!(w.discarded(), 0);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_fast_producer_on_a_tiny_ring_loses_nothing() {
    let path = tmp("backpressure_fast");
    let w = CaptureWriter::create_with(&path, header(), classify(), tiny(2)).unwrap();
    let mut q = w.register_queue(3, 1, 64, 0);
    let n = 100_000u64;
    for i in 0..n {
        q.prepare();
        q.push(&rec(3, i, barrier_raw(3), Status::Validated, 0));
    }
    let s = w.finish(0, 1).unwrap();
    assert_eq!(s.counts.records, n);
    assert_eq!(s.counts.barriers, n);
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.records.len() as u64, n);
    assert!(
        cap.records
            .iter()
            .enumerate()
            .all(|(i, r)| r.seq == i as u64 && r.packet_index == i as u64)
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn four_concurrent_producers_get_unique_contiguous_seqs() {
    let path = tmp("four_producers");
    let w = CaptureWriter::create_with(&path, header(), classify(), tiny(64)).unwrap();
    let per = 50_000u64;
    std::thread::scope(|s| {
        for q in 0..4u64 {
            let mut p = w.register_queue(100 + q, 1, 128, q);
            s.spawn(move || {
                for i in 0..per {
                    // The doorbell path's hint (a prefetch of the slot it
                    // will probably take, which another producer may take
                    // first) changes nothing, given or not.
                    if (i + q) % 3 != 0 {
                        p.prepare();
                    }
                    p.push(&rec(100 + q, i, dispatch_raw(i, 0), Status::Validated, 0));
                }
            });
        }
    });
    let s = w.finish(0, 1).unwrap();
    assert_eq!(s.counts.records, 4 * per);
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.records.len() as u64, 4 * per);
    let mut next: HashMap<u64, u64> = HashMap::new();
    for (i, r) in cap.records.iter().enumerate() {
        assert_eq!(r.seq, i as u64, "seq contiguous from 0");
        let n = next.entry(r.queue_id).or_default();
        assert_eq!(r.packet_index, *n, "per-queue order follows seq order");
        *n += 1;
    }
    assert_eq!(next.len(), 4);
    assert!(next.values().all(|&n| n == per));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_capture_file_is_created_with_mode_0600() {
    let path = tmp("mode");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    w.finish(0, 0).unwrap();

    // An existing, more open file is replaced by a new 0600 one. (The old
    // capture is unlinked first: truncating a capture while its writer runs
    // would take its mapped ring away from under it.)
    drop(w);
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    w.finish(0, 0).unwrap();
    assert!(read_file(&path).unwrap().complete);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn finish_is_idempotent() {
    let path = tmp("finish_twice");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    q.push(&rec(1, 0, barrier_raw(5), Status::Validated, 0));
    let a = w.finish(1, 2).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let b = w.finish(7, 8).unwrap();
    assert_eq!(a, b, "the second call reports the first call's result");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "and writes nothing");
    assert!(w.flush().is_ok());
    let cap = read_bytes(&bytes).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.trailer.unwrap().stalls, 1);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn flush_makes_pushed_records_readable_before_finish() {
    let path = tmp("flush");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    for i in 0..10 {
        q.push(&rec(1, i, barrier_raw(3), Status::Validated, 0));
    }
    w.flush().unwrap();
    let cap = read_file(&path).unwrap();
    assert!(!cap.complete, "no trailer yet");
    assert_eq!(
        cap.truncated_at, None,
        "every frame written so far is whole"
    );
    assert_eq!(cap.records.len(), 10);
    w.finish(0, 0).unwrap();
    assert!(read_file(&path).unwrap().complete);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_header_is_on_disk_as_soon_as_create_returns() {
    let path = tmp("header_durable");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.header, header());
    assert!(cap.records.is_empty() && !cap.complete);
    drop(w);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn dropping_without_finish_leaves_an_incomplete_capture_with_every_record() {
    let path = tmp("drop_unfinished");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    for i in 0..100 {
        q.push(&rec(1, i, barrier_raw(3), Status::Validated, 0));
    }
    drop(q);
    drop(w);
    let cap = read_file(&path).unwrap();
    assert!(!cap.complete);
    assert!(cap.trailer.is_none());
    assert_eq!(cap.records.len(), 100);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn records_pushed_after_finish_are_written_after_the_trailer_as_late_records_never_dropped() {
    // Threads still launching while the program exits: finish writes the
    // trailer, and what they push afterwards is still captured, after it, and
    // the capture says so (it is not complete). The 1.x writer discarded them.
    let path = tmp("push_after_finish");
    let w = CaptureWriter::create_with(&path, header(), classify(), tiny(2)).unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    q.push(&rec(1, 0, barrier_raw(3), Status::Validated, 0));
    let s = w.finish(0, 0).unwrap();
    assert_eq!(s.counts.records, 1);
    let mut late = w.register_queue(2, 1, 64, 0);
    for i in 1..6 {
        q.push(&rec(1, i, barrier_raw(3), Status::Validated, 0));
    }
    late.push(&rec(2, 0, barrier_raw(3), Status::Validated, 0));
    assert_eq!(w.discarded(), 0);
    w.drain();
    let cap = read_file(&path).unwrap();
    assert!(!cap.complete, "late records: never complete");
    assert!(cap.trailer.is_some());
    assert_eq!(cap.trailer.unwrap().counts.records, 1);
    assert_eq!(cap.records.len(), 7, "every record, late ones included");
    assert_eq!(cap.end.late_records, 6);
    assert_eq!(cap.end.late_queues, vec![1, 2]);
    assert_eq!(cap.end.recovered, 0, "the writer encoded them all");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_huge_symbol_table_round_trips() {
    let path = tmp("big_code_object");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let name = "k".repeat(3000);
    let syms: Vec<(u64, String)> = (0..3000u64)
        .map(|i| (i * 64, format!("{name}{i}.kd")))
        .collect();
    w.add_code_object(syms.clone());
    w.add_code_object(vec![]);
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.code_objects.len(), 2);
    assert_eq!(cap.code_objects[0].symbols.len(), 3000);
    // Names are cut at 4096 bytes; these are shorter.
    assert_eq!(cap.code_objects[0].symbols, syms);
    assert!(cap.code_objects[1].symbols.is_empty());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_writer_is_send_and_sync_and_producers_are_send() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<CaptureWriter>();
    send_sync::<Arc<CaptureWriter>>();
    send::<softgpu_hsa::capture::QueueProducer>();
}

#[test]
fn registering_a_queue_id_twice_keeps_one_queue_frame_and_every_record() {
    let path = tmp("queue_twice");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut a = w.register_queue(1, 1, 64, 0);
    let mut b = w.register_queue(1, 1, 64, 5);
    a.push(&rec(1, 0, barrier_raw(3), Status::Validated, 0));
    b.push(&rec(1, 1, barrier_raw(3), Status::Validated, 0));
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.queues.len(), 1);
    assert_eq!(cap.queues[0].created_ns, 0);
    assert_eq!(cap.records.len(), 2);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn after_drain_a_freed_kernarg_is_still_classified_as_it_was_when_pushed() {
    use std::collections::HashSet;
    use std::sync::Mutex;
    let path = tmp("drain");
    let owned: Arc<Mutex<HashSet<u64>>> = Arc::new(Mutex::new(HashSet::from([0x5000])));
    let o2 = owned.clone();
    // A slow poll, so without drain the record would still be in the ring.
    let opts = WriterOptions {
        poll_interval: Duration::from_secs(5),
        ..WriterOptions::default()
    };
    let w = CaptureWriter::create_with(
        &path,
        header(),
        Box::new(move |a| {
            if o2.lock().unwrap().contains(&a) {
                KernargClass::Softgpu
            } else {
                KernargClass::ForeignOpaque
            }
        }),
        opts,
    )
    .unwrap();
    let mut q = w.register_queue(1, 1, 64, 0);
    w.drain(); // nothing pushed: returns at once
    q.push(&rec(1, 0, dispatch_raw(0, 0x5000), Status::Validated, 0));
    w.drain();
    owned.lock().unwrap().remove(&0x5000); // the runtime frees the kernargs
    q.push(&rec(1, 1, dispatch_raw(1, 0x5000), Status::Validated, 0));
    w.finish(0, 0).unwrap();
    w.drain(); // finished: returns at once
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.records[0].kernarg_class, KernargClass::Softgpu);
    assert_eq!(cap.records[1].kernarg_class, KernargClass::ForeignOpaque);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_writer_stores_reasons_as_given_and_adds_no_finding_of_its_own() {
    // The capture is a pure format: whether a dispatch of a HIP blit kernel
    // carries runtime_blit_kernel_not_executed is the processor's decision
    // (tests/aql_processor.rs), not the writer's, whatever the symbol says.
    use softgpu_hsa::aql::Reason;
    let path = tmp("blit_finding");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut q = w.register_queue(1, 1, 256, 0);
    // dispatch_raw(i) uses kernel object 0x1000 + 64 i.
    w.add_code_object(vec![
        (0x1000, "__amd_rocclr_fillBufferAligned.kd".into()),
        (0x1040, "_Z4vaddPKfS0_Pfi.kd".into()),
    ]);
    let mut flagged = rec(1, 1, dispatch_raw(1, 0), Status::Validated, 0);
    flagged.reasons.insert(Reason::RuntimeBlitKernelNotExecuted);
    q.push(&rec(1, 0, dispatch_raw(0, 0), Status::Validated, 0));
    q.push(&flagged);
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    assert_eq!(cap.records.len(), 2);
    assert!(cap.records[0].reasons.is_empty(), "{:?}", cap.records[0]);
    assert_eq!(cap.records[1].reasons, flagged.reasons);
    assert_eq!(cap.records[1].status, Status::Validated);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn kernel_register_counts_and_static_sizes_round_trip_by_kernel_object() {
    use softgpu_hsa::capture::KernelMeta;
    let path = tmp("kernel_info");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let k = KernelMeta {
        kernel_object: 0x1000,
        sgpr_count: 11,
        vgpr_count: 8,
        agpr_count: 4,
        group_segment_fixed_size: 1024,
        private_segment_fixed_size: 16,
        kernarg_size: 24,
        wavefront_size: 64,
        max_flat_workgroup_size: 256,
    };
    w.add_code_object(vec![(0x1000, "_Z1kv.kd".into())]);
    w.add_kernel_info(vec![k]);
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    assert!(
        cap.version >= (1, 1),
        "KernelInfo frames came with format 1.1"
    );
    assert_eq!(cap.kernels.get(&0x1000), Some(&k));
    let _ = std::fs::remove_file(&path);
}

// ---------------------------------------------------------------------------
// Creating the file safely: nothing already at the name is followed, opened,
// written or chmod-ed
// ---------------------------------------------------------------------------

fn fresh_dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("capture_create")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Files in `dir` other than `keep`: a refused or finished creation leaves
/// no temporary file behind.
fn strays(dir: &std::path::Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

/// The message of a capture creation that must be refused at `path`.
fn refused(path: &std::path::Path) -> String {
    match CaptureWriter::create(path, header(), classify()) {
        Ok(_) => panic!("a capture was created at {}", path.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_symlink_planted_at_the_capture_name_is_refused_and_neither_it_nor_its_target_changes() {
    use std::os::unix::fs::MetadataExt;
    let d = fresh_dir("symlink");
    let target = d.join("precious.txt");
    std::fs::write(&target, b"do not touch").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = std::fs::metadata(&target).unwrap();
    let path = d.join("softgpu-123.sgcap");
    std::os::unix::fs::symlink(&target, &path).unwrap();
    let msg = refused(&path);
    assert!(
        msg.contains("a symbolic link is at the capture's name; refusing to replace it"),
        "{msg}"
    );
    let after = std::fs::metadata(&target).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"do not touch");
    assert_eq!(after.mode() & 0o777, 0o644, "the target was not chmod-ed");
    assert_eq!((after.ino(), after.size()), (before.ino(), before.size()));
    assert!(
        std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is still there"
    );
    assert!(strays(&d, &["precious.txt", "softgpu-123.sgcap"]).is_empty());
}

#[test]
fn a_fifo_planted_at_the_capture_name_is_never_opened_so_create_cannot_hang() {
    use std::os::unix::fs::FileTypeExt;
    let d = fresh_dir("fifo");
    let path = d.join("softgpu-123.sgcap");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap()
            .success()
    );
    // The 1.x writer opened the name for writing: with no reader on the FIFO
    // that blocks forever. Give it a (generous) deadline on a thread.
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.clone();
    std::thread::spawn(move || {
        let r = CaptureWriter::create(&p, header(), classify()).map(|w| {
            w.finish(0, 0).unwrap();
        });
        let _ = tx.send(r.map_err(|e| e.to_string()));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("create blocked on a FIFO at the capture name");
    let msg = r.unwrap_err();
    assert!(
        msg.contains("a FIFO is at the capture's name; refusing to replace it"),
        "{msg}"
    );
    assert!(
        std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO is still there"
    );
    assert!(strays(&d, &["softgpu-123.sgcap"]).is_empty());
}

#[test]
fn a_device_node_or_socket_at_the_capture_name_is_refused_and_stays_what_it_was() {
    use std::os::unix::fs::FileTypeExt;
    // Run as root, the 2.x shim renamed its file over whatever the name held:
    // SOFTGPU_CAPTURE=/dev/full became a 2 MB regular file. A node of our own
    // (the same device numbers as /dev/full: 1, 7) stands in for it here.
    let d = fresh_dir("device");
    let node = d.join("full");
    let st = std::process::Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "7"])
        .status()
        .unwrap();
    assert!(
        st.success(),
        "mknod needs root: run the tests as root (./scripts/setup)"
    );
    let msg = refused(&node);
    assert!(
        msg.contains("a device node is at the capture's name; refusing to replace it"),
        "{msg}"
    );
    assert!(
        std::fs::symlink_metadata(&node)
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let sock_path = d.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    let msg = refused(&sock_path);
    assert!(
        msg.contains("a socket is at the capture's name; refusing to replace it"),
        "{msg}"
    );
    assert!(
        std::fs::symlink_metadata(&sock_path)
            .unwrap()
            .file_type()
            .is_socket()
    );
    assert!(strays(&d, &["full", "sock"]).is_empty());
}

#[test]
fn an_existing_regular_file_is_replaced_not_truncated_in_place() {
    use std::os::unix::fs::MetadataExt;
    let d = fresh_dir("existing");
    let path = d.join("c.sgcap");
    std::fs::write(&path, b"an old capture").unwrap();
    // A hard link shows whether the old inode was written through.
    let link = d.join("old-link");
    std::fs::hard_link(&path, &link).unwrap();
    let old_ino = std::fs::metadata(&path).unwrap().ino();
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    w.finish(0, 0).unwrap();
    assert_ne!(std::fs::metadata(&path).unwrap().ino(), old_ino);
    assert_eq!(std::fs::read(&link).unwrap(), b"an old capture");
    assert!(read_file(&path).unwrap().complete);
}

#[test]
fn a_directory_at_the_capture_name_is_refused_with_a_clear_message() {
    let d = fresh_dir("directory");
    let path = d.join("c.sgcap");
    std::fs::create_dir(&path).unwrap();
    let msg = refused(&path);
    assert!(
        msg.contains("a directory is at the capture's name"),
        "{msg}"
    );
    assert!(msg.contains("c.sgcap"), "{msg}");
    assert!(std::fs::metadata(&path).unwrap().is_dir());
    assert!(
        strays(&d, &["c.sgcap"]).is_empty(),
        "no temporary file left"
    );
}

#[test]
fn another_users_file_in_a_sticky_directory_is_refused_not_replaced() {
    use std::os::unix::fs::MetadataExt;
    let d = fresh_dir("sticky");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let path = d.join("softgpu-123.sgcap");
    std::fs::write(&path, b"someone else's").unwrap();
    let me = std::fs::metadata(&d).unwrap().uid();
    let other = if me == 65534 { 65533 } else { 65534 };
    let st = std::process::Command::new("chown")
        .arg(other.to_string())
        .arg(&path)
        .status()
        .unwrap();
    assert!(
        st.success(),
        "chown needs root: run the tests as root (./scripts/setup)"
    );
    let msg = refused(&path);
    assert!(
        msg.contains("refusing to replace another user's file"),
        "{msg}"
    );
    assert!(msg.contains(&format!("uid {other}")), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), b"someone else's");
    assert!(strays(&d, &["softgpu-123.sgcap"]).is_empty());
}

#[test]
fn another_users_file_is_refused_in_any_directory_not_only_a_sticky_one() {
    let d = fresh_dir("others");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = d.join("c.sgcap");
    std::fs::write(&path, b"someone else's").unwrap();
    let st = std::process::Command::new("chown")
        .arg("65534")
        .arg(&path)
        .status()
        .unwrap();
    assert!(
        st.success(),
        "chown needs root: run the tests as root (./scripts/setup)"
    );
    let msg = refused(&path);
    assert!(
        msg.contains("refusing to replace another user's file"),
        "{msg}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"someone else's");
    assert!(strays(&d, &["c.sgcap"]).is_empty());
}

#[test]
fn a_destroyed_queue_leaves_the_writers_list_so_it_stays_bounded_by_the_live_queues() {
    // The 1.x writer kept every registered queue's ring in its list and polled
    // it forever (200,000 create/destroy cycles: 19.9 GB). Each queue's entry
    // must go with its QueueEnd: after 50,000 cycles with one queue kept open,
    // the writer holds one entry, not 50,001. (RSS and time over 200,000
    // cycles under the shim: scripts/bench-queue-cycles.)
    const CYCLES: u64 = 50_000;
    let path = tmp("queue_churn");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    let mut kept = w.register_queue(1, 1, 64, 0);
    kept.push(&rec(1, 0, barrier_raw(3), Status::Validated, 0));
    for q in 2..CYCLES + 2 {
        let mut p = w.register_queue(q, 1, 64, q);
        p.push(&rec(q, 0, barrier_raw(3), Status::Validated, 0));
        p.end(0, q);
    }
    w.drain();
    // The writer takes the last QueueEnds at its next pass; wait for it (a
    // bounded wait for a condition, not a timed assertion).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while w.tracked_queues() > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        w.tracked_queues(),
        1,
        "the writer still holds entries of destroyed queues"
    );
    kept.end(0, 1);
    w.finish(0, 0).unwrap();
    assert_eq!(w.tracked_queues(), 0, "finish leaves no queue entry behind");
    let cap = read_file(&path).unwrap();
    assert!(cap.complete, "{:?}", cap.end);
    assert_eq!(cap.queues.len() as u64, CYCLES + 1);
    assert_eq!(cap.records.len() as u64, CYCLES + 1);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_queue_id_registered_again_after_its_queue_end_reads_back_with_every_record() {
    let path = tmp("queue_again");
    let w = CaptureWriter::create(&path, header(), classify()).unwrap();
    for round in 0..200u64 {
        let mut p = w.register_queue(5, 1, 64, round);
        p.push(&rec(5, round, barrier_raw(3), Status::Validated, 0));
        p.end(round % 2, round);
    }
    w.finish(0, 0).unwrap();
    let cap = read_file(&path).unwrap();
    // Every pending packet is still counted, however the ends were merged.
    assert_eq!(cap.end.pending_packets(), 100, "{:?}", cap.end);
    assert!(!cap.complete);
    assert_eq!(cap.records.len(), 200);
    assert_eq!(cap.queues.len(), 1, "readers keep the first Queue frame");
    assert_eq!(w.tracked_queues(), 0);
    let _ = std::fs::remove_file(&path);
}
