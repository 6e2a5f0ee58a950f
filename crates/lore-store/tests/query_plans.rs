//! `EXPLAIN QUERY PLAN` of every hot query (PERF-NOTES): each must use its intended index and none may
//! scan the claims, evidence or status-history tables (or a whole index of them). The plans printed
//! here with `--nocapture` are the ones quoted in ARCHITECTURE.md.

use lore_store::{hot_queries, SqliteStore, PREWARM};
use rusqlite::Connection;

/// One column of what `explain` (`EXPLAIN QUERY PLAN` or `EXPLAIN`) prints for `sql`, every parameter
/// bound to a text.
fn explained(connection: &Connection, explain: &str, sql: &str, column: usize) -> Vec<String> {
    let mut statement = connection
        .prepare(&format!("{explain} {sql}"))
        .unwrap_or_else(|e| panic!("cannot prepare {sql}: {e}"));
    let count = statement.parameter_count();
    let values: Vec<rusqlite::types::Value> = (0..count)
        .map(|_| rusqlite::types::Value::Text("x".into()))
        .collect();
    let rows = statement
        .query_map(rusqlite::params_from_iter(values), |row| {
            row.get::<_, String>(column)
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// The plan's lines.
fn plan(connection: &Connection, sql: &str) -> Vec<String> {
    explained(connection, "EXPLAIN QUERY PLAN", sql, 3)
}

#[test]
fn hot_queries_use_their_indexes_and_never_scan_claims() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plans.db");
    drop(SqliteStore::open(&path).unwrap());
    let connection = Connection::open(&path).unwrap();
    let mut problems = Vec::new();
    for (name, sql, index) in hot_queries() {
        let details = plan(&connection, &sql);
        println!("-- {name}\n{}\n", details.join("\n"));
        if !details.iter().any(|d| d.contains(index)) {
            problems.push(format!("{name}: plan does not use {index}"));
        }
        // The entity page's reads, and the deadlines' claims, come out of their indexes in the
        // order they are used.
        let shown = [
            "projection: active claims",
            "projection: resource links",
            "deadlines: claims by predicate",
            "deletion: claims by id",
        ];
        if shown.contains(&name) && details.iter().any(|d| d.contains("TEMP B-TREE")) {
            problems.push(format!("{name}: sorts its rows ({})", details.join("; ")));
        }
        // The reads of a subject's or a slot's claims' rows loop over the claims: a list of their
        // ids in a temporary b-tree (`claim IN (SELECT ...)`) cost one insert per claim of a hub.
        let loops = [
            "topic weight: observation times",
            "entity rebuild: evidence times and names",
            "entity view: the subject's evidence",
            "settle: a slot's evidence",
            "settle: a slot's status history",
            "settle: a slot's supersedes links",
        ];
        if loops.contains(&name)
            && (details.iter().any(|d| d.contains("LIST SUBQUERY"))
                || !details.iter().any(|d| d.starts_with("SEARCH c USING")))
        {
            problems.push(format!(
                "{name}: does not loop over the claims ({})",
                details.join("; ")
            ));
        }
        for detail in &details {
            for table in [
                "claims",
                "evidence",
                "claim_status_history",
                "tasks",
                "search_docs",
            ] {
                let full_scan = detail.starts_with(&format!("SCAN {table}"))
                    || detail == &format!("SCAN {table}");
                if full_scan {
                    problems.push(format!("{name}: full scan of {table} ({detail})"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The prewarm walks must each read the b-tree they are meant to map (a `count(*)`, for one, would walk
/// the smallest index instead, whatever `INDEXED BY` says).
#[test]
fn prewarm_walks_the_per_entity_btrees() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prewarm.db");
    let store = SqliteStore::open(&path).unwrap();
    // The walks, then the statement listing the owners whose entity pages it builds (none here).
    assert_eq!(
        lore_store::Store::prewarm(&store).unwrap(),
        PREWARM.len() + 1
    );
    drop(store);
    let connection = Connection::open(&path).unwrap();
    for (sql, expected) in PREWARM {
        let details = plan(&connection, sql);
        assert_eq!(details, vec![expected.to_string()], "{sql}");
    }
}

/// The build flags of `.cargo/config.toml` reach the bundled SQLite: without them every allocation
/// takes a process-wide mutex for memory statistics.
#[test]
fn sqlite_is_built_without_memory_statistics() {
    let connection = Connection::open_in_memory().unwrap();
    let options: Vec<String> = connection
        .prepare("PRAGMA compile_options")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "{options:?}"
    );
    assert!(
        !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
        "{options:?}"
    );
}

#[test]
fn default_statistics_fill_gaps_and_never_replace_measured_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stats.db");
    drop(SqliteStore::open(&path).unwrap());
    let connection = Connection::open(&path).unwrap();
    let stat = |connection: &Connection, index: &str| -> Option<String> {
        connection
            .query_row(
                "SELECT stat FROM sqlite_stat1 WHERE idx = ?1",
                [index],
                |row| row.get(0),
            )
            .ok()
    };
    assert_eq!(
        stat(&connection, "evidence_by_claim").as_deref(),
        Some("1000000 1000000 20 8"),
        "owner keeps every row, claim narrows, observation time narrows further"
    );
    connection
        .execute_batch(
            "UPDATE sqlite_stat1 SET stat = '42 42 3' WHERE idx = 'evidence_by_claim';
             DELETE FROM sqlite_stat1 WHERE idx = 'claims_by_predicate';",
        )
        .unwrap();
    drop(connection);
    drop(SqliteStore::open(&path).unwrap());
    let connection = Connection::open(&path).unwrap();
    assert_eq!(
        stat(&connection, "evidence_by_claim").as_deref(),
        Some("42 42 3")
    );
    assert!(stat(&connection, "claims_by_predicate").is_some());
}

/// Deleting a parent row makes SQLite look up its children by the foreign key's child columns; unless
/// an index leads with those columns, that is a scan of the whole child table per deleted row.
#[test]
fn every_foreign_key_leads_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.db");
    drop(SqliteStore::open(&path).unwrap());
    let connection = Connection::open(&path).unwrap();
    let tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut keys = 0;
    let mut missing = Vec::new();
    for table in &tables {
        // Each key's child columns, in key order.
        let mut by_key: std::collections::BTreeMap<i64, (String, Vec<String>)> = Default::default();
        let mut statement = connection
            .prepare(
                "SELECT id, \"table\", \"from\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
            )
            .unwrap();
        let rows = statement
            .query_map([table], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .unwrap();
        for row in rows {
            let (id, parent, column) = row.unwrap();
            by_key
                .entry(id)
                .or_insert_with(|| (parent, Vec::new()))
                .1
                .push(column);
        }
        // Every index's columns in order (a WITHOUT ROWID table's primary key is one of them).
        let indexes: Vec<Vec<String>> = connection
            .prepare("SELECT name FROM pragma_index_list(?1)")
            .unwrap()
            .query_map([table], |row| row.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .map(|index| {
                connection
                    .prepare("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")
                    .unwrap()
                    .query_map([&index], |row| row.get::<_, String>(0))
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            })
            .collect();
        for (parent, columns) in by_key.into_values() {
            keys += 1;
            let mut wanted = columns.clone();
            wanted.sort();
            let led = indexes.iter().any(|index| {
                let mut leading: Vec<String> = index.iter().take(columns.len()).cloned().collect();
                leading.sort();
                leading == wanted
            });
            if !led {
                missing.push(format!("{table} ({}) -> {parent}", columns.join(", ")));
            }
        }
    }
    assert!(keys >= 14, "only {keys} foreign keys found");
    assert!(
        missing.is_empty(),
        "foreign keys without an index: {missing:#?}"
    );
}

/// The opcodes of a statement's program, its triggers' programs included (`EXPLAIN` lists them).
fn opcodes(connection: &Connection, sql: &str) -> Vec<String> {
    explained(connection, "EXPLAIN", sql, 1)
}

/// A change of a search document queues it (`search_pending`) without copying anything into a
/// temporary b-tree: the queue's triggers test in their WHEN clause whether the document is queued
/// (schema_v8.sql). Written as `INSERT ... SELECT ... WHERE NOT EXISTS` over the queue itself, each
/// opened one per document changed (every segment of a meeting ingested or deleted).
#[test]
fn search_queue_triggers_open_no_temporary_btree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    drop(SqliteStore::open(&path).unwrap());
    let connection = Connection::open(&path).unwrap();
    for sql in [
        "INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body) \
         VALUES ('o', 'segment', 'm/s', 'm', 0, 0, 'scope', 'body')",
        "UPDATE search_docs SET body = 'other' WHERE doc = 1",
        "DELETE FROM search_docs WHERE doc = 1",
    ] {
        let program = opcodes(&connection, sql);
        assert!(
            program.iter().any(|op| op == "Program"),
            "{sql}: no trigger ran"
        );
        assert!(
            !program.iter().any(|op| op == "OpenEphemeral"),
            "{sql}: {program:?}"
        );
    }
}
