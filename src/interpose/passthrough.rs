//! The pass-through allocation table (intercept and observe modes).
//!
//! In a forwarding mode the memory is the real runtime's. The shim sees every
//! allocation the program makes through it, because the allocating and
//! freeing entry points are answered by the shim (which forwards them with
//! [`call_real!`] and records what succeeded) instead of jumping straight to
//! the real runtime:
//!
//! | call | entry |
//! | --- | --- |
//! | `hsa_amd_memory_pool_allocate` / `hsa_amd_memory_pool_free` | a pool allocation |
//! | `hsa_memory_allocate` / `hsa_memory_free` | a region allocation |
//! | `hsa_amd_memory_lock`, `hsa_amd_memory_lock_to_pool` / `hsa_amd_memory_unlock` | locked host memory (its host and its agent address) |
//! | `hsa_memory_register` / `hsa_memory_deregister` | registered host memory |
//! | `hsa_amd_vmem_handle_create`, `hsa_amd_vmem_map` / `hsa_amd_vmem_unmap` | a mapped virtual-memory range (the pool of its handle) |
//! | `hsa_amd_ipc_memory_attach` / `hsa_amd_ipc_memory_detach` | another process's memory, mapped here |
//!
//! Each entry has its number (from 1, numbered with the frees: one event
//! counter), its pool, the pool's owner agent and whether the shim knows its
//! bytes to be readable by the CPU. The last [`FREED_KEPT`] frees are kept for
//! naming a use after free.
//!
//! **Readable** means: allocated from a pool (or region) of the global
//! segment whose owner is a CPU agent, as the real runtime itself answers for
//! that pool (its segment and global flags with `*_get_info`, its owner by
//! iterating every agent's pools and regions, once per process; each pool's
//! answer is cached). The kernarg pool HIP allocates its kernel arguments
//! from is such a pool. Nothing else is read: device memory, locked,
//! registered, virtual-memory and IPC-attached memory are known but not read.
//!
//! A kernarg copy ([`copy_kernarg`]) reads only inside a readable entry and
//! never past its end. A free first drains the capture writer (so every
//! record pushed before it is checked against the table as it was), then
//! takes the entry out, then waits for copies in flight before it passes the
//! free on: no copy reads memory the real runtime has released.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use super::forward::call_real;
use crate::abi::{AgentInfo, HsaAgent, PoolInfo, RegionInfo, amd_segment, device_type};
use crate::runtime::memory::{KernargRange, KernargReadError};

/// Where an entry came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Pool,
    Region,
    Locked,
    Registered,
    Vmem,
    Ipc,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    size: u64,
    id: u64,
    source: Source,
    /// The pool (or region) handle, 0 when none.
    pool: u64,
    owner: Option<u64>,
    readable: bool,
    /// Locked memory: the other address of the same lock (0 when none).
    alias: u64,
}

#[derive(Clone, Copy, Debug)]
struct Freed {
    base: u64,
    size: u64,
    id: u64,
    freed_at: u64,
}

/// Allocation and free events, numbered together.
static EVENTS: AtomicU64 = AtomicU64::new(0);
/// Bumped by every free of an entry, before it is passed on.
static FREE_EPOCH: AtomicU64 = AtomicU64::new(0);
#[repr(align(64))]
struct Shard(AtomicU64);
const SHARDS: usize = 16;
/// Kernarg copies in progress, in shards (see `runtime::memory`).
static READERS: [Shard; SHARDS] = [const { Shard(AtomicU64::new(0)) }; SHARDS];

static LIVE: RwLock<BTreeMap<u64, Entry>> = RwLock::new(BTreeMap::new());
/// The most recent frees, keyed by base, with their order for eviction.
static FREED: Mutex<(BTreeMap<u64, Freed>, VecDeque<u64>)> =
    Mutex::new((BTreeMap::new(), VecDeque::new()));
/// Frees kept for naming a use after free.
pub const FREED_KEPT: usize = 65536;

/// Virtual-memory handles: handle -> (pool, size).
static VMEM_HANDLES: Mutex<BTreeMap<u64, (u64, u64)>> = Mutex::new(BTreeMap::new());

