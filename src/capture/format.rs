//! The on-disk layout: constants, CRC-32 and frame encoding shared by the
//! writer and the reader. The payloads with a layout of their own (Packet of
//! 1.x, PacketBatch, KernelInfo, Trailer, QueueEnd) are encoded and decoded
//! only here. `docs/CAPTURE_FORMAT.md` describes the same bytes in prose; a
//! test checks its Packet table against [`packet::FIELDS`].
//!
//! Everything is little-endian. A file is a 16-byte preamble followed by frames:
//!
//! ```text
//! preamble: magic[8] = "SGCAP\0\r\n", major u16, minor u16, reserved u32 (0)
//! frame:    kind u16, len u32, payload[len], crc32 u32 (over kind, len and payload)
//! ```

/// First eight bytes of every capture. The `\r\n` catches text-mode mangling.
pub const MAGIC: [u8; 8] = *b"SGCAP\0\r\n";
/// Bumped only for changes an older reader cannot survive (see the format doc).
/// 2.0: the live Ring frame, PacketBatch frames instead of Packet frames,
/// QueueEnd frames, a longer Trailer and late frames after it.
pub const FORMAT_MAJOR: u16 = 2;
/// Bumped for additive changes: new skippable frame kinds, fields appended to a payload.
/// 2.1: kernel arguments (KernargBlock and KernelArgs frames, a PacketBatch
/// record extension that references a block).
pub const FORMAT_MINOR: u16 = 1;
/// The oldest major version this reader still reads (1.x: Packet frames).
pub const OLDEST_MAJOR: u16 = 1;
/// Bytes before the first frame.
pub const PREAMBLE_LEN: usize = 16;
/// `kind u16` + `len u32`.
pub const FRAME_HEAD_LEN: usize = 6;
/// The CRC-32 after each payload.
pub const FRAME_CRC_LEN: usize = 4;
/// Largest payload a reader accepts. The writer's largest frame (a code object's
/// symbol table) is kept below this; anything larger is corruption.
pub const MAX_FRAME_LEN: u32 = 16 << 20;

/// Frame kinds. Kinds with [`KIND_CRITICAL`] set must be understood: a reader
/// that does not know one stops with an error. Other unknown kinds are skipped.
pub mod kind {
    pub const HEADER: u16 = 0x8001;
    pub const QUEUE: u16 = 0x8002;
    pub const PACKET: u16 = 0x8003;
    pub const CODE_OBJECT: u16 = 0x0004;
    pub const TRAILER: u16 = 0x8005;
    /// Per-kernel register counts and static sizes (format 1.1; readers of
    /// 1.0 skip it: it is not critical).
    pub const KERNEL_INFO: u16 = 0x0006;
    /// 2.0: the live ring region (second frame; no valid CRC, see the doc).
    pub const RING: u16 = 0x8007;
    /// 2.0: delta-encoded packet records, one CRC per batch.
    pub const PACKET_BATCH: u16 = 0x8008;
    /// 2.0: a queue was destroyed, with how many packets it left pending.
    pub const QUEUE_END: u16 = 0x8009;
    /// 2.1: one distinct kernarg block (or pointer-findings blob), stored once.
    pub const KERNARG_BLOCK: u16 = 0x000A;
    /// 2.1: what decoding a kernel's blocks needs (`.args`, signature, names).
    pub const KERNEL_ARGS: u16 = 0x000B;
}

/// Size of one entry of a KernelInfo frame in this version. A later minor
/// version may lengthen the entries (all entries of a frame stay the same
/// length, `(len - 4) / count`); a reader reads the fields it knows at the
/// start of each entry and skips the rest.
pub const KERNEL_INFO_ENTRY_LEN: usize = 40;

/// Bit 15 of a frame kind: "a reader that does not know this kind must stop".
pub const KIND_CRITICAL: u16 = 0x8000;

/// Payload length of a Packet frame in this version (a minimum for readers:
/// a later minor version may append fields). The layout is [`packet`].
pub const PACKET_PAYLOAD_LEN: usize = 128;
/// Whole Packet frame on disk.
pub const PACKET_FRAME_LEN: usize = FRAME_HEAD_LEN + PACKET_PAYLOAD_LEN + FRAME_CRC_LEN;
/// Fixed payload length of a Queue frame in this version.
pub const QUEUE_PAYLOAD_LEN: usize = 24;
/// Fixed payload length of a Trailer frame in this version.
pub const TRAILER_PAYLOAD_LEN: usize = 64;

/// Largest capture file a reader takes (1 GiB, about 7.7 million records):
/// the reader holds the file and its records in memory, so a bigger one is
/// refused before a byte is read.
pub const MAX_FILE_LEN: u64 = 1 << 30;

/// Every frame kind this version defines, for [`kind_name`] and for telling a
/// real frame from noise after damage (the search after damage never takes
/// a Ring frame for one: its CRC is not a checksum).
pub const KNOWN_KINDS: [u16; 11] = [
    kind::HEADER,
    kind::QUEUE,
    kind::PACKET,
    kind::CODE_OBJECT,
    kind::TRAILER,
    kind::KERNEL_INFO,
    kind::RING,
    kind::PACKET_BATCH,
    kind::QUEUE_END,
    kind::KERNARG_BLOCK,
    kind::KERNEL_ARGS,
];

