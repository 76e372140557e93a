//! Bytes as a sequence of queue operations (publish, reserve without
//! publishing, late publish, doorbell/drain, signal change, limit change)
//! against the mock producer, with the processor checked against a model
//! after every drain. See `softgpu_hsa::aql::mock::replay_ops`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    softgpu_hsa::aql::mock::replay_ops(data);
});
