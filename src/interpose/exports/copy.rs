//! Copies, fills, locked memory, pointer information and copy profiling.

#![allow(unsafe_code)]

use super::*;

pub(super) fn agent_index_of(rt: &runtime::Runtime, a: HsaAgent) -> Result<usize, HsaStatus> {
    Ok(Topology::agent_index(agent_of(rt, a)?))
}

/// The dependency signals of a copy; every one must be live. A count larger
/// than the signals that can exist is refused before anything is read or
/// allocated (`u32::MAX` once asked for 32 GiB, and the allocation failure
/// aborted the host).
pub(super) fn read_deps(deps: &InSlice<'_, HsaSignal>) -> Result<Vec<u64>, HsaStatus> {
    if deps.is_empty() {
        return Ok(Vec::new());
    }
    if deps.is_null() || deps.len() > signals::MAX_SIGNALS {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let mut v = Vec::new();
    for s in deps.iter() {
        sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        v.push(s.handle);
    }
    Ok(v)
}

/// A copy the runtime performs: the bytes really move, in FIFO order per
/// engine, after every dependency signal reaches 0; the completion signal is
/// then decremented by one.
pub unsafe extern "C" fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: HsaAgent,
    src: *const c_void,
    src_agent: HsaAgent,
    size: usize,
    num_deps: u32,
    deps: *const HsaSignal,
    completion: HsaSignal,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_async_copy: `deps` is null or an
    // array of `num_deps` signals, read during the call only.
    let deps = unsafe { InSlice::from_raw(deps, num_deps as usize) };
    status("hsa_amd_memory_async_copy", || {
        let rt = rt()?;
        let (d, s) = (
            agent_index_of(rt, dst_agent)?,
            agent_index_of(rt, src_agent)?,
        );
        if (dst.is_null() || src.is_null()) && size != 0 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        sig(completion).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        let deps = read_deps(&deps)?;
        let rect = runtime::copies::Rect::linear(dst as u64, src as u64, size as u64);
        let key = (d * 64 + s) as u64;
        // SAFETY: the HSA copy contract: both ranges stay valid until the
        // completion signal is decremented (submit's contract).
        if unsafe { runtime::copies::submit(key, rect, deps, completion.handle) } {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_OUT_OF_RESOURCES)
        }
    })
}

pub unsafe extern "C" fn hsa_amd_memory_async_copy_rect(
    dst: *const PitchedPtr,
    dst_offset: *const Dim3,
    src: *const PitchedPtr,
    src_offset: *const Dim3,
    range: *const Dim3,
    copy_agent: HsaAgent,
    dir: u32,
    num_deps: u32,
    deps: *const HsaSignal,
    completion: HsaSignal,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_async_copy_rect: `deps` is null or an
    // array of `num_deps` signals, read during the call only.
    let deps = unsafe { InSlice::from_raw(deps, num_deps as usize) };
    // SAFETY: the same contract: the five struct pointers are null or point
    // to the caller's structs, read during the call only.
    let (dst, dst_offset, src, src_offset, range) = unsafe {
        (
            InOpt::from_raw(dst),
            InOpt::from_raw(dst_offset),
            InOpt::from_raw(src),
            InOpt::from_raw(src_offset),
            InOpt::from_raw(range),
        )
    };
    status("hsa_amd_memory_async_copy_rect", || {
        let rt = rt()?;
        let a = agent_index_of(rt, copy_agent)?;
        let (Some(d), Some(doff), Some(s), Some(soff), Some(r)) = (
            dst.get(),
            dst_offset.get(),
            src.get(),
            src_offset.get(),
            range.get(),
        ) else {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        };
        sig(completion).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        let deps = read_deps(&deps)?;
        let (dp, ds, sp, ss) = (
            d.pitch as u64,
            d.slice as u64,
            s.pitch as u64,
            s.slice as u64,
        );
        let rect = runtime::copies::Rect {
            dst: d.base + doff.z as u64 * ds + doff.y as u64 * dp + doff.x as u64,
            dst_pitch: dp,
            dst_slice: ds,
            src: s.base + soff.z as u64 * ss + soff.y as u64 * sp + soff.x as u64,
            src_pitch: sp,
            src_slice: ss,
            width: r.x as u64,
            rows: r.y.max(1) as u64,
            slices: r.z.max(1) as u64,
        };
        let key = 0x1000 + (a as u64) * 8 + dir as u64;
        // SAFETY: the HSA copy contract: both ranges stay valid until the
        // completion signal is decremented (submit's contract).
        if unsafe { runtime::copies::submit(key, rect, deps, completion.handle) } {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_OUT_OF_RESOURCES)
        }
    })
}

pub unsafe extern "C" fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> u32 {
    status("hsa_amd_memory_fill", || {
        rt()?;
        if ptr.is_null() || (ptr as usize) % 4 != 0 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: hsa_amd_memory_fill's contract: `ptr` (checked aligned and
        // non-null) is valid for `count` words (fill_now's contract).
        unsafe { runtime::copies::fill_now(ptr as u64, value, count as u64) };
        Ok(())
    })
}

