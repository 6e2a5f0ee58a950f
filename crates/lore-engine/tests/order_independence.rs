//! L14: applying the same sources in any order, or deleting a source and re-ingesting it, yields the
//! same state. Random sequences of ingests and deletes over the example bundles are compared with a
//! fresh database that ingested the surviving bundles once, in file order.

mod common;

use std::collections::BTreeSet;

use lore_engine::{state_dump, Engine, SourceRef};
use lore_ingest::Bundle;
use proptest::prelude::*;
use serde_json::json;

use common::{assert_consistent, example_files, memory_engine, TestClock};

const OWNER: &str = "l14";

fn example_bundles() -> Vec<Bundle> {
    let files = example_files();
    let registry = lore_core::Registry::builtin();
    let mut bundles: Vec<Bundle> = files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            lore_ingest::parse_bundle(&text, &registry, file.parent()).unwrap()
        })
        .collect();
    bundles.extend(people_bundles());
    bundles
}

/// Meetings where one person is known by several identifiers (L15): a work email with a personal
/// one as additional, the personal one alone, the work email with a stable platform id, and the
/// platform id with the personal email but no primary address. Any two of the first, third and
/// fourth join all three identifiers; the second and third alone are two people.
fn people_bundles() -> Vec<Bundle> {
    let work = "dana@northwind.example";
    let personal = "dana.r@gmail.com";
    let said = |text: &str| json!([{"id": "s1", "start_ms": 0, "end_ms": 3000, "speaker": "S1", "text": text}]);
    let claim = |subject: serde_json::Value, predicate: &str, value: &str| {
        json!({"subject": subject, "predicate": predicate, "value": value, "authority": "first_party",
               "evidence": {"segment_ids": ["s1"]}})
    };
    let documents = [
        json!({"meeting": {"external_id": "dana-1", "title": "Design sync", "started_at": "2026-08-05T10:00:00Z"},
               "participants": [{"display_name": "Dana Reyes", "email": work, "emails": [personal], "speaker_label": "S1"},
                                {"display_name": "Omar Haddad", "email": "omar@northwind.example", "speaker_label": "S2"}],
               "segments": [{"id": "s1", "start_ms": 0, "end_ms": 3000, "speaker": "S1", "text": "I'm the design lead now."},
                            {"id": "s2", "start_ms": 3000, "end_ms": 6000, "speaker": "S2",
                             "text": "I report to Dana; notes at https://docs.example.com/dana-notes"}],
               "claims": [claim(json!({"kind": "person", "name": "Dana Reyes", "email": work}), "has_title", "Design Lead"),
                          {"subject": {"kind": "person", "name": "Omar Haddad", "email": "omar@northwind.example"},
                           "predicate": "reports_to", "object": {"kind": "person", "name": "Dana Reyes", "email": personal},
                           "authority": "first_party", "evidence": {"segment_ids": ["s2"]}}]}),
        json!({"meeting": {"external_id": "dana-2", "title": "Coffee", "started_at": "2026-08-12T10:00:00Z"},
               "participants": [{"display_name": "Dana R.", "email": personal, "speaker_label": "S1"}],
               "segments": said("I moved to Oslo."),
               "claims": [claim(json!({"kind": "person", "name": "Dana R.", "email": personal}), "located_in", "Oslo")]}),
        json!({"meeting": {"external_id": "dana-3", "title": "Tools", "started_at": "2026-08-19T10:00:00Z"},
               "participants": [{"display_name": "Dana Reyes", "email": work, "platform_stable_id": "slack:U123", "speaker_label": "S1"}],
               "segments": said("I know Figma well."),
               "claims": [claim(json!({"kind": "person", "name": "Dana Reyes", "email": work}), "has_skill", "Figma")]}),
        json!({"meeting": {"external_id": "dana-4", "title": "Promotion", "started_at": "2026-08-26T10:00:00Z"},
               "participants": [{"display_name": "Dana", "platform_stable_id": "slack:U123", "emails": [personal], "speaker_label": "S1"}],
               "segments": said("Now I'm Principal Designer."),
               "claims": [claim(json!({"kind": "person", "name": "Dana"}), "has_title", "Principal Designer")]}),
    ];
    let registry = lore_core::Registry::builtin();
    documents
        .iter()
        .map(|document| lore_ingest::parse_bundle(&document.to_string(), &registry, None).unwrap())
        .collect()
}

#[derive(Clone, Debug)]
enum Op {
    Ingest(usize),
    Delete(usize),
}

fn apply(engine: &Engine, bundles: &[Bundle], ops: &[Op]) -> BTreeSet<usize> {
    apply_as(engine, OWNER, bundles, ops)
}

fn reference_dump(bundles: &[Bundle], present: &BTreeSet<usize>) -> serde_json::Value {
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let engine = memory_engine(&clock);
    for &index in present {
        engine.ingest_bundle(OWNER, &bundles[index]).unwrap();
    }
    state_dump(&engine, OWNER).unwrap()
}

