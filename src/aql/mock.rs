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
use super::{KernelInfo, KernelLookup, KernelTable, ParsedPacket};
use super::{PacketRecord, Processor, QueueMemory, RecordSink, SignalOps};
use crate::abi::{
    AmdBarrierValuePacket, BarrierAndPacket, BarrierOrPacket, FenceScope, HsaSignal,
    KernelDispatchPacket, PacketType, amd_packet_type,
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
        // `size` is a power of two (checked by `new`).
        &self.words[(index & (self.size - 1)) as usize * 8 + w]
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
        let base = (index & (self.size - 1)) as usize * 8;
        let slot = &self.words[base..base + 8];
        // Word 0 is re-read with acquire; the others are ordered by the
        // acquire header load that preceded this call.
        out[..8].copy_from_slice(&slot[0].load(Ordering::Acquire).to_le_bytes());
        for (chunk, w) in out[8..].chunks_exact_mut(8).zip(&slot[1..]) {
            chunk.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
        }
        out
    }

    fn store_header(&self, index: u64, header: u16) {
        // Only the low 16 bits change. The slot is ours until read_index
        // moves (no producer writes it meanwhile), so a plain load and a
        // release store do, as the runtime's one store of the header does:
        // no read-modify-write on the doorbell path.
        let w = self.word(index, 0);
        w.store(
            (w.load(Ordering::Relaxed) & !0xFFFF) | u64::from(header),
            Ordering::Release,
        );
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
    /// Says it wants no times ([`RecordSink::wants_times`]), as the shim's
    /// sink does with capture off.
    pub untimed: bool,
}

impl VecSink {
    pub fn new() -> VecSink {
        VecSink::default()
    }

    /// Move the clock forward by `ns` (as if time passed between drains).
    pub fn advance(&self, ns: u64) {
        self.clock.fetch_add(ns, Ordering::Relaxed);
    }

    /// The clock's current value: the reads so far, plus what
    /// [`VecSink::advance`] added.
    pub fn clock(&self) -> u64 {
        self.clock.load(Ordering::Relaxed)
    }
}

impl RecordSink for VecSink {
    fn record(&mut self, rec: &PacketRecord) {
        self.records.push(*rec);
    }

