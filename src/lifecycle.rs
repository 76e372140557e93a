//! The shim's lifecycle: one state machine in one atomic word.
//!
//! Every question "may this call touch the runtime?" is one load of [`WORD`],
//! and every change of state is one compare-and-swap on it, so an early call
//! (before `hsa_init`), a late one (after `hsa_shut_down`, or after the exit
//! handler finalised the capture) and concurrent ones (two threads in
//! `hsa_init`) are answered by the state they find, never by a race between
//! separate flags.
//!
//! The word holds:
//!
//! | bits | field | values |
//! | --- | --- | --- |
//! | 0..4 | phase | [`Phase`]: uninitialised, initialising, ready, finished, forked child, failed |
//! | 4..6 | mode | what the trampolines route: virtual, intercept, observe |
//! | 6..8, 8..10 | helper threads | the event thread's and the completion thread's: none, starting, running, failed |
//! | 32..64 | references (ready, finished, forked) or the failure's status (failed) | |
//!
//! Transitions (nothing else changes the phase):
//!
//! ```text
//! Uninitialised --begin_init--> Initialising --ready--> Ready --finish--> Finished
//!                                     |                   |  \
//!                                     +--failed--> Failed  |   +--fork (child)--> ForkedChild
//!                                                          +--(Finished, fork)--> ForkedChild
//! ```
//!
//! The references count `hsa_init` calls not yet matched by `hsa_shut_down`;
//! the runtime answers only while there is one. The runtime is built once:
//! after the last `hsa_shut_down` a new `hsa_init` finds it ready again. A
//! failed build is final, and every later `hsa_init` returns its status.
//! `Finished` (the exit handler ran) and `ForkedChild` (a child process of a
//! `fork` after `hsa_init`) still answer calls, but never write the capture.
//!
//! The helper threads (the event thread, the completion thread) start the
//! first time they are needed, once per process ([`helper_thread`]); a forked
//! child, which inherits none of its parent's threads, starts its own.
//!
//! The mode is set while initialising (before the real `hsa_init` runs, so a
//! callback it makes already reaches the real runtime) and cleared again if
//! the real runtime turns out unusable. This module has no unsafe code and no
//! dependency on the rest of the shim.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::abi::HsaStatus;
use crate::config::Mode;

/// Where the shim is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// No `hsa_init` yet.
    Uninitialised = 0,
    /// The first `hsa_init` is building the runtime.
    Initialising = 1,
    /// Built; answers calls while referenced.
    Ready = 2,
    /// The exit handler finalised the capture; still answers calls.
    Finished = 3,
    /// A child process of `fork`: answers calls, never writes the capture.
    ForkedChild = 4,
    /// The build failed; every `hsa_init` returns its status.
    Failed = 5,
}

const PHASE_MASK: u64 = 0xf;
const MODE_SHIFT: u32 = 4;
const MODE_MASK: u64 = 0x3 << MODE_SHIFT;
const HIGH_SHIFT: u32 = 32;
/// The most `hsa_init` references held at once: ROCr's `INT32_MAX`.
pub const MAX_REFS: u32 = i32::MAX as u32;
const LOW_MASK: u64 = (1 << HIGH_SHIFT) - 1;

const HELPER_MASK: u64 = 0xf << 6;
const HELPER_NONE: u64 = 0;
const HELPER_STARTING: u64 = 1;
const HELPER_RUNNING: u64 = 2;
const HELPER_FAILED: u64 = 3;

const MODE_VIRTUAL: u64 = 0;
const MODE_INTERCEPT: u64 = 1;
const MODE_OBSERVE: u64 = 2;

/// The one word (see the module documentation).
static WORD: AtomicU64 = AtomicU64::new(Phase::Uninitialised as u64);

thread_local! {
    /// Set on the thread that is building the runtime, for its duration.
    static BUILDING: Cell<bool> = const { Cell::new(false) };
}

/// A decoded word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    pub phase: Phase,
    pub mode: Mode,
    /// References (`hsa_init` calls not yet shut down); 0 when not built.
    pub refs: u32,
}

fn phase_of(w: u64) -> Phase {
    match w & PHASE_MASK {
        0 => Phase::Uninitialised,
        1 => Phase::Initialising,
        2 => Phase::Ready,
        3 => Phase::Finished,
        4 => Phase::ForkedChild,
        _ => Phase::Failed,
    }
}

fn mode_of(w: u64) -> Mode {
    match (w & MODE_MASK) >> MODE_SHIFT {
        MODE_INTERCEPT => Mode::Intercept,
        MODE_OBSERVE => Mode::Observe,
        _ => Mode::Virtual,
    }
}

