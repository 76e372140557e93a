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

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use super::signals::{self, SignalSlot};
use super::{memory, sys};
use crate::abi::{AmdQueue, PacketType};
use crate::aql::{
    DrainOutcome, PacketRecord, Processor, QueueMemory, QueueState, RecordSink, SignalOps, Status,
};
use crate::capture::{KernargSubmit, QueueProducer, Unreadable};
use crate::lifecycle;
use crate::real;

/// Live queues at most at once.
pub const MAX_QUEUES: usize = 1024;
/// Slots in the arena's address range. As for signals, `hsa_queue_t*`
/// addresses are handed out in order and a slot is reused only when the
/// cursor comes round again, after `ARENA_SLOTS - 1` newer queues, so a
/// destroyed queue's pointer is refused instead of naming the next queue.
pub const ARENA_SLOTS: usize = 1 << 16;
const SLOT: usize = 512;
const PAGE: usize = 4096;
const SLOTS_PER_PAGE: usize = PAGE / SLOT;

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
    free: Mutex<Cursor>,
}

/// Allocation state, under the arena lock.
struct Cursor {
    /// Next slot index to try (wraps at `ARENA_SLOTS`).
    next: usize,
    /// Every `VirtualQueue` object ever made (at most `MAX_QUEUES`, the
    /// most ever live at once): a destroyed queue's object is reused by a
    /// later queue, so memory follows the live queues, not how many were
    /// ever made.
    objects: Vec<&'static VirtualQueue>,
    /// Objects of destroyed queues, ready for reuse.
    idle: Vec<&'static VirtualQueue>,
    /// Live slots per arena page (pages with none are given back).
    per_page: Vec<u8>,
}

static ARENA: OnceLock<Option<Arena>> = OnceLock::new();

fn arena() -> Option<&'static Arena> {
    ARENA
        .get_or_init(|| {
            sys::map_forever(ARENA_SLOTS * SLOT).map(|p| Arena {
                base: p as usize,
                free: Mutex::new(Cursor {
                    next: 0,
                    objects: Vec::new(),
                    idle: Vec::new(),
                    per_page: vec![0; ARENA_SLOTS / SLOTS_PER_PAGE],
                }),
            })
        })
        .as_ref()
}

/// Give arena page `page` back to the kernel when none of its slots is live
/// and the cursor is elsewhere (called with the arena lock held).
fn give_back_if_empty(a: &Arena, c: &Cursor, page: usize) {
    if c.per_page[page] == 0 && page != c.next / SLOTS_PER_PAGE {
        // SAFETY: the page is inside the arena mapping and holds only dead
        // slots; QueueSlot is atomics and padding, for which zero bytes are
        // valid (a null owner is a dead slot), and the mapping stays, so a
        // stale reference or handle only ever sees a dead slot.
        unsafe { sys::discard((a.base + page * PAGE) as *mut u8, PAGE) };
    }
}

fn slot_at(a: &Arena, idx: usize) -> &'static QueueSlot {
    debug_assert!(idx < ARENA_SLOTS);
    // SAFETY: the arena is a never-unmapped read-write mapping of
    // ARENA_SLOTS * SLOT bytes; idx < ARENA_SLOTS (checked by callers); the mapping
    // is page aligned and SLOT is a multiple of QueueSlot's alignment. QueueSlot
    // is only atomics and padding, valid for any bytes including the initial zeros.
    unsafe { &*((a.base + idx * SLOT) as *const QueueSlot) }
}

/// The live queue whose `hsa_queue_t*` is `ptr`, or `None`.
#[inline]
pub fn lookup(ptr: u64) -> Option<&'static VirtualQueue> {
    let a = arena()?;
    let off = (ptr as usize).checked_sub(a.base)?;
    if off % SLOT != 0 || off / SLOT >= ARENA_SLOTS {
        return None;
    }
    lookup_index(off / SLOT)
}

/// The live queue in arena slot `idx`.
#[inline]
pub fn lookup_index(idx: usize) -> Option<&'static VirtualQueue> {
    let a = arena()?;
    if idx >= ARENA_SLOTS {
        return None;
    }
    let p = slot_at(a, idx).owner.load(Ordering::Acquire);
    // SAFETY: a non-null owner was published (Release) from a leaked Box in
    // `create`, and VirtualQueue objects are never freed (a destroyed queue's
    // object is reused, never deallocated), so the reference is valid for
    // 'static. Every field that changes on reuse is an atomic or behind a
    // lock, so a stale holder races with nothing non-atomic.
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

/// `void (*callback)(hsa_status_t status, hsa_queue_t *source, void *data)`,
/// the error callback a program gives `hsa_queue_create`.
pub type ErrorCallbackFn = unsafe extern "C" fn(u32, *mut libc::c_void, *mut libc::c_void);

/// A queue's error callback and its data pointer, as the program gave them.
#[derive(Clone, Copy, Debug)]
pub struct ErrorCallback {
    pub func: ErrorCallbackFn,
    pub data: usize,
}

/// Undelivered queue errors a queue holds at most (a fixed array: the
/// doorbell path does not allocate). Only a callback that blocks the event
/// thread lets them pile up; past this many, further ones are counted as
/// lost and logged instead of being called.
const ERROR_RING: usize = 64;