    fn now_ns(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn wants_times(&self) -> bool {
        !self.untimed
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
/// The agent that owns [`replay_ops`]'s queue.
const OPS_AGENT: u32 = 1;
/// A kernel object the replay's kernel table does not hold (aligned, so only
/// the table decides about it).
const OPS_UNKNOWN_KERNEL: u64 = 0x5000;

/// The kernels of [`replay_ops`]'s kernel table, by kernel object: a plain
/// one (the object [`valid_dispatch`] names), one with every constraint
/// metadata can state, one of HIP's blit kernels with constraints (its
/// violations are findings), and one loaded for another agent.
const OPS_KERNELS: [(u64, KernelInfo); 4] = [
    (
        0x4000,
        KernelInfo {
            agent: OPS_AGENT,
            kernarg_size: 0,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: 0,
            reqd_workgroup_size: None,
            runtime_blit: false,
        },
    ),
    (
        0x4040,
        KernelInfo {
            agent: OPS_AGENT,
            kernarg_size: 16,
            group_segment_fixed_size: 1024,
            private_segment_fixed_size: 16,
            max_flat_workgroup_size: 128,
            reqd_workgroup_size: Some([64, 1, 1]),
            runtime_blit: false,
        },
    ),
    (
        0x4080,
        KernelInfo {
            agent: OPS_AGENT,
            kernarg_size: 8,
            group_segment_fixed_size: 256,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: 64,
            reqd_workgroup_size: None,
            runtime_blit: true,
        },
    ),
    (
        0x40c0,
        KernelInfo {
            agent: OPS_AGENT + 1,
            kernarg_size: 0,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            max_flat_workgroup_size: 0,
            reqd_workgroup_size: None,
            runtime_blit: false,
        },
    ),
];

/// [`replay_ops`]'s kernel table: [`OPS_KERNELS`] when `tracked`, otherwise
/// no table at all (as a mock queue or an offline replay has none).
#[derive(Clone, Copy, Debug)]
struct OpsKernels {
    tracked: bool,
}

impl KernelTable for OpsKernels {
    fn lookup(&self, kernel_object: u64) -> KernelLookup {
        if !self.tracked {
            return KernelLookup::NotTracked;
        }
        OPS_KERNELS
            .iter()
            .find(|(object, _)| *object == kernel_object)
            .map_or(KernelLookup::Unknown, |(_, k)| KernelLookup::Known(*k))
    }
}

/// The agent limits and kernel table a replay runs with; operation 7
/// changes them.
#[derive(Clone, Copy, Debug)]
struct OpsConfig {
    max_workgroup_size: u32,
    max_group_segment_size: u32,
    kernels: OpsKernels,
}

impl OpsConfig {
    fn processor(&self) -> Processor {
        Processor::new(self.max_workgroup_size).with_lds_limit(self.max_group_segment_size)
    }
}

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

/// A kernel object chosen by one byte: one of the table's, or one it lacks.
fn ops_kernel_object(b: u8) -> u64 {
    OPS_KERNELS
        .get(usize::from(b % 5))
        .map_or(OPS_UNKNOWN_KERNEL, |(object, _)| *object)
}

/// One packet, chosen and shaped by the next bytes of the stream.
///
/// Kinds (first byte, mod 8): a valid dispatch; a dispatch with one field
/// changed; a barrier-AND; a barrier-OR; 64 raw bytes; an agent dispatch; an
/// AMD barrier-value packet (mostly well formed, sometimes another vendor
/// format or an invalid condition); a dispatch of one of the kernel table's
/// kernels with the sizes its metadata constrains.
fn ops_packet(ops: &mut OpBytes<'_>, s: &MockSignals) -> [u8; 64] {
    use super::parse::{
        encode_agent_dispatch, encode_barrier_and, encode_barrier_or, encode_barrier_value,
        encode_kernel_dispatch,
    };
    let kind = ops.byte();
    let completion = ops_handle(ops.byte(), s);
    let mut bytes = match kind % 8 {
        0 => encode_kernel_dispatch(&valid_dispatch(0x4000, completion)),
        1 => {
            let mut p = valid_dispatch(0x4000, completion);
            let v = ops.byte();
            match ops.byte() % 10 {
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
                7 => p.reserved2 = u64::from(v),
                8 => p.group_segment_size = u32::from(v) << 8,
                _ => p.kernel_object = ops_kernel_object(v),
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
        5 => {
            let mut p = crate::abi::AgentDispatchPacket {
                completion_signal: HsaSignal { handle: completion },
                ..Default::default()
            };
            p.header = u16::from(ops.byte());
            encode_agent_dispatch(&p)
        }
        6 => {
            let shape = ops.byte();
            let signal = ops_handle(ops.byte(), s);
            let value = i64::from(ops.byte() as i8 % 3);
            let mask = match ops.byte() % 4 {
                0 => -1,
                1 => 0,
                2 => 1,
                _ => 2,
            };
            let cond = u32::from(ops.byte() % 5);
            let scopes = if shape & 0x40 != 0 { shape >> 2 } else { 2 };
            encode_barrier_value(&AmdBarrierValuePacket {
                header: make_header(
                    PacketType::VENDOR_SPECIFIC,
                    shape & 1 != 0,
                    FenceScope(scopes),
                    FenceScope(scopes >> 2),
                ),
                amd_format: if shape & 0x80 != 0 {
                    shape & 3
                } else {
                    amd_packet_type::BARRIER_VALUE
                },
                signal: HsaSignal { handle: signal },
                value,
                mask,
                cond,
                completion_signal: HsaSignal { handle: completion },
                ..AmdBarrierValuePacket::default()
            })
        }
        _ => {
            let mut p = valid_dispatch(ops_kernel_object(ops.byte()), completion);
            let [wg, group, private, kernarg] = [ops.byte(), ops.byte(), ops.byte(), ops.byte()];
            p.workgroup_size_x = 32 << (wg % 4);
            p.grid_size_x = u32::from(p.workgroup_size_x);
            if wg & 4 != 0 {
                p.workgroup_size_y = 2;
                p.grid_size_y = 2;
                p.setup = 2;
            }
            p.group_segment_size = u32::from(group) << 4;
            p.private_segment_size = u32::from(private);
            p.kernarg_address = u64::from(kernarg & 0xf0) << 4;
            encode_kernel_dispatch(&p)
        }
    };
    // A published header of type INVALID would be indistinguishable from an
    // unpublished slot; producers never publish one.
    if bytes[0] == PacketType::INVALID.0 {
        bytes[0] = PacketType::KERNEL_DISPATCH.0;
    }
    bytes
}

/// The model [`replay_ops`] checks the processor against. It restates the
/// contract (`docs/aql-diagnostic-contract.md`) from the packet bytes, the
/// signal values it expects and the replay's configuration; only the
/// single-packet parser is shared with the processor (it has its own tests
/// and fuzz target).
struct OpsModel {
    /// Every reserved slot by logical index: its bytes and whether published.
    slots: Vec<([u8; 64], bool)>,
    /// Expected signal values.
    signals: [i64; OPS_SIGNALS],
    /// Records already checked.
    checked: usize,
    /// The configuration the processor runs with.
    config: OpsConfig,
}

/// What the model expects of one published packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// A record with this status and these reasons (findings, when validated).
    Record(super::Status, super::ReasonSet),
    /// No record yet: a valid barrier whose condition does not hold.
    Wait,
}

impl OpsModel {
    fn signal_index(&self, s: &MockSignals, handle: u64) -> Option<usize> {
        (0..OPS_SIGNALS).find(|&k| s.handle(k) == handle)
    }

    /// The value the model expects of a live signal.
    fn value(&self, s: &MockSignals, handle: u64) -> Option<i64> {
        self.signal_index(s, handle).map(|k| self.signals[k])
    }

    /// What the contract says about `raw` now.
    fn expected(&self, s: &MockSignals, raw: &[u8; 64]) -> Expect {
        use super::parse::{header_type, parse_supported_packet_with_limit};
        use super::{Reason, ReasonSet, Status};
        use crate::abi::packet_offset as po;
        let field = |off: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&raw[off..off + 8]);
            u64::from_le_bytes(w)
        };
        let live = |h: u64| self.signal_index(s, h).is_some();
        let ty = header_type(u16::from_le_bytes([raw[po::HEADER], raw[po::HEADER + 1]]));
        let parsed = parse_supported_packet_with_limit(raw, self.config.max_workgroup_size);
        let mut reasons = parsed.err().unwrap_or_default();
        let mut findings = ReasonSet::EMPTY;

        // A dispatch: against the agent's LDS and the kernel it names. A
        // malformed one is still known to be a blit by its kernel object.
        let kernel = (ty == PacketType::KERNEL_DISPATCH)
            .then(|| self.config.kernels.lookup(field(po::KERNEL_OBJECT)));
        let blit = matches!(kernel, Some(KernelLookup::Known(k)) if k.runtime_blit);
        if let Ok(ParsedPacket::KernelDispatch(d)) = parsed {
            if d.group_segment_size > self.config.max_group_segment_size {
                reasons.insert(Reason::GroupSegmentSizeExceedsLimit);
            }
            match kernel {
                Some(KernelLookup::Unknown) => findings.insert(Reason::UnknownKernelObject),
                Some(KernelLookup::Known(k)) => {
                    let broken = kernel_rules(&d, &k);
                    if k.runtime_blit {
                        findings = findings.union(broken);
                    } else {
                        reasons = reasons.union(broken);
                    }
                }
                _ => {}
            }
        }

        // Signals: a named completion signal must be live for every type that
        // has one (a barrier-value packet only once it parsed as one), and so
        // must every barrier dependency and a barrier-value's own signal.
        let value_packet = match parsed {
            Ok(ParsedPacket::BarrierValue(p)) => Some(p),
            _ => None,
        };
        let has_completion = value_packet.is_some()
            || matches!(
                ty,
                PacketType::KERNEL_DISPATCH
                    | PacketType::BARRIER_AND
                    | PacketType::BARRIER_OR
                    | PacketType::AGENT_DISPATCH
            );
        let completion = field(po::COMPLETION_SIGNAL);
        if has_completion && completion != 0 && !live(completion) {
            reasons.insert(Reason::CompletionSignalUnknown);
        }
        let and_or = matches!(ty, PacketType::BARRIER_AND | PacketType::BARRIER_OR);
        let deps: Vec<u64> = (0..5)
            .map(|i| field(po::DEP_SIGNAL + 8 * i))
            .filter(|&h| h != 0)
            .collect();
        if and_or && deps.iter().any(|&h| !live(h)) {
            reasons.insert(Reason::DependencySignalUnknown);
        }
        if let Some(p) = value_packet {
            if p.signal.handle != 0 && !live(p.signal.handle) {
                reasons.insert(Reason::DependencySignalUnknown);
            }
        }

        if blit {
            findings.insert(Reason::RuntimeBlitKernelNotExecuted);
        }
        if !reasons.is_empty() {
            if blit {
                reasons.insert(Reason::RuntimeBlitKernelNotExecuted);
            }
            return Expect::Record(Status::Rejected, reasons);
        }
        let zero = |h: u64| self.value(s, h) == Some(0);
        let ready = match (parsed, value_packet) {
            (Ok(ParsedPacket::BarrierAnd(_)), _) => deps.iter().all(|&h| zero(h)),
            (Ok(ParsedPacket::BarrierOr(_)), _) => deps.is_empty() || deps.iter().any(|&h| zero(h)),
            (_, Some(p)) => {
                let v = match p.signal.handle {
                    0 => 0,
                    h => self.value(s, h).unwrap_or(0),
                } & p.mask;
                match p.cond {
                    0 => v == p.value,
                    1 => v != p.value,
                    2 => v < p.value,
                    _ => v >= p.value,
                }
            }
            _ => true,
        };
        if ready {
            Expect::Record(Status::Validated, findings)
        } else {
            Expect::Wait
        }
    }

    /// A signal and a value for it that release the barrier-value packet
    /// `raw`; `None` when no value of a live signal can.
    fn release(&self, s: &MockSignals, raw: &[u8; 64]) -> Option<(usize, i64)> {
        use super::parse::parse_supported_packet_with_limit;
        let Ok(ParsedPacket::BarrierValue(p)) =
            parse_supported_packet_with_limit(raw, self.config.max_workgroup_size)
        else {
            return None;
        };
        let k = self.signal_index(s, p.signal.handle)?;
        let holds = |v: i64| {
            let v = v & p.mask;
            match p.cond {
                0 => v == p.value,
                1 => v != p.value,
                2 => v < p.value,
                _ => v >= p.value,
            }
        };
        [
            p.value,
            p.value.wrapping_add(1),
            p.value.wrapping_sub(1),
            0,
            -1,
            i64::MIN,
            i64::MAX,
        ]
        .into_iter()
        .find(|&v| holds(v))
        .map(|v| (k, v))
    }

    /// Checks the records a drain produced and the state it left.
    fn check_drain(
        &mut self,
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
            let Expect::Record(status, reasons) = self.expected(s, &bytes) else {
                panic!("a record for a barrier that should still wait: {bytes:02x?}");
            };
            assert_eq!(
                (rec.status, rec.reasons),
                (status, reasons),
                "record of slot {i}: {bytes:02x?}"
            );
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
                    self.expected(s, &bytes),
                    Expect::Wait,
                    "blocked on a packet that is ready: {bytes:02x?}"
                );
            }
        }
    }
}

