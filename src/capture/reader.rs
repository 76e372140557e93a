//! The bounded capture reader.
//!
//! Never panics on any input, never allocates more than the input can justify
//! (counts read from the file are capped by the bytes that remain), and uses
//! checked arithmetic for every offset. A file cut at any byte is not an error:
//! the complete frames before the cut are returned and the capture is marked
//! incomplete. Everything else that is wrong is a [`CaptureError`] that says
//! where.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use super::format::{self, Cursor, kind};
use super::{
    AgentDesc, AgentKind, Capture, CaptureHeader, CapturedRecord, CodeObject, Counts, KernargClass,
    KernelMeta, QueueInfo, Trailer,
};
use crate::aql::{ReasonSet, Status};

/// Why a capture could not be read: where, and what is wrong.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CaptureError {
    /// The file, when read with [`read_file`].
    pub file: Option<PathBuf>,
    pub kind: CaptureErrorKind,
}

/// One variant per way the input can be wrong. Every variant but `Io` carries
/// the byte offset (from the start of the file) where the problem is.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum CaptureErrorKind {
    /// The file could not be read at all.
    Io { message: String },
    /// The first bytes are not the capture magic: not a SoftGPU capture.
    NotACapture { offset: u64 },
    /// A capture of a major version this reader does not understand.
    UnsupportedVersion { offset: u64, major: u16, minor: u16 },
    /// The file ends before its Header frame is complete: nothing to recover.
    EndsBeforeHeader { offset: u64, len: u64 },
    /// A frame length larger than any writer produces.
    FrameTooLong { offset: u64, kind: u16, len: u32 },
    /// A frame's CRC-32 does not match its bytes (and it is not the torn last
    /// frame of a cut file).
    ChecksumMismatch {
        offset: u64,
        kind: u16,
        stored: u32,
        computed: u32,
    },
    /// The first frame is not a Header frame.
    MissingHeader { offset: u64, kind: u16 },
    /// A second Header frame.
    DuplicateHeader { offset: u64 },
    /// A frame of a kind that must be understood, which this reader does not know.
    UnknownCriticalFrame { offset: u64, kind: u16 },
    /// A known frame whose payload does not hold what its kind requires.
    MalformedFrame {
        offset: u64,
        kind: u16,
        problem: &'static str,
    },
    /// A field holds a value outside its defined range.
    InvalidValue {
        offset: u64,
        field: &'static str,
        value: u64,
    },
    /// A second Queue frame for the same queue id.
    DuplicateQueue { offset: u64, queue_id: u64 },
    /// A Packet frame for a queue that no earlier Queue frame registered.
    UnknownQueue { offset: u64, queue_id: u64 },
    /// Two Packet frames with the same sequence number.
    DuplicateSeq { offset: u64, seq: u64 },
    /// Bytes after the Trailer frame (the Trailer must be last).
    DataAfterTrailer { offset: u64 },
    /// A Trailer count that disagrees with the frames before it.
    TrailerMismatch {
        offset: u64,
        field: &'static str,
        trailer: u64,
        counted: u64,
    },
}

impl CaptureError {
    /// The byte offset of the problem (`None` for I/O errors).
    pub fn offset(&self) -> Option<u64> {
        use CaptureErrorKind::*;
        match self.kind {
            Io { .. } => None,
            NotACapture { offset }
            | UnsupportedVersion { offset, .. }
            | EndsBeforeHeader { offset, .. }
            | FrameTooLong { offset, .. }
            | ChecksumMismatch { offset, .. }
            | MissingHeader { offset, .. }
            | DuplicateHeader { offset }
            | UnknownCriticalFrame { offset, .. }
            | MalformedFrame { offset, .. }
            | InvalidValue { offset, .. }
            | DuplicateQueue { offset, .. }
            | UnknownQueue { offset, .. }
            | DuplicateSeq { offset, .. }
            | DataAfterTrailer { offset }
            | TrailerMismatch { offset, .. } => Some(offset),
        }
    }

