//! The `softgpu` command line: `run`, `inspect`, `replay`, `diff`, `targets` and `objects`.
//!
//! Every verb returns its exit code; nothing here calls `process::exit`, so
//! tests can drive [`main_from`] directly. A capture that cannot be read is
//! reported on stderr as `softgpu: file PATH: offset N: ...` with exit code 2,
//! never a panic. Reports go to stdout; warnings and summaries that are not part
//! of a machine-readable stream go to stderr.

mod diff;
mod inspect;
mod objects;
mod replay;
mod rocprof;
mod run;
mod targets;

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit code for an unreadable input or a usage error.
pub const EXIT_ERROR: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "softgpu",
    version,
    about = "Capture and check every AQL packet an HSA program submits. Kernels never run.",
    long_about = "SoftGPU is an HSA runtime shim (libsoftgpu_hsa.so, loaded with LD_PRELOAD) that parses, \
validates and captures every AQL packet a program submits, under a diagnostic completion contract: \
kernels never run. A validated packet is labelled diagnostic_complete_no_execution and \
not_kernel_success; a rejected one diagnostic_rejected, with its reasons. In a capture \
recorded in observe mode (SOFTGPU_MODE=observe) the packets were forwarded to the real \
runtime, which ran the kernels: every record is labelled observed_forwarded_to_runtime \
instead.\n\n\
This command runs programs under the shim and reads the capture files it writes."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Inspect(InspectArgs),
    Replay(ReplayArgs),
    Run(Box<RunArgs>),
    Objects(ObjectsArgs),
    Targets(targets::TargetsArgs),
    Diff(DiffArgs),
}

/// List every record of a capture file.
///
/// Records are listed in capture sequence order (processing order). A capture cut
/// short (the program died before the capture was finished) is still listed: every
/// complete record is shown, and a warning on stderr says where the file ends.
///
/// A frame damaged in the middle of the file (a bad checksum or length with valid frames
/// after it) is corruption, not a cut. Only a regular file of at most 1 GiB is read; a
/// FIFO, device or directory is refused at once.
///
/// Exit status: 0 when the file was read (complete or cut), 2 when it cannot be read
/// or is corrupt (the message names the file and the byte offset).
#[derive(Args, Debug)]
struct InspectArgs {
    /// The capture file (`.sgcap`).
    path: PathBuf,
    /// table: aligned columns and a summary line. jsonl: one JSON object per record
    /// (fields in docs/OUTPUT.md). csv: a header row, then one row per record; the
    /// first columns use rocprofv3 kernel_trace.csv names where the meaning matches.
    /// chrome: Chrome trace-event JSON (chrome://tracing, Perfetto): one track per
    /// queue (tid = queue id), one complete event per record from observed to done.
    /// rocpd: a rocpd SQLite database (rocprofiler-sdk's schema version 3) written to
    /// --output; its metadata says that no kernel ran and that its timestamps are the
    /// packet processor's, not a GPU's. stats: one CSV row per kernel (Name, Calls,
    /// distinct grid and workgroup sizes, segment sizes, Rejected, Findings; no
    /// durations, since nothing ran).
    #[arg(long, value_enum, default_value_t = InspectFormat::Table)]
    format: InspectFormat,
    /// Write the report to this file instead of stdout (required for rocpd).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum InspectFormat {
    Table,
    Jsonl,
    Csv,
    Chrome,
    Rocpd,
    Stats,
}

