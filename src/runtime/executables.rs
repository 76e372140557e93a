//! Code-object readers, executables and their symbols: real loading, so HIP's
//! module machinery works and every dispatch can be named.
//!
//! Loading an agent code object parses it with the bounded reader in
//! [`crate::code_object`], allocates `load_size` bytes of host memory, writes
//! the PT_LOAD segments there and applies the dynamic relocations. Kernel
//! objects are the loaded addresses of the 64-byte kernel descriptors. Loaded
//! images are never freed (not even by `hsa_executable_destroy`): dispatches
//! and captures may refer to their kernel descriptors for the life of the
//! process. Nothing here executes any of the code it loads.
//!
//! Handles are tagged indices into registries that only grow, so a stale or
//! forged handle is an error, never a dangling pointer.
#![allow(unsafe_code)] // This file's unsafe regions are listed in docs/UNSAFE.md.

use std::alloc::Layout;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use crate::abi::HsaStatus;
use crate::code_object::{self, CodeObject, KernelDescriptor, KernelMetadata, SymbolKind};

const READER_TAG: u64 = 0x5347_5200_0000_0000; // "SGR"
const EXEC_TAG: u64 = 0x5347_4500_0000_0000; // "SGE"
const SYMBOL_TAG: u64 = 0x5347_5300_0000_0000; // "SGS"
const LOADED_TAG: u64 = 0x5347_4c00_0000_0000; // "SGL"
const TAG_MASK: u64 = 0xffff_ff00_0000_0000;

/// One executable symbol, as `hsa_executable_symbol_get_info` reports it.
/// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT` of every
/// kernel: ROCr's answer for code object v3 and later.
pub const KERNARG_SEGMENT_ALIGNMENT: u32 = 16;

#[derive(Clone, Debug)]
pub struct SymbolEntry {
    pub executable: u64,
    pub agent_index: usize,
    pub name: String,
    pub kind: SymbolKind,
    pub address: u64,
    pub size: u64,
    pub global: bool,
    pub kd: Option<KernelDescriptor>,
    pub kernarg_size: u32,
    pub kernarg_align: u32,
}

#[derive(Debug, Default)]
struct ExecutableState {
    frozen: bool,
    destroyed: bool,
    profile: u32,
    rounding: u32,
    /// Indices into SYMBOLS.
    symbols: Vec<usize>,
}

static READERS: Mutex<Vec<Option<Arc<Vec<u8>>>>> = Mutex::new(Vec::new());
static EXECUTABLES: Mutex<Vec<ExecutableState>> = Mutex::new(Vec::new());
static SYMBOLS: RwLock<Vec<SymbolEntry>> = RwLock::new(Vec::new());
/// Every loaded kernel, by kernel object (loaded kernel descriptor address).
/// Only grows: images are never unloaded, so an entry never goes stale.
static KERNELS: RwLock<Option<std::collections::HashMap<u64, crate::aql::KernelInfo>>> =
    RwLock::new(None);

/// Moves with every change of [`KERNELS`] (inside its write lock): whoever
/// reads a number and then looks kernels up sees every change made before
/// the number moved, so a verdict remembered with an unchanged number holds.
static KERNELS_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The kernel table's change number (see [`KERNELS_GENERATION`]); read it
/// before the lookups a remembered result depends on.
pub fn kernels_generation() -> u64 {
    KERNELS_GENERATION.load(std::sync::atomic::Ordering::SeqCst)
}

/// The kernel loaded at `kernel_object`, if any.
pub fn kernel_info(kernel_object: u64) -> Option<crate::aql::KernelInfo> {
    KERNELS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&kernel_object).copied())
}

/// Loaded images: (base, size, executable handle).
static IMAGES: RwLock<Vec<(u64, u64, u64)>> = RwLock::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The executable whose loaded image contains `addr`.
pub fn find_image(addr: u64) -> Option<u64> {
    let images = IMAGES.read().unwrap_or_else(|e| e.into_inner());
    images
        .iter()
        .find(|(b, s, _)| addr >= *b && addr < b + s)
        .map(|(_, _, e)| *e)
}

/// `hsa_code_object_reader_create_from_memory`: the reader keeps its own copy.
pub fn create_reader(bytes: Vec<u8>) -> u64 {
    let mut r = lock(&READERS);
    r.push(Some(Arc::new(bytes)));
    READER_TAG | (r.len() as u64 - 1)
}

