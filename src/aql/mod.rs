//! The pure AQL layer: a parser/validator for single 64-byte packets and a
//! queue processor that applies the diagnostic completion contract.
//!
//! Nothing in here does I/O, reads a clock, touches a global or uses `unsafe`.
//! The processor reaches queue memory, signals, time and the capture only through
//! the traits below, so tests drive it with a mock producer and the virtual
//! runtime drives it over a real ring.
//!
//! Contract (see `docs/aql-diagnostic-contract.md`): kernels never run. A valid
//! packet is recorded, its completion signal (if any) is decremented by one,
//! its slot is set back to INVALID and `read_index` advances. A rejected packet is
//! recorded with its reasons, its completion signal is left untouched, and its
//! slot is still invalidated and `read_index` still advances.
//!
//! Submodules: [`parse`] (one packet: validate, decode, encode), [`processor`]
//! (a queue: [`Processor::drain`] and the [`DoorbellGate`]) and [`mock`] (a
//! mock producer, signals and sink for tests, benches and fuzz targets; the
//! shim does not use it; unlike the processor, its producer side may wait:
//! `MockQueue::wait_for_space` yields the thread while the ring is full).

// The mock is a test oracle (for tests, benches and fuzz targets, never the
// shim): its panics on a broken model are the point.
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub mod mock;
pub mod parse;
pub mod processor;

pub use parse::{
    DecodedPacket, FenceScopeName, MAX_WORKGROUP_SIZE, ParsedPacket, QUEUE_ERROR_PRECEDENCE,
    Reason, ReasonSet, StatusBasis, parse_supported_packet, parse_supported_packet_with_limit,
};
pub use processor::{
    CLOCK_STRIDE, DoorbellGate, DrainOutcome, INVALID_HEADER, Processor, QueueState,
};

/// Processing status of one observed packet.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Status {
    /// Passed validation; completed under the diagnostic contract (never executed).
    Validated = 0,
    /// Failed validation; completion signal left untouched.
    Rejected = 1,
}

impl Status {
    /// The JSONL `status` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Validated => "validated",
            Status::Rejected => "rejected",
        }
    }
    /// The JSONL `label` field.
    pub fn label(self) -> &'static str {
        match self {
            Status::Validated => LABEL_COMPLETE,
            Status::Rejected => LABEL_REJECTED,
        }
    }
}

/// Label of a validated packet: completed under the contract, never executed.
pub const LABEL_COMPLETE: &str = "diagnostic_complete_no_execution";
/// Second label of a validated packet, so nobody reads "complete" as "succeeded".
pub const LABEL_NOT_KERNEL_SUCCESS: &str = "not_kernel_success";
/// Label of a rejected packet.
pub const LABEL_REJECTED: &str = "diagnostic_rejected";
/// Label of every record (validated or rejected) of an observe-mode capture:
/// the packet was captured, then forwarded to the real runtime, which ran it.
/// It replaces the diagnostic labels above, which would be false there.
pub const LABEL_OBSERVED: &str = "observed_forwarded_to_runtime";

/// How the symbols of the HIP runtime's own blit kernels (memset,
/// device-to-device copies, stream write/wait value) begin. Under SoftGPU they
/// never run, so the data they would have produced is not produced: the
/// processor adds [`Reason::RuntimeBlitKernelNotExecuted`] to their dispatches
/// (never in observe mode, where the real runtime runs them), and a violation
/// of their metadata is a finding, not a reject ([`KernelInfo::runtime_blit`]).
pub const RUNTIME_BLIT_PREFIX: &str = "__amd_rocclr_";

/// Whether `symbol` names one of the HIP runtime's blit kernels
/// ([`RUNTIME_BLIT_PREFIX`]); the runtime sets [`KernelInfo::runtime_blit`] from it.
pub fn is_runtime_blit_kernel(symbol: &str) -> bool {
    symbol.starts_with(RUNTIME_BLIT_PREFIX)
}

