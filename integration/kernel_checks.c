/* Dispatches checked against the kernels they name. Loads real code objects
 * through the HSA executable API (built by the test: `hipcc --genco` for
 * kernel_checks_kernels.hip, clang's OpenCL front end for the
 * reqd_work_group_size kernel), then submits one valid and one faulty dispatch
 * per rule:
 *
 *   workgroup_size_exceeds_kernel_max      k_max64 (launch bounds 64) with 128
 *   workgroup_size_differs_from_required   k_reqd32 (reqd 32,1,1) with 64
 *   group_segment_size_below_static        k_lds (1024 B static LDS) with 0
 *   private_segment_size_below_static      k_private (static scratch) with 0
 *   kernarg_address_null                   k_args (8 B of kernargs) with NULL
 *   kernel_object_wrong_agent              k_args loaded for GPU 0, queued on GPU 1
 *   unknown_kernel_object (finding)        a fake, never-loaded kernel object
 *
 * Needs two GPU agents (SOFTGPU_TARGET=gfx90a,gfx90a).
 *
 * A third code object built for another target (gfx1030) must be refused at
 * load with HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, as ROCr refuses it.
 *
 *   kernel_checks KERNELS.hsaco REQD.hsaco OTHER_TARGET.hsaco */
#include "common.h"

typedef struct {
    hsa_agent_t gpus[2];
    unsigned n;
} gpus_t;

static hsa_status_t collect_gpus(hsa_agent_t a, void *data) {
    gpus_t *g = (gpus_t *)data;
    hsa_device_type_t t;
    SG_CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &t));
    if (t == HSA_DEVICE_TYPE_GPU && g->n < 2)
        g->gpus[g->n++] = a;
    return HSA_STATUS_SUCCESS;
}

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

static hsa_executable_t load(hsa_agent_t agent, const char *path) {
    size_t size = 0;
    void *bytes = slurp(path, &size);
    hsa_code_object_reader_t reader;
    SG_CHECK(hsa_code_object_reader_create_from_memory(bytes, size, &reader));
    hsa_executable_t exec;
    SG_CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exec));
    SG_CHECK(hsa_executable_load_agent_code_object(exec, agent, reader, NULL, NULL));
    SG_CHECK(hsa_executable_freeze(exec, NULL));
    SG_CHECK(hsa_code_object_reader_destroy(reader));
    free(bytes);
    return exec;
}

typedef struct {
    uint64_t object;
    uint32_t kernarg_size, group, private_size;
} kernel_t;

static kernel_t kernel(hsa_executable_t exec, hsa_agent_t agent, const char *name) {
    hsa_executable_symbol_t sym;
    SG_CHECK(hsa_executable_get_symbol_by_name(exec, name, &agent, &sym));
    kernel_t k;
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                            &k.kernarg_size));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &k.group));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                            &k.private_size));
    SG_EXPECT(k.object != 0 && (k.object & 63) == 0, "%s: kernel object %#llx", name, (unsigned long long)k.object);
    printf("sg: %s=%#llx\n", name, (unsigned long long)k.object);
    return k;
}

/* Submit one dispatch and wait: a valid one completes (1 -> 0); a rejected one
 * must leave its signal at 1 while the read index still moves past it. */
static void submit(const sg_ctx *ctx, hsa_queue_t *q, kernel_t k, uint16_t wg, uint32_t group, uint32_t priv,
                   void *kernarg, bool expect_valid, const char *what) {
    hsa_signal_t s = sg_signal(1);
    sg_dispatch d = sg_dispatch_1d(wg, wg, k.object, kernarg, s);
    d.group_segment_size = group;
    d.private_segment_size = priv;
    uint64_t index = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    if (expect_valid) {
        sg_wait_complete(ctx, s, what);
    } else {
        sg_wait_read_index(q, index + 1, what);
        SG_EXPECT(hsa_signal_load_scacquire(s) == 1, "%s: a rejected dispatch changed its signal", what);
    }
    SG_CHECK(hsa_signal_destroy(s));
    printf("%s: %s\n", what, expect_valid ? "validated" : "rejected");
}

