//! Pure parser and validator for one 64-byte AQL packet.
//!
//! Input is always a copy: the processor copies the 64 bytes out of the ring
//! (after an acquire load of the header) before anything here looks at them, so
//! no reference ever points into memory the producer may still write.
//!
//! Two entry points with different jobs:
//!
//! - [`parse_supported_packet`] / [`parse_supported_packet_with_limit`] decide:
//!   a typed [`ParsedPacket`] for a packet SoftGPU completes under the
//!   diagnostic contract, or the full [`ReasonSet`] of everything wrong with it.
//!   Every applicable rule is checked; the first failure does not hide the rest.
//! - [`DecodedPacket::decode`] describes: it reads every field of any 64 bytes
//!   at the `hsa.h` offsets and never fails, for reports and replay.
//!
//! Which rules apply to which type (the reason codes are in [`Reason`] and in
//! `docs/aql-diagnostic-contract.md`):
//!
//! | type | checks |
//! | --- | --- |
//! | KERNEL_DISPATCH | dimensions, sizes, unused dimensions, workgroup limit, setup and reserved fields, kernel object, kernarg alignment, both fence scopes |
//! | BARRIER_AND, BARRIER_OR | both fence scopes only |
//! | AGENT_DISPATCH | always rejected; fence scopes also reported |
//! | VENDOR_SPECIFIC, unknown, INVALID | always rejected with the type reason alone (the rest of the header has no meaning SoftGPU can check) |
//!
//! Barrier reserved fields are deliberately not checked: the command processor
//! ignores them, and a reject is expensive (whoever waits on the barrier's
//! completion signal waits forever), so SoftGPU rejects a barrier only when it
//! could not honour it the way hardware would. Bits 13..16 of the header are
//! not checked for any type: `hsa.h` defines no field there.

use core::mem::offset_of;

use crate::abi::packet_offset as po;
use crate::abi::{
    AgentDispatchPacket, AmdBarrierValuePacket, BarrierAndPacket, BarrierOrPacket, FenceScope,
    HsaSignal, HsaStatus, KernelDispatchPacket, PacketType,
};

/// Largest workgroup (product of the three sizes) on every AMD target.
pub const MAX_WORKGROUP_SIZE: u32 = 1024;

/// The one list of reason codes: variant, numeric value (its bit in a
/// [`ReasonSet`], stored in captures), stable JSONL code, whether it needs the
/// runtime's live state (`runtime`) or follows from the 64 bytes alone
/// (`bytes`), the `hsa_status_t` the queue's error callback gets for it (an
/// [`HsaStatus`] constant; `SUCCESS` for a finding, which never calls it) and
/// where that status comes from ([`StatusBasis`]), and its meaning (the reason
/// table of `docs/aql-diagnostic-contract.md` is generated from it; a test
/// checks).
///
/// New reasons are appended with the next free number; none is ever
/// renumbered or removed.
macro_rules! reasons {
    ($($variant:ident = $bit:literal, $code:literal, $level:ident, $status:ident, $basis:ident,
       $meaning:literal;)*) => {
        /// Stable reason codes. The numeric value is stored in captures (as a bit
        /// of a [`ReasonSet`]) and must never be reused; the string is the JSONL
        /// code. Defined, with everything else about each reason, by one table.
        #[repr(u8)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum Reason {
            $(
                #[doc = $meaning]
                $variant = $bit,
            )*
        }

        impl Reason {
            /// Every reason, in numeric order.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant,)*];

            /// The stable snake_case code.
            pub const fn code(self) -> &'static str {
                match self {
                    $(Reason::$variant => $code,)*
                }
            }

            /// What the reason means (Markdown: code spans in backticks). Findings
            /// (validated dispatches that carry a note) say so first.
            pub const fn meaning(self) -> &'static str {
                match self {
                    $(Reason::$variant => $meaning,)*
                }
            }

            /// Whether the reason depends on runtime state (live signal handles,
            /// loaded kernels, the agent) rather than on the 64 bytes alone;
            /// offline replay cannot reproduce it.
            pub const fn is_runtime(self) -> bool {
                match self {
                    $(Reason::$variant => reasons!(@runtime $level),)*
                }
            }

            /// The `hsa_status_t` the queue's error callback is called with for
            /// a packet rejected for this reason alone: the status ROCr reports
            /// for the same defect. `SUCCESS` for a finding (never a reject on
            /// its own). A packet with several reasons gets one status, chosen
            /// by [`ReasonSet::queue_error`].
            pub const fn queue_status(self) -> HsaStatus {
                match self {
                    $(Reason::$variant => HsaStatus::$status,)*
                }
            }

            /// Where [`Reason::queue_status`] comes from.
            pub const fn status_basis(self) -> StatusBasis {
                match self {
                    $(Reason::$variant => reasons!(@basis $basis),)*
                }
            }
        }
    };
    (@runtime runtime) => { true };
    (@runtime bytes) => { false };
    (@basis rocrtst) => { StatusBasis::Rocrtst };
    (@basis rocr) => { StatusBasis::Rocr };
    (@basis shim) => { StatusBasis::Shim };
    (@basis finding) => { StatusBasis::Finding };
}

/// Where a reason's queue error status ([`Reason::queue_status`]) comes from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum StatusBasis {
    /// A `rocrtst` negative test (`rocrtstNeg.Queue_Validation_*`) submits
    /// this defect and asserts the status ROCr's callback reports.
    Rocrtst,
    /// ROCr's queue error handlers (`AqlQueue::ExceptionHandler` and
    /// `DynamicQueueEventsHandler` in `amd_aql_queue.cpp`) map the command
    /// processor's exception for this class of defect to this status.
    Rocr,
    /// The command processor raises no exception for it (it would run the
    /// packet, or fault on memory); the shim rejects it and reports the
    /// status of ROCr's nearest class (argued in the contract document).
    Shim,
    /// A finding, not a reject: no callback.
    Finding,
}

