//! The static ISA target registry: the identity and facts each virtual GPU agent
//! advertises, each fact with its provenance.
//!
//! Why it exists: a virtual agent must answer HSA's questions (ISA name, wave
//! size, LDS, compute units, ...) with values a real program can rely on, and say
//! where every value comes from. A descriptor is an immutable `static`; nothing is
//! registered at run time, there is no global mutable state and no plugin ABI.
//!
//! Composition is chosen at build time: one cargo feature per target family
//! (`gfx9`, `gfx94`, `gfx95`, `gfx10`, `gfx11`, `gfx12`, all on by default), and
//! [`DESCRIPTORS`] lists the descriptors of the enabled families in the order
//! the features are listed. A build with one family selected contains only that
//! family's descriptors; the others are not compiled at all.
//!
//! How it fails: a [`Registry`] validates itself once, at construction (no
//! duplicate ids, aliases, GPU target names, architecture values or ELF machine
//! values; every descriptor consistent with itself; none claims execution). A
//! composition error is reported by [`Registry::ok`] and [`Registry::error`],
//! and every lookup then fails closed. An unknown name is a recoverable
//! [`LookupError`] that lists the supported ids.
//!
//! No descriptor claims execution: SoftGPU targets are model-only, kernels never
//! run, and this crate links no ISA execution code.

use std::fmt;
use std::sync::LazyLock;

pub mod targets;

#[cfg(feature = "gfx9")]
pub use targets::GFX90A;

