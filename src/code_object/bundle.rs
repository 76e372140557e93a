//! Clang offload bundles and the files that carry them: a bounded reader.
//!
//! HIP does not hand the loader a bare code object. `hipcc` wraps each
//! translation unit's device code objects (one per `--offload-arch`) in a
//! clang offload bundle, optionally compresses the bundle (`CCOB`), and places
//! it in the `.hip_fatbin` section of the host executable or shared library.
//! `softgpu objects` has to undo all of that from untrusted bytes, without
//! running anything, so this module reads:
//!
//! - a host ELF (any 64-bit little-endian ELF that is not an AMDGPU code
//!   object): its `.hip_fatbin` section(s), which hold one or more bundles back
//!   to back, each starting at an aligned offset after zero padding;
//! - a plain bundle: the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a u64 entry
//!   count, then per entry u64 offset, u64 size, u64 id length and the id
//!   (`hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`,
//!   `host-x86_64-unknown-linux-gnu-`); offsets count from the magic;
//! - a compressed bundle: `CCOB`, u16 version, u16 method (0 zlib, 1 zstd:
//!   LLVM's `compression::Format`), then per version (LLVM
//!   `CompressedOffloadBundle`): v1 u32 uncompressed size and u64 hash; v2 u32
//!   total size (header included), u32 uncompressed size, u64 hash; v3 the same
//!   with u64 sizes. The payload decompresses to a plain bundle;
//! - a bare AMDGPU code object (ELF, `e_machine` 224), which is left to
//!   [`parse`](super::parse).
//!
//! Bounds ([`Limits`]): entries per bundle, id length, bundles per file, and the
//! decompressed bytes, both per compressed bundle and over the whole file. A
//! declared size is checked against the limit and the bytes that back it
//! before anything is allocated from it, and decompression stops at the
//! declared uncompressed size. Non-empty entries of one bundle may not overlap,
//! so handing every entry to the code object reader reads each byte once.
//!
//! How it fails: any malformed structure is a typed [`BundleError`] naming the
//! file offset (and, inside a decompressed bundle, the offset in the
//! decompressed bytes); never a panic, never a partial result. The stored hash
//! of a compressed bundle (the low 64 bits of an MD5) is reported, not checked.
//! A v1 compressed bundle does not record its compressed size, so it is taken
//! to run to the end of its section and nothing after it is read.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use object::read::elf::{FileHeader as _, SectionHeader as _};
use object::read::{ReadCache, ReadCacheOps, ReadRef};

use super::MAX_SECTIONS;
use super::elf::{
    EHDR_SIZE, ELF_MAGIC, ELFCLASS64, ELFDATA2LSB, EM_AMDGPU, FileHeader, LE, SHDR_SIZE,
    SHN_XINDEX, SectionHeader, has_file_bytes, slice,
};

/// Magic of a plain clang offload bundle.
pub const BUNDLE_MAGIC: &[u8; 24] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed clang offload bundle.
pub const COMPRESSED_BUNDLE_MAGIC: &[u8; 4] = b"CCOB";
/// The host ELF section that holds HIP's bundles.
pub const HIP_FATBIN_SECTION: &str = ".hip_fatbin";
/// The section of clang's new offload driver (not read here, only named).
const LLVM_OFFLOADING_SECTION: &str = ".llvm.offloading";

/// Size of a plain bundle's fixed header: magic and entry count.
const BUNDLE_HEADER_SIZE: u64 = 32;
/// Size of each entry's fixed fields: offset, size, id length.
const ENTRY_FIXED_SIZE: u64 = 24;

/// What one file may make the reader do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most entries in one bundle (real bundles hold one per target, plus the host).
    pub max_entries: u64,
    /// Longest entry id, in bytes (real ids are under 100).
    pub max_id_len: u64,
    /// Most bundles in one file (one per translation unit).
    pub max_bundles: usize,
    /// Most bytes of one bundle in the file (a plain bundle, or a compressed
    /// bundle's payload): what is read into memory at once.
    pub max_bundle_size: u64,
    /// Most decompressed bytes of one compressed bundle.
    pub max_decompressed: u64,
    /// Most decompressed bytes over the whole file.
    pub max_decompressed_total: u64,
}

impl Limits {
    /// The limits `softgpu objects` uses.
    pub const DEFAULT: Limits = Limits {
        max_entries: 4096,
        max_id_len: 4096,
        max_bundles: 65536,
        max_bundle_size: 1 << 30,
        max_decompressed: 1 << 30,
        max_decompressed_total: 16 << 30,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// A compressed bundle's method (LLVM `compression::Format`); unknown values
/// stay representable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompressionMethod(pub u16);

impl CompressionMethod {
    pub const ZLIB: Self = Self(0);
    pub const ZSTD: Self = Self(1);

    /// `zlib` or `zstd`, if this is a known method.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Self::ZLIB => Some("zlib"),
            Self::ZSTD => Some("zstd"),
            _ => None,
        }
    }
}

impl fmt::Display for CompressionMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "unknown compression method: {}", self.0),
        }
    }
}

/// The header of a compressed bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compression {
    /// Format version: 1, 2 or 3.
    pub version: u16,
    pub method: CompressionMethod,
    /// Bytes of the header.
    pub header_size: u64,
    /// Header plus payload, as declared (v2 and v3; v1 does not record it).
    pub total_size: Option<u64>,
    /// Bytes of the plain bundle inside.
    pub uncompressed_size: u64,
    /// The low 64 bits of the MD5 of the plain bundle, as stored (not checked).
    pub hash: u64,
}

/// One entry of a bundle: an id and the bytes it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleEntry {
    /// `<kind>-<triple>[-<target id>]`, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a`.
    pub id: String,
    /// Offset from the start of the (plain, decompressed) bundle.
    pub offset: u64,
    pub size: u64,
}

impl BundleEntry {
    /// The id split into its parts.
    pub fn parsed_id(&self) -> EntryId<'_> {
        parse_entry_id(&self.id)
    }

    /// Whether the entry holds a device code object: not the host's entry
    /// (HIP's is empty) and not empty.
    pub fn is_device_code(&self) -> bool {
        self.size > 0 && self.parsed_id().kind != "host"
    }
}

/// The parts of a bundle entry id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId<'a> {
    /// Offload kind: `host`, `hip`, `hipv4`, `openmp`, ...
    pub kind: &'a str,
    /// The target triple, without a trailing `-`: `amdgcn-amd-amdhsa`.
    pub triple: &'a str,
    /// The target id (processor and features): `gfx90a:sramecc+:xnack-`.
    pub target_id: Option<&'a str>,
}

/// Splits a bundle entry id into kind, triple and target id, the way clang's
/// bundler does: the target id is the last `-` component (with any `:`
/// features) when it names a processor.
pub fn parse_entry_id(id: &str) -> EntryId<'_> {
    let (kind, rest) = id.split_once('-').unwrap_or((id, ""));
    let (triple, target_id) = split_triple_target(rest);
    EntryId {
        kind,
        triple,
        target_id,
    }
}

/// Splits `amdgcn-amd-amdhsa--gfx90a:xnack-` (an entry id without its kind,
/// or a metadata `amdhsa.target`) into the triple and the target id.
pub fn split_triple_target(s: &str) -> (&str, Option<&str>) {
    let head_len = s.find(':').unwrap_or(s.len());
    let head = &s[..head_len];
    match head.rsplit_once('-') {
        Some((triple, proc_)) if proc_.starts_with("gfx") || proc_.starts_with("sm_") => {
            let target = &s[triple.len() + 1..];
            (triple.trim_end_matches('-'), Some(target))
        }
        _ => (s.trim_end_matches('-'), None),
    }
}

/// One bundle of a file.
#[derive(Clone, Debug)]
pub struct Bundle<'a> {
    /// File offset of the bundle (of its `CCOB` header when compressed).
    pub offset: u64,
    /// Bytes the bundle occupies in the file (compressed, when it is).
    pub size: u64,
    pub compression: Option<Compression>,
    pub entries: Vec<BundleEntry>,
    /// The plain bundle, from its magic: borrowed from the file, or owned
    /// when decompressed.
    data: Cow<'a, [u8]>,
}

impl Bundle<'_> {
    /// The bytes an entry names (checked when the bundle was read).
    pub fn entry_bytes(&self, e: &BundleEntry) -> &[u8] {
        slice(&self.data, e.offset, e.size).unwrap_or(&[])
    }

    /// File offset of an entry's bytes; `None` inside a compressed bundle.
    pub fn entry_file_offset(&self, e: &BundleEntry) -> Option<u64> {
        match self.compression {
            Some(_) => None,
            None => self.offset.checked_add(e.offset),
        }
    }
}

/// What kind of file was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Container {
    /// A bare AMDGPU code object: hand the whole file to [`parse`](super::parse).
    CodeObject,
    /// A plain offload bundle (`hipcc --genco`), possibly several back to back.
    Bundle,
    /// A compressed offload bundle, possibly several back to back.
    CompressedBundle,
    /// A host ELF and the `(offset, size)` of each `.hip_fatbin` section.
    HostElf {
        machine: u16,
        sections: Vec<(u64, u64)>,
    },
}

/// The bundles of a file.
#[derive(Clone, Debug)]
pub struct Contents<'a> {
    pub container: Container,
    /// In file order; empty for [`Container::CodeObject`].
    pub bundles: Vec<Bundle<'a>>,
}

/// Why a file's bundles could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleError {
    /// File offset of the problem; inside a decompressed bundle, the file
    /// offset of the compressed bundle.
    pub offset: u64,
    /// Inside a decompressed bundle: the offset in the decompressed bytes.
    pub decompressed_offset: Option<u64>,
    pub kind: BundleErrorKind,
}

