//! The virtual HSA runtime: what answers the program when no GPU is present.
//!
//! Lifecycle ([`crate::lifecycle`], one atomic word): nothing happens at
//! library load but setting one HIP variable (in `interpose`). The first
//! `hsa_init` reads the environment, sets up logging, opens the capture and
//! registers the exit hook; later `hsa_init` calls only count references.
//! HIP never calls `hsa_shut_down`, so the capture is finalised at process
//! exit (and flushed continuously by its writer), not at shutdown.
//!
//! The real runtime below (intercept and observe modes) is reached through
//! [`crate::real`], never through the exports.
//!
//! Failure policy: an entry point this runtime does not implement fails closed
//! with an HSA error and a log line naming it (the exports do that, above
//! this layer).

pub mod agents;
pub mod completion;
pub mod copies;
pub mod events;
pub mod executables;
pub mod images;
pub mod memory;
pub mod queues;
pub mod ratelimit;
pub mod signals;
pub mod sys;
pub mod vmem;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::abi::HsaStatus;
use crate::aql::Processor;
use crate::capture::{
    AgentDesc, AgentKind as CapAgentKind, CaptureHeader, CaptureWriter, KernargClass,
};
use crate::config::{Config, Mode};
use crate::lifecycle::{self, Begin};
use crate::real::{self, RealAgent};
use agents::Topology;
use queues::DrainContext;

/// HIP 6.4 (ROCclr) performs every host<->device copy of 16 KiB or less with
/// its `__amd_rocclr_copyBuffer` blit kernel (its `GPU_FORCE_BLIT_COPY_SIZE`
/// default became 16). Kernels never run under SoftGPU, so those copies would
/// silently move nothing. With the variable at 0 HIP 6.4 uses its DMA path
/// (`hsa_amd_memory_async_copy_on_engine`), which SoftGPU performs for real,
/// exactly as HIP 5.2 does by default. HIP reads its flags at its first API
/// call, before `hsa_init`, so the library constructor (in `interpose`) sets
/// it. It only fills in an unset variable: a user's own value always wins, and
/// device-to-device copies remain blit kernels either way.
pub const HIP_BLIT_COPY_VAR: &std::ffi::CStr = c"GPU_FORCE_BLIT_COPY_SIZE";

/// One initialised runtime instance.
pub struct Runtime {
    pub config: Config,
    /// The mode in force: `Virtual`, `Intercept` or `Observe` (never `Auto`).
    pub mode: Mode,
    /// This copy of SoftGPU is loaded *below* another definition of
    /// `hsa_init` (standing in for a real ROCr, as the tests do): it is a
    /// plain virtual runtime that neither captures nor prints a summary.
    pub lower: bool,
    /// The real runtime's agents (intercept and observe), by capture index.
    pub real_agents: Vec<RealAgent>,
    pub topo: Topology,
    pub ctx: DrainContext,
    pub capture: Option<Arc<CaptureWriter>>,
    pub capture_path: Option<PathBuf>,
    pub pid: u32,
    log_guard: Mutex<Option<tracing_appender::non_blocking::WorkerGuard>>,
}

/// The runtime, once built. Whether it may be used is the lifecycle word's
/// to say ([`lifecycle::answering`]); it is set once, by the one `hsa_init`
/// that [`lifecycle::begin_init`] lets build it, before the word says ready.
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

extern "C" fn after_fork_in_child() {
    lifecycle::forked_child();
    // The capture's ring is a shared mapping of the parent's file: disable
    // pushes and replace the mapping with private memory (one mmap call,
    // async-signal-safe) before the child can push anything.
    if let Some(rt) = RUNTIME.get() {
        if let Some(c) = &rt.capture {
            c.forked_child();
        }
    }
}

impl Runtime {
    /// Whether the runtime below is a SoftGPU copy standing in for ROCr (its
    /// GPU agents carry SoftGPU's product names): then nothing runs there.
    pub fn over_stand_in(&self) -> bool {
        self.real_agents
            .iter()
            .any(|a| a.gpu && a.product.starts_with(crate::isa::STAND_IN_PREFIX))
    }
}

