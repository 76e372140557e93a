//! The report view: what a captured record means to a reader, shared by the
//! CLI's reports (`softgpu inspect`, `run`) and the dispatch streams `softgpu
//! diff` compares. Labels and summary wording for the capture's mode, resolved
//! kernel names and targets, the JSONL object of `docs/OUTPUT.md`, table lines
//! and CSV rows. Pure: no I/O.
//!
//! Layers point one way: `cli` uses `diff` and this module, `diff` uses this
//! module, and this module uses `capture` (the format) and `aql` (the packet
//! layer): never the other way round.

use std::collections::HashMap;

use serde::Serialize;

use crate::abi::PacketType;
use crate::aql::{
    DecodedPacket, LABEL_NOT_KERNEL_SUCCESS, LABEL_OBSERVED, Reason, ReasonSet, Status,
};
use crate::capture::{
    AgentKind, Capture, CaptureHeader, CapturedRecord, KernargClass, RecordKernarg,
};
use crate::kernargs::{ArgFinding, DecodedArgs, DispatchGeometry, HiddenMismatch, PointerFinding};

/// `0x` + lower-case hex, no padding.
pub fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// The 64 bytes as 128 lower-case hex characters.
pub fn raw_hex(raw: &[u8; 64]) -> String {
    let mut s = String::with_capacity(128);
    for b in raw {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Stable codes of every bit in `set`; a bit this build does not know (a newer
/// writer's reason) is shown as `unknown_reason_N` rather than dropped.
pub fn reason_codes(set: ReasonSet) -> Vec<String> {
    (0u8..64)
        .filter(|b| set.0 & (1u64 << b) != 0)
        .map(|b| match Reason::from_u8(b) {
            Some(r) => r.code().to_string(),
            None => format!("unknown_reason_{b}"),
        })
        .collect()
}

/// The codes of a record's `reasons` list: the captured reason bits
/// ([`reason_codes`], in bit order), then the code of every finding on the
/// dispatch's arguments that reports a problem, each once: pointer findings
/// other than `pointer_in_allocation` and `pointer_null`
/// ([`PointerFinding::is_problem`]) in the order of [`PointerFinding::CODES`],
/// then `hidden_arg_mismatch` ([`HiddenMismatch::CODE`]). `arg_findings` and
/// `hidden_mismatches` keep the detail.
///
/// The finding codes are added here, when a capture is read, not by the
/// writer: the Packet frame's `reasons` word holds the packet's own reason
/// bits (which the processor decides before the arguments are checked, on
/// the writer thread), so a capture written before findings were reasons
/// shows them too. They never change the record's `status`.
pub fn record_reasons(
    set: ReasonSet,
    findings: &[ArgFinding],
    hidden: &[HiddenMismatch],
) -> Vec<String> {
    let mut codes = reason_codes(set);
    for code in PointerFinding::CODES {
        if findings
            .iter()
            .any(|f| f.finding.is_problem() && f.finding.code() == code)
        {
            codes.push(code.to_string());
        }
    }
    if !hidden.is_empty() {
        codes.push(HiddenMismatch::CODE.to_string());
    }
    codes
}

pub use crate::code_object::kernel_name;

/// The `label` of a record with `status` in a capture with `header`: the
/// diagnostic label of the status, except in an observe-mode capture, where
/// every record is [`LABEL_OBSERVED`] (the kernels ran on the real runtime).
pub fn record_label(header: &CaptureHeader, status: Status) -> &'static str {
    if header.is_observe() {
        LABEL_OBSERVED
    } else {
        status.label()
    }
}

/// The `result_label` of a record: `not_kernel_success` for a validated
/// record under diagnostic completion, `None` for a rejected one and for every
/// record of an observe-mode capture.
pub fn result_label(header: &CaptureHeader, status: Status) -> Option<&'static str> {
    (!header.is_observe() && status == Status::Validated).then_some(LABEL_NOT_KERNEL_SUCCESS)
}

/// Whether the runtime below the shim was itself a SoftGPU copy standing in
/// for ROCr (as in the tests): a capture not recorded in virtual mode whose GPU
/// agents carry SoftGPU's product names ([`crate::isa::STAND_IN_PREFIX`]).
/// Then nothing ran, even in observe mode.
pub fn over_stand_in(header: &CaptureHeader) -> bool {
    header.mode != "virtual"
        && header
            .agents
            .iter()
            .any(|a| a.kind == AgentKind::Gpu && a.name.starts_with(crate::isa::STAND_IN_PREFIX))
}

/// The counts part of a summary line, worded for the capture's mode:
/// `N dispatches validated (diagnostic_complete_no_execution, not_kernel_success),
/// M rejected, B barriers`, or for an observe-mode capture `N dispatches observed
/// and forwarded to the real runtime (kernels ran there), M with findings, B
/// barriers`, where N counts every record that is not a barrier and M the
/// rejected records.
pub fn counts_summary(cap: &Capture) -> String {
    let c = cap.counts();
    if cap.header.is_observe() && over_stand_in(&cap.header) {
        format!(
            "{} dispatches observed and forwarded to the runtime below, a SoftGPU stand-in (kernels did not run there either), {} with findings, {} barriers",
            c.records.saturating_sub(c.barriers),
            c.rejected,
            c.barriers
        )
    } else if cap.header.is_observe() {
        format!(
            "{} dispatches observed and forwarded to the real runtime (kernels ran there), {} with findings, {} barriers",
            c.records.saturating_sub(c.barriers),
            c.rejected,
            c.barriers
        )
    } else {
        format!(
            "{} dispatches validated ({}, {LABEL_NOT_KERNEL_SUCCESS}), {} rejected, {} barriers",
            c.dispatches_validated,
            Status::Validated.label(),
            c.rejected,
            c.barriers
        )
    }
}

/// Lookups shared by every record of one capture.
#[derive(Debug)]
pub struct Context<'a> {
    pub capture: &'a Capture,
    symbols: HashMap<u64, &'a str>,
    names: HashMap<u64, String>,
    targets: HashMap<u64, Option<&'a str>>,
    agents: HashMap<u64, Option<u32>>,
}

