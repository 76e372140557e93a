//! Processor tests over the mock producer: the diagnostic completion contract,
//! ordering of its effects, stalls, barriers, wraparound and the doorbell gate.

use std::cell::RefCell;

use softgpu_hsa::abi::{AgentDispatchPacket, FenceScope, PacketType};
use softgpu_hsa::aql::mock::{
    MockQueue, MockSignals, VecSink, barrier_and, barrier_or, valid_dispatch,
};
use softgpu_hsa::aql::parse::{
    encode_agent_dispatch, encode_barrier_and, encode_barrier_or, encode_kernel_dispatch,
    make_header,
};
use softgpu_hsa::aql::{
    DoorbellGate, DrainOutcome, INVALID_HEADER, PacketRecord, Processor, QueueMemory, QueueState,
    Reason, ReasonSet, RecordSink, SignalOps, Status,
};

const QID: u64 = 7;

/// One queue under test: mock ring, signals, sink and processor state.
struct Rig {
    q: MockQueue,
    s: MockSignals,
    sink: VecSink,
    state: QueueState,
    p: Processor,
}

impl Rig {
    fn new(size: u64, signals: &[i64]) -> Rig {
        Rig {
            q: MockQueue::new(size),
            s: MockSignals::new(signals),
            sink: VecSink::new(),
            state: QueueState::default(),
            p: Processor::default(),
        }
    }

    fn drain(&mut self) -> DrainOutcome {
        self.p
            .drain(&mut self.state, QID, &self.q, &self.s, &mut self.sink)
    }

    fn records(&self) -> &[PacketRecord] {
        &self.sink.records
    }
}

fn dispatch_bytes(id: u64, completion: u64) -> [u8; 64] {
    encode_kernel_dispatch(&valid_dispatch(id * 64, completion))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ev {
    Record(u64),
    Complete(u64),
    StoreHeader(u64, u16),
    StoreReadIndex(u64),
}

struct LogQueue<'a>(&'a MockQueue, &'a RefCell<Vec<Ev>>);
struct LogSignals<'a>(&'a MockSignals, &'a RefCell<Vec<Ev>>);
struct LogSink<'a>(VecSink, &'a RefCell<Vec<Ev>>);

impl QueueMemory for LogQueue<'_> {
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn load_write_index(&self) -> u64 {
        self.0.load_write_index()
    }
    fn load_header(&self, index: u64) -> u16 {
        self.0.load_header(index)
    }
    fn read_packet(&self, index: u64) -> [u8; 64] {
        self.0.read_packet(index)
    }
    fn store_header(&self, index: u64, header: u16) {
        self.1.borrow_mut().push(Ev::StoreHeader(index, header));
        self.0.store_header(index, header)
    }
    fn store_read_index(&self, value: u64) {
        self.1.borrow_mut().push(Ev::StoreReadIndex(value));
        self.0.store_read_index(value)
    }
}

impl SignalOps for LogSignals<'_> {
    fn is_valid(&self, handle: u64) -> bool {
        self.0.is_valid(handle)
    }
    fn load(&self, handle: u64) -> i64 {
        self.0.load(handle)
    }
    fn complete(&self, handle: u64) {
        self.1.borrow_mut().push(Ev::Complete(handle));
        self.0.complete(handle)
    }
}

impl RecordSink for LogSink<'_> {
    fn record(&mut self, rec: &PacketRecord) {
        self.1.borrow_mut().push(Ev::Record(rec.packet_index));
        self.0.record(rec)
    }
    fn now_ns(&self) -> u64 {
        self.0.now_ns()
    }
    fn thread_id(&self) -> u32 {
        self.0.thread_id()
    }
}

#[test]
fn a_valid_packet_is_recorded_before_its_signal_completes_then_invalidated_then_read_index_advances()
 {
    let q = MockQueue::new(8);
    let s = MockSignals::new(&[1]);
    let h = s.handle(0);
    let log = RefCell::new(Vec::new());
    let mut sink = LogSink(VecSink::new(), &log);
    let mut state = QueueState::default();
    let bytes = dispatch_bytes(1, h);
    q.submit(&bytes);

    let out = Processor::default().drain(
        &mut state,
        QID,
        &LogQueue(&q, &log),
        &LogSignals(&s, &log),
        &mut sink,
    );

    assert_eq!(out, DrainOutcome::Idle);
    assert_eq!(
        *log.borrow(),
        vec![
            Ev::Record(0),
            Ev::Complete(h),
            Ev::StoreHeader(0, INVALID_HEADER),
            Ev::StoreReadIndex(1),
        ]
    );
    assert_eq!(s.value(h), 0);
    let rec = &sink.0.records[0];
    assert_eq!(rec.status, Status::Validated);
    assert_eq!(rec.reasons, ReasonSet::EMPTY);
    assert_eq!(rec.raw, bytes);
    assert_eq!(state.observed_through, 1);
}

