//! Reading a rocpd database as a dispatch stream for `softgpu diff`.
//!
//! Kernel dispatches (`rocpd_kernel_dispatch`) are named through
//! `rocpd_info_kernel_symbol` and grouped per (process `guid`, `pid`, agent, queue):
//! the same per-queue streams every other input gives. Streams (`stream_id`) are HIP
//! streams mapped onto those queues; they do not split a queue. Within a queue,
//! dispatches are in `dispatch_id` order (rocprofiler-sdk numbers them in submission
//! order), then by row id.
//!
//! Bounded: the database is opened read-only and immutable (no journal or WAL file
//! is created or read), at most [`MAX_DISPATCHES`] rows are read, and SQLite's
//! virtual machine is stopped after [`MAX_VM_STEPS`] steps, so a database whose
//! views loop or explode fails with an error instead of running forever.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::RocpdError;
use super::schema;
use crate::diff::{Dispatch, LdsSemantics, Trace, normalise_name};

/// Most dispatch rows read from one database.
pub const MAX_DISPATCHES: usize = 20_000_000;
/// Most SQLite virtual-machine steps one read may take (checked every 10 000).
pub const MAX_VM_STEPS: u64 = 20_000_000_000;

/// Opens `path` read-only, with a bound of `max_steps` virtual-machine steps.
fn open(path: &Path, max_steps: u64) -> Result<Connection, RocpdError> {
    let mut uri = String::from("file:");
    let s = path
        .to_str()
        .ok_or_else(|| RocpdError::Malformed("the path is not UTF-8".into()))?;
    for b in s.bytes() {
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push_str("?immutable=1");
    let conn = Connection::open_with_flags(
        &uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    let calls = Arc::new(AtomicU64::new(0));
    let limit = max_steps / 10_000;
    conn.progress_handler(
        10_000,
        Some(move || calls.fetch_add(1, Ordering::Relaxed) >= limit),
    );
    Ok(conn)
}

fn sql(e: rusqlite::Error) -> RocpdError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::OperationInterrupted {
            return RocpdError::TooLarge(
                "reading it took more SQLite steps than the reader's bound".into(),
            );
        }
        if f.code == rusqlite::ErrorCode::NotADatabase {
            return RocpdError::NotRocpd("not an SQLite database".into());
        }
    }
    RocpdError::Sql(e.to_string())
}

/// The names (tables and views) in the database's schema, and the temporary
/// views [`attach_plain_views`] made.
fn names(conn: &Connection) -> Result<Vec<String>, RocpdError> {
    let mut st = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
             UNION ALL SELECT name FROM sqlite_temp_master WHERE type = 'view'",
        )
        .map_err(sql)?;
    let rows = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sql)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(sql)?;
    Ok(rows)
}

