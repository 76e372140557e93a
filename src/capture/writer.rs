//! The capture writer: one live ring inside the capture file on the doorbell
//! path, one background thread that only encodes.
//!
//! Hot path ([`QueueProducer::push`]): one `fetch_add` for `seq` and seventeen
//! word stores into the ring slot, which is a shared mapping of the file
//! itself (see [`super::ring`]); no allocation, no lock, no system call
//! unless the ring is full (then it waits: back-pressure, never loss). The
//! slot's cache lines were last read by the writer thread on another core,
//! so the doorbell path asks for them early ([`QueueProducer::prepare`], and
//! each push for the slot four records on), and the store does not wait.
//! Because the slot is the file's page cache, a record is in the file the
//! moment `push` returns, whatever happens to the process next; the
//! processor records a packet before it completes its signal, so every packet
//! whose completion a program could observe is in the file.
//!
//! The writer thread reads committed slots in `seq` order, encodes them into
//! compact PacketBatch frames, writes them after the ring region with
//! `pwrite`, and then advances the ring's `consumed` word. Cold-path
//! registrations ([`CaptureWriter::register_queue`],
//! [`CaptureWriter::add_code_object`], [`QueueProducer::end`]) take a mutex
//! and hand the thread a control message; a Queue frame always precedes its
//! queue's records.
//!
//! Endings (how each is kept is in `docs/CAPTURE_FORMAT.md`):
//! - [`CaptureWriter::finish`] (normal exit): the writer encodes everything
//!   pushed before the call, writes the Trailer (with the packets the runtime
//!   says are pending), `fdatasync`s, and keeps running: records that arrive
//!   later (threads still launching while the program exits) become late
//!   frames after the Trailer, which a reader reports.
//! - SIGTERM/SIGINT: [`on_termination_signal`], installed by
//!   [`CaptureWriter::handle_termination_signals`], asks the writer to
//!   finalise and waits for it, boundedly.
//! - `abort`, `_exit`, SIGKILL: nothing runs; the ring in the file holds every
//!   record the stream lacks, and the reader recovers them.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use super::clock::{Pair, Stamp, TickConverter};
use super::format::{self, BatchEncoder, BatchRecord, PayloadBuf, TrailerV2, kind};
use super::kernarg::{
    self, ARENA_BYTES, Arena, KERNARG_BOUND, KernargSubmit, KernelArgSources, RecordKernarg,
    Unreadable, slot_ref,
};
use super::ring::{self, Ring, hdr, state};
use super::{
    AgentKind, CaptureHeader, CaptureSummary, CodeObject, Counts, KernargClass, QueueInfo,
};
use crate::abi::PacketType;
use crate::aql::PacketRecord;

/// Slots in the live ring by default (128 bytes each: 2 MiB of the file).
/// 4,096 slots (512 KiB) made a burst's push at most about 1 ns a packet
/// cheaper, and halved the writer's sustained wall rate (the producer waits
/// twice as often: `docs/PERFORMANCE.md`, 5 December), so the default stays.
pub const DEFAULT_RING_CAPACITY: usize = 16384;
/// The most slots a ring may have (its region must fit one frame).
pub const MAX_RING_CAPACITY: usize = 65536;

/// Longest string stored (agent names, mode, targets, symbol names); longer ones
/// are cut on a character boundary.
const MAX_STRING: usize = 4096;
/// Largest Code Object payload the writer produces before starting a new frame
/// for the same code object.
const CODE_OBJECT_CHUNK: usize = 4 << 20;
/// Most records the writer encodes into one PacketBatch frame.
const PASS_RECORDS: u64 = 8192;
/// A pass that encoded at least this many records is followed by another at
/// once (a burst is going on); after a smaller one the writer sleeps for its
/// poll interval, so that records gather and a pass's fixed cost (locks, one
/// write) is spread over many.
const BUSY_PASS: u64 = 256;

/// The packet word (8 bytes) that holds a dispatch's kernarg address: the
/// one word the fast path lets differ from the previous record.
const KERNARG_WORD: usize = crate::abi::packet_offset::KERNARG_ADDRESS / 8;
const _: () = assert!(crate::abi::packet_offset::KERNARG_ADDRESS % 8 == 0);

/// Writer tuning. [`WriterOptions::default`] is what the runtime should use.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Slots in the live ring (at least 1, at most [`MAX_RING_CAPACITY`]),
    /// rounded up to a power of two (a slot is then found with a mask).
    pub ring_capacity: usize,
    /// How long the writer thread sleeps when it finds nothing to do (it is
    /// also woken when the ring passes half full, and by every request).
    pub poll_interval: Duration,
    /// How long `finish` waits for records whose `seq` was taken before it
    /// but that are not written yet (a thread in the middle of a push); the
    /// Trailer then counts them as `uncommitted`.
    pub finish_timeout: Duration,
    /// How the doorbell path stamps records ([`QueueProducer::now`]). The
    /// default is CLOCK_MONOTONIC ns; the runtime passes
    /// [`Stamp::for_this_machine`] (TSC stamps, which the writer converts,
    /// where the kernel's clocksource is the TSC).
    pub stamp: Stamp,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            ring_capacity: DEFAULT_RING_CAPACITY,
            poll_interval: Duration::from_millis(10),
            finish_timeout: Duration::from_secs(5),
            stamp: Stamp::Ns,
        }
    }
}

/// The kernarg classifier: called on the writer thread only (so it may keep
/// a memo without a lock).
type Classify = Box<dyn FnMut(u64) -> KernargClass + Send>;

/// What the pointer checker gets for one dispatch whose kernarg block was
/// captured (see [`CaptureWriter::set_arg_checker`]).
#[derive(Clone, Copy, Debug)]
pub struct ArgCheckInput<'a> {
    pub queue_id: u64,
    /// The capture agent index of the queue's agent (from its Queue
    /// registration; `None` if the writer never saw one).
    pub agent_index: Option<u32>,
    pub kernel_object: u64,
    /// The captured bytes (at most [`KERNARG_BOUND`]).
    pub block: &'a [u8],
}

