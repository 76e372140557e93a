//! Property tests for the parser, the decoder and the processor.

use proptest::prelude::*;

use softgpu_hsa::abi::{
    BarrierAndPacket, BarrierOrPacket, FenceScope, HsaSignal, KernelDispatchPacket, PacketType,
};
use softgpu_hsa::aql::mock::{MockQueue, MockSignals, VecSink};
use softgpu_hsa::aql::parse::{
    encode_barrier_and, encode_barrier_or, encode_kernel_dispatch, make_header,
};
use softgpu_hsa::aql::{
    DecodedPacket, DrainOutcome, INVALID_HEADER, MAX_WORKGROUP_SIZE, ParsedPacket, Processor,
    QueueState, Reason, Status, parse_supported_packet, parse_supported_packet_with_limit,
};

fn bytes64() -> impl Strategy<Value = [u8; 64]> {
    prop::collection::vec(any::<u8>(), 64).prop_map(|v| {
        let mut b = [0u8; 64];
        b.copy_from_slice(&v);
        b
    })
}

fn scope() -> impl Strategy<Value = FenceScope> {
    (0u8..3).prop_map(FenceScope)
}

/// Workgroup sizes whose product is at most 1024, with every size beyond
/// `dims` equal to 1.
fn workgroup(dims: u16) -> impl Strategy<Value = [u16; 3]> {
    (1u16..=1024).prop_flat_map(move |x| {
        let y_max = if dims >= 2 { 1024 / x } else { 1 };
        (Just(x), 1u16..=y_max).prop_flat_map(move |(x, y)| {
            let z_max = if dims >= 3 { 1024 / (x * y) } else { 1 };
            (Just(x), Just(y), 1u16..=z_max).prop_map(|(x, y, z)| [x, y, z])
        })
    })
}

fn grid(dims: u16) -> impl Strategy<Value = [u32; 3]> {
    let used = 1u32..=u32::MAX;
    let y = if dims >= 2 {
        used.clone().boxed()
    } else {
        Just(1).boxed()
    };
    let z = if dims >= 3 {
        used.clone().boxed()
    } else {
        Just(1).boxed()
    };
    (used, y, z).prop_map(|(x, y, z)| [x, y, z])
}

prop_compose! {
    fn valid_dispatch()(
        dims in 1u16..=3,
    )(
        dims in Just(dims),
        wg in workgroup(dims),
        grid in grid(dims),
        barrier in any::<bool>(),
        acq in scope(),
        rel in scope(),
        private in any::<u32>(),
        group in any::<u32>(),
        kernel_object in (1u64..=u64::MAX >> 6).prop_map(|k| k << 6),
        kernarg in any::<u64>().prop_map(|k| k & !15),
        completion in any::<u64>(),
    ) -> KernelDispatchPacket {
        KernelDispatchPacket {
            header: make_header(PacketType::KERNEL_DISPATCH, barrier, acq, rel),
            setup: dims,
            workgroup_size_x: wg[0],
            workgroup_size_y: wg[1],
            workgroup_size_z: wg[2],
            reserved0: 0,
            grid_size_x: grid[0],
            grid_size_y: grid[1],
            grid_size_z: grid[2],
            private_segment_size: private,
            group_segment_size: group,
            kernel_object,
            kernarg_address: kernarg,
            reserved2: 0,
            completion_signal: HsaSignal { handle: completion },
        }
    }
}

