//! The static ISA target registry (`src/isa`): composition, validation, lookups, the
//! descriptors' facts, `softgpu targets`, and builds with one target family selected.
//!
//! Mirrors the reference design's registry tests: registry order is preserved; duplicate
//! aliases (and ids, GPU target names, machine values, architectures) are detected and make
//! `ok()` false; every kind of lookup works, and an unknown one fails closed; a build with one
//! target family selected contains only it; no descriptor claims execution.
//!
//! The one-family builds run `cargo build --no-default-features --features <family> --bin
//! softgpu` into `<target>/tmp/isa-feature-builds` (debug profile; the first build compiles
//! the dependencies, about a minute on two cores, then each family takes about 12 s) and ask
//! each build's `softgpu targets --json` what it contains. A compile-time `cfg!` check could
//! only ever see the one feature set this test binary was built with; the built binaries are
//! the real thing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use softgpu_hsa::isa::{
    self, AgentFacts, Arch, ElfMachine, Fact, HipAcceptance, HipSupport, LookupError, Provenance,
    Query, Registry, RegistryError, TargetDescriptor,
};

/// The families in Cargo.toml's order, with the ids each one compiles in, in registry order.
const FAMILIES: &[(&str, &[&str])] = &[
    ("gfx9", &["gfx900", "gfx906", "gfx908", "gfx90a"]),
    ("gfx94", &["gfx940", "gfx941", "gfx942"]),
    ("gfx95", &["gfx950"]),
    ("gfx10", &["gfx1030"]),
    ("gfx11", &["gfx1100", "gfx1101", "gfx1102"]),
    ("gfx12", &["gfx1200", "gfx1201"]),
];

/// LLVM AMDGPUUsage's EF_AMDGPU_MACH_* values.
const MACHINES: &[(&str, u32)] = &[
    ("gfx900", 0x2c),
    ("gfx906", 0x2f),
    ("gfx908", 0x30),
    ("gfx90a", 0x3f),
    ("gfx940", 0x40),
    ("gfx941", 0x4b),
    ("gfx942", 0x4c),
    ("gfx950", 0x4f),
    ("gfx1030", 0x36),
    ("gfx1100", 0x41),
    ("gfx1101", 0x46),
    ("gfx1102", 0x47),
    ("gfx1200", 0x48),
    ("gfx1201", 0x4e),
];

fn family_enabled(family: &str) -> bool {
    match family {
        "gfx9" => cfg!(feature = "gfx9"),
        "gfx94" => cfg!(feature = "gfx94"),
        "gfx95" => cfg!(feature = "gfx95"),
        "gfx10" => cfg!(feature = "gfx10"),
        "gfx11" => cfg!(feature = "gfx11"),
        "gfx12" => cfg!(feature = "gfx12"),
        other => panic!("unknown family {other}"),
    }
}

// ---------------------------------------------------------------------------
// Hand-made descriptors for composition tests
// ---------------------------------------------------------------------------

fn fact(value: u64) -> Fact {
    Fact {
        value,
        provenance: Provenance::Policy("test descriptor"),
    }
}

fn facts() -> AgentFacts {
    AgentFacts {
        wavefront_size: fact(64),
        lds_bytes_per_workgroup: fact(65536),
        workgroup_max_size: fact(1024),
        workgroup_max_dim: fact(1024),
        compute_units: fact(1),
        simds_per_cu: fact(4),
        max_waves_per_cu: fact(32),
        memory_bytes: fact(1 << 30),
        max_engine_clock_mhz: fact(1000),
        memory_clock_mhz: fact(1000),
        memory_width_bits: fact(64),
        l1_cache_bytes: fact(16384),
        l2_cache_bytes: fact(1 << 20),
        cacheline_bytes: fact(128),
        chip_id: fact(0),
        shader_engines: fact(1),
        asic_family_id: fact(141),
    }
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// A consistent descriptor for `arch`, reporting `<processor>:xnack-`.
fn desc(arch: Arch, aliases: &'static [&'static str], machine: u32) -> TargetDescriptor {
    let id = arch.processor();
    let target = leak(format!("{id}:xnack-"));
    TargetDescriptor {
        id,
        aliases,
        arch,
        feature: "test",
        isa_name: leak(format!("{}{target}", isa::ISA_PREFIX)),
        gpu_target: target,
        gpu_targets: Box::leak(vec![target, id].into_boxed_slice()),
        elf_machine: machine,
        product_name: "test descriptor",
        facts: facts(),
        hip: HipAcceptance {
            hip_5_2: HipSupport::NoDevice,
            hip_6_4: HipSupport::NoDevice,
            hip_7_2: HipSupport::NoDevice,
        },
        supports_execution: false,
    }
}

