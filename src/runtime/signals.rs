//! Signals: an arena of `amd_signal_t`-compatible slots, the value operations,
//! waits with conditions and timeouts, and the wake-up protocol shared with the
//! event thread.
//!
//! A signal handle is the address of its slot, so `value` sits at offset 8 of
//! the object the handle points at, as device-side code expects. The arena is
//! one anonymous mapping reserved at first use and never unmapped, so checking a
//! handle is a range, stride and liveness check with no lock and no chance of
//! dereferencing a forged pointer.
//!
//! Wake-ups: every change to a signal value bumps one global generation word.
//! Sleepers (`hsa_signal_wait_*` callers, and the event thread while it watches
//! something) futex-wait on that word. A writer issues the wake syscall only
//! when somebody sleeps, so the doorbell path pays one atomic add otherwise.
//! Sleeps are also capped, so a value written straight through
//! `hsa_amd_signal_value_pointer` is still seen.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

use super::sys;
use crate::abi::{AmdSignal, SignalCondition, amd_signal_kind};

/// Capacity of the signal arena.
pub const MAX_SIGNALS: usize = 1 << 18;
const SLOT: usize = 128;

/// One arena slot: an `amd_signal_t` image followed by SoftGPU's own fields.
/// All-zero bytes are a valid (dead) slot.
#[repr(C, align(128))]
pub struct SignalSlot {
    pub kind: AtomicI64,
    pub value: AtomicI64,
    pub event_mailbox_ptr: AtomicU64,
    pub event_id: AtomicU32,
    pub reserved1: AtomicU32,
    pub start_ts: AtomicU64,
    pub end_ts: AtomicU64,
    pub queue_ptr: AtomicU64,
    pub reserved3: [AtomicU32; 2],
    // --- SoftGPU fields, past the 64-byte amd_signal_t image ---
    /// 1 while the signal is live.
    pub live: AtomicU32,
    /// For a doorbell signal: the owning queue's arena index + 1; else 0.
    pub doorbell_queue: AtomicU32,
    _pad: [u64; 7],
}

const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<SignalSlot>() == SLOT);
    assert!(offset_of!(SignalSlot, kind) == offset_of!(AmdSignal, kind));
    assert!(offset_of!(SignalSlot, value) == offset_of!(AmdSignal, value));
    assert!(offset_of!(SignalSlot, event_mailbox_ptr) == offset_of!(AmdSignal, event_mailbox_ptr));
    assert!(offset_of!(SignalSlot, event_id) == offset_of!(AmdSignal, event_id));
    assert!(offset_of!(SignalSlot, start_ts) == offset_of!(AmdSignal, start_ts));
    assert!(offset_of!(SignalSlot, end_ts) == offset_of!(AmdSignal, end_ts));
    assert!(offset_of!(SignalSlot, queue_ptr) == offset_of!(AmdSignal, queue_ptr));
    assert!(offset_of!(SignalSlot, reserved3) == offset_of!(AmdSignal, reserved3));
    assert!(size_of::<AmdSignal>() == 64);
};

struct Arena {
    base: usize,
    free: Mutex<FreeList>,
}

struct FreeList {
    next_unused: usize,
    recycled: Vec<usize>,
}

static ARENA: OnceLock<Option<Arena>> = OnceLock::new();

fn arena() -> Option<&'static Arena> {
    ARENA
        .get_or_init(|| {
            sys::map_forever(MAX_SIGNALS * SLOT).map(|p| Arena {
                base: p as usize,
                free: Mutex::new(FreeList {
                    next_unused: 0,
                    recycled: Vec::new(),
                }),
            })
        })
        .as_ref()
}

/// Global generation word bumped on every signal change.
static GENERATION: AtomicU32 = AtomicU32::new(0);
/// Number of threads sleeping (or about to sleep) on [`GENERATION`].
static SLEEPERS: AtomicU32 = AtomicU32::new(0);

/// Longest single sleep: bounds how late a value written directly to memory
/// (not through the API) is noticed.
const MAX_SLEEP_NS: u64 = 2_000_000;

/// Announce that some signal value changed: wake sleepers if there are any.
#[inline]
pub fn notify_change() {
    // SeqCst pairs with the SeqCst increment of SLEEPERS and load of GENERATION
    // in `sleep_until_change`: either the sleeper sees the new generation (and
    // does not sleep) or we see its SLEEPERS increment (and wake it).
    GENERATION.fetch_add(1, Ordering::SeqCst);
    if SLEEPERS.load(Ordering::SeqCst) != 0 {
        sys::futex_wake_all(&GENERATION);
    }
}

/// Current generation (read before checking a condition).
pub fn generation() -> u32 {
    GENERATION.load(Ordering::SeqCst)
}

