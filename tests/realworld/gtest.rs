//! Reading a packaged GoogleTest suite's output under the shim.
//!
//! Kernels never run under SoftGPU, so a library test that compares what a kernel computed with
//! a reference fails, and that is expected. A packaged suite therefore counts as passing when it
//! ran to its end and every failure it reports is a numerical comparison of results. Anything
//! else (a HIP or library status that is not success, an exception, a crash, a run that never
//! reaches the final summary) is a failure of the run.

/// One test that gtest reported as failed, with the failure messages printed inside it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Failed {
    pub name: String,
    /// Each `file:line: Failure` block (the text up to the next block or the test's end), plus
    /// anything the test printed that names an error.
    pub blocks: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Tests started (`[ RUN      ]`).
    pub ran: usize,
    pub passed: usize,
    /// Each test skipped (`[  SKIPPED ]`) with the reason it printed (the `file:line:
    /// Skipped` block's text, empty when it gave none).
    pub skips: Vec<(String, String)>,
    pub failed: Vec<Failed>,
    /// The final `[==========] N tests from M test suites ran.` line was printed.
    pub complete: bool,
    /// The test running when the output stopped, if it stopped inside one.
    pub unfinished: Option<String>,
}

fn test_name(rest: &str) -> String {
    // "Suite.Name (12 ms)" or "Suite.Name, where GetParam() = ... (3 ms)"
    let rest = rest.trim();
    let end = rest
        .find(", where ")
        .or_else(|| rest.rfind(" ("))
        .unwrap_or(rest.len());
    rest[..end].trim().to_string()
}

