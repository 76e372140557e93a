// The module the witness self-test (selftest.cpp) loads with hipModuleLoad: built on its own with
// `hipcc --genco --offload-arch=gfx90a`.
#include <hip/hip_runtime.h>

extern "C" __global__ void m_kernel(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 5; }
