//! The target descriptors, one immutable `static` per processor, grouped by the
//! cargo feature (target family) that compiles them in.
//!
//! Sources, named in each fact's provenance:
//! - LLVM AMDGPUUsage: the processor table (target features), the ELF
//!   `EF_AMDGPU_MACH_*` values, wave64 on GFX9 and wave32 by default on GFX10
//!   and later, 1024 work-items per workgroup, the LDS available to a workgroup
//!   (64 KiB; GFX950 allocates LDS in 320-dword granules up to 160 KiB). The
//!   machine values were also checked by assembling an empty object for each
//!   processor with the sid chroot's LLVM 21 (`llvm-mc -mcpu=...`) and reading
//!   `e_flags` back; gfx940 and gfx941 are gone from LLVM 21, and their values
//!   (0x40, 0x4b) are AMDGPUUsage's.
//! - Product facts: AMD's product pages and datasheets for the named model, the
//!   PCI ID registry (pci.ids, version 2026.10.24) for device ids, and Linux's
//!   `amdgpu_drm.h` for `AMDGPU_FAMILY_*`.
//! - SoftGPU policy wherever neither gives the value HSA reports; each says why.
//!
//! Every descriptor is a model: `supports_execution` is false everywhere.

// A build with some families left out leaves some shared helpers unused.
#![cfg_attr(
    not(all(
        feature = "gfx9",
        feature = "gfx94",
        feature = "gfx95",
        feature = "gfx10",
        feature = "gfx11",
        feature = "gfx12"
    )),
    allow(dead_code, unused_imports)
)]

use super::{AgentFacts, Arch, Fact, HipAcceptance, HipSupport, Provenance, TargetDescriptor};

const fn usage(value: u64, detail: &'static str) -> Fact {
    Fact {
        value,
        provenance: Provenance::AmdgpuUsage(detail),
    }
}

const fn product(value: u64, source: &'static str) -> Fact {
    Fact {
        value,
        provenance: Provenance::Product(source),
    }
}

const fn policy(value: u64, why: &'static str) -> Fact {
    Fact {
        value,
        provenance: Provenance::Policy(why),
    }
}

const WAVE64: Fact = usage(64, "GFX9 processors are wave64 only");
const WAVE32: Fact = usage(
    32,
    "GFX10 and later default to wave32 (wavefrontsize64 is an opt-in target feature)",
);
const LDS_64K: Fact = usage(65536, "64 KiB of LDS per workgroup");
const WG_MAX: Fact = usage(1024, "at most 1024 work-items per workgroup");
const CACHELINE: Fact = policy(
    128,
    "the cache line size is not in a public datasheet; 128 is the conservative value",
);
const FAMILY_AI: Fact = product(141, "Linux amdgpu_drm.h: AMDGPU_FAMILY_AI (GC 9.x)");
const MEM_CLOCK_DATA_RATE: &str = "the datasheet gives the GDDR6 data rate, not the memory clock ROCr reports; SoftGPU reports the data rate in Mbps divided by 8, a value HIP only displays";
const SHADER_ENGINES: &str =
    "the shader engine count of the model is not in its datasheet; HIP only displays it";
