//! Any 64 bytes: parse+validate and decode must never panic, a parsed packet
//! must re-encode to the same bytes, and a reject must carry a reason.

use softgpu_hsa::aql::{DecodedPacket, parse_supported_packet, parse_supported_packet_with_limit};

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    let mut bytes = [0u8; 64];
    let n = data.len().min(64);
    bytes[..n].copy_from_slice(&data[..n]);
    let limit = data
        .get(64..68)
        .map_or(1024, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));

    let decoded = DecodedPacket::decode(&bytes);
    let _ = parse_supported_packet_with_limit(&bytes, limit);
    match parse_supported_packet(&bytes) {
        Ok(p) => {
            assert_eq!(p.to_bytes(), bytes);
            assert_eq!(p.header(), decoded.header);
        }
        Err(reasons) => {
            assert!(!reasons.is_empty());
            for r in reasons.iter() {
                assert!(!r.code().is_empty());
            }
        }
    }
}
