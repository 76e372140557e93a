//! The pinned HSA ABI: `#[repr(C)]` mirrors of the structures and constants that
//! SoftGPU reads from or writes into a host program's memory.
//!
//! Source of truth: the headers of ROCR-Runtime as shipped by Debian
//! `libhsa-runtime-dev` 5.2.3 (`hsa.h`, `amd_hsa_queue.h`, `amd_hsa_signal.h`),
//! pinned by sha256 in `hsa-headers/PINNED`. Every type here is checked twice:
//! by the `const` asserts at the bottom of this file (at compile time) and by
//! `tests/abi_layout.rs`, which compiles a C probe against the installed headers
//! and compares every `sizeof`/`offsetof` by field name.
//!
//! C enums that arrive from foreign memory are newtypes over their integer, never
//! Rust enums, so an unknown value stays representable instead of being undefined
//! behaviour.
//!
//! This module contains no `unsafe`: it only describes layouts.

use core::mem::{offset_of, size_of};

/// `hsa_status_t`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct HsaStatus(pub u32);

impl HsaStatus {
    pub const SUCCESS: Self = Self(0x0);
    pub const INFO_BREAK: Self = Self(0x1);
    pub const ERROR: Self = Self(0x1000);
    pub const ERROR_INVALID_ARGUMENT: Self = Self(0x1001);
    pub const ERROR_INVALID_QUEUE_CREATION: Self = Self(0x1002);
    pub const ERROR_INVALID_ALLOCATION: Self = Self(0x1003);
    pub const ERROR_INVALID_AGENT: Self = Self(0x1004);
    pub const ERROR_INVALID_REGION: Self = Self(0x1005);
    pub const ERROR_INVALID_SIGNAL: Self = Self(0x1006);
    pub const ERROR_INVALID_QUEUE: Self = Self(0x1007);
    pub const ERROR_OUT_OF_RESOURCES: Self = Self(0x1008);
    pub const ERROR_INVALID_PACKET_FORMAT: Self = Self(0x1009);
    pub const ERROR_RESOURCE_FREE: Self = Self(0x100A);
    pub const ERROR_NOT_INITIALIZED: Self = Self(0x100B);
    pub const ERROR_REFCOUNT_OVERFLOW: Self = Self(0x100C);
    pub const ERROR_INCOMPATIBLE_ARGUMENTS: Self = Self(0x100D);
    pub const ERROR_INVALID_INDEX: Self = Self(0x100E);
    pub const ERROR_INVALID_ISA: Self = Self(0x100F);
    pub const ERROR_INVALID_CODE_OBJECT: Self = Self(0x1010);
    pub const ERROR_INVALID_EXECUTABLE: Self = Self(0x1011);
    pub const ERROR_FROZEN_EXECUTABLE: Self = Self(0x1012);
    pub const ERROR_INVALID_SYMBOL_NAME: Self = Self(0x1013);
    pub const ERROR_VARIABLE_ALREADY_DEFINED: Self = Self(0x1014);
    pub const ERROR_VARIABLE_UNDEFINED: Self = Self(0x1015);
    pub const ERROR_EXCEPTION: Self = Self(0x1016);
    pub const ERROR_INVALID_ISA_NAME: Self = Self(0x1017);
    pub const ERROR_INVALID_CODE_SYMBOL: Self = Self(0x1018);
    pub const ERROR_INVALID_EXECUTABLE_SYMBOL: Self = Self(0x1019);
    pub const ERROR_INVALID_FILE: Self = Self(0x1020);
    pub const ERROR_INVALID_CODE_OBJECT_READER: Self = Self(0x1021);
    pub const ERROR_INVALID_CACHE: Self = Self(0x1022);
    pub const ERROR_INVALID_WAVEFRONT: Self = Self(0x1023);
    pub const ERROR_INVALID_SIGNAL_GROUP: Self = Self(0x1024);
    pub const ERROR_INVALID_RUNTIME_STATE: Self = Self(0x1025);
    pub const ERROR_FATAL: Self = Self(0x1026);
}

/// `hsa_packet_type_t` (the low 8 bits of an AQL header).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PacketType(pub u8);

impl PacketType {
    pub const VENDOR_SPECIFIC: Self = Self(0);
    pub const INVALID: Self = Self(1);
    pub const KERNEL_DISPATCH: Self = Self(2);
    pub const BARRIER_AND: Self = Self(3);
    pub const AGENT_DISPATCH: Self = Self(4);
    pub const BARRIER_OR: Self = Self(5);
}

/// `hsa_packet_header_t`: bit offsets of the header fields.
pub mod header {
    pub const TYPE: u32 = 0;
    pub const BARRIER: u32 = 8;
    pub const SCACQUIRE_FENCE_SCOPE: u32 = 9;
    pub const SCRELEASE_FENCE_SCOPE: u32 = 11;
    /// `hsa_packet_header_width_t`.
    pub const WIDTH_TYPE: u32 = 8;
    pub const WIDTH_BARRIER: u32 = 1;
    pub const WIDTH_SCACQUIRE_FENCE_SCOPE: u32 = 2;
    pub const WIDTH_SCRELEASE_FENCE_SCOPE: u32 = 2;
}

/// `hsa_fence_scope_t`. Value 3 is representable and invalid.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FenceScope(pub u8);

impl FenceScope {
    pub const NONE: Self = Self(0);
    pub const AGENT: Self = Self(1);
    pub const SYSTEM: Self = Self(2);
}

/// `hsa_kernel_dispatch_packet_setup_t`: bit offset and width of `dimensions`.
pub mod setup {
    pub const DIMENSIONS: u32 = 0;
    pub const WIDTH_DIMENSIONS: u32 = 2;
}

/// `hsa_queue_type32_t`.
pub mod queue_type {
    pub const MULTI: u32 = 0;
    pub const SINGLE: u32 = 1;
    pub const COOPERATIVE: u32 = 2;
}

/// `hsa_queue_feature_t`.
pub mod queue_feature {
    pub const KERNEL_DISPATCH: u32 = 1;
    pub const AGENT_DISPATCH: u32 = 2;
}

/// `hsa_signal_condition_t`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SignalCondition(pub u32);

impl SignalCondition {
    pub const EQ: Self = Self(0);
    pub const NE: Self = Self(1);
    pub const LT: Self = Self(2);
    pub const GTE: Self = Self(3);
}

/// `hsa_wait_state_t`.
pub mod wait_state {
    pub const BLOCKED: u32 = 0;
    pub const ACTIVE: u32 = 1;
}

/// `hsa_signal_t`: an opaque 64-bit handle. In SoftGPU's virtual runtime it is the
/// address of an [`AmdSignal`].
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct HsaSignal {
    pub handle: u64,
}

/// `hsa_agent_t`.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct HsaAgent {
    pub handle: u64,
}

/// `hsa_kernel_dispatch_packet_t` (64 bytes, large model).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct KernelDispatchPacket {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    /// `void*` in C; carried as an integer because it is never dereferenced here.
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: HsaSignal,
}

/// `hsa_agent_dispatch_packet_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AgentDispatchPacket {
    pub header: u16,
    pub type_: u16,
    pub reserved0: u32,
    /// `void*` in C.
    pub return_address: u64,
    pub arg: [u64; 4],
    pub reserved2: u64,
    pub completion_signal: HsaSignal,
}

/// `hsa_barrier_and_packet_t` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct BarrierAndPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [HsaSignal; 5],
    pub reserved2: u64,
    pub completion_signal: HsaSignal,
}

/// `hsa_barrier_or_packet_t` (64 bytes); same layout as the AND packet.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct BarrierOrPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [HsaSignal; 5],
    pub reserved2: u64,
    pub completion_signal: HsaSignal,
}

/// `hsa_amd_packet_type_t`: the `AmdFormat` byte of an AMD vendor-specific packet.
pub mod amd_packet_type {
    pub const BARRIER_VALUE: u8 = 2;
}

