// MIOpen: a 2D convolution (NCHW float, 1x1 filter) forward through the immediate-mode API
// (solution count, solutions, compile, run) and through Find, and backward data through the
// immediate mode, on a stream of its own.
//
// A 1x1 convolution is what MIOpen 6.4.3 as Debian packages it can run here: its OpenCL and HIP
// kernels are compiled at run time by /build/reproducible-path/miopen-6.4.3+dfsg/build/clang-21,
// a path from its build tree that no installed system has (outside any HSA runtime; see
// tests/realworld.rs), and a 1x1 convolution is served by GEMM solvers through rocBLAS instead.
#include "rw.h"

#include <miopen/miopen.h>

#include <vector>

#define MI(call) RW_CHECK(call, miopenStatusSuccess)

int main() {
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    miopenHandle_t handle;
    MI(miopenCreateWithStream(&handle, stream));
    const int N = 4, C = 8, H = 32, W = 32, K = 16;
    miopenTensorDescriptor_t x, w, y;
    MI(miopenCreateTensorDescriptor(&x));
    MI(miopenCreateTensorDescriptor(&w));
    MI(miopenCreateTensorDescriptor(&y));
    MI(miopenSet4dTensorDescriptor(x, miopenFloat, N, C, H, W));
    MI(miopenSet4dTensorDescriptor(w, miopenFloat, K, C, 1, 1));
    miopenConvolutionDescriptor_t conv;
    MI(miopenCreateConvolutionDescriptor(&conv));
    MI(miopenInitConvolutionDescriptor(conv, miopenConvolution, 0, 0, 1, 1, 1, 1));
    int on, oc, oh, ow;
    MI(miopenGetConvolutionForwardOutputDim(conv, x, w, &on, &oc, &oh, &ow));
    MI(miopenSet4dTensorDescriptor(y, miopenFloat, on, oc, oh, ow));
    const size_t xs = (size_t)N * C * H * W * 4, ws_ = (size_t)K * C * 4,
                 ys = (size_t)on * oc * oh * ow * 4;
    void *dx, *dw, *dy;
    RW_HIP(hipMalloc(&dx, xs));
    RW_HIP(hipMalloc(&dw, ws_));
    RW_HIP(hipMalloc(&dy, ys));
    RW_HIP(hipMemset(dx, 0, xs));
    RW_HIP(hipMemset(dw, 0, ws_));
    RW_HIP(hipMemset(dy, 0, ys));

    // Forward, immediate mode.
    size_t count = 0;
    MI(miopenConvolutionForwardGetSolutionCount(handle, w, x, conv, y, &count));
    if (count == 0)
        RW_FAIL("miopenConvolutionForwardGetSolutionCount found no solution", 0);
    std::vector<miopenConvSolution_t> solutions(count);
    MI(miopenConvolutionForwardGetSolution(handle, w, x, conv, y, count, &count, solutions.data()));
    rw_fact("forward_solutions", (long long)count);
    const miopenConvSolution_t best = solutions[0];
    MI(miopenConvolutionForwardCompileSolution(handle, w, x, conv, y, best.solution_id));
    void *ws = nullptr;
    if (best.workspace_size)
        RW_HIP(hipMalloc(&ws, best.workspace_size));
    MI(miopenConvolutionForwardImmediate(handle, w, dw, x, dx, conv, y, dy, ws,
                                         best.workspace_size, best.solution_id));
    RW_HIP(hipStreamSynchronize(stream));
    if (ws)
        RW_HIP(hipFree(ws));

    // Forward, Find.
    size_t find_ws = 0;
    MI(miopenConvolutionForwardGetWorkSpaceSize(handle, w, x, conv, y, &find_ws));
    void *fws = nullptr;
    RW_HIP(hipMalloc(&fws, find_ws ? find_ws : 4));
    int returned = 0;
    miopenConvAlgoPerf_t perf[4];
    MI(miopenFindConvolutionForwardAlgorithm(handle, x, dx, w, dw, conv, y, dy, 4, &returned, perf,
                                             fws, find_ws, false));
    rw_fact("find_results", returned);
    if (returned < 1)
        RW_FAIL("miopenFindConvolutionForwardAlgorithm returned no algorithm", returned);
    const float one = 1.0f, zero = 0.0f;
    MI(miopenConvolutionForward(handle, &one, x, dx, w, dw, conv, perf[0].fwd_algo, &zero, y, dy,
                                fws, find_ws));
    RW_HIP(hipStreamSynchronize(stream));
    RW_HIP(hipFree(fws));

    // Backward data, immediate mode.
    MI(miopenConvolutionBackwardDataGetSolutionCount(handle, y, w, conv, x, &count));
    if (count == 0)
        RW_FAIL("miopenConvolutionBackwardDataGetSolutionCount found no solution", 0);
    solutions.resize(count);
    MI(miopenConvolutionBackwardDataGetSolution(handle, y, w, conv, x, count, &count,
                                                solutions.data()));
    const miopenConvSolution_t bwd = solutions[0];
    MI(miopenConvolutionBackwardDataCompileSolution(handle, y, w, conv, x, bwd.solution_id));
    ws = nullptr;
    if (bwd.workspace_size)
        RW_HIP(hipMalloc(&ws, bwd.workspace_size));
    MI(miopenConvolutionBackwardDataImmediate(handle, y, dy, w, dw, conv, x, dx, ws,
                                              bwd.workspace_size, bwd.solution_id));
    RW_HIP(hipStreamSynchronize(stream));
    if (ws)
        RW_HIP(hipFree(ws));

    MI(miopenDestroyConvolutionDescriptor(conv));
    for (auto t : {x, w, y})
        MI(miopenDestroyTensorDescriptor(t));
    MI(miopenDestroy(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *q : {dx, dw, dy})
        RW_HIP(hipFree(q));
    rw_done();
    return 0;
}
