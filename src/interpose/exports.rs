//! Implemented exports: C argument conversion around the virtual runtime.
//!
//! Conventions: every pointer argument is checked for null before use; handles
//! are looked up (forged or stale ones give the matching `INVALID_*` status);
//! out-parameters are written only on success.
//!
//! The functions here carry their C names but ordinary Rust symbols: the
//! `hsa_*` ELF symbols, versioned `ROCR_1`, are aliases made in
//! [`super::entry_points!`], so the table there is the single export list.

#![allow(clippy::missing_safety_doc)]

use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use super::args::{CStrArg, InOpt, InSlice, InfoOut, Out, OutWords};
use super::forward::{self, call_real};
use super::{observe, status, value};
use crate::abi::{
    AccessDesc, AgentInfo, AgentPoolInfo, CacheInfo, Dim3, DispatchTime, ExecutableInfo, HsaAgent,
    HsaSignal, HsaStatus, IsaInfo, PitchedPtr, PointerInfo, PoolInfo, RegionInfo, SignalCondition,
    SymbolInfo, SystemInfo, WavefrontInfo,
};
use crate::config::Mode;
use crate::runtime::agents::{AgentKind, CacheId, Info, InfoError, PoolKind, Topology};
use crate::runtime::{self, events, memory, queues, signals, sys};

// The image extension's exports live in `interpose::images`; the entry-point
// table reaches every implemented export through this module.
pub use super::images::{
    hsa_amd_image_create, hsa_amd_image_get_info_max_dim, hsa_ext_image_clear, hsa_ext_image_copy,
    hsa_ext_image_create, hsa_ext_image_create_with_layout, hsa_ext_image_data_get_info,
    hsa_ext_image_data_get_info_with_layout, hsa_ext_image_destroy, hsa_ext_image_export,
    hsa_ext_image_get_capability, hsa_ext_image_get_capability_with_layout, hsa_ext_image_import,
    hsa_ext_sampler_create, hsa_ext_sampler_destroy,
};

type R = Result<(), HsaStatus>;

/// Say once per (function, attribute) that an attribute is not answered.
fn unanswered(name: &'static str, attr: u32) {
    static SEEN: std::sync::Mutex<std::collections::BTreeSet<(&'static str, u32)>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    if SEEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((name, attr))
    {
        tracing::warn!(
            "softgpu: {name}: attribute {attr:#x} is not answered for this object (ROCr does not answer it either); returning HSA_STATUS_ERROR_INVALID_ARGUMENT"
        );
    }
}

/// Write an info answer, or turn its error into a status. Every answer has
/// the width ROCr writes (checked in `runtime::agents`), so the write never
/// goes past a buffer sized as ROCr's callers size it.
fn info_result(name: &'static str, attr: u32, r: Result<Info, InfoError>, out: InfoOut<'_>) -> R {
    match r {
        Ok(i) => out.write(&i),
        Err(InfoError::BadHandle) => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        Err(InfoError::Unsupported) => {
            unanswered(name, attr);
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
        Err(InfoError::Width { got, want }) => {
            tracing::error!(
                "softgpu: {name}: internal error: the answer for attribute {attr:#x} has {got} bytes, ROCr writes {want}; nothing written, returning HSA_STATUS_ERROR"
            );
            Err(HsaStatus::ERROR)
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

pub unsafe extern "C" fn hsa_init() -> u32 {
    if forward::inside_real_call() {
        // The real runtime (or a tools library its hsa_init loads) calls
        // hsa_init back while our own first hsa_init is under way: answer at
        // once from the real runtime, never re-entering our initialisation.
        forward::REENTRIES.fetch_add(1, Ordering::Relaxed);
        return forward::real_init();
    }
    status("hsa_init", runtime::init)
}

pub unsafe extern "C" fn hsa_shut_down() -> u32 {
    if forward::inside_real_call() {
        forward::REENTRIES.fetch_add(1, Ordering::Relaxed);
        return forward::real_shut_down();
    }
    status("hsa_shut_down", runtime::shut_down)
}

pub unsafe extern "C" fn hsa_status_string(st: u32, out: *mut *const c_char) -> u32 {
    // SAFETY: the HSA contract of hsa_status_string: `out` is null or points to
    // writable storage for one `*const c_char`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
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
            crate::runtime::images::status::FORMAT_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED: The agent does not support this image format and geometry.",
            crate::runtime::images::status::SIZE_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED: An image dimension exceeds the agent's limit for the geometry.",
            crate::runtime::images::status::PITCH_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED: The row or slice pitch does not match the linear layout.",
            crate::runtime::images::status::SAMPLER_DESCRIPTOR_UNSUPPORTED => c"HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED: The sampler descriptor is not supported.",
            _ => return Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        };
        out.write(s.as_ptr())
    })
}

// ---------------------------------------------------------------- system

pub unsafe extern "C" fn hsa_system_get_info(attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_system_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_system_get_info", || {
        let rt = rt()?;
        let r = rt.topo.system_info(SystemInfo(attr), sys::now_ns());
        info_result("hsa_system_get_info", attr, r, out)
    })
}

fn extension_supported(ext: u16) -> bool {
    matches!(
        ext,
        crate::runtime::agents::EXT_IMAGES | crate::runtime::agents::EXT_AMD_LOADER
    )
}

