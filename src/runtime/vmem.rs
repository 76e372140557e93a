//! HIP 6.4's virtual memory management (`hsa_amd_vmem_*`) over host memory:
//! address ranges are real reservations, physical allocations are memfd
//! objects, mapping maps the memfd into a reservation, and shareable handles
//! are duplicated file descriptors. Every address operation is checked
//! against SoftGPU's own reservations first, so a bad address can never make
//! a fixed mapping clobber the program's memory.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::sys;

const HANDLE_TAG: u64 = 0x5347_5600_0000_0000; // "SGV"
const TAG_MASK: u64 = 0xffff_ff00_0000_0000;

#[derive(Debug)]
struct Physical {
    fd: i32,
    size: u64,
    pool: u64,
    kind: u32,
    /// References: one from its creation or import, one per
    /// `hsa_amd_vmem_retain_alloc_handle`; each release drops one.
    refs: u32,
    /// Mappings of it. As in ROCr, a handle whose last reference is
    /// released while it is still mapped lives on (its mappings stay usable,
    /// `hsa_amd_vmem_retain_alloc_handle` on a mapping gives it a reference
    /// again) until its last mapping is unmapped; only then is its memfd
    /// closed.
    maps: u32,
}

#[derive(Default)]
struct State {
    /// base -> len of every reservation.
    reservations: BTreeMap<u64, u64>,
    /// handle index -> physical allocation (None once released).
    handles: Vec<Option<Physical>>,
    /// mapped va -> (len, handle, permissions, the mapping's number among
    /// the runtime's allocations).
    mappings: BTreeMap<u64, (u64, u64, u32, u64)>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(State::default))
}

/// Why a vmem call failed (mapped to HSA statuses by the export layer).
#[derive(Debug, PartialEq, Eq)]
pub enum VmemError {
    InvalidArgument,
    OutOfResources,
}

fn inside_reservation(s: &State, va: u64, len: u64) -> bool {
    s.reservations
        .range(..=va)
        .next_back()
        .is_some_and(|(&b, &l)| va >= b && va.saturating_add(len) <= b + l)
}

pub fn reserve(size: u64, align: u64) -> Result<u64, VmemError> {
    if size == 0 || (align != 0 && !align.is_power_of_two()) {
        return Err(VmemError::InvalidArgument);
    }
    let align = align.max(4096);
    let len = size
        .checked_next_multiple_of(4096)
        .ok_or(VmemError::InvalidArgument)?;
    // Over-reserve to align, then trim the ends.
    let total = len.checked_add(align).ok_or(VmemError::InvalidArgument)?;
    let p = sys::reserve(total as usize).ok_or(VmemError::OutOfResources)? as u64;
    let base = p.next_multiple_of(align);
    if base > p {
        // SAFETY: the range is the unaligned head of the reservation just
        // made here, outside `base..base+len`, not known to anything else.
        unsafe { sys::release(p as *mut u8, (base - p) as usize) };
    }
    let end = base + len;
    if p + total > end {
        // SAFETY: as above.
        unsafe { sys::release(end as *mut u8, (p + total - end) as usize) };
    }
    with(|s| s.reservations.insert(base, len));
    Ok(base)
}

pub fn free(va: u64, size: u64) -> Result<(), VmemError> {
    with(|s| {
        let len = *s.reservations.get(&va).ok_or(VmemError::InvalidArgument)?;
        if size.checked_next_multiple_of(4096) != Some(len) {
            return Err(VmemError::InvalidArgument);
        }
        if s.mappings.range(va..va + len).next().is_some() {
            return Err(VmemError::InvalidArgument); // still mapped
        }
        s.reservations.remove(&va);
        super::memory::next_id();
        // SAFETY: `va..va+len` is exactly a reservation of ours (just removed
        // from the table under its lock) with nothing mapped in it; no Rust
        // reference points into vmem reservations.
        unsafe { sys::release(va as *mut u8, len as usize) };
        Ok(())
    })
}

pub fn handle_create(pool: u64, size: u64, kind: u32) -> Result<u64, VmemError> {
    if size == 0 {
        return Err(VmemError::InvalidArgument);
    }
    let fd = sys::memfd(size).ok_or(VmemError::OutOfResources)?;
    Ok(with(|s| {
        s.handles.push(Some(Physical {
            fd,
            size,
            pool,
            kind,
            refs: 1,
            maps: 0,
        }));
        HANDLE_TAG | (s.handles.len() as u64 - 1)
    }))
}

