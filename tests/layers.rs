//! Layers point one way (`docs/DESIGN.md`, "Which way the layers depend"):
//! no file of a lower layer names a layer above it.

use std::path::{Path, PathBuf};

mod common;

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(dir) = std::fs::read_dir(path) else {
        panic!("{}: not found", path.display())
    };
    let mut entries: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() || p.extension().is_some_and(|e| e == "rs") {
            rust_files(&p, out);
        }
    }
}

/// Each lower part of `src/` and the modules above it that it must not name.
const RULES: &[(&str, &[&str])] = &[
    (
        "src/abi.rs",
        &[
            "aql",
            "capture",
            "runtime",
            "interpose",
            "cli",
            "diff",
            "report",
            "real",
            "lifecycle",
        ],
    ),
    (
        "src/aql",
        &[
            "capture",
            "runtime",
            "interpose",
            "cli",
            "diff",
            "report",
            "real",
            "lifecycle",
        ],
    ),
    (
        "src/capture",
        &[
            "runtime",
            "interpose",
            "cli",
            "diff",
            "report",
            "real",
            "lifecycle",
        ],
    ),
    ("src/report.rs", &["runtime", "interpose", "cli", "diff"]),
    ("src/diff", &["runtime", "interpose", "cli"]),
    (
        "src/code_object",
        &["runtime", "interpose", "cli", "diff", "report"],
    ),
    (
        "src/isa",
        &["runtime", "interpose", "cli", "diff", "report"],
    ),
    (
        "src/lifecycle.rs",
        &["runtime", "interpose", "cli", "real", "capture"],
    ),
    (
        "src/real.rs",
        &["runtime", "interpose", "cli", "lifecycle", "capture"],
    ),
    ("src/runtime", &["interpose", "cli", "diff", "report"]),
];

#[test]
fn no_lower_layer_names_a_layer_above_it() {
    let mut problems = Vec::new();
    for (part, above) in RULES {
        let mut files = Vec::new();
        rust_files(&common::repo().join(part), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for m in *above {
                    let used = [
                        format!("crate::{m}::"),
                        format!("crate::{m};"),
                        format!("crate::{m}}}"),
                        format!("softgpu_hsa::{m}"),
                    ]
                    .iter()
                    .any(|p| code.contains(p.as_str()))
                        || code.contains(&format!("crate::{{{m}"))
                        || code.contains(&format!("crate::{m},"));
                    if used {
                        problems.push(format!(
                            "{}:{}: {part} names `{m}`: {}",
                            f.display(),
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