/// The runtime, if `hsa_init` has succeeded and not been fully shut down.
#[inline]
pub fn get() -> Result<&'static Runtime, HsaStatus> {
    if !lifecycle::answering() {
        return Err(HsaStatus::ERROR_NOT_INITIALIZED);
    }
    RUNTIME.get().ok_or(HsaStatus::ERROR_NOT_INITIALIZED)
}

/// The drain context, for the event thread (valid once built).
pub fn drain_context() -> Option<&'static DrainContext> {
    RUNTIME.get().map(|rt| &rt.ctx)
}

/// `hsa_init`. In a forwarding mode every call after the first also
/// initialises the real runtime again, so its reference count follows ours.
pub fn init() -> Result<(), HsaStatus> {
    match lifecycle::begin_init()? {
        Begin::Build => match build() {
            Ok(rt) => {
                if RUNTIME.set(rt).is_err() {
                    // Unreachable: only the one builder sets it.
                    lifecycle::failed(HsaStatus::ERROR);
                    return Err(HsaStatus::ERROR);
                }
                lifecycle::ready();
                // The virtual runtime's event thread starts now, not at the first
                // async handler: a thread created that late may wait several
                // milliseconds for its first CPU on a busy machine (a new thread
                // starts behind every runnable one), while a woken sleeper runs
                // at once, and handlers must run promptly (`events`).
                if RUNTIME.get().is_some_and(|rt| rt.mode == Mode::Virtual) {
                    events::wake();
                }
                Ok(())
            }
            Err(e) => {
                lifecycle::failed(e);
                Err(e)
            }
        },
        Begin::Referenced => {
            events::resume();
            if lifecycle::forwarding() {
                let st = real::below().map_or(HsaStatus::ERROR.0, |b| b.init());
                if st != 0 {
                    lifecycle::unreference();
                    return Err(HsaStatus(st));
                }
            }
            Ok(())
        }
    }
}

/// `hsa_shut_down`.
pub fn shut_down() -> Result<(), HsaStatus> {
    let left = lifecycle::release()?;
    let rt = RUNTIME.get().ok_or(HsaStatus::ERROR_NOT_INITIALIZED)?;
    if left == 0 {
        // Last reference: no async handler is called any more (ROCr stops its
        // event thread at unload).
        events::shut_down();
        // Make everything captured so far durable. The file is finalised
        // (trailer) at exit, since a later hsa_init may follow.
        if let Some(c) = &rt.capture {
            let _ = c.flush();
        }
    }
    if rt.mode != Mode::Virtual {
        let st = real::below().map_or(HsaStatus::ERROR.0, |b| b.shut_down());
        if st != 0 {
            return Err(HsaStatus(st));
        }
    }
    Ok(())
}

/// In virtual mode the real ROCr the program loaded is never initialised, so
/// a function it exports that the shim does not (a ROCr newer than the entry
/// table) binds to that uninitialised ROCr, and a call to it crashes there.
/// Every such function is named, once, in one warning line, so that a future
/// ROCr fails with a message and not only a segfault.
fn warn_unshadowed_rocr_exports() {
    let (Some(below), Some(path)) = (real::below(), real::loaded_rocr_file()) else {
        return;
    };
    match crate::code_object::dynsym::exported_functions(std::path::Path::new(&path), "hsa_") {
        Ok(exports) => {
            let missing: Vec<&str> = exports
                .iter()
                .map(String::as_str)
                .filter(|n| !below.shadows(n))
                .collect();
            if missing.is_empty() {
                tracing::debug!(
                    "softgpu: the shim answers all {} hsa_* functions of the loaded {path}",
                    exports.len()
                );
            } else {
                tracing::warn!(
                    "softgpu: {}",
                    crate::code_object::dynsym::unshadowed_message(&path, &missing)
                );
            }
        }
        Err(e) => tracing::warn!(
            "softgpu: cannot list the functions the loaded HSA runtime {path} exports ({e}); any that SoftGPU does not provide would reach it uninitialised"
        ),
    }
}

