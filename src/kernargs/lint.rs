//! Pointer arguments checked against the runtime's allocations, at launch.
//!
//! Pure: the runtime implements [`AllocationTable`] over what it knows (its
//! own allocations in virtual mode; what passes through the shim in intercept
//! and observe mode), and [`check_pointer`] says what one `global_buffer`
//! argument's address is, as a [`PointerFinding`] with a stable snake_case
//! [`code`](PointerFinding::code). A finding never changes what happens to
//! the packet.

use serde::Serialize;

use super::decode::{ArgValue, DecodedArgs, HiddenKind};

/// What the runtime knows about one allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The runtime's number for it (stable for the process's life).
    pub id: u64,
    pub base: u64,
    pub size: u64,
    /// The agent whose memory it is, or `None` for system memory (host
    /// allocations, registered or locked host memory). Agents are named as
    /// the table's user chooses (the virtual runtime: capture agent indexes,
    /// the position in the capture header's agent list).
    pub owner: Option<u64>,
    /// When it was freed: the runtime's event sequence number. `None` while live.
    pub freed_at: Option<u64>,
}

impl Allocation {
    /// The address one past its last byte (saturating).
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }

    pub fn contains(&self, address: u64) -> bool {
        address >= self.base && address < self.end()
    }
}

/// The runtime's allocation table, as the checker needs it.
pub trait AllocationTable {
    /// The allocation whose `[base, base + size)` holds `address`: a live one
    /// if any (a freed range may have been handed out again), else the most
    /// recently freed one.
    fn find(&self, address: u64) -> Option<Allocation>;

    /// The live allocation with the highest end at or below `address`, for
    /// naming the allocation a pointer lies just past. The default knows none.
    fn preceding(&self, _address: u64) -> Option<Allocation> {
        None
    }

    /// Where the memory that backs a live `allocation` ends: past its size by
    /// the table's rounding (the bytes up to there belong to no other
    /// allocation and no other memory). The default: its size exactly.
    fn backed_end(&self, allocation: &Allocation) -> u64 {
        allocation.end()
    }

    /// Whether `agent` may access `allocation` (its own memory, or access
    /// granted with `hsa_amd_agents_allow_access`, or system memory that is
    /// registered, locked or allocated from a fine-grained pool).
    fn accessible(&self, allocation: &Allocation, agent: u64) -> bool;

    /// Whether `address` is host memory of the process (heap, stack, a
    /// mapping) that was never registered or locked. The default cannot tell.
    fn pageable_host(&self, _address: u64) -> bool {
        false
    }
}

/// What a pointer argument's address is. Every variant has a stable
/// [`code`](Self::code); all but [`PointerFinding::InAllocation`] and
/// [`PointerFinding::Null`] report a problem ([`is_problem`](Self::is_problem)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum PointerFinding {
    /// Inside a live allocation the agent may access: which, at what offset,
    /// how many bytes remain from the address to its end.
    #[serde(rename = "pointer_in_allocation")]
    InAllocation {
        allocation: u64,
        offset: u64,
        remaining: u64,
    },
    /// The null pointer.
    #[serde(rename = "pointer_null")]
    Null,
    /// Inside an allocation that was freed (use after free), and when.
    #[serde(rename = "pointer_use_after_free")]
    UseAfterFree {
        allocation: u64,
        offset: u64,
        freed_at: u64,
    },
    /// At or past the end of a live allocation, within its size again: a
    /// pointer off the end of an array (`past` bytes past its end).
    #[serde(rename = "pointer_past_end")]
    PastEnd {
        allocation: u64,
        size: u64,
        past: u64,
    },
    /// Pageable host memory that was never registered or locked.
    #[serde(rename = "pointer_pageable_host")]
    PageableHost,
    /// Memory of another agent (`owner`, or system memory when `None`) to
    /// which the dispatching agent was not granted access.
    #[serde(rename = "pointer_no_access")]
    NoAccess {
        allocation: u64,
        offset: u64,
        owner: Option<u64>,
        agent: u64,
    },
    /// Nothing the runtime knows.
    #[serde(rename = "pointer_unknown")]
    Unknown,
}

