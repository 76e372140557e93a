//! Unit tests for the AQL parser/validator: one test per rule and per reason
//! code, plus the field decoder used by reports.

use softgpu_hsa::abi::{
    AgentDispatchPacket, FenceScope, HsaSignal, HsaStatus, KernelDispatchPacket, PacketType,
};
use softgpu_hsa::aql::mock::{barrier_and, barrier_or, valid_dispatch};
use softgpu_hsa::aql::parse::{
    encode_agent_dispatch, encode_barrier_and, encode_barrier_or, encode_kernel_dispatch,
    make_header,
};
use softgpu_hsa::aql::{
    DecodedPacket, MAX_WORKGROUP_SIZE, ParsedPacket, QUEUE_ERROR_PRECEDENCE, Reason, ReasonSet,
    StatusBasis, parse_supported_packet, parse_supported_packet_with_limit,
};

fn dispatch() -> KernelDispatchPacket {
    valid_dispatch(0x1000, 0)
}

fn reasons_of(p: &KernelDispatchPacket) -> ReasonSet {
    parse_supported_packet(&encode_kernel_dispatch(p)).expect_err("expected a reject")
}

fn set(rs: &[Reason]) -> ReasonSet {
    rs.iter().copied().collect()
}

#[test]
fn a_valid_one_dimensional_dispatch_parses() {
    let p = dispatch();
    let bytes = encode_kernel_dispatch(&p);
    assert_eq!(
        parse_supported_packet(&bytes),
        Ok(ParsedPacket::KernelDispatch(p))
    );
}

#[test]
fn valid_two_and_three_dimensional_dispatches_parse() {
    let mut p = dispatch();
    p.setup = 2;
    p.workgroup_size_x = 16;
    p.workgroup_size_y = 16;
    p.grid_size_y = 32;
    assert!(parse_supported_packet(&encode_kernel_dispatch(&p)).is_ok());
    p.setup = 3;
    p.workgroup_size_z = 4;
    p.grid_size_z = 4;
    assert!(parse_supported_packet(&encode_kernel_dispatch(&p)).is_ok());
}

#[test]
fn dimensions_zero_is_rejected() {
    let mut p = dispatch();
    p.setup = 0;
    assert_eq!(reasons_of(&p), set(&[Reason::DimensionsOutOfRange]));
}

#[test]
fn workgroup_size_zero_in_any_dimension_is_rejected() {
    for d in 0..3 {
        let mut p = dispatch();
        p.setup = 3;
        p.workgroup_size_x = 4;
        p.workgroup_size_y = 4;
        p.workgroup_size_z = 4;
        p.grid_size_y = 4;
        p.grid_size_z = 4;
        match d {
            0 => p.workgroup_size_x = 0,
            1 => p.workgroup_size_y = 0,
            _ => p.workgroup_size_z = 0,
        }
        assert_eq!(reasons_of(&p), set(&[Reason::WorkgroupSizeZero]), "dim {d}");
    }
}

#[test]
fn grid_size_zero_in_any_dimension_is_rejected() {
    for d in 0..3 {
        let mut p = dispatch();
        p.setup = 3;
        match d {
            0 => p.grid_size_x = 0,
            1 => p.grid_size_y = 0,
            _ => p.grid_size_z = 0,
        }
        assert_eq!(reasons_of(&p), set(&[Reason::GridSizeZero]), "dim {d}");
    }
}

#[test]
fn unused_workgroup_dimension_not_one_is_rejected() {
    let mut p = dispatch();
    p.workgroup_size_x = 8;
    p.workgroup_size_y = 8;
    assert_eq!(reasons_of(&p), set(&[Reason::UnusedDimensionNotOne]));
}

#[test]
fn unused_grid_dimension_not_one_is_rejected() {
    let mut p = dispatch();
    p.setup = 2;
    p.grid_size_z = 2;
    assert_eq!(reasons_of(&p), set(&[Reason::UnusedDimensionNotOne]));
}

