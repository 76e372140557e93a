/*
 * A reserved slot that is published late holds back the packets after it.
 *
 * Reserve slots 0 and 1. Publish slot 1 and ring the doorbell with index 1, while
 * slot 0 still has its INVALID header. For SG_HOLD_MS nothing may happen: slot 1's
 * completion signal stays 1 and the read index stays 0. Then publish slot 0 and
 * ring again: both complete, and the capture holds exactly one record for each,
 * slot 0 first.
 *
 * Slot 0: grid 128, kernel object 0. Slot 1: grid 256, kernel object 1.
 */
#include "common.h"

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    sg_print_kernel_objects();
    hsa_queue_t *q = sg_queue_create(&ctx, 64);
    void *kernarg = sg_kernarg_alloc(&ctx, 64);

    hsa_signal_t s0 = sg_signal(1);
    hsa_signal_t s1 = sg_signal(1);
    uint64_t first = sg_reserve(q, 2);
    SG_EXPECT(first == 0, "first slot is %llu, expected 0", (unsigned long long)first);

    uint16_t header0 = *(volatile uint16_t *)sg_slot(q, first);
    SG_EXPECT((header0 & 0xffu) == HSA_PACKET_TYPE_INVALID,
              "a fresh slot's header type is %u, expected HSA_PACKET_TYPE_INVALID", header0 & 0xffu);

    sg_dispatch late = sg_dispatch_1d(128, 64, sg_kernel_object(0), kernarg, s0);
    sg_dispatch early = sg_dispatch_1d(256, 64, sg_kernel_object(1), kernarg, s1);
    sg_put_dispatch(q, first + 1, SG_DISPATCH_HEADER, &early);
    sg_ring(q, first + 1);

    sg_expect_unchanged(&ctx, s1, 1, "slot 1 while slot 0 is unpublished");
    sg_expect_read_index_held(q, first, "read index while slot 0 is unpublished");
    SG_EXPECT(hsa_signal_load_scacquire(s0) == 1, "slot 0's signal changed before it was published");
    printf("slot %llu published and rung while slot %llu is not: nothing processed for %u ms\n",
           (unsigned long long)(first + 1), (unsigned long long)first, 2 * SG_HOLD_MS);

    sg_put_dispatch(q, first, SG_DISPATCH_HEADER, &late);
    sg_ring(q, first + 1);
    sg_wait_complete(&ctx, s0, "slot 0 after it was published");
    sg_wait_complete(&ctx, s1, "slot 1 after slot 0 was published");
    sg_wait_read_index(q, first + 2, "both slots");
    printf("slot %llu published and rung: both packets completed, in index order\n", (unsigned long long)first);

    /* The queue is reusable afterwards: the next packet lands at index 2 and completes. */
    hsa_signal_t s2 = sg_signal(1);
    sg_dispatch next = sg_dispatch_1d(64, 64, sg_kernel_object(2), kernarg, s2);
    uint64_t i2 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &next);
    sg_wait_complete(&ctx, s2, "packet after the late slot");
    printf("packet %llu: completed\n", (unsigned long long)i2);
    printf("sg: packets=3\n");

    SG_CHECK(hsa_signal_destroy(s0));
    SG_CHECK(hsa_signal_destroy(s1));
    SG_CHECK(hsa_signal_destroy(s2));
    sg_kernarg_free(kernarg);
    sg_shutdown(q);
    return 0;
}
