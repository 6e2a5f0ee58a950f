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
    assert_eq!(store.schema_version().unwrap(), 14);
    drop(store);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// A database of schema version 1 (before `owner_versions`) is migrated to version 2 when opened, and
/// from then on every write transaction that changes rows bumps its owner's version, while one that
/// changes nothing does not (the graph index and entity pages are kept per owner version).
#[test]
fn a_version_1_database_gains_owner_versions_and_writes_bump_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    drop(SqliteStore::open(&path).unwrap());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch(
        "DROP TABLE owner_versions; DROP TABLE revision_meetings; DROP TABLE entity_redirects; \
         DROP TABLE web_sessions; \
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(raw);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    let version = |owner: &str| -> Option<i64> {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.query_row(
            "SELECT version FROM owner_versions WHERE owner = ?1",
            [owner],
            |row| row.get(0),
        )
        .ok()
    };
    assert_eq!(version("alice"), None);
    let series = lore_core::model::MeetingSeries {
        id: "s1".into(),
        calendar_account: "a".into(),
        calendar_id: "c".into(),
        recurring_event_id: "r".into(),
    };
    store
        .write("alice", &mut |tx| tx.upsert_series(&series))
        .unwrap();
    assert_eq!(version("alice"), Some(1));
    // The same row again changes nothing (`ON CONFLICT DO NOTHING`): no bump.
    store
        .write("alice", &mut |tx| tx.upsert_series(&series))
        .unwrap();
    assert_eq!(version("alice"), Some(1));
    store
        .write("bob", &mut |tx| tx.upsert_series(&series))
        .unwrap();
    assert_eq!((version("alice"), version("bob")), (Some(1), Some(1)));
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// A database of schema version 2 (before `revision_meetings`) gains the table when opened, filled in
/// for the revisions already written (compressed snapshots included), so deleting a meeting later
/// finds them; revisions written after are indexed as they are written.
#[test]
fn a_version_2_database_indexes_its_revisions_by_the_meetings_they_name() {
    use lore_core::model::{Revision, RevisionAction};
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let revision = |id: &str, meeting: &str, rows: usize| {
        Revision {
        id: id.into(),
        action: RevisionAction::ExtractionCommit,
        target: meeting.into(),
        secondary: None,
        before: json!({}),
        after: serde_json::Value::Object(
            (0..rows)
                .map(|at| {
                    (
                        format!("evidence:v{at}"),
                        json!({"id": format!("v{at}"), "meeting": meeting, "quote": "words ".repeat(20)}),
                    )
                })
                .chain([(format!("meeting:{meeting}"), json!({"id": meeting}))])
                .collect(),
        ),
        created_at: lore_core::Ts(1),
    }
    };
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .write("alice", &mut |tx| {
                tx.insert_revision(&revision("r1", "m1", 1))?;
                // Large enough to be stored compressed.
                tx.insert_revision(&revision("r2", "m2", 200))
            })
            .unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch(
        "DROP TABLE revision_meetings; DROP TABLE entity_redirects; DROP TABLE web_sessions; \
         PRAGMA user_version = 2;",
    )
    .unwrap();
    drop(raw);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    store
        .write("alice", &mut |tx| {
            tx.insert_revision(&revision("r3", "m1", 2))?;
            assert_eq!(tx.list_revisions_naming_meeting("m1")?, ["r1", "r3"]);
            assert_eq!(tx.list_revisions_naming_meeting("m2")?, ["r2"]);
            assert!(tx.list_revisions_naming_meeting("m3")?.is_empty());
            Ok(())
        })
        .unwrap();
    store
        .read("bob", &mut |tx| {
            assert!(tx.list_revisions_naming_meeting("m1")?.is_empty());
            Ok(())
        })
        .unwrap();
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// Opening a database of schema 5 strips the derived fields from the entity rows of the revisions
/// already written (erasure at rest: the projection repeats what the entity's claims said), in
/// compressed and plain snapshots, and leaves every other row as it was.
#[test]
fn a_version_5_database_keeps_entities_in_revisions_without_derived_fields() {
    use lore_store::testing::{
        assert_upgraded_without_derived_entity_fields, revision_with_derived_entity_fields,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .write("alice", &mut |tx| {
                tx.insert_revision(&revision_with_derived_entity_fields("r1", 1))?;
                tx.insert_revision(&revision_with_derived_entity_fields("r2", 60))
            })
            .unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    let compressed: String = raw
        .query_row(
            "SELECT typeof(before) FROM revisions WHERE id = 'r2'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(
        compressed, "blob",
        "the large snapshot is stored compressed"
    );
    raw.execute_batch("PRAGMA user_version = 5;").unwrap();
    drop(raw);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    assert_upgraded_without_derived_entity_fields(&store, "alice", "r1", 1);
    assert_upgraded_without_derived_entity_fields(&store, "alice", "r2", 60);
}

/// `write_statements` counts the statements write transactions run, a rolled-back one's too, and
/// nothing a read runs: the benchmark's machine-independent measure of a write's work.
#[test]
fn write_statements_count_the_writes_statements_only() {
    use lore_core::model::{Revision, RevisionAction};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("lore.db")).unwrap();
    let revision = |id: &str| Revision {
        id: id.into(),
        action: RevisionAction::ClaimRetract,
        target: "c1".into(),
        secondary: None,
        before: serde_json::json!({}),
        after: serde_json::json!({}),
        created_at: lore_core::Ts(1),
    };
    let counted = || store.write_statements().expect("SQLite counts statements");
    let start = counted();
    // One statement: the revision names no meeting, so no `revision_meetings` row goes with it.
    store
        .write("alice", &mut |tx| tx.insert_revision(&revision("r1")))
        .unwrap();
    assert_eq!(counted(), start + 1);
    store
        .write("alice", &mut |tx| {
            tx.insert_revision(&revision("r2"))?;
            tx.find_revision("r2")?;
            Err(lore_store::StoreError::Conflict("rolled back".into()))
        })
        .unwrap_err();
    assert_eq!(counted(), start + 3, "a rolled-back write counts");
    store
        .read("alice", &mut |tx| tx.find_revision("r1").map(|_| ()))
        .unwrap();
    assert_eq!(counted(), start + 3, "a read does not count");
}

/// Large revision snapshots are stored compressed (a fraction of their JSON), small ones as JSON
/// text; rows written as text by earlier builds still read, and a blob in an unknown format is an
/// error rather than a panic or a wrong value.
#[test]
fn revision_snapshots_are_stored_compressed_and_old_text_rows_still_read() {
    use lore_core::model::{Revision, RevisionAction};
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    let rows: Vec<serde_json::Value> = (0..100)
        .map(|at| json!({"id": format!("c{at}"), "predicate": "has_title", "value_text": format!("Title {at}")}))
        .collect();
    let revision = |id: &str, before: serde_json::Value| Revision {
        id: id.into(),
        action: RevisionAction::ExtractionCommit,
        target: "m1".into(),
        secondary: None,
        before,
        after: json!({"rows": rows}),
        created_at: lore_core::Ts(1),
    };
    let (large, small) = (
        revision("r1", json!({"rows": rows})),
        revision("r2", json!({})),
    );
    store
        .write("o", &mut |tx| {
            tx.insert_revision(&large)?;
            tx.insert_revision(&small)
        })
        .unwrap();
    drop(store);

    let json_len = serde_json::to_string(&large.before).unwrap().len() as i64;
    let connection = rusqlite::Connection::open(&path).unwrap();
    let stored = |id: &str| -> (String, i64, String) {
        connection
            .query_row(
                "SELECT typeof(before), length(before), typeof(after) FROM revisions WHERE id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .unwrap()
    };
    let (kind, bytes, _) = stored("r1");
    assert_eq!(kind, "blob");
    assert!(
        bytes * 3 < json_len,
        "{bytes} bytes stored for {json_len} of JSON"
    );
    assert_eq!(stored("r2").0, "text");
    // As an earlier build wrote it: JSON text; and a blob whose format byte is unknown.
    connection
        .execute(
            "UPDATE revisions SET before = ?1 WHERE id = 'r1'",
            [serde_json::to_string(&large.before).unwrap()],
        )
        .unwrap();
    connection
        .execute(
            "UPDATE revisions SET after = x'09000102' WHERE id = 'r2'",
            [],
        )
        .unwrap();
    drop(connection);

    let store = SqliteStore::open(&path).unwrap();
    store
        .read("o", &mut |tx| {
            assert_eq!(tx.find_revision("r1")?.as_ref(), Some(&large));
            let broken = tx.find_revision("r2");
            assert!(
                matches!(&broken, Err(error) if error.to_string().contains("unknown format")),
                "{broken:?}"
            );
            Ok(())
        })
        .unwrap();
}

/// Writes that follow each other closely let the write-ahead log grow (it cannot start over while
/// the previous write's copy is still running); once writes pause, the checkpointer copies what is
/// left, and the next write starts the log over in the file it has: the file neither grows nor is
/// cut to nothing (a cut log makes every commit extend the file again).
#[test]
fn a_quiet_store_starts_its_log_over_in_the_file_it_has() {
    let (_dir, path, wal) = temporary_database();
    let store = SqliteStore::open(&path).unwrap();
    let mut largest = grow_the_log(&store, &wal, 0, 8);
    assert!(largest > 4 << 20, "the log reached only {largest} bytes");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut written = 8;
    loop {
        // Longer than the checkpointer waits for writes to pause.
        std::thread::sleep(std::time::Duration::from_millis(2_600));
        let size = grow_the_log(&store, &wal, written, 1);
        written += 1;
        assert!(
            size >= largest,
            "the log was cut from {largest} to {size} bytes"
        );
        if size == largest {
            break;
        }
        // The write came before the copy: it grew the log, and the next pause copies it.
        assert!(
            std::time::Instant::now() < deadline,
            "the log never started over"
        );
        largest = size;
    }
    assert_eq!(revisions(&store), written as usize);
}

/// A log that grew past the size the store keeps (a bulk ingest's) is cut back to that size, not to
/// nothing, once writes pause, and nothing is lost by the cut.
#[test]
fn a_large_log_is_cut_back_to_the_kept_size_once_writes_pause() {
    const KEPT: u64 = 128 << 20;
    let (_dir, path, wal) = temporary_database();
    let store = SqliteStore::open(&path).unwrap();
    let largest = grow_the_log(&store, &wal, 0, 136);
    assert!(largest > KEPT, "the log reached only {largest} bytes");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let size = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    while size() > KEPT {
        assert!(
            std::time::Instant::now() < deadline,
            "the log kept {} bytes after writes paused",
            size()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(size(), KEPT, "the log was cut to less than the kept size");
    assert_eq!(revisions(&store), 136);
}

/// A store dropped right after such writes (a one-shot command) cuts the log itself.
#[test]
fn a_store_dropped_right_after_writes_leaves_no_large_log() {
    let (_dir, path, wal) = temporary_database();
    let store = SqliteStore::open(&path).unwrap();
    let largest = grow_the_log(&store, &wal, 0, 8);
    assert!(largest > 4 << 20, "the log reached only {largest} bytes");
    drop(store);
    let left = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert!(
        left <= 4 << 20,
        "the dropped store left a log of {left} bytes"
    );
    assert_eq!(revisions(&SqliteStore::open(&path).unwrap()), 8);
}

/// A temporary folder with the database's and its log's paths.
fn temporary_database() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (path, wal) = (dir.path().join("lore.db"), dir.path().join("lore.db-wal"));
    (dir, path, wal)
}

fn revisions(store: &SqliteStore) -> usize {
    let mut count = 0;
    store
        .read("o", &mut |tx| {
            count = tx.list_revisions(1_000)?.len();
            Ok(())
        })
        .unwrap();
    count
}

/// `count` write transactions of 1 MB each (revisions `first`, `first + 1`, ...), one right after
/// the other; the largest size the log reached.
fn grow_the_log(store: &SqliteStore, wal: &std::path::Path, first: i64, count: i64) -> u64 {
    use lore_core::model::{Revision, RevisionAction};
    // Text that does not compress (snapshots are stored compressed).
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noise: String = (0..1 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'a' + (state % 26) as u8)
        })
        .collect();
    let mut largest = 0;
    for at in first..first + count {
        let revision = Revision {
            id: format!("r{at}"),
            action: RevisionAction::ExtractionCommit,
            target: "m1".into(),
            secondary: None,
            before: serde_json::json!({}),
            after: serde_json::json!({ "text": noise }),
            created_at: lore_core::Ts(at),
        };
        store
            .write("o", &mut |tx| tx.insert_revision(&revision))
            .unwrap();
        largest = largest.max(std::fs::metadata(wal).map_or(0, |m| m.len()));
    }
    largest
}

/// Token, user and session lookups, which every request makes, read on the reader connection: they
/// do not wait for a write in progress (a bulk ingest holds the writer for its whole batch), and they
/// see every committed write.
#[test]
fn request_lookups_do_not_wait_for_a_write_in_progress() {
    use std::sync::{mpsc, Arc};
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("lore.db")).unwrap());
    let session = lore_store::WebSession {
        cookie_hash: "h1".into(),
        owner: "alice".into(),
        created_at: lore_core::Ts::from_millis(1_000),
        last_seen_at: lore_core::Ts::from_millis(1_000),
    };
    store.insert_web_session(&session).unwrap();

    let (entered, writing) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            store
                .write("alice", &mut |_tx| {
                    entered.send(()).unwrap();
                    released.recv().unwrap();
                    Ok(())
                })
                .unwrap()
        })
    };
    writing.recv().unwrap();
    let (found, answer) = mpsc::channel();
    {
        let store = store.clone();
        std::thread::spawn(move || {
            let _ = found.send((
                store.find_web_session("h1").unwrap(),
                store.find_api_token_by_hash("nothing").unwrap(),
                store.find_user("nobody").unwrap(),
            ));
        });
    }
    let answered = answer.recv_timeout(Duration::from_secs(5));
    release.send(()).unwrap();
    writer.join().unwrap();
    let (found, token, user) = answered.expect("the lookups waited for the writer");
    assert_eq!(found, Some(session));
    assert_eq!((token, user), (None, None));
}