#[test]
fn an_unused_dimension_of_zero_reports_both_zero_and_not_one() {
    let mut p = dispatch();
    p.grid_size_y = 0;
    assert_eq!(
        reasons_of(&p),
        set(&[Reason::GridSizeZero, Reason::UnusedDimensionNotOne])
    );
}

#[test]
fn workgroup_product_of_exactly_1024_is_accepted() {
    let mut p = dispatch();
    p.setup = 3;
    p.workgroup_size_x = 16;
    p.workgroup_size_y = 8;
    p.workgroup_size_z = 8;
    assert!(parse_supported_packet(&encode_kernel_dispatch(&p)).is_ok());
    assert_eq!(MAX_WORKGROUP_SIZE, 1024);
}

#[test]
fn workgroup_product_over_1024_is_rejected() {
    let mut p = dispatch();
    p.setup = 2;
    p.workgroup_size_x = 64;
    p.workgroup_size_y = 17;
    p.grid_size_y = 17;
    assert_eq!(reasons_of(&p), set(&[Reason::WorkgroupSizeExceedsMax]));
}

#[test]
fn workgroup_product_that_overflows_u32_is_rejected_not_wrapped() {
    let mut p = dispatch();
    p.setup = 3;
    p.workgroup_size_x = u16::MAX;
    p.workgroup_size_y = u16::MAX;
    p.workgroup_size_z = u16::MAX;
    assert!(reasons_of(&p).contains(Reason::WorkgroupSizeExceedsMax));
}

#[test]
fn the_workgroup_limit_comes_from_the_caller() {
    let mut p = dispatch();
    p.workgroup_size_x = 512;
    p.grid_size_x = 512;
    let bytes = encode_kernel_dispatch(&p);
    assert!(parse_supported_packet_with_limit(&bytes, 1024).is_ok());
    assert_eq!(
        parse_supported_packet_with_limit(&bytes, 256),
        Err(set(&[Reason::WorkgroupSizeExceedsMax]))
    );
}

#[test]
fn any_setup_reserved_bit_is_rejected() {
    for bit in 2..16 {
        let mut p = dispatch();
        p.setup = 1 | (1 << bit);
        assert_eq!(
            reasons_of(&p),
            set(&[Reason::SetupReservedBitsSet]),
            "bit {bit}"
        );
    }
}

#[test]
fn nonzero_reserved0_is_rejected() {
    let mut p = dispatch();
    p.reserved0 = 1;
    assert_eq!(reasons_of(&p), set(&[Reason::ReservedFieldNonzero]));
}

#[test]
fn nonzero_reserved2_is_rejected() {
    let mut p = dispatch();
    p.reserved2 = 1 << 63;
    assert_eq!(reasons_of(&p), set(&[Reason::ReservedFieldNonzero]));
}

#[test]
fn null_kernel_object_is_rejected_as_null_not_misaligned() {
    let mut p = dispatch();
    p.kernel_object = 0;
    assert_eq!(reasons_of(&p), set(&[Reason::KernelObjectNull]));
}

#[test]
fn kernel_object_not_64_byte_aligned_is_rejected() {
    for addr in [0x1001u64, 0x1020, 0x1008] {
        let mut p = dispatch();
        p.kernel_object = addr;
        assert_eq!(reasons_of(&p), set(&[Reason::KernelObjectMisaligned]));
    }
}

#[test]
fn kernarg_address_not_16_byte_aligned_is_rejected() {
    let mut p = dispatch();
    p.kernarg_address = 0x2008;
    assert_eq!(reasons_of(&p), set(&[Reason::KernargAddressMisaligned]));
}

#[test]
fn null_and_16_byte_aligned_kernarg_addresses_are_accepted() {
    for addr in [0u64, 0x2010, 0x7fff_0000_0000] {
        let mut p = dispatch();
        p.kernarg_address = addr;
        assert!(parse_supported_packet(&encode_kernel_dispatch(&p)).is_ok());
    }
}

#[test]
fn acquire_fence_scope_3_is_rejected() {
    let mut p = dispatch();
    p.header = make_header(
        PacketType::KERNEL_DISPATCH,
        false,
        FenceScope(3),
        FenceScope::NONE,
    );
    assert_eq!(reasons_of(&p), set(&[Reason::AcquireFenceScopeInvalid]));
}

