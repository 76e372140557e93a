//! The runtime's event thread: it runs `hsa_amd_signal_async_handler`
//! callbacks and resumes queues held by a barrier when a signal changes.
//!
//! Handlers are called with no lock held, so they may register new handlers,
//! store to signals and ring doorbells. A handler that returns true is re-armed
//! with its original condition, as ROCr does. The thread starts the first time
//! it is needed (never from the library constructor).
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

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

/// Register a handler. The signal has already been validated.
pub fn register(
    signal: u64,
    cond: SignalCondition,
    value: i64,
    func: HandlerFn,
    arg: *mut libc::c_void,
) -> bool {
    HANDLERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Handler {
            signal,
            cond,
            value,
            func,
            arg: arg as usize,
        });
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

fn run() {
    loop {
        let work_seen = WORK.load(Ordering::SeqCst);
        let gen_seen = signals::generation();
        let ctx = super::drain_context();
        let had_blocked = ctx.map(queues::retry_blocked).unwrap_or(false);
        let (fired, watching) = run_due_handlers();
        if fired {
            continue;
        }
        if had_blocked || watching || queues::BLOCKED_COUNT.load(Ordering::SeqCst) != 0 {
            signals::sleep_until_change(gen_seen, 2_000_000, || true);
        } else {
            sys::futex_wait(&WORK, work_seen, 100_000_000);
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
                    false
                } else {
                    true
                }
            }
        });
        due
    };
    let fired = !due.is_empty();
    for (h, v) in due {
        // SAFETY: `func` and `arg` were supplied together by the program through
        // hsa_amd_signal_async_handler, whose contract is that the handler may be
        // called with the observed value and that argument on a runtime thread.
        // No lock is held here.
        let again = std::panic::catch_unwind(|| unsafe { (h.func)(v, h.arg as *mut libc::c_void) })
            .unwrap_or(false);
        if again {
            HANDLERS.lock().unwrap_or_else(|e| e.into_inner()).push(h);
        }
    }
    let left = !HANDLERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty();
    (fired, left)
}
