// rocSOLVER over rocBLAS: an LU factorisation with partial pivoting (getrf), a solve with it
// (getrs), a Cholesky factorisation (potrf) and a batched LU, on a stream of its own.
#include "rw.h"

#include <rocblas/rocblas.h>
#include <rocsolver/rocsolver.h>

#include <vector>

#define RB(call) RW_CHECK(call, rocblas_status_success)

int main() {
    rocblas_handle handle;
    RB(rocblas_create_handle(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    RB(rocblas_set_stream(handle, stream));
    const rocblas_int n = 256, batch = 4;
    std::vector<float> spd(n * n, 0.0f);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            spd[i * n + j] = i == j ? (float)n : 1.0f;
    float *A, *B, *bA;
    rocblas_int *ipiv, *info, *binfo, *bipiv;
    RW_HIP(hipMalloc(&A, n * n * sizeof(float)));
    RW_HIP(hipMalloc(&B, n * sizeof(float)));
    RW_HIP(hipMalloc(&bA, n * n * batch * sizeof(float)));
    RW_HIP(hipMalloc(&ipiv, n * sizeof(rocblas_int)));
    RW_HIP(hipMalloc(&bipiv, n * batch * sizeof(rocblas_int)));
    RW_HIP(hipMalloc(&info, sizeof(rocblas_int)));
    RW_HIP(hipMalloc(&binfo, batch * sizeof(rocblas_int)));
    RW_HIP(hipMemcpy(A, spd.data(), n * n * sizeof(float), hipMemcpyHostToDevice));
    RW_HIP(hipMemset(B, 0, n * sizeof(float)));
    for (int b = 0; b < batch; b++)
        RW_HIP(hipMemcpy(bA + b * n * n, spd.data(), n * n * sizeof(float), hipMemcpyHostToDevice));

    RB(rocsolver_sgetrf(handle, n, n, A, n, ipiv, info));
    RB(rocsolver_sgetrs(handle, rocblas_operation_none, n, 1, A, n, ipiv, B, n));
    RW_HIP(hipMemcpy(A, spd.data(), n * n * sizeof(float), hipMemcpyHostToDevice));
    RB(rocsolver_spotrf(handle, rocblas_fill_lower, n, A, n, info));
    RB(rocsolver_sgetrf_strided_batched(handle, n, n, bA, n, n * n, bipiv, n, binfo, batch));
    RW_HIP(hipStreamSynchronize(stream));
    RB(rocblas_destroy_handle(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)A, (void *)B, (void *)bA, (void *)ipiv, (void *)bipiv, (void *)info,
                    (void *)binfo})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