pub fn destroy_reader(handle: u64) -> Result<(), HsaStatus> {
    let mut r = lock(&READERS);
    let slot = index(handle, READER_TAG)
        .and_then(|i| r.get_mut(i))
        .ok_or(HsaStatus::ERROR_INVALID_CODE_OBJECT_READER)?;
    slot.take()
        .map(|_| ())
        .ok_or(HsaStatus::ERROR_INVALID_CODE_OBJECT_READER)
}

fn reader_bytes(handle: u64) -> Result<Arc<Vec<u8>>, HsaStatus> {
    let r = lock(&READERS);
    index(handle, READER_TAG)
        .and_then(|i| r.get(i))
        .and_then(|s| s.clone())
        .ok_or(HsaStatus::ERROR_INVALID_CODE_OBJECT_READER)
}

fn index(handle: u64, tag: u64) -> Option<usize> {
    (handle & TAG_MASK == tag).then_some((handle & !TAG_MASK) as usize)
}

/// `hsa_executable_create(_alt)`.
pub fn create_executable(profile: u32, rounding: u32) -> u64 {
    let mut e = lock(&EXECUTABLES);
    e.push(ExecutableState {
        profile,
        rounding,
        ..Default::default()
    });
    EXEC_TAG | (e.len() as u64 - 1)
}

fn with_exec<R>(
    handle: u64,
    f: impl FnOnce(&mut ExecutableState) -> Result<R, HsaStatus>,
) -> Result<R, HsaStatus> {
    let mut e = lock(&EXECUTABLES);
    let st = index(handle, EXEC_TAG)
        .and_then(|i| e.get_mut(i))
        .filter(|s| !s.destroyed)
        .ok_or(HsaStatus::ERROR_INVALID_EXECUTABLE)?;
    f(st)
}

pub fn destroy_executable(handle: u64) -> Result<(), HsaStatus> {
    with_exec(handle, |s| {
        s.destroyed = true;
        Ok(())
    })
}

pub fn freeze(handle: u64) -> Result<(), HsaStatus> {
    with_exec(handle, |s| {
        if s.frozen {
            return Err(HsaStatus::ERROR_FROZEN_EXECUTABLE);
        }
        s.frozen = true;
        Ok(())
    })
}

/// `hsa_executable_get_info`: (profile, state, rounding).
pub fn info(handle: u64) -> Result<(u32, u32, u32), HsaStatus> {
    with_exec(handle, |s| Ok((s.profile, u32::from(s.frozen), s.rounding)))
}

/// What a load produced, for the capture and the caller.
pub struct Loaded {
    pub handle: u64,
    pub base: u64,
    pub size: u64,
    /// (kernel object address, symbol name) of every kernel.
    pub kernels: Vec<(u64, String)>,
    /// Register counts and static sizes of every kernel, for the capture.
    pub metas: Vec<crate::capture::KernelMeta>,
    /// What decoding each kernel's arguments needs, for the capture (the
    /// same entries the pointer checker looks up, shared).
    pub args: Vec<std::sync::Arc<crate::capture::KernelArgSources>>,
}

/// What decoding each loaded kernel's arguments needs, by kernel object (for
/// the pointer checker on the capture's writer thread).
static ARG_SOURCES: RwLock<Option<HashMap<u64, std::sync::Arc<crate::capture::KernelArgSources>>>> =
    RwLock::new(None);

/// The argument layout and sources of a loaded kernel.
pub fn arg_sources(kernel_object: u64) -> Option<std::sync::Arc<crate::capture::KernelArgSources>> {
    ARG_SOURCES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&kernel_object).cloned())
}

