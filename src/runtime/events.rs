//! The runtime's event thread: it runs `hsa_amd_signal_async_handler`
//! callbacks, calls a queue's error callback when one of its packets was
//! rejected (as ROCr calls it from its async-events thread, never from the
//! doorbell store), and resumes queues held by a barrier when a signal
//! changes.
//!
//! Handlers are called with no lock held, so they may register new handlers,
//! store to signals and ring doorbells. A handler that returns true is re-armed
//! with its original condition, as ROCr does. The virtual runtime starts the
//! thread when `hsa_init` builds it; a runtime over a real one (whose handlers
//! the real runtime runs) starts it the first time it is needed; never from
//! the library constructor.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::queues;
use super::signals;
use super::sys;
use crate::abi::SignalCondition;

/// `hsa_amd_signal_handler`: `bool (*)(hsa_signal_value_t value, void* arg)`.
pub type HandlerFn = unsafe extern "C" fn(i64, *mut libc::c_void) -> bool;

#[derive(Clone, Copy)]
struct Handler {
    signal: u64,
    cond: SignalCondition,
    value: i64,
    func: HandlerFn,
    arg: usize,
}

static HANDLERS: Mutex<Vec<Handler>> = Mutex::new(Vec::new());
static WORK: AtomicU32 = AtomicU32::new(0);
/// Set by [`shut_down`] (the last `hsa_shut_down`), cleared by [`resume`]
/// (the next `hsa_init`): no handler is called while it is set.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// Held by the event thread while it calls a handler, so [`shut_down`] can
/// wait for the one in flight.
static CALLING: Mutex<()> = Mutex::new(());
/// The event thread's OS id (0 until it runs).
static THREAD: AtomicU32 = AtomicU32::new(0);
/// Handlers taken off the list as due and not yet returned from.
static PENDING: AtomicU32 = AtomicU32::new(0);
/// Handlers registered and not yet dropped (a cheap test for the doorbell
/// path: most programs register none).
static REGISTERED: AtomicU32 = AtomicU32::new(0);

/// Register a handler. The signal has already been validated.
pub fn register(
    signal: u64,
    cond: SignalCondition,
    value: i64,
    func: HandlerFn,
    arg: *mut libc::c_void,
) -> bool {
    {
        let mut hs = HANDLERS.lock().unwrap_or_else(|e| e.into_inner());
        hs.push(Handler {
            signal,
            cond,
            value,
            func,
            arg: arg as usize,
        });
        REGISTERED.store(hs.len() as u32, Ordering::SeqCst);
    }
    wake()
}

/// Nudge the event thread (starting it if needed). Returns false if the thread
/// could not be started.
pub fn wake() -> bool {
    let ok = crate::lifecycle::helper_thread(crate::lifecycle::Helper::Events, || {
        crate::sys::spawn_shielded(
            std::thread::Builder::new().name("softgpu-events".into()),
            run,
        )
        .map_err(|e| tracing::error!("softgpu: cannot start the event thread: {e}"))
        .is_ok()
    });
    // Only the WORK word: bumping the signal generation here would wake the
    // event thread's own sleep each time it re-parks a still-blocked queue,
    // turning a waiting barrier into a busy loop. While the thread watches
    // signals it sleeps at most 2 ms, so new work is seen promptly either way.
    WORK.fetch_add(1, Ordering::SeqCst);
    sys::futex_wake_all(&WORK);
    ok
}

