//! `softgpu run` with rocprofv3's options on a real HIP program (integration/hip/streams.cpp,
//! built by the host's hipcc, HIP 5.2.3): each option writes what its help says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use rusqlite::Connection;

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("run_rocprof")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// streams.cpp: k_null x2, k_stream x5, k_prio x2, k_cumask x2, k_timed x1, k_sync x5,
/// over several streams and queues.
fn program() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run_rocprof_streams");
        if out.exists() {
            return out;
        }
        assert!(
            Path::new("/usr/bin/hipcc").exists(),
            "hipcc is not installed: run ./scripts/setup"
        );
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let o = Command::new("hipcc")
            .args(["--offload-arch=gfx90a", "-O1", "-I"])
            .arg(repo.join("integration/hip"))
            .arg(repo.join("integration/hip/streams.cpp"))
            .arg("-o")
            .arg(&out)
            .output()
            .expect("cannot run hipcc: run ./scripts/setup");
        assert!(
            o.status.success(),
            "hipcc: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
}

fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .current_dir(cwd)
        .arg("run")
        .args(args)
        .arg("--")
        .arg(program())
        .env("SOFTGPU_TARGET", "gfx90a")
        .output()
        .unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn files(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = walk(d)
        .into_iter()
        .map(|p| p.strip_prefix(d).unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

fn names_in(db: &Path) -> Vec<(String, i64)> {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT name, count(*) FROM kernels GROUP BY name ORDER BY name")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn output_directory_and_file_with_placeholders_write_a_rocpd_database_by_default() {
    let d = dir("default");
    let o = run(&d, &["-d", "%hostname%", "-o", "%argt%-%pid%"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let f = files(&d);
    assert_eq!(f.len(), 1, "{f:?}");
    let host = hostname();
    assert!(
        f[0].starts_with(&format!("{host}/run_rocprof_streams-")) && f[0].ends_with("_results.db"),
        "{f:?}"
    );
    let pid: String = f[0]
        .trim_start_matches(&format!("{host}/run_rocprof_streams-"))
        .trim_end_matches("_results.db")
        .to_string();
    assert!(pid.parse::<u32>().is_ok(), "{pid}");
    let total: i64 = names_in(&d.join(&f[0])).iter().map(|n| n.1).sum();
    assert_eq!(total, 17);
}

#[test]
fn every_output_format_is_written_and_the_capture_is_kept_only_when_asked() {
    let d = dir("formats");
    let o = run(
        &d,
        &[
            "-o",
            "out",
            "--output-format",
            "rocpd",
            "csv,json",
            "pftrace",
            "capture",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        files(&d),
        [
            "out_kernel_trace.csv",
            "out_results.db",
            "out_results.jsonl",
            "out_results.sgcap",
            "out_results.trace.json"
        ]
    );
    let csv = std::fs::read_to_string(d.join("out_kernel_trace.csv")).unwrap();
    assert!(csv.starts_with("Kind,"), "{csv}");
    let jsonl = std::fs::read_to_string(d.join("out_results.jsonl")).unwrap();
    assert!(
        jsonl
            .lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("out_results.trace.json")).unwrap()).unwrap();
    assert!(trace["traceEvents"].as_array().unwrap().len() > 17);
    // The database diffs SAME against the capture it came from.
    let o = Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .arg("diff")
        .arg(d.join("out_results.sgcap"))
        .arg(d.join("out_results.db"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // Without `capture`, the capture is not left behind.
    let d = dir("nocapture");
    let o = run(&d, &["-o", "out", "--output-format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(files(&d), ["out_kernel_trace.csv"]);
}

#[test]
fn kernel_filters_and_the_iteration_range_select_the_dispatches_written() {
    let d = dir("filters");
    let o = run(
        &d,
        &[
            "-o",
            "f",
            "--kernel-include-regex",
            "^k_s",
            "--kernel-exclude-regex",
            "sync",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        names_in(&d.join("f_results.db")),
        [("k_stream(int*, int)".into(), 5)]
    );
    let o = run(&d, &["-o", "r", "--kernel-iteration-range", "[2-3]", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        names_in(&d.join("r_results.db")),
        [
            ("k_cumask(float*, float)".into(), 1),
            ("k_null(int*)".into(), 1),
            ("k_prio(int*)".into(), 1),
            ("k_stream(int*, int)".into(), 3),
            ("k_sync(int*)".into(), 3),
        ]
    );
}

#[test]
fn stats_writes_kernel_stats_csv_and_m_and_t_shape_the_names() {
    let d = dir("stats");
    let o = run(&d, &["-o", "s", "--stats"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // -o alone means the default output format, rocpd, as well.
    assert_eq!(files(&d), ["s_kernel_stats.csv", "s_results.db"]);
    let s = std::fs::read_to_string(d.join("s_kernel_stats.csv")).unwrap();
    let mut lines = s.lines();
    assert_eq!(
        lines.next(),
        Some(
            "Name,Calls,Grid_Sizes,Workgroup_Sizes,Group_Segment_Sizes,Private_Segment_Sizes,Rejected,Findings"
        )
    );
    assert_eq!(
        lines.next(),
        Some("\"k_stream(int*, int)\",5,1024x1x1,128x1x1,0,0,0,0")
    );
    let o = run(
        &d,
        &[
            "-o",
            "m",
            "--stats",
            "-M",
            "--output-format",
            "csv",
            "pftrace",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let s = std::fs::read_to_string(d.join("m_kernel_stats.csv")).unwrap();
    assert!(s.contains("\n_Z8k_streamPii,5,"), "{s}");
    // -M reaches the csv's Kernel_Name and the trace's event names too.
    let csv = std::fs::read_to_string(d.join("m_kernel_trace.csv")).unwrap();
    assert_eq!(csv.matches(",_Z8k_streamPii,").count(), 5, "{csv}");
    assert!(!csv.contains("\"k_stream(int*, int)\""), "{csv}");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("m_results.trace.json")).unwrap())
            .unwrap();
    let named = |want: &str| {
        trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == want)
            .count()
    };
    assert_eq!(named("_Z8k_streamPii"), 5, "{trace}");
    let o = run(
        &d,
        &["-o", "t", "--stats", "-T", "--output-format", "rocpd"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let s = std::fs::read_to_string(d.join("t_kernel_stats.csv")).unwrap();
    assert!(s.contains("\nk_stream,5,"), "{s}");
    assert!(names_in(&d.join("t_results.db")).contains(&("k_stream".into(), 5)));
    let o = run(&d, &["-o", "tc", "-T", "--output-format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let csv = std::fs::read_to_string(d.join("tc_kernel_trace.csv")).unwrap();
    assert_eq!(csv.matches(",k_stream,").count(), 5, "{csv}");
}

#[test]
fn pmc_att_and_pc_sampling_are_refused_saying_they_need_a_gpu() {
    let d = dir("refused");
    for args in [
        &["--pmc", "SQ_WAVES"][..],
        &["--att"],
        &["--pc-sampling-unit", "time"],
        &["--pc-sampling-beta-enabled"],
    ] {
        let o = run(&d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(
            err(&o).contains("needs a GPU's counters and timing"),
            "{}",
            err(&o)
        );
    }
    assert!(files(&d).is_empty());
}