/// Every way a bundle or its carrier can be wrong, one variant each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BundleErrorKind {
    /// A bundle (or a compressed bundle's payload) larger than
    /// [`Limits::max_bundle_size`].
    BundleTooLarge { size: u64, limit: u64 },
    /// A host ELF's section name table larger than [`MAX_SECTION_NAME_BYTES`].
    SectionNamesTooLarge { size: u64, limit: u64 },
    /// Reading the file failed.
    Io { message: String },
    /// Neither an ELF file nor a (compressed) offload bundle.
    UnknownFormat,
    /// A structure runs past the end of the bytes that hold it.
    Truncated { what: &'static str },
    /// A host ELF that is not 64-bit little-endian.
    UnsupportedElf { class: u8, data: u8 },
    /// A host ELF without section headers.
    NoSectionHeaders,
    /// A host ELF's section header entry size is not 64.
    BadSectionEntrySize { size: u16 },
    /// More section headers than [`MAX_SECTIONS`](super::MAX_SECTIONS).
    TooManySections { count: u64 },
    /// `e_shstrndx` names no section.
    BadSectionNameTable { index: u64 },
    /// A section's bytes lie outside the file.
    SectionOutOfBounds { index: usize, size: u64 },
    /// A `.hip_fatbin` section that occupies no file bytes (SHT_NOBITS).
    FatbinWithoutBytes { index: usize },
    /// A host ELF with no `.hip_fatbin` section (`new_driver`: it has clang's
    /// `.llvm.offloading` section instead, which this reader does not read).
    NoHipFatbin { machine: u16, new_driver: bool },
    /// Bytes in a fat binary section that are neither zero padding nor a bundle.
    UnexpectedBytes,
    /// More bundles than [`Limits::max_bundles`].
    TooManyBundles { limit: usize },
    /// More entries than [`Limits::max_entries`].
    TooManyEntries { count: u64, limit: u64 },
    /// An entry id longer than [`Limits::max_id_len`].
    EntryIdTooLong { index: u64, len: u64, limit: u64 },
    /// An entry id that is not UTF-8.
    EntryIdNotUtf8 { index: u64 },
    /// An entry's bytes lie outside the bundle's bytes.
    EntryOutOfBounds { index: u64, offset: u64, size: u64 },
    /// Two non-empty entries share bytes.
    OverlappingEntries { first: u64, second: u64 },
    /// A device entry of a compressed bundle read as a stream
    /// ([`scan_entries`]) larger than [`Limits::max_decompressed`], the most
    /// it holds at once.
    EntryTooLarge { index: u64, size: u64, limit: u64 },
    /// A compressed bundle version other than 1, 2 and 3.
    UnsupportedCompressionVersion { version: u16 },
    /// A compression method other than zlib (0) and zstd (1).
    UnknownCompressionMethod { method: CompressionMethod },
    /// A declared total size smaller than the header or larger than the bytes there.
    BadCompressedSize { declared: u64, available: u64 },
    /// A declared uncompressed size over the limit (per bundle, or the file's
    /// remaining budget).
    DecompressedTooLarge { size: u64, limit: u64 },
    /// The decoder refused the payload.
    Decompression {
        method: CompressionMethod,
        message: String,
    },
    /// The payload decompresses to more bytes than declared.
    DecompressedLonger { declared: u64 },
    /// The payload decompresses to fewer bytes than declared.
    DecompressedShorter { declared: u64, actual: u64 },
    /// The decompressed bytes are not a plain bundle.
    NotABundle,
}

impl fmt::Display for BundleErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use BundleErrorKind::*;
        match self {
            BundleTooLarge { size, limit } => {
                write!(f, "bundle of {size} bytes exceeds the {limit}-byte limit")
            }
            SectionNamesTooLarge { size, limit } => write!(
                f,
                "section name table of {size} bytes exceeds the {limit}-byte limit"
            ),
            Io { message } => write!(f, "cannot read: {message}"),
            UnknownFormat => write!(
                f,
                "not an ELF file, a clang offload bundle (__CLANG_OFFLOAD_BUNDLE__) or a compressed \
                 offload bundle (CCOB)"
            ),
            Truncated { what } => write!(f, "{what} runs past the end"),
            UnsupportedElf { class, data } => write!(
                f,
                "host ELF is not 64-bit little-endian (EI_CLASS {class}, EI_DATA {data})"
            ),
            NoSectionHeaders => write!(
                f,
                "host ELF has no section headers, so no {HIP_FATBIN_SECTION} section can be found"
            ),
            BadSectionEntrySize { size } => {
                write!(f, "section header entry size {size} is wrong for ELF64")
            }
            TooManySections { count } => write!(f, "{count} sections exceed the limit"),
            BadSectionNameTable { index } => {
                write!(f, "section name table index {index} names no section")
            }
            SectionOutOfBounds { index, size } => {
                write!(f, "section {index}: {size} bytes here lie outside the file")
            }
            FatbinWithoutBytes { index } => write!(
                f,
                "section {index} ({HIP_FATBIN_SECTION}) occupies no bytes in the file"
            ),
            NoHipFatbin {
                machine,
                new_driver,
            } => {
                write!(
                    f,
                    "ELF file (machine {machine}) has no {HIP_FATBIN_SECTION} section: not a HIP \
                     executable, shared library or object with device code"
                )?;
                if *new_driver {
                    write!(
                        f,
                        " (it has {LLVM_OFFLOADING_SECTION}: clang's new offload driver format, \
                         which this reader does not read)"
                    )?;
                }
                Ok(())
            }
            UnexpectedBytes => write!(
                f,
                "bytes that are neither zero padding nor an offload bundle (no \
                 __CLANG_OFFLOAD_BUNDLE__ or CCOB magic)"
            ),
            TooManyBundles { limit } => write!(f, "more than {limit} bundles"),
            TooManyEntries { count, limit } => {
                write!(
                    f,
                    "bundle declares {count} entries, over the limit of {limit}"
                )
            }
            EntryIdTooLong { index, len, limit } => write!(
                f,
                "entry {index}: id of {len} bytes exceeds the {limit}-byte limit"
            ),
            EntryIdNotUtf8 { index } => write!(f, "entry {index}: id is not UTF-8"),
            EntryOutOfBounds {
                index,
                offset,
                size,
            } => write!(
                f,
                "entry {index}: bytes [{offset}, +{size}) lie outside the bundle"
            ),
            OverlappingEntries { first, second } => {
                write!(f, "entries {first} and {second} overlap")
            }
            EntryTooLarge { index, size, limit } => write!(
                f,
                "entry {index}: {size} bytes exceed the {limit}-byte limit of one entry"
            ),
            UnsupportedCompressionVersion { version } => write!(
                f,
                "compressed bundle version {version} is not supported (1, 2 and 3 are)"
            ),
            UnknownCompressionMethod { method } => {
                write!(f, "compressed bundle: {method} (0 is zlib, 1 is zstd)")
            }
            BadCompressedSize {
                declared,
                available,
            } => write!(
                f,
                "compressed bundle declares {declared} bytes, but {available} bytes remain \
                 (or fewer than its header)"
            ),
            DecompressedTooLarge { size, limit } => write!(
                f,
                "compressed bundle declares {size} uncompressed bytes, over the limit of {limit}"
            ),
            Decompression { method, message } => {
                write!(
                    f,
                    "compressed bundle: {method} payload is corrupt: {message}"
                )
            }
            DecompressedLonger { declared } => write!(
                f,
                "compressed bundle decompresses to more than the {declared} bytes it declares"
            ),
            DecompressedShorter { declared, actual } => write!(
                f,
                "compressed bundle decompresses to {actual} bytes, not the {declared} it declares"
            ),
            NotABundle => write!(
                f,
                "compressed bundle does not decompress to a clang offload bundle"
            ),
        }
    }
}

impl fmt::Display for BundleError {
    /// The message without the file offset (callers print `offset N: ` first).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.decompressed_offset {
            Some(d) => write!(
                f,
                "in the bundle decompressed from the compressed bundle here, at offset {d}: {}",
                self.kind
            ),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for BundleError {}

fn err(offset: u64, kind: BundleErrorKind) -> BundleError {
    BundleError {
        offset,
        decompressed_offset: None,
        kind,
    }
}

/// Where a reader gets its bytes: a slice in memory, or a file read with
/// positioned reads (`pread`), so that only what is needed is read.
pub trait Source<'a> {
    /// Total length in bytes.
    fn size(&self) -> u64;
    /// Exactly `len` bytes at `offset` (the caller has checked the range
    /// against [`size`](Self::size)): borrowed from memory, or read.
    fn bytes(&self, offset: u64, len: u64) -> std::io::Result<Cow<'a, [u8]>>;
}

impl<'a> Source<'a> for &'a [u8] {
    fn size(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn bytes(&self, offset: u64, len: u64) -> std::io::Result<Cow<'a, [u8]>> {
        slice(self, offset, len)
            .map(Cow::Borrowed)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
    }
}

/// A file as a [`Source`]: every read is one `read_exact_at` of the bytes
/// asked for; nothing else of the file is read or mapped.
#[derive(Debug)]
pub struct FileSource<'f> {
    file: &'f std::fs::File,
    len: u64,
    read: std::cell::Cell<u64>,
}

impl<'f> FileSource<'f> {
    /// `file`, whose length is taken now.
    pub fn new(file: &'f std::fs::File) -> std::io::Result<Self> {
        Ok(FileSource {
            file,
            len: file.metadata()?.len(),
            read: std::cell::Cell::new(0),
        })
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.get()
    }
}

impl Source<'static> for FileSource<'_> {
    fn size(&self) -> u64 {
        self.len
    }

    fn bytes(&self, offset: u64, len: u64) -> std::io::Result<Cow<'static, [u8]>> {
        use std::os::unix::fs::FileExt;
        let n = usize::try_from(len)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(n)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        buf.resize(n, 0);
        self.file.read_exact_at(&mut buf, offset)?;
        self.read.set(self.read.get().saturating_add(len));
        Ok(Cow::Owned(buf))
    }
}

/// Reads a file's bundles with [`Limits::DEFAULT`].
pub fn read(bytes: &[u8]) -> Result<Contents<'_>, BundleError> {
    read_with_limits(bytes, &Limits::DEFAULT)
}

/// Reads a file's bundles: a host ELF's `.hip_fatbin` sections, a plain or
/// compressed bundle file, or recognises a bare AMDGPU code object. Every
/// bundle is kept (borrowed from `bytes`, or owned when decompressed); to read
/// a large file one bundle at a time, use [`scan`].
pub fn read_with_limits<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Contents<'a>, BundleError> {
    let mut bundles = Vec::new();
    let container = scan(&bytes, limits, |b| {
        bundles.push(b);
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|e| match e {
        ScanError::Bundle(e) => e,
        ScanError::Visit(never) => match never {},
    })?;
    Ok(Contents { container, bundles })
}

/// Why [`scan`] stopped: a malformed input, or the visitor's own error.
#[derive(Debug)]
pub enum ScanError<E> {
    Bundle(BundleError),
    Visit(E),
}

impl<E> From<BundleError> for ScanError<E> {
    fn from(e: BundleError) -> Self {
        ScanError::Bundle(e)
    }
}

/// Reads the bundles of `src` one at a time, in file order, handing each to
/// `visit` and dropping it before the next is read: memory holds one bundle
/// (at most [`Limits::max_bundle_size`] bytes, or
/// [`Limits::max_decompressed`] when decompressed) whatever the size of the
/// file. Returns what kind of file it was; for
/// [`Container::CodeObject`] nothing is visited. [`scan_entries`] holds even
/// less: one entry of a compressed bundle rather than the whole bundle.
pub fn scan<'a, S, E>(
    src: &S,
    limits: &Limits,
    mut visit: impl FnMut(Bundle<'a>) -> Result<(), E>,
) -> Result<Container, ScanError<E>>
where
    S: Source<'a> + ?Sized,
{
    scan_with(src, limits, |r, magic, at, rest| {
        let b = match magic {
            Magic::Plain => r.plain_at(src, at, rest)?,
            Magic::Compressed => r.compressed(src, at, rest)?,
        };
        let size = b.size;
        visit(b).map_err(ScanError::Visit)?;
        Ok(size)
    })
}

/// A bundle without its bytes: where it is, how it is compressed, and its
/// entry table. What [`scan_entries`] hands out before a bundle's entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleInfo {
    /// File offset of the bundle (of its `CCOB` header when compressed).
    pub offset: u64,
    /// Bytes the bundle occupies in the file (compressed, when it is).
    pub size: u64,
    pub compression: Option<Compression>,
    pub entries: Vec<BundleEntry>,
}

impl BundleInfo {
    /// File offset of an entry's bytes; `None` inside a compressed bundle.
    pub fn entry_file_offset(&self, e: &BundleEntry) -> Option<u64> {
        match self.compression {
            Some(_) => None,
            None => self.offset.checked_add(e.offset),
        }
    }
}

