/* Bad input that once hurt the host program or told it something false, each
 * probe chosen by name on the command line (tests/integration_raw_hsa.rs runs
 * one process per probe). Each prints `sg: key=value` facts and exits 0 only
 * when the runtime refused the bad input the way the test expects.
 *
 *   wait_any_huge     hsa_amd_signal_wait_any with UINT32_MAX signals
 *   copy_huge_deps    hsa_amd_memory_async_copy with UINT32_MAX dependencies
 *   dead_signal       waits, loads, exchanges and CAS on a destroyed signal,
 *                     10,000 times (the test counts the log lines)
 *   stale_signal      a destroyed signal's handle after newer signals exist
 *   stale_queue       a destroyed queue's pointer after a newer queue exists
 *   forged_queue      index operations on a pointer that is no queue
 *   doorbell_completion  a dispatch whose completion signal is its queue's
 *                     own doorbell
 *   locked_copy       hsa_memory_copy from and to the agent address of locked
 *                     memory
 *   queue_cycles      N queue create/destroy cycles; prints VmRSS before and after
 */
#include "common.h"

#include <stdio.h>

static void expect_status(hsa_status_t got, hsa_status_t want, const char *what) {
    SG_EXPECT(got == want, "%s: status 0x%x, expected 0x%x", what, (unsigned)got, (unsigned)want);
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    SG_EXPECT(f != NULL, "cannot open /proc/self/status");
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    SG_EXPECT(kib > 0, "no VmRSS line");
    return kib;
}

static void wait_any_huge(void) {
    hsa_signal_t s = sg_signal(1);
    hsa_signal_condition_t cond = HSA_SIGNAL_CONDITION_EQ;
    hsa_signal_value_t val = 0, sat = 42;
    /* Arrays of one element: a runtime that believed the count would read past them. */
    uint32_t r = hsa_amd_signal_wait_any(UINT32_MAX, &s, &cond, &val, 1000, HSA_WAIT_STATE_BLOCKED, &sat);
    SG_EXPECT(r == UINT32_MAX, "wait_any(UINT32_MAX) returned %u, expected UINT32_MAX (refused)", r);
    SG_EXPECT(sat == 42, "wait_any wrote a satisfying value for a refused call");
    SG_CHECK(hsa_signal_destroy(s));
    printf("sg: wait_any_huge=refused\n");
}

static void copy_huge_deps(const sg_ctx *ctx) {
    char a[16] = "source", b[16] = {0};
    hsa_signal_t done = sg_signal(1);
    hsa_signal_t dep = sg_signal(0);
    hsa_status_t st =
        hsa_amd_memory_async_copy(b, ctx->cpu, a, ctx->cpu, sizeof a, UINT32_MAX, &dep, done);
    SG_EXPECT(st != HSA_STATUS_SUCCESS, "a copy with UINT32_MAX dependencies was accepted");
    SG_EXPECT(hsa_signal_load_scacquire(done) == 1, "the refused copy's completion signal moved");
    SG_CHECK(hsa_signal_destroy(done));
    SG_CHECK(hsa_signal_destroy(dep));
    printf("sg: copy_huge_deps=0x%x\n", (unsigned)st);
}

static void dead_signal(void) {
    hsa_signal_t s = sg_signal(1);
    SG_CHECK(hsa_signal_destroy(s));
    uint64_t t0 = sg_now_ns();
    unsigned zero_waits = 0, zero_loads = 0, cas_success = 0;
    for (int i = 0; i < 10000; i++) {
        /* HIP's own wait: "until below 1". A dead signal must never read as done. */
        hsa_signal_value_t w = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, 1000, HSA_WAIT_STATE_BLOCKED);
        if (w < 1)
            zero_waits++;
        hsa_signal_value_t e = hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_EQ, 0, 1000, HSA_WAIT_STATE_ACTIVE);
        if (e == 0)
            zero_waits++;
        if (hsa_signal_load_scacquire(s) == 0 || hsa_signal_load_relaxed(s) < 1)
            zero_loads++;
        if (hsa_signal_cas_scacq_screl(s, 5, 6) == 5)
            cas_success++;
    }
    uint64_t ms = (sg_now_ns() - t0) / 1000000u;
    SG_EXPECT(zero_waits == 0, "%u waits on a destroyed signal reported it satisfied", zero_waits);
    SG_EXPECT(zero_loads == 0, "%u loads of a destroyed signal read as completed", zero_loads);
    SG_EXPECT(cas_success == 0, "%u CAS on a destroyed signal reported success", cas_success);
    printf("sg: dead_signal=refused\n");
    printf("sg: dead_signal_ms=%llu\n", (unsigned long long)ms);
}

