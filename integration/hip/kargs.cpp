// Kernel arguments: one kernel with float, int and pointer arguments, launched
// with valid device pointers, with a pointer freed before the launch (use after
// free) and with a null pointer. The harness checks that the capture decodes to
// exactly the values passed, and that the pointer checks name each case.
#include "sg_hip.h"

__global__ void kargs_probe(float f, int i, unsigned long long u, float *p, const int *q) {
    if (p) p[threadIdx.x] = f + i + u + (q ? q[0] : 0);
}

int main() {
    sg_start("kargs");
    float *a = nullptr;
    int *b = nullptr;
    SG_HIP(hipMalloc(&a, 4000));
    SG_HIP(hipMalloc(&b, 64));
    sg_fact("a", "%p", (void *)a);
    sg_fact("b", "%p", (void *)b);
    hipLaunchKernelGGL(kargs_probe, dim3(1), dim3(64), 0, 0, 2.5f, -7, 0x123456789ull, a, b);
    SG_LAUNCHED("kargs_probe (clean)");
    SG_HIP(hipDeviceSynchronize());
    int *freed = nullptr;
    SG_HIP(hipMalloc(&freed, 1 << 20));
    sg_fact("freed", "%p", (void *)freed);
    SG_HIP(hipFree(freed));
    hipLaunchKernelGGL(kargs_probe, dim3(1), dim3(64), 0, 0, 1.0f, 3, 1ull, a, freed + 4);
    SG_LAUNCHED("kargs_probe (use after free)");
    hipLaunchKernelGGL(kargs_probe, dim3(1), dim3(64), 0, 0, 1.0f, 4, 2ull, (float *)nullptr, b);
    SG_LAUNCHED("kargs_probe (null)");
    SG_HIP(hipDeviceSynchronize());
    SG_HIP(hipFree(a));
    SG_HIP(hipFree(b));
    sg_fact("done", "1");
    return 0;
}
