/*
 * memavailable.so: sysinfo(2) as the program would see it, but with `freeram` set to the
 * kernel's MemAvailable (/proc/meminfo) instead of MemFree.
 *
 * Why: the host-memory check of rocFFT's and hipFFT's test programs (6.4.3,
 * shared/sys_mem.h) takes sysinfo's `freeram` as the memory it may use, and below 1 GiB
 * refuses every host buffer, so every test skips. `freeram` leaves out the page cache, which
 * the kernel gives back on demand; after a build or a chroot's set-up it fills most of the
 * RAM, and `freeram` drops under 1 GiB on a machine with gigabytes available. The suite's
 * counts then depended on how much the machine had read lately (tests/realworld.rs,
 * Workaround::HostMemAvailable). Nothing here touches HSA or HIP; a failure of any step
 * leaves the real answer as it was.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <sys/sysinfo.h>

typedef int (*sysinfo_fn)(struct sysinfo *);

int sysinfo(struct sysinfo *info)
{
    /* Looked up on every call (the programs call it a few times per test), so that no
     * shared state is written from several threads. */
    sysinfo_fn real;
    void *sym = dlsym(RTLD_NEXT, "sysinfo");
    if (!sym) {
        errno = ENOSYS;
        return -1;
    }
    *(void **)&real = sym;
    int r = real(info);
    if (r != 0 || info->mem_unit == 0)
        return r;
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return r;
    char line[256];
    unsigned long long kib;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            unsigned long long units = kib * 1024ULL / info->mem_unit;
            if (units <= info->totalram)
                info->freeram = (unsigned long)units;
            break;
        }
    }
    fclose(f);
    return r;
}
