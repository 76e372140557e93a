//! Bytes as a sequence of queue operations (publish, reserve without
//! publishing, late publish, doorbell/drain, signal change, limit change)
//! against the mock producer, with the processor checked against a model
//! after every drain. See `softgpu_hsa::aql::mock::replay_ops`.

/// One fuzz input (the target's whole body).
pub fn run(data: &[u8]) {
    let _ = softgpu_hsa::aql::mock::replay_ops(data);
}
