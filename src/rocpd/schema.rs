//! The rocpd schema (rocprofiler-sdk's SQLite output, schema version 3), written
//! from its table and column facts.
//!
//! A rocpd database keeps its rows in tables whose names end in `_<uuid>` (one set
//! per profiled process) and exposes each table under its plain name through a view
//! (`rocpd_kernel_dispatch` selects from `rocpd_kernel_dispatch_<uuid>`). SQL
//! written for rocprofv3 databases uses the plain names, so [`create_script`]
//! creates both, and rocprofiler-sdk's data and summary views ([`VIEW_NAMES`]). Rows of different processes are told apart by the `guid` column,
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

/// The data views of the schema besides `kernels`, by the names and with the
/// columns (in order) rocprofiler-sdk's views have, so SQL written for rocprofv3
/// databases (and rocpd's summary tool, which summarises every view with a
/// `duration` column) finds them. Written here from the schema's facts. Views
/// over tables a capture never fills (regions, samples, counters, memory copies
/// and allocations) select no rows. Where a row may lack an optional link (a code
/// object's agent, a category string) the join is a LEFT JOIN, so the row is
/// still listed with NULL there.
const DATA_VIEWS: &str = r#"
CREATE VIEW IF NOT EXISTS "code_objects" AS
SELECT
    C.id, C.guid, C.nid, P.pid, A.absolute_index AS agent_abs_index, C.uri, C.load_base,
    C.load_size, C.load_delta, C.storage_type AS storage_type_str,
    json_extract(C.extdata, '$.size') AS code_object_size,
    json_extract(C.extdata, '$.storage_type') AS storage_type,
    json_extract(C.extdata, '$.memory_base') AS memory_base,
    json_extract(C.extdata, '$.memory_size') AS memory_size
FROM "rocpd_info_code_object" C
    JOIN "rocpd_info_process" P ON P.id = C.pid AND P.guid = C.guid
    LEFT JOIN "rocpd_info_agent" A ON A.id = C.agent_id AND A.guid = C.guid;

CREATE VIEW IF NOT EXISTS "kernel_symbols" AS
SELECT
    S.id, S.guid, S.nid, P.pid, S.code_object_id, S.kernel_name, S.display_name,
    S.kernel_object, S.kernarg_segment_size, S.kernarg_segment_alignment,
    S.group_segment_size, S.private_segment_size, S.sgpr_count, S.arch_vgpr_count,
    S.accum_vgpr_count,
    json_extract(S.extdata, '$.size') AS kernel_symbol_size,
    json_extract(S.extdata, '$.kernel_id') AS kernel_id,
    json_extract(S.extdata, '$.kernel_code_entry_byte_offset') AS kernel_code_entry_byte_offset,
    json_extract(S.extdata, '$.formatted_kernel_name') AS formatted_kernel_name,
    json_extract(S.extdata, '$.demangled_kernel_name') AS demangled_kernel_name,
    json_extract(S.extdata, '$.truncated_kernel_name') AS truncated_kernel_name,
    json_extract(S.extdata, '$.kernel_address.handle') AS kernel_address
FROM "rocpd_info_kernel_symbol" S
    JOIN "rocpd_info_process" P ON P.id = S.pid AND P.guid = S.guid;

CREATE VIEW IF NOT EXISTS "processes" AS
SELECT
    N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release,
    N.version AS system_version, P.guid, P.ppid, P.pid, P.init, P.start, P."end", P.fini,
    P.command
FROM "rocpd_info_process" P
    JOIN "rocpd_info_node" N ON N.id = P.nid AND N.guid = P.guid;

CREATE VIEW IF NOT EXISTS "threads" AS
SELECT
    N.id AS nid, N.machine_id, N.system_name, N.hostname, N.release AS system_release,
    N.version AS system_version, P.guid, P.ppid, P.pid, T.tid, T.start, T."end", T.name
FROM "rocpd_info_thread" T
    JOIN "rocpd_info_process" P ON P.id = T.pid AND P.guid = T.guid
    JOIN "rocpd_info_node" N ON N.id = T.nid AND N.guid = T.guid;

