//! The generator of `src/interpose/signatures.rs`: the C signature of every
//! entry point in the table, read from the pinned headers.
//!
//! The headers (`/usr/include/hsa`, pinned by `hsa-headers/PINNED` and checked
//! by `tests/header_pin.rs`) are preprocessed by the C compiler (`cc -E -P`,
//! so every `#if` is decided as for the shim's own target), then a small
//! declaration parser reads the typedefs and the `hsa_*` prototypes. Functions
//! ROCr 5.2.3 does not declare come from ROCr 6.4.3's headers in the sid
//! chroot (`/var/cache/softgpu/sid/usr/include/hsa`), and those 6.4.3 does not
//! declare from ROCr 7.2.4's, in the ROCm 7 chroot
//! (`/var/cache/softgpu/rocm7/usr/include/hsa`, pinned by
//! `hsa-headers/PINNED-rocm7`). A function declared by more than one set must
//! have the same Rust signature in each (an ABI change between releases
//! fails the test).
//!
//! Each C type becomes the Rust type the exports use at the boundary:
//! `hsa_signal_t` and `hsa_agent_t` become `HsaSignal` and `HsaAgent`, every
//! other one-`uint64_t` handle struct `u64`, enums `u32`, pointers typed by
//! their pointee (`c_void` for structs the crate does not mirror), function
//! pointers `Option<unsafe extern "C" fn(..)>`. What an entry returns when it
//! fails without a status (a missing real function, a fail-closed entry) is
//! decided here, per C return type, once (see `error_value`).
//!
//! The test regenerates the file and compares; `SOFTGPU_BLESS=1` rewrites it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod common;
use common::repo;

const SETUP_HINT: &str = "run ./scripts/setup (installs gcc and the pinned libhsa-runtime-dev), \
     ./scripts/sid-chroot and ./scripts/sid-chroot --rocm7 (scripts/test runs all three)";
const SID_INCLUDE: &str = "/var/cache/softgpu/sid/usr/include";
const ROCM7_INCLUDE: &str = "/var/cache/softgpu/rocm7/usr/include";
const HEADERS: &[&str] = &[
    "hsa/hsa.h",
    "hsa/hsa_ext_amd.h",
    "hsa/hsa_ext_image.h",
    "hsa/hsa_ext_finalize.h",
    "hsa/hsa_ven_amd_loader.h",
];

/// Marks a struct passed by value that the crate does not mirror: the entry
/// gets no Rust signature (see `render`).
const BY_VALUE: &str = "by value: ";

/// Structs the crate mirrors in `abi`: a pointer to one is typed so.
const MIRRORED: &[(&str, &str)] = &[
    ("hsa_signal_t", "HsaSignal"),
    ("hsa_agent_t", "HsaAgent"),
    ("hsa_amd_pointer_info_t", "PointerInfo"),
    ("hsa_pitched_ptr_t", "PitchedPtr"),
    ("hsa_dim3_t", "Dim3"),
    ("hsa_amd_profiling_dispatch_time_t", "DispatchTime"),
    ("hsa_amd_profiling_async_copy_time_t", "DispatchTime"),
    ("hsa_amd_memory_access_desc_t", "AccessDesc"),
    ("hsa_amd_ais_file_handle_t", "AisFileHandle"),
    // The image extension's, in runtime::images::abi.
    ("hsa_ext_image_format_t", "ImageFormat"),
    ("hsa_ext_image_descriptor_t", "ImageDescriptor"),
    ("hsa_ext_image_data_info_t", "ImageDataInfo"),
    ("hsa_ext_image_region_t", "ImageRegion"),
    ("hsa_ext_sampler_descriptor_t", "SamplerDescriptor"),
    ("hsa_ext_sampler_descriptor_v2_t", "SamplerDescriptorV2"),
    ("hsa_amd_image_descriptor_t", "AmdImageDescriptorHead"),
];

