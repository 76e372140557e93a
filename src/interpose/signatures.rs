//! The C signature of every entry point in the table (`super::entry_points!`),
//! generated from the pinned headers by `tests/entry_signatures.rs`: do not
//! edit; rerun that test with SOFTGPU_BLESS=1.
//!
//! For each entry: its function-pointer type (the exports are checked against
//! it at compile time, and the real runtime's function is called through it),
//! and in [`missing`] the stand-in answered when the real runtime lacks the
//! function, which logs and returns the entry's failure value.

#![allow(unsafe_code, non_camel_case_types, dead_code, unused_imports, clippy::missing_safety_doc)]

use core::ffi::{c_char, c_void};

use crate::abi::{
    AccessDesc, AisFileHandle, Dim3, DispatchTime, HsaAgent, HsaSignal, PitchedPtr, PointerInfo,
};
use crate::runtime::images::abi::{
    AmdImageDescriptorHead, ImageDataInfo, ImageDescriptor, ImageFormat, ImageRegion, SamplerDescriptor,
    SamplerDescriptorV2,
};

/// `hsa_status_t hsa_init(void)` (ROCr 5.2.3)
pub type hsa_init = unsafe extern "C" fn() -> u32;

/// `hsa_status_t hsa_shut_down(void)` (ROCr 5.2.3)
pub type hsa_shut_down = unsafe extern "C" fn() -> u32;

/// `hsa_status_t hsa_status_string(hsa_status_t status, const char **status_string)` (ROCr 5.2.3)
pub type hsa_status_string = unsafe extern "C" fn(u32, *mut *const c_char) -> u32;

/// `hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_system_get_info = unsafe extern "C" fn(u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t version_major, uint16_t version_minor, _Bool *result)` (ROCr 5.2.3)
pub type hsa_system_extension_supported = unsafe extern "C" fn(u16, u16, u16, *mut bool) -> u32;

/// `hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t version_major, uint16_t *version_minor, _Bool *result)` (ROCr 5.2.3)
pub type hsa_system_major_extension_supported = unsafe extern "C" fn(u16, u16, *mut u16, *mut bool) -> u32;

/// `hsa_status_t hsa_agent_extension_supported(uint16_t extension, hsa_agent_t agent, uint16_t version_major, uint16_t version_minor, _Bool *result)` (ROCr 5.2.3)
pub type hsa_agent_extension_supported = unsafe extern "C" fn(u16, HsaAgent, u16, u16, *mut bool) -> u32;

/// `hsa_status_t hsa_agent_major_extension_supported(uint16_t extension, hsa_agent_t agent, uint16_t version_major, uint16_t *version_minor, _Bool *result)` (ROCr 5.2.3)
pub type hsa_agent_major_extension_supported = unsafe extern "C" fn(u16, HsaAgent, u16, *mut u16, *mut bool) -> u32;

/// `hsa_status_t hsa_extension_get_name(uint16_t extension, const char **name)` (ROCr 5.2.3)
pub type hsa_extension_get_name = unsafe extern "C" fn(u16, *mut *const c_char) -> u32;