fn mode_bits(mode: Mode) -> u64 {
    (match mode {
        Mode::Intercept => MODE_INTERCEPT,
        Mode::Observe => MODE_OBSERVE,
        Mode::Auto | Mode::Virtual => MODE_VIRTUAL,
    }) << MODE_SHIFT
}

fn high(w: u64) -> u32 {
    (w >> HIGH_SHIFT) as u32
}

fn with_high(w: u64, v: u32) -> u64 {
    (w & LOW_MASK) | (u64::from(v) << HIGH_SHIFT)
}

fn with_phase(w: u64, p: Phase) -> u64 {
    (w & !PHASE_MASK) | p as u64
}

/// The state now.
pub fn state() -> State {
    let w = WORD.load(Ordering::Acquire);
    let phase = phase_of(w);
    State {
        phase,
        mode: mode_of(w),
        refs: if built(phase) { high(w) } else { 0 },
    }
}

fn built(p: Phase) -> bool {
    matches!(p, Phase::Ready | Phase::Finished | Phase::ForkedChild)
}

/// Whether the runtime answers calls now: built and referenced.
#[inline]
pub fn answering() -> bool {
    let w = WORD.load(Ordering::Acquire);
    built(phase_of(w)) && high(w) > 0
}

/// The mode the trampolines route (never `Auto`).
#[inline]
pub fn mode() -> Mode {
    mode_of(WORD.load(Ordering::Acquire))
}

/// Whether a real runtime is below the shim (intercept or observe).
#[inline]
pub fn forwarding() -> bool {
    WORD.load(Ordering::Relaxed) & MODE_MASK != 0
}

/// Whether the shim owns the queues over a real runtime.
#[inline]
pub fn intercepting() -> bool {
    WORD.load(Ordering::Relaxed) & MODE_MASK == MODE_INTERCEPT << MODE_SHIFT
}

/// Whether the shim only watches the real runtime's queues.
#[inline]
pub fn observing() -> bool {
    WORD.load(Ordering::Relaxed) & MODE_MASK == MODE_OBSERVE << MODE_SHIFT
}

/// Whether this process is a child of `fork` after `hsa_init`.
#[inline]
pub fn in_forked_child() -> bool {
    phase_of(WORD.load(Ordering::Relaxed)) == Phase::ForkedChild
}

/// Whether records may still be written to the capture: the runtime is
/// ready, not finished and not a forked child.
#[inline]
pub fn capturing() -> bool {
    phase_of(WORD.load(Ordering::Relaxed)) == Phase::Ready
}

/// What `hsa_init` must do, as [`begin_init`] decided it.
#[derive(Debug, PartialEq, Eq)]
pub enum Begin {
    /// This call builds the runtime: call [`ready`] or [`failed`] when done.
    Build,
    /// The runtime is built; this call took a reference.
    Referenced,
}

/// The start of `hsa_init`. Exactly one caller ever gets [`Begin::Build`];
/// a concurrent caller waits for that build to end and then takes its
/// reference (or its failure). A call from the building thread itself (a
/// re-entry during the build) is refused with `HSA_STATUS_ERROR` instead of
/// waiting for itself.
pub fn begin_init() -> Result<Begin, HsaStatus> {
    let mut spins = 0u32;
    loop {
        let w = WORD.load(Ordering::Acquire);
        match phase_of(w) {
            Phase::Uninitialised => {
                if WORD
                    .compare_exchange(
                        w,
                        with_phase(w, Phase::Initialising),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_ok()
                {
                    BUILDING.with(|b| b.set(true));
                    return Ok(Begin::Build);
                }
            }
            Phase::Initialising => {
                if BUILDING.with(|b| b.get()) {
                    return Err(HsaStatus::ERROR);
                }
                // The build takes milliseconds; wait without a lock.
                spins = spins.saturating_add(1);
                if spins < 64 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
            Phase::Failed => return Err(HsaStatus(high(w))),
            Phase::Ready | Phase::Finished | Phase::ForkedChild => {
                let refs = high(w);
                // ROCr's `Runtime::Acquire` counts in an `int32_t` and
                // refuses the reference after INT32_MAX with
                // REFCOUNT_OVERFLOW; rocrtst's Max_Reference_Count loops
                // until it sees that status.
                if refs >= MAX_REFS {
                    return Err(HsaStatus::ERROR_REFCOUNT_OVERFLOW);
                }
                let next = refs + 1;
                if WORD
                    .compare_exchange(w, with_high(w, next), Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Ok(Begin::Referenced);
                }
            }
        }
    }
}

/// Drop a reference that [`begin_init`] took but `hsa_init` could not keep
/// (the real runtime's own `hsa_init` failed).
pub fn unreference() {
    let _ = release();
}

/// The builder's `hsa_init` succeeded: ready, with one reference, in the
/// mode set while initialising.
pub fn ready() {
    BUILDING.with(|b| b.set(false));
    let _ = WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        (phase_of(w) == Phase::Initialising).then(|| with_high(with_phase(w, Phase::Ready), 1))
    });
}

