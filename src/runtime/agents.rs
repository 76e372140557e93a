//! Virtual agents, their ISAs and memory pools, and every attribute value they
//! advertise. Pure tables: the export layer writes the returned [`Info`] into
//! the caller's buffer. Each value's provenance is in `docs/agent-provenance.md`
//! (ISA/product facts come from [`crate::isa`]; the rest is SoftGPU policy).
//!
//! Handles are tagged indices, never pointers, so a forged handle is simply
//! unknown.

use crate::isa::TargetDescriptor;

/// A value to write into a caller's `void*`. `Bytes` has exactly the C size.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Info {
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
            Info::U16(v) => v.to_le_bytes().to_vec(),
            Info::U32(v) => v.to_le_bytes().to_vec(),
            Info::U64(v) => v.to_le_bytes().to_vec(),
            Info::Bool(b) => vec![*b as u8],
            Info::Bytes(b) => b.clone(),
        }
    }
}

/// A fixed-size, NUL-padded C string (`char[n]`).
pub fn cstr(s: &str, n: usize) -> Info {
    let mut b = vec![0u8; n];
    let len = s.len().min(n - 1);
    b[..len].copy_from_slice(&s.as_bytes()[..len]);
    Info::Bytes(b)
}

fn u32s(v: &[u32]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

fn u64s(v: &[u64]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

fn u16s(v: &[u16]) -> Info {
    Info::Bytes(v.iter().flat_map(|x| x.to_le_bytes()).collect())
}

const AGENT_TAG: u64 = 0x5347_4100_0000_0000; // "SGA"
const POOL_TAG: u64 = 0x5347_5000_0000_0000; // "SGP"
const ISA_TAG: u64 = 0x5347_4900_0000_0000; // "SGI"
const TAG_MASK: u64 = 0xffff_ff00_0000_0000;

/// Extension ids.
pub const EXT_IMAGES: u16 = 1;
pub const EXT_AMD_LOADER: u16 = 0x201;

/// The agents, pools and ISAs of this runtime instance.
#[derive(Debug)]
pub struct Topology {
    /// GPU targets; agent 0 is the CPU, agent i+1 is `gpus[i]`.
    pub gpus: Vec<&'static TargetDescriptor>,
    pub cpu_count: u32,
    pub host_memory: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AgentKind {
    Cpu,
    Gpu(usize),
}

/// What a pool is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PoolKind {
    /// CPU GLOBAL, FINE_GRAINED | KERNARG_INIT.
    CpuFine,
    /// CPU GLOBAL, COARSE_GRAINED.
    CpuCoarse,
    /// GPU GLOBAL, COARSE_GRAINED ("device memory"; host memory here).
    GpuCoarse(usize),
    /// GPU GROUP (LDS).
    GpuGroup(usize),
}

/// `hsa_amd_segment_t` / flags.
const SEG_GLOBAL: u32 = 0;
const SEG_GROUP: u32 = 3;
const FLAG_KERNARG_INIT: u32 = 1;
const FLAG_FINE: u32 = 2;
const FLAG_COARSE: u32 = 4;
/// HSA_AMD_MEMORY_POOL_ACCESS_*.
const ACCESS_ALLOWED_BY_DEFAULT: u32 = 1;
const ACCESS_DISALLOWED_BY_DEFAULT: u32 = 2;
/// Allocation granule and alignment (SoftGPU policy: the host page size).
pub const ALLOC_GRANULE: u64 = 4096;

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
    /// Attribute not answered by this runtime (fail closed, logged by the caller).
    Unsupported,
    /// Answered by the caller (it needs an address).
    Special,
}

impl Topology {
    pub fn new(gpus: Vec<&'static TargetDescriptor>) -> Self {
        let cpu_count = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        Topology {
            gpus,
            cpu_count,
            host_memory: host_memory_bytes(),
        }
    }

    pub fn agent_count(&self) -> usize {
        1 + self.gpus.len()
    }

    pub fn agent_handle(&self, index: usize) -> u64 {
        AGENT_TAG | index as u64
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

    /// Pools owned by an agent, in iteration order.
    pub fn pools_of(&self, kind: AgentKind) -> Vec<PoolKind> {
        match kind {
            AgentKind::Cpu => vec![PoolKind::CpuFine, PoolKind::CpuCoarse],
            AgentKind::Gpu(g) => vec![PoolKind::GpuCoarse(g), PoolKind::GpuGroup(g)],
        }
    }

    pub fn pool_handle(&self, p: PoolKind) -> u64 {
        let n = match p {
            PoolKind::CpuFine => 0,
            PoolKind::CpuCoarse => 1,
            PoolKind::GpuCoarse(g) => 2 + 2 * g as u64,
            PoolKind::GpuGroup(g) => 3 + 2 * g as u64,
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
            1 => PoolKind::CpuCoarse,
            n => {
                let g = ((n - 2) / 2) as usize;
                if g >= self.gpus.len() {
                    return None;
                }
                if n % 2 == 0 {
                    PoolKind::GpuCoarse(g)
                } else {
                    PoolKind::GpuGroup(g)
                }
            }
        };
        Some(p)
    }

    pub fn pool_owner(p: PoolKind) -> AgentKind {
        match p {
            PoolKind::CpuFine | PoolKind::CpuCoarse => AgentKind::Cpu,
            PoolKind::GpuCoarse(g) | PoolKind::GpuGroup(g) => AgentKind::Gpu(g),
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

    /// `hsa_agent_get_info` (core and AMD attributes).
    pub fn agent_info(&self, kind: AgentKind, attr: u32) -> Result<Info, InfoError> {
        match kind {
            AgentKind::Cpu => self.cpu_info(attr),
            AgentKind::Gpu(g) => self.gpu_info(g, attr),
        }
    }

    fn cpu_info(&self, attr: u32) -> Result<Info, InfoError> {
        Ok(match attr {
            0 => cstr("SoftGPU virtual CPU", 64),
            1 => cstr("CPU", 64),
            2 => Info::U32(0),               // FEATURE: no dispatch
            3 => Info::U32(1),               // MACHINE_MODEL: large
            4 => Info::U32(0),               // PROFILE: base
            5 => Info::U32(2),               // DEFAULT_FLOAT_ROUNDING_MODE: near
            23 => Info::U32(3),              // BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES
            24 => Info::Bool(false),         // FAST_F16_OPERATION
            6 => Info::U32(0),               // WAVEFRONT_SIZE
            7 => u16s(&[0, 0, 0]),           // WORKGROUP_MAX_DIM
            8 => Info::U32(0),               // WORKGROUP_MAX_SIZE
            9 => u32s(&[0, 0, 0]),           // GRID_MAX_DIM
            10 => Info::U32(0),              // GRID_MAX_SIZE
            11 => Info::U32(0),              // FBARRIER_MAX_SIZE
            12 => Info::U32(0),              // QUEUES_MAX
            13 => Info::U32(0),              // QUEUE_MIN_SIZE
            14 => Info::U32(0),              // QUEUE_MAX_SIZE
            15 => Info::U32(0),              // QUEUE_TYPE
            16 => Info::U32(0),              // NODE
            17 => Info::U32(0),              // DEVICE: CPU
            18 => u32s(&[0, 0, 0, 0]),       // CACHE_SIZE
            20 => Info::Bytes(vec![0; 128]), // EXTENSIONS
            21 => Info::U16(1),              // VERSION_MAJOR
            22 => Info::U16(1),              // VERSION_MINOR
            0xA000 => Info::U32(0),          // CHIP_ID
            0xA001 => Info::U32(64),         // CACHELINE_SIZE
            0xA002 => Info::U32(self.cpu_count),
            0xA003 => Info::U32(0), // MAX_CLOCK_FREQUENCY: not measured
            0xA004 => Info::U32(0),
            0xA006 => Info::U32(0),
            0xA009 => cstr("SoftGPU virtual CPU", 64),
            0xA00F => Info::U32(0),
            0xA011 => cstr("CPU-XX", 21),
            0xA015 => Info::U64(self.host_memory),
            0xA016 => Info::U64(1_000_000_000),
            0xA112 => Info::U32(0),
            0xA113 => Info::U64(self.agent_handle(0)),
            _ => return Err(InfoError::Unsupported),
        })
    }

    fn gpu_info(&self, g: usize, attr: u32) -> Result<Info, InfoError> {
        let d = self.gpus[g];
        let f = &d.facts;
        let node = (g + 1) as u32;
        Ok(match attr {
            0 => cstr(d.id, 64),
            1 => cstr("AMD", 64),
            2 => Info::U32(1),      // FEATURE: kernel dispatch
            3 => Info::U32(1),      // MACHINE_MODEL: large
            4 => Info::U32(0),      // PROFILE: base
            5 => Info::U32(2),      // DEFAULT_FLOAT_ROUNDING_MODE: near
            23 => Info::U32(3),     // zero | near
            24 => Info::Bool(true), // FAST_F16_OPERATION
            6 => Info::U32(f.wavefront_size.value as u32),
            7 => {
                let m = f.workgroup_max_dim.value as u16;
                u16s(&[m, m, m])
            }
            8 => Info::U32(f.workgroup_max_size.value as u32),
            9 => u32s(&[u32::MAX, u32::MAX, u32::MAX]),
            10 => Info::U32(u32::MAX),
            11 => Info::U32(32),
            12 => Info::U32(QUEUES_MAX),
            13 => Info::U32(QUEUE_MIN_SIZE),
            14 => Info::U32(QUEUE_MAX_SIZE),
            15 => Info::U32(0), // MULTI
            16 => Info::U32(node),
            17 => Info::U32(1), // DEVICE: GPU
            18 => u32s(&[
                f.l1_cache_bytes.value as u32,
                f.l2_cache_bytes.value as u32,
                0,
                0,
            ]),
            19 => Info::U64(self.isa_handle(g)),
            20 => Info::Bytes(extension_bits(&[EXT_IMAGES, EXT_AMD_LOADER])),
            21 => Info::U16(1),
            22 => Info::U16(1),
            0xA000 => Info::U32(f.chip_id.value as u32),
            0xA001 => Info::U32(f.cacheline_bytes.value as u32),
            0xA002 => Info::U32(f.compute_units.value as u32),
            0xA003 => Info::U32(f.max_engine_clock_mhz.value as u32),
            0xA004 => Info::U32(node),
            0xA005 => Info::U32(0),
            0xA006 => Info::U32(node << 8), // BDFID: a virtual bus number per agent
            0xA007 => Info::U32(f.memory_width_bits.value as u32),
            0xA008 => Info::U32(f.memory_clock_mhz.value as u32),
            0xA009 => cstr(d.product_name, 64),
            0xA00A => Info::U32(f.max_waves_per_cu.value as u32),
            0xA00B => Info::U32(f.simds_per_cu.value as u32),
            0xA00C => Info::U32(f.shader_engines.value as u32),
            0xA00D => Info::U32(1),
            0xA00E => return Err(InfoError::Special), // HDP_FLUSH: addresses
            0xA00F => Info::U32(0),
            0xA010 => Info::Bool(false), // COOPERATIVE_QUEUES: not modelled
            0xA011 => cstr(
                &format!("GPU-{:016x}", 0x536f_6674_4750_5500u64 | node as u64),
                21,
            ),
            0xA012 => Info::U32(0),
            0xA013 => Info::Bool(true), // device memory is host memory
            0xA014 => Info::U32(f.compute_units.value as u32),
            // Attributes ROCr 6.x added, queried by HIP 6.4.
            0xA015 => Info::U64(f.memory_bytes.value.min(self.host_memory)), // MEMORY_AVAIL
            0xA016 => Info::U64(1_000_000_000), // TIMESTAMP_FREQUENCY: the 1 GHz domain
            0xA107 => Info::U32(f.asic_family_id.value as u32),
            0xA108 | 0xA109 => Info::U32(0), // firmware versions: there is no firmware
            0xA10A => Info::U32(COPY_ENGINES), // NUM_SDMA_ENG: SoftGPU's CPU copy engines
            0xA10B => Info::U32(0),          // NUM_SDMA_XGMI_ENG
            0xA110 => Info::U32(0),          // IOMMU_SUPPORT: none
            0xA111 => Info::U32(1),          // NUM_XCC
            0xA112 => Info::U32(node),       // DRIVER_UID
            0xA113 => Info::U64(self.agent_handle(0)), // NEAREST_CPU
            0xA114 | 0xA115 => Info::Bytes(vec![0; 8]), // MEMORY_PROPERTIES, AQL_EXTENSIONS
            0xA116 | 0xA117 => Info::U64(SCRATCH_LIMIT), // SCRATCH_LIMIT_MAX / _CURRENT
            // Image extension limits (size_t). The IMAGES extension is advertised
            // because HIP requires it for its 2D paths; no image function is
            // implemented. Values are the HSA 1.1 image extension minimums.
            0x3000 | 0x3001 => Info::U64(16384),
            0x3002 => Info::U64(65536),
            0x3003..=0x3006 => u64s(&[16384, 16384]),
            0x3007 => u64s(&[2048, 2048, 2048]),
            0x3008 => Info::U64(2048),
            0x3009 => Info::U64(128),
            0x300A => Info::U64(64),
            0x300B => Info::U64(16),
            0x300C => Info::U64(256), // policy: a power of two, as the spec requires
            _ => return Err(InfoError::Unsupported),
        })
    }

    /// `hsa_amd_memory_pool_get_info`.
    pub fn pool_info(&self, p: PoolKind, attr: u32) -> Result<Info, InfoError> {
        let (segment, flags, size, alloc) = match p {
            PoolKind::CpuFine => (
                SEG_GLOBAL,
                FLAG_FINE | FLAG_KERNARG_INIT,
                self.host_memory,
                true,
            ),
            PoolKind::CpuCoarse => (SEG_GLOBAL, FLAG_COARSE, self.host_memory, true),
            PoolKind::GpuCoarse(g) => (
                SEG_GLOBAL,
                FLAG_COARSE,
                self.gpus[g].facts.memory_bytes.value.min(self.host_memory),
                true,
            ),
            PoolKind::GpuGroup(g) => (
                SEG_GROUP,
                0,
                self.gpus[g].facts.lds_bytes_per_workgroup.value,
                false,
            ),
        };
        Ok(match attr {
            0 => Info::U32(segment),
            1 => Info::U32(flags),
            2 => Info::U64(size),
            5 => Info::Bool(alloc),
            6 => Info::U64(if alloc { ALLOC_GRANULE } else { 0 }),
            7 => Info::U64(if alloc { ALLOC_GRANULE } else { 0 }),
            15 => Info::Bool(matches!(p, PoolKind::CpuFine)),
            16 => Info::U64(if alloc { size } else { 0 }),
            _ => return Err(InfoError::Unsupported),
        })
    }

    /// `hsa_amd_agent_memory_pool_get_info`.
    pub fn agent_pool_info(&self, a: AgentKind, p: PoolKind, attr: u32) -> Result<Info, InfoError> {
        let owner = Self::pool_owner(p);
        let same = owner == a;
        let access = if same || matches!(p, PoolKind::CpuFine) {
            ACCESS_ALLOWED_BY_DEFAULT
        } else if matches!(p, PoolKind::GpuGroup(_)) {
            0 // NEVER_ALLOWED: LDS is private to its agent
        } else {
            ACCESS_DISALLOWED_BY_DEFAULT
        };
        Ok(match attr {
            0 => Info::U32(access),
            1 => Info::U32(if same { 0 } else { 1 }),
            2 => {
                if same {
                    Info::Bytes(Vec::new())
                } else {
                    // hsa_amd_memory_pool_link_info_t: one PCIe hop, figures unknown (0).
                    let mut b = vec![0u8; 28];
                    b[16] = 1; // atomic_support_32bit
                    b[17] = 1; // atomic_support_64bit
                    b[18] = 1; // coherent_support
                    b[20..24].copy_from_slice(&2u32.to_le_bytes()); // PCIE
                    Info::Bytes(b)
                }
            }
            _ => return Err(InfoError::Unsupported),
        })
    }

    /// `hsa_isa_get_info_alt`.
    pub fn isa_info(&self, d: &TargetDescriptor, attr: u32) -> Result<Info, InfoError> {
        let f = &d.facts;
        Ok(match attr {
            0 => Info::U32(d.isa_name.len() as u32 + 1),
            1 => cstr(d.isa_name, d.isa_name.len() + 1),
            2 => Info::U32(1),
            3 => Info::U32(f.wavefront_size.value as u32),
            4 => Info::U32(f.max_waves_per_cu.value as u32),
            5 => Info::Bytes(vec![0, 1]), // machine models: large only
            6 => Info::Bytes(vec![1, 0]), // profiles: base only
            7 => Info::Bytes(vec![0, 0, 1]), // default rounding: near
            8 => Info::Bytes(vec![0, 1, 1]),
            9 => Info::Bool(true),
            12 => {
                let m = f.workgroup_max_dim.value as u16;
                u16s(&[m, m, m])
            }
            13 => Info::U32(f.workgroup_max_size.value as u32),
            14 => u32s(&[u32::MAX, u32::MAX, u32::MAX]),
            16 => Info::U32(u32::MAX),
            17 => Info::U32(32),
            _ => return Err(InfoError::Unsupported),
        })
    }

    /// `hsa_system_get_info` values that need no address.
    pub fn system_info(&self, attr: u32, now_ns: u64) -> Result<Info, InfoError> {
        Ok(match attr {
            0 => Info::U16(1),
            1 => Info::U16(1),
            2 => Info::U64(now_ns),
            3 => Info::U64(1_000_000_000),
            4 => Info::U64(u64::MAX),
            5 => Info::U32(0),
            6 => Info::U32(1),
            7 => Info::Bytes(extension_bits(&[EXT_IMAGES, EXT_AMD_LOADER])),
            0x200 => return Err(InfoError::Special),
            0x201 => Info::Bool(false), // SVM_SUPPORTED: no SVM in the virtual runtime
            0x202 => Info::Bool(false),
            0x203 => Info::Bool(false), // MWAITX_ENABLED
            0x204 => Info::Bool(false), // DMABUF_SUPPORTED
            // VIRTUAL_MEM_API_SUPPORTED: the hsa_amd_vmem_* functions work for
            // callers that use them, but SoftGPU does not advertise the API, so
            // HIP 6.4 keeps hipMallocAsync pools on ordinary allocations.
            0x205 => Info::Bool(false),
            0x206 => Info::Bool(false), // XNACK_ENABLED
            _ => return Err(InfoError::Unsupported),
        })
    }
}

/// SoftGPU policy: the number of copy engines advertised (each is a CPU thread).
pub const COPY_ENGINES: u32 = 2;
/// SoftGPU policy: the scratch limit advertised (nothing ever uses scratch).
pub const SCRATCH_LIMIT: u64 = 1 << 32;

/// SoftGPU policy for queue limits (ROCr-like values).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn topo() -> Topology {
        Topology::new(vec![crate::isa::find(crate::isa::DEFAULT_TARGET).unwrap()])
    }

    #[test]
    fn handles_round_trip_and_forged_handles_are_unknown() {
        let t = topo();
        assert_eq!(t.agent(t.agent_handle(0)), Some(AgentKind::Cpu));
        assert_eq!(t.agent(t.agent_handle(1)), Some(AgentKind::Gpu(0)));
        assert_eq!(t.agent(t.agent_handle(2)), None);
        assert_eq!(t.agent(0x1234), None);
        for p in [
            PoolKind::CpuFine,
            PoolKind::CpuCoarse,
            PoolKind::GpuCoarse(0),
            PoolKind::GpuGroup(0),
        ] {
            assert_eq!(t.pool(t.pool_handle(p)), Some(p));
        }
        assert_eq!(t.pool(t.pool_handle(PoolKind::GpuCoarse(1))), None);
    }

    #[test]
    fn isa_name_length_counts_the_nul() {
        let t = topo();
        let d = t.isa(t.isa_handle(0)).unwrap();
        assert_eq!(
            t.isa_info(d, 0).unwrap(),
            Info::U32(d.isa_name.len() as u32 + 1)
        );
    }

    #[test]
    fn gpu_group_pool_has_nonzero_size() {
        let t = topo();
        let lds = t.gpus[0].facts.lds_bytes_per_workgroup.value;
        assert!(lds > 0);
        assert_eq!(
            t.pool_info(PoolKind::GpuGroup(0), 2).unwrap(),
            Info::U64(lds)
        );
    }

    #[test]
    fn unknown_attributes_fail_closed() {
        let t = topo();
        assert_eq!(
            t.agent_info(AgentKind::Gpu(0), 0xBEEF),
            Err(InfoError::Unsupported)
        );
    }
}
