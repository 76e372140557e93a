//! Decoding a kernarg block with the kernel's `.args` metadata.
//!
//! The metadata says where each argument lies (offset, size) and what it is
//! for (value kind); the demangled signature says the C++ type of each
//! explicit argument; DWARF names them. [`decode`] puts the three together:
//! each `.args` entry becomes a [`DecodedArg`] whose value is read from the
//! block by the argument's type (explicit arguments) or value kind (hidden
//! ones). Where the sources disagree, or the block does not hold an
//! argument's bytes, the result carries a [`Disagreement`] and the argument
//! is shown as its bytes (or as unavailable): nothing is guessed.

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use super::signature::{ArgType, Scalar, classify, function_name, parameters};
use crate::code_object::{KernelArg, KernelMetadata};

/// Largest argument decoded as a value; larger ones (and any argument past
/// the end of the block) keep at most this many bytes.
pub const MAX_ARG_BYTES: u64 = 64 * 1024;

/// A hidden argument's value kind (AMDGPUUsage, code object v3 to v6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HiddenKind {
    GlobalOffsetX,
    GlobalOffsetY,
    GlobalOffsetZ,
    BlockCountX,
    BlockCountY,
    BlockCountZ,
    GroupSizeX,
    GroupSizeY,
    GroupSizeZ,
    RemainderX,
    RemainderY,
    RemainderZ,
    GridDims,
    DynamicLdsSize,
    PrivateBase,
    SharedBase,
    PrintfBuffer,
    HostcallBuffer,
    HeapV1,
    DefaultQueue,
    CompletionAction,
    MultigridSyncArg,
    QueuePtr,
    None,
}

impl HiddenKind {
    /// Every hidden kind with its `.value_kind` spelling.
    pub const ALL: [(HiddenKind, &'static str); 24] = [
        (HiddenKind::GlobalOffsetX, "hidden_global_offset_x"),
        (HiddenKind::GlobalOffsetY, "hidden_global_offset_y"),
        (HiddenKind::GlobalOffsetZ, "hidden_global_offset_z"),
        (HiddenKind::BlockCountX, "hidden_block_count_x"),
        (HiddenKind::BlockCountY, "hidden_block_count_y"),
        (HiddenKind::BlockCountZ, "hidden_block_count_z"),
        (HiddenKind::GroupSizeX, "hidden_group_size_x"),
        (HiddenKind::GroupSizeY, "hidden_group_size_y"),
        (HiddenKind::GroupSizeZ, "hidden_group_size_z"),
        (HiddenKind::RemainderX, "hidden_remainder_x"),
        (HiddenKind::RemainderY, "hidden_remainder_y"),
        (HiddenKind::RemainderZ, "hidden_remainder_z"),
        (HiddenKind::GridDims, "hidden_grid_dims"),
        (HiddenKind::DynamicLdsSize, "hidden_dynamic_lds_size"),
        (HiddenKind::PrivateBase, "hidden_private_base"),
        (HiddenKind::SharedBase, "hidden_shared_base"),
        (HiddenKind::PrintfBuffer, "hidden_printf_buffer"),
        (HiddenKind::HostcallBuffer, "hidden_hostcall_buffer"),
        (HiddenKind::HeapV1, "hidden_heap_v1"),
        (HiddenKind::DefaultQueue, "hidden_default_queue"),
        (HiddenKind::CompletionAction, "hidden_completion_action"),
        (HiddenKind::MultigridSyncArg, "hidden_multigrid_sync_arg"),
        (HiddenKind::QueuePtr, "hidden_queue_ptr"),
        (HiddenKind::None, "hidden_none"),
    ];

    pub fn from_value_kind(kind: &str) -> Option<HiddenKind> {
        Self::ALL.iter().find(|(_, s)| *s == kind).map(|(k, _)| *k)
    }

    pub fn value_kind(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("hidden_none", |(_, s)| s)
    }

    /// Whether the argument holds an address (decoded as a pointer).
    pub fn is_pointer(self) -> bool {
        matches!(
            self,
            HiddenKind::PrintfBuffer
                | HiddenKind::HostcallBuffer
                | HiddenKind::HeapV1
                | HiddenKind::DefaultQueue
                | HiddenKind::CompletionAction
                | HiddenKind::MultigridSyncArg
                | HiddenKind::QueuePtr
        )
    }
}

/// Whether a `.value_kind` is a hidden (implicit) argument: every
/// `hidden_*` kind, known or not.
pub fn is_hidden(value_kind: &str) -> bool {
    value_kind.starts_with("hidden_")
}

/// A decoded value.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    Bool(bool),
    Int(i128),
    Uint(u128),
    /// IEEE binary16 bits.
    F16(u16),
    /// bfloat16 bits.
    BF16(u16),
    F32(f32),
    F64(f64),
    Vector(Vec<ArgValue>),
    Pointer(u64),
    /// Bytes in memory order: by-value records, and anything whose type is
    /// unknown or disagrees with the metadata.
    Bytes(Vec<u8>),
    /// The block does not hold the argument's bytes.
    Unavailable,
}