const WAVES_LLVM_10: &str = "not in the datasheet; LLVM's AMDGPU backend allows 10 waves per SIMD before gfx90a, times 4 SIMDs";
const WAVES_LLVM_8: &str = "not in the datasheet; LLVM's AMDGPU backend allows 8 waves per SIMD from gfx90a on, times 4 SIMDs";
const WAVES_LLVM_RDNA: &str = "not in the datasheet; LLVM's AMDGPU backend allows 16 waves per SIMD on GFX10.3 and later, times 2 SIMD32s";
const RDNA_SIMDS: &str = "AMD RDNA architecture white paper: two SIMD32 units per compute unit";
const RDNA_L0: &str = "the per-CU vector cache size HSA reports as L1 is not in the product datasheet; 16 KiB, the RDNA white paper's L0 vector cache";
// The measured HIP acceptance (tests/isa_hip_acceptance.rs fails when reality differs).
// HIP 5.2.3's ISA table ends at gfx90a and gfx1035; HIP 6.4.3's (Debian's build) has
// gfx940 to gfx942 and gfx1100 to gfx1201 but not gfx950; LLVM 21, HIP 6.4.3's compiler,
// no longer builds for gfx940 or gfx941. HIP 7.2.4's (Debian experimental's) drops gfx940
// and gfx941 and adds gfx950, which its LLVM 22 builds for.
const fn hip(hip_5_2: HipSupport, hip_6_4: HipSupport, hip_7_2: HipSupport) -> HipAcceptance {
    HipAcceptance {
        hip_5_2,
        hip_6_4,
        hip_7_2,
    }
}
const NONE: HipSupport = HipSupport::NoDevice;
const DEVICE: HipSupport = HipSupport::DeviceOnly;
const KERNELS: HipSupport = HipSupport::Kernels;

// ---------------------------------------------------------------------------
// gfx9: GCN5 (Vega), CDNA and CDNA2 (GFX9.0)
// ---------------------------------------------------------------------------

#[cfg(feature = "gfx9")]
const VEGA64: &str = "AMD Radeon RX Vega 64 specifications";

/// gfx900 (GCN5, Vega 10), presented as an AMD Radeon RX Vega 64.
#[cfg(feature = "gfx9")]
pub static GFX900: TargetDescriptor = TargetDescriptor {
    id: "gfx900",
    aliases: &["vega64", "vega10"],
    arch: Arch::Gfx900,
    feature: "gfx9",
    isa_name: "amdgcn-amd-amdhsa--gfx900:xnack-",
    gpu_target: "gfx900:xnack-",
    gpu_targets: &["gfx900:xnack-", "gfx900"],
    elf_machine: 0x2c,
    product_name: "SoftGPU virtual gfx900 (RX Vega 64 model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE64,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(64, VEGA64),
        simds_per_cu: product(4, "AMD Vega instruction set architecture guide"),
        max_waves_per_cu: policy(40, WAVES_LLVM_10),
        memory_bytes: product(8 << 30, VEGA64),
        max_engine_clock_mhz: product(1546, VEGA64),
        memory_clock_mhz: product(945, VEGA64),
        memory_width_bits: product(2048, VEGA64),
        l1_cache_bytes: product(
            16 << 10,
            "AMD Vega instruction set architecture guide (vector L1 per CU)",
        ),
        l2_cache_bytes: product(4 << 20, "AMD Vega architecture white paper (4 MB L2)"),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x687f,
            "PCI ID registry: 1002:687f Vega 10 XL/XT [Radeon RX Vega 56/64]",
        ),
        shader_engines: policy(4, SHADER_ENGINES),
        asic_family_id: FAMILY_AI,
    },
    hip: hip(KERNELS, KERNELS, KERNELS),
    supports_execution: false,
};

#[cfg(feature = "gfx9")]
const MI50: &str = "AMD Radeon Instinct MI50 (32 GB) datasheet";

