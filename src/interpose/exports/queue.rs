//! Queues: creation (virtual, intercept, observe), index operations, CU masks, priority and dispatch profiling.

#![allow(unsafe_code)]

use super::*;

pub(super) type QueueErrorCb = unsafe extern "C" fn(u32, *mut c_void, *mut c_void);

pub unsafe extern "C" fn hsa_queue_create(
    agent: HsaAgent,
    size: u32,
    queue_type: u32,
    callback: Option<QueueErrorCb>,
    data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_queue_create: `out` is null or points to
    // writable storage for one `*mut c_void`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_queue_create", || {
        let rt = rt()?;
        if rt.mode != Mode::Virtual {
            forward::note_entry();
            // SAFETY: the program's own arguments, passed on unchanged.
            return unsafe {
                queue_create_forwarding(
                    rt,
                    agent,
                    size,
                    queue_type,
                    callback,
                    data,
                    _private_segment_size,
                    _group_segment_size,
                    out,
                )
            };
        }
        let a = agent_of(rt, agent)?;
        let AgentKind::Gpu(_) = a else {
            return Err(HsaStatus::ERROR_INVALID_QUEUE_CREATION);
        };
        let on_error = error_callback(callback, data);
        let q = shim_queue(
            rt,
            size,
            queue_type,
            Topology::agent_index(a) as u32,
            on_error,
            &out,
        )?;
        out.write(q.slot() as *const queues::QueueSlot as *mut c_void)
    })
}

/// The program's error callback for a queue the shim owns: the event thread
/// calls it once for each rejected packet, with the status ROCr reports for
/// the defect (`Reason::queue_status`), the queue and `data`.
fn error_callback(
    callback: Option<QueueErrorCb>,
    data: *mut c_void,
) -> Option<queues::ErrorCallback> {
    callback.map(|func| queues::ErrorCallback {
        func,
        data: data as usize,
    })
}

/// A queue the shim owns, on the agent with capture index `agent_index`.
/// A cooperative queue is shared: it keeps the error callback of the
/// `hsa_queue_create` that made it.
pub(super) fn shim_queue(
    rt: &'static runtime::Runtime,
    size: u32,
    queue_type: u32,
    agent_index: u32,
    on_error: Option<queues::ErrorCallback>,
    out: &Out<'_, *mut c_void>,
) -> Result<&'static queues::VirtualQueue, HsaStatus> {
    use crate::abi::queue_type;
    // As ROCr's hsa_queue_create: a power-of-two size for every queue type.
    if out.is_null() || !size.is_power_of_two() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let make = |size: u32, ty: u32| {
        queues::create(size, ty, agent_index, rt.lower, on_error, |id| {
            rt.capture
                .as_ref()
                .map(|c| c.register_queue(id, agent_index, size, sys::now_ns()))
        })
        .map_err(|e| {
            tracing::warn!("softgpu: hsa_queue_create failed: {e:?}");
            HsaStatus::ERROR_OUT_OF_RESOURCES
        })
    };
    match queue_type {
        // ROCr's GWS queue: one per agent, shared by every cooperative create,
        // of ROCr's own size (the requested one is ignored, as ROCr ignores it).
        queue_type::COOPERATIVE => queues::cooperative(agent_index, || {
            make(queues::COOPERATIVE_QUEUE_SIZE, queue_type::COOPERATIVE)
        }),
        queue_type::MULTI | queue_type::SINGLE => {
            let limits =
                crate::runtime::agents::QUEUE_MIN_SIZE..=crate::runtime::agents::QUEUE_MAX_SIZE;
            if !limits.contains(&size) {
                return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
            }
            make(size, queue_type)
        }
        _ => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
    }
}

