//! The processor per packet with the real capture enabled: the sink is the
//! capture's own per-queue producer (`QueueProducer::push`), and the capture's
//! writer thread encodes and writes the file in the background, as in the shim.
//! Compared in the same run with capture off (a sink that only counts), so the
//! ratio is what capture costs on the doorbell path.
//!
//! Two capture-on figures:
//! - `capture_on`: the doorbell-path cost. Between timed batches the bench
//!   waits (untimed) for the writer to catch up, as it does between real
//!   launches, so the timed part is the processor plus ring pushes.
//! - `capture_on_sustained`: no pause, so the writer thread (reading the live
//!   ring, delta-encoding PacketBatch frames, one `pwrite` per pass) is the
//!   bottleneck and producers feel back-pressure. This is the capture's
//!   maximum sustained rate on this machine.
//!
//! After the criterion groups it prints, from the same run (issue 14's
//! figures; nothing is asserted):
//! - the writer's sustained rate: one producer thread pushing 2,000,000
//!   launch-loop records (same kernel and grid, kernarg address advancing,
//!   about 1.7 us apart) as fast as it can, until the writer has encoded them;
//! - bytes per dispatch in the frame stream, for that launch loop and for the
//!   processor batch above (64 kernels, a grid size per packet);
//! - RSS growth over 1,000,000 dispatches pushed (the ring's pages included).
//!
//! Run: `cargo bench --bench capture_path`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use softgpu_hsa::abi::{HsaSignal, KernelDispatchPacket};
use softgpu_hsa::aql::mock::{MockQueue, MockSignals, valid_dispatch};
use softgpu_hsa::aql::parse::encode_kernel_dispatch;
use softgpu_hsa::aql::{PacketRecord, Processor, QueueState, ReasonSet, RecordSink, Status};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass, QueueProducer,
};

const BATCH: u64 = 256;

struct CaptureSink {
    producer: QueueProducer,
    epoch: Instant,
}