fn registry_of(ds: Vec<TargetDescriptor>) -> Registry<'static> {
    let ds: &'static [TargetDescriptor] = Box::leak(ds.into_boxed_slice());
    let refs: Vec<&'static TargetDescriptor> = ds.iter().collect();
    Registry::new(Box::leak(refs.into_boxed_slice()))
}

/// Every lookup of `r` fails with the registry's own error.
fn assert_every_lookup_fails_closed(r: &Registry<'_>) {
    let e = r.error().expect("the registry is invalid").clone();
    for d in r.descriptors() {
        let mut queries = vec![
            Query::Name(d.id),
            Query::Name(d.gpu_target),
            Query::Name(d.isa_name),
            Query::Arch(d.arch),
            Query::Machine(ElfMachine(d.elf_machine)),
        ];
        queries.extend(d.aliases.iter().map(|a| Query::Name(a)));
        for q in queries {
            assert_eq!(
                r.find(q).map(|d| d.id),
                Err(LookupError::InvalidRegistry(e.clone())),
                "{q} must fail closed"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Composition and validation
// ---------------------------------------------------------------------------

#[test]
fn registry_order_is_the_order_of_the_cargo_features() {
    let expected: Vec<&str> = FAMILIES
        .iter()
        .filter(|(f, _)| family_enabled(f))
        .flat_map(|(_, ids)| ids.iter().copied())
        .collect();
    assert_eq!(isa::supported_ids(), expected);
    let features: Vec<&str> = isa::DESCRIPTORS.iter().map(|d| d.feature).collect();
    let mut sorted = features.clone();
    sorted.sort_by_key(|f| FAMILIES.iter().position(|(g, _)| g == f));
    assert_eq!(features, sorted, "descriptors grouped in feature order");
}

#[test]
fn a_registry_keeps_the_order_it_was_given() {
    let r = registry_of(vec![
        desc(Arch::Gfx1201, &[], 0x4e),
        desc(Arch::Gfx900, &[], 0x2c),
        desc(Arch::Gfx942, &[], 0x4c),
    ]);
    assert!(r.ok(), "{:?}", r.error());
    assert_eq!(r.ids(), ["gfx1201", "gfx900", "gfx942"]);
    let msg = r.find("gfx1").unwrap_err().to_string();
    assert!(
        msg.contains("supported ids: gfx1201, gfx900, gfx942"),
        "{msg}"
    );
}

#[cfg(all(
    feature = "gfx9",
    feature = "gfx94",
    feature = "gfx95",
    feature = "gfx10",
    feature = "gfx11",
    feature = "gfx12"
))]
#[test]
fn the_default_build_covers_every_target_the_issue_lists() {
    let all: Vec<&str> = FAMILIES
        .iter()
        .flat_map(|(_, ids)| ids.iter().copied())
        .collect();
    assert_eq!(isa::supported_ids(), all);
    assert!(isa::registry().ok(), "{:?}", isa::registry().error());
    assert_eq!(isa::DEFAULT_TARGET, "gfx90a");
}

#[test]
fn duplicate_aliases_are_detected_and_every_lookup_then_fails_closed() {
    let r = registry_of(vec![
        desc(Arch::Gfx90a, &["mi210", "twin"], 0x3f),
        desc(Arch::Gfx942, &["mi300x", "TWIN"], 0x4c),
    ]);
    assert!(!r.ok());
    assert_eq!(
        r.error(),
        Some(&RegistryError::DuplicateName {
            name: "twin".into(),
            first: "gfx90a".into(),
            second: "gfx942".into(),
        })
    );
    assert_every_lookup_fails_closed(&r);
    let msg = r.find("gfx90a").unwrap_err().to_string();
    assert!(msg.contains("invalid") && msg.contains("twin"), "{msg}");
}

#[test]
fn an_alias_repeated_inside_one_descriptor_is_a_duplicate() {
    let r = registry_of(vec![desc(Arch::Gfx90a, &["mi210", "mi210"], 0x3f)]);
    assert!(matches!(
        r.error(),
        Some(RegistryError::DuplicateName { name, first, second })
            if name == "mi210" && first == "gfx90a" && second == "gfx90a"
    ));
    assert_every_lookup_fails_closed(&r);
    // An alias equal to the descriptor's own id is a duplicate too.
    let r = registry_of(vec![desc(Arch::Gfx90a, &["GFX90A"], 0x3f)]);
    assert!(!r.ok());
}

#[test]
fn an_alias_equal_to_another_descriptors_id_or_gpu_target_is_a_duplicate() {
    let r = registry_of(vec![
        desc(Arch::Gfx90a, &[], 0x3f),
        desc(Arch::Gfx942, &["gfx90a"], 0x4c),
    ]);
    assert!(matches!(
        r.error(),
        Some(RegistryError::DuplicateName { .. })
    ));
    assert_every_lookup_fails_closed(&r);
    let r = registry_of(vec![
        desc(Arch::Gfx90a, &[], 0x3f),
        desc(Arch::Gfx942, &["gfx90a:xnack-"], 0x4c),
    ]);
    assert!(matches!(
        r.error(),
        Some(RegistryError::DuplicateName { name, .. }) if name == "gfx90a:xnack-"
    ));
}

#[test]
fn duplicate_machine_values_are_detected() {
    let r = registry_of(vec![
        desc(Arch::Gfx90a, &[], 0x3f),
        desc(Arch::Gfx942, &[], 0x3f),
    ]);
    assert_eq!(
        r.error(),
        Some(&RegistryError::DuplicateMachine {
            machine: 0x3f,
            first: "gfx90a".into(),
            second: "gfx942".into(),
        })
    );
    assert_every_lookup_fails_closed(&r);
}

#[test]
fn duplicate_ids_and_architectures_are_detected() {
    let r = registry_of(vec![
        desc(Arch::Gfx90a, &[], 0x3f),
        desc(Arch::Gfx90a, &[], 0x40),
    ]);
    assert_eq!(
        r.error(),
        Some(&RegistryError::DuplicateArch {
            arch: Arch::Gfx90a,
            first: "gfx90a".into(),
            second: "gfx90a".into(),
        })
    );
    assert_every_lookup_fails_closed(&r);
}

#[test]
fn a_descriptor_that_claims_execution_makes_the_registry_invalid() {
    let mut d = desc(Arch::Gfx90a, &[], 0x3f);
    d.supports_execution = true;
    let r = registry_of(vec![desc(Arch::Gfx942, &[], 0x4c), d]);
    assert_eq!(
        r.error(),
        Some(&RegistryError::ClaimsExecution {
            id: "gfx90a".into()
        })
    );
    assert_every_lookup_fails_closed(&r);
}

#[test]
fn a_descriptor_that_contradicts_itself_makes_the_registry_invalid() {
    let mut wrong_isa = desc(Arch::Gfx90a, &[], 0x3f);
    wrong_isa.isa_name = "amdgcn-amd-amdhsa--gfx90a:xnack+";
    let mut wrong_arch = desc(Arch::Gfx90a, &[], 0x3f);
    wrong_arch.arch = Arch::Gfx942;
    let mut foreign_target = desc(Arch::Gfx90a, &[], 0x3f);
    foreign_target.gpu_targets = &["gfx90a:xnack-", "gfx942"];
    let mut first_not_reported = desc(Arch::Gfx90a, &[], 0x3f);
    first_not_reported.gpu_targets = &["gfx90a", "gfx90a:xnack-"];
    let mut wide_machine = desc(Arch::Gfx90a, &[], 0x3f);
    wide_machine.elf_machine = 0x53f;
    for d in [
        wrong_isa,
        wrong_arch,
        foreign_target,
        first_not_reported,
        wide_machine,
    ] {
        let r = registry_of(vec![d]);
        assert!(
            matches!(r.error(), Some(RegistryError::Inconsistent { id, .. }) if id == "gfx90a"),
            "{:?}",
            r.error()
        );
        assert_every_lookup_fails_closed(&r);
    }
}

#[test]
fn an_empty_registry_is_invalid_and_finds_nothing() {
    let r = Registry::new(&[]);
    assert_eq!(r.error(), Some(&RegistryError::Empty));
    assert!(!r.ok());
    assert_eq!(
        r.find("gfx90a").map(|d| d.id),
        Err(LookupError::InvalidRegistry(RegistryError::Empty))
    );
}

// ---------------------------------------------------------------------------
// Lookups
// ---------------------------------------------------------------------------

#[test]
fn every_kind_of_lookup_works_on_every_descriptor_of_this_build() {
    let r = isa::registry();
    assert!(r.ok(), "{:?}", r.error());
    for d in r.descriptors() {
        let mut queries: Vec<Query<'_>> = vec![
            Query::Name(d.id),
            Query::Name(d.isa_name),
            Query::Arch(d.arch),
            Query::Machine(ElfMachine(d.elf_machine)),
            // A whole e_flags word: xnack and sramecc bits on top of the machine.
            Query::Machine(ElfMachine::from_e_flags(d.elf_machine | 0x500)),
        ];
        queries.extend(d.aliases.iter().map(|a| Query::Name(a)));
        queries.extend(d.gpu_targets.iter().map(|t| Query::Name(t)));
        let upper = d.id.to_uppercase();
        queries.push(Query::Name(&upper));
        let padded = format!("  {}\t", d.gpu_target);
        queries.push(Query::Name(&padded));
        for q in queries {
            let found = isa::find(q).unwrap_or_else(|e| panic!("{q}: {e}"));
            assert!(std::ptr::eq(found, *d), "{q} found {}", found.id);
        }
    }
}

