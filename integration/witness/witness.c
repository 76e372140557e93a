/*
 * SoftGPU's HIP-API witness: a test-only LD_PRELOAD library that records every kernel launch
 * HIP accepts, independently of the shim, so that tests/realworld.rs can check that each one
 * was captured exactly once, on its stream's queue, in order, with the same geometry.
 *
 * Load it in front of the shim:  LD_PRELOAD=witness.so:libsoftgpu_hsa.so
 * and name its log:             SOFTGPU_WITNESS_LOG=/path/witness-%p.jsonl   (%p: the pid)
 * Without SOFTGPU_WITNESS_LOG it records nothing and only forwards.
 *
 * It is compiled against the real HIP headers of the HIP it runs with (the host's 5.2.3, 6.4.3
 * inside the sid chroot or 7.2.4 inside the ROCm 7 one; enums such as hipGraphNodeType differ
 * between them) and calls the
 * real function through dlsym(RTLD_NEXT). It never changes what a call does or returns: after a
 * successful launch it asks HIP only questions that cannot fail for the stream just used
 * (hipKernelNameRefByPtr / hipKernelNameRef, hipGetDevice, hipStreamIsCapturing on a non-null
 * stream), and after a failed one it asks nothing that touches HIP's error state.
 *
 * Log: one JSON object per line, written with a single write(2) on an O_APPEND descriptor as
 * the call returns, so nothing is buffered that an abort, a crash or exit() from another thread
 * could lose. Every launch line holds:
 *   seq, end   a process-wide counter taken at entry and at return (overlapping intervals mean
 *              the calls raced; the comparison accepts either order for them)
 *   tid        the calling thread (gettid)
 *   api        the entry point called
 *   status     the hipError_t it returned
 *   name       the kernel's symbol name (without ".kd"), or null when HIP does not know it
 *   grid       work-items (blocks x block size; hipExtModuleLaunchKernel takes work-items)
 *   block      the block size
 *   stream     the stream handle as passed ("0x0" for the null stream), spt: the call is a
 *              per-thread-default-stream (_spt) variant, device: the calling thread's device,
 *              stream_device: the stream's device (-1: unknown, HIP 5.2 cannot say)
 *   capturing  the stream was capturing into a graph (the launch became a node, not a dispatch)
 * HIP 7's hipLaunchKernelExC and hipDrvLaunchKernelEx add "cooperative":true when their
 * attributes ask for a cooperative launch. Multi-device launches write one line per entry
 * ("part": its index). hipGraphLaunch writes
 * the kernel nodes of the executable graph ("nodes", each with name, grid, block), as they were
 * at hipGraphInstantiate* (updated by hipGraphExecKernelNodeSetParams and hipGraphExecUpdate);
 * child graphs are flattened. hipStreamDestroy writes {"event":"stream_destroy"} so that a
 * handle reused by a later stream is not taken for the same stream.
 *
 * Its OpenCL side (the end of this file) logs clEnqueueNDRangeKernel and clEnqueueTask for
 * tests/opencl.rs; its log lines are described where that part begins.
 */
#define _GNU_SOURCE
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WITNESS_EXPORT __attribute__((visibility("default")))
#define HIP5 (HIP_VERSION_MAJOR < 6)

/* ------------------------------------------------------------------------------------------ */
/* The log                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static atomic_ullong counter;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static pid_t log_pid = -1;
static int log_disabled;
static __thread int depth;

static unsigned long long tick(void) { return atomic_fetch_add(&counter, 1); }

/* The log descriptor for this process (reopened after fork: the child writes its own file). */
static int log_file(void) {
    pid_t pid = getpid();
    if (__atomic_load_n(&log_pid, __ATOMIC_ACQUIRE) == pid)
        return __atomic_load_n(&log_fd, __ATOMIC_RELAXED);
    if (__atomic_load_n(&log_disabled, __ATOMIC_RELAXED))
        return -1;
    pthread_mutex_lock(&open_lock);
    if (log_pid != pid) {
        const char *pattern = getenv("SOFTGPU_WITNESS_LOG");
        int fd = -1;
        if (pattern && *pattern) {
            char path[4096];
            size_t n = 0;
            for (const char *p = pattern; *p && n + 24 < sizeof path; p++) {
                if (p[0] == '%' && p[1] == 'p') {
                    n += (size_t)snprintf(path + n, sizeof path - n, "%d", (int)pid);
                    p++;
                } else {
                    path[n++] = *p;
                }
            }
            path[n] = 0;
            fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd < 0) {
                char msg[4200];
                int len = snprintf(msg, sizeof msg, "softgpu-witness: cannot open %s: %s\n", path,
                                   strerror(errno));
                if (len > 0 && write(2, msg, (size_t)len) < 0) {
                }
            }
        }
        if (fd < 0 && log_fd < 0)
            __atomic_store_n(&log_disabled, 1, __ATOMIC_RELAXED);
        if (log_fd >= 0 && log_fd != fd)
            close(log_fd); /* the parent's, inherited across fork */
        __atomic_store_n(&log_fd, fd, __ATOMIC_RELAXED);
        __atomic_store_n(&log_pid, pid, __ATOMIC_RELEASE);
    }
    int fd = log_fd;
    pthread_mutex_unlock(&open_lock);
    return fd;
}

/* A growable line buffer. Allocation failure truncates to what fits; a line is never lost. */
struct line {
    char *p;
    size_t len, cap;
    char small[2048];
};

static void line_init(struct line *l) {
    l->p = l->small;
    l->len = 0;
    l->cap = sizeof l->small;
}

__attribute__((format(printf, 2, 3))) static void line_put(struct line *l, const char *fmt,
                                                        ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(l->p + l->len, l->cap - l->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < l->cap - l->len) {
            l->len += (size_t)n;
            return;
        }
        size_t cap = (l->cap + (size_t)n) * 2;
        char *q = l->p == l->small ? malloc(cap) : realloc(l->p, cap);
        if (!q) {
            l->p[l->len] = 0;
            return;
        }
        if (l->p == l->small)
            memcpy(q, l->small, l->len);
        l->p = q;
        l->cap = cap;
    }
}

static void line_str(struct line *l, const char *s) {
    if (!s) {
        line_put(l, "null");
        return;
    }
    line_put(l, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            line_put(l, "\\%c", c);
        else if (c < 0x20)
            line_put(l, "\\u%04x", c);
        else
            line_put(l, "%c", c);
    }
    line_put(l, "\"");
}

static void line_emit(struct line *l) {
    line_put(l, "\n");
    int fd = log_file();
    if (fd >= 0) {
        size_t off = 0;
        while (off < l->len) {
            ssize_t n = write(fd, l->p + off, l->len - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            off += (size_t)n;
        }
    }
    if (l->p != l->small)
        free(l->p);
    line_init(l);
}

/* ------------------------------------------------------------------------------------------ */
/* The real functions                                                                           */
/* ------------------------------------------------------------------------------------------ */

static void *next_fn(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        char msg[512];
        int len = snprintf(msg, sizeof msg, "softgpu-witness: %s not found below the witness\n", name);
        if (len > 0 && write(2, msg, (size_t)len) < 0) {
        }
    }
    return f;
}

/* REAL(type, "symbol"): the next definition of the symbol, looked up once. */
#define REAL(type, sym)                                                                      \
    ({                                                                                       \
        static type cached_;                                                                 \
        type f_ = __atomic_load_n(&cached_, __ATOMIC_ACQUIRE);                               \
        if (!f_) {                                                                           \
            f_ = (type)next_fn(sym);                                                         \
            __atomic_store_n(&cached_, f_, __ATOMIC_RELEASE);                                \
        }                                                                                    \
        f_;                                                                                  \
    })

