// hipCUB over rocPRIM: DeviceReduce::Sum, DeviceScan::InclusiveSum and ExclusiveSum,
// DeviceRadixSort::SortKeys and SortPairs, and a block-level kernel of our own
// (BlockReduce), each device-wide call with its temporary-storage query.
#include "rw.h"

#include <hipcub/hipcub.hpp>

#include <vector>

__global__ void block_sum(const int *in, int *out) {
    using Reduce = hipcub::BlockReduce<int, 256>;
    __shared__ typename Reduce::TempStorage tmp;
    int v = in[blockIdx.x * 256 + threadIdx.x];
    int s = Reduce(tmp).Sum(v);
    if (threadIdx.x == 0)
        out[blockIdx.x] = s;
}

int main() {
    const int n = 1 << 20;
    std::vector<int> host(n);
    for (int i = 0; i < n; i++)
        host[i] = (i * 7919) % 1000;
    int *in, *out, *vals, *vals_out;
    RW_HIP(hipMalloc(&in, n * sizeof(int)));
    RW_HIP(hipMalloc(&out, n * sizeof(int)));
    RW_HIP(hipMalloc(&vals, n * sizeof(int)));
    RW_HIP(hipMalloc(&vals_out, n * sizeof(int)));
    RW_HIP(hipMemcpy(in, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
    hipStream_t stream;
    RW_HIP(hipStreamCreate(&stream));
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
    run("DeviceReduce::Sum", [&](void *t, size_t &b) {
        return hipcub::DeviceReduce::Sum(t, b, in, out, n, stream);
    });
    run("DeviceScan::InclusiveSum", [&](void *t, size_t &b) {
        return hipcub::DeviceScan::InclusiveSum(t, b, in, out, n, stream);
    });
    run("DeviceScan::ExclusiveSum", [&](void *t, size_t &b) {
        return hipcub::DeviceScan::ExclusiveSum(t, b, in, out, n, stream);
    });
    run("DeviceRadixSort::SortKeys", [&](void *t, size_t &b) {
        return hipcub::DeviceRadixSort::SortKeys(t, b, in, out, n, 0, 32, stream);
    });
    run("DeviceRadixSort::SortPairs", [&](void *t, size_t &b) {
        return hipcub::DeviceRadixSort::SortPairs(t, b, in, out, vals, vals_out, n, 0, 32, stream);
    });
    block_sum<<<n / 256, 256, 0, stream>>>(in, out);
    RW_HIP(hipGetLastError());
    RW_HIP(hipStreamSynchronize(stream));
    RW_HIP(hipStreamDestroy(stream));
    for (void *p : {(void *)in, (void *)out, (void *)vals, (void *)vals_out})
        RW_HIP(hipFree(p));
    rw_done();
    return 0;
}
