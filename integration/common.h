/*
 * Helpers shared by SoftGPU's raw-HSA integration programs.
 *
 * Include this header first: it selects the POSIX level for clock_gettime and
 * nanosleep before any system header is read.
 *
 * The programs use only the public HSA API, the way a hand-written HSA program
 * or HIP's runtime would: find the agents, allocate kernargs from the kernarg
 * pool, create a queue, reserve slots with add_write_index, write the body,
 * publish header+setup with one 32-bit release store, ring the doorbell with
 * the index of the last packet written, and wait on completion signals.
 *
 * Kernels never run under SoftGPU, so kernel objects are fake: addresses of
 * 64-byte-aligned static buffers that nobody dereferences.
 *
 * Output contract with tests/integration_raw_hsa.rs: lines starting with "sg: "
 * are `key=value` facts the harness reads (queue_id, kernel objects, counts).
 * Everything else is for people. Any unexpected status or value prints a line
 * starting with "FAIL" to stderr and exits with status 1.
 */
#ifndef SOFTGPU_INTEGRATION_COMMON_H
#define SOFTGPU_INTEGRATION_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a packet that must complete may take before we call it a hang. */
#define SG_COMPLETE_TIMEOUT_MS 10000u
/* How long we watch a packet that must NOT complete (or a slot that must not be read). */
#define SG_HOLD_MS 100u

#define SG_FAIL(...)                                                          \
    do {                                                                      \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                  \
        fprintf(stderr, __VA_ARGS__);                                         \
        fputc('\n', stderr);                                                  \
        exit(1);                                                              \
    } while (0)