typedef const char *(*name_by_ptr_fn)(const void *, hipStream_t);
typedef const char *(*name_ref_fn)(hipFunction_t);
typedef hipError_t (*get_device_fn)(int *);
typedef hipError_t (*is_capturing_fn)(hipStream_t, hipStreamCaptureStatus *);
typedef hipError_t (*stream_device_fn)(hipStream_t, hipDevice_t *);

static const char *name_by_ptr(const void *f, hipStream_t s) {
    name_by_ptr_fn fn = REAL(name_by_ptr_fn, "hipKernelNameRefByPtr");
    return fn && f ? fn(f, s) : NULL;
}

static const char *name_ref(hipFunction_t f) {
    name_ref_fn fn = REAL(name_ref_fn, "hipKernelNameRef");
    return fn && f ? fn(f) : NULL;
}

static int is_null_stream(hipStream_t s) { return s == NULL || s == (hipStream_t)1; }
static int is_per_thread(hipStream_t s, int spt) {
    return s == (hipStream_t)2 || (spt && s == NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Module functions: hipFunction_t -> name, for graph kernel nodes made by module launches       */
/* ------------------------------------------------------------------------------------------ */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

struct func_entry {
    hipFunction_t f;
    char *name;
};
static struct func_entry *funcs;
static size_t nfuncs, capfuncs;

static void remember_function(hipFunction_t f, const char *name) {
    if (!f || !name)
        return;
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < nfuncs; i++)
        if (funcs[i].f == f) {
            pthread_mutex_unlock(&table_lock);
            return;
        }
    if (nfuncs == capfuncs) {
        size_t cap = capfuncs ? capfuncs * 2 : 64;
        struct func_entry *q = realloc(funcs, cap * sizeof *q);
        if (!q) {
            pthread_mutex_unlock(&table_lock);
            return;
        }
        funcs = q;
        capfuncs = cap;
    }
    char *copy = strdup(name);
    if (copy) {
        funcs[nfuncs].f = f;
        funcs[nfuncs].name = copy;
        nfuncs++;
    }
    pthread_mutex_unlock(&table_lock);
}

static int known_function(const void *f) {
    int found = 0;
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < nfuncs && !found; i++)
        found = funcs[i].f == (hipFunction_t)f;
    pthread_mutex_unlock(&table_lock);
    return found;
}

/* The name of a graph kernel node's function: a host function registered with HIP, or a module
 * function this process got from hipModuleGetFunction. */
static const char *node_function_name(const void *func) {
    const char *n = name_by_ptr(func, NULL);
    if (!n && known_function(func))
        n = name_ref((hipFunction_t)func);
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Launch records                                                                               */
/* ------------------------------------------------------------------------------------------ */

struct launch {
    const char *api;
    unsigned long long seq;
    const char *name;
    uint64_t grid[3];
    uint32_t block[3];
    size_t shared;
    hipStream_t stream;
    int spt;
    int part; /* index in a multi-device list, or -1 */
    int cooperative; /* a launch asked to be cooperative by an attribute (HIP 7) */
};

static void launch_begin(struct launch *l, const char *api, int spt) {
    memset(l, 0, sizeof *l);
    l->api = api;
    l->spt = spt;
    l->part = -1;
    l->seq = tick();
}

static void blocks(struct launch *l, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
                   uint32_t by, uint32_t bz) {
    l->grid[0] = (uint64_t)gx * bx;
    l->grid[1] = (uint64_t)gy * by;
    l->grid[2] = (uint64_t)gz * bz;
    l->block[0] = bx;
    l->block[1] = by;
    l->block[2] = bz;
}

static void items(struct launch *l, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
                  uint32_t by, uint32_t bz) {
    l->grid[0] = gx;
    l->grid[1] = gy;
    l->grid[2] = gz;
    l->block[0] = bx;
    l->block[1] = by;
    l->block[2] = bz;
}

/* The head of a launch line: everything but the end. Helper calls only after success. */
static void launch_head(struct line *out, const struct launch *l, hipError_t status,
                        unsigned long long end) {
    int device = -1, stream_device = -1, capturing = 0;
    if (status == hipSuccess) {
        get_device_fn gd = REAL(get_device_fn, "hipGetDevice");
        if (gd && gd(&device) != hipSuccess)
            device = -1;
        /* The stream's own device (HIP 6.4 has hipStreamGetDevice; HIP 5.2 does not export it,
         * and -1 then says unknown). */
        if (!is_null_stream(l->stream) && !is_per_thread(l->stream, l->spt)) {
            static stream_device_fn sd;
            static int looked;
            if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&sd, (stream_device_fn)dlsym(RTLD_NEXT, "hipStreamGetDevice"),
                                 __ATOMIC_RELAXED);
                __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
            }
            stream_device_fn f = __atomic_load_n(&sd, __ATOMIC_RELAXED);
            hipDevice_t d = -1;
            if (f && f(l->stream, &d) == hipSuccess)
                stream_device = d;
        } else {
            stream_device = device;
        }
        if (!is_null_stream(l->stream) || is_per_thread(l->stream, l->spt)) {
            is_capturing_fn ic = REAL(is_capturing_fn, "hipStreamIsCapturing");
            hipStreamCaptureStatus cs = hipStreamCaptureStatusNone;
            hipStream_t s = is_per_thread(l->stream, l->spt) ? (hipStream_t)2 : l->stream;
            if (ic && ic(s, &cs) == hipSuccess)
                capturing = cs != hipStreamCaptureStatusNone;
            else
                capturing = -1;
        }
    }
    line_put(out, "{\"seq\":%llu,\"end\":%llu,\"tid\":%ld,\"api\":", l->seq, end,
             (long)syscall(SYS_gettid));
    line_str(out, l->api);
    line_put(out, ",\"status\":%d,\"name\":", (int)status);
    line_str(out, l->name);
    line_put(out,
             ",\"grid\":[%llu,%llu,%llu],\"block\":[%u,%u,%u],\"shared\":%zu,\"stream\":\"0x%llx\","
             "\"spt\":%s,\"device\":%d,\"stream_device\":%d,\"capturing\":%s",
             (unsigned long long)l->grid[0], (unsigned long long)l->grid[1],
             (unsigned long long)l->grid[2], l->block[0], l->block[1], l->block[2], l->shared,
             (unsigned long long)(uintptr_t)l->stream, l->spt ? "true" : "false", device,
             stream_device, capturing < 0 ? "null" : capturing ? "true" : "false");
    if (l->part >= 0)
        line_put(out, ",\"part\":%d", l->part);
    if (l->cooperative)
        line_put(out, ",\"cooperative\":true");
}

static void launch_end(struct launch *l, hipError_t status) {
    unsigned long long end = tick();
    struct line out;
    line_init(&out);
    launch_head(&out, l, status, end);
    line_put(&out, "}");
    line_emit(&out);
}

/* Record only the outermost launch call of a thread (HIP may call its own exported entry
 * points; those are one launch, not two). */
#define OUTER_BEGIN() int outer_ = depth++ == 0 && log_file() >= 0
#define OUTER_END() depth--

/* ------------------------------------------------------------------------------------------ */
/* Triple-chevron and runtime launches                                                          */
/* ------------------------------------------------------------------------------------------ */

