//! Comparing dispatch streams from different tools (`softgpu diff`). Pure: no I/O.
//!
//! Every reader is strict: a CSV row with more or fewer fields than its header,
//! a stray quote, a header naming a column twice, a number that is not one, or
//! a rocprofv3 JSON size that is missing, a string or negative is an
//! [`InputError`] naming the line, the byte offset and the field, never a
//! guess.
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

use crate::capture::Capture;
use crate::report::{Context, kernel_name};

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
    /// The explicit arguments, as `softgpu diff --level args` compares them
    /// (a capture with arguments only; see [`arg_keys`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
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
                name: normalise_name(&v.kernel_name_label()),
                grid: g.map(u64::from),
                workgroup: w.map(u64::from),
                totals_only: false,
                group_segment_size: v.dec.group_segment_size.map(u64::from),
                args: v.args.as_ref().map(|a| arg_keys(a, v.findings)),
            },
        ));
    }
    Trace {
        kind: "softgpu_capture",
        lds: LdsSemantics::Packet,
        queues: group(rows),
    }
}

/// The explicit arguments of a decoded block as `--level args` compares
/// them: a by-value argument by its value, exactly (`float a=2.0`; bytes in
/// hex); a pointer by the allocation and offset the runtime's finding names
/// (`float* x=alloc 3 +16`), `null`, or its finding's code; never by its
/// raw address, which differs from run to run.
pub fn arg_keys(
    args: &crate::kernargs::DecodedArgs,
    findings: &[crate::kernargs::ArgFinding],
) -> Vec<String> {
    use crate::kernargs::{ArgValue, PointerFinding};
    args.args
        .iter()
        .filter(|a| !a.is_hidden())
        .map(|a| {
            let ty = a.type_text.as_deref().unwrap_or(&a.kind);
            let label = match &a.name {
                Some(n) => format!("{ty} {n}"),
                None => ty.to_string(),
            };
            let value = match &a.value {
                ArgValue::Pointer(p) => {
                    match findings
                        .iter()
                        .find(|f| f.index == a.index)
                        .map(|f| &f.finding)
                    {
                        Some(PointerFinding::InAllocation {
                            allocation, offset, ..
                        })
                        | Some(PointerFinding::UseAfterFree {
                            allocation, offset, ..
                        })
                        | Some(PointerFinding::NoAccess {
                            allocation, offset, ..
                        }) => format!("alloc {allocation} +{offset}"),
                        Some(PointerFinding::PastEnd {
                            allocation,
                            size,
                            past,
                        }) => format!("alloc {allocation} +{}", size + past),
                        Some(f) => f.code().to_string(),
                        None if *p == 0 => "null".to_string(),
                        None => "pointer (no allocation recorded)".to_string(),
                    }
                }
                v => v.text(),
            };
            format!("{label}={value}")
        })
        .collect()
}

/// Why an input could not be read as a dispatch stream, and where: the byte
/// offset (from the start of the text), the line when known, and the field
/// (a CSV column, or the path of a JSON value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}offset {offset}: {}{message}", line_prefix(*.line), field_prefix(.field))]
pub struct InputError {
    pub offset: u64,
    /// 1-based line number.
    pub line: Option<u64>,
    /// The CSV column or JSON path the problem is in.
    pub field: Option<String>,
    pub message: String,
}

fn line_prefix(line: Option<u64>) -> String {
    line.map_or_else(String::new, |l| format!("line {l}, "))
}

fn field_prefix(field: &Option<String>) -> String {
    match field {
        Some(f) if f.is_empty() => String::new(),
        Some(f) => format!("{f}: "),
        None => String::new(),
    }
}

fn err(offset: u64, message: impl Into<String>) -> InputError {
    InputError {
        offset,
        line: None,
        field: None,
        message: message.into(),
    }
}

/// One CSV record: where it starts and its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvRow {
    /// Byte offset of the record's first byte.
    pub offset: u64,
    /// 1-based line of the record's first byte.
    pub line: u64,
    pub fields: Vec<String>,
}

