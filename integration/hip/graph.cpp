// HIP graphs, built two ways, instantiated and launched several times.
//
// 1. Stream capture (hipStreamBeginCapture .. hipStreamEndCapture on a created stream):
//      hipMemsetAsync(a)               -> a fill blit per launch (__amd_rocclr_fillBuffer*)
//      hipMemcpyAsync(b <- pinned host) -> HIP 5.2 copies the bytes itself at each launch (checked:
//                                          `captured_h2d_result=copied`); HIP 6.4 and 7.2 run it
//                                          as a copy blit, which does not run here (`unchanged`)
//      graph_scale<<<16, 256>>>(b, 2, n)
//      hipMemcpyAsync(c <- b, D2D)     -> a copy blit per launch (__amd_rocclr_copyBuffer*)
//    The captured graph has 4 nodes; its executable graph is launched CAPTURED_LAUNCHES times.
// 2. Explicit nodes (hipGraphAddKernelNode with dependencies): graph_add -> graph_tail and
//    graph_add -> graph_side (a fan-out of two edges). Launched EXPLICIT_LAUNCHES times; then
//    hipGraphExecKernelNodeSetParams gives graph_tail another grid and argument and the graph is
//    launched SET_PARAMS_LAUNCHES times; then hipGraphExecUpdate from a graph of the same shape
//    whose graph_side has another grid, launched UPDATE_LAUNCHES times.
//
// Dispatches the harness expects (blocks x threads -> grid in work-items):
//   graph_scale  16 x 256 -> [4096,1,1]  x CAPTURED_LAUNCHES
//   graph_add     8 x 128 -> [1024,1,1]  x (EXPLICIT + SET_PARAMS + UPDATE)_LAUNCHES
//   graph_tail    4 x  64 -> [256,1,1]   x (EXPLICIT + UPDATE)_LAUNCHES  (the update's graph
//                                          has the original parameters)
//   graph_tail    2 x  64 -> [128,1,1]   x SET_PARAMS_LAUNCHES
//   graph_side    1 x  64 -> [64,1,1]    x (EXPLICIT + SET_PARAMS)_LAUNCHES
//   graph_side    3 x  64 -> [192,1,1]   x UPDATE_LAUNCHES
// Kernels never run, so nothing a kernel or a blit would write is checked.
#include "sg_hip.h"

#include <vector>

#define CAPTURED_LAUNCHES 3
#define EXPLICIT_LAUNCHES 3
#define SET_PARAMS_LAUNCHES 2
#define UPDATE_LAUNCHES 2

__global__ void graph_scale(float *p, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= s;
}
__global__ void graph_add(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += in[i];
}
__global__ void graph_tail(float *p, float v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }
__global__ void graph_side(int *p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v; }

static size_t node_count(hipGraph_t g) {
    size_t n = 0;
    SG_HIP(hipGraphGetNodes(g, nullptr, &n));
    return n;
}

static size_t edge_count(hipGraph_t g) {
    size_t n = 0;
    SG_HIP(hipGraphGetEdges(g, nullptr, nullptr, &n));
    return n;
}

static hipKernelNodeParams kernel_params(void *func, dim3 grid, dim3 block, void **args) {
    hipKernelNodeParams p;
    std::memset(&p, 0, sizeof p);
    p.func = func;
    p.gridDim = grid;
    p.blockDim = block;
    p.sharedMemBytes = 0;
    p.kernelParams = args;
    p.extra = nullptr;
    return p;
}

