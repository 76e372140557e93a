//! Signals: creation, values, waits and asynchronous handlers.

#![allow(unsafe_code)]

use super::*;

pub(super) fn sig(h: HsaSignal) -> Option<&'static signals::SignalSlot> {
    signals::lookup(h.handle)
}

/// A value operation on a handle that is not a live signal: logged, rate
/// limited per function (a program that polls a dead signal must not flood
/// the log), and answered with an error value (see `signals::ERROR_VALUE`).
macro_rules! bad_signal {
    ($name:expr, $h:expr) => {
        $crate::error_limited!(
            "softgpu: {}: {:#x} is not a live signal; refused",
            $name,
            $h.handle
        )
    };
}

pub unsafe extern "C" fn hsa_signal_create(
    initial: i64,
    _n: u32,
    _consumers: *const HsaAgent,
    out: *mut HsaSignal,
) -> u32 {
    // SAFETY: the HSA contract of hsa_signal_create: `out` is null or points to
    // writable storage for one `HsaSignal`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_signal_create", || signal_create(initial, out))
}

/// The body of `hsa_signal_create`, over its converted arguments.
fn signal_create(initial: i64, out: Out<'_, HsaSignal>) -> R {
    rt()?;
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let h = signals::create(initial).ok_or(HsaStatus::ERROR_OUT_OF_RESOURCES)?;
    out.write(HsaSignal { handle: h })
}

pub unsafe extern "C" fn hsa_amd_signal_create(
    initial: i64,
    n: u32,
    consumers: *const HsaAgent,
    _attributes: u64,
    out: *mut HsaSignal,
) -> u32 {
    // SAFETY: same contract as hsa_signal_create, forwarded as is.
    unsafe { hsa_signal_create(initial, n, consumers, out) }
}

pub unsafe extern "C" fn hsa_signal_destroy(s: HsaSignal) -> u32 {
    if forward::intercepting() && sig(s).is_none() {
        forward::note_entry();
        return call_real!(hsa_signal_destroy(s)).unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_signal_destroy", || {
        rt()?;
        if s.handle == 0 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        if let Some(slot) = sig(s) {
            if slot.doorbell_queue.load(Ordering::Acquire) != 0 {
                // A queue's doorbell belongs to the queue.
                return Err(HsaStatus::ERROR_INVALID_SIGNAL);
            }
        }
        if signals::destroy(s.handle) {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_INVALID_SIGNAL)
        }
    })
}

pub unsafe extern "C" fn hsa_amd_signal_value_pointer(s: HsaSignal, out: *mut *mut i64) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_signal_value_pointer: `out` is null or points to
    // writable storage for one `*mut i64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    if forward::intercepting() && sig(s).is_none() {
        forward::note_entry();
        return call_real!(hsa_amd_signal_value_pointer(s, out.as_raw()))
            .unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_amd_signal_value_pointer", || {
        rt()?;
        let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        out.write(slot.value.as_ptr())
    })
}

pub(super) type SignalHandler = events::HandlerFn;

pub unsafe extern "C" fn hsa_amd_signal_async_handler(
    s: HsaSignal,
    cond: u32,
    value: i64,
    handler: Option<SignalHandler>,
    arg: *mut c_void,
) -> u32 {
    status("hsa_amd_signal_async_handler", || {
        amd_signal_async_handler(s, cond, value, handler, arg)
    })
}