impl<'a> Context<'a> {
    pub fn new(capture: &'a Capture) -> Context<'a> {
        let mut symbols = HashMap::new();
        for co in &capture.code_objects {
            for (addr, name) in &co.symbols {
                // The first table that names an address wins.
                symbols.entry(*addr).or_insert(name.as_str());
            }
        }
        let mut targets = HashMap::new();
        let mut agents = HashMap::new();
        for q in &capture.queues {
            let agent = capture
                .header
                .agents
                .iter()
                .find(|a| a.index == q.agent_index);
            targets.insert(q.queue_id, agent.and_then(|a| a.target.as_deref()));
            agents.insert(q.queue_id, Some(q.agent_index));
        }
        Context {
            capture,
            symbols,
            names: HashMap::new(),
            targets,
            agents,
        }
    }

    /// Everything a report shows about one record.
    pub fn view(&mut self, rec: &'a CapturedRecord) -> View<'a> {
        let dec = DecodedPacket::decode(&rec.raw);
        let is_dispatch = dec.packet_type == PacketType::KERNEL_DISPATCH;
        let symbol = dec
            .kernel_object
            .and_then(|k| self.symbols.get(&k).copied());
        let name = match (symbol, dec.kernel_object) {
            (Some(s), Some(k)) => Some(
                self.names
                    .entry(k)
                    .or_insert_with(|| kernel_name(s))
                    .clone(),
            ),
            _ => None,
        };
        let args = if is_dispatch {
            self.capture.decode_args(rec)
        } else {
            None
        };
        let findings = self.capture.arg_findings(rec);
        let call = args.as_ref().map(|a| call_text(a, findings));
        let hidden = match (&args, dec.kernel_object) {
            (Some(a), Some(k)) => {
                let fixed = self
                    .capture
                    .kernel_args
                    .get(&k)
                    .map_or(0, |s| s.metadata.group_segment_fixed_size);
                crate::kernargs::check_hidden(a, &geometry(&dec), fixed)
            }
            _ => Vec::new(),
        };
        View {
            rec,
            reasons: record_reasons(rec.reasons, findings, &hidden),
            args,
            findings,
            call,
            hidden,
            kernarg_bytes: self.capture.kernarg_bytes(rec),
            pid: self.capture.header.pid,
            dec,
            kernarg_class: is_dispatch.then_some(rec.kernarg_class),
            symbol,
            name,
            target: self.targets.get(&rec.queue_id).copied().flatten(),
            agent_index: self.agents.get(&rec.queue_id).copied().flatten(),
            kernel: dec.kernel_object.and_then(|k| self.capture.kernels.get(&k)),
            label: record_label(&self.capture.header, rec.status),
            result_label: result_label(&self.capture.header, rec.status),
        }
    }
}

/// The packet fields the hidden arguments are checked against.
pub fn geometry(dec: &DecodedPacket) -> DispatchGeometry {
    DispatchGeometry {
        dimensions: dec.dimensions.unwrap_or(0),
        workgroup_size: dec.workgroup.unwrap_or([0; 3]),
        grid_size: dec.grid.unwrap_or([0; 3]),
        group_segment_size: dec.group_segment_size.unwrap_or(0),
    }
}

/// The call text of decoded arguments, each pointer annotated with the
/// runtime's finding for it (`(alloc 3 +0 of 4000 B)`), when recorded.
pub fn call_text(args: &DecodedArgs, findings: &[ArgFinding]) -> String {
    args.call_text(&mut |a, _| {
        findings
            .iter()
            .find(|f| f.index == a.index)
            .map(|f| f.finding.annotation(|_| None))
    })
}

/// One record with its decoded fields and resolved names.
#[derive(Debug)]
pub struct View<'a> {
    pub rec: &'a CapturedRecord,
    /// The `reasons` every report shows: the captured reason codes and the
    /// codes of the problem findings ([`record_reasons`]).
    pub reasons: Vec<String>,
    /// 2.1: the arguments, decoded from the capture alone.
    pub args: Option<DecodedArgs>,
    /// 2.1: the runtime's pointer findings for them.
    pub findings: &'a [ArgFinding],
    /// The call text (`saxpy(float 2.0, float* 0x... (alloc 3 +0 of 4000 B))`).
    pub call: Option<String>,
    /// Hidden arguments that disagree with the packet.
    pub hidden: Vec<HiddenMismatch>,
    /// The captured kernarg bytes.
    pub kernarg_bytes: Option<&'a [u8]>,
    pub pid: u32,
    pub dec: DecodedPacket,
    /// `None` for packets other than kernel dispatches.
    pub kernarg_class: Option<KernargClass>,
    pub symbol: Option<&'a str>,
    pub name: Option<String>,
    pub target: Option<&'a str>,
    pub agent_index: Option<u32>,
    /// Register counts and static sizes of the dispatched kernel, when the
    /// capture recorded them (format 1.1+).
    pub kernel: Option<&'a crate::capture::KernelMeta>,
    /// The `label`, from the status and the capture's mode ([`record_label`]).
    pub label: &'static str,
    /// The `result_label` ([`result_label`]).
    pub result_label: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonHeader {
    barrier: bool,
    acquire_fence_scope: &'static str,
    release_fence_scope: &'static str,
}

/// The JSONL record, field by field as `docs/OUTPUT.md` lists it (keep the
/// two in step); the fields after `raw` are extras.
#[derive(Serialize)]
struct JsonRecord<'a> {
    seq: u64,
    pid: u32,
    queue_id: u64,
    packet_index: u64,
    #[serde(rename = "type")]
    type_: &'static str,
    status: &'static str,
    label: &'static str,
    reasons: Vec<String>,
    header: JsonHeader,
    dimensions: Option<u16>,
    workgroup: Option<[u16; 3]>,
    grid: Option<[u32; 3]>,
    private_segment_size: Option<u32>,
    group_segment_size: Option<u32>,
    kernel_object: Option<String>,
    kernarg_address: Option<String>,
    completion_signal: String,
    kernarg_class: Option<&'static str>,
    kernel_symbol: Option<&'a str>,
    kernel_name: Option<&'a str>,
    target: Option<&'a str>,
    raw: String,
    result_label: Option<&'static str>,
    observed_ns: u64,
    done_ns: u64,
    thread: u32,
    sgpr_count: Option<u32>,
    vgpr_count: Option<u32>,
    agpr_count: Option<u32>,
    static_group_segment_size: Option<u32>,
    static_private_segment_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernarg_state: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernarg_unreadable: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernarg_segment_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernarg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<&'a [crate::kernargs::DecodedArg]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arg_disagreements: Option<&'a [crate::kernargs::Disagreement]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arg_findings: Option<&'a [ArgFinding]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden_mismatches: Option<&'a [HiddenMismatch]>,
}

impl View<'_> {
    /// The JSONL line (without the newline).
    pub fn json(&self) -> String {
        let r = self.rec;
        let d = &self.dec;
        let j = JsonRecord {
            seq: r.seq,
            pid: self.pid,
            queue_id: r.queue_id,
            packet_index: r.packet_index,
            type_: d.type_name,
            status: r.status.as_str(),
            label: self.label,
            reasons: self.reasons.clone(),
            header: JsonHeader {
                barrier: d.barrier,
                acquire_fence_scope: d.acquire_fence_scope,
                release_fence_scope: d.release_fence_scope,
            },
            dimensions: d.dimensions,
            workgroup: d.workgroup,
            grid: d.grid,
            private_segment_size: d.private_segment_size,
            group_segment_size: d.group_segment_size,
            kernel_object: d.kernel_object.map(hex),
            kernarg_address: d.kernarg_address.map(hex),
            completion_signal: hex(d.completion_signal),
            kernarg_class: self.kernarg_class.map(KernargClass::as_str),
            kernel_symbol: self.symbol,
            kernel_name: self.name.as_deref(),
            target: self.target,
            raw: raw_hex(&r.raw),
            result_label: self.result_label,
            observed_ns: r.observed_ns,
            done_ns: r.done_ns,
            thread: r.thread,
            sgpr_count: self.kernel.map(|k| k.sgpr_count),
            vgpr_count: self.kernel.map(|k| k.vgpr_count),
            agpr_count: self.kernel.map(|k| k.agpr_count),
            static_group_segment_size: self.kernel.map(|k| k.group_segment_fixed_size),
            static_private_segment_size: self.kernel.map(|k| k.private_segment_fixed_size),
            kernarg_state: r.kernarg.state(),
            kernarg_unreadable: match r.kernarg {
                RecordKernarg::Unreadable(u) => Some(u.code()),
                _ => None,
            },
            kernarg_segment_size: match r.kernarg {
                RecordKernarg::Block {
                    truncated_from: Some(s),
                    ..
                } => Some(s),
                _ => self.args.as_ref().map(|a| a.segment_size),
            },
            kernarg: self.kernarg_bytes.map(crate::kernargs::hex),
            call: self.call.as_deref(),
            args: self.args.as_ref().map(|a| a.args.as_slice()),
            arg_disagreements: self.args.as_ref().map(|a| a.disagreements.as_slice()),
            arg_findings: (r.kernarg.state().is_some() && self.kernarg_bytes.is_some())
                .then_some(self.findings),
            hidden_mismatches: self.args.as_ref().map(|_| self.hidden.as_slice()),
        };
        // Serialising plain strings and numbers cannot fail.
        serde_json::to_string(&j).unwrap_or_default()
    }

