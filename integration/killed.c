/* Dies abruptly (SIGKILL, no atexit, no trailer) the moment its wait for its
 * packets has returned: no sleep, nothing flushed on purpose. Every record is
 * in the capture's live ring, which is the file, before its packet completes;
 * the reader must recover all ten, marked incomplete. */
#include "common.h"

#include <signal.h>
#include <unistd.h>

int main(void) {
    sg_ctx c;
    sg_ctx *ctx = &c;
    sg_init(ctx);
    hsa_queue_t *q = sg_queue_create(ctx, 64);
    hsa_signal_t done = sg_signal(10);
    for (unsigned i = 0; i < 10; i++) {
        sg_dispatch d = sg_dispatch_1d(64 * (i + 1), 64, sg_kernel_object(0), NULL, done);
        sg_submit_dispatch(q, SG_DISPATCH_HEADER, &d);
    }
    (void)sg_wait_below(ctx, done, 1, "ten dispatches");
    printf("sg: packets=10\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
    return 3; /* not reached */
}