impl StatusBasis {
    /// The word in the contract document's reason table.
    pub const fn as_str(self) -> &'static str {
        match self {
            StatusBasis::Rocrtst => "rocrtst",
            StatusBasis::Rocr => "ROCr",
            StatusBasis::Shim => "shim",
            StatusBasis::Finding => "finding",
        }
    }
}

/// The queue error statuses in the order ROCr's handlers test for them: when
/// a packet has defects of several classes, the command processor's error
/// word has several bits set and ROCr reports the first class in this order
/// (invalid dimensions, group segment, code object, packet format, workgroup
/// size; `INVALID_SIGNAL` is the shim's own and comes last).
/// [`ReasonSet::queue_error`] picks by it.
pub const QUEUE_ERROR_PRECEDENCE: [HsaStatus; 6] = [
    HsaStatus::ERROR_INCOMPATIBLE_ARGUMENTS,
    HsaStatus::ERROR_INVALID_ALLOCATION,
    HsaStatus::ERROR_INVALID_CODE_OBJECT,
    HsaStatus::ERROR_INVALID_PACKET_FORMAT,
    HsaStatus::ERROR_INVALID_ARGUMENT,
    HsaStatus::ERROR_INVALID_SIGNAL,
];

reasons! {
    DimensionsOutOfRange = 0, "dimensions_out_of_range", bytes, ERROR_INCOMPATIBLE_ARGUMENTS, rocrtst,
        "dispatch `setup.dimensions` is not 1, 2 or 3";
    WorkgroupSizeZero = 1, "workgroup_size_zero", bytes, ERROR_INVALID_ARGUMENT, rocr,
        "a dispatch workgroup size is 0";
    GridSizeZero = 2, "grid_size_zero", bytes, ERROR_INVALID_ARGUMENT, shim,
        "a dispatch grid size is 0";
    UnusedDimensionNotOne = 3, "unused_dimension_not_one", bytes, ERROR_INCOMPATIBLE_ARGUMENTS, shim,
        "a workgroup or grid size beyond `dimensions` is not 1";
    WorkgroupSizeExceedsMax = 4, "workgroup_size_exceeds_max", bytes, ERROR_INVALID_ARGUMENT, rocrtst,
        "the workgroup has more work-items than the agent allows (1024)";
    SetupReservedBitsSet = 5, "setup_reserved_bits_set", bytes, ERROR_INVALID_PACKET_FORMAT, rocr,
        "a reserved bit of dispatch `setup` (bits 2 to 15) is set";
    ReservedFieldNonzero = 6, "reserved_field_nonzero", bytes, ERROR_INVALID_PACKET_FORMAT, rocr,
        "dispatch `reserved0` or `reserved2` is not zero";
    KernelObjectNull = 7, "kernel_object_null", bytes, ERROR_INVALID_CODE_OBJECT, rocrtst,
        "dispatch `kernel_object` is null";
    KernelObjectMisaligned = 8, "kernel_object_misaligned", bytes, ERROR_INVALID_CODE_OBJECT, rocr,
        "dispatch `kernel_object` is not a multiple of 64";
    KernargAddressMisaligned = 9, "kernarg_address_misaligned", bytes, ERROR_INVALID_PACKET_FORMAT, shim,
        "dispatch `kernarg_address` is not a multiple of 16";
    AcquireFenceScopeInvalid = 10, "acquire_fence_scope_invalid", bytes, ERROR_INVALID_PACKET_FORMAT, rocr,
        "the header's acquire fence scope is 3";
    ReleaseFenceScopeInvalid = 11, "release_fence_scope_invalid", bytes, ERROR_INVALID_PACKET_FORMAT, rocr,
        "the header's release fence scope is 3";
    AgentDispatchUnsupported = 12, "agent_dispatch_unsupported", bytes, ERROR_INVALID_PACKET_FORMAT, rocr,
        "an agent dispatch packet; SoftGPU has no agent to run it";
    VendorSpecificUnsupported = 13, "vendor_specific_unsupported", bytes, ERROR_INVALID_PACKET_FORMAT, rocr,
        "a vendor-specific packet; SoftGPU does not interpret them";
    UnknownPacketType = 14, "unknown_packet_type", bytes, ERROR_INVALID_PACKET_FORMAT, rocrtst,
        "a header type `hsa.h` does not define (6 to 255)";
    PacketTypeInvalid = 15, "packet_type_invalid", bytes, ERROR_INVALID_PACKET_FORMAT, shim,
        "type INVALID; seen only when replaying bytes offline";
    CompletionSignalUnknown = 16, "completion_signal_unknown", runtime, ERROR_INVALID_SIGNAL, shim,
        "the completion signal is not a live signal of this runtime that a packet may complete: a forged or destroyed handle, or a queue's own doorbell signal";
    DependencySignalUnknown = 17, "dependency_signal_unknown", runtime, ERROR_INVALID_SIGNAL, shim,
        "a non-null barrier dependency is not a live signal of this runtime";
    RuntimeBlitKernelNotExecuted = 18, "runtime_blit_kernel_not_executed", runtime, SUCCESS, finding,
        "*finding*, not a reject (a validated blit dispatch stays validated; a rejected one carries it too): the kernel object is one of the HIP runtime's own blit kernels (`__amd_rocclr_*`, used for `hipMemset`, device-to-device copies, stream write/wait value). It was completed without running, so the data it would have produced does not exist";
    BarrierValueConditionInvalid = 19, "barrier_value_condition_invalid", bytes, ERROR_INVALID_PACKET_FORMAT, shim,
        "an AMD barrier-value packet's condition is not EQ, NE, LT or GTE";
    GroupSegmentSizeExceedsLimit = 20, "group_segment_size_exceeds_limit", runtime, ERROR_INVALID_ALLOCATION, rocrtst,
        "a dispatch's group segment (static + dynamic LDS) exceeds the agent's LDS per workgroup (64 KiB on gfx90a); checked by the processor against the agent, so replay (which has no agent) leaves it out";
    UnknownKernelObject = 21, "unknown_kernel_object", runtime, SUCCESS, finding,
        "*finding on a validated dispatch*: the runtime tracks the kernels it loaded and this kernel object is not one of them, so the dispatch was checked on its own bytes only";
    WorkgroupSizeExceedsKernelMax = 22, "workgroup_size_exceeds_kernel_max", runtime, ERROR_INVALID_ARGUMENT, shim,
        "the workgroup has more work-items than the kernel's `.max_flat_workgroup_size`";
    WorkgroupSizeDiffersFromRequired = 23, "workgroup_size_differs_from_required", runtime, ERROR_INVALID_ARGUMENT, shim,
        "the kernel has a `.reqd_workgroup_size` and the dispatch's workgroup differs";
    GroupSegmentSizeBelowStatic = 24, "group_segment_size_below_static", runtime, ERROR_INVALID_ALLOCATION, shim,
        "`group_segment_size` is less than the kernel's static LDS (`.group_segment_fixed_size`)";
    PrivateSegmentSizeBelowStatic = 25, "private_segment_size_below_static", runtime, ERROR_INVALID_ALLOCATION, shim,
        "`private_segment_size` is less than the kernel's static scratch (`.private_segment_fixed_size`)";
    KernargAddressNull = 26, "kernarg_address_null", runtime, ERROR_INVALID_ARGUMENT, shim,
        "the kernel takes arguments (kernarg size > 0) and the kernarg address is null";
    KernelObjectWrongAgent = 27, "kernel_object_wrong_agent", runtime, ERROR_INVALID_CODE_OBJECT, shim,
        "the kernel object was loaded for another agent than the one owning the queue";
}

