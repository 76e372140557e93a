//! Comparing dispatch streams from different tools (`softgpu diff`). Pure: no I/O.
//!
//! Every input is normalised to a [`Trace`]: one stream of kernel dispatches per
//! queue (or stream), queues in order of first appearance. Kernel names are
//! demangled, stripped of `.kd` and trimmed; grids are in work-items. Queue ids,
//! addresses, timestamps and register counts are never compared.
//!
//! The group segment (LDS) size means different things in different sources: a
//! capture, rocprofv3 JSON and the older rocprofv3 `Group_Segment_Size` column hold
//! the packet's value (static + dynamic); the current rocprofv3 `LDS_Block_Size`
//! is the kernel's static size rounded up to the allocation granule; rocprof v1's
//! `lds` is its own rounded value. It is compared only at level `exact` and only
//! when both sides carry the same [`LdsSemantics`].
//!
//! Levels follow roctracer's golden-trace checker: `exact`, `count`, `order`,
//! `events` (see [`Level`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::capture::Capture;
use crate::cli::report::{Context, kernel_name};

/// Longest input read (bytes).
pub const MAX_INPUT: u64 = 1 << 30;
/// Most fields in one CSV row.
const MAX_FIELDS: usize = 4096;

/// What an LDS column means; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LdsSemantics {
    /// The AQL packet's `group_segment_size`.
    Packet,
    /// rocprofv3 `LDS_Block_Size`: static, granule-rounded.
    RocprofStaticRounded,
    /// rocprof v1 `lds`.
    RocprofV1,
}

/// One dispatch, normalised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dispatch {
    pub name: String,
    /// Work-items. When `totals_only`, only the product (x) is known.
    pub grid: [u64; 3],
    pub workgroup: [u64; 3],
    /// The source gives only total grid and workgroup sizes (rocprof v1).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub totals_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_segment_size: Option<u64>,
}

impl Dispatch {
    fn grid_total(&self) -> u64 {
        self.grid.iter().fold(1u64, |a, &b| a.saturating_mul(b))
    }
    fn wg_total(&self) -> u64 {
        self.workgroup
            .iter()
            .fold(1u64, |a, &b| a.saturating_mul(b))
    }
    /// Equal at level `exact`.
    fn same_as(&self, o: &Dispatch, compare_lds: bool) -> bool {
        if self.name != o.name {
            return false;
        }
        let geometry = if self.totals_only || o.totals_only {
            self.grid_total() == o.grid_total() && self.wg_total() == o.wg_total()
        } else {
            self.grid == o.grid && self.workgroup == o.workgroup
        };
        geometry && (!compare_lds || self.group_segment_size == o.group_segment_size)
    }
}

/// A normalised input.
#[derive(Clone, Debug)]
pub struct Trace {
    /// `softgpu_capture`, `rocprofv3_csv`, `rocprofv3_json`, `rocprof_v1_csv`, `softgpu_inspect_csv`.
    pub kind: &'static str,
    pub lds: LdsSemantics,
    /// One dispatch list per queue, queues in order of first appearance.
    pub queues: Vec<Vec<Dispatch>>,
}

impl Trace {
    pub fn dispatch_count(&self) -> usize {
        self.queues.iter().map(Vec::len).sum()
    }

    /// Drops dispatches whose name matches any pattern, then empty queues.
    pub fn ignore(&mut self, patterns: &[regex::Regex]) {
        if patterns.is_empty() {
            return;
        }
        for q in &mut self.queues {
            q.retain(|d| !patterns.iter().any(|p| p.is_match(&d.name)));
        }
        self.queues.retain(|q| !q.is_empty());
    }

    fn counts(&self) -> BTreeMap<&str, usize> {
        let mut m = BTreeMap::new();
        for d in self.queues.iter().flatten() {
            *m.entry(d.name.as_str()).or_insert(0) += 1;
        }
        m
    }
}

/// Normalises a kernel name from any source: trimmed, demangled, without `.kd`
/// and without the ` [clone .kd]` suffix rocprof v1 appends to demangled names.
pub fn normalise_name(s: &str) -> String {
    let s = s.trim();
    let s = s.strip_suffix("[clone .kd]").map_or(s, str::trim_end);
    kernel_name(s).trim().to_string()
}