/// The runtime's pointer checker: the findings of every `global_buffer`
/// argument of a block (empty: nothing to record).
pub type ArgCheck =
    Box<dyn Fn(&ArgCheckInput<'_>) -> Vec<crate::kernargs::ArgFinding> + Send + Sync>;

/// A number that moves whenever what the pointer checker sees changes (an
/// allocation, a free, an access grant): while it and a dispatch's kernel,
/// agent and block are those of the last check, the writer reuses that
/// check's findings instead of calling the checker (see
/// [`CaptureWriter::set_arg_checker`]).
pub type ArgGeneration = Box<dyn Fn() -> u64 + Send + Sync>;

/// The last pointer check the writer made: kernel object, agent, block id,
/// the checker's generation before the check, and the findings blob it gave.
#[derive(Clone, Copy, PartialEq)]
struct LastCheck {
    kernel_object: u64,
    agent: Option<u32>,
    block: u64,
    generation: u64,
    findings: Option<u64>,
}

/// Most bytes of distinct blocks the writer remembers for deduplication; past
/// it, it forgets them all and starts again (a block is then stored again:
/// never wrong, only larger).
const MAX_INTERNED_BYTES: usize = 32 << 20;

enum Control {
    Queue(QueueInfo, Arc<Arena>),
    KernelArgs(Vec<Arc<KernelArgSources>>),
    QueueEnd(QueueEnd),
    CodeObject(CodeObject),
    KernelInfo(Vec<super::KernelMeta>),
}

#[derive(Clone, Copy, Debug)]
struct QueueEnd {
    queue_id: u64,
    pending: u64,
    end_ns: u64,
    /// Written once every record with a lower seq is encoded.
    after_seq: u64,
}

struct FinishRequest {
    finish_seq: u64,
    stalls: u64,
    end_ns: u64,
    pending: Vec<(u64, u64)>,
    deadline: Instant,
}

type Memo = Result<CaptureSummary, (io::ErrorKind, String)>;

/// State shared by the writer handle, the producers and the writer thread.
struct Shared {
    ring: Ring,
    /// How records are stamped.
    stamp: Stamp,
    region: crate::sys::SharedRegion,
    /// Set in a forked child (and before the ring is detached there): pushes
    /// return at once.
    disabled: AtomicBool,
    file: File,
    path: PathBuf,
    control: Mutex<Vec<Control>>,
    /// Set by `Drop`: the writer encodes what is committed and exits.
    shutdown: AtomicBool,
    /// Set when the writer thread has exited: a producer that finds the ring
    /// full discards (counted) instead of waiting forever.
    closed: AtomicBool,
    writer: OnceLock<Thread>,
    next_code_object: AtomicU64,
    finish: Mutex<Option<FinishRequest>>,
    /// The Trailer's outcome, once written (by `finish`'s request).
    finished: Mutex<Option<Memo>>,
    progress: Mutex<()>,
    progress_cv: Condvar,
    /// Threads waiting on `progress_cv` (the writer notifies only if any).
    waiters: AtomicU32,
    /// The writer's first I/O error, for `flush` to report.
    error: Mutex<Option<(io::ErrorKind, String)>>,
    /// Per-queue entries the writer thread holds (live queue ids and
    /// QueueEnds waiting for their records), as of its last pass.
    tracked_queues: AtomicU64,
    /// Arena ids handed out (24 bits are stored per record).
    next_arena: AtomicU32,
    /// Producers dropped (their arenas can go once their records are encoded).
    closed_arenas: AtomicU64,
    /// The runtime's pointer checker, called on the writer thread.
    arg_check: OnceLock<ArgCheck>,
    /// The checker's generation, when it has one.
    arg_generation: OnceLock<ArgGeneration>,
}

impl Shared {
    fn nudge(&self) {
        if let Some(t) = self.writer.get() {
            t.unpark();
        }
    }
    fn control(&self) -> MutexGuard<'_, Vec<Control>> {
        self.control.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn word(&self, i: usize) -> &'static AtomicU64 {
        self.ring.word(i)
    }
    /// Keeps `e` as the capture's I/O error unless one is kept already.
    fn keep_error(&self, e: &io::Error) {
        let mut kept = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_none() {
            *kept = Some((e.kind(), format!("write failed: {e}")));
        }
    }
    /// The first I/O error kept, this capture's writer's or its sync thread's.
    fn kept_error(&self) -> Option<(io::ErrorKind, String)> {
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    /// `fdatasync`s what `create` wrote (preamble, Header, Ring frame) and
    /// `fsync`s the directory, so the file and its name survive an OS crash.
    fn sync_created(&self) {
        if let Err(e) = self.file.sync_data() {
            self.keep_error(&e);
        }
        super::create::sync_dir_of(&self.path);
    }
    /// Waits (up to `timeout`) until `done()` holds or the writer has exited.
    fn wait_until(&self, timeout: Duration, done: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + timeout;
        self.waiters.fetch_add(1, Ordering::SeqCst);
        self.nudge();
        let mut g = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        let ok = loop {
            if done() {
                break true;
            }
            if self.closed.load(Ordering::Acquire) {
                break done();
            }
            let now = Instant::now();
            if now >= deadline {
                break false;
            }
            g = self
                .progress_cv
                .wait_timeout(g, (deadline - now).min(Duration::from_millis(5)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(g);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        ok
    }
    fn notify(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self.progress.lock().unwrap_or_else(|e| e.into_inner());
            self.progress_cv.notify_all();
        }
    }
}

/// A capture being written. `Send + Sync`; share it as `Arc<CaptureWriter>`.
pub struct CaptureWriter {
    path: PathBuf,
    shared: Arc<Shared>,
    finish_timeout: Duration,
    memo: Mutex<Option<Memo>>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for CaptureWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureWriter")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The doorbell path's handle for one queue's records. `Send`; one producing
/// thread at a time per handle (the queue's drain lock orders them). Several
/// handles push into the one ring concurrently.
pub struct QueueProducer {
    queue_id: u64,
    ring: Ring,
    shared: Arc<Shared>,
    /// Last `consumed` we saw; refreshed only at `check_at`.
    cached_consumed: u64,
    capacity: u64,
    /// Fill level at which the writer is woken if it is behind (half full).
    nudge_at: u64,
    /// The first `seq` at which this producer looks at `consumed` again:
    /// `cached_consumed + nudge_at` while the ring was below half full at
    /// the last look, a step further on while it was above; never past
    /// `cached_consumed + capacity`, so every `seq` below it has a free slot
    /// and the push checks one compare.
    check_at: u64,
    /// This queue's kernarg arena, and where its next entry goes.
    arena: Arc<Arena>,
    arena_pos: u64,
    arena_consumed: u64,
    /// The ring's and the arena's `consumed` when this producer last woke
    /// the writer for them: it wakes it once per value (a wake is a system
    /// call, and the writer moves `consumed` only when a pass ends).
    ring_nudged_at: u64,
    arena_nudged_at: u64,
    /// The bytes and segment size of this queue's previous copied entry
    /// (private to the producer): a block equal to it is not copied again,
    /// the record says "repeat" (a launch loop passes the same arguments).
    last_block: Box<[u8; KERNARG_BOUND]>,
    /// `(len, segment_size)` of `last_block`; `None`: no entry to repeat.
    last_block_key: Option<(usize, u64)>,
    /// `slot_ref::repeat(arena id, false)`, made once.
    repeat_ref: u64,
}

impl Drop for QueueProducer {
    fn drop(&mut self) {
        let after = self.shared.word(hdr::NEXT_SEQ).load(Ordering::SeqCst);
        self.arena.close(after);
        self.shared.closed_arenas.fetch_add(1, Ordering::Release);
    }
}

impl std::fmt::Debug for QueueProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueProducer")
            .field("queue_id", &self.queue_id)
            .finish_non_exhaustive()
    }
}

impl QueueProducer {
    /// Records one packet. Assigns the capture-wide `seq`. Never drops while a
    /// writer runs: when the ring is full it spins briefly, then wakes the
    /// writer and yields until there is room. Only if the writer thread has
    /// exited (it never does in the shim) is a push into a full ring
    /// discarded, and counted ([`CaptureWriter::discarded`], and in the file).
    #[inline]
    pub fn push(&mut self, rec: &PacketRecord) {
        if self.shared.disabled.load(Ordering::Relaxed) {
            return;
        }
        self.push_ref(rec, 0);
    }

    /// [`QueueProducer::push`] for a kernel dispatch, with its kernarg
    /// bytes: copies them (at most [`KERNARG_BOUND`]) into this queue's arena,
    /// and the record refers to them. No allocation, no lock, no system call
    /// unless the arena is full (then it waits for the writer, like a full
    /// ring). The writer stores each distinct block once.
    #[inline]
    pub fn push_with_kernarg(&mut self, rec: &PacketRecord, k: KernargSubmit<'_>) {
        if self.shared.disabled.load(Ordering::Relaxed) {
            return;
        }
        let kref = match k {
            KernargSubmit::Unreadable(r) => slot_ref::unreadable(r as u8),
            KernargSubmit::Bytes {
                bytes,
                segment_size,
            } => {
                let bytes = &bytes[..bytes.len().min(KERNARG_BOUND)];
                let truncated = segment_size > KERNARG_BOUND as u64;
                // An empty block repeats the last empty one without a compare:
                // comparing `&[]` (whose pointer is dangling, 0x1) calls glibc's
                // memcmp with length 0 at that address, which costs 80 to 190 ns on
                // this project's test machines (AMD, AVX-512; most likely a fully
                // masked vector load from an unmapped page), a launch's whole
                // capture budget; with a real pointer it costs 1 ns.
                if self.last_block_key == Some((bytes.len(), segment_size))
                    && (bytes.is_empty() || self.last_block[..bytes.len()] == *bytes)
                {
                    self.repeat_ref | u64::from(truncated)
                } else {
                    self.last_block[..bytes.len()].copy_from_slice(bytes);
                    self.store_last_block(bytes.len(), segment_size)
                }
            }
        };
        self.push_ref(rec, kref);
    }

    /// The previous block's buffer, and its length when a record may repeat
    /// it, for a caller that compares the next block in place and copies it
    /// over the buffer only when it differs; then
    /// [`QueueProducer::push_staged`].
    #[inline]
    pub fn kernarg_stage(&mut self) -> (&mut [u8; KERNARG_BOUND], Option<usize>) {
        (
            &mut self.last_block,
            self.last_block_key.map(|(len, _)| len),
        )
    }

    /// [`QueueProducer::push_with_kernarg`] for a block staged through
    /// [`QueueProducer::kernarg_stage`]: the first `len` bytes of the
    /// buffer are the dispatch's (at most [`KERNARG_BOUND`]), and
    /// `unchanged` says the caller found them equal to the previous block
    /// without copying. A launch that repeats its arguments then costs one
    /// compare: no copy out of the program's memory, none here.
    #[inline]
    pub fn push_staged(
        &mut self,
        rec: &PacketRecord,
        len: usize,
        segment_size: u64,
        unchanged: bool,
    ) {
        if self.shared.disabled.load(Ordering::Relaxed) {
            // The caller may have copied a new block over the previous one:
            // nothing may repeat it now.
            self.last_block_key = None;
            return;
        }
        let len = len.min(KERNARG_BOUND);
        let kref = if unchanged && self.last_block_key == Some((len, segment_size)) {
            self.repeat_ref | u64::from(segment_size > KERNARG_BOUND as u64)
        } else {
            self.store_last_block(len, segment_size)
        };
        self.push_ref(rec, kref);
    }

    /// Stores the first `len` bytes of `last_block` (the dispatch's) in the
    /// arena as a new entry, and returns the record's reference to it; they
    /// become the block the next dispatch may repeat. If the arena stays
    /// full (no writer left), the bytes are lost, and the reference says so.
    fn store_last_block(&mut self, len: usize, segment_size: u64) -> u64 {
        let truncated = segment_size > KERNARG_BOUND as u64;
        let (start, end) = self.arena.place(self.arena_pos, len);
        if end - self.arena_consumed > ARENA_BYTES as u64 / 2 && !self.arena_room(end) {
            self.last_block_key = None;
            return slot_ref::LOST << slot_ref::STATE_SHIFT;
        }
        self.arena
            .store(start, &self.last_block[..len], segment_size);
        self.arena_pos = end;
        self.last_block_key = Some((len, segment_size));
        slot_ref::copied(start, self.arena.id, truncated)
    }

    /// Takes a `seq` and writes the record with its kernarg reference.
    #[inline]
    fn push_ref(&mut self, rec: &PacketRecord, kref: u64) {
        let seq = self.ring.take_seq();
        if seq >= self.check_at && !self.make_room(seq) {
            return;
        }
        self.ring.write(seq, rec, kref);
    }

    /// The arena looked half full: wake the writer, and wait while the entry
    /// ending at `end` does not fit. False: the writer is gone.
    #[cold]
    fn arena_room(&mut self, end: u64) -> bool {
        let cap = ARENA_BYTES as u64;
        let mut spins: u32 = 0;
        loop {
            self.arena_consumed = self.arena.consumed();
            let fill = end - self.arena_consumed;
            if fill > cap / 2 && spins == 0 && self.arena_nudged_at != self.arena_consumed {
                self.arena_nudged_at = self.arena_consumed;
                self.shared.nudge();
            }
            if fill <= cap {
                return true;
            }
            if self.shared.closed.load(Ordering::Acquire) {
                return false;
            }
            if spins == 0 {
                self.shared.word(hdr::WAITS).fetch_add(1, Ordering::Relaxed);
            }
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                if spins % 16 == 0 {
                    self.shared.nudge();
                }
                if spins < 4096 {
                    std::thread::yield_now();
                } else {
                    std::thread::park_timeout(Duration::from_micros(50));
                }
            }
            spins = spins.saturating_add(1);
        }
    }

    /// `seq` reached `check_at`: look at the writer's position again, wake
    /// the writer if the ring is at least half full, wait while our slot is
    /// still taken, and set the next `check_at`. False: discarded.
    #[cold]
    fn make_room(&mut self, seq: u64) -> bool {
        self.cached_consumed = self.ring.consumed();
        let fill = seq.saturating_sub(self.cached_consumed);
        if fill >= self.nudge_at && self.ring_nudged_at != self.cached_consumed {
            self.ring_nudged_at = self.cached_consumed;
            self.shared.nudge();
        }
        if fill >= self.capacity && !self.wait_for_space(seq) {
            return false;
        }
        self.set_check_at(seq);
        true
    }

    /// The next `seq` to look at `consumed` at, from the last look: half
    /// full, or (past it: the writer is behind) an eighth of the ring on,
    /// and never past the last slot known free.
    fn set_check_at(&mut self, seq: u64) {
        let limit = self.cached_consumed + self.capacity;
        let half = self.cached_consumed + self.nudge_at;
        self.check_at = if seq < half {
            half
        } else {
            (seq + (self.capacity / 8).max(1)).min(limit)
        };
    }

    #[cold]
    fn wait_for_space(&mut self, seq: u64) -> bool {
        self.shared.word(hdr::WAITS).fetch_add(1, Ordering::Relaxed);
        let mut spins: u32 = 0;
        loop {
            self.cached_consumed = self.ring.consumed();
            if seq.saturating_sub(self.cached_consumed) < self.capacity {
                return true;
            }
            if self.shared.closed.load(Ordering::Acquire) {
                self.shared
                    .word(hdr::DISCARDED)
                    .fetch_add(1, Ordering::Relaxed);
                return false;
            }
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                if spins % 16 == 0 {
                    self.shared.nudge();
                }
                if spins < 4096 {
                    std::thread::yield_now();
                } else {
                    // A futex wait with a timeout: not a cancellation point.
                    std::thread::park_timeout(Duration::from_micros(50));
                }
            }
            spins = spins.saturating_add(1);
        }
    }

    /// The queue is being destroyed with `pending` packets it never
    /// processed (behind an unsatisfied barrier, or never published): writes
    /// a QueueEnd frame after every record pushed before this call.
    pub fn end(self, pending: u64, end_ns: u64) {
        let after_seq = self.shared.word(hdr::NEXT_SEQ).load(Ordering::SeqCst);
        self.shared.control().push(Control::QueueEnd(QueueEnd {
            queue_id: self.queue_id,
            pending,
            end_ns,
            after_seq,
        }));
    }

    /// A stamp for a record's observed or done time, as this capture wants
    /// them (see [`WriterOptions::stamp`]).
    #[inline]
    pub fn now(&self) -> u64 {
        self.shared.stamp.now()
    }

    /// A hint, early on the doorbell path, that a record is coming: the
    /// ring slot it will probably take is prefetched for writing, so the
    /// push does not wait for those cache lines (the writer thread read
    /// them last). Costs a load and two prefetches; changes nothing.
    #[inline]
    pub fn prepare(&self) {
        self.ring.prefetch_next();
    }

    /// The queue these records belong to.
    pub fn queue_id(&self) -> u64 {
        self.queue_id
    }
}