/// What [`scan_entries`] hands its visitor, in file order.
#[derive(Clone, Copy, Debug)]
pub enum Visit<'v> {
    /// A bundle's place, compression and entry table, before any of its
    /// entries.
    Bundle(&'v BundleInfo),
    /// The bytes of one device entry ([`BundleEntry::is_device_code`]) of the
    /// bundle handed out last. The entries of a bundle come in the order of
    /// their offsets (the order of the table, in every bundle clang writes);
    /// `index` is the entry's place in the table.
    Entry { index: usize, bytes: &'v [u8] },
}

/// Reads the bundles of `src` like [`scan`], but hands out a bundle's table
/// and then its device entries one at a time ([`Visit`]). A compressed
/// bundle is decompressed as a stream: its entry table is read, then each
/// device entry's bytes are decompressed into a buffer of their own, handed
/// out and dropped, and bytes no device entry names are decoded and
/// discarded; the stream must then end at the declared size, as in [`scan`].
/// Memory therefore holds the compressed payload (at most
/// [`Limits::max_bundle_size`]) and one entry (at most
/// [`Limits::max_decompressed`]), not the whole decompressed bundle, whose
/// declared size is bounded by what remains of
/// [`Limits::max_decompressed_total`] only. ROCm 7's libraries hold
/// compressed bundles of 1.2 GB (RCCL) and 2.0 GB (a hipCUB test) of code
/// objects of 100 to 200 MB each.
///
/// A malformed compressed bundle is refused with the same errors as by
/// [`scan`], though not always the same one first: the stream's length is
/// known to be wrong only once it has been decoded to its end, after the
/// entries before that point have been handed out.
pub fn scan_entries<'a, S, E>(
    src: &S,
    limits: &Limits,
    mut visit: impl FnMut(Visit<'_>) -> Result<(), E>,
) -> Result<Container, ScanError<E>>
where
    S: Source<'a> + ?Sized,
{
    scan_with(src, limits, |r, magic, at, rest| match magic {
        Magic::Plain => {
            let b = r.plain_at(src, at, rest)?;
            let info = BundleInfo {
                offset: b.offset,
                size: b.size,
                compression: None,
                entries: b.entries.clone(),
            };
            visit(Visit::Bundle(&info)).map_err(ScanError::Visit)?;
            let mut order: Vec<usize> = (0..b.entries.len())
                .filter(|&i| b.entries[i].is_device_code())
                .collect();
            order.sort_by_key(|&i| b.entries[i].offset);
            for index in order {
                let bytes = b.entry_bytes(&b.entries[index]);
                visit(Visit::Entry { index, bytes }).map_err(ScanError::Visit)?;
            }
            Ok(b.size)
        }
        Magic::Compressed => r.compressed_streamed(src, at, rest, &mut visit),
    })
}

/// Which magic starts the bundle at hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Magic {
    Plain,
    Compressed,
}

/// What [`scan`] and [`scan_entries`] share: the kind of file, its regions
/// of bundles, and the padding between them. `each` reads the bundle at
/// `at` (with `rest` bytes of its region from there), hands it out and
/// returns its size in the file.
fn scan_with<'a, S, E>(
    src: &S,
    limits: &Limits,
    mut each: impl FnMut(&mut Reader<'_>, Magic, u64, u64) -> Result<u64, ScanError<E>>,
) -> Result<Container, ScanError<E>>
where
    S: Source<'a> + ?Sized,
{
    let len = src.size();
    let head = read_at(src, 0, len.min(EHDR_SIZE as u64), "file header")?;
    let mut reader = Reader {
        limits,
        budget: limits.max_decompressed_total,
        bundles: 0,
        entry: Vec::new(),
        head: Vec::new(),
    };
    if head.starts_with(&ELF_MAGIC) {
        let machine = head
            .get(18..20)
            .map_or(0, |m| u16::from_le_bytes([m[0], m[1]]));
        if machine == EM_AMDGPU {
            return Ok(Container::CodeObject);
        }
        let sections = fatbin_sections(src, &head)?;
        for &(offset, size) in &sections {
            reader.scan(src, offset, size, &mut each)?;
        }
        Ok(Container::HostElf { machine, sections })
    } else if head.starts_with(BUNDLE_MAGIC) {
        reader.scan(src, 0, len, &mut each)?;
        Ok(Container::Bundle)
    } else if head.starts_with(COMPRESSED_BUNDLE_MAGIC) {
        reader.scan(src, 0, len, &mut each)?;
        Ok(Container::CompressedBundle)
    } else {
        Err(err(0, BundleErrorKind::UnknownFormat).into())
    }
}

/// `len` bytes at `offset`, or `Truncated { what }` when they are not all there,
/// or `Io` when reading fails.
fn read_at<'a, S: Source<'a> + ?Sized>(
    src: &S,
    offset: u64,
    len: u64,
    what: &'static str,
) -> Result<Cow<'a, [u8]>, BundleError> {
    if offset.checked_add(len).is_none_or(|end| end > src.size()) {
        return Err(err(offset, BundleErrorKind::Truncated { what }));
    }
    src.bytes(offset, len).map_err(|e| {
        err(
            offset,
            BundleErrorKind::Io {
                message: e.to_string(),
            },
        )
    })
}

/// The `(offset, size)` of each `.hip_fatbin` section of a host ELF whose
/// first bytes (up to the ELF header's size) are `head`. Reads the section
/// header table and the section name table, nothing else.
///
/// `object` reads the header and the section table, through a cache of
/// positioned reads of `src` (a 1.6 GB library is not read whole); each field
/// that has a limit or a typed error is checked here first, because
/// `object`'s errors name neither.
fn fatbin_sections<'a, S: Source<'a> + ?Sized>(
    src: &S,
    head: &[u8],
) -> Result<Vec<(u64, u64)>, BundleError> {
    use BundleErrorKind::*;
    let h: &FileHeader = head
        .read_at(0)
        .map_err(|()| err(0, Truncated { what: "ELF header" }))?;
    let ident = h.e_ident();
    if ident.class != ELFCLASS64 || ident.data != ELFDATA2LSB {
        return Err(err(
            4,
            UnsupportedElf {
                class: ident.class.0,
                data: ident.data.0,
            },
        ));
    }
    let shoff = h.e_shoff(LE);
    if shoff == 0 {
        return Err(err(0, NoSectionHeaders));
    }
    if usize::from(h.e_shentsize(LE)) != SHDR_SIZE {
        return Err(err(
            58,
            BadSectionEntrySize {
                size: h.e_shentsize(LE),
            },
        ));
    }
    let reader = SourceReader::new(src);
    let cache = ReadCache::new(&reader);
    let data = &cache;
    let failed = |offset, what| reader.error(offset, what);
    let what = "section header table";
    let first = h
        .section_0(LE, data)
        .ok()
        .flatten()
        .ok_or_else(|| failed(shoff, what))?;
    let count = match h.e_shnum(LE) {
        // Extended numbering: the count is section 0's sh_size.
        0 => first.sh_size(LE),
        n => u64::from(n),
    };
    if count > MAX_SECTIONS {
        return Err(err(shoff, TooManySections { count }));
    }
    // At most MAX_SECTIONS * 64 bytes (4 MiB).
    let sections = h
        .section_headers(LE, data)
        .map_err(|_| failed(shoff, what))?;
    let names_index = match h.e_shstrndx(LE) {
        SHN_XINDEX => u64::from(first.sh_link(LE)),
        n => u64::from(n.0),
    };
    let names = usize::try_from(names_index)
        .ok()
        .and_then(|i| sections.get(i))
        .filter(|s| has_file_bytes(s))
        .ok_or(err(62, BadSectionNameTable { index: names_index }))?;
    let (names_at, names_size) = (names.sh_offset(LE), names.sh_size(LE));
    if names_at
        .checked_add(names_size)
        .is_none_or(|e| e > src.size())
    {
        return Err(err(
            names_at,
            SectionOutOfBounds {
                // Checked just above to be in range.
                index: names_index as usize,
                size: names_size,
            },
        ));
    }
    if names_size > MAX_SECTION_NAME_BYTES {
        return Err(err(
            names_at,
            SectionNamesTooLarge {
                size: names_size,
                limit: MAX_SECTION_NAME_BYTES,
            },
        ));
    }
    let names = names
        .data(LE, data)
        .map_err(|_| failed(names_at, "section name table"))?;
    // Each name is compared where it starts, reading no more than the name
    // sought: `object`'s string lookup scans to the next NUL, which in a
    // crafted table is up to the table's end for every section.
    let is_named = |s: &SectionHeader, name: &str| {
        let want = name.len();
        usize::try_from(s.sh_name(LE))
            .ok()
            .and_then(|at| names.get(at..at.checked_add(want + 1)?))
            .is_some_and(|n| &n[..want] == name.as_bytes() && n[want] == 0)
    };
    let mut found = Vec::new();
    let mut new_driver = false;
    for (index, s) in sections.iter().enumerate() {
        if is_named(s, LLVM_OFFLOADING_SECTION) {
            new_driver = true;
        }
        if !is_named(s, HIP_FATBIN_SECTION) {
            continue;
        }
        let (offset, size) = (s.sh_offset(LE), s.sh_size(LE));
        if !has_file_bytes(s) {
            return Err(err(offset, FatbinWithoutBytes { index }));
        }
        if offset.checked_add(size).is_none_or(|e| e > src.size()) {
            return Err(err(offset, SectionOutOfBounds { index, size }));
        }
        found.push((offset, size));
    }
    if found.is_empty() {
        return Err(err(
            0,
            NoHipFatbin {
                machine: h.e_machine(LE).0,
                new_driver,
            },
        ));
    }
    Ok(found)
}

/// A [`Source`] as the stream `object`'s [`ReadCache`] reads: each read is
/// one [`Source::bytes`] (one `pread` of a file). Remembers the first I/O
/// error, which `object` reduces to "failed", so that the caller can report
/// it instead of a truncation.
struct SourceReader<'s, S: ?Sized> {
    src: &'s S,
    pos: std::cell::Cell<u64>,
    io_error: std::cell::RefCell<Option<String>>,
}

impl<'s, S: ?Sized> SourceReader<'s, S> {
    fn new(src: &'s S) -> Self {
        SourceReader {
            src,
            pos: std::cell::Cell::new(0),
            io_error: std::cell::RefCell::new(None),
        }
    }

    /// The error for a failed read of `what` at `offset`: the I/O error if
    /// one happened, otherwise `Truncated` (the bytes are not in the file).
    fn error(&self, offset: u64, what: &'static str) -> BundleError {
        match self.io_error.borrow_mut().take() {
            Some(message) => err(offset, BundleErrorKind::Io { message }),
            None => err(offset, BundleErrorKind::Truncated { what }),
        }
    }
}

impl<'a, S: Source<'a> + ?Sized> ReadCacheOps for &SourceReader<'_, S> {
    fn len(&mut self) -> Result<u64, ()> {
        Ok(self.src.size())
    }

    fn seek(&mut self, pos: u64) -> Result<u64, ()> {
        self.pos.set(pos);
        Ok(pos)
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ()> {
        let pos = self.pos.get();
        let n = (buf.len() as u64).min(self.src.size().saturating_sub(pos));
        let bytes = self.src.bytes(pos, n).map_err(|e| {
            self.io_error.borrow_mut().get_or_insert(e.to_string());
        })?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        self.pos.set(pos + n as u64);
        Ok(n)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), ()> {
        match self.read(buf)? {
            n if n == buf.len() => Ok(()),
            _ => Err(()),
        }
    }
}

