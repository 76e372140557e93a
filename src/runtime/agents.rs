//! Virtual agents, their ISAs, memory pools, regions and caches, and every
//! attribute value they advertise. Pure tables: the export layer writes the
//! returned [`Info`] into the caller's buffer. Each value's provenance is in
//! `docs/agent-provenance.md` (ISA/product facts come from [`crate::isa`]; the
//! rest is ROCr's own behaviour or SoftGPU policy).
//!
//! **Widths.** For every attribute the runtime answers, the number of bytes it
//! writes is the number ROCr writes (ROCr 5.2.3 and 6.4; the C type of the
//! store, not the header's comment: the image limits are `uint32_t` stores,
//! HIP 5.2 reads them into `uint32_t` arrays). Each query kind has a width
//! table ([`system_width`], [`agent_width`], [`pool_width`], ...), and every
//! answer is checked against it before it is returned: an answer whose length
//! differs is an internal error ([`InfoError::Width`]), never a write past the
//! caller's buffer. `integration/attr_guard.c` checks the same widths from C,
//! with guard bytes around every output buffer.
//!
//! Handles are tagged indices, never pointers, so a forged handle is simply
//! unknown.

use std::ffi::CString;

use crate::abi::{
    AgentInfo as A, AgentPoolInfo as AP, CacheInfo as C, IsaInfo as I, PoolInfo as P,
    RegionInfo as R, SystemInfo as S,
};
use crate::isa::TargetDescriptor;

/// A value to write into a caller's `void*`. Its bytes are exactly what ROCr
/// stores for the attribute.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Info {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    Bool(bool),
    Bytes(Vec<u8>),
}

impl Info {
    /// Little-endian bytes, exactly as the C type is laid out.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Info::U8(v) => vec![*v],
            Info::U16(v) => v.to_le_bytes().to_vec(),
            Info::U32(v) => v.to_le_bytes().to_vec(),
            Info::U64(v) => v.to_le_bytes().to_vec(),
            Info::Bool(b) => vec![*b as u8],
            Info::Bytes(b) => b.clone(),
        }
    }

    /// How many bytes the value occupies.
    pub fn len(&self) -> usize {
        match self {
            Info::U8(_) | Info::Bool(_) => 1,
            Info::U16(_) => 2,
            Info::U32(_) => 4,
            Info::U64(_) => 8,
            Info::Bytes(b) => b.len(),
        }
    }

    /// True for an empty byte string (a zero-length name).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A fixed-size, NUL-padded C string of exactly `n` bytes (`n >= 1`).
pub fn cstr(s: &str, n: usize) -> Info {
    let mut b = vec![0u8; n];
    let len = s.len().min(n.saturating_sub(1));
    b[..len].copy_from_slice(&s.as_bytes()[..len]);
    Info::Bytes(b)
}

