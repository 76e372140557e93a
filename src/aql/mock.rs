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
use super::{PacketRecord, QueueMemory, RecordSink, SignalOps};
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