fn op_strategy(n_bundles: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..n_bundles).prop_map(Op::Ingest),
        1 => (0..n_bundles).prop_map(Op::Delete),
    ];
    proptest::collection::vec(op, 1..16)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn l14_any_order_of_ingests_and_deletes_gives_the_same_state(ops in op_strategy(14)) {
        let bundles = example_bundles();
        let clock = TestClock::new("2026-12-01T00:00:00Z");
        let engine = memory_engine(&clock);
        let present = apply(&engine, &bundles, &ops);
        assert_consistent(&engine, OWNER, "after random operations");
        let actual = state_dump(&engine, OWNER).unwrap();
        let expected = reference_dump(&bundles, &present);
        prop_assert!(actual == expected, "state differs after {:?}:\n{}", ops, first_difference(&actual, &expected));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// L14 with L15: a person known by several emails and a platform id gets the same id and rows
    /// whatever the order of the meetings that taught them, and deleting the meeting that joined
    /// two identifiers divides the person again.
    #[test]
    fn l14_people_with_additional_emails_in_any_order(ops in proptest::collection::vec(
        prop_oneof![3 => (10..14usize).prop_map(Op::Ingest), 2 => (10..14usize).prop_map(Op::Delete)], 1..12)) {
        let bundles = example_bundles();
        let clock = TestClock::new("2026-12-01T00:00:00Z");
        let engine = memory_engine(&clock);
        let present = apply(&engine, &bundles, &ops);
        assert_consistent(&engine, OWNER, "after random operations");
        let actual = state_dump(&engine, OWNER).unwrap();
        let expected = reference_dump(&bundles, &present);
        prop_assert!(actual == expected, "state differs after {:?}:\n{}", ops, first_difference(&actual, &expected));
    }
}