/// Re-parse every captured packet offline and compare with what was captured.
///
/// Each record's 64 bytes are parsed and validated again, alone: without the original
/// process, its memory or any live pointer. No captured address is ever dereferenced,
/// so any non-null kernarg address is reported as foreign_opaque.
///
/// The replayed status (validated or rejected) and reasons are compared with the
/// captured ones. Reasons that need the runtime's live state (its signals, its loaded
/// kernels and their metadata, the agent's limits) cannot be reproduced from the bytes
/// alone and are excluded from the comparison: completion_signal_unknown,
/// dependency_signal_unknown, runtime_blit_kernel_not_executed,
/// group_segment_size_exceeds_limit, unknown_kernel_object,
/// workgroup_size_exceeds_kernel_max, workgroup_size_differs_from_required,
/// group_segment_size_below_static, private_segment_size_below_static,
/// kernarg_address_null, kernel_object_wrong_agent, and reason bits this build does
/// not know. A packet rejected only for such reasons matches when the bytes parse as
/// valid.
///
/// The table shows the offline kernarg class of each dispatch in its KERNARG column.
///
/// Exit status: 0 when every record re-parses to its captured classification, 1 when
/// at least one differs, 2 when the file cannot be read (not a regular file of at most
/// 1 GiB, or corrupt: the message names the file and the byte offset).
#[derive(Args, Debug)]
struct ReplayArgs {
    /// The capture file (`.sgcap`).
    path: PathBuf,
    /// table: one line per record and a summary line. jsonl: one JSON object per
    /// record (fields in docs/OUTPUT.md; summary on stderr).
    #[arg(long, value_enum, default_value_t = ReplayFormat::Table)]
    format: ReplayFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum ReplayFormat {
    Table,
    Jsonl,
}

/// Run a command with the SoftGPU shim preloaded, then summarise its capture.
///
/// The shim libsoftgpu_hsa.so must sit next to this softgpu executable. It is
/// prepended to LD_PRELOAD, and SOFTGPU_CAPTURE, SOFTGPU_TARGET and SOFTGPU_MODE are
/// set for the command from the options below (an option left out leaves the
/// variable as it is in the environment, except SOFTGPU_CAPTURE, which defaults to
/// softgpu-%p.sgcap in the current directory).
///
/// %p in the capture path is the process id of the process that initialises HSA.
/// softgpu expands it with the pid of the command it starts, which is the same
/// process unless the command is a wrapper (a shell script, for example) that runs
/// the HSA program as a child: then the capture is written under the child's pid
/// and softgpu reports that it found no capture. Pass a path without %p for such
/// commands.
///
/// Before it starts the command (unless the mode is intercept or observe), softgpu
/// looks at the libhsa-runtime64.so.1 the dynamic loader would find (LD_LIBRARY_PATH,
/// then the loader's cache, then the default directories) and names, in one line, any
/// hsa_* function it exports that the shim does not: in virtual mode a call to one
/// would reach that real runtime uninitialised. The shim says the same at start-up of
/// the runtime the program actually loaded.
///
/// After the command exits, a summary line is printed on stderr: dispatches
/// validated, rejected, barriers, the capture path, and whether the capture is
/// complete. For an observe-mode capture it counts dispatches observed and
/// forwarded to the real runtime (the kernels ran there) and those with findings.
///
/// rocprofv3's spellings are accepted where their meaning carries over: -d, -o,
/// --output-format, the kernel filters, --stats, -M and -T write the capture's
/// dispatches as rocprofv3-style outputs once the command exits (the capture itself
/// keeps every packet; it goes to BASE_results.sgcap and is kept only with
/// --output-format capture). --capture cannot be combined with -d/-o/--output-format/
/// --stats. --pmc, --att and PC sampling need a GPU's counters and timing and are
/// refused (exit 2): no kernel runs.
///
/// Exit status: the command's own; 128+N when it was killed by signal N; 127 when it
/// cannot be found, 126 when it cannot be executed; 2 when softgpu itself cannot set
/// up the run (for example the shim is missing, or an option is refused) or cannot
/// write an output.
#[derive(Args, Debug)]
struct RunArgs {
    /// Capture file path (%p expands to the process id), or `off`. Relative paths are
    /// made absolute against the current directory. [default: softgpu-%p.sgcap]
    #[arg(long, value_parser = Utf8::any())]
    capture: Option<String>,
    /// Virtual GPU agents by target id or alias, comma separated (sets SOFTGPU_TARGET).
    #[arg(long, value_parser = Utf8::any())]
    target: Option<String>,
    /// Runtime mode (sets SOFTGPU_MODE): `virtual`, the shim is the HSA runtime;
    /// `intercept`, a real ROCr below runs everything but the queues, which the
    /// shim owns (kernels never run); `observe`, the real ROCr keeps its queues
    /// and runs the kernels, and each packet is captured before its doorbell is
    /// forwarded; `auto` (the shim's default), intercept when the real ROCr
    /// initialises with a GPU agent, else virtual.
    #[arg(long, value_parser = Utf8::one_of(&["auto", "virtual", "intercept", "observe"]))]
    mode: Option<String>,
    /// rocprofv3's options (see "rocprofv3 options" below).
    #[command(flatten, next_help_heading = "rocprofv3 options")]
    rocprof: rocprof::RocprofArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// List the offload bundles, code objects and kernels of a file, without running anything.
///
/// FILE may be a HIP executable or shared library (its .hip_fatbin section), a clang
/// offload bundle (`hipcc --genco`), a compressed offload bundle (CCOB, zlib or zstd),
/// or a bare AMDGPU code object. For each kernel: symbol, demangled name, kernarg size
/// and alignment, static LDS (group) and scratch (private) sizes, SGPR/VGPR/AGPR
/// counts, wave size, max flat workgroup size and required workgroup size, as the
/// metadata note states them. A code object whose metadata note is missing or
/// corrupt is still listed from its kernel descriptors, and the note's error is shown.
///
/// The report is labelled metadata_only_no_isa_execution: nothing is loaded or run.
///
/// Exit status: 0 when the file was read, 2 when it cannot be read or is invalid (the
/// message names the file and the byte offset).
#[derive(Args, Debug)]
struct ObjectsArgs {
    /// The file to read.
    path: PathBuf,
    /// One JSON object (fields in docs/OUTPUT.md) instead of a table.
    #[arg(long)]
    json: bool,
}

/// Compare two dispatch streams.
///
/// A and B may each be a SoftGPU capture, a rocpd database (rocprofv3's SQLite
/// output, schema version 3), a rocprofv3 kernel_trace.csv (current or
/// older columns), a rocprofv3 JSON file, a rocprof v1 results.csv, or `softgpu
/// inspect --format csv` output; the kind is detected from the content. Only kernel
/// dispatches are compared (other tools do not trace barriers). Names are demangled
/// and stripped of `.kd`; queue ids, addresses and timestamps are never compared.
/// LDS is compared only at level exact, and only when both sides mean the same by it.
///
/// Levels: exact (same dispatches per queue, same order, same name, grid and
/// workgroup), count (same number of dispatches per kernel name), order (same
/// kernel-name order per queue, queues matched by first appearance), events (same set
/// of kernel names), args (as exact, and the same explicit kernel arguments, from
/// captures that recorded them: by-value arguments exactly, pointers by the allocation
/// and offset they name, never by raw address).
///
/// Inputs are read strictly: a CSV row with more or fewer fields than its header, a
/// stray quote, a header naming a column twice, a number that is not one, or a JSON size
/// that is missing, a string or negative is an error, never a guess. Each input is read
/// once, and must be a regular file of at most 1 GiB.
///
/// Exit status: 0 same, 1 different, 2 when an input cannot be read or parsed (the
/// message names the file and the byte offset, and for CSV and JSON the line and the
/// column or JSON path).
#[derive(Args, Debug)]
struct DiffArgs {
    /// The first input.
    a: PathBuf,
    /// The second input.
    b: PathBuf,
    #[arg(long, value_enum, default_value_t = DiffLevel::Count)]
    level: DiffLevel,
    /// Drop kernels whose normalised name matches REGEX (repeatable), e.g. `__amd_rocclr_.*`.
    #[arg(long, value_name = "REGEX", value_parser = Utf8::any())]
    ignore: Vec<String>,
    /// table: the first divergence in context, per-kernel count differences, a verdict
    /// line. json: the same as one JSON object.
    #[arg(long, value_enum, default_value_t = DiffFormat::Table)]
    format: DiffFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DiffLevel {
    Exact,
    Count,
    Order,
    Events,
    Args,
}

impl From<DiffLevel> for crate::diff::Level {
    fn from(l: DiffLevel) -> Self {
        match l {
            DiffLevel::Exact => crate::diff::Level::Exact,
            DiffLevel::Count => crate::diff::Level::Count,
            DiffLevel::Args => crate::diff::Level::Args,
            DiffLevel::Order => crate::diff::Level::Order,
            DiffLevel::Events => crate::diff::Level::Events,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum DiffFormat {
    Table,
    Json,
}

/// The value parser of every text option: like clap's own, except that a value
/// that is not UTF-8 is refused with a message naming the option and showing
/// the value with its bytes escaped (clap's says only "invalid UTF-8 was
/// detected in one or more arguments"). File names are paths, never text, so
/// they may be anything.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Utf8 {
    choices: Option<&'static [&'static str]>,
}

impl Utf8 {
    /// Any UTF-8 text.
    pub(crate) const fn any() -> Utf8 {
        Utf8 { choices: None }
    }
    /// One of `choices` (shown by `--help` as the possible values).
    pub(crate) const fn one_of(choices: &'static [&'static str]) -> Utf8 {
        Utf8 {
            choices: Some(choices),
        }
    }
}

impl clap::builder::TypedValueParser for Utf8 {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let name = arg.map_or_else(|| "a value".to_string(), |a| a.to_string());
        let Some(text) = value.to_str() else {
            let mut e = clap::Error::raw(
                clap::error::ErrorKind::InvalidUtf8,
                format!("{name}: the value {value:?} is not valid UTF-8\n"),
            );
            e = e.with_cmd(cmd);
            return Err(e);
        };
        if let Some(choices) = self.choices {
            // clap's own check and message for a value that is not a choice.
            return clap::builder::PossibleValuesParser::new(choices).parse_ref(cmd, arg, value);
        }
        Ok(text.to_string())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        self.choices
            .map(|c| Box::new(c.iter().map(clap::builder::PossibleValue::new)) as Box<_>)
    }
}

/// `softgpu` with the process's own arguments.
pub fn main() -> i32 {
    main_from(std::env::args_os())
}

/// `softgpu` with explicit arguments (the first is the program name).
pub fn main_from<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors to stderr with 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    match cli.command {
        Command::Inspect(a) => inspect::inspect(&a.path, a.format, a.output.as_deref()),
        Command::Replay(a) => replay::replay(&a.path, a.format),
        Command::Run(a) => run::run(*a),
        Command::Objects(a) => objects::objects(&a.path, a.json),
        Command::Targets(a) => targets::targets(a),
        Command::Diff(a) => diff::diff(&a.a, &a.b, a.level.into(), &a.ignore, a.format),
    }
}

/// Finishes writing a report: a closed pipe (`softgpu inspect x | head`) is not
/// an error; any other write error is reported and turns the exit code into 2.
fn finish_output(result: io::Result<()>, code: i32) -> i32 {
    match result {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            let _ = writeln!(io::stderr(), "softgpu: cannot write the report: {e}");
            EXIT_ERROR
        }
    }
}

