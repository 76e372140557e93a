// rocRAND: every generator type this rocRAND has, each on a stream of its own, through the
// host API (uniform, normal, log-normal, Poisson, raw bits), and the device API in a kernel of
// our own (rocrand_init + rocrand_uniform on XORWOW states).
#include "rw.h"

#include <rocrand/rocrand.h>
#include <rocrand/rocrand_kernel.h>

#include <vector>

#define RR(call) RW_CHECK(call, ROCRAND_STATUS_SUCCESS)

__global__ void device_api(unsigned long long seed, float *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    rocrand_state_xorwow state;
    rocrand_init(seed, i, 0, &state);
    if (i < n)
        out[i] = rocrand_uniform(&state);
}

int main() {
    const size_t n = 1 << 16;
    float *f = nullptr;
    unsigned *u = nullptr;
    RW_HIP(hipMalloc(&f, n * sizeof(float)));
    RW_HIP(hipMalloc(&u, n * sizeof(unsigned)));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));

    std::vector<rocrand_rng_type> types = {
        ROCRAND_RNG_PSEUDO_XORWOW,  ROCRAND_RNG_PSEUDO_MRG32K3A, ROCRAND_RNG_PSEUDO_MTGP32,
        ROCRAND_RNG_PSEUDO_PHILOX4_32_10, ROCRAND_RNG_QUASI_SOBOL32,
#if ROCRAND_VERSION >= 300000
        ROCRAND_RNG_PSEUDO_MRG31K3P, ROCRAND_RNG_PSEUDO_LFSR113, ROCRAND_RNG_PSEUDO_MT19937,
        ROCRAND_RNG_PSEUDO_THREEFRY4_32_20, ROCRAND_RNG_QUASI_SCRAMBLED_SOBOL32,
#endif
    };
    for (rocrand_rng_type t : types) {
        rocrand_generator g;
        RR(rocrand_create_generator(&g, t));
        RR(rocrand_set_stream(g, stream));
        bool quasi = t >= ROCRAND_RNG_QUASI_DEFAULT;
        if (!quasi)
            RR(rocrand_set_seed(g, 1234));
        RR(rocrand_generate(g, u, n));
        RR(rocrand_generate_uniform(g, f, n));
        RR(rocrand_generate_normal(g, f, n, 0.0f, 1.0f));
        RR(rocrand_generate_log_normal(g, f, n, 0.0f, 1.0f));
        RR(rocrand_generate_poisson(g, u, n, 10.0));
        RW_HIP(hipStreamSynchronize(stream));
        RR(rocrand_destroy_generator(g));
    }
    rw_fact("generators", (long long)types.size());

    device_api<<<dim3(n / 256), dim3(256), 0, stream>>>(42, f, n);
    RW_HIP(hipGetLastError());
    RW_HIP(hipStreamSynchronize(stream));

    int version = 0;
    RR(rocrand_get_version(&version));
    rw_fact("rocrand_version", version);
    RW_HIP(hipStreamDestroy(stream));
    RW_HIP(hipFree(f));
    RW_HIP(hipFree(u));
    rw_done();
    return 0;
}
