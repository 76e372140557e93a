//! Where the `unsafe` is, checked: `unsafe_code` is denied crate-wide
//! (`Cargo.toml`) and allowed file by file, never for a whole module; every
//! file that allows it has unsafe code, and is listed in `docs/UNSAFE.md`.
//!
//! A `mod.rs` (a file with child files) may not allow it at its top: an inner
//! attribute there covers every child file too. The one item-level allow is
//! an inline module that holds nothing but foreign code (the assembly
//! trampolines `entry_points!` generates in `interpose/mod.rs`): it has no
//! child files, so it is as narrow as a file.

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
        let allows = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with(ALLOW)
                || (l.starts_with("#![allow(") && l.contains("unsafe_code") && !l.contains("//"))
        });
        if allows && f.file_name().is_some_and(|n| n == "mod.rs") {
            problems.push(format!(
                "{rel}: a mod.rs allows unsafe_code, which covers every child file; move its unsafe code into a file of its own"
            ));
        }
        let uses = text.lines().any(is_unsafe_code);
        let item_allows: Vec<bool> = text
            .lines()
            .zip(text.lines().skip(1))
            .filter(|(a, _)| a.trim_start().starts_with("#[allow(unsafe_code)]"))
            .map(|(_, b)| b.trim_start() == "mod trampolines {")
            .collect();
        // The compiler checks that the unsafe code of such a file is inside
        // the trampolines module; this test only sees the file.
        let allows = allows || item_allows.contains(&true);
        if item_allows.contains(&false) {
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