/// The number of events so far: the table is unchanged while it is.
pub fn events() -> u64 {
    EVENTS.load(Ordering::SeqCst)
}

// ----------------------------------------------------------------- pool facts

/// What the real runtime says about one pool or region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolFacts {
    pub segment: Option<u32>,
    pub global_flags: Option<u32>,
    /// The agent whose pool (or region) it is, when an agent lists it.
    pub owner: Option<u64>,
    /// Whether that agent is a CPU agent.
    pub owner_is_cpu: bool,
}

impl PoolFacts {
    /// Host memory the CPU may read: the global segment of a CPU agent.
    pub fn host_readable(&self) -> bool {
        self.owner_is_cpu && self.segment == Some(amd_segment::GLOBAL)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PoolKey {
    Pool(u64),
    Region(u64),
}

static POOLS: Mutex<Option<HashMap<PoolKey, PoolFacts>>> = Mutex::new(None);
/// Every agent's pools and regions: key -> (agent, is a CPU agent). Built once.
static OWNERS: Mutex<Option<HashMap<PoolKey, (u64, bool)>>> = Mutex::new(None);

/// The owners of every pool and region, from the real runtime (once; no lock
/// of ours is held while it answers).
fn owner_of(key: PoolKey) -> Option<(u64, bool)> {
    if let Some(m) = OWNERS.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return m.get(&key).copied();
    }
    let built = real_owners();
    let mut g = OWNERS.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert(built).get(&key).copied()
}

fn real_owners() -> HashMap<PoolKey, (u64, bool)> {
    unsafe extern "C" fn collect_u64(h: u64, data: *mut c_void) -> u32 {
        // SAFETY: `data` is the `&mut Vec<u64>` passed with this callback
        // below, alive and exclusively ours for the duration of the call.
        let v = unsafe { &mut *(data as *mut Vec<u64>) };
        v.push(h);
        0
    }
    unsafe extern "C" fn collect_agent(a: HsaAgent, data: *mut c_void) -> u32 {
        // SAFETY: as for `collect_u64`.
        let v = unsafe { &mut *(data as *mut Vec<u64>) };
        v.push(a.handle);
        0
    }
    let mut agents: Vec<u64> = Vec::new();
    let _ = call_real!(hsa_iterate_agents(
        Some(collect_agent),
        &mut agents as *mut Vec<u64> as *mut c_void
    ));
    let mut out = HashMap::new();
    for a in agents {
        let agent = HsaAgent { handle: a };
        let mut dev = u32::MAX;
        let st = call_real!(hsa_agent_get_info(
            agent,
            AgentInfo::DEVICE.0,
            &mut dev as *mut u32 as *mut c_void
        ));
        let cpu = st == Some(0) && dev == device_type::CPU;
        let mut pools: Vec<u64> = Vec::new();
        let _ = call_real!(hsa_amd_agent_iterate_memory_pools(
            agent,
            Some(collect_u64),
            &mut pools as *mut Vec<u64> as *mut c_void
        ));
        for p in pools {
            out.entry(PoolKey::Pool(p)).or_insert((a, cpu));
        }
        let mut regions: Vec<u64> = Vec::new();
        let _ = call_real!(hsa_agent_iterate_regions(
            agent,
            Some(collect_u64),
            &mut regions as *mut Vec<u64> as *mut c_void
        ));
        for r in regions {
            out.entry(PoolKey::Region(r)).or_insert((a, cpu));
        }
    }
    out
}

/// Asks the real runtime for a 32-bit attribute of a pool or region.
fn info_u32(key: PoolKey, attr: u32) -> Option<u32> {
    let mut v = 0u32;
    let p = &mut v as *mut u32 as *mut c_void;
    // The segment and the global flags are 32-bit enums in ROCr, so the
    // real runtime writes 4 bytes into `v`.
    let st = match key {
        PoolKey::Pool(h) => call_real!(hsa_amd_memory_pool_get_info(h, attr, p)),
        PoolKey::Region(h) => call_real!(hsa_region_get_info(h, attr, p)),
    };
    (st == Some(0)).then_some(v)
}

fn facts(key: PoolKey) -> PoolFacts {
    if let Some(f) = POOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&key))
    {
        return *f;
    }
    let (seg, flags) = match key {
        PoolKey::Pool(_) => (PoolInfo::SEGMENT.0, PoolInfo::GLOBAL_FLAGS.0),
        PoolKey::Region(_) => (RegionInfo::SEGMENT.0, RegionInfo::GLOBAL_FLAGS.0),
    };
    let owner = owner_of(key);
    let f = PoolFacts {
        segment: info_u32(key, seg),
        global_flags: info_u32(key, flags),
        owner: owner.map(|o| o.0),
        owner_is_cpu: owner.is_some_and(|o| o.1),
    };
    POOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, f);
    f
}

