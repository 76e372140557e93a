//! Kernel argument decoding never panics: any signature text through
//! `parameters` and `classify`, any `.args` table (offsets, sizes, kinds)
//! with any block through `decode` and the call text, any bytes as a code
//! object through the DWARF reader, and any allocation answers through the
//! pointer checker.
//!
//! The input is split: the first byte picks how many `.args` entries (up to
//! 16) are built from the following 9-byte records (offset, size, kind), then
//! a text up to the first NUL is the signature, and the rest is the block.
use softgpu_hsa::code_object::{KernelArg, KernelMetadata};
use softgpu_hsa::kernargs::{
    Allocation, AllocationTable, DispatchGeometry, ParameterNames, Sources, check_arguments,
    check_hidden, classify, decode, parameters,
};

const KINDS: &[&str] = &[
    "by_value",
    "global_buffer",
    "dynamic_shared_pointer",
    "hidden_block_count_x",
    "hidden_group_size_y",
    "hidden_remainder_z",
    "hidden_grid_dims",
    "hidden_dynamic_lds_size",
    "hidden_hostcall_buffer",
    "hidden_none",
    "hidden_something_new",
];

struct Table(u64);

impl AllocationTable for Table {
    fn find(&self, address: u64) -> Option<Allocation> {
        (address % 3 == 0).then(|| Allocation {
            id: self.0,
            base: address.wrapping_sub(self.0),
            size: self.0,
            owner: Some(1),
            freed_at: (address % 2 == 0).then_some(5),
        })
    }
    fn preceding(&self, address: u64) -> Option<Allocation> {
        Some(Allocation {
            id: 2,
            base: address / 2,
            size: address / 4,
            owner: None,
            freed_at: None,
        })
    }
    fn accessible(&self, a: &Allocation, agent: u64) -> bool {
        a.owner == Some(agent)
    }
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let _ = ParameterNames::read(data);
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 17);
    let mut args = Vec::new();
    let mut rest = rest;
    for _ in 0..n {
        let Some((rec, tail)) = rest.split_first_chunk::<9>() else {
            break;
        };
        rest = tail;
        args.push(KernelArg {
            offset: u64::from(u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]])) % 4096,
            size: u64::from(u32::from_le_bytes([rec[4], rec[5], rec[6], rec[7]])) % 300,
            value_kind: KINDS[usize::from(rec[8]) % KINDS.len()].into(),
            ..Default::default()
        });
    }
    let (text, block) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let signature = std::str::from_utf8(text).ok();
    if let Some(s) = signature {
        if let Some(params) = parameters(s) {
            for p in &params {
                let _ = classify(p);
            }
        }
    }
    let k = KernelMetadata {
        symbol: "k.kd".into(),
        kernarg_segment_size: block.len() as u64 / 2,
        args,
        ..Default::default()
    };
    let d = decode(
        block,
        &k,
        Sources {
            signature,
            names: None,
        },
    );
    assert_eq!(d.args.len(), k.args.len());
    let _ = d.call_text_plain();
    let _ = check_arguments(&Table(block.len() as u64 + 1), 1, &d);
    let packet = DispatchGeometry {
        dimensions: 3,
        workgroup_size: [block.len() as u16, 0, 1],
        grid_size: [u32::MAX, 7, 0],
        group_segment_size: 12,
    };
    let _ = check_hidden(&d, &packet, 100);
}