/// Human name of a frame kind, for error messages.
pub fn kind_name(k: u16) -> &'static str {
    match k {
        kind::HEADER => "header",
        kind::QUEUE => "queue",
        kind::PACKET => "packet",
        kind::CODE_OBJECT => "code_object",
        kind::TRAILER => "trailer",
        kind::KERNEL_INFO => "kernel_info",
        kind::RING => "ring",
        kind::PACKET_BATCH => "packet_batch",
        kind::QUEUE_END => "queue_end",
        kind::KERNARG_BLOCK => "kernarg_block",
        kind::KERNEL_ARGS => "kernel_args",
        _ => "unknown",
    }
}

/// One field of a fixed-layout payload: its name in `docs/CAPTURE_FORMAT.md`,
/// its offset in the payload and its size in bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub size: usize,
}

impl Field {
    const fn new(name: &'static str, offset: usize, size: usize) -> Field {
        Field { name, offset, size }
    }
    /// The byte range of the field in its payload.
    pub const fn range(self) -> core::ops::Range<usize> {
        self.offset..self.offset + self.size
    }
}

/// The Packet frame's payload: the one definition of its layout. The writer's
/// [`encode_packet_frame`] and the reader's [`decode_packet`] use these fields
/// and nothing else, and a test checks the Packet table of
/// `docs/CAPTURE_FORMAT.md` against [`packet::FIELDS`].
pub mod packet {
    use super::Field;

    pub const SEQ: Field = Field::new("seq", 0, 8);
    pub const QUEUE_ID: Field = Field::new("queue_id", 8, 8);
    pub const PACKET_INDEX: Field = Field::new("packet_index", 16, 8);
    pub const RAW: Field = Field::new("raw", 24, 64);
    pub const STATUS: Field = Field::new("status", 88, 1);
    pub const KERNARG_CLASS: Field = Field::new("kernarg_class", 89, 1);
    pub const RESERVED_A: Field = Field::new("reserved", 90, 2);
    pub const THREAD: Field = Field::new("thread", 92, 4);
    pub const REASONS: Field = Field::new("reasons", 96, 8);
    pub const OBSERVED_NS: Field = Field::new("observed_ns", 104, 8);
    pub const DONE_NS: Field = Field::new("done_ns", 112, 8);
    pub const RESERVED_B: Field = Field::new("reserved", 120, 8);

    /// Every field, in payload order.
    pub const FIELDS: [Field; 12] = [
        SEQ,
        QUEUE_ID,
        PACKET_INDEX,
        RAW,
        STATUS,
        KERNARG_CLASS,
        RESERVED_A,
        THREAD,
        REASONS,
        OBSERVED_NS,
        DONE_NS,
        RESERVED_B,
    ];

    // The fields tile the payload: in order, no gap, no overlap, and they end
    // exactly at its length; the 64 raw bytes are a whole AQL packet.
    const _: () = {
        let mut end = 0;
        let mut i = 0;
        while i < FIELDS.len() {
            assert!(FIELDS[i].offset == end);
            end += FIELDS[i].size;
            i += 1;
        }
        assert!(end == super::PACKET_PAYLOAD_LEN);
        assert!(RAW.size == crate::abi::AQL_PACKET_SIZE);
    };
}

/// The fields of one Packet frame, as stored (status and class as raw bytes:
/// the reader checks their range).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PacketFields {
    pub seq: u64,
    pub queue_id: u64,
    pub packet_index: u64,
    pub raw: [u8; 64],
    pub status: u8,
    pub kernarg_class: u8,
    pub thread: u32,
    pub reasons: u64,
    pub observed_ns: u64,
    pub done_ns: u64,
}

/// The whole Packet frame (head, payload, CRC) for one record.
pub fn encode_packet_frame(
    seq: u64,
    rec: &crate::aql::PacketRecord,
    class: super::KernargClass,
) -> [u8; PACKET_FRAME_LEN] {
    let mut f = [0u8; PACKET_FRAME_LEN];
    f[..2].copy_from_slice(&kind::PACKET.to_le_bytes());
    f[2..FRAME_HEAD_LEN].copy_from_slice(&(PACKET_PAYLOAD_LEN as u32).to_le_bytes());
    let p = &mut f[FRAME_HEAD_LEN..FRAME_HEAD_LEN + PACKET_PAYLOAD_LEN];
    p[packet::SEQ.range()].copy_from_slice(&seq.to_le_bytes());
    p[packet::QUEUE_ID.range()].copy_from_slice(&rec.queue_id.to_le_bytes());
    p[packet::PACKET_INDEX.range()].copy_from_slice(&rec.packet_index.to_le_bytes());
    p[packet::RAW.range()].copy_from_slice(&rec.raw);
    p[packet::STATUS.offset] = rec.status as u8;
    p[packet::KERNARG_CLASS.offset] = class as u8;
    p[packet::THREAD.range()].copy_from_slice(&rec.thread.to_le_bytes());
    p[packet::REASONS.range()].copy_from_slice(&rec.reasons.0.to_le_bytes());
    p[packet::OBSERVED_NS.range()].copy_from_slice(&rec.observed_ns.to_le_bytes());
    p[packet::DONE_NS.range()].copy_from_slice(&rec.done_ns.to_le_bytes());
    // Reserved fields stay 0.
    let crc_at = FRAME_HEAD_LEN + PACKET_PAYLOAD_LEN;
    let crc = crc32(&f[..crc_at]);
    f[crc_at..].copy_from_slice(&crc.to_le_bytes());
    f
}

