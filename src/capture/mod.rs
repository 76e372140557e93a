//! The versioned binary capture format: a background writer that never drops a
//! record, and a bounded reader that never panics.
//!
//! A pure format: it stores what the processor and the runtime hand it
//! (records with their reasons and findings, code objects, kernels) and reads
//! it back. Policy lives elsewhere: which findings a record carries is the
//! processor's (`crate::aql`), how a record is labelled and worded is the
//! report view's (`crate::report`).
//!
//! Why it exists: every AQL packet a program submits is observed once, on the
//! doorbell path, and must end up in a file that outlives the process, however
//! the process ends. The doorbell path only copies a fixed-size
//! [`PacketRecord`] into one slot of the live ring ([`QueueProducer::push`]),
//! which is a shared mapping of the capture file itself: the record is in the
//! file as soon as the push returns, even if the process is killed right
//! after. One writer thread encodes the ring's records into compact frames
//! after it (see [`writer`]); a reader recovers from the ring whatever the
//! frames lack. The record's times are stamped as cheaply as the machine
//! allows and converted to CLOCK_MONOTONIC ns by the writer ([`clock`]).
//!
//! How it fails: the writer never drops a record. When it falls behind, producers
//! wait. An I/O error is kept and reported by [`CaptureWriter::finish`]; the
//! writer keeps draining so producers never block on a dead disk. The reader
//! treats a file cut at any byte as an incomplete capture (every complete record
//! is recovered) and anything else that is wrong as a [`CaptureError`] naming
//! the byte offset; what a capture lacks, and why, is in [`Capture::end`]. The
//! byte layout and the versioning rules are in `docs/CAPTURE_FORMAT.md`.
//!
//! [`PacketRecord`]: crate::aql::PacketRecord

pub mod clock;
mod create;
pub mod format;
pub mod kernarg;
mod reader;
pub mod ring;
mod writer;

pub use kernarg::{KERNARG_BOUND, KernargSubmit, KernelArgSources, RecordKernarg, Unreadable};
pub use reader::{CaptureError, CaptureErrorKind, read_bytes, read_file};
pub use writer::{
    ArgCheck, ArgCheckInput, ArgGeneration, CaptureWriter, DEFAULT_RING_CAPACITY,
    MAX_RING_CAPACITY, QueueProducer, WriterOptions, on_termination_signal,
};

use std::path::PathBuf;

use crate::abi::PacketType;
use crate::aql::{PacketRecord, ReasonSet, Status};

/// What the capture's first frame says about the process.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CaptureHeader {
    pub pid: u32,
    /// Wall-clock start of the capture, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// The runtime mode in effect (`virtual`, `intercept`, `observe`).
    pub mode: String,
    pub agents: Vec<AgentDesc>,
}

impl CaptureHeader {
    /// Whether the capture was recorded in observe mode ([`MODE_OBSERVE`]):
    /// packets were captured before the doorbell was forwarded to a real ROCr,
    /// which then ran the kernels. (How reports label such records is the
    /// report view's business, `crate::report`.)
    pub fn is_observe(&self) -> bool {
        self.mode == MODE_OBSERVE
    }
}

/// [`CaptureHeader::mode`] of a capture recorded with `SOFTGPU_MODE=observe`.
pub const MODE_OBSERVE: &str = "observe";

/// One agent the runtime exposed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct AgentDesc {
    /// The index queues refer to ([`QueueInfo::agent_index`]).
    pub index: u32,
    pub kind: AgentKind,
    pub name: String,
    /// Target id such as `gfx90a`; `None` for CPU agents.
    pub target: Option<String>,
}

/// Agent kind, stored as a byte (0 CPU, 1 GPU).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AgentKind {
    Cpu = 0,
    Gpu = 1,
}

/// Where a dispatch's kernarg pointer points, decided on the writer thread.
/// Stored as a byte; only meaningful for kernel dispatch packets (other packet
/// types are stored as `Null`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum KernargClass {
    /// The kernarg address is 0.
    Null = 0,
    /// Memory the shim allocated.
    Softgpu = 1,
    /// Anything else; never dereferenced.
    ForeignOpaque = 2,
}

