/*
 * Every way a program can end, for the capture's promise: every packet whose
 * completion the program observed is in the capture file, whatever the ending.
 *
 *   endings MODE
 *
 * Each mode first makes N synchronised launches on one queue: a dispatch
 * with a completion signal, then a wait until that signal is 0, one at a
 * time. Then it ends:
 *
 *   exit            returns from main (atexit: the shim finishes the capture)
 *   abort           abort()
 *   _exit           _exit(0)
 *   wait_kill       prints "sg: ready=1" and sleeps until the test kills it
 *                   (SIGKILL, SIGTERM or SIGINT: the test picks)
 *   own_handler     as wait_kill, but with its own SIGTERM handler installed
 *                   before hsa_init (the handler calls _exit(42))
 *   threads         3 threads keep launching on queues of their own while
 *                   main exits; an atexit handler that runs after the shim's
 *                   waits until each thread has observed more completions,
 *                   so some records certainly arrive after the exit began
 *   barrier_exit    leaves a barrier with an unsatisfied dependency and a
 *                   dispatch behind it on the queue at exit (2 pending)
 *   barrier_destroy the same, then destroys the queue before exiting
 *   barrier_wait_kill  the same as barrier_exit (so SoftGPU's event thread
 *                   runs), then as wait_kill
 *   fork            forks; the child launches on its copy of the queue and
 *                   exits; the parent waits for it and launches again
 *
 * Facts (stdout): sg: queue_id=Q, sg: observed=N (launches whose completion
 * was observed), per thread sg: thread_T_queue=Q and, printed after the
 * shim finished the capture, sg: thread_T_observed=N.
 */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define LAUNCHES 5000u
#define THREADS 3

static sg_ctx ctx;

/* One synchronised launch: dispatch with `s` as completion signal, wait for it. */
static void launch(hsa_queue_t *q, hsa_signal_t s, unsigned i) {
    hsa_signal_store_screlease(s, 1);
    sg_dispatch d = sg_dispatch_1d(64 * (1 + i % 64), 64, sg_kernel_object(i % 4), NULL, s);
    sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    (void)sg_wait_below(&ctx, s, 1, "a synchronised launch");
}

static hsa_queue_t *launches(unsigned n) {
    hsa_queue_t *q = sg_queue_create(&ctx, 256);
    hsa_signal_t s = sg_signal(1);
    for (unsigned i = 0; i < n; i++)
        launch(q, s, i);
    printf("sg: queue_id=%llu\n", (unsigned long long)q->id);
    printf("sg: observed=%u\n", n);
    fflush(stdout);
    return q;
}

/* ---- threads still launching at exit ------------------------------------ */

static _Atomic unsigned long observed[THREADS];
static unsigned long before_exit[THREADS];

static void *launcher(void *arg) {
    unsigned t = (unsigned)(uintptr_t)arg;
    hsa_queue_t *q = sg_queue_create(&ctx, 64);
    printf("sg: thread_%u_queue=%llu\n", t, (unsigned long long)q->id);
    hsa_signal_t s = sg_signal(1);
    for (unsigned i = 0;; i++) {
        launch(q, s, i);
        atomic_fetch_add(&observed[t], 1);
    }
    return NULL;
}

/* Runs before the shim's exit hook (registered after hsa_init). */
static void snapshot_at_exit(void) {
    for (unsigned t = 0; t < THREADS; t++)
        before_exit[t] = atomic_load(&observed[t]);
}

/* Runs after the shim's exit hook (registered before hsa_init): the capture's
 * trailer is written; the threads go on launching. Wait until each has
 * observed more completions, and say how many: all of them must be in the file. */
static void after_finish(void) {
    uint64_t deadline = sg_now_ns() + 20ull * 1000000000ull;
    for (unsigned t = 0; t < THREADS; t++)
        while (atomic_load(&observed[t]) < before_exit[t] + 50 && sg_now_ns() < deadline)
            sg_sleep_us(100);
    for (unsigned t = 0; t < THREADS; t++)
        printf("sg: thread_%u_observed=%lu\n", t, atomic_load(&observed[t]));
    fflush(stdout);
}

