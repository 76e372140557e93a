/*
 * The functions ROCr 7.2.4 adds, called directly through its public headers,
 * as a raw HSA program (or HIP 7's and the OpenCL runtime's ROCclr) calls
 * them. Built against ROCr 7.2.4's headers and linked against its
 * libhsa-runtime64.so.1 in the ROCm 7 chroot (tests/rocr7_entries.rs), run
 * with the shim preloaded in virtual mode.
 *
 * Before the shim had a row for each, the dynamic linker bound these calls
 * to the real ROCr, which the virtual runtime never initialised: they
 * returned HSA_STATUS_ERROR_NOT_INITIALIZED or crashed there.
 *
 * Each check prints "sg: ok=<name>" when it holds; any other outcome prints a
 * FAIL line and exits 1 (integration/common.h's contract).
 */
#define _GNU_SOURCE
#include "common.h"

#include <hsa/hsa_ext_image.h>

#include <fcntl.h>
#include <unistd.h>

static void ok(const char *name) { printf("sg: ok=%s\n", name); }

static hsa_amd_memory_pool_t gpu_pool;
static bool have_gpu_pool;

static hsa_status_t gpu_pool_cb(hsa_amd_memory_pool_t pool, void *data) {
    (void)data;
    hsa_amd_segment_t seg;
    uint32_t flags = 0;
    SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
    if (seg != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
    SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && !have_gpu_pool) {
        gpu_pool = pool;
        have_gpu_pool = true;
    }
    return HSA_STATUS_SUCCESS;
}

static int events_seen;
static hsa_status_t on_event(const hsa_amd_event_t *event, void *data) {
    (void)event;
    (void)data;
    events_seen++;
    return HSA_STATUS_SUCCESS;
}

static void scratch_limit(const sg_ctx *ctx) {
    uint64_t max = 0, cur = 0;
    SG_CHECK(hsa_agent_get_info(ctx->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_MAX, &max));
    SG_EXPECT(max > (1u << 20), "scratch limit max %llu", (unsigned long long)max);
    SG_CHECK(hsa_amd_agent_set_async_scratch_limit(ctx->gpu, 1u << 20));
    SG_CHECK(hsa_agent_get_info(ctx->gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_SCRATCH_LIMIT_CURRENT, &cur));
    SG_EXPECT(cur == (1u << 20), "the current scratch limit reads %llu after setting 1 MiB", (unsigned long long)cur);
    hsa_status_t st = hsa_amd_agent_set_async_scratch_limit(ctx->cpu, 1u << 20);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "a CPU agent's scratch limit: status 0x%x", st);
    st = hsa_amd_agent_set_async_scratch_limit(ctx->gpu, (size_t)max + 1);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "a limit above the maximum: status 0x%x", st);
    hsa_agent_t forged = {ctx->gpu.handle ^ 0x5a5a0000};
    st = hsa_amd_agent_set_async_scratch_limit(forged, 1);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_AGENT, "a forged agent: status 0x%x", st);
    SG_CHECK(hsa_amd_agent_set_async_scratch_limit(ctx->gpu, (size_t)max));
    ok("hsa_amd_agent_set_async_scratch_limit");
}

static void ais(void) {
    const size_t n = 8192;
    uint8_t *dev = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(gpu_pool, n, 0, (void **)&dev));
    char path[] = "softgpu-ais-XXXXXX";
    int fd = mkstemp(path);
    SG_EXPECT(fd >= 0, "mkstemp");
    unlink(path);
    uint8_t pattern[4096];
    for (size_t i = 0; i < sizeof pattern; i++) pattern[i] = (uint8_t)(i * 7 + 3);
    SG_EXPECT(pwrite(fd, pattern, sizeof pattern, 0) == (ssize_t)sizeof pattern, "pwrite");

    hsa_amd_ais_file_handle_t h;
    memset(&h, 0, sizeof h);
    h.fd = fd;
    uint64_t copied = 0;
    int32_t st32 = -1;
    memset(dev, 0, n);
    SG_CHECK(hsa_amd_ais_file_read(h, dev, sizeof pattern, 0, &copied, &st32));
    SG_EXPECT(copied == sizeof pattern && st32 == 0, "ais read copied %llu status %d", (unsigned long long)copied, st32);
    SG_EXPECT(memcmp(dev, pattern, sizeof pattern) == 0, "the file's bytes did not arrive in device memory");
    /* Past the end of the file: a short read, the count says so. */
    SG_CHECK(hsa_amd_ais_file_read(h, dev, n, 0, &copied, &st32));
    SG_EXPECT(copied == sizeof pattern, "a read past the end copied %llu", (unsigned long long)copied);
    ok("hsa_amd_ais_file_read");

    for (size_t i = 0; i < 100; i++) dev[i] = (uint8_t)(255 - i);
    SG_CHECK(hsa_amd_ais_file_write(h, dev, 100, 5000, &copied, &st32));
    SG_EXPECT(copied == 100 && st32 == 0, "ais write copied %llu status %d", (unsigned long long)copied, st32);
    uint8_t back[100];
    SG_EXPECT(pread(fd, back, 100, 5000) == 100, "pread");
    SG_EXPECT(memcmp(back, dev, 100) == 0, "device bytes did not arrive in the file");
    ok("hsa_amd_ais_file_write");

    uint8_t stack[64];
    hsa_status_t st = hsa_amd_ais_file_read(h, stack, sizeof stack, 0, &copied, &st32);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ALLOCATION, "host stack memory: status 0x%x", st);
    st = hsa_amd_ais_file_read(h, dev + n - 16, 32, 0, &copied, &st32);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ALLOCATION, "a range past the allocation: status 0x%x", st);
    st = hsa_amd_ais_file_read(h, dev, 0, 0, &copied, &st32);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "size 0: status 0x%x", st);
    st = hsa_amd_ais_file_read(h, NULL, 16, 0, &copied, &st32);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL buffer: status 0x%x", st);
    close(fd);
    h.fd = fd; /* closed now */
    st = hsa_amd_ais_file_read(h, dev, 16, 0, &copied, &st32);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "a closed descriptor: status 0x%x", st);
    SG_CHECK(hsa_amd_memory_pool_free(dev));
    ok("ais_errors");
}

