//! `softgpu replay`: re-parse every captured packet from its 64 bytes alone and
//! compare the classification with the captured one.
//!
//! Only the bytes are used: no process, no memory, no live pointer. Reasons that
//! need the runtime's live state ([`Reason::is_runtime`]: unknown completion or
//! dependency signals) and reason bits this build does not know cannot be
//! reproduced, so they are excluded from the comparison.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use super::{EXIT_ERROR, ReplayFormat, finish_output, incomplete_warning};
use crate::abi::PacketType;
use crate::aql::{DecodedPacket, ReasonSet, Status, parse_supported_packet};
use crate::capture::{self, CapturedRecord};
use crate::report::{hex, reason_codes};

/// The reasons the parser alone can produce: every known reason that does not
/// depend on runtime state ([`ReasonSet::BYTES`], from the one reason list).
pub fn parser_level_mask() -> ReasonSet {
    ReasonSet::BYTES
}

/// The outcome of replaying one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub replayed_status: Status,
    /// Parser-level reasons from the replay.
    pub replayed: ReasonSet,
    /// Parser-level reasons in the capture.
    pub captured: ReasonSet,
    /// Captured reasons left out of the comparison.
    pub excluded: ReasonSet,
    pub matches: bool,
}

/// Replays one record's bytes and compares.
pub fn replay_record(rec: &CapturedRecord) -> Outcome {
    let mask = parser_level_mask();
    let (replayed_status, replay_reasons) = match parse_supported_packet(&rec.raw) {
        Ok(_) => (Status::Validated, ReasonSet::default()),
        Err(rs) => (Status::Rejected, rs),
    };
    let captured = ReasonSet(rec.reasons.0 & mask.0);
    let excluded = ReasonSet(rec.reasons.0 & !mask.0);
    let replayed = ReasonSet(replay_reasons.0 & mask.0);
    let status_ok = match (rec.status, replayed_status) {
        (Status::Validated, Status::Validated) | (Status::Rejected, Status::Rejected) => true,
        // Rejected at capture time for reasons the bytes cannot show.
        (Status::Rejected, Status::Validated) => !excluded.is_empty(),
        (Status::Validated, Status::Rejected) => false,
    };
    Outcome {
        replayed_status,
        replayed,
        captured,
        excluded,
        matches: status_ok && captured == replayed,
    }
}

#[derive(Serialize)]
struct JsonReplay<'a> {
    seq: u64,
    queue_id: u64,
    packet_index: u64,
    #[serde(rename = "type")]
    type_: &'static str,
    captured_status: &'static str,
    replayed_status: &'static str,
    captured_reasons: Vec<String>,
    replayed_reasons: Vec<String>,
    excluded_reasons: Vec<String>,
    kernarg_address: Option<String>,
    kernarg_class: Option<&'static str>,
    #[serde(rename = "match")]
    matches: bool,
    /// 2.1: the arguments, decoded offline from the capture alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<&'a [crate::kernargs::DecodedArg]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hidden_mismatches: Option<&'a [crate::kernargs::HiddenMismatch]>,
}

/// The table's header line. KERNARG is the kernarg class offline: `null`, or
/// `foreign_opaque` for any other address (never dereferenced), `-` for
/// packets other than kernel dispatches.
pub const TABLE_HEADER: &str = "      SEQ   QUEUE    INDEX  TYPE             CAPTURED   REPLAYED   KERNARG         RESULT  DETAIL";

/// Offline, every non-null kernarg is opaque: nothing is dereferenced.
fn offline_kernarg_class(dec: &DecodedPacket) -> Option<&'static str> {
    let class = match dec.kernarg_address {
        Some(0) | None => "null",
        Some(_) => "foreign_opaque",
    };
    (dec.packet_type == PacketType::KERNEL_DISPATCH).then_some(class)
}

