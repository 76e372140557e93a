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
//! - `capture_on_sustained`: no pause, so the writer thread (CRC + write(2) of
//!   each 138-byte frame) is the bottleneck and producers feel back-pressure.
//!   This is the capture's maximum sustained rate on this machine.
//!
//! Run: `cargo bench --bench capture_path`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use softgpu_hsa::aql::mock::{MockQueue, MockSignals, valid_dispatch};
use softgpu_hsa::aql::parse::encode_kernel_dispatch;
use softgpu_hsa::aql::{PacketRecord, Processor, QueueState, RecordSink};
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
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