#[test]
fn completion_is_a_decrement_by_one_so_a_signal_starting_at_2_ends_at_1() {
    let mut r = Rig::new(8, &[2]);
    let h = r.s.handle(0);
    r.q.submit(&dispatch_bytes(1, h));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.s.value(h), 1);
    // A second packet on the same signal takes it to 0, as hardware would.
    r.q.submit(&dispatch_bytes(2, h));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.s.value(h), 0);
}

#[test]
fn a_null_completion_signal_is_validated_and_nothing_is_completed() {
    let mut r = Rig::new(8, &[5]);
    r.q.submit(&dispatch_bytes(1, 0));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records()[0].status, Status::Validated);
    assert_eq!(r.s.value(r.s.handle(0)), 5);
    assert_eq!(r.q.read_index(), 1);
    assert_eq!(r.q.header(0), INVALID_HEADER);
}

#[test]
fn a_rejected_packet_leaves_its_completion_signal_untouched_but_is_invalidated_and_advanced() {
    let q = MockQueue::new(8);
    let s = MockSignals::new(&[1]);
    let h = s.handle(0);
    let log = RefCell::new(Vec::new());
    let mut sink = LogSink(VecSink::new(), &log);
    let mut state = QueueState::default();
    let mut p = valid_dispatch(0x1000, h);
    p.grid_size_x = 0;
    let bytes = encode_kernel_dispatch(&p);
    q.submit(&bytes);

    let out = Processor::default().drain(
        &mut state,
        QID,
        &LogQueue(&q, &log),
        &LogSignals(&s, &log),
        &mut sink,
    );

    assert_eq!(out, DrainOutcome::Idle);
    assert_eq!(
        *log.borrow(),
        vec![
            Ev::Record(0),
            Ev::StoreHeader(0, INVALID_HEADER),
            Ev::StoreReadIndex(1),
        ]
    );
    assert_eq!(s.value(h), 1);
    let rec = &sink.0.records[0];
    assert_eq!(rec.status, Status::Rejected);
    assert_eq!(
        rec.reasons.iter().collect::<Vec<_>>(),
        [Reason::GridSizeZero]
    );
    assert_eq!(rec.raw, bytes);
    assert_eq!(q.read_index(), 1);
    assert_eq!(q.header(0), INVALID_HEADER);
}

#[test]
fn a_batch_under_one_doorbell_is_processed_in_order_each_once() {
    let mut r = Rig::new(16, &[5]);
    let h = r.s.handle(0);
    for id in 1..=5 {
        r.q.submit(&dispatch_bytes(id, h));
    }
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let idx: Vec<u64> = r.records().iter().map(|x| x.packet_index).collect();
    assert_eq!(idx, [0, 1, 2, 3, 4]);
    for (i, rec) in r.records().iter().enumerate() {
        assert_eq!(rec.raw, dispatch_bytes(i as u64 + 1, h));
        assert_eq!(rec.queue_id, QID);
    }
    assert_eq!(r.s.value(h), 0);
    // A second doorbell with nothing new records nothing.
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 5);
}

#[test]
fn indices_wrap_past_the_ring_size() {
    let mut r = Rig::new(4, &[]);
    let mut next = 1;
    for batch in [3u64, 4, 3] {
        for _ in 0..batch {
            r.q.submit(&dispatch_bytes(next, 0));
            next += 1;
        }
        assert_eq!(r.drain(), DrainOutcome::Idle);
    }
    assert_eq!(r.records().len(), 10);
    for (i, rec) in r.records().iter().enumerate() {
        assert_eq!(rec.packet_index, i as u64);
        assert_eq!(rec.raw, dispatch_bytes(i as u64 + 1, 0));
        assert_eq!(rec.status, Status::Validated);
    }
    assert_eq!(r.q.read_index(), 10);
    assert_eq!(r.state.observed_through, 10);
    for slot in 0..4 {
        assert_eq!(r.q.header(slot), INVALID_HEADER);
    }
}

