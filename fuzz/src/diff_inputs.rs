//! Any text as a `softgpu diff` input: the CSV (rocprofv3 / rocprof v1 /
//! inspect) and rocprofv3 JSON readers return a trace or a typed error, never
//! panic; a trace that reads compares equal to itself at every level.

use softgpu_hsa::diff::{Level, compare, from_csv, from_rocprof_json};

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for trace in [from_csv(text), from_rocprof_json(text)]
        .into_iter()
        .flatten()
    {
        for level in [Level::Exact, Level::Count, Level::Order, Level::Events] {
            let out = compare(&trace, &trace, level);
            assert!(out.same, "a trace differs from itself at {level:?}");
        }
    }
}
