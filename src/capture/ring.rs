//! The live ring: one multi-producer ring of fixed-size record slots that
//! lives inside the capture file (the Ring frame's region, mapped shared),
//! in safe Rust over `&'static [AtomicU64]`.
//!
//! Region layout, in 64-bit little-endian words (the byte layout is in
//! `docs/CAPTURE_FORMAT.md`, "Ring"):
//!
//! - words `0 .. HEADER_WORDS` (one 4 KiB page): the ring header. Static
//!   fields first (magic, capacity, slot size), then live counters, each group
//!   on its own cache line so producers and the writer do not share one.
//! - then `capacity` slots of [`SLOT_WORDS`] words each.
//!
//! Protocol. A producer takes `seq` with one `fetch_add` on `next_seq`, waits
//! while `seq - consumed >= capacity` (back-pressure: the slot still holds a
//! record the writer has not encoded), then writes slot `seq % capacity`:
//! commit word 0 (relaxed), a release fence, the fields (relaxed), and last
//! the commit word `seq + 1` (release). The writer reads slots in `seq`
//! order: an acquire load of the commit word equal to `seq + 1` means the
//! fields are complete. After it has written the encoded frames to the file
//! it stores `consumed` (release), which frees those slots.
//!
//! Why the commit word is cleared first: the region is the file. A process
//! killed in the middle of a slot write leaves that slot with commit 0, never
//! with an older record's commit over half-new fields, so a reader of the
//! file can trust every slot whose commit word names it (`(commit - 1) %
//! capacity == slot index`), without a checksum.

use std::sync::atomic::{AtomicU64, Ordering, fence};

use super::clock::{Pair, Stamp, TickScale};
use crate::aql::{PacketRecord, ReasonSet, Status};

/// Words per slot (128 bytes): commit, queue_id, packet_index, raw (8),
/// status|thread, reasons, observed_ns, done_ns, kernarg_ref.
pub const SLOT_WORDS: usize = 16;
/// Bytes per slot.
pub const SLOT_BYTES: usize = SLOT_WORDS * 8;
/// Words of the ring header (one 4 KiB page).
pub const HEADER_WORDS: usize = 512;
/// Bytes of the ring header.
pub const HEADER_BYTES: usize = HEADER_WORDS * 8;
/// How many slots ahead of its own a producer prefetches for writing. In a
/// burst (packets about 16 ns apart in `benches/capture_path.rs`) 4 slots
/// ahead was less time than a line takes to arrive from the shared cache:
/// 16 took the burst's processor with capture on from about 29 to about 25
/// ns a packet (5 December, `docs/PERFORMANCE.md`). Between launches (about
/// 1 us apart) any distance is enough.
const PREFETCH_AHEAD: u64 = 16;
/// How many slots ahead of the one it reads the writer prefetches.
const READ_AHEAD: u64 = 8;
/// The ring header's first word: `"SGRING\0\x03"` little-endian (3: the
/// clock words, `hdr::CLOCK` on).
pub const RING_MAGIC: u64 = u64::from_le_bytes(*b"SGRING\0\x03");
/// The magic of version 2 rings (no clock words: slot times are always ns),
/// which readers still accept.
pub const RING_MAGIC_V2: u64 = u64::from_le_bytes(*b"SGRING\0\x02");

/// Word indices in the ring header.
pub mod hdr {
    /// [`super::RING_MAGIC`].
    pub const MAGIC: usize = 0;
    /// Slots in the ring.
    pub const CAPACITY: usize = 1;
    /// `slot_bytes u32 | header_bytes u32 << 32`.
    pub const GEOMETRY: usize = 2;
    /// Next `seq` a producer will take (producers' cache line).
    pub const NEXT_SEQ: usize = 8;
    /// Every `seq` below this has been encoded into frames and written to the
    /// file (the writer's cache line).
    pub const CONSUMED: usize = 16;
    /// File offset where the frame stream currently ends.
    pub const STREAM_END: usize = 17;
    /// Lifecycle of the capture: [`super::state`].
    pub const STATE: usize = 24;
    /// The signal that ended the program (state `SIGNALLED` or later).
    pub const SIGNAL: usize = 25;
    /// `next_seq` when the program's exit began (`finish` or a signal);
    /// records at or above it arrived after. 0 until then.
    pub const EXIT_SEQ: usize = 26;
    /// `next_seq` when the termination signal arrived.
    pub const SIGNAL_SEQ: usize = 27;
    /// Pushes dropped because no writer was left to make room (counted, never silent).
    pub const DISCARDED: usize = 32;
    /// Times a producer found the ring full and waited.
    pub const WAITS: usize = 33;
    /// 3: what a slot's `observed_ns` and `done_ns` hold: 0, CLOCK_MONOTONIC
    /// ns; 1, TSC ticks, which the writer converts (see `super::clock`).
    pub const CLOCK: usize = 40;
    /// 3, TSC stamps: odd while the writer updates the anchor below.
    pub const CLOCK_SEQ: usize = 41;
    /// 3, TSC stamps: the capture's first clock pair (TSC, then ns).
    pub const CLOCK_FIRST_TSC: usize = 42;
    pub const CLOCK_FIRST_NS: usize = 43;
    /// 3, TSC stamps: the writer's current anchor pair (0 until it takes
    /// one): a reader recovering slots scales their stamps from it, at the
    /// rate between the first pair and it, as the writer does.
    pub const CLOCK_ANCHOR_TSC: usize = 44;
    pub const CLOCK_ANCHOR_NS: usize = 45;
}