#[test]
fn unknown_names_architectures_and_machines_fail_closed_listing_the_supported_ids() {
    let r = registry_of(vec![
        desc(Arch::Gfx90a, &["mi210"], 0x3f),
        desc(Arch::Gfx1030, &[], 0x36),
    ]);
    assert!(r.ok(), "{:?}", r.error());
    for q in [
        Query::Name("gfx9999"),
        Query::Name(""),
        Query::Name("gfx90a:xnack+"),
        Query::Name("gfx90a:sramecc+:xnack-"),
        Query::Name("amdgcn-amd-amdhsa--mi210"),
        Query::Name("amdgcn-amd-amdhsa--gfx90a:xnack+"),
        Query::Name("gfx90a,gfx1030"),
        Query::Arch(Arch::Gfx942),
        Query::Machine(ElfMachine(0x4c)),
        Query::Machine(ElfMachine(0)),
    ] {
        match r.find(q) {
            Err(LookupError::Unknown { supported, .. }) => {
                assert_eq!(supported, ["gfx90a", "gfx1030"], "{q}");
            }
            other => panic!("{q}: {:?}", other.map(|d| d.id)),
        }
    }
    let msg = r.find("gfx9999").unwrap_err().to_string();
    assert_eq!(
        msg,
        "unknown GPU target \"gfx9999\"; supported ids: gfx90a, gfx1030"
    );
}

