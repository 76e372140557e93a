//! Any bytes as a code object: `parse` returns an object or a typed error,
//! never panics; a parsed object's descriptors, metadata and images never
//! panic either, and two images at different bases agree everywhere except at
//! relocation sites.
//!
//! Random bytes rarely get past the ELF header, so the first byte picks a mode:
//! the bytes as they are; the bytes wrapped in a well-formed AMDGPU ELF (header,
//! one PT_LOAD, and .dynsym, .dynstr, .rela.dyn, an NT_AMDGPU_METADATA note and
//! a data section whose contents come from the input), which lets the fuzzer
//! reach the symbol, relocation and note readers; or the bytes as a metadata
//! MessagePack blob alone.

use softgpu_hsa::code_object::{CodeObject, Metadata, kernel_name, parse};

const BASE1: u64 = 0x7f00_0000_0000;
const BASE2: u64 = 0x7f12_3456_7000;
/// Images above this are not built (the limit is 4 GiB; libFuzzer's is 2 GiB).
const MAX_IMAGE: u64 = 16 << 20;

fn exercise(co: &CodeObject) {
    for s in &co.symbols {
        let _ = co.kernel_descriptor(s);
        assert!(co.symbol(&s.name).is_some());
        let _ = kernel_name(&s.name);
    }
    for r in co.relocations() {
        let _ = co.relocation_symbol(r);
    }
    let _ = (co.metadata(), co.metadata_error());
    let _ = co.undefined_symbols().count();
    if co.load_size > MAX_IMAGE {
        return;
    }
    if let (Ok(a), Ok(b)) = (co.build_image(BASE1), co.build_image(BASE2)) {
        assert_eq!(a.len() as u64, co.load_size);
        let mut site = vec![false; a.len()];
        for r in co.relocations() {
            let w = r.kind.width().unwrap_or(8) as usize;
            site[r.offset as usize..r.offset as usize + w].fill(true);
        }
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(site[i] || x == y, "byte {i:#x} moved without a relocation");
        }
    }
}

/// Splits off a length-prefixed chunk (one length byte, scaled).
fn chunk<'a>(rest: &mut &'a [u8], unit: usize) -> &'a [u8] {
    let Some((&n, tail)) = rest.split_first() else {
        return &[];
    };
    let n = (usize::from(n) * unit).min(tail.len());
    let (a, b) = tail.split_at(n);
    *rest = b;
    a
}

fn push_u16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn push_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}
fn push_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

#[allow(clippy::too_many_arguments)]
fn section(
    v: &mut Vec<u8>,
    sh_type: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
) {
    push_u32(v, 0); // sh_name
    push_u32(v, sh_type);
    push_u64(v, flags);
    push_u64(v, addr);
    push_u64(v, offset);
    push_u64(v, size);
    push_u32(v, link);
    push_u32(v, 0); // sh_info
    push_u64(v, if sh_type == 7 { 4 } else { 8 });
    push_u64(v, entsize);
}

/// A well-formed AMDGPU ET_DYN around tables taken from `data`. The whole file
/// is one PT_LOAD at address 0, so file offsets are image offsets.
fn skeleton(data: &[u8]) -> Vec<u8> {
    let mut rest = data;
    let flags = rest.first().copied().unwrap_or(0);
    let bss = u64::from(rest.get(1).copied().unwrap_or(0)) * 64;
    rest = rest.get(2..).unwrap_or(&[]);
    let dynsym = chunk(&mut rest, 24);
    let dynstr = chunk(&mut rest, 4);
    let rela = chunk(&mut rest, 24);
    let blob = chunk(&mut rest, 16);
    let payload = rest;

    let mut note = Vec::new();
    push_u32(&mut note, 7);
    push_u32(&mut note, blob.len() as u32);
    push_u32(&mut note, 32); // NT_AMDGPU_METADATA
    note.extend_from_slice(b"AMDGPU\0\0");
    note.extend_from_slice(blob);

    let mut body: Vec<(u32, u64, u32, u64, &[u8])> = vec![
        (11, 2, 2, 24, dynsym), // .dynsym -> .dynstr
        (3, 2, 0, 0, dynstr),   // .dynstr
        (4, 2, 1, 24, rela),    // .rela.dyn -> .dynsym
        (7, 2, 0, 0, &note),    // .note
        (1, 3, 0, 0, payload),  // .data
    ];
    let mut out = vec![0u8; 64 + 56];
    let mut placed = Vec::new();
    for (t, fl, link, ent, bytes) in body.drain(..) {
        out.resize(out.len().next_multiple_of(8), 0);
        placed.push((t, fl, out.len() as u64, bytes.len() as u64, link, ent));
        out.extend_from_slice(bytes);
    }
    out.resize(out.len().next_multiple_of(8), 0);
    let shoff = out.len() as u64;
    let mut sh = vec![0u8; 64];
    for (t, fl, off, size, link, ent) in placed {
        section(&mut sh, t, fl, off, off, size, link, ent);
    }
    out.extend_from_slice(&sh);
    let file_len = out.len() as u64;

    let mut h = Vec::with_capacity(120);
    h.extend_from_slice(&[
        0x7f,
        b'E',
        b'L',
        b'F',
        2,
        1,
        1,
        64,
        1 + (flags >> 6),
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ]);
    push_u16(&mut h, 3); // ET_DYN
    push_u16(&mut h, 224); // EM_AMDGPU
    push_u32(&mut h, 1);
    push_u64(&mut h, 0); // e_entry
    push_u64(&mut h, 64); // e_phoff
    push_u64(&mut h, shoff);
    push_u32(&mut h, 0x3f | (u32::from(flags & 0x3f) << 8));
    push_u16(&mut h, 64);
    push_u16(&mut h, 56);
    push_u16(&mut h, 1);
    push_u16(&mut h, 64);
    push_u16(&mut h, 6);
    push_u16(&mut h, 0);
    push_u32(&mut h, 1); // PT_LOAD
    push_u32(&mut h, 6); // RW
    push_u64(&mut h, 0);
    push_u64(&mut h, 0);
    push_u64(&mut h, 0);
    push_u64(&mut h, file_len);
    push_u64(&mut h, file_len + bss);
    push_u64(&mut h, 4096);
    out[..120].copy_from_slice(&h);
    out
}

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => {
            if let Ok(co) = parse(rest) {
                exercise(&co);
            }
        }
        1 => {
            if let Ok(co) = parse(&skeleton(rest)) {
                exercise(&co);
            }
        }
        _ => {
            let _ = Metadata::parse(rest);
        }
    }
}
