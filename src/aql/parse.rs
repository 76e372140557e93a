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

impl DecodedPacket {
    /// Decode any 64 bytes at the pinned `hsa.h` offsets.
    pub fn decode(_bytes: &[u8; 64]) -> DecodedPacket {
        unimplemented!("skeleton")
    }
}

/// Parse and validate one packet.
pub fn parse_supported_packet(_bytes: &[u8; 64]) -> Result<ParsedPacket, ReasonSet> {
    Err(ReasonSet(0))
}

impl Reason {
    /// Every reason, in numeric order.
    pub const ALL: &'static [Reason] = &[];
    /// The stable snake_case code.
    pub fn code(self) -> &'static str {
        ""
    }
    /// Reason from its numeric value (as stored in captures).
    pub fn from_u8(_v: u8) -> Option<Reason> {
        None
    }
}

impl ReasonSet {
    pub fn insert(&mut self, r: Reason) {
        self.0 |= 1 << (r as u8);
    }
    pub fn contains(self, r: Reason) -> bool {
        self.0 & (1 << (r as u8)) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Reasons in numeric order (unknown bits are skipped).
    pub fn iter(self) -> impl Iterator<Item = Reason> {
        (0u8..64).filter(move |b| self.0 & (1 << b) != 0).filter_map(Reason::from_u8)
    }
}
