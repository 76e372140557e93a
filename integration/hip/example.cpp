// The bundled example, README's main job: a vector add as any HIP tutorial writes it.
// hipMalloc, hipMemcpy host to device, launch vadd, hipDeviceSynchronize, hipMemcpy device to
// host, hipFree.
//
// Under SoftGPU the launch is captured and validated, and vadd never runs. So c[] is not the
// sum: it still holds what was copied into it before the launch, and this program checks
// exactly that (the copies are real, the kernel is not).
#include "sg_hip.h"

#include <vector>

__global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    sg_start("example");
    const int n = 1 << 20;  // 1,048,576 elements
    const int block = 256;
    const int grid = (n + block - 1) / block;
    const size_t bytes = n * sizeof(float);

    int devices = 0;
    SG_HIP(hipGetDeviceCount(&devices));
    hipDeviceProp_t prop;
    SG_HIP(hipGetDeviceProperties(&prop, 0));
    std::printf("device 0: %s (%s), %d compute units\n", prop.name, prop.gcnArchName,
                prop.multiProcessorCount);

    std::vector<float> a(n), b(n), c(n, -1.0f), back(n, 0.0f);
    for (int i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 2.0f * (float)i;
    }

    float *da = nullptr, *db = nullptr, *dc = nullptr;
    SG_HIP(hipMalloc(&da, bytes));
    SG_HIP(hipMalloc(&db, bytes));
    SG_HIP(hipMalloc(&dc, bytes));
    SG_HIP(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
    SG_HIP(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
    SG_HIP(hipMemcpy(dc, c.data(), bytes, hipMemcpyHostToDevice));

    hipLaunchKernelGGL(vadd, dim3(grid), dim3(block), 0, 0, da, db, dc, n);
    SG_LAUNCHED("vadd");
    SG_HIP(hipDeviceSynchronize());
    std::printf("launched vadd<<<%d, %d>>> over %d elements; synchronized\n", grid, block, n);

    // The inputs come back byte for byte: the copies are real.
    SG_HIP(hipMemcpy(back.data(), da, bytes, hipMemcpyDeviceToHost));
    SG_EXPECT(std::memcmp(back.data(), a.data(), bytes) == 0, "a did not round-trip");
    SG_HIP(hipMemcpy(back.data(), db, bytes, hipMemcpyDeviceToHost));
    SG_EXPECT(std::memcmp(back.data(), b.data(), bytes) == 0, "b did not round-trip");

    // c is what it was before the launch: vadd did not run.
    SG_HIP(hipMemcpy(back.data(), dc, bytes, hipMemcpyDeviceToHost));
    bool unchanged = std::memcmp(back.data(), c.data(), bytes) == 0;
    std::printf("c[1] = %g after the launch (a real GPU would give %g): SoftGPU never runs "
                "kernels, so the output is not computed\n",
                back[1], a[1] + b[1]);
    SG_EXPECT(unchanged, "c changed although no kernel runs under SoftGPU (c[1] = %g)", back[1]);
    sg_fact("kernel_output", "unchanged");
    sg_fact("launches.vadd", "%d", 1);
    sg_fact("grid", "%d", grid * block);
    sg_fact("workgroup", "%d", block);

    SG_HIP(hipFree(da));
    SG_HIP(hipFree(db));
    SG_HIP(hipFree(dc));
    sg_done();
    return 0;
}
