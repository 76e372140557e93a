//! AMDGPU code objects: a bounded ELF64 reader for what the HSA loader needs.
//!
//! HIP hands the runtime one AMDGPU ELF per device (already cut out of the fat
//! binary) through `hsa_code_object_reader_create_from_memory`. The virtual
//! runtime never runs the code, but it must answer symbol queries exactly and
//! hand out kernel descriptor addresses that hold the real descriptor bytes.
//! This module turns those bytes into a [`CodeObject`]: the loadable segments,
//! the symbols, the dynamic relocations, the kernel descriptors and the
//! metadata note, and builds the relocated load image for a chosen base.
//!
//! Why our own reader: the input is untrusted, and the part of ELF a code
//! object uses is small (file header, program headers, section headers,
//! symbol tables, RELA, notes). Every read is bounds-checked, every sum is
//! checked, and nothing is allocated from a length field before that length
//! has been checked against the bytes that back it. Limits (the `MAX_*`
//! constants) cap what a file can make us allocate.
//!
//! How it fails: any malformed structure the loader depends on is a typed
//! [`CodeObjectError`] from [`parse`], never a panic, and never a partly
//! loaded object. The metadata notes are optional to loading. A code object
//! may hold many NT_AMDGPU_METADATA notes (Tensile's code objects hold one per
//! kernel): every one is decoded and their kernels are merged, in file order,
//! into [`CodeObject::metadata`]. A malformed note, or two notes that describe
//! one kernel differently, is reported by [`CodeObject::metadata_problems`]
//! and leaves the kernels it would have described without metadata (they are
//! still kernels: their descriptors are read as usual); the other notes are
//! still used.

pub mod bundle;
mod demangle;
pub mod dynsym;
mod elf;
mod error;
mod kd;
mod metadata;
pub mod msgpack;

use std::collections::HashMap;
use std::hash::BuildHasher as _;

pub use demangle::{Rewritten, demangle, kernel_name, rewrite_for_cpp_demangle};
pub use elf::{EF_AMDGPU_MACH, ELFOSABI_AMDGPU_HSA, EM_AMDGPU, RelocationType};
pub use error::CodeObjectError;
pub use kd::{KERNEL_DESCRIPTOR_SIZE, KernelDescriptor};
pub use metadata::{KernelArg, KernelMetadata, Metadata};

use elf::*;
use object::ReadRef;
use object::read::elf::{
    FileHeader as _, NoteHeader as _, ProgramHeader as _, Rela as _, SectionHeader as _, Sym as _,
};

/// Largest code object accepted.
pub const MAX_FILE_SIZE: u64 = 1 << 30;
/// Most program headers accepted.
pub const MAX_SEGMENTS: u64 = 4096;
/// Most section headers accepted.
pub const MAX_SECTIONS: u64 = 65536;
/// Most entries accepted in one symbol table.
pub const MAX_SYMBOLS: u64 = 1 << 20;
/// Most dynamic relocations accepted, over all sections.
pub const MAX_RELOCATIONS: u64 = 1 << 22;
/// Longest symbol name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 64 * 1024;
/// Most string table bytes read for symbol names, over all lookups. Names in
/// a string table may overlap and symbols may repeat them, so this bounds the
/// copying and scanning a small file can cause.
pub const MAX_NAME_BYTES: u64 = 64 << 20;
/// Largest loaded image accepted (`load_size`).
pub const MAX_LOAD_SIZE: u64 = 4 << 30;
/// Largest `p_align` accepted.
pub const MAX_SEGMENT_ALIGN: u64 = 1 << 30;
/// Page size: `load_size` is rounded up to it and `load_align` is at least it.
pub const PAGE_SIZE: u64 = 4096;
/// Largest metadata note accepted.
pub const MAX_METADATA_BYTES: usize = 64 << 20;
/// Deepest MessagePack nesting accepted (real metadata nests about 5 deep).
pub const MAX_METADATA_DEPTH: usize = 32;
/// Most MessagePack values accepted in one metadata note.
pub const MAX_METADATA_ITEMS: usize = 4 << 20;
/// Most NT_AMDGPU_METADATA notes decoded in one code object (one per kernel
/// is the most real code objects have; this is the symbol limit).
pub const MAX_METADATA_NOTES: u64 = 1 << 20;
/// Most metadata note bytes decoded in one code object, over all its notes.
pub const MAX_METADATA_TOTAL_BYTES: u64 = 256 << 20;

/// `e_flags` `EF_AMDGPU_MACH` value of gfx90a.
pub const MACH_GFX90A: u32 = 0x3f;

/// The processor an `EF_AMDGPU_MACH` value names (`0x3f` → `gfx90a`), from
/// the ISA module ([`crate::isa::processor_of_machine`]): the target
/// registry's id, or the ELF format's name for a processor SoftGPU does not
/// model. `None` for a value no processor has.
pub fn processor_name(mach: u32) -> Option<&'static str> {
    crate::isa::processor_of_machine(crate::isa::ElfMachine(mach))
}

/// A target feature setting from `e_flags`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// The processor does not have the feature (v4+: field 0).
    Unsupported,
    /// Code runs with the feature on or off (v4+ only).
    Any,
    Off,
    On,
}

/// What a symbol names, as the loader sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    /// A kernel descriptor: an `STT_OBJECT` named `<kernel>.kd`.
    Kernel,
    /// Any other `STT_OBJECT`: a `__device__`/`__constant__` variable.
    Variable,
    /// `STT_FUNC`: a kernel's or device function's machine code.
    Function,
    /// Anything else that is defined in the image (`STT_NOTYPE`, ...).
    Other,
}

/// A symbol defined in the loaded image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// Offset in the loaded image (`st_value`; image offsets are `p_vaddr`s).
    pub value: u64,
    pub size: u64,
    /// Visible outside the code object (`STB_GLOBAL`, `STB_WEAK`, ...).
    pub global: bool,
}

/// A PT_LOAD segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// Offset in the loaded image.
    pub vaddr: u64,
    pub mem_size: u64,
    pub file_size: u64,
    pub align: u64,
    /// `p_flags`: PF_X 1, PF_W 2, PF_R 4.
    pub flags: u32,
}

/// A dynamic relocation, validated: its type is one the loader applies and its
/// bytes lie inside the image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    pub kind: RelocationType,
    /// Image offset of the bytes it writes.
    pub offset: u64,
    pub addend: i64,
    /// Index into `CodeObject::reloc_symbols`, or `None` for symbol 0.
    symbol: Option<usize>,
}

/// What a relocation's symbol resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    /// Defined in this image: S = base + value.
    Image(u64),
    /// `SHN_ABS`: S = value.
    Absolute(u64),
    /// Undefined: S comes from the caller's resolver; weak ones default to 0.
    Undefined { weak: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct RelocSymbol {
    name: String,
    target: Target,
}

/// A parsed, validated AMDGPU code object.
#[derive(Clone, Debug)]
pub struct CodeObject {
    pub e_flags: u32,
    /// `e_flags & EF_AMDGPU_MACH` (gfx90a is [`MACH_GFX90A`]).
    pub mach: u32,
    /// `EI_ABIVERSION`: 1, 2, 3, 4 for code object v3, v4, v5, v6.
    pub abi_version: u8,
    pub xnack: Feature,
    pub sramecc: Feature,
    /// Bytes of the loaded image: the highest `p_vaddr + p_memsz` of the
    /// PT_LOAD segments, rounded up to [`PAGE_SIZE`].
    pub load_size: u64,
    /// The largest PT_LOAD `p_align`, and at least [`PAGE_SIZE`].
    pub load_align: u64,
    /// Defined symbols of `.dynsym` then `.symtab`; a name appears once (the
    /// first definition wins).
    pub symbols: Vec<Symbol>,
    segments: Vec<LoadSegment>,
    segment_data: Vec<Vec<u8>>,
    relocations: Vec<Relocation>,
    reloc_symbols: Vec<RelocSymbol>,
    /// Indices into `symbols`, by name: hashed once with `hasher` when
    /// parsed, with no second copy of the names.
    by_name: SymbolIndex,
    metadata: MetadataNotes,
}

/// The index of [`CodeObject::symbols`] by name: indices, found by the hash
/// of the name (SipHash with a random key, as `HashMap`'s) and compared with
/// the symbol's own name. A table of 200,000 kernels has 400,000 names (the
/// descriptor and the function), each in `.dynsym` and `.symtab`: each
/// occurrence is hashed once and no name is copied twice.
#[derive(Clone, Debug, Default)]
struct SymbolIndex {
    table: hashbrown::HashTable<usize>,
    hasher: std::hash::RandomState,
}

impl SymbolIndex {
    fn hash(&self, name: &str) -> u64 {
        self.hasher.hash_one(name)
    }

    /// The index of the symbol named `name` in `symbols`.
    fn get(&self, symbols: &[Symbol], name: &str) -> Option<usize> {
        self.table
            .find(self.hash(name), |&i| {
                symbols.get(i).is_some_and(|s| s.name == name)
            })
            .copied()
    }
}

/// What the metadata notes of a code object said, merged.
#[derive(Clone, Debug, Default)]
struct MetadataNotes {
    /// The merged metadata: `None` when no note decoded.
    merged: Option<Metadata>,
    /// NT_AMDGPU_METADATA notes found (decoded or not).
    notes: u64,
    problems: Vec<MetadataProblem>,
}

/// A metadata note that could not be used, or a disagreement between notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetadataProblem {
    /// File offset of the note record (its 12-byte header) in the code object.
    pub note_offset: u64,
    pub error: CodeObjectError,
}

