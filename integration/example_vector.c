/*
 * SoftGPU's bundled example: a raw-HSA program that launches "vector add" and a
 * 3D stencil the way a runtime would, synchronises with a barrier, and submits
 * one deliberately malformed packet.
 *
 * Run it under the shim (./scripts/example does this):
 *   LD_PRELOAD=target/release/libsoftgpu_hsa.so SOFTGPU_CAPTURE=x.sgcap ./example_vector
 *
 * Under SoftGPU kernels never run. Every valid packet completes under the
 * diagnostic contract (label diagnostic_complete_no_execution: its completion
 * signal is decremented, but no kernel executed, so the output buffer is left
 * as it was). The malformed packet is rejected (diagnostic_rejected): its
 * completion signal is left untouched and the queue moves on.
 *
 * The kernel objects are fake, so do not run this on a real GPU without the shim.
 */
#include "common.h"

typedef struct {
    float *a;
    float *b;
    float *c;
    uint32_t n;
    uint32_t pad;
} vector_add_args;

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    sg_print_kernel_objects();
    hsa_queue_t *q = sg_queue_create(&ctx, 256);

    const uint32_t n = 4096;
    float *a = sg_kernarg_alloc(&ctx, n * sizeof(float));
    float *b = sg_kernarg_alloc(&ctx, n * sizeof(float));
    float *c = sg_kernarg_alloc(&ctx, n * sizeof(float));
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
        c[i] = -1.0f;
    }
    vector_add_args *args = sg_kernarg_alloc(&ctx, sizeof *args);
    args->a = a;
    args->b = b;
    args->c = c;
    args->n = n;
    uint64_t vector_add = sg_kernel_object(0);
    uint64_t stencil = sg_kernel_object(1);

    /* 1. vector_add over 1024 elements, with a completion signal. */
    hsa_signal_t done1 = sg_signal(1);
    sg_dispatch d = sg_dispatch_1d(1024, 256, vector_add, args, done1);
    uint64_t i1 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_complete(&ctx, done1, "vector_add 1024");
    printf("packet %llu: kernel_dispatch vector_add grid 1024 workgroup 256 -> completion signal 1 -> 0\n",
           (unsigned long long)i1);

    /* 2. vector_add over all 4096 elements, no completion signal (like a HIP launch). */
    d = sg_dispatch_1d(n, 256, vector_add, args, SG_NO_SIGNAL);
    uint64_t i2 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    printf("packet %llu: kernel_dispatch vector_add grid %u workgroup 256, no completion signal\n",
           (unsigned long long)i2, n);

    /* 3. A 3D stencil: grid 64x64x4, workgroup 8x8x4, 1 KiB of LDS. */
    hsa_signal_t done3 = sg_signal(1);
    sg_dispatch s;
    memset(&s, 0, sizeof s);
    s.setup = 3;
    s.workgroup[0] = 8;
    s.workgroup[1] = 8;
    s.workgroup[2] = 4;
    s.grid[0] = 64;
    s.grid[1] = 64;
    s.grid[2] = 4;
    s.group_segment_size = 1024;
    s.kernel_object = stencil;
    s.kernarg_address = (uint64_t)(uintptr_t)args;
    s.completion_signal = done3;
    uint64_t i3 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &s);
    sg_wait_complete(&ctx, done3, "stencil 3D");
    printf("packet %llu: kernel_dispatch stencil grid 64x64x4 workgroup 8x8x4 -> completion signal 1 -> 0\n",
           (unsigned long long)i3);

    /* 4. A synchronising barrier, as hipDeviceSynchronize would submit. */
    hsa_signal_t sync1 = sg_signal(1);
    uint64_t i4 = sg_submit_barrier(q, SG_BARRIER_AND_HEADER, NULL, 0, sync1);
    sg_wait_complete(&ctx, sync1, "barrier_and");
    printf("packet %llu: barrier_and -> completion signal 1 -> 0\n", (unsigned long long)i4);

    /* 5. A malformed dispatch: workgroup size 0. It must be rejected, signal untouched. */
    hsa_signal_t bad = sg_signal(1);
    d = sg_dispatch_1d(1024, 0, vector_add, args, bad);
    uint64_t i5 = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_read_index(q, i5 + 1, "rejected packet");
    sg_expect_unchanged(&ctx, bad, 1, "rejected packet");
    printf("packet %llu: kernel_dispatch with workgroup size 0 -> rejected, completion signal stays 1\n",
           (unsigned long long)i5);

    /* 6. The queue keeps going after a rejection. */
    hsa_signal_t sync2 = sg_signal(1);
    uint64_t i6 = sg_submit_barrier(q, SG_BARRIER_AND_HEADER, NULL, 0, sync2);
    sg_wait_complete(&ctx, sync2, "final barrier_and");
    printf("packet %llu: barrier_and -> completion signal 1 -> 0\n", (unsigned long long)i6);

    /* Kernels never ran: c[] still holds what the host wrote. */
    printf("c[1] = %.1f (a real vector_add would give %.1f; SoftGPU never runs kernels)\n", (double)c[1],
           (double)(a[1] + b[1]));
    printf("submitted 6 packets: 3 dispatches validated, 1 rejected, 2 barriers\n");
    printf("sg: packets=6\n");

    hsa_signal_destroy(done1);
    hsa_signal_destroy(done3);
    hsa_signal_destroy(sync1);
    hsa_signal_destroy(bad);
    hsa_signal_destroy(sync2);
    sg_kernarg_free(args);
    sg_kernarg_free(a);
    sg_kernarg_free(b);
    sg_kernarg_free(c);
    sg_shutdown(q);
    return 0;
}
