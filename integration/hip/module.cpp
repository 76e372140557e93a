// Code objects loaded at run time: hipModuleLoad (from a file) and hipModuleLoadData (from
// memory), hipModuleGetFunction (extern "C" and C++-mangled names, and a missing name, which
// must fail), hipModuleGetGlobal plus hipMemcpyHtoD/DtoH on the global (checked byte for byte),
// hipModuleLaunchKernel with kernelParams and with the `extra` argument buffer, 1D and 3D, with
// dynamic LDS, then hipModuleUnload.
//
// argv[1]: the code object built from module_kernels.cpp with `hipcc --genco`.
//
// Launches (blocks x threads -> grid in work-items):
//   module_scale  64 x 256   -> [16384,1,1]  x2  (module from file, kernelParams)
//   module_scale   1 x 64    -> [64,1,1]     x1  (module from memory)
//   module_add    10 x 100   -> [1000,1,1]   x1  (`extra` buffer)
//   module_3d  (4,2,3) x (8,4,2) -> [32,8,6], workgroup [8,4,2], 512 bytes dynamic LDS  x1
#include "sg_hip.h"

#include <vector>

static std::vector<char> read_file(const char *path) {
    FILE *f = std::fopen(path, "rb");
    SG_EXPECT(f != nullptr, "cannot open %s", path);
    std::vector<char> data;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.insert(data.end(), buf, buf + n);
    std::fclose(f);
    SG_EXPECT(!data.empty(), "%s is empty", path);
    return data;
}

int main(int argc, char **argv) {
    sg_start("module");
    SG_EXPECT(argc == 2, "usage: module CODE_OBJECT");
    SG_HIP(hipInit(0));
    float *p = nullptr, *q = nullptr;
    int *ip = nullptr;
    const int n = 16384;
    SG_HIP(hipMalloc(&p, n * sizeof(float)));
    SG_HIP(hipMalloc(&q, n * sizeof(float)));
    SG_HIP(hipMalloc(&ip, 32 * 8 * 6 * sizeof(int)));

    hipModule_t m;
    SG_HIP(hipModuleLoad(&m, argv[1]));
    hipFunction_t f_scale, f_add, f_3d, f_missing;
    SG_HIP(hipModuleGetFunction(&f_scale, m, "module_scale"));
    SG_HIP(hipModuleGetFunction(&f_add, m, "_Z10module_addPfPKfi"));
    SG_HIP(hipModuleGetFunction(&f_3d, m, "module_3d"));
    hipError_t missing = hipModuleGetFunction(&f_missing, m, "no_such_kernel");
    SG_EXPECT(missing != hipSuccess, "hipModuleGetFunction(no_such_kernel) succeeded");
    (void)hipGetLastError();  // clear the expected error
    sg_fact("missing_function_error", "%d", (int)missing);

    // A module global: a real copy, checked both ways.
    hipDeviceptr_t g = nullptr;
    size_t gbytes = 0;
    SG_HIP(hipModuleGetGlobal(&g, &gbytes, m, "module_counter"));
    SG_EXPECT(gbytes == 64 * sizeof(int), "hipModuleGetGlobal: %zu bytes, expected 256", gbytes);
    unsigned char src[256], back[256];
    sg_fill(src, sizeof src, 77);
    std::memset(back, 0, sizeof back);
    SG_HIP(hipMemcpyHtoD(g, src, sizeof src));
    SG_HIP(hipMemcpyDtoH(back, g, sizeof back));
    SG_EXPECT_PATTERN("hipModuleGetGlobal(module_counter) round trip", back, sizeof back, 77);
    sg_fact("module_global", "ok");

    // kernelParams.
    float s = 2.0f;
    int count = n;
    void *params[] = {&p, &s, &count};
    for (int i = 0; i < 2; i++)
        SG_HIP(hipModuleLaunchKernel(f_scale, 64, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));

    // The `extra` argument buffer.
    struct {
        float *out;
        const float *in;
        int n;
    } args = {q, p, 1000};
    size_t args_size = sizeof args;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                     &args_size, HIP_LAUNCH_PARAM_END};
    SG_HIP(hipModuleLaunchKernel(f_add, 10, 1, 1, 100, 1, 1, 0, nullptr, nullptr, extra));

    // 3D, dynamic LDS, on a created stream.
    hipStream_t st;
    SG_HIP(hipStreamCreate(&st));
    void *params3[] = {&ip};
    SG_HIP(hipModuleLaunchKernel(f_3d, 4, 2, 3, 8, 4, 2, 512, st, params3, nullptr));
    SG_HIP(hipStreamSynchronize(st));
    SG_HIP(hipStreamDestroy(st));

    // The same code object from memory.
    std::vector<char> image = read_file(argv[1]);
    hipModule_t m2;
    SG_HIP(hipModuleLoadData(&m2, image.data()));
    hipFunction_t f_scale2;
    SG_HIP(hipModuleGetFunction(&f_scale2, m2, "module_scale"));
    int count2 = 64;
    void *params2[] = {&q, &s, &count2};
    SG_HIP(hipModuleLaunchKernel(f_scale2, 1, 1, 1, 64, 1, 1, 0, nullptr, params2, nullptr));

    SG_HIP(hipDeviceSynchronize());
    SG_HIP(hipModuleUnload(m2));
    SG_HIP(hipModuleUnload(m));
    SG_HIP(hipFree(p));
    SG_HIP(hipFree(q));
    SG_HIP(hipFree(ip));
    sg_done();
    return 0;
}