/// One section header plus its index.
#[derive(Clone, Copy)]
struct Section<'a> {
    index: usize,
    hdr: &'a SectionHeader,
}

/// A symbol table with its string table, both bounds-checked.
struct SymbolTable<'a> {
    entries: &'a [Sym],
    strtab: &'a [u8],
    strtab_index: usize,
}

impl<'a> SymbolTable<'a> {
    fn count(&self) -> u64 {
        self.entries.len() as u64
    }

    fn get(&self, i: u64) -> Option<&'a Sym> {
        self.entries.get(usize::try_from(i).ok()?)
    }

    fn name(&self, st_name: u32, budget: &mut NameBudget) -> Result<&'a str, CodeObjectError> {
        let section = self.strtab_index;
        let offset = u64::from(st_name);
        let rest = usize::try_from(st_name)
            .ok()
            .and_then(|o| self.strtab.get(o..))
            .ok_or(CodeObjectError::StringOutOfBounds { section, offset })?;
        let window = &rest[..rest.len().min(MAX_NAME_LEN + 1)];
        let found = window.iter().position(|&c| c == 0);
        budget.charge(found.map_or(window.len(), |e| e + 1))?;
        let Some(end) = found else {
            return Err(if window.len() > MAX_NAME_LEN {
                CodeObjectError::NameTooLong { section, offset }
            } else {
                CodeObjectError::StringUnterminated { section, offset }
            });
        };
        std::str::from_utf8(&window[..end])
            .map_err(|_| CodeObjectError::NameNotUtf8 { section, offset })
    }
}

/// Parses and validates a code object. The result owns copies of the bytes it
/// needs; `bytes` may be dropped afterwards.
pub fn parse(bytes: &[u8]) -> Result<CodeObject, CodeObjectError> {
    let len = bytes.len() as u64;
    if len > MAX_FILE_SIZE {
        return Err(CodeObjectError::TooLarge {
            size: len,
            limit: MAX_FILE_SIZE,
        });
    }
    if bytes.get(..4) != Some(&ELF_MAGIC[..]) {
        return Err(CodeObjectError::NotElf);
    }
    // The header's fields are checked here, one typed error each, rather
    // than by `FileHeader::parse`, whose one error says none of them.
    let h: &FileHeader = bytes.read_at(0).map_err(|()| CodeObjectError::Truncated {
        what: "ELF header",
        offset: 0,
    })?;
    let ident = h.e_ident();
    let (class, data, osabi, abi_version) =
        (ident.class, ident.data, ident.os_abi.0, ident.abi_version);
    if class != ELFCLASS64 || data != ELFDATA2LSB {
        return Err(CodeObjectError::Not64BitLittleEndian {
            class: class.0,
            data: data.0,
        });
    }
    if ident.version != EV_CURRENT {
        return Err(CodeObjectError::UnsupportedElfVersion {
            version: u32::from(ident.version.0),
        });
    }
    if h.e_version(LE) != u32::from(EV_CURRENT.0) {
        return Err(CodeObjectError::UnsupportedElfVersion {
            version: h.e_version(LE),
        });
    }
    if h.e_machine(LE).0 != EM_AMDGPU {
        return Err(CodeObjectError::NotAmdgpu {
            machine: h.e_machine(LE).0,
        });
    }
    if osabi != ELFOSABI_AMDGPU_HSA {
        return Err(CodeObjectError::UnsupportedOsAbi { osabi });
    }
    if !(1..=4).contains(&abi_version) {
        return Err(CodeObjectError::UnsupportedAbiVersion {
            version: abi_version,
        });
    }
    if h.e_type(LE) != ET_DYN {
        return Err(CodeObjectError::NotSharedObject {
            e_type: h.e_type(LE).0,
        });
    }
    let e_flags = h.e_flags(LE).0;
    let (xnack, sramecc) = features(abi_version, e_flags);

    let phdrs = program_headers(bytes, h)?;
    let layout = layout(bytes, phdrs)?;
    let sections = section_headers(bytes, h)?;

    let mut names = NameBudget(0);
    let (symbols, by_name) = symbols(bytes, &sections, layout.load_size, &mut names)?;
    let (relocations, reloc_symbols) = relocations(bytes, &sections, layout.load_size, &mut names)?;
    let metadata = read_metadata(bytes, &sections, phdrs);

    let (segments, segment_data) = layout.segments.into_iter().unzip();
    Ok(CodeObject {
        e_flags,
        mach: e_flags & EF_AMDGPU_MACH,
        abi_version,
        xnack,
        sramecc,
        load_size: layout.load_size,
        load_align: layout.load_align,
        symbols,
        segments,
        segment_data,
        relocations,
        reloc_symbols,
        by_name,
        metadata,
    })
}

/// The file bytes of the section named `name` (e.g. `.debug_info`) of an
/// AMDGPU code object, `None` when it has no such section (or the section
/// occupies no file bytes). Only the ELF header and the section headers are
/// read, with the bounds [`parse`] applies; the first section of that name wins.
/// For sections the loader does not use: the DWARF sections of a `-g` build
/// (see `crate::kernargs::dwarf`).
pub fn section_named<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, CodeObjectError> {
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(CodeObjectError::TooLarge {
            size: bytes.len() as u64,
            limit: MAX_FILE_SIZE,
        });
    }
    if bytes.get(..4) != Some(&ELF_MAGIC[..]) {
        return Err(CodeObjectError::NotElf);
    }
    let h: &FileHeader = bytes.read_at(0).map_err(|()| CodeObjectError::Truncated {
        what: "ELF header",
        offset: 0,
    })?;
    let ident = h.e_ident();
    if ident.class != ELFCLASS64 || ident.data != ELFDATA2LSB {
        return Err(CodeObjectError::Not64BitLittleEndian {
            class: ident.class.0,
            data: ident.data.0,
        });
    }
    if h.e_machine(LE).0 != EM_AMDGPU {
        return Err(CodeObjectError::NotAmdgpu {
            machine: h.e_machine(LE).0,
        });
    }
    let sections = section_headers(bytes, h)?;
    if sections.is_empty() {
        return Ok(None);
    }
    let names_index = match h.e_shstrndx(LE) {
        SHN_XINDEX => u64::from(sections[0].hdr.sh_link(LE)),
        n => u64::from(n.0),
    };
    let names = usize::try_from(names_index)
        .ok()
        .and_then(|i| sections.get(i))
        .filter(|s| has_file_bytes(s.hdr))
        .map(|s| section_bytes(bytes, s))
        .ok_or(CodeObjectError::BadSectionNameTable { index: names_index })?;
    let want = name.as_bytes();
    Ok(sections
        .iter()
        .find(|s| {
            usize::try_from(s.hdr.sh_name(LE))
                .ok()
                .and_then(|at| names.get(at..at.checked_add(want.len() + 1)?))
                .is_some_and(|n| &n[..want.len()] == want && n[want.len()] == 0)
        })
        .filter(|s| has_file_bytes(s.hdr))
        .map(|s| section_bytes(bytes, s)))
}

