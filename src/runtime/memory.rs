//! Memory the virtual runtime hands out. Every pool is host memory; the
//! registry remembers each allocation so frees are checked and kernarg
//! addresses can be classified (`softgpu` vs `foreign_opaque`) in captures.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use super::agents::{ALLOC_GRANULE, PoolKind};

#[derive(Clone, Copy, Debug)]
struct Allocation {
    size: usize,
    /// The length of its mapping (`size` rounded up to the granule).
    mapped: usize,
    /// The memory file behind it once it was shared (an IPC handle was
    /// made), or -1: see [`share`].
    shared_fd: i32,
    pool: PoolKind,
    user_data: u64,
    /// The allocation's number (from 1, in allocation order).
    id: u64,
    /// Agents granted access with `hsa_amd_agents_allow_access`, by capture
    /// agent index (bit `i`: agent `i`; agents past 63 are not recorded).
    grants: u64,
    /// Made by `hsa_amd_memory_pool_allocate`, which (as ROCr's does) maps
    /// system memory to no GPU until access is granted; `hsa_memory_allocate`
    /// maps system memory to every agent.
    restricted: bool,
}

/// Which allocation call made an allocation (it decides who may access
/// system memory without a grant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocApi {
    /// `hsa_amd_memory_pool_allocate`: accessible to the agents the pool's
    /// `ACCESS` says `ALLOWED_BY_DEFAULT`, and to those granted access.
    Pool,
    /// `hsa_memory_allocate` (the region API): system memory is accessible
    /// to every agent, device memory as with [`AllocApi::Pool`].
    Region,
}

/// Allocation and free events, numbered (the number of a free is what a
/// use-after-free finding names).
static EVENTS: AtomicU64 = AtomicU64::new(0);
/// Bumped by every free, before the memory goes: a kernarg reader's cached
/// allocation is valid only while it is unchanged.
static FREE_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The number of events (allocations and frees) so far: the allocation table
/// is unchanged while it is.
pub fn events() -> u64 {
    EVENTS.load(Ordering::SeqCst)
}

/// A new event number: the number of an allocation-like range (a locked or
/// vmem-mapped range), or any other change of what the pointer checker sees
/// (an unlock, an unmap, an access grant), so [`events`] moves with it.
pub fn next_id() -> u64 {
    EVENTS.fetch_add(1, Ordering::SeqCst) + 1
}

/// Waits until the capture writer has checked every record pushed so far, so
/// that memory about to be released (unlocked, unmapped) is still in the
/// table when their pointers are checked. Call with none of the table's
/// locks held (the writer's checker takes them).
pub fn drain_capture() {
    if let Ok(rt) = super::get() {
        if let Some(c) = &rt.capture {
            c.drain();
        }
    }
}

/// A freed allocation, for naming use-after-free pointers.
#[derive(Clone, Copy, Debug)]
struct Freed {
    base: u64,
    size: u64,
    id: u64,
    freed_at: u64,
}

/// The most recent frees (at most [`FREED_KEPT`]), keyed by base (the
/// latest free of a base wins), with their order for eviction.
static FREED: Mutex<(BTreeMap<u64, Freed>, VecDeque<u64>)> =
    Mutex::new((BTreeMap::new(), VecDeque::new()));
const FREED_KEPT: usize = 65536;

static ALLOCATIONS: RwLock<BTreeMap<usize, Allocation>> = RwLock::new(BTreeMap::new());

/// Why an allocation failed.
#[derive(Debug, PartialEq, Eq)]
pub enum AllocError {
    ZeroSize,
    TooLarge,
    OutOfMemory,
}

/// How many bytes of each GPU's device memory (its coarse- and fine-grained
/// pools together) are allocated, by GPU index: what
/// `HSA_AMD_AGENT_INFO_MEMORY_AVAIL` subtracts from the pool size.
static DEVICE_USED: Mutex<BTreeMap<usize, u64>> = Mutex::new(BTreeMap::new());

/// The GPU whose device memory a pool is (none for system memory and LDS).
fn device_of(pool: PoolKind) -> Option<usize> {
    match pool {
        PoolKind::GpuCoarse(g) | PoolKind::GpuFine(g) => Some(g),
        _ => None,
    }
}

/// Bytes of GPU `g`'s device memory allocated now (rounded to the granule).
pub fn device_used(g: usize) -> u64 {
    DEVICE_USED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&g)
        .copied()
        .unwrap_or(0)
}

