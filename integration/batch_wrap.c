/*
 * Batches under one doorbell, and wraparound past the end of the ring.
 *
 * Phase 1: reserve 8 slots, write 8 dispatches, ring the doorbell once with the
 *          index of the last one. Only the last has a completion signal.
 * Phase 2: on the same queue (64 slots when the agent allows it), submit
 *          3 * size + 8 more dispatches (200 for 64 slots) in chunks of 10, one
 *          doorbell per chunk, so the ring wraps around at least three times.
 *          Each chunk's last packet decrements one shared completion signal that
 *          starts at the number of chunks, so it ends at exactly 0.
 *
 * Packet k (logical index) has grid x = 64 * (k % 16 + 1), workgroup 64, and
 * kernel object k % 8. The harness checks every record against that pattern, so
 * a stale or skipped slot shows up.
 */
#include "common.h"

#define CHUNK 10u

static sg_dispatch packet_for(uint64_t k, void *kernarg, hsa_signal_t sig) {
    return sg_dispatch_1d((uint32_t)(64u * (k % 16u + 1u)), 64, sg_kernel_object((unsigned)(k % 8u)), kernarg, sig);
}

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    sg_print_kernel_objects();
    hsa_queue_t *q = sg_queue_create(&ctx, 64);
    void *kernarg = sg_kernarg_alloc(&ctx, 64);

    /* Phase 1: one doorbell for 8 packets. */
    hsa_signal_t batch_done = sg_signal(1);
    uint64_t first = sg_reserve(q, 8);
    for (uint64_t k = first; k < first + 8; k++) {
        sg_dispatch d = packet_for(k, kernarg, k == first + 7 ? batch_done : SG_NO_SIGNAL);
        sg_put_dispatch(q, k, SG_DISPATCH_HEADER, &d);
    }
    sg_ring(q, first + 7);
    sg_wait_complete(&ctx, batch_done, "batch of 8 under one doorbell");
    sg_wait_read_index(q, first + 8, "batch of 8 under one doorbell");
    printf("packets %llu..%llu: 8 dispatches under one doorbell completed\n", (unsigned long long)first,
           (unsigned long long)(first + 7));

    /* Phase 2: wrap around the ring at least three times. */
    uint64_t wrap = 3ull * q->size + 8u;
    uint64_t chunks = (wrap + CHUNK - 1) / CHUNK;
    hsa_signal_t wrap_done = sg_signal((hsa_signal_value_t)chunks);
    uint64_t start = first + 8;
    for (uint64_t sent = 0; sent < wrap;) {
        uint32_t n = (uint32_t)(wrap - sent < CHUNK ? wrap - sent : CHUNK);
        uint64_t base = sg_reserve(q, n);
        SG_EXPECT(base == start + sent, "chunk landed at %llu, expected %llu", (unsigned long long)base,
                  (unsigned long long)(start + sent));
        for (uint64_t k = base; k < base + n; k++) {
            sg_dispatch d = packet_for(k, kernarg, k == base + n - 1 ? wrap_done : SG_NO_SIGNAL);
            sg_put_dispatch(q, k, SG_DISPATCH_HEADER, &d);
        }
        sg_ring(q, base + n - 1);
        sent += n;
    }
    hsa_signal_value_t v = sg_wait_below(&ctx, wrap_done, 1, "wraparound");
    SG_EXPECT(v == 0, "shared completion signal ended at %lld, expected 0 (%llu decrements)", (long long)v,
              (unsigned long long)chunks);
    sg_wait_read_index(q, start + wrap, "wraparound");
    SG_EXPECT(hsa_queue_load_read_index_scacquire(q) == start + wrap, "read index went past the last packet");
    printf("packets %llu..%llu: %llu dispatches in %llu doorbells through a %u-slot ring completed\n",
           (unsigned long long)start, (unsigned long long)(start + wrap - 1), (unsigned long long)wrap,
           (unsigned long long)chunks, q->size);

    printf("sg: batch_packets=8\n");
    printf("sg: wrap_packets=%llu\n", (unsigned long long)wrap);
    printf("sg: packets=%llu\n", (unsigned long long)(8 + wrap));

    SG_CHECK(hsa_signal_destroy(batch_done));
    SG_CHECK(hsa_signal_destroy(wrap_done));
    sg_kernarg_free(kernarg);
    sg_shutdown(q);
    return 0;
}