fn u32s(v: &[u32]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

fn u16s(v: &[u16]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

fn zeros(n: usize) -> Info {
    Info::Bytes(vec![0; n])
}

const AGENT_TAG: u64 = 0x5347_4100_0000_0000; // "SGA"
const POOL_TAG: u64 = 0x5347_5000_0000_0000; // "SGP"
const ISA_TAG: u64 = 0x5347_4900_0000_0000; // "SGI"
const CACHE_TAG: u64 = 0x5347_4300_0000_0000; // "SGC"
const TAG_MASK: u64 = 0xffff_ff00_0000_0000;

/// Extension ids.
pub const EXT_IMAGES: u16 = 1;
pub const EXT_AMD_LOADER: u16 = 0x201;

/// `HSA_AMD_INTERFACE_VERSION_MAJOR/MINOR` of ROCr 6.4.3's `hsa_ext_amd.h`,
/// answered for `HSA_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR/MINOR`.
pub const AMD_INTERFACE_VERSION: (u16, u16) = (1, 7);

/// The agents, pools and ISAs of this runtime instance.
#[derive(Debug)]
pub struct Topology {
    /// GPU targets; agent 0 is the CPU, agent i+1 is `gpus[i]`.
    pub gpus: Vec<&'static TargetDescriptor>,
    pub cpu_count: u32,
    pub host_memory: u64,
    /// The host CPU's maximum clock in MHz (0 when the host does not say).
    pub cpu_max_mhz: u32,
    /// The host CPU's data and unified caches: (level, size in KiB), by level.
    pub cpu_caches: Vec<(u8, u32)>,
    /// `HSA_CACHE_INFO_NAME` answers: one NUL-terminated name per cache, for
    /// the lifetime of the runtime (ROCr hands out a pointer to its own copy).
    cache_names: Vec<Vec<CString>>,
    /// Each GPU agent's scratch limit, as `hsa_amd_agent_set_async_scratch_limit`
    /// last set it (starts at [`SCRATCH_LIMIT`]); answered by
    /// `HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_CURRENT`.
    scratch_limits: Vec<std::sync::atomic::AtomicU64>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AgentKind {
    Cpu,
    Gpu(usize),
}

/// What a pool is. Pools and regions are the same objects, as in ROCr.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PoolKind {
    /// CPU GLOBAL, FINE_GRAINED.
    CpuFine,
    /// CPU GLOBAL, FINE_GRAINED | KERNARG_INIT.
    CpuKernarg,
    /// CPU GLOBAL, COARSE_GRAINED.
    CpuCoarse,
    /// GPU GLOBAL, COARSE_GRAINED ("device memory"; host memory here).
    GpuCoarse(usize),
    /// GPU GLOBAL, FINE_GRAINED (device memory visible to the agent's hive).
    GpuFine(usize),
    /// GPU GROUP (LDS).
    GpuGroup(usize),
}

/// A cache of an agent: (agent, position in its list).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CacheId {
    pub agent: AgentKind,
    pub index: usize,
}

use crate::abi::amd_segment::{GLOBAL as SEG_GLOBAL, GROUP as SEG_GROUP};
use crate::abi::link_type::{PCIE as LINK_PCIE, XGMI as LINK_XGMI};
use crate::abi::pool_access::{
    ALLOWED_BY_DEFAULT as ACCESS_ALLOWED_BY_DEFAULT,
    DISALLOWED_BY_DEFAULT as ACCESS_DISALLOWED_BY_DEFAULT, NEVER_ALLOWED as ACCESS_NEVER_ALLOWED,
};
use crate::abi::pool_flag::{
    COARSE_GRAINED as FLAG_COARSE, FINE_GRAINED as FLAG_FINE, KERNARG_INIT as FLAG_KERNARG,
};
use crate::abi::pool_location::{CPU as LOCATION_CPU, GPU as LOCATION_GPU};
use crate::abi::profile::{BASE as PROFILE_BASE, FULL as PROFILE_FULL};
/// `sizeof(hsa_amd_memory_pool_link_info_t)`, which ROCr always fills.
const LINK_INFO_BYTES: usize = 28;
/// `hsa_default_float_rounding_mode_t`: NEAR.
const ROUND_NEAR: u32 = 2;
/// Allocation granule and alignment (SoftGPU policy: the host page size).
pub const ALLOC_GRANULE: u64 = 4096;
/// ROCr 6.4's recommended granule for device memory: its fragment
/// allocator's 2 MiB block.
pub const DEVICE_REC_GRANULE: u64 = 2 << 20;
/// `HSA_PUBLIC_NAME_SIZE`: ROCr clears this many bytes for product names.
const PUBLIC_NAME: usize = 64;
/// ROCr's GPU agent clears 63 bytes for `NAME` and `VENDOR_NAME`.
const GPU_NAME: usize = 63;

/// Image limits ROCr reports for GFX9 to GFX12 (its image look-up table,
/// `image_lut_kv.cpp`, the same in 5.2.3 and 6.4): widths of 1D, 1DA and 1DB
/// images, (width, height) of the 2D kinds, (width, height, depth) of 3D, and
/// the layers of an array.
pub mod image_limits {
    pub const MAX_1D: u32 = 16384;
    pub const MAX_1DA: u32 = 16384;
    pub const MAX_1DB: u32 = u32::MAX;
    pub const MAX_2D: [u32; 2] = [16384, 16384];
    pub const MAX_3D: [u32; 3] = [16384, 16384, 8192];
    pub const MAX_LAYERS: u32 = 8192;
    pub const RD_HANDLES: u32 = 128;
    pub const RORW_HANDLES: u32 = 64;
    pub const SAMPLERS: u32 = 16;
}

/// Static words the HDP_FLUSH query points at (HIP only needs valid memory).
pub static HDP_WORDS: [std::sync::atomic::AtomicU32; 2] = [
    std::sync::atomic::AtomicU32::new(0),
    std::sync::atomic::AtomicU32::new(0),
];

/// Returned by BUILD_VERSION.
pub static BUILD_VERSION: &std::ffi::CStr =
    c"SoftGPU virtual runtime (diagnostic, no kernel execution)";

/// Outcome of an info query.
#[derive(Debug, PartialEq, Eq)]
pub enum InfoError {
    /// Unknown handle.
    BadHandle,
    /// Attribute not answered for this object, as ROCr does not answer it
    /// (HSA_STATUS_ERROR_INVALID_ARGUMENT, logged by the caller).
    Unsupported,
    /// An internal inconsistency: the answer's length is not the width ROCr
    /// writes. Never written; reported as HSA_STATUS_ERROR.
    Width { got: usize, want: usize },
}

/// Check an answer against the width ROCr writes for it.
fn checked(info: Info, width: Option<usize>) -> Result<Info, InfoError> {
    match width {
        Some(w) if info.len() == w => Ok(info),
        Some(w) => Err(InfoError::Width {
            got: info.len(),
            want: w,
        }),
        None => Err(InfoError::Unsupported),
    }
}

/// Whether ROCr 6.4 gives the target image support: it reports none (every
/// image limit a 4-byte zero) on GFX9.4 and GFX9.5.
pub fn has_images(d: &TargetDescriptor) -> bool {
    !(d.id.starts_with("gfx94") || d.id.starts_with("gfx95"))
}

/// `HSA_AMD_AGENT_INFO_ASIC_REVISION`: 1 for the MI210 model (public rocminfo
/// dumps of an MI210 show `ASIC Revision: 1(0x1)`), SoftGPU policy 0 elsewhere.
pub fn asic_revision(d: &TargetDescriptor) -> u32 {
    u32::from(d.id == "gfx90a")
}

/// `HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS` of every GPU agent: the
/// amdgpu driver gives GFX9 and later dGPUs four (rocminfo's `WatchPts on
/// Addr. Ranges:4`); a CPU node has one (1 << 0).
pub const GPU_WATCH_POINTS: u32 = 4;

impl Topology {
    pub fn new(gpus: Vec<&'static TargetDescriptor>) -> Self {
        let cpu_count = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let cpu_caches = host_cpu_caches();
        let mut t = Topology {
            gpus,
            cpu_count,
            host_memory: host_memory_bytes(),
            cpu_max_mhz: host_cpu_max_mhz(),
            cpu_caches,
            cache_names: Vec::new(),
            scratch_limits: Vec::new(),
        };
        t.scratch_limits = (0..t.gpus.len())
            .map(|_| std::sync::atomic::AtomicU64::new(SCRATCH_LIMIT))
            .collect();
        t.cache_names = (0..t.agent_count())
            .map(|i| {
                let kind = t.agent_kind(i);
                t.caches(kind)
                    .iter()
                    .map(|(level, _)| {
                        CString::new(format!("{} L{level}", t.agent_name(kind))).unwrap_or_default()
                    })
                    .collect()
            })
            .collect();
        t
    }

    pub fn agent_count(&self) -> usize {
        1 + self.gpus.len()
    }

    /// Record GPU `gpu`'s scratch limit (at most [`SCRATCH_LIMIT`]; the
    /// caller checks).
    pub fn set_scratch_limit(&self, gpu: usize, limit: u64) {
        if let Some(l) = self.scratch_limits.get(gpu) {
            l.store(limit, std::sync::atomic::Ordering::Relaxed);
        }
    }

    fn scratch_limit(&self, gpu: usize) -> u64 {
        self.scratch_limits.get(gpu).map_or(SCRATCH_LIMIT, |l| {
            l.load(std::sync::atomic::Ordering::Relaxed)
        })
    }

    pub fn agent_handle(&self, index: usize) -> u64 {
        AGENT_TAG | index as u64
    }

    fn agent_kind(&self, index: usize) -> AgentKind {
        if index == 0 {
            AgentKind::Cpu
        } else {
            AgentKind::Gpu(index - 1)
        }
    }

    pub fn agent(&self, handle: u64) -> Option<AgentKind> {
        if handle & TAG_MASK != AGENT_TAG {
            return None;
        }
        match (handle & !TAG_MASK) as usize {
            0 => Some(AgentKind::Cpu),
            i if i <= self.gpus.len() => Some(AgentKind::Gpu(i - 1)),
            _ => None,
        }
    }

    pub fn agent_index(kind: AgentKind) -> usize {
        match kind {
            AgentKind::Cpu => 0,
            AgentKind::Gpu(g) => g + 1,
        }
    }

    fn agent_name(&self, kind: AgentKind) -> &str {
        match kind {
            AgentKind::Cpu => CPU_NAME,
            AgentKind::Gpu(g) => self.gpus[g].id,
        }
    }

    /// Pools owned by an agent, in ROCr's iteration order
    /// (`hsa_amd_agent_iterate_memory_pools`).
    pub fn pools_of(&self, kind: AgentKind) -> Vec<PoolKind> {
        match kind {
            AgentKind::Cpu => vec![PoolKind::CpuFine, PoolKind::CpuKernarg, PoolKind::CpuCoarse],
            AgentKind::Gpu(g) => vec![
                PoolKind::GpuCoarse(g),
                PoolKind::GpuFine(g),
                PoolKind::GpuGroup(g),
            ],
        }
    }

    /// Regions an agent sees (`hsa_agent_iterate_regions`), as ROCr 6.4 lists
    /// them: a GPU's own regions, then every system region (fine-grained ones
    /// first); the CPU's are the system regions. (ROCr 5.2.3 listed a GPU's own
    /// regions only for the first GPU.)
    pub fn regions_of(&self, kind: AgentKind) -> Vec<PoolKind> {
        let system = self.pools_of(AgentKind::Cpu);
        match kind {
            AgentKind::Cpu => system,
            AgentKind::Gpu(_) => {
                let mut v = self.pools_of(kind);
                v.extend(system);
                v
            }
        }
    }

    pub fn pool_handle(&self, p: PoolKind) -> u64 {
        let n = match p {
            PoolKind::CpuFine => 0,
            PoolKind::CpuKernarg => 1,
            PoolKind::CpuCoarse => 2,
            PoolKind::GpuCoarse(g) => 3 + 3 * g as u64,
            PoolKind::GpuFine(g) => 4 + 3 * g as u64,
            PoolKind::GpuGroup(g) => 5 + 3 * g as u64,
        };
        POOL_TAG | n
    }

    pub fn pool(&self, handle: u64) -> Option<PoolKind> {
        if handle & TAG_MASK != POOL_TAG {
            return None;
        }
        let n = handle & !TAG_MASK;
        let p = match n {
            0 => PoolKind::CpuFine,
            1 => PoolKind::CpuKernarg,
            2 => PoolKind::CpuCoarse,
            n => {
                let g = ((n - 3) / 3) as usize;
                if g >= self.gpus.len() {
                    return None;
                }
                match (n - 3) % 3 {
                    0 => PoolKind::GpuCoarse(g),
                    1 => PoolKind::GpuFine(g),
                    _ => PoolKind::GpuGroup(g),
                }
            }
        };
        Some(p)
    }

    pub fn pool_owner(p: PoolKind) -> AgentKind {
        match p {
            PoolKind::CpuFine | PoolKind::CpuKernarg | PoolKind::CpuCoarse => AgentKind::Cpu,
            PoolKind::GpuCoarse(g) | PoolKind::GpuFine(g) | PoolKind::GpuGroup(g) => {
                AgentKind::Gpu(g)
            }
        }
    }

    pub fn isa_handle(&self, gpu: usize) -> u64 {
        ISA_TAG | gpu as u64
    }

    pub fn isa(&self, handle: u64) -> Option<&'static TargetDescriptor> {
        if handle & TAG_MASK != ISA_TAG {
            return None;
        }
        self.gpus.get((handle & !TAG_MASK) as usize).copied()
    }

    /// An agent's data caches, (level, size in KiB), in ROCr's order:
    /// ROCr lists the data and unified caches the driver reports (instruction
    /// caches left out). A GPU has its vector L1 and its L2; the CPU has the
    /// host's.
    pub fn caches(&self, kind: AgentKind) -> Vec<(u8, u32)> {
        match kind {
            AgentKind::Cpu => self.cpu_caches.clone(),
            AgentKind::Gpu(g) => {
                let f = &self.gpus[g].facts;
                vec![
                    (1, (f.l1_cache_bytes.value >> 10) as u32),
                    (2, (f.l2_cache_bytes.value >> 10) as u32),
                ]
            }
        }
    }

    pub fn cache_handle(&self, c: CacheId) -> u64 {
        CACHE_TAG | ((Topology::agent_index(c.agent) as u64) << 16) | c.index as u64
    }

    pub fn cache(&self, handle: u64) -> Option<CacheId> {
        if handle & TAG_MASK != CACHE_TAG {
            return None;
        }
        let n = handle & !TAG_MASK;
        let agent = (n >> 16) as usize;
        let index = (n & 0xffff) as usize;
        if agent >= self.agent_count() {
            return None;
        }
        let agent = self.agent_kind(agent);
        (index < self.caches(agent).len()).then_some(CacheId { agent, index })
    }

    // ------------------------------------------------------------ agents

    /// `hsa_agent_get_info` (core, image-extension and AMD attributes).
    pub fn agent_info(&self, kind: AgentKind, attr: A) -> Result<Info, InfoError> {
        let r = match kind {
            AgentKind::Cpu => self.cpu_info(attr),
            AgentKind::Gpu(g) => self.gpu_info(g, attr),
        };
        checked(r?, self.agent_width(kind, attr))
    }

    /// The width ROCr writes for an agent attribute, if it answers it.
    pub fn agent_width(&self, kind: AgentKind, attr: A) -> Option<usize> {
        match kind {
            AgentKind::Cpu => cpu_agent_width(attr),
            AgentKind::Gpu(g) => gpu_agent_width(self.gpus[g], attr),
        }
    }

    fn cpu_info(&self, attr: A) -> Result<Info, InfoError> {
        let [l1, l2, l3] = [1u8, 2, 3].map(|lvl| {
            // ROCr stores each cache at its level, the last one listed winning.
            self.cpu_caches
                .iter()
                .rev()
                .find(|(l, _)| *l == lvl)
                .map_or(0, |(_, kib)| kib * 1024)
        });
        Ok(match attr {
            A::NAME | A::AMD_PRODUCT_NAME => cstr(CPU_NAME, PUBLIC_NAME),
            A::VENDOR_NAME => cstr("CPU", PUBLIC_NAME),
            A::FEATURE => Info::U32(0), // no dispatch
            A::MACHINE_MODEL => Info::U32(1),
            A::PROFILE => Info::U32(PROFILE_FULL),
            A::DEFAULT_FLOAT_ROUNDING_MODE | A::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                Info::U32(ROUND_NEAR)
            }
            A::FAST_F16_OPERATION => Info::Bool(false),
            A::WAVEFRONT_SIZE
            | A::WORKGROUP_MAX_SIZE
            | A::GRID_MAX_SIZE
            | A::FBARRIER_MAX_SIZE
            | A::QUEUES_MAX
            | A::QUEUE_MIN_SIZE
            | A::QUEUE_MAX_SIZE
            | A::QUEUE_TYPE
            | A::NODE
            | A::DEVICE => Info::U32(0), // QUEUE_TYPE MULTI, NODE 0, DEVICE CPU
            A::WORKGROUP_MAX_DIM => zeros(6),
            A::GRID_MAX_DIM => zeros(12),
            A::CACHE_SIZE => u32s(&[l1, l2, l3, 0]),
            A::ISA => Info::U64(0), // ROCr answers a null ISA for the CPU
            A::EXTENSIONS => zeros(128),
            A::VERSION_MAJOR | A::VERSION_MINOR => Info::U16(1),
            a if is_image_attr(a) => zeros(image_attr_width(a)),
            A::AMD_CHIP_ID => Info::U32(0),
            A::AMD_CACHELINE_SIZE => Info::U32(64),
            A::AMD_COMPUTE_UNIT_COUNT => Info::U32(self.cpu_count),
            A::AMD_MAX_CLOCK_FREQUENCY => Info::U32(self.cpu_max_mhz),
            A::AMD_DRIVER_NODE_ID => Info::U32(0),
            A::AMD_MAX_ADDRESS_WATCH_POINTS => Info::U32(1),
            A::AMD_BDFID => Info::U32(0),
            A::AMD_MAX_WAVES_PER_CU
            | A::AMD_NUM_SIMDS_PER_CU
            | A::AMD_NUM_SHADER_ENGINES
            | A::AMD_NUM_SHADER_ARRAYS_PER_SE => Info::U32(0),
            A::AMD_HDP_FLUSH => zeros(16), // two null pointers
            A::AMD_DOMAIN => Info::U32(0),
            A::AMD_UUID => cstr("CPU-XX", 7),
            A::AMD_ASIC_REVISION => Info::U32(0),
            A::AMD_SVM_DIRECT_HOST_ACCESS => Info::Bool(true),
            A::AMD_TIMESTAMP_FREQUENCY => Info::U64(1_000_000_000),
            A::AMD_ASIC_FAMILY_ID
            | A::AMD_UCODE_VERSION
            | A::AMD_SDMA_UCODE_VERSION
            | A::AMD_NUM_SDMA_ENG
            | A::AMD_NUM_SDMA_XGMI_ENG
            | A::AMD_IOMMU_SUPPORT
            | A::AMD_NUM_XCC
            | A::AMD_DRIVER_UID => Info::U32(0),
            A::AMD_NEAREST_CPU => Info::U64(0), // ROCr answers a null agent
            A::AMD_MEMORY_PROPERTIES | A::AMD_AQL_EXTENSIONS => zeros(8),
            A::AMD_SCRATCH_LIMIT_MAX | A::AMD_SCRATCH_LIMIT_CURRENT => Info::U64(0),
            _ => return Err(InfoError::Unsupported),
        })
    }

    fn gpu_info(&self, g: usize, attr: A) -> Result<Info, InfoError> {
        use image_limits as il;
        let d = self.gpus[g];
        let f = &d.facts;
        let node = (g + 1) as u32;
        let images = has_images(d);
        Ok(match attr {
            A::NAME => cstr(d.id, GPU_NAME),
            A::VENDOR_NAME => cstr("AMD", GPU_NAME),
            A::FEATURE => Info::U32(1), // kernel dispatch
            A::MACHINE_MODEL => Info::U32(1),
            A::PROFILE => Info::U32(PROFILE_BASE),
            A::DEFAULT_FLOAT_ROUNDING_MODE | A::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                Info::U32(ROUND_NEAR)
            }
            A::FAST_F16_OPERATION => Info::Bool(true),
            A::WAVEFRONT_SIZE => Info::U32(f.wavefront_size.value as u32),
            A::WORKGROUP_MAX_DIM => {
                let m = f.workgroup_max_dim.value as u16;
                u16s(&[m, m, m])
            }
            A::WORKGROUP_MAX_SIZE => Info::U32(f.workgroup_max_size.value as u32),
            A::GRID_MAX_DIM => u32s(&[u32::MAX, u32::MAX, u32::MAX]),
            A::GRID_MAX_SIZE => Info::U32(u32::MAX),
            A::FBARRIER_MAX_SIZE => Info::U32(32),
            A::QUEUES_MAX => Info::U32(QUEUES_MAX),
            A::QUEUE_MIN_SIZE => Info::U32(QUEUE_MIN_SIZE),
            A::QUEUE_MAX_SIZE => Info::U32(QUEUE_MAX_SIZE),
            A::QUEUE_TYPE => Info::U32(0), // MULTI
            A::NODE => Info::U32(node),
            A::DEVICE => Info::U32(1), // GPU
            A::CACHE_SIZE => u32s(&[
                f.l1_cache_bytes.value as u32,
                f.l2_cache_bytes.value as u32,
                0,
                0,
            ]),
            A::ISA => Info::U64(self.isa_handle(g)),
            A::EXTENSIONS => Info::Bytes(extension_bits(&[EXT_IMAGES, EXT_AMD_LOADER])),
            A::VERSION_MAJOR | A::VERSION_MINOR => Info::U16(1),
            // Image limits: uint32_t stores, as ROCr makes them.
            a if is_image_attr(a) && !images => Info::U32(0),
            A::IMAGE_1D_MAX_ELEMENTS => Info::U32(il::MAX_1D),
            A::IMAGE_1DA_MAX_ELEMENTS => Info::U32(il::MAX_1DA),
            A::IMAGE_1DB_MAX_ELEMENTS => Info::U32(il::MAX_1DB),
            A::IMAGE_2D_MAX_ELEMENTS
            | A::IMAGE_2DA_MAX_ELEMENTS
            | A::IMAGE_2DDEPTH_MAX_ELEMENTS
            | A::IMAGE_2DADEPTH_MAX_ELEMENTS => u32s(&il::MAX_2D),
            A::IMAGE_3D_MAX_ELEMENTS => u32s(&il::MAX_3D),
            A::IMAGE_ARRAY_MAX_LAYERS => Info::U32(il::MAX_LAYERS),
            A::MAX_IMAGE_RD_HANDLES => Info::U32(il::RD_HANDLES),
            A::MAX_IMAGE_RORW_HANDLES => Info::U32(il::RORW_HANDLES),
            A::MAX_SAMPLER_HANDLERS => Info::U32(il::SAMPLERS),
            A::AMD_CHIP_ID => Info::U32(f.chip_id.value as u32),
            A::AMD_CACHELINE_SIZE => Info::U32(f.cacheline_bytes.value as u32),
            A::AMD_COMPUTE_UNIT_COUNT | A::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => {
                Info::U32(f.compute_units.value as u32)
            }
            A::AMD_MAX_CLOCK_FREQUENCY => Info::U32(f.max_engine_clock_mhz.value as u32),
            A::AMD_DRIVER_NODE_ID => Info::U32(node),
            A::AMD_MAX_ADDRESS_WATCH_POINTS => Info::U32(GPU_WATCH_POINTS),
            A::AMD_BDFID => Info::U32(node << 8), // a virtual bus number per agent
            A::AMD_MEMORY_WIDTH => Info::U32(f.memory_width_bits.value as u32),
            A::AMD_MEMORY_MAX_FREQUENCY => Info::U32(f.memory_clock_mhz.value as u32),
            A::AMD_PRODUCT_NAME => cstr(d.product_name, PUBLIC_NAME),
            A::AMD_MAX_WAVES_PER_CU => Info::U32(f.max_waves_per_cu.value as u32),
            A::AMD_NUM_SIMDS_PER_CU => Info::U32(f.simds_per_cu.value as u32),
            A::AMD_NUM_SHADER_ENGINES => Info::U32(f.shader_engines.value as u32),
            A::AMD_NUM_SHADER_ARRAYS_PER_SE => Info::U32(1),
            A::AMD_HDP_FLUSH => {
                // Two pointers to memory the program may write.
                let mut b = Vec::with_capacity(16);
                for w in &HDP_WORDS {
                    b.extend_from_slice(&(w.as_ptr() as u64).to_le_bytes());
                }
                Info::Bytes(b)
            }
            A::AMD_DOMAIN => Info::U32(0),
            // One GWS queue per agent, as ROCr has when the driver gives the
            // agent global wave sync (every MI200).
            A::AMD_COOPERATIVE_QUEUES => Info::Bool(true),
            A::AMD_UUID => cstr(
                &format!("GPU-{:016x}", 0x536f_6674_4750_5500u64 | node as u64),
                21,
            ),
            A::AMD_ASIC_REVISION => Info::U32(asic_revision(d)),
            A::AMD_SVM_DIRECT_HOST_ACCESS => Info::Bool(true), // device memory is host memory
            // What is not allocated from the agent's device pools (ROCr: the
            // driver's available VRAM), so it falls and rises with them.
            A::AMD_MEMORY_AVAIL => Info::U64(
                f.memory_bytes
                    .value
                    .min(self.host_memory)
                    .saturating_sub(super::memory::device_used(g)),
            ),
            A::AMD_TIMESTAMP_FREQUENCY => Info::U64(1_000_000_000), // the 1 GHz domain
            A::AMD_ASIC_FAMILY_ID => Info::U32(f.asic_family_id.value as u32),
            A::AMD_UCODE_VERSION | A::AMD_SDMA_UCODE_VERSION => Info::U32(0), // no firmware
            A::AMD_NUM_SDMA_ENG => Info::U32(COPY_ENGINES), // SoftGPU's CPU copy engines
            A::AMD_NUM_SDMA_XGMI_ENG => Info::U32(0),
            A::AMD_IOMMU_SUPPORT => Info::U32(0), // none
            A::AMD_NUM_XCC => Info::U32(1),
            A::AMD_DRIVER_UID => Info::U32(node),
            A::AMD_NEAREST_CPU => Info::U64(self.agent_handle(0)),
            A::AMD_MEMORY_PROPERTIES | A::AMD_AQL_EXTENSIONS => zeros(8),
            A::AMD_SCRATCH_LIMIT_MAX => Info::U64(SCRATCH_LIMIT),
            A::AMD_SCRATCH_LIMIT_CURRENT => Info::U64(self.scratch_limit(g)),
            A::AMD_CLOCK_COUNTERS => clock_counters(),
            _ => return Err(InfoError::Unsupported),
        })
    }

    // ------------------------------------------------------------ pools and regions

    pub fn pool_size(&self, p: PoolKind) -> u64 {
        match p {
            PoolKind::CpuFine | PoolKind::CpuKernarg | PoolKind::CpuCoarse => self.host_memory,
            PoolKind::GpuCoarse(g) | PoolKind::GpuFine(g) => {
                self.gpus[g].facts.memory_bytes.value.min(self.host_memory)
            }
            PoolKind::GpuGroup(g) => self.gpus[g].facts.lds_bytes_per_workgroup.value,
        }
    }

    /// `HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS` (0 for the group pool).
    pub fn pool_flags(p: PoolKind) -> u32 {
        match p {
            PoolKind::CpuFine | PoolKind::GpuFine(_) => FLAG_FINE,
            PoolKind::CpuKernarg => FLAG_FINE | FLAG_KERNARG,
            PoolKind::CpuCoarse | PoolKind::GpuCoarse(_) => FLAG_COARSE,
            PoolKind::GpuGroup(_) => 0,
        }
    }

    /// The largest single allocation from a pool (0: the pool does not allocate).
    pub fn pool_alloc_max(&self, p: PoolKind) -> u64 {
        if Self::pool_allocates(p) {
            self.pool_size(p)
        } else {
            0
        }
    }

    fn pool_allocates(p: PoolKind) -> bool {
        !matches!(p, PoolKind::GpuGroup(_))
    }

    fn pool_is_system(p: PoolKind) -> bool {
        Self::pool_owner(p) == AgentKind::Cpu
    }

    /// `hsa_amd_memory_pool_get_info`.
    pub fn pool_info(&self, p: PoolKind, attr: P) -> Result<Info, InfoError> {
        let alloc = Self::pool_allocates(p);
        let granule = if alloc { ALLOC_GRANULE } else { 0 };
        let info = match attr {
            P::SEGMENT => Info::U32(if alloc { SEG_GLOBAL } else { SEG_GROUP }),
            P::GLOBAL_FLAGS => Info::U32(Self::pool_flags(p)),
            P::SIZE => Info::U64(self.pool_size(p)),
            P::RUNTIME_ALLOC_ALLOWED => Info::Bool(alloc),
            P::RUNTIME_ALLOC_GRANULE | P::RUNTIME_ALLOC_ALIGNMENT => Info::U64(granule),
            P::ACCESSIBLE_BY_ALL => Info::Bool(Self::pool_is_system(p)),
            P::ALLOC_MAX_SIZE => Info::U64(self.pool_alloc_max(p)),
            // ROCr answers a location for system and device memory, not for LDS.
            P::LOCATION => match p {
                PoolKind::GpuGroup(_) => return Err(InfoError::Unsupported),
                p if Self::pool_is_system(p) => Info::U32(LOCATION_CPU),
                _ => Info::U32(LOCATION_GPU),
            },
            P::RUNTIME_ALLOC_REC_GRANULE => Info::U64(match p {
                PoolKind::GpuGroup(_) => 0,
                PoolKind::GpuCoarse(_) | PoolKind::GpuFine(_) => DEVICE_REC_GRANULE,
                _ => ALLOC_GRANULE,
            }),
            _ => return Err(InfoError::Unsupported),
        };
        checked(info, pool_width(attr))
    }

    /// `hsa_region_get_info`: a region is a pool seen through the older API.
    pub fn region_info(&self, p: PoolKind, attr: R) -> Result<Info, InfoError> {
        let memory = match p {
            PoolKind::GpuCoarse(g) | PoolKind::GpuFine(g) => Some(&self.gpus[g].facts),
            _ => None,
        };
        let info = match attr {
            R::SEGMENT => return self.pool_info(p, P::SEGMENT),
            R::GLOBAL_FLAGS => return self.pool_info(p, P::GLOBAL_FLAGS),
            R::SIZE => return self.pool_info(p, P::SIZE),
            R::ALLOC_MAX_SIZE => return self.pool_info(p, P::ALLOC_MAX_SIZE),
            R::RUNTIME_ALLOC_ALLOWED => return self.pool_info(p, P::RUNTIME_ALLOC_ALLOWED),
            R::RUNTIME_ALLOC_GRANULE => return self.pool_info(p, P::RUNTIME_ALLOC_GRANULE),
            R::RUNTIME_ALLOC_ALIGNMENT => return self.pool_info(p, P::RUNTIME_ALLOC_ALIGNMENT),
            R::AMD_HOST_ACCESSIBLE => Info::Bool(Self::pool_is_system(p)),
            // Policy: no aperture base (ROCr reports 0 for system and dGPU memory).
            R::AMD_BASE => Info::U64(0),
            R::AMD_BUS_WIDTH => Info::U32(memory.map_or(0, |f| f.memory_width_bits.value as u32)),
            R::AMD_MAX_CLOCK_FREQUENCY => {
                Info::U32(memory.map_or(0, |f| f.memory_clock_mhz.value as u32))
            }
            _ => return Err(InfoError::Unsupported),
        };
        checked(info, region_width(attr))
    }

    /// How agent `a` may reach pool `p`, by ROCr's rules: its own pools are
    /// allowed; system memory is allowed to the CPU and disallowed by default
    /// to a GPU; device coarse-grained memory is disallowed by default;
    /// fine-grained device memory is disallowed by default within the xGMI hive
    /// (the other GPUs) and never allowed over PCIe (the CPU); LDS is never
    /// reachable from another agent.
    pub fn access(a: AgentKind, p: PoolKind) -> u32 {
        let owner = Self::pool_owner(p);
        if owner == a {
            return ACCESS_ALLOWED_BY_DEFAULT;
        }
        match (p, a) {
            (p, AgentKind::Cpu) if Self::pool_is_system(p) => ACCESS_ALLOWED_BY_DEFAULT,
            (p, AgentKind::Gpu(_)) if Self::pool_is_system(p) => ACCESS_DISALLOWED_BY_DEFAULT,
            (PoolKind::GpuCoarse(_), _) => ACCESS_DISALLOWED_BY_DEFAULT,
            (PoolKind::GpuFine(_), AgentKind::Gpu(_)) => ACCESS_DISALLOWED_BY_DEFAULT,
            _ => ACCESS_NEVER_ALLOWED,
        }
    }

    /// `hsa_amd_agent_memory_pool_get_info`.
    pub fn agent_pool_info(&self, a: AgentKind, p: PoolKind, attr: AP) -> Result<Info, InfoError> {
        let owner = Self::pool_owner(p);
        let access = Self::access(a, p);
        let linked = owner != a && access != ACCESS_NEVER_ALLOWED;
        let info = match attr {
            AP::ACCESS => Info::U32(access),
            AP::NUM_LINK_HOPS => Info::U32(u32::from(linked)),
            AP::LINK_INFO => {
                // hsa_amd_memory_pool_link_info_t, always filled (zeros when
                // there is no link). One hop; latency and bandwidth unknown (0).
                let mut b = vec![0u8; LINK_INFO_BYTES];
                if linked {
                    let gpu_to_gpu = matches!((owner, a), (AgentKind::Gpu(_), AgentKind::Gpu(_)));
                    b[16] = 1; // atomic_support_32bit
                    b[17] = 1; // atomic_support_64bit
                    b[18] = 1; // coherent_support
                    let link = if gpu_to_gpu { LINK_XGMI } else { LINK_PCIE };
                    b[20..24].copy_from_slice(&link.to_le_bytes());
                }
                Info::Bytes(b)
            }
            _ => return Err(InfoError::Unsupported),
        };
        checked(info, agent_pool_width(attr))
    }

    // ------------------------------------------------------------ ISAs and caches

    /// `hsa_isa_get_info_alt` and `hsa_isa_get_info`, with ROCr's values
    /// (its deprecated call-convention answers are constants).
    pub fn isa_info(&self, d: &TargetDescriptor, attr: I) -> Result<Info, InfoError> {
        let f = &d.facts;
        let info = match attr {
            I::NAME_LENGTH => Info::U32(d.isa_name.len() as u32 + 1),
            I::NAME => cstr(d.isa_name, d.isa_name.len() + 1),
            I::CALL_CONVENTION_COUNT => Info::U32(1),
            I::CALL_CONVENTION_INFO_WAVEFRONT_SIZE => Info::U32(64),
            I::CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => Info::U32(40),
            I::MACHINE_MODELS => Info::Bytes(vec![0, 1]), // large only
            I::PROFILES => Info::Bytes(vec![1, 0]),       // base only
            I::DEFAULT_FLOAT_ROUNDING_MODES | I::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
                Info::Bytes(vec![0, 0, 1]) // near
            }
            I::FAST_F16_OPERATION => Info::Bool(true),
            I::WORKGROUP_MAX_DIM => {
                let m = f.workgroup_max_dim.value as u16;
                u16s(&[m, m, m])
            }
            I::WORKGROUP_MAX_SIZE => Info::U32(f.workgroup_max_size.value as u32),
            I::GRID_MAX_DIM => u32s(&[u32::MAX, u32::MAX, u32::MAX]),
            I::GRID_MAX_SIZE => Info::U64(u64::MAX),
            I::FBARRIER_MAX_SIZE => Info::U32(32),
            _ => return Err(InfoError::Unsupported),
        };
        let width = match attr {
            I::NAME => Some(d.isa_name.len() + 1),
            a => isa_width(a),
        };
        checked(info, width)
    }

    /// `hsa_cache_get_info`, as ROCr answers it: the name is a pointer to a
    /// NUL-terminated string (not the array the header describes) and its
    /// length leaves the NUL out; the size is in KiB, as the driver reports it.
    pub fn cache_info(&self, c: CacheId, attr: C) -> Result<Info, InfoError> {
        let caches = self.caches(c.agent);
        let (level, kib) = *caches.get(c.index).ok_or(InfoError::BadHandle)?;
        let name = self
            .cache_names
            .get(Topology::agent_index(c.agent))
            .and_then(|v| v.get(c.index))
            .ok_or(InfoError::BadHandle)?;
        let info = match attr {
            C::NAME_LENGTH => Info::U32(name.as_bytes().len() as u32),
            C::NAME => Info::U64(name.as_ptr() as u64),
            C::LEVEL => Info::U8(level),
            C::SIZE => Info::U32(kib),
            _ => return Err(InfoError::Unsupported),
        };
        checked(info, cache_width(attr))
    }

    // ------------------------------------------------------------ system

    /// `hsa_system_get_info`.
    pub fn system_info(&self, attr: S, now_ns: u64) -> Result<Info, InfoError> {
        let info = match attr {
            S::VERSION_MAJOR | S::VERSION_MINOR => Info::U16(1),
            S::TIMESTAMP => Info::U64(now_ns),
            S::TIMESTAMP_FREQUENCY => Info::U64(1_000_000_000),
            S::SIGNAL_MAX_WAIT => Info::U64(u64::MAX),
            S::ENDIANNESS => Info::U32(0),    // little
            S::MACHINE_MODEL => Info::U32(1), // large
            S::EXTENSIONS => Info::Bytes(extension_bits(&[EXT_IMAGES, EXT_AMD_LOADER])),
            S::AMD_BUILD_VERSION => Info::U64(BUILD_VERSION.as_ptr() as u64),
            S::AMD_SVM_SUPPORTED => Info::Bool(false), // no SVM in the virtual runtime
            S::AMD_SVM_ACCESSIBLE_BY_DEFAULT => Info::Bool(false),
            S::AMD_MWAITX_ENABLED => Info::Bool(false),
            S::AMD_DMABUF_SUPPORTED => Info::Bool(false),
            // The hsa_amd_vmem_* functions work for callers that use them, but
            // SoftGPU does not advertise the API, so HIP 6.4 keeps
            // hipMallocAsync pools on ordinary allocations.
            S::AMD_VIRTUAL_MEM_API_SUPPORTED => Info::Bool(false),
            S::AMD_XNACK_ENABLED => Info::Bool(false),
            S::AMD_EXT_VERSION_MAJOR => Info::U16(AMD_INTERFACE_VERSION.0),
            S::AMD_EXT_VERSION_MINOR => Info::U16(AMD_INTERFACE_VERSION.1),
            _ => return Err(InfoError::Unsupported),
        };
        checked(info, system_width(attr))
    }
}