/// Groups `(sort key, queue key, dispatch)` into queues by first appearance after a
/// stable sort on the key.
fn group(mut rows: Vec<(u64, String, Dispatch)>) -> Vec<Vec<Dispatch>> {
    rows.sort_by_key(|r| r.0);
    let mut order: Vec<String> = Vec::new();
    let mut queues: Vec<Vec<Dispatch>> = Vec::new();
    for (_, q, d) in rows {
        match order.iter().position(|k| *k == q) {
            Some(i) => queues[i].push(d),
            None => {
                order.push(q);
                queues.push(vec![d]);
            }
        }
    }
    queues
}

/// The kernel dispatches of a capture (barriers and other packets are left out:
/// other tools do not trace them).
pub fn from_capture(cap: &Capture) -> Trace {
    let mut ctx = Context::new(cap);
    let mut rows = Vec::new();
    for r in &cap.records {
        let v = ctx.view(r);
        if v.dec.packet_type != crate::abi::PacketType::KERNEL_DISPATCH {
            continue;
        }
        let g = v.dec.grid.unwrap_or([0; 3]);
        let w = v.dec.workgroup.unwrap_or([0; 3]);
        rows.push((
            r.seq,
            r.queue_id.to_string(),
            Dispatch {
                name: normalise_name(&v.kernel_label()),
                grid: g.map(u64::from),
                workgroup: w.map(u64::from),
                totals_only: false,
                group_segment_size: v.dec.group_segment_size.map(u64::from),
            },
        ));
    }
    Trace {
        kind: "softgpu_capture",
        lds: LdsSemantics::Packet,
        queues: group(rows),
    }
}

/// A parse error at a byte offset.
#[derive(Debug, PartialEq, Eq)]
pub struct InputError {
    pub offset: u64,
    pub message: String,
}

fn err(offset: u64, message: impl Into<String>) -> InputError {
    InputError {
        offset,
        message: message.into(),
    }
}

/// RFC 4180 rows with the byte offset where each starts. Quoted fields may hold
/// commas, doubled quotes and line breaks; CRLF and LF both end a row.
pub fn parse_csv(text: &str) -> Result<Vec<(u64, Vec<String>)>, InputError> {
    let b = text.as_bytes();
    let mut rows = Vec::new();
    let mut i = 0usize;
    while i < b.len() {
        let start = i;
        let mut fields = Vec::new();
        let mut field = Vec::new();
        let mut row_done = false;
        while !row_done {
            if b.get(i) == Some(&b'"') {
                let qstart = i;
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err(err(qstart as u64, "unterminated quoted field")),
                        Some(b'"') if b.get(i + 1) == Some(&b'"') => {
                            field.push(b'"');
                            i += 2;
                        }
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            field.push(c);
                            i += 1;
                        }
                    }
                }
            }
            loop {
                match b.get(i) {
                    None => {
                        row_done = true;
                        break;
                    }
                    Some(b',') => {
                        i += 1;
                        break;
                    }
                    Some(b'\n') => {
                        i += 1;
                        row_done = true;
                        break;
                    }
                    Some(b'\r') if b.get(i + 1) == Some(&b'\n') => {
                        i += 2;
                        row_done = true;
                        break;
                    }
                    Some(&c) => {
                        field.push(c);
                        i += 1;
                    }
                }
            }
            fields.push(String::from_utf8_lossy(&field).into_owned());
            field.clear();
            if fields.len() > MAX_FIELDS {
                return Err(err(start as u64, "more than 4096 fields in a row"));
            }
        }
        if !(fields.len() == 1 && fields[0].trim().is_empty()) {
            rows.push((start as u64, fields));
        }
    }
    Ok(rows)
}

struct Columns<'a> {
    header: &'a [String],
}

impl Columns<'_> {
    fn idx(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h.trim() == name)
    }
    fn has(&self, name: &str) -> bool {
        self.idx(name).is_some()
    }
}

fn field<'r>(
    cols: &Columns<'_>,
    row: &'r [String],
    off: u64,
    name: &str,
) -> Result<&'r str, InputError> {
    let i = cols
        .idx(name)
        .ok_or_else(|| err(0, format!("missing column {name}")))?;
    row.get(i)
        .map(|s| s.trim())
        .ok_or_else(|| err(off, format!("row has no {name} field")))
}

fn num(cols: &Columns<'_>, row: &[String], off: u64, name: &str) -> Result<u64, InputError> {
    let s = field(cols, row, off, name)?;
    s.parse::<u64>()
        .map_err(|_| err(off, format!("column {name}: not a number: {s:?}")))
}

