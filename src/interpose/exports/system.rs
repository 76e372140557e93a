//! Lifecycle, status strings, system attributes and extensions (with their function tables).

#![allow(unsafe_code)]

use super::*;

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
    status("hsa_status_string", || status_string(st, out))
}

/// The body of `hsa_status_string`, over its converted arguments.
fn status_string(st: u32, out: Out<'_, *const c_char>) -> R {
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
}

pub unsafe extern "C" fn hsa_system_get_info(attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_system_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_system_get_info", || system_get_info(attr, out))
}

/// The body of `hsa_system_get_info`, over its converted arguments.
fn system_get_info(attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    let r = rt.topo.system_info(SystemInfo(attr), sys::now_ns());
    info_result("hsa_system_get_info", attr, r, out)
}

pub(super) fn extension_supported(ext: u16) -> bool {
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
        system_extension_supported(ext, major, out)
    })
}

/// The body of `hsa_system_extension_supported`, over its converted arguments.
fn system_extension_supported(ext: u16, major: u16, out: Out<'_, bool>) -> R {
    rt()?;
    out.write(extension_supported(ext) && major == 1)
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
        system_major_extension_supported(ext, major, minor, out)
    })
}

/// The body of `hsa_system_major_extension_supported`, over its converted arguments.
fn system_major_extension_supported(
    ext: u16,
    major: u16,
    minor: Out<'_, u16>,
    out: Out<'_, bool>,
) -> R {
    rt()?;
    let ok = extension_supported(ext) && major == 1;
    if ok {
        minor.write(0)?;
    }
    out.write(ok)
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
        agent_extension_supported(ext, agent, major, out)
    })
}

/// The body of `hsa_agent_extension_supported`, over its converted arguments.
fn agent_extension_supported(ext: u16, agent: HsaAgent, major: u16, out: Out<'_, bool>) -> R {
    let rt = rt()?;
    let a = agent_of(rt, agent)?;
    out.write(matches!(a, AgentKind::Gpu(_)) && extension_supported(ext) && major == 1)
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
        agent_major_extension_supported(ext, agent, major, minor, out)
    })
}

/// The body of `hsa_agent_major_extension_supported`, over its converted arguments.
fn agent_major_extension_supported(
    ext: u16,
    agent: HsaAgent,
    major: u16,
    minor: Out<'_, u16>,
    out: Out<'_, bool>,
) -> R {
    let rt = rt()?;
    let a = agent_of(rt, agent)?;
    let ok = matches!(a, AgentKind::Gpu(_)) && extension_supported(ext) && major == 1;
    if ok {
        minor.write(0)?;
    }
    out.write(ok)
}

pub unsafe extern "C" fn hsa_extension_get_name(ext: u16, out: *mut *const c_char) -> u32 {
    // SAFETY: the HSA contract of hsa_extension_get_name: `out` is null or points to
    // writable storage for one `*const c_char`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_extension_get_name", || extension_get_name(ext, out))
}

/// The body of `hsa_extension_get_name`, over its converted arguments.
fn extension_get_name(ext: u16, out: Out<'_, *const c_char>) -> R {
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
}

pub(super) fn extension_table(ext: u16, major: u16, table: OutWords<'_>) -> R {
    if major != 1 {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    match ext {
        crate::runtime::agents::EXT_AMD_LOADER => table.fill(&crate::interpose::loader::table()),
        crate::runtime::agents::EXT_IMAGES => {
            table.fill(&crate::interpose::images::extension_table())
        }
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
        system_get_major_extension_table(ext, major, table)
    })
}

/// The body of `hsa_system_get_major_extension_table`, over its converted arguments.
fn system_get_major_extension_table(ext: u16, major: u16, table: OutWords<'_>) -> R {
    rt()?;
    extension_table(ext, major, table)
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
