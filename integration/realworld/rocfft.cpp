// rocFFT: plans for a 1D complex forward transform, a 1D real-to-complex transform, a 2D
// complex transform and a batched 1D inverse transform, each executed with an execution info on
// a stream of its own (rocFFT builds most kernels at run time through hipRTC).
#include "rw.h"

#include <rocfft/rocfft.h>

#include <vector>

#define RF(call) RW_CHECK(call, rocfft_status_success)

static void run(rocfft_transform_type type, size_t dim, const size_t *lengths, size_t batch,
                rocfft_result_placement placement, hipStream_t stream, const char *what) {
    rocfft_plan plan = nullptr;
    RF(rocfft_plan_create(&plan, placement, type, rocfft_precision_single, dim, lengths, batch,
                          nullptr));
    size_t work = 0;
    RF(rocfft_plan_get_work_buffer_size(plan, &work));
    size_t elems = batch;
    for (size_t i = 0; i < dim; i++)
        elems *= lengths[i] + 2;
    void *in, *out, *buffer = nullptr;
    RW_HIP(hipMalloc(&in, elems * 8));
    RW_HIP(hipMalloc(&out, elems * 8));
    RW_HIP(hipMemset(in, 0, elems * 8));
    rocfft_execution_info info = nullptr;
    RF(rocfft_execution_info_create(&info));
    RF(rocfft_execution_info_set_stream(info, stream));
    if (work) {
        RW_HIP(hipMalloc(&buffer, work));
        RF(rocfft_execution_info_set_work_buffer(info, buffer, work));
    }
    void *ins[] = {in}, *outs[] = {out};
    RF(rocfft_execute(plan, ins, placement == rocfft_placement_inplace ? nullptr : outs, info));
    RW_HIP(hipStreamSynchronize(stream));
    RF(rocfft_execution_info_destroy(info));
    RF(rocfft_plan_destroy(plan));
    RW_HIP(hipFree(in));
    RW_HIP(hipFree(out));
    if (buffer)
        RW_HIP(hipFree(buffer));
    std::printf("rw: ran=%s\n", what);
}

int main() {
    RF(rocfft_setup());
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    const size_t n1[] = {1024}, r1[] = {4096}, n2[] = {64, 128}, b1[] = {256};
    run(rocfft_transform_type_complex_forward, 1, n1, 1, rocfft_placement_notinplace, stream,
        "c2c_1d_1024");
    run(rocfft_transform_type_real_forward, 1, r1, 1, rocfft_placement_notinplace, stream,
        "r2c_1d_4096");
    run(rocfft_transform_type_complex_forward, 2, n2, 1, rocfft_placement_notinplace, stream,
        "c2c_2d_64x128");
    run(rocfft_transform_type_complex_inverse, 1, b1, 16, rocfft_placement_inplace, stream,
        "c2c_1d_256_batch16_inverse");
    RW_HIP(hipStreamDestroy(stream));
    RF(rocfft_cleanup());
    rw_done();
    return 0;
}
