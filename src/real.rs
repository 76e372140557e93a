//! The real HSA runtime below the shim (`intercept` and `observe` modes), as
//! both the runtime and the exports see it.
//!
//! This module sits below [`crate::runtime`] and [`crate::interpose`]:
//!
//! - **Finding it**: [`find`] looks for a real ROCr once, through the dynamic
//!   loader: the `libhsa-runtime64.so.1` already loaded (when that is not the
//!   shim itself), else the next definition of `hsa_init` after the shim
//!   (`RTLD_NEXT`). [`Library::symbol`] then resolves one function by name,
//!   never to the shim's own copy. [`shadowed`] says whether this copy of
//!   SoftGPU is itself below another definition of `hsa_init` (a stand-in for
//!   ROCr, as the tests load it).
//! - **Talking to it**: the runtime needs a few calls into it (its `hsa_init`
//!   and `hsa_shut_down`, its agents, loading and decrementing a real signal)
//!   and needs the exports' routing switched when the mode is decided. Those
//!   go through the [`Below`] interface, which the exports' forwarding layer
//!   implements over its table of entry points and registers at load
//!   ([`register`]), so the runtime never names the exports.
//!
//! The unsafe code here is the `dlopen`/`dlsym`/`dladdr` calls (see
//! `docs/UNSAFE.md`).
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_void};
use std::sync::OnceLock;

use crate::config::Mode;

/// One agent of the real runtime.
#[derive(Clone, Debug)]
pub struct RealAgent {
    pub handle: u64,
    pub gpu: bool,
    /// `HSA_AGENT_INFO_NAME` (`gfx90a`, or the CPU's name).
    pub name: String,
    /// `HSA_AMD_AGENT_INFO_PRODUCT_NAME` (empty if not answered).
    pub product: String,
    /// `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE` (0 if not answered).
    pub workgroup_max: u32,
}

/// One kernel symbol of a real executable.
#[derive(Clone, Debug)]
pub struct RealKernel {
    pub agent: u64,
    pub name: String,
    pub kernel_object: u64,
    pub kernarg_size: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
}

/// Totals of observe mode for the exit summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct ObservedCounts {
    /// Every packet that is not a barrier (as the CLI counts them).
    pub dispatches: u64,
    /// Packets the processor would have rejected (they were forwarded anyway).
    pub rejected: u64,
    pub barriers: u64,
}

/// Where the real runtime was found, and what of it was resolved.
#[derive(Debug)]
pub struct Resolved {
    pub source: String,
    pub found: usize,
    pub missing: Vec<&'static str>,
}

/// What the runtime asks of the real runtime below. Implemented by the
/// exports' forwarding layer (`interpose::forward`), which owns the table of
/// entry points, and registered at load with [`register`].
pub trait Below: Sync {
    /// Find the real runtime and resolve every entry point in it.
    fn resolve(&self) -> Result<Resolved, String>;
    /// Route the exports for `mode`: pass-through entries to the real
    /// runtime, the rest to the shim.
    fn route(&self, mode: Mode);
    /// Route every export to the shim again (the real runtime is unusable).
    fn unroute(&self);
    /// The real `hsa_init`.
    fn init(&self) -> u32;
    /// The real `hsa_shut_down`.
    fn shut_down(&self) -> u32;
    /// The real runtime's agents, in its iteration order.
    fn agents(&self) -> Vec<RealAgent>;
    /// `hsa_signal_load_scacquire` on a real signal; when the real runtime
    /// lacks the function, a value that never reads as completed.
    ///
    /// # Safety
    /// `signal` is a signal handle of the real runtime (the program's, under
    /// the HSA contract of the packet or call that named it): the real
    /// runtime dereferences it.
    unsafe fn signal_load(&self, signal: u64) -> i64;
    /// Diagnostic completion of a real signal: an atomic decrement by one.
    ///
    /// # Safety
    /// As for [`Below::signal_load`].
    unsafe fn signal_complete(&self, signal: u64);
    /// Observe mode's totals so far, over every real queue watched.
    fn observed(&self) -> ObservedCounts;
    /// Append this copy's call counts (`SOFTGPU_CALL_COUNTS`), at exit.
    fn write_counts(&self, role: &str, mode: &str);
    /// Copy a dispatch's kernarg bytes at `addr` into `out`, from memory the
    /// shim saw the real runtime allocate and knows the CPU may read (the
    /// pass-through table); `cache` and `shard` as for
    /// [`crate::runtime::memory::copy_kernarg`].
    fn copy_kernarg(
        &self,
        cache: &mut crate::kernargs::KernargRange,
        shard: usize,
        addr: u64,
        out: &mut [u8],
    ) -> Result<usize, crate::kernargs::KernargReadError>;
    /// The allocations that passed through the shim, for the pointer checks.
    fn allocations(&self) -> &'static (dyn crate::kernargs::AllocationTable + Sync);
    /// Allocation and free events of that table so far.
    fn allocation_events(&self) -> u64;
    /// Whether the shim exports `name` (it has a row in the entry-point
    /// table), so that the dynamic linker binds a program's calls to it to
    /// the shim and never to the real runtime.
    fn shadows(&self, name: &str) -> bool;
}

static BELOW: OnceLock<&'static dyn Below> = OnceLock::new();

