//! The queue processor: applies the diagnostic completion contract to the
//! packets of one queue, in order, each exactly once.
//!
//! A [`Processor`] is stateless configuration (the agent's limits); the state
//! of one queue is a [`QueueState`] that the caller keeps next to the queue.
//! [`Processor::drain`] runs after a doorbell store and takes every packet in
//! `[observed_through, write_index)`:
//!
//! 1. Acquire-load the slot's header. Type still INVALID: the producer reserved
//!    the slot but has not published it. Stop ([`DrainOutcome::Stalled`]); the
//!    producer's own doorbell store will bring us back. No record yet.
//! 2. Copy the 64 bytes out, then parse and validate the copy, then check the
//!    signal handles it names against [`SignalOps::is_valid`].
//! 3. A valid barrier whose dependencies are not yet satisfied: stop
//!    ([`DrainOutcome::BlockedOnBarrier`]) without a record; the caller drains
//!    again when a signal changes and the same packet is examined afresh.
//! 4. Otherwise hand one [`PacketRecord`] to the sink, then (valid packets
//!    only) decrement the completion signal by one, then set the slot's header
//!    to INVALID (the value `1`, exactly as a freshly created ring holds), then
//!    release-store `read_index = index + 1`.
//!
//! The record goes to the sink before the signal moves, so anything a woken
//! waiter does next (including exiting the process) happens after the capture
//! holds the packet. The slot is invalidated before `read_index` moves, so the
//! producer can never have rewritten the slot by the time we invalidate it.
//!
//! Never blocks, spins, allocates, formats or logs; one drain per queue at a
//! time is the caller's job ([`DoorbellGate`] is one way to do it).

use core::sync::atomic::{AtomicU64, Ordering};

use super::parse::{
    ParsedPacket, Reason, ReasonSet, header_type, parse_supported_packet_with_limit,
};
use super::{
    KernelInfo, KernelLookup, KernelTable, MAX_WORKGROUP_SIZE, NoKernels, PacketRecord,
    QueueMemory, RecordSink, SignalOps, Status,
};
use crate::abi::PacketType;
use crate::abi::packet_offset as po;

/// The header the processor stores into a slot it has finished with: type
/// INVALID, every other header bit zero.
pub const INVALID_HEADER: u16 = PacketType::INVALID.0 as u16;

/// Within one drain, one clock reading is the done time of at most
/// `CLOCK_STRIDE` packets (the first and last packets have their own rules);
/// see [`Processor::drain_with`].
pub const CLOCK_STRIDE: u32 = 16;

/// Per-queue processor state. Start from `QueueState::default()`.
#[derive(Debug, Default)]
pub struct QueueState {
    /// Next logical index to observe (everything below has its one record).
    pub observed_through: u64,
    /// Times a drain stopped at a slot whose type was still INVALID.
    pub stalls: u64,
    /// Times a drain stopped at a barrier whose dependencies were unsatisfied.
    pub barrier_waits: u64,
    /// When the barrier now waiting at `observed_through` was first observed;
    /// becomes its record's `observed_ns`, so the record shows the wait.
    pub pending_observed_ns: Option<u64>,
}

/// Why a drain returned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DrainOutcome {
    /// Caught up with `write_index`.
    Idle,
    /// Stopped at an unpublished (INVALID) slot.
    Stalled { index: u64 },
    /// Stopped at a barrier whose dependencies are not yet satisfied.
    BlockedOnBarrier { index: u64 },
}

/// The processor configuration (agent limits).
#[derive(Clone, Copy, Debug)]
pub struct Processor {
    pub max_workgroup_size: u32,
    /// The agent's LDS limit per workgroup: a dispatch asking for more group
    /// segment (static + dynamic LDS) is rejected. `u32::MAX` = no limit.
    pub max_group_segment_size: u32,
}

impl Default for Processor {
    fn default() -> Self {
        Processor::new(MAX_WORKGROUP_SIZE)
    }
}

/// What to do with one published packet.
enum Verdict {
    /// Valid and ready: record (with any non-fatal findings), then complete
    /// this signal (0 = none).
    Complete {
        completion_signal: u64,
        findings: ReasonSet,
    },
    /// Invalid: record with these reasons; leave every signal alone.
    Reject(ReasonSet),
    /// A valid barrier whose dependencies are not satisfied yet.
    Wait,
}

