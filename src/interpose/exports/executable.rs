//! Code object readers, executables and their symbols.

#![allow(unsafe_code)]

use super::*;

use crate::runtime::executables;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

type ObjectArgs = Arc<executables::RealCodeObjectArgs>;

/// Intercept and observe: what each real code object reader's bytes say about
/// their kernels' arguments (parsed once, when the reader is created), by
/// reader handle, until the reader is destroyed.
static REAL_READERS: Mutex<BTreeMap<u64, ObjectArgs>> = Mutex::new(BTreeMap::new());
/// The code objects loaded into each real executable, until it is frozen.
static REAL_LOADED: Mutex<BTreeMap<u64, Vec<ObjectArgs>>> = Mutex::new(BTreeMap::new());

/// A real reader was created over `bytes`: remember its kernels' argument sources.
fn real_reader_created(reader: u64, bytes: &[u8]) {
    if let Some(args) = executables::code_object_args(bytes) {
        REAL_READERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(reader, Arc::new(args));
    }
}

pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(
    code: *const c_void,
    size: usize,
    out: *mut u64,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_code_object_reader_create_from_memory(code, size, out))
            .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 && !code.is_null() && size <= crate::code_object::MAX_FILE_SIZE as usize {
            // SAFETY: the real runtime accepted `size` readable bytes at
            // `code` (the caller's contract for the call); `out` is storage
            // for one handle, which it has just written.
            let (bytes, out) = unsafe {
                (
                    std::slice::from_raw_parts(code as *const u8, size),
                    Out::from_raw(out),
                )
            };
            value("hsa_code_object_reader_create_from_memory", (), || {
                if let Some(r) = out.read() {
                    real_reader_created(r, bytes)
                }
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_code_object_reader_create_from_memory: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_code_object_reader_create_from_memory", || {
        rt()?;
        if code.is_null() || size == 0 || out.is_null() {
            return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
        }
        if size > crate::code_object::MAX_FILE_SIZE as usize {
            return Err(HsaStatus::ERROR_INVALID_CODE_OBJECT);
        }
        // SAFETY: the caller passes `size` readable bytes at `code`; we copy
        // them once, so the reader never depends on the caller's buffer.
        let bytes = unsafe { std::slice::from_raw_parts(code as *const u8, size) }.to_vec();
        out.write(executables::create_reader(bytes))
    })
}

pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(fd: i32, out: *mut u64) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_code_object_reader_create_from_file(fd, out))
            .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 && fd >= 0 {
            // SAFETY: `out` is storage for one handle, which the real runtime
            // has just written.
            let out = unsafe { Out::from_raw(out) };
            value("hsa_code_object_reader_create_from_file", (), || {
                use std::os::fd::FromRawFd;
                use std::os::unix::fs::FileExt;
                // SAFETY: `fd` is the caller's open descriptor, which the real
                // runtime just read; ManuallyDrop keeps us from closing it.
                let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
                // Read from offset 0 with pread, as the real runtime reads the
                // whole file, without moving the descriptor's position.
                let mut bytes = Vec::new();
                let mut buf = vec![0u8; 1 << 20];
                while (bytes.len() as u64) < crate::code_object::MAX_FILE_SIZE {
                    match file.read_at(&mut buf, bytes.len() as u64) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => bytes.extend_from_slice(&buf[..n]),
                    }
                }
                if let Some(r) = out.read() {
                    real_reader_created(r, &bytes)
                }
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_code_object_reader_create_from_file: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_code_object_reader_create_from_file", || {
        rt()?;
        if out.is_null() || fd < 0 {
            return Err(HsaStatus::ERROR_INVALID_FILE);
        }
        use std::io::Read;
        use std::os::fd::FromRawFd;
        // SAFETY: `fd` is the caller's open descriptor; ManuallyDrop keeps us
        // from closing it, as the HSA contract leaves it to the caller.
        let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let mut bytes = Vec::new();
        (&*file)
            .take(crate::code_object::MAX_FILE_SIZE)
            .read_to_end(&mut bytes)
            .map_err(|_| HsaStatus::ERROR_INVALID_FILE)?;
        out.write(executables::create_reader(bytes))
    })
}

