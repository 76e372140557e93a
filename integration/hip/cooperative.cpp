// Cooperative launches: kernels that synchronise their whole grid (cooperative groups'
// grid.sync()) and, across devices, their multi-grid (multi_grid.sync()).
//
// A real MI210 has cooperative queues (HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES), so HIP reports
// cooperativeLaunch and cooperativeMultiDeviceLaunch and accepts hipLaunchCooperativeKernel and
// hipLaunchCooperativeKernelMultiDevice. HIP sends those dispatches to the device's one
// cooperative queue, each after its __amd_rocclr_gwsInit blit (it sets up the global wave sync
// counter). Kernels never run here, so nothing is checked of their output.
//
// Launches, with B = the occupancy-limited number of blocks of 256 threads the device can hold
// at once (hipOccupancyMaxActiveBlocksPerMultiprocessor x multiProcessorCount, printed as
// `sg: max_cooperative_blocks`):
//   grid_sum        hipLaunchCooperativeKernel, 104 x 256 on a stream            x1
//   grid_sum        hipLaunchCooperativeKernel, 8 x 64, 1024 dynamic LDS, null   x1
//   multi_grid_sum  hipLaunchCooperativeKernelMultiDevice, 16 x 128 per device   x1 per device
//   grid_sum        hipLaunchCooperativeKernel with B + 1 blocks: refused
//                   (hipErrorCooperativeLaunchTooLarge), nothing reaches a queue
//
// Facts: cooperative_launch, cooperative_multi_device_launch (hipDeviceProp_t and the device
// attributes must agree), devices, max_cooperative_blocks, too_large=refused.
#include "sg_hip.h"

#include <hip/hip_cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

__global__ void grid_sum(int *data, int *out) {
    cg::grid_group grid = cg::this_grid();
    data[grid.thread_rank()] = 1;
    grid.sync();
    if (grid.thread_rank() == 0) {
        int s = 0;
        for (unsigned long long i = 0; i < grid.size(); i++) s += data[i];
        *out = s;
    }
}

__global__ void multi_grid_sum(int *data, int *out) {
    cg::multi_grid_group mgrid = cg::this_multi_grid();
    cg::grid_group grid = cg::this_grid();
    data[grid.thread_rank()] = static_cast<int>(mgrid.grid_rank()) + 1;
    mgrid.sync();
    if (grid.thread_rank() == 0) *out = data[0] * static_cast<int>(mgrid.num_grids());
}

int main() {
    sg_start("cooperative");
    int devices = 0;
    SG_HIP(hipGetDeviceCount(&devices));
    sg_fact("devices", "%d", devices);
    hipDeviceProp_t prop;
    SG_HIP(hipGetDeviceProperties(&prop, 0));
    int coop = -1, coop_multi = -1;
    SG_HIP(hipDeviceGetAttribute(&coop, hipDeviceAttributeCooperativeLaunch, 0));
    SG_HIP(hipDeviceGetAttribute(&coop_multi, hipDeviceAttributeCooperativeMultiDeviceLaunch, 0));
    SG_EXPECT(coop == prop.cooperativeLaunch && coop_multi == prop.cooperativeMultiDeviceLaunch,
              "hipDeviceProp_t says cooperative %d/%d, the attributes %d/%d", prop.cooperativeLaunch,
              prop.cooperativeMultiDeviceLaunch, coop, coop_multi);
    sg_fact("cooperative_launch", "%d", prop.cooperativeLaunch);
    sg_fact("cooperative_multi_device_launch", "%d", prop.cooperativeMultiDeviceLaunch);
    sg_fact("multiprocessors", "%d", prop.multiProcessorCount);

    int per_cu = 0;
    SG_HIP(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, grid_sum, 256, 0));
    int max_blocks = per_cu * prop.multiProcessorCount;
    sg_fact("max_cooperative_blocks", "%d", max_blocks);
    SG_EXPECT(max_blocks >= 104, "only %d cooperative blocks of 256 threads fit", max_blocks);

    int *data = nullptr, *out = nullptr;
    const size_t n = static_cast<size_t>(max_blocks + 1) * 256;
    SG_HIP(hipMalloc(&data, n * sizeof(int)));
    SG_HIP(hipMalloc(&out, sizeof(int)));
    hipStream_t s;
    SG_HIP(hipStreamCreate(&s));
    void *args[] = {&data, &out};
    SG_HIP(hipLaunchCooperativeKernel(reinterpret_cast<const void *>(grid_sum), dim3(104), dim3(256),
                                      args, 0, s));
    SG_HIP(hipLaunchCooperativeKernel(reinterpret_cast<const void *>(grid_sum), dim3(8), dim3(64),
                                      args, 1024, nullptr));
    SG_HIP(hipStreamSynchronize(s));
    SG_HIP(hipDeviceSynchronize());

    // More blocks than can be resident at once: a cooperative launch must be refused.
    hipError_t big = hipLaunchCooperativeKernel(reinterpret_cast<const void *>(grid_sum),
                                                dim3(max_blocks + 1), dim3(256), args, 0, s);
    hipError_t last = hipGetLastError();
    SG_EXPECT(big != hipSuccess || last != hipSuccess,
              "HIP accepted a cooperative launch of %d blocks (at most %d fit)", max_blocks + 1,
              max_blocks);
    std::printf("%d blocks refused: %d (%s)\n", max_blocks + 1, (int)big, hipGetErrorString(big));
    sg_fact("too_large", "refused");
    SG_HIP(hipGetLastError());

    // One multi-grid over every device, a stream and buffers on each.
    std::vector<hipLaunchParams> launches(devices);
    std::vector<hipStream_t> streams(devices);
    std::vector<int *> mdata(devices), mout(devices);
    std::vector<std::vector<void *>> margs(devices);
    for (int d = 0; d < devices; d++) {
        SG_HIP(hipSetDevice(d));
        SG_HIP(hipStreamCreate(&streams[d]));
        SG_HIP(hipMalloc(&mdata[d], 16 * 128 * sizeof(int)));
        SG_HIP(hipMalloc(&mout[d], sizeof(int)));
        margs[d] = {&mdata[d], &mout[d]};
        launches[d].func = reinterpret_cast<void *>(multi_grid_sum);
        launches[d].gridDim = dim3(16);
        launches[d].blockDim = dim3(128);
        launches[d].args = margs[d].data();
        launches[d].sharedMem = 0;
        launches[d].stream = streams[d];
    }
    SG_HIP(hipLaunchCooperativeKernelMultiDevice(launches.data(), devices, 0));
    for (int d = 0; d < devices; d++) {
        SG_HIP(hipSetDevice(d));
        SG_HIP(hipStreamSynchronize(streams[d]));
        SG_HIP(hipStreamDestroy(streams[d]));
        SG_HIP(hipFree(mdata[d]));
        SG_HIP(hipFree(mout[d]));
    }
    SG_HIP(hipSetDevice(0));
    SG_HIP(hipStreamDestroy(s));
    SG_HIP(hipFree(data));
    SG_HIP(hipFree(out));
    sg_done();
    return 0;
}