impl Processor {
    /// A processor for an agent whose largest workgroup is `max_workgroup_size`.
    pub const fn new(max_workgroup_size: u32) -> Self {
        Processor {
            max_workgroup_size,
            max_group_segment_size: u32::MAX,
        }
    }

    /// The same processor, also rejecting dispatches whose group segment
    /// exceeds `bytes` (the agent's LDS per workgroup).
    pub const fn with_lds_limit(self, bytes: u32) -> Self {
        Processor {
            max_group_segment_size: bytes,
            ..self
        }
    }

    /// Process every published packet in `[state.observed_through,
    /// write_index)` of queue `queue_id`, in order, each exactly once.
    ///
    /// `write_index` is loaded once, at the start: packets published later come
    /// with their own doorbell store and so their own drain.
    pub fn drain<Q, S, K>(
        &self,
        state: &mut QueueState,
        queue_id: u64,
        q: &Q,
        s: &S,
        sink: &mut K,
    ) -> DrainOutcome
    where
        Q: QueueMemory + ?Sized,
        S: SignalOps + ?Sized,
        K: RecordSink + ?Sized,
    {
        self.drain_with(state, queue_id, 0, q, s, &NoKernels, sink)
    }

    /// [`Processor::drain`] with a kernel table: each dispatch is also checked
    /// against its kernel's descriptor and metadata, and against the agent
    /// (`agent`) that owns the queue.
    #[allow(clippy::too_many_arguments)]
    pub fn drain_with<Q, S, T, K>(
        &self,
        state: &mut QueueState,
        queue_id: u64,
        agent: u32,
        q: &Q,
        s: &S,
        kernels: &T,
        sink: &mut K,
    ) -> DrainOutcome
    where
        Q: QueueMemory + ?Sized,
        S: SignalOps + ?Sized,
        T: KernelTable + ?Sized,
        K: RecordSink + ?Sized,
    {
        let write_index = q.load_write_index();
        let mut thread = None;
        // Within one drain the processor goes straight from finishing one
        // packet to taking the next, so a packet's observed time is the
        // previous one's done time. A clock read costs more than the rest of
        // a packet's handling, so the clock is read when the drain takes its
        // first packet, then for the done time of a packet once the latest
        // reading has served CLOCK_STRIDE packets, and for the done time of
        // the last packet unless it was observed at that very reading (so a
        // one-packet drain reads the clock once). Between reads a packet
        // carries the latest reading as its done time. A sink that does not
        // want times gets 0 for both, and the clock is never read.
        let timed = sink.wants_times();
        // The latest reading in this drain, and how many finished packets
        // carry it as their done time.
        let mut reading: Option<u64> = None;
        let mut carried: u32 = 0;
        while state.observed_through < write_index {
            let index = state.observed_through;
            // Acquire: pairs with the producer's release store of the header,
            // so the body copied below is the one it wrote before publishing.
            let header = q.load_header(index);
            if header_type(header) == PacketType::INVALID {
                state.stalls += 1;
                return DrainOutcome::Stalled { index };
            }
            let observed_ns = match state.pending_observed_ns.take() {
                Some(t) => t,
                None => match reading {
                    Some(t) => t,
                    None if timed => {
                        let t = sink.now_ns();
                        reading = Some(t);
                        carried = 0;
                        t
                    }
                    None => 0,
                },
            };
            let raw = q.read_packet(index);
            let (status, reasons, completion_signal) =
                match self.judge(&raw, s, agent, kernels, true) {
                    Verdict::Wait => {
                        state.pending_observed_ns = timed.then_some(observed_ns);
                        state.barrier_waits += 1;
                        return DrainOutcome::BlockedOnBarrier { index };
                    }
                    Verdict::Complete {
                        completion_signal,
                        findings,
                    } => (Status::Validated, findings, completion_signal),
                    Verdict::Reject(reasons) => (Status::Rejected, reasons, 0),
                };
            let thread = *thread.get_or_insert_with(|| sink.thread_id());
            let last = index + 1 == write_index;
            let done_ns = match reading {
                // The reading this packet was observed at, or one carried
                // by fewer than CLOCK_STRIDE packets before it; the last
                // packet takes a fresh one unless it was observed at it.
                Some(t) if carried < CLOCK_STRIDE && !(last && carried > 0) => {
                    carried += 1;
                    t
                }
                _ if timed => {
                    let t = sink.now_ns();
                    reading = Some(t);
                    carried = 1;
                    t
                }
                _ => 0,
            };
            let rec = PacketRecord {
                queue_id,
                packet_index: index,
                raw,
                status,
                reasons,
                observed_ns,
                done_ns,
                thread,
            };
            sink.record(&rec);
            if completion_signal != 0 {
                s.complete(completion_signal);
            }
            q.store_header(index, INVALID_HEADER);
            q.store_read_index(index + 1);
            state.observed_through = index + 1;
        }
        DrainOutcome::Idle
    }

