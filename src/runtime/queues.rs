//! Queues: `amd_queue_t` images in an arena, rings in host memory, and the
//! doorbell path that runs the AQL processor.
//!
//! The `hsa_queue_t*` handed to the program is the start of an arena slot whose
//! first 256 bytes are an `amd_queue_t` image; `write_dispatch_id` and
//! `read_dispatch_id` in that image *are* the write and read indices, as in
//! ROCr. Like signals, queue pointers are validated by range, stride and a
//! liveness pointer, without a lock.
//!
//! Doorbell protocol: a store to the doorbell signal calls [`VirtualQueue::kick`].
//! Each kick increments `pending`; the thread that moves it from 0 becomes the
//! drainer and drains until no kick arrived during its last pass. So exactly one
//! thread drains a queue at a time (packets are processed once, in index order),
//! no kick is lost, and the other ringing threads return at once.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use super::signals::{self, SignalSlot};
use super::sys;
use crate::abi::{AmdQueue, PacketType};
use crate::aql::{
    DrainOutcome, PacketRecord, Processor, QueueMemory, QueueState, RecordSink, SignalOps, Status,
};
use crate::capture::QueueProducer;
use crate::lifecycle;
use crate::real;

pub const MAX_QUEUES: usize = 1024;
const SLOT: usize = 512;

/// One arena slot: an `amd_queue_t` image, then SoftGPU's owner pointer.
#[repr(C, align(64))]
pub struct QueueSlot {
    pub hsa_type: AtomicU32,
    pub features: AtomicU32,
    pub base_address: AtomicU64,
    pub doorbell_signal: AtomicU64,
    pub size: AtomicU32,
    pub reserved1: AtomicU32,
    pub id: AtomicU64,
    _amd_reserved1: [AtomicU32; 4],
    pub write_dispatch_id: AtomicU64,
    _amd_mid: [AtomicU64; 8],
    pub read_dispatch_id: AtomicU64,
    _amd_tail: [AtomicU64; 15],
    // --- SoftGPU fields, past the 256-byte amd_queue_t image ---
    owner: AtomicPtr<VirtualQueue>,
    _pad: [u64; 31],
}

const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<QueueSlot>() == SLOT);
    assert!(offset_of!(QueueSlot, base_address) == offset_of!(AmdQueue, hsa_queue) + 8);
    assert!(offset_of!(QueueSlot, doorbell_signal) == 16);
    assert!(offset_of!(QueueSlot, size) == 24);
    assert!(offset_of!(QueueSlot, id) == 32);
    assert!(offset_of!(QueueSlot, write_dispatch_id) == offset_of!(AmdQueue, write_dispatch_id));
    assert!(offset_of!(QueueSlot, read_dispatch_id) == offset_of!(AmdQueue, read_dispatch_id));
    assert!(offset_of!(QueueSlot, owner) == size_of::<AmdQueue>());
};

struct Arena {
    base: usize,
    free: Mutex<(usize, Vec<usize>)>,
}

static ARENA: OnceLock<Option<Arena>> = OnceLock::new();

fn arena() -> Option<&'static Arena> {
    ARENA
        .get_or_init(|| {
            sys::map_forever(MAX_QUEUES * SLOT).map(|p| Arena {
                base: p as usize,
                free: Mutex::new((0, Vec::new())),
            })
        })
        .as_ref()
}

fn slot_at(a: &Arena, idx: usize) -> &'static QueueSlot {
    debug_assert!(idx < MAX_QUEUES);
    // SAFETY: the arena is a never-unmapped read-write mapping of
    // MAX_QUEUES * SLOT bytes; idx < MAX_QUEUES (checked by callers); the mapping
    // is page aligned and SLOT is a multiple of QueueSlot's alignment. QueueSlot
    // is only atomics and padding, valid for any bytes including the initial zeros.
    unsafe { &*((a.base + idx * SLOT) as *const QueueSlot) }
}

/// The live queue whose `hsa_queue_t*` is `ptr`, or `None`.
#[inline]
pub fn lookup(ptr: u64) -> Option<&'static VirtualQueue> {
    let a = arena()?;
    let off = (ptr as usize).checked_sub(a.base)?;
    if off % SLOT != 0 || off / SLOT >= MAX_QUEUES {
        return None;
    }
    lookup_index(off / SLOT)
}