typedef hipError_t (*launch_kernel_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);

static hipError_t launch_kernel(const char *api, int spt, const void *f, dim3 g, dim3 b,
                                void **args, size_t shm, hipStream_t s) {
    launch_kernel_fn real = spt ? REAL(launch_kernel_fn, "hipLaunchKernel_spt")
                                : REAL(launch_kernel_fn, "hipLaunchKernel");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, api, spt);
    hipError_t st = real(f, g, b, args, shm, s);
    if (outer_) {
        l.name = name_by_ptr(f, s);
        blocks(&l, g.x, g.y, g.z, b.x, b.y, b.z);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

WITNESS_EXPORT hipError_t hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                                          hipStream_t s) {
    return launch_kernel("hipLaunchKernel", 0, f, g, b, args, shm, s);
}

WITNESS_EXPORT hipError_t hipLaunchKernel_spt(const void *f, dim3 g, dim3 b, void **args,
                                              size_t shm, hipStream_t s) {
    return launch_kernel("hipLaunchKernel_spt", 1, f, g, b, args, shm, s);
}

typedef hipError_t (*ext_launch_kernel_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t,
                                           hipEvent_t, hipEvent_t, int);

WITNESS_EXPORT hipError_t hipExtLaunchKernel(const void *f, dim3 g, dim3 b, void **args,
                                             size_t shm, hipStream_t s, hipEvent_t start,
                                             hipEvent_t stop, int flags) {
    ext_launch_kernel_fn real = REAL(ext_launch_kernel_fn, "hipExtLaunchKernel");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, "hipExtLaunchKernel", 0);
    hipError_t st = real(f, g, b, args, shm, s, start, stop, flags);
    if (outer_) {
        l.name = name_by_ptr(f, s);
        blocks(&l, g.x, g.y, g.z, b.x, b.y, b.z);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

static hipError_t cooperative(const char *api, int spt, const void *f, dim3 g, dim3 b,
                              void **args, unsigned int shm, hipStream_t s) {
    typedef hipError_t (*fn_t)(const void *, dim3, dim3, void **, unsigned int, hipStream_t);
    fn_t real = spt ? REAL(fn_t, "hipLaunchCooperativeKernel_spt")
                    : REAL(fn_t, "hipLaunchCooperativeKernel");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, api, spt);
    hipError_t st = real(f, g, b, args, shm, s);
    if (outer_) {
        l.name = name_by_ptr(f, s);
        blocks(&l, g.x, g.y, g.z, b.x, b.y, b.z);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

WITNESS_EXPORT hipError_t hipLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args,
                                                     unsigned int shm, hipStream_t s) {
    return cooperative("hipLaunchCooperativeKernel", 0, f, g, b, args, shm, s);
}

WITNESS_EXPORT hipError_t hipLaunchCooperativeKernel_spt(const void *f, dim3 g, dim3 b,
                                                         void **args, unsigned int shm,
                                                         hipStream_t s) {
    return cooperative("hipLaunchCooperativeKernel_spt", 1, f, g, b, args, shm, s);
}

/* Both multi-device entry points take the same list. */
static hipError_t multi_device(const char *api, const char *sym, hipLaunchParams *list, int n,
                               unsigned int flags) {
    typedef hipError_t (*fn_t)(hipLaunchParams *, int, unsigned int);
    fn_t real = (fn_t)next_fn(sym);
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    unsigned long long seq = outer_ ? tick() : 0;
    hipError_t st = real(list, n, flags);
    if (outer_ && list) {
        for (int i = 0; i < n; i++) {
            struct launch l;
            memset(&l, 0, sizeof l);
            l.api = api;
            l.seq = seq;
            l.part = i;
            l.name = name_by_ptr(list[i].func, list[i].stream);
            blocks(&l, list[i].gridDim.x, list[i].gridDim.y, list[i].gridDim.z,
                   list[i].blockDim.x, list[i].blockDim.y, list[i].blockDim.z);
            l.shared = list[i].sharedMem;
            l.stream = list[i].stream;
            launch_end(&l, st);
        }
    }
    OUTER_END();
    return st;
}

WITNESS_EXPORT hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *list, int n,
                                                                unsigned int flags) {
    return multi_device("hipLaunchCooperativeKernelMultiDevice",
                        "hipLaunchCooperativeKernelMultiDevice", list, n, flags);
}

WITNESS_EXPORT hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams *list, int n,
                                                             unsigned int flags) {
    return multi_device("hipExtLaunchMultiKernelMultiDevice", "hipExtLaunchMultiKernelMultiDevice",
                        list, n, flags);
}

/* The old configure-then-launch pair: hipConfigureCall's geometry, per thread. */
static __thread struct {
    int set;
    dim3 g, b;
    size_t shm;
    hipStream_t s;
} configured;

WITNESS_EXPORT hipError_t hipConfigureCall(dim3 g, dim3 b, size_t shm, hipStream_t s) {
    typedef hipError_t (*fn_t)(dim3, dim3, size_t, hipStream_t);
    fn_t real = REAL(fn_t, "hipConfigureCall");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(g, b, shm, s);
    if (st == hipSuccess) {
        configured.set = 1;
        configured.g = g;
        configured.b = b;
        configured.shm = shm;
        configured.s = s;
    }
    return st;
}

WITNESS_EXPORT hipError_t hipLaunchByPtr(const void *f) {
    typedef hipError_t (*fn_t)(const void *);
    fn_t real = REAL(fn_t, "hipLaunchByPtr");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, "hipLaunchByPtr", 0);
    int had = configured.set;
    dim3 g = configured.g, b = configured.b;
    size_t shm = configured.shm;
    hipStream_t s = configured.s;
    configured.set = 0;
    hipError_t st = real(f);
    if (outer_) {
        l.name = name_by_ptr(f, s);
        if (had)
            blocks(&l, g.x, g.y, g.z, b.x, b.y, b.z);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Module launches                                                                              */
#if HIP_VERSION_MAJOR >= 7
/* HIP 7's launches with a configuration: hipLaunchKernelExC (a kernel by its host function) and,
 * below, hipDrvLaunchKernelEx (a module function), grids in blocks. A launch whose attributes ask
 * for a cooperative kernel goes where hipLaunchCooperativeKernel's go, so its line says
 * "cooperative":true. */
static int cooperative_attr(const hipLaunchAttribute *attrs, unsigned int n) {
    for (unsigned int i = 0; attrs && i < n; i++)
        if (attrs[i].id == hipLaunchAttributeCooperative && attrs[i].val.cooperative)
            return 1;
    return 0;
}

typedef hipError_t (*launch_ex_c_fn)(const hipLaunchConfig_t *, const void *, void **);

WITNESS_EXPORT hipError_t hipLaunchKernelExC(const hipLaunchConfig_t *config, const void *f,
                                             void **args) {
    launch_ex_c_fn real = REAL(launch_ex_c_fn, "hipLaunchKernelExC");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, "hipLaunchKernelExC", 0);
    hipError_t st = real(config, f, args);
    if (outer_) {
        if (config) {
            l.name = name_by_ptr(f, config->stream);
            blocks(&l, config->gridDim.x, config->gridDim.y, config->gridDim.z,
                   config->blockDim.x, config->blockDim.y, config->blockDim.z);
            l.shared = config->dynamicSmemBytes;
            l.stream = config->stream;
            l.cooperative = cooperative_attr(config->attrs, config->numAttrs);
        }
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}
#endif

/* ------------------------------------------------------------------------------------------ */

WITNESS_EXPORT hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
    typedef hipError_t (*fn_t)(hipFunction_t *, hipModule_t, const char *);
    fn_t real = REAL(fn_t, "hipModuleGetFunction");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(f, m, name);
    if (st == hipSuccess && f)
        remember_function(*f, name);
    return st;
}

