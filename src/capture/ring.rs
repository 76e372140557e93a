//! A bounded single-producer single-consumer ring of fixed-size records, in
//! safe Rust.
//!
//! Each slot is [`SLOT_WORDS`] `AtomicU64` words. The producer fills a slot with
//! relaxed stores and publishes it with a release store of `tail`; the consumer
//! reads `tail` with acquire, reads the slot with relaxed loads and gives the
//! slot back with a release store of `head`, which the producer reads with
//! acquire before overwriting. `head` and `tail` are free-running counters
//! (never wrapped; a slot is `counter % capacity`), so `tail - head` is the fill
//! level without ambiguity between full and empty.
//!
//! One producer at a time: the caller guarantees that successive producing
//! threads are ordered by happens-before (the queue's drain lock does that), so
//! the single-producer argument holds even though the thread changes.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

use crate::aql::{PacketRecord, ReasonSet, Status};

/// Words per slot: seq, queue_id, packet_index, raw (8), status|thread,
/// reasons, observed_ns, done_ns.
pub const SLOT_WORDS: usize = 15;

/// A record as it sits in a slot: the processor's record plus its `seq`.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    pub seq: u64,
    pub rec: PacketRecord,
}

pub struct Ring {
    /// Next slot the consumer will read (written by the consumer only).
    head: CachePadded<AtomicU64>,
    /// Next slot the producer will write (written by the producer only).
    tail: CachePadded<AtomicU64>,
    capacity: u64,
    words: Box<[AtomicU64]>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("head", &self.head.load(Ordering::Relaxed))
            .field("tail", &self.tail.load(Ordering::Relaxed))
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl Ring {
    /// Allocates `capacity` slots (at least 1).
    pub fn new(capacity: usize) -> Ring {
        let capacity = capacity.max(1);
        let words = (0..capacity * SLOT_WORDS)
            .map(|_| AtomicU64::new(0))
            .collect();
        Ring {
            head: CachePadded::new(AtomicU64::new(0)),
            tail: CachePadded::new(AtomicU64::new(0)),
            capacity: capacity as u64,
            words,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Producer: the consumer's position, acquire (pairs with `release_to`), so
    /// the consumer's reads of the slots below it happen before we overwrite them.
    pub fn load_head(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }

    /// Producer: write `slot` at position `tail` and publish it. The caller has
    /// checked `tail - head < capacity` and is the only producer.
    #[inline]
    pub fn write_and_publish(&self, tail: u64, slot: &Slot) {
        let base = (tail % self.capacity) as usize * SLOT_WORDS;
        let w = &self.words[base..base + SLOT_WORDS];
        let r = &slot.rec;
        // Relaxed: the release store of `tail` below publishes all of these.
        w[0].store(slot.seq, Ordering::Relaxed);
        w[1].store(r.queue_id, Ordering::Relaxed);
        w[2].store(r.packet_index, Ordering::Relaxed);
        for (i, chunk) in r.raw.chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            w[3 + i].store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
        w[11].store(
            (r.status as u64) | ((r.thread as u64) << 32),
            Ordering::Relaxed,
        );
        w[12].store(r.reasons.0, Ordering::Relaxed);
        w[13].store(r.observed_ns, Ordering::Relaxed);
        w[14].store(r.done_ns, Ordering::Relaxed);
        // Release: makes the slot's words visible to a consumer that acquires `tail`.
        self.tail.store(tail + 1, Ordering::Release);
    }

    /// Consumer: the producer's position, acquire (pairs with the release in
    /// `write_and_publish`), so every slot below it is fully written.
    pub fn load_tail(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }

    /// Consumer: read the slot at `pos` (which must be below `load_tail()`).
    pub fn read(&self, pos: u64) -> Slot {
        let base = (pos % self.capacity) as usize * SLOT_WORDS;
        let w = &self.words[base..base + SLOT_WORDS];
        let mut raw = [0u8; 64];
        for (i, chunk) in raw.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&w[3 + i].load(Ordering::Relaxed).to_le_bytes());
        }
        let st = w[11].load(Ordering::Relaxed);
        let status = if st & 0xff == Status::Rejected as u64 {
            Status::Rejected
        } else {
            Status::Validated
        };
        Slot {
            seq: w[0].load(Ordering::Relaxed),
            rec: PacketRecord {
                queue_id: w[1].load(Ordering::Relaxed),
                packet_index: w[2].load(Ordering::Relaxed),
                raw,
                status,
                reasons: ReasonSet(w[12].load(Ordering::Relaxed)),
                observed_ns: w[13].load(Ordering::Relaxed),
                done_ns: w[14].load(Ordering::Relaxed),
                thread: (st >> 32) as u32,
            },
        }
    }

    /// Consumer: the consumer's own position (only it writes `head`).
    pub fn consumer_pos(&self) -> u64 {
        self.head.load(Ordering::Relaxed)
    }

    /// Consumer: hand every slot below `pos` back to the producer. Release: our
    /// reads of those slots happen before the producer's next writes to them.
    pub fn release_to(&self, pos: u64) {
        self.head.store(pos, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(i: u64) -> PacketRecord {
        let mut raw = [0u8; 64];
        for (j, b) in raw.iter_mut().enumerate() {
            *b = (i as u8).wrapping_add(j as u8);
        }
        PacketRecord {
            queue_id: 7,
            packet_index: i,
            raw,
            status: if i % 2 == 0 {
                Status::Validated
            } else {
                Status::Rejected
            },
            reasons: ReasonSet(i << 3),
            observed_ns: i * 10,
            done_ns: i * 10 + 1,
            thread: u32::MAX - i as u32,
        }
    }

    #[test]
    fn slots_round_trip_every_field_across_wraparound() {
        let ring = Ring::new(3);
        for i in 0..10u64 {
            ring.write_and_publish(
                i,
                &Slot {
                    seq: 100 + i,
                    rec: rec(i),
                },
            );
            assert_eq!(ring.load_tail(), i + 1);
            let s = ring.read(i);
            assert_eq!(s.seq, 100 + i);
            assert_eq!(s.rec, rec(i));
            ring.release_to(i + 1);
        }
    }
}