#[test]
fn softgpu_target_accepts_ids_and_aliases_and_reports_unknown_ones() {
    let ids = isa::supported_ids();
    let first = ids[0];
    let (cfg, bad) = softgpu_hsa::config::Config::from_lookup(|k| {
        (k == "SOFTGPU_TARGET").then(|| format!("{first}, {}", first.to_uppercase()))
    });
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(cfg.targets, vec![first, first]);
    let (cfg, bad) = softgpu_hsa::config::Config::from_lookup(|k| {
        (k == "SOFTGPU_TARGET").then(|| format!("{first},gfx9999"))
    });
    assert_eq!(bad.len(), 1);
    assert!(
        bad[0].contains("SOFTGPU_TARGET") && bad[0].contains(first),
        "{bad:?}"
    );
    assert_eq!(cfg.targets, vec![isa::DEFAULT_TARGET]);
}

// ---------------------------------------------------------------------------
// The descriptors' facts
// ---------------------------------------------------------------------------

#[test]
fn no_descriptor_claims_execution() {
    for d in isa::DESCRIPTORS {
        assert!(!d.supports_execution, "{} claims execution", d.id);
    }
}

#[test]
fn elf_machine_values_are_llvm_amdgpuusage_values() {
    for d in isa::DESCRIPTORS {
        let (_, m) = MACHINES
            .iter()
            .find(|(id, _)| *id == d.id)
            .unwrap_or_else(|| panic!("{} has no expected machine value", d.id));
        assert_eq!(d.elf_machine, *m, "{}", d.id);
    }
}