/// Charge `bytes` to the device memory of `pool`, if it has room within
/// `capacity`. System memory is not charged (the host's own allocator and
/// the kernel decide what fits there).
fn charge(pool: PoolKind, bytes: u64, capacity: u64) -> bool {
    let Some(g) = device_of(pool) else {
        return true;
    };
    let mut used = DEVICE_USED.lock().unwrap_or_else(|e| e.into_inner());
    let u = used.entry(g).or_insert(0);
    match u.checked_add(bytes) {
        Some(n) if n <= capacity => {
            *u = n;
            true
        }
        _ => false,
    }
}

fn uncharge(pool: PoolKind, bytes: u64) {
    if let Some(g) = device_of(pool) {
        let mut used = DEVICE_USED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(u) = used.get_mut(&g) {
            *u = u.saturating_sub(bytes);
        }
    }
}

/// Allocate `size` zeroed bytes aligned to the pool granule, from a pool
/// whose largest single allocation is `max` and whose memory holds
/// `capacity` bytes (device pools: what is not yet allocated must fit).
///
/// Every allocation is its own anonymous mapping with `MAP_NORESERVE`: zero
/// by construction and backed only where touched, so a program that
/// allocates most of a pool and never writes it (rocrtst's
/// `Memory_Max_Mem`) commits no host memory.
pub fn allocate(
    size: usize,
    pool: PoolKind,
    max: u64,
    capacity: u64,
    api: AllocApi,
) -> Result<*mut u8, AllocError> {
    if size == 0 {
        return Err(AllocError::ZeroSize);
    }
    if size as u64 > max {
        return Err(AllocError::TooLarge);
    }
    let rounded = size
        .checked_next_multiple_of(ALLOC_GRANULE as usize)
        .ok_or(AllocError::TooLarge)?;
    if !charge(pool, rounded as u64, capacity) {
        return Err(AllocError::OutOfMemory);
    }
    let Some(p) = super::sys::map(rounded) else {
        uncharge(pool, rounded as u64);
        return Err(AllocError::OutOfMemory);
    };
    // The event number is taken with the table's write lock held: whoever
    // reads the new number and then looks the table up finds the allocation
    // (a reader's memo of a gap, `find_range`, is only valid that way).
    let mut map = ALLOCATIONS.write().unwrap_or_else(|e| e.into_inner());
    let id = EVENTS.fetch_add(1, Ordering::SeqCst) + 1;
    map.insert(
        p as usize,
        Allocation {
            size,
            mapped: rounded,
            shared_fd: -1,
            pool,
            user_data: 0,
            id,
            grants: 0,
            restricted: api == AllocApi::Pool,
        },
    );
    drop(map);
    Ok(p)
}

/// A program's deallocation callback (`hsa_amd_deallocation_callback_t`).
pub type DeallocCallback = unsafe extern "C" fn(ptr: *mut c_void, user_data: *mut c_void);

#[derive(Clone, Copy)]
struct Notifier {
    ptr: u64,
    callback: DeallocCallback,
    user_data: u64,
}

/// Deallocation callbacks by the base of the allocation they watch, in
/// registration order.
static NOTIFIERS: Mutex<BTreeMap<usize, Vec<Notifier>>> = Mutex::new(BTreeMap::new());

/// The base of the live allocation holding `addr` (its requested size, as
/// ROCr's allocation map has it), with the table read-locked.
fn containing(map: &BTreeMap<usize, Allocation>, addr: u64) -> Option<usize> {
    let (&base, a) = map.range(..=addr as usize).next_back()?;
    (addr < base as u64 + a.size as u64).then_some(base)
}

/// `hsa_amd_register_deallocation_callback`: call `callback(ptr, user_data)`
/// when the allocation holding `ptr` is freed. False when no live
/// allocation of this runtime holds `ptr` (ROCr:
/// `HSA_STATUS_ERROR_INVALID_ALLOCATION`).
pub fn register_dealloc(ptr: u64, callback: DeallocCallback, user_data: u64) -> bool {
    // The table stays read-locked while the callback is added, so a free
    // (which removes the allocation under the write lock first) takes it.
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let Some(base) = containing(&map, ptr) else {
        return false;
    };
    NOTIFIERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(base)
        .or_default()
        .push(Notifier {
            ptr,
            callback,
            user_data,
        });
    true
}

/// `hsa_amd_deregister_deallocation_callback`: forget every registration of
/// `callback` for exactly `ptr`. False when there was none (ROCr:
/// `HSA_STATUS_ERROR_INVALID_ARGUMENT`).
pub fn deregister_dealloc(ptr: u64, callback: DeallocCallback) -> bool {
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let Some(base) = containing(&map, ptr) else {
        return false;
    };
    let mut all = NOTIFIERS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(list) = all.get_mut(&base) else {
        return false;
    };
    let before = list.len();
    list.retain(|n| !(n.ptr == ptr && n.callback as usize == callback as usize));
    let removed = list.len() != before;
    if list.is_empty() {
        all.remove(&base);
    }
    removed
}