#[derive(Clone, Debug)]
enum Typedef {
    Alias(Vec<String>),
    Enum,
    Struct(Vec<Vec<String>>),
    Opaque,
    FnPtr(Vec<String>),
}

#[derive(Debug, Clone)]
struct Function {
    ret: Vec<String>,
    params: Vec<Vec<String>>,
}

#[derive(Default)]
struct Decls {
    typedefs: BTreeMap<String, Typedef>,
    functions: BTreeMap<String, Function>,
}

fn preprocess(include: Option<&Path>) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("entry_signatures")
        .join(include.map_or("pinned".into(), |p| {
            p.display().to_string().replace('/', "_")
        }));
    std::fs::create_dir_all(&dir).unwrap();
    let tu = dir.join("tu.c");
    let text: String = HEADERS
        .iter()
        .map(|h| format!("#include <{h}>\n"))
        .collect();
    std::fs::write(&tu, text).unwrap();
    let mut cmd = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    cmd.args(["-E", "-P", "-std=c11"]);
    if let Some(inc) = include {
        // Only the hsa directory comes from there; the C library's headers stay the host's.
        let shadow = dir.join("sid-include");
        std::fs::create_dir_all(&shadow).unwrap();
        let link = shadow.join("hsa");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(inc.join("hsa"), &link).unwrap();
        cmd.arg("-I").arg(&shadow);
    }
    let out = cmd
        .arg(&tu)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C preprocessor: {e}; {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "preprocessing the HSA headers failed ({SETUP_HINT}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let s = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(text[s..i].to_string());
        } else if c == '"' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(text[s..i.min(b.len())].to_string());
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// Top-level statements (a function body ends one at its closing brace).
fn statements(toks: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut depth = 0i32;
    for t in toks {
        cur.push(t.clone());
        match t.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 && cur[0] != "typedef" && cur.iter().any(|t| t == "(") {
                    let brace = cur.iter().position(|t| t == "{").unwrap();
                    if cur[..brace].iter().any(|t| t == "(")
                        && !cur[..brace].iter().any(|t| t == "=")
                    {
                        out.push(std::mem::take(&mut cur)); // a function definition
                    }
                }
            }
            ";" if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => {}
        }
    }
    out
}