/// `e_flags` of an ELF64 object.
fn e_flags(path: &Path) -> u32 {
    let b = std::fs::read(path).unwrap();
    assert!(b.len() >= 0x34 && b[..4] == *b"\x7fELF" && b[4] == 2);
    u32::from_le_bytes(b[0x30..0x34].try_into().unwrap())
}

#[test]
fn elf_machine_values_agree_with_the_hosts_llvm_15_where_it_knows_the_processor() {
    let mc = Path::new("/usr/lib/llvm-15/bin/llvm-mc");
    assert!(
        mc.exists(),
        "{} is missing: run ./scripts/setup (it installs LLVM 15 with hipcc)",
        mc.display()
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isa-llvm-mc");
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = Vec::new();
    for d in isa::DESCRIPTORS {
        let obj = dir.join(format!("{}.o", d.id));
        let _ = std::fs::remove_file(&obj);
        let out = Command::new(mc)
            .args(["-triple=amdgcn-amd-amdhsa", "-filetype=obj"])
            .arg(format!("-mcpu={}", d.id))
            .arg("-o")
            .arg(&obj)
            .arg("/dev/null")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("not a recognized processor") {
            continue; // LLVM 15 predates it: AMDGPUUsage is the only source.
        }
        assert!(out.status.success(), "{}: {stderr}", d.id);
        assert_eq!(e_flags(&obj) & ElfMachine::MASK, d.elf_machine, "{}", d.id);
        checked.push(d.id);
    }
    if cfg!(feature = "gfx9") {
        assert!(checked.contains(&"gfx90a"), "{checked:?}");
    }
}

#[test]
fn every_fact_names_its_source_and_every_policy_says_why() {
    for d in isa::DESCRIPTORS {
        for (name, f) in d.facts.named() {
            let text = match f.provenance {
                Provenance::AmdgpuUsage(s)
                | Provenance::Product(s)
                | Provenance::Policy(s)
                | Provenance::Measured(s) => s,
            };
            assert!(text.len() >= 10, "{}.{name}: {:?}", d.id, f.provenance);
        }
        // ISA-level facts are public facts, never policy.
        for (name, f) in [
            ("wavefront_size", d.facts.wavefront_size),
            ("lds_bytes_per_workgroup", d.facts.lds_bytes_per_workgroup),
            ("workgroup_max_size", d.facts.workgroup_max_size),
        ] {
            assert!(
                matches!(f.provenance, Provenance::AmdgpuUsage(_)),
                "{}.{name}",
                d.id
            );
        }
        let wave = if d.id.starts_with("gfx9") { 64 } else { 32 };
        assert_eq!(d.facts.wavefront_size.value, wave, "{}", d.id);
        assert!(d.product_name.contains(d.id) && d.product_name.contains("no execution"));
    }
}

#[cfg(feature = "gfx9")]
#[test]
fn gfx90a_keeps_the_mi210_facts_softgpu_has_always_advertised() {
    let d = isa::find("gfx90a").unwrap();
    let f = &d.facts;
    assert_eq!(d.isa_name, "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
    assert_eq!(
        (
            f.wavefront_size.value,
            f.lds_bytes_per_workgroup.value,
            f.compute_units.value,
            f.memory_bytes.value,
            f.chip_id.value,
            f.max_waves_per_cu.value,
            f.l2_cache_bytes.value,
        ),
        (64, 65536, 104, 64 << 30, 0x740f, 32, 8 << 20)
    );
}

// ---------------------------------------------------------------------------
// softgpu targets
// ---------------------------------------------------------------------------

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
}

#[test]
fn softgpu_targets_json_is_the_registry_in_order_as_interfaces_md_says() {
    let out = cli().args(["targets", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let arr = v.as_array().expect("a JSON array");
    let ids: Vec<&str> = arr.iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, isa::supported_ids());
    for (o, d) in arr.iter().zip(isa::DESCRIPTORS) {
        assert_eq!(o["aliases"], serde_json::json!(d.aliases));
        assert_eq!(o["supports_execution"], Value::Bool(false));
        assert_eq!(o["gpu_targets"], serde_json::json!(d.gpu_targets));
        assert_eq!(o["gpu_targets"][0], d.gpu_target);
        assert_eq!(o["elf_machine"], u64::from(d.elf_machine));
        let facts = o["facts"].as_object().unwrap();
        assert_eq!(facts.len(), 17);
        for (name, f) in d.facts.named() {
            assert_eq!(facts[name]["value"], f.value, "{}.{name}", d.id);
            assert_eq!(
                facts[name]["provenance"],
                f.provenance.describe(),
                "{}.{name}",
                d.id
            );
        }
        for key in ["wavefront_size", "lds_bytes_per_workgroup", "compute_units"] {
            assert!(facts.contains_key(key));
        }
        assert_eq!(o["hip_acceptance"]["hip_5_2_3"], d.hip.hip_5_2.device());
        assert_eq!(o["hip_acceptance"]["hip_6_4_3"], d.hip.hip_6_4.device());
        assert_eq!(o["hip_acceptance"]["hip_7_2_4"], d.hip.hip_7_2.device());
        assert_eq!(
            o["hip_acceptance"]["hip_7_2_4_support"],
            d.hip.hip_7_2.as_str()
        );
    }
}

#[test]
fn softgpu_targets_prints_a_table_details_and_fails_on_an_unknown_target() {
    let out = cli().arg("targets").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with("ID "), "{table}");
    for id in isa::supported_ids() {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{id} "))),
            "{id} missing:\n{table}"
        );
    }
    assert!(table.contains("none supports execution"));

    let first = isa::DESCRIPTORS[0];
    let out = cli().args(["targets", first.gpu_target]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let details = String::from_utf8(out.stdout).unwrap();
    for (name, f) in first.facts.named() {
        assert!(
            details.contains(name) && details.contains(&f.provenance.describe()),
            "{name} missing:\n{details}"
        );
    }

    let out = cli().args(["targets", "gfx9999"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("gfx9999") && err.contains(&isa::supported_ids().join(", ")),
        "{err}"
    );

    let out = cli().args(["targets", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains("SOFTGPU_TARGET") && help.contains("--json"),
        "{help}"
    );
}

// ---------------------------------------------------------------------------
// Builds with one target family selected
// ---------------------------------------------------------------------------

/// `softgpu targets --json` of a debug build with exactly `features` (no defaults): the ids,
/// the exit code and stderr.
fn build_with(features: &[&str]) -> (Vec<String>, Option<i32>, String) {
    let target_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isa-feature-builds");
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--offline", "--quiet", "--no-default-features"])
        .args(["--bin", "softgpu", "--target-dir"])
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR");
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "cargo build --features {features:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(target_dir.join("debug/softgpu"))
        .args(["targets", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{features:?}: {e}: {out:?}"));
    let ids = v
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    (
        ids,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_build_with_one_target_family_selected_contains_only_that_family() {
    for (family, ids) in FAMILIES {
        let (got, code, stderr) = build_with(&[family]);
        assert_eq!(got, *ids, "--features {family}");
        assert_eq!(code, Some(0), "--features {family}: {stderr}");
    }
    // Two families: registry order is Cargo.toml's feature order, not the command line's.
    let (got, _, _) = build_with(&["gfx12", "gfx9"]);
    let expected: Vec<&str> = FAMILIES[0].1.iter().chain(FAMILIES[5].1).copied().collect();
    assert_eq!(got, expected);
    // No family: an empty registry, reported, and exit status 2.
    let (got, code, stderr) = build_with(&[]);
    assert!(got.is_empty());
    assert_eq!(code, Some(2));
    assert!(stderr.contains("no target family"), "{stderr}");
}

// ---------------------------------------------------------------------------
// The documentation shows the registry as it is
// ---------------------------------------------------------------------------

/// The docs describe the default build, so these checks exist only in it.
#[cfg(all(
    feature = "gfx9",
    feature = "gfx94",
    feature = "gfx95",
    feature = "gfx10",
    feature = "gfx11",
    feature = "gfx12"
))]
mod generated_docs {
    use super::*;

    /// A fact's value as the documentation shows it.
    fn shown(name: &str, value: u64) -> String {
        let unit = |v: u64| {
            if v >= 1 << 30 && v % (1 << 30) == 0 {
                format!("{} GiB", v >> 30)
            } else if v >= 1 << 20 && v % (1 << 20) == 0 {
                format!("{} MiB", v >> 20)
            } else if v >= 1 << 10 && v % (1 << 10) == 0 {
                format!("{} KiB", v >> 10)
            } else {
                format!("{v} B")
            }
        };
        match name {
            "chip_id" => format!("`{value:#06x}`"),
            "lds_bytes_per_workgroup" | "memory_bytes" | "l1_cache_bytes" | "l2_cache_bytes" => {
                unit(value)
            }
            _ => value.to_string(),
        }
    }

    fn hip_words(s: HipSupport) -> &'static str {
        match s {
            HipSupport::Kernels => "yes",
            HipSupport::DeviceOnly => "device only (no compiler for it)",
            HipSupport::NoDevice => "no",
        }
    }

    /// The generated per-target section of docs/agent-provenance.md.
    fn provenance_section() -> String {
        let mut s = String::new();
        for d in isa::DESCRIPTORS {
            s.push_str(&format!(
                "### {} ({}): {}\n\n",
                d.id,
                d.arch.generation(),
                d.product_name
            ));
            s.push_str(&format!(
                "ISA name `{}`; GPU targets {}; ELF machine `{:#04x}`; aliases {}; cargo feature \
                 `{}`; HIP 5.2.3: {}; HIP 6.4.3: {}; HIP 7.2.4: {}; supports execution: no.\n\n",
                d.isa_name,
                d.gpu_targets
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                d.elf_machine,
                if d.aliases.is_empty() {
                    "none".to_string()
                } else {
                    d.aliases
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                d.feature,
                hip_words(d.hip.hip_5_2),
                hip_words(d.hip.hip_6_4),
                hip_words(d.hip.hip_7_2),
            ));
            s.push_str("| fact | value | provenance |\n| --- | --- | --- |\n");
            for (name, f) in d.facts.named() {
                s.push_str(&format!(
                    "| `{name}` | {} | {} |\n",
                    shown(name, f.value),
                    f.provenance.describe()
                ));
            }
            s.push('\n');
        }
        s
    }

    /// The generated HIP acceptance table of the README.
    fn acceptance_table() -> String {
        let mut s = String::from(
            "| target | model | HIP 5.2.3 | HIP 6.4.3 | HIP 7.2.4 |\n| --- | --- | --- | --- | --- |\n",
        );
        for d in isa::DESCRIPTORS {
            let model = d
                .product_name
                .split_once('(')
                .and_then(|(_, rest)| rest.split_once(" model"))
                .map_or("-", |(m, _)| m);
            s.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                d.id,
                model,
                hip_words(d.hip.hip_5_2),
                hip_words(d.hip.hip_6_4),
                hip_words(d.hip.hip_7_2)
            ));
        }
        s
    }

    /// Checks (or, with SOFTGPU_BLESS=1, rewrites) the text between `<!-- NAME:begin -->` and
    /// `<!-- NAME:end -->` in `file`.
    fn generated_section(file: &str, name: &str, want: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let (begin, end) = (
            format!("<!-- {name}:begin -->\n"),
            format!("<!-- {name}:end -->"),
        );
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("{file} has no {begin:?} marker"))
            + begin.len();
        let stop = start
            + text[start..]
                .find(&end)
                .unwrap_or_else(|| panic!("{file} has no {end:?} marker"));
        if &text[start..stop] == want {
            return;
        }
        if std::env::var_os("SOFTGPU_BLESS").is_some_and(|v| v == "1") {
            let new = format!("{}{want}{}", &text[..start], &text[stop..]);
            std::fs::write(&path, new).unwrap();
            return;
        }
        panic!(
            "{file}: the generated section `{name}` does not match the registry; rerun with \
             SOFTGPU_BLESS=1 to rewrite it. Expected:\n{want}"
        );
    }

    #[test]
    fn the_docs_show_every_target_fact_and_the_hip_acceptance_table_as_the_registry_has_them() {
        generated_section("docs/agent-provenance.md", "targets", &provenance_section());
        generated_section("README.md", "hip-acceptance", &acceptance_table());
    }
}