/// gfx906 (GCN5, Vega 20), presented as an AMD Radeon Instinct MI50 (32 GB).
#[cfg(feature = "gfx9")]
pub static GFX906: TargetDescriptor = TargetDescriptor {
    id: "gfx906",
    aliases: &["mi50", "vega20"],
    arch: Arch::Gfx906,
    feature: "gfx9",
    isa_name: "amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-",
    gpu_target: "gfx906:sramecc+:xnack-",
    gpu_targets: &[
        "gfx906:sramecc+:xnack-",
        "gfx906",
        "gfx906:sramecc+",
        "gfx906:xnack-",
    ],
    elf_machine: 0x2f,
    product_name: "SoftGPU virtual gfx906 (MI50 model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE64,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(60, MI50),
        simds_per_cu: product(4, "AMD Vega 7nm instruction set architecture guide"),
        max_waves_per_cu: policy(40, WAVES_LLVM_10),
        memory_bytes: product(32 << 30, MI50),
        max_engine_clock_mhz: product(1725, MI50),
        memory_clock_mhz: product(1000, MI50),
        memory_width_bits: product(4096, MI50),
        l1_cache_bytes: product(
            16 << 10,
            "AMD Vega 7nm instruction set architecture guide (vector L1 per CU)",
        ),
        l2_cache_bytes: product(4 << 20, MI50),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x66a1,
            "PCI ID registry: 1002:66a1 Vega 20 [Radeon Pro VII/Radeon Instinct MI50]",
        ),
        shader_engines: policy(4, SHADER_ENGINES),
        asic_family_id: FAMILY_AI,
    },
    hip: hip(KERNELS, KERNELS, KERNELS),
    supports_execution: false,
};

#[cfg(feature = "gfx9")]
const MI100: &str = "AMD Instinct MI100 datasheet";

/// gfx908 (CDNA, Arcturus), presented as an AMD Instinct MI100.
#[cfg(feature = "gfx9")]
pub static GFX908: TargetDescriptor = TargetDescriptor {
    id: "gfx908",
    aliases: &["mi100", "cdna", "arcturus"],
    arch: Arch::Gfx908,
    feature: "gfx9",
    isa_name: "amdgcn-amd-amdhsa--gfx908:sramecc+:xnack-",
    gpu_target: "gfx908:sramecc+:xnack-",
    gpu_targets: &[
        "gfx908:sramecc+:xnack-",
        "gfx908",
        "gfx908:sramecc+",
        "gfx908:xnack-",
    ],
    elf_machine: 0x30,
    product_name: "SoftGPU virtual gfx908 (MI100 model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE64,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(120, MI100),
        simds_per_cu: product(4, "AMD CDNA instruction set architecture guide"),
        max_waves_per_cu: policy(40, WAVES_LLVM_10),
        memory_bytes: product(32 << 30, MI100),
        max_engine_clock_mhz: product(1502, MI100),
        memory_clock_mhz: product(1200, MI100),
        memory_width_bits: product(4096, MI100),
        l1_cache_bytes: product(
            16 << 10,
            "AMD CDNA instruction set architecture guide (vector L1 per CU)",
        ),
        l2_cache_bytes: product(8 << 20, MI100),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x738c,
            "PCI ID registry: 1002:738c Arcturus GL-XL [Instinct MI100]",
        ),
        shader_engines: policy(8, SHADER_ENGINES),
        asic_family_id: FAMILY_AI,
    },
    hip: hip(KERNELS, KERNELS, KERNELS),
    supports_execution: false,
};

#[cfg(feature = "gfx9")]
const MI210: Provenance = Provenance::Product("AMD Instinct MI210 datasheet");