/// The live queue in arena slot `idx`.
#[inline]
pub fn lookup_index(idx: usize) -> Option<&'static VirtualQueue> {
    let a = arena()?;
    if idx >= MAX_QUEUES {
        return None;
    }
    let p = slot_at(a, idx).owner.load(Ordering::Acquire);
    // SAFETY: a non-null owner was published (Release) from a leaked Box in
    // `create`, and VirtualQueue objects are never freed, so the reference is
    // valid for 'static. Destroyed queues are marked dead, not freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// The ring: `size` 64-byte slots of host memory.
struct Ring {
    base: usize,
    size: u64,
    bytes: usize,
}

/// Counters the exit summary reports.
#[derive(Default, Clone, Copy, Debug)]
pub struct Counts {
    pub validated: u64,
    pub rejected: u64,
    pub barriers: u64,
    pub stalls: u64,
}

/// A small direct-mapped cache of kernel lookups, per queue, so the doorbell
/// path reads the global kernel table (behind a lock) only on a miss. Only
/// hits are cached: kernels are never unloaded, so a hit never goes stale.
struct KernelCache {
    slots: [(u64, crate::aql::KernelInfo); 64],
}

impl KernelCache {
    fn new() -> Self {
        KernelCache {
            slots: [(0, crate::aql::KernelInfo::default()); 64],
        }
    }
}

impl crate::aql::KernelTable for std::cell::RefCell<&mut KernelCache> {
    fn lookup(&self, kernel_object: u64) -> crate::aql::KernelLookup {
        let i = ((kernel_object >> 6) & 63) as usize;
        let mut cache = self.borrow_mut();
        let slot = &mut cache.slots[i];
        if slot.0 == kernel_object && kernel_object != 0 {
            return crate::aql::KernelLookup::Known(slot.1);
        }
        match super::executables::kernel_info(kernel_object) {
            Some(k) => {
                *slot = (kernel_object, k);
                crate::aql::KernelLookup::Known(k)
            }
            None => crate::aql::KernelLookup::Unknown,
        }
    }
}

struct DrainSide {
    /// `None` once the queue is destroyed: the cache (about 3 KiB) goes with
    /// the queue, so a program that churns queues does not keep one per queue
    /// it ever made (the `VirtualQueue` itself stays, marked dead).
    kernels: Option<Box<KernelCache>>,
    state: QueueState,
    producer: Option<QueueProducer>,
    counts: Counts,
    ring: Option<Ring>,
}

/// A queue owned by the virtual runtime.
pub struct VirtualQueue {
    pub slot: &'static QueueSlot,
    pub arena_index: usize,
    pub queue_id: u64,
    pub agent_index: u32,
    pub doorbell: u64,
    /// `hsa_amd_queue_cu_set_mask`: recorded and reported back; nothing executes.
    pub cu_mask: Mutex<Vec<u32>>,
    /// `hsa_amd_queue_set_priority`: recorded; nothing executes.
    pub priority: AtomicU32,
    /// Consume only up to the highest doorbell value rung, as AMD's packet
    /// processor does, instead of up to the write index. Set when this copy
    /// of SoftGPU stands in for the real runtime below another copy (see
    /// `Runtime::lower`): observe mode relies on the hardware not running
    /// ahead of the doorbells it has been given.
    doorbell_bounded: bool,
    /// Highest doorbell value rung, plus one (with `doorbell_bounded`).
    rung: AtomicU64,
    pending: AtomicU64,
    dead: AtomicBool,
    blocked: AtomicBool,
    drain: Mutex<DrainSide>,
}

/// What the runtime supplies to every queue's drain.
pub struct DrainContext {
    pub processor: Processor,
    pub completion: crate::config::Completion,
}

