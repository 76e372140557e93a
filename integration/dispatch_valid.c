/*
 * Valid kernel dispatches complete under the diagnostic contract.
 *
 * Packets, in order (all validated, kernels never run):
 *   0  1D grid 1024 wg 64, barrier bit, system/system scopes; signal 1 -> 0
 *   1  3D grid 64x32x8 wg 8x8x4, agent/agent scopes;           signal 1 -> 0
 *   2  2D grid 128x64 wg 16x16, no fences (none/none);         signal 1 -> 0
 *   3  1D, no completion signal (handle 0);                    read index moves past it
 *   4  1D, completion signal starting at 2;                    ends at 1, and stays 1
 *   5  1D, kernarg in malloc'd memory (not the shim's pool);   signal 1 -> 0
 *   6  1D, private segment 256 B and group segment 4096 B;     signal 1 -> 0
 */
#include "common.h"

static sg_dispatch with_dims(uint16_t dims, uint32_t gx, uint32_t gy, uint32_t gz, uint16_t wx, uint16_t wy,
                             uint16_t wz, uint64_t kobj, const void *kernarg, hsa_signal_t sig) {
    sg_dispatch d;
    memset(&d, 0, sizeof d);
    d.setup = dims;
    d.grid[0] = gx;
    d.grid[1] = gy;
    d.grid[2] = gz;
    d.workgroup[0] = wx;
    d.workgroup[1] = wy;
    d.workgroup[2] = wz;
    d.kernel_object = kobj;
    d.kernarg_address = (uint64_t)(uintptr_t)kernarg;
    d.completion_signal = sig;
    return d;
}

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    sg_print_kernel_objects();
    hsa_queue_t *q = sg_queue_create(&ctx, 128);
    void *kernarg = sg_kernarg_alloc(&ctx, 256);

    /* 0: 1D with barrier bit and system scopes. */
    hsa_signal_t s0 = sg_signal(1);
    sg_dispatch d = with_dims(1, 1024, 1, 1, 64, 1, 1, sg_kernel_object(0), kernarg, s0);
    uint64_t i0 = sg_submit_dispatch(
        q, sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM), &d);
    sg_wait_complete(&ctx, s0, "1D dispatch");
    printf("packet %llu: 1D dispatch completed (signal 1 -> 0)\n", (unsigned long long)i0);

    /* 1: 3D with agent scopes. */
    hsa_signal_t s1 = sg_signal(1);
    d = with_dims(3, 64, 32, 8, 8, 8, 4, sg_kernel_object(1), kernarg, s1);
    uint64_t i1 = sg_submit_dispatch(
        q, sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_AGENT), &d);
    sg_wait_complete(&ctx, s1, "3D dispatch");
    printf("packet %llu: 3D dispatch completed (signal 1 -> 0)\n", (unsigned long long)i1);

    /* 2: 2D with no fences. */
    hsa_signal_t s2 = sg_signal(1);
    d = with_dims(2, 128, 64, 1, 16, 16, 1, sg_kernel_object(2), kernarg, s2);
    uint64_t i2 = sg_submit_dispatch(
        q, sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, HSA_FENCE_SCOPE_NONE, HSA_FENCE_SCOPE_NONE), &d);
    sg_wait_complete(&ctx, s2, "2D dispatch");
    printf("packet %llu: 2D dispatch completed (signal 1 -> 0)\n", (unsigned long long)i2);

    /* 3: no completion signal; only the read index tells us it was processed. */
    d = sg_dispatch_1d(256, 64, sg_kernel_object(3), kernarg, SG_NO_SIGNAL);
    uint64_t i3 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_read_index(q, i3 + 1, "dispatch without completion signal");
    printf("packet %llu: dispatch without completion signal processed\n", (unsigned long long)i3);

    /* 4: completion is a decrement by one, not a store of 0: 2 -> 1. */
    hsa_signal_t s4 = sg_signal(2);
    d = sg_dispatch_1d(512, 128, sg_kernel_object(4), kernarg, s4);
    uint64_t i4 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    hsa_signal_value_t v4 = sg_wait_below(&ctx, s4, 2, "signal starting at 2");
    SG_EXPECT(v4 == 1, "completion took the signal from 2 to %lld, expected 1", (long long)v4);
    sg_wait_read_index(q, i4 + 1, "signal starting at 2");
    sg_expect_unchanged(&ctx, s4, 1, "signal starting at 2");
    printf("packet %llu: completion signal 2 -> 1 (decrement by one)\n", (unsigned long long)i4);

    /* 5: kernarg memory the shim did not allocate (16-byte aligned malloc). */
    void *foreign = aligned_alloc(64, 256);
    SG_EXPECT(foreign != NULL, "aligned_alloc failed");
    memset(foreign, 0, 256);
    hsa_signal_t s5 = sg_signal(1);
    d = sg_dispatch_1d(64, 64, sg_kernel_object(5), foreign, s5);
    uint64_t i5 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_complete(&ctx, s5, "dispatch with foreign kernarg");
    printf("packet %llu: dispatch with malloc'd kernarg completed\n", (unsigned long long)i5);

    /* 6: segment sizes are carried through. */
    hsa_signal_t s6 = sg_signal(1);
    d = sg_dispatch_1d(2048, 256, sg_kernel_object(6), kernarg, s6);
    d.private_segment_size = 256;
    d.group_segment_size = 4096;
    uint64_t i6 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_complete(&ctx, s6, "dispatch with segment sizes");
    printf("packet %llu: dispatch with private 256 B / group 4096 B completed\n", (unsigned long long)i6);

    SG_EXPECT(i6 == 6, "expected 7 packets at indices 0..6, last was %llu", (unsigned long long)i6);
    SG_EXPECT(hsa_queue_load_read_index_scacquire(q) == 7, "read index is not 7 after 7 packets");
    printf("sg: packets=7\n");

    hsa_signal_destroy(s0);
    hsa_signal_destroy(s1);
    hsa_signal_destroy(s2);
    hsa_signal_destroy(s4);
    hsa_signal_destroy(s5);
    hsa_signal_destroy(s6);
    sg_kernarg_free(kernarg);
    sg_shutdown(q);
    free(foreign);
    return 0;
}
