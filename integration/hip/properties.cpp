// Device discovery and properties: exactly one device, and what hipGetDeviceProperties and
// hipDeviceGetAttribute say about it (printed as facts; the harness checks the values). The
// program checks that the different ways of asking agree with each other.
#include "sg_hip.h"

#include <dlfcn.h>
#include <hsa/hsa_ext_amd.h>

int main() {
    sg_start("properties");
    SG_HIP(hipInit(0));
    int count = -1;
    SG_HIP(hipGetDeviceCount(&count));
    sg_fact("device_count", "%d", count);
    SG_EXPECT(count >= 1, "hipGetDeviceCount = %d: HIP sees no device", count);
    SG_HIP(hipSetDevice(0));
    int dev = -1;
    SG_HIP(hipGetDevice(&dev));
    SG_EXPECT(dev == 0, "hipGetDevice = %d", dev);
    SG_EXPECT(hipSetDevice(count) != hipSuccess, "hipSetDevice(%d) succeeded", count);
    (void)hipGetLastError();

    hipDeviceProp_t p;
    SG_HIP(hipGetDeviceProperties(&p, 0));
    sg_fact("name", "%s", p.name);
    sg_fact("gcn_arch_name", "%s", p.gcnArchName);
    sg_fact("total_global_mem", "%zu", (size_t)p.totalGlobalMem);
    sg_fact("multi_processor_count", "%d", p.multiProcessorCount);
    sg_fact("warp_size", "%d", p.warpSize);
    sg_fact("max_threads_per_block", "%d", p.maxThreadsPerBlock);
    sg_fact("shared_mem_per_block", "%zu", (size_t)p.sharedMemPerBlock);
    sg_fact("max_threads_dim", "%d,%d,%d", p.maxThreadsDim[0], p.maxThreadsDim[1],
            p.maxThreadsDim[2]);
    sg_fact("major_minor", "%d.%d", p.major, p.minor);
    sg_fact("clock_rate_khz", "%d", p.clockRate);
    sg_fact("l2_cache_size", "%d", p.l2CacheSize);
    sg_fact("pci", "%04x:%02x:%02x", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    // Image limits: HIP reads them from the agent as uint32_t values.
    sg_fact("max_texture_1d", "%d", p.maxTexture1D);
    sg_fact("max_texture_1d_linear", "%d", p.maxTexture1DLinear);
    sg_fact("max_texture_2d", "%d,%d", p.maxTexture2D[0], p.maxTexture2D[1]);
    sg_fact("max_texture_3d", "%d,%d,%d", p.maxTexture3D[0], p.maxTexture3D[1], p.maxTexture3D[2]);
    sg_fact("cooperative_launch", "%d", p.cooperativeLaunch);
    sg_fact("cooperative_multi_device_launch", "%d", p.cooperativeMultiDeviceLaunch);

    // The same facts through other entry points.
    int v = 0;
    SG_HIP(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, 0));
    SG_EXPECT(v == p.multiProcessorCount, "attribute MultiprocessorCount %d vs %d", v,
              p.multiProcessorCount);
    SG_HIP(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 0));
    SG_EXPECT(v == p.warpSize, "attribute WarpSize %d vs %d", v, p.warpSize);
    SG_HIP(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxThreadsPerBlock, 0));
    SG_EXPECT(v == p.maxThreadsPerBlock, "attribute MaxThreadsPerBlock %d vs %d", v,
              p.maxThreadsPerBlock);
    SG_HIP(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxSharedMemoryPerBlock, 0));
    SG_EXPECT((size_t)v == (size_t)p.sharedMemPerBlock, "attribute MaxSharedMemoryPerBlock %d",
              v);
    char name[256] = {0};
    SG_HIP(hipDeviceGetName(name, sizeof name, 0));
    SG_EXPECT(std::strcmp(name, p.name) == 0, "hipDeviceGetName '%s' vs prop.name '%s'", name,
              p.name);
    size_t total = 0;
    SG_HIP(hipDeviceTotalMem(&total, 0));
    SG_EXPECT(total == (size_t)p.totalGlobalMem, "hipDeviceTotalMem %zu vs %zu", total,
              (size_t)p.totalGlobalMem);
    size_t free_b = 0, total_b = 0;
    SG_HIP(hipMemGetInfo(&free_b, &total_b));
    SG_EXPECT(total_b > 0 && free_b <= total_b, "hipMemGetInfo free %zu total %zu", free_b,
              total_b);
    // Fine-grained device memory: a real MI210 in an xGMI hive has a fine-grained VRAM pool,
    // which hipDeviceMallocFinegrained allocates from (HIP 5.2 fails without one). The
    // runtime's pointer info says which pool (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*).
    void *fine = nullptr;
    SG_HIP(hipExtMallocWithFlags(&fine, 1 << 20, hipDeviceMallocFinegrained));
    auto pointer_info = reinterpret_cast<decltype(&hsa_amd_pointer_info)>(
        dlsym(RTLD_DEFAULT, "hsa_amd_pointer_info"));
    SG_EXPECT(pointer_info, "hsa_amd_pointer_info is not in the process");
    hsa_amd_pointer_info_t pi;
    std::memset(&pi, 0, sizeof pi);
    pi.size = sizeof pi;
    SG_EXPECT(pointer_info(fine, &pi, nullptr, nullptr, nullptr) == HSA_STATUS_SUCCESS,
              "hsa_amd_pointer_info failed");
    sg_fact("fine_grained_malloc_flags", "%u", pi.global_flags);
    SG_HIP(hipFree(fine));
    int rt = 0, drv = 0;
    SG_HIP(hipRuntimeGetVersion(&rt));
    SG_HIP(hipDriverGetVersion(&drv));
    sg_fact("runtime_version", "%d", rt);
    sg_fact("driver_version", "%d", drv);
    SG_HIP(hipDeviceSynchronize());
    sg_done();
    return 0;
}