// graph_add -> graph_tail, graph_add -> graph_side; the nodes are returned in order.
static hipGraph_t explicit_graph(float *out, float *in, int *ip, int side_blocks,
                                 hipGraphNode_t nodes[3]) {
    // The argument values are copied when each node is added.
    int n = 1024;
    float v = 1.0f;
    int w = 7;
    void *add_args[] = {&out, &in, &n};
    void *tail_args[] = {&out, &v};
    void *side_args[] = {&ip, &w};
    hipGraph_t g;
    SG_HIP(hipGraphCreate(&g, 0));
    hipKernelNodeParams add = kernel_params((void *)graph_add, dim3(8), dim3(128), add_args);
    hipKernelNodeParams tail = kernel_params((void *)graph_tail, dim3(4), dim3(64), tail_args);
    hipKernelNodeParams side =
        kernel_params((void *)graph_side, dim3(side_blocks), dim3(64), side_args);
    SG_HIP(hipGraphAddKernelNode(&nodes[0], g, nullptr, 0, &add));
    SG_HIP(hipGraphAddKernelNode(&nodes[1], g, &nodes[0], 1, &tail));
    SG_HIP(hipGraphAddKernelNode(&nodes[2], g, &nodes[0], 1, &side));
    return g;
}

int main() {
    sg_start("graph");
    const int n = 4096;
    const size_t bytes = n * sizeof(float);
    float *a = nullptr, *b = nullptr, *c = nullptr, *host = nullptr;
    int *ip = nullptr;
    SG_HIP(hipMalloc(&a, bytes));
    SG_HIP(hipMalloc(&b, bytes));
    SG_HIP(hipMalloc(&c, bytes));
    SG_HIP(hipMalloc(&ip, 1024 * sizeof(int)));
    SG_HIP(hipHostMalloc(&host, bytes, 0));

    // 1. Stream capture.
    hipStream_t s;
    SG_HIP(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    SG_HIP(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    SG_HIP(hipStreamIsCapturing(s, &status));
    SG_EXPECT(status == hipStreamCaptureStatusActive, "hipStreamIsCapturing: %d, expected active",
              (int)status);
    SG_HIP(hipMemsetAsync(a, 0x5a, bytes, s));
    SG_HIP(hipMemcpyAsync(b, host, bytes, hipMemcpyHostToDevice, s));
    hipLaunchKernelGGL(graph_scale, dim3(16), dim3(256), 0, s, b, 2.0f, n);
    SG_LAUNCHED("graph_scale (captured)");
    SG_HIP(hipMemcpyAsync(c, b, bytes, hipMemcpyDeviceToDevice, s));
    hipGraph_t captured;
    SG_HIP(hipStreamEndCapture(s, &captured));
    SG_HIP(hipStreamIsCapturing(s, &status));
    SG_EXPECT(status == hipStreamCaptureStatusNone, "hipStreamIsCapturing after the end: %d",
              (int)status);
    sg_fact("captured_nodes", "%zu", node_count(captured));
    sg_fact("captured_edges", "%zu", edge_count(captured));
    hipGraphExec_t captured_exec;
    SG_HIP(hipGraphInstantiate(&captured_exec, captured, nullptr, nullptr, 0));
    // Capturing recorded the work and ran none of it. b and c get known contents by plain
    // copies (which the runtime performs itself) before the graph runs.
    std::vector<float> back(n);
    sg_fill(host, bytes, 41);
    SG_HIP(hipMemcpy(b, host, bytes, hipMemcpyHostToDevice));
    sg_fill(host, bytes, 31);
    SG_HIP(hipMemcpy(c, host, bytes, hipMemcpyHostToDevice));
    // The host-to-device node: HIP 5.2 copies the bytes itself at each launch ("copied"), later
    // HIPs run it as a copy blit kernel, which does not run here ("unchanged"). Every launch
    // must agree with the first.
    const char *h2d = nullptr;
    for (int i = 0; i < CAPTURED_LAUNCHES; i++) {
        // Each launch copies a new pattern from the pinned buffer into b.
        sg_fill(host, bytes, 100 + i);
        SG_HIP(hipGraphLaunch(captured_exec, s));
        SG_HIP(hipStreamSynchronize(s));
        SG_HIP(hipMemcpy(back.data(), b, bytes, hipMemcpyDeviceToHost));
        const char *now = sg_first_mismatch(back.data(), bytes, 100 + i) == bytes ? "copied"
                          : sg_first_mismatch(back.data(), bytes, 41) == bytes  ? "unchanged"
                                                                                 : "garbled";
        SG_EXPECT(std::strcmp(now, "garbled") != 0,
                  "launch %d: b holds neither this launch's copy nor its earlier contents", i);
        SG_EXPECT(h2d == nullptr || std::strcmp(h2d, now) == 0,
                  "launch %d: the host-to-device node %s, the first launch's %s", i, now, h2d);
        h2d = now;
    }
    sg_fact("captured_launches", "%d", CAPTURED_LAUNCHES);
    sg_fact("captured_h2d_result", "%s", h2d);
    // The device-to-device copy node is a blit kernel, which did not run.
    SG_HIP(hipMemcpy(back.data(), c, bytes, hipMemcpyDeviceToHost));
    sg_fact("captured_d2d_result",
            sg_first_mismatch(back.data(), bytes, 31) == bytes ? "unchanged" : "changed");

    // 2. Explicit nodes.
    hipGraphNode_t nodes[3];
    hipGraph_t g = explicit_graph(c, b, ip, 1, nodes);
    sg_fact("explicit_nodes", "%zu", node_count(g));
    sg_fact("explicit_edges", "%zu", edge_count(g));
    size_t deps = 0;
    SG_HIP(hipGraphNodeGetDependencies(nodes[1], nullptr, &deps));
    SG_EXPECT(deps == 1, "graph_tail has %zu dependencies, expected 1", deps);
    size_t dependents = 0;
    SG_HIP(hipGraphNodeGetDependentNodes(nodes[0], nullptr, &dependents));
    SG_EXPECT(dependents == 2, "graph_add has %zu dependent nodes, expected 2", dependents);
    hipGraphExec_t exec;
    SG_HIP(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
    for (int i = 0; i < EXPLICIT_LAUNCHES; i++) SG_HIP(hipGraphLaunch(exec, s));
    SG_HIP(hipStreamSynchronize(s));

    // graph_tail gets another grid and argument in the executable graph only.
    float v2 = 3.0f;
    void *tail_args[] = {&c, &v2};
    hipKernelNodeParams tail = kernel_params((void *)graph_tail, dim3(2), dim3(64), tail_args);
    SG_HIP(hipGraphExecKernelNodeSetParams(exec, nodes[1], &tail));
    for (int i = 0; i < SET_PARAMS_LAUNCHES; i++) SG_HIP(hipGraphLaunch(exec, s));
    SG_HIP(hipStreamSynchronize(s));
    sg_fact("set_params", "ok");

    // A graph of the same shape whose graph_side has 3 blocks, the others as first built.
    hipGraphNode_t nodes2[3];
    hipGraph_t g2 = explicit_graph(c, b, ip, 3, nodes2);
    hipGraphNode_t error_node = nullptr;
    hipGraphExecUpdateResult result = hipGraphExecUpdateError;
    SG_HIP(hipGraphExecUpdate(exec, g2, &error_node, &result));
    SG_EXPECT(result == hipGraphExecUpdateSuccess, "hipGraphExecUpdate result %d", (int)result);
    sg_fact("exec_update", "success");
    for (int i = 0; i < UPDATE_LAUNCHES; i++) SG_HIP(hipGraphLaunch(exec, s));
    SG_HIP(hipStreamSynchronize(s));
    sg_fact("explicit_launches", "%d", EXPLICIT_LAUNCHES + SET_PARAMS_LAUNCHES + UPDATE_LAUNCHES);

    SG_HIP(hipGraphExecDestroy(exec));
    SG_HIP(hipGraphDestroy(g2));
    SG_HIP(hipGraphDestroy(g));
    SG_HIP(hipGraphExecDestroy(captured_exec));
    SG_HIP(hipGraphDestroy(captured));
    SG_HIP(hipStreamDestroy(s));
    SG_HIP(hipHostFree(host));
    SG_HIP(hipFree(ip));
    SG_HIP(hipFree(c));
    SG_HIP(hipFree(b));
    SG_HIP(hipFree(a));
    sg_done();
    return 0;
}
