//! ISA target descriptors: the identity and facts a virtual GPU agent
//! advertises, each with its provenance.
//!
//! Descriptors are immutable `static`s. Every fact names where it comes from: a
//! public ISA fact (LLVM AMDGPUUsage), a named product datasheet or public
//! registry, or SoftGPU policy where no public fact applies. No descriptor claims
//! execution: SoftGPU targets are model-only and kernels never run.
//!
//! This build carries the gfx90a descriptor that the virtual runtime needs; the
//! full multi-target registry (issue 4) grows from this shape.

/// Where a value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Provenance {
    /// LLVM's AMDGPUUsage document (processor table, wave size, LDS, e_flags).
    AmdgpuUsage,
    /// A named public product fact (datasheet, PCI ID registry).
    Product(&'static str),
    /// No public fact applies: SoftGPU chose the value.
    Policy(&'static str),
}

impl Provenance {
    pub fn describe(&self) -> String {
        match self {
            Provenance::AmdgpuUsage => "public ISA fact: LLVM AMDGPUUsage".to_string(),
            Provenance::Product(s) => format!("public product fact: {s}"),
            Provenance::Policy(s) => format!("SoftGPU policy: {s}"),
        }
    }
}

/// One advertised value and its provenance.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Fact {
    pub value: u64,
    pub provenance: Provenance,
}

/// The facts a virtual GPU agent advertises.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct AgentFacts {
    pub wavefront_size: Fact,
    pub lds_bytes_per_workgroup: Fact,
    pub workgroup_max_size: Fact,
    pub workgroup_max_dim: Fact,
    pub compute_units: Fact,
    pub simds_per_cu: Fact,
    pub max_waves_per_cu: Fact,
    pub memory_bytes: Fact,
    pub max_engine_clock_mhz: Fact,
    pub memory_clock_mhz: Fact,
    pub memory_width_bits: Fact,
    pub l1_cache_bytes: Fact,
    pub l2_cache_bytes: Fact,
    pub cacheline_bytes: Fact,
    pub chip_id: Fact,
    pub shader_engines: Fact,
    pub asic_family_id: Fact,
}

/// An immutable target descriptor.
#[derive(Debug)]
pub struct TargetDescriptor {
    /// Canonical id, e.g. `gfx90a`.
    pub id: &'static str,
    /// Product names and other aliases.
    pub aliases: &'static [&'static str],
    /// Full ISA name as HSA reports it.
    pub isa_name: &'static str,
    /// GPU target string with features, as in offload bundles.
    pub gpu_target: &'static str,
    /// ELF `e_flags` machine value (EF_AMDGPU_MACH_*).
    pub elf_machine: u32,
    /// Marketing name reported as PRODUCT_NAME.
    pub product_name: &'static str,
    pub facts: AgentFacts,
    /// Always false: SoftGPU models targets, it never executes their ISA.
    pub supports_execution: bool,
}

const AMDGPU_USAGE: Provenance = Provenance::AmdgpuUsage;
const MI210: Provenance = Provenance::Product("AMD Instinct MI210 datasheet");

/// gfx90a (CDNA2), presented as an AMD Instinct MI210.
pub static GFX90A: TargetDescriptor = TargetDescriptor {
    id: "gfx90a",
    aliases: &["mi210", "cdna2"],
    isa_name: "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
    gpu_target: "gfx90a:sramecc+:xnack-",
    elf_machine: 0x3f,
    product_name: "SoftGPU virtual gfx90a (MI210 model, no execution)",
    facts: AgentFacts {
        wavefront_size: Fact {
            value: 64,
            provenance: AMDGPU_USAGE,
        },
        lds_bytes_per_workgroup: Fact {
            value: 65536,
            provenance: AMDGPU_USAGE,
        },
        workgroup_max_size: Fact {
            value: 1024,
            provenance: AMDGPU_USAGE,
        },
        workgroup_max_dim: Fact {
            value: 1024,
            provenance: AMDGPU_USAGE,
        },
        compute_units: Fact {
            value: 104,
            provenance: MI210,
        },
        simds_per_cu: Fact {
            value: 4,
            provenance: Provenance::Product("AMD CDNA2 instruction set architecture guide"),
        },
        max_waves_per_cu: Fact {
            value: 32,
            provenance: Provenance::Product(
                "AMD CDNA2 instruction set architecture guide (8 waves per SIMD)",
            ),
        },
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
        l1_cache_bytes: Fact {
            value: 16 << 10,
            provenance: Provenance::Product(
                "AMD CDNA2 instruction set architecture guide (vector L1 per CU)",
            ),
        },
        l2_cache_bytes: Fact {
            value: 8 << 20,
            provenance: MI210,
        },
        cacheline_bytes: Fact {
            value: 128,
            provenance: Provenance::Policy(
                "CDNA2 L2 line size is not in a public datasheet; 128 is the conservative value",
            ),
        },
        chip_id: Fact {
            value: 0x740f,
            provenance: Provenance::Product("PCI ID registry: 1002:740f AMD Instinct MI210"),
        },
        shader_engines: Fact {
            value: 8,
            provenance: Provenance::Policy(
                "shader engine count is not published; HIP only displays it",
            ),
        },
        asic_family_id: Fact {
            value: 141,
            provenance: Provenance::Product("Linux amdgpu_drm.h: AMDGPU_FAMILY_AI (gfx9)"),
        },
    },
    supports_execution: false,
};

/// Every descriptor in this build, in registry order.
pub static REGISTRY: &[&TargetDescriptor] = &[&GFX90A];

/// The default `SOFTGPU_TARGET`.
pub const DEFAULT_TARGET: &str = "gfx90a";

/// Find a descriptor by canonical id or alias (case-insensitive).
pub fn find(name: &str) -> Option<&'static TargetDescriptor> {
    let name = name.trim();
    REGISTRY.iter().copied().find(|d| {
        d.id.eq_ignore_ascii_case(name) || d.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// Every accepted name, ids first.
pub fn supported_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = REGISTRY.iter().map(|d| d.id).collect();
    v.extend(REGISTRY.iter().flat_map(|d| d.aliases.iter().copied()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_descriptor_claims_execution() {
        assert!(REGISTRY.iter().all(|d| !d.supports_execution));
    }

    #[test]
    fn lookup_by_id_and_alias_works_and_unknown_fails_closed() {
        assert_eq!(find("gfx90a").unwrap().id, "gfx90a");
        assert_eq!(find("MI210").unwrap().id, "gfx90a");
        assert!(find("gfx9999").is_none());
    }
}
