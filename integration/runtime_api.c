/* The virtual runtime's own semantics, through the public HSA API: lifecycle
 * reference counting, every signal operation family, waits with conditions and
 * timeouts, async handlers (run on a runtime thread, re-arming themselves),
 * pools and allocation, queue argument checks, forged handles, and a
 * fail-closed entry point. No packet is submitted except one that a handler
 * releases, to show handlers and doorbells interleave. */
#include "common.h"

#include <pthread.h>

static void expect_status(hsa_status_t got, hsa_status_t want, const char *what) {
    SG_EXPECT(got == want, "%s: status 0x%x, expected 0x%x", what, (unsigned)got, (unsigned)want);
}

/* ---- async handlers ---- */

typedef struct {
    hsa_signal_t signal;
    int calls;
    hsa_signal_value_t last_value;
    pthread_t thread;
} handler_state;

/* Fires each time the signal drops below 5, lowers nothing itself, and re-arms
 * until it has run three times. */
static bool counting_handler(hsa_signal_value_t value, void *arg) {
    handler_state *h = (handler_state *)arg;
    h->thread = pthread_self();
    h->last_value = value;
    __atomic_add_fetch(&h->calls, 1, __ATOMIC_SEQ_CST);
    /* Put the value back up so the condition is false again, then re-arm. */
    hsa_signal_store_screlease(h->signal, 10);
    return __atomic_load_n(&h->calls, __ATOMIC_SEQ_CST) < 3;
}

typedef struct {
    hsa_signal_t watch;
    hsa_signal_t second;
    int registered_from_handler;
} chain_state;

static bool final_handler(hsa_signal_value_t value, void *arg) {
    (void)value;
    chain_state *c = (chain_state *)arg;
    __atomic_store_n(&c->registered_from_handler, 2, __ATOMIC_SEQ_CST);
    return false;
}

/* Registers a new handler from inside a handler (no runtime lock may be held). */
static bool chaining_handler(hsa_signal_value_t value, void *arg) {
    (void)value;
    chain_state *c = (chain_state *)arg;
    hsa_status_t st = hsa_amd_signal_async_handler(c->second, HSA_SIGNAL_CONDITION_EQ, 0, final_handler, c);
    __atomic_store_n(&c->registered_from_handler, st == HSA_STATUS_SUCCESS ? 1 : -1, __ATOMIC_SEQ_CST);
    return false;
}

static void wait_int(const int *p, int want, const char *what) {
    uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
    while (__atomic_load_n(p, __ATOMIC_SEQ_CST) != want) {
        SG_EXPECT(sg_now_ns() < deadline, "%s: value %d, expected %d", what, __atomic_load_n(p, __ATOMIC_SEQ_CST),
                  want);
        sg_sleep_us(100);
    }
}

/* ---- a second thread waking a waiter ---- */

typedef struct {
    hsa_signal_t s;
    unsigned delay_us;
} waker_arg;

static void *waker(void *p) {
    waker_arg *w = (waker_arg *)p;
    sg_sleep_us(w->delay_us);
    hsa_signal_subtract_screlease(w->s, 1);
    return NULL;
}

