// LDS (group segment) sizes in dispatch packets: static `__shared__` arrays, dynamic
// `extern __shared__` memory given at launch, both together, the whole 64 KiB, and launches
// over the limit.
//
// Launches (blocks x threads, dynamic bytes -> group_segment_size = static + dynamic):
//   lds_static   8 x 256, 0      -> 1024         x1
//   lds_dynamic  8 x 256, 4096   -> 4096         x1
//   lds_dynamic  2 x 64,  65536  -> 65536        x1   (all of it)
//   lds_both     4 x 128, 2048   -> 1024 + 2048  x2
//   lds_dynamic  1 x 64,  65540  -> refused by HIP (every version checks the dynamic size)
//   lds_both     1 x 64,  65536  -> 1024 static + 65536 dynamic, launched last: HIP 5.2 refuses
//                                   it (`sg: over_limit_static_plus_dynamic=refused`, then the
//                                   program finishes). HIP 6.4 and 7.2 submit it; SoftGPU rejects
//                                   the packet (group_segment_size_exceeds_limit), leaves its
//                                   completion signal untouched and calls the queue's error
//                                   callback with HSA_STATUS_ERROR_INVALID_ALLOCATION, as ROCr
//                                   does on a GPU. HIP's callback (CLR's callbackQueue) prints
//                                   "Callback: Queue 0x... aborting with error :
//                                   HSA_STATUS_ERROR_INVALID_ALLOCATION: ... code: 0x1003"; then
//                                   - HIP 6.4 calls abort(): the process ends by SIGABRT, at any
//                                     moment after the launch (the callback runs on another
//                                     thread), so nothing the program prints after the launch is
//                                     certain;
//                                   - HIP 7.2 (HIP_SKIP_ABORT_ON_GPU_ERROR, on by default) marks
//                                     the device in error instead: the program waits until a
//                                     hipDeviceSynchronize returns the error
//                                     (`sg: gpu_error_after_over_limit=700`,
//                                     hipErrorIllegalAddress), sees every later call return it
//                                     too, and finishes. The launch itself may already return
//                                     700, when the callback ran before it returned.
//   So every check and fact of the program comes before that launch
//   (`sg: checks_before_over_limit=done`, flushed like every fact), and the program says
//   `sg: over_limit_static_plus_dynamic=refused|submitted` after it (on HIP 6.4, if the abort
//   comes later).
#include "sg_hip.h"

#include <thread>

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
    // Everything the program checks is done: on HIP 6.4 the launch below ends the process.
    sg_fact("checks_before_over_limit", "done");

    // 1024 static + 65536 dynamic bytes. HIP 5.2 refuses the launch (hipErrorOutOfMemory). A
    // submitted packet is rejected, and HIP 7.2 may already return the device's error from the
    // launch itself (the queue's callback ran first): that is not a refusal.
    hipError_t both = hipLaunchKernel(reinterpret_cast<const void *>(lds_both), dim3(1), dim3(64),
                                      args, 65536, s);
    std::printf("lds_both with 1024 + 65536 bytes: the launch returned %d (%s)\n", (int)both,
                hipGetErrorString(both));
    if (both != hipSuccess && both != hipErrorIllegalAddress) {
        sg_fact("over_limit_static_plus_dynamic", "refused");
        (void)hipGetLastError();  // the launch's error, kept until read
        SG_HIP(hipGetLastError());
        SG_HIP(hipStreamDestroy(s));
        SG_HIP(hipFree(buf));
        sg_done();
        return 0;
    }
    sg_fact("over_limit_static_plus_dynamic", "submitted");
    // A GPU raises a queue error for the packet, and the queue's callback says so, on another
    // thread, at a moment of its own: wait until HIP reports it (HIP 6.4 aborts meanwhile).
    hipError_t sync = hipSuccess;
    for (double until = sg_now_s() + 20; sync == hipSuccess && sg_now_s() < until;) {
        sync = hipDeviceSynchronize();
        if (sync == hipSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    sg_fact("gpu_error_after_over_limit", "%d", (int)sync);
    std::printf("hipDeviceSynchronize after the launch: %d (%s)\n", (int)sync,
                hipGetErrorString(sync));
    // The device stays in error: every later call returns it.
    sg_fact("after_gpu_error.hipGetLastError", "%d", (int)hipGetLastError());
    sg_fact("after_gpu_error.hipStreamDestroy", "%d", (int)hipStreamDestroy(s));
    sg_fact("after_gpu_error.hipFree", "%d", (int)hipFree(buf));
    sg_done();
    return 0;
}