pub(super) fn lock_common(host: *mut c_void, size: usize, out: Out<'_, *mut c_void>) -> R {
    if host.is_null() || size == 0 || out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let agent = memory::lock(host as u64, size as u64).ok_or(HsaStatus::ERROR_OUT_OF_RESOURCES)?;
    out.write(agent as *mut c_void)
}

pub unsafe extern "C" fn hsa_amd_memory_lock(
    host: *mut c_void,
    size: usize,
    agents: *mut HsaAgent,
    n: i32,
    out: *mut *mut c_void,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_amd_memory_lock(host, size, agents, n, out))
            .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            pool::pass_allocated("hsa_amd_memory_lock", out, |agent| {
                passthrough::locked(host as u64, agent, size as u64, 0)
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_amd_memory_lock: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_memory_lock", || amd_memory_lock(host, size, out))
}

/// The body of `hsa_amd_memory_lock`, over its converted arguments.
fn amd_memory_lock(host: *mut c_void, size: usize, out: Out<'_, *mut c_void>) -> R {
    rt()?;
    lock_common(host, size, out)
}

pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(
    host: *mut c_void,
    size: usize,
    agents: *mut HsaAgent,
    n: i32,
    pool: u64,
    flags: u32,
    out: *mut *mut c_void,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_amd_memory_lock_to_pool(
            host, size, agents, n, pool, flags, out
        ))
        .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            pool::pass_allocated("hsa_amd_memory_lock_to_pool", out, |agent| {
                passthrough::locked(host as u64, agent, size as u64, pool)
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_amd_memory_lock_to_pool: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_memory_lock_to_pool", || {
        amd_memory_lock_to_pool(host, size, pool, out)
    })
}

/// The body of `hsa_amd_memory_lock_to_pool`, over its converted arguments.
fn amd_memory_lock_to_pool(
    host: *mut c_void,
    size: usize,
    pool: u64,
    out: Out<'_, *mut c_void>,
) -> R {
    let rt = rt()?;
    pool_of(rt, pool)?;
    lock_common(host, size, out)
}

pub unsafe extern "C" fn hsa_amd_memory_unlock(host: *mut c_void) -> u32 {
    if forward::forwarding() {
        return pool::pass_free(
            "hsa_amd_memory_unlock",
            host as u64,
            &[passthrough::Source::Locked],
            || call_real!(hsa_amd_memory_unlock(host)),
        );
    }
    status("hsa_amd_memory_unlock", || amd_memory_unlock(host))
}

/// The body of `hsa_amd_memory_unlock`, over its converted arguments.
fn amd_memory_unlock(host: *mut c_void) -> R {
    rt()?;
    if memory::unlock(host as u64) {
        Ok(())
    } else {
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    }
}

pub(super) type AllocFn = unsafe extern "C" fn(usize) -> *mut c_void;

pub unsafe extern "C" fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut PointerInfo,
    alloc: Option<AllocFn>,
    num_accessible: *mut u32,
    accessible: *mut *mut HsaAgent,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_pointer_info: `num_accessible` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let num_accessible = unsafe { Out::from_raw(num_accessible) };
    // SAFETY: the HSA contract of hsa_amd_pointer_info: `accessible` is null or points to
    // writable storage for one `*mut HsaAgent`, for the duration of the call.
    let accessible = unsafe { Out::from_raw(accessible) };
    status("hsa_amd_pointer_info", || {
        let rt = rt()?;
        if info.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: non-null; the caller sets `size` before calling.
        let caller_size = unsafe { std::ptr::addr_of!((*info).size).read_unaligned() } as usize;
        let addr = ptr as u64;
        let cpu = HsaAgent {
            handle: rt.topo.agent_handle(0),
        };
        let mut out = PointerInfo {
            size: 0,
            type_: 0,
            agent_base: 0,
            host_base: 0,
            size_in_bytes: 0,
            user_data: 0,
            agent_owner: HsaAgent::default(),
            global_flags: 0,
        };
        if let Some((base, size, pool, user)) = memory::find_allocation(addr) {
            let owner = Topology::pool_owner(pool);
            out.type_ = 1; // HSA_EXT_POINTER_TYPE_HSA
            out.agent_base = base;
            out.host_base = base;
            out.size_in_bytes = size as usize;
            out.user_data = user;
            out.agent_owner = HsaAgent {
                handle: rt.topo.agent_handle(Topology::agent_index(owner)),
            };
            out.global_flags = Topology::pool_flags(pool);
        } else if let Some(l) = memory::find_locked(addr) {
            out.type_ = 2; // HSA_EXT_POINTER_TYPE_LOCKED
            out.agent_base = l.agent;
            out.host_base = l.host;
            out.size_in_bytes = l.size as usize;
            out.agent_owner = cpu;
            out.global_flags = 2; // fine grained: host pages
        }
        let n = caller_size.min(std::mem::size_of::<PointerInfo>());
        out.size = n as u32;
        // SAFETY: the caller's struct is at least `caller_size` bytes (its own
        // `size` field says so); we write min(caller_size, ours) bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &out as *const PointerInfo as *const u8,
                info as *mut u8,
                n,
            )
        };
        if out.type_ != 0 && !num_accessible.is_null() {
            let agents: Vec<HsaAgent> = (0..rt.topo.agent_count())
                .map(|i| HsaAgent {
                    handle: rt.topo.agent_handle(i),
                })
                .collect();
            num_accessible.write(agents.len() as u32)?;
            if let (Some(alloc), false) = (alloc, accessible.is_null()) {
                // SAFETY: `alloc` is the caller's allocator, called with a byte
                // count; the returned block (checked non-null) is ours to fill
                // with that many agents and is handed to the caller.
                let block = unsafe { alloc(agents.len() * 8) } as *mut HsaAgent;
                if block.is_null() {
                    return Err(HsaStatus::ERROR_OUT_OF_RESOURCES);
                }
                for (i, a) in agents.iter().enumerate() {
                    // SAFETY: `block` holds agents.len() elements.
                    unsafe { block.add(i).write_unaligned(*a) };
                }
                accessible.write(block)?;
            }
        } else if !num_accessible.is_null() {
            num_accessible.write(0)?;
        }
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_amd_pointer_info_set_userdata(
    ptr: *const c_void,
    data: *mut c_void,
) -> u32 {
    status("hsa_amd_pointer_info_set_userdata", || {
        amd_pointer_info_set_userdata(ptr, data)
    })
}

