//! rocprofv3's run options for `softgpu run`: output directory and file with
//! rocprofv3's placeholders, output formats, kernel filters, naming, `--stats`, and a
//! clear refusal of the options that need a GPU's counters or timing.
//!
//! The capture always keeps every packet. The kernel filters select the dispatches
//! written to the other outputs (rocprofv3 applies them to counter collection and
//! thread trace; a capture has neither, so they select what is reported).

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use crate::abi::PacketType;
use crate::capture::Capture;
use crate::report::{self, Context};
use crate::stats::{self, NameStyle};

/// The rocprofv3 options `softgpu run` accepts.
#[derive(Args, Debug, Default, Clone)]
pub(super) struct RocprofArgs {
    /// rocprofv3's --kernel-trace. Accepted for familiarity: every kernel dispatch is
    /// always captured.
    #[arg(long)]
    pub kernel_trace: bool,
    /// Directory of the outputs (rocprofv3's -d). Placeholders as for --output-file.
    /// [default: the current directory]
    #[arg(short = 'd', long, value_name = "DIR")]
    pub output_directory: Option<String>,
    /// Output file name without extension, inside --output-directory (rocprofv3's -o).
    /// Placeholders: %pid% (the command's pid), %ppid% (softgpu's pid), %hostname%,
    /// %cwd%, %argt% (the command's file name), %rank% (the MPI rank from
    /// OMPI_COMM_WORLD_RANK, MV2_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID, else 0),
    /// %env{NAME}% (the variable NAME). Outputs are BASE_results.db (rocpd),
    /// BASE_kernel_trace.csv (csv), BASE_results.jsonl (json), BASE_results.trace.json
    /// (pftrace), BASE_results.sgcap (capture), BASE_kernel_stats.csv (--stats).
    /// [default: %hostname%/%pid%]
    #[arg(short = 'o', long, value_name = "NAME")]
    pub output_file: Option<String>,
    /// Output formats, space or comma separated: rocpd (a rocpd SQLite database),
    /// csv (inspect --format csv: rocprofv3 kernel_trace.csv names where the meaning
    /// matches), json (inspect --format jsonl: one JSON object per packet), pftrace
    /// (a Chrome trace-event JSON that Perfetto's UI opens; not Perfetto's protobuf
    /// .pftrace), capture (the SoftGPU capture itself). Without capture, the capture is
    /// removed once the other outputs are written. [default: rocpd, when -d or -o is
    /// given]
    #[arg(long, value_delimiter = ',', num_args = 1.., value_name = "FORMAT",
          value_parser = ["rocpd", "csv", "json", "pftrace", "capture"])]
    pub output_format: Vec<String>,
    /// Only dispatches of kernels whose (demangled) name matches this regular
    /// expression go to the outputs other than the capture.
    #[arg(long, value_name = "REGEX")]
    pub kernel_include_regex: Option<String>,
    /// Dispatches of kernels whose name matches are left out of the outputs other
    /// than the capture (applied after --kernel-include-regex).
    #[arg(long, value_name = "REGEX")]
    pub kernel_exclude_regex: Option<String>,
    /// Only these iterations of each kernel (its Nth dispatch, from 1, counted among
    /// the dispatches that pass the regexes) go to the outputs other than the capture:
    /// `[1-4]`, `[2, 5-6]`, `3`, as rocprofv3 writes them.
    #[arg(long, num_args = 1.., value_name = "RANGE")]
    pub kernel_iteration_range: Vec<String>,
    /// Write a per-kernel summary, BASE_kernel_stats.csv (Name, Calls, distinct grid
    /// and workgroup sizes, segment sizes, Rejected, Findings; no durations: nothing
    /// ran).
    #[arg(long)]
    pub stats: bool,
    /// Keep kernel names mangled in the stats, the csv output's Kernel_Name, the
    /// pftrace output's event names and the rocpd database's display names
    /// (rocprofv3's -M; the json output's kernel_name stays demangled).
    #[arg(short = 'M', long)]
    pub mangled_kernels: bool,
    /// Truncate kernel names to the function's own name (`ns::k<int>(float*)` is `k`)
    /// in the stats, the csv output's Kernel_Name, the pftrace output's event names
    /// and the rocpd database's display names (rocprofv3's -T).
    #[arg(short = 'T', long)]
    pub truncate_kernels: bool,
    /// Refused: hardware counters need a GPU that runs the kernels.
    #[arg(long, num_args = 1.., value_name = "COUNTER", hide = false)]
    pub pmc: Vec<String>,
    /// Refused: thread trace needs a GPU that runs the kernels.
    #[arg(long)]
    pub att: bool,
    /// Refused: PC sampling needs a GPU that runs the kernels.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "1")]
    pub pc_sampling_beta_enabled: Option<String>,
    /// Refused: PC sampling needs a GPU that runs the kernels.
    #[arg(long, value_name = "UNIT")]
    pub pc_sampling_unit: Option<String>,
    /// Refused: PC sampling needs a GPU that runs the kernels.
    #[arg(long, value_name = "METHOD")]
    pub pc_sampling_method: Option<String>,
    /// Refused: PC sampling needs a GPU that runs the kernels.
    #[arg(long, value_name = "N")]
    pub pc_sampling_interval: Option<String>,
}

