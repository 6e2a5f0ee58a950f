//! `EXPLAIN QUERY PLAN` of every hot query (PERF-NOTES): each must use its intended index and none may
//! scan the claims, evidence or status-history tables (or a whole index of them). The plans printed
//! here with `--nocapture` are the ones quoted in ARCHITECTURE.md.

use lore_store::{SqliteStore, HOT_QUERIES};
use rusqlite::Connection;

fn plan(connection: &Connection, sql: &str) -> Vec<String> {
    let mut statement = connection
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap_or_else(|e| panic!("cannot prepare {sql}: {e}"));
    let count = statement.parameter_count();
    let values: Vec<rusqlite::types::Value> = (0..count)
        .map(|_| rusqlite::types::Value::Text("x".into()))
        .collect();
    let rows = statement
        .query_map(rusqlite::params_from_iter(values), |row| {
            row.get::<_, String>(3)
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn hot_queries_use_their_indexes_and_never_scan_claims() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plans.db");
    drop(SqliteStore::open(&path).unwrap());
    let connection = Connection::open(&path).unwrap();
    let mut problems = Vec::new();
    for (name, sql, index) in HOT_QUERIES {
        let details = plan(&connection, sql);
        println!("-- {name}\n{}\n", details.join("\n"));
        if !details.iter().any(|d| d.contains(index)) {
            problems.push(format!("{name}: plan does not use {index}"));
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