/// `hsa_queue_create` over a real runtime. Intercept: a queue on a real GPU
/// agent is the shim's own (ring in host memory, a doorbell the shim
/// recognises); anything else goes to the real runtime. Observe: the real
/// runtime creates the queue and the shim watches its doorbell.
///
/// # Safety
/// `callback` and `data` are the program's own, under `hsa_queue_create`'s
/// contract: they are passed to the real runtime unchanged.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn queue_create_forwarding(
    rt: &'static runtime::Runtime,
    agent: HsaAgent,
    size: u32,
    queue_type: u32,
    callback: Option<QueueErrorCb>,
    data: *mut c_void,
    private_segment_size: u32,
    group_segment_size: u32,
    out: Out<'_, *mut c_void>,
) -> R {
    let gpu_index = rt
        .real_agents
        .iter()
        .position(|a| a.gpu && a.handle == agent.handle)
        .map(|i| i as u32);
    let forward_it = || {
        let st = call_real!(hsa_queue_create(
            agent,
            size,
            queue_type,
            callback,
            data,
            private_segment_size,
            group_segment_size,
            out.as_raw()
        ))
        .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 { Ok(()) } else { Err(HsaStatus(st)) }
    };
    match (rt.mode, gpu_index) {
        (Mode::Intercept, Some(agent_index)) => {
            let on_error = error_callback(callback, data);
            let q = shim_queue(rt, size, queue_type, agent_index, on_error, &out)?;
            tracing::debug!(
                queue = q.queue_id(),
                "softgpu: intercept: the shim owns the queue created on real agent {:#x}",
                agent.handle
            );
            out.write(q.slot() as *const queues::QueueSlot as *mut c_void)
        }
        (Mode::Observe, Some(agent_index)) => {
            forward_it()?;
            if let Some(q) = out.read() {
                // SAFETY: the real hsa_queue_create succeeded and wrote this
                // queue pointer to the program's out-parameter: a live queue
                // of the real runtime, which our hsa_queue_destroy unregisters
                // before destroying it (register's contract).
                unsafe { observe::register(q, agent_index) };
            }
            Ok(())
        }
        _ => forward_it(),
    }
}

pub unsafe extern "C" fn hsa_queue_destroy(q: *mut c_void) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        if forward::observing() {
            observe::unregister(q);
        }
        return call_real!(hsa_queue_destroy(q)).unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_queue_destroy", || {
        rt()?;
        let vq = queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        // Its error callback has been called for every packet rejected so
        // far, as ROCr's queue destructor waits for its error handler.
        runtime::events::settle_queue_errors(vq, std::time::Duration::from_secs(1));
        queues::release(vq);
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_queue_inactivate(q: *mut c_void) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        return call_real!(hsa_queue_inactivate(q)).unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_queue_inactivate", || {
        rt()?;
        queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        // Nothing executes, so there is no in-flight work to abandon; the queue
        // keeps accepting packets, which HSA allows after inactivation.
        Ok(())
    })
}

/// The read index a load answers when it cannot read a live queue: 0, which
/// claims that nothing was consumed.
pub(super) const REFUSED_READ_INDEX: u64 = 0;
/// The write index a load or `add_write_index` answers when it cannot act on
/// a live queue: an index no queue ever reaches, so no two producers are ever
/// handed the same slot (a fallback of 0 did that).
pub(super) const REFUSED_WRITE_INDEX: u64 = u64::MAX;

/// An index operation on a shim queue; `None` when `q` is not one (the
/// caller forwards it in intercept mode). `refused` is what the export
/// answers on an error (a forged or destroyed queue, an internal panic).
pub(super) fn queue_field(
    name: &'static str,
    q: *const c_void,
    f: impl FnOnce(&AtomicU64) -> u64,
    write: bool,
    refused: u64,
) -> Option<u64> {
    value(name, Some(refused), || match queues::lookup(q as u64) {
        Some(vq) => Some(f(if write {
            &vq.slot().write_dispatch_id
        } else {
            &vq.slot().read_dispatch_id
        })),
        None if forward::forwarding() => {
            forward::note_entry();
            None
        }
        None => {
            crate::error_limited!("softgpu: {name}: {q:p} is not a live SoftGPU queue; refused");
            Some(refused)
        }
    })
}

