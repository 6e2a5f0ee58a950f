//! Test support: fresh PostgreSQL databases from `LORE_TEST_PG_URL` for backends that need a
//! server, and the writes the SQLite stores' full-text merge tests make.

/// The server URL for PostgreSQL tests, or `None` (with a message saying the tests were skipped).
pub fn pg_test_url(test: &str) -> Option<String> {
    match std::env::var("LORE_TEST_PG_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            // Written to the stderr handle directly so that the test harness does not swallow it.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: set LORE_TEST_PG_URL (scripts/pg-test-cluster.sh start) to run the PostgreSQL half"
            );
            None
        }
    }
}

/// Creates an empty database on the server of `base_url` and returns its URL.
#[cfg(feature = "postgres")]
pub fn fresh_pg_database(base_url: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "lore_t_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    );
    let mut client =
        postgres::Client::connect(base_url, postgres::NoTls).expect("connect to LORE_TEST_PG_URL");
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create test database");
    match base_url.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => format!("{base_url}/{name}"),
    }
}

/// A revision as builds before schema 6 wrote them: `entities` entity rows with their derived fields
/// (observation times, attributes and brief) beside a claim row, in both snapshots. Enough entities
/// make SQLite store the snapshots compressed.
pub fn revision_with_derived_entity_fields(
    id: &str,
    entities: usize,
) -> lore_core::model::Revision {
    use serde_json::json;
    let entity = |at: usize| {
        json!({
            "id": format!("e{at}"), "canonical_name": format!("Entity {at}"), "pinned": false,
            "first_observed_at": 1, "last_observed_at": 2,
            "current_attributes": {"has_title": "Chief Lisbon Officer"},
            "current_brief": "Entity · title: Chief Lisbon Officer",
        })
    };
    let snapshot = || {
        serde_json::Value::Object(
            (0..entities)
                .map(|at| (format!("entity:e{at}"), entity(at)))
                .chain([(
                    "claim:c1".to_string(),
                    json!({"id": "c1", "value_text": "Chief Lisbon Officer"}),
                )])
                .collect(),
        )
    };
    lore_core::model::Revision {
        id: id.into(),
        action: lore_core::model::RevisionAction::ExtractionCommit,
        target: "m1".into(),
        secondary: None,
        before: snapshot(),
        after: snapshot(),
        created_at: lore_core::Ts(1),
    }
}

/// Checks that an upgraded store keeps `revision_with_derived_entity_fields(id, entities)` with its
/// entity rows stripped of `Entity::DERIVED_FIELDS` and everything else as it was.
pub fn assert_upgraded_without_derived_entity_fields(
    store: &dyn crate::Store,
    owner: &str,
    id: &str,
    entities: usize,
) {
    let mut expected = revision_with_derived_entity_fields(id, entities);
    for snapshot in [&mut expected.before, &mut expected.after] {
        for row in snapshot.as_object_mut().unwrap().values_mut() {
            if row.get("canonical_name").is_some() {
                let fields = row.as_object_mut().unwrap();
                fields.retain(|name, _| {
                    !lore_core::model::Entity::DERIVED_FIELDS.contains(&name.as_str())
                });
            }
        }
    }
    let mut found = None;
    store
        .read(owner, &mut |tx| {
            found = tx.find_revision(id)?;
            Ok(())
        })
        .unwrap();
    let found = found.expect("the upgraded revision");
    assert_eq!(found.before, expected.before, "{id}: before");
    assert_eq!(found.after, expected.after, "{id}: after");
    assert!(serde_json::to_string(&found.after)
        .unwrap()
        .contains("\"value_text\""));
}

/// How many segments the full-text index of the SQLite file at `path` holds.
pub fn search_index_segments(path: &std::path::Path) -> i64 {
    let raw = rusqlite::Connection::open(path).expect("the database opens");
    raw.query_row(
        "SELECT count(DISTINCT segid) FROM search_fts_idx",
        [],
        |row| row.get(0),
    )
    .expect("the index's segments are counted")
}

/// Writes meeting `m1` of `owner`, then `count` transcript segments of it in a write each, so that
/// each write leaves the full-text index a segment of its own; returns the most segments the index
/// of the file at `path` held after a write.
pub fn write_segments_one_by_one(
    store: &dyn crate::Store,
    path: &std::path::Path,
    owner: &str,
    count: i64,
) -> i64 {
    store
        .write(owner, &mut |tx| {
            tx.insert_meeting(&crate::conformance::sample_meeting("m1"))
        })
        .expect("the meeting is written");
    let mut most = 0;
    for at in 0..count {
        store
            .write(owner, &mut |tx| {
                tx.insert_segment(&lore_core::model::Segment {
                    meeting: "m1".into(),
                    id: format!("s{at}"),
                    seq: at,
                    start_ms: at * 1_000,
                    end_ms: at * 1_000 + 900,
                    speaker_label: None,
                    attribution: lore_core::model::Attribution::Unmapped,
                    text: format!("word{at} common words of segment {at}"),
                })
            })
            .expect("a segment is written");
        most = most.max(search_index_segments(path));
    }
    most
}