/// The writer that SIGTERM/SIGINT finalise (the first one armed).
static SIGNAL_TARGET: OnceLock<Arc<Shared>> = OnceLock::new();

/// How long the termination hook waits for the writer (in 1 ms steps).
const SIGNAL_WAIT_MS: u32 = 2000;

/// The termination-signal hook: async-signal-safe (atomics in the mapped
/// ring header and `nanosleep`; no allocation, no lock). Marks the capture
/// as ended by `sig`, then waits, at most two seconds, for the writer thread
/// to encode every record pushed so far, write the Trailer and sync. The
/// caller then takes the signal's default action.
pub fn on_termination_signal(sig: i32) {
    let Some(s) = SIGNAL_TARGET.get() else { return };
    if s.disabled.load(Ordering::Relaxed) || s.closed.load(Ordering::Relaxed) {
        return;
    }
    let target = s.word(hdr::NEXT_SEQ).load(Ordering::SeqCst);
    s.word(hdr::SIGNAL).store(sig as u64, Ordering::Relaxed);
    s.word(hdr::SIGNAL_SEQ).store(target, Ordering::Relaxed);
    let _ = s
        .word(hdr::EXIT_SEQ)
        .compare_exchange(0, target, Ordering::SeqCst, Ordering::Relaxed);
    let st = s.word(hdr::STATE);
    if st.load(Ordering::SeqCst) != state::SIGNAL_DONE {
        st.store(state::SIGNALLED, Ordering::SeqCst);
    }
    for _ in 0..SIGNAL_WAIT_MS {
        if st.load(Ordering::SeqCst) == state::SIGNAL_DONE || s.closed.load(Ordering::Relaxed) {
            return;
        }
        crate::sys::sleep_ns(1_000_000);
    }
}

impl CaptureWriter {
    /// Creates the file safely (see [`super::create`]): preamble, Header
    /// frame and the live Ring frame, all in the file (the page cache) before
    /// this returns, and starts the writer thread, which has them and the
    /// directory entry synced to disk on a short-lived thread of its own.
    ///
    /// `classify` is called on the writer thread, once per kernel dispatch record
    /// whose kernarg address is not 0 (0 is [`KernargClass::Null`] without a
    /// call), when the record is encoded: up to a poll interval after the packet
    /// was processed. A panic in it is caught and recorded as `ForeignOpaque`.
    pub fn create(
        path: &Path,
        header: CaptureHeader,
        classify: Classify,
    ) -> io::Result<Arc<CaptureWriter>> {
        Self::create_with(path, header, classify, WriterOptions::default())
    }

