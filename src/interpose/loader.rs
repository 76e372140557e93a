//! The AMD loader extension (`hsa_ven_amd_loader_*`), handed out only through
//! `hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, ...)`.
//! The functions are not exported by name (ROCr does not export them either).
//!
//! In the virtual runtime every device address is a host address, so
//! `query_host_address` answers with the same address for memory the runtime
//! owns (allocations and loaded code objects) and fails for anything else.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::ffi::c_void;

use super::args::Out;
use super::status;
use crate::abi::HsaStatus;
use crate::runtime::{self, memory};

/// The 1.03 table, in struct order; callers copy as many entries as their
/// table version has.
pub fn table() -> [usize; 7] {
    [
        query_host_address as *const () as usize,
        query_segment_descriptors as *const () as usize,
        query_executable as *const () as usize,
        executable_iterate_loaded_code_objects as *const () as usize,
        loaded_code_object_get_info as *const () as usize,
        code_object_reader_create_from_file_with_offset_size as *const () as usize,
        iterate_executables as *const () as usize,
    ]
}

unsafe extern "C" fn query_host_address(device: *const c_void, host: *mut *const c_void) -> u32 {
    // SAFETY: the loader extension's contract: `host` is null or room for one
    // pointer, for the duration of the call.
    let host = unsafe { Out::from_raw(host) };
    status("hsa_ven_amd_loader_query_host_address", || {
        runtime::get()?;
        if device.is_null() || host.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let a = device as u64;
        let known =
            memory::find_allocation(a).is_some() || runtime::executables::find_image(a).is_some();
        if !known {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        host.write(device)
    })
}

unsafe extern "C" fn query_executable(device: *const c_void, out: *mut u64) -> u32 {
    // SAFETY: the loader extension's contract: `out` is null or room for one
    // executable handle, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_ven_amd_loader_query_executable", || {
        runtime::get()?;
        if out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let exec = runtime::executables::find_image(device as u64)
            .ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        out.write(exec)
    })
}

macro_rules! loader_fail_closed {
    ($($name:ident => $c:literal),* $(,)?) => {$(
        extern "C" fn $name() -> u32 {
            static ONCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
            super::fail_closed($c, &ONCE)
        }
    )*};
}

loader_fail_closed! {
    query_segment_descriptors => "hsa_ven_amd_loader_query_segment_descriptors",
    executable_iterate_loaded_code_objects => "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
    loaded_code_object_get_info => "hsa_ven_amd_loader_loaded_code_object_get_info",
    code_object_reader_create_from_file_with_offset_size => "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
    iterate_executables => "hsa_ven_amd_loader_iterate_executables",
}
