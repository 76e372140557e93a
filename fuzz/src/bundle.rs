//! Any bytes as a fat binary: `bundle::read_with_limits` returns bundles or a
//! typed error, never panics; every device entry it yields lies inside its
//! bundle and goes through the code object reader without panicking. The
//! streaming reader (`bundle::scan_entries`, which `softgpu objects` uses)
//! reads the same bytes: it never panics, hands out only device entries of
//! the declared sizes, and when the whole-bundle reader accepts the input it
//! accepts it too and hands out the same bytes.
//!
//! Random bytes rarely carry a magic, so the first byte picks a mode: the
//! bytes as they are; the bytes behind the plain bundle magic (a bundle
//! header and entry table to mutate); or the bytes as the payload of a
//! compressed bundle (`CCOB`) whose version, method and declared sizes come
//! from the input, which reaches the zlib and zstd decoders and their bounds.
//! Decompression is limited to 16 MiB here (libFuzzer's memory limit is 2 GiB;
//! the CLI's is 1 GiB).

use softgpu_hsa::code_object::bundle::{
    BUNDLE_MAGIC, COMPRESSED_BUNDLE_MAGIC, Limits, Visit, read_with_limits, scan_entries,
};
use softgpu_hsa::code_object::parse;

const LIMITS: Limits = Limits {
    max_entries: 4096,
    max_id_len: 4096,
    max_bundles: 4096,
    max_bundle_size: 64 << 20,
    max_decompressed: 16 << 20,
    max_decompressed_total: 16 << 20,
};

/// What `scan_entries` hands out: per device entry, its bundle's index,
/// its index and its bytes; or `None` when it refuses the input.
fn streamed(bytes: &[u8]) -> Option<Vec<(usize, usize, Vec<u8>)>> {
    let mut bundles: Vec<Vec<softgpu_hsa::code_object::bundle::BundleEntry>> = Vec::new();
    let mut out = Vec::new();
    let r = scan_entries(&bytes, &LIMITS, |v| {
        match v {
            Visit::Bundle(b) => bundles.push(b.entries.clone()),
            Visit::Entry { index, bytes } => {
                let entries = bundles.last().expect("an entry comes after its bundle");
                let e = &entries[index];
                assert!(e.is_device_code(), "only device entries are handed out");
                assert_eq!(bytes.len() as u64, e.size, "an entry's declared size");
                out.push((bundles.len() - 1, index, bytes.to_vec()));
            }
        }
        Ok::<(), ()>(())
    });
    r.ok().map(|_| out)
}

fn exercise(bytes: &[u8]) {
    let streamed = streamed(bytes);
    let Ok(c) = read_with_limits(bytes, &LIMITS) else {
        return;
    };
    let mut whole: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for (bi, b) in c.bundles.iter().enumerate() {
        let mut device: Vec<usize> = (0..b.entries.len())
            .filter(|&i| b.entries[i].is_device_code())
            .collect();
        device.sort_by_key(|&i| b.entries[i].offset);
        whole.extend(
            device
                .into_iter()
                .map(|i| (bi, i, b.entry_bytes(&b.entries[i]).to_vec())),
        );
    }
    assert_eq!(
        streamed.as_ref(),
        Some(&whole),
        "what the whole-bundle reader accepts, the streaming one hands out alike"
    );
    let mut decompressed = 0u64;
    for b in &c.bundles {
        if let Some(comp) = b.compression {
            decompressed += comp.uncompressed_size;
            assert!(comp.uncompressed_size <= LIMITS.max_decompressed);
        } else {
            assert!(b.offset + b.size <= bytes.len() as u64);
        }
        assert!(b.entries.len() as u64 <= LIMITS.max_entries);
        for e in &b.entries {
            let _ = e.parsed_id();
            let data = b.entry_bytes(e);
            assert_eq!(data.len() as u64, e.size, "entry bytes are checked at read");
            if e.is_device_code() {
                if let Ok(co) = parse(data) {
                    let _ = (co.metadata(), co.metadata_error(), co.target_id());
                }
            }
        }
    }
    assert!(
        decompressed <= LIMITS.max_decompressed,
        "the per-file budget holds"
    );
}

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => exercise(rest),
        1 => {
            let mut v = BUNDLE_MAGIC.to_vec();
            v.extend_from_slice(rest);
            exercise(&v);
        }
        _ => {
            // CCOB, then version (1..=3), method (0, 1 or other), then the
            // rest of the header and payload from the input.
            let Some((&vm, rest)) = rest.split_first() else {
                return;
            };
            let mut v = COMPRESSED_BUNDLE_MAGIC.to_vec();
            v.extend_from_slice(&u16::from(1 + vm % 3).to_le_bytes());
            v.extend_from_slice(&u16::from((vm >> 2) % 3).to_le_bytes());
            v.extend_from_slice(rest);
            exercise(&v);
        }
    }
}