/// Longest section name table read from a host ELF (real ones are a few
/// hundred bytes).
pub const MAX_SECTION_NAME_BYTES: u64 = 16 << 20;

/// Bytes read at a time while skipping the zero padding between bundles.
const PADDING_CHUNK: u64 = 64 << 10;

struct Reader<'l> {
    limits: &'l Limits,
    /// Decompressed bytes the file may still cause.
    budget: u64,
    /// Bundles read so far.
    bundles: usize,
    /// The buffer the entries of compressed bundles are decompressed into,
    /// kept from one entry and one bundle to the next: it grows to the
    /// largest entry and is never zeroed again.
    entry: Vec<u8>,
    /// Likewise, the buffer a compressed bundle's first bytes (its entry
    /// table) are decompressed into.
    head: Vec<u8>,
}

impl Reader<'_> {
    /// Reads the bundles of the region `[base, base + size)` of `src`:
    /// bundles back to back, with zero padding before and between them.
    fn scan<'a, S, E>(
        &mut self,
        src: &S,
        base: u64,
        size: u64,
        each: &mut impl FnMut(&mut Self, Magic, u64, u64) -> Result<u64, ScanError<E>>,
    ) -> Result<(), ScanError<E>>
    where
        S: Source<'a> + ?Sized,
    {
        // Checked by the caller: the region lies inside the source.
        let end = base.saturating_add(size);
        let mut at = base;
        loop {
            // Skip zero padding, a chunk at a time.
            loop {
                if at >= end {
                    return Ok(());
                }
                let n = (end - at).min(PADDING_CHUNK);
                let chunk = read_at(src, at, n, "fat binary section")?;
                match chunk.iter().position(|&b| b != 0) {
                    Some(i) => {
                        at += i as u64;
                        break;
                    }
                    None => at += n,
                }
            }
            if self.bundles >= self.limits.max_bundles {
                return Err(err(
                    at,
                    BundleErrorKind::TooManyBundles {
                        limit: self.limits.max_bundles,
                    },
                )
                .into());
            }
            let rest = end - at;
            let magic = read_at(src, at, rest.min(BUNDLE_MAGIC.len() as u64), "bundle magic")?;
            let kind = if magic.starts_with(BUNDLE_MAGIC) {
                Magic::Plain
            } else if magic.starts_with(COMPRESSED_BUNDLE_MAGIC) {
                Magic::Compressed
            } else {
                return Err(err(at, BundleErrorKind::UnexpectedBytes).into());
            };
            let bundle_size = each(self, kind, at, rest)?;
            self.bundles += 1;
            // Every bundle is at least its header long, so this advances.
            at = at.saturating_add(bundle_size.max(1));
        }
    }

    /// The plain bundle at `at`, with `rest` bytes of its region from there:
    /// finds its length from its entry table (read entry by entry), then
    /// reads it whole and checks it.
    fn plain_at<'a, S: Source<'a> + ?Sized>(
        &self,
        src: &S,
        at: u64,
        rest: u64,
    ) -> Result<Bundle<'a>, BundleError> {
        let len = plain_len(src, at, rest, self.limits)?;
        if len > self.limits.max_bundle_size {
            return Err(err(
                at,
                BundleErrorKind::BundleTooLarge {
                    size: len,
                    limit: self.limits.max_bundle_size,
                },
            ));
        }
        let data = read_at(src, at, len, "bundle")?;
        let (entries, checked) =
            plain(&data, data.len() as u64, self.limits).map_err(|(o, kind)| BundleError {
                offset: at.saturating_add(o),
                decompressed_offset: None,
                kind,
            })?;
        debug_assert_eq!(checked, len);
        Ok(Bundle {
            offset: at,
            size: len,
            compression: None,
            entries,
            data,
        })
    }

    /// Reads the compressed bundle at `at` (with `rest` bytes of its region)
    /// and decompresses it whole: at most [`Limits::max_decompressed`] bytes.
    fn compressed<'a, S: Source<'a> + ?Sized>(
        &mut self,
        src: &S,
        at: u64,
        rest: u64,
    ) -> Result<Bundle<'a>, BundleError> {
        use BundleErrorKind::*;
        let (comp, size) =
            self.compressed_header(src, at, rest, self.limits.max_decompressed.min(self.budget))?;
        let header_size = comp.header_size;
        let payload = read_at(
            src,
            at + header_size,
            size - header_size,
            "compressed bundle",
        )?;
        let plain_bytes = decompress(comp.method, &payload, comp.uncompressed_size)
            .map_err(|kind| err(at + header_size, kind))?;
        drop(payload);
        self.budget -= comp.uncompressed_size;
        let inside = |offset: u64, kind| BundleError {
            offset: at,
            decompressed_offset: Some(offset),
            kind,
        };
        if !plain_bytes.starts_with(BUNDLE_MAGIC) {
            return Err(inside(0, NotABundle));
        }
        // Bytes after the last entry (alignment) are allowed.
        let len = plain_bytes.len() as u64;
        let (entries, _) = plain(&plain_bytes, len, self.limits).map_err(|(o, k)| inside(o, k))?;
        Ok(Bundle {
            offset: at,
            size,
            compression: Some(comp),
            entries,
            data: Cow::Owned(plain_bytes),
        })
    }

    /// Reads the compressed bundle at `at` (with `rest` bytes of its region)
    /// as a stream, for [`scan_entries`]: the header and entry table, then
    /// each device entry in the order of their offsets, each handed to
    /// `visit` and dropped; the rest of the stream is decoded and discarded
    /// and must end at the declared size. Returns the bundle's size in the
    /// file.
    fn compressed_streamed<'a, S, E>(
        &mut self,
        src: &S,
        at: u64,
        rest: u64,
        visit: &mut impl FnMut(Visit<'_>) -> Result<(), E>,
    ) -> Result<u64, ScanError<E>>
    where
        S: Source<'a> + ?Sized,
    {
        use BundleErrorKind::*;
        let (comp, size) = self.compressed_header(src, at, rest, self.budget)?;
        let header_size = comp.header_size;
        let declared = comp.uncompressed_size;
        let payload = read_at(
            src,
            at + header_size,
            size - header_size,
            "compressed bundle",
        )?;
        let in_payload = |kind| ScanError::Bundle(err(at + header_size, kind));
        let inside = |offset: u64, kind| {
            ScanError::Bundle(BundleError {
                offset: at,
                decompressed_offset: Some(offset),
                kind,
            })
        };
        let mut flow = Inflow::new(comp.method, &payload, declared);
        // The head: the longest entry table the limits allow, or the whole
        // bundle when it is shorter. A table that does not fit in it breaks
        // a limit first, so `plain` reads every table it accepts from here.
        let table_max = BUNDLE_HEADER_SIZE.saturating_add(
            self.limits
                .max_entries
                .saturating_mul(ENTRY_FIXED_SIZE.saturating_add(self.limits.max_id_len)),
        );
        let head_len = declared.min(table_max);
        let mut head_buf = std::mem::take(&mut self.head);
        if (head_buf.len() as u64) < head_len {
            let grow = head_len - head_buf.len() as u64;
            grow_zeroed(&mut head_buf, grow).map_err(|kind| inside(0, kind))?;
        }
        let head = &mut head_buf[..head_len as usize];
        flow.fill(head).map_err(in_payload)?;
        if !head.starts_with(BUNDLE_MAGIC) {
            return Err(inside(0, NotABundle));
        }
        let (entries, _) = plain(head, declared, self.limits).map_err(|(o, k)| inside(o, k))?;
        self.budget -= declared;
        let info = BundleInfo {
            offset: at,
            size,
            compression: Some(comp),
            entries,
        };
        visit(Visit::Bundle(&info)).map_err(ScanError::Visit)?;
        let mut order: Vec<usize> = (0..info.entries.len())
            .filter(|&i| info.entries[i].is_device_code())
            .collect();
        order.sort_by_key(|&i| info.entries[i].offset);
        let mut bytes = std::mem::take(&mut self.entry);
        for index in order {
            let e = &info.entries[index];
            if e.size > self.limits.max_decompressed {
                return Err(inside(
                    e.offset,
                    EntryTooLarge {
                        index: index as u64,
                        size: e.size,
                        limit: self.limits.max_decompressed,
                    },
                ));
            }
            // Non-empty entries do not overlap and come in offset order, so
            // an entry starts in the head or at or after the stream's place.
            // Every byte of `bytes[..e.size]` is written below (from the
            // head, then from the stream), so the buffer is only grown (and
            // zeroed) where it is too short.
            if (bytes.len() as u64) < e.size {
                let grow = e.size - bytes.len() as u64;
                grow_zeroed(&mut bytes, grow).map_err(|kind| inside(e.offset, kind))?;
            }
            let bytes = &mut bytes[..e.size as usize];
            let end = e.offset + e.size;
            let from_head = head_len.clamp(e.offset, end) - e.offset;
            if from_head > 0 {
                let (a, b) = (e.offset as usize, (e.offset + from_head) as usize);
                bytes[..from_head as usize].copy_from_slice(&head[a..b]);
            }
            if end > flow.pos {
                flow.skip(e.offset.saturating_sub(flow.pos))
                    .map_err(in_payload)?;
                let from = (flow.pos - e.offset) as usize;
                flow.fill(&mut bytes[from..]).map_err(in_payload)?;
            }
            visit(Visit::Entry {
                index,
                bytes: &*bytes,
            })
            .map_err(ScanError::Visit)?;
        }
        self.entry = bytes;
        self.head = head_buf;
        flow.finish().map_err(in_payload)?;
        Ok(size)
    }

    /// The header of the compressed bundle at `at` (with `rest` bytes of its
    /// region), checked: version, method, declared sizes (the uncompressed
    /// one against `limit`, the payload against
    /// [`Limits::max_bundle_size`]). Returns it and the bundle's size in the
    /// file (a v1 bundle runs to the end of its region).
    fn compressed_header<'a, S: Source<'a> + ?Sized>(
        &self,
        src: &S,
        at: u64,
        rest: u64,
        limit: u64,
    ) -> Result<(Compression, u64), BundleError> {
        use BundleErrorKind::*;
        let truncated = err(
            at,
            Truncated {
                what: "compressed bundle header",
            },
        );
        let r = read_at(src, at, rest.min(32), "compressed bundle header")?;
        let u16_at = |o: usize| r.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let u32_at = |o: usize| {
            r.get(o..o + 4)
                .and_then(|b| b.try_into().ok())
                .map(|b| u64::from(u32::from_le_bytes(b)))
        };
        let u64_at = |o: usize| {
            r.get(o..o + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
        };
        let version = u16_at(4).ok_or(truncated.clone())?;
        let method = CompressionMethod(u16_at(6).ok_or(truncated.clone())?);
        let fields = match version {
            1 => (20, None, u32_at(8), u64_at(12)),
            2 => (24, Some(u32_at(8)), u32_at(12), u64_at(16)),
            3 => (32, Some(u64_at(8)), u64_at(16), u64_at(24)),
            _ => return Err(err(at + 4, UnsupportedCompressionVersion { version })),
        };
        let (header_size, total, uncompressed, hash) = fields;
        let total = total.map(|t| t.ok_or(truncated.clone())).transpose()?;
        let uncompressed_size = uncompressed.ok_or(truncated.clone())?;
        let hash = hash.ok_or(truncated)?;
        if method.name().is_none() {
            return Err(err(at + 6, UnknownCompressionMethod { method }));
        }
        let available = rest;
        let size = match total {
            Some(t) if t < header_size || t > available => {
                return Err(err(
                    at + 8,
                    BadCompressedSize {
                        declared: t,
                        available,
                    },
                ));
            }
            Some(t) => t,
            None => available,
        };
        if uncompressed_size > limit {
            return Err(err(
                at,
                DecompressedTooLarge {
                    size: uncompressed_size,
                    limit,
                },
            ));
        }
        let payload_len = size - header_size;
        if payload_len > self.limits.max_bundle_size {
            return Err(err(
                at,
                BundleTooLarge {
                    size: payload_len,
                    limit: self.limits.max_bundle_size,
                },
            ));
        }
        Ok((
            Compression {
                version,
                method,
                header_size,
                total_size: total,
                uncompressed_size,
                hash,
            },
            size,
        ))
    }
}

