/*
 * The queue error contract, as ROCr keeps it. Each defective packet goes on a
 * queue of its own, created with an error callback (as rocrtst's
 * Queue_Validation tests do), its completion signal at 1. For each one:
 *
 *   - the read index moves past it and its completion signal stays 1 (the
 *     diagnostic contract);
 *   - the queue's error callback is called exactly once, with the status ROCr
 *     reports for that defect, the queue as `source`, the `data` given to
 *     hsa_queue_create, and on a thread that is not the one that rang the
 *     doorbell.
 *
 * Then: a valid dispatch after a reject still completes on the same queue, with
 * no further callback (ROCr would have stopped the queue: see
 * docs/aql-diagnostic-contract.md); a queue destroyed right after the doorbell
 * store has had its callback called by the time hsa_queue_destroy returns; a
 * queue with no callback rejects quietly. And the kernarg segment alignment of
 * a kernel, which ROCr reports as 16.
 *
 * The case order is the packet order; tests/integration_raw_hsa.rs expects the
 * same cases and statuses.
 *
 *   queue_errors KERNELS.hsaco   (k_args from integration/kernel_checks_kernels.hip)
 */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>

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

/* What one queue's error callback saw. */
typedef struct {
    atomic_uint calls;
    hsa_status_t status;
    hsa_queue_t *source;
    pthread_t thread;
} seen_t;

static void on_queue_error(hsa_status_t status, hsa_queue_t *source, void *data) {
    seen_t *seen = (seen_t *)data;
    if (atomic_load(&seen->calls) == 0) {
        seen->status = status;
        seen->source = source;
        seen->thread = pthread_self();
    }
    atomic_fetch_add(&seen->calls, 1);
}

enum kind { DISPATCH, RAW_HEADER, BARRIER_AND, AGENT_DISPATCH };

typedef struct {
    const char *name;
    hsa_status_t expected;
    enum kind kind;
    uint16_t header;
    sg_dispatch d;
    hsa_signal_t dep; /* BARRIER_AND */
} error_case;

static hsa_queue_t *queue_with_callback(const sg_ctx *ctx, seen_t *seen) {
    hsa_queue_t *q = NULL;
    SG_CHECK(hsa_queue_create(ctx->gpu, 64, HSA_QUEUE_TYPE_SINGLE, on_queue_error, seen, UINT32_MAX, UINT32_MAX,
                              &q));
    SG_EXPECT(q != NULL, "hsa_queue_create returned no queue");
    return q;
}

/* Publish one packet of `c` with completion signal `s`, ring; return its index. */
static uint64_t submit(hsa_queue_t *q, const error_case *c, hsa_signal_t s) {
    uint64_t index = sg_reserve(q, 1);
    void *slot = sg_slot(q, index);
    switch (c->kind) {
    case DISPATCH: {
        sg_dispatch d = c->d;
        d.completion_signal = s;
        sg_put_dispatch(q, index, c->header, &d);
        break;
    }
    case RAW_HEADER: {
        /* rocrtst's invalid packet: a dispatch body, then a header of 0xFFFF. */
        sg_dispatch d = c->d;
        d.completion_signal = s;
        sg_write_dispatch_body(slot, &d);
        sg_publish(slot, c->header, d.setup);
        break;
    }
    case BARRIER_AND:
        sg_put_barrier(q, index, c->header, &c->dep, 1, s);
        break;
    case AGENT_DISPATCH: {
        hsa_agent_dispatch_packet_t *p = (hsa_agent_dispatch_packet_t *)slot;
        sg_clear_body(slot);
        p->completion_signal = s;
        sg_publish(slot, c->header, 0);
        break;
    }
    }
    sg_ring(q, index);
    return index;
}