    fn at(kind: CaptureErrorKind) -> CaptureError {
        CaptureError { file: None, kind }
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CaptureErrorKind::*;
        match &self.file {
            Some(p) => write!(f, "file {}: ", p.display())?,
            None => write!(f, "capture: ")?,
        }
        if let Some(o) = self.offset() {
            write!(f, "offset {o}: ")?;
        }
        let kn = format::kind_name;
        match &self.kind {
            Io { message } => write!(f, "cannot read: {message}"),
            NotACapture { .. } => write!(
                f,
                "not a SoftGPU capture (the file does not start with the capture magic)"
            ),
            UnsupportedVersion { major, minor, .. } => write!(
                f,
                "capture format version {major}.{minor} is not supported (this reader reads major version {})",
                format::FORMAT_MAJOR
            ),
            EndsBeforeHeader { len, .. } => write!(
                f,
                "the file ends after {len} bytes, before the capture header is complete; no records to recover"
            ),
            FrameTooLong { kind, len, .. } => write!(
                f,
                "frame of kind {kind:#06x} ({}) claims {len} payload bytes, more than the limit of {}: corrupt",
                kn(*kind),
                format::MAX_FRAME_LEN
            ),
            ChecksumMismatch {
                kind,
                stored,
                computed,
                ..
            } => write!(
                f,
                "checksum mismatch in a frame of kind {kind:#06x} ({}): stored {stored:#010x}, computed {computed:#010x}: corrupt",
                kn(*kind)
            ),
            MissingHeader { kind, .. } => write!(
                f,
                "the first frame is of kind {kind:#06x} ({}), not a header",
                kn(*kind)
            ),
            DuplicateHeader { .. } => write!(f, "a second header frame"),
            UnknownCriticalFrame { kind, .. } => write!(
                f,
                "frame of kind {kind:#06x} must be understood but this reader does not know it (written by a newer SoftGPU?)"
            ),
            MalformedFrame { kind, problem, .. } => {
                write!(f, "malformed {} frame: {problem}", kn(*kind))
            }
            InvalidValue { field, value, .. } => {
                write!(f, "field {field} has invalid value {value}")
            }
            DuplicateQueue { queue_id, .. } => {
                write!(f, "queue {queue_id} is registered twice")
            }
            UnknownQueue { queue_id, .. } => write!(
                f,
                "packet record for queue {queue_id}, which no earlier queue frame registered"
            ),
            DuplicateSeq { seq, .. } => write!(f, "two packet records have sequence number {seq}"),
            DataAfterTrailer { .. } => write!(f, "data after the trailer frame"),
            TrailerMismatch {
                field,
                trailer,
                counted,
                ..
            } => write!(
                f,
                "trailer says {field} = {trailer} but the capture holds {counted}"
            ),
        }
    }
}

impl std::error::Error for CaptureError {}

/// Reads a capture file. See [`read_bytes`].
pub fn read_file(path: &Path) -> Result<Capture, CaptureError> {
    let data = std::fs::read(path).map_err(|e| CaptureError {
        file: Some(path.to_path_buf()),
        kind: CaptureErrorKind::Io {
            message: e.to_string(),
        },
    })?;
    read_bytes(&data).map_err(|mut e| {
        e.file = Some(path.to_path_buf());
        e
    })
}

