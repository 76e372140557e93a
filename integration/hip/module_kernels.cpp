// Kernels for module.cpp, built on their own into a code object with
// `hipcc --genco --offload-arch=gfx90a module_kernels.cpp -o module_kernels.co` (the harness
// does this) and loaded at run time with hipModuleLoad / hipModuleLoadData.
#include <hip/hip_runtime.h>

// extern "C": the symbol is `module_scale.kd`, the name `module_scale`.
extern "C" __global__ void module_scale(float *p, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= s;
}

// C++ linkage: the symbol is `_Z10module_addPfPKfi.kd`, the name
// `module_add(float*, float const*, int)`.
__global__ void module_add(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += in[i];
}

// A 3D launch with dynamic LDS.
extern "C" __global__ void module_3d(int *p) {
    extern __shared__ int scratch[];
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    scratch[t] = t;
    __syncthreads();
    int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    p[b * blockDim.x * blockDim.y * blockDim.z + t] = scratch[(t + 1) % (blockDim.x * blockDim.y)];
}

// A module-scope variable, reached with hipModuleGetGlobal.
__device__ int module_counter[64];
