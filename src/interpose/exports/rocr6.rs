//! The ROCr 6.x functions HIP 6.4 imports: logging, engine copies, virtual memory.

#![allow(unsafe_code)]

use super::*;

/// ROCr's own logging switches; SoftGPU logs through `SOFTGPU_LOG` instead, so
/// the request is accepted and recorded in the log.
pub unsafe extern "C" fn hsa_amd_enable_logging(flags: *mut u8, _file: *mut c_void) -> u32 {
    status("hsa_amd_enable_logging", || amd_enable_logging(flags))
}

/// The body of `hsa_amd_enable_logging`, over its converted arguments.
fn amd_enable_logging(flags: *mut u8) -> R {
    rt()?;
    if flags.is_null() {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    tracing::debug!(
        "softgpu: hsa_amd_enable_logging: ROCr log flags accepted; SoftGPU logs through SOFTGPU_LOG"
    );
    Ok(())
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
        amd_memory_copy_engine_status(dst_agent, src_agent, mask)
    })
}

/// The body of `hsa_amd_memory_copy_engine_status`, over its converted arguments.
fn amd_memory_copy_engine_status(
    dst_agent: HsaAgent,
    src_agent: HsaAgent,
    mask: Out<'_, u32>,
) -> R {
    let rt = rt()?;
    if agent_of(rt, dst_agent)? == agent_of(rt, src_agent)? {
        return Err(HsaStatus::ERROR_INVALID_AGENT);
    }
    // Every SoftGPU copy engine is always available.
    mask.write((1u32 << runtime::agents::COPY_ENGINES) - 1)
}

pub(super) fn vmem_status(r: Result<(), runtime::vmem::VmemError>) -> R {
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
        amd_vmem_address_reserve(out, size)
    })
}

/// The body of `hsa_amd_vmem_address_reserve`, over its converted arguments.
fn amd_vmem_address_reserve(out: Out<'_, *mut c_void>, size: usize) -> R {
    rt()?;
    let mut va = 0;
    vmem_status(runtime::vmem::reserve(size as u64, 0).map(|v| va = v))?;
    out.write(va as *mut c_void)
}

pub unsafe extern "C" fn hsa_amd_vmem_address_free(va: *mut c_void, size: usize) -> u32 {
    status("hsa_amd_vmem_address_free", || {
        amd_vmem_address_free(va, size)
    })
}

/// The body of `hsa_amd_vmem_address_free`, over its converted arguments.
fn amd_vmem_address_free(va: *mut c_void, size: usize) -> R {
    rt()?;
    vmem_status(runtime::vmem::free(va as u64, size as u64))
}

pub unsafe extern "C" fn hsa_amd_vmem_handle_create(
    pool: u64,
    size: usize,
    kind: u32,
    flags: u64,
    out: *mut u64,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_amd_vmem_handle_create(pool, size, kind, flags, out))
            .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            // SAFETY: the HSA contract of hsa_amd_vmem_handle_create: `out`
            // is null or storage for one handle, which the real runtime has
            // just written.
            let out = unsafe { Out::from_raw(out) };
            value("hsa_amd_vmem_handle_create", (), || {
                if let Some(h) = out.read() {
                    passthrough::vmem_handle(h, pool, size as u64)
                }
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_amd_vmem_handle_create: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_handle_create", || {
        amd_vmem_handle_create(pool, size, kind, out)
    })
}

/// The body of `hsa_amd_vmem_handle_create`, over its converted arguments.
fn amd_vmem_handle_create(pool: u64, size: usize, kind: u32, out: Out<'_, u64>) -> R {
    let rt = rt()?;
    pool_of(rt, pool)?;
    let mut h = 0;
    vmem_status(runtime::vmem::handle_create(pool, size as u64, kind).map(|v| h = v))?;
    out.write(h)
}