/// Values of the `state` word.
pub mod state {
    /// The writer is running; no ending has begun.
    pub const LIVE: u64 = 0;
    /// `finish` ran (normal exit): the Trailer is written; records that still
    /// arrive are late.
    pub const FINISHED: u64 = 1;
    /// A termination signal arrived; the writer is finalising.
    pub const SIGNALLED: u64 = 2;
    /// The writer finalised the capture for the signal (Trailer written, synced).
    pub const SIGNAL_DONE: u64 = 3;
}

/// Word indices in a slot.
pub mod slot {
    /// `seq + 1` of the record in the slot; 0 while being written or empty.
    pub const COMMIT: usize = 0;
    pub const QUEUE_ID: usize = 1;
    pub const PACKET_INDEX: usize = 2;
    /// Eight words: the packet's 64 bytes, little-endian.
    pub const RAW: usize = 3;
    /// `status u8 | reserved u24 | thread u32 << 32`.
    pub const STATUS_THREAD: usize = 11;
    pub const REASONS: usize = 12;
    pub const OBSERVED_NS: usize = 13;
    pub const DONE_NS: usize = 14;
    /// 2.1: a reference to the dispatch's kernarg bytes in its queue's
    /// arena (`super::super::kernarg::slot_ref`); 0 = none (always 0 in 2.0).
    pub const KERNARG_REF: usize = 15;
}

/// How a reader of a ring region turns its slots' times into ns (from the
/// header's words, read by `word`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotTimes {
    /// The slots hold ns (version 2, or CLOCK 0).
    Ns,
    /// The slots hold TSC stamps, scaled as the writer did.
    Scaled(TickScale),
    /// The slots hold TSC stamps and the header has no usable anchor (the
    /// writer had not taken one, or died while updating it): their times
    /// are unknown, and read as 0.
    Unknown,
}

impl SlotTimes {
    /// From a region's header words.
    pub fn of_header(word: impl Fn(usize) -> u64) -> SlotTimes {
        if word(hdr::MAGIC) != RING_MAGIC || word(hdr::CLOCK) != Stamp::Tsc.code() {
            return SlotTimes::Ns;
        }
        if word(hdr::CLOCK_SEQ) % 2 == 1 {
            return SlotTimes::Unknown;
        }
        let pair = |t: usize, n: usize| Pair {
            tsc: word(t),
            ns: word(n),
        };
        TickScale::new(
            pair(hdr::CLOCK_FIRST_TSC, hdr::CLOCK_FIRST_NS),
            pair(hdr::CLOCK_ANCHOR_TSC, hdr::CLOCK_ANCHOR_NS),
        )
        .map_or(SlotTimes::Unknown, SlotTimes::Scaled)
    }

    /// A slot time in ns (0 stays 0: no time was taken).
    pub fn to_ns(&self, t: u64) -> u64 {
        match self {
            _ if t == 0 => 0,
            SlotTimes::Ns => t,
            SlotTimes::Scaled(s) => s.to_ns(t),
            SlotTimes::Unknown => 0,
        }
    }
}

/// The region size in bytes for `capacity` slots.
pub fn region_bytes(capacity: u64) -> u64 {
    HEADER_BYTES as u64 + capacity * SLOT_BYTES as u64
}

