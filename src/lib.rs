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
//! | [`kernargs`] | kernarg blocks decoded with `.args` metadata, signature types and DWARF names; pointer checks over an allocation table | no |
//! | [`isa`] | ISA target descriptors and the facts a virtual agent advertises, with provenance | no |
//! | [`report`] | the report view: labels, names and rows of captured records, shared by `cli` and `diff` | no |
//! | [`diff`] | normalising and comparing dispatch streams from captures and rocprof outputs | no |
//! | [`rocpd`] | rocpd (rocprofiler-sdk SQLite) databases: schema, reader for `diff`, writer for `inspect` | no |
//! | [`stats`] | the per-kernel summary of a capture (`inspect --format stats`, `run --stats`) | no |
//! | [`input`] | reading an input file once, bounded, regular files only | no |
//! | [`config`] | the `SOFTGPU_*` environment, parsed once | no |
//! | [`sys`] | the capture's shared file mapping, termination-signal hook and clocks, behind safe interfaces (one file) | `sys.rs` |
//! | [`kernargs`] | decoding kernarg blocks from metadata, signature and DWARF; pointer findings | no |
//! | [`lifecycle`] | the one atomic word: uninitialised, initialising, ready in a mode, finished, forked child | no |
//! | [`real`] | the real ROCr below the shim: found through the loader, reached through the `Below` interface | `real.rs` |
//! | [`runtime`] | the virtual HSA runtime: agents, pools, signals, queues, doorbells | some files |
//! | [`interpose`] | the exported C ABI: one table of entry points, panic containment | some files |
//! | [`cli`] | the `softgpu` command line (`inspect`, `replay`, `run`, `diff`, `targets`, `objects`) | no |
//!
//! Layers point one way: `cli` uses `diff` and `report`, `diff` uses `report`,
//! `report` uses `capture` and `aql`; `capture` is a pure format (it stores
//! what the processor decided); `interpose` uses `runtime`, which uses
//! `lifecycle`, `real`, `aql`, `capture`, `code_object` and `isa`, never
//! `interpose` (the forwarding layer reaches down through [`real::Below`]).
//!
//! `unsafe` is denied crate-wide (`Cargo.toml`) and allowed file by file
//! (`#![allow(unsafe_code)]` at the top of each file that needs it, in
//! `runtime`, `interpose`, `real.rs` and `sys.rs`); every block carries a SAFETY comment,
//! and `docs/UNSAFE.md` lists every such file (`tests/unsafe_inventory.rs`).

// Outside tests no code may panic on a bad value: a panic that reached the FFI
// boundary would be contained, but an error must be a typed error, not a
// crash. (`cargo clippy --all-targets` lints tests with these allowed.)
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod abi;
pub mod aql;
pub mod capture;
pub mod cli;
pub mod code_object;
pub mod config;
pub mod diff;
pub mod input;
pub mod isa;
pub mod kernargs;
pub mod lifecycle;
pub mod real;
pub mod report;
pub mod rocpd;
pub mod stats;
pub mod sys;

pub mod runtime;

pub mod interpose;
