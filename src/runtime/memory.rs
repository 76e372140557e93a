//! Memory the virtual runtime hands out. Every pool is host memory; the
//! registry remembers each allocation so frees are checked and kernarg
//! addresses can be classified (`softgpu` vs `foreign_opaque`) in captures.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::RwLock;

use super::agents::{ALLOC_GRANULE, PoolKind};

#[derive(Clone, Copy, Debug)]
struct Allocation {
    size: usize,
    layout: Layout,
    pool: PoolKind,
    user_data: u64,
}

static ALLOCATIONS: RwLock<BTreeMap<usize, Allocation>> = RwLock::new(BTreeMap::new());

/// Why an allocation failed.
#[derive(Debug, PartialEq, Eq)]
pub enum AllocError {
    ZeroSize,
    TooLarge,
    OutOfMemory,
}

/// Allocate `size` zeroed bytes aligned to the pool granule.
pub fn allocate(size: usize, pool: PoolKind, max: u64) -> Result<*mut u8, AllocError> {
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
    ALLOCATIONS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            p as usize,
            Allocation {
                size,
                layout,
                pool,
                user_data: 0,
            },
        );
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
    // SAFETY: `ptr` was returned by alloc_zeroed with exactly `a.layout` (the
    // registry entry proves it) and was removed from the registry under the
    // write lock, so it is freed once.
    unsafe { std::alloc::dealloc(ptr as *mut u8, a.layout) };
    true
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

/// The pool an allocation came from, and its base and size.
pub fn find_allocation(addr: u64) -> Option<(u64, u64, PoolKind, u64)> {
    let addr = addr as usize;
    let map = ALLOCATIONS.read().unwrap_or_else(|e| e.into_inner());
    map.range(..=addr)
        .next_back()
        .filter(|(base, a)| addr < *base + a.size.max(1))
        .map(|(&b, a)| (b as u64, a.size as u64, a.pool, a.user_data))
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
        },
    );
    Some(agent)
}

/// Unlock by host address. Returns false when `host` is not locked.
pub fn unlock(host: u64) -> bool {
    let mut map = LOCKED.write().unwrap_or_else(|e| e.into_inner());
    let Some((&k, l)) = map.iter().find(|(_, l)| l.host == host) else {
        return false;
    };
    let l = *l;
    map.remove(&k);
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