/// Free an allocation made by [`allocate`]. Returns false for an unknown
/// pointer. As in ROCr, the allocation leaves the table first, then its
/// deallocation callbacks run on this thread, in registration order, with
/// no lock held (a callback may allocate and free, and a free of the same
/// pointer from it finds nothing), and then the memory goes.
pub fn free(ptr: usize) -> bool {
    let Some(a) = ALLOCATIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&ptr)
    else {
        return false;
    };
    let notifiers = NOTIFIERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&ptr);
    for n in notifiers.into_iter().flatten() {
        // SAFETY: the program registered `callback` as an
        // `hsa_amd_deallocation_callback_t` with this `user_data`; it is
        // called as that C type, with no SoftGPU lock held.
        unsafe { (n.callback)(n.ptr as *mut c_void, n.user_data as *mut c_void) };
    }
    let freed_at = EVENTS.fetch_add(1, Ordering::SeqCst) + 1;
    {
        let mut f = FREED.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *f;
        map.insert(
            ptr as u64,
            Freed {
                base: ptr as u64,
                size: a.size as u64,
                id: a.id,
                freed_at,
            },
        );
        order.push_back(ptr as u64);
        if order.len() > FREED_KEPT {
            if let Some(old) = order.pop_front() {
                if map.get(&old).is_some_and(|e| e.freed_at < freed_at) && old != ptr as u64 {
                    map.remove(&old);
                }
            }
        }
    }
    // A kernarg copy that found this allocation before it left the registry
    // finishes before the memory goes: every copy runs inside a drain pass
    // (see `stage_kernarg`), and a pass that could have seen the old epoch
    // ends before `wait_for_drains` returns.
    FREE_EPOCH.fetch_add(1, Ordering::SeqCst);
    super::queues::wait_for_drains();
    // SAFETY: `ptr..ptr+a.mapped` is exactly the mapping `allocate` made
    // (the registry entry proves it; `share` only replaced its pages in
    // place) and was removed from the registry under the write lock, so it
    // is unmapped once; no kernarg copy can be reading it (the epoch was
    // bumped and every drain pass running then has ended).
    unsafe { super::sys::unmap(ptr as *mut u8, a.mapped) };
    if a.shared_fd >= 0 {
        // SAFETY: `shared_fd` is the memory file `share` created for this
        // allocation and owns alone; the allocation is gone, so nothing
        // uses it again (an attached process holds its own mapping).
        unsafe { super::sys::close(a.shared_fd) };
    }
    uncharge(a.pool, a.mapped as u64);
    true
}

pub use crate::kernargs::{KernargRange, KernargReadError};

/// A queue's kernarg copy state: the cached allocation, the buffer, and the
/// last kernel object whose kernarg segment size was looked up, with it.
#[derive(Debug)]
pub struct KernargCopy {
    pub range: KernargRange,
    pub buf: Box<[u8; crate::capture::KERNARG_BOUND]>,
    pub kernel: (u64, u64),
}

impl Default for KernargCopy {
    fn default() -> Self {
        KernargCopy {
            range: KernargRange::default(),
            buf: Box::new([0; crate::capture::KERNARG_BOUND]),
            kernel: (0, 0),
        }
    }
}

/// How many of the `want` bytes at `addr` lie in the allocation of this
/// runtime that holds `addr` (fewer when it ends first), with `cache`
/// refreshed from the registry when it does not name that allocation at
/// the current free epoch.
#[inline]
fn readable_len(
    cache: &mut KernargRange,
    addr: u64,
    want: usize,
) -> Result<usize, KernargReadError> {
    let epoch = FREE_EPOCH.load(Ordering::SeqCst);
    if !cache.holds(addr, epoch) {
        match find(addr) {
            Some((base, size)) => {
                *cache = KernargRange {
                    base,
                    size: size.max(1),
                    epoch,
                }
            }
            None => return Err(KernargReadError::NotOurs),
        }
    }
    Ok((want as u64).min(cache.base + cache.size - addr) as usize)
}

/// What [`stage_kernarg`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staged {
    /// The `n` bytes at the address equal `last[..n]`, which is unchanged.
    Same(usize),
    /// `last[..n]` now holds the `n` bytes at the address.
    Copied(usize),
}