macro_rules! queue_loads {
    ($($name:ident => $write:expr, $ord:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(q: *const c_void) -> u64 {
            let refused = if $write { REFUSED_WRITE_INDEX } else { REFUSED_READ_INDEX };
            queue_field(stringify!($name), q, |a| a.load($ord), $write, refused).unwrap_or_else(|| {
                call_real!($name(q)).unwrap_or(refused)
            })
        }
    )*};
}

queue_loads! {
    hsa_queue_load_read_index_relaxed => false, Ordering::Relaxed,
    hsa_queue_load_read_index_acquire => false, Ordering::Acquire,
    hsa_queue_load_read_index_scacquire => false, Ordering::Acquire,
    hsa_queue_load_write_index_relaxed => true, Ordering::Relaxed,
    hsa_queue_load_write_index_acquire => true, Ordering::Acquire,
    hsa_queue_load_write_index_scacquire => true, Ordering::Acquire,
}

macro_rules! queue_stores {
    ($($name:ident => $write:expr, $ord:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(q: *const c_void, v: u64) {
            // void: an error is surfaced by the (rate-limited) log line only.
            if queue_field(stringify!($name), q, |a| { a.store(v, $ord); 0 }, $write, 0).is_none() {
                let _ = call_real!($name(q, v));
            }
        }
    )*};
}

queue_stores! {
    hsa_queue_store_read_index_relaxed => false, Ordering::Relaxed,
    hsa_queue_store_read_index_release => false, Ordering::Release,
    hsa_queue_store_read_index_screlease => false, Ordering::Release,
    hsa_queue_store_write_index_relaxed => true, Ordering::Relaxed,
    hsa_queue_store_write_index_release => true, Ordering::Release,
    hsa_queue_store_write_index_screlease => true, Ordering::Release,
}

macro_rules! queue_adds {
    ($($name:ident => $ord:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(q: *const c_void, v: u64) -> u64 {
            queue_field(stringify!($name), q, |a| a.fetch_add(v, $ord), true, REFUSED_WRITE_INDEX).unwrap_or_else(|| {
                call_real!($name(q, v)).unwrap_or(REFUSED_WRITE_INDEX)
            })
        }
    )*};
}

queue_adds! {
    hsa_queue_add_write_index_relaxed => Ordering::Relaxed,
    hsa_queue_add_write_index_acquire => Ordering::Acquire,
    hsa_queue_add_write_index_release => Ordering::Release,
    hsa_queue_add_write_index_acq_rel => Ordering::AcqRel,
    hsa_queue_add_write_index_scacquire => Ordering::Acquire,
    hsa_queue_add_write_index_screlease => Ordering::Release,
    hsa_queue_add_write_index_scacq_screl => Ordering::AcqRel,
}

macro_rules! queue_cas {
    ($($name:ident => $ok:expr, $fail:expr),* $(,)?) => {$(
        pub unsafe extern "C" fn $name(q: *const c_void, expected: u64, v: u64) -> u64 {
            // On error: a value other than `expected`, so no caller takes the
            // exchange as done.
            let refused = !expected;
            queue_field(stringify!($name), q, |a| match a.compare_exchange(expected, v, $ok, $fail) {
                Ok(o) | Err(o) => o,
            }, true, refused).unwrap_or_else(|| {
                call_real!($name(q, expected, v)).unwrap_or(refused)
            })
        }
    )*};
}

queue_cas! {
    hsa_queue_cas_write_index_relaxed => Ordering::Relaxed, Ordering::Relaxed,
    hsa_queue_cas_write_index_acquire => Ordering::Acquire, Ordering::Acquire,
    hsa_queue_cas_write_index_release => Ordering::Release, Ordering::Relaxed,
    hsa_queue_cas_write_index_acq_rel => Ordering::AcqRel, Ordering::Acquire,
    hsa_queue_cas_write_index_scacquire => Ordering::Acquire, Ordering::Acquire,
    hsa_queue_cas_write_index_screlease => Ordering::Release, Ordering::Relaxed,
    hsa_queue_cas_write_index_scacq_screl => Ordering::AcqRel, Ordering::Acquire,
}

