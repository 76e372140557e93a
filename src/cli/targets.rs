//! `softgpu targets`: the ISA target registry compiled into this build, every
//! fact with its provenance, and which HIP versions accept each target.
//!
//! Nothing is probed here: the listing is the static registry (`src/isa`). The
//! HIP acceptance columns are data measured by `tests/isa_hip_acceptance.rs`,
//! which fails when reality differs from them.

use std::io::{self, BufWriter, Write};

use clap::Args;
use serde_json::{Map, Value, json};

use super::{EXIT_ERROR, finish_output};
use crate::isa::{self, HIP_ACCEPTANCE_PROVENANCE, Registry, TargetDescriptor};

/// List the ISA targets compiled into this build, with the provenance of every fact.
///
/// Each target is a virtual GPU model (kernels never run: no target supports
/// execution). SOFTGPU_TARGET (or `softgpu run --target`) picks targets by id, alias or GPU
/// target name, comma separated, one virtual GPU agent each. The order is the registry order: the
/// order of the cargo features (target families) gfx9, gfx94, gfx95, gfx10, gfx11, gfx12
/// that were enabled when this softgpu was built.
///
/// Without TARGET: one line per target with its key facts; a value marked `*` is SoftGPU
/// policy (no public fact gives it), the others are public facts (LLVM AMDGPUUsage or a
/// named product datasheet). The HIP columns say what HIP 5.2.3, 6.4.3 and 7.2.4 did with the
/// target when measured by tests/isa_hip_acceptance.rs: yes (a device, and a kernel its hipcc
/// built for the target launched), device only (a device, but that HIP's compiler cannot
/// build for the target), or no (not a device). With TARGET
/// (an id, alias, GPU target name such as gfx90a:sramecc+:xnack-, or ISA name): every fact
/// of those targets with its provenance.
///
/// --json prints a JSON array, one object per target in registry order, with id, aliases,
/// supports_execution, gpu_targets, elf_machine, facts ({name: {value, provenance, kind}}),
/// and more (arch, generation, feature, isa_name, product_name, hip_acceptance);
/// docs/OUTPUT.md describes every field.
///
/// Exit status: 0; 2 when a TARGET is unknown (the message lists the supported ids) or
/// when this build's registry is invalid (the message says why; the listing is printed).
#[derive(Args, Debug)]
pub struct TargetsArgs {
    /// Show only these targets (id, alias, GPU target or ISA name), in the order given.
    #[arg(value_name = "TARGET", value_parser = super::Utf8::any())]
    names: Vec<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// `softgpu targets`.
pub fn targets(args: TargetsArgs) -> i32 {
    let registry = isa::registry();
    let mut code = 0;
    if let Some(e) = registry.error() {
        eprintln!("softgpu: the target registry of this build is invalid: {e}");
        code = EXIT_ERROR;
    }
    let selected: Vec<&TargetDescriptor> = if args.names.is_empty() {
        registry.descriptors().to_vec()
    } else {
        let mut v = Vec::new();
        for name in &args.names {
            match registry.find(name.as_str()) {
                Ok(d) => v.push(d),
                Err(e) => {
                    eprintln!("softgpu: {e}");
                    return EXIT_ERROR;
                }
            }
        }
        v
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let result = if args.json {
        write_json(&mut out, &selected)
    } else if args.names.is_empty() {
        write_table(&mut out, registry, &selected)
    } else {
        write_details(&mut out, &selected)
    }
    .and_then(|()| out.flush());
    finish_output(result, code)
}

/// One descriptor as the JSON object `docs/OUTPUT.md` describes.
pub fn descriptor_json(d: &TargetDescriptor) -> Value {
    let mut facts = Map::new();
    for (name, fact) in d.facts.named() {
        facts.insert(
            name.to_string(),
            json!({
                "value": fact.value,
                "provenance": fact.provenance.describe(),
                "kind": fact.provenance.kind(),
            }),
        );
    }
    json!({
        "id": d.id,
        "aliases": d.aliases,
        "arch": format!("{:?}", d.arch),
        "generation": d.arch.generation(),
        "feature": d.feature,
        "supports_execution": d.supports_execution,
        "gpu_targets": d.gpu_targets,
        "isa_name": d.isa_name,
        "elf_machine": d.elf_machine,
        "product_name": d.product_name,
        "facts": facts,
        "hip_acceptance": {
            "hip_5_2_3": d.hip.hip_5_2.device(),
            "hip_6_4_3": d.hip.hip_6_4.device(),
            "hip_7_2_4": d.hip.hip_7_2.device(),
            "hip_5_2_3_support": d.hip.hip_5_2.as_str(),
            "hip_6_4_3_support": d.hip.hip_6_4.as_str(),
            "hip_7_2_4_support": d.hip.hip_7_2.as_str(),
            "provenance": HIP_ACCEPTANCE_PROVENANCE.describe(),
        },
    })
}

fn write_json(out: &mut impl Write, selected: &[&TargetDescriptor]) -> io::Result<()> {
    let v = Value::Array(selected.iter().map(|d| descriptor_json(d)).collect());
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&v).unwrap_or_default()
    )
}