    /// What the table's KERNEL column shows: the call when the arguments
    /// were decoded, else the kernel's name.
    pub fn kernel_label(&self) -> String {
        if let Some(c) = &self.call {
            return c.clone();
        }
        self.kernel_name_label()
    }

    /// The kernel's name, its object address, or `-`.
    pub fn kernel_name_label(&self) -> String {
        match (&self.name, self.dec.kernel_object) {
            (Some(n), _) => n.clone(),
            (None, Some(k)) => hex(k),
            (None, None) => "-".into(),
        }
    }
}

/// Table header line of `inspect`.
pub const TABLE_HEADER: &str = "      SEQ   QUEUE    INDEX  TYPE             STATUS     GRID                  WORKGROUP       KERNARG         KERNEL  REASONS";

fn triple<T: std::fmt::Display>(t: Option<[T; 3]>) -> String {
    match t {
        Some([x, y, z]) => format!("{x}x{y}x{z}"),
        None => "-".into(),
    }
}

/// One `inspect` table line.
pub fn table_line(v: &View<'_>) -> String {
    let reasons = &v.reasons;
    format!(
        "{:>9} {:>7} {:>8}  {:<16} {:<10} {:<21} {:<15} {:<15} {}  {}",
        v.rec.seq,
        v.rec.queue_id,
        v.rec.packet_index,
        v.dec.type_name,
        v.rec.status.as_str(),
        triple(v.dec.grid),
        triple(v.dec.workgroup),
        v.kernarg_class.map_or("-", KernargClass::as_str),
        v.kernel_label(),
        if reasons.is_empty() {
            "-".to_string()
        } else {
            reasons.join(",")
        },
    )
}