/// Where a value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Provenance {
    /// LLVM's AMDGPUUsage document (processor table, wave size, LDS, e_flags),
    /// with the detail that applies.
    AmdgpuUsage(&'static str),
    /// A named public product fact (datasheet, ISA guide, PCI ID registry).
    Product(&'static str),
    /// No public fact applies: SoftGPU chose the value, and says why.
    Policy(&'static str),
    /// Measured by a named SoftGPU test against real software.
    Measured(&'static str),
}

impl Provenance {
    pub fn describe(&self) -> String {
        match self {
            Provenance::AmdgpuUsage(s) => format!("public ISA fact: LLVM AMDGPUUsage ({s})"),
            Provenance::Product(s) => format!("public product fact: {s}"),
            Provenance::Policy(s) => format!("SoftGPU policy: {s}"),
            Provenance::Measured(s) => format!("measured: {s}"),
        }
    }

    /// `isa`, `product`, `policy` or `measured`.
    pub fn kind(&self) -> &'static str {
        match self {
            Provenance::AmdgpuUsage(_) => "isa",
            Provenance::Product(_) => "product",
            Provenance::Policy(_) => "policy",
            Provenance::Measured(_) => "measured",
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

impl AgentFacts {
    /// Every fact with its name (the field name), in declaration order.
    pub fn named(&self) -> [(&'static str, Fact); 17] {
        [
            ("wavefront_size", self.wavefront_size),
            ("lds_bytes_per_workgroup", self.lds_bytes_per_workgroup),
            ("workgroup_max_size", self.workgroup_max_size),
            ("workgroup_max_dim", self.workgroup_max_dim),
            ("compute_units", self.compute_units),
            ("simds_per_cu", self.simds_per_cu),
            ("max_waves_per_cu", self.max_waves_per_cu),
            ("memory_bytes", self.memory_bytes),
            ("max_engine_clock_mhz", self.max_engine_clock_mhz),
            ("memory_clock_mhz", self.memory_clock_mhz),
            ("memory_width_bits", self.memory_width_bits),
            ("l1_cache_bytes", self.l1_cache_bytes),
            ("l2_cache_bytes", self.l2_cache_bytes),
            ("cacheline_bytes", self.cacheline_bytes),
            ("chip_id", self.chip_id),
            ("shader_engines", self.shader_engines),
            ("asic_family_id", self.asic_family_id),
        ]
    }
}

/// The architecture of a descriptor: one value per processor, so a lookup by
/// architecture names exactly one descriptor. The enum exists in every build;
/// a value whose family is not compiled in is simply not found.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum Arch {
    Gfx900,
    Gfx906,
    Gfx908,
    Gfx90a,
    Gfx940,
    Gfx941,
    Gfx942,
    Gfx950,
    Gfx1030,
    Gfx1100,
    Gfx1101,
    Gfx1102,
    Gfx1200,
    Gfx1201,
}

impl Arch {
    /// The LLVM processor name (`gfx90a`).
    pub fn processor(self) -> &'static str {
        match self {
            Arch::Gfx900 => "gfx900",
            Arch::Gfx906 => "gfx906",
            Arch::Gfx908 => "gfx908",
            Arch::Gfx90a => "gfx90a",
            Arch::Gfx940 => "gfx940",
            Arch::Gfx941 => "gfx941",
            Arch::Gfx942 => "gfx942",
            Arch::Gfx950 => "gfx950",
            Arch::Gfx1030 => "gfx1030",
            Arch::Gfx1100 => "gfx1100",
            Arch::Gfx1101 => "gfx1101",
            Arch::Gfx1102 => "gfx1102",
            Arch::Gfx1200 => "gfx1200",
            Arch::Gfx1201 => "gfx1201",
        }
    }

    /// The architecture generation, as AMD names it.
    pub fn generation(self) -> &'static str {
        match self {
            Arch::Gfx900 | Arch::Gfx906 => "GCN5 (Vega)",
            Arch::Gfx908 => "CDNA",
            Arch::Gfx90a => "CDNA2",
            Arch::Gfx940 | Arch::Gfx941 | Arch::Gfx942 => "CDNA3",
            Arch::Gfx950 => "CDNA4",
            Arch::Gfx1030 => "RDNA2",
            Arch::Gfx1100 | Arch::Gfx1101 | Arch::Gfx1102 => "RDNA3",
            Arch::Gfx1200 | Arch::Gfx1201 => "RDNA4",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor())
    }
}

/// An ELF `e_flags` machine value (`EF_AMDGPU_MACH_*`, the low 8 bits).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct ElfMachine(pub u32);

impl ElfMachine {
    /// `EF_AMDGPU_MACH` mask of `e_flags`.
    pub const MASK: u32 = 0xff;

    /// The machine value of a whole `e_flags` word (feature bits dropped).
    pub fn from_e_flags(e_flags: u32) -> Self {
        ElfMachine(e_flags & Self::MASK)
    }
}

/// Every AMDGCN `EF_AMDGPU_MACH` value of the ELF format and the processor it
/// names, by value: the `EF_AMDGPU_MACH_AMDGCN_*` constants of LLVM's
/// `BinaryFormat/ELF.h` and ROCr's `amd_hsa_elf.h`, up to gfx9-4-generic
/// (0x5f); reserved values are left out. LLVM 21 names 0x49 gfx1250 (ROCr
/// 6.4's and 7.2's headers still call it reserved) and no longer names gfx940
/// and gfx941 (0x40, 0x4b), which LLVM 15 and ROCr do; LLVM 22 (ROCm 7.2's
/// clang) adds 0x5a gfx1251, which ROCr 7.2's header does not list yet.
/// `tests/real_code_objects.rs` checks every value against llvm-readobj 22,
/// 21 and 15. The generic processors (`gfx9-generic` ... `gfx12-generic`,
/// code object v6 and later) are names of their own, never one of the
/// processors they run on. Code objects name
/// their processor with these whether or not SoftGPU models it; every
/// descriptor's `elf_machine` must map to its `id` here (checked when the
/// registry is validated), so the registry and this table cannot disagree.
pub static ELF_MACHINES: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x49, "gfx1250"),
    (0x4a, "gfx1151"),
    (0x4b, "gfx941"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
    (0x51, "gfx9-generic"),
    (0x52, "gfx10-1-generic"),
    (0x53, "gfx10-3-generic"),
    (0x54, "gfx11-generic"),
    (0x55, "gfx1152"),
    (0x58, "gfx1153"),
    (0x59, "gfx12-generic"),
    (0x5a, "gfx1251"),
    (0x5f, "gfx9-4-generic"),
];

/// The processor an `EF_AMDGPU_MACH` value names: the registry's descriptor
/// id when this build models the processor, else the [`ELF_MACHINES`] name
/// (the two agree: see there). `None` for a value no processor has.
pub fn processor_of_machine(m: ElfMachine) -> Option<&'static str> {
    let m = m.0 & ElfMachine::MASK;
    DESCRIPTORS
        .iter()
        .find(|d| d.elf_machine == m)
        .map(|d| d.id)
        .or_else(|| {
            ELF_MACHINES
                .iter()
                .find(|(v, _)| *v == m)
                .map(|(_, name)| *name)
        })
}

/// What one HIP version does with a target, as measured by
/// `tests/isa_hip_acceptance.rs`: a SoftGPU virtual agent with this target, a HIP
/// program that counts devices and reads their properties, and the same program
/// with an empty kernel compiled by that HIP's hipcc for the target and launched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HipSupport {
    /// HIP does not accept the agent as a device (its ISA table lacks the target):
    /// the device is not counted.
    NoDevice,
    /// HIP accepts the device, but that HIP's compiler cannot build code for the
    /// target, so no kernel can be launched on it.
    DeviceOnly,
    /// HIP accepts the device, and a kernel its hipcc compiled for the target is
    /// launched and captured (validated, not executed).
    Kernels,
}