fn opt_num(cols: &Columns<'_>, row: &[String], off: u64, name: &str) -> Option<u64> {
    cols.has(name)
        .then(|| num(cols, row, off, name).ok())
        .flatten()
}

/// A CSV input: rocprofv3 kernel_trace.csv (current or older columns), rocprof v1
/// results.csv, or `softgpu inspect --format csv`.
pub fn from_csv(text: &str) -> Result<Trace, InputError> {
    let rows = parse_csv(text)?;
    let Some(((_, header), body)) = rows.split_first() else {
        return Err(err(0, "empty CSV file"));
    };
    let cols = Columns { header };
    let mut out = Vec::new();
    if cols.has("Kernel_Name") && (cols.has("Grid_Size_X") || cols.has("Grid_Size")) {
        let inspect = cols.has("Packet_Type");
        let (kind, lds_col, lds) = if inspect {
            (
                "softgpu_inspect_csv",
                "LDS_Block_Size",
                LdsSemantics::Packet,
            )
        } else if cols.has("LDS_Block_Size") {
            (
                "rocprofv3_csv",
                "LDS_Block_Size",
                LdsSemantics::RocprofStaticRounded,
            )
        } else {
            ("rocprofv3_csv", "Group_Segment_Size", LdsSemantics::Packet)
        };
        let xyz = cols.has("Grid_Size_X");
        for (n, (off, row)) in body.iter().enumerate() {
            let off = *off;
            if cols.has("Kind") {
                let k = field(&cols, row, off, "Kind")?;
                if !k.is_empty() && !k.eq_ignore_ascii_case("KERNEL_DISPATCH") {
                    continue;
                }
            }
            let (grid, workgroup, totals_only) = if xyz {
                let g = ["Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"];
                let w = ["Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"];
                let mut gv = [1u64; 3];
                let mut wv = [1u64; 3];
                for i in 0..3 {
                    gv[i] = num(&cols, row, off, g[i])?;
                    wv[i] = num(&cols, row, off, w[i])?;
                }
                (gv, wv, false)
            } else {
                let g = num(&cols, row, off, "Grid_Size")?;
                let w = num(&cols, row, off, "Workgroup_Size")?;
                ([g, 1, 1], [w, 1, 1], true)
            };
            let queue = format!(
                "{}/{}",
                field(&cols, row, off, "Agent_Id").unwrap_or(""),
                field(&cols, row, off, "Queue_Id").unwrap_or("")
            );
            let key = opt_num(&cols, row, off, "Dispatch_Id").unwrap_or(n as u64);
            out.push((
                key,
                queue,
                Dispatch {
                    name: normalise_name(field(&cols, row, off, "Kernel_Name")?),
                    grid,
                    workgroup,
                    totals_only,
                    group_segment_size: opt_num(&cols, row, off, lds_col),
                },
            ));
        }
        return Ok(Trace {
            kind,
            lds,
            queues: group(out),
        });
    }
    if cols.has("KernelName") && cols.has("grd") && cols.has("wgr") {
        for (n, (off, row)) in body.iter().enumerate() {
            let off = *off;
            let queue = format!(
                "{}/{}",
                field(&cols, row, off, "gpu-id").unwrap_or(""),
                field(&cols, row, off, "queue-id").unwrap_or("")
            );
            let key = opt_num(&cols, row, off, "Index").unwrap_or(n as u64);
            out.push((
                key,
                queue,
                Dispatch {
                    name: normalise_name(field(&cols, row, off, "KernelName")?),
                    grid: [num(&cols, row, off, "grd")?, 1, 1],
                    workgroup: [num(&cols, row, off, "wgr")?, 1, 1],
                    totals_only: true,
                    group_segment_size: opt_num(&cols, row, off, "lds"),
                },
            ));
        }
        return Ok(Trace {
            kind: "rocprof_v1_csv",
            lds: LdsSemantics::RocprofV1,
            queues: group(out),
        });
    }
    Err(err(
        0,
        "CSV header has neither rocprofv3 kernel_trace.csv columns (Kernel_Name, Grid_Size_X) nor rocprof v1 results.csv columns (KernelName, grd, wgr)",
    ))
}

/// A number, or an object `{ "handle": number }`.
fn json_u64(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Object(o) => json_u64(o.get("handle")),
        _ => None,
    }
}