/// The uuid suffixes (`_<uuid>`, leading `_` included) of the rocpd table sets in
/// a database: one per `rocpd_metadata_<uuid>` table, in name order.
fn uuid_suffixes(names: &[String]) -> Vec<String> {
    let mut v: Vec<String> = names
        .iter()
        .filter_map(|n| n.strip_prefix("rocpd_metadata"))
        .filter(|s| {
            s.len() > 1
                && s.starts_with('_')
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// rocprofiler-sdk's writers keep the rows in `NAME_<uuid>` tables and make a
/// plain-named view of each (`rocpd_kernel_dispatch` over
/// `rocpd_kernel_dispatch_<uuid>`). A database whose plain views were dropped or
/// never made (only the suffixed tables) is still a rocpd database: for each
/// table family the database has no plain name for, this makes a temporary view
/// (in the connection's own temp schema; the file is not written) of the union of
/// that family's tables over every uuid suffix present. Does nothing when the
/// plain `rocpd_metadata` is there.
fn attach_plain_views(conn: &Connection) -> Result<(), RocpdError> {
    let names = names(conn)?;
    if names.iter().any(|n| n == "rocpd_metadata") {
        return Ok(());
    }
    let suffixes = uuid_suffixes(&names);
    if suffixes.is_empty() {
        return Ok(());
    }
    for family in schema::table_names() {
        if names.iter().any(|n| n == family) {
            continue;
        }
        let parts: Vec<String> = suffixes
            .iter()
            .map(|s| format!("{family}{s}"))
            .filter(|t| names.iter().any(|n| n == t))
            .map(|t| format!("SELECT * FROM main.\"{t}\""))
            .collect();
        if parts.is_empty() {
            continue;
        }
        let view = format!(
            "CREATE TEMP VIEW \"{family}\" AS {}",
            parts.join(" UNION ALL ")
        );
        conn.execute_batch(&view).map_err(|e| {
            RocpdError::Malformed(format!(
                "tables {family}_<uuid> for {} uuid(s) cannot be read as one view: {}",
                suffixes.len(),
                sql(e)
            ))
        })?;
    }
    Ok(())
}

/// The schema version of the database at `conn`, checked: `Ok(version)` when we
/// know it, a typed error naming what was found otherwise.
pub fn schema_version(conn: &Connection) -> Result<String, RocpdError> {
    let names = names(conn)?;
    let has = |n: &str| names.iter().any(|x| x == n);
    if !has("rocpd_metadata") {
        if has("rocpd_op") && has("rocpd_api") {
            return Err(RocpdError::UnknownVersion(
                "an RPD database of rocmProfileData / rocprof v1 (tables rocpd_op, rocpd_api), \
                 not rocprofiler-sdk's rocpd schema; export it with rocprof v1's own tools"
                    .into(),
            ));
        }
        return Err(RocpdError::NotRocpd(
            "an SQLite database without a rocpd_metadata table or view".into(),
        ));
    }
    let v: Option<String> = conn
        .query_row(
            "SELECT CAST(value AS TEXT) FROM rocpd_metadata WHERE tag = 'schema_version' ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => {
                RocpdError::UnknownVersion("rocpd_metadata has no schema_version".into())
            }
            e => sql(e),
        })?;
    let v = v.unwrap_or_default();
    if !schema::is_known_version(&v) {
        return Err(RocpdError::UnknownVersion(format!(
            "schema_version {v:?} (this build reads rocpd schema version 3)"
        )));
    }
    for t in ["rocpd_kernel_dispatch", "rocpd_info_kernel_symbol"] {
        if !has(t) {
            return Err(RocpdError::Malformed(format!(
                "schema version {v} but no {t} table or view"
            )));
        }
    }
    Ok(v)
}

/// A column value as a non-negative integer, or an error naming the row and column.
fn int(r: &rusqlite::Row<'_>, i: usize, col: &str, row_id: i64) -> Result<Option<u64>, RocpdError> {
    let bad = |what: &str| {
        RocpdError::Malformed(format!(
            "rocpd_kernel_dispatch row id {row_id}: column {col}: {what}"
        ))
    };
    match r.get_ref(i).map_err(sql)? {
        ValueRef::Null => Ok(None),
        ValueRef::Integer(v) => u64::try_from(v).map(Some).map_err(|_| bad("negative")),
        ValueRef::Real(_) => Err(bad("a real number, not an integer")),
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(Some)
            .ok_or_else(|| bad("text that is not a non-negative integer")),
        ValueRef::Blob(_) => Err(bad("a blob, not an integer")),
    }
}

fn text(r: &rusqlite::Row<'_>, i: usize) -> Result<Option<String>, RocpdError> {
    Ok(match r.get_ref(i).map_err(sql)? {
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(v) => Some(v.to_string()),
        _ => None,
    })
}

/// Reads the rocpd database at `path` as a dispatch stream.
pub fn read_trace(path: &Path) -> Result<Trace, RocpdError> {
    read_trace_bounded(path, MAX_VM_STEPS)
}

/// [`read_trace`] with a bound of `max_steps` SQLite virtual-machine steps instead
/// of [`MAX_VM_STEPS`] (checked every 10 000 steps).
pub fn read_trace_bounded(path: &Path, max_steps: u64) -> Result<Trace, RocpdError> {
    let conn = open(path, max_steps)?;
    attach_plain_views(&conn)?;
    schema_version(&conn)?;
    let mut st = conn
        .prepare(
            "SELECT K.id, K.guid, K.pid, K.agent_id, K.queue_id, K.dispatch_id,
                    K.grid_size_x, K.grid_size_y, K.grid_size_z,
                    K.workgroup_size_x, K.workgroup_size_y, K.workgroup_size_z,
                    K.group_segment_size, K.kernel_id, S.kernel_name, S.display_name
             FROM rocpd_kernel_dispatch K
             LEFT JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid",
        )
        .map_err(sql)?;
    let mut rows = st.query([]).map_err(sql)?;
    // (queue key) -> rows of (dispatch_id, row id, dispatch); queues in first-appearance
    // order after sorting by dispatch id.
    let mut all: Vec<(String, u64, i64, Dispatch)> = Vec::new();
    while let Some(r) = rows.next().map_err(sql)? {
        if all.len() >= MAX_DISPATCHES {
            return Err(RocpdError::TooLarge(format!(
                "more than {MAX_DISPATCHES} kernel dispatch rows"
            )));
        }
        let id: i64 = match r.get_ref(0).map_err(sql)? {
            ValueRef::Integer(v) => v,
            _ => -1,
        };
        let need = |i: usize, col: &str| -> Result<u64, RocpdError> {
            int(r, i, col, id)?.ok_or_else(|| {
                RocpdError::Malformed(format!(
                    "rocpd_kernel_dispatch row id {id}: column {col} is NULL"
                ))
            })
        };
        let guid = text(r, 1)?.unwrap_or_default();
        let pid = int(r, 2, "pid", id)?.unwrap_or(0);
        let agent = int(r, 3, "agent_id", id)?.unwrap_or(0);
        let queue = int(r, 4, "queue_id", id)?.unwrap_or(0);
        let dispatch_id = need(5, "dispatch_id")?;
        let grid = [
            need(6, "grid_size_x")?,
            need(7, "grid_size_y")?,
            need(8, "grid_size_z")?,
        ];
        let workgroup = [
            need(9, "workgroup_size_x")?,
            need(10, "workgroup_size_y")?,
            need(11, "workgroup_size_z")?,
        ];
        let lds = int(r, 12, "group_segment_size", id)?;
        let kernel_id = int(r, 13, "kernel_id", id)?.unwrap_or(0);
        let name = [text(r, 14)?, text(r, 15)?]
            .into_iter()
            .flatten()
            .find(|s| !s.trim().is_empty())
            .map(|s| normalise_name(&s))
            .unwrap_or_else(|| format!("kernel_id {kernel_id}"));
        all.push((
            format!("{guid}/{pid}/{agent}/{queue}"),
            dispatch_id,
            id,
            Dispatch {
                name,
                grid,
                workgroup,
                totals_only: false,
                group_segment_size: lds,
                // rocpd's kernel-dispatch rows carry no argument values.
                args: None,
            },
        ));
    }
    all.sort_by_key(|a| (a.1, a.2));
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut queues: Vec<Vec<Dispatch>> = Vec::new();
    for (key, _, _, d) in all {
        let n = queues.len();
        let i = *index.entry(key).or_insert(n);
        if i == n {
            queues.push(Vec::new());
        }
        queues[i].push(d);
    }
    Ok(Trace {
        kind: "rocpd",
        lds: LdsSemantics::Packet,
        queues,
    })
}
