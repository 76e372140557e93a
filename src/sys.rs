//! The few operating-system facilities that `capture` needs and safe Rust
//! does not offer, each behind a safe, argued interface. This is the only
//! file below `runtime` and `interpose` that may use `unsafe` (allowed at the top
//! of this file alone); every block is listed in `docs/UNSAFE.md`.
//!
//! - [`SharedRegion`]: a `MAP_SHARED` read-write mapping of part of a file,
//!   seen as `&'static [AtomicU64]`. It is never unmapped, so the slice is
//!   valid for the life of the process. The capture's live ring lives in one:
//!   what is stored there is in the page cache, hence in the file, the moment
//!   the store is done, even if the process is killed the next instant.
//! - [`install_termination_hook`]: runs a hook on SIGTERM/SIGINT (only where
//!   the program left the default action), then lets the default action
//!   happen, so the program still dies "killed by signal".
//! - [`spawn_shielded`], [`sleep_ns`]: what that hook needs of SoftGPU's own
//!   threads (never to take the signal) and in its wait.
//! - [`prefetch_for_write`]: a cache hint (`prefetchw`) the doorbell path
//!   gives for the ring slot it is about to write.
//! - [`tsc`], [`monotonic_ns`], [`tsc_is_the_kernel_clock`]: the clocks a
//!   record's times are stamped with (see `capture::clock`).
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

/// The system page size (a mapping's file offset must be a multiple of it).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n <= 0 { 4096 } else { n as usize }
}

/// Allocates the blocks of bytes `offset .. offset + len` of `file`
/// (`fallocate(2)` mode 0: the file grows to cover them, they read as zeros,
/// and a later store into them through a mapping needs no new block). Much
/// cheaper than writing zeros: nothing is written or dirtied. `Ok(false)`:
/// the file system cannot (`EOPNOTSUPP`, `ENOSYS`, `EINVAL`); the caller then
/// writes zeros instead. A full disk is an error (`ENOSPC`), as for a write.
pub fn allocate(file: &File, offset: u64, len: u64) -> io::Result<bool> {
    let (Ok(off), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "range too large",
        ));
    };
    loop {
        // SAFETY: fallocate takes a descriptor and integers only; `file` is
        // open for the call. It touches no memory of ours.
        let r = unsafe { libc::fallocate(file.as_raw_fd(), 0, off, n) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// A shared, writable mapping of `len` bytes of a file, never unmapped.
#[derive(Clone, Copy, Debug)]
pub struct SharedRegion {
    words: &'static [AtomicU64],
}

impl SharedRegion {
    /// Maps bytes `offset .. offset + len` of `file` shared and read-write.
    ///
    /// Refuses (`InvalidInput`) an offset that is not a multiple of the page
    /// size, a length that is 0 or not a multiple of 8, and (`UnexpectedEof`)
    /// a range that the file does not hold entirely: a store to a page past the
    /// end of a file raises SIGBUS, so the whole range must exist now. The
    /// file must have been opened for reading and writing. The caller should
    /// allocate the range's blocks first ([`allocate`], or write it), so that
    /// a store can never meet a full disk (which would also raise SIGBUS).
    pub fn map(file: &File, offset: u64, len: usize) -> io::Result<SharedRegion> {
        let page = page_size() as u64;
        if len == 0 || len % 8 != 0 || offset % page != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "shared mapping: offset must be page-aligned and the length a non-zero multiple of 8",
            ));
        }
        let end = offset
            .checked_add(len as u64)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "range overflows"))?;
        if file.metadata()?.len() < end {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "shared mapping: the file is shorter than the range to map",
            ));
        }
        let off = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
        // SAFETY: a new mapping at an address the kernel chooses (null hint, no
        // MAP_FIXED) replaces nothing; `file` is an open descriptor for the
        // call; the result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `p` is the start of a fresh read-write mapping of `len` bytes
        // (page-aligned, so 8-byte aligned; `len` is a multiple of 8). It is
        // never unmapped (nothing in the crate calls munmap on it, and
        // `detach_in_child` replaces it in place with memory of the same
        // size), so the slice is valid for 'static. Every bit pattern is a
        // valid AtomicU64, and all access goes through atomics, so other
        // threads, or another process writing the same file, cannot make a
        // read undefined: a concurrent write is an atomic store as far as this
        // process can tell (x86-64 and AArch64 8-byte aligned stores are
        // single-copy atomic).
        let words = unsafe { std::slice::from_raw_parts(p as *const AtomicU64, len / 8) };
        Ok(SharedRegion { words })
    }

    /// The mapped words.
    pub fn words(&self) -> &'static [AtomicU64] {
        self.words
    }

    /// In a child process made by `fork`: replaces the mapping, in place,
    /// with private zero-filled memory of the same size, so nothing the child
    /// stores can reach the parent's file, while every `&'static` reference
    /// into the region stays valid. Async-signal-safe (one mmap system call),
    /// for a `pthread_atfork` child handler. Returns false if the kernel
    /// refused (the caller must then keep the child from storing there).
    pub fn detach_in_child(&self) -> bool {
        let len = self.words.len() * 8;
        let p = self.words.as_ptr() as *mut libc::c_void;
        // SAFETY: `p..p+len` is exactly this region's own mapping (never
        // unmapped, see `map`), so MAP_FIXED replaces only it. The new
        // anonymous mapping is readable, writable and zero-filled, so every
        // existing reference into the range still points at valid AtomicU64s.
        // In a freshly forked child only the forking thread exists, so no
        // other thread is accessing the range while it is replaced.
        let r = unsafe {
            libc::mmap(
                p,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        r == p
    }
}

/// The hook run on SIGTERM and SIGINT (see [`install_termination_hook`]).
static TERMINATION_HOOK: OnceLock<fn(i32)> = OnceLock::new();

extern "C" fn on_termination_signal(sig: libc::c_int) {
    // SAFETY: __errno_location returns the calling thread's errno slot, valid
    // for the thread's life; we restore the interrupted code's errno below.
    let saved_errno = unsafe { *libc::__errno_location() };
    if let Some(hook) = TERMINATION_HOOK.get() {
        hook(sig);
    }
    // The action was reset to SIG_DFL on entry (SA_RESETHAND): raising the
    // signal again takes the default action once this handler returns (or at
    // once, where the kernel does not block it during the handler), so the
    // program still ends "killed by signal".
    // SAFETY: raise is async-signal-safe and has no memory preconditions.
    unsafe { libc::raise(sig) };
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved_errno };
}