/// `hsa_executable_load_agent_code_object`: parse, check the target, map the
/// segments into fresh host memory, relocate, and register the symbols.
pub fn load(
    exec: u64,
    reader: u64,
    agent_index: usize,
    agent_mach: u32,
) -> Result<Loaded, HsaStatus> {
    with_exec(exec, |s| {
        if s.frozen {
            Err(HsaStatus::ERROR_FROZEN_EXECUTABLE)
        } else {
            Ok(())
        }
    })?;
    let bytes = reader_bytes(reader)?;
    let co = code_object::parse(&bytes).map_err(|e| {
        tracing::warn!(
            "softgpu: hsa_executable_load_agent_code_object: not a loadable AMDGPU code object: {e}"
        );
        HsaStatus::ERROR_INVALID_CODE_OBJECT
    })?;
    if co.mach != agent_mach {
        tracing::warn!(
            "softgpu: hsa_executable_load_agent_code_object: code object is for EF_AMDGPU_MACH {:#x}, the agent is {:#x}",
            co.mach,
            agent_mach
        );
        // ROCr's loader answers a code object whose ISA the agent does not
        // support with INCOMPATIBLE_ARGUMENTS; HIP turns a failed load into
        // hipErrorNoBinaryForGpu / a module-load error.
        return Err(HsaStatus::ERROR_INCOMPATIBLE_ARGUMENTS);
    }
    let size = co.load_size.max(code_object::PAGE_SIZE);
    let align = co.load_align.max(code_object::PAGE_SIZE);
    let layout = Layout::from_size_align(size as usize, align as usize)
        .map_err(|_| HsaStatus::ERROR_INVALID_CODE_OBJECT)?;
    // SAFETY: layout has a non-zero size (at least one page) and a power-of-two
    // alignment (from_size_align checked it).
    let base = unsafe { std::alloc::alloc_zeroed(layout) };
    if base.is_null() {
        return Err(HsaStatus::ERROR_OUT_OF_RESOURCES);
    }
    // SAFETY: `base` is a fresh allocation of exactly `size` bytes that nothing
    // else references yet; the slice lives only for this call.
    let image = unsafe { std::slice::from_raw_parts_mut(base, size as usize) };
    let resolve = |name: &str| resolve_in(exec, agent_index, name);
    if let Err(e) = co.load_into(base as u64, image, &resolve) {
        tracing::warn!("softgpu: hsa_executable_load_agent_code_object: {e}");
        // SAFETY: allocated above with this layout and not published anywhere.
        unsafe { std::alloc::dealloc(base, layout) };
        return Err(HsaStatus::ERROR_INVALID_CODE_OBJECT);
    }
    let base = base as u64;
    // Every metadata note's kernels, merged (Tensile code objects hold one
    // note per kernel), indexed once: a code object can hold thousands.
    let md_of: HashMap<&str, &KernelMetadata> = co
        .metadata()
        .map(|m| m.kernels.iter().map(|k| (k.symbol.as_str(), k)).collect())
        .unwrap_or_default();
    if let Some(p) = co.metadata_problems().first() {
        tracing::warn!(
            "softgpu: hsa_executable_load_agent_code_object: {} metadata problem(s), the first at note offset {}: {}; kernels without usable metadata are checked from their kernel descriptors only",
            co.metadata_problems().len(),
            p.note_offset,
            p.error
        );
    }
    let entries = symbol_entries(&co, &md_of, exec, agent_index, base);
    // Signatures and DWARF names, once per code object (decoding needs them).
    let sources: HashMap<String, crate::kernargs::KernelSources> = match co.metadata() {
        Some(md) => {
            let (all, dwarf) = crate::kernargs::kernel_sources(&bytes, md);
            if let Some(e) = dwarf {
                tracing::debug!(
                    "softgpu: a code object's DWARF could not be read ({e}); its kernel arguments have no names"
                );
            }
            all.into_iter().map(|k| (k.symbol.clone(), k)).collect()
        }
        None => HashMap::new(),
    };
    let args: Vec<std::sync::Arc<crate::capture::KernelArgSources>> = entries
        .iter()
        .filter(|e| e.kind == SymbolKind::Kernel)
        .filter_map(|e| {
            let md = md_of.get(e.name.as_str()).copied()?;
            Some(std::sync::Arc::new(crate::capture::KernelArgSources {
                kernel_object: e.address,
                metadata: KernelMetadata {
                    symbol: md.symbol.clone(),
                    kernarg_segment_size: md.kernarg_segment_size,
                    group_segment_fixed_size: md.group_segment_fixed_size,
                    args: md.args.clone(),
                    ..KernelMetadata::default()
                },
                sources: sources.get(e.name.as_str()).cloned().unwrap_or_default(),
            }))
        })
        .collect();
    {
        let mut m = ARG_SOURCES.write().unwrap_or_else(|e| e.into_inner());
        let m = m.get_or_insert_with(Default::default);
        for a in &args {
            m.insert(a.kernel_object, a.clone());
        }
    }
    let kernels: Vec<(u64, String)> = entries
        .iter()
        .filter(|e| e.kind == SymbolKind::Kernel)
        .map(|e| (e.address, e.name.clone()))
        .collect();
    let metas: Vec<crate::capture::KernelMeta> = entries
        .iter()
        .filter(|e| e.kind == SymbolKind::Kernel)
        .map(|e| {
            let md = md_of.get(e.name.as_str()).copied();
            let kd = e.kd.unwrap_or_default();
            crate::capture::KernelMeta {
                kernel_object: e.address,
                sgpr_count: md.and_then(|m| m.sgpr_count).unwrap_or(0) as u32,
                vgpr_count: md.and_then(|m| m.vgpr_count).unwrap_or(0) as u32,
                agpr_count: md.and_then(|m| m.agpr_count).unwrap_or(0) as u32,
                group_segment_fixed_size: md.map_or(kd.group_segment_fixed_size, |m| {
                    m.group_segment_fixed_size as u32
                }),
                private_segment_fixed_size: md.map_or(kd.private_segment_fixed_size, |m| {
                    m.private_segment_fixed_size as u32
                }),
                kernarg_size: e.kernarg_size,
                wavefront_size: md
                    .and_then(|m| m.wavefront_size)
                    .map_or(kd.wavefront_size(), |w| w as u32),
                max_flat_workgroup_size: md.and_then(|m| m.max_flat_workgroup_size).unwrap_or(0)
                    as u32,
            }
        })
        .collect();
    {
        let mut k = KERNELS.write().unwrap_or_else(|e| e.into_inner());
        KERNELS_GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let map = k.get_or_insert_with(Default::default);
        for e in entries.iter().filter(|e| e.kind == SymbolKind::Kernel) {
            let md = md_of.get(e.name.as_str()).copied();
            let kd = e.kd.unwrap_or_default();
            map.insert(
                e.address,
                crate::aql::KernelInfo {
                    agent: agent_index as u32,
                    kernarg_size: e.kernarg_size,
                    group_segment_fixed_size: md.map_or(kd.group_segment_fixed_size, |m| {
                        m.group_segment_fixed_size as u32
                    }),
                    private_segment_fixed_size: md.map_or(kd.private_segment_fixed_size, |m| {
                        m.private_segment_fixed_size as u32
                    }),
                    max_flat_workgroup_size: md.and_then(|m| m.max_flat_workgroup_size).unwrap_or(0)
                        as u32,
                    reqd_workgroup_size: md
                        .and_then(|m| m.reqd_workgroup_size)
                        .map(|r| [r[0] as u32, r[1] as u32, r[2] as u32]),
                    runtime_blit: crate::aql::is_runtime_blit_kernel(&e.name),
                },
            );
        }
    }
    let indices = {
        let mut all = SYMBOLS.write().unwrap_or_else(|e| e.into_inner());
        let first = all.len();
        all.extend(entries);
        first..all.len()
    };
    with_exec(exec, |s| {
        s.symbols.extend(indices.clone());
        Ok(())
    })?;
    IMAGES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .push((base, size, exec));
    tracing::debug!(
        "softgpu: loaded a code object at {base:#x} ({size} bytes, {} kernels)",
        kernels.len()
    );
    Ok(Loaded {
        handle: LOADED_TAG | indices.start as u64,
        base,
        size,
        kernels,
        metas,
        args,
    })
}

