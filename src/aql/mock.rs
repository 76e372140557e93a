//! A mock producer for the processor: an in-process AQL ring, signals and a
//! record sink, all plain safe atomics. For tests, benches and fuzz targets;
//! the shim itself never uses it (it is compiled in because it is small, pure
//! and lets `benches/` and `fuzz/` share it).
//!
//! [`MockQueue`] keeps each 64-byte slot as eight `AtomicU64` words. A producer
//! writes words 1..8 first and word 0 (header, setup, workgroup x/y) last with
//! release ordering, which is how a real producer publishes a packet: the
//! header store is the publication. Indices are logical (they never wrap);
//! the slot is `index % size`.

use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::parse::make_header;
use super::{PacketRecord, Processor, QueueMemory, RecordSink, SignalOps};
use crate::abi::{
    BarrierAndPacket, BarrierOrPacket, FenceScope, HsaSignal, KernelDispatchPacket, PacketType,
};

/// A ring of `size` slots with write and read indices.
#[derive(Debug)]
pub struct MockQueue {
    words: Box<[AtomicU64]>,
    size: u64,
    write_index: AtomicU64,
    read_index: AtomicU64,
}

impl MockQueue {
    /// A ring of `size` slots (a power of two), every header INVALID, as a
    /// runtime creates it.
    pub fn new(size: u64) -> MockQueue {
        assert!(size.is_power_of_two(), "ring size must be a power of two");
        let words = (0..size * 8)
            .map(|w| {
                let v = if w % 8 == 0 {
                    u64::from(PacketType::INVALID.0)
                } else {
                    0
                };
                AtomicU64::new(v)
            })
            .collect();
        MockQueue {
            words,
            size,
            write_index: AtomicU64::new(0),
            read_index: AtomicU64::new(0),
        }
    }

    #[inline]
    fn word(&self, index: u64, w: usize) -> &AtomicU64 {
        &self.words[(index % self.size) as usize * 8 + w]
    }

    /// Reserve `n` consecutive slots (as `hsa_queue_add_write_index_relaxed`
    /// would); returns the first logical index. Does not wait for space.
    pub fn reserve(&self, n: u64) -> u64 {
        self.write_index.fetch_add(n, Ordering::AcqRel)
    }

    /// Spin (yielding) until slot `index` is free: `index - read_index < size`.
    pub fn wait_for_space(&self, index: u64) {
        while index.wrapping_sub(self.read_index.load(Ordering::Acquire)) >= self.size {
            std::thread::yield_now();
        }
    }

    /// Write the packet body (bytes 8..64) of `index`, leaving the header word
    /// alone: the slot stays unpublished.
    pub fn write_body(&self, index: u64, bytes: &[u8; 64]) {
        for w in 1..8 {
            self.word(index, w)
                .store(word_of(bytes, w), Ordering::Relaxed);
        }
    }

    /// Publish: store word 0 (header first 2 bytes) with release.
    pub fn publish_header(&self, index: u64, bytes: &[u8; 64]) {
        self.word(index, 0)
            .store(word_of(bytes, 0), Ordering::Release);
    }

    /// Write the body, then publish the header.
    pub fn publish(&self, index: u64, bytes: &[u8; 64]) {
        self.write_body(index, bytes);
        self.publish_header(index, bytes);
    }

    /// Reserve one slot, wait for space, publish `bytes` there; returns its
    /// index. Does not ring: the caller drains.
    pub fn submit(&self, bytes: &[u8; 64]) -> u64 {
        let index = self.reserve(1);
        self.wait_for_space(index);
        self.publish(index, bytes);
        index
    }

    /// Current `write_index`.
    pub fn write_index(&self) -> u64 {
        self.write_index.load(Ordering::Acquire)
    }

    /// Overwrite `write_index` (a misbehaving producer, or a test).
    pub fn set_write_index(&self, value: u64) {
        self.write_index.store(value, Ordering::Release);
    }

    /// Current `read_index`.
    pub fn read_index(&self) -> u64 {
        self.read_index.load(Ordering::Acquire)
    }

    /// The header word of the slot holding `index`.
    pub fn header(&self, index: u64) -> u16 {
        self.word(index, 0).load(Ordering::Acquire) as u16
    }
}