impl PointerFinding {
    /// Every code, in the order of the variants.
    pub const CODES: [&'static str; 7] = [
        "pointer_in_allocation",
        "pointer_null",
        "pointer_use_after_free",
        "pointer_past_end",
        "pointer_pageable_host",
        "pointer_no_access",
        "pointer_unknown",
    ];

    /// The stable snake_case reason code.
    pub fn code(&self) -> &'static str {
        match self {
            PointerFinding::InAllocation { .. } => "pointer_in_allocation",
            PointerFinding::Null => "pointer_null",
            PointerFinding::UseAfterFree { .. } => "pointer_use_after_free",
            PointerFinding::PastEnd { .. } => "pointer_past_end",
            PointerFinding::PageableHost => "pointer_pageable_host",
            PointerFinding::NoAccess { .. } => "pointer_no_access",
            PointerFinding::Unknown => "pointer_unknown",
        }
    }

    /// Whether the finding reports a problem: all but `pointer_in_allocation`
    /// and `pointer_null`. A null argument is recorded but is no problem at
    /// launch: it is how kernels take optional buffers (HIP's own blits,
    /// rocFFT, rocBLAS, rocPRIM and Tensile kernels all pass null for buffers
    /// a launch does not use), and only dereferencing it would be a bug, which
    /// a check at launch cannot see.
    pub fn is_problem(&self) -> bool {
        !matches!(
            self,
            PointerFinding::InAllocation { .. } | PointerFinding::Null
        )
    }

    /// Short text for a call rendering: `(alloc 3 +0 of 4000 B)`,
    /// `(null)`, `(freed alloc 3 +16, freed at #42)`, ...
    pub fn annotation(&self, table_size: impl Fn(u64) -> Option<u64>) -> String {
        match self {
            PointerFinding::InAllocation {
                allocation,
                offset,
                remaining,
            } => {
                let size = table_size(*allocation).unwrap_or(offset + remaining);
                format!("(alloc {allocation} +{offset} of {size} B)")
            }
            PointerFinding::Null => "(null)".into(),
            PointerFinding::UseAfterFree {
                allocation,
                offset,
                freed_at,
            } => format!("(freed alloc {allocation} +{offset}, freed at #{freed_at})"),
            PointerFinding::PastEnd {
                allocation,
                size,
                past,
            } => format!("({past} B past the end of alloc {allocation} of {size} B)"),
            PointerFinding::PageableHost => "(pageable host memory, not registered)".into(),
            PointerFinding::NoAccess {
                allocation, owner, ..
            } => match owner {
                Some(o) => format!("(alloc {allocation} of agent {o}, no access granted)"),
                None => format!("(alloc {allocation}, system memory, no access granted)"),
            },
            PointerFinding::Unknown => "(unknown)".into(),
        }
    }
}

/// What `address`, passed to a kernel dispatched on `agent`, is.
///
/// In order: null; inside an allocation (live: accessible or not; else
/// freed); past the end of a live allocation but inside the memory that
/// backs it ([`AllocationTable::backed_end`]); pageable host memory; past the
/// end of a live allocation, within its size again; unknown. (Pageable host
/// memory wins over a far past-the-end guess: where device memory is host
/// memory, as in the virtual runtime, the program's heap lies between device
/// allocations.)
pub fn check_pointer<T: AllocationTable + ?Sized>(
    table: &T,
    agent: u64,
    address: u64,
) -> PointerFinding {
    if address == 0 {
        return PointerFinding::Null;
    }
    if let Some(a) = table.find(address).filter(|a| a.contains(address)) {
        let offset = address - a.base;
        return match a.freed_at {
            Some(freed_at) => PointerFinding::UseAfterFree {
                allocation: a.id,
                offset,
                freed_at,
            },
            None if !table.accessible(&a, agent) => PointerFinding::NoAccess {
                allocation: a.id,
                offset,
                owner: a.owner,
                agent,
            },
            None => PointerFinding::InAllocation {
                allocation: a.id,
                offset,
                remaining: a.end() - address,
            },
        };
    }
    let mut past_end = None;
    if let Some(a) = table
        .preceding(address)
        .filter(|a| a.freed_at.is_none() && a.size > 0 && address >= a.end())
    {
        let past = address - a.end();
        let finding = PointerFinding::PastEnd {
            allocation: a.id,
            size: a.size,
            past,
        };
        if address < table.backed_end(&a) {
            return finding;
        }
        if past < a.size {
            past_end = Some(finding);
        }
    }
    if table.pageable_host(address) {
        return PointerFinding::PageableHost;
    }
    past_end.unwrap_or(PointerFinding::Unknown)
}

