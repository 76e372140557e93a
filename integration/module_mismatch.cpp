// hipModuleLoad of a code object built for another target (argv[1]): the
// shim's loader refuses it as ROCr does (HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS),
// HIP reports an error, and nothing crashes.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void unused_kernel() {}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: module_mismatch CODE_OBJECT\n");
        return 2;
    }
    hipModule_t m;
    hipError_t e = hipModuleLoad(&m, argv[1]);
    std::printf("sg: hipModuleLoad=%d\nsg: error=%s\n", (int)e, hipGetErrorName(e));
    return e == hipSuccess ? 1 : 0;
}
