//! The bounded capture reader.
//!
//! Never panics on any input, never allocates more than the input can justify
//! (counts read from the file are capped by the bytes that remain), and uses
//! checked arithmetic for every offset. A file cut at any byte is not an error:
//! the complete frames before the cut are returned and the capture is marked
//! incomplete. Damage is told from a cut by what follows it: a frame that fails
//! its checksum, claims an impossible length or runs past the end of the file
//! is a cut only when no valid frame follows it; otherwise it is corruption.
//! Everything else that is wrong is a [`CaptureError`] that says where.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::format::{self, Cursor, kind};
use super::{
    AgentDesc, AgentKind, Capture, CaptureHeader, CapturedRecord, CodeObject, Counts, KernargClass,
    KernelMeta, QueueInfo, Trailer,
};
use crate::aql::{ReasonSet, Status};

/// Why a capture could not be read: where, and what is wrong.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("{}{}{kind}", file_prefix(.file), offset_prefix(.kind.offset()))]
pub struct CaptureError {
    /// The file, when read with [`read_file`].
    pub file: Option<PathBuf>,
    pub kind: CaptureErrorKind,
}

fn file_prefix(file: &Option<PathBuf>) -> String {
    match file {
        Some(p) => format!("file {}: ", crate::input::show_path(p)),
        None => "capture: ".to_string(),
    }
}

fn offset_prefix(offset: Option<u64>) -> String {
    offset.map_or_else(String::new, |o| format!("offset {o}: "))
}

/// One variant per way the input can be wrong. Every variant but `Io` and
/// `NotARegularFile` carries the byte offset (from the start of the file)
/// where the problem is.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum CaptureErrorKind {
    /// The file could not be read at all.
    #[error("cannot read: {message}")]
    Io { message: String },
    /// The path names a directory, FIFO, device or socket.
    #[error("not a regular file (it is {file_type}); softgpu reads only regular files")]
    NotARegularFile { file_type: &'static str },
    /// The file is larger than [`format::MAX_FILE_LEN`]; `offset` is the limit.
    #[error(
        "the file is {size} bytes, more than the {limit} bytes (1 GiB) a capture reader accepts"
    )]
    TooLarge { offset: u64, size: u64, limit: u64 },
    /// The first bytes are not the capture magic: not a SoftGPU capture.
    #[error("not a SoftGPU capture (the file does not start with the capture magic)")]
    NotACapture { offset: u64 },
    /// A capture of a major version this reader does not understand.
    #[error(
        "capture format version {major}.{minor} is not supported (this reader reads major version {})",
        format::FORMAT_MAJOR
    )]
    UnsupportedVersion { offset: u64, major: u16, minor: u16 },
    /// The file ends before its Header frame is complete: nothing to recover.
    #[error(
        "the file ends after {len} bytes, before the capture header is complete; no records to recover"
    )]
    EndsBeforeHeader { offset: u64, len: u64 },
    /// A frame length larger than any writer produces, with a valid frame after it.
    #[error(
        "frame of kind {kind:#06x} ({}) claims {len} payload bytes, more than the limit of {}: corrupt{}",
        format::kind_name(*.kind),
        format::MAX_FRAME_LEN,
        followed(*.next_frame)
    )]
    FrameTooLong {
        offset: u64,
        kind: u16,
        len: u32,
        /// Where the next valid frame starts (`None`: not searched, or too
        /// much to search).
        next_frame: Option<u64>,
    },
    /// A frame whose length runs past the end of the file while a valid frame
    /// starts inside that length: its length field is damaged.
    #[error(
        "frame of kind {kind:#06x} ({}) claims {len} payload bytes, past the end of the file: corrupt{}",
        format::kind_name(*.kind),
        followed(*.next_frame)
    )]
    FrameRunsPastEnd {
        offset: u64,
        kind: u16,
        len: u32,
        next_frame: Option<u64>,
    },
    /// A frame's CRC-32 does not match its bytes, and it is not the damaged
    /// tail of a cut file (a valid frame follows it, or it is the Header).
    #[error(
        "checksum mismatch in a frame of kind {kind:#06x} ({}): stored {stored:#010x}, computed {computed:#010x}: corrupt{}",
        format::kind_name(*.kind),
        followed(*.next_frame)
    )]
    ChecksumMismatch {
        offset: u64,
        kind: u16,
        stored: u32,
        computed: u32,
        next_frame: Option<u64>,
    },
    /// The first frame is not a Header frame.
    #[error("the first frame is of kind {kind:#06x} ({}), not a header", format::kind_name(*.kind))]
    MissingHeader { offset: u64, kind: u16 },
    /// A second Header frame.
    #[error("a second header frame")]
    DuplicateHeader { offset: u64 },
    /// A frame of a kind that must be understood, which this reader does not know.
    #[error(
        "frame of kind {kind:#06x} must be understood but this reader does not know it (written by a newer SoftGPU?)"
    )]
    UnknownCriticalFrame { offset: u64, kind: u16 },
    /// A known frame whose payload does not hold what its kind requires.
    #[error("malformed {} frame: {problem}", format::kind_name(*.kind))]
    MalformedFrame {
        offset: u64,
        kind: u16,
        problem: &'static str,
    },
    /// A field holds a value outside its defined range.
    #[error("field {field} has invalid value {value}")]
    InvalidValue {
        offset: u64,
        field: &'static str,
        value: u64,
    },
    /// A second Queue frame for the same queue id.
    #[error("queue {queue_id} is registered twice")]
    DuplicateQueue { offset: u64, queue_id: u64 },
    /// A Packet frame for a queue that no earlier Queue frame registered.
    #[error("packet record for queue {queue_id}, which no earlier queue frame registered")]
    UnknownQueue { offset: u64, queue_id: u64 },
    /// Two Packet frames with the same sequence number.
    #[error("two packet records have sequence number {seq}")]
    DuplicateSeq { offset: u64, seq: u64 },
    /// Bytes after the Trailer frame (the Trailer must be last).
    #[error("data after the trailer frame")]
    DataAfterTrailer { offset: u64 },
    /// A Trailer count that disagrees with the frames before it.
    #[error("trailer says {field} = {trailer} but the capture holds {counted}")]
    TrailerMismatch {
        offset: u64,
        field: &'static str,
        trailer: u64,
        counted: u64,
    },
}

