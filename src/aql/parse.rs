//! Pure parser and validator for one 64-byte AQL packet.
//! (Interface fixed by the skeleton; the implementation lands with the parser work.)

use crate::abi::PacketType;

/// Largest workgroup (product of the three sizes) on every AMD target.
pub const MAX_WORKGROUP_SIZE: u32 = 1024;

/// Stable reason codes. The numeric value is stored in captures (as a bit of a
/// [`ReasonSet`]) and must never be reused; the string is the JSONL code.
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
}

/// Field-level decode of any 64 bytes, for reports; never fails.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DecodedPacket {
    pub packet_type: PacketType,
}

/// Parse and validate one packet.
pub fn parse_supported_packet(_bytes: &[u8; 64]) -> Result<ParsedPacket, ReasonSet> {
    Err(ReasonSet(0))
}