static void copy_engine(const sg_ctx *ctx) {
    uint32_t preferred = 0, available = 0;
    SG_CHECK(hsa_amd_memory_get_preferred_copy_engine(ctx->gpu, ctx->cpu, &preferred));
    SG_CHECK(hsa_amd_memory_copy_engine_status(ctx->gpu, ctx->cpu, &available));
    SG_EXPECT(preferred != 0 && (preferred & ~available) == 0,
              "preferred engines %#x are not among the available ones %#x", preferred, available);
    hsa_status_t st = hsa_amd_memory_get_preferred_copy_engine(ctx->gpu, ctx->cpu, NULL);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "NULL mask: status 0x%x", st);
    ok("hsa_amd_memory_get_preferred_copy_engine");
}

static void vmem(const sg_ctx *ctx) {
    const size_t align = 2u << 20, size = 4u << 20;
    void *va = NULL;
    SG_CHECK(hsa_amd_vmem_address_reserve_align(&va, size, 0, align, 0));
    SG_EXPECT(va != NULL && ((uintptr_t)va % align) == 0, "reserved %p is not %zu-aligned", va, align);
    hsa_status_t st = hsa_amd_vmem_address_reserve_align(&va, size, 0, 3000, 0);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "an alignment that is not a power of two: status 0x%x", st);
    ok("hsa_amd_vmem_address_reserve_align");

    hsa_amd_vmem_alloc_handle_t h, again;
    SG_CHECK(hsa_amd_vmem_handle_create(gpu_pool, size, MEMORY_TYPE_NONE, 0, &h));
    SG_CHECK(hsa_amd_vmem_map(va, size, 0, h, 0));
    hsa_amd_memory_access_desc_t desc = {HSA_ACCESS_PERMISSION_RW, ctx->gpu};
    SG_CHECK(hsa_amd_vmem_set_access(va, size, &desc, 1));
    SG_CHECK(hsa_amd_vmem_retain_alloc_handle(&again, (char *)va + 100));
    SG_EXPECT(again.handle == h.handle, "retained %#llx, mapped %#llx", (unsigned long long)again.handle,
              (unsigned long long)h.handle);
    int dummy;
    st = hsa_amd_vmem_retain_alloc_handle(&again, &dummy);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ALLOCATION, "an unmapped address: status 0x%x", st);
    ok("hsa_amd_vmem_retain_alloc_handle");

    hsa_amd_memory_pool_t pool;
    hsa_amd_memory_type_t type;
    SG_CHECK(hsa_amd_vmem_get_alloc_properties_from_handle(h, &pool, &type));
    SG_EXPECT(pool.handle == gpu_pool.handle && type == MEMORY_TYPE_NONE, "properties: pool %#llx type %d",
              (unsigned long long)pool.handle, (int)type);
    ok("hsa_amd_vmem_get_alloc_properties_from_handle");

    /* Two references (create, retain): the first release leaves the memory usable. */
    SG_CHECK(hsa_amd_vmem_handle_release(h));
    memset(va, 0x5c, 4096);
    SG_EXPECT(((volatile uint8_t *)va)[4095] == 0x5c, "mapped memory after one release");
    SG_CHECK(hsa_amd_vmem_unmap(va, size));
    SG_CHECK(hsa_amd_vmem_handle_release(h));
    st = hsa_amd_vmem_handle_release(h);
    SG_EXPECT(st != HSA_STATUS_SUCCESS, "a third release of a handle with two references succeeded");
    SG_CHECK(hsa_amd_vmem_address_free(va, size));
    ok("vmem_references");
}