/// The name keys entity resolution reads (`entity_alias_keys`, schema 7) stay the distinct keys of
/// the names through every way a name comes and goes: a name said in a second meeting, two spellings
/// of one key, a meeting's names deleted, an entity deleted (its names by cascade), a name updated in
/// place. `integrity_problems` compares the two after every step, and reports a table that drifted.
#[test]
fn name_keys_follow_the_names_they_index() {
    use lore_core::{model::Alias, Ts};
    use lore_store::conformance::{sample_entity, sample_meeting};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("lore.db")).unwrap();
    let alias = |entity: &str, name: &str, meeting: &str| Alias {
        entity: entity.into(),
        alias: name.into(),
        meeting: meeting.into(),
        observed_at: Ts(1),
    };
    let keys = |owner: &str, key: &str| -> Vec<String> {
        let mut found = Vec::new();
        store
            .read(owner, &mut |tx| {
                found = tx.list_entities_by_alias_key(key)?;
                Ok(())
            })
            .unwrap();
        found
    };
    let step =
        |owner: &str,
         change: &mut dyn FnMut(&mut dyn lore_store::Tx) -> lore_store::StoreResult<()>| {
            store.write(owner, change).unwrap();
            assert_eq!(store.integrity_problems().unwrap(), Vec::<String>::new());
        };
    for owner in ["alice", "bob"] {
        step(owner, &mut |tx| {
            for meeting in ["m1", "m2"] {
                tx.insert_meeting(&sample_meeting(meeting))?;
            }
            for entity in ["e1", "e2"] {
                tx.upsert_entity(&sample_entity(entity))?;
            }
            tx.insert_alias(&alias("e1", "Ann", "m1"))?;
            tx.insert_alias(&alias("e1", "Ann", "m2"))?;
            tx.insert_alias(&alias("e1", "ANN", "m2"))?;
            tx.insert_alias(&alias("e2", "Ann", "m2"))?;
            tx.insert_alias(&alias("e2", "Bo", "m1"))
        });
    }
    let key = lore_core::normalize::value_key("Ann");
    assert_eq!(keys("alice", &key), ["e1", "e2"]);
    // m2's names go: e1 keeps the key through m1's "Ann", e2 loses it.
    step("alice", &mut |tx| {
        tx.delete_aliases_by_meeting("m2").map(|_| ())
    });
    assert_eq!(keys("alice", &key), ["e1"]);
    assert_eq!(keys("bob", &key), ["e1", "e2"], "another owner's keys stay");
    // One spelling of two goes, the key stays; then the other, and the key goes.
    step("bob", &mut |tx| tx.delete_alias(&alias("e1", "Ann", "m1")));
    step("bob", &mut |tx| tx.delete_alias(&alias("e1", "Ann", "m2")));
    assert_eq!(keys("bob", &key), ["e1", "e2"]);
    step("bob", &mut |tx| tx.delete_alias(&alias("e1", "ANN", "m2")));
    assert_eq!(keys("bob", &key), ["e2"]);
    // An entity deleted takes its names, and their keys, with it.
    step("bob", &mut |tx| tx.delete_entity("e2"));
    assert!(keys("bob", &key).is_empty());
    assert!(keys("bob", &lore_core::normalize::value_key("Bo")).is_empty());
    assert_eq!(
        keys("alice", &lore_core::normalize::value_key("Bo")),
        ["e2"]
    );

    // No write path updates a name in place, but a row updated by hand moves its pair like a
    // delete and an insert: alice's e1 keeps no "Ann", and e2 gains it.
    let raw = rusqlite::Connection::open(dir.path().join("lore.db")).unwrap();
    raw.execute(
        "UPDATE entity_aliases SET entity = 'e2' WHERE owner = 'alice' AND entity = 'e1'",
        [],
    )
    .unwrap();
    assert_eq!(keys("alice", &key), ["e2"]);
    assert_eq!(store.integrity_problems().unwrap(), Vec::<String>::new());

    // A drifted table is reported.
    raw.execute("DELETE FROM entity_alias_keys WHERE owner = 'alice'", [])
        .unwrap();
    drop(raw);
    assert_eq!(
        store.integrity_problems().unwrap(),
        ["entity name keys: 2 missing, 0 without a name"]
    );
}

