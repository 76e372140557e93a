// The ROCr 7.2.4 functions HIP 7.2.4 binds, reached through HIP 7's public API.
//
// HIP 7.2.4 (libamdhip64.so.7) imports functions ROCr 6.4 did not have or HIP 6.4 did not call.
// Each check below reaches one of them through the HIP call that leads there (CLR's source says
// which, and the harness counts the calls the shim received):
//
//   scratch        hipDeviceGetLimit/hipDeviceSetLimit with hipExtLimitScratchMin/Max/Current
//                  -> hsa_amd_agent_set_async_scratch_limit, HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_*
//   file_io        hipAmdFileRead/hipAmdFileWrite (hip/amd_detail/hip_storage.h, found with
//                  hipGetProcAddress as the header says) -> hsa_amd_ais_file_read/write: the
//                  bytes move between this program's own file, made in its working directory,
//                  and a device allocation, and must round-trip exactly
//   reserve_align  hipMemAddressReserve with an alignment: HIP 7.2.4 reaches
//                  hsa_amd_vmem_address_reserve_align only for managed memory under HMM, which
//                  SoftGPU does not offer; see check_reserve_align
//   retain         hipMemRetainAllocationHandle gives the handle mapped there; hipMemRelease of
//                  it while mapped (HIP releases the ROCr handle) keeps the mapping usable until
//                  it is unmapped; hipMemGetHandleForAddressRange over the mapping
//                  -> hsa_amd_vmem_retain_alloc_handle (of the released handle) and
//                  hsa_amd_vmem_export_shareable_handle
//   sampler        a texture object whose sampler has a different address mode per axis
//                  -> hsa_ext_sampler_create_v2; the sampler descriptor HIP copied is checked
//   dmabuf         hipMemGetHandleForAddressRange over hipMalloc memory
//                  -> hsa_amd_portable_export_dmabuf, which SoftGPU refuses (no other device
//                  or process can map this process's memory): HIP must return an error
//   copy_engine    hipMemcpy host<->device -> hsa_amd_memory_get_preferred_copy_engine (ROCclr
//                  asks it which SDMA engine to use): the bytes must round-trip exactly
//
// `rocr7 [CHECK...]` runs the named checks (default: all, in the order above), each ending with
// `sg: <check>=ok`; then one kernel takes the texture, the mapped range and the file buffer as
// arguments, so the capture shows their pointer checks.
//
// On HIP < 7 none of these APIs exists (hip_storage.h, hipExtLimitScratch*,
// hipMemGetHandleForAddressRange): the program starts HIP (one device), says so, reports
// `sg: rocr7_apis=absent` and finishes with nothing else checked.
#include "sg_hip.h"

#if HIP_VERSION_MAJOR >= 7
#include <hip/amd_detail/hip_storage.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

__global__ void rocr7_probe(hipTextureObject_t t, float *mapped, float *file_buffer) {
    int i = threadIdx.x;
    mapped[i] = tex3D<float>(t, 0.5f, 0.5f, 0.5f) + file_buffer[i];
}

static const size_t FILE_N = 64 * 1024;     // bytes moved each way through the file
static const int64_t FILE_OFFSET = 4096;    // where the device read starts in the file
static const char *FILE_NAME = "rocr7-ais.bin";

static bool wanted(int argc, char **argv, const char *check) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; i++)
        if (std::strcmp(argv[i], check) == 0) return true;
    return false;
}

// Host -> device -> host through a fresh host buffer: the copies HIP performs itself.
static void round_trip(const char *what, void *dev, size_t n, uint32_t seed) {
    std::vector<unsigned char> in(n), out(n, 0);
    sg_fill(in.data(), n, seed);
    SG_HIP(hipMemcpy(dev, in.data(), n, hipMemcpyHostToDevice));
    SG_HIP(hipMemcpy(out.data(), dev, n, hipMemcpyDeviceToHost));
    SG_EXPECT_PATTERN(what, out.data(), n, seed);
}

