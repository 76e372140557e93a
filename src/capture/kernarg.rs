//! Kernel-argument bytes in a capture (format 2.1): the per-queue arena the
//! doorbell path copies each dispatch's kernarg block into, the content
//! addressed KernargBlock frames the writer stores each distinct block in
//! once, the record extension that references a block, and the KernelArgs
//! frame that carries what decoding needs (each kernel's `.args`, demangled
//! signature and DWARF names), so a capture decodes offline on its own.
//! Layouts are in `docs/CAPTURE_FORMAT.md` ("Kernel arguments").

use std::sync::atomic::{AtomicU64, Ordering};

use super::format::{Cursor, PayloadBuf, put_varint};
use crate::code_object::{KernelArg, KernelMetadata};
use crate::kernargs::{ArgFinding, KernelSources, PointerFinding};

/// Most kernarg bytes copied per dispatch (SoftGPU policy): the first
/// `min(kernarg_segment_size, KERNARG_BOUND)` bytes are captured; a segment
/// larger than this is recorded as truncated, with its size.
pub const KERNARG_BOUND: usize = 4096;

/// Bytes of each queue's arena (a power of two, a multiple of 8, far larger
/// than one block).
pub const ARENA_BYTES: usize = 256 << 10;

/// Why a dispatch's kernarg bytes were not captured. Stored as a byte;
/// values are never reused.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Unreadable {
    /// The address is not in memory the shim knows to be readable.
    NotKnownReadable = 1,
    /// The dispatch's kernel object is not a kernel the runtime loaded, so
    /// the segment size is unknown.
    UnknownKernel = 2,
    /// The kernarg address is 0 and the segment is not empty.
    NullAddress = 3,
    /// Argument capture is not implemented in this runtime mode.
    ModeNotSupported = 4,
}

impl Unreadable {
    pub fn from_u8(v: u8) -> Option<Unreadable> {
        Some(match v {
            1 => Unreadable::NotKnownReadable,
            2 => Unreadable::UnknownKernel,
            3 => Unreadable::NullAddress,
            4 => Unreadable::ModeNotSupported,
            _ => return None,
        })
    }
    /// The stable snake_case code (JSONL `kernarg_state` reason).
    pub fn code(self) -> &'static str {
        match self {
            Unreadable::NotKnownReadable => "not_known_readable",
            Unreadable::UnknownKernel => "unknown_kernel",
            Unreadable::NullAddress => "null_address",
            Unreadable::ModeNotSupported => "mode_not_supported",
        }
    }
}

/// What the processor hands the writer with a dispatch record.
#[derive(Clone, Copy, Debug)]
pub enum KernargSubmit<'a> {
    /// The first `min(segment_size, KERNARG_BOUND)` bytes at the kernarg
    /// address (longer slices are cut to that), and the kernel's
    /// `kernarg_segment_size`.
    Bytes { bytes: &'a [u8], segment_size: u64 },
    /// Not read, and why.
    Unreadable(Unreadable),
}

/// What a capture says about one record's kernarg bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum RecordKernarg {
    /// Nothing recorded (not a dispatch, a 2.0 writer, or capture off).
    #[default]
    None,
    /// The bytes are block `block`; `findings` is the pointer-findings blob
    /// (if the runtime checked the pointers); `truncated_from` the segment
    /// size when it exceeded [`KERNARG_BOUND`].
    Block {
        block: u64,
        findings: Option<u64>,
        truncated_from: Option<u64>,
    },
    /// The processor did not read them.
    Unreadable(Unreadable),
    /// They were copied, but the writer never stored them: a record
    /// recovered from the live ring after the process died (the arena is
    /// not in the file), or an arena the writer did not know.
    Lost,
}

impl RecordKernarg {
    /// The JSONL `kernarg_state` value.
    pub fn state(&self) -> Option<&'static str> {
        match self {
            RecordKernarg::None => None,
            RecordKernarg::Block {
                truncated_from: None,
                ..
            } => Some("captured"),
            RecordKernarg::Block { .. } => Some("truncated"),
            RecordKernarg::Unreadable(_) => Some("unreadable"),
            RecordKernarg::Lost => Some("lost"),
        }
    }
}

/// Extension states (first byte of a record's extension).
pub mod ext {
    pub const COPIED: u8 = 1;
    pub const TRUNCATED: u8 = 2;
    pub const UNREADABLE: u8 = 3;
    pub const LOST: u8 = 4;
}

