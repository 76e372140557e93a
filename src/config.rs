//! The `SOFTGPU_*` environment, parsed once at `hsa_init`.
//!
//! A bad value never stops the host program: it is reported once on stderr,
//! naming the variable and the accepted values, and the default is used.
//! Parsing is pure (it takes a lookup function), so it is unit-tested without
//! touching the process environment.

use std::path::PathBuf;

/// `SOFTGPU_MODE`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Auto,
    Virtual,
    Intercept,
    Observe,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Virtual => "virtual",
            Mode::Intercept => "intercept",
            Mode::Observe => "observe",
        }
    }
}

/// `SOFTGPU_CAPTURE`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CaptureSetting {
    Off,
    /// Path template, taken as the environment's bytes (a name need not be
    /// UTF-8); `%p` expands to the process id.
    Path(std::ffi::OsString),
}

/// `SOFTGPU_COMPLETION` (+ `SOFTGPU_COMPLETION_DELAY_US`): who decrements
/// completion signals.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Completion {
    /// The processor, on the thread that rang the doorbell (default).
    Inline,
    /// A separate completion thread, in order, after `delay_us` per packet.
    Thread { delay_us: u64 },
}

/// Log level filter from `SOFTGPU_LOG`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// The whole configuration.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Config {
    pub capture: CaptureSetting,
    pub mode: Mode,
    /// Canonical target ids, one virtual GPU agent each.
    pub targets: Vec<&'static str>,
    pub log: LogLevel,
    pub log_file: Option<PathBuf>,
    pub summary: bool,
    pub completion: Completion,
    /// `SOFTGPU_KERNARGS` (0/1, default 1): capture each dispatch's kernel
    /// arguments (its kernarg bytes, decoded and checked offline).
    pub kernargs: bool,
}

/// Default capture template.
pub const DEFAULT_CAPTURE: &str = "softgpu-%p.sgcap";

impl Default for Config {
    fn default() -> Self {
        Config {
            capture: CaptureSetting::Path(DEFAULT_CAPTURE.into()),
            mode: Mode::Auto,
            targets: vec![crate::isa::DEFAULT_TARGET],
            log: LogLevel::Warn,
            log_file: None,
            summary: true,
            completion: Completion::Inline,
            kernargs: true,
        }
    }
}

/// Every variable [`Config::from_lookup`] reads.
pub const VARIABLES: &[&str] = &[
    "SOFTGPU_CAPTURE",
    "SOFTGPU_MODE",
    "SOFTGPU_TARGET",
    "SOFTGPU_LOG",
    "SOFTGPU_LOG_FILE",
    "SOFTGPU_SUMMARY",
    "SOFTGPU_COMPLETION_DELAY_US",
    "SOFTGPU_COMPLETION",
    "SOFTGPU_KERNARGS",
];

