//! Memory pools and regions: attributes, allocation, access and registration.

#![allow(unsafe_code)]

use super::*;

pub(super) type PoolCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

/// A successful allocation forwarded to the real runtime: read back the
/// pointer it wrote and record it in the pass-through table.
pub(super) fn pass_allocated(name: &'static str, out: *mut *mut c_void, record: impl FnOnce(u64)) {
    // SAFETY: the allocating call's HSA contract: `out` is null or points to
    // storage for one pointer for the duration of the call, which the real
    // runtime has just written on success.
    let out = unsafe { Out::from_raw(out) };
    value(name, (), || {
        if let Some(p) = out.read() {
            record(p as u64);
        }
    });
}

/// A free (or unlock, unmap) forwarded to the real runtime: the pass-through
/// entry at `base` (of one of `sources`) is taken out first (draining the
/// capture writer, waiting for kernarg copies in flight), then the real
/// runtime frees; if it refuses, the entry goes back.
pub(super) fn pass_free(
    name: &'static str,
    base: u64,
    sources: &[passthrough::Source],
    free: impl FnOnce() -> Option<u32>,
) -> u32 {
    forward::note_entry();
    let removed = value(name, None, || passthrough::begin_free(base, sources));
    let st = free().unwrap_or(HsaStatus::ERROR.0);
    if st != 0 {
        if let Some(r) = removed {
            value(name, (), || passthrough::free_refused(r));
        }
    }
    st
}

pub(super) fn pool_of(rt: &runtime::Runtime, h: u64) -> Result<PoolKind, HsaStatus> {
    rt.topo.pool(h).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)
}

pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: HsaAgent,
    cb: Option<PoolCb>,
    data: *mut c_void,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        return call_real!(hsa_amd_agent_iterate_memory_pools(agent, cb, data))
            .unwrap_or(HsaStatus::ERROR.0);
    }
    status("hsa_amd_agent_iterate_memory_pools", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let pools: Vec<u64> = rt
            .topo
            .pools_of(a)
            .into_iter()
            .map(|p| rt.topo.pool_handle(p))
            .collect();
        // SAFETY: program callback with a valid pool handle and its own data.
        iterate(pools, |h| unsafe { cb(h, data) })
    })
}

/// Regions are the pools seen through the older API; an agent sees its own
/// and the system's, as in ROCr.
pub unsafe extern "C" fn hsa_agent_iterate_regions(
    agent: HsaAgent,
    cb: Option<PoolCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_agent_iterate_regions", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let regions: Vec<u64> = rt
            .topo
            .regions_of(a)
            .into_iter()
            .map(|p| rt.topo.pool_handle(p))
            .collect();
        // SAFETY: program callback with a valid region handle and its own data.
        iterate(regions, |h| unsafe { cb(h, data) })
    })
}

pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(
    pool: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_pool_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_amd_memory_pool_get_info", || {
        amd_memory_pool_get_info(pool, attr, out)
    })
}

/// The body of `hsa_amd_memory_pool_get_info`, over its converted arguments.
fn amd_memory_pool_get_info(pool: u64, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let p = pool_of(rt, pool)?;
    let r = rt.topo.pool_info(p, PoolInfo(attr));
    info_result("hsa_amd_memory_pool_get_info", attr, r, out)
}

pub unsafe extern "C" fn hsa_region_get_info(region: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_region_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_region_get_info", || region_get_info(region, attr, out))
}

/// The body of `hsa_region_get_info`, over its converted arguments.
fn region_get_info(region: u64, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let p = rt
        .topo
        .pool(region)
        .ok_or(HsaStatus::ERROR_INVALID_REGION)?;
    let r = rt.topo.region_info(p, RegionInfo(attr));
    info_result("hsa_region_get_info", attr, r, out)
}

pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: HsaAgent,
    pool: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_agent_memory_pool_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_amd_agent_memory_pool_get_info", || {
        amd_agent_memory_pool_get_info(agent, pool, attr, out)
    })
}

/// The body of `hsa_amd_agent_memory_pool_get_info`, over its converted arguments.
fn amd_agent_memory_pool_get_info(agent: HsaAgent, pool: u64, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let a = agent_of(rt, agent)?;
    let p = pool_of(rt, pool)?;
    let r = rt.topo.agent_pool_info(a, p, AgentPoolInfo(attr));
    info_result("hsa_amd_agent_memory_pool_get_info", attr, r, out)
}