#[test]
fn an_unpublished_slot_stalls_the_drain_and_resumes_once_published() {
    let mut r = Rig::new(8, &[]);
    let first = r.q.reserve(3);
    assert_eq!(first, 0);
    r.q.publish(0, &dispatch_bytes(1, 0));
    r.q.write_body(1, &dispatch_bytes(2, 0));
    r.q.publish(2, &dispatch_bytes(3, 0));

    assert_eq!(r.drain(), DrainOutcome::Stalled { index: 1 });
    assert_eq!(r.records().len(), 1);
    assert_eq!(r.state.stalls, 1);
    assert_eq!(r.q.read_index(), 1);
    // A doorbell from someone else while still unpublished: still stalled,
    // still no record for it.
    assert_eq!(r.drain(), DrainOutcome::Stalled { index: 1 });
    assert_eq!(r.records().len(), 1);
    assert_eq!(r.state.stalls, 2);

    r.q.publish_header(1, &dispatch_bytes(2, 0));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let idx: Vec<u64> = r.records().iter().map(|x| x.packet_index).collect();
    assert_eq!(idx, [0, 1, 2]);
    assert_eq!(r.records()[1].raw, dispatch_bytes(2, 0));
    assert_eq!(r.q.read_index(), 3);
}

#[test]
fn barrier_and_waits_until_every_dependency_is_zero_then_records_once() {
    let mut r = Rig::new(8, &[1, 1, 1]);
    let (d0, d1, c) = (r.s.handle(0), r.s.handle(1), r.s.handle(2));
    r.q.submit(&encode_barrier_and(&barrier_and([d0, 0, d1, 0, 0], c)));
    r.q.submit(&dispatch_bytes(1, 0));

    assert_eq!(r.drain(), DrainOutcome::BlockedOnBarrier { index: 0 });
    assert!(r.records().is_empty());
    assert_eq!(r.q.read_index(), 0);
    assert_eq!(
        r.q.header(0) & 0xFF,
        u16::from(PacketType::BARRIER_AND.0),
        "a waiting barrier keeps its slot"
    );

    r.s.set(d0, 0);
    assert_eq!(r.drain(), DrainOutcome::BlockedOnBarrier { index: 0 });
    assert!(r.records().is_empty());
    assert_eq!(r.state.barrier_waits, 2);

    r.sink.advance(1000);
    r.s.set(d1, 0);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 2);
    let b = &r.records()[0];
    assert_eq!(b.packet_index, 0);
    assert_eq!(b.status, Status::Validated);
    assert_eq!(r.s.value(c), 0);
    // observed_ns is the first observation, so the record shows the wait.
    assert!(b.done_ns >= b.observed_ns + 1000);
    assert_eq!(r.state.pending_observed_ns, None);
    assert_eq!(r.records()[1].packet_index, 1);
}

#[test]
fn barrier_or_waits_until_any_dependency_is_zero() {
    let mut r = Rig::new(8, &[3, 2, 1]);
    let (d0, d1, c) = (r.s.handle(0), r.s.handle(1), r.s.handle(2));
    r.q.submit(&encode_barrier_or(&barrier_or([0, d0, 0, 0, d1], c)));

    assert_eq!(r.drain(), DrainOutcome::BlockedOnBarrier { index: 0 });
    r.s.set(d0, 1);
    assert_eq!(r.drain(), DrainOutcome::BlockedOnBarrier { index: 0 });
    assert!(r.records().is_empty());
    r.s.set(d1, 0);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 1);
    assert_eq!(r.records()[0].status, Status::Validated);
    assert_eq!(r.s.value(c), 0);
    assert_eq!(r.q.read_index(), 1);
}

#[test]
fn barriers_with_only_null_dependencies_are_satisfied_at_once() {
    let mut r = Rig::new(8, &[2]);
    let c = r.s.handle(0);
    r.q.submit(&encode_barrier_and(&barrier_and([0; 5], c)));
    r.q.submit(&encode_barrier_or(&barrier_or([0; 5], c)));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 2);
    assert!(r.records().iter().all(|x| x.status == Status::Validated));
    assert_eq!(r.s.value(c), 0);
}

