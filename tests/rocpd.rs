//! rocpd databases in and out: `softgpu diff` on a rocpd database built here with our
//! own SQL in rocprofiler-sdk's schema (several queues and streams), against the
//! equivalent capture at every level; typed errors on unknown versions and malformed
//! databases; `softgpu inspect --format rocpd` read back through SQL (rusqlite and the
//! real sqlite3 CLI); `softgpu inspect --format stats`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rusqlite::Connection;
use softgpu_hsa::abi::{FenceScope, HsaSignal, KernelDispatchPacket, PacketType};
use softgpu_hsa::aql::parse::{encode_kernel_dispatch, make_header};
use softgpu_hsa::aql::{PacketRecord, Reason, ReasonSet, Status};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass, KernelMeta,
};

const VECADD: u64 = 0x1000;
const PLAIN: u64 = 0x2000;
const VECADD_NAME: &str = "vecAdd(float*, float*, float*, int)";

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("rocpd");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn softgpu(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_softgpu"))
        .args(args)
        .output()
        .unwrap()
}

fn diff(a: &Path, b: &Path, level: &str) -> Output {
    softgpu(&[
        "diff".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--level".as_ref(),
        level.as_ref(),
    ])
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn levels(a: &Path, b: &Path, expect: [(&str, i32); 4]) {
    for (level, want) in expect {
        let o = diff(a, b, level);
        assert_eq!(o.status.code(), Some(want), "level {level}: {}", text(&o));
    }
}

fn dispatch(kernel_object: u64, grid_x: u32, wg_x: u16, lds: u32) -> [u8; 64] {
    encode_kernel_dispatch(&KernelDispatchPacket {
        header: make_header(
            PacketType::KERNEL_DISPATCH,
            true,
            FenceScope::AGENT,
            FenceScope::SYSTEM,
        ),
        setup: 1,
        workgroup_size_x: wg_x,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: grid_x,
        grid_size_y: 1,
        grid_size_z: 1,
        private_segment_size: 16,
        group_segment_size: lds,
        kernel_object,
        kernarg_address: 0x7000_0000,
        completion_signal: HsaSignal { handle: 0 },
        ..Default::default()
    })
}

/// (queue id, kernel object, grid x, rejected).
type Entry = (u64, u64, u32, bool);

/// Queue 5 runs vecAdd, plain, vecAdd; queue 9 runs plain, vecAdd.
const BASE: &[Entry] = &[
    (5, VECADD, 1024, false),
    (5, PLAIN, 256, false),
    (9, PLAIN, 512, true),
    (5, VECADD, 1024, false),
    (9, VECADD, 2048, false),
];

fn capture(name: &str, entries: &[Entry]) -> PathBuf {
    let path = dir().join(format!("{name}.sgcap"));
    let _ = std::fs::remove_file(&path);
    let header = CaptureHeader {
        pid: 4242,
        start_unix_ns: 1_700_000_000_000_000_000,
        mode: "virtual".into(),
        agents: vec![
            AgentDesc {
                index: 0,
                kind: AgentKind::Cpu,
                name: "cpu".into(),
                target: None,
            },
            AgentDesc {
                index: 1,
                kind: AgentKind::Gpu,
                name: "SoftGPU virtual gfx90a".into(),
                target: Some("gfx90a".into()),
            },
        ],
    };
    let w = CaptureWriter::create(&path, header, Box::new(|_| KernargClass::Softgpu)).unwrap();
    w.add_code_object(vec![
        (VECADD, "_Z6vecAddPfS_S_i.kd".into()),
        (PLAIN, "plain_kernel.kd".into()),
    ]);
    w.add_kernel_info(vec![
        KernelMeta {
            kernel_object: VECADD,
            sgpr_count: 16,
            vgpr_count: 8,
            agpr_count: 0,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: 0,
            kernarg_size: 28,
            wavefront_size: 64,
            max_flat_workgroup_size: 1024,
        },
        KernelMeta {
            kernel_object: PLAIN,
            sgpr_count: 24,
            vgpr_count: 4,
            agpr_count: 2,
            group_segment_fixed_size: 2048,
            private_segment_fixed_size: 16,
            kernarg_size: 0,
            wavefront_size: 64,
            max_flat_workgroup_size: 256,
        },
    ]);
    let mut queues: Vec<(u64, softgpu_hsa::capture::QueueProducer)> = Vec::new();
    for (i, &(q, ko, grid, rejected)) in entries.iter().enumerate() {
        if !queues.iter().any(|(id, _)| *id == q) {
            queues.push((q, w.register_queue(q, 1, 64, 0)));
        }
        let mut reasons = ReasonSet(0);
        if rejected {
            reasons.insert(Reason::ReservedFieldNonzero);
        }
        let p = &mut queues.iter_mut().find(|(id, _)| *id == q).unwrap().1;
        p.push(&PacketRecord {
            queue_id: q,
            packet_index: i as u64,
            raw: dispatch(ko, grid, 64, 2048),
            status: if rejected {
                Status::Rejected
            } else {
                Status::Validated
            },
            reasons,
            observed_ns: 100 + i as u64,
            done_ns: 200 + i as u64,
            thread: 7,
        });
        w.drain();
    }
    w.finish(0, 1).unwrap();
    path
}

/// The uuid suffix of the tables (the plain names are views).
const U: &str = "_0190a1b2c3d4";

/// Our own SQL for a rocprofiler-sdk rocpd database (schema version `version`):
/// the tables the reader needs, suffixed with a uuid, and the plain-named views.
fn rocpd_schema(conn: &Connection, version: &str) {
    let u = U;
    let tables = [
        ("rocpd_metadata", "tag TEXT NOT NULL, value TEXT NOT NULL"),
        ("rocpd_string", "guid TEXT NOT NULL, string TEXT NOT NULL UNIQUE"),
        (
            "rocpd_info_agent",
            "guid TEXT NOT NULL, nid INTEGER, pid INTEGER, type TEXT, absolute_index INTEGER, name TEXT",
        ),
        ("rocpd_info_queue", "guid TEXT NOT NULL, nid INTEGER, pid INTEGER, name TEXT"),
        ("rocpd_info_stream", "guid TEXT NOT NULL, nid INTEGER, pid INTEGER, name TEXT"),
        (
            "rocpd_info_kernel_symbol",
            "guid TEXT NOT NULL, nid INTEGER, pid INTEGER, code_object_id INTEGER, kernel_name TEXT, display_name TEXT, kernel_object INTEGER",
        ),
        (
            "rocpd_kernel_dispatch",
            "guid TEXT NOT NULL, nid INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER, agent_id INTEGER NOT NULL,
             kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL, queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL,
             start BIGINT NOT NULL, \"end\" BIGINT NOT NULL, private_segment_size INTEGER, group_segment_size INTEGER,
             workgroup_size_x INTEGER, workgroup_size_y INTEGER, workgroup_size_z INTEGER,
             grid_size_x INTEGER, grid_size_y INTEGER, grid_size_z INTEGER, region_name_id INTEGER, event_id INTEGER",
        ),
    ];
    for (t, cols) in tables {
        conn.execute_batch(&format!(
            "CREATE TABLE {t}{u} (id INTEGER PRIMARY KEY, {cols}); CREATE VIEW {t} AS SELECT * FROM {t}{u};"
        ))
        .unwrap();
    }
    conn.execute(
        &format!("INSERT INTO rocpd_metadata{u} (tag, value) VALUES ('schema_version', ?1), ('uuid', '{u}')"),
        [version],
    )
    .unwrap();
}

/// A rocpd database holding `rows` (queue row id, stream row id, dispatch id, kernel
/// symbol id 1 = vecAdd mangled, 2 = plain, grid x), LDS 2048, workgroup 64.
fn rocpd_db(name: &str, rows: &[(i64, i64, i64, i64, i64)]) -> PathBuf {
    let path = dir().join(format!("{name}.db"));
    let _ = std::fs::remove_file(&path);
    let conn = Connection::open(&path).unwrap();
    rocpd_schema(&conn, "3");
    conn.execute_batch(
        "INSERT INTO rocpd_info_agent_0190a1b2c3d4 VALUES (1, 'g', 1, 4242, 'GPU', 2, 'gfx90a');
         INSERT INTO rocpd_info_queue_0190a1b2c3d4 VALUES (1, 'g', 1, 4242, 'queue A'), (2, 'g', 1, 4242, 'queue B');
         INSERT INTO rocpd_info_stream_0190a1b2c3d4 VALUES (1, 'g', 1, 4242, 's1'), (2, 'g', 1, 4242, 's2'), (3, 'g', 1, 4242, 's3');
         INSERT INTO rocpd_info_kernel_symbol_0190a1b2c3d4 VALUES
            (1, 'g', 1, 4242, 1, '_Z6vecAddPfS_S_i', 'vecAdd(float*, float*, float*, int)', 4096),
            (2, 'g', 1, 4242, 1, 'plain_kernel', 'plain_kernel', 8192);",
    )
    .unwrap();
    // Rows are inserted out of dispatch order: the reader must order by dispatch id.
    let mut rev: Vec<_> = rows.to_vec();
    rev.reverse();
    for (i, (q, s, d, k, g)) in rev.into_iter().enumerate() {
        conn.execute(
            "INSERT INTO rocpd_kernel_dispatch_0190a1b2c3d4 (id, guid, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id,
             stream_id, start, \"end\", private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y,
             workgroup_size_z, grid_size_x, grid_size_y, grid_size_z)
             VALUES (?1, 'g', 1, 4242, 77, 1, ?2, ?3, ?4, ?5, 1000, 2000, 0, 2048, 64, 1, 1, ?6, 1, 1)",
            rusqlite::params![i as i64 + 10, k, d, q, s, g],
        )
        .unwrap();
    }
    path
}

