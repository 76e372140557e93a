// LDS (group segment) sizes in dispatch packets: static `__shared__` arrays, dynamic
// `extern __shared__` memory given at launch, both together, the whole 64 KiB, and launches
// over the limit (HIP must refuse them: no packet).
//
// Launches (blocks x threads, dynamic bytes -> group_segment_size = static + dynamic):
//   lds_static   8 x 256, 0      -> 1024         x1
//   lds_dynamic  8 x 256, 4096   -> 4096         x1
//   lds_dynamic  2 x 64,  65536  -> 65536        x1   (all of it)
//   lds_both     4 x 128, 2048   -> 1024 + 2048  x2
//   lds_dynamic  1 x 64,  65540  -> refused by HIP (both versions check the dynamic size)
//   lds_both     1 x 64,  65536  -> 1024 static + 65536 dynamic: HIP 5.2 refuses it; HIP 6.4
//                                   submits it. The program says which
//                                   (`sg: over_limit_static_plus_dynamic=refused|submitted`);
//                                   a submitted one must be rejected by SoftGPU, as a real GPU
//                                   could not run it.
#include "sg_hip.h"

__global__ void lds_static(float *out) {
    __shared__ float tile[256];  // 1024 bytes of static LDS
    tile[threadIdx.x] = out[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[255 - threadIdx.x];
}

__global__ void lds_dynamic(float *out) {
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = out[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x];
}

__global__ void lds_both(float *out) {
    __shared__ float tile[256];  // 1024 bytes of static LDS
    extern __shared__ float dyn[];
    tile[threadIdx.x] = out[threadIdx.x];
    dyn[threadIdx.x] = out[threadIdx.x + blockDim.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[255 - threadIdx.x] + dyn[threadIdx.x];
}

static void expect_refused(const char *what, hipError_t launched) {
    hipError_t last = hipGetLastError();  // also clears it
    hipError_t e = launched != hipSuccess ? launched : last;
    SG_EXPECT(e != hipSuccess, "%s: HIP accepted a launch over the 64 KiB LDS limit", what);
    std::printf("%s refused: %d (%s)\n", what, (int)e, hipGetErrorString(e));
    SG_HIP(hipGetLastError());
}

int main() {
    sg_start("lds");
    hipDeviceProp_t prop;
    SG_HIP(hipGetDeviceProperties(&prop, 0));
    sg_fact("shared_mem_per_block", "%zu", (size_t)prop.sharedMemPerBlock);
    float *buf = nullptr;
    SG_HIP(hipMalloc(&buf, 1 << 20));

    hipFuncAttributes attr;
    SG_HIP(hipFuncGetAttributes(&attr, reinterpret_cast<const void *>(lds_static)));
    sg_fact("static_lds.lds_static", "%zu", (size_t)attr.sharedSizeBytes);
    SG_HIP(hipFuncGetAttributes(&attr, reinterpret_cast<const void *>(lds_both)));
    sg_fact("static_lds.lds_both", "%zu", (size_t)attr.sharedSizeBytes);
    SG_HIP(hipFuncGetAttributes(&attr, reinterpret_cast<const void *>(lds_dynamic)));
    sg_fact("static_lds.lds_dynamic", "%zu", (size_t)attr.sharedSizeBytes);

    lds_static<<<8, 256, 0>>>(buf);
    SG_LAUNCHED("lds_static");
    lds_dynamic<<<8, 256, 4096>>>(buf);
    SG_LAUNCHED("lds_dynamic 4096");
    lds_dynamic<<<2, 64, 65536>>>(buf);
    SG_LAUNCHED("lds_dynamic 65536");
    hipStream_t s;
    SG_HIP(hipStreamCreate(&s));
    lds_both<<<4, 128, 2048, s>>>(buf);
    SG_LAUNCHED("lds_both 2048");
    hipLaunchKernelGGL(lds_both, dim3(4), dim3(128), 2048, s, buf);
    SG_LAUNCHED("lds_both 2048");
    SG_HIP(hipStreamSynchronize(s));
    SG_HIP(hipDeviceSynchronize());

    // Over the limit: refused at launch, nothing reaches a queue.
    void *args[] = {&buf};
    expect_refused("lds_dynamic with 65540 bytes",
                   hipLaunchKernel(reinterpret_cast<const void *>(lds_dynamic), dim3(1), dim3(64),
                                   args, 65540, nullptr));
    hipError_t both = hipLaunchKernel(reinterpret_cast<const void *>(lds_both), dim3(1), dim3(64),
                                      args, 65536, s);
    hipError_t both_last = hipGetLastError();
    bool refused = both != hipSuccess || both_last != hipSuccess;
    std::printf("lds_both with 1024 + 65536 bytes: %s by HIP\n", refused ? "refused" : "submitted");
    sg_fact("over_limit_static_plus_dynamic", refused ? "refused" : "submitted");
    SG_HIP(hipDeviceSynchronize());
    SG_HIP(hipStreamDestroy(s));
    SG_HIP(hipFree(buf));
    sg_done();
    return 0;
}
