//! `observe` mode: the real runtime's queues stay, and each doorbell store to
//! one of them first captures the packets it makes ready, then is forwarded
//! (see [`Observed::ring`] for the exact rule).
//!
//! `hsa_queue_create` is forwarded and the queue it returns is registered
//! here (its `hsa_queue_t`: ring base, size, id and doorbell handle). A store
//! to a registered doorbell captures the packets that are ready, in index
//! order. The shim then forwards the highest index it has captured as the
//! doorbell value, which may be lower than the program's value. So the real
//! packet processor, which consumes only up to the doorbell value, never sees
//! a packet the shim has not captured, even when several producers publish
//! out of order.
//!
//! A kernel dispatch's kernarg bytes are copied while its packet is captured,
//! before the doorbell is forwarded, so they are the bytes the kernel will
//! read; only memory the pass-through allocation table knows to be host
//! memory is read (`super::passthrough`), anything else is recorded as
//! `not_known_readable`.
//!
//! Packets are classified with the same checks as a drain
//! ([`crate::aql::Processor::classify`]) but never completed, invalidated or
//! waited on: the real runtime does that. The forwarded doorbell store is the
//! one call into the real runtime made with a queue's capture lock held. It
//! keeps the doorbell values the real runtime sees increasing, and a doorbell
//! store cannot call back into the shim.
//!
//! Gap (documented in DESIGN.md): a program that rings a doorbell by writing
//! the hardware doorbell register directly, not through `hsa_signal_store_*`,
//! is not seen at that moment; its packets are captured at the next store.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU16, AtomicU64, AtomicUsize, Ordering};

use crate::abi::{AmdQueue, PacketType};
use crate::aql::{KernelLookup, KernelTable, PacketRecord, Status};
use crate::capture::{KernargSubmit, QueueProducer, Unreadable};
use crate::runtime;

const MAX_OBSERVED: usize = 1024;

pub use crate::real::ObservedCounts;

struct Side {
    /// Next index to capture: everything below it is captured.
    cursor: u64,
    /// Highest doorbell value the program has rung (a packet index).
    max_rung: Option<u64>,
    /// Highest doorbell value forwarded to the real runtime.
    forwarded: Option<u64>,
    producer: Option<QueueProducer>,
    counts: ObservedCounts,
    /// The pass-through allocation this queue's kernargs were last found in,
    /// and the buffer they are copied into (made with the registration, so
    /// the doorbell path allocates nothing).
    kernarg: Box<runtime::memory::KernargCopy>,
    /// The last kernel dispatched: `(kernel_object, kernarg_segment_size)`.
    last_kernel: (u64, u32),
    /// The last kernel looked up for classification (kernels are never
    /// unloaded, so a hit never goes stale): a launch loop reads the global
    /// kernel table once, not at every packet.
    last_lookup: Option<(u64, crate::aql::KernelInfo)>,
    /// The last packet classified and its verdict (see [`VerdictMemo`]).
    last_verdict: Option<VerdictMemo>,
}

/// A packet's classification depends on its bytes, the agent and processor
/// (fixed per queue) and the kernel table, nothing else (observe mode checks
/// no signal). A launch loop's next packet differs from the last only in its
/// kernarg address: when the rest of its bytes, whether that address is null
/// and whether it is 16-byte aligned are the same, and the kernel table has
/// not changed since, its verdict is the last one's.
#[derive(Clone, Copy)]
struct VerdictMemo {
    /// The packet's 8 words with the kernarg address word cleared.
    words: [u64; 8],
    /// Bit 0: kernarg address null; bit 1: not 16-byte aligned.
    kernarg: u8,
    /// The kernel table's change number read before the classification.
    kernels: u64,
    status: Status,
    reasons: crate::aql::ReasonSet,
}

impl VerdictMemo {
    fn key(raw: &[u8; 64]) -> ([u64; 8], u8) {
        let mut words = [0u64; 8];
        for (w, c) in words.iter_mut().zip(raw.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            *w = u64::from_le_bytes(b);
        }
        let word = crate::abi::packet_offset::KERNARG_ADDRESS / 8;
        let addr = words[word];
        words[word] = 0;
        (words, u8::from(addr == 0) | (u8::from(addr % 16 != 0) << 1))
    }
}

/// One real queue being observed.
struct Observed {
    queue: usize,
    doorbell: u64,
    base: usize,
    size: u64,
    id: u64,
    agent_index: u32,
    dead: AtomicBool,
    side: Mutex<Side>,
}

static TABLE: [AtomicPtr<Observed>; MAX_OBSERVED] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_OBSERVED];
static HIGH: AtomicUsize = AtomicUsize::new(0);
static RETIRED: Mutex<ObservedCounts> = Mutex::new(ObservedCounts {
    dispatches: 0,
    rejected: 0,
    barriers: 0,
});

