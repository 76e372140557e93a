// Which devices HIP accepts: run under the SoftGPU shim with SOFTGPU_TARGET set, by
// tests/isa_hip_acceptance.rs, on HIP 5.2.3 (host) and HIP 6.4.3 (sid chroot).
//
// Nothing here fails on a HIP error: every status is printed, because the statuses are the
// measurement. Output: lines `sg: key=value`, the last one `sg: done=1`.
//
//   sg: device_count_status=<hipError_t>   sg: device_count=<n>
//   per device i: sg: dev<i>.props_status, .name, .gcn_arch_name, .warp_size, .cus,
//                 .shared_mem_per_block, .total_global_mem, .pci_device_id
//   with the argument `launch`, per device i: sg: dev<i>.launch_status, .sync_status
//     (an empty kernel launched with one workgroup of 64 work-items; it is compiled for the
//     offload targets the harness passed to hipcc, so a device without code for its target
//     reports the error HIP gives for that).
#include <hip/hip_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

#ifndef SG_NO_KERNEL
__global__ void sg_empty(int *p) {
    if (p) p[threadIdx.x] = 0;
}
#endif

static void fact(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fact(const char *key, const char *fmt, ...) {
    std::printf("sg: %s=", key);
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
}

int main(int argc, char **argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    bool launch = argc > 1 && std::strcmp(argv[1], "launch") == 0;
    fact("hip_version", "%d.%d", HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    fact("device_count_status", "%d", (int)e);
    fact("device_count", "%d", e == hipSuccess ? n : 0);
    if (e != hipSuccess) n = 0;
    for (int i = 0; i < n; i++) {
        char k[64];
        hipDeviceProp_t p;
        std::memset(&p, 0, sizeof p);
        e = hipGetDeviceProperties(&p, i);
        std::snprintf(k, sizeof k, "dev%d.props_status", i);
        fact(k, "%d", (int)e);
        if (e != hipSuccess) continue;
        std::snprintf(k, sizeof k, "dev%d.name", i);
        fact(k, "%s", p.name);
        std::snprintf(k, sizeof k, "dev%d.gcn_arch_name", i);
        fact(k, "%s", p.gcnArchName);
        std::snprintf(k, sizeof k, "dev%d.warp_size", i);
        fact(k, "%d", p.warpSize);
        std::snprintf(k, sizeof k, "dev%d.cus", i);
        fact(k, "%d", p.multiProcessorCount);
        std::snprintf(k, sizeof k, "dev%d.shared_mem_per_block", i);
        fact(k, "%zu", (size_t)p.sharedMemPerBlock);
        std::snprintf(k, sizeof k, "dev%d.total_global_mem", i);
        fact(k, "%zu", (size_t)p.totalGlobalMem);
        std::snprintf(k, sizeof k, "dev%d.pci_device_id", i);
        fact(k, "%d", p.pciDeviceID);
    }
#ifdef SG_NO_KERNEL
    if (launch) fact("launch", "%s", "not built (SG_NO_KERNEL)");
    launch = false;
#endif
    if (launch) {
        for (int i = 0; i < n; i++) {
            char k[64];
            e = hipSetDevice(i);
            std::snprintf(k, sizeof k, "dev%d.set_status", i);
            fact(k, "%d", (int)e);
            if (e != hipSuccess) continue;
            (void)hipGetLastError();
#ifndef SG_NO_KERNEL
            hipLaunchKernelGGL(sg_empty, dim3(1), dim3(64), 0, 0, (int *)nullptr);
#endif
            e = hipGetLastError();
            std::snprintf(k, sizeof k, "dev%d.launch_status", i);
            fact(k, "%d", (int)e);
            e = hipDeviceSynchronize();
            std::snprintf(k, sizeof k, "dev%d.sync_status", i);
            fact(k, "%d", (int)e);
        }
    }
    fact("done", "1");
    return 0;
}