/// The CPU agent's name (`NAME` and `PRODUCT_NAME`).
pub const CPU_NAME: &str = "SoftGPU virtual CPU";

fn is_image_attr(a: A) -> bool {
    (A::IMAGE_1D_MAX_ELEMENTS.0..=A::MAX_SAMPLER_HANDLERS.0).contains(&a.0)
}

/// The `uint32_t` count ROCr stores for an image limit.
fn image_attr_width(a: A) -> usize {
    match a {
        A::IMAGE_2D_MAX_ELEMENTS
        | A::IMAGE_2DA_MAX_ELEMENTS
        | A::IMAGE_2DDEPTH_MAX_ELEMENTS
        | A::IMAGE_2DADEPTH_MAX_ELEMENTS => 8,
        A::IMAGE_3D_MAX_ELEMENTS => 12,
        _ => 4,
    }
}

// ---------------------------------------------------------------- widths ROCr writes
//
// From the stores in ROCr 5.2.3 (tag rocm-5.2.3: core/runtime/runtime.cpp
// GetSystemInfo, amd_gpu_agent.cpp / amd_cpu_agent.cpp GetInfo,
// amd_memory_region.cpp, isa.cpp, cache.cpp, image/image_runtime.cpp) and ROCr
// 6.4 (rocm-systems projects/rocr-runtime, same files). `None`: ROCr does not
// answer the attribute for that object (INVALID_ARGUMENT).