int main(int argc, char **argv) {
    SG_EXPECT(argc == 4, "usage: kernel_checks KERNELS.hsaco REQD.hsaco OTHER_TARGET.hsaco");
    sg_ctx c;
    sg_ctx *ctx = &c;
    sg_init(ctx);
    gpus_t g = {{{0}}, 0};
    SG_CHECK(hsa_iterate_agents(collect_gpus, &g));
    SG_EXPECT(g.n == 2, "needs two GPU agents (SOFTGPU_TARGET=gfx90a,gfx90a), found %u", g.n);

    {
        size_t size = 0;
        void *bytes = slurp(argv[3], &size);
        hsa_code_object_reader_t reader;
        SG_CHECK(hsa_code_object_reader_create_from_memory(bytes, size, &reader));
        hsa_executable_t exec;
        SG_CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exec));
        hsa_status_t st = hsa_executable_load_agent_code_object(exec, g.gpus[0], reader, NULL, NULL);
        SG_EXPECT(st == HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
                  "loading a gfx1030 code object on a gfx90a agent returned 0x%x", (unsigned)st);
        SG_CHECK(hsa_executable_destroy(exec));
        SG_CHECK(hsa_code_object_reader_destroy(reader));
        free(bytes);
        printf("other-target code object refused with HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS\n");
    }
    hsa_executable_t e0 = load(g.gpus[0], argv[1]);
    hsa_executable_t er = load(g.gpus[0], argv[2]);
    kernel_t args = kernel(e0, g.gpus[0], "k_args.kd");
    kernel_t max64 = kernel(e0, g.gpus[0], "k_max64.kd");
    kernel_t lds = kernel(e0, g.gpus[0], "k_lds.kd");
    kernel_t priv = kernel(e0, g.gpus[0], "k_private.kd");
    kernel_t reqd = kernel(er, g.gpus[0], "k_reqd32.kd");
    SG_EXPECT(lds.group >= 1024, "k_lds reports %u bytes of static LDS", lds.group);
    SG_EXPECT(priv.private_size > 0, "k_private reports no static scratch");
    SG_EXPECT(args.kernarg_size > 0, "k_args reports no kernargs");

    void *ka = sg_kernarg_alloc(ctx, 256);
    hsa_queue_t *q0 = sg_queue_create(ctx, 64);

    /* Each rule: valid first, then the faulty dispatch. */
    submit(ctx, q0, max64, 64, 0, 0, ka, true, "k_max64 wg 64");
    submit(ctx, q0, max64, 128, 0, 0, ka, false, "k_max64 wg 128");
    submit(ctx, q0, reqd, 32, 0, 0, ka, true, "k_reqd32 wg 32");
    submit(ctx, q0, reqd, 16, 0, 0, ka, false, "k_reqd32 wg 16");
    submit(ctx, q0, lds, 64, lds.group, 0, ka, true, "k_lds group = static");
    submit(ctx, q0, lds, 64, 0, 0, ka, false, "k_lds group 0");
    submit(ctx, q0, priv, 64, 0, priv.private_size, ka, true, "k_private private = static");
    submit(ctx, q0, priv, 64, 0, 0, ka, false, "k_private private 0");
    submit(ctx, q0, args, 64, 0, 0, ka, true, "k_args with kernargs");
    submit(ctx, q0, args, 64, 0, 0, NULL, false, "k_args kernarg NULL");
    kernel_t fake = {sg_kernel_object(0), 0, 0, 0};
    submit(ctx, q0, fake, 64, 0, 0, ka, true, "unknown kernel object");

    /* A queue on the second GPU, dispatching a kernel loaded for the first. */
    hsa_queue_t *q1 = NULL;
    SG_CHECK(hsa_queue_create(g.gpus[1], 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q1));
    printf("sg: queue1_id=%llu\n", (unsigned long long)q1->id);
    submit(ctx, q1, args, 64, 0, 0, ka, false, "k_args on the other GPU");

    SG_CHECK(hsa_queue_destroy(q1));
    SG_CHECK(hsa_queue_destroy(q0));
    sg_kernarg_free(ka);
    SG_CHECK(hsa_executable_destroy(e0));
    SG_CHECK(hsa_executable_destroy(er));
    SG_CHECK(hsa_shut_down());
    printf("sg: packets=12\n");
    return 0;
}
