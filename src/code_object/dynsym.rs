//! The functions a host shared library exports: the defined function symbols
//! of its `.dynsym`, as the dynamic linker resolves against them.
//!
//! The shim uses it to compare the real ROCr a process loaded with its own
//! entry-point table (a function ROCr exports and the shim does not shadow is
//! called in an uninitialised ROCr), and `softgpu run` to say the same before
//! it starts a command. The file is read with positioned reads through
//! `object`'s cache, so only the headers, `.dynsym` and `.dynstr` are read,
//! not a multi-megabyte library.

use std::fs::File;
use std::path::Path;

use object::read::elf::ElfFile64;
use object::read::{Object, ObjectSymbol, ReadCache, ReadCacheOps, SymbolKind};
use object::{Endianness, elf};

/// A file as `object`'s cache reads it: positioned reads, nothing mapped.
struct Positioned {
    file: File,
    pos: u64,
}

impl ReadCacheOps for Positioned {
    fn len(&mut self) -> Result<u64, ()> {
        self.file.metadata().map(|m| m.len()).map_err(|_| ())
    }

    fn seek(&mut self, pos: u64) -> Result<u64, ()> {
        self.pos = pos;
        Ok(pos)
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ()> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.pos).map_err(|_| ())?;
        self.pos += n as u64;
        Ok(n)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), ()> {
        use std::os::unix::fs::FileExt;
        self.file.read_exact_at(buf, self.pos).map_err(|_| ())?;
        self.pos += buf.len() as u64;
        Ok(())
    }
}

/// Why a library's exports could not be listed.
#[derive(Debug)]
pub enum DynsymError {
    /// The file could not be opened.
    Open(std::io::Error),
    /// It is not a 64-bit ELF file `object` can read, or its dynamic symbol
    /// table is malformed.
    NotElf(String),
}

impl std::fmt::Display for DynsymError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DynsymError::Open(e) => write!(f, "cannot open: {e}"),
            DynsymError::NotElf(e) => write!(f, "not a readable 64-bit ELF shared library: {e}"),
        }
    }
}

impl std::error::Error for DynsymError {}

/// The names of the global or weak function symbols `path` defines in its
/// dynamic symbol table whose names start with `prefix`, sorted and without
/// duplicates (a name exported under several symbol versions appears once;
/// the version is not part of it).
pub fn exported_functions(path: &Path, prefix: &str) -> Result<Vec<String>, DynsymError> {
    let file = File::open(path).map_err(DynsymError::Open)?;
    let cache = ReadCache::new(Positioned { file, pos: 0 });
    let elf = ElfFile64::<Endianness, _>::parse(&cache)
        .map_err(|e| DynsymError::NotElf(e.to_string()))?;
    let mut names: Vec<String> = elf
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.kind() == SymbolKind::Text)
        .filter(|s| {
            let b = s.elf_symbol().st_bind();
            b == elf::STB_GLOBAL || b == elf::STB_WEAK
        })
        .filter(|s| s.elf_symbol().st_visibility() == elf::STV_DEFAULT)
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The one sentence the shim (at start-up, in virtual mode) and `softgpu run`
/// (before it starts a command) say when the HSA runtime at `rocr` exports
/// functions the shim does not: the dynamic linker binds a program's calls
/// to them to that runtime, which the virtual runtime never initialises.
pub fn unshadowed_message(rocr: &str, missing: &[&str]) -> String {
    format!(
        "the HSA runtime {rocr} exports {} function{} SoftGPU does not provide: {}; a program \
         that calls one reaches that runtime uninitialised (virtual mode never initialises it) \
         and may crash there: this ROCr is newer than this SoftGPU",
        missing.len(),
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_elf_is_a_typed_error_not_a_panic() {
        let dir = std::env::temp_dir().join(format!("softgpu-dynsym-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("not-elf.so");
        std::fs::write(&p, b"#!/bin/sh\necho not a library\n").unwrap();
        assert!(matches!(
            exported_functions(&p, "hsa_"),
            Err(DynsymError::NotElf(_))
        ));
        assert!(matches!(
            exported_functions(&dir.join("missing.so"), "hsa_"),
            Err(DynsymError::Open(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_c_librarys_exports_include_its_functions_and_not_its_undefined_imports() {
        // Any glibc: `getpid` is a function it defines; it imports no `_dl_catch_`*
        // function from elsewhere under a name it does not define.
        let libc = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
        ]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .expect("no libc.so.6 on this machine");
        let f = exported_functions(libc, "getpid").unwrap();
        assert_eq!(f, ["getpid"]);
    }
}