/// Statuses of rejected packets waiting for the event thread to call the
/// queue's error callback with them, in packet order (under the drain lock).
struct ErrorRing {
    statuses: [u32; ERROR_RING],
    len: usize,
    lost: u64,
}

impl Default for ErrorRing {
    fn default() -> Self {
        ErrorRing {
            statuses: [0; ERROR_RING],
            len: 0,
            lost: 0,
        }
    }
}

/// One call of a queue's error callback, for the event thread to make.
#[derive(Clone, Copy, Debug)]
pub struct QueueError {
    /// The `hsa_queue_t*` the callback gets as `source`.
    pub queue: u64,
    /// The queue's id when the error was raised: the call is dropped if the
    /// queue was destroyed meanwhile (its object may serve a new queue).
    pub queue_id: u64,
    pub status: u32,
    pub callback: ErrorCallback,
}

/// Queues with errors waiting for the event thread (a hint: the event
/// thread looks at the queues only when it is nonzero).
static ERRORS_FLAGGED: AtomicU32 = AtomicU32::new(0);

struct DrainSide {
    /// `None` once the queue is destroyed: the cache (about 3 KiB) goes with
    /// the queue, so a program that churns queues does not keep one per queue
    /// it ever made (the `VirtualQueue` itself stays, marked dead).
    kernels: Option<Box<KernelCache>>,
    state: QueueState,
    producer: Option<QueueProducer>,
    counts: Counts,
    ring: Option<Ring>,
    /// Made with the queue (`None` only if it was taken: then the next
    /// dispatch makes one).
    kernarg: Option<Box<memory::KernargCopy>>,
    /// Rejected packets' statuses for the error callback, not yet taken by
    /// the event thread.
    errors: ErrorRing,
}

/// A queue owned by the virtual runtime.
///
/// The object outlives its queue: after `destroy` it is reused by a later
/// `create` (see `Cursor::objects`), so its identity fields are atomics read
/// through accessors.
pub struct VirtualQueue {
    slot: AtomicPtr<QueueSlot>,
    arena_index: AtomicUsize,
    queue_id: AtomicU64,
    agent_index: AtomicU32,
    doorbell: AtomicU64,
    /// `hsa_amd_queue_cu_set_mask`: recorded and reported back; nothing executes.
    pub cu_mask: Mutex<Vec<u32>>,
    /// `hsa_amd_queue_set_priority`: recorded; nothing executes.
    pub priority: AtomicU32,
    /// Consume only up to the highest doorbell value rung, as AMD's packet
    /// processor does, instead of up to the write index. Set when this copy
    /// of SoftGPU stands in for the real runtime below another copy (see
    /// `Runtime::lower`): observe mode relies on the hardware not running
    /// ahead of the doorbells it has been given.
    doorbell_bounded: AtomicBool,
    /// Highest doorbell value rung, plus one (with `doorbell_bounded`).
    rung: AtomicU64,
    pending: AtomicU64,
    dead: AtomicBool,
    blocked: AtomicBool,
    /// The error callback given at creation (read by the event thread only).
    error_callback: Mutex<Option<ErrorCallback>>,
    /// Whether `error_callback` is set (read on the doorbell path).
    has_error_callback: AtomicBool,
    /// Errors in `DrainSide::errors` for the event thread to take.
    errors_flagged: AtomicBool,
    /// Errors raised and not yet called back (or dropped): queued, or taken
    /// by the event thread and not yet returned from. `hsa_queue_destroy`
    /// waits for it to reach 0, as ROCr's queue destructor waits for its
    /// error handler.
    errors_unsent: AtomicU32,
    drain: Mutex<DrainSide>,
}

/// Proof that the holder runs inside a drain pass, with a queue's drain lock
/// held: made only in `VirtualQueue::drain_once`, right after it takes the
/// lock, and dropped before the lock is released. Its field is private to
/// this module, so no other code can make one.
pub struct DrainLocked(());

