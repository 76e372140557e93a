// rocBLAS: GEMM in single and double precision and through gemm_ex (half in, float compute),
// strided-batched GEMM, GEMV, AXPY, DOT and NRM2 (results to host and to device memory), on a
// stream of its own. The GEMMs go to Tensile's code objects (hipModuleLoad +
// hipExtModuleLaunchKernel).
#include "rw.h"

#include <rocblas/rocblas.h>

#include <vector>

#define RB(call) RW_CHECK(call, rocblas_status_success)

template <typename T> T *device(size_t n, T v) {
    std::vector<T> h(n, v);
    T *d = nullptr;
    RW_HIP(hipMalloc(&d, n * sizeof(T)));
    RW_HIP(hipMemcpy(d, h.data(), n * sizeof(T), hipMemcpyHostToDevice));
    return d;
}

int main() {
    rocblas_initialize();
    rocblas_handle handle;
    RB(rocblas_create_handle(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    RB(rocblas_set_stream(handle, stream));

    const rocblas_int n = 256;
    float *A = device<float>(n * n, 1.0f), *B = device<float>(n * n, 2.0f),
          *C = device<float>(n * n, 0.0f);
    double *dA = device<double>(n * n, 1.0), *dB = device<double>(n * n, 2.0),
           *dC = device<double>(n * n, 0.0);
    const float alpha = 1.0f, beta = 0.0f;
    const double dalpha = 1.0, dbeta = 0.0;
    RB(rocblas_sgemm(handle, rocblas_operation_none, rocblas_operation_none, n, n, n, &alpha, A, n,
                     B, n, &beta, C, n));
    RB(rocblas_sgemm(handle, rocblas_operation_transpose, rocblas_operation_none, n, n, n, &alpha,
                     A, n, B, n, &beta, C, n));
    RB(rocblas_dgemm(handle, rocblas_operation_none, rocblas_operation_none, n, n, n, &dalpha, dA,
                     n, dB, n, &dbeta, dC, n));
    rocblas_half *hA = device<rocblas_half>(n * n, rocblas_half{0x3c00}),
                 *hB = device<rocblas_half>(n * n, rocblas_half{0x3c00});
    RB(rocblas_gemm_ex(handle, rocblas_operation_none, rocblas_operation_none, n, n, n, &alpha, hA,
                       rocblas_datatype_f16_r, n, hB, rocblas_datatype_f16_r, n, &beta, C,
                       rocblas_datatype_f32_r, n, C, rocblas_datatype_f32_r, n,
                       rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0));
    const rocblas_int batch = 4, m = 64;
    float *bA = device<float>(m * m * batch, 1.0f), *bB = device<float>(m * m * batch, 1.0f),
          *bC = device<float>(m * m * batch, 0.0f);
    RB(rocblas_sgemm_strided_batched(handle, rocblas_operation_none, rocblas_operation_none, m, m,
                                     m, &alpha, bA, m, m * m, bB, m, m * m, &beta, bC, m, m * m,
                                     batch));
    float *x = device<float>(n, 1.0f), *y = device<float>(n, 0.0f);
    RB(rocblas_sgemv(handle, rocblas_operation_none, n, n, &alpha, A, n, x, 1, &beta, y, 1));
    RB(rocblas_saxpy(handle, n, &alpha, x, 1, y, 1));
    float dot = 0.0f, nrm = 0.0f;
    RB(rocblas_sdot(handle, n, x, 1, y, 1, &dot));
    RB(rocblas_snrm2(handle, n, x, 1, &nrm));
    float *d_result = device<float>(1, 0.0f);
    RB(rocblas_set_pointer_mode(handle, rocblas_pointer_mode_device));
    RB(rocblas_sdot(handle, n, x, 1, y, 1, d_result));
    RB(rocblas_set_pointer_mode(handle, rocblas_pointer_mode_host));
    RW_HIP(hipStreamSynchronize(stream));
    RB(rocblas_destroy_handle(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)A, (void *)B, (void *)C, (void *)dA, (void *)dB, (void *)dC,
                    (void *)hA, (void *)hB, (void *)bA, (void *)bB, (void *)bC, (void *)x,
                    (void *)y, (void *)d_result})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
