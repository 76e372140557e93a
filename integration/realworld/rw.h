// Shared by SoftGPU's real-world clients (tests/realworld.rs builds each with the real hipcc
// and links it against the real ROCm libraries of its HIP version).
//
// Output contract: `rw: key=value` lines on stdout. A client exits 0 after printing
// `rw: done=1` only when every HIP and library call returned success. On the first call that
// does not, it prints `rw: error=<call> status=<value> at <file>:<line>` and exits 1.
//
// Kernels never run under SoftGPU, so a client never judges the values a kernel would have
// computed: it drives the library's entry points and checks what they return.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

#define RW_FAIL(what, value)                                                                 \
    do {                                                                                     \
        std::printf("rw: error=%s status=%lld at %s:%d\n", what, (long long)(value), __FILE__, \
                    __LINE__);                                                               \
        std::fflush(stdout);                                                                 \
        std::exit(1);                                                                        \
    } while (0)

// A HIP call that must return hipSuccess.
#define RW_HIP(call)                                                                         \
    do {                                                                                     \
        hipError_t rw_e_ = (call);                                                           \
        if (rw_e_ != hipSuccess) {                                                           \
            std::printf("rw: hip_error=%s\n", hipGetErrorName(rw_e_));                       \
            RW_FAIL(#call, rw_e_);                                                           \
        }                                                                                    \
    } while (0)

// A library call that must return `ok` (the library's success status).
#define RW_CHECK(call, ok)                                                                   \
    do {                                                                                     \
        auto rw_s_ = (call);                                                                 \
        if (rw_s_ != (ok))                                                                   \
            RW_FAIL(#call, rw_s_);                                                           \
    } while (0)

inline void rw_fact(const char *key, long long value) {
    std::printf("rw: %s=%lld\n", key, value);
}

// Every launch so far accepted, every stream drained, then `rw: done=1`.
inline void rw_done() {
    RW_HIP(hipGetLastError());
    RW_HIP(hipDeviceSynchronize());
    std::printf("rw: done=1\n");
    std::fflush(stdout);
}
