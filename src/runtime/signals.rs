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

/// Live signals at most at once.
pub const MAX_SIGNALS: usize = 1 << 18;
/// Slots in the arena's address range. Handles are handed out in address
/// order and a slot is reused only when the cursor comes round again, after
/// `ARENA_SLOTS - 1` newer signals: a stale handle (a destroyed signal's) is
/// refused as dead for that long instead of aliasing the next signal, as a
/// last-in first-out free list did.
pub const ARENA_SLOTS: usize = 1 << 22;
const SLOT: usize = 128;
const PAGE: usize = 4096;
const SLOTS_PER_PAGE: usize = PAGE / SLOT;
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
    free: Mutex<Cursor>,
}

/// Allocation state, under the arena lock.
struct Cursor {
    /// Next index to try (wraps at `ARENA_SLOTS`).
    next: usize,
    /// Live signals.
    live: usize,
    /// Live slots per page, so a page whose signals are all destroyed is
    /// given back to the kernel (`MADV_DONTNEED`): the arena's resident size
    /// follows the live signals, not how many were ever made.
    per_page: Vec<u16>,
}

static ARENA: OnceLock<Option<Arena>> = OnceLock::new();

fn arena() -> Option<&'static Arena> {
    ARENA
        .get_or_init(|| {
            sys::map_forever(ARENA_SLOTS * SLOT).map(|p| Arena {
                base: p as usize,
                free: Mutex::new(Cursor {
                    next: 0,
                    live: 0,
                    per_page: vec![0; ARENA_SLOTS / SLOTS_PER_PAGE],
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
        if f.live >= MAX_SIGNALS {
            return None;
        }
        // At most MAX_SIGNALS slots are live, so a dead one is found within
        // MAX_SIGNALS + 1 steps.
        let mut idx = f.next;
        while slot_unchecked(a, idx).live.load(Ordering::Acquire) != 0 {
            idx = (idx + 1) % ARENA_SLOTS;
        }
        let leaving = f.next / SLOTS_PER_PAGE;
        f.next = (idx + 1) % ARENA_SLOTS;
        f.live += 1;
        f.per_page[idx / SLOTS_PER_PAGE] += 1;
        if leaving != idx / SLOTS_PER_PAGE {
            give_back_if_empty(a, &f, leaving);
        }
        // Initialised under the lock: another `create` must not pick the
        // same dead slot before it is marked live.
        let s = slot_unchecked(a, idx);
        s.kind.store(amd_signal_kind::USER, Ordering::Relaxed);
        s.value.store(initial, Ordering::Relaxed);
        s.start_ts.store(0, Ordering::Relaxed);
        s.end_ts.store(0, Ordering::Relaxed);
        s.queue_ptr.store(0, Ordering::Relaxed);
        s.doorbell_queue.store(0, Ordering::Relaxed);
        // Release: a thread that sees live == 1 also sees the initialised fields.
        s.live.store(1, Ordering::Release);
        idx
    };
    let handle = (a.base + idx * SLOT) as u64;
    Some(handle)
}

/// Destroy a signal. Returns false for an unknown or already destroyed handle.
pub fn destroy(handle: u64) -> bool {
    let Some(a) = arena() else { return false };
    let Some(idx) = index_of(a, handle) else {
        return false;
    };
    // Under the arena lock, so `create` cannot hand the slot out again
    // between its death and the clearing of its fields.
    let mut f = a.free.lock().unwrap_or_else(|e| e.into_inner());
    let s = slot_unchecked(a, idx);
    if s.live
        .compare_exchange(1, 0, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return false;
    }
    s.doorbell_queue.store(0, Ordering::Relaxed);
    s.kind.store(amd_signal_kind::INVALID, Ordering::Relaxed);
    f.live -= 1;
    let page = idx / SLOTS_PER_PAGE;
    f.per_page[page] -= 1;
    if page != f.next / SLOTS_PER_PAGE {
        give_back_if_empty(a, &f, page);
    }
    true
}

/// Return the pages of arena page `page` to the kernel when none of its
/// slots is live and the cursor is elsewhere (called with the lock held, so
/// no `create` is writing into it).
fn give_back_if_empty(a: &Arena, f: &Cursor, page: usize) {
    if f.per_page[page] == 0 {
        // SAFETY: the page lies inside the arena mapping (page < ARENA_SLOTS /
        // SLOTS_PER_PAGE) and holds only dead slots. Slots are atomics for
        // which all-zero bytes are a valid dead slot, which is what the page
        // reads as afterwards; references into it stay valid (the mapping
        // stays), and a late access by a holder of a stale handle only sees a
        // dead slot or faults a fresh zero page back in.
        unsafe { sys::discard((a.base + page * PAGE) as *mut u8, PAGE) };
    }
}

fn index_of(a: &Arena, handle: u64) -> Option<usize> {
    let h = handle as usize;
    let off = h.checked_sub(a.base)?;
    if off % SLOT != 0 || off / SLOT >= ARENA_SLOTS {
        return None;
    }
    Some(off / SLOT)
}

fn slot_unchecked(a: &Arena, idx: usize) -> &'static SignalSlot {
    debug_assert!(idx < ARENA_SLOTS);
    // SAFETY: the arena is a read-write mapping of ARENA_SLOTS * SLOT bytes that
    // is never unmapped, so the reference may be 'static. `idx < ARENA_SLOTS`
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

/// What a signal load (or exchange) returns when it cannot read a live
/// signal: a forged, destroyed or null handle, a missing real function, an
/// internal error. The countdown convention HIP and HSA programs use reads a
/// signal as complete at 0 (or below 1), so an error must never read as 0:
/// it is `i64::MAX`, which no completion reaches.
pub const ERROR_VALUE: i64 = i64::MAX;

/// What a wait returns when it cannot wait on a live signal: a value that
/// does not satisfy `cond` against `compare`, so the caller's own re-check
/// (the HSA rule) sees the wait as not satisfied. The one condition no value
/// fails, `GTE i64::MIN`, gets `i64::MIN` (documented in DESIGN.md).
pub fn refused_wait_value(cond: SignalCondition, compare: i64) -> i64 {
    match cond {
        SignalCondition::EQ => compare.wrapping_add(1),
        SignalCondition::NE | SignalCondition::LT => compare,
        SignalCondition::GTE => compare.saturating_sub(1),
        _ => ERROR_VALUE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_destroyed_signals_handle_stays_dead_while_newer_signals_are_made() {
        let old = create(5).unwrap();
        assert!(destroy(old));
        assert!(lookup(old).is_none());
        let mut made = Vec::new();
        for _ in 0..1000 {
            let h = create(1).unwrap();
            assert_ne!(h, old, "the stale handle came back as a new signal");
            made.push(h);
        }
        assert!(lookup(old).is_none(), "the stale handle reads as live");
        assert!(!destroy(old), "a stale handle destroyed a newer signal");
        for h in made {
            assert!(destroy(h));
        }
    }

    #[test]
    fn a_refused_wait_value_never_satisfies_its_condition() {
        for cond in [
            SignalCondition::EQ,
            SignalCondition::NE,
            SignalCondition::LT,
            SignalCondition::GTE,
        ] {
            for compare in [0, 1, -1, 7, i64::MAX, i64::MIN + 1] {
                let v = refused_wait_value(cond, compare);
                assert!(!satisfied(cond, v, compare), "{cond:?} {compare} {v}");
            }
        }
        assert!(!satisfied(SignalCondition::LT, ERROR_VALUE, 1));
        assert_ne!(ERROR_VALUE, 0);
    }
}