#[test]
fn a_barrier_on_a_dependency_that_is_already_negative_keeps_waiting() {
    let mut r = Rig::new(8, &[-1]);
    let d = r.s.handle(0);
    r.q.submit(&encode_barrier_and(&barrier_and([d, 0, 0, 0, 0], 0)));
    assert_eq!(r.drain(), DrainOutcome::BlockedOnBarrier { index: 0 });
}

#[test]
fn an_unknown_completion_signal_is_rejected_and_never_written() {
    let mut r = Rig::new(8, &[1]);
    // MockSignals::complete panics on an unknown handle, so reaching the end
    // proves nothing was written through it.
    r.q.submit(&dispatch_bytes(1, 0xBAD0));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let rec = &r.records()[0];
    assert_eq!(rec.status, Status::Rejected);
    assert_eq!(
        rec.reasons.iter().collect::<Vec<_>>(),
        [Reason::CompletionSignalUnknown]
    );
    assert_eq!(r.q.read_index(), 1);
    assert_eq!(r.q.header(0), INVALID_HEADER);
}

#[test]
fn an_unknown_completion_signal_is_reported_alongside_field_reasons() {
    let mut r = Rig::new(8, &[]);
    let mut p = valid_dispatch(0, 0xBAD0);
    p.reserved0 = 1;
    r.q.submit(&encode_kernel_dispatch(&p));
    r.drain();
    assert_eq!(
        r.records()[0].reasons.iter().collect::<Vec<_>>(),
        [
            Reason::ReservedFieldNonzero,
            Reason::KernelObjectNull,
            Reason::CompletionSignalUnknown
        ]
    );
}

#[test]
fn an_unknown_dependency_signal_rejects_the_barrier_without_waiting() {
    let mut r = Rig::new(8, &[1, 1]);
    let (d, c) = (r.s.handle(0), r.s.handle(1));
    r.q.submit(&encode_barrier_and(&barrier_and([d, 0xBAD0, 0, 0, 0], c)));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let rec = &r.records()[0];
    assert_eq!(rec.status, Status::Rejected);
    assert_eq!(
        rec.reasons.iter().collect::<Vec<_>>(),
        [Reason::DependencySignalUnknown]
    );
    assert_eq!(r.s.value(c), 1, "completion untouched");
    assert_eq!(r.q.read_index(), 1);
}

#[test]
fn a_barrier_with_an_invalid_fence_scope_is_rejected_without_waiting() {
    let mut r = Rig::new(8, &[1, 1]);
    let (d, c) = (r.s.handle(0), r.s.handle(1));
    let mut b = barrier_or([d, 0, 0, 0, 0], c);
    b.header = make_header(
        PacketType::BARRIER_OR,
        true,
        FenceScope(3),
        FenceScope::NONE,
    );
    r.q.submit(&encode_barrier_or(&b));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records()[0].status, Status::Rejected);
    assert_eq!(r.s.value(c), 1);
}

#[test]
fn agent_and_vendor_packets_are_rejected_and_their_signals_left_alone() {
    let mut r = Rig::new(8, &[1]);
    let c = r.s.handle(0);
    let agent = AgentDispatchPacket {
        header: make_header(
            PacketType::AGENT_DISPATCH,
            false,
            FenceScope::NONE,
            FenceScope::NONE,
        ),
        completion_signal: softgpu_hsa::abi::HsaSignal { handle: c },
        ..AgentDispatchPacket::default()
    };
    r.q.submit(&encode_agent_dispatch(&agent));
    let mut vendor = [0u8; 64];
    vendor[56..].copy_from_slice(&c.to_le_bytes());
    r.q.submit(&vendor);
    let mut unknown = [0xEEu8; 64];
    unknown[0] = 0x80;
    r.q.submit(&unknown);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let reasons: Vec<Vec<Reason>> = r
        .records()
        .iter()
        .map(|x| x.reasons.iter().collect())
        .collect();
    assert_eq!(
        reasons,
        [
            vec![Reason::AgentDispatchUnsupported],
            vec![Reason::VendorSpecificUnsupported],
            vec![Reason::UnknownPacketType],
        ]
    );
    assert_eq!(r.s.value(c), 1);
    assert_eq!(r.q.read_index(), 3);
}