static NEXT_QUEUE_ID: AtomicU64 = AtomicU64::new(0);
/// Queues whose last drain stopped at an unsatisfied barrier.
static BLOCKED: Mutex<Vec<&'static VirtualQueue>> = Mutex::new(Vec::new());
/// Number of entries in BLOCKED (read without the lock).
pub static BLOCKED_COUNT: AtomicU32 = AtomicU32::new(0);
/// Counts of destroyed queues, folded in at destroy.
static RETIRED: Mutex<Counts> = Mutex::new(Counts {
    validated: 0,
    rejected: 0,
    barriers: 0,
    stalls: 0,
});

/// Why queue creation failed.
#[derive(Debug)]
pub enum CreateError {
    OutOfQueues,
    OutOfMemory,
    OutOfSignals,
}

/// Create a queue of `size` slots (a power of two, already validated).
pub fn create(
    size: u32,
    queue_type: u32,
    agent_index: u32,
    doorbell_bounded: bool,
    producer: impl FnOnce(u64) -> Option<QueueProducer>,
) -> Result<&'static VirtualQueue, CreateError> {
    let a = arena().ok_or(CreateError::OutOfMemory)?;
    let bytes = size as usize * 64;
    let ring_ptr = sys::map(bytes).ok_or(CreateError::OutOfMemory)?;
    let ring = Ring {
        base: ring_ptr as usize,
        size: size as u64,
        bytes,
    };
    // Every header starts INVALID so an unpublished slot is never taken for a packet.
    for i in 0..size as u64 {
        ring_header(&ring, i).store(PacketType::INVALID.0 as u32, Ordering::Relaxed);
    }
    let Some(doorbell) = signals::create(0) else {
        // SAFETY: the ring was just mapped by us and is not shared yet.
        unsafe { sys::unmap(ring_ptr, bytes) };
        return Err(CreateError::OutOfSignals);
    };
    let idx = {
        let mut f = a.free.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = f.1.pop() {
            Some(i)
        } else if f.0 < MAX_QUEUES {
            f.0 += 1;
            Some(f.0 - 1)
        } else {
            None
        }
    };
    let Some(idx) = idx else {
        signals::destroy(doorbell);
        // SAFETY: as above, the ring is still private to this function.
        unsafe { sys::unmap(ring_ptr, bytes) };
        return Err(CreateError::OutOfQueues);
    };
    let slot = slot_at(a, idx);
    let queue_id = NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed);
    slot.hsa_type.store(queue_type, Ordering::Relaxed);
    slot.features.store(
        crate::abi::queue_feature::KERNEL_DISPATCH,
        Ordering::Relaxed,
    );
    slot.base_address.store(ring.base as u64, Ordering::Relaxed);
    slot.doorbell_signal.store(doorbell, Ordering::Relaxed);
    slot.size.store(size, Ordering::Relaxed);
    slot.reserved1.store(0, Ordering::Relaxed);
    slot.id.store(queue_id, Ordering::Relaxed);
    slot.write_dispatch_id.store(0, Ordering::Relaxed);
    slot.read_dispatch_id.store(0, Ordering::Relaxed);
    let q: &'static VirtualQueue = Box::leak(Box::new(VirtualQueue {
        slot,
        arena_index: idx,
        queue_id,
        agent_index,
        doorbell,
        cu_mask: Mutex::new(Vec::new()),
        priority: AtomicU32::new(1),
        doorbell_bounded,
        rung: AtomicU64::new(0),
        pending: AtomicU64::new(0),
        dead: AtomicBool::new(false),
        blocked: AtomicBool::new(false),
        drain: Mutex::new(DrainSide {
            kernels: Some(Box::new(KernelCache::new())),
            state: QueueState::default(),
            producer: producer(queue_id),
            counts: Counts::default(),
            ring: Some(ring),
        }),
    }));
    slot.owner.store(
        q as *const VirtualQueue as *mut VirtualQueue,
        Ordering::Release,
    );
    if let Some(db) = signals::lookup(doorbell) {
        db.queue_ptr
            .store(slot as *const QueueSlot as u64, Ordering::Relaxed);
        db.doorbell_queue.store(idx as u32 + 1, Ordering::Release);
    }
    Ok(q)
}