pub(super) fn allocate_in(
    rt: &runtime::Runtime,
    p: PoolKind,
    size: usize,
    api: memory::AllocApi,
    out: Out<'_, *mut c_void>,
) -> R {
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let max = match rt.topo.pool_alloc_max(p) {
        0 => return Err(HsaStatus::ERROR_INVALID_ALLOCATION),
        m => m,
    };
    match memory::allocate(size, p, max, rt.topo.pool_size(p), api) {
        Ok(ptr) => out.write(ptr as *mut c_void),
        Err(memory::AllocError::ZeroSize) => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        Err(memory::AllocError::TooLarge) => Err(HsaStatus::ERROR_INVALID_ALLOCATION),
        Err(memory::AllocError::OutOfMemory) => Err(HsaStatus::ERROR_OUT_OF_RESOURCES),
    }
}

pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    pool: u64,
    size: usize,
    flags: u32,
    out: *mut *mut c_void,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_amd_memory_pool_allocate(pool, size, flags, out))
            .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            pass_allocated("hsa_amd_memory_pool_allocate", out, |p| {
                passthrough::allocated_from_pool(p, size as u64, pool)
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_amd_memory_pool_allocate: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_memory_pool_allocate", || {
        amd_memory_pool_allocate(pool, size, out)
    })
}

/// The body of `hsa_amd_memory_pool_allocate`, over its converted arguments.
fn amd_memory_pool_allocate(pool: u64, size: usize, out: Out<'_, *mut c_void>) -> R {
    let rt = rt()?;
    let p = pool_of(rt, pool)?;
    allocate_in(rt, p, size, memory::AllocApi::Pool, out)
}

pub unsafe extern "C" fn hsa_memory_allocate(
    region: u64,
    size: usize,
    out: *mut *mut c_void,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_memory_allocate(region, size, out)).unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            pass_allocated("hsa_memory_allocate", out, |p| {
                passthrough::allocated_from_region(p, size as u64, region)
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_memory_allocate: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_memory_allocate", || memory_allocate(region, size, out))
}

/// The body of `hsa_memory_allocate`, over its converted arguments.
fn memory_allocate(region: u64, size: usize, out: Out<'_, *mut c_void>) -> R {
    let rt = rt()?;
    let p = rt
        .topo
        .pool(region)
        .ok_or(HsaStatus::ERROR_INVALID_REGION)?;
    allocate_in(rt, p, size, memory::AllocApi::Region, out)
}

pub(super) fn free_ptr(ptr: *mut c_void) -> R {
    if ptr.is_null() {
        return Ok(());
    }
    // Records still in a capture ring may carry this address as a kernarg; let
    // the writer classify them (as SoftGPU memory) before the memory goes.
    if let Ok(rt) = runtime::get() {
        if let Some(c) = &rt.capture {
            if memory::owns(ptr as u64) {
                c.drain();
            }
        }
    }
    if memory::free(ptr as usize) {
        Ok(())
    } else {
        // ROCr's `Runtime::FreeMemory`: an address not in its allocation map
        // (never allocated, or freed already) is INVALID_ALLOCATION.
        tracing::warn!("softgpu: free of {ptr:p}, which is not a live SoftGPU allocation");
        Err(HsaStatus::ERROR_INVALID_ALLOCATION)
    }
}

/// The pass-through sources a pool or region free takes out (ROCr frees
/// either kind with either function).
const FREED_BY_FREE: &[passthrough::Source] =
    &[passthrough::Source::Pool, passthrough::Source::Region];

pub unsafe extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> u32 {
    if forward::forwarding() {
        return pass_free(
            "hsa_amd_memory_pool_free",
            ptr as u64,
            FREED_BY_FREE,
            || call_real!(hsa_amd_memory_pool_free(ptr)),
        );
    }
    status("hsa_amd_memory_pool_free", || free_ptr(ptr))
}

pub unsafe extern "C" fn hsa_memory_free(ptr: *mut c_void) -> u32 {
    if forward::forwarding() {
        return pass_free("hsa_memory_free", ptr as u64, FREED_BY_FREE, || {
            call_real!(hsa_memory_free(ptr))
        });
    }
    status("hsa_memory_free", || free_ptr(ptr))
}

/// Every pool is host memory, visible to every agent, so a grant changes
/// nothing the program can see; it is recorded on the allocation for the
/// pointer checker (`pointer_no_access`, docs/KERNEL_ARGUMENTS.md).
pub unsafe extern "C" fn hsa_amd_agents_allow_access(
    n: u32,
    agents: *const HsaAgent,
    _flags: *const u32,
    ptr: *const c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_agents_allow_access: `agents` is
    // null or an array of `n` agents, read during the call only.
    let agents = unsafe { InSlice::from_raw(agents, n as usize) };
    status("hsa_amd_agents_allow_access", || {
        amd_agents_allow_access(agents, ptr)
    })
}

/// The body of `hsa_amd_agents_allow_access`, over its converted arguments.
fn amd_agents_allow_access(agents: InSlice<'_, HsaAgent>, ptr: *const c_void) -> R {
    let rt = rt()?;
    if agents.is_empty() || agents.is_null() || ptr.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let mut granted = Vec::with_capacity(agents.len());
    for a in agents.iter() {
        let kind = agent_of(rt, a)?;
        granted.push(runtime::agents::Topology::agent_index(kind) as u32);
    }
    memory::grant(ptr as u64, &granted);
    Ok(())
}

/// Registration pins host memory for a device; host memory needs no pinning here.
pub unsafe extern "C" fn hsa_memory_register(ptr: *mut c_void, size: usize) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_memory_register(ptr, size)).unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            value("hsa_memory_register", (), || {
                passthrough::registered(ptr as u64, size as u64)
            });
        }
        return st;
    }
    status("hsa_memory_register", || memory_register(ptr, size))
}

