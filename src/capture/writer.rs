//! The capture writer: per-queue SPSC rings on the doorbell path, one background
//! thread that encodes frames and writes them.
//!
//! Hot path ([`QueueProducer::push`]): one `fetch_add` for `seq`, fifteen relaxed
//! word stores and one release store; no allocation, no lock, no syscall unless
//! the ring is full (then it waits: the writer never drops a record).
//!
//! Cold path: [`CaptureWriter::register_queue`] and
//! [`CaptureWriter::add_code_object`] take a mutex and hand the writer thread a
//! control message. The writer handles control messages before it polls the
//! rings, so a Queue frame always precedes the packets of that queue.
//!
//! Durability: the preamble and Header frame are flushed by `create` itself; the
//! writer thread flushes at least every `flush_interval` while records arrive;
//! `finish` drains everything, writes the Trailer, flushes and fsyncs.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::format::{self, PayloadBuf, kind};
use super::ring::{Ring, Slot};
use super::{
    AgentKind, CaptureHeader, CaptureSummary, CodeObject, Counts, KernargClass, QueueInfo,
};
use crate::abi::PacketType;
use crate::aql::PacketRecord;

/// Slots preallocated per queue by [`CaptureWriter::register_queue`]
/// (`SLOT_WORDS * 8` = 120 bytes each, so 480 KiB per queue).
pub const DEFAULT_RING_CAPACITY: usize = 4096;

/// Longest string stored (agent names, mode, targets, symbol names); longer ones
/// are cut on a character boundary.
const MAX_STRING: usize = 4096;
/// Largest Code Object payload the writer produces before starting a new frame
/// for the same code object.
const CODE_OBJECT_CHUNK: usize = 4 << 20;

/// Writer tuning. [`WriterOptions::default`] is what the runtime should use.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// Slots per queue ring.
    pub ring_capacity: usize,
    /// How long the writer thread sleeps when it finds nothing to do (it is also
    /// woken when a ring passes half full).
    pub poll_interval: Duration,
    /// Longest time written records may sit in the process's buffer.
    pub flush_interval: Duration,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            ring_capacity: DEFAULT_RING_CAPACITY,
            poll_interval: Duration::from_millis(2),
            flush_interval: Duration::from_millis(50),
        }
    }
}

type Classify = Box<dyn Fn(u64) -> KernargClass + Send + Sync>;

enum Control {
    Queue(QueueInfo, Arc<Ring>),
    CodeObject(CodeObject),
    KernelInfo(Vec<super::KernelMeta>),
}

/// State shared by the writer handle, the producers and the writer thread.
struct Shared {
    /// Capture-wide sequence counter, one `fetch_add` per push.
    seq: CachePadded<AtomicU64>,
    control: Mutex<Vec<Control>>,
    /// Set by `finish`: the writer drains everything and exits.
    shutdown: AtomicBool,
    /// Set when the writer thread has exited: a producer that finds its ring full
    /// discards instead of waiting forever.
    closed: AtomicBool,
    writer: OnceLock<Thread>,
    discarded: AtomicU64,
    next_code_object: AtomicU64,
    /// Requests made: `CaptureWriter::drain` and `flush` each take a ticket ...
    drain_requested: AtomicU64,
    flush_requested: AtomicU64,
    /// ... and the highest (drain, flush) tickets the writer thread has served.
    served: Mutex<(u64, u64)>,
    served_cv: Condvar,
    /// Every ring, for `drain`'s fast path (the writer keeps its own list).
    rings: Mutex<Vec<Arc<Ring>>>,
    /// The writer's first I/O error, for `flush` to report.
    error: Mutex<Option<(io::ErrorKind, String)>>,
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
}

type Memo = Result<CaptureSummary, (io::ErrorKind, String)>;

struct FinishState {
    handle: Option<JoinHandle<WriterState>>,
    result: Option<Memo>,
}

/// A capture being written. `Send + Sync`; share it as `Arc<CaptureWriter>`.
///
/// All of the writer's state lives here (and in the thread it owns), so a
/// runtime can drop or ignore one instance, for example in a forked child.
pub struct CaptureWriter {
    path: PathBuf,
    shared: Arc<Shared>,
    ring_capacity: usize,
    finish: Mutex<FinishState>,
}