pub unsafe extern "C" fn hsa_code_object_reader_destroy(reader: u64) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_code_object_reader_destroy(reader)).unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            value("hsa_code_object_reader_destroy", (), || {
                REAL_READERS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&reader);
            });
        }
        return st;
    }
    status("hsa_code_object_reader_destroy", || {
        code_object_reader_destroy(reader)
    })
}

/// The body of `hsa_code_object_reader_destroy`, over its converted arguments.
fn code_object_reader_destroy(reader: u64) -> R {
    rt()?;
    executables::destroy_reader(reader)
}

pub unsafe extern "C" fn hsa_executable_create(
    profile: u32,
    _state: u32,
    _options: *const c_char,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_create: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_executable_create", || executable_create(profile, out))
}

/// The body of `hsa_executable_create`, over its converted arguments.
fn executable_create(profile: u32, out: Out<'_, u64>) -> R {
    rt()?;
    if out.is_null() || profile > 1 {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    out.write(executables::create_executable(profile, 2))
}

pub unsafe extern "C" fn hsa_executable_create_alt(
    profile: u32,
    rounding: u32,
    _options: *const c_char,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_create_alt: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    status("hsa_executable_create_alt", || {
        executable_create_alt(profile, rounding, out)
    })
}

/// The body of `hsa_executable_create_alt`, over its converted arguments.
fn executable_create_alt(profile: u32, rounding: u32, out: Out<'_, u64>) -> R {
    rt()?;
    if out.is_null() || profile > 1 || rounding > 2 {
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    }
    out.write(executables::create_executable(profile, rounding))
}

pub unsafe extern "C" fn hsa_executable_destroy(exec: u64) -> u32 {
    status("hsa_executable_destroy", || executable_destroy(exec))
}

/// The body of `hsa_executable_destroy`, over its converted arguments.
fn executable_destroy(exec: u64) -> R {
    rt()?;
    executables::destroy_executable(exec)
}

pub unsafe extern "C" fn hsa_executable_load_agent_code_object(
    exec: u64,
    agent: HsaAgent,
    reader: u64,
    options: *const c_char,
    loaded: *mut u64,
) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_executable_load_agent_code_object(
            exec, agent, reader, options, loaded
        ))
        .unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            value("hsa_executable_load_agent_code_object", (), || {
                let args = REAL_READERS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&reader)
                    .cloned();
                if let Some(a) = args {
                    REAL_LOADED
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .entry(exec)
                        .or_default()
                        .push(a);
                }
            });
        }
        return st;
    }
    // SAFETY: the HSA contract of hsa_executable_load_agent_code_object: `loaded` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let loaded = unsafe { Out::from_raw(loaded) };
    status("hsa_executable_load_agent_code_object", || {
        executable_load_agent_code_object(exec, agent, reader, loaded)
    })
}

/// The body of `hsa_executable_load_agent_code_object`, over its converted arguments.
fn executable_load_agent_code_object(
    exec: u64,
    agent: HsaAgent,
    reader: u64,
    loaded: Out<'_, u64>,
) -> R {
    let rt = rt()?;
    let AgentKind::Gpu(g) = agent_of(rt, agent)? else {
        return Err(HsaStatus::ERROR_INVALID_AGENT);
    };
    let mach = rt.topo.gpus[g].elf_machine;
    let l = executables::load(exec, reader, g + 1, mach)?;
    if let Some(c) = &rt.capture {
        // The capture stores each code object's symbol table once; records
        // refer to kernels by kernel object address. (Moved, not copied: a
        // library's code objects hold tens of thousands of kernels.)
        c.add_code_object(l.kernels);
        c.add_kernel_info(l.metas);
        c.add_kernel_args(l.args);
    }
    if !loaded.is_null() {
        loaded.write(l.handle)?;
    }
    Ok(())
}