/// The body of `hsa_memory_register`, over its converted arguments.
fn memory_register(ptr: *mut c_void, size: usize) -> R {
    rt()?;
    if ptr.is_null() || size == 0 {
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    } else {
        Ok(())
    }
}

pub unsafe extern "C" fn hsa_memory_deregister(ptr: *mut c_void, size: usize) -> u32 {
    if forward::forwarding() {
        return pass_free(
            "hsa_memory_deregister",
            ptr as u64,
            &[passthrough::Source::Registered],
            || call_real!(hsa_memory_deregister(ptr, size)),
        );
    }
    status("hsa_memory_deregister", || memory_deregister(ptr))
}

/// The body of `hsa_memory_deregister`, over its converted arguments.
fn memory_deregister(ptr: *mut c_void) -> R {
    rt()?;
    if ptr.is_null() {
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    } else {
        Ok(())
    }
}

pub unsafe extern "C" fn hsa_memory_assign_agent(
    ptr: *mut c_void,
    agent: HsaAgent,
    _access: u32,
) -> u32 {
    status("hsa_memory_assign_agent", || {
        memory_assign_agent(ptr, agent)
    })
}

/// The body of `hsa_memory_assign_agent`, over its converted arguments.
fn memory_assign_agent(ptr: *mut c_void, agent: HsaAgent) -> R {
    let rt = rt()?;
    agent_of(rt, agent)?;
    if ptr.is_null() {
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    } else {
        Ok(())
    }
}

/// A copy the runtime performs itself: the bytes really move (host memcpy).
pub unsafe extern "C" fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> u32 {
    status("hsa_memory_copy", || {
        rt()?;
        if size == 0 {
            return Ok(());
        }
        if dst.is_null() || src.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // Agent addresses of locked memory are inaccessible reservations:
        // `copy_now` translates them back to the host pages first.
        let rect = runtime::copies::Rect::linear(dst as u64, src as u64, size as u64);
        // SAFETY: HSA requires both ranges to be valid for `size` bytes, as
        // host memory or as agent addresses of locked memory, which
        // `copy_now` translates (copy_now's contract).
        unsafe { runtime::copies::copy_now(&rect) };
        Ok(())
    })
}

/// IPC export of an allocation (`hipIpcGetMemHandle`; RCCL makes one for every
/// peer buffer, even when its peers are GPUs of its own process). The virtual
/// runtime shares the allocation's pages through a memory file and answers a
/// handle naming it (`memory::ipc_handle`: `ptr` the base of an allocation,
/// `len` its size), which another process of the same user on this machine
/// attaches. Over a real runtime the table sends this straight to it.
pub unsafe extern "C" fn hsa_amd_ipc_memory_create(
    ptr: *mut c_void,
    len: usize,
    handle: *mut c_void,
) -> u32 {
    // SAFETY: HSA requires `handle` to point at an `hsa_amd_ipc_memory_t`,
    // eight 32-bit words, or be null.
    let out = unsafe { Out::from_raw(handle.cast::<[u32; 8]>()) };
    status("hsa_amd_ipc_memory_create", || {
        rt()?;
        if out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let words =
            memory::ipc_handle(ptr as u64, len as u64).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        out.write(words)
    })
}