impl std::fmt::Debug for CaptureWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureWriter")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The doorbell path's handle on one queue's ring. `Send`, not `Sync`: one
/// producing thread at a time, ordered by happens-before between successive
/// producers (for example by the queue's drain lock).
pub struct QueueProducer {
    ring: Arc<Ring>,
    shared: Arc<Shared>,
    /// Our next write position (only we write `tail`).
    tail: u64,
    /// Last consumer position we saw; refreshed only when the ring looks full.
    cached_head: u64,
    capacity: u64,
    /// Fill level at which the writer is woken early.
    nudge_at: u64,
}

impl std::fmt::Debug for QueueProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueProducer")
            .field("ring", &self.ring)
            .finish_non_exhaustive()
    }
}

impl QueueProducer {
    /// Records one packet. Assigns the capture-wide `seq`. Never drops: when the
    /// ring is full it spins briefly, then wakes the writer and yields until
    /// there is room. After [`CaptureWriter::finish`] the capture is closed and a
    /// push into a full ring is discarded (counted in
    /// [`CaptureWriter::discarded`]) instead of waiting forever.
    #[inline]
    pub fn push(&mut self, rec: &PacketRecord) {
        let tail = self.tail;
        if tail - self.cached_head >= self.capacity && !self.wait_for_space() {
            return;
        }
        // Relaxed: seq only needs to be unique; the ring's release store orders
        // the slot contents.
        let seq = self.shared.seq.fetch_add(1, Ordering::Relaxed);
        self.ring.write_and_publish(tail, &Slot { seq, rec: *rec });
        self.tail = tail + 1;
        if self.tail - self.cached_head == self.nudge_at {
            self.shared.nudge();
        }
    }

    /// Waits until the consumer frees a slot. Returns false when the capture is
    /// closed and no consumer will ever come.
    #[cold]
    fn wait_for_space(&mut self) -> bool {
        let mut spins: u32 = 0;
        loop {
            self.cached_head = self.ring.load_head();
            if self.tail - self.cached_head < self.capacity {
                return true;
            }
            if self.shared.closed.load(Ordering::Acquire) {
                self.shared.discarded.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                if spins % 16 == 0 {
                    self.shared.nudge();
                }
                if spins < 10_000 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            spins = spins.saturating_add(1);
        }
    }
}

impl CaptureWriter {
    /// Creates the file (mode 0600, truncated), writes and flushes the preamble
    /// and Header frame, and starts the writer thread.
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
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)?;
        // `mode` only applies when the file is created; an existing file keeps
        // its mode unless we set it.
        file.set_permissions(Permissions::from_mode(0o600))?;
        let mut out = BufWriter::with_capacity(256 << 10, file);
        let mut bytes = format::preamble().to_vec();
        format::push_frame(&mut bytes, kind::HEADER, &encode_header(&header));
        out.write_all(&bytes)?;
        out.flush()?;