/// Reads a dispatch's kernarg block into the queue's previous block's own
/// buffer, comparing first, if `addr` lies in an allocation of this runtime:
/// up to `want` bytes (at most `last.len()`; fewer when the allocation ends
/// first). When `last_len` is that length and `last[..last_len]` equals the
/// bytes at `addr`, nothing is copied ([`Staged::Same`]; a launch loop
/// passes the same arguments again and again, so this is the common case);
/// otherwise they are copied over `last` ([`Staged::Copied`]). On the
/// doorbell path: no allocation, no atomic read-modify-write; the registry's
/// read lock only when `cache` misses (another allocation, or a free since).
///
/// Only a drain pass can call it (`_drain` is made only while a queue's
/// drain lock is held): [`free`] bumps the epoch and then waits for every
/// drain pass running at that moment to end before the memory goes, so a
/// read needs no reader count of its own. (The reader count it replaced cost
/// two locked instructions, about 12 ns, on every dispatch.)
pub fn stage_kernarg(
    _drain: &super::queues::DrainLocked,
    cache: &mut KernargRange,
    addr: u64,
    want: usize,
    last: &mut [u8],
    last_len: Option<usize>,
) -> Result<Staged, KernargReadError> {
    let n = readable_len(cache, addr, want.min(last.len()))?;
    // Why `[addr, addr + n)` may be read, here and in the copy below: it lies
    // inside a live allocation of this runtime. It was in the registry when
    // `cache` was filled, at the epoch `readable_len` just read; we are inside
    // a drain pass (the caller holds a queue's drain lock, which `_drain`
    // proves). A free removes the allocation from the registry, bumps the
    // epoch, and then takes every queue's drain lock in turn before it
    // deallocates. So either that free took this queue's lock after this pass
    // releases it (the memory is still allocated now), or before this pass
    // took it, in which case the removal and the bump happen-before this
    // pass: the epoch `readable_len` read is the new one, and the registry no
    // longer holds the allocation, so `cache` cannot name it. Allocations are
    // plain host memory, readable as bytes. The program may be writing them
    // concurrently (a racy program): both reads go through raw pointers, no
    // Rust reference is made to its memory, and a compare or a copy of such
    // bytes is still only bytes.
    if last_len == Some(n) && n > 0 {
        // SAFETY: `[addr, addr + n)` is readable, as argued above;
        // `last[..n]` is a live Rust buffer (`n <= last.len()`). memcmp only
        // reads both ranges.
        let same = unsafe {
            libc::memcmp(
                addr as *const libc::c_void,
                last.as_ptr().cast::<libc::c_void>(),
                n,
            ) == 0
        };
        if same {
            return Ok(Staged::Same(n));
        }
    }
    // SAFETY: the source range is readable, as argued above; `last` is a
    // distinct Rust buffer of at least `n` bytes (`n <= last.len()`), so the
    // ranges do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, last.as_mut_ptr(), n) };
    Ok(Staged::Copied(n))
}

/// Grants `agents` (capture agent indexes) access to the allocation that
/// holds `ptr` (`hsa_amd_agents_allow_access`). Returns false when no
/// allocation of this runtime holds it (locked memory and vmem need no
/// grant here: see [`ShimAllocations`]).
pub fn grant(ptr: u64, agents: &[u32]) -> bool {
    let mut map = ALLOCATIONS.write().unwrap_or_else(|e| e.into_inner());
    let Some((_, a)) = map
        .range_mut(..=ptr as usize)
        .next_back()
        .filter(|(b, a)| (ptr as usize) < **b + a.size.max(1))
    else {
        return false;
    };
    for &i in agents {
        if i < 64 {
            a.grants |= 1 << i;
        }
    }
    next_id();
    true
}

/// The agent of a capture agent index (0 is the CPU, `i` is GPU `i - 1`).
fn agent_kind(index: u64) -> super::agents::AgentKind {
    match index {
        0 => super::agents::AgentKind::Cpu,
        i => super::agents::AgentKind::Gpu(i as usize - 1),
    }
}

/// The runtime's allocations as the kernel-argument checker sees them
/// (virtual mode): the memory this runtime hands out (allocations, locked
/// host memory, mapped vmem ranges), the last frees, and the process's own
/// mappings for telling pageable host memory from addresses nothing maps.
///
/// Agents are capture agent indexes (0 the CPU, `i` GPU `i - 1`); an
/// allocation's owner is its pool's agent (`None` for system memory).
/// Access follows the rules this runtime reports through
/// `hsa_amd_agent_memory_pool_get_info(ACCESS)` (ROCr's): an agent may use
/// memory of a pool that is `ALLOWED_BY_DEFAULT` to it (its own device
/// memory), and memory of a pool that is `DISALLOWED_BY_DEFAULT` to it once
/// `hsa_amd_agents_allow_access` granted it that allocation; system memory
/// made by `hsa_memory_allocate` is mapped to every agent (as ROCr does for
/// that call). Locked host memory and vmem ranges are accessible to every
/// agent (the agent lists of lock and set-access are not recorded).
#[derive(Clone, Copy, Debug, Default)]
pub struct ShimAllocations {
    /// Check access for the dispatching agent (false: its queue's agent is
    /// not known, so every live allocation counts as accessible).
    pub check_access: bool,
}

