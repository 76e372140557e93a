/* Where a dispatch's kernel arguments may be read from. Loads k_args (one
 * `int *` argument, from kernel_checks_kernels.hip) through the HSA executable
 * API and dispatches it four times, its kernarg block in:
 *
 *   1. kernarg_pool   the kernarg pool (a CPU agent's GLOBAL pool, KERNARG_INIT),
 *                     holding a pointer to device memory
 *   2. device_pool    a GPU agent's GLOBAL pool (device memory)
 *   3. no_access      a PROT_NONE mapping: a read of it kills the process
 *   4. freed          a kernarg-pool block freed before the dispatch
 *
 * The harness checks which blocks were captured in each mode: SoftGPU reads
 * only memory it knows the CPU may read (its own allocations in virtual mode,
 * the real runtime's host pools in intercept and observe mode).
 *
 *   kargs_readable KERNELS.hsaco */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "common.h"

#include <sys/mman.h>

static void *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    SG_EXPECT(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc((size_t)n);
    SG_EXPECT(buf && fread(buf, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static hsa_status_t device_pool_cb(hsa_amd_memory_pool_t pool, void *data) {
    hsa_amd_segment_t segment;
    SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    bool alloc = false;
    SG_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
    if (segment == HSA_AMD_SEGMENT_GLOBAL && alloc) {
        *(hsa_amd_memory_pool_t *)data = pool;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static void dispatch(const sg_ctx *ctx, hsa_queue_t *q, uint64_t object, const void *kernarg, const char *what) {
    hsa_signal_t s = sg_signal(1);
    sg_dispatch d = sg_dispatch_1d(64, 64, object, kernarg, s);
    sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    sg_wait_complete(ctx, s, what);
    SG_CHECK(hsa_signal_destroy(s));
    printf("sg: %s=%p\n", what, kernarg);
}

int main(int argc, char **argv) {
    SG_EXPECT(argc == 2, "usage: kargs_readable KERNELS.hsaco");
    sg_ctx c;
    sg_ctx *ctx = &c;
    sg_init(ctx);

    size_t size = 0;
    void *bytes = slurp(argv[1], &size);
    hsa_code_object_reader_t reader;
    SG_CHECK(hsa_code_object_reader_create_from_memory(bytes, size, &reader));
    hsa_executable_t exec;
    SG_CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exec));
    SG_CHECK(hsa_executable_load_agent_code_object(exec, ctx->gpu, reader, NULL, NULL));
    SG_CHECK(hsa_executable_freeze(exec, NULL));
    SG_CHECK(hsa_code_object_reader_destroy(reader));
    free(bytes);
    hsa_executable_symbol_t sym;
    SG_CHECK(hsa_executable_get_symbol_by_name(exec, "k_args.kd", &ctx->gpu, &sym));
    uint64_t object = 0;
    uint32_t kernarg_size = 0;
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                            &kernarg_size));
    SG_EXPECT(kernarg_size >= 8 && kernarg_size <= 4096, "k_args has %u bytes of kernargs", kernarg_size);

    hsa_amd_memory_pool_t device_pool = {0};
    hsa_status_t st = hsa_amd_agent_iterate_memory_pools(ctx->gpu, device_pool_cb, &device_pool);
    SG_EXPECT((st == HSA_STATUS_SUCCESS || st == HSA_STATUS_INFO_BREAK) && device_pool.handle != 0,
              "the GPU agent has no GLOBAL pool to allocate from (0x%x)", (unsigned)st);
    void *out = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(device_pool, 4096, 0, &out));
    printf("sg: out=%p\n", out);

    hsa_queue_t *q = sg_queue_create(ctx, 64);

    /* 1. The kernarg pool: readable host memory. */
    void *block = sg_kernarg_alloc(ctx, kernarg_size);
    memcpy(block, &out, sizeof out);
    dispatch(ctx, q, object, block, "kernarg_pool");

    /* 2. Device memory, filled through the runtime (the CPU may not touch it). */
    void *dev_block = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(device_pool, 4096, 0, &dev_block));
    SG_CHECK(hsa_memory_copy(dev_block, block, kernarg_size));
    dispatch(ctx, q, object, dev_block, "device_pool");

    /* 3. Memory nobody may read. */
    void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    SG_EXPECT(none != MAP_FAILED, "mmap PROT_NONE failed");
    dispatch(ctx, q, object, none, "no_access");

    /* 4. A kernarg block freed before the dispatch. */
    void *gone = sg_kernarg_alloc(ctx, kernarg_size);
    memcpy(gone, &out, sizeof out);
    sg_kernarg_free(gone);
    dispatch(ctx, q, object, gone, "freed");

    SG_CHECK(hsa_queue_destroy(q));
    munmap(none, 4096);
    sg_kernarg_free(block);
    SG_CHECK(hsa_amd_memory_pool_free(dev_block));
    SG_CHECK(hsa_amd_memory_pool_free(out));
    SG_CHECK(hsa_executable_destroy(exec));
    printf("sg: done=1\n");
    return 0;
}
