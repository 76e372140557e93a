/*
 * Queue create/destroy cycles: `queue_cycles N` creates a queue, makes one
 * synchronised launch on it and destroys it, N times. With capture on, the
 * capture's cost of a queue must go with the queue (the 1.x writer kept every
 * queue's ring forever: 200,000 cycles took 19.9 GB). scripts/bench-queue-cycles
 * measures RSS and time with capture on and off; the test runs a few thousand.
 */
#include "common.h"

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    sg_ctx ctx;
    sg_init(&ctx);
    hsa_signal_t s = sg_signal(1);
    for (unsigned long i = 0; i < n; i++) {
        hsa_queue_t *q = sg_queue_create(&ctx, 64);
        hsa_signal_store_screlease(s, 1);
        sg_dispatch d = sg_dispatch_1d(64, 64, sg_kernel_object(0), NULL, s);
        sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
        (void)sg_wait_below(&ctx, s, 1, "one launch per queue");
        SG_CHECK(hsa_queue_destroy(q));
    }
    printf("sg: cycles=%lu\n", n);
    return 0;
}