        let shared = Arc::new(Shared {
            seq: CachePadded::new(AtomicU64::new(0)),
            control: Mutex::new(Vec::new()),
            shutdown: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            writer: OnceLock::new(),
            discarded: AtomicU64::new(0),
            next_code_object: AtomicU64::new(0),
            drain_requested: AtomicU64::new(0),
            flush_requested: AtomicU64::new(0),
            served: Mutex::new((0, 0)),
            served_cv: Condvar::new(),
            rings: Mutex::new(Vec::new()),
            error: Mutex::new(None),
        });
        let state = WriterState {
            out,
            error: None,
            counts: Counts::default(),
            queues: 0,
            code_objects: 0,
            rings: Vec::new(),
            classify,
            shared: shared.clone(),
            dirty: false,
            last_flush: Instant::now(),
            options: options.clone(),
            drain_served: 0,
            flush_served: 0,
            queue_ids: HashSet::new(),
        };
        let handle = std::thread::Builder::new()
            .name("softgpu-capture".into())
            .spawn(move || state.run())?;
        let _ = shared.writer.set(handle.thread().clone());
        Ok(Arc::new(CaptureWriter {
            path: path.to_path_buf(),
            shared,
            ring_capacity: options.ring_capacity.max(1),
            finish: Mutex::new(FinishState {
                handle: Some(handle),
                result: None,
            }),
        }))
    }

    /// Registers a queue (cold path: allocates its ring) and returns the
    /// producer the doorbell path pushes into. The Queue frame is written before
    /// any of the queue's packets.
    pub fn register_queue(
        &self,
        queue_id: u64,
        agent_index: u32,
        ring_size: u32,
        created_ns: u64,
    ) -> QueueProducer {
        let ring = Arc::new(Ring::new(self.ring_capacity));
        self.shared
            .rings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(ring.clone());
        let info = QueueInfo {
            queue_id,
            agent_index,
            ring_size,
            created_ns,
        };
        self.shared
            .control()
            .push(Control::Queue(info, ring.clone()));
        self.shared.nudge();
        let capacity = ring.capacity();
        QueueProducer {
            ring,
            shared: self.shared.clone(),
            tail: 0,
            cached_head: 0,
            capacity,
            nudge_at: (capacity / 2).max(1),
        }
    }

    /// Stores one code object's symbol table, `(kernel_object, symbol name)`
    /// (cold path). Returns the code object's id. Readers resolve a dispatch's
    /// `kernel_object` through every table in the file, wherever it appears.
    pub fn add_code_object(&self, symbols: Vec<(u64, String)>) -> u64 {
        let id = self.shared.next_code_object.fetch_add(1, Ordering::Relaxed);
        self.shared
            .control()
            .push(Control::CodeObject(CodeObject { id, symbols }));
        self.shared.nudge();
        id
    }

    /// Records register counts and static sizes of loaded kernels (cold path;
    /// call with the code object's kernels right after `add_code_object`).
    pub fn add_kernel_info(&self, kernels: Vec<super::KernelMeta>) {
        if kernels.is_empty() {
            return;
        }
        self.shared.control().push(Control::KernelInfo(kernels));
        self.shared.nudge();
    }

    /// Drains every ring, writes the Trailer (with `stalls` and `end_ns` from the
    /// runtime), flushes, fsyncs and joins the writer thread. Idempotent: later
    /// calls return the first call's result. Records pushed after this returns
    /// are not captured.
    pub fn finish(&self, stalls: u64, end_ns: u64) -> io::Result<CaptureSummary> {
        let mut st = self.finish.lock().unwrap_or_else(|e| e.into_inner());
        if st.result.is_none() {
            let memo = match st.handle.take() {
                Some(handle) => {
                    self.shared.shutdown.store(true, Ordering::Release);
                    self.shared.nudge();
                    match handle.join() {
                        Ok(state) => state
                            .finish(stalls, end_ns, &self.path)
                            .map_err(|e| (e.kind(), e.to_string())),
                        Err(_) => Err((
                            io::ErrorKind::Other,
                            "the capture writer thread panicked".to_string(),
                        )),
                    }
                }
                None => Err((
                    io::ErrorKind::Other,
                    "the capture writer is gone".to_string(),
                )),
            };
            st.result = Some(memo);
        }
        match st.result.as_ref() {
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
    /// still in a ring when the memory goes would be classified afterwards, as
    /// `ForeignOpaque`. Returns at once when every ring is empty (the common
    /// case) or the capture is finished; otherwise wakes the writer and waits
    /// for one pass (tens of microseconds).
    pub fn drain(&self) {
        let all_empty = self
            .shared
            .rings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            // A slot is released only after its record was encoded.
            .all(|r| r.load_tail() == r.load_head());
        if !all_empty {
            self.wait_for_writer(&self.shared.drain_requested, |s| s.0);
        }
    }

    /// Makes every record pushed before this call durable: waits until the
    /// writer thread has drained every ring, flushed and `fdatasync`ed. Cold
    /// path (for `hsa_shut_down`); the capture stays open. Returns the writer's
    /// first I/O error if it has had one. After `finish` it returns at once.
    pub fn flush(&self) -> io::Result<()> {
        self.wait_for_writer(&self.shared.flush_requested, |s| s.1);
        let err = self.shared.error.lock().unwrap_or_else(|e| e.into_inner());
        match err.as_ref() {
            Some((kind, msg)) => Err(io::Error::new(
                *kind,
                format!("capture {}: {msg}", self.path.display()),
            )),
            None => Ok(()),
        }
    }

    /// Takes a ticket from `requested` and waits until the writer has served it
    /// (or has exited).
    fn wait_for_writer(&self, requested: &AtomicU64, served_of: fn(&(u64, u64)) -> u64) {
        // AcqRel: our earlier pushes happen before the writer reads this ticket.
        let ticket = requested.fetch_add(1, Ordering::AcqRel) + 1;
        self.shared.nudge();
        let mut served = self.shared.served.lock().unwrap_or_else(|e| e.into_inner());
        while served_of(&served) < ticket && !self.shared.closed.load(Ordering::Acquire) {
            served = self
                .shared
                .served_cv
                .wait_timeout(served, Duration::from_millis(10))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records pushed into a full ring after the capture was closed (so lost).
    pub fn discarded(&self) -> u64 {
        self.shared.discarded.load(Ordering::Relaxed)
    }
}

impl Drop for CaptureWriter {
    /// Without `finish`, the writer thread is stopped and joined: records already
    /// pushed are written and flushed, but there is no Trailer (incomplete).
    fn drop(&mut self) {
        let st = self.finish.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = st.handle.take() {
            self.shared.shutdown.store(true, Ordering::Release);
            self.shared.nudge();
            if let Ok(mut state) = handle.join() {
                let _ = state.out.flush();
            }
        }
    }
}

/// Sets `closed` when the writer thread exits, normally or by panic, so no
/// producer waits forever on a ring nobody drains.
struct CloseOnExit(Arc<Shared>);

impl Drop for CloseOnExit {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        self.0.served_cv.notify_all();
    }
}

struct WriterState {
    out: BufWriter<File>,
    /// First write error; later writes are skipped but rings are still drained.
    error: Option<io::Error>,
    counts: Counts,
    queues: u32,
    code_objects: u32,
    rings: Vec<Arc<Ring>>,
    classify: Classify,
    shared: Arc<Shared>,
    dirty: bool,
    last_flush: Instant,
    options: WriterOptions,
    drain_served: u64,
    flush_served: u64,
    queue_ids: HashSet<u64>,
}

impl WriterState {
    fn run(mut self) -> WriterState {
        let _close = CloseOnExit(self.shared.clone());
        loop {
            let stopping = self.shared.shutdown.load(Ordering::Acquire);
            let drain_wanted = self.shared.drain_requested.load(Ordering::Acquire);
            let flush_wanted = self.shared.flush_requested.load(Ordering::Acquire);
            if stopping {
                // Everything pushed before `finish` is visible now.
                self.drain_until_quiet();
                return self;
            }
            if drain_wanted > self.drain_served || flush_wanted > self.flush_served {
                self.drain_until_quiet();
                if flush_wanted > self.flush_served {
                    self.flush();
                    if self.error.is_none() {
                        if let Err(e) = self.out.get_ref().sync_data() {
                            self.set_error(e);
                        }
                    }
                }
                self.drain_served = drain_wanted;
                self.flush_served = flush_wanted;
                let mut served = self.shared.served.lock().unwrap_or_else(|e| e.into_inner());
                *served = (drain_wanted, flush_wanted);
                drop(served);
                self.shared.served_cv.notify_all();
            }
            let busy = self.take_controls() > 0 || self.drain_rings() > 0;
            if self.dirty && self.last_flush.elapsed() >= self.options.flush_interval {
                self.flush();
            }
            if !busy {
                let wait = if self.dirty {
                    self.options.poll_interval.min(
                        self.options
                            .flush_interval
                            .saturating_sub(self.last_flush.elapsed()),
                    )
                } else {
                    self.options.poll_interval
                };
                std::thread::park_timeout(wait);
            }
        }
    }

    /// Passes until one finds nothing, so producers that were blocked on a full
    /// ring get in too (bounded, in case one never stops pushing).
    fn drain_until_quiet(&mut self) {
        for _ in 0..10_000 {
            let controls = self.take_controls();
            let drained = self.drain_rings();
            if controls == 0 && drained == 0 {
                break;
            }
        }
    }

    fn set_error(&mut self, e: io::Error) {
        let mut shared = self.shared.error.lock().unwrap_or_else(|e| e.into_inner());
        if shared.is_none() {
            *shared = Some((e.kind(), format!("write failed: {e}")));
        }
        drop(shared);
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.set_error(e);
            }
            self.dirty = true;
        }
    }

    fn flush(&mut self) {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.set_error(e);
            }
        }
        self.dirty = false;
        self.last_flush = Instant::now();
    }

    fn take_controls(&mut self) -> usize {
        let controls = std::mem::take(&mut *self.shared.control());
        let n = controls.len();
        for c in controls {
            match c {
                Control::Queue(info, ring) => {
                    self.rings.push(ring);
                    if !self.queue_ids.insert(info.queue_id) {
                        // One Queue frame per id (readers reject a second one);
                        // the new ring still gets drained.
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
                    let mut f = Vec::with_capacity(64);
                    format::push_frame(&mut f, kind::QUEUE, &p.0);
                    self.write(&f);
                    self.queues = self.queues.saturating_add(1);
                }
                Control::KernelInfo(ks) => {
                    for chunk in ks.chunks(4096) {
                        let mut p = PayloadBuf::default();
                        p.u32(chunk.len() as u32);
                        for k in chunk {
                            format::encode_kernel_info_entry(&mut p, k);
                        }
                        let mut f = Vec::with_capacity(p.0.len() + 16);
                        format::push_frame(&mut f, kind::KERNEL_INFO, &p.0);
                        self.write(&f);
                    }
                }
                Control::CodeObject(co) => {
                    self.code_objects = self.code_objects.saturating_add(1);
                    for payload in encode_code_object(&co) {
                        let mut f = Vec::with_capacity(payload.len() + 16);
                        format::push_frame(&mut f, kind::CODE_OBJECT, &payload);
                        self.write(&f);
                    }
                }
            }
        }
        n
    }

    /// One pass over every ring; returns the number of records written.
    fn drain_rings(&mut self) -> u64 {
        let mut total = 0;
        for i in 0..self.rings.len() {
            let ring = self.rings[i].clone();
            let start = ring.consumer_pos();
            let mut pos = start;
            let tail = ring.load_tail();
            if tail > pos {
                // Code objects are registered before any dispatch that uses
                // them is pushed; taking controls after loading the tail makes
                // every code object those records refer to known here.
                self.take_controls();
            }
            while pos < tail {
                // Release slots in batches so a waiting producer can go on early.
                let batch_end = tail.min(pos + 256);
                while pos < batch_end {
                    let slot = ring.read(pos);
                    self.encode_record(&slot);
                    pos += 1;
                }
                ring.release_to(pos);
            }
            total += tail - start;
        }
        total
    }

    fn encode_record(&mut self, slot: &Slot) {
        use crate::abi::packet_offset as po;
        let rec = &slot.rec;
        let class = if PacketType(rec.raw[po::HEADER]) == PacketType::KERNEL_DISPATCH {
            let mut ka = [0u8; 8];
            ka.copy_from_slice(&rec.raw[po::KERNARG_ADDRESS..po::KERNARG_ADDRESS + 8]);
            let kernarg = u64::from_le_bytes(ka);
            if kernarg == 0 {
                KernargClass::Null
            } else {
                catch_unwind(AssertUnwindSafe(|| (self.classify)(kernarg)))
                    .unwrap_or(KernargClass::ForeignOpaque)
            }
        } else {
            KernargClass::Null
        };
        self.counts.add(rec.status, &rec.raw);
        let frame = format::encode_packet_frame(slot.seq, rec, class);
        self.write(&frame);
    }

    fn finish(mut self, stalls: u64, end_ns: u64, path: &Path) -> io::Result<CaptureSummary> {
        let mut p = PayloadBuf::default();
        p.u64(self.counts.records)
            .u64(self.counts.validated)
            .u64(self.counts.rejected)
            .u64(self.counts.barriers)
            .u64(self.counts.dispatches_validated)
            .u64(stalls)
            .u64(end_ns)
            .u32(self.queues)
            .u32(self.code_objects);
        debug_assert_eq!(p.0.len(), format::TRAILER_PAYLOAD_LEN);
        let mut f = Vec::with_capacity(96);
        format::push_frame(&mut f, kind::TRAILER, &p.0);
        self.write(&f);
        self.flush();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.get_ref().sync_all()?;
        Ok(CaptureSummary {
            counts: self.counts,
            stalls,
            path: path.to_path_buf(),
        })
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
