// hipFFT over rocFFT: a 1D C2C plan, a 2D R2C plan and a batched plan (hipfftPlanMany), each
// executed on a stream of its own.
#include "rw.h"

#include <hipfft/hipfft.h>

#define HF(call) RW_CHECK(call, HIPFFT_SUCCESS)

int main() {
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    hipfftComplex *c, *c2;
    hipfftReal *r;
    RW_HIP(hipMalloc(&c, 256 * 256 * sizeof(hipfftComplex)));
    RW_HIP(hipMalloc(&c2, 256 * 256 * sizeof(hipfftComplex)));
    RW_HIP(hipMalloc(&r, 256 * 256 * sizeof(hipfftReal)));
    RW_HIP(hipMemset(c, 0, 256 * 256 * sizeof(hipfftComplex)));
    RW_HIP(hipMemset(r, 0, 256 * 256 * sizeof(hipfftReal)));

    hipfftHandle p1, p2, p3;
    HF(hipfftPlan1d(&p1, 2048, HIPFFT_C2C, 1));
    HF(hipfftSetStream(p1, stream));
    HF(hipfftExecC2C(p1, c, c2, HIPFFT_FORWARD));
    HF(hipfftExecC2C(p1, c2, c, HIPFFT_BACKWARD));
    HF(hipfftPlan2d(&p2, 128, 128, HIPFFT_R2C));
    HF(hipfftSetStream(p2, stream));
    HF(hipfftExecR2C(p2, r, c2));
    int len[] = {512};
    HF(hipfftPlanMany(&p3, 1, len, nullptr, 1, 512, nullptr, 1, 512, HIPFFT_C2C, 8));
    HF(hipfftSetStream(p3, stream));
    HF(hipfftExecC2C(p3, c, c2, HIPFFT_FORWARD));
    RW_HIP(hipStreamSynchronize(stream));
    for (hipfftHandle p : {p1, p2, p3})
        HF(hipfftDestroy(p));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)c, (void *)c2, (void *)r})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