/// `hsa_system_get_info`.
pub fn system_width(a: S) -> Option<usize> {
    Some(match a {
        S::VERSION_MAJOR | S::VERSION_MINOR => 2,
        S::TIMESTAMP | S::TIMESTAMP_FREQUENCY | S::SIGNAL_MAX_WAIT => 8,
        S::ENDIANNESS | S::MACHINE_MODEL => 4,
        S::EXTENSIONS => 128,
        S::AMD_BUILD_VERSION => 8, // const char*
        S::AMD_SVM_SUPPORTED
        | S::AMD_SVM_ACCESSIBLE_BY_DEFAULT
        | S::AMD_MWAITX_ENABLED
        | S::AMD_DMABUF_SUPPORTED
        | S::AMD_VIRTUAL_MEM_API_SUPPORTED
        | S::AMD_XNACK_ENABLED => 1,
        S::AMD_EXT_VERSION_MAJOR | S::AMD_EXT_VERSION_MINOR => 2,
        _ => return None,
    })
}

/// Widths shared by ROCr's CPU and GPU agents.
fn common_agent_width(a: A) -> Option<usize> {
    Some(match a {
        A::FEATURE
        | A::MACHINE_MODEL
        | A::PROFILE
        | A::DEFAULT_FLOAT_ROUNDING_MODE
        | A::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES
        | A::WAVEFRONT_SIZE
        | A::WORKGROUP_MAX_SIZE
        | A::GRID_MAX_SIZE
        | A::FBARRIER_MAX_SIZE
        | A::QUEUES_MAX
        | A::QUEUE_MIN_SIZE
        | A::QUEUE_MAX_SIZE
        | A::QUEUE_TYPE
        | A::NODE
        | A::DEVICE => 4,
        A::FAST_F16_OPERATION => 1,
        A::WORKGROUP_MAX_DIM => 6, // uint16_t[3]
        A::GRID_MAX_DIM => 12,     // hsa_dim3_t
        A::CACHE_SIZE => 16,       // uint32_t[4]
        A::ISA => 8,               // hsa_isa_t
        A::EXTENSIONS => 128,      // uint8_t[128]
        A::VERSION_MAJOR | A::VERSION_MINOR => 2,
        A::AMD_PRODUCT_NAME => PUBLIC_NAME,
        A::AMD_CHIP_ID
        | A::AMD_CACHELINE_SIZE
        | A::AMD_COMPUTE_UNIT_COUNT
        | A::AMD_MAX_CLOCK_FREQUENCY
        | A::AMD_DRIVER_NODE_ID
        | A::AMD_MAX_ADDRESS_WATCH_POINTS
        | A::AMD_BDFID
        | A::AMD_MAX_WAVES_PER_CU
        | A::AMD_NUM_SIMDS_PER_CU
        | A::AMD_NUM_SHADER_ENGINES
        | A::AMD_NUM_SHADER_ARRAYS_PER_SE
        | A::AMD_DOMAIN
        | A::AMD_ASIC_REVISION => 4,
        A::AMD_HDP_FLUSH => 16, // hsa_amd_hdp_flush_t
        A::AMD_SVM_DIRECT_HOST_ACCESS => 1,
        A::AMD_TIMESTAMP_FREQUENCY => 8,
        A::AMD_ASIC_FAMILY_ID
        | A::AMD_UCODE_VERSION
        | A::AMD_SDMA_UCODE_VERSION
        | A::AMD_NUM_SDMA_ENG
        | A::AMD_NUM_SDMA_XGMI_ENG
        | A::AMD_IOMMU_SUPPORT
        | A::AMD_NUM_XCC
        | A::AMD_DRIVER_UID => 4,
        A::AMD_NEAREST_CPU => 8,                               // hsa_agent_t
        A::AMD_MEMORY_PROPERTIES | A::AMD_AQL_EXTENSIONS => 8, // uint8_t[8]
        A::AMD_SCRATCH_LIMIT_MAX | A::AMD_SCRATCH_LIMIT_CURRENT => 8,
        _ => return None,
    })
}

