/*
 * The lifecycle: calls before hsa_init, concurrent hsa_init and hsa_shut_down
 * from many threads, calls after the last hsa_shut_down, a second life after
 * a new hsa_init, and calls from an exit handler that runs after SoftGPU's own
 * (which finalised the capture). Each is answered by the state it finds:
 * HSA_STATUS_ERROR_NOT_INITIALIZED when nothing is initialised, success while
 * it is, and never a crash or a hang.
 *
 * Facts: early=ok, concurrent=ok, late=ok, again=ok, dispatches=N, at_exit=ok
 * (printed by the exit handler).
 */
#include "common.h"

#include <pthread.h>

#define THREADS 8

static pthread_barrier_t start;
static hsa_status_t results[THREADS];

static hsa_status_t count_agent(hsa_agent_t agent, void *data) {
    (void)agent;
    ++*(unsigned *)data;
    return HSA_STATUS_SUCCESS;
}

static void *init_thread(void *arg) {
    unsigned i = (unsigned)(uintptr_t)arg;
    pthread_barrier_wait(&start);
    results[i] = hsa_init();
    return NULL;
}

static void *shut_down_thread(void *arg) {
    unsigned i = (unsigned)(uintptr_t)arg;
    pthread_barrier_wait(&start);
    results[i] = hsa_shut_down();
    return NULL;
}

static void run_threads(void *(*body)(void *), const char *what) {
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (unsigned i = 0; i < THREADS; i++)
        SG_EXPECT(pthread_create(&t[i], NULL, body, (void *)(uintptr_t)i) == 0, "pthread_create");
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    for (unsigned i = 0; i < THREADS; i++)
        SG_EXPECT(results[i] == HSA_STATUS_SUCCESS, "concurrent %s %u returned 0x%x", what, i,
                  (unsigned)results[i]);
}

/* Every call that needs an initialised runtime says it is not. */
static void expect_not_initialized(const char *when) {
    unsigned n = 0;
    hsa_signal_t s = {0};
    hsa_status_t st = hsa_iterate_agents(count_agent, &n);
    SG_EXPECT(st == HSA_STATUS_ERROR_NOT_INITIALIZED, "%s: hsa_iterate_agents returned 0x%x", when,
              (unsigned)st);
    st = hsa_signal_create(1, 0, NULL, &s);
    SG_EXPECT(st == HSA_STATUS_ERROR_NOT_INITIALIZED, "%s: hsa_signal_create returned 0x%x", when,
              (unsigned)st);
    st = hsa_shut_down();
    SG_EXPECT(st == HSA_STATUS_ERROR_NOT_INITIALIZED, "%s: hsa_shut_down returned 0x%x", when,
              (unsigned)st);
}

static hsa_status_t break_at_first(hsa_agent_t agent, void *data) {
    (void)agent;
    ++*(unsigned *)data;
    return HSA_STATUS_INFO_BREAK;
}

static unsigned count_agents(void) {
    unsigned n = 0;
    SG_CHECK(hsa_iterate_agents(count_agent, &n));
    /* A callback's break ends the traversal and is what the iteration returns, as ROCr's
     * iterators return the callback's status: a caller can tell a break from a full pass. */
    unsigned seen = 0;
    hsa_status_t st = hsa_iterate_agents(break_at_first, &seen);
    SG_EXPECT(st == HSA_STATUS_INFO_BREAK && seen == 1,
              "hsa_iterate_agents with a breaking callback returned 0x%x after %u agents",
              (unsigned)st, seen);
    return n;
}

/* One dispatch on a new queue, waited for: the runtime works in this life. */
static void one_dispatch(void) {
    sg_ctx ctx;
    sg_init(&ctx); /* one more reference, released below */
    hsa_queue_t *q = sg_queue_create(&ctx, 64);
    hsa_signal_t done = sg_signal(1);
    void *kernarg = sg_kernarg_alloc(&ctx, 16);
    sg_dispatch d = sg_dispatch_1d(64, 64, sg_kernel_object(0), kernarg, done);
    sg_submit_dispatch(q, sg_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 0, 2, 2), &d);
    sg_wait_complete(&ctx, done, "the dispatch");
    SG_CHECK(hsa_signal_destroy(done));
    SG_CHECK(hsa_queue_destroy(q));
    sg_kernarg_free(kernarg);
    SG_CHECK(hsa_shut_down());
}

/* Runs after SoftGPU's exit handler (registered later, at the first hsa_init). */
static void late_at_exit(void) {
    /* Still referenced (main left one hsa_init open): calls are answered. */
    unsigned n = 0;
    hsa_status_t st = hsa_iterate_agents(count_agent, &n);
    SG_EXPECT(st == HSA_STATUS_SUCCESS && n > 0, "at exit: hsa_iterate_agents returned 0x%x (%u agents)",
              (unsigned)st, n);
    hsa_signal_t s;
    SG_CHECK(hsa_signal_create(1, 0, NULL, &s));
    SG_CHECK(hsa_signal_destroy(s));
    SG_CHECK(hsa_init());
    SG_CHECK(hsa_shut_down());
    SG_CHECK(hsa_shut_down());
    expect_not_initialized("at exit, after the last hsa_shut_down");
    printf("sg: at_exit=ok\n");
    fflush(stdout);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    SG_EXPECT(atexit(late_at_exit) == 0, "atexit");

    expect_not_initialized("before hsa_init");
    printf("sg: early=ok\n");

    run_threads(init_thread, "hsa_init");
    SG_EXPECT(count_agents() > 0, "no agents after %d hsa_init calls", THREADS);
    run_threads(shut_down_thread, "hsa_shut_down");
    printf("sg: concurrent=ok\n");

    expect_not_initialized("after the last hsa_shut_down");
    printf("sg: late=ok\n");

    /* A second life: the runtime answers again, and a dispatch is captured. */
    SG_CHECK(hsa_init());
    one_dispatch();
    SG_CHECK(hsa_shut_down());
    expect_not_initialized("after the second life");
    SG_CHECK(hsa_init());
    one_dispatch();
    printf("sg: again=ok\n");
    printf("sg: dispatches=2\n");
    /* One hsa_init left open, as HIP leaves it: the exit handler uses it. */
    return 0;
}