pub unsafe extern "C" fn hsa_system_extension_supported(
    ext: u16,
    major: u16,
    _minor: u16,
    out: *mut bool,
) -> u32 {
    // SAFETY: the HSA contract of hsa_system_extension_supported: `out` is null or points to
    // writable storage for one `bool`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_system_extension_supported", || {
        rt()?;
        out.write(extension_supported(ext) && major == 1)
    })
}

pub unsafe extern "C" fn hsa_system_major_extension_supported(
    ext: u16,
    major: u16,
    minor: *mut u16,
    out: *mut bool,
) -> u32 {
    // SAFETY: the HSA contract of hsa_system_major_extension_supported: `minor` is null or points to
    // writable storage for one `u16`, for the duration of the call.
    let minor = unsafe { Out::from_raw(minor) };
    // SAFETY: the HSA contract of hsa_system_major_extension_supported: `out` is null or points to
    // writable storage for one `bool`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_system_major_extension_supported", || {
        rt()?;
        let ok = extension_supported(ext) && major == 1;
        if ok {
            minor.write(0)?;
        }
        out.write(ok)
    })
}

pub unsafe extern "C" fn hsa_agent_extension_supported(
    ext: u16,
    agent: HsaAgent,
    major: u16,
    _minor: u16,
    out: *mut bool,
) -> u32 {
    // SAFETY: the HSA contract of hsa_agent_extension_supported: `out` is null or points to
    // writable storage for one `bool`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_agent_extension_supported", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        out.write(matches!(a, AgentKind::Gpu(_)) && extension_supported(ext) && major == 1)
    })
}

pub unsafe extern "C" fn hsa_agent_major_extension_supported(
    ext: u16,
    agent: HsaAgent,
    major: u16,
    minor: *mut u16,
    out: *mut bool,
) -> u32 {
    // SAFETY: the HSA contract of hsa_agent_major_extension_supported: `minor` is null or points to
    // writable storage for one `u16`, for the duration of the call.
    let minor = unsafe { Out::from_raw(minor) };
    // SAFETY: the HSA contract of hsa_agent_major_extension_supported: `out` is null or points to
    // writable storage for one `bool`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_agent_major_extension_supported", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let ok = matches!(a, AgentKind::Gpu(_)) && extension_supported(ext) && major == 1;
        if ok {
            minor.write(0)?;
        }
        out.write(ok)
    })
}

pub unsafe extern "C" fn hsa_extension_get_name(ext: u16, out: *mut *const c_char) -> u32 {
    // SAFETY: the HSA contract of hsa_extension_get_name: `out` is null or points to
    // writable storage for one `*const c_char`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
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
        out.write(s.as_ptr())
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

pub unsafe extern "C" fn hsa_iterate_agents(cb: Option<AgentCb>, data: *mut c_void) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        return call_real!(hsa_iterate_agents(cb, data)).unwrap_or(HsaStatus::ERROR.0);
    }
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

pub unsafe extern "C" fn hsa_agent_get_info(agent: HsaAgent, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_agent_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_agent_get_info", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let r = rt.topo.agent_info(a, AgentInfo(attr));
        info_result("hsa_agent_get_info", attr, r, out)
    })
}

type IsaCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

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

pub unsafe extern "C" fn hsa_isa_get_info_alt(isa: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_get_info_alt: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_isa_get_info_alt", || {
        let rt = rt()?;
        let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        let r = rt.topo.isa_info(d, IsaInfo(attr));
        info_result("hsa_isa_get_info_alt", attr, r, out)
    })
}

pub unsafe extern "C" fn hsa_isa_get_info(
    isa: u64,
    attr: u32,
    index: u32,
    out: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_isa_get_info", || {
        if index != 0 {
            return Err(HsaStatus::ERROR_INVALID_INDEX);
        }
        let rt = rt()?;
        let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        let r = rt.topo.isa_info(d, IsaInfo(attr));
        info_result("hsa_isa_get_info", attr, r, out)
    })
}

pub unsafe extern "C" fn hsa_isa_from_name(name: *const c_char, out: *mut u64) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_from_name: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    // SAFETY: the same contract: `name` is null or NUL-terminated, readable
    // for the call.
    let name = unsafe { CStrArg::from_raw(name) };
    status("hsa_isa_from_name", || {
        let rt = rt()?;
        let name = name.to_str(HsaStatus::ERROR_INVALID_ISA_NAME)?;
        let g = rt
            .topo
            .gpus
            .iter()
            .position(|d| d.isa_name == name)
            .ok_or(HsaStatus::ERROR_INVALID_ISA_NAME)?;
        out.write(rt.topo.isa_handle(g))
    })
}

type CacheCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

/// An agent's caches, in ROCr's order (see `Topology::caches`).
pub unsafe extern "C" fn hsa_agent_iterate_caches(
    agent: HsaAgent,
    cb: Option<CacheCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_agent_iterate_caches", || {
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let caches: Vec<u64> = (0..rt.topo.caches(a).len())
            .map(|index| rt.topo.cache_handle(CacheId { agent: a, index }))
            .collect();
        // SAFETY: program callback with a valid cache handle and its own data.
        iterate(caches, |h| unsafe { cb(h, data) })
    })
}

pub unsafe extern "C" fn hsa_cache_get_info(cache: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_cache_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_cache_get_info", || {
        let rt = rt()?;
        let c = rt.topo.cache(cache).ok_or(HsaStatus::ERROR_INVALID_CACHE)?;
        let r = rt.topo.cache_info(c, CacheInfo(attr));
        info_result("hsa_cache_get_info", attr, r, out)
    })
}