/// For each of SIGTERM and SIGINT whose action is the default (`SIG_DFL`,
/// the program installed no handler and did not ignore it), installs a
/// handler that calls `hook(signal)` once and then takes the default action
/// (the handler resets itself to `SIG_DFL` and raises the signal again).
/// `hook` runs in a signal handler: it must be async-signal-safe (atomics
/// and bounded waits only; no allocation, no locks). Only the first hook
/// given is ever used. Returns the signals it installed a handler for.
pub fn install_termination_hook(hook: fn(i32)) -> Vec<i32> {
    let _ = TERMINATION_HOOK.set(hook);
    let mut installed = Vec::new();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: a zeroed sigaction is a valid "out" buffer (all fields are
        // plain integers, pointers and a sigset).
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `old`.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
            continue;
        }
        if old.sa_sigaction != libc::SIG_DFL {
            continue; // the program's own handler (or SIG_IGN) stays
        }
        // SAFETY: as for `old`.
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        new.sa_sigaction = on_termination_signal as extern "C" fn(libc::c_int) as usize;
        new.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
        // SAFETY: `new.sa_mask` is a valid sigset to initialise.
        unsafe { libc::sigemptyset(&mut new.sa_mask) };
        // SAFETY: `new` is fully initialised; the handler is an extern "C" fn
        // of the right signature that stays mapped for the life of the
        // process (the shim is never unloaded) and only does
        // async-signal-safe work (the hook's contract, errno saved).
        if unsafe { libc::sigaction(sig, &new, std::ptr::null_mut()) } == 0 {
            installed.push(sig);
        }
    }
    installed
}

/// Spawns a thread (named and sized by `builder`), otherwise as
/// `std::thread::Builder::spawn` does, but with SIGTERM and SIGINT blocked
/// from its first instruction. Every thread SoftGPU starts is spawned so, and the kernel
/// then delivers a termination signal sent to the process only to one of
/// the program's own threads.
///
/// Blocking them as the thread's first act is too late: a thread that has
/// not yet run (a loaded machine can keep a new thread waiting for the CPU
/// longer than the program takes to reach its end) can take a signal sent
/// to the process, and the termination hook would then run on the capture
/// writer thread itself and wait its full bound for the Trailer only that
/// thread could write. A program that blocks the signals in all of its own
/// threads, to `sigwait` for them, keeps them too. The calling thread's
/// mask is blocked for the spawn and restored after it.
pub fn spawn_shielded<F, T>(
    builder: std::thread::Builder,
    f: F,
) -> io::Result<std::thread::JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    // SAFETY: a zeroed sigset_t is a valid buffer for sigemptyset and
    // pthread_sigmask to fill (a plain array of words); sigemptyset
    // initialises `set` before sigaddset and pthread_sigmask read it;
    // pthread_sigmask only changes the calling thread's mask and writes the
    // previous one into `old`.
    let (blocked, old) = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        (r == 0, old)
    };
    // The new thread starts with the mask its creator has now.
    let spawned = builder.spawn(f);
    if blocked {
        // SAFETY: `old` is the mask pthread_sigmask returned above (it
        // succeeded), so this restores exactly the calling thread's own
        // mask; a signal that arrived meanwhile is delivered now.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    }
    spawned
}

