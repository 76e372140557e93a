//! Raw ELF64 little-endian records and the constants AMDGPU code objects use.
//!
//! Records are decoded from fixed-size byte arrays that the caller has already
//! bounds-checked; nothing here validates meaning (that is `mod.rs`'s job).

use std::fmt;

pub const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
pub const ELFCLASS64: u8 = 2;
pub const ELFDATA2LSB: u8 = 1;
pub const EV_CURRENT: u8 = 1;
/// `e_machine` of AMD GPUs.
pub const EM_AMDGPU: u16 = 224;
/// `EI_OSABI` of code objects for the HSA runtime.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
pub const ET_DYN: u16 = 3;

pub const PT_LOAD: u32 = 1;
pub const PT_NOTE: u32 = 4;

pub const SHT_SYMTAB: u32 = 2;
pub const SHT_STRTAB: u32 = 3;
pub const SHT_RELA: u32 = 4;
pub const SHT_NOTE: u32 = 7;
pub const SHT_NOBITS: u32 = 8;
pub const SHT_REL: u32 = 9;
pub const SHT_DYNSYM: u32 = 11;
pub const SHF_ALLOC: u64 = 0x2;

pub const SHN_UNDEF: u16 = 0;
pub const SHN_LORESERVE: u16 = 0xff00;
pub const SHN_ABS: u16 = 0xfff1;
/// `e_shstrndx` escape: the index is section 0's `sh_link`.
pub const SHN_XINDEX: u16 = 0xffff;

pub const STB_LOCAL: u8 = 0;
pub const STB_WEAK: u8 = 2;
pub const STT_OBJECT: u8 = 1;
pub const STT_FUNC: u8 = 2;
pub const STT_SECTION: u8 = 3;
pub const STT_FILE: u8 = 4;
pub const STT_TLS: u8 = 6;

/// `e_flags` bits naming the processor (`EF_AMDGPU_MACH_*`).
pub const EF_AMDGPU_MACH: u32 = 0xff;
/// Code object v3 feature bits: set means enabled.
pub const EF_AMDGPU_FEATURE_XNACK_V3: u32 = 0x100;
pub const EF_AMDGPU_FEATURE_SRAMECC_V3: u32 = 0x200;
/// Code object v4+ feature fields: unsupported/any/off/on.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;

/// Note type of the MessagePack metadata of code object v3+, owner "AMDGPU".
pub const NT_AMDGPU_METADATA: u32 = 32;

pub const EHDR_SIZE: usize = 64;
pub const PHDR_SIZE: usize = 56;
pub const SHDR_SIZE: usize = 64;
pub const SYM_SIZE: usize = 24;
pub const RELA_SIZE: usize = 24;

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

/// Sequential little-endian field reader over one fixed-size record.
///
/// The caller passes a slice of exactly the record's size, so running out is a
/// bug in this module, not in the input; it yields zeros rather than panic.
pub struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Fields(bytes)
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        match self.0.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.0 = rest;
                *head
            }
            None => {
                self.0 = &[];
                [0; N]
            }
        }
    }

    pub fn skip<const N: usize>(&mut self) {
        let _ = self.take::<N>();
    }
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
}

/// `data[offset..offset + len]`, or `None` if any part lies outside `data`.
pub fn slice(data: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let len = usize::try_from(len).ok()?;
    data.get(start..start.checked_add(len)?)
}

/// The ELF64 file header (`Elf64_Ehdr`).
#[derive(Clone, Copy, Debug)]
pub struct FileHeader {
    pub ident: [u8; 16],
    pub e_type: u16,
    pub e_machine: u16,
    pub e_version: u32,
    pub e_phoff: u64,
    pub e_shoff: u64,
    pub e_flags: u32,
    pub e_phentsize: u16,
    pub e_phnum: u16,
    pub e_shentsize: u16,
    pub e_shnum: u16,
    pub e_shstrndx: u16,
}

impl FileHeader {
    pub fn read(b: &[u8; EHDR_SIZE]) -> Self {
        let mut f = Fields::new(b);
        let ident = f.take::<16>();
        let e_type = f.u16();
        let e_machine = f.u16();
        let e_version = f.u32();
        let _e_entry = f.u64();
        let e_phoff = f.u64();
        let e_shoff = f.u64();
        let e_flags = f.u32();
        let _e_ehsize = f.u16();
        let e_phentsize = f.u16();
        let e_phnum = f.u16();
        let e_shentsize = f.u16();
        let e_shnum = f.u16();
        let e_shstrndx = f.u16();
        FileHeader {
            ident,
            e_type,
            e_machine,
            e_version,
            e_phoff,
            e_shoff,
            e_flags,
            e_phentsize,
            e_phnum,
            e_shentsize,
            e_shnum,
            e_shstrndx,
        }
    }
}

