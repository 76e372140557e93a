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
    /// Dispatches with at least one reason code (rejected, or validated with
    /// a reason or a problem finding on its arguments: [`crate::report::record_reasons`]).
    pub findings: u64,
}

/// How kernel names are shown (rocprofv3's default, `-M`, `-T`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NameStyle {
    /// Demangled, without `.kd`.
    #[default]
    Demangled,
    /// The symbol as the code object names it, without `.kd`.
    Mangled,
    /// The function's own name: `ns::k<int>(float*)` is `k`.
    Truncated,
}

/// Truncates a demangled name to the function's own name: trailing argument,
/// template and array groups are dropped, then everything up to the last `::` or space.
pub fn truncate_name(name: &str) -> String {
    let b = name.as_bytes();
    let mut end = b.len();
    loop {
        while end > 0 && b[end - 1] == b' ' {
            end -= 1;
        }
        let (close, open) = match end.checked_sub(1).map(|i| b[i]) {
            Some(b')') => (b')', b'('),
            Some(b'>') => (b'>', b'<'),
            Some(b']') => (b']', b'['),
            _ => break,
        };
        let mut depth = 0usize;
        let mut i = end;
        while i > 0 {
            i -= 1;
            if b[i] == close {
                depth += 1;
            } else if b[i] == open {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
        }
        if depth != 0 {
            break;
        }
        end = i;
    }
    let head = &name[..end];
    let start = head.rfind([' ', ':']).map_or(0, |i| i + 1);
    let t = &head[start..];
    if t.is_empty() {
        name.to_string()
    } else {
        t.to_string()
    }
}

/// A kernel's name in `style`, from its symbol (when known) and demangled name.
pub fn style_name(symbol: Option<&str>, demangled: &str, style: NameStyle) -> String {
    match style {
        NameStyle::Demangled => demangled.to_string(),
        NameStyle::Mangled => symbol
            .map(|s| s.strip_suffix(".kd").unwrap_or(s).to_string())
            .unwrap_or_else(|| demangled.to_string()),
        NameStyle::Truncated => truncate_name(demangled),
    }
}

/// The per-kernel summary of `cap`'s kernel dispatch packets, most calls first
/// (ties by name). Dispatches pass `keep` first (the run's kernel filters).
pub fn kernel_stats(cap: &Capture, keep: &dyn Fn(&str) -> bool) -> Vec<KernelStats> {
    kernel_stats_named(cap, keep, NameStyle::Demangled)
}

/// [`kernel_stats`] with names in `style`.
pub fn kernel_stats_named(
    cap: &Capture,
    keep: &dyn Fn(&str) -> bool,
    style: NameStyle,
) -> Vec<KernelStats> {
    let mut ctx = Context::new(cap);
    let mut by: BTreeMap<String, KernelStats> = BTreeMap::new();
    for r in &cap.records {
        let v = ctx.view(r);
        if v.dec.packet_type != PacketType::KERNEL_DISPATCH {
            continue;
        }
        let name = style_name(v.symbol, &v.kernel_name_label(), style);
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
        if !v.reasons.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_names_are_the_functions_own_name() {
        assert_eq!(truncate_name("Foo<int, float>::foo(a[], int (int))"), "foo");
        assert_eq!(
            truncate_name("vecAdd(float*, float*, float*, int)"),
            "vecAdd"
        );
        assert_eq!(truncate_name("void ns::k<int>(int*)"), "k");
        assert_eq!(truncate_name("plain_kernel"), "plain_kernel");
    }
}