/// gfx90a (CDNA2), presented as an AMD Instinct MI210. Its values are the ones
/// SoftGPU has always advertised; tests depend on them.
#[cfg(feature = "gfx9")]
pub static GFX90A: TargetDescriptor = TargetDescriptor {
    id: "gfx90a",
    aliases: &["mi210", "cdna2"],
    arch: Arch::Gfx90a,
    feature: "gfx9",
    isa_name: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
    gpu_target: "gfx90a:sramecc+:xnack-",
    gpu_targets: &[
        "gfx90a:sramecc+:xnack-",
        "gfx90a",
        "gfx90a:sramecc+",
        "gfx90a:xnack-",
    ],
    elf_machine: 0x3f,
    product_name: "SoftGPU virtual gfx90a (MI210 model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE64,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: Fact {
            value: 104,
            provenance: MI210,
        },
        simds_per_cu: product(4, "AMD CDNA2 instruction set architecture guide"),
        max_waves_per_cu: product(
            32,
            "AMD CDNA2 instruction set architecture guide (8 waves per SIMD)",
        ),
        memory_bytes: Fact {
            value: 64 << 30,
            provenance: MI210,
        },
        max_engine_clock_mhz: Fact {
            value: 1700,
            provenance: MI210,
        },
        memory_clock_mhz: Fact {
            value: 1600,
            provenance: MI210,
        },
        memory_width_bits: Fact {
            value: 4096,
            provenance: MI210,
        },
        l1_cache_bytes: product(
            16 << 10,
            "AMD CDNA2 instruction set architecture guide (vector L1 per CU)",
        ),
        l2_cache_bytes: Fact {
            value: 8 << 20,
            provenance: MI210,
        },
        cacheline_bytes: policy(
            128,
            "CDNA2 L2 line size is not in a public datasheet; 128 is the conservative value",
        ),
        chip_id: product(0x740f, "PCI ID registry: 1002:740f AMD Instinct MI210"),
        shader_engines: policy(
            8,
            "shader engine count is not published; HIP only displays it",
        ),
        asic_family_id: product(141, "Linux amdgpu_drm.h: AMDGPU_FAMILY_AI (gfx9)"),
    },
    hip: hip(KERNELS, KERNELS, KERNELS),
    supports_execution: false,
};

// ---------------------------------------------------------------------------
// gfx94: CDNA3 (GFX9.4)
// ---------------------------------------------------------------------------

#[cfg(feature = "gfx94")]
const MI300X: &str = "AMD Instinct MI300X datasheet";
#[cfg(feature = "gfx94")]
const CDNA3_L2: &str = "AMD CDNA3 architecture white paper (4 MB L2 per XCD; HSA reports one L2)";
#[cfg(feature = "gfx94")]
const CDNA3_L1: &str = "the CDNA3 vector L1 size is not in the MI300X datasheet; 16 KiB, the CDNA2 value, is the conservative one";
#[cfg(feature = "gfx94")]
const HBM3_CLOCK: &str = "the datasheet gives the HBM3 data rate (5.2 Gbps), not the clock ROCr reports; SoftGPU reports half the data rate, as the MI210 datasheet's 1.6 GHz is half of HBM2e's 3.2 Gbps";
#[cfg(feature = "gfx94")]
const PRE_MI300: &str = "LLVM AMDGPUUsage names no product for this processor (an early CDNA3 variant); SoftGPU uses the MI300X (gfx942) figure";

/// The facts of the MI300X model, shared (as policy) by gfx940 and gfx941.
#[cfg(feature = "gfx94")]
const fn cdna3_facts(named_product: bool, chip_id: Fact) -> AgentFacts {
    // The MI300X figure: a product fact for gfx942, policy for gfx940/gfx941.
    const fn source(named_product: bool, value: u64) -> Fact {
        if named_product {
            product(value, MI300X)
        } else {
            policy(value, PRE_MI300)
        }
    }
    let n = named_product;
    AgentFacts {
        wavefront_size: WAVE64,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: source(n, 304),
        simds_per_cu: product(4, "AMD CDNA3 instruction set architecture guide"),
        max_waves_per_cu: policy(32, WAVES_LLVM_8),
        memory_bytes: source(n, 192 << 30),
        max_engine_clock_mhz: source(n, 2100),
        memory_clock_mhz: policy(2600, HBM3_CLOCK),
        memory_width_bits: source(n, 8192),
        l1_cache_bytes: policy(16 << 10, CDNA3_L1),
        l2_cache_bytes: if n {
            product(4 << 20, CDNA3_L2)
        } else {
            policy(4 << 20, PRE_MI300)
        },
        cacheline_bytes: CACHELINE,
        chip_id,
        shader_engines: policy(32, SHADER_ENGINES),
        asic_family_id: FAMILY_AI,
    }
}