prop_compose! {
    fn valid_barrier_and()(
        barrier in any::<bool>(),
        acq in scope(),
        rel in scope(),
        reserved0 in any::<u16>(),
        reserved1 in any::<u32>(),
        deps in any::<[u64; 5]>(),
        reserved2 in any::<u64>(),
        completion in any::<u64>(),
    ) -> BarrierAndPacket {
        BarrierAndPacket {
            header: make_header(PacketType::BARRIER_AND, barrier, acq, rel),
            reserved0,
            reserved1,
            dep_signal: deps.map(|handle| HsaSignal { handle }),
            reserved2,
            completion_signal: HsaSignal { handle: completion },
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn arbitrary_bytes_never_panic_and_parse_agrees_with_decode(
        bytes in bytes64(),
        limit in any::<u32>(),
    ) {
        let d = DecodedPacket::decode(&bytes);
        prop_assert_eq!(d.header, u16::from_le_bytes([bytes[0], bytes[1]]));
        let _ = parse_supported_packet_with_limit(&bytes, limit);
        match parse_supported_packet(&bytes) {
            Ok(p) => {
                prop_assert!(matches!(d.type_name, "kernel_dispatch" | "barrier_and" | "barrier_or"));
                prop_assert_eq!(p.to_bytes(), bytes);
                prop_assert_eq!(p.header(), d.header);
                prop_assert_eq!(p.completion_signal(), d.completion_signal);
            }
            Err(reasons) => {
                prop_assert!(!reasons.is_empty());
                prop_assert!(reasons.iter().all(|r| !r.is_runtime()));
                prop_assert_eq!(reasons.iter().count(), reasons.len());
            }
        }
    }

    #[test]
    fn arbitrary_bytes_with_a_dispatch_header_never_panic(mut bytes in bytes64()) {
        bytes[0] = PacketType::KERNEL_DISPATCH.0;
        let d = DecodedPacket::decode(&bytes);
        prop_assert!(d.workgroup.is_some() && d.grid.is_some());
        if let Err(r) = parse_supported_packet(&bytes) {
            prop_assert!(!r.contains(Reason::UnknownPacketType));
        }
    }

    #[test]
    fn valid_dispatches_parse_and_round_trip(p in valid_dispatch()) {
        let bytes = encode_kernel_dispatch(&p);
        let parsed = parse_supported_packet(&bytes);
        prop_assert_eq!(parsed, Ok(ParsedPacket::KernelDispatch(p)));
        prop_assert_eq!(parsed.unwrap().to_bytes(), bytes);
        let d = DecodedPacket::decode(&bytes);
        prop_assert_eq!(d.dimensions, Some(p.setup));
        prop_assert_eq!(d.workgroup, Some([p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z]));
        prop_assert_eq!(d.grid, Some([p.grid_size_x, p.grid_size_y, p.grid_size_z]));
        prop_assert_eq!(d.kernel_object, Some(p.kernel_object));
        prop_assert_eq!(d.kernarg_address, Some(p.kernarg_address));
        prop_assert_eq!(d.private_segment_size, Some(p.private_segment_size));
        prop_assert_eq!(d.group_segment_size, Some(p.group_segment_size));
        prop_assert_eq!(d.completion_signal, p.completion_signal.handle);
    }

    #[test]
    fn valid_barriers_parse_and_round_trip(a in valid_barrier_and()) {
        let bytes = encode_barrier_and(&a);
        let parsed = parse_supported_packet(&bytes);
        prop_assert_eq!(parsed, Ok(ParsedPacket::BarrierAnd(a)));
        prop_assert_eq!(parsed.unwrap().to_bytes(), bytes);

        let o = BarrierOrPacket {
            header: make_header(
                PacketType::BARRIER_OR,
                a.header >> 8 & 1 == 1,
                FenceScope((a.header >> 9 & 3) as u8),
                FenceScope((a.header >> 11 & 3) as u8),
            ),
            reserved0: a.reserved0,
            reserved1: a.reserved1,
            dep_signal: a.dep_signal,
            reserved2: a.reserved2,
            completion_signal: a.completion_signal,
        };
        let bytes = encode_barrier_or(&o);
        let parsed = parse_supported_packet(&bytes);
        prop_assert_eq!(parsed, Ok(ParsedPacket::BarrierOr(o)));
        prop_assert_eq!(parsed.unwrap().to_bytes(), bytes);
        let d = DecodedPacket::decode(&bytes);
        prop_assert_eq!(d.dep_signals, Some(o.dep_signal.map(|s| s.handle)));
    }

    #[test]
    fn one_broken_rule_in_a_valid_dispatch_is_reported(
        p in valid_dispatch(),
        which in 0usize..8,
        noise in 1u64..,
    ) {
        let mut q = p;
        let expected = match which {
            0 => { q.setup = 0; Reason::DimensionsOutOfRange }
            1 => { q.workgroup_size_x = 0; Reason::WorkgroupSizeZero }
            2 => { q.grid_size_x = 0; Reason::GridSizeZero }
            3 => { q.setup |= 4 << (noise % 14); Reason::SetupReservedBitsSet }
            4 => { q.reserved2 = noise; Reason::ReservedFieldNonzero }
            5 => { q.kernel_object = 0; Reason::KernelObjectNull }
            6 => { q.kernel_object |= 1 + noise % 63; Reason::KernelObjectMisaligned }
            _ => { q.kernarg_address |= 1 + noise % 15; Reason::KernargAddressMisaligned }
        };
        let reasons = parse_supported_packet(&encode_kernel_dispatch(&q)).unwrap_err();
        prop_assert!(reasons.contains(expected), "{:?} not in {:?}", expected, reasons);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary packets through the processor: one record each, in order;
    /// the record's classification is the parser's (plus runtime reasons),
    /// and every slot is handed back.
    #[test]
    fn the_processor_records_every_published_packet_once_with_the_parsers_verdict(
        packets in prop::collection::vec(bytes64(), 1..40),
    ) {
        let q = MockQueue::new(8);
        let s = MockSignals::new(&[]);
        let mut sink = VecSink::new();
        let mut state = QueueState::default();
        let p = Processor::default();
        let mut expected = Vec::new();
        for mut bytes in packets {
            if bytes[0] == PacketType::INVALID.0 {
                bytes[0] = PacketType::KERNEL_DISPATCH.0;
            }
            if q.write_index() - q.read_index() == 8 {
                prop_assert_eq!(p.drain(&mut state, 1, &q, &s, &mut sink), DrainOutcome::Idle);
            }
            q.submit(&bytes);
            expected.push(bytes);
        }
        prop_assert_eq!(p.drain(&mut state, 1, &q, &s, &mut sink), DrainOutcome::Idle);
        prop_assert_eq!(sink.records.len(), expected.len());
        for (i, (rec, bytes)) in sink.records.iter().zip(&expected).enumerate() {
            prop_assert_eq!(rec.packet_index, i as u64);
            prop_assert_eq!(&rec.raw, bytes);
            let offline = parse_supported_packet_with_limit(bytes, MAX_WORKGROUP_SIZE);
            // No signal is live here, so anything naming one is rejected.
            match (offline, rec.status) {
                (Ok(_), Status::Validated) => prop_assert!(rec.reasons.is_empty()),
                (Ok(_), Status::Rejected) => {
                    prop_assert!(!rec.reasons.is_empty());
                    prop_assert!(rec.reasons.without_runtime().is_empty());
                }
                (Err(r), Status::Rejected) => prop_assert_eq!(rec.reasons.without_runtime(), r),
                (Err(_), Status::Validated) => prop_assert!(false, "validated a bad packet"),
            }
        }
        prop_assert_eq!(q.read_index(), expected.len() as u64);
        for slot in 0..8 {
            prop_assert_eq!(q.header(slot), INVALID_HEADER);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The `processor_ops` fuzz target's replay, on stable: random operation
    /// streams (publish, reserve, late publish, drain, signal change, limit
    /// change) never break the processor's invariants.
    #[test]
    fn random_operation_streams_keep_the_processor_invariants(
        ops in prop::collection::vec(any::<u8>(), 0..600),
    ) {
        softgpu_hsa::aql::mock::replay_ops(&ops);
    }
}

#[test]
fn an_operation_stream_with_waiting_barriers_and_late_publishes_replays_cleanly() {
    // publish barrier-AND on signals 0 and 1 (both 1); reserve a dispatch
    // without publishing; drain (blocked); set signal 0 to 0; drain (still
    // blocked); publish the reserved slot; set signal 1 to 0; drain.
    let ops = [
        0, 2, 0, 2, 3, 0, 0, 0, //
        2, 0, 0, //
        4, //
        6, 0, 0, //
        4, //
        3, //
        6, 1, 0, //
        4,
    ];
    softgpu_hsa::aql::mock::replay_ops(&ops);
}

/// The statuses and reasons of a replay's records, in index order.
fn replayed(ops: &[u8]) -> Vec<(Status, Vec<Reason>)> {
    softgpu_hsa::aql::mock::replay_ops(ops)
        .records
        .iter()
        .map(|r| (r.status, r.reasons.iter().collect()))
        .collect()
}

#[test]
fn a_replayed_barrier_value_packet_waits_for_its_condition_and_then_completes() {
    // publish barrier-value (no completion signal; barrier bit; signal 0,
    // value 0, mask all ones, EQ); drain: signal 0 is 1, so it waits; set
    // signal 0 to 0; drain: it completes.
    let ops = [0, 6, 0, 1, 2, 0, 0, 0, 4, 6, 0, 0, 4];
    assert_eq!(replayed(&ops), [(Status::Validated, vec![])]);
}

#[test]
fn a_replayed_barrier_value_packet_on_an_unknown_signal_is_rejected() {
    // The same packet on a handle no signal has (byte 6) and on a misaligned
    // one inside the table (byte 7), then a null signal whose value counts
    // as 0 (byte 0): it is satisfied at once.
    let ops = [
        0, 6, 0, 1, 6, 0, 0, 0, //
        0, 6, 0, 1, 7, 0, 0, 0, //
        0, 6, 0, 1, 0, 0, 0, 0, //
        4,
    ];
    let unknown = (Status::Rejected, vec![Reason::DependencySignalUnknown]);
    assert_eq!(
        replayed(&ops),
        [unknown.clone(), unknown, (Status::Validated, vec![])]
    );
}

#[test]
fn a_replayed_barrier_value_packet_no_signal_value_can_release_waits_for_good() {
    // Null signal (value 0) with condition NE 0: it can never complete, so
    // neither can the dispatch behind it; the replay ends with both unrecorded.
    let ops = [0, 6, 0, 1, 0, 0, 0, 1, 0, 0, 0, 4];
    let replay = softgpu_hsa::aql::mock::replay_ops(&ops);
    assert_eq!(replay.packets.len(), 2);
    assert!(replay.records.is_empty());
}

#[test]
fn replayed_dispatches_are_checked_against_the_kernel_table_and_the_lds_limit() {
    // Reconfigure: workgroup limit 1024, LDS limit 256 bytes, kernel table on.
    // Then: a blit kernel with no kernargs and too little LDS (findings, still
    // validated); a kernel the table lacks (a finding); the kernel with every
    // constraint, dispatched with a 32-wide workgroup, kernargs, enough
    // scratch but no LDS (two rejects); one loaded for another agent; and a
    // valid dispatch asking for 4080 bytes of LDS, over the limit.
    let ops = [
        7, 128, 1, 1, //
        0, 7, 0, 2, 1, 0, 0, 0, //
        0, 7, 0, 4, 1, 0, 0, 0, //
        0, 7, 0, 1, 0, 0, 16, 0x10, //
        0, 7, 0, 3, 1, 0, 0, 0, //
        0, 7, 0, 0, 1, 255, 0, 0, //
        4,
    ];
    assert_eq!(
        replayed(&ops),
        [
            (
                Status::Validated,
                vec![
                    Reason::RuntimeBlitKernelNotExecuted,
                    Reason::GroupSegmentSizeBelowStatic,
                    Reason::KernargAddressNull,
                ]
            ),
            (Status::Validated, vec![Reason::UnknownKernelObject]),
            (
                Status::Rejected,
                vec![
                    Reason::WorkgroupSizeDiffersFromRequired,
                    Reason::GroupSegmentSizeBelowStatic,
                ]
            ),
            (Status::Rejected, vec![Reason::KernelObjectWrongAgent]),
            (Status::Rejected, vec![Reason::GroupSegmentSizeExceedsLimit]),
        ]
    );
}
