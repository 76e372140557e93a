//! Kernel names of the real ROCm code objects on this machine against
//! llvm-cxxfilt: every name llvm-cxxfilt demangles must be demangled by
//! `softgpu_hsa::code_object::kernel_name` (what `softgpu objects`, the
//! reports and `softgpu diff` show), and the two texts must be the same up to
//! the documented differences of presentation (docs/CODE_OBJECTS.md, "Kernel
//! names").
//!
//! The corpus: every kernel symbol (`.kd`) that `softgpu objects --json`
//! lists in the ROCm libraries, Tensile code objects and packaged test
//! programs of the Debian sid chroot (HIP 6.4.3, clang 21: judged by
//! llvm-cxxfilt-21 inside the chroot) and in the host's bookworm rocRAND and
//! rocSPARSE (HIP 5.2, clang 15: judged by llvm-cxxfilt-15). Extracting it
//! reads about 15 GB; the symbol lists are cached per file (path, size,
//! modification time) under the target directory, so only the first run
//! pays for that (4.3 minutes measured on this project's machine with much
//! of it in the page cache; later runs take about 10 seconds).
//!
//! A missing chroot, package or tool is a failure that says what to install,
//! never a skip.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use regex::Regex;
use serde::Deserialize;
use softgpu_hsa::code_object::{kernel_name, rewrite_for_cpp_demangle};

mod common;
use common::{cli, repo};

const CHROOT_HINT: &str = "run ./scripts/sid-chroot (scripts/test does it)";
/// Bumped when the cache's format or the extraction changes.
const CACHE_VERSION: &str = "demangle-corpus v1";

fn chroot_root() -> PathBuf {
    std::env::var_os("SOFTGPU_SID_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/sid"))
}

/// Where the code objects come from, and which llvm-cxxfilt judges them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Side {
    /// The host: bookworm, HIP 5.2.3, llvm-cxxfilt-15.
    Bookworm,
    /// The sid chroot: HIP 6.4.3, llvm-cxxfilt-21.
    Sid,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Side::Bookworm => "bookworm",
            Side::Sid => "sid",
        }
    }

    fn root(self) -> PathBuf {
        match self {
            Side::Bookworm => PathBuf::from("/"),
            Side::Sid => chroot_root(),
        }
    }
}

/// A group of files reported together (a library, a test package) and the
/// Debian package that provides it, for the hint when it is missing.
struct Required {
    side: Side,
    group: &'static str,
    package: &'static str,
}

/// What must be in the corpus, so that it can never pass by being empty.
/// (rocSOLVER's and MIOpen's test programs, rocFFT's library and hipBLASLt's
/// shared library carry no device code: their kernels are in the libraries,
/// compiled at run time, or in separate code object files.)
const REQUIRED: &[Required] = &[
    Required {
        side: Side::Sid,
        group: "librocrand.so",
        package: "librocrand1",
    },
    Required {
        side: Side::Sid,
        group: "librocrand1-tests",
        package: "librocrand1-tests",
    },
    Required {
        side: Side::Sid,
        group: "libhiprand1-tests",
        package: "libhiprand1-tests",
    },
    Required {
        side: Side::Sid,
        group: "librocsolver.so",
        package: "librocsolver0",
    },
    Required {
        side: Side::Sid,
        group: "librocprim-tests",
        package: "librocprim-tests",
    },
    Required {
        side: Side::Sid,
        group: "libhipcub-tests",
        package: "libhipcub-tests",
    },
    Required {
        side: Side::Sid,
        group: "librocthrust-tests",
        package: "librocthrust-tests",
    },
    Required {
        side: Side::Sid,
        group: "librocblas.so",
        package: "librocblas4",
    },
    Required {
        side: Side::Sid,
        group: "librocblas4-tests",
        package: "librocblas4-tests",
    },
    Required {
        side: Side::Sid,
        group: "rocblas",
        package: "librocblas4",
    },
    Required {
        side: Side::Sid,
        group: "librocfft0-tests",
        package: "librocfft0-tests",
    },
    Required {
        side: Side::Sid,
        group: "hipblaslt",
        package: "libhipblaslt1",
    },
    Required {
        side: Side::Sid,
        group: "librocsparse.so",
        package: "librocsparse1",
    },
    Required {
        side: Side::Bookworm,
        group: "librocrand.so",
        package: "librocrand1",
    },
    Required {
        side: Side::Bookworm,
        group: "librocsparse.so",
        package: "librocsparse0",
    },
];