static void check_scratch() {
    size_t lo = 0, hi = 0, cur = 0;
    SG_HIP(hipDeviceGetLimit(&lo, hipExtLimitScratchMin));
    SG_HIP(hipDeviceGetLimit(&hi, hipExtLimitScratchMax));
    SG_HIP(hipDeviceGetLimit(&cur, hipExtLimitScratchCurrent));
    sg_fact("scratch_min", "%zu", lo);
    sg_fact("scratch_max", "%zu", hi);
    sg_fact("scratch_current_initial", "%zu", cur);
    SG_EXPECT(lo <= cur && cur <= hi && hi > 0, "scratch limits min %zu current %zu max %zu", lo,
              cur, hi);
    // A new limit inside the range is recorded and read back (HIP asks the runtime again).
    size_t want = hi / 4;
    SG_HIP(hipDeviceSetLimit(hipExtLimitScratchCurrent, want));
    SG_HIP(hipDeviceGetLimit(&cur, hipExtLimitScratchCurrent));
    SG_EXPECT(cur == want, "scratch limit set to %zu, read back %zu", want, cur);
    sg_fact("scratch_current_set", "%zu", cur);
    // One past the maximum is refused, and the limit stays.
    hipError_t e = hipDeviceSetLimit(hipExtLimitScratchCurrent, hi + 1);
    SG_EXPECT(e != hipSuccess, "a scratch limit of max + 1 (%zu) was accepted", hi + 1);
    (void)hipGetLastError();
    SG_HIP(hipDeviceGetLimit(&cur, hipExtLimitScratchCurrent));
    SG_EXPECT(cur == want, "a refused scratch limit changed it: %zu, expected %zu", cur, want);
    sg_fact("scratch_over_max", "refused");
    // The min and max are read-only.
    e = hipDeviceSetLimit(hipExtLimitScratchMax, hi);
    SG_EXPECT(e != hipSuccess, "hipExtLimitScratchMax could be set");
    (void)hipGetLastError();
    sg_fact("scratch", "ok");
}

typedef hipError_t (*file_io_fn)(hipAmdFileHandle_t, void *, uint64_t, int64_t, uint64_t *,
                                 int32_t *);

static file_io_fn proc(const char *name) {
    void *p = nullptr;
    hipDriverProcAddressQueryResult found = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    SG_HIP(hipGetProcAddress(name, &p, HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR,
                             hipEnableDefault, &found));
    SG_EXPECT(p != nullptr && found == HIP_GET_PROC_ADDRESS_SUCCESS,
              "hipGetProcAddress(%s) found %p (query result %d)", name, p, (int)found);
    return (file_io_fn)p;
}