    /// [`CaptureWriter::create`] with explicit tuning.
    pub fn create_with(
        path: &Path,
        header: CaptureHeader,
        classify: Classify,
        options: WriterOptions,
    ) -> io::Result<Arc<CaptureWriter>> {
        let capacity = options
            .ring_capacity
            .clamp(1, MAX_RING_CAPACITY)
            .next_power_of_two() as u64;
        let new = super::create::create(path)?;
        let laid = match lay_out(&new.file, &header, capacity) {
            Ok(l) => l,
            Err(e) => {
                new.abandon();
                return Err(e);
            }
        };
        let file = new.persist()?;
        // TSC stamps: the first clock pair, from which the writer measures
        // the TSC's rate (the header keeps it for a reader recovering slots).
        let first = (options.stamp == Stamp::Tsc).then(Pair::now);
        laid.ring
            .set_clock(options.stamp, first.unwrap_or_default());
        let shared = Arc::new(Shared {
            ring: laid.ring,
            stamp: options.stamp,
            region: laid.region,
            disabled: AtomicBool::new(false),
            file,
            path: path.to_path_buf(),
            control: Mutex::new(Vec::new()),
            shutdown: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            writer: OnceLock::new(),
            next_code_object: AtomicU64::new(0),
            finish: Mutex::new(None),
            finished: Mutex::new(None),
            progress: Mutex::new(()),
            progress_cv: Condvar::new(),
            waiters: AtomicU32::new(0),
            error: Mutex::new(None),
            tracked_queues: AtomicU64::new(0),
            next_arena: AtomicU32::new(0),
            closed_arenas: AtomicU64::new(0),
            arg_check: OnceLock::new(),
            arg_generation: OnceLock::new(),
        });
        let state = WriterState {
            shared: shared.clone(),
            ring: laid.ring,
            classify,
            options: options.clone(),
            counts: Counts::default(),
            queues: 0,
            code_objects: 0,
            queue_ids: HashSet::new(),
            queue_agents: HashMap::default(),
            known_queue: None,
            next: 0,
            stream_end: laid.stream_start,
            enc: BatchEncoder::default(),
            out: Vec::with_capacity(64 << 10),
            ends: Vec::new(),
            carried: Vec::new(),
            trailer_written: false,
            signal_seen: None,
            error: None,
            arenas: HashMap::default(),
            closed_seen: 0,
            closing: false,
            blocks: HashMap::new(),
            interned_bytes: 0,
            next_block: 0,
            key: Vec::with_capacity(KERNARG_BOUND + 1),
            last_blob: [None, None],
            pending_args: HashMap::default(),
            args_written_for: None,
            last_check: None,
            repeat: None,
            ticks: first.map(TickConverter::new),
        };
        let handle = crate::sys::spawn_shielded(
            std::thread::Builder::new().name("softgpu-capture".into()),
            move || state.run(),
        )?;
        let _ = shared.writer.set(handle.thread().clone());
        Ok(Arc::new(CaptureWriter {
            path: path.to_path_buf(),
            shared,
            finish_timeout: options.finish_timeout,
            memo: Mutex::new(None),
            handle: Mutex::new(Some(handle)),
        }))
    }

    /// Registers a queue (cold path) and returns the producer the doorbell
    /// path pushes into. The Queue frame is written before any of the
    /// queue's records.
    pub fn register_queue(
        &self,
        queue_id: u64,
        agent_index: u32,
        ring_size: u32,
        created_ns: u64,
    ) -> QueueProducer {
        let info = QueueInfo {
            queue_id,
            agent_index,
            ring_size,
            created_ns,
        };
        // No wake-up: the writer takes registrations before it encodes any
        // record (so this Queue frame precedes the queue's records), and
        // otherwise at its next poll; a wake per queue would cost a context
        // switch per queue for a program that churns queues.
        let arena_id = self.shared.next_arena.fetch_add(1, Ordering::Relaxed) & 0xff_ffff;
        let arena = Arc::new(Arena::new(arena_id));
        self.shared
            .control()
            .push(Control::Queue(info, arena.clone()));
        let capacity = self.shared.ring.capacity();
        let consumed = self.shared.ring.consumed();
        let nudge_at = (capacity / 2).max(1);
        QueueProducer {
            queue_id,
            ring: self.shared.ring,
            shared: self.shared.clone(),
            cached_consumed: consumed,
            capacity,
            nudge_at,
            check_at: consumed + nudge_at,
            arena,
            arena_pos: 0,
            arena_consumed: 0,
            ring_nudged_at: u64::MAX,
            arena_nudged_at: u64::MAX,
            last_block: Box::new([0; KERNARG_BOUND]),
            last_block_key: None,
            repeat_ref: slot_ref::repeat(arena_id, false),
        }
    }

    /// Stores what decoding needs of loaded kernels (their `.args`,
    /// demangled signature and DWARF names), so the capture decodes its
    /// kernarg blocks on its own (cold path; call with a code object's
    /// kernels when it is loaded). Each kernel's entry is written in a
    /// KernelArgs frame with its first dispatch, before the batch holding it;
    /// a kernel never dispatched gets none. The entries are shared, not
    /// copied: a library loads tens of thousands of kernels (rocBLAS about
    /// 24,000) and the runtime keeps the same entries for its pointer
    /// checker.
    pub fn add_kernel_args<K: Into<Arc<KernelArgSources>>>(
        &self,
        kernels: impl IntoIterator<Item = K>,
    ) {
        let kernels: Vec<Arc<KernelArgSources>> = kernels.into_iter().map(Into::into).collect();
        if kernels.is_empty() {
            return;
        }
        self.shared.control().push(Control::KernelArgs(kernels));
    }

    /// Installs the runtime's pointer checker (the first call wins). It runs
    /// on the writer thread, once per dispatch record whose kernarg block was
    /// captured, when the record is encoded; a panic in it is caught (no
    /// findings). The runtime calls [`CaptureWriter::drain`] before it frees
    /// memory, so a record pushed before a free is checked before it.
    pub fn set_arg_checker(&self, check: ArgCheck) -> bool {
        self.shared.arg_check.set(check).is_ok()
    }

    /// Gives the pointer checker's generation (see [`ArgGeneration`]): with
    /// it, a dispatch with the kernel, agent and block of the one checked
    /// before, and no change of the generation since, gets that check's
    /// findings without a call to the checker (a launch loop's case). Once;
    /// false if already set.
    pub fn set_arg_generation(&self, generation: ArgGeneration) -> bool {
        self.shared.arg_generation.set(generation).is_ok()
    }

    /// Stores one code object's symbol table, `(kernel_object, symbol name)`
    /// (cold path). Returns the code object's id. Readers resolve a dispatch's
    /// `kernel_object` through every table in the file, wherever it appears.
    pub fn add_code_object(&self, symbols: Vec<(u64, String)>) -> u64 {
        let id = self.shared.next_code_object.fetch_add(1, Ordering::Relaxed);
        self.shared
            .control()
            .push(Control::CodeObject(CodeObject { id, symbols }));
        id
    }

    /// Records register counts and static sizes of loaded kernels (cold path;
    /// call with the code object's kernels right after `add_code_object`).
    pub fn add_kernel_info(&self, kernels: Vec<super::KernelMeta>) {
        if kernels.is_empty() {
            return;
        }
        self.shared.control().push(Control::KernelInfo(kernels));
    }

    /// [`CaptureWriter::finish_with`] with no pending packets.
    pub fn finish(&self, stalls: u64, end_ns: u64) -> io::Result<CaptureSummary> {
        self.finish_with(stalls, end_ns, &[])
    }

    /// The program's exit: waits until every record pushed before this call
    /// is encoded (at most `finish_timeout` for a push still in flight), then
    /// has the writer write the Trailer (with `stalls`, `end_ns` and the
    /// `(queue_id, pending packets)` of each live queue that has any) and
    /// `fdatasync`. Returns the counts the Trailer holds. The writer thread
    /// keeps running: records pushed later are written after the Trailer, as
    /// late records, which readers report (the capture is then incomplete).
    /// Idempotent: later calls return the first call's result.
    pub fn finish_with(
        &self,
        stalls: u64,
        end_ns: u64,
        pending: &[(u64, u64)],
    ) -> io::Result<CaptureSummary> {
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.is_none() {
            let s = &self.shared;
            let finish_seq = s.word(hdr::NEXT_SEQ).load(Ordering::SeqCst);
            let _ = s.word(hdr::EXIT_SEQ).compare_exchange(
                0,
                finish_seq,
                Ordering::SeqCst,
                Ordering::Relaxed,
            );
            *s.finish.lock().unwrap_or_else(|e| e.into_inner()) = Some(FinishRequest {
                finish_seq,
                stalls,
                end_ns,
                pending: pending.to_vec(),
                deadline: Instant::now() + self.finish_timeout,
            });
            let has_result = || {
                s.finished
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .is_some()
            };
            s.wait_until(self.finish_timeout + Duration::from_secs(5), has_result);
            let result = s
                .finished
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .unwrap_or_else(|| {
                    Err((
                        io::ErrorKind::Other,
                        if s.closed.load(Ordering::Acquire) {
                            "the capture writer is gone".to_string()
                        } else {
                            "the capture writer did not write the trailer in time".to_string()
                        },
                    ))
                });
            *memo = Some(result);
        }
        match memo.as_ref() {
            Some(Ok(s)) => Ok(s.clone()),
            Some(Err((kind, msg))) => Err(io::Error::new(
                *kind,
                format!("capture {}: {msg}", self.path.display()),
            )),
            None => Err(io::Error::other("unreachable: finish memo missing")),
        }
    }

    /// Waits until every record pushed before this call has been encoded, so
    /// its kernarg address has been classified. The runtime calls this before
    /// it releases memory that `classify` reports as its own; otherwise a record
    /// still in the ring when the memory goes would be classified afterwards, as
    /// `ForeignOpaque`. Returns at once when the writer has caught up (the
    /// common case); waits at most a second for a push still in flight.
    pub fn drain(&self) {
        let s = &self.shared;
        let target = s.word(hdr::NEXT_SEQ).load(Ordering::SeqCst);
        if s.ring.consumed() >= target {
            return;
        }
        s.wait_until(Duration::from_secs(1), || s.ring.consumed() >= target);
    }

