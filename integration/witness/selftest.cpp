// The witness's own test program (tests/realworld.rs runs it under witness.so and the shim on
// every HIP version): every way HIP offers to launch a kernel, once or more, so that the
// witness log can be checked against what this program did, and the capture against the log.
//
//   selftest MODULE.co
//
// What it does, in order (the test relies on it):
//   1. k_one<<<4, 64>>> on the null stream; hipLaunchKernel(k_one, 2, 48) on stream s1;
//      hipLaunchKernel_spt(k_two, 3, 64) (the per-thread default stream); hipExtLaunchKernel
//      (k_two, 5, 64) on s1.
//   2. From MODULE.co: hipModuleLaunchKernel(m_kernel, 6 blocks of 64) and
//      hipExtModuleLaunchKernel(m_kernel, 448 work-items in groups of 64) on s2. HIP 7 only:
//      hipLaunchKernelExC(k_two, 9 blocks of 64) on s1 and hipDrvLaunchKernelEx(m_kernel, 10
//      blocks of 64) on s2.
//   3. A launch HIP must refuse: 2048 work-items per block (prints its status).
//   4. hipLaunchCooperativeKernel(k_coop, 2, 64) on s1, hipLaunchCooperativeKernelMultiDevice
//      (k_coop, 2, 64) and hipExtLaunchMultiKernelMultiDevice (k_two, 4, 64) with one entry
//      each (statuses printed: a runtime
//      without cooperative queues refuses the cooperative ones, and they must not dispatch).
//   5. Stream capture on s3: k_one (7, 64) and k_two (8, 64) are captured, not dispatched; the
//      graph is instantiated and launched twice on s3.
//   6. An explicit graph: a kernel node k_two (9, 32) and a child graph holding k_one (10, 32);
//      the exec's kernel node is changed to 11 blocks (hipGraphExecKernelNodeSetParams), then
//      launched once on s1.
//   7. Three threads, each with its own stream, 20 launches of k_one each (thread t: 14 + t
//      blocks of 64; a shape per thread, because HIP 5.2 dispatches each stream's commands from
//      its own worker thread, so across streams the capture's order need not be the calls'
//      order, and identical launches on three streams could not be told apart); and two threads
//      launching k_two (2, 64) 20 times each on one shared stream s4 at the same time.
//   8. s5 is created, used (k_one 12, 64), destroyed, and a new stream created (its handle may be
//      the same) and used (k_one 13, 64).
//   9. The main thread launches k_last (1, 64) on the null stream and synchronises; then a
//      thread that made no HIP call calls exit(0) while the main thread waits: the witness must
//      still have the launch. (HIP 6.4.3 crashes in its own exit-time destructors when the thread
//      calling exit() has made HIP calls, so that thread makes none.)
#include <hip/hip_ext.h>
#include <hip/hip_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>
#include <vector>

extern "C" hipError_t hipLaunchKernel_spt(const void *, dim3, dim3, void **, size_t, hipStream_t);