    /// Classify one packet without acting on it (observe mode: the real
    /// runtime, not SoftGPU, processes the packet). The same checks as a drain,
    /// except that signal handles cannot be validated (any non-null handle is
    /// taken as live) and barriers are never waited on. Returns the status and
    /// the reasons or findings.
    pub fn classify<T: KernelTable + ?Sized>(
        &self,
        raw: &[u8; 64],
        agent: u32,
        kernels: &T,
    ) -> (Status, ReasonSet) {
        struct Unchecked;
        impl SignalOps for Unchecked {
            fn is_valid(&self, handle: u64) -> bool {
                handle != 0
            }
            fn load(&self, _handle: u64) -> i64 {
                0
            }
            fn complete(&self, _handle: u64) {}
        }
        // The real runtime runs the packet, blits included: no "not executed".
        match self.judge(raw, &Unchecked, agent, kernels, false) {
            Verdict::Complete { findings, .. } => (Status::Validated, findings),
            Verdict::Wait => (Status::Validated, ReasonSet::EMPTY),
            Verdict::Reject(r) => (Status::Rejected, r),
        }
    }

    /// The verdict on one packet. `diagnostic`: SoftGPU completes the packet
    /// without running it (not observe mode), so a dispatch of one of the HIP
    /// runtime's blit kernels carries [`Reason::RuntimeBlitKernelNotExecuted`],
    /// whatever else is found.
    fn judge<S: SignalOps + ?Sized, T: KernelTable + ?Sized>(
        &self,
        raw: &[u8; 64],
        s: &S,
        agent: u32,
        kernels: &T,
        diagnostic: bool,
    ) -> Verdict {
        let parsed = parse_supported_packet_with_limit(raw, self.max_workgroup_size);
        if let Ok(ParsedPacket::KernelDispatch(p)) = &parsed {
            return self.judge_dispatch(p, s, agent, kernels, diagnostic);
        }
        let mut findings = ReasonSet::EMPTY;
        let mut reasons = match parsed {
            Ok(_) => ReasonSet::EMPTY,
            Err(r) => r,
        };
        let ty = header_type(u16::from_le_bytes([raw[po::HEADER], raw[po::HEADER + 1]]));
        let has_completion = matches!(
            ty,
            PacketType::KERNEL_DISPATCH
                | PacketType::BARRIER_AND
                | PacketType::BARRIER_OR
                | PacketType::AGENT_DISPATCH
        ) || matches!(parsed, Ok(ParsedPacket::BarrierValue(_)));
        // A clean dispatch went to `judge_dispatch` above: a dispatch here is
        // malformed, and a malformed dispatch of a blit kernel is still one
        // (cold path: rejects only).
        let blit = diagnostic
            && ty == PacketType::KERNEL_DISPATCH
            && matches!(
                kernels.lookup(handle_at(raw, po::KERNEL_OBJECT)),
                KernelLookup::Known(k) if k.runtime_blit
            );
        let completion = handle_at(raw, po::COMPLETION_SIGNAL);
        if has_completion && completion != 0 && !s.may_complete(completion) {
            reasons.insert(Reason::CompletionSignalUnknown);
        }
        let is_barrier = matches!(ty, PacketType::BARRIER_AND | PacketType::BARRIER_OR);
        if is_barrier && deps(raw).any(|h| !s.is_valid(h)) {
            reasons.insert(Reason::DependencySignalUnknown);
        }
        let value_signal = handle_at(raw, po::BARRIER_VALUE_SIGNAL);
        if let Ok(ParsedPacket::BarrierValue(_)) = parsed {
            // A null signal is allowed (HIP 6.x emits such packets with mask 0
            // as pure ordering markers); its value is taken as 0.
            if value_signal != 0 && !s.is_valid(value_signal) {
                reasons.insert(Reason::DependencySignalUnknown);
            }
        }
        if let Some(reject) = mark_blit_or_reject(reasons, &mut findings, blit) {
            return reject;
        }
        let ready = match parsed {
            // AND: every non-null dependency is 0 (vacuously true with none).
            Ok(ParsedPacket::BarrierAnd(_)) => deps(raw).all(|h| s.load(h) == 0),
            // OR: some non-null dependency is 0; with none at all there is
            // nothing to wait for, so it is satisfied.
            Ok(ParsedPacket::BarrierOr(_)) => {
                let mut any_dep = false;
                let mut any_zero = false;
                for h in deps(raw) {
                    any_dep = true;
                    if s.load(h) == 0 {
                        any_zero = true;
                        break;
                    }
                }
                any_zero || !any_dep
            }
            // AMD barrier-value: (signal & mask) cond value.
            Ok(ParsedPacket::BarrierValue(p)) => {
                let v = if value_signal == 0 {
                    0
                } else {
                    s.load(value_signal)
                } & p.mask;
                match p.cond {
                    0 => v == p.value,
                    1 => v != p.value,
                    2 => v < p.value,
                    _ => v >= p.value,
                }
            }
            _ => true,
        };
        if ready {
            Verdict::Complete {
                completion_signal: completion,
                findings,
            }
        } else {
            Verdict::Wait
        }
    }