/// Register the real queue at `queue` (an `hsa_queue_t*` the real runtime
/// just returned for the GPU agent with capture index `agent_index`).
///
/// # Safety
/// `queue` is null, or the `hsa_queue_t*` a successful `hsa_queue_create` of
/// the real runtime returned, not yet destroyed: its header is readable now,
/// and its ring (`base_address`, `size` packets) stays readable until
/// [`unregister`] is called for it, which `hsa_queue_destroy` does before the
/// real runtime frees the queue.
pub unsafe fn register(queue: *mut libc::c_void, agent_index: u32) {
    if queue.is_null() {
        return;
    }
    let q = queue as *const AmdQueue;
    // SAFETY: by this function's contract `queue` is a live `hsa_queue_t*`
    // from the real runtime, whose header (the first field of amd_queue_t)
    // is readable. We read its four plain fields once.
    let (base, doorbell, size, id) = unsafe {
        let h = &(*q).hsa_queue;
        (
            h.base_address as usize,
            h.doorbell_signal.handle,
            h.size as u64,
            h.id,
        )
    };
    if base == 0 || doorbell == 0 || !size.is_power_of_two() {
        tracing::warn!(
            "softgpu: observe: queue {queue:p} has an unusable ring (base {base:#x}, size {size}); it will not be captured"
        );
        return;
    }
    let producer = runtime::get().ok().and_then(|rt| {
        rt.capture
            .as_ref()
            .map(|c| c.register_queue(id, agent_index, size as u32, runtime::sys::now_ns()))
    });
    let obs = Box::leak(Box::new(Observed {
        queue: queue as usize,
        doorbell,
        base,
        size,
        id,
        agent_index,
        dead: AtomicBool::new(false),
        side: Mutex::new(Side {
            cursor: 0,
            max_rung: None,
            forwarded: None,
            producer,
            counts: ObservedCounts::default(),
            kernarg: Box::default(),
            last_kernel: (0, 0),
            last_lookup: None,
            last_verdict: None,
        }),
    }));
    for (i, slot) in TABLE.iter().enumerate() {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                obs,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            HIGH.fetch_max(i + 1, Ordering::AcqRel);
            tracing::debug!(queue = id, "softgpu: observing real queue {queue:p}");
            return;
        }
    }
    tracing::error!(
        "softgpu: observe: more than {MAX_OBSERVED} live queues; queue {id} is not captured"
    );
}

/// The registered queues, with their table slots.
fn live() -> impl Iterator<Item = (&'static AtomicPtr<Observed>, &'static Observed)> {
    let n = HIGH.load(Ordering::Acquire);
    TABLE[..n].iter().filter_map(|slot| {
        let p = slot.load(Ordering::Acquire);
        // SAFETY: entries are leaked boxes, never freed, so a non-null `p`
        // stays valid for 'static.
        (!p.is_null()).then(|| (slot, unsafe { &*p }))
    })
}

/// Stop observing the queue at `queue` (before it is destroyed).
pub fn unregister(queue: *mut libc::c_void) {
    for (slot, obs) in live() {
        if obs.queue == queue as usize && !obs.dead.swap(true, Ordering::AcqRel) {
            let mut side = obs.side.lock().unwrap_or_else(|e| e.into_inner());
            let mut r = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
            r.dispatches += side.counts.dispatches;
            r.rejected += side.counts.rejected;
            r.barriers += side.counts.barriers;
            drop(r);
            let pending = obs.write_index().saturating_sub(side.cursor);
            if let Some(p) = side.producer.take() {
                p.end(pending, runtime::sys::now_ns());
            }
            drop(side);
            slot.store(std::ptr::null_mut(), Ordering::Release);
            return;
        }
    }
}

/// A doorbell-capable operation on signal `handle`. When `handle` is the
/// doorbell of an observed queue, the packets it makes ready are captured and
/// `forward` is called to pass the operation on (see [`Observed::ring`]); the
/// return value is then true. False: not an observed doorbell, nothing done.
/// `value` is the value a store writes, `None` for read-modify-writes.
#[inline]
pub fn ring(handle: u64, value: Option<i64>, forward: impl FnOnce(Option<i64>)) -> bool {
    for (_, obs) in live() {
        if obs.doorbell == handle && !obs.dead.load(Ordering::Acquire) {
            obs.ring(value, forward);
            return true;
        }
    }
    false
}

/// The kernel table as a queue's capture sees it: the global table behind
/// the queue's one-entry cache.
struct Kernels<'a>(std::cell::RefCell<&'a mut Option<(u64, crate::aql::KernelInfo)>>);

