//! Kernel name demangling: the `cpp_demangle` crate, plus a small, bounded
//! lowering of the one newer Itanium production real ROCm code objects use
//! that the crate (0.5.1, its newest release) does not parse.
//!
//! Clang 17+ mangles a template argument whose parameter's type is `auto` or
//! depends on other parameters with its *template parameter declaration*
//! before it (Itanium ABI `<template-arg> ::= <template-param-decl>
//! <template-arg>`): `Tn <type>` for a non-type parameter (`ITnDaXadL_Z...EE`,
//! `TnNSt9enable_ifIX...EiE4typeELi0E`), `Ty` for a type parameter. LLVM's
//! demangler prints only the argument, so removing the declaration gives the
//! pre-clang-17 mangling, which `cpp_demangle` parses and prints the same way.
//!
//! The lowering is done only where it is provably the same name:
//! - the declaration is found by a tokenizer that knows where source names
//!   (`<length><identifier>`), seq-ids, template parameter numbers and literal
//!   values are, so a `Tn` inside an identifier is never touched; anything the
//!   tokenizer does not understand leaves the name alone;
//! - a declared type that adds substitution candidates (anything but a builtin
//!   type) is removed only when no substitution reference (`S_`, `S<n>_`)
//!   follows it, so no later reference changes meaning;
//! - the result must then parse with `cpp_demangle`; otherwise the mangled
//!   name is kept. A name is never guessed.
//!
//! Bounds: names up to [`MAX_NAME_LEN`](super::MAX_NAME_LEN) bytes, nesting up
//! to [`MAX_DEPTH`]; the tokenizer is linear in the name's length.

use super::MAX_NAME_LEN;

/// Deepest bracket nesting the tokenizer follows.
pub const MAX_DEPTH: usize = 256;

/// A kernel's display name: `.kd` stripped, and Itanium C++ names demangled
/// (`_Z4vaddPKfS0_Pfi.kd` → `vadd(float const*, float const*, float*, int)`).
/// Anything that does not demangle is returned as is (without `.kd`).
pub fn kernel_name(symbol: &str) -> String {
    let base = symbol.strip_suffix(".kd").unwrap_or(symbol);
    demangle(base).unwrap_or_else(|| base.to_owned())
}

/// The demangled form of an Itanium C++ name, or `None`.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") || name.len() > MAX_NAME_LEN {
        return None;
    }
    if let Some(s) = with_cpp_demangle(name) {
        return Some(s);
    }
    let lowered = lower_template_param_decls(name)?;
    with_cpp_demangle(&lowered)
}

fn with_cpp_demangle(name: &str) -> Option<String> {
    cpp_demangle::Symbol::new(name.as_bytes())
        .ok()?
        .demangle()
        .ok()
}

/// The name with every removable template parameter declaration removed, or
/// `None` when there is none or the name is not understood.
pub fn lower_template_param_decls(name: &str) -> Option<String> {
    let t = Tokens::scan(name.as_bytes())?;
    if t.decls.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut at = 0;
    for d in &t.decls {
        if !d.builtin && t.subst_refs.iter().any(|&r| r >= d.end) {
            return None;
        }
        out.push_str(name.get(at..d.start)?);
        at = d.end;
    }
    out.push_str(name.get(at..)?);
    Some(out)
}

/// A template parameter declaration `[start, end)` and whether its type is
/// builtin (adds no substitution candidate).
#[derive(Debug, PartialEq, Eq)]
struct Decl {
    start: usize,
    end: usize,
    builtin: bool,
}

/// What the tokenizer found.
#[derive(Debug, Default)]
struct Tokens {
    decls: Vec<Decl>,
    /// Start offsets of substitution references (`S_`, `S<seq-id>_`).
    subst_refs: Vec<usize>,
}

/// Builtin type codes (one letter; `u` vendor types are excluded: they carry
/// a source name and are substitution candidates).
const BUILTIN: &[u8] = b"vwbcahstijlmxynofdegz";
/// Two-letter builtins after `D`.
const D_BUILTIN: &[u8] = b"dfehiscuan";

