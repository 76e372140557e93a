//! Where the `unsafe` is, checked: `unsafe_code` is denied crate-wide
//! (`Cargo.toml`) and allowed file by file, never for a whole module; every
//! file that allows it has unsafe code, and is listed in `docs/UNSAFE.md`.

use std::path::{Path, PathBuf};

mod common;

const ALLOW: &str = "#![allow(unsafe_code)]";

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Whether a line of code (comments excluded) uses what `unsafe_code` denies.
fn is_unsafe_code(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    let code = code.split(" // ").next().unwrap_or(code);
    [
        "unsafe {",
        "unsafe fn",
        "unsafe extern",
        "unsafe impl",
        "global_asm!",
        "#[unsafe(",
    ]
    .iter()
    .any(|k| code.contains(k))
}

#[test]
fn unsafe_code_is_allowed_per_file_only_where_it_is_used_and_every_such_file_is_in_unsafe_md() {
    let repo = common::repo();
    let mut files = Vec::new();
    rust_files(&repo.join("src"), &mut files);
    let inventory = std::fs::read_to_string(repo.join("docs/UNSAFE.md")).unwrap_or_default();
    let mut problems = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(repo).unwrap_or(f).display().to_string();
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let allows = text.lines().any(|l| l.trim_start().starts_with(ALLOW));
        let uses = text.lines().any(is_unsafe_code);
        if text.contains("#[allow(unsafe_code)]") {
            problems.push(format!(
                "{rel}: `#[allow(unsafe_code)]` on an item; allow it per file"
            ));
        }
        match (allows, uses) {
            (true, false) => problems.push(format!("{rel}: allows unsafe_code but has none")),
            (false, true) => problems.push(format!(
                "{rel}: has unsafe code without `{ALLOW}` (the build would fail)"
            )),
            _ => {}
        }
        if allows && !inventory.contains(&format!("`{rel}`")) {
            problems.push(format!(
                "{rel}: allows unsafe_code but docs/UNSAFE.md does not list it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