fn features(abi_version: u8, flags: u32) -> (Feature, Feature) {
    if abi_version == 1 {
        // v3: one bit each, set means on. Clear means off, or that the
        // processor lacks the feature; v3 cannot tell the two apart.
        let bit = |mask| {
            if flags & mask != 0 {
                Feature::On
            } else {
                Feature::Off
            }
        };
        return (
            bit(EF_AMDGPU_FEATURE_XNACK_V3),
            bit(EF_AMDGPU_FEATURE_SRAMECC_V3),
        );
    }
    // v4+: a two-bit field each; the value in units of the field's low bit is
    // 0 unsupported, 1 any, 2 off, 3 on.
    let field = |mask: u32| match (flags & mask) >> mask.trailing_zeros() {
        0 => Feature::Unsupported,
        1 => Feature::Any,
        2 => Feature::Off,
        _ => Feature::On,
    };
    (
        field(EF_AMDGPU_FEATURE_XNACK_V4),
        field(EF_AMDGPU_FEATURE_SRAMECC_V4),
    )
}

fn program_headers<'a>(
    bytes: &'a [u8],
    h: &FileHeader,
) -> Result<&'a [ProgramHeader], CodeObjectError> {
    let (phoff, phnum) = (h.e_phoff(LE), h.e_phnum(LE));
    if phnum == 0 || phoff == 0 {
        return Err(CodeObjectError::NoLoadableSegments);
    }
    if usize::from(h.e_phentsize(LE)) != PHDR_SIZE {
        return Err(CodeObjectError::BadEntrySize {
            what: "program header",
            size: u64::from(h.e_phentsize(LE)),
        });
    }
    // Also refuses PN_XNUM (0xffff), the escape to a count in section 0.
    let count = u64::from(phnum);
    if count > MAX_SEGMENTS {
        return Err(CodeObjectError::TooManySegments { count });
    }
    h.program_headers(LE, bytes)
        .map_err(|_| CodeObjectError::Truncated {
            what: "program header table",
            offset: phoff,
        })
}

/// The fields of a program header the layout checks, read once.
struct Segment {
    p_offset: u64,
    p_vaddr: u64,
    p_filesz: u64,
    p_memsz: u64,
    p_align: u64,
}

impl Segment {
    fn of(p: &ProgramHeader) -> Segment {
        Segment {
            p_offset: p.p_offset(LE),
            p_vaddr: p.p_vaddr(LE),
            p_filesz: p.p_filesz(LE),
            p_memsz: p.p_memsz(LE),
            p_align: p.p_align(LE),
        }
    }
}

struct Layout {
    segments: Vec<(LoadSegment, Vec<u8>)>,
    load_size: u64,
    load_align: u64,
}

fn layout(bytes: &[u8], phdrs: &[ProgramHeader]) -> Result<Layout, CodeObjectError> {
    let mut loads: Vec<(usize, LoadSegment, &[u8])> = Vec::new();
    let mut end = 0u64;
    let mut load_align = PAGE_SIZE;
    for (index, ph) in phdrs.iter().enumerate() {
        if ph.p_type(LE) != PT_LOAD {
            continue;
        }
        let p = Segment::of(ph);
        if p.p_filesz > p.p_memsz {
            return Err(CodeObjectError::SegmentFileSizeExceedsMemorySize { index });
        }
        let data =
            slice(bytes, p.p_offset, p.p_filesz).ok_or(CodeObjectError::SegmentOutOfBounds {
                index,
                offset: p.p_offset,
                size: p.p_filesz,
            })?;
        if (p.p_align != 0 && !p.p_align.is_power_of_two()) || p.p_align > MAX_SEGMENT_ALIGN {
            return Err(CodeObjectError::BadSegmentAlignment {
                index,
                align: p.p_align,
            });
        }
        let seg_end = p
            .p_vaddr
            .checked_add(p.p_memsz)
            .filter(|&e| e <= MAX_LOAD_SIZE)
            .ok_or(CodeObjectError::LoadSizeTooLarge {
                limit: MAX_LOAD_SIZE,
            })?;
        if p.p_memsz == 0 {
            continue;
        }
        end = end.max(seg_end);
        load_align = load_align.max(p.p_align);
        let seg = LoadSegment {
            vaddr: p.p_vaddr,
            mem_size: p.p_memsz,
            file_size: p.p_filesz,
            align: p.p_align,
            flags: ph.p_flags(LE).0,
        };
        loads.push((index, seg, data));
    }
    if loads.is_empty() {
        return Err(CodeObjectError::NoLoadableSegments);
    }
    loads.sort_by_key(|(_, s, _)| s.vaddr);
    for pair in loads.windows(2) {
        if let [(first, a, _), (second, b, _)] = pair {
            // Sums are below MAX_LOAD_SIZE (checked above).
            if a.vaddr + a.mem_size > b.vaddr {
                return Err(CodeObjectError::OverlappingSegments {
                    first: *first,
                    second: *second,
                });
            }
        }
    }
    let load_size = end
        .checked_next_multiple_of(PAGE_SIZE)
        .filter(|&s| s <= MAX_LOAD_SIZE)
        .ok_or(CodeObjectError::LoadSizeTooLarge {
            limit: MAX_LOAD_SIZE,
        })?;
    Ok(Layout {
        segments: loads.into_iter().map(|(_, s, d)| (s, d.to_vec())).collect(),
        load_size,
        load_align,
    })
}

fn section_headers<'a>(
    bytes: &'a [u8],
    h: &FileHeader,
) -> Result<Vec<Section<'a>>, CodeObjectError> {
    let shoff = h.e_shoff(LE);
    if shoff == 0 {
        return Ok(Vec::new());
    }
    if usize::from(h.e_shentsize(LE)) != SHDR_SIZE {
        return Err(CodeObjectError::BadEntrySize {
            what: "section header",
            size: u64::from(h.e_shentsize(LE)),
        });
    }
    let truncated = CodeObjectError::Truncated {
        what: "section header table",
        offset: shoff,
    };
    // Extended numbering: the count is section 0's sh_size. Bounded here,
    // before `object` reads the table.
    let count = match h.e_shnum(LE) {
        0 => h
            .section_0(LE, bytes)
            .map_err(|_| truncated.clone())?
            .map_or(0, |s0| s0.sh_size(LE)),
        n => u64::from(n),
    };
    if count > MAX_SECTIONS {
        return Err(CodeObjectError::TooManySections { count });
    }
    let headers = h.section_headers(LE, bytes).map_err(|_| truncated)?;
    let mut sections = Vec::with_capacity(headers.len());
    for (index, hdr) in headers.iter().enumerate() {
        if has_file_bytes(hdr) && hdr.data(LE, bytes).is_err() {
            return Err(CodeObjectError::BadSectionHeader {
                index,
                offset: hdr.sh_offset(LE),
                size: hdr.sh_size(LE),
            });
        }
        sections.push(Section { index, hdr });
    }
    Ok(sections)
}

fn section_bytes<'a>(bytes: &'a [u8], s: &Section<'_>) -> &'a [u8] {
    if !has_file_bytes(s.hdr) {
        return &[];
    }
    // Checked in section_headers.
    s.hdr.data(LE, bytes).unwrap_or(&[])
}