/// The fields of a Packet payload; `None` when it is shorter than
/// [`PACKET_PAYLOAD_LEN`]. Bytes past the fields this version knows are
/// ignored (a later minor version may append fields).
pub fn decode_packet(p: &[u8]) -> Option<PacketFields> {
    let p = p.get(..PACKET_PAYLOAD_LEN)?;
    let u64_of = |f: Field| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&p[f.range()]);
        u64::from_le_bytes(b)
    };
    let mut raw = [0u8; 64];
    raw.copy_from_slice(&p[packet::RAW.range()]);
    let mut thread = [0u8; 4];
    thread.copy_from_slice(&p[packet::THREAD.range()]);
    Some(PacketFields {
        seq: u64_of(packet::SEQ),
        queue_id: u64_of(packet::QUEUE_ID),
        packet_index: u64_of(packet::PACKET_INDEX),
        raw,
        status: p[packet::STATUS.offset],
        kernarg_class: p[packet::KERNARG_CLASS.offset],
        thread: u32::from_le_bytes(thread),
        reasons: u64_of(packet::REASONS),
        observed_ns: u64_of(packet::OBSERVED_NS),
        done_ns: u64_of(packet::DONE_NS),
    })
}

/// One KernelInfo entry, in its on-disk field order (the first
/// [`KERNEL_INFO_ENTRY_LEN`] bytes of each entry).
pub fn encode_kernel_info_entry(p: &mut PayloadBuf, k: &super::KernelMeta) {
    p.u64(k.kernel_object)
        .u32(k.sgpr_count)
        .u32(k.vgpr_count)
        .u32(k.agpr_count)
        .u32(k.group_segment_fixed_size)
        .u32(k.private_segment_fixed_size)
        .u32(k.kernarg_size)
        .u32(k.wavefront_size)
        .u32(k.max_flat_workgroup_size);
}

/// The fields this version knows of one KernelInfo entry; `None` when the
/// entry is shorter than [`KERNEL_INFO_ENTRY_LEN`]. Bytes after them are a
/// later version's and are skipped.
pub fn decode_kernel_info_entry(entry: &[u8]) -> Option<super::KernelMeta> {
    let mut c = Cursor::new(entry.get(..KERNEL_INFO_ENTRY_LEN)?);
    Some(super::KernelMeta {
        kernel_object: c.u64()?,
        sgpr_count: c.u32()?,
        vgpr_count: c.u32()?,
        agpr_count: c.u32()?,
        group_segment_fixed_size: c.u32()?,
        private_segment_fixed_size: c.u32()?,
        kernarg_size: c.u32()?,
        wavefront_size: c.u32()?,
        max_flat_workgroup_size: c.u32()?,
    })
}

/// The 16-byte preamble of this version.
pub fn preamble() -> [u8; PREAMBLE_LEN] {
    let mut p = [0u8; PREAMBLE_LEN];
    p[..8].copy_from_slice(&MAGIC);
    p[8..10].copy_from_slice(&FORMAT_MAJOR.to_le_bytes());
    p[10..12].copy_from_slice(&FORMAT_MINOR.to_le_bytes());
    p
}

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), computed by the
// crc32fast crate (carry-less multiply where the CPU has it): the writer thread
// checksums every frame, and a table-driven CRC was its largest cost.

/// Incremental CRC-32: feed parts with [`Crc32::update`], read with [`Crc32::finish`].
#[derive(Clone, Debug, Default)]
pub struct Crc32(crc32fast::Hasher);

impl Crc32 {
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    pub fn finish(self) -> u32 {
        self.0.finalize()
    }
}

/// CRC-32 of one buffer.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Appends one complete frame (head, payload, CRC) to `out`.
pub fn push_frame(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&kind.to_le_bytes());
    // Payloads come from this crate's encoders, all far below MAX_FRAME_LEN.
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(payload);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Little-endian payload builder for the variable-length frames.
#[derive(Default, Debug)]
pub struct PayloadBuf(pub Vec<u8>);

impl PayloadBuf {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A string as `len u32` + UTF-8 bytes, cut at `max` bytes (on a char boundary).
    pub fn str(&mut self, s: &str, max: usize) -> &mut Self {
        let mut end = s.len().min(max);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let s = &s[..end];
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
}

/// Bounded little-endian cursor over one payload. Every read is checked; a short
/// read returns `None` and the caller turns it into an error naming the field.
#[derive(Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data, pos: 0 }
    }
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    pub fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.bytes(N)?.try_into().ok()
    }
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.array::<1>()?[0])
    }
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    /// A `len u32` + bytes string; `None` if short. UTF-8 is checked by the caller.
    pub fn str_bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.bytes(n)
    }
}

/// Fixed length of the 1.x Trailer payload; the 2.0 Trailer starts with the
/// same 64 bytes and appends [`TRAILER_V2_FIXED_LEN`]` - 64` more, then the
/// pending list.
pub const TRAILER_V2_FIXED_LEN: usize = 92;
/// Minimum payload length of a QueueEnd frame.
pub const QUEUE_END_PAYLOAD_LEN: usize = 24;
/// Bytes of a Ring frame's payload before its zero padding: `pad u32`,
/// `reserved u32`.
pub const RING_PREFIX_LEN: usize = 8;

