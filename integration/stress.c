/* Stress: many producer threads publishing into SoftGPU queues at once.
 *
 *   stress multi  THREADS PACKETS   -- THREADS threads share one MULTI queue
 *   stress queues THREADS PACKETS   -- each thread has its own queue
 *
 * Every packet is a valid 1D dispatch whose kernel_object encodes
 * (thread, sequence) uniquely, so the capture can be checked for exactly-once
 * observation. Producers reserve with add_write_index, wait for ring space,
 * write the body, publish header+setup last with one release store, and ring
 * the doorbell with their own index: the multi-producer pattern HSA allows. */
#include "common.h"

#include <pthread.h>
#include <sched.h>

typedef struct {
    hsa_queue_t *q;
    unsigned thread;
    unsigned packets;
} worker_arg;

static void *worker(void *p) {
    worker_arg *w = (worker_arg *)p;
    hsa_queue_t *q = w->q;
    for (unsigned i = 0; i < w->packets; i++) {
        uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
        while (index - hsa_queue_load_read_index_scacquire(q) >= q->size)
            sched_yield();
        /* kernel_object: 64-byte aligned, unique per (thread, i). */
        uint64_t kobj = ((uint64_t)(w->thread + 1) << 40) | ((uint64_t)i << 6);
        sg_dispatch d = sg_dispatch_1d(64, 64, kobj, NULL, SG_NO_SIGNAL);
        sg_put_dispatch(q, index, SG_DISPATCH_HEADER, &d);
        sg_ring(q, index);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s multi|queues THREADS PACKETS\n", argv[0]);
        return 2;
    }
    int shared = strcmp(argv[1], "multi") == 0;
    unsigned threads = (unsigned)atoi(argv[2]);
    unsigned packets = (unsigned)atoi(argv[3]);
    if (threads == 0 || threads > 64) {
        fprintf(stderr, "THREADS must be 1..64\n");
        return 2;
    }
    sg_ctx ctx;
    sg_init(&ctx);

    hsa_queue_t *queues[64];
    for (unsigned t = 0; t < threads; t++)
        queues[t] = (shared && t > 0) ? queues[0] : sg_queue_create(&ctx, 1024);

    pthread_t tids[64];
    worker_arg args[64];
    uint64_t start = sg_now_ns();
    for (unsigned t = 0; t < threads; t++) {
        args[t] = (worker_arg){queues[t], t, packets};
        SG_EXPECT(pthread_create(&tids[t], NULL, worker, &args[t]) == 0, "pthread_create failed");
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tids[t], NULL);

    /* Every packet must be consumed: the read index reaches the write index. */
    unsigned nq = shared ? 1 : threads;
    for (unsigned t = 0; t < nq; t++) {
        uint64_t deadline = sg_now_ns() + (uint64_t)SG_COMPLETE_TIMEOUT_MS * 1000000u;
        while (hsa_queue_load_read_index_scacquire(queues[t]) != hsa_queue_load_write_index_relaxed(queues[t])) {
            SG_EXPECT(sg_now_ns() < deadline, "queue %u: read index %llu never reached write index %llu", t,
                      (unsigned long long)hsa_queue_load_read_index_scacquire(queues[t]),
                      (unsigned long long)hsa_queue_load_write_index_relaxed(queues[t]));
            sched_yield();
        }
    }
    uint64_t elapsed = sg_now_ns() - start;
    unsigned long long total = (unsigned long long)threads * packets;
    printf("sg: mode=%s threads=%u packets_per_thread=%u total=%llu\n", shared ? "multi" : "queues", threads, packets,
           total);
    printf("sg: elapsed_ns=%llu ns_per_packet=%.1f\n", (unsigned long long)elapsed, (double)elapsed / (double)total);
    for (unsigned t = 0; t < nq; t++)
        SG_CHECK(hsa_queue_destroy(queues[t]));
    SG_CHECK(hsa_shut_down());
    return 0;
}