#[inline]
fn word_of(bytes: &[u8; 64], w: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[w * 8..w * 8 + 8]);
    u64::from_le_bytes(b)
}

impl QueueMemory for MockQueue {
    fn size(&self) -> u64 {
        self.size
    }

    fn load_write_index(&self) -> u64 {
        self.write_index.load(Ordering::Acquire)
    }

    fn load_header(&self, index: u64) -> u16 {
        self.word(index, 0).load(Ordering::Acquire) as u16
    }

    fn read_packet(&self, index: u64) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (w, chunk) in out.chunks_exact_mut(8).enumerate() {
            // Word 0 is re-read with acquire; the others are ordered by the
            // acquire header load that preceded this call.
            let order = if w == 0 {
                Ordering::Acquire
            } else {
                Ordering::Relaxed
            };
            chunk.copy_from_slice(&self.word(index, w).load(order).to_le_bytes());
        }
        out
    }

    fn store_header(&self, index: u64, header: u16) {
        // Only the low 16 bits change; the slot is ours until read_index moves.
        let _ = self
            .word(index, 0)
            .fetch_update(Ordering::Release, Ordering::Relaxed, |w| {
                Some((w & !0xFFFF) | u64::from(header))
            });
    }

    fn store_read_index(&self, value: u64) {
        self.read_index.store(value, Ordering::Release);
    }
}

/// First handle [`MockSignals`] hands out; handles are 64 bytes apart, like
/// the addresses of `amd_signal_t`s.
pub const MOCK_SIGNAL_BASE: u64 = 0x7000_0000;

/// A fixed table of signals. Handle `i` is `MOCK_SIGNAL_BASE + 64 * i`; any
/// other handle is unknown.
#[derive(Debug)]
pub struct MockSignals {
    values: Box<[AtomicI64]>,
}

impl MockSignals {
    /// One signal per initial value.
    pub fn new(initial: &[i64]) -> MockSignals {
        MockSignals {
            values: initial.iter().map(|&v| AtomicI64::new(v)).collect(),
        }
    }

    /// The handle of signal `i`.
    pub fn handle(&self, i: usize) -> u64 {
        assert!(i < self.values.len(), "no signal {i}");
        MOCK_SIGNAL_BASE + 64 * i as u64
    }

    fn slot(&self, handle: u64) -> Option<&AtomicI64> {
        let off = handle.checked_sub(MOCK_SIGNAL_BASE)?;
        if off % 64 != 0 {
            return None;
        }
        self.values.get(usize::try_from(off / 64).ok()?)
    }

    /// Current value of a known handle (panics on an unknown one).
    pub fn value(&self, handle: u64) -> i64 {
        self.slot(handle)
            .expect("unknown mock signal")
            .load(Ordering::Acquire)
    }

    /// Store a value into a known handle (panics on an unknown one).
    pub fn set(&self, handle: u64, value: i64) {
        self.slot(handle)
            .expect("unknown mock signal")
            .store(value, Ordering::Release);
    }
}

impl SignalOps for MockSignals {
    fn is_valid(&self, handle: u64) -> bool {
        self.slot(handle).is_some()
    }

    fn load(&self, handle: u64) -> i64 {
        self.value(handle)
    }

    fn complete(&self, handle: u64) {
        self.slot(handle)
            .expect("complete on an unknown mock signal")
            .fetch_sub(1, Ordering::AcqRel);
    }
}

/// A sink that keeps every record, with a counter for a clock (each
/// `now_ns` call returns the next tick) and a fixed thread id.
#[derive(Debug, Default)]
pub struct VecSink {
    pub records: Vec<PacketRecord>,
    clock: AtomicU64,
    pub thread: u32,
}

impl VecSink {
    pub fn new() -> VecSink {
        VecSink::default()
    }

    /// Move the clock forward by `ns` (as if time passed between drains).
    pub fn advance(&self, ns: u64) {
        self.clock.fetch_add(ns, Ordering::Relaxed);
    }
}

impl RecordSink for VecSink {
    fn record(&mut self, rec: &PacketRecord) {
        self.records.push(*rec);
    }

