#include <hip/hip_runtime.h>
extern "C" __global__ void k_args(int *out) { out[threadIdx.x] = 1; }
extern "C" __global__ void __launch_bounds__(64) k_max64(int *out) { out[threadIdx.x] = 2; }
extern "C" __global__ void k_lds(int *out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[255 - threadIdx.x];
}
extern "C" __global__ void k_private(int *out, int i) {
    volatile int a[512];
    for (int j = 0; j < 512; j++) a[j] = j * i;
    out[threadIdx.x] = a[(threadIdx.x * 7 + i) & 511];
}