CREATE VIEW IF NOT EXISTS "regions" AS
SELECT
    R.id, R.guid, C.string AS category, NM.string AS name, R.nid, P.pid, T.tid, R.start,
    R."end", (R."end" - R.start) AS duration, R.event_id, E.stack_id, E.parent_stack_id,
    E.correlation_id AS corr_id, E.extdata, E.call_stack, E.line_info
FROM "rocpd_region" R
    JOIN "rocpd_event" E ON E.id = R.event_id AND E.guid = R.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    JOIN "rocpd_string" NM ON NM.id = R.name_id AND NM.guid = R.guid
    JOIN "rocpd_info_process" P ON P.id = R.pid AND P.guid = R.guid
    JOIN "rocpd_info_thread" T ON T.id = R.tid AND T.guid = R.guid;

CREATE VIEW IF NOT EXISTS "region_args" AS
SELECT R.id, R.guid, R.nid, P.pid, A.type, A.name, A.value
FROM "rocpd_region" R
    JOIN "rocpd_arg" A ON A.event_id = R.event_id AND A.guid = R.guid
    JOIN "rocpd_info_process" P ON P.id = R.pid AND P.guid = R.guid;

CREATE VIEW IF NOT EXISTS "samples" AS
SELECT
    SM.id, SM.guid, C.string AS category, NM.string AS name, TR.nid, P.pid, T.tid,
    SM.timestamp, SM.event_id, E.stack_id, E.parent_stack_id, E.correlation_id AS corr_id,
    E.extdata, E.call_stack, E.line_info
FROM "rocpd_sample" SM
    JOIN "rocpd_track" TR ON TR.id = SM.track_id AND TR.guid = SM.guid
    JOIN "rocpd_event" E ON E.id = SM.event_id AND E.guid = SM.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    LEFT JOIN "rocpd_string" NM ON NM.id = TR.name_id AND NM.guid = TR.guid
    JOIN "rocpd_info_process" P ON P.id = TR.pid AND P.guid = TR.guid
    JOIN "rocpd_info_thread" T ON T.id = TR.tid AND T.guid = TR.guid;

CREATE VIEW IF NOT EXISTS "sample_regions" AS
SELECT
    id, guid, category, name, nid, pid, tid, timestamp AS start, timestamp AS "end",
    0 AS duration, event_id, stack_id, parent_stack_id, corr_id, extdata, call_stack,
    line_info
FROM "samples";

CREATE VIEW IF NOT EXISTS "regions_and_samples" AS
SELECT * FROM "regions" UNION ALL SELECT * FROM "sample_regions";

CREATE VIEW IF NOT EXISTS "pmc_info" AS
SELECT
    I.id, I.guid, I.nid, P.pid, A.absolute_index AS agent_abs_index, I.is_constant,
    I.is_derived, I.name, I.description, I.block, I.expression
FROM "rocpd_info_pmc" I
    JOIN "rocpd_info_agent" A ON A.id = I.agent_id AND A.guid = I.guid
    JOIN "rocpd_info_process" P ON P.id = I.pid AND P.guid = I.guid;

CREATE VIEW IF NOT EXISTS "pmc_events" AS
SELECT
    V.id, V.guid, V.pmc_id, E.id AS event_id, C.string AS category, S.display_name AS name,
    K.nid, P.pid, K.dispatch_id, K.start, K."end", (K."end" - K.start) AS duration,
    I.name AS counter_name, V.value AS counter_value
FROM "rocpd_pmc_event" V
    JOIN "rocpd_info_pmc" I ON I.id = V.pmc_id AND I.guid = V.guid
    JOIN "rocpd_event" E ON E.id = V.event_id AND E.guid = V.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    JOIN "rocpd_kernel_dispatch" K ON K.event_id = V.event_id AND K.guid = V.guid
    LEFT JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
    JOIN "rocpd_info_process" P ON P.id = K.pid AND P.guid = K.guid;

CREATE VIEW IF NOT EXISTS "events_args" AS
SELECT
    E.id AS event_id, C.string AS category, E.stack_id, E.parent_stack_id, E.correlation_id,
    A.position AS arg_position, A.type AS arg_type, A.name AS arg_name, A.value AS arg_value,
    E.call_stack, E.line_info, A.extdata