/// `hsa_amd_barrier_value_packet_t` (hsa_ext_amd.h; 64 bytes): an AMD
/// vendor-specific packet (header type VENDOR_SPECIFIC, `AmdFormat` 2) that
/// holds its queue until `(signal & mask) cond value`. HIP 6.x uses it.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AmdBarrierValuePacket {
    /// `hsa_amd_vendor_packet_header_t`: header, AmdFormat, reserved.
    pub header: u16,
    pub amd_format: u8,
    pub reserved: u8,
    pub reserved0: u32,
    pub signal: HsaSignal,
    pub value: i64,
    pub mask: i64,
    /// `hsa_signal_condition32_t`.
    pub cond: u32,
    pub reserved1: u32,
    pub reserved2: u64,
    pub reserved3: u64,
    pub completion_signal: HsaSignal,
}

/// `hsa_amd_vendor_packet_header_t` (the first 4 bytes of an AMD vendor packet).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AmdVendorHeader {
    pub header: u16,
    pub amd_format: u8,
    pub reserved: u8,
}

/// Byte offsets of packet fields inside the 64 bytes of an AQL packet, from
/// the `#[repr(C)]` mirrors above (so from the pinned headers). Everything that
/// reads a field out of raw packet bytes (the parser, the processor, the mock
/// model, the capture writer) takes its offset from here.
pub mod packet_offset {
    use super::{AmdBarrierValuePacket, BarrierAndPacket, KernelDispatchPacket};
    use core::mem::offset_of;

    /// The 16-bit header, in every packet type.
    pub const HEADER: usize = offset_of!(KernelDispatchPacket, header);
    /// Dispatch `setup` (dimensions in bits 0..2).
    pub const SETUP: usize = offset_of!(KernelDispatchPacket, setup);
    /// Dispatch `workgroup_size_x` (then y and z, 2 bytes each).
    pub const WORKGROUP_SIZE: usize = offset_of!(KernelDispatchPacket, workgroup_size_x);
    pub const RESERVED0: usize = offset_of!(KernelDispatchPacket, reserved0);
    /// Dispatch `grid_size_x` (then y and z, 4 bytes each).
    pub const GRID_SIZE: usize = offset_of!(KernelDispatchPacket, grid_size_x);
    pub const PRIVATE_SEGMENT_SIZE: usize = offset_of!(KernelDispatchPacket, private_segment_size);
    pub const GROUP_SEGMENT_SIZE: usize = offset_of!(KernelDispatchPacket, group_segment_size);
    pub const KERNEL_OBJECT: usize = offset_of!(KernelDispatchPacket, kernel_object);
    pub const KERNARG_ADDRESS: usize = offset_of!(KernelDispatchPacket, kernarg_address);
    pub const RESERVED2: usize = offset_of!(KernelDispatchPacket, reserved2);
    /// The completion signal handle, at the same place in every packet type.
    pub const COMPLETION_SIGNAL: usize = offset_of!(KernelDispatchPacket, completion_signal);
    /// Barrier-AND/OR `dep_signal[0]` (five handles, 8 bytes each).
    pub const DEP_SIGNAL: usize = offset_of!(BarrierAndPacket, dep_signal);
    /// The `AmdFormat` byte of an AMD vendor-specific packet.
    pub const AMD_FORMAT: usize = offset_of!(AmdBarrierValuePacket, amd_format);
    /// AMD barrier-value `signal`.
    pub const BARRIER_VALUE_SIGNAL: usize = offset_of!(AmdBarrierValuePacket, signal);
}

/// `hsa_queue_t`, 64-bit large model.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HsaQueue {
    /// `hsa_queue_type32_t`.
    pub type_: u32,
    /// `hsa_queue_feature_t` bit set.
    pub features: u32,
    /// `void*` ring base in C.
    pub base_address: u64,
    pub doorbell_signal: HsaSignal,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// `amd_queue_t` (256 bytes, 64-byte aligned). HIP passes the `hsa_queue_t*` to
/// kernels and some tools read the AMD fields, so the `hsa_queue_t` must sit at
/// offset 0 of one of these.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct AmdQueue {
    pub hsa_queue: HsaQueue,
    pub reserved1: [u32; 4],
    pub write_dispatch_id: u64,
    pub group_segment_aperture_base_hi: u32,
    pub private_segment_aperture_base_hi: u32,
    pub max_cu_id: u32,
    pub max_wave_id: u32,
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    pub legacy_doorbell_lock: u32,
    pub reserved2: [u32; 9],
    pub read_dispatch_id: u64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    pub compute_tmpring_size: u32,
    pub scratch_resource_descriptor: [u32; 4],
    pub scratch_backing_memory_location: u64,
    pub scratch_backing_memory_byte_size: u64,
    pub scratch_wave64_lane_byte_size: u32,
    /// `amd_queue_properties32_t`.
    pub queue_properties: u32,
    pub reserved3: [u32; 2],
    pub queue_inactive_signal: HsaSignal,
    pub reserved4: [u32; 14],
}

/// `amd_signal_kind_t` values (`amd_signal_kind64_t` in the struct).
pub mod amd_signal_kind {
    pub const INVALID: i64 = 0;
    pub const USER: i64 = 1;
    pub const DOORBELL: i64 = -1;
    pub const LEGACY_DOORBELL: i64 = -2;
}

/// `amd_signal_t` (64 bytes, 64-byte aligned). The value lives at offset 8, which
/// device-side code (for example the printf hostcall) relies on.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct AmdSignal {
    pub kind: i64,
    /// Union of `value` and the hardware doorbell pointers.
    pub value: i64,
    pub event_mailbox_ptr: u64,
    pub event_id: u32,
    pub reserved1: u32,
    pub start_ts: u64,
    pub end_ts: u64,
    /// Union of `queue_ptr` and `reserved2`.
    pub queue_ptr: u64,
    pub reserved3: [u32; 2],
}

// ---------------------------------------------------------------- attribute ids

/// Which headers define a named constant, so `tests/abi_layout.rs` knows where
/// to check it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Header {
    /// The pinned headers (`libhsa-runtime-dev` 5.2.3); also in ROCr 6.4.3's.
    Pinned,
    /// Only in ROCr 6.4.3's headers (Debian sid `libhsa-runtime-dev` 6.4.3);
    /// also in ROCr 7.2.4's.
    Rocr64,
    /// Only in ROCr 7.2.4's headers (Debian experimental `libhsa-runtime-dev`
    /// 7.2.4, pinned by `hsa-headers/PINNED-rocm7`).
    Rocr7,
    /// In no public header: ROCr's own source (named where it is used).
    RocrInternal,
}