WITNESS_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                                unsigned int gz, unsigned int bx, unsigned int by,
                                                unsigned int bz, unsigned int shm, hipStream_t s,
                                                void **params, void **extra) {
    typedef hipError_t (*fn_t)(hipFunction_t, unsigned int, unsigned int, unsigned int,
                               unsigned int, unsigned int, unsigned int, unsigned int, hipStream_t,
                               void **, void **);
    fn_t real = REAL(fn_t, "hipModuleLaunchKernel");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, "hipModuleLaunchKernel", 0);
    hipError_t st = real(f, gx, gy, gz, bx, by, bz, shm, s, params, extra);
    if (outer_) {
        l.name = name_ref(f);
        blocks(&l, gx, gy, gz, bx, by, bz);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

#if HIP_VERSION_MAJOR >= 7
typedef hipError_t (*drv_launch_ex_fn)(const HIP_LAUNCH_CONFIG *, hipFunction_t, void **, void **);

WITNESS_EXPORT hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG *config, hipFunction_t f,
                                               void **params, void **extra) {
    drv_launch_ex_fn real = REAL(drv_launch_ex_fn, "hipDrvLaunchKernelEx");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, "hipDrvLaunchKernelEx", 0);
    hipError_t st = real(config, f, params, extra);
    if (outer_) {
        l.name = name_ref(f);
        if (config) {
            blocks(&l, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                   config->blockDimY, config->blockDimZ);
            l.shared = config->sharedMemBytes;
            l.stream = config->hStream;
            l.cooperative = cooperative_attr(config->attrs, config->numAttrs);
        }
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}
#endif

/* hipExtModuleLaunchKernel and hipHccModuleLaunchKernel take the grid in work-items. HIP 5.2
 * exports them only with C++ names; HIP 6.4 exports both the C and the C++ names. */
typedef hipError_t (*ext_module_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                    hipEvent_t, hipEvent_t, uint32_t);
typedef hipError_t (*hcc_module_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                    hipEvent_t, hipEvent_t);

#define EXT_MODULE_PARAMS                                                                     \
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,         \
        uint32_t bz, size_t shm, hipStream_t s, void **params, void **extra, hipEvent_t start, \
        hipEvent_t stop

static hipError_t ext_module(const char *api, const char *sym, int hcc, EXT_MODULE_PARAMS,
                             uint32_t flags) {
    void *real = next_fn(sym);
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, api, 0);
    hipError_t st = hcc ? ((hcc_module_fn)real)(f, gx, gy, gz, bx, by, bz, shm, s, params, extra,
                                                start, stop)
                        : ((ext_module_fn)real)(f, gx, gy, gz, bx, by, bz, shm, s, params, extra,
                                                start, stop, flags);
    if (outer_) {
        l.name = name_ref(f);
        items(&l, gx, gy, gz, bx, by, bz);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

#define EXT_MODULE_ARGS f, gx, gy, gz, bx, by, bz, shm, s, params, extra, start, stop

WITNESS_EXPORT hipError_t
_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j(
    EXT_MODULE_PARAMS, uint32_t flags) {
    return ext_module("hipExtModuleLaunchKernel",
                      "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_"
                      "P11ihipEvent_tS6_j",
                      0, EXT_MODULE_ARGS, flags);
}

WITNESS_EXPORT hipError_t
_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_(
    EXT_MODULE_PARAMS) {
    return ext_module("hipHccModuleLaunchKernel",
                      "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_"
                      "P11ihipEvent_tS6_",
                      1, EXT_MODULE_ARGS, 0);
}

#if !HIP5
WITNESS_EXPORT hipError_t hipExtModuleLaunchKernel(EXT_MODULE_PARAMS, uint32_t flags) {
    return ext_module("hipExtModuleLaunchKernel", "hipExtModuleLaunchKernel", 0, EXT_MODULE_ARGS,
                      flags);
}

WITNESS_EXPORT hipError_t hipHccModuleLaunchKernel(EXT_MODULE_PARAMS) {
    return ext_module("hipHccModuleLaunchKernel", "hipHccModuleLaunchKernel", 1, EXT_MODULE_ARGS,
                      0);
}

WITNESS_EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx,
                                                           unsigned int gy, unsigned int gz,
                                                           unsigned int bx, unsigned int by,
                                                           unsigned int bz, unsigned int shm,
                                                           hipStream_t s, void **params) {
    typedef hipError_t (*fn_t)(hipFunction_t, unsigned int, unsigned int, unsigned int,
                               unsigned int, unsigned int, unsigned int, unsigned int, hipStream_t,
                               void **);
    fn_t real = REAL(fn_t, "hipModuleLaunchCooperativeKernel");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, "hipModuleLaunchCooperativeKernel", 0);
    hipError_t st = real(f, gx, gy, gz, bx, by, bz, shm, s, params);
    if (outer_) {
        l.name = name_ref(f);
        blocks(&l, gx, gy, gz, bx, by, bz);
        l.shared = shm;
        l.stream = s;
        launch_end(&l, st);
    }
    OUTER_END();
    return st;
}

WITNESS_EXPORT hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *list,
                                                                      unsigned int n,
                                                                      unsigned int flags) {
    typedef hipError_t (*fn_t)(hipFunctionLaunchParams *, unsigned int, unsigned int);
    fn_t real = REAL(fn_t, "hipModuleLaunchCooperativeKernelMultiDevice");
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    unsigned long long seq = outer_ ? tick() : 0;
    hipError_t st = real(list, n, flags);
    if (outer_ && list) {
        for (unsigned int i = 0; i < n; i++) {
            struct launch l;
            memset(&l, 0, sizeof l);
            l.api = "hipModuleLaunchCooperativeKernelMultiDevice";
            l.seq = seq;
            l.part = (int)i;
            l.name = name_ref(list[i].function);
            blocks(&l, list[i].gridDimX, list[i].gridDimY, list[i].gridDimZ, list[i].blockDimX,
                   list[i].blockDimY, list[i].blockDimZ);
            l.shared = list[i].sharedMemBytes;
            l.stream = list[i].hStream;
            launch_end(&l, st);
        }
    }
    OUTER_END();
    return st;
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* Graphs                                                                                       */
/* ------------------------------------------------------------------------------------------ */

struct node_rec {
    hipGraphNode_t node;
    char *name;
    uint64_t grid[3];
    uint32_t block[3];
};

struct exec_rec {
    hipGraphExec_t exec;
    struct node_rec *nodes;
    size_t n, cap;
    int incomplete; /* a node could not be read */
};

static struct exec_rec *execs;
static size_t nexecs, capexecs;

static void exec_free_nodes(struct exec_rec *e) {
    for (size_t i = 0; i < e->n; i++)
        free(e->nodes[i].name);
    free(e->nodes);
    e->nodes = NULL;
    e->n = e->cap = 0;
    e->incomplete = 0;
}

typedef hipError_t (*get_nodes_fn)(hipGraph_t, hipGraphNode_t *, size_t *);
typedef hipError_t (*node_type_fn)(hipGraphNode_t, hipGraphNodeType *);
typedef hipError_t (*kernel_params_fn)(hipGraphNode_t, hipKernelNodeParams *);
typedef hipError_t (*child_graph_fn)(hipGraphNode_t, hipGraph_t *);

static void node_push(struct exec_rec *e, hipGraphNode_t node, const hipKernelNodeParams *p) {
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 16;
        struct node_rec *q = realloc(e->nodes, cap * sizeof *q);
        if (!q) {
            e->incomplete = 1;
            return;
        }
        e->nodes = q;
        e->cap = cap;
    }
    struct node_rec *r = &e->nodes[e->n++];
    const char *name = node_function_name(p->func);
    r->node = node;
    r->name = name ? strdup(name) : NULL;
    r->grid[0] = (uint64_t)p->gridDim.x * p->blockDim.x;
    r->grid[1] = (uint64_t)p->gridDim.y * p->blockDim.y;
    r->grid[2] = (uint64_t)p->gridDim.z * p->blockDim.z;
    r->block[0] = p->blockDim.x;
    r->block[1] = p->blockDim.y;
    r->block[2] = p->blockDim.z;
}

