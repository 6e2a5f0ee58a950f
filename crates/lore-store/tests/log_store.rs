//! The backend conformance suite on the log store (Lore's embedded store), on a real file (WAL) and
//! an in-memory database, and what the log itself promises: a failed or panicking write leaves
//! nothing in memory, each store refuses the other's file, and a damaged log entry is an error
//! (the engine's `tests/log_store.rs` reopens files and shares them between connections).

use lore_store::{conformance, LogStore, SqliteStore, Store};

const OWNER: &str = "alice";

#[test]
fn log_store_file_passes_the_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let counter = std::cell::Cell::new(0);
    conformance::run_all(&|| {
        counter.set(counter.get() + 1);
        Box::new(LogStore::open(&dir.path().join(format!("db{}.sqlite", counter.get()))).unwrap())
            as Box<dyn Store>
    });
}

#[test]
fn log_store_memory_passes_the_conformance_suite() {
    conformance::run_all(&|| {
        Box::new(LogStore::open_in_memory(std::env::temp_dir()).unwrap()) as Box<dyn Store>
    });
}

/// A write that fails, or panics, halfway leaves memory as the database is: the next transaction
/// reads the state from before it.
#[test]
fn a_failed_or_panicking_write_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = LogStore::open(&path).unwrap();
    let sample = lore_store::conformance::sample_entity;
    store
        .write(OWNER, &mut |tx| tx.upsert_entity(&sample("e1")))
        .unwrap();
    let failed = store.write(OWNER, &mut |tx| {
        tx.upsert_entity(&sample("e2"))?;
        tx.delete_entity("e1")?;
        Err(lore_store::StoreError::Conflict("stop".into()))
    });
    assert!(failed.is_err());
    let panicked = store.write(OWNER, &mut |tx| {
        tx.upsert_entity(&sample("e3"))?;
        panic!("a bug in the middle of a write");
    });
    let message = panicked
        .expect_err("a panic is the write's error")
        .to_string();
    assert!(message.contains("a bug in the middle"), "{message}");
    let mut found = Vec::new();
    store
        .read(OWNER, &mut |tx| {
            found = tx.list_entities()?.into_iter().map(|e| e.id).collect();
            Ok(())
        })
        .unwrap();
    assert_eq!(found, vec!["e1".to_string()]);
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// A write's statements that answer nothing (a transcript's segments, a meeting's cascade, search
/// documents) run beside its work in memory; one that fails fails the write as if it had failed in
/// place, whether the work went on after it or ended with it, and the write leaves nothing behind.
#[test]
fn a_statement_failing_beside_the_write_fails_it_and_leaves_nothing_behind() {
    use lore_store::conformance::{sample_claim, sample_entity, sample_meeting, sample_segment};
    let dir = tempfile::tempdir().unwrap();
    let store = LogStore::open(&dir.path().join("lore.db")).unwrap();
    store
        .write(OWNER, &mut |tx| {
            tx.insert_meeting(&sample_meeting("m1"))?;
            tx.insert_segments(&[sample_segment("m1", "s1", 0, "the budget is fine")])?;
            tx.upsert_entity(&sample_entity("e1"))
        })
        .unwrap();
    let again = [sample_segment("m1", "s1", 0, "the budget is fine")];
    // The work goes on in memory after the failing statement, then reads a table.
    let read_after = store.write(OWNER, &mut |tx| {
        tx.insert_segments(&again)?;
        tx.upsert_entity(&sample_entity("e2"))?;
        tx.insert_claim(&sample_claim("c1", "e2"))?;
        tx.list_segments("m1").map(drop)
    });
    // The work ends right after it (its error shows when the write ends), and a later statement
    // sent to the helper is skipped.
    let at_end = store.write(OWNER, &mut |tx| {
        tx.upsert_entity(&sample_entity("e3"))?;
        tx.insert_segments(&again)?;
        tx.delete_meeting("m1")
    });
    for outcome in [read_after, at_end] {
        let error = outcome.expect_err("a duplicate segment fails the write");
        assert!(
            matches!(error, lore_store::StoreError::Conflict(_)),
            "{error}"
        );
    }
    let mut found = (Vec::new(), Vec::new(), None);
    store
        .read(OWNER, &mut |tx| {
            found.0 = tx.list_entities()?.into_iter().map(|e| e.id).collect();
            found.1 = tx.list_segments("m1")?.into_iter().map(|s| s.id).collect();
            found.2 = tx.find_claim("c1")?;
            Ok(())
        })
        .unwrap();
    assert_eq!(found.0, vec!["e1".to_string()]);
    assert_eq!(found.1, vec!["s1".to_string()]);
    assert!(found.2.is_none());
    assert!(store.integrity_problems().unwrap().is_empty());
    // The store goes on writing: the next write's statements run as before.
    store
        .write(OWNER, &mut |tx| {
            tx.insert_segments(&[sample_segment("m1", "s2", 10, "and the plan")])?;
            tx.delete_meeting("m1")
        })
        .unwrap();
    let mut meetings = 1;
    store
        .read(OWNER, &mut |tx| {
            meetings = tx.list_meetings()?.len();
            Ok(())
        })
        .unwrap();
    assert_eq!(meetings, 0);
}