    /// Makes every record pushed before this call durable beyond an OS crash:
    /// waits until the writer has encoded them, then `fdatasync`s. (Against
    /// the process's own death they are durable as soon as they are pushed.)
    /// Cold path (for `hsa_shut_down`); the capture stays open. Returns the
    /// writer's first I/O error if it has had one.
    pub fn flush(&self) -> io::Result<()> {
        let s = &self.shared;
        let target = s.word(hdr::NEXT_SEQ).load(Ordering::SeqCst);
        s.wait_until(Duration::from_secs(10), || s.ring.consumed() >= target);
        let err = s.kept_error();
        match err {
            Some((kind, msg)) => Err(io::Error::new(
                kind,
                format!("capture {}: {msg}", self.path.display()),
            )),
            None => s.file.sync_data(),
        }
    }

    /// Makes SIGTERM and SIGINT finalise this capture before they end the
    /// program, where the program left their default action in place (see
    /// [`crate::sys::install_termination_hook`]). Returns the signals armed.
    /// Only the first writer of a process can be armed.
    pub fn handle_termination_signals(&self) -> Vec<i32> {
        if SIGNAL_TARGET.set(self.shared.clone()).is_err() {
            return Vec::new();
        }
        crate::sys::install_termination_hook(on_termination_signal)
    }

    /// In a child process made by `fork` (from a `pthread_atfork` child
    /// handler: async-signal-safe): pushes are disabled, and the ring's
    /// mapping is replaced by private memory, so the child can never write
    /// into its parent's capture file.
    pub fn forked_child(&self) {
        self.shared.disabled.store(true, Ordering::SeqCst);
        let _ = self.shared.region.detach_in_child();
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records that were discarded because no writer was left to make room
    /// (never while the writer thread runs).
    pub fn discarded(&self) -> u64 {
        self.shared.word(hdr::DISCARDED).load(Ordering::Relaxed)
    }

    /// Times a producer found the ring full and waited (back-pressure).
    pub fn waits(&self) -> u64 {
        self.shared.word(hdr::WAITS).load(Ordering::Relaxed)
    }

    /// Per-queue entries the writer thread still holds, as of its last pass:
    /// queues registered and not yet ended, plus QueueEnds waiting for their
    /// queue's records. A queue's entry goes with its QueueEnd, so this is
    /// bounded by the program's live queues, not by the queues it ever made.
    pub fn tracked_queues(&self) -> u64 {
        self.shared.tracked_queues.load(Ordering::Relaxed)
    }
}

impl Drop for CaptureWriter {
    /// Stops the writer thread after it has encoded every committed record;
    /// writes no Trailer unless `finish` ran (the capture then reads as
    /// incomplete). The ring stays mapped (it is never unmapped).
    fn drop(&mut self) {
        let h = self.handle.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = h.take() {
            self.shared.shutdown.store(true, Ordering::Release);
            self.shared.nudge();
            let _ = handle.join();
        }
    }
}

/// What `lay_out` made.
struct Laid {
    ring: Ring,
    region: crate::sys::SharedRegion,
    stream_start: u64,
}

/// Writes the preamble, the Header frame and the Ring frame (its region
/// zero-filled, so every block is allocated before any store into the
/// mapping) and maps the region.
fn lay_out(file: &File, header: &CaptureHeader, capacity: u64) -> io::Result<Laid> {
    let mut head = format::preamble().to_vec();
    format::push_frame(&mut head, kind::HEADER, &encode_header(header));
    let frame_at = head.len() as u64;
    let page = crate::sys::page_size().max(4096) as u64;
    let prefix_end = frame_at + (format::FRAME_HEAD_LEN + format::RING_PREFIX_LEN) as u64;
    let region_at = prefix_end.div_ceil(page) * page;
    let pad = region_at - prefix_end;
    let region_len = ring::region_bytes(capacity);
    let payload_len = format::RING_PREFIX_LEN as u64 + pad + region_len;
    let payload_len32 = u32::try_from(payload_len)
        .ok()
        .filter(|&l| l <= format::MAX_FRAME_LEN)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "ring too large"))?;
    head.extend_from_slice(&kind::RING.to_le_bytes());
    head.extend_from_slice(&payload_len32.to_le_bytes());
    head.extend_from_slice(&(pad as u32).to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    head.resize(region_at as usize, 0);
    file.write_all_at(&head, 0)?;
    // The region's blocks are allocated, not written (about 2 ms less in
    // hsa_init for the default ring); zeros are written only where the file
    // system cannot allocate.
    if !crate::sys::allocate(file, region_at, region_len)? {
        let zeros = vec![0u8; (1 << 20).min(region_len as usize)];
        let mut at = 0u64;
        while at < region_len {
            let n = (region_len - at).min(zeros.len() as u64) as usize;
            file.write_all_at(&zeros[..n], region_at + at)?;
            at += n as u64;
        }
    }
    // The Ring frame's CRC field: not a checksum (the region is live), always 0.
    file.write_all_at(&[0; format::FRAME_CRC_LEN], region_at + region_len)?;
    let region = crate::sys::SharedRegion::map(file, region_at, region_len as usize)?;
    let ring = Ring::init(region.words(), capacity)
        .ok_or_else(|| io::Error::other("ring region of the wrong size"))?;
    let stream_start = region_at + region_len + format::FRAME_CRC_LEN as u64;
    ring.word(hdr::STREAM_END)
        .store(stream_start, Ordering::Release);
    // Not synced here: the writer thread syncs the file and its directory as
    // the first thing it does (`WriterState::run`), so hsa_init does not wait
    // on the disk.
    Ok(Laid {
        ring,
        region,
        stream_start,
    })
}

/// Sets `closed` when the writer thread exits, normally or by panic, so no
/// producer waits forever on a ring nobody drains.
struct CloseOnExit(Arc<Shared>);

impl Drop for CloseOnExit {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        let _g = self.0.progress.lock().unwrap_or_else(|e| e.into_inner());
        self.0.progress_cv.notify_all();
    }
}

/// One queue's arena on the writer side.
struct ArenaState {
    arena: Arc<Arena>,
    /// The block taken out of it last (a repeat record names it).
    last: Option<LastBlock>,
}

/// A block taken out of an arena: its bytes, segment size and stored id.
struct LastBlock {
    block: u64,
    segment_size: u64,
    bytes: Vec<u8>,
}

struct WriterState {
    shared: Arc<Shared>,
    ring: Ring,
    classify: Classify,
    options: WriterOptions,
    /// Counts of the records before the Trailer (after it: late records).
    counts: Counts,
    /// Queue frames before the Trailer.
    queues: u32,
    code_objects: u32,
    /// Live queue ids (a queue's id leaves at its QueueEnd).
    queue_ids: HashSet<u64>,
    /// Every queue id registered, with its agent index (for the pointer
    /// checker; kept after the queue ends, as its records may follow).
    queue_agents: HashMap<u64, u32, std::hash::BuildHasherDefault<format::IdHasher>>,
    /// The queue of the last record encoded, known to have its Queue frame
    /// (saves a set lookup per record in a run of one queue's records).
    known_queue: Option<u64>,
    /// Next seq to encode (== `consumed` once written).
    next: u64,
    stream_end: u64,
    enc: BatchEncoder,
    /// Frames of this pass, written with one `pwrite`.
    out: Vec<u8>,
    /// QueueEnd frames waiting for their queue's records.
    ends: Vec<QueueEnd>,
    /// Pending counts of QueueEnds merged into the next QueueEnd of the same
    /// id (an id registered again before its QueueEnd was written).
    carried: Vec<(u64, u64)>,
    trailer_written: bool,
    /// When the writer first saw the signal state.
    signal_seen: Option<Instant>,
    /// First write error; later writes are skipped but the ring is still drained.
    error: Option<io::Error>,
    /// Kernarg arenas by id (a queue's, until its records are all encoded),
    /// with the last block taken out of each.
    arenas: HashMap<u32, ArenaState, std::hash::BuildHasherDefault<format::IdHasher>>,
    closed_seen: u64,
    /// Some closed arena still has records to encode.
    closing: bool,
    /// Distinct blobs stored so far (`blob kind` byte, then the bytes) -> id.
    blocks: HashMap<Box<[u8]>, u64>,
    interned_bytes: usize,
    next_block: u64,
    key: Vec<u8>,
    /// The last blob of each kind met (args, findings) and its id.
    last_blob: [Option<(Vec<u8>, u64)>; 2],
    /// What decoding needs of each loaded kernel, by kernel object, kept
    /// until the kernel's first dispatch is encoded: only dispatched kernels
    /// get a KernelArgs entry (a library loads thousands it never launches).
    pending_args:
        HashMap<u64, Arc<KernelArgSources>, std::hash::BuildHasherDefault<format::IdHasher>>,
    /// The kernel object of the last dispatch encoded (its sources, if any,
    /// are written).
    args_written_for: Option<u64>,
    /// The last pointer check, reused while nothing it depends on moved.
    last_check: Option<LastCheck>,
    /// The record encoded last, when a record that merely follows it (a
    /// launch loop's next dispatch) may take the fast path: [`Repeat`].
    repeat: Option<Repeat>,
    /// TSC stamps: their conversion to ns (`None`: the stamps are ns).
    ticks: Option<TickConverter>,
}

