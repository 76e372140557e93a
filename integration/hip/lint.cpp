// Pointer checks at launch, one class per run: `lint <class>` launches one kernel with one
// pointer argument that is, by class,
//   clean           inside a live hipMalloc allocation             pointer_in_allocation
//   use_after_free  inside an allocation hipFree'd before          pointer_use_after_free
//   pageable_host   malloc'd heap memory, then a stack array,       pointer_pageable_host (twice)
//                   neither registered nor locked
//   past_end        one element past the end of a hipMalloc'd array pointer_past_end
//   null            nullptr                                         pointer_null
//   no_access       device 0's memory, launched on device 1 with no pointer_no_access
//                   peer access enabled (needs two GPUs)
//   peer            the same after hipDeviceEnablePeerAccess        pointer_in_allocation
// The harness checks, through `softgpu inspect --format jsonl`, that each run's capture holds
// exactly that finding for the probe and no problem finding anywhere else.
//
// Every run first launches `lint_warmup` (no arguments): HIP 6.4 allocates buffers of its own
// at the first launch, and one of them can take the address a freed allocation had, which
// would make the use-after-free probe's address live again (correctly in_allocation).
#include "sg_hip.h"

#include <vector>

__global__ void lint_probe(float *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1.0f;
}

__global__ void lint_warmup() {}

static void launch(float *p, const char *what) {
    hipLaunchKernelGGL(lint_probe, dim3(1), dim3(64), 0, 0, p, 64);
    SG_LAUNCHED(what);
    SG_HIP(hipDeviceSynchronize());
}

int main(int argc, char **argv) {
    sg_start("lint");
    SG_EXPECT(argc == 2, "usage: lint <class>");
    const char *cls = argv[1];
    sg_fact("class", "%s", cls);
    int devices = 0;
    SG_HIP(hipGetDeviceCount(&devices));
    sg_fact("devices", "%d", devices);
    hipLaunchKernelGGL(lint_warmup, dim3(1), dim3(64), 0, 0);
    SG_LAUNCHED("lint_warmup");
    SG_HIP(hipDeviceSynchronize());
    if (!strcmp(cls, "clean")) {
        float *a = nullptr;
        SG_HIP(hipMalloc(&a, 4000));
        sg_fact("ptr", "%p", (void *)a);
        launch(a, "lint_probe (clean)");
        SG_HIP(hipFree(a));
    } else if (!strcmp(cls, "use_after_free")) {
        float *a = nullptr;
        SG_HIP(hipMalloc(&a, 1 << 20));
        SG_HIP(hipFree(a));
        sg_fact("ptr", "%p", (void *)(a + 4));
        launch(a + 4, "lint_probe (use after free)");
    } else if (!strcmp(cls, "pageable_host")) {
        std::vector<float> heap(4096);
        sg_fact("ptr", "%p", (void *)heap.data());
        launch(heap.data(), "lint_probe (heap)");
        float stack[64] = {};
        sg_fact("ptr2", "%p", (void *)stack);
        launch(stack, "lint_probe (stack)");
        sg_fact("stack0", "%g", stack[0]);
    } else if (!strcmp(cls, "past_end")) {
        float *a = nullptr;
        SG_HIP(hipMalloc(&a, 4000));
        sg_fact("base", "%p", (void *)a);
        sg_fact("ptr", "%p", (void *)(a + 1000));
        launch(a + 1000, "lint_probe (past the end)");
        SG_HIP(hipFree(a));
    } else if (!strcmp(cls, "null")) {
        launch(nullptr, "lint_probe (null)");
    } else if (!strcmp(cls, "no_access") || !strcmp(cls, "peer")) {
        SG_EXPECT(devices >= 2, "%s needs two devices, found %d", cls, devices);
        int can = 0;
        SG_HIP(hipDeviceCanAccessPeer(&can, 1, 0));
        sg_fact("can_access_peer", "%d", can);
        SG_HIP(hipSetDevice(0));
        float *a = nullptr;
        SG_HIP(hipMalloc(&a, 4000));
        sg_fact("ptr", "%p", (void *)a);
        SG_HIP(hipSetDevice(1));
        if (!strcmp(cls, "peer")) SG_HIP(hipDeviceEnablePeerAccess(0, 0));
        launch(a, "lint_probe (device 0 memory on device 1)");
        SG_HIP(hipSetDevice(0));
        SG_HIP(hipFree(a));
    } else {
        SG_FAIL("unknown class %s", cls);
    }
    sg_fact("done", "1");
    return 0;
}