/// The rules a dispatch must keep for the kernel it names, restated from the
/// contract: workgroup within `.max_flat_workgroup_size` and equal to a
/// `.reqd_workgroup_size`, group and private segments at least the static
/// sizes, a kernarg address when the kernel takes arguments, and the agent
/// the kernel was loaded for.
fn kernel_rules(d: &KernelDispatchPacket, k: &KernelInfo) -> super::ReasonSet {
    use super::Reason;
    let mut r = super::ReasonSet::EMPTY;
    let wg = [d.workgroup_size_x, d.workgroup_size_y, d.workgroup_size_z].map(u32::from);
    if k.max_flat_workgroup_size != 0
        && u64::from(wg[0]) * u64::from(wg[1]) * u64::from(wg[2])
            > u64::from(k.max_flat_workgroup_size)
    {
        r.insert(Reason::WorkgroupSizeExceedsKernelMax);
    }
    if k.reqd_workgroup_size.is_some_and(|req| req != wg) {
        r.insert(Reason::WorkgroupSizeDiffersFromRequired);
    }
    if d.group_segment_size < k.group_segment_fixed_size {
        r.insert(Reason::GroupSegmentSizeBelowStatic);
    }
    if d.private_segment_size < k.private_segment_fixed_size {
        r.insert(Reason::PrivateSegmentSizeBelowStatic);
    }
    if k.kernarg_size > 0 && d.kernarg_address == 0 {
        r.insert(Reason::KernargAddressNull);
    }
    if k.agent != OPS_AGENT {
        r.insert(Reason::KernelObjectWrongAgent);
    }
    r
}