/// BASE as rocpd rows: queue 1 = capture queue 5 (streams 1 and 2), queue 2 = queue 9 (stream 3).
const BASE_ROWS: &[(i64, i64, i64, i64, i64)] = &[
    (1, 1, 1, 1, 1024),
    (1, 2, 2, 2, 256),
    (2, 3, 3, 2, 512),
    (1, 1, 4, 1, 1024),
    (2, 3, 5, 1, 2048),
];

#[test]
fn a_rocpd_database_with_several_queues_and_streams_diffs_same_against_the_equivalent_capture_at_every_level()
 {
    let cap = capture("base", BASE);
    let db = rocpd_db("base", BASE_ROWS);
    levels(
        &cap,
        &db,
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    levels(
        &db,
        &cap,
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    let o = softgpu(&[
        "diff".as_ref(),
        cap.as_os_str(),
        db.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["b"]["kind"], "rocpd", "{v}");
    assert_eq!(v["result"]["queues_b"], 2, "{v}");
    assert_eq!(v["result"]["dispatches_b"], 5, "{v}");
}

#[test]
fn a_rocpd_database_diffs_different_where_it_must() {
    let cap = capture("base2", BASE);
    // Another grid on one dispatch: only exact sees it.
    let mut grid = BASE_ROWS.to_vec();
    grid[0].4 = 4096;
    let db = rocpd_db("grid", &grid);
    levels(
        &cap,
        &db,
        [("exact", 1), ("count", 0), ("order", 0), ("events", 0)],
    );
    // Two dispatches of queue 1 swapped: exact and order see it, count and events do not.
    let mut order = BASE_ROWS.to_vec();
    order[0].2 = 2;
    order[1].2 = 1;
    let db = rocpd_db("order", &order);
    levels(
        &cap,
        &db,
        [("exact", 1), ("count", 0), ("order", 1), ("events", 0)],
    );
    // One dispatch missing: all but events see it.
    let db = rocpd_db("missing", &BASE_ROWS[..4]);
    levels(
        &cap,
        &db,
        [("exact", 1), ("count", 1), ("order", 1), ("events", 0)],
    );
    // A kernel the capture never dispatched: every level sees it.
    let mut other = BASE_ROWS.to_vec();
    other[4].3 = 99;
    let db = rocpd_db("other", &other);
    let o = diff(&cap, &db, "events");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("kernel_id 99"), "{}", text(&o));
}

#[test]
fn a_rocpd_database_with_only_its_uuid_suffixed_tables_is_read_through_their_union() {
    let cap = capture("uuidonly", BASE);
    // One uuid, plain views dropped: the same dispatches as with the views.
    let db = rocpd_db("uuidonly", BASE_ROWS);
    {
        let conn = Connection::open(&db).unwrap();
        for t in [
            "rocpd_metadata",
            "rocpd_string",
            "rocpd_info_agent",
            "rocpd_info_queue",
            "rocpd_info_stream",
            "rocpd_info_kernel_symbol",
            "rocpd_kernel_dispatch",
        ] {
            conn.execute_batch(&format!("DROP VIEW {t}")).unwrap();
        }
    }
    levels(
        &cap,
        &db,
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    // The file is opened read-only: the temporary views leave no trace in it.
    let conn = Connection::open(&db).unwrap();
    let views: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'view'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(views, 0);
    // A second uuid's tables holding the last dispatch (as when two table sets
    // share a file): read as the union of both sets.
    let u2 = "_0190ffffffff";
    conn.execute_batch(&format!(
        "CREATE TABLE rocpd_metadata{u2} AS SELECT * FROM rocpd_metadata{U} WHERE 0;
         INSERT INTO rocpd_metadata{u2} (id, tag, value) VALUES (100, 'schema_version', '3');
         CREATE TABLE rocpd_kernel_dispatch{u2} AS SELECT * FROM rocpd_kernel_dispatch{U} WHERE dispatch_id = 5;
         DELETE FROM rocpd_kernel_dispatch{U} WHERE dispatch_id = 5;"
    ))
    .unwrap();
    drop(conn);
    levels(
        &cap,
        &db,
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
    // Without the second set, one dispatch is missing: the union is what is read.
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(&format!("DROP TABLE rocpd_kernel_dispatch{u2}"))
        .unwrap();
    drop(conn);
    levels(
        &cap,
        &db,
        [("exact", 1), ("count", 1), ("order", 1), ("events", 0)],
    );
}

fn assert_error(path: &Path, want: &str) {
    let cap = capture("err", BASE);
    let o = diff(&cap, path, "exact");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains(want), "want {want:?} in {t}");
    assert!(!t.contains("panicked"), "{t}");
}

#[test]
fn a_rocpd_database_of_an_unknown_schema_version_is_a_clear_error_with_exit_2() {
    for v in ["2", "4", "3.1.0"] {
        let path = dir().join(format!("v{v}.db"));
        let _ = std::fs::remove_file(&path);
        let conn = Connection::open(&path).unwrap();
        rocpd_schema(&conn, v);
        drop(conn);
        assert_error(
            &path,
            &format!("unsupported rocpd schema: schema_version \"{v}\""),
        );
    }
}

#[test]
fn an_older_rpd_database_and_a_foreign_sqlite_database_are_clear_errors_with_exit_2() {
    let rpd = dir().join("rpd.db");
    let _ = std::fs::remove_file(&rpd);
    Connection::open(&rpd)
        .unwrap()
        .execute_batch("CREATE TABLE rocpd_op (id INTEGER); CREATE TABLE rocpd_api (id INTEGER);")
        .unwrap();
    assert_error(&rpd, "rocmProfileData");
    let other = dir().join("foreign.db");
    let _ = std::fs::remove_file(&other);
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER);")
        .unwrap();
    assert_error(&other, "not a rocpd database");
}

#[test]
fn malformed_rocpd_databases_get_typed_errors_and_never_a_panic() {
    // A NULL grid size.
    let db = rocpd_db("null", BASE_ROWS);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "UPDATE rocpd_kernel_dispatch_0190a1b2c3d4 SET grid_size_y = NULL WHERE id = 12",
        )
        .unwrap();
    assert_error(&db, "row id 12: column grid_size_y is NULL");
    // A negative workgroup size.
    let db = rocpd_db("neg", BASE_ROWS);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "UPDATE rocpd_kernel_dispatch_0190a1b2c3d4 SET workgroup_size_x = -1 WHERE id = 11",
        )
        .unwrap();
    assert_error(&db, "column workgroup_size_x: negative");
    // A view that fails (one that never ends is the step bound's test below).
    let db = rocpd_db("badview", BASE_ROWS);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "DROP VIEW rocpd_kernel_dispatch; CREATE VIEW rocpd_kernel_dispatch AS SELECT * FROM no_such_table;",
        )
        .unwrap();
    assert_error(&db, "SQLite");
    // Cut short: the header survives, the pages do not.
    let db = rocpd_db("cut", BASE_ROWS);
    let bytes = std::fs::read(&db).unwrap();
    std::fs::write(&db, &bytes[..bytes.len().min(1500)]).unwrap();
    let cap = capture("cutcap", BASE);
    let o = diff(&cap, &db, "exact");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("rocpd.db") || text(&o).contains("cut.db"),
        "{}",
        text(&o)
    );
    // Garbage after the magic.
    let junk = dir().join("junk.db");
    let mut b = b"SQLite format 3\0".to_vec();
    b.extend(std::iter::repeat_n(0xa5u8, 4096));
    std::fs::write(&junk, b).unwrap();
    let o = diff(&cap, &junk, "exact");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
}