/// A program header (`Elf64_Phdr`).
#[derive(Clone, Copy, Debug)]
pub struct ProgramHeader {
    pub p_type: u32,
    pub p_flags: u32,
    pub p_offset: u64,
    pub p_vaddr: u64,
    pub p_filesz: u64,
    pub p_memsz: u64,
    pub p_align: u64,
}

impl ProgramHeader {
    pub fn read(b: &[u8; PHDR_SIZE]) -> Self {
        let mut f = Fields::new(b);
        let p_type = f.u32();
        let p_flags = f.u32();
        let p_offset = f.u64();
        let p_vaddr = f.u64();
        let _p_paddr = f.u64();
        let p_filesz = f.u64();
        let p_memsz = f.u64();
        let p_align = f.u64();
        ProgramHeader {
            p_type,
            p_flags,
            p_offset,
            p_vaddr,
            p_filesz,
            p_memsz,
            p_align,
        }
    }
}

/// A section header (`Elf64_Shdr`).
#[derive(Clone, Copy, Debug)]
pub struct SectionHeader {
    /// Offset of the name in the section name string table.
    pub sh_name: u32,
    pub sh_type: u32,
    pub sh_flags: u64,
    pub sh_offset: u64,
    pub sh_size: u64,
    pub sh_link: u32,
    pub sh_addralign: u64,
    pub sh_entsize: u64,
}

impl SectionHeader {
    pub fn read(b: &[u8; SHDR_SIZE]) -> Self {
        let mut f = Fields::new(b);
        let sh_name = f.u32();
        let sh_type = f.u32();
        let sh_flags = f.u64();
        let _sh_addr = f.u64();
        let sh_offset = f.u64();
        let sh_size = f.u64();
        let sh_link = f.u32();
        let _sh_info = f.u32();
        let sh_addralign = f.u64();
        let sh_entsize = f.u64();
        SectionHeader {
            sh_name,
            sh_type,
            sh_flags,
            sh_offset,
            sh_size,
            sh_link,
            sh_addralign,
            sh_entsize,
        }
    }

    /// Whether the section occupies bytes of the file.
    pub fn has_file_bytes(&self) -> bool {
        self.sh_type != SHT_NOBITS && self.sh_type != 0
    }
}

/// A symbol table entry (`Elf64_Sym`).
#[derive(Clone, Copy, Debug)]
pub struct Sym {
    pub st_name: u32,
    pub st_info: u8,
    pub st_shndx: u16,
    pub st_value: u64,
    pub st_size: u64,
}

impl Sym {
    pub fn read(b: &[u8; SYM_SIZE]) -> Self {
        let mut f = Fields::new(b);
        let st_name = f.u32();
        let st_info = f.u8();
        let _st_other = f.u8();
        let st_shndx = f.u16();
        let st_value = f.u64();
        let st_size = f.u64();
        Sym {
            st_name,
            st_info,
            st_shndx,
            st_value,
            st_size,
        }
    }
    pub fn binding(&self) -> u8 {
        self.st_info >> 4
    }
    pub fn sym_type(&self) -> u8 {
        self.st_info & 0xf
    }
}

/// A relocation with addend (`Elf64_Rela`).
#[derive(Clone, Copy, Debug)]
pub struct Rela {
    pub r_offset: u64,
    pub r_sym: u64,
    pub r_type: RelocationType,
    pub r_addend: i64,
}

impl Rela {
    pub fn read(b: &[u8; RELA_SIZE]) -> Self {
        let mut f = Fields::new(b);
        let r_offset = f.u64();
        let r_info = f.u64();
        let r_addend = f.i64();
        Rela {
            r_offset,
            r_sym: r_info >> 32,
            r_type: RelocationType((r_info & 0xffff_ffff) as u32),
            r_addend,
        }
    }
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

    #[test]
    fn a_short_record_reads_as_zeros_instead_of_panicking() {
        let mut f = Fields::new(&[1, 0]);
        assert_eq!(f.u16(), 1);
        assert_eq!(f.u64(), 0);
    }
}