    fn now_ns(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn thread_id(&self) -> u32 {
        self.thread
    }
}

/// A valid 1-D kernel dispatch: 64 work-items in one workgroup of 64, system
/// scope fences, no kernargs.
pub fn valid_dispatch(kernel_object: u64, completion_signal: u64) -> KernelDispatchPacket {
    KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            false,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: 64,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        reserved0: 0,
        grid_size_x: 64,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: 0,
        group_segment_size: 0,
        kernel_object,
        kernarg_address: 0,
        reserved2: 0,
        completion_signal: HsaSignal {
            handle: completion_signal,
        },
    }
}

/// A barrier-AND on up to five signals (0 = none), barrier bit set.
pub fn barrier_and(deps: [u64; 5], completion_signal: u64) -> BarrierAndPacket {
    BarrierAndPacket {
        header: make_header(
            PacketType::BARRIER_AND,
            true,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        ),
        dep_signal: deps.map(|handle| HsaSignal { handle }),
        completion_signal: HsaSignal {
            handle: completion_signal,
        },
        ..BarrierAndPacket::default()
    }
}

/// A barrier-OR on up to five signals (0 = none), barrier bit set.
pub fn barrier_or(deps: [u64; 5], completion_signal: u64) -> BarrierOrPacket {
    BarrierOrPacket {
        header: make_header(
            PacketType::BARRIER_OR,
            true,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        ),
        dep_signal: deps.map(|handle| HsaSignal { handle }),
        completion_signal: HsaSignal {
            handle: completion_signal,
        },
        ..BarrierOrPacket::default()
    }
}

/// Ring size [`replay_ops`] uses: small, so wraparound happens early.
const OPS_RING: u64 = 8;
/// Signals [`replay_ops`] uses.
const OPS_SIGNALS: usize = 4;
/// A handle [`MockSignals`] never knows.
const OPS_BOGUS_HANDLE: u64 = 0xBAD0;

/// Reads the operation stream of [`replay_ops`]; yields zeros once exhausted.
struct OpBytes<'a>(&'a [u8]);

impl OpBytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |acc, i| acc | u64::from(self.byte()) << (8 * i))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A handle chosen by one byte: null, one of the live signals, or bogus.
fn ops_handle(b: u8, s: &MockSignals) -> u64 {
    match b % 8 {
        0 | 1 => 0,
        k @ 2..=5 => s.handle(usize::from(k - 2)),
        6 => OPS_BOGUS_HANDLE,
        _ => s.handle(0) + 8, // near miss: inside the table, misaligned
    }
}

fn ops_packet(ops: &mut OpBytes<'_>, s: &MockSignals) -> [u8; 64] {
    use super::parse::encode_kernel_dispatch;
    use super::parse::{encode_agent_dispatch, encode_barrier_and, encode_barrier_or};
    let kind = ops.byte();
    let completion = ops_handle(ops.byte(), s);
    let mut bytes = match kind % 6 {
        0 => encode_kernel_dispatch(&valid_dispatch(0x4000, completion)),
        1 => {
            let mut p = valid_dispatch(0x4000, completion);
            let v = ops.byte();
            match ops.byte() % 8 {
                0 => p.setup = u16::from(v),
                1 => p.workgroup_size_x = u16::from(v) << 4,
                2 => p.grid_size_y = u32::from(v),
                3 => p.reserved0 = u16::from(v),
                4 => p.kernel_object = u64::from(v),
                5 => p.kernarg_address = u64::from(v),
                6 => {
                    p.header = make_header(
                        PacketType::KERNEL_DISPATCH,
                        false,
                        FenceScope(v),
                        FenceScope(v >> 2),
                    )
                }
                _ => p.reserved2 = u64::from(v),
            }
            encode_kernel_dispatch(&p)
        }
        2 => {
            let deps = core::array::from_fn(|_| ops_handle(ops.byte(), s));
            encode_barrier_and(&barrier_and(deps, completion))
        }
        3 => {
            let deps = core::array::from_fn(|_| ops_handle(ops.byte(), s));
            encode_barrier_or(&barrier_or(deps, completion))
        }
        4 => {
            let mut raw = [0u8; 64];
            for w in raw.chunks_exact_mut(8) {
                w.copy_from_slice(&ops.u64().to_le_bytes());
            }
            raw
        }
        _ => {
            let mut p = crate::abi::AgentDispatchPacket {
                completion_signal: HsaSignal { handle: completion },
                ..Default::default()
            };
            p.header = u16::from(ops.byte());
            encode_agent_dispatch(&p)
        }
    };
    // A published header of type INVALID would be indistinguishable from an
    // unpublished slot; producers never publish one.
    if bytes[0] == PacketType::INVALID.0 {
        bytes[0] = PacketType::KERNEL_DISPATCH.0;
    }
    bytes
}

