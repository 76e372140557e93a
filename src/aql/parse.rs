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

use crate::abi::{
    AgentDispatchPacket, BarrierAndPacket, BarrierOrPacket, FenceScope, HsaSignal,
    KernelDispatchPacket, PacketType,
};

/// Largest workgroup (product of the three sizes) on every AMD target.
pub const MAX_WORKGROUP_SIZE: u32 = 1024;

/// Stable reason codes. The numeric value is stored in captures (as a bit of a
/// [`ReasonSet`]) and must never be reused; the string is the JSONL code.
///
/// New reasons are appended with the next free number; none is ever renumbered
/// or removed.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Reason {
    DimensionsOutOfRange = 0,
    WorkgroupSizeZero = 1,
    GridSizeZero = 2,
    UnusedDimensionNotOne = 3,
    WorkgroupSizeExceedsMax = 4,
    SetupReservedBitsSet = 5,
    ReservedFieldNonzero = 6,
    KernelObjectNull = 7,
    KernelObjectMisaligned = 8,
    KernargAddressMisaligned = 9,
    AcquireFenceScopeInvalid = 10,
    ReleaseFenceScopeInvalid = 11,
    AgentDispatchUnsupported = 12,
    VendorSpecificUnsupported = 13,
    UnknownPacketType = 14,
    PacketTypeInvalid = 15,
    CompletionSignalUnknown = 16,
    DependencySignalUnknown = 17,
    /// Finding, not a reject: the dispatch targets one of the HIP runtime's own
    /// blit kernels (`__amd_rocclr_*`: memset, device-to-device copy, stream
    /// write/wait value). It was completed without running, so the data it
    /// would have produced does not exist.
    RuntimeBlitKernelNotExecuted = 18,
    /// An AMD barrier-value packet whose condition is not EQ, NE, LT or GTE.
    BarrierValueConditionInvalid = 19,
    /// A dispatch's group segment (static + dynamic LDS) exceeds the agent's
    /// LDS per workgroup. Depends on the agent, so the processor checks it.
    GroupSegmentSizeExceedsLimit = 20,
    /// Finding, not a reject: the runtime tracks loaded kernels and this
    /// kernel object is not one of them (checked on its own bytes only).
    UnknownKernelObject = 21,
    /// The workgroup has more work-items than the kernel's max flat workgroup size.
    WorkgroupSizeExceedsKernelMax = 22,
    /// The kernel requires a workgroup size (`reqd_work_group_size`) and this differs.
    WorkgroupSizeDiffersFromRequired = 23,
    /// `group_segment_size` is less than the kernel's static LDS.
    GroupSegmentSizeBelowStatic = 24,
    /// `private_segment_size` is less than the kernel's static scratch.
    PrivateSegmentSizeBelowStatic = 25,
    /// The kernel takes arguments and the kernarg address is null.
    KernargAddressNull = 26,
    /// The kernel object was loaded for another agent than the queue's.
    KernelObjectWrongAgent = 27,
}

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