/// Sleeps about `ns` nanoseconds with `nanosleep`, which is
/// async-signal-safe (for waits inside a signal handler).
pub fn sleep_ns(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `ts` is a valid timespec; a null remainder pointer is allowed.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// Asks the CPU to bring the cache line holding `word` into this core's
/// cache for writing (`prefetchw`), so a store to it soon after does not
/// wait for the line to come back from the core that last read it. Only a
/// hint: it never faults and changes no memory; a no-op off x86_64.
#[inline(always)]
pub fn prefetch_for_write(word: &std::sync::atomic::AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetchw` is a hint: it reads and writes no memory, cannot
    // fault whatever the address (here a live `AtomicU64`), touches no
    // register but its address operand and no flag, and uses no stack. A
    // CPU without PRFCHW runs it as a no-op (the opcode is in the 0F 0D
    // multi-byte NOP space Intel reserved for it).
    unsafe {
        std::arch::asm!(
            "prefetchw [{p}]",
            p = in(reg) word.as_ptr(),
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// [`prefetch_for_write`] for an address that need not be a reference: the
/// line holding `p`. Safe for any pointer value, dangling or null included,
/// because the instruction never faults and accesses no memory
/// architecturally; the callers compute slot addresses with wrapping
/// arithmetic and skip the bounds checks a reference would need.
#[inline(always)]
pub fn prefetch_addr_for_write<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch_for_write`: `prefetchw` is a hint that cannot
    // fault on any address, valid or not, and reads and writes no memory,
    // register, flag or stack.
    unsafe {
        std::arch::asm!(
            "prefetchw [{p}]",
            p = in(reg) p,
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the CPU to bring the cache line holding `word` into this core's
/// cache for reading (`prefetcht0`). Only a hint, as
/// [`prefetch_for_write`]; a no-op off x86_64.
#[inline(always)]
pub fn prefetch_for_read(word: &std::sync::atomic::AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch_for_write`: `prefetcht0` (SSE, in every
    // x86_64 CPU) reads and writes no memory, cannot fault, and clobbers no
    // register, flag or stack.
    unsafe {
        std::arch::asm!(
            "prefetcht0 [{p}]",
            p = in(reg) word.as_ptr(),
            options(nostack, preserves_flags, readonly)
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}

/// The CPU's time-stamp counter (`rdtsc`), unordered: it may be read a few
/// cycles early or late against the instructions around it, which is well
/// inside what a capture's times mean. 0 off x86_64, where
/// [`tsc_is_the_kernel_clock`] is false and nothing reads it.
#[inline(always)]
pub fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rdtsc` reads a counter into two registers; it touches no
    // memory and no flag. Every x86_64 CPU has it, and Linux leaves it
    // enabled for user space (it only traps with `PR_TSC_SIGSEGV`, which a
    // program sets for itself; the kernel's own vDSO clock reads it too).
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// CLOCK_MONOTONIC in ns (the runtime's timestamp domain).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Whether the kernel's own clocksource is the TSC: then the kernel has
/// checked that it runs at a constant rate, keeps running in every sleep
/// state and agrees across CPUs, and CLOCK_MONOTONIC is itself a scaled
/// TSC reading. Read once, from
/// `/sys/devices/system/clocksource/clocksource0/current_clocksource`.
pub fn tsc_is_the_kernel_clock() -> bool {
    static IS: OnceLock<bool> = OnceLock::new();
    *IS.get_or_init(|| {
        cfg!(target_arch = "x86_64")
            && std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|s| s.trim() == "tsc")
    })
}

#[cfg(test)]
mod tests {
    /// This thread's blocked-signal mask, as the kernel reports it.
    fn blocked_now() -> u64 {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let mask = status
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .unwrap();
        u64::from_str_radix(mask.trim(), 16).unwrap()
    }

    const BOTH: u64 = (1 << (libc::SIGTERM - 1)) | (1 << (libc::SIGINT - 1));

    #[test]
    fn a_shielded_thread_blocks_the_termination_signals_from_its_first_line() {
        // Run on a thread of its own, so the test harness's thread is not
        // the caller whose mask must come back unchanged.
        std::thread::spawn(|| {
            let before = blocked_now();
            assert_eq!(before & BOTH, 0, "the test thread blocks them already");
            let inside = super::spawn_shielded(std::thread::Builder::new(), blocked_now)
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(inside & BOTH, BOTH, "SigBlk {inside:x} at the first line");
            assert_eq!(blocked_now(), before, "the caller's mask is restored");
            // Without the shield a new thread takes its creator's mask, so
            // the check above is not vacuous.
            let plain = std::thread::spawn(blocked_now).join().unwrap();
            assert_eq!(plain & BOTH, 0, "a plain thread blocks them: {plain:x}");
        })
        .join()
        .unwrap();
    }
}