/// Appends `more` zero bytes to `v`, or says the allocation failed.
fn grow_zeroed(v: &mut Vec<u8>, more: u64) -> Result<(), BundleErrorKind> {
    let failed = || BundleErrorKind::Io {
        message: format!("cannot allocate {more} bytes"),
    };
    let n = usize::try_from(more).map_err(|_| failed())?;
    v.try_reserve_exact(n).map_err(|_| failed())?;
    v.resize(v.len() + n, 0);
    Ok(())
}

/// The length of the plain bundle at `at` (with `rest` bytes of its region
/// from there): the end of its entry table or of its last entry, whichever
/// is later. Reads the header and the table, one entry at a time, and checks
/// what [`plain`] checks of them, so no length is trusted before it has been
/// checked against the bytes there.
fn plain_len<'a, S: Source<'a> + ?Sized>(
    src: &S,
    at: u64,
    rest: u64,
    limits: &Limits,
) -> Result<u64, BundleError> {
    use BundleErrorKind::*;
    let fail = |o: u64, kind| err(at.saturating_add(o), kind);
    let u64s = |o: u64, n: u64, what| -> Result<Vec<u64>, BundleError> {
        if o.checked_add(8 * n).is_none_or(|e| e > rest) {
            return Err(fail(o, Truncated { what }));
        }
        let b = read_at(src, at + o, 8 * n, what)?;
        Ok(b.chunks_exact(8)
            .filter_map(|c| c.try_into().ok().map(u64::from_le_bytes))
            .collect())
    };
    let count = u64s(24, 1, "bundle entry count")?[0];
    if count > limits.max_entries {
        return Err(fail(
            24,
            TooManyEntries {
                count,
                limit: limits.max_entries,
            },
        ));
    }
    if count.saturating_mul(ENTRY_FIXED_SIZE) > rest.saturating_sub(BUNDLE_HEADER_SIZE) {
        return Err(fail(
            BUNDLE_HEADER_SIZE,
            Truncated {
                what: "bundle entry table",
            },
        ));
    }
    let mut pos = BUNDLE_HEADER_SIZE;
    let mut end = 0u64;
    for index in 0..count {
        let f = u64s(pos, 3, "bundle entry")?;
        let (offset, size, id_len) = (f[0], f[1], f[2]);
        if id_len > limits.max_id_len {
            return Err(fail(
                pos + 16,
                EntryIdTooLong {
                    index,
                    len: id_len,
                    limit: limits.max_id_len,
                },
            ));
        }
        let entry_end = offset.checked_add(size).filter(|&e| e <= rest).ok_or(fail(
            pos,
            EntryOutOfBounds {
                index,
                offset,
                size,
            },
        ))?;
        end = end.max(entry_end);
        pos += ENTRY_FIXED_SIZE + id_len;
        if pos > rest {
            return Err(fail(
                pos - ENTRY_FIXED_SIZE - id_len,
                Truncated {
                    what: "bundle entry",
                },
            ));
        }
    }
    Ok(end.max(pos))
}

/// Reads the plain bundle of `len` bytes whose first bytes, at least its
/// header and entry table, are `r` (the whole bundle, or the head of one
/// being decompressed as a stream): its entries, each checked to lie inside
/// the `len` bytes, and its length (the end of its entry table or of its
/// last entry, whichever is later). Errors carry an offset from the start
/// of the bundle.
fn plain(
    r: &[u8],
    len: u64,
    limits: &Limits,
) -> Result<(Vec<BundleEntry>, u64), (u64, BundleErrorKind)> {
    use BundleErrorKind::*;
    let table_room = r.len() as u64;
    let u64_at = |o: u64| {
        slice(r, o, 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    let count = u64_at(24).ok_or((
        24,
        Truncated {
            what: "bundle entry count",
        },
    ))?;
    if count > limits.max_entries {
        return Err((
            24,
            TooManyEntries {
                count,
                limit: limits.max_entries,
            },
        ));
    }
    // Each entry takes at least its fixed fields: refuse a count the bytes
    // cannot back before allocating for it.
    if count.saturating_mul(ENTRY_FIXED_SIZE) > table_room.saturating_sub(BUNDLE_HEADER_SIZE) {
        return Err((
            BUNDLE_HEADER_SIZE,
            Truncated {
                what: "bundle entry table",
            },
        ));
    }
    let mut entries = Vec::with_capacity(count as usize);
    let mut pos = BUNDLE_HEADER_SIZE;
    let mut end = 0u64;
    for index in 0..count {
        let fixed = |k: u64| u64_at(pos + 8 * k);
        let truncated = (
            pos,
            Truncated {
                what: "bundle entry",
            },
        );
        let (Some(offset), Some(size), Some(id_len)) = (fixed(0), fixed(1), fixed(2)) else {
            return Err(truncated);
        };
        if id_len > limits.max_id_len {
            return Err((
                pos + 16,
                EntryIdTooLong {
                    index,
                    len: id_len,
                    limit: limits.max_id_len,
                },
            ));
        }
        let id_at = pos + ENTRY_FIXED_SIZE;
        let id = slice(r, id_at, id_len).ok_or(truncated)?;
        let id = std::str::from_utf8(id).map_err(|_| (id_at, EntryIdNotUtf8 { index }))?;
        let entry_end = offset.checked_add(size).filter(|&e| e <= len).ok_or((
            pos,
            EntryOutOfBounds {
                index,
                offset,
                size,
            },
        ))?;
        end = end.max(entry_end);
        entries.push(BundleEntry {
            id: id.to_owned(),
            offset,
            size,
        });
        pos = id_at + id_len;
    }
    let mut spans: Vec<(u64, u64, u64)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.size > 0)
        .map(|(i, e)| (e.offset, e.offset + e.size, i as u64))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if let [(_, a_end, a), (b_start, _, b)] = w {
            if a_end > b_start {
                let (first, second) = ((*a).min(*b), (*a).max(*b));
                return Err((BUNDLE_HEADER_SIZE, OverlappingEntries { first, second }));
            }
        }
    }
    Ok((entries, end.max(pos)))
}

/// Decompresses `payload` to exactly `size` bytes (`size` already checked
/// against the limits); the output grows only as bytes are produced.
fn decompress(
    method: CompressionMethod,
    payload: &[u8],
    size: u64,
) -> Result<Vec<u8>, BundleErrorKind> {
    let corrupt = |message: String| BundleErrorKind::Decompression { method, message };
    let limit = usize::try_from(size).map_err(|_| BundleErrorKind::DecompressedTooLarge {
        size,
        limit: usize::MAX as u64,
    })?;
    let out = match method {
        CompressionMethod::ZSTD => zstd(payload, limit).map_err(corrupt)?,
        CompressionMethod::ZLIB => {
            use miniz_oxide::inflate::{TINFLStatus, decompress_to_vec_zlib_with_limit};
            match decompress_to_vec_zlib_with_limit(payload, limit) {
                Ok(v) => v,
                Err(e) if e.status == TINFLStatus::HasMoreOutput => {
                    return Err(BundleErrorKind::DecompressedLonger { declared: size });
                }
                Err(e) => return Err(corrupt(e.to_string())),
            }
        }
        method => return Err(BundleErrorKind::UnknownCompressionMethod { method }),
    };
    match (out.len() as u64).cmp(&size) {
        std::cmp::Ordering::Equal => Ok(out),
        std::cmp::Ordering::Greater => Err(BundleErrorKind::DecompressedLonger { declared: size }),
        std::cmp::Ordering::Less => Err(BundleErrorKind::DecompressedShorter {
            declared: size,
            actual: out.len() as u64,
        }),
    }
}

/// Decodes zstd frames (skipping skippable ones) until `limit + 1` bytes are
/// out or the input ends. Bytes after the frame that completes the output are
/// ignored: a v1 compressed bundle does not say where its payload ends.
fn zstd(mut input: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    use ruzstd::decoding::{FrameDecoder, StreamingDecoder};
    // Compressed code objects shrink about 5 to 10 times; start there and grow.
    let mut out = Vec::with_capacity(limit.min(input.len().saturating_mul(8)));
    let mut frames = FrameDecoder::new();
    while out.len() <= limit && !input.is_empty() {
        let decoder = match StreamingDecoder::new_with_decoder(&mut input, &mut frames) {
            Ok(d) => d,
            Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                length,
                ..
            })) => {
                input = usize::try_from(length)
                    .ok()
                    .and_then(|n| input.get(n..))
                    .ok_or("a skippable frame runs past the end")?;
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        let want = (limit - out.len()) as u64 + 1;
        decoder
            .take(want)
            .read_to_end(&mut out)
            .map_err(|e| e.to_string())?;
        if out.len() == limit {
            break;
        }
    }
    Ok(out)
}

/// A compressed bundle's payload decompressed as it is read, for
/// [`scan_entries`]: bytes come out in order, `pos` counts them, and the
/// stream must end at `declared` bytes ([`Inflow::finish`]). The same
/// decoders and the same end rules as [`decompress`]: zstd frames (skippable
/// ones skipped) until a frame ends at the declared size, bytes after it
/// ignored; one zlib stream.
struct Inflow<'p> {
    method: CompressionMethod,
    decoder: Decoder<'p>,
    declared: u64,
    /// Bytes handed out (or skipped) so far.
    pos: u64,
}

enum Decoder<'p> {
    Zstd {
        input: &'p [u8],
        frames: Box<ruzstd::decoding::FrameDecoder>,
        in_frame: bool,
    },
    Zlib {
        input: &'p [u8],
        state: Box<miniz_oxide::inflate::stream::InflateState>,
        ended: bool,
    },
}

/// Most bytes asked of a decoder at a time, and decoded at a time while
/// skipping.
const SKIP_CHUNK: usize = 64 << 10;

impl<'p> Inflow<'p> {
    /// `method` is zlib or zstd (checked with the header).
    fn new(method: CompressionMethod, payload: &'p [u8], declared: u64) -> Self {
        let decoder = if method == CompressionMethod::ZLIB {
            Decoder::Zlib {
                input: payload,
                state: miniz_oxide::inflate::stream::InflateState::new_boxed(
                    miniz_oxide::DataFormat::Zlib,
                ),
                ended: false,
            }
        } else {
            Decoder::Zstd {
                input: payload,
                frames: Box::new(ruzstd::decoding::FrameDecoder::new()),
                in_frame: false,
            }
        };
        Inflow {
            method,
            decoder,
            declared,
            pos: 0,
        }
    }