pub unsafe extern "C" fn hsa_executable_freeze(exec: u64, _options: *const c_char) -> u32 {
    if forward::forwarding() {
        forward::note_entry();
        let st = call_real!(hsa_executable_freeze(exec, _options)).unwrap_or(HsaStatus::ERROR.0);
        if st == 0 {
            if let Ok(rt) = rt() {
                // SAFETY: the real hsa_executable_freeze just accepted `exec`:
                // an executable of the real runtime.
                let kernels = unsafe { forward::real_kernels(exec) };
                runtime::executables::record_real_kernels(rt, &kernels);
                // Their argument layouts, from the code objects loaded into it.
                value("hsa_executable_freeze", (), || {
                    let objects = REAL_LOADED
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&exec)
                        .unwrap_or_default();
                    runtime::executables::record_real_kernel_args(rt, &kernels, &objects);
                });
            }
        }
        return st;
    }
    status("hsa_executable_freeze", || {
        rt()?;
        executables::freeze(exec)
    })
}

pub unsafe extern "C" fn hsa_executable_get_info(exec: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_executable_get_info", || {
        executable_get_info(exec, attr, out)
    })
}

/// The body of `hsa_executable_get_info`, over its converted arguments.
fn executable_get_info(exec: u64, attr: u32, out: InfoOut<'_>) -> R {
    rt()?;
    let (profile, state, rounding) = executables::info(exec)?;
    // hsa_profile_t, hsa_executable_state_t, hsa_default_float_rounding_mode_t:
    // 4-byte enum stores in ROCr.
    let r = match ExecutableInfo(attr) {
        ExecutableInfo::PROFILE => Ok(Info::U32(profile)),
        ExecutableInfo::STATE => Ok(Info::U32(state)),
        ExecutableInfo::DEFAULT_FLOAT_ROUNDING_MODE => Ok(Info::U32(rounding)),
        _ => Err(InfoError::Unsupported),
    };
    info_result("hsa_executable_get_info", attr, r, out)
}

pub unsafe extern "C" fn hsa_executable_validate(exec: u64, result: *mut u32) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_validate: `result` is null or points to
    // writable storage for one `u32`, for the duration of the call.
    let result = unsafe { Out::from_raw(result) };
    status("hsa_executable_validate", || {
        executable_validate(exec, result)
    })
}

/// The body of `hsa_executable_validate`, over its converted arguments.
fn executable_validate(exec: u64, result: Out<'_, u32>) -> R {
    rt()?;
    executables::info(exec)?;
    result.write(0)
}

pub unsafe extern "C" fn hsa_executable_validate_alt(
    exec: u64,
    _options: *const c_char,
    result: *mut u32,
) -> u32 {
    // SAFETY: same contract, arguments passed through.
    unsafe { hsa_executable_validate(exec, result) }
}

pub(super) fn agent_filter(
    rt: &runtime::Runtime,
    agent: &InOpt<'_, HsaAgent>,
) -> Result<Option<usize>, HsaStatus> {
    agent
        .get()
        .map(|a| agent_of(rt, a).map(Topology::agent_index))
        .transpose()
}

pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(
    exec: u64,
    name: *const c_char,
    agent: *const HsaAgent,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_get_symbol_by_name: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    // SAFETY: the HSA contract of hsa_executable_get_symbol_by_name: `name`
    // is null or NUL-terminated, `agent` null or one agent handle, both
    // readable for the call.
    let (name, agent) = unsafe { (CStrArg::from_raw(name), InOpt::from_raw(agent)) };
    status("hsa_executable_get_symbol_by_name", || {
        executable_get_symbol_by_name(exec, name, agent, out)
    })
}

/// The body of `hsa_executable_get_symbol_by_name`, over its converted arguments.
fn executable_get_symbol_by_name(
    exec: u64,
    name: CStrArg<'_>,
    agent: InOpt<'_, HsaAgent>,
    out: Out<'_, u64>,
) -> R {
    let rt = rt()?;
    let name = name.to_str(HsaStatus::ERROR_INVALID_SYMBOL_NAME)?;
    let a = agent_filter(rt, &agent)?;
    out.write(executables::symbol_by_name(exec, name, a)?)
}

