// hipBLAS over rocBLAS: SGEMM, DGEMM, GemmEx, SGEMV, SAXPY and SDOT on a stream of its own.
#include "rw.h"

#include <hipblas/hipblas.h>

#include <vector>

#define HB(call) RW_CHECK(call, HIPBLAS_STATUS_SUCCESS)

template <typename T> T *device(size_t n, T v) {
    std::vector<T> h(n, v);
    T *d = nullptr;
    RW_HIP(hipMalloc(&d, n * sizeof(T)));
    RW_HIP(hipMemcpy(d, h.data(), n * sizeof(T), hipMemcpyHostToDevice));
    return d;
}

int main() {
    hipblasHandle_t handle;
    HB(hipblasCreate(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    HB(hipblasSetStream(handle, stream));
    const int n = 256;
    float *A = device<float>(n * n, 1.0f), *B = device<float>(n * n, 1.0f),
          *C = device<float>(n * n, 0.0f);
    double *dA = device<double>(n * n, 1.0), *dC = device<double>(n * n, 0.0);
    const float alpha = 1.0f, beta = 0.0f;
    const double dalpha = 1.0, dbeta = 0.0;
    HB(hipblasSgemm(handle, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &alpha, A, n, B, n, &beta, C, n));
    HB(hipblasDgemm(handle, HIPBLAS_OP_N, HIPBLAS_OP_T, n, n, n, &dalpha, dA, n, dA, n, &dbeta, dC,
                    n));
    // hipBLAS 3 (ROCm 7) gave hipblasGemmEx the signature of 2.x's hipblasGemmEx_v2 (hipDataType
    // and hipblasComputeType_t) and removed the _v2 name.
#if hipblasVersionMajor >= 3
    HB(hipblasGemmEx(handle, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &alpha, A, HIP_R_32F, n, B,
                     HIP_R_32F, n, &beta, C, HIP_R_32F, n, HIPBLAS_COMPUTE_32F,
                     HIPBLAS_GEMM_DEFAULT));
#else
    HB(hipblasGemmEx_v2(handle, HIPBLAS_OP_N, HIPBLAS_OP_N, n, n, n, &alpha, A, HIP_R_32F, n, B,
                        HIP_R_32F, n, &beta, C, HIP_R_32F, n, HIPBLAS_COMPUTE_32F,
                        HIPBLAS_GEMM_DEFAULT));
#endif
    float *x = device<float>(n, 1.0f), *y = device<float>(n, 0.0f);
    HB(hipblasSgemv(handle, HIPBLAS_OP_N, n, n, &alpha, A, n, x, 1, &beta, y, 1));
    HB(hipblasSaxpy(handle, n, &alpha, x, 1, y, 1));
    float dot = 0.0f;
    HB(hipblasSdot(handle, n, x, 1, y, 1, &dot));
    RW_HIP(hipStreamSynchronize(stream));
    HB(hipblasDestroy(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)A, (void *)B, (void *)C, (void *)dA, (void *)dC, (void *)x, (void *)y})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