/// IPC attach: in the virtual runtime, maps the memory file a handle of
/// `hsa_amd_ipc_memory_create` names (in this or another process of the same
/// user); over a real runtime, forwarded, and the mapping recorded in the
/// pass-through allocation table.
pub unsafe extern "C" fn hsa_amd_ipc_memory_attach(
    handle: *const c_void,
    len: usize,
    n: u32,
    agents: *const HsaAgent,
    mapped: *mut *mut c_void,
) -> u32 {
    if !forward::forwarding() {
        // SAFETY: HSA requires `handle` to point at an `hsa_amd_ipc_memory_t`
        // (eight 32-bit words) or be null, `agents` at `n` agents or be null,
        // and `mapped` at writable storage for one pointer or be null.
        let (h, list, out) = unsafe {
            (
                InOpt::from_raw(handle.cast::<[u32; 8]>()),
                InSlice::from_raw(agents, n as usize),
                Out::from_raw(mapped),
            )
        };
        return status("hsa_amd_ipc_memory_attach", || {
            let rt = rt()?;
            let h = h.get().ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
            if out.is_null() || (n > 0 && list.is_null()) {
                return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
            }
            for a in list.iter() {
                agent_of(rt, a)?;
            }
            match memory::attach(&h, len as u64) {
                Ok(p) => out.write(p as *mut c_void),
                Err(e) => {
                    tracing::warn!(
                        "softgpu: hsa_amd_ipc_memory_attach: {}; returning HSA_STATUS_ERROR_INVALID_ARGUMENT",
                        match e {
                            memory::AttachError::NotAHandle =>
                                "not an IPC handle of SoftGPU's virtual runtime, or len exceeds it",
                            memory::AttachError::Gone =>
                                "the exporting process or its allocation is gone (or not this user's)",
                            memory::AttachError::OutOfMemory => "the mapping failed",
                        }
                    );
                    Err(HsaStatus::ERROR_INVALID_ARGUMENT)
                }
            }
        });
    }
    forward::note_entry();
    let st = call_real!(hsa_amd_ipc_memory_attach(handle, len, n, agents, mapped))
        .unwrap_or(HsaStatus::ERROR.0);
    if st == 0 {
        pass_allocated("hsa_amd_ipc_memory_attach", mapped, |p| {
            passthrough::ipc_attached(p, len as u64)
        });
    }
    st
}

/// IPC detach: as [`hsa_amd_ipc_memory_attach`]; an address it did not
/// return is INVALID_ARGUMENT, as in ROCr.
pub unsafe extern "C" fn hsa_amd_ipc_memory_detach(mapped: *mut c_void) -> u32 {
    if !forward::forwarding() {
        return status("hsa_amd_ipc_memory_detach", || {
            rt()?;
            if memory::detach(mapped as u64) {
                Ok(())
            } else {
                Err(HsaStatus::ERROR_INVALID_ARGUMENT)
            }
        });
    }
    pass_free(
        "hsa_amd_ipc_memory_detach",
        mapped as u64,
        &[passthrough::Source::Ipc],
        || call_real!(hsa_amd_ipc_memory_detach(mapped)),
    )
}

/// A deallocation callback as the C boundary passes it.
type DeallocCallback = Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>;

/// ROCr's semantics: `ptr` anywhere inside a live allocation; the callback
/// runs on the thread that frees it, before the memory goes.
pub unsafe extern "C" fn hsa_amd_register_deallocation_callback(
    ptr: *mut c_void,
    callback: DeallocCallback,
    user_data: *mut c_void,
) -> u32 {
    status("hsa_amd_register_deallocation_callback", || {
        rt()?;
        let cb = callback.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        if ptr.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        if memory::register_dealloc(ptr as u64, cb, user_data as u64) {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_INVALID_ALLOCATION)
        }
    })
}

pub unsafe extern "C" fn hsa_amd_deregister_deallocation_callback(
    ptr: *mut c_void,
    callback: DeallocCallback,
) -> u32 {
    status("hsa_amd_deregister_deallocation_callback", || {
        rt()?;
        let cb = callback.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        if !ptr.is_null() && memory::deregister_dealloc(ptr as u64, cb) {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
    })
}
