//! Deferred completion (`SOFTGPU_COMPLETION=thread`): completion signals are
//! decremented by a separate thread, in processing order, optionally after a
//! per-packet delay (`SOFTGPU_COMPLETION_DELAY_US`). This exercises a
//! program's real wait paths, which inline completion (the default) can hide:
//! with inline completion a signal is already 0 by the time the doorbell store
//! returns.
//!
//! The processor still records, invalidates the slot and advances `read_index`
//! inline; only the signal decrement moves here.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{signals, sys};

struct Pending {
    signal: u64,
    due_ns: u64,
}

static QUEUE: Mutex<VecDeque<Pending>> = Mutex::new(VecDeque::new());
static BELL: AtomicU32 = AtomicU32::new(0);

/// Defer the completion of `signal` by `delay_ns`. Falls back to completing
/// inline if the thread cannot be started.
pub fn defer(signal: u64, delay_ns: u64) {
    let ok = crate::lifecycle::helper_thread(crate::lifecycle::Helper::Completion, || {
        crate::sys::spawn_shielded(
            std::thread::Builder::new().name("softgpu-complete".into()),
            run,
        )
        .map_err(|e| {
            tracing::error!("softgpu: cannot start the completion thread: {e}; completing inline")
        })
        .is_ok()
    });
    if !ok {
        complete(signal);
        return;
    }
    let due_ns = sys::now_ns().saturating_add(delay_ns);
    QUEUE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push_back(Pending { signal, due_ns });
    BELL.fetch_add(1, Ordering::SeqCst);
    sys::futex_wake_all(&BELL);
}

/// Complete `signal`: one of ours, or (intercept mode) the real runtime's,
/// through its own subtract. No lock is held here.
fn complete(signal: u64) {
    match signals::lookup(signal) {
        Some(s) => signals::complete(s, sys::now_ns()),
        None if crate::lifecycle::intercepting() => {
            if let Some(b) = crate::real::below() {
                // SAFETY: not one of ours, and in intercept mode every other
                // completion signal is the real runtime's (the program's HSA
                // contract for the packet or copy that named it).
                unsafe { b.signal_complete(signal) }
            }
        }
        None => {}
    }
}

fn run() {
    loop {
        let seen = BELL.load(Ordering::SeqCst);
        let next = QUEUE
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .front()
            .map(|p| (p.signal, p.due_ns));
        let Some((signal, due)) = next else {
            sys::futex_wait(&BELL, seen, 100_000_000);
            continue;
        };
        let now = sys::now_ns();
        if now < due {
            std::thread::sleep(std::time::Duration::from_nanos(due - now));
        }
        QUEUE.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        complete(signal);
    }
}