impl ArgValue {
    /// The value as text: decimal integers, `true`/`false`, floats in their
    /// shortest round-trip form (`2.0`), pointers as `0x7f0000001000`, bytes
    /// as `{0100000000004040}` (memory order), vectors as `(1.0, 2.0)`,
    /// unavailable as `?`.
    pub fn text(&self) -> String {
        match self {
            ArgValue::Bool(b) => b.to_string(),
            ArgValue::Int(v) => v.to_string(),
            ArgValue::Uint(v) => v.to_string(),
            ArgValue::F16(bits) => format!("{:?}", f16_to_f32(*bits)),
            ArgValue::BF16(bits) => format!("{:?}", bf16_to_f32(*bits)),
            ArgValue::F32(v) => format!("{v:?}"),
            ArgValue::F64(v) => format!("{v:?}"),
            ArgValue::Vector(items) => {
                let inner: Vec<String> = items.iter().map(ArgValue::text).collect();
                format!("({})", inner.join(", "))
            }
            ArgValue::Pointer(p) => format!("{p:#x}"),
            ArgValue::Bytes(b) => format!("{{{}}}", hex(b)),
            ArgValue::Unavailable => "?".into(),
        }
    }

    /// The value as an unsigned integer, for integer and pointer values.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            ArgValue::Uint(v) => u64::try_from(*v).ok(),
            ArgValue::Int(v) => u64::try_from(*v).ok(),
            ArgValue::Pointer(p) => Some(*p),
            ArgValue::Bool(b) => Some(u64::from(*b)),
            _ => None,
        }
    }
}

/// JSON: a number for integers (a decimal string past 64 bits), booleans and
/// finite floats; `"NaN"`, `"inf"`, `"-inf"` for the others; a `0x` hex
/// string for pointers; a plain hex string (memory order) for bytes; an array
/// for vectors; `null` when unavailable.
impl Serialize for ArgValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn float<S: Serializer>(s: S, v: f64, as_f32: Option<f32>) -> Result<S::Ok, S::Error> {
            if v.is_nan() {
                s.serialize_str("NaN")
            } else if v.is_infinite() {
                s.serialize_str(if v > 0.0 { "inf" } else { "-inf" })
            } else if let Some(f) = as_f32 {
                s.serialize_f32(f)
            } else {
                s.serialize_f64(v)
            }
        }
        match self {
            ArgValue::Bool(b) => s.serialize_bool(*b),
            ArgValue::Int(v) => match i64::try_from(*v) {
                Ok(n) => s.serialize_i64(n),
                Err(_) => s.serialize_str(&v.to_string()),
            },
            ArgValue::Uint(v) => match u64::try_from(*v) {
                Ok(n) => s.serialize_u64(n),
                Err(_) => s.serialize_str(&v.to_string()),
            },
            ArgValue::F16(bits) => {
                let f = f16_to_f32(*bits);
                float(s, f64::from(f), Some(f))
            }
            ArgValue::BF16(bits) => {
                let f = bf16_to_f32(*bits);
                float(s, f64::from(f), Some(f))
            }
            ArgValue::F32(f) => float(s, f64::from(*f), Some(*f)),
            ArgValue::F64(f) => float(s, *f, None),
            ArgValue::Vector(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            ArgValue::Pointer(p) => s.serialize_str(&format!("{p:#x}")),
            ArgValue::Bytes(b) => s.serialize_str(&hex(b)),
            ArgValue::Unavailable => s.serialize_none(),
        }
    }
}

/// Lowercase hex of bytes in memory order, no prefix.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// IEEE binary16 to f32 (exact: every half is a float).
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits >> 15) << 31;
    let exp = u32::from((bits >> 10) & 0x1f);
    let man = u32::from(bits & 0x3ff);
    let out = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m * 2^-24.
            let v = m as f32 * f32::from_bits(0x3380_0000);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(out)
}

/// bfloat16 to f32 (exact).
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// One argument, decoded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecodedArg {
    /// Position in the kernel's `.args`.
    pub index: usize,
    /// From DWARF (explicit arguments of a `-g` build), else the metadata's
    /// `.name`.
    pub name: Option<String>,
    /// The C++ type text (signature, else the metadata's `.type_name`);
    /// `None` for hidden arguments and where no source says.
    #[serde(rename = "type")]
    pub type_text: Option<String>,
    /// What the type text denotes.
    #[serde(skip)]
    pub arg_type: Option<ArgType>,
    /// `.value_kind`.
    pub kind: String,
    pub offset: u64,
    pub size: u64,
    pub value: ArgValue,
}

impl DecodedArg {
    pub fn is_hidden(&self) -> bool {
        is_hidden(&self.kind)
    }
}

