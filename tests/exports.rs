//! The shim's exported symbols match the one entry-point table, and that table
//! matches the real ROCr library the headers are pinned to.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use softgpu_hsa::interpose::{Answer, ENTRY_POINTS};

mod common;
use common::shim;

fn exported_hsa(lib: &Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .unwrap_or_else(|e| panic!("cannot run nm (binutils): {e}"));
    assert!(out.status.success(), "nm failed on {}", lib.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(|s| s.split('@').next().unwrap().to_string())
        .filter(|s| s.starts_with("hsa_"))
        .collect()
}

#[test]
fn the_shim_exports_exactly_the_entry_point_table() {
    let exported = exported_hsa(&shim());
    let table: BTreeSet<String> = ENTRY_POINTS.iter().map(|e| e.name.to_string()).collect();
    let missing: Vec<_> = table.difference(&exported).collect();
    let extra: Vec<_> = exported.difference(&table).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "table entries not exported: {missing:?}; exports not in the table: {extra:?}"
    );
}

#[test]
fn the_entry_point_table_covers_every_function_of_the_pinned_rocr() {
    let real = Path::new("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1");
    assert!(
        real.exists(),
        "{} is missing: run ./scripts/setup (libhsa-runtime64-1 comes with libhsa-runtime-dev)",
        real.display()
    );
    let rocr = exported_hsa(real);
    let table: BTreeSet<String> = ENTRY_POINTS.iter().map(|e| e.name.to_string()).collect();
    let missing: Vec<_> = rocr.difference(&table).collect();
    assert!(
        missing.is_empty(),
        "ROCr functions with no entry in the table: {missing:?}"
    );
}

#[test]
fn every_function_real_hip_imports_is_in_the_table() {
    let hip = Path::new("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5");
    assert!(
        hip.exists(),
        "{} is missing: run ./scripts/setup",
        hip.display()
    );
    let out = Command::new("nm")
        .args(["-D", "--undefined-only"])
        .arg(hip)
        .output()
        .unwrap();
    let imports: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap().to_string())
        .filter(|s| s.starts_with("hsa_"))
        .collect();
    assert!(
        imports.len() >= 70,
        "expected HIP 5.2.3 to import about 76 hsa_* functions, got {}",
        imports.len()
    );
    let table: BTreeSet<&str> = ENTRY_POINTS.iter().map(|e| e.name).collect();
    for name in &imports {
        assert!(
            table.contains(name.as_str()),
            "HIP imports {name}, which is not in the table"
        );
    }
    let implemented = ENTRY_POINTS
        .iter()
        .filter(|e| e.virtual_mode == Answer::Shim)
        .count();
    assert!(
        implemented > 100,
        "only {implemented} entry points implemented"
    );
}

#[test]
fn every_export_carries_the_rocr_1_symbol_version() {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(shim())
        .output()
        .unwrap_or_else(|e| panic!("cannot run objdump (binutils): {e}"));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut unversioned = Vec::new();
    let mut versioned = 0;
    for line in text
        .lines()
        .filter(|l| l.contains(" g ") && l.contains(".text"))
    {
        let name = line.split_whitespace().last().unwrap_or("");
        if !name.starts_with("hsa_") {
            unversioned.push(format!("unexpected global export {name}"));
        } else if line.contains(" ROCR_1 ") {
            versioned += 1;
        } else {
            unversioned.push(name.to_string());
        }
    }
    assert!(
        unversioned.is_empty(),
        "exports without ROCR_1: {unversioned:?}"
    );
    assert_eq!(versioned, ENTRY_POINTS.len());
}
