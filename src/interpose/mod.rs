//! The exported C ABI of `libsoftgpu_hsa.so`.
//!
//! Every entry point of ROCr's `libhsa-runtime64.so.1` (5.2.3) appears exactly
//! once in [`ENTRY_POINTS`], marked implemented or fail-closed. Implemented
//! exports live in [`exports`]: each converts raw C arguments (null checks,
//! handle lookups), calls the runtime, and converts the result to an
//! `hsa_status_t` in one place ([`status`]). Fail-closed exports are generated
//! by [`entry_points!`]: they return `HSA_STATUS_ERROR` and log one line naming
//! the function. No panic crosses the boundary: every export runs inside
//! `catch_unwind` and a panic becomes `HSA_STATUS_ERROR` (or a neutral value
//! for the few functions that do not return a status).
//!
//! The `hsa_*` ELF symbols are assembly aliases generated from the table, each
//! bound to the `ROCR_1` version; unit-test builds leave them out so test
//! binaries never define `hsa_*` symbols.

// The exports are x86-64 assembly trampolines (System V calling convention,
// `r11` as scratch): another target needs its own, so it must not build.
#[cfg(not(target_arch = "x86_64"))]
compile_error!(
    "libsoftgpu_hsa's export trampolines (src/interpose/mod.rs) are x86-64 assembly; port `trampoline!` to this target first"
);

pub mod exports;
pub mod forward;
pub mod images;
pub mod loader;
pub mod observe;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::abi::HsaStatus;

/// How SoftGPU answers an entry point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Support {
    /// Real semantics in the virtual runtime.
    Implemented,
    /// Returns an HSA error and logs the function name.
    FailClosed,
}

/// Run an export body, converting its result and containing panics.
#[inline]
pub(crate) fn status(name: &'static str, f: impl FnOnce() -> Result<(), HsaStatus>) -> u32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => HsaStatus::SUCCESS.0,
        Ok(Err(e)) => e.0,
        Err(_) => {
            tracing::error!("softgpu: internal panic in {name}; returning HSA_STATUS_ERROR");
            HsaStatus::ERROR.0
        }
    }
}

/// Run an export body that returns a plain value; a panic yields `fallback`.
#[inline]
pub(crate) fn value<R>(name: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            tracing::error!("softgpu: internal panic in {name}");
            fallback
        }
    }
}

/// Log a fail-closed call: warn the first time per function, debug afterwards.
pub(crate) fn fail_closed(name: &'static str, once: &AtomicBool) -> u32 {
    if !once.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "softgpu: {name} is not implemented by SoftGPU's virtual runtime; returning HSA_STATUS_ERROR"
        );
    } else {
        tracing::debug!("softgpu: {name} (not implemented) called again");
    }
    HsaStatus::ERROR.0
}

/// One export: the trampoline described in [`entry_points!`], tail-jumping to
/// `$target` (the shim's function) or to the entry's forward slot.
macro_rules! trampoline {
    ($name:ident, $target:path) => {
        #[cfg(not(test))]
        core::arch::global_asm!(
            ".pushsection .text",
            concat!(".globl ", stringify!($name)),
            concat!(".type ", stringify!($name), ", @function"),
            ".p2align 4",
            concat!(stringify!($name), ":"),
            "cmp byte ptr [rip + {counting}], 0",
            "jne 3f",
            "2:",
            "mov r11, qword ptr [rip + {slot}]",
            "test r11, r11",
            "jne 4f",
            "jmp {f}",
            "4:",
            "cmp byte ptr [rip + {counting}], 0",
            "je 5f",
            "lock inc qword ptr [rip + {fwd}]",
            "5:",
            "jmp r11",
            "3:",
            "lock inc qword ptr [rip + {recv}]",
            "jmp 2b",
            concat!(".size ", stringify!($name), ", . - ", stringify!($name)),
            concat!(".symver ", stringify!($name), ", ", stringify!($name), "@@ROCR_1"),
            ".popsection",
            f = sym $target,
            counting = sym forward::COUNTING,
            slot = sym table::slot::$name,
            fwd = sym table::forwarded::$name,
            recv = sym table::received::$name,
        );
    };
}