/// The group of a file: the package directory under /usr/libexec/rocm, the
/// subdirectory of the library directory (Tensile code objects), or the
/// library's name without its version.
fn group_of(rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() >= 4 && parts[0] == "usr" && parts[1] == "libexec" && parts[2] == "rocm" {
        return parts[3].clone();
    }
    if parts.len() >= 5 && parts[0] == "usr" && parts[1] == "lib" {
        return parts[3].clone();
    }
    let name = parts.last().cloned().unwrap_or_default();
    match name.find(".so") {
        Some(i) => name[..i + 3].to_owned(),
        None => name,
    }
}

/// Whether a file may hold device code: a host ELF, a clang offload bundle or
/// a compressed one (`softgpu objects` reads those three).
fn may_hold_device_code(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 24];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    let head = &head[..n];
    head.starts_with(b"\x7fELF")
        || head.starts_with(b"__CLANG_OFFLOAD_BUNDLE__")
        || head.starts_with(b"CCOB")
}

/// The files of a side whose kernels are in the corpus.
fn corpus_files(side: Side) -> Vec<PathBuf> {
    let root = side.root();
    let lib = root.join("usr/lib/x86_64-linux-gnu");
    let mut files = Vec::new();
    let rocm_name = |n: &str| {
        let n = n.to_ascii_lowercase();
        ["libroc", "libhip", "libmiopen", "libamdhip", "roc", "hip"]
            .iter()
            .any(|p| n.starts_with(p))
    };
    // The library directory: ROCm libraries, and their code object
    // directories (rocblas/, hipblaslt/, rocfft/).
    if let Ok(rd) = std::fs::read_dir(&lib) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if !rocm_name(&name) {
                continue;
            }
            if ft.is_file() && name.contains(".so") {
                files.push(e.path());
            } else if ft.is_dir() {
                walk(&e.path(), &mut files);
            }
        }
    }
    walk(&root.join("usr/libexec/rocm"), &mut files);
    files.retain(|p| may_hold_device_code(p));
    files.sort();
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(&e.path(), out);
        } else if ft.is_file() {
            out.push(e.path());
        }
    }
}

#[derive(Deserialize)]
struct Objects {
    code_objects: Vec<CodeObject>,
}

#[derive(Deserialize)]
struct CodeObject {
    kernels: Vec<Kernel>,
}

#[derive(Deserialize)]
struct Kernel {
    symbol: String,
}

