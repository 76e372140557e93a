//! Every input a fuzzer once failed on, replayed under plain `cargo test`.
//!
//! The fuzz targets' bodies live in `fuzz/src/<target>.rs` (the cargo-fuzz
//! workspace calls them from `fuzz/fuzz_targets/`); this file compiles the same
//! files as modules, so a regression is caught here without cargo-fuzz or a
//! nightly toolchain. An input that made a target fail is kept in
//! `fuzz/regressions/<target>/` (`./scripts/fuzz` says where it put a new one).

use std::path::Path;

#[path = "../fuzz/src/bundle.rs"]
mod bundle;
#[path = "../fuzz/src/capture_reader.rs"]
mod capture_reader;
#[path = "../fuzz/src/code_object.rs"]
mod code_object;
#[path = "../fuzz/src/demangle.rs"]
mod demangle;
#[path = "../fuzz/src/diff_inputs.rs"]
mod diff_inputs;
#[path = "../fuzz/src/kernargs.rs"]
mod kernargs;
#[path = "../fuzz/src/msgpack.rs"]
mod msgpack;
#[path = "../fuzz/src/parser.rs"]
mod parser;
#[path = "../fuzz/src/processor_ops.rs"]
mod processor_ops;

/// A fuzz target's body.
type Body = fn(&[u8]);

/// Every fuzz target and its body.
const TARGETS: &[(&str, Body)] = &[
    ("bundle", bundle::run),
    ("capture_reader", capture_reader::run),
    ("code_object", code_object::run),
    ("demangle", demangle::run),
    ("diff_inputs", diff_inputs::run),
    ("kernargs", kernargs::run),
    ("msgpack", msgpack::run),
    ("parser", parser::run),
    ("processor_ops", processor_ops::run),
];

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz"))
}

/// The names of the files directly in `dir` with this extension (all files
/// when `ext` is `None`), sorted; none when `dir` does not exist.
fn names_in(dir: &Path, ext: Option<&str>) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.is_file())
        .filter(|p| ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)))
        .map(|p| {
            let name = match ext {
                Some(_) => p.file_stem(),
                None => p.file_name(),
            };
            name.expect("a file name").to_string_lossy().into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn this_file_knows_every_fuzz_target_and_every_regression_directory_names_one() {
    let targets = names_in(&fuzz_dir().join("fuzz_targets"), Some("rs"));
    let known: Vec<&str> = TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(targets, known, "fuzz/fuzz_targets/ and TARGETS differ");
    let dirs = std::fs::read_dir(fuzz_dir().join("regressions")).expect("fuzz/regressions/");
    for d in dirs {
        let name = d.expect("a directory entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            known.contains(&name.as_ref()),
            "fuzz/regressions/{name} names no fuzz target"
        );
    }
}

#[test]
fn every_kept_fuzz_input_replays_without_a_failure() {
    let mut failed = Vec::new();
    let mut replayed = 0;
    for (name, run) in TARGETS {
        let dir = fuzz_dir().join("regressions").join(name);
        for file in names_in(&dir, None) {
            let path = dir.join(&file);
            let data = std::fs::read(&path).expect("a readable regression input");
            replayed += 1;
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failed.push(format!("{name}: {}", path.display()));
            }
        }
    }
    assert!(replayed > 0, "no input in fuzz/regressions/");
    assert!(
        failed.is_empty(),
        "these inputs fail again:\n{}",
        failed.join("\n")
    );
}

/// The first inputs the `processor_ops` target failed on (its model did not
/// know the AMD barrier-value packet) must each reach a barrier-value packet,
/// so the test above replays what it is meant to.
#[test]
fn the_kept_processor_ops_inputs_still_reach_a_barrier_value_packet() {
    let dir = fuzz_dir().join("regressions/processor_ops");
    for file in [
        "crash-6a6f44e3484959d1054d343812aced099649dba6",
        "crash-b9c9862f3ba070a6a1ede96e1951aae90452e03c",
    ] {
        let data = std::fs::read(dir.join(file)).expect("a kept input");
        assert!(
            softgpu_hsa::aql::mock::replay_ops(&data)
                .packets
                .iter()
                .any(|raw| raw[0] == 0 && raw[2] == 2),
            "{file} publishes no barrier-value packet"
        );
    }
}