/// `HSA_AMD_AGENT_INFO_CLOCK_COUNTERS` (ROCr 7.2.4): an
/// `hsa_amd_clock_counters_t`, the four fields the driver's
/// `AMDKFD_IOC_GET_CLOCK_COUNTERS` fills (Linux `kfd_chardev.c`: the CPU
/// counter is `CLOCK_MONOTONIC_RAW`, the system counter `CLOCK_BOOTTIME`,
/// both in ns, frequency 1 GHz). Policy: the GPU counter is the virtual
/// runtime's one time domain (its 1 GHz timestamps, `sys::now_ns`), since
/// no GPU clock exists.
fn clock_counters() -> Info {
    let ns = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        if super::sys::clock_ns(clock, &mut ts) {
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        } else {
            0
        }
    };
    let mut b = Vec::with_capacity(32);
    for v in [
        super::sys::now_ns(),
        ns(libc::CLOCK_MONOTONIC_RAW),
        ns(libc::CLOCK_BOOTTIME),
        1_000_000_000,
    ] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    Info::Bytes(b)
}

/// `hsa_agent_get_info` on ROCr's CPU agent.
pub fn cpu_agent_width(a: A) -> Option<usize> {
    match a {
        A::NAME | A::VENDOR_NAME => Some(PUBLIC_NAME),
        A::AMD_UUID => Some(7), // snprintf of "CPU-XX"
        a if is_image_attr(a) => Some(image_attr_width(a)),
        // Answered by the GPU agent only.
        A::AMD_MEMORY_WIDTH
        | A::AMD_MEMORY_MAX_FREQUENCY
        | A::AMD_COOPERATIVE_QUEUES
        | A::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT
        | A::AMD_MEMORY_AVAIL => None,
        a => common_agent_width(a),
    }
}

