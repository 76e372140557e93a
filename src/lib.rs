//! SoftGPU: an HSA runtime shim that captures and validates every AQL packet a
//! program submits, under a diagnostic completion contract. Kernels never run.
//!
//! Module map (see `docs/DESIGN.md`):
//!
//! | module | what | unsafe? |
//! | --- | --- | --- |
//! | [`abi`] | `#[repr(C)]` mirrors of the pinned `hsa.h` types, constants, layout asserts | no |
//! | [`aql`] | pure packet parser/validator and queue processor over traits | no |
//! | [`capture`] | versioned binary capture format: background writer, bounded reader | no |
//! | [`code_object`] | bounded AMDGPU ELF reader: symbols, kernel descriptors, load images with relocations | no |
//! | [`isa`] | ISA target descriptors and the facts a virtual agent advertises, with provenance | no |
//! | [`report`] | the report view: labels, names and rows of captured records, shared by `cli` and `diff` | no |
//! | [`diff`] | normalising and comparing dispatch streams from captures and rocprof outputs | no |
//! | [`rocpd`] | rocpd (rocprofiler-sdk SQLite) databases: schema, reader for `diff`, writer for `inspect` | no |
//! | [`stats`] | the per-kernel summary of a capture (`inspect --format stats`, `run --stats`) | no |
//! | [`input`] | reading an input file once, bounded, regular files only | no |
//! | [`config`] | the `SOFTGPU_*` environment, parsed once | no |
//! | [`runtime`] | the virtual HSA runtime: agents, pools, signals, queues, doorbells | yes |
//! | [`interpose`] | the exported C ABI: one table of entry points, panic containment | yes |
//! | [`cli`] | the `softgpu` command line (`inspect`, `replay`, `run`, `diff`, `targets`, `objects`) | no |
//!
//! Layers point one way: `cli` uses `diff` and `report`, `diff` uses `report`,
//! `report` uses `capture` and `aql`; `capture` is a pure format (it stores
//! what the processor decided); `runtime` uses `aql`, `capture` and `isa`.
//!
//! `unsafe` is denied crate-wide (`Cargo.toml`) and allowed only on `runtime` and
//! `interpose`; every block there carries a SAFETY comment (`docs/UNSAFE.md`).

pub mod abi;
pub mod aql;
pub mod capture;
pub mod cli;
pub mod code_object;
pub mod config;
pub mod diff;
pub mod input;
pub mod isa;
pub mod report;
pub mod rocpd;
pub mod stats;

#[allow(unsafe_code)]
pub mod runtime;

#[allow(unsafe_code)]
pub mod interpose;