// `ALL` is in numeric order with no gap (`from_u8` indexes it), and every
// value fits a `ReasonSet` bit.
const _: () = {
    let mut i = 0;
    while i < Reason::ALL.len() {
        assert!(Reason::ALL[i] as usize == i);
        i += 1;
    }
    assert!(Reason::ALL.len() <= 64);
};

/// A set of [`Reason`]s as a bit mask (bit n = reason with value n).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ReasonSet(pub u64);

/// Header fence scope name for reports: `none`, `agent`, `system` or `invalid`.
pub type FenceScopeName = &'static str;

/// A successfully parsed packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParsedPacket {
    KernelDispatch(crate::abi::KernelDispatchPacket),
    BarrierAnd(crate::abi::BarrierAndPacket),
    BarrierOr(crate::abi::BarrierOrPacket),
    /// AMD vendor-specific barrier-value packet (`AmdFormat` 2, hsa_ext_amd.h).
    BarrierValue(crate::abi::AmdBarrierValuePacket),
}

/// Field-level decode of any 64 bytes, for reports (inspect, replay, JSONL);
/// never fails and never validates. Dispatch-only fields are `None` for other
/// packet types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DecodedPacket {
    pub header: u16,
    pub packet_type: PacketType,
    /// `kernel_dispatch`, `barrier_and`, `barrier_or`, `agent_dispatch`,
    /// `vendor_specific`, `invalid` or `unknown`.
    pub type_name: &'static str,
    pub barrier: bool,
    pub acquire_fence_scope: FenceScopeName,
    pub release_fence_scope: FenceScopeName,
    /// Dispatch: `setup` dimensions field.
    pub dimensions: Option<u16>,
    /// Dispatch: workgroup sizes.
    pub workgroup: Option<[u16; 3]>,
    /// Dispatch: grid sizes in work-items.
    pub grid: Option<[u32; 3]>,
    pub private_segment_size: Option<u32>,
    pub group_segment_size: Option<u32>,
    pub kernel_object: Option<u64>,
    pub kernarg_address: Option<u64>,
    /// Barrier: the five dependency signal handles.
    pub dep_signals: Option<[u64; 5]>,
    /// Every type has one at bytes 56..64.
    pub completion_signal: u64,
}

// Byte offsets, all from the `#[repr(C)]` mirrors in `abi` (so from the pinned
// hsa.h and hsa_ext_amd.h, whose layouts the C probe test checks).
const OFF_HEADER: usize = po::HEADER;
const OFF_SETUP: usize = po::SETUP;
const OFF_WG: usize = po::WORKGROUP_SIZE;
const OFF_RESERVED0: usize = po::RESERVED0;
const OFF_GRID: usize = po::GRID_SIZE;
const OFF_PRIVATE: usize = po::PRIVATE_SEGMENT_SIZE;
const OFF_GROUP: usize = po::GROUP_SEGMENT_SIZE;
const OFF_KERNEL_OBJECT: usize = po::KERNEL_OBJECT;
const OFF_KERNARG: usize = po::KERNARG_ADDRESS;
const OFF_RESERVED2: usize = po::RESERVED2;
const OFF_DEP_SIGNAL: usize = po::DEP_SIGNAL;
const OFF_COMPLETION: usize = po::COMPLETION_SIGNAL;
const OFF_BARRIER_RESERVED0: usize = offset_of!(BarrierAndPacket, reserved0);
const OFF_BARRIER_RESERVED1: usize = offset_of!(BarrierAndPacket, reserved1);
const OFF_AGENT_TYPE: usize = offset_of!(AgentDispatchPacket, type_);
const OFF_AGENT_RESERVED0: usize = offset_of!(AgentDispatchPacket, reserved0);
const OFF_AGENT_RETURN: usize = offset_of!(AgentDispatchPacket, return_address);
const OFF_AGENT_ARG: usize = offset_of!(AgentDispatchPacket, arg);
const OFF_BV_FORMAT: usize = po::AMD_FORMAT;
const OFF_BV_RESERVED: usize = offset_of!(AmdBarrierValuePacket, reserved);
const OFF_BV_RESERVED0: usize = offset_of!(AmdBarrierValuePacket, reserved0);
const OFF_BV_SIGNAL: usize = po::BARRIER_VALUE_SIGNAL;
const OFF_BV_VALUE: usize = offset_of!(AmdBarrierValuePacket, value);
const OFF_BV_MASK: usize = offset_of!(AmdBarrierValuePacket, mask);
const OFF_BV_COND: usize = offset_of!(AmdBarrierValuePacket, cond);
const OFF_BV_RESERVED1: usize = offset_of!(AmdBarrierValuePacket, reserved1);
const OFF_BV_RESERVED2: usize = offset_of!(AmdBarrierValuePacket, reserved2);
const OFF_BV_RESERVED3: usize = offset_of!(AmdBarrierValuePacket, reserved3);