/// `hsa_agent_get_info` on ROCr's GPU agent for target `d`.
pub fn gpu_agent_width(d: &TargetDescriptor, a: A) -> Option<usize> {
    match a {
        A::NAME | A::VENDOR_NAME => Some(GPU_NAME),
        A::AMD_UUID => Some(21), // "GPU-" + 16 hex digits + NUL
        // ROCr 6.4 stores one uint32_t zero for every image limit of a target
        // without images.
        a if is_image_attr(a) && !has_images(d) => Some(4),
        a if is_image_attr(a) => Some(image_attr_width(a)),
        A::AMD_MEMORY_WIDTH
        | A::AMD_MEMORY_MAX_FREQUENCY
        | A::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => Some(4),
        A::AMD_COOPERATIVE_QUEUES => Some(1),
        A::AMD_MEMORY_AVAIL => Some(8),
        A::AMD_CLOCK_COUNTERS => Some(32), // hsa_amd_clock_counters_t
        a => common_agent_width(a),
    }
}

/// `hsa_amd_memory_pool_get_info`.
pub fn pool_width(a: P) -> Option<usize> {
    Some(match a {
        P::SEGMENT | P::GLOBAL_FLAGS | P::LOCATION => 4,
        P::SIZE
        | P::RUNTIME_ALLOC_GRANULE
        | P::RUNTIME_ALLOC_ALIGNMENT
        | P::ALLOC_MAX_SIZE
        | P::RUNTIME_ALLOC_REC_GRANULE => 8,
        P::RUNTIME_ALLOC_ALLOWED | P::ACCESSIBLE_BY_ALL => 1,
        _ => return None,
    })
}