#define SG_CHECK(call)                                                        \
    do {                                                                      \
        hsa_status_t sg_status_ = (call);                                     \
        if (sg_status_ != HSA_STATUS_SUCCESS)                                 \
            SG_FAIL("%s returned status 0x%x", #call, (unsigned)sg_status_);  \
    } while (0)

#define SG_EXPECT(cond, ...)                                                  \
    do {                                                                      \
        if (!(cond))                                                          \
            SG_FAIL(__VA_ARGS__);                                             \
    } while (0)

typedef struct {
    hsa_agent_t gpu;
    hsa_agent_t cpu;
    bool have_gpu;
    bool have_cpu;
    bool have_kernarg_pool;
    hsa_amd_memory_pool_t kernarg_pool;
    uint64_t timestamp_frequency; /* ticks per second, for wait timeouts */
} sg_ctx;

/* ---- time ---------------------------------------------------------------- */

static inline uint64_t sg_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void sg_sleep_us(unsigned us) {
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}

/* A wait timeout hint, in HSA timestamp ticks, for `ns` nanoseconds. */
static inline uint64_t sg_ticks(const sg_ctx *ctx, uint64_t ns) {
    uint64_t t = (uint64_t)((double)ns * (double)ctx->timestamp_frequency / 1e9);
    return t ? t : 1;
}

/* ---- start-up: agents and the kernarg pool ------------------------------- */

static inline hsa_status_t sg_agent_cb(hsa_agent_t agent, void *data) {
    sg_ctx *ctx = (sg_ctx *)data;
    hsa_device_type_t type;
    hsa_status_t st = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (st != HSA_STATUS_SUCCESS)
        return st;
    if (type == HSA_DEVICE_TYPE_GPU && !ctx->have_gpu) {
        ctx->gpu = agent;
        ctx->have_gpu = true;
    } else if (type == HSA_DEVICE_TYPE_CPU && !ctx->have_cpu) {
        ctx->cpu = agent;
        ctx->have_cpu = true;
    }
    return HSA_STATUS_SUCCESS;
}

static inline hsa_status_t sg_pool_cb(hsa_amd_memory_pool_t pool, void *data) {
    sg_ctx *ctx = (sg_ctx *)data;
    hsa_amd_segment_t segment;
    hsa_status_t st = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
    if (st != HSA_STATUS_SUCCESS)
        return st;
    if (segment != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    uint32_t flags = 0;
    st = hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
    if (st != HSA_STATUS_SUCCESS)
        return st;
    if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !ctx->have_kernarg_pool) {
        ctx->kernarg_pool = pool;
        ctx->have_kernarg_pool = true;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

/* hsa_init, find the first GPU and CPU agents and the kernarg pool. */
static inline void sg_init(sg_ctx *ctx) {
    /* Line-buffered even into a pipe, so output interleaves with the runtime's stderr
     * in order, and a hung program still shows how far it got. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(ctx, 0, sizeof *ctx);
    hsa_status_t init = hsa_init();
    SG_EXPECT(init == HSA_STATUS_SUCCESS,
              "hsa_init() returned status 0x%x. Under SoftGPU it succeeds; 0x1008 usually means the real "
              "ROCr answered and found no GPU: is LD_PRELOAD set to libsoftgpu_hsa.so, and does it export hsa_init?",
              (unsigned)init);
    SG_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &ctx->timestamp_frequency));
    SG_EXPECT(ctx->timestamp_frequency > 0, "HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY is 0");
    SG_CHECK(hsa_iterate_agents(sg_agent_cb, ctx));
    SG_EXPECT(ctx->have_gpu, "no agent with HSA_AGENT_INFO_DEVICE == HSA_DEVICE_TYPE_GPU");
    SG_EXPECT(ctx->have_cpu, "no agent with HSA_AGENT_INFO_DEVICE == HSA_DEVICE_TYPE_CPU");

    char name[64] = {0};
    SG_CHECK(hsa_agent_get_info(ctx->gpu, HSA_AGENT_INFO_NAME, name));
    name[sizeof name - 1] = 0;
    printf("GPU agent: %s\n", name);
    printf("sg: gpu_name=%s\n", name);

    /* The kernarg pool is a CPU-agent GLOBAL pool with KERNARG_INIT; fall back to the GPU's. */
    hsa_status_t st = hsa_amd_agent_iterate_memory_pools(ctx->cpu, sg_pool_cb, ctx);
    SG_EXPECT(st == HSA_STATUS_SUCCESS || st == HSA_STATUS_INFO_BREAK,
              "hsa_amd_agent_iterate_memory_pools(cpu) returned 0x%x", (unsigned)st);
    if (!ctx->have_kernarg_pool) {
        st = hsa_amd_agent_iterate_memory_pools(ctx->gpu, sg_pool_cb, ctx);
        SG_EXPECT(st == HSA_STATUS_SUCCESS || st == HSA_STATUS_INFO_BREAK,
                  "hsa_amd_agent_iterate_memory_pools(gpu) returned 0x%x", (unsigned)st);
    }
    SG_EXPECT(ctx->have_kernarg_pool, "no GLOBAL memory pool with the KERNARG_INIT flag");
}

/* Kernarg memory from the kernarg pool, zeroed, 16-byte aligned, visible to the GPU. */
static inline void *sg_kernarg_alloc(const sg_ctx *ctx, size_t size) {
    void *p = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(ctx->kernarg_pool, size, 0, &p));
    SG_EXPECT(p != NULL, "hsa_amd_memory_pool_allocate returned NULL");
    SG_EXPECT(((uintptr_t)p & 15u) == 0, "kernarg allocation %p is not 16-byte aligned", p);
    SG_CHECK(hsa_amd_agents_allow_access(1, &ctx->gpu, NULL, p));
    memset(p, 0, size);
    return p;
}

static inline void sg_kernarg_free(void *p) { SG_CHECK(hsa_amd_memory_pool_free(p)); }

/* ---- queues and signals -------------------------------------------------- */

/* A MULTI queue on the GPU agent of `want` packets, clamped to the agent's limits. */
static inline hsa_queue_t *sg_queue_create(const sg_ctx *ctx, uint32_t want) {
    uint32_t min_size = 0, max_size = 0;
    SG_CHECK(hsa_agent_get_info(ctx->gpu, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &min_size));
    SG_CHECK(hsa_agent_get_info(ctx->gpu, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max_size));
    SG_EXPECT(min_size > 0 && min_size <= max_size, "queue size limits min=%u max=%u", min_size, max_size);
    uint32_t size = want;
    if (size < min_size)
        size = min_size;
    if (size > max_size)
        size = max_size;
    hsa_queue_t *q = NULL;
    SG_CHECK(hsa_queue_create(ctx->gpu, size, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
    SG_EXPECT(q != NULL, "hsa_queue_create returned no queue");
    SG_EXPECT(q->size == size, "queue size %u, asked for %u", q->size, size);
    SG_EXPECT((q->size & (q->size - 1)) == 0, "queue size %u is not a power of two", q->size);
    SG_EXPECT(q->base_address != NULL, "queue has no ring");
    SG_EXPECT(q->doorbell_signal.handle != 0, "queue has no doorbell signal");
    SG_EXPECT(hsa_queue_load_read_index_scacquire(q) == 0, "a new queue's read index is not 0");
    SG_EXPECT(hsa_queue_load_write_index_relaxed(q) == 0, "a new queue's write index is not 0");
    printf("queue %llu: %u packets\n", (unsigned long long)q->id, q->size);
    printf("sg: queue_id=%llu\n", (unsigned long long)q->id);
    printf("sg: queue_size=%u\n", q->size);
    return q;
}

static inline hsa_signal_t sg_signal(hsa_signal_value_t initial) {
    hsa_signal_t s;
    SG_CHECK(hsa_signal_create(initial, 0, NULL, &s));
    SG_EXPECT(s.handle != 0, "hsa_signal_create returned a null handle");
    return s;
}

static const hsa_signal_t SG_NO_SIGNAL = {0};

/* ---- packets ------------------------------------------------------------- */

/* Fake kernel objects: 64-byte aligned, nonzero, never dereferenced. */
static uint8_t sg_fake_kernel_descriptors[8][64] __attribute__((aligned(64)));

static inline uint64_t sg_kernel_object(unsigned i) {
    return (uint64_t)(uintptr_t)sg_fake_kernel_descriptors[i % 8];
}

static inline void sg_print_kernel_objects(void) {
    for (unsigned i = 0; i < 8; i++)
        printf("sg: kernel_object_%u=0x%llx\n", i, (unsigned long long)sg_kernel_object(i));
}

static inline uint16_t sg_header(unsigned type, unsigned barrier, unsigned acquire, unsigned release) {
    return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | (barrier << HSA_PACKET_HEADER_BARRIER) |
                      (acquire << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (release << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

/* The usual dispatch header: system-scope fences, no barrier bit. */
#define SG_DISPATCH_HEADER                                                    \
    sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM)
/* HIP's synchronising barrier: BARRIER_AND, barrier bit, system scopes (0x1503). */
#define SG_BARRIER_AND_HEADER                                                 \
    sg_header(HSA_PACKET_TYPE_BARRIER_AND, 1, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM)
#define SG_BARRIER_OR_HEADER                                                  \
    sg_header(HSA_PACKET_TYPE_BARRIER_OR, 1, HSA_FENCE_SCOPE_SYSTEM, HSA_FENCE_SCOPE_SYSTEM)

/* A kernel dispatch, described field by field; `setup` is written as given
 * (dimensions in bits 0..1), so tests can set reserved bits on purpose. */
typedef struct {
    uint16_t setup;
    uint16_t workgroup[3];
    uint32_t grid[3];
    uint32_t private_segment_size;
    uint32_t group_segment_size;
    uint64_t kernel_object;
    uint64_t kernarg_address;
    uint16_t reserved0;
    uint64_t reserved2;
    hsa_signal_t completion_signal;
} sg_dispatch;

static inline sg_dispatch sg_dispatch_1d(uint32_t grid, uint16_t wg, uint64_t kobj, const void *kernarg,
                                         hsa_signal_t completion) {
    sg_dispatch d;
    memset(&d, 0, sizeof d);
    d.setup = 1;
    d.workgroup[0] = wg;
    d.workgroup[1] = 1;
    d.workgroup[2] = 1;
    d.grid[0] = grid;
    d.grid[1] = 1;
    d.grid[2] = 1;
    d.kernel_object = kobj;
    d.kernarg_address = (uint64_t)(uintptr_t)kernarg;
    d.completion_signal = completion;
    return d;
}

static inline void *sg_slot(const hsa_queue_t *q, uint64_t index) {
    return (char *)q->base_address + (size_t)(index & (q->size - 1)) * 64u;
}

/* Reserve `n` consecutive slots, first waiting until the ring has room for them.
 * Returns the index of the first. (One producer per queue in these programs.) */
static inline uint64_t sg_reserve(hsa_queue_t *q, uint32_t n) {
    SG_EXPECT(n > 0 && n <= q->size, "cannot reserve %u slots in a queue of %u", n, q->size);
    uint64_t write = hsa_queue_load_write_index_relaxed(q);
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
    while (write + n - hsa_queue_load_read_index_scacquire(q) > q->size) {
        SG_EXPECT(sg_now_ns() < deadline, "queue full for %u ms: read index stuck at %llu, write index %llu",
                  SG_COMPLETE_TIMEOUT_MS, (unsigned long long)hsa_queue_load_read_index_scacquire(q),
                  (unsigned long long)write);
        sg_sleep_us(50);
    }
    uint64_t index = hsa_queue_add_write_index_screlease(q, n);
    SG_EXPECT(index == write, "add_write_index returned %llu, expected %llu", (unsigned long long)index,
              (unsigned long long)write);
    return index;
}

/* Make the packet visible: header and setup together, one 32-bit release store. */
static inline void sg_publish(void *slot, uint16_t header, uint16_t setup) {
    __atomic_store_n((uint32_t *)slot, (uint32_t)header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
}

/* Clear a slot's body (bytes 4..63); the first 4 bytes are only written by sg_publish. */
static inline void sg_clear_body(void *slot) { memset((char *)slot + 4, 0, 60); }

static inline void sg_write_dispatch_body(void *slot, const sg_dispatch *d) {
    hsa_kernel_dispatch_packet_t *p = (hsa_kernel_dispatch_packet_t *)slot;
    sg_clear_body(slot);
    p->workgroup_size_x = d->workgroup[0];
    p->workgroup_size_y = d->workgroup[1];
    p->workgroup_size_z = d->workgroup[2];
    p->reserved0 = d->reserved0;
    p->grid_size_x = d->grid[0];
    p->grid_size_y = d->grid[1];
    p->grid_size_z = d->grid[2];
    p->private_segment_size = d->private_segment_size;
    p->group_segment_size = d->group_segment_size;
    p->kernel_object = d->kernel_object;
    p->kernarg_address = (void *)(uintptr_t)d->kernarg_address;
    p->reserved2 = d->reserved2;
    p->completion_signal = d->completion_signal;
}

/* Write and publish a dispatch into slot `index` (already reserved). */
static inline void sg_put_dispatch(hsa_queue_t *q, uint64_t index, uint16_t header, const sg_dispatch *d) {
    void *slot = sg_slot(q, index);
    sg_write_dispatch_body(slot, d);
    sg_publish(slot, header, d->setup);
}

/* Write and publish a barrier (AND or OR by `header`) into slot `index`.
 * `deps` holds up to 5 signals; missing ones are 0 handles. */
static inline void sg_put_barrier(hsa_queue_t *q, uint64_t index, uint16_t header, const hsa_signal_t *deps,
                           unsigned ndeps, hsa_signal_t completion) {
    void *slot = sg_slot(q, index);
    hsa_barrier_and_packet_t *p = (hsa_barrier_and_packet_t *)slot;
    SG_EXPECT(ndeps <= 5, "a barrier has at most 5 dependencies");
    sg_clear_body(slot);
    for (unsigned i = 0; i < ndeps; i++)
        p->dep_signal[i] = deps[i];
    p->completion_signal = completion;
    sg_publish(slot, header, 0);
}

static inline void sg_ring(hsa_queue_t *q, uint64_t index) {
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
}

/* Reserve one slot, write, publish and ring. Returns the packet's index. */
static inline uint64_t sg_submit_dispatch(hsa_queue_t *q, uint16_t header, const sg_dispatch *d) {
    uint64_t index = sg_reserve(q, 1);
    sg_put_dispatch(q, index, header, d);
    sg_ring(q, index);
    return index;
}

static inline uint64_t sg_submit_barrier(hsa_queue_t *q, uint16_t header, const hsa_signal_t *deps, unsigned ndeps,
                                  hsa_signal_t completion) {
    uint64_t index = sg_reserve(q, 1);
    sg_put_barrier(q, index, header, deps, ndeps, completion);
    sg_ring(q, index);
    return index;
}

/* ---- waiting ------------------------------------------------------------- */

/* Wait until `s` drops below `below`; fail after SG_COMPLETE_TIMEOUT_MS. Returns the value seen. */
static inline hsa_signal_value_t sg_wait_below(const sg_ctx *ctx, hsa_signal_t s, hsa_signal_value_t below,
                                        const char *what) {
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
    for (;;) {
        uint64_t now = sg_now_ns();
        uint64_t left = now < deadline ? deadline - now : 0;
        uint64_t slice = left < 50000000u ? left : 50000000u;
        hsa_signal_value_t v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, below, sg_ticks(ctx, slice),
                                                         HSA_WAIT_STATE_BLOCKED);
        if (v < below)
            return v;
        SG_EXPECT(sg_now_ns() < deadline, "%s: signal still %lld after %u ms, expected < %lld", what, (long long)v,
                  SG_COMPLETE_TIMEOUT_MS, (long long)below);
    }
}

/* Wait for completion under the contract: the signal goes from 1 to 0. */
static inline void sg_wait_complete(const sg_ctx *ctx, hsa_signal_t s, const char *what) {
    hsa_signal_value_t v = sg_wait_below(ctx, s, 1, what);
    SG_EXPECT(v == 0, "%s: completion signal went to %lld, expected 0 (a decrement by one)", what, (long long)v);
}

/* Watch `s` for SG_HOLD_MS; fail if it ever differs from `expected`. */
static inline void sg_expect_unchanged(const sg_ctx *ctx, hsa_signal_t s, hsa_signal_value_t expected, const char *what) {
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_HOLD_MS * 1000000u;
    for (;;) {
        uint64_t now = sg_now_ns();
        if (now >= deadline)
            break;
        hsa_signal_value_t v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_NE, expected,
                                                         sg_ticks(ctx, deadline - now), HSA_WAIT_STATE_BLOCKED);
        SG_EXPECT(v == expected, "%s: signal changed to %lld, expected it to stay %lld", what, (long long)v,
                  (long long)expected);
    }
    hsa_signal_value_t v = hsa_signal_load_scacquire(s);
    SG_EXPECT(v == expected, "%s: signal is %lld, expected it to stay %lld", what, (long long)v, (long long)expected);
}

/* Wait until the queue's read index reaches `target`; fail after SG_COMPLETE_TIMEOUT_MS. */
static inline void sg_wait_read_index(hsa_queue_t *q, uint64_t target, const char *what) {
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
    uint64_t r;
    while ((r = hsa_queue_load_read_index_scacquire(q)) < target) {
        SG_EXPECT(sg_now_ns() < deadline, "%s: read index stuck at %llu, expected %llu", what,
                  (unsigned long long)r, (unsigned long long)target);
        sg_sleep_us(50);
    }
}

/* Watch the read index for SG_HOLD_MS; fail if it moves away from `expected`. */
static inline void sg_expect_read_index_held(hsa_queue_t *q, uint64_t expected, const char *what) {
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_HOLD_MS * 1000000u;
    do {
        uint64_t r = hsa_queue_load_read_index_scacquire(q);
        SG_EXPECT(r == expected, "%s: read index is %llu, expected it held at %llu", what, (unsigned long long)r,
                  (unsigned long long)expected);
        sg_sleep_us(1000);
    } while (sg_now_ns() < deadline);
}

static inline void sg_shutdown(hsa_queue_t *q) {
    if (q)
        SG_CHECK(hsa_queue_destroy(q));
    SG_CHECK(hsa_shut_down());
}

#endif /* SOFTGPU_INTEGRATION_COMMON_H */