/// What the writer's fast path compares a slot with: the slot words of the
/// record encoded just before it (in this batch), and what that record's
/// encoding depended on besides them. A slot that differs from it only in
/// its seq and packet index (each one more), its kernarg address and its
/// times, whose kernarg address gets the same class, and whose pointer
/// findings are those of the same check (same kernel, agent and block,
/// generation unchanged) is appended with [`BatchEncoder::push_next`]:
/// the same bytes as the full encoding, without decoding the slot, looking
/// up its queue and arena, or building the record.
#[derive(Clone, Copy)]
struct Repeat {
    words: [u64; ring::SLOT_WORDS],
    class: KernargClass,
    /// The checker's generation the record's findings are valid for (its
    /// kernarg reference is a repeat and a checker is installed); `None`
    /// when no check was involved.
    generation: Option<u64>,
    dispatch: bool,
    status: crate::aql::Status,
    barrier: bool,
}

impl WriterState {
    fn run(mut self) {
        let _close = CloseOnExit(self.shared.clone());
        // What `create` wrote and the file's name are made durable against an
        // OS crash here rather than in `create` (off the program's hsa_init),
        // and on a thread of their own, not this one: on a busy disk one
        // fdatasync can take seconds (on ext4 it may wait for a journal
        // commit that writes out other files' data too), and this thread must
        // not wait on it. A burst of launches would fill the ring and wait
        // too, and a termination signal's hook waits only 2 s for this
        // thread to write the Trailer.
        let shared = self.shared.clone();
        let spawned = crate::sys::spawn_shielded(
            std::thread::Builder::new().name("softgpu-capsync".into()),
            move || shared.sync_created(),
        );
        if spawned.is_err() {
            self.shared.sync_created();
        }
        // TSC stamps: the first anchor (after a 1 ms baseline), so a reader
        // can scale the stamps of slots this writer never reaches.
        if let Some(t) = self.ticks.as_mut() {
            if t.ensure_scale(&mut Pair::now, crate::sys::sleep_ns) {
                if let Some(s) = t.scale() {
                    self.ring.set_clock_anchor(s.anchor());
                }
            }
        }
        // A pass costs a few locks and a write(2) whatever it encodes, so the
        // writer lets records gather: after a pass of fewer than BUSY_PASS
        // records it sleeps for the poll interval, and only a pass that found
        // a burst runs again at once. Nothing waits on it meanwhile: the
        // records are in the live ring (which a reader recovers), producers
        // wake it when the ring or an arena passes half full, and every
        // request (flush, finish, shutdown) wakes it too.
        loop {
            let stopping = self.shared.shutdown.load(Ordering::Acquire);
            let n = self.pass();
            self.endings();
            if n > 0 {
                self.shared.notify();
            }
            if stopping && n == 0 {
                self.take_controls();
                self.write_due_ends(true);
                self.write_out();
                return;
            }
            if n < BUSY_PASS && !stopping {
                std::thread::park_timeout(self.options.poll_interval);
            }
        }
    }

    /// Encodes the committed records from `next` on (up to the finish point
    /// while a finish waits for its Trailer), writes them, advances
    /// `consumed`. Returns the records encoded.
    fn pass(&mut self) -> u64 {
        let limit = if self.trailer_written {
            u64::MAX
        } else {
            self.shared
                .finish
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map_or(u64::MAX, |r| r.finish_seq)
        };
        let start = self.next;
        // Controls first: every Queue and code object a committed record
        // refers to was registered before that record was pushed, and the
        // acquire load of its commit word makes the registration visible here.
        let ready = self.next < limit && self.ring.committed(self.next).is_some();
        self.forget_closed_arenas();
        if ready || !self.shared.control().is_empty() {
            self.take_controls();
        }
        while self.next < limit && self.next - start < PASS_RECORDS {
            let Some(slot) = self.ring.committed(self.next) else {
                break;
            };
            let classified = match self.encode_repeat(self.next, slot) {
                Ok(()) => {
                    self.next += 1;
                    continue;
                }
                Err(classified) => classified,
            };
            let mut words = [0u64; ring::SLOT_WORDS];
            for (w, s) in words.iter_mut().zip(slot) {
                *w = s.load(Ordering::Relaxed);
            }
            let (mut rec, _) = ring::decode_slot(|i| words[i]);
            (rec.observed_ns, rec.done_ns) = self.times(rec.observed_ns, rec.done_ns);
            let kref = words[ring::slot::KERNARG_REF];
            if self.known_queue != Some(rec.queue_id) {
                if !self.queue_ids.contains(&rec.queue_id) {
                    // Registered after this pass took the controls: its
                    // Queue frame must precede the batch that holds the
                    // record (readers refuse a record of an unknown queue).
                    self.take_controls();
                }
                self.known_queue = Some(rec.queue_id);
            }
            self.encode(self.next, &rec, kref, &words, classified);
            self.next += 1;
        }
        // The fast path refers to the batch's last record: none after this.
        self.repeat = None;
        if let Some(frame) = self.enc.finish() {
            self.out.extend_from_slice(frame);
        }
        self.write_due_ends(false);
        self.write_out();
        if self.next != start {
            self.ring.set_consumed(self.next);
        }
        self.next - start
    }

    /// A record's (observed, done) times in ns, from its slot's stamps.
    #[inline]
    fn times(&mut self, observed: u64, done: u64) -> (u64, u64) {
        let Some(t) = self.ticks.as_mut() else {
            return (observed, done);
        };
        let (ns, moved) = t.convert(observed, done, &mut Pair::now, crate::sys::sleep_ns);
        if moved {
            if let Some(s) = t.scale() {
                self.ring.set_clock_anchor(s.anchor());
            }
        }
        ns
    }

    /// Drops the arenas of producers that are gone once their records are
    /// all encoded.
    fn forget_closed_arenas(&mut self) {
        let closed = self.shared.closed_arenas.load(Ordering::Acquire);
        if closed == self.closed_seen && !self.closing {
            return;
        }
        self.closed_seen = closed;
        let next = self.next;
        self.arenas.retain(|_, a| a.arena.closed_after() > next);
        self.closing = self
            .arenas
            .values()
            .any(|a| a.arena.closed_after() != u64::MAX);
    }

    /// The id of a blob with these contents, storing it (a KernargBlock
    /// frame, before the batch that refers to it) the first time.
    fn intern(&mut self, blob_kind: u8, bytes: &[u8]) -> u64 {
        self.key.clear();
        self.key.push(blob_kind);
        self.key.extend_from_slice(bytes);
        // A launch loop repeats its blocks: the last one of each kind is
        // compared first, without hashing.
        let slot = usize::from(blob_kind.min(1));
        if let Some((k, id)) = &self.last_blob[slot] {
            if *k == self.key {
                return *id;
            }
        }
        if let Some(&id) = self.blocks.get(self.key.as_slice()) {
            self.last_blob[slot] = Some((self.key.clone(), id));
            return id;
        }
        if self.interned_bytes + self.key.len() > MAX_INTERNED_BYTES {
            self.blocks.clear();
            self.interned_bytes = 0;
        }
        let id = self.next_block;
        self.next_block += 1;
        format::push_frame(
            &mut self.out,
            kind::KERNARG_BLOCK,
            &kernarg::encode_block(id, blob_kind, bytes),
        );
        self.interned_bytes += self.key.len();
        self.blocks.insert(self.key.clone().into_boxed_slice(), id);
        self.last_blob[slot] = Some((self.key.clone(), id));
        id
    }

