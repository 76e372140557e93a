//! `softgpu inspect`: every record of a capture, as a table, JSONL, CSV or Chrome trace-event JSON.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::{EXIT_ERROR, InspectFormat, finish_output, incomplete_warning};
use crate::abi::PacketType;
use crate::capture::{self, Capture};
use crate::report::{self, Context};

pub(super) fn inspect(path: &Path, format: InspectFormat, output: Option<&Path>) -> i32 {
    if let Some(out) = output {
        let same = match (std::fs::canonicalize(path), std::fs::canonicalize(out)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            eprintln!(
                "softgpu: --output {} is the capture being read: give another file",
                crate::input::show_path(out)
            );
            return EXIT_ERROR;
        }
    }
    if format == InspectFormat::Rocpd && output.is_none() {
        eprintln!("softgpu: --format rocpd writes a database file: give it with --output FILE");
        return EXIT_ERROR;
    }
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
    if format == InspectFormat::Rocpd {
        let out = output.unwrap_or(Path::new(""));
        let args = crate::rocpd::write::decoded_args(&cap);
        return match crate::rocpd::write::write_capture(
            out,
            &cap,
            (!args.is_empty()).then_some(&|r: &crate::capture::CapturedRecord| {
                args.get(&r.seq).cloned().unwrap_or_default()
            }),
        ) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("softgpu: {}: {e}", crate::input::show_path(out));
                EXIT_ERROR
            }
        };
    }
    if let Some(out) = output {
        let file = match std::fs::File::create(out) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("softgpu: {}: {e}", crate::input::show_path(out));
                return EXIT_ERROR;
            }
        };
        let mut w = BufWriter::new(file);
        let result = write_report(&mut w, path, &cap, format).and_then(|()| w.flush());
        return match result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("softgpu: {}: {e}", crate::input::show_path(out));
                EXIT_ERROR
            }
        };
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = write_report(&mut out, path, &cap, format).and_then(|()| out.flush());
    finish_output(result, 0)
}

fn write_report(
    out: &mut impl Write,
    path: &Path,
    cap: &Capture,
    format: InspectFormat,
) -> io::Result<()> {
    let mut ctx = Context::new(cap);
    match format {
        // Written by `inspect` itself (a database, not a stream).
        InspectFormat::Rocpd => {}
        InspectFormat::Stats => {
            crate::stats::write_csv(out, &crate::stats::kernel_stats(cap, &|_| true))?;
        }
        InspectFormat::Jsonl => {
            for r in &cap.records {
                writeln!(out, "{}", ctx.view(r).json())?;
            }
        }
        InspectFormat::Csv => {
            let mut w = report::csv_writer(&mut *out);
            w.write_record(report::CSV_COLUMNS).map_err(csv_io)?;
            for r in &cap.records {
                w.write_record(report::csv_row(&ctx.view(r)))
                    .map_err(csv_io)?;
            }
            w.flush()?;
        }
        InspectFormat::Chrome => write_chrome(out, cap)?,
        InspectFormat::Table => {
            let agents: Vec<String> = cap
                .header
                .agents
                .iter()
                .map(|a| match &a.target {
                    Some(t) => format!("{}={} ({t})", a.index, a.name),
                    None => format!("{}={}", a.index, a.name),
                })
                .collect();
            writeln!(
                out,
                "capture {}: format {}.{}, pid {}, mode {}, agents [{}], {} queue(s), {} code object(s)",
                crate::input::show_path(path),
                cap.version.0,
                cap.version.1,
                cap.header.pid,
                cap.header.mode,
                agents.join(", "),
                cap.queues.len(),
                cap.code_objects.len()
            )?;
            writeln!(out, "{}", report::TABLE_HEADER)?;
            for r in &cap.records {
                writeln!(out, "{}", report::table_line(&ctx.view(r)))?;
            }
            let state = format!("capture {}", super::state_words(cap));
            writeln!(
                out,
                "{} records: {}; {}",
                cap.records.len(),
                report::counts_summary(cap),
                state
            )?;
        }
    }
    Ok(())
}

/// Chrome trace-event JSON (chrome://tracing, Perfetto's UI): one track per queue,
/// one complete event per record from observed to done.
pub(super) fn write_chrome(out: &mut dyn Write, cap: &Capture) -> io::Result<()> {
    write_chrome_named(out, cap, crate::stats::NameStyle::Demangled)
}

/// [`write_chrome`] with each dispatch's event named in `style` (`softgpu run`'s
/// `-M`/`-T`).
pub(super) fn write_chrome_named(
    out: &mut dyn Write,
    cap: &Capture,
    style: crate::stats::NameStyle,
) -> io::Result<()> {
    let mut ctx = Context::new(cap);
    let mut events = Vec::with_capacity(cap.records.len() + cap.queues.len());
    for q in &cap.queues {
        events.push(serde_json::json!({
            "name": "thread_name", "ph": "M", "pid": cap.header.pid, "tid": q.queue_id,
            "args": { "name": format!("queue {}", q.queue_id) },
        }));
    }
    for r in &cap.records {
        let v = ctx.view(r);
        let name = match (&v.name, v.dec.packet_type == PacketType::KERNEL_DISPATCH) {
            (Some(n), _) => crate::stats::style_name(v.symbol, n, style),
            (None, true) => v.kernel_name_label(),
            (None, false) => v.dec.type_name.to_string(),
        };
        events.push(serde_json::json!({
            "name": name,
            "cat": v.dec.type_name,
            "ph": "X",
            "pid": v.pid,
            "tid": r.queue_id,
            "ts": r.observed_ns as f64 / 1000.0,
            "dur": r.done_ns.saturating_sub(r.observed_ns) as f64 / 1000.0,
            "args": {
                "seq": r.seq,
                "packet_index": r.packet_index,
                "type": v.dec.type_name,
                "status": r.status.as_str(),
                "label": v.label,
                "reasons": v.reasons,
                "call": v.call,
            },
        }));
    }
    let doc = serde_json::json!({ "traceEvents": events, "displayTimeUnit": "ns" });
    writeln!(out, "{doc}")?;
    Ok(())
}

/// The I/O error inside a `csv` write error, kept as it is (a closed pipe must
/// stay `BrokenPipe`, which is not an error for a report).
fn csv_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}