/// Defines an attribute-id newtype with named constants and a `NAMED` table
/// (C enumerator name, value, header) for the C probe.
macro_rules! info_ids {
    ($(#[$m:meta])* $name:ident {
        $( $(#[$cm:meta])* $konst:ident = $val:expr, $cname:literal, $hdr:ident; )*
    }) => {
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub struct $name(pub u32);

        impl $name {
            $( $(#[$cm])* pub const $konst: Self = Self($val); )*

            /// Every named value: its C enumerator name, the value, and the
            /// headers that define it.
            pub const NAMED: &'static [(&'static str, Self, Header)] =
                &[ $( ($cname, Self::$konst, Header::$hdr) ),* ];

            /// The C enumerator name of a value, if it has one.
            pub fn c_name(self) -> Option<&'static str> {
                Self::NAMED.iter().find(|(_, v, _)| *v == self).map(|(n, _, _)| *n)
            }
        }
    };
}

info_ids! {
    /// `hsa_system_info_t` (with the AMD additions in the same enum).
    SystemInfo {
        VERSION_MAJOR = 0, "HSA_SYSTEM_INFO_VERSION_MAJOR", Pinned;
        VERSION_MINOR = 1, "HSA_SYSTEM_INFO_VERSION_MINOR", Pinned;
        TIMESTAMP = 2, "HSA_SYSTEM_INFO_TIMESTAMP", Pinned;
        TIMESTAMP_FREQUENCY = 3, "HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY", Pinned;
        SIGNAL_MAX_WAIT = 4, "HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT", Pinned;
        ENDIANNESS = 5, "HSA_SYSTEM_INFO_ENDIANNESS", Pinned;
        MACHINE_MODEL = 6, "HSA_SYSTEM_INFO_MACHINE_MODEL", Pinned;
        EXTENSIONS = 7, "HSA_SYSTEM_INFO_EXTENSIONS", Pinned;
        AMD_BUILD_VERSION = 0x200, "HSA_AMD_SYSTEM_INFO_BUILD_VERSION", Pinned;
        AMD_SVM_SUPPORTED = 0x201, "HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED", Pinned;
        AMD_SVM_ACCESSIBLE_BY_DEFAULT = 0x202, "HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT", Pinned;
        AMD_MWAITX_ENABLED = 0x203, "HSA_AMD_SYSTEM_INFO_MWAITX_ENABLED", Rocr64;
        AMD_DMABUF_SUPPORTED = 0x204, "HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED", Rocr64;
        AMD_VIRTUAL_MEM_API_SUPPORTED = 0x205, "HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED", Rocr64;
        AMD_XNACK_ENABLED = 0x206, "HSA_AMD_SYSTEM_INFO_XNACK_ENABLED", Rocr64;
        AMD_EXT_VERSION_MAJOR = 0x207, "HSA_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR", Rocr64;
        AMD_EXT_VERSION_MINOR = 0x208, "HSA_AMD_SYSTEM_INFO_EXT_VERSION_MINOR", Rocr64;
    }
}

info_ids! {
    /// `hsa_agent_info_t`, `hsa_ext_agent_info_t` (image limits) and
    /// `hsa_amd_agent_info_t`: one id space, as `hsa_agent_get_info` takes them.
    AgentInfo {
        NAME = 0, "HSA_AGENT_INFO_NAME", Pinned;
        VENDOR_NAME = 1, "HSA_AGENT_INFO_VENDOR_NAME", Pinned;
        FEATURE = 2, "HSA_AGENT_INFO_FEATURE", Pinned;
        MACHINE_MODEL = 3, "HSA_AGENT_INFO_MACHINE_MODEL", Pinned;
        PROFILE = 4, "HSA_AGENT_INFO_PROFILE", Pinned;
        DEFAULT_FLOAT_ROUNDING_MODE = 5, "HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE", Pinned;
        WAVEFRONT_SIZE = 6, "HSA_AGENT_INFO_WAVEFRONT_SIZE", Pinned;
        WORKGROUP_MAX_DIM = 7, "HSA_AGENT_INFO_WORKGROUP_MAX_DIM", Pinned;
        WORKGROUP_MAX_SIZE = 8, "HSA_AGENT_INFO_WORKGROUP_MAX_SIZE", Pinned;
        GRID_MAX_DIM = 9, "HSA_AGENT_INFO_GRID_MAX_DIM", Pinned;
        GRID_MAX_SIZE = 10, "HSA_AGENT_INFO_GRID_MAX_SIZE", Pinned;
        FBARRIER_MAX_SIZE = 11, "HSA_AGENT_INFO_FBARRIER_MAX_SIZE", Pinned;
        QUEUES_MAX = 12, "HSA_AGENT_INFO_QUEUES_MAX", Pinned;
        QUEUE_MIN_SIZE = 13, "HSA_AGENT_INFO_QUEUE_MIN_SIZE", Pinned;
        QUEUE_MAX_SIZE = 14, "HSA_AGENT_INFO_QUEUE_MAX_SIZE", Pinned;
        QUEUE_TYPE = 15, "HSA_AGENT_INFO_QUEUE_TYPE", Pinned;
        NODE = 16, "HSA_AGENT_INFO_NODE", Pinned;
        DEVICE = 17, "HSA_AGENT_INFO_DEVICE", Pinned;
        CACHE_SIZE = 18, "HSA_AGENT_INFO_CACHE_SIZE", Pinned;
        ISA = 19, "HSA_AGENT_INFO_ISA", Pinned;
        EXTENSIONS = 20, "HSA_AGENT_INFO_EXTENSIONS", Pinned;
        VERSION_MAJOR = 21, "HSA_AGENT_INFO_VERSION_MAJOR", Pinned;
        VERSION_MINOR = 22, "HSA_AGENT_INFO_VERSION_MINOR", Pinned;
        BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES = 23, "HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES", Pinned;
        FAST_F16_OPERATION = 24, "HSA_AGENT_INFO_FAST_F16_OPERATION", Pinned;
        IMAGE_1D_MAX_ELEMENTS = 0x3000, "HSA_EXT_AGENT_INFO_IMAGE_1D_MAX_ELEMENTS", Pinned;
        IMAGE_1DA_MAX_ELEMENTS = 0x3001, "HSA_EXT_AGENT_INFO_IMAGE_1DA_MAX_ELEMENTS", Pinned;
        IMAGE_1DB_MAX_ELEMENTS = 0x3002, "HSA_EXT_AGENT_INFO_IMAGE_1DB_MAX_ELEMENTS", Pinned;
        IMAGE_2D_MAX_ELEMENTS = 0x3003, "HSA_EXT_AGENT_INFO_IMAGE_2D_MAX_ELEMENTS", Pinned;
        IMAGE_2DA_MAX_ELEMENTS = 0x3004, "HSA_EXT_AGENT_INFO_IMAGE_2DA_MAX_ELEMENTS", Pinned;
        IMAGE_2DDEPTH_MAX_ELEMENTS = 0x3005, "HSA_EXT_AGENT_INFO_IMAGE_2DDEPTH_MAX_ELEMENTS", Pinned;
        IMAGE_2DADEPTH_MAX_ELEMENTS = 0x3006, "HSA_EXT_AGENT_INFO_IMAGE_2DADEPTH_MAX_ELEMENTS", Pinned;
        IMAGE_3D_MAX_ELEMENTS = 0x3007, "HSA_EXT_AGENT_INFO_IMAGE_3D_MAX_ELEMENTS", Pinned;
        IMAGE_ARRAY_MAX_LAYERS = 0x3008, "HSA_EXT_AGENT_INFO_IMAGE_ARRAY_MAX_LAYERS", Pinned;
        MAX_IMAGE_RD_HANDLES = 0x3009, "HSA_EXT_AGENT_INFO_MAX_IMAGE_RD_HANDLES", Pinned;
        MAX_IMAGE_RORW_HANDLES = 0x300A, "HSA_EXT_AGENT_INFO_MAX_IMAGE_RORW_HANDLES", Pinned;
        MAX_SAMPLER_HANDLERS = 0x300B, "HSA_EXT_AGENT_INFO_MAX_SAMPLER_HANDLERS", Pinned;
        /// Declared by the image extension header; neither ROCr 5.2.3 nor 6.4
        /// answers it (both return INVALID_ARGUMENT), and neither does SoftGPU.
        IMAGE_LINEAR_ROW_PITCH_ALIGNMENT = 0x300C, "HSA_EXT_AGENT_INFO_IMAGE_LINEAR_ROW_PITCH_ALIGNMENT", Pinned;
        AMD_CHIP_ID = 0xA000, "HSA_AMD_AGENT_INFO_CHIP_ID", Pinned;
        AMD_CACHELINE_SIZE = 0xA001, "HSA_AMD_AGENT_INFO_CACHELINE_SIZE", Pinned;
        AMD_COMPUTE_UNIT_COUNT = 0xA002, "HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT", Pinned;
        AMD_MAX_CLOCK_FREQUENCY = 0xA003, "HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY", Pinned;
        AMD_DRIVER_NODE_ID = 0xA004, "HSA_AMD_AGENT_INFO_DRIVER_NODE_ID", Pinned;
        AMD_MAX_ADDRESS_WATCH_POINTS = 0xA005, "HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS", Pinned;
        AMD_BDFID = 0xA006, "HSA_AMD_AGENT_INFO_BDFID", Pinned;
        AMD_MEMORY_WIDTH = 0xA007, "HSA_AMD_AGENT_INFO_MEMORY_WIDTH", Pinned;
        AMD_MEMORY_MAX_FREQUENCY = 0xA008, "HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY", Pinned;
        AMD_PRODUCT_NAME = 0xA009, "HSA_AMD_AGENT_INFO_PRODUCT_NAME", Pinned;
        AMD_MAX_WAVES_PER_CU = 0xA00A, "HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU", Pinned;
        AMD_NUM_SIMDS_PER_CU = 0xA00B, "HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU", Pinned;
        AMD_NUM_SHADER_ENGINES = 0xA00C, "HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES", Pinned;
        AMD_NUM_SHADER_ARRAYS_PER_SE = 0xA00D, "HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE", Pinned;
        AMD_HDP_FLUSH = 0xA00E, "HSA_AMD_AGENT_INFO_HDP_FLUSH", Pinned;
        AMD_DOMAIN = 0xA00F, "HSA_AMD_AGENT_INFO_DOMAIN", Pinned;
        AMD_COOPERATIVE_QUEUES = 0xA010, "HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES", Pinned;
        AMD_UUID = 0xA011, "HSA_AMD_AGENT_INFO_UUID", Pinned;
        AMD_ASIC_REVISION = 0xA012, "HSA_AMD_AGENT_INFO_ASIC_REVISION", Pinned;
        AMD_SVM_DIRECT_HOST_ACCESS = 0xA013, "HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS", Pinned;
        AMD_COOPERATIVE_COMPUTE_UNIT_COUNT = 0xA014, "HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT", Pinned;
        AMD_MEMORY_AVAIL = 0xA015, "HSA_AMD_AGENT_INFO_MEMORY_AVAIL", Rocr64;
        AMD_TIMESTAMP_FREQUENCY = 0xA016, "HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY", Rocr64;
        AMD_ASIC_FAMILY_ID = 0xA107, "HSA_AMD_AGENT_INFO_ASIC_FAMILY_ID", Rocr64;
        AMD_UCODE_VERSION = 0xA108, "HSA_AMD_AGENT_INFO_UCODE_VERSION", Rocr64;
        AMD_SDMA_UCODE_VERSION = 0xA109, "HSA_AMD_AGENT_INFO_SDMA_UCODE_VERSION", Rocr64;
        AMD_NUM_SDMA_ENG = 0xA10A, "HSA_AMD_AGENT_INFO_NUM_SDMA_ENG", Rocr64;
        AMD_NUM_SDMA_XGMI_ENG = 0xA10B, "HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG", Rocr64;
        AMD_IOMMU_SUPPORT = 0xA110, "HSA_AMD_AGENT_INFO_IOMMU_SUPPORT", Rocr64;
        AMD_NUM_XCC = 0xA111, "HSA_AMD_AGENT_INFO_NUM_XCC", Rocr64;
        AMD_DRIVER_UID = 0xA112, "HSA_AMD_AGENT_INFO_DRIVER_UID", Rocr64;
        AMD_NEAREST_CPU = 0xA113, "HSA_AMD_AGENT_INFO_NEAREST_CPU", Rocr64;
        AMD_MEMORY_PROPERTIES = 0xA114, "HSA_AMD_AGENT_INFO_MEMORY_PROPERTIES", Rocr64;
        AMD_AQL_EXTENSIONS = 0xA115, "HSA_AMD_AGENT_INFO_AQL_EXTENSIONS", Rocr64;
        AMD_SCRATCH_LIMIT_MAX = 0xA116, "HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_MAX", Rocr64;
        AMD_SCRATCH_LIMIT_CURRENT = 0xA117, "HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_CURRENT", Rocr64;
        AMD_CLOCK_COUNTERS = 0xA118, "HSA_AMD_AGENT_INFO_CLOCK_COUNTERS", Rocr7;
    }
}

info_ids! {
    /// `hsa_amd_memory_pool_info_t`.
    PoolInfo {
        SEGMENT = 0, "HSA_AMD_MEMORY_POOL_INFO_SEGMENT", Pinned;
        GLOBAL_FLAGS = 1, "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS", Pinned;
        SIZE = 2, "HSA_AMD_MEMORY_POOL_INFO_SIZE", Pinned;
        RUNTIME_ALLOC_ALLOWED = 5, "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED", Pinned;
        RUNTIME_ALLOC_GRANULE = 6, "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE", Pinned;
        RUNTIME_ALLOC_ALIGNMENT = 7, "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT", Pinned;
        ACCESSIBLE_BY_ALL = 15, "HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL", Pinned;
        ALLOC_MAX_SIZE = 16, "HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE", Pinned;
        LOCATION = 17, "HSA_AMD_MEMORY_POOL_INFO_LOCATION", Rocr64;
        RUNTIME_ALLOC_REC_GRANULE = 18, "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE", Rocr64;
    }
}

info_ids! {
    /// `hsa_amd_agent_memory_pool_info_t`.
    AgentPoolInfo {
        ACCESS = 0, "HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS", Pinned;
        NUM_LINK_HOPS = 1, "HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS", Pinned;
        LINK_INFO = 2, "HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO", Pinned;
    }
}

info_ids! {
    /// `hsa_region_info_t` and `hsa_amd_region_info_t`.
    RegionInfo {
        SEGMENT = 0, "HSA_REGION_INFO_SEGMENT", Pinned;
        GLOBAL_FLAGS = 1, "HSA_REGION_INFO_GLOBAL_FLAGS", Pinned;
        SIZE = 2, "HSA_REGION_INFO_SIZE", Pinned;
        ALLOC_MAX_SIZE = 4, "HSA_REGION_INFO_ALLOC_MAX_SIZE", Pinned;
        RUNTIME_ALLOC_ALLOWED = 5, "HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED", Pinned;
        RUNTIME_ALLOC_GRANULE = 6, "HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE", Pinned;
        RUNTIME_ALLOC_ALIGNMENT = 7, "HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT", Pinned;
        /// Declared by hsa.h; ROCr (5.2.3 and 6.4) does not answer it.
        ALLOC_MAX_PRIVATE_WORKGROUP_SIZE = 8, "HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE", Pinned;
        AMD_HOST_ACCESSIBLE = 0xA000, "HSA_AMD_REGION_INFO_HOST_ACCESSIBLE", Pinned;
        AMD_BASE = 0xA001, "HSA_AMD_REGION_INFO_BASE", Pinned;
        AMD_BUS_WIDTH = 0xA002, "HSA_AMD_REGION_INFO_BUS_WIDTH", Pinned;
        AMD_MAX_CLOCK_FREQUENCY = 0xA003, "HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY", Pinned;
    }
}

info_ids! {
    /// `hsa_isa_info_t`.
    IsaInfo {
        NAME_LENGTH = 0, "HSA_ISA_INFO_NAME_LENGTH", Pinned;
        NAME = 1, "HSA_ISA_INFO_NAME", Pinned;
        CALL_CONVENTION_COUNT = 2, "HSA_ISA_INFO_CALL_CONVENTION_COUNT", Pinned;
        CALL_CONVENTION_INFO_WAVEFRONT_SIZE = 3, "HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE", Pinned;
        CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT = 4, "HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT", Pinned;
        MACHINE_MODELS = 5, "HSA_ISA_INFO_MACHINE_MODELS", Pinned;
        PROFILES = 6, "HSA_ISA_INFO_PROFILES", Pinned;
        DEFAULT_FLOAT_ROUNDING_MODES = 7, "HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES", Pinned;
        BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES = 8, "HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES", Pinned;
        FAST_F16_OPERATION = 9, "HSA_ISA_INFO_FAST_F16_OPERATION", Pinned;
        WORKGROUP_MAX_DIM = 12, "HSA_ISA_INFO_WORKGROUP_MAX_DIM", Pinned;
        WORKGROUP_MAX_SIZE = 13, "HSA_ISA_INFO_WORKGROUP_MAX_SIZE", Pinned;
        GRID_MAX_DIM = 14, "HSA_ISA_INFO_GRID_MAX_DIM", Pinned;
        GRID_MAX_SIZE = 16, "HSA_ISA_INFO_GRID_MAX_SIZE", Pinned;
        FBARRIER_MAX_SIZE = 17, "HSA_ISA_INFO_FBARRIER_MAX_SIZE", Pinned;
    }
}

info_ids! {
    /// `hsa_cache_info_t`.
    CacheInfo {
        NAME_LENGTH = 0, "HSA_CACHE_INFO_NAME_LENGTH", Pinned;
        NAME = 1, "HSA_CACHE_INFO_NAME", Pinned;
        LEVEL = 2, "HSA_CACHE_INFO_LEVEL", Pinned;
        SIZE = 3, "HSA_CACHE_INFO_SIZE", Pinned;
    }
}

info_ids! {
    /// `hsa_wavefront_info_t`.
    WavefrontInfo {
        SIZE = 0, "HSA_WAVEFRONT_INFO_SIZE", Pinned;
    }
}

info_ids! {
    /// `hsa_executable_info_t`.
    ExecutableInfo {
        PROFILE = 1, "HSA_EXECUTABLE_INFO_PROFILE", Pinned;
        STATE = 2, "HSA_EXECUTABLE_INFO_STATE", Pinned;
        DEFAULT_FLOAT_ROUNDING_MODE = 3, "HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE", Pinned;
    }
}

info_ids! {
    /// `hsa_executable_symbol_info_t`, plus the ids ROCr's loader also accepts
    /// there (`hsa_code_symbol_info_t`'s wavefront size, and two AMD-internal ids).
    SymbolInfo {
        TYPE = 0, "HSA_EXECUTABLE_SYMBOL_INFO_TYPE", Pinned;
        NAME_LENGTH = 1, "HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH", Pinned;
        NAME = 2, "HSA_EXECUTABLE_SYMBOL_INFO_NAME", Pinned;
        MODULE_NAME_LENGTH = 3, "HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH", Pinned;
        MODULE_NAME = 4, "HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME", Pinned;
        LINKAGE = 5, "HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE", Pinned;
        VARIABLE_ALLOCATION = 6, "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION", Pinned;
        VARIABLE_SEGMENT = 7, "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT", Pinned;
        VARIABLE_ALIGNMENT = 8, "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT", Pinned;
        VARIABLE_SIZE = 9, "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE", Pinned;
        VARIABLE_IS_CONST = 10, "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST", Pinned;
        KERNEL_KERNARG_SEGMENT_SIZE = 11, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE", Pinned;
        KERNEL_KERNARG_SEGMENT_ALIGNMENT = 12, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT", Pinned;
        KERNEL_GROUP_SEGMENT_SIZE = 13, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE", Pinned;
        KERNEL_PRIVATE_SEGMENT_SIZE = 14, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE", Pinned;
        KERNEL_DYNAMIC_CALLSTACK = 15, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK", Pinned;
        INDIRECT_FUNCTION_CALL_CONVENTION = 16, "HSA_EXECUTABLE_SYMBOL_INFO_INDIRECT_FUNCTION_CALL_CONVENTION", Pinned;
        IS_DEFINITION = 17, "HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION", Pinned;
        KERNEL_CALL_CONVENTION = 18, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION", Pinned;
        /// `HSA_CODE_SYMBOL_INFO_KERNEL_WAVEFRONT_SIZE`: ROCr 6.x's loader
        /// answers it through `hsa_executable_symbol_get_info` too.
        KERNEL_WAVEFRONT_SIZE = 19, "HSA_CODE_SYMBOL_INFO_KERNEL_WAVEFRONT_SIZE", Rocr64;
        AGENT = 20, "HSA_EXECUTABLE_SYMBOL_INFO_AGENT", Pinned;
        VARIABLE_ADDRESS = 21, "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS", Pinned;
        KERNEL_OBJECT = 22, "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT", Pinned;
        INDIRECT_FUNCTION_OBJECT = 23, "HSA_EXECUTABLE_SYMBOL_INFO_INDIRECT_FUNCTION_OBJECT", Pinned;
        /// `HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_SIZE` (ROCr's
        /// `core/inc/amd_hsa_loader.hpp`, 5.2.3 and 6.4).
        EXT_KERNEL_OBJECT_SIZE = 100, "HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_SIZE", RocrInternal;
        /// `HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_ALIGN` (as above).
        EXT_KERNEL_OBJECT_ALIGN = 101, "HSA_EXT_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT_ALIGN", RocrInternal;
    }
}

/// `hsa_amd_segment_t` (`hsa_region_segment_t` uses the same numbers for these).
pub mod amd_segment {
    pub const GLOBAL: u32 = 0;
    pub const GROUP: u32 = 3;
}

/// `hsa_amd_memory_pool_global_flag_t` (`hsa_region_global_flag_t` uses the same numbers).
pub mod pool_flag {
    pub const KERNARG_INIT: u32 = 1;
    pub const FINE_GRAINED: u32 = 2;
    pub const COARSE_GRAINED: u32 = 4;
    /// ROCr 6.x only.
    pub const EXTENDED_SCOPE_FINE_GRAINED: u32 = 8;
}

/// `hsa_amd_memory_pool_access_t`.
pub mod pool_access {
    pub const NEVER_ALLOWED: u32 = 0;
    pub const ALLOWED_BY_DEFAULT: u32 = 1;
    pub const DISALLOWED_BY_DEFAULT: u32 = 2;
}

/// `hsa_amd_memory_pool_location_t` (ROCr 6.x only).
pub mod pool_location {
    pub const CPU: u32 = 0;
    pub const GPU: u32 = 1;
}

/// `hsa_amd_link_info_type_t`.
pub mod link_type {
    pub const PCIE: u32 = 2;
    pub const XGMI: u32 = 4;
}

/// `hsa_device_type_t`.
pub mod device_type {
    pub const CPU: u32 = 0;
    pub const GPU: u32 = 1;
}

/// `hsa_symbol_kind_t`.
pub mod symbol_kind {
    pub const VARIABLE: u32 = 0;
    pub const KERNEL: u32 = 1;
}

/// `hsa_profile_t`.
pub mod profile {
    pub const BASE: u32 = 0;
    pub const FULL: u32 = 1;
}

/// Value constants only ROCr 6.4.3's headers define; `tests/abi_layout.rs`
/// checks them against those headers.
pub const CONSTANTS_ROCR64: &[(&str, i64)] = &[
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED",
        pool_flag::EXTENDED_SCOPE_FINE_GRAINED as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_LOCATION_CPU",
        pool_location::CPU as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_LOCATION_GPU",
        pool_location::GPU as i64,
    ),
];

