// hipSPARSE over rocSPARSE: a CSR SpMV through the generic hipsparseSpMV (buffer size, then
// compute) and a CSR to COO conversion.
#include "rw.h"

#include <hipsparse/hipsparse.h>

#include <vector>

#define HS(call) RW_CHECK(call, HIPSPARSE_STATUS_SUCCESS)

int main() {
    const int m = 2048;
    std::vector<int> ptr(m + 1), col;
    std::vector<float> val;
    for (int i = 0; i < m; i++) {
        ptr[i] = (int)col.size();
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < m) {
                col.push_back(j);
                val.push_back(j == i ? 4.0f : -1.0f);
            }
    }
    ptr[m] = (int)col.size();
    const int nnz = ptr[m];
    int *d_ptr, *d_col, *d_row;
    float *d_val, *d_x, *d_y;
    RW_HIP(hipMalloc(&d_ptr, (m + 1) * sizeof(int)));
    RW_HIP(hipMalloc(&d_col, nnz * sizeof(int)));
    RW_HIP(hipMalloc(&d_row, nnz * sizeof(int)));
    RW_HIP(hipMalloc(&d_val, nnz * sizeof(float)));
    RW_HIP(hipMalloc(&d_x, m * sizeof(float)));
    RW_HIP(hipMalloc(&d_y, m * sizeof(float)));
    RW_HIP(hipMemcpy(d_ptr, ptr.data(), (m + 1) * sizeof(int), hipMemcpyHostToDevice));
    RW_HIP(hipMemcpy(d_col, col.data(), nnz * sizeof(int), hipMemcpyHostToDevice));
    RW_HIP(hipMemcpy(d_val, val.data(), nnz * sizeof(float), hipMemcpyHostToDevice));

    hipsparseHandle_t handle;
    HS(hipsparseCreate(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    HS(hipsparseSetStream(handle, stream));
    hipsparseSpMatDescr_t A;
    hipsparseDnVecDescr_t X, Y;
    HS(hipsparseCreateCsr(&A, m, m, nnz, d_ptr, d_col, d_val, HIPSPARSE_INDEX_32I,
                          HIPSPARSE_INDEX_32I, HIPSPARSE_INDEX_BASE_ZERO, HIP_R_32F));
    HS(hipsparseCreateDnVec(&X, m, d_x, HIP_R_32F));
    HS(hipsparseCreateDnVec(&Y, m, d_y, HIP_R_32F));
    const float alpha = 1.0f, beta = 0.0f;
    size_t size = 0;
    HS(hipsparseSpMV_bufferSize(handle, HIPSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y,
                                HIP_R_32F, HIPSPARSE_SPMV_ALG_DEFAULT, &size));
    // No buffer when none is needed: hipSPARSE 4 (ROCm 7) goes through rocsparse_v2_spmv, which
    // refuses a buffer with a size of 0 (rocsparse_status_invalid_size), as on a GPU.
    void *buffer = nullptr;
    if (size > 0)
        RW_HIP(hipMalloc(&buffer, size));
    HS(hipsparseSpMV(handle, HIPSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, HIP_R_32F,
                     HIPSPARSE_SPMV_ALG_DEFAULT, buffer));
    HS(hipsparseXcsr2coo(handle, d_ptr, nnz, m, d_row, HIPSPARSE_INDEX_BASE_ZERO));
    RW_HIP(hipStreamSynchronize(stream));
    HS(hipsparseDestroySpMat(A));
    HS(hipsparseDestroyDnVec(X));
    HS(hipsparseDestroyDnVec(Y));
    HS(hipsparseDestroy(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)d_ptr, (void *)d_col, (void *)d_row, (void *)d_val, (void *)d_x,
                    (void *)d_y, buffer})
        RW_HIP(hipFree(p));
    rw_fact("nnz", nnz);
    rw_done();
    return 0;
}