/// `hsa_amd_agent_memory_pool_get_info`.
pub fn agent_pool_width(a: AP) -> Option<usize> {
    Some(match a {
        AP::ACCESS | AP::NUM_LINK_HOPS => 4,
        AP::LINK_INFO => LINK_INFO_BYTES,
        _ => return None,
    })
}

/// `hsa_region_get_info`.
pub fn region_width(a: R) -> Option<usize> {
    Some(match a {
        R::SEGMENT | R::GLOBAL_FLAGS | R::AMD_BUS_WIDTH | R::AMD_MAX_CLOCK_FREQUENCY => 4,
        R::SIZE
        | R::ALLOC_MAX_SIZE
        | R::RUNTIME_ALLOC_GRANULE
        | R::RUNTIME_ALLOC_ALIGNMENT
        | R::AMD_BASE => 8,
        R::RUNTIME_ALLOC_ALLOWED | R::AMD_HOST_ACCESSIBLE => 1,
        _ => return None,
    })
}

/// `hsa_isa_get_info_alt` (`NAME` has the length `NAME_LENGTH` answers).
pub fn isa_width(a: I) -> Option<usize> {
    Some(match a {
        I::NAME_LENGTH
        | I::CALL_CONVENTION_COUNT
        | I::CALL_CONVENTION_INFO_WAVEFRONT_SIZE
        | I::CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT
        | I::WORKGROUP_MAX_SIZE
        | I::FBARRIER_MAX_SIZE => 4,
        I::MACHINE_MODELS | I::PROFILES => 2,
        I::DEFAULT_FLOAT_ROUNDING_MODES | I::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => 3,
        I::FAST_F16_OPERATION => 1,
        I::WORKGROUP_MAX_DIM => 6,
        I::GRID_MAX_DIM => 12,
        I::GRID_MAX_SIZE => 8, // ROCr stores a uint64_t
        _ => return None,
    })
}

/// `hsa_cache_get_info`.
pub fn cache_width(a: C) -> Option<usize> {
    Some(match a {
        C::NAME_LENGTH | C::SIZE => 4,
        C::NAME => 8, // const char*
        C::LEVEL => 1,
        _ => return None,
    })
}

/// SoftGPU policy: the number of copy engines advertised (each is a CPU thread).
pub const COPY_ENGINES: u32 = 2;
/// SoftGPU policy: the scratch limit advertised (nothing ever uses scratch).
pub const SCRATCH_LIMIT: u64 = 1 << 32;

/// SoftGPU policy for queue limits (ROCr's values).
pub const QUEUES_MAX: u32 = 128;
pub const QUEUE_MIN_SIZE: u32 = 64;
pub const QUEUE_MAX_SIZE: u32 = 131072;

/// The 128-byte extension bit mask.
pub fn extension_bits(ids: &[u16]) -> Vec<u8> {
    let mut b = vec![0u8; 128];
    for &id in ids {
        b[(id / 8) as usize] |= 1 << (id % 8);
    }
    b
}

fn host_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(16 << 30, |kb| kb * 1024)
}

/// The host CPU's maximum clock in MHz, as the driver would report it: the
/// cpufreq maximum of CPU 0, else the highest `cpu MHz` in /proc/cpuinfo.
fn host_cpu_max_mhz() -> u32 {
    let cpufreq = std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|khz| (khz / 1000) as u32);
    cpufreq.unwrap_or_else(|| {
        std::fs::read_to_string("/proc/cpuinfo")
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("cpu MHz"))
            .filter_map(|l| l.split(':').nth(1)?.trim().parse::<f64>().ok())
            .fold(0.0f64, f64::max) as u32
    })
}