fn strip_attributes(st: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < st.len() {
        if st[i] == "__attribute__" || st[i] == "__extension__" || st[i] == "__asm__" {
            if st[i] == "__extension__" {
                i += 1;
                continue;
            }
            i += 1;
            let mut depth = 0;
            while i < st.len() {
                if st[i] == "(" {
                    depth += 1;
                } else if st[i] == ")" {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                i += 1;
            }
            continue;
        }
        if st[i] == "extern" || st[i] == "static" || st[i] == "inline" || st[i] == "__inline" {
            i += 1;
            continue;
        }
        out.push(st[i].clone());
        i += 1;
    }
    out
}

fn split_commas(toks: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0;
    for t in toks {
        match t.as_str() {
            "(" | "{" | "[" => depth += 1,
            ")" | "}" | "]" => depth -= 1,
            "," if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(t.clone());
    }
    out.retain(|p| !p.is_empty());
    out
}

fn matching(toks: &[String], open: usize) -> usize {
    let mut depth = 0;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if t == "(" {
            depth += 1;
        } else if t == ")" {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    panic!("unbalanced parentheses in {toks:?}")
}

fn parse(text: &str) -> Decls {
    let mut d = Decls::default();
    for st in statements(&tokens(text)) {
        let st = strip_attributes(&st);
        if st.is_empty() || st[0] == ";" {
            continue;
        }
        if st[0] == "typedef" {
            let body = &st[1..st.len() - 1];
            if let Some(open) = body.iter().position(|t| t == "{") {
                let close = body.iter().rposition(|t| t == "}").unwrap();
                let name = body[close + 1..]
                    .iter()
                    .find(|t| is_ident(t))
                    .cloned()
                    .unwrap_or_default();
                let def = match body[0].as_str() {
                    "enum" => Typedef::Enum,
                    "struct" => Typedef::Struct(
                        statements(&body[open + 1..close])
                            .into_iter()
                            .map(|f| f[..f.len() - 1].to_vec())
                            .collect(),
                    ),
                    _ => Typedef::Opaque,
                };
                if matches!(def, Typedef::Struct(_)) && open > 1 {
                    d.typedefs
                        .insert(format!("struct {}", body[1]), def.clone());
                }
                d.typedefs.insert(name, def);
            } else if body.len() >= 4
                && body.contains(&"(".to_string())
                && body.contains(&"*".to_string())
            {
                // typedef RET (*NAME)(PARAMS)
                let open = body.iter().position(|t| t == "(").unwrap();
                let name = body[open + 2].clone();
                d.typedefs.insert(name, Typedef::FnPtr(body.to_vec()));
            } else {
                let name = body.last().unwrap().clone();
                d.typedefs
                    .insert(name, Typedef::Alias(body[..body.len() - 1].to_vec()));
            }
            continue;
        }
        if st[0] == "struct" && st.get(2).is_some_and(|t| t == "{") {
            let close = st.iter().rposition(|t| t == "}").unwrap();
            d.typedefs.insert(
                format!("struct {}", st[1]),
                Typedef::Struct(
                    statements(&st[3..close])
                        .into_iter()
                        .map(|f| f[..f.len() - 1].to_vec())
                        .collect(),
                ),
            );
            continue;
        }
        let Some(open) = st.iter().position(|t| t == "(") else {
            continue;
        };
        if open == 0 || !st[open - 1].starts_with("hsa_") || st[..open].contains(&"=".to_string()) {
            continue;
        }
        let close = matching(&st, open);
        let name = st[open - 1].clone();
        let mut params = split_commas(&st[open + 1..close]);
        if params.len() == 1 && params[0] == ["void"] {
            params.clear();
        }
        d.functions.insert(
            name,
            Function {
                ret: st[..open - 1].to_vec(),
                params,
            },
        );
    }
    d
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

const KEYWORDS: &[&str] = &[
    "const",
    "volatile",
    "unsigned",
    "signed",
    "int",
    "char",
    "short",
    "long",
    "struct",
    "enum",
    "union",
    "void",
    "_Bool",
    "float",
    "double",
    "restrict",
    "__restrict",
];

fn primitive(name: &str) -> Option<&'static str> {
    Some(match name {
        "uint8_t" | "unsigned char" => "u8",
        "int8_t" | "signed char" => "i8",
        "uint16_t" | "unsigned short" => "u16",
        "int16_t" | "short" => "i16",
        "uint32_t" | "unsigned int" | "unsigned" => "u32",
        "int32_t" | "int" | "signed int" => "i32",
        "uint64_t" | "unsigned long" | "unsigned long long" => "u64",
        "int64_t" | "long" | "long long" => "i64",
        "size_t" => "usize",
        "uintptr_t" => "usize",
        "bool" | "_Bool" => "bool",
        "char" => "c_char",
        "float" => "f32",
        "double" => "f64",
        _ => return None,
    })
}

impl Decls {
    /// The Rust type of the C base type `name` (no pointer). `pointee`: it is
    /// behind a pointer, where a struct not mirrored is `c_void`.
    fn base(&self, name: &str, pointee: bool) -> String {
        if name == "void" {
            return if pointee {
                "c_void".into()
            } else {
                "()".into()
            };
        }
        if let Some(&(_, m)) = MIRRORED.iter().find(|(c, _)| *c == name) {
            return m.into();
        }
        if let Some(p) = primitive(name) {
            return p.into();
        }
        match self.typedefs.get(name) {
            Some(Typedef::Alias(toks)) => self.rust_type(toks, pointee),
            Some(Typedef::Enum) => "u32".into(),
            Some(Typedef::Struct(fields)) => {
                if fields.len() == 1 && fields[0] == ["uint64_t", "handle"] {
                    "u64".into()
                } else if pointee {
                    "c_void".into()
                } else {
                    format!("{BY_VALUE}{name}")
                }
            }
            Some(Typedef::Opaque) if pointee => "c_void".into(),
            Some(Typedef::FnPtr(toks)) => self.fn_ptr(toks),
            None if name.starts_with("struct ") || name.starts_with("enum ") => {
                if name.starts_with("enum ") {
                    "u32".into()
                } else if pointee {
                    "c_void".into()
                } else {
                    format!("{BY_VALUE}{name}")
                }
            }
            other => panic!("unknown C type {name:?} ({other:?})"),
        }
    }

    /// Type tokens (qualifiers, base words, `*`s) to a Rust type.
    fn rust_type(&self, toks: &[String], pointee: bool) -> String {
        let mut words: Vec<&str> = Vec::new();
        let mut konst = false;
        let mut cur: Option<String> = None;
        for t in toks {
            match t.as_str() {
                "const" => konst = true,
                "volatile" | "restrict" | "__restrict" => {}
                "*" => {
                    let inner = cur
                        .take()
                        .unwrap_or_else(|| self.base(&words.join(" "), true));
                    cur = Some(format!(
                        "*{} {}",
                        if konst { "const" } else { "mut" },
                        inner
                    ));
                    konst = false;
                }
                "[" | "]" => {}
                w if w.chars().all(|c| c.is_ascii_digit()) => {}
                w => words.push(w),
            }
        }
        cur.unwrap_or_else(|| self.base(&words.join(" "), pointee))
    }

    fn fn_ptr(&self, toks: &[String]) -> String {
        // RET ( * name ) ( PARAMS )
        let open = toks.iter().position(|t| t == "(").unwrap();
        let close = matching(toks, open);
        let popen = close + 1;
        let pclose = matching(toks, popen);
        let ret = self.rust_type(&toks[..open], false);
        let mut params = split_commas(&toks[popen + 1..pclose]);
        if params.len() == 1 && params[0] == ["void"] {
            params.clear();
        }
        let ps: Vec<String> = params.iter().map(|p| self.param(p)).collect();
        format!(
            "Option<unsafe extern \"C\" fn({}){}>",
            ps.join(", "),
            if ret == "()" {
                String::new()
            } else {
                format!(" -> {ret}")
            }
        )
    }

    fn param(&self, p: &[String]) -> String {
        if p.contains(&"(".to_string()) {
            return self.fn_ptr(p);
        }
        // Drop the parameter name: the last identifier, when it is not a type word.
        let mut toks = p.to_vec();
        let n_words = toks.iter().filter(|t| is_ident(t)).count();
        if n_words >= 2 {
            if let Some(i) = toks.iter().rposition(|t| is_ident(t)) {
                let t = &toks[i];
                let multiword_base = KEYWORDS.contains(&t.as_str());
                if !multiword_base {
                    toks.remove(i);
                }
            }
        }
        let array = toks.contains(&"[".to_string());
        let ty = self.rust_type(&toks, false);
        if array { format!("*mut {ty}") } else { ty }
    }
}

/// What an entry returns when it fails without a status to say so (a real
/// function that is missing, an internal panic): never a value that reads as
/// success. Decided once, here, per C return type, with the few entries whose
/// safe answer depends on their arguments named (`_aN` is argument N).
fn error_value(name: &str, c_ret: &str) -> &'static str {
    if name.starts_with("hsa_signal_wait_") {
        // A value that does not satisfy the caller's condition.
        return "crate::runtime::signals::refused_wait_value(crate::abi::SignalCondition(_a1), _a2)";
    }
    if name.starts_with("hsa_signal_cas_") {
        // Not the expected value: no caller takes the exchange as done.
        return "_a1.wrapping_add(1)";
    }
    if name.starts_with("hsa_queue_cas_write_index_") {
        return "!_a1";
    }
    if name.starts_with("hsa_queue_load_read_index_") {
        // Nothing consumed: no producer overwrites a packet not yet read.
        return "0";
    }
    match c_ret {
        "hsa_status_t" => "crate::abi::HsaStatus::ERROR.0",
        // Signal values: a countdown to 0 never reads it as done (signals::ERROR_VALUE).
        "hsa_signal_value_t" => "crate::runtime::signals::ERROR_VALUE",
        // Write indices: no queue reaches it, so no two producers share a slot.
        "uint64_t" => "u64::MAX",
        // hsa_amd_signal_wait_any's "no signal satisfied".
        "uint32_t" => "u32::MAX",
        // void: the failure is surfaced by the log line only.
        "void" => "",
        other => panic!("no error value decided for {name}'s C return type {other}"),
    }
}

fn c_text(toks: &[String]) -> String {
    let mut s = String::new();
    for t in toks {
        if !s.is_empty() && (is_ident(t) || t == "(") && !s.ends_with(['(', '*']) {
            s.push(' ');
        }
        if t == "*" && !s.ends_with([' ', '*', '(']) {
            s.push(' ');
        }
        s.push_str(t);
    }
    s.replace(" (", "(").replace("( ", "(").replace(" ,", ",")
}

/// One row of the entry-point table in `src/interpose/mod.rs`: the name and
/// how the virtual runtime answers it (`Shim` or `FailClosed`).
struct Row {
    name: String,
    virtual_answer: String,
}

/// The table's rows, read from the source (so a new row can be blessed
/// before the crate, which needs its signature, compiles).
fn table_rows() -> Vec<Row> {
    let text = std::fs::read_to_string(repo().join("src/interpose/mod.rs")).unwrap();
    let start = text
        .find("\nentry_points! {\n")
        .expect("src/interpose/mod.rs has no `entry_points! {` invocation");
    let body = &text[start..];
    let body = &body[..body.find("\n}\n").expect("unterminated entry_points!")];
    let mut rows = Vec::new();
    for line in body.lines().skip(2) {
        let l = line.trim();
        if l.is_empty() || l.starts_with("//") {
            continue;
        }
        let (name, rest) = l
            .split_once(':')
            .unwrap_or_else(|| panic!("unreadable entry-point row {l:?}"));
        let answers: Vec<&str> = rest
            .trim_end_matches(';')
            .split(',')
            .map(str::trim)
            .collect();
        assert!(
            name.starts_with("hsa_") && answers.len() == 3 && l.ends_with(';'),
            "unreadable entry-point row {l:?} (want `hsa_name: Virtual, Intercept, Observe;`)"
        );
        rows.push(Row {
            name: name.to_string(),
            virtual_answer: answers[0].to_string(),
        });
    }
    rows
}

/// The header sets, oldest first: an entry's signature comes from the first
/// set that declares it.
struct Sets<'a> {
    sets: [(&'static str, &'a Decls); 3],
}

impl Sets<'_> {
    fn first(&self, name: &str) -> Option<(&'static str, &Decls)> {
        self.sets
            .iter()
            .find(|(_, d)| d.functions.contains_key(name))
            .map(|&(from, d)| (from, d))
    }
}

