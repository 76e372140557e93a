//! The ELF64 little-endian records AMDGPU code objects and their host files
//! use, read with the `object` crate, and the AMDGPU constants and relocation
//! types `object` does not define.
//!
//! `object` decodes the records (file, program and section headers, symbols,
//! RELA entries, note headers) typed and endian-aware from any
//! [`ReadRef`](object::ReadRef): a byte slice, or a cache of positioned reads
//! of a file. It does not bound what a file can make a reader do and its
//! errors carry no offset, so every check that has a limit or a typed error
//! (`mod.rs`, `bundle.rs`) is made before `object` is asked, and an `object`
//! error is turned into the typed error of the check it stands for.

use std::fmt;

use object::LittleEndian;
pub use object::elf::{
    ELFCLASS64, ELFDATA2LSB, ELFMAG as ELF_MAGIC, ET_DYN, EV_CURRENT, PT_LOAD, PT_NOTE, SHF_ALLOC,
    SHN_ABS, SHN_UNDEF, SHN_XINDEX, SHT_DYNSYM, SHT_NOBITS, SHT_NOTE, SHT_NULL, SHT_REL, SHT_RELA,
    SHT_STRTAB, SHT_SYMTAB, STB_LOCAL, STB_WEAK, STT_FILE, STT_FUNC, STT_OBJECT, STT_SECTION,
    STT_TLS,
};
use object::read::elf::SectionHeader as _;

/// Code objects and the host files that carry them are ELF64 little-endian.
pub const LE: LittleEndian = LittleEndian;
/// `Elf64_Ehdr`.
pub type FileHeader = object::elf::FileHeader64<LittleEndian>;
/// `Elf64_Phdr`.
pub type ProgramHeader = object::elf::ProgramHeader64<LittleEndian>;
/// `Elf64_Shdr`.
pub type SectionHeader = object::elf::SectionHeader64<LittleEndian>;
/// `Elf64_Sym`.
pub type Sym = object::elf::Sym64<LittleEndian>;
/// `Elf64_Rela`.
pub type Rela = object::elf::Rela64<LittleEndian>;
/// `Elf64_Nhdr` (three 32-bit words in ELF64 too).
pub type NoteHeader = object::elf::NoteHeader32<LittleEndian>;

pub const EHDR_SIZE: usize = size_of::<FileHeader>();
pub const PHDR_SIZE: usize = size_of::<ProgramHeader>();
pub const SHDR_SIZE: usize = size_of::<SectionHeader>();
pub const SYM_SIZE: usize = size_of::<Sym>();
pub const RELA_SIZE: usize = size_of::<Rela>();
pub const NHDR_SIZE: usize = size_of::<NoteHeader>();

// The ELF64 sizes the format defines; `object`'s records are exactly these
// (with its `unaligned` feature they also read at any offset).
const _: () = assert!(
    EHDR_SIZE == 64
        && PHDR_SIZE == 56
        && SHDR_SIZE == 64
        && SYM_SIZE == 24
        && RELA_SIZE == 24
        && NHDR_SIZE == 12
        && align_of::<FileHeader>() == 1
);

/// `e_machine` of AMD GPUs.
pub const EM_AMDGPU: u16 = object::elf::EM_AMDGPU.0;
/// `EI_OSABI` of code objects for the HSA runtime (AMDGPUUsage; `object`
/// does not name it).
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;

/// `e_flags` bits naming the processor (`EF_AMDGPU_MACH_*`): the ISA
/// registry's mask.
pub const EF_AMDGPU_MACH: u32 = crate::isa::ElfMachine::MASK;
/// Code object v3 feature bits: set means enabled.
pub const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
pub const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
/// Code object v4+ feature fields: unsupported/any/off/on.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// Code object v6+: where `EF_AMDGPU_GENERIC_VERSION` (bits 24 to 31: the
/// version of a generic processor's code) starts.
pub const EF_AMDGPU_GENERIC_VERSION_SHIFT: u32 = 24;

/// Note type of the MessagePack metadata of code object v3+, owner "AMDGPU".
pub const NT_AMDGPU_METADATA: u32 = 32;

/// Whether a section occupies bytes of the file (not SHT_NOBITS, not the
/// null section type).
pub fn has_file_bytes(s: &SectionHeader) -> bool {
    let t = s.sh_type(LE);
    t != SHT_NOBITS && t != SHT_NULL
}

/// An AMDGPU relocation type (`ELF64_R_TYPE`); unknown values stay representable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RelocationType(pub u32);

impl RelocationType {
    pub const NONE: Self = Self(0);
    pub const ABS32_LO: Self = Self(1);
    pub const ABS32_HI: Self = Self(2);
    pub const ABS64: Self = Self(3);
    pub const REL32: Self = Self(4);
    pub const REL64: Self = Self(5);
    pub const ABS32: Self = Self(6);
    pub const GOTPCREL: Self = Self(7);
    pub const GOTPCREL32_LO: Self = Self(8);
    pub const GOTPCREL32_HI: Self = Self(9);
    pub const REL32_LO: Self = Self(10);
    pub const REL32_HI: Self = Self(11);
    pub const RELATIVE64: Self = Self(13);

    /// The `R_AMDGPU_*` name, if this is a known type.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "R_AMDGPU_NONE",
            1 => "R_AMDGPU_ABS32_LO",
            2 => "R_AMDGPU_ABS32_HI",
            3 => "R_AMDGPU_ABS64",
            4 => "R_AMDGPU_REL32",
            5 => "R_AMDGPU_REL64",
            6 => "R_AMDGPU_ABS32",
            7 => "R_AMDGPU_GOTPCREL",
            8 => "R_AMDGPU_GOTPCREL32_LO",
            9 => "R_AMDGPU_GOTPCREL32_HI",
            10 => "R_AMDGPU_REL32_LO",
            11 => "R_AMDGPU_REL32_HI",
            13 => "R_AMDGPU_RELATIVE64",
            _ => return None,
        })
    }

    /// Bytes written at the relocation site, for the types the loader applies.
    pub fn width(self) -> Option<u64> {
        match self {
            Self::ABS64 | Self::REL64 | Self::RELATIVE64 => Some(8),
            Self::ABS32_LO
            | Self::ABS32_HI
            | Self::ABS32
            | Self::REL32
            | Self::REL32_LO
            | Self::REL32_HI => Some(4),
            _ => None,
        }
    }
}

impl fmt::Display for RelocationType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "unknown relocation type: {}", self.0),
        }
    }
}

/// `data[offset..offset + len]`, or `None` if any part lies outside `data`.
pub fn slice(data: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    object::ReadRef::read_bytes_at(data, offset, len).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relocation_types_print_their_names_or_say_they_are_unknown() {
        assert_eq!(
            RelocationType::RELATIVE64.to_string(),
            "R_AMDGPU_RELATIVE64"
        );
        assert_eq!(
            RelocationType(99).to_string(),
            "unknown relocation type: 99"
        );
    }

    #[test]
    fn slices_outside_the_data_are_none_even_when_the_arithmetic_overflows() {
        let d = [0u8; 8];
        assert_eq!(slice(&d, 0, 8), Some(&d[..]));
        assert_eq!(slice(&d, 8, 0), Some(&d[8..]));
        assert_eq!(slice(&d, 1, 8), None);
        assert_eq!(slice(&d, u64::MAX, 2), None);
        assert_eq!(slice(&d, 2, u64::MAX), None);
    }
}