/// `line` without the terminal colour sequences (`ESC [ ... m`) some harnesses print whatever
/// `--gtest_color` says (RCCL's `[ ERROR    ]` lines).
fn uncoloured(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\x1b') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 2..];
        match tail.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if tail[end..].starts_with('m') => rest = &tail[end + 1..],
            _ => {
                out.push_str(&rest[at..at + 2]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Parse gtest's default (colourless) output. An `[ ERROR    ]` line inside a test (RCCL's
/// harness reports its failures so) is a failure block of its own.
pub fn parse(out: &str) -> Report {
    let mut r = Report::default();
    let mut current: Option<(String, Vec<String>)> = None;
    let mut block: Option<String> = None;
    for line in out.lines() {
        let line = uncoloured(line);
        let line = line.as_ref();
        if let Some(rest) = line.strip_prefix("[ RUN      ] ") {
            r.ran += 1;
            current = Some((test_name(rest), Vec::new()));
            block = None;
            continue;
        }
        if let Some(rest) = line.strip_prefix("[       OK ] ") {
            if current.as_ref().is_some_and(|(n, _)| *n == test_name(rest)) {
                r.passed += 1;
                current = None;
                block = None;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("[  SKIPPED ] ") {
            if let Some((name, blocks)) = current.take() {
                if name == test_name(rest) {
                    let reason = blocks
                        .into_iter()
                        .chain(block.take())
                        .filter_map(|b| skip_reason(&b))
                        .collect::<Vec<_>>()
                        .join(" ");
                    r.skips.push((name, reason));
                    continue;
                }
                current = Some((name, blocks));
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("[  FAILED  ] ") {
            if let Some((name, mut blocks)) = current.take() {
                if name == test_name(rest) {
                    if let Some(b) = block.take() {
                        blocks.push(b);
                    }
                    // A skip after a failure leaves the test failed; its message is no failure.
                    blocks.retain(|b| skip_reason(b).is_none());
                    r.failed.push(Failed { name, blocks });
                    continue;
                }
                current = Some((name, blocks));
            }
            continue;
        }
        if line.starts_with("[==========] ") && line.contains(" ran.") {
            r.complete = true;
            continue;
        }
        let Some((_, blocks)) = current.as_mut() else {
            continue;
        };
        if is_failure_head(line) || is_skip_head(line) || line.starts_with(RCCL_ERROR) {
            if let Some(b) = block.take() {
                blocks.push(b);
            }
            block = Some(format!("{line}\n"));
        } else if let Some(b) = block.as_mut() {
            b.push_str(line);
            b.push('\n');
        }
    }
    if let Some((name, _)) = current {
        r.unfinished = Some(name);
    }
    r
}

/// `path:line: Failure` (gtest) or `unknown file: Failure` (an exception escaped the test).
fn is_failure_head(line: &str) -> bool {
    line.ends_with(": Failure") || line.contains(": Failure\r")
}

/// `path:line: Skipped`, which gtest prints before a `GTEST_SKIP()`'s message.
fn is_skip_head(line: &str) -> bool {
    line.trim_end_matches('\r').ends_with(": Skipped")
}

/// The message of a `Skipped` block on one line, or None for a block of another kind.
fn skip_reason(block: &str) -> Option<String> {
    let mut lines = block.lines();
    if !lines.next().is_some_and(is_skip_head) {
        return None;
    }
    Some(
        lines
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// A number as gtest, the libraries' printers or iostreams print one: integers, decimals,
/// exponents, hex, `nan`/`inf` with signs, and complex values such as `(1.5,-2)`, `(1.5, 2)`
/// or `1.5+2i`. A trailing `f` or type suffix is allowed.
pub fn is_number(s: &str) -> bool {
    let s = s.trim();
    if s.is_empty() {
        return false;
    }
    if let Some(body) = s.strip_suffix(['f', 'F']) {
        if body.parse::<f64>().is_ok() {
            return true;
        }
    }
    if let Some(inner) = s.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
        return inner.split(',').all(is_number);
    }
    // A character as gtest prints one: '3' (51, 0x33), '\xD2' (-46), '\0'.
    if let Some(rest) = s.strip_prefix('\'') {
        if let Some(end) = rest.rfind('\'') {
            let (lit, tail) = (&rest[..end], rest[end + 1..].trim());
            return !lit.is_empty()
                && lit.chars().count() <= 4
                && (tail.is_empty() || is_number(tail));
        }
    }
    if let Some(inner) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        return inner.split(',').all(is_number);
    }
    // rocPRIM's printer for pairs and custom types: [1234; 1234].
    if let Some(inner) = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        return inner.split([';', ',']).all(is_number);
    }
    let t = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if matches!(t.as_str(), "nan" | "inf" | "infinity" | "-nan" | "nan(ind)")
        || t.starts_with("nan(")
    {
        return true;
    }
    if let Some(hex) = t.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if t.parse::<f64>().is_ok() {
        return true;
    }
    // 1.5+2i / 1.5-2i
    if let Some(body) = t.strip_suffix('i') {
        if let Some(pos) = body.rfind(['+', '-']).filter(|&p| p > 0) {
            return body[..pos].parse::<f64>().is_ok() && body[pos..].parse::<f64>().is_ok();
        }
    }
    false
}

/// Words that mark a failure as an error of the runtime or the library rather than a wrong
/// value (case-insensitive).
const ERROR_MARKS: &[&str] = &[
    "success",
    "hiperror",
    "hip_error",
    "status_",
    "_status",
    "status:",
    "exception",
    "abort",
    "segmentation",
    "out of memory",
    "not supported",
    "not implemented",
    "unimplemented",
    "invalid",
    "failed to",
    "cannot",
    "could not",
];

/// Whether a failure block is a numerical comparison of results: gtest's value comparisons
/// (`Expected equality of these values`, `The difference between ... exceeds`, binary
/// comparisons with `actual: X vs Y`) where every value shown is a number, and nothing in it
/// names an error.
pub fn is_numerical(block: &str) -> bool {
    let lower = block.to_ascii_lowercase();
    if ERROR_MARKS.iter().any(|m| lower.contains(m)) {
        return false;
    }
    let lines: Vec<&str> = block.lines().map(str::trim).collect();
    // EXPECT_EQ / ASSERT_EQ: both sides' values ("Which is: X", or the expression itself when
    // it is a literal) are numbers.
    if lines
        .iter()
        .any(|l| l.starts_with("Expected equality of these values:"))
    {
        let values: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("Which is: "))
            .collect();
        let operands: Vec<&str> = lines
            .iter()
            .skip_while(|l| !l.starts_with("Expected equality of these values:"))
            .skip(1)
            .filter(|l| !l.starts_with("Which is: "))
            .take(2)
            .copied()
            .collect();
        return !values.is_empty() && values.iter().all(|v| is_number(v))
            || operands.len() == 2 && operands.iter().all(|v| is_number(v));
    }
    // rocPRIM's bitwise comparison of a result element with the reference: "Expected
    // strict/bitwise equality of these values:" then "result: X" and "expected: Y", the values
    // printed as their type prints (characters raw).
    if lines
        .iter()
        .any(|l| l.starts_with("Expected strict/bitwise equality of these values:"))
    {
        return lines.iter().any(|l| l.starts_with("result:"))
            && lines.iter().any(|l| l.starts_with("expected:"));
    }
    // EXPECT_NEAR
    if lines
        .iter()
        .any(|l| l.starts_with("The difference between ") && l.contains(" exceeds "))
    {
        return true;
    }
    // EXPECT_LE and friends: "Expected: (a) <= (b), actual: 1 vs 2"
    if let Some(l) = lines
        .iter()
        .find(|l| l.starts_with("Expected: (") && l.contains(", actual: "))
    {
        let (_, actual) = l.split_once(", actual: ").unwrap();
        return actual.split(" vs ").all(is_number);
    }
    // EXPECT_FLOAT_EQ / EXPECT_DOUBLE_EQ print "Expected equality" (handled) ; EXPECT_PRED_FORMAT
    // helpers of the libraries print their own lines, handled by the callers' allow lists.
    false
}

/// Whether a failure block only reports failures of the assertions inside a helper
/// (`EXPECT_NO_FATAL_FAILURE(helper(...))`: "doesn't generate new fatal failures in the current
/// thread. Actual: it does."). Such a block is judged by those inner failures, which gtest
/// reports as blocks of their own.
pub fn is_derived(block: &str) -> bool {
    block.contains("doesn't generate new fatal failures in the current thread")
}

/// The failure blocks of one test that must be judged: all but the derived ones, when there are
/// others (a derived block alone is judged as it is).
pub fn judged_blocks(blocks: &[String]) -> Vec<&String> {
    let own: Vec<&String> = blocks.iter().filter(|b| !is_derived(b)).collect();
    if own.is_empty() {
        blocks.iter().collect()
    } else {
        own
    }
}

/// Whether a failure block is one of a library's own result checks (`marks`: the messages its
/// test helpers print when computed values differ from the reference, e.g. rocFFT's
/// `Linf test failed`), and names no error.
pub fn names_result_check(block: &str, marks: &[&str]) -> bool {
    let lower = block.to_ascii_lowercase();
    !ERROR_MARKS.iter().any(|m| lower.contains(m)) && marks.iter().any(|m| block.contains(m))
}

/// The prefix of RCCL's harness's error lines.
const RCCL_ERROR: &str = "[ ERROR    ] ";

/// Whether a failure block is one of the lines RCCL's unit-test harness prints when a
/// collective's output differs from the expected values (`test/common/TestBed.cpp`,
/// `ValidateResults`): `Expected output: X.  Actual output: Y at index N` with numbers, and the
/// lines that follow one (`Mismatch for (Rank R) ...`, `Rank R Group G Collective C output does
/// not match expected`, `Child C failed on command [VALIDATE_RESULTS]:`, `Incorrect output for
/// ...`). Anything else it prints as an error (a failed NCCL call, another failed command) is
/// not.
///
/// The harness's own gtest failure for the same check, `TestBed.cpp:N: Failure` with `isCorrect`
/// false and `Output does not match expected`, is one too. RCCL's log lines (`NCCL WARN`, `NCCL
/// INFO`, its version banner) that the processes print meanwhile may follow a block; they are
/// judged apart ([`rccl_warnings`]).
pub fn is_rccl_validation(block: &str) -> bool {
    let lines: Vec<&str> = block
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !is_rccl_log(l))
        .collect();
    if let Some(head) = lines.first().filter(|l| l.ends_with(": Failure")) {
        let rest: Vec<&str> = lines[1..].iter().map(|l| l.trim()).collect();
        return head.contains("TestBed.cpp:")
            && rest
                == [
                    "Expected equality of these values:",
                    "isCorrect",
                    "Which is: false",
                    "true",
                    "Output does not match expected",
                ];
    }
    let Some(line) = lines.first().and_then(|l| l.strip_prefix(RCCL_ERROR)) else {
        return false;
    };
    if lines.len() > 1 {
        return false;
    }
    if let Some(rest) = line.strip_prefix("Expected output: ") {
        return rccl_expected_actual(rest).is_some();
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["Mismatch", "for", "(Rank", r, ..] => r.trim_end_matches(')').parse::<u32>().is_ok(),
        [
            "Rank",
            r,
            "Group",
            g,
            "Collective",
            c,
            "output",
            "does",
            "not",
            "match",
            "expected",
        ] => [r, g, c].iter().all(|n| n.parse::<u32>().is_ok()),
        ["Child", c, "failed", "on", "command", "[VALIDATE_RESULTS]:"] => c.parse::<u32>().is_ok(),
        ["Incorrect", "output", "for", ..] => true,
        _ => false,
    }
}

/// A line of RCCL's log (`[date] host:pid:tid [dev] file:line NCCL WARN|INFO ...`) or of the
/// banner each of its processes prints (`RCCL version : ...`).
pub fn is_rccl_log(line: &str) -> bool {
    line.contains(" NCCL WARN ")
        || line.contains(" NCCL INFO ")
        || [
            "RCCL version",
            "HIP version",
            "ROCm version",
            "Hostname",
            "Librccl path",
        ]
        .iter()
        .any(|k| {
            line.strip_prefix(k)
                .is_some_and(|r| r.trim_start().starts_with(": "))
        })
}

/// RCCL's warnings that are known and say nothing about the runtime, with why.
pub const RCCL_KNOWN_WARNINGS: &[(&str, &str)] = &[
    (
        "Missing \"iommu=pt\" from kernel command line",
        "the host kernel's command line",
    ),
    (
        "pfn_hsa_system_get_info failed with 4107",
        "RCCL's rocmwrap.cc dlopens libhsa-runtime64.so itself and asks the real ROCr below the \
         shim, which never initialised (HSA_STATUS_ERROR_NOT_INITIALIZED); the answer only feeds \
         its DMA-BUF probe, which RCCL leaves off unless NCCL_DMABUF_ENABLE=1",
    ),
];

/// Every `NCCL WARN` line of `out` whose message is not one of [`RCCL_KNOWN_WARNINGS`].
pub fn rccl_warnings(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.split_once(" NCCL WARN ").map(|(_, m)| m.trim()))
        .filter(|m| !RCCL_KNOWN_WARNINGS.iter().any(|(k, _)| m.starts_with(k)))
        .map(str::to_string)
        .collect()
}

/// `X.  Actual output: Y at index N` with X and Y numbers (as `Expected output: ` leaves it).
fn rccl_expected_actual(rest: &str) -> Option<()> {
    let (expected, rest) = rest.split_once(".  Actual output: ")?;
    let (actual, index) = rest.split_once(" at index ")?;
    (is_number(expected) && is_number(actual) && index.trim().parse::<u64>().is_ok()).then_some(())
}

/// Whether an RCCL test's failure blocks are a result check and nothing else: every block one of
/// [`is_rccl_validation`]'s lines, one of them the `Expected output` comparison itself.
pub fn is_rccl_result_check(blocks: &[String]) -> bool {
    !blocks.is_empty()
        && blocks.iter().all(|b| is_rccl_validation(b))
        && blocks
            .iter()
            .any(|b| b.starts_with(&format!("{RCCL_ERROR}Expected output: ")))
}

/// rocSPARSE's near_check verdict (7.2.4: `clients/common/rocsparse_check.cpp`): a block that is
/// exactly `...rocsparse_check.cpp:N: Failure`, `Value of: passed`, `Actual: false`, `Expected:
/// true`. Its comparisons went to stderr ([`rocsparse_near_failures`]).
pub fn is_rocsparse_near_verdict(block: &str) -> bool {
    let lines: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    matches!(
        lines.as_slice(),
        [head, "Value of: passed", "Actual: false", "Expected: true"]
            if head.contains("rocsparse_check.cpp:") && head.ends_with(": Failure")
    )
}

/// The failed comparisons rocSPARSE's near_check printed on stderr: lines `ASSERT_NEAR(a, b)
/// failed: d exceeds permissive range [lo,hi ]` with numbers (complex values as `(re,im)`).
pub fn rocsparse_near_failures(stderr: &str) -> usize {
    stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix("ASSERT_NEAR("))
        .filter(|rest| {
            let Some((values, rest)) = rest.split_once(") failed: ") else {
                return false;
            };
            let Some((diff, range)) = rest.split_once(" exceeds permissive range [") else {
                return false;
            };
            // "a, b" where a and b may themselves be "(re,im)".
            let values: Vec<&str> = if values.starts_with('(') {
                values.splitn(2, "), ").collect()
            } else {
                values.splitn(2, ", ").collect()
            };
            let fix = |v: &str| {
                if v.starts_with('(') && !v.ends_with(')') {
                    format!("{v})")
                } else {
                    v.to_string()
                }
            };
            values.len() == 2
                && values.iter().all(|v| is_number(&fix(v)))
                && is_number(diff)
                && range
                    .trim_end()
                    .strip_suffix(']')
                    .is_some_and(|r| r.split(',').all(is_number))
        })
        .count()
}

/// What a Thrust unit-test program printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThrustReport {
    /// `Running N unit tests.`
    pub ran: usize,
    pub passed: usize,
    /// (failures, known failures, errors, passes) from the `Totals:` line.
    pub totals: Option<(usize, usize, usize, usize)>,
    /// Each `FAILURE: name` block.
    pub failures: Vec<(String, String)>,
    /// Each `ERROR: name` block (an exception, e.g. a HIP error thrust turned into one).
    pub errors: Vec<(String, String)>,
}

/// Parse the output of Thrust's unit-test driver (rocThrust's `test_thrust_*` programs).
pub fn parse_thrust(out: &str) -> ThrustReport {
    let mut r = ThrustReport::default();
    let mut current: Option<(bool, String, String)> = None;
    let flush = |r: &mut ThrustReport, c: &mut Option<(bool, String, String)>| {
        if let Some((is_error, name, block)) = c.take() {
            if is_error {
                r.errors.push((name, block));
            } else {
                r.failures.push((name, block));
            }
        }
    };
    for line in out.lines() {
        if let Some(n) = line.strip_prefix("Running ").and_then(|l| {
            l.strip_suffix(" unit tests.")
                .or_else(|| l.strip_suffix(" unit test."))
        }) {
            r.ran = n.trim().parse().unwrap_or(0);
        } else if line.starts_with("================") {
            flush(&mut r, &mut current);
        } else if let Some(name) = line.strip_prefix("FAILURE: ") {
            flush(&mut r, &mut current);
            current = Some((false, name.trim().to_string(), String::new()));
        } else if let Some(name) = line.strip_prefix("ERROR: ") {
            flush(&mut r, &mut current);
            current = Some((true, name.trim().to_string(), String::new()));
        } else if let Some(rest) = line.strip_prefix("Totals: ") {
            flush(&mut r, &mut current);
            // "9 failures, 0 known failures, 0 errors, and 5 passes."
            let nums: Vec<usize> = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter(|t| !t.is_empty())
                .filter_map(|t| t.parse().ok())
                .collect();
            if let [f, k, e, p] = nums.as_slice() {
                r.totals = Some((*f, *k, *e, *p));
                r.passed = *p;
            }
        } else if let Some((_, _, block)) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    flush(&mut r, &mut current);
    r
}

/// Whether a Thrust FAILURE block is a comparison of computed values: Thrust's
/// `values are not equal`, `values are not approximately equal` or `Sequences are not equal`
/// (its ASSERT_EQUAL family), naming no error.
pub fn is_thrust_value_check(block: &str) -> bool {
    let lower = block.to_ascii_lowercase();
    let first = block.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    !["exception", "hiperror", "error", "abort"]
        .iter()
        .any(|m| lower.contains(m))
        && (first.contains("values are not equal")
            || first.contains("values are not approximately equal")
            || first.contains("Sequences are not equal")
            || first.contains("Sequences are not approximately equal"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
[==========] Running 3 tests from 1 test suite.
[ RUN      ] s.a
[       OK ] s.a (0 ms)
[ RUN      ] s.b/0
/src/test.cpp:10: Failure
Expected equality of these values:
  cpu[i]
    Which is: 1.5
  gpu[i]
    Which is: 0
[  FAILED  ] s.b/0, where GetParam() = (1, 2) (1 ms)
[ RUN      ] s.c
/src/test.cpp:20: Failure
Expected equality of these values:
  hipSuccess
    Which is: 0
  hipMalloc(&p, n)
    Which is: 2
[  FAILED  ] s.c (0 ms)
[==========] 3 tests from 1 test suite ran. (5 ms total)
[  PASSED  ] 1 test.
[  FAILED  ] 2 tests, listed below:
[  FAILED  ] s.b/0, where GetParam() = (1, 2)
[  FAILED  ] s.c
";

    #[test]
    fn gtest_output_is_read_test_by_test_with_each_failure_block() {
        let r = parse(SAMPLE);
        assert!(r.complete);
        assert_eq!((r.ran, r.passed, r.failed.len()), (3, 1, 2));
        assert_eq!(r.failed[0].name, "s.b/0");
        assert_eq!(r.failed[0].blocks.len(), 1);
        assert!(is_numerical(&r.failed[0].blocks[0]));
        assert_eq!(r.failed[1].name, "s.c");
        assert!(
            !is_numerical(&r.failed[1].blocks[0]),
            "hipSuccess vs 2 names an error"
        );
    }

    #[test]
    fn a_skipped_test_is_counted_with_the_reason_it_printed_and_is_not_a_failure() {
        let out = "\
[ RUN      ] s.fits
[       OK ] s.fits (0 ms)
[ RUN      ] s.big/0
shared/accuracy_test.h:211: Skipped
Problem size (80 GiB) raw data
too large for device

[  SKIPPED ] s.big/0, where GetParam() = 3 (0 ms)
[ RUN      ] s.quiet
[  SKIPPED ] s.quiet (0 ms)
[==========] 3 tests from 1 test suite ran. (1 ms total)
";
        let r = parse(out);
        assert!(r.complete);
        assert_eq!((r.ran, r.passed, r.skips.len()), (3, 1, 2));
        assert!(r.failed.is_empty());
        assert_eq!(
            r.skips,
            vec![
                (
                    "s.big/0".to_string(),
                    "Problem size (80 GiB) raw data too large for device".to_string()
                ),
                ("s.quiet".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn output_that_stops_inside_a_test_is_incomplete_and_names_it() {
        let r =
            parse("[ RUN      ] s.a\n[       OK ] s.a (0 ms)\n[ RUN      ] s.crash\nsomething\n");
        assert!(!r.complete);
        assert_eq!(r.unfinished.as_deref(), Some("s.crash"));
    }

    #[test]
    fn numbers_in_every_form_the_libraries_print_are_numbers_and_words_are_not() {
        for n in [
            "0", "-1.5e-3", "nan", "-nan", "inf", "0x1f", "(1.5,-2)", "(1, 2)", "1.5+2i", "3f",
        ] {
            assert!(is_number(n), "{n}");
        }
        for n in ["hipSuccess", "true", "rocblas_status_success", "", "(a,b)"] {
            assert!(!is_number(n), "{n}");
        }
    }

    #[test]
    fn thrust_output_is_read_with_its_totals_and_each_failure_and_error() {
        let out = "Running 3 unit tests.\nF.E\n================================================================\n\
FAILURE: TestSortAscendingKey\n[testing/sort.cu:88] Sequences are not equal [type='int']\n  [0] 30  88\n\
================================================================\nERROR: TestReduce\n[testing/reduce.cu:1] \
unknown exception\n================================================================\n\
Totals: 1 failures, 0 known failures, 1 errors, and 1 passes.\n";
        let r = parse_thrust(out);
        assert_eq!(r.ran, 3);
        assert_eq!(r.totals, Some((1, 0, 1, 1)));
        assert_eq!(r.failures.len(), 1);
        assert!(is_thrust_value_check(&r.failures[0].1));
        assert_eq!(r.errors[0].0, "TestReduce");
        assert!(!is_thrust_value_check(
            "[x.cu:1] values are not equal: hipErrorInvalidValue\n"
        ));
        assert!(!is_thrust_value_check("[x.cu:1] something else\n"));
    }

    #[test]
    fn a_helper_wrapper_block_is_judged_by_the_failures_inside_it() {
        let inner = "t.hpp:1: Failure\nExpected equality of these values:\n  result\n    Which is: 0\n  expected\n    Which is: 5\n".to_string();
        let wrapper = "t.cpp:2: Failure\nExpected: assert_near(a, b) doesn't generate new fatal failures in the current thread.\n  Actual: it does.\n".to_string();
        let both = vec![inner.clone(), wrapper.clone()];
        assert_eq!(judged_blocks(&both), vec![&inner]);
        let alone = vec![wrapper.clone()];
        assert_eq!(judged_blocks(&alone), vec![&wrapper]);
        assert!(!is_numerical(&wrapper));
    }

    #[test]
    fn a_library_result_check_counts_only_when_it_names_no_error() {
        let b = "x.h:1: Failure\nValue of: diff.l_inf <= linf_cutoff\n  Actual: false\nExpected: true\nLinf test failed.\n";
        assert!(names_result_check(b, &["Linf test failed"]));
        assert!(!names_result_check(b, &["L2 test failed"]));
        assert!(!names_result_check(
            "Linf test failed. hipErrorOutOfMemory\n",
            &["Linf test failed"]
        ));
    }

    #[test]
    fn rccl_error_lines_are_blocks_and_only_its_value_check_is_a_result_check() {
        let out = "\
[ RUN      ] AllReduce.OutOfPlace
\x1b[0;31m[ ERROR    ] \x1b[0mExpected output: 1.500000.  Actual output: 0.000000 at index 0
\x1b[0;31m[ ERROR    ] \x1b[0mMismatch for (Rank 0) ncclAllReduce ncclFloat32 sum #In: 393216 #Out: 393216
\x1b[0;31m[ ERROR    ] \x1b[0mRank 0 Group 0 Collective 0 output does not match expected
\x1b[0;31m[ ERROR    ] \x1b[0mChild 0 failed on command [VALIDATE_RESULTS]:
\x1b[0;31m[ ERROR    ] \x1b[0mIncorrect output for SP 2    ranks            AllReduce (OP,GM,NL)     ncclFloat32     sum 
[  FAILED  ] AllReduce.OutOfPlace (21146 ms)
[ RUN      ] AllReduce.InPlace
\x1b[0;31m[ ERROR    ] \x1b[0mChild process 0 fails NCCL call ncclGroupEnd with code 3
\x1b[0;31m[ ERROR    ] \x1b[0mChild 0 failed on command [INIT_COMMS]:
[  FAILED  ] AllReduce.InPlace (14269 ms)
[==========] 2 tests from 1 test suite ran. (1 ms total)
";
        let r = parse(out);
        assert!(r.complete);
        assert_eq!(r.failed.len(), 2);
        assert_eq!(r.failed[0].blocks.len(), 5);
        assert!(is_rccl_result_check(&r.failed[0].blocks));
        assert!(!is_rccl_result_check(&r.failed[1].blocks));
        assert!(!is_rccl_validation(&r.failed[1].blocks[1]));
        // The comparison alone is enough, the lines after it alone are not.
        assert!(is_rccl_result_check(&r.failed[0].blocks[..1]));
        assert!(!is_rccl_result_check(&r.failed[0].blocks[1..]));
        assert!(!is_rccl_validation(
            "[ ERROR    ] Expected output: hipErrorInvalidValue.  Actual output: 0 at index 0\n"
        ));
        assert_eq!(uncoloured("\x1b[0;31mred\x1b[0m \x1b[x"), "red \x1b[x");
        // The harness's own gtest failure for the check, with the log lines that followed it.
        let harness = "test/common/TestBed.cpp:409: Failure\nExpected equality of these values:\n  isCorrect\n    Which is: false\n  true\nOutput does not match expected\n\n\n[2026-12-07 17:37:21] vm:1:1 [0] init.cc:218 NCCL WARN Missing \"iommu=pt\" from kernel command line\nRCCL version : 2.27.7-Unknown \nHostname     : vm\n";
        assert!(is_rccl_validation(harness));
        assert!(!is_rccl_validation(&harness.replace("isCorrect", "ready")));
        assert!(!is_rccl_validation(&format!("{harness}something else\n")));
        assert_eq!(
            rccl_warnings(&format!(
                "{harness}[x] vm:1:1 [0] p2p.cc:256 NCCL WARN hipIpcGetMemHandle failed : invalid argument\n"
            )),
            vec!["hipIpcGetMemHandle failed : invalid argument".to_string()]
        );
    }

    #[test]
    fn rocsparse_near_verdicts_count_only_with_their_comparisons_on_stderr() {
        let verdict = "clients/common/rocsparse_check.cpp:290: Failure\nValue of: passed\n  Actual: false\nExpected: true\n\n";
        assert!(is_rocsparse_near_verdict(verdict));
        assert!(!is_rocsparse_near_verdict(&verdict.replace("passed", "ok")));
        assert!(!is_rocsparse_near_verdict(
            "clients/other.cpp:1: Failure\nValue of: passed\n  Actual: false\nExpected: true\n"
        ));
        let stderr = "ASSERT_NEAR(-7, 7) failed: 14 exceeds permissive range [0.00700000021607,0.0280000008643 ]\n\
Test failed with tol = 0.0010000000475. Relaxing the tolerance to at least 2 would make the test pass.\n\
ASSERT_NEAR((1,2), (0,0)) failed: 2.2 exceeds permissive range [0.001,0.004 ]\n\
ASSERT_NEAR(hipErrorInvalidValue, 7) failed: 14 exceeds permissive range [0.007,0.028 ]\n";
        assert_eq!(rocsparse_near_failures(stderr), 2);
    }

    #[test]
    fn near_and_binary_comparisons_are_numerical_and_errors_in_them_are_not() {
        assert!(is_numerical(
            "t.cpp:1: Failure\nThe difference between a and b is 2, which exceeds tol, where\na evaluates to 2,\n"
        ));
        assert!(is_numerical(
            "t.cpp:1: Failure\nExpected: (err) <= (tol), actual: 0.5 vs 0.001\n"
        ));
        assert!(!is_numerical(
            "t.cpp:1: Failure\nExpected: (status) == (0), actual: rocblas_status_invalid_size vs 0\n"
        ));
        assert!(!is_numerical(
            "unknown file: Failure\nC++ exception with description \"boom\" thrown in the test body.\n"
        ));
        assert!(!is_numerical(
            "t.cpp:1: Failure\nValue of: ok\n  Actual: false\nExpected: true\n"
        ));
    }
}
