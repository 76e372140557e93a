// hipModuleLoad of a real code object (argv[1], e.g. one of hipBLASLt's Tensile
// libraries), then one hipModuleLaunchKernel of every kernel listed in argv[2]
// (lines "NAME KERNARG_SIZE"), with zeroed kernel arguments of that size passed
// through HIP_LAUNCH_PARAM_BUFFER_POINTER and a workgroup of argv[3] work-items.
// Under SoftGPU no kernel runs: each launch is a captured dispatch. Prints one
// "sg: launch NAME=STATUS" line per kernel and "sg: launched=N failed=M".
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: module_launch_all CODE_OBJECT KERNEL_LIST BLOCK\n");
        return 2;
    }
    hipModule_t m;
    hipError_t e = hipModuleLoad(&m, argv[1]);
    std::printf("sg: hipModuleLoad=%d %s\n", (int)e, hipGetErrorName(e));
    if (e != hipSuccess) return 1;
    unsigned block = (unsigned)std::strtoul(argv[3], nullptr, 10);
    std::ifstream list(argv[2]);
    std::string name;
    size_t size = 0;
    int launched = 0, failed = 0;
    while (list >> name >> size) {
        hipFunction_t f;
        e = hipModuleGetFunction(&f, m, name.c_str());
        if (e == hipSuccess) {
            std::vector<unsigned char> args(size ? size : 1, 0);
            void *config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, args.data(),
                              HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
            e = hipModuleLaunchKernel(f, 1, 1, 1, block, 1, 1, 0, nullptr, nullptr, config);
        }
        std::printf("sg: launch %s=%d %s\n", name.c_str(), (int)e, hipGetErrorName(e));
        if (e == hipSuccess) launched++; else failed++;
    }
    e = hipDeviceSynchronize();
    std::printf("sg: hipDeviceSynchronize=%d\nsg: launched=%d failed=%d\n", (int)e, launched,
                failed);
    return failed == 0 && e == hipSuccess ? 0 : 1;
}