#define CHECK(call)                                                                          \
    do {                                                                                     \
        hipError_t e_ = (call);                                                              \
        if (e_ != hipSuccess) {                                                              \
            std::printf("rw: error=%s status=%d (%s) at line %d\n", #call, (int)e_,           \
                        hipGetErrorName(e_), __LINE__);                                      \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

__global__ void k_one(int *p) { p[threadIdx.x] = 1; }
__global__ void k_two(int *p) { p[threadIdx.x] = 2; }
__global__ void k_coop(int *p) { p[threadIdx.x] = 3; }
__global__ void k_last(int *p) { p[threadIdx.x] = 4; }

static int *buffer;

static void launch(const void *f, unsigned blocks, unsigned block, hipStream_t s) {
    void *args[] = {&buffer};
    CHECK(hipLaunchKernel(f, dim3(blocks), dim3(block), args, 0, s));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: selftest MODULE.co\n");
        return 2;
    }
    CHECK(hipMalloc(&buffer, 1 << 20));
    hipStream_t s1, s2, s3, s4;
    CHECK(hipStreamCreate(&s1));
    CHECK(hipStreamCreate(&s2));
    CHECK(hipStreamCreate(&s3));
    CHECK(hipStreamCreate(&s4));
    void *args[] = {&buffer};

    // 1.
    k_one<<<4, 64>>>(buffer);
    CHECK(hipGetLastError());
    launch((const void *)k_one, 2, 48, s1);
    CHECK(hipLaunchKernel_spt((const void *)k_two, dim3(3), dim3(64), args, 0, nullptr));
    CHECK(hipExtLaunchKernel((const void *)k_two, dim3(5), dim3(64), args, 0, s1, nullptr,
                             nullptr, 0));

    // 2.
    hipModule_t module;
    hipFunction_t m_kernel;
    CHECK(hipModuleLoad(&module, argv[1]));
    CHECK(hipModuleGetFunction(&m_kernel, module, "m_kernel"));
    CHECK(hipModuleLaunchKernel(m_kernel, 6, 1, 1, 64, 1, 1, 0, s2, args, nullptr));
    CHECK(hipExtModuleLaunchKernel(m_kernel, 448, 1, 1, 64, 1, 1, 0, s2, args, nullptr));
#if HIP_VERSION_MAJOR >= 7
    // HIP 7's launches with a configuration: k_two in 9 blocks of 64 on s1, m_kernel in 10 on s2.
    hipLaunchConfig_t config{};
    config.gridDim = dim3(9);
    config.blockDim = dim3(64);
    config.stream = s1;
    CHECK(hipLaunchKernelExC(&config, (const void *)k_two, args));
    HIP_LAUNCH_CONFIG drv{};
    drv.gridDimX = 10;
    drv.gridDimY = drv.gridDimZ = 1;
    drv.blockDimX = 64;
    drv.blockDimY = drv.blockDimZ = 1;
    drv.hStream = s2;
    CHECK(hipDrvLaunchKernelEx(&drv, m_kernel, args, nullptr));
#endif

    // 3.
    hipError_t refused = hipLaunchKernel((const void *)k_one, dim3(1), dim3(2048), args, 0, s1);
    std::printf("rw: refused_status=%d\n", (int)refused);
    (void)hipGetLastError();

    // 4.
    hipError_t coop = hipLaunchCooperativeKernel((const void *)k_coop, dim3(2), dim3(64), args, 0,
                                                 s1);
    std::printf("rw: cooperative_status=%d\n", (int)coop);
    (void)hipGetLastError();
    hipLaunchParams one{};
    one.func = (void *)k_coop;
    one.gridDim = dim3(2);
    one.blockDim = dim3(64);
    one.args = args;
    one.stream = s1;
    hipError_t multi = hipLaunchCooperativeKernelMultiDevice(&one, 1, 0);
    std::printf("rw: cooperative_multi_status=%d\n", (int)multi);
    (void)hipGetLastError();
    one.func = (void *)k_two;
    one.gridDim = dim3(4);
    hipError_t ext_multi = hipExtLaunchMultiKernelMultiDevice(&one, 1, 0);
    std::printf("rw: ext_multi_status=%d\n", (int)ext_multi);
    (void)hipGetLastError();

    // 5.
    hipGraph_t captured;
    CHECK(hipStreamBeginCapture(s3, hipStreamCaptureModeGlobal));
    k_one<<<7, 64, 0, s3>>>(buffer);
    CHECK(hipGetLastError());
    k_two<<<8, 64, 0, s3>>>(buffer);
    CHECK(hipGetLastError());
    CHECK(hipStreamEndCapture(s3, &captured));
    hipGraphExec_t captured_exec;
    CHECK(hipGraphInstantiate(&captured_exec, captured, nullptr, nullptr, 0));
    CHECK(hipGraphLaunch(captured_exec, s3));
    CHECK(hipGraphLaunch(captured_exec, s3));
    CHECK(hipStreamSynchronize(s3));

    // 6.
    hipGraph_t graph, child;
    CHECK(hipGraphCreate(&graph, 0));
    CHECK(hipGraphCreate(&child, 0));
    hipKernelNodeParams p{};
    p.func = (void *)k_two;
    p.gridDim = dim3(9);
    p.blockDim = dim3(32);
    p.kernelParams = args;
    hipGraphNode_t node, child_kernel, child_node;
    CHECK(hipGraphAddKernelNode(&node, graph, nullptr, 0, &p));
    hipKernelNodeParams q = p;
    q.func = (void *)k_one;
    q.gridDim = dim3(10);
    CHECK(hipGraphAddKernelNode(&child_kernel, child, nullptr, 0, &q));
    CHECK(hipGraphAddChildGraphNode(&child_node, graph, &node, 1, child));
    hipGraphExec_t exec;
    CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
    p.gridDim = dim3(11);
    CHECK(hipGraphExecKernelNodeSetParams(exec, node, &p));
    CHECK(hipGraphLaunch(exec, s1));
    CHECK(hipStreamSynchronize(s1));

    // 7.
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; t++)
        threads.emplace_back([t] {
            hipStream_t s;
            CHECK(hipStreamCreate(&s));
            for (int i = 0; i < 20; i++)
                launch((const void *)k_one, 14 + t, 64, s);
            CHECK(hipStreamSynchronize(s));
            CHECK(hipStreamDestroy(s));
        });
    std::atomic<int> ready{0};
    for (int t = 0; t < 2; t++)
        threads.emplace_back([&ready, s4] {
            ready++;
            while (ready.load() < 2) {
            }
            for (int i = 0; i < 20; i++)
                launch((const void *)k_two, 2, 64, s4);
        });
    for (auto &t : threads)
        t.join();
    CHECK(hipStreamSynchronize(s4));

    // 8.
    hipStream_t s5;
    CHECK(hipStreamCreate(&s5));
    launch((const void *)k_one, 12, 64, s5);
    CHECK(hipStreamSynchronize(s5));
    CHECK(hipStreamDestroy(s5));
    hipStream_t s6;
    CHECK(hipStreamCreate(&s6));
    std::printf("rw: stream_handle_reused=%d\n", s6 == s5 ? 1 : 0);
    launch((const void *)k_one, 13, 64, s6);
    CHECK(hipStreamSynchronize(s6));

    CHECK(hipDeviceSynchronize());
    std::printf("rw: done=1\n");
    std::fflush(stdout);

    // 9.
    k_last<<<1, 64>>>(buffer);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    std::thread([] { std::exit(0); }).detach();
    for (;;)
        pause();
}
