// fork and system() after HIP has initialised. The child never writes into its parent's capture
// (the shim stops capturing in a child), and never produces a capture of its own.
//
//   fork [fork]   launch before_fork<<<1, 64>>>, sync; fork(); the child sleeps 50 ms and leaves
//                 with _exit(0) without touching HIP; the parent waits for it, then launches
//                 after_fork<<<2, 64>>> and syncs.
//   fork fork-exit  the same, but the child leaves with exit(0), so atexit handlers and static
//                   destructors (HIP's and the shim's) run in the child. Not part of the suite:
//                   HIP 6.4's own module destructor (__hip_module_dtor) sometimes spins forever
//                   in the forked child, on a HIP lock another thread held at fork time, which is
//                   HIP's fork hazard and not SoftGPU's. Kept for checking by hand.
//   fork system   the same, with system("true") (a shell, which inherits LD_PRELOAD) instead.
#include "sg_hip.h"

#include <sys/wait.h>
#include <unistd.h>

__global__ void before_fork(int *p) { p[threadIdx.x] = 1; }
__global__ void after_fork(int *p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 2; }

int main(int argc, char **argv) {
    sg_start("fork");
    const char *mode = argc > 1 ? argv[1] : "fork";
    const bool forks = std::strcmp(mode, "fork") == 0 || std::strcmp(mode, "fork-exit") == 0;
    SG_EXPECT(forks || std::strcmp(mode, "system") == 0,
              "unknown mode %s (fork, fork-exit or system)", mode);
    sg_fact("mode", "%s", mode);
    sg_fact("parent_pid", "%d", (int)getpid());

    int *buf = nullptr;
    SG_HIP(hipMalloc(&buf, 4096));
    before_fork<<<1, 64>>>(buf);
    SG_LAUNCHED("before_fork");
    SG_HIP(hipDeviceSynchronize());

    if (forks) {
        std::fflush(stdout);
        std::fflush(stderr);
        pid_t child = fork();
        SG_EXPECT(child >= 0, "fork failed");
        if (child == 0) {
            usleep(50 * 1000);
            if (std::strcmp(mode, "fork-exit") == 0) std::exit(0);  // atexit handlers run
            _exit(0);
        }
        sg_fact("child_pid", "%d", (int)child);
        int status = 0;
        SG_EXPECT(waitpid(child, &status, 0) == child, "waitpid failed");
        SG_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
        sg_fact("child_status", "%d", WEXITSTATUS(status));
    } else {
        std::fflush(stdout);
        int rc = std::system("true");
        SG_EXPECT(rc == 0, "system(\"true\") returned %d", rc);
        sg_fact("system_status", "%d", rc);
    }

    after_fork<<<2, 64>>>(buf);
    SG_LAUNCHED("after_fork");
    SG_HIP(hipDeviceSynchronize());
    SG_HIP(hipFree(buf));
    sg_done();
    return 0;
}
