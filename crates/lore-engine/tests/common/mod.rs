//! Helpers shared by the engine's integration tests.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lore_core::Ts;
use lore_engine::Engine;
use lore_store::SqliteStore;

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

/// An engine over a real SQLite file in a fresh temporary folder.
pub fn file_engine(clock: &TestClock) -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("lore.db")).expect("open sqlite");
    let shared = clock.0.clone();
    let engine = Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()));
    (engine, dir)
}

/// An engine over a private in-memory SQLite database (fast, for property tests).
pub fn memory_engine(clock: &TestClock) -> Engine {
    let store = SqliteStore::open_in_memory(std::env::temp_dir().join("lore-test-blobs"))
        .expect("open sqlite");
    let shared = clock.0.clone();
    Engine::new(Box::new(store)).with_clock(Arc::new(move || *shared.lock().unwrap()))
}

/// One engine per available backend: SQLite always, PostgreSQL when `LORE_TEST_PG_URL` is set
/// (a fresh database each). The folder keeps SQLite's file and the blobs alive.
pub fn backend_engines(
    clock: &TestClock,
    test: &str,
) -> Vec<(&'static str, Engine, tempfile::TempDir)> {
    let (sqlite, dir) = file_engine(clock);
    let mut engines = vec![("sqlite", sqlite, dir)];
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