pub unsafe extern "C" fn hsa_executable_get_symbol(
    exec: u64,
    _module: *const c_char,
    name: *const c_char,
    agent: HsaAgent,
    _call_convention: i32,
    out: *mut u64,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_get_symbol: `out` is null or points to
    // writable storage for one `u64`, for the duration of the call.
    let out = unsafe { Out::from_raw(out) };
    // SAFETY: the HSA contract of hsa_executable_get_symbol: `name` is null
    // or NUL-terminated, readable for the call.
    let name = unsafe { CStrArg::from_raw(name) };
    status("hsa_executable_get_symbol", || {
        executable_get_symbol(exec, name, agent, out)
    })
}

/// The body of `hsa_executable_get_symbol`, over its converted arguments.
fn executable_get_symbol(exec: u64, name: CStrArg<'_>, agent: HsaAgent, out: Out<'_, u64>) -> R {
    let rt = rt()?;
    let name = name.to_str(HsaStatus::ERROR_INVALID_SYMBOL_NAME)?;
    let a = Topology::agent_index(agent_of(rt, agent)?);
    out.write(executables::symbol_by_name(exec, name, Some(a))?)
}

pub unsafe extern "C" fn hsa_executable_symbol_get_info(
    sym: u64,
    attr: u32,
    out: *mut c_void,
) -> u32 {
    // SAFETY: the HSA contract of hsa_executable_symbol_get_info: `out` is null or sized by
    // the caller for the attribute's C type, for the duration of the call.
    let out = unsafe { InfoOut::from_raw(out) };
    status("hsa_executable_symbol_get_info", || {
        executable_symbol_get_info(sym, attr, out)
    })
}

/// The body of `hsa_executable_symbol_get_info`, over its converted arguments.
fn executable_symbol_get_info(sym: u64, attr: u32, out: InfoOut<'_>) -> R {
    let rt = rt()?;
    // Borrowed under the symbol table's read lock, not copied (see
    // `executables::with_symbol`); nothing here calls back into it.
    executables::with_symbol(sym, |s| symbol_info(rt, s, attr, &out))?
}

