// A kernel and a global variable, for integration/attr_guard.c: the executable
// and both kinds of symbol it asks every attribute of.
#include <hip/hip_runtime.h>
__device__ int sg_guard_global[16];
extern "C" __global__ void sg_guard_kernel(int *out) { out[threadIdx.x] = sg_guard_global[threadIdx.x & 15]; }
