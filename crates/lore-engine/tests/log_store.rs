//! The log store's promises beyond the conformance suite, on the example meetings through the
//! engine: a reopened file, and another connection to the same file (another process), read exactly
//! the state the writes left, and a compacted log gives it back too (`lore-store`'s
//! `tests/log_store.rs` has the store-level cases).

mod common;

use lore_engine::{state_dump, Engine, SourceRef};
use lore_store::LogStore;
use serde_json::Value;

use common::{assert_consistent, example_files, TestClock};

const OWNER: &str = "alice";

fn open(path: &std::path::Path, clock: &TestClock) -> Engine {
    let shared = clock.0.clone();
    Engine::new(Box::new(LogStore::open(path).expect("open the log store")))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()))
}

fn ingest_examples(engine: &Engine) {
    for file in example_files() {
        engine
            .ingest_bundle_file(OWNER, &file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    }
}

/// Every entity's full view, in order: what `state_dump` leaves out of what a user reads.
fn views(engine: &Engine) -> Value {
    let options = lore_engine::ShowOptions {
        history: true,
        include_provisional: true,
    };
    let entities = engine
        .list_entities_sorted(OWNER, lore_engine::EntitySort::Name)
        .unwrap();
    Value::Array(
        entities
            .iter()
            .map(|e| serde_json::to_value(engine.show(OWNER, &e.id, &options).unwrap()).unwrap())
            .collect(),
    )
}

#[test]
fn a_reopened_store_reads_what_the_writes_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let engine = open(&path, &clock);
    ingest_examples(&engine);
    let meeting = engine.list_meetings(OWNER).unwrap()[0].id.clone();
    engine
        .delete_source(OWNER, SourceRef::Meeting(&meeting))
        .unwrap();
    let (dump, shown) = (state_dump(&engine, OWNER).unwrap(), views(&engine));
    drop(engine);

    let reopened = open(&path, &clock);
    assert_eq!(state_dump(&reopened, OWNER).unwrap(), dump);
    assert_eq!(views(&reopened), shown);
    assert_consistent(&reopened, OWNER, "reopened");
}

/// Two stores on one file take turns like two processes: each sees the other's committed writes
/// (ingests, a deletion, a manual value) at its next transaction, reads and writes alike.
#[test]
fn another_connection_sees_every_committed_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let (first, second) = (open(&path, &clock), open(&path, &clock));
    let files = example_files();
    let (half, rest) = files.split_at(files.len() / 2);
    for file in half {
        first.ingest_bundle_file(OWNER, file).unwrap();
    }
    // The second store's first read loads the state; its writes start from it.
    assert_eq!(
        state_dump(&second, OWNER).unwrap(),
        state_dump(&first, OWNER).unwrap()
    );
    for file in rest {
        second.ingest_bundle_file(OWNER, file).unwrap();
    }
    let meeting = first.list_meetings(OWNER).unwrap()[0].id.clone();
    first
        .delete_source(OWNER, SourceRef::Meeting(&meeting))
        .unwrap();
    let person = second
        .list_entities_sorted(OWNER, lore_engine::EntitySort::Name)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == lore_core::EntityKind::Person)
        .unwrap();
    second
        .apply_override(OWNER, &person.id, "located_in", "Lisbon")
        .unwrap();
    let expected = state_dump(&second, OWNER).unwrap();
    assert_eq!(state_dump(&first, OWNER).unwrap(), expected);
    assert_eq!(views(&first), views(&second));
    assert_consistent(&first, OWNER, "first connection");

    // And a third, fresh, agrees with both.
    let third = open(&path, &clock);
    assert_eq!(state_dump(&third, OWNER).unwrap(), expected);
}