/// `hsa_profile_t` values ROCr accepts.
fn check_profile(profile: u32) -> R {
    match profile {
        0 | 1 => Ok(()),
        _ => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
    }
}

/// No exception policy is supported: ROCr answers an empty mask.
pub unsafe extern "C" fn hsa_agent_get_exception_policies(
    agent: HsaAgent,
    profile: u32,
    mask: *mut u16,
) -> u32 {
    // SAFETY: the HSA contract of hsa_agent_get_exception_policies: `mask` is null or points to
    // writable storage for one `u16`, for the duration of the call.
    let mask = unsafe { Out::from_raw(mask) };
    status("hsa_agent_get_exception_policies", || {
        let rt = rt()?;
        check_profile(profile)?;
        agent_of(rt, agent)?;
        mask.write(0)
    })
}

pub unsafe extern "C" fn hsa_isa_get_exception_policies(
    isa: u64,
    profile: u32,
    mask: *mut u16,
) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_get_exception_policies: `mask` is null or points to
    // writable storage for one `u16`, for the duration of the call.
    let mask = unsafe { Out::from_raw(mask) };
    status("hsa_isa_get_exception_policies", || {
        let rt = rt()?;
        check_profile(profile)?;
        rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        mask.write(0)
    })
}

/// ROCr answers HSA_ROUND_METHOD_SINGLE for every type and flush mode.
pub unsafe extern "C" fn hsa_isa_get_round_method(
    isa: u64,
    fp_type: u32,
    flush_mode: u32,
    out: *mut u32,
) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_get_round_method: `out` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_isa_get_round_method", || {
        let rt = rt()?;
        if !matches!(fp_type, 1 | 2 | 4) || !matches!(flush_mode, 1 | 2) {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        out.write(1) // HSA_ROUND_METHOD_SINGLE
    })
}

/// Wavefront handles: one per ISA, tagged like the other handles.
const WAVEFRONT_TAG: u64 = 0x5347_5700_0000_0000; // "SGW"

type WavefrontCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

pub unsafe extern "C" fn hsa_isa_iterate_wavefronts(
    isa: u64,
    cb: Option<WavefrontCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_isa_iterate_wavefronts", || {
        let rt = rt()?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        let wf = WAVEFRONT_TAG | (isa & 0xff_ffff_ffff);
        // SAFETY: program callback with a valid wavefront handle and its own data.
        iterate([wf], |h| unsafe { cb(h, data) })
    })
}

/// `HSA_WAVEFRONT_INFO_SIZE` (a uint32_t store): the ISA's wavefront size.
pub unsafe extern "C" fn hsa_wavefront_get_info(
    wavefront: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_wavefront_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_wavefront_get_info", || {
        let rt = rt()?;
        if wavefront & 0xffff_ff00_0000_0000 != WAVEFRONT_TAG {
            return Err(HsaStatus::ERROR_INVALID_WAVEFRONT);
        }
        let isa = rt.topo.isa_handle((wavefront & 0xff_ffff_ffff) as usize);
        let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_WAVEFRONT)?;
        let r = match WavefrontInfo(attr) {
            WavefrontInfo::SIZE => Ok(Info::U32(d.facts.wavefront_size.value as u32)),
            _ => Err(InfoError::Unsupported),
        };
        info_result("hsa_wavefront_get_info", attr, r, out)
    })
}

/// Two ISAs are compatible when they are the same target (each virtual ISA
/// is one processor with fixed features).
pub unsafe extern "C" fn hsa_isa_compatible(code_isa: u64, agent_isa: u64, out: *mut bool) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_compatible: `out` is null or points to
    // writable storage for one `bool`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_isa_compatible", || {
        let rt = rt()?;
        if out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let a = rt.topo.isa(code_isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        let b = rt.topo.isa(agent_isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
        out.write(a.id == b.id)
    })
}

// ---------------------------------------------------------------- memory

type PoolCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

fn pool_of(rt: &runtime::Runtime, h: u64) -> Result<PoolKind, HsaStatus> {
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
        let rt = rt()?;
        let p = pool_of(rt, pool)?;
        let r = rt.topo.pool_info(p, PoolInfo(attr));
        info_result("hsa_amd_memory_pool_get_info", attr, r, out)
    })
}

pub unsafe extern "C" fn hsa_region_get_info(region: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_region_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_region_get_info", || {
        let rt = rt()?;
        let p = rt
            .topo
            .pool(region)
            .ok_or(HsaStatus::ERROR_INVALID_REGION)?;
        let r = rt.topo.region_info(p, RegionInfo(attr));
        info_result("hsa_region_get_info", attr, r, out)
    })
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
        let rt = rt()?;
        let a = agent_of(rt, agent)?;
        let p = pool_of(rt, pool)?;
        let r = rt.topo.agent_pool_info(a, p, AgentPoolInfo(attr));
        info_result("hsa_amd_agent_memory_pool_get_info", attr, r, out)
    })
}

fn allocate_in(rt: &runtime::Runtime, p: PoolKind, size: usize, out: Out<'_, *mut c_void>) -> R {
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let max = match rt.topo.pool_alloc_max(p) {
        0 => return Err(HsaStatus::ERROR_INVALID_ALLOCATION),
        m => m,
    };
    match memory::allocate(size, p, max) {
        Ok(ptr) => out.write(ptr as *mut c_void),
        Err(memory::AllocError::ZeroSize) => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        Err(memory::AllocError::TooLarge) => Err(HsaStatus::ERROR_INVALID_ALLOCATION),
        Err(memory::AllocError::OutOfMemory) => Err(HsaStatus::ERROR_OUT_OF_RESOURCES),
    }
}

pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    pool: u64,
    size: usize,
    _flags: u32,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_pool_allocate: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_memory_pool_allocate", || {
        let rt = rt()?;
        let p = pool_of(rt, pool)?;
        allocate_in(rt, p, size, out)
    })
}

pub unsafe extern "C" fn hsa_memory_allocate(
    region: u64,
    size: usize,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_memory_allocate: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
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

pub unsafe extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> u32 {
    status("hsa_amd_memory_pool_free", || free_ptr(ptr))
}

pub unsafe extern "C" fn hsa_memory_free(ptr: *mut c_void) -> u32 {
    status("hsa_memory_free", || free_ptr(ptr))
}

/// Every pool is host memory, visible to every agent: access grants are
/// checked and then have nothing to change.
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
        let rt = rt()?;
        if agents.is_empty() || agents.is_null() || ptr.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        for a in agents.iter() {
            agent_of(rt, a)?;
        }
        Ok(())
    })
}

/// Registration pins host memory for a device; host memory needs no pinning here.
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

// ---------------------------------------------------------------- signals

fn sig(h: HsaSignal) -> Option<&'static signals::SignalSlot> {
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
    status("hsa_signal_create", || {
        rt()?;
        if out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let h = signals::create(initial).ok_or(HsaStatus::ERROR_OUT_OF_RESOURCES)?;
        out.write(HsaSignal { handle: h })
    })
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

type SignalHandler = events::HandlerFn;

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
fn forward_write<T: Default>(handle: u64, real: impl FnOnce() -> T) -> T {
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
                Some(slot) => signals::wait(slot, SignalCondition(cond), compare, timeout),
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

// ---------------------------------------------------------------- queues

type QueueErrorCb = unsafe extern "C" fn(u32, *mut c_void, *mut c_void);

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
                    _callback,
                    _data,
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
        let q = shim_queue(rt, size, queue_type, Topology::agent_index(a) as u32, &out)?;
        out.write(q.slot() as *const queues::QueueSlot as *mut c_void)
    })
}

/// A queue the shim owns, on the agent with capture index `agent_index`.
fn shim_queue(
    rt: &'static runtime::Runtime,
    size: u32,
    queue_type: u32,
    agent_index: u32,
    out: &Out<'_, *mut c_void>,
) -> Result<&'static queues::VirtualQueue, HsaStatus> {
    use crate::abi::queue_type;
    // As ROCr's hsa_queue_create: a power-of-two size for every queue type.
    if out.is_null() || !size.is_power_of_two() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let make = |size: u32, ty: u32| {
        queues::create(size, ty, agent_index, rt.lower, |id| {
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
unsafe fn queue_create_forwarding(
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
            let q = shim_queue(rt, size, queue_type, agent_index, &out)?;
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
const REFUSED_READ_INDEX: u64 = 0;
/// The write index a load or `add_write_index` answers when it cannot act on
/// a live queue: an index no queue ever reaches, so no two producers are ever
/// handed the same slot (a fallback of 0 did that).
const REFUSED_WRITE_INDEX: u64 = u64::MAX;

/// An index operation on a shim queue; `None` when `q` is not one (the
/// caller forwards it in intercept mode). `refused` is what the export
/// answers on an error (a forged or destroyed queue, an internal panic).
fn queue_field(
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

// ---------------------------------------------------------------- profiling

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
        let rt = rt()?;
        agent_of(rt, agent)?;
        let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        let end = slot.end_ts.load(Ordering::Acquire);
        let start = slot.start_ts.load(Ordering::Acquire);
        out.write(DispatchTime {
            start: if start == 0 { end } else { start },
            end,
        })
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

// ---------------------------------------------------------------- copies and locked memory

fn agent_index_of(rt: &runtime::Runtime, a: HsaAgent) -> Result<usize, HsaStatus> {
    Ok(Topology::agent_index(agent_of(rt, a)?))
}

/// The dependency signals of a copy; every one must be live. A count larger
/// than the signals that can exist is refused before anything is read or
/// allocated (`u32::MAX` once asked for 32 GiB, and the allocation failure
/// aborted the host).
fn read_deps(deps: &InSlice<'_, HsaSignal>) -> Result<Vec<u64>, HsaStatus> {
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

fn lock_common(host: *mut c_void, size: usize, out: Out<'_, *mut c_void>) -> R {
    if host.is_null() || size == 0 || out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let agent = memory::lock(host as u64, size as u64).ok_or(HsaStatus::ERROR_OUT_OF_RESOURCES)?;
    out.write(agent as *mut c_void)
}

pub unsafe extern "C" fn hsa_amd_memory_lock(
    host: *mut c_void,
    size: usize,
    _agents: *mut HsaAgent,
    _n: i32,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_lock: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_memory_lock", || {
        rt()?;
        lock_common(host, size, out)
    })
}

pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(
    host: *mut c_void,
    size: usize,
    _agents: *mut HsaAgent,
    _n: i32,
    pool: u64,
    _flags: u32,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_lock_to_pool: `out` is null or points to
    // writable storage for one pointer, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_memory_lock_to_pool", || {
        let rt = rt()?;
        pool_of(rt, pool)?;
        lock_common(host, size, out)
    })
}

pub unsafe extern "C" fn hsa_amd_memory_unlock(host: *mut c_void) -> u32 {
    status("hsa_amd_memory_unlock", || {
        rt()?;
        if memory::unlock(host as u64) {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
    })
}

type AllocFn = unsafe extern "C" fn(usize) -> *mut c_void;

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
        rt()?;
        let (base, ..) =
            memory::find_allocation(ptr as u64).ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        if memory::set_user_data(base, data as u64) {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
    })
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
        rt()?;
        let slot = sig(s).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        out.write(DispatchTime {
            start: slot.start_ts.load(Ordering::Acquire),
            end: slot.end_ts.load(Ordering::Acquire),
        })
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
        let rt = rt()?;
        agent_of(rt, agent)?;
        out.write(tick)
    })
}