/// What the run must write after the command exits.
#[derive(Debug)]
pub(super) struct Plan {
    /// The output base path, every placeholder but `%pid%` expanded (`%pid%` is `%p`).
    base: String,
    formats: Vec<String>,
    stats: bool,
    include: Option<regex::Regex>,
    exclude: Option<regex::Regex>,
    iterations: Option<Vec<(u64, u64)>>,
    names: NameStyle,
}

/// Parses `[1-4]`, `[2, 5-6]`, `3` into inclusive ranges.
pub(super) fn parse_ranges(specs: &[String]) -> Result<Vec<(u64, u64)>, String> {
    let mut out = Vec::new();
    for spec in specs {
        for tok in spec
            .split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            let bad = || format!("--kernel-iteration-range {spec:?}: {tok:?} is not N or A-B");
            let (a, b) = match tok.split_once('-') {
                Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
                None => {
                    let n: u64 = tok.parse().map_err(|_| bad())?;
                    (n, n)
                }
            };
            if a > b {
                return Err(format!(
                    "--kernel-iteration-range {spec:?}: {a} is after {b}"
                ));
            }
            out.push((a, b));
        }
    }
    if out.is_empty() {
        return Err("--kernel-iteration-range: no range given".into());
    }
    Ok(out)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Expands rocprofv3's placeholders in `t`, leaving `%pid%` as `%p` for the shim
/// (the command's pid is known only once it starts). An unknown placeholder is an error.
pub(super) fn expand(t: &str, program: &Path) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = t;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(j) = after.find('%') else {
            return Err(format!(
                "{t:?}: a % without its closing % (placeholders are %name%)"
            ));
        };
        let name = &after[..j];
        let value = match name {
            "pid" => "%p".to_string(),
            "ppid" => std::process::id().to_string(),
            "hostname" => hostname(),
            "cwd" => std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .map_err(|e| format!("%cwd%: {e}"))?,
            "argt" => program
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            "rank" => [
                "OMPI_COMM_WORLD_RANK",
                "MV2_COMM_WORLD_RANK",
                "PMI_RANK",
                "SLURM_PROCID",
            ]
            .iter()
            .find_map(|v| std::env::var(v).ok())
            .unwrap_or_else(|| "0".into()),
            n if n.starts_with("env{") && n.ends_with('}') => {
                std::env::var(&n[4..n.len() - 1]).unwrap_or_default()
            }
            other => {
                return Err(format!(
                    "{t:?}: unknown placeholder %{other}% (known: %pid%, %ppid%, %hostname%, %cwd%, %argt%, %rank%, %env{{NAME}}%)"
                ));
            }
        };
        out.push_str(&value);
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

impl RocprofArgs {
    /// `Err` when an option needs a GPU's counters or timing.
    pub(super) fn refuse_gpu_only(&self) -> Result<(), String> {
        let what = if !self.pmc.is_empty() {
            Some("--pmc (hardware performance counters)")
        } else if self.att {
            Some("--att (thread trace)")
        } else if self.pc_sampling_beta_enabled.is_some()
            || self.pc_sampling_unit.is_some()
            || self.pc_sampling_method.is_some()
            || self.pc_sampling_interval.is_some()
        {
            Some("PC sampling (--pc-sampling-*)")
        } else {
            None
        };
        match what {
            Some(w) => Err(format!(
                "{w} needs a GPU's counters and timing: kernels never run under SoftGPU, so there is nothing to count, trace or sample (profile on hardware with rocprofv3, then compare with softgpu diff)"
            )),
            None => Ok(()),
        }
    }