impl Config {
    /// Parse from the process environment as the OS gives it: a value that is
    /// not UTF-8 is a bad value (reported by name, the default used), never
    /// silently taken as unset.
    pub fn from_os_lookup(
        get: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> (Config, Vec<String>) {
        let mut values = Vec::new();
        let mut not_utf8 = Vec::new();
        // A file name is bytes: a capture path that is not UTF-8 is honoured
        // as it is (`softgpu inspect` opens such a name the same way).
        let mut capture_bytes = None;
        for &var in VARIABLES {
            match get(var).map(std::ffi::OsString::into_string) {
                Some(Err(raw)) if var == "SOFTGPU_CAPTURE" && !raw.is_empty() => {
                    capture_bytes = Some(raw);
                }
                Some(Ok(v)) => values.push((var, v)),
                Some(Err(raw)) => not_utf8.push(format!(
                    "softgpu: ignoring {var}: its value is not UTF-8 ({}); using the default",
                    shown(&raw.to_string_lossy())
                )),
                None => {}
            }
        }
        let (mut cfg, mut bad) = Config::from_lookup(|k| {
            values
                .iter()
                .find(|(var, _)| *var == k)
                .map(|(_, v)| v.clone())
        });
        if let Some(raw) = capture_bytes {
            cfg.capture = CaptureSetting::Path(raw);
        }
        bad.extend(not_utf8);
        (cfg, bad)
    }

    /// Parse from a lookup function. Returns the configuration and one message
    /// per bad value (to be printed once on stderr by the caller).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut cfg = Config::default();
        let mut bad = Vec::new();

        if let Some(v) = get("SOFTGPU_CAPTURE") {
            if v == "off" {
                cfg.capture = CaptureSetting::Off;
            } else if v.is_empty() {
                bad.push(bad_value(
                    "SOFTGPU_CAPTURE",
                    &v,
                    "a file path (with optional %p) or `off`",
                    DEFAULT_CAPTURE,
                ));
            } else {
                cfg.capture = CaptureSetting::Path(v.into());
            }
        }
        if let Some(v) = get("SOFTGPU_MODE") {
            match v.as_str() {
                "auto" => cfg.mode = Mode::Auto,
                "virtual" => cfg.mode = Mode::Virtual,
                "intercept" => cfg.mode = Mode::Intercept,
                "observe" => cfg.mode = Mode::Observe,
                _ => bad.push(bad_value(
                    "SOFTGPU_MODE",
                    &v,
                    "auto, virtual, intercept, observe",
                    "auto",
                )),
            }
        }
        if let Some(v) = get("SOFTGPU_TARGET") {
            let mut targets = Vec::new();
            let mut ok = !v.trim().is_empty();
            for name in v.split(',').map(str::trim) {
                match crate::isa::find(name) {
                    Ok(d) => targets.push(d.id),
                    Err(_) => ok = false,
                }
            }
            if ok {
                cfg.targets = targets;
            } else {
                let accepted = crate::isa::supported_names().join(", ");
                bad.push(bad_value(
                    "SOFTGPU_TARGET",
                    &v,
                    &format!("comma-separated target ids or aliases: {accepted}"),
                    crate::isa::DEFAULT_TARGET,
                ));
            }
        }
        if let Some(v) = get("SOFTGPU_LOG") {
            match v.as_str() {
                "error" => cfg.log = LogLevel::Error,
                "warn" => cfg.log = LogLevel::Warn,
                "info" => cfg.log = LogLevel::Info,
                "debug" => cfg.log = LogLevel::Debug,
                "trace" => cfg.log = LogLevel::Trace,
                _ => bad.push(bad_value(
                    "SOFTGPU_LOG",
                    &v,
                    "error, warn, info, debug, trace",
                    "warn",
                )),
            }
        }
        if let Some(v) = get("SOFTGPU_LOG_FILE") {
            if v.is_empty() {
                bad.push(bad_value("SOFTGPU_LOG_FILE", &v, "a file path", "stderr"));
            } else {
                cfg.log_file = Some(PathBuf::from(v));
            }
        }
        if let Some(v) = get("SOFTGPU_KERNARGS") {
            match v.as_str() {
                "0" => cfg.kernargs = false,
                "1" => cfg.kernargs = true,
                _ => bad.push(bad_value("SOFTGPU_KERNARGS", &v, "0, 1", "1")),
            }
        }
        if let Some(v) = get("SOFTGPU_SUMMARY") {
            match v.as_str() {
                "0" => cfg.summary = false,
                "1" => cfg.summary = true,
                _ => bad.push(bad_value("SOFTGPU_SUMMARY", &v, "0, 1", "1")),
            }
        }
        let delay_us = match get("SOFTGPU_COMPLETION_DELAY_US") {
            None => 0,
            Some(v) => match v.parse::<u64>() {
                Ok(n) if n <= 10_000_000 => n,
                _ => {
                    bad.push(bad_value(
                        "SOFTGPU_COMPLETION_DELAY_US",
                        &v,
                        "microseconds, 0 to 10000000",
                        "0",
                    ));
                    0
                }
            },
        };
        if let Some(v) = get("SOFTGPU_COMPLETION") {
            match v.as_str() {
                "inline" => cfg.completion = Completion::Inline,
                "thread" => cfg.completion = Completion::Thread { delay_us },
                _ => bad.push(bad_value(
                    "SOFTGPU_COMPLETION",
                    &v,
                    "inline, thread",
                    "inline",
                )),
            }
        }
        (cfg, bad)
    }

    /// The capture path for process `pid`, or `None` when capture is off.
    pub fn capture_path(&self, pid: u32) -> Option<PathBuf> {
        match &self.capture {
            CaptureSetting::Off => None,
            CaptureSetting::Path(t) => Some(PathBuf::from(expand_pid_os(t, pid))),
        }
    }
}

/// Expand every `%p` in `template` to `pid`.
pub fn expand_pid(template: &str, pid: u32) -> String {
    template.replace("%p", &pid.to_string())
}

/// [`expand_pid`] on a name's bytes, which need not be UTF-8.
pub fn expand_pid_os(template: &std::ffi::OsStr, pid: u32) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = template.as_bytes();
    let pid = pid.to_string();
    let mut out = Vec::with_capacity(bytes.len() + pid.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"%p") {
            out.extend_from_slice(pid.as_bytes());
            i += 2;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    std::ffi::OsString::from_vec(out)
}

fn bad_value(var: &str, value: &str, accepted: &str, default: &str) -> String {
    format!(
        "softgpu: ignoring {var}={}: accepted values are {accepted}; using the default ({default})",
        shown(value)
    )
}

/// Characters of a bad value echoed in a message; the rest is elided.
const SHOWN_CHARS: usize = 64;