fn cache_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("demangle-corpus");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The distinct kernel symbols of a file (without `.kd`), from
/// `softgpu objects --json`, cached.
fn kernel_symbols(path: &Path) -> Vec<String> {
    let meta = std::fs::metadata(path).unwrap();
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let key = format!(
        "{CACHE_VERSION}\t{}\t{}\t{mtime}",
        path.display(),
        meta.len()
    );
    let cache = cache_dir().join(format!("{:016x}.txt", fnv1a(key.as_bytes())));
    if let Ok(text) = std::fs::read_to_string(&cache) {
        let mut lines = text.lines();
        if lines.next() == Some(key.as_str()) {
            return lines.map(str::to_owned).collect();
        }
    }
    let out = Command::new(cli())
        .args(["objects", "--json"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let symbols: BTreeSet<String> = match out.status.code() {
        Some(0) => {
            let j: Objects = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("softgpu objects --json {}: {e}", path.display()));
            j.code_objects
                .into_iter()
                .flat_map(|c| c.kernels)
                .map(|k| k.symbol.strip_suffix(".kd").unwrap_or(&k.symbol).to_owned())
                .collect()
        }
        // A host program or library without device code.
        Some(2) if stderr.contains("has no .hip_fatbin section") => BTreeSet::new(),
        _ => panic!(
            "softgpu objects --json {} failed ({}): {stderr}",
            path.display(),
            out.status
        ),
    };
    let mut text = key.clone();
    for s in &symbols {
        assert!(
            !s.contains(char::is_whitespace),
            "{}: a kernel symbol with white space: {s:?}",
            path.display()
        );
        text.push('\n');
        text.push_str(s);
    }
    text.push('\n');
    let tmp = cache.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, &cache).unwrap();
    symbols.into_iter().collect()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// llvm-cxxfilt's output for each name (the name itself when it does not
/// demangle it).
fn llvm_cxxfilt(side: Side, names: &[String]) -> Vec<String> {
    let input = names.join("\n") + "\n";
    let out = match side {
        Side::Bookworm => {
            let tool = "/usr/bin/llvm-cxxfilt-15";
            assert!(
                Path::new(tool).exists(),
                "{tool} is missing: install Debian's llvm-15 (./scripts/setup does)"
            );
            run_with_input(Command::new(tool), &input)
        }
        Side::Sid => {
            let root = chroot_root();
            assert!(
                root.join(".softgpu-ready").exists(),
                "the Debian sid chroot is not ready at {}: {CHROOT_HINT}",
                root.display()
            );
            assert!(
                root.join("usr/bin/llvm-cxxfilt-21").exists(),
                "llvm-cxxfilt-21 is missing in the sid chroot: install Debian's llvm-21 there \
                 (./scripts/sid-chroot --run -- apt-get install -y llvm-21); {CHROOT_HINT}"
            );
            let dir = format!("softgpu/demangle_corpus-{}", std::process::id());
            let host_dir = root.join(&dir);
            std::fs::create_dir_all(&host_dir).unwrap();
            std::fs::write(host_dir.join("names.txt"), &input).unwrap();
            let mut cmd = Command::new(repo().join("scripts/sid-chroot"));
            cmd.args(["--run", "--", "sh", "-c"])
                .arg(format!("exec llvm-cxxfilt-21 < /{dir}/names.txt"))
                .env("SOFTGPU_SID_CHROOT", &root);
            let out = run_with_input(cmd, "");
            let _ = std::fs::remove_dir_all(&host_dir);
            out
        }
    };
    let lines: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!(
        lines.len(),
        names.len(),
        "llvm-cxxfilt printed one line per name"
    );
    lines
}

fn run_with_input(mut cmd: Command, input: &str) -> String {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// One distinct mangled name of a side: llvm-cxxfilt's text and ours.
struct Name {
    mangled: String,
    llvm: String,
    ours: String,
    /// Whether we rewrite it for cpp_demangle (template parameter
    /// declarations, references cpp_demangle would misread).
    rewritten: bool,
}

impl Name {
    fn llvm_demangles(&self) -> bool {
        self.llvm != self.mangled
    }

    fn we_demangle(&self) -> bool {
        self.ours != self.mangled
    }
}

struct Corpus {
    /// (side, group) → distinct names of that group.
    groups: BTreeMap<(Side, String), BTreeSet<String>>,
    names: BTreeMap<(Side, String), Name>,
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let chroot = chroot_root();
        assert!(
            chroot.join(".softgpu-ready").exists(),
            "the Debian sid chroot is not ready at {}: {CHROOT_HINT}",
            chroot.display()
        );
        let mut groups: BTreeMap<(Side, String), BTreeSet<String>> = BTreeMap::new();
        for side in [Side::Bookworm, Side::Sid] {
            let root = side.root();
            let files = corpus_files(side);
            // Two at a time: the work is mostly reading.
            let work = std::sync::Mutex::new(files.iter());
            let found = std::sync::Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        loop {
                            let Some(f) = work.lock().unwrap().next() else { break };
                            let syms = kernel_symbols(f);
                            found.lock().unwrap().push((f.clone(), syms));
                        }
                    });
                }
            });
            for (f, syms) in found.into_inner().unwrap() {
                let rel = f.strip_prefix(&root).unwrap_or(&f).to_owned();
                groups
                    .entry((side, group_of(&rel)))
                    .or_default()
                    .extend(syms);
            }
        }
        for r in REQUIRED {
            let n = groups.get(&(r.side, r.group.to_owned())).map_or(0, BTreeSet::len);
            let how = match r.side {
                Side::Sid => format!(
                    "install it in the sid chroot (./scripts/sid-chroot --run -- apt-get install -y {}); \
                     {CHROOT_HINT}",
                    r.package
                ),
                Side::Bookworm => format!("install it on the host (apt-get install -y {})", r.package),
            };
            assert!(
                n > 0,
                "no kernels of {} ({}) found: the corpus needs Debian's {}: {how}",
                r.group,
                r.side.label(),
                r.package
            );
        }
        let mut names = BTreeMap::new();
        for side in [Side::Bookworm, Side::Sid] {
            let distinct: Vec<String> = groups
                .iter()
                .filter(|((s, _), _)| *s == side)
                .flat_map(|(_, v)| v.iter().cloned())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .filter(|n| n.starts_with("_Z"))
                .collect();
            let llvm = llvm_cxxfilt(side, &distinct);
            for (mangled, llvm) in distinct.into_iter().zip(llvm) {
                let ours = kernel_name(&mangled);
                let rewritten = rewrite_for_cpp_demangle(&mangled).is_some();
                names.insert((side, mangled.clone()), Name { mangled, llvm, ours, rewritten });
            }
        }
        Corpus { groups, names }
    })
}

