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
//! the payload. A final byte may cut the file short.

use softgpu_hsa::capture::format;

fn framed(data: &[u8]) -> Vec<u8> {
    let mut out = format::preamble().to_vec();
    let mut rest = data;
    let mut take = |n: usize| {
        let n = n.min(rest.len());
        let (a, b) = rest.split_at(n);
        rest = b;
        a
    };
    while let [kind, len, ..] = *take(2) {
        let kind = match kind % 8 {
            0 => format::kind::HEADER,
            1 => format::kind::QUEUE,
            2 => format::kind::PACKET,
            3 => format::kind::CODE_OBJECT,
            4 => format::kind::TRAILER,
            5 => format::kind::KERNEL_INFO,
            6 => 0x0042, // unknown, skippable
            _ => 0x8042, // unknown, critical
        };
        let len = match len % 5 {
            0 => format::PACKET_PAYLOAD_LEN,
            1 => format::QUEUE_PAYLOAD_LEN,
            2 => format::TRAILER_PAYLOAD_LEN,
            3 => 4 + format::KERNEL_INFO_ENTRY_LEN * usize::from(len % 3),
            _ => usize::from(len),
        };
        let payload = take(len);
        format::push_frame(&mut out, kind, payload);
    }
    out
}

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    match data.split_first() {
        Some((mode, rest)) if mode & 1 == 1 => {
            let mut file = framed(rest);
            let cut = usize::from(mode >> 1);
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
