//! Helpers shared by the engine's integration tests.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lore_core::Ts;
use lore_engine::Engine;
use lore_store::{LogStore, SqliteStore};

/// A settable clock for tests.
#[derive(Clone)]
pub struct TestClock(pub Arc<Mutex<Ts>>);

impl TestClock {
    pub fn new(at: &str) -> TestClock {
        TestClock(Arc::new(Mutex::new(
            Ts::parse(at).expect("valid test time"),
        )))
    }

    pub fn set(&self, at: Ts) {
        *self.0.lock().unwrap() = at;
    }
}

fn clocked(store: Box<dyn lore_store::Store>, clock: &TestClock) -> Engine {
    let shared = clock.0.clone();
    Engine::new(store).with_clock(Arc::new(move || *shared.lock().unwrap()))
}

/// An engine over Lore's embedded store (the log store) on a real SQLite file in a fresh temporary
/// folder.
pub fn file_engine(clock: &TestClock) -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = LogStore::open(&dir.path().join("lore.db")).expect("open the log store");
    (clocked(Box::new(store), clock), dir)
}

/// An engine over the tables' store (`SqliteStore`) on a real SQLite file.
pub fn tables_engine(clock: &TestClock) -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("lore.db")).expect("open sqlite");
    (clocked(Box::new(store), clock), dir)
}

/// An engine over the log store on a private in-memory SQLite database (fast, for property tests).
pub fn memory_engine(clock: &TestClock) -> Engine {
    let store = LogStore::open_in_memory(std::env::temp_dir().join("lore-test-blobs"))
        .expect("open the log store");
    clocked(Box::new(store), clock)
}

/// The same over the tables' store.
pub fn memory_tables_engine(clock: &TestClock) -> Engine {
    let store = SqliteStore::open_in_memory(std::env::temp_dir().join("lore-test-blobs"))
        .expect("open sqlite");
    clocked(Box::new(store), clock)
}

/// One engine per available backend: the log store and the tables' store on SQLite files always,
/// PostgreSQL when `LORE_TEST_PG_URL` is set (a fresh database each). The folder keeps the file
/// and the blobs alive.
pub fn backend_engines(
    clock: &TestClock,
    test: &str,
) -> Vec<(&'static str, Engine, tempfile::TempDir)> {
    let (log, dir) = file_engine(clock);
    let (tables, tables_dir) = tables_engine(clock);
    let mut engines = vec![("log", log, dir), ("sqlite", tables, tables_dir)];
    if let Some(base) = lore_store::testing::pg_test_url(test) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = lore_store::PostgresStore::open(
            &lore_store::testing::fresh_pg_database(&base),
            dir.path(),
        )
        .expect("open postgres");
        let shared = clock.0.clone();
        let engine =
            Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()));
        engines.push(("postgres", engine, dir));
    }
    engines
}

pub fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/meetings")
}

/// The example meeting bundles, in file order (the order their names give: by date).
pub fn example_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples folder")
        .map(|entry| entry.expect("examples folder entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Fails with every violation when stored state differs from a rebuild from scratch, or the store
/// finds a problem in itself (`Store::integrity_problems`: on SQLite, its integrity and foreign-key
/// checks, the full-text index and the name keys).
pub fn assert_consistent(engine: &Engine, owner: &str, context: &str) {
    let mut problems = lore_engine::check_invariants(engine, owner).expect("invariant check runs");
    problems.extend(
        engine
            .store()
            .integrity_problems()
            .expect("integrity check runs"),
    );
    assert!(
        problems.is_empty(),
        "{context}: invariants violated:\n{}",
        problems.join("\n")
    );
}