/// A value with `*` when it is SoftGPU policy.
fn marked(f: isa::Fact, shown: String) -> String {
    if matches!(f.provenance, isa::Provenance::Policy(_)) {
        format!("{shown}*")
    } else {
        shown
    }
}

fn bytes(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// `yes`, `device only` (no kernel can be built for it) or `no`.
fn hip_cell(s: isa::HipSupport) -> &'static str {
    match s {
        isa::HipSupport::Kernels => "yes",
        isa::HipSupport::DeviceOnly => "device only",
        isa::HipSupport::NoDevice => "no",
    }
}

fn write_table(
    out: &mut impl Write,
    registry: &Registry<'_>,
    selected: &[&TargetDescriptor],
) -> io::Result<()> {
    let header = [
        "ID",
        "ALIASES",
        "ARCH",
        "FEATURE",
        "GPU TARGET",
        "ELF",
        "WAVE",
        "LDS",
        "CUS",
        "MEMORY",
        "HIP 5.2.3",
        "HIP 6.4.3",
        "HIP 7.2.4",
    ];
    let rows: Vec<[String; 13]> = selected
        .iter()
        .map(|d| {
            let f = &d.facts;
            [
                d.id.to_string(),
                if d.aliases.is_empty() {
                    "-".to_string()
                } else {
                    d.aliases.join(",")
                },
                d.arch.generation().to_string(),
                d.feature.to_string(),
                d.gpu_target.to_string(),
                format!("{:#04x}", d.elf_machine),
                marked(f.wavefront_size, f.wavefront_size.value.to_string()),
                marked(
                    f.lds_bytes_per_workgroup,
                    bytes(f.lds_bytes_per_workgroup.value),
                ),
                marked(f.compute_units, f.compute_units.value.to_string()),
                marked(f.memory_bytes, bytes(f.memory_bytes.value)),
                hip_cell(d.hip.hip_5_2).to_string(),
                hip_cell(d.hip.hip_6_4).to_string(),
                hip_cell(d.hip.hip_7_2).to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for r in &rows {
        writeln!(out, "{}", line(r.iter().map(String::as_str).collect()))?;
    }
    writeln!(
        out,
        "{} targets; none supports execution (SoftGPU targets are models: kernels never run). \
         * = SoftGPU policy; other values are public facts. HIP columns: {}. \
         `softgpu targets ID` shows every fact and its source.{}",
        selected.len(),
        HIP_ACCEPTANCE_PROVENANCE.describe(),
        match registry.error() {
            Some(e) => format!(" REGISTRY INVALID: {e}"),
            None => String::new(),
        }
    )
}

fn write_details(out: &mut impl Write, selected: &[&TargetDescriptor]) -> io::Result<()> {
    for (i, d) in selected.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(
            out,
            "{} ({}, {:?}; cargo feature {})",
            d.id,
            d.arch.generation(),
            d.arch,
            d.feature
        )?;
        writeln!(out, "  aliases             {}", d.aliases.join(", "))?;
        writeln!(out, "  product name        {}", d.product_name)?;
        writeln!(out, "  ISA name            {}", d.isa_name)?;
        writeln!(out, "  GPU targets         {}", d.gpu_targets.join(", "))?;
        writeln!(
            out,
            "  ELF machine         {:#04x} (public ISA fact: LLVM AMDGPUUsage, EF_AMDGPU_MACH)",
            d.elf_machine
        )?;
        writeln!(
            out,
            "  supports execution  {} (SoftGPU targets are models: kernels never run)",
            yes_no(d.supports_execution)
        )?;
        writeln!(
            out,
            "  HIP 5.2/6.4/7.2     {} / {} / {} ({})",
            hip_cell(d.hip.hip_5_2),
            hip_cell(d.hip.hip_6_4),
            hip_cell(d.hip.hip_7_2),
            HIP_ACCEPTANCE_PROVENANCE.describe()
        )?;
        writeln!(out, "  facts:")?;
        for (name, f) in d.facts.named() {
            let shown = match name {
                "chip_id" => format!("{:#06x}", f.value),
                n if n.ends_with("_bytes") || n == "lds_bytes_per_workgroup" => {
                    format!("{} ({})", f.value, bytes(f.value))
                }
                _ => f.value.to_string(),
            };
            writeln!(
                out,
                "    {name:<24} {shown:<22} {}",
                f.provenance.describe()
            )?;
        }
    }
    Ok(())
}