/* ---- a packet pending behind an unsatisfied barrier ---------------------- */

static hsa_queue_t *leave_pending(void) {
    hsa_queue_t *q = launches(10);
    hsa_signal_t dep = sg_signal(1); /* never set to 0 */
    hsa_signal_t c1 = sg_signal(1), c2 = sg_signal(1);
    uint64_t i = sg_reserve(q, 2);
    sg_dispatch d = sg_dispatch_1d(256, 64, sg_kernel_object(0), NULL, c2);
    sg_put_dispatch(q, i + 1, SG_DISPATCH_HEADER, &d);
    sg_put_barrier(q, i, SG_BARRIER_AND_HEADER, &dep, 1, c1);
    sg_ring(q, i + 1);
    sg_expect_unchanged(&ctx, c1, 1, "a barrier whose dependency is 1");
    printf("sg: pending=2\n");
    fflush(stdout);
    return q;
}

static void own_term_handler(int sig) {
    (void)sig;
    static const char msg[] = "sg: own_handler_ran=1\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    _exit(42);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "exit";
    if (strcmp(mode, "threads") == 0)
        atexit(after_finish);
    if (strcmp(mode, "own_handler") == 0)
        signal(SIGTERM, own_term_handler);
    sg_init(&ctx);
    sg_print_kernel_objects();

    if (strcmp(mode, "exit") == 0) {
        launches(LAUNCHES);
        return 0;
    }
    if (strcmp(mode, "abort") == 0) {
        launches(LAUNCHES);
        abort();
    }
    if (strcmp(mode, "_exit") == 0) {
        launches(LAUNCHES);
        _exit(0);
    }
    if (strcmp(mode, "wait_kill") == 0 || strcmp(mode, "own_handler") == 0) {
        launches(LAUNCHES);
        printf("sg: ready=1\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (strcmp(mode, "threads") == 0) {
        atexit(snapshot_at_exit);
        pthread_t th[THREADS];
        for (unsigned t = 0; t < THREADS; t++)
            if (pthread_create(&th[t], NULL, launcher, (void *)(uintptr_t)t) != 0)
                SG_FAIL("pthread_create");
        uint64_t deadline = sg_now_ns() + 20ull * 1000000000ull;
        for (unsigned t = 0; t < THREADS; t++)
            while (atomic_load(&observed[t]) < 200 && sg_now_ns() < deadline)
                sg_sleep_us(100);
        exit(0); /* the threads are still launching */
    }
    if (strcmp(mode, "barrier_exit") == 0) {
        leave_pending();
        return 0;
    }
    if (strcmp(mode, "barrier_wait_kill") == 0) {
        leave_pending();
        printf("sg: ready=1\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (strcmp(mode, "barrier_destroy") == 0) {
        hsa_queue_t *q = leave_pending();
        SG_CHECK(hsa_queue_destroy(q));
        printf("sg: destroyed=1\n");
        return 0;
    }
    if (strcmp(mode, "fork") == 0) {
        hsa_queue_t *q = launches(100);
        hsa_signal_t s = sg_signal(1);
        fflush(stdout);
        pid_t child = fork();
        if (child < 0)
            SG_FAIL("fork");
        if (child == 0) {
            /* The child's launches go nowhere near the parent's capture. */
            for (unsigned i = 0; i < 50; i++)
                launch(q, s, i);
            exit(0);
        }
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            SG_FAIL("the forked child failed (status 0x%x)", (unsigned)status);
        for (unsigned i = 0; i < 20; i++)
            launch(q, s, i);
        printf("sg: parent_launches=120\n");
        return 0;
    }
    SG_FAIL("unknown mode %s", mode);
}