/// Encodes a record's kernarg reference as PacketBatch extension bytes
/// (empty for [`RecordKernarg::None`]).
pub fn encode_ext(k: &RecordKernarg, out: &mut Vec<u8>) {
    let mut b = [0u8; EXT_MAX];
    let n = encode_ext_to(k, &mut b);
    out.extend_from_slice(&b[..n]);
}

/// Longest extension [`encode_ext`] writes: a state byte and three varints.
pub const EXT_MAX: usize = 31;

/// [`encode_ext`] into a fixed buffer; returns the bytes written.
#[inline]
pub fn encode_ext_to(k: &RecordKernarg, out: &mut [u8; EXT_MAX]) -> usize {
    struct Out<'a> {
        b: &'a mut [u8; EXT_MAX],
        n: usize,
    }
    impl Out<'_> {
        #[inline]
        fn put(&mut self, v: u8) {
            if let Some(x) = self.b.get_mut(self.n) {
                *x = v;
                self.n += 1;
            }
        }
        #[inline]
        fn var(&mut self, mut v: u64) {
            while v >= 0x80 {
                self.put((v as u8) | 0x80);
                v >>= 7;
            }
            self.put(v as u8);
        }
    }
    let mut o = Out { b: out, n: 0 };
    match *k {
        RecordKernarg::None => {}
        RecordKernarg::Block {
            block,
            findings,
            truncated_from,
        } => {
            o.put(if truncated_from.is_some() {
                ext::TRUNCATED
            } else {
                ext::COPIED
            });
            o.var(block);
            o.var(findings.map_or(0, |f| f.wrapping_add(1)));
            if let Some(s) = truncated_from {
                o.var(s);
            }
        }
        RecordKernarg::Unreadable(r) => {
            o.put(ext::UNREADABLE);
            o.put(r as u8);
        }
        RecordKernarg::Lost => o.put(ext::LOST),
    }
    o.n
}

fn varint(c: &mut Cursor<'_>) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let b = c.u8()?;
        if i == 9 && b > 1 {
            return None;
        }
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Decodes extension bytes. An extension this version does not understand
/// (an unknown state, or one cut short) reads as [`RecordKernarg::None`]:
/// extensions are skippable by definition. Bytes after the fields are
/// ignored (a later minor version may append).
pub fn decode_ext(bytes: &[u8]) -> RecordKernarg {
    let mut c = Cursor::new(bytes);
    let parse = |c: &mut Cursor<'_>| -> Option<RecordKernarg> {
        Some(match c.u8()? {
            s @ (ext::COPIED | ext::TRUNCATED) => {
                let block = varint(c)?;
                let f = varint(c)?;
                let truncated_from = if s == ext::TRUNCATED {
                    Some(varint(c)?)
                } else {
                    None
                };
                RecordKernarg::Block {
                    block,
                    findings: f.checked_sub(1),
                    truncated_from,
                }
            }
            ext::UNREADABLE => RecordKernarg::Unreadable(Unreadable::from_u8(c.u8()?)?),
            ext::LOST => RecordKernarg::Lost,
            _ => return None,
        })
    };
    parse(&mut c).unwrap_or_default()
}

/// Blob kinds of a KernargBlock frame.
pub mod blob {
    /// A kernarg block's bytes, in memory order.
    pub const ARGS: u8 = 0;
    /// The pointer findings of a block's `global_buffer` arguments.
    pub const FINDINGS: u8 = 1;
}

/// A KernargBlock payload: `id u64, blob u8, bytes`.
pub fn encode_block(id: u64, kind: u8, bytes: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(9 + bytes.len());
    p.extend_from_slice(&id.to_le_bytes());
    p.push(kind);
    p.extend_from_slice(bytes);
    p
}

/// `(id, blob kind, bytes)` of a KernargBlock payload.
pub fn decode_block(p: &[u8]) -> Option<(u64, u8, &[u8])> {
    let mut c = Cursor::new(p);
    let id = c.u64()?;
    let kind = c.u8()?;
    let rest = c.bytes(c.remaining())?;
    Some((id, kind, rest))
}

