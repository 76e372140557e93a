//! Stress: many producer threads on MULTI queues, each ringing the doorbell
//! and racing to become the drainer through the `DoorbellGate`.
//!
//! Producers behave as HSA producers do: reserve a slot with a fetch-add on
//! `write_index`, wait while the ring is full, write the body, publish the
//! header last with release, ring. Every packet carries a unique id in its
//! kernel object. Checks: every submitted packet is captured exactly once, in
//! index order per queue, each producer's packets in its submission order, and
//! every completion signal decremented exactly once per packet.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use softgpu_hsa::aql::mock::{MockQueue, MockSignals, valid_dispatch};
use softgpu_hsa::aql::parse::encode_kernel_dispatch;
use softgpu_hsa::aql::{
    DoorbellGate, PacketRecord, Processor, QueueMemory, QueueState, RecordSink, Status,
};

/// What the stress sink keeps of each record: small, so 400,000 fit easily.
#[derive(Clone, Copy)]
struct Seen {
    queue_id: u64,
    packet_index: u64,
    kernel_object: u64,
    validated: bool,
}

#[derive(Default)]
struct CompactSink {
    seen: Vec<Seen>,
}

impl RecordSink for CompactSink {
    fn record(&mut self, rec: &PacketRecord) {
        let mut ko = [0u8; 8];
        ko.copy_from_slice(&rec.raw[32..40]);
        self.seen.push(Seen {
            queue_id: rec.queue_id,
            packet_index: rec.packet_index,
            kernel_object: u64::from_le_bytes(ko),
            validated: rec.status == Status::Validated,
        });
    }
    fn now_ns(&self) -> u64 {
        0
    }
    fn thread_id(&self) -> u32 {
        0
    }
}

/// One queue with its gate and its drainer-side state.
struct Queue {
    id: u64,
    ring: MockQueue,
    gate: DoorbellGate,
    /// Locked only by the thread the gate admits, so never contended.
    drain_side: Mutex<(QueueState, CompactSink)>,
}

impl Queue {
    fn new(id: u64, size: u64) -> Queue {
        Queue {
            id,
            ring: MockQueue::new(size),
            gate: DoorbellGate::new(),
            drain_side: Mutex::new((QueueState::default(), CompactSink::default())),
        }
    }

    fn ring_doorbell(&self, p: &Processor, signals: &MockSignals) {
        self.gate.ring(|| {
            let mut side = self
                .drain_side
                .try_lock()
                .expect("the gate admits one drainer at a time");
            let (state, sink) = &mut *side;
            p.drain(state, self.id, &self.ring, signals, sink);
        });
    }
}

/// Unique id of packet `seq` of producer `producer`, as a 64-byte-aligned
/// kernel object.
fn kernel_object(producer: u64, seq: u64) -> u64 {
    ((producer << 32) | seq) * 64 + 64
}

fn producer_and_seq(kernel_object: u64) -> (u64, u64) {
    let id = (kernel_object - 64) / 64;
    (id >> 32, id & 0xFFFF_FFFF)
}

fn produce(q: &Queue, p: &Processor, signals: &MockSignals, producer: u64, count: u64) {
    let completion = signals.handle(producer as usize);
    for seq in 0..count {
        let bytes =
            encode_kernel_dispatch(&valid_dispatch(kernel_object(producer, seq), completion));
        let index = q.ring.reserve(1);
        wait_for_space(q, index);
        q.ring.publish(index, &bytes);
        q.ring_doorbell(p, signals);
    }
}

/// `MockQueue::wait_for_space`, but failing instead of hanging if no drain
/// ever frees the slot (a lost doorbell would otherwise hang the test).
fn wait_for_space(q: &Queue, index: u64) {
    let size = q.ring.size();
    let deadline = Instant::now() + Duration::from_secs(60);
    while index - q.ring.read_index() >= size {
        assert!(
            Instant::now() < deadline,
            "slot {index} never freed: lost doorbell?"
        );
        std::thread::yield_now();
    }
}