fn symbol_entries(
    co: &CodeObject,
    md_of: &HashMap<&str, &KernelMetadata>,
    exec: u64,
    agent_index: usize,
    base: u64,
) -> Vec<SymbolEntry> {
    co.symbols
        .iter()
        .filter(|s| matches!(s.kind, SymbolKind::Kernel | SymbolKind::Variable))
        .map(|s| {
            let kd = co.kernel_descriptor(s);
            let md = md_of.get(s.name.as_str()).copied();
            let kernarg_size = md
                .map(|m| m.kernarg_segment_size as u32)
                .or(kd.map(|k| k.kernarg_size))
                .unwrap_or(0);
            // As ROCr reports it for a code object v3 and later kernel (a
            // `.kd` symbol, the only kind SoftGPU loads): always 16 bytes, the
            // AQL kernarg alignment (its loader, `LoadDefinitionSymbol`,
            // ignores the metadata's `.kernarg_segment_align`, which is often
            // 8 or 4). Programs size their kernarg blocks by it, and
            // rocrtst's loader asserts it is at least 16.
            let kernarg_align = KERNARG_SEGMENT_ALIGNMENT;
            SymbolEntry {
                executable: exec,
                agent_index,
                name: s.name.clone(),
                kind: s.kind,
                address: base.wrapping_add(s.value),
                size: s.size,
                global: s.global,
                kd,
                kernarg_size,
                kernarg_align,
            }
        })
        .collect()
}