fn symbol_table<'a>(
    bytes: &'a [u8],
    sections: &[Section<'a>],
    s: &Section<'a>,
) -> Result<SymbolTable<'a>, CodeObjectError> {
    let (size, entsize) = (s.hdr.sh_size(LE), s.hdr.sh_entsize(LE));
    if entsize != SYM_SIZE as u64 || size % SYM_SIZE as u64 != 0 {
        return Err(CodeObjectError::BadEntrySize {
            what: "symbol",
            size: entsize,
        });
    }
    let count = size / SYM_SIZE as u64;
    if count > MAX_SYMBOLS {
        return Err(CodeObjectError::TooManySymbols { count });
    }
    let link = s.hdr.sh_link(LE);
    let strtab = usize::try_from(link)
        .ok()
        .and_then(|i| sections.get(i))
        .filter(|t| t.hdr.sh_type(LE) == SHT_STRTAB)
        .ok_or(CodeObjectError::BadSectionLink {
            index: s.index,
            link,
        })?;
    Ok(SymbolTable {
        // Whole records (checked above) in bytes checked in section_headers.
        entries: object::pod::slice_from_all_bytes(section_bytes(bytes, s)).unwrap_or(&[]),
        strtab: section_bytes(bytes, strtab),
        strtab_index: strtab.index,
    })
}

/// Counts the string table bytes read for names against [`MAX_NAME_BYTES`],
/// which bounds both the copying and the scanning a file can cause.
struct NameBudget(u64);

impl NameBudget {
    fn charge(&mut self, n: usize) -> Result<(), CodeObjectError> {
        self.0 = self.0.saturating_add(n as u64);
        if self.0 > MAX_NAME_BYTES {
            return Err(CodeObjectError::NamesTooLarge {
                limit: MAX_NAME_BYTES,
            });
        }
        Ok(())
    }
}

fn symbol_tables<'s, 'a>(sections: &'s [Section<'a>]) -> impl Iterator<Item = &'s Section<'a>> {
    // .dynsym first: it is what a dynamic loader resolves against.
    let of = move |t| sections.iter().filter(move |s| s.hdr.sh_type(LE) == t);
    of(SHT_DYNSYM).chain(of(SHT_SYMTAB))
}

type SymbolList = (Vec<Symbol>, SymbolIndex);

fn symbols(
    bytes: &[u8],
    sections: &[Section<'_>],
    load_size: u64,
    names: &mut NameBudget,
) -> Result<SymbolList, CodeObjectError> {
    let mut list: Vec<Symbol> = Vec::new();
    let mut by_name = SymbolIndex::default();
    for s in symbol_tables(sections) {
        let table = symbol_table(bytes, sections, s)?;
        // At most one new name per entry, and the entries are in the file
        // (at most MAX_SYMBOLS of them): reserved once, not rehashed as the
        // index grows.
        by_name.table.reserve(table.entries.len(), |&i| {
            by_name.hasher.hash_one(list[i].name.as_str())
        });
        for i in 1..table.count() {
            let Some(sym) = table.get(i) else { break };
            let t = sym.st_type();
            let shndx = sym.st_shndx(LE);
            if shndx == SHN_UNDEF
                || shndx.is_reserved()
                || t == STT_SECTION
                || t == STT_FILE
                || t == STT_TLS
            {
                continue;
            }
            let name = table.name(sym.st_name(LE), names)?;
            if name.is_empty() {
                continue;
            }
            let hash = by_name.hash(name);
            if by_name
                .table
                .find(hash, |&i| list[i].name == name)
                .is_some()
            {
                continue;
            }
            let Some(section) = sections.get(usize::from(shndx.0)) else {
                return Err(CodeObjectError::BadSymbolSection {
                    name: name.to_owned(),
                    shndx: shndx.0,
                });
            };
            if !section.hdr.sh_flags(LE).contains(SHF_ALLOC) {
                continue;
            }
            let (st_value, st_size) = (sym.st_value(LE), sym.st_size(LE));
            if st_value.checked_add(st_size).is_none_or(|e| e > load_size) {
                return Err(CodeObjectError::SymbolOutOfImage {
                    name: name.to_owned(),
                    value: st_value,
                    size: st_size,
                });
            }
            let kind = match t {
                STT_OBJECT if name.ends_with(".kd") => SymbolKind::Kernel,
                STT_OBJECT => SymbolKind::Variable,
                STT_FUNC => SymbolKind::Function,
                _ => SymbolKind::Other,
            };
            by_name.table.insert_unique(hash, list.len(), |&i| {
                by_name.hasher.hash_one(list[i].name.as_str())
            });
            list.push(Symbol {
                name: name.to_owned(),
                kind,
                value: st_value,
                size: st_size,
                global: sym.st_bind() != STB_LOCAL,
            });
        }
    }
    Ok((list, by_name))
}

type RelocationList = (Vec<Relocation>, Vec<RelocSymbol>);

/// The fields of a RELA entry, read once; the type is ours (AMDGPU's), not
/// `object`'s.
struct RelaFields {
    r_offset: u64,
    r_sym: u64,
    r_type: RelocationType,
    r_addend: i64,
}

impl RelaFields {
    fn of(r: &Rela) -> RelaFields {
        RelaFields {
            r_offset: r.r_offset(LE),
            r_sym: u64::from(r.r_sym(LE, false)),
            r_type: RelocationType(r.r_type(LE, false).0),
            r_addend: r.r_addend(LE),
        }
    }
}

fn relocations(
    bytes: &[u8],
    sections: &[Section<'_>],
    load_size: u64,
    names: &mut NameBudget,
) -> Result<RelocationList, CodeObjectError> {
    let mut out = Vec::new();
    let mut syms: Vec<RelocSymbol> = Vec::new();
    let mut sym_ids: HashMap<(usize, u64), usize> = HashMap::new();
    let mut total = 0u64;
    for s in sections {
        // Dynamic relocations are the allocated ones; non-allocated RELA
        // sections (--emit-relocs) describe the link, not the load.
        if !s.hdr.sh_flags(LE).contains(SHF_ALLOC) {
            continue;
        }
        let sh_type = s.hdr.sh_type(LE);
        if sh_type == SHT_REL {
            return Err(CodeObjectError::UnsupportedRelocationSection {
                index: s.index,
                sh_type: sh_type.0,
            });
        }
        if sh_type != SHT_RELA {
            continue;
        }
        let (size, entsize) = (s.hdr.sh_size(LE), s.hdr.sh_entsize(LE));
        if entsize != RELA_SIZE as u64 || size % RELA_SIZE as u64 != 0 {
            return Err(CodeObjectError::BadEntrySize {
                what: "relocation",
                size: entsize,
            });
        }
        total = total.saturating_add(size / RELA_SIZE as u64);
        if total > MAX_RELOCATIONS {
            return Err(CodeObjectError::TooManyRelocations { count: total });
        }
        let table = match s.hdr.sh_link(LE) {
            0 => None,
            link => {
                let t = usize::try_from(link)
                    .ok()
                    .and_then(|i| sections.get(i))
                    .filter(|t| {
                        let ty = t.hdr.sh_type(LE);
                        ty == SHT_DYNSYM || ty == SHT_SYMTAB
                    })
                    .ok_or(CodeObjectError::BadSectionLink {
                        index: s.index,
                        link,
                    })?;
                Some((t.index, symbol_table(bytes, sections, t)?))
            }
        };
        // Whole records (checked above) in bytes checked in section_headers.
        let entries: &[Rela] =
            object::pod::slice_from_all_bytes(section_bytes(bytes, s)).unwrap_or(&[]);
        for rela in entries {
            let r = RelaFields::of(rela);
            if r.r_type == RelocationType::NONE {
                continue;
            }
            let Some(width) = r.r_type.width() else {
                return Err(CodeObjectError::UnsupportedRelocation {
                    kind: r.r_type,
                    offset: r.r_offset,
                });
            };
            if r.r_offset.checked_add(width).is_none_or(|e| e > load_size) {
                return Err(CodeObjectError::RelocationOutOfImage {
                    kind: r.r_type,
                    offset: r.r_offset,
                });
            }
            let symbol = if r.r_sym == 0 {
                None
            } else {
                let bad = CodeObjectError::BadRelocationSymbol {
                    index: r.r_sym,
                    offset: r.r_offset,
                };
                let Some((table_index, table)) = &table else {
                    return Err(bad);
                };
                let key = (*table_index, r.r_sym);
                match sym_ids.get(&key) {
                    Some(&id) => Some(id),
                    None => {
                        let sym = table.get(r.r_sym).ok_or(bad)?;
                        let name = table.name(sym.st_name(LE), names)?;
                        let target = match sym.st_shndx(LE) {
                            SHN_UNDEF => Target::Undefined {
                                weak: sym.st_bind() == STB_WEAK,
                            },
                            SHN_ABS => Target::Absolute(sym.st_value(LE)),
                            n if !n.is_reserved() && usize::from(n.0) < sections.len() => {
                                Target::Image(sym.st_value(LE))
                            }
                            n => {
                                return Err(CodeObjectError::BadSymbolSection {
                                    name: name.to_owned(),
                                    shndx: n.0,
                                });
                            }
                        };
                        let id = syms.len();
                        syms.push(RelocSymbol {
                            name: name.to_owned(),
                            target,
                        });
                        sym_ids.insert(key, id);
                        Some(id)
                    }
                }
            };
            out.push(Relocation {
                kind: r.r_type,
                offset: r.r_offset,
                addend: r.r_addend,
                symbol,
            });
        }
    }
    Ok((out, syms))
}

/// Notes come from SHT_NOTE sections, or from PT_NOTE segments when the file
/// has no note sections. Every NT_AMDGPU_METADATA note is decoded and merged:
/// see [`merge_note`].
fn read_metadata(bytes: &[u8], sections: &[Section<'_>], phdrs: &[ProgramHeader]) -> MetadataNotes {
    let mut regions: Vec<(u64, u64, u64)> = sections
        .iter()
        .filter(|s| s.hdr.sh_type(LE) == SHT_NOTE)
        .map(|s| {
            (
                s.hdr.sh_offset(LE),
                s.hdr.sh_size(LE),
                s.hdr.sh_addralign(LE),
            )
        })
        .collect();
    if regions.is_empty() {
        regions = phdrs
            .iter()
            .filter(|p| p.p_type(LE) == PT_NOTE)
            .map(|p| (p.p_offset(LE), p.p_filesz(LE), p.p_align(LE)))
            .collect();
    }
    let mut out = MetadataNotes::default();
    // Symbols that two notes describe differently: dropped from `merged` at
    // the end, and never taken from a later note either.
    let mut conflicted: std::collections::HashSet<String> = Default::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut decoded_bytes = 0u64;
    'regions: for (offset, size, align) in regions {
        let mut notes = Notes::new(bytes, offset, size, align);
        loop {
            let note = match notes.next_metadata() {
                Ok(Some(n)) => n,
                Ok(None) => break,
                Err(e) => {
                    // The record lengths of this region cannot be trusted past
                    // a malformed record: go on with the next region.
                    out.problems.push(MetadataProblem {
                        note_offset: e.file_offset().unwrap_or(offset),
                        error: e,
                    });
                    break;
                }
            };
            out.notes += 1;
            decoded_bytes = decoded_bytes.saturating_add(note.desc.len() as u64);
            if out.notes > MAX_METADATA_NOTES || decoded_bytes > MAX_METADATA_TOTAL_BYTES {
                out.problems.push(MetadataProblem {
                    note_offset: note.offset,
                    error: CodeObjectError::TooManyMetadataNotes {
                        limit: if out.notes > MAX_METADATA_NOTES {
                            MAX_METADATA_NOTES
                        } else {
                            MAX_METADATA_TOTAL_BYTES
                        },
                    },
                });
                break 'regions;
            }
            match Metadata::parse(note.desc) {
                Ok(md) => merge_note(&mut out, &mut index, &mut conflicted, md, note.offset),
                Err(error) => out.problems.push(MetadataProblem {
                    note_offset: note.offset,
                    error,
                }),
            }
        }
    }
    if let Some(m) = out.merged.as_mut() {
        if !conflicted.is_empty() {
            m.kernels.retain(|k| !conflicted.contains(&k.symbol));
        }
    }
    out
}

/// Merges one decoded note into `out`. The policy (see docs/CODE_OBJECTS.md):
/// kernels are appended in file order; a kernel that an earlier note already
/// describes identically is kept once; one described differently is a
/// [`CodeObjectError::MetadataConflict`] and loses its metadata (neither note
/// is believed over the other). `amdhsa.version` and `amdhsa.target` come
/// from the first note that states them; a later note stating another value
/// is reported ([`CodeObjectError::MetadataDisagrees`]) and its kernels are
/// still used, since each kernel entry describes its own kernel.
fn merge_note(
    out: &mut MetadataNotes,
    index: &mut HashMap<String, usize>,
    conflicted: &mut std::collections::HashSet<String>,
    md: Metadata,
    note_offset: u64,
) {
    let merged = match out.merged.as_mut() {
        Some(m) => m,
        None => out.merged.insert(Metadata {
            version: md.version,
            target: md.target.clone(),
            kernels: Vec::new(),
        }),
    };
    let mut disagree = |key: &'static str, first: String, this: String| {
        out.problems.push(MetadataProblem {
            note_offset,
            error: CodeObjectError::MetadataDisagrees { key, first, this },
        });
    };
    match (merged.version, md.version) {
        (None, v) => merged.version = v,
        (Some(a), Some(b)) if a != b => disagree(
            "amdhsa.version",
            format!("{}.{}", a[0], a[1]),
            format!("{}.{}", b[0], b[1]),
        ),
        _ => {}
    }
    match (&merged.target, md.target) {
        (None, t) => merged.target = t,
        (Some(a), Some(b)) if *a != b => disagree("amdhsa.target", a.clone(), b),
        _ => {}
    }
    for k in md.kernels {
        match index.get(&k.symbol) {
            Some(&i) => {
                if merged.kernels.get(i) != Some(&k) && conflicted.insert(k.symbol.clone()) {
                    out.problems.push(MetadataProblem {
                        note_offset,
                        error: CodeObjectError::MetadataConflict { symbol: k.symbol },
                    });
                }
            }
            None => {
                index.insert(k.symbol.clone(), merged.kernels.len());
                merged.kernels.push(k);
            }
        }
    }
}

/// One NT_AMDGPU_METADATA note: where its record starts and its descriptor.
struct Note<'a> {
    offset: u64,
    desc: &'a [u8],
}