    /// [`Processor::judge`] for a dispatch that parsed cleanly: the same
    /// checks in the same order, without the barrier and packet-type cases
    /// that cannot apply to it (a dispatch has a completion signal, names no
    /// dependency and never waits).
    #[inline]
    fn judge_dispatch<S: SignalOps + ?Sized, T: KernelTable + ?Sized>(
        &self,
        p: &crate::abi::KernelDispatchPacket,
        s: &S,
        agent: u32,
        kernels: &T,
        diagnostic: bool,
    ) -> Verdict {
        let mut findings = ReasonSet::EMPTY;
        let mut reasons = ReasonSet::EMPTY;
        if p.group_segment_size > self.max_group_segment_size {
            reasons.insert(Reason::GroupSegmentSizeExceedsLimit);
        }
        let mut blit = false;
        match kernels.lookup(p.kernel_object) {
            KernelLookup::NotTracked => {}
            KernelLookup::Unknown => findings.insert(Reason::UnknownKernelObject),
            KernelLookup::Known(k) if k.runtime_blit => {
                blit = true;
                check_against_kernel(p, &k, agent, &mut findings)
            }
            KernelLookup::Known(k) => check_against_kernel(p, &k, agent, &mut reasons),
        }
        let blit = blit && diagnostic;
        let completion = p.completion_signal.handle;
        if completion != 0 && !s.may_complete(completion) {
            reasons.insert(Reason::CompletionSignalUnknown);
        }
        if let Some(reject) = mark_blit_or_reject(reasons, &mut findings, blit) {
            return reject;
        }
        Verdict::Complete {
            completion_signal: completion,
            findings,
        }
    }
}

/// The end of every judgement: a blit dispatch carries its finding, and
/// any reason rejects the packet (a rejected blit carries the finding too,
/// and no other). `None`: nothing rejects it.
#[inline]
fn mark_blit_or_reject(
    mut reasons: ReasonSet,
    findings: &mut ReasonSet,
    blit: bool,
) -> Option<Verdict> {
    if blit {
        findings.insert(Reason::RuntimeBlitKernelNotExecuted);
    }
    if reasons.is_empty() {
        return None;
    }
    if blit {
        reasons.insert(Reason::RuntimeBlitKernelNotExecuted);
    }
    Some(Verdict::Reject(reasons))
}