/// How the program's capture ended, as the Trailer says.
pub mod ending {
    /// `finish` at exit (or an explicit finish).
    pub const FINISH: u32 = 0;
    /// A termination signal (SIGTERM, SIGINT) that SoftGPU's handler caught.
    pub const SIGNAL: u32 = 1;
}

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `v` mapped so small magnitudes of either sign are small unsigned values.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Tag bits of one PacketBatch record (see `docs/CAPTURE_FORMAT.md`).
pub mod tag {
    /// `queue_id` is the previous record's (else a varint follows).
    pub const SAME_QUEUE: u8 = 0x01;
    /// `seq` is the previous record's + 1 (else varint `gap`: seq = prev + 1 + gap).
    pub const NEXT_SEQ: u8 = 0x02;
    /// `packet_index` is the queue's previous + 1 (else zigzag varint of the difference).
    pub const NEXT_INDEX: u8 = 0x04;
    /// `thread` is the previous record's (else varint).
    pub const SAME_THREAD: u8 = 0x08;
    /// status, kernarg class and reasons are the queue's previous (else a
    /// byte `status | class << 4` and a varint of `reasons`).
    pub const SAME_VERDICT: u8 = 0x10;
    /// `observed_ns` is the queue's previous `done_ns` (else zigzag varint of the difference).
    pub const CHAINED_TIME: u8 = 0x20;
    /// `raw` is the queue's previous packet, unchanged (else a diff follows).
    pub const SAME_RAW: u8 = 0x40;
    /// An extension follows: varint length, then bytes a later version defines.
    pub const EXTENSION: u8 = 0x80;
}

/// What the batch coder remembers about the previous record of one queue.
#[derive(Clone, Copy, Debug)]
struct QueuePrev {
    packet_index: u64,
    raw: [u8; 64],
    done_ns: u64,
    verdict: (u8, u64),
}

impl Default for QueuePrev {
    fn default() -> Self {
        QueuePrev {
            packet_index: u64::MAX, // so the first index predicted is 0
            raw: [0; 64],
            done_ns: 0,
            verdict: (0, 0),
        }
    }
}

/// A cheap hasher for queue ids (the batch coder's map; not exposed to input
/// an attacker controls on the writer side, and bounded per batch).
#[derive(Default, Clone, Copy, Debug)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
}

type IdMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<IdHasher>>;

/// One record as a PacketBatch holds it (status and class as raw bytes: the
/// reader checks their range).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BatchRecord {
    pub seq: u64,
    pub queue_id: u64,
    pub packet_index: u64,
    pub raw: [u8; 64],
    pub status: u8,
    pub kernarg_class: u8,
    pub thread: u32,
    pub reasons: u64,
    pub observed_ns: u64,
    pub done_ns: u64,
    /// 2.1: the record's kernarg reference, carried in the extension.
    pub kernarg: super::kernarg::RecordKernarg,
}

/// Longest PacketBatch record: tag, six varints of at most 10 bytes, the
/// verdict byte, a full packet diff (1 + 8 * 9) and an extension (1 + 31).
const RECORD_MAX: usize = 1 + 6 * 10 + 1 + 73 + 32;

/// One record being encoded, on the stack. Bounded: writes past the end
/// are dropped (they cannot happen: see [`RECORD_MAX`]).
struct RecordBuf {
    b: [u8; RECORD_MAX],
    n: usize,
}

impl RecordBuf {
    #[inline]
    fn new() -> Self {
        RecordBuf {
            b: [0; RECORD_MAX],
            n: 0,
        }
    }
    #[inline]
    fn len(&self) -> usize {
        self.n
    }
    #[inline]
    fn byte(&mut self, v: u8) {
        if let Some(x) = self.b.get_mut(self.n) {
            *x = v;
            self.n += 1;
        }
    }
    #[inline]
    fn set(&mut self, at: usize, v: u8) {
        if let Some(x) = self.b.get_mut(at) {
            *x = v;
        }
    }
    #[inline]
    fn bytes(&mut self, v: &[u8]) {
        if let Some(d) = self.b.get_mut(self.n..self.n + v.len()) {
            d.copy_from_slice(v);
            self.n += v.len();
        }
    }
    #[inline]
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }
    #[inline]
    fn as_slice(&self) -> &[u8] {
        &self.b[..self.n.min(RECORD_MAX)]
    }
}

/// Builds PacketBatch frames. Every batch starts from a blank state (no
/// record refers to an earlier frame), so each frame decodes on its own.
#[derive(Debug, Default)]
pub struct BatchEncoder {
    /// The frame being built: head, count, first_seq, records.
    buf: Vec<u8>,
    count: u32,
    prev_seq: u64,
    prev_queue: u64,
    prev_thread: u32,
    /// The current queue's state (the common case: a run of one queue's
    /// records), kept out of the map.
    cur: Option<(u64, QueuePrev)>,
    /// Every other queue seen in this batch.
    queues: IdMap<QueuePrev>,
    /// The last record's kernarg extension bytes (`last_ext_len` of them;
    /// 0: it had none), for [`BatchEncoder::push_next`].
    last_ext: [u8; super::kernarg::EXT_MAX],
    last_ext_len: u8,
}