mod code {
    pub const IN_ALLOCATION: u8 = 0;
    pub const NULL: u8 = 1;
    pub const USE_AFTER_FREE: u8 = 2;
    pub const PAST_END: u8 = 3;
    pub const PAGEABLE_HOST: u8 = 4;
    pub const NO_ACCESS: u8 = 5;
    pub const UNKNOWN: u8 = 6;
}

/// Encodes pointer findings as a FINDINGS blob: `count` varint, then per
/// finding `index`, `address` (varints), a code byte, and the code's fields
/// (varints; an optional owner as `owner + 1`, 0 for none).
pub fn encode_findings(findings: &[ArgFinding]) -> Vec<u8> {
    let mut o = Vec::new();
    put_varint(&mut o, findings.len() as u64);
    for f in findings {
        put_varint(&mut o, f.index as u64);
        put_varint(&mut o, f.address);
        match f.finding {
            PointerFinding::InAllocation {
                allocation,
                offset,
                remaining,
            } => {
                o.push(code::IN_ALLOCATION);
                for v in [allocation, offset, remaining] {
                    put_varint(&mut o, v);
                }
            }
            PointerFinding::Null => o.push(code::NULL),
            PointerFinding::UseAfterFree {
                allocation,
                offset,
                freed_at,
            } => {
                o.push(code::USE_AFTER_FREE);
                for v in [allocation, offset, freed_at] {
                    put_varint(&mut o, v);
                }
            }
            PointerFinding::PastEnd {
                allocation,
                size,
                past,
            } => {
                o.push(code::PAST_END);
                for v in [allocation, size, past] {
                    put_varint(&mut o, v);
                }
            }
            PointerFinding::PageableHost => o.push(code::PAGEABLE_HOST),
            PointerFinding::NoAccess {
                allocation,
                offset,
                owner,
                agent,
            } => {
                o.push(code::NO_ACCESS);
                for v in [
                    allocation,
                    offset,
                    owner.map_or(0, |x| x.wrapping_add(1)),
                    agent,
                ] {
                    put_varint(&mut o, v);
                }
            }
            PointerFinding::Unknown => o.push(code::UNKNOWN),
        }
    }
    o
}

/// Decodes a FINDINGS blob; stops at the first finding it cannot read (an
/// unknown code from a later version, or a cut), keeping those before it.
pub fn decode_findings(bytes: &[u8]) -> Vec<ArgFinding> {
    let mut c = Cursor::new(bytes);
    let mut out = Vec::new();
    let Some(n) = varint(&mut c) else {
        return out;
    };
    for _ in 0..n {
        let one = |c: &mut Cursor<'_>| -> Option<ArgFinding> {
            let index = usize::try_from(varint(c)?).ok()?;
            let address = varint(c)?;
            let finding = match c.u8()? {
                code::IN_ALLOCATION => PointerFinding::InAllocation {
                    allocation: varint(c)?,
                    offset: varint(c)?,
                    remaining: varint(c)?,
                },
                code::NULL => PointerFinding::Null,
                code::USE_AFTER_FREE => PointerFinding::UseAfterFree {
                    allocation: varint(c)?,
                    offset: varint(c)?,
                    freed_at: varint(c)?,
                },
                code::PAST_END => PointerFinding::PastEnd {
                    allocation: varint(c)?,
                    size: varint(c)?,
                    past: varint(c)?,
                },
                code::PAGEABLE_HOST => PointerFinding::PageableHost,
                code::NO_ACCESS => PointerFinding::NoAccess {
                    allocation: varint(c)?,
                    offset: varint(c)?,
                    owner: varint(c)?.checked_sub(1),
                    agent: varint(c)?,
                },
                code::UNKNOWN => PointerFinding::Unknown,
                _ => return None,
            };
            Some(ArgFinding {
                index,
                address,
                finding,
            })
        };
        match one(&mut c) {
            Some(f) => out.push(f),
            None => break,
        }
    }
    out
}

/// What decoding one kernel's blocks needs, as a KernelArgs frame stores it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct KernelArgSources {
    /// The kernel descriptor address dispatches carry.
    pub kernel_object: u64,
    /// Symbol, `kernarg_segment_size`, `group_segment_fixed_size` and
    /// `.args` (the other fields are left at their defaults).
    pub metadata: KernelMetadata,
    pub sources: KernelSources,
}

/// The longest string stored in a KernelArgs entry.
const MAX_STRING: usize = 4096;