impl HipSupport {
    /// True when HIP accepts the target as a device.
    pub fn device(self) -> bool {
        !matches!(self, HipSupport::NoDevice)
    }

    /// `no_device`, `device_only` or `kernels`.
    pub fn as_str(self) -> &'static str {
        match self {
            HipSupport::NoDevice => "no_device",
            HipSupport::DeviceOnly => "device_only",
            HipSupport::Kernels => "kernels",
        }
    }
}

/// The measured [`HipSupport`] of a target on the three HIP versions SoftGPU is
/// tested with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HipAcceptance {
    /// Debian bookworm's HIP 5.2.3 (the host's).
    pub hip_5_2: HipSupport,
    /// Debian sid's HIP 6.4.3 (the chroot of scripts/sid-chroot).
    pub hip_6_4: HipSupport,
    /// Debian experimental's HIP 7.2.4 (the chroot of
    /// `scripts/sid-chroot --rocm7`).
    pub hip_7_2: HipSupport,
}

/// Provenance of every [`HipAcceptance`] value.
pub const HIP_ACCEPTANCE_PROVENANCE: Provenance = Provenance::Measured(
    "tests/isa_hip_acceptance.rs runs HIP programs under the shim on HIP 5.2.3, 6.4.3 and 7.2.4",
);

/// An immutable target descriptor.
#[derive(Debug)]
pub struct TargetDescriptor {
    /// Canonical id, the LLVM processor name (`gfx90a`).
    pub id: &'static str,
    /// Product names and other aliases (lower case, no spaces).
    pub aliases: &'static [&'static str],
    /// The architecture enum value; its processor name is `id`.
    pub arch: Arch,
    /// The cargo feature (target family) that compiles this descriptor in.
    pub feature: &'static str,
    /// Full ISA name as HSA reports it: `amdgcn-amd-amdhsa--` + `gpu_target`.
    pub isa_name: &'static str,
    /// The GPU target the agent reports, with its feature settings, as in
    /// offload bundles (`gfx90a:sramecc+:xnack-`). Always `gpu_targets[0]`.
    pub gpu_target: &'static str,
    /// Every offload-bundle GPU target name whose code this agent can load:
    /// the reported target first, then the same processor with features left
    /// unspecified ("any").
    pub gpu_targets: &'static [&'static str],
    /// ELF `e_flags` machine value (EF_AMDGPU_MACH_*).
    pub elf_machine: u32,
    /// Marketing name reported as PRODUCT_NAME.
    pub product_name: &'static str,
    pub facts: AgentFacts,
    /// Which HIP versions accept this target as a device (measured).
    pub hip: HipAcceptance,
    /// Always false: SoftGPU models targets, it never executes their ISA.
    pub supports_execution: bool,
}

/// The prefix of every ISA name.
pub const ISA_PREFIX: &str = "amdgcn-amd-amdhsa--";

/// How the product name of every SoftGPU virtual GPU agent begins
/// ([`TargetDescriptor::product_name`]). A runtime below the shim whose GPU
/// agents carry such names is a SoftGPU copy standing in for ROCr, so nothing
/// ran there: the runtime and the report view both tell it by this prefix.
pub const STAND_IN_PREFIX: &str = "SoftGPU virtual";

