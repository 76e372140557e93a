//! Thin, argued wrappers over the few syscalls the runtime needs: a monotonic
//! clock, futex wait/wake, anonymous mappings, the thread id.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::sync::atomic::AtomicU32;

/// Monotonic time in ns: the runtime's 1 GHz timestamp domain
/// (CLOCK_MONOTONIC, read by [`crate::sys::monotonic_ns`]).
#[inline]
pub fn now_ns() -> u64 {
    crate::sys::monotonic_ns()
}

/// Read `clock` into `ts`; false when the clock is not available.
pub fn clock_ns(clock: libc::clockid_t, ts: &mut libc::timespec) -> bool {
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes it.
    unsafe { libc::clock_gettime(clock, ts) == 0 }
}

/// Wall-clock time in ns since the Unix epoch (capture header only).
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The calling thread's OS id (cached per thread: the doorbell path asks for
/// it on every drain, and a syscall each time would dominate).
pub fn gettid() -> u32 {
    thread_local! {
        static TID: u32 = {
            // SAFETY: gettid takes no arguments and cannot fail.
            unsafe { libc::syscall(libc::SYS_gettid) as u32 }
        };
    }
    TID.with(|t| *t)
}

/// Sleep while `*word == expected`, for at most `timeout_ns`.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `word` is a live, 4-byte aligned AtomicU32 for the duration of the
    // call; the kernel only reads it. `ts` is a valid relative timeout. Spurious
    // returns (EINTR, EAGAIN, ETIMEDOUT) are fine: every caller re-checks its
    // condition in a loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

/// Wake every thread sleeping on `word`.
pub fn futex_wake_all(word: &AtomicU32) {
    // SAFETY: `word` is a live AtomicU32; FUTEX_WAKE only uses its address as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// Reserve `len` bytes of zero-filled, read-write anonymous memory that is never
/// unmapped. Pages are only backed once touched (MAP_NORESERVE).
pub fn map_forever(len: usize) -> Option<*mut u8> {
    // SAFETY: an anonymous private mapping with a null hint has no preconditions;
    // the result is checked against MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        None
    } else {
        Some(p as *mut u8)
    }
}

/// Map `len` bytes of zero-filled memory that may later be released with [`unmap`].
pub fn map(len: usize) -> Option<*mut u8> {
    map_forever(len)
}

/// Release a mapping made by [`map`].
///
/// # Safety
/// `ptr`/`len` must be exactly a mapping returned by [`map`], and nothing may
/// access it afterwards.
pub unsafe fn unmap(ptr: *mut u8, len: usize) {
    // SAFETY: the caller guarantees ptr/len name one of our mappings that is no
    // longer referenced.
    unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
}

/// Give the pages of `ptr..ptr+len` back to the kernel (`MADV_DONTNEED`):
/// they read as zeros afterwards and are backed again when touched.
///
/// # Safety
/// The range must lie inside a private anonymous mapping of ours, and
/// all-zero bytes must be a valid value for everything stored there (any
/// reference into it keeps pointing at mapped memory, whose contents become
/// zero as if another thread had written them, so only atomics or data no
/// reference is held to may live there).
pub unsafe fn discard(ptr: *mut u8, len: usize) {
    // SAFETY: per the contract, the range is our own anonymous mapping and
    // zero-filling it breaks no Rust invariant.
    unsafe { libc::madvise(ptr as *mut libc::c_void, len, libc::MADV_DONTNEED) };
}

/// The process id.
pub fn getpid() -> u32 {
    std::process::id()
}

/// Whether the page holding `addr` is mapped in this process (any
/// protection, resident or not), asked with `mincore`, which never touches
/// the page: an unmapped page is `ENOMEM`. Used only to tell host memory of
/// the process (heap, stack, mappings) from addresses nothing maps; it says
/// nothing about whether the bytes are readable.
pub fn page_mapped(addr: u64) -> bool {
    const PAGE: u64 = 4096;
    let page = addr & !(PAGE - 1);
    if page == 0 {
        return false;
    }
    let mut vec = 0u8;
    // SAFETY: mincore only inspects the kernel's page tables for
    // `page..page+PAGE` (a page-aligned start, one page) and writes one byte
    // into `vec`, a live local of the size one page needs; it never reads or
    // writes the page itself, so any address is harmless (an unmapped one,
    // or one past the user address space, is an error return).
    let r = unsafe { libc::mincore(page as *mut libc::c_void, PAGE as usize, &mut vec) };
    r == 0
}

