//! A manual name (`Engine::set_manual_name`): every view shows it (L6: a manual value wins), the
//! entities whose current view names this one are rebuilt with it, search finds it, later evidence
//! does not replace it, and clearing it or undoing the rename brings the sources' name back. Stored
//! state is compared with a rebuild from scratch after every step, on SQLite and PostgreSQL.

mod common;

use common::{assert_consistent, backend_engines, example_files, TestClock};
use lore_engine::{Engine, EngineError, SearchRequest, ShowOptions};

const OWNER: &str = "renaming-owner";

fn ingest(engine: &Engine, files: &[std::path::PathBuf]) {
    for file in files {
        engine.ingest_bundle_file(OWNER, file).unwrap();
    }
}

fn name(engine: &Engine, entity: &str) -> (String, Option<String>) {
    let view = engine
        .show(OWNER, entity, &ShowOptions::default())
        .unwrap()
        .entity;
    (view.name, view.derived_name)
}

/// The entities whose stored projection (the page a server reads) names `target`, and the name.
fn names_shown_by_others(engine: &Engine, target: &str) -> Vec<String> {
    let mut shown = Vec::new();
    for row in engine.list_entities(OWNER).unwrap() {
        let projection = engine.projection(OWNER, &row.id).unwrap();
        if projection.id == target {
            continue;
        }
        let text = serde_json::to_string(&projection.attributes).unwrap() + &projection.brief;
        if projection
            .claims
            .iter()
            .any(|c| c.object.as_deref() == Some(target) || c.context.as_deref() == Some(target))
        {
            shown.push(text);
        }
    }
    shown
}

fn finds(engine: &Engine, query: &str, target: &str) -> bool {
    let request = SearchRequest {
        query: query.into(),
        kind: Some("entity".into()),
        limit: 20,
        newest_first: false,
    };
    engine
        .search(OWNER, &request)
        .unwrap()
        .iter()
        .any(|hit| hit.id == target)
}

#[test]
fn a_manual_name_is_shown_everywhere_and_survives_new_evidence() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let mut files = example_files();
    let last = files.pop().unwrap();
    for (backend, engine, _dir) in backend_engines(
        &clock,
        "a_manual_name_is_shown_everywhere_and_survives_new_evidence",
    ) {
        ingest(&engine, &files);
        let atlas = engine
            .show(OWNER, "project:atlas", &ShowOptions::default())
            .unwrap()
            .entity
            .id;
        assert_eq!(name(&engine, &atlas), ("Atlas".to_string(), None));
        let linking = names_shown_by_others(&engine, &atlas);
        assert!(
            !linking.is_empty() && linking.iter().all(|text| !text.contains("Orion Platform")),
            "{backend}: {linking:?}"
        );

        let rename = engine
            .set_manual_name(OWNER, &atlas, Some("  Orion   Platform "))
            .unwrap();
        assert_eq!(
            name(&engine, &atlas),
            ("Orion Platform".to_string(), Some("Atlas".to_string())),
            "{backend}: the name is trimmed and its spaces collapsed"
        );
        // The people and meetings pointing at the project show its new name in their stored pages.
        let linking = names_shown_by_others(&engine, &atlas);
        let stale: Vec<_> = linking
            .iter()
            .filter(|text| text.contains("\"Atlas\"") || !text.contains("Orion Platform"))
            .collect();
        assert!(stale.is_empty(), "{backend}: stale projections {stale:?}");
        assert!(finds(&engine, "orion", &atlas), "{backend}: search");
        assert!(
            finds(&engine, "atlas", &atlas),
            "{backend}: the sources' name still finds it"
        );
        assert_consistent(&engine, OWNER, &format!("{backend}: after the rename"));

        // Refused: the same name again, nothing, too long, another line, another owner's entity.
        for (input, refused) in [
            (Some("Orion Platform"), "already named"),
            (Some("   "), "must not be empty"),
            (Some(&*"x".repeat(201)), "longer than 200"),
            (Some("Orion\nPlatform"), "one line"),
        ] {
            match engine.set_manual_name(OWNER, &atlas, input) {
                Err(EngineError::Invalid(message) | EngineError::Conflict(message)) => {
                    assert!(message.contains(refused), "{backend}: {message}")
                }
                other => panic!("{backend}: {input:?} gave {other:?}"),
            }
        }
        assert!(matches!(
            engine.set_manual_name("someone-else", &atlas, Some("Mine")),
            Err(EngineError::NotFound(_))
        ));
        assert_eq!(name(&engine, &atlas).0, "Orion Platform");

        // Undoing the rename brings the sources' name back, in the linking pages too.
        engine.undo(OWNER, &rename.revision).unwrap();
        assert_eq!(name(&engine, &atlas), ("Atlas".to_string(), None));
        let linking = names_shown_by_others(&engine, &atlas);
        assert!(
            linking.iter().all(|text| !text.contains("Orion Platform")),
            "{backend}: {linking:?}"
        );
        assert!(!finds(&engine, "orion", &atlas), "{backend}: search");
        assert_consistent(&engine, OWNER, &format!("{backend}: after the undo"));

        // Named again, then a later meeting that calls the project Atlas leaves the manual name in
        // place (L6).
        engine
            .set_manual_name(OWNER, &atlas, Some("Orion"))
            .unwrap();
        ingest(&engine, std::slice::from_ref(&last));
        assert_eq!(name(&engine, &atlas).0, "Orion", "{backend}");
        assert_consistent(&engine, OWNER, &format!("{backend}: after new evidence"));

        // Clearing brings the sources' name back.
        engine.set_manual_name(OWNER, &atlas, None).unwrap();
        assert_eq!(name(&engine, &atlas), ("Atlas".to_string(), None));
        assert!(!finds(&engine, "orion", &atlas), "{backend}: search");
        assert!(matches!(
            engine.set_manual_name(OWNER, &atlas, None),
            Err(EngineError::Conflict(_))
        ));
        assert_consistent(&engine, OWNER, &format!("{backend}: after clearing"));
    }
}
