//! The ROCr 7.x functions: the eight HIP 7.2.4 and ROCm's OpenCL runtime
//! 7.2.4 import (scratch limit, AIS file I/O, preferred copy engine, aligned
//! address reservation, retained vmem handles, the v2 sampler, which lives in
//! `interpose::images`), the system event handler HIP 7 registers at start,
//! and the small queries ROCr 7.2.4 adds (queue info, vmem handle properties,
//! waiting for all of several signals). The rest of 7.2.4's additions (dmabuf
//! export, SPM, PC sampling) fail closed in the entry-point table.

#![allow(unsafe_code)]

use super::*;
use crate::abi::AisFileHandle;
use crate::runtime::sys::FileDirection;

/// `hsa_amd_agent_set_async_scratch_limit`: the limit is recorded per GPU
/// agent and answered by `HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_CURRENT`; no
/// dispatch ever uses scratch here, so nothing is allocated or released.
pub unsafe extern "C" fn hsa_amd_agent_set_async_scratch_limit(
    agent: HsaAgent,
    threshold: usize,
) -> u32 {
    status("hsa_amd_agent_set_async_scratch_limit", || {
        amd_agent_set_async_scratch_limit(agent, threshold)
    })
}

/// The body of `hsa_amd_agent_set_async_scratch_limit`, over its converted arguments.
fn amd_agent_set_async_scratch_limit(agent: HsaAgent, threshold: usize) -> R {
    let rt = rt()?;
    match agent_of(rt, agent)? {
        // ROCr answers INVALID_ARGUMENT for an agent without asynchronous
        // scratch reclaim, which a CPU agent is.
        AgentKind::Cpu => Err(HsaStatus::ERROR_INVALID_ARGUMENT),
        AgentKind::Gpu(i) => {
            if threshold as u64 > runtime::agents::SCRATCH_LIMIT {
                return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
            }
            rt.topo.set_scratch_limit(i, threshold as u64);
            Ok(())
        }
    }
}

pub unsafe extern "C" fn hsa_amd_ais_file_read(
    handle: AisFileHandle,
    device_ptr: *mut c_void,
    size: u64,
    file_offset: i64,
    size_copied: *mut u64,
    st: *mut i32,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_ais_file_read: `size_copied` and
    // `status` are null or room for one value each, for the call.
    let (copied, st) = unsafe { (Out::from_raw(size_copied), Out::from_raw(st)) };
    status("hsa_amd_ais_file_read", || {
        ais_transfer(
            handle,
            device_ptr,
            size,
            file_offset,
            copied,
            st,
            FileDirection::Read,
        )
    })
}

pub unsafe extern "C" fn hsa_amd_ais_file_write(
    handle: AisFileHandle,
    device_ptr: *mut c_void,
    size: u64,
    file_offset: i64,
    size_copied: *mut u64,
    st: *mut i32,
) -> u32 {
    // SAFETY: as in hsa_amd_ais_file_read.
    let (copied, st) = unsafe { (Out::from_raw(size_copied), Out::from_raw(st)) };
    status("hsa_amd_ais_file_write", || {
        ais_transfer(
            handle,
            device_ptr,
            size,
            file_offset,
            copied,
            st,
            FileDirection::Write,
        )
    })
}

/// The range `addr..addr+size` lies wholly inside one allocation of the
/// virtual runtime (a pool allocation or a vmem mapping): device memory is
/// host memory here, so the CPU may move file bytes in and out of it.
fn inside_device_memory(addr: u64, size: u64) -> bool {
    let Some(end) = addr.checked_add(size) else {
        return false;
    };
    if let Some((base, len, _, _)) = memory::find_allocation(addr) {
        return end <= base.saturating_add(len);
    }
    runtime::vmem::find_mapped(addr).is_some_and(|(base, len, _)| end <= base.saturating_add(len))
}