/// Every descriptor compiled into this build, in registry order (the order in
/// which the cargo features are listed: gfx9, gfx94, gfx95, gfx10, gfx11, gfx12).
pub static DESCRIPTORS: &[&TargetDescriptor] = &[
    #[cfg(feature = "gfx9")]
    &targets::GFX900,
    #[cfg(feature = "gfx9")]
    &targets::GFX906,
    #[cfg(feature = "gfx9")]
    &targets::GFX908,
    #[cfg(feature = "gfx9")]
    &targets::GFX90A,
    #[cfg(feature = "gfx94")]
    &targets::GFX940,
    #[cfg(feature = "gfx94")]
    &targets::GFX941,
    #[cfg(feature = "gfx94")]
    &targets::GFX942,
    #[cfg(feature = "gfx95")]
    &targets::GFX950,
    #[cfg(feature = "gfx10")]
    &targets::GFX1030,
    #[cfg(feature = "gfx11")]
    &targets::GFX1100,
    #[cfg(feature = "gfx11")]
    &targets::GFX1101,
    #[cfg(feature = "gfx11")]
    &targets::GFX1102,
    #[cfg(feature = "gfx12")]
    &targets::GFX1200,
    #[cfg(feature = "gfx12")]
    &targets::GFX1201,
];

/// The default `SOFTGPU_TARGET`: `gfx90a`, or, in a build without the `gfx9`
/// family, the first family's representative.
#[cfg(feature = "gfx9")]
pub const DEFAULT_TARGET: &str = "gfx90a";
#[cfg(all(not(feature = "gfx9"), feature = "gfx94"))]
pub const DEFAULT_TARGET: &str = "gfx942";
#[cfg(all(not(any(feature = "gfx9", feature = "gfx94")), feature = "gfx95"))]
pub const DEFAULT_TARGET: &str = "gfx950";
#[cfg(all(
    not(any(feature = "gfx9", feature = "gfx94", feature = "gfx95")),
    feature = "gfx10"
))]
pub const DEFAULT_TARGET: &str = "gfx1030";
#[cfg(all(
    not(any(
        feature = "gfx9",
        feature = "gfx94",
        feature = "gfx95",
        feature = "gfx10"
    )),
    feature = "gfx11"
))]
pub const DEFAULT_TARGET: &str = "gfx1100";
#[cfg(all(
    not(any(
        feature = "gfx9",
        feature = "gfx94",
        feature = "gfx95",
        feature = "gfx10",
        feature = "gfx11"
    )),
    feature = "gfx12"
))]
pub const DEFAULT_TARGET: &str = "gfx1201";
/// No family selected: the registry is empty (and reports so); the default
/// names gfx90a, which is then not found, so every lookup fails closed.
#[cfg(not(any(
    feature = "gfx9",
    feature = "gfx94",
    feature = "gfx95",
    feature = "gfx10",
    feature = "gfx11",
    feature = "gfx12"
)))]
pub const DEFAULT_TARGET: &str = "gfx90a";

// ---------------------------------------------------------------------------
// Lookup
// ---------------------------------------------------------------------------

/// What [`Registry::find`] looks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Query<'q> {
    /// A canonical id, an alias, a GPU target name (`gfx90a:sramecc+:xnack-`) or
    /// a full ISA name (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`). Case and
    /// surrounding blanks are ignored.
    Name(&'q str),
    /// An architecture enum value.
    Arch(Arch),
    /// An ELF machine value.
    Machine(ElfMachine),
}

impl<'q> From<&'q str> for Query<'q> {
    fn from(s: &'q str) -> Self {
        Query::Name(s)
    }
}

impl<'q> From<&'q String> for Query<'q> {
    fn from(s: &'q String) -> Self {
        Query::Name(s)
    }
}

impl From<Arch> for Query<'_> {
    fn from(a: Arch) -> Self {
        Query::Arch(a)
    }
}

impl From<ElfMachine> for Query<'_> {
    fn from(m: ElfMachine) -> Self {
        Query::Machine(m)
    }
}

impl fmt::Display for Query<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Query::Name(s) => write!(f, "{:?}", s.trim()),
            Query::Arch(a) => write!(f, "architecture {a}"),
            Query::Machine(m) => write!(f, "ELF machine {:#x}", m.0),
        }
    }
}