/// Register as a sleeper, re-check `still_waiting`, and sleep until the
/// generation moves past `seen` or `max_ns` passes.
pub fn sleep_until_change(seen: u32, max_ns: u64, still_waiting: impl Fn() -> bool) {
    SLEEPERS.fetch_add(1, Ordering::SeqCst);
    if GENERATION.load(Ordering::SeqCst) == seen && still_waiting() {
        sys::futex_wait(&GENERATION, seen, max_ns.clamp(1, MAX_SLEEP_NS));
    }
    SLEEPERS.fetch_sub(1, Ordering::SeqCst);
}

/// Create a signal with `initial` value. Returns the handle, or `None` when the
/// arena is exhausted.
pub fn create(initial: i64) -> Option<u64> {
    let a = arena()?;
    let idx = {
        let mut f = a.free.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = f.recycled.pop() {
            i
        } else if f.next_unused < MAX_SIGNALS {
            f.next_unused += 1;
            f.next_unused - 1
        } else {
            return None;
        }
    };
    let handle = (a.base + idx * SLOT) as u64;
    let s = slot_unchecked(a, idx);
    s.kind.store(amd_signal_kind::USER, Ordering::Relaxed);
    s.value.store(initial, Ordering::Relaxed);
    s.start_ts.store(0, Ordering::Relaxed);
    s.end_ts.store(0, Ordering::Relaxed);
    s.doorbell_queue.store(0, Ordering::Relaxed);
    // Release: a thread that sees live == 1 also sees the initialised fields.
    s.live.store(1, Ordering::Release);
    Some(handle)
}

/// Destroy a signal. Returns false for an unknown or already destroyed handle.
pub fn destroy(handle: u64) -> bool {
    let Some(a) = arena() else { return false };
    let Some(idx) = index_of(a, handle) else {
        return false;
    };
    let s = slot_unchecked(a, idx);
    if s.live
        .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return false;
    }
    s.doorbell_queue.store(0, Ordering::Relaxed);
    s.kind.store(amd_signal_kind::INVALID, Ordering::Relaxed);
    a.free
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .recycled
        .push(idx);
    true
}

fn index_of(a: &Arena, handle: u64) -> Option<usize> {
    let h = handle as usize;
    let off = h.checked_sub(a.base)?;
    if off % SLOT != 0 || off / SLOT >= MAX_SIGNALS {
        return None;
    }
    Some(off / SLOT)
}

fn slot_unchecked(a: &Arena, idx: usize) -> &'static SignalSlot {
    debug_assert!(idx < MAX_SIGNALS);
    // SAFETY: the arena is a read-write mapping of MAX_SIGNALS * SLOT bytes that
    // is never unmapped, so the reference may be 'static. `idx < MAX_SIGNALS`
    // (checked by every caller), the mapping is page aligned and SLOT is a
    // multiple of SignalSlot's alignment, so the pointer is in bounds and aligned.
    // SignalSlot is made only of atomics and padding, for which all-zero bytes
    // (fresh mapping) are valid, and all shared mutation goes through atomics.
    unsafe { &*((a.base + idx * SLOT) as *const SignalSlot) }
}

/// The live slot behind `handle`, or `None` for a null, forged or dead handle.
#[inline]
pub fn lookup(handle: u64) -> Option<&'static SignalSlot> {
    let a = arena()?;
    let idx = index_of(a, handle)?;
    let s = slot_unchecked(a, idx);
    (s.live.load(Ordering::Acquire) == 1).then_some(s)
}

/// Whether `value` satisfies `cond` against `compare`.
pub fn satisfied(cond: SignalCondition, value: i64, compare: i64) -> bool {
    match cond {
        SignalCondition::EQ => value == compare,
        SignalCondition::NE => value != compare,
        SignalCondition::LT => value < compare,
        SignalCondition::GTE => value >= compare,
        _ => false,
    }
}

/// Block until `cond` holds or `timeout_ns` passes; returns the last value
/// observed (the HSA rule: the caller re-checks).
pub fn wait(s: &SignalSlot, cond: SignalCondition, compare: i64, timeout_ns: u64) -> i64 {
    let v = s.value.load(Ordering::Acquire);
    if satisfied(cond, v, compare) {
        return v;
    }
    let start = sys::now_ns();
    let deadline = start.saturating_add(timeout_ns);
    // A short spin catches completions that are already in flight.
    for _ in 0..200 {
        std::hint::spin_loop();
        let v = s.value.load(Ordering::Acquire);
        if satisfied(cond, v, compare) {
            return v;
        }
    }
    loop {
        let seen = generation();
        let v = s.value.load(Ordering::Acquire);
        if satisfied(cond, v, compare) {
            return v;
        }
        let now = sys::now_ns();
        if now >= deadline {
            return v;
        }
        sleep_until_change(seen, deadline - now, || {
            !satisfied(cond, s.value.load(Ordering::SeqCst), compare)
        });
    }
}

/// Completion under the diagnostic contract: decrement by one (release), stamp
/// the end time, wake waiters.
#[inline]
pub fn complete(s: &SignalSlot, end_ns: u64) {
    s.end_ts.store(end_ns, Ordering::Relaxed);
    s.value.fetch_sub(1, Ordering::Release);
    notify_change();
}