/// Host memory is coherent; the only type the virtual runtime has.
pub unsafe extern "C" fn hsa_amd_coherency_get_type(agent: HsaAgent, out: *mut u32) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_coherency_get_type: `out` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_coherency_get_type", || {
        let rt = rt()?;
        agent_of(rt, agent)?;
        out.write(0) // HSA_AMD_COHERENCY_TYPE_COHERENT
    })
}

pub unsafe extern "C" fn hsa_amd_coherency_set_type(agent: HsaAgent, ty: u32) -> u32 {
    status("hsa_amd_coherency_set_type", || {
        let rt = rt()?;
        agent_of(rt, agent)?;
        if ty == 0 {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
    })
}

// ---------------------------------------------------------------- queue extras

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

// ---------------------------------------------------------------- extension tables

fn extension_table(ext: u16, major: u16, table: OutWords<'_>) -> R {
    if major != 1 {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    match ext {
        crate::runtime::agents::EXT_AMD_LOADER => table.fill(&super::loader::table()),
        crate::runtime::agents::EXT_IMAGES => table.fill(&super::images::extension_table()),
        _ => {
            tracing::warn!(
                "softgpu: extension {ext:#x} has no function table in the virtual runtime"
            );
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        }
    }
}

pub unsafe extern "C" fn hsa_system_get_major_extension_table(
    ext: u16,
    major: u16,
    len: usize,
    table: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_system_get_major_extension_table:
    // `table` is null or `len` writable bytes.
    let table = unsafe { OutWords::from_raw(table, len) };
    status("hsa_system_get_major_extension_table", || {
        rt()?;
        extension_table(ext, major, table)
    })
}

pub unsafe extern "C" fn hsa_system_get_extension_table(
    ext: u16,
    major: u16,
    _minor: u16,
    table: *mut c_void,
) -> u32 {
    status("hsa_system_get_extension_table", || {
        rt()?;
        // The caller's table is the full 1.x struct for that extension.
        let len = match ext {
            crate::runtime::agents::EXT_AMD_LOADER => 3 * 8,
            crate::runtime::agents::EXT_IMAGES => 10 * 8,
            _ => 0,
        };
        // SAFETY: the HSA contract of hsa_system_get_extension_table: `table`
        // is null or the extension's whole 1.x table struct, `len` bytes.
        let table = unsafe { OutWords::from_raw(table, len) };
        extension_table(ext, major, table)
    })
}

// ---------------------------------------------------------------- code objects and executables

use crate::runtime::executables;

pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(
    code: *const c_void,
    size: usize,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_code_object_reader_create_from_memory: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_code_object_reader_create_from_memory", || {
        rt()?;
        if code.is_null() || size == 0 || out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        if size > crate::code_object::MAX_FILE_SIZE as usize {
            return Err(HsaStatus::ERROR_INVALID_CODE_OBJECT);
        }
        // SAFETY: the caller passes `size` readable bytes at `code`; we copy
        // them once, so the reader never depends on the caller's buffer.
        let bytes = unsafe { std::slice::from_raw_parts(code as *const u8, size) }.to_vec();
        out.write(executables::create_reader(bytes))
    })
}

pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(fd: i32, out: *mut u64) -> u32 {
    // SAFETY: the HSA contract of hsa_code_object_reader_create_from_file: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_code_object_reader_create_from_file", || {
        rt()?;
        if out.is_null() || fd < 0 {
            return Err(HsaStatus::ERROR_INVALID_FILE);
        }
        use std::io::Read;
        use std::os::fd::FromRawFd;
        // SAFETY: `fd` is the caller's open descriptor; ManuallyDrop keeps us
        // from closing it, as the HSA contract leaves it to the caller.
        let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let mut bytes = Vec::new();
        (&*file)
            .take(crate::code_object::MAX_FILE_SIZE)
            .read_to_end(&mut bytes)
            .map_err(|_| HsaStatus::ERROR_INVALID_FILE)?;
        out.write(executables::create_reader(bytes))
    })
}

pub unsafe extern "C" fn hsa_code_object_reader_destroy(reader: u64) -> u32 {
    status("hsa_code_object_reader_destroy", || {
        rt()?;
        executables::destroy_reader(reader)
    })
}

pub unsafe extern "C" fn hsa_executable_create(
    profile: u32,
    _state: u32,
    _options: *const c_char,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_create: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_executable_create", || {
        rt()?;
        if out.is_null() || profile > 1 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        out.write(executables::create_executable(profile, 2))
    })
}

pub unsafe extern "C" fn hsa_executable_create_alt(
    profile: u32,
    rounding: u32,
    _options: *const c_char,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_create_alt: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_executable_create_alt", || {
        rt()?;
        if out.is_null() || profile > 1 || rounding > 2 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        out.write(executables::create_executable(profile, rounding))
    })
}

