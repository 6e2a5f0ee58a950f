//! The SQLite reader's memo of graph reads (issue 8) must never change an answer: graphs read through
//! a warm memo equal graphs read by a fresh store (empty memo) on the same file, before and after
//! writes from this engine and from another connection, and nothing crosses owners (L20).

mod common;

use std::sync::Arc;

use common::{examples_dir, TestClock};
use lore_engine::{Engine, GraphOptions, GraphView, SourceRef};
use lore_store::SqliteStore;

const OWNER: &str = "alice";
const OTHER: &str = "bob";

fn open(path: &std::path::Path, clock: &TestClock) -> Engine {
    let store = SqliteStore::open(path).expect("open sqlite");
    let shared = clock.0.clone();
    Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()))
}

/// Every entity's 1-hop and 2-hop graph (bounded and unbounded), in a stable order.
fn all_graphs(engine: &Engine, owner: &str) -> Vec<(String, u8, usize, Option<GraphView>)> {
    let mut graphs = Vec::new();
    for entity in engine.list_entities(owner).unwrap() {
        for (hops, limit) in [(1, 50), (2, 50), (2, 500), (1, 3)] {
            let options = GraphOptions {
                hops,
                limit,
                valid_at: None,
            };
            graphs.push((
                entity.id.clone(),
                hops,
                limit,
                engine.graph(owner, &entity.id, &options).ok(),
            ));
        }
    }
    graphs
}

fn ingest_examples(engine: &Engine, owner: &str, range: std::ops::Range<usize>) {
    let mut files: Vec<_> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    for file in &files[range] {
        engine.ingest_bundle_file(owner, file).unwrap();
    }
}

#[test]
fn graphs_through_the_memo_equal_graphs_from_a_fresh_store() {
    let clock = TestClock::new("2026-11-20T12:00:00Z");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let engine = open(&path, &clock);
    ingest_examples(&engine, OWNER, 0..6);

    // Warm the memo, then read everything again through it.
    let first = all_graphs(&engine, OWNER);
    assert!(first
        .iter()
        .any(|(_, _, _, g)| g.as_ref().is_some_and(|g| g.nodes.len() > 3)));
    assert_eq!(all_graphs(&engine, OWNER), first);
    assert_eq!(all_graphs(&open(&path, &clock), OWNER), first);

    // A write by this engine (new meetings) invalidates the memo.
    ingest_examples(&engine, OWNER, 6..10);
    let after_ingest = all_graphs(&engine, OWNER);
    assert_ne!(after_ingest, first);
    assert_eq!(all_graphs(&open(&path, &clock), OWNER), after_ingest);

    // So does a write by another connection to the same file (another process, say).
    let other = open(&path, &clock);
    let meeting = other.list_meetings(OWNER).unwrap()[2].id.clone();
    other
        .delete_source(OWNER, SourceRef::Meeting(&meeting))
        .unwrap();
    let after_delete = all_graphs(&engine, OWNER);
    assert_ne!(after_delete, after_ingest);
    assert_eq!(all_graphs(&open(&path, &clock), OWNER), after_delete);
}

#[test]
fn the_memo_keeps_owners_apart() {
    let clock = TestClock::new("2026-11-20T12:00:00Z");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let engine = open(&path, &clock);
    ingest_examples(&engine, OWNER, 0..4);
    let graphs = all_graphs(&engine, OWNER);
    // The other owner owns nothing: the same ids, read through the warm memo, are not found.
    for (id, hops, limit, _) in &graphs {
        let options = GraphOptions {
            hops: *hops,
            limit: *limit,
            valid_at: None,
        };
        assert!(engine.graph(OTHER, id, &options).is_err(), "{id} leaked");
    }
    assert!(all_graphs(&engine, OTHER).is_empty());
}
