//! AQL layer microbenchmarks: parse+validate per packet, and the processor per
//! packet with a sink that does what the real capture sink does on the hot
//! path (a fixed-size record copy into a preallocated per-queue ring) and
//! reads a real monotonic clock.
//!
//! Run: `cargo bench --bench aql`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

use softgpu_hsa::aql::mock::{MockQueue, MockSignals, barrier_and, valid_dispatch};
use softgpu_hsa::aql::parse::{encode_barrier_and, encode_kernel_dispatch};
use softgpu_hsa::aql::{
    DecodedPacket, PacketRecord, Processor, QueueState, RecordSink, parse_supported_packet,
};

/// A preallocated ring of records, overwritten in turn: one 120-odd byte copy
/// per record, like an SPSC ring push, with no allocation.
struct RingSink {
    ring: Vec<PacketRecord>,
    next: usize,
    epoch: Instant,
}

impl RingSink {
    fn new(capacity: usize, template: PacketRecord) -> RingSink {
        RingSink {
            ring: vec![template; capacity],
            next: 0,
            epoch: Instant::now(),
        }
    }
}

impl RecordSink for RingSink {
    fn record(&mut self, rec: &PacketRecord) {
        let i = self.next;
        self.ring[i] = *rec;
        self.next = if i + 1 == self.ring.len() { 0 } else { i + 1 };
    }
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    fn thread_id(&self) -> u32 {
        1
    }
}

fn bench_parse(c: &mut Criterion) {
    let valid = encode_kernel_dispatch(&valid_dispatch(0x7f00_0000_1000, 0x7000_0000));
    let mut bad = valid_dispatch(0x1001, 0);
    bad.setup = 0xFFF0;
    bad.workgroup_size_y = 0;
    bad.reserved0 = 1;
    let bad = encode_kernel_dispatch(&bad);
    let barrier = encode_barrier_and(&barrier_and([0x40, 0x80, 0, 0, 0], 0xC0));

    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Elements(1));
    g.bench_function("valid_dispatch", |b| {
        b.iter(|| parse_supported_packet(black_box(&valid)))
    });
    g.bench_function("rejected_dispatch_many_reasons", |b| {
        b.iter(|| parse_supported_packet(black_box(&bad)))
    });
    g.bench_function("barrier_and", |b| {
        b.iter(|| parse_supported_packet(black_box(&barrier)))
    });
    g.bench_function("decode_dispatch", |b| {
        b.iter(|| DecodedPacket::decode(black_box(&valid)))
    });
    g.finish();
}

const RING: u64 = 1024;
const BATCH: u64 = 256;

fn bench_processor(c: &mut Criterion) {
    let p = Processor::default();
    let signals = MockSignals::new(&[i64::MAX]);
    let completion = signals.handle(0);
    let packets: Vec<[u8; 64]> = (0..BATCH)
        .map(|i| encode_kernel_dispatch(&valid_dispatch((i + 1) * 64, completion)))
        .collect();

    let mut g = c.benchmark_group("processor");
    g.throughput(Throughput::Elements(BATCH));

    // Drain only: the batch is published untimed, then one drain is timed.
    g.bench_function("drain_per_packet_batch256", |b| {
        let q = MockQueue::new(RING);
        let mut state = QueueState::default();
        let mut sink = RingSink::new(4096, dummy_record());
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for bytes in &packets {
                    q.submit(bytes);
                }
                let t = Instant::now();
                black_box(p.drain(&mut state, 1, &q, &signals, &mut sink));
                total += t.elapsed();
            }
            total
        })
    });

    // Producer publish plus drain, one doorbell per packet (the worst case:
    // every packet pays the drain's fixed cost).
    g.bench_function("publish_and_drain_one_by_one", |b| {
        let q = MockQueue::new(RING);
        let mut state = QueueState::default();
        let mut sink = RingSink::new(4096, dummy_record());
        b.iter(|| {
            for bytes in &packets {
                q.submit(bytes);
                black_box(p.drain(&mut state, 1, &q, &signals, &mut sink));
            }
        })
    });

    // Rejects take the same path minus the completion.
    g.bench_function("drain_rejects_batch256", |b| {
        let q = MockQueue::new(RING);
        let mut state = QueueState::default();
        let mut sink = RingSink::new(4096, dummy_record());
        let mut bad = valid_dispatch(64, completion);
        bad.grid_size_x = 0;
        let bad = encode_kernel_dispatch(&bad);
        b.iter_batched(
            || {
                for _ in 0..BATCH {
                    q.submit(&bad);
                }
            },
            |()| black_box(p.drain(&mut state, 1, &q, &signals, &mut sink)),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn dummy_record() -> PacketRecord {
    PacketRecord {
        queue_id: 0,
        packet_index: 0,
        raw: [0; 64],
        status: softgpu_hsa::aql::Status::Validated,
        reasons: softgpu_hsa::aql::ReasonSet::EMPTY,
        observed_ns: 0,
        done_ns: 0,
        thread: 0,
    }
}

criterion_group!(benches, bench_parse, bench_processor);
criterion_main!(benches);