pub unsafe extern "C" fn hsa_executable_destroy(exec: u64) -> u32 {
    status("hsa_executable_destroy", || {
        rt()?;
        executables::destroy_executable(exec)
    })
}

pub unsafe extern "C" fn hsa_executable_load_agent_code_object(
    exec: u64,
    agent: HsaAgent,
    reader: u64,
    _options: *const c_char,
    loaded: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_load_agent_code_object: `loaded` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let loaded = unsafe { Out::from_raw(loaded) };
    status("hsa_executable_load_agent_code_object", || {
        let rt = rt()?;
        let AgentKind::Gpu(g) = agent_of(rt, agent)? else {
            return Err(HsaStatus::ERROR_INVALID_AGENT);
        };
        let mach = rt.topo.gpus[g].elf_machine;
        let l = executables::load(exec, reader, g + 1, mach)?;
        if let Some(c) = &rt.capture {
            // The capture stores each code object's symbol table once; records
            // refer to kernels by kernel object address.
            c.add_code_object(l.kernels.clone());
            c.add_kernel_info(l.metas.clone());
        }
        if !loaded.is_null() {
            loaded.write(l.handle)?;
        }
        Ok(())
    })
}

pub unsafe extern "C" fn hsa_executable_freeze(exec: u64, _options: *const c_char) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_executable_freeze(exec, _options)).unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            if let Ok(rt) = rt() {
                runtime::executables::record_real_kernels(rt, &forward::real_kernels(exec));
            }
        }
        return st;
    }
    status("hsa_executable_freeze", || {
        rt()?;
        executables::freeze(exec)
    })
}

pub unsafe extern "C" fn hsa_executable_get_info(exec: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_executable_get_info", || {
        rt()?;
        let (profile, state, rounding) = executables::info(exec)?;
        // hsa_profile_t, hsa_executable_state_t, hsa_default_float_rounding_mode_t:
        // 4-byte enum stores in ROCr.
        let r = match ExecutableInfo(attr) {
            ExecutableInfo::PROFILE => Ok(Info::U32(profile)),
            ExecutableInfo::STATE => Ok(Info::U32(state)),
            ExecutableInfo::DEFAULT_FLOAT_ROUNDING_MODE => Ok(Info::U32(rounding)),
            _ => Err(InfoError::Unsupported),
        };
        info_result("hsa_executable_get_info", attr, r, out)
    })
}

pub unsafe extern "C" fn hsa_executable_validate(exec: u64, result: *mut u32) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_validate: `result` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let result = unsafe { Out::from_raw(result) };
    status("hsa_executable_validate", || {
        rt()?;
        executables::info(exec)?;
        result.write(0)
    })
}

pub unsafe extern "C" fn hsa_executable_validate_alt(
    exec: u64,
    _options: *const c_char,
    result: *mut u32,
) -> u32 {
    // SAFETY: same contract, arguments passed through.
    unsafe { hsa_executable_validate(exec, result) }
}

fn agent_filter(
    rt: &runtime::Runtime,
    agent: &InOpt<'_, HsaAgent>,
) -> Result<Option<usize>, HsaStatus> {
    agent
        .get()
        .map(|a| agent_of(rt, a).map(Topology::agent_index))
        .transpose()
}

pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(
    exec: u64,
    name: *const c_char,
    agent: *const HsaAgent,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_get_symbol_by_name: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    // SAFETY: the HSA contract of hsa_executable_get_symbol_by_name: `name`
    // is null or NUL-terminated, `agent` null or one agent handle, both
    // readable for the call.
    let (name, agent) = unsafe { (CStrArg::from_raw(name), InOpt::from_raw(agent)) };
    status("hsa_executable_get_symbol_by_name", || {
        let rt = rt()?;
        let name = name.to_str(HsaStatus::ERROR_INVALID_SYMBOL_NAME)?;
        let a = agent_filter(rt, &agent)?;
        out.write(executables::symbol_by_name(exec, name, a)?)
    })
}

pub unsafe extern "C" fn hsa_executable_get_symbol(
    exec: u64,
    _module: *const c_char,
    name: *const c_char,
    agent: HsaAgent,
    _call_convention: i32,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_get_symbol: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    // SAFETY: the HSA contract of hsa_executable_get_symbol: `name` is null
    // or NUL-terminated, readable for the call.
    let name = unsafe { CStrArg::from_raw(name) };
    status("hsa_executable_get_symbol", || {
        let rt = rt()?;
        let name = name.to_str(HsaStatus::ERROR_INVALID_SYMBOL_NAME)?;
        let a = Topology::agent_index(agent_of(rt, agent)?);
        out.write(executables::symbol_by_name(exec, name, Some(a))?)
    })
}