    /// The record's kernarg reference, from its slot word: the block copied
    /// out of its arena and stored (once), its pointers checked; and the
    /// checker's generation its findings hold for (`None`: no check made or
    /// reused, or the checker has no generation).
    fn kernarg(&mut self, rec: &PacketRecord, kref: u64) -> (RecordKernarg, Option<u64>) {
        use crate::abi::packet_offset as po;
        let st = slot_ref::state(kref);
        let mut checked_at = None;
        let k = match st {
            0 => RecordKernarg::None,
            slot_ref::COPIED | slot_ref::TRUNCATED | slot_ref::REPEAT => {
                let id = slot_ref::arena(kref);
                if !self.arenas.contains_key(&id) {
                    self.take_controls();
                }
                let Some(a) = self.arenas.get_mut(&id) else {
                    return (RecordKernarg::Lost, None);
                };
                let truncated = if st == slot_ref::REPEAT {
                    kref & 1 == 1
                } else {
                    st == slot_ref::TRUNCATED
                };
                // The block taken out of the arena last, which a repeat
                // names; taken out of the map while it is interned.
                let mut last = a.last.take();
                if st != slot_ref::REPEAT {
                    let mut l = last.unwrap_or_else(|| LastBlock {
                        block: 0,
                        segment_size: 0,
                        bytes: Vec::with_capacity(KERNARG_BOUND),
                    });
                    let Some(segment_size) = a.arena.take(kref as u32, &mut l.bytes) else {
                        return (RecordKernarg::Lost, None);
                    };
                    l.segment_size = segment_size;
                    l.block = self.intern(kernarg::blob::ARGS, &l.bytes);
                    last = Some(l);
                }
                let Some(l) = last else {
                    // A repeat of nothing: the previous entry was not taken.
                    return (RecordKernarg::Lost, None);
                };
                let mut findings = None;
                if let Some(check) = self.shared.arg_check.get() {
                    let mut ko = [0u8; 8];
                    ko.copy_from_slice(&rec.raw[po::KERNEL_OBJECT..po::KERNEL_OBJECT + 8]);
                    let kernel_object = u64::from_le_bytes(ko);
                    let agent = self.queue_agents.get(&rec.queue_id).copied();
                    // Read before the check: a change during it moves the
                    // generation, and the next dispatch is checked again.
                    let generation = self
                        .shared
                        .arg_generation
                        .get()
                        .and_then(|g| catch_unwind(AssertUnwindSafe(g)).ok());
                    checked_at = generation;
                    let reuse = generation.and_then(|generation| {
                        self.last_check
                            .filter(|c| {
                                c.kernel_object == kernel_object
                                    && c.agent == agent
                                    && c.block == l.block
                                    && c.generation == generation
                            })
                            .map(|c| c.findings)
                    });
                    if let Some(f) = reuse {
                        findings = f;
                    } else {
                        let input = ArgCheckInput {
                            queue_id: rec.queue_id,
                            agent_index: agent,
                            kernel_object,
                            block: &l.bytes,
                        };
                        let found =
                            catch_unwind(AssertUnwindSafe(|| check(&input))).unwrap_or_default();
                        if !found.is_empty() {
                            let blob = kernarg::encode_findings(&found);
                            findings = Some(self.intern(kernarg::blob::FINDINGS, &blob));
                        }
                        self.last_check = generation.map(|generation| LastCheck {
                            kernel_object,
                            agent,
                            block: l.block,
                            generation,
                            findings,
                        });
                    }
                }
                let k = RecordKernarg::Block {
                    block: l.block,
                    findings,
                    truncated_from: truncated.then_some(l.segment_size),
                };
                if let Some(a) = self.arenas.get_mut(&id) {
                    a.last = Some(l);
                }
                k
            }
            slot_ref::UNREADABLE => Unreadable::from_u8(kref as u8)
                .map_or(RecordKernarg::Lost, RecordKernarg::Unreadable),
            _ => RecordKernarg::Lost,
        };
        (k, checked_at)
    }

    /// The fast path: appends the record in `slot` if it merely follows
    /// the record encoded just before it ([`Repeat`]). `Err`: nothing was
    /// appended, the caller encodes the record in full, with the kernarg
    /// class if it was computed here (`classify` runs once per record).
    #[inline]
    fn encode_repeat(
        &mut self,
        seq: u64,
        slot: &[AtomicU64; ring::SLOT_WORDS],
    ) -> Result<(), Option<KernargClass>> {
        use ring::slot as s;
        let Some(p) = self.repeat.as_ref() else {
            return Err(None);
        };
        let w = |i: usize| slot[i].load(Ordering::Relaxed);
        let kref = w(s::KERNARG_REF);
        let pw = &p.words;
        let index = w(s::PACKET_INDEX);
        let mut differ = (w(s::QUEUE_ID) ^ pw[s::QUEUE_ID])
            | (index ^ pw[s::PACKET_INDEX].wrapping_add(1))
            | (w(s::STATUS_THREAD) ^ pw[s::STATUS_THREAD])
            | (w(s::REASONS) ^ pw[s::REASONS])
            | (kref ^ pw[s::KERNARG_REF]);
        for i in (0..8).filter(|&i| i != KERNARG_WORD) {
            differ |= w(s::RAW + i) ^ pw[s::RAW + i];
        }
        if differ != 0 {
            return Err(None);
        }
        let st = slot_ref::state(kref);
        if st != 0 && st != slot_ref::REPEAT && st != slot_ref::UNREADABLE {
            return Err(None);
        }
        let (class, generation, status, barrier) = (p.class, p.generation, p.status, p.barrier);
        let addr = w(s::RAW + KERNARG_WORD);
        let mut classified = None;
        if p.dispatch {
            let now = self.classify(addr);
            if now != class {
                return Err(Some(now));
            }
            classified = Some(now);
        }
        if st == slot_ref::REPEAT && self.shared.arg_check.get().is_some() {
            // The findings are the last check's while its generation holds.
            let now = self
                .shared
                .arg_generation
                .get()
                .and_then(|g| catch_unwind(AssertUnwindSafe(g)).ok());
            if now.is_none() || now != generation {
                return Err(classified);
            }
        }
        let (observed, done) = self.times(w(s::OBSERVED_NS), w(s::DONE_NS));
        if !self.enc.push_next(seq, KERNARG_WORD, addr, observed, done) {
            return Err(classified);
        }
        // Only the index moves among the words the next slot is compared on.
        if let Some(p) = self.repeat.as_mut() {
            p.words[s::PACKET_INDEX] = index;
        }
        if !self.trailer_written {
            self.counts.add_kind(status, barrier);
        }
        Ok(())
    }

    /// A dispatch's kernarg class: `Null` for address 0, else what the
    /// runtime's classifier says (`ForeignOpaque` if it panics).
    fn classify(&mut self, kernarg: u64) -> KernargClass {
        if kernarg == 0 {
            return KernargClass::Null;
        }
        let classify = &mut self.classify;
        catch_unwind(AssertUnwindSafe(|| classify(kernarg))).unwrap_or(KernargClass::ForeignOpaque)
    }

    /// Encodes one record in full (`classified`: its kernarg class, if the
    /// fast path computed it already).
    fn encode(
        &mut self,
        seq: u64,
        rec: &PacketRecord,
        kref: u64,
        words: &[u64; ring::SLOT_WORDS],
        classified: Option<KernargClass>,
    ) {
        use crate::abi::packet_offset as po;
        let (kernarg, generation) = self.kernarg(rec, kref);
        let dispatch = PacketType(rec.raw[po::HEADER]) == PacketType::KERNEL_DISPATCH;
        let class = if dispatch {
            if !self.pending_args.is_empty() {
                let mut ko = [0u8; 8];
                ko.copy_from_slice(&rec.raw[po::KERNEL_OBJECT..po::KERNEL_OBJECT + 8]);
                let ko = u64::from_le_bytes(ko);
                if self.args_written_for != Some(ko) {
                    self.args_written_for = Some(ko);
                    if let Some(k) = self.pending_args.remove(&ko) {
                        // Before the batch that holds this record (`out`
                        // takes the batch after this pass's other frames).
                        let payload = kernarg::encode_kernel_args(std::slice::from_ref(&*k));
                        format::push_frame(&mut self.out, kind::KERNEL_ARGS, &payload);
                    }
                }
            }
            match classified {
                Some(c) => c,
                None => {
                    let mut ka = [0u8; 8];
                    ka.copy_from_slice(&rec.raw[po::KERNARG_ADDRESS..po::KERNARG_ADDRESS + 8]);
                    self.classify(u64::from_le_bytes(ka))
                }
            }
        } else {
            KernargClass::Null
        };
        let barrier = super::is_barrier_packet(&rec.raw);
        if !self.trailer_written {
            self.counts.add_kind(rec.status, barrier);
        }
        self.repeat = Some(Repeat {
            words: *words,
            class,
            generation: if slot_ref::state(kref) == slot_ref::REPEAT
                || slot_ref::state(kref) == slot_ref::COPIED
                || slot_ref::state(kref) == slot_ref::TRUNCATED
            {
                generation
            } else {
                None
            },
            dispatch,
            status: rec.status,
            barrier,
        });
        self.enc.push(&BatchRecord {
            seq,
            queue_id: rec.queue_id,
            packet_index: rec.packet_index,
            raw: rec.raw,
            status: rec.status as u8,
            kernarg_class: class as u8,
            thread: rec.thread,
            reasons: rec.reasons.0,
            observed_ns: rec.observed_ns,
            done_ns: rec.done_ns,
            kernarg,
        });
    }