pub(super) fn replay(path: &Path, format: ReplayFormat) -> i32 {
    let cap = match capture::read_file(path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("softgpu: {e}");
            return EXIT_ERROR;
        }
    };
    if !cap.complete {
        eprintln!("{}", incomplete_warning(path, &cap));
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut matched = 0u64;
    let mut differ = 0u64;
    let mut result = Ok(());
    let mut ctx = crate::report::Context::new(&cap);
    if format == ReplayFormat::Table {
        result = writeln!(out, "{TABLE_HEADER}");
    }
    for rec in &cap.records {
        let o = replay_record(rec);
        if o.matches {
            matched += 1;
        } else {
            differ += 1;
        }
        if result.is_err() {
            continue;
        }
        let dec = DecodedPacket::decode(&rec.raw);
        // The arguments, decoded from the capture alone (block and KernelArgs).
        let view = ctx.view(rec);
        result = match format {
            ReplayFormat::Jsonl => {
                let j = JsonReplay {
                    seq: rec.seq,
                    queue_id: rec.queue_id,
                    packet_index: rec.packet_index,
                    type_: dec.type_name,
                    captured_status: rec.status.as_str(),
                    replayed_status: o.replayed_status.as_str(),
                    captured_reasons: reason_codes(o.captured),
                    replayed_reasons: reason_codes(o.replayed),
                    excluded_reasons: reason_codes(o.excluded),
                    kernarg_address: dec.kernarg_address.map(hex),
                    kernarg_class: offline_kernarg_class(&dec),
                    matches: o.matches,
                    call: view.call.as_deref(),
                    args: view.args.as_ref().map(|a| a.args.as_slice()),
                    hidden_mismatches: view.args.as_ref().map(|_| view.hidden.as_slice()),
                };
                writeln!(out, "{}", serde_json::to_string(&j).unwrap_or_default())
            }
            ReplayFormat::Table => {
                let mut detail = Vec::new();
                if o.captured != o.replayed {
                    detail.push(format!(
                        "captured reasons [{}], replayed [{}]",
                        reason_codes(o.captured).join(","),
                        reason_codes(o.replayed).join(",")
                    ));
                } else if !o.replayed.is_empty() {
                    detail.push(format!("reasons [{}]", reason_codes(o.replayed).join(",")));
                }
                if !o.excluded.is_empty() {
                    detail.push(format!(
                        "not replayable: [{}]",
                        reason_codes(o.excluded).join(",")
                    ));
                }
                if let Some(call) = &view.call {
                    detail.push(call.clone());
                }
                for h in &view.hidden {
                    detail.push(format!(
                        "hidden_arg_mismatch {}: {} in the block, {} from the packet",
                        h.kind, h.value, h.expected
                    ));
                }
                let line = format!(
                    "{:>9} {:>7} {:>8}  {:<16} {:<10} {:<10} {:<14}  {:<6}  {}",
                    rec.seq,
                    rec.queue_id,
                    rec.packet_index,
                    dec.type_name,
                    rec.status.as_str(),
                    o.replayed_status.as_str(),
                    offline_kernarg_class(&dec).unwrap_or("-"),
                    if o.matches { "match" } else { "DIFFER" },
                    detail.join("; ")
                );
                writeln!(out, "{}", line.trim_end())
            }
        };
    }
    let summary = format!(
        "{} records, {matched} match, {differ} differ{}",
        cap.records.len(),
        if cap.complete {
            ""
        } else {
            " (capture incomplete)"
        }
    );
    match format {
        ReplayFormat::Table => {
            if result.is_ok() {
                result = writeln!(out, "{summary}");
            }
        }
        ReplayFormat::Jsonl => eprintln!("softgpu replay: {summary}"),
    }
    let result = result.and_then(|()| out.flush());
    finish_output(result, if differ == 0 { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::aql::Reason;

    #[test]
    fn every_known_reason_is_either_parser_level_or_runtime_level() {
        let mask = parser_level_mask();
        for r in Reason::ALL {
            assert_eq!(mask.contains(*r), !r.is_runtime(), "{r:?}");
        }
        assert!(!mask.contains(Reason::CompletionSignalUnknown));
        assert!(!mask.contains(Reason::DependencySignalUnknown));
        assert!(mask.contains(Reason::GridSizeZero));
    }
}