/// Each store keeps its own files: the tables' store refuses a log store's file and the other way
/// round, and `open_embedded` opens each with its own store.
#[test]
fn each_store_refuses_the_others_file() {
    let dir = tempfile::tempdir().unwrap();
    let (log, tables) = (dir.path().join("log.db"), dir.path().join("tables.db"));
    let sample = lore_store::conformance::sample_entity;
    let log_store = LogStore::open(&log).unwrap();
    log_store
        .write(OWNER, &mut |tx| tx.upsert_entity(&sample("e1")))
        .unwrap();
    drop(log_store);
    let tables_store = SqliteStore::open(&tables).unwrap();
    tables_store
        .write(OWNER, &mut |tx| tx.upsert_entity(&sample("e1")))
        .unwrap();
    drop(tables_store);
    assert!(matches!(
        SqliteStore::open(&log),
        Err(lore_store::StoreError::Conflict(_))
    ));
    let refused = LogStore::open(&tables)
        .err()
        .expect("a tables file is refused");
    assert!(refused.to_string().contains("lore migrate"), "{refused}");
    for path in [&log, &tables] {
        let store = lore_store::open_embedded(path).unwrap();
        let mut found = None;
        store
            .read(OWNER, &mut |tx| {
                found = tx.find_entity("e1")?;
                Ok(())
            })
            .unwrap();
        assert!(found.is_some(), "{}", path.display());
    }
    assert_eq!(
        lore_store::open_embedded(&log).unwrap().backend_name(),
        "sqlite"
    );
    assert_eq!(
        lore_store::open_embedded(&tables).unwrap().backend_name(),
        "sqlite-tables"
    );
}

/// A log entry damaged on disk is reported, with the owner and the entry, when the owner is
/// loaded; nothing panics.
#[test]
fn a_damaged_log_entry_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = LogStore::open(&path).unwrap();
    store
        .write(OWNER, &mut |tx| {
            tx.upsert_entity(&lore_store::conformance::sample_entity("e1"))
        })
        .unwrap();
    drop(store);
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE knowledge_log SET ops = substr(ops, 1, length(ops) - 3) WHERE owner = ?1",
        [OWNER],
    )
    .unwrap();
    drop(raw);
    let store = LogStore::open(&path).unwrap();
    let error = store
        .read(OWNER, &mut |_| Ok(()))
        .expect_err("a damaged entry");
    assert!(
        error
            .to_string()
            .contains("knowledge log of alice, entry 1"),
        "{error}"
    );
}

/// The benchmark measures searches on the index a server has a few seconds after its last write:
/// `wait_search_merged` returns once the background merge has caught up with every commit.
#[test]
fn waiting_for_the_search_merge_returns_a_merged_index() {
    use lore_store::testing::{search_index_segments, write_segments_one_by_one};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = LogStore::open(&path).unwrap();
    let segments = || search_index_segments(&path);
    write_segments_one_by_one(&store, &path, "o", 20);
    // Right after the writes the index is in as many pieces as the writers left (a merge starts
    // only once writes have paused), so this checks the wait rather than the clock.
    assert!(segments() >= 4, "{} segments right after", segments());
    store.wait_search_merged();
    assert!(segments() <= 3, "{} segments after the wait", segments());
    // Nothing written since: the wait returns at once.
    store.wait_search_merged();
}