/// Parses a capture from memory. A file cut at any byte after its Header frame
/// yields `Ok` with every complete record, `complete == false` and
/// `truncated_at` set; corruption yields a [`CaptureError`] with the offset.
pub fn read_bytes(data: &[u8]) -> Result<Capture, CaptureError> {
    let version = read_preamble(data)?;
    let mut r = State {
        version,
        header: None,
        queues: Vec::new(),
        queue_ids: HashSet::new(),
        code_objects: Vec::new(),
        kernels: std::collections::HashMap::new(),
        records: Vec::new(),
        counts: Counts::default(),
        trailer: None,
        skipped: 0,
    };
    let len = data.len();
    let mut pos = format::PREAMBLE_LEN;
    let mut truncated_at = None;
    while pos < len {
        let off = pos as u64;
        if r.trailer.is_some() {
            return Err(CaptureError::at(CaptureErrorKind::DataAfterTrailer {
                offset: off,
            }));
        }
        let rest = &data[pos..];
        if rest.len() < format::FRAME_HEAD_LEN {
            truncated_at = Some(off);
            break;
        }
        let fkind = u16::from_le_bytes([rest[0], rest[1]]);
        let flen = u32::from_le_bytes([rest[2], rest[3], rest[4], rest[5]]);
        if flen > format::MAX_FRAME_LEN {
            return Err(CaptureError::at(CaptureErrorKind::FrameTooLong {
                offset: off,
                kind: fkind,
                len: flen,
            }));
        }
        // flen <= 16 MiB, so this cannot overflow usize.
        let total = format::FRAME_HEAD_LEN + flen as usize + format::FRAME_CRC_LEN;
        if rest.len() < total {
            truncated_at = Some(off);
            break;
        }
        let body_end = format::FRAME_HEAD_LEN + flen as usize;
        let stored = u32::from_le_bytes([
            rest[body_end],
            rest[body_end + 1],
            rest[body_end + 2],
            rest[body_end + 3],
        ]);
        let computed = format::crc32(&rest[..body_end]);
        if stored != computed {
            if rest.len() == total && r.header.is_some() {
                // The last frame of the file is torn (a crash mid-write can leave
                // the file longer than the bytes that reached it): treat it as
                // the cut.
                truncated_at = Some(off);
                break;
            }
            return Err(CaptureError::at(CaptureErrorKind::ChecksumMismatch {
                offset: off,
                kind: fkind,
                stored,
                computed,
            }));
        }
        r.frame(off, fkind, &rest[format::FRAME_HEAD_LEN..body_end])?;
        pos += total;
    }
    let Some(header) = r.header else {
        return Err(CaptureError::at(CaptureErrorKind::EndsBeforeHeader {
            offset: truncated_at.unwrap_or(len as u64),
            len: len as u64,
        }));
    };
    r.records.sort_unstable_by_key(|rec| rec.seq);
    for w in r.records.windows(2) {
        if w[0].seq == w[1].seq {
            return Err(CaptureError::at(CaptureErrorKind::DuplicateSeq {
                offset: w[0].offset.max(w[1].offset),
                seq: w[1].seq,
            }));
        }
    }
    let complete = r.trailer.is_some();
    Ok(Capture {
        version: r.version,
        header,
        queues: r.queues,
        code_objects: r.code_objects,
        kernels: r.kernels,
        records: r.records,
        trailer: r.trailer,
        complete,
        truncated_at,
        skipped_frames: r.skipped,
    })
}

fn read_preamble(data: &[u8]) -> Result<(u16, u16), CaptureError> {
    let n = data.len().min(format::MAGIC.len());
    if data[..n] != format::MAGIC[..n] {
        return Err(CaptureError::at(CaptureErrorKind::NotACapture {
            offset: 0,
        }));
    }
    if data.len() < format::PREAMBLE_LEN {
        return Err(CaptureError::at(CaptureErrorKind::EndsBeforeHeader {
            offset: data.len() as u64,
            len: data.len() as u64,
        }));
    }
    let major = u16::from_le_bytes([data[8], data[9]]);
    let minor = u16::from_le_bytes([data[10], data[11]]);
    if major != format::FORMAT_MAJOR {
        return Err(CaptureError::at(CaptureErrorKind::UnsupportedVersion {
            offset: 8,
            major,
            minor,
        }));
    }
    Ok((major, minor))
}

struct State {
    version: (u16, u16),
    header: Option<CaptureHeader>,
    queues: Vec<QueueInfo>,
    queue_ids: HashSet<u64>,
    code_objects: Vec<CodeObject>,
    kernels: std::collections::HashMap<u64, KernelMeta>,
    records: Vec<CapturedRecord>,
    counts: Counts,
    trailer: Option<Trailer>,
    skipped: u64,
}

fn malformed(offset: u64, kind: u16, problem: &'static str) -> CaptureError {
    CaptureError::at(CaptureErrorKind::MalformedFrame {
        offset,
        kind,
        problem,
    })
}

fn invalid(offset: u64, field: &'static str, value: u64) -> CaptureError {
    CaptureError::at(CaptureErrorKind::InvalidValue {
        offset,
        field,
        value,
    })
}

/// A `len u32` + UTF-8 string from `c`, or a malformed-frame error.
fn string(c: &mut Cursor<'_>, off: u64, k: u16) -> Result<String, CaptureError> {
    let b = c
        .str_bytes()
        .ok_or_else(|| malformed(off, k, "string runs past the end of the payload"))?;
    String::from_utf8(b.to_vec()).map_err(|_| malformed(off, k, "string is not UTF-8"))
}

