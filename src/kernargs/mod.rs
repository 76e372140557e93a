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