FROM "rocpd_event" E
    JOIN "rocpd_arg" A ON A.event_id = E.id AND A.guid = E.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid;

CREATE VIEW IF NOT EXISTS "stream_args" AS
SELECT
    A.id AS argument_id, A.event_id, A.position AS arg_position, A.type AS arg_type,
    A.value AS arg_value, json_extract(A.extdata, '$.stream_id') AS stream_id, ST.nid, P.pid,
    ST.name AS stream_name, ST.extdata
FROM "rocpd_arg" A
    JOIN "rocpd_info_stream" ST ON ST.id = json_extract(A.extdata, '$.stream_id') AND ST.guid = A.guid
    JOIN "rocpd_info_process" P ON P.id = ST.pid AND P.guid = ST.guid
WHERE A.name = 'stream';

CREATE VIEW IF NOT EXISTS "memory_copies" AS
SELECT
    M.id, M.guid, C.string AS category, M.nid, P.pid, T.tid, M.start, M."end",
    (M."end" - M.start) AS duration, NM.string AS name, RG.string AS region_name, M.stream_id,
    M.queue_id, ST.name AS stream_name, Q.name AS queue_name, M.size, D.name AS dst_device,
    D.absolute_index AS dst_agent_abs_index, D.logical_index AS dst_agent_log_index,
    D.type_index AS dst_agent_type_index, D.type AS dst_agent_type, M.dst_address,
    SR.name AS src_device, SR.absolute_index AS src_agent_abs_index,
    SR.logical_index AS src_agent_log_index, SR.type_index AS src_agent_type_index,
    SR.type AS src_agent_type, M.src_address, E.stack_id, E.parent_stack_id,
    E.correlation_id AS corr_id
FROM "rocpd_memory_copy" M
    JOIN "rocpd_string" NM ON NM.id = M.name_id AND NM.guid = M.guid
    LEFT JOIN "rocpd_string" RG ON RG.id = M.region_name_id AND RG.guid = M.guid
    JOIN "rocpd_info_agent" D ON D.id = M.dst_agent_id AND D.guid = M.guid
    JOIN "rocpd_info_agent" SR ON SR.id = M.src_agent_id AND SR.guid = M.guid
    LEFT JOIN "rocpd_info_queue" Q ON Q.id = M.queue_id AND Q.guid = M.guid
    LEFT JOIN "rocpd_info_stream" ST ON ST.id = M.stream_id AND ST.guid = M.guid
    JOIN "rocpd_event" E ON E.id = M.event_id AND E.guid = M.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    JOIN "rocpd_info_process" P ON P.id = M.pid AND P.guid = M.guid
    JOIN "rocpd_info_thread" T ON T.id = M.tid AND T.guid = M.guid;

CREATE VIEW IF NOT EXISTS "memory_allocations" AS
SELECT
    M.id, M.guid, C.string AS category, M.nid, P.pid, T.tid, M.start, M."end",
    (M."end" - M.start) AS duration, M.type, M.level, A.name AS agent_name,
    A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
    A.type_index AS agent_type_index, A.type AS agent_type, M.address, M.size, M.queue_id,
    Q.name AS queue_name, M.stream_id, ST.name AS stream_name, E.stack_id, E.parent_stack_id,
    E.correlation_id AS corr_id
FROM "rocpd_memory_allocate" M
    LEFT JOIN "rocpd_info_agent" A ON A.id = M.agent_id AND A.guid = M.guid
    LEFT JOIN "rocpd_info_queue" Q ON Q.id = M.queue_id AND Q.guid = M.guid
    LEFT JOIN "rocpd_info_stream" ST ON ST.id = M.stream_id AND ST.guid = M.guid
    JOIN "rocpd_event" E ON E.id = M.event_id AND E.guid = M.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    JOIN "rocpd_info_process" P ON P.id = M.pid AND P.guid = M.guid
    JOIN "rocpd_info_thread" T ON T.id = M.tid AND T.guid = M.guid;