impl KernelTable for Kernels<'_> {
    fn lookup(&self, kernel_object: u64) -> KernelLookup {
        let mut last = self.0.borrow_mut();
        if let Some((ko, k)) = **last {
            if ko == kernel_object {
                return KernelLookup::Known(k);
            }
        }
        match runtime::executables::kernel_info(kernel_object) {
            Some(k) => {
                **last = Some((kernel_object, k));
                KernelLookup::Known(k)
            }
            None => KernelLookup::Unknown,
        }
    }
}

impl Observed {
    fn header(&self, index: u64) -> &AtomicU16 {
        let off = ((index & (self.size - 1)) * 64) as usize;
        // SAFETY: the ring is `size` 64-byte slots starting at `base`, owned
        // by the real runtime and live until hsa_queue_destroy (which
        // unregisters us first); the masked index keeps us inside it, and the
        // 64-byte slot start is 2-byte aligned. The producer publishes the
        // header with an atomic release store, which an atomic view pairs with.
        unsafe { &*((self.base + off) as *const AtomicU16) }
    }

    fn write_index(&self) -> u64 {
        let off = std::mem::offset_of!(AmdQueue, write_dispatch_id);
        // SAFETY: ROCr's hsa_queue_t is the head of its amd_queue_t (the
        // pinned layout in abi.rs), so the write index lives at this offset
        // from the queue pointer, 8-byte aligned, and the producer updates it
        // atomically.
        unsafe { (*((self.queue + off) as *const AtomicU64)).load(Ordering::Acquire) }
    }

    /// Capture, then forward. A store of `v` raises the highest index rung;
    /// every published packet from the cursor up to `min(that + 1,
    /// write_index)` is captured, in order, stopping at the first slot whose
    /// header is still INVALID. Then, for a store, the value forwarded is the
    /// last index captured, not `v`. The packet processor consumes only up to
    /// the doorbell value it is given, so it never reaches a packet before
    /// the shim has captured it. Multiple producers can publish out of order;
    /// a packet published after a later one was rung is captured, and only
    /// then rung, when its own producer rings. A store that would not raise
    /// the forwarded value is not forwarded. A read-modify-write is bounded by
    /// the write index and forwarded as it is. Forwarding happens with this
    /// queue's lock held, so the doorbell values the real runtime sees never
    /// decrease. A doorbell store does not call back into the shim.
    fn ring(&self, value: Option<i64>, forward: impl FnOnce(Option<i64>)) {
        let Ok(rt) = runtime::get() else {
            return forward(None);
        };
        let mut side = self.side.lock().unwrap_or_else(|e| e.into_inner());
        let side = &mut *side;
        if self.dead.load(Ordering::Acquire) {
            return forward(None);
        }
        if let Some(p) = side.producer.as_ref() {
            // The ring slot's cache lines come over while the packet is read.
            p.prepare();
        }
        let write = self.write_index();
        let rung = match value {
            Some(v) if v >= 0 => Some(v as u64),
            Some(_) => None,
            None => write.checked_sub(1),
        };
        side.max_rung = side.max_rung.max(rung);
        let end = side.max_rung.map_or(0, |r| write.min(r + 1));
        let tid = runtime::sys::gettid();
        while side.cursor < end {
            let index = side.cursor;
            // Acquire pairs with the producer's release store of the header.
            let header = self.header(index).load(Ordering::Acquire);
            if PacketType((header & 0xff) as u8) == PacketType::INVALID {
                break;
            }
            let mut raw = [0u8; 64];
            let off = ((index & (self.size - 1)) * 64) as usize;
            // SAFETY: the 64 bytes at `off` are inside the ring (masked
            // index); the producer published them before the header we just
            // acquired, and the real runtime cannot consume the slot before a
            // doorbell value covering it is forwarded, which only happens
            // below, after this copy. We copy the bytes out, never holding a
            // reference into the ring.
            unsafe {
                std::ptr::copy_nonoverlapping((self.base + off) as *const u8, raw.as_mut_ptr(), 64)
            };
            // The times go only into a capture record: with capture off the
            // clock is not read (the record is counted, never written).
            let now = side.producer.as_ref().map_or(0, |p| p.now());
            let (words, kernarg_bits) = VerdictMemo::key(&raw);
            let table = runtime::executables::kernels_generation();
            let (status, reasons) = match side.last_verdict {
                Some(m) if m.words == words && m.kernarg == kernarg_bits && m.kernels == table => {
                    (m.status, m.reasons)
                }
                _ => {
                    let kernels = Kernels(std::cell::RefCell::new(&mut side.last_lookup));
                    let (status, reasons) =
                        rt.ctx.processor.classify(&raw, self.agent_index, &kernels);
                    side.last_verdict = Some(VerdictMemo {
                        words,
                        kernarg: kernarg_bits,
                        kernels: table,
                        status,
                        reasons,
                    });
                    (status, reasons)
                }
            };
            let rec = PacketRecord {
                queue_id: self.id,
                packet_index: index,
                raw,
                status,
                reasons,
                observed_ns: now,
                done_ns: now,
                thread: tid,
            };
            if crate::capture::is_barrier_packet(&raw) {
                side.counts.barriers += 1;
            } else {
                side.counts.dispatches += 1;
            }
            if status == Status::Rejected {
                side.counts.rejected += 1;
            }
            if let Some(p) = side.producer.as_mut() {
                if !crate::lifecycle::in_forked_child() {
                    if crate::abi::PacketType(raw[crate::abi::packet_offset::HEADER])
                        == crate::abi::PacketType::KERNEL_DISPATCH
                        && crate::runtime::queues::kernarg_capture()
                    {
                        // Copied now, before the doorbell is forwarded: these
                        // are the bytes the kernel will read.
                        let k = kernarg(
                            &mut side.kernarg,
                            &mut side.last_kernel,
                            &raw,
                            self.id as usize,
                        );
                        p.push_with_kernarg(&rec, k);
                    } else {
                        p.push(&rec);
                    }
                }
            }
            side.cursor = index + 1;
        }
        if value.is_none() {
            return forward(None);
        }
        let Some(last) = side.cursor.checked_sub(1) else {
            return; // nothing captured yet: nothing may be rung
        };
        if side.forwarded.is_none_or(|f| last > f) {
            side.forwarded = Some(last);
            forward(Some(last as i64));
        }
    }
}