/// `hsa_status_t hsa_iterate_agents(hsa_status_t(*callback)(hsa_agent_t agent, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_iterate_agents = unsafe extern "C" fn(Option<unsafe extern "C" fn(HsaAgent, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_agent_get_info = unsafe extern "C" fn(HsaAgent, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent, hsa_status_t(*callback)(hsa_isa_t isa, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_agent_iterate_isas = unsafe extern "C" fn(HsaAgent, Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent, hsa_status_t(*callback)(hsa_region_t region, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_agent_iterate_regions = unsafe extern "C" fn(HsaAgent, Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_isa_get_info(hsa_isa_t isa, hsa_isa_info_t attribute, uint32_t index, void *value)` (ROCr 5.2.3)
pub type hsa_isa_get_info = unsafe extern "C" fn(u64, u32, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_isa_get_info_alt = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_isa_from_name(const char *name, hsa_isa_t *isa)` (ROCr 5.2.3)
pub type hsa_isa_from_name = unsafe extern "C" fn(*const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_agent_iterate_caches(hsa_agent_t agent, hsa_status_t(*callback)(hsa_cache_t cache, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_agent_iterate_caches = unsafe extern "C" fn(HsaAgent, Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_cache_get_info(hsa_cache_t cache, hsa_cache_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_cache_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_agent_get_exception_policies(hsa_agent_t agent, hsa_profile_t profile, uint16_t *mask)` (ROCr 5.2.3)
pub type hsa_agent_get_exception_policies = unsafe extern "C" fn(HsaAgent, u32, *mut u16) -> u32;

/// `hsa_status_t hsa_isa_get_exception_policies(hsa_isa_t isa, hsa_profile_t profile, uint16_t *mask)` (ROCr 5.2.3)
pub type hsa_isa_get_exception_policies = unsafe extern "C" fn(u64, u32, *mut u16) -> u32;

/// `hsa_status_t hsa_isa_get_round_method(hsa_isa_t isa, hsa_fp_type_t fp_type, hsa_flush_mode_t flush_mode, hsa_round_method_t *round_method)` (ROCr 5.2.3)
pub type hsa_isa_get_round_method = unsafe extern "C" fn(u64, u32, u32, *mut u32) -> u32;

/// `hsa_status_t hsa_isa_iterate_wavefronts(hsa_isa_t isa, hsa_status_t(*callback)(hsa_wavefront_t wavefront, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_isa_iterate_wavefronts = unsafe extern "C" fn(u64, Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_wavefront_get_info(hsa_wavefront_t wavefront, hsa_wavefront_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_wavefront_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_isa_compatible(hsa_isa_t code_object_isa, hsa_isa_t agent_isa, _Bool *result)` (ROCr 5.2.3)
pub type hsa_isa_compatible = unsafe extern "C" fn(u64, u64, *mut bool) -> u32;

/// `hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_region_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void **ptr)` (ROCr 5.2.3)
pub type hsa_memory_allocate = unsafe extern "C" fn(u64, usize, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_memory_free(void *ptr)` (ROCr 5.2.3)
pub type hsa_memory_free = unsafe extern "C" fn(*mut c_void) -> u32;

/// `hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size)` (ROCr 5.2.3)
pub type hsa_memory_copy = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> u32;

/// `hsa_status_t hsa_memory_register(void *ptr, size_t size)` (ROCr 5.2.3)
pub type hsa_memory_register = unsafe extern "C" fn(*mut c_void, usize) -> u32;

/// `hsa_status_t hsa_memory_deregister(void *ptr, size_t size)` (ROCr 5.2.3)
pub type hsa_memory_deregister = unsafe extern "C" fn(*mut c_void, usize) -> u32;

/// `hsa_status_t hsa_memory_assign_agent(void *ptr, hsa_agent_t agent, hsa_access_permission_t access)` (ROCr 5.2.3)
pub type hsa_memory_assign_agent = unsafe extern "C" fn(*mut c_void, HsaAgent, u32) -> u32;

/// `hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent, hsa_status_t(*callback)(hsa_amd_memory_pool_t memory_pool, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_amd_agent_iterate_memory_pools = unsafe extern "C" fn(HsaAgent, Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t memory_pool, hsa_amd_memory_pool_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_amd_memory_pool_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent, hsa_amd_memory_pool_t memory_pool, hsa_amd_agent_memory_pool_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_amd_agent_memory_pool_get_info = unsafe extern "C" fn(HsaAgent, u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t memory_pool, size_t size, uint32_t flags, void **ptr)` (ROCr 5.2.3)
pub type hsa_amd_memory_pool_allocate = unsafe extern "C" fn(u64, usize, u32, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_pool_free(void *ptr)` (ROCr 5.2.3)
pub type hsa_amd_memory_pool_free = unsafe extern "C" fn(*mut c_void) -> u32;

/// `hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t *agents, const uint32_t *flags, const void *ptr)` (ROCr 5.2.3)
pub type hsa_amd_agents_allow_access = unsafe extern "C" fn(u32, *const HsaAgent, *const u32, *const c_void) -> u32;

/// `hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers, const hsa_agent_t *consumers, hsa_signal_t *signal)` (ROCr 5.2.3)
pub type hsa_signal_create = unsafe extern "C" fn(i64, u32, *const HsaAgent, *mut HsaSignal) -> u32;

/// `hsa_status_t hsa_signal_destroy(hsa_signal_t signal)` (ROCr 5.2.3)
pub type hsa_signal_destroy = unsafe extern "C" fn(HsaSignal) -> u32;

/// `hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers, const hsa_agent_t *consumers, uint64_t attributes, hsa_signal_t *signal)` (ROCr 5.2.3)
pub type hsa_amd_signal_create = unsafe extern "C" fn(i64, u32, *const HsaAgent, u64, *mut HsaSignal) -> u32;

/// `hsa_status_t hsa_amd_signal_value_pointer(hsa_signal_t signal, volatile hsa_signal_value_t **value_ptr)` (ROCr 5.2.3)
pub type hsa_amd_signal_value_pointer = unsafe extern "C" fn(HsaSignal, *mut *mut i64) -> u32;

/// `hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, hsa_signal_condition_t cond, hsa_signal_value_t value, hsa_amd_signal_handler handler, void *arg)` (ROCr 5.2.3)
pub type hsa_amd_signal_async_handler = unsafe extern "C" fn(HsaSignal, u32, i64, Option<unsafe extern "C" fn(i64, *mut c_void) -> bool>, *mut c_void) -> u32;

/// `uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t *signals, hsa_signal_condition_t *conds, hsa_signal_value_t *values, uint64_t timeout_hint, hsa_wait_state_t wait_hint, hsa_signal_value_t *satisfying_value)` (ROCr 5.2.3)
pub type hsa_amd_signal_wait_any = unsafe extern "C" fn(u32, *mut HsaSignal, *mut u32, *mut i64, u64, u32, *mut i64) -> u32;

/// `hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t signal)` (ROCr 5.2.3)
pub type hsa_signal_load_relaxed = unsafe extern "C" fn(HsaSignal) -> i64;

/// `hsa_signal_value_t hsa_signal_load_acquire(hsa_signal_t signal)` (ROCr 5.2.3)
pub type hsa_signal_load_acquire = unsafe extern "C" fn(HsaSignal) -> i64;

/// `hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal)` (ROCr 5.2.3)
pub type hsa_signal_load_scacquire = unsafe extern "C" fn(HsaSignal) -> i64;

/// `void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_store_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_store_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_store_release = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_store_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_silent_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_silent_store_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_silent_store_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_silent_store_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `hsa_signal_value_t hsa_signal_exchange_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_relaxed = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_exchange_acquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_acquire = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_exchange_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_release = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_exchange_acq_rel(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_acq_rel = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_exchange_scacquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_scacquire = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_exchange_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_screlease = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_exchange_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_exchange_scacq_screl = unsafe extern "C" fn(HsaSignal, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_relaxed(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_relaxed = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_acquire(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_acquire = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_release(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_release = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_acq_rel(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_acq_rel = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_scacquire(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_scacquire = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_screlease(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_screlease = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `hsa_signal_value_t hsa_signal_cas_scacq_screl(hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_cas_scacq_screl = unsafe extern "C" fn(HsaSignal, i64, i64) -> i64;

/// `void hsa_signal_add_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_add_acquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_acquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_add_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_release = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_add_acq_rel(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_acq_rel = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_add_scacquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_scacquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_add_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_add_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_add_scacq_screl = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_acquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_acquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_release = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_acq_rel(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_acq_rel = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_scacquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_scacquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_subtract_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_subtract_scacq_screl = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_acquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_acquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_release = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_acq_rel(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_acq_rel = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_scacquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_scacquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_and_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_and_scacq_screl = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_acquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_acquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_release = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_acq_rel(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_acq_rel = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_scacquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_scacquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_or_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_or_scacq_screl = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_relaxed(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_relaxed = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_acquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_acquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_release(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_release = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_acq_rel(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_acq_rel = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_scacquire(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_scacquire = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_screlease(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_screlease = unsafe extern "C" fn(HsaSignal, i64);

/// `void hsa_signal_xor_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value)` (ROCr 5.2.3)
pub type hsa_signal_xor_scacq_screl = unsafe extern "C" fn(HsaSignal, i64);

/// `hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition, hsa_signal_value_t compare_value, uint64_t timeout_hint, hsa_wait_state_t wait_state_hint)` (ROCr 5.2.3)
pub type hsa_signal_wait_relaxed = unsafe extern "C" fn(HsaSignal, u32, i64, u64, u32) -> i64;

/// `hsa_signal_value_t hsa_signal_wait_acquire(hsa_signal_t signal, hsa_signal_condition_t condition, hsa_signal_value_t compare_value, uint64_t timeout_hint, hsa_wait_state_t wait_state_hint)` (ROCr 5.2.3)
pub type hsa_signal_wait_acquire = unsafe extern "C" fn(HsaSignal, u32, i64, u64, u32) -> i64;

/// `hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition, hsa_signal_value_t compare_value, uint64_t timeout_hint, hsa_wait_state_t wait_state_hint)` (ROCr 5.2.3)
pub type hsa_signal_wait_scacquire = unsafe extern "C" fn(HsaSignal, u32, i64, u64, u32) -> i64;

/// `hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type, void(*callback)(hsa_status_t status, hsa_queue_t *source, void *data), void *data, uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t **queue)` (ROCr 5.2.3)
pub type hsa_queue_create = unsafe extern "C" fn(HsaAgent, u32, u32, Option<unsafe extern "C" fn(u32, *mut c_void, *mut c_void)>, *mut c_void, u32, u32, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_queue_destroy(hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_destroy = unsafe extern "C" fn(*mut c_void) -> u32;

/// `hsa_status_t hsa_queue_inactivate(hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_inactivate = unsafe extern "C" fn(*mut c_void) -> u32;

/// `uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_load_read_index_relaxed = unsafe extern "C" fn(*const c_void) -> u64;

/// `uint64_t hsa_queue_load_read_index_acquire(const hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_load_read_index_acquire = unsafe extern "C" fn(*const c_void) -> u64;

/// `uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_load_read_index_scacquire = unsafe extern "C" fn(*const c_void) -> u64;

/// `uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_load_write_index_relaxed = unsafe extern "C" fn(*const c_void) -> u64;

/// `uint64_t hsa_queue_load_write_index_acquire(const hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_load_write_index_acquire = unsafe extern "C" fn(*const c_void) -> u64;

/// `uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t *queue)` (ROCr 5.2.3)
pub type hsa_queue_load_write_index_scacquire = unsafe extern "C" fn(*const c_void) -> u64;

/// `void hsa_queue_store_read_index_relaxed(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_store_read_index_relaxed = unsafe extern "C" fn(*const c_void, u64);

/// `void hsa_queue_store_read_index_release(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_store_read_index_release = unsafe extern "C" fn(*const c_void, u64);

/// `void hsa_queue_store_read_index_screlease(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_store_read_index_screlease = unsafe extern "C" fn(*const c_void, u64);

/// `void hsa_queue_store_write_index_relaxed(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_store_write_index_relaxed = unsafe extern "C" fn(*const c_void, u64);

/// `void hsa_queue_store_write_index_release(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_store_write_index_release = unsafe extern "C" fn(*const c_void, u64);

/// `void hsa_queue_store_write_index_screlease(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_store_write_index_screlease = unsafe extern "C" fn(*const c_void, u64);

/// `uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_relaxed = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_add_write_index_acquire(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_acquire = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_add_write_index_release(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_release = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_add_write_index_acq_rel(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_acq_rel = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_add_write_index_scacquire(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_scacquire = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_screlease = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_add_write_index_scacq_screl(const hsa_queue_t *queue, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_add_write_index_scacq_screl = unsafe extern "C" fn(*const c_void, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_relaxed(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_relaxed = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_acquire(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_acquire = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_release(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_release = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_acq_rel(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_acq_rel = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_scacquire(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_scacquire = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_screlease(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_screlease = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `uint64_t hsa_queue_cas_write_index_scacq_screl(const hsa_queue_t *queue, uint64_t expected, uint64_t value)` (ROCr 5.2.3)
pub type hsa_queue_cas_write_index_scacq_screl = unsafe extern "C" fn(*const c_void, u64, u64) -> u64;

/// `hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal, hsa_amd_profiling_dispatch_time_t *time)` (ROCr 5.2.3)
pub type hsa_amd_profiling_get_dispatch_time = unsafe extern "C" fn(HsaAgent, HsaSignal, *mut DispatchTime) -> u32;

/// `hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t *queue, int enable)` (ROCr 5.2.3)
pub type hsa_amd_profiling_set_profiler_enabled = unsafe extern "C" fn(*mut c_void, i32) -> u32;

/// `hsa_status_t hsa_amd_enable_logging(uint8_t *flags, void *file)` (ROCr 6.4.3)
pub type hsa_amd_enable_logging = unsafe extern "C" fn(*mut u8, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_async_copy_on_engine(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals, const hsa_signal_t *dep_signals, hsa_signal_t completion_signal, hsa_amd_sdma_engine_id_t engine_id, _Bool force_copy_on_sdma)` (ROCr 6.4.3)
pub type hsa_amd_memory_async_copy_on_engine = unsafe extern "C" fn(*mut c_void, HsaAgent, *const c_void, HsaAgent, usize, u32, *const HsaSignal, HsaSignal, u32, bool) -> u32;

/// `hsa_status_t hsa_amd_memory_copy_engine_status(hsa_agent_t dst_agent, hsa_agent_t src_agent, uint32_t *engine_ids_mask)` (ROCr 6.4.3)
pub type hsa_amd_memory_copy_engine_status = unsafe extern "C" fn(HsaAgent, HsaAgent, *mut u32) -> u32;

/// `hsa_status_t hsa_amd_vmem_address_reserve(void **va, size_t size, uint64_t address, uint64_t flags)` (ROCr 6.4.3)
pub type hsa_amd_vmem_address_reserve = unsafe extern "C" fn(*mut *mut c_void, usize, u64, u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_address_free(void *va, size_t size)` (ROCr 6.4.3)
pub type hsa_amd_vmem_address_free = unsafe extern "C" fn(*mut c_void, usize) -> u32;

/// `hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t pool, size_t size, hsa_amd_memory_type_t type, uint64_t flags, hsa_amd_vmem_alloc_handle_t *memory_handle)` (ROCr 6.4.3)
pub type hsa_amd_vmem_handle_create = unsafe extern "C" fn(u64, usize, u32, u64, *mut u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_handle_release(hsa_amd_vmem_alloc_handle_t memory_handle)` (ROCr 6.4.3)
pub type hsa_amd_vmem_handle_release = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_map(void *va, size_t size, size_t in_offset, hsa_amd_vmem_alloc_handle_t memory_handle, uint64_t flags)` (ROCr 6.4.3)
pub type hsa_amd_vmem_map = unsafe extern "C" fn(*mut c_void, usize, usize, u64, u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_unmap(void *va, size_t size)` (ROCr 6.4.3)
pub type hsa_amd_vmem_unmap = unsafe extern "C" fn(*mut c_void, usize) -> u32;

/// `hsa_status_t hsa_amd_vmem_set_access(void *va, size_t size, const hsa_amd_memory_access_desc_t *desc, size_t desc_cnt)` (ROCr 6.4.3)
pub type hsa_amd_vmem_set_access = unsafe extern "C" fn(*mut c_void, usize, *const AccessDesc, usize) -> u32;

/// `hsa_status_t hsa_amd_vmem_get_access(void *va, hsa_access_permission_t *perms, hsa_agent_t agent_handle)` (ROCr 6.4.3)
pub type hsa_amd_vmem_get_access = unsafe extern "C" fn(*mut c_void, *mut u32, HsaAgent) -> u32;

/// `hsa_status_t hsa_amd_vmem_export_shareable_handle(int *dmabuf_fd, hsa_amd_vmem_alloc_handle_t handle, uint64_t flags)` (ROCr 6.4.3)
pub type hsa_amd_vmem_export_shareable_handle = unsafe extern "C" fn(*mut i32, u64, u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_import_shareable_handle(int dmabuf_fd, hsa_amd_vmem_alloc_handle_t *handle)` (ROCr 6.4.3)
pub type hsa_amd_vmem_import_shareable_handle = unsafe extern "C" fn(i32, *mut u64) -> u32;

/// `hsa_status_t hsa_amd_agent_set_async_scratch_limit(hsa_agent_t agent, size_t threshold)` (ROCr 6.4.3)
pub type hsa_amd_agent_set_async_scratch_limit = unsafe extern "C" fn(HsaAgent, usize) -> u32;

/// `hsa_status_t hsa_amd_ais_file_read(hsa_amd_ais_file_handle_t handle, void *devicePtr, uint64_t size, int64_t file_offset, uint64_t *size_copied, int32_t *status)` (ROCr 7.2.4)
pub type hsa_amd_ais_file_read = unsafe extern "C" fn(AisFileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> u32;

/// `hsa_status_t hsa_amd_ais_file_write(hsa_amd_ais_file_handle_t handle, void *devicePtr, uint64_t size, int64_t file_offset, uint64_t *size_copied, int32_t *status)` (ROCr 7.2.4)
pub type hsa_amd_ais_file_write = unsafe extern "C" fn(AisFileHandle, *mut c_void, u64, i64, *mut u64, *mut i32) -> u32;

/// `hsa_status_t hsa_amd_memory_get_preferred_copy_engine(hsa_agent_t dst_agent, hsa_agent_t src_agent, uint32_t *recommended_ids_mask)` (ROCr 7.2.4)
pub type hsa_amd_memory_get_preferred_copy_engine = unsafe extern "C" fn(HsaAgent, HsaAgent, *mut u32) -> u32;

/// `hsa_status_t hsa_amd_portable_export_dmabuf(const void *ptr, size_t size, int *dmabuf, uint64_t *offset)` (ROCr 6.4.3)
pub type hsa_amd_portable_export_dmabuf = unsafe extern "C" fn(*const c_void, usize, *mut i32, *mut u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_address_reserve_align(void **va, size_t size, uint64_t address, uint64_t alignment, uint64_t flags)` (ROCr 6.4.3)
pub type hsa_amd_vmem_address_reserve_align = unsafe extern "C" fn(*mut *mut c_void, usize, u64, u64, u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_retain_alloc_handle(hsa_amd_vmem_alloc_handle_t *memory_handle, void *addr)` (ROCr 6.4.3)
pub type hsa_amd_vmem_retain_alloc_handle = unsafe extern "C" fn(*mut u64, *mut c_void) -> u32;

/// `hsa_status_t hsa_ext_sampler_create_v2(hsa_agent_t agent, const hsa_ext_sampler_descriptor_v2_t *sampler_descriptor, hsa_ext_sampler_t *sampler)` (ROCr 6.4.3)
pub type hsa_ext_sampler_create_v2 = unsafe extern "C" fn(HsaAgent, *const SamplerDescriptorV2, *mut u64) -> u32;

/// `hsa_status_t hsa_amd_vmem_get_alloc_properties_from_handle(hsa_amd_vmem_alloc_handle_t memory_handle, hsa_amd_memory_pool_t *pool, hsa_amd_memory_type_t *type)` (ROCr 6.4.3)
pub type hsa_amd_vmem_get_alloc_properties_from_handle = unsafe extern "C" fn(u64, *mut u64, *mut u32) -> u32;

/// `hsa_status_t hsa_amd_queue_get_info(hsa_queue_t *queue, hsa_queue_info_attribute_t attribute, void *value)` (ROCr 6.4.3)
pub type hsa_amd_queue_get_info = unsafe extern "C" fn(*mut c_void, u32, *mut c_void) -> u32;

/// `uint32_t hsa_amd_signal_wait_all(uint32_t signal_count, hsa_signal_t *signals, hsa_signal_condition_t *conds, hsa_signal_value_t *values, uint64_t timeout_hint, hsa_wait_state_t wait_hint, hsa_signal_value_t *satisfying_values)` (ROCr 6.4.3)
pub type hsa_amd_signal_wait_all = unsafe extern "C" fn(u32, *mut HsaSignal, *mut u32, *mut i64, u64, u32, *mut i64) -> u32;

/// `hsa_status_t hsa_amd_portable_export_dmabuf_v2(const void *ptr, size_t size, int *dmabuf, uint64_t *offset, uint64_t flags)` (ROCr 7.2.4)
pub type hsa_amd_portable_export_dmabuf_v2 = unsafe extern "C" fn(*const c_void, usize, *mut i32, *mut u64, u64) -> u32;

/// `hsa_status_t hsa_amd_portable_close_dmabuf(int dmabuf)` (ROCr 6.4.3)
pub type hsa_amd_portable_close_dmabuf = unsafe extern "C" fn(i32) -> u32;

/// `hsa_status_t hsa_amd_spm_acquire(hsa_agent_t preferred_agent)` (ROCr 6.4.3)
pub type hsa_amd_spm_acquire = unsafe extern "C" fn(HsaAgent) -> u32;

/// `hsa_status_t hsa_amd_spm_release(hsa_agent_t preferred_agent)` (ROCr 6.4.3)
pub type hsa_amd_spm_release = unsafe extern "C" fn(HsaAgent) -> u32;

/// `hsa_status_t hsa_amd_spm_set_dest_buffer(hsa_agent_t preferred_agent, size_t size_in_bytes, uint32_t *timeout, uint32_t *size_copied, void *dest, _Bool *is_data_loss)` (ROCr 6.4.3)
pub type hsa_amd_spm_set_dest_buffer = unsafe extern "C" fn(HsaAgent, usize, *mut u32, *mut u32, *mut c_void, *mut bool) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_iterate_configuration(hsa_agent_t agent, hsa_ven_amd_pcs_iterate_configuration_callback_t configuration_callback, void *callback_data)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_iterate_configuration = unsafe extern "C" fn(HsaAgent, Option<unsafe extern "C" fn(*const c_void, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_create(hsa_agent_t agent, hsa_ven_amd_pcs_method_kind_t method, hsa_ven_amd_pcs_units_t units, size_t interval, size_t latency, size_t buffer_size, hsa_ven_amd_pcs_data_ready_callback_t data_ready_callback, void *client_callback_data, hsa_ven_amd_pcs_t *pc_sampling)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_create = unsafe extern "C" fn(HsaAgent, u32, u32, usize, usize, usize, Option<unsafe extern "C" fn(*mut c_void, usize, usize, Option<unsafe extern "C" fn(*mut c_void, usize, *mut c_void) -> u32>, *mut c_void)>, *mut c_void, *mut u64) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_create_from_id(uint32_t pcs_id, hsa_agent_t agent, hsa_ven_amd_pcs_method_kind_t method, hsa_ven_amd_pcs_units_t units, size_t interval, size_t latency, size_t buffer_size, hsa_ven_amd_pcs_data_ready_callback_t data_ready_callback, void *client_callback_data, hsa_ven_amd_pcs_t *pc_sampling)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_create_from_id = unsafe extern "C" fn(u32, HsaAgent, u32, u32, usize, usize, usize, Option<unsafe extern "C" fn(*mut c_void, usize, usize, Option<unsafe extern "C" fn(*mut c_void, usize, *mut c_void) -> u32>, *mut c_void)>, *mut c_void, *mut u64) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_destroy(hsa_ven_amd_pcs_t pc_sampling)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_destroy = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_start(hsa_ven_amd_pcs_t pc_sampling)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_start = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_stop(hsa_ven_amd_pcs_t pc_sampling)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_stop = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_ven_amd_pcs_flush(hsa_ven_amd_pcs_t pc_sampling)` (ROCr 6.4.3)
pub type hsa_ven_amd_pcs_flush = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_code_object_reader_create_from_memory(const void *code_object, size_t size, hsa_code_object_reader_t *code_object_reader)` (ROCr 5.2.3)
pub type hsa_code_object_reader_create_from_memory = unsafe extern "C" fn(*const c_void, usize, *mut u64) -> u32;

/// `hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file, hsa_code_object_reader_t *code_object_reader)` (ROCr 5.2.3)
pub type hsa_code_object_reader_create_from_file = unsafe extern "C" fn(i32, *mut u64) -> u32;

/// `hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader)` (ROCr 5.2.3)
pub type hsa_code_object_reader_destroy = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_executable_create(hsa_profile_t profile, hsa_executable_state_t executable_state, const char *options, hsa_executable_t *executable)` (ROCr 5.2.3)
pub type hsa_executable_create = unsafe extern "C" fn(u32, u32, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_executable_create_alt(hsa_profile_t profile, hsa_default_float_rounding_mode_t default_float_rounding_mode, const char *options, hsa_executable_t *executable)` (ROCr 5.2.3)
pub type hsa_executable_create_alt = unsafe extern "C" fn(u32, u32, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_executable_destroy(hsa_executable_t executable)` (ROCr 5.2.3)
pub type hsa_executable_destroy = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t code_object_reader, const char *options, hsa_loaded_code_object_t *loaded_code_object)` (ROCr 5.2.3)
pub type hsa_executable_load_agent_code_object = unsafe extern "C" fn(u64, HsaAgent, u64, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char *options)` (ROCr 5.2.3)
pub type hsa_executable_freeze = unsafe extern "C" fn(u64, *const c_char) -> u32;

/// `hsa_status_t hsa_executable_get_info(hsa_executable_t executable, hsa_executable_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_executable_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_validate(hsa_executable_t executable, uint32_t *result)` (ROCr 5.2.3)
pub type hsa_executable_validate = unsafe extern "C" fn(u64, *mut u32) -> u32;

/// `hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable, const char *options, uint32_t *result)` (ROCr 5.2.3)
pub type hsa_executable_validate_alt = unsafe extern "C" fn(u64, *const c_char, *mut u32) -> u32;

/// `hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char *symbol_name, const hsa_agent_t *agent, hsa_executable_symbol_t *symbol)` (ROCr 5.2.3)
pub type hsa_executable_get_symbol_by_name = unsafe extern "C" fn(u64, *const c_char, *const HsaAgent, *mut u64) -> u32;

/// `hsa_status_t hsa_executable_get_symbol(hsa_executable_t executable, const char *module_name, const char *symbol_name, hsa_agent_t agent, int32_t call_convention, hsa_executable_symbol_t *symbol)` (ROCr 5.2.3)
pub type hsa_executable_get_symbol = unsafe extern "C" fn(u64, *const c_char, *const c_char, HsaAgent, i32, *mut u64) -> u32;

/// `hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol, hsa_executable_symbol_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_executable_symbol_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_iterate_symbols(hsa_executable_t executable, hsa_status_t(*callback)(hsa_executable_t exec, hsa_executable_symbol_t symbol, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_executable_iterate_symbols = unsafe extern "C" fn(u64, Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_iterate_agent_symbols(hsa_executable_t executable, hsa_agent_t agent, hsa_status_t(*callback)(hsa_executable_t exec, hsa_agent_t agent, hsa_executable_symbol_t symbol, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_executable_iterate_agent_symbols = unsafe extern "C" fn(u64, HsaAgent, Option<unsafe extern "C" fn(u64, HsaAgent, u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_iterate_program_symbols(hsa_executable_t executable, hsa_status_t(*callback)(hsa_executable_t exec, hsa_executable_symbol_t symbol, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_executable_iterate_program_symbols = unsafe extern "C" fn(u64, Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals, const hsa_signal_t *dep_signals, hsa_signal_t completion_signal)` (ROCr 5.2.3)
pub type hsa_amd_memory_async_copy = unsafe extern "C" fn(*mut c_void, HsaAgent, *const c_void, HsaAgent, usize, u32, *const HsaSignal, HsaSignal) -> u32;

/// `hsa_status_t hsa_amd_memory_async_copy_rect(const hsa_pitched_ptr_t *dst, const hsa_dim3_t *dst_offset, const hsa_pitched_ptr_t *src, const hsa_dim3_t *src_offset, const hsa_dim3_t *range, hsa_agent_t copy_agent, hsa_amd_copy_direction_t dir, uint32_t num_dep_signals, const hsa_signal_t *dep_signals, hsa_signal_t completion_signal)` (ROCr 5.2.3)
pub type hsa_amd_memory_async_copy_rect = unsafe extern "C" fn(*const PitchedPtr, *const Dim3, *const PitchedPtr, *const Dim3, *const Dim3, HsaAgent, u32, u32, *const HsaSignal, HsaSignal) -> u32;

/// `hsa_status_t hsa_amd_memory_fill(void *ptr, uint32_t value, size_t count)` (ROCr 5.2.3)
pub type hsa_amd_memory_fill = unsafe extern "C" fn(*mut c_void, u32, usize) -> u32;

/// `hsa_status_t hsa_amd_memory_lock(void *host_ptr, size_t size, hsa_agent_t *agents, int num_agent, void **agent_ptr)` (ROCr 5.2.3)
pub type hsa_amd_memory_lock = unsafe extern "C" fn(*mut c_void, usize, *mut HsaAgent, i32, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_lock_to_pool(void *host_ptr, size_t size, hsa_agent_t *agents, int num_agent, hsa_amd_memory_pool_t pool, uint32_t flags, void **agent_ptr)` (ROCr 5.2.3)
pub type hsa_amd_memory_lock_to_pool = unsafe extern "C" fn(*mut c_void, usize, *mut HsaAgent, i32, u64, u32, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_unlock(void *host_ptr)` (ROCr 5.2.3)
pub type hsa_amd_memory_unlock = unsafe extern "C" fn(*mut c_void) -> u32;

/// `hsa_status_t hsa_amd_pointer_info(const void *ptr, hsa_amd_pointer_info_t *info, void *(*alloc)(size_t), uint32_t *num_agents_accessible, hsa_agent_t **accessible)` (ROCr 5.2.3)
pub type hsa_amd_pointer_info = unsafe extern "C" fn(*const c_void, *mut PointerInfo, Option<unsafe extern "C" fn(usize) -> *mut c_void>, *mut u32, *mut *mut HsaAgent) -> u32;

/// `hsa_status_t hsa_amd_pointer_info_set_userdata(const void *ptr, void *userdata)` (ROCr 5.2.3)
pub type hsa_amd_pointer_info_set_userdata = unsafe extern "C" fn(*const c_void, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_profiling_async_copy_enable(_Bool enable)` (ROCr 5.2.3)
pub type hsa_amd_profiling_async_copy_enable = unsafe extern "C" fn(bool) -> u32;

/// `hsa_status_t hsa_amd_profiling_get_async_copy_time(hsa_signal_t signal, hsa_amd_profiling_async_copy_time_t *time)` (ROCr 5.2.3)
pub type hsa_amd_profiling_get_async_copy_time = unsafe extern "C" fn(HsaSignal, *mut DispatchTime) -> u32;

/// `hsa_status_t hsa_amd_profiling_convert_tick_to_system_domain(hsa_agent_t agent, uint64_t agent_tick, uint64_t *system_tick)` (ROCr 5.2.3)
pub type hsa_amd_profiling_convert_tick_to_system_domain = unsafe extern "C" fn(HsaAgent, u64, *mut u64) -> u32;

/// `hsa_status_t hsa_amd_coherency_get_type(hsa_agent_t agent, hsa_amd_coherency_type_t *type)` (ROCr 5.2.3)
pub type hsa_amd_coherency_get_type = unsafe extern "C" fn(HsaAgent, *mut u32) -> u32;

/// `hsa_status_t hsa_amd_coherency_set_type(hsa_agent_t agent, hsa_amd_coherency_type_t type)` (ROCr 5.2.3)
pub type hsa_amd_coherency_set_type = unsafe extern "C" fn(HsaAgent, u32) -> u32;

/// `hsa_status_t hsa_amd_queue_cu_set_mask(const hsa_queue_t *queue, uint32_t num_cu_mask_count, const uint32_t *cu_mask)` (ROCr 5.2.3)
pub type hsa_amd_queue_cu_set_mask = unsafe extern "C" fn(*const c_void, u32, *const u32) -> u32;

/// `hsa_status_t hsa_amd_queue_cu_get_mask(const hsa_queue_t *queue, uint32_t num_cu_mask_count, uint32_t *cu_mask)` (ROCr 5.2.3)
pub type hsa_amd_queue_cu_get_mask = unsafe extern "C" fn(*const c_void, u32, *mut u32) -> u32;

/// `hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t *queue, hsa_amd_queue_priority_t priority)` (ROCr 5.2.3)
pub type hsa_amd_queue_set_priority = unsafe extern "C" fn(*mut c_void, u32) -> u32;

/// `hsa_status_t hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t callback, void *data)` (ROCr 5.2.3)
pub type hsa_amd_register_system_event_handler = unsafe extern "C" fn(Option<unsafe extern "C" fn(*const c_void, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_system_get_major_extension_table(uint16_t extension, uint16_t version_major, size_t table_length, void *table)` (ROCr 5.2.3)
pub type hsa_system_get_major_extension_table = unsafe extern "C" fn(u16, u16, usize, *mut c_void) -> u32;

/// `hsa_status_t hsa_system_get_extension_table(uint16_t extension, uint16_t version_major, uint16_t version_minor, void *table)` (ROCr 5.2.3)
pub type hsa_system_get_extension_table = unsafe extern "C" fn(u16, u16, u16, *mut c_void) -> u32;

/// `hsa_status_t hsa_ext_image_get_capability(hsa_agent_t agent, hsa_ext_image_geometry_t geometry, const hsa_ext_image_format_t *image_format, uint32_t *capability_mask)` (ROCr 5.2.3)
pub type hsa_ext_image_get_capability = unsafe extern "C" fn(HsaAgent, u32, *const ImageFormat, *mut u32) -> u32;

/// `hsa_status_t hsa_ext_image_get_capability_with_layout(hsa_agent_t agent, hsa_ext_image_geometry_t geometry, const hsa_ext_image_format_t *image_format, hsa_ext_image_data_layout_t image_data_layout, uint32_t *capability_mask)` (ROCr 5.2.3)
pub type hsa_ext_image_get_capability_with_layout = unsafe extern "C" fn(HsaAgent, u32, *const ImageFormat, u32, *mut u32) -> u32;

/// `hsa_status_t hsa_ext_image_data_get_info(hsa_agent_t agent, const hsa_ext_image_descriptor_t *image_descriptor, hsa_access_permission_t access_permission, hsa_ext_image_data_info_t *image_data_info)` (ROCr 5.2.3)
pub type hsa_ext_image_data_get_info = unsafe extern "C" fn(HsaAgent, *const ImageDescriptor, u32, *mut ImageDataInfo) -> u32;

/// `hsa_status_t hsa_ext_image_data_get_info_with_layout(hsa_agent_t agent, const hsa_ext_image_descriptor_t *image_descriptor, hsa_access_permission_t access_permission, hsa_ext_image_data_layout_t image_data_layout, size_t image_data_row_pitch, size_t image_data_slice_pitch, hsa_ext_image_data_info_t *image_data_info)` (ROCr 5.2.3)
pub type hsa_ext_image_data_get_info_with_layout = unsafe extern "C" fn(HsaAgent, *const ImageDescriptor, u32, u32, usize, usize, *mut ImageDataInfo) -> u32;

/// `hsa_status_t hsa_ext_image_create(hsa_agent_t agent, const hsa_ext_image_descriptor_t *image_descriptor, const void *image_data, hsa_access_permission_t access_permission, hsa_ext_image_t *image)` (ROCr 5.2.3)
pub type hsa_ext_image_create = unsafe extern "C" fn(HsaAgent, *const ImageDescriptor, *const c_void, u32, *mut u64) -> u32;

/// `hsa_status_t hsa_ext_image_create_with_layout(hsa_agent_t agent, const hsa_ext_image_descriptor_t *image_descriptor, const void *image_data, hsa_access_permission_t access_permission, hsa_ext_image_data_layout_t image_data_layout, size_t image_data_row_pitch, size_t image_data_slice_pitch, hsa_ext_image_t *image)` (ROCr 5.2.3)
pub type hsa_ext_image_create_with_layout = unsafe extern "C" fn(HsaAgent, *const ImageDescriptor, *const c_void, u32, u32, usize, usize, *mut u64) -> u32;

/// `hsa_status_t hsa_ext_image_destroy(hsa_agent_t agent, hsa_ext_image_t image)` (ROCr 5.2.3)
pub type hsa_ext_image_destroy = unsafe extern "C" fn(HsaAgent, u64) -> u32;

/// `hsa_status_t hsa_ext_image_import(hsa_agent_t agent, const void *src_memory, size_t src_row_pitch, size_t src_slice_pitch, hsa_ext_image_t dst_image, const hsa_ext_image_region_t *image_region)` (ROCr 5.2.3)
pub type hsa_ext_image_import = unsafe extern "C" fn(HsaAgent, *const c_void, usize, usize, u64, *const ImageRegion) -> u32;

/// `hsa_status_t hsa_ext_image_export(hsa_agent_t agent, hsa_ext_image_t src_image, void *dst_memory, size_t dst_row_pitch, size_t dst_slice_pitch, const hsa_ext_image_region_t *image_region)` (ROCr 5.2.3)
pub type hsa_ext_image_export = unsafe extern "C" fn(HsaAgent, u64, *mut c_void, usize, usize, *const ImageRegion) -> u32;

/// `hsa_status_t hsa_ext_image_copy(hsa_agent_t agent, hsa_ext_image_t src_image, const hsa_dim3_t *src_offset, hsa_ext_image_t dst_image, const hsa_dim3_t *dst_offset, const hsa_dim3_t *range)` (ROCr 5.2.3)
pub type hsa_ext_image_copy = unsafe extern "C" fn(HsaAgent, u64, *const Dim3, u64, *const Dim3, *const Dim3) -> u32;

/// `hsa_status_t hsa_ext_image_clear(hsa_agent_t agent, hsa_ext_image_t image, const void *data, const hsa_ext_image_region_t *image_region)` (ROCr 5.2.3)
pub type hsa_ext_image_clear = unsafe extern "C" fn(HsaAgent, u64, *const c_void, *const ImageRegion) -> u32;

/// `hsa_status_t hsa_ext_sampler_create(hsa_agent_t agent, const hsa_ext_sampler_descriptor_t *sampler_descriptor, hsa_ext_sampler_t *sampler)` (ROCr 5.2.3)
pub type hsa_ext_sampler_create = unsafe extern "C" fn(HsaAgent, *const SamplerDescriptor, *mut u64) -> u32;

/// `hsa_status_t hsa_ext_sampler_destroy(hsa_agent_t agent, hsa_ext_sampler_t sampler)` (ROCr 5.2.3)
pub type hsa_ext_sampler_destroy = unsafe extern "C" fn(HsaAgent, u64) -> u32;

/// `hsa_status_t hsa_amd_image_create(hsa_agent_t agent, const hsa_ext_image_descriptor_t *image_descriptor, const hsa_amd_image_descriptor_t *image_layout, const void *image_data, hsa_access_permission_t access_permission, hsa_ext_image_t *image)` (ROCr 5.2.3)
pub type hsa_amd_image_create = unsafe extern "C" fn(HsaAgent, *const ImageDescriptor, *const AmdImageDescriptorHead, *const c_void, u32, *mut u64) -> u32;

/// `hsa_status_t hsa_amd_image_get_info_max_dim(hsa_agent_t agent, hsa_agent_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_amd_image_get_info_max_dim = unsafe extern "C" fn(HsaAgent, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_ipc_memory_attach(const hsa_amd_ipc_memory_t *handle, size_t len, uint32_t num_agents, const hsa_agent_t *mapping_agents, void **mapped_ptr)` (ROCr 5.2.3)
pub type hsa_amd_ipc_memory_attach = unsafe extern "C" fn(*const c_void, usize, u32, *const HsaAgent, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_ipc_memory_detach(void *mapped_ptr)` (ROCr 5.2.3)
pub type hsa_amd_ipc_memory_detach = unsafe extern "C" fn(*mut c_void) -> u32;

/// `hsa_status_t hsa_amd_ipc_memory_create(void *ptr, size_t len, hsa_amd_ipc_memory_t *handle)` (ROCr 5.2.3)
pub type hsa_amd_ipc_memory_create = unsafe extern "C" fn(*mut c_void, usize, *mut c_void) -> u32;

/// `hsa_status_t hsa_soft_queue_create(hsa_region_t region, uint32_t size, hsa_queue_type32_t type, uint32_t features, hsa_signal_t doorbell_signal, hsa_queue_t **queue)` (ROCr 5.2.3)
pub type hsa_soft_queue_create = unsafe extern "C" fn(u64, u32, u32, u32, HsaSignal, *mut *mut c_void) -> u32;

/// `hsa_status_t hsa_signal_group_create(uint32_t num_signals, const hsa_signal_t *signals, uint32_t num_consumers, const hsa_agent_t *consumers, hsa_signal_group_t *signal_group)` (ROCr 5.2.3)
pub type hsa_signal_group_create = unsafe extern "C" fn(u32, *const HsaSignal, u32, *const HsaAgent, *mut u64) -> u32;

/// `hsa_status_t hsa_signal_group_destroy(hsa_signal_group_t signal_group)` (ROCr 5.2.3)
pub type hsa_signal_group_destroy = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_signal_group_wait_any_relaxed(hsa_signal_group_t signal_group, const hsa_signal_condition_t *conditions, const hsa_signal_value_t *compare_values, hsa_wait_state_t wait_state_hint, hsa_signal_t *signal, hsa_signal_value_t *value)` (ROCr 5.2.3)
pub type hsa_signal_group_wait_any_relaxed = unsafe extern "C" fn(u64, *const u32, *const i64, u32, *mut HsaSignal, *mut i64) -> u32;

/// `hsa_status_t hsa_signal_group_wait_any_scacquire(hsa_signal_group_t signal_group, const hsa_signal_condition_t *conditions, const hsa_signal_value_t *compare_values, hsa_wait_state_t wait_state_hint, hsa_signal_t *signal, hsa_signal_value_t *value)` (ROCr 5.2.3)
pub type hsa_signal_group_wait_any_scacquire = unsafe extern "C" fn(u64, *const u32, *const i64, u32, *mut HsaSignal, *mut i64) -> u32;

/// `hsa_status_t hsa_amd_async_function(void(*callback)(void *arg), void *arg)` (ROCr 5.2.3)
pub type hsa_amd_async_function = unsafe extern "C" fn(Option<unsafe extern "C" fn(*mut c_void)>, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_register_deallocation_callback(void *ptr, hsa_amd_deallocation_callback_t callback, void *user_data)` (ROCr 5.2.3)
pub type hsa_amd_register_deallocation_callback = unsafe extern "C" fn(*mut c_void, Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_deregister_deallocation_callback(void *ptr, hsa_amd_deallocation_callback_t callback)` (ROCr 5.2.3)
pub type hsa_amd_deregister_deallocation_callback = unsafe extern "C" fn(*mut c_void, Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>) -> u32;

/// `hsa_status_t hsa_amd_interop_map_buffer(uint32_t num_agents, hsa_agent_t *agents, int interop_handle, uint32_t flags, size_t *size, void **ptr, size_t *metadata_size, const void **metadata)` (ROCr 5.2.3)
pub type hsa_amd_interop_map_buffer = unsafe extern "C" fn(u32, *mut HsaAgent, i32, u32, *mut usize, *mut *mut c_void, *mut usize, *mut *const c_void) -> u32;

/// `hsa_status_t hsa_amd_interop_unmap_buffer(void *ptr)` (ROCr 5.2.3)
pub type hsa_amd_interop_unmap_buffer = unsafe extern "C" fn(*mut c_void) -> u32;

/// `hsa_status_t hsa_amd_ipc_signal_attach(const hsa_amd_ipc_signal_t *handle, hsa_signal_t *signal)` (ROCr 5.2.3)
pub type hsa_amd_ipc_signal_attach = unsafe extern "C" fn(*const c_void, *mut HsaSignal) -> u32;

/// `hsa_status_t hsa_amd_ipc_signal_create(hsa_signal_t signal, hsa_amd_ipc_signal_t *handle)` (ROCr 5.2.3)
pub type hsa_amd_ipc_signal_create = unsafe extern "C" fn(HsaSignal, *mut c_void) -> u32;

/// `hsa_status_t hsa_amd_memory_migrate(const void *ptr, hsa_amd_memory_pool_t memory_pool, uint32_t flags)` (ROCr 5.2.3)
pub type hsa_amd_memory_migrate = unsafe extern "C" fn(*const c_void, u64, u32) -> u32;

/// `hsa_status_t hsa_amd_memory_pool_can_migrate(hsa_amd_memory_pool_t src_memory_pool, hsa_amd_memory_pool_t dst_memory_pool, _Bool *result)` (ROCr 5.2.3)
pub type hsa_amd_memory_pool_can_migrate = unsafe extern "C" fn(u64, u64, *mut bool) -> u32;

/// `hsa_status_t hsa_amd_svm_attributes_get(void *ptr, size_t size, hsa_amd_svm_attribute_pair_t *attribute_list, size_t attribute_count)` (ROCr 5.2.3)
pub type hsa_amd_svm_attributes_get = unsafe extern "C" fn(*mut c_void, usize, *mut c_void, usize) -> u32;

/// `hsa_status_t hsa_amd_svm_attributes_set(void *ptr, size_t size, hsa_amd_svm_attribute_pair_t *attribute_list, size_t attribute_count)` (ROCr 5.2.3)
pub type hsa_amd_svm_attributes_set = unsafe extern "C" fn(*mut c_void, usize, *mut c_void, usize) -> u32;

/// `hsa_status_t hsa_amd_svm_prefetch_async(void *ptr, size_t size, hsa_agent_t agent, uint32_t num_dep_signals, const hsa_signal_t *dep_signals, hsa_signal_t completion_signal)` (ROCr 5.2.3)
pub type hsa_amd_svm_prefetch_async = unsafe extern "C" fn(*mut c_void, usize, HsaAgent, u32, *const HsaSignal, HsaSignal) -> u32;

/// `hsa_status_t hsa_code_object_deserialize(void *serialized_code_object, size_t serialized_code_object_size, const char *options, hsa_code_object_t *code_object)` (ROCr 5.2.3)
pub type hsa_code_object_deserialize = unsafe extern "C" fn(*mut c_void, usize, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_code_object_destroy(hsa_code_object_t code_object)` (ROCr 5.2.3)
pub type hsa_code_object_destroy = unsafe extern "C" fn(u64) -> u32;

/// `hsa_status_t hsa_code_object_get_info(hsa_code_object_t code_object, hsa_code_object_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_code_object_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_code_object_get_symbol(hsa_code_object_t code_object, const char *symbol_name, hsa_code_symbol_t *symbol)` (ROCr 5.2.3)
pub type hsa_code_object_get_symbol = unsafe extern "C" fn(u64, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_code_object_get_symbol_from_name(hsa_code_object_t code_object, const char *module_name, const char *symbol_name, hsa_code_symbol_t *symbol)` (ROCr 5.2.3)
pub type hsa_code_object_get_symbol_from_name = unsafe extern "C" fn(u64, *const c_char, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_code_object_iterate_symbols(hsa_code_object_t code_object, hsa_status_t(*callback)(hsa_code_object_t code_object, hsa_code_symbol_t symbol, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_code_object_iterate_symbols = unsafe extern "C" fn(u64, Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> u32>, *mut c_void) -> u32;

/// `hsa_status_t hsa_code_object_serialize(hsa_code_object_t code_object, hsa_status_t(*alloc_callback)(size_t size, hsa_callback_data_t data, void **address), hsa_callback_data_t callback_data, const char *options, void **serialized_code_object, size_t *serialized_code_object_size)` (ROCr 5.2.3)
pub type hsa_code_object_serialize = unsafe extern "C" fn(u64, Option<unsafe extern "C" fn(usize, u64, *mut *mut c_void) -> u32>, u64, *const c_char, *mut *mut c_void, *mut usize) -> u32;

/// `hsa_status_t hsa_code_symbol_get_info(hsa_code_symbol_t code_symbol, hsa_code_symbol_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_code_symbol_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_agent_global_variable_define(hsa_executable_t executable, hsa_agent_t agent, const char *variable_name, void *address)` (ROCr 5.2.3)
pub type hsa_executable_agent_global_variable_define = unsafe extern "C" fn(u64, HsaAgent, *const c_char, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_global_variable_define(hsa_executable_t executable, const char *variable_name, void *address)` (ROCr 5.2.3)
pub type hsa_executable_global_variable_define = unsafe extern "C" fn(u64, *const c_char, *mut c_void) -> u32;

/// `hsa_status_t hsa_executable_load_code_object(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_t code_object, const char *options)` (ROCr 5.2.3)
pub type hsa_executable_load_code_object = unsafe extern "C" fn(u64, HsaAgent, u64, *const c_char) -> u32;

/// `hsa_status_t hsa_executable_load_program_code_object(hsa_executable_t executable, hsa_code_object_reader_t code_object_reader, const char *options, hsa_loaded_code_object_t *loaded_code_object)` (ROCr 5.2.3)
pub type hsa_executable_load_program_code_object = unsafe extern "C" fn(u64, u64, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_executable_readonly_variable_define(hsa_executable_t executable, hsa_agent_t agent, const char *variable_name, void *address)` (ROCr 5.2.3)
pub type hsa_executable_readonly_variable_define = unsafe extern "C" fn(u64, HsaAgent, *const c_char, *mut c_void) -> u32;

/// `hsa_status_t hsa_ext_program_add_module(hsa_ext_program_t program, hsa_ext_module_t module)` (ROCr 5.2.3)
pub type hsa_ext_program_add_module = unsafe extern "C" fn(u64, *mut c_void) -> u32;

/// `hsa_status_t hsa_ext_program_create(hsa_machine_model_t machine_model, hsa_profile_t profile, hsa_default_float_rounding_mode_t default_float_rounding_mode, const char *options, hsa_ext_program_t *program)` (ROCr 5.2.3)
pub type hsa_ext_program_create = unsafe extern "C" fn(u32, u32, u32, *const c_char, *mut u64) -> u32;

/// `hsa_status_t hsa_ext_program_destroy(hsa_ext_program_t program)` (ROCr 5.2.3)
pub type hsa_ext_program_destroy = unsafe extern "C" fn(u64) -> u32;

// `hsa_status_t hsa_ext_program_finalize(hsa_ext_program_t program, hsa_isa_t isa, int32_t call_convention, hsa_ext_control_directives_t control_directives, const char *options, hsa_code_object_type_t code_object_type, hsa_code_object_t *code_object)` (ROCr 5.2.3): takes a struct by value that the crate does not
// mirror, so it has no Rust signature; fail-closed.

/// `hsa_status_t hsa_ext_program_get_info(hsa_ext_program_t program, hsa_ext_program_info_t attribute, void *value)` (ROCr 5.2.3)
pub type hsa_ext_program_get_info = unsafe extern "C" fn(u64, u32, *mut c_void) -> u32;

/// `hsa_status_t hsa_ext_program_iterate_modules(hsa_ext_program_t program, hsa_status_t(*callback)(hsa_ext_program_t program, hsa_ext_module_t module, void *data), void *data)` (ROCr 5.2.3)
pub type hsa_ext_program_iterate_modules = unsafe extern "C" fn(u64, Option<unsafe extern "C" fn(u64, *mut c_void, *mut c_void) -> u32>, *mut c_void) -> u32;

/// Stand-ins for functions the real runtime lacks: each logs the name and
/// returns the entry's failure value, never one that reads as success.
pub mod missing {
    use super::*;

    pub unsafe extern "C" fn hsa_init() -> u32 {
        crate::interpose::forward::missing("hsa_init");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_shut_down() -> u32 {
        crate::interpose::forward::missing("hsa_shut_down");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_status_string(_a0: u32, _a1: *mut *const c_char) -> u32 {
        crate::interpose::forward::missing("hsa_status_string");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_system_get_info(_a0: u32, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_system_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_system_extension_supported(_a0: u16, _a1: u16, _a2: u16, _a3: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_system_extension_supported");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_system_major_extension_supported(_a0: u16, _a1: u16, _a2: *mut u16, _a3: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_system_major_extension_supported");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_extension_supported(_a0: u16, _a1: HsaAgent, _a2: u16, _a3: u16, _a4: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_agent_extension_supported");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_major_extension_supported(_a0: u16, _a1: HsaAgent, _a2: u16, _a3: *mut u16, _a4: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_agent_major_extension_supported");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_extension_get_name(_a0: u16, _a1: *mut *const c_char) -> u32 {
        crate::interpose::forward::missing("hsa_extension_get_name");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_iterate_agents(_a0: Option<unsafe extern "C" fn(HsaAgent, *mut c_void) -> u32>, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_iterate_agents");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_get_info(_a0: HsaAgent, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_agent_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_iterate_isas(_a0: HsaAgent, _a1: Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_agent_iterate_isas");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_iterate_regions(_a0: HsaAgent, _a1: Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_agent_iterate_regions");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_get_info(_a0: u64, _a1: u32, _a2: u32, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_isa_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_get_info_alt(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_isa_get_info_alt");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_from_name(_a0: *const c_char, _a1: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_isa_from_name");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_iterate_caches(_a0: HsaAgent, _a1: Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_agent_iterate_caches");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_cache_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_cache_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_agent_get_exception_policies(_a0: HsaAgent, _a1: u32, _a2: *mut u16) -> u32 {
        crate::interpose::forward::missing("hsa_agent_get_exception_policies");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_get_exception_policies(_a0: u64, _a1: u32, _a2: *mut u16) -> u32 {
        crate::interpose::forward::missing("hsa_isa_get_exception_policies");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_get_round_method(_a0: u64, _a1: u32, _a2: u32, _a3: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_isa_get_round_method");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_iterate_wavefronts(_a0: u64, _a1: Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_isa_iterate_wavefronts");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_wavefront_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_wavefront_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_isa_compatible(_a0: u64, _a1: u64, _a2: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_isa_compatible");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_region_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_region_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_memory_allocate(_a0: u64, _a1: usize, _a2: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_memory_allocate");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_memory_free(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_memory_free");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_memory_copy(_a0: *mut c_void, _a1: *const c_void, _a2: usize) -> u32 {
        crate::interpose::forward::missing("hsa_memory_copy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_memory_register(_a0: *mut c_void, _a1: usize) -> u32 {
        crate::interpose::forward::missing("hsa_memory_register");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_memory_deregister(_a0: *mut c_void, _a1: usize) -> u32 {
        crate::interpose::forward::missing("hsa_memory_deregister");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_memory_assign_agent(_a0: *mut c_void, _a1: HsaAgent, _a2: u32) -> u32 {
        crate::interpose::forward::missing("hsa_memory_assign_agent");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(_a0: HsaAgent, _a1: Option<unsafe extern "C" fn(u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_agent_iterate_memory_pools");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_pool_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(_a0: HsaAgent, _a1: u64, _a2: u32, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_agent_memory_pool_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(_a0: u64, _a1: usize, _a2: u32, _a3: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_pool_allocate");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_pool_free(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_pool_free");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_agents_allow_access(_a0: u32, _a1: *const HsaAgent, _a2: *const u32, _a3: *const c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_agents_allow_access");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_signal_create(_a0: i64, _a1: u32, _a2: *const HsaAgent, _a3: *mut HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_signal_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_signal_destroy(_a0: HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_signal_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_signal_create(_a0: i64, _a1: u32, _a2: *const HsaAgent, _a3: u64, _a4: *mut HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_amd_signal_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_signal_value_pointer(_a0: HsaSignal, _a1: *mut *mut i64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_signal_value_pointer");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_signal_async_handler(_a0: HsaSignal, _a1: u32, _a2: i64, _a3: Option<unsafe extern "C" fn(i64, *mut c_void) -> bool>, _a4: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_signal_async_handler");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_signal_wait_any(_a0: u32, _a1: *mut HsaSignal, _a2: *mut u32, _a3: *mut i64, _a4: u64, _a5: u32, _a6: *mut i64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_signal_wait_any");
        u32::MAX
    }

    pub unsafe extern "C" fn hsa_signal_load_relaxed(_a0: HsaSignal) -> i64 {
        crate::interpose::forward::missing("hsa_signal_load_relaxed");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_load_acquire(_a0: HsaSignal) -> i64 {
        crate::interpose::forward::missing("hsa_signal_load_acquire");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_load_scacquire(_a0: HsaSignal) -> i64 {
        crate::interpose::forward::missing("hsa_signal_load_scacquire");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_store_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_store_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_store_release(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_store_release");
    }

    pub unsafe extern "C" fn hsa_signal_store_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_store_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_silent_store_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_silent_store_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_silent_store_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_silent_store_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_exchange_relaxed(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_relaxed");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_exchange_acquire(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_acquire");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_exchange_release(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_release");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_exchange_acq_rel(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_acq_rel");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_exchange_scacquire(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_scacquire");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_exchange_screlease(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_screlease");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_exchange_scacq_screl(_a0: HsaSignal, _a1: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_exchange_scacq_screl");
        crate::runtime::signals::ERROR_VALUE
    }

    pub unsafe extern "C" fn hsa_signal_cas_relaxed(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_relaxed");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_cas_acquire(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_acquire");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_cas_release(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_release");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_cas_acq_rel(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_acq_rel");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_cas_scacquire(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_scacquire");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_cas_screlease(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_screlease");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_cas_scacq_screl(_a0: HsaSignal, _a1: i64, _a2: i64) -> i64 {
        crate::interpose::forward::missing("hsa_signal_cas_scacq_screl");
        _a1.wrapping_add(1)
    }

    pub unsafe extern "C" fn hsa_signal_add_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_add_acquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_acquire");
    }

    pub unsafe extern "C" fn hsa_signal_add_release(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_release");
    }

    pub unsafe extern "C" fn hsa_signal_add_acq_rel(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_acq_rel");
    }

    pub unsafe extern "C" fn hsa_signal_add_scacquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_scacquire");
    }

    pub unsafe extern "C" fn hsa_signal_add_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_add_scacq_screl(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_add_scacq_screl");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_acquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_acquire");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_release(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_release");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_acq_rel(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_acq_rel");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_scacquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_scacquire");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_subtract_scacq_screl(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_subtract_scacq_screl");
    }

    pub unsafe extern "C" fn hsa_signal_and_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_and_acquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_acquire");
    }

    pub unsafe extern "C" fn hsa_signal_and_release(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_release");
    }

    pub unsafe extern "C" fn hsa_signal_and_acq_rel(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_acq_rel");
    }

    pub unsafe extern "C" fn hsa_signal_and_scacquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_scacquire");
    }

    pub unsafe extern "C" fn hsa_signal_and_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_and_scacq_screl(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_and_scacq_screl");
    }

    pub unsafe extern "C" fn hsa_signal_or_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_or_acquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_acquire");
    }

    pub unsafe extern "C" fn hsa_signal_or_release(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_release");
    }

    pub unsafe extern "C" fn hsa_signal_or_acq_rel(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_acq_rel");
    }

    pub unsafe extern "C" fn hsa_signal_or_scacquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_scacquire");
    }

    pub unsafe extern "C" fn hsa_signal_or_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_or_scacq_screl(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_or_scacq_screl");
    }

    pub unsafe extern "C" fn hsa_signal_xor_relaxed(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_relaxed");
    }

    pub unsafe extern "C" fn hsa_signal_xor_acquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_acquire");
    }

    pub unsafe extern "C" fn hsa_signal_xor_release(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_release");
    }

    pub unsafe extern "C" fn hsa_signal_xor_acq_rel(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_acq_rel");
    }

    pub unsafe extern "C" fn hsa_signal_xor_scacquire(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_scacquire");
    }

    pub unsafe extern "C" fn hsa_signal_xor_screlease(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_screlease");
    }

    pub unsafe extern "C" fn hsa_signal_xor_scacq_screl(_a0: HsaSignal, _a1: i64) {
        crate::interpose::forward::missing("hsa_signal_xor_scacq_screl");
    }

    pub unsafe extern "C" fn hsa_signal_wait_relaxed(_a0: HsaSignal, _a1: u32, _a2: i64, _a3: u64, _a4: u32) -> i64 {
        crate::interpose::forward::missing("hsa_signal_wait_relaxed");
        crate::runtime::signals::refused_wait_value(crate::abi::SignalCondition(_a1), _a2)
    }

    pub unsafe extern "C" fn hsa_signal_wait_acquire(_a0: HsaSignal, _a1: u32, _a2: i64, _a3: u64, _a4: u32) -> i64 {
        crate::interpose::forward::missing("hsa_signal_wait_acquire");
        crate::runtime::signals::refused_wait_value(crate::abi::SignalCondition(_a1), _a2)
    }

    pub unsafe extern "C" fn hsa_signal_wait_scacquire(_a0: HsaSignal, _a1: u32, _a2: i64, _a3: u64, _a4: u32) -> i64 {
        crate::interpose::forward::missing("hsa_signal_wait_scacquire");
        crate::runtime::signals::refused_wait_value(crate::abi::SignalCondition(_a1), _a2)
    }

    pub unsafe extern "C" fn hsa_queue_create(_a0: HsaAgent, _a1: u32, _a2: u32, _a3: Option<unsafe extern "C" fn(u32, *mut c_void, *mut c_void)>, _a4: *mut c_void, _a5: u32, _a6: u32, _a7: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_queue_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_queue_destroy(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_queue_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_queue_inactivate(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_queue_inactivate");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_queue_load_read_index_relaxed(_a0: *const c_void) -> u64 {
        crate::interpose::forward::missing("hsa_queue_load_read_index_relaxed");
        0
    }

    pub unsafe extern "C" fn hsa_queue_load_read_index_acquire(_a0: *const c_void) -> u64 {
        crate::interpose::forward::missing("hsa_queue_load_read_index_acquire");
        0
    }

    pub unsafe extern "C" fn hsa_queue_load_read_index_scacquire(_a0: *const c_void) -> u64 {
        crate::interpose::forward::missing("hsa_queue_load_read_index_scacquire");
        0
    }

    pub unsafe extern "C" fn hsa_queue_load_write_index_relaxed(_a0: *const c_void) -> u64 {
        crate::interpose::forward::missing("hsa_queue_load_write_index_relaxed");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_load_write_index_acquire(_a0: *const c_void) -> u64 {
        crate::interpose::forward::missing("hsa_queue_load_write_index_acquire");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_load_write_index_scacquire(_a0: *const c_void) -> u64 {
        crate::interpose::forward::missing("hsa_queue_load_write_index_scacquire");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_store_read_index_relaxed(_a0: *const c_void, _a1: u64) {
        crate::interpose::forward::missing("hsa_queue_store_read_index_relaxed");
    }

    pub unsafe extern "C" fn hsa_queue_store_read_index_release(_a0: *const c_void, _a1: u64) {
        crate::interpose::forward::missing("hsa_queue_store_read_index_release");
    }

    pub unsafe extern "C" fn hsa_queue_store_read_index_screlease(_a0: *const c_void, _a1: u64) {
        crate::interpose::forward::missing("hsa_queue_store_read_index_screlease");
    }

    pub unsafe extern "C" fn hsa_queue_store_write_index_relaxed(_a0: *const c_void, _a1: u64) {
        crate::interpose::forward::missing("hsa_queue_store_write_index_relaxed");
    }

    pub unsafe extern "C" fn hsa_queue_store_write_index_release(_a0: *const c_void, _a1: u64) {
        crate::interpose::forward::missing("hsa_queue_store_write_index_release");
    }

    pub unsafe extern "C" fn hsa_queue_store_write_index_screlease(_a0: *const c_void, _a1: u64) {
        crate::interpose::forward::missing("hsa_queue_store_write_index_screlease");
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_relaxed(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_relaxed");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_acquire(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_acquire");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_release(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_release");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_acq_rel(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_acq_rel");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_scacquire(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_scacquire");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_screlease(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_screlease");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_add_write_index_scacq_screl(_a0: *const c_void, _a1: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_add_write_index_scacq_screl");
        u64::MAX
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_relaxed(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_relaxed");
        !_a1
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_acquire(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_acquire");
        !_a1
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_release(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_release");
        !_a1
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_acq_rel(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_acq_rel");
        !_a1
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_scacquire(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_scacquire");
        !_a1
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_screlease(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_screlease");
        !_a1
    }

    pub unsafe extern "C" fn hsa_queue_cas_write_index_scacq_screl(_a0: *const c_void, _a1: u64, _a2: u64) -> u64 {
        crate::interpose::forward::missing("hsa_queue_cas_write_index_scacq_screl");
        !_a1
    }

    pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(_a0: HsaAgent, _a1: HsaSignal, _a2: *mut DispatchTime) -> u32 {
        crate::interpose::forward::missing("hsa_amd_profiling_get_dispatch_time");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_profiling_set_profiler_enabled(_a0: *mut c_void, _a1: i32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_profiling_set_profiler_enabled");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_enable_logging(_a0: *mut u8, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_enable_logging");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_async_copy_on_engine(_a0: *mut c_void, _a1: HsaAgent, _a2: *const c_void, _a3: HsaAgent, _a4: usize, _a5: u32, _a6: *const HsaSignal, _a7: HsaSignal, _a8: u32, _a9: bool) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_async_copy_on_engine");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_copy_engine_status(_a0: HsaAgent, _a1: HsaAgent, _a2: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_copy_engine_status");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_address_reserve(_a0: *mut *mut c_void, _a1: usize, _a2: u64, _a3: u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_address_reserve");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_address_free(_a0: *mut c_void, _a1: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_address_free");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_handle_create(_a0: u64, _a1: usize, _a2: u32, _a3: u64, _a4: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_handle_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_handle_release(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_handle_release");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_map(_a0: *mut c_void, _a1: usize, _a2: usize, _a3: u64, _a4: u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_map");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_unmap(_a0: *mut c_void, _a1: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_unmap");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_set_access(_a0: *mut c_void, _a1: usize, _a2: *const AccessDesc, _a3: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_set_access");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_get_access(_a0: *mut c_void, _a1: *mut u32, _a2: HsaAgent) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_get_access");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_export_shareable_handle(_a0: *mut i32, _a1: u64, _a2: u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_export_shareable_handle");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_import_shareable_handle(_a0: i32, _a1: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_import_shareable_handle");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_agent_set_async_scratch_limit(_a0: HsaAgent, _a1: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_agent_set_async_scratch_limit");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ais_file_read(_a0: AisFileHandle, _a1: *mut c_void, _a2: u64, _a3: i64, _a4: *mut u64, _a5: *mut i32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ais_file_read");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ais_file_write(_a0: AisFileHandle, _a1: *mut c_void, _a2: u64, _a3: i64, _a4: *mut u64, _a5: *mut i32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ais_file_write");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_get_preferred_copy_engine(_a0: HsaAgent, _a1: HsaAgent, _a2: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_get_preferred_copy_engine");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_portable_export_dmabuf(_a0: *const c_void, _a1: usize, _a2: *mut i32, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_portable_export_dmabuf");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_address_reserve_align(_a0: *mut *mut c_void, _a1: usize, _a2: u64, _a3: u64, _a4: u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_address_reserve_align");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_retain_alloc_handle(_a0: *mut u64, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_retain_alloc_handle");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_sampler_create_v2(_a0: HsaAgent, _a1: *const SamplerDescriptorV2, _a2: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_sampler_create_v2");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_vmem_get_alloc_properties_from_handle(_a0: u64, _a1: *mut u64, _a2: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_vmem_get_alloc_properties_from_handle");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_queue_get_info(_a0: *mut c_void, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_queue_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_signal_wait_all(_a0: u32, _a1: *mut HsaSignal, _a2: *mut u32, _a3: *mut i64, _a4: u64, _a5: u32, _a6: *mut i64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_signal_wait_all");
        u32::MAX
    }

    pub unsafe extern "C" fn hsa_amd_portable_export_dmabuf_v2(_a0: *const c_void, _a1: usize, _a2: *mut i32, _a3: *mut u64, _a4: u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_portable_export_dmabuf_v2");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_portable_close_dmabuf(_a0: i32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_portable_close_dmabuf");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_spm_acquire(_a0: HsaAgent) -> u32 {
        crate::interpose::forward::missing("hsa_amd_spm_acquire");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_spm_release(_a0: HsaAgent) -> u32 {
        crate::interpose::forward::missing("hsa_amd_spm_release");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_spm_set_dest_buffer(_a0: HsaAgent, _a1: usize, _a2: *mut u32, _a3: *mut u32, _a4: *mut c_void, _a5: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_amd_spm_set_dest_buffer");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_iterate_configuration(_a0: HsaAgent, _a1: Option<unsafe extern "C" fn(*const c_void, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_iterate_configuration");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_create(_a0: HsaAgent, _a1: u32, _a2: u32, _a3: usize, _a4: usize, _a5: usize, _a6: Option<unsafe extern "C" fn(*mut c_void, usize, usize, Option<unsafe extern "C" fn(*mut c_void, usize, *mut c_void) -> u32>, *mut c_void)>, _a7: *mut c_void, _a8: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_create_from_id(_a0: u32, _a1: HsaAgent, _a2: u32, _a3: u32, _a4: usize, _a5: usize, _a6: usize, _a7: Option<unsafe extern "C" fn(*mut c_void, usize, usize, Option<unsafe extern "C" fn(*mut c_void, usize, *mut c_void) -> u32>, *mut c_void)>, _a8: *mut c_void, _a9: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_create_from_id");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_destroy(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_start(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_start");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_stop(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_stop");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ven_amd_pcs_flush(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ven_amd_pcs_flush");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(_a0: *const c_void, _a1: usize, _a2: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_reader_create_from_memory");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(_a0: i32, _a1: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_reader_create_from_file");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_reader_destroy(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_reader_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_create(_a0: u32, _a1: u32, _a2: *const c_char, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_create_alt(_a0: u32, _a1: u32, _a2: *const c_char, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_create_alt");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_destroy(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_load_agent_code_object(_a0: u64, _a1: HsaAgent, _a2: u64, _a3: *const c_char, _a4: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_load_agent_code_object");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_freeze(_a0: u64, _a1: *const c_char) -> u32 {
        crate::interpose::forward::missing("hsa_executable_freeze");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_validate(_a0: u64, _a1: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_executable_validate");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_validate_alt(_a0: u64, _a1: *const c_char, _a2: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_executable_validate_alt");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(_a0: u64, _a1: *const c_char, _a2: *const HsaAgent, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_get_symbol_by_name");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_get_symbol(_a0: u64, _a1: *const c_char, _a2: *const c_char, _a3: HsaAgent, _a4: i32, _a5: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_get_symbol");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_symbol_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_symbol_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_iterate_symbols(_a0: u64, _a1: Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_iterate_symbols");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(_a0: u64, _a1: HsaAgent, _a2: Option<unsafe extern "C" fn(u64, HsaAgent, u64, *mut c_void) -> u32>, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_iterate_agent_symbols");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_iterate_program_symbols(_a0: u64, _a1: Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_iterate_program_symbols");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_async_copy(_a0: *mut c_void, _a1: HsaAgent, _a2: *const c_void, _a3: HsaAgent, _a4: usize, _a5: u32, _a6: *const HsaSignal, _a7: HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_async_copy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_async_copy_rect(_a0: *const PitchedPtr, _a1: *const Dim3, _a2: *const PitchedPtr, _a3: *const Dim3, _a4: *const Dim3, _a5: HsaAgent, _a6: u32, _a7: u32, _a8: *const HsaSignal, _a9: HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_async_copy_rect");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_fill(_a0: *mut c_void, _a1: u32, _a2: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_fill");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_lock(_a0: *mut c_void, _a1: usize, _a2: *mut HsaAgent, _a3: i32, _a4: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_lock");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(_a0: *mut c_void, _a1: usize, _a2: *mut HsaAgent, _a3: i32, _a4: u64, _a5: u32, _a6: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_lock_to_pool");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_unlock(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_unlock");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_pointer_info(_a0: *const c_void, _a1: *mut PointerInfo, _a2: Option<unsafe extern "C" fn(usize) -> *mut c_void>, _a3: *mut u32, _a4: *mut *mut HsaAgent) -> u32 {
        crate::interpose::forward::missing("hsa_amd_pointer_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_pointer_info_set_userdata(_a0: *const c_void, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_pointer_info_set_userdata");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_profiling_async_copy_enable(_a0: bool) -> u32 {
        crate::interpose::forward::missing("hsa_amd_profiling_async_copy_enable");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_profiling_get_async_copy_time(_a0: HsaSignal, _a1: *mut DispatchTime) -> u32 {
        crate::interpose::forward::missing("hsa_amd_profiling_get_async_copy_time");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(_a0: HsaAgent, _a1: u64, _a2: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_profiling_convert_tick_to_system_domain");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_coherency_get_type(_a0: HsaAgent, _a1: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_coherency_get_type");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_coherency_set_type(_a0: HsaAgent, _a1: u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_coherency_set_type");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_queue_cu_set_mask(_a0: *const c_void, _a1: u32, _a2: *const u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_queue_cu_set_mask");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_queue_cu_get_mask(_a0: *const c_void, _a1: u32, _a2: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_queue_cu_get_mask");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_queue_set_priority(_a0: *mut c_void, _a1: u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_queue_set_priority");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_register_system_event_handler(_a0: Option<unsafe extern "C" fn(*const c_void, *mut c_void) -> u32>, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_register_system_event_handler");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_system_get_major_extension_table(_a0: u16, _a1: u16, _a2: usize, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_system_get_major_extension_table");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_system_get_extension_table(_a0: u16, _a1: u16, _a2: u16, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_system_get_extension_table");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_get_capability(_a0: HsaAgent, _a1: u32, _a2: *const ImageFormat, _a3: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_get_capability");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_get_capability_with_layout(_a0: HsaAgent, _a1: u32, _a2: *const ImageFormat, _a3: u32, _a4: *mut u32) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_get_capability_with_layout");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_data_get_info(_a0: HsaAgent, _a1: *const ImageDescriptor, _a2: u32, _a3: *mut ImageDataInfo) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_data_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_data_get_info_with_layout(_a0: HsaAgent, _a1: *const ImageDescriptor, _a2: u32, _a3: u32, _a4: usize, _a5: usize, _a6: *mut ImageDataInfo) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_data_get_info_with_layout");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_create(_a0: HsaAgent, _a1: *const ImageDescriptor, _a2: *const c_void, _a3: u32, _a4: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_create_with_layout(_a0: HsaAgent, _a1: *const ImageDescriptor, _a2: *const c_void, _a3: u32, _a4: u32, _a5: usize, _a6: usize, _a7: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_create_with_layout");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_destroy(_a0: HsaAgent, _a1: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_import(_a0: HsaAgent, _a1: *const c_void, _a2: usize, _a3: usize, _a4: u64, _a5: *const ImageRegion) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_import");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_export(_a0: HsaAgent, _a1: u64, _a2: *mut c_void, _a3: usize, _a4: usize, _a5: *const ImageRegion) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_export");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_copy(_a0: HsaAgent, _a1: u64, _a2: *const Dim3, _a3: u64, _a4: *const Dim3, _a5: *const Dim3) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_copy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_image_clear(_a0: HsaAgent, _a1: u64, _a2: *const c_void, _a3: *const ImageRegion) -> u32 {
        crate::interpose::forward::missing("hsa_ext_image_clear");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_sampler_create(_a0: HsaAgent, _a1: *const SamplerDescriptor, _a2: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_sampler_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_sampler_destroy(_a0: HsaAgent, _a1: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_sampler_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_image_create(_a0: HsaAgent, _a1: *const ImageDescriptor, _a2: *const AmdImageDescriptorHead, _a3: *const c_void, _a4: u32, _a5: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_amd_image_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_image_get_info_max_dim(_a0: HsaAgent, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_image_get_info_max_dim");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ipc_memory_attach(_a0: *const c_void, _a1: usize, _a2: u32, _a3: *const HsaAgent, _a4: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ipc_memory_attach");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ipc_memory_detach(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ipc_memory_detach");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ipc_memory_create(_a0: *mut c_void, _a1: usize, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ipc_memory_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_soft_queue_create(_a0: u64, _a1: u32, _a2: u32, _a3: u32, _a4: HsaSignal, _a5: *mut *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_soft_queue_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_signal_group_create(_a0: u32, _a1: *const HsaSignal, _a2: u32, _a3: *const HsaAgent, _a4: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_signal_group_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_signal_group_destroy(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_signal_group_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_signal_group_wait_any_relaxed(_a0: u64, _a1: *const u32, _a2: *const i64, _a3: u32, _a4: *mut HsaSignal, _a5: *mut i64) -> u32 {
        crate::interpose::forward::missing("hsa_signal_group_wait_any_relaxed");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_signal_group_wait_any_scacquire(_a0: u64, _a1: *const u32, _a2: *const i64, _a3: u32, _a4: *mut HsaSignal, _a5: *mut i64) -> u32 {
        crate::interpose::forward::missing("hsa_signal_group_wait_any_scacquire");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_async_function(_a0: Option<unsafe extern "C" fn(*mut c_void)>, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_async_function");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_register_deallocation_callback(_a0: *mut c_void, _a1: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_register_deallocation_callback");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_deregister_deallocation_callback(_a0: *mut c_void, _a1: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>) -> u32 {
        crate::interpose::forward::missing("hsa_amd_deregister_deallocation_callback");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_interop_map_buffer(_a0: u32, _a1: *mut HsaAgent, _a2: i32, _a3: u32, _a4: *mut usize, _a5: *mut *mut c_void, _a6: *mut usize, _a7: *mut *const c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_interop_map_buffer");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_interop_unmap_buffer(_a0: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_interop_unmap_buffer");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ipc_signal_attach(_a0: *const c_void, _a1: *mut HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ipc_signal_attach");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_ipc_signal_create(_a0: HsaSignal, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_amd_ipc_signal_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_migrate(_a0: *const c_void, _a1: u64, _a2: u32) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_migrate");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_memory_pool_can_migrate(_a0: u64, _a1: u64, _a2: *mut bool) -> u32 {
        crate::interpose::forward::missing("hsa_amd_memory_pool_can_migrate");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_svm_attributes_get(_a0: *mut c_void, _a1: usize, _a2: *mut c_void, _a3: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_svm_attributes_get");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_svm_attributes_set(_a0: *mut c_void, _a1: usize, _a2: *mut c_void, _a3: usize) -> u32 {
        crate::interpose::forward::missing("hsa_amd_svm_attributes_set");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_amd_svm_prefetch_async(_a0: *mut c_void, _a1: usize, _a2: HsaAgent, _a3: u32, _a4: *const HsaSignal, _a5: HsaSignal) -> u32 {
        crate::interpose::forward::missing("hsa_amd_svm_prefetch_async");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_deserialize(_a0: *mut c_void, _a1: usize, _a2: *const c_char, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_deserialize");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_destroy(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_get_symbol(_a0: u64, _a1: *const c_char, _a2: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_get_symbol");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_get_symbol_from_name(_a0: u64, _a1: *const c_char, _a2: *const c_char, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_get_symbol_from_name");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_iterate_symbols(_a0: u64, _a1: Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_iterate_symbols");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_object_serialize(_a0: u64, _a1: Option<unsafe extern "C" fn(usize, u64, *mut *mut c_void) -> u32>, _a2: u64, _a3: *const c_char, _a4: *mut *mut c_void, _a5: *mut usize) -> u32 {
        crate::interpose::forward::missing("hsa_code_object_serialize");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_code_symbol_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_code_symbol_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_agent_global_variable_define(_a0: u64, _a1: HsaAgent, _a2: *const c_char, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_agent_global_variable_define");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_global_variable_define(_a0: u64, _a1: *const c_char, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_global_variable_define");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_load_code_object(_a0: u64, _a1: HsaAgent, _a2: u64, _a3: *const c_char) -> u32 {
        crate::interpose::forward::missing("hsa_executable_load_code_object");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_load_program_code_object(_a0: u64, _a1: u64, _a2: *const c_char, _a3: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_executable_load_program_code_object");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_executable_readonly_variable_define(_a0: u64, _a1: HsaAgent, _a2: *const c_char, _a3: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_executable_readonly_variable_define");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_program_add_module(_a0: u64, _a1: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_ext_program_add_module");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_program_create(_a0: u32, _a1: u32, _a2: u32, _a3: *const c_char, _a4: *mut u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_program_create");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_program_destroy(_a0: u64) -> u32 {
        crate::interpose::forward::missing("hsa_ext_program_destroy");
        crate::abi::HsaStatus::ERROR.0
    }

    /// Reads no argument (see the type's note above).
    pub extern "C" fn hsa_ext_program_finalize() -> u32 {
        crate::interpose::forward::missing("hsa_ext_program_finalize");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_program_get_info(_a0: u64, _a1: u32, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_ext_program_get_info");
        crate::abi::HsaStatus::ERROR.0
    }

    pub unsafe extern "C" fn hsa_ext_program_iterate_modules(_a0: u64, _a1: Option<unsafe extern "C" fn(u64, *mut c_void, *mut c_void) -> u32>, _a2: *mut c_void) -> u32 {
        crate::interpose::forward::missing("hsa_ext_program_iterate_modules");
        crate::abi::HsaStatus::ERROR.0
    }
}