/// Waits until every drain pass running when it is called has ended: takes
/// each queue object's drain lock in turn (queue objects are never freed, so
/// the list only grows). A queue created after the list is read is created
/// under the arena lock after this call took it, so its passes see whatever
/// the caller did before calling. [`memory::free`] relies on it: a kernarg
/// copy runs only inside a drain pass. Never call it from inside a drain
/// pass (it would wait for its own lock); only the program's free calls it.
pub fn wait_for_drains() {
    let Some(a) = arena() else {
        return;
    };
    let objects = a
        .free
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .objects
        .clone();
    for q in objects {
        drop(q.drain.lock().unwrap_or_else(|e| e.into_inner()));
    }
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
    on_error: Option<ErrorCallback>,
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
    let queue_id = NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed);
    let producer = producer(queue_id);
    let mut c = a.free.lock().unwrap_or_else(|e| e.into_inner());
    if c.objects.len() - c.idle.len() >= MAX_QUEUES {
        drop(c);
        signals::destroy(doorbell);
        // SAFETY: as above, the ring is still private to this function.
        unsafe { sys::unmap(ring_ptr, bytes) };
        return Err(CreateError::OutOfQueues);
    }
    // At most MAX_QUEUES slots are live, so a free one is found within
    // MAX_QUEUES + 1 steps.
    let mut idx = c.next;
    while !slot_at(a, idx).owner.load(Ordering::Acquire).is_null() {
        idx = (idx + 1) % ARENA_SLOTS;
    }
    let leaving = c.next / SLOTS_PER_PAGE;
    c.next = (idx + 1) % ARENA_SLOTS;
    c.per_page[idx / SLOTS_PER_PAGE] += 1;
    if leaving != idx / SLOTS_PER_PAGE {
        give_back_if_empty(a, &c, leaving);
    }
    let slot = slot_at(a, idx);
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
    let side = DrainSide {
        kernels: Some(Box::new(KernelCache::new())),
        state: QueueState::default(),
        producer,
        counts: Counts::default(),
        ring: Some(ring),
        kernarg: Some(Box::default()),
        errors: ErrorRing::default(),
    };
    let q: &'static VirtualQueue = match c.idle.pop() {
        Some(q) => {
            // A destroyed queue's object: it is dead and unpublished, so only
            // stale holders (a blocked list entry, a late caller) can see it,
            // and they see atomics and locks, then a live queue again.
            *q.drain.lock().unwrap_or_else(|e| e.into_inner()) = side;
            q.cu_mask.lock().unwrap_or_else(|e| e.into_inner()).clear();
            q.priority.store(1, Ordering::Relaxed);
            q.rung.store(0, Ordering::Relaxed);
            q
        }
        None => {
            let q: &'static VirtualQueue = Box::leak(Box::new(VirtualQueue {
                slot: AtomicPtr::new(std::ptr::null_mut()),
                arena_index: AtomicUsize::new(0),
                queue_id: AtomicU64::new(0),
                agent_index: AtomicU32::new(0),
                doorbell: AtomicU64::new(0),
                cu_mask: Mutex::new(Vec::new()),
                priority: AtomicU32::new(1),
                doorbell_bounded: AtomicBool::new(false),
                rung: AtomicU64::new(0),
                pending: AtomicU64::new(0),
                dead: AtomicBool::new(true),
                blocked: AtomicBool::new(false),
                error_callback: Mutex::new(None),
                has_error_callback: AtomicBool::new(false),
                errors_flagged: AtomicBool::new(false),
                errors_unsent: AtomicU32::new(0),
                drain: Mutex::new(side),
            }));
            c.objects.push(q);
            q
        }
    };
    q.slot.store(
        slot as *const QueueSlot as *mut QueueSlot,
        Ordering::Relaxed,
    );
    q.arena_index.store(idx, Ordering::Relaxed);
    q.queue_id.store(queue_id, Ordering::Relaxed);
    q.agent_index.store(agent_index, Ordering::Relaxed);
    q.doorbell.store(doorbell, Ordering::Relaxed);
    q.doorbell_bounded
        .store(doorbell_bounded, Ordering::Relaxed);
    *q.error_callback.lock().unwrap_or_else(|e| e.into_inner()) = on_error;
    q.has_error_callback
        .store(on_error.is_some(), Ordering::Relaxed);
    q.errors_flagged.store(false, Ordering::Relaxed);
    q.errors_unsent.store(0, Ordering::Relaxed);
    q.dead.store(false, Ordering::Release);
    slot.owner.store(
        q as *const VirtualQueue as *mut VirtualQueue,
        Ordering::Release,
    );
    drop(c);
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
        let mut w = self.q.slot().write_dispatch_id.load(Ordering::Acquire);
        if self.q.doorbell_bounded.load(Ordering::Relaxed) {
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
        self.q
            .slot()
            .read_dispatch_id
            .store(value, Ordering::Release);
    }
}