/// The tail of a damage message: where the reader found a valid frame after it.
fn followed(next: Option<u64>) -> String {
    match next {
        Some(o) => {
            format!(" (a valid frame follows at offset {o}, so this is damage, not a cut file)")
        }
        None => String::new(),
    }
}

impl CaptureErrorKind {
    /// The byte offset of the problem (`None` when the file could not be read).
    pub fn offset(&self) -> Option<u64> {
        use CaptureErrorKind::*;
        match *self {
            Io { .. } | NotARegularFile { .. } => None,
            TooLarge { offset, .. }
            | NotACapture { offset }
            | UnsupportedVersion { offset, .. }
            | EndsBeforeHeader { offset, .. }
            | FrameTooLong { offset, .. }
            | FrameRunsPastEnd { offset, .. }
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
}

impl CaptureError {
    /// The byte offset of the problem (`None` when the file could not be read).
    pub fn offset(&self) -> Option<u64> {
        self.kind.offset()
    }

    fn at(kind: CaptureErrorKind) -> CaptureError {
        CaptureError { file: None, kind }
    }
}

/// Reads a capture file: opened once, a regular file of at most
/// [`format::MAX_FILE_LEN`] bytes (a FIFO, device or directory is refused
/// without blocking; see [`crate::input`]). See [`read_bytes`].
pub fn read_file(path: &Path) -> Result<Capture, CaptureError> {
    let named = |kind| CaptureError {
        file: Some(path.to_path_buf()),
        kind,
    };
    let data = crate::input::read_regular_file(path, format::MAX_FILE_LEN).map_err(|e| {
        named(match e {
            crate::input::ReadError::Io(e) => CaptureErrorKind::Io {
                message: e.to_string(),
            },
            crate::input::ReadError::NotRegular(file_type) => {
                CaptureErrorKind::NotARegularFile { file_type }
            }
            crate::input::ReadError::TooLarge { size, limit } => CaptureErrorKind::TooLarge {
                offset: limit,
                size,
                limit,
            },
        })
    })?;
    read_bytes(&data).map_err(|mut e| {
        e.file = Some(path.to_path_buf());
        e
    })
}

/// How much checksumming the search for a valid frame after damage may do
/// (bytes). A real cut leaves at most one partial frame to search; only a
/// crafted file can need more, and then the damage is reported as corruption.
const RESYNC_BUDGET: u64 = 256 << 20;

/// What follows a damaged frame.
enum After {
    /// A whole frame of a known kind with a valid checksum starts here.
    ValidFrame(u64),
    /// Nothing but noise up to the end of the file: the file was cut.
    Nothing,
    /// The search ran out of budget before the end of the file.
    Unknown,
}

/// Searches `data` after byte `from` for the start of a whole frame of a
/// known kind whose checksum holds.
fn after_damage(data: &[u8], from: usize) -> After {
    let mut budget = RESYNC_BUDGET;
    let mut pos = from;
    while pos + format::FRAME_HEAD_LEN + format::FRAME_CRC_LEN <= data.len() {
        let k = u16::from_le_bytes([data[pos], data[pos + 1]]);
        if format::KNOWN_KINDS.contains(&k) {
            let len =
                u32::from_le_bytes([data[pos + 2], data[pos + 3], data[pos + 4], data[pos + 5]]);
            let body_end = pos
                .checked_add(format::FRAME_HEAD_LEN)
                .and_then(|p| p.checked_add(len as usize));
            if let Some(body_end) = body_end.filter(|&e| {
                len <= format::MAX_FRAME_LEN && e + format::FRAME_CRC_LEN <= data.len()
            }) {
                let cost = (body_end - pos) as u64;
                if cost > budget {
                    return After::Unknown;
                }
                budget -= cost;
                let stored = u32::from_le_bytes([
                    data[body_end],
                    data[body_end + 1],
                    data[body_end + 2],
                    data[body_end + 3],
                ]);
                if format::crc32(&data[pos..body_end]) == stored {
                    return After::ValidFrame(pos as u64);
                }
            }
        }
        pos += 1;
    }
    After::Nothing
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
        // Where the frame's own bytes say it ends, if that is inside the file.
        let total = (flen <= format::MAX_FRAME_LEN)
            .then(|| format::FRAME_HEAD_LEN + flen as usize + format::FRAME_CRC_LEN);
        let damage = match total {
            None => Some(CaptureErrorKind::FrameTooLong {
                offset: off,
                kind: fkind,
                len: flen,
                next_frame: None,
            }),
            Some(t) if rest.len() < t => Some(CaptureErrorKind::FrameRunsPastEnd {
                offset: off,
                kind: fkind,
                len: flen,
                next_frame: None,
            }),
            Some(t) => {
                let body_end = t - format::FRAME_CRC_LEN;
                let stored = u32::from_le_bytes([
                    rest[body_end],
                    rest[body_end + 1],
                    rest[body_end + 2],
                    rest[body_end + 3],
                ]);
                let computed = format::crc32(&rest[..body_end]);
                (stored != computed).then_some(CaptureErrorKind::ChecksumMismatch {
                    offset: off,
                    kind: fkind,
                    stored,
                    computed,
                    next_frame: None,
                })
            }
        };
        if let Some(mut damage) = damage {
            // The file is damaged here. It is a cut (a process that died
            // mid-write, or a zero-filled tail after an OS crash) only if no
            // valid frame follows; then everything before it is the capture.
            let before_header = r.header.is_none();
            match after_damage(data, pos + 1) {
                After::Nothing if !before_header => {
                    truncated_at = Some(off);
                    break;
                }
                After::Nothing if matches!(damage, CaptureErrorKind::FrameRunsPastEnd { .. }) => {
                    return Err(CaptureError::at(CaptureErrorKind::EndsBeforeHeader {
                        offset: off,
                        len: len as u64,
                    }));
                }
                After::ValidFrame(next) => match &mut damage {
                    CaptureErrorKind::FrameTooLong { next_frame, .. }
                    | CaptureErrorKind::FrameRunsPastEnd { next_frame, .. }
                    | CaptureErrorKind::ChecksumMismatch { next_frame, .. } => {
                        *next_frame = Some(next)
                    }
                    _ => {}
                },
                After::Nothing | After::Unknown => {}
            }
            return Err(CaptureError::at(damage));
        }
        let total = total.unwrap_or(0);
        r.frame(
            off,
            fkind,
            &rest[format::FRAME_HEAD_LEN..total - format::FRAME_CRC_LEN],
        )?;
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
        if count == 0 {
            return Ok(());
        }
        // Every entry has the same length, at least this version's (a later
        // minor version may lengthen them; the fields it adds are skipped).
        let entries = c.remaining();
        let entry_len = entries / count as usize;
        if entry_len < format::KERNEL_INFO_ENTRY_LEN || entry_len * count as usize != entries {
            return Err(malformed(
                off,
                k,
                "entry count does not divide the payload into entries of at least 40 bytes",
            ));
        }
        for _ in 0..count {
            let entry = c
                .bytes(entry_len)
                .ok_or_else(|| malformed(off, k, "entry runs past the payload"))?;
            let m = format::decode_kernel_info_entry(entry)
                .ok_or_else(|| malformed(off, k, "entry shorter than 40 bytes"))?;
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
    let f = format::decode_packet(p)
        .ok_or_else(|| malformed(off, kind::PACKET, "payload shorter than 128 bytes"))?;
    let status = match f.status {
        0 => Status::Validated,
        1 => Status::Rejected,
        v => return Err(invalid(off, "packet.status", v as u64)),
    };
    let kernarg_class = KernargClass::from_u8(f.kernarg_class)
        .ok_or_else(|| invalid(off, "packet.kernarg_class", f.kernarg_class as u64))?;
    Ok(CapturedRecord {
        seq: f.seq,
        queue_id: f.queue_id,
        packet_index: f.packet_index,
        raw: f.raw,
        status,
        kernarg_class,
        thread: f.thread,
        reasons: ReasonSet(f.reasons),
        observed_ns: f.observed_ns,
        done_ns: f.done_ns,
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