/// The stderr warning for a capture that is not complete: everything the
/// reader found missing, or late, and why.
fn incomplete_warning(path: &std::path::Path, cap: &crate::capture::Capture) -> String {
    format!(
        "softgpu: warning: file {}: capture is incomplete ({}); showing the {} records it holds",
        crate::input::show_path(path),
        incomplete_reasons(cap).join("; "),
        cap.records.len()
    )
}

/// A signal's name, for messages.
fn signal_name(sig: u64) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// `queue 3 (2), queue 7 (1)`: queues and their counts.
fn queue_list(qs: &[(u64, u64)]) -> String {
    const SHOWN: usize = 8;
    let mut s: Vec<String> = qs
        .iter()
        .take(SHOWN)
        .map(|(q, n)| format!("queue {q} ({n})"))
        .collect();
    if qs.len() > SHOWN {
        s.push(format!("and {} more queues", qs.len() - SHOWN));
    }
    s.join(", ")
}

/// Why a capture is not complete, one clause per reason, in the order a
/// reader should care: what the file cannot have, then what it has late.
fn incomplete_reasons(cap: &crate::capture::Capture) -> Vec<String> {
    use crate::capture::EndKind;
    let e = &cap.end;
    let mut why = Vec::new();
    let cut = match cap.truncated_at {
        Some(o) => format!("the file is cut at offset {o}"),
        None => "the file ends after a whole frame".to_string(),
    };
    match (&cap.trailer, e.kind) {
        (None, _) => {
            let signalled = e
                .ring
                .filter(|r| r.state >= crate::capture::ring::state::SIGNALLED)
                .map(|r| r.signal);
            let how = match signalled {
                Some(sig) => format!(
                    "the program was killed by signal {sig} ({}) before the capture could be finalised",
                    signal_name(sig)
                ),
                None if e.ring.is_some() => {
                    "the process did not finish it: it ended without running its exit handlers (abort, _exit, or a kill)".to_string()
                }
                None => "the process did not finish it".to_string(),
            };
            why.push(format!("no trailer: {how}; {cut}"));
            if e.ring.is_some() {
                why.push(format!(
                    "{} records recovered from the capture's live ring",
                    e.recovered
                ));
            }
        }
        (Some(_), Some(EndKind::Signal(sig))) => why.push(format!(
            "the program was killed by signal {sig} ({}); SoftGPU finalised the capture with every record pushed before it, but packets then in flight or pending were not counted",
            signal_name(sig as u64)
        )),
        _ => {}
    }
    if e.missing > 0 {
        why.push(format!(
            "{} records were being written when the process died, or lost with the end of the file, and are missing",
            e.missing
        ));
    }
    if e.uncommitted > 0 {
        why.push(format!(
            "{} records were still being written when the trailer was",
            e.uncommitted
        ));
    }
    if !e.pending_at_exit.is_empty() {
        let n = crate::capture::packet_total(&e.pending_at_exit);
        why.push(format!(
            "{n} packets were pending at exit and never processed (behind an unsatisfied barrier, or never published): {}",
            queue_list(&e.pending_at_exit)
        ));
    }
    if !e.pending_at_destroy.is_empty() {
        let n = crate::capture::packet_total(&e.pending_at_destroy);
        why.push(format!(
            "{n} packets were never processed when their queue was destroyed (behind an unsatisfied barrier, or never published): {}",
            queue_list(&e.pending_at_destroy)
        ));
    }
    if e.late_records > 0 {
        let qs: Vec<String> = e
            .late_queues
            .iter()
            .take(8)
            .map(|q| q.to_string())
            .collect();
        let more = if e.late_queues.len() > 8 {
            format!(" and {} more", e.late_queues.len() - 8)
        } else {
            String::new()
        };
        why.push(format!(
            "{} records arrived after the program's exit began (queues {}{more}); they are shown, but the program may have launched more that no record shows",
            e.late_records,
            qs.join(", ")
        ));
    }
    if e.bad_slots > 0 {
        why.push(format!(
            "{} damaged slots of the live ring were skipped",
            e.bad_slots
        ));
    }
    if let Some(r) = e.ring.filter(|r| r.discarded > 0) {
        why.push(format!(
            "{} records were discarded because the capture writer had stopped",
            r.discarded
        ));
    }
    if why.is_empty() {
        why.push("no trailer".to_string());
    }
    why
}

/// The short state for a summary line: `capture complete`, or `capture
/// INCOMPLETE (...)` with the first reason (the cut offset when cut).
fn state_words(cap: &crate::capture::Capture) -> String {
    if cap.complete {
        return "complete".to_string();
    }
    if cap.trailer.is_none() {
        let recovered = if cap.end.recovered > 0 {
            format!(", {} recovered from the ring", cap.end.recovered)
        } else {
            String::new()
        };
        return match cap.truncated_at {
            Some(o) => format!("INCOMPLETE (cut at offset {o}{recovered})"),
            None => format!("INCOMPLETE (no trailer{recovered})"),
        };
    }
    let reasons = incomplete_reasons(cap);
    let first = reasons
        .first()
        .map(|r| r.split(':').next().unwrap_or(r).to_string())
        .unwrap_or_default();
    format!("INCOMPLETE ({first})")
}
