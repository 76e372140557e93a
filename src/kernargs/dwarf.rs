//! Argument names from DWARF, for code objects built with `-g`.
//!
//! A kernel's `DW_TAG_subprogram` is the one whose linkage name
//! (`DW_AT_linkage_name`, directly or through `DW_AT_specification` /
//! `DW_AT_abstract_origin`) is the kernel's symbol without `.kd`; its
//! `DW_TAG_formal_parameter` children, in order, name its explicit arguments
//! (a parameter without `DW_AT_name` takes its abstract origin's). The
//! sections are read with `gimli` from the code object's section headers
//! (see [`crate::code_object::section_named`]).
//!
//! Bounded: a DWARF section larger than [`MAX_DEBUG_SECTION_BYTES`] or more
//! than [`MAX_ENTRIES`] debugging entries is a typed [`DwarfError`], as is any
//! malformed structure `gimli` reports; nothing here panics. A code object
//! without `.debug_info` has no names, which is not an error.

use std::collections::HashMap;

use gimli::{AttributeValue, EndianSlice, LittleEndian, SectionId};

use crate::code_object::{CodeObjectError, section_named};

/// Largest DWARF section read.
pub const MAX_DEBUG_SECTION_BYTES: u64 = 256 << 20;
/// Most debugging information entries visited in one code object.
pub const MAX_ENTRIES: u64 = 1 << 24;
/// Most `DW_AT_specification` / `DW_AT_abstract_origin` links followed for
/// one entry.
pub const MAX_ORIGIN_HOPS: u32 = 8;

/// Why the DWARF of a code object could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DwarfError {
    #[error("code object: {0}")]
    CodeObject(#[from] CodeObjectError),
    #[error("DWARF section {section} of {size} bytes exceeds the {limit}-byte limit")]
    SectionTooLarge {
        section: &'static str,
        size: u64,
        limit: u64,
    },
    #[error("more than {limit} DWARF debugging information entries")]
    TooManyEntries { limit: u64 },
    #[error("malformed DWARF: {0}")]
    Malformed(gimli::Error),
}

impl From<gimli::Error> for DwarfError {
    fn from(e: gimli::Error) -> Self {
        DwarfError::Malformed(e)
    }
}

type Reader<'a> = EndianSlice<'a, LittleEndian>;

/// The explicit-argument names of every kernel (every subprogram with a
/// linkage name) that the DWARF of one code object describes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParameterNames {
    by_linkage_name: HashMap<String, Vec<Option<String>>>,
}