/// Declares the entry-point table, and generates the fail-closed exports.
/// A fail-closed export ignores its arguments: on the x86-64 System V ABI the
/// caller owns argument cleanup, so a callee that reads none is sound for any
/// signature returning `hsa_status_t` (a 32-bit integer).
macro_rules! entry_points {
    (implemented: [$($imp:ident),* $(,)?] fail_closed: [$($fc:ident),* $(,)?]) => {
        /// Every ROCr 5.2.3 entry point, plus the ROCr 6.x functions HIP 6.4
        /// imports, and how SoftGPU answers each.
        pub const ENTRY_POINTS: &[(&str, Support)] = &[
            $((stringify!($imp), Support::Implemented),)*
            $((stringify!($fc), Support::FailClosed),)*
        ];

        // Every export is a short trampoline named after the C function and
        // bound to the `ROCR_1` symbol version, like ROCr's own, so the shim
        // works both under LD_PRELOAD and as a drop-in `libhsa-runtime64.so.1`
        // for binaries linked against `hsa_init@ROCR_1`. The symbol and its
        // `.symver` must be defined in the same object file, which a Rust
        // `no_mangle` function cannot guarantee across codegen units; an
        // assembly block with the Rust function as a `sym` operand can. The
        // version node is defined by `hsa-headers/rocr.map` (build.rs).
        //
        // The trampoline (see `forward`): when call counting is on, count the
        // call; then, if the entry's forward slot holds an address (a real
        // ROCr function, in intercept or observe mode), count the forward and
        // tail-jump there, else tail-jump to the shim's own function. It
        // touches only r11 and the flags, which the System V ABI lets a callee
        // clobber, and never the stack, so every signature passes through.
        $(trampoline!($imp, exports::$imp);)*
        $(trampoline!($fc, fail_closed_exports::$fc);)*

        /// Per-entry state, one static of each kind per entry point, named
        /// after it: `slot` (forward target, 0 = answered by the shim),
        /// `real` (the real runtime's function, 0 = none resolved), and the
        /// `received` / `forwarded` call counters.
        #[allow(non_upper_case_globals)]
        pub mod table {
            pub mod slot {
                use std::sync::atomic::AtomicUsize;
                $(pub static $imp: AtomicUsize = AtomicUsize::new(0);)*
                $(pub static $fc: AtomicUsize = AtomicUsize::new(0);)*
            }
            pub mod real {
                use std::sync::atomic::AtomicUsize;
                $(pub static $imp: AtomicUsize = AtomicUsize::new(0);)*
                $(pub static $fc: AtomicUsize = AtomicUsize::new(0);)*
            }
            pub mod received {
                use std::sync::atomic::AtomicU64;
                $(pub static $imp: AtomicU64 = AtomicU64::new(0);)*
                $(pub static $fc: AtomicU64 = AtomicU64::new(0);)*
            }
            pub mod forwarded {
                use std::sync::atomic::AtomicU64;
                $(pub static $imp: AtomicU64 = AtomicU64::new(0);)*
                $(pub static $fc: AtomicU64 = AtomicU64::new(0);)*
            }
            /// Fail-closed stand-ins for functions the real runtime lacks.
            pub mod missing_real {
                $(pub extern "C" fn $imp() -> u32 {
                    super::super::forward::missing(stringify!($imp));
                    crate::abi::HsaStatus::ERROR.0
                })*
                $(pub extern "C" fn $fc() -> u32 {
                    super::super::forward::missing(stringify!($fc));
                    crate::abi::HsaStatus::ERROR.0
                })*
            }
            /// Every entry with its state, in [`super::ENTRY_POINTS`] order.
            pub static ENTRIES: &[super::forward::Entry] = &[
                $(super::forward::Entry {
                    name: stringify!($imp),
                    slot: &slot::$imp,
                    real: &real::$imp,
                    received: &received::$imp,
                    forwarded: &forwarded::$imp,
                    missing: missing_real::$imp,
                },)*
                $(super::forward::Entry {
                    name: stringify!($fc),
                    slot: &slot::$fc,
                    real: &real::$fc,
                    received: &received::$fc,
                    forwarded: &forwarded::$fc,
                    missing: missing_real::$fc,
                },)*
            ];
        }

        /// Generated fail-closed exports.
        pub mod fail_closed_exports {
            $(
                pub extern "C" fn $fc() -> u32 {
                    static ONCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
                    super::fail_closed(stringify!($fc), &ONCE)
                }
            )*
        }
    };
}