struct Scanner<'a> {
    s: &'a [u8],
    pos: usize,
    out: Tokens,
}

impl Tokens {
    fn scan(s: &[u8]) -> Option<Tokens> {
        let mut sc = Scanner {
            s,
            pos: 2,
            out: Tokens::default(),
        };
        if !s.starts_with(b"_Z") {
            return None;
        }
        // The whole name, token by token, until its end; every bracket closed.
        sc.until_end(0)?;
        Some(sc.out)
    }
}

impl Scanner<'_> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.pos + k).copied()
    }

    /// Tokens until the `E` that closes the current bracket (consumed), or the
    /// end of the name at depth 0.
    fn until_end(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        loop {
            let Some(c) = self.peek(0) else {
                return (depth == 0).then_some(());
            };
            if c == b'E' {
                if depth == 0 {
                    return None;
                }
                self.pos += 1;
                return Some(());
            }
            // A `.` suffix (`.cold`, `.kd` stripped earlier): the rest is text.
            if c == b'.' && depth == 0 {
                self.pos = self.s.len();
                return Some(());
            }
            self.token(depth)?;
        }
    }

    /// One token (a bracket is followed to its end).
    fn token(&mut self, depth: usize) -> Option<()> {
        let c = self.peek(0)?;
        match c {
            b'0'..=b'9' => self.source_name(),
            b'N' | b'I' | b'X' | b'J' | b'F' => {
                self.pos += 1;
                self.until_end(depth + 1)
            }
            b'Z' => {
                // Local name: Z <encoding> E <entity> [<discriminator>].
                self.pos += 1;
                self.until_end(depth + 1)
            }
            b'L' => self.literal(depth),
            b'S' => self.substitution(),
            b'T' => self.template_thing(depth),
            b'D' => self.d_thing(depth),
            b'C' => {
                // C1..C5 constructors, CI1/CI2 inheriting ones.
                self.pos += 1;
                if self.peek(0) == Some(b'I') {
                    self.pos += 1;
                }
                match self.peek(0)? {
                    b'1'..=b'5' => {
                        self.pos += 1;
                        Some(())
                    }
                    _ => None,
                }
            }
            b'U' => {
                // Ut [<number>] _ unnamed type; Ul <lambda-sig> E [<number>] _
                // lambdas; U <source-name> vendor qualifier.
                match self.peek(1)? {
                    b't' => {
                        self.pos += 2;
                        self.number_then_underscore()
                    }
                    b'l' => {
                        self.pos += 2;
                        self.until_end(depth + 1)?;
                        self.number_then_underscore()
                    }
                    b'0'..=b'9' => {
                        self.pos += 1;
                        self.source_name()
                    }
                    _ => None,
                }
            }
            b'B' | b'u' => {
                // ABI tag, vendor type: a source name follows.
                self.pos += 1;
                self.source_name()
            }
            b'A' => {
                // A <number> _ <type>, or A <expression> _ <type>.
                self.pos += 1;
                if self.peek(0)?.is_ascii_digit() {
                    self.number_then_underscore()
                } else {
                    // The expression tokens, up to the `_`.
                    while self.peek(0)? != b'_' {
                        self.token(depth + 1)?;
                    }
                    self.pos += 1;
                    Some(())
                }
            }
            b'_' => {
                // _ <digit> or __ <number> _ (discriminators), or the `_` of
                // `fp_`-like codes handled there.
                self.pos += 1;
                match self.peek(0) {
                    Some(b'_') => {
                        self.pos += 1;
                        self.number_then_underscore()
                    }
                    Some(b'0'..=b'9') => {
                        self.pos += 1;
                        Some(())
                    }
                    _ => Some(()),
                }
            }
            // fp... and fL<digit>...: function parameters (`f` then `L<type>`
            // is a float followed by a literal).
            b'f' if self.peek(1) == Some(b'p')
                || (self.peek(1) == Some(b'L')
                    && self.peek(2).is_some_and(|c| c.is_ascii_digit())) =>
            {
                self.function_param()
            }
            b'a'..=b'z' => {
                // Builtin types, cv/ref qualifiers are upper case; lower case
                // here is a builtin type or an operator code (two letters).
                self.pos += 1;
                Some(())
            }
            b'K' | b'V' | b'P' | b'R' | b'O' | b'M' | b'G' => {
                self.pos += 1;
                Some(())
            }
            _ => None,
        }
    }

    /// <length> <identifier>.
    fn source_name(&mut self) -> Option<()> {
        let start = self.pos;
        while self.peek(0)?.is_ascii_digit() {
            self.pos += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.pos]).ok()?;
        if digits.starts_with('0') {
            return None;
        }
        let n: usize = digits.parse().ok()?;
        let end = self.pos.checked_add(n)?;
        if end > self.s.len() {
            return None;
        }
        self.pos = end;
        Some(())
    }

    /// [<digits or upper-case letters>] `_`.
    fn number_then_underscore(&mut self) -> Option<()> {
        while self.peek(0)?.is_ascii_alphanumeric() && self.peek(0)? != b'_' {
            let c = self.peek(0)?;
            if !(c.is_ascii_digit() || c.is_ascii_uppercase()) {
                return None;
            }
            self.pos += 1;
        }
        (self.peek(0)? == b'_').then(|| self.pos += 1)
    }

    fn substitution(&mut self) -> Option<()> {
        let start = self.pos;
        self.pos += 1;
        match self.peek(0)? {
            b't' | b'a' | b'b' | b's' | b'i' | b'o' | b'd' => {
                self.pos += 1;
                Some(())
            }
            b'r' => {
                // sr is lower case; `Sr` is not a production.
                None
            }
            _ => {
                self.out.subst_refs.push(start);
                self.number_then_underscore()
            }
        }
    }

    fn template_thing(&mut self, depth: usize) -> Option<()> {
        let start = self.pos;
        match self.peek(1)? {
            b'_' | b'0'..=b'9' => {
                self.pos += 1;
                self.number_then_underscore()
            }
            b'L' => {
                // TL <level> __ or TL <level> _ <index> _.
                self.pos += 2;
                self.number_then_underscore()?;
                self.number_then_underscore()
            }
            b'y' => {
                self.pos += 2;
                self.out.decls.push(Decl {
                    start,
                    end: self.pos,
                    builtin: true,
                });
                Some(())
            }
            b'n' => {
                self.pos += 2;
                let ty = self.pos;
                let builtin = self.one_type(depth)?;
                // Only a declaration in front of a template argument is
                // removed; `Tn` in a lambda's template parameter list is
                // printed by LLVM, so such names are left alone.
                let _ = ty;
                self.out.decls.push(Decl {
                    start,
                    end: self.pos,
                    builtin,
                });
                Some(())
            }
            // Tk, Tt, Tp and the special names (TV, TI, ...) are not lowered.
            _ => None,
        }
    }

    /// One type after `Tn`; returns whether it is builtin. Only the forms
    /// seen in real code objects are accepted: builtins, `N ... E`, a source
    /// name, a substitution, a template parameter, with cv/pointer prefixes.
    fn one_type(&mut self, depth: usize) -> Option<bool> {
        let c = self.peek(0)?;
        match c {
            b'D' if D_BUILTIN.contains(&self.peek(1)?) => {
                self.pos += 2;
                Some(true)
            }
            c if BUILTIN.contains(&c) => {
                self.pos += 1;
                Some(true)
            }
            b'N' => {
                self.pos += 1;
                self.until_end(depth + 1)?;
                Some(false)
            }
            b'0'..=b'9' => {
                self.source_name()?;
                if self.peek(0) == Some(b'I') {
                    self.pos += 1;
                    self.until_end(depth + 1)?;
                }
                Some(false)
            }
            b'P' | b'K' | b'R' | b'O' | b'V' => {
                self.pos += 1;
                self.one_type(depth).map(|_| false)
            }
            b'S' => {
                self.substitution()?;
                Some(false)
            }
            b'T' if matches!(self.peek(1), Some(b'_' | b'0'..=b'9')) => {
                self.template_thing(depth)?;
                Some(false)
            }
            _ => None,
        }
    }

    fn d_thing(&mut self, depth: usize) -> Option<()> {
        let d = self.peek(1)?;
        match d {
            b'0'..=b'5' => {
                // Destructors.
                self.pos += 2;
                Some(())
            }
            b't' | b'T' | b'O' | b'w' | b'X' => {
                // decltype, noexcept, throw spec, explicit object: ... E.
                self.pos += 2;
                self.until_end(depth + 1)
            }
            b'v' => {
                // Dv <number> _ or Dv _ <expression> _.
                self.pos += 2;
                if self.peek(0)? == b'_' {
                    self.pos += 1;
                    while self.peek(0)? != b'_' {
                        self.token(depth + 1)?;
                    }
                    self.pos += 1;
                    Some(())
                } else {
                    self.number_then_underscore()
                }
            }
            b'F' | b'B' | b'U' => {
                // DF <number> _ / DF16b, DB/DU <number or expression> _.
                self.pos += 2;
                while self.peek(0)?.is_ascii_digit() {
                    self.pos += 1;
                }
                match self.peek(0)? {
                    b'_' | b'b' => {
                        self.pos += 1;
                        Some(())
                    }
                    _ => None,
                }
            }
            b'p' | b'a' | b'c' | b'n' | b'd' | b'f' | b'e' | b'h' | b'i' | b's' | b'u' => {
                self.pos += 2;
                Some(())
            }
            _ => None,
        }
    }

    /// L <type> <value> E, L _Z <encoding> E, or L <source-name>: an
    /// internal linkage name (`L11scalar_case`). After `L <source-name>`, a
    /// value and `E` make it a literal of that (enum) type
    /// (`L16rocrand_rng_type402E`); a name is never followed by them, since
    /// what follows a name is a name, template arguments or `E`.
    fn literal(&mut self, depth: usize) -> Option<()> {
        match self.peek(1)? {
            b'0'..=b'9' => {
                self.pos += 1;
                self.source_name()?;
                let value = self.s[self.pos..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c) || **c == b'n')
                    .count();
                if value > 0 && self.s.get(self.pos + value) == Some(&b'E') {
                    self.pos += value + 1;
                }
                Some(())
            }
            b'_' if self.peek(2) == Some(b'Z') => {
                self.pos += 3;
                self.until_end(depth + 1)
            }
            _ => {
                self.pos += 1;
                // The type: a builtin, or a named (enum) type.
                self.one_type(depth)?;
                // The value: [n] then digits or lower-case hex, up to E.
                while let Some(c) = self.peek(0) {
                    if c == b'E' {
                        self.pos += 1;
                        return Some(());
                    }
                    if !(c.is_ascii_digit() || (b'a'..=b'f').contains(&c) || c == b'n') {
                        return None;
                    }
                    self.pos += 1;
                }
                None
            }
        }
    }

    /// fp <cv> [<number>] _ and fL <number> p <cv> [<number>] _.
    fn function_param(&mut self) -> Option<()> {
        self.pos += 1;
        if self.peek(0)? == b'L' {
            self.pos += 1;
            while self.peek(0)?.is_ascii_digit() {
                self.pos += 1;
            }
            if self.peek(0)? != b'p' {
                return None;
            }
        }
        self.pos += 1; // p
        while matches!(self.peek(0)?, b'K' | b'V' | b'r') {
            self.pos += 1;
        }
        self.number_then_underscore()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_demangled_by_cpp_demangle() {
        assert_eq!(
            kernel_name("_Z4vaddPKfS0_Pfi.kd"),
            "vadd(float const*, float const*, float*, int)"
        );
        assert_eq!(kernel_name("plain_c.kd"), "plain_c");
        assert_eq!(kernel_name("_Znot mangled"), "_Znot mangled");
    }

    #[test]
    fn an_auto_template_parameter_declaration_is_lowered() {
        // clang 21's mangling and GCC's (no Tn) of ns::g<&f>() (the Itanium
        // ABI change of cxx-abi PR 166).
        assert_eq!(
            lower_template_param_decls("_ZN2ns1gITnDaXadL_Z1fvEEEEvv").as_deref(),
            Some("_ZN2ns1gIXadL_Z1fvEEEEvv")
        );
        // llvm-cxxfilt prints `void ns::g<&f>()`; cpp_demangle prints the
        // function's parameter list in the address-of (docs/CODE_OBJECTS.md).
        assert_eq!(
            demangle("_ZN2ns1gITnDaXadL_Z1fvEEEEvv").as_deref(),
            Some("void ns::g<&f()>()")
        );
    }

    #[test]
    fn a_dependent_type_declaration_is_lowered_only_when_no_substitution_follows() {
        let name = "_ZN9rocsolver6v32802L11scalar_caseI19rocblas_complex_numIdEdPS3_\
                    TnNSt9enable_ifIX18rocblas_is_complexIT_EEiE4typeELi0EEEv14rocblas_evect_T1_lPT0_li";
        assert_eq!(
            demangle(name).as_deref(),
            Some(
                "void rocsolver::v32802::scalar_case<rocblas_complex_num<double>, double, \
                 rocblas_complex_num<double>*, 0>(rocblas_evect_, rocblas_complex_num<double>*, \
                 long, double*, long, int)"
            )
        );
        // The same with a substitution reference after the declaration: it
        // might name a candidate the declaration added, so no lowering.
        let with_ref = "_ZN1a1fI1BTnNS_1CE4typeELi0EEEvS1_";
        assert_eq!(lower_template_param_decls(with_ref), None);
    }

    #[test]
    fn a_rocrand_kernel_wrapper_name_is_lowered() {
        let name = "_ZN12rocrand_impl6system6detail14kernel_wrapperITnDaXadL_ZNS_4host12generate_mrgINS3_23default_config_providerIL16rocrand_rng_type402EEELb0EN14rocrand_device15mrg32k3a_engineEfNS3_30mrg_engine_normal_distributionIfS9_EEEEv4dim3SC_SC_SC_PT1_jPT2_mT3_EES7_fLb0EJPS9_jPfmSB_EEEvDpT3_";
        let lowered = lower_template_param_decls(name).expect("lowered");
        assert_eq!(lowered, name.replacen("ITnDaX", "IX", 1));
        assert!(demangle(name).is_some(), "{lowered}");
    }

    #[test]
    fn tn_inside_an_identifier_is_never_touched() {
        // `7xTnDaXy` is one identifier: nothing to lower.
        assert_eq!(lower_template_param_decls("_Z7xTnDaXyv"), None);
        assert_eq!(kernel_name("_Z7xTnDaXyv"), "xTnDaXy()");
    }

    #[test]
    fn names_the_tokenizer_does_not_understand_are_left_alone() {
        for bad in ["_ZN1aITkDaEEv", "_ZN1aE", "_Z1aITnQ1E", "_ZZZZ", "_Z99a"] {
            assert_eq!(lower_template_param_decls(bad), None, "{bad}");
        }
        let deep = format!("_Z{}v", "N".repeat(10_000));
        assert_eq!(lower_template_param_decls(&deep), None);
        // Every prefix of a real name: an answer or None, never a panic.
        let name =
            "_ZN12rocrand_impl6system6detail14kernel_wrapperITnDaXadL_ZNS_4host3genEvEEJEEEvDpT_";
        for n in 0..name.len() {
            let _ = demangle(&name[..n]);
        }
    }
}