static void stale_signal(void) {
    hsa_signal_t old = sg_signal(7);
    SG_CHECK(hsa_signal_destroy(old));
    hsa_signal_t fresh[64];
    for (int i = 0; i < 64; i++) {
        fresh[i] = sg_signal(100 + i);
        SG_EXPECT(fresh[i].handle != old.handle, "a new signal got the destroyed signal's handle");
    }
    /* The stale handle acts on nothing. */
    expect_status(hsa_signal_destroy(old), HSA_STATUS_ERROR_INVALID_SIGNAL, "destroy a stale handle");
    hsa_signal_store_screlease(old, 0);
    hsa_signal_subtract_screlease(old, 1);
    for (int i = 0; i < 64; i++) {
        hsa_signal_value_t v = hsa_signal_load_scacquire(fresh[i]);
        SG_EXPECT(v == 100 + i, "signal %d changed to %lld through a stale handle", i, (long long)v);
        SG_CHECK(hsa_signal_destroy(fresh[i]));
    }
    printf("sg: stale_signal=refused\n");
}

static void stale_queue(const sg_ctx *ctx) {
    hsa_queue_t *old = sg_queue_create(ctx, 64);
    SG_CHECK(hsa_queue_destroy(old));
    hsa_queue_t *fresh = sg_queue_create(ctx, 64);
    SG_EXPECT(fresh != old, "a new queue got the destroyed queue's hsa_queue_t*");
    expect_status(hsa_queue_destroy(old), HSA_STATUS_ERROR_INVALID_QUEUE, "destroy a stale queue");
    uint64_t idx = hsa_queue_add_write_index_screlease(old, 1);
    SG_EXPECT(idx == UINT64_MAX, "add_write_index on a stale queue returned %llu", (unsigned long long)idx);
    SG_EXPECT(hsa_queue_load_write_index_relaxed(fresh) == 0, "the stale pointer moved the new queue's write index");
    SG_CHECK(hsa_queue_destroy(fresh));
    printf("sg: stale_queue=refused\n");
}

static void forged_queue(void) {
    static uint8_t fake[512] __attribute__((aligned(64)));
    hsa_queue_t *q = (hsa_queue_t *)fake;
    uint64_t a = hsa_queue_add_write_index_scacq_screl(q, 1);
    uint64_t b = hsa_queue_add_write_index_relaxed(q, 1);
    SG_EXPECT(a == UINT64_MAX && b == UINT64_MAX,
              "add_write_index on a forged queue handed out slots %llu and %llu", (unsigned long long)a,
              (unsigned long long)b);
    uint64_t c = hsa_queue_cas_write_index_relaxed(q, 0, 1);
    SG_EXPECT(c != 0, "CAS on a forged queue reported success");
    printf("sg: forged_queue=refused\n");
}