/// The last `hsa_shut_down`, as ROCr's runtime unload stops its async-events
/// thread: no handler is called from now on, the ones registered are dropped
/// (ROCr deletes them with the runtime), and a handler in flight is waited
/// for (ROCr joins the thread). HIP 7.2.4 calls `hsa_shut_down` from its
/// exit-time destructors, after destroying objects its handlers touch; a
/// handler called then crashed the program (SIGSEGV in HIP, about one run in
/// a hundred on a busy machine, whose event thread ran the handler late).
pub fn shut_down() {
    STOPPED.store(true, Ordering::SeqCst);
    HANDLERS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    REGISTERED.store(0, Ordering::SeqCst);
    // A handler that shuts the runtime down itself is not waited for (it
    // would wait for itself).
    if THREAD.load(Ordering::SeqCst) != sys::gettid() {
        drop(CALLING.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// `hsa_init` after a shut-down: handlers are called again.
pub fn resume() {
    STOPPED.store(false, Ordering::SeqCst);
}

/// Whether a handler is due (its condition holds) or being called.
fn any_due() -> bool {
    PENDING.load(Ordering::SeqCst) != 0
        || HANDLERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|h| {
                signals::lookup(h.signal).is_some_and(|s| {
                    signals::satisfied(h.cond, s.value.load(Ordering::Acquire), h.value)
                })
            })
}

/// Wait, at most `max`, until the event thread has called every handler
/// whose condition holds now. Returns false when it gave up at `max`.
fn wait_for_due(max: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + max;
    let mut spins = 0u32;
    while any_due() {
        if std::time::Instant::now() >= deadline {
            return false;
        }
        wake();
        spins += 1;
        if spins < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    true
}

/// Whether the calling thread may wait for the event thread: not the event
/// thread itself (which may not have started yet: then it is not this one),
/// not after the shut-down, and only with handlers about.
fn may_wait() -> bool {
    (REGISTERED.load(Ordering::SeqCst) != 0 || PENDING.load(Ordering::SeqCst) != 0)
        && THREAD.load(Ordering::SeqCst) != sys::gettid()
        && !STOPPED.load(Ordering::SeqCst)
}

/// After a write to a signal (a doorbell store included, once its packets
/// are processed), and when a wait on a signal is satisfied (no lock of the
/// runtime held in any case): let the handlers that are due run before the
/// call returns. A GPU runtime calls a handler from its interrupt thread as
/// the GPU completes the packet; SoftGPU completes the packet inside the
/// doorbell store (or on its completion thread; over a real runtime, the
/// intercepting shim completes it with a subtract on that runtime's signal),
/// so the program would otherwise run on well before the event thread gets a
/// CPU. HIP 7.2.4 destroys a stream right after synchronising
/// with it (it reads the completion signal, not its handler), and the handler
/// then used the freed stream: a SIGSEGV in about one run in a hundred on a
/// busy machine. The wait is bounded, 20 ms (a handler that needs a lock the calling
/// thread holds runs after the call, as it could on a GPU); with no handler
/// registered it is two atomic loads.
#[inline]
pub fn let_due_handlers_run() {
    if REGISTERED.load(Ordering::Relaxed) == 0 && PENDING.load(Ordering::Relaxed) == 0 {
        return;
    }
    if may_wait() && !wait_for_due(std::time::Duration::from_millis(20)) {
        tracing::debug!(
            pending = PENDING.load(Ordering::SeqCst),
            registered = REGISTERED.load(Ordering::SeqCst),
            stopped = STOPPED.load(Ordering::SeqCst),
            thread = THREAD.load(Ordering::SeqCst),
            me = sys::gettid(),
            "softgpu: a due async handler did not run within 20 ms; the call returns without it"
        );
    }
}

/// At process exit, before the program's exit-time destructors that were
/// registered before the runtime's: wait (at most `max`) until the event
/// thread has called every handler already due.
pub fn settle(max: std::time::Duration) {
    if may_wait() {
        wait_for_due(max);
    }
}

fn run() {
    THREAD.store(sys::gettid(), Ordering::SeqCst);
    loop {
        let work_seen = WORK.load(Ordering::SeqCst);
        let gen_seen = signals::generation();
        let ctx = super::drain_context();
        let had_blocked = ctx.map(queues::retry_blocked).unwrap_or(false);
        let errors = run_queue_errors();
        let (fired, watching) = run_due_handlers();
        if fired || errors {
            continue;
        }
        if had_blocked || watching || queues::BLOCKED_COUNT.load(Ordering::SeqCst) != 0 {
            signals::sleep_until_change(gen_seen, 2_000_000, || true);
        } else {
            sys::futex_wait(&WORK, work_seen, 100_000_000);
        }
    }
}

/// Call the error callback of every queue with rejected packets, once per
/// packet, in packet order. Returns whether any was taken.
fn run_queue_errors() -> bool {
    let errors = queues::take_errors();
    let taken = !errors.is_empty();
    for e in errors {
        let calling = CALLING.lock().unwrap_or_else(|e| e.into_inner());
        // Only to the queue the error was raised on, still live: never
        // after the last hsa_shut_down (ROCr's unload) or after the queue
        // was destroyed (its object and `hsa_queue_t*` may serve another).
        let q = queues::lookup(e.queue).filter(|q| q.queue_id() == e.queue_id);
        if let (Some(_), false) = (q, STOPPED.load(Ordering::SeqCst)) {
            // SAFETY: `func` and `data` were supplied together by the program
            // to hsa_queue_create, whose contract is that the runtime calls
            // the callback with a status, the queue (live here: looked up
            // above, and its hsa_queue_destroy waits for this call) and that
            // data pointer, on a runtime thread. No lock the program can take
            // is held (`CALLING` only serialises the call with `shut_down`).
            let _ = std::panic::catch_unwind(|| unsafe {
                (e.callback.func)(
                    e.status,
                    e.queue as *mut libc::c_void,
                    e.callback.data as *mut libc::c_void,
                )
            });
        }
        drop(calling);
        // A destroyed queue's count went with it (a new queue starts at 0).
        if let Some(q) = q {
            q.error_sent();
        }
    }
    taken
}

/// Before `hsa_queue_destroy` of `q`: wait (at most `max`) until the event
/// thread has called `q`'s error callback for every packet rejected so far,
/// as ROCr's queue destructor waits for its error handler. Not on the event
/// thread (a callback that destroys its own queue would wait for itself),
/// not after the shut-down, not in a forked child (no event thread there).
pub fn settle_queue_errors(q: &queues::VirtualQueue, max: std::time::Duration) {
    if q.errors_unsent() == 0
        || THREAD.load(Ordering::SeqCst) == sys::gettid()
        || STOPPED.load(Ordering::SeqCst)
        || crate::lifecycle::in_forked_child()
    {
        return;
    }
    let deadline = std::time::Instant::now() + max;
    let mut spins = 0u32;
    while q.errors_unsent() != 0 {
        if std::time::Instant::now() >= deadline {
            tracing::debug!(
                queue = q.queue_id(),
                unsent = q.errors_unsent(),
                "softgpu: the error callback did not return within {max:?}; the queue is destroyed without waiting"
            );
            return;
        }
        wake();
        spins += 1;
        if spins < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

/// Call every handler whose condition holds. Returns (any fired, any left).
fn run_due_handlers() -> (bool, bool) {
    let due: Vec<(Handler, i64)> = {
        let mut hs = HANDLERS.lock().unwrap_or_else(|e| e.into_inner());
        let mut due = Vec::new();
        hs.retain(|h| match signals::lookup(h.signal) {
            // A destroyed signal drops its handler silently (ROCr does the same).
            None => false,
            Some(s) => {
                let v = s.value.load(Ordering::Acquire);
                if signals::satisfied(h.cond, v, h.value) {
                    due.push((*h, v));
                    PENDING.fetch_add(1, Ordering::SeqCst);
                    false
                } else {
                    true
                }
            }
        });
        REGISTERED.store(hs.len() as u32, Ordering::SeqCst);
        due
    };
    let fired = !due.is_empty();
    let mut left = due.len() as u32;
    for (h, v) in due {
        let calling = CALLING.lock().unwrap_or_else(|e| e.into_inner());
        if STOPPED.load(Ordering::SeqCst) {
            // Shut down while these were due: dropped, as ROCr drops them.
            PENDING.fetch_sub(left, Ordering::SeqCst);
            break;
        }
        // SAFETY: `func` and `arg` were supplied together by the program through
        // hsa_amd_signal_async_handler, whose contract is that the handler may be
        // called with the observed value and that argument on a runtime thread.
        // No lock the program can take is held here (`CALLING` only serialises
        // this call with `shut_down`, which waits for it).
        let again = std::panic::catch_unwind(|| unsafe { (h.func)(v, h.arg as *mut libc::c_void) })
            .unwrap_or(false);
        drop(calling);
        if again {
            let mut hs = HANDLERS.lock().unwrap_or_else(|e| e.into_inner());
            hs.push(h);
            REGISTERED.store(hs.len() as u32, Ordering::SeqCst);
        }
        left -= 1;
        PENDING.fetch_sub(1, Ordering::SeqCst);
    }
    let left = !HANDLERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty();
    (fired, left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    static CALLS: AtomicU32 = AtomicU32::new(0);

    unsafe extern "C" fn count(_: i64, _: *mut libc::c_void) -> bool {
        CALLS.fetch_add(1, Ordering::SeqCst);
        false
    }

    fn set(handle: u64, v: i64) {
        signals::lookup(handle)
            .unwrap()
            .value
            .store(v, Ordering::SeqCst);
        signals::notify_change();
    }

    /// A handler whose signal is satisfied has been called when the wait for
    /// due handlers returns; after the last `hsa_shut_down` no handler is
    /// called (ROCr's unload), and after the next `hsa_init` they are again.
    #[test]
    fn due_handlers_run_before_the_wait_returns_and_never_after_the_shut_down() {
        let s = signals::create(1).unwrap();
        let lt_one = SignalCondition::LT;
        assert!(register(s, lt_one, 1, count, std::ptr::null_mut()));
        settle(Duration::from_secs(10));
        assert_eq!(CALLS.load(Ordering::SeqCst), 0, "not due yet");
        set(s, 0);
        settle(Duration::from_secs(10));
        assert_eq!(CALLS.load(Ordering::SeqCst), 1, "called once");

        set(s, 1);
        assert!(register(s, lt_one, 1, count, std::ptr::null_mut()));
        shut_down();
        set(s, 0);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            1,
            "no call after the shut-down"
        );

        resume();
        set(s, 1);
        assert!(register(s, lt_one, 1, count, std::ptr::null_mut()));
        set(s, 0);
        settle(Duration::from_secs(10));
        assert_eq!(
            CALLS.load(Ordering::SeqCst),
            2,
            "called again after hsa_init"
        );
        signals::destroy(s);
    }
}