/// Walks the note records of one region, bounds-checking each.
struct Notes<'a> {
    region: Result<&'a [u8], CodeObjectError>,
    offset: u64,
    align: usize,
    pos: usize,
}

impl<'a> Notes<'a> {
    fn new(bytes: &'a [u8], offset: u64, size: u64, align: u64) -> Self {
        Notes {
            region: slice(bytes, offset, size).ok_or(CodeObjectError::BadNote { offset }),
            offset,
            align: if align == 8 { 8 } else { 4 },
            pos: 0,
        }
    }

    /// The next NT_AMDGPU_METADATA note, `None` at the end of the region, or
    /// the first malformed record (after which the walk ends).
    fn next_metadata(&mut self) -> Result<Option<Note<'a>>, CodeObjectError> {
        let region = match &self.region {
            Ok(r) => *r,
            Err(e) => {
                let e = e.clone();
                self.region = Ok(&[]);
                return Err(e);
            }
        };
        let align = self.align;
        while self.pos < region.len() {
            let pos = self.pos;
            let at = self.offset.saturating_add(pos as u64);
            let bad = CodeObjectError::BadNote { offset: at };
            // Whatever happens below, a malformed record ends the walk.
            self.pos = region.len();
            let hdr: &NoteHeader = region.read_at(pos as u64).map_err(|()| bad.clone())?;
            let (namesz, descsz) = (hdr.n_namesz(LE) as usize, hdr.n_descsz(LE) as usize);
            let n_type = hdr.n_type(LE).0;
            let name_at = pos + NHDR_SIZE;
            let name_end = name_at.checked_add(namesz).ok_or(bad.clone())?;
            let desc_at = name_end
                .checked_next_multiple_of(align)
                .ok_or(bad.clone())?;
            let desc_end = desc_at.checked_add(descsz).ok_or(bad.clone())?;
            let name = region.get(name_at..name_end).ok_or(bad.clone())?;
            let desc = region.get(desc_at..desc_end).ok_or(bad.clone())?;
            self.pos = desc_end.checked_next_multiple_of(align).ok_or(bad)?;
            if n_type == NT_AMDGPU_METADATA && name == b"AMDGPU\0" {
                return Ok(Some(Note { offset: at, desc }));
            }
        }
        Ok(None)
    }
}

