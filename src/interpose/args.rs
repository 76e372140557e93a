//! Typed arguments at the C boundary.
//!
//! An export receives raw C pointers. Each one is wrapped once, at the top of
//! the export, by an `unsafe fn from_raw` whose `# Safety` section says what
//! the caller promises under the HSA contract; from there on the export's body
//! is safe code over these wrappers, which check null themselves and never
//! read or write past what `from_raw` was promised:
//!
//! - [`Out`]: an out-pointer to one `T`;
//! - [`InfoOut`]: an attribute's out-buffer, sized by the attribute's C type;
//! - [`OutWords`]: a caller's table of `len` bytes filled with pointer-sized words;
//! - [`InSlice`]: an in-array of `len` elements;
//! - [`InOpt`]: an optional in-pointer to one `T`;
//! - [`CStrArg`]: a C string borrowed for the call.
//!
//! Every wrapper carries the lifetime of the call it was built in, so nothing
//! borrowed from the caller outlives the export (there is no `'static` here).
//! Reads and writes are unaligned: C callers may pass any address.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};
use std::marker::PhantomData;

use crate::abi::HsaStatus;
use crate::runtime::agents::Info;

type R = Result<(), HsaStatus>;

/// An out-parameter: null, or room for one `T`.
pub struct Out<'a, T> {
    ptr: *mut T,
    _call: PhantomData<&'a mut T>,
}

impl<'a, T: Copy> Out<'a, T> {
    /// # Safety
    /// `ptr` is null or valid for a write of one `T` (at any alignment) for
    /// `'a`, and nothing else reads or writes it meanwhile.
    pub unsafe fn from_raw(ptr: *mut T) -> Self {
        Out {
            ptr,
            _call: PhantomData,
        }
    }

    pub fn is_null(&self) -> bool {
        self.ptr.is_null()
    }

    /// Write `v`; a null out-pointer is `INVALID_ARGUMENT`.
    pub fn write(&self, v: T) -> R {
        if self.ptr.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: non-null, and `from_raw`'s contract makes it valid for one
        // unaligned write of `T`.
        unsafe { self.ptr.write_unaligned(v) };
        Ok(())
    }

    /// Read back what the caller's slot holds now (after a real runtime
    /// wrote it, say); `None` for a null out-pointer.
    pub fn read(&self) -> Option<T> {
        if self.ptr.is_null() {
            return None;
        }
        // SAFETY: non-null and valid for a `T` by `from_raw`'s contract; `T`
        // is `Copy` and the slot holds a value the caller or the callee wrote.
        Some(unsafe { self.ptr.read_unaligned() })
    }

    /// The raw pointer, to pass on unchanged to the real runtime.
    pub fn as_raw(&self) -> *mut T {
        self.ptr
    }
}

/// The out-buffer of an `*_get_info` call: null, or room for the attribute's
/// C type, whose width is the one ROCr writes for that attribute.
pub struct InfoOut<'a> {
    ptr: *mut u8,
    _call: PhantomData<&'a mut u8>,
}

impl<'a> InfoOut<'a> {
    /// # Safety
    /// `ptr` is null or valid for writes, for `'a`, of as many bytes as ROCr
    /// writes for the attribute asked (the HSA contract: the caller sizes the
    /// buffer for the attribute's C type). [`InfoOut::write`] writes exactly
    /// the bytes of an [`Info`], whose width per attribute is ROCr's
    /// (checked in `runtime::agents` before an answer leaves it).
    pub unsafe fn from_raw(ptr: *mut c_void) -> Self {
        InfoOut {
            ptr: ptr as *mut u8,
            _call: PhantomData,
        }
    }

    /// Writes the value's bytes ([`Info::to_bytes`], without building them
    /// in a `Vec`: HIP asks some attributes millions of times, the rocBLAS
    /// client 11.8 million symbol attributes at start-up).
    pub fn write(&self, info: &Info) -> R {
        match info {
            Info::U8(v) => self.write_bytes(&[*v]),
            Info::U16(v) => self.write_bytes(&v.to_le_bytes()),
            Info::U32(v) => self.write_bytes(&v.to_le_bytes()),
            Info::U64(v) => self.write_bytes(&v.to_le_bytes()),
            Info::Bool(b) => self.write_bytes(&[u8::from(*b)]),
            Info::Bytes(b) => self.write_bytes(b),
        }
    }

