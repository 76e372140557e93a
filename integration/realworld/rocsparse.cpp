// rocSPARSE: a sparse matrix-vector product y = A x on a tridiagonal CSR matrix, through the
// classic csrmv (with and without its analysis step) and the generic rocsparse_spmv, plus a
// CSR to COO conversion and a COO SpMV.
#include "rw.h"

#include <rocsparse/rocsparse.h>

#include <vector>

#define RS(call) RW_CHECK(call, rocsparse_status_success)

int main() {
    const rocsparse_int m = 4096;
    std::vector<rocsparse_int> ptr(m + 1), col;
    std::vector<float> val;
    for (rocsparse_int i = 0; i < m; i++) {
        ptr[i] = (rocsparse_int)col.size();
        for (rocsparse_int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < m) {
                col.push_back(j);
                val.push_back(j == i ? 2.0f : -1.0f);
            }
    }
    ptr[m] = (rocsparse_int)col.size();
    const rocsparse_int nnz = ptr[m];
    rocsparse_int *d_ptr, *d_col, *d_row;
    float *d_val, *d_x, *d_y;
    RW_HIP(hipMalloc(&d_ptr, (m + 1) * sizeof(rocsparse_int)));
    RW_HIP(hipMalloc(&d_col, nnz * sizeof(rocsparse_int)));
    RW_HIP(hipMalloc(&d_row, nnz * sizeof(rocsparse_int)));
    RW_HIP(hipMalloc(&d_val, nnz * sizeof(float)));
    RW_HIP(hipMalloc(&d_x, m * sizeof(float)));
    RW_HIP(hipMalloc(&d_y, m * sizeof(float)));
    RW_HIP(hipMemcpy(d_ptr, ptr.data(), (m + 1) * sizeof(rocsparse_int), hipMemcpyHostToDevice));
    RW_HIP(hipMemcpy(d_col, col.data(), nnz * sizeof(rocsparse_int), hipMemcpyHostToDevice));
    RW_HIP(hipMemcpy(d_val, val.data(), nnz * sizeof(float), hipMemcpyHostToDevice));
    std::vector<float> x(m, 1.0f);
    RW_HIP(hipMemcpy(d_x, x.data(), m * sizeof(float), hipMemcpyHostToDevice));

    rocsparse_handle handle;
    RS(rocsparse_create_handle(&handle));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    RS(rocsparse_set_stream(handle, stream));
    rocsparse_mat_descr descr;
    RS(rocsparse_create_mat_descr(&descr));
    const float alpha = 1.0f, beta = 0.0f;

    // Classic csrmv without analysis, then with it (the adaptive algorithm).
    RS(rocsparse_scsrmv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, d_val, d_ptr,
                        d_col, nullptr, d_x, &beta, d_y));
    rocsparse_mat_info info;
    RS(rocsparse_create_mat_info(&info));
    RS(rocsparse_scsrmv_analysis(handle, rocsparse_operation_none, m, m, nnz, descr, d_val, d_ptr,
                                 d_col, info));
    RS(rocsparse_scsrmv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, d_val, d_ptr,
                        d_col, info, d_x, &beta, d_y));
    RS(rocsparse_csrmv_clear(handle, info));
    RS(rocsparse_destroy_mat_info(info));

    // CSR -> COO, then COO SpMV.
    RS(rocsparse_csr2coo(handle, d_ptr, nnz, m, d_row, rocsparse_index_base_zero));
    RS(rocsparse_scoomv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, d_val, d_row,
                        d_col, d_x, &beta, d_y));

    // The generic API.
    rocsparse_spmat_descr A;
    rocsparse_dnvec_descr X, Y;
    RS(rocsparse_create_csr_descr(&A, m, m, nnz, d_ptr, d_col, d_val, rocsparse_indextype_i32,
                                  rocsparse_indextype_i32, rocsparse_index_base_zero,
                                  rocsparse_datatype_f32_r));
    RS(rocsparse_create_dnvec_descr(&X, m, d_x, rocsparse_datatype_f32_r));
    RS(rocsparse_create_dnvec_descr(&Y, m, d_y, rocsparse_datatype_f32_r));
    size_t size = 0;
    void *buffer = nullptr;
#if ROCSPARSE_VERSION_MAJOR >= 3
    RS(rocsparse_spmv(handle, rocsparse_operation_none, &alpha, A, X, &beta, Y,
                      rocsparse_datatype_f32_r, rocsparse_spmv_alg_csr_adaptive,
                      rocsparse_spmv_stage_buffer_size, &size, nullptr));
    RW_HIP(hipMalloc(&buffer, size ? size : 4));
    RS(rocsparse_spmv(handle, rocsparse_operation_none, &alpha, A, X, &beta, Y,
                      rocsparse_datatype_f32_r, rocsparse_spmv_alg_csr_adaptive,
                      rocsparse_spmv_stage_preprocess, &size, buffer));
    RS(rocsparse_spmv(handle, rocsparse_operation_none, &alpha, A, X, &beta, Y,
                      rocsparse_datatype_f32_r, rocsparse_spmv_alg_csr_adaptive,
                      rocsparse_spmv_stage_compute, &size, buffer));
#else
    RS(rocsparse_spmv(handle, rocsparse_operation_none, &alpha, A, X, &beta, Y,
                      rocsparse_datatype_f32_r, rocsparse_spmv_alg_csr_stream, &size, nullptr));
    RW_HIP(hipMalloc(&buffer, size ? size : 4));
    RS(rocsparse_spmv(handle, rocsparse_operation_none, &alpha, A, X, &beta, Y,
                      rocsparse_datatype_f32_r, rocsparse_spmv_alg_csr_stream, &size, buffer));
#endif
    RW_HIP(hipStreamSynchronize(stream));
    RS(rocsparse_destroy_spmat_descr(A));
    RS(rocsparse_destroy_dnvec_descr(X));
    RS(rocsparse_destroy_dnvec_descr(Y));
    RS(rocsparse_destroy_mat_descr(descr));
    RS(rocsparse_destroy_handle(handle));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)d_ptr, (void *)d_col, (void *)d_row, (void *)d_val, (void *)d_x,
                    (void *)d_y, buffer})
        RW_HIP(hipFree(p));
    rw_fact("nnz", nnz);
    rw_done();
    return 0;
}