/// Replays `data` as a sequence of operations on one mock queue (ring of 8,
/// four signals, owned by agent 1) and checks the processor against a model
/// after every drain. Panics on any violation. Used by the `processor_ops`
/// fuzz target, by a property test, and by the test that replays the inputs
/// the fuzzer once found (`fuzz/regressions/processor_ops`).
///
/// Operations, one selector byte each (mod 8): 0, 1 publish a new packet
/// (see [`ops_packet`] for the kinds: dispatches, barrier-AND/OR, AMD
/// barrier-value, agent dispatch, raw bytes); 2 reserve a slot and write its
/// body without publishing; 3 publish the oldest unpublished slot; 4, 5 drain;
/// 6 set a signal; 7 reconfigure (workgroup limit, LDS limit, and whether a
/// kernel table is tracked; the processor starts with 1024, no LDS limit and
/// no table). At the end every slot is published and the signals are reset to
/// 0 until the queue is idle, so every packet must have exactly one record.
pub fn replay_ops(data: &[u8]) -> OpsReplay {
    use super::{DrainOutcome, QueueState};
    let q = MockQueue::new(OPS_RING);
    let s = MockSignals::new(&[1; OPS_SIGNALS]);
    let mut state = QueueState::default();
    let mut sink = VecSink::new();
    let mut m = OpsModel {
        slots: Vec::new(),
        signals: [1; OPS_SIGNALS],
        checked: 0,
        config: OpsConfig {
            max_workgroup_size: super::MAX_WORKGROUP_SIZE,
            max_group_segment_size: u32::MAX,
            kernels: OpsKernels { tracked: false },
        },
    };
    let drain = |m: &mut OpsModel, state: &mut QueueState, sink: &mut VecSink| {
        let c = m.config;
        let out = c
            .processor()
            .drain_with(state, 1, OPS_AGENT, &q, &s, &c.kernels, sink);
        m.check_drain(&q, &s, state, sink, out);
        out
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
                drain(&mut m, &mut state, &mut sink);
            }
            6 => {
                let k = usize::from(ops.byte()) % OPS_SIGNALS;
                let v = i64::from(ops.byte() as i8 % 3);
                s.set(s.handle(k), v);
                m.signals[k] = v;
            }
            _ => {
                let wg = u32::from(ops.byte()) << 3;
                let lds = match ops.byte() {
                    0 => u32::MAX,
                    b => u32::from(b) << 8,
                };
                let tracked = ops.byte() & 1 != 0;
                m.config = OpsConfig {
                    max_workgroup_size: wg,
                    max_group_segment_size: lds,
                    kernels: OpsKernels { tracked },
                };
            }
        }
    }
    for i in 0..m.slots.len() {
        if !m.slots[i].1 {
            q.publish_header(i as u64, &m.slots[i].0);
            m.slots[i].1 = true;
        }
    }
    // Each round sets every signal to 0, which satisfies the AND/OR barrier
    // at the head (completions earlier in the same drain may take a signal
    // below 0 again: the next round resets it). A barrier-value packet may
    // need another value: its signal is set to one that meets its condition.
    // One whose condition no value can meet (a null signal, or a mask that
    // rules it out) waits for good, as it would on a real queue, and the
    // packets behind it stay unrecorded.
    for _ in 0..=m.slots.len() {
        for k in 0..OPS_SIGNALS {
            s.set(s.handle(k), 0);
            m.signals[k] = 0;
        }
        let mut out = drain(&mut m, &mut state, &mut sink);
        if let DrainOutcome::BlockedOnBarrier { index } = out {
            let blocked = m.slots[index as usize].0;
            if !is_and_or(&blocked) {
                let Some((k, v)) = m.release(&s, &blocked) else {
                    return OpsReplay::of(&m, &sink);
                };
                s.set(s.handle(k), v);
                m.signals[k] = v;
                out = drain(&mut m, &mut state, &mut sink);
            }
        }
        if out == DrainOutcome::Idle {
            break;
        }
    }
    assert_eq!(
        sink.records.len(),
        m.slots.len(),
        "every packet recorded once"
    );
    OpsReplay::of(&m, &sink)
}

/// What a [`replay_ops`] run did, for tests that check an input reaches what
/// it is meant to.
#[derive(Clone, Debug)]
pub struct OpsReplay {
    /// The 64 bytes of every packet published, in index order.
    pub packets: Vec<[u8; 64]>,
    /// The records the processor produced (every packet's, unless one waits
    /// for good at the end: a barrier-value packet no signal value releases).
    pub records: Vec<PacketRecord>,
}

impl OpsReplay {
    fn of(m: &OpsModel, sink: &VecSink) -> OpsReplay {
        OpsReplay {
            packets: m.slots.iter().map(|(bytes, _)| *bytes).collect(),
            records: sink.records.clone(),
        }
    }
}

/// Whether `raw` is a barrier-AND or barrier-OR packet.
fn is_and_or(raw: &[u8; 64]) -> bool {
    use super::parse::header_type;
    matches!(
        header_type(u16::from_le_bytes([raw[0], raw[1]])),
        PacketType::BARRIER_AND | PacketType::BARRIER_OR
    )
}