/// A dispatch checked against the kernel it names.
fn check_against_kernel(
    p: &crate::abi::KernelDispatchPacket,
    k: &KernelInfo,
    agent: u32,
    reasons: &mut ReasonSet,
) {
    let wg = [
        u32::from(p.workgroup_size_x),
        u32::from(p.workgroup_size_y),
        u32::from(p.workgroup_size_z),
    ];
    let product = wg[0].saturating_mul(wg[1]).saturating_mul(wg[2]);
    if k.max_flat_workgroup_size != 0 && product > k.max_flat_workgroup_size {
        reasons.insert(Reason::WorkgroupSizeExceedsKernelMax);
    }
    if let Some(req) = k.reqd_workgroup_size {
        if req != wg {
            reasons.insert(Reason::WorkgroupSizeDiffersFromRequired);
        }
    }
    if p.group_segment_size < k.group_segment_fixed_size {
        reasons.insert(Reason::GroupSegmentSizeBelowStatic);
    }
    if p.private_segment_size < k.private_segment_fixed_size {
        reasons.insert(Reason::PrivateSegmentSizeBelowStatic);
    }
    if k.kernarg_size > 0 && p.kernarg_address == 0 {
        reasons.insert(Reason::KernargAddressNull);
    }
    if k.agent != agent {
        reasons.insert(Reason::KernelObjectWrongAgent);
    }
}

#[inline]
fn handle_at(raw: &[u8; 64], off: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&raw[off..off + 8]);
    u64::from_le_bytes(w)
}

/// The non-null dependency handles of a barrier packet.
#[inline]
fn deps(raw: &[u8; 64]) -> impl Iterator<Item = u64> + '_ {
    (0..5)
        .map(|i| handle_at(raw, po::DEP_SIGNAL + 8 * i))
        .filter(|&h| h != 0)
}

/// Decides which of several threads ringing one queue's doorbell drains it,
/// so that exactly one drain runs at a time and no ring is lost.
///
/// `pending` counts rings not yet covered by a drain. The ringer that moves it
/// from 0 becomes the drainer; everyone else just adds and leaves. The drainer
/// drains, then subtracts the rings it has covered; if more arrived meanwhile
/// it drains again. A ring that arrives after the final subtraction finds 0 and
/// drains itself.
///
/// Orderings: every update is `AcqRel`. A producer publishes its packet, then
/// rings (release); the drainer's next read-modify-write of `pending` sees that
/// ring and acquires, so the drain that follows sees the published header.
#[derive(Debug, Default)]
pub struct DoorbellGate {
    pending: AtomicU64,
}

impl DoorbellGate {
    pub const fn new() -> Self {
        DoorbellGate {
            pending: AtomicU64::new(0),
        }
    }

    /// Ring: if no drain is running, run `drain` (repeatedly, until no ring is
    /// left uncovered) on this thread and return `true`; otherwise leave the
    /// ring for the running drainer and return `false` at once.
    ///
    /// `drain` should run [`Processor::drain`] on the queue's state. A drain
    /// that stops at a stall or barrier is fine: the publish or signal change
    /// that unblocks it rings again.
    ///
    /// If `drain` panics the gate is reopened (the panic propagates), so a
    /// later ring can drain again.
    pub fn ring<F: FnMut()>(&self, mut drain: F) -> bool {
        if self.pending.fetch_add(1, Ordering::AcqRel) != 0 {
            return false;
        }
        let reopen = ReopenOnUnwind(&self.pending);
        let mut covered = 1;
        loop {
            drain();
            let before = self.pending.fetch_sub(covered, Ordering::AcqRel);
            if before == covered {
                core::mem::forget(reopen);
                return true;
            }
            covered = before - covered;
        }
    }

    /// Whether no drain is running or owed.
    pub fn is_idle(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }
}

/// Resets a gate's counter if its drainer unwinds.
struct ReopenOnUnwind<'a>(&'a AtomicU64);

impl Drop for ReopenOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}