impl KernargClass {
    /// The JSONL `kernarg_class` value.
    pub fn as_str(self) -> &'static str {
        match self {
            KernargClass::Null => "null",
            KernargClass::Softgpu => "softgpu",
            KernargClass::ForeignOpaque => "foreign_opaque",
        }
    }
    pub fn from_u8(v: u8) -> Option<KernargClass> {
        match v {
            0 => Some(KernargClass::Null),
            1 => Some(KernargClass::Softgpu),
            2 => Some(KernargClass::ForeignOpaque),
            _ => None,
        }
    }
}

/// A queue as registered with the writer (one Queue frame).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct QueueInfo {
    pub queue_id: u64,
    pub agent_index: u32,
    /// Slots in the queue's ring.
    pub ring_size: u32,
    /// When the queue was created (the runtime's ns clock).
    pub created_ns: u64,
}

/// One code object's symbol table: `(kernel_object address, symbol name)`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CodeObject {
    /// Writer-assigned, from 0, in registration order.
    pub id: u64,
    pub symbols: Vec<(u64, String)>,
}

/// What a capture knows about one loaded kernel, from its kernel descriptor
/// and code-object metadata, keyed by kernel object. Fills rocprofv3's
/// register and LDS columns.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct KernelMeta {
    pub kernel_object: u64,
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    pub agpr_count: u32,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub wavefront_size: u32,
    pub max_flat_workgroup_size: u32,
}

/// One observed packet as read back from a capture.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CapturedRecord {
    /// Capture-wide sequence number, from 0, in push order.
    pub seq: u64,
    pub queue_id: u64,
    pub packet_index: u64,
    pub raw: [u8; 64],
    pub status: Status,
    pub kernarg_class: KernargClass,
    pub reasons: ReasonSet,
    pub observed_ns: u64,
    pub done_ns: u64,
    pub thread: u32,
    /// Byte offset of this record's frame in the file.
    pub offset: u64,
    /// 2.1: the dispatch's kernarg bytes, by reference.
    pub kernarg: RecordKernarg,
}

impl CapturedRecord {
    /// The record as the processor produced it (without seq, class and offset).
    pub fn packet_record(&self) -> PacketRecord {
        PacketRecord {
            queue_id: self.queue_id,
            packet_index: self.packet_index,
            raw: self.raw,
            status: self.status,
            reasons: self.reasons,
            observed_ns: self.observed_ns,
            done_ns: self.done_ns,
            thread: self.thread,
        }
    }
    /// The packet type from the header's low byte.
    pub fn packet_type(&self) -> PacketType {
        PacketType(self.raw[crate::abi::packet_offset::HEADER])
    }
    /// Whether this is a barrier-AND or barrier-OR packet.
    pub fn is_barrier(&self) -> bool {
        is_barrier_packet(&self.raw)
    }
}

/// Barrier-AND, barrier-OR, and AMD's vendor-specific barrier-value packet.
pub fn is_barrier_packet(raw: &[u8; 64]) -> bool {
    use crate::abi::packet_offset as po;
    let t = PacketType(raw[po::HEADER]);
    t == PacketType::BARRIER_AND
        || t == PacketType::BARRIER_OR
        || (t == PacketType::VENDOR_SPECIFIC
            && raw[po::AMD_FORMAT] == crate::abi::amd_packet_type::BARRIER_VALUE)
}

/// The counts a capture ends with, and how they are defined.
///
/// - `records`: Packet frames (one per observed packet, any type, any status).
/// - `validated` / `rejected`: records by status; `validated + rejected == records`.
/// - `barriers`: records of type barrier-AND or barrier-OR, whatever their status
///   (a rejected barrier counts in `rejected` and in `barriers`).
/// - `dispatches_validated`: validated records that are not barriers. This is the
///   `N` of the exit summary's "N dispatches validated".
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct Counts {
    pub records: u64,
    pub validated: u64,
    pub rejected: u64,
    pub barriers: u64,
    pub dispatches_validated: u64,
}

impl Counts {
    /// Count one record, classified by its raw bytes.
    pub fn add(&mut self, status: Status, raw: &[u8; 64]) {
        self.add_kind(status, is_barrier_packet(raw));
    }

