/*
 * Barrier-AND and barrier-OR packets, with dependency signals.
 *
 * Packets, in order (all validated):
 *   0  barrier_and, no deps (HIP's sync barrier, header 0x1503)   completes at once
 *   1  barrier_and, dep D=1                                       held until the host sets D=0
 *   2  dispatch after it in the same queue                        held with it, then completes
 *   3  barrier_or, deps D1=1 and D2=1                             held until the host sets D2=0
 *   4  dispatch after it                                          held with it, then completes
 *   5  barrier_and, 5 deps all already 0                          completes at once
 *   6  barrier_or, deps E1=1 and E2=0                             completes at once (E2 is 0)
 *
 * The host releases barriers with hsa_signal_store_screlease on the dependency,
 * without ringing the doorbell again: the runtime must notice on its own.
 */
#include "common.h"

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    sg_print_kernel_objects();
    hsa_queue_t *q = sg_queue_create(&ctx, 64);
    void *kernarg = sg_kernarg_alloc(&ctx, 64);

    /* 0: a sync barrier with no dependencies. */
    SG_EXPECT(SG_BARRIER_AND_HEADER == 0x1503, "HIP's sync barrier header is 0x1503, got 0x%x",
              (unsigned)SG_BARRIER_AND_HEADER);
    hsa_signal_t c0 = sg_signal(1);
    uint64_t i0 = sg_submit_barrier(q, SG_BARRIER_AND_HEADER, NULL, 0, c0);
    sg_wait_complete(&ctx, c0, "barrier_and without deps");
    printf("packet %llu: barrier_and without dependencies completed\n", (unsigned long long)i0);

    /* 1+2: barrier_and on D holds itself and the dispatch behind it. */
    hsa_signal_t dep = sg_signal(1);
    hsa_signal_t c1 = sg_signal(1);
    hsa_signal_t c2 = sg_signal(1);
    uint64_t i1 = sg_reserve(q, 2);
    sg_dispatch d = sg_dispatch_1d(256, 64, sg_kernel_object(0), kernarg, c2);
    sg_put_dispatch(q, i1 + 1, SG_DISPATCH_HEADER, &d);
    sg_put_barrier(q, i1, SG_BARRIER_AND_HEADER, &dep, 1, c1);
    sg_ring(q, i1 + 1);
    sg_expect_unchanged(&ctx, c1, 1, "barrier_and while its dependency is 1");
    sg_expect_unchanged(&ctx, c2, 1, "dispatch behind a held barrier_and");
    sg_expect_read_index_held(q, i1, "queue behind a held barrier_and");
    printf("packet %llu: barrier_and held for %u ms while its dependency is 1; packet %llu held behind it\n",
           (unsigned long long)i1, 2 * SG_HOLD_MS, (unsigned long long)(i1 + 1));
    hsa_signal_store_screlease(dep, 0);
    sg_wait_complete(&ctx, c1, "barrier_and after its dependency went to 0");
    sg_wait_complete(&ctx, c2, "dispatch after the barrier_and completed");
    printf("dependency set to 0: barrier_and and the dispatch behind it completed\n");

    /* 3+4: barrier_or on D1, D2; releasing either one is enough. */
    hsa_signal_t d1 = sg_signal(1);
    hsa_signal_t d2 = sg_signal(1);
    hsa_signal_t c3 = sg_signal(1);
    hsa_signal_t c4 = sg_signal(1);
    uint64_t i3 = sg_reserve(q, 2);
    hsa_signal_t or_deps[2] = {d1, d2};
    d = sg_dispatch_1d(512, 64, sg_kernel_object(1), kernarg, c4);
    sg_put_barrier(q, i3, SG_BARRIER_OR_HEADER, or_deps, 2, c3);
    sg_put_dispatch(q, i3 + 1, SG_DISPATCH_HEADER, &d);
    sg_ring(q, i3 + 1);
    sg_expect_unchanged(&ctx, c3, 1, "barrier_or while both dependencies are 1");
    sg_expect_unchanged(&ctx, c4, 1, "dispatch behind a held barrier_or");
    sg_expect_read_index_held(q, i3, "queue behind a held barrier_or");
    printf("packet %llu: barrier_or held while both dependencies are 1\n", (unsigned long long)i3);
    hsa_signal_store_screlease(d2, 0);
    sg_wait_complete(&ctx, c3, "barrier_or after one dependency went to 0");
    sg_wait_complete(&ctx, c4, "dispatch after the barrier_or completed");
    SG_EXPECT(hsa_signal_load_scacquire(d1) == 1, "barrier_or changed its dependency signal");
    printf("one dependency set to 0: barrier_or and the dispatch behind it completed\n");

    /* 5: barrier_and whose five dependencies are all already satisfied. */
    hsa_signal_t zeros[5];
    for (int i = 0; i < 5; i++)
        zeros[i] = sg_signal(0);
    hsa_signal_t c5 = sg_signal(1);
    uint64_t i5 = sg_submit_barrier(q, SG_BARRIER_AND_HEADER, zeros, 5, c5);
    sg_wait_complete(&ctx, c5, "barrier_and with 5 satisfied deps");
    printf("packet %llu: barrier_and with 5 satisfied dependencies completed\n", (unsigned long long)i5);

    /* 6: barrier_or with one dependency already 0. */
    hsa_signal_t e1 = sg_signal(1);
    hsa_signal_t e2 = sg_signal(0);
    hsa_signal_t or2[2] = {e1, e2};
    hsa_signal_t c6 = sg_signal(1);
    uint64_t i6 = sg_submit_barrier(q, SG_BARRIER_OR_HEADER, or2, 2, c6);
    sg_wait_complete(&ctx, c6, "barrier_or with one satisfied dep");
    printf("packet %llu: barrier_or with one satisfied dependency completed\n", (unsigned long long)i6);

    SG_EXPECT(i6 == 6, "expected 7 packets at indices 0..6, last was %llu", (unsigned long long)i6);
    printf("sg: packets=7\n");

    hsa_signal_t all[] = {c0, dep, c1, c2, d1, d2, c3, c4, c5, e1, e2, c6};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        SG_CHECK(hsa_signal_destroy(all[i]));
    for (int i = 0; i < 5; i++)
        SG_CHECK(hsa_signal_destroy(zeros[i]));
    sg_kernarg_free(kernarg);
    sg_shutdown(q);
    return 0;
}
