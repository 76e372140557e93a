// Launch throughput and start-up cost, for scripts/bench-launch (a measurement, not a test).
//
//   bench_launch THREADS LAUNCHES [args]
//                                   each of THREADS host threads launches LAUNCHES empty kernels
//                                   on its own stream (after a warm-up), then synchronizes;
//                                   prints sg: launches_per_s= (all threads, first start to last
//                                   finish). With `args`, the kernel takes arguments instead
//                                   (a device pointer, a float and an int: 24 bytes of kernarg
//                                   segment, the same values at every launch), so the shim copies
//                                   and checks a kernarg block per dispatch. Also prints
//                                   sg: cpu_ns_per_launch= (CPU time of the whole process, every
//                                   thread, the shim's writer included, from the start signal to
//                                   the last join, over the launches): a figure less sensitive to
//                                   the machine's other load than the rate; and
//                                   sg: writer_cpu_ns_per_launch= (the part of it spent on the
//                                   shim's capture writer thread, `softgpu-capture`).
//   bench_launch --startup          times HIP's start-up phases: hipInit, hipFree(0) (device and
//                                   context), the first stream and launch + sync (queue creation,
//                                   and HIP's blit kernels compiled through comgr).
#include "sg_hip.h"

#include <dirent.h>
#include <sys/resource.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

__global__ void empty_kernel() {}
__global__ void args_kernel(float *p, float a, int n) {
    if (n < 0) p[0] = a;  // never true: the arguments are used, nothing is written
}

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc == 2 && std::strcmp(argv[1], "--startup") == 0) {
        double t0 = sg_now_s();
        SG_HIP(hipInit(0));
        double t1 = sg_now_s();
        SG_HIP(hipFree(nullptr));
        double t2 = sg_now_s();
        hipStream_t s;
        SG_HIP(hipStreamCreate(&s));
        empty_kernel<<<1, 64, 0, s>>>();
        SG_LAUNCHED("empty_kernel");
        SG_HIP(hipStreamSynchronize(s));
        double t3 = sg_now_s();
        sg_fact("hip_init_ms", "%.3f", (t1 - t0) * 1e3);
        sg_fact("context_ms", "%.3f", (t2 - t1) * 1e3);
        sg_fact("first_launch_ms", "%.3f", (t3 - t2) * 1e3);
        SG_HIP(hipStreamDestroy(s));
        return 0;
    }
    SG_EXPECT(argc == 3 || (argc == 4 && std::strcmp(argv[3], "args") == 0),
              "usage: bench_launch THREADS LAUNCHES [args] | bench_launch --startup");
    const int threads = std::atoi(argv[1]);
    const int launches = std::atoi(argv[2]);
    const bool with_args = argc == 4;
    SG_EXPECT(threads >= 1 && launches >= 1, "bad arguments");
    SG_HIP(hipFree(nullptr));
    float *buf = nullptr;
    SG_HIP(hipMalloc(&buf, 4096));
    auto launch = [&](hipStream_t s) {
        if (with_args)
            args_kernel<<<1, 64, 0, s>>>(buf, 2.0f, 1000);
        else
            empty_kernel<<<1, 64, 0, s>>>();
    };

    auto cpu_s = [] {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
               (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    };
    // CPU time of the shim's capture writer thread (named softgpu-capture), in ns; 0 when there
    // is none (capture off).
    auto writer_ns = [] {
        double ns = 0;
        DIR *d = opendir("/proc/self/task");
        if (!d) return ns;
        while (struct dirent *e = readdir(d)) {
            if (e->d_name[0] == '.') continue;
            std::string base = std::string("/proc/self/task/") + e->d_name;
            std::ifstream comm(base + "/comm");
            std::string name;
            std::getline(comm, name);
            if (name != "softgpu-capture") continue;
            std::ifstream st(base + "/schedstat");
            double run = 0;
            if (st >> run) ns += run;
        }
        closedir(d);
        return ns;
    };
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<double> start(threads), end(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
        pool.emplace_back([&, t] {
            hipStream_t s;
            SG_HIP(hipStreamCreate(&s));
            for (int i = 0; i < 100; i++) launch(s);  // warm-up
            SG_LAUNCHED("warm-up");
            SG_HIP(hipStreamSynchronize(s));
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            start[t] = sg_now_s();
            for (int i = 0; i < launches; i++) launch(s);
            SG_LAUNCHED(with_args ? "args_kernel" : "empty_kernel");
            SG_HIP(hipStreamSynchronize(s));
            end[t] = sg_now_s();
            SG_HIP(hipStreamDestroy(s));
        });
    }
    while (ready.load() < threads) std::this_thread::yield();
    const double cpu0 = cpu_s();
    const double writer0 = writer_ns();
    go.store(true);
    for (auto &th : pool) th.join();
    const double cpu1 = cpu_s();
    const double writer1 = writer_ns();
    SG_HIP(hipFree(buf));
    double first = start[0], last = end[0];
    for (int t = 1; t < threads; t++) {
        first = std::min(first, start[t]);
        last = std::max(last, end[t]);
    }
    double total = (double)threads * (double)launches;
    sg_fact("threads", "%d", threads);
    sg_fact("launches", "%.0f", total);
    sg_fact("seconds", "%.6f", last - first);
    sg_fact("launches_per_s", "%.0f", total / (last - first));
    sg_fact("cpu_ns_per_launch", "%.1f", (cpu1 - cpu0) * 1e9 / total);
    sg_fact("writer_cpu_ns_per_launch", "%.1f", (writer1 - writer0) / total);
    return 0;
}
