// hipRAND over rocRAND: the host API with pseudo and quasi generators on a stream (uniform,
// normal, log-normal, Poisson, raw bits, doubles).
#include "rw.h"

#include <hiprand/hiprand.h>

#define HR(call) RW_CHECK(call, HIPRAND_STATUS_SUCCESS)

int main() {
    const size_t n = 1 << 16;
    float *f = nullptr;
    double *d = nullptr;
    unsigned *u = nullptr;
    RW_HIP(hipMalloc(&f, n * sizeof(float)));
    RW_HIP(hipMalloc(&d, n * sizeof(double)));
    RW_HIP(hipMalloc(&u, n * sizeof(unsigned)));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
    const hiprandRngType_t types[] = {HIPRAND_RNG_PSEUDO_DEFAULT, HIPRAND_RNG_PSEUDO_XORWOW,
                                      HIPRAND_RNG_PSEUDO_MRG32K3A, HIPRAND_RNG_PSEUDO_MTGP32,
                                      HIPRAND_RNG_PSEUDO_PHILOX4_32_10, HIPRAND_RNG_QUASI_SOBOL32};
    for (hiprandRngType_t t : types) {
        hiprandGenerator_t g;
        HR(hiprandCreateGenerator(&g, t));
        HR(hiprandSetStream(g, stream));
        if (t != HIPRAND_RNG_QUASI_SOBOL32)
            HR(hiprandSetPseudoRandomGeneratorSeed(g, 99));
        HR(hiprandGenerate(g, u, n));
        HR(hiprandGenerateUniform(g, f, n));
        HR(hiprandGenerateUniformDouble(g, d, n));
        HR(hiprandGenerateNormal(g, f, n, 0.0f, 1.0f));
        HR(hiprandGenerateLogNormal(g, f, n, 0.0f, 1.0f));
        HR(hiprandGeneratePoisson(g, u, n, 4.0));
        HR(hiprandDestroyGenerator(g));
    }
    rw_fact("generators", sizeof types / sizeof types[0]);
    int version = 0;
    HR(hiprandGetVersion(&version));
    rw_fact("hiprand_version", version);
    RW_HIP(hipStreamSynchronize(stream));
    RW_HIP(hipStreamDestroy(stream));
    RW_HIP(hipFree(f));
    RW_HIP(hipFree(d));
    RW_HIP(hipFree(u));
    rw_done();
    return 0;
}
