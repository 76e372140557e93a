// Several host threads launching at once: 4 threads, each with its own stream, each launching
// kLaunches kernels, all released together by a barrier. Thread t launches
//   per_thread<<<t + 1, 64>>>   (grid (t + 1) * 64 work-items, workgroup 64)
// so the harness can count each thread's launches exactly. A fifth phase has all 4 threads
// launch `shared_stream_kernel<<<3, 32>>>` kLaunches/4 times each on one shared stream.
#include "sg_hip.h"

#include <atomic>
#include <thread>
#include <vector>

static const int kThreads = 4;
static const int kLaunches = 250;

__global__ void per_thread(int *p, int t) { p[blockIdx.x * blockDim.x + threadIdx.x] = t; }
__global__ void shared_stream_kernel(int *p) { p[threadIdx.x] += 1; }

static std::atomic<int> g_ready{0};

static void wait_all() {
    g_ready.fetch_add(1);
    while (g_ready.load() < kThreads) std::this_thread::yield();
}

int main() {
    sg_start("threads");
    int *buf = nullptr;
    SG_HIP(hipMalloc(&buf, 1 << 20));
    hipStream_t shared;
    SG_HIP(hipStreamCreate(&shared));

    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([t, buf, shared] {
            SG_HIP(hipSetDevice(0));
            hipStream_t s;
            SG_HIP(hipStreamCreate(&s));
            wait_all();
            for (int i = 0; i < kLaunches; i++) {
                hipLaunchKernelGGL(per_thread, dim3(t + 1), dim3(64), 0, s, buf, t);
                SG_LAUNCHED("per_thread");
            }
            SG_HIP(hipStreamSynchronize(s));
            for (int i = 0; i < kLaunches / 4; i++) {
                hipLaunchKernelGGL(shared_stream_kernel, dim3(3), dim3(32), 0, shared, buf);
                SG_LAUNCHED("shared_stream_kernel");
            }
            SG_HIP(hipStreamSynchronize(shared));
            SG_HIP(hipStreamDestroy(s));
        });
    }
    for (auto &th : threads) th.join();
    SG_HIP(hipDeviceSynchronize());
    SG_HIP(hipStreamDestroy(shared));
    SG_HIP(hipFree(buf));
    sg_fact("threads", "%d", kThreads);
    sg_fact("launches_per_thread", "%d", kLaunches);
    sg_fact("shared_launches_per_thread", "%d", kLaunches / 4);
    sg_done();
    return 0;
}