/// What the shim knows of a pool (asked of the real runtime once, then cached).
pub fn pool_facts(pool: u64) -> PoolFacts {
    facts(PoolKey::Pool(pool))
}

// --------------------------------------------------------------- recording

fn insert(base: u64, mut e: Entry) -> u64 {
    e.id = EVENTS.fetch_add(1, Ordering::SeqCst) + 1;
    LIVE.write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(base, e);
    e.id
}

fn new_entry(size: u64, source: Source, pool: u64, f: Option<PoolFacts>) -> Entry {
    Entry {
        size,
        id: 0,
        source,
        pool,
        owner: f.and_then(|f| f.owner),
        readable: f.is_some_and(|f| f.host_readable()),
        alias: 0,
    }
}

/// A successful `hsa_amd_memory_pool_allocate`.
pub fn allocated_from_pool(ptr: u64, size: u64, pool: u64) {
    if ptr == 0 {
        return;
    }
    let f = pool_facts(pool);
    insert(ptr, new_entry(size, Source::Pool, pool, Some(f)));
}

/// A successful `hsa_memory_allocate`.
pub fn allocated_from_region(ptr: u64, size: u64, region: u64) {
    if ptr == 0 {
        return;
    }
    let f = facts(PoolKey::Region(region));
    insert(ptr, new_entry(size, Source::Region, region, Some(f)));
}

/// A successful `hsa_amd_memory_lock*`: the host range and, when it differs,
/// the agent address range (one allocation number for both). Never read.
pub fn locked(host: u64, agent: u64, size: u64, pool: u64) {
    if host == 0 {
        return;
    }
    let owner = (pool != 0).then(|| pool_facts(pool)).and_then(|f| f.owner);
    let id = EVENTS.fetch_add(1, Ordering::SeqCst) + 1;
    let e = Entry {
        size,
        id,
        source: Source::Locked,
        pool,
        owner,
        readable: false,
        alias: if agent != host { agent } else { 0 },
    };
    let mut live = LIVE.write().unwrap_or_else(|e| e.into_inner());
    live.insert(host, e);
    if agent != 0 && agent != host {
        live.insert(agent, Entry { alias: host, ..e });
    }
}

/// A successful `hsa_memory_register`. Never read.
pub fn registered(ptr: u64, size: u64) {
    if ptr != 0 {
        insert(ptr, new_entry(size, Source::Registered, 0, None));
    }
}

/// A successful `hsa_amd_vmem_handle_create`.
pub fn vmem_handle(handle: u64, pool: u64, size: u64) {
    VMEM_HANDLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(handle, (pool, size));
}

/// A successful `hsa_amd_vmem_handle_release`.
pub fn vmem_handle_released(handle: u64) {
    VMEM_HANDLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&handle);
}

/// A successful `hsa_amd_vmem_map`. Never read (CPU access to a mapping is
/// the program's `hsa_amd_vmem_set_access` to grant, not the pool's).
pub fn vmem_mapped(va: u64, size: u64, handle: u64) {
    if va == 0 {
        return;
    }
    let pool = VMEM_HANDLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&handle)
        .map_or(0, |h| h.0);
    let f = (pool != 0).then(|| pool_facts(pool));
    let mut e = new_entry(size, Source::Vmem, pool, f);
    e.readable = false;
    insert(va, e);
}

/// A successful `hsa_amd_ipc_memory_attach`: another process's memory, of
/// unknown pool. Never read.
pub fn ipc_attached(ptr: u64, len: u64) {
    if ptr != 0 {
        insert(ptr, new_entry(len, Source::Ipc, 0, None));
    }
}