#[test]
fn release_fence_scope_3_is_rejected() {
    let mut p = dispatch();
    p.header = make_header(
        PacketType::KERNEL_DISPATCH,
        true,
        FenceScope::AGENT,
        FenceScope(3),
    );
    assert_eq!(reasons_of(&p), set(&[Reason::ReleaseFenceScopeInvalid]));
}

#[test]
fn every_valid_fence_scope_combination_is_accepted() {
    for a in 0..3 {
        for r in 0..3 {
            for barrier in [false, true] {
                let mut p = dispatch();
                p.header = make_header(
                    PacketType::KERNEL_DISPATCH,
                    barrier,
                    FenceScope(a),
                    FenceScope(r),
                );
                assert!(parse_supported_packet(&encode_kernel_dispatch(&p)).is_ok());
            }
        }
    }
}

#[test]
fn every_applicable_reason_is_reported_not_just_the_first() {
    let p = KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            false,
            FenceScope(3),
            FenceScope(3),
        ),
        setup: 0xFFFC, // dimensions 0, every reserved bit set
        workgroup_size_x: 0,
        workgroup_size_y: 2048,
        workgroup_size_z: 1,
        reserved0: 7,
        grid_size_x: 0,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: 0,
        group_segment_size: 0,
        kernel_object: 0,
        kernarg_address: 3,
        reserved2: 0,
        completion_signal: HsaSignal { handle: 0 },
    };
    assert_eq!(
        reasons_of(&p),
        set(&[
            Reason::DimensionsOutOfRange,
            Reason::WorkgroupSizeZero,
            Reason::GridSizeZero,
            Reason::SetupReservedBitsSet,
            Reason::ReservedFieldNonzero,
            Reason::KernelObjectNull,
            Reason::KernargAddressMisaligned,
            Reason::AcquireFenceScopeInvalid,
            Reason::ReleaseFenceScopeInvalid,
        ])
    );
    let mut q = dispatch();
    q.setup = 1;
    q.workgroup_size_x = 1024;
    q.workgroup_size_y = 2;
    q.kernel_object = 0x1004;
    assert_eq!(
        reasons_of(&q),
        set(&[
            Reason::UnusedDimensionNotOne,
            Reason::WorkgroupSizeExceedsMax,
            Reason::KernelObjectMisaligned,
        ])
    );
}

#[test]
fn barrier_and_and_barrier_or_parse_with_valid_fence_scopes() {
    let a = barrier_and([0x40, 0, 0x80, 0, 0], 0x100);
    assert_eq!(
        parse_supported_packet(&encode_barrier_and(&a)),
        Ok(ParsedPacket::BarrierAnd(a))
    );
    let o = barrier_or([0; 5], 0);
    assert_eq!(
        parse_supported_packet(&encode_barrier_or(&o)),
        Ok(ParsedPacket::BarrierOr(o))
    );
}

#[test]
fn barrier_reserved_fields_are_not_checked() {
    let mut a = barrier_and([0; 5], 0);
    a.reserved0 = 0xFFFF;
    a.reserved1 = 0xFFFF_FFFF;
    a.reserved2 = u64::MAX;
    assert!(parse_supported_packet(&encode_barrier_and(&a)).is_ok());
}

#[test]
fn barrier_with_an_invalid_fence_scope_is_rejected() {
    let mut a = barrier_and([0; 5], 0);
    a.header = make_header(PacketType::BARRIER_AND, true, FenceScope(3), FenceScope(3));
    assert_eq!(
        parse_supported_packet(&encode_barrier_and(&a)),
        Err(set(&[
            Reason::AcquireFenceScopeInvalid,
            Reason::ReleaseFenceScopeInvalid
        ]))
    );
    let mut o = barrier_or([0; 5], 0);
    o.header = make_header(
        PacketType::BARRIER_OR,
        false,
        FenceScope::NONE,
        FenceScope(3),
    );
    assert_eq!(
        parse_supported_packet(&encode_barrier_or(&o)),
        Err(set(&[Reason::ReleaseFenceScopeInvalid]))
    );
}

