// hipSOLVER over rocSOLVER: LU (getrf) and Cholesky (potrf) with their workspace queries, and a
// solve (getrs), on a stream of its own.
#include "rw.h"

#include <hipsolver/hipsolver.h>

#include <vector>

#define HS(call) RW_CHECK(call, HIPSOLVER_STATUS_SUCCESS)

int main() {
    hipsolverHandle_t handle;
    HS(hipsolverCreate(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    HS(hipsolverSetStream(handle, stream));
    const int n = 128;
    std::vector<float> spd(n * n, 0.0f);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            spd[i * n + j] = i == j ? (float)n : 1.0f;
    float *A, *B, *work;
    int *ipiv, *info;
    RW_HIP(hipMalloc(&A, n * n * sizeof(float)));
    RW_HIP(hipMalloc(&B, n * sizeof(float)));
    RW_HIP(hipMalloc(&ipiv, n * sizeof(int)));
    RW_HIP(hipMalloc(&info, sizeof(int)));
    RW_HIP(hipMemcpy(A, spd.data(), n * n * sizeof(float), hipMemcpyHostToDevice));
    RW_HIP(hipMemset(B, 0, n * sizeof(float)));
    int lwork = 0, lwork2 = 0, lwork3 = 0;
    HS(hipsolverSgetrf_bufferSize(handle, n, n, A, n, &lwork));
    HS(hipsolverSpotrf_bufferSize(handle, HIPSOLVER_FILL_MODE_LOWER, n, A, n, &lwork2));
    HS(hipsolverSgetrs_bufferSize(handle, HIPSOLVER_OP_N, n, 1, A, n, ipiv, B, n, &lwork3));
    int most = lwork > lwork2 ? lwork : lwork2;
    most = most > lwork3 ? most : lwork3;
    RW_HIP(hipMalloc(&work, (most ? most : 1) * sizeof(float)));
    HS(hipsolverSgetrf(handle, n, n, A, n, work, lwork, ipiv, info));
    HS(hipsolverSgetrs(handle, HIPSOLVER_OP_N, n, 1, A, n, ipiv, B, n, work, lwork3, info));
    RW_HIP(hipMemcpy(A, spd.data(), n * n * sizeof(float), hipMemcpyHostToDevice));
    HS(hipsolverSpotrf(handle, HIPSOLVER_FILL_MODE_LOWER, n, A, n, work, lwork2, info));
    RW_HIP(hipStreamSynchronize(stream));
    HS(hipsolverDestroy(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)A, (void *)B, (void *)work, (void *)ipiv, (void *)info})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
