// A program that exits while 3 host threads are still launching: each thread
// has its own stream and launches tick<<<t + 1, 64>>> then synchronises, over
// and over, counting the launches whose completion it observed. main waits
// until each has observed 100, then calls exit(0) with the threads still
// going. An atexit handler registered before HIP starts (so it runs after
// the shim's, which finalises the capture) waits until each thread has
// observed 20 more from its own start, then prints every thread's count: every one of those
// launches must be in the capture, the later ones after its trailer, and the
// capture must say it is incomplete. It then ends the process with _exit(0):
// what exit() would do next is run HIP's own library destructors under the
// still-launching threads, which crashes inside libamdhip64 on both HIP
// versions whatever runtime is below (C++ leaves that race undefined); the
// capture's promise is about the packets, which are in the file by then.
#include "sg_hip.h"

#include <atomic>
#include <cstdlib>
#include <thread>
#include <unistd.h>

static const int kThreads = 3;

__global__ void tick(int *p, int t) { p[blockIdx.x * blockDim.x + threadIdx.x] = t; }

static std::atomic<long> g_observed[kThreads];
static long g_at_exit[kThreads];

// Runs after the shim's exit hook (registered before the first HIP call). It
// counts from its own start, when the capture is finalised: counting from
// when the exit began let the threads reach their quota while the shim was
// still finishing, so no launch came after the trailer (a flaky failure).
static void after_finish() {
    for (int t = 0; t < kThreads; t++) g_at_exit[t] = g_observed[t].load();
    double deadline = sg_now_s() + 20;
    for (int t = 0; t < kThreads; t++)
        while (g_observed[t].load() < g_at_exit[t] + 20 && sg_now_s() < deadline)
            std::this_thread::yield();
    for (int t = 0; t < kThreads; t++) {
        char key[32];
        std::snprintf(key, sizeof key, "observed_%d", t);
        sg_fact(key, "%ld", g_observed[t].load());
    }
    sg_fact("done", "1");
    std::fflush(stdout);
    _exit(0);
}

int main() {
    std::atexit(after_finish);
    sg_start("exit_launching");
    int *buf = nullptr;
    SG_HIP(hipMalloc(&buf, 1 << 16));
    for (int t = 0; t < kThreads; t++) {
        std::thread([t, buf] {
            SG_HIP(hipSetDevice(0));
            hipStream_t s;
            SG_HIP(hipStreamCreate(&s));
            for (;;) {
                hipLaunchKernelGGL(tick, dim3(t + 1), dim3(64), 0, s, buf, t);
                SG_LAUNCHED("tick");
                SG_HIP(hipStreamSynchronize(s));
                g_observed[t].fetch_add(1);
            }
        }).detach();
    }
    double deadline = sg_now_s() + 60;
    for (int t = 0; t < kThreads; t++)
        while (g_observed[t].load() < 100 && sg_now_s() < deadline) std::this_thread::yield();
    sg_fact("threads", "%d", kThreads);
    std::exit(0); // the threads are still launching
}