static void sampler_v2(const sg_ctx *ctx) {
    hsa_ext_sampler_descriptor_v2_t d;
    memset(&d, 0, sizeof d);
    d.coordinate_mode = HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED;
    d.filter_mode = HSA_EXT_SAMPLER_FILTER_MODE_LINEAR;
    d.address_modes[0] = HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT;
    d.address_modes[1] = HSA_EXT_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE;
    d.address_modes[2] = HSA_EXT_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT;
    hsa_ext_sampler_t s;
    SG_CHECK(hsa_ext_sampler_create_v2(ctx->gpu, &d, &s));
    SG_EXPECT(s.handle != 0, "a null sampler handle");
    SG_CHECK(hsa_ext_sampler_destroy(ctx->gpu, s));
    hsa_status_t st = hsa_ext_sampler_create_v2(ctx->gpu, NULL, &s);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "a NULL descriptor: status 0x%x", st);
    ok("hsa_ext_sampler_create_v2");
}

static void system_events(void) {
    SG_CHECK(hsa_amd_register_system_event_handler(on_event, NULL));
    hsa_status_t st = hsa_amd_register_system_event_handler(NULL, NULL);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "a NULL handler: status 0x%x", st);
    ok("hsa_amd_register_system_event_handler");
}

static void queue_info(const sg_ctx *ctx) {
    hsa_queue_t *q = sg_queue_create(ctx, 64);
    hsa_agent_t owner = {0};
    uint64_t doorbell = 0;
    SG_CHECK(hsa_amd_queue_get_info(q, HSA_AMD_QUEUE_INFO_AGENT, &owner));
    SG_EXPECT(owner.handle == ctx->gpu.handle, "the queue's agent %#llx", (unsigned long long)owner.handle);
    SG_CHECK(hsa_amd_queue_get_info(q, HSA_AMD_QUEUE_INFO_DOORBELL_ID, &doorbell));
    SG_EXPECT(doorbell == q->doorbell_signal.handle, "doorbell id %#llx", (unsigned long long)doorbell);
    hsa_status_t st = hsa_amd_queue_get_info(q, (hsa_queue_info_attribute_t)77, &doorbell);
    SG_EXPECT(st == HSA_STATUS_ERROR_INVALID_ARGUMENT, "an unknown attribute: status 0x%x", st);
    SG_CHECK(hsa_queue_destroy(q));
    ok("hsa_amd_queue_get_info");
}

static void wait_all(void) {
    hsa_signal_t s[2] = {sg_signal(0), sg_signal(5)};
    hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_GTE};
    hsa_signal_value_t values[2] = {0, 5};
    hsa_signal_value_t got[2] = {-1, -1};
    uint32_t r = hsa_amd_signal_wait_all(2, s, conds, values, UINT64_MAX, HSA_WAIT_STATE_BLOCKED, got);
    SG_EXPECT(r == 0 && got[0] == 0 && got[1] == 5, "wait_all returned %u, values %lld %lld", r,
              (long long)got[0], (long long)got[1]);
    /* One condition never met: a timeout, reported as -1 (ROCr's contract). */
    values[1] = 6;
    conds[1] = HSA_SIGNAL_CONDITION_EQ;
    uint64_t t0 = sg_now_ns();
    r = hsa_amd_signal_wait_all(2, s, conds, values, 20u * 1000u * 1000u, HSA_WAIT_STATE_BLOCKED, NULL);
    SG_EXPECT(r == UINT32_MAX, "a condition never met: wait_all returned %u", r);
    SG_EXPECT(sg_now_ns() - t0 >= 15u * 1000u * 1000u, "the timeout did not wait");
    SG_CHECK(hsa_signal_destroy(s[0]));
    SG_CHECK(hsa_signal_destroy(s[1]));
    ok("hsa_amd_signal_wait_all");
}

static void fail_closed(void) {
    /* No dmabuf exists in the virtual runtime: an error, never a descriptor. */
    void *p = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(gpu_pool, 4096, 0, &p));
    int dmabuf = -1;
    uint64_t off = 0;
    hsa_status_t st = hsa_amd_portable_export_dmabuf(p, 4096, &dmabuf, &off);
    SG_EXPECT(st != HSA_STATUS_SUCCESS && dmabuf == -1, "dmabuf export: status 0x%x, fd %d", st, dmabuf);
    SG_CHECK(hsa_amd_memory_pool_free(p));
    ok("hsa_amd_portable_export_dmabuf_fails_closed");
}

int main(void) {
    sg_ctx ctx;
    sg_init(&ctx);
    SG_CHECK(hsa_amd_agent_iterate_memory_pools(ctx.gpu, gpu_pool_cb, NULL));
    SG_EXPECT(have_gpu_pool, "no coarse-grained GPU pool");
    scratch_limit(&ctx);
    ais();
    copy_engine(&ctx);
    vmem(&ctx);
    sampler_v2(&ctx);
    system_events();
    queue_info(&ctx);
    wait_all();
    fail_closed();
    SG_EXPECT(events_seen == 0, "a system event handler was called %d times", events_seen);
    SG_CHECK(hsa_shut_down());
    printf("sg: done=1\n");
    return 0;
}
