// hipRTC: a kernel compiled at run time from a source string, for the device's own
// architecture (`--gpu-architecture=<gcnArchName>`), loaded with hipModuleLoadData and launched
// with hipModuleLaunchKernel and arguments.
//
// The source holds an extern "C" kernel, `rtc_axpy`, and a template whose instance is found
// through hiprtcAddNameExpression/hiprtcGetLoweredName (`rtc_fill<int>`, a C++-mangled name).
// HIP 5.2 has hipRTC inside libamdhip64; HIP 6.4 and 7.2 have it in libhiprtc.so.6 and .so.7
// (the harness links -lhiprtc there).
//
// Launches (blocks x threads -> grid in work-items), arguments printed as facts:
//   rtc_axpy        4 x 256 -> [1024,1,1]  x1  (a=2.5, x, y, n=1000)
//   rtc_axpy        1 x  64 -> [64,1,1]    x1  (a=-0.5, x, y, n=64)
//   rtc_fill<int>   2 x 128 -> [256,1,1]   x1  (p, v=-7)
#include "sg_hip.h"

#include <dlfcn.h>
#include <hip/hiprtc.h>

#include <string>
#include <vector>

#define SG_RTC(call)                                                                 \
    do {                                                                             \
        hiprtcResult sg_rtc_ = (call);                                               \
        if (sg_rtc_ != HIPRTC_SUCCESS)                                               \
            SG_FAIL("%s returned %d (%s)", #call, (int)sg_rtc_,                      \
                    hiprtcGetErrorString(sg_rtc_));                                  \
    } while (0)

static const char *SOURCE = R"(
extern "C" __global__ void rtc_axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void rtc_fill(T *p, T v) {
    p[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
)";

int main() {
    sg_start("hiprtc");
    SG_HIP(hipInit(0));
    hipDeviceProp_t prop;
    SG_HIP(hipGetDeviceProperties(&prop, 0));
    sg_fact("gcn_arch_name", "%s", prop.gcnArchName);

    // Which library hipRTC comes from, by the file that holds hiprtcCompileProgram.
    Dl_info info;
    SG_EXPECT(dladdr((void *)&hiprtcCompileProgram, &info) != 0 && info.dli_fname != nullptr,
              "dladdr(hiprtcCompileProgram) failed");
    const char *lib = std::strrchr(info.dli_fname, '/');
    sg_fact("hiprtc_library", "%s", lib ? lib + 1 : info.dli_fname);

    hiprtcProgram prog;
    SG_RTC(hiprtcCreateProgram(&prog, SOURCE, "rtc_kernels.cu", 0, nullptr, nullptr));
    SG_RTC(hiprtcAddNameExpression(prog, "rtc_fill<int>"));
    std::string arch = std::string("--gpu-architecture=") + prop.gcnArchName;
    const char *options[] = {arch.c_str(), "-O1"};
    hiprtcResult compiled = hiprtcCompileProgram(prog, 2, options);
    size_t log_size = 0;
    SG_RTC(hiprtcGetProgramLogSize(prog, &log_size));
    if (compiled != HIPRTC_SUCCESS) {
        std::string log(log_size + 1, '\0');
        if (log_size > 0) SG_RTC(hiprtcGetProgramLog(prog, &log[0]));
        SG_FAIL("hiprtcCompileProgram(%s) returned %d (%s):\n%s", arch.c_str(), (int)compiled,
                hiprtcGetErrorString(compiled), log.c_str());
    }
    const char *lowered = nullptr;
    SG_RTC(hiprtcGetLoweredName(prog, "rtc_fill<int>", &lowered));
    SG_EXPECT(lowered != nullptr, "no lowered name for rtc_fill<int>");
    std::string fill_name = lowered;  // owned by prog, which is destroyed below
    sg_fact("lowered_fill", "%s", fill_name.c_str());
    size_t code_size = 0;
    SG_RTC(hiprtcGetCodeSize(prog, &code_size));
    SG_EXPECT(code_size > 0, "hiprtcGetCodeSize: 0 bytes");
    std::vector<char> code(code_size);
    SG_RTC(hiprtcGetCode(prog, code.data()));
    SG_RTC(hiprtcDestroyProgram(&prog));
    // A code object: an ELF file for amdgcn.
    SG_EXPECT(code_size > 64 && std::memcmp(code.data(), "\x7f" "ELF", 4) == 0,
              "hiprtcGetCode did not give an ELF file (%zu bytes)", code_size);
    sg_fact("code_object", "elf");

    hipModule_t module;
    SG_HIP(hipModuleLoadData(&module, code.data()));
    hipFunction_t axpy, fill;
    SG_HIP(hipModuleGetFunction(&axpy, module, "rtc_axpy"));
    SG_HIP(hipModuleGetFunction(&fill, module, fill_name.c_str()));

    float *x = nullptr, *y = nullptr;
    int *p = nullptr;
    SG_HIP(hipMalloc(&x, 1024 * sizeof(float)));
    SG_HIP(hipMalloc(&y, 1024 * sizeof(float)));
    SG_HIP(hipMalloc(&p, 256 * sizeof(int)));
    sg_fact("x", "%p", (void *)x);
    sg_fact("y", "%p", (void *)y);
    sg_fact("p", "%p", (void *)p);

    float a = 2.5f;
    int n = 1000;
    void *args[] = {&a, &x, &y, &n};
    SG_HIP(hipModuleLaunchKernel(axpy, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    a = -0.5f;
    n = 64;
    SG_HIP(hipModuleLaunchKernel(axpy, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
    int v = -7;
    void *fill_args[] = {&p, &v};
    SG_HIP(hipModuleLaunchKernel(fill, 2, 1, 1, 128, 1, 1, 0, nullptr, fill_args, nullptr));
    SG_HIP(hipDeviceSynchronize());
    sg_fact("launches", "3");

    SG_HIP(hipModuleUnload(module));
    SG_HIP(hipFree(p));
    SG_HIP(hipFree(y));
    SG_HIP(hipFree(x));
    sg_done();
    return 0;
}