impl BatchEncoder {
    /// Records in the current batch.
    pub fn len(&self) -> u32 {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Bytes of the current batch so far.
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// Appends one record to the current batch.
    pub fn push(&mut self, r: &BatchRecord) {
        if self.count == 0 {
            self.buf.clear();
            self.buf
                .extend_from_slice(&kind::PACKET_BATCH.to_le_bytes());
            self.buf.extend_from_slice(&[0; 4]); // len, patched by `finish`
            self.buf.extend_from_slice(&[0; 4]); // count, patched by `finish`
            self.buf.extend_from_slice(&r.seq.to_le_bytes());
            self.queues.clear();
            self.cur = None;
            self.prev_seq = r.seq.wrapping_sub(1);
            // The first record names its queue and thread explicitly.
            self.prev_queue = r.queue_id.wrapping_add(1);
            self.prev_thread = r.thread.wrapping_add(1);
        }
        if self.cur.is_none_or(|c| c.0 != r.queue_id) {
            let next = self.queues.remove(&r.queue_id).unwrap_or_default();
            if let Some((id, prev)) = self.cur.replace((r.queue_id, next)) {
                self.queues.insert(id, prev);
            }
        }
        let Some((_, q)) = self.cur.as_mut() else {
            return; // unreachable: set above
        };
        // The record is built on the stack (its longest form is well under
        // RECORD_MAX bytes) and appended in one copy.
        let mut o = RecordBuf::new();
        let mut t = 0u8;
        if r.queue_id == self.prev_queue {
            t |= tag::SAME_QUEUE;
        } else {
            o.varint(r.queue_id);
        }
        if r.seq == self.prev_seq.wrapping_add(1) {
            t |= tag::NEXT_SEQ;
        } else {
            o.varint(r.seq.wrapping_sub(self.prev_seq).wrapping_sub(1));
        }
        let want_index = q.packet_index.wrapping_add(1);
        if r.packet_index == want_index {
            t |= tag::NEXT_INDEX;
        } else {
            o.varint(zigzag(r.packet_index.wrapping_sub(want_index) as i64));
        }
        if r.thread == self.prev_thread {
            t |= tag::SAME_THREAD;
        } else {
            o.varint(r.thread as u64);
        }
        let verdict = (r.status | (r.kernarg_class << 4), r.reasons);
        if verdict == q.verdict {
            t |= tag::SAME_VERDICT;
        } else {
            o.byte(verdict.0);
            o.varint(verdict.1);
        }
        if r.observed_ns == q.done_ns {
            t |= tag::CHAINED_TIME;
        } else {
            o.varint(zigzag(r.observed_ns.wrapping_sub(q.done_ns) as i64));
        }
        o.varint(r.done_ns.wrapping_sub(r.observed_ns));
        let word = |raw: &[u8; 64], w: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&raw[w * 8..w * 8 + 8]);
            u64::from_le_bytes(b)
        };
        let mut x = [0u64; 8];
        let mut words = 0u8;
        for (w, xw) in x.iter_mut().enumerate() {
            *xw = word(&r.raw, w) ^ word(&q.raw, w);
            words |= u8::from(*xw != 0) << w;
        }
        if words == 0 {
            t |= tag::SAME_RAW;
        } else {
            o.byte(words);
            for &xw in x.iter().filter(|&&xw| xw != 0) {
                let mask_at = o.len();
                o.byte(0);
                let mut mask = 0u8;
                let mut rest = xw;
                while rest != 0 {
                    // Bytes in increasing order.
                    let i = rest.trailing_zeros() / 8;
                    mask |= 1 << i;
                    o.byte((xw >> (8 * i)) as u8);
                    rest &= !(0xffu64 << (8 * i));
                }
                o.set(mask_at, mask);
            }
        }
        self.last_ext_len = 0;
        if r.kernarg != super::kernarg::RecordKernarg::None {
            // At most 31 bytes: the length is one varint byte.
            t |= tag::EXTENSION;
            let n = super::kernarg::encode_ext_to(&r.kernarg, &mut self.last_ext);
            o.byte(n as u8);
            o.bytes(&self.last_ext[..n]);
            self.last_ext_len = n as u8;
        }
        self.buf.push(t);
        self.buf.extend_from_slice(o.as_slice());
        *q = QueuePrev {
            packet_index: r.packet_index,
            raw: r.raw,
            done_ns: r.done_ns,
            verdict,
        };
        self.prev_seq = r.seq;
        self.prev_queue = r.queue_id;
        self.prev_thread = r.thread;
        self.count += 1;
    }

    /// Appends the record that follows the batch's last one as a launch
    /// loop's does: the same queue, thread, verdict (status, kernarg class,
    /// reasons) and kernarg extension, the same packet bytes but for the
    /// 8-byte word `word` of `raw` (now `value`), `seq` and `packet_index`
    /// each one past the last record's, and its own times. The caller has
    /// checked all of that against the record it stands for; the bytes
    /// appended are exactly those [`BatchEncoder::push`] writes for it (the
    /// capture writer's fast path; `tests` compare the two). Returns false,
    /// appending nothing, when the batch is empty or `seq` does not follow
    /// its last record, or `word` is not a word of the packet.
    #[inline]
    pub fn push_next(
        &mut self,
        seq: u64,
        word: usize,
        value: u64,
        observed_ns: u64,
        done_ns: u64,
    ) -> bool {
        if self.count == 0 || seq != self.prev_seq.wrapping_add(1) || word >= 8 {
            return false;
        }
        let Some((_, q)) = self.cur.as_mut() else {
            return false;
        };
        // Longest form: tag, two varints, a one-word diff (3 + 8), the
        // extension (1 + 31).
        let mut o = [0u8; 64];
        let mut n = 1;
        let mut t = tag::SAME_QUEUE | tag::NEXT_SEQ | tag::NEXT_INDEX | tag::SAME_THREAD;
        t |= tag::SAME_VERDICT;
        if observed_ns == q.done_ns {
            t |= tag::CHAINED_TIME;
        } else {
            n = varint_at(
                &mut o,
                n,
                zigzag(observed_ns.wrapping_sub(q.done_ns) as i64),
            );
        }
        n = varint_at(&mut o, n, done_ns.wrapping_sub(observed_ns));
        let at = word * 8;
        let mut old = [0u8; 8];
        old.copy_from_slice(&q.raw[at..at + 8]);
        let x = value ^ u64::from_le_bytes(old);
        if x == 0 {
            t |= tag::SAME_RAW;
        } else {
            o[n] = 1 << word;
            let mask_at = n + 1;
            n += 2;
            // Bit i of `mask` for each nonzero byte i of `x`: fold each
            // byte onto its low bit, then gather the eight low bits.
            let mut low = x | (x >> 4);
            low |= low >> 2;
            low |= low >> 1;
            low &= 0x0101_0101_0101_0101;
            let mask = (low.wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8;
            let mut rest = mask;
            while rest != 0 {
                // The differing bytes, in increasing order.
                let i = rest.trailing_zeros();
                o[n] = (x >> (8 * i)) as u8;
                n += 1;
                rest &= rest - 1;
            }
            o[mask_at] = mask;
            q.raw[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        let ext = usize::from(self.last_ext_len);
        if ext > 0 {
            t |= tag::EXTENSION;
            o[n] = ext as u8;
            // The whole array (a fixed-size copy; n is at most 31 here), of
            // which the record keeps `ext` bytes.
            o[n + 1..n + 1 + super::kernarg::EXT_MAX].copy_from_slice(&self.last_ext);
            n += 1 + ext;
        }
        o[0] = t;
        // A fixed-size copy (no call), then the length cut to the record's.
        let len = self.buf.len();
        self.buf.extend_from_slice(&o);
        self.buf.truncate(len + n);
        q.packet_index = q.packet_index.wrapping_add(1);
        q.done_ns = done_ns;
        self.prev_seq = seq;
        self.count += 1;
        true
    }

    /// Closes the current batch and returns the whole frame (head, payload,
    /// CRC); the encoder is then empty. `None` when there is no record.
    pub fn finish(&mut self) -> Option<&[u8]> {
        if self.count == 0 {
            return None;
        }
        let len = (self.buf.len() - FRAME_HEAD_LEN) as u32;
        self.buf[2..6].copy_from_slice(&len.to_le_bytes());
        self.buf[6..10].copy_from_slice(&self.count.to_le_bytes());
        let crc = crc32(&self.buf);
        self.buf.extend_from_slice(&crc.to_le_bytes());
        self.count = 0;
        Some(&self.buf)
    }
}

/// Writes `v` as a varint at `o[n..]` and returns the index after it
/// ([`BatchEncoder::push_next`]'s scratch record, which has room for the
/// longest form); the one- and two-byte forms, a launch loop's usual time
/// gaps, without the loop.
#[inline(always)]
fn varint_at(o: &mut [u8; 64], mut n: usize, mut v: u64) -> usize {
    if v < 0x80 {
        o[n] = v as u8;
        return n + 1;
    }
    if v < 0x4000 {
        o[n] = (v as u8) | 0x80;
        o[n + 1] = (v >> 7) as u8;
        return n + 2;
    }
    while v >= 0x80 {
        o[n] = (v as u8) | 0x80;
        n += 1;
        v >>= 7;
    }
    o[n] = v as u8;
    n + 1
}

/// Why a PacketBatch payload could not be decoded.
pub type BatchError = &'static str;

fn varint(c: &mut Cursor<'_>) -> Result<u64, BatchError> {
    let mut v = 0u64;
    for i in 0..10 {
        let b = c.u8().ok_or("a record runs past the end of the payload")?;
        if i == 9 && b > 1 {
            return Err("a varint overflows 64 bits");
        }
        v |= ((b & 0x7f) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a varint overflows 64 bits")
}

/// Decodes a PacketBatch payload into `out` (appending). Bounded: `count`
/// reserves nothing beyond what the payload could hold (a record takes at
/// least 2 bytes).
pub fn decode_batch(p: &[u8], out: &mut Vec<BatchRecord>) -> Result<(), BatchError> {
    let mut c = Cursor::new(p);
    let short = "payload shorter than 12 bytes";
    let count = c.u32().ok_or(short)?;
    let first_seq = c.u64().ok_or(short)?;
    if count == 0 {
        return Err("a batch of 0 records");
    }
    if count as usize > c.remaining() / 2 {
        return Err("record count larger than the payload can hold");
    }
    out.reserve(count as usize);
    let mut queues: IdMap<QueuePrev> = IdMap::default();
    let mut prev_seq = first_seq.wrapping_sub(1);
    let mut prev_queue = 0u64;
    let mut prev_thread = 0u32;
    for n in 0..count {
        let t = c.u8().ok_or("a record runs past the end of the payload")?;
        let queue_id = if t & tag::SAME_QUEUE != 0 {
            if n == 0 {
                return Err("the first record refers to a previous queue");
            }
            prev_queue
        } else {
            varint(&mut c)?
        };
        let seq = if t & tag::NEXT_SEQ != 0 {
            prev_seq.wrapping_add(1)
        } else {
            prev_seq.wrapping_add(1).wrapping_add(varint(&mut c)?)
        };
        if n == 0 && seq != first_seq {
            return Err("the first record's seq is not the batch's first_seq");
        }
        if n > 0 && seq <= prev_seq {
            return Err("seq does not increase within the batch");
        }
        let q = queues.entry(queue_id).or_default();
        let packet_index = if t & tag::NEXT_INDEX != 0 {
            q.packet_index.wrapping_add(1)
        } else {
            q.packet_index
                .wrapping_add(1)
                .wrapping_add(unzigzag(varint(&mut c)?) as u64)
        };
        let thread = if t & tag::SAME_THREAD != 0 {
            if n == 0 {
                return Err("the first record refers to a previous thread");
            }
            prev_thread
        } else {
            u32::try_from(varint(&mut c)?).map_err(|_| "thread id larger than 32 bits")?
        };
        let verdict = if t & tag::SAME_VERDICT != 0 {
            q.verdict
        } else {
            let b = c.u8().ok_or("a record runs past the end of the payload")?;
            (b, varint(&mut c)?)
        };
        let observed_ns = if t & tag::CHAINED_TIME != 0 {
            q.done_ns
        } else {
            q.done_ns.wrapping_add(unzigzag(varint(&mut c)?) as u64)
        };
        let done_ns = observed_ns.wrapping_add(varint(&mut c)?);
        let mut raw = q.raw;
        if t & tag::SAME_RAW == 0 {
            let words = c.u8().ok_or("a record runs past the end of the payload")?;
            for w in 0..8 {
                if words & (1 << w) == 0 {
                    continue;
                }
                let mask = c.u8().ok_or("a record runs past the end of the payload")?;
                for i in 0..8 {
                    if mask & (1 << i) != 0 {
                        let x = c.u8().ok_or("a record runs past the end of the payload")?;
                        raw[w * 8 + i] ^= x;
                    }
                }
            }
        }
        let mut kernarg = super::kernarg::RecordKernarg::None;
        if t & tag::EXTENSION != 0 {
            let n = varint(&mut c)?;
            let n = usize::try_from(n).map_err(|_| "extension too long")?;
            let ext = c
                .bytes(n)
                .ok_or("an extension runs past the end of the payload")?;
            kernarg = super::kernarg::decode_ext(ext);
        }
        *q = QueuePrev {
            packet_index,
            raw,
            done_ns,
            verdict,
        };
        prev_seq = seq;
        prev_queue = queue_id;
        prev_thread = thread;
        out.push(BatchRecord {
            seq,
            queue_id,
            packet_index,
            raw,
            status: verdict.0 & 0x0f,
            kernarg_class: verdict.0 >> 4,
            thread,
            reasons: verdict.1,
            observed_ns,
            done_ns,
            kernarg,
        });
    }
    if c.remaining() != 0 {
        return Err("bytes after the last record of the batch");
    }
    Ok(())
}

/// What a 2.0 Trailer adds to the 1.x one.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct TrailerV2 {
    /// Every record with a lower seq was encoded before the Trailer.
    pub seq_end: u64,
    /// Seqs handed out before the ending that were not written in time.
    pub uncommitted: u64,
    /// [`ending`].
    pub ending: u32,
    /// The signal, for [`ending::SIGNAL`].
    pub signal: u32,
    /// `(queue_id, packets pending)` for each live queue with packets pending
    /// at the ending (behind an unsatisfied barrier, or not yet published).
    pub pending: Vec<(u64, u64)>,
}

/// The 2.0 Trailer payload: the 1.x fields (`v1`, 64 bytes) then [`TrailerV2`].
pub fn encode_trailer_v2(v1: &[u8], t: &TrailerV2) -> Vec<u8> {
    let mut p = PayloadBuf(v1.to_vec());
    p.u64(t.seq_end)
        .u64(t.uncommitted)
        .u32(t.ending)
        .u32(t.signal)
        .u32(u32::try_from(t.pending.len()).unwrap_or(u32::MAX));
    for &(q, n) in t.pending.iter().take(u32::MAX as usize) {
        p.u64(q).u64(n);
    }
    p.0
}

/// The fields a 2.0 Trailer appends (`rest`: the payload after its first 64
/// bytes). Bounded by the payload's length.
pub fn decode_trailer_v2(rest: &[u8]) -> Option<TrailerV2> {
    let mut c = Cursor::new(rest);
    let seq_end = c.u64()?;
    let uncommitted = c.u64()?;
    let ending = c.u32()?;
    let signal = c.u32()?;
    let n = c.u32()? as usize;
    if n > c.remaining() / 16 {
        return None;
    }
    let mut pending = Vec::with_capacity(n);
    for _ in 0..n {
        pending.push((c.u64()?, c.u64()?));
    }
    Some(TrailerV2 {
        seq_end,
        uncommitted,
        ending,
        signal,
        pending,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let mut inc = Crc32::default();
        inc.update(&long[..13]);
        inc.update(&long[13..]);
        // Bit-by-bit reference, straight from the polynomial.
        let mut bitwise = !0u32;
        for &b in &long {
            bitwise ^= b as u32;
            for _ in 0..8 {
                bitwise = if bitwise & 1 != 0 {
                    0xEDB8_8320 ^ (bitwise >> 1)
                } else {
                    bitwise >> 1
                };
            }
        }
        assert_eq!(inc.finish(), !bitwise);
    }

    /// A launch loop's record `i` after `base`: the kernarg address word
    /// (5) and the times vary as `step` says, the rest stays.
    fn next_record(base: &BatchRecord, i: u64, step: u64) -> BatchRecord {
        let mut r = *base;
        r.seq = base.seq + i;
        r.packet_index = base.packet_index + i;
        let addr = match step % 4 {
            0 => 0x7f00_1234_0000 + i * 0x80,
            1 => 0x7f00_1234_0000,
            2 => 0x7f00_1234_0000 ^ (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & 0xffff_0000_ff00),
            _ => i.wrapping_mul(0x0101_0101_0101_0101),
        };
        r.raw[40..48].copy_from_slice(&addr.to_le_bytes());
        // Steps 6 and 11 have gaps of every varint length (up to 8 bytes).
        let far = if step == 6 || step == 11 {
            1u64 << (i % 50)
        } else {
            0
        };
        let t = 1_000_000 + i * (step % 3 * 700 + 1) + far;
        r.observed_ns = if step % 5 == 0 { base.done_ns + i } else { t };
        r.done_ns = r.observed_ns + (i * step) % 300 + if step == 11 { far } else { 0 };
        r
    }

    #[test]
    fn push_next_writes_the_same_bytes_as_push() {
        use crate::capture::kernarg::RecordKernarg;
        let kernargs = [
            RecordKernarg::None,
            RecordKernarg::Block {
                block: 3,
                findings: Some(700),
                truncated_from: None,
            },
            RecordKernarg::Block {
                block: 90_000,
                findings: None,
                truncated_from: Some(5000),
            },
            RecordKernarg::Unreadable(crate::capture::Unreadable::NotKnownReadable),
        ];
        for (case, &kernarg) in kernargs.iter().enumerate() {
            for step in 0..12u64 {
                let mut raw = [0u8; 64];
                for (i, b) in raw.iter_mut().enumerate() {
                    *b = (i as u8).wrapping_mul(37) ^ step as u8;
                }
                let first = BatchRecord {
                    seq: 1000 + step,
                    queue_id: 0x7f00_0000_1000,
                    packet_index: 55,
                    raw,
                    status: 0,
                    kernarg_class: (case % 3) as u8,
                    thread: 4242,
                    reasons: if step % 2 == 0 { 0 } else { 0x40 },
                    observed_ns: 999_000,
                    done_ns: 999_050,
                    kernarg,
                };
                let (mut full, mut fast) = (BatchEncoder::default(), BatchEncoder::default());
                full.push(&first);
                fast.push(&first);
                let mut records = vec![first];
                for i in 1..200 {
                    let r = next_record(&first, i, step);
                    full.push(&r);
                    let word = u64::from_le_bytes(r.raw[40..48].try_into().unwrap());
                    assert!(fast.push_next(r.seq, 5, word, r.observed_ns, r.done_ns));
                    records.push(r);
                }
                let (a, b) = (
                    full.finish().unwrap().to_vec(),
                    fast.finish().unwrap().to_vec(),
                );
                assert_eq!(a, b, "kernarg case {case}, step {step}");
                let mut back = Vec::new();
                decode_batch(&b[FRAME_HEAD_LEN..b.len() - FRAME_CRC_LEN], &mut back).unwrap();
                assert_eq!(back, records, "kernarg case {case}, step {step}");
            }
        }
    }

    #[test]
    fn push_next_refuses_an_empty_batch_a_gap_and_a_word_outside_the_packet() {
        let mut e = BatchEncoder::default();
        assert!(!e.push_next(0, 5, 1, 2, 3), "nothing to follow");
        let r = BatchRecord {
            seq: 10,
            queue_id: 1,
            packet_index: 0,
            raw: [0; 64],
            status: 0,
            kernarg_class: 0,
            thread: 1,
            reasons: 0,
            observed_ns: 5,
            done_ns: 6,
            kernarg: crate::capture::kernarg::RecordKernarg::None,
        };
        e.push(&r);
        assert!(!e.push_next(12, 5, 1, 7, 8), "seq 11 is missing");
        assert!(!e.push_next(11, 8, 1, 7, 8), "a packet has 8 words");
        assert_eq!(e.len(), 1, "a refused record appends nothing");
        assert!(e.push_next(11, 5, 1, 7, 8));
        assert_eq!(e.len(), 2);
        let frame = e.finish().unwrap().to_vec();
        assert!(!e.push_next(12, 5, 1, 9, 9), "a finished batch is empty");
        let mut back = Vec::new();
        decode_batch(
            &frame[FRAME_HEAD_LEN..frame.len() - FRAME_CRC_LEN],
            &mut back,
        )
        .unwrap();
        assert_eq!(back[1].packet_index, 1);
        assert_eq!(back[1].raw[40], 1);
    }

    #[test]
    fn cursor_reads_are_bounded() {
        let mut c = Cursor::new(&[1, 0, 0, 0, 9]);
        assert_eq!(c.str_bytes(), Some(&[9u8][..]));
        assert_eq!(c.u8(), None);
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xff]);
        assert_eq!(c.str_bytes(), None);
    }
}
