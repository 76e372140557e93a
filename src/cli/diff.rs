//! `softgpu diff A B`: compares two dispatch streams (captures, rocprofv3 CSV or
//! JSON, rocprof v1 CSV). The comparison itself is in [`crate::diff`].

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{DiffFormat, EXIT_ERROR, finish_output, incomplete_warning};
use crate::capture::{self, CaptureError};
use crate::diff::{self, Dispatch, InputError, Level, MAX_INPUT, Outcome, Trace};
use crate::input::{ReadError, read_regular_file, show_path};

/// Why an input of `softgpu diff` could not be used.
#[derive(Debug, thiserror::Error)]
enum LoadError {
    /// Not a regular file, too large, or unreadable.
    #[error("file {}: {source}", show_path(.path))]
    Read { path: PathBuf, source: ReadError },
    /// A capture that does not read.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// An SQLite file that is not a rocpd database this build reads.
    #[error("file {}: {source}", show_path(.path))]
    Rocpd {
        path: PathBuf,
        source: crate::rocpd::RocpdError,
    },
    /// Text that is not a trace this reader knows, or a malformed one.
    #[error("file {}: {source}", show_path(.path))]
    Trace { path: PathBuf, source: InputError },
}

/// Reads `path` once and normalises it, detecting the kind from its content.
fn load(path: &Path) -> Result<Trace, LoadError> {
    let bytes = read_regular_file(path, MAX_INPUT).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let trace_error = |source| LoadError::Trace {
        path: path.to_path_buf(),
        source,
    };
    if bytes.starts_with(&capture::format::MAGIC) {
        let cap = capture::read_bytes(&bytes).map_err(|mut e| {
            e.file = Some(path.to_path_buf());
            e
        })?;
        if !cap.complete {
            eprintln!("{}", incomplete_warning(path, &cap));
        }
        return Ok(diff::from_capture(&cap));
    }
    if bytes.starts_with(crate::rocpd::SQLITE_MAGIC) {
        return crate::rocpd::read::read_trace(path).map_err(|source| LoadError::Rocpd {
            path: path.to_path_buf(),
            source,
        });
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        trace_error(InputError {
            offset: e.valid_up_to() as u64,
            line: None,
            field: None,
            message: "not a SoftGPU capture and not UTF-8 text (expected a capture, a rocpd database, rocprofv3 CSV or JSON, or rocprof v1 CSV)".to_string(),
        })
    })?;
    let trimmed = text.trim_start_matches('\u{feff}');
    let skipped = (text.len() - trimmed.len()) as u64;
    let result = if trimmed.trim_start().starts_with('{') {
        diff::from_rocprof_json(trimmed)
    } else {
        diff::from_csv(trimmed)
    };
    result.map_err(|mut e| {
        e.offset += skipped;
        trace_error(e)
    })
}

pub(super) fn diff(a: &Path, b: &Path, level: Level, ignore: &[String], format: DiffFormat) -> i32 {
    let mut patterns = Vec::new();
    for p in ignore {
        match regex::Regex::new(p) {
            Ok(r) => patterns.push(r),
            Err(e) => {
                eprintln!("softgpu: --ignore {p:?}: {e}");
                return EXIT_ERROR;
            }
        }
    }
    let mut traces = Vec::new();
    for p in [a, b] {
        match load(p) {
            Ok(mut t) => {
                t.ignore(&patterns);
                traces.push(t);
            }
            Err(e) => {
                eprintln!("softgpu: {e}");
                return EXIT_ERROR;
            }
        }
    }
    let outcome = diff::compare(&traces[0], &traces[1], level);
    let code = if outcome.same { 0 } else { 1 };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = match format {
        DiffFormat::Json => write_json(&mut out, a, b, &traces, &outcome),
        DiffFormat::Table => write_table(&mut out, a, b, &traces, &outcome),
    }
    .and_then(|()| out.flush());
    finish_output(result, code)
}

fn write_json(
    out: &mut impl Write,
    a: &Path,
    b: &Path,
    traces: &[Trace],
    o: &Outcome,
) -> io::Result<()> {
    let v = serde_json::json!({
        "verdict": o.verdict(),
        "a": { "path": show_path(a), "kind": traces[0].kind, "lds": traces[0].lds },
        "b": { "path": show_path(b), "kind": traces[1].kind, "lds": traces[1].lds },
        "result": o,
    });
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&v).unwrap_or_default()
    )
}

fn line(d: &Dispatch) -> String {
    let t = |x: [u64; 3]| format!("{}x{}x{}", x[0], x[1], x[2]);
    let (g, w) = if d.totals_only {
        (d.grid[0].to_string(), d.workgroup[0].to_string())
    } else {
        (t(d.grid), t(d.workgroup))
    };
    let lds = d
        .group_segment_size
        .map_or("-".to_string(), |x| x.to_string());
    format!("{:<21} {:<15} {:>8}  {}", g, w, lds, d.name)
}

fn write_table(
    out: &mut impl Write,
    a: &Path,
    b: &Path,
    traces: &[Trace],
    o: &Outcome,
) -> io::Result<()> {
    writeln!(
        out,
        "A: {} ({}, {} dispatches in {} queue(s))",
        show_path(a),
        traces[0].kind,
        o.dispatches_a,
        o.queues_a
    )?;
    writeln!(
        out,
        "B: {} ({}, {} dispatches in {} queue(s))",
        show_path(b),
        traces[1].kind,
        o.dispatches_b,
        o.queues_b
    )?;
    if let Some(d) = &o.first_divergence {
        writeln!(
            out,
            "first divergence: queue {}, dispatch {}",
            d.queue, d.index
        )?;
        writeln!(
            out,
            "  SIDE     INDEX  GRID                  WORKGROUP            LDS  KERNEL"
        )?;
        for (side, list) in [("A", &d.a), ("B", &d.b)] {
            for (k, x) in list.iter().enumerate() {
                let i = d.context_start + k;
                let mark = if i == d.index { '>' } else { ' ' };
                writeln!(out, "{mark} {side:<4} {i:>8}  {}", line(x))?;
            }
        }
    }
    if !o.count_differences.is_empty() {
        writeln!(out, "per-kernel counts that differ:")?;
        writeln!(out, "  {:>8} {:>8}  KERNEL", "A", "B")?;
        for c in &o.count_differences {
            writeln!(out, "  {:>8} {:>8}  {}", c.a, c.b, c.kernel)?;
        }
    }
    if !o.lds_compared && o.level == Level::Exact {
        writeln!(
            out,
            "note: LDS not compared ({:?} vs {:?} semantics)",
            traces[0].lds, traces[1].lds
        )?;
    }
    writeln!(out, "{}", o.verdict())
}