// Byte offsets (hsa.h, pinned by the asserts in `abi`).
const OFF_SETUP: usize = 2;
const OFF_WG: usize = 4;
const OFF_RESERVED0: usize = 10;
const OFF_GRID: usize = 12;
const OFF_PRIVATE: usize = 24;
const OFF_GROUP: usize = 28;
const OFF_KERNEL_OBJECT: usize = 32;
const OFF_KERNARG: usize = 40;
const OFF_RESERVED2: usize = 48;
const OFF_DEP_SIGNAL: usize = 8;
const OFF_COMPLETION: usize = 56;

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
        let header = u16_at(bytes, 0);
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
    let header = u16_at(bytes, 0);
    let mut reasons = ReasonSet::EMPTY;
    match header_type(header) {
        PacketType::KERNEL_DISPATCH => {
            check_fence_scopes(header, &mut reasons);
            let p = kernel_dispatch_from_bytes(bytes);
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
        PacketType::VENDOR_SPECIFIC if bytes[2] == crate::abi::amd_packet_type::BARRIER_VALUE => {
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
        header: u16_at(b, 0),
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
        header: u16_at(b, 0),
        reserved0: u16_at(b, 2),
        reserved1: u32_at(b, 4),
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
    put_u16(&mut b, 0, p.header);
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
    put_u16(&mut b, 0, p.header);
    put_u16(&mut b, 2, p.reserved0);
    put_u32(&mut b, 4, p.reserved1);
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
    put_u16(&mut b, 0, p.header);
    b[2] = p.amd_format;
    b[3] = p.reserved;
    put_u32(&mut b, 4, p.reserved0);
    put_u64(&mut b, 8, p.signal.handle);
    put_u64(&mut b, 16, p.value as u64);
    put_u64(&mut b, 24, p.mask as u64);
    put_u32(&mut b, 32, p.cond);
    put_u32(&mut b, 36, p.reserved1);
    put_u64(&mut b, 40, p.reserved2);
    put_u64(&mut b, 48, p.reserved3);
    put_u64(&mut b, OFF_COMPLETION, p.completion_signal.handle);
    b
}

fn barrier_value_from_bytes(bytes: &[u8; 64]) -> crate::abi::AmdBarrierValuePacket {
    crate::abi::AmdBarrierValuePacket {
        header: u16_at(bytes, 0),
        amd_format: bytes[2],
        reserved: bytes[3],
        reserved0: u32_at(bytes, 4),
        signal: crate::abi::HsaSignal {
            handle: u64_at(bytes, 8),
        },
        value: u64_at(bytes, 16) as i64,
        mask: u64_at(bytes, 24) as i64,
        cond: u32_at(bytes, 32),
        reserved1: u32_at(bytes, 36),
        reserved2: u64_at(bytes, 40),
        reserved3: u64_at(bytes, 48),
        completion_signal: crate::abi::HsaSignal {
            handle: u64_at(bytes, OFF_COMPLETION),
        },
    }
}

/// Encodes an agent dispatch packet (SoftGPU always rejects these; tests and
/// fuzzers build them).
pub fn encode_agent_dispatch(p: &AgentDispatchPacket) -> [u8; 64] {
    let mut b = [0u8; 64];
    put_u16(&mut b, 0, p.header);
    put_u16(&mut b, 2, p.type_);
    put_u32(&mut b, 4, p.reserved0);
    put_u64(&mut b, 8, p.return_address);
    for (i, a) in p.arg.iter().enumerate() {
        put_u64(&mut b, 16 + 8 * i, *a);
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
    /// Every reason, in numeric order.
    pub const ALL: &'static [Reason] = &[
        Reason::DimensionsOutOfRange,
        Reason::WorkgroupSizeZero,
        Reason::GridSizeZero,
        Reason::UnusedDimensionNotOne,
        Reason::WorkgroupSizeExceedsMax,
        Reason::SetupReservedBitsSet,
        Reason::ReservedFieldNonzero,
        Reason::KernelObjectNull,
        Reason::KernelObjectMisaligned,
        Reason::KernargAddressMisaligned,
        Reason::AcquireFenceScopeInvalid,
        Reason::ReleaseFenceScopeInvalid,
        Reason::AgentDispatchUnsupported,
        Reason::VendorSpecificUnsupported,
        Reason::UnknownPacketType,
        Reason::PacketTypeInvalid,
        Reason::CompletionSignalUnknown,
        Reason::DependencySignalUnknown,
        Reason::RuntimeBlitKernelNotExecuted,
        Reason::BarrierValueConditionInvalid,
        Reason::GroupSegmentSizeExceedsLimit,
        Reason::UnknownKernelObject,
        Reason::WorkgroupSizeExceedsKernelMax,
        Reason::WorkgroupSizeDiffersFromRequired,
        Reason::GroupSegmentSizeBelowStatic,
        Reason::PrivateSegmentSizeBelowStatic,
        Reason::KernargAddressNull,
        Reason::KernelObjectWrongAgent,
    ];

    /// The stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            Reason::DimensionsOutOfRange => "dimensions_out_of_range",
            Reason::WorkgroupSizeZero => "workgroup_size_zero",
            Reason::GridSizeZero => "grid_size_zero",
            Reason::UnusedDimensionNotOne => "unused_dimension_not_one",
            Reason::WorkgroupSizeExceedsMax => "workgroup_size_exceeds_max",
            Reason::SetupReservedBitsSet => "setup_reserved_bits_set",
            Reason::ReservedFieldNonzero => "reserved_field_nonzero",
            Reason::KernelObjectNull => "kernel_object_null",
            Reason::KernelObjectMisaligned => "kernel_object_misaligned",
            Reason::KernargAddressMisaligned => "kernarg_address_misaligned",
            Reason::AcquireFenceScopeInvalid => "acquire_fence_scope_invalid",
            Reason::ReleaseFenceScopeInvalid => "release_fence_scope_invalid",
            Reason::AgentDispatchUnsupported => "agent_dispatch_unsupported",
            Reason::VendorSpecificUnsupported => "vendor_specific_unsupported",
            Reason::UnknownPacketType => "unknown_packet_type",
            Reason::PacketTypeInvalid => "packet_type_invalid",
            Reason::CompletionSignalUnknown => "completion_signal_unknown",
            Reason::DependencySignalUnknown => "dependency_signal_unknown",
            Reason::RuntimeBlitKernelNotExecuted => "runtime_blit_kernel_not_executed",
            Reason::BarrierValueConditionInvalid => "barrier_value_condition_invalid",
            Reason::GroupSegmentSizeExceedsLimit => "group_segment_size_exceeds_limit",
            Reason::UnknownKernelObject => "unknown_kernel_object",
            Reason::WorkgroupSizeExceedsKernelMax => "workgroup_size_exceeds_kernel_max",
            Reason::WorkgroupSizeDiffersFromRequired => "workgroup_size_differs_from_required",
            Reason::GroupSegmentSizeBelowStatic => "group_segment_size_below_static",
            Reason::PrivateSegmentSizeBelowStatic => "private_segment_size_below_static",
            Reason::KernargAddressNull => "kernarg_address_null",
            Reason::KernelObjectWrongAgent => "kernel_object_wrong_agent",
        }
    }

    /// One-line meaning, for `--help`-style tables and reports.
    pub fn meaning(self) -> &'static str {
        match self {
            Reason::DimensionsOutOfRange => "dispatch setup.dimensions is not 1, 2 or 3",
            Reason::WorkgroupSizeZero => "a dispatch workgroup size is 0",
            Reason::GridSizeZero => "a dispatch grid size is 0",
            Reason::UnusedDimensionNotOne => {
                "a workgroup or grid size beyond setup.dimensions is not 1"
            }
            Reason::WorkgroupSizeExceedsMax => {
                "the workgroup size product exceeds the agent's maximum (1024)"
            }
            Reason::SetupReservedBitsSet => "dispatch setup bits 2..16 are not zero",
            Reason::ReservedFieldNonzero => "dispatch reserved0 or reserved2 is not zero",
            Reason::KernelObjectNull => "dispatch kernel_object is null",
            Reason::KernelObjectMisaligned => "dispatch kernel_object is not 64-byte aligned",
            Reason::KernargAddressMisaligned => "dispatch kernarg_address is not 16-byte aligned",
            Reason::AcquireFenceScopeInvalid => "header acquire fence scope is 3 (invalid)",
            Reason::ReleaseFenceScopeInvalid => "header release fence scope is 3 (invalid)",
            Reason::AgentDispatchUnsupported => "agent dispatch packets are not supported",
            Reason::VendorSpecificUnsupported => "vendor-specific packets are not supported",
            Reason::UnknownPacketType => "the header type is not one hsa.h defines",
            Reason::PacketTypeInvalid => "the header type is INVALID (replay only)",
            Reason::CompletionSignalUnknown => {
                "the completion signal is not a live signal of this runtime"
            }
            Reason::DependencySignalUnknown => {
                "a barrier dependency signal is not a live signal of this runtime"
            }
            Reason::UnknownKernelObject => {
                "finding: the kernel object is not a kernel the runtime loaded; the dispatch was checked on its bytes only"
            }
            Reason::WorkgroupSizeExceedsKernelMax => {
                "the workgroup has more work-items than the kernel's max flat workgroup size"
            }
            Reason::WorkgroupSizeDiffersFromRequired => {
                "the workgroup size differs from the kernel's required workgroup size"
            }
            Reason::GroupSegmentSizeBelowStatic => {
                "group_segment_size is less than the kernel's static LDS"
            }
            Reason::PrivateSegmentSizeBelowStatic => {
                "private_segment_size is less than the kernel's static scratch"
            }
            Reason::KernargAddressNull => {
                "the kernel takes arguments but the kernarg address is null"
            }
            Reason::KernelObjectWrongAgent => {
                "the kernel object was loaded for another agent than the one owning the queue"
            }
            Reason::GroupSegmentSizeExceedsLimit => {
                "the dispatch's group segment (static + dynamic LDS) exceeds the agent's LDS per workgroup"
            }
            Reason::BarrierValueConditionInvalid => {
                "an AMD barrier-value packet's condition is not EQ, NE, LT or GTE"
            }
            Reason::RuntimeBlitKernelNotExecuted => {
                "finding: a HIP runtime blit kernel (__amd_rocclr_*); completed without running, so its data (memset, device-to-device copy, stream write) was not produced"
            }
        }
    }

    /// Whether the reason depends on runtime state (live signal handles)
    /// rather than on the 64 bytes alone; offline replay cannot reproduce it.
    pub fn is_runtime(self) -> bool {
        matches!(
            self,
            Reason::CompletionSignalUnknown
                | Reason::DependencySignalUnknown
                | Reason::RuntimeBlitKernelNotExecuted
                | Reason::GroupSegmentSizeExceedsLimit
                | Reason::UnknownKernelObject
                | Reason::WorkgroupSizeExceedsKernelMax
                | Reason::WorkgroupSizeDiffersFromRequired
                | Reason::GroupSegmentSizeBelowStatic
                | Reason::PrivateSegmentSizeBelowStatic
                | Reason::KernargAddressNull
                | Reason::KernelObjectWrongAgent
        )
    }

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
    pub const RUNTIME: ReasonSet = ReasonSet(
        (1 << Reason::CompletionSignalUnknown as u8)
            | (1 << Reason::DependencySignalUnknown as u8)
            | (1 << Reason::RuntimeBlitKernelNotExecuted as u8)
            | (1 << Reason::GroupSegmentSizeExceedsLimit as u8)
            | (1 << Reason::UnknownKernelObject as u8)
            | (1 << Reason::WorkgroupSizeExceedsKernelMax as u8)
            | (1 << Reason::WorkgroupSizeDiffersFromRequired as u8)
            | (1 << Reason::GroupSegmentSizeBelowStatic as u8)
            | (1 << Reason::PrivateSegmentSizeBelowStatic as u8)
            | (1 << Reason::KernargAddressNull as u8)
            | (1 << Reason::KernelObjectWrongAgent as u8),
    );

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