/// An entry taken out of the table by [`begin_free`], to put back if the
/// real runtime refuses the free.
#[derive(Clone, Copy, Debug)]
pub struct Removed {
    entries: [(u64, Option<Entry>); 2],
}

/// Before a free of `base` (of one of `sources`) is passed on: drain the
/// capture writer, take the entry (and a locked range's alias) out, record
/// the free, and wait for kernarg copies in flight. `None` when `base` is no
/// entry of those sources (then nothing waits).
pub fn begin_free(base: u64, sources: &[Source]) -> Option<Removed> {
    let known = LIVE
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&base)
        .is_some_and(|e| sources.contains(&e.source));
    if !known {
        return None;
    }
    // Records still in the capture ring may point into this allocation: let
    // the writer check them against the table as it still is.
    if let Ok(rt) = crate::runtime::get() {
        if let Some(c) = &rt.capture {
            c.drain();
        }
    }
    let mut removed = Removed {
        entries: [(base, None), (0, None)],
    };
    {
        let mut live = LIVE.write().unwrap_or_else(|e| e.into_inner());
        let e = live.remove(&base).filter(|e| sources.contains(&e.source));
        if let Some(e) = e {
            if e.alias != 0 {
                removed.entries[1] = (e.alias, live.remove(&e.alias));
            }
        }
        removed.entries[0].1 = e;
    }
    removed.entries[0].1?;
    let freed_at = EVENTS.fetch_add(1, Ordering::SeqCst) + 1;
    {
        let mut f = FREED.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *f;
        for (b, x) in removed.entries.iter() {
            if let Some(x) = x {
                map.insert(
                    *b,
                    Freed {
                        base: *b,
                        size: x.size,
                        id: x.id,
                        freed_at,
                    },
                );
                order.push_back(*b);
            }
        }
        while order.len() > FREED_KEPT {
            if let Some(old) = order.pop_front() {
                if map.get(&old).is_some_and(|x| x.freed_at < freed_at) {
                    map.remove(&old);
                }
            }
        }
    }
    FREE_EPOCH.fetch_add(1, Ordering::SeqCst);
    for r in &READERS {
        let mut spins = 0u32;
        while r.0.load(Ordering::SeqCst) != 0 {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
    Some(removed)
}

/// The real runtime refused a free: the memory is still the program's, so
/// its entries go back (as live, with their numbers).
pub fn free_refused(r: Removed) {
    let mut live = LIVE.write().unwrap_or_else(|e| e.into_inner());
    let mut freed = FREED.lock().unwrap_or_else(|e| e.into_inner());
    for (b, e) in r.entries {
        if let Some(e) = e {
            live.insert(b, e);
            if freed.0.get(&b).is_some_and(|f| f.id == e.id) {
                freed.0.remove(&b);
            }
        }
    }
}

// ------------------------------------------------------------ kernarg copy

/// Copies up to `out.len()` bytes at `addr` into `out`, if `addr` lies in a
/// readable entry (see the module's doc); returns how many (fewer when the
/// entry ends first). On the doorbell path: no allocation; the table's read
/// lock only when `cache` misses (another entry, or a free since).
pub fn copy_kernarg(
    cache: &mut KernargRange,
    shard: usize,
    addr: u64,
    out: &mut [u8],
) -> Result<usize, KernargReadError> {
    let readers = &READERS[shard % SHARDS].0;
    readers.fetch_add(1, Ordering::SeqCst);
    let epoch = FREE_EPOCH.load(Ordering::SeqCst);
    if !cache.holds(addr, epoch) {
        let found = {
            let live = LIVE.read().unwrap_or_else(|e| e.into_inner());
            live.range(..=addr)
                .next_back()
                .filter(|(b, e)| addr - **b < e.size.max(1) && e.readable)
                .map(|(b, e)| (*b, e.size))
        };
        match found {
            Some((base, size)) if size > 0 => *cache = KernargRange { base, size, epoch },
            _ => {
                readers.fetch_sub(1, Ordering::SeqCst);
                return Err(KernargReadError::NotOurs);
            }
        }
    }
    let n = (out.len() as u64).min(cache.base + cache.size - addr) as usize;
    // SAFETY: `[addr, addr + n)` lies inside an entry of the table that the
    // real runtime allocated from a global-segment pool of a CPU agent (host
    // memory, readable by the CPU: what the real runtime answered for that
    // pool), and the entry was live when `cache` was filled. No free of an
    // entry has been passed on since: the epoch, read after READERS was
    // raised, is unchanged, and a free bumps the epoch and then waits for
    // READERS to reach 0 before it calls the real runtime's free, so the
    // memory stays allocated until the decrement below. `out` is a distinct
    // Rust buffer. The program may be writing the bytes concurrently (a racy
    // program); a byte copy of them is still only bytes.
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), n) };
    readers.fetch_sub(1, Ordering::SeqCst);
    Ok(n)
}