impl RecordSink for CaptureSink {
    #[inline]
    fn record(&mut self, rec: &PacketRecord) {
        self.producer.push(rec);
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    #[inline]
    fn thread_id(&self) -> u32 {
        1
    }
}

struct CountSink {
    n: u64,
    epoch: Instant,
}

impl RecordSink for CountSink {
    #[inline]
    fn record(&mut self, _rec: &PacketRecord) {
        self.n += 1;
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    #[inline]
    fn thread_id(&self) -> u32 {
        1
    }
}

fn run<K: RecordSink>(c: &mut Criterion, name: &str, mut sink: K, between: impl Fn()) {
    let p = Processor::default();
    let signals = MockSignals::new(&[0]);
    // No completion signal: the common HIP launch.
    let packets: Vec<[u8; 64]> = (0..BATCH)
        .map(|i| encode_kernel_dispatch(&valid_dispatch((i + 1) * 64, 0)))
        .collect();
    let mut g = c.benchmark_group("processor_with_capture");
    g.throughput(Throughput::Elements(BATCH));
    let q = MockQueue::new(1024);
    let mut state = QueueState::default();
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for bytes in &packets {
                    q.submit(bytes);
                }
                let t = Instant::now();
                black_box(p.drain(&mut state, 1, &q, &signals, &mut sink));
                total += t.elapsed();
                between();
            }
            total
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("softgpu-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.sgcap");
    let header = CaptureHeader {
        pid: std::process::id(),
        start_unix_ns: 0,
        mode: "bench".into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    };
    let writer =
        CaptureWriter::create(&path, header, Box::new(|_| KernargClass::ForeignOpaque)).unwrap();
    let producer = writer.register_queue(1, 1, 1024, 0);
    let sustained = writer.register_queue(2, 1, 1024, 0);
    run(
        c,
        "capture_off",
        CountSink {
            n: 0,
            epoch: Instant::now(),
        },
        || {},
    );
    run(
        c,
        "capture_on",
        CaptureSink {
            producer,
            epoch: Instant::now(),
        },
        || writer.drain(),
    );
    run(
        c,
        "capture_on_sustained",
        CaptureSink {
            producer: sustained,
            epoch: Instant::now(),
        },
        || {},
    );
    let _ = writer.finish(0, 0);
    let batch_bytes = stream_bytes(&path) as f64 / read_records(&path) as f64;
    figures(&dir, batch_bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes of a capture file after its Ring frame (the frame stream).
fn stream_bytes(path: &std::path::Path) -> u64 {
    let data = std::fs::read(path).unwrap();
    let mut pos = 16usize;
    for _ in 0..2 {
        let len = u32::from_le_bytes(data[pos + 2..pos + 6].try_into().unwrap()) as usize;
        pos += 6 + len + 4;
    }
    (data.len() - pos) as u64
}

fn read_records(path: &std::path::Path) -> u64 {
    softgpu_hsa::capture::read_file(path).unwrap().records.len() as u64
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A HIP-like launch loop: one kernel, one grid, the kernarg address moving
/// through a pool, no completion signal, launches about 1.7 us apart.
fn launch_loop_record(i: u64) -> PacketRecord {
    let mut d: KernelDispatchPacket = valid_dispatch(0x7f00_1234_5000, 0);
    d.grid_size_x = 1 << 20;
    d.workgroup_size_x = 256;
    d.kernarg_address = 0x7f00_8000_0000 + (i % 4096) * 64;
    d.completion_signal = HsaSignal { handle: 0 };
    let t = 1_000_000 + i * 1700;
    PacketRecord {
        queue_id: 1,
        packet_index: i,
        raw: encode_kernel_dispatch(&d),
        status: Status::Validated,
        reasons: ReasonSet::EMPTY,
        observed_ns: t,
        done_ns: t + 40,
        thread: 4242,
    }
}

fn figures(dir: &std::path::Path, batch_bytes: f64) {
    let header = || CaptureHeader {
        pid: std::process::id(),
        start_unix_ns: 0,
        mode: "bench".into(),
        agents: vec![],
    };
    // Writer sustained rate.
    let path = dir.join("sustained.sgcap");
    let w = CaptureWriter::create(&path, header(), Box::new(|_| KernargClass::Softgpu)).unwrap();
    let n = 2_000_000u64;
    let recs: Vec<PacketRecord> = (0..n).map(launch_loop_record).collect();
    let mut p = w.register_queue(1, 0, 1024, 0);
    let t = Instant::now();
    for r in &recs {
        p.push(r);
    }
    let pushed = t.elapsed();
    w.drain();
    let done = t.elapsed();
    let waits = w.waits();
    let _ = w.finish(0, 0);
    let loop_bytes = stream_bytes(&path) as f64 / n as f64;
    println!(
        "capture writer, sustained: {n} launch-loop records in {:.3} s = {:.2} M records/s \
         (the producer alone was done after {:.3} s; it waited {waits} times)",
        done.as_secs_f64(),
        n as f64 / done.as_secs_f64() / 1e6,
        pushed.as_secs_f64()
    );
    println!(
        "capture size: {loop_bytes:.1} bytes per dispatch for the launch loop, \
         {batch_bytes:.1} for the processor batch (64 kernels, varying grids); 1.x wrote 138"
    );
    drop(recs);
    // RSS growth over 1,000,000 dispatches.
    let path = dir.join("rss.sgcap");
    let before = rss_kib();
    let w = CaptureWriter::create(&path, header(), Box::new(|_| KernargClass::Softgpu)).unwrap();
    let mut p = w.register_queue(1, 0, 1024, 0);
    for i in 0..1_000_000u64 {
        p.push(&launch_loop_record(i));
    }
    w.drain();
    let after = rss_kib();
    let _ = w.finish(0, 0);
    println!(
        "RSS growth over 1,000,000 dispatches: {:.1} MiB (ring {} KiB of it)",
        after.saturating_sub(before) as f64 / 1024.0,
        softgpu_hsa::capture::DEFAULT_RING_CAPACITY * 128 / 1024
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
