//! Undo restores transaction-time history too (SPEC 4, `--known-at`): a merge deletes the absorbed
//! entity's claims, whose status history goes with them; undoing the merge brings it back.

mod common;

use common::{example_files, memory_engine, TestClock};
use lore_core::model::StatusChange;

const OWNER: &str = "history-owner";

fn histories(engine: &lore_engine::Engine) -> Vec<(String, Vec<StatusChange>)> {
    engine
        .read(OWNER, |tx| {
            let mut all = Vec::new();
            for claim in tx.list_claims()? {
                let history = tx.list_status_changes(&claim.id)?;
                all.push((claim.id, history));
            }
            Ok(all)
        })
        .unwrap()
}

#[test]
fn merge_then_undo_restores_every_claims_status_history() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let engine = memory_engine(&clock);
    let files = example_files();
    for file in files {
        engine.ingest_bundle_file(OWNER, &file).unwrap();
    }
    let before = histories(&engine);
    let merge = engine
        .merge_entities(OWNER, "project:atlas", "project:beacon")
        .unwrap();
    assert_ne!(histories(&engine), before);
    engine.undo(OWNER, &merge.revision).unwrap();
    let after = histories(&engine);
    let restored: Vec<_> = after
        .iter()
        .map(|(id, history)| {
            // Claims the merge re-derived gain one row for the merge and one for the undo.
            let original = before.iter().find(|(b, _)| b == id).map(|(_, h)| h.len());
            (id.clone(), original, history.len())
        })
        .filter(|(_, original, now)| original.is_none_or(|o| *now != o && *now != o + 2))
        .collect();
    assert!(restored.is_empty(), "{restored:?}");
    let ids = |rows: &[(String, Vec<StatusChange>)]| -> Vec<String> {
        rows.iter().map(|(id, _)| id.clone()).collect()
    };
    assert_eq!(ids(&after), ids(&before));
    let problems = lore_engine::check_invariants(&engine, OWNER).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
}

/// Undoing a pin or a manual name still works after a new meeting mentioned the entity: that meeting
/// changed only what every rebuild derives (observation times, the projection), and undo rebuilds
/// what it restores. A change to the entity's own fields since is still a conflict.
#[test]
fn a_manual_edit_is_undone_after_new_evidence_about_the_entity() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let engine = memory_engine(&clock);
    let mut files = example_files();
    let last = files.pop().unwrap();
    for file in &files {
        engine.ingest_bundle_file(OWNER, file).unwrap();
    }
    let show = |engine: &lore_engine::Engine| {
        engine
            .show(OWNER, "project:atlas", &Default::default())
            .unwrap()
            .entity
    };
    let pin = engine.set_pinned(OWNER, "project:atlas", true).unwrap();
    let rename = engine
        .set_manual_name(OWNER, "project:atlas", Some("Orion"))
        .unwrap();
    let before = show(&engine);
    engine.ingest_bundle_file(OWNER, &last).unwrap();
    let after = show(&engine);
    assert_ne!(
        (&before.attributes, &before.brief),
        (&after.attributes, &after.brief),
        "the new meeting changes the project's current view"
    );
    // The pin is older than the rename, which changed the same row's own fields: a conflict.
    assert!(matches!(
        engine.undo(OWNER, &pin.revision),
        Err(lore_engine::EngineError::Conflict(_))
    ));
    engine.undo(OWNER, &rename.revision).unwrap();
    assert_eq!(show(&engine).name, "Atlas");
    engine.undo(OWNER, &pin.revision).unwrap();
    let undone = show(&engine);
    assert!(!undone.pinned);
    // What the new meeting said stays in the view.
    assert_eq!(undone.attributes, after.attributes);
    assert!(lore_engine::check_invariants(&engine, OWNER)
        .unwrap()
        .is_empty());
}