int main(void) {
    /* Before hsa_init, calls report NOT_INITIALIZED instead of crashing. */
    hsa_signal_t early;
    expect_status(hsa_signal_create(1, 0, NULL, &early), HSA_STATUS_ERROR_NOT_INITIALIZED, "signal_create before init");
    expect_status(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED, "shut_down before init");

    sg_ctx c;
    sg_ctx *ctx = &c;
    sg_init(ctx);

    /* Reference counting: a second init needs a second shut_down. */
    SG_CHECK(hsa_init());
    SG_CHECK(hsa_shut_down());
    uint16_t major = 0;
    SG_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
    SG_EXPECT(major == 1, "HSA version major %u", major);
    printf("lifecycle: init/shut_down are reference counted\n");

    /* Timestamps move forward in a 1 GHz domain. */
    uint64_t t0 = 0, t1 = 0;
    SG_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0));
    sg_sleep_us(2000);
    SG_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1));
    SG_EXPECT(ctx->timestamp_frequency == 1000000000u, "timestamp frequency %llu",
              (unsigned long long)ctx->timestamp_frequency);
    SG_EXPECT(t1 - t0 >= 2000000u && t1 - t0 < 2000000000u, "timestamps advanced by %llu ticks over 2 ms",
              (unsigned long long)(t1 - t0));

    /* ---- signal operations: every family ---- */
    hsa_signal_t s = sg_signal(5);
    SG_EXPECT(hsa_signal_load_relaxed(s) == 5, "load_relaxed");
    hsa_signal_add_relaxed(s, 3);
    SG_EXPECT(hsa_signal_load_scacquire(s) == 8, "add");
    hsa_signal_subtract_scacq_screl(s, 2);
    SG_EXPECT(hsa_signal_load_acquire(s) == 6, "subtract");
    hsa_signal_and_screlease(s, 4);
    SG_EXPECT(hsa_signal_load_relaxed(s) == 4, "and");
    hsa_signal_or_acq_rel(s, 3);
    SG_EXPECT(hsa_signal_load_relaxed(s) == 7, "or");
    hsa_signal_xor_relaxed(s, 5);
    SG_EXPECT(hsa_signal_load_relaxed(s) == 2, "xor");
    SG_EXPECT(hsa_signal_exchange_scacquire(s, 9) == 2, "exchange returns the old value");
    SG_EXPECT(hsa_signal_load_relaxed(s) == 9, "exchange stores");
    SG_EXPECT(hsa_signal_cas_screlease(s, 1, 100) == 9, "failed cas returns the observed value");
    SG_EXPECT(hsa_signal_load_relaxed(s) == 9, "failed cas stores nothing");
    SG_EXPECT(hsa_signal_cas_acq_rel(s, 9, 100) == 9, "cas returns the old value");
    SG_EXPECT(hsa_signal_load_relaxed(s) == 100, "cas stores");
    hsa_signal_silent_store_relaxed(s, -4);
    SG_EXPECT(hsa_signal_load_relaxed(s) == -4, "silent store");
    hsa_signal_store_relaxed(s, 0);
    printf("signals: load, store, silent store, add, subtract, and, or, xor, exchange, cas\n");

    /* The signal handle points at an amd_signal_t: the value sits at offset 8. */
    volatile hsa_signal_value_t *vp = NULL;
    SG_CHECK(hsa_amd_signal_value_pointer(s, &vp));
    SG_EXPECT((uintptr_t)vp == (uintptr_t)s.handle + 8, "value pointer %p is not handle+8", (void *)vp);
    *vp = 42;
    SG_EXPECT(hsa_signal_load_relaxed(s) == 42, "a write through the value pointer is seen");

    /* ---- waits: each condition, satisfied at once ---- */
    hsa_signal_store_relaxed(s, 3);
    SG_EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 3, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 3, "EQ");
    SG_EXPECT(hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_NE, 4, UINT64_MAX, HSA_WAIT_STATE_ACTIVE) == 3, "NE");
    SG_EXPECT(hsa_signal_wait_acquire(s, HSA_SIGNAL_CONDITION_LT, 4, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 3, "LT");
    SG_EXPECT(hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, 3, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) == 3, "GTE");

    /* A wait that times out returns the value it observed, after roughly the timeout. */
    uint64_t w0 = sg_now_ns();
    hsa_signal_value_t v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, sg_ticks(ctx, 30000000u),
                                                     HSA_WAIT_STATE_BLOCKED);
    uint64_t waited = sg_now_ns() - w0;
    SG_EXPECT(v == 3, "timed-out wait returned %lld, expected the observed 3", (long long)v);
    SG_EXPECT(waited >= 25000000u && waited < 5000000000u, "a 30 ms timeout took %llu ns", (unsigned long long)waited);

    /* A blocked waiter is woken by another thread's subtract. */
    hsa_signal_store_relaxed(s, 1);
    pthread_t wt;
    waker_arg wa = {s, 20000};
    SG_EXPECT(pthread_create(&wt, NULL, waker, &wa) == 0, "pthread_create");
    v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_BLOCKED);
    SG_EXPECT(v == 0, "woken waiter saw %lld", (long long)v);
    pthread_join(wt, NULL);

    /* wait_any returns the index of the satisfied signal. */
    hsa_signal_t pair[2] = {sg_signal(1), sg_signal(0)};
    hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
    hsa_signal_value_t vals[2] = {0, 0};
    hsa_signal_value_t sat = -1;
    uint32_t idx = hsa_amd_signal_wait_any(2, pair, conds, vals, UINT64_MAX, HSA_WAIT_STATE_BLOCKED, &sat);
    SG_EXPECT(idx == 1 && sat == 0, "wait_any returned %u (value %lld)", idx, (long long)sat);
    printf("waits: conditions, timeouts, cross-thread wake-up, wait_any\n");

    /* ---- async handlers ---- */
    handler_state hs;
    memset(&hs, 0, sizeof hs);
    hs.signal = sg_signal(10);
    SG_CHECK(hsa_amd_signal_async_handler(hs.signal, HSA_SIGNAL_CONDITION_LT, 5, counting_handler, &hs));
    for (int round = 1; round <= 3; round++) {
        hsa_signal_store_screlease(hs.signal, 1);
        wait_int(&hs.calls, round, "async handler call count");
        /* The handler stores 10 before returning; wait for that before the next round. */
        uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
        while (hsa_signal_load_scacquire(hs.signal) != 10)
            SG_EXPECT(sg_now_ns() < deadline, "handler did not restore the signal");
    }
    SG_EXPECT(hs.last_value == 1, "handler saw value %lld", (long long)hs.last_value);
    SG_EXPECT(!pthread_equal(hs.thread, pthread_self()), "the handler ran on the program's own thread");
    /* After returning false it is not called again. */
    hsa_signal_store_screlease(hs.signal, 0);
    sg_sleep_us(50000);
    SG_EXPECT(__atomic_load_n(&hs.calls, __ATOMIC_SEQ_CST) == 3, "handler ran %d times after disarming", hs.calls);

    chain_state cs = {sg_signal(1), sg_signal(1), 0};
    SG_CHECK(hsa_amd_signal_async_handler(cs.watch, HSA_SIGNAL_CONDITION_EQ, 0, chaining_handler, &cs));
    hsa_signal_store_screlease(cs.watch, 0);
    wait_int(&cs.registered_from_handler, 1, "registration from inside a handler");
    hsa_signal_store_screlease(cs.second, 0);
    wait_int(&cs.registered_from_handler, 2, "handler registered by a handler");
    expect_status(hsa_amd_signal_async_handler(cs.watch, HSA_SIGNAL_CONDITION_EQ, 0, NULL, NULL),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "null handler");
    printf("handlers: runtime thread, re-arming, registration from a handler\n");

    /* ---- pools and memory ---- */
    void *p = NULL;
    expect_status(hsa_amd_memory_pool_allocate(ctx->kernarg_pool, 0, 0, &p), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "zero-size allocation");
    SG_CHECK(hsa_amd_memory_pool_allocate(ctx->kernarg_pool, 1 << 20, 0, &p));
    SG_EXPECT(((uintptr_t)p & 4095u) == 0, "allocation %p not aligned to the 4 KiB granule", p);
    memset(p, 0xab, 1 << 20);
    void *q2 = NULL;
    SG_CHECK(hsa_amd_memory_pool_allocate(ctx->kernarg_pool, 4096, 0, &q2));
    SG_CHECK(hsa_memory_copy(q2, p, 4096));
    SG_EXPECT(((unsigned char *)q2)[4095] == 0xab, "hsa_memory_copy moved no bytes");
    SG_CHECK(hsa_amd_memory_pool_free(p));
    SG_CHECK(hsa_amd_memory_pool_free(q2));
    SG_CHECK(hsa_amd_memory_pool_free(NULL));
    int not_ours = 0;
    expect_status(hsa_amd_memory_pool_free(&not_ours), HSA_STATUS_ERROR_INVALID_ALLOCATION, "free of foreign memory (ROCr: not in its allocation map)");
    printf("memory: allocate, copy, free, free(NULL), foreign free rejected\n");

    /* ---- forged handles and bad arguments fail with errors, not crashes ---- */
    hsa_signal_t forged = {0xdeadbeef000ull};
    expect_status(hsa_signal_destroy(forged), HSA_STATUS_ERROR_INVALID_SIGNAL, "destroy forged signal");
    /* A load that cannot read a signal answers INT64_MAX: never 0, which would read as completed. */
    SG_EXPECT(hsa_signal_load_relaxed(forged) == INT64_MAX, "load of a forged signal");
    hsa_agent_t bad_agent = {0x1234};
    char name[64];
    expect_status(hsa_agent_get_info(bad_agent, HSA_AGENT_INFO_NAME, name), HSA_STATUS_ERROR_INVALID_AGENT,
                  "forged agent");
    hsa_queue_t *q = NULL;
    expect_status(hsa_queue_create(ctx->gpu, 100, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q),
                  HSA_STATUS_ERROR_INVALID_ARGUMENT, "queue size not a power of two");
    expect_status(hsa_queue_create(ctx->cpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q),
                  HSA_STATUS_ERROR_INVALID_QUEUE_CREATION, "queue on the CPU agent");
    expect_status(hsa_queue_destroy((hsa_queue_t *)&not_ours), HSA_STATUS_ERROR_INVALID_QUEUE, "destroy forged queue");
    expect_status(hsa_agent_get_info(ctx->gpu, (hsa_agent_info_t)0x7777, name), HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "unknown agent attribute");
    printf("handles: forged signal, agent and queue rejected\n");

    /* ---- a fail-closed entry point: clear error, never a fake success ---- */
    hsa_queue_t *soft = NULL;
    hsa_region_t region = {ctx->kernarg_pool.handle};
    hsa_status_t fc = hsa_soft_queue_create(region, 64, HSA_QUEUE_TYPE_MULTI, 0, s, &soft);
    SG_EXPECT(fc == HSA_STATUS_ERROR, "hsa_soft_queue_create returned 0x%x, expected HSA_STATUS_ERROR", (unsigned)fc);
    SG_EXPECT(soft == NULL, "a fail-closed function wrote its out-parameter");
    const char *text = NULL;
    SG_CHECK(hsa_status_string(fc, &text));
    SG_EXPECT(text && strstr(text, "HSA_STATUS_ERROR"), "status string %s", text ? text : "(null)");
    printf("fail-closed: hsa_soft_queue_create -> HSA_STATUS_ERROR\n");

    /* ---- an async handler rings a doorbell ---- */
    hsa_queue_t *queue = sg_queue_create(ctx, 64);
    hsa_signal_t done = sg_signal(1);
    sg_dispatch d = sg_dispatch_1d(64, 64, sg_kernel_object(0), NULL, done);
    sg_submit_dispatch(queue, SG_DISPATCH_HEADER, &d);
    sg_wait_complete(ctx, done, "dispatch after handler tests");
    SG_CHECK(hsa_queue_destroy(queue));

    SG_CHECK(hsa_signal_destroy(s));
    SG_CHECK(hsa_signal_destroy(done));
    expect_status(hsa_signal_destroy(done), HSA_STATUS_ERROR_INVALID_SIGNAL, "double destroy");
    SG_CHECK(hsa_shut_down());
    expect_status(hsa_signal_create(1, 0, NULL, &early), HSA_STATUS_ERROR_NOT_INITIALIZED, "signal_create after shut_down");
    printf("sg: packets=1\n");
    return 0;
}