    /// [`InfoOut::write`] of `Info::Bytes(bytes)`, without the `Vec`: for an
    /// answer borrowed from a table (a symbol's name). As with `write`, the
    /// bytes are the whole answer for the attribute asked, whose width the
    /// caller sized the buffer for (see `from_raw`).
    pub fn write_bytes(&self, bytes: &[u8]) -> R {
        if self.ptr.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        // SAFETY: non-null and, by `from_raw`'s contract, valid for the
        // attribute's width, which is `bytes.len()` (the whole answer for
        // the attribute asked). The source is our own value or a table of
        // ours, not the caller's buffer, so the ranges cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr, bytes.len()) };
        Ok(())
    }
}

/// A caller's table of `len` bytes, filled with pointer-sized words (an
/// extension's function table).
pub struct OutWords<'a> {
    ptr: *mut usize,
    len: usize,
    _call: PhantomData<&'a mut u8>,
}

impl<'a> OutWords<'a> {
    /// # Safety
    /// `ptr` is null or valid for writes of `len` bytes for `'a`.
    pub unsafe fn from_raw(ptr: *mut c_void, len: usize) -> Self {
        OutWords {
            ptr: ptr as *mut usize,
            len,
            _call: PhantomData,
        }
    }

    /// Write as many of `words` as fit in whole; null is `INVALID_ARGUMENT`.
    pub fn fill(&self, words: &[usize]) -> R {
        if self.ptr.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        let n = (self.len / std::mem::size_of::<usize>()).min(words.len());
        for (i, w) in words.iter().take(n).enumerate() {
            // SAFETY: word i < len / size_of::<usize>() lies inside the `len`
            // bytes `from_raw` was promised.
            unsafe { self.ptr.add(i).write_unaligned(*w) };
        }
        Ok(())
    }
}

/// An in-array of `len` elements of `T`, or null.
pub struct InSlice<'a, T> {
    ptr: *const T,
    len: usize,
    _call: PhantomData<&'a T>,
}

impl<'a, T: Copy> InSlice<'a, T> {
    /// # Safety
    /// `ptr` is null or valid for reads of `len` consecutive `T`s (at any
    /// alignment) for `'a`. Nothing is read at construction, so a `len` the
    /// callee refuses (too large) is never read at all.
    pub unsafe fn from_raw(ptr: *const T, len: usize) -> Self {
        InSlice {
            ptr,
            len,
            _call: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn is_null(&self) -> bool {
        self.ptr.is_null()
    }

    /// Element `i`; `None` past the end or for a null array.
    pub fn get(&self, i: usize) -> Option<T> {
        if self.ptr.is_null() || i >= self.len {
            return None;
        }
        // SAFETY: non-null and i < len: inside what `from_raw` was promised.
        Some(unsafe { self.ptr.add(i).read_unaligned() })
    }

    /// The elements in order (none for a null array).
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let n = if self.ptr.is_null() { 0 } else { self.len };
        (0..n).filter_map(|i| self.get(i))
    }
}

/// An optional in-pointer to one `T`.
pub struct InOpt<'a, T> {
    ptr: *const T,
    _call: PhantomData<&'a T>,
}

impl<'a, T: Copy> InOpt<'a, T> {
    /// # Safety
    /// `ptr` is null or valid for a read of one `T` (at any alignment) for `'a`.
    pub unsafe fn from_raw(ptr: *const T) -> Self {
        InOpt {
            ptr,
            _call: PhantomData,
        }
    }

    /// The value, or `None` for null.
    pub fn get(&self) -> Option<T> {
        if self.ptr.is_null() {
            return None;
        }
        // SAFETY: non-null and valid for one `T` by `from_raw`'s contract.
        Some(unsafe { self.ptr.read_unaligned() })
    }
}