fn ring_header(ring: &Ring, index: u64) -> &AtomicU32 {
    let off = ((index & (ring.size - 1)) * 64) as usize;
    // SAFETY: off + 4 <= ring.bytes because the slot index is masked to
    // size - 1 and each slot is 64 bytes; the ring is mapped read-write while
    // `ring` exists (it is only unmapped with the drain lock held, after which
    // no Ring value remains); 64-byte slots keep the word 4-byte aligned. The
    // producer writes this word with 32-bit atomic stores (`header | setup<<16`).
    unsafe { &*((ring.base + off) as *const AtomicU32) }
}

/// A queue's memory as one drain pass sees it: at most up to `cap`.
struct DrainView<'a> {
    q: &'a VirtualQueue,
    ring: &'a Ring,
    cap: u64,
}

impl QueueMemory for DrainView<'_> {
    #[inline]
    fn size(&self) -> u64 {
        self.ring.size
    }
    #[inline]
    fn load_write_index(&self) -> u64 {
        // Acquire: pairs with the producer's release on write_index.
        let mut w = self.q.slot.write_dispatch_id.load(Ordering::Acquire);
        if self.q.doorbell_bounded {
            w = w.min(self.q.rung.load(Ordering::Acquire));
        }
        w.min(self.cap)
    }
    #[inline]
    fn load_header(&self, index: u64) -> u16 {
        // Acquire: pairs with the producer's release store of header|setup, so
        // the packet body written before it is visible to `read_packet`.
        ring_header(self.ring, index).load(Ordering::Acquire) as u16
    }
    #[inline]
    fn read_packet(&self, index: u64) -> [u8; 64] {
        let off = ((index & (self.ring.size - 1)) * 64) as usize;
        let mut out = [0u8; 64];
        // SAFETY: the 64 bytes at off are inside the ring mapping (masked index).
        // They were published by the producer's release store of the header,
        // which our preceding acquire load of that header synchronised with; the
        // producer does not write a slot again until read_index passes it. We
        // copy the bytes out before parsing, never forming a reference into
        // memory the producer owns.
        unsafe {
            std::ptr::copy_nonoverlapping((self.ring.base + off) as *const u8, out.as_mut_ptr(), 64)
        };
        out
    }
    #[inline]
    fn store_header(&self, index: u64, header: u16) {
        // Release: the slot is handed back to the producer.
        ring_header(self.ring, index).store(header as u32, Ordering::Release);
    }
    #[inline]
    fn store_read_index(&self, value: u64) {
        // Release: the producer's queue-full check reads it with acquire.
        self.q.slot.read_dispatch_id.store(value, Ordering::Release);
    }
}

/// Signals as seen by the processor.
pub struct RuntimeSignals {
    completion: crate::config::Completion,
    /// Real signals to complete once the drain lock is released.
    after: std::cell::RefCell<AfterDrain>,
}

/// Real completion signals collected during one drain (a fixed array: the
/// doorbell path does not allocate). A pass over a real runtime processes at
/// most [`AFTER_DRAIN`] packets, so it never fills up; if it ever did, the
/// completion thread would take the rest.
struct AfterDrain {
    handles: [u64; AFTER_DRAIN],
    len: usize,
}

/// Packets per drain pass over a real runtime (see `drain_once`).
const AFTER_DRAIN: usize = 64;

impl Default for AfterDrain {
    fn default() -> Self {
        AfterDrain {
            handles: [0; AFTER_DRAIN],
            len: 0,
        }
    }
}