/// Register the [`Below`] implementation (once, at load).
pub fn register(below: &'static dyn Below) {
    let _ = BELOW.set(below);
}

/// The registered [`Below`], if any (none in unit tests of the runtime: then
/// there is no real runtime to find).
#[inline]
pub fn below() -> Option<&'static dyn Below> {
    BELOW.get().copied()
}

const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();
const RTLD_NOLOAD: i32 = 4;

/// Base address of the object that contains `addr`, or 0.
fn object_base(addr: *const c_void) -> usize {
    if addr.is_null() {
        return 0;
    }
    // SAFETY: dladdr only reads the loader's tables for `addr` (any value is
    // allowed) and writes the Dl_info we own; a zeroed Dl_info is a valid
    // value for it to overwrite.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr, &mut info) == 0 {
            return 0;
        }
        info.dli_fbase as usize
    }
}

/// Base address of this copy of SoftGPU.
fn own_base() -> usize {
    object_base(own_base as *const c_void)
}

/// `dlvsym(name, "ROCR_1")`, else `dlsym(name)`, in `handle`; 0 if absent.
fn lookup(handle: Handle, name: &str) -> usize {
    let Ok(c) = CString::new(name) else { return 0 };
    // SAFETY: `handle.0` is RTLD_DEFAULT, RTLD_NEXT or a handle returned by
    // dlopen that is never closed (the only ways a `Handle` is made); both
    // strings are NUL-terminated and outlive the calls, which only read the
    // loader's tables.
    unsafe {
        let p = libc::dlvsym(handle.0, c.as_ptr(), c"ROCR_1".as_ptr());
        if !p.is_null() {
            return p as usize;
        }
        libc::dlsym(handle.0, c.as_ptr()) as usize
    }
}

/// The file name of the object containing `addr`.
fn object_name(addr: usize) -> Option<String> {
    // SAFETY: as in object_base; dli_fname, when non-null, is a NUL-terminated
    // string owned by the loader for as long as the object stays loaded, and
    // it is copied before returning.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(
            CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned(),
        )
    }
}

/// A loader handle: RTLD_DEFAULT, RTLD_NEXT, or a dlopen handle never closed.
#[derive(Clone, Copy)]
struct Handle(*mut c_void);

/// The real runtime, found.
pub struct Library {
    handle: Handle,
    own: usize,
    /// Its file, for messages.
    pub source: String,
}

impl Library {
    /// The real runtime's `name`, or 0 when it lacks it (or it would be the
    /// shim's own function: never forward to ourselves).
    pub fn symbol(&self, name: &str) -> usize {
        let p = lookup(self.handle, name);
        if p != 0 && object_base(p as *const c_void) == self.own {
            0
        } else {
            p
        }
    }
}

/// Whether this copy of SoftGPU is *below* another definition of `hsa_init`
/// (a second copy loaded as the "real" runtime, as the tests do). Such a copy
/// acts as a plain virtual runtime: no capture, no exit summary.
pub fn shadowed() -> bool {
    let first = lookup(Handle(RTLD_DEFAULT), "hsa_init");
    first != 0 && object_base(first as *const c_void) != own_base()
}

/// The file of the real `libhsa-runtime64.so.1` this process has loaded
/// (a program linked against ROCr loads it, even when the shim answers every
/// call), or None when none is loaded or that library is this copy of
/// SoftGPU itself. Loads nothing.
pub fn loaded_rocr_file() -> Option<String> {
    // SAFETY: RTLD_NOLOAD only returns a handle to an object already loaded
    // (it never loads one or runs constructors); the name is NUL-terminated.
    // The handle is never closed (as in `find`).
    let loaded = unsafe {
        libc::dlopen(
            c"libhsa-runtime64.so.1".as_ptr(),
            libc::RTLD_NOW | RTLD_NOLOAD,
        )
    };
    if loaded.is_null() {
        return None;
    }
    let init = lookup(Handle(loaded), "hsa_init");
    if init == 0 || object_base(init as *const c_void) == own_base() {
        return None;
    }
    object_name(init)
}

/// Find the real runtime (see the module documentation).
pub fn find() -> Result<Library, String> {
    let own = own_base();
    // SAFETY: RTLD_NOLOAD only returns a handle to an object already loaded
    // (it never loads one or runs constructors); the name is NUL-terminated.
    // The handle is never closed.
    let loaded = unsafe {
        libc::dlopen(
            c"libhsa-runtime64.so.1".as_ptr(),
            libc::RTLD_NOW | RTLD_NOLOAD,
        )
    };
    let candidates = [
        (!loaded.is_null()).then_some((Handle(loaded), "libhsa-runtime64.so.1")),
        Some((Handle(RTLD_NEXT), "the next hsa_init after the shim")),
    ];
    for (handle, what) in candidates.into_iter().flatten() {
        let init = lookup(handle, "hsa_init");
        if init != 0 && object_base(init as *const c_void) != own {
            return Ok(Library {
                handle,
                own,
                source: object_name(init).unwrap_or_else(|| what.into()),
            });
        }
    }
    Err(
        "no real HSA runtime: libhsa-runtime64.so.1 is not loaded (or is SoftGPU itself) and no hsa_init follows the shim"
            .into(),
    )
}
