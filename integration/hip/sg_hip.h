// Helpers shared by SoftGPU's HIP integration programs (integration/hip/*.cpp).
//
// The programs are ordinary HIP programs, built with `hipcc --offload-arch=gfx90a -O1` and run
// under LD_PRELOAD=libsoftgpu_hsa.so by tests/integration_hip.rs, on HIP 5.2.3 (the host), HIP
// 6.4.3 (the Debian sid chroot of scripts/sid-chroot) and HIP 7.2.4 (the ROCm 7 chroot of
// scripts/sid-chroot --rocm7). An API one version lacks is guarded with HIP_VERSION_MAJOR, and
// the program says through its facts what it did instead.
//
// Kernels never run under SoftGPU, and neither do HIP's own blit kernels (hipMemset, device-to-
// device copies). So a program never checks a kernel's output as computed; where it looks at a
// buffer a kernel or blit would have written, it reports what it found (`unchanged`, ...) and
// the harness decides against the capture. Copies the runtime performs itself (host<->device,
// host<->host, 2D, to/from symbol) must move the bytes exactly, and every one is checked.
//
// Output contract with the harness: lines starting with "sg: " are `key=value` facts. The last
// line of a program that finished every check is "sg: done=1". Any failed HIP call or check
// prints a line starting with "FAIL" to stderr and exits with status 1.
#ifndef SOFTGPU_SG_HIP_H
#define SOFTGPU_SG_HIP_H

#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define SG_FAIL(...)                                                                 \
    do {                                                                             \
        std::fflush(stdout);                                                         \
        std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                    \
        std::fprintf(stderr, __VA_ARGS__);                                           \
        std::fputc('\n', stderr);                                                    \
        std::exit(1);                                                                \
    } while (0)

// Every HIP call goes through this: anything but hipSuccess is a failure.
#define SG_HIP(call)                                                                 \
    do {                                                                             \
        hipError_t sg_err_ = (call);                                                 \
        if (sg_err_ != hipSuccess)                                                   \
            SG_FAIL("%s returned %d (%s)", #call, (int)sg_err_,                      \
                    hipGetErrorString(sg_err_));                                     \
    } while (0)

#define SG_EXPECT(cond, ...)                                                         \
    do {                                                                             \
        if (!(cond))                                                                 \
            SG_FAIL(__VA_ARGS__);                                                    \
    } while (0)

// A kernel launch: the launch itself must have been accepted.
#define SG_LAUNCHED(what)                                                            \
    do {                                                                             \
        hipError_t sg_err_ = hipGetLastError();                                      \
        if (sg_err_ != hipSuccess)                                                   \
            SG_FAIL("launch of %s failed: %d (%s)", what, (int)sg_err_,              \
                    hipGetErrorString(sg_err_));                                     \
    } while (0)

// One `sg: key=value` fact, flushed at once (a crash must not lose earlier facts).
static inline void sg_fact(const char *key, const char *fmt, ...) {
    std::printf("sg: %s=", key);
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
}

// Line-buffered stdout, so facts and messages interleave in order even through a pipe.
static inline void sg_start(const char *name) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::printf("%s: HIP %d.%d (HIP_VERSION %d)\n", name, HIP_VERSION_MAJOR, HIP_VERSION_MINOR,
                HIP_VERSION);
    sg_fact("hip_version", "%d.%d", HIP_VERSION_MAJOR, HIP_VERSION_MINOR);
}

static inline void sg_done(void) { sg_fact("done", "1"); }

// A byte pattern that differs for every (seed, offset), so a shifted, truncated or swapped copy
// never compares equal by accident.
static inline unsigned char sg_pattern_byte(uint32_t seed, size_t i) {
    uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)x;
}

static inline void sg_fill(void *buf, size_t n, uint32_t seed) {
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < n; i++) p[i] = sg_pattern_byte(seed, i);
}

// Index of the first byte of `buf` that differs from the pattern, or n if none.
static inline size_t sg_first_mismatch(const void *buf, size_t n, uint32_t seed) {
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != sg_pattern_byte(seed, i)) return i;
    return n;
}

// Fail unless `buf` holds the pattern `seed` exactly.
#define SG_EXPECT_PATTERN(what, buf, n, seed)                                        \
    do {                                                                             \
        size_t sg_at_ = sg_first_mismatch((buf), (n), (seed));                       \
        if (sg_at_ != (size_t)(n))                                                   \
            SG_FAIL("%s: byte %zu of %zu is 0x%02x, expected 0x%02x (the copy did "  \
                    "not move the bytes)",                                           \
                    what, sg_at_, (size_t)(n),                                       \
                    ((const unsigned char *)(buf))[sg_at_],                          \
                    sg_pattern_byte((seed), sg_at_));                                \
    } while (0)

static inline double sg_now_s(void) {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

#endif
