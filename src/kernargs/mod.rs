//! Kernel arguments: decoding a dispatch's kernarg block, and checking its
//! pointer arguments against the runtime's allocations. Pure: no capture
//! format, no runtime state (the runtime supplies an [`lint::AllocationTable`]).
//!
//! Sources, for each `.args` entry of the kernel's metadata
//! ([`crate::code_object::KernelArg`]: offset, size, value kind):
//! - the explicit argument's C++ type: the demangled kernel name's parameter
//!   list ([`signature`]), else the metadata's `.type_name`;
//! - its name: DWARF, for code objects built with `-g` ([`dwarf`]), else the
//!   metadata's `.name`;
//! - its value: the block's bytes at the metadata's offset, read by type
//!   (explicit) or by value kind (hidden) ([`decode`]).
//!
//! Where the sources disagree, the result says so ([`decode::Disagreement`])
//! instead of guessing. See `docs/KERNEL_ARGUMENTS.md`.

pub mod decode;
pub mod dwarf;
pub mod lint;
pub mod signature;

pub use decode::{
    ArgValue, DecodedArg, DecodedArgs, Disagreement, HiddenKind, Sources, decode, hex,
};
pub use dwarf::{DwarfError, ParameterNames, parameter_names};
pub use lint::{
    Allocation, AllocationTable, ArgFinding, DispatchGeometry, HiddenMismatch, PointerFinding,
    check_arguments, check_hidden, check_pointer, expected_hidden,
};
pub use signature::{ArgType, Scalar, classify, function_name, parameters};

use crate::code_object::{Metadata, demangle};

/// What a decoding needs of one kernel besides its metadata, gathered once
/// per code object (demangling and DWARF are too slow for every dispatch).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelSources {
    /// The kernel descriptor symbol (`<name>.kd`).
    pub symbol: String,
    /// The demangled kernel name, when it demangles.
    pub signature: Option<String>,
    /// Explicit-argument names from DWARF, when the code object has them.
    pub names: Option<Vec<Option<String>>>,
}

impl KernelSources {
    /// The borrowed form [`decode`] takes.
    pub fn sources(&self) -> Sources<'_> {
        Sources {
            signature: self.signature.as_deref(),
            names: self.names.as_deref(),
        }
    }
}

/// [`KernelSources`] for every kernel of `metadata` (in its order), from the
/// code object's bytes. A DWARF that cannot be read leaves every kernel
/// without names and is returned beside them; it is not fatal.
pub fn kernel_sources(
    code_object: &[u8],
    metadata: &Metadata,
) -> (Vec<KernelSources>, Option<DwarfError>) {
    let (names, error) = match ParameterNames::read(code_object) {
        Ok(n) => (n, None),
        Err(e) => (ParameterNames::default(), Some(e)),
    };
    let out = metadata
        .kernels
        .iter()
        .map(|k| {
            let base = k.symbol.strip_suffix(".kd").unwrap_or(&k.symbol);
            KernelSources {
                symbol: k.symbol.clone(),
                signature: demangle(base),
                names: names.kernel(&k.symbol).map(<[_]>::to_vec),
            }
        })
        .collect();
    (out, error)
}

/// A queue's cached kernarg allocation: `(base, size, free epoch)`, and the
/// buffer its blocks are copied into (allocated with the queue, so the
/// doorbell path neither allocates nor clears one).
#[derive(Clone, Copy, Debug, Default)]
pub struct KernargRange {
    // Filled by the virtual runtime's `stage_kernarg`, or by the pass-through table's copy in
    // intercept and observe mode (`interpose::passthrough`).
    pub(crate) base: u64,
    /// 0 until filled (then at least 1), so a cache never filled holds nothing.
    pub(crate) size: u64,
    pub(crate) epoch: u64,
}

impl KernargRange {
    /// Whether the cached allocation holds `addr` and was filled at the free
    /// epoch `epoch`. One compare for the range: an `addr` below `base`
    /// wraps to a large offset.
    #[inline]
    pub(crate) fn holds(&self, addr: u64, epoch: u64) -> bool {
        self.epoch == epoch && addr.wrapping_sub(self.base) < self.size
    }
}

/// Why a kernarg block could not be copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernargReadError {
    /// Not inside memory this runtime allocated.
    NotOurs,
}

#[cfg(test)]
mod tests {
    use super::KernargRange;

    #[test]
    fn a_kernarg_range_holds_exactly_its_allocation_at_its_epoch() {
        // Never filled: size 0 holds nothing, not even address 0 at epoch 0.
        let empty = KernargRange::default();
        assert!(!empty.holds(0, 0));
        assert!(!empty.holds(u64::MAX, 0));

        let r = KernargRange {
            base: 0x1000,
            size: 0x100,
            epoch: 7,
        };
        assert!(r.holds(0x1000, 7), "the first byte");
        assert!(r.holds(0x10ff, 7), "the last byte");
        assert!(!r.holds(0x1100, 7), "one past the end");
        assert!(
            !r.holds(0x0fff, 7),
            "one below the base (wraps to a large offset)"
        );
        assert!(!r.holds(0, 7));
        assert!(!r.holds(0x1000, 8), "a free since the fill: another epoch");

        // An allocation that ends at the top of the address space.
        let top = KernargRange {
            base: u64::MAX - 0xf,
            size: 0x10,
            epoch: 0,
        };
        assert!(top.holds(u64::MAX, 0));
        assert!(!top.holds(u64::MAX - 0x10, 0));
    }
}