/// The model [`replay_ops`] checks the processor against.
struct OpsModel {
    /// Every reserved slot by logical index: its bytes and whether published.
    slots: Vec<([u8; 64], bool)>,
    /// Expected signal values.
    signals: [i64; OPS_SIGNALS],
    /// Records already checked.
    checked: usize,
}

impl OpsModel {
    fn signal_index(&self, s: &MockSignals, handle: u64) -> Option<usize> {
        (0..OPS_SIGNALS).find(|&k| s.handle(k) == handle)
    }

    /// What the processor must decide about `raw`, given the signal values
    /// the model expects: the full reason set, or `None` for "keep waiting".
    fn expected(&self, p: &Processor, s: &MockSignals, raw: &[u8; 64]) -> Option<super::ReasonSet> {
        use super::Reason;
        use super::parse::{header_type, parse_supported_packet_with_limit};
        use crate::abi::packet_offset as po;
        let ty = header_type(u16::from_le_bytes([raw[po::HEADER], raw[po::HEADER + 1]]));
        let handle = |off: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&raw[off..off + 8]);
            u64::from_le_bytes(w)
        };
        let parsed = parse_supported_packet_with_limit(raw, p.max_workgroup_size);
        let mut reasons = parsed.err().unwrap_or_default();
        let completion = handle(po::COMPLETION_SIGNAL);
        let typed = matches!(
            ty,
            PacketType::KERNEL_DISPATCH
                | PacketType::BARRIER_AND
                | PacketType::BARRIER_OR
                | PacketType::AGENT_DISPATCH
        );
        if typed && completion != 0 && self.signal_index(s, completion).is_none() {
            reasons.insert(Reason::CompletionSignalUnknown);
        }
        let barrier = matches!(ty, PacketType::BARRIER_AND | PacketType::BARRIER_OR);
        let deps: Vec<u64> = (0..5)
            .map(|i| handle(po::DEP_SIGNAL + 8 * i))
            .filter(|&h| h != 0)
            .collect();
        if barrier && deps.iter().any(|&h| self.signal_index(s, h).is_none()) {
            reasons.insert(Reason::DependencySignalUnknown);
        }
        if !reasons.is_empty() || !barrier {
            return Some(reasons);
        }
        let zero: Vec<bool> = deps
            .iter()
            .map(|&h| self.signals[self.signal_index(s, h).unwrap()] == 0)
            .collect();
        let ready = if ty == PacketType::BARRIER_AND {
            zero.iter().all(|&z| z)
        } else {
            zero.is_empty() || zero.iter().any(|&z| z)
        };
        ready.then_some(reasons)
    }

    /// Checks the records a drain produced and the state it left.
    fn check_drain(
        &mut self,
        p: &Processor,
        q: &MockQueue,
        s: &MockSignals,
        state: &super::QueueState,
        sink: &VecSink,
        outcome: super::DrainOutcome,
    ) {
        use super::{DrainOutcome, Status};
        for (i, rec) in sink.records.iter().enumerate().skip(self.checked) {
            assert_eq!(
                rec.packet_index, i as u64,
                "records in index order, once each"
            );
            let (bytes, published) = self.slots[i];
            assert!(published, "record for an unpublished slot {i}");
            assert_eq!(rec.raw, bytes, "record holds the published bytes");
            let want = self
                .expected(p, s, &bytes)
                .expect("a record for a barrier that should still wait");
            assert_eq!(rec.reasons, want);
            let status = if want.is_empty() {
                Status::Validated
            } else {
                Status::Rejected
            };
            assert_eq!(rec.status, status);
            if status == Status::Validated {
                let mut w = [0u8; 8];
                let at = crate::abi::packet_offset::COMPLETION_SIGNAL;
                w.copy_from_slice(&bytes[at..at + 8]);
                if let Some(k) = self.signal_index(s, u64::from_le_bytes(w)) {
                    self.signals[k] -= 1;
                }
            }
        }
        self.checked = sink.records.len();
        let done = self.checked as u64;
        assert_eq!(state.observed_through, done);
        assert_eq!(q.read_index(), done);
        for k in 0..OPS_SIGNALS {
            assert_eq!(s.value(s.handle(k)), self.signals[k], "signal {k}");
        }
        match outcome {
            DrainOutcome::Idle => assert_eq!(done, self.slots.len() as u64),
            DrainOutcome::Stalled { index } => {
                assert_eq!(index, done);
                assert!(!self.slots[index as usize].1, "stalled on a published slot");
            }
            DrainOutcome::BlockedOnBarrier { index } => {
                assert_eq!(index, done);
                let (bytes, published) = self.slots[index as usize];
                assert!(published);
                assert_eq!(
                    self.expected(p, s, &bytes),
                    None,
                    "blocked on a ready packet"
                );
            }
        }
    }
}