/// Why a registry is invalid. The names are the descriptors' ids.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum RegistryError {
    /// No target family was selected at build time.
    Empty,
    /// The same name (compared without case) is an id, alias or GPU target
    /// name of two descriptors, or appears twice in one descriptor.
    DuplicateName {
        name: String,
        first: String,
        second: String,
    },
    /// Two descriptors have the same architecture value.
    DuplicateArch {
        arch: Arch,
        first: String,
        second: String,
    },
    /// Two descriptors have the same ELF machine value.
    DuplicateMachine {
        machine: u32,
        first: String,
        second: String,
    },
    /// A descriptor contradicts itself (its ISA name, GPU targets, architecture
    /// or machine value do not agree with its id).
    Inconsistent { id: String, problem: String },
    /// A descriptor claims execution, which no SoftGPU build can provide.
    ClaimsExecution { id: String },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Empty => f.write_str(
                "no target family was selected at build time (cargo features gfx9, gfx94, gfx95, gfx10, gfx11, gfx12)",
            ),
            RegistryError::DuplicateName {
                name,
                first,
                second,
            } => {
                if first == second {
                    write!(f, "the name {name:?} appears twice in descriptor {first}")
                } else {
                    write!(
                        f,
                        "the name {name:?} belongs to two descriptors: {first} and {second}"
                    )
                }
            }
            RegistryError::DuplicateArch {
                arch,
                first,
                second,
            } => write!(
                f,
                "architecture {arch} belongs to two descriptors: {first} and {second}"
            ),
            RegistryError::DuplicateMachine {
                machine,
                first,
                second,
            } => write!(
                f,
                "ELF machine {machine:#x} belongs to two descriptors: {first} and {second}"
            ),
            RegistryError::Inconsistent { id, problem } => {
                write!(f, "descriptor {id} is inconsistent: {problem}")
            }
            RegistryError::ClaimsExecution { id } => write!(
                f,
                "descriptor {id} claims execution; SoftGPU targets are model-only"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// A failed lookup. Recoverable: the caller reports it and carries on.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum LookupError {
    /// Nothing in the registry answers to the query.
    Unknown {
        /// The query, as written in messages.
        query: String,
        /// The canonical ids of this build, in registry order.
        supported: Vec<String>,
    },
    /// The registry is invalid, so every lookup fails closed.
    InvalidRegistry(RegistryError),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::Unknown { query, supported } => write!(
                f,
                "unknown GPU target {query}; supported ids: {}",
                if supported.is_empty() {
                    "none".to_string()
                } else {
                    supported.join(", ")
                }
            ),
            LookupError::InvalidRegistry(e) => write!(
                f,
                "the target registry of this build is invalid, so no target can be used: {e}"
            ),
        }
    }
}

impl std::error::Error for LookupError {}

// ---------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------

/// A validated set of descriptors. [`registry`] is this build's; tests build
/// their own from any slice.
#[derive(Debug)]
pub struct Registry<'a> {
    entries: &'a [&'a TargetDescriptor],
    status: Result<(), RegistryError>,
}

/// What kind of name an entry is, for the duplicate check.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum NameKind {
    Id,
    Alias,
    GpuTarget,
}