#[test]
fn agent_dispatch_is_rejected_as_unsupported_with_its_header_findings() {
    let mut p = AgentDispatchPacket {
        header: make_header(
            PacketType::AGENT_DISPATCH,
            false,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        ),
        ..AgentDispatchPacket::default()
    };
    assert_eq!(
        parse_supported_packet(&encode_agent_dispatch(&p)),
        Err(set(&[Reason::AgentDispatchUnsupported]))
    );
    p.header = make_header(
        PacketType::AGENT_DISPATCH,
        false,
        FenceScope(3),
        FenceScope::SYSTEM,
    );
    assert_eq!(
        parse_supported_packet(&encode_agent_dispatch(&p)),
        Err(set(&[
            Reason::AgentDispatchUnsupported,
            Reason::AcquireFenceScopeInvalid
        ]))
    );
}

fn with_type(ty: u8, rest: u8) -> [u8; 64] {
    let mut b = [rest; 64];
    b[0] = ty;
    b
}

#[test]
fn vendor_specific_is_rejected_with_the_type_reason_alone() {
    for rest in [0u8, 0xFF] {
        assert_eq!(
            parse_supported_packet(&with_type(0, rest)),
            Err(set(&[Reason::VendorSpecificUnsupported]))
        );
    }
}

#[test]
fn packet_type_invalid_is_rejected() {
    assert_eq!(
        parse_supported_packet(&with_type(1, 0xFF)),
        Err(set(&[Reason::PacketTypeInvalid]))
    );
}

#[test]
fn every_undefined_packet_type_is_rejected_as_unknown() {
    for ty in 6..=255u8 {
        assert_eq!(
            parse_supported_packet(&with_type(ty, 0)),
            Err(set(&[Reason::UnknownPacketType])),
            "type {ty}"
        );
    }
}

#[test]
fn reason_codes_are_the_snake_case_variant_names() {
    for r in Reason::ALL {
        let debug = format!("{r:?}");
        let mut snake = String::new();
        for (i, c) in debug.chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            } else {
                snake.push(c);
            }
        }
        assert_eq!(r.code(), snake);
        assert_eq!(r.to_string(), snake);
    }
    assert_eq!(
        Reason::DimensionsOutOfRange.code(),
        "dimensions_out_of_range"
    );
}

#[test]
fn reason_all_is_in_numeric_order_and_round_trips_through_u8_and_code() {
    assert_eq!(Reason::ALL.len(), 28);
    for (i, r) in Reason::ALL.iter().enumerate() {
        assert_eq!(*r as u8 as usize, i);
        assert_eq!(Reason::from_u8(i as u8), Some(*r));
        assert_eq!(Reason::from_code(r.code()), Some(*r));
        assert!(!r.meaning().is_empty());
    }
    assert_eq!(Reason::from_u8(Reason::ALL.len() as u8), None);
    assert_eq!(Reason::from_u8(255), None);
    assert_eq!(Reason::from_code("no_such_reason"), None);
}

#[test]
fn reason_set_iterates_in_numeric_order_and_skips_unknown_bits() {
    let s = ReasonSet((1 << 63) | (1 << 11) | (1 << 2));
    let got: Vec<Reason> = s.iter().collect();
    assert_eq!(
        got,
        vec![Reason::GridSizeZero, Reason::ReleaseFenceScopeInvalid]
    );
    assert_eq!(s.len(), 3);
}

#[test]
fn runtime_reasons_are_exactly_those_needing_the_runtimes_tables_or_agent() {
    let runtime: Vec<Reason> = Reason::ALL
        .iter()
        .copied()
        .filter(|r| r.is_runtime())
        .collect();
    assert_eq!(
        runtime,
        vec![
            Reason::CompletionSignalUnknown,
            Reason::DependencySignalUnknown,
            Reason::RuntimeBlitKernelNotExecuted,
            Reason::GroupSegmentSizeExceedsLimit,
            Reason::UnknownKernelObject,
            Reason::WorkgroupSizeExceedsKernelMax,
            Reason::WorkgroupSizeDiffersFromRequired,
            Reason::GroupSegmentSizeBelowStatic,
            Reason::PrivateSegmentSizeBelowStatic,
            Reason::KernargAddressNull,
            Reason::KernelObjectWrongAgent
        ]
    );
    let s = set(&[Reason::GridSizeZero, Reason::CompletionSignalUnknown]);
    assert_eq!(s.without_runtime(), set(&[Reason::GridSizeZero]));
}