/// A C string argument, borrowed for the call only.
pub struct CStrArg<'a> {
    s: Option<&'a CStr>,
}

impl<'a> CStrArg<'a> {
    /// # Safety
    /// `ptr` is null or points to a NUL-terminated string that stays readable
    /// and unchanged for `'a` (the HSA contract: for the duration of the call).
    pub unsafe fn from_raw(ptr: *const c_char) -> Self {
        CStrArg {
            s: if ptr.is_null() {
                None
            } else {
                // SAFETY: non-null and NUL-terminated for 'a (from_raw's contract).
                Some(unsafe { CStr::from_ptr(ptr) })
            },
        }
    }

    /// The string as UTF-8: null is `INVALID_ARGUMENT`, bad UTF-8 is `bad`.
    pub fn to_str(&self, bad: HsaStatus) -> Result<&'a str, HsaStatus> {
        self.s
            .ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?
            .to_str()
            .map_err(|_| bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_out_pointers_are_refused_and_never_written() {
        // SAFETY: null is allowed by every from_raw.
        let (o, i, w) = unsafe {
            (
                Out::<u32>::from_raw(std::ptr::null_mut()),
                InfoOut::from_raw(std::ptr::null_mut()),
                OutWords::from_raw(std::ptr::null_mut(), 64),
            )
        };
        assert_eq!(o.write(1), Err(HsaStatus::ERROR_INVALID_ARGUMENT));
        assert_eq!(o.read(), None);
        assert_eq!(
            i.write(&Info::U32(1)),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
        assert_eq!(w.fill(&[1, 2]), Err(HsaStatus::ERROR_INVALID_ARGUMENT));
    }

    #[test]
    fn writes_land_where_promised_and_tables_stop_at_their_length() {
        let mut v = 0u64;
        // SAFETY: a live local.
        let o = unsafe { Out::from_raw(&mut v) };
        o.write(7).unwrap();
        assert_eq!(o.read(), Some(7));
        let mut table = [0usize; 4];
        // SAFETY: 3 words of a live 4-word local: the fourth must stay 0.
        let w = unsafe { OutWords::from_raw(table.as_mut_ptr() as *mut c_void, 3 * 8 + 7) };
        w.fill(&[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(table, [1, 2, 3, 0]);
    }

    #[test]
    fn in_arrays_read_within_their_length_and_strings_are_checked() {
        let a = [1u32, 2, 3];
        // SAFETY: a live 3-element local.
        let s = unsafe { InSlice::from_raw(a.as_ptr(), 3) };
        assert_eq!(s.iter().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(s.get(3), None);
        // SAFETY: null is allowed.
        let n = unsafe { InSlice::<u32>::from_raw(std::ptr::null(), 1 << 40) };
        assert_eq!(n.iter().count(), 0);
        // SAFETY: a NUL-terminated literal; null.
        let (c, z) = unsafe {
            (
                CStrArg::from_raw(c"gfx90a".as_ptr()),
                CStrArg::from_raw(std::ptr::null()),
            )
        };
        assert_eq!(c.to_str(HsaStatus::ERROR_INVALID_ISA_NAME), Ok("gfx90a"));
        assert_eq!(
            z.to_str(HsaStatus::ERROR_INVALID_ISA_NAME),
            Err(HsaStatus::ERROR_INVALID_ARGUMENT)
        );
        let bad = [0xffu8, 0];
        // SAFETY: a NUL-terminated local.
        let b = unsafe { CStrArg::from_raw(bad.as_ptr() as *const c_char) };
        assert_eq!(
            b.to_str(HsaStatus::ERROR_INVALID_ISA_NAME),
            Err(HsaStatus::ERROR_INVALID_ISA_NAME)
        );
        let x = 5u64;
        // SAFETY: a live local; null.
        let (p, q) = unsafe {
            (
                InOpt::from_raw(&x),
                InOpt::<u64>::from_raw(std::ptr::null()),
            )
        };
        assert_eq!((p.get(), q.get()), (Some(5), None));
    }
}