fn render(rows: &[Row], sets: &Sets<'_>) -> String {
    let mut s = String::from(
        "//! The C signature of every entry point in the table (`super::entry_points!`),\n\
         //! generated from the pinned headers by `tests/entry_signatures.rs`: do not\n\
         //! edit; rerun that test with SOFTGPU_BLESS=1.\n\
         //!\n\
         //! For each entry: its function-pointer type (the exports are checked against\n\
         //! it at compile time, and the real runtime's function is called through it),\n\
         //! and in [`missing`] the stand-in answered when the real runtime lacks the\n\
         //! function, which logs and returns the entry's failure value.\n\n\
         #![allow(unsafe_code, non_camel_case_types, dead_code, unused_imports, clippy::missing_safety_doc)]\n\n\
         use core::ffi::{c_char, c_void};\n\n\
         use crate::abi::{\n    \
         AccessDesc, AisFileHandle, Dim3, DispatchTime, HsaAgent, HsaSignal, PitchedPtr, PointerInfo,\n};\n\
         use crate::runtime::images::abi::{\n    \
         AmdImageDescriptorHead, ImageDataInfo, ImageDescriptor, ImageFormat, ImageRegion, SamplerDescriptor,\n    \
         SamplerDescriptorV2,\n};\n",
    );
    let mut stand_ins = String::new();
    for row in rows {
        let name = row.name.as_str();
        let (from, d) = sets.first(name).unwrap_or_else(|| {
            panic!("{name} is in the entry-point table but in none of the header sets")
        });
        let f = &d.functions[name];
        let ret = d.rust_type(&f.ret, false);
        let c_ret = f
            .ret
            .iter()
            .filter(|t| *t != "const")
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        if row.virtual_answer == "FailClosed" {
            // The generated fail-closed export returns HSA_STATUS_ERROR, and
            // reads no argument (the caller owns them on x86-64 System V).
            assert_eq!(
                c_ret, "hsa_status_t",
                "{name} fails closed but does not return a status"
            );
        }
        let params: Vec<String> = f.params.iter().map(|p| d.param(p)).collect();
        let by_value = params.iter().find(|p| p.starts_with(BY_VALUE));
        let proto = format!(
            "{} {name}({})",
            c_text(&f.ret),
            if f.params.is_empty() {
                "void".to_string()
            } else {
                f.params
                    .iter()
                    .map(|p| c_text(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        if let Some(p) = by_value {
            // Only a fail-closed entry may take a struct the crate does not
            // mirror: nothing in the shim calls it or reads its arguments,
            // and its stand-in reads none either (the caller owns them).
            assert_eq!(
                (row.virtual_answer.as_str(), c_ret.as_str()),
                ("FailClosed", "hsa_status_t"),
                "{name} takes a struct {p}: mirror it in abi (MIRRORED) to implement it"
            );
            s.push_str(&format!(
                "\n// `{proto}` ({from}): takes a struct by value that the crate does not\n\
                 // mirror, so it has no Rust signature; fail-closed.\n"
            ));
            stand_ins.push_str(&format!(
                "\n    /// Reads no argument (see the type's note above).\n    \
                 pub extern \"C\" fn {name}() -> u32 {{\n        \
                 crate::interpose::forward::missing(\"{name}\");\n        \
                 crate::abi::HsaStatus::ERROR.0\n    }}\n"
            ));
            continue;
        }
        let arrow = if ret == "()" {
            String::new()
        } else {
            format!(" -> {ret}")
        };
        s.push_str(&format!(
            "\n/// `{proto}` ({from})\npub type {name} = unsafe extern \"C\" fn({}){arrow};\n",
            params.join(", ")
        ));
        let named: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, t)| format!("_a{i}: {t}"))
            .collect();
        let err = error_value(name, &c_ret);
        stand_ins.push_str(&format!(
            "\n    pub unsafe extern \"C\" fn {name}({}){arrow} {{\n        crate::interpose::forward::missing(\"{name}\");\n{}    }}\n",
            named.join(", "),
            if err.is_empty() { String::new() } else { format!("        {err}\n") }
        ));
    }
    s.push_str(
        "\n/// Stand-ins for functions the real runtime lacks: each logs the name and\n\
         /// returns the entry's failure value, never one that reads as success.\n\
         pub mod missing {\n    use super::*;\n",
    );
    s.push_str(&stand_ins);
    s.push_str("}\n");
    s
}

/// The three header sets, parsed once per test process.
fn header_sets() -> &'static [Decls; 3] {
    static SETS: std::sync::OnceLock<[Decls; 3]> = std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        assert!(
            Path::new("/usr/include/hsa/hsa.h").is_file(),
            "the pinned HSA headers are not installed; {SETUP_HINT}"
        );
        for (dir, what) in [
            (SID_INCLUDE, "ROCr 6.4.3's headers (the sid chroot)"),
            (ROCM7_INCLUDE, "ROCr 7.2.4's headers (the ROCm 7 chroot)"),
        ] {
            assert!(
                Path::new(dir).join("hsa/hsa_ext_amd.h").is_file(),
                "{what} are not installed at {dir}; {SETUP_HINT}"
            );
        }
        [
            parse(&preprocess(None)),
            parse(&preprocess(Some(Path::new(SID_INCLUDE)))),
            parse(&preprocess(Some(Path::new(ROCM7_INCLUDE)))),
        ]
    })
}

