//! Forwarding to a real ROCr below the shim (`intercept` and `observe` modes).
//!
//! **Resolution.** At the first `hsa_init` in a forwarding mode the real
//! runtime's functions are resolved once, eagerly, in the library that
//! [`crate::real::find`] finds. Each entry point's address is kept in its
//! `table::real` slot; a function the real runtime lacks stays 0 and its
//! calls fail closed with an error naming it. The runtime reaches this module
//! only through the [`crate::real::Below`] interface ([`FORWARD`]), which the
//! library constructor registers.
//!
//! **Routing.** Every export's trampoline reads its `table::slot`: non-zero
//! means "tail-jump to the real function". [`install`] fills the slots of the
//! entries whose row in the entry-point table (`super::entry_points!`) answers
//! `Real` in the mode, and leaves 0 in those the shim must see (`Shim`): the
//! lifecycle, the queues (intercept), the doorbell stores, executable freezing
//! (to learn kernel names) and the callback iterators (to count re-entry).
//! Those shim functions forward whatever is not the shim's own through
//! [`call_real!`], which calls through the entry's generated signature.
//!
//! **Re-entry.** A call into the real runtime made through [`call_real!`]
//! raises a per-thread depth; a shim-answered export entered while the depth
//! is non-zero (a callback of `hsa_iterate_agents`, or a tools library the real
//! `hsa_init` loads) counts a re-entry and is answered at once, by handle: no
//! shim lock is ever held across a call into the real runtime.
//!
//! **Counting.** With `SOFTGPU_CALL_COUNTS=PATH` set, every export counts the
//! calls it receives and the calls it forwards, and each copy of the library
//! in the process appends one JSON line to PATH at exit (see [`write_counts`]).
//! The tests load a second copy of SoftGPU as the "real" runtime and check
//! that every forwarded call arrived there.

#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{CStr, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::Answer;

use crate::abi::{AgentInfo, HsaAgent, HsaSignal, SymbolInfo};
use crate::config::Mode;
use crate::lifecycle;
pub use crate::real::{RealAgent, RealKernel, Resolved};

/// Set at load when `SOFTGPU_CALL_COUNTS` is set: the trampolines count calls.
/// Read by the trampolines as one byte.
pub static COUNTING: AtomicBool = AtomicBool::new(false);

/// The environment variable naming the call-count report file.
pub const CALL_COUNTS_VAR: &CStr = c"SOFTGPU_CALL_COUNTS";

/// Calls into the shim made while the same thread was inside a call into the
/// real runtime.
pub static REENTRIES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The mode now in force (never `Auto`): the lifecycle word's.
#[inline]
pub fn active() -> Mode {
    lifecycle::mode()
}

/// Whether a real runtime is below the shim (intercept or observe).
#[inline]
pub fn forwarding() -> bool {
    lifecycle::forwarding()
}

#[inline]
pub fn intercepting() -> bool {
    lifecycle::intercepting()
}

#[inline]
pub fn observing() -> bool {
    lifecycle::observing()
}

/// Called at the top of shim-answered exports in a forwarding mode: counts a
/// re-entry when this thread is inside a call into the real runtime. Returns
/// whether it is.
#[inline]
pub fn note_entry() -> bool {
    if !forwarding() {
        return false;
    }
    let inside = DEPTH.with(|d| d.get()) > 0;
    if inside {
        REENTRIES.fetch_add(1, Ordering::Relaxed);
    }
    inside
}

/// Whether this thread is inside a call into the real runtime.
#[inline]
pub fn inside_real_call() -> bool {
    DEPTH.with(|d| d.get()) > 0
}

/// Marks a call into the real runtime for its duration (re-entry detection).
pub struct RealCall(());