/// gfx940 (CDNA3, no named product): the MI300X figures, as policy.
#[cfg(feature = "gfx94")]
pub static GFX940: TargetDescriptor = TargetDescriptor {
    id: "gfx940",
    aliases: &[],
    arch: Arch::Gfx940,
    feature: "gfx94",
    isa_name: "amdgcn-amd-amdhsa--gfx940:sramecc+:xnack-",
    gpu_target: "gfx940:sramecc+:xnack-",
    gpu_targets: &[
        "gfx940:sramecc+:xnack-",
        "gfx940",
        "gfx940:sramecc+",
        "gfx940:xnack-",
    ],
    elf_machine: 0x40,
    product_name: "SoftGPU virtual gfx940 (CDNA3 model, no execution)",
    facts: cdna3_facts(
        false,
        policy(0, "no public product, so no PCI device id; 0 says unknown"),
    ),
    hip: hip(NONE, DEVICE, NONE),
    supports_execution: false,
};

/// gfx941 (CDNA3, no named product): the MI300X figures, as policy.
#[cfg(feature = "gfx94")]
pub static GFX941: TargetDescriptor = TargetDescriptor {
    id: "gfx941",
    aliases: &[],
    arch: Arch::Gfx941,
    feature: "gfx94",
    isa_name: "amdgcn-amd-amdhsa--gfx941:sramecc+:xnack-",
    gpu_target: "gfx941:sramecc+:xnack-",
    gpu_targets: &[
        "gfx941:sramecc+:xnack-",
        "gfx941",
        "gfx941:sramecc+",
        "gfx941:xnack-",
    ],
    elf_machine: 0x4b,
    product_name: "SoftGPU virtual gfx941 (CDNA3 model, no execution)",
    facts: cdna3_facts(
        false,
        policy(0, "no public product, so no PCI device id; 0 says unknown"),
    ),
    hip: hip(NONE, DEVICE, NONE),
    supports_execution: false,
};

/// gfx942 (CDNA3), presented as an AMD Instinct MI300X.
#[cfg(feature = "gfx94")]
pub static GFX942: TargetDescriptor = TargetDescriptor {
    id: "gfx942",
    aliases: &["mi300x"],
    arch: Arch::Gfx942,
    feature: "gfx94",
    isa_name: "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    gpu_target: "gfx942:sramecc+:xnack-",
    gpu_targets: &[
        "gfx942:sramecc+:xnack-",
        "gfx942",
        "gfx942:sramecc+",
        "gfx942:xnack-",
    ],
    elf_machine: 0x4c,
    product_name: "SoftGPU virtual gfx942 (MI300X model, no execution)",
    facts: cdna3_facts(
        true,
        product(
            0x74a1,
            "PCI ID registry: 1002:74a1 Aqua Vanjaram [Instinct MI300X]",
        ),
    ),
    hip: hip(NONE, KERNELS, KERNELS),
    supports_execution: false,
};

// ---------------------------------------------------------------------------
// gfx95: CDNA4 (GFX9.5)
// ---------------------------------------------------------------------------

#[cfg(feature = "gfx95")]
const MI355X: &str = "AMD Instinct MI355X datasheet";