#[test]
fn the_contract_document_lists_every_reason_code() {
    let doc = include_str!("../docs/aql-diagnostic-contract.md");
    for r in Reason::ALL {
        assert!(
            doc.contains(&format!("`{}`", r.code())),
            "{} missing from docs/aql-diagnostic-contract.md",
            r.code()
        );
    }
}

#[test]
fn decode_reads_every_dispatch_field_at_its_hsa_offset() {
    let p = KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            true,
            FenceScope::AGENT,
            FenceScope::SYSTEM,
        ),
        setup: 3,
        workgroup_size_x: 1,
        workgroup_size_y: 2,
        workgroup_size_z: 3,
        reserved0: 0,
        grid_size_x: 4,
        grid_size_y: 5,
        grid_size_z: 6,
        private_segment_size: 7,
        group_segment_size: 8,
        kernel_object: 0x1122_3344_5566_7788,
        kernarg_address: 0x99AA_BBCC_DDEE_FF00,
        reserved2: 0,
        completion_signal: HsaSignal {
            handle: 0xDEAD_BEEF,
        },
    };
    let d = DecodedPacket::decode(&encode_kernel_dispatch(&p));
    assert_eq!(d.header, p.header);
    assert_eq!(d.packet_type, PacketType::KERNEL_DISPATCH);
    assert_eq!(d.type_name, "kernel_dispatch");
    assert!(d.barrier);
    assert_eq!(d.acquire_fence_scope, "agent");
    assert_eq!(d.release_fence_scope, "system");
    assert_eq!(d.dimensions, Some(3));
    assert_eq!(d.workgroup, Some([1, 2, 3]));
    assert_eq!(d.grid, Some([4, 5, 6]));
    assert_eq!(d.private_segment_size, Some(7));
    assert_eq!(d.group_segment_size, Some(8));
    assert_eq!(d.kernel_object, Some(0x1122_3344_5566_7788));
    assert_eq!(d.kernarg_address, Some(0x99AA_BBCC_DDEE_FF00));
    assert_eq!(d.dep_signals, None);
    assert_eq!(d.completion_signal, 0xDEAD_BEEF);
}

#[test]
fn decode_of_a_barrier_has_dependencies_and_no_dispatch_fields() {
    let a = barrier_and([1, 2, 3, 4, 5], 6);
    let d = DecodedPacket::decode(&encode_barrier_and(&a));
    assert_eq!(d.type_name, "barrier_and");
    assert_eq!(d.dep_signals, Some([1, 2, 3, 4, 5]));
    assert_eq!(d.completion_signal, 6);
    assert_eq!(d.dimensions, None);
    assert_eq!(d.workgroup, None);
    assert_eq!(d.grid, None);
    assert_eq!(d.kernel_object, None);
    assert_eq!(d.kernarg_address, None);
    let o = barrier_or([9, 0, 0, 0, 0], 0);
    let d = DecodedPacket::decode(&encode_barrier_or(&o));
    assert_eq!(d.type_name, "barrier_or");
    assert_eq!(d.dep_signals, Some([9, 0, 0, 0, 0]));
}

#[test]
fn decode_names_every_type_and_fence_scope() {
    let names = [
        (0u8, "vendor_specific"),
        (1, "invalid"),
        (2, "kernel_dispatch"),
        (3, "barrier_and"),
        (4, "agent_dispatch"),
        (5, "barrier_or"),
        (6, "unknown"),
        (255, "unknown"),
    ];
    for (ty, name) in names {
        assert_eq!(DecodedPacket::decode(&with_type(ty, 0)).type_name, name);
    }
    let scopes = ["none", "agent", "system", "invalid"];
    for (s, name) in scopes.iter().enumerate() {
        let h = make_header(
            PacketType::BARRIER_OR,
            false,
            FenceScope(s as u8),
            FenceScope(s as u8),
        );
        let mut b = [0u8; 64];
        b[..2].copy_from_slice(&h.to_le_bytes());
        let d = DecodedPacket::decode(&b);
        assert_eq!(d.acquire_fence_scope, *name);
        assert_eq!(d.release_fence_scope, *name);
    }
}