fn handle_index(h: u64) -> Option<usize> {
    (h & TAG_MASK == HANDLE_TAG).then_some((h & !TAG_MASK) as usize)
}

pub fn handle_release(h: u64) -> Result<(), VmemError> {
    with(|s| {
        let slot = handle_index(h)
            .and_then(|i| s.handles.get_mut(i))
            .ok_or(VmemError::InvalidArgument)?;
        let live = slot.as_mut().ok_or(VmemError::InvalidArgument)?;
        // ROCr: a handle with no reference left (released, still mapped) is
        // refused.
        if live.refs == 0 {
            return Err(VmemError::InvalidArgument);
        }
        live.refs -= 1;
        if live.refs == 0 && live.maps == 0 {
            free_slot(slot);
        }
        Ok(())
    })
}

/// Close a physical allocation that has neither a reference nor a mapping
/// left, and empty its slot.
fn free_slot(slot: &mut Option<Physical>) {
    if let Some(p) = slot.take() {
        // SAFETY: the descriptor was created or duplicated by this module for
        // this handle, which was just taken out of the table, so nothing uses
        // it again.
        unsafe { sys::close(p.fd) };
    }
}

/// (pool, memory type) of a physical allocation.
pub fn handle_properties(h: u64) -> Result<(u64, u32), VmemError> {
    with(|s| {
        let p = handle_index(h)
            .and_then(|i| s.handles.get(i))
            .and_then(|p| p.as_ref())
            .ok_or(VmemError::InvalidArgument)?;
        Ok((p.pool, p.kind))
    })
}

/// `hsa_amd_vmem_retain_alloc_handle`: the handle of the physical allocation
/// mapped at `va` (anywhere inside the mapping), with one more reference,
/// which the caller gives back with [`handle_release`]. A handle whose
/// references were all released while it stayed mapped gets one again.
pub fn retain(va: u64) -> Result<u64, VmemError> {
    with(|s| {
        let h = s
            .mappings
            .range(..=va)
            .next_back()
            .filter(|(b, (len, ..))| va < *b + len)
            .map(|(_, &(_, h, _, _))| h)
            .ok_or(VmemError::InvalidArgument)?;
        let p = handle_index(h)
            .and_then(|i| s.handles.get_mut(i))
            .and_then(|p| p.as_mut())
            .ok_or(VmemError::InvalidArgument)?;
        p.refs = p.refs.checked_add(1).ok_or(VmemError::OutOfResources)?;
        Ok(h)
    })
}

pub fn map(va: u64, size: u64, offset: u64, h: u64) -> Result<(), VmemError> {
    with(|s| {
        let p = handle_index(h)
            .and_then(|i| s.handles.get(i))
            .and_then(|p| p.as_ref())
            .ok_or(VmemError::InvalidArgument)?;
        if size == 0 || va % 4096 != 0 || offset % 4096 != 0 || offset.saturating_add(size) > p.size
        {
            return Err(VmemError::InvalidArgument);
        }
        if !inside_reservation(s, va, size) {
            return Err(VmemError::InvalidArgument);
        }
        // Mapped but not yet accessible: access comes with set_access, as in ROCr.
        // SAFETY: the range was checked to lie inside one of our reservations.
        if !unsafe { sys::map_fd_fixed(va, size as usize, p.fd, offset, 0) } {
            return Err(VmemError::OutOfResources);
        }
        s.mappings
            .insert(va, (size, h, 0, super::memory::next_id()));
        if let Some(p) = handle_index(h)
            .and_then(|i| s.handles.get_mut(i))
            .and_then(|p| p.as_mut())
        {
            p.maps += 1;
        }
        Ok(())
    })
}

pub fn unmap(va: u64, size: u64) -> Result<(), VmemError> {
    // Records pushed before this are checked against the mapping as it was.
    super::memory::drain_capture();
    with(|s| {
        let (len, h, ..) = *s.mappings.get(&va).ok_or(VmemError::InvalidArgument)?;
        if size != len {
            return Err(VmemError::InvalidArgument);
        }
        // Back to an inaccessible reservation.
        // SAFETY: `va..va+len` is exactly one of our vmem mappings (table entry).
        if !unsafe { sys::reserve_fixed(va, len as usize) } {
            return Err(VmemError::OutOfResources);
        }
        s.mappings.remove(&va);
        super::memory::next_id();
        // The last mapping of a handle already released frees it (ROCr).
        if let Some(slot) = handle_index(h).and_then(|i| s.handles.get_mut(i))
            && let Some(p) = slot.as_mut()
        {
            p.maps = p.maps.saturating_sub(1);
            if p.maps == 0 && p.refs == 0 {
                free_slot(slot);
            }
        }
        Ok(())
    })
}