/// gfx950 (CDNA4), presented as an AMD Instinct MI355X.
#[cfg(feature = "gfx95")]
pub static GFX950: TargetDescriptor = TargetDescriptor {
    id: "gfx950",
    aliases: &["mi355x", "cdna4"],
    arch: Arch::Gfx950,
    feature: "gfx95",
    isa_name: "amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-",
    gpu_target: "gfx950:sramecc+:xnack-",
    gpu_targets: &[
        "gfx950:sramecc+:xnack-",
        "gfx950",
        "gfx950:sramecc+",
        "gfx950:xnack-",
    ],
    elf_machine: 0x4f,
    product_name: "SoftGPU virtual gfx950 (MI355X model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE64,
        lds_bytes_per_workgroup: usage(
            160 << 10,
            "GFX950 has 160 KiB of LDS per workgroup, allocated in 320-dword granules",
        ),
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(256, MI355X),
        simds_per_cu: product(4, "AMD CDNA4 instruction set architecture guide"),
        max_waves_per_cu: policy(32, WAVES_LLVM_8),
        memory_bytes: product(288 << 30, MI355X),
        max_engine_clock_mhz: product(2400, MI355X),
        memory_clock_mhz: policy(
            4000,
            "the datasheet gives the HBM3E data rate (8 Gbps), not the clock ROCr reports; SoftGPU reports half the data rate, as for the MI210",
        ),
        memory_width_bits: product(8192, MI355X),
        l1_cache_bytes: policy(
            32 << 10,
            "the CDNA4 vector L1 size is not in the MI355X datasheet; 32 KiB is SoftGPU's choice",
        ),
        l2_cache_bytes: product(
            4 << 20,
            "AMD CDNA4 architecture white paper (4 MB L2 per XCD; HSA reports one L2)",
        ),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x75a3,
            "PCI ID registry: 1002:75a3 Aqua Vanjaram [Instinct MI355X]",
        ),
        shader_engines: policy(32, SHADER_ENGINES),
        asic_family_id: FAMILY_AI,
    },
    hip: hip(NONE, NONE, KERNELS),
    supports_execution: false,
};

// ---------------------------------------------------------------------------
// gfx10: RDNA2 (GFX10.3)
// ---------------------------------------------------------------------------

#[cfg(feature = "gfx10")]
const RX6900XT: &str = "AMD Radeon RX 6900 XT specifications";

/// gfx1030 (RDNA2, Navi 21), presented as an AMD Radeon RX 6900 XT.
#[cfg(feature = "gfx10")]
pub static GFX1030: TargetDescriptor = TargetDescriptor {
    id: "gfx1030",
    aliases: &["rx6900xt", "navi21"],
    arch: Arch::Gfx1030,
    feature: "gfx10",
    isa_name: "amdgcn-amd-amdhsa--gfx1030",
    gpu_target: "gfx1030",
    gpu_targets: &["gfx1030"],
    elf_machine: 0x36,
    product_name: "SoftGPU virtual gfx1030 (RX 6900 XT model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE32,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(80, RX6900XT),
        simds_per_cu: product(2, RDNA_SIMDS),
        max_waves_per_cu: policy(32, WAVES_LLVM_RDNA),
        memory_bytes: product(16 << 30, RX6900XT),
        max_engine_clock_mhz: product(2250, RX6900XT),
        memory_clock_mhz: policy(2000, MEM_CLOCK_DATA_RATE),
        memory_width_bits: product(256, RX6900XT),
        l1_cache_bytes: policy(16 << 10, RDNA_L0),
        l2_cache_bytes: product(4 << 20, "AMD RDNA2 (Navi 21) architecture: 4 MB L2"),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x73af,
            "PCI ID registry: 1002:73af Navi 21 [Radeon RX 6900 XT]",
        ),
        shader_engines: policy(4, SHADER_ENGINES),
        asic_family_id: product(143, "Linux amdgpu_drm.h: AMDGPU_FAMILY_NV (GC 10.x)"),
    },
    hip: hip(KERNELS, KERNELS, KERNELS),
    supports_execution: false,
};

// ---------------------------------------------------------------------------
// gfx11: RDNA3 (GFX11)
// ---------------------------------------------------------------------------

#[cfg(feature = "gfx11")]
const FAMILY_GC11: Fact = product(145, "Linux amdgpu_drm.h: AMDGPU_FAMILY_GC_11_0_0");