fn sets() -> Sets<'static> {
    let [a, b, c] = header_sets();
    Sets {
        sets: [("ROCr 5.2.3", a), ("ROCr 6.4.3", b), ("ROCr 7.2.4", c)],
    }
}

#[test]
fn the_generated_signatures_match_the_pinned_headers() {
    let sets = sets();
    let rows = table_rows();
    // The compiled table is the one in the source.
    let compiled: Vec<&str> = softgpu_hsa::interpose::ENTRY_POINTS
        .iter()
        .map(|e| e.name)
        .collect();
    let read: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        compiled, read,
        "the table read from src/interpose/mod.rs is not the compiled one"
    );
    let want = render(&rows, &sets);
    let path = repo().join("src/interpose/signatures.rs");
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    if std::env::var_os("SOFTGPU_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    panic!(
        "src/interpose/signatures.rs does not match the pinned headers; rerun with SOFTGPU_BLESS=1 \
         to regenerate it"
    );
}

#[test]
fn every_entry_has_the_same_signature_in_every_header_set_that_declares_it() {
    let sets = sets();
    let mut differ = Vec::new();
    let mut compared = 0;
    for row in table_rows() {
        let name = row.name.as_str();
        let mut seen: Vec<(&str, String)> = Vec::new();
        for &(from, d) in &sets.sets {
            if let Some(f) = d.functions.get(name) {
                let params: Vec<String> = f.params.iter().map(|p| d.param(p)).collect();
                let sig = format!("({}) -> {}", params.join(", "), d.rust_type(&f.ret, false));
                seen.push((from, sig));
            }
        }
        compared += usize::from(seen.len() > 1);
        if seen.windows(2).any(|w| w[0].1 != w[1].1) {
            differ.push(format!("{name}: {seen:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "entry points whose C signature changed between ROCr releases (the shim exports one \
         signature; decide which and how to serve both):\n  {}",
        differ.join("\n  ")
    );
    assert!(
        compared > 200,
        "only {compared} entries are declared by more than one header set"
    );
}

#[test]
fn the_parser_reads_prototypes_typedefs_and_function_pointer_parameters() {
    let d = parse(
        "typedef unsigned int uint32_t; typedef unsigned long uint64_t;\n\
         typedef enum { A = 1 } hsa_status_t;\n\
         typedef struct hsa_agent_s { uint64_t handle; } hsa_agent_t;\n\
         typedef struct hsa_region_s { uint64_t handle; } hsa_region_t;\n\
         typedef void (*cb_t)(hsa_status_t s, void *d);\n\
         hsa_status_t hsa_x(hsa_agent_t agent, hsa_status_t (*callback)(hsa_region_t r, void* data), const uint32_t *n, cb_t c, void **out);\n",
    );
    let f = &d.functions["hsa_x"];
    let ps: Vec<String> = f.params.iter().map(|p| d.param(p)).collect();
    assert_eq!(
        ps,
        [
            "HsaAgent",
            "Option<unsafe extern \"C\" fn(u64, *mut c_void) -> u32>",
            "*const u32",
            "Option<unsafe extern \"C\" fn(u32, *mut c_void)>",
            "*mut *mut c_void",
        ]
    );
    assert_eq!(d.rust_type(&f.ret, false), "u32");
}