/// `setup` bits 0..2 hold `dimensions`; bits 2..16 are reserved.
const SETUP_DIMENSIONS_MASK: u16 = (1 << crate::abi::setup::WIDTH_DIMENSIONS) - 1;
/// Kernel descriptors are 64-byte aligned.
const KERNEL_OBJECT_ALIGN: u64 = 64;
/// Kernarg segments are 16-byte aligned.
const KERNARG_ALIGN: u64 = 16;

#[inline]
fn u16_at(b: &[u8; 64], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

#[inline]
fn u32_at(b: &[u8; 64], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

#[inline]
fn u64_at(b: &[u8; 64], off: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn put_u16(b: &mut [u8; 64], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

#[inline]
fn put_u32(b: &mut [u8; 64], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

#[inline]
fn put_u64(b: &mut [u8; 64], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// The packet type of a header (its low 8 bits).
#[inline]
pub fn header_type(header: u16) -> PacketType {
    PacketType((header >> crate::abi::header::TYPE) as u8)
}

/// The barrier bit of a header.
#[inline]
pub fn header_barrier(header: u16) -> bool {
    (header >> crate::abi::header::BARRIER) & 1 != 0
}

/// The acquire fence scope field of a header (0..=3; 3 is invalid).
#[inline]
pub fn header_acquire_scope(header: u16) -> FenceScope {
    FenceScope(((header >> crate::abi::header::SCACQUIRE_FENCE_SCOPE) & 0b11) as u8)
}

/// The release fence scope field of a header (0..=3; 3 is invalid).
#[inline]
pub fn header_release_scope(header: u16) -> FenceScope {
    FenceScope(((header >> crate::abi::header::SCRELEASE_FENCE_SCOPE) & 0b11) as u8)
}

/// Builds a header from its fields. Scopes are masked to their two bits, so an
/// invalid scope (3) can be built on purpose.
#[inline]
pub fn make_header(ty: PacketType, barrier: bool, acquire: FenceScope, release: FenceScope) -> u16 {
    use crate::abi::header::{BARRIER, SCACQUIRE_FENCE_SCOPE, SCRELEASE_FENCE_SCOPE, TYPE};
    (u16::from(ty.0) << TYPE)
        | (u16::from(barrier) << BARRIER)
        | (u16::from(acquire.0 & 0b11) << SCACQUIRE_FENCE_SCOPE)
        | (u16::from(release.0 & 0b11) << SCRELEASE_FENCE_SCOPE)
}

/// Report name of a fence scope.
pub fn fence_scope_name(scope: FenceScope) -> FenceScopeName {
    match scope {
        FenceScope::NONE => "none",
        FenceScope::AGENT => "agent",
        FenceScope::SYSTEM => "system",
        _ => "invalid",
    }
}

/// Report name of a packet type (the JSONL `type` field).
pub fn packet_type_name(ty: PacketType) -> &'static str {
    match ty {
        PacketType::KERNEL_DISPATCH => "kernel_dispatch",
        PacketType::BARRIER_AND => "barrier_and",
        PacketType::BARRIER_OR => "barrier_or",
        PacketType::AGENT_DISPATCH => "agent_dispatch",
        PacketType::VENDOR_SPECIFIC => "vendor_specific",
        PacketType::INVALID => "invalid",
        _ => "unknown",
    }
}

impl DecodedPacket {
    /// Decode any 64 bytes at the pinned `hsa.h` offsets.
    pub fn decode(bytes: &[u8; 64]) -> DecodedPacket {
        let header = u16_at(bytes, OFF_HEADER);
        let packet_type = header_type(header);
        let is_dispatch = packet_type == PacketType::KERNEL_DISPATCH;
        let is_barrier =
            packet_type == PacketType::BARRIER_AND || packet_type == PacketType::BARRIER_OR;
        DecodedPacket {
            header,
            packet_type,
            type_name: packet_type_name(packet_type),
            barrier: header_barrier(header),
            acquire_fence_scope: fence_scope_name(header_acquire_scope(header)),
            release_fence_scope: fence_scope_name(header_release_scope(header)),
            dimensions: is_dispatch.then(|| u16_at(bytes, OFF_SETUP) & SETUP_DIMENSIONS_MASK),
            workgroup: is_dispatch.then(|| {
                [
                    u16_at(bytes, OFF_WG),
                    u16_at(bytes, OFF_WG + 2),
                    u16_at(bytes, OFF_WG + 4),
                ]
            }),
            grid: is_dispatch.then(|| {
                [
                    u32_at(bytes, OFF_GRID),
                    u32_at(bytes, OFF_GRID + 4),
                    u32_at(bytes, OFF_GRID + 8),
                ]
            }),
            private_segment_size: is_dispatch.then(|| u32_at(bytes, OFF_PRIVATE)),
            group_segment_size: is_dispatch.then(|| u32_at(bytes, OFF_GROUP)),
            kernel_object: is_dispatch.then(|| u64_at(bytes, OFF_KERNEL_OBJECT)),
            kernarg_address: is_dispatch.then(|| u64_at(bytes, OFF_KERNARG)),
            dep_signals: is_barrier.then(|| dep_signals(bytes)),
            completion_signal: u64_at(bytes, OFF_COMPLETION),
        }
    }
}

/// The five dependency handles of a barrier packet (bytes 8..48).
#[inline]
fn dep_signals(bytes: &[u8; 64]) -> [u64; 5] {
    core::array::from_fn(|i| u64_at(bytes, OFF_DEP_SIGNAL + 8 * i))
}

/// Parse and validate one packet against [`MAX_WORKGROUP_SIZE`].
#[inline]
pub fn parse_supported_packet(bytes: &[u8; 64]) -> Result<ParsedPacket, ReasonSet> {
    parse_supported_packet_with_limit(bytes, MAX_WORKGROUP_SIZE)
}

/// Parse and validate one packet against an agent's maximum workgroup size
/// (the product of the three workgroup sizes may not exceed it).
///
/// Returns every applicable reason on failure. Never allocates; never panics.
pub fn parse_supported_packet_with_limit(
    bytes: &[u8; 64],
    max_workgroup_size: u32,
) -> Result<ParsedPacket, ReasonSet> {
    let header = u16_at(bytes, OFF_HEADER);
    let mut reasons = ReasonSet::EMPTY;
    match header_type(header) {
        PacketType::KERNEL_DISPATCH => {
            let p = kernel_dispatch_from_bytes(bytes);
            if dispatch_is_clean(header, &p, max_workgroup_size) {
                return Ok(ParsedPacket::KernelDispatch(p));
            }
            check_fence_scopes(header, &mut reasons);
            check_kernel_dispatch(&p, max_workgroup_size, &mut reasons);
            if reasons.is_empty() {
                return Ok(ParsedPacket::KernelDispatch(p));
            }
        }
        PacketType::BARRIER_AND => {
            check_fence_scopes(header, &mut reasons);
            if reasons.is_empty() {
                return Ok(ParsedPacket::BarrierAnd(barrier_and_from_bytes(bytes)));
            }
        }
        PacketType::BARRIER_OR => {
            check_fence_scopes(header, &mut reasons);
            if reasons.is_empty() {
                let p = barrier_and_from_bytes(bytes);
                return Ok(ParsedPacket::BarrierOr(BarrierOrPacket {
                    header: p.header,
                    reserved0: p.reserved0,
                    reserved1: p.reserved1,
                    dep_signal: p.dep_signal,
                    reserved2: p.reserved2,
                    completion_signal: p.completion_signal,
                }));
            }
        }
        PacketType::AGENT_DISPATCH => {
            reasons.insert(Reason::AgentDispatchUnsupported);
            check_fence_scopes(header, &mut reasons);
        }
        // AMD's barrier-value packet is a queue-level barrier, not work: it
        // is honoured like BARRIER_AND/OR. Every other vendor format is rejected.
        PacketType::VENDOR_SPECIFIC
            if bytes[OFF_BV_FORMAT] == crate::abi::amd_packet_type::BARRIER_VALUE =>
        {
            check_fence_scopes(header, &mut reasons);
            let p = barrier_value_from_bytes(bytes);
            if p.cond > 3 {
                reasons.insert(Reason::BarrierValueConditionInvalid);
            }
            if reasons.is_empty() {
                return Ok(ParsedPacket::BarrierValue(p));
            }
        }
        PacketType::VENDOR_SPECIFIC => reasons.insert(Reason::VendorSpecificUnsupported),
        PacketType::INVALID => reasons.insert(Reason::PacketTypeInvalid),
        _ => reasons.insert(Reason::UnknownPacketType),
    }
    Err(reasons)
}

#[inline]
fn check_fence_scopes(header: u16, reasons: &mut ReasonSet) {
    if header_acquire_scope(header).0 > FenceScope::SYSTEM.0 {
        reasons.insert(Reason::AcquireFenceScopeInvalid);
    }
    if header_release_scope(header).0 > FenceScope::SYSTEM.0 {
        reasons.insert(Reason::ReleaseFenceScopeInvalid);
    }
}

/// Whether a dispatch has nothing at all to report: exactly when
/// [`check_fence_scopes`] and [`check_kernel_dispatch`] would both leave the
/// reason set empty (a unit test compares them over every field's edge
/// values). The common case, decided with plain compares combined without
/// branches, and without building a reason set; any packet it does not pass
/// goes through those two, which name every reason.
#[inline]
fn dispatch_is_clean(header: u16, p: &KernelDispatchPacket, max_wg: u32) -> bool {
    let scopes = (header_acquire_scope(header).0 <= FenceScope::SYSTEM.0)
        & (header_release_scope(header).0 <= FenceScope::SYSTEM.0);
    // `setup` is exactly `dimensions` (its reserved bits clear), 1 to 3.
    let dims = p.setup;
    let dims_ok = (1..=3).contains(&dims);
    let y_ok = (dims >= 2) | ((p.workgroup_size_y == 1) & (p.grid_size_y == 1));
    let z_ok = (dims >= 3) | ((p.workgroup_size_z == 1) & (p.grid_size_z == 1));
    let nonzero = (p.workgroup_size_x != 0)
        & (p.workgroup_size_y != 0)
        & (p.workgroup_size_z != 0)
        & (p.grid_size_x != 0)
        & (p.grid_size_y != 0)
        & (p.grid_size_z != 0);
    // At most 65535^3, well inside a u64.
    let product = u64::from(p.workgroup_size_x)
        * u64::from(p.workgroup_size_y)
        * u64::from(p.workgroup_size_z);
    let fits = product <= u64::from(max_wg);
    let reserved = (p.reserved0 == 0) & (p.reserved2 == 0);
    let object = (p.kernel_object != 0) & (p.kernel_object % KERNEL_OBJECT_ALIGN == 0);
    let kernarg = p.kernarg_address % KERNARG_ALIGN == 0;
    scopes & dims_ok & y_ok & z_ok & nonzero & fits & reserved & object & kernarg
}

#[inline]
fn check_kernel_dispatch(p: &KernelDispatchPacket, max_wg: u32, reasons: &mut ReasonSet) {
    let wg = [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z];
    let grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
    let dims = p.setup & SETUP_DIMENSIONS_MASK;
    if !(1..=3).contains(&dims) {
        reasons.insert(Reason::DimensionsOutOfRange);
    } else if (usize::from(dims)..3).any(|d| wg[d] != 1 || grid[d] != 1) {
        // Only meaningful when `dimensions` itself is; with an out-of-range
        // value there is no "beyond" to check.
        reasons.insert(Reason::UnusedDimensionNotOne);
    }
    if wg.contains(&0) {
        reasons.insert(Reason::WorkgroupSizeZero);
    }
    if grid.contains(&0) {
        reasons.insert(Reason::GridSizeZero);
    }
    let product = wg.iter().map(|&w| u64::from(w)).product::<u64>();
    if product > u64::from(max_wg) {
        reasons.insert(Reason::WorkgroupSizeExceedsMax);
    }
    if p.setup & !SETUP_DIMENSIONS_MASK != 0 {
        reasons.insert(Reason::SetupReservedBitsSet);
    }
    if p.reserved0 != 0 || p.reserved2 != 0 {
        reasons.insert(Reason::ReservedFieldNonzero);
    }
    if p.kernel_object == 0 {
        reasons.insert(Reason::KernelObjectNull);
    } else if p.kernel_object % KERNEL_OBJECT_ALIGN != 0 {
        reasons.insert(Reason::KernelObjectMisaligned);
    }
    if p.kernarg_address % KERNARG_ALIGN != 0 {
        reasons.insert(Reason::KernargAddressMisaligned);
    }
}

fn kernel_dispatch_from_bytes(b: &[u8; 64]) -> KernelDispatchPacket {
    KernelDispatchPacket {
        header: u16_at(b, OFF_HEADER),
        setup: u16_at(b, OFF_SETUP),
        workgroup_size_x: u16_at(b, OFF_WG),
        workgroup_size_y: u16_at(b, OFF_WG + 2),
        workgroup_size_z: u16_at(b, OFF_WG + 4),
        reserved0: u16_at(b, OFF_RESERVED0),
        grid_size_x: u32_at(b, OFF_GRID),
        grid_size_y: u32_at(b, OFF_GRID + 4),
        grid_size_z: u32_at(b, OFF_GRID + 8),
        private_segment_size: u32_at(b, OFF_PRIVATE),
        group_segment_size: u32_at(b, OFF_GROUP),
        kernel_object: u64_at(b, OFF_KERNEL_OBJECT),
        kernarg_address: u64_at(b, OFF_KERNARG),
        reserved2: u64_at(b, OFF_RESERVED2),
        completion_signal: HsaSignal {
            handle: u64_at(b, OFF_COMPLETION),
        },
    }
}

fn barrier_and_from_bytes(b: &[u8; 64]) -> BarrierAndPacket {
    BarrierAndPacket {
        header: u16_at(b, OFF_HEADER),
        reserved0: u16_at(b, OFF_BARRIER_RESERVED0),
        reserved1: u32_at(b, OFF_BARRIER_RESERVED1),
        dep_signal: dep_signals(b).map(|handle| HsaSignal { handle }),
        reserved2: u64_at(b, OFF_RESERVED2),
        completion_signal: HsaSignal {
            handle: u64_at(b, OFF_COMPLETION),
        },
    }
}

/// Encodes a kernel dispatch packet at the `hsa.h` offsets, little-endian.
pub fn encode_kernel_dispatch(p: &KernelDispatchPacket) -> [u8; 64] {
    let mut b = [0u8; 64];
    put_u16(&mut b, OFF_HEADER, p.header);
    put_u16(&mut b, OFF_SETUP, p.setup);
    put_u16(&mut b, OFF_WG, p.workgroup_size_x);
    put_u16(&mut b, OFF_WG + 2, p.workgroup_size_y);
    put_u16(&mut b, OFF_WG + 4, p.workgroup_size_z);
    put_u16(&mut b, OFF_RESERVED0, p.reserved0);
    put_u32(&mut b, OFF_GRID, p.grid_size_x);
    put_u32(&mut b, OFF_GRID + 4, p.grid_size_y);
    put_u32(&mut b, OFF_GRID + 8, p.grid_size_z);
    put_u32(&mut b, OFF_PRIVATE, p.private_segment_size);
    put_u32(&mut b, OFF_GROUP, p.group_segment_size);
    put_u64(&mut b, OFF_KERNEL_OBJECT, p.kernel_object);
    put_u64(&mut b, OFF_KERNARG, p.kernarg_address);
    put_u64(&mut b, OFF_RESERVED2, p.reserved2);
    put_u64(&mut b, OFF_COMPLETION, p.completion_signal.handle);
    b
}

/// Encodes a barrier-AND packet; a barrier-OR has the same layout, so this
/// also serves [`encode_barrier_or`].
pub fn encode_barrier_and(p: &BarrierAndPacket) -> [u8; 64] {
    let mut b = [0u8; 64];
    put_u16(&mut b, OFF_HEADER, p.header);
    put_u16(&mut b, OFF_BARRIER_RESERVED0, p.reserved0);
    put_u32(&mut b, OFF_BARRIER_RESERVED1, p.reserved1);
    for (i, s) in p.dep_signal.iter().enumerate() {
        put_u64(&mut b, OFF_DEP_SIGNAL + 8 * i, s.handle);
    }
    put_u64(&mut b, OFF_RESERVED2, p.reserved2);
    put_u64(&mut b, OFF_COMPLETION, p.completion_signal.handle);
    b
}

/// Encodes a barrier-OR packet.
pub fn encode_barrier_or(p: &BarrierOrPacket) -> [u8; 64] {
    encode_barrier_and(&BarrierAndPacket {
        header: p.header,
        reserved0: p.reserved0,
        reserved1: p.reserved1,
        dep_signal: p.dep_signal,
        reserved2: p.reserved2,
        completion_signal: p.completion_signal,
    })
}

/// Encodes an AMD barrier-value packet.
pub fn encode_barrier_value(p: &crate::abi::AmdBarrierValuePacket) -> [u8; 64] {
    let mut b = [0u8; 64];
    put_u16(&mut b, OFF_HEADER, p.header);
    b[OFF_BV_FORMAT] = p.amd_format;
    b[OFF_BV_RESERVED] = p.reserved;
    put_u32(&mut b, OFF_BV_RESERVED0, p.reserved0);
    put_u64(&mut b, OFF_BV_SIGNAL, p.signal.handle);
    put_u64(&mut b, OFF_BV_VALUE, p.value as u64);
    put_u64(&mut b, OFF_BV_MASK, p.mask as u64);
    put_u32(&mut b, OFF_BV_COND, p.cond);
    put_u32(&mut b, OFF_BV_RESERVED1, p.reserved1);
    put_u64(&mut b, OFF_BV_RESERVED2, p.reserved2);
    put_u64(&mut b, OFF_BV_RESERVED3, p.reserved3);
    put_u64(&mut b, OFF_COMPLETION, p.completion_signal.handle);
    b
}

fn barrier_value_from_bytes(bytes: &[u8; 64]) -> crate::abi::AmdBarrierValuePacket {
    crate::abi::AmdBarrierValuePacket {
        header: u16_at(bytes, OFF_HEADER),
        amd_format: bytes[OFF_BV_FORMAT],
        reserved: bytes[OFF_BV_RESERVED],
        reserved0: u32_at(bytes, OFF_BV_RESERVED0),
        signal: crate::abi::HsaSignal {
            handle: u64_at(bytes, OFF_BV_SIGNAL),
        },
        value: u64_at(bytes, OFF_BV_VALUE) as i64,
        mask: u64_at(bytes, OFF_BV_MASK) as i64,
        cond: u32_at(bytes, OFF_BV_COND),
        reserved1: u32_at(bytes, OFF_BV_RESERVED1),
        reserved2: u64_at(bytes, OFF_BV_RESERVED2),
        reserved3: u64_at(bytes, OFF_BV_RESERVED3),
        completion_signal: crate::abi::HsaSignal {
            handle: u64_at(bytes, OFF_COMPLETION),
        },
    }
}

/// Encodes an agent dispatch packet (SoftGPU always rejects these; tests and
/// fuzzers build them).
pub fn encode_agent_dispatch(p: &AgentDispatchPacket) -> [u8; 64] {
    let mut b = [0u8; 64];
    put_u16(&mut b, OFF_HEADER, p.header);
    put_u16(&mut b, OFF_AGENT_TYPE, p.type_);
    put_u32(&mut b, OFF_AGENT_RESERVED0, p.reserved0);
    put_u64(&mut b, OFF_AGENT_RETURN, p.return_address);
    for (i, a) in p.arg.iter().enumerate() {
        put_u64(&mut b, OFF_AGENT_ARG + 8 * i, *a);
    }
    put_u64(&mut b, OFF_RESERVED2, p.reserved2);
    put_u64(&mut b, OFF_COMPLETION, p.completion_signal.handle);
    b
}

impl ParsedPacket {
    /// The packet's 64 bytes; `parse(p.to_bytes()) == Ok(p)` for every parsed `p`.
    pub fn to_bytes(&self) -> [u8; 64] {
        match self {
            ParsedPacket::KernelDispatch(p) => encode_kernel_dispatch(p),
            ParsedPacket::BarrierAnd(p) => encode_barrier_and(p),
            ParsedPacket::BarrierOr(p) => encode_barrier_or(p),
            ParsedPacket::BarrierValue(p) => encode_barrier_value(p),
        }
    }

    /// The header word.
    pub fn header(&self) -> u16 {
        match self {
            ParsedPacket::KernelDispatch(p) => p.header,
            ParsedPacket::BarrierAnd(p) => p.header,
            ParsedPacket::BarrierOr(p) => p.header,
            ParsedPacket::BarrierValue(p) => p.header,
        }
    }

    /// The completion signal handle (0 = none).
    pub fn completion_signal(&self) -> u64 {
        match self {
            ParsedPacket::KernelDispatch(p) => p.completion_signal.handle,
            ParsedPacket::BarrierAnd(p) => p.completion_signal.handle,
            ParsedPacket::BarrierOr(p) => p.completion_signal.handle,
            ParsedPacket::BarrierValue(p) => p.completion_signal.handle,
        }
    }
}

impl Reason {
    /// Reason from its numeric value (as stored in captures).
    pub fn from_u8(v: u8) -> Option<Reason> {
        Reason::ALL.get(usize::from(v)).copied()
    }

    /// Reason from its stable code.
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.iter().copied().find(|r| r.code() == code)
    }
}

impl core::fmt::Display for Reason {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.code())
    }
}

impl ReasonSet {
    /// No reasons.
    pub const EMPTY: ReasonSet = ReasonSet(0);
    /// The reasons that depend on runtime state ([`Reason::is_runtime`]).
    pub const RUNTIME: ReasonSet = ReasonSet::matching(true);
    /// Every reason this build knows that follows from the 64 bytes alone:
    /// what offline replay can reproduce.
    pub const BYTES: ReasonSet = ReasonSet::matching(false);

    /// The known reasons whose [`Reason::is_runtime`] is `runtime`.
    const fn matching(runtime: bool) -> ReasonSet {
        let mut bits = 0u64;
        let mut i = 0;
        while i < Reason::ALL.len() {
            if Reason::ALL[i].is_runtime() == runtime {
                bits |= 1 << (Reason::ALL[i] as u8);
            }
            i += 1;
        }
        ReasonSet(bits)
    }

    pub fn insert(&mut self, r: Reason) {
        self.0 |= 1 << (r as u8);
    }
    pub fn contains(self, r: Reason) -> bool {
        self.0 & (1 << (r as u8)) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Number of reasons (known or not) in the set.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    /// The union of two sets.
    pub fn union(self, other: ReasonSet) -> ReasonSet {
        ReasonSet(self.0 | other.0)
    }
    /// The set without the runtime-only reasons: what offline replay of the
    /// same 64 bytes can reproduce.
    pub fn without_runtime(self) -> ReasonSet {
        ReasonSet(self.0 & !Self::RUNTIME.0)
    }
    /// The status the queue's error callback is called with for a packet
    /// rejected with these reasons: of the statuses its reasons map to
    /// ([`Reason::queue_status`]), the first in [`QUEUE_ERROR_PRECEDENCE`],
    /// as ROCr picks one class from the command processor's error bits.
    /// `None` when no reason is a reject (findings only, or empty).
    pub fn queue_error(self) -> Option<HsaStatus> {
        QUEUE_ERROR_PRECEDENCE
            .into_iter()
            .find(|st| self.iter().any(|r| r.queue_status() == *st))
    }
    /// Reasons in numeric order (unknown bits are skipped).
    pub fn iter(self) -> impl Iterator<Item = Reason> {
        (0u8..64)
            .filter(move |b| self.0 & (1 << b) != 0)
            .filter_map(Reason::from_u8)
    }
}

impl FromIterator<Reason> for ReasonSet {
    fn from_iter<I: IntoIterator<Item = Reason>>(iter: I) -> Self {
        let mut s = ReasonSet::EMPTY;
        for r in iter {
            s.insert(r);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full checks' verdict on a dispatch: no reason at all.
    fn full_checks_clean(header: u16, p: &KernelDispatchPacket, max_wg: u32) -> bool {
        let mut r = ReasonSet::EMPTY;
        check_fence_scopes(header, &mut r);
        check_kernel_dispatch(p, max_wg, &mut r);
        r.is_empty()
    }

    /// `dispatch_is_clean` says "clean" exactly when the checks that name
    /// every reason find none, over the edge values of every field they read
    /// (each field varied alone from a clean dispatch, and a seeded walk over
    /// all of them varied together).
    #[test]
    fn the_clean_dispatch_shortcut_agrees_with_the_full_checks() {
        let base = KernelDispatchPacket {
            grid_size_x: 256,
            kernarg_address: 0x2000,
            ..crate::aql::mock::valid_dispatch(0x1000, 0)
        };
        let headers: Vec<u16> = (0u8..4)
            .flat_map(|a| (0u8..4).map(move |r| (a, r)))
            .map(|(a, r)| {
                make_header(
                    PacketType::KERNEL_DISPATCH,
                    a == 1,
                    FenceScope(a),
                    FenceScope(r),
                )
            })
            .collect();
        let u16s = [0u16, 1, 2, 3, 4, 7, 64, 1024, 1025, 0x8000, 0xffff];
        let u32s = [0u32, 1, 2, 3, 64, 1024, 0x7fff_ffff, u32::MAX];
        let u64s = [
            0u64,
            1,
            8,
            16,
            32,
            64,
            0x1000,
            0x1010,
            0x1040,
            u64::MAX,
            u64::MAX - 63,
        ];
        let limits = [0u32, 1, 64, 1024, 1025, u32::MAX];
        let mut checked = 0u64;
        let mut agree = |h: u16, p: &KernelDispatchPacket| {
            for &m in &limits {
                assert_eq!(
                    dispatch_is_clean(h, p, m),
                    full_checks_clean(h, p, m),
                    "header {h:#x} limit {m} packet {p:?}"
                );
                checked += 1;
            }
        };
        for &h in &headers {
            agree(h, &base);
        }
        for &v in &u16s {
            for f in 0..5 {
                let mut p = base;
                match f {
                    0 => p.setup = v,
                    1 => p.workgroup_size_x = v,
                    2 => p.workgroup_size_y = v,
                    3 => p.workgroup_size_z = v,
                    _ => p.reserved0 = v,
                }
                agree(base.header, &p);
                p.setup = 3;
                agree(base.header, &p);
            }
        }
        for &v in &u32s {
            for f in 0..3 {
                let mut p = base;
                match f {
                    0 => p.grid_size_x = v,
                    1 => p.grid_size_y = v,
                    _ => p.grid_size_z = v,
                }
                for dims in 1..=3 {
                    p.setup = dims;
                    agree(base.header, &p);
                }
            }
        }
        for &v in &u64s {
            for f in 0..3 {
                let mut p = base;
                match f {
                    0 => p.kernel_object = v,
                    1 => p.kernarg_address = v,
                    _ => p.reserved2 = v,
                }
                agree(base.header, &p);
            }
        }
        // Every field at once: a fixed-seed walk over the same edge values.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut pick = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..20_000 {
            let p = KernelDispatchPacket {
                setup: u16s[pick(u16s.len())].min(if pick(2) == 0 { 3 } else { u16::MAX }),
                workgroup_size_x: u16s[pick(u16s.len())],
                workgroup_size_y: [1, u16s[pick(u16s.len())]][pick(2)],
                workgroup_size_z: [1, u16s[pick(u16s.len())]][pick(2)],
                reserved0: [0, u16s[pick(u16s.len())]][pick(2)],
                grid_size_x: u32s[pick(u32s.len())],
                grid_size_y: [1, u32s[pick(u32s.len())]][pick(2)],
                grid_size_z: [1, u32s[pick(u32s.len())]][pick(2)],
                kernel_object: u64s[pick(u64s.len())],
                kernarg_address: u64s[pick(u64s.len())],
                reserved2: [0, u64s[pick(u64s.len())]][pick(2)],
                ..base
            };
            let h = headers[pick(headers.len())];
            agree(h, &p);
        }
        assert!(checked > 100_000, "{checked}");
    }
}