/// The facts every RDNA3 model shares.
#[cfg(feature = "gfx11")]
#[allow(clippy::too_many_arguments)]
const fn rdna3(
    source: &'static str,
    cus: u64,
    memory_gib: u64,
    boost_mhz: u64,
    data_rate_mbps: u64,
    width_bits: u64,
    l2_mib: u64,
    shader_engines: u64,
    chip_id: Fact,
) -> AgentFacts {
    AgentFacts {
        wavefront_size: WAVE32,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(cus, source),
        simds_per_cu: product(2, RDNA_SIMDS),
        max_waves_per_cu: policy(32, WAVES_LLVM_RDNA),
        memory_bytes: product(memory_gib << 30, source),
        max_engine_clock_mhz: product(boost_mhz, source),
        memory_clock_mhz: policy(data_rate_mbps / 8, MEM_CLOCK_DATA_RATE),
        memory_width_bits: product(width_bits, source),
        l1_cache_bytes: policy(16 << 10, RDNA_L0),
        l2_cache_bytes: product(l2_mib << 20, source),
        cacheline_bytes: CACHELINE,
        chip_id,
        shader_engines: policy(shader_engines, SHADER_ENGINES),
        asic_family_id: FAMILY_GC11,
    }
}

/// gfx1100 (RDNA3, Navi 31), presented as an AMD Radeon RX 7900 XTX.
#[cfg(feature = "gfx11")]
pub static GFX1100: TargetDescriptor = TargetDescriptor {
    id: "gfx1100",
    aliases: &["rx7900xtx", "navi31"],
    arch: Arch::Gfx1100,
    feature: "gfx11",
    isa_name: "amdgcn-amd-amdhsa--gfx1100",
    gpu_target: "gfx1100",
    gpu_targets: &["gfx1100"],
    elf_machine: 0x41,
    product_name: "SoftGPU virtual gfx1100 (RX 7900 XTX model, no execution)",
    facts: rdna3(
        "AMD Radeon RX 7900 XTX specifications",
        96,
        24,
        2500,
        20000,
        384,
        6,
        6,
        product(
            0x744c,
            "PCI ID registry: 1002:744c Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]",
        ),
    ),
    hip: hip(NONE, KERNELS, KERNELS),
    supports_execution: false,
};

/// gfx1101 (RDNA3, Navi 32), presented as an AMD Radeon RX 7800 XT.
#[cfg(feature = "gfx11")]
pub static GFX1101: TargetDescriptor = TargetDescriptor {
    id: "gfx1101",
    aliases: &["rx7800xt", "navi32"],
    arch: Arch::Gfx1101,
    feature: "gfx11",
    isa_name: "amdgcn-amd-amdhsa--gfx1101",
    gpu_target: "gfx1101",
    gpu_targets: &["gfx1101"],
    elf_machine: 0x46,
    product_name: "SoftGPU virtual gfx1101 (RX 7800 XT model, no execution)",
    facts: rdna3(
        "AMD Radeon RX 7800 XT specifications",
        60,
        16,
        2430,
        19500,
        256,
        4,
        3,
        product(
            0x747e,
            "PCI ID registry: 1002:747e Navi 32 [Radeon RX 7700 XT / 7800 XT]",
        ),
    ),
    hip: hip(NONE, KERNELS, KERNELS),
    supports_execution: false,
};

/// gfx1102 (RDNA3, Navi 33), presented as an AMD Radeon RX 7600.
#[cfg(feature = "gfx11")]
pub static GFX1102: TargetDescriptor = TargetDescriptor {
    id: "gfx1102",
    aliases: &["rx7600", "navi33"],
    arch: Arch::Gfx1102,
    feature: "gfx11",
    isa_name: "amdgcn-amd-amdhsa--gfx1102",
    gpu_target: "gfx1102",
    gpu_targets: &["gfx1102"],
    elf_machine: 0x47,
    product_name: "SoftGPU virtual gfx1102 (RX 7600 model, no execution)",
    facts: rdna3(
        "AMD Radeon RX 7600 specifications",
        32,
        8,
        2655,
        18000,
        128,
        2,
        2,
        product(
            0x7480,
            "PCI ID registry: 1002:7480 Navi 33 [Radeon RX 7600/7600 XT/7600M XT/7600S/7700S / PRO W7600]",
        ),
    ),
    hip: hip(NONE, KERNELS, KERNELS),
    supports_execution: false,
};