/// Opening a database of schema 6 (names indexed by key, occurrence by occurrence) fills the name
/// keys from the names already there and drops that index, and keys claims by predicate without
/// their status.
#[test]
fn a_version_6_database_gains_name_keys_and_claims_by_predicate_without_status() {
    use lore_core::{model::Alias, Ts};
    use lore_store::conformance::{sample_entity, sample_meeting};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .write("alice", &mut |tx| {
                tx.insert_meeting(&sample_meeting("m1"))?;
                tx.upsert_entity(&sample_entity("e1"))?;
                tx.insert_alias(&Alias {
                    entity: "e1".into(),
                    alias: "Ann".into(),
                    meeting: "m1".into(),
                    observed_at: Ts(1),
                })
            })
            .unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch(
        "DROP TRIGGER entity_alias_keys_ai; DROP TRIGGER entity_alias_keys_ad; \
         DROP TRIGGER entity_alias_keys_au; DROP TABLE entity_alias_keys; \
         CREATE INDEX entity_aliases_by_key ON entity_aliases (owner, alias_key); \
         DROP INDEX claims_by_predicate; \
         CREATE INDEX claims_by_predicate ON claims (owner, predicate, status); \
         PRAGMA user_version = 6;",
    )
    .unwrap();
    drop(raw);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    assert!(store.integrity_problems().unwrap().is_empty());
    store
        .read("alice", &mut |tx| {
            assert_eq!(
                tx.list_entities_by_alias_key(&lore_core::normalize::value_key("Ann"))?,
                ["e1"]
            );
            Ok(())
        })
        .unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    let index: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'entity_aliases_by_key'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(index, 0);
    let columns: Vec<String> = raw
        .prepare("SELECT name FROM pragma_index_info('claims_by_predicate') ORDER BY seqno")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(columns, ["owner", "predicate"]);
}

