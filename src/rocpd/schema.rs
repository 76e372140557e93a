//! The rocpd schema (rocprofiler-sdk's SQLite output, schema version 3), written
//! from its table and column facts.
//!
//! A rocpd database keeps its rows in tables whose names end in `_<uuid>` (one set
//! per profiled process) and exposes each table under its plain name through a view
//! (`rocpd_kernel_dispatch` selects from `rocpd_kernel_dispatch_<uuid>`). SQL
//! written for rocprofv3 databases uses the plain names, so [`create_script`]
//! creates both. Rows of different processes are told apart by the `guid` column,
//! which every table but `rocpd_metadata` has.

/// The `schema_version` value in `rocpd_metadata` that this module writes.
pub const SCHEMA_VERSION: &str = "3";

/// The schema versions [`crate::rocpd::read`] accepts: rocprofiler-sdk has written
/// `3` since its first rocpd output. A value with major 3 and minor 0 (`3.0`,
/// `3.0.N`) is read as the same layout.
pub fn is_known_version(v: &str) -> bool {
    let mut parts = v.trim().split('.');
    let major = parts.next();
    let minor = parts.next();
    let patch_ok = parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    major == Some("3") && matches!(minor, None | Some("0")) && patch_ok
}

/// `(table, columns)`. Each column list follows `"id" INTEGER PRIMARY KEY` and,
/// for every table but `rocpd_metadata`, a `guid` column.
const TABLES: &[(&str, &str)] = &[
    (
        "rocpd_metadata",
        r#""tag" TEXT NOT NULL, "value" TEXT NOT NULL"#,
    ),
    ("rocpd_string", r#""string" TEXT NOT NULL UNIQUE"#),
    (
        "rocpd_info_node",
        r#""hash" BIGINT NOT NULL UNIQUE, "machine_id" TEXT NOT NULL UNIQUE, "system_name" TEXT,
        "hostname" TEXT, "release" TEXT, "version" TEXT, "hardware_name" TEXT, "domain_name" TEXT"#,
    ),
    (
        "rocpd_info_process",
        r#""nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "init" BIGINT,
        "fini" BIGINT, "start" BIGINT, "end" BIGINT, "command" TEXT,
        "environment" JSONB NOT NULL DEFAULT '{}', "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_thread",
        r#""nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
        "name" TEXT, "start" BIGINT, "end" BIGINT, "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_agent",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
        "type" TEXT CHECK ("type" IN ('CPU', 'GPU')), "absolute_index" INTEGER,
        "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER, "name" TEXT,
        "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT, "user_name" TEXT,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_queue",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_stream",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_pmc",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER,
        "target_arch" TEXT, "event_code" INT, "instance_id" INTEGER, "name" TEXT NOT NULL,
        "symbol" TEXT NOT NULL, "description" TEXT, "long_description" TEXT DEFAULT '',
        "component" TEXT, "units" TEXT DEFAULT '', "value_type" TEXT, "block" TEXT,
        "expression" TEXT, "is_constant" INTEGER, "is_derived" INTEGER,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_code_object",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER, "uri" TEXT,
        "load_base" BIGINT, "load_size" BIGINT, "load_delta" BIGINT,
        "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')),
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_info_kernel_symbol",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL,
        "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER,
        "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER,
        "group_segment_size" INTEGER, "private_segment_size" INTEGER, "sgpr_count" INTEGER,
        "arch_vgpr_count" INTEGER, "accum_vgpr_count" INTEGER,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_track",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER, "tid" INTEGER, "name_id" INTEGER,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_event",
        r#""category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER,
        "correlation_id" INTEGER, "call_stack" JSONB NOT NULL DEFAULT '{}',
        "line_info" JSONB NOT NULL DEFAULT '{}', "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_arg",
        r#""event_id" INTEGER NOT NULL, "position" INTEGER NOT NULL, "type" TEXT NOT NULL,
        "name" TEXT NOT NULL, "value" TEXT, "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_pmc_event",
        r#""event_id" INTEGER, "pmc_id" INTEGER NOT NULL, "value" REAL DEFAULT 0.0,
        "extdata" JSONB DEFAULT '{}'"#,
    ),
    (
        "rocpd_region",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
        "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL,
        "event_id" INTEGER, "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_sample",
        r#""track_id" INTEGER NOT NULL, "timestamp" BIGINT NOT NULL, "event_id" INTEGER,
        "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_kernel_dispatch",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,
        "agent_id" INTEGER NOT NULL, "kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL,
        "queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL, "start" BIGINT NOT NULL,
        "end" BIGINT NOT NULL, "private_segment_size" INTEGER, "group_segment_size" INTEGER,
        "workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL,
        "workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL,
        "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL,
        "region_name_id" INTEGER, "event_id" INTEGER, "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_memory_copy",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "start" BIGINT NOT NULL,
        "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL, "dst_agent_id" INTEGER,
        "dst_address" INTEGER, "src_agent_id" INTEGER, "src_address" INTEGER,
        "size" INTEGER NOT NULL, "queue_id" INTEGER, "stream_id" INTEGER,
        "region_name_id" INTEGER, "event_id" INTEGER, "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
    (
        "rocpd_memory_allocate",
        r#""nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER,
        "type" TEXT, "level" TEXT, "start" BIGINT NOT NULL, "end" BIGINT NOT NULL,
        "address" INTEGER, "size" INTEGER NOT NULL, "queue_id" INTEGER, "stream_id" INTEGER,
        "event_id" INTEGER, "extdata" JSONB NOT NULL DEFAULT '{}'"#,
    ),
];

/// The `kernels` view rocpd's tools and users query: one row per dispatch with its
/// kernel, agent, queue, stream, process and thread, geometry, segment sizes and
/// register counts.
const KERNELS_VIEW: &str = r#"
CREATE VIEW IF NOT EXISTS "kernels" AS
SELECT
    K.id, K.guid, T.tid,
    (SELECT string FROM "rocpd_string" RS WHERE RS.id = E.category_id AND RS.guid = E.guid) AS category,
    R.string AS region, S.display_name AS name, K.nid, P.pid,
    A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
    A.type_index AS agent_type_index, A.type AS agent_type,
    S.code_object_id AS code_object_id, K.kernel_id, K.dispatch_id, K.stream_id, K.queue_id,
    Q.name AS queue, ST.name AS stream, K.start, K.end, (K.end - K.start) AS duration,
    K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z,
    K.workgroup_size_x AS workgroup_x, K.workgroup_size_y AS workgroup_y,
    K.workgroup_size_z AS workgroup_z,
    K.group_segment_size AS lds_size, K.private_segment_size AS scratch_size,
    S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count,
    S.group_segment_size AS static_lds_size, S.private_segment_size AS static_scratch_size,
    E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id
FROM "rocpd_kernel_dispatch" K
    JOIN "rocpd_info_agent" A ON A.id = K.agent_id AND A.guid = K.guid
    JOIN "rocpd_event" E ON E.id = K.event_id AND E.guid = K.guid
    JOIN "rocpd_string" R ON R.id = K.region_name_id AND R.guid = K.guid
    JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
    LEFT JOIN "rocpd_info_stream" ST ON ST.id = K.stream_id AND ST.guid = K.guid
    LEFT JOIN "rocpd_info_queue" Q ON Q.id = K.queue_id AND Q.guid = K.guid
    JOIN "rocpd_info_process" P ON P.id = Q.pid AND P.guid = Q.guid
    JOIN "rocpd_info_thread" T ON T.id = K.tid AND T.guid = K.guid;
"#;

/// The names of every table of the schema, without the `_<uuid>` suffix.
pub fn table_names() -> impl Iterator<Item = &'static str> {
    TABLES.iter().map(|t| t.0)
}

/// SQL that creates the whole schema: every table as `NAME_<uuid>` (plain `NAME`
/// when `uuid` is empty), a view of each under its plain name, and the `kernels`
/// view. `uuid` and `guid` must be plain identifiers (letters, digits, `_`, `-`);
/// the writer makes them itself.
pub fn create_script(uuid: &str, guid: &str) -> String {
    debug_assert!(
        uuid.bytes()
            .chain(guid.bytes())
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    );
    let suffix = if uuid.is_empty() {
        String::new()
    } else {
        format!("_{}", uuid.replace('-', "_"))
    };
    let mut sql = String::from("PRAGMA foreign_keys = ON;\n");
    for (name, cols) in TABLES {
        let guid_col = if *name == "rocpd_metadata" {
            String::new()
        } else {
            format!(r#""guid" TEXT NOT NULL DEFAULT '{guid}', "#)
        };
        sql.push_str(&format!(
            "CREATE TABLE IF NOT EXISTS \"{name}{suffix}\" (\"id\" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, {guid_col}{cols});\n"
        ));
    }
    if !suffix.is_empty() {
        for (name, _) in TABLES {
            sql.push_str(&format!(
                "CREATE VIEW IF NOT EXISTS \"{name}\" AS SELECT * FROM \"{name}{suffix}\";\n"
            ));
        }
    }
    sql.push_str(KERNELS_VIEW);
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_three_and_its_point_forms_are_known_and_others_are_not() {
        for v in ["3", "3.0", "3.0.0", "3.0.12"] {
            assert!(is_known_version(v), "{v}");
        }
        for v in ["", "2", "4", "3.1", "3.0.x", "3..", "1.0.0"] {
            assert!(!is_known_version(v), "{v}");
        }
    }
}
