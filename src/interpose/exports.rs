//! Implemented exports: C argument conversion around the virtual runtime.
//!
//! Conventions: every pointer argument is checked for null before use; handles
//! are looked up (forged or stale ones give the matching `INVALID_*` status);
//! out-parameters are written only on success.

#![allow(clippy::missing_safety_doc)]

use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::{status, value};
use crate::abi::{HsaAgent, HsaSignal, HsaStatus, SignalCondition};
use crate::runtime::agents::{AgentKind, Info, InfoError, PoolKind, Topology};
use crate::runtime::{self, events, memory, queues, signals, sys};

type R = Result<(), HsaStatus>;

/// Write `info` to `out`, which the caller sized for the attribute's C type.
fn write_info(out: *mut c_void, info: &Info) -> R {
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let bytes = info.to_bytes();
    // SAFETY: `out` is non-null and, by the HSA contract for this attribute,
    // points to writable storage of the attribute's C type, whose size is
    // exactly `bytes.len()` (Info values are built with the C sizes). The
    // source is our own Vec, so the ranges cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out as *mut u8, bytes.len()) };
    Ok(())
}

/// Write one plain value to an out-pointer.
fn write_out<T: Copy>(out: *mut T, v: T) -> R {
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    // SAFETY: non-null and, by the HSA contract, a valid writable `T`.
    unsafe { out.write_unaligned(v) };
    Ok(())
}

fn info_result(name: &'static str, attr: u32, r: Result<Info, InfoError>, out: *mut c_void) -> R {
    match r {
        Ok(i) => write_info(out, &i),
        Err(InfoError::BadHandle) => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        Err(InfoError::Unsupported) | Err(InfoError::Special) => {
            tracing::warn!(
                "softgpu: {name}: attribute {attr:#x} is not answered by the virtual runtime; returning HSA_STATUS_ERROR_INVALID_ARGUMENT"
            );
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
    }
}

fn rt() -> Result<&'static runtime::Runtime, HsaStatus> {
    runtime::get()
}

fn agent_of(rt: &runtime::Runtime, a: HsaAgent) -> Result<AgentKind, HsaStatus> {
    rt.topo
        .agent(a.handle)
        .ok_or(HsaStatus::ERROR_INVALID_AGENT)
}