// ---------------------------------------------------------- checker's view

/// The pass-through table as the kernel-argument checker sees it. Access
/// grants are not tracked: every agent may access every entry here, so
/// `pointer_no_access` is not produced.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassThrough;

fn as_allocation(base: u64, e: &Entry) -> crate::kernargs::Allocation {
    crate::kernargs::Allocation {
        id: e.id,
        base,
        size: e.size,
        owner: e.owner,
        freed_at: None,
    }
}

impl crate::kernargs::AllocationTable for PassThrough {
    fn find(&self, address: u64) -> Option<crate::kernargs::Allocation> {
        {
            let live = LIVE.read().unwrap_or_else(|e| e.into_inner());
            if let Some((&b, e)) = live.range(..=address).next_back() {
                if address - b < e.size.max(1) {
                    return Some(as_allocation(b, e));
                }
            }
        }
        let f = FREED.lock().unwrap_or_else(|e| e.into_inner());
        f.0.range(..=address)
            .next_back()
            .map(|(_, e)| *e)
            .filter(|e| address - e.base < e.size.max(1))
            .map(|e| crate::kernargs::Allocation {
                id: e.id,
                base: e.base,
                size: e.size,
                owner: None,
                freed_at: Some(e.freed_at),
            })
    }

    fn preceding(&self, address: u64) -> Option<crate::kernargs::Allocation> {
        let live = LIVE.read().unwrap_or_else(|e| e.into_inner());
        live.range(..=address)
            .next_back()
            .map(|(&b, e)| as_allocation(b, e))
    }

    fn accessible(&self, _allocation: &crate::kernargs::Allocation, _agent: u64) -> bool {
        true
    }
}