/// An undefined symbol of a code object being loaded: a global of another code
/// object already loaded into the same executable for the same agent.
fn resolve_in(exec: u64, agent_index: usize, name: &str) -> Option<u64> {
    let ids = with_exec(exec, |s| Ok(s.symbols.clone())).ok()?;
    let all = SYMBOLS.read().unwrap_or_else(|e| e.into_inner());
    ids.iter()
        .filter_map(|&i| all.get(i))
        .find(|e| e.global && e.name == name && e.agent_index == agent_index)
        .map(|e| e.address)
}

/// `hsa_executable_get_symbol_by_name`. `agent_index` is `None` for program symbols.
pub fn symbol_by_name(exec: u64, name: &str, agent_index: Option<usize>) -> Result<u64, HsaStatus> {
    let ids = with_exec(exec, |s| Ok(s.symbols.clone()))?;
    let all = SYMBOLS.read().unwrap_or_else(|e| e.into_inner());
    ids.iter()
        .copied()
        .find(|&i| {
            all.get(i)
                .is_some_and(|e| e.name == name && agent_index.is_none_or(|a| a == e.agent_index))
        })
        .map(|i| SYMBOL_TAG | i as u64)
        .ok_or(HsaStatus::ERROR_INVALID_SYMBOL_NAME)
}

/// Every symbol handle of an executable, optionally for one agent.
pub fn symbols_of(exec: u64, agent_index: Option<usize>) -> Result<Vec<u64>, HsaStatus> {
    let ids = with_exec(exec, |s| Ok(s.symbols.clone()))?;
    let all = SYMBOLS.read().unwrap_or_else(|e| e.into_inner());
    Ok(ids
        .into_iter()
        .filter(|&i| {
            all.get(i)
                .is_some_and(|e| agent_index.is_none_or(|a| a == e.agent_index))
        })
        .map(|i| SYMBOL_TAG | i as u64)
        .collect())
}

/// `f` of the symbol behind a handle, without copying it (run with the
/// symbol table's read lock held: `f` must not call back into this module's
/// writers). HIP asks each symbol's attributes again at every kernel it
/// looks up: 11.8 million `hsa_executable_symbol_get_info` calls in the
/// rocBLAS client's start-up, each of which cloned the symbol's name.
pub fn with_symbol<T>(handle: u64, f: impl FnOnce(&SymbolEntry) -> T) -> Result<T, HsaStatus> {
    let all = SYMBOLS.read().unwrap_or_else(|e| e.into_inner());
    index(handle, SYMBOL_TAG)
        .and_then(|i| all.get(i))
        .map(f)
        .ok_or(HsaStatus::ERROR_INVALID_EXECUTABLE_SYMBOL)
}

/// What decoding needs of each kernel of a code object the *real* runtime
/// loads (intercept and observe modes), by kernel descriptor symbol: the
/// metadata's argument layout, and the signature and DWARF names.
pub type RealCodeObjectArgs = HashMap<String, (KernelMetadata, crate::kernargs::KernelSources)>;