    /// Fills `out` with the next bytes; the caller never asks past the
    /// declared size. A stream that ends first is `DecompressedShorter`.
    fn fill(&mut self, out: &mut [u8]) -> Result<(), BundleErrorKind> {
        let mut done = 0;
        while done < out.len() {
            // A bounded request: the zstd decoder buffers what it is asked
            // for before handing it out.
            let k = (out.len() - done).min(SKIP_CHUNK);
            let n = self
                .decoder
                .read(&mut out[done..done + k], false)
                .map_err(|message| BundleErrorKind::Decompression {
                    method: self.method,
                    message,
                })?;
            if n == 0 {
                return Err(BundleErrorKind::DecompressedShorter {
                    declared: self.declared,
                    actual: self.pos,
                });
            }
            done += n;
            self.pos += n as u64;
        }
        Ok(())
    }

    /// Decodes and discards the next `n` bytes.
    fn skip(&mut self, mut n: u64) -> Result<(), BundleErrorKind> {
        let mut scratch = vec![0u8; (n as usize).min(SKIP_CHUNK)];
        while n > 0 {
            let k = (n as usize).min(scratch.len());
            self.fill(&mut scratch[..k])?;
            n -= k as u64;
        }
        Ok(())
    }

    /// Decodes the rest up to the declared size, then checks that the
    /// stream ends there (`DecompressedLonger` otherwise).
    fn finish(&mut self) -> Result<(), BundleErrorKind> {
        self.skip(self.declared - self.pos)?;
        let mut one = [0u8; 1];
        let more = self.decoder.read(&mut one, true).map_err(|message| {
            BundleErrorKind::Decompression {
                method: self.method,
                message,
            }
        })?;
        if more > 0 {
            return Err(BundleErrorKind::DecompressedLonger {
                declared: self.declared,
            });
        }
        Ok(())
    }
}