/// Checks one queue's capture; `producers` are the producer numbers that fed
/// it, each with `per_producer` packets.
fn check_queue(q: &Queue, signals: &MockSignals, producers: &[u64], per_producer: u64) {
    let side = q.drain_side.lock().unwrap();
    let (state, sink) = &*side;
    let total = producers.len() as u64 * per_producer;
    assert!(q.gate.is_idle());
    assert_eq!(sink.seen.len() as u64, total, "captured == submitted");
    assert_eq!(state.observed_through, total);
    assert_eq!(q.ring.read_index(), total);
    let mut next_seq = vec![0u64; signals_len(producers)];
    for (i, s) in sink.seen.iter().enumerate() {
        assert_eq!(s.queue_id, q.id);
        assert_eq!(s.packet_index, i as u64, "index order");
        assert!(s.validated);
        let (producer, seq) = producer_and_seq(s.kernel_object);
        assert!(producers.contains(&producer), "foreign packet");
        // Each producer's packets appear once each, in submission order:
        // together with the count this rules out loss and duplication.
        assert_eq!(seq, next_seq[producer as usize], "producer {producer}");
        next_seq[producer as usize] += 1;
    }
    for &pr in producers {
        assert_eq!(next_seq[pr as usize], per_producer);
        assert_eq!(signals.value(signals.handle(pr as usize)), 0);
    }
}

fn signals_len(producers: &[u64]) -> usize {
    producers.iter().max().map_or(0, |m| *m as usize + 1)
}

#[test]
fn four_producers_times_100000_packets_on_one_multi_queue_are_each_captured_once_in_order() {
    const PRODUCERS: u64 = 4;
    const PER_PRODUCER: u64 = 100_000;
    let start = Instant::now();
    let p = Processor::default();
    let signals = MockSignals::new(&[PER_PRODUCER as i64; PRODUCERS as usize]);
    let q = Queue::new(1, 256);
    std::thread::scope(|scope| {
        for producer in 0..PRODUCERS {
            let (q, p, signals) = (&q, &p, &signals);
            scope.spawn(move || produce(q, p, signals, producer, PER_PRODUCER));
        }
    });
    let producers: Vec<u64> = (0..PRODUCERS).collect();
    check_queue(&q, &signals, &producers, PER_PRODUCER);
    let stalls = q.drain_side.lock().unwrap().0.stalls;
    eprintln!(
        "one queue: {} packets in {:?}, {stalls} stalls",
        PRODUCERS * PER_PRODUCER,
        start.elapsed()
    );
}

#[test]
fn four_queues_drained_in_parallel_keep_their_packets_apart_and_in_order() {
    const QUEUES: u64 = 4;
    const PRODUCERS_PER_QUEUE: u64 = 2;
    const PER_PRODUCER: u64 = 50_000;
    let start = Instant::now();
    let p = Processor::default();
    let n_signals = (QUEUES * PRODUCERS_PER_QUEUE) as usize;
    let signals = MockSignals::new(&vec![PER_PRODUCER as i64; n_signals]);
    let queues: Vec<Queue> = (0..QUEUES).map(|i| Queue::new(100 + i, 64)).collect();
    std::thread::scope(|scope| {
        for (qi, q) in queues.iter().enumerate() {
            for k in 0..PRODUCERS_PER_QUEUE {
                let producer = qi as u64 * PRODUCERS_PER_QUEUE + k;
                let (p, signals) = (&p, &signals);
                scope.spawn(move || produce(q, p, signals, producer, PER_PRODUCER));
            }
        }
    });
    for (qi, q) in queues.iter().enumerate() {
        let producers: Vec<u64> = (0..PRODUCERS_PER_QUEUE)
            .map(|k| qi as u64 * PRODUCERS_PER_QUEUE + k)
            .collect();
        check_queue(q, &signals, &producers, PER_PRODUCER);
    }
    eprintln!(
        "four queues: {} packets in {:?}",
        QUEUES * PRODUCERS_PER_QUEUE * PER_PRODUCER,
        start.elapsed()
    );
}