/// The builder's `hsa_init` failed with `status`: final.
pub fn failed(status: HsaStatus) {
    BUILDING.with(|b| b.set(false));
    let _ = WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        (phase_of(w) == Phase::Initialising)
            .then(|| with_high(with_phase(w & !MODE_MASK, Phase::Failed), status.0))
    });
}

/// Set the routed mode (only while initialising: the builder decides it).
/// Returns whether it was set.
pub fn set_mode(mode: Mode) -> bool {
    WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        (phase_of(w) == Phase::Initialising).then(|| (w & !MODE_MASK) | mode_bits(mode))
    })
    .is_ok()
}

/// `hsa_shut_down`: drop one reference. Returns the references left, or
/// `HSA_STATUS_ERROR_NOT_INITIALIZED` when there was none to drop (never
/// initialised, already shut down, or a failed build).
pub fn release() -> Result<u32, HsaStatus> {
    WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        if !built(phase_of(w)) {
            return None;
        }
        high(w).checked_sub(1).map(|n| with_high(w, n))
    })
    .map(|w| high(w) - 1)
    .map_err(|_| HsaStatus::ERROR_NOT_INITIALIZED)
}

/// The exit handler: ready becomes finished. Returns whether this call made
/// the change (so the capture is finalised exactly once, and never by a
/// forked child).
pub fn finish() -> bool {
    WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        (phase_of(w) == Phase::Ready).then(|| with_phase(w, Phase::Finished))
    })
    .is_ok()
}

/// The child side of `fork`: a built runtime becomes a forked child's, with
/// no helper thread (the child has none of its parent's threads). Only atomic
/// operations (async-signal-safe).
pub fn forked_child() {
    let _ = WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
        built(phase_of(w)).then(|| with_phase(w & !HELPER_MASK, Phase::ForkedChild))
    });
}

/// A helper thread of the runtime, started on first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Helper {
    /// `runtime::events`: async handlers and blocked queues.
    Events,
    /// `runtime::completion`: deferred completion (`SOFTGPU_COMPLETION=thread`).
    Completion,
}

impl Helper {
    fn shift(self) -> u32 {
        match self {
            Helper::Events => 6,
            Helper::Completion => 8,
        }
    }
}

/// Whether `which` runs in this process, starting it with `spawn` (which
/// returns whether the thread started) the first time. Exactly one caller
/// spawns; a concurrent caller waits for its answer. A failure is final for
/// the process. Once running this is one atomic load.
pub fn helper_thread(which: Helper, spawn: impl FnOnce() -> bool) -> bool {
    let shift = which.shift();
    let mut spawn = Some(spawn);
    loop {
        let w = WORD.load(Ordering::Acquire);
        match (w >> shift) & 3 {
            HELPER_RUNNING => return true,
            HELPER_FAILED => return false,
            HELPER_STARTING => std::thread::yield_now(),
            _ => {
                let starting = (w & !(3 << shift)) | (HELPER_STARTING << shift);
                if WORD
                    .compare_exchange(w, starting, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let ok = spawn.take().is_some_and(|f| f());
                    let state = if ok { HELPER_RUNNING } else { HELPER_FAILED };
                    let _ = WORD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                        Some((w & !(3 << shift)) | (state << shift))
                    });
                    return ok;
                }
            }
        }
    }
}

/// Whether `which` was started (or is starting) in this process.
pub fn helper_started(which: Helper) -> bool {
    (WORD.load(Ordering::Acquire) >> which.shift()) & 3 != HELPER_NONE
}

/// Test support: back to uninitialised (unit tests run the state machine in
/// one process, one test at a time under [`TEST_LOCK`]).
#[cfg(test)]
pub fn reset_for_test() {
    WORD.store(Phase::Uninitialised as u64, Ordering::Release);
    BUILDING.with(|b| b.set(false));
}