    /// Finish requests and termination signals.
    fn endings(&mut self) {
        let st = self.ring.word(hdr::STATE);
        let signalled = st.load(Ordering::SeqCst) == state::SIGNALLED;
        if !self.trailer_written {
            let req = self
                .shared
                .finish
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            if let Some(req) = req {
                if self.next >= req.finish_seq || Instant::now() >= req.deadline {
                    self.write_trailer(&req, format::ending::FINISH, 0);
                    let _ = st.compare_exchange(
                        state::LIVE,
                        state::FINISHED,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    );
                    // The first error kept, this thread's or the sync
                    // thread's (see `run`).
                    let result = match self.shared.kept_error() {
                        None => Ok(CaptureSummary {
                            counts: self.counts,
                            stalls: req.stalls,
                            pending_packets: super::packet_total(&req.pending),
                            uncommitted: req.finish_seq.saturating_sub(self.next),
                            path: self.shared.path.clone(),
                        }),
                        Some(e) => Err(e),
                    };
                    *self
                        .shared
                        .finished
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()) = Some(result);
                    self.shared.notify();
                    // Late records after this point are still encoded.
                    self.shared.nudge();
                } else {
                    *self.shared.finish.lock().unwrap_or_else(|e| e.into_inner()) = Some(req);
                }
            }
        }
        if signalled {
            let target = self.ring.word(hdr::SIGNAL_SEQ).load(Ordering::SeqCst);
            let seen = *self.signal_seen.get_or_insert_with(Instant::now);
            let late = seen.elapsed() >= Duration::from_millis(1500);
            if self.next >= target || late {
                if !self.trailer_written {
                    let sig = self.ring.word(hdr::SIGNAL).load(Ordering::Relaxed) as u32;
                    let req = FinishRequest {
                        finish_seq: target,
                        stalls: 0,
                        end_ns: 0,
                        pending: Vec::new(),
                        deadline: Instant::now(),
                    };
                    self.write_trailer(&req, format::ending::SIGNAL, sig);
                } else {
                    let _ = self.shared.file.sync_data();
                }
                st.store(state::SIGNAL_DONE, Ordering::SeqCst);
            }
        }
    }

    fn write_trailer(&mut self, req: &FinishRequest, ending: u32, signal: u32) {
        // Every QueueEnd due before the Trailer goes before it.
        self.take_controls();
        self.write_due_ends(false);
        let mut p = PayloadBuf::default();
        p.u64(self.counts.records)
            .u64(self.counts.validated)
            .u64(self.counts.rejected)
            .u64(self.counts.barriers)
            .u64(self.counts.dispatches_validated)
            .u64(req.stalls)
            .u64(req.end_ns)
            .u32(self.queues)
            .u32(self.code_objects);
        debug_assert_eq!(p.0.len(), format::TRAILER_PAYLOAD_LEN);
        let v2 = TrailerV2 {
            seq_end: self.next,
            uncommitted: req.finish_seq.saturating_sub(self.next),
            ending,
            signal,
            pending: req.pending.clone(),
        };
        let payload = format::encode_trailer_v2(&p.0, &v2);
        format::push_frame(&mut self.out, kind::TRAILER, &payload);
        self.write_out();
        self.trailer_written = true;
        if self.error.is_none() {
            if let Err(e) = self.shared.file.sync_data() {
                self.set_error(e);
            }
        }
    }

    fn set_error(&mut self, e: io::Error) {
        self.shared.keep_error(&e);
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Writes the pass's frames at the end of the stream.
    fn write_out(&mut self) {
        if self.out.is_empty() {
            return;
        }
        if self.error.is_none() {
            match self.shared.file.write_all_at(&self.out, self.stream_end) {
                Ok(()) => {
                    self.stream_end += self.out.len() as u64;
                    self.ring
                        .word(hdr::STREAM_END)
                        .store(self.stream_end, Ordering::Release);
                }
                Err(e) => self.set_error(e),
            }
        }
        self.out.clear();
    }

    /// QueueEnd frames whose queue's earlier records are all encoded (all of
    /// them, when stopping).
    fn write_due_ends(&mut self, all: bool) {
        let next = self.next;
        let mut i = 0;
        while i < self.ends.len() {
            if all || self.ends[i].after_seq <= next {
                let e = self.ends.swap_remove(i);
                let mut p = PayloadBuf::default();
                p.u64(e.queue_id).u64(e.pending).u64(e.end_ns);
                format::push_frame(&mut self.out, kind::QUEUE_END, &p.0);
                self.queue_ids.remove(&e.queue_id);
                if self.known_queue == Some(e.queue_id) {
                    // The id may be registered again; its records then need
                    // the new Queue frame first.
                    self.known_queue = None;
                }
                if e.pending > 0 {
                    tracing::warn!(
                        queue = e.queue_id,
                        pending = e.pending,
                        "softgpu: capture: queue destroyed with {} packet(s) never processed (behind an unsatisfied barrier, or never published); the capture records them as pending",
                        e.pending
                    );
                }
            } else {
                i += 1;
            }
        }
        self.publish_tracked();
    }

    fn publish_tracked(&self) {
        let n = self.queue_ids.len() + self.ends.len() + self.carried.len();
        self.shared
            .tracked_queues
            .store(n as u64, Ordering::Relaxed);
    }

    fn take_controls(&mut self) -> usize {
        // What a control changes (a kernel's KernelArgs entry due, a queue
        // id registered again) is decided on the full path.
        self.repeat = None;
        let controls = std::mem::take(&mut *self.shared.control());
        let n = controls.len();
        for c in controls {
            match c {
                Control::KernelArgs(ks) => {
                    // Written with the kernel's first dispatch (`encode`);
                    // the last-dispatched cache is dropped, as a kernel
                    // object may be loaded again at the same address.
                    self.args_written_for = None;
                    for k in ks {
                        self.pending_args.insert(k.kernel_object, k);
                    }
                }
                Control::Queue(info, arena) => {
                    self.arenas
                        .insert(arena.id, ArenaState { arena, last: None });
                    self.queue_agents.insert(info.queue_id, info.agent_index);
                    if let Some(i) = self.ends.iter().position(|e| e.queue_id == info.queue_id) {
                        // The id was ended and is registered again before
                        // its QueueEnd could be written (the old records are
                        // not all encoded): the two become one queue in the
                        // file, whose one QueueEnd carries both pending counts.
                        let old = self.ends.remove(i);
                        self.carried.push((old.queue_id, old.pending));
                        continue;
                    }
                    if !self.queue_ids.insert(info.queue_id) {
                        // One Queue frame per live id (readers reject a
                        // second one); the records still get written.
                        tracing::warn!(
                            queue_id = info.queue_id,
                            "softgpu: capture: queue id registered twice; keeping its first queue frame"
                        );
                        continue;
                    }
                    let mut p = PayloadBuf::default();
                    p.u64(info.queue_id)
                        .u32(info.agent_index)
                        .u32(info.ring_size)
                        .u64(info.created_ns);
                    format::push_frame(&mut self.out, kind::QUEUE, &p.0);
                    if !self.trailer_written {
                        self.queues = self.queues.saturating_add(1);
                    }
                }
                Control::QueueEnd(mut e) => {
                    if let Some(i) = self.carried.iter().position(|c| c.0 == e.queue_id) {
                        e.pending = e.pending.saturating_add(self.carried.swap_remove(i).1);
                    }
                    self.ends.push(e);
                }
                Control::KernelInfo(ks) => {
                    for chunk in ks.chunks(4096) {
                        let mut p = PayloadBuf::default();
                        p.u32(chunk.len() as u32);
                        for k in chunk {
                            format::encode_kernel_info_entry(&mut p, k);
                        }
                        format::push_frame(&mut self.out, kind::KERNEL_INFO, &p.0);
                    }
                }
                Control::CodeObject(co) => {
                    if !self.trailer_written {
                        self.code_objects = self.code_objects.saturating_add(1);
                    }
                    for payload in encode_code_object(&co) {
                        format::push_frame(&mut self.out, kind::CODE_OBJECT, &payload);
                    }
                }
            }
        }
        n
    }
}

fn encode_header(h: &CaptureHeader) -> Vec<u8> {
    let mut p = PayloadBuf::default();
    p.u32(h.pid)
        .u32(0)
        .u64(h.start_unix_ns)
        .str(&h.mode, MAX_STRING);
    p.u32(u32::try_from(h.agents.len()).unwrap_or(u32::MAX));
    for a in &h.agents {
        p.u32(a.index)
            .u8(match a.kind {
                AgentKind::Cpu => 0,
                AgentKind::Gpu => 1,
            })
            .u8(a.target.is_some() as u8)
            .u16(0)
            .str(&a.name, MAX_STRING)
            .str(a.target.as_deref().unwrap_or(""), MAX_STRING);
    }
    p.0
}

/// One or more Code Object payloads (the table is split when very large; every
/// part carries the same id).
fn encode_code_object(co: &CodeObject) -> Vec<Vec<u8>> {
    let mut parts = Vec::new();
    let mut entries = PayloadBuf::default();
    let mut count: u32 = 0;
    let flush = |entries: &mut PayloadBuf, count: &mut u32, parts: &mut Vec<Vec<u8>>| {
        let mut p = PayloadBuf::default();
        p.u64(co.id).u32(*count);
        p.0.extend_from_slice(&entries.0);
        parts.push(p.0);
        entries.0.clear();
        *count = 0;
    };
    for (addr, name) in &co.symbols {
        entries.u64(*addr).str(name, MAX_STRING);
        count += 1;
        if entries.0.len() >= CODE_OBJECT_CHUNK {
            flush(&mut entries, &mut count, &mut parts);
        }
    }
    if count > 0 || parts.is_empty() {
        flush(&mut entries, &mut count, &mut parts);
    }
    parts
}