/// The body of `hsa_amd_signal_async_handler`, over its converted arguments.
fn amd_signal_async_handler(
    s: HsaSignal,
    cond: u32,
    value: i64,
    handler: Option<SignalHandler>,
    arg: *mut c_void,
) -> R {
    rt()?;
    let handler = handler.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
    if cond > 3 {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
    if events::register(s.handle, SignalCondition(cond), value, handler, arg) {
        Ok(())
    } else {
        Err(HsaStatus::ERROR_OUT_OF_RESOURCES)
    }
}

pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    count: u32,
    sigs: *mut HsaSignal,
    conds: *mut u32,
    values: *mut i64,
    timeout: u64,
    _wait_state: u32,
    satisfying: *mut i64,
) -> u32 {
    let n = count as usize;
    // SAFETY: the HSA contract of hsa_amd_signal_wait_any: `sigs`, `conds`
    // and `values` are null or arrays of `count` elements, read during the
    // call only, and `satisfying` is null or room for one value.
    let (sigs, conds, values, satisfying) = unsafe {
        (
            InSlice::from_raw(sigs, n),
            InSlice::from_raw(conds, n),
            InSlice::from_raw(values, n),
            Out::from_raw(satisfying),
        )
    };
    value("hsa_amd_signal_wait_any", u32::MAX, || {
        if count == 0 || sigs.is_null() || conds.is_null() || values.is_null() {
            return u32::MAX;
        }
        // No program can wait on more live signals than exist: a larger count
        // is refused before anything is read or allocated (u32::MAX once asked
        // for a 103 GB vector, and the allocation failure aborted the host).
        if count as usize > signals::MAX_SIGNALS {
            crate::error_limited!(
                "softgpu: hsa_amd_signal_wait_any: {count} signals is more than can exist ({}); refused",
                signals::MAX_SIGNALS
            );
            return u32::MAX;
        }
        let mut watch = Vec::new();
        for ((s, c), v) in sigs.iter().zip(conds.iter()).zip(values.iter()) {
            let Some(slot) = sig(s) else {
                bad_signal!("hsa_amd_signal_wait_any", s);
                return u32::MAX;
            };
            watch.push((slot, SignalCondition(c), v));
        }
        let deadline = sys::now_ns().saturating_add(timeout);
        loop {
            let seen = signals::generation();
            for (i, (slot, c, v)) in watch.iter().enumerate() {
                let cur = slot.value.load(Ordering::Acquire);
                if signals::satisfied(*c, cur, *v) {
                    // Optional: a null `satisfying` is not an error here.
                    let _ = satisfying.write(cur);
                    return i as u32;
                }
            }
            let now = sys::now_ns();
            if now >= deadline {
                return u32::MAX;
            }
            signals::sleep_until_change(seen, deadline - now, || true);
        }
    })
}

/// A value write to a signal: wakes waiters, rings the queue if it is a
/// doorbell, and lets the async handlers the write (or the packets the
/// doorbell completed) made due run before the write returns.
///
/// A doorbell store can make a handler due only by completing a packet
/// that carries a completion signal, and every completion moves the signal
/// generation: a store that completed none (a launch loop's dispatches have
/// no completion signal) does not look at the handlers, so the doorbell path
/// takes no lock for them.
#[inline]
pub(super) fn after_write(slot: &signals::SignalSlot) {
    signals::notify_change();
    if slot.doorbell_queue.load(Ordering::Relaxed) != 0 {
        if let Ok(rt) = runtime::get() {
            let before = signals::generation();
            queues::doorbell_store(slot, &rt.ctx);
            if signals::generation() == before {
                return;
            }
        }
    }
    runtime::events::let_due_handlers_run();
}

macro_rules! signal_loads {
    ($($name:ident => $ord:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(s: HsaSignal) -> i64 {
            value(stringify!($name), signals::ERROR_VALUE, || match sig(s) {
                Some(slot) => slot.value.load($ord),
                None if forward::forwarding() => {
                    forward::note_entry();
                    call_real!($name(s)).unwrap_or(signals::ERROR_VALUE)
                }
                None => { bad_signal!(stringify!($name), s); signals::ERROR_VALUE }
            })
        }
    )*};
}

signal_loads! {
    hsa_signal_load_relaxed => Ordering::Relaxed,
    hsa_signal_load_acquire => Ordering::Acquire,
    hsa_signal_load_scacquire => Ordering::Acquire,
}