/* Every kernel node of `graph`, child graphs flattened (depth-limited against cycles). */
static void snapshot(struct exec_rec *e, hipGraph_t graph, int level) {
    get_nodes_fn get_nodes = REAL(get_nodes_fn, "hipGraphGetNodes");
    node_type_fn node_type = REAL(node_type_fn, "hipGraphNodeGetType");
    kernel_params_fn kparams = REAL(kernel_params_fn, "hipGraphKernelNodeGetParams");
    child_graph_fn child = REAL(child_graph_fn, "hipGraphChildGraphNodeGetGraph");
    if (!get_nodes || !node_type || !kparams || !child || level > 16) {
        e->incomplete = 1;
        return;
    }
    size_t n = 0;
    if (get_nodes(graph, NULL, &n) != hipSuccess) {
        e->incomplete = 1;
        return;
    }
    if (n == 0)
        return;
    hipGraphNode_t *nodes = calloc(n, sizeof *nodes);
    if (!nodes || get_nodes(graph, nodes, &n) != hipSuccess) {
        free(nodes);
        e->incomplete = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        hipGraphNodeType t;
        if (node_type(nodes[i], &t) != hipSuccess) {
            e->incomplete = 1;
            continue;
        }
        if (t == hipGraphNodeTypeKernel) {
            hipKernelNodeParams p;
            memset(&p, 0, sizeof p);
            if (kparams(nodes[i], &p) != hipSuccess) {
                e->incomplete = 1;
                continue;
            }
            node_push(e, nodes[i], &p);
        } else if (t == hipGraphNodeTypeGraph) {
            hipGraph_t g = NULL;
            if (child(nodes[i], &g) != hipSuccess) {
                e->incomplete = 1;
                continue;
            }
            snapshot(e, g, level + 1);
        }
    }
    free(nodes);
}

/* The record of `exec`, created if asked (caller holds table_lock). */
static struct exec_rec *exec_find(hipGraphExec_t exec, int create) {
    for (size_t i = 0; i < nexecs; i++)
        if (execs[i].exec == exec)
            return &execs[i];
    if (!create)
        return NULL;
    if (nexecs == capexecs) {
        size_t cap = capexecs ? capexecs * 2 : 16;
        struct exec_rec *q = realloc(execs, cap * sizeof *q);
        if (!q)
            return NULL;
        execs = q;
        capexecs = cap;
    }
    struct exec_rec *e = &execs[nexecs++];
    memset(e, 0, sizeof *e);
    e->exec = exec;
    return e;
}

static void instantiated(hipGraphExec_t exec, hipGraph_t graph, const char *api) {
    pthread_mutex_lock(&table_lock);
    struct exec_rec *e = exec_find(exec, 1);
    size_t kernels = 0;
    int incomplete = 1;
    if (e) {
        exec_free_nodes(e);
        pthread_mutex_unlock(&table_lock);
        /* Snapshot without the lock (HIP calls); the record is this thread's until published. */
        struct exec_rec tmp;
        memset(&tmp, 0, sizeof tmp);
        snapshot(&tmp, graph, 0);
        pthread_mutex_lock(&table_lock);
        e = exec_find(exec, 1);
        if (e) {
            exec_free_nodes(e);
            e->nodes = tmp.nodes;
            e->n = tmp.n;
            e->cap = tmp.cap;
            e->incomplete = tmp.incomplete;
            kernels = e->n;
            incomplete = e->incomplete;
        } else {
            exec_free_nodes(&tmp);
        }
    }
    pthread_mutex_unlock(&table_lock);
    struct line out;
    line_init(&out);
    line_put(&out, "{\"seq\":%llu,\"event\":", tick());
    line_str(&out, api);
    line_put(&out, ",\"exec\":\"0x%llx\",\"kernels\":%zu,\"incomplete\":%s}",
             (unsigned long long)(uintptr_t)exec, kernels,
             incomplete ? "true" : "false");
    line_emit(&out);
}

WITNESS_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t graph,
                                              hipGraphNode_t *err_node, char *log, size_t size) {
    typedef hipError_t (*fn_t)(hipGraphExec_t *, hipGraph_t, hipGraphNode_t *, char *, size_t);
    fn_t real = REAL(fn_t, "hipGraphInstantiate");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec, graph, err_node, log, size);
    if (st == hipSuccess && exec && log_file() >= 0)
        instantiated(*exec, graph, "hipGraphInstantiate");
    return st;
}

WITNESS_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *exec, hipGraph_t graph,
                                                       unsigned long long flags) {
    typedef hipError_t (*fn_t)(hipGraphExec_t *, hipGraph_t, unsigned long long);
    fn_t real = REAL(fn_t, "hipGraphInstantiateWithFlags");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec, graph, flags);
    if (st == hipSuccess && exec && log_file() >= 0)
        instantiated(*exec, graph, "hipGraphInstantiateWithFlags");
    return st;
}

#if !HIP5
WITNESS_EXPORT hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *exec, hipGraph_t graph,
                                                        hipGraphInstantiateParams *params) {
    typedef hipError_t (*fn_t)(hipGraphExec_t *, hipGraph_t, hipGraphInstantiateParams *);
    fn_t real = REAL(fn_t, "hipGraphInstantiateWithParams");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec, graph, params);
    if (st == hipSuccess && exec && log_file() >= 0)
        instantiated(*exec, graph, "hipGraphInstantiateWithParams");
    return st;
}

WITNESS_EXPORT hipError_t hipGraphExecUpdate(hipGraphExec_t exec, hipGraph_t graph,
                                             hipGraphNode_t *err_node,
                                             hipGraphExecUpdateResult *result) {
    typedef hipError_t (*fn_t)(hipGraphExec_t, hipGraph_t, hipGraphNode_t *,
                               hipGraphExecUpdateResult *);
    fn_t real = REAL(fn_t, "hipGraphExecUpdate");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec, graph, err_node, result);
    if (st == hipSuccess && log_file() >= 0)
        instantiated(exec, graph, "hipGraphExecUpdate");
    return st;
}
#else
WITNESS_EXPORT hipError_t hipGraphExecUpdate(hipGraphExec_t exec, hipGraph_t graph,
                                             hipGraphNode_t *err_node,
                                             hipGraphExecUpdateResult *result) {
    typedef hipError_t (*fn_t)(hipGraphExec_t, hipGraph_t, hipGraphNode_t *,
                               hipGraphExecUpdateResult *);
    fn_t real = REAL(fn_t, "hipGraphExecUpdate");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec, graph, err_node, result);
    if (st == hipSuccess && log_file() >= 0)
        instantiated(exec, graph, "hipGraphExecUpdate");
    return st;
}
#endif