/// Every named attribute id of every info newtype, for the C probe:
/// (C name, value, headers).
pub fn info_constants() -> Vec<(&'static str, i64, Header)> {
    fn add<T: Copy>(
        v: &mut Vec<(&'static str, i64, Header)>,
        named: &'static [(&'static str, T, Header)],
        raw: impl Fn(T) -> u32,
    ) {
        v.extend(named.iter().map(|&(n, x, h)| (n, raw(x) as i64, h)));
    }
    let mut v = Vec::new();
    add(&mut v, SystemInfo::NAMED, |x| x.0);
    add(&mut v, AgentInfo::NAMED, |x| x.0);
    add(&mut v, PoolInfo::NAMED, |x| x.0);
    add(&mut v, AgentPoolInfo::NAMED, |x| x.0);
    add(&mut v, RegionInfo::NAMED, |x| x.0);
    add(&mut v, IsaInfo::NAMED, |x| x.0);
    add(&mut v, CacheInfo::NAMED, |x| x.0);
    add(&mut v, WavefrontInfo::NAMED, |x| x.0);
    add(&mut v, ExecutableInfo::NAMED, |x| x.0);
    add(&mut v, SymbolInfo::NAMED, |x| x.0);
    v
}

// ------------------------------------------------------------ structs the exports read and write

