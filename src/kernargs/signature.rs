//! Argument types from a demangled kernel signature.
//!
//! HIP code objects rarely carry `.type_name` in their `.args` metadata, but
//! every C++ kernel's symbol is a mangled name whose demangled text lists the
//! type of each explicit argument: `kargs_probe(float, int, unsigned long
//! long, Pair, double*, int const*)`. [`parameters`] cuts that list into one
//! text per argument (commas inside template arguments, parentheses, brackets
//! and braces do not cut), and [`classify`] says what each text is, as far as
//! a text can say: a scalar of a known width, a vector of scalars, a pointer,
//! or a record (a struct, class, union or enum passed by value, whose size
//! only the metadata knows).
//!
//! Nothing here guesses: a text that is not recognised is
//! [`ArgType::Record`] when it looks like a (possibly qualified, possibly
//! templated) name and [`ArgType::Unknown`] otherwise, and both are decoded as
//! their bytes.

/// Longest demangled name accepted (longer ones give no parameter list).
pub const MAX_SIGNATURE_LEN: usize = 64 * 1024;
/// Most parameters accepted in one list.
pub const MAX_PARAMETERS: usize = 4096;

/// A scalar type, by its representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    /// IEEE binary16 (`_Float16`, `__fp16`, `__half`, `half`).
    F16,
    /// bfloat16 (`__bf16`, `__hip_bfloat16`, `hip_bfloat16`).
    BF16,
    F32,
    F64,
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
            Scalar::I128 | Scalar::U128 => 16,
        }
    }

    /// The scalar a C/C++ builtin type name (cv-qualifiers removed) denotes on
    /// the AMDGPU and x86-64 Linux ABIs (LP64; `char` and `wchar_t` signed).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" | "_Bool" => Scalar::Bool,
            "char" | "signed char" | "int8_t" => Scalar::I8,
            "unsigned char" | "char8_t" | "uint8_t" | "uchar" => Scalar::U8,
            "short" | "short int" | "signed short" | "signed short int" | "int16_t" => Scalar::I16,
            "unsigned short" | "unsigned short int" | "short unsigned int" | "char16_t"
            | "uint16_t" | "ushort" => Scalar::U16,
            "int" | "signed" | "signed int" | "wchar_t" | "int32_t" => Scalar::I32,
            "unsigned" | "unsigned int" | "char32_t" | "uint32_t" | "uint" => Scalar::U32,
            "long" | "long int" | "signed long" | "long long" | "long long int"
            | "signed long long" | "int64_t" | "ptrdiff_t" | "ssize_t" => Scalar::I64,
            "unsigned long"
            | "unsigned long int"
            | "long unsigned int"
            | "unsigned long long"
            | "unsigned long long int"
            | "long long unsigned int"
            | "uint64_t"
            | "size_t"
            | "ulong" => Scalar::U64,
            "__int128" | "__int128_t" => Scalar::I128,
            "unsigned __int128" | "__uint128_t" => Scalar::U128,
            "_Float16" | "__fp16" | "__half" | "half" => Scalar::F16,
            "__bf16" | "__hip_bfloat16" | "hip_bfloat16" => Scalar::BF16,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        })
    }

    /// The scalar of a HIP/OpenCL vector element name (`float4` → F32, 4).
    fn vector_element(name: &str) -> Option<Scalar> {
        Some(match name {
            "char" => Scalar::I8,
            "uchar" => Scalar::U8,
            "short" => Scalar::I16,
            "ushort" => Scalar::U16,
            "int" => Scalar::I32,
            "uint" => Scalar::U32,
            "long" | "longlong" => Scalar::I64,
            "ulong" | "ulonglong" => Scalar::U64,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            "half" => Scalar::F16,
            _ => return None,
        })
    }
}

/// What an argument's type text denotes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgType {
    Scalar(Scalar),
    /// `lanes` elements of `element`: `HIP_vector_type<float, 4u>`, `float4`,
    /// `float __vector(4)` (clang's `ext_vector_type`). Its size in the
    /// kernarg block may exceed `lanes * element.size()` (a 3-lane vector
    /// occupies 4 lanes).
    Vector {
        element: Scalar,
        lanes: u32,
    },
    /// A pointer; `pointee` is the text before the last `*` (cv-qualifiers
    /// kept: `int const`), or a function type for a function pointer.
    Pointer {
        pointee: String,
    },
    /// A named type passed by value whose layout only its definition knows:
    /// decoded as bytes.
    Record {
        name: String,
    },
    /// Not recognised: decoded as bytes.
    Unknown,
}