/// Where the sources (or the block) disagree. Each has a stable snake_case
/// `code` ([`Disagreement::code`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Disagreement {
    /// The metadata lists `metadata` explicit arguments, the signature
    /// `signature` parameters: no signature type is used.
    ExplicitArgCount { metadata: usize, signature: usize },
    /// DWARF names `dwarf` parameters, the metadata lists `metadata`
    /// explicit arguments: no DWARF name is used.
    NameCount { metadata: usize, dwarf: usize },
    /// The type's size is not the metadata's: the argument is shown as bytes.
    ArgSize {
        index: usize,
        type_text: String,
        type_size: u64,
        metadata_size: u64,
    },
    /// A pointer type with a non-pointer value kind, or a non-pointer type
    /// with kind `global_buffer`: the argument is shown as bytes.
    ArgKind {
        index: usize,
        type_text: String,
        kind: String,
    },
    /// The block is shorter than `kernarg_segment_size`.
    BlockShort { block_len: u64, segment_size: u64 },
    /// An argument's bytes lie (partly) past the end of the block: its value
    /// is unavailable.
    ArgPastBlock {
        index: usize,
        offset: u64,
        size: u64,
        block_len: u64,
    },
    /// An argument's bytes lie (partly) past `kernarg_segment_size`.
    ArgOutsideSegment {
        index: usize,
        offset: u64,
        size: u64,
        segment_size: u64,
    },
    /// An argument larger than [`MAX_ARG_BYTES`]: only its first bytes are kept.
    ArgTooLarge { index: usize, size: u64 },
}

impl Disagreement {
    /// The stable snake_case code (the JSON `code` field).
    pub fn code(&self) -> &'static str {
        match self {
            Disagreement::ExplicitArgCount { .. } => "explicit_arg_count",
            Disagreement::NameCount { .. } => "name_count",
            Disagreement::ArgSize { .. } => "arg_size",
            Disagreement::ArgKind { .. } => "arg_kind",
            Disagreement::BlockShort { .. } => "block_short",
            Disagreement::ArgPastBlock { .. } => "arg_past_block",
            Disagreement::ArgOutsideSegment { .. } => "arg_outside_segment",
            Disagreement::ArgTooLarge { .. } => "arg_too_large",
        }
    }
}

/// A decoded kernarg block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecodedArgs {
    /// The kernel's name without its parameter list (`saxpy_kernel`,
    /// `ns::k<float>`), or the symbol without `.kd` when it does not demangle.
    pub kernel: String,
    /// Every `.args` entry, in metadata order (explicit and hidden).
    pub args: Vec<DecodedArg>,
    pub block_len: u64,
    pub segment_size: u64,
    pub disagreements: Vec<Disagreement>,
}

/// Where the parts of a decoding come from, besides the block.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sources<'a> {
    /// The demangled kernel name (e.g. from
    /// [`crate::code_object::demangle`]), for the explicit argument types.
    pub signature: Option<&'a str>,
    /// Explicit-argument names, in order (from
    /// [`super::dwarf::ParameterNames::kernel`]).
    pub names: Option<&'a [Option<String>]>,
}

/// Decodes `block` (the bytes at the dispatch's `kernarg_address`, possibly
/// fewer than `kernarg_segment_size`) with the kernel's metadata and the
/// given sources.
pub fn decode(block: &[u8], kernel: &KernelMetadata, sources: Sources<'_>) -> DecodedArgs {
    let block_len = block.len() as u64;
    let segment_size = kernel.kernarg_segment_size;
    let mut disagreements = Vec::new();
    if block_len < segment_size {
        disagreements.push(Disagreement::BlockShort {
            block_len,
            segment_size,
        });
    }
    let explicit: Vec<usize> = kernel
        .args
        .iter()
        .enumerate()
        .filter(|(_, a)| !is_hidden(&a.value_kind))
        .map(|(i, _)| i)
        .collect();
    let base = kernel.symbol.strip_suffix(".kd").unwrap_or(&kernel.symbol);
    let kernel_name = sources
        .signature
        .map(|s| function_name(s).to_owned())
        .unwrap_or_else(|| base.to_owned());

    let signature_types = sources.signature.and_then(parameters);
    let types: Option<Vec<String>> = match signature_types {
        Some(t) if t.len() == explicit.len() => Some(t),
        Some(t) => {
            disagreements.push(Disagreement::ExplicitArgCount {
                metadata: explicit.len(),
                signature: t.len(),
            });
            None
        }
        None => None,
    };
    let names = match sources.names {
        Some(n) if n.len() == explicit.len() => Some(n),
        Some(n) => {
            disagreements.push(Disagreement::NameCount {
                metadata: explicit.len(),
                dwarf: n.len(),
            });
            None
        }
        None => None,
    };

    let mut args = Vec::with_capacity(kernel.args.len());
    let mut nth_explicit = 0usize;
    for (index, a) in kernel.args.iter().enumerate() {
        let hidden = is_hidden(&a.value_kind);
        let (type_text, name) = if hidden {
            (None, a.name.clone())
        } else {
            let n = nth_explicit;
            nth_explicit += 1;
            let t = types
                .as_ref()
                .and_then(|t| t.get(n).cloned())
                .or_else(|| a.type_name.clone());
            let name = names
                .and_then(|v| v.get(n).cloned().flatten())
                .or_else(|| a.name.clone());
            (t, name)
        };
        if a.offset
            .checked_add(a.size)
            .is_none_or(|e| e > segment_size)
        {
            disagreements.push(Disagreement::ArgOutsideSegment {
                index,
                offset: a.offset,
                size: a.size,
                segment_size,
            });
        }
        let arg_type = type_text.as_deref().map(classify);
        let value = match arg_bytes(block, a) {
            None => {
                disagreements.push(Disagreement::ArgPastBlock {
                    index,
                    offset: a.offset,
                    size: a.size,
                    block_len,
                });
                ArgValue::Unavailable
            }
            Some(bytes) if a.size > MAX_ARG_BYTES => {
                disagreements.push(Disagreement::ArgTooLarge {
                    index,
                    size: a.size,
                });
                ArgValue::Bytes(bytes.to_vec())
            }
            Some(bytes) if hidden => hidden_value(a, bytes),
            Some(bytes) => explicit_value(
                index,
                a,
                type_text.as_deref(),
                arg_type.as_ref(),
                bytes,
                &mut disagreements,
            ),
        };
        args.push(DecodedArg {
            index,
            name,
            type_text,
            arg_type,
            kind: a.value_kind.clone(),
            offset: a.offset,
            size: a.size,
            value,
        });
    }
    DecodedArgs {
        kernel: kernel_name,
        args,
        block_len,
        segment_size,
        disagreements,
    }
}

