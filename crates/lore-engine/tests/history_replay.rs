//! Erasure rewrites status history (SPEC 4, L13): a deletion replays each touched slot from the
//! earliest fact it erased, keeping the rows before it. With a clock that moves forward, what that
//! leaves must read, at every instant, as the slot's surviving facts replayed from the start
//! (`check_status_histories`): after ingests, manual edits and retractions, and after every
//! deletion of the example meetings, in two orders.

mod common;

use lore_core::Ts;
use lore_engine::{check_status_histories, Engine, ManualClaim, SourceRef};

use common::{assert_consistent, example_files, memory_engine, TestClock};

const OWNER: &str = "alice";

fn assert_histories(engine: &Engine, context: &str) {
    let problems = check_status_histories(engine, OWNER).expect("the check runs");
    assert!(problems.is_empty(), "{context}:\n{}", problems.join("\n"));
    assert_consistent(engine, OWNER, context);
}

#[test]
fn every_deletion_leaves_histories_that_replay_from_the_facts() {
    for reverse in [false, true] {
        let clock = TestClock::new("2026-12-01T00:00:00Z");
        let mut at = Ts::parse("2026-12-01T00:00:00Z").unwrap();
        let mut tick = || {
            at = at.plus_millis(60_000);
            clock.set(at);
        };
        let engine = memory_engine(&clock);
        for file in example_files() {
            tick();
            engine.ingest_bundle_file(OWNER, &file).unwrap();
        }
        assert_histories(&engine, "after the ingests");
        // Manual values and a retraction, later than every ingest.
        let people: Vec<_> = engine
            .list_entities_sorted(OWNER, lore_engine::EntitySort::Name)
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == lore_core::EntityKind::Person)
            .collect();
        for (index, person) in people.iter().take(3).enumerate() {
            tick();
            engine
                .add_manual_claim(
                    OWNER,
                    &ManualClaim {
                        entity: person.id.clone(),
                        predicate: "located_in".into(),
                        value: Some(format!("City {index}")),
                        ..Default::default()
                    },
                )
                .unwrap();
        }
        let shown = engine
            .show(OWNER, &people[0].id, &Default::default())
            .unwrap();
        if let Some(claim) = shown
            .claims
            .iter()
            .find(|c| c.authority.as_str() != "manual")
        {
            tick();
            engine.retract_claim(OWNER, &claim.id).unwrap();
        }
        assert_histories(&engine, "after the edits");
        let mut meetings = engine.list_meetings(OWNER).unwrap();
        if reverse {
            meetings.reverse();
        }
        for meeting in meetings {
            tick();
            engine
                .delete_source(OWNER, SourceRef::Meeting(&meeting.id))
                .unwrap();
            assert_histories(
                &engine,
                &format!(
                    "after deleting {} (reverse: {reverse})",
                    meeting.external_id
                ),
            );
        }
    }
}
