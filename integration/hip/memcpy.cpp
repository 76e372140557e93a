// Every copy direction HIP offers on one device, with pageable, pinned (hipHostMalloc) and
// registered (hipHostRegister) host memory, synchronous and asynchronous, 1D and 2D, and to/from
// symbols. Every copy the runtime performs itself is checked byte for byte with a round trip:
// host -> device, then device -> a different host buffer, compared with the source.
//
// Device-to-device copies, hipMemset and hipStreamWriteValue32/WaitValue32 are HIP's own blit
// kernels, which SoftGPU does not run. For those the program only reports what the destination
// holds afterwards (`sg: memset_result=`, `sg: d2d_result=`, `sg: write_value_result=`:
// unchanged, filled/copied/written, or other); the harness checks that against the capture (a
// blit was recorded, so the destination must be unchanged).
#include "sg_hip.h"

#include <vector>

__device__ unsigned char g_symbol[4096];
__constant__ unsigned int c_symbol[256];

static int g_checked = 0;  // copies verified byte for byte

// Sizes: 1 byte, an odd size, 1 MiB, and one larger than HIP's staging buffers (with a tail).
static const size_t kSizes[] = {1, 4096 + 3, 1u << 20, (9u << 20) + 13};

static void *xmalloc(size_t n) {
    void *p = std::malloc(n);
    SG_EXPECT(p != nullptr, "malloc(%zu) failed", n);
    return p;
}

// host `src` -> device -> host `dst` with hipMemcpy (kind given), then compare.
static void round_trip_sync(const char *what, unsigned char *src, unsigned char *dst,
                            unsigned char *dev, size_t n, uint32_t seed, hipMemcpyKind h2d,
                            hipMemcpyKind d2h) {
    char label[160];
    sg_fill(src, n, seed);
    std::memset(dst, 0xEE, n);
    SG_HIP(hipMemcpy(dev, src, n, h2d));
    SG_HIP(hipMemcpy(dst, dev, n, d2h));
    std::snprintf(label, sizeof label, "%s, %zu bytes, hipMemcpy", what, n);
    SG_EXPECT_PATTERN(label, dst, n, seed);
    // The source is untouched by the copy.
    std::snprintf(label, sizeof label, "%s, %zu bytes, source after hipMemcpy", what, n);
    SG_EXPECT_PATTERN(label, src, n, seed);
    g_checked += 2;
}

static void round_trip_async(const char *what, unsigned char *src, unsigned char *dst,
                             unsigned char *dev, size_t n, uint32_t seed, hipStream_t s) {
    char label[160];
    sg_fill(src, n, seed);
    std::memset(dst, 0xEE, n);
    SG_HIP(hipMemcpyAsync(dev, src, n, hipMemcpyHostToDevice, s));
    SG_HIP(hipMemcpyAsync(dst, dev, n, hipMemcpyDeviceToHost, s));
    SG_HIP(hipStreamSynchronize(s));
    std::snprintf(label, sizeof label, "%s, %zu bytes, hipMemcpyAsync", what, n);
    SG_EXPECT_PATTERN(label, dst, n, seed);
    g_checked += 2;
}

static void pointer_attributes(const void *p, bool device) {
    hipPointerAttribute_t attr;
    std::memset(&attr, 0, sizeof attr);
    SG_HIP(hipPointerGetAttributes(&attr, p));
#if HIP_VERSION_MAJOR >= 6
    hipMemoryType type = attr.type;
#else
    hipMemoryType type = attr.memoryType;
#endif
    if (device) {
        SG_EXPECT(type == hipMemoryTypeDevice, "hipPointerGetAttributes(device ptr): type %d",
                  (int)type);
        SG_EXPECT(attr.devicePointer == p, "device ptr: devicePointer %p, expected %p",
                  attr.devicePointer, p);
    } else {
        SG_EXPECT(type == hipMemoryTypeHost, "hipPointerGetAttributes(pinned ptr): type %d",
                  (int)type);
        SG_EXPECT(attr.hostPointer == p, "pinned ptr: hostPointer %p, expected %p",
                  attr.hostPointer, p);
    }
    SG_EXPECT(attr.device == 0, "pointer attributes: device %d", attr.device);
}