WITNESS_EXPORT hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                          const hipKernelNodeParams *p) {
    typedef hipError_t (*fn_t)(hipGraphExec_t, hipGraphNode_t, const hipKernelNodeParams *);
    fn_t real = REAL(fn_t, "hipGraphExecKernelNodeSetParams");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec, node, p);
    if (st == hipSuccess && p && log_file() >= 0) {
        const char *name = node_function_name(p->func);
        pthread_mutex_lock(&table_lock);
        struct exec_rec *e = exec_find(exec, 0);
        if (e) {
            for (size_t i = 0; i < e->n; i++) {
                struct node_rec *r = &e->nodes[i];
                if (r->node != node)
                    continue;
                free(r->name);
                r->name = name ? strdup(name) : NULL;
                r->grid[0] = (uint64_t)p->gridDim.x * p->blockDim.x;
                r->grid[1] = (uint64_t)p->gridDim.y * p->blockDim.y;
                r->grid[2] = (uint64_t)p->gridDim.z * p->blockDim.z;
                r->block[0] = p->blockDim.x;
                r->block[1] = p->blockDim.y;
                r->block[2] = p->blockDim.z;
            }
        }
        pthread_mutex_unlock(&table_lock);
    }
    return st;
}

WITNESS_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
    typedef hipError_t (*fn_t)(hipGraphExec_t);
    fn_t real = REAL(fn_t, "hipGraphExecDestroy");
    if (!real)
        return hipErrorNotInitialized;
    hipError_t st = real(exec);
    if (st == hipSuccess) {
        pthread_mutex_lock(&table_lock);
        struct exec_rec *e = exec_find(exec, 0);
        if (e) {
            exec_free_nodes(e);
            *e = execs[--nexecs];
        }
        pthread_mutex_unlock(&table_lock);
    }
    return st;
}

static hipError_t graph_launch(const char *api, const char *sym, int spt, hipGraphExec_t exec,
                               hipStream_t s) {
    typedef hipError_t (*fn_t)(hipGraphExec_t, hipStream_t);
    fn_t real = (fn_t)next_fn(sym);
    if (!real)
        return hipErrorNotInitialized;
    OUTER_BEGIN();
    struct launch l;
    if (outer_)
        launch_begin(&l, api, spt);
    hipError_t st = real(exec, s);
    if (outer_) {
        l.stream = s;
        unsigned long long end = tick();
        struct line out;
        line_init(&out);
        launch_head(&out, &l, st, end);
        line_put(&out, ",\"exec\":\"0x%llx\",\"nodes\":", (unsigned long long)(uintptr_t)exec);
        pthread_mutex_lock(&table_lock);
        struct exec_rec *e = exec_find(exec, 0);
        if (!e || e->incomplete) {
            line_put(&out, "null");
        } else {
            line_put(&out, "[");
            for (size_t i = 0; i < e->n; i++) {
                const struct node_rec *r = &e->nodes[i];
                line_put(&out, "%s{\"name\":", i ? "," : "");
                line_str(&out, r->name);
                line_put(&out, ",\"grid\":[%llu,%llu,%llu],\"block\":[%u,%u,%u]}",
                         (unsigned long long)r->grid[0], (unsigned long long)r->grid[1],
                         (unsigned long long)r->grid[2], r->block[0], r->block[1], r->block[2]);
            }
            line_put(&out, "]");
        }
        pthread_mutex_unlock(&table_lock);
        line_put(&out, "}");
        line_emit(&out);
    }
    OUTER_END();
    return st;
}

WITNESS_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s) {
    return graph_launch("hipGraphLaunch", "hipGraphLaunch", 0, exec, s);
}

#if !HIP5
WITNESS_EXPORT hipError_t hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t s) {
    return graph_launch("hipGraphLaunch_spt", "hipGraphLaunch_spt", 1, exec, s);
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* Streams                                                                                      */
/* ------------------------------------------------------------------------------------------ */

WITNESS_EXPORT hipError_t hipStreamDestroy(hipStream_t s) {
    typedef hipError_t (*fn_t)(hipStream_t);
    fn_t real = REAL(fn_t, "hipStreamDestroy");
    if (!real)
        return hipErrorNotInitialized;
    /* The destroy's place in the order is taken before the real call: inside it HIP frees the
     * stream, and another thread may create a stream at the same address and launch on it
     * before this call returns. Those launches must count as the new stream's (their seq is
     * after this one); a seq taken after the return would put them in the old stream's. */
    unsigned long long seq = tick();
    hipError_t st = real(s);
    if (st == hipSuccess && log_file() >= 0) {
        struct line out;
        line_init(&out);
        line_put(&out, "{\"seq\":%llu,\"event\":\"stream_destroy\",\"stream\":\"0x%llx\"}", seq,
                 (unsigned long long)(uintptr_t)s);
        line_emit(&out);
    }
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* OpenCL: the enqueue entry points of the ocl-icd loader (libOpenCL.so.1)                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * The same log gets one line per clEnqueueNDRangeKernel or clEnqueueTask call:
 *   seq, end, tid  as for HIP
 *   api            "clEnqueueNDRangeKernel" or "clEnqueueTask"
 *   status         the cl_int it returned
 *   name           CL_KERNEL_FUNCTION_NAME (null when the call failed: nothing is asked then)
 *   work_dim       as passed (clEnqueueTask: 1)
 *   grid           the global work size in work-items, 1 past work_dim
 *   block          the local work size, or null when the program let the runtime choose
 *   offset         the global work offset (0 when none was passed)
 *   queue          the command queue handle
 *   device         the queue's device handle, device_name its CL_DEVICE_NAME (the target, e.g.
 *                  "gfx90a:sramecc+:xnack-"), device_index its place among its platform's
 *                  devices (clGetDeviceIDs, CL_DEVICE_TYPE_ALL), -1 when unknown
 *   args           the kernel's arguments as clSetKernelArg / clSetKernelArgSVMPointer last set
 *                  them in this process, by index: {"size":N,"hex":"little-endian bytes"} for a
 *                  value, {"size":N,"local":true} for a NULL value (a local buffer),
 *                  {"svm":"0x.."} for an SVM pointer, null for an index never set here (a
 *                  kernel from clCloneKernel copies its source's); values longer than 256 bytes
 *                  are cut ("cut":true)
 * A clEnqueueNDRangeKernel the runtime makes inside another OpenCL call of the same thread is
 * not written twice (depth, as for HIP). The OpenCL functions are looked up on first use, so a
 * program that never loads OpenCL never touches them; below the witness they are found with
 * dlsym(RTLD_NEXT), or in the loaded libOpenCL.so.1 itself when the caller loaded it out of the
 * global scope (Python's extension modules are dlopen'ed RTLD_LOCAL). After a successful
 * enqueue the witness only reads (clGetKernelInfo, clGetCommandQueueInfo, clGetDeviceInfo,
 * clGetDeviceIDs); after a failed one it asks nothing.
 */

typedef int32_t wcl_int;
typedef uint32_t wcl_uint;
typedef struct wcl_opaque *wcl_handle; /* cl_command_queue, cl_kernel, cl_event, ... */

#define WCL_SUCCESS 0
#define WCL_INVALID_OPERATION (-59)
#define WCL_DEVICE_NAME 0x102B
#define WCL_DEVICE_PLATFORM 0x1031
#define WCL_QUEUE_DEVICE 0x1091
#define WCL_KERNEL_FUNCTION_NAME 0x1190
#define WCL_DEVICE_TYPE_ALL 0xFFFFFFFFull
#define WCL_ARG_BYTES 256

static void *cl_next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            f = dlsym(h, name);
            dlclose(h);
        }
    }
    if (!f) {
        char msg[512];
        int len = snprintf(msg, sizeof msg,
                           "softgpu-witness: %s not found below the witness nor in a loaded "
                           "libOpenCL.so.1\n",
                           name);
        if (len > 0 && write(2, msg, (size_t)len) < 0) {
        }
    }
    return f;
}