fn json_xyz(v: Option<&Value>) -> Option<[u64; 3]> {
    let o = v?.as_object()?;
    Some([
        json_u64(o.get("x"))?,
        json_u64(o.get("y")).unwrap_or(1),
        json_u64(o.get("z")).unwrap_or(1),
    ])
}

/// Objects of an array, or the values of an object.
fn items(v: Option<&Value>) -> Vec<&serde_json::Map<String, Value>> {
    match v {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_object).collect(),
        Some(Value::Object(o)) => o.values().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    }
}

/// Byte offset of serde_json's 1-based line and column.
fn json_offset(text: &str, line: usize, column: usize) -> u64 {
    let mut off = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return (off + column.saturating_sub(1)) as u64;
        }
        off += l.len();
    }
    text.len() as u64
}

/// A rocprofv3 JSON document (top-level key `rocprofiler-sdk-tool`, an array of
/// per-process objects or one object): `buffer_records.kernel_dispatch`, named
/// through `kernel_symbols`.
pub fn from_rocprof_json(text: &str) -> Result<Trace, InputError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        err(
            json_offset(text, e.line(), e.column()),
            format!("invalid JSON: {e}"),
        )
    })?;
    let tool = doc
        .get("rocprofiler-sdk-tool")
        .ok_or_else(|| err(0, "no top-level key rocprofiler-sdk-tool"))?;
    let procs: Vec<&Value> = match tool {
        Value::Array(a) => a.iter().collect(),
        o @ Value::Object(_) => vec![o],
        _ => {
            return Err(err(
                0,
                "rocprofiler-sdk-tool is neither an array nor an object",
            ));
        }
    };
    let mut rows = Vec::new();
    let mut n = 0u64;
    for (pi, p) in procs.iter().enumerate() {
        let mut names: BTreeMap<u64, String> = BTreeMap::new();
        for s in items(p.get("kernel_symbols")) {
            let Some(id) = json_u64(s.get("kernel_id")) else {
                continue;
            };
            // The symbol itself first: demangled here it gives the full name a capture
            // shows; `formatted_kernel_name` may be truncated (`--truncate-kernels`).
            let name = [
                "kernel_name",
                "demangled_kernel_name",
                "formatted_kernel_name",
            ]
            .iter()
            .find_map(|k| s.get(*k).and_then(Value::as_str).filter(|x| !x.is_empty()));
            if let Some(name) = name {
                names.insert(id, normalise_name(name));
            }
        }
        let records = p
            .get("buffer_records")
            .and_then(|b| b.get("kernel_dispatch"));
        for r in items(records) {
            let info = r
                .get("dispatch_info")
                .and_then(Value::as_object)
                .unwrap_or(r);
            let kid = json_u64(info.get("kernel_id"));
            let name = match kid {
                Some(k) => names
                    .get(&k)
                    .cloned()
                    .unwrap_or_else(|| format!("kernel_id {k}")),
                None => "-".to_string(),
            };
            let key = json_u64(info.get("dispatch_id")).unwrap_or(n);
            n += 1;
            let queue = format!(
                "{pi}/{}/{}",
                json_u64(info.get("agent_id")).unwrap_or(0),
                json_u64(info.get("queue_id")).unwrap_or(0)
            );
            rows.push((
                key,
                queue,
                Dispatch {
                    name,
                    grid: json_xyz(info.get("grid_size")).unwrap_or([0; 3]),
                    workgroup: json_xyz(info.get("workgroup_size")).unwrap_or([0; 3]),
                    totals_only: false,
                    group_segment_size: json_u64(info.get("group_segment_size")),
                },
            ));
        }
    }
    Ok(Trace {
        kind: "rocprofv3_json",
        lds: LdsSemantics::Packet,
        queues: group(rows),
    })
}

/// Comparison level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Same dispatches per queue in the same order: name, grid, workgroup (and LDS
    /// when both sides mean the same by it).
    Exact,
    /// Same number of dispatches per kernel name.
    Count,
    /// Same kernel-name order per queue (queues matched by first appearance).
    Order,
    /// Same set of kernel names.
    Events,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::Count => "count",
            Level::Order => "order",
            Level::Events => "events",
        }
    }
}