pub unsafe extern "C" fn hsa_executable_symbol_get_info(
    sym: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_symbol_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_executable_symbol_get_info", || {
        let rt = rt()?;
        let s = executables::symbol(sym)?;
        let kernel = s.kind == crate::code_object::SymbolKind::Kernel;
        let kd = s.kd.unwrap_or_default();
        // What ROCr's loader answers (5.2.3 and 6.4, loader/executable.cpp):
        // the common attributes for every symbol (including the object address
        // under both its names), the kernel attributes for kernels and the
        // variable attributes for variables; anything else is INVALID_ARGUMENT.
        use SymbolInfo as Y;
        let info = match SymbolInfo(attr) {
            Y::TYPE => Some(Info::U32(u32::from(kernel))), // VARIABLE 0, KERNEL 1
            Y::NAME_LENGTH => Some(Info::U32(s.name.len() as u32)),
            Y::NAME => Some(Info::Bytes(s.name.as_bytes().to_vec())), // no NUL, as ROCr
            Y::MODULE_NAME_LENGTH => Some(Info::U32(0)),
            Y::MODULE_NAME => Some(Info::Bytes(Vec::new())),
            Y::LINKAGE => Some(Info::U32(u32::from(s.global))),
            Y::IS_DEFINITION => Some(Info::Bool(true)),
            Y::KERNEL_CALL_CONVENTION => Some(Info::U32(0)),
            Y::KERNEL_OBJECT | Y::VARIABLE_ADDRESS => Some(Info::U64(s.address)),
            Y::AGENT => Some(Info::U64(rt.topo.agent_handle(s.agent_index))),
            Y::KERNEL_KERNARG_SEGMENT_SIZE if kernel => Some(Info::U32(s.kernarg_size)),
            Y::KERNEL_KERNARG_SEGMENT_ALIGNMENT if kernel => Some(Info::U32(s.kernarg_align)),
            Y::KERNEL_GROUP_SEGMENT_SIZE if kernel => Some(Info::U32(kd.group_segment_fixed_size)),
            Y::KERNEL_PRIVATE_SEGMENT_SIZE if kernel => {
                Some(Info::U32(kd.private_segment_fixed_size))
            }
            Y::KERNEL_DYNAMIC_CALLSTACK if kernel => Some(Info::Bool(kd.uses_dynamic_stack())),
            Y::KERNEL_WAVEFRONT_SIZE if kernel => Some(Info::U32(kd.wavefront_size())),
            // A kernel descriptor: 64 bytes, 64-byte aligned.
            Y::EXT_KERNEL_OBJECT_SIZE | Y::EXT_KERNEL_OBJECT_ALIGN if kernel => Some(Info::U32(64)),
            Y::VARIABLE_ALLOCATION if !kernel => Some(Info::U32(0)), // AGENT
            Y::VARIABLE_SEGMENT if !kernel => Some(Info::U32(0)),    // GLOBAL
            // ELF symbols carry no alignment; SoftGPU policy: 8 bytes.
            Y::VARIABLE_ALIGNMENT if !kernel => Some(Info::U32(8)),
            Y::VARIABLE_SIZE if !kernel => Some(Info::U32(s.size as u32)),
            Y::VARIABLE_IS_CONST if !kernel => Some(Info::Bool(false)),
            _ => None,
        };
        let Some(info) = info else {
            tracing::debug!(
                "softgpu: hsa_executable_symbol_get_info: attribute {attr} does not apply to {} (ROCr does not answer it either)",
                s.name
            );
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        };
        out.write(&info)
    })
}

type ExecSymbolCb = unsafe extern "C" fn(u64, u64, *mut c_void) -> u32;
type ExecAgentSymbolCb = unsafe extern "C" fn(u64, HsaAgent, u64, *mut c_void) -> u32;

pub unsafe extern "C" fn hsa_executable_iterate_symbols(
    exec: u64,
    cb: Option<ExecSymbolCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_executable_iterate_symbols", || {
        rt()?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let syms = executables::symbols_of(exec, None)?;
        // SAFETY: the program's callback, with valid handles and its own data.
        iterate(syms, |s| unsafe { cb(exec, s, data) })
    })
}

pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(
    exec: u64,
    agent: HsaAgent,
    cb: Option<ExecAgentSymbolCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_executable_iterate_agent_symbols", || {
        let rt = rt()?;
        let a = Topology::agent_index(agent_of(rt, agent)?);
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let syms = executables::symbols_of(exec, Some(a))?;
        // SAFETY: the program's callback, with valid handles and its own data.
        iterate(syms, |s| unsafe { cb(exec, agent, s, data) })
    })
}

/// Program (agent-independent) symbols: code objects here are always agent
/// code objects, so there are none to visit.
pub unsafe extern "C" fn hsa_executable_iterate_program_symbols(
    exec: u64,
    cb: Option<ExecSymbolCb>,
    _data: *mut c_void,
) -> u32 {
    status("hsa_executable_iterate_program_symbols", || {
        rt()?;
        cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        executables::info(exec).map(|_| ())
    })
}

// ---------------------------------------------------------------- HIP 6.4 additions