// Returns the device buffer the file was read into (kept for the probe kernel).
static float *check_file_io() {
    file_io_fn file_read = proc("hipAmdFileRead");
    file_io_fn file_write = proc("hipAmdFileWrite");
    int fd = open(FILE_NAME, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    SG_EXPECT(fd >= 0, "cannot create %s in the working directory: %s", FILE_NAME,
              std::strerror(errno));
    // The file: FILE_OFFSET zero bytes, then FILE_N bytes of pattern 71.
    std::vector<unsigned char> bytes(FILE_OFFSET + FILE_N, 0);
    sg_fill(bytes.data() + FILE_OFFSET, FILE_N, 71);
    SG_EXPECT(pwrite(fd, bytes.data(), bytes.size(), 0) == (ssize_t)bytes.size(),
              "pwrite %s: %s", FILE_NAME, std::strerror(errno));
    hipAmdFileHandle_t h;
    std::memset(&h, 0, sizeof h);
    h.fd = fd;

    // File -> device, then device -> host with hipMemcpy: the bytes of the file.
    void *dev = nullptr;
    SG_HIP(hipMalloc(&dev, FILE_N));
    uint64_t copied = 0;
    int32_t st = -1;
    SG_HIP(file_read(h, dev, FILE_N, FILE_OFFSET, &copied, &st));
    SG_EXPECT(copied == FILE_N, "hipAmdFileRead copied %llu bytes, asked %zu",
              (unsigned long long)copied, FILE_N);
    sg_fact("file_read_status", "%d", (int)st);
    std::vector<unsigned char> back(FILE_N, 0);
    SG_HIP(hipMemcpy(back.data(), dev, FILE_N, hipMemcpyDeviceToHost));
    SG_EXPECT_PATTERN("file -> device (hipAmdFileRead) -> host", back.data(), FILE_N, 71);

    // Host -> device with hipMemcpy, then device -> file after the first block.
    void *dev2 = nullptr;
    SG_HIP(hipMalloc(&dev2, FILE_N));
    std::vector<unsigned char> src(FILE_N);
    sg_fill(src.data(), FILE_N, 72);
    SG_HIP(hipMemcpy(dev2, src.data(), FILE_N, hipMemcpyHostToDevice));
    copied = 0;
    st = -1;
    SG_HIP(file_write(h, dev2, FILE_N, FILE_OFFSET + (int64_t)FILE_N, &copied, &st));
    SG_EXPECT(copied == FILE_N, "hipAmdFileWrite copied %llu bytes, asked %zu",
              (unsigned long long)copied, FILE_N);
    sg_fact("file_write_status", "%d", (int)st);
    std::vector<unsigned char> onfile(FILE_N, 0);
    SG_EXPECT(pread(fd, onfile.data(), FILE_N, FILE_OFFSET + FILE_N) == (ssize_t)FILE_N,
              "pread %s: %s", FILE_NAME, std::strerror(errno));
    SG_EXPECT_PATTERN("host -> device -> file (hipAmdFileWrite)", onfile.data(), FILE_N, 72);
    // The first block is still the file's own.
    SG_EXPECT(pread(fd, onfile.data(), FILE_N, FILE_OFFSET) == (ssize_t)FILE_N, "pread: %s",
              std::strerror(errno));
    SG_EXPECT_PATTERN("the file block before the written one", onfile.data(), FILE_N, 71);

    // Memory that is not device memory (pageable host memory) is refused, and left alone.
    std::vector<unsigned char> host(FILE_N, 0xA5);
    hipError_t e = file_read(h, host.data(), FILE_N, FILE_OFFSET, nullptr, nullptr);
    SG_EXPECT(e != hipSuccess, "hipAmdFileRead into pageable host memory succeeded");
    (void)hipGetLastError();
    for (size_t i = 0; i < FILE_N; i++)
        SG_EXPECT(host[i] == 0xA5, "a refused hipAmdFileRead wrote host byte %zu", i);
    // A range running past the end of the device allocation is refused too.
    e = file_read(h, dev, 2 * FILE_N, 0, nullptr, nullptr);
    SG_EXPECT(e != hipSuccess, "hipAmdFileRead past the end of its allocation succeeded");
    (void)hipGetLastError();
    sg_fact("file_refusals", "host,past_end");

    close(fd);
    SG_HIP(hipFree(dev2));
    sg_fact("file_io", "ok");
    return (float *)dev;
}

static hipMemAllocationProp device_prop() {
    hipMemAllocationProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = 0;
    return prop;
}

static size_t granularity() {
    hipMemAllocationProp prop = device_prop();
    size_t g = 0;
    SG_HIP(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
    SG_EXPECT(g > 0, "allocation granularity 0");
    return g;
}

static void map_rw(void *p, size_t n, hipMemGenericAllocationHandle_t h) {
    SG_HIP(hipMemMap(p, n, 0, h, 0));
    hipMemAccessDesc access;
    std::memset(&access, 0, sizeof access);
    access.location.type = hipMemLocationTypeDevice;
    access.location.id = 0;
    access.flags = hipMemAccessFlagsProtReadWrite;
    SG_HIP(hipMemSetAccess(p, n, &access, 1));
}

// HIP 7.2.4 binds hsa_amd_vmem_address_reserve_align for one path only: managed memory on a
// device with HMM (CLR's Device::reserveMemory, page-aligned, for hipMallocManaged when
// HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED is true). SoftGPU's virtual runtime has no SVM (a documented
// policy), so HIP never takes that path here. hipMemAddressReserve itself reserves with
// hsa_amd_vmem_address_reserve and passes no alignment on (CLR's Device::virtualAlloc); ROCr
// then aligns to the page. So this check holds HIP to what ROCr promises: a page-aligned
// reservation that maps and moves bytes, and it reports whether the requested alignment was
// honoured (HIP 7.2.4 does not; the harness expects what was measured).
static void check_reserve_align() {
    const size_t g = granularity();
    const size_t align = 256u << 20;  // far above the granularity: alignment no accident gives
    const size_t size = 4 * g;
    void *p = nullptr;
    SG_HIP(hipMemAddressReserve(&p, size, align, nullptr, 0));
    SG_EXPECT(p != nullptr && ((uintptr_t)p % 4096) == 0,
              "hipMemAddressReserve(alignment %zu) gave %p, not even page-aligned", align, p);
    sg_fact("reserve_requested_alignment", "%s",
            ((uintptr_t)p % align) == 0 ? "honoured" : "ignored");
    // The reservation is usable: one granule mapped at its start moves bytes, and so does one
    // mapped at its end.
    hipMemAllocationProp prop = device_prop();
    hipMemGenericAllocationHandle_t h;
    SG_HIP(hipMemCreate(&h, g, &prop, 0));
    map_rw(p, g, h);
    round_trip("a mapping at the start of a reservation", p, g, 73);
    SG_HIP(hipMemUnmap(p, g));
    void *last = (char *)p + size - g;
    map_rw(last, g, h);
    round_trip("the same allocation mapped at the end of the reservation", last, g, 78);
    SG_HIP(hipMemUnmap(last, g));
    SG_HIP(hipMemRelease(h));
    SG_HIP(hipMemAddressFree(p, size));
    sg_fact("reserve_align", "ok");
}

// Returns the mapped range (kept mapped for the probe kernel), `g` bytes.
//
// HIP 7.2.4's hipMemRetainAllocationHandle hands back the handle mapped at an address without
// taking a reference of its own (CLR's hip_vm.cpp of that release; later CLR retains), so the
// program releases only the handle it created. HIP releases the ROCr handle at that
// hipMemRelease while it is still mapped; as in ROCr, the mapping stays usable until it is
// unmapped, and hsa_amd_vmem_retain_alloc_handle (reached through
// hipMemGetHandleForAddressRange over the mapping) gives the released handle a reference again.
static float *check_retain(size_t *mapped_size) {
    const size_t g = granularity();
    void *p = nullptr;
    SG_HIP(hipMemAddressReserve(&p, g, 0, nullptr, 0));
    hipMemAllocationProp prop = device_prop();
    hipMemGenericAllocationHandle_t h, h2, h3;
    SG_HIP(hipMemCreate(&h, g, &prop, 0));
    map_rw(p, g, h);
    // The handle retained from any address of the mapping is the one mapped there.
    SG_HIP(hipMemRetainAllocationHandle(&h2, (char *)p + 100));
    SG_EXPECT(h2 == h, "hipMemRetainAllocationHandle gave %p, the mapped handle is %p",
              (void *)h2, (void *)h);
    SG_HIP(hipMemRetainAllocationHandle(&h3, p));
    SG_EXPECT(h3 == h, "a second retain gave %p, expected %p", (void *)h3, (void *)h);
    // Releasing the program's handle keeps the mapping: bytes still move through it.
    SG_HIP(hipMemRelease(h));
    round_trip("the mapping after its handle was released", p, g, 74);
    // The mapping exported as a dma-buf (the VMM path: the released handle is retained again,
    // then exported): a file descriptor of the allocation's size.
    int fd = -1;
    SG_HIP(hipMemGetHandleForAddressRange(&fd, (hipDeviceptr_t)p, g,
                                          hipMemRangeHandleTypeDmaBufFd, 0));
    SG_EXPECT(fd >= 0, "hipMemGetHandleForAddressRange gave fd %d", fd);
    off_t end = lseek(fd, 0, SEEK_END);
    SG_EXPECT(end == (off_t)g, "the exported descriptor's size is %lld, the allocation's %zu",
              (long long)end, g);
    close(fd);
    sg_fact("vmm_export", "fd");
    round_trip("the mapping after its export", p, g, 75);
    *mapped_size = g;
    sg_fact("retain", "ok");
    return (float *)p;
}

// After the probe: unmapping is the last use of the allocation; nothing is mapped there any
// more, so no handle can be retained from the address.
static void unmap_retained(float *p, size_t g) {
    SG_HIP(hipMemUnmap(p, g));
    hipMemGenericAllocationHandle_t h;
    hipError_t e = hipMemRetainAllocationHandle(&h, p);
    SG_EXPECT(e != hipSuccess, "a handle was retained from %p after its only mapping went",
              (void *)p);
    (void)hipGetLastError();
    SG_HIP(hipMemAddressFree(p, g));
    sg_fact("unmapped_retain", "refused");
}

static const int VX = 8, VY = 8, VZ = 4;

static hipTextureObject_t check_sampler() {
    hipChannelFormatDesc fmt = hipCreateChannelDesc<float>();
    hipArray_t a3 = nullptr;
    SG_HIP(hipMalloc3DArray(&a3, &fmt, make_hipExtent(VX, VY, VZ), 0));
    hipResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = hipResourceTypeArray;
    res.res.array.array = a3;
    hipTextureDesc td;
    std::memset(&td, 0, sizeof td);
    // One address mode per axis.
    td.addressMode[0] = hipAddressModeClamp;
    td.addressMode[1] = hipAddressModeMirror;
    td.addressMode[2] = hipAddressModeBorder;
    td.filterMode = hipFilterModePoint;
    td.readMode = hipReadModeElementType;
    td.normalizedCoords = 1;
    hipTextureObject_t tex = 0;
    SG_HIP(hipCreateTextureObject(&tex, &res, &td, nullptr));
    struct {
        uint32_t image[12];
        uint32_t sampler[8];
    } texobj;
    SG_HIP(hipMemcpy(&texobj, (const void *)tex, sizeof texobj, hipMemcpyDefault));
    // CLAMP_X = CLAMP_LAST_TEXEL (2), CLAMP_Y = MIRROR (1), CLAMP_Z = CLAMP_BORDER (6),
    // normalized coordinates (FORCE_UNNORMALIZED clear), MAX_LOD 4095, point filtering.
    uint32_t want0 = 2u | 1u << 3 | 6u << 6;
    SG_EXPECT(texobj.sampler[0] == want0 && texobj.sampler[1] == (4095u << 12) &&
                  texobj.sampler[2] == 0,
              "sampler descriptor %08x %08x %08x, expected %08x %08x %08x", texobj.sampler[0],
              texobj.sampler[1], texobj.sampler[2], want0, 4095u << 12, 0u);
    sg_fact("sampler_clamp_xyz", "%u,%u,%u", texobj.sampler[0] & 7, (texobj.sampler[0] >> 3) & 7,
            (texobj.sampler[0] >> 6) & 7);
    sg_fact("sampler", "ok");
    return tex;
}

static void check_dmabuf() {
    void *dev = nullptr;
    SG_HIP(hipMalloc(&dev, 1 << 20));
    int fd = -1;
    hipError_t e = hipMemGetHandleForAddressRange(&fd, (hipDeviceptr_t)dev, 1 << 20,
                                                  hipMemRangeHandleTypeDmaBufFd, 0);
    SG_EXPECT(e != hipSuccess,
              "hipMemGetHandleForAddressRange exported hipMalloc memory as dma-buf fd %d, but no "
              "other device or process can map this process's memory",
              fd);
    SG_EXPECT(fd == -1, "a refused export wrote fd %d", fd);
    (void)hipGetLastError();
    sg_fact("dmabuf_export", "refused:%d", (int)e);
    SG_HIP(hipFree(dev));
    sg_fact("dmabuf", "ok");
}

static void check_copy_engine() {
    const size_t n = 4 << 20;
    void *dev = nullptr;
    SG_HIP(hipMalloc(&dev, n));
    round_trip("hipMemcpy host -> device -> host (4 MiB)", dev, n, 76);
    void *pinned = nullptr;
    SG_HIP(hipHostMalloc(&pinned, n, 0));
    sg_fill(pinned, n, 77);
    SG_HIP(hipMemcpy(dev, pinned, n, hipMemcpyHostToDevice));
    std::memset(pinned, 0, n);
    SG_HIP(hipMemcpy(pinned, dev, n, hipMemcpyDeviceToHost));
    SG_EXPECT_PATTERN("hipMemcpy pinned host -> device -> pinned host", pinned, n, 77);
    SG_HIP(hipHostFree(pinned));
    SG_HIP(hipFree(dev));
    sg_fact("copy_engine", "ok");
}

int main(int argc, char **argv) {
    sg_start("rocr7");
    sg_fact("rocr7_apis", "present");
    int checks = 0;
    if (wanted(argc, argv, "scratch")) check_scratch(), checks++;
    float *file_buffer = nullptr;
    if (wanted(argc, argv, "file_io")) file_buffer = check_file_io(), checks++;
    if (wanted(argc, argv, "reserve_align")) check_reserve_align(), checks++;
    float *mapped = nullptr;
    size_t mapped_size = 0;
    if (wanted(argc, argv, "retain")) mapped = check_retain(&mapped_size), checks++;
    hipTextureObject_t tex = 0;
    if (wanted(argc, argv, "sampler")) tex = check_sampler(), checks++;
    if (wanted(argc, argv, "dmabuf")) check_dmabuf(), checks++;
    if (wanted(argc, argv, "copy_engine")) check_copy_engine(), checks++;
    SG_EXPECT(checks == (argc < 2 ? 7 : argc - 1), "unknown check name among the arguments");
    sg_fact("checks", "%d", checks);
    if (tex && mapped && file_buffer) {
        hipLaunchKernelGGL(rocr7_probe, dim3(1), dim3(64), 0, 0, tex, mapped, file_buffer);
        SG_LAUNCHED("rocr7_probe");
        SG_HIP(hipDeviceSynchronize());
        sg_fact("probe", "launched");
    }
    if (tex) SG_HIP(hipDestroyTextureObject(tex));
    if (mapped) unmap_retained(mapped, mapped_size);
    if (file_buffer) SG_HIP(hipFree(file_buffer));
    sg_done();
    return 0;
}

#else

int main() {
    sg_start("rocr7");
    // HIP starts its runtime, so the run has a capture and an exit summary like every other.
    int devices = 0;
    SG_HIP(hipGetDeviceCount(&devices));
    SG_EXPECT(devices == 1, "%d devices", devices);
    std::printf("rocr7: HIP %d.%d has none of the APIs this program reaches ROCr 7.2.4 through "
                "(hipAmdFileRead/hipAmdFileWrite, hipExtLimitScratch*, "
                "hipMemGetHandleForAddressRange): nothing to check here\n",
                HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
    sg_fact("rocr7_apis", "absent");
    sg_done();
    return 0;
}

#endif