/// Encodes KernelArgs entries into one payload: `count u32`, then per entry
/// `entry_len u32` and the entry (see the format doc).
pub fn encode_kernel_args(entries: &[KernelArgSources]) -> Vec<u8> {
    let mut p = PayloadBuf::default();
    p.u32(entries.len() as u32);
    for e in entries {
        let m = &e.metadata;
        let mut b = PayloadBuf::default();
        b.u64(e.kernel_object)
            .u64(m.kernarg_segment_size)
            .u64(m.group_segment_fixed_size)
            .str(&m.symbol, MAX_STRING);
        let mut flags = 0u8;
        let mut tail = PayloadBuf::default();
        if let Some(sig) = &e.sources.signature {
            flags |= 1;
            tail.str(sig, MAX_STRING);
        }
        if let Some(names) = &e.sources.names {
            flags |= 2;
            tail.u32(names.len() as u32);
            for n in names {
                tail.u8(n.is_some() as u8);
                if let Some(n) = n {
                    tail.str(n, MAX_STRING);
                }
            }
        }
        b.u8(flags);
        b.0.extend_from_slice(&tail.0);
        b.u32(m.args.len() as u32);
        for a in &m.args {
            b.u64(a.offset).u64(a.size).str(&a.value_kind, MAX_STRING);
            let mut af = 0u8;
            let mut at = PayloadBuf::default();
            for (bit, s) in [
                (1u8, a.name.as_deref()),
                (2, a.type_name.as_deref()),
                (4, a.address_space.as_deref()),
            ] {
                if let Some(s) = s {
                    af |= bit;
                    at.str(s, MAX_STRING);
                }
            }
            b.u8(af);
            b.0.extend_from_slice(&at.0);
        }
        p.u32(b.0.len() as u32);
        p.0.extend_from_slice(&b.0);
    }
    p.0
}

fn string(c: &mut Cursor<'_>) -> Result<String, &'static str> {
    let b = c.str_bytes().ok_or("a string runs past the entry")?;
    String::from_utf8(b.to_vec()).map_err(|_| "a string is not UTF-8")
}

/// Decodes a KernelArgs payload. Bounded: counts reserve nothing beyond what
/// the remaining bytes could hold. Bytes at the end of an entry past the
/// fields this version knows are skipped.
pub fn decode_kernel_args(p: &[u8]) -> Result<Vec<KernelArgSources>, &'static str> {
    let mut c = Cursor::new(p);
    let count = c.u32().ok_or("payload shorter than 4 bytes")?;
    let mut out = Vec::with_capacity((count as usize).min(c.remaining() / 32));
    for _ in 0..count {
        let len = c.u32().ok_or("an entry length runs past the payload")?;
        let entry = c
            .bytes(len as usize)
            .ok_or("an entry runs past the payload")?;
        let mut e = Cursor::new(entry);
        let short = "an entry is shorter than its fields";
        let kernel_object = e.u64().ok_or(short)?;
        let kernarg_segment_size = e.u64().ok_or(short)?;
        let group_segment_fixed_size = e.u64().ok_or(short)?;
        let symbol = string(&mut e)?;
        let flags = e.u8().ok_or(short)?;
        let signature = if flags & 1 != 0 {
            Some(string(&mut e)?)
        } else {
            None
        };
        let names = if flags & 2 != 0 {
            let n = e.u32().ok_or(short)?;
            let mut v = Vec::with_capacity((n as usize).min(e.remaining()));
            for _ in 0..n {
                let present = e.u8().ok_or(short)?;
                v.push(if present != 0 {
                    Some(string(&mut e)?)
                } else {
                    None
                });
            }
            Some(v)
        } else {
            None
        };
        let n = e.u32().ok_or(short)?;
        let mut args = Vec::with_capacity((n as usize).min(e.remaining() / 21));
        for _ in 0..n {
            let offset = e.u64().ok_or(short)?;
            let size = e.u64().ok_or(short)?;
            let value_kind = string(&mut e)?;
            let af = e.u8().ok_or(short)?;
            let mut get = |bit: u8| -> Result<Option<String>, &'static str> {
                if af & bit != 0 {
                    string(&mut e).map(Some)
                } else {
                    Ok(None)
                }
            };
            let name = get(1)?;
            let type_name = get(2)?;
            let address_space = get(4)?;
            args.push(KernelArg {
                name,
                type_name,
                offset,
                size,
                value_kind,
                address_space,
            });
        }
        out.push(KernelArgSources {
            kernel_object,
            metadata: KernelMetadata {
                symbol: symbol.clone(),
                kernarg_segment_size,
                group_segment_fixed_size,
                args,
                ..KernelMetadata::default()
            },
            sources: KernelSources {
                symbol,
                signature,
                names,
            },
        });
    }
    Ok(out)
}

