//! The backend conformance suite on SQLite: a real file (WAL) and an in-memory database.

use lore_store::{conformance, SqliteStore, Store};

#[test]
fn sqlite_file_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let counter = std::cell::Cell::new(0);
    conformance::run_all(&|| {
        counter.set(counter.get() + 1);
        Box::new(
            SqliteStore::open(&dir.path().join(format!("db{}.sqlite", counter.get()))).unwrap(),
        ) as Box<dyn Store>
    });
}

#[test]
fn sqlite_memory_passes_the_conformance_suite() {
    conformance::run_all(&|| {
        Box::new(SqliteStore::open_in_memory(std::env::temp_dir()).unwrap()) as Box<dyn Store>
    });
}

#[test]
fn migrations_are_versioned_and_reopening_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1);
    drop(store);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1);
    assert!(store.integrity_problems().unwrap().is_empty());
}