    /// The outputs to write, or `None` when no rocprofv3 output option was given.
    pub(super) fn plan(&self, program: &Path) -> Result<Option<Plan>, String> {
        let filters = self.kernel_include_regex.is_some()
            || self.kernel_exclude_regex.is_some()
            || !self.kernel_iteration_range.is_empty();
        let any = self.output_directory.is_some()
            || self.output_file.is_some()
            || !self.output_format.is_empty()
            || self.stats;
        if !any {
            if filters || self.mangled_kernels || self.truncate_kernels {
                return Err("the kernel filters and -M/-T shape the outputs: give --output-format, -d, -o or --stats as well".into());
            }
            return Ok(None);
        }
        if self.mangled_kernels && self.truncate_kernels {
            return Err("-M/--mangled-kernels and -T/--truncate-kernels exclude each other".into());
        }
        let file = expand(
            self.output_file.as_deref().unwrap_or("%hostname%/%pid%"),
            program,
        )?;
        let mut base = match &self.output_directory {
            Some(d) => Path::new(&expand(d, program)?).join(&file),
            None => PathBuf::from(&file),
        };
        if !base.is_absolute() {
            base = std::env::current_dir()
                .map_err(|e| format!("cannot resolve the output path: {e}"))?
                .join(base);
        }
        let base = base
            .to_str()
            .ok_or("the output path is not UTF-8")?
            .to_string();
        let mut formats = self.output_format.clone();
        if formats.is_empty() && (self.output_directory.is_some() || self.output_file.is_some()) {
            formats.push("rocpd".into());
        }
        formats.dedup();
        let re = |flag: &str, s: &Option<String>| -> Result<Option<regex::Regex>, String> {
            s.as_deref()
                .map(|p| regex::Regex::new(p).map_err(|e| format!("{flag} {p:?}: {e}")))
                .transpose()
        };
        Ok(Some(Plan {
            base,
            formats,
            stats: self.stats,
            include: re("--kernel-include-regex", &self.kernel_include_regex)?,
            exclude: re("--kernel-exclude-regex", &self.kernel_exclude_regex)?,
            iterations: (!self.kernel_iteration_range.is_empty())
                .then(|| parse_ranges(&self.kernel_iteration_range))
                .transpose()?,
            names: if self.mangled_kernels {
                NameStyle::Mangled
            } else if self.truncate_kernels {
                NameStyle::Truncated
            } else {
                NameStyle::Demangled
            },
        }))
    }
}

impl Plan {
    /// The capture path template for SOFTGPU_CAPTURE (`%p` for the pid). The shim
    /// creates no directory, so when the pid is part of a directory name the capture
    /// is first written in the nearest directory above it and moved into place after.
    pub(super) fn capture_template(&self) -> String {
        let want = format!("{}_results.sgcap", self.base);
        let mut dir = Path::new(&want).parent().unwrap_or(Path::new("/"));
        if !dir.to_string_lossy().contains("%p") {
            return want;
        }
        while dir.to_string_lossy().contains("%p") {
            dir = dir.parent().unwrap_or(Path::new("/"));
        }
        dir.join(".softgpu-%p_results.sgcap")
            .to_string_lossy()
            .into_owned()
    }

