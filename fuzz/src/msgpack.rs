//! Any bytes as NT_AMDGPU_METADATA MessagePack: `msgpack::decode` returns a
//! value tree or a typed error within its depth and count limits, never
//! panics; `Metadata::parse` on the same bytes agrees with it about whether
//! the bytes are MessagePack at all.

use softgpu_hsa::code_object::msgpack::{Value, decode};
use softgpu_hsa::code_object::{MAX_METADATA_DEPTH, Metadata};

fn depth(v: &Value<'_>) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Map(entries) => {
            1 + entries
                .iter()
                .map(|(k, v)| depth(k).max(depth(v)))
                .max()
                .unwrap_or(0)
        }
        _ => 0,
    }
}

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    let decoded = decode(data);
    if let Ok(v) = &decoded {
        assert!(depth(v) <= MAX_METADATA_DEPTH + 1);
        let _ = v.get("amdhsa.kernels");
    }
    let parsed = Metadata::parse(data);
    if decoded.is_err() {
        assert!(
            parsed.is_err(),
            "metadata parsed from bytes that are not MessagePack"
        );
    }
    if let Ok(m) = parsed {
        for k in &m.kernels {
            let _ = m.kernel(&k.symbol);
        }
    }
}