/// Times are when the processor took the packet and when it completed it under
/// the diagnostic contract: they measure SoftGPU, never a kernel.
pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: HsaAgent,
    s: HsaSignal,
    out: *mut DispatchTime,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_profiling_get_dispatch_time: `out` is null or points to
    // writable storage for one `DispatchTime`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_profiling_get_dispatch_time", || {
        amd_profiling_get_dispatch_time(agent, s, out)
    })
}

/// The body of `hsa_amd_profiling_get_dispatch_time`, over its converted arguments.
fn amd_profiling_get_dispatch_time(agent: HsaAgent, s: HsaSignal, out: Out<'_, DispatchTime>) -> R {
    let rt = rt()?;
    agent_of(rt, agent)?;
    let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
    let end = slot.end_ts.load(Ordering::Acquire);
    let start = slot.start_ts.load(Ordering::Acquire);
    out.write(DispatchTime {
        start: if start == 0 { end } else { start },
        end,
    })
}

pub unsafe extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    q: *mut c_void,
    _enable: i32,
) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        return call_real!(hsa_amd_profiling_set_profiler_enabled(q, _enable))
            .unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_amd_profiling_set_profiler_enabled", || {
        rt()?;
        queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_amd_queue_cu_set_mask(
    q: *const c_void,
    count: u32,
    mask: *const u32,
) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        return call_real!(hsa_amd_queue_cu_set_mask(q, count, mask)).unwrap_or(HsaStatus::ERROR.0);
    }
    // SAFETY: the HSA contract of hsa_amd_queue_cu_set_mask: `mask` is null
    // or `count` bits, `count / 32` words, read during the call only.
    let mask = unsafe { InSlice::from_raw(mask, (count / 32) as usize) };
    status("hsa_amd_queue_cu_set_mask", || {
        let rt = rt()?;
        let vq = queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        if count == 0 || count % 32 != 0 || mask.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // Only the words that cover the agent's CUs are kept (ROCr ignores
        // the bits past them too), so a huge count allocates nothing.
        let cus = rt
            .topo
            .gpus
            .first()
            .map_or(0, |d| d.facts.compute_units.value as usize);
        let words: Vec<u32> = mask.iter().take(cus.div_ceil(32).max(1)).collect();
        *vq.cu_mask.lock().unwrap_or_else(|e| e.into_inner()) = words;
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_amd_queue_cu_get_mask(
    q: *const c_void,
    count: u32,
    mask: *mut u32,
) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        return call_real!(hsa_amd_queue_cu_get_mask(q, count, mask)).unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_amd_queue_cu_get_mask", || {
        let rt = rt()?;
        let vq = queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        if count == 0 || count % 32 != 0 || mask.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let stored = vq.cu_mask.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let cus = rt
            .topo
            .gpus
            .first()
            .map_or(0, |d| d.facts.compute_units.value as u32);
        for i in 0..(count / 32) as usize {
            let w = stored.get(i).copied().unwrap_or_else(|| {
                // No mask set: every CU of the agent is enabled.
                let lo = i as u32 * 32;
                if cus >= lo + 32 {
                    u32::MAX
                } else if cus > lo {
                    (1u32 << (cus - lo)) - 1
                } else {
                    0
                }
            });
            // SAFETY: the caller passes room for count/32 words.
            unsafe { mask.add(i).write_unaligned(w) };
        }
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_amd_queue_set_priority(q: *mut c_void, priority: u32) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        return call_real!(hsa_amd_queue_set_priority(q, priority)).unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_amd_queue_set_priority", || {
        rt()?;
        let vq = queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        if priority > 2 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        vq.priority.store(priority, Ordering::Relaxed);
        Ok(())
    })
}