#[test]
fn the_processor_applies_its_configured_workgroup_limit() {
    let mut r = Rig::new(8, &[]);
    r.p = Processor::new(256);
    let mut p = valid_dispatch(64, 0);
    p.workgroup_size_x = 512;
    p.grid_size_x = 512;
    r.q.submit(&encode_kernel_dispatch(&p));
    r.drain();
    assert_eq!(
        r.records()[0].reasons.iter().collect::<Vec<_>>(),
        [Reason::WorkgroupSizeExceedsMax]
    );
}

#[test]
fn records_carry_queue_id_thread_and_ordered_timestamps() {
    let mut r = Rig::new(8, &[]);
    r.sink.thread = 4242;
    r.q.submit(&dispatch_bytes(1, 0));
    r.q.submit(&dispatch_bytes(2, 0));
    r.drain();
    let (a, b) = (&r.records()[0], &r.records()[1]);
    assert_eq!((a.queue_id, a.thread), (QID, 4242));
    // The first packet's done time is the reading it was observed at (the
    // stride's first), and within one drain the next packet is taken the
    // moment the previous one is done; the last packet reads the clock.
    assert!(a.observed_ns > 0);
    assert_eq!(a.done_ns, a.observed_ns);
    assert_eq!(a.done_ns, b.observed_ns);
    assert!(b.observed_ns < b.done_ns);
    assert_eq!(r.sink.clock(), 2, "two packets, two reads");
}

#[test]
fn a_one_packet_drain_reads_the_clock_once() {
    let mut r = Rig::new(8, &[]);
    for round in 1..=3u64 {
        r.q.submit(&dispatch_bytes(round, 0));
        assert_eq!(r.drain(), DrainOutcome::Idle);
        let rec = r.records()[round as usize - 1];
        assert_eq!(r.sink.clock(), round, "one read per one-packet drain");
        assert_eq!((rec.observed_ns, rec.done_ns), (round, round));
    }
}

#[test]
fn a_sink_that_wants_no_times_never_reads_the_clock() {
    let mut r = Rig::new(64, &[0]);
    r.sink.untimed = true;
    for i in 0..40 {
        r.q.submit(&dispatch_bytes(i + 1, 0));
    }
    assert_eq!(r.drain(), DrainOutcome::Idle);
    // A barrier that waits, then proceeds: its wait is not timed either.
    let dep = r.s.handle(0);
    r.s.set(dep, 1);
    r.q.submit(&encode_barrier_and(&barrier_and([dep, 0, 0, 0, 0], 0)));
    assert!(matches!(r.drain(), DrainOutcome::BlockedOnBarrier { .. }));
    assert_eq!(r.state.pending_observed_ns, None);
    r.s.set(dep, 0);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 41);
    assert_eq!(r.sink.clock(), 0, "no clock read");
    for rec in r.records() {
        assert_eq!((rec.observed_ns, rec.done_ns), (0, 0));
        assert_eq!(rec.status, Status::Validated);
    }
}

#[test]
fn a_drain_with_nothing_published_is_idle_and_touches_nothing() {
    let mut r = Rig::new(8, &[]);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert!(r.records().is_empty());
    assert_eq!(r.state.stalls, 0);
    // A write_index behind what was already observed is ignored.
    r.q.submit(&dispatch_bytes(1, 0));
    r.drain();
    r.q.set_write_index(0);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 1);
}

#[test]
fn the_gate_runs_one_drainer_and_a_ring_during_a_drain_causes_one_more_pass() {
    let gate = DoorbellGate::new();
    let mut passes = 0;
    let drained = gate.ring(|| {
        passes += 1;
        if passes == 1 {
            assert!(!gate.ring(|| unreachable!("a second drainer ran")));
            assert!(!gate.ring(|| unreachable!("a second drainer ran")));
        }
    });
    assert!(drained);
    assert_eq!(
        passes, 2,
        "the two rings during pass 1 are covered by pass 2"
    );
    assert!(gate.is_idle());
    assert!(gate.ring(|| passes += 1));
    assert_eq!(passes, 3);
}