impl Decoder<'_> {
    /// Up to `buf.len()` (non-zero) more bytes; 0 at the end of the stream.
    /// With `last`, a zstd frame that has ended ends the stream (the
    /// declared size is reached: later frames are not read).
    fn read(&mut self, buf: &mut [u8], last: bool) -> Result<usize, String> {
        match self {
            Decoder::Zstd {
                input,
                frames,
                in_frame,
            } => {
                use ruzstd::decoding::BlockDecodingStrategy;
                use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
                loop {
                    if *in_frame {
                        while frames.can_collect() < buf.len() && !frames.is_finished() {
                            let want = buf.len() - frames.can_collect();
                            frames
                                .decode_blocks(&mut *input, BlockDecodingStrategy::UptoBytes(want))
                                .map_err(|e| e.to_string())?;
                        }
                        let n = frames.read(buf).map_err(|e| e.to_string())?;
                        if n > 0 {
                            return Ok(n);
                        }
                        *in_frame = false;
                        if last {
                            return Ok(0);
                        }
                    }
                    if input.is_empty() {
                        return Ok(0);
                    }
                    match frames.reset(&mut *input) {
                        Ok(()) => *in_frame = true,
                        Err(FrameDecoderError::ReadFrameHeaderError(
                            ReadFrameHeaderError::SkipFrame { length, .. },
                        )) => {
                            *input = usize::try_from(length)
                                .ok()
                                .and_then(|n| input.get(n..))
                                .ok_or("a skippable frame runs past the end")?;
                        }
                        Err(e) => return Err(e.to_string()),
                    }
                }
            }
            Decoder::Zlib {
                input,
                state,
                ended,
            } => {
                use miniz_oxide::inflate::stream::inflate;
                use miniz_oxide::{MZFlush, MZStatus};
                while !*ended {
                    let r = inflate(state, input, buf, MZFlush::None);
                    *input = input.get(r.bytes_consumed..).unwrap_or_default();
                    match r.status {
                        Ok(MZStatus::StreamEnd) => {
                            *ended = true;
                            return Ok(r.bytes_written);
                        }
                        Ok(_) if r.bytes_written > 0 => return Ok(r.bytes_written),
                        Ok(_) if r.bytes_consumed > 0 => {}
                        Ok(_) | Err(miniz_oxide::MZError::Buf) if input.is_empty() => {
                            return Err("the payload ends inside the zlib stream".into());
                        }
                        Ok(_) => return Err("the zlib stream makes no progress".into()),
                        Err(e) => return Err(format!("zlib stream: {e:?}")),
                    }
                }
                Ok(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut head = BUNDLE_MAGIC.to_vec();
        head.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let table: u64 = entries.iter().map(|(id, _)| 24 + id.len() as u64).sum();
        let mut at = 32 + table;
        let mut body = Vec::new();
        for (id, bytes) in entries {
            head.extend_from_slice(&at.to_le_bytes());
            head.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            head.extend_from_slice(&(id.len() as u64).to_le_bytes());
            head.extend_from_slice(id.as_bytes());
            body.extend_from_slice(bytes);
            at += bytes.len() as u64;
        }
        head.extend_from_slice(&body);
        head
    }

    fn ccob(version: u16, method: u16, plain: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut v = COMPRESSED_BUNDLE_MAGIC.to_vec();
        v.extend_from_slice(&version.to_le_bytes());
        v.extend_from_slice(&method.to_le_bytes());
        let header = [20u64, 24, 32][usize::from(version - 1)];
        let total = header + payload.len() as u64;
        match version {
            1 => v.extend_from_slice(&(plain.len() as u32).to_le_bytes()),
            2 => {
                v.extend_from_slice(&(total as u32).to_le_bytes());
                v.extend_from_slice(&(plain.len() as u32).to_le_bytes());
            }
            _ => {
                v.extend_from_slice(&total.to_le_bytes());
                v.extend_from_slice(&(plain.len() as u64).to_le_bytes());
            }
        }
        v.extend_from_slice(&0x1234u64.to_le_bytes());
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn entry_ids_split_into_kind_triple_and_target_id() {
        let id = parse_entry_id("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-");
        assert_eq!(
            id,
            EntryId {
                kind: "hipv4",
                triple: "amdgcn-amd-amdhsa",
                target_id: Some("gfx90a:sramecc+:xnack-")
            }
        );
        let host = parse_entry_id("host-x86_64-unknown-linux-gnu-");
        assert_eq!(
            (host.kind, host.triple, host.target_id),
            ("host", "x86_64-unknown-linux-gnu", None)
        );
        let old = parse_entry_id("host-x86_64-unknown-linux");
        assert_eq!(old.triple, "x86_64-unknown-linux");
        assert_eq!(parse_entry_id("x").kind, "x");
        assert_eq!(
            split_triple_target("amdgcn-amd-amdhsa--gfx1030"),
            ("amdgcn-amd-amdhsa", Some("gfx1030"))
        );
    }

    #[test]
    fn a_plain_bundle_lists_its_entries_and_their_bytes() {
        let b = bundle(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hip-amdgcn-amd-amdhsa--gfx90a", b"\x7fELFabc"),
        ]);
        let c = read(&b).unwrap();
        assert_eq!(c.container, Container::Bundle);
        assert_eq!(c.bundles.len(), 1);
        let bun = &c.bundles[0];
        assert_eq!(bun.size, b.len() as u64);
        assert_eq!(bun.entries.len(), 2);
        assert!(!bun.entries[0].is_device_code());
        assert!(bun.entries[1].is_device_code());
        assert_eq!(bun.entry_bytes(&bun.entries[1]), b"\x7fELFabc");
        assert_eq!(
            bun.entry_file_offset(&bun.entries[1]),
            Some(b.len() as u64 - 7)
        );
    }

    #[test]
    fn zlib_and_zstd_compressed_bundles_of_every_version_decompress() {
        let plain = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", &[7u8; 3000])]);
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        // A zstd frame of raw blocks, written by hand: frame header with a
        // single-segment 2-byte content size, one raw last block.
        let mut zstd = vec![0x28, 0xb5, 0x2f, 0xfd, 0x60];
        zstd.extend_from_slice(&((plain.len() - 256) as u16).to_le_bytes());
        let block = ((plain.len() as u32) << 3) | 1;
        zstd.extend_from_slice(&block.to_le_bytes()[..3]);
        zstd.extend_from_slice(&plain);
        for version in 1..=3 {
            for (method, payload) in [(0, &zlib), (1, &zstd)] {
                let file = ccob(version, method, &plain, payload);
                let c = read(&file).unwrap_or_else(|e| panic!("v{version} m{method}: {e}"));
                assert_eq!(c.container, Container::CompressedBundle);
                let b = &c.bundles[0];
                let comp = b.compression.unwrap();
                assert_eq!((comp.version, comp.method.0), (version, method));
                assert_eq!(comp.uncompressed_size, plain.len() as u64);
                assert_eq!(b.entry_bytes(&b.entries[0]), &[7u8; 3000][..]);
                assert_eq!(b.entry_file_offset(&b.entries[0]), None);
            }
        }
    }

    #[test]
    fn declared_sizes_are_checked_before_anything_is_allocated() {
        let plain = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", b"x")]);
        let mut file = ccob(3, 1, &plain, b"junk");
        file[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = read(&file).unwrap_err();
        assert!(
            matches!(e.kind, BundleErrorKind::DecompressedTooLarge { .. }),
            "{e}"
        );
        let mut file = ccob(2, 1, &plain, b"junk");
        file[8..12].copy_from_slice(&1000u32.to_le_bytes());
        assert!(matches!(
            read(&file).unwrap_err().kind,
            BundleErrorKind::BadCompressedSize { .. }
        ));
        let mut b = bundle(&[("a", b"")]);
        b[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            read(&b).unwrap_err().kind,
            BundleErrorKind::TooManyEntries { .. }
        ));
        b[24..32].copy_from_slice(&4000u64.to_le_bytes());
        assert_eq!(
            read(&b).unwrap_err().kind,
            BundleErrorKind::Truncated {
                what: "bundle entry table"
            }
        );
    }

    #[test]
    fn a_lying_uncompressed_size_is_an_error_either_way() {
        let plain = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", &[1u8; 100])]);
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        let mut file = ccob(2, 0, &plain, &zlib);
        file[12..16].copy_from_slice(&((plain.len() - 1) as u32).to_le_bytes());
        assert!(matches!(
            read(&file).unwrap_err().kind,
            BundleErrorKind::DecompressedLonger { .. }
        ));
        file[12..16].copy_from_slice(&((plain.len() + 1) as u32).to_le_bytes());
        assert!(matches!(
            read(&file).unwrap_err().kind,
            BundleErrorKind::DecompressedShorter { .. }
        ));
    }

    #[test]
    fn errors_inside_a_decompressed_bundle_name_both_offsets() {
        let mut plain = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", b"abc")]);
        plain[32..40].copy_from_slice(&1000u64.to_le_bytes());
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        let mut file = vec![0u8; 0];
        file.extend_from_slice(&ccob(2, 0, &plain, &zlib));
        let e = read(&file).unwrap_err();
        assert_eq!((e.offset, e.decompressed_offset), (0, Some(32)));
        assert!(e.to_string().contains("decompressed"), "{e}");
    }

    #[test]
    fn overlapping_entries_and_unknown_methods_are_refused() {
        let mut b = bundle(&[("a-x", b"abcd"), ("b-y", b"efgh")]);
        // Point the second entry into the first.
        let second = 32 + 24 + 3;
        let first_at = u64::from_le_bytes(b[32..40].try_into().unwrap());
        b[second..second + 8].copy_from_slice(&(first_at + 2).to_le_bytes());
        assert_eq!(
            read(&b).unwrap_err().kind,
            BundleErrorKind::OverlappingEntries {
                first: 0,
                second: 1
            }
        );
        let file = ccob(2, 7, b"", b"");
        assert_eq!(
            read(&file).unwrap_err().kind,
            BundleErrorKind::UnknownCompressionMethod {
                method: CompressionMethod(7)
            }
        );
        assert_eq!(
            CompressionMethod(7).to_string(),
            "unknown compression method: 7"
        );
    }

    #[test]
    fn bundles_back_to_back_after_zero_padding_are_all_read() {
        let one = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", b"1")]);
        let mut file = one.clone();
        file.resize(4096, 0);
        file.extend_from_slice(&one);
        file.resize(8192, 0);
        let c = read(&file).unwrap();
        assert_eq!(
            c.bundles.iter().map(|b| b.offset).collect::<Vec<_>>(),
            [0, 4096]
        );
        file.push(1);
        let e = read(&file).unwrap_err();
        assert_eq!((e.offset, e.kind), (8192, BundleErrorKind::UnexpectedBytes));
    }

    /// A zstd frame of raw blocks, written by hand (single segment, 2-byte
    /// content size: 256 to 65,791 bytes).
    fn zstd_raw(plain: &[u8]) -> Vec<u8> {
        assert!((256..65_792).contains(&plain.len()));
        let mut z = vec![0x28, 0xb5, 0x2f, 0xfd, 0x60];
        z.extend_from_slice(&((plain.len() - 256) as u16).to_le_bytes());
        let block = ((plain.len() as u32) << 3) | 1;
        z.extend_from_slice(&block.to_le_bytes()[..3]);
        z.extend_from_slice(plain);
        z
    }

    /// One bundle as [`scan_entries`] hands it out: its info and its entries
    /// `(index, bytes)` in the order they came.
    type Streamed = (BundleInfo, Vec<(usize, Vec<u8>)>);

    /// What [`scan_entries`] hands out, bundle by bundle.
    fn streamed(file: &[u8], limits: &Limits) -> Result<Vec<Streamed>, BundleError> {
        let mut out: Vec<Streamed> = Vec::new();
        let r = scan_entries(&file, limits, |v| {
            match v {
                Visit::Bundle(b) => out.push((b.clone(), Vec::new())),
                Visit::Entry { index, bytes } => match out.last_mut() {
                    Some((_, entries)) => entries.push((index, bytes.to_vec())),
                    None => return Err(()),
                },
            }
            Ok(())
        });
        match r {
            Ok(_) => Ok(out),
            Err(ScanError::Bundle(e)) => Err(e),
            Err(ScanError::Visit(())) => panic!("an entry before its bundle"),
        }
    }

    /// Three device entries, a host entry and an empty one, of different
    /// bytes, 3,000 bytes each.
    fn three_entries() -> Vec<u8> {
        bundle(&[
            ("host-x86_64-unknown-linux-gnu-", b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", &[1u8; 3000]),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", &[2u8; 3000]),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", &[3u8; 3000]),
            ("hipv4-amdgcn-amd-amdhsa--gfx1201", b""),
        ])
    }

    #[test]
    fn a_compressed_bundle_read_as_a_stream_hands_out_what_reading_it_whole_does() {
        let plain = three_entries();
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        // Two zstd frames with a skippable frame between them.
        let (a, b) = plain.split_at(5000);
        let mut zstd = zstd_raw(a);
        zstd.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        zstd.extend_from_slice(&zstd_raw(b));
        for version in 1..=3 {
            for (method, payload) in [(0, &zlib), (1, &zstd)] {
                let file = ccob(version, method, &plain, payload);
                let whole = read(&file).unwrap();
                let got = streamed(&file, &Limits::DEFAULT)
                    .unwrap_or_else(|e| panic!("v{version} m{method}: {e}"));
                assert_eq!(got.len(), 1);
                let (info, entries) = &got[0];
                let w = &whole.bundles[0];
                assert_eq!(
                    (info.offset, info.size, info.compression, &info.entries),
                    (w.offset, w.size, w.compression, &w.entries)
                );
                let want: Vec<(usize, Vec<u8>)> = [1, 2, 3]
                    .into_iter()
                    .map(|i| (i, w.entry_bytes(&w.entries[i]).to_vec()))
                    .collect();
                assert_eq!(entries, &want, "v{version} m{method}");
            }
        }
        // A plain bundle: the same entries, borrowed.
        let got = streamed(&plain, &Limits::DEFAULT).unwrap();
        assert_eq!(
            got[0].0.entry_file_offset(&got[0].0.entries[1]),
            Some(got[0].0.entries[1].offset)
        );
        assert_eq!(got[0].1.len(), 3);
    }

    #[test]
    fn a_compressed_bundle_over_the_in_memory_limit_is_read_one_entry_at_a_time() {
        // The limit of what is held at once is below the bundle (9,2xx
        // bytes) and above each entry (3,000): reading it whole is refused,
        // streaming it is not. ROCm 7.2's RCCL holds such a bundle at full
        // scale (1.2 GB of 100 to 200 MB code objects).
        let plain = three_entries();
        let zstd = zstd_raw(&plain);
        let file = ccob(3, 1, &plain, &zstd);
        let limits = Limits {
            max_decompressed: 4096,
            ..Limits::DEFAULT
        };
        assert!(matches!(
            read_with_limits(&file, &limits).unwrap_err().kind,
            BundleErrorKind::DecompressedTooLarge { .. }
        ));
        let got = streamed(&file, &limits).unwrap();
        let sizes: Vec<(usize, usize, u8)> =
            got[0].1.iter().map(|(i, b)| (*i, b.len(), b[0])).collect();
        assert_eq!(sizes, [(1, 3000, 1), (2, 3000, 2), (3, 3000, 3)]);
        // The file's budget still bounds the whole bundle.
        let tight = Limits {
            max_decompressed_total: 4096,
            ..limits
        };
        assert!(matches!(
            streamed(&file, &tight).unwrap_err().kind,
            BundleErrorKind::DecompressedTooLarge { .. }
        ));
        // An entry over the limit is refused before it is held.
        let small = Limits {
            max_decompressed: 2999,
            ..Limits::DEFAULT
        };
        let e = streamed(&file, &small).unwrap_err();
        assert_eq!(
            e.kind,
            BundleErrorKind::EntryTooLarge {
                index: 1,
                size: 3000,
                limit: 2999
            }
        );
        assert_eq!(
            (e.offset, e.decompressed_offset),
            (0, Some(got[0].0.entries[1].offset))
        );
    }

    #[test]
    fn streamed_entries_may_start_in_the_table_head_and_come_in_the_order_of_their_bytes() {
        // With two entries of ids up to 64 bytes, the head read before the
        // entries is 32 + 2 * (24 + 64) = 208 bytes: the first entry lies in
        // it, the second starts in it and ends past it. The table lists the
        // second entry's bytes first.
        let limits = Limits {
            max_entries: 2,
            max_id_len: 64,
            ..Limits::DEFAULT
        };
        let first: Vec<u8> = (0..40u8).collect();
        let second: Vec<u8> = (0..=255u8).cycle().take(600).collect();
        let (id_a, id_b) = (
            "hip-amdgcn-amd-amdhsa--gfx90a",
            "hip-amdgcn-amd-amdhsa--gfx942",
        );
        let table = 32 + 2 * 24 + id_a.len() + id_b.len();
        let mut plain = BUNDLE_MAGIC.to_vec();
        plain.extend_from_slice(&2u64.to_le_bytes());
        for (id, at, len) in [
            (id_b, table + first.len(), second.len()),
            (id_a, table, first.len()),
        ] {
            plain.extend_from_slice(&(at as u64).to_le_bytes());
            plain.extend_from_slice(&(len as u64).to_le_bytes());
            plain.extend_from_slice(&(id.len() as u64).to_le_bytes());
            plain.extend_from_slice(id.as_bytes());
        }
        plain.extend_from_slice(&first);
        plain.extend_from_slice(&second);
        assert!(table + first.len() < 208 && 208 < plain.len());
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        for (method, payload) in [(0, zlib), (1, zstd_raw(&plain))] {
            let got = streamed(&ccob(2, method, &plain, &payload), &limits).unwrap();
            assert_eq!(
                got[0].1,
                [(1, first.clone()), (0, second.clone())],
                "m{method}"
            );
        }
    }

    #[test]
    fn a_streamed_bundle_of_a_lying_size_or_a_corrupt_payload_is_an_error() {
        // Padded after its last entry, as bundles are, so that a size
        // declared one byte short still holds every entry.
        let mut plain = three_entries();
        plain.resize(plain.len() + 100, 0);
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        let zstd = zstd_raw(&plain);
        for (method, payload) in [(0, &zlib), (1, &zstd)] {
            let mut file = ccob(2, method, &plain, payload);
            file[12..16].copy_from_slice(&((plain.len() - 1) as u32).to_le_bytes());
            assert!(
                matches!(
                    streamed(&file, &Limits::DEFAULT).unwrap_err().kind,
                    BundleErrorKind::DecompressedLonger { .. }
                ),
                "m{method}"
            );
            file[12..16].copy_from_slice(&((plain.len() + 1) as u32).to_le_bytes());
            let e = streamed(&file, &Limits::DEFAULT).unwrap_err();
            assert_eq!(
                e.kind,
                BundleErrorKind::DecompressedShorter {
                    declared: plain.len() as u64 + 1,
                    actual: plain.len() as u64
                },
                "m{method}"
            );
            assert_eq!(e.offset, 24, "at the payload");
            // Cut short: the decoder's own error.
            let cut = ccob(2, method, &plain, &payload[..payload.len() / 2]);
            assert!(
                matches!(
                    streamed(&cut, &Limits::DEFAULT).unwrap_err().kind,
                    BundleErrorKind::Decompression { .. }
                ),
                "m{method}"
            );
            // Not a bundle inside.
            let junk = vec![7u8; plain.len()];
            let file = ccob(
                2,
                method,
                &junk,
                &if method == 0 {
                    miniz_oxide::deflate::compress_to_vec_zlib(&junk, 6)
                } else {
                    zstd_raw(&junk)
                },
            );
            let e = streamed(&file, &Limits::DEFAULT).unwrap_err();
            assert_eq!(
                (e.kind, e.decompressed_offset),
                (BundleErrorKind::NotABundle, Some(0))
            );
        }
        // Every prefix of a file is an error or a shorter read, never a panic.
        let file = ccob(3, 1, &plain, &zstd);
        for n in 0..file.len() {
            let _ = streamed(&file[..n], &Limits::DEFAULT);
        }
    }

    #[test]
    fn a_mutated_bundle_streams_as_it_reads_whole_or_is_refused_never_a_panic() {
        // Every byte of small plain, zlib and zstd bundles set to other
        // values: the streaming reader never panics, and whatever the
        // whole-bundle reader accepts it accepts too, with the same bytes.
        let plain = bundle(&[
            ("host-x", b""),
            ("hip-amdgcn-amd-amdhsa--gfx90a", &[9u8; 300]),
            ("hip-amdgcn-amd-amdhsa--gfx942", &[5u8; 40]),
        ]);
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        let files = [
            plain.clone(),
            ccob(2, 0, &plain, &zlib),
            ccob(3, 1, &plain, &zstd_raw(&plain)),
            ccob(1, 1, &plain, &zstd_raw(&plain)),
        ];
        let limits = Limits {
            max_entries: 4,
            max_id_len: 40,
            ..Limits::DEFAULT
        };
        let mut agreed = 0;
        for file in &files {
            for at in 0..file.len() {
                for v in [0u8, 1, 0x7f, 0xff, file[at] ^ 0x20] {
                    let mut m = file.clone();
                    m[at] = v;
                    let got = streamed(&m, &limits);
                    let Ok(whole) = read_with_limits(&m, &limits) else {
                        continue;
                    };
                    let want: Vec<(usize, Vec<u8>)> = whole
                        .bundles
                        .iter()
                        .flat_map(|b| {
                            let mut device: Vec<usize> = (0..b.entries.len())
                                .filter(|&i| b.entries[i].is_device_code())
                                .collect();
                            device.sort_by_key(|&i| b.entries[i].offset);
                            device
                                .into_iter()
                                .map(|i| (i, b.entry_bytes(&b.entries[i]).to_vec()))
                                .collect::<Vec<_>>()
                        })
                        .collect();
                    let got: Vec<(usize, Vec<u8>)> = got
                        .unwrap_or_else(|e| {
                            panic!("byte {at} = {v}: read whole, not streamed: {e}")
                        })
                        .into_iter()
                        .flat_map(|(_, entries)| entries)
                        .collect();
                    assert_eq!(got, want, "byte {at} = {v}");
                    agreed += 1;
                }
            }
        }
        assert!(agreed > 100, "{agreed}");
    }

    #[test]
    fn every_prefix_of_a_bundle_is_an_error_or_a_shorter_read_never_a_panic() {
        let plain = bundle(&[
            ("host-x", b""),
            ("hip-amdgcn-amd-amdhsa--gfx90a", &[9u8; 64]),
        ]);
        let zlib = miniz_oxide::deflate::compress_to_vec_zlib(&plain, 6);
        for file in [
            plain.clone(),
            ccob(1, 0, &plain, &zlib),
            ccob(3, 0, &plain, &zlib),
        ] {
            for n in 0..file.len() {
                let _ = read(&file[..n]);
            }
            assert!(read(&file).is_ok());
        }
        assert_eq!(
            read(b"junk").unwrap_err().kind,
            BundleErrorKind::UnknownFormat
        );
    }

    /// A host ELF (x86-64 executable, machine 62): `.shstrtab`, then each
    /// named section `(name, sh_type, bytes)`, then the section headers.
    /// Returns the file and the offset of the section header table.
    fn host_elf(sections: &[(&str, u32, &[u8])]) -> (Vec<u8>, u64) {
        let mut names = b"\0.shstrtab\0".to_vec();
        let mut f = vec![0u8; 64];
        let mut headers = vec![[0u64; 8]]; // section 0: name, type, flags, addr, offset, size, link|info, align
        let place = |f: &mut Vec<u8>, bytes: &[u8]| {
            f.resize(f.len().next_multiple_of(8), 0);
            let at = f.len() as u64;
            f.extend_from_slice(bytes);
            at
        };
        let mut placed = Vec::new();
        for (name, t, bytes) in sections {
            placed.push((
                names.len() as u64,
                *t,
                place(&mut f, bytes),
                bytes.len() as u64,
            ));
            names.extend_from_slice(name.as_bytes());
            names.push(0);
        }
        let names_at = place(&mut f, &names);
        headers.push([1, 3, 0, 0, names_at, names.len() as u64, 0, 1]);
        for (name, t, at, size) in placed {
            headers.push([name, u64::from(t), 2, 0, at, size, 0, 8]);
        }
        let shoff = place(&mut f, &[]);
        for h in &headers {
            f.extend_from_slice(&(h[0] as u32).to_le_bytes());
            f.extend_from_slice(&(h[1] as u32).to_le_bytes());
            for v in &h[2..6] {
                f.extend_from_slice(&v.to_le_bytes());
            }
            f.extend_from_slice(&h[6].to_le_bytes()); // sh_link, sh_info
            f.extend_from_slice(&h[7].to_le_bytes());
            f.extend_from_slice(&0u64.to_le_bytes());
        }
        f[..16].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        f[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        f[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        f[20..24].copy_from_slice(&1u32.to_le_bytes());
        f[40..48].copy_from_slice(&shoff.to_le_bytes());
        f[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
        f[54..56].copy_from_slice(&56u16.to_le_bytes());
        f[58..60].copy_from_slice(&64u16.to_le_bytes());
        f[60..62].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        f[62..64].copy_from_slice(&1u16.to_le_bytes()); // .shstrtab
        (f, shoff)
    }

    /// The error a host ELF gives, as `(offset, kind)`.
    fn host_error(file: &[u8]) -> (u64, BundleErrorKind) {
        let e = read(file).unwrap_err();
        (e.offset, e.kind)
    }

    /// Writes `v` at `at` (little-endian, its own width).
    fn put(file: &mut [u8], at: u64, v: &[u8]) {
        file[at as usize..at as usize + v.len()].copy_from_slice(v);
    }

    #[test]
    fn a_host_elf_lists_its_hip_fatbin_sections_also_with_extended_numbering() {
        let b = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", b"\x7fELFabc")]);
        let (file, shoff) = host_elf(&[(".text", 1, b"\xc3"), (".hip_fatbin", 1, &b)]);
        let c = read(&file).unwrap();
        let Container::HostElf { machine, sections } = &c.container else {
            panic!("{:?}", c.container)
        };
        assert_eq!(*machine, 62);
        assert_eq!(sections.len(), 1);
        assert_eq!(sections[0].1, b.len() as u64);
        assert_eq!(c.bundles.len(), 1);
        // e_shnum 0: the count is section 0's sh_size; e_shstrndx SHN_XINDEX:
        // the index is section 0's sh_link.
        let mut ext = file.clone();
        put(&mut ext, 60, &0u16.to_le_bytes());
        put(&mut ext, 62, &0xffffu16.to_le_bytes());
        put(&mut ext, shoff + 32, &4u64.to_le_bytes());
        put(&mut ext, shoff + 40, &1u32.to_le_bytes());
        assert_eq!(read(&ext).unwrap().container, c.container);
    }

    #[test]
    fn a_malformed_host_elf_section_table_is_a_typed_error_at_its_offset() {
        use BundleErrorKind::*;
        let b = bundle(&[("hip-amdgcn-amd-amdhsa--gfx90a", b"\x7fELFabc")]);
        let (file, shoff) = host_elf(&[(".hip_fatbin", 1, &b)]);
        let with = |at: u64, v: &[u8]| {
            let mut f = file.clone();
            put(&mut f, at, v);
            f
        };
        // Section 1 is .shstrtab, section 2 .hip_fatbin.
        let (names_at, fatbin_at) = (shoff + 64 + 24, shoff + 128 + 24);
        let fatbin_offset = u64::from_le_bytes(file[fatbin_at as usize..][..8].try_into().unwrap());
        let cases: Vec<(Vec<u8>, (u64, BundleErrorKind))> = vec![
            (with(4, &[1]), (4, UnsupportedElf { class: 1, data: 1 })),
            (with(40, &0u64.to_le_bytes()), (0, NoSectionHeaders)),
            (
                with(58, &40u16.to_le_bytes()),
                (58, BadSectionEntrySize { size: 40 }),
            ),
            (
                with(40, &(1u64 << 40).to_le_bytes()),
                (
                    1 << 40,
                    Truncated {
                        what: "section header table",
                    },
                ),
            ),
            (
                with(60, &200u16.to_le_bytes()),
                (
                    shoff,
                    Truncated {
                        what: "section header table",
                    },
                ),
            ),
            (
                {
                    let mut f = with(60, &0u16.to_le_bytes());
                    put(&mut f, shoff + 32, &70_000u64.to_le_bytes());
                    f
                },
                (shoff, TooManySections { count: 70_000 }),
            ),
            (
                with(62, &99u16.to_le_bytes()),
                (62, BadSectionNameTable { index: 99 }),
            ),
            (
                with(names_at, &(1u64 << 40).to_le_bytes()),
                (1 << 40, SectionOutOfBounds { index: 1, size: 23 }), // "\0.shstrtab\0.hip_fatbin\0"
            ),
            (
                with(fatbin_at - 20, &8u32.to_le_bytes()), // sh_type SHT_NOBITS
                (fatbin_offset, FatbinWithoutBytes { index: 2 }),
            ),
            (
                with(fatbin_at + 8, &u64::MAX.to_le_bytes()),
                (
                    fatbin_offset,
                    SectionOutOfBounds {
                        index: 2,
                        size: u64::MAX,
                    },
                ),
            ),
        ];
        for (f, want) in cases {
            assert_eq!(host_error(&f), want);
        }
        // Without .hip_fatbin, saying whether clang's new driver's section is there.
        let (plain, _) = host_elf(&[(".text", 1, b"\xc3")]);
        let (new, _) = host_elf(&[(".llvm.offloading", 1, b"\x10\xff\x10\xad")]);
        for (f, new_driver) in [(plain, false), (new, true)] {
            let want = NoHipFatbin {
                machine: 62,
                new_driver,
            };
            assert_eq!(host_error(&f), (0, want));
        }
    }

    #[test]
    fn a_host_elf_section_name_table_over_the_limit_is_refused_before_it_is_read() {
        let big = vec![0u8; MAX_SECTION_NAME_BYTES as usize + 1];
        let (mut file, shoff) = host_elf(&[(".hip_fatbin", 1, b"")]);
        let names_at = file.len() as u64;
        file.extend_from_slice(&big);
        put(&mut file, shoff + 64 + 24, &names_at.to_le_bytes());
        put(
            &mut file,
            shoff + 64 + 32,
            &(big.len() as u64).to_le_bytes(),
        );
        assert_eq!(
            host_error(&file),
            (
                names_at,
                BundleErrorKind::SectionNamesTooLarge {
                    size: big.len() as u64,
                    limit: MAX_SECTION_NAME_BYTES
                }
            )
        );
    }

    #[test]
    fn a_read_that_fails_inside_the_section_table_is_an_io_error_at_its_offset() {
        /// Reads fail past the ELF header.
        struct Failing(Vec<u8>);
        impl Source<'static> for Failing {
            fn size(&self) -> u64 {
                self.0.len() as u64
            }
            fn bytes(&self, offset: u64, len: u64) -> std::io::Result<Cow<'static, [u8]>> {
                if offset >= 64 {
                    return Err(std::io::Error::other("the disk is on fire"));
                }
                Ok(Cow::Owned(
                    self.0[offset as usize..][..len as usize].to_vec(),
                ))
            }
        }
        let (file, shoff) = host_elf(&[(".hip_fatbin", 1, b"")]);
        let e = scan(&Failing(file), &Limits::DEFAULT, |_| {
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_err();
        let ScanError::Bundle(e) = e;
        assert_eq!(
            (e.offset, e.kind),
            (
                shoff,
                BundleErrorKind::Io {
                    message: "the disk is on fire".into()
                }
            )
        );
    }
}