int main() {
    sg_start("memcpy");
    const size_t max = kSizes[sizeof kSizes / sizeof kSizes[0] - 1];
    hipStream_t s;
    SG_HIP(hipStreamCreate(&s));

    unsigned char *dev = nullptr;
    SG_HIP(hipMalloc(&dev, max + 64));
    pointer_attributes(dev, true);

    size_t free_b = 0, total_b = 0;
    SG_HIP(hipMemGetInfo(&free_b, &total_b));
    SG_EXPECT(total_b > 0 && free_b <= total_b, "hipMemGetInfo: free %zu total %zu", free_b,
              total_b);

    // ---- pageable host memory (malloc), at odd offsets on both sides
    unsigned char *pa = (unsigned char *)xmalloc(max + 64);
    unsigned char *pb = (unsigned char *)xmalloc(max + 64);
    uint32_t seed = 1;
    for (size_t n : kSizes) {
        round_trip_sync("pageable", pa + 1, pb + 5, dev + 3, n, seed++, hipMemcpyHostToDevice,
                        hipMemcpyDeviceToHost);
        round_trip_sync("pageable, hipMemcpyDefault", pa, pb, dev, n, seed++, hipMemcpyDefault,
                        hipMemcpyDefault);
        round_trip_async("pageable", pa + 1, pb, dev, n, seed++, s);
    }
    sg_fact("pageable", "ok");

    // ---- pinned host memory (hipHostMalloc)
    unsigned char *ha = nullptr, *hb = nullptr;
    SG_HIP(hipHostMalloc((void **)&ha, max + 64, hipHostMallocDefault));
    SG_HIP(hipHostMalloc((void **)&hb, max + 64, hipHostMallocDefault));
    pointer_attributes(ha, false);
    for (size_t n : kSizes) {
        round_trip_sync("pinned", ha, hb, dev, n, seed++, hipMemcpyHostToDevice,
                        hipMemcpyDeviceToHost);
        round_trip_async("pinned", ha + 7, hb + 1, dev + 1, n, seed++, s);
        round_trip_async("pinned, null stream", ha, hb, dev, n, seed++, nullptr);
    }
    sg_fact("pinned", "ok");

    // ---- registered host memory (hipHostRegister / hipHostUnregister)
    const size_t reg_n = (4u << 20) + 4096;
    unsigned char *ra = nullptr, *rb = nullptr;
    SG_EXPECT(posix_memalign((void **)&ra, 4096, reg_n) == 0, "posix_memalign");
    SG_EXPECT(posix_memalign((void **)&rb, 4096, reg_n) == 0, "posix_memalign");
    SG_HIP(hipHostRegister(ra, reg_n, hipHostRegisterDefault));
    SG_HIP(hipHostRegister(rb, reg_n, hipHostRegisterDefault));
    void *ra_dev = nullptr;
    SG_HIP(hipHostGetDevicePointer(&ra_dev, ra, 0));
    SG_EXPECT(ra_dev != nullptr, "hipHostGetDevicePointer gave null");
    round_trip_sync("registered", ra, rb, dev, reg_n, seed++, hipMemcpyHostToDevice,
                    hipMemcpyDeviceToHost);
    round_trip_sync("registered, part", ra + 4096 + 11, rb + 100, dev + 64, 65536 + 1, seed++,
                    hipMemcpyHostToDevice, hipMemcpyDeviceToHost);
    round_trip_async("registered", ra, rb, dev, reg_n, seed++, s);
    const uint32_t reg_seed = seed++;
    sg_fill(ra, reg_n, reg_seed);
    SG_HIP(hipMemcpy(dev, ra, reg_n, hipMemcpyHostToDevice));
    SG_HIP(hipHostUnregister(ra));
    SG_HIP(hipHostUnregister(rb));
    // Unregistering leaves the user's pages and data alone, and they still copy as pageable.
    SG_EXPECT_PATTERN("registered memory after hipHostUnregister", ra, reg_n, reg_seed);
    std::memset(rb, 0, reg_n);
    SG_HIP(hipMemcpy(rb, dev, reg_n, hipMemcpyDeviceToHost));
    SG_EXPECT_PATTERN("device copy of registered memory, read after unregister", rb, reg_n,
                      reg_seed);
    g_checked += 1;
    round_trip_sync("formerly registered", ra, rb, dev, reg_n, seed++, hipMemcpyHostToDevice,
                    hipMemcpyDeviceToHost);
    sg_fact("registered", "ok");

    // ---- host to host through HIP
    {
        const size_t n = (2u << 20) + 5;
        uint32_t hs = seed++;
        sg_fill(pa, n, hs);
        std::memset(pb, 0, n);
        SG_HIP(hipMemcpy(pb, pa, n, hipMemcpyHostToHost));
        SG_EXPECT_PATTERN("host to host, pageable", pb, n, hs);
        std::memset(hb, 0, n);
        SG_HIP(hipMemcpy(hb, pa, n, hipMemcpyHostToHost));
        SG_EXPECT_PATTERN("host to host, pageable to pinned", hb, n, hs);
        std::memset(pb, 0, n);
        SG_HIP(hipMemcpyAsync(pb, hb, n, hipMemcpyHostToHost, s));
        SG_HIP(hipStreamSynchronize(s));
        SG_EXPECT_PATTERN("host to host async, pinned to pageable", pb, n, hs);
        std::memset(pb, 0, n);
        SG_HIP(hipMemcpy(pb, hb, n, hipMemcpyDefault));
        SG_EXPECT_PATTERN("host to host, hipMemcpyDefault", pb, n, hs);
        g_checked += 4;
    }
    sg_fact("host_to_host", "ok");

    // ---- 2D: pitched device memory, host pitches that differ from the width and each other
    {
        const size_t width = 1000, height = 37, spitch = 1031, dpitch = 1100;
        unsigned char *d2 = nullptr;
        size_t pitch = 0;
        SG_HIP(hipMallocPitch((void **)&d2, &pitch, width, height));
        SG_EXPECT(pitch >= width, "hipMallocPitch: pitch %zu < width %zu", pitch, width);
        sg_fact("pitch", "%zu", pitch);
        for (int variant = 0; variant < 2; variant++) {
            unsigned char *src = variant == 0 ? pa : ha;  // pageable, then pinned
            unsigned char *dst = variant == 0 ? pb : hb;
            uint32_t s2 = seed++;
            sg_fill(src, spitch * height, s2);
            std::memset(dst, 0xEE, dpitch * height);
            if (variant == 0) {
                SG_HIP(hipMemcpy2D(d2, pitch, src, spitch, width, height, hipMemcpyHostToDevice));
                SG_HIP(hipMemcpy2D(dst, dpitch, d2, pitch, width, height, hipMemcpyDeviceToHost));
            } else {
                SG_HIP(hipMemcpy2DAsync(d2, pitch, src, spitch, width, height,
                                        hipMemcpyHostToDevice, s));
                SG_HIP(hipMemcpy2DAsync(dst, dpitch, d2, pitch, width, height,
                                        hipMemcpyDeviceToHost, s));
                SG_HIP(hipStreamSynchronize(s));
            }
            for (size_t row = 0; row < height; row++) {
                for (size_t col = 0; col < dpitch; col++) {
                    unsigned char got = dst[row * dpitch + col];
                    unsigned char want =
                        col < width ? sg_pattern_byte(s2, row * spitch + col) : 0xEE;
                    SG_EXPECT(got == want,
                              "hipMemcpy2D%s round trip: row %zu col %zu is 0x%02x, expected "
                              "0x%02x%s",
                              variant ? "Async (pinned)" : " (pageable)", row, col, got, want,
                              col < width ? "" : " (past the width: must be untouched)");
                }
            }
            g_checked += 2;
        }
        SG_HIP(hipFree(d2));
    }
    sg_fact("memcpy2d", "ok");

    // ---- symbols
    {
        size_t size = 0;
        SG_HIP(hipGetSymbolSize(&size, HIP_SYMBOL(g_symbol)));
        SG_EXPECT(size == sizeof g_symbol, "hipGetSymbolSize(g_symbol) = %zu", size);
        uint32_t ss = seed++;
        sg_fill(pa, sizeof g_symbol, ss);
        SG_HIP(hipMemcpyToSymbol(HIP_SYMBOL(g_symbol), pa, sizeof g_symbol, 0,
                                 hipMemcpyHostToDevice));
        std::memset(pb, 0, sizeof g_symbol);
        SG_HIP(hipMemcpyFromSymbol(pb, HIP_SYMBOL(g_symbol), sizeof g_symbol, 0,
                                   hipMemcpyDeviceToHost));
        SG_EXPECT_PATTERN("hipMemcpyToSymbol then hipMemcpyFromSymbol", pb, sizeof g_symbol, ss);
        // Through the symbol's address, with a plain hipMemcpy.
        void *addr = nullptr;
        SG_HIP(hipGetSymbolAddress(&addr, HIP_SYMBOL(g_symbol)));
        SG_EXPECT(addr != nullptr, "hipGetSymbolAddress(g_symbol) is null");
        std::memset(pb, 0, sizeof g_symbol);
        SG_HIP(hipMemcpy(pb, addr, sizeof g_symbol, hipMemcpyDeviceToHost));
        SG_EXPECT_PATTERN("hipMemcpy from hipGetSymbolAddress(g_symbol)", pb, sizeof g_symbol,
                          ss);
        // A piece at an offset, asynchronously; the rest keeps the first pattern.
        uint32_t so = seed++;
        sg_fill(ha, 100, so);
        SG_HIP(hipMemcpyToSymbolAsync(HIP_SYMBOL(g_symbol), ha, 100, 1000,
                                      hipMemcpyHostToDevice, s));
        std::memset(hb, 0, sizeof g_symbol);
        SG_HIP(hipMemcpyFromSymbolAsync(hb, HIP_SYMBOL(g_symbol), sizeof g_symbol, 0,
                                        hipMemcpyDeviceToHost, s));
        SG_HIP(hipStreamSynchronize(s));
        for (size_t i = 0; i < sizeof g_symbol; i++) {
            unsigned char want =
                (i >= 1000 && i < 1100) ? sg_pattern_byte(so, i - 1000) : sg_pattern_byte(ss, i);
            SG_EXPECT(hb[i] == want, "symbol copy at offset 1000: byte %zu is 0x%02x, want 0x%02x",
                      i, hb[i], want);
        }
        // __constant__ memory.
        uint32_t sc = seed++;
        sg_fill(pa, sizeof c_symbol, sc);
        SG_HIP(hipMemcpyToSymbol(HIP_SYMBOL(c_symbol), pa, sizeof c_symbol));
        std::memset(pb, 0, sizeof c_symbol);
        SG_HIP(hipMemcpyFromSymbol(pb, HIP_SYMBOL(c_symbol), sizeof c_symbol));
        SG_EXPECT_PATTERN("__constant__ symbol round trip", pb, sizeof c_symbol, sc);
        g_checked += 5;
    }
    sg_fact("symbols", "ok");
    sg_fact("copies_checked", "%d", g_checked);

    // ---- blit kernels: hipMemset and a device-to-device copy. Their data is not produced.
    {
        const size_t n = 64 * 1024;
        unsigned char *d1 = nullptr, *d2 = nullptr;
        SG_HIP(hipMalloc(&d1, n));
        SG_HIP(hipMalloc(&d2, n));
        uint32_t s1 = seed++, s2 = seed++;
        sg_fill(pa, n, s1);
        SG_HIP(hipMemcpy(d1, pa, n, hipMemcpyHostToDevice));
        sg_fill(pa, n, s2);
        SG_HIP(hipMemcpy(d2, pa, n, hipMemcpyHostToDevice));

        SG_HIP(hipMemset(d1, 0x5A, n));
        SG_HIP(hipDeviceSynchronize());
        SG_HIP(hipMemcpy(pb, d1, n, hipMemcpyDeviceToHost));
        bool filled = true;
        for (size_t i = 0; i < n; i++) filled = filled && pb[i] == 0x5A;
        const char *memset_result = sg_first_mismatch(pb, n, s1) == n ? "unchanged"
                                    : filled                          ? "filled"
                                                                      : "other";
        sg_fact("memset_result", "%s", memset_result);

        // d1 still holds s1 if the memset did not run; copy d1 -> d2 (d2 holds s2).
        SG_HIP(hipMemcpy(pb, d1, n, hipMemcpyDeviceToHost));
        SG_HIP(hipMemcpy(d2, d1, n, hipMemcpyDeviceToDevice));
        SG_HIP(hipDeviceSynchronize());
        SG_HIP(hipMemcpy(hb, d2, n, hipMemcpyDeviceToHost));
        const char *d2d_result = sg_first_mismatch(hb, n, s2) == n   ? "unchanged"
                                 : std::memcmp(hb, pb, n) == 0 ? "copied"
                                                                : "other";
        sg_fact("d2d_result", "%s", d2d_result);
        SG_HIP(hipFree(d1));
        SG_HIP(hipFree(d2));

        // hipStreamWriteValue32 / hipStreamWaitValue32: blit kernels as well.
        uint32_t *dv = nullptr, *hv = nullptr;
        SG_HIP(hipMalloc(&dv, 64));
        SG_HIP(hipHostMalloc((void **)&hv, 64, hipHostMallocDefault));
        uint32_t sw = seed++;
        sg_fill(pa, 64, sw);
        SG_HIP(hipMemcpy(dv, pa, 64, hipMemcpyHostToDevice));
        SG_HIP(hipStreamWriteValue32(s, dv, 0xC0FFEE01u, 0));
        SG_HIP(hipStreamSynchronize(s));
        SG_HIP(hipMemcpy(pb, dv, 64, hipMemcpyDeviceToHost));
        uint32_t first;
        std::memcpy(&first, pb, sizeof first);
        const char *write_result = sg_first_mismatch(pb, 64, sw) == 64 ? "unchanged"
                                   : first == 0xC0FFEE01u            ? "written"
                                                                     : "other";
        sg_fact("write_value_result", "%s", write_result);
        hv[0] = 5;  // already satisfied: a real wait would return at once
        SG_HIP(hipStreamWaitValue32(s, hv, 5, hipStreamWaitValueGte, 0xFFFFFFFFu));
        SG_HIP(hipStreamSynchronize(s));
        sg_fact("wait_value", "returned");
        SG_HIP(hipFree(dv));
        SG_HIP(hipHostFree(hv));
    }

    SG_HIP(hipStreamDestroy(s));
    SG_HIP(hipHostFree(ha));
    SG_HIP(hipHostFree(hb));
    SG_HIP(hipFree(dev));
    std::free(pa);
    std::free(pb);
    std::free(ra);
    std::free(rb);
    sg_done();
    return 0;
}