pub unsafe extern "C" fn hsa_amd_vmem_handle_release(handle: u64) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_amd_vmem_handle_release(handle)).unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            value("hsa_amd_vmem_handle_release", (), || {
                passthrough::vmem_handle_released(handle)
            });
        }
        return st;
    }
    status("hsa_amd_vmem_handle_release", || {
        amd_vmem_handle_release(handle)
    })
}

/// The body of `hsa_amd_vmem_handle_release`, over its converted arguments.
fn amd_vmem_handle_release(handle: u64) -> R {
    rt()?;
    vmem_status(runtime::vmem::handle_release(handle))
}

pub unsafe extern "C" fn hsa_amd_vmem_map(
    va: *mut c_void,
    size: usize,
    offset: usize,
    handle: u64,
    flags: u64,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_amd_vmem_map(va, size, offset, handle, flags))
            .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            value("hsa_amd_vmem_map", (), || {
                passthrough::vmem_mapped(va as u64, size as u64, handle)
            });
        }
        return st;
    }
    status("hsa_amd_vmem_map", || {
        amd_vmem_map(va, size, offset, handle)
    })
}

/// The body of `hsa_amd_vmem_map`, over its converted arguments.
fn amd_vmem_map(va: *mut c_void, size: usize, offset: usize, handle: u64) -> R {
    rt()?;
    vmem_status(runtime::vmem::map(
        va as u64,
        size as u64,
        offset as u64,
        handle,
    ))
}

pub unsafe extern "C" fn hsa_amd_vmem_unmap(va: *mut c_void, size: usize) -> u32 {
    if forward::forwarding() {
        return super::pool::pass_free(
            "hsa_amd_vmem_unmap",
            va as u64,
            &[passthrough::Source::Vmem],
            || call_real!(hsa_amd_vmem_unmap(va, size)),
        );
    }
    status("hsa_amd_vmem_unmap", || amd_vmem_unmap(va, size))
}

/// The body of `hsa_amd_vmem_unmap`, over its converted arguments.
fn amd_vmem_unmap(va: *mut c_void, size: usize) -> R {
    rt()?;
    vmem_status(runtime::vmem::unmap(va as u64, size as u64))
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
        amd_vmem_set_access(va, size, desc)
    })
}

/// The body of `hsa_amd_vmem_set_access`, over its converted arguments.
fn amd_vmem_set_access(va: *mut c_void, size: usize, desc: InSlice<'_, AccessDesc>) -> R {
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
        amd_vmem_get_access(va, perms, agent)
    })
}

/// The body of `hsa_amd_vmem_get_access`, over its converted arguments.
fn amd_vmem_get_access(va: *mut c_void, perms: Out<'_, u32>, agent: HsaAgent) -> R {
    let rt = rt()?;
    agent_of(rt, agent)?;
    let mut p = 0;
    vmem_status(runtime::vmem::get_access(va as u64).map(|v| p = v))?;
    perms.write(p)
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
        amd_vmem_export_shareable_handle(fd, handle)
    })
}

/// The body of `hsa_amd_vmem_export_shareable_handle`, over its converted arguments.
fn amd_vmem_export_shareable_handle(fd: Out<'_, i32>, handle: u64) -> R {
    rt()?;
    let mut f = -1;
    vmem_status(runtime::vmem::export(handle).map(|v| f = v))?;
    fd.write(f)
}

pub unsafe extern "C" fn hsa_amd_vmem_import_shareable_handle(fd: i32, out: *mut u64) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_import_shareable_handle: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_import_shareable_handle", || {
        amd_vmem_import_shareable_handle(fd, out)
    })
}

/// The body of `hsa_amd_vmem_import_shareable_handle`, over its converted arguments.
fn amd_vmem_import_shareable_handle(fd: i32, out: Out<'_, u64>) -> R {
    rt()?;
    let mut h = 0;
    vmem_status(runtime::vmem::import(fd).map(|v| h = v))?;
    out.write(h)
}
