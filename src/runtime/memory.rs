//! Memory the virtual runtime hands out. Every pool is host memory; the
//! registry remembers each allocation so frees are checked and kernarg
//! addresses can be classified (`softgpu` vs `foreign_opaque`) in captures.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::RwLock;

use super::agents::{ALLOC_GRANULE, PoolKind};

#[derive(Clone, Copy, Debug)]
struct Allocation {
    size: usize,
    layout: Layout,
    #[allow(dead_code)]
    pool: PoolKind,
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
        .insert(p as usize, Allocation { size, layout, pool });
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