fn build() -> Result<Runtime, HsaStatus> {
    let (config, bad) = Config::from_os_lookup(|k| std::env::var_os(k));
    for msg in &bad {
        eprintln!("{msg}");
    }
    let log_guard = init_logging(&config);
    let lower = real::shadowed();
    let mut config = config;
    if lower {
        // Standing in for a real runtime below another SoftGPU copy: never
        // capture into (or summarise over) the shim's capture.
        config.capture = crate::config::CaptureSetting::Off;
        config.summary = false;
    }
    let (mode, real_agents) = if lower {
        tracing::debug!(
            "softgpu: loaded below another hsa_init; acting as a plain virtual runtime"
        );
        (Mode::Virtual, Vec::new())
    } else {
        choose_mode(config.mode)?
    };
    let gpus = config
        .targets
        .iter()
        .filter_map(|t| match crate::isa::find(*t) {
            Ok(d) => Some(d),
            Err(e) => {
                tracing::error!("softgpu: no virtual GPU agent for {t}: {e}");
                None
            }
        })
        .collect::<Vec<_>>();
    let topo = Topology::new(gpus);
    let pid = sys::getpid();
    if mode == Mode::Virtual && !lower {
        tracing::info!(
            mode = "virtual",
            requested = config.mode.as_str(),
            "softgpu: no real ROCr in use; the shim is the HSA runtime"
        );
        warn_unshadowed_rocr_exports();
    }

    queues::set_kernarg_capture(config.kernargs);
    let capture_path = config.capture_path(pid);
    let capture = capture_path.as_ref().and_then(|path| {
        let agents = if mode == Mode::Virtual {
            let mut agents = vec![AgentDesc {
                index: 0,
                kind: CapAgentKind::Cpu,
                name: "cpu".into(),
                target: None,
            }];
            for (i, d) in topo.gpus.iter().enumerate() {
                agents.push(AgentDesc {
                    index: i as u32 + 1,
                    kind: CapAgentKind::Gpu,
                    name: d.id.into(),
                    target: Some(d.id.into()),
                });
            }
            agents
        } else {
            real_agents
                .iter()
                .enumerate()
                .map(|(i, a)| AgentDesc {
                    index: i as u32,
                    kind: if a.gpu {
                        CapAgentKind::Gpu
                    } else {
                        CapAgentKind::Cpu
                    },
                    // The product name says what the agent is (and whether
                    // the runtime below is a SoftGPU stand-in).
                    name: if a.product.is_empty() {
                        a.name.clone()
                    } else {
                        a.product.clone()
                    },
                    target: a.gpu.then(|| a.name.clone()),
                })
                .collect()
        };
        let header = CaptureHeader {
            pid,
            start_unix_ns: sys::unix_ns(),
            mode: mode.as_str().into(),
            agents,
        };
        // The allocation the last kernarg address was found in, with the
        // allocation-event number read before the lookup: a launch loop's
        // kernarg addresses advance through one pool allocation, so most
        // records need no table lookup. A free moves the number (after it
        // removes the allocation), so a freed range is never reused here.
        // The classifier runs on the writer thread only, so its memo needs
        // no lock. It remembers the range its last answer holds for: the
        // allocation the address was in, or the gap between allocations it
        // fell in (the real runtime's kernarg pool, in the forwarding modes).
        let mut last: Option<(u64, u64, u64, KernargClass)> = None;
        let classify = Box::new(move |addr: u64| {
            let events = memory::events();
            if let Some((ev, lo, hi, class)) = last {
                if ev == events && (lo..hi).contains(&addr) {
                    return class;
                }
            }
            let (lo, hi, class) = match memory::find_range(addr) {
                Ok((base, size)) => (base, base.saturating_add(size), KernargClass::Softgpu),
                Err((lo, hi)) => (lo, hi, KernargClass::ForeignOpaque),
            };
            last = Some((events, lo, hi, class));
            class
        });
        // Records are stamped with the TSC where the kernel's clock is the
        // TSC (about 9 ns a read on the doorbell path, against 21 ns for
        // CLOCK_MONOTONIC); the writer converts the stamps to ns.
        let options = crate::capture::WriterOptions {
            stamp: crate::capture::clock::Stamp::for_this_machine(),
            ..Default::default()
        };
        match CaptureWriter::create_with(path, header, classify, options) {
            Ok(w) => {
                // Every global_buffer argument of a captured block, checked
                // against this runtime's allocations (on the writer thread;
                // frees drain the writer first, so a record is checked
                // against the allocations as they were at its dispatch).
                // The dispatching agent is the queue's; access is checked
                // for it (pointer_no_access).
                // Intercept and observe: the allocations that passed through
                // the shim to the real runtime (frees drain the writer there
                // too, before they are passed on).
                let below = real::below().filter(|_| mode != Mode::Virtual);
                w.set_arg_checker(Box::new(move |input| {
                    match executables::arg_sources(input.kernel_object) {
                        Some(k)
                            if k.metadata
                                .args
                                .iter()
                                .any(|a| a.value_kind == "global_buffer") =>
                        {
                            let d = crate::kernargs::decode(
                                input.block,
                                &k.metadata,
                                k.sources.sources(),
                            );
                            let agent = u64::from(input.agent_index.unwrap_or(0));
                            match below {
                                Some(b) => {
                                    crate::kernargs::check_arguments(b.allocations(), agent, &d)
                                }
                                None => {
                                    let table = memory::ShimAllocations {
                                        check_access: input.agent_index.is_some(),
                                    };
                                    crate::kernargs::check_arguments(&table, agent, &d)
                                }
                            }
                        }
                        _ => Vec::new(),
                    }
                }));
                // The allocation table's event number (it moves with every
                // allocation, free, grant, lock or unlock): the writer reuses
                // the last check's findings while it and the dispatch's
                // kernel, agent and block are unchanged, without a call.
                w.set_arg_generation(Box::new(move || match below {
                    Some(b) => b.allocation_events(),
                    None => memory::events(),
                }));
                Some(w)
            }
            Err(e) => {
                eprintln!(
                    "softgpu: cannot create capture file {}: {e}; capture disabled",
                    path.display()
                );
                None
            }
        }
    });
    let capture_path = capture.as_ref().and(capture_path);
    if let Some(c) = &capture {
        // SIGTERM/SIGINT with no handler of the program's own: finalise the
        // capture, then take the default action.
        let armed = c.handle_termination_signals();
        tracing::debug!(
            ?armed,
            "softgpu: termination signals that finalise the capture"
        );
    }

    if !sys::at_exit(at_exit) {
        tracing::warn!("softgpu: atexit registration failed; the capture trailer may be missing");
    }
    if !sys::in_fork_child(after_fork_in_child) {
        tracing::warn!("softgpu: pthread_atfork failed; a forked child could block on the capture");
    }
    let (max_wg, max_lds) = if mode == Mode::Virtual {
        let max_wg = topo
            .gpus
            .iter()
            .map(|d| d.facts.workgroup_max_size.value as u32)
            .min()
            .unwrap_or(1024);
        let max_lds = topo
            .gpus
            .iter()
            .map(|d| d.facts.lds_bytes_per_workgroup.value as u32)
            .min()
            .unwrap_or(65536);
        (max_wg, max_lds)
    } else {
        // The real agents' own limits: the workgroup size it reports, and the
        // LDS of its target when the registry knows it (else no LDS check).
        let gpus = real_agents.iter().filter(|a| a.gpu);
        let max_wg = gpus
            .clone()
            .map(|a| a.workgroup_max)
            .filter(|w| *w > 0)
            .min()
            .unwrap_or(1024);
        let max_lds = gpus
            .map(|a| match crate::isa::find(&a.name) {
                Ok(d) => d.facts.lds_bytes_per_workgroup.value as u32,
                Err(_) => u32::MAX,
            })
            .min()
            .unwrap_or(u32::MAX);
        (max_wg, max_lds)
    };
    let completion = config.completion;
    Ok(Runtime {
        config,
        mode,
        lower,
        real_agents,
        topo,
        ctx: DrainContext {
            processor: Processor::new(max_wg).with_lds_limit(max_lds),
            completion,
        },
        capture,
        capture_path,
        pid,
        log_guard: Mutex::new(log_guard),
    })
}