/// `hsa_amd_profiling_dispatch_time_t` (and `hsa_amd_profiling_async_copy_time_t`,
/// which has the same two fields).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchTime {
    pub start: u64,
    pub end: u64,
}

/// `hsa_pitched_ptr_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PitchedPtr {
    pub base: u64,
    pub pitch: usize,
    pub slice: usize,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `hsa_amd_pointer_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PointerInfo {
    pub size: u32,
    pub type_: u32,
    pub agent_base: u64,
    pub host_base: u64,
    pub size_in_bytes: usize,
    pub user_data: u64,
    pub agent_owner: HsaAgent,
    pub global_flags: u32,
}

/// `hsa_amd_memory_access_desc_t`: a ROCr 6.x type (HIP 6.4's vmem API), not
/// in the pinned 5.2.3 headers, so its rows are in [`LAYOUT_ROCR64`], which
/// the C probe checks against ROCr 6.4.3's headers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessDesc {
    pub permissions: u32,
    pub agent: HsaAgent,
}

/// `hsa_amd_ais_file_handle_t` (ROCr 7.x, the AIS file API): a union of a
/// pointer, an `int` file descriptor (Linux) and 8 bytes of padding, passed
/// by value. Eight bytes in one integer class, so it travels in one register
/// as this one-`u64` struct does; the descriptor is its low 32 bits.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AisFileHandle {
    pub raw: u64,
}

impl AisFileHandle {
    /// The Linux file descriptor the handle carries (the union's `fd`).
    pub fn fd(self) -> i32 {
        self.raw as u32 as i32
    }
}

// The sizes the exports rely on, at compile time; the C probe
// (`tests/abi_layout.rs`) checks every field of them against the headers.
const _: () = {
    use core::mem::{offset_of, size_of};
    assert!(size_of::<AccessDesc>() == 16 && offset_of!(AccessDesc, agent) == 8);
    assert!(size_of::<AisFileHandle>() == 8 && core::mem::align_of::<AisFileHandle>() == 8);
    assert!(size_of::<PointerInfo>() == 56);
    assert!(size_of::<PitchedPtr>() == 24 && size_of::<Dim3>() == 12);
    assert!(size_of::<DispatchTime>() == 16);
};

/// Size in bytes of every AQL packet.
pub const AQL_PACKET_SIZE: usize = 64;

/// One row of the layout table: a C type name, a field name (empty for the
/// `sizeof` row) and the Rust value. `tests/abi_layout.rs` compares each row with
/// the C probe's output.
pub type LayoutRow = (&'static str, &'static str, usize);

macro_rules! layout_table {
    ($(#[$doc:meta])* $table:ident: $( $cname:literal => $ty:ty { $( $cfield:literal : $field:ident ),* $(,)? } )*) => {
        $(#[$doc])*
        pub const $table: &[LayoutRow] = &[
            $(
                ($cname, "", size_of::<$ty>()),
                $( ($cname, $cfield, offset_of!($ty, $field)), )*
            )*
        ];
    };
}

layout_table! {
    /// Every `sizeof` and `offsetof` this crate relies on, keyed by C names.
    LAYOUT:
    "hsa_amd_profiling_dispatch_time_t" => DispatchTime { "start": start, "end": end }
    "hsa_amd_profiling_async_copy_time_t" => DispatchTime { "start": start, "end": end }
    "hsa_pitched_ptr_t" => PitchedPtr { "base": base, "pitch": pitch, "slice": slice }
    "hsa_dim3_t" => Dim3 { "x": x, "y": y, "z": z }
    "hsa_amd_pointer_info_t" => PointerInfo {
        "size": size, "type": type_, "agentBaseAddress": agent_base,
        "hostBaseAddress": host_base, "sizeInBytes": size_in_bytes, "userData": user_data,
        "agentOwner": agent_owner, "global_flags": global_flags,
    }
    "hsa_signal_t" => HsaSignal { "handle": handle }
    "hsa_agent_t" => HsaAgent { "handle": handle }
    "hsa_kernel_dispatch_packet_t" => KernelDispatchPacket {
        "header": header, "setup": setup,
        "workgroup_size_x": workgroup_size_x, "workgroup_size_y": workgroup_size_y,
        "workgroup_size_z": workgroup_size_z, "reserved0": reserved0,
        "grid_size_x": grid_size_x, "grid_size_y": grid_size_y, "grid_size_z": grid_size_z,
        "private_segment_size": private_segment_size, "group_segment_size": group_segment_size,
        "kernel_object": kernel_object, "kernarg_address": kernarg_address,
        "reserved2": reserved2, "completion_signal": completion_signal,
    }
    "hsa_agent_dispatch_packet_t" => AgentDispatchPacket {
        "header": header, "type": type_, "reserved0": reserved0,
        "return_address": return_address, "arg": arg, "reserved2": reserved2,
        "completion_signal": completion_signal,
    }
    "hsa_barrier_and_packet_t" => BarrierAndPacket {
        "header": header, "reserved0": reserved0, "reserved1": reserved1,
        "dep_signal": dep_signal, "reserved2": reserved2, "completion_signal": completion_signal,
    }
    "hsa_barrier_or_packet_t" => BarrierOrPacket {
        "header": header, "reserved0": reserved0, "reserved1": reserved1,
        "dep_signal": dep_signal, "reserved2": reserved2, "completion_signal": completion_signal,
    }
    "hsa_amd_barrier_value_packet_t" => AmdBarrierValuePacket {
        "header": header, "reserved0": reserved0, "signal": signal, "value": value,
        "mask": mask, "cond": cond, "reserved1": reserved1, "reserved2": reserved2,
        "reserved3": reserved3, "completion_signal": completion_signal,
    }
    "hsa_amd_vendor_packet_header_t" => AmdVendorHeader {
        "header": header, "AmdFormat": amd_format, "reserved": reserved,
    }
    "hsa_queue_t" => HsaQueue {
        "type": type_, "features": features, "base_address": base_address,
        "doorbell_signal": doorbell_signal, "size": size, "reserved1": reserved1, "id": id,
    }
    "amd_queue_t" => AmdQueue {
        "hsa_queue": hsa_queue, "reserved1": reserved1, "write_dispatch_id": write_dispatch_id,
        "group_segment_aperture_base_hi": group_segment_aperture_base_hi,
        "private_segment_aperture_base_hi": private_segment_aperture_base_hi,
        "max_cu_id": max_cu_id, "max_wave_id": max_wave_id,
        "max_legacy_doorbell_dispatch_id_plus_1": max_legacy_doorbell_dispatch_id_plus_1,
        "legacy_doorbell_lock": legacy_doorbell_lock, "reserved2": reserved2,
        "read_dispatch_id": read_dispatch_id,
        "read_dispatch_id_field_base_byte_offset": read_dispatch_id_field_base_byte_offset,
        "compute_tmpring_size": compute_tmpring_size,
        "scratch_resource_descriptor": scratch_resource_descriptor,
        "scratch_backing_memory_location": scratch_backing_memory_location,
        "scratch_backing_memory_byte_size": scratch_backing_memory_byte_size,
        "scratch_wave64_lane_byte_size": scratch_wave64_lane_byte_size,
        "queue_properties": queue_properties, "reserved3": reserved3,
        "queue_inactive_signal": queue_inactive_signal, "reserved4": reserved4,
    }
    "amd_signal_t" => AmdSignal {
        "kind": kind, "value": value, "event_mailbox_ptr": event_mailbox_ptr,
        "event_id": event_id, "reserved1": reserved1, "start_ts": start_ts, "end_ts": end_ts,
        "queue_ptr": queue_ptr, "reserved3": reserved3,
    }
}

layout_table! {
    /// The layouts of ROCr 6.x types (not in the pinned headers), checked by
    /// the C probe against ROCr 6.4.3's headers.
    LAYOUT_ROCR64:
    "hsa_amd_memory_access_desc_t" => AccessDesc { "permissions": permissions, "agent_handle": agent }
}

layout_table! {
    /// The layouts of ROCr 7.x types (in neither the pinned nor the 6.4.3
    /// headers), checked by the C probe against ROCr 7.2.4's headers.
    LAYOUT_ROCR7:
    "hsa_amd_ais_file_handle_t" => AisFileHandle { "fd": raw }
}

/// Constant values this crate relies on, keyed by their C enumerator names.
/// `tests/abi_layout.rs` prints each from C and compares.
pub const CONSTANTS: &[(&str, i64)] = &[
    (
        "HSA_PACKET_TYPE_VENDOR_SPECIFIC",
        PacketType::VENDOR_SPECIFIC.0 as i64,
    ),
    ("HSA_PACKET_TYPE_INVALID", PacketType::INVALID.0 as i64),
    (
        "HSA_PACKET_TYPE_KERNEL_DISPATCH",
        PacketType::KERNEL_DISPATCH.0 as i64,
    ),
    (
        "HSA_PACKET_TYPE_BARRIER_AND",
        PacketType::BARRIER_AND.0 as i64,
    ),
    (
        "HSA_PACKET_TYPE_AGENT_DISPATCH",
        PacketType::AGENT_DISPATCH.0 as i64,
    ),
    (
        "HSA_PACKET_TYPE_BARRIER_OR",
        PacketType::BARRIER_OR.0 as i64,
    ),
    ("HSA_PACKET_HEADER_TYPE", header::TYPE as i64),
    ("HSA_PACKET_HEADER_BARRIER", header::BARRIER as i64),
    (
        "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
        header::SCACQUIRE_FENCE_SCOPE as i64,
    ),
    (
        "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
        header::SCRELEASE_FENCE_SCOPE as i64,
    ),
    ("HSA_PACKET_HEADER_WIDTH_TYPE", header::WIDTH_TYPE as i64),
    (
        "HSA_PACKET_HEADER_WIDTH_BARRIER",
        header::WIDTH_BARRIER as i64,
    ),
    (
        "HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE",
        header::WIDTH_SCACQUIRE_FENCE_SCOPE as i64,
    ),
    (
        "HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE",
        header::WIDTH_SCRELEASE_FENCE_SCOPE as i64,
    ),
    (
        "HSA_AMD_PACKET_TYPE_BARRIER_VALUE",
        amd_packet_type::BARRIER_VALUE as i64,
    ),
    ("HSA_FENCE_SCOPE_NONE", FenceScope::NONE.0 as i64),
    ("HSA_FENCE_SCOPE_AGENT", FenceScope::AGENT.0 as i64),
    ("HSA_FENCE_SCOPE_SYSTEM", FenceScope::SYSTEM.0 as i64),
    (
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
        setup::DIMENSIONS as i64,
    ),
    (
        "HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS",
        setup::WIDTH_DIMENSIONS as i64,
    ),
    ("HSA_QUEUE_TYPE_MULTI", queue_type::MULTI as i64),
    ("HSA_QUEUE_TYPE_SINGLE", queue_type::SINGLE as i64),
    ("HSA_QUEUE_TYPE_COOPERATIVE", queue_type::COOPERATIVE as i64),
    (
        "HSA_QUEUE_FEATURE_KERNEL_DISPATCH",
        queue_feature::KERNEL_DISPATCH as i64,
    ),
    (
        "HSA_QUEUE_FEATURE_AGENT_DISPATCH",
        queue_feature::AGENT_DISPATCH as i64,
    ),
    ("HSA_SIGNAL_CONDITION_EQ", SignalCondition::EQ.0 as i64),
    ("HSA_SIGNAL_CONDITION_NE", SignalCondition::NE.0 as i64),
    ("HSA_SIGNAL_CONDITION_LT", SignalCondition::LT.0 as i64),
    ("HSA_SIGNAL_CONDITION_GTE", SignalCondition::GTE.0 as i64),
    ("HSA_WAIT_STATE_BLOCKED", wait_state::BLOCKED as i64),
    ("HSA_WAIT_STATE_ACTIVE", wait_state::ACTIVE as i64),
    ("AMD_SIGNAL_KIND_INVALID", amd_signal_kind::INVALID),
    ("AMD_SIGNAL_KIND_USER", amd_signal_kind::USER),
    ("AMD_SIGNAL_KIND_DOORBELL", amd_signal_kind::DOORBELL),
    (
        "AMD_SIGNAL_KIND_LEGACY_DOORBELL",
        amd_signal_kind::LEGACY_DOORBELL,
    ),
    ("HSA_STATUS_SUCCESS", HsaStatus::SUCCESS.0 as i64),
    ("HSA_STATUS_INFO_BREAK", HsaStatus::INFO_BREAK.0 as i64),
    ("HSA_STATUS_ERROR", HsaStatus::ERROR.0 as i64),
    (
        "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        HsaStatus::ERROR_INVALID_ARGUMENT.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION",
        HsaStatus::ERROR_INVALID_QUEUE_CREATION.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_ALLOCATION",
        HsaStatus::ERROR_INVALID_ALLOCATION.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_AGENT",
        HsaStatus::ERROR_INVALID_AGENT.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_REGION",
        HsaStatus::ERROR_INVALID_REGION.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_SIGNAL",
        HsaStatus::ERROR_INVALID_SIGNAL.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_QUEUE",
        HsaStatus::ERROR_INVALID_QUEUE.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        HsaStatus::ERROR_OUT_OF_RESOURCES.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT",
        HsaStatus::ERROR_INVALID_PACKET_FORMAT.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_RESOURCE_FREE",
        HsaStatus::ERROR_RESOURCE_FREE.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_NOT_INITIALIZED",
        HsaStatus::ERROR_NOT_INITIALIZED.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
        HsaStatus::ERROR_REFCOUNT_OVERFLOW.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS",
        HsaStatus::ERROR_INCOMPATIBLE_ARGUMENTS.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_INDEX",
        HsaStatus::ERROR_INVALID_INDEX.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_ISA",
        HsaStatus::ERROR_INVALID_ISA.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
        HsaStatus::ERROR_INVALID_CODE_OBJECT.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE",
        HsaStatus::ERROR_INVALID_EXECUTABLE.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_FROZEN_EXECUTABLE",
        HsaStatus::ERROR_FROZEN_EXECUTABLE.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME",
        HsaStatus::ERROR_INVALID_SYMBOL_NAME.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED",
        HsaStatus::ERROR_VARIABLE_ALREADY_DEFINED.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_VARIABLE_UNDEFINED",
        HsaStatus::ERROR_VARIABLE_UNDEFINED.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_EXCEPTION",
        HsaStatus::ERROR_EXCEPTION.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_ISA_NAME",
        HsaStatus::ERROR_INVALID_ISA_NAME.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL",
        HsaStatus::ERROR_INVALID_CODE_SYMBOL.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL",
        HsaStatus::ERROR_INVALID_EXECUTABLE_SYMBOL.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_FILE",
        HsaStatus::ERROR_INVALID_FILE.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
        HsaStatus::ERROR_INVALID_CODE_OBJECT_READER.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_CACHE",
        HsaStatus::ERROR_INVALID_CACHE.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_WAVEFRONT",
        HsaStatus::ERROR_INVALID_WAVEFRONT.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP",
        HsaStatus::ERROR_INVALID_SIGNAL_GROUP.0 as i64,
    ),
    (
        "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE",
        HsaStatus::ERROR_INVALID_RUNTIME_STATE.0 as i64,
    ),
    ("HSA_STATUS_ERROR_FATAL", HsaStatus::ERROR_FATAL.0 as i64),
    ("HSA_AMD_SEGMENT_GLOBAL", amd_segment::GLOBAL as i64),
    ("HSA_AMD_SEGMENT_GROUP", amd_segment::GROUP as i64),
    ("HSA_REGION_SEGMENT_GLOBAL", amd_segment::GLOBAL as i64),
    ("HSA_REGION_SEGMENT_GROUP", amd_segment::GROUP as i64),
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT",
        pool_flag::KERNARG_INIT as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED",
        pool_flag::FINE_GRAINED as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED",
        pool_flag::COARSE_GRAINED as i64,
    ),
    (
        "HSA_REGION_GLOBAL_FLAG_KERNARG",
        pool_flag::KERNARG_INIT as i64,
    ),
    (
        "HSA_REGION_GLOBAL_FLAG_FINE_GRAINED",
        pool_flag::FINE_GRAINED as i64,
    ),
    (
        "HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED",
        pool_flag::COARSE_GRAINED as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED",
        pool_access::NEVER_ALLOWED as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT",
        pool_access::ALLOWED_BY_DEFAULT as i64,
    ),
    (
        "HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT",
        pool_access::DISALLOWED_BY_DEFAULT as i64,
    ),
    ("HSA_AMD_LINK_INFO_TYPE_PCIE", link_type::PCIE as i64),
    ("HSA_AMD_LINK_INFO_TYPE_XGMI", link_type::XGMI as i64),
    ("HSA_DEVICE_TYPE_CPU", device_type::CPU as i64),
    ("HSA_DEVICE_TYPE_GPU", device_type::GPU as i64),
    ("HSA_SYMBOL_KIND_VARIABLE", symbol_kind::VARIABLE as i64),
    ("HSA_SYMBOL_KIND_KERNEL", symbol_kind::KERNEL as i64),
    ("HSA_PROFILE_BASE", profile::BASE as i64),
    ("HSA_PROFILE_FULL", profile::FULL as i64),
];

// Compile-time pins (hsa.h / amd_hsa_queue.h / amd_hsa_signal.h, libhsa-runtime-dev 5.2.3).
const _: () = {
    assert!(size_of::<HsaSignal>() == 8);
    assert!(size_of::<HsaAgent>() == 8);

    assert!(size_of::<KernelDispatchPacket>() == AQL_PACKET_SIZE);
    assert!(offset_of!(KernelDispatchPacket, header) == 0);
    assert!(offset_of!(KernelDispatchPacket, setup) == 2);
    assert!(offset_of!(KernelDispatchPacket, workgroup_size_x) == 4);
    assert!(offset_of!(KernelDispatchPacket, workgroup_size_y) == 6);
    assert!(offset_of!(KernelDispatchPacket, workgroup_size_z) == 8);
    assert!(offset_of!(KernelDispatchPacket, reserved0) == 10);
    assert!(offset_of!(KernelDispatchPacket, grid_size_x) == 12);
    assert!(offset_of!(KernelDispatchPacket, grid_size_y) == 16);
    assert!(offset_of!(KernelDispatchPacket, grid_size_z) == 20);
    assert!(offset_of!(KernelDispatchPacket, private_segment_size) == 24);
    assert!(offset_of!(KernelDispatchPacket, group_segment_size) == 28);
    assert!(offset_of!(KernelDispatchPacket, kernel_object) == 32);
    assert!(offset_of!(KernelDispatchPacket, kernarg_address) == 40);
    assert!(offset_of!(KernelDispatchPacket, reserved2) == 48);
    assert!(offset_of!(KernelDispatchPacket, completion_signal) == 56);

    assert!(size_of::<AgentDispatchPacket>() == AQL_PACKET_SIZE);
    assert!(offset_of!(AgentDispatchPacket, header) == 0);
    assert!(offset_of!(AgentDispatchPacket, type_) == 2);
    assert!(offset_of!(AgentDispatchPacket, reserved0) == 4);
    assert!(offset_of!(AgentDispatchPacket, return_address) == 8);
    assert!(offset_of!(AgentDispatchPacket, arg) == 16);
    assert!(offset_of!(AgentDispatchPacket, reserved2) == 48);
    assert!(offset_of!(AgentDispatchPacket, completion_signal) == 56);

    assert!(size_of::<BarrierAndPacket>() == AQL_PACKET_SIZE);
    assert!(offset_of!(BarrierAndPacket, header) == 0);
    assert!(offset_of!(BarrierAndPacket, reserved0) == 2);
    assert!(offset_of!(BarrierAndPacket, reserved1) == 4);
    assert!(offset_of!(BarrierAndPacket, dep_signal) == 8);
    assert!(offset_of!(BarrierAndPacket, reserved2) == 48);
    assert!(offset_of!(BarrierAndPacket, completion_signal) == 56);

    assert!(size_of::<BarrierOrPacket>() == AQL_PACKET_SIZE);
    assert!(offset_of!(BarrierOrPacket, header) == 0);
    assert!(offset_of!(BarrierOrPacket, reserved0) == 2);
    assert!(offset_of!(BarrierOrPacket, reserved1) == 4);
    assert!(offset_of!(BarrierOrPacket, dep_signal) == 8);
    assert!(offset_of!(BarrierOrPacket, reserved2) == 48);
    assert!(offset_of!(BarrierOrPacket, completion_signal) == 56);

    assert!(size_of::<AmdVendorHeader>() == 4);
    assert!(offset_of!(AmdVendorHeader, amd_format) == 2);
    assert!(size_of::<AmdBarrierValuePacket>() == AQL_PACKET_SIZE);
    assert!(offset_of!(AmdBarrierValuePacket, amd_format) == 2);
    assert!(offset_of!(AmdBarrierValuePacket, reserved0) == 4);
    assert!(offset_of!(AmdBarrierValuePacket, signal) == 8);
    assert!(offset_of!(AmdBarrierValuePacket, value) == 16);
    assert!(offset_of!(AmdBarrierValuePacket, mask) == 24);
    assert!(offset_of!(AmdBarrierValuePacket, cond) == 32);
    assert!(offset_of!(AmdBarrierValuePacket, reserved1) == 36);
    assert!(offset_of!(AmdBarrierValuePacket, reserved2) == 40);
    assert!(offset_of!(AmdBarrierValuePacket, reserved3) == 48);
    assert!(offset_of!(AmdBarrierValuePacket, completion_signal) == 56);

    assert!(size_of::<HsaQueue>() == 40);
    assert!(offset_of!(HsaQueue, type_) == 0);
    assert!(offset_of!(HsaQueue, features) == 4);
    assert!(offset_of!(HsaQueue, base_address) == 8);
    assert!(offset_of!(HsaQueue, doorbell_signal) == 16);
    assert!(offset_of!(HsaQueue, size) == 24);
    assert!(offset_of!(HsaQueue, reserved1) == 28);
    assert!(offset_of!(HsaQueue, id) == 32);

    assert!(size_of::<AmdQueue>() == 256);
    assert!(core::mem::align_of::<AmdQueue>() == 64);
    assert!(offset_of!(AmdQueue, hsa_queue) == 0);
    assert!(offset_of!(AmdQueue, reserved1) == 40);
    assert!(offset_of!(AmdQueue, write_dispatch_id) == 56);
    assert!(offset_of!(AmdQueue, group_segment_aperture_base_hi) == 64);
    assert!(offset_of!(AmdQueue, private_segment_aperture_base_hi) == 68);
    assert!(offset_of!(AmdQueue, max_cu_id) == 72);
    assert!(offset_of!(AmdQueue, max_wave_id) == 76);
    assert!(offset_of!(AmdQueue, max_legacy_doorbell_dispatch_id_plus_1) == 80);
    assert!(offset_of!(AmdQueue, legacy_doorbell_lock) == 88);
    assert!(offset_of!(AmdQueue, reserved2) == 92);
    assert!(offset_of!(AmdQueue, read_dispatch_id) == 128);
    assert!(offset_of!(AmdQueue, read_dispatch_id_field_base_byte_offset) == 136);
    assert!(offset_of!(AmdQueue, compute_tmpring_size) == 140);
    assert!(offset_of!(AmdQueue, scratch_resource_descriptor) == 144);
    assert!(offset_of!(AmdQueue, scratch_backing_memory_location) == 160);
    assert!(offset_of!(AmdQueue, scratch_backing_memory_byte_size) == 168);
    assert!(offset_of!(AmdQueue, scratch_wave64_lane_byte_size) == 176);
    assert!(offset_of!(AmdQueue, queue_properties) == 180);
    assert!(offset_of!(AmdQueue, reserved3) == 184);
    assert!(offset_of!(AmdQueue, queue_inactive_signal) == 192);
    assert!(offset_of!(AmdQueue, reserved4) == 200);

    assert!(size_of::<AmdSignal>() == 64);
    assert!(core::mem::align_of::<AmdSignal>() == 64);
    assert!(offset_of!(AmdSignal, kind) == 0);
    assert!(offset_of!(AmdSignal, value) == 8);
    assert!(offset_of!(AmdSignal, event_mailbox_ptr) == 16);
    assert!(offset_of!(AmdSignal, event_id) == 24);
    assert!(offset_of!(AmdSignal, reserved1) == 28);
    assert!(offset_of!(AmdSignal, start_ts) == 32);
    assert!(offset_of!(AmdSignal, end_ts) == 40);
    assert!(offset_of!(AmdSignal, queue_ptr) == 48);
    assert!(offset_of!(AmdSignal, reserved3) == 56);
};
