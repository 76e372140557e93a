//! The queue processor. (Interface fixed by the skeleton.)

/// Per-queue processor state.
#[derive(Debug, Default)]
pub struct QueueState {
    /// Next logical index to observe (everything below has its one record).
    pub observed_through: u64,
    /// Times a drain stopped at a slot whose type was still INVALID.
    pub stalls: u64,
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
}