/// One queue's arena: the doorbell path copies each dispatch's block into it
/// (an 8-byte entry header `len u32 | segment_size u32 << 32`, then the
/// bytes, padded to 8), and the writer thread copies it out when it encodes
/// the record. Safe Rust over atomics: the producer's stores are relaxed,
/// ordered by the ring slot's release commit; the writer's `consumed` store
/// (release) frees the space.
#[derive(Debug)]
pub struct Arena {
    pub(crate) id: u32,
    words: Box<[AtomicU64]>,
    /// Byte position (absolute, multiple of 8) up to which the writer has
    /// copied entries out.
    consumed: AtomicU64,
    /// `u64::MAX` while the producer lives; then `next_seq` when it went:
    /// every record of this arena has a lower seq.
    closed_after: AtomicU64,
}

impl Arena {
    pub(crate) fn new(id: u32) -> Arena {
        Arena {
            id,
            words: (0..ARENA_BYTES / 8).map(|_| AtomicU64::new(0)).collect(),
            consumed: AtomicU64::new(0),
            closed_after: AtomicU64::new(u64::MAX),
        }
    }
    fn cap(&self) -> u64 {
        ARENA_BYTES as u64
    }
    pub(crate) fn consumed(&self) -> u64 {
        self.consumed.load(Ordering::Acquire)
    }
    pub(crate) fn close(&self, after_seq: u64) {
        self.closed_after.store(after_seq, Ordering::Release);
    }
    pub(crate) fn closed_after(&self) -> u64 {
        self.closed_after.load(Ordering::Acquire)
    }

    /// Where an entry of `bytes` bytes goes when the producer is at `pos`:
    /// `(start, end)`, skipping to the next wrap when it would not fit
    /// before the end of the buffer.
    pub(crate) fn place(&self, pos: u64, bytes: usize) -> (u64, u64) {
        let need = 8 + (bytes as u64).div_ceil(8) * 8;
        let cap = self.cap();
        let start = if pos % cap + need > cap {
            pos.div_ceil(cap) * cap
        } else {
            pos
        };
        (start, start + need)
    }

    /// Producer: stores an entry at `start` (from [`Arena::place`]; the
    /// caller has waited until `end - consumed <= cap`). An entry never
    /// wraps (`place` skips to the next wrap instead), so its words are one
    /// run of the buffer.
    #[inline]
    pub(crate) fn store(&self, start: u64, bytes: &[u8], segment_size: u64) {
        // `words` always holds ARENA_BYTES / 8 words (a power of two): a
        // mask, not a division, on the doorbell path.
        let w = (start / 8) as usize % (ARENA_BYTES / 8);
        let Some(run) = self.words.get(w..w + 1 + bytes.len().div_ceil(8)) else {
            return; // unreachable: `place` keeps every entry inside the buffer
        };
        let seg = u32::try_from(segment_size).unwrap_or(u32::MAX);
        run[0].store(
            bytes.len() as u64 | (u64::from(seg) << 32),
            Ordering::Relaxed,
        );
        let mut chunks = bytes.chunks_exact(8);
        for (d, c) in run[1..].iter().zip(&mut chunks) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            d.store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            run[run.len() - 1].store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
    }

    /// Writer: the entry whose position's low 32 bits are `pos32`, copied
    /// into `out`; frees it. Returns the segment size it was stored with,
    /// or `None` when the entry is not plausible (never trusted blindly).
    pub(crate) fn take(&self, pos32: u32, out: &mut Vec<u8>) -> Option<u64> {
        let consumed = self.consumed.load(Ordering::Relaxed);
        let start = consumed.wrapping_add(u64::from(pos32.wrapping_sub(consumed as u32)));
        let cap_words = self.words.len();
        let w0 = (start / 8) as usize % cap_words;
        let head = self.words[w0].load(Ordering::Relaxed);
        let len = (head & 0xffff_ffff) as usize;
        let seg = head >> 32;
        let words = len.div_ceil(8);
        if len > KERNARG_BOUND || w0 + 1 + words > cap_words {
            return None;
        }
        out.clear();
        out.resize(words * 8, 0);
        let run = &self.words[w0 + 1..w0 + 1 + words];
        for (chunk, v) in out.chunks_exact_mut(8).zip(run) {
            chunk.copy_from_slice(&v.load(Ordering::Relaxed).to_le_bytes());
        }
        out.truncate(len);
        self.consumed
            .store(start + 8 + (words as u64) * 8, Ordering::Release);
        Some(seg)
    }
}

