//! Any bytes as a capture file: the reader must return a capture or an
//! error, never panic, and never allocate without bound. A file of whole,
//! checksummed frames that was not cut never reads as a cut one (only damage
//! at the tail is a cut).
//!
//! Random bytes almost never get past the magic and the frame CRCs, so half
//! of the inputs (first byte odd) are instead read as a list of frames that
//! the target wraps in a valid preamble and valid CRCs, which lets the fuzzer
//! reach the frame decoders: per frame, one byte picks the kind, one byte the
//! payload length (the fixed lengths of the known kinds are favoured), then
//! the payload. A final byte may cut the file short. Bit 1 of the first byte
//! picks the format version (1.1 or 2.0). In 2.0 files the fuzzer can also
//! make a Ring frame (a small, well-formed ring region whose slots it fills:
//! the reader's recovery runs on it) and PacketBatch, QueueEnd and 2.0
//! Trailer frames.
use softgpu_hsa::capture::format;

/// A Ring frame payload with a `capacity`-slot region whose header is valid
/// and whose words after the static header come from `fill`.
fn ring_payload(capacity: u64, fill: &[u8]) -> Vec<u8> {
    use softgpu_hsa::capture::ring;
    let mut p = vec![0u8; format::RING_PREFIX_LEN];
    let region_len = ring::region_bytes(capacity) as usize;
    let mut region = vec![0u8; region_len];
    for (i, b) in fill.iter().enumerate() {
        let at = 24 + i * 7 % (region_len - 24);
        region[at] = *b;
    }
    region[..8].copy_from_slice(&ring::RING_MAGIC.to_le_bytes());
    region[8..16].copy_from_slice(&capacity.to_le_bytes());
    let geometry = ring::SLOT_BYTES as u64 | ((ring::HEADER_BYTES as u64) << 32);
    region[16..24].copy_from_slice(&geometry.to_le_bytes());
    p.extend_from_slice(&region);
    p
}

fn framed(data: &[u8], v2: bool) -> Vec<u8> {
    let mut out = format::preamble().to_vec();
    if !v2 {
        out[8..10].copy_from_slice(&1u16.to_le_bytes());
        out[10..12].copy_from_slice(&1u16.to_le_bytes());
    }
    let mut rest = data;
    let mut take = |n: usize| {
        let n = n.min(rest.len());
        let (a, b) = rest.split_at(n);
        rest = b;
        a
    };
    while let [kind, len, ..] = *take(2) {
        let kind = match kind % 11 {
            0 => format::kind::HEADER,
            1 => format::kind::QUEUE,
            2 => format::kind::PACKET,
            3 => format::kind::CODE_OBJECT,
            4 => format::kind::TRAILER,
            5 => format::kind::KERNEL_INFO,
            6 => 0x0042, // unknown, skippable
            7 => format::kind::RING,
            8 => format::kind::PACKET_BATCH,
            9 => format::kind::QUEUE_END,
            _ => 0x8042, // unknown, critical
        };
        if kind == format::kind::RING {
            let capacity = 1 + u64::from(len % 8);
            let fill = take(usize::from(len));
            format::push_frame(&mut out, kind, &ring_payload(capacity, fill));
            continue;
        }
        let len = match len % 6 {
            0 => format::PACKET_PAYLOAD_LEN,
            1 => format::QUEUE_PAYLOAD_LEN,
            2 => format::TRAILER_PAYLOAD_LEN,
            3 => 4 + format::KERNEL_INFO_ENTRY_LEN * usize::from(len % 3),
            4 => format::TRAILER_V2_FIXED_LEN,
            _ => usize::from(len),
        };
        let payload = take(len);
        format::push_frame(&mut out, kind, payload);
    }
    out
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    match data.split_first() {
        Some((mode, rest)) if mode & 1 == 1 => {
            let mut file = framed(rest, mode & 2 != 0);
            let cut = usize::from(mode >> 2);
            let was_cut = cut > 0 && cut < file.len();
            if was_cut {
                file.truncate(file.len() - cut);
            }
            if let Ok(cap) = softgpu_hsa::capture::read_bytes(&file) {
                assert!(
                    was_cut || cap.truncated_at.is_none(),
                    "whole frames read as a cut at {:?}",
                    cap.truncated_at
                );
            }
        }
        _ => {
            let _ = softgpu_hsa::capture::read_bytes(data);
        }
    }
}
