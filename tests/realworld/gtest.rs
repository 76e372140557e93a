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
    pub skipped: usize,
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

/// Parse gtest's default (colourless) output.
pub fn parse(out: &str) -> Report {
    let mut r = Report::default();
    let mut current: Option<(String, Vec<String>)> = None;
    let mut block: Option<String> = None;
    for line in out.lines() {
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
            if current.as_ref().is_some_and(|(n, _)| *n == test_name(rest)) {
                r.skipped += 1;
                current = None;
                block = None;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("[  FAILED  ] ") {
            if let Some((name, mut blocks)) = current.take() {
                if name == test_name(rest) {
                    if let Some(b) = block.take() {
                        blocks.push(b);
                    }
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
        if is_failure_head(line) {
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
    if let Some(inner) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        return inner.split(',').all(is_number);
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