    /// Creates the directory the capture is written in (it has no `%p`).
    pub(super) fn prepare(&self) -> Result<(), String> {
        let t = self.capture_template();
        match Path::new(&t).parent() {
            Some(d) => std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display())),
            None => Ok(()),
        }
    }

    /// `cap` with the dispatches the filters leave out removed (other packets stay).
    fn filtered(&self, cap: &Capture) -> Capture {
        let mut ctx = Context::new(cap);
        let mut seen: HashMap<String, u64> = HashMap::new();
        let keep: Vec<bool> = cap
            .records
            .iter()
            .map(|r| {
                let v = ctx.view(r);
                if v.dec.packet_type != PacketType::KERNEL_DISPATCH {
                    return true;
                }
                let name = v.kernel_name_label();
                if self.include.as_ref().is_some_and(|re| !re.is_match(&name))
                    || self.exclude.as_ref().is_some_and(|re| re.is_match(&name))
                {
                    return false;
                }
                let n = seen.entry(name).or_insert(0);
                *n += 1;
                self.iterations
                    .as_ref()
                    .is_none_or(|rs| rs.iter().any(|&(a, b)| (a..=b).contains(n)))
            })
            .collect();
        let mut out = cap.clone();
        let mut it = keep.into_iter();
        out.records.retain(|_| it.next().unwrap_or(true));
        out
    }

    /// Writes every requested output of the capture at `capture_path`; returns the
    /// paths written.
    pub(super) fn write(
        &self,
        cap: &Capture,
        capture_path: &Path,
        pid: u32,
    ) -> Result<Vec<PathBuf>, String> {
        let base = crate::config::expand_pid(&self.base, pid);
        if let Some(parent) = Path::new(&base).parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let cap = self.filtered(cap);
        let mut written = Vec::new();
        let file = |suffix: &str| PathBuf::from(format!("{base}{suffix}"));
        let stream = |path: &Path,
                      f: &dyn Fn(&mut dyn Write) -> std::io::Result<()>|
         -> Result<(), String> {
            let mut w = BufWriter::new(
                std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?,
            );
            f(&mut w)
                .and_then(|()| w.flush())
                .map_err(|e| format!("{}: {e}", path.display()))
        };
        for f in &self.formats {
            match f.as_str() {
                "rocpd" => {
                    let p = file("_results.db");
                    let args = crate::rocpd::write::decoded_args(&cap);
                    crate::rocpd::write::write_capture_named(
                        &p,
                        &cap,
                        (!args.is_empty()).then_some(&|r: &crate::capture::CapturedRecord| {
                            args.get(&r.seq).cloned().unwrap_or_default()
                        }),
                        self.names,
                    )
                    .map_err(|e| format!("{}: {e}", p.display()))?;
                    written.push(p);
                }
                "csv" => {
                    let p = file("_kernel_trace.csv");
                    stream(&p, &|w| {
                        let mut ctx = Context::new(&cap);
                        let mut c = report::csv_writer(w);
                        let io = |e: csv::Error| std::io::Error::other(e.to_string());
                        c.write_record(report::CSV_COLUMNS).map_err(io)?;
                        let at = report::CSV_COLUMNS.iter().position(|c| *c == "Kernel_Name");
                        for r in &cap.records {
                            let v = ctx.view(r);
                            let mut row = report::csv_row(&v);
                            if let (Some(i), Some(n)) = (at, v.name.as_deref()) {
                                row[i] = stats::style_name(v.symbol, n, self.names);
                            }
                            c.write_record(row).map_err(io)?;
                        }
                        c.flush()
                    })?;
                    written.push(p);
                }
                "json" => {
                    let p = file("_results.jsonl");
                    stream(&p, &|w| {
                        let mut ctx = Context::new(&cap);
                        for r in &cap.records {
                            writeln!(w, "{}", ctx.view(r).json())?;
                        }
                        Ok(())
                    })?;
                    written.push(p);
                }
                "pftrace" => {
                    let p = file("_results.trace.json");
                    stream(&p, &|w| {
                        super::inspect::write_chrome_named(w, &cap, self.names)
                    })?;
                    written.push(p);
                }
                "capture" => {
                    let p = file("_results.sgcap");
                    if p != capture_path {
                        std::fs::rename(capture_path, &p)
                            .map_err(|e| format!("moving the capture to {}: {e}", p.display()))?;
                    }
                    written.push(p);
                }
                _ => {}
            }
        }
        if self.stats {
            let p = file("_kernel_stats.csv");
            stream(&p, &|mut w| {
                stats::write_csv(
                    &mut w,
                    &stats::kernel_stats_named(&cap, &|_| true, self.names),
                )
            })?;
            written.push(p);
        }
        if !self.formats.iter().any(|f| f == "capture") {
            let _ = std::fs::remove_file(capture_path);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_ranges_read_as_rocprofv3_writes_them() {
        assert_eq!(parse_ranges(&["[1-4]".into()]).unwrap(), [(1, 4)]);
        assert_eq!(
            parse_ranges(&["[2, 5-6]".into(), "9".into()]).unwrap(),
            [(2, 2), (5, 6), (9, 9)]
        );
        assert!(parse_ranges(&["[4-1]".into()]).is_err());
        assert!(parse_ranges(&["x".into()]).is_err());
    }

    #[test]
    fn placeholders_expand_and_unknown_ones_are_errors() {
        let p = Path::new("/bin/app");
        assert_eq!(expand("%argt%/%pid%", p).unwrap(), "app/%p");
        assert!(
            expand("%nope%", p)
                .unwrap_err()
                .contains("unknown placeholder %nope%")
        );
        assert!(expand("a%b", p).is_err());
    }
}