impl ArgType {
    /// The size the type has in memory when the text alone says it: scalars,
    /// vectors of 1, 2, 4, 8 or 16 lanes, and pointers (8). A 3-lane vector
    /// and records are `None`.
    pub fn known_size(&self) -> Option<u64> {
        match self {
            ArgType::Scalar(s) => Some(s.size()),
            ArgType::Vector { element, lanes } if lanes.is_power_of_two() => {
                Some(element.size() * u64::from(*lanes))
            }
            ArgType::Pointer { .. } => Some(8),
            _ => None,
        }
    }
}

/// The parameter list of a demangled function name, one type text per
/// parameter, trimmed: `f<int, 2>(float, Pair<int, ((3)>(2))>, void (*)(int))`
/// → `["float", "Pair<int, ((3)>(2))>", "void (*)(int)"]`. `(void)` and `()` are
/// an empty list. `None` when the text does not end in a balanced
/// parameter list (not demangled, or not a function), is longer than
/// [`MAX_SIGNATURE_LEN`], or has more than [`MAX_PARAMETERS`] parameters.
pub fn parameters(demangled: &str) -> Option<Vec<String>> {
    let open = parameter_list_start(demangled)?;
    let close = demangled.trim_end().len() - 1;
    let inner = demangled.get(open + 1..close)?;
    let inner_trimmed = inner.trim();
    if inner_trimmed.is_empty() || inner_trimmed == "void" {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    // Openers not yet closed. Inside parentheses `<` and `>` are operators
    // (demanglers parenthesise expressions: `Pair<((3)>(2))>`), not brackets.
    let mut open: Vec<char> = Vec::new();
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        let top = open.last().copied();
        match c {
            '<' if top != Some('(') => open.push('<'),
            '(' | '[' | '{' => open.push(c),
            '>' if top == Some('(') => {}
            '>' | ')' | ']' | '}' => {
                let want = match c {
                    '>' => '<',
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if open.pop() != Some(want) {
                    return None;
                }
            }
            ',' if open.is_empty() => {
                out.push(inner.get(start..i)?.trim().to_owned());
                start = i + 1;
                if out.len() >= MAX_PARAMETERS {
                    return None;
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return None;
    }
    out.push(inner.get(start..)?.trim().to_owned());
    if out.iter().any(|p| p.is_empty()) {
        return None;
    }
    Some(out)
}

/// The function's name: the demangled text before its parameter list
/// (`ns::saxpy<float>(float, float*)` → `ns::saxpy<float>`), or the whole
/// text when it has no parameter list.
pub fn function_name(demangled: &str) -> &str {
    match parameter_list_start(demangled) {
        Some(open) => demangled[..open].trim_end(),
        None => demangled,
    }
}

/// Byte index of the `(` that opens the final, balanced parenthesised group.
fn parameter_list_start(demangled: &str) -> Option<usize> {
    let text = demangled.trim_end();
    if text.len() > MAX_SIGNATURE_LEN || !text.ends_with(')') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    // A name must come before the list.
                    return (i > 0).then_some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Words that qualify a type without changing its representation.
const QUALIFIERS: [&str; 4] = ["const", "volatile", "restrict", "__restrict"];

/// The text without leading and trailing cv/restrict qualifier words.
fn strip_qualifiers(mut t: &str) -> &str {
    loop {
        let before = t;
        t = t.trim();
        for q in QUALIFIERS {
            if let Some(rest) = t.strip_prefix(q) {
                if rest.starts_with(' ') {
                    t = rest;
                }
            }
            if let Some(rest) = t.strip_suffix(q) {
                if rest.ends_with([' ', '*', '&']) || rest.is_empty() {
                    t = rest;
                }
            }
        }
        t = t.trim();
        if t == before {
            return t;
        }
    }
}

/// What a parameter's type text denotes (see [`ArgType`]).
pub fn classify(text: &str) -> ArgType {
    let t = strip_qualifiers(text);
    if t.is_empty() {
        return ArgType::Unknown;
    }
    if let Some(pointee) = t.strip_suffix('*') {
        let pointee = pointee.trim_end();
        if pointee.is_empty() {
            return ArgType::Unknown;
        }
        return ArgType::Pointer {
            pointee: pointee.to_owned(),
        };
    }
    if let Some(v) = vector(t) {
        return v;
    }
    // A function pointer: `void (*)(int)`, `int (* const)(float)`.
    if t.ends_with(')') {
        if let Some(star) = t.find("(*") {
            let rest = &t[star + 2..];
            if let Some(close) = rest.find(')') {
                if strip_qualifiers(&rest[..close]).is_empty() {
                    let pointee = format!("{}{}", t[..star].trim_end(), &rest[close + 1..]);
                    return ArgType::Pointer {
                        pointee: pointee.replacen("(", " (", 1).replace("  ", " "),
                    };
                }
            }
        }
        return ArgType::Unknown;
    }
    if t.ends_with('&') {
        return ArgType::Unknown;
    }
    if let Some(s) = Scalar::from_name(&normalise_spaces(t)) {
        return ArgType::Scalar(s);
    }
    if is_name(t) {
        return ArgType::Record { name: t.to_owned() };
    }
    ArgType::Unknown
}

fn normalise_spaces(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `HIP_vector_type<float, 4u>`, `float4`, `float __vector(4)`,
/// `float vector[4]`.
fn vector(t: &str) -> Option<ArgType> {
    let lanes_of = |s: &str| -> Option<u32> {
        let s = s.trim();
        // `4u`, or a cast as cpp_demangle prints it: `(unsigned int)4`.
        let s = match s.strip_prefix('(').and_then(|r| r.split_once(')')) {
            Some((_, n)) => n,
            None => s,
        };
        let n: u32 = s.trim_end_matches(['u', 'U', 'l', 'L']).parse().ok()?;
        (1..=16).contains(&n).then_some(n)
    };
    let plain = t.strip_prefix("hip_impl::").unwrap_or(t);
    if let Some(args) = plain
        .strip_prefix("HIP_vector_type<")
        .and_then(|r| r.strip_suffix('>'))
    {
        let (elem, lanes) = args.rsplit_once(',')?;
        let element = Scalar::from_name(&normalise_spaces(strip_qualifiers(elem)))?;
        return Some(ArgType::Vector {
            element,
            lanes: lanes_of(lanes)?,
        });
    }
    for (open, close) in [(" __vector(", ")"), (" vector[", "]")] {
        if let Some((elem, rest)) = t.split_once(open) {
            let n = rest.strip_suffix(close)?;
            let element = Scalar::from_name(&normalise_spaces(elem))?;
            return Some(ArgType::Vector {
                element,
                lanes: lanes_of(n)?,
            });
        }
    }
    // float4, uchar2, ulonglong3, half2, ...
    let digits = t.len() - t.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && digits < t.len() {
        let (elem, n) = t.split_at(t.len() - digits);
        if let (Some(element), Ok(lanes)) = (Scalar::vector_element(elem), n.parse::<u32>()) {
            if matches!(lanes, 1 | 2 | 3 | 4 | 8 | 16) {
                return Some(ArgType::Vector { element, lanes });
            }
        }
    }
    None
}

/// A (possibly qualified, possibly templated) C++ type name: starts with a
/// letter, `_`, `(anonymous namespace)` or a closure's `{lambda(`, holds no pointer,
/// reference or function-type punctuation outside template arguments.
fn is_name(t: &str) -> bool {
    let first = t.chars().next().unwrap_or(' ');
    if !(first.is_alphabetic()
        || first == '_'
        || t.starts_with("(anonymous namespace)")
        || (t.starts_with("{lambda(") || t.starts_with("{unnamed type#")))
    {
        return false;
    }
    let mut open: Vec<char> = Vec::new();
    for c in t.chars() {
        let top = open.last().copied();
        match c {
            '<' if top != Some('(') => open.push('<'),
            '(' | '[' | '{' => open.push(c),
            '>' if top == Some('(') => {}
            '>' | ')' | ']' | '}' if open.is_empty() => return false,
            '>' | ')' | ']' | '}' => {
                open.pop();
            }
            '*' | '&' if open.is_empty() => return false,
            _ => {}
        }
    }
    open.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(s: &str) -> Vec<String> {
        parameters(s).unwrap_or_else(|| panic!("no parameters in {s:?}"))
    }

    #[test]
    fn a_flat_parameter_list_is_cut_at_its_commas() {
        assert_eq!(
            params("kargs_probe(float, int, unsigned long long, Pair, double*, int const*)"),
            [
                "float",
                "int",
                "unsigned long long",
                "Pair",
                "double*",
                "int const*"
            ]
        );
    }

    #[test]
    fn commas_inside_templates_parentheses_and_function_types_do_not_cut() {
        assert_eq!(
            params(
                "void ns::k<HIP_vector_type<float, 4u>, 3>(HIP_vector_type<float, 4u>, \
                 Pair<int, ((3)>(2))>, void (*)(int, float), std::array<int, 2ul>)"
            ),
            [
                "HIP_vector_type<float, 4u>",
                "Pair<int, ((3)>(2))>",
                "void (*)(int, float)",
                "std::array<int, 2ul>"
            ]
        );
        assert_eq!(
            params("k({lambda(int, int)#1}, int)"),
            ["{lambda(int, int)#1}", "int"]
        );
    }

    #[test]
    fn empty_and_void_lists_have_no_parameters() {
        assert_eq!(params("k()"), Vec::<String>::new());
        assert_eq!(params("k(void)"), Vec::<String>::new());
    }

    #[test]
    fn texts_without_a_balanced_parameter_list_have_none() {
        for s in [
            "plain_c",
            "_Z4vaddPKfS0_Pfi",
            "k(int",
            "k int)",
            "(int)",
            "k(int,)",
            "k(a>b, int)",
            "",
        ] {
            assert_eq!(parameters(s), None, "{s:?}");
        }
        let long = format!("k({})", "int, ".repeat(MAX_SIGNATURE_LEN / 5) + "int");
        assert_eq!(parameters(&long), None);
    }

    #[test]
    fn the_function_name_is_the_text_before_the_list() {
        assert_eq!(
            function_name("ns::saxpy<float>(float, float*)"),
            "ns::saxpy<float>"
        );
        assert_eq!(function_name("plain_c"), "plain_c");
        assert_eq!(
            function_name("void k<(char)1>(int)"),
            "void k<(char)1>",
            "a return type of a template instance stays"
        );
    }

    #[test]
    fn scalars_of_each_width_and_signedness_are_recognised() {
        let cases = [
            ("float", Scalar::F32),
            ("double", Scalar::F64),
            ("__half", Scalar::F16),
            ("_Float16", Scalar::F16),
            ("__hip_bfloat16", Scalar::BF16),
            ("bool", Scalar::Bool),
            ("char", Scalar::I8),
            ("signed char", Scalar::I8),
            ("unsigned char", Scalar::U8),
            ("short", Scalar::I16),
            ("unsigned short", Scalar::U16),
            ("int", Scalar::I32),
            ("unsigned int", Scalar::U32),
            ("long", Scalar::I64),
            ("unsigned long", Scalar::U64),
            ("long long", Scalar::I64),
            ("unsigned long long", Scalar::U64),
            ("__int128", Scalar::I128),
            ("unsigned __int128", Scalar::U128),
            ("wchar_t", Scalar::I32),
            ("char16_t", Scalar::U16),
            ("char32_t", Scalar::U32),
            ("const int", Scalar::I32),
            ("int const", Scalar::I32),
            ("unsigned  long   long", Scalar::U64),
        ];
        for (t, s) in cases {
            assert_eq!(classify(t), ArgType::Scalar(s), "{t}");
        }
        assert_eq!(Scalar::U128.size(), 16);
        assert_eq!(Scalar::BF16.size(), 2);
    }

    #[test]
    fn vectors_are_recognised_in_each_spelling() {
        let f4 = ArgType::Vector {
            element: Scalar::F32,
            lanes: 4,
        };
        assert_eq!(classify("HIP_vector_type<float, 4u>"), f4);
        assert_eq!(classify("hip_impl::HIP_vector_type<float, 4u>"), f4);
        assert_eq!(
            classify("HIP_vector_type<float, (unsigned int)4>"),
            f4,
            "the crate's demangler's notation"
        );
        assert_eq!(classify("float4"), f4);
        assert_eq!(classify("float __vector(4)"), f4);
        assert_eq!(classify("float vector[4]"), f4);
        assert_eq!(
            classify("HIP_vector_type<unsigned char, 3u>"),
            ArgType::Vector {
                element: Scalar::U8,
                lanes: 3
            }
        );
        assert_eq!(classify("uchar3").known_size(), None);
        assert_eq!(f4.known_size(), Some(16));
        assert_eq!(
            classify("HIP_vector_type<Pair, 4u>"),
            ArgType::Record {
                name: "HIP_vector_type<Pair, 4u>".into()
            }
        );
    }

    #[test]
    fn pointers_keep_their_pointee_text() {
        let p = |s: &str| ArgType::Pointer { pointee: s.into() };
        assert_eq!(classify("double*"), p("double"));
        assert_eq!(classify("int const*"), p("int const"));
        assert_eq!(classify("float* __restrict"), p("float"));
        assert_eq!(classify("float* const"), p("float"));
        assert_eq!(classify("Pair<int, 2>**"), p("Pair<int, 2>*"));
        assert_eq!(classify("void (*)(int, float)"), p("void (int, float)"));
        assert_eq!(classify("int (* const)(float)"), p("int (float)"));
        assert_eq!(p("x").known_size(), Some(8));
    }

    #[test]
    fn names_are_records_and_the_rest_is_unknown() {
        for t in [
            "Pair",
            "ns::Pair<int, 2>",
            "Pair<int, ((3)>(2))>",
            "(anonymous namespace)::S",
            "{lambda(int)#1}",
        ] {
            assert_eq!(classify(t), ArgType::Record { name: t.into() }, "{t}");
        }
        for t in ["", "*", "int&", "int (float)", "3", "const"] {
            assert_eq!(classify(t), ArgType::Unknown, "{t:?}");
        }
        assert_eq!(classify("Pair").known_size(), None);
    }
}