/// Decide the mode: resolve the real runtime and initialise it when the
/// requested mode may use one. Returns the mode and the real agents.
fn choose_mode(requested: Mode) -> Result<(Mode, Vec<RealAgent>), HsaStatus> {
    if requested == Mode::Virtual {
        return Ok((Mode::Virtual, Vec::new()));
    }
    let explicit = requested != Mode::Auto;
    let found = real::below()
        .ok_or_else(|| "no forwarding layer registered".to_string())
        .and_then(|b| Ok((b, b.resolve()?)));
    let (below, resolved) = match found {
        Ok(r) => r,
        Err(why) => {
            if explicit {
                tracing::error!(
                    "softgpu: SOFTGPU_MODE={} needs a real HSA runtime below the shim: {why}; hsa_init fails",
                    requested.as_str()
                );
                return Err(HsaStatus::ERROR);
            }
            tracing::info!("softgpu: mode auto: {why}; using the virtual runtime");
            return Ok((Mode::Virtual, Vec::new()));
        }
    };
    let target = if requested == Mode::Observe {
        Mode::Observe
    } else {
        Mode::Intercept
    };
    // Route before the real hsa_init runs: anything it (or a tools library it
    // loads) calls back into already reaches the real runtime.
    below.route(target);
    let st = below.init();
    if st != 0 {
        below.unroute();
        if explicit {
            tracing::error!(
                "softgpu: SOFTGPU_MODE={}: the real runtime's hsa_init (in {}) returned {st:#x}; hsa_init fails",
                requested.as_str(),
                resolved.source
            );
            return Err(HsaStatus(st));
        }
        tracing::info!(
            "softgpu: mode auto: the real runtime's hsa_init (in {}) returned {st:#x} (no usable GPU); using the virtual runtime",
            resolved.source
        );
        return Ok((Mode::Virtual, Vec::new()));
    }
    let agents = below.agents();
    if !agents.iter().any(|a| a.gpu) {
        if !explicit {
            let _ = below.shut_down();
            below.unroute();
            tracing::info!(
                "softgpu: mode auto: the real runtime (in {}) has no GPU agent; using the virtual runtime",
                resolved.source
            );
            return Ok((Mode::Virtual, Vec::new()));
        }
        tracing::warn!(
            "softgpu: SOFTGPU_MODE={}: the real runtime has no GPU agent; nothing will be captured",
            requested.as_str()
        );
    }
    if !resolved.missing.is_empty() {
        tracing::debug!(
            missing = ?resolved.missing,
            "softgpu: functions the real runtime does not provide fail closed"
        );
    }
    tracing::info!(
        mode = target.as_str(),
        requested = requested.as_str(),
        "softgpu: HSA runtime below the shim in {} ({} functions resolved, {} missing); GPU agents: {}",
        resolved.source,
        resolved.found,
        resolved.missing.len(),
        agents
            .iter()
            .filter(|a| a.gpu)
            .map(|a| format!("{} ({})", a.name, a.product))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok((target, agents))
}

fn init_logging(config: &Config) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::new(config.log.as_str());
    match &config.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path);
            match file {
                Ok(f) => {
                    let (nb, guard) = tracing_appender::non_blocking(f);
                    let sub = tracing_subscriber::fmt()
                        .with_env_filter(filter)
                        .with_writer(nb)
                        .with_ansi(false)
                        .finish();
                    let _ = tracing::subscriber::set_global_default(sub);
                    Some(guard)
                }
                Err(e) => {
                    eprintln!(
                        "softgpu: cannot open SOFTGPU_LOG_FILE {}: {e}; logging to stderr",
                        path.display()
                    );
                    let sub = tracing_subscriber::fmt()
                        .with_env_filter(filter)
                        .with_writer(std::io::stderr)
                        .finish();
                    let _ = tracing::subscriber::set_global_default(sub);
                    None
                }
            }
        }
        None => {
            let sub = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .finish();
            let _ = tracing::subscriber::set_global_default(sub);
            None
        }
    }
}