#[test]
fn decode_of_other_types_keeps_only_the_common_fields() {
    let mut b = [0xABu8; 64];
    b[0] = PacketType::AGENT_DISPATCH.0;
    let d = DecodedPacket::decode(&b);
    assert_eq!(d.type_name, "agent_dispatch");
    assert_eq!(d.dimensions, None);
    assert_eq!(d.dep_signals, None);
    assert_eq!(d.completion_signal, 0xABAB_ABAB_ABAB_ABAB);
}

mod common;

/// The `HSA_STATUS_*` name of a status, from the pinned constants.
fn status_name(st: HsaStatus) -> &'static str {
    softgpu_hsa::abi::CONSTANTS
        .iter()
        .find(|(name, v)| name.starts_with("HSA_STATUS_") && *v == i64::from(st.0))
        .map(|(name, _)| *name)
        .unwrap_or_else(|| panic!("no HSA_STATUS_ constant for {st:?}"))
}

/// The reason table of `docs/aql-diagnostic-contract.md`, from the one list.
fn reason_table() -> String {
    let mut s = String::from(
        "| bit | code | from | queue error callback status | status from | meaning |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in Reason::ALL {
        let status = match r.status_basis() {
            StatusBasis::Finding => "none (a finding)".to_string(),
            _ => format!("`{}`", status_name(r.queue_status())),
        };
        s.push_str(&format!(
            "| {} | `{}` | {} | {} | {} | {} |\n",
            *r as u8,
            r.code(),
            if r.is_runtime() { "runtime" } else { "bytes" },
            status,
            r.status_basis().as_str(),
            r.meaning()
        ));
    }
    s
}

#[test]
fn every_reject_reason_maps_to_a_queue_error_status_in_rocrs_precedence_and_findings_to_none() {
    for r in Reason::ALL {
        let st = r.queue_status();
        match r.status_basis() {
            StatusBasis::Finding => {
                assert_eq!(st, HsaStatus::SUCCESS, "{r:?}");
                assert_eq!(ReasonSet::EMPTY.union(set(&[*r])).queue_error(), None);
            }
            _ => {
                assert!(QUEUE_ERROR_PRECEDENCE.contains(&st), "{r:?}: {st:?}");
                assert_eq!(set(&[*r]).queue_error(), Some(st), "{r:?}");
            }
        }
    }
    // The findings are exactly the two that never reject a packet on their own.
    let findings: Vec<Reason> = Reason::ALL
        .iter()
        .copied()
        .filter(|r| r.status_basis() == StatusBasis::Finding)
        .collect();
    assert_eq!(
        findings,
        vec![
            Reason::RuntimeBlitKernelNotExecuted,
            Reason::UnknownKernelObject
        ]
    );
    assert_eq!(ReasonSet::EMPTY.queue_error(), None);
}