/* Wait (at most SG_COMPLETE_TIMEOUT_MS) for `seen` to have `n` calls. */
static void wait_calls(const seen_t *seen, unsigned n, const char *what) {
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
    while (atomic_load(&seen->calls) < n) {
        SG_EXPECT(sg_now_ns() < deadline, "%s: the queue's error callback was not called within %u ms", what,
                  SG_COMPLETE_TIMEOUT_MS);
        sg_sleep_us(100);
    }
}

int main(int argc, char **argv) {
    SG_EXPECT(argc == 2, "usage: queue_errors KERNELS.hsaco");
    sg_ctx c;
    sg_ctx *ctx = &c;
    sg_init(ctx);

    /* A real kernel, as rocrtst uses one. */
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
    uint32_t kernarg_size = 0, kernarg_align = 0;
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                            &kernarg_size));
    SG_CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
                                            &kernarg_align));
    printf("sg: kernarg_align=%u\n", kernarg_align);
    /* rocrtst's loader: `kern.kernarg_align >= 16 && "Reported kernarg size is too small."`;
     * ROCr reports 16 for every code object v3+ kernel. */
    SG_EXPECT(kernarg_align == 16, "k_args: kernarg segment alignment %u, ROCr reports 16", kernarg_align);
    void *kernarg = sg_kernarg_alloc(ctx, kernarg_size < 16 ? 16 : kernarg_size);

    const uint16_t H = SG_DISPATCH_HEADER;
    sg_dispatch good = sg_dispatch_1d(64, 64, object, kernarg, SG_NO_SIGNAL);
    error_case cases[16];
    unsigned n = 0;
    sg_dispatch d;

    /* rocrtst Queue_Validation_InvalidDimension: setup = 4. */
    d = good;
    d.setup = 4;
    cases[n++] = (error_case){"dimensions", HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, DISPATCH, H, d, {0}};
    /* rocrtst Queue_Validation_InvalidGroupMemory: group_segment_size = (uint32_t)-1. */
    d = good;
    d.group_segment_size = UINT32_MAX;
    cases[n++] = (error_case){"group_segment", HSA_STATUS_ERROR_INVALID_ALLOCATION, DISPATCH, H, d, {0}};
    /* rocrtst Queue_Validation_InvalidKernelObject: kernel_object = 0. */
    d = good;
    d.kernel_object = 0;
    cases[n++] = (error_case){"kernel_object", HSA_STATUS_ERROR_INVALID_CODE_OBJECT, DISPATCH, H, d, {0}};
    /* rocrtst Queue_Validation_InvalidPacket: header 0xFFFF (type 255). */
    cases[n++] = (error_case){"packet_type", HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, RAW_HEADER, 0xFFFF, good, {0}};
    /* rocrtst Queue_Validation_InvalidWorkGroupSize: a workgroup of 65535 in one dimension. */
    d = good;
    d.workgroup[0] = UINT16_MAX;
    cases[n++] = (error_case){"workgroup_size", HSA_STATUS_ERROR_INVALID_ARGUMENT, DISPATCH, H, d, {0}};
    /* ROCr's table: a vendor-specific packet it does not know. */
    d = good;
    cases[n++] = (error_case){"vendor_specific", HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, RAW_HEADER,
                              sg_header(HSA_PACKET_TYPE_VENDOR_SPECIFIC, 0, 0, 0), d, {0}};
    /* ROCr's table: an unsupported packet type (agent dispatch on a GPU queue). */
    cases[n++] = (error_case){"agent_dispatch", HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, AGENT_DISPATCH,
                              sg_header(HSA_PACKET_TYPE_AGENT_DISPATCH, 0, HSA_FENCE_SCOPE_SYSTEM,
                                        HSA_FENCE_SCOPE_SYSTEM),
                              good, {0}};
    /* The shim's own: a barrier on a signal handle that is not a signal. */
    cases[n++] = (error_case){"dependency_signal", HSA_STATUS_ERROR_INVALID_SIGNAL, BARRIER_AND,
                              SG_BARRIER_AND_HEADER, good, {0x5a5a5a5a5a5a5a40ull}};
    /* Several defects: ROCr reports the first class it tests for (the code object before the
     * packet format of the invalid fence scope). */
    d = good;
    d.kernel_object = 0;
    cases[n++] = (error_case){"code_object_before_format", HSA_STATUS_ERROR_INVALID_CODE_OBJECT, DISPATCH,
                              sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, 3, HSA_FENCE_SCOPE_SYSTEM), d, {0}};
    printf("sg: cases=%u\n", n);

    pthread_t me = pthread_self();
    seen_t seen[16];
    for (unsigned i = 0; i < n; i++) {
        const error_case *e = &cases[i];
        atomic_init(&seen[i].calls, 0);
        hsa_queue_t *q = queue_with_callback(ctx, &seen[i]);
        hsa_signal_t s = sg_signal(1);
        uint64_t index = submit(q, e, s);
        sg_wait_read_index(q, index + 1, e->name);
        sg_expect_unchanged(ctx, s, 1, e->name);
        wait_calls(&seen[i], 1, e->name);
        SG_EXPECT(seen[i].status == e->expected, "%s: the error callback got status 0x%x, ROCr reports 0x%x",
                  e->name, (unsigned)seen[i].status, (unsigned)e->expected);
        SG_EXPECT(seen[i].source == q, "%s: the error callback got queue %p, expected %p", e->name,
                  (void *)seen[i].source, (void *)q);
        SG_EXPECT(!pthread_equal(seen[i].thread, me),
                  "%s: the error callback ran on the thread that rang the doorbell", e->name);
        printf("sg: case_%u=%s status=0x%x\n", i, e->name, (unsigned)seen[i].status);

        if (i == 0) {
            /* After a reject, the shim goes on (ROCr would have stopped the queue): a valid
             * dispatch completes, and calls no callback. */
            hsa_signal_t ok = sg_signal(1);
            sg_dispatch v = good;
            v.completion_signal = ok;
            sg_submit_dispatch(q, H, &v);
            sg_wait_complete(ctx, ok, "valid dispatch after a reject");
            SG_CHECK(hsa_signal_destroy(ok));
            printf("sg: after_reject=completed\n");
        }
        sg_sleep_us(20000);
        SG_EXPECT(atomic_load(&seen[i].calls) == 1, "%s: the error callback was called %u times, expected once",
                  e->name, atomic_load(&seen[i].calls));
        SG_CHECK(hsa_queue_destroy(q));
        SG_CHECK(hsa_signal_destroy(s));
    }

    /* Destroyed right after the doorbell store: the callback has been called by the time
     * hsa_queue_destroy returns (ROCr's destructor waits for its error handler). */
    seen_t quick;
    atomic_init(&quick.calls, 0);
    hsa_queue_t *q = queue_with_callback(ctx, &quick);
    hsa_signal_t s = sg_signal(1);
    submit(q, &cases[2], s);
    SG_CHECK(hsa_queue_destroy(q));
    SG_EXPECT(atomic_load(&quick.calls) == 1, "queue destroyed after a reject: %u callback calls, expected 1",
              atomic_load(&quick.calls));
    SG_EXPECT(quick.status == HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "destroyed queue: status 0x%x",
              (unsigned)quick.status);
    printf("sg: destroyed_after_reject=called\n");

    /* No callback: the reject is only recorded. */
    hsa_queue_t *quiet = NULL;
    SG_CHECK(hsa_queue_create(ctx->gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &quiet));
    uint64_t index = submit(quiet, &cases[2], s);
    sg_wait_read_index(quiet, index + 1, "queue without a callback");
    SG_CHECK(hsa_queue_destroy(quiet));
    SG_CHECK(hsa_signal_destroy(s));

    sg_kernarg_free(kernarg);
    SG_CHECK(hsa_executable_destroy(exec));
    SG_CHECK(hsa_shut_down());
    printf("sg: done=1\n");
    return 0;
}