/// Signals as seen by the processor.
pub struct RuntimeSignals {
    completion: crate::config::Completion,
    /// Real signals to complete once the drain lock is released. `None`
    /// until the first one (virtual mode never has any), so a drain pass
    /// neither clears nor moves the array.
    after: std::cell::RefCell<Option<AfterDrain>>,
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
    fn may_complete(&self, handle: u64) -> bool {
        match signals::lookup(handle) {
            // A queue's doorbell belongs to its queue: decrementing it would
            // act as a doorbell store the program never made.
            Some(s) => s.doorbell_queue.load(Ordering::Acquire) == 0,
            None => handle != 0 && lifecycle::intercepting(),
        }
    }
    #[inline]
    fn load(&self, handle: u64) -> i64 {
        match signals::lookup(handle) {
            Some(s) => s.value.load(Ordering::Acquire),
            // A real signal (intercept): the real runtime's load. This is the
            // one call into the real runtime made with a lock held (this
            // queue's drain lock); a signal load never calls back into the
            // program or the shim, so it cannot re-enter that lock.
            None if lifecycle::intercepting() => match real::below() {
                // SAFETY: not one of ours, and in intercept mode every other
                // signal a packet names is the real runtime's (the program's
                // HSA contract for the packet).
                Some(b) => unsafe { b.signal_load(handle) },
                None => signals::ERROR_VALUE,
            },
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
                let after = after.get_or_insert_with(AfterDrain::default);
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

/// Whether dispatches' kernel arguments are captured (`SOFTGPU_KERNARGS`).
static KERNARG_CAPTURE: AtomicBool = AtomicBool::new(true);

/// Whether kernel-argument capture is on.
pub fn kernarg_capture() -> bool {
    KERNARG_CAPTURE.load(Ordering::Relaxed)
}

/// Turns kernel-argument capture on or off (at `hsa_init`).
pub fn set_kernarg_capture(on: bool) {
    KERNARG_CAPTURE.store(on, Ordering::Relaxed);
}

struct Sink<'a, 'k> {
    producer: Option<&'a mut QueueProducer>,
    counts: &'a mut Counts,
    tid: u32,
    /// The queue's kernel cache, for each dispatch's kernarg segment size.
    kernels: &'a std::cell::RefCell<&'k mut KernelCache>,
    /// The allocation the queue's kernargs were last found in, and the
    /// buffer they are copied into.
    kernarg: &'a mut memory::KernargCopy,
    queue_id: u64,
    /// Kernel arguments are captured (`SOFTGPU_KERNARGS`), read once a pass.
    kernargs: bool,
    /// Over a real runtime (intercept mode), read once a pass.
    intercepting: bool,
    /// This pass holds the queue's drain lock (for `memory::stage_kernarg`).
    locked: DrainLocked,
    /// Rejects for the queue's error callback (`None`: the queue has none,
    /// or this is a forked child, which has no event thread).
    errors: Option<&'a mut ErrorRing>,
    /// Errors this pass added to `errors`.
    errors_raised: u32,
}

impl Sink<'_, '_> {
    /// Whether this pass's records go to a capture: a producer is set (the
    /// pass leaves it out in a forked child, which has no writer thread and
    /// must never write into its parent's capture: it stops capturing,
    /// counts still kept).
    #[inline]
    fn capturing(&self) -> bool {
        self.producer.is_some()
    }

    /// Pushes the record into the capture; a dispatch with its kernarg
    /// bytes, read now (before its completion is signalled), from memory
    /// this runtime allocated only (virtual mode: compared in place with
    /// the queue's previous block and copied only when they differ), or
    /// from memory the real runtime allocated through the shim from a pool
    /// it says is host memory (intercept mode).
    #[inline]
    fn push(&mut self, producer: &mut QueueProducer, rec: &PacketRecord) {
        use crate::abi::packet_offset as po;
        use crate::aql::KernelTable;
        if crate::abi::PacketType(rec.raw[po::HEADER]) != crate::abi::PacketType::KERNEL_DISPATCH
            || !self.kernargs
        {
            return producer.push(rec);
        }
        let unreadable = |producer: &mut QueueProducer, why| {
            producer.push_with_kernarg(rec, KernargSubmit::Unreadable(why))
        };
        let word = |at: usize| u64::from_le_bytes(rec.raw[at..at + 8].try_into().unwrap_or([0; 8]));
        let (ko, addr) = (word(po::KERNEL_OBJECT), word(po::KERNARG_ADDRESS));
        // The processor has just looked the kernel up; a launch loop
        // repeats it, so its kernarg size is kept with the queue's copy
        // state (a known kernel never changes: kernels are never unloaded).
        let size = match self.kernarg.kernel {
            (last, size) if last == ko && ko != 0 => size,
            _ => match self.kernels.lookup(ko) {
                crate::aql::KernelLookup::Known(k) => {
                    self.kernarg.kernel = (ko, u64::from(k.kernarg_size));
                    u64::from(k.kernarg_size)
                }
                _ => return unreadable(producer, Unreadable::UnknownKernel),
            },
        };
        if size == 0 {
            let bytes = KernargSubmit::Bytes {
                bytes: &[],
                segment_size: 0,
            };
            return producer.push_with_kernarg(rec, bytes);
        }
        if addr == 0 {
            return unreadable(producer, Unreadable::NullAddress);
        }
        let k = &mut *self.kernarg;
        let want = (size as usize).min(k.buf.len());
        if !self.intercepting {
            let (last, last_len) = producer.kernarg_stage();
            return match memory::stage_kernarg(
                &self.locked,
                &mut k.range,
                addr,
                want,
                last,
                last_len,
            ) {
                Ok(memory::Staged::Same(n)) => producer.push_staged(rec, n, size, true),
                Ok(memory::Staged::Copied(n)) => producer.push_staged(rec, n, size, false),
                Err(_) => unreadable(producer, Unreadable::NotKnownReadable),
            };
        }
        // Intercept mode: the kernarg memory is the real runtime's, read only
        // where the pass-through table knows it to be host memory.
        let shard = self.queue_id as usize;
        let Some(below) = real::below() else {
            return unreadable(producer, Unreadable::ModeNotSupported);
        };
        match below.copy_kernarg(&mut k.range, shard, addr, &mut k.buf[..want]) {
            Ok(n) => {
                let bytes = KernargSubmit::Bytes {
                    bytes: &k.buf[..n],
                    segment_size: size,
                };
                producer.push_with_kernarg(rec, bytes)
            }
            Err(_) => unreadable(producer, Unreadable::NotKnownReadable),
        }
    }
}

impl RecordSink for Sink<'_, '_> {
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
            if let (Some(ring), Some(status)) =
                (self.errors.as_deref_mut(), rec.reasons.queue_error())
            {
                // Called later by the event thread, never here on the
                // doorbell store (ROCr calls it from its own event thread).
                if ring.len < ERROR_RING {
                    ring.statuses[ring.len] = status.0;
                    ring.len += 1;
                    self.errors_raised += 1;
                } else {
                    ring.lost += 1;
                }
            }
        }
        if let Some(p) = self.producer.take() {
            self.push(p, rec);
            self.producer = Some(p);
        }
    }
    /// A stamp as the capture wants it (TSC ticks where the kernel's clock
    /// is the TSC: the writer converts them to ns). Only read when capturing.
    #[inline]
    fn now_ns(&self) -> u64 {
        match self.producer.as_deref() {
            Some(p) => p.now(),
            None => sys::now_ns(),
        }
    }
    /// Only the capture reads the times: with capture off (or in a forked
    /// child) the records are only counted, and the doorbell path reads no
    /// clock.
    #[inline]
    fn wants_times(&self) -> bool {
        self.capturing()
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
        if let Some(DrainOutcome::BlockedOnBarrier { .. }) =
            drain_while_kicked(&self.pending, || self.drain_once(ctx))
        {
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
        if let Some(p) = side.producer.as_ref() {
            // The ring slot's cache lines come over while the packet is parsed.
            p.prepare();
        }
        let (Some(ring), Some(kernels)) = (side.ring.as_ref(), side.kernels.as_deref_mut()) else {
            return (None, false);
        };
        let signals = RuntimeSignals {
            completion: ctx.completion,
            after: std::cell::RefCell::new(None),
        };
        // Over a real runtime, a pass takes at most as many packets as it can
        // hold real completions for, so they are all completed, in order,
        // right after it; the caller runs another pass for the rest.
        let intercepting = lifecycle::intercepting();
        let cap = if intercepting {
            side.state.observed_through + AFTER_DRAIN as u64
        } else {
            u64::MAX
        };
        let stalls_before = side.state.stalls;
        let kernels = std::cell::RefCell::new(kernels);
        let mut sink = Sink {
            producer: side
                .producer
                .as_mut()
                .filter(|_| !lifecycle::in_forked_child()),
            counts: &mut side.counts,
            tid: sys::gettid(),
            kernels: &kernels,
            kernarg: side.kernarg.get_or_insert_with(Box::default),
            queue_id: self.queue_id(),
            kernargs: KERNARG_CAPTURE.load(Ordering::Relaxed),
            intercepting,
            // The drain lock is held (`guard`) until after `sink` is gone.
            locked: DrainLocked(()),
            errors: Some(&mut side.errors).filter(|_| {
                self.has_error_callback.load(Ordering::Relaxed) && !lifecycle::in_forked_child()
            }),
            errors_raised: 0,
        };
        let outcome = ctx.processor.drain_with(
            &mut side.state,
            self.queue_id(),
            self.agent_index(),
            &DrainView { q: self, ring, cap },
            &signals,
            &kernels,
            &mut sink,
        );
        let errors_raised = sink.errors_raised;
        let observed_through = side.state.observed_through;
        if side.state.stalls != stalls_before {
            side.counts.stalls = side.state.stalls;
            tracing::debug!(
                queue = self.queue_id(),
                ?outcome,
                "drain stopped at a slot whose type is still INVALID"
            );
        }
        drop(guard);
        if errors_raised != 0 {
            self.flag_errors(errors_raised);
        }
        // Real completion signals (intercept): decremented by the real
        // runtime now that no lock of ours is held, in processing order.
        let after = signals.after.borrow();
        let completed = after.as_ref().map_or(&[][..], |a| &a.handles[..a.len]);
        if let (Some(below), false) = (real::below(), completed.is_empty()) {
            for &h in completed {
                // SAFETY: completion signals that are not the shim's. In
                // intercept mode they are the real runtime's, by the program's
                // HSA contract for the packet. Shim queues exist only in
                // virtual and intercept mode (observe drains the real
                // runtime's queues and completes nothing), and in virtual mode
                // no real runtime is resolved, so `signal_complete` calls
                // nothing.
                unsafe { below.signal_complete(h) };
            }
        }
        // Another pass at once: the pass stopped at its cap, or a barrier
        // may be waiting for a real signal just completed.
        let capped = outcome == DrainOutcome::Idle && observed_through == cap;
        let unblocked =
            !completed.is_empty() && matches!(outcome, DrainOutcome::BlockedOnBarrier { .. });
        (Some(outcome), capped || unblocked)
    }

    /// Rejects raised queue errors: hand them to the event thread (cold).
    #[cold]
    fn flag_errors(&self, n: u32) {
        self.errors_unsent.fetch_add(n, Ordering::SeqCst);
        if !self.errors_flagged.swap(true, Ordering::AcqRel) {
            ERRORS_FLAGGED.fetch_add(1, Ordering::SeqCst);
        }
        super::events::wake();
    }

    /// Errors raised on this queue not yet called back.
    pub fn errors_unsent(&self) -> u32 {
        self.errors_unsent.load(Ordering::SeqCst)
    }

    /// One error called back (or dropped) by the event thread.
    pub fn error_sent(&self) {
        let _ = self
            .errors_unsent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    fn register_blocked(&'static self) {
        if !self.blocked.swap(true, Ordering::AcqRel) {
            BLOCKED.lock().unwrap_or_else(|e| e.into_inner()).push(self);
            BLOCKED_COUNT.fetch_add(1, Ordering::SeqCst);
        }
        super::events::wake();
    }

    /// Packets published or reserved and not processed: the slots between
    /// the processor's position and the write index. A write index more than
    /// a ring ahead reserves nothing the ring can hold: a producer waits for
    /// space, so only a store by hand puts it there (rocrtst's
    /// Queue_LoadStore_Write_Index_ConcurrentTest stores UINT64_MAX, which ROCr
    /// accepts silently); then only the slots whose header is published count.
    fn pending_locked(&self, side: &DrainSide) -> u64 {
        let from = side.state.observed_through;
        let reserved = self
            .slot()
            .write_dispatch_id
            .load(Ordering::Acquire)
            .saturating_sub(from);
        let Some(ring) = side.ring.as_ref() else {
            return reserved;
        };
        if reserved <= ring.size {
            return reserved;
        }
        (0..ring.size)
            .filter(|i| {
                ring_header(ring, from.wrapping_add(*i)).load(Ordering::Acquire) as u16 & 0xff
                    != PacketType::INVALID.0 as u16
            })
            .count() as u64
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

    /// The `hsa_queue_t` (arena slot) of this queue.
    #[inline]
    pub fn slot(&self) -> &'static QueueSlot {
        let p = self.slot.load(Ordering::Relaxed);
        // SAFETY: `slot` always holds a pointer into the never-unmapped arena
        // (set in `create` before the object is published, never null once
        // published); QueueSlot is atomics only, valid for any bytes.
        unsafe { &*p }
    }

    /// The queue id (capture and `hsa_queue_t::id`).
    #[inline]
    pub fn queue_id(&self) -> u64 {
        self.queue_id.load(Ordering::Relaxed)
    }

    /// The capture index of the queue's agent.
    #[inline]
    pub fn agent_index(&self) -> u32 {
        self.agent_index.load(Ordering::Relaxed)
    }

    /// The doorbell signal's handle.
    #[inline]
    pub fn doorbell(&self) -> u64 {
        self.doorbell.load(Ordering::Relaxed)
    }

    /// Whether the queue is live (created and not destroyed).
    #[inline]
    pub fn is_live(&self) -> bool {
        !self.dead.load(Ordering::Acquire)
    }

    /// Destroy: unpublish, wait out any drain in flight, release the ring,
    /// and keep the object for a later queue.
    pub fn destroy(&'static self) {
        if self.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        let idx = self.arena_index.load(Ordering::Relaxed);
        if let Some(a) = arena() {
            slot_at(a, idx)
                .owner
                .store(std::ptr::null_mut(), Ordering::Release);
        }
        let doorbell = self.doorbell();
        if let Some(db) = signals::lookup(doorbell) {
            db.doorbell_queue.store(0, Ordering::Release);
        }
        signals::destroy(doorbell);
        let mut side = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        // Packets the program published or reserved that were never
        // processed: behind an unsatisfied barrier, or never made valid (read
        // before the ring is unmapped: its headers may be needed). The capture
        // records how many (QueueEnd), and is then never complete.
        let pending = self.pending_locked(&side);
        if let Some(ring) = side.ring.take() {
            // SAFETY: the drain lock is held and `dead` is set, so no drain can
            // be using the ring, and `ring` (the only record of the mapping) was
            // just taken out. The program must not touch the ring after
            // hsa_queue_destroy, as HSA requires.
            unsafe { sys::unmap(ring.base as *mut u8, ring.bytes) };
        }
        side.kernels = None;
        let unsent = side.errors.len;
        side.errors = ErrorRing::default();
        self.errors_flagged.store(false, Ordering::Release);
        if unsent > 0 {
            self.errors_unsent
                .fetch_sub(unsent as u32, Ordering::SeqCst);
            tracing::warn!(
                queue = self.queue_id(),
                unsent,
                "softgpu: queue {} destroyed before its error callback was called for {unsent} rejected packet(s)",
                self.queue_id()
            );
        }
        drop(std::mem::take(
            &mut *self.cu_mask.lock().unwrap_or_else(|e| e.into_inner()),
        ));
        let mut r = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
        r.validated += side.counts.validated;
        r.rejected += side.counts.rejected;
        r.barriers += side.counts.barriers;
        r.stalls += side.counts.stalls;
        drop(r);
        side.counts = Counts::default();
        if let Some(p) = side.producer.take() {
            p.end(pending, sys::now_ns());
        }
        if pending > 0 {
            tracing::warn!(
                queue = self.queue_id(),
                pending,
                "softgpu: queue {} destroyed with {pending} packet(s) never processed (behind an unsatisfied barrier, or never published)",
                self.queue_id()
            );
        }
        drop(side);
        if let Some(a) = arena() {
            let mut c = a.free.lock().unwrap_or_else(|e| e.into_inner());
            let page = idx / SLOTS_PER_PAGE;
            c.per_page[page] -= 1;
            give_back_if_empty(a, &c, page);
            c.idle.push(self);
        }
    }
}

/// The kick protocol over a queue's `pending` counter: the caller that moves
/// it from 0 runs `pass` until no kick arrived during the last one; everyone
/// else returns at once. If a pass panics, the guard puts `pending` back to 0
/// as the panic unwinds, so the next doorbell drains again (a counter left
/// set would make every later kick return at once: a queue that never drains).
fn drain_while_kicked(
    pending: &AtomicU64,
    mut pass: impl FnMut() -> (Option<DrainOutcome>, bool),
) -> Option<DrainOutcome> {
    struct Reset<'a>(&'a AtomicU64);
    impl Drop for Reset<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.store(0, Ordering::Release);
            }
        }
    }
    if pending.fetch_add(1, Ordering::AcqRel) != 0 {
        return None; // the current drainer will see our packets on its next pass
    }
    let _reset = Reset(pending);
    loop {
        let seen = pending.load(Ordering::Acquire);
        let (outcome, again) = pass();
        if again {
            continue;
        }
        if pending
            .compare_exchange(seen, 0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return outcome;
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

/// The queue errors waiting to be called back, taken off their queues in
/// packet order (by the event thread, which calls them with no lock held).
pub fn take_errors() -> Vec<QueueError> {
    if ERRORS_FLAGGED.swap(0, Ordering::SeqCst) == 0 {
        return Vec::new();
    }
    let Some(a) = arena() else {
        return Vec::new();
    };
    let objects = a
        .free
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .objects
        .clone();
    let mut out = Vec::new();
    for q in objects {
        if !q.errors_flagged.swap(false, Ordering::AcqRel) {
            continue;
        }
        let callback = *q.error_callback.lock().unwrap_or_else(|e| e.into_inner());
        let mut side = q.drain.lock().unwrap_or_else(|e| e.into_inner());
        let ring = std::mem::take(&mut side.errors);
        drop(side);
        if ring.lost > 0 {
            tracing::warn!(
                queue = q.queue_id(),
                lost = ring.lost,
                "softgpu: queue {}: {} rejected packet(s) beyond {ERROR_RING} waiting for the error callback were not called back",
                q.queue_id(),
                ring.lost
            );
        }
        let Some(callback) = callback.filter(|_| q.is_live()) else {
            for _ in 0..ring.len {
                q.error_sent();
            }
            continue;
        };
        for &status in &ring.statuses[..ring.len] {
            out.push(QueueError {
                queue: q.slot() as *const QueueSlot as u64,
                queue_id: q.queue_id(),
                status,
                callback,
            });
        }
    }
    out
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
    live_queues()
        .into_iter()
        .map(|q| (q.queue_id(), q.pending()))
        .filter(|p| p.1 > 0)
        .collect()
}

/// Every live queue.
pub fn live_queues() -> Vec<&'static VirtualQueue> {
    let Some(a) = arena() else {
        return Vec::new();
    };
    let c = a.free.lock().unwrap_or_else(|e| e.into_inner());
    c.objects.iter().copied().filter(|q| q.is_live()).collect()
}

/// Totals over every queue, live and destroyed.
pub fn total_counts() -> Counts {
    let mut t = *RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    for q in live_queues() {
        {
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
        if vq.doorbell_bounded.load(Ordering::Relaxed) {
            // The doorbell value is the index of the last packet made ready.
            let v = slot.value.load(Ordering::Acquire);
            vq.rung.fetch_max((v.max(-1) + 1) as u64, Ordering::AcqRel);
        }
        vq.kick(ctx);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A queue, and a fresh 256-byte allocation of this runtime filled with
    /// `fill`.
    fn queue_and_block(fill: u8) -> (&'static VirtualQueue, *mut u8) {
        use crate::runtime::agents::PoolKind;
        use crate::runtime::memory::{self, AllocApi};
        let q = create(64, 0, 1, false, None, |_| None).expect("a queue");
        let p =
            memory::allocate(256, PoolKind::CpuFine, u64::MAX, u64::MAX, AllocApi::Pool).unwrap();
        // SAFETY: `p` is a fresh 256-byte allocation of ours.
        unsafe { std::ptr::write_bytes(p, fill, 256) };
        (q, p)
    }

    #[test]
    fn a_free_waits_for_a_drain_pass_that_may_be_copying_its_kernargs() {
        use crate::runtime::memory::{self, KernargRange};
        let (q, p) = queue_and_block(0x5a);
        let addr = p as u64;
        let freed = std::sync::atomic::AtomicBool::new(false);
        let mut cache = KernargRange::default();
        let mut out = [0u8; 64];
        std::thread::scope(|t| {
            // A drain pass in progress: the queue's drain lock is held.
            let guard = q.drain.lock().unwrap();
            let locked = DrainLocked(());
            assert_eq!(
                memory::stage_kernarg(&locked, &mut cache, addr, 64, &mut out, None),
                Ok(memory::Staged::Copied(64))
            );
            let freer = t.spawn(|| {
                assert!(memory::free(addr as usize));
                freed.store(true, Ordering::SeqCst);
            });
            // The free has removed the allocation, but must not return (nor
            // deallocate) while this pass may still copy from it.
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert!(
                !freed.load(Ordering::SeqCst),
                "free returned during a drain pass"
            );
            assert_eq!(out, [0x5a; 64]);
            // A copy that starts after the free took the allocation out sees
            // the new epoch and finds nothing, in this pass or a later one.
            assert_eq!(
                memory::stage_kernarg(&locked, &mut cache, addr, 64, &mut out, Some(64)),
                Err(memory::KernargReadError::NotOurs)
            );
            drop(guard);
            freer.join().unwrap();
        });
        assert!(freed.load(Ordering::SeqCst));
        q.destroy();
    }

    #[test]
    fn a_staged_kernarg_copy_compares_in_place_and_copies_only_what_changed() {
        use crate::runtime::memory::{self, KernargRange, Staged};
        let (q, p) = queue_and_block(0x11);
        let addr = p as u64;
        let mut cache = KernargRange::default();
        let mut last = [0u8; 128];
        {
            let _guard = q.drain.lock().unwrap();
            let locked = DrainLocked(());
            let stage = |cache: &mut KernargRange, last: &mut [u8], at: u64, want, len| {
                memory::stage_kernarg(&locked, cache, at, want, last, len)
            };
            // No previous block: copied.
            assert_eq!(
                stage(&mut cache, &mut last, addr, 48, None),
                Ok(Staged::Copied(48))
            );
            assert_eq!(last[..48], [0x11; 48]);
            assert_eq!(last[48..], [0; 80], "only the bytes read are written");
            // The same bytes again, previous length 48: nothing copied.
            last[60] = 0xee;
            assert_eq!(
                stage(&mut cache, &mut last, addr, 48, Some(48)),
                Ok(Staged::Same(48))
            );
            assert_eq!(last[60], 0xee);
            // A previous block of another length is never taken as the same.
            assert_eq!(
                stage(&mut cache, &mut last, addr, 40, Some(48)),
                Ok(Staged::Copied(40))
            );
            // One byte changed in the program's memory: copied again.
            // SAFETY: inside the allocation.
            unsafe { *p.add(47) = 0x22 };
            assert_eq!(
                stage(&mut cache, &mut last, addr, 48, Some(48)),
                Ok(Staged::Copied(48))
            );
            assert_eq!(last[47], 0x22);
            // Cut where the allocation ends; `want` is capped at the buffer.
            assert_eq!(
                stage(&mut cache, &mut last, addr + 240, 48, None),
                Ok(Staged::Copied(16))
            );
            assert_eq!(
                stage(&mut cache, &mut last, addr, 4096, Some(64)),
                Ok(Staged::Copied(128))
            );
            // Blocks of other lengths, whole words or not: a change in the
            // first byte or the last is seen, and the copy takes it.
            for len in [8usize, 16, 24, 64, 12, 72] {
                assert_eq!(
                    stage(&mut cache, &mut last, addr, len, None),
                    Ok(Staged::Copied(len))
                );
                assert_eq!(
                    stage(&mut cache, &mut last, addr, len, Some(len)),
                    Ok(Staged::Same(len))
                );
                // SAFETY: inside the allocation.
                unsafe { *p.add(len - 1) ^= 0xff };
                assert_eq!(
                    stage(&mut cache, &mut last, addr, len, Some(len)),
                    Ok(Staged::Copied(len)),
                    "{len}"
                );
                // SAFETY: as above.
                assert_eq!(last[len - 1], unsafe { *p.add(len - 1) });
                // SAFETY: as above.
                unsafe { *p.add(0) ^= 0x01 };
                assert_eq!(
                    stage(&mut cache, &mut last, addr, len, Some(len)),
                    Ok(Staged::Copied(len)),
                    "{len}"
                );
            }
            // Memory that is not this runtime's: an error, nothing written.
            last = [0x33; 128];
            assert_eq!(
                stage(&mut cache, &mut last, 0x10, 48, Some(48)),
                Err(memory::KernargReadError::NotOurs)
            );
            assert_eq!(last, [0x33; 128]);
        }
        assert!(memory::free(addr as usize));
        q.destroy();
    }

    #[test]
    fn a_panic_inside_a_drain_pass_leaves_the_queue_drainable() {
        let pending = AtomicU64::new(0);
        let r = std::panic::catch_unwind(|| {
            drain_while_kicked(&pending, || panic!("a drain pass fails"))
        });
        assert!(r.is_err());
        assert_eq!(pending.load(Ordering::Acquire), 0, "pending left set");
        // The next kick drains again.
        let mut passes = 0;
        drain_while_kicked(&pending, || {
            passes += 1;
            (Some(DrainOutcome::Idle), false)
        });
        assert_eq!(passes, 1);
        assert_eq!(pending.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_kick_during_a_pass_makes_the_drainer_pass_again() {
        let pending = AtomicU64::new(0);
        let mut passes = 0;
        drain_while_kicked(&pending, || {
            passes += 1;
            if passes == 1 {
                // Another thread rings meanwhile; it returns at once.
                assert!(drain_while_kicked(&pending, || unreachable!()).is_none());
            }
            (Some(DrainOutcome::Idle), false)
        });
        assert_eq!(passes, 2);
    }
}
