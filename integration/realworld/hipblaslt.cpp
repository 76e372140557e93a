// hipBLASLt: a matmul D = alpha A B + beta C in half precision with float compute, the
// algorithm chosen by hipblasLtMatmulAlgoGetHeuristic, on a stream of its own.
#include "rw.h"

#include <hipblaslt/hipblaslt.h>

#include <vector>

#define HL(call) RW_CHECK(call, HIPBLAS_STATUS_SUCCESS)

int main() {
    const int64_t m = 256, n = 256, k = 256;
    hipblasLtHandle_t handle;
    HL(hipblasLtCreate(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    void *A, *B, *C, *D, *workspace;
    const size_t ws = 32 << 20;
    RW_HIP(hipMalloc(&A, m * k * 2));
    RW_HIP(hipMalloc(&B, k * n * 2));
    RW_HIP(hipMalloc(&C, m * n * 2));
    RW_HIP(hipMalloc(&D, m * n * 2));
    RW_HIP(hipMalloc(&workspace, ws));
    RW_HIP(hipMemset(A, 0, m * k * 2));
    RW_HIP(hipMemset(B, 0, k * n * 2));

    hipblasLtMatmulDesc_t op;
    HL(hipblasLtMatmulDescCreate(&op, HIPBLAS_COMPUTE_32F, HIP_R_32F));
    hipblasOperation_t t = HIPBLAS_OP_N;
    HL(hipblasLtMatmulDescSetAttribute(op, HIPBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    HL(hipblasLtMatmulDescSetAttribute(op, HIPBLASLT_MATMUL_DESC_TRANSB, &t, sizeof t));
    hipblasLtMatrixLayout_t la, lb, lc, ld;
    HL(hipblasLtMatrixLayoutCreate(&la, HIP_R_16F, m, k, m));
    HL(hipblasLtMatrixLayoutCreate(&lb, HIP_R_16F, k, n, k));
    HL(hipblasLtMatrixLayoutCreate(&lc, HIP_R_16F, m, n, m));
    HL(hipblasLtMatrixLayoutCreate(&ld, HIP_R_16F, m, n, m));
    hipblasLtMatmulPreference_t pref;
    HL(hipblasLtMatmulPreferenceCreate(&pref));
    uint64_t max_ws = ws;
    HL(hipblasLtMatmulPreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &max_ws, sizeof max_ws));
    hipblasLtMatmulHeuristicResult_t results[4];
    int found = 0;
    HL(hipblasLtMatmulAlgoGetHeuristic(handle, op, la, lb, lc, ld, pref, 4, results, &found));
    rw_fact("heuristic_results", found);
    if (found < 1)
        RW_FAIL("hipblasLtMatmulAlgoGetHeuristic found no algorithm", found);
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < found; i++)
        HL(hipblasLtMatmul(handle, op, &alpha, A, la, B, lb, &beta, C, lc, D, ld, &results[i].algo,
                           workspace, ws, stream));
    RW_HIP(hipStreamSynchronize(stream));
    HL(hipblasLtMatmulPreferenceDestroy(pref));
    for (auto l : {la, lb, lc, ld})
        HL(hipblasLtMatrixLayoutDestroy(l));
    HL(hipblasLtMatmulDescDestroy(op));
    HL(hipblasLtDestroy(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {A, B, C, D, workspace})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