    /// [`Counts::add`] for a packet already known to be a barrier or not.
    #[inline]
    pub fn add_kind(&mut self, status: Status, barrier: bool) {
        self.records += 1;
        match status {
            Status::Validated => {
                self.validated += 1;
                if !barrier {
                    self.dispatches_validated += 1;
                }
            }
            Status::Rejected => self.rejected += 1,
        }
        if barrier {
            self.barriers += 1;
        }
    }
}

/// The last frame of a finished capture.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Trailer {
    pub counts: Counts,
    /// Times a drain stopped at an unpublished slot (from the runtime).
    pub stalls: u64,
    /// When the capture was finished (the runtime's ns clock, as passed to `finish`).
    pub end_ns: u64,
    pub queues: u32,
    pub code_objects: u32,
}

/// What [`CaptureWriter::finish`] reports: the counts of the records the
/// Trailer covers (every record pushed before `finish` was called).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CaptureSummary {
    pub counts: Counts,
    pub stalls: u64,
    /// Packets the runtime reported pending on live queues at the ending.
    pub pending_packets: u64,
    /// Records whose `seq` was taken before `finish` but that were not written
    /// within its timeout (a push in flight).
    pub uncommitted: u64,
    pub path: PathBuf,
}

/// How a capture's Trailer says it ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EndKind {
    /// `finish` at the program's exit (or an explicit finish).
    Finish,
    /// A termination signal that SoftGPU's handler caught (SIGTERM 15,
    /// SIGINT 2): the capture was finalised, then the signal's default
    /// action ended the program.
    Signal(u32),
}

/// The live ring's header as the file holds it (format 2.x).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct RingInfo {
    /// File offset of the Ring frame.
    pub offset: u64,
    pub capacity: u64,
    /// Seqs handed out to producers.
    pub next_seq: u64,
    /// Seqs below this were encoded into the frame stream (as the writer
    /// last said; the reader does not rely on it).
    pub consumed: u64,
    /// `next_seq` when the program's exit began (0: it did not begin).
    pub exit_seq: u64,
    /// The ring header's lifecycle word (`ring::state`).
    pub state: u64,
    /// The signal that ended the program, if one did.
    pub signal: u64,
    /// Pushes discarded because no writer was left (should be 0).
    pub discarded: u64,
    /// Times a producer waited for room.
    pub waits: u64,
}

/// What a capture lacks, and how it ended: everything the reader can tell
/// beyond the records themselves. `Capture::complete` is true only when
/// none of this says something is missing.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Ending {
    /// From the Trailer; `None` without one.
    pub kind: Option<EndKind>,
    /// Records that arrived after the program's exit began (late frames after
    /// the Trailer, or recovered records at or past the exit point), and the
    /// queues they belong to (sorted, distinct).
    pub late_records: u64,
    pub late_queues: Vec<u64>,
    /// `(queue_id, packets)` left pending (behind an unsatisfied barrier, or
    /// never published) when the queue was destroyed (QueueEnd frames).
    pub pending_at_destroy: Vec<(u64, u64)>,
    /// `(queue_id, packets)` pending on live queues at the ending (Trailer).
    pub pending_at_exit: Vec<(u64, u64)>,
    /// Records read from the live ring because the frame stream lacks them
    /// (the process died before its writer encoded them).
    pub recovered: u64,
    /// Seqs handed out that are neither in the stream nor in the ring (a
    /// push cut short by the process's death, or a stream that lost frames).
    pub missing: u64,
    /// From the Trailer: pushes still in flight when it was written.
    pub uncommitted: u64,
    /// Ring slots whose commit word does not fit their position, or whose
    /// fields are out of range (damage; skipped).
    pub bad_slots: u64,
    /// The ring header (format 2.x with a Ring frame).
    pub ring: Option<RingInfo>,
}

impl Ending {
    /// Packets pending at queue destroy and at the ending, added up. The
    /// counts come from the file, so the sum saturates at `u64::MAX` rather
    /// than overflow.
    pub fn pending_packets(&self) -> u64 {
        packet_total(&self.pending_at_destroy).saturating_add(packet_total(&self.pending_at_exit))
    }
}

