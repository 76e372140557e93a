// A kernel that calls printf. Under SoftGPU it never runs, so it prints nothing; the program
// must still finish normally (no hang in HIP's hostcall/printf machinery, no crash), exit 0.
// The kernel is launched twice: print_kernel<<<2, 32>>>(7) and <<<1, 64>>>(8).
#include "sg_hip.h"

__global__ void print_kernel(int tag) {
    printf("SG-KERNEL-PRINTF tag=%d block=%d thread=%d\n", tag, (int)blockIdx.x,
           (int)threadIdx.x);
}

int main() {
    sg_start("printf");
    print_kernel<<<2, 32>>>(7);
    SG_LAUNCHED("print_kernel");
    SG_HIP(hipDeviceSynchronize());
    hipStream_t s;
    SG_HIP(hipStreamCreate(&s));
    print_kernel<<<1, 64, 0, s>>>(8);
    SG_LAUNCHED("print_kernel");
    SG_HIP(hipStreamSynchronize(s));
    SG_HIP(hipStreamDestroy(s));
    SG_HIP(hipDeviceSynchronize());
    std::printf("both printf kernels were launched and synchronized\n");
    sg_done();
    return 0;
}