impl CsvRow {
    fn error(&self, field: Option<&str>, message: impl Into<String>) -> InputError {
        InputError {
            offset: self.offset,
            line: Some(self.line),
            field: field.map(|c| format!("column {c}")),
            message: message.into(),
        }
    }
}

/// Checks that the raw bytes of one record (starting at byte `at` of the
/// input) quote as RFC 4180 says: a field is either unquoted and holds no
/// quote, or quoted from its first byte to its last with inner quotes doubled.
/// The `csv` crate reads stray quotes leniently (`a"b` as is, `"a"b` as `ab`),
/// which would let a damaged row through with shifted fields.
fn check_quoting(raw: &[u8], at: u64) -> Result<(), (u64, &'static str)> {
    let mut i = 0usize;
    loop {
        if raw.get(i) == Some(&b'"') {
            let open = i;
            i += 1;
            loop {
                match raw.get(i) {
                    None => return Err((at + open as u64, "unterminated quoted field")),
                    Some(b'"') if raw.get(i + 1) == Some(&b'"') => i += 2,
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            match raw.get(i) {
                None | Some(b'\r' | b'\n') => return Ok(()),
                Some(b',') => i += 1,
                Some(_) => {
                    return Err((
                        at + i as u64,
                        "text after the closing quote of a quoted field",
                    ));
                }
            }
        } else {
            loop {
                match raw.get(i) {
                    None | Some(b'\r' | b'\n') => return Ok(()),
                    Some(b',') => {
                        i += 1;
                        break;
                    }
                    Some(b'"') => {
                        return Err((
                            at + i as u64,
                            "a quote inside an unquoted field (a field holding a quote must be quoted whole, with the quote doubled)",
                        ));
                    }
                    Some(_) => i += 1,
                }
            }
        }
    }
}

/// Reads RFC 4180 CSV (with the `csv` crate): the header row and the records
/// after it, each with its byte offset and line. Strict: every record has as
/// many fields as the header, quoting is checked ([`check_quoting`]), no header
/// column appears twice, and a record may hold at most [`MAX_FIELDS`] fields.
/// Blank lines are skipped.
pub fn parse_csv(text: &str) -> Result<(CsvRow, Vec<CsvRow>), InputError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(false)
        .from_reader(text.as_bytes());
    let mut rows: Vec<CsvRow> = Vec::new();
    let mut record = csv::StringRecord::new();
    // (offset, line) of the last record: lines are counted incrementally.
    let mut counted: (u64, u64) = (0, 1);
    loop {
        let more = reader
            .read_record(&mut record)
            .map_err(|e| csv_error(&e, text))?;
        if !more {
            break;
        }
        let mut offset = record.position().map_or(0, |p| p.byte());
        // After a CR LF the reader's record position can point at the LF (it
        // ends records at the CR, and counts the line only at the LF); a
        // record never begins with a line break. Lines are counted here.
        let bytes = text.as_bytes();
        while matches!(bytes.get(offset as usize), Some(b'\r' | b'\n')) {
            offset += 1;
        }
        let from = usize::try_from(counted.0).unwrap_or(0);
        let to = usize::try_from(offset).unwrap_or(0).min(bytes.len());
        let line = counted.1
            + bytes[from.min(to)..to]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64;
        counted = (offset, line);
        let end = usize::try_from(reader.position().byte()).unwrap_or(text.len());
        let raw = bytes
            .get(usize::try_from(offset).unwrap_or(0)..end.min(text.len()))
            .unwrap_or(&[]);
        check_quoting(raw, offset).map_err(|(at, message)| InputError {
            offset: at,
            line: Some(line),
            field: None,
            message: message.to_string(),
        })?;
        if record.len() > MAX_FIELDS {
            return Err(err(offset, "more than 4096 fields in a row"));
        }
        rows.push(CsvRow {
            offset,
            line,
            fields: record.iter().map(str::to_string).collect(),
        });
    }
    let mut rows = rows.into_iter();
    let header = rows.next().ok_or_else(|| err(0, "empty CSV file"))?;
    for (i, name) in header.fields.iter().enumerate() {
        if let Some(j) = header.fields[..i]
            .iter()
            .position(|h| h.trim() == name.trim())
        {
            return Err(header.error(
                Some(name.trim()),
                format!(
                    "the header names this column twice (fields {} and {})",
                    j + 1,
                    i + 1
                ),
            ));
        }
    }
    Ok((header, rows.collect()))
}

/// A `csv` reader error with its position (the record's first byte and line,
/// counted in `text`).
fn csv_error(e: &csv::Error, text: &str) -> InputError {
    let bytes = text.as_bytes();
    let mut offset = e.position().map_or(0, |p| p.byte());
    while matches!(bytes.get(offset as usize), Some(b'\r' | b'\n')) {
        offset += 1;
    }
    let upto = usize::try_from(offset).unwrap_or(0).min(bytes.len());
    let line = 1 + bytes[..upto].iter().filter(|&&b| b == b'\n').count() as u64;
    // A stray or unterminated quote is what makes a row's fields come out
    // wrong: report it rather than the field count it caused.
    if let Err((at, message)) = check_quoting(&bytes[upto..], offset) {
        return InputError {
            offset: at,
            line: Some(line),
            field: None,
            message: message.to_string(),
        };
    }
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "the row has {len} fields but the header has {expected_len} (an unquoted comma in a field, or a damaged row)"
        ),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_string(),
        _ => format!("not readable as CSV: {e}"),
    };
    InputError {
        offset,
        line: Some(line),
        field: None,
        message,
    }
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