/// Replays `data` as a sequence of operations on one mock queue (ring of 8,
/// four signals) and checks the processor against a model after every
/// drain. Panics on any violation. Used by the `processor_ops` fuzz target
/// and by a property test.
///
/// Operations, one selector byte each: publish a new packet; reserve a slot
/// and write its body without publishing; publish the oldest unpublished
/// slot; drain; set a signal; change the workgroup limit. At the end every
/// slot is published and the signals are reset to 0 until the queue is idle,
/// so every packet must have exactly one record.
pub fn replay_ops(data: &[u8]) {
    use super::{DrainOutcome, QueueState};
    let q = MockQueue::new(OPS_RING);
    let s = MockSignals::new(&[1; OPS_SIGNALS]);
    let mut p = Processor::default();
    let mut state = QueueState::default();
    let mut sink = VecSink::new();
    let mut m = OpsModel {
        slots: Vec::new(),
        signals: [1; OPS_SIGNALS],
        checked: 0,
    };
    let mut ops = OpBytes(data);
    while !ops.is_empty() {
        match ops.byte() % 8 {
            op @ (0..=2) => {
                if q.write_index() - q.read_index() >= OPS_RING {
                    continue;
                }
                let bytes = ops_packet(&mut ops, &s);
                let index = q.reserve(1);
                if op == 2 {
                    q.write_body(index, &bytes);
                } else {
                    q.publish(index, &bytes);
                }
                m.slots.push((bytes, op != 2));
            }
            3 => {
                if let Some(i) = m.slots.iter().position(|x| !x.1) {
                    q.publish_header(i as u64, &m.slots[i].0);
                    m.slots[i].1 = true;
                }
            }
            4 | 5 => {
                let out = p.drain(&mut state, 1, &q, &s, &mut sink);
                m.check_drain(&p, &q, &s, &state, &sink, out);
            }
            6 => {
                let k = usize::from(ops.byte()) % OPS_SIGNALS;
                let v = i64::from(ops.byte() as i8 % 3);
                s.set(s.handle(k), v);
                m.signals[k] = v;
            }
            _ => p = Processor::new(u32::from(ops.byte()) << 3),
        }
    }
    for i in 0..m.slots.len() {
        if !m.slots[i].1 {
            q.publish_header(i as u64, &m.slots[i].0);
            m.slots[i].1 = true;
        }
    }
    // Each round releases at least the barrier at the head, so this ends.
    for _ in 0..=m.slots.len() {
        for k in 0..OPS_SIGNALS {
            s.set(s.handle(k), 0);
            m.signals[k] = 0;
        }
        let out = p.drain(&mut state, 1, &q, &s, &mut sink);
        m.check_drain(&p, &q, &s, &state, &sink, out);
        if out == DrainOutcome::Idle {
            break;
        }
    }
    assert_eq!(
        sink.records.len(),
        m.slots.len(),
        "every packet recorded once"
    );
}
