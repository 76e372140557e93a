//! Writing a capture as a rocpd database (`softgpu inspect --format rocpd --output FILE`).
//!
//! Every kernel dispatch packet of the capture becomes one `rocpd_kernel_dispatch`
//! row (validated and rejected alike; `extdata` holds SoftGPU's status, label and
//! reasons), with an `rocpd_event` row of category `KERNEL_DISPATCH` and its kernel
//! in `rocpd_info_kernel_symbol` (name, segment sizes, register counts from the
//! capture's kernel metadata). Agents, queues, threads and the process come from the
//! capture. A capture records HSA queues, not HIP streams: each queue gets one
//! `rocpd_info_stream` row that says so. Barrier and other packets have no table
//! in the schema and are left out (`inspect --format jsonl` lists them).
//!
//! `start` and `end` are the packet processor's timestamps (observed, diagnostic
//! completion signalled), not a GPU's; `rocpd_metadata` says so, and that no
//! kernel ran (unless the capture was recorded in observe mode, where the real
//! runtime ran them).
//!
//! Decoded kernel arguments go to `rocpd_arg` (one row per argument, keyed by the
//! dispatch's event) through [`KernelArgSource`]; until a decoder supplies them the
//! table stays empty: nothing is invented.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rusqlite::{Connection, params};

use super::{RocpdError, schema};
use crate::abi::PacketType;
use crate::capture::{AgentKind, Capture, CapturedRecord};
use crate::report::{self, Context};
use crate::stats::{NameStyle, style_name, truncate_name};

/// One decoded kernel argument, as `rocpd_arg` stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelArg {
    /// From 0, in the kernel's argument order.
    pub position: u32,
    /// The argument's type as its metadata gives it (value kind, type name).
    pub type_name: String,
    /// The argument's name, or its position when the metadata has none.
    pub name: String,
    /// The decoded value, as text.
    pub value: Option<String>,
}

/// Gives the decoded kernel arguments of one dispatch record (empty when unknown).
/// The place where the kernel-argument decoder plugs in.
pub type KernelArgSource<'a> = &'a dyn Fn(&CapturedRecord) -> Vec<KernelArg>;

/// The decoded kernel arguments of every dispatch of `cap` that recorded
/// them (capture format 2.1), by record sequence number, as `rocpd_arg` rows:
/// explicit and hidden arguments in `.args` order, with the signature's type
/// (else the value kind) and the DWARF name (else the position).
pub fn decoded_args(cap: &Capture) -> std::collections::HashMap<u64, Vec<KernelArg>> {
    let mut ctx = Context::new(cap);
    let mut out = std::collections::HashMap::new();
    for r in &cap.records {
        let v = ctx.view(r);
        let Some(d) = v.args.as_ref() else { continue };
        let rows = d
            .args
            .iter()
            .map(|a| KernelArg {
                position: u32::try_from(a.index).unwrap_or(u32::MAX),
                type_name: a.type_text.clone().unwrap_or_else(|| a.kind.clone()),
                name: a.name.clone().unwrap_or_else(|| a.index.to_string()),
                value: match a.value {
                    crate::kernargs::ArgValue::Unavailable => None,
                    ref x => Some(x.text()),
                },
            })
            .collect();
        out.insert(r.seq, rows);
    }
    out
}

/// The `rocpd_metadata` tag saying what ran.
pub const TAG_EXECUTION: &str = "softgpu_execution";
/// The `rocpd_metadata` tag saying whose clock the timestamps are.
pub const TAG_TIMESTAMPS: &str = "softgpu_timestamps";

fn sql(e: rusqlite::Error) -> RocpdError {
    RocpdError::Sql(e.to_string())
}