/// The body of `hsa_amd_pointer_info_set_userdata`, over its converted arguments.
fn amd_pointer_info_set_userdata(ptr: *const c_void, data: *mut c_void) -> R {
    rt()?;
    let (base, ..) =
        memory::find_allocation(ptr as u64).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
    if memory::set_user_data(base, data as u64) {
        Ok(())
    } else {
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    }
}

pub unsafe extern "C" fn hsa_amd_profiling_async_copy_enable(_enable: bool) -> u32 {
    // Copy times are always recorded on the completion signal.
    status("hsa_amd_profiling_async_copy_enable", || rt().map(|_| ()))
}

pub unsafe extern "C" fn hsa_amd_profiling_get_async_copy_time(
    s: HsaSignal,
    out: *mut DispatchTime,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_profiling_get_async_copy_time: `out` is null or points to
    // writable storage for one `DispatchTime`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_profiling_get_async_copy_time", || {
        amd_profiling_get_async_copy_time(s, out)
    })
}

/// The body of `hsa_amd_profiling_get_async_copy_time`, over its converted arguments.
fn amd_profiling_get_async_copy_time(s: HsaSignal, out: Out<'_, DispatchTime>) -> R {
    rt()?;
    let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
    out.write(DispatchTime {
        start: slot.start_ts.load(Ordering::Acquire),
        end: slot.end_ts.load(Ordering::Acquire),
    })
}

/// Agent ticks and system ticks are the same 1 GHz domain.
pub unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: HsaAgent,
    tick: u64,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_profiling_convert_tick_to_system_domain: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_profiling_convert_tick_to_system_domain", || {
        amd_profiling_convert_tick_to_system_domain(agent, tick, out)
    })
}

/// The body of `hsa_amd_profiling_convert_tick_to_system_domain`, over its converted arguments.
fn amd_profiling_convert_tick_to_system_domain(agent: HsaAgent, tick: u64, out: Out<'_, u64>) -> R {
    let rt = rt()?;
    agent_of(rt, agent)?;
    out.write(tick)
}

/// Host memory is coherent; the only type the virtual runtime has.
pub unsafe extern "C" fn hsa_amd_coherency_get_type(agent: HsaAgent, out: *mut u32) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_coherency_get_type: `out` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_coherency_get_type", || {
        amd_coherency_get_type(agent, out)
    })
}

/// The body of `hsa_amd_coherency_get_type`, over its converted arguments.
fn amd_coherency_get_type(agent: HsaAgent, out: Out<'_, u32>) -> R {
    let rt = rt()?;
    agent_of(rt, agent)?;
    out.write(0) // HSA_AMD_COHERENCY_TYPE_COHERENT
}

pub unsafe extern "C" fn hsa_amd_coherency_set_type(agent: HsaAgent, ty: u32) -> u32 {
    status("hsa_amd_coherency_set_type", || {
        amd_coherency_set_type(agent, ty)
    })
}

/// The body of `hsa_amd_coherency_set_type`, over its converted arguments.
fn amd_coherency_set_type(agent: HsaAgent, ty: u32) -> R {
    let rt = rt()?;
    agent_of(rt, agent)?;
    if ty == 0 {
        Ok(())
    } else {
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    }
}