/// A view of a ring region (in the mapped file, or a copy read back).
#[derive(Clone, Copy, Debug)]
pub struct Ring {
    words: &'static [AtomicU64],
    /// The header page of `words`, as an array: its counters are reached
    /// without a bounds check.
    header: &'static [AtomicU64; HEADER_WORDS],
    capacity: u64,
    /// `capacity - 1` (the capacity is a power of two), so a slot is found
    /// with one `and`.
    mask: u64,
}

impl Ring {
    /// Initialises the static header fields of a fresh, zeroed region of
    /// exactly [`region_bytes`]`(capacity)` bytes. `capacity` must be a power
    /// of two (the writer rounds its option up to one); readers of a file
    /// accept any capacity.
    pub fn init(words: &'static [AtomicU64], capacity: u64) -> Option<Ring> {
        if !capacity.is_power_of_two() || words.len() as u64 * 8 != region_bytes(capacity) {
            return None;
        }
        words[hdr::CAPACITY].store(capacity, Ordering::Relaxed);
        words[hdr::GEOMETRY].store(
            SLOT_BYTES as u64 | ((HEADER_BYTES as u64) << 32),
            Ordering::Relaxed,
        );
        words[hdr::MAGIC].store(RING_MAGIC, Ordering::Release);
        Some(Ring {
            words,
            header: words.first_chunk()?,
            capacity,
            mask: capacity - 1,
        })
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline]
    pub fn word(&self, i: usize) -> &'static AtomicU64 {
        &self.words[i]
    }

    #[inline]
    fn slot_base(&self, seq: u64) -> usize {
        HEADER_WORDS + (seq & self.mask) as usize * SLOT_WORDS
    }

    /// Asks for both cache lines of `seq`'s slot for writing. The address is
    /// computed with wrapping arithmetic and never dereferenced (a prefetch
    /// is only a hint), so this needs no bounds check; it is in the region
    /// anyway, as `slot_base` is for every `seq`.
    #[inline]
    fn prefetch_slot(&self, seq: u64) {
        let p = self.words.as_ptr().wrapping_add(self.slot_base(seq));
        crate::sys::prefetch_addr_for_write(p);
        crate::sys::prefetch_addr_for_write(p.wrapping_add(SLOT_WORDS / 2));
    }

    /// Producer: a hint that the slot of the next `seq` is about to be
    /// written (its two cache lines are prefetched for writing): the seq
    /// counter is read, not taken, so another producer may take that slot;
    /// then the hint was only wasted.
    #[inline]
    pub fn prefetch_next(&self) {
        // The counter's line too: the push takes a seq from it.
        let next = &self.header[hdr::NEXT_SEQ];
        crate::sys::prefetch_for_write(next);
        self.prefetch_slot(next.load(Ordering::Relaxed));
    }

    /// Producer: takes the next `seq`.
    #[inline]
    pub fn take_seq(&self) -> u64 {
        // Relaxed: seq only needs to be unique; the commit word orders the slot.
        self.header[hdr::NEXT_SEQ].fetch_add(1, Ordering::Relaxed)
    }

    /// The writer's position, acquire (pairs with [`Ring::set_consumed`]), so
    /// the writer's reads of the slots below it happen before we overwrite them.
    #[inline]
    pub fn consumed(&self) -> u64 {
        self.header[hdr::CONSUMED].load(Ordering::Acquire)
    }

    /// Writer: every seq below `pos` is encoded and written; frees their slots.
    pub fn set_consumed(&self, pos: u64) {
        self.words[hdr::CONSUMED].store(pos, Ordering::Release);
    }

    /// Creation: how slots are stamped, and (TSC stamps) the first pair.
    pub fn set_clock(&self, stamp: Stamp, first: Pair) {
        self.words[hdr::CLOCK].store(stamp.code(), Ordering::Relaxed);
        self.words[hdr::CLOCK_FIRST_TSC].store(first.tsc, Ordering::Relaxed);
        self.words[hdr::CLOCK_FIRST_NS].store(first.ns, Ordering::Release);
    }

    /// Writer: publishes a new anchor (between two bumps of the sequence
    /// word, so a reader of a file whose writer died mid-update can tell).
    pub fn set_clock_anchor(&self, anchor: Pair) {
        let w = self.words;
        w[hdr::CLOCK_SEQ].fetch_add(1, Ordering::Relaxed);
        fence(Ordering::Release);
        w[hdr::CLOCK_ANCHOR_TSC].store(anchor.tsc, Ordering::Relaxed);
        w[hdr::CLOCK_ANCHOR_NS].store(anchor.ns, Ordering::Relaxed);
        w[hdr::CLOCK_SEQ].fetch_add(1, Ordering::Release);
    }

    /// Producer: writes `rec` into the slot of `seq` and commits it. The
    /// caller has taken `seq` and waited until `seq - consumed < capacity`.
    #[inline]
    pub fn write(&self, seq: u64, rec: &PacketRecord, kernarg_ref: u64) {
        let b = self.slot_base(seq);
        let w = &self.words[b..b + SLOT_WORDS];
        w[slot::COMMIT].store(0, Ordering::Relaxed);
        // Orders the clearing of the commit word before the field stores
        // (for a reader of the file after a kill mid-write; see the module doc).
        fence(Ordering::Release);
        w[slot::QUEUE_ID].store(rec.queue_id, Ordering::Relaxed);
        w[slot::PACKET_INDEX].store(rec.packet_index, Ordering::Relaxed);
        for (i, chunk) in rec.raw.chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            w[slot::RAW + i].store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
        w[slot::STATUS_THREAD].store(
            (rec.status as u64) | ((rec.thread as u64) << 32),
            Ordering::Relaxed,
        );
        w[slot::REASONS].store(rec.reasons.0, Ordering::Relaxed);
        w[slot::OBSERVED_NS].store(rec.observed_ns, Ordering::Relaxed);
        w[slot::DONE_NS].store(rec.done_ns, Ordering::Relaxed);
        w[slot::KERNARG_REF].store(kernarg_ref, Ordering::Relaxed);
        // Release: a reader that acquires the commit sees every field above.
        w[slot::COMMIT].store(seq + 1, Ordering::Release);
        // The slot a few records on, which this producer is likely to write
        // next while it drains a run of packets: its lines are fetched for
        // writing now, so that store does not wait for them.
        self.prefetch_slot(seq + PREFETCH_AHEAD);
    }

    /// Writer: the words of `seq`'s slot ([`slot`] indices), if the slot is
    /// committed for it (acquire: every field is then complete, and stays
    /// so until the writer moves `consumed` past `seq`).
    #[inline]
    pub fn committed(&self, seq: u64) -> Option<&'static [AtomicU64; SLOT_WORDS]> {
        let ahead = self.slot_base(seq + READ_AHEAD);
        if let Some(next) = self.words.get(ahead..ahead + SLOT_WORDS) {
            crate::sys::prefetch_for_read(&next[0]);
            crate::sys::prefetch_for_read(&next[SLOT_WORDS / 2]);
        }
        let b = self.slot_base(seq);
        let w: &'static [AtomicU64; SLOT_WORDS] =
            self.words.get(b..b + SLOT_WORDS)?.try_into().ok()?;
        (w[slot::COMMIT].load(Ordering::Acquire) == seq + 1).then_some(w)
    }

    /// Writer: the record of `seq` and its kernarg reference word, if its
    /// slot is committed for it.
    #[inline]
    pub fn read(&self, seq: u64) -> Option<(PacketRecord, u64)> {
        let b = self.slot_base(seq);
        let w = &self.words[b..b + SLOT_WORDS];
        if w[slot::COMMIT].load(Ordering::Acquire) != seq + 1 {
            return None;
        }
        let word = |i: usize| w[i].load(Ordering::Relaxed);
        Some((decode_slot(word).0, word(slot::KERNARG_REF)))
    }
}

/// A slot's record from its words (`word(i)` for `i` in `0..SLOT_WORDS`),
/// and the raw status byte (the caller checks its range).
pub fn decode_slot(word: impl Fn(usize) -> u64) -> (PacketRecord, u8) {
    let mut raw = [0u8; 64];
    for (i, chunk) in raw.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&word(slot::RAW + i).to_le_bytes());
    }
    let st = word(slot::STATUS_THREAD);
    let status_byte = (st & 0xff) as u8;
    (
        PacketRecord {
            queue_id: word(slot::QUEUE_ID),
            packet_index: word(slot::PACKET_INDEX),
            raw,
            status: if status_byte == 1 {
                Status::Rejected
            } else {
                Status::Validated
            },
            reasons: ReasonSet(word(slot::REASONS)),
            observed_ns: word(slot::OBSERVED_NS),
            done_ns: word(slot::DONE_NS),
            thread: (st >> 32) as u32,
        },
        status_byte,
    )
}