impl CodeObject {
    /// The target id `e_flags` describe: the processor, then `:sramecc+`/`-`
    /// and `:xnack+`/`-` for features set on or off (code object v4+; v3
    /// cannot tell off from unsupported, so it gets none), e.g.
    /// `gfx90a:sramecc+:xnack-`. `None` for a processor [`processor_name`]
    /// does not know.
    pub fn target_id(&self) -> Option<String> {
        let mut id = processor_name(self.mach)?.to_owned();
        if self.abi_version >= 2 {
            for (name, f) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
                match f {
                    Feature::On => id.push_str(&format!(":{name}+")),
                    Feature::Off => id.push_str(&format!(":{name}-")),
                    Feature::Any | Feature::Unsupported => {}
                }
            }
        }
        Some(id)
    }

    /// Code object version: 3, 4, 5 or 6.
    pub fn code_object_version(&self) -> u8 {
        self.abi_version + 2
    }

    /// Whether `e_flags` name a generic processor (`gfx9-generic`,
    /// `gfx9-4-generic`, `gfx10-1-generic`, `gfx10-3-generic`,
    /// `gfx11-generic`, `gfx12-generic`: LLVM's AMDGPUUsage names every
    /// generic processor `*-generic`). Such code runs on any processor of its
    /// family that the runtime accepts for it; it is none of them.
    pub fn is_generic(&self) -> bool {
        processor_name(self.mach).is_some_and(|p| p.ends_with("-generic"))
    }

    /// For a generic processor, the version of its family's generic code
    /// that `e_flags` state (`EF_AMDGPU_GENERIC_VERSION`, bits 24 to 31, in
    /// code object v6 and later; LLVM 21 and 22 write 1 for every family): a
    /// runtime loads the code object only if it supports that version.
    /// `None` for a specific processor, and before code object v6, which
    /// has no such field.
    pub fn generic_version(&self) -> Option<u8> {
        (self.abi_version >= 4 && self.is_generic())
            .then_some((self.e_flags >> EF_AMDGPU_GENERIC_VERSION_SHIFT) as u8)
    }

    /// The defined symbol named `name`.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        match self.by_name.get(&self.symbols, name) {
            Some(i) => self.symbols.get(i),
            // `symbols` is public and may have been edited: fall back to a scan.
            None => self.symbols.iter().find(|s| s.name == name),
        }
    }

    /// Kernel descriptor symbols (`<kernel>.kd`).
    pub fn kernels(&self) -> impl Iterator<Item = &Symbol> {
        self.symbols.iter().filter(|s| s.kind == SymbolKind::Kernel)
    }

    /// The PT_LOAD segments with a non-zero size, by address.
    pub fn segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// The dynamic relocations, in file order.
    pub fn relocations(&self) -> &[Relocation] {
        &self.relocations
    }

    /// The symbol a relocation refers to, if any.
    pub fn relocation_symbol(&self, r: &Relocation) -> Option<&str> {
        r.symbol
            .and_then(|i| self.reloc_symbols.get(i))
            .map(|s| s.name.as_str())
    }

    /// Names of non-weak undefined symbols that relocations need: each must
    /// be supplied to [`load_into`](Self::load_into) or loading fails.
    pub fn undefined_symbols(&self) -> impl Iterator<Item = &str> {
        self.reloc_symbols
            .iter()
            .filter(|s| s.target == Target::Undefined { weak: false })
            .map(|s| s.name.as_str())
    }

    /// The metadata of every well-formed NT_AMDGPU_METADATA note, merged
    /// (kernels in file order, each once); `None` when no note decoded.
    /// Kernels that two notes describe differently are left out.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.metadata.merged.as_ref()
    }

    /// The first of [`metadata_problems`](Self::metadata_problems), if any.
    pub fn metadata_error(&self) -> Option<&CodeObjectError> {
        self.metadata.problems.first().map(|p| &p.error)
    }

    /// Every metadata note that could not be used, and every disagreement
    /// between notes, in file order.
    pub fn metadata_problems(&self) -> &[MetadataProblem] {
        &self.metadata.problems
    }

    /// How many NT_AMDGPU_METADATA notes the code object holds (well formed
    /// or not; notes past [`MAX_METADATA_NOTES`] are not counted).
    pub fn metadata_note_count(&self) -> u64 {
        self.metadata.notes
    }

    /// The unrelocated bytes of the image at `[offset, offset + len)`: file
    /// bytes where a segment has them, zero in its `p_memsz` tail. `None`
    /// unless the range lies inside one segment.
    pub fn initial_bytes(&self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        let i = self
            .segments
            .iter()
            .position(|s| s.vaddr <= offset && end <= s.vaddr + s.mem_size)?;
        let data = self.segment_data.get(i)?;
        let start = usize::try_from(offset - self.segments[i].vaddr).ok()?;
        let len = usize::try_from(len).ok()?;
        let mut out = vec![0u8; len];
        if let Some(src) = data.get(start..) {
            let n = src.len().min(len);
            out[..n].copy_from_slice(&src[..n]);
        }
        Some(out)
    }

    /// Kernel descriptor of a [`SymbolKind::Kernel`] symbol, read from the
    /// file bytes (kernel descriptors carry no relocations).
    pub fn kernel_descriptor(&self, sym: &Symbol) -> Option<KernelDescriptor> {
        if sym.kind != SymbolKind::Kernel {
            return None;
        }
        let bytes = self.initial_bytes(sym.value, KERNEL_DESCRIPTOR_SIZE as u64)?;
        let b: &[u8; KERNEL_DESCRIPTOR_SIZE] = bytes.as_slice().try_into().ok()?;
        Some(KernelDescriptor::parse(b))
    }

    /// The loaded image for load address `base`: `load_size` bytes, segment
    /// file bytes at their `p_vaddr`, zeros elsewhere, dynamic relocations
    /// applied. A relocation against an undefined non-weak symbol is
    /// [`CodeObjectError::UndefinedSymbol`]; undefined weak symbols are 0.
    pub fn build_image(&self, base: u64) -> Result<Vec<u8>, CodeObjectError> {
        let len =
            usize::try_from(self.load_size).map_err(|_| CodeObjectError::LoadSizeTooLarge {
                limit: MAX_LOAD_SIZE,
            })?;
        // Already zero: writing zeros would touch every page of a large bss.
        let mut image = vec![0u8; len];
        self.write_image(base, &mut image, &|_| None, false)?;
        Ok(image)
    }

    /// Writes the loaded image for `base` into `image[..load_size]` (the rest
    /// of `image` is untouched). `resolve` supplies addresses of symbols this
    /// object does not define (e.g. from other code objects of the same
    /// executable); it is asked only for undefined ones.
    pub fn load_into(
        &self,
        base: u64,
        image: &mut [u8],
        resolve: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<(), CodeObjectError> {
        self.write_image(base, image, resolve, true)
    }

    fn write_image(
        &self,
        base: u64,
        image: &mut [u8],
        resolve: &dyn Fn(&str) -> Option<u64>,
        zero: bool,
    ) -> Result<(), CodeObjectError> {
        let needed = self.load_size;
        if (image.len() as u64) < needed {
            return Err(CodeObjectError::ImageTooSmall {
                len: image.len() as u64,
                needed,
            });
        }
        if base.checked_add(needed).is_none() {
            return Err(CodeObjectError::BadBase { base });
        }
        let Ok(needed) = usize::try_from(needed) else {
            return Err(CodeObjectError::LoadSizeTooLarge {
                limit: MAX_LOAD_SIZE,
            });
        };
        let image = &mut image[..needed];
        if zero {
            image.fill(0);
        }
        for (seg, data) in self.segments.iter().zip(&self.segment_data) {
            let dst = usize::try_from(seg.vaddr)
                .ok()
                .and_then(|at| image.get_mut(at..at.checked_add(data.len())?))
                .ok_or(CodeObjectError::LoadSizeTooLarge {
                    limit: MAX_LOAD_SIZE,
                })?;
            dst.copy_from_slice(data);
        }
        for r in &self.relocations {
            self.apply(base, r, image, resolve)?;
        }
        Ok(())
    }

    fn apply(
        &self,
        base: u64,
        r: &Relocation,
        image: &mut [u8],
        resolve: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<(), CodeObjectError> {
        let s = match r.symbol.and_then(|i| self.reloc_symbols.get(i)) {
            None => 0,
            Some(sym) => match sym.target {
                Target::Image(v) => base.wrapping_add(v),
                Target::Absolute(v) => v,
                Target::Undefined { weak } => match resolve(&sym.name) {
                    Some(v) => v,
                    None if weak => 0,
                    None => {
                        return Err(CodeObjectError::UndefinedSymbol {
                            name: sym.name.clone(),
                        });
                    }
                },
            },
        };
        // ELF relocation arithmetic is modulo 2^64.
        let a = r.addend as u64;
        let p = base.wrapping_add(r.offset);
        let sa = s.wrapping_add(a);
        let pcrel = sa.wrapping_sub(p);
        let overflow = |value| CodeObjectError::RelocationOverflow {
            kind: r.kind,
            offset: r.offset,
            value,
        };
        let bytes: ([u8; 8], usize) = match r.kind {
            RelocationType::ABS64 => (sa.to_le_bytes(), 8),
            RelocationType::RELATIVE64 => (base.wrapping_add(a).to_le_bytes(), 8),
            RelocationType::REL64 => (pcrel.to_le_bytes(), 8),
            RelocationType::ABS32_LO => (sa.to_le_bytes(), 4),
            RelocationType::ABS32_HI => ((sa >> 32).to_le_bytes(), 4),
            RelocationType::ABS32 => {
                u32::try_from(sa).map_err(|_| overflow(sa))?;
                (sa.to_le_bytes(), 4)
            }
            RelocationType::REL32 => {
                i32::try_from(pcrel as i64).map_err(|_| overflow(pcrel))?;
                (pcrel.to_le_bytes(), 4)
            }
            RelocationType::REL32_LO => (pcrel.to_le_bytes(), 4),
            RelocationType::REL32_HI => ((pcrel >> 32).to_le_bytes(), 4),
            kind => {
                return Err(CodeObjectError::UnsupportedRelocation {
                    kind,
                    offset: r.offset,
                });
            }
        };
        let (value, width) = bytes;
        let out_of_image = CodeObjectError::RelocationOutOfImage {
            kind: r.kind,
            offset: r.offset,
        };
        let at = usize::try_from(r.offset).map_err(|_| out_of_image.clone())?;
        let dst = at
            .checked_add(width)
            .and_then(|end| image.get_mut(at..end))
            .ok_or(out_of_image)?;
        dst.copy_from_slice(&value[..width]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v4_feature_fields_decode_all_four_settings() {
        assert_eq!(features(2, 0x53f), (Feature::Any, Feature::Any));
        assert_eq!(features(2, 0x73f), (Feature::On, Feature::Any));
        assert_eq!(features(3, 0x83f), (Feature::Unsupported, Feature::Off));
        assert_eq!(features(2, 0xe3f), (Feature::Off, Feature::On));
    }

    #[test]
    fn v3_feature_bits_are_on_or_off() {
        assert_eq!(features(1, 0x33f), (Feature::On, Feature::On));
        assert_eq!(features(1, 0x03f), (Feature::Off, Feature::Off));
    }

    /// A minimal AMDGPU ET_DYN: one PT_LOAD over the whole file, a data
    /// section, and `.dynsym` with `symbols` (st_name, st_value, st_size) of
    /// type OBJECT in the data section, names in `strtab`.
    fn tiny_elf(strtab: &[u8], symbols: &[(u32, u64, u64)]) -> Vec<u8> {
        let mut syms = vec![0u8; SYM_SIZE];
        for &(name, value, size) in symbols {
            syms.extend_from_slice(&name.to_le_bytes());
            syms.extend_from_slice(&[0x11, 0]); // GLOBAL OBJECT
            syms.extend_from_slice(&3u16.to_le_bytes()); // .data
            syms.extend_from_slice(&value.to_le_bytes());
            syms.extend_from_slice(&size.to_le_bytes());
        }
        let dynsym_at = 120u64;
        let strtab_at = dynsym_at + syms.len() as u64;
        let shoff = (strtab_at + strtab.len() as u64).next_multiple_of(8);
        let file_len = shoff + 4 * SHDR_SIZE as u64;
        let mut f = Vec::new();
        f.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 64, 2, 0, 0, 0, 0, 0, 0, 0]);
        for v in [3u16, 224] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(&1u32.to_le_bytes());
        for v in [0u64, 64, shoff] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(&0x53fu32.to_le_bytes());
        for v in [64u16, 56, 1, 64, 4, 0] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        f.extend_from_slice(&6u32.to_le_bytes());
        for v in [0u64, 0, 0, file_len, file_len, 4096] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(&syms);
        f.extend_from_slice(strtab);
        f.resize(shoff as usize + SHDR_SIZE, 0);
        let shdr = |f: &mut Vec<u8>, t: u32, off: u64, size: u64, link: u32, ent: u64| {
            f.extend_from_slice(&0u32.to_le_bytes());
            f.extend_from_slice(&t.to_le_bytes());
            for v in [SHF_ALLOC.0, off, off, size] {
                f.extend_from_slice(&v.to_le_bytes());
            }
            f.extend_from_slice(&link.to_le_bytes());
            f.extend_from_slice(&0u32.to_le_bytes());
            for v in [8u64, ent] {
                f.extend_from_slice(&v.to_le_bytes());
            }
        };
        shdr(&mut f, SHT_DYNSYM.0, dynsym_at, syms.len() as u64, 2, 24);
        shdr(&mut f, SHT_STRTAB.0, strtab_at, strtab.len() as u64, 0, 0);
        shdr(&mut f, 1, 0, file_len, 0, 0);
        f
    }

    #[test]
    fn a_generic_code_object_names_its_generic_processor_and_version() {
        // As hipcc 7.2.4 (clang 22) writes them: code object v6 (EI_ABIVERSION
        // 4), e_flags 0x1000151 for gfx9-generic (generic version 1, xnack
        // any), 0x1000159 for gfx12-generic; 0x55a for gfx1251.
        let with = |abi: u8, flags: u32| {
            let mut f = tiny_elf(b"\0", &[]);
            f[8] = abi;
            f[48..52].copy_from_slice(&flags.to_le_bytes());
            parse(&f).unwrap()
        };
        let g9 = with(4, 0x0100_0151);
        assert_eq!(g9.target_id().as_deref(), Some("gfx9-generic"));
        assert!(g9.is_generic());
        assert_eq!(g9.generic_version(), Some(1));
        assert_eq!(g9.code_object_version(), 6);
        let g12 = with(4, 0x0100_0159);
        assert_eq!(
            (g12.target_id().as_deref(), g12.generic_version()),
            (Some("gfx12-generic"), Some(1))
        );
        // A specific processor has no generic version, whatever the bits.
        let g1251 = with(4, 0x55a);
        assert_eq!(g1251.target_id().as_deref(), Some("gfx1251"));
        assert!(!g1251.is_generic());
        assert_eq!(g1251.generic_version(), None);
        // Before v6 the field does not exist.
        assert_eq!(with(3, 0x0100_0151).generic_version(), None);
    }

    #[test]
    fn a_tiny_hand_built_object_parses_and_its_symbols_are_variables() {
        let co = parse(&tiny_elf(b"\0abc\0xyz\0", &[(1, 8, 4), (5, 16, 8)])).unwrap();
        let names: Vec<_> = co
            .symbols
            .iter()
            .map(|s| (s.name.as_str(), s.value))
            .collect();
        assert_eq!(names, [("abc", 8), ("xyz", 16)]);
        assert!(co.symbols.iter().all(|s| s.kind == SymbolKind::Variable));
        assert_eq!(co.load_size, 4096);
    }

    #[test]
    fn overlapping_names_cannot_make_a_small_file_copy_gigabytes() {
        // 40,000 symbols naming every suffix of one 40,000-byte string would
        // copy 800 MB of names from a 1 MB file.
        let n = 40_000u32;
        let mut strtab = vec![b'a'; n as usize];
        strtab.push(0);
        let syms: Vec<_> = (0..n).map(|i| (i, 0, 0)).collect();
        assert_eq!(
            parse(&tiny_elf(&strtab, &syms)).unwrap_err(),
            CodeObjectError::NamesTooLarge {
                limit: MAX_NAME_BYTES
            }
        );
    }

    #[test]
    fn many_symbols_repeating_one_long_name_cannot_make_parsing_slow() {
        // A million lookups of a 60,000-byte name would scan 60 GB.
        let mut strtab = vec![b'a'; 60_000];
        strtab.push(0);
        let syms = vec![(0, 0, 0); (1 << 20) - 1];
        assert_eq!(
            parse(&tiny_elf(&strtab, &syms)).unwrap_err(),
            CodeObjectError::NamesTooLarge {
                limit: MAX_NAME_BYTES
            }
        );
    }

    /// MessagePack of one metadata note: `amdhsa.version` [1, `minor`] and one
    /// kernel entry per `(symbol, vgpr_count)`, with the required keys.
    fn note_doc(minor: u8, kernels: &[(&str, u8)]) -> Vec<u8> {
        let s = |out: &mut Vec<u8>, t: &str| {
            out.push(0xd9);
            out.push(t.len() as u8);
            out.extend_from_slice(t.as_bytes());
        };
        let mut d = vec![0x82];
        s(&mut d, "amdhsa.version");
        d.extend_from_slice(&[0x92, 1, minor]);
        s(&mut d, "amdhsa.kernels");
        d.push(0x90 | kernels.len() as u8);
        for (sym, vgpr) in kernels {
            d.push(0x86);
            s(&mut d, ".symbol");
            s(&mut d, sym);
            for key in [
                ".kernarg_segment_size",
                ".kernarg_segment_align",
                ".group_segment_fixed_size",
                ".private_segment_fixed_size",
            ] {
                s(&mut d, key);
                d.push(8);
            }
            s(&mut d, ".vgpr_count");
            d.push(*vgpr);
        }
        d
    }

    /// A note region of NT_AMDGPU_METADATA records with these descriptors,
    /// and where each record starts.
    fn note_region(descs: &[Vec<u8>]) -> (Vec<u8>, Vec<u64>) {
        let mut r = Vec::new();
        let mut at = Vec::new();
        for d in descs {
            at.push(r.len() as u64);
            r.extend_from_slice(&7u32.to_le_bytes());
            r.extend_from_slice(&(d.len() as u32).to_le_bytes());
            r.extend_from_slice(&NT_AMDGPU_METADATA.to_le_bytes());
            r.extend_from_slice(b"AMDGPU\0\0");
            r.extend_from_slice(d);
            r.resize(r.len().next_multiple_of(4), 0);
        }
        (r, at)
    }

    fn notes_of(region: &[u8]) -> MetadataNotes {
        let mut ph = [0u8; PHDR_SIZE];
        ph[..4].copy_from_slice(&PT_NOTE.0.to_le_bytes());
        ph[32..40].copy_from_slice(&(region.len() as u64).to_le_bytes());
        ph[48..56].copy_from_slice(&4u64.to_le_bytes());
        let ph: &ProgramHeader = ph.as_slice().read_at(0).unwrap();
        read_metadata(region, &[], std::slice::from_ref(ph))
    }

    fn symbols_of(m: &MetadataNotes) -> Vec<(&str, Option<u64>)> {
        m.merged
            .as_ref()
            .map(|m| {
                m.kernels
                    .iter()
                    .map(|k| (k.symbol.as_str(), k.vgpr_count))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn kernels_of_every_metadata_note_are_merged_in_file_order() {
        let (r, _) = note_region(&[
            note_doc(1, &[("a.kd", 1)]),
            note_doc(1, &[("b.kd", 2), ("c.kd", 3)]),
        ]);
        let m = notes_of(&r);
        assert_eq!(m.notes, 2);
        assert_eq!(m.problems, []);
        assert_eq!(
            symbols_of(&m),
            [("a.kd", Some(1)), ("b.kd", Some(2)), ("c.kd", Some(3))]
        );
        assert_eq!(m.merged.unwrap().version, Some([1, 1]));
    }

    #[test]
    fn a_corrupt_note_loses_only_its_own_kernels_and_says_where_it_is() {
        let mut bad = note_doc(1, &[("b.kd", 2)]);
        bad[0] = 0xc1;
        let (r, at) = note_region(&[
            note_doc(1, &[("a.kd", 1)]),
            bad,
            note_doc(1, &[("c.kd", 3)]),
        ]);
        let m = notes_of(&r);
        assert_eq!(m.notes, 3);
        assert_eq!(symbols_of(&m), [("a.kd", Some(1)), ("c.kd", Some(3))]);
        assert_eq!(
            m.problems,
            [MetadataProblem {
                note_offset: at[1],
                error: CodeObjectError::MetadataReservedByte { offset: 0 }
            }]
        );
    }

    #[test]
    fn notes_that_describe_one_kernel_differently_leave_it_without_metadata() {
        let (r, at) = note_region(&[
            note_doc(1, &[("a.kd", 1), ("b.kd", 2)]),
            note_doc(1, &[("a.kd", 1)]),
            note_doc(1, &[("b.kd", 9)]),
            note_doc(1, &[("b.kd", 2)]),
        ]);
        let m = notes_of(&r);
        // The same description twice is one kernel; two descriptions, none.
        assert_eq!(symbols_of(&m), [("a.kd", Some(1))]);
        assert_eq!(
            m.problems,
            [MetadataProblem {
                note_offset: at[2],
                error: CodeObjectError::MetadataConflict {
                    symbol: "b.kd".into()
                }
            }]
        );
        // Within one note too.
        let (r, _) = note_region(&[note_doc(1, &[("a.kd", 1), ("a.kd", 2)])]);
        let m = notes_of(&r);
        assert_eq!(symbols_of(&m), []);
        assert_eq!(m.problems.len(), 1);
    }

    #[test]
    fn a_note_of_another_version_is_reported_and_its_kernels_kept() {
        let (r, at) = note_region(&[note_doc(1, &[("a.kd", 1)]), note_doc(2, &[("b.kd", 2)])]);
        let m = notes_of(&r);
        assert_eq!(symbols_of(&m), [("a.kd", Some(1)), ("b.kd", Some(2))]);
        assert_eq!(
            m.problems,
            [MetadataProblem {
                note_offset: at[1],
                error: CodeObjectError::MetadataDisagrees {
                    key: "amdhsa.version",
                    first: "1.1".into(),
                    this: "1.2".into()
                }
            }]
        );
        assert_eq!(m.merged.unwrap().version, Some([1, 1]));
    }

    #[test]
    fn a_malformed_note_record_ends_its_region_and_keeps_the_notes_before_it() {
        let (mut r, at) = note_region(&[note_doc(1, &[("a.kd", 1)]), note_doc(1, &[("b.kd", 2)])]);
        // The second record's descsz runs past the region.
        let d = at[1] as usize + 4;
        r[d..d + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let m = notes_of(&r);
        assert_eq!(symbols_of(&m), [("a.kd", Some(1))]);
        assert_eq!(
            m.problems,
            [MetadataProblem {
                note_offset: at[1],
                error: CodeObjectError::BadNote { offset: at[1] }
            }]
        );
        for n in 0..r.len() {
            let _ = notes_of(&r[..n]);
        }
    }

    #[test]
    fn kernel_names_are_demangled_without_the_kd_suffix() {
        assert_eq!(
            kernel_name("_Z4vaddPKfS0_Pfi.kd"),
            "vadd(float const*, float const*, float*, int)"
        );
        assert_eq!(kernel_name("plain_c.kd"), "plain_c");
        assert_eq!(kernel_name("_Znot mangled"), "_Znot mangled");
    }
}