/// A finding about one argument of a decoded block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArgFinding {
    /// The argument's position in `.args`.
    pub index: usize,
    pub address: u64,
    #[serde(flatten)]
    pub finding: PointerFinding,
}

/// Pointee types that hold nothing: a pointer to one is a placeholder the
/// kernel never reads or writes through, whatever its value. rocPRIM's
/// `empty_type` marks "no values" (a keys-only sort); rocPRIM computes such
/// pointers as null plus an element offset, so they hold small addresses
/// nothing maps. Matched on the decoded type text, qualifiers aside.
pub const EMPTY_POINTEES: [&str; 1] = ["rocprim::empty_type"];

/// Whether `type_text` is a pointer to one of [`EMPTY_POINTEES`].
pub fn points_to_nothing(type_text: &str) -> bool {
    let Some(pointee) = type_text.trim().strip_suffix('*') else {
        return false;
    };
    let pointee = pointee
        .split_whitespace()
        .filter(|w| *w != "const" && *w != "volatile")
        .collect::<Vec<_>>()
        .join(" ");
    EMPTY_POINTEES.contains(&pointee.as_str())
}

/// Checks every `global_buffer` argument of a decoded block whose value is
/// an address, in argument order; pointers to an empty type
/// ([`points_to_nothing`]) are placeholders, not checked.
pub fn check_arguments<T: AllocationTable + ?Sized>(
    table: &T,
    agent: u64,
    args: &DecodedArgs,
) -> Vec<ArgFinding> {
    args.args
        .iter()
        .filter(|a| a.kind == "global_buffer")
        .filter(|a| !a.type_text.as_deref().is_some_and(points_to_nothing))
        .filter_map(|a| match a.value {
            ArgValue::Pointer(address) => Some(ArgFinding {
                index: a.index,
                address,
                finding: check_pointer(table, agent, address),
            }),
            _ => None,
        })
        .collect()
}

/// The packet fields the hidden arguments are checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchGeometry {
    /// `setup` dimensions (1 to 3).
    pub dimensions: u16,
    pub workgroup_size: [u16; 3],
    pub grid_size: [u32; 3],
    /// The packet's `group_segment_size` (static plus dynamic LDS).
    pub group_segment_size: u32,
}

/// A hidden argument whose value is not what the packet implies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "code", rename = "hidden_arg_mismatch")]
pub struct HiddenMismatch {
    /// The argument's position in `.args`.
    pub index: usize,
    /// Its `.value_kind`.
    pub kind: &'static str,
    /// What the block holds.
    pub value: u64,
    /// What the packet implies.
    pub expected: u64,
}

impl HiddenMismatch {
    /// The stable reason code.
    pub const CODE: &'static str = "hidden_arg_mismatch";
}

/// What the packet implies for a hidden argument, as the HIP runtime fills
/// them in (ROCclr): block count `grid / workgroup` (rounded down), group
/// size the workgroup size, remainder `grid % workgroup`, grid dims the
/// packet's dimensions, dynamic LDS the packet's group segment size less the
/// kernel's fixed group segment size. `None` for kinds the packet does not
/// determine, a zero workgroup size (the packet is invalid), and a packet
/// group segment smaller than the kernel's fixed size.
pub fn expected_hidden(
    kind: HiddenKind,
    packet: &DispatchGeometry,
    group_segment_fixed_size: u64,
) -> Option<u64> {
    let dim = |i: usize| {
        let wg = u64::from(packet.workgroup_size[i]);
        let grid = u64::from(packet.grid_size[i]);
        (wg != 0).then_some((grid, wg))
    };
    Some(match kind {
        HiddenKind::BlockCountX => dim(0).map(|(g, w)| g / w)?,
        HiddenKind::BlockCountY => dim(1).map(|(g, w)| g / w)?,
        HiddenKind::BlockCountZ => dim(2).map(|(g, w)| g / w)?,
        HiddenKind::GroupSizeX => u64::from(packet.workgroup_size[0]),
        HiddenKind::GroupSizeY => u64::from(packet.workgroup_size[1]),
        HiddenKind::GroupSizeZ => u64::from(packet.workgroup_size[2]),
        HiddenKind::RemainderX => dim(0).map(|(g, w)| g % w)?,
        HiddenKind::RemainderY => dim(1).map(|(g, w)| g % w)?,
        HiddenKind::RemainderZ => dim(2).map(|(g, w)| g % w)?,
        HiddenKind::GridDims => u64::from(packet.dimensions),
        HiddenKind::DynamicLdsSize => {
            u64::from(packet.group_segment_size).checked_sub(group_segment_fixed_size)?
        }
        _ => return None,
    })
}