#[test]
fn the_gate_reopens_when_a_drain_panics() {
    let gate = DoorbellGate::new();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gate.ring(|| panic!("drain failed"));
    }));
    assert!(caught.is_err());
    assert!(gate.is_idle());
    let mut ran = false;
    assert!(gate.ring(|| ran = true));
    assert!(ran);
}

fn barrier_value(signal: u64, value: i64, mask: i64, cond: u32, completion: u64) -> [u8; 64] {
    softgpu_hsa::aql::parse::encode_barrier_value(&softgpu_hsa::abi::AmdBarrierValuePacket {
        header: make_header(
            PacketType::VENDOR_SPECIFIC,
            true,
            FenceScope::SYSTEM,
            FenceScope::SYSTEM,
        ),
        amd_format: softgpu_hsa::abi::amd_packet_type::BARRIER_VALUE,
        signal: softgpu_hsa::abi::HsaSignal { handle: signal },
        value,
        mask,
        cond,
        completion_signal: softgpu_hsa::abi::HsaSignal { handle: completion },
        ..Default::default()
    })
}

#[test]
fn an_amd_barrier_value_packet_holds_the_queue_until_its_masked_condition_holds() {
    let mut r = Rig::new(8, &[0b1010, 1]);
    let (w, c) = (r.s.handle(0), r.s.handle(1));
    // Wait until (w & 0b0011) == 0b0001 (condition EQ).
    r.q.submit(&barrier_value(w, 0b0001, 0b0011, 0, c));
    r.q.submit(&dispatch_bytes(1, 0));
    assert_eq!(r.drain(), DrainOutcome::BlockedOnBarrier { index: 0 });
    assert!(r.records().is_empty());
    assert_eq!(
        r.s.value(c),
        1,
        "a waiting barrier-value packet completes nothing"
    );
    r.s.set(w, 0b0101);
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records().len(), 2);
    assert_eq!(r.records()[0].status, Status::Validated);
    assert!(r.records()[0].reasons.is_empty());
    assert_eq!(r.s.value(c), 0, "then it completes by a decrement of one");
}

#[test]
fn a_barrier_value_packet_with_a_bad_condition_or_unknown_signal_is_rejected() {
    let mut r = Rig::new(8, &[0, 1]);
    let (w, c) = (r.s.handle(0), r.s.handle(1));
    r.q.submit(&barrier_value(w, 0, -1, 7, c));
    r.q.submit(&barrier_value(0xdead_0000, 0, -1, 0, c));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let reasons: Vec<Vec<Reason>> = r
        .records()
        .iter()
        .map(|x| x.reasons.iter().collect())
        .collect();
    assert_eq!(
        reasons,
        [
            vec![Reason::BarrierValueConditionInvalid],
            vec![Reason::DependencySignalUnknown]
        ]
    );
    assert_eq!(r.s.value(c), 1);
}

#[test]
fn a_barrier_value_packet_with_a_null_signal_reads_zero_and_passes_a_zero_mask() {
    let mut r = Rig::new(8, &[1]);
    let c = r.s.handle(0);
    r.q.submit(&barrier_value(0, 0, 0, 0, c));
    assert_eq!(r.drain(), DrainOutcome::Idle);
    assert_eq!(r.records()[0].status, Status::Validated);
    assert_eq!(r.s.value(c), 0);
}

#[test]
fn a_dispatch_over_the_agents_lds_limit_is_rejected_and_one_at_the_limit_is_not() {
    let mut r = Rig::new(8, &[1, 1]);
    r.p = Processor::new(1024).with_lds_limit(65536);
    let (c0, c1) = (r.s.handle(0), r.s.handle(1));
    let mut over = valid_dispatch(64, c0);
    over.group_segment_size = 65536 + 1024;
    let mut at = valid_dispatch(128, c1);
    at.group_segment_size = 65536;
    r.q.submit(&encode_kernel_dispatch(&over));
    r.q.submit(&encode_kernel_dispatch(&at));
    r.drain();
    assert_eq!(
        r.records()[0].reasons.iter().collect::<Vec<_>>(),
        [Reason::GroupSegmentSizeExceedsLimit]
    );
    assert_eq!(r.records()[0].status, Status::Rejected);
    assert_eq!(r.s.value(c0), 1);
    assert_eq!(r.records()[1].status, Status::Validated);
    assert_eq!(r.s.value(c1), 0);
}