/// The argument's bytes (at most [`MAX_ARG_BYTES`]), or `None` when the block
/// does not hold all of them.
fn arg_bytes<'b>(block: &'b [u8], a: &KernelArg) -> Option<&'b [u8]> {
    let start = usize::try_from(a.offset).ok()?;
    let len = usize::try_from(a.size).ok()?;
    let end = start.checked_add(len)?;
    block.get(start..end)?;
    let keep = len.min(MAX_ARG_BYTES as usize);
    block.get(start..start + keep)
}

fn uint_le(bytes: &[u8]) -> Option<u128> {
    if bytes.len() > 16 || bytes.is_empty() {
        return None;
    }
    let mut b = [0u8; 16];
    b[..bytes.len()].copy_from_slice(bytes);
    Some(u128::from_le_bytes(b))
}

fn scalar(s: Scalar, bytes: &[u8]) -> Option<ArgValue> {
    let u = uint_le(bytes.get(..s.size() as usize)?)?;
    let bits = s.size() as u32 * 8;
    let signed = |u: u128| -> i128 {
        let shift = 128 - bits;
        ((u << shift) as i128) >> shift
    };
    Some(match s {
        Scalar::Bool => ArgValue::Bool(u != 0),
        Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::I128 => {
            ArgValue::Int(signed(u))
        }
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::U128 => ArgValue::Uint(u),
        Scalar::F16 => ArgValue::F16(u as u16),
        Scalar::BF16 => ArgValue::BF16(u as u16),
        Scalar::F32 => ArgValue::F32(f32::from_bits(u as u32)),
        Scalar::F64 => ArgValue::F64(f64::from_bits(u as u64)),
    })
}