/// A value as a message quotes it: escaped, and cut after [`SHOWN_CHARS`]
/// characters with the full length said (a 100 kB value must not become a
/// 100 kB log line).
fn shown(value: &str) -> String {
    let n = value.chars().count();
    if n <= SHOWN_CHARS {
        format!("{value:?}")
    } else {
        let head: String = value.chars().take(SHOWN_CHARS).collect();
        format!("{head:?}... ({n} characters, cut)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> (Config, Vec<String>) {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| pairs.iter().find(|(pk, _)| pk == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn empty_environment_gives_documented_defaults() {
        let (cfg, bad) = parse(&[]);
        assert!(bad.is_empty());
        assert_eq!(cfg, Config::default());
        assert_eq!(
            cfg.capture_path(42).unwrap(),
            PathBuf::from("softgpu-42.sgcap")
        );
        assert_eq!(cfg.targets, vec!["gfx90a"]);
    }

    #[test]
    fn capture_off_disables_capture() {
        let (cfg, _) = parse(&[("SOFTGPU_CAPTURE", "off")]);
        assert_eq!(cfg.capture_path(1), None);
    }

    #[test]
    fn percent_p_expands_to_the_pid_everywhere() {
        let (cfg, _) = parse(&[("SOFTGPU_CAPTURE", "/tmp/a-%p/b-%p.sgcap")]);
        assert_eq!(
            cfg.capture_path(7).unwrap(),
            PathBuf::from("/tmp/a-7/b-7.sgcap")
        );
    }

    #[test]
    fn bad_values_are_reported_naming_the_variable_and_defaults_kept() {
        let (cfg, bad) = parse(&[
            ("SOFTGPU_MODE", "turbo"),
            ("SOFTGPU_LOG", "loud"),
            ("SOFTGPU_SUMMARY", "yes"),
            ("SOFTGPU_TARGET", "gfx9999"),
        ]);
        assert_eq!(bad.len(), 4);
        assert!(
            bad[0].contains("SOFTGPU_MODE") && bad[0].contains("auto, virtual, intercept, observe")
        );
        assert!(bad[1].contains("SOFTGPU_TARGET") && bad[1].contains("gfx90a"));
        assert!(bad[2].contains("SOFTGPU_LOG"));
        assert!(bad[3].contains("SOFTGPU_SUMMARY"));
        assert_eq!(cfg.mode, Mode::Auto);
        assert_eq!(cfg.log, LogLevel::Warn);
        assert!(cfg.summary);
        assert_eq!(cfg.targets, vec!["gfx90a"]);
    }

    #[test]
    fn a_capture_path_that_is_not_utf8_is_honoured_byte_for_byte() {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let (cfg, bad) = Config::from_os_lookup(|k| {
            (k == "SOFTGPU_CAPTURE")
                .then(|| std::ffi::OsString::from_vec(b"/tmp/\xff\xfe-%p.sgcap".to_vec()))
        });
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(
            cfg.capture_path(42).unwrap().as_os_str().as_bytes(),
            b"/tmp/\xff\xfe-42.sgcap"
        );
    }

    #[test]
    fn a_value_that_is_not_utf8_is_reported_by_name_and_the_default_used() {
        use std::os::unix::ffi::OsStringExt;
        let (cfg, bad) = Config::from_os_lookup(|k| {
            (k == "SOFTGPU_TARGET").then(|| std::ffi::OsString::from_vec(b"gfx\xff".to_vec()))
        });
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(
            bad[0].contains("SOFTGPU_TARGET") && bad[0].contains("not UTF-8"),
            "{bad:?}"
        );
        assert_eq!(cfg.targets, vec!["gfx90a"]);
        // UTF-8 values pass through as before.
        let (cfg, bad) =
            Config::from_os_lookup(|k| (k == "SOFTGPU_MODE").then(|| "virtual".into()));
        assert!(bad.is_empty());
        assert_eq!(cfg.mode, Mode::Virtual);
    }

    #[test]
    fn a_long_bad_value_is_echoed_cut_short() {
        let long = "x".repeat(100_000);
        let (_, bad) = parse(&[("SOFTGPU_MODE", &long)]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].len() < 300, "{} bytes", bad[0].len());
        assert!(bad[0].contains("100000 characters"), "{}", bad[0]);
    }

    #[test]
    fn completion_thread_mode_takes_an_optional_delay() {
        let (cfg, bad) = parse(&[
            ("SOFTGPU_COMPLETION", "thread"),
            ("SOFTGPU_COMPLETION_DELAY_US", "250"),
        ]);
        assert!(bad.is_empty());
        assert_eq!(cfg.completion, Completion::Thread { delay_us: 250 });
        let (cfg, bad) = parse(&[
            ("SOFTGPU_COMPLETION", "later"),
            ("SOFTGPU_COMPLETION_DELAY_US", "soon"),
        ]);
        assert_eq!(bad.len(), 2);
        assert_eq!(cfg.completion, Completion::Inline);
    }

    #[test]
    fn targets_accept_aliases_and_lists() {
        let (cfg, bad) = parse(&[("SOFTGPU_TARGET", "mi210, gfx90a")]);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(cfg.targets, vec!["gfx90a", "gfx90a"]);
    }

    #[cfg(all(feature = "gfx9", feature = "gfx94"))]
    #[test]
    fn each_listed_target_is_one_agent_in_order() {
        let (cfg, bad) = parse(&[("SOFTGPU_TARGET", "gfx90a,mi300x")]);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(cfg.targets, vec!["gfx90a", "gfx942"]);
    }
}
