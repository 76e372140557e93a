//! Agents, ISAs, caches and wavefronts: iteration and attributes.

#![allow(unsafe_code)]

use super::*;

pub(super) type AgentCb = unsafe extern "C" fn(HsaAgent, *mut c_void) -> u32;

/// Run an iteration callback; any status other than SUCCESS stops the
/// traversal and is returned as it is, HSA_STATUS_INFO_BREAK included (ROCr's
/// iterators return the callback's status, so a caller can tell a break from
/// a full traversal).
pub(super) fn iterate<T>(items: impl IntoIterator<Item = T>, mut call: impl FnMut(T) -> u32) -> R {
    for it in items {
        match call(it) {
            0 => {}
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
    status("hsa_agent_get_info", || agent_get_info(agent, attr, out))
}

/// The body of `hsa_agent_get_info`, over its converted arguments.
fn agent_get_info(agent: HsaAgent, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let a = agent_of(rt, agent)?;
    let r = rt.topo.agent_info(a, AgentInfo(attr));
    info_result("hsa_agent_get_info", attr, r, out)
}

pub(super) type IsaCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

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
    status("hsa_isa_get_info_alt", || isa_get_info_alt(isa, attr, out))
}

/// The body of `hsa_isa_get_info_alt`, over its converted arguments.
fn isa_get_info_alt(isa: u64, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
    let r = rt.topo.isa_info(d, IsaInfo(attr));
    info_result("hsa_isa_get_info_alt", attr, r, out)
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
    status("hsa_isa_get_info", || isa_get_info(isa, attr, index, out))
}

/// The body of `hsa_isa_get_info`, over its converted arguments.
fn isa_get_info(isa: u64, attr: u32, index: u32, out: InfoOut<'_>) -> R {
    if index != 0 {
        return Err(HsaStatus::ERROR_INVALID_INDEX);
    }
    let rt = rt()?;
    let d = rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
    let r = rt.topo.isa_info(d, IsaInfo(attr));
    info_result("hsa_isa_get_info", attr, r, out)
}

pub unsafe extern "C" fn hsa_isa_from_name(name: *const c_char, out: *mut u64) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_from_name: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    // SAFETY: the same contract: `name` is null or NUL-terminated, readable
    // for the call.
    let name = unsafe { CStrArg::from_raw(name) };
    status("hsa_isa_from_name", || isa_from_name(name, out))
}

/// The body of `hsa_isa_from_name`, over its converted arguments.
fn isa_from_name(name: CStrArg<'_>, out: Out<'_, u64>) -> R {
    let rt = rt()?;
    let name = name.to_str(HsaStatus::ERROR_INVALID_ISA_NAME)?;
    let g = rt
        .topo
        .gpus
        .iter()
        .position(|d| d.isa_name == name)
        .ok_or(HsaStatus::ERROR_INVALID_ISA_NAME)?;
    out.write(rt.topo.isa_handle(g))
}

pub(super) type CacheCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

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
    status("hsa_cache_get_info", || cache_get_info(cache, attr, out))
}

/// The body of `hsa_cache_get_info`, over its converted arguments.
fn cache_get_info(cache: u64, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let c = rt.topo.cache(cache).ok_or(HsaStatus::ERROR_INVALID_CACHE)?;
    let r = rt.topo.cache_info(c, CacheInfo(attr));
    info_result("hsa_cache_get_info", attr, r, out)
}

/// `hsa_profile_t` values ROCr accepts.
pub(super) fn check_profile(profile: u32) -> R {
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
        agent_get_exception_policies(agent, profile, mask)
    })
}

/// The body of `hsa_agent_get_exception_policies`, over its converted arguments.
fn agent_get_exception_policies(agent: HsaAgent, profile: u32, mask: Out<'_, u16>) -> R {
    let rt = rt()?;
    check_profile(profile)?;
    agent_of(rt, agent)?;
    mask.write(0)
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
        isa_get_exception_policies(isa, profile, mask)
    })
}

/// The body of `hsa_isa_get_exception_policies`, over its converted arguments.
fn isa_get_exception_policies(isa: u64, profile: u32, mask: Out<'_, u16>) -> R {
    let rt = rt()?;
    check_profile(profile)?;
    rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
    mask.write(0)
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
        isa_get_round_method(isa, fp_type, flush_mode, out)
    })
}

/// The body of `hsa_isa_get_round_method`, over its converted arguments.
fn isa_get_round_method(isa: u64, fp_type: u32, flush_mode: u32, out: Out<'_, u32>) -> R {
    let rt = rt()?;
    if !matches!(fp_type, 1 | 2 | 4) || !matches!(flush_mode, 1 | 2) {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    rt.topo.isa(isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
    out.write(1) // HSA_ROUND_METHOD_SINGLE
}

/// Wavefront handles: one per ISA, tagged like the other handles.
pub(super) const WAVEFRONT_TAG: u64 = 0x5347_5700_0000_0000; // "SGW"

pub(super) type WavefrontCb = unsafe extern "C" fn(u64, *mut c_void) -> u32;

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
        wavefront_get_info(wavefront, attr, out)
    })
}

/// The body of `hsa_wavefront_get_info`, over its converted arguments.
fn wavefront_get_info(wavefront: u64, attr: u32, out: InfoOut<'_>) -> R {
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
}

/// Two ISAs are compatible when they are the same target (each virtual ISA
/// is one processor with fixed features).
pub unsafe extern "C" fn hsa_isa_compatible(code_isa: u64, agent_isa: u64, out: *mut bool) -> u32 {
    // SAFETY: the HSA contract of hsa_isa_compatible: `out` is null or points to
    // writable storage for one `bool`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_isa_compatible", || {
        isa_compatible(code_isa, agent_isa, out)
    })
}

/// The body of `hsa_isa_compatible`, over its converted arguments.
fn isa_compatible(code_isa: u64, agent_isa: u64, out: Out<'_, bool>) -> R {
    let rt = rt()?;
    if out.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let a = rt.topo.isa(code_isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
    let b = rt.topo.isa(agent_isa).ok_or(HsaStatus::ERROR_INVALID_ISA)?;
    out.write(a.id == b.id)
}