/// What the table holds at `addr` (for tests and the log): the entry's
/// source, pool, size, number and whether it is read.
pub fn describe(addr: u64) -> Option<(Source, u64, u64, u64, bool)> {
    let live = LIVE.read().unwrap_or_else(|e| e.into_inner());
    live.range(..=addr)
        .next_back()
        .filter(|(b, e)| addr - **b < e.size.max(1))
        .map(|(_, e)| (e.source, e.pool, e.size, e.id, e.readable))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernargs::{AllocationTable, PointerFinding, check_pointer};

    /// An entry over `buf`, as a pass-through allocation from a host pool.
    fn host_entry(buf: &[u8], readable: bool) -> u64 {
        let base = buf.as_ptr() as u64;
        insert(
            base,
            Entry {
                size: buf.len() as u64,
                id: 0,
                source: Source::Pool,
                pool: 0x1000,
                owner: Some(0x2000),
                readable,
                alias: 0,
            },
        );
        base
    }

    #[test]
    fn a_copy_reads_only_a_readable_entry_and_stops_at_its_end() {
        let mem: Vec<u8> = (0..100u8).collect();
        let base = host_entry(&mem, true);
        let mut cache = KernargRange::default();
        let mut out = [0u8; 64];
        assert_eq!(copy_kernarg(&mut cache, 3, base + 10, &mut out), Ok(64));
        assert_eq!(out[0], 10);
        // 40 bytes are left before the entry's end.
        assert_eq!(copy_kernarg(&mut cache, 3, base + 60, &mut out), Ok(40));
        assert_eq!(&out[..40], &mem[60..]);
        // Past its end: nothing the table knows.
        assert_eq!(
            copy_kernarg(&mut cache, 3, base + 100, &mut out),
            Err(KernargReadError::NotOurs)
        );
        // Known but not readable (device memory, say): never read.
        let dev = vec![7u8; 32];
        let d = host_entry(&dev, false);
        assert_eq!(
            copy_kernarg(&mut KernargRange::default(), 3, d, &mut out),
            Err(KernargReadError::NotOurs)
        );
        assert!(matches!(
            check_pointer(&PassThrough, 0, d + 4),
            PointerFinding::InAllocation { offset: 4, .. }
        ));
    }

    #[test]
    fn a_free_invalidates_cached_ranges_and_is_named_as_a_use_after_free() {
        let mem = vec![1u8; 256];
        let base = host_entry(&mem, true);
        let id = PassThrough.find(base).unwrap().id;
        let mut cache = KernargRange::default();
        let mut out = [0u8; 16];
        assert_eq!(copy_kernarg(&mut cache, 5, base, &mut out), Ok(16));
        let removed = begin_free(base, &[Source::Pool]).expect("a known entry");
        // The cached range is stale: the copy looks again and finds nothing.
        assert_eq!(
            copy_kernarg(&mut cache, 5, base, &mut out),
            Err(KernargReadError::NotOurs)
        );
        match check_pointer(&PassThrough, 0, base + 8) {
            PointerFinding::UseAfterFree {
                allocation, offset, ..
            } => assert_eq!((allocation, offset), (id, 8)),
            f => panic!("{f:?}"),
        }
        // A free the real runtime refused puts the entry back, live.
        free_refused(removed);
        assert!(matches!(
            check_pointer(&PassThrough, 0, base + 8),
            PointerFinding::InAllocation { allocation, .. } if allocation == id
        ));
        // A free of another kind (an unlock of this address) takes nothing out.
        assert!(begin_free(base, &[Source::Locked]).is_none());
        assert!(begin_free(base, &[Source::Pool]).is_some());
    }

    #[test]
    fn ipc_memory_is_known_but_never_read_and_a_null_handle_never_attaches() {
        let mem = [0u8; 128];
        let p = mem.as_ptr() as u64;
        ipc_attached(p, 128);
        let mut out = [0u8; 8];
        assert!(copy_kernarg(&mut KernargRange::default(), 1, p, &mut out).is_err());
        assert!(matches!(
            check_pointer(&PassThrough, 0, p + 100),
            PointerFinding::InAllocation { remaining: 28, .. }
        ));
        assert!(begin_free(p, &[Source::Ipc]).is_some());
        assert!(matches!(
            check_pointer(&PassThrough, 0, p),
            PointerFinding::UseAfterFree { .. }
        ));
        // With no runtime initialised (virtual or real), a null handle
        // attaches nothing and detaches nothing, and says so.
        let mut mapped = std::ptr::null_mut();
        // SAFETY: a live out-pointer; the virtual answer reads no argument.
        let st = unsafe {
            super::super::exports::hsa_amd_ipc_memory_attach(
                std::ptr::null(),
                16,
                0,
                std::ptr::null(),
                &mut mapped,
            )
        };
        assert_ne!(st, crate::abi::HsaStatus::SUCCESS.0);
        assert!(mapped.is_null());
        // SAFETY: as above.
        let st = unsafe { super::super::exports::hsa_amd_ipc_memory_detach(std::ptr::null_mut()) };
        assert_ne!(st, crate::abi::HsaStatus::SUCCESS.0);
    }

    #[test]
    fn a_lock_is_one_allocation_at_its_host_and_its_agent_address_and_is_never_read() {
        let host = [0u8; 64];
        let h = host.as_ptr() as u64;
        let agent = [0u8; 64];
        let a = agent.as_ptr() as u64;
        locked(h, a, 64, 0);
        let (x, y) = (PassThrough.find(h).unwrap(), PassThrough.find(a).unwrap());
        assert_eq!(x.id, y.id);
        let mut out = [0u8; 8];
        assert!(copy_kernarg(&mut KernargRange::default(), 0, h, &mut out).is_err());
        assert!(begin_free(h, &[Source::Locked]).is_some());
        assert!(matches!(
            check_pointer(&PassThrough, 0, a + 1),
            PointerFinding::UseAfterFree { .. }
        ));
    }
}