impl ParameterNames {
    /// Reads the DWARF of a code object (the bytes of one AMDGPU ELF).
    pub fn read(code_object: &[u8]) -> Result<ParameterNames, DwarfError> {
        if section_named(code_object, ".debug_info")?.is_none() {
            return Ok(ParameterNames::default());
        }
        let load = |id: SectionId| -> Result<Reader<'_>, DwarfError> {
            let data = section_named(code_object, id.name())?.unwrap_or(&[]);
            if data.len() as u64 > MAX_DEBUG_SECTION_BYTES {
                return Err(DwarfError::SectionTooLarge {
                    section: id.name(),
                    size: data.len() as u64,
                    limit: MAX_DEBUG_SECTION_BYTES,
                });
            }
            Ok(EndianSlice::new(data, LittleEndian))
        };
        let dwarf = gimli::Dwarf::load(load)?;
        let mut budget = Budget(0);
        let mut out = ParameterNames::default();
        let mut units = dwarf.units();
        while let Some(header) = units.next()? {
            let unit = dwarf.unit(header)?;
            let mut subprograms = Vec::new();
            let mut entries = unit.entries();
            while let Some((_, entry)) = entries.next_dfs()? {
                budget.charge()?;
                if entry.tag() == gimli::DW_TAG_subprogram {
                    subprograms.push(entry.offset());
                }
            }
            for offset in subprograms {
                let entry = unit.entry(offset)?;
                let Some(linkage) = linkage_name(&dwarf, &unit, &entry, &mut budget)? else {
                    continue;
                };
                let names = parameters(&dwarf, &unit, offset, &mut budget)?;
                let named = |v: &[Option<String>]| v.iter().filter(|n| n.is_some()).count();
                match out.by_linkage_name.get(&linkage) {
                    // A declaration and a definition (or several concrete
                    // instances): keep the one that names the most.
                    Some(have) if named(have) >= named(&names) => {}
                    _ => {
                        out.by_linkage_name.insert(linkage, names);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The parameter names of the kernel whose descriptor symbol (`x.kd`) or
    /// linkage name (`x`) is `symbol`, in order; `None` for a parameter that
    /// has no name. `None` when the DWARF does not describe the kernel.
    pub fn kernel(&self, symbol: &str) -> Option<&[Option<String>]> {
        let base = symbol.strip_suffix(".kd").unwrap_or(symbol);
        self.by_linkage_name.get(base).map(Vec::as_slice)
    }

    /// Whether no subprogram with a linkage name was found.
    pub fn is_empty(&self) -> bool {
        self.by_linkage_name.is_empty()
    }

    /// How many subprograms with a linkage name were found.
    pub fn len(&self) -> usize {
        self.by_linkage_name.len()
    }
}

/// Counts entries visited against [`MAX_ENTRIES`].
struct Budget(u64);

impl Budget {
    fn charge(&mut self) -> Result<(), DwarfError> {
        self.0 += 1;
        if self.0 > MAX_ENTRIES {
            return Err(DwarfError::TooManyEntries { limit: MAX_ENTRIES });
        }
        Ok(())
    }
}

type Unit<'a> = gimli::Unit<Reader<'a>>;
type Entry<'a, 'u> = gimli::DebuggingInformationEntry<'u, 'u, Reader<'a>>;

fn string_attr<'a>(
    dwarf: &gimli::Dwarf<Reader<'a>>,
    unit: &Unit<'a>,
    entry: &Entry<'a, '_>,
    names: &[gimli::DwAt],
) -> Result<Option<String>, DwarfError> {
    for &at in names {
        if let Some(v) = entry.attr_value(at)? {
            let s = dwarf.attr_string(unit, v)?;
            return Ok(Some(s.to_string_lossy().into_owned()));
        }
    }
    Ok(None)
}

/// An attribute of `entry`, or of the entries it refers to through
/// `DW_AT_specification` / `DW_AT_abstract_origin` (same unit only).
fn attr_through_origins<'a>(
    dwarf: &gimli::Dwarf<Reader<'a>>,
    unit: &Unit<'a>,
    entry: &Entry<'a, '_>,
    names: &[gimli::DwAt],
    budget: &mut Budget,
) -> Result<Option<String>, DwarfError> {
    if let Some(s) = string_attr(dwarf, unit, entry, names)? {
        return Ok(Some(s));
    }
    let mut next = origin(entry)?;
    let mut hops = 0;
    while let Some(offset) = next {
        hops += 1;
        if hops > MAX_ORIGIN_HOPS {
            return Ok(None);
        }
        budget.charge()?;
        let e = unit.entry(offset)?;
        if let Some(s) = string_attr(dwarf, unit, &e, names)? {
            return Ok(Some(s));
        }
        next = origin(&e)?;
    }
    Ok(None)
}

fn origin(entry: &Entry<'_, '_>) -> Result<Option<gimli::UnitOffset>, DwarfError> {
    for at in [gimli::DW_AT_specification, gimli::DW_AT_abstract_origin] {
        if let Some(AttributeValue::UnitRef(o)) = entry.attr_value(at)? {
            return Ok(Some(o));
        }
    }
    Ok(None)
}

fn linkage_name<'a>(
    dwarf: &gimli::Dwarf<Reader<'a>>,
    unit: &Unit<'a>,
    entry: &Entry<'a, '_>,
    budget: &mut Budget,
) -> Result<Option<String>, DwarfError> {
    attr_through_origins(
        dwarf,
        unit,
        entry,
        &[gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name],
        budget,
    )
}

/// The names of the `DW_TAG_formal_parameter` children of the entry at
/// `offset`, in order.
fn parameters<'a>(
    dwarf: &gimli::Dwarf<Reader<'a>>,
    unit: &Unit<'a>,
    offset: gimli::UnitOffset,
    budget: &mut Budget,
) -> Result<Vec<Option<String>>, DwarfError> {
    let mut tree = unit.entries_tree(Some(offset))?;
    let root = tree.root()?;
    let mut children = root.children();
    let mut out = Vec::new();
    while let Some(child) = children.next()? {
        budget.charge()?;
        let e = child.entry();
        if e.tag() != gimli::DW_TAG_formal_parameter {
            continue;
        }
        if let Some(AttributeValue::Flag(true)) = e.attr_value(gimli::DW_AT_artificial)? {
            continue;
        }
        out.push(attr_through_origins(
            dwarf,
            unit,
            e,
            &[gimli::DW_AT_name],
            budget,
        )?);
    }
    Ok(out)
}

/// The parameter names of one kernel (`x.kd` or `x`): see
/// [`ParameterNames::read`] and [`ParameterNames::kernel`]. `Ok(None)` when the
/// code object has no DWARF or the DWARF does not describe the kernel.
pub fn parameter_names(
    code_object: &[u8],
    symbol: &str,
) -> Result<Option<Vec<Option<String>>>, DwarfError> {
    Ok(ParameterNames::read(code_object)?
        .kernel(symbol)
        .map(<[_]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_an_elf_is_a_typed_error() {
        assert_eq!(
            ParameterNames::read(b"not an elf"),
            Err(DwarfError::CodeObject(CodeObjectError::NotElf))
        );
        assert!(ParameterNames::read(&[]).is_err());
    }

    #[test]
    fn garbage_after_a_valid_header_never_panics() {
        // A minimal ELF64 AMDGPU header whose section table points anywhere.
        let mut base = vec![0u8; 64];
        base[..4].copy_from_slice(b"\x7fELF");
        base[4] = 2;
        base[5] = 1;
        base[6] = 1;
        base[18] = 224;
        let mut seed = 0x2545f491u32;
        for len in [64usize, 128, 512, 4096] {
            for _ in 0..64 {
                let mut b = base.clone();
                b.resize(len, 0);
                for byte in b.iter_mut().skip(24) {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    *byte = seed as u8;
                }
                let _ = ParameterNames::read(&b);
            }
        }
    }

    #[test]
    fn kernel_lookup_accepts_the_descriptor_symbol_or_the_linkage_name() {
        let mut p = ParameterNames::default();
        p.by_linkage_name
            .insert("_Z1kfi".into(), vec![Some("a".into()), None]);
        assert_eq!(p.kernel("_Z1kfi.kd"), p.kernel("_Z1kfi"));
        assert_eq!(p.kernel("_Z1kfi").unwrap()[0].as_deref(), Some("a"));
        assert_eq!(p.kernel("other.kd"), None);
        assert_eq!(p.len(), 1);
    }
}