/// `permissions`: HSA_ACCESS_PERMISSION_NONE 0, RO 1, WO 2, RW 3 (the most
/// permissive over all agents applies: there is one host address space).
pub fn set_access(va: u64, size: u64, permissions: u32) -> Result<(), VmemError> {
    with(|s| {
        let entry = s.mappings.get_mut(&va).ok_or(VmemError::InvalidArgument)?;
        if size != entry.0 || permissions > 3 {
            return Err(VmemError::InvalidArgument);
        }
        // SAFETY: `va..va+size` is exactly one of our vmem mappings (table entry).
        if !unsafe { sys::protect(va, size as usize, permissions) } {
            return Err(VmemError::OutOfResources);
        }
        entry.2 = permissions;
        Ok(())
    })
}

pub fn get_access(va: u64) -> Result<u32, VmemError> {
    with(|s| {
        s.mappings
            .range(..=va)
            .next_back()
            .filter(|(b, (len, ..))| va < *b + len)
            .map(|(_, (_, _, perm, _))| *perm)
            .ok_or(VmemError::InvalidArgument)
    })
}

/// The mapped range holding `va`: (base, length, number), for the pointer
/// checker.
pub fn find_mapped(va: u64) -> Option<(u64, u64, u64)> {
    let g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref()?
        .mappings
        .range(..=va)
        .next_back()
        .filter(|(b, (len, ..))| va < *b + len)
        .map(|(&b, &(len, _, _, id))| (b, len, id))
}

/// Whether `va` lies in one of the vmem reservations (mapped or not).
pub fn reserved(va: u64) -> bool {
    let g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref().is_some_and(|s| inside_reservation(s, va, 1))
}

/// A duplicated file descriptor the program may pass to another process.
pub fn export(h: u64) -> Result<i32, VmemError> {
    with(|s| {
        let p = handle_index(h)
            .and_then(|i| s.handles.get(i))
            .and_then(|p| p.as_ref())
            .ok_or(VmemError::InvalidArgument)?;
        sys::dup(p.fd).ok_or(VmemError::OutOfResources)
    })
}

pub fn import(fd: i32) -> Result<u64, VmemError> {
    let size = sys::fd_size(fd).ok_or(VmemError::InvalidArgument)?;
    let own = sys::dup(fd).ok_or(VmemError::OutOfResources)?;
    Ok(with(|s| {
        s.handles.push(Some(Physical {
            fd: own,
            size,
            pool: 0,
            kind: 0,
            refs: 1,
            maps: 0,
        }));
        HANDLE_TAG | (s.handles.len() as u64 - 1)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ROCr's rule: a handle released while mapped lives on, with its
    /// mapping usable, until the mapping goes; a retain through the mapping
    /// gives it a reference again; a release with no reference left fails.
    #[test]
    fn a_handle_released_while_mapped_lives_until_its_last_mapping_goes() {
        let va = reserve(8192, 0).unwrap();
        let h = handle_create(7, 4096, 0).unwrap();
        map(va, 4096, 0, h).unwrap();
        set_access(va, 4096, 3).unwrap();
        handle_release(h).unwrap();
        assert_eq!(handle_properties(h), Ok((7, 0)), "released but mapped");
        assert_eq!(
            handle_release(h),
            Err(VmemError::InvalidArgument),
            "no reference left"
        );
        assert_eq!(retain(va), Ok(h), "retained through its mapping");
        handle_release(h).unwrap();
        unmap(va, 4096).unwrap();
        assert_eq!(
            handle_properties(h),
            Err(VmemError::InvalidArgument),
            "freed with its last mapping"
        );
        assert_eq!(
            retain(va),
            Err(VmemError::InvalidArgument),
            "nothing mapped"
        );

        // Still referenced at the unmap: it stays until its release.
        let h = handle_create(7, 4096, 0).unwrap();
        map(va, 4096, 0, h).unwrap();
        unmap(va, 4096).unwrap();
        assert_eq!(handle_properties(h), Ok((7, 0)));
        handle_release(h).unwrap();
        assert_eq!(handle_properties(h), Err(VmemError::InvalidArgument));
        free(va, 8192).unwrap();
    }
}