/// One observed packet, as the processor hands it to a [`RecordSink`].
/// Fixed-size and `Copy`, so the doorbell path never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PacketRecord {
    /// The queue's `hsa_queue_t::id`.
    pub queue_id: u64,
    /// Logical (unwrapped) packet index in its queue.
    pub packet_index: u64,
    /// The 64 bytes as copied out of the ring, header included.
    pub raw: [u8; 64],
    pub status: Status,
    /// Rejection reasons and non-fatal findings.
    pub reasons: ReasonSet,
    /// When the processor observed the packet (ns, the runtime's 1 GHz domain).
    pub observed_ns: u64,
    /// When the processor finished with it (completed or rejected). Within
    /// a drain one clock reading serves up to [`processor::CLOCK_STRIDE`]
    /// packets: a packet between two reads carries the earlier reading, and a
    /// one-packet drain's single reading is both its times. 0 (and
    /// `observed_ns` 0) when the sink does not want times
    /// ([`RecordSink::wants_times`]).
    pub done_ns: u64,
    /// OS thread id of the thread that processed it.
    pub thread: u32,
}

/// Queue memory as the processor sees it: a ring of 64-byte slots plus the
/// write and read indices. Implementations over foreign memory must use the
/// orderings named on each method.
pub trait QueueMemory {
    /// Number of slots (a power of two).
    fn size(&self) -> u64;
    /// `write_index`, with acquire ordering.
    fn load_write_index(&self) -> u64;
    /// The 16-bit header of the slot holding logical index `index`, acquire.
    fn load_header(&self, index: u64) -> u16;
    /// Copy the 64 bytes of the slot holding `index` (after `load_header`).
    fn read_packet(&self, index: u64) -> [u8; 64];
    /// Store a header into the slot holding `index`, release (used to invalidate).
    fn store_header(&self, index: u64, header: u16);
    /// Store `read_index`, release.
    fn store_read_index(&self, value: u64);
}

/// Signals as the processor sees them.
pub trait SignalOps {
    /// Whether `handle` names a live signal this runtime may write.
    fn is_valid(&self, handle: u64) -> bool;
    /// Whether a packet may name `handle` as its completion signal: a live
    /// signal that is not a queue's own doorbell (decrementing a doorbell
    /// would ring, or unring, a queue the packet does not own).
    fn may_complete(&self, handle: u64) -> bool {
        self.is_valid(handle)
    }
    /// Current value, acquire. Only called on handles for which `is_valid` held.
    fn load(&self, handle: u64) -> i64;
    /// Completion: atomic decrement by one, release, then wake waiters.
    fn complete(&self, handle: u64);
}

/// What the runtime knows about a loaded kernel, for validating dispatches
/// against it (from the kernel descriptor and the code object's metadata).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct KernelInfo {
    /// Index of the agent the code object was loaded for.
    pub agent: u32,
    pub kernarg_size: u32,
    /// Static LDS and scratch per work-item.
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    /// 0 when the metadata does not say.
    pub max_flat_workgroup_size: u32,
    pub reqd_workgroup_size: Option<[u32; 3]>,
    /// One of the HIP runtime's own blit kernels ([`is_runtime_blit_kernel`]):
    /// the program cannot choose how the runtime launches it, so a violation
    /// of its metadata is recorded as a finding instead of rejecting the
    /// packet (which would leave HIP waiting on its completion forever); and
    /// since it never runs, its dispatches carry
    /// [`Reason::RuntimeBlitKernelNotExecuted`] (except in observe mode).
    pub runtime_blit: bool,
}

/// The result of looking a kernel object up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KernelLookup {
    /// No kernel table: dispatches are validated on their own bytes only.
    NotTracked,
    /// The runtime tracks kernels and this object is not one of them.
    Unknown,
    Known(KernelInfo),
}

/// Kernel objects as the processor sees them.
pub trait KernelTable {
    fn lookup(&self, kernel_object: u64) -> KernelLookup;
}

/// No kernel table (mock queues, tests, replay).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoKernels;

impl KernelTable for NoKernels {
    fn lookup(&self, _kernel_object: u64) -> KernelLookup {
        KernelLookup::NotTracked
    }
}

/// Where records go, and the clock and thread identity to stamp them with.
pub trait RecordSink {
    /// Accept one record. May block (back-pressure) but never drops.
    fn record(&mut self, rec: &PacketRecord);
    /// A time stamp for a record: ns of CLOCK_MONOTONIC, or whatever stamp
    /// the sink's capture converts to ns later (the shim's capture takes TSC
    /// ticks where the kernel's clock is the TSC: `capture::clock`).
    fn now_ns(&self) -> u64;
    /// Whether the records' times are used. A sink that only counts (the
    /// shim with capture off) says no, and the processor then never reads
    /// the clock: its records carry 0 for both times.
    fn wants_times(&self) -> bool {
        true
    }
    /// OS thread id of the caller.
    fn thread_id(&self) -> u32;
}