/// Serialises the unit tests that drive the one word.
#[cfg(test)]
pub static TEST_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> std::sync::MutexGuard<'static, ()> {
        let g = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        reset_for_test();
        g
    }

    #[test]
    fn calls_before_hsa_init_find_nothing_to_answer_and_shut_down_is_not_initialized() {
        let _g = lock();
        assert!(!answering());
        assert_eq!(release(), Err(HsaStatus::ERROR_NOT_INITIALIZED));
        assert!(!finish(), "nothing to finalise before hsa_init");
        forked_child();
        assert_eq!(state().phase, Phase::Uninitialised);
        assert!(
            !set_mode(Mode::Intercept),
            "the mode is the builder's alone"
        );
        assert!(!forwarding());
    }

    #[test]
    fn init_builds_once_then_counts_references_and_shut_down_matches_them() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        assert!(!answering(), "not answering while initialising");
        ready();
        assert!(answering());
        assert_eq!(begin_init(), Ok(Begin::Referenced));
        assert_eq!(state().refs, 2);
        assert_eq!(release(), Ok(1));
        assert_eq!(release(), Ok(0));
        assert!(!answering(), "after the last shut down nothing answers");
        assert_eq!(release(), Err(HsaStatus::ERROR_NOT_INITIALIZED));
        // A later hsa_init finds the runtime built.
        assert_eq!(begin_init(), Ok(Begin::Referenced));
        assert!(answering());
    }

    #[test]
    fn references_stop_at_rocr_s_int32_max_with_refcount_overflow() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        ready();
        let w = WORD.load(Ordering::Acquire);
        let max = i32::MAX as u32;
        WORD.store(with_high(w, max - 1), Ordering::Release);
        assert_eq!(begin_init(), Ok(Begin::Referenced));
        assert_eq!(state().refs, max);
        assert_eq!(begin_init(), Err(HsaStatus::ERROR_REFCOUNT_OVERFLOW));
        assert_eq!(state().refs, max, "a refused init takes no reference");
        assert_eq!(release(), Ok(max - 1));
    }

    #[test]
    fn a_failed_build_is_final_and_every_later_init_returns_its_status() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        assert!(set_mode(Mode::Intercept));
        failed(HsaStatus::ERROR_OUT_OF_RESOURCES);
        assert!(!forwarding(), "a failed build routes nothing");
        for _ in 0..3 {
            assert_eq!(begin_init(), Err(HsaStatus::ERROR_OUT_OF_RESOURCES));
        }
        assert_eq!(release(), Err(HsaStatus::ERROR_NOT_INITIALIZED));
        assert!(!answering());
    }

    #[test]
    fn the_building_thread_reentering_init_is_refused_instead_of_waiting_for_itself() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        assert_eq!(begin_init(), Err(HsaStatus::ERROR));
        ready();
        assert_eq!(state().refs, 1);
    }

    #[test]
    fn concurrent_inits_build_once_and_each_takes_one_reference() {
        let _g = lock();
        let builds = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| match begin_init() {
                    Ok(Begin::Build) => {
                        builds.fetch_add(1, Ordering::Relaxed);
                        std::thread::yield_now();
                        ready();
                    }
                    Ok(Begin::Referenced) => {}
                    Err(e) => panic!("{e:?}"),
                });
            }
        });
        assert_eq!(builds.load(Ordering::Relaxed), 1);
        assert_eq!(state().refs, 8);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| assert!(release().is_ok()));
            }
        });
        assert_eq!(state().refs, 0);
        assert_eq!(release(), Err(HsaStatus::ERROR_NOT_INITIALIZED));
    }

    #[test]
    fn finish_happens_once_and_later_calls_still_answer_without_capturing() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        assert!(set_mode(Mode::Observe));
        ready();
        assert!(capturing());
        assert!(finish());
        assert!(!finish(), "finalised exactly once");
        assert!(answering() && !capturing());
        assert!(observing(), "the mode survives finishing");
        assert_eq!(begin_init(), Ok(Begin::Referenced));
        assert_eq!(release(), Ok(1));
    }

    #[test]
    fn a_helper_thread_starts_once_a_failure_is_final_and_a_forked_child_starts_its_own() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        ready();
        let spawned = std::sync::atomic::AtomicU32::new(0);
        let spawn = || {
            spawned.fetch_add(1, Ordering::Relaxed);
            true
        };
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| assert!(helper_thread(Helper::Events, spawn)));
            }
        });
        assert_eq!(spawned.load(Ordering::Relaxed), 1, "started exactly once");
        assert!(
            !helper_started(Helper::Completion),
            "each helper on its own"
        );
        assert!(!helper_thread(Helper::Completion, || false));
        assert!(
            !helper_thread(Helper::Completion, || unreachable!()),
            "a failure is final"
        );
        assert_eq!(state().refs, 1, "the helpers leave the references alone");
        forked_child();
        assert!(!helper_started(Helper::Events) && !helper_started(Helper::Completion));
        assert!(
            helper_thread(Helper::Events, spawn),
            "the child starts its own"
        );
        assert_eq!(spawned.load(Ordering::Relaxed), 2);
        assert!(in_forked_child() && answering());
    }

    #[test]
    fn a_forked_child_answers_but_never_captures_or_finishes() {
        let _g = lock();
        assert_eq!(begin_init(), Ok(Begin::Build));
        ready();
        forked_child();
        assert!(in_forked_child() && answering() && !capturing());
        assert!(
            !finish(),
            "a forked child never finalises its parent's capture"
        );
        assert_eq!(release(), Ok(0));
    }
}