impl SignalOps for RuntimeSignals {
    #[inline]
    fn is_valid(&self, handle: u64) -> bool {
        // Over a real runtime (intercept), completion and dependency signals
        // are the real runtime's: they cannot be validated without calling
        // it, so any non-null handle is taken as live.
        signals::lookup(handle).is_some() || (handle != 0 && lifecycle::intercepting())
    }
    #[inline]
    fn load(&self, handle: u64) -> i64 {
        match signals::lookup(handle) {
            Some(s) => s.value.load(Ordering::Acquire),
            // A real signal (intercept): the real runtime's load. This is the
            // one call into the real runtime made with a lock held (this
            // queue's drain lock); a signal load never calls back into the
            // program or the shim, so it cannot re-enter that lock.
            None if lifecycle::intercepting() => real::below().map_or(0, |b| b.signal_load(handle)),
            None => 0,
        }
    }
    #[inline]
    fn complete(&self, handle: u64) {
        let ours = signals::lookup(handle).is_some();
        match self.completion {
            crate::config::Completion::Inline if ours => {
                if let Some(s) = signals::lookup(handle) {
                    signals::complete(s, sys::now_ns());
                }
            }
            // A real signal (intercept) is completed right after the drain
            // pass, in order, once the drain lock is released, so that no
            // lock of ours is held while the real runtime runs.
            crate::config::Completion::Inline => {
                let mut after = self.after.borrow_mut();
                if after.len < after.handles.len() {
                    let n = after.len;
                    after.handles[n] = handle;
                    after.len += 1;
                } else {
                    super::completion::defer(handle, 0);
                }
            }
            crate::config::Completion::Thread { delay_us } => {
                super::completion::defer(handle, delay_us.saturating_mul(1000))
            }
        }
    }
}

struct Sink<'a> {
    producer: Option<&'a mut QueueProducer>,
    counts: &'a mut Counts,
    tid: u32,
}

impl RecordSink for Sink<'_> {
    #[inline]
    fn record(&mut self, rec: &PacketRecord) {
        if crate::capture::is_barrier_packet(&rec.raw) {
            self.counts.barriers += 1;
        } else if rec.status == Status::Validated {
            self.counts.validated += 1;
        }
        if rec.status == Status::Rejected {
            self.counts.rejected += 1;
            log_reject(rec);
        }
        if let Some(p) = self.producer.as_deref_mut() {
            // A forked child has no writer thread and must never write into its
            // parent's capture: it stops capturing (counts still kept).
            if !lifecycle::in_forked_child() {
                p.push(rec);
            }
        }
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        sys::now_ns()
    }
    #[inline]
    fn thread_id(&self) -> u32 {
        self.tid
    }
}

/// A rejected packet is logged loudly: its completion signal is never touched,
/// so anything waiting on it waits forever. (Rejects are rare; this is the only
/// formatting the doorbell path ever does.)
#[cold]
fn log_reject(rec: &PacketRecord) {
    let codes: Vec<&str> = rec.reasons.iter().map(|r| r.code()).collect();
    let completion = u64::from_le_bytes(rec.raw[56..64].try_into().unwrap_or([0; 8]));
    let dtype = crate::aql::DecodedPacket::decode(&rec.raw).type_name;
    tracing::warn!(
        "softgpu: queue {} packet {} ({dtype}) rejected: {}; label diagnostic_rejected; completion signal {:#x} left untouched, so a waiter on it will wait forever",
        rec.queue_id,
        rec.packet_index,
        codes.join(", "),
        completion
    );
}

impl VirtualQueue {
    /// A doorbell store: make sure the queue gets drained.
    pub fn kick(&'static self, ctx: &DrainContext) {
        if self.pending.fetch_add(1, Ordering::AcqRel) != 0 {
            return; // the current drainer will see our packets on its next pass
        }
        let mut outcome;
        loop {
            let seen = self.pending.load(Ordering::Acquire);
            let again;
            (outcome, again) = self.drain_once(ctx);
            if again {
                continue;
            }
            if self
                .pending
                .compare_exchange(seen, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                break;
            }
        }
        if let Some(DrainOutcome::BlockedOnBarrier { .. }) = outcome {
            self.register_blocked();
        }
    }