/// The trimmed value of column `name` in `row` (rows have as many fields as the
/// header: [`parse_csv`] checks), or an error when there is no such column.
fn field<'r>(cols: &Columns<'_>, row: &'r CsvRow, name: &str) -> Result<&'r str, InputError> {
    let i = cols
        .idx(name)
        .ok_or_else(|| err(0, format!("missing column {name}")))?;
    row.fields
        .get(i)
        .map(|s| s.trim())
        .ok_or_else(|| row.error(Some(name), "the row has no such field"))
}

/// An optional column's value: `None` when the column is absent.
fn opt_field<'r>(cols: &Columns<'_>, row: &'r CsvRow, name: &str) -> Option<&'r str> {
    cols.idx(name)
        .and_then(|i| row.fields.get(i))
        .map(|s| s.trim())
}

fn parse_num(row: &CsvRow, name: &str, s: &str) -> Result<u64, InputError> {
    s.parse::<u64>()
        .map_err(|_| row.error(Some(name), format!("not a non-negative integer: {s:?}")))
}

fn num(cols: &Columns<'_>, row: &CsvRow, name: &str) -> Result<u64, InputError> {
    parse_num(row, name, field(cols, row, name)?)
}

/// An optional number: `None` when the column is absent or the field is empty;
/// an error when it holds anything but a number.
fn opt_num(cols: &Columns<'_>, row: &CsvRow, name: &str) -> Result<Option<u64>, InputError> {
    match opt_field(cols, row, name) {
        None | Some("") => Ok(None),
        Some(s) => parse_num(row, name, s).map(Some),
    }
}