/// One attribute of a symbol, written to `out`.
fn symbol_info(
    rt: &crate::runtime::Runtime,
    s: &executables::SymbolEntry,
    attr: u32,
    out: &InfoOut<'_>,
) -> R {
    let kernel = s.kind == crate::code_object::SymbolKind::Kernel;
    let kd = s.kd.unwrap_or_default();
    // What ROCr's loader answers (5.2.3 and 6.4, loader/executable.cpp):
    // the common attributes for every symbol (including the object address
    // under both its names), the kernel attributes for kernels and the
    // variable attributes for variables; anything else is INVALID_ARGUMENT.
    use SymbolInfo as Y;
    let info = match SymbolInfo(attr) {
        Y::TYPE => Some(Info::U32(if kernel {
            crate::abi::symbol_kind::KERNEL
        } else {
            crate::abi::symbol_kind::VARIABLE
        })),
        Y::NAME_LENGTH => Some(Info::U32(s.name.len() as u32)),
        // No NUL, as ROCr; written from the table, not copied into an Info.
        Y::NAME => return out.write_bytes(s.name.as_bytes()),
        Y::MODULE_NAME_LENGTH => Some(Info::U32(0)),
        Y::MODULE_NAME => Some(Info::Bytes(Vec::new())),
        Y::LINKAGE => Some(Info::U32(u32::from(s.global))),
        Y::IS_DEFINITION => Some(Info::Bool(true)),
        Y::KERNEL_CALL_CONVENTION => Some(Info::U32(0)),
        Y::KERNEL_OBJECT | Y::VARIABLE_ADDRESS => Some(Info::U64(s.address)),
        Y::AGENT => Some(Info::U64(rt.topo.agent_handle(s.agent_index))),
        Y::KERNEL_KERNARG_SEGMENT_SIZE if kernel => Some(Info::U32(s.kernarg_size)),
        Y::KERNEL_KERNARG_SEGMENT_ALIGNMENT if kernel => Some(Info::U32(s.kernarg_align)),
        Y::KERNEL_GROUP_SEGMENT_SIZE if kernel => Some(Info::U32(kd.group_segment_fixed_size)),
        Y::KERNEL_PRIVATE_SEGMENT_SIZE if kernel => Some(Info::U32(kd.private_segment_fixed_size)),
        Y::KERNEL_DYNAMIC_CALLSTACK if kernel => Some(Info::Bool(kd.uses_dynamic_stack())),
        Y::KERNEL_WAVEFRONT_SIZE if kernel => Some(Info::U32(kd.wavefront_size())),
        // A kernel descriptor: 64 bytes, 64-byte aligned.
        Y::EXT_KERNEL_OBJECT_SIZE | Y::EXT_KERNEL_OBJECT_ALIGN if kernel => Some(Info::U32(64)),
        Y::VARIABLE_ALLOCATION if !kernel => Some(Info::U32(0)), // AGENT
        Y::VARIABLE_SEGMENT if !kernel => Some(Info::U32(0)),    // GLOBAL
        // ELF symbols carry no alignment; SoftGPU policy: 8 bytes.
        Y::VARIABLE_ALIGNMENT if !kernel => Some(Info::U32(8)),
        Y::VARIABLE_SIZE if !kernel => Some(Info::U32(s.size as u32)),
        Y::VARIABLE_IS_CONST if !kernel => Some(Info::Bool(false)),
        _ => None,
    };
    let Some(info) = info else {
        tracing::debug!(
            "softgpu: hsa_executable_symbol_get_info: attribute {attr} does not apply to {} (ROCr does not answer it either)",
            s.name
        );
        return Err(HsaStatus::ERROR_INVALID_ARGUMENT);
    };
    out.write(&info)
}

pub(super) type ExecSymbolCb = unsafe extern "C" fn(u64, u64, *mut c_void) -> u32;
pub(super) type ExecAgentSymbolCb = unsafe extern "C" fn(u64, HsaAgent, u64, *mut c_void) -> u32;

pub unsafe extern "C" fn hsa_executable_iterate_symbols(
    exec: u64,
    cb: Option<ExecSymbolCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_executable_iterate_symbols", || {
        rt()?;
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let syms = executables::symbols_of(exec, None)?;
        // SAFETY: the program's callback, with valid handles and its own data.
        iterate(syms, |s| unsafe { cb(exec, s, data) })
    })
}

pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(
    exec: u64,
    agent: HsaAgent,
    cb: Option<ExecAgentSymbolCb>,
    data: *mut c_void,
) -> u32 {
    status("hsa_executable_iterate_agent_symbols", || {
        let rt = rt()?;
        let a = Topology::agent_index(agent_of(rt, agent)?);
        let cb = cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
        let syms = executables::symbols_of(exec, Some(a))?;
        // SAFETY: the program's callback, with valid handles and its own data.
        iterate(syms, |s| unsafe { cb(exec, agent, s, data) })
    })
}

/// Program (agent-independent) symbols: code objects here are always agent
/// code objects, so there are none to visit.
pub unsafe extern "C" fn hsa_executable_iterate_program_symbols(
    exec: u64,
    cb: Option<ExecSymbolCb>,
    _data: *mut c_void,
) -> u32 {
    status("hsa_executable_iterate_program_symbols", || {
        executable_iterate_program_symbols(exec, cb)
    })
}

/// The body of `hsa_executable_iterate_program_symbols`, over its converted arguments.
fn executable_iterate_program_symbols(exec: u64, cb: Option<ExecSymbolCb>) -> R {
    rt()?;
    cb.ok_or(HsaStatus::ERROR_INVALID_ARGUMENT)?;
    executables::info(exec).map(|_| ())
}