/// Runs one statement through SQLite's statement cache (the same INSERT runs once per
/// dispatch).
fn exec(conn: &Connection, sql_text: &str, p: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql_text)
        .and_then(|mut st| st.execute(p))
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Writes `cap` as a rocpd database at `path` (replacing a file there, through a
/// temporary file beside it, so a failed write leaves no half database).
pub fn write_capture(
    path: &Path,
    cap: &Capture,
    args: Option<KernelArgSource<'_>>,
) -> Result<(), RocpdError> {
    write_capture_named(path, cap, args, NameStyle::Demangled)
}

/// [`write_capture`] with display names (`display_name`, the region names) in `style`.
pub fn write_capture_named(
    path: &Path,
    cap: &Capture,
    args: Option<KernelArgSource<'_>>,
    style: NameStyle,
) -> Result<(), RocpdError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut conn = Connection::open(&tmp).map_err(sql)?;
        fill(&mut conn, cap, args, style)?;
        conn.close().map_err(|(_, e)| sql(e))?;
        std::fs::rename(&tmp, path)
            .map_err(|e| RocpdError::Sql(format!("renaming the new database into place: {e}")))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn fill(
    conn: &mut Connection,
    cap: &Capture,
    args: Option<KernelArgSource<'_>>,
    style: NameStyle,
) -> Result<(), RocpdError> {
    let uuid = format!("{:08x}{:016x}", cap.header.pid, cap.header.start_unix_ns);
    let guid = uuid.clone();
    conn.execute_batch(&schema::create_script(&uuid, &guid))
        .map_err(sql)?;
    let t = |n: &str| format!("\"{n}_{uuid}\"");
    let tx = conn.transaction().map_err(sql)?;
    let observe = cap.header.is_observe();
    let over_stand_in = report::over_stand_in(&cap.header);
    let execution = if observe && !over_stand_in {
        "observe mode: the real runtime ran the kernels; SoftGPU only observed the packets"
    } else {
        "no kernel ran: SoftGPU parsed, validated and captured each packet and signalled a diagnostic completion (diagnostic_complete_no_execution, not_kernel_success)"
    };
    {
        let mut st = tx
            .prepare(&format!(
                "INSERT INTO {} (tag, value) VALUES (?1, ?2)",
                t("rocpd_metadata")
            ))
            .map_err(sql)?;
        for (tag, value) in [
            ("schema_version", schema::SCHEMA_VERSION.to_string()),
            // rocprofiler-sdk stores the table suffix itself, leading `_` included;
            // rocpd's importer strips this value from table names to find the plain names.
            ("uuid", format!("_{uuid}")),
            ("guid", guid.clone()),
            ("softgpu_writer", format!("softgpu {}", env!("CARGO_PKG_VERSION"))),
            (TAG_EXECUTION, execution.to_string()),
            (
                TAG_TIMESTAMPS,
                "start and end are the SoftGPU packet processor's clock (packet observed, diagnostic completion signalled), not a GPU's; durations are not kernel run times: the duration, total_duration, average and percentage columns of the views (kernels, top_kernels, top) and busy's GpuTime and Busy are the processor's time, not kernel or GPU time".to_string(),
            ),
            ("softgpu_mode", cap.header.mode.clone()),
            (
                "softgpu_capture_format",
                format!("{}.{}", cap.version.0, cap.version.1),
            ),
            ("softgpu_capture_complete", cap.complete.to_string()),
            (
                "softgpu_kernel_args",
                if args.is_some() { "decoded into rocpd_arg" } else { "not decoded (rocpd_arg is empty)" }.to_string(),
            ),
        ] {
            st.execute(params![tag, value]).map_err(sql)?;
        }
    }
    // Strings.
    let mut strings: BTreeMap<String, i64> = BTreeMap::new();
    let mut string_id = |tx: &rusqlite::Transaction<'_>, s: &str| -> Result<i64, RocpdError> {
        if let Some(&id) = strings.get(s) {
            return Ok(id);
        }
        let id = strings.len() as i64 + 1;
        exec(
            tx,
            &format!(
                "INSERT INTO {} (id, string) VALUES (?1, ?2)",
                t("rocpd_string")
            ),
            params![id, s],
        )
        .map_err(sql)?;
        strings.insert(s.to_string(), id);
        Ok(id)
    };
    let pid = i64::from(cap.header.pid);
    exec(&tx,
        &format!(
            "INSERT INTO {} (id, hash, machine_id, system_name, hostname) VALUES (1, 0, ?1, NULL, NULL)",
            t("rocpd_info_node")
        ),
        params![format!("softgpu-capture-{uuid} (host not recorded in a capture)")],
    )
    .map_err(sql)?;
    let start = i(cap.header.start_unix_ns);
    exec(
        &tx,
        &format!(
            "INSERT INTO {} (id, nid, pid, start, \"end\", extdata) VALUES (?1, 1, ?1, ?2, ?3, ?4)",
            t("rocpd_info_process")
        ),
        params![
            pid,
            start,
            cap.trailer.map(|tr| i(tr.end_ns)),
            serde_json::json!({ "softgpu_mode": cap.header.mode }).to_string()
        ],
    )
    .map_err(sql)?;
    let threads: BTreeSet<u32> = cap.records.iter().map(|r| r.thread).collect();
    for tid in &threads {
        exec(
            &tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, tid) VALUES (?1, 1, ?2, ?1)",
                t("rocpd_info_thread")
            ),
            params![i64::from(*tid), pid],
        )
        .map_err(sql)?;
    }
    // Agents: row id = agent index + 1.
    let mut type_index: BTreeMap<bool, i64> = BTreeMap::new();
    for a in &cap.header.agents {
        let gpu = a.kind == AgentKind::Gpu;
        let ti = type_index.entry(gpu).or_insert(0);
        exec(&tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, type, absolute_index, logical_index, type_index, name, model_name, product_name, vendor_name, extdata)
                 VALUES (?1, 1, ?2, ?3, ?4, ?4, ?5, ?6, ?6, ?7, ?8, ?9)",
                t("rocpd_info_agent")
            ),
            params![
                i64::from(a.index) + 1,
                pid,
                if gpu { "GPU" } else { "CPU" },
                i64::from(a.index),
                *ti,
                a.target.clone().unwrap_or_else(|| a.name.clone()),
                a.name,
                if gpu { "AMD" } else { "CPU" },
                serde_json::json!({ "softgpu_agent_index": a.index, "softgpu_mode": cap.header.mode }).to_string()
            ],
        )
        .map_err(sql)?;
        *ti += 1;
    }
    let agent_row = |index: u32| -> Option<i64> {
        cap.header
            .agents
            .iter()
            .any(|a| a.index == index)
            .then_some(i64::from(index) + 1)
    };
    // Queues, and one stream per queue.
    let mut queue_row: BTreeMap<u64, i64> = BTreeMap::new();
    for q in &cap.queues {
        let id = queue_row.len() as i64 + 1;
        queue_row.insert(q.queue_id, id);
        let extdata = serde_json::json!({ "hsa_queue_id": q.queue_id, "agent_index": q.agent_index, "ring_size": q.ring_size }).to_string();
        exec(
            &tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, name, extdata) VALUES (?1, 1, ?2, ?3, ?4)",
                t("rocpd_info_queue")
            ),
            params![id, pid, format!("HSA queue {}", q.queue_id), extdata],
        )
        .map_err(sql)?;
        exec(
            &tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, name, extdata) VALUES (?1, 1, ?2, ?3, ?4)",
                t("rocpd_info_stream")
            ),
            params![
                id,
                pid,
                format!("queue {} (a capture records no HIP streams)", q.queue_id),
                "{}"
            ],
        )
        .map_err(sql)?;
    }
    // Code objects and kernel symbols.
    let mut symbol_row: BTreeMap<u64, i64> = BTreeMap::new();
    let mut next_symbol = 1i64;
    let insert_symbol = |tx: &rusqlite::Transaction<'_>,
                         id: i64,
                         co: i64,
                         ko: u64,
                         symbol: &str,
                         display: &str,
                         demangled: &str|
     -> Result<(), RocpdError> {
        let m = cap.kernels.get(&ko);
        exec(tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object,
                 kernarg_segment_size, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count, extdata)
                 VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                t("rocpd_info_kernel_symbol")
            ),
            params![
                id,
                pid,
                co,
                symbol,
                display,
                i(ko),
                m.map(|m| m.kernarg_size),
                m.map(|m| m.group_segment_fixed_size),
                m.map(|m| m.private_segment_fixed_size),
                m.map(|m| m.sgpr_count),
                m.map(|m| m.vgpr_count),
                m.map(|m| m.agpr_count),
                serde_json::json!({
                    "wavefront_size": m.map(|m| m.wavefront_size),
                    "max_flat_workgroup_size": m.map(|m| m.max_flat_workgroup_size),
                    "kernel_id": id,
                    "formatted_kernel_name": display,
                    "demangled_kernel_name": demangled,
                    "truncated_kernel_name": truncate_name(demangled),
                }).to_string()
            ],
        )
        .map_err(sql)?;
        Ok(())
    };
    for co in &cap.code_objects {
        let co_id = i(co.id) + 1;
        exec(
            &tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, extdata) VALUES (?1, 1, ?2, ?3)",
                t("rocpd_info_code_object")
            ),
            params![
                co_id,
                pid,
                serde_json::json!({ "softgpu_code_object_id": co.id }).to_string()
            ],
        )
        .map_err(sql)?;
        for (ko, sym) in &co.symbols {
            if symbol_row.contains_key(ko) {
                continue;
            }
            let plain = sym.strip_suffix(".kd").unwrap_or(sym);
            let demangled = report::kernel_name(sym);
            insert_symbol(
                &tx,
                next_symbol,
                co_id,
                *ko,
                plain,
                &style_name(Some(sym), &demangled, style),
                &demangled,
            )?;
            symbol_row.insert(*ko, next_symbol);
            next_symbol += 1;
        }
    }
    let mut unknown_co: Option<i64> = None;
    // Dispatches.
    let category = string_id(&tx, "KERNEL_DISPATCH")?;
    let mut ctx = Context::new(cap);
    for r in &cap.records {
        let v = ctx.view(r);
        if v.dec.packet_type != PacketType::KERNEL_DISPATCH {
            continue;
        }
        let ko = v.dec.kernel_object.unwrap_or(0);
        let kernel_id = match symbol_row.get(&ko) {
            Some(&id) => id,
            None => {
                let co = match unknown_co {
                    Some(c) => c,
                    None => {
                        let c = cap
                            .code_objects
                            .iter()
                            .map(|c| i(c.id) + 1)
                            .max()
                            .unwrap_or(0)
                            + 1;
                        exec(
                            &tx,
                            &format!(
                                "INSERT INTO {} (id, nid, pid, extdata) VALUES (?1, 1, ?2, ?3)",
                                t("rocpd_info_code_object")
                            ),
                            params![
                                c,
                                pid,
                                r#"{"softgpu":"kernel objects found in no registered code object"}"#
                            ],
                        )
                        .map_err(sql)?;
                        unknown_co = Some(c);
                        c
                    }
                };
                let label = report::hex(ko);
                insert_symbol(&tx, next_symbol, co, ko, &label, &label, &label)?;
                symbol_row.insert(ko, next_symbol);
                next_symbol += 1;
                next_symbol - 1
            }
        };
        let extdata = serde_json::json!({
            "softgpu_seq": r.seq,
            "packet_index": r.packet_index,
            "status": r.status.as_str(),
            "label": v.label,
            "result_label": v.result_label,
            "reasons": v.reasons,
            "kernarg_class": v.kernarg_class.map(|k| k.as_str()),
            "hsa_queue_id": r.queue_id,
        })
        .to_string();
        exec(&tx,
            &format!(
                "INSERT INTO {} (category_id, stack_id, parent_stack_id, correlation_id, extdata) VALUES (?1, ?2, ?2, 0, ?3)",
                t("rocpd_event")
            ),
            params![category, i(r.seq), extdata],
        )
        .map_err(sql)?;
        let event_id = tx.last_insert_rowid();
        let region = string_id(&tx, &style_name(v.symbol, &v.kernel_name_label(), style))?;
        let queue = queue_row.get(&r.queue_id).copied();
        let (queue, stream) = match queue {
            Some(q) => (q, q),
            None => {
                // A record of a queue the capture never registered: give it its own row.
                let id = queue_row.len() as i64 + 1;
                queue_row.insert(r.queue_id, id);
                for tbl in ["rocpd_info_queue", "rocpd_info_stream"] {
                    exec(
                        &tx,
                        &format!(
                            "INSERT INTO {} (id, nid, pid, name) VALUES (?1, 1, ?2, ?3)",
                            t(tbl)
                        ),
                        params![
                            id,
                            pid,
                            format!("HSA queue {} (not registered in the capture)", r.queue_id)
                        ],
                    )
                    .map_err(sql)?;
                }
                (id, id)
            }
        };
        let agent = v
            .agent_index
            .and_then(agent_row)
            .or_else(|| {
                cap.queues
                    .iter()
                    .find(|q| q.queue_id == r.queue_id)
                    .and_then(|q| agent_row(q.agent_index))
            })
            .ok_or_else(|| {
                RocpdError::Malformed(format!(
                    "record seq {}: queue {} has no known agent",
                    r.seq, r.queue_id
                ))
            })?;
        let g = v.dec.grid.unwrap_or([0; 3]);
        let w = v.dec.workgroup.unwrap_or([0; 3]);
        exec(&tx,
            &format!(
                "INSERT INTO {} (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\",
                 private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z,
                 grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id, extdata)
                 VALUES (?1, 1, ?2, ?3, ?4, ?5, ?1, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
                t("rocpd_kernel_dispatch")
            ),
            params![
                i(r.seq) + 1,
                pid,
                i64::from(r.thread),
                agent,
                kernel_id,
                queue,
                stream,
                i(r.observed_ns),
                i(r.done_ns.max(r.observed_ns)),
                v.dec.private_segment_size,
                v.dec.group_segment_size,
                w[0],
                w[1],
                w[2],
                g[0],
                g[1],
                g[2],
                region,
                event_id,
                extdata
            ],
        )
        .map_err(sql)?;
        if let Some(source) = args {
            for a in source(r) {
                exec(&tx,
                    &format!("INSERT INTO {} (event_id, position, type, name, value) VALUES (?1, ?2, ?3, ?4, ?5)", t("rocpd_arg")),
                    params![event_id, a.position, a.type_name, a.name, a.value],
                )
                .map_err(sql)?;
            }
        }
    }
    tx.commit().map_err(sql)
}
