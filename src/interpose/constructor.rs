//! The library's load-time constructor (an `.init_array` entry): the one
//! thing the shim does before `hsa_init`.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

#[cfg(not(test))]
use super::forward;

#[cfg(not(test))]
use crate::runtime;

/// The load-time constructor: sets [`runtime::HIP_BLIT_COPY_VAR`] to 0 when
/// unset, reads `SOFTGPU_CALL_COUNTS` and registers the forwarding layer as
/// the runtime's way to the real runtime below ([`crate::real::register`]);
/// nothing else (no threads, no files).
#[cfg(not(test))]
extern "C" fn at_load() {
    // SAFETY: shared-library constructors run while the dynamic loader holds
    // its lock, before the program's main and before any thread of ours
    // exists; getenv/setenv on a NUL-terminated name and value are sound then.
    // overwrite=0 keeps any value the user set.
    unsafe {
        if libc::getenv(runtime::HIP_BLIT_COPY_VAR.as_ptr()).is_null() {
            libc::setenv(runtime::HIP_BLIT_COPY_VAR.as_ptr(), c"0".as_ptr(), 0);
        }
    }
    forward::init_counting_from_env();
    crate::real::register(&forward::FORWARD);
}

#[cfg(not(test))]
#[used]
#[unsafe(link_section = ".init_array")]
static AT_LOAD: extern "C" fn() = at_load;