/// How our text relates to llvm-cxxfilt's.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Agreement {
    /// The same text.
    Same,
    /// The same after mapping cpp_demangle's conventions to LLVM's (see
    /// [`presentation`]).
    Presentation,
    /// The same after that and removing parentheses and spaces: expressions
    /// in template arguments, which cpp_demangle prints fully parenthesised
    /// (`(1u)==(1)`, `!(x)`) and LLVM by precedence (`1u == 1`, `!x`).
    ExpressionForm,
    /// Anything else.
    Different,
}

/// cpp_demangle's text in LLVM's conventions. Each rule is a difference of
/// notation only (docs/CODE_OBJECTS.md):
/// - `> >` for `>>` (C++03 spacing);
/// - integer literals as casts, `(unsigned int)256` for `256u` (and `l`,
///   `ul`, `ll`, `ull`), where LLVM uses the literal suffix;
/// - closure types `{lambda(int)#1}`, `#2`, ... for `'lambda'(int)`,
///   `'lambda0'(int)`, ...;
/// - vector types `float __vector(4)` for `float vector[4]`;
/// - an empty pack printed as an empty list item (`f<a, >`, `(x, )`);
/// - a generic lambda's invented parameters `auto:1` for `auto`.
fn presentation(ours: &str) -> String {
    static RULES: OnceLock<(Regex, Regex, Regex, Regex)> = OnceLock::new();
    let (literal, lambda, vector, auto) = RULES.get_or_init(|| {
        (
            Regex::new(
                r"\((unsigned int|long|unsigned long|long long|unsigned long long)\)(-?[0-9]+)",
            )
            .unwrap(),
            Regex::new(r"\{lambda\(").unwrap(),
            Regex::new(r" __vector\(([0-9]+)\)").unwrap(),
            Regex::new(r"\bauto:[0-9]+").unwrap(),
        )
    });
    let mut s = ours.to_owned();
    while s.contains("> >") {
        s = s.replace("> >", ">>");
    }
    s = literal
        .replace_all(&s, |c: &regex::Captures| {
            let suffix = match &c[1] {
                "unsigned int" => "u",
                "long" => "l",
                "unsigned long" => "ul",
                "long long" => "ll",
                _ => "ull",
            };
            format!("{}{suffix}", &c[2])
        })
        .into_owned();
    // {lambda(ARGS)#N}: ARGS may hold parentheses, and lambdas (a later
    // round).
    loop {
        let next = lambdas(lambda, &s);
        if next == s {
            break;
        }
        s = next;
    }
    let s = vector.replace_all(&s, " vector[$1]");
    let s = s.replace(", >", ">").replace(", )", ")");
    auto.replace_all(&s, "auto").into_owned()
}

/// One round of `{lambda(ARGS)#N}` → `'lambda...'(ARGS)`.
fn lambdas(lambda: &Regex, s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    while let Some(m) = lambda.find_at(s, at) {
        out.push_str(&s[at..m.start()]);
        let mut depth = 1;
        let mut j = m.end();
        for (k, c) in s[m.end()..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                j = m.end() + k;
                break;
            }
        }
        let args = &s[m.end()..j];
        let rest = &s[j + 1..];
        let digits: String = rest
            .strip_prefix('#')
            .unwrap_or("")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        match digits.parse::<u32>() {
            Ok(n) if depth == 0 && rest[1 + digits.len()..].starts_with('}') => {
                let k = if n == 1 {
                    String::new()
                } else {
                    (n - 2).to_string()
                };
                out.push_str(&format!("'lambda{k}'({args})"));
                at = j + 1 + 1 + digits.len() + 1;
            }
            _ => {
                out.push_str(&s[m.start()..m.end()]);
                at = m.end();
            }
        }
    }
    out.push_str(&s[at..]);
    out
}