/// CSV columns. The first ones carry rocprofv3 `kernel_trace.csv` names where
/// the meaning matches; the rest are ours.
pub const CSV_COLUMNS: &[&str] = &[
    "Kind",
    "Agent_Id",
    "Queue_Id",
    "Thread_Id",
    "Dispatch_Id",
    "Kernel_Name",
    "LDS_Block_Size",
    "Scratch_Size",
    "VGPR_Count",
    "Accum_VGPR_Count",
    "SGPR_Count",
    "Workgroup_Size_X",
    "Workgroup_Size_Y",
    "Workgroup_Size_Z",
    "Grid_Size_X",
    "Grid_Size_Y",
    "Grid_Size_Z",
    "Seq",
    "Pid",
    "Packet_Index",
    "Packet_Type",
    "Status",
    "Label",
    "Reasons",
    "Kernel_Symbol",
    "Kernel_Object",
    "Kernarg_Address",
    "Kernarg_Class",
    "Completion_Signal",
    "Target",
    "Observed_Ns",
    "Done_Ns",
    "Raw",
    "Kernel_Call",
    "Kernarg",
];

/// One CSV row's fields, in [`CSV_COLUMNS`] order (unquoted: the `csv`
/// writer quotes a field when it holds a comma, quote or line break).
pub fn csv_row(v: &View<'_>) -> Vec<String> {
    let r = v.rec;
    let d = &v.dec;
    let opt = |o: Option<String>| o.unwrap_or_default();
    let wg = d.workgroup.map(|w| w.map(|x| x.to_string()));
    let grid = d.grid.map(|g| g.map(|x| x.to_string()));
    let at =
        |a: &Option<[String; 3]>, i: usize| a.as_ref().map(|t| t[i].clone()).unwrap_or_default();
    vec![
        d.type_name.to_ascii_uppercase(),
        opt(v.agent_index.map(|a| a.to_string())),
        r.queue_id.to_string(),
        r.thread.to_string(),
        r.seq.to_string(),
        v.name.clone().unwrap_or_default(),
        opt(d.group_segment_size.map(|x| x.to_string())),
        opt(d.private_segment_size.map(|x| x.to_string())),
        opt(v.kernel.map(|k| k.vgpr_count.to_string())),
        opt(v.kernel.map(|k| k.agpr_count.to_string())),
        opt(v.kernel.map(|k| k.sgpr_count.to_string())),
        at(&wg, 0),
        at(&wg, 1),
        at(&wg, 2),
        at(&grid, 0),
        at(&grid, 1),
        at(&grid, 2),
        r.seq.to_string(),
        v.pid.to_string(),
        r.packet_index.to_string(),
        d.type_name.to_string(),
        r.status.as_str().to_string(),
        v.label.to_string(),
        v.reasons.join(";"),
        v.symbol.unwrap_or_default().to_string(),
        opt(d.kernel_object.map(hex)),
        opt(d.kernarg_address.map(hex)),
        v.kernarg_class
            .map(|c| c.as_str().to_string())
            .unwrap_or_default(),
        hex(d.completion_signal),
        v.target.unwrap_or_default().to_string(),
        r.observed_ns.to_string(),
        r.done_ns.to_string(),
        raw_hex(&r.raw),
        v.call.clone().unwrap_or_default(),
        v.kernarg_bytes
            .map(crate::kernargs::hex)
            .unwrap_or_default(),
    ]
}