CREATE VIEW IF NOT EXISTS "scratch_memory" AS
SELECT
    M.id, M.guid, M.nid, P.pid, M.type AS operation, A.name AS agent_name,
    A.absolute_index AS agent_abs_index, A.logical_index AS agent_log_index,
    A.type_index AS agent_type_index, A.type AS agent_type, M.queue_id, T.tid,
    json_extract(M.extdata, '$.flags') AS alloc_flags, M.start, M."end",
    (M."end" - M.start) AS duration, M.size, M.address, E.correlation_id, E.stack_id,
    E.parent_stack_id, E.correlation_id AS corr_id, C.string AS category,
    E.extdata AS event_extdata
FROM "rocpd_memory_allocate" M
    LEFT JOIN "rocpd_info_agent" A ON A.id = M.agent_id AND A.guid = M.guid
    JOIN "rocpd_event" E ON E.id = M.event_id AND E.guid = M.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    JOIN "rocpd_info_process" P ON P.id = M.pid AND P.guid = M.guid
    JOIN "rocpd_info_thread" T ON T.id = M.tid AND T.guid = M.guid
WHERE M.level = 'SCRATCH'
ORDER BY M.start;

CREATE VIEW IF NOT EXISTS "counters_collection" AS
SELECT
    MIN(V.id) AS id, V.guid, K.dispatch_id, K.kernel_id, E.id AS event_id, E.correlation_id,
    E.stack_id, E.parent_stack_id, P.pid, T.tid, K.agent_id, A.absolute_index AS agent_abs_index,
    A.logical_index AS agent_log_index, A.type_index AS agent_type_index, A.type AS agent_type,
    K.queue_id, K.grid_size_x, K.grid_size_y, K.grid_size_z,
    (K.grid_size_x * K.grid_size_y * K.grid_size_z) AS grid_size, S.display_name AS kernel_name,
    RG.string AS kernel_region, K.workgroup_size_x, K.workgroup_size_y, K.workgroup_size_z,
    (K.workgroup_size_x * K.workgroup_size_y * K.workgroup_size_z) AS workgroup_size,
    K.group_segment_size AS lds_block_size, K.private_segment_size AS scratch_size,
    S.arch_vgpr_count AS vgpr_count, S.accum_vgpr_count, S.sgpr_count,
    I.name AS counter_name, I.symbol AS counter_symbol, I.component, I.description, I.block,
    I.expression, I.value_type, I.id AS counter_id, SUM(V.value) AS value, K.start, K."end",
    I.is_constant, I.is_derived, (K."end" - K.start) AS duration, C.string AS category, K.nid,
    E.extdata, S.code_object_id
FROM "rocpd_pmc_event" V
    JOIN "rocpd_info_pmc" I ON I.id = V.pmc_id AND I.guid = V.guid
    JOIN "rocpd_event" E ON E.id = V.event_id AND E.guid = V.guid
    LEFT JOIN "rocpd_string" C ON C.id = E.category_id AND C.guid = E.guid
    JOIN "rocpd_kernel_dispatch" K ON K.event_id = V.event_id AND K.guid = V.guid
    LEFT JOIN "rocpd_string" RG ON RG.id = K.region_name_id AND RG.guid = K.guid
    JOIN "rocpd_info_agent" A ON A.id = K.agent_id AND A.guid = K.guid
    JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
    JOIN "rocpd_info_process" P ON P.id = K.pid AND P.guid = K.guid
    JOIN "rocpd_info_thread" T ON T.id = K.tid AND T.guid = K.guid
GROUP BY V.guid, K.dispatch_id, I.name, K.agent_id;
"#;

/// The summary views, by rocprofiler-sdk's names and columns. Their durations are
/// `end - start` of the rows: in a database written by SoftGPU that is the packet
/// processor's time between observing a packet and signalling its diagnostic
/// completion, not a kernel's run time (no kernel ran); `busy` is then that time
/// over the capture's span, not a GPU's utilisation. The call counts are real.
const SUMMARY_VIEWS: &str = r#"
CREATE VIEW IF NOT EXISTS "top_kernels" AS
SELECT
    S.display_name AS name, COUNT(*) AS total_calls,
    SUM(K."end" - K.start) / 1000.0 AS total_duration,
    (SUM(K."end" - K.start) / COUNT(*)) / 1000.0 AS average,
    SUM(K."end" - K.start) * 100.0
        / (SELECT SUM(X."end" - X.start) FROM "rocpd_kernel_dispatch" X) AS percentage