#define CL_REAL(type, sym)                                                                   \
    ({                                                                                       \
        static type cached_;                                                                 \
        type f_ = __atomic_load_n(&cached_, __ATOMIC_ACQUIRE);                               \
        if (!f_) {                                                                           \
            f_ = (type)cl_next(sym);                                                         \
            __atomic_store_n(&cached_, f_, __ATOMIC_RELEASE);                                \
        }                                                                                    \
        f_;                                                                                  \
    })

typedef wcl_int (*cl_info_fn)(wcl_handle, wcl_uint, size_t, void *, size_t *);
typedef wcl_int (*cl_device_ids_fn)(wcl_handle, uint64_t, wcl_uint, wcl_handle *, wcl_uint *);

/* The arguments last set on each kernel. */
struct cl_arg {
    int set, local, svm, cut;
    size_t size;
    unsigned char bytes[WCL_ARG_BYTES];
    const void *pointer;
};

struct cl_kernel_rec {
    wcl_handle kernel;
    struct cl_arg *args;
    wcl_uint n;
};

static struct cl_kernel_rec *cl_kernels;
static size_t ncl_kernels, capcl_kernels;

/* The record of `k`, created if asked (caller holds table_lock). */
static struct cl_kernel_rec *cl_kernel_find(wcl_handle k, int create) {
    for (size_t i = 0; i < ncl_kernels; i++)
        if (cl_kernels[i].kernel == k)
            return &cl_kernels[i];
    if (!create)
        return NULL;
    if (ncl_kernels == capcl_kernels) {
        size_t cap = capcl_kernels ? capcl_kernels * 2 : 32;
        struct cl_kernel_rec *q = realloc(cl_kernels, cap * sizeof *q);
        if (!q)
            return NULL;
        cl_kernels = q;
        capcl_kernels = cap;
    }
    struct cl_kernel_rec *r = &cl_kernels[ncl_kernels++];
    memset(r, 0, sizeof *r);
    r->kernel = k;
    return r;
}

/* A new kernel object at `k` (a released one's address may be reused): forget old arguments,
 * or take `from`'s (clCloneKernel). */
static void cl_kernel_new(wcl_handle k, wcl_handle from) {
    if (!k || log_file() < 0)
        return;
    pthread_mutex_lock(&table_lock);
    struct cl_kernel_rec *r = cl_kernel_find(k, 1);
    if (r) {
        free(r->args);
        r->args = NULL;
        r->n = 0;
        struct cl_kernel_rec *src = from ? cl_kernel_find(from, 0) : NULL;
        if (src && src->n) {
            r->args = malloc(src->n * sizeof *r->args);
            if (r->args) {
                memcpy(r->args, src->args, src->n * sizeof *r->args);
                r->n = src->n;
            }
        }
    }
    pthread_mutex_unlock(&table_lock);
}

static void cl_arg_set(wcl_handle k, wcl_uint index, size_t size, const void *value, int svm) {
    if (log_file() < 0 || index > 4096)
        return;
    pthread_mutex_lock(&table_lock);
    struct cl_kernel_rec *r = cl_kernel_find(k, 1);
    if (r && index >= r->n) {
        struct cl_arg *q = realloc(r->args, (index + 1) * sizeof *q);
        if (q) {
            memset(q + r->n, 0, (index + 1 - r->n) * sizeof *q);
            r->args = q;
            r->n = index + 1;
        }
    }
    if (r && index < r->n) {
        struct cl_arg *a = &r->args[index];
        memset(a, 0, sizeof *a);
        a->set = 1;
        a->size = size;
        if (svm) {
            a->svm = 1;
            a->pointer = value;
        } else if (!value) {
            a->local = 1;
        } else {
            size_t n = size < WCL_ARG_BYTES ? size : WCL_ARG_BYTES;
            memcpy(a->bytes, value, n);
            a->cut = n < size;
        }
    }
    pthread_mutex_unlock(&table_lock);
}

static void cl_put_args(struct line *out, wcl_handle k) {
    pthread_mutex_lock(&table_lock);
    struct cl_kernel_rec *r = cl_kernel_find(k, 0);
    line_put(out, ",\"args\":[");
    for (wcl_uint i = 0; r && i < r->n; i++) {
        const struct cl_arg *a = &r->args[i];
        if (i)
            line_put(out, ",");
        if (!a->set) {
            line_put(out, "null");
        } else if (a->svm) {
            line_put(out, "{\"svm\":\"0x%llx\"}", (unsigned long long)(uintptr_t)a->pointer);
        } else if (a->local) {
            line_put(out, "{\"size\":%zu,\"local\":true}", a->size);
        } else {
            line_put(out, "{\"size\":%zu,\"hex\":\"", a->size);
            size_t n = a->size < WCL_ARG_BYTES ? a->size : WCL_ARG_BYTES;
            for (size_t b = 0; b < n; b++)
                line_put(out, "%02x", a->bytes[b]);
            line_put(out, "\"%s}", a->cut ? ",\"cut\":true" : "");
        }
    }
    line_put(out, "]");
    pthread_mutex_unlock(&table_lock);
}

/* The queue's device, its name and its index among its platform's devices: reads only. */
static void cl_put_device(struct line *out, wcl_handle queue) {
    cl_info_fn queue_info = CL_REAL(cl_info_fn, "clGetCommandQueueInfo");
    cl_info_fn device_info = CL_REAL(cl_info_fn, "clGetDeviceInfo");
    cl_device_ids_fn device_ids = CL_REAL(cl_device_ids_fn, "clGetDeviceIDs");
    wcl_handle device = NULL, platform = NULL;
    char name[256] = {0};
    int have_name = 0, index = -1;
    if (queue_info &&
        queue_info(queue, WCL_QUEUE_DEVICE, sizeof device, &device, NULL) != WCL_SUCCESS)
        device = NULL;
    if (device && device_info) {
        have_name = device_info(device, WCL_DEVICE_NAME, sizeof name - 1, name, NULL) ==
                    WCL_SUCCESS;
        if (device_info(device, WCL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) !=
            WCL_SUCCESS)
            platform = NULL;
    }
    if (platform && device_ids) {
        wcl_uint n = 0;
        if (device_ids(platform, WCL_DEVICE_TYPE_ALL, 0, NULL, &n) == WCL_SUCCESS && n > 0 &&
            n < 4096) {
            wcl_handle *all = calloc(n, sizeof *all);
            if (all && device_ids(platform, WCL_DEVICE_TYPE_ALL, n, all, NULL) == WCL_SUCCESS)
                for (wcl_uint i = 0; i < n && index < 0; i++)
                    if (all[i] == device)
                        index = (int)i;
            free(all);
        }
    }
    line_put(out, ",\"queue\":\"0x%llx\",\"device\":\"0x%llx\",\"device_name\":",
             (unsigned long long)(uintptr_t)queue, (unsigned long long)(uintptr_t)device);
    line_str(out, have_name ? name : NULL);
    line_put(out, ",\"device_index\":%d", index);
}