// ---------------------------------------------------------------------------
// gfx12: RDNA4 (GFX12)
// ---------------------------------------------------------------------------

#[cfg(feature = "gfx12")]
const FAMILY_GC12: Fact = product(152, "Linux amdgpu_drm.h: AMDGPU_FAMILY_GC_12_0_0");
#[cfg(feature = "gfx12")]
const RX9060XT: &str = "AMD Radeon RX 9060 XT (16 GB) specifications";
#[cfg(feature = "gfx12")]
const RX9070XT: &str = "AMD Radeon RX 9070 XT specifications";

/// gfx1200 (RDNA4, Navi 44), presented as an AMD Radeon RX 9060 XT (16 GB).
#[cfg(feature = "gfx12")]
pub static GFX1200: TargetDescriptor = TargetDescriptor {
    id: "gfx1200",
    aliases: &["rx9060xt", "navi44"],
    arch: Arch::Gfx1200,
    feature: "gfx12",
    isa_name: "amdgcn-amd-amdhsa--gfx1200",
    gpu_target: "gfx1200",
    gpu_targets: &["gfx1200"],
    elf_machine: 0x48,
    product_name: "SoftGPU virtual gfx1200 (RX 9060 XT model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE32,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(32, RX9060XT),
        simds_per_cu: product(2, RDNA_SIMDS),
        max_waves_per_cu: policy(32, WAVES_LLVM_RDNA),
        memory_bytes: product(16 << 30, RX9060XT),
        max_engine_clock_mhz: product(3130, RX9060XT),
        memory_clock_mhz: policy(2500, MEM_CLOCK_DATA_RATE),
        memory_width_bits: product(128, RX9060XT),
        l1_cache_bytes: policy(16 << 10, RDNA_L0),
        l2_cache_bytes: product(4 << 20, RX9060XT),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x7590,
            "PCI ID registry: 1002:7590 Navi 44 [Radeon RX 9050 / 9060 XT]",
        ),
        shader_engines: policy(2, SHADER_ENGINES),
        asic_family_id: FAMILY_GC12,
    },
    hip: hip(NONE, KERNELS, KERNELS),
    supports_execution: false,
};

/// gfx1201 (RDNA4, Navi 48), presented as an AMD Radeon RX 9070 XT.
#[cfg(feature = "gfx12")]
pub static GFX1201: TargetDescriptor = TargetDescriptor {
    id: "gfx1201",
    aliases: &["rx9070xt", "navi48"],
    arch: Arch::Gfx1201,
    feature: "gfx12",
    isa_name: "amdgcn-amd-amdhsa--gfx1201",
    gpu_target: "gfx1201",
    gpu_targets: &["gfx1201"],
    elf_machine: 0x4e,
    product_name: "SoftGPU virtual gfx1201 (RX 9070 XT model, no execution)",
    facts: AgentFacts {
        wavefront_size: WAVE32,
        lds_bytes_per_workgroup: LDS_64K,
        workgroup_max_size: WG_MAX,
        workgroup_max_dim: WG_MAX,
        compute_units: product(64, RX9070XT),
        simds_per_cu: product(2, RDNA_SIMDS),
        max_waves_per_cu: policy(32, WAVES_LLVM_RDNA),
        memory_bytes: product(16 << 30, RX9070XT),
        max_engine_clock_mhz: product(2970, RX9070XT),
        memory_clock_mhz: policy(2500, MEM_CLOCK_DATA_RATE),
        memory_width_bits: product(256, RX9070XT),
        l1_cache_bytes: policy(16 << 10, RDNA_L0),
        l2_cache_bytes: product(8 << 20, RX9070XT),
        cacheline_bytes: CACHELINE,
        chip_id: product(
            0x7550,
            "PCI ID registry: 1002:7550 Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]",
        ),
        shader_engines: policy(4, SHADER_ENGINES),
        asic_family_id: FAMILY_GC12,
    },
    hip: hip(NONE, KERNELS, KERNELS),
    supports_execution: false,
};