/// The person rows of a dump whose name starts with "Dana".
fn danas(dump: &serde_json::Value) -> Vec<String> {
    dump["entities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["canonical_name"].as_str().unwrap().starts_with("Dana"))
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn l14_l15_a_joining_meeting_joins_and_its_deletion_divides() {
    let bundles = example_bundles();
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let engine = memory_engine(&clock);
    // The personal address alone, then the work address with the platform id: two people.
    apply(&engine, &bundles, &[Op::Ingest(11), Op::Ingest(12)]);
    assert_eq!(danas(&state_dump(&engine, OWNER).unwrap()).len(), 2);
    // A meeting that gives both addresses for one participant joins them, under the id of the
    // smallest primary address, as if it had come first.
    let present = apply(
        &engine,
        &bundles,
        &[Op::Ingest(11), Op::Ingest(12), Op::Ingest(10)],
    );
    assert_consistent(&engine, OWNER, "after the join");
    let joined = state_dump(&engine, OWNER).unwrap();
    assert_eq!(danas(&joined).len(), 1);
    assert_eq!(joined, reference_dump(&bundles, &present));
    // Deleting it divides them again, exactly as if it had never been ingested.
    let present = apply(&engine, &bundles, &[Op::Ingest(10), Op::Delete(10)]);
    let present: BTreeSet<usize> = present.union(&[11, 12].into()).copied().collect();
    assert_consistent(&engine, OWNER, "after the division");
    let divided = state_dump(&engine, OWNER).unwrap();
    assert_eq!(danas(&divided).len(), 2);
    assert_eq!(divided, reference_dump(&bundles, &present));
}

#[test]
fn l14_reverse_order_equals_file_order() {
    let bundles = example_bundles();
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let engine = memory_engine(&clock);
    let ops: Vec<Op> = (0..bundles.len()).rev().map(Op::Ingest).collect();
    let present = apply(&engine, &bundles, &ops);
    assert_eq!(
        state_dump(&engine, OWNER).unwrap(),
        reference_dump(&bundles, &present)
    );
}

#[test]
fn l13_l14_deleting_everything_leaves_nothing() {
    let bundles = example_bundles();
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let engine = memory_engine(&clock);
    let mut ops: Vec<Op> = (0..bundles.len()).map(Op::Ingest).collect();
    ops.extend((0..bundles.len()).map(Op::Delete));
    apply(&engine, &bundles, &ops);
    let dump = state_dump(&engine, OWNER).unwrap();
    for table in [
        "entities",
        "claims",
        "evidence",
        "aliases",
        "links",
        "tasks",
        "suggestions",
        "link_attachments",
        "identifiers",
    ] {
        assert_eq!(dump[table], serde_json::json!([]), "{table} left behind");
    }
}

fn first_difference(actual: &serde_json::Value, expected: &serde_json::Value) -> String {
    for table in [
        "entities",
        "claims",
        "evidence",
        "aliases",
        "links",
        "tasks",
        "suggestions",
        "link_attachments",
        "identifiers",
    ] {
        if actual[table] != expected[table] {
            let (a, e) = (
                actual[table].as_array().unwrap(),
                expected[table].as_array().unwrap(),
            );
            for (x, y) in a.iter().zip(e.iter()) {
                if x != y {
                    return format!("{table}:\n  actual   {x}\n  expected {y}");
                }
            }
            return format!("{table}: {} rows vs {} expected", a.len(), e.len());
        }
    }
    String::new()
}

/// The same order-independence check on PostgreSQL: seeded random sequences, each under its own owner
/// in one database, compared with the SQLite reference state (the backends must agree exactly).
#[test]
fn l14_any_order_gives_the_same_state_on_postgres() {
    let Some(base) =
        lore_store::testing::pg_test_url("l14_any_order_gives_the_same_state_on_postgres")
    else {
        return;
    };
    let bundles = example_bundles();
    let blobs = tempfile::tempdir().unwrap();
    let store = lore_store::PostgresStore::open(
        &lore_store::testing::fresh_pg_database(&base),
        blobs.path(),
    )
    .unwrap();
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let shared = clock.0.clone();
    let engine = Engine::new(Box::new(store))
        .with_clock(std::sync::Arc::new(move || *shared.lock().unwrap()));
    let mut state: u64 = 0x5eed;
    let mut next = move |bound: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % bound
    };
    for sequence in 0..6 {
        let owner = format!("sequence-{sequence}");
        let ops: Vec<Op> = (0..12)
            .map(|_| {
                if next(4) == 0 {
                    Op::Delete(next(bundles.len()))
                } else {
                    Op::Ingest(next(bundles.len()))
                }
            })
            .collect();
        let present = apply_as(&engine, &owner, &bundles, &ops);
        assert_consistent(&engine, &owner, "postgres after random operations");
        let actual = state_dump(&engine, &owner).unwrap();
        let expected = reference_dump(&bundles, &present);
        assert!(
            actual == expected,
            "postgres state differs after {ops:?}:\n{}",
            first_difference(&actual, &expected)
        );
    }
}

fn apply_as(engine: &Engine, owner: &str, bundles: &[Bundle], ops: &[Op]) -> BTreeSet<usize> {
    let mut present = BTreeSet::new();
    for op in ops {
        match *op {
            Op::Ingest(index) => {
                engine
                    .ingest_bundle(owner, &bundles[index])
                    .expect("ingest");
                present.insert(index);
            }
            Op::Delete(index) => {
                let deleted = engine.delete_source(
                    owner,
                    SourceRef::Meeting(&bundles[index].meeting.external_id),
                );
                assert_eq!(deleted.is_ok(), present.remove(&index));
            }
        }
    }
    present
}

/// L15 re-keying: a person known by a work email and a platform id, and another known by a personal
/// email, are joined when a later meeting gives the platform id with the personal email; the
/// smallest primary email (the personal one) anchors the joined person, so the first is re-keyed.
/// Its old id still finds the person, in this database and in a copy of it; the redirect is not part
/// of the knowledge, so another ingest order gives the same state (L14: the dumps agree).
#[test]
fn a_re_keyed_persons_old_id_still_finds_it() {
    let bundles = people_bundles();
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let (engine, _dir) = common::file_engine(&clock);
    let options = lore_engine::ShowOptions::default();
    let id_of = |engine: &Engine, who: &str| engine.show(OWNER, who, &options).unwrap().entity.id;
    engine.ingest_bundle(OWNER, &bundles[2]).unwrap();
    let old = id_of(&engine, "dana@northwind.example");
    engine.ingest_bundle(OWNER, &bundles[1]).unwrap();
    assert_ne!(id_of(&engine, "dana.r@gmail.com"), old, "two people so far");
    engine.ingest_bundle(OWNER, &bundles[3]).unwrap();
    let new = id_of(&engine, "dana@northwind.example");
    assert_ne!(old, new, "the personal email now anchors the joined person");
    assert_eq!(id_of(&engine, "dana.r@gmail.com"), new);
    assert_eq!(id_of(&engine, &old), new);
    assert!(matches!(
        engine.show("someone-else", &old, &options),
        Err(lore_engine::EngineError::NotFound(_))
    ));
    assert_consistent(&engine, OWNER, "after the re-key");

    let reverse = memory_engine(&clock);
    for index in [3, 1, 2] {
        reverse.ingest_bundle(OWNER, &bundles[index]).unwrap();
    }
    let (a, b) = (
        state_dump(&engine, OWNER).unwrap(),
        state_dump(&reverse, OWNER).unwrap(),
    );
    assert!(a == b, "{}", first_difference(&a, &b));

    let (copy, _copy_dir) = common::file_engine(&clock);
    engine.copy_owner_to(&copy, OWNER).unwrap();
    assert_eq!(id_of(&copy, &old), new);
}