impl<'a> Registry<'a> {
    /// Validates `entries` once; the result is kept for [`Registry::ok`].
    pub fn new(entries: &'a [&'a TargetDescriptor]) -> Self {
        Registry {
            entries,
            status: validate(entries),
        }
    }

    /// True when the composition is valid and lookups can succeed.
    pub fn ok(&self) -> bool {
        self.status.is_ok()
    }

    /// The composition error, if any.
    pub fn error(&self) -> Option<&RegistryError> {
        self.status.as_ref().err()
    }

    /// Every descriptor, in registry order, valid or not (for listing; lookups
    /// go through [`Registry::find`], which fails closed).
    pub fn descriptors(&self) -> &'a [&'a TargetDescriptor] {
        self.entries
    }

    /// The canonical ids, in registry order.
    pub fn ids(&self) -> Vec<&'a str> {
        self.entries.iter().map(|d| d.id).collect()
    }

    /// Every name `find` accepts as an id or alias: ids first, then aliases.
    pub fn names(&self) -> Vec<&'a str> {
        let mut v = self.ids();
        v.extend(self.entries.iter().flat_map(|d| d.aliases.iter().copied()));
        v
    }

    /// Find the descriptor for a canonical id, alias, GPU target name, ISA name,
    /// architecture value or ELF machine value. Fails closed when the registry
    /// is invalid.
    pub fn find<'q>(
        &self,
        query: impl Into<Query<'q>>,
    ) -> Result<&'a TargetDescriptor, LookupError> {
        let query = query.into();
        if let Err(e) = &self.status {
            return Err(LookupError::InvalidRegistry(e.clone()));
        }
        let found = match query {
            Query::Name(name) => {
                let name = name.trim();
                match strip_prefix_ignore_case(name, ISA_PREFIX) {
                    // A full ISA name names a GPU target.
                    Some(target) => self
                        .entries
                        .iter()
                        .find(|d| d.gpu_targets.iter().any(|t| t.eq_ignore_ascii_case(target))),
                    None => self.entries.iter().find(|d| {
                        d.id.eq_ignore_ascii_case(name)
                            || d.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
                            || d.gpu_targets.iter().any(|t| t.eq_ignore_ascii_case(name))
                    }),
                }
            }
            Query::Arch(a) => self.entries.iter().find(|d| d.arch == a),
            Query::Machine(m) => self.entries.iter().find(|d| d.elf_machine == m.0),
        };
        found.copied().ok_or_else(|| LookupError::Unknown {
            query: query.to_string(),
            supported: self.ids().into_iter().map(String::from).collect(),
        })
    }
}

fn strip_prefix_ignore_case<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

fn inconsistent(d: &TargetDescriptor, problem: String) -> RegistryError {
    RegistryError::Inconsistent {
        id: d.id.to_string(),
        problem,
    }
}

/// Check one descriptor against itself.
fn validate_one(d: &TargetDescriptor) -> Result<(), RegistryError> {
    if d.supports_execution {
        return Err(RegistryError::ClaimsExecution {
            id: d.id.to_string(),
        });
    }
    if d.arch.processor() != d.id {
        return Err(inconsistent(
            d,
            format!("architecture {} is not its id", d.arch),
        ));
    }
    if d.gpu_targets.first() != Some(&d.gpu_target) {
        return Err(inconsistent(
            d,
            format!(
                "its reported GPU target {} is not the first of its GPU targets",
                d.gpu_target
            ),
        ));
    }
    if d.isa_name.strip_prefix(ISA_PREFIX) != Some(d.gpu_target) {
        return Err(inconsistent(
            d,
            format!(
                "ISA name {} is not {ISA_PREFIX}{}",
                d.isa_name, d.gpu_target
            ),
        ));
    }
    for t in d.gpu_targets {
        let processor = t.split(':').next().unwrap_or_default();
        if processor != d.id {
            return Err(inconsistent(
                d,
                format!("GPU target {t} is for another processor"),
            ));
        }
    }
    if d.elf_machine == 0 || d.elf_machine > ElfMachine::MASK {
        return Err(inconsistent(
            d,
            format!("ELF machine {:#x} is outside EF_AMDGPU_MACH", d.elf_machine),
        ));
    }
    Ok(())
}