/// [`RealCodeObjectArgs`] of a code object's bytes (`None`: not a code
/// object SoftGPU can parse, or no metadata: its kernels' arguments are then
/// captured but not decoded).
pub fn code_object_args(bytes: &[u8]) -> Option<RealCodeObjectArgs> {
    let co = code_object::parse(bytes).ok()?;
    let md = co.metadata()?;
    let (all, _dwarf) = crate::kernargs::kernel_sources(bytes, md);
    let mut sources: HashMap<String, crate::kernargs::KernelSources> =
        all.into_iter().map(|k| (k.symbol.clone(), k)).collect();
    Some(
        md.kernels
            .iter()
            .map(|k| {
                let m = KernelMetadata {
                    symbol: k.symbol.clone(),
                    kernarg_segment_size: k.kernarg_segment_size,
                    group_segment_fixed_size: k.group_segment_fixed_size,
                    args: k.args.clone(),
                    ..KernelMetadata::default()
                };
                let src = sources.remove(&k.symbol).unwrap_or_default();
                (k.symbol.clone(), (m, src))
            })
            .collect(),
    )
}

/// Record what decoding the arguments of a real executable's kernels needs
/// (intercept and observe modes), from the code objects the program loaded
/// into it, matched by symbol name; stored for the pointer checker and in the
/// capture (a KernelArgs frame), as a load in virtual mode does.
pub fn record_real_kernel_args(
    rt: &super::Runtime,
    kernels: &[crate::real::RealKernel],
    objects: &[Arc<RealCodeObjectArgs>],
) {
    let args: Vec<Arc<crate::capture::KernelArgSources>> = kernels
        .iter()
        .filter(|r| r.kernel_object != 0)
        .filter_map(|r| {
            let with_kd = format!("{}.kd", r.name);
            let (m, src) = objects
                .iter()
                .find_map(|o| o.get(&r.name).or_else(|| o.get(&with_kd)))?;
            Some(Arc::new(crate::capture::KernelArgSources {
                kernel_object: r.kernel_object,
                metadata: m.clone(),
                sources: src.clone(),
            }))
        })
        .collect();
    if args.is_empty() {
        return;
    }
    {
        let mut m = ARG_SOURCES.write().unwrap_or_else(|e| e.into_inner());
        let m = m.get_or_insert_with(Default::default);
        for a in &args {
            m.insert(a.kernel_object, a.clone());
        }
    }
    if let Some(c) = &rt.capture {
        c.add_kernel_args(args);
    }
}

/// Record the kernels of an executable the *real* runtime loaded and froze
/// (intercept and observe modes), so dispatches are named and checked against
/// what the real runtime reports for each kernel: kernarg size and static
/// segment sizes. The real runtime does not report a kernel's maximum or
/// required workgroup size or register counts, so those stay unknown.
pub fn record_real_kernels(rt: &super::Runtime, kernels: &[crate::real::RealKernel]) {
    if kernels.is_empty() {
        return;
    }
    let agent_of = |h: u64| {
        rt.real_agents
            .iter()
            .position(|a| a.handle == h)
            .map_or(u32::MAX, |i| i as u32)
    };
    {
        let mut k = KERNELS.write().unwrap_or_else(|e| e.into_inner());
        KERNELS_GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let map = k.get_or_insert_with(Default::default);
        for r in kernels.iter().filter(|r| r.kernel_object != 0) {
            map.insert(
                r.kernel_object,
                crate::aql::KernelInfo {
                    agent: agent_of(r.agent),
                    kernarg_size: r.kernarg_size,
                    group_segment_fixed_size: r.group_segment_size,
                    private_segment_fixed_size: r.private_segment_size,
                    max_flat_workgroup_size: 0,
                    reqd_workgroup_size: None,
                    runtime_blit: crate::aql::is_runtime_blit_kernel(&r.name),
                },
            );
        }
    }
    if let Some(c) = &rt.capture {
        c.add_code_object(
            kernels
                .iter()
                .map(|r| (r.kernel_object, r.name.clone()))
                .collect(),
        );
        c.add_kernel_info(
            kernels
                .iter()
                .map(|r| crate::capture::KernelMeta {
                    kernel_object: r.kernel_object,
                    sgpr_count: 0,
                    vgpr_count: 0,
                    agpr_count: 0,
                    group_segment_fixed_size: r.group_segment_size,
                    private_segment_fixed_size: r.private_segment_size,
                    kernarg_size: r.kernarg_size,
                    wavefront_size: 0,
                    max_flat_workgroup_size: 0,
                })
                .collect(),
        );
    }
    tracing::debug!(
        "softgpu: recorded {} kernels of a real executable",
        kernels.len()
    );
}