#[test]
fn the_statuses_rocrtst_asserts_are_the_ones_the_table_gives() {
    // rocrtstNeg.Queue_Validation_*: the defect each test submits and the status it expects.
    let rocrtst = [
        (
            Reason::DimensionsOutOfRange,
            HsaStatus::ERROR_INCOMPATIBLE_ARGUMENTS,
        ),
        (
            Reason::GroupSegmentSizeExceedsLimit,
            HsaStatus::ERROR_INVALID_ALLOCATION,
        ),
        (
            Reason::KernelObjectNull,
            HsaStatus::ERROR_INVALID_CODE_OBJECT,
        ),
        (
            Reason::UnknownPacketType,
            HsaStatus::ERROR_INVALID_PACKET_FORMAT,
        ),
        (
            Reason::WorkgroupSizeExceedsMax,
            HsaStatus::ERROR_INVALID_ARGUMENT,
        ),
    ];
    for (r, st) in rocrtst {
        assert_eq!(r.queue_status(), st, "{r:?}");
        assert_eq!(r.status_basis(), StatusBasis::Rocrtst, "{r:?}");
    }
    assert_eq!(
        Reason::ALL
            .iter()
            .filter(|r| r.status_basis() == StatusBasis::Rocrtst)
            .count(),
        rocrtst.len()
    );
    // ROCr's error table: unsupported and vendor packets are a packet format error.
    for r in [
        Reason::AgentDispatchUnsupported,
        Reason::VendorSpecificUnsupported,
    ] {
        assert_eq!(r.queue_status(), HsaStatus::ERROR_INVALID_PACKET_FORMAT);
        assert_eq!(r.status_basis(), StatusBasis::Rocr);
    }
}

#[test]
fn rocrtsts_defective_packets_parse_to_the_status_rocr_reports() {
    // Queue_Validation_InvalidDimension: setup = 4 (dimensions 0 and a reserved bit):
    // the dimension error wins, as in ROCr's handler.
    let mut p = dispatch();
    p.setup = 4;
    let r = reasons_of(&p);
    assert_eq!(
        r,
        set(&[Reason::DimensionsOutOfRange, Reason::SetupReservedBitsSet])
    );
    assert_eq!(
        r.queue_error(),
        Some(HsaStatus::ERROR_INCOMPATIBLE_ARGUMENTS)
    );
    // Queue_Validation_InvalidKernelObject.
    let mut p = dispatch();
    p.kernel_object = 0;
    assert_eq!(
        reasons_of(&p).queue_error(),
        Some(HsaStatus::ERROR_INVALID_CODE_OBJECT)
    );
    // Queue_Validation_InvalidWorkGroupSize: 65535 work-items in one dimension.
    let mut p = dispatch();
    p.workgroup_size_x = u16::MAX;
    assert_eq!(
        reasons_of(&p).queue_error(),
        Some(HsaStatus::ERROR_INVALID_ARGUMENT)
    );
    // Queue_Validation_InvalidPacket: the header is 0xFFFF.
    let mut bytes = encode_kernel_dispatch(&dispatch());
    bytes[0] = 0xFF;
    bytes[1] = 0xFF;
    let r = parse_supported_packet(&bytes).expect_err("type 255 is rejected");
    assert_eq!(
        r.queue_error(),
        Some(HsaStatus::ERROR_INVALID_PACKET_FORMAT)
    );
    // Several classes at once: the first in ROCr's order, whatever the reason numbers.
    let mixed = set(&[
        Reason::WorkgroupSizeExceedsMax,
        Reason::AcquireFenceScopeInvalid,
        Reason::KernelObjectNull,
        Reason::CompletionSignalUnknown,
        Reason::UnknownKernelObject,
    ]);
    assert_eq!(
        mixed.queue_error(),
        Some(HsaStatus::ERROR_INVALID_CODE_OBJECT)
    );
    // A rejected blit dispatch carries its finding too; the reject's status is reported.
    let blit = set(&[
        Reason::RuntimeBlitKernelNotExecuted,
        Reason::GroupSegmentSizeBelowStatic,
    ]);
    assert_eq!(
        blit.queue_error(),
        Some(HsaStatus::ERROR_INVALID_ALLOCATION)
    );
}

#[test]
fn the_contract_reason_table_is_generated_from_the_one_reason_list() {
    common::generated_section(
        "docs/aql-diagnostic-contract.md",
        "reasons",
        &reason_table(),
    );
    // And the set constants agree with the list.
    for r in Reason::ALL {
        assert_eq!(ReasonSet::RUNTIME.contains(*r), r.is_runtime(), "{r:?}");
        assert_eq!(ReasonSet::BYTES.contains(*r), !r.is_runtime(), "{r:?}");
    }
    assert_eq!(
        ReasonSet::RUNTIME.len() + ReasonSet::BYTES.len(),
        Reason::ALL.len()
    );
}