impl ShimAllocations {
    fn live(b: usize, a: &Allocation) -> crate::kernargs::Allocation {
        crate::kernargs::Allocation {
            id: a.id,
            base: b as u64,
            size: a.size as u64,
            owner: match super::agents::Topology::pool_owner(a.pool) {
                super::agents::AgentKind::Cpu => None,
                k => Some(super::agents::Topology::agent_index(k) as u64),
            },
            freed_at: None,
        }
    }
}

impl crate::kernargs::AllocationTable for ShimAllocations {
    fn find(&self, address: u64) -> Option<crate::kernargs::Allocation> {
        {
            let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
            if let Some((&b, a)) = map.range(..=address as usize).next_back() {
                if (address as usize) < b + a.size.max(1) {
                    return Some(Self::live(b, a));
                }
            }
        }
        // Locked (registered) host memory: its agent address range and its
        // host range are both live memory the agents may use.
        if let Some(l) = find_locked(address) {
            let base = if address >= l.agent && address < l.agent + l.size.max(1) {
                l.agent
            } else {
                l.host
            };
            return Some(crate::kernargs::Allocation {
                id: l.id,
                base,
                size: l.size,
                owner: None,
                freed_at: None,
            });
        }
        if let Some((base, size, id)) = super::vmem::find_mapped(address) {
            return Some(crate::kernargs::Allocation {
                id,
                base,
                size,
                owner: None,
                freed_at: None,
            });
        }
        let f = FREED.lock().unwrap_or_else(|e| e.into_inner());
        f.0.range(..=address)
            .next_back()
            .map(|(_, e)| *e)
            .filter(|e| address < e.base + e.size.max(1))
            .map(|e| crate::kernargs::Allocation {
                id: e.id,
                base: e.base,
                size: e.size,
                owner: None,
                freed_at: Some(e.freed_at),
            })
    }

    fn preceding(&self, address: u64) -> Option<crate::kernargs::Allocation> {
        let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
        map.range(..=address as usize)
            .next_back()
            .map(|(&b, a)| Self::live(b, a))
    }

    fn backed_end(&self, allocation: &crate::kernargs::Allocation) -> u64 {
        // Allocations are made in whole granules (`allocate`).
        allocation.base.saturating_add(
            allocation
                .size
                .checked_next_multiple_of(ALLOC_GRANULE)
                .unwrap_or(u64::MAX),
        )
    }

    fn accessible(&self, allocation: &crate::kernargs::Allocation, agent: u64) -> bool {
        use crate::abi::pool_access::{ALLOWED_BY_DEFAULT, DISALLOWED_BY_DEFAULT};
        if !self.check_access {
            return true;
        }
        let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
        // Not one of the allocations (locked memory, vmem): accessible.
        let Some(a) = map
            .get(&(allocation.base as usize))
            .filter(|a| a.id == allocation.id)
        else {
            return true;
        };
        let system = super::agents::Topology::pool_owner(a.pool) == super::agents::AgentKind::Cpu;
        let granted = agent < 64 && a.grants & (1 << agent) != 0;
        match super::agents::Topology::access(agent_kind(agent), a.pool) {
            ALLOWED_BY_DEFAULT => true,
            DISALLOWED_BY_DEFAULT => granted || (system && !a.restricted),
            _ => false,
        }
    }

    fn pageable_host(&self, address: u64) -> bool {
        // Only for addresses no allocation, locked range or vmem range knows
        // (the checker asks after those); SoftGPU's own reservations (the
        // agent views of locked memory, vmem reservations) are never host
        // memory of the program.
        find_locked(address).is_none()
            && !super::vmem::reserved(address)
            && super::sys::page_mapped(address)
    }
}

/// Whether `addr` lies inside memory this runtime allocated.
pub fn owns(addr: u64) -> bool {
    let addr = addr as usize;
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    map.range(..=addr)
        .next_back()
        .is_some_and(|(&base, a)| addr < base + a.size.max(1))
}

/// The allocation containing `addr`: (base, size).
pub fn find(addr: u64) -> Option<(u64, u64)> {
    let addr = addr as usize;
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    map.range(..=addr)
        .next_back()
        .filter(|(base, a)| addr < *base + a.size.max(1))
        .map(|(&b, a)| (b as u64, a.size as u64))
}

