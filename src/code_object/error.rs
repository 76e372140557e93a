//! Every way a code object can be wrong, one variant each, saying where.

use std::fmt;

use super::elf::RelocationType;

/// Why a code object (or its metadata note) was refused.
///
/// Offsets are byte offsets into the file unless the variant says otherwise
/// (`RelocationOutOfImage` and friends name an offset in the loaded image;
/// `Metadata*` name an offset inside the MessagePack blob).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeObjectError {
    /// The input is larger than [`MAX_FILE_SIZE`](super::MAX_FILE_SIZE).
    TooLarge { size: u64, limit: u64 },
    /// No `\x7fELF` magic.
    NotElf,
    /// `EI_CLASS`/`EI_DATA` are not ELFCLASS64/ELFDATA2LSB.
    Not64BitLittleEndian { class: u8, data: u8 },
    /// `EI_VERSION` or `e_version` is not 1.
    UnsupportedElfVersion { version: u32 },
    /// `e_machine` is not EM_AMDGPU (224).
    NotAmdgpu { machine: u16 },
    /// `EI_OSABI` is not ELFOSABI_AMDGPU_HSA (64).
    UnsupportedOsAbi { osabi: u8 },
    /// `EI_ABIVERSION` is not a code object version this reader knows (v3 to v6).
    UnsupportedAbiVersion { version: u8 },
    /// `e_type` is not ET_DYN: only linked code objects can be loaded.
    NotSharedObject { e_type: u16 },
    /// A structure runs past the end of the file.
    Truncated { what: &'static str, offset: u64 },
    /// A table's entry size is not the ELF64 size of its records.
    BadEntrySize { what: &'static str, size: u64 },
    /// More program headers than [`MAX_SEGMENTS`](super::MAX_SEGMENTS).
    TooManySegments { count: u64 },
    /// More section headers than [`MAX_SECTIONS`](super::MAX_SECTIONS).
    TooManySections { count: u64 },
    /// A PT_LOAD's file bytes lie outside the file.
    SegmentOutOfBounds {
        index: usize,
        offset: u64,
        size: u64,
    },
    /// A PT_LOAD has `p_filesz > p_memsz`.
    SegmentFileSizeExceedsMemorySize { index: usize },
    /// `p_align` is neither 0 nor a power of two, or is absurdly large.
    BadSegmentAlignment { index: usize, align: u64 },
    /// Two PT_LOAD segments share addresses.
    OverlappingSegments { first: usize, second: usize },
    /// There is no PT_LOAD with a non-zero size.
    NoLoadableSegments,
    /// The loaded image would exceed [`MAX_LOAD_SIZE`](super::MAX_LOAD_SIZE).
    LoadSizeTooLarge { limit: u64 },
    /// A section's bytes lie outside the file.
    BadSectionHeader {
        index: usize,
        offset: u64,
        size: u64,
    },
    /// A section's `sh_link` does not name a section of the needed type.
    BadSectionLink { index: usize, link: u32 },
    /// A string table offset past the end of its table.
    StringOutOfBounds { section: usize, offset: u64 },
    /// A name with no terminating NUL inside its string table.
    StringUnterminated { section: usize, offset: u64 },
    /// A name longer than [`MAX_NAME_LEN`](super::MAX_NAME_LEN).
    NameTooLong { section: usize, offset: u64 },
    /// A name that is not UTF-8.
    NameNotUtf8 { section: usize, offset: u64 },
    /// More symbols than [`MAX_SYMBOLS`](super::MAX_SYMBOLS) in one table.
    TooManySymbols { count: u64 },
    /// The symbol names to keep exceed [`MAX_NAME_BYTES`](super::MAX_NAME_BYTES).
    NamesTooLarge { limit: u64 },
    /// A defined symbol's `st_shndx` is not a section of the file.
    BadSymbolSection { name: String, shndx: u16 },
    /// A defined symbol's `[value, value + size)` lies outside the loaded image.
    SymbolOutOfImage { name: String, value: u64, size: u64 },
    /// More relocations than [`MAX_RELOCATIONS`](super::MAX_RELOCATIONS).
    TooManyRelocations { count: u64 },
    /// A dynamic relocation section of a kind this loader does not apply (SHT_REL).
    UnsupportedRelocationSection { index: usize, sh_type: u32 },
    /// A dynamic relocation type this loader does not apply.
    UnsupportedRelocation { kind: RelocationType, offset: u64 },
    /// A relocation whose target bytes lie outside the loaded image.
    RelocationOutOfImage { kind: RelocationType, offset: u64 },
    /// A relocation names a symbol index outside its symbol table.
    BadRelocationSymbol { index: u64, offset: u64 },
    /// A relocation's value does not fit its 32-bit field at this base.
    RelocationOverflow {
        kind: RelocationType,
        offset: u64,
        value: u64,
    },
    /// A relocation refers to a symbol no code object defines.
    UndefinedSymbol { name: String },
    /// `base + load_size` does not fit in 64 bits.
    BadBase { base: u64 },
    /// The destination given to `load_into` is smaller than `load_size`.
    ImageTooSmall { len: u64, needed: u64 },
    /// A note record runs past its section or segment.
    BadNote { offset: u64 },
    /// The metadata MessagePack ends inside a value.
    MetadataTruncated { offset: u64 },
    /// The MessagePack byte 0xc1, which is never used.
    MetadataReservedByte { offset: u64 },
    /// MessagePack nested deeper than [`MAX_METADATA_DEPTH`](super::MAX_METADATA_DEPTH).
    MetadataTooDeep { offset: u64 },
    /// More MessagePack values than [`MAX_METADATA_ITEMS`](super::MAX_METADATA_ITEMS),
    /// or a note larger than [`MAX_METADATA_BYTES`](super::MAX_METADATA_BYTES).
    MetadataTooLarge { offset: u64 },
    /// Bytes after the top-level MessagePack value.
    MetadataTrailingBytes { offset: u64 },
    /// A metadata key holds a value of the wrong type (`kernel` is its index in
    /// `amdhsa.kernels`, or `None` at the top level).
    MetadataWrongType {
        kernel: Option<usize>,
        key: &'static str,
    },
    /// A required metadata key is missing.
    MetadataMissingKey {
        kernel: Option<usize>,
        key: &'static str,
    },
    /// Two metadata notes describe the same kernel descriptor symbol
    /// differently; neither description is used for it.
    MetadataConflict { symbol: String },
    /// A metadata note states an `amdhsa.version` or `amdhsa.target` other
    /// than the first note that states it (its kernels are still used).
    MetadataDisagrees {
        key: &'static str,
        first: String,
        this: String,
    },
    /// More NT_AMDGPU_METADATA notes, or more note bytes, than the limits
    /// ([`MAX_METADATA_NOTES`](super::MAX_METADATA_NOTES),
    /// [`MAX_METADATA_TOTAL_BYTES`](super::MAX_METADATA_TOTAL_BYTES)); the
    /// notes after the limit are not decoded.
    TooManyMetadataNotes { limit: u64 },
}

impl CodeObjectError {
    /// The byte offset into the code object's file that this error names, for
    /// the variants that name one (image and MessagePack offsets are not).
    pub fn file_offset(&self) -> Option<u64> {
        use CodeObjectError::*;
        match self {
            Truncated { offset, .. }
            | SegmentOutOfBounds { offset, .. }
            | BadSectionHeader { offset, .. }
            | BadNote { offset } => Some(*offset),
            _ => None,
        }
    }
}

impl fmt::Display for CodeObjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CodeObjectError::*;
        match self {
            TooLarge { size, limit } => {
                write!(
                    f,
                    "code object of {size} bytes exceeds the {limit}-byte limit"
                )
            }
            NotElf => write!(f, "not an ELF file (no \\x7fELF magic)"),
            Not64BitLittleEndian { class, data } => write!(
                f,
                "not a 64-bit little-endian ELF (EI_CLASS {class}, EI_DATA {data})"
            ),
            UnsupportedElfVersion { version } => write!(f, "unsupported ELF version {version}"),
            NotAmdgpu { machine } => {
                write!(f, "ELF machine {machine} is not EM_AMDGPU (224)")
            }
            UnsupportedOsAbi { osabi } => {
                write!(f, "ELF OS/ABI {osabi} is not ELFOSABI_AMDGPU_HSA (64)")
            }
            UnsupportedAbiVersion { version } => write!(
                f,
                "ELF ABI version {version} is not a known code object version (1 to 4: v3 to v6)"
            ),
            NotSharedObject { e_type } => {
                write!(
                    f,
                    "ELF type {e_type} is not ET_DYN (3): only linked code objects load"
                )
            }
            Truncated { what, offset } => write!(f, "{what} at offset {offset} runs past the end"),
            BadEntrySize { what, size } => write!(f, "{what} entry size {size} is wrong for ELF64"),
            TooManySegments { count } => write!(f, "{count} program headers exceed the limit"),
            TooManySections { count } => write!(f, "{count} sections exceed the limit"),
            SegmentOutOfBounds {
                index,
                offset,
                size,
            } => write!(
                f,
                "segment {index}: file bytes [{offset}, +{size}) lie outside the file"
            ),
            SegmentFileSizeExceedsMemorySize { index } => {
                write!(f, "segment {index}: p_filesz exceeds p_memsz")
            }
            BadSegmentAlignment { index, align } => {
                write!(f, "segment {index}: bad p_align {align}")
            }
            OverlappingSegments { first, second } => {
                write!(f, "loadable segments {first} and {second} overlap")
            }
            NoLoadableSegments => write!(f, "no loadable (PT_LOAD) segment"),
            LoadSizeTooLarge { limit } => {
                write!(f, "loaded image would exceed the {limit}-byte limit")
            }
            BadSectionHeader {
                index,
                offset,
                size,
            } => write!(
                f,
                "section {index}: bytes [{offset}, +{size}) lie outside the file"
            ),
            BadSectionLink { index, link } => {
                write!(
                    f,
                    "section {index}: sh_link {link} names no suitable section"
                )
            }
            StringOutOfBounds { section, offset } => {
                write!(
                    f,
                    "string offset {offset} lies outside string table {section}"
                )
            }
            StringUnterminated { section, offset } => {
                write!(f, "string at offset {offset} of table {section} has no NUL")
            }
            NameTooLong { section, offset } => {
                write!(f, "name at offset {offset} of table {section} is too long")
            }
            NameNotUtf8 { section, offset } => {
                write!(f, "name at offset {offset} of table {section} is not UTF-8")
            }
            TooManySymbols { count } => write!(f, "{count} symbols exceed the limit"),
            NamesTooLarge { limit } => write!(f, "symbol names exceed the {limit}-byte limit"),
            BadSymbolSection { name, shndx } => {
                write!(f, "symbol {name:?}: section index {shndx} does not exist")
            }
            SymbolOutOfImage { name, value, size } => write!(
                f,
                "symbol {name:?} [{value:#x}, +{size}) lies outside the loaded image"
            ),
            TooManyRelocations { count } => write!(f, "{count} relocations exceed the limit"),
            UnsupportedRelocationSection { index, sh_type } => write!(
                f,
                "section {index}: dynamic relocation section of type {sh_type} is not supported"
            ),
            UnsupportedRelocation { kind, offset } => {
                write!(
                    f,
                    "unsupported relocation {kind} at image offset {offset:#x}"
                )
            }
            RelocationOutOfImage { kind, offset } => write!(
                f,
                "relocation {kind} at image offset {offset:#x} lies outside the loaded image"
            ),
            BadRelocationSymbol { index, offset } => write!(
                f,
                "relocation at image offset {offset:#x} names symbol {index}, which does not exist"
            ),
            RelocationOverflow {
                kind,
                offset,
                value,
            } => write!(
                f,
                "relocation {kind} at image offset {offset:#x}: value {value:#x} does not fit"
            ),
            UndefinedSymbol { name } => write!(f, "undefined symbol {name:?}"),
            BadBase { base } => write!(f, "load base {base:#x} leaves no room for the image"),
            ImageTooSmall { len, needed } => {
                write!(f, "image buffer of {len} bytes is smaller than {needed}")
            }
            BadNote { offset } => write!(f, "note record at offset {offset} is malformed"),
            MetadataTruncated { offset } => {
                write!(f, "metadata: MessagePack ends inside a value at {offset}")
            }
            MetadataReservedByte { offset } => {
                write!(f, "metadata: reserved MessagePack byte 0xc1 at {offset}")
            }
            MetadataTooDeep { offset } => write!(f, "metadata: nesting too deep at {offset}"),
            MetadataTooLarge { offset } => write!(f, "metadata: too many values at {offset}"),
            MetadataTrailingBytes { offset } => {
                write!(f, "metadata: bytes after the top-level value at {offset}")
            }
            MetadataWrongType { kernel, key } => match kernel {
                Some(k) => write!(f, "metadata: kernel {k}: {key} has the wrong type"),
                None => write!(f, "metadata: {key} has the wrong type"),
            },
            MetadataMissingKey { kernel, key } => match kernel {
                Some(k) => write!(f, "metadata: kernel {k}: required {key} is missing"),
                None => write!(f, "metadata: required {key} is missing"),
            },
            MetadataConflict { symbol } => write!(
                f,
                "metadata: two notes describe kernel {symbol:?} differently; it is listed from \
                 its kernel descriptor"
            ),
            MetadataDisagrees { key, first, this } => write!(
                f,
                "metadata: {key} {this} differs from {first} in an earlier note"
            ),
            TooManyMetadataNotes { limit } => write!(
                f,
                "metadata: notes past the limit of {limit} (notes or bytes) were not decoded"
            ),
        }
    }
}

impl std::error::Error for CodeObjectError {}