/// Opening a database of schema 7 replaces the full-text queue's triggers and keeps claims by object
/// and by context for the claims that have one (schema_v8.sql). The queue still keeps a document's
/// first change of a transaction: an entity renamed twice in one write is found by its last name
/// only, and the index passes its own check.
#[test]
fn a_version_7_database_gains_the_queue_triggers_and_partial_claim_indexes() {
    use lore_store::conformance::sample_entity;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .write("alice", &mut |tx| tx.upsert_entity(&sample_entity("e1")))
            .unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch(
        "DROP TRIGGER search_docs_ai; DROP TRIGGER search_docs_ad; DROP TRIGGER search_docs_au;
         CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
             INSERT INTO search_pending (doc, scope, body) SELECT new.doc, NULL, NULL
                 WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = new.doc);
         END;
         CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
             INSERT INTO search_pending (doc, scope, body) SELECT old.doc, old.scope, old.body
                 WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc);
         END;
         CREATE TRIGGER search_docs_au AFTER UPDATE OF scope, body ON search_docs BEGIN
             INSERT INTO search_pending (doc, scope, body) SELECT old.doc, old.scope, old.body
                 WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc);
         END;
         DROP INDEX claims_by_object;
         CREATE INDEX claims_by_object ON claims (owner, object_entity, status, predicate, subject);
         DROP INDEX claims_by_context;
         CREATE INDEX claims_by_context ON claims (owner, context_entity);
         PRAGMA user_version = 7;",
    )
    .unwrap();
    drop(raw);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    store
        .write("alice", &mut |tx| {
            for name in ["Beatrix Quill", "Gwendolyn Marsh"] {
                let mut renamed = sample_entity("e1");
                renamed.manual_name = Some(name.into());
                tx.upsert_entity(&renamed)?;
            }
            Ok(())
        })
        .unwrap();
    assert!(store.integrity_problems().unwrap().is_empty());
    store
        .read("alice", &mut |tx| {
            for (word, hits) in [("beatrix", 0), ("gwendolyn", 1)] {
                let query = lore_core::search::parse_search_query(word).unwrap();
                assert_eq!(
                    tx.search_candidates(&query, None, 10)?.len(),
                    hits,
                    "{word}"
                );
            }
            Ok(())
        })
        .unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    let with_when: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' \
             AND name LIKE 'search_docs_a_' AND sql LIKE '%WHEN%NOT EXISTS%'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(with_when, 3);
    let partial: i64 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' \
             AND name IN ('claims_by_object', 'claims_by_context') AND sql LIKE '%WHERE%IS NOT NULL'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(
        partial, 2,
        "claims by object and by context keep only claims that have one"
    );
}