static void cl_enqueue_line(const char *api, unsigned long long seq, wcl_int status,
                            wcl_handle queue, wcl_handle kernel, wcl_uint work_dim,
                            const size_t *offset, const size_t *global, const size_t *local) {
    unsigned long long end = tick();
    char name[1024] = {0};
    int have_name = 0;
    if (status == WCL_SUCCESS) {
        cl_info_fn kernel_info = CL_REAL(cl_info_fn, "clGetKernelInfo");
        size_t len = 0;
        if (kernel_info &&
            kernel_info(kernel, WCL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, &len) ==
                WCL_SUCCESS)
            have_name = 1;
    }
    uint64_t g[3] = {1, 1, 1}, o[3] = {0, 0, 0};
    uint64_t b[3] = {1, 1, 1};
    for (wcl_uint i = 0; i < work_dim && i < 3; i++) {
        if (global)
            g[i] = global[i];
        if (offset)
            o[i] = offset[i];
        if (local)
            b[i] = local[i];
    }
    struct line out;
    line_init(&out);
    line_put(&out, "{\"seq\":%llu,\"end\":%llu,\"tid\":%ld,\"api\":", seq, end,
             (long)syscall(SYS_gettid));
    line_str(&out, api);
    line_put(&out, ",\"status\":%d,\"name\":", (int)status);
    line_str(&out, have_name ? name : NULL);
    line_put(&out, ",\"work_dim\":%u,\"grid\":[%llu,%llu,%llu],\"block\":", work_dim,
             (unsigned long long)g[0], (unsigned long long)g[1], (unsigned long long)g[2]);
    if (local)
        line_put(&out, "[%llu,%llu,%llu]", (unsigned long long)b[0], (unsigned long long)b[1],
                 (unsigned long long)b[2]);
    else
        line_put(&out, "null");
    line_put(&out, ",\"offset\":[%llu,%llu,%llu]", (unsigned long long)o[0],
             (unsigned long long)o[1], (unsigned long long)o[2]);
    if (status == WCL_SUCCESS)
        cl_put_device(&out, queue);
    else
        line_put(&out, ",\"queue\":\"0x%llx\",\"device\":null,\"device_name\":null,"
                       "\"device_index\":-1",
                 (unsigned long long)(uintptr_t)queue);
    cl_put_args(&out, kernel);
    line_put(&out, "}");
    line_emit(&out);
}

WITNESS_EXPORT wcl_int clEnqueueNDRangeKernel(wcl_handle queue, wcl_handle kernel,
                                              wcl_uint work_dim, const size_t *offset,
                                              const size_t *global, const size_t *local,
                                              wcl_uint nwait, const wcl_handle *wait,
                                              wcl_handle *event) {
    typedef wcl_int (*fn_t)(wcl_handle, wcl_handle, wcl_uint, const size_t *, const size_t *,
                            const size_t *, wcl_uint, const wcl_handle *, wcl_handle *);
    fn_t real = CL_REAL(fn_t, "clEnqueueNDRangeKernel");
    if (!real)
        return WCL_INVALID_OPERATION;
    OUTER_BEGIN();
    unsigned long long seq = outer_ ? tick() : 0;
    wcl_int st = real(queue, kernel, work_dim, offset, global, local, nwait, wait, event);
    if (outer_)
        cl_enqueue_line("clEnqueueNDRangeKernel", seq, st, queue, kernel, work_dim, offset,
                        global, local);
    OUTER_END();
    return st;
}

WITNESS_EXPORT wcl_int clEnqueueTask(wcl_handle queue, wcl_handle kernel, wcl_uint nwait,
                                     const wcl_handle *wait, wcl_handle *event) {
    typedef wcl_int (*fn_t)(wcl_handle, wcl_handle, wcl_uint, const wcl_handle *, wcl_handle *);
    fn_t real = CL_REAL(fn_t, "clEnqueueTask");
    if (!real)
        return WCL_INVALID_OPERATION;
    OUTER_BEGIN();
    unsigned long long seq = outer_ ? tick() : 0;
    wcl_int st = real(queue, kernel, nwait, wait, event);
    if (outer_) {
        static const size_t one[1] = {1};
        cl_enqueue_line("clEnqueueTask", seq, st, queue, kernel, 1, NULL, one, one);
    }
    OUTER_END();
    return st;
}

WITNESS_EXPORT wcl_int clSetKernelArg(wcl_handle kernel, wcl_uint index, size_t size,
                                      const void *value) {
    typedef wcl_int (*fn_t)(wcl_handle, wcl_uint, size_t, const void *);
    fn_t real = CL_REAL(fn_t, "clSetKernelArg");
    if (!real)
        return WCL_INVALID_OPERATION;
    wcl_int st = real(kernel, index, size, value);
    if (st == WCL_SUCCESS)
        cl_arg_set(kernel, index, size, value, 0);
    return st;
}

WITNESS_EXPORT wcl_int clSetKernelArgSVMPointer(wcl_handle kernel, wcl_uint index,
                                                const void *value) {
    typedef wcl_int (*fn_t)(wcl_handle, wcl_uint, const void *);
    fn_t real = CL_REAL(fn_t, "clSetKernelArgSVMPointer");
    if (!real)
        return WCL_INVALID_OPERATION;
    wcl_int st = real(kernel, index, value);
    if (st == WCL_SUCCESS)
        cl_arg_set(kernel, index, sizeof value, value, 1);
    return st;
}

WITNESS_EXPORT wcl_handle clCreateKernel(wcl_handle program, const char *name, wcl_int *err) {
    typedef wcl_handle (*fn_t)(wcl_handle, const char *, wcl_int *);
    fn_t real = CL_REAL(fn_t, "clCreateKernel");
    if (!real) {
        if (err)
            *err = WCL_INVALID_OPERATION;
        return NULL;
    }
    wcl_handle k = real(program, name, err);
    cl_kernel_new(k, NULL);
    return k;
}

WITNESS_EXPORT wcl_int clCreateKernelsInProgram(wcl_handle program, wcl_uint n, wcl_handle *out,
                                                wcl_uint *nret) {
    typedef wcl_int (*fn_t)(wcl_handle, wcl_uint, wcl_handle *, wcl_uint *);
    fn_t real = CL_REAL(fn_t, "clCreateKernelsInProgram");
    if (!real)
        return WCL_INVALID_OPERATION;
    wcl_int st = real(program, n, out, nret);
    wcl_uint made = nret && *nret < n ? *nret : n;
    if (st == WCL_SUCCESS && out)
        for (wcl_uint i = 0; i < made; i++)
            cl_kernel_new(out[i], NULL);
    return st;
}

WITNESS_EXPORT wcl_handle clCloneKernel(wcl_handle source, wcl_int *err) {
    typedef wcl_handle (*fn_t)(wcl_handle, wcl_int *);
    fn_t real = CL_REAL(fn_t, "clCloneKernel");
    if (!real) {
        if (err)
            *err = WCL_INVALID_OPERATION;
        return NULL;
    }
    wcl_handle k = real(source, err);
    cl_kernel_new(k, source);
    return k;
}
