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
use super::ring::{self, hdr};
use super::{
    AgentDesc, AgentKind, Capture, CaptureHeader, CapturedRecord, CodeObject, Counts, EndKind,
    Ending, KernargClass, KernelMeta, QueueInfo, RecordKernarg, RingInfo, Trailer,
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
        "capture format version {major}.{minor} is not supported (this reader reads major versions {} to {})",
        format::OLDEST_MAJOR,
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
    /// Bytes after the Trailer frame where none may be: anything in a 1.x
    /// capture; in 2.x, a frame of a kind that cannot be late (a second
    /// Header, Ring or Trailer).
    #[error("data after the trailer frame")]
    DataAfterTrailer { offset: u64 },
    /// A second Ring frame, or one where it cannot be (2.x: right after the
    /// Header; never in 1.x).
    #[error("a ring frame where none may be (one, right after the header, in format 2.x)")]
    MisplacedRing { offset: u64 },
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
            | MisplacedRing { offset }
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
        // A Ring frame's CRC field is not a checksum: never take one for a
        // valid frame.
        if k != kind::RING && format::KNOWN_KINDS.contains(&k) {
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
        live_queue_ids: HashSet::new(),
        queue_frames: 0,
        frames: 0,
        ring: None,
        pending_at_destroy: Vec::new(),
        trailer_v2: None,
        batch: Vec::new(),
        code_objects: Vec::new(),
        kernels: std::collections::HashMap::new(),
        records: Vec::new(),
        counts: Counts::default(),
        trailer: None,
        skipped: 0,
        kernarg_blocks: std::collections::HashMap::new(),
        kernarg_findings: std::collections::HashMap::new(),
        kernel_args: std::collections::HashMap::new(),
    };
    let len = data.len();
    let mut pos = format::PREAMBLE_LEN;
    let mut truncated_at = None;
    while pos < len {
        let off = pos as u64;
        if r.trailer.is_some() && version.0 < 2 {
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
            // The Ring frame's CRC field is not a checksum (its region is
            // live); its contents are checked slot by slot.
            Some(_) if fkind == kind::RING && version.0 >= 2 => None,
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
    let Some(header) = r.header.take() else {
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
    let end = r.recover(data);
    let complete = r.trailer.is_some()
        && end.kind == Some(EndKind::Finish)
        && end.late_records == 0
        && end.pending_packets() == 0
        && end.recovered == 0
        && end.missing == 0
        && end.uncommitted == 0
        && end.bad_slots == 0
        && end.ring.is_none_or(|ring| ring.discarded == 0);
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
        end,
        kernarg_blocks: r.kernarg_blocks,
        kernarg_findings: r.kernarg_findings,
        kernel_args: r.kernel_args,
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
    if !(format::OLDEST_MAJOR..=format::FORMAT_MAJOR).contains(&major) {
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
    /// Every queue id a Queue frame registered (records may refer to them).
    queue_ids: HashSet<u64>,
    /// Queue ids registered and not yet ended (a second Queue frame for one
    /// is an error; after its QueueEnd the id may be registered again).
    live_queue_ids: HashSet<u64>,
    /// Queue frames read so far.
    queue_frames: u64,
    /// Frames read so far.
    frames: u64,
    /// The Ring frame: `(frame offset, region offset in the file, region length)`.
    ring: Option<(u64, usize, usize)>,
    pending_at_destroy: Vec<(u64, u64)>,
    trailer_v2: Option<format::TrailerV2>,
    /// Reused by PacketBatch decoding.
    batch: Vec<format::BatchRecord>,
    code_objects: Vec<CodeObject>,
    kernels: std::collections::HashMap<u64, KernelMeta>,
    records: Vec<CapturedRecord>,
    counts: Counts,
    trailer: Option<Trailer>,
    skipped: u64,
    kernarg_blocks: std::collections::HashMap<u64, Vec<u8>>,
    kernarg_findings: std::collections::HashMap<u64, Vec<crate::kernargs::ArgFinding>>,
    kernel_args: std::collections::HashMap<u64, super::KernelArgSources>,
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
        self.frames += 1;
        let v2 = self.version.0 >= 2;
        if self.trailer.is_some()
            && matches!(k, kind::HEADER | kind::RING | kind::TRAILER | kind::PACKET)
        {
            // 2.x allows late frames after the Trailer, but not these.
            return Err(CaptureError::at(CaptureErrorKind::DataAfterTrailer {
                offset: off,
            }));
        }
        match k {
            kind::RING if v2 => {
                if self.ring.is_some() || self.frames != 2 {
                    return Err(CaptureError::at(CaptureErrorKind::MisplacedRing {
                        offset: off,
                    }));
                }
                self.ring = Some(ring_region(off, payload)?);
            }
            kind::PACKET_BATCH if v2 => {
                let mut batch = std::mem::take(&mut self.batch);
                batch.clear();
                format::decode_batch(payload, &mut batch)
                    .map_err(|problem| malformed(off, k, problem))?;
                let late = self.trailer.is_some();
                for f in &batch {
                    let rec = record(off, f, "packet_batch")?;
                    if !self.queue_ids.contains(&rec.queue_id) {
                        return Err(CaptureError::at(CaptureErrorKind::UnknownQueue {
                            offset: off,
                            queue_id: rec.queue_id,
                        }));
                    }
                    if !late {
                        self.counts.add(rec.status, &rec.raw);
                    }
                    self.records.push(rec);
                }
                self.batch = batch;
            }
            kind::QUEUE_END if v2 => {
                let mut c = Cursor::new(payload);
                let short = || malformed(off, k, "payload shorter than 24 bytes");
                let queue_id = c.u64().ok_or_else(short)?;
                let pending = c.u64().ok_or_else(short)?;
                let _end_ns = c.u64().ok_or_else(short)?;
                if !self.live_queue_ids.remove(&queue_id) {
                    return Err(CaptureError::at(CaptureErrorKind::UnknownQueue {
                        offset: off,
                        queue_id,
                    }));
                }
                if pending > 0 {
                    self.pending_at_destroy.push((queue_id, pending));
                }
            }
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
                if !self.live_queue_ids.insert(q.queue_id) {
                    return Err(CaptureError::at(CaptureErrorKind::DuplicateQueue {
                        offset: off,
                        queue_id: q.queue_id,
                    }));
                }
                if self.queue_ids.insert(q.queue_id) {
                    self.queues.push(q);
                }
                self.queue_frames += 1;
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
            kind::KERNARG_BLOCK => {
                let (id, blob, bytes) = super::kernarg::decode_block(payload)
                    .ok_or_else(|| malformed(off, k, "payload shorter than 9 bytes"))?;
                match blob {
                    super::kernarg::blob::ARGS => {
                        self.kernarg_blocks
                            .entry(id)
                            .or_insert_with(|| bytes.to_vec());
                    }
                    super::kernarg::blob::FINDINGS => {
                        self.kernarg_findings
                            .entry(id)
                            .or_insert_with(|| super::kernarg::decode_findings(bytes));
                    }
                    // A blob kind of a later minor version.
                    _ => self.skipped += 1,
                }
            }
            kind::KERNEL_ARGS => {
                let entries = super::kernarg::decode_kernel_args(payload)
                    .map_err(|problem| malformed(off, k, problem))?;
                for e in entries {
                    self.kernel_args.entry(e.kernel_object).or_insert(e);
                }
            }
            kind::KERNEL_INFO => self.kernel_info(off, payload)?,
            kind::TRAILER => {
                let t = trailer(off, payload)?;
                self.check_trailer(off, &t)?;
                if v2 {
                    let rest = payload.get(format::TRAILER_PAYLOAD_LEN..).unwrap_or(&[]);
                    let t2 = format::decode_trailer_v2(rest).ok_or_else(|| {
                        malformed(
                            off,
                            k,
                            "a 2.x trailer shorter than 92 bytes, or whose pending list runs past it",
                        )
                    })?;
                    if t2.ending > format::ending::SIGNAL {
                        return Err(invalid(off, "trailer.ending", t2.ending as u64));
                    }
                    self.trailer_v2 = Some(t2);
                }
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

    /// What the capture lacks and how it ended; adds the records that only
    /// the live ring holds to `records` (kept sorted by seq).
    fn recover(&mut self, data: &[u8]) -> Ending {
        let mut end = Ending {
            pending_at_destroy: std::mem::take(&mut self.pending_at_destroy),
            ..Ending::default()
        };
        match (&self.trailer, &self.trailer_v2) {
            (Some(_), Some(t2)) => {
                end.kind = Some(if t2.ending == format::ending::SIGNAL {
                    EndKind::Signal(t2.signal)
                } else {
                    EndKind::Finish
                });
                end.pending_at_exit = t2.pending.iter().filter(|p| p.1 > 0).copied().collect();
                end.uncommitted = t2.uncommitted;
            }
            (Some(_), None) => end.kind = Some(EndKind::Finish),
            _ => {}
        }
        let mut boundary = self.trailer_v2.as_ref().map(|t| t.seq_end);
        if let Some((offset, at, len)) = self.ring {
            let region = data.get(at..at + len).unwrap_or(&[]);
            let word = |i: usize| -> u64 {
                region
                    .get(i * 8..i * 8 + 8)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u64::from_le_bytes)
            };
            let info = RingInfo {
                offset,
                capacity: word(hdr::CAPACITY),
                next_seq: word(hdr::NEXT_SEQ),
                consumed: word(hdr::CONSUMED),
                exit_seq: word(hdr::EXIT_SEQ),
                state: word(hdr::STATE),
                signal: word(hdr::SIGNAL),
                discarded: word(hdr::DISCARDED),
                waits: word(hdr::WAITS),
            };
            // What the slots' times are (TSC stamps are scaled as the
            // writer would have).
            let times = ring::SlotTimes::of_header(word);
            let mut found = Vec::new();
            for i in 0..info.capacity {
                let base = ring::HEADER_WORDS + i as usize * ring::SLOT_WORDS;
                let commit = word(base + ring::slot::COMMIT);
                if commit == 0 {
                    continue;
                }
                let seq = commit - 1;
                let (rec, status) = ring::decode_slot(|j| word(base + j));
                if seq % info.capacity != i || status > 1 {
                    end.bad_slots += 1;
                    continue;
                }
                if self.records.binary_search_by_key(&seq, |r| r.seq).is_ok() {
                    continue; // the stream has it
                }
                let class = {
                    use crate::abi::packet_offset as po;
                    let dispatch = crate::abi::PacketType(rec.raw[po::HEADER])
                        == crate::abi::PacketType::KERNEL_DISPATCH;
                    let ka = &rec.raw[po::KERNARG_ADDRESS..po::KERNARG_ADDRESS + 8];
                    if dispatch && ka.iter().any(|&b| b != 0) {
                        // Classified by the writer thread, which never saw
                        // this record: not known to be the shim's.
                        KernargClass::ForeignOpaque
                    } else {
                        KernargClass::Null
                    }
                };
                found.push(CapturedRecord {
                    seq,
                    queue_id: rec.queue_id,
                    packet_index: rec.packet_index,
                    raw: rec.raw,
                    status: rec.status,
                    kernarg_class: class,
                    thread: rec.thread,
                    reasons: rec.reasons,
                    observed_ns: times.to_ns(rec.observed_ns),
                    done_ns: times.to_ns(rec.done_ns),
                    offset: (at + base * 8) as u64,
                    // The arena is not in the file: bytes copied for this
                    // record are gone with the process.
                    kernarg: match super::kernarg::slot_ref::state(word(
                        base + ring::slot::KERNARG_REF,
                    )) {
                        0 => RecordKernarg::None,
                        super::kernarg::slot_ref::UNREADABLE => {
                            super::kernarg::Unreadable::from_u8(
                                word(base + ring::slot::KERNARG_REF) as u8,
                            )
                            .map_or(RecordKernarg::Lost, RecordKernarg::Unreadable)
                        }
                        _ => RecordKernarg::Lost,
                    },
                });
            }
            end.recovered = found.len() as u64;
            if !found.is_empty() {
                self.records.extend(found);
                self.records.sort_unstable_by_key(|r| r.seq);
            }
            end.missing = info
                .next_seq
                .saturating_sub(info.discarded)
                .saturating_sub(self.records.len() as u64);
            if boundary.is_none() && info.exit_seq != 0 {
                boundary = Some(info.exit_seq);
            }
            end.ring = Some(info);
        }
        if let Some(b) = boundary {
            let first_late = self.records.partition_point(|r| r.seq < b);
            let late = &self.records[first_late..];
            end.late_records = late.len() as u64;
            let mut qs: Vec<u64> = late.iter().map(|r| r.queue_id).collect();
            qs.sort_unstable();
            qs.dedup();
            end.late_queues = qs;
        }
        end
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
            ("queues", t.queues as u64, self.queue_frames),
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

/// A PacketBatch record, with its fields' ranges checked.
fn record(
    off: u64,
    f: &format::BatchRecord,
    what: &'static str,
) -> Result<CapturedRecord, CaptureError> {
    let status = match f.status {
        0 => Status::Validated,
        1 => Status::Rejected,
        v => {
            return Err(invalid(
                off,
                if what == "packet_batch" {
                    "packet_batch.status"
                } else {
                    "packet.status"
                },
                v as u64,
            ));
        }
    };
    let kernarg_class = KernargClass::from_u8(f.kernarg_class)
        .ok_or_else(|| invalid(off, "packet_batch.kernarg_class", f.kernarg_class as u64))?;
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
        kernarg: f.kernarg,
    })
}

/// Where a Ring frame's region is: `(frame offset, region's file offset,
/// region length)`, after checking its prefix and static header.
fn ring_region(off: u64, p: &[u8]) -> Result<(u64, usize, usize), CaptureError> {
    let k = kind::RING;
    let mut c = Cursor::new(p);
    let short = || malformed(off, k, "payload shorter than its 8-byte prefix");
    let pad = c.u32().ok_or_else(short)? as usize;
    let _reserved = c.u32().ok_or_else(short)?;
    c.bytes(pad)
        .ok_or_else(|| malformed(off, k, "padding runs past the payload"))?;
    let region = &p[format::RING_PREFIX_LEN + pad..];
    let word = |i: usize| -> u64 {
        region
            .get(i * 8..i * 8 + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    if region.len() < ring::HEADER_BYTES
        || (word(hdr::MAGIC) != ring::RING_MAGIC && word(hdr::MAGIC) != ring::RING_MAGIC_V2)
    {
        return Err(malformed(
            off,
            k,
            "the region does not start with the ring magic",
        ));
    }
    let capacity = word(hdr::CAPACITY);
    let geometry = word(hdr::GEOMETRY);
    if geometry != ring::SLOT_BYTES as u64 | ((ring::HEADER_BYTES as u64) << 32)
        || capacity == 0
        || capacity > (1 << 24)
        || ring::region_bytes(capacity) != region.len() as u64
    {
        return Err(malformed(
            off,
            k,
            "the ring's capacity and slot size do not fill its region",
        ));
    }
    let region_at = off as usize + format::FRAME_HEAD_LEN + format::RING_PREFIX_LEN + pad;
    Ok((off, region_at, region.len()))
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
        kernarg: RecordKernarg::None,
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