fn write_rocpd(cap: &Path, name: &str) -> PathBuf {
    let out = dir().join(format!("{name}.db"));
    let o = softgpu(&[
        "inspect".as_ref(),
        cap.as_os_str(),
        "--format".as_ref(),
        "rocpd".as_ref(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    out
}

/// A row of the `kernels` query below.
type KernelRow = (
    String,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    String,
    String,
);

#[test]
fn a_written_rocpd_database_read_back_through_sql_gives_the_captures_dispatches() {
    let cap = capture("out", BASE);
    let db = write_rocpd(&cap, "written");
    let conn = Connection::open(&db).unwrap();
    let mut st = conn
        .prepare(
            "SELECT name, queue, agent_type, grid_x, grid_y, grid_z, workgroup_x, lds_size, scratch_size,
                    vgpr_count, accum_vgpr_count, sgpr_count, static_lds_size, category, K.extdata
             FROM kernels JOIN rocpd_kernel_dispatch K USING (id) ORDER BY kernels.dispatch_id",
        )
        .unwrap();
    let rows: Vec<KernelRow> = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
                r.get(10)?,
                r.get(11)?,
                r.get(12)?,
                r.get(13)?,
                r.get(14)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), BASE.len());
    for (row, &(q, ko, grid, rejected)) in rows.iter().zip(BASE) {
        let (name, regs) = if ko == VECADD {
            (VECADD_NAME, (8, 0, 16, 0))
        } else {
            ("plain_kernel", (4, 2, 24, 2048))
        };
        assert_eq!(row.0, name);
        assert_eq!(row.1, format!("HSA queue {q}"));
        assert_eq!(row.2, "GPU");
        assert_eq!((row.3, row.4, row.5, row.6), (i64::from(grid), 1, 1, 64));
        assert_eq!((row.7, row.8), (2048, 16));
        assert_eq!((row.9, row.10, row.11, row.12), regs);
        assert_eq!(row.13, "KERNEL_DISPATCH");
        let ext: serde_json::Value = serde_json::from_str(&row.14).unwrap();
        assert_eq!(
            ext["status"],
            if rejected { "rejected" } else { "validated" },
            "{ext}"
        );
    }
    let meta = |tag: &str| -> String {
        conn.query_row(
            "SELECT value FROM rocpd_metadata WHERE tag = ?1",
            [tag],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(meta("schema_version"), "3");
    assert!(meta("softgpu_execution").starts_with("no kernel ran"));
    assert!(meta("softgpu_timestamps").contains("not a GPU's"));
    let args: i64 = conn
        .query_row("SELECT count(*) FROM rocpd_arg", [], |r| r.get(0))
        .unwrap();
    assert_eq!(args, 0, "no kernel arguments are invented");
    // And the written database diffs SAME against its capture at every level.
    levels(
        &cap,
        &db,
        [("exact", 0), ("count", 0), ("order", 0), ("events", 0)],
    );
}

/// rocprofiler-sdk's data and summary views, by name (its marker views file defines none).
const ROCPROFV3_VIEWS: &[&str] = &[
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

#[test]
fn every_rocprofv3_view_selects_on_a_written_database_and_the_kernel_views_give_the_captures_dispatches()
 {
    let cap = capture("views", BASE);
    let db = write_rocpd(&cap, "views");
    let conn = Connection::open(&db).unwrap();
    let views: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for want in ROCPROFV3_VIEWS {
        assert!(
            views.iter().any(|v| v == want),
            "no view {want} in {views:?}"
        );
    }
    // Every view, the plain-name table views included, selects without error.
    for v in &views {
        let mut st = conn
            .prepare(&format!("SELECT * FROM \"{v}\""))
            .unwrap_or_else(|e| panic!("view {v}: {e}"));
        let mut rows = st.query([]).unwrap();
        while rows
            .next()
            .unwrap_or_else(|e| panic!("view {v}: {e}"))
            .is_some()
        {}
    }
    let count = |q: &str| -> i64 { conn.query_row(q, [], |r| r.get(0)).unwrap() };
    let vecadd = BASE.iter().filter(|e| e.1 == VECADD).count() as i64;
    let plain = BASE.len() as i64 - vecadd;
    assert_eq!(count("SELECT count(*) FROM kernels"), BASE.len() as i64);
    for view in ["top_kernels", "top"] {
        let calls = |name: &str| -> i64 {
            conn.query_row(
                &format!("SELECT total_calls FROM {view} WHERE name = ?1"),
                [name],
                |r| r.get(0),
            )
            .unwrap_or_else(|e| panic!("{view} {name}: {e}"))
        };
        assert_eq!(calls(VECADD_NAME), vecadd, "{view}");
        assert_eq!(calls("plain_kernel"), plain, "{view}");
        assert_eq!(count(&format!("SELECT count(*) FROM {view}")), 2, "{view}");
    }
    // busy: one row per agent that had dispatches (the capture's one GPU).
    assert_eq!(
        count(
            "SELECT count(*) FROM busy JOIN rocpd_info_agent A ON A.id = busy.agent_id WHERE busy.type = 'GPU'"
        ),
        1
    );
    // kernel_symbols: both kernels, with their names in the rocprofv3 extdata fields.
    let names: Vec<(String, String, String)> = conn
        .prepare(
            "SELECT display_name, demangled_kernel_name, truncated_kernel_name FROM kernel_symbols ORDER BY kernel_object",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        names,
        [
            (VECADD_NAME.into(), VECADD_NAME.into(), "vecAdd".into()),
            (
                "plain_kernel".into(),
                "plain_kernel".into(),
                "plain_kernel".into()
            ),
        ]
    );
    assert_eq!(
        count("SELECT count(*) FROM kernels K JOIN kernel_symbols S ON S.id = K.kernel_id"),
        BASE.len() as i64
    );
    assert_eq!(count("SELECT count(*) FROM processes WHERE pid = 4242"), 1);
    assert!(count("SELECT count(*) FROM threads WHERE pid = 4242") >= 1);
    assert!(count("SELECT count(*) FROM code_objects") >= 1);
    // The metadata's uuid is the tables' suffix, leading `_` included, as
    // rocprofiler-sdk writes it (rocpd's importer strips it from table names).
    let uuid: String = conn
        .query_row(
            "SELECT value FROM rocpd_metadata WHERE tag = 'uuid'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(uuid.starts_with('_'), "{uuid}");
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'rocpd_kernel_dispatch{uuid}'"
        )),
        1
    );
    // Views over tables a capture never fills select nothing (nothing is invented).
    for v in [
        "regions",
        "samples",
        "memory_copies",
        "memory_allocations",
        "pmc_events",
        "counters_collection",
    ] {
        assert_eq!(count(&format!("SELECT count(*) FROM {v}")), 0, "{v}");
    }
}

#[test]
fn the_real_sqlite3_cli_reads_a_written_rocpd_database() {
    let cap = capture("cli", BASE);
    let db = write_rocpd(&cap, "sqlite3");
    let o = Command::new("sqlite3")
        .arg(&db)
        .arg("PRAGMA integrity_check; PRAGMA foreign_key_check; SELECT name || ',' || grid_x FROM kernels ORDER BY dispatch_id;")
        .output()
        .expect("sqlite3 not found: run ./scripts/setup --tests");
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let want = format!(
        "ok\n{VECADD_NAME},1024\nplain_kernel,256\nplain_kernel,512\n{VECADD_NAME},1024\n{VECADD_NAME},2048\n"
    );
    assert_eq!(out, want);
}

#[test]
fn inspect_format_stats_gives_one_row_per_kernel_without_durations() {
    let cap = capture("stats", BASE);
    let o = softgpu(&[
        "inspect".as_ref(),
        cap.as_os_str(),
        "--format".as_ref(),
        "stats".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "Name,Calls,Grid_Sizes,Workgroup_Sizes,Group_Segment_Sizes,Private_Segment_Sizes,Rejected,Findings",
            &format!("\"{VECADD_NAME}\",3,1024x1x1;2048x1x1,64x1x1,2048,16,0,0"),
            "plain_kernel,2,256x1x1;512x1x1,64x1x1,2048,16,1,1",
        ]
    );
    assert!(!out.contains("Duration") && !out.contains("Ns"));
}

#[test]
fn inspect_output_writes_the_report_to_a_file_and_never_over_its_own_capture() {
    let cap = capture("outfile", BASE);
    let out = dir().join("outfile_stats.csv");
    let o = softgpu(&[
        "inspect".as_ref(),
        cap.as_os_str(),
        "--format".as_ref(),
        "stats".as_ref(),
        "--output".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(o.stdout.is_empty());
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("Name,Calls,")
    );
    let before = std::fs::read(&cap).unwrap();
    let o = softgpu(&[
        "inspect".as_ref(),
        cap.as_os_str(),
        "--format".as_ref(),
        "rocpd".as_ref(),
        "--output".as_ref(),
        cap.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("is the capture being read"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&cap).unwrap(), before);
    let o = softgpu(&[
        "inspect".as_ref(),
        cap.as_os_str(),
        "--format".as_ref(),
        "rocpd".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--output FILE"), "{}", text(&o));
}

#[test]
fn a_rocpd_view_that_never_ends_is_stopped_by_the_step_bound() {
    let db = dir().join("endless.db");
    let _ = std::fs::remove_file(&db);
    let conn = Connection::open(&db).unwrap();
    rocpd_schema(&conn, "3");
    conn.execute_batch(
        "DROP VIEW rocpd_kernel_dispatch;
         CREATE VIEW rocpd_kernel_dispatch AS
           WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
           SELECT x AS id, 'g' AS guid, 1 AS pid, 1 AS agent_id, 1 AS queue_id, x AS dispatch_id,
                  1 AS grid_size_x, 1 AS grid_size_y, 1 AS grid_size_z, 1 AS workgroup_size_x,
                  1 AS workgroup_size_y, 1 AS workgroup_size_z, 0 AS group_segment_size, 1 AS kernel_id
           FROM c WHERE x < 0;",
    )
    .unwrap();
    drop(conn);
    let e = softgpu_hsa::rocpd::read::read_trace_bounded(&db, 5_000_000).unwrap_err();
    assert!(
        matches!(e, softgpu_hsa::rocpd::RocpdError::TooLarge(_)),
        "{e}"
    );
    assert!(e.to_string().contains("SQLite steps"), "{e}");
}