/// A kernel table with one HIP runtime blit kernel at 0x1000 and one user
/// kernel at 0x1040, both loaded for agent 0.
struct BlitTable;

impl softgpu_hsa::aql::KernelTable for BlitTable {
    fn lookup(&self, kernel_object: u64) -> softgpu_hsa::aql::KernelLookup {
        use softgpu_hsa::aql::{KernelInfo, KernelLookup, is_runtime_blit_kernel};
        let symbol = match kernel_object {
            0x1000 => "__amd_rocclr_fillBufferAligned.kd",
            0x1040 => "_Z4vaddPKfS0_Pfi.kd",
            _ => return KernelLookup::Unknown,
        };
        KernelLookup::Known(KernelInfo {
            runtime_blit: is_runtime_blit_kernel(symbol),
            ..KernelInfo::default()
        })
    }
}

#[test]
fn dispatches_of_runtime_blit_kernels_carry_the_not_executed_finding_from_the_processor() {
    let mut r = Rig::new(8, &[0]);
    let blit = encode_kernel_dispatch(&valid_dispatch(0x1000, 0));
    let user = encode_kernel_dispatch(&valid_dispatch(0x1040, 0));
    let mut bad_blit = valid_dispatch(0x1000, 0);
    bad_blit.grid_size_x = 0;
    let bad_blit = encode_kernel_dispatch(&bad_blit);
    for b in [&blit, &user, &bad_blit] {
        r.q.submit(b);
    }
    let out =
        r.p.drain_with(&mut r.state, QID, 0, &r.q, &r.s, &BlitTable, &mut r.sink);
    assert_eq!(out, DrainOutcome::Idle);
    let recs = r.records();
    assert_eq!(recs[0].status, Status::Validated);
    assert_eq!(
        recs[0].reasons.iter().collect::<Vec<_>>(),
        [Reason::RuntimeBlitKernelNotExecuted]
    );
    assert!(recs[1].reasons.is_empty(), "a user kernel has no finding");
    // A rejected blit dispatch still says that it did not run.
    assert_eq!(recs[2].status, Status::Rejected);
    assert_eq!(
        recs[2].reasons.iter().collect::<Vec<_>>(),
        [Reason::GridSizeZero, Reason::RuntimeBlitKernelNotExecuted]
    );
    // Observe mode (`classify`): the real runtime ran the blit.
    let (status, reasons) = r.p.classify(&blit, 0, &BlitTable);
    assert_eq!(status, Status::Validated);
    assert!(reasons.is_empty(), "{reasons:?}");
    // Without a kernel table nothing is known about blits.
    let mut plain = Rig::new(8, &[0]);
    plain.q.submit(&blit);
    plain.drain();
    assert!(plain.records()[0].reasons.is_empty());
}

#[test]
fn a_long_drain_reads_the_clock_for_its_first_and_last_packet_and_every_stride_between() {
    use softgpu_hsa::aql::CLOCK_STRIDE;
    let mut r = Rig::new(64, &[]);
    let n = 2 * CLOCK_STRIDE as u64 + 5;
    for i in 0..n {
        r.q.submit(&dispatch_bytes(i + 1, 0));
    }
    assert_eq!(r.drain(), DrainOutcome::Idle);
    let recs = r.records();
    assert_eq!(recs.len() as u64, n);
    // The mock clock ticks by one per read.
    let first = recs[0];
    assert_eq!(
        first.observed_ns, first.done_ns,
        "the first packet is done at the reading it was observed at"
    );
    for (i, w) in recs.windows(2).enumerate() {
        // Chained: the next packet is taken when the previous one is done.
        assert_eq!(w[1].observed_ns, w[0].done_ns, "packet {}", i + 1);
        assert!(w[1].done_ns >= w[1].observed_ns);
        let read = (i + 1) % CLOCK_STRIDE as usize == 0 || i + 2 == recs.len();
        assert_eq!(
            w[1].done_ns > w[1].observed_ns,
            read,
            "packet {}: read the clock = {read}",
            i + 1
        );
    }
    // One read for the first packet, then one per stride and the last.
    let reads = recs[recs.len() - 1].done_ns - recs[0].observed_ns + 1;
    assert_eq!(reads, 1 + 2 + 1);
    assert_eq!(r.sink.clock(), 4);
}