/// The packets in a `(queue_id, packets)` list, added up, saturating at
/// `u64::MAX` (the counts come from a file and may be anything).
pub fn packet_total(list: &[(u64, u64)]) -> u64 {
    list.iter().fold(0u64, |n, p| n.saturating_add(p.1))
}

/// A capture read back by [`read_bytes`] or [`read_file`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Capture {
    /// `(major, minor)` from the preamble.
    pub version: (u16, u16),
    pub header: CaptureHeader,
    pub queues: Vec<QueueInfo>,
    pub code_objects: Vec<CodeObject>,
    /// Per-kernel metadata (format 1.1+), keyed by kernel object.
    pub kernels: std::collections::HashMap<u64, KernelMeta>,
    /// Sorted by `seq`.
    pub records: Vec<CapturedRecord>,
    pub trailer: Option<Trailer>,
    /// A trailer was read, it agrees with the records, the program ended
    /// normally (`finish`), and nothing is missing: no late record, no
    /// pending packet, nothing recovered, missing or uncommitted ([`Ending`]).
    pub complete: bool,
    /// Where the readable part ends when the file was cut (mid-frame, or a last
    /// frame whose checksum fails because it was torn); `None` when every byte
    /// was read.
    pub truncated_at: Option<u64>,
    /// Frames of unknown, non-critical kinds that were skipped.
    pub skipped_frames: u64,
    /// How the capture ended and what it lacks.
    pub end: Ending,
    /// 2.1: distinct kernarg blocks by id.
    pub kernarg_blocks: std::collections::HashMap<u64, Vec<u8>>,
    /// 2.1: pointer findings blobs by id.
    pub kernarg_findings: std::collections::HashMap<u64, Vec<crate::kernargs::ArgFinding>>,
    /// 2.1: what decoding needs, by kernel object (the first entry wins).
    pub kernel_args: std::collections::HashMap<u64, KernelArgSources>,
}

impl Capture {
    /// Counts recomputed from the records (equal to the trailer's when complete).
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.records {
            c.add(r.status, &r.raw);
        }
        c
    }
    /// The symbol name of a kernel object, from the code-object symbol tables.
    pub fn kernel_symbol(&self, kernel_object: u64) -> Option<&str> {
        self.code_objects
            .iter()
            .flat_map(|co| co.symbols.iter())
            .find(|(addr, _)| *addr == kernel_object)
            .map(|(_, name)| name.as_str())
    }
    /// The queue registered under `queue_id`.
    pub fn queue(&self, queue_id: u64) -> Option<&QueueInfo> {
        self.queues.iter().find(|q| q.queue_id == queue_id)
    }
    /// The record's captured kernarg bytes, when the capture holds them.
    pub fn kernarg_bytes(&self, rec: &CapturedRecord) -> Option<&[u8]> {
        match rec.kernarg {
            RecordKernarg::Block { block, .. } => {
                self.kernarg_blocks.get(&block).map(Vec::as_slice)
            }
            _ => None,
        }
    }
    /// The pointer findings the runtime recorded for the record's arguments.
    pub fn arg_findings(&self, rec: &CapturedRecord) -> &[crate::kernargs::ArgFinding] {
        match rec.kernarg {
            RecordKernarg::Block {
                findings: Some(f), ..
            } => self.kernarg_findings.get(&f).map_or(&[], Vec::as_slice),
            _ => &[],
        }
    }
    /// The record's arguments decoded from the capture alone (its block and
    /// its kernel's KernelArgs entry), when it holds both.
    pub fn decode_args(&self, rec: &CapturedRecord) -> Option<crate::kernargs::DecodedArgs> {
        let bytes = self.kernarg_bytes(rec)?;
        let mut ko = [0u8; 8];
        let po = crate::abi::packet_offset::KERNEL_OBJECT;
        ko.copy_from_slice(&rec.raw[po..po + 8]);
        let k = self.kernel_args.get(&u64::from_le_bytes(ko))?;
        Some(crate::kernargs::decode(
            bytes,
            &k.metadata,
            k.sources.sources(),
        ))
    }
    /// The agent a queue belongs to.
    pub fn agent_of_queue(&self, queue_id: u64) -> Option<&AgentDesc> {
        let q = self.queue(queue_id)?;
        self.header.agents.iter().find(|a| a.index == q.agent_index)
    }
}