/// Slot word 15 (`KERNARG_REF`) in 2.1: `pos u32 | arena u24 << 32 | state
/// u4 << 56`; for an unreadable record the low byte is the reason; for a
/// repeat, bit 0 says truncated.
pub mod slot_ref {
    pub const STATE_SHIFT: u32 = 56;
    pub const COPIED: u64 = 1;
    pub const TRUNCATED: u64 = 2;
    pub const UNREADABLE: u64 = 3;
    /// The producer could not copy (the writer is gone).
    pub const LOST: u64 = 4;
    /// The same bytes and segment size as the arena's previous copied entry
    /// (the producer compared them): nothing was copied.
    pub const REPEAT: u64 = 5;
    pub const ARENA_MASK: u64 = 0xff_ffff;

    pub fn copied(pos: u64, arena: u32, truncated: bool) -> u64 {
        let st = if truncated { TRUNCATED } else { COPIED };
        (pos & 0xffff_ffff) | ((u64::from(arena) & ARENA_MASK) << 32) | (st << STATE_SHIFT)
    }
    pub fn repeat(arena: u32, truncated: bool) -> u64 {
        u64::from(truncated) | ((u64::from(arena) & ARENA_MASK) << 32) | (REPEAT << STATE_SHIFT)
    }
    pub fn unreadable(reason: u8) -> u64 {
        u64::from(reason) | (UNREADABLE << STATE_SHIFT)
    }
    pub fn state(w: u64) -> u64 {
        (w >> STATE_SHIFT) & 0xf
    }
    pub fn arena(w: u64) -> u32 {
        ((w >> 32) & ARENA_MASK) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_round_trip_and_unknown_ones_read_as_none() {
        for k in [
            RecordKernarg::Block {
                block: 7,
                findings: None,
                truncated_from: None,
            },
            RecordKernarg::Block {
                block: 300,
                findings: Some(0),
                truncated_from: Some(10000),
            },
            RecordKernarg::Unreadable(Unreadable::NotKnownReadable),
            RecordKernarg::Lost,
        ] {
            let mut b = Vec::new();
            encode_ext(&k, &mut b);
            assert_eq!(decode_ext(&b), k);
            b.extend_from_slice(&[9, 9, 9]);
            assert_eq!(decode_ext(&b), k, "appended bytes are ignored");
        }
        assert_eq!(decode_ext(&[0x77, 1]), RecordKernarg::None);
        assert_eq!(decode_ext(&[ext::COPIED]), RecordKernarg::None);
    }

    #[test]
    fn findings_round_trip() {
        let f = vec![
            ArgFinding {
                index: 0,
                address: 0x7f00_0000_1000,
                finding: PointerFinding::InAllocation {
                    allocation: 3,
                    offset: 0,
                    remaining: 4000,
                },
            },
            ArgFinding {
                index: 2,
                address: 0,
                finding: PointerFinding::Null,
            },
            ArgFinding {
                index: 3,
                address: 0x10,
                finding: PointerFinding::NoAccess {
                    allocation: 1,
                    offset: 16,
                    owner: None,
                    agent: 5,
                },
            },
        ];
        assert_eq!(decode_findings(&encode_findings(&f)), f);
    }

    #[test]
    fn arena_entries_wrap_without_splitting() {
        let a = Arena::new(1);
        let mut pos = 0u64;
        let mut out = Vec::new();
        for i in 0..2000u32 {
            let bytes: Vec<u8> = (0..(i % 300) as u8).collect();
            let (start, end) = a.place(pos, bytes.len());
            assert!(end - a.consumed() <= ARENA_BYTES as u64);
            a.store(start, &bytes, 1234);
            assert_eq!(a.take(start as u32, &mut out), Some(1234));
            assert_eq!(out, bytes);
            pos = end;
        }
    }
}