/// A compacted log (its rows, led by a reset) replays to the same state, in this store, in a
/// reopened one and in another connection that had read the log before the compaction.
#[test]
fn a_compacted_log_gives_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let store = LogStore::open(&path).unwrap();
    let shared = clock.0.clone();
    let engine = Engine::new(Box::new(store))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()));
    let watcher = open(&path, &clock);
    ingest_examples(&engine);
    let dump = state_dump(&engine, OWNER).unwrap();
    assert_eq!(state_dump(&watcher, OWNER).unwrap(), dump);

    let compacting = LogStore::open(&path).unwrap();
    compacting.compact(OWNER).unwrap();
    let (since, base) = compacting.log_size(OWNER).unwrap();
    assert_eq!(since, 0, "a compaction leaves no entry after its own");
    assert!(base > 0);
    drop(compacting);
    assert_eq!(state_dump(&watcher, OWNER).unwrap(), dump);
    assert_eq!(state_dump(&engine, OWNER).unwrap(), dump);
    // Writes go on after it, and a reopened store replays both parts.
    let person = engine
        .list_entities_sorted(OWNER, lore_engine::EntitySort::Name)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == lore_core::EntityKind::Person)
        .unwrap();
    engine
        .apply_override(OWNER, &person.id, "has_title", "Archivist")
        .unwrap();
    let after = state_dump(&engine, OWNER).unwrap();
    drop(engine);
    assert_eq!(state_dump(&open(&path, &clock), OWNER).unwrap(), after);
    assert_eq!(state_dump(&watcher, OWNER).unwrap(), after);
    assert_consistent(&watcher, OWNER, "after compaction");
}

/// A log that grows past twice the rows it describes is compacted by the write that crossed the
/// line: what it holds then is the rows (and later writes), and a reopened store reads the same.
#[test]
fn a_growing_log_compacts_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let store = LogStore::open(&path).unwrap().compact_after(100);
    let shared = clock.0.clone();
    let engine = Engine::new(Box::new(store))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()));
    ingest_examples(&engine);
    for meeting in engine.list_meetings(OWNER).unwrap().iter().take(3) {
        engine
            .delete_source(OWNER, SourceRef::Meeting(&meeting.id))
            .unwrap();
    }
    let dump = state_dump(&engine, OWNER).unwrap();
    drop(engine);
    let reopened = LogStore::open(&path).unwrap();
    let (_, compacted) = {
        use lore_store::Store;
        reopened.read(OWNER, &mut |_| Ok(())).unwrap();
        reopened.log_size(OWNER).unwrap()
    };
    assert!(compacted > 0, "the log was never compacted");
    let shared = clock.0.clone();
    let reopened = Engine::new(Box::new(reopened))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()));
    assert_eq!(state_dump(&reopened, OWNER).unwrap(), dump);
    assert_consistent(&reopened, OWNER, "compacted");
}

/// Closing a store that wrote compacts a log grown past its rows; closing one that only read writes
/// nothing, however long the log it replayed.
#[test]
fn closing_compacts_after_writes_only() {
    use lore_store::Store;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    // Writes that never compact on their own (the threshold is out of reach).
    let writing = LogStore::open(&path).unwrap().compact_after(u64::MAX);
    let shared = clock.0.clone();
    let engine = Engine::new(Box::new(writing))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()));
    ingest_examples(&engine);
    drop(engine);
    let entries = || -> (u64, u64) {
        let store = LogStore::open(&path).unwrap().compact_after(10);
        store.read(OWNER, &mut |_| Ok(())).unwrap();
        store.log_size(OWNER).unwrap()
    };
    let (since, compacted) = entries();
    assert!(since > 0 && compacted == 0, "{since} {compacted}");
    // The readers above closed without writing; one that writes closes by compacting.
    assert_eq!(entries(), (since, compacted));
    let shared = clock.0.clone();
    let engine = Engine::new(Box::new(LogStore::open(&path).unwrap().compact_after(10)))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()));
    let person = engine
        .list_entities_sorted(OWNER, lore_engine::EntitySort::Name)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == lore_core::EntityKind::Person)
        .unwrap();
    engine
        .apply_override(OWNER, &person.id, "located_in", "Porto")
        .unwrap();
    drop(engine);
    let (since, compacted) = entries();
    assert!(since == 0 && compacted > 0, "{since} {compacted}");
    assert_consistent(&open(&path, &clock), OWNER, "compacted on close");
}