/// Check a whole composition. The first problem found, in registry order, is
/// reported.
fn validate(entries: &[&TargetDescriptor]) -> Result<(), RegistryError> {
    if entries.is_empty() {
        return Err(RegistryError::Empty);
    }
    for d in entries {
        validate_one(d)?;
    }
    for (j, b) in entries.iter().enumerate() {
        for a in &entries[..j] {
            if a.arch == b.arch {
                return Err(RegistryError::DuplicateArch {
                    arch: a.arch,
                    first: a.id.to_string(),
                    second: b.id.to_string(),
                });
            }
            if a.elf_machine == b.elf_machine {
                return Err(RegistryError::DuplicateMachine {
                    machine: a.elf_machine,
                    first: a.id.to_string(),
                    second: b.id.to_string(),
                });
            }
        }
    }
    // After the duplicate checks, so a duplicate is reported as one.
    for d in entries {
        match ELF_MACHINES.iter().find(|(v, _)| *v == d.elf_machine) {
            Some((_, name)) if *name == d.id => {}
            other => {
                return Err(inconsistent(
                    d,
                    format!(
                        "ELF machine {:#x} names {} in the ELF format, not {}",
                        d.elf_machine,
                        other.map_or("no processor", |(_, n)| n),
                        d.id
                    ),
                ));
            }
        }
    }
    // Every name with its owner and kind, in registry order.
    let mut names: Vec<(String, usize, NameKind)> = Vec::new();
    for (i, d) in entries.iter().enumerate() {
        names.push((d.id.to_ascii_lowercase(), i, NameKind::Id));
        names.extend(
            d.aliases
                .iter()
                .map(|a| (a.to_ascii_lowercase(), i, NameKind::Alias)),
        );
        names.extend(
            d.gpu_targets
                .iter()
                .map(|t| (t.to_ascii_lowercase(), i, NameKind::GpuTarget)),
        );
    }
    for (j, (name, owner_b, kind_b)) in names.iter().enumerate() {
        for (other, owner_a, kind_a) in &names[..j] {
            if other != name {
                continue;
            }
            // The one allowed repeat: a descriptor's bare processor name is
            // both its id and one of its GPU targets.
            let same_descriptor_id_and_target = owner_a == owner_b
                && matches!(
                    (kind_a, kind_b),
                    (NameKind::Id, NameKind::GpuTarget) | (NameKind::GpuTarget, NameKind::Id)
                );
            if !same_descriptor_id_and_target {
                return Err(RegistryError::DuplicateName {
                    name: name.clone(),
                    first: entries[*owner_a].id.to_string(),
                    second: entries[*owner_b].id.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// This build's registry, validated on first use.
pub fn registry() -> &'static Registry<'static> {
    static REGISTRY: LazyLock<Registry<'static>> = LazyLock::new(|| Registry::new(DESCRIPTORS));
    &REGISTRY
}

/// Find a descriptor of this build (see [`Registry::find`]).
pub fn find<'q>(query: impl Into<Query<'q>>) -> Result<&'static TargetDescriptor, LookupError> {
    registry().find(query)
}

/// Every accepted id and alias of this build, ids first.
pub fn supported_names() -> Vec<&'static str> {
    registry().names()
}

/// The canonical ids of this build, in registry order.
pub fn supported_ids() -> Vec<&'static str> {
    registry().ids()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_registry_is_valid_and_claims_no_execution() {
        let r = registry();
        assert!(r.ok(), "{:?}", r.error());
        assert!(r.descriptors().iter().all(|d| !d.supports_execution));
    }

    #[test]
    fn every_virtual_agent_product_name_begins_with_the_stand_in_prefix() {
        for d in DESCRIPTORS {
            assert!(d.product_name.starts_with(STAND_IN_PREFIX), "{}", d.id);
        }
    }

    #[test]
    fn the_default_target_is_in_this_build() {
        assert_eq!(find(DEFAULT_TARGET).unwrap().id, DEFAULT_TARGET);
    }

    #[cfg(feature = "gfx9")]
    #[test]
    fn gfx90a_answers_to_every_kind_of_query() {
        for q in [
            Query::Name("gfx90a"),
            Query::Name("MI210"),
            Query::Name(" gfx90a:sramecc+:xnack- "),
            Query::Name("gfx90a:xnack-"),
            Query::Name("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            Query::Arch(Arch::Gfx90a),
            Query::Machine(ElfMachine(0x3f)),
            Query::Machine(ElfMachine::from_e_flags(0x53f)),
        ] {
            assert_eq!(find(q).map(|d| d.id), Ok("gfx90a"), "{q}");
        }
    }

    #[test]
    fn unknown_names_fail_closed_listing_the_supported_ids() {
        for q in [
            Query::Name("gfx9999"),
            Query::Name(""),
            Query::Name("amdgcn-amd-amdhsa--mi210"),
            Query::Machine(ElfMachine(0)),
        ] {
            match find(q) {
                Err(LookupError::Unknown { supported, .. }) => {
                    assert_eq!(supported, supported_ids());
                }
                other => panic!("{q}: {other:?}"),
            }
        }
        let msg = find("gfx9999").unwrap_err().to_string();
        assert!(
            msg.contains("gfx9999") && msg.contains(DEFAULT_TARGET),
            "{msg}"
        );
    }
}