/// Where two per-queue streams first differ.
#[derive(Debug, Serialize)]
pub struct Divergence {
    /// Queue position (order of first appearance).
    pub queue: usize,
    /// Dispatch index within that queue.
    pub index: usize,
    /// Index of the first entry in `a` and `b`.
    pub context_start: usize,
    pub a: Vec<Dispatch>,
    pub b: Vec<Dispatch>,
}

#[derive(Debug, Serialize)]
pub struct CountDiff {
    pub kernel: String,
    pub a: usize,
    pub b: usize,
}

/// The result of [`compare`].
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub level: Level,
    pub same: bool,
    /// Why not, in one line.
    pub reason: Option<String>,
    pub dispatches_a: usize,
    pub dispatches_b: usize,
    pub queues_a: usize,
    pub queues_b: usize,
    pub lds_compared: bool,
    pub first_divergence: Option<Divergence>,
    pub count_differences: Vec<CountDiff>,
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
}

impl Outcome {
    /// `softgpu diff: SAME at level count (N dispatches)` or `DIFFERENT at level ...: ...`.
    pub fn verdict(&self) -> String {
        if self.same {
            format!(
                "softgpu diff: SAME at level {} ({} dispatches)",
                self.level.as_str(),
                self.dispatches_a
            )
        } else {
            format!(
                "softgpu diff: DIFFERENT at level {}: {}",
                self.level.as_str(),
                self.reason.as_deref().unwrap_or("")
            )
        }
    }
}

const CONTEXT: usize = 2;

/// Which of grid, workgroup and LDS differ between two same-named dispatches.
fn what_differs(x: &Dispatch, y: &Dispatch) -> String {
    let t = |v: [u64; 3], total: bool| {
        if total {
            v.iter().fold(1u64, |a, &b| a.saturating_mul(b)).to_string()
        } else {
            format!("{}x{}x{}", v[0], v[1], v[2])
        }
    };
    let totals = x.totals_only || y.totals_only;
    let mut parts = Vec::new();
    if t(x.grid, totals) != t(y.grid, totals) {
        parts.push(format!(
            "grid {} in A, {} in B",
            t(x.grid, totals),
            t(y.grid, totals)
        ));
    }
    if t(x.workgroup, totals) != t(y.workgroup, totals) {
        parts.push(format!(
            "workgroup {} in A, {} in B",
            t(x.workgroup, totals),
            t(y.workgroup, totals)
        ));
    }
    if parts.is_empty() {
        let l = |v: Option<u64>| v.map_or("-".to_string(), |n| n.to_string());
        parts.push(format!(
            "group segment size {} in A, {} in B",
            l(x.group_segment_size),
            l(y.group_segment_size)
        ));
    }
    parts.join(", ")
}

fn divergence(a: &[Dispatch], b: &[Dispatch], queue: usize, index: usize) -> Divergence {
    let start = index.saturating_sub(CONTEXT);
    let end = index + CONTEXT + 1;
    Divergence {
        queue,
        index,
        context_start: start,
        a: a.get(start..end.min(a.len())).unwrap_or(&[]).to_vec(),
        b: b.get(start..end.min(b.len())).unwrap_or(&[]).to_vec(),
    }
}