/// The full-text index merges off the writers' path (schema_v10.sql): a run of small writes leaves
/// one index segment each (writers merge only when eight pile up on a level), and once writes pause
/// the store's background thread merges them down to at most one per level.
#[test]
fn the_search_index_merges_while_writes_pause() {
    use lore_store::testing::{search_index_segments, write_segments_one_by_one};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    let segments = || search_index_segments(&path);
    let most = write_segments_one_by_one(&store, &path, "o", 20);
    assert!(
        most >= 6,
        "the writers merged as they went: {most} segments at most"
    );
    let merged = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        segments() <= 3
    });
    assert!(merged, "still {} segments after writes paused", segments());
    assert!(store.integrity_problems().unwrap().is_empty());
}

fn transcript_line(meeting: &str, text: &str) -> lore_core::model::Segment {
    lore_store::conformance::sample_segment(meeting, "s1", 0, text)
}

/// Every row a query gives on a connection of its own to the file (beside the store's).
fn raw_rows<T, P: rusqlite::Params>(
    path: &std::path::Path,
    sql: &str,
    params: P,
    map: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> Vec<T> {
    let raw = rusqlite::Connection::open(path).unwrap();
    let mut statement = raw.prepare(sql).unwrap();
    let rows = statement.query_map(params, map).unwrap();
    rows.map(Result::unwrap).collect()
}

/// What a search finds and the snippet it shows, for one word.
fn found(store: &SqliteStore, word: &str) -> Vec<String> {
    let query = lore_core::search::parse_search_query(word).unwrap();
    let mut snippets = Vec::new();
    store
        .read("alice", &mut |tx| {
            let docs: Vec<i64> = tx
                .search_candidates(&query, None, 10)?
                .iter()
                .map(|hit| hit.doc)
                .collect();
            snippets = tx
                .list_search_snippets(&query, &docs)?
                .into_iter()
                .map(|(_, snippet)| snippet)
                .collect();
            assert_eq!(snippets.len(), docs.len(), "every hit has a snippet");
            Ok(())
        })
        .unwrap();
    snippets
}

/// The search index deletes by rowid and keeps no text (schema_v11.sql). A deleted document's rowid
/// taken again by a new document, in the deleting transaction or a later one, finds the new text
/// only; the snippets come from the documents' text; the index passes its checks throughout.
#[test]
fn a_deleted_documents_rowid_taken_again_finds_only_the_new_text() {
    use lore_store::conformance::sample_meeting;
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("lore.db")).unwrap();
    let rowids = || -> Vec<i64> {
        raw_rows(
            &dir.path().join("lore.db"),
            "SELECT doc FROM search_docs WHERE kind = 'segment'",
            [],
            |row| row.get(0),
        )
    };
    store
        .write("alice", &mut |tx| {
            tx.insert_meeting(&sample_meeting("m1"))?;
            tx.insert_segment(&transcript_line("m1", "alpha said first"))
        })
        .unwrap();
    let first = rowids();
    store
        .write("alice", &mut |tx| {
            tx.delete_meeting("m1")?;
            tx.insert_meeting(&sample_meeting("m2"))?;
            tx.insert_segment(&transcript_line("m2", "beta said second"))
        })
        .unwrap();
    assert_eq!(rowids(), first, "the new document took the deleted rowid");
    assert!(found(&store, "alpha").is_empty());
    assert_eq!(found(&store, "beta"), ["[beta] said second"]);
    assert!(store.integrity_problems().unwrap().is_empty());
    store
        .write("alice", &mut |tx| tx.delete_meeting("m2"))
        .unwrap();
    store
        .write("alice", &mut |tx| {
            tx.insert_meeting(&sample_meeting("m3"))?;
            tx.insert_segment(&transcript_line("m3", "gamma said third"))
        })
        .unwrap();
    assert_eq!(rowids(), first, "a later write took it again");
    assert!(found(&store, "alpha OR beta").is_empty());
    assert_eq!(found(&store, "gamma"), ["[gamma] said third"]);
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// A database of schema 10 (an external-content index, which deleted with the old text) gets the
/// index without text when opened, built from the documents: searches find what they found, and a
/// document the index lost is reported.
#[test]
fn a_version_10_database_gets_the_index_without_text() {
    use lore_store::conformance::sample_meeting;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        store
            .write("alice", &mut |tx| {
                tx.insert_meeting(&sample_meeting("m1"))?;
                tx.insert_segment(&transcript_line("m1", "the cutover runbook is ready"))
            })
            .unwrap();
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch(&format!(
        "DROP TABLE search_fts;
         CREATE VIRTUAL TABLE search_fts USING fts5(
             scope, body, content = 'search_docs', content_rowid = 'doc',
             tokenize = '{}', prefix = '2 3');
         INSERT INTO search_fts (search_fts) VALUES ('rebuild');
         PRAGMA user_version = 10;",
        lore_store::SEARCH_TOKENIZER
    ))
    .unwrap();
    drop(raw);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    assert!(store.integrity_problems().unwrap().is_empty());
    assert_eq!(
        found(&store, "runbooks"),
        ["the cutover [runbook] is ready"]
    );
    let raw = rusqlite::Connection::open(&path).unwrap();
    let sql: String = raw
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'search_fts'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert!(sql.contains("contentless_delete = 1"), "{sql}");
    assert!(
        sql.contains(&format!("tokenize = '{}'", lore_store::SEARCH_TOKENIZER)),
        "the snippets' scratch index tokenizes as the index does: {sql}"
    );
    raw.execute_batch("DELETE FROM search_fts_docsize").unwrap();
    drop(raw);
    let problems = store.integrity_problems().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("1 documents not indexed")),
        "{problems:?}"
    );
}

