// rocPRIM (header-only): device-wide reduce, inclusive and exclusive scan, radix sort (keys and
// pairs), and a transform, each with its temporary-storage query, on a stream of its own.
#include "rw.h"

// rocPRIM 7.2.4's iterator/texture_cache_iterator.hpp calls memset without including <cstring>
// (6.4.3's reached it through another header): with hipcc 7.2.4 only the device memset is then
// declared, and the host call does not compile.
#include <cstring>

#include <rocprim/rocprim.hpp>

#include <vector>

int main() {
    const size_t n = 1 << 20;
    std::vector<unsigned> host(n);
    for (size_t i = 0; i < n; i++)
        host[i] = (unsigned)((i * 2654435761u) >> 7);
    unsigned *in, *out, *vals, *vals_out;
    RW_HIP(hipMalloc(&in, n * sizeof(unsigned)));
    RW_HIP(hipMalloc(&out, n * sizeof(unsigned)));
    RW_HIP(hipMalloc(&vals, n * sizeof(unsigned)));
    RW_HIP(hipMalloc(&vals_out, n * sizeof(unsigned)));
    RW_HIP(hipMemcpy(in, host.data(), n * sizeof(unsigned), hipMemcpyHostToDevice));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));

    // Every algorithm: ask for the storage, allocate it, run.
    auto run = [&](const char *what, auto &&algorithm) {
        size_t bytes = 0;
        RW_HIP(algorithm(nullptr, bytes));
        void *tmp = nullptr;
        RW_HIP(hipMalloc(&tmp, bytes ? bytes : 4));
        RW_HIP(algorithm(tmp, bytes));
        RW_HIP(hipStreamSynchronize(stream));
        RW_HIP(hipFree(tmp));
        std::printf("rw: ran=%s\n", what);
    };
    run("reduce", [&](void *t, size_t &b) {
        return rocprim::reduce(t, b, in, out, 0u, n, rocprim::plus<unsigned>(), stream);
    });
    run("inclusive_scan", [&](void *t, size_t &b) {
        return rocprim::inclusive_scan(t, b, in, out, n, rocprim::plus<unsigned>(), stream);
    });
    run("exclusive_scan", [&](void *t, size_t &b) {
        return rocprim::exclusive_scan(t, b, in, out, 0u, n, rocprim::plus<unsigned>(), stream);
    });
    run("radix_sort_keys", [&](void *t, size_t &b) {
        return rocprim::radix_sort_keys(t, b, in, out, n, 0, 32, stream);
    });
    run("radix_sort_pairs", [&](void *t, size_t &b) {
        return rocprim::radix_sort_pairs(t, b, in, out, vals, vals_out, n, 0, 32, stream);
    });
    RW_HIP(rocprim::transform(in, out, n, [](unsigned v) { return v * 3u + 1u; }, stream));
    RW_HIP(hipStreamSynchronize(stream));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)in, (void *)out, (void *)vals, (void *)vals_out})
        RW_HIP(hipFree(p));
    rw_fact("rocprim_version", ROCPRIM_VERSION);
    rw_done();
    return 0;
}