/// The range around `addr` over which [`find`] gives the same answer while
/// the allocation table is unchanged ([`events`]): `Ok` with the allocation
/// that holds `addr` (`[base, base + size)`, at least one byte), or `Err`
/// with the gap around it that no allocation touches (`[lo, hi)`). Read
/// [`events`] before the call: an allocation takes its event number with the
/// table's write lock held, and a free moves the number after it removes the
/// allocation, so an unchanged number means the answer still holds.
pub fn find_range(addr: u64) -> Result<(u64, u64), (u64, u64)> {
    let a = addr as usize;
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let below = map.range(..=a).next_back();
    if let Some((&base, al)) = below {
        if a < base + al.size.max(1) {
            return Ok((base as u64, al.size.max(1) as u64));
        }
    }
    let lo = below.map_or(0, |(&base, al)| (base + al.size.max(1)) as u64);
    let hi = map
        .range(a.saturating_add(1)..)
        .next()
        .map_or(u64::MAX, |(&base, _)| base as u64);
    Err((lo, hi))
}

/// The pool an allocation came from, and its base and size.
pub fn find_allocation(addr: u64) -> Option<(u64, u64, PoolKind, u64)> {
    let addr = addr as usize;
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    map.range(..=addr)
        .next_back()
        .filter(|(base, a)| addr < *base + a.size.max(1))
        .map(|(&b, a)| (b as u64, a.size as u64, a.pool, a.user_data))
}

/// The first word of an IPC handle the virtual runtime made ("SGIP").
pub const IPC_MAGIC: u32 = u32::from_le_bytes(*b"SGIP");

/// Make the allocation at `base` shareable with other processes: the first
/// time, its bytes move into a new memory file (`memfd`) that is then mapped
/// `MAP_SHARED` over the same addresses, so the pointer the program holds
/// keeps its contents and now names the file's pages. Returns the file, its
/// inode and the mapped length. Another process maps the same pages from the
/// file (`attach`).
///
/// Limit: a write another thread of the program makes to the allocation
/// while it is first shared may be lost (the copy and the remapping are not
/// one step).
fn share(map: &mut BTreeMap<usize, Allocation>, base: usize) -> Option<(i32, u64, usize)> {
    let a = map.get_mut(&base)?;
    if a.shared_fd < 0 {
        let fd = super::sys::memfd(a.mapped as u64)?;
        // SAFETY: `base..base+a.mapped` is this allocation's mapping (the
        // table entry, held under the write lock, proves it), readable, and
        // no Rust reference points into program memory; pwrite only reads it.
        let (done, err) = unsafe {
            super::sys::file_transfer(
                fd,
                base as u64,
                a.mapped as u64,
                0,
                super::sys::FileDirection::Write,
            )
        };
        let copied = done == a.mapped as u64 && err == 0;
        // SAFETY: the same range, the allocation's own mapping made by
        // `allocate` (MAP_FIXED replaces only it); its bytes are in the file.
        if !copied || !unsafe { super::sys::map_fd_fixed(base as u64, a.mapped, fd, 0, 3) } {
            // SAFETY: `fd` was created above and is owned only here.
            unsafe { super::sys::close(fd) };
            return None;
        }
        a.shared_fd = fd;
    }
    let ino = super::sys::fd_inode(a.shared_fd)?;
    Some((a.shared_fd, ino, a.mapped))
}

/// `hsa_amd_ipc_memory_create`'s rule, ROCr's: `ptr` must be the base of an
/// allocation and `len` its size (or that size rounded up to the page, as
/// HIP before 6.x passed it). The allocation is shared ([`share`]) and the
/// handle's words are the magic, this process's id, the memory file's
/// descriptor in this process, the mapped size and the file's inode (which
/// `attach` checks, so a reused descriptor number is refused), and the
/// allocation's number; `None` when the rule is not met or the file could
/// not be made.
pub fn ipc_handle(ptr: u64, len: u64) -> Option<[u32; 8]> {
    let mut map = ALLOCATIONS.write().unwrap_or_else(|e| e.into_inner());
    let a = map.get(&(ptr as usize))?;
    let size = a.size as u64;
    if len == 0 || (len != size && len != size.next_multiple_of(ALLOC_GRANULE)) {
        return None;
    }
    let id = a.id;
    let (fd, ino, mapped) = share(&mut map, ptr as usize)?;
    Some([
        IPC_MAGIC,
        std::process::id(),
        fd as u32,
        mapped as u32,
        (mapped as u64 >> 32) as u32,
        ino as u32,
        (ino >> 32) as u32,
        id as u32,
    ])
}

/// Memory of another process mapped into this one by
/// `hsa_amd_ipc_memory_attach`: base to mapped length.
static IMPORTED: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