impl RealCall {
    #[inline]
    pub fn enter(forwarded: &AtomicU64) -> RealCall {
        if COUNTING.load(Ordering::Relaxed) {
            forwarded.fetch_add(1, Ordering::Relaxed);
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        RealCall(())
    }
}

impl Drop for RealCall {
    #[inline]
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Log a call to a function the real runtime lacks.
#[cold]
pub fn missing(name: &'static str) {
    tracing::error!(
        "softgpu: {name}: the real HSA runtime below the shim does not provide this function; returning an error"
    );
}

/// Call the real runtime's `$name` with the program's arguments, through the
/// entry's generated C signature (`signatures::$name`). Evaluates to
/// `Some(result)`, or `None` (after logging) when the real runtime lacks it.
macro_rules! call_real {
    ($name:ident($($a:expr),* $(,)?)) => {{
        let p = $crate::interpose::table::real::$name.load(::std::sync::atomic::Ordering::Acquire);
        if p == 0 {
            $crate::interpose::forward::missing(stringify!($name));
            None
        } else {
            let _call = $crate::interpose::forward::RealCall::enter(
                &$crate::interpose::table::forwarded::$name,
            );
            // SAFETY: `p` was resolved by dlsym for this exact name from the
            // real HSA runtime, and `signatures::$name` is that function's C
            // signature, generated from the pinned headers, so the transmute
            // yields the right function type. The arguments have the types of
            // that signature (the compiler checks them) and are the caller's
            // own, passed under that function's contract.
            Some(unsafe {
                let f: $crate::interpose::signatures::$name = ::std::mem::transmute(p);
                f($($a),*)
            })
        }
    }};
}
pub(crate) use call_real;

/// Under `cfg(softgpu_bless)` only (a row whose signature is not generated
/// yet): the stand-in every entry then shares. Never installed in a real build.
#[cfg(softgpu_bless)]
pub extern "C" fn untyped_missing() -> u32 {
    missing("(an entry without a generated signature)");
    crate::abi::HsaStatus::ERROR.0
}

/// Resolve every entry point in the real runtime, once. Fills `table::real`.
pub fn resolve() -> Result<Resolved, String> {
    let lib = crate::real::find()?;
    let mut found = 0;
    let mut missing = Vec::new();
    for e in super::table::ENTRIES {
        let p = lib.symbol(e.name);
        e.real.store(p, Ordering::Release);
        if p == 0 {
            missing.push(e.name);
        } else {
            found += 1;
        }
    }
    Ok(Resolved {
        source: lib.source,
        found,
        missing,
    })
}

/// Route the pass-through entries of `mode` to the real runtime. Entries the
/// real runtime lacks get their generated stand-in, which names them.
pub fn install(mode: Mode) {
    for e in super::table::ENTRIES {
        e.slot.store(
            slot_target(e.answer(mode), e.real.load(Ordering::Acquire), e.missing),
            Ordering::Release,
        );
    }
    lifecycle::set_mode(mode);
}

/// Where an entry's trampoline goes for `answer`: 0 (the shim's own
/// function), the real function at `real`, or, when the real runtime lacks
/// it, the entry's typed stand-in (`missing`).
fn slot_target(answer: Answer, real: usize, missing: fn() -> usize) -> usize {
    match answer {
        Answer::Shim | Answer::FailClosed => 0,
        Answer::Real if real == 0 => missing(),
        Answer::Real => real,
    }
}

/// Back to the virtual runtime: every slot 0.
pub fn uninstall() {
    lifecycle::set_mode(Mode::Virtual);
    for e in super::table::ENTRIES {
        e.slot.store(0, Ordering::Release);
    }
}

/// Read `SOFTGPU_CALL_COUNTS` at load (called from the library constructor).
pub fn init_counting_from_env() {
    // SAFETY: getenv with a NUL-terminated name; called from the load-time
    // constructor before any thread of ours exists.
    let set = unsafe { !libc::getenv(CALL_COUNTS_VAR.as_ptr()).is_null() };
    COUNTING.store(set, Ordering::Relaxed);
}

/// Append this copy's counts to `SOFTGPU_CALL_COUNTS` as one JSON line:
/// `{"pid", "role" ("shim" or "lower"), "mode", "reentries", "received": {name: n},
/// "forwarded": {name: n}}` (zero counts omitted).
pub fn write_counts(role: &str, mode: &str) {
    if !COUNTING.load(Ordering::Relaxed) {
        return;
    }
    let Some(path) = std::env::var_os("SOFTGPU_CALL_COUNTS") else {
        return;
    };
    let mut received = serde_json::Map::new();
    let mut forwarded = serde_json::Map::new();
    for e in super::table::ENTRIES {
        let r = e.received.load(Ordering::Relaxed);
        if r > 0 {
            received.insert(e.name.into(), r.into());
        }
        let f = e.forwarded.load(Ordering::Relaxed);
        if f > 0 {
            forwarded.insert(e.name.into(), f.into());
        }
    }
    let line = serde_json::json!({
        "pid": std::process::id(),
        "role": role,
        "mode": mode,
        "reentries": REENTRIES.load(Ordering::Relaxed),
        "received": received,
        "forwarded": forwarded,
    });
    let mut text = line.to_string();
    text.push('\n');
    use std::io::Write;
    let r = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = r {
        eprintln!(
            "softgpu: cannot write SOFTGPU_CALL_COUNTS file {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}

// ------------------------------------------------------------ typed real calls

/// # Safety
/// `agent` is an agent handle of the real runtime, and `T` has the size ROCr
/// writes for `attr` (the real runtime writes that many bytes into it).
unsafe fn agent_info<T: Copy>(agent: u64, attr: AgentInfo, init: T) -> Option<T> {
    let mut v = init;
    let st = call_real!(hsa_agent_get_info(
        HsaAgent { handle: agent },
        attr.0,
        &mut v as *mut T as *mut c_void
    ))?;
    (st == 0).then_some(v)
}

/// The real runtime's agents, in its iteration order.
pub fn real_agents() -> Vec<RealAgent> {
    unsafe extern "C" fn collect(agent: HsaAgent, data: *mut c_void) -> u32 {
        // SAFETY: `data` is the `&mut Vec<u64>` passed to hsa_iterate_agents
        // below, alive and exclusively ours for the duration of the call.
        let v = unsafe { &mut *(data as *mut Vec<u64>) };
        v.push(agent.handle);
        0
    }
    let mut handles: Vec<u64> = Vec::new();
    let st = call_real!(hsa_iterate_agents(
        Some(collect),
        &mut handles as *mut Vec<u64> as *mut c_void
    ));
    if st != Some(0) {
        tracing::warn!("softgpu: the real runtime's hsa_iterate_agents failed: {st:?}");
    }
    handles
        .into_iter()
        .map(|h| {
            // SAFETY: (each agent_info below) `h` came from the real
            // runtime's own hsa_iterate_agents; NAME and AMD_PRODUCT_NAME
            // are 64-byte strings in ROCr, DEVICE and WORKGROUP_MAX_SIZE
            // 32-bit values.
            let u32_info = |attr| unsafe { agent_info(h, attr, 0u32) };
            let text = |attr| {
                // SAFETY: as above.
                unsafe { agent_info(h, attr, [0u8; 64]) }
                    .map(|b| {
                        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                        String::from_utf8_lossy(&b[..n]).into_owned()
                    })
                    .unwrap_or_default()
            };
            let name = text(AgentInfo::NAME);
            let product = text(AgentInfo::AMD_PRODUCT_NAME);
            RealAgent {
                handle: h,
                product,
                gpu: u32_info(AgentInfo::DEVICE) == Some(crate::abi::device_type::GPU),
                name,
                workgroup_max: u32_info(AgentInfo::WORKGROUP_MAX_SIZE).unwrap_or(0),
            }
        })
        .collect()
}

/// # Safety
/// `sym` is a symbol handle of the real runtime, and `T` has the size ROCr
/// writes for `attr`.
unsafe fn symbol_info<T: Copy>(sym: u64, attr: SymbolInfo, init: T) -> Option<T> {
    let mut v = init;
    let st = call_real!(hsa_executable_symbol_get_info(
        sym,
        attr.0,
        &mut v as *mut T as *mut c_void
    ))?;
    (st == 0).then_some(v)
}

/// The kernel symbols of a frozen real executable.
///
/// # Safety
/// `exec` is an executable handle the real runtime handed out (the real
/// runtime dereferences it).
pub unsafe fn real_kernels(exec: u64) -> Vec<RealKernel> {
    unsafe extern "C" fn collect(_exec: u64, sym: u64, data: *mut c_void) -> u32 {
        // SAFETY: `data` is the `&mut Vec<u64>` passed below, alive and
        // exclusively ours for the duration of the iteration.
        let v = unsafe { &mut *(data as *mut Vec<u64>) };
        v.push(sym);
        0
    }
    let mut syms: Vec<u64> = Vec::new();
    let _ = call_real!(hsa_executable_iterate_symbols(
        exec,
        Some(collect),
        &mut syms as *mut Vec<u64> as *mut c_void
    ));
    let mut out = Vec::new();
    for s in syms {
        // SAFETY: (each call below) `s` came from the real runtime's own
        // iteration of `exec`; TYPE, NAME_LENGTH and the segment sizes are
        // 32-bit values in ROCr, AGENT and KERNEL_OBJECT 64-bit.
        let u32_info = |attr| unsafe { symbol_info(s, attr, 0u32) };
        // SAFETY: as above.
        let u64_info = |attr| unsafe { symbol_info(s, attr, 0u64) };
        // SAFETY: as above.
        if unsafe { symbol_info(s, SymbolInfo::TYPE, u32::MAX) }
            != Some(crate::abi::symbol_kind::KERNEL)
        {
            continue;
        }
        let len = u32_info(SymbolInfo::NAME_LENGTH).unwrap_or(0) as usize;
        if len == 0 || len > 1 << 16 {
            continue;
        }
        let mut buf = vec![0u8; len + 1];
        let st = call_real!(hsa_executable_symbol_get_info(
            s,
            SymbolInfo::NAME.0,
            buf.as_mut_ptr() as *mut c_void
        ));
        if st != Some(0) {
            continue;
        }
        buf.truncate(len);
        let name = String::from_utf8_lossy(&buf).into_owned();
        out.push(RealKernel {
            agent: u64_info(SymbolInfo::AGENT).unwrap_or(0),
            name,
            kernel_object: u64_info(SymbolInfo::KERNEL_OBJECT).unwrap_or(0),
            kernarg_size: u32_info(SymbolInfo::KERNEL_KERNARG_SEGMENT_SIZE).unwrap_or(0),
            group_segment_size: u32_info(SymbolInfo::KERNEL_GROUP_SEGMENT_SIZE).unwrap_or(0),
            private_segment_size: u32_info(SymbolInfo::KERNEL_PRIVATE_SEGMENT_SIZE).unwrap_or(0),
        });
    }
    out
}

/// `hsa_signal_load_scacquire` on a real signal. When the real runtime lacks
/// the function: the error value, never 0 (which reads as completed).
///
/// # Safety
/// `h` is a signal of the real runtime (the program's, under the HSA
/// contract of the packet or call that named it): the real runtime
/// dereferences it.
#[inline]
pub unsafe fn signal_load(h: u64) -> i64 {
    call_real!(hsa_signal_load_scacquire(HsaSignal { handle: h }))
        .unwrap_or(crate::runtime::signals::ERROR_VALUE)
}

/// Diagnostic completion of a real signal: an atomic decrement by one.
///
/// # Safety
/// As for [`signal_load`]: `h` is a signal of the real runtime.
#[inline]
pub unsafe fn signal_complete(h: u64) {
    let _ = call_real!(hsa_signal_subtract_screlease(HsaSignal { handle: h }, 1));
}

/// The [`crate::real::Below`] the runtime calls, over this module.
pub struct Forward;

/// Registered by the library constructor.
pub static FORWARD: Forward = Forward;

impl crate::real::Below for Forward {
    fn resolve(&self) -> Result<Resolved, String> {
        resolve()
    }
    fn route(&self, mode: Mode) {
        install(mode);
    }
    fn unroute(&self) {
        uninstall();
    }
    fn init(&self) -> u32 {
        real_init()
    }
    fn shut_down(&self) -> u32 {
        real_shut_down()
    }
    fn agents(&self) -> Vec<RealAgent> {
        real_agents()
    }
    unsafe fn signal_load(&self, signal: u64) -> i64 {
        // SAFETY: the trait method's contract is this function's.
        unsafe { signal_load(signal) }
    }
    unsafe fn signal_complete(&self, signal: u64) {
        // SAFETY: the trait method's contract is this function's.
        unsafe { signal_complete(signal) }
    }
    fn observed(&self) -> crate::real::ObservedCounts {
        super::observe::total_counts()
    }
    fn write_counts(&self, role: &str, mode: &str) {
        write_counts(role, mode)
    }
    fn copy_kernarg(
        &self,
        cache: &mut crate::kernargs::KernargRange,
        shard: usize,
        addr: u64,
        out: &mut [u8],
    ) -> Result<usize, crate::kernargs::KernargReadError> {
        super::passthrough::copy_kernarg(cache, shard, addr, out)
    }
    fn allocations(&self) -> &'static (dyn crate::kernargs::AllocationTable + Sync) {
        &super::passthrough::PassThrough
    }
    fn allocation_events(&self) -> u64 {
        super::passthrough::events()
    }
    fn shadows(&self, name: &str) -> bool {
        super::ENTRY_POINTS.iter().any(|e| e.name == name)
    }
}

/// `hsa_init` of the real runtime.
pub fn real_init() -> u32 {
    call_real!(hsa_init()).unwrap_or(crate::abi::HsaStatus::ERROR.0)
}

/// `hsa_shut_down` of the real runtime.
pub fn real_shut_down() -> u32 {
    call_real!(hsa_shut_down()).unwrap_or(crate::abi::HsaStatus::ERROR.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str) -> &'static super::super::Entry {
        super::super::table::ENTRIES
            .iter()
            .find(|e| e.name == name)
            .unwrap()
    }

    #[test]
    fn a_function_the_real_runtime_lacks_gets_its_typed_stand_in_and_never_the_shims_own() {
        let e = entry("hsa_amd_vmem_set_access");
        // Missing below: the generated stand-in, which returns an error.
        let t = slot_target(e.answer(Mode::Intercept), 0, e.missing);
        assert_eq!(t, (e.missing)());
        assert_eq!(
            t,
            super::super::signatures::missing::hsa_amd_vmem_set_access as *const () as usize
        );
        // Present below: the real function.
        assert_eq!(
            slot_target(e.answer(Mode::Intercept), 0x1234, e.missing),
            0x1234
        );
        // A shim-answered entry never jumps anywhere, real or not.
        let q = entry("hsa_queue_create");
        assert_eq!(slot_target(q.answer(Mode::Intercept), 0x1234, q.missing), 0);
        assert_eq!(slot_target(q.answer(Mode::Observe), 0x1234, q.missing), 0);
    }

    #[test]
    fn a_stand_in_returns_the_failure_value_of_its_entrys_return_type() {
        use super::super::signatures::missing as m;
        use crate::abi::{HsaSignal, HsaStatus, SignalCondition};
        let s = HsaSignal { handle: 0x1234 };
        // SAFETY: the stand-ins read none of their pointer arguments.
        unsafe {
            assert_eq!(
                m::hsa_amd_vmem_map(std::ptr::null_mut(), 0, 0, 0, 0),
                HsaStatus::ERROR.0
            );
            // A wait never reads as satisfied: LT 1 is what HIP waits for.
            let v = m::hsa_signal_wait_scacquire(s, SignalCondition::LT.0, 1, u64::MAX, 0);
            assert!(!crate::runtime::signals::satisfied(
                SignalCondition::LT,
                v,
                1
            ));
            let v = m::hsa_signal_wait_scacquire(s, SignalCondition::EQ.0, 0, u64::MAX, 0);
            assert_ne!(v, 0);
            assert_ne!(m::hsa_signal_load_scacquire(s), 0);
            // An index operation never hands out a slot.
            assert_eq!(
                m::hsa_queue_add_write_index_screlease(std::ptr::null_mut(), 1),
                u64::MAX
            );
            assert_eq!(
                m::hsa_queue_load_write_index_relaxed(std::ptr::null()),
                u64::MAX
            );
            assert_ne!(
                m::hsa_queue_cas_write_index_relaxed(std::ptr::null_mut(), 5, 6),
                5
            );
            assert_ne!(m::hsa_signal_cas_screlease(s, 5, 6), 5);
            assert_eq!(
                m::hsa_amd_signal_wait_any(
                    1,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                    0,
                    std::ptr::null_mut()
                ),
                u32::MAX
            );
        }
    }

    #[test]
    fn virtual_mode_forwards_nothing_and_intercept_keeps_queues_and_doorbells() {
        for e in super::super::table::ENTRIES {
            assert_ne!(e.answer(Mode::Virtual), Answer::Real, "{}", e.name);
            assert_ne!(e.answer(Mode::Intercept), Answer::FailClosed, "{}", e.name);
            assert_ne!(e.answer(Mode::Observe), Answer::FailClosed, "{}", e.name);
        }
        for name in [
            "hsa_queue_create",
            "hsa_queue_add_write_index_screlease",
            "hsa_signal_store_screlease",
            "hsa_signal_load_scacquire",
            "hsa_executable_freeze",
            "hsa_amd_queue_cu_set_mask",
        ] {
            assert_eq!(entry(name).answer(Mode::Intercept), Answer::Shim, "{name}");
        }
        // Allocations and frees pass through the shim (the pass-through
        // allocation table) in both forwarding modes.
        for name in [
            "hsa_amd_memory_pool_allocate",
            "hsa_amd_memory_pool_free",
            "hsa_memory_allocate",
            "hsa_memory_free",
            "hsa_amd_memory_lock",
            "hsa_amd_memory_lock_to_pool",
            "hsa_amd_memory_unlock",
            "hsa_memory_register",
            "hsa_memory_deregister",
            "hsa_amd_vmem_handle_create",
            "hsa_amd_vmem_handle_release",
            "hsa_amd_vmem_map",
            "hsa_amd_vmem_unmap",
        ] {
            assert_eq!(entry(name).answer(Mode::Intercept), Answer::Shim, "{name}");
            assert_eq!(entry(name).answer(Mode::Observe), Answer::Shim, "{name}");
        }
        for name in [
            "hsa_agent_get_info",
            "hsa_signal_create",
            "hsa_soft_queue_create",
        ] {
            assert_eq!(entry(name).answer(Mode::Intercept), Answer::Real, "{name}");
        }
        // Observe keeps the real queues: only doorbell-capable writes are seen.
        assert_eq!(
            entry("hsa_signal_store_screlease").answer(Mode::Observe),
            Answer::Shim
        );
        assert_eq!(
            entry("hsa_signal_load_scacquire").answer(Mode::Observe),
            Answer::Real
        );
        assert_eq!(
            entry("hsa_queue_add_write_index_screlease").answer(Mode::Observe),
            Answer::Real
        );
    }
}