/// AIS (AMD Infinity Storage) file I/O, as ROCr's runtime does it where the
/// GPU's memory is reachable from the host: the bytes move between the
/// program's file and its device allocation with `pread`/`pwrite`. The file
/// is the program's own descriptor, used only as it asked.
#[allow(clippy::too_many_arguments)]
fn ais_transfer(
    handle: AisFileHandle,
    ptr: *mut c_void,
    size: u64,
    offset: i64,
    copied: Out<'_, u64>,
    st: Out<'_, i32>,
    dir: FileDirection,
) -> R {
    rt()?;
    let fd = handle.fd();
    if fd < 0 || ptr.is_null() || size == 0 || offset < 0 {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    let addr = ptr as u64;
    if !inside_device_memory(addr, size) {
        return Err(HsaStatus::ERROR_INVALID_ALLOCATION);
    }
    // SAFETY: `addr..addr+size` was just checked to lie inside one of the
    // runtime's own allocations, which are host memory valid for reads and
    // writes for as long as the program does not free them (freeing memory
    // during a transfer into it is the program's race, as with ROCr); no Rust
    // reference points into program allocations. The descriptor is only read
    // from or written to.
    let (done, errno) = unsafe { runtime::sys::file_transfer(fd, addr, size, offset, dir) };
    // Both out-parameters are optional: ROCr fills what it is given.
    let _ = copied.write(done);
    let _ = st.write(errno);
    if errno == libc::EBADF {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    if errno != 0 {
        return Err(HsaStatus::ERROR);
    }
    Ok(())
}

pub unsafe extern "C" fn hsa_amd_memory_get_preferred_copy_engine(
    dst_agent: HsaAgent,
    src_agent: HsaAgent,
    mask: *mut u32,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_memory_get_preferred_copy_engine:
    // `mask` is null or room for one `u32`, for the call.
    let mask = unsafe { Out::from_raw(mask) };
    status("hsa_amd_memory_get_preferred_copy_engine", || {
        amd_memory_get_preferred_copy_engine(dst_agent, src_agent, mask)
    })
}

/// The body of `hsa_amd_memory_get_preferred_copy_engine`, over its converted arguments.
fn amd_memory_get_preferred_copy_engine(
    dst_agent: HsaAgent,
    src_agent: HsaAgent,
    mask: Out<'_, u32>,
) -> R {
    let rt = rt()?;
    agent_of(rt, dst_agent)?;
    agent_of(rt, src_agent)?;
    // SoftGPU policy: every copy engine is a CPU thread with the same path to
    // every agent, so each is as good as another: all are recommended.
    mask.write((1u32 << runtime::agents::COPY_ENGINES) - 1)
}

pub unsafe extern "C" fn hsa_amd_vmem_address_reserve_align(
    out: *mut *mut c_void,
    size: usize,
    _address: u64,
    alignment: u64,
    _flags: u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_address_reserve_align: `out`
    // is null or room for one pointer, for the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_address_reserve_align", || {
        rt()?;
        let mut va = 0;
        super::rocr6::vmem_status(runtime::vmem::reserve(size as u64, alignment).map(|v| va = v))?;
        out.write(va as *mut c_void)
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_retain_alloc_handle(out: *mut u64, addr: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_retain_alloc_handle: `out` is
    // null or room for one handle, for the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_amd_vmem_retain_alloc_handle", || {
        rt()?;
        if out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // ROCr: an address no mapping holds is INVALID_ALLOCATION.
        let h =
            runtime::vmem::retain(addr as u64).map_err(|_| HsaStatus::ERROR_INVALID_ALLOCATION)?;
        out.write(h)
    })
}

pub unsafe extern "C" fn hsa_amd_vmem_get_alloc_properties_from_handle(
    handle: u64,
    pool: *mut u64,
    kind: *mut u32,
) -> u32 {
    // SAFETY: the HSA contract of hsa_amd_vmem_get_alloc_properties_from_handle:
    // `pool` and `kind` are null or room for one value each, for the call.
    let (pool, kind) = unsafe { (Out::from_raw(pool), Out::from_raw(kind)) };
    status("hsa_amd_vmem_get_alloc_properties_from_handle", || {
        rt()?;
        if pool.is_null() || kind.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let (p, k) = runtime::vmem::handle_properties(handle)
            .map_err(|_| HsaStatus::ERROR_INVALID_ALLOCATION)?;
        pool.write(p)?;
        kind.write(k)
    })
}

/// `hsa_queue_info_attribute_t` (ROCr 7.x).
const QUEUE_INFO_AGENT: u32 = 0;
const QUEUE_INFO_DOORBELL_ID: u32 = 1;

pub unsafe extern "C" fn hsa_amd_queue_get_info(
    q: *mut c_void,
    attribute: u32,
    out: *mut c_void,
) -> u32 {
    if forward::forwarding() && queues::lookup(q as u64).is_none() {
        forward::note_entry();
        return call_real!(hsa_amd_queue_get_info(q, attribute, out)).unwrap_or(HsaStatus::ERROR.0);
    }
    // SAFETY: the HSA contract of hsa_amd_queue_get_info: `out` is null or
    // room for the attribute's value (both are eight bytes), for the call.
    let out = unsafe { Out::from_raw(out.cast::<u64>()) };
    status("hsa_amd_queue_get_info", || {
        let rt = rt()?;
        let vq = queues::lookup(q as u64).ok_or(HsaStatus::ERROR_INVALID_QUEUE)?;
        let v = match attribute {
            QUEUE_INFO_AGENT => {
                let i = vq.agent_index() as usize;
                if rt.mode == Mode::Virtual {
                    rt.topo.agent_handle(i)
                } else {
                    rt.real_agents
                        .get(i)
                        .map(|a| a.handle)
                        .ok_or(HsaStatus::ERROR_INVALID_QUEUE)?
                }
            }
            // SoftGPU's queues have no hardware doorbell: the doorbell signal's
            // handle is the one identity the queue's doorbell has.
            QUEUE_INFO_DOORBELL_ID => vq.doorbell(),
            other => {
                unanswered("hsa_amd_queue_get_info", other);
                return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
            }
        };
        out.write(v)
    })
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hsa_amd_signal_wait_all(
    count: u32,
    sigs: *mut HsaSignal,
    conds: *mut u32,
    values: *mut i64,
    timeout: u64,
    _wait_state: u32,
    satisfying: *mut i64,
) -> u32 {
    let n = count as usize;
    // SAFETY: the HSA contract of hsa_amd_signal_wait_all: `sigs`, `conds`
    // and `values` are null or arrays of `count` elements, read during the
    // call only, and `satisfying` is null or an array of `count` values.
    let (sigs, conds, values, satisfying) = unsafe {
        (
            InSlice::from_raw(sigs, n),
            InSlice::from_raw(conds, n),
            InSlice::from_raw(values, n),
            satisfying,
        )
    };
    value("hsa_amd_signal_wait_all", u32::MAX, || {
        if count == 0 || sigs.is_null() || conds.is_null() || values.is_null() {
            return u32::MAX;
        }
        if n > signals::MAX_SIGNALS {
            crate::error_limited!(
                "softgpu: hsa_amd_signal_wait_all: {count} signals is more than can exist ({}); refused",
                signals::MAX_SIGNALS
            );
            return u32::MAX;
        }
        // ROCr's contract: a null or unknown signal reads as 0 and counts as
        // satisfied.
        let watch: Vec<_> = sigs
            .iter()
            .zip(conds.iter())
            .zip(values.iter())
            .map(|((s, c), v)| (sig(s), SignalCondition(c), v))
            .collect();
        let deadline = sys::now_ns().saturating_add(timeout);
        loop {
            let seen = signals::generation();
            let all = watch.iter().all(|(slot, c, v)| {
                slot.is_none_or(|s| signals::satisfied(*c, s.value.load(Ordering::Acquire), *v))
            });
            if all {
                if !satisfying.is_null() {
                    for (i, (slot, ..)) in watch.iter().enumerate() {
                        let cur = slot.map_or(0, |s| s.value.load(Ordering::Acquire));
                        // SAFETY: `satisfying` is non-null here, so by the
                        // contract above an array of `count` values, and
                        // `i < count`.
                        unsafe { satisfying.add(i).write_unaligned(cur) };
                    }
                }
                return 0;
            }
            let now = sys::now_ns();
            if now >= deadline {
                return u32::MAX;
            }
            signals::sleep_until_change(seen, deadline - now, || true);
        }
    })
}

/// `hsa_amd_system_event_callback_t`.
type SystemEventCallback = Option<unsafe extern "C" fn(*const c_void, *mut c_void) -> u32>;

/// Handlers registered with `hsa_amd_register_system_event_handler`.
static SYSTEM_EVENT_HANDLERS: AtomicU64 = AtomicU64::new(0);

/// The handler is accepted and never called: ROCr calls it for GPU memory
/// faults, hardware exceptions and memory errors, and with no kernel ever
/// running the virtual runtime has none of them to report.
pub unsafe extern "C" fn hsa_amd_register_system_event_handler(
    callback: SystemEventCallback,
    _data: *mut c_void,
) -> u32 {
    status("hsa_amd_register_system_event_handler", || {
        rt()?;
        if callback.is_none() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let n = SYSTEM_EVENT_HANDLERS.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::debug!(
            "softgpu: hsa_amd_register_system_event_handler: handler {n} accepted; the virtual runtime raises no system events (no kernel runs, so no GPU fault or exception occurs)"
        );
        Ok(())
    })
}