entry_points! {
    implemented: [
        hsa_init, hsa_shut_down, hsa_status_string,
        hsa_system_get_info, hsa_system_extension_supported, hsa_system_major_extension_supported,
        hsa_agent_extension_supported, hsa_agent_major_extension_supported, hsa_extension_get_name,
        hsa_iterate_agents, hsa_agent_get_info, hsa_agent_iterate_isas, hsa_agent_iterate_regions,
        hsa_isa_get_info, hsa_isa_get_info_alt, hsa_isa_from_name,
        hsa_agent_iterate_caches, hsa_cache_get_info, hsa_agent_get_exception_policies,
        hsa_isa_get_exception_policies, hsa_isa_get_round_method, hsa_isa_iterate_wavefronts,
        hsa_wavefront_get_info, hsa_isa_compatible,
        hsa_region_get_info, hsa_memory_allocate, hsa_memory_free, hsa_memory_copy,
        hsa_memory_register, hsa_memory_deregister, hsa_memory_assign_agent,
        hsa_amd_agent_iterate_memory_pools, hsa_amd_memory_pool_get_info,
        hsa_amd_agent_memory_pool_get_info, hsa_amd_memory_pool_allocate, hsa_amd_memory_pool_free,
        hsa_amd_agents_allow_access,
        hsa_signal_create, hsa_signal_destroy, hsa_amd_signal_create, hsa_amd_signal_value_pointer,
        hsa_amd_signal_async_handler, hsa_amd_signal_wait_any,
        hsa_signal_load_relaxed, hsa_signal_load_acquire, hsa_signal_load_scacquire,
        hsa_signal_store_relaxed, hsa_signal_store_release, hsa_signal_store_screlease,
        hsa_signal_silent_store_relaxed, hsa_signal_silent_store_screlease,
        hsa_signal_exchange_relaxed, hsa_signal_exchange_acquire, hsa_signal_exchange_release,
        hsa_signal_exchange_acq_rel, hsa_signal_exchange_scacquire, hsa_signal_exchange_screlease,
        hsa_signal_exchange_scacq_screl,
        hsa_signal_cas_relaxed, hsa_signal_cas_acquire, hsa_signal_cas_release, hsa_signal_cas_acq_rel,
        hsa_signal_cas_scacquire, hsa_signal_cas_screlease, hsa_signal_cas_scacq_screl,
        hsa_signal_add_relaxed, hsa_signal_add_acquire, hsa_signal_add_release, hsa_signal_add_acq_rel,
        hsa_signal_add_scacquire, hsa_signal_add_screlease, hsa_signal_add_scacq_screl,
        hsa_signal_subtract_relaxed, hsa_signal_subtract_acquire, hsa_signal_subtract_release,
        hsa_signal_subtract_acq_rel, hsa_signal_subtract_scacquire, hsa_signal_subtract_screlease,
        hsa_signal_subtract_scacq_screl,
        hsa_signal_and_relaxed, hsa_signal_and_acquire, hsa_signal_and_release, hsa_signal_and_acq_rel,
        hsa_signal_and_scacquire, hsa_signal_and_screlease, hsa_signal_and_scacq_screl,
        hsa_signal_or_relaxed, hsa_signal_or_acquire, hsa_signal_or_release, hsa_signal_or_acq_rel,
        hsa_signal_or_scacquire, hsa_signal_or_screlease, hsa_signal_or_scacq_screl,
        hsa_signal_xor_relaxed, hsa_signal_xor_acquire, hsa_signal_xor_release, hsa_signal_xor_acq_rel,
        hsa_signal_xor_scacquire, hsa_signal_xor_screlease, hsa_signal_xor_scacq_screl,
        hsa_signal_wait_relaxed, hsa_signal_wait_acquire, hsa_signal_wait_scacquire,
        hsa_queue_create, hsa_queue_destroy, hsa_queue_inactivate,
        hsa_queue_load_read_index_relaxed, hsa_queue_load_read_index_acquire,
        hsa_queue_load_read_index_scacquire,
        hsa_queue_load_write_index_relaxed, hsa_queue_load_write_index_acquire,
        hsa_queue_load_write_index_scacquire,
        hsa_queue_store_read_index_relaxed, hsa_queue_store_read_index_release,
        hsa_queue_store_read_index_screlease,
        hsa_queue_store_write_index_relaxed, hsa_queue_store_write_index_release,
        hsa_queue_store_write_index_screlease,
        hsa_queue_add_write_index_relaxed, hsa_queue_add_write_index_acquire,
        hsa_queue_add_write_index_release, hsa_queue_add_write_index_acq_rel,
        hsa_queue_add_write_index_scacquire, hsa_queue_add_write_index_screlease,
        hsa_queue_add_write_index_scacq_screl,
        hsa_queue_cas_write_index_relaxed, hsa_queue_cas_write_index_acquire,
        hsa_queue_cas_write_index_release, hsa_queue_cas_write_index_acq_rel,
        hsa_queue_cas_write_index_scacquire, hsa_queue_cas_write_index_screlease,
        hsa_queue_cas_write_index_scacq_screl,
        hsa_amd_profiling_get_dispatch_time, hsa_amd_profiling_set_profiler_enabled,
        // Imported by HIP 6.4 (ROCr 6.x additions):
        hsa_amd_enable_logging, hsa_amd_memory_async_copy_on_engine, hsa_amd_memory_copy_engine_status, hsa_amd_vmem_address_reserve, hsa_amd_vmem_address_free, hsa_amd_vmem_handle_create, hsa_amd_vmem_handle_release, hsa_amd_vmem_map, hsa_amd_vmem_unmap, hsa_amd_vmem_set_access, hsa_amd_vmem_get_access, hsa_amd_vmem_export_shareable_handle, hsa_amd_vmem_import_shareable_handle,
        hsa_code_object_reader_create_from_memory, hsa_code_object_reader_create_from_file, hsa_code_object_reader_destroy, hsa_executable_create, hsa_executable_create_alt, hsa_executable_destroy, hsa_executable_load_agent_code_object, hsa_executable_freeze, hsa_executable_get_info, hsa_executable_validate, hsa_executable_validate_alt, hsa_executable_get_symbol_by_name, hsa_executable_get_symbol, hsa_executable_symbol_get_info, hsa_executable_iterate_symbols, hsa_executable_iterate_agent_symbols, hsa_executable_iterate_program_symbols,
        hsa_amd_memory_async_copy, hsa_amd_memory_async_copy_rect, hsa_amd_memory_fill, hsa_amd_memory_lock, hsa_amd_memory_lock_to_pool, hsa_amd_memory_unlock, hsa_amd_pointer_info, hsa_amd_pointer_info_set_userdata, hsa_amd_profiling_async_copy_enable, hsa_amd_profiling_get_async_copy_time, hsa_amd_profiling_convert_tick_to_system_domain, hsa_amd_coherency_get_type, hsa_amd_coherency_set_type, hsa_amd_queue_cu_set_mask, hsa_amd_queue_cu_get_mask, hsa_amd_queue_set_priority, hsa_system_get_major_extension_table, hsa_system_get_extension_table,
        // The image extension (interpose/images.rs over runtime/images.rs).
        hsa_ext_image_get_capability, hsa_ext_image_get_capability_with_layout,
        hsa_ext_image_data_get_info, hsa_ext_image_data_get_info_with_layout,
        hsa_ext_image_create, hsa_ext_image_create_with_layout, hsa_ext_image_destroy,
        hsa_ext_image_import, hsa_ext_image_export, hsa_ext_image_copy, hsa_ext_image_clear,
        hsa_ext_sampler_create, hsa_ext_sampler_destroy,
        hsa_amd_image_create, hsa_amd_image_get_info_max_dim,
    ]
    fail_closed: [
        hsa_soft_queue_create,
        hsa_signal_group_create, hsa_signal_group_destroy, hsa_signal_group_wait_any_relaxed,
        hsa_signal_group_wait_any_scacquire,
        hsa_amd_async_function, hsa_amd_register_deallocation_callback, hsa_amd_deregister_deallocation_callback,
        hsa_amd_interop_map_buffer, hsa_amd_interop_unmap_buffer,
        hsa_amd_ipc_memory_attach, hsa_amd_ipc_memory_create, hsa_amd_ipc_memory_detach,
        hsa_amd_ipc_signal_attach, hsa_amd_ipc_signal_create,
        hsa_amd_memory_migrate, hsa_amd_memory_pool_can_migrate,
        hsa_amd_register_system_event_handler,
        hsa_amd_svm_attributes_get, hsa_amd_svm_attributes_set, hsa_amd_svm_prefetch_async,
        hsa_code_object_deserialize, hsa_code_object_destroy, hsa_code_object_get_info,
        hsa_code_object_get_symbol, hsa_code_object_get_symbol_from_name,
        hsa_code_object_iterate_symbols, hsa_code_object_serialize, hsa_code_symbol_get_info,
        hsa_executable_agent_global_variable_define, hsa_executable_global_variable_define, hsa_executable_load_code_object,
        hsa_executable_load_program_code_object, hsa_executable_readonly_variable_define,
        hsa_ext_program_add_module, hsa_ext_program_create, hsa_ext_program_destroy,
        hsa_ext_program_finalize, hsa_ext_program_get_info, hsa_ext_program_iterate_modules,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_point_appears_exactly_once() {
        let mut names: Vec<&str> = ENTRY_POINTS.iter().map(|(n, _)| *n).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate entry point in the table");
        // ROCr 5.2.3's 224 functions plus the 13 that HIP 6.4 imports from ROCr 6.x.
        assert_eq!(n, 224 + 13);
    }

    #[test]
    fn a_panic_inside_an_export_becomes_hsa_status_error() {
        let st = status("test_export", || panic!("boom"));
        assert_eq!(st, HsaStatus::ERROR.0);
        assert_eq!(value("test_value", -7i64, || panic!("boom")), -7);
    }

    #[test]
    fn results_convert_to_status_codes_in_one_place() {
        assert_eq!(status("ok", || Ok(())), 0);
        assert_eq!(
            status("err", || Err(HsaStatus::ERROR_INVALID_SIGNAL)),
            0x1006
        );
    }

    #[test]
    fn a_fail_closed_export_returns_error_and_never_success() {
        let r = fail_closed_exports::hsa_soft_queue_create();
        assert_eq!(r, HsaStatus::ERROR.0);
        let r = fail_closed_exports::hsa_soft_queue_create();
        assert_eq!(r, HsaStatus::ERROR.0);
    }
}
