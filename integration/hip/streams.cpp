// Streams, events and callbacks: the null stream, created streams (blocking and non-blocking),
// priority streams, a CU-mask stream; events with elapsed time, hipStreamWaitEvent across
// streams, hipStreamAddCallback (each callback runs once, in stream order, after the work before
// it), hipStreamQuery/hipEventQuery, hipStreamSynchronize, hipDeviceSynchronize.
//
// Each stream gets its own kernel (or geometry) so the harness can count its launches exactly:
//   k_null    <<<4, 64>>>   x2 on the null stream
//   k_stream  <<<8, 128>>>  x3 on s1 (blocking), x2 on s2 (non-blocking, after a wait on s1)
//   k_prio    <<<2, 256>>>  x1 on the greatest-priority stream, x1 on the least-priority one
//   k_cumask  <<<16, 64>>>  x2 on the CU-mask stream
//   k_timed   <<<32, 256>>> x1 between two events on s1
//   k_sync    <<<1, 64>>>   x5 on s1, each followed by hipStreamSynchronize, timed: the fastest
//                           is printed (`sg: launch_sync_min_us=`), so the harness can tell
//                           that a completion delay was really waited for
#include "sg_hip.h"

#include <atomic>
#include <cmath>

__global__ void k_null(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
__global__ void k_stream(int *p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }
__global__ void k_prio(int *p) { p[threadIdx.x] += 1; }
__global__ void k_cumask(float *p, float v) { p[blockIdx.x * blockDim.x + threadIdx.x] *= v; }
__global__ void k_timed(float *p) { p[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; }
__global__ void k_sync(int *p) { p[threadIdx.x] = 0; }

static std::atomic<int> g_calls{0};
static int g_order[8];

static void callback(hipStream_t, hipError_t status, void *user) {
    int id = (int)(intptr_t)user;
    int at = g_calls.fetch_add(1);
    if (status != hipSuccess) {
        std::fprintf(stderr, "FAIL: callback %d got status %d\n", id, (int)status);
        std::_Exit(1);
    }
    if (at < 8) g_order[at] = id;
}

int main() {
    sg_start("streams");
    int *buf = nullptr;
    float *fbuf = nullptr;
    SG_HIP(hipMalloc(&buf, 1 << 20));
    SG_HIP(hipMalloc(&fbuf, 1 << 20));

    // Null stream.
    k_null<<<4, 64>>>(buf);
    SG_LAUNCHED("k_null");
    hipLaunchKernelGGL(k_null, dim3(4), dim3(64), 0, 0, buf);
    SG_LAUNCHED("k_null");
    SG_HIP(hipStreamSynchronize(nullptr));

    // Created streams.
    hipStream_t s1, s2;
    SG_HIP(hipStreamCreate(&s1));
    SG_HIP(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
    unsigned flags = 99;
    SG_HIP(hipStreamGetFlags(s2, &flags));
    SG_EXPECT(flags == hipStreamNonBlocking, "hipStreamGetFlags(s2) = %u", flags);

    // Callbacks interleaved with work: each runs after what precedes it, in order.
    k_stream<<<8, 128, 0, s1>>>(buf, 1);
    SG_LAUNCHED("k_stream");
    SG_HIP(hipStreamAddCallback(s1, callback, (void *)(intptr_t)1, 0));
    k_stream<<<8, 128, 0, s1>>>(buf, 2);
    SG_LAUNCHED("k_stream");
    SG_HIP(hipStreamAddCallback(s1, callback, (void *)(intptr_t)2, 0));
    SG_HIP(hipStreamAddCallback(s1, callback, (void *)(intptr_t)3, 0));
    SG_HIP(hipStreamSynchronize(s1));
    SG_EXPECT(g_calls.load() == 3, "%d callbacks ran by hipStreamSynchronize, expected 3",
              g_calls.load());
    SG_EXPECT(g_order[0] == 1 && g_order[1] == 2 && g_order[2] == 3,
              "callbacks ran in the order %d %d %d, expected 1 2 3", g_order[0], g_order[1],
              g_order[2]);
    SG_HIP(hipStreamQuery(s1));
    sg_fact("callbacks", "%d", g_calls.load());

    // Launch + synchronize, timed: the wait for the stream's completion signal is real.
    double best = 1e9;
    for (int i = 0; i < 5; i++) {
        double t0 = sg_now_s();
        k_sync<<<1, 64, 0, s1>>>(buf);
        SG_LAUNCHED("k_sync");
        SG_HIP(hipStreamSynchronize(s1));
        double dt = sg_now_s() - t0;
        best = dt < best ? dt : best;
    }
    sg_fact("launch_sync_min_us", "%.0f", best * 1e6);

    // Events with elapsed time, and a cross-stream wait.
    hipEvent_t start, stop, mark;
    SG_HIP(hipEventCreate(&start));
    SG_HIP(hipEventCreate(&stop));
    SG_HIP(hipEventCreateWithFlags(&mark, hipEventDisableTiming));
    SG_HIP(hipEventRecord(start, s1));
    k_timed<<<32, 256, 0, s1>>>(fbuf);
    SG_LAUNCHED("k_timed");
    SG_HIP(hipEventRecord(stop, s1));
    k_stream<<<8, 128, 0, s1>>>(buf, 3);
    SG_LAUNCHED("k_stream");
    SG_HIP(hipEventRecord(mark, s1));
    SG_HIP(hipStreamWaitEvent(s2, mark, 0));
    k_stream<<<8, 128, 0, s2>>>(buf, 4);
    SG_LAUNCHED("k_stream");
    k_stream<<<8, 128, 0, s2>>>(buf, 5);
    SG_LAUNCHED("k_stream");
    SG_HIP(hipStreamAddCallback(s2, callback, (void *)(intptr_t)4, 0));
    SG_HIP(hipEventSynchronize(stop));
    SG_HIP(hipEventQuery(stop));
    float ms = -1.0f;
    SG_HIP(hipEventElapsedTime(&ms, start, stop));
    SG_EXPECT(std::isfinite(ms) && ms >= 0.0f, "hipEventElapsedTime = %f ms", (double)ms);
    sg_fact("elapsed_ms_nonnegative", "1");
    SG_HIP(hipStreamSynchronize(s2));
    SG_HIP(hipEventQuery(mark));
    SG_EXPECT(g_calls.load() == 4 && g_order[3] == 4, "callback 4 did not run after s2 synced");
    SG_HIP(hipStreamQuery(s2));

    // Priority streams.
    int least = 0, greatest = 0;
    SG_HIP(hipDeviceGetStreamPriorityRange(&least, &greatest));
    sg_fact("priority_range", "%d..%d", least, greatest);
    hipStream_t hi, lo;
    SG_HIP(hipStreamCreateWithPriority(&hi, hipStreamDefault, greatest));
    SG_HIP(hipStreamCreateWithPriority(&lo, hipStreamNonBlocking, least));
    int prio = 12345;
    SG_HIP(hipStreamGetPriority(hi, &prio));
    SG_EXPECT(prio == greatest, "hipStreamGetPriority(hi) = %d, expected %d", prio, greatest);
    SG_HIP(hipStreamGetPriority(lo, &prio));
    SG_EXPECT(prio == least, "hipStreamGetPriority(lo) = %d, expected %d", prio, least);
    k_prio<<<2, 256, 0, hi>>>(buf);
    SG_LAUNCHED("k_prio");
    k_prio<<<2, 256, 0, lo>>>(buf);
    SG_LAUNCHED("k_prio");
    SG_HIP(hipStreamSynchronize(hi));
    SG_HIP(hipStreamSynchronize(lo));

    // A stream restricted to some compute units.
    const uint32_t mask[2] = {0x0000FFFFu, 0x0u};
    hipStream_t cu;
    SG_HIP(hipExtStreamCreateWithCUMask(&cu, 2, mask));
    uint32_t got[4] = {0, 0, 0, 0};
    SG_HIP(hipExtStreamGetCUMask(cu, 4, got));
    sg_fact("cu_mask", "0x%08x", got[0]);
    k_cumask<<<16, 64, 0, cu>>>(fbuf, 2.0f);
    SG_LAUNCHED("k_cumask");
    k_cumask<<<16, 64, 0, cu>>>(fbuf, 3.0f);
    SG_LAUNCHED("k_cumask");
    SG_HIP(hipStreamSynchronize(cu));

    SG_HIP(hipDeviceSynchronize());
    SG_HIP(hipEventDestroy(start));
    SG_HIP(hipEventDestroy(stop));
    SG_HIP(hipEventDestroy(mark));
    for (hipStream_t st : {s1, s2, hi, lo, cu}) SG_HIP(hipStreamDestroy(st));
    SG_HIP(hipFree(buf));
    SG_HIP(hipFree(fbuf));
    SG_HIP(hipDeviceSynchronize());
    sg_done();
    return 0;
}
