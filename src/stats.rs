//! The per-kernel summary of a capture: `softgpu inspect --format stats` and
//! `softgpu run --stats`.
//!
//! One row per kernel name, in rocprofv3's `kernel_stats.csv` spelling where the
//! meaning is the same (`Name`, `Calls`); the other columns are SoftGPU's: distinct
//! grid and workgroup shapes, group (LDS) and private (scratch) segment sizes as the
//! packets give them, and how many dispatches were rejected or carried findings.
//! There are no duration columns: no kernel ran, so there is no kernel time to sum.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use crate::abi::PacketType;
use crate::aql::Status;
use crate::capture::Capture;
use crate::report::Context;

/// The CSV header of the summary.
pub const COLUMNS: &[&str] = &[
    "Name",
    "Calls",
    "Grid_Sizes",
    "Workgroup_Sizes",
    "Group_Segment_Sizes",
    "Private_Segment_Sizes",
    "Rejected",
    "Findings",
];

/// What one kernel's dispatches had.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelStats {
    pub name: String,
    pub calls: u64,
    pub grids: BTreeSet<[u32; 3]>,
    pub workgroups: BTreeSet<[u16; 3]>,
    pub group_segment_sizes: BTreeSet<u32>,
    pub private_segment_sizes: BTreeSet<u32>,
    /// Dispatches the processor rejected.
    pub rejected: u64,
    /// Dispatches with at least one reason code (rejected or validated with findings).
    pub findings: u64,
}

/// The per-kernel summary of `cap`'s kernel dispatch packets, most calls first
/// (ties by name). Dispatches pass `keep` first (the run's kernel filters).
pub fn kernel_stats(cap: &Capture, keep: &dyn Fn(&str) -> bool) -> Vec<KernelStats> {
    let mut ctx = Context::new(cap);
    let mut by: BTreeMap<String, KernelStats> = BTreeMap::new();
    for r in &cap.records {
        let v = ctx.view(r);
        if v.dec.packet_type != PacketType::KERNEL_DISPATCH {
            continue;
        }
        let name = v.kernel_label();
        if !keep(&name) {
            continue;
        }
        let s = by.entry(name.clone()).or_insert_with(|| KernelStats {
            name,
            ..KernelStats::default()
        });
        s.calls += 1;
        s.grids.insert(v.dec.grid.unwrap_or([0; 3]));
        s.workgroups.insert(v.dec.workgroup.unwrap_or([0; 3]));
        s.group_segment_sizes
            .insert(v.dec.group_segment_size.unwrap_or(0));
        s.private_segment_sizes
            .insert(v.dec.private_segment_size.unwrap_or(0));
        if r.status == Status::Rejected {
            s.rejected += 1;
        }
        if !r.reasons.is_empty() {
            s.findings += 1;
        }
    }
    let mut v: Vec<KernelStats> = by.into_values().collect();
    v.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    v
}

fn shapes<T: std::fmt::Display>(set: &BTreeSet<[T; 3]>) -> String {
    set.iter()
        .map(|s| format!("{}x{}x{}", s[0], s[1], s[2]))
        .collect::<Vec<_>>()
        .join(";")
}

fn sizes(set: &BTreeSet<u32>) -> String {
    set.iter().map(u32::to_string).collect::<Vec<_>>().join(";")
}

/// One CSV row per kernel. rocprofv3's `Percentage` (a share of kernel time) is
/// left out with the durations.
pub fn write_csv(out: &mut impl Write, stats: &[KernelStats]) -> io::Result<()> {
    let mut w = crate::report::csv_writer(&mut *out);
    let io = |e: csv::Error| io::Error::other(e.to_string());
    w.write_record(COLUMNS).map_err(io)?;
    for s in stats {
        w.write_record([
            s.name.clone(),
            s.calls.to_string(),
            shapes(&s.grids),
            shapes(&s.workgroups),
            sizes(&s.group_segment_sizes),
            sizes(&s.private_segment_sizes),
            s.rejected.to_string(),
            s.findings.to_string(),
        ])
        .map_err(io)?;
    }
    w.flush()
}