macro_rules! signal_stores {
    ($($name:ident => $ord:expr, $ring:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(s: HsaSignal, v: i64) {
            value(stringify!($name), (), || match sig(s) {
                Some(slot) => {
                    slot.value.store(v, $ord);
                    if $ring { after_write(slot) } else { signals::notify_change() }
                }
                None if forward::forwarding() => {
                    forward::note_entry();
                    let real = |w: i64| {
                        let _ = call_real!($name(s, w));
                    };
                    if !($ring && forward::observing() && observe::ring(s.handle, Some(v), |w| real(w.unwrap_or(v)))) {
                        real(v);
                    }
                }
                None => bad_signal!(stringify!($name), s),
            })
        }
    )*};
}

signal_stores! {
    hsa_signal_store_relaxed => Ordering::Relaxed, true,
    hsa_signal_store_release => Ordering::Release, true,
    hsa_signal_store_screlease => Ordering::Release, true,
    hsa_signal_silent_store_relaxed => Ordering::Relaxed, false,
    hsa_signal_silent_store_screlease => Ordering::Release, false,
}

/// A read-modify-write (add, exchange, cas, ...) on a signal that is not the
/// shim's: forwarded as it is; in observe mode, when the signal is a watched
/// doorbell, after its ready packets are captured (and under that queue's
/// capture lock, see `observe::ring`).
pub(super) fn forward_write<T: Default>(handle: u64, real: impl FnOnce() -> T) -> T {
    forward::note_entry();
    let mut real = Some(real);
    let mut out = None;
    if forward::observing() {
        observe::ring(handle, None, |_| out = real.take().map(|f| f()));
    }
    match real {
        // Not a watched doorbell (or not observing): forward it here.
        Some(f) => f(),
        // Forwarded by `observe::ring`, which always forwards a None-valued call.
        None => out.unwrap_or_default(),
    }
}

macro_rules! signal_rmw {
    ($op:ident: $($name:ident => $ord:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(s: HsaSignal, v: i64) {
            value(stringify!($name), (), || match sig(s) {
                Some(slot) => {
                    slot.value.$op(v, $ord);
                    after_write(slot);
                }
                None if forward::forwarding() => forward_write(s.handle, || {
                    let _ = call_real!($name(s, v));
                }),
                None => bad_signal!(stringify!($name), s),
            })
        }
    )*};
}

signal_rmw! { fetch_add:
    hsa_signal_add_relaxed => Ordering::Relaxed, hsa_signal_add_acquire => Ordering::Acquire,
    hsa_signal_add_release => Ordering::Release, hsa_signal_add_acq_rel => Ordering::AcqRel,
    hsa_signal_add_scacquire => Ordering::Acquire, hsa_signal_add_screlease => Ordering::Release,
    hsa_signal_add_scacq_screl => Ordering::AcqRel,
}
signal_rmw! { fetch_sub:
    hsa_signal_subtract_relaxed => Ordering::Relaxed, hsa_signal_subtract_acquire => Ordering::Acquire,
    hsa_signal_subtract_release => Ordering::Release, hsa_signal_subtract_acq_rel => Ordering::AcqRel,
    hsa_signal_subtract_scacquire => Ordering::Acquire, hsa_signal_subtract_screlease => Ordering::Release,
    hsa_signal_subtract_scacq_screl => Ordering::AcqRel,
}
signal_rmw! { fetch_and:
    hsa_signal_and_relaxed => Ordering::Relaxed, hsa_signal_and_acquire => Ordering::Acquire,
    hsa_signal_and_release => Ordering::Release, hsa_signal_and_acq_rel => Ordering::AcqRel,
    hsa_signal_and_scacquire => Ordering::Acquire, hsa_signal_and_screlease => Ordering::Release,
    hsa_signal_and_scacq_screl => Ordering::AcqRel,
}
signal_rmw! { fetch_or:
    hsa_signal_or_relaxed => Ordering::Relaxed, hsa_signal_or_acquire => Ordering::Acquire,
    hsa_signal_or_release => Ordering::Release, hsa_signal_or_acq_rel => Ordering::AcqRel,
    hsa_signal_or_scacquire => Ordering::Acquire, hsa_signal_or_screlease => Ordering::Release,
    hsa_signal_or_scacq_screl => Ordering::AcqRel,
}
signal_rmw! { fetch_xor:
    hsa_signal_xor_relaxed => Ordering::Relaxed, hsa_signal_xor_acquire => Ordering::Acquire,
    hsa_signal_xor_release => Ordering::Release, hsa_signal_xor_acq_rel => Ordering::AcqRel,
    hsa_signal_xor_scacquire => Ordering::Acquire, hsa_signal_xor_screlease => Ordering::Release,
    hsa_signal_xor_scacq_screl => Ordering::AcqRel,
}