/// Deletions mark the search index's entries (tombstones) without rewriting it; once writes pause,
/// the background merge rewrites a level that deletions marked enough, and the deleted meeting's
/// entries leave the file (schema_v11.sql). The writer itself never rewrites for deletions.
#[test]
fn the_background_merge_drops_a_deleted_meetings_entries() {
    use lore_store::conformance::sample_meeting;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    let index_bytes = || -> i64 {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.query_row(
            "SELECT sum(length(block)) FROM search_fts_data",
            [],
            |row| row.get(0),
        )
        .unwrap()
    };
    store
        .write("alice", &mut |tx| {
            for (meeting, lines) in [("m1", 100), ("m2", 300)] {
                tx.insert_meeting(&sample_meeting(meeting))?;
                for line in 0..lines {
                    let mut segment =
                        transcript_line(meeting, &format!("{meeting} line{line} about the budget"));
                    segment.id = format!("s{line}");
                    segment.seq = line;
                    tx.insert_segment(&segment)?;
                }
            }
            Ok(())
        })
        .unwrap();
    store.wait_search_merged();
    let written = index_bytes();
    store
        .write("alice", &mut |tx| tx.delete_meeting("m2"))
        .unwrap();
    let marked = index_bytes();
    assert!(
        marked >= written,
        "the deleting write only marks entries: {written} -> {marked} bytes"
    );
    store.wait_search_merged();
    let merged = index_bytes();
    assert!(
        merged * 2 < written,
        "the merge dropped the deleted entries: {written} -> {marked} -> {merged} bytes"
    );
    assert_eq!(found(&store, "m2").len(), 0);
    assert_eq!(found(&store, "line7").len(), 1);
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// A meeting's segments get their search documents from the store's own statement, not from a
/// trigger per row (schema_v12.sql): every segment of a long transcript (every insert shape) is
/// found, with its meeting's start plus its own as the document's time; deleting the meeting
/// removes its documents and their index entries, and no other owner's (L20); segments inserted
/// and deleted in one transaction leave nothing behind. The index passes its checks throughout.
#[test]
fn segments_documents_are_written_and_removed_by_the_store() {
    use lore_store::conformance::{sample_meeting, sample_segment};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    let transcript = |meeting: &str, word: &str| -> Vec<lore_core::model::Segment> {
        (0..130)
            .map(|n| {
                sample_segment(
                    meeting,
                    &format!("s{n:03}"),
                    n * 1_000,
                    &format!("{word} line{n}"),
                )
            })
            .collect()
    };
    for owner in ["alice", "bob"] {
        store
            .write(owner, &mut |tx| {
                let mut meeting = sample_meeting("m1");
                meeting.started_at = lore_core::Ts(50_000);
                tx.insert_meeting(&meeting)?;
                tx.insert_segments(&transcript("m1", "kickoff"))
            })
            .unwrap();
    }
    let documents = |owner: &str| -> Vec<(String, Option<i64>, Option<i64>, String)> {
        raw_rows(
            &path,
            "SELECT ref, start_ms, at, body FROM search_docs \
             WHERE owner = ?1 AND kind = 'segment' ORDER BY doc",
            [owner],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
    };
    let alice = documents("alice");
    assert_eq!(alice.len(), 130);
    assert_eq!(
        alice[129],
        (
            "m1/s129".to_string(),
            Some(129_000),
            Some(179_000),
            "kickoff line129".to_string()
        )
    );
    assert_eq!(found(&store, "line0"), ["kickoff [line0]"]);
    assert_eq!(found(&store, "line129"), ["kickoff [line129]"]);
    assert!(store.integrity_problems().unwrap().is_empty());

    store
        .write("alice", &mut |tx| tx.delete_meeting("m1"))
        .unwrap();
    assert!(documents("alice").is_empty());
    assert_eq!(
        documents("bob").len(),
        130,
        "another owner's meeting of the same id stays"
    );
    assert!(found(&store, "kickoff").is_empty());
    assert!(store.integrity_problems().unwrap().is_empty());

    store
        .write("alice", &mut |tx| {
            tx.insert_meeting(&sample_meeting("m2"))?;
            tx.insert_segments(&transcript("m2", "fleeting"))?;
            tx.delete_meeting("m2")
        })
        .unwrap();
    assert!(documents("alice").is_empty());
    assert!(found(&store, "fleeting").is_empty());
    assert!(store.integrity_problems().unwrap().is_empty());
    let raw = rusqlite::Connection::open(&path).unwrap();
    let (queued, triggers): (i64, i64) = raw
        .query_row(
            "SELECT (SELECT count(*) FROM search_pending), (SELECT count(*) FROM sqlite_schema \
             WHERE type = 'trigger' AND tbl_name = 'segments' AND sql LIKE '%AFTER INSERT%')",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (queued, triggers),
        (0, 0),
        "the queue is empty and no trigger inserts documents"
    );
}

/// A search's candidates are ranked by FTS5's own `bm25(search_fts, 0.0, 1.0)`, whether the store
/// computes it outside FTS5 (words and phrases of text it can tokenize) or FTS5 does (prefixes,
/// text it cannot tokenize): for every query, the candidates and their ranks are those of the
/// definition, run on a connection of its own, with other owners' documents and deleted documents
/// whose index entries are not merged away yet in the index.
#[test]
fn search_ranks_are_fts5s_bm25() {
    use lore_store::conformance::{sample_meeting, sample_segment};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    let mut lines: Vec<String> = [
        "The budget for Q3 is final; budgets are reviewed monthly.",
        "Budgeting, budgeted, BUDGET: the remote control design review.",
        "We\u{2019}re designing the remote \u{2014} the \u{201c}design\u{201d} is ready\u{2026}",
        "Le café du projet: the design budget in €.",
        "Der Entwurf ist fertig, sagt Jürgen: the design is done.",
        "project manager and the project manager's budget",
        "a manager of projects, managing the project",
        "remote remote remote design",
    ]
    .iter()
    .map(|line| line.to_string())
    .collect();
    lines.extend(conformance::transcript_lines(3000));
    for owner in ["alice", "bob"] {
        for (number, chunk) in lines.chunks(lines.len().div_ceil(6)).enumerate() {
            let meeting = format!("m{number}");
            store
                .write(owner, &mut |tx| {
                    tx.insert_meeting(&sample_meeting(&meeting))?;
                    let segments: Vec<_> = chunk
                        .iter()
                        .enumerate()
                        .map(|(n, text)| {
                            sample_segment(&meeting, &format!("s{n:04}"), n as i64 * 1_000, text)
                        })
                        .collect();
                    tx.insert_segments(&segments)
                })
                .unwrap();
        }
    }
    store.wait_search_merged();
    for (owner, meeting) in [("alice", "m1"), ("bob", "m2")] {
        store
            .write(owner, &mut |tx| tx.delete_meeting(meeting))
            .unwrap();
    }
    // The term counts (schema_v13.sql) are the index's own vocabulary after those writes: text the
    // store tokenizes and text only FTS5 can (the accented lines), added and deleted.
    assert!(store.integrity_problems().unwrap().is_empty());
    let queries = [
        "budget",
        "budgets",
        "BUDGETING",
        "remote",
        "design",
        "the",
        "café",
        "jürgen",
        "remote design",
        "remote OR budget",
        "design -remote",
        "\"project manager\"",
        "\"the remote control\" OR design",
        "desig*",
        "project manager budget",
        "um",
        "nothingmatchesthis",
    ];
    for query_text in queries {
        let query = lore_core::search::parse_search_query(query_text).unwrap();
        for kind in [None, Some("segment")] {
            let mut got = Vec::new();
            store
                .read("alice", &mut |tx| {
                    got = tx.search_candidates(&query, kind, 1000)?;
                    Ok(())
                })
                .unwrap();
            let expression = lore_store::sqlite_body_expression(&query);
            let expected: Vec<(i64, f64)> = raw_rows(
                &path,
                "SELECT search_fts.rowid, bm25(search_fts, 0.0, 1.0) FROM search_fts \
                 JOIN search_docs AS d ON d.doc = search_fts.rowid \
                 WHERE search_fts MATCH ?1 AND d.owner = 'alice' AND (?2 IS NULL OR d.kind = ?2) \
                 ORDER BY search_fts.rowid DESC LIMIT 1000",
                rusqlite::params![expression, kind],
                |row| Ok((row.get(0)?, row.get(1)?)),
            );
            let got: Vec<(i64, f64)> = got.iter().map(|c| (c.doc, c.rank)).collect();
            assert_eq!(
                got.iter().map(|(doc, _)| *doc).collect::<Vec<_>>(),
                expected.iter().map(|(doc, _)| *doc).collect::<Vec<_>>(),
                "{query_text}: the candidates"
            );
            for ((doc, ours), (_, theirs)) in got.iter().zip(&expected) {
                assert!(
                    (ours - theirs).abs() <= 1e-12 * theirs.abs().max(1.0),
                    "{query_text}: document {doc} ranked {ours}, FTS5 says {theirs}"
                );
            }
            if query_text != "nothingmatchesthis" && query_text != "jürgen" {
                assert!(!got.is_empty(), "{query_text} finds something");
            }
        }
    }
}

/// A term count that no longer matches the index (here: removed by hand) does not stop a write that
/// would take it below zero; the integrity check reports it.
#[test]
fn a_wrong_term_count_is_reported_not_fatal() {
    use lore_store::conformance::{sample_meeting, sample_segment};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let store = SqliteStore::open(&path).unwrap();
    store
        .write("alice", &mut |tx| {
            tx.insert_meeting(&sample_meeting("m1"))?;
            tx.insert_segments(&[sample_segment("m1", "s1", 0, "quarterly budgets")])
        })
        .unwrap();
    assert!(store.integrity_problems().unwrap().is_empty());
    let counts = |term: &str| -> Vec<i64> {
        raw_rows(
            &path,
            "SELECT docs FROM search_terms WHERE term = ?1",
            [term],
            |row| row.get(0),
        )
    };
    assert_eq!(counts("budget"), [1], "stemmed as the index stems it");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("DELETE FROM search_terms WHERE term = 'budget'", [])
        .unwrap();
    let problems = store.integrity_problems().unwrap();
    assert!(
        problems.iter().any(|p| p.starts_with("search term counts")),
        "{problems:?}"
    );
    store
        .write("alice", &mut |tx| tx.delete_meeting("m1"))
        .unwrap();
    // The deletion is deferred (schema_v14.sql) until the store closes.
    assert_eq!(counts("quarterli"), [1]);
    drop(store);
    assert!(counts("quarterli").is_empty());
    let store = SqliteStore::open(&path).unwrap();
    assert!(store.integrity_problems().unwrap().is_empty());
}

/// A deleted document leaves the index later (schema_v14.sql): no search finds it meanwhile, the
/// integrity check holds the deferred rows to the index, a new document that takes a deferred one's
/// rowid makes the writer apply the deletions first, enough deferring commits make it apply them
/// too, and a store that closes leaves none.
#[test]
fn deleted_documents_leave_the_index_later_and_are_never_found() {
    use lore_store::conformance::sample_meeting;
    let transcript = |meeting: &str, word: &str| -> Vec<lore_core::model::Segment> {
        (0..5)
            .map(|n| {
                lore_store::conformance::sample_segment(
                    meeting,
                    &format!("s{n}"),
                    n,
                    &format!("the {word} notes, part {n}"),
                )
            })
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lore.db");
    let one = |sql: &str| -> i64 { raw_rows(&path, sql, [], |row| row.get(0))[0] };
    let deferred = || one("SELECT count(*) FROM search_deferred");
    let store = SqliteStore::open(&path).unwrap();
    let ingest = |id: &str, word: &str| {
        store
            .write("alice", &mut |tx| {
                tx.insert_meeting(&sample_meeting(id))?;
                tx.insert_segments(&transcript(id, word))
            })
            .unwrap()
    };
    ingest("m1", "kickoff");
    let indexed = one("SELECT max(doc) FROM search_docs");
    store
        .write("alice", &mut |tx| tx.delete_meeting("m1"))
        .unwrap();
    assert!(deferred() > 0);
    assert!(found(&store, "kickoff").is_empty());
    assert!(store.integrity_problems().unwrap().is_empty());

    // The next meeting's documents take the deleted ones' rowids.
    ingest("m2", "retrospective");
    let reused = one("SELECT min(doc) FROM search_docs");
    assert!(reused <= indexed, "a rowid was reused");
    assert_eq!(deferred(), 0);
    assert!(found(&store, "kickoff").is_empty());
    assert!(!found(&store, "retrospective").is_empty());
    assert!(store.integrity_problems().unwrap().is_empty());

    // Deleting commits in a row: the deletions wait, then a commit applies them.
    store
        .write("alice", &mut |tx| {
            for n in 0..70 {
                let id = format!("n{n}");
                tx.insert_meeting(&sample_meeting(&id))?;
                tx.insert_segments(&transcript(&id, "standup"))?;
            }
            Ok(())
        })
        .unwrap();
    let mut counts = Vec::new();
    for n in 0..70 {
        store
            .write("alice", &mut |tx| tx.delete_meeting(&format!("n{n}")))
            .unwrap();
        counts.push(deferred());
    }
    assert!(counts[0] > 0);
    assert!(
        counts.windows(2).any(|pair| pair[1] < pair[0]),
        "applied before the end: {counts:?}"
    );
    assert!(*counts.iter().max().unwrap() <= 64 * 5, "{counts:?}");
    assert!(found(&store, "standup").is_empty());
    assert!(store.integrity_problems().unwrap().is_empty());
    drop(store);
    assert_eq!(deferred(), 0, "a closed store leaves no deferred deletion");
    let store = SqliteStore::open(&path).unwrap();
    assert!(store.integrity_problems().unwrap().is_empty());
}