/// Checks the hidden arguments of a decoded block against the packet:
/// every argument whose kind [`expected_hidden`] determines and whose value
/// the block holds. `hidden_dynamic_lds_size` is not checked for a kernel
/// with OpenCL `local` pointer arguments (`dynamic_shared_pointer`): the
/// packet's group segment then also holds the buffers the runtime placed for
/// them (ROCclr adds them to the static size and writes only HIP's dynamic
/// shared memory, 0 for OpenCL, into the hidden argument), and the block
/// records where each starts but not its size.
pub fn check_hidden(
    args: &DecodedArgs,
    packet: &DispatchGeometry,
    group_segment_fixed_size: u64,
) -> Vec<HiddenMismatch> {
    let lds_arguments = args.args.iter().any(|a| a.kind == "dynamic_shared_pointer");
    let mut out = Vec::new();
    for a in &args.args {
        let Some(kind) = HiddenKind::from_value_kind(&a.kind) else {
            continue;
        };
        if kind == HiddenKind::DynamicLdsSize && lds_arguments {
            continue;
        }
        let (Some(value), Some(expected)) = (
            a.value.as_u64(),
            expected_hidden(kind, packet, group_segment_fixed_size),
        ) else {
            continue;
        };
        // The block holds the argument truncated to its size.
        let mask = match a.size {
            8.. => u64::MAX,
            n => (1u64 << (8 * n)) - 1,
        };
        if value != expected & mask {
            out.push(HiddenMismatch {
                index: a.index,
                kind: kind.value_kind(),
                value,
                expected,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory table: allocations in creation order; host ranges that
    /// are pageable; (allocation, agent) access grants.
    #[derive(Default)]
    struct Table {
        allocations: Vec<Allocation>,
        pageable: Vec<(u64, u64)>,
        grants: Vec<(u64, u64)>,
    }

    impl AllocationTable for Table {
        fn find(&self, address: u64) -> Option<Allocation> {
            let mut hits = self.allocations.iter().filter(|a| a.contains(address));
            let all: Vec<&Allocation> = hits.by_ref().collect();
            all.iter()
                .find(|a| a.freed_at.is_none())
                .or_else(|| all.iter().max_by_key(|a| a.freed_at))
                .map(|a| (*a).clone())
        }
        fn preceding(&self, address: u64) -> Option<Allocation> {
            self.allocations
                .iter()
                .filter(|a| a.freed_at.is_none() && a.end() <= address)
                .max_by_key(|a| a.end())
                .cloned()
        }
        fn accessible(&self, a: &Allocation, agent: u64) -> bool {
            a.owner == Some(agent) || self.grants.contains(&(a.id, agent))
        }
        fn pageable_host(&self, address: u64) -> bool {
            self.pageable
                .iter()
                .any(|&(b, s)| address >= b && address < b + s)
        }
    }

    const GPU: u64 = 0x100;
    const OTHER: u64 = 0x200;

    fn alloc(id: u64, base: u64, size: u64, owner: u64, freed_at: Option<u64>) -> Allocation {
        Allocation {
            id,
            base,
            size,
            owner: Some(owner),
            freed_at,
        }
    }

    fn table() -> Table {
        Table {
            allocations: vec![
                alloc(1, 0x1000, 0x100, GPU, Some(7)),
                alloc(3, 0x7f00_0000_1000, 4000, GPU, None),
                alloc(4, 0x9000, 64, OTHER, None),
                alloc(5, 0xa000, 64, OTHER, None),
            ],
            pageable: vec![(0x5555_0000, 0x1000)],
            grants: vec![(5, GPU)],
        }
    }

    #[test]
    fn each_kind_of_address_gets_its_finding() {
        let t = table();
        let c = |addr| check_pointer(&t, GPU, addr);
        assert_eq!(
            c(0x7f00_0000_1000),
            PointerFinding::InAllocation {
                allocation: 3,
                offset: 0,
                remaining: 4000
            }
        );
        assert_eq!(
            c(0x7f00_0000_1000 + 3999),
            PointerFinding::InAllocation {
                allocation: 3,
                offset: 3999,
                remaining: 1
            }
        );
        assert_eq!(c(0), PointerFinding::Null);
        assert_eq!(
            c(0x1010),
            PointerFinding::UseAfterFree {
                allocation: 1,
                offset: 16,
                freed_at: 7
            }
        );
        assert_eq!(
            c(0x7f00_0000_1000 + 4000),
            PointerFinding::PastEnd {
                allocation: 3,
                size: 4000,
                past: 0
            }
        );
        assert_eq!(c(0x7f00_0000_1000 + 8000), PointerFinding::Unknown);
        assert_eq!(c(0x5555_0010), PointerFinding::PageableHost);
        assert_eq!(
            c(0x9008),
            PointerFinding::NoAccess {
                allocation: 4,
                offset: 8,
                owner: Some(OTHER),
                agent: GPU
            }
        );
        assert!(!c(0xa000).is_problem(), "access was granted");
        assert_eq!(c(0xdead_0000_0000), PointerFinding::Unknown);
    }

    #[test]
    fn null_is_recorded_but_is_no_problem_and_empty_type_pointers_are_placeholders() {
        assert!(!PointerFinding::Null.is_problem());
        assert!(PointerFinding::Unknown.is_problem());
        assert!(PointerFinding::PageableHost.is_problem());
        assert!(points_to_nothing("rocprim::empty_type*"));
        assert!(points_to_nothing("rocprim::empty_type const *"));
        assert!(points_to_nothing("const rocprim::empty_type*"));
        assert!(!points_to_nothing("rocprim::empty_type"));
        assert!(!points_to_nothing("rocprim::empty_type**"));
        assert!(!points_to_nothing("float*"));
    }

    #[test]
    fn pageable_host_memory_wins_over_a_far_past_the_end_guess_but_not_over_the_padding() {
        struct Padded(Table);
        impl AllocationTable for Padded {
            fn find(&self, a: u64) -> Option<Allocation> {
                self.0.find(a)
            }
            fn preceding(&self, a: u64) -> Option<Allocation> {
                self.0.preceding(a)
            }
            fn accessible(&self, a: &Allocation, agent: u64) -> bool {
                self.0.accessible(a, agent)
            }
            fn pageable_host(&self, a: u64) -> bool {
                self.0.pageable_host(a)
            }
            fn backed_end(&self, a: &Allocation) -> u64 {
                a.base + a.size.next_multiple_of(4096)
            }
        }
        let mut t = table();
        // Host memory mapped right after allocation 3 (4000 bytes, backed to 4096).
        t.pageable = vec![(0x7f00_0000_1000, 0x10000)];
        let t = Padded(t);
        let base = 0x7f00_0000_1000u64;
        assert!(matches!(
            check_pointer(&t, GPU, base + 4000),
            PointerFinding::PastEnd { past: 0, .. }
        ));
        assert!(matches!(
            check_pointer(&t, GPU, base + 4095),
            PointerFinding::PastEnd { past: 95, .. }
        ));
        assert_eq!(
            check_pointer(&t, GPU, base + 4096),
            PointerFinding::PageableHost
        );
    }

    #[test]
    fn a_live_allocation_reusing_a_freed_range_wins() {
        let mut t = table();
        t.allocations.push(alloc(9, 0x1000, 0x100, GPU, None));
        assert_eq!(
            check_pointer(&t, GPU, 0x1000),
            PointerFinding::InAllocation {
                allocation: 9,
                offset: 0,
                remaining: 0x100
            }
        );
    }

    #[test]
    fn a_table_with_only_the_required_methods_still_checks() {
        struct Minimal;
        impl AllocationTable for Minimal {
            fn find(&self, a: u64) -> Option<Allocation> {
                // A table that answers for the wrong range is not believed.
                Some(alloc(1, a + 1, 8, GPU, None))
            }
            fn accessible(&self, _: &Allocation, _: u64) -> bool {
                true
            }
        }
        assert_eq!(check_pointer(&Minimal, GPU, 16), PointerFinding::Unknown);
        let dyn_table: &dyn AllocationTable = &Minimal;
        assert_eq!(check_pointer(dyn_table, GPU, 0), PointerFinding::Null);
    }

    #[test]
    fn codes_are_stable_snake_case_and_serialise_as_the_code_field() {
        let all = [
            PointerFinding::InAllocation {
                allocation: 1,
                offset: 2,
                remaining: 3,
            },
            PointerFinding::Null,
            PointerFinding::UseAfterFree {
                allocation: 1,
                offset: 0,
                freed_at: 9,
            },
            PointerFinding::PastEnd {
                allocation: 1,
                size: 4,
                past: 0,
            },
            PointerFinding::PageableHost,
            PointerFinding::NoAccess {
                allocation: 1,
                offset: 0,
                owner: None,
                agent: 2,
            },
            PointerFinding::Unknown,
        ];
        for (f, code) in all.iter().zip(PointerFinding::CODES) {
            assert_eq!(f.code(), code);
            let v = serde_json::to_value(f).unwrap();
            assert_eq!(v["code"], code, "{v}");
        }
        assert_eq!(
            serde_json::to_value(&all[2]).unwrap(),
            serde_json::json!({"code": "pointer_use_after_free", "allocation": 1,
                "offset": 0, "freed_at": 9})
        );
        assert_eq!(all[0].annotation(|_| Some(4000)), "(alloc 1 +2 of 4000 B)");
    }

    #[test]
    fn the_global_buffer_arguments_of_a_decoded_block_are_checked() {
        use crate::code_object::{KernelArg, KernelMetadata};
        use crate::kernargs::decode::{Sources, decode};
        let arg = |offset, kind: &str| KernelArg {
            offset,
            size: 8,
            value_kind: kind.into(),
            ..Default::default()
        };
        let k = KernelMetadata {
            symbol: "k.kd".into(),
            kernarg_segment_size: 32,
            args: vec![
                arg(0, "global_buffer"),
                arg(8, "by_value"),
                arg(16, "global_buffer"),
                arg(24, "hidden_printf_buffer"),
            ],
            ..Default::default()
        };
        let mut b = vec![0u8; 32];
        b[0..8].copy_from_slice(&0x7f00_0000_1010u64.to_le_bytes());
        b[8..16].copy_from_slice(&0x1010u64.to_le_bytes());
        b[16..24].copy_from_slice(&0x1010u64.to_le_bytes());
        b[24..32].copy_from_slice(&0x1010u64.to_le_bytes());
        let d = decode(&b, &k, Sources::default());
        let f = check_arguments(&table(), GPU, &d);
        let codes: Vec<(usize, &str)> = f.iter().map(|f| (f.index, f.finding.code())).collect();
        assert_eq!(
            codes,
            [(0, "pointer_in_allocation"), (2, "pointer_use_after_free")]
        );
        assert_eq!(
            serde_json::to_value(&f[1]).unwrap(),
            serde_json::json!({"index": 2, "address": 0x1010, "code": "pointer_use_after_free",
                "allocation": 1, "offset": 16, "freed_at": 7})
        );
    }

    #[test]
    fn hidden_arguments_are_checked_against_the_packet() {
        use crate::code_object::{KernelArg, KernelMetadata};
        use crate::kernargs::decode::{Sources, decode};
        let kinds = [
            ("hidden_block_count_x", 4),
            ("hidden_block_count_y", 4),
            ("hidden_block_count_z", 4),
            ("hidden_group_size_x", 2),
            ("hidden_group_size_y", 2),
            ("hidden_group_size_z", 2),
            ("hidden_remainder_x", 2),
            ("hidden_remainder_y", 2),
            ("hidden_remainder_z", 2),
            ("hidden_grid_dims", 2),
            ("hidden_dynamic_lds_size", 4),
            ("hidden_global_offset_x", 8),
        ];
        let mut args = Vec::new();
        let mut offset = 0;
        for (kind, size) in kinds {
            args.push(KernelArg {
                offset,
                size,
                value_kind: kind.into(),
                ..Default::default()
            });
            offset += size;
        }
        let k = KernelMetadata {
            symbol: "k.kd".into(),
            kernarg_segment_size: offset,
            group_segment_fixed_size: 1024,
            args,
            ..Default::default()
        };
        // Grid 1000 x 1 x 1 in groups of 256: 3 full blocks, a remainder of 232.
        let packet = DispatchGeometry {
            dimensions: 1,
            workgroup_size: [256, 1, 1],
            grid_size: [1000, 1, 1],
            group_segment_size: 1024 + 512,
        };
        let values: [u64; 12] = [3, 1, 1, 256, 1, 1, 232, 0, 0, 1, 512, 0];
        let mut block = Vec::new();
        for ((_, size), v) in kinds.iter().zip(values) {
            block.extend_from_slice(&v.to_le_bytes()[..*size as usize]);
        }
        let d = decode(&block, &k, Sources::default());
        assert_eq!(check_hidden(&d, &packet, 1024), []);
        // A block count that does not cover the grid, and a wrong dimension count.
        block[0] = 4;
        block[24] = 2; // hidden_grid_dims: after 3 four-byte and 6 two-byte arguments
        let d = decode(&block, &k, Sources::default());
        assert_eq!(
            check_hidden(&d, &packet, 1024),
            [
                HiddenMismatch {
                    index: 0,
                    kind: "hidden_block_count_x",
                    value: 4,
                    expected: 3
                },
                HiddenMismatch {
                    index: 9,
                    kind: "hidden_grid_dims",
                    value: 2,
                    expected: 1
                },
            ]
        );
        assert_eq!(
            serde_json::to_value(check_hidden(&d, &packet, 1024)[1].clone()).unwrap(),
            serde_json::json!({"code": "hidden_arg_mismatch", "index": 9,
                "kind": "hidden_grid_dims", "value": 2, "expected": 1})
        );
        // A packet the kernel's fixed LDS does not fit, and a zero workgroup:
        // nothing to compare against, no finding.
        let odd = DispatchGeometry {
            workgroup_size: [0, 1, 1],
            group_segment_size: 0,
            ..packet
        };
        assert_eq!(
            expected_hidden(HiddenKind::DynamicLdsSize, &odd, 1024),
            None
        );
        assert_eq!(expected_hidden(HiddenKind::BlockCountX, &odd, 1024), None);
        assert_eq!(expected_hidden(HiddenKind::GlobalOffsetX, &packet, 0), None);
    }

    #[test]
    fn opencl_local_buffers_are_not_taken_for_dynamic_lds() {
        use crate::code_object::{KernelArg, KernelMetadata};
        use crate::kernargs::decode::{Sources, decode};
        // `kernel void scale(local float *tile)` given 512 bytes by
        // clSetKernelArg(1, 512, NULL), as ROCm's OpenCL runtime 7.2.4
        // dispatches it (measured): the packet's group segment is 512, the
        // tile sits at LDS offset 0 and hidden_dynamic_lds_size is 0.
        let k = KernelMetadata {
            symbol: "scale.kd".into(),
            kernarg_segment_size: 8,
            args: vec![
                KernelArg {
                    offset: 0,
                    size: 4,
                    value_kind: "dynamic_shared_pointer".into(),
                    address_space: Some("local".into()),
                    ..Default::default()
                },
                KernelArg {
                    offset: 4,
                    size: 4,
                    value_kind: "hidden_dynamic_lds_size".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let packet = DispatchGeometry {
            dimensions: 1,
            workgroup_size: [128, 1, 1],
            grid_size: [256, 1, 1],
            group_segment_size: 512,
        };
        let d = decode(&[0; 8], &k, Sources::default());
        assert_eq!(check_hidden(&d, &packet, 0), []);
        // Without the local argument the same block is a mismatch.
        let mut k = k;
        k.args[0].value_kind = "by_value".into();
        k.args[0].address_space = None;
        let d = decode(&[0; 8], &k, Sources::default());
        assert_eq!(check_hidden(&d, &packet, 0).len(), 1);
    }
}