static void doorbell_completion(const sg_ctx *ctx) {
    hsa_queue_t *q = sg_queue_create(ctx, 64);
    hsa_signal_t done = sg_signal(1);
    sg_print_kernel_objects();
    /* First a valid dispatch, so the doorbell's value is a known index. */
    sg_dispatch ok = sg_dispatch_1d(64, 64, sg_kernel_object(0), NULL, done);
    sg_submit_dispatch(q, SG_DISPATCH_HEADER, &ok);
    sg_wait_complete(ctx, done, "the valid dispatch");
    hsa_signal_value_t before = hsa_signal_load_scacquire(q->doorbell_signal);
    sg_dispatch bad = sg_dispatch_1d(64, 64, sg_kernel_object(0), NULL, q->doorbell_signal);
    uint64_t index = sg_submit_dispatch(q, SG_DISPATCH_HEADER, &bad);
    sg_wait_read_index(q, index + 1, "the doorbell-completion dispatch");
    hsa_signal_value_t after = hsa_signal_load_scacquire(q->doorbell_signal);
    SG_EXPECT(after == (hsa_signal_value_t)index,
              "the doorbell holds %lld after the packet, not the index %llu the program rang (before: %lld)",
              (long long)after, (unsigned long long)index, (long long)before);
    SG_CHECK(hsa_signal_destroy(done));
    SG_CHECK(hsa_queue_destroy(q));
    printf("sg: doorbell_completion=refused\n");
}

static void locked_copy(const sg_ctx *ctx) {
    (void)ctx;
    static char host[8192];
    static char out[8192];
    for (unsigned i = 0; i < sizeof host; i++)
        host[i] = (char)(i * 7 + 1);
    void *agent = NULL;
    SG_CHECK(hsa_amd_memory_lock(host + 100, 5000, NULL, 0, &agent));
    SG_EXPECT(agent != NULL && agent != (void *)(host + 100), "lock returned %p", agent);
    /* From the agent address (what HIP hands its copies) to ordinary memory. */
    SG_CHECK(hsa_memory_copy(out, agent, 5000));
    SG_EXPECT(memcmp(out, host + 100, 5000) == 0, "copy from the locked agent address moved the wrong bytes");
    /* And into it. */
    memset(out, 0x5a, 64);
    SG_CHECK(hsa_memory_copy((char *)agent + 8, out, 64));
    for (int i = 0; i < 64; i++)
        SG_EXPECT(host[108 + i] == 0x5a, "copy to the locked agent address missed byte %d", i);
    SG_CHECK(hsa_amd_memory_unlock(host + 100));
    printf("sg: locked_copy=ok\n");
}

static void queue_cycles(const sg_ctx *ctx, long n) {
    /* Warm up (first queue, capture rings, logging), then measure. */
    for (int i = 0; i < 200; i++)
        SG_CHECK(hsa_queue_destroy(sg_queue_create(ctx, 64)));
    long before = rss_kib();
    for (long i = 0; i < n; i++) {
        hsa_queue_t *q = NULL;
        SG_CHECK(hsa_queue_create(ctx->gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
        SG_CHECK(hsa_queue_destroy(q));
    }
    long after = rss_kib();
    printf("sg: rss_before_kib=%ld\n", before);
    printf("sg: rss_after_kib=%ld\n", after);
}

int main(int argc, char **argv) {
    SG_EXPECT(argc >= 2, "usage: probes NAME [ARG]");
    sg_ctx ctx;
    sg_init(&ctx);
    const char *p = argv[1];
    if (!strcmp(p, "wait_any_huge"))
        wait_any_huge();
    else if (!strcmp(p, "copy_huge_deps"))
        copy_huge_deps(&ctx);
    else if (!strcmp(p, "dead_signal"))
        dead_signal();
    else if (!strcmp(p, "stale_signal"))
        stale_signal();
    else if (!strcmp(p, "stale_queue"))
        stale_queue(&ctx);
    else if (!strcmp(p, "forged_queue"))
        forged_queue();
    else if (!strcmp(p, "doorbell_completion"))
        doorbell_completion(&ctx);
    else if (!strcmp(p, "locked_copy"))
        locked_copy(&ctx);
    else if (!strcmp(p, "queue_cycles"))
        queue_cycles(&ctx, argc > 2 ? atol(argv[2]) : 20000);
    else
        SG_FAIL("unknown probe %s", p);
    SG_CHECK(hsa_shut_down());
    printf("sg: done=1\n");
    return 0;
}