    /// One drain pass. Also returns whether another pass should follow at
    /// once (intercept mode: the pass stopped at its cap, or completed real
    /// signals a barrier may be waiting for).
    fn drain_once(&'static self, ctx: &DrainContext) -> (Option<DrainOutcome>, bool) {
        if self.dead.load(Ordering::Acquire) {
            return (None, false);
        }
        let mut guard = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        let side = &mut *guard;
        let (Some(ring), Some(kernels)) = (side.ring.as_ref(), side.kernels.as_deref_mut()) else {
            return (None, false);
        };
        let signals = RuntimeSignals {
            completion: ctx.completion,
            after: std::cell::RefCell::new(AfterDrain::default()),
        };
        // Over a real runtime, a pass takes at most as many packets as it can
        // hold real completions for, so they are all completed, in order,
        // right after it; the caller runs another pass for the rest.
        let cap = if lifecycle::intercepting() {
            side.state.observed_through + AFTER_DRAIN as u64
        } else {
            u64::MAX
        };
        let stalls_before = side.state.stalls;
        let mut sink = Sink {
            producer: side.producer.as_mut(),
            counts: &mut side.counts,
            tid: sys::gettid(),
        };
        let kernels = std::cell::RefCell::new(kernels);
        let outcome = ctx.processor.drain_with(
            &mut side.state,
            self.queue_id,
            self.agent_index,
            &DrainView { q: self, ring, cap },
            &signals,
            &kernels,
            &mut sink,
        );
        let observed_through = side.state.observed_through;
        if side.state.stalls != stalls_before {
            side.counts.stalls = side.state.stalls;
            tracing::debug!(
                queue = self.queue_id,
                ?outcome,
                "drain stopped at a slot whose type is still INVALID"
            );
        }
        drop(guard);
        // Real completion signals (intercept): decremented by the real
        // runtime now that no lock of ours is held, in processing order.
        let after = signals.after.into_inner();
        if let Some(below) = real::below() {
            for &h in &after.handles[..after.len] {
                below.signal_complete(h);
            }
        }
        // Another pass at once: the pass stopped at its cap, or a barrier
        // may be waiting for a real signal just completed.
        let capped = outcome == DrainOutcome::Idle && observed_through == cap;
        let unblocked = after.len > 0 && matches!(outcome, DrainOutcome::BlockedOnBarrier { .. });
        (Some(outcome), capped || unblocked)
    }

    fn register_blocked(&'static self) {
        if !self.blocked.swap(true, Ordering::AcqRel) {
            BLOCKED.lock().unwrap_or_else(|e| e.into_inner()).push(self);
            BLOCKED_COUNT.fetch_add(1, Ordering::SeqCst);
        }
        super::events::wake();
    }

    /// Packets between the processor's position and the write index.
    fn pending_locked(&self, side: &DrainSide) -> u64 {
        self.slot
            .write_dispatch_id
            .load(Ordering::Acquire)
            .saturating_sub(side.state.observed_through)
    }

    /// Packets published (or reserved) and not processed yet.
    pub fn pending(&self) -> u64 {
        let side = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        self.pending_locked(&side)
    }

    /// Current counters.
    pub fn counts(&self) -> Counts {
        self.drain.lock().unwrap_or_else(|e| e.into_inner()).counts
    }

    /// Destroy: unpublish, wait out any drain in flight, release the ring.
    pub fn destroy(&'static self) {
        if self.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(a) = arena() {
            slot_at(a, self.arena_index)
                .owner
                .store(std::ptr::null_mut(), Ordering::Release);
        }
        if let Some(db) = signals::lookup(self.doorbell) {
            db.doorbell_queue.store(0, Ordering::Release);
        }
        signals::destroy(self.doorbell);
        let mut side = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ring) = side.ring.take() {
            // SAFETY: the drain lock is held and `dead` is set, so no drain can
            // be using the ring, and `ring` (the only record of the mapping) was
            // just taken out. The program must not touch the ring after
            // hsa_queue_destroy, as HSA requires.
            unsafe { sys::unmap(ring.base as *mut u8, ring.bytes) };
        }
        side.kernels = None;
        drop(std::mem::take(
            &mut *self.cu_mask.lock().unwrap_or_else(|e| e.into_inner()),
        ));
        let mut r = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
        r.validated += side.counts.validated;
        r.rejected += side.counts.rejected;
        r.barriers += side.counts.barriers;
        r.stalls += side.counts.stalls;
        drop(r);
        // Packets the program published (or reserved) that were never
        // processed: behind an unsatisfied barrier, or never made valid. The
        // capture records how many (QueueEnd), and is then never complete.
        let pending = self.pending_locked(&side);
        if let Some(p) = side.producer.take() {
            p.end(pending, sys::now_ns());
        }
        if pending > 0 {
            tracing::warn!(
                queue = self.queue_id,
                pending,
                "softgpu: queue {} destroyed with {pending} packet(s) never processed (behind an unsatisfied barrier, or never published)",
                self.queue_id
            );
        }
        drop(side);
        if let Some(a) = arena() {
            a.free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .1
                .push(self.arena_index);
        }
    }
}