macro_rules! signal_exchange {
    ($($name:ident => $ord:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(s: HsaSignal, v: i64) -> i64 {
            value(stringify!($name), signals::ERROR_VALUE, || match sig(s) {
                Some(slot) => {
                    let old = slot.value.swap(v, $ord);
                    after_write(slot);
                    old
                }
                None if forward::forwarding() => forward_write(s.handle, || {
                    call_real!($name(s, v)).unwrap_or(signals::ERROR_VALUE)
                }),
                None => { bad_signal!(stringify!($name), s); signals::ERROR_VALUE }
            })
        }
    )*};
}

signal_exchange! {
    hsa_signal_exchange_relaxed => Ordering::Relaxed, hsa_signal_exchange_acquire => Ordering::Acquire,
    hsa_signal_exchange_release => Ordering::Release, hsa_signal_exchange_acq_rel => Ordering::AcqRel,
    hsa_signal_exchange_scacquire => Ordering::Acquire, hsa_signal_exchange_screlease => Ordering::Release,
    hsa_signal_exchange_scacq_screl => Ordering::AcqRel,
}

macro_rules! signal_cas {
    ($($name:ident => $ok:expr, $fail:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(s: HsaSignal, expected: i64, v: i64) -> i64 {
            // On error: a value other than `expected`, so the caller never
            // takes the exchange as done.
            let refused = expected.wrapping_add(1);
            value(stringify!($name), refused, || match sig(s) {
                Some(slot) => match slot.value.compare_exchange(expected, v, $ok, $fail) {
                    Ok(old) => { after_write(slot); old }
                    Err(old) => old,
                },
                None if forward::forwarding() => forward_write(s.handle, || {
                    call_real!($name(s, expected, v)).unwrap_or(refused)
                }),
                None => { bad_signal!(stringify!($name), s); refused }
            })
        }
    )*};
}

signal_cas! {
    hsa_signal_cas_relaxed => Ordering::Relaxed, Ordering::Relaxed,
    hsa_signal_cas_acquire => Ordering::Acquire, Ordering::Acquire,
    hsa_signal_cas_release => Ordering::Release, Ordering::Relaxed,
    hsa_signal_cas_acq_rel => Ordering::AcqRel, Ordering::Acquire,
    hsa_signal_cas_scacquire => Ordering::Acquire, Ordering::Acquire,
    hsa_signal_cas_screlease => Ordering::Release, Ordering::Relaxed,
    hsa_signal_cas_scacq_screl => Ordering::AcqRel, Ordering::Acquire,
}

macro_rules! signal_waits {
    ($($name:ident),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(s: HsaSignal, cond: u32, compare: i64, timeout: u64, _state: u32) -> i64 {
            // On error: a value that does not satisfy the condition.
            let refused = signals::refused_wait_value(SignalCondition(cond), compare);
            value(stringify!($name), refused, || match sig(s) {
                Some(slot) => {
                    let v = signals::wait(slot, SignalCondition(cond), compare, timeout);
                    if signals::satisfied(SignalCondition(cond), v, compare) {
                        runtime::events::let_due_handlers_run();
                    }
                    v
                }
                None if forward::forwarding() => {
                    forward::note_entry();
                    call_real!($name(s, cond, compare, timeout, _state)).unwrap_or(refused)
                }
                None => { bad_signal!(stringify!($name), s); refused }
            })
        }
    )*};
}

signal_waits!(
    hsa_signal_wait_relaxed,
    hsa_signal_wait_acquire,
    hsa_signal_wait_scacquire
);