/// ROCr's own logging switches; SoftGPU logs through `SOFTGPU_LOG` instead, so
/// the request is accepted and recorded in the log.
pub unsafe extern "C" fn hsa_amd_enable_logging(flags: *mut u8, _file: *mut c_void) -> u32 {
    status("hsa_amd_enable_logging", || {
        rt()?;
        if flags.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        tracing::debug!(
            "softgpu: hsa_amd_enable_logging: ROCr log flags accepted; SoftGPU logs through SOFTGPU_LOG"
        );
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_amd_memory_async_copy_on_engine(
    dst: *mut c_void,
    dst_agent: HsaAgent,
    src: *const c_void,
    src_agent: HsaAgent,
    size: usize,
    num_deps: u32,
    deps: *const HsaSignal,
    completion: HsaSignal,
    engine_id: u32,
    _force_copy_on_sdma: bool,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_async_copy_on_engine: `deps` is null or an
    // array of `num_deps` signals, read during the call only.
    let deps = unsafe { InSlice::from_raw(deps, num_deps as usize) };
    status("hsa_amd_memory_async_copy_on_engine", || {
        let rt = rt()?;
        agent_of(rt, dst_agent)?;
        agent_of(rt, src_agent)?;
        if (dst.is_null() || src.is_null()) && size != 0 {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        sig(completion).ok_or(HsaStatus::ERROR_INVALID_SIGNAL)?;
        let deps = read_deps(&deps)?;
        let rect = runtime::copies::Rect::linear(dst as u64, src as u64, size as u64);
        // Engine ids are one-hot (HSA_AMD_SDMA_ENGINE_n = 1 << n): one FIFO each.
        let key = 0x2000 + engine_id as u64;
        // SAFETY: the HSA copy contract: both ranges stay valid until the
        // completion signal is decremented (submit's contract).
        if unsafe { runtime::copies::submit(key, rect, deps, completion.handle) } {
            Ok(())
        } else {
            Err(HsaStatus::ERROR_OUT_OF_RESOURCES)
        }
    })
}

pub unsafe extern "C" fn hsa_amd_memory_copy_engine_status(
    dst_agent: HsaAgent,
    src_agent: HsaAgent,
    mask: *mut u32,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_copy_engine_status: `mask` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let mask = unsafe { Out::from_raw(mask) };
    status("hsa_amd_memory_copy_engine_status", || {
        let rt = rt()?;
        if agent_of(rt, dst_agent)? == agent_of(rt, src_agent)? {
            return Err(HsaStatus::ERROR_INVALID_AGENT);
        }
        // Every SoftGPU copy engine is always available.
        mask.write((1u32 << runtime::agents::COPY_ENGINES) - 1)
    })
}

fn vmem_status(r: Result<(), runtime::vmem::VmemError>) -> R {
    r.map_err(|e| match e {
        runtime::vmem::VmemError::InvalidArgument => HsaStatus::ERROR_INVALID_ARGUMENT,
        runtime::vmem::VmemError::OutOfResources => HsaStatus::ERROR_OUT_OF_RESOURCES,
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_address_reserve(
    out: *mut *mut c_void,
    size: usize,
    _address: u64,
    _flags: u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_address_reserve: `out` is null or points to
    // writable storage for one `*mut c_void`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_address_reserve", || {
        rt()?;
        let mut va = 0;
        vmem_status(runtime::vmem::reserve(size as u64, 0).map(|v| va = v))?;
        out.write(va as *mut c_void)
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_address_free(va: *mut c_void, size: usize) -> u32 {
    status("hsa_amd_vmem_address_free", || {
        rt()?;
        vmem_status(runtime::vmem::free(va as u64, size as u64))
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_handle_create(
    pool: u64,
    size: usize,
    kind: u32,
    _flags: u64,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_handle_create: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_handle_create", || {
        let rt = rt()?;
        pool_of(rt, pool)?;
        let mut h = 0;
        vmem_status(runtime::vmem::handle_create(pool, size as u64, kind).map(|v| h = v))?;
        out.write(h)
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_handle_release(handle: u64) -> u32 {
    status("hsa_amd_vmem_handle_release", || {
        rt()?;
        vmem_status(runtime::vmem::handle_release(handle))
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_map(
    va: *mut c_void,
    size: usize,
    offset: usize,
    handle: u64,
    _flags: u64,
) -> u32 {
    status("hsa_amd_vmem_map", || {
        rt()?;
        vmem_status(runtime::vmem::map(
            va as u64,
            size as u64,
            offset as u64,
            handle,
        ))
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_unmap(va: *mut c_void, size: usize) -> u32 {
    status("hsa_amd_vmem_unmap", || {
        rt()?;
        vmem_status(runtime::vmem::unmap(va as u64, size as u64))
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_set_access(
    va: *mut c_void,
    size: usize,
    desc: *const AccessDesc,
    count: usize,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_set_access: `desc` is null or
    // an array of `count` descriptors, read during the call only.
    let desc = unsafe { InSlice::from_raw(desc, count) };
    status("hsa_amd_vmem_set_access", || {
        let rt = rt()?;
        if desc.is_null() || desc.is_empty() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let mut perm = 0;
        for d in desc.iter() {
            agent_of(rt, d.agent)?;
            perm |= d.permissions & 3;
        }
        vmem_status(runtime::vmem::set_access(va as u64, size as u64, perm))
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_get_access(
    va: *mut c_void,
    perms: *mut u32,
    agent: HsaAgent,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_get_access: `perms` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let perms = unsafe { Out::from_raw(perms) };
    status("hsa_amd_vmem_get_access", || {
        let rt = rt()?;
        agent_of(rt, agent)?;
        let mut p = 0;
        vmem_status(runtime::vmem::get_access(va as u64).map(|v| p = v))?;
        perms.write(p)
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_export_shareable_handle(
    fd: *mut i32,
    handle: u64,
    _flags: u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_export_shareable_handle: `fd` is null or points to
    // writable storage for one `i32`, for the duration of the call.
    let fd = unsafe { Out::from_raw(fd) };
    status("hsa_amd_vmem_export_shareable_handle", || {
        rt()?;
        let mut f = -1;
        vmem_status(runtime::vmem::export(handle).map(|v| f = v))?;
        fd.write(f)
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_import_shareable_handle(fd: i32, out: *mut u64) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_import_shareable_handle: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_import_shareable_handle", || {
        rt()?;
        let mut h = 0;
        vmem_status(runtime::vmem::import(fd).map(|v| h = v))?;
        out.write(h)
    })
}
