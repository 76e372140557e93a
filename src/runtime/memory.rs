//! Memory the virtual runtime hands out. Every pool is host memory; the
//! registry remembers each allocation so frees are checked and kernarg
//! addresses can be classified (`softgpu` vs `foreign_opaque`) in captures.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::alloc::Layout;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use super::agents::{ALLOC_GRANULE, PoolKind};

#[derive(Clone, Copy, Debug)]
struct Allocation {
    size: usize,
    layout: Layout,
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

/// Allocate `size` zeroed bytes aligned to the pool granule.
pub fn allocate(
    size: usize,
    pool: PoolKind,
    max: u64,
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
    let layout = Layout::from_size_align(rounded, ALLOC_GRANULE as usize)
        .map_err(|_| AllocError::TooLarge)?;
    // SAFETY: layout has a non-zero size (size > 0 was checked) and a valid
    // power-of-two alignment.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(AllocError::OutOfMemory);
    }
    // The event number is taken with the table's write lock held: whoever
    // reads the new number and then looks the table up finds the allocation
    // (a reader's memo of a gap, `find_range`, is only valid that way).
    let mut map = ALLOCATIONS.write().unwrap_or_else(|e| e.into_inner());
    let id = EVENTS.fetch_add(1, Ordering::SeqCst) + 1;
    map.insert(
        p as usize,
        Allocation {
            size,
            layout,
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

/// Free an allocation made by [`allocate`]. Returns false for an unknown pointer.
pub fn free(ptr: usize) -> bool {
    let Some(a) = ALLOCATIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&ptr)
    else {
        return false;
    };
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
    // SAFETY: `ptr` was returned by alloc_zeroed with exactly `a.layout` (the
    // registry entry proves it) and was removed from the registry under the
    // write lock, so it is freed once; no kernarg copy can be reading it (the
    // epoch was bumped and every drain pass running then has ended).
    unsafe { std::alloc::dealloc(ptr as *mut u8, a.layout) };
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

/// An IPC handle for the allocation at `ptr` (`hsa_amd_ipc_memory_create`),
/// as the 8 words of `hsa_amd_ipc_memory_t`: ROCr's rule, `ptr` is the base of
/// an allocation and `len` its size (or that size rounded up to the page, as
/// HIP before 6.x passed it). The words are the magic, this process's id, the
/// allocation's number and its size; `None` when the rule is not met. The
/// virtual runtime's device memory is this process's own host memory, so no
/// other process can map it: a handle only names the allocation (attaching
/// it fails closed, `hsa_amd_ipc_memory_attach`).
pub fn ipc_handle(ptr: u64, len: u64) -> Option<[u32; 8]> {
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    let a = map.get(&(ptr as usize))?;
    let size = a.size as u64;
    if len == 0 || (len != size && len != size.next_multiple_of(ALLOC_GRANULE)) {
        return None;
    }
    let pid = std::process::id();
    Some([
        IPC_MAGIC,
        pid,
        a.id as u32,
        (a.id >> 32) as u32,
        size as u32,
        (size >> 32) as u32,
        0,
        0,
    ])
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
        let a = allocate(4096, PoolKind::CpuFine, u64::MAX, AllocApi::Pool).unwrap() as u64;
        let b = allocate(100, PoolKind::CpuFine, u64::MAX, AllocApi::Pool).unwrap() as u64;
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
    fn an_ipc_handle_names_a_whole_allocation_by_its_base_and_size_and_nothing_else() {
        let a = allocate(100, PoolKind::CpuFine, u64::MAX, AllocApi::Pool).unwrap() as u64;
        let h = ipc_handle(a, 100).expect("base and size");
        assert_eq!((h[0], h[1]), (IPC_MAGIC, std::process::id()));
        assert_eq!((h[4], h[5]), (100, 0));
        // The size rounded up to the page is the same allocation, as ROCr allows.
        assert_eq!(ipc_handle(a, 4096), Some(h));
        // Not the base, not the size, nothing at all, a freed allocation: refused.
        for (p, len) in [(a + 4, 96), (a, 99), (a, 0), (a, 8192), (0, 100)] {
            assert_eq!(ipc_handle(p, len), None, "{p:#x} {len}");
        }
        assert!(free(a as usize));
        assert_eq!(ipc_handle(a, 100), None);
    }
}