/// A CSV input: rocprofv3 kernel_trace.csv (current or older columns), rocprof v1
/// results.csv, or `softgpu inspect --format csv`.
pub fn from_csv(text: &str) -> Result<Trace, InputError> {
    let (header, body) = parse_csv(text)?;
    let cols = Columns {
        header: &header.fields,
    };
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
        for (n, row) in body.iter().enumerate() {
            if let Some(k) = opt_field(&cols, row, "Kind") {
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
                    gv[i] = num(&cols, row, g[i])?;
                    wv[i] = num(&cols, row, w[i])?;
                }
                (gv, wv, false)
            } else {
                let g = num(&cols, row, "Grid_Size")?;
                let w = num(&cols, row, "Workgroup_Size")?;
                ([g, 1, 1], [w, 1, 1], true)
            };
            let queue = format!(
                "{}/{}",
                opt_field(&cols, row, "Agent_Id").unwrap_or(""),
                opt_field(&cols, row, "Queue_Id").unwrap_or("")
            );
            let key = opt_num(&cols, row, "Dispatch_Id")?.unwrap_or(n as u64);
            out.push((
                key,
                queue,
                Dispatch {
                    name: normalise_name(field(&cols, row, "Kernel_Name")?),
                    grid,
                    workgroup,
                    totals_only,
                    group_segment_size: opt_num(&cols, row, lds_col)?,
                    args: None,
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
        for (n, row) in body.iter().enumerate() {
            let queue = format!(
                "{}/{}",
                opt_field(&cols, row, "gpu-id").unwrap_or(""),
                opt_field(&cols, row, "queue-id").unwrap_or("")
            );
            let key = opt_num(&cols, row, "Index")?.unwrap_or(n as u64);
            out.push((
                key,
                queue,
                Dispatch {
                    name: normalise_name(field(&cols, row, "KernelName")?),
                    grid: [num(&cols, row, "grd")?, 1, 1],
                    workgroup: [num(&cols, row, "wgr")?, 1, 1],
                    totals_only: true,
                    group_segment_size: opt_num(&cols, row, "lds")?,
                    args: None,
                },
            ));
        }
        return Ok(Trace {
            kind: "rocprof_v1_csv",
            lds: LdsSemantics::RocprofV1,
            queues: group(out),
        });
    }
    Err(InputError {
        offset: header.offset,
        line: Some(header.line),
        field: None,
        message: "CSV header has neither rocprofv3 kernel_trace.csv columns (Kernel_Name, Grid_Size_X) nor rocprof v1 results.csv columns (KernelName, grd, wgr)".to_string(),
    })
}

/// The rocprofv3 JSON document, read strictly into types: a size or id that is
/// missing, a string, negative or fractional is an error naming its path, not
/// a 0. Fields this reader does not use are ignored.
mod rocprof_json {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::Deserialize;
    use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

    #[derive(Deserialize)]
    pub struct Doc {
        #[serde(rename = "rocprofiler-sdk-tool")]
        pub tool: OneOrMany<Process>,
    }

    /// One per-process object, or an array of them.
    pub struct OneOrMany<T>(pub Vec<T>);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
                type Value = OneOrMany<T>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an object or an array of objects")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                    let mut v = Vec::new();
                    while let Some(x) = seq.next_element()? {
                        v.push(x);
                    }
                    Ok(OneOrMany(v))
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                    T::deserialize(de::value::MapAccessDeserializer::new(map))
                        .map(|x| OneOrMany(vec![x]))
                }
            }
            d.deserialize_any(V(PhantomData))
        }
    }

    /// An array of objects, or an object whose values are the objects (keys
    /// ignored).
    pub struct Items<T>(pub Vec<T>);

    impl<T> Default for Items<T> {
        fn default() -> Self {
            Items(Vec::new())
        }
    }

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Items<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
                type Value = Items<T>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an array of objects or an object of objects")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                    let mut v = Vec::new();
                    while let Some(x) = seq.next_element()? {
                        v.push(x);
                    }
                    Ok(Items(v))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut v = Vec::new();
                    while let Some((_, x)) = map.next_entry::<de::IgnoredAny, T>()? {
                        v.push(x);
                    }
                    Ok(Items(v))
                }
            }
            d.deserialize_any(V(PhantomData))
        }
    }

    #[derive(Deserialize)]
    pub struct Process {
        #[serde(default)]
        pub kernel_symbols: Items<KernelSymbol>,
        #[serde(default)]
        pub buffer_records: BufferRecords,
    }

    #[derive(Deserialize, Default)]
    pub struct BufferRecords {
        #[serde(default)]
        pub kernel_dispatch: Items<DispatchRecord>,
    }

    #[derive(Deserialize)]
    pub struct KernelSymbol {
        pub kernel_id: Id,
        pub kernel_name: Option<String>,
        pub demangled_kernel_name: Option<String>,
        pub formatted_kernel_name: Option<String>,
    }

    /// A non-negative integer id, or an object `{ "handle": id }` (agent and
    /// queue ids).
    #[derive(Deserialize, Clone, Copy)]
    #[serde(
        untagged,
        expecting = "a non-negative integer or an object {\"handle\": integer}"
    )]
    pub enum Id {
        Plain(u64),
        Handle { handle: u64 },
    }

    impl Id {
        pub fn get(self) -> u64 {
            match self {
                Id::Plain(v) | Id::Handle { handle: v } => v,
            }
        }
    }

    /// Work-items or a workgroup: all three sizes, non-negative integers.
    #[derive(Deserialize, Clone, Copy)]
    pub struct Xyz {
        pub x: u64,
        pub y: u64,
        pub z: u64,
    }

    /// What a dispatch record says about its dispatch.
    #[derive(Deserialize, Clone, Copy)]
    pub struct DispatchInfo {
        pub kernel_id: Id,
        pub agent_id: Option<Id>,
        pub queue_id: Option<Id>,
        pub dispatch_id: Option<u64>,
        pub group_segment_size: Option<u64>,
        pub workgroup_size: Xyz,
        pub grid_size: Xyz,
    }

    /// A `kernel_dispatch` buffer record: its fields in `dispatch_info`
    /// (rocprofiler-sdk's layout), or on the record itself (an older one).
    pub struct DispatchRecord(pub DispatchInfo);

    #[derive(Deserialize)]
    struct RawRecord {
        dispatch_info: Option<DispatchInfo>,
        kernel_id: Option<Id>,
        agent_id: Option<Id>,
        queue_id: Option<Id>,
        dispatch_id: Option<u64>,
        group_segment_size: Option<u64>,
        workgroup_size: Option<Xyz>,
        grid_size: Option<Xyz>,
    }

    impl<'de> Deserialize<'de> for DispatchRecord {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let r = RawRecord::deserialize(d)?;
            if let Some(info) = r.dispatch_info {
                return Ok(DispatchRecord(info));
            }
            let missing = |name| {
                de::Error::custom(format!(
                    "a kernel_dispatch record with neither dispatch_info nor {name}"
                ))
            };
            Ok(DispatchRecord(DispatchInfo {
                kernel_id: r.kernel_id.ok_or_else(|| missing("kernel_id"))?,
                agent_id: r.agent_id,
                queue_id: r.queue_id,
                dispatch_id: r.dispatch_id,
                group_segment_size: r.group_segment_size,
                workgroup_size: r.workgroup_size.ok_or_else(|| missing("workgroup_size"))?,
                grid_size: r.grid_size.ok_or_else(|| missing("grid_size"))?,
            }))
        }
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
/// through `kernel_symbols`. Strict ([`rocprof_json`]): an error names the
/// line, the byte offset and the path of the value.
pub fn from_rocprof_json(text: &str) -> Result<Trace, InputError> {
    let at = |e: &serde_json::Error, path: Option<String>| InputError {
        offset: json_offset(text, e.line(), e.column()),
        line: Some(e.line() as u64),
        field: path,
        message: json_message(e),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let doc: rocprof_json::Doc = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        at(e.inner(), (path != ".").then_some(path))
    })?;
    de.end().map_err(|e| at(&e, None))?;
    let mut rows = Vec::new();
    let mut n = 0u64;
    for (pi, p) in doc.tool.0.iter().enumerate() {
        let mut names: BTreeMap<u64, String> = BTreeMap::new();
        for s in &p.kernel_symbols.0 {
            // The symbol itself first: demangled here it gives the full name a capture
            // shows; `formatted_kernel_name` may be truncated (`--truncate-kernels`).
            let name = [
                &s.kernel_name,
                &s.demangled_kernel_name,
                &s.formatted_kernel_name,
            ]
            .into_iter()
            .find_map(|x| x.as_deref().filter(|x| !x.is_empty()));
            if let Some(name) = name {
                names.insert(s.kernel_id.get(), normalise_name(name));
            }
        }
        for r in &p.buffer_records.kernel_dispatch.0 {
            let info = r.0;
            let k = info.kernel_id.get();
            let name = names
                .get(&k)
                .cloned()
                .unwrap_or_else(|| format!("kernel_id {k}"));
            let key = info.dispatch_id.unwrap_or(n);
            n += 1;
            let queue = format!(
                "{pi}/{}/{}",
                info.agent_id.map_or(0, rocprof_json::Id::get),
                info.queue_id.map_or(0, rocprof_json::Id::get)
            );
            let xyz = |v: rocprof_json::Xyz| [v.x, v.y, v.z];
            rows.push((
                key,
                queue,
                Dispatch {
                    name,
                    grid: xyz(info.grid_size),
                    workgroup: xyz(info.workgroup_size),
                    totals_only: false,
                    group_segment_size: info.group_segment_size,
                    args: None,
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

/// A serde_json error's message without its " at line L column C" tail (the
/// position is reported separately).
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let tail = format!(" at line {} column {}", e.line(), e.column());
    let msg = full.strip_suffix(&tail).unwrap_or(&full);
    match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("invalid JSON: {msg}")
        }
        _ => msg.to_string(),
    }
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
    /// As `exact`, and the same explicit arguments (by-value arguments
    /// exactly, pointers by allocation and offset; see [`arg_keys`]).
    Args,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::Count => "count",
            Level::Order => "order",
            Level::Events => "events",
            Level::Args => "args",
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

/// Which argument differs between two dispatches that are otherwise the same.
fn args_differ(x: &Dispatch, y: &Dispatch) -> String {
    match (&x.args, &y.args) {
        (None, _) => "arguments not captured in A".into(),
        (_, None) => "arguments not captured in B".into(),
        (Some(a), Some(b)) if a.len() != b.len() => {
            format!("{} arguments in A, {} in B", a.len(), b.len())
        }
        (Some(a), Some(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find(|(_, (p, q))| p != q)
            .map(|(i, (p, q))| format!("argument {i}: {p} in A, {q} in B"))
            .unwrap_or_default(),
    }
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
    let lds_compared = matches!(level, Level::Exact | Level::Args) && a.lds == b.lds;
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
        Level::Order | Level::Exact | Level::Args => {
            let mut reason = None;
            for qi in 0..a.queues.len().max(b.queues.len()) {
                let empty = Vec::new();
                let qa = a.queues.get(qi).unwrap_or(&empty);
                let qb = b.queues.get(qi).unwrap_or(&empty);
                let eq = |x: &Dispatch, y: &Dispatch| {
                    if level == Level::Args {
                        x.same_as(y, lds_compared) && x.args.is_some() && x.args == y.args
                    } else if level == Level::Exact {
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
                        (Some(x), Some(y))
                            if level == Level::Args && x.same_as(y, lds_compared) =>
                        {
                            format!("{}: {}", x.name, args_differ(x, y))
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
        let (header, rows) = parse_csv("a,\"b,c\",\"d\"\"e\"\r\n1,2,3\n").unwrap();
        assert_eq!(header.fields, vec!["a", "b,c", "d\"e"]);
        assert_eq!(rows[0].offset, 16);
        assert_eq!(rows[0].line, 2);
        assert_eq!(rows[0].fields, vec!["1", "2", "3"]);
        assert_eq!(parse_csv("a,\"b").unwrap_err().offset, 2);
    }

    #[test]
    fn stray_quotes_are_errors_at_their_byte() {
        for (text, at) in [
            ("a,b\nx,y\"z\n", 7),
            ("a,b\n\"x\"y,z\n", 7),
            ("a,b\nx,\"y\n", 6),
        ] {
            let e = parse_csv(text).unwrap_err();
            assert_eq!(e.offset, at, "{text:?}: {e}");
            assert_eq!(e.line, Some(2), "{text:?}: {e}");
        }
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