/// A dispatch's kernarg bytes, from memory the pass-through table knows to
/// be host memory of the real runtime (see `passthrough`), into `k.buf`.
fn kernarg<'b>(
    k: &'b mut runtime::memory::KernargCopy,
    last: &mut (u64, u32),
    raw: &[u8; 64],
    shard: usize,
) -> KernargSubmit<'b> {
    use crate::abi::packet_offset as po;
    let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap_or([0; 8]));
    let (ko, addr) = (word(po::KERNEL_OBJECT), word(po::KERNARG_ADDRESS));
    let size = if ko != 0 && last.0 == ko {
        last.1
    } else {
        match runtime::executables::kernel_info(ko) {
            Some(info) => {
                *last = (ko, info.kernarg_size);
                info.kernarg_size
            }
            None => return KernargSubmit::Unreadable(Unreadable::UnknownKernel),
        }
    };
    if size == 0 {
        return KernargSubmit::Bytes {
            bytes: &[],
            segment_size: 0,
        };
    }
    if addr == 0 {
        return KernargSubmit::Unreadable(Unreadable::NullAddress);
    }
    let want = (size as usize).min(k.buf.len());
    match super::passthrough::copy_kernarg(&mut k.range, shard, addr, &mut k.buf[..want]) {
        Ok(n) => KernargSubmit::Bytes {
            bytes: &k.buf[..n],
            segment_size: u64::from(size),
        },
        Err(_) => KernargSubmit::Unreadable(Unreadable::NotKnownReadable),
    }
}

/// Totals over every observed queue, live and destroyed.
pub fn total_counts() -> ObservedCounts {
    let mut t = *RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    for (_, obs) in live() {
        let c = obs.side.lock().unwrap_or_else(|e| e.into_inner()).counts;
        t.dispatches += c.dispatches;
        t.rejected += c.rejected;
        t.barriers += c.barriers;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::VerdictMemo;
    use crate::abi::packet_offset::KERNARG_ADDRESS;

    fn packet(kernarg: u64, grid_x: u32) -> [u8; 64] {
        let mut raw = [0u8; 64];
        raw[0] = 2; // kernel dispatch
        raw[12..16].copy_from_slice(&grid_x.to_le_bytes());
        raw[KERNARG_ADDRESS..KERNARG_ADDRESS + 8].copy_from_slice(&kernarg.to_le_bytes());
        raw
    }

    #[test]
    fn the_verdict_key_ignores_only_the_kernarg_address_value() {
        let a = VerdictMemo::key(&packet(0x1000, 64));
        assert_eq!(a, VerdictMemo::key(&packet(0x7f00_0000_2340, 64)));
        // Any other byte, nullness and alignment each change the key.
        assert_ne!(a, VerdictMemo::key(&packet(0x1000, 65)));
        assert_ne!(a, VerdictMemo::key(&packet(0, 64)));
        assert_ne!(a, VerdictMemo::key(&packet(0x1008, 64)));
        assert_eq!(VerdictMemo::key(&packet(0, 64)).1, 0b01);
        assert_eq!(VerdictMemo::key(&packet(0x1008, 64)).1, 0b10);
        assert_eq!(a.1, 0);
        let mut other = packet(0x1000, 64);
        other[63] = 1;
        assert_ne!(a, VerdictMemo::key(&other));
    }
}