/// The data and unified caches of CPU 0 (sysfs `cache/index*`), as
/// (level, KiB), ordered by level; the instruction caches are left out, as
/// ROCr leaves them out.
fn host_cpu_caches() -> Vec<(u8, u32)> {
    let base = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let mut v: Vec<(u8, u32)> = (0..16)
        .filter_map(|i| {
            let dir = base.join(format!("index{i}"));
            let kind = read(dir.join("type"))?;
            if kind.trim() == "Instruction" {
                return None;
            }
            let level: u8 = read(dir.join("level"))?.trim().parse().ok()?;
            let size = read(dir.join("size"))?;
            let size = size.trim();
            let kib: u32 = if let Some(k) = size.strip_suffix('K') {
                k.parse().ok()?
            } else if let Some(m) = size.strip_suffix('M') {
                m.parse::<u32>().ok()? * 1024
            } else {
                size.parse::<u32>().ok()? / 1024
            };
            (1..=3).contains(&level).then_some((level, kib))
        })
        .collect();
    v.sort_by_key(|&(l, _)| l);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo() -> Topology {
        Topology::new(vec![crate::isa::find(crate::isa::DEFAULT_TARGET).unwrap()])
    }

    fn all_pools(t: &Topology) -> Vec<PoolKind> {
        (0..t.agent_count())
            .flat_map(|i| t.pools_of(t.agent_kind(i)))
            .collect()
    }

    /// Every id in the ranges HSA uses for info attributes.
    fn ids() -> impl Iterator<Item = u32> {
        (0..0x400).chain(0x3000..0x3100).chain(0xA000..0xA200)
    }

    #[test]
    fn handles_round_trip_and_forged_handles_are_unknown() {
        let t = topo();
        assert_eq!(t.agent(t.agent_handle(0)), Some(AgentKind::Cpu));
        assert_eq!(t.agent(t.agent_handle(1)), Some(AgentKind::Gpu(0)));
        assert_eq!(t.agent(t.agent_handle(2)), None);
        assert_eq!(t.agent(0x1234), None);
        for p in all_pools(&t) {
            assert_eq!(t.pool(t.pool_handle(p)), Some(p));
        }
        assert_eq!(t.pool(t.pool_handle(PoolKind::GpuCoarse(1))), None);
        assert_eq!(t.pool(t.pool_handle(PoolKind::GpuGroup(1))), None);
        for i in 0..t.agent_count() {
            let agent = t.agent_kind(i);
            for index in 0..t.caches(agent).len() {
                let c = CacheId { agent, index };
                assert_eq!(t.cache(t.cache_handle(c)), Some(c));
            }
        }
        assert_eq!(
            t.cache(t.cache_handle(CacheId {
                agent: AgentKind::Gpu(0),
                index: 9
            })),
            None
        );
    }

    #[test]
    fn every_answered_attribute_has_exactly_the_width_rocr_writes_and_nothing_else_is_answered() {
        let t = Topology::new(crate::isa::registry().descriptors().to_vec());
        let mut problems = Vec::new();
        let mut check =
            |what: String, r: Result<Info, InfoError>, width: Option<usize>| match (r, width) {
                (Ok(i), Some(w)) if i.len() == w => {}
                (Err(InfoError::Unsupported), None) => {}
                (r, w) => problems.push(format!("{what}: answer {r:?}, ROCr width {w:?}")),
            };
        for i in 0..t.agent_count() {
            let kind = t.agent_kind(i);
            for id in ids() {
                let a = A(id);
                check(
                    format!("agent {kind:?} attr {id:#x}"),
                    t.agent_info(kind, a),
                    t.agent_width(kind, a),
                );
            }
        }
        for p in all_pools(&t) {
            for id in ids() {
                let width = match (p, P(id)) {
                    (PoolKind::GpuGroup(_), P::LOCATION) => None,
                    (_, a) => pool_width(a),
                };
                check(
                    format!("pool {p:?} attr {id:#x}"),
                    t.pool_info(p, P(id)),
                    width,
                );
                check(
                    format!("region {p:?} attr {id:#x}"),
                    t.region_info(p, R(id)),
                    region_width(R(id)),
                );
                for a in 0..t.agent_count() {
                    let a = t.agent_kind(a);
                    check(
                        format!("agent {a:?} pool {p:?} attr {id:#x}"),
                        t.agent_pool_info(a, p, AP(id)),
                        agent_pool_width(AP(id)),
                    );
                }
            }
        }
        for d in &t.gpus {
            for id in ids() {
                let width = match I(id) {
                    I::NAME => Some(d.isa_name.len() + 1),
                    a => isa_width(a),
                };
                check(
                    format!("isa {} attr {id:#x}", d.id),
                    t.isa_info(d, I(id)),
                    width,
                );
            }
        }
        for i in 0..t.agent_count() {
            let agent = t.agent_kind(i);
            for index in 0..t.caches(agent).len() {
                for id in ids() {
                    check(
                        format!("cache {agent:?}/{index} attr {id:#x}"),
                        t.cache_info(CacheId { agent, index }, C(id)),
                        cache_width(C(id)),
                    );
                }
            }
        }
        for id in ids() {
            check(
                format!("system attr {id:#x}"),
                t.system_info(S(id), 1),
                system_width(S(id)),
            );
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn image_limits_are_uint32_stores_with_rocr_values() {
        let t = topo();
        let g = AgentKind::Gpu(0);
        assert_eq!(
            t.agent_info(g, A::IMAGE_2D_MAX_ELEMENTS)
                .unwrap()
                .to_bytes(),
            u32s(&[16384, 16384]).to_bytes()
        );
        assert_eq!(t.agent_info(g, A::IMAGE_3D_MAX_ELEMENTS).unwrap().len(), 12);
        assert_eq!(
            t.agent_info(g, A::IMAGE_1D_MAX_ELEMENTS).unwrap(),
            Info::U32(16384)
        );
        assert_eq!(
            t.agent_info(g, A::IMAGE_LINEAR_ROW_PITCH_ALIGNMENT),
            Err(InfoError::Unsupported)
        );
    }

    #[test]
    fn isa_name_length_counts_the_nul() {
        let t = topo();
        let d = t.isa(t.isa_handle(0)).unwrap();
        assert_eq!(
            t.isa_info(d, I::NAME_LENGTH).unwrap(),
            Info::U32(d.isa_name.len() as u32 + 1)
        );
    }

    #[test]
    fn gpu_group_pool_has_nonzero_size_and_no_location() {
        let t = topo();
        let lds = t.gpus[0].facts.lds_bytes_per_workgroup.value;
        assert!(lds > 0);
        assert_eq!(
            t.pool_info(PoolKind::GpuGroup(0), P::SIZE).unwrap(),
            Info::U64(lds)
        );
        assert_eq!(
            t.pool_info(PoolKind::GpuGroup(0), P::LOCATION),
            Err(InfoError::Unsupported)
        );
    }

    #[test]
    fn pool_access_follows_rocr() {
        let t = topo();
        let (cpu, gpu) = (AgentKind::Cpu, AgentKind::Gpu(0));
        let access = |a, p| t.agent_pool_info(a, p, AP::ACCESS).unwrap();
        assert_eq!(
            access(gpu, PoolKind::CpuFine),
            Info::U32(ACCESS_DISALLOWED_BY_DEFAULT)
        );
        assert_eq!(
            access(cpu, PoolKind::CpuFine),
            Info::U32(ACCESS_ALLOWED_BY_DEFAULT)
        );
        assert_eq!(
            access(cpu, PoolKind::GpuCoarse(0)),
            Info::U32(ACCESS_DISALLOWED_BY_DEFAULT)
        );
        assert_eq!(
            access(cpu, PoolKind::GpuFine(0)),
            Info::U32(ACCESS_NEVER_ALLOWED)
        );
        assert_eq!(
            access(cpu, PoolKind::GpuGroup(0)),
            Info::U32(ACCESS_NEVER_ALLOWED)
        );
        assert_eq!(
            t.agent_pool_info(cpu, PoolKind::GpuGroup(0), AP::NUM_LINK_HOPS),
            Ok(Info::U32(0))
        );
        assert_eq!(
            t.agent_pool_info(gpu, PoolKind::GpuCoarse(0), AP::LINK_INFO),
            Ok(zeros(LINK_INFO_BYTES))
        );
    }

    #[test]
    fn unknown_attributes_fail_closed() {
        let t = topo();
        assert_eq!(
            t.agent_info(AgentKind::Gpu(0), A(0xBEEF)),
            Err(InfoError::Unsupported)
        );
    }
}