/// Why an IPC handle could not be attached.
#[derive(Debug, PartialEq, Eq)]
pub enum AttachError {
    /// Not a handle the virtual runtime made, or `len` larger than it.
    NotAHandle,
    /// The exporting process, or its shared allocation, is gone (or is not
    /// reachable: `/proc/PID/fd` needs the same user).
    Gone,
    /// The mapping failed.
    OutOfMemory,
}

/// `hsa_amd_ipc_memory_attach`: map the memory an IPC handle names. The
/// exporter's memory file is opened through `/proc/PID/fd/FD` (same machine,
/// same user) and checked against the handle's inode and size.
pub fn attach(h: &[u32; 8], len: u64) -> Result<u64, AttachError> {
    if h[0] != IPC_MAGIC {
        return Err(AttachError::NotAHandle);
    }
    let (pid, fd) = (h[1], h[2] as i32);
    let mapped = u64::from(h[3]) | u64::from(h[4]) << 32;
    let ino = u64::from(h[5]) | u64::from(h[6]) << 32;
    if fd < 0 || mapped == 0 || len > mapped {
        return Err(AttachError::NotAHandle);
    }
    let path = format!("/proc/{pid}/fd/{fd}");
    let file = super::sys::open_rw(&path).ok_or(AttachError::Gone)?;
    let ok = super::sys::fd_inode(file) == Some(ino)
        && super::sys::fd_size(file).is_some_and(|s| s >= mapped);
    let p = if ok {
        super::sys::map_fd(file, mapped as usize)
    } else {
        None
    };
    // SAFETY: `file` was opened above and is owned only here; the mapping
    // (if any) holds the file itself.
    unsafe { super::sys::close(file) };
    if !ok {
        return Err(AttachError::Gone);
    }
    let p = p.ok_or(AttachError::OutOfMemory)?;
    IMPORTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(p as usize, mapped as usize);
    Ok(p as u64)
}

/// `hsa_amd_ipc_memory_detach`: unmap what [`attach`] mapped at `ptr`.
/// False for any other address.
pub fn detach(ptr: u64) -> bool {
    let Some(len) = IMPORTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(ptr as usize))
    else {
        return false;
    };
    // SAFETY: `ptr..ptr+len` is the mapping `attach` made (the table entry,
    // removed once under the lock, proves it); the program gave it up by
    // detaching it.
    unsafe { super::sys::unmap(ptr as *mut u8, len) };
    true
}

/// Set the program's user data on an allocation (`hsa_amd_pointer_info_set_userdata`).
pub fn set_user_data(base: u64, data: u64) -> bool {
    let mut map = ALLOCATIONS.write().unwrap_or_else(|e| e.into_inner());
    match map.get_mut(&(base as usize)) {
        Some(a) => {
            a.user_data = data;
            true
        }
        None => false,
    }
}

/// Host memory locked for agents (`hsa_amd_memory_lock*`). The agent address
/// is a separate, reserved (inaccessible) address range with the same page
/// offset, so agent and host addresses never coincide, as on real hardware;
/// copies translate agent addresses back to host addresses.
#[derive(Clone, Copy, Debug)]
pub struct Locked {
    pub host: u64,
    pub agent: u64,
    pub size: u64,
    reservation: u64,
    reservation_len: u64,
    /// Numbered with the allocations (the pointer checker names it).
    id: u64,
}

static LOCKED: RwLock<BTreeMap<u64, Locked>> = RwLock::new(BTreeMap::new());

/// Lock `size` bytes at `host`; returns the agent address. Locking the same
/// host address again returns the existing agent address.
pub fn lock(host: u64, size: u64) -> Option<u64> {
    let mut map = LOCKED.write().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = map.values().find(|l| l.host == host) {
        return Some(l.agent);
    }
    let page = 4096u64;
    let offset = host % page;
    let len = (offset + size).checked_next_multiple_of(page)?;
    let reservation = super::sys::reserve(len as usize)? as u64;
    let agent = reservation + offset;
    map.insert(
        agent,
        Locked {
            host,
            agent,
            size,
            reservation,
            reservation_len: len,
            id: next_id(),
        },
    );
    Some(agent)
}

/// Unlock by host address. Returns false when `host` is not locked.
pub fn unlock(host: u64) -> bool {
    // Records pushed before this are checked against the locked range.
    drain_capture();
    let mut map = LOCKED.write().unwrap_or_else(|e| e.into_inner());
    let Some((&k, l)) = map.iter().find(|(_, l)| l.host == host) else {
        return false;
    };
    let l = *l;
    map.remove(&k);
    next_id();
    // SAFETY: the reservation was made by `lock` for this entry alone, which
    // was just removed under the write lock, so nothing hands it out again;
    // it is PROT_NONE, so no reference can point into it.
    unsafe { super::sys::release(l.reservation as *mut u8, l.reservation_len as usize) };
    true
}