/// A CSV writer over `out` as every CSV report is written: RFC 4180, fields
/// quoted only when needed, `\n` line ends.
pub fn csv_writer<W: std::io::Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_demangled_without_the_kd_suffix() {
        assert_eq!(
            kernel_name("_Z6vecAddPfS_S_i.kd"),
            "vecAdd(float*, float*, float*, int)"
        );
        assert_eq!(kernel_name("plain_kernel.kd"), "plain_kernel");
        assert_eq!(kernel_name("_Znot a mangled name"), "_Znot a mangled name");
    }

    #[test]
    fn unknown_reason_bits_are_shown_not_dropped() {
        let codes = reason_codes(ReasonSet(1 | (1 << 63)));
        assert_eq!(codes.len(), 2);
        assert_eq!(codes[1], "unknown_reason_63");
    }

    #[test]
    fn an_observe_capture_over_a_softgpu_stand_in_never_says_kernels_ran() {
        assert!(
            "SoftGPU virtual gfx90a (MI210 model, no execution)"
                .starts_with(crate::isa::STAND_IN_PREFIX)
        );
        let mut cap = capture_with("observe", &[Status::Validated]);
        cap.header.agents.push(crate::capture::AgentDesc {
            index: 1,
            kind: crate::capture::AgentKind::Gpu,
            name: "SoftGPU virtual gfx90a (MI210 model, no execution)".into(),
            target: Some("gfx90a".into()),
        });
        let line = counts_summary(&cap);
        assert!(
            line.contains("a SoftGPU stand-in (kernels did not run there either)"),
            "{line}"
        );
        assert!(!line.contains("kernels ran"), "{line}");
        // Over a real GPU agent the observe wording stands.
        cap.header.agents[0].name = "AMD Instinct MI210".into();
        assert!(counts_summary(&cap).contains("(kernels ran there)"));
    }

    fn capture_with(mode: &str, statuses: &[Status]) -> Capture {
        let records = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| CapturedRecord {
                seq: i as u64,
                queue_id: 1,
                packet_index: i as u64,
                // A kernel dispatch header (type 2): not a barrier.
                raw: {
                    let mut r = [0u8; 64];
                    r[0] = 2;
                    r
                },
                status: *s,
                kernarg_class: KernargClass::Null,
                reasons: ReasonSet::default(),
                observed_ns: 0,
                done_ns: 0,
                thread: 0,
                offset: 0,
                kernarg: Default::default(),
            })
            .collect();
        Capture {
            version: (1, 1),
            header: CaptureHeader {
                pid: 1,
                start_unix_ns: 0,
                mode: mode.into(),
                agents: vec![],
            },
            queues: vec![],
            code_objects: vec![],
            kernels: HashMap::new(),
            records,
            trailer: None,
            complete: false,
            truncated_at: None,
            skipped_frames: 0,
            end: Default::default(),
            kernarg_blocks: HashMap::new(),
            kernarg_findings: HashMap::new(),
            kernel_args: HashMap::new(),
        }
    }

    #[test]
    fn observe_mode_captures_carry_no_diagnostic_label() {
        let cap = capture_with("observe", &[Status::Validated, Status::Rejected]);
        for s in [Status::Validated, Status::Rejected] {
            assert_eq!(record_label(&cap.header, s), LABEL_OBSERVED);
            assert_eq!(result_label(&cap.header, s), None);
        }
        let summary = counts_summary(&cap);
        assert_eq!(
            summary,
            "2 dispatches observed and forwarded to the real runtime (kernels ran there), 1 with findings, 0 barriers"
        );
        for l in [
            crate::aql::LABEL_COMPLETE,
            LABEL_NOT_KERNEL_SUCCESS,
            crate::aql::LABEL_REJECTED,
        ] {
            assert!(!summary.contains(l));
        }
        let mut ctx = Context::new(&cap);
        for r in &cap.records {
            let v = ctx.view(r);
            assert_eq!(v.label, LABEL_OBSERVED);
            assert!(!v.json().contains("not_kernel_success"));
            assert!(csv_row(&v).iter().any(|f| f == LABEL_OBSERVED));
        }
    }

    #[test]
    fn virtual_and_intercept_captures_keep_the_diagnostic_labels() {
        for mode in ["virtual", "intercept"] {
            let cap = capture_with(mode, &[Status::Validated, Status::Rejected]);
            let h = &cap.header;
            assert_eq!(
                record_label(h, Status::Validated),
                "diagnostic_complete_no_execution"
            );
            assert_eq!(
                result_label(h, Status::Validated),
                Some("not_kernel_success")
            );
            assert_eq!(record_label(h, Status::Rejected), "diagnostic_rejected");
            assert_eq!(result_label(h, Status::Rejected), None);
            assert_eq!(
                counts_summary(&cap),
                "1 dispatches validated (diagnostic_complete_no_execution, not_kernel_success), 1 rejected, 0 barriers"
            );
        }
    }

    #[test]
    fn problem_findings_follow_the_packet_reasons_each_once_in_code_order() {
        let f = |index, finding| ArgFinding {
            index,
            address: 0x1000,
            finding,
        };
        let past = PointerFinding::PastEnd {
            allocation: 2,
            size: 64,
            past: 0,
        };
        let findings = [
            f(0, PointerFinding::Unknown),
            f(1, PointerFinding::Null),
            f(
                2,
                PointerFinding::InAllocation {
                    allocation: 1,
                    offset: 0,
                    remaining: 8,
                },
            ),
            f(3, past.clone()),
            f(4, past),
        ];
        let hidden = [HiddenMismatch {
            index: 5,
            kind: "hidden_block_count_x",
            value: 1,
            expected: 2,
        }];
        let blit = ReasonSet(1 << (Reason::RuntimeBlitKernelNotExecuted as u8));
        assert_eq!(
            record_reasons(blit, &findings, &hidden),
            [
                "runtime_blit_kernel_not_executed",
                "pointer_past_end",
                "pointer_unknown",
                "hidden_arg_mismatch"
            ]
        );
        // Null and a pointer into an allocation are no problem.
        assert!(record_reasons(ReasonSet(0), &findings[1..3], &[]).is_empty());
        assert_eq!(
            record_reasons(ReasonSet(0), &[], &[]),
            reason_codes(ReasonSet(0))
        );
    }

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        let mut w = csv_writer(Vec::new());
        w.write_record(["abc", "f(int, int)", "a\"b", "", "x\ny"])
            .unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text, "abc,\"f(int, int)\",\"a\"\"b\",,\"x\ny\"\n");
    }
}