/// The number of packets of a cooperative queue. ROCr creates its GWS queue
/// itself, ignoring the size the program asks for: 0x4000 packets in ROCr 6.4
/// (5.2.3 used its minimum, 64). SoftGPU policy: ROCr 6.4's size.
pub const COOPERATIVE_QUEUE_SIZE: u32 = 0x4000;

/// The cooperative queue of each agent (by capture agent index) and how many
/// `hsa_queue_create` calls share it. ROCr has one GWS queue per GPU agent:
/// every cooperative `hsa_queue_create` returns it, and it is destroyed when
/// the last of them is destroyed (the next request makes a fresh one).
static COOPERATIVE: Mutex<Vec<(u32, &'static VirtualQueue, u32)>> = Mutex::new(Vec::new());

/// The agent's cooperative queue, made by `make` when it has none.
pub fn cooperative<E>(
    agent_index: u32,
    make: impl FnOnce() -> Result<&'static VirtualQueue, E>,
) -> Result<&'static VirtualQueue, E> {
    let mut c = COOPERATIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(entry) = c.iter_mut().find(|(a, _, _)| *a == agent_index) {
        entry.2 += 1;
        return Ok(entry.1);
    }
    let q = make()?;
    c.push((agent_index, q, 1));
    Ok(q)
}

/// `hsa_queue_destroy`: a cooperative queue is destroyed with its last user.
pub fn release(q: &'static VirtualQueue) {
    {
        let mut c = COOPERATIVE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = c.iter().position(|(_, cq, _)| std::ptr::eq(*cq, q)) {
            c[i].2 -= 1;
            if c[i].2 > 0 {
                return;
            }
            c.swap_remove(i);
        }
    }
    q.destroy();
}

/// Re-drain every queue blocked on a barrier. Called by the event thread.
/// Returns true if any queue was blocked.
pub fn retry_blocked(ctx: &DrainContext) -> bool {
    if BLOCKED_COUNT.load(Ordering::SeqCst) == 0 {
        return false;
    }
    let list: Vec<&'static VirtualQueue> = {
        let mut b = BLOCKED.lock().unwrap_or_else(|e| e.into_inner());
        BLOCKED_COUNT.store(0, Ordering::SeqCst);
        std::mem::take(&mut *b)
    };
    for q in &list {
        q.blocked.store(false, Ordering::Release);
        q.kick(ctx);
    }
    !list.is_empty()
}

/// `(queue id, packets pending)` for every live queue with packets it has
/// not processed (for the capture's Trailer at exit).
pub fn pending_by_queue() -> Vec<(u64, u64)> {
    (0..MAX_QUEUES)
        .filter_map(lookup_index)
        .map(|q| (q.queue_id, q.pending()))
        .filter(|p| p.1 > 0)
        .collect()
}

/// Totals over every queue, live and destroyed.
pub fn total_counts() -> Counts {
    let mut t = *RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    for i in 0..MAX_QUEUES {
        if let Some(q) = lookup_index(i) {
            let c = q.counts();
            t.validated += c.validated;
            t.rejected += c.rejected;
            t.barriers += c.barriers;
            t.stalls += c.stalls;
        }
    }
    t
}

/// Handle a store to `slot` if it is a doorbell. Returns true if it was.
#[inline]
pub fn doorbell_store(slot: &SignalSlot, ctx: &DrainContext) -> bool {
    let q = slot.doorbell_queue.load(Ordering::Acquire);
    if q == 0 {
        return false;
    }
    if let Some(vq) = lookup_index(q as usize - 1) {
        if vq.doorbell_bounded {
            // The doorbell value is the index of the last packet made ready.
            let v = slot.value.load(Ordering::Acquire);
            vq.rung.fetch_max((v.max(-1) + 1) as u64, Ordering::AcqRel);
        }
        vq.kick(ctx);
    }
    true
}