FROM "rocpd_kernel_dispatch" K
    JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
GROUP BY S.display_name
ORDER BY total_duration DESC;

CREATE VIEW IF NOT EXISTS "busy" AS
SELECT
    U.agent_id, AG.type, U.GpuTime, W.WallTime, U.GpuTime * 1.0 / W.WallTime AS Busy
FROM (
        SELECT agent_id, guid, SUM("end" - start) AS GpuTime
        FROM (
            SELECT agent_id, guid, start, "end" FROM "rocpd_kernel_dispatch"
            UNION ALL
            SELECT dst_agent_id, guid, start, "end" FROM "rocpd_memory_copy"
        )
        GROUP BY agent_id, guid
    ) U
    CROSS JOIN (
        SELECT MAX("end") - MIN(start) AS WallTime
        FROM (
            SELECT start, "end" FROM "rocpd_kernel_dispatch"
            UNION ALL
            SELECT start, "end" FROM "rocpd_memory_copy"
        )
    ) W
    JOIN "rocpd_info_agent" AG ON AG.id = U.agent_id AND AG.guid = U.guid;

CREATE VIEW IF NOT EXISTS "top" AS
SELECT
    OPS.name, COUNT(*) AS total_calls, SUM(OPS.duration) / 1000.0 AS total_duration,
    (SUM(OPS.duration) / COUNT(*)) / 1000.0 AS average,
    SUM(OPS.duration) * 100.0 / TT.total_time AS percentage
FROM (
        SELECT S.display_name AS name, (K."end" - K.start) AS duration
        FROM "rocpd_kernel_dispatch" K
            JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id AND S.guid = K.guid
        UNION ALL
        SELECT NM.string, (M."end" - M.start)
        FROM "rocpd_memory_copy" M
            JOIN "rocpd_string" NM ON NM.id = M.name_id AND NM.guid = M.guid
        UNION ALL
        SELECT NM.string, (R."end" - R.start)
        FROM "rocpd_region" R
            JOIN "rocpd_string" NM ON NM.id = R.name_id AND NM.guid = R.guid
    ) OPS
    CROSS JOIN (
        SELECT SUM("end" - start) AS total_time
        FROM (
            SELECT start, "end" FROM "rocpd_kernel_dispatch"
            UNION ALL
            SELECT start, "end" FROM "rocpd_memory_copy"
            UNION ALL
            SELECT start, "end" FROM "rocpd_region"
        )
    ) TT
GROUP BY OPS.name
ORDER BY total_duration DESC;
"#;

/// The names of the views [`create_script`] creates besides the plain-name views
/// of the tables: rocprofiler-sdk's data views (`kernels` among them) and summary
/// views. rocprofiler-sdk's marker views file defines no view.
pub const VIEW_NAMES: &[&str] = &[
    "code_objects",
    "kernel_symbols",
    "processes",
    "threads",
    "regions",
    "region_args",
    "samples",
    "sample_regions",
    "regions_and_samples",
    "kernels",
    "pmc_info",
    "pmc_events",
    "events_args",
    "stream_args",
    "memory_copies",
    "memory_allocations",
    "scratch_memory",
    "counters_collection",
    "top_kernels",
    "busy",
    "top",
];

/// The names of every table of the schema, without the `_<uuid>` suffix.
pub fn table_names() -> impl Iterator<Item = &'static str> {
    TABLES.iter().map(|t| t.0)
}

/// SQL that creates the whole schema: every table as `NAME_<uuid>` (plain `NAME`
/// when `uuid` is empty), a view of each under its plain name, and the data and
/// summary views of [`VIEW_NAMES`]. `uuid` and `guid` must be plain identifiers (letters, digits, `_`, `-`);
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
    sql.push_str(DATA_VIEWS);
    sql.push_str(SUMMARY_VIEWS);
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