impl State {
    fn frame(&mut self, off: u64, k: u16, payload: &[u8]) -> Result<(), CaptureError> {
        if self.header.is_none() && k != kind::HEADER {
            return Err(CaptureError::at(CaptureErrorKind::MissingHeader {
                offset: off,
                kind: k,
            }));
        }
        match k {
            kind::HEADER => {
                if self.header.is_some() {
                    return Err(CaptureError::at(CaptureErrorKind::DuplicateHeader {
                        offset: off,
                    }));
                }
                self.header = Some(header(off, payload)?);
            }
            kind::QUEUE => {
                let mut c = Cursor::new(payload);
                let short = || malformed(off, k, "payload shorter than 24 bytes");
                let q = QueueInfo {
                    queue_id: c.u64().ok_or_else(short)?,
                    agent_index: c.u32().ok_or_else(short)?,
                    ring_size: c.u32().ok_or_else(short)?,
                    created_ns: c.u64().ok_or_else(short)?,
                };
                if !self.queue_ids.insert(q.queue_id) {
                    return Err(CaptureError::at(CaptureErrorKind::DuplicateQueue {
                        offset: off,
                        queue_id: q.queue_id,
                    }));
                }
                self.queues.push(q);
            }
            kind::PACKET => {
                let rec = packet(off, payload)?;
                if !self.queue_ids.contains(&rec.queue_id) {
                    return Err(CaptureError::at(CaptureErrorKind::UnknownQueue {
                        offset: off,
                        queue_id: rec.queue_id,
                    }));
                }
                self.counts.add(rec.status, &rec.raw);
                self.records.push(rec);
            }
            kind::CODE_OBJECT => self.code_object(off, payload)?,
            kind::KERNEL_INFO => self.kernel_info(off, payload)?,
            kind::TRAILER => {
                let t = trailer(off, payload)?;
                self.check_trailer(off, &t)?;
                self.trailer = Some(t);
            }
            _ if k & format::KIND_CRITICAL != 0 => {
                return Err(CaptureError::at(CaptureErrorKind::UnknownCriticalFrame {
                    offset: off,
                    kind: k,
                }));
            }
            _ => self.skipped += 1,
        }
        Ok(())
    }

    fn kernel_info(&mut self, off: u64, payload: &[u8]) -> Result<(), CaptureError> {
        let k = kind::KERNEL_INFO;
        let mut c = Cursor::new(payload);
        let count = c
            .u32()
            .ok_or_else(|| malformed(off, k, "payload shorter than 4 bytes"))?;
        if (count as usize).checked_mul(format::KERNEL_INFO_ENTRY_LEN) != Some(c.remaining()) {
            return Err(malformed(
                off,
                k,
                "entry count does not match the payload length",
            ));
        }
        for _ in 0..count {
            let short = || malformed(off, k, "entry runs past the payload");
            let m = KernelMeta {
                kernel_object: c.u64().ok_or_else(short)?,
                sgpr_count: c.u32().ok_or_else(short)?,
                vgpr_count: c.u32().ok_or_else(short)?,
                agpr_count: c.u32().ok_or_else(short)?,
                group_segment_fixed_size: c.u32().ok_or_else(short)?,
                private_segment_fixed_size: c.u32().ok_or_else(short)?,
                kernarg_size: c.u32().ok_or_else(short)?,
                wavefront_size: c.u32().ok_or_else(short)?,
                max_flat_workgroup_size: c.u32().ok_or_else(short)?,
            };
            self.kernels.insert(m.kernel_object, m);
        }
        Ok(())
    }

    fn code_object(&mut self, off: u64, payload: &[u8]) -> Result<(), CaptureError> {
        let k = kind::CODE_OBJECT;
        let mut c = Cursor::new(payload);
        let short = || malformed(off, k, "payload shorter than 12 bytes");
        let id = c.u64().ok_or_else(short)?;
        let count = c.u32().ok_or_else(short)?;
        // Each entry takes at least 12 bytes: cap the reservation by what is there.
        let mut symbols = Vec::with_capacity((count as usize).min(c.remaining() / 12));
        for _ in 0..count {
            let addr = c
                .u64()
                .ok_or_else(|| malformed(off, k, "symbol entries run past the payload"))?;
            symbols.push((addr, string(&mut c, off, k)?));
        }
        match self.code_objects.iter_mut().find(|co| co.id == id) {
            Some(co) => co.symbols.extend(symbols),
            None => self.code_objects.push(CodeObject { id, symbols }),
        }
        Ok(())
    }