/// Finalise the capture and print the exit summary. Runs once, from atexit
/// (registered at `hsa_init`, so before the exit-time destructors registered
/// earlier, such as the static objects HIP built when it was loaded). First
/// the async handlers already due are given their call (see
/// [`events::settle`]).
extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        // Not in a forked child: its parent's event thread is not there.
        if RUNTIME.get().is_some_and(|rt| sys::getpid() == rt.pid) {
            events::settle(std::time::Duration::from_secs(1));
        }
    });
    let _ = std::panic::catch_unwind(finish);
}

/// Finalise: idempotent. A forked child never touches its parent's capture.
pub fn finish() {
    let Some(rt) = RUNTIME.get() else { return };
    if sys::getpid() != rt.pid || !lifecycle::finish() {
        return;
    }
    let write_counts = |role| {
        if let Some(b) = real::below() {
            b.write_counts(role, rt.mode.as_str());
        }
    };
    if rt.lower {
        write_counts("lower");
        return;
    }
    let mut counts = queues::total_counts();
    let mut observed = real::below().map(|b| b.observed()).unwrap_or_default();
    if let Some(c) = &rt.capture {
        let pending = queues::pending_by_queue();
        if !pending.is_empty() {
            tracing::warn!(
                ?pending,
                "softgpu: at exit, {} packet(s) on {} queue(s) were never processed (behind an unsatisfied barrier, or never published); the capture records them as pending",
                pending.iter().map(|p| p.1).sum::<u64>(),
                pending.len()
            );
        }
        match c.finish_with(counts.stalls, sys::now_ns(), &pending) {
            // The summary counts what the capture holds (every record pushed
            // before the exit began), not what the queues counted earlier.
            Ok(s) => {
                counts.validated = s.counts.dispatches_validated;
                counts.rejected = s.counts.rejected;
                counts.barriers = s.counts.barriers;
                observed.dispatches = s.counts.records - s.counts.barriers;
                observed.rejected = s.counts.rejected;
                observed.barriers = s.counts.barriers;
            }
            Err(e) => eprintln!(
                "softgpu: capture {} could not be finalised: {e}",
                c.path().display()
            ),
        }
    }
    if rt.config.summary && rt.mode == Mode::Observe {
        let path = rt
            .capture_path
            .as_ref()
            .map_or_else(|| "off".to_string(), |p| p.display().to_string());
        let o = observed;
        let below = if rt.over_stand_in() {
            "the runtime below, a SoftGPU stand-in (kernels did not run there either)"
        } else {
            "the real runtime (kernels ran there)"
        };
        eprintln!(
            "softgpu: observe mode: {} dispatches observed and forwarded to {below}, {} with findings, {} barriers; capture: {}",
            o.dispatches, o.rejected, o.barriers, path
        );
    } else if rt.config.summary {
        let path = rt
            .capture_path
            .as_ref()
            .map_or_else(|| "off".to_string(), |p| p.display().to_string());
        eprintln!(
            "softgpu: {} dispatches validated (diagnostic_complete_no_execution, not_kernel_success), {} rejected, {} barriers; capture: {}",
            counts.validated, counts.rejected, counts.barriers, path
        );
    }
    if counts.stalls > 0 {
        tracing::debug!(
            stalls = counts.stalls,
            "softgpu: drains that stopped at an unpublished slot"
        );
    }
    // Last, so that the runtime below (which reports first thing in its own
    // exit handler) reports right after: a background wait of the program's
    // between the two reports is counted below only, and the less time there
    // is between them (the capture's finalisation comes before this), the
    // fewer such waits there are.
    write_counts("shim");
    if let Ok(mut g) = rt.log_guard.lock() {
        drop(g.take());
    }
}