/// Compares two traces at `level`.
pub fn compare(a: &Trace, b: &Trace, level: Level) -> Outcome {
    let ca = a.counts();
    let cb = b.counts();
    let names: BTreeSet<&str> = ca.keys().chain(cb.keys()).copied().collect();
    let count_differences: Vec<CountDiff> = names
        .iter()
        .filter_map(|n| {
            let (x, y) = (
                ca.get(n).copied().unwrap_or(0),
                cb.get(n).copied().unwrap_or(0),
            );
            (x != y).then(|| CountDiff {
                kernel: n.to_string(),
                a: x,
                b: y,
            })
        })
        .collect();
    let only_in_a: Vec<String> = ca
        .keys()
        .filter(|n| !cb.contains_key(*n))
        .map(|n| n.to_string())
        .collect();
    let only_in_b: Vec<String> = cb
        .keys()
        .filter(|n| !ca.contains_key(*n))
        .map(|n| n.to_string())
        .collect();
    let lds_compared = level == Level::Exact && a.lds == b.lds;
    let mut first_divergence = None;
    let reason = match level {
        Level::Events => (!only_in_a.is_empty() || !only_in_b.is_empty()).then(|| {
            format!(
                "kernel sets differ: {} only in A, {} only in B (first: {})",
                only_in_a.len(),
                only_in_b.len(),
                only_in_a
                    .first()
                    .or(only_in_b.first())
                    .cloned()
                    .unwrap_or_default()
            )
        }),
        Level::Count => count_differences.first().map(|d| {
            format!(
                "{} kernel(s) with different counts; first: {} ({} in A, {} in B)",
                count_differences.len(),
                d.kernel,
                d.a,
                d.b
            )
        }),
        Level::Order | Level::Exact => {
            let mut reason = None;
            for qi in 0..a.queues.len().max(b.queues.len()) {
                let empty = Vec::new();
                let qa = a.queues.get(qi).unwrap_or(&empty);
                let qb = b.queues.get(qi).unwrap_or(&empty);
                let eq = |x: &Dispatch, y: &Dispatch| {
                    if level == Level::Exact {
                        x.same_as(y, lds_compared)
                    } else {
                        x.name == y.name
                    }
                };
                let pos = (0..qa.len().max(qb.len())).find(|&i| match (qa.get(i), qb.get(i)) {
                    (Some(x), Some(y)) => !eq(x, y),
                    _ => true,
                });
                if let Some(i) = pos {
                    let what = match (qa.get(i), qb.get(i)) {
                        (Some(x), Some(y)) if x.name != y.name => {
                            format!("{} in A, {} in B", x.name, y.name)
                        }
                        (Some(x), Some(y)) => format!("{}: {}", x.name, what_differs(x, y)),
                        (Some(x), None) => format!("B ends; A has {}", x.name),
                        (None, Some(y)) => format!("A ends; B has {}", y.name),
                        (None, None) => String::new(),
                    };
                    reason = Some(format!("queue {qi}, dispatch {i}: {what}"));
                    first_divergence = Some(divergence(qa, qb, qi, i));
                    break;
                }
            }
            reason
        }
    };
    Outcome {
        level,
        same: reason.is_none(),
        reason,
        dispatches_a: a.dispatch_count(),
        dispatches_b: b.dispatch_count(),
        queues_a: a.queues.len(),
        queues_b: b.queues.len(),
        lds_compared,
        first_divergence,
        count_differences,
        only_in_a,
        only_in_b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_commas_and_crlf() {
        let rows = parse_csv("a,\"b,c\",\"d\"\"e\"\r\n1,2,3\n").unwrap();
        assert_eq!(rows[0].1, vec!["a", "b,c", "d\"e"]);
        assert_eq!(rows[1], (16, vec!["1".into(), "2".into(), "3".into()]));
        assert_eq!(parse_csv("a,\"b").unwrap_err().offset, 2);
    }

    #[test]
    fn rocprofv3_csv_with_stream_id_and_segment_columns() {
        // The column set of rocprofiler-sdk's sample kernel_trace.csv: Stream_Id, but
        // Private/Group_Segment_Size rather than LDS_Block_Size/Scratch_Size.
        let text = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n\
\"KERNEL_DISPATCH\",2,2,2,21228,5,11,\"void addition_kernel<float>(float*, float const*, int)\",1969,1,2,0,0,64,1,1,1024,1024,1\n\
\"KERNEL_DISPATCH\",2,1,1,21228,1,14,\"subtract_kernel(float*, int)\",1937,1,2,0,512,64,1,1,1024,1024,1\n";
        let t = from_csv(text).unwrap();
        assert_eq!(t.kind, "rocprofv3_csv");
        assert_eq!(t.lds, LdsSemantics::Packet);
        // Sorted by Dispatch_Id: queue 1 appears first.
        assert_eq!(t.queues.len(), 2);
        assert_eq!(t.queues[0][0].name, "subtract_kernel(float*, int)");
        assert_eq!(t.queues[0][0].group_segment_size, Some(512));
        assert_eq!(t.queues[1][0].grid, [1024, 1024, 1]);
        assert_eq!(
            t.queues[1][0].name,
            "void addition_kernel<float>(float*, float const*, int)"
        );
    }

    #[test]
    fn names_are_normalised() {
        assert_eq!(
            normalise_name(" _Z15matrixTransposePfS_i.kd "),
            "matrixTranspose(float*, float*, int)"
        );
        assert_eq!(
            normalise_name("copy_kernel(float*, float*, int, int) [clone .kd]"),
            "copy_kernel(float*, float*, int, int)"
        );
    }
}
