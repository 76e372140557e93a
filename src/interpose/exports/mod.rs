//! Implemented exports: C argument conversion around the virtual runtime,
//! one file per API group (the entry-point table in `super` names each
//! export; this module re-exports every group's).
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
use super::{observe, passthrough, status, value};
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
    hsa_ext_sampler_create, hsa_ext_sampler_create_v2, hsa_ext_sampler_destroy,
};

pub(super) type R = Result<(), HsaStatus>;

/// Say once per (function, attribute) that an attribute is not answered.
pub(super) fn unanswered(name: &'static str, attr: u32) {
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
pub(super) fn info_result(
    name: &'static str,
    attr: u32,
    r: Result<Info, InfoError>,
    out: InfoOut<'_>,
) -> R {
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

pub(super) fn rt() -> Result<&'static runtime::Runtime, HsaStatus> {
    runtime::get()
}

pub(super) fn agent_of(rt: &runtime::Runtime, a: HsaAgent) -> Result<AgentKind, HsaStatus> {
    rt.topo
        .agent(a.handle)
        .ok_or(HsaStatus::ERROR_INVALID_AGENT)
}

mod agent;
mod copy;
mod executable;
mod pool;
mod queue;
mod rocr6;
mod rocr7;
mod signal;
mod system;

pub use agent::*;
pub use copy::*;
pub use executable::*;
pub use pool::*;
pub use queue::*;
pub use rocr6::*;
pub use rocr7::*;
pub use signal::*;
pub use system::*;
