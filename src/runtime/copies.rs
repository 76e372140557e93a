//! Copies the runtime performs itself (`hsa_amd_memory_async_copy*`): unlike
//! kernels, these really move the bytes, because the program relies on them
//! and a CPU can do them faithfully.
//!
//! Each copy engine is a thread with a FIFO, like one DMA engine: a job waits
//! until every dependency signal is 0, copies, stamps the completion signal's
//! profiling times, and decrements the completion signal by one. Engines are
//! keyed by (destination agent, source agent) — or by the engine id HIP 6.4
//! passes — and start when first used.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::signals;
use super::{memory, sys};
use crate::abi::SignalCondition;

/// One rectangle to copy: `rows * slices` runs of `width` bytes.
#[derive(Clone, Copy, Debug)]
pub struct Rect {
    pub dst: u64,
    pub dst_pitch: u64,
    pub dst_slice: u64,
    pub src: u64,
    pub src_pitch: u64,
    pub src_slice: u64,
    pub width: u64,
    pub rows: u64,
    pub slices: u64,
}

impl Rect {
    /// A linear copy of `size` bytes.
    pub fn linear(dst: u64, src: u64, size: u64) -> Rect {
        Rect {
            dst,
            dst_pitch: size,
            dst_slice: size,
            src,
            src_pitch: size,
            src_slice: size,
            width: size,
            rows: 1,
            slices: 1,
        }
    }
}

struct Job {
    rect: Rect,
    deps: Vec<u64>,
    completion: u64,
}

struct Engine {
    jobs: Mutex<VecDeque<Job>>,
    /// Futex word: bumped on every push.
    bell: AtomicU32,
}

static ENGINES: OnceLock<Mutex<HashMap<u64, Arc<Engine>>>> = OnceLock::new();

/// Queue a copy on engine `key`. Returns false if the engine thread could not start.
///
/// # Safety
/// Every row of `rect` must satisfy [`copy_now`]'s contract from now until
/// the copy has run (the completion signal is decremented): the engine
/// thread performs it later, after the dependencies reach 0.
pub unsafe fn submit(key: u64, rect: Rect, deps: Vec<u64>, completion: u64) -> bool {
    let engines = ENGINES.get_or_init(|| Mutex::new(HashMap::new()));
    let engine = {
        let mut map = engines.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&key) {
            Some(e) => e.clone(),
            None => {
                let e = Arc::new(Engine {
                    jobs: Mutex::new(VecDeque::new()),
                    bell: AtomicU32::new(0),
                });
                let worker = e.clone();
                let started = crate::sys::spawn_shielded(
                    std::thread::Builder::new().name(format!("softgpu-copy-{key}")),
                    move || run(worker),
                )
                .is_ok();
                if !started {
                    return false;
                }
                map.insert(key, e.clone());
                e
            }
        }
    };
    engine
        .jobs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push_back(Job {
            rect,
            deps,
            completion,
        });
    engine.bell.fetch_add(1, Ordering::SeqCst);
    sys::futex_wake_all(&engine.bell);
    true
}

fn run(engine: Arc<Engine>) {
    loop {
        let seen = engine.bell.load(Ordering::SeqCst);
        let job = engine
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        let Some(job) = job else {
            sys::futex_wait(&engine.bell, seen, 100_000_000);
            continue;
        };
        for &d in &job.deps {
            // A dependency that is not a live signal was rejected at submit.
            if let Some(s) = signals::lookup(d) {
                while signals::wait(s, SignalCondition::LT, 1, u64::MAX) >= 1 {}
            }
        }
        let start = sys::now_ns();
        // SAFETY: `submit`'s caller guaranteed the rectangle stays valid
        // until this copy has run.
        unsafe { copy_now(&job.rect) };
        let end = sys::now_ns();
        if let Some(s) = signals::lookup(job.completion) {
            s.start_ts.store(start, Ordering::Relaxed);
            s.end_ts.store(end, Ordering::Relaxed);
            s.value.fetch_sub(1, Ordering::Release);
            signals::notify_change();
        }
    }
}

/// Copy a rectangle now, on the calling thread. Agent addresses of locked
/// memory are translated back to host addresses first.
///
/// # Safety
/// For every slice `z < slices` and row `y < rows`, the `width` bytes at
/// `src + z*src_slice + y*src_pitch` must be readable and those at
/// `dst + z*dst_slice + y*dst_pitch` writable, once each row's start is
/// translated by [`memory::to_host`] (host memory, or an agent address of
/// locked memory whose whole row lies in the locked range), with nothing
/// else accessing the destination meanwhile. This is the contract of the HSA
/// copy functions, which is why their exports may call this with the
/// program's arguments.
pub unsafe fn copy_now(r: &Rect) {
    for z in 0..r.slices {
        for y in 0..r.rows {
            let d = memory::to_host(r.dst + z * r.dst_slice + y * r.dst_pitch);
            let s = memory::to_host(r.src + z * r.src_slice + y * r.src_pitch);
            if r.width == 0 {
                continue;
            }
            // SAFETY: the function's contract: after translation both rows are
            // valid for `width` bytes. `ptr::copy` tolerates overlapping ranges.
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, r.width as usize) };
        }
    }
}

/// Fill `count` 32-bit words at `ptr` with `value`, now.
///
/// # Safety
/// `ptr`, translated by [`memory::to_host`], must be 4-byte aligned and
/// writable for `count` words, with nothing else accessing them meanwhile
/// (`hsa_amd_memory_fill`'s contract).
pub unsafe fn fill_now(ptr: u64, value: u32, count: u64) {
    let p = memory::to_host(ptr) as *mut u32;
    for i in 0..count as usize {
        // SAFETY: the function's contract: `p` is aligned and valid for
        // `count` words.
        unsafe { p.add(i).write(value) };
    }
}