// ---------------------------------------------------------------- lifecycle

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_init() -> u32 {
    status("hsa_init", runtime::init)
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_shut_down() -> u32 {
    status("hsa_shut_down", runtime::shut_down)
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_status_string(st: u32, out: *mut *const c_char) -> u32 {
    status("hsa_status_string", || {
        let s: &'static CStr = match HsaStatus(st) {
            HsaStatus::SUCCESS => c"HSA_STATUS_SUCCESS: The function has been executed successfully.",
            HsaStatus::INFO_BREAK => c"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application.",
            HsaStatus::ERROR => c"HSA_STATUS_ERROR: A generic error has occurred (SoftGPU: see the softgpu log line naming the function).",
            HsaStatus::ERROR_INVALID_ARGUMENT => c"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition.",
            HsaStatus::ERROR_INVALID_QUEUE_CREATION => c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue cannot be created.",
            HsaStatus::ERROR_INVALID_ALLOCATION => c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.",
            HsaStatus::ERROR_INVALID_AGENT => c"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.",
            HsaStatus::ERROR_INVALID_REGION => c"HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.",
            HsaStatus::ERROR_INVALID_SIGNAL => c"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.",
            HsaStatus::ERROR_INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.",
            HsaStatus::ERROR_OUT_OF_RESOURCES => c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
            HsaStatus::ERROR_INVALID_PACKET_FORMAT => c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.",
            HsaStatus::ERROR_RESOURCE_FREE => c"HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.",
            HsaStatus::ERROR_NOT_INITIALIZED => c"HSA_STATUS_ERROR_NOT_INITIALIZED: The runtime has not been initialized.",
            HsaStatus::ERROR_REFCOUNT_OVERFLOW => c"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The runtime reference count overflowed.",
            HsaStatus::ERROR_INCOMPATIBLE_ARGUMENTS => c"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments are not compatible.",
            HsaStatus::ERROR_INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.",
            HsaStatus::ERROR_INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
            HsaStatus::ERROR_INVALID_ISA_NAME => c"HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid.",
            HsaStatus::ERROR_INVALID_CODE_OBJECT => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.",
            HsaStatus::ERROR_INVALID_EXECUTABLE => c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.",
            HsaStatus::ERROR_FROZEN_EXECUTABLE => c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.",
            HsaStatus::ERROR_INVALID_SYMBOL_NAME => c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.",
            HsaStatus::ERROR_EXCEPTION => c"HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.",
            HsaStatus::ERROR_INVALID_FILE => c"HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.",
            HsaStatus::ERROR_INVALID_CODE_OBJECT_READER => c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.",
            HsaStatus::ERROR_INVALID_RUNTIME_STATE => c"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The runtime is in an invalid state.",
            HsaStatus::ERROR_FATAL => c"HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.",
            _ => return Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        };
        write_out(out, s.as_ptr())
    })
}

// ---------------------------------------------------------------- system

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_system_get_info(attr: u32, out: *mut c_void) -> u32 {
    status("hsa_system_get_info", || {
        let rt = rt()?;
        match rt.topo.system_info(attr, sys::now_ns()) {
            Err(InfoError::Special) => write_out(
                out as *mut *const c_char,
                crate::runtime::agents::BUILD_VERSION.as_ptr(),
            ),
            r => info_result("hsa_system_get_info", attr, r, out),
        }
    })
}

fn extension_supported(ext: u16) -> bool {
    matches!(
        ext,
        crate::runtime::agents::EXT_IMAGES | crate::runtime::agents::EXT_AMD_LOADER
    )
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_system_extension_supported(
    ext: u16,
    major: u16,
    _minor: u16,
    out: *mut bool,
) -> u32 {
    status("hsa_system_extension_supported", || {
        rt()?;
        write_out(out, extension_supported(ext) && major == 1)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_system_major_extension_supported(
    ext: u16,
    major: u16,
    minor: *mut u16,
    out: *mut bool,
) -> u32 {
    status("hsa_system_major_extension_supported", || {
        rt()?;
        let ok = extension_supported(ext) && major == 1;
        if ok {
            write_out(minor, 0)?;
        }
        write_out(out, ok)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_agent_extension_supported(
    ext: u16,
    agent: HsaAgent,
    major: u16,
    _minor: u16,
    out: *mut bool,
) -> u32 {
    status("hsa_agent_extension_supported", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        write_out(
            out,
            matches!(a, AgentKind::Gpu(_)) && extension_supported(ext) && major == 1,
        )
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_agent_major_extension_supported(
    ext: u16,
    agent: HsaAgent,
    major: u16,
    minor: *mut u16,
    out: *mut bool,
) -> u32 {
    status("hsa_agent_major_extension_supported", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let ok = matches!(a, AgentKind::Gpu(_)) && extension_supported(ext) && major == 1;
        if ok {
            write_out(minor, 0)?;
        }
        write_out(out, ok)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_extension_get_name(ext: u16, out: *mut *const c_char) -> u32 {
    status("hsa_extension_get_name", || {
        let s: &'static CStr = match ext {
            0 => c"HSA_EXTENSION_FINALIZER",
            1 => c"HSA_EXTENSION_IMAGES",
            2 => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
            3 => c"HSA_EXTENSION_PROFILING_EVENTS",
            0x200 => c"HSA_EXTENSION_AMD_PROFILER",
            0x201 => c"HSA_EXTENSION_AMD_LOADER",
            0x202 => c"HSA_EXTENSION_AMD_AQLPROFILE",
            _ => return Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        };
        write_out(out, s.as_ptr())
    })
}

// ---------------------------------------------------------------- agents

type AgentCb = unsafe extern "C" fn(HsaAgent, *mut c_void) -> u32;

/// Run an iteration callback; INFO_BREAK stops with success, an error stops with it.
fn iterate<T>(items: impl IntoIterator<Item = T>, mut call: impl FnMut(T) -> u32) -> R {
    for it in items {
        match call(it) {
            0 => {}
            1 => return Ok(()), // HSA_STATUS_INFO_BREAK
            e => return Err(HsaStatus(e)),
        }
    }
    Ok(())
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_iterate_agents(cb: Option<AgentCb>, data: *mut c_void) -> u32 {
    status("hsa_iterate_agents", || {
        let rt = rt()?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        iterate(0..rt.topo.agent_count(), |i| {
            // SAFETY: `cb` is the program's callback, called with a valid agent
            // handle and the program's own `data`, as hsa_iterate_agents promises.
            unsafe {
                cb(
                    HsaAgent {
                        handle: rt.topo.agent_handle(i),
                    },
                    data,
                )
            }
        })
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_agent_get_info(agent: HsaAgent, attr: u32, out: *mut c_void) -> u32 {
    status("hsa_agent_get_info", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        match rt.topo.agent_info(a, attr) {
            Err(InfoError::Special) => {
                // HDP_FLUSH: two pointers to memory the program may write.
                let p0 = crate::runtime::agents::HDP_WORDS[0].as_ptr() as usize;
                let p1 = crate::runtime::agents::HDP_WORDS[1].as_ptr() as usize;
                let mut b = Vec::with_capacity(16);
                b.extend_from_slice(&p0.to_le_bytes());
                b.extend_from_slice(&p1.to_le_bytes());
                write_info(out, &Info::Bytes(b))
            }
            r => info_result("hsa_agent_get_info", attr, r, out),
        }
    })
}

type IsaCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_agent_iterate_isas(
    agent: HsaAgent,
    cb: Option<IsaCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_agent_iterate_isas", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let isas: Vec<u64> = match a {
            AgentKind::Cpu => vec![],
            AgentKind::Gpu(g) => vec![rt.topo.isa_handle(g)],
        };
        // SAFETY: program callback with a valid ISA handle and its own data.
        iterate(isas, |h| unsafe { cb(h, data) })
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_isa_get_info_alt(isa: u64, attr: u32, out: *mut c_void) -> u32 {
    status("hsa_isa_get_info_alt", || {
        let rt = rt()?;
        let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        info_result("hsa_isa_get_info_alt", attr, rt.topo.isa_info(d, attr), out)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_isa_get_info(
    isa: u64,
    attr: u32,
    index: u32,
    out: *mut c_void,
) -> u32 {
    status("hsa_isa_get_info", || {
        if index != 0 {
            return Err(HsaStatus::ERROR_INVALID_INDEX);
        }
        let rt = rt()?;
        let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        info_result("hsa_isa_get_info", attr, rt.topo.isa_info(d, attr), out)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_isa_from_name(name: *const c_char, out: *mut u64) -> u32 {
    status("hsa_isa_from_name", || {
        let rt = rt()?;
        if name.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: non-null, and HSA requires a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| HsaStatus::ERROR_INVALID_ISA_NAME)?;
        let g = rt
            .topo
            .gpus
            .iter()
            .position(|d| d.isa_name == name)
            .ok_or(HsaStatus::ERROR_INVALID_ISA_NAME)?;
        write_out(out, rt.topo.isa_handle(g))
    })
}

// ---------------------------------------------------------------- memory

type PoolCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

fn pool_of(rt: &runtime::Runtime, h: u64) -> Result<PoolKind, HsaStatus> {
    rt.topo.pool(h).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: HsaAgent,
    cb: Option<PoolCb>,
    data: *mut c_void,
) -> u32 {
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

/// Regions are the pools seen through the older API.
#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_agent_iterate_regions(
    agent: HsaAgent,
    cb: Option<PoolCb>,
    data: *mut c_void,
) -> u32 {
    // SAFETY: same contract as hsa_amd_agent_iterate_memory_pools, forwarded as is.
    unsafe { hsa_amd_agent_iterate_memory_pools(agent, cb, data) }
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(
    pool: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    status("hsa_amd_memory_pool_get_info", || {
        let rt = rt()?;
        let p = pool_of(rt, pool)?;
        info_result(
            "hsa_amd_memory_pool_get_info",
            attr,
            rt.topo.pool_info(p, attr),
            out,
        )
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_region_get_info(region: u64, attr: u32, out: *mut c_void) -> u32 {
    status("hsa_region_get_info", || {
        let rt = rt()?;
        let p = rt
            .topo
            .pool(region)
            .ok_or(HsaStatus::ERROR_INVALID_REGION)?;
        // Region attributes share numbers with pool attributes, except the
        // region flag KERNARG (1) and ALLOC_MAX_PRIVATE_WORKGROUP_SIZE.
        let r = match attr {
            1 => rt.topo.pool_info(p, 1).map(|i| match i {
                Info::U32(f) => Info::U32(f & 0b110 | u32::from(f & 1 != 0)),
                o => o,
            }),
            4 => rt.topo.pool_info(p, 16),
            8 => Ok(Info::U32(0)),
            _ => rt.topo.pool_info(p, attr),
        };
        info_result("hsa_region_get_info", attr, r, out)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: HsaAgent,
    pool: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    status("hsa_amd_agent_memory_pool_get_info", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let p = pool_of(rt, pool)?;
        info_result(
            "hsa_amd_agent_memory_pool_get_info",
            attr,
            rt.topo.agent_pool_info(a, p, attr),
            out,
        )
    })
}

fn allocate_in(rt: &runtime::Runtime, p: PoolKind, size: usize, out: *mut *mut c_void) -> R {
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let max = match rt.topo.pool_info(p, 16) {
        Ok(Info::U64(m)) if m > 0 => m,
        _ => return Err(HsaStatus::ERROR_INVALID_ALLOCATION),
    };
    match memory::allocate(size, p, max) {
        Ok(ptr) => write_out(out, ptr as *mut c_void),
        Err(memory::AllocError::ZeroSize) => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        Err(memory::AllocError::TooLarge) => Err(HsaStatus::ERROR_INVALID_ALLOCATION),
        Err(memory::AllocError::OutOfMemory) => Err(HsaStatus::ERROR_OUT_OF_RESOURCES),
    }
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    pool: u64,
    size: usize,
    _flags: u32,
    out: *mut *mut c_void,
) -> u32 {
    status("hsa_amd_memory_pool_allocate", || {
        let rt = rt()?;
        let p = pool_of(rt, pool)?;
        allocate_in(rt, p, size, out)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_memory_allocate(
    region: u64,
    size: usize,
    out: *mut *mut c_void,
) -> u32 {
    status("hsa_memory_allocate", || {
        let rt = rt()?;
        let p = rt
            .topo
            .pool(region)
            .ok_or(HsaStatus::ERROR_INVALID_REGION)?;
        allocate_in(rt, p, size, out)
    })
}

fn free_ptr(ptr: *mut c_void) -> R {
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
        tracing::warn!("softgpu: free of {ptr:p}, which SoftGPU did not allocate");
        Err(HsaStatus::ERROR_INVALID_ARGUMENT)
    }
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> u32 {
    status("hsa_amd_memory_pool_free", || free_ptr(ptr))
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_memory_free(ptr: *mut c_void) -> u32 {
    status("hsa_memory_free", || free_ptr(ptr))
}

/// Every pool is host memory, visible to every agent: access grants are
/// checked and then have nothing to change.
#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_agents_allow_access(
    n: u32,
    agents: *const HsaAgent,
    _flags: *const u32,
    ptr: *const c_void,
) -> u32 {
    status("hsa_amd_agents_allow_access", || {
        let rt = rt()?;
        if n == 0 || agents.is_null() || ptr.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        for i in 0..n as usize {
            // SAFETY: the caller passes an array of `n` agents.
            let a = unsafe { agents.add(i).read_unaligned() };
            agent_of(rt, a)?;
        }
        Ok(())
    })
}

/// Registration pins host memory for a device; host memory needs no pinning here.
#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_memory_register(ptr: *mut c_void, size: usize) -> u32 {
    status("hsa_memory_register", || {
        rt()?;
        if ptr.is_null() || size == 0 {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        } else {
            Ok(())
        }
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_memory_deregister(ptr: *mut c_void, _size: usize) -> u32 {
    status("hsa_memory_deregister", || {
        rt()?;
        if ptr.is_null() {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        } else {
            Ok(())
        }
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_memory_assign_agent(
    ptr: *mut c_void,
    agent: HsaAgent,
    _access: u32,
) -> u32 {
    status("hsa_memory_assign_agent", || {
        let rt = rt()?;
        agent_of(rt, agent)?;
        if ptr.is_null() {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        } else {
            Ok(())
        }
    })
}

/// A copy the runtime performs itself: the bytes really move (host memcpy).
#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_memory_copy(dst: *mut c_void, src: *const c_void, size: usize) -> u32 {
    status("hsa_memory_copy", || {
        rt()?;
        if size == 0 {
            return Ok(());
        }
        if dst.is_null() || src.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: every virtual-runtime address is host memory; HSA requires
        // both ranges to be valid for `size` bytes. `copy` tolerates overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) };
        Ok(())
    })
}

// ---------------------------------------------------------------- signals

fn sig(h: HsaSignal) -> Option<&'static signals::SignalSlot> {
    signals::lookup(h.handle)
}

fn bad_signal(name: &'static str, h: HsaSignal) {
    tracing::error!(
        "softgpu: {name}: {:#x} is not a live signal; ignored",
        h.handle
    );
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_signal_create(
    initial: i64,
    _n: u32,
    _consumers: *const HsaAgent,
    out: *mut HsaSignal,
) -> u32 {
    status("hsa_signal_create", || {
        rt()?;
        if out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let h = signals::create(initial).ok_or(HsaStatus::ERROR_OUT_OF_RESOURCES)?;
        write_out(out, HsaSignal { handle: h })
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
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

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_signal_destroy(s: HsaSignal) -> u32 {
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

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_signal_value_pointer(
    s: HsaSignal,
    out: *mut *const AtomicI64,
) -> u32 {
    status("hsa_amd_signal_value_pointer", || {
        rt()?;
        let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        write_out(out, &slot.value as *const AtomicI64)
    })
}

type SignalHandler = events::HandlerFn;

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_signal_async_handler(
    s: HsaSignal,
    cond: u32,
    value: i64,
    handler: Option<SignalHandler>,
    arg: *mut c_void,
) -> u32 {
    status("hsa_amd_signal_async_handler", || {
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
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    count: u32,
    sigs: *const HsaSignal,
    conds: *const u32,
    values: *const i64,
    timeout: u64,
    _wait_state: u32,
    satisfying: *mut i64,
) -> u32 {
    value("hsa_amd_signal_wait_any", u32::MAX, || {
        if count == 0 || sigs.is_null() || conds.is_null() || values.is_null() {
            return u32::MAX;
        }
        let mut watch = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            // SAFETY: the caller passes three arrays of `count` elements.
            let (s, c, v) = unsafe {
                (
                    sigs.add(i).read_unaligned(),
                    conds.add(i).read_unaligned(),
                    values.add(i).read_unaligned(),
                )
            };
            let Some(slot) = sig(s) else {
                bad_signal("hsa_amd_signal_wait_any", s);
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
                    if !satisfying.is_null() {
                        // SAFETY: non-null out-parameter provided by the caller.
                        unsafe { satisfying.write_unaligned(cur) };
                    }
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

/// A value write to a signal: wakes waiters, and rings the queue if it is a doorbell.
#[inline]
fn after_write(slot: &signals::SignalSlot) {
    signals::notify_change();
    if slot.doorbell_queue.load(Ordering::Relaxed) != 0 {
        if let Ok(rt) = runtime::get() {
            queues::doorbell_store(slot, &rt.ctx);
        }
    }
}

macro_rules! signal_loads {
    ($($name:ident => $ord:expr),* $(,)?) => {$(
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(s: HsaSignal) -> i64 {
            value(stringify!($name), 0, || match sig(s) {
                Some(slot) => slot.value.load($ord),
                None => { bad_signal(stringify!($name), s); 0 }
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(s: HsaSignal, v: i64) {
            value(stringify!($name), (), || match sig(s) {
                Some(slot) => {
                    slot.value.store(v, $ord);
                    if $ring { after_write(slot) } else { signals::notify_change() }
                }
                None => bad_signal(stringify!($name), s),
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

macro_rules! signal_rmw {
    ($op:ident: $($name:ident => $ord:expr),* $(,)?) => {$(
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(s: HsaSignal, v: i64) {
            value(stringify!($name), (), || match sig(s) {
                Some(slot) => {
                    slot.value.$op(v, $ord);
                    after_write(slot);
                }
                None => bad_signal(stringify!($name), s),
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(s: HsaSignal, v: i64) -> i64 {
            value(stringify!($name), 0, || match sig(s) {
                Some(slot) => {
                    let old = slot.value.swap(v, $ord);
                    after_write(slot);
                    old
                }
                None => { bad_signal(stringify!($name), s); 0 }
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(s: HsaSignal, expected: i64, v: i64) -> i64 {
            value(stringify!($name), 0, || match sig(s) {
                Some(slot) => match slot.value.compare_exchange(expected, v, $ok, $fail) {
                    Ok(old) => { after_write(slot); old }
                    Err(old) => old,
                },
                None => { bad_signal(stringify!($name), s); 0 }
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(s: HsaSignal, cond: u32, compare: i64, timeout: u64, _state: u32) -> i64 {
            value(stringify!($name), 0, || match sig(s) {
                Some(slot) => signals::wait(slot, SignalCondition(cond), compare, timeout),
                None => { bad_signal(stringify!($name), s); 0 }
            })
        }
    )*};
}

signal_waits!(
    hsa_signal_wait_relaxed,
    hsa_signal_wait_acquire,
    hsa_signal_wait_scacquire
);

// ---------------------------------------------------------------- queues

type QueueErrorCb = unsafe extern "C" fn(u32, *mut c_void, *mut c_void);

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_queue_create(
    agent: HsaAgent,
    size: u32,
    queue_type: u32,
    _callback: Option<QueueErrorCb>,
    _data: *mut c_void,
    _private_segment_size: u32,
    _group_segment_size: u32,
    out: *mut *mut c_void,
) -> u32 {
    status("hsa_queue_create", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let AgentKind::Gpu(_) = a else {
            return Err(HsaStatus::ERROR_INVALID_QUEUE_CREATION);
        };
        let limits =
            crate::runtime::agents::QUEUE_MIN_SIZE..=crate::runtime::agents::QUEUE_MAX_SIZE;
        if out.is_null() || !size.is_power_of_two() || !limits.contains(&size) {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        if queue_type > crate::abi::queue_type::SINGLE {
            tracing::warn!(
                "softgpu: hsa_queue_create: queue type {queue_type} (cooperative) is not modelled"
            );
            return Err(HsaStatus::ERROR_INVALID_QUEUE_CREATION);
        }
        let agent_index = Topology::agent_index(a) as u32;
        let q = queues::create(size, queue_type, agent_index, |id| {
            rt.capture
                .as_ref()
                .map(|c| c.register_queue(id, agent_index, size, sys::now_ns()))
        })
        .map_err(|e| {
            tracing::warn!("softgpu: hsa_queue_create failed: {e:?}");
            HsaStatus::ERROR_OUT_OF_RESOURCES
        })?;
        write_out(out, q.slot as *const queues::QueueSlot as *mut c_void)
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_queue_destroy(q: *mut c_void) -> u32 {
    status("hsa_queue_destroy", || {
        rt()?;
        let vq = queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        vq.destroy();
        Ok(())
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_queue_inactivate(q: *mut c_void) -> u32 {
    status("hsa_queue_inactivate", || {
        rt()?;
        queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        // Nothing executes, so there is no in-flight work to abandon; the queue
        // keeps accepting packets, which HSA allows after inactivation.
        Ok(())
    })
}

fn queue_field(
    name: &'static str,
    q: *const c_void,
    f: impl FnOnce(&AtomicU64) -> u64,
    write: bool,
) -> u64 {
    value(name, 0, || match queues::lookup(q as u64) {
        Some(vq) => f(if write {
            &vq.slot.write_dispatch_id
        } else {
            &vq.slot.read_dispatch_id
        }),
        None => {
            tracing::error!("softgpu: {name}: {q:p} is not a live SoftGPU queue");
            0
        }
    })
}

macro_rules! queue_loads {
    ($($name:ident => $write:expr, $ord:expr),* $(,)?) => {$(
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(q: *const c_void) -> u64 {
            queue_field(stringify!($name), q, |a| a.load($ord), $write)
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(q: *const c_void, v: u64) {
            queue_field(stringify!($name), q, |a| { a.store(v, $ord); 0 }, $write);
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(q: *const c_void, v: u64) -> u64 {
            queue_field(stringify!($name), q, |a| a.fetch_add(v, $ord), true)
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
        #[cfg_attr(not(test), unsafe(no_mangle))]
        pub unsafe extern "C" fn $name(q: *const c_void, expected: u64, v: u64) -> u64 {
            queue_field(stringify!($name), q, |a| match a.compare_exchange(expected, v, $ok, $fail) {
                Ok(o) | Err(o) => o,
            }, true)
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

// ---------------------------------------------------------------- profiling

/// `hsa_amd_profiling_dispatch_time_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DispatchTime {
    pub start: u64,
    pub end: u64,
}

/// Times are when the processor took the packet and when it completed it under
/// the diagnostic contract: they measure SoftGPU, never a kernel.
#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: HsaAgent,
    s: HsaSignal,
    out: *mut DispatchTime,
) -> u32 {
    status("hsa_amd_profiling_get_dispatch_time", || {
        let rt = rt()?;
        agent_of(rt, agent)?;
        let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        let end = slot.end_ts.load(Ordering::Acquire);
        let start = slot.start_ts.load(Ordering::Acquire);
        write_out(
            out,
            DispatchTime {
                start: if start == 0 { end } else { start },
                end,
            },
        )
    })
}

#[cfg_attr(not(test), unsafe(no_mangle))]
pub unsafe extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    q: *mut c_void,
    _enable: i32,
) -> u32 {
    status("hsa_amd_profiling_set_profiler_enabled", || {
        rt()?;
        queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        Ok(())
    })
}