/// The locked region whose agent or host range contains `addr`.
pub fn find_locked(addr: u64) -> Option<Locked> {
    let map = LOCKED.read().unwrap_or_else(|e| e.into_inner());
    if let Some((_, l)) = map.range(..=addr).next_back() {
        if addr < l.agent + l.size.max(1) {
            return Some(*l);
        }
    }
    map.values()
        .find(|l| addr >= l.host && addr < l.host + l.size.max(1))
        .copied()
}

/// Translate an address a program passes to a copy into the host address that
/// holds the bytes: agent addresses of locked memory map back to their host
/// pages; everything else is already a host address in the virtual runtime.
pub fn to_host(addr: u64) -> u64 {
    let map = LOCKED.read().unwrap_or_else(|e| e.into_inner());
    match map.range(..=addr).next_back() {
        Some((_, l)) if addr < l.agent + l.size.max(1) => l.host + (addr - l.agent),
        _ => addr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_range_gives_the_allocation_or_a_gap_no_allocation_touches() {
        let a =
            allocate(4096, PoolKind::CpuFine, u64::MAX, u64::MAX, AllocApi::Pool).unwrap() as u64;
        let b =
            allocate(100, PoolKind::CpuFine, u64::MAX, u64::MAX, AllocApi::Pool).unwrap() as u64;
        for (base, size) in [(a, 4096), (b, 100)] {
            for addr in [base, base + 1, base + size - 1] {
                assert_eq!(find_range(addr), Ok((base, size)), "{addr:#x}");
                assert_eq!(find(addr), Some((base, size)));
            }
            // Just past the end: a gap that starts there (unless another
            // allocation starts right there) and holds no allocation.
            let past = base + size.next_multiple_of(ALLOC_GRANULE);
            if let Err((lo, hi)) = find_range(past) {
                assert!(lo <= past && past < hi, "{past:#x} in [{lo:#x}, {hi:#x})");
                assert!(lo >= base + size, "the gap starts after the allocation");
                for addr in [lo, past, hi - 1] {
                    assert_eq!(find(addr), None, "{addr:#x}");
                }
            }
        }
        // Below every allocation of this test.
        let low = 4096u64;
        let Err((lo, hi)) = find_range(low) else {
            panic!("page 1 is not an allocation");
        };
        assert!(lo <= low && low < hi && hi <= a.min(b));
        assert!(free(a as usize) && free(b as usize));
        // After a free the table moved on: its range is a gap now.
        assert!(find_range(a).is_err());
    }

    #[test]
    fn an_ipc_handle_names_a_whole_allocation_by_its_base_and_size_and_maps_the_same_bytes() {
        let a =
            allocate(100, PoolKind::CpuFine, u64::MAX, u64::MAX, AllocApi::Pool).unwrap() as u64;
        // SAFETY: `a` is a fresh 4096-byte allocation of this runtime.
        unsafe { *(a as *mut u32) = 0x1234_5678 };
        let h = ipc_handle(a, 100).expect("base and size");
        assert_eq!((h[0], h[1]), (IPC_MAGIC, std::process::id()));
        assert_eq!((h[3], h[4]), (4096, 0));
        // SAFETY: as above; the allocation kept its bytes when it was shared.
        assert_eq!(unsafe { *(a as *const u32) }, 0x1234_5678);
        // The size rounded up to the page is the same allocation, as ROCr allows.
        assert_eq!(ipc_handle(a, 4096), Some(h));
        // Not the base, not the size, nothing at all: refused.
        for (p, len) in [(a + 4, 96), (a, 99), (a, 0), (a, 8192), (0, 100)] {
            assert_eq!(ipc_handle(p, len), None, "{p:#x} {len}");
        }
        let m = attach(&h, 100).expect("attached");
        assert_ne!(m, a);
        // SAFETY: `m` maps the same memory file, 4096 bytes.
        unsafe {
            assert_eq!(*(m as *const u32), 0x1234_5678);
            *(m as *mut u32) = 7;
            assert_eq!(*(a as *const u32), 7);
        }
        assert!(detach(m));
        assert!(!detach(m), "detached once");
        let mut bad = h;
        bad[5] ^= 1;
        assert_eq!(attach(&bad, 100), Err(AttachError::Gone), "another inode");
        assert_eq!(attach(&h, 8192), Err(AttachError::NotAHandle));
        assert!(free(a as usize));
        assert_eq!(ipc_handle(a, 100), None);
        assert_eq!(
            attach(&h, 100),
            Err(AttachError::Gone),
            "freed: file closed"
        );
    }
}