    fn check_trailer(&self, off: u64, t: &Trailer) -> Result<(), CaptureError> {
        let checks: [(&'static str, u64, u64); 7] = [
            ("records", t.counts.records, self.counts.records),
            ("validated", t.counts.validated, self.counts.validated),
            ("rejected", t.counts.rejected, self.counts.rejected),
            ("barriers", t.counts.barriers, self.counts.barriers),
            (
                "dispatches_validated",
                t.counts.dispatches_validated,
                self.counts.dispatches_validated,
            ),
            ("queues", t.queues as u64, self.queues.len() as u64),
            (
                "code_objects",
                t.code_objects as u64,
                self.code_objects.len() as u64,
            ),
        ];
        for (field, trailer, counted) in checks {
            if trailer != counted {
                return Err(CaptureError::at(CaptureErrorKind::TrailerMismatch {
                    offset: off,
                    field,
                    trailer,
                    counted,
                }));
            }
        }
        Ok(())
    }
}

fn header(off: u64, payload: &[u8]) -> Result<CaptureHeader, CaptureError> {
    let k = kind::HEADER;
    let mut c = Cursor::new(payload);
    let short = || malformed(off, k, "payload ends inside a field");
    let pid = c.u32().ok_or_else(short)?;
    let _reserved = c.u32().ok_or_else(short)?;
    let start_unix_ns = c.u64().ok_or_else(short)?;
    let mode = string(&mut c, off, k)?;
    let count = c.u32().ok_or_else(short)?;
    // Each agent takes at least 16 bytes.
    let mut agents = Vec::with_capacity((count as usize).min(c.remaining() / 16));
    for _ in 0..count {
        let index = c.u32().ok_or_else(short)?;
        let kind_byte = c.u8().ok_or_else(short)?;
        let has_target = c.u8().ok_or_else(short)?;
        let _reserved = c.u16().ok_or_else(short)?;
        let name = string(&mut c, off, k)?;
        let target = string(&mut c, off, k)?;
        let kind = match kind_byte {
            0 => AgentKind::Cpu,
            1 => AgentKind::Gpu,
            v => return Err(invalid(off, "agent.kind", v as u64)),
        };
        let target = match has_target {
            0 => None,
            1 => Some(target),
            v => return Err(invalid(off, "agent.has_target", v as u64)),
        };
        agents.push(AgentDesc {
            index,
            kind,
            name,
            target,
        });
    }
    Ok(CaptureHeader {
        pid,
        start_unix_ns,
        mode,
        agents,
    })
}

fn packet(off: u64, p: &[u8]) -> Result<CapturedRecord, CaptureError> {
    if p.len() < format::PACKET_PAYLOAD_LEN {
        return Err(malformed(
            off,
            kind::PACKET,
            "payload shorter than 128 bytes",
        ));
    }
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&p[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let mut raw = [0u8; 64];
    raw.copy_from_slice(&p[24..88]);
    let status = match p[88] {
        0 => Status::Validated,
        1 => Status::Rejected,
        v => return Err(invalid(off, "packet.status", v as u64)),
    };
    let kernarg_class = KernargClass::from_u8(p[89])
        .ok_or_else(|| invalid(off, "packet.kernarg_class", p[89] as u64))?;
    Ok(CapturedRecord {
        seq: u64_at(0),
        queue_id: u64_at(8),
        packet_index: u64_at(16),
        raw,
        status,
        kernarg_class,
        thread: u32::from_le_bytes([p[92], p[93], p[94], p[95]]),
        reasons: ReasonSet(u64_at(96)),
        observed_ns: u64_at(104),
        done_ns: u64_at(112),
        offset: off,
    })
}

fn trailer(off: u64, p: &[u8]) -> Result<Trailer, CaptureError> {
    let mut c = Cursor::new(p);
    let short = || malformed(off, kind::TRAILER, "payload shorter than 64 bytes");
    let mut next = || c.u64().ok_or_else(short);
    let records = next()?;
    let validated = next()?;
    let rejected = next()?;
    let barriers = next()?;
    let dispatches_validated = next()?;
    let stalls = next()?;
    let end_ns = next()?;
    let both = next()?;
    Ok(Trailer {
        counts: Counts {
            records,
            validated,
            rejected,
            barriers,
            dispatches_validated,
        },
        stalls,
        end_ns,
        queues: both as u32,
        code_objects: (both >> 32) as u32,
    })
}