fn agreement(n: &Name) -> Agreement {
    if n.ours == n.llvm {
        return Agreement::Same;
    }
    let p = presentation(&n.ours);
    if p == n.llvm {
        return Agreement::Presentation;
    }
    let bare = |t: &str| {
        t.chars()
            .filter(|c| !matches!(c, '(' | ')' | ' '))
            .collect::<String>()
    };
    if bare(&p) == bare(&n.llvm) {
        return Agreement::ExpressionForm;
    }
    Agreement::Different
}

#[test]
fn every_kernel_name_llvm_cxxfilt_demangles_is_demangled() {
    let c = corpus();
    let mut report = String::from("group: kernels, llvm-cxxfilt demangles, we demangle\n");
    let mut missing = Vec::new();
    for ((side, group), syms) in &c.groups {
        let names: Vec<&Name> = syms
            .iter()
            .filter_map(|s| c.names.get(&(*side, s.clone())))
            .collect();
        let llvm = names.iter().filter(|n| n.llvm_demangles()).count();
        let ours = names
            .iter()
            .filter(|n| n.llvm_demangles() && n.we_demangle())
            .count();
        report += &format!(
            "  {} {group}: {}, {llvm}, {ours}\n",
            side.label(),
            syms.len()
        );
    }
    for ((side, _), n) in &c.names {
        if n.llvm_demangles() && !n.we_demangle() {
            missing.push(format!(
                "{} {}\n    llvm-cxxfilt: {}",
                side.label(),
                n.mangled,
                n.llvm
            ));
        }
    }
    eprintln!("{report}");
    assert!(
        missing.is_empty(),
        "{} names llvm-cxxfilt demangles stay mangled:\n{}",
        missing.len(),
        missing
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    let total = c.names.values().filter(|n| n.llvm_demangles()).count();
    assert!(
        total > 60_000,
        "the corpus is suspiciously small: {total} names"
    );
}

#[test]
fn demangled_kernel_names_read_as_llvm_cxxfilt_prints_them() {
    let c = corpus();
    let mut counts: BTreeMap<(Agreement, bool), usize> = BTreeMap::new();
    let mut different = Vec::new();
    for ((side, _), n) in &c.names {
        if !(n.llvm_demangles() && n.we_demangle()) {
            continue;
        }
        let a = agreement(n);
        *counts.entry((a, n.rewritten)).or_default() += 1;
        if a == Agreement::Different {
            different.push(format!(
                "{} {}\n    llvm-cxxfilt: {}\n    ours:         {}",
                side.label(),
                n.mangled,
                n.llvm,
                presentation(&n.ours)
            ));
        }
    }
    eprintln!("agreement (class, rewritten) → names: {counts:?}");
    assert!(
        different.is_empty(),
        "{} names read differently from llvm-cxxfilt beyond presentation:\n{}",
        different.len(),
        different
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_presentation_rules_map_cpp_demangle_notation_to_llvm_notation() {
    assert_eq!(
        presentation("f<(unsigned int)256, (long)-1, (unsigned long long)2>(a<b<c> >)"),
        "f<256u, -1l, 2ull>(a<b<c>>)"
    );
    assert_eq!(
        presentation("g()::{lambda(int (*)(int))#1}, g()::{lambda(h()::{lambda()#1})#3}"),
        "g()::'lambda'(int (*)(int)), g()::'lambda1'(h()::'lambda'())"
    );
    assert_eq!(
        presentation("h<a, >(float __vector(4), )"),
        "h<a>(float vector[4])"
    );
    assert_eq!(
        presentation("{lambda(auto:1 const&)#1}"),
        "'lambda'(auto const&)"
    );
    // Anything else is left alone.
    assert_eq!(
        presentation("(char)84, {lambda(x)#1"),
        "(char)84, {lambda(x)#1"
    );
}