/// Reserve `len` bytes of address space that is never accessible (PROT_NONE):
/// unique addresses for agent views of locked host memory.
pub fn reserve(len: usize) -> Option<*mut u8> {
    // SAFETY: an anonymous PROT_NONE mapping with a null hint has no
    // preconditions; the result is checked against MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        None
    } else {
        Some(p as *mut u8)
    }
}

/// Release (part of) a reservation made by [`reserve`].
///
/// # Safety
/// `ptr..ptr+len` must lie inside reservations of ours (from [`reserve`],
/// possibly mapped over by [`map_fd_fixed`]) that nothing uses any more: no
/// Rust reference points into it and no other part of SoftGPU will hand the
/// range out or map over it afterwards. (`munmap` of an arbitrary range
/// would unmap memory Rust or the program still uses.)
pub unsafe fn release(ptr: *mut u8, len: usize) {
    // SAFETY: the caller guarantees the range is a reservation of ours that
    // nothing references; unmapping it invalidates nothing in use.
    unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
}

/// An anonymous memory file of `size` bytes (physical memory for vmem).
pub fn memfd(size: u64) -> Option<i32> {
    // SAFETY: the name is a valid NUL-terminated string; the result is checked.
    let fd = unsafe { libc::memfd_create(c"softgpu-vmem".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` is the descriptor just created and owned here.
    if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
        // SAFETY: `fd` was created above, is owned only here and is not used again.
        unsafe { close(fd) };
        return None;
    }
    Some(fd)
}

/// Close a descriptor SoftGPU owns.
///
/// # Safety
/// `fd` must be a descriptor SoftGPU created (or duplicated) and still owns,
/// and nothing may use it afterwards: closing a descriptor someone else owns
/// (the program's, the capture file's) would let its number be reused under
/// them (I/O safety).
pub unsafe fn close(fd: i32) {
    // SAFETY: per the contract, `fd` is ours and unused after this.
    unsafe { libc::close(fd) };
}

/// Duplicate a descriptor.
pub fn dup(fd: i32) -> Option<i32> {
    // SAFETY: dup has no memory-safety preconditions; the result is checked.
    let d = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    (d >= 0).then_some(d)
}

/// Size of the file behind `fd`.
pub fn fd_size(fd: i32) -> Option<u64> {
    // SAFETY: `st` is a valid, writable stat buffer; the result is checked.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; fstat only writes `st`.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_size as u64)
}

/// The inode of the file behind `fd`.
pub fn fd_inode(fd: i32) -> Option<u64> {
    // SAFETY: `st` is a valid, writable stat buffer; the result is checked.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; fstat only writes `st`.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_ino)
}

/// Open `path` for reading and writing (close-on-exec, never creating it, no
/// controlling terminal, and not a FIFO's blocking open), for a file another
/// process shares (`/proc/PID/fd/N`). The descriptor is the caller's to close.
pub fn open_rw(path: &str) -> Option<i32> {
    let c = std::ffi::CString::new(path).ok()?;
    // SAFETY: `c` is a valid NUL-terminated path; the result is checked.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK,
        )
    };
    (fd >= 0).then_some(fd)
}

/// Map `len` bytes of the file `fd` from its start, shared, read-write, at
/// an address the kernel chooses. Release it with [`unmap`].
pub fn map_fd(fd: i32, len: usize) -> Option<*mut u8> {
    // SAFETY: a new shared mapping with a null hint replaces nothing; the
    // result is checked against MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as *mut u8)
}

/// Which way [`file_transfer`] moves bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FileDirection {
    /// From the file into memory (`pread`).
    Read,
    /// From memory into the file (`pwrite`).
    Write,
}

/// Move up to `len` bytes between the program's file `fd` at `offset` and the
/// memory at `addr`, as `pread`/`pwrite` do, retrying short transfers and
/// `EINTR` until all of it moved, the file ends (a read), or an error. Returns
/// the bytes moved, and the `errno` that stopped it early (0 if none).
///
/// # Safety
/// `addr..addr+len` must be memory SoftGPU allocated for the program (a pool
/// allocation or a vmem mapping: the caller checks it against the tables),
/// valid for the transfer's direction for the whole call; no Rust reference
/// may point into it. The descriptor is the program's: it is only read from
/// or written to, at the program's request, never closed.
pub unsafe fn file_transfer(
    fd: i32,
    addr: u64,
    len: u64,
    offset: i64,
    dir: FileDirection,
) -> (u64, i32) {
    let mut done = 0u64;
    while done < len {
        let chunk = (len - done).min(1 << 30) as usize;
        let at = offset.saturating_add(done as i64) as libc::off_t;
        let p = (addr + done) as *mut libc::c_void;
        // SAFETY: per the contract, `p..p+chunk` lies inside `addr..addr+len`,
        // valid for the direction's access; the kernel reads or writes it.
        let n = unsafe {
            match dir {
                FileDirection::Read => libc::pread(fd, p, chunk, at),
                FileDirection::Write => libc::pwrite(fd, p, chunk, at),
            }
        };
        if n < 0 {
            let e = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if e == libc::EINTR {
                continue;
            }
            return (done, e);
        }
        if n == 0 {
            break; // end of file (read) or nothing accepted (write)
        }
        done += n as u64;
    }
    (done, 0)
}

fn prot(permissions: u32) -> i32 {
    match permissions {
        1 => libc::PROT_READ,
        2 => libc::PROT_WRITE,
        3 => libc::PROT_READ | libc::PROT_WRITE,
        _ => libc::PROT_NONE,
    }
}

/// Map `fd` at the fixed address `va`.
///
/// # Safety
/// `va..va+len` must lie inside one of SoftGPU's own reservations
/// (`runtime::vmem` checks it), so MAP_FIXED replaces only memory SoftGPU
/// reserved and no Rust reference points into.
pub unsafe fn map_fd_fixed(va: u64, len: usize, fd: i32, offset: u64, permissions: u32) -> bool {
    // SAFETY: the function's contract: the range is SoftGPU's reservation
    // (PROT_NONE or a previous vmem mapping), never memory Rust references.
    let p = unsafe {
        libc::mmap(
            va as *mut libc::c_void,
            len,
            prot(permissions),
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            offset as libc::off_t,
        )
    };
    p != libc::MAP_FAILED
}

/// Turn `va..va+len` (inside a SoftGPU reservation) back into an inaccessible reservation.
///
/// # Safety
/// As for [`map_fd_fixed`]: the range lies inside a reservation of ours that
/// no Rust reference points into.
pub unsafe fn reserve_fixed(va: u64, len: usize) -> bool {
    // SAFETY: the function's contract: the range is ours and unreferenced.
    let p = unsafe {
        libc::mmap(
            va as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    p != libc::MAP_FAILED
}

/// Change the protection of a vmem mapping (inside a SoftGPU reservation).
///
/// # Safety
/// The range must be one of SoftGPU's vmem mappings, which no Rust reference
/// points into (taking access away from memory Rust reads would fault).
pub unsafe fn protect(va: u64, len: usize, permissions: u32) -> bool {
    // SAFETY: the function's contract: a vmem mapping no Rust reference uses.
    unsafe { libc::mprotect(va as *mut libc::c_void, len, prot(permissions)) == 0 }
}

/// Registers `hook` to run at process exit (`atexit`). False if the C library
/// refused. Sound for any `extern "C" fn()`: the shim is never unloaded, so
/// the function stays mapped for the life of the process.
pub fn at_exit(hook: extern "C" fn()) -> bool {
    // SAFETY: `hook` is a plain function with no arguments and no
    // preconditions, mapped for the life of the process (see above).
    unsafe { libc::atexit(hook) == 0 }
}

/// Registers `hook` as a child-side `fork` handler (`pthread_atfork` with no
/// prepare or parent handler). False if the C library refused. The hook runs
/// in the child right after `fork`, where only async-signal-safe work is
/// allowed: that is the hook's obligation (it is safe code; the runtime's
/// hook only stores to atomics and replaces a mapping with one `mmap`).
pub fn in_fork_child(hook: extern "C" fn()) -> bool {
    // SAFETY: null prepare and parent handlers are allowed; `hook` is a plain
    // function mapped for the life of the process.
    unsafe { libc::pthread_atfork(None, None, Some(hook)) == 0 }
}