fn hidden_value(a: &KernelArg, bytes: &[u8]) -> ArgValue {
    let Some(kind) = HiddenKind::from_value_kind(&a.value_kind) else {
        return ArgValue::Bytes(bytes.to_vec());
    };
    match (kind, bytes.len()) {
        (HiddenKind::None, _) => ArgValue::Bytes(bytes.to_vec()),
        (k, 8) if k.is_pointer() => {
            ArgValue::Pointer(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
        }
        (k, 1 | 2 | 4 | 8) if !k.is_pointer() => {
            uint_le(bytes).map_or(ArgValue::Bytes(bytes.to_vec()), ArgValue::Uint)
        }
        _ => ArgValue::Bytes(bytes.to_vec()),
    }
}

/// A pointer into the workgroup's LDS (`dynamic_shared_pointer`, or the
/// `local` address space): 4 bytes, an LDS offset, not an address in memory.
fn lds_pointer(a: &KernelArg) -> bool {
    a.value_kind == "dynamic_shared_pointer" || a.address_space.as_deref() == Some("local")
}

/// Kinds whose argument is an address.
fn pointer_kind(kind: &str) -> bool {
    matches!(
        kind,
        "global_buffer" | "dynamic_shared_pointer" | "image" | "sampler" | "pipe" | "queue"
    )
}

fn explicit_value(
    index: usize,
    a: &KernelArg,
    type_text: Option<&str>,
    arg_type: Option<&ArgType>,
    bytes: &[u8],
    disagreements: &mut Vec<Disagreement>,
) -> ArgValue {
    let as_pointer = |bytes: &[u8]| match <[u8; 8]>::try_from(bytes) {
        Ok(b) => ArgValue::Pointer(u64::from_le_bytes(b)),
        Err(_) => ArgValue::Bytes(bytes.to_vec()),
    };
    let (Some(text), Some(t)) = (type_text, arg_type) else {
        // No type: the value kind alone.
        return if a.size == 4 && lds_pointer(a) {
            uint_le(bytes).map_or(ArgValue::Bytes(bytes.to_vec()), ArgValue::Uint)
        } else if pointer_kind(&a.value_kind) {
            as_pointer(bytes)
        } else {
            ArgValue::Bytes(bytes.to_vec())
        };
    };
    // A record may be `global_buffer`: clang passes a struct whose only
    // member is a pointer as that pointer (measured: rocPRIM's
    // `lookback_scan_state`). A scalar or vector may not.
    let kind_ok = match t {
        ArgType::Pointer { .. } => pointer_kind(&a.value_kind) || a.value_kind == "by_value",
        ArgType::Scalar(_) | ArgType::Vector { .. } => a.value_kind != "global_buffer",
        ArgType::Record { .. } | ArgType::Unknown => true,
    };
    if !kind_ok {
        disagreements.push(Disagreement::ArgKind {
            index,
            type_text: text.to_owned(),
            kind: a.value_kind.clone(),
        });
        return ArgValue::Bytes(bytes.to_vec());
    }
    let size_disagrees = |type_size: u64, d: &mut Vec<Disagreement>| {
        d.push(Disagreement::ArgSize {
            index,
            type_text: text.to_owned(),
            type_size,
            metadata_size: a.size,
        });
        ArgValue::Bytes(bytes.to_vec())
    };
    match t {
        ArgType::Scalar(s) if s.size() == a.size => {
            scalar(*s, bytes).unwrap_or_else(|| ArgValue::Bytes(bytes.to_vec()))
        }
        ArgType::Scalar(s) => size_disagrees(s.size(), disagreements),
        ArgType::Pointer { .. } if a.size == 8 => as_pointer(bytes),
        // An OpenCL `local` pointer argument is a 32-bit LDS address (AMDGPU's
        // address space 3): the runtime writes the offset in the workgroup's
        // LDS where it placed the buffer given to clSetKernelArg(size, NULL).
        ArgType::Pointer { .. } if a.size == 4 && lds_pointer(a) => {
            uint_le(bytes).map_or(ArgValue::Bytes(bytes.to_vec()), ArgValue::Uint)
        }
        ArgType::Pointer { .. } => size_disagrees(8, disagreements),
        ArgType::Vector { element, lanes } => {
            let lanes = u64::from(*lanes);
            let packed = element.size() * lanes;
            // A vector occupies its lanes rounded up to a power of two.
            let padded = element.size() * lanes.next_power_of_two();
            if a.size != packed && a.size != padded {
                return size_disagrees(padded, disagreements);
            }
            let items: Option<Vec<ArgValue>> = bytes
                .chunks_exact(element.size() as usize)
                .take(lanes as usize)
                .map(|c| scalar(*element, c))
                .collect();
            items.map_or(ArgValue::Bytes(bytes.to_vec()), ArgValue::Vector)
        }
        ArgType::Record { .. } | ArgType::Unknown if pointer_kind(&a.value_kind) => {
            as_pointer(bytes)
        }
        ArgType::Record { .. } | ArgType::Unknown => ArgValue::Bytes(bytes.to_vec()),
    }
}

impl DecodedArgs {
    /// The call as text, explicit arguments only:
    /// `saxpy_kernel(float a=2.0, float* x=0x7f0000001000, int n=1000)`; an
    /// argument without a name shows as `float 2.0`, one without a type as its
    /// value kind (`by_value {0100}`). `annotate` is asked about each pointer
    /// value (argument, address) and may add text after it, e.g. the
    /// runtime's `(alloc 3 +0 of 4000 B)`.
    pub fn call_text(
        &self,
        annotate: &mut dyn FnMut(&DecodedArg, u64) -> Option<String>,
    ) -> String {
        let mut parts = Vec::new();
        for a in self.args.iter().filter(|a| !a.is_hidden()) {
            let ty = a.type_text.as_deref().unwrap_or(&a.kind);
            let mut value = a.value.text();
            if let ArgValue::Pointer(p) = a.value {
                if let Some(note) = annotate(a, p) {
                    value.push(' ');
                    value.push_str(&note);
                }
            }
            parts.push(match &a.name {
                Some(n) => format!("{ty} {n}={value}"),
                None => format!("{ty} {value}"),
            });
        }
        format!("{}({})", self.kernel, parts.join(", "))
    }

    /// [`call_text`](Self::call_text) without annotations.
    pub fn call_text_plain(&self) -> String {
        self.call_text(&mut |_, _| None)
    }

    /// The value of the first hidden argument of `kind`, as an integer.
    pub fn hidden(&self, kind: HiddenKind) -> Option<u64> {
        let want = kind.value_kind();
        self.args
            .iter()
            .find(|a| a.kind == want)
            .and_then(|a| a.value.as_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(offset: u64, size: u64, kind: &str) -> KernelArg {
        KernelArg {
            offset,
            size,
            value_kind: kind.into(),
            ..Default::default()
        }
    }

    fn kernel(args: Vec<KernelArg>, size: u64) -> KernelMetadata {
        KernelMetadata {
            symbol: "_Z12saxpy_kernelfPfi.kd".into(),
            kernarg_segment_size: size,
            args,
            ..Default::default()
        }
    }

    fn saxpy() -> (KernelMetadata, Vec<u8>) {
        let k = kernel(
            vec![
                arg(0, 4, "by_value"),
                arg(8, 8, "global_buffer"),
                arg(16, 4, "by_value"),
                arg(24, 8, "hidden_global_offset_x"),
                arg(32, 4, "hidden_block_count_x"),
                arg(36, 2, "hidden_group_size_x"),
                arg(40, 8, "hidden_printf_buffer"),
                arg(48, 8, "hidden_none"),
            ],
            56,
        );
        let mut b = vec![0u8; 56];
        b[0..4].copy_from_slice(&2.0f32.to_le_bytes());
        b[8..16].copy_from_slice(&0x7f00_0000_1000u64.to_le_bytes());
        b[16..20].copy_from_slice(&1000i32.to_le_bytes());
        b[24..32].copy_from_slice(&5u64.to_le_bytes());
        b[32..36].copy_from_slice(&4u32.to_le_bytes());
        b[36..38].copy_from_slice(&256u16.to_le_bytes());
        b[40..48].copy_from_slice(&0x1234u64.to_le_bytes());
        b[48..56].copy_from_slice(&[0xaa; 8]);
        (k, b)
    }

    const SAXPY: &str = "saxpy_kernel(float, float*, int)";

    #[test]
    fn explicit_arguments_are_decoded_by_their_signature_types() {
        let (k, b) = saxpy();
        let names = [Some("a".to_string()), Some("x".into()), None];
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some(SAXPY),
                names: Some(&names),
            },
        );
        assert_eq!(d.disagreements, []);
        assert_eq!(d.kernel, "saxpy_kernel");
        let v: Vec<&ArgValue> = d.args.iter().map(|a| &a.value).collect();
        assert_eq!(v[0], &ArgValue::F32(2.0));
        assert_eq!(v[1], &ArgValue::Pointer(0x7f00_0000_1000));
        assert_eq!(v[2], &ArgValue::Int(1000));
        assert_eq!(d.args[0].name.as_deref(), Some("a"));
        assert_eq!(d.args[2].name, None);
        assert_eq!(d.args[1].type_text.as_deref(), Some("float*"));
        assert_eq!(
            d.call_text_plain(),
            "saxpy_kernel(float a=2.0, float* x=0x7f0000001000, int 1000)"
        );
    }

    #[test]
    fn hidden_arguments_are_decoded_by_kind() {
        let (k, b) = saxpy();
        let d = decode(&b, &k, Sources::default());
        assert_eq!(d.hidden(HiddenKind::GlobalOffsetX), Some(5));
        assert_eq!(d.hidden(HiddenKind::BlockCountX), Some(4));
        assert_eq!(d.hidden(HiddenKind::GroupSizeX), Some(256));
        assert_eq!(d.args[6].value, ArgValue::Pointer(0x1234));
        assert_eq!(d.args[7].value, ArgValue::Bytes(vec![0xaa; 8]));
        assert!(d.args[3..].iter().all(|a| a.type_text.is_none()));
        for (k, s) in HiddenKind::ALL {
            assert_eq!(HiddenKind::from_value_kind(s), Some(k));
            assert_eq!(k.value_kind(), s);
        }
    }

    #[test]
    fn an_opencl_local_pointer_is_its_4_byte_lds_offset_not_a_size_disagreement() {
        // OpenCL's `kernel void scale(global float *x, local float *tile)` as
        // clang-22 describes it: the local pointer is 4 bytes, an LDS offset.
        let mut tile = arg(8, 4, "dynamic_shared_pointer");
        tile.type_name = Some("float*".into());
        tile.address_space = Some("local".into());
        let mut x = arg(0, 8, "global_buffer");
        x.type_name = Some("float*".into());
        let k = KernelMetadata {
            symbol: "scale.kd".into(),
            kernarg_segment_size: 16,
            args: vec![x, tile],
            ..Default::default()
        };
        let mut b = vec![0u8; 16];
        b[0..8].copy_from_slice(&0x7f00_0000_1000u64.to_le_bytes());
        b[8..12].copy_from_slice(&512u32.to_le_bytes());
        let d = decode(&b, &k, Sources::default());
        assert_eq!(d.disagreements, []);
        assert_eq!(d.args[1].value, ArgValue::Uint(512));
        assert_eq!(
            d.call_text_plain(),
            "scale(float* 0x7f0000001000, float* 512)"
        );
        // Without a type, the kind alone says the same.
        let mut k = k;
        k.args[1].type_name = None;
        let d = decode(&b, &k, Sources::default());
        assert_eq!(d.args[1].value, ArgValue::Uint(512));
    }

    #[test]
    fn without_a_signature_pointers_come_from_the_kind_and_the_rest_is_bytes() {
        let (k, b) = saxpy();
        let d = decode(&b, &k, Sources::default());
        assert_eq!(d.kernel, "_Z12saxpy_kernelfPfi");
        assert_eq!(
            d.args[0].value,
            ArgValue::Bytes(2.0f32.to_le_bytes().to_vec())
        );
        assert_eq!(d.args[1].value, ArgValue::Pointer(0x7f00_0000_1000));
        assert_eq!(
            d.call_text_plain(),
            "_Z12saxpy_kernelfPfi(by_value {00000040}, global_buffer 0x7f0000001000, \
             by_value {e8030000})"
        );
    }

    #[test]
    fn a_count_disagreement_uses_no_signature_type() {
        let (k, b) = saxpy();
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some("saxpy_kernel(float, float*)"),
                names: Some(&[None]),
            },
        );
        assert_eq!(
            d.disagreements,
            [
                Disagreement::ExplicitArgCount {
                    metadata: 3,
                    signature: 2
                },
                Disagreement::NameCount {
                    metadata: 3,
                    dwarf: 1
                }
            ]
        );
        assert!(d.args.iter().all(|a| a.type_text.is_none()));
        assert!(matches!(d.args[0].value, ArgValue::Bytes(_)));
    }

    #[test]
    fn a_size_or_kind_disagreement_shows_the_argument_as_bytes() {
        let (k, b) = saxpy();
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some("saxpy_kernel(double, int, float*)"),
                names: None,
            },
        );
        assert_eq!(
            d.disagreements,
            [
                Disagreement::ArgSize {
                    index: 0,
                    type_text: "double".into(),
                    type_size: 8,
                    metadata_size: 4
                },
                Disagreement::ArgKind {
                    index: 1,
                    type_text: "int".into(),
                    kind: "global_buffer".into()
                },
                Disagreement::ArgSize {
                    index: 2,
                    type_text: "float*".into(),
                    type_size: 8,
                    metadata_size: 4
                },
            ]
        );
        assert!(
            d.args[..3]
                .iter()
                .all(|a| matches!(a.value, ArgValue::Bytes(_)))
        );
        let codes: Vec<&str> = d.disagreements.iter().map(Disagreement::code).collect();
        assert_eq!(codes, ["arg_size", "arg_kind", "arg_size"]);
    }

    #[test]
    fn a_record_passed_as_its_only_pointer_member_decodes_as_a_pointer() {
        // clang passes `struct { T* p; }` as `global_buffer` (rocPRIM's
        // lookback_scan_state): that is not a disagreement.
        let k = kernel(vec![arg(0, 8, "global_buffer"), arg(8, 8, "by_value")], 16);
        let mut b = vec![0u8; 16];
        b[..8].copy_from_slice(&0x7f00u64.to_le_bytes());
        b[8..].copy_from_slice(&0x7f00u64.to_le_bytes());
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some("k(ns::state<int, true>, ns::state<int, true>)"),
                names: None,
            },
        );
        assert_eq!(d.disagreements, []);
        assert_eq!(d.args[0].value, ArgValue::Pointer(0x7f00));
        assert_eq!(d.args[1].value, ArgValue::Bytes(b[8..].to_vec()));
    }

    #[test]
    fn a_short_block_says_so_and_leaves_the_missing_arguments_unavailable() {
        let (k, b) = saxpy();
        let d = decode(&b[..20], &k, Sources::default());
        assert_eq!(
            d.disagreements[0],
            Disagreement::BlockShort {
                block_len: 20,
                segment_size: 56
            }
        );
        assert!(d.disagreements.contains(&Disagreement::ArgPastBlock {
            index: 3,
            offset: 24,
            size: 8,
            block_len: 20
        }));
        assert_eq!(
            d.args[2].value,
            ArgValue::Bytes(1000i32.to_le_bytes().to_vec())
        );
        assert!(d.args[3..].iter().all(|a| a.value == ArgValue::Unavailable));
        let d = decode(&[], &k, Sources::default());
        assert_eq!(d.args.len(), 8);
        assert!(d.args.iter().all(|a| a.value == ArgValue::Unavailable));
    }

    #[test]
    fn an_argument_outside_the_segment_or_with_an_absurd_size_never_panics() {
        let k = kernel(
            vec![
                arg(u64::MAX, 8, "by_value"),
                arg(0, u64::MAX, "global_buffer"),
                arg(8, 0, "by_value"),
                arg(0, 1 << 20, "by_value"),
            ],
            16,
        );
        let block = vec![1u8; 2 << 20];
        let d = decode(&block, &k, Sources::default());
        assert_eq!(d.args[0].value, ArgValue::Unavailable);
        assert_eq!(d.args[1].value, ArgValue::Unavailable);
        assert_eq!(d.args[2].value, ArgValue::Bytes(vec![]));
        assert_eq!(
            d.args[3].value,
            ArgValue::Bytes(vec![1; MAX_ARG_BYTES as usize])
        );
        assert!(d.disagreements.contains(&Disagreement::ArgTooLarge {
            index: 3,
            size: 1 << 20
        }));
        assert!(
            d.disagreements
                .iter()
                .any(|x| x.code() == "arg_outside_segment")
        );
    }

    #[test]
    fn scalars_of_every_width_decode_with_their_sign() {
        let cases: [(&str, Vec<u8>, ArgValue); 12] = [
            ("bool", vec![1], ArgValue::Bool(true)),
            ("char", vec![0xff], ArgValue::Int(-1)),
            ("unsigned char", vec![0xff], ArgValue::Uint(255)),
            ("short", (-2i16).to_le_bytes().to_vec(), ArgValue::Int(-2)),
            ("unsigned short", vec![0xfe, 0xff], ArgValue::Uint(65534)),
            ("int", (-3i32).to_le_bytes().to_vec(), ArgValue::Int(-3)),
            (
                "unsigned int",
                u32::MAX.to_le_bytes().to_vec(),
                ArgValue::Uint(u32::MAX.into()),
            ),
            (
                "long",
                i64::MIN.to_le_bytes().to_vec(),
                ArgValue::Int(i64::MIN.into()),
            ),
            (
                "unsigned long long",
                u64::MAX.to_le_bytes().to_vec(),
                ArgValue::Uint(u64::MAX.into()),
            ),
            (
                "__int128",
                (-5i128).to_le_bytes().to_vec(),
                ArgValue::Int(-5),
            ),
            (
                "__half",
                0x3c00u16.to_le_bytes().to_vec(),
                ArgValue::F16(0x3c00),
            ),
            ("double", 0.1f64.to_le_bytes().to_vec(), ArgValue::F64(0.1)),
        ];
        for (ty, bytes, want) in cases {
            let k = kernel(vec![arg(0, bytes.len() as u64, "by_value")], 16);
            let sig = format!("k({ty})");
            let d = decode(
                &bytes,
                &k,
                Sources {
                    signature: Some(&sig),
                    names: None,
                },
            );
            assert_eq!(d.args[0].value, want, "{ty}");
        }
    }

    #[test]
    fn vectors_decode_lane_by_lane() {
        let mut b = Vec::new();
        for x in [1.0f32, 2.0, 3.0, 4.0] {
            b.extend_from_slice(&x.to_le_bytes());
        }
        let k = kernel(vec![arg(0, 16, "by_value"), arg(0, 16, "by_value")], 16);
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some("k(HIP_vector_type<float, 4u>, HIP_vector_type<float, 3u>)"),
                names: None,
            },
        );
        assert_eq!(d.disagreements, []);
        assert_eq!(d.args[0].value.text(), "(1.0, 2.0, 3.0, 4.0)");
        assert_eq!(d.args[1].value.text(), "(1.0, 2.0, 3.0)");
    }

    #[test]
    fn values_serialise_as_numbers_hex_strings_or_null() {
        let j = |v: ArgValue| serde_json::to_string(&v).unwrap();
        assert_eq!(j(ArgValue::F32(2.0)), "2.0");
        assert_eq!(j(ArgValue::F32(0.1)), "0.1");
        assert_eq!(j(ArgValue::F64(f64::NAN)), "\"NaN\"");
        assert_eq!(j(ArgValue::F32(f32::NEG_INFINITY)), "\"-inf\"");
        assert_eq!(j(ArgValue::F16(0x3800)), "0.5");
        assert_eq!(j(ArgValue::Uint(u64::MAX.into())), "18446744073709551615");
        assert_eq!(j(ArgValue::Uint(u128::MAX)), format!("\"{}\"", u128::MAX));
        assert_eq!(j(ArgValue::Int(-7)), "-7");
        assert_eq!(j(ArgValue::Pointer(0x7f00)), "\"0x7f00\"");
        assert_eq!(j(ArgValue::Bytes(vec![1, 0xab])), "\"01ab\"");
        assert_eq!(j(ArgValue::Unavailable), "null");
        let (k, b) = saxpy();
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some(SAXPY),
                names: None,
            },
        );
        let v = serde_json::to_value(&d.args[1]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"index": 1, "name": null, "type": "float*",
                "kind": "global_buffer", "offset": 8, "size": 8, "value": "0x7f0000001000"})
        );
        let v = serde_json::to_value(&d.disagreements).unwrap();
        assert_eq!(v, serde_json::json!([]));
        let v = serde_json::to_value(Disagreement::BlockShort {
            block_len: 1,
            segment_size: 2,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"code": "block_short", "block_len": 1, "segment_size": 2})
        );
    }

    #[test]
    fn the_annotator_adds_text_after_each_pointer() {
        let (k, b) = saxpy();
        let d = decode(
            &b,
            &k,
            Sources {
                signature: Some(SAXPY),
                names: None,
            },
        );
        let mut asked = Vec::new();
        let text = d.call_text(&mut |a, p| {
            asked.push((a.index, p));
            Some("(alloc 3 +0 of 4000 B)".into())
        });
        assert_eq!(
            text,
            "saxpy_kernel(float 2.0, float* 0x7f0000001000 (alloc 3 +0 of 4000 B), int 1000)"
        );
        assert_eq!(asked, [(1, 0x7f00_0000_1000)]);
    }

    #[test]
    fn halves_convert_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8001), -(2f32.powi(-24)));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000);
        assert_eq!(bf16_to_f32(0x3f80), 1.0);
    }

    proptest::proptest! {
        #[test]
        fn any_signature_table_and_block_decode_without_panicking(
            name in "[a-z:<>(), *&{}0-9]{0,80}",
            block in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..96),
            table in proptest::collection::vec((0u64..128, 0u64..40, 0usize..8), 0..10),
        ) {
            const KINDS: [&str; 8] = [
                "by_value", "global_buffer", "dynamic_shared_pointer", "hidden_block_count_x",
                "hidden_grid_dims", "hidden_printf_buffer", "hidden_none", "hidden_new_kind",
            ];
            let k = kernel(
                table.iter().map(|&(o, n, kind)| arg(o, n, KINDS[kind])).collect(),
                64,
            );
            let sig = format!("k({name})");
            let d = decode(&block, &k, Sources { signature: Some(&sig), names: None });
            proptest::prop_assert_eq!(d.args.len(), k.args.len());
            for a in &d.args {
                let fits = a.offset + a.size <= block.len() as u64;
                proptest::prop_assert_eq!(a.value == ArgValue::Unavailable, !fits);
            }
            let _ = d.call_text_plain();
            serde_json::to_string(&d).unwrap();
        }
    }
}
