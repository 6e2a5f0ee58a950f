//! Use cases added for the server: meeting reads and source additions (notes, links, uploads),
//! owner-wide deadline and task lists, uploaded bundles, and API tokens. Every one treats another
//! owner's ids as unknown (L20); notes added later cascade like any source (L13).

mod common;

use common::*;
use lore_engine::{EngineError, ShowOptions, SourceRef, TokenScope};

fn example(prefix: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/meetings");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .unwrap();
    std::fs::read_to_string(file).unwrap()
}

fn not_found<T: std::fmt::Debug>(result: Result<T, EngineError>) {
    assert!(
        matches!(result, Err(EngineError::NotFound(_))),
        "expected not found, got {result:?}"
    );
}

#[test]
fn another_owners_meeting_is_not_found_by_any_new_use_case() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let report = engine.ingest_bundle_json("bob", &example("01-")).unwrap();
    for meeting in [&report.meeting, &report.external_id] {
        not_found(engine.get_meeting("alice", meeting));
        not_found(engine.meeting_transcript("alice", meeting));
        not_found(engine.meeting_excerpt("alice", meeting, "s1", 2));
        not_found(engine.list_notes("alice", meeting));
        not_found(engine.add_note("alice", meeting, "hi", None));
        not_found(engine.add_meeting_link("alice", meeting, "https://example.com", None));
        not_found(engine.add_attachment("alice", meeting, "a.txt", "text/plain", b"x"));
    }
    assert!(engine
        .deadlines("alice", &lore_engine::DEADLINES_IN_FORCE)
        .unwrap()
        .is_empty());
    assert!(engine.tasks("alice", None, None).unwrap().is_empty());
    assert!(!engine
        .deadlines("bob", &lore_engine::DEADLINES_IN_FORCE)
        .unwrap()
        .is_empty());
    assert!(!engine.tasks("bob", None, None).unwrap().is_empty());
    assert!(lore_engine::check_invariants(&engine, "bob")
        .unwrap()
        .is_empty());
}

#[test]
fn an_added_note_is_a_source_that_deletes_like_any_other() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let report = engine.ingest_bundle_json("alice", &example("01-")).unwrap();
    let added = engine
        .add_note(
            "alice",
            &report.external_id,
            "  Call Globex on Monday.  ",
            Some("Dana"),
        )
        .unwrap();
    let notes = engine.list_notes("alice", &report.meeting).unwrap();
    let note = notes.iter().find(|n| n.id == added.id).unwrap();
    assert_eq!(note.text, "Call Globex on Monday.");
    assert_eq!(note.author.as_deref(), Some("Dana"));
    assert!(matches!(
        engine.add_note("alice", &report.meeting, " ", None),
        Err(EngineError::Invalid(_))
    ));
    let deleted = engine
        .delete_source("alice", SourceRef::Note(&added.id))
        .unwrap();
    assert_ne!(deleted.revision, added.revision);
    assert!(engine
        .list_notes("alice", &report.meeting)
        .unwrap()
        .iter()
        .all(|n| n.id != added.id));
    assert!(lore_engine::check_invariants(&engine, "alice")
        .unwrap()
        .is_empty());
}

#[test]
fn transcripts_and_excerpts_carry_offsets_and_speaker_names() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let report = engine.ingest_bundle_json("alice", &example("01-")).unwrap();
    let transcript = engine.meeting_transcript("alice", &report.meeting).unwrap();
    assert_eq!(transcript.segments[0].offset, "00:04");
    assert_eq!(transcript.segments[0].speaker.as_deref(), Some("Dana Ruiz"));
    let excerpt = engine
        .meeting_excerpt("alice", &report.meeting, "s3", 1)
        .unwrap();
    let ids: Vec<&str> = excerpt.segments.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["s2", "s3", "s4"]);
    assert_eq!(excerpt.cited.as_deref(), Some("s3"));
    let capped = engine
        .meeting_excerpt("alice", &report.meeting, "s1", 1000)
        .unwrap();
    assert!(capped.segments.len() <= 1 + lore_engine::MAX_EXCERPT_AROUND);
    not_found(engine.meeting_excerpt("alice", &report.meeting, "s999", 1));
}

#[test]
fn an_uploaded_bundle_cannot_read_server_files() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let mut bundle: serde_json::Value = serde_json::from_str(&example("01-")).unwrap();
    bundle["attachments"] = serde_json::json!([{"id": "a1", "kind": "file", "filename": "x",
        "created_at": "2026-08-03T15:00:00Z", "path": "Cargo.toml"}]);
    let error = engine
        .ingest_bundle_json("alice", &bundle.to_string())
        .unwrap_err();
    assert!(error.to_string().contains("attachments[0].path"), "{error}");
    assert!(engine.list_meetings("alice").unwrap().is_empty());
}

#[test]
fn deadlines_read_past_due_until_evidence_says_otherwise() {
    let clock = TestClock::new("2026-09-01T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    engine.ingest_bundle_json("alice", &example("04-")).unwrap();
    let before: Vec<_> = engine
        .deadlines("alice", &lore_engine::DEADLINES_IN_FORCE)
        .unwrap();
    assert!(!before.is_empty());
    assert!(
        before.iter().all(|d| d.state.as_str() == "upcoming"),
        "{before:?}"
    );
    clock.set(lore_core::Ts::parse("2026-11-29T00:00:00Z").unwrap());
    let after = engine
        .deadlines("alice", &lore_engine::DEADLINES_IN_FORCE)
        .unwrap();
    assert!(
        after.iter().any(|d| d.state.as_str() == "past_due"),
        "{after:?}"
    ); // L10
    let mut sorted = after.clone();
    sorted.sort_by_key(|d| d.due_at);
    assert_eq!(sorted, after, "soonest first");
}

#[test]
fn tokens_resolve_to_their_owner_until_they_expire_or_are_revoked() {
    let clock = TestClock::new("2026-01-01T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let created = engine
        .create_token("alice", TokenScope::Write, Some(7), Some("laptop".into()))
        .unwrap();
    let principal = engine.authenticate_token(&created.secret).unwrap().unwrap();
    assert_eq!(principal.owner, "alice");
    assert!(principal.can_write());
    assert_eq!(engine.authenticate_token("lore_guess").unwrap(), None);
    assert_eq!(engine.authenticate_token(&created.token.id).unwrap(), None);
    clock.set(lore_core::Ts::parse("2026-01-08T00:00:00Z").unwrap());
    assert_eq!(
        engine.authenticate_token(&created.secret).unwrap(),
        None,
        "expired"
    );

    let read = engine
        .create_token("bob", TokenScope::Read, None, None)
        .unwrap();
    assert!(!engine
        .authenticate_token(&read.secret)
        .unwrap()
        .unwrap()
        .can_write());
    assert_eq!(engine.list_tokens(Some("bob")).unwrap().len(), 1);
    engine.revoke_token(&read.token.id).unwrap();
    assert_eq!(engine.authenticate_token(&read.secret).unwrap(), None);
    not_found(engine.revoke_token(&read.token.id));
    assert!(matches!(
        engine.create_token(" ", TokenScope::Read, None, None),
        Err(EngineError::Invalid(_))
    ));
    let _ = ShowOptions::default();
}

/// Web sessions: a cookie names its owner until it goes unused for the idle limit; a use is written
/// at most every ten minutes; only the cookie's hash is stored; idle sessions are purged when a new
/// one starts; signing out ends one.
#[test]
fn web_sessions_last_until_idle_and_store_only_the_cookies_hash() {
    use lore_core::Ts;
    use std::time::Duration;
    let clock = TestClock::new("2026-01-01T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let idle = Duration::from_secs(3600);
    let at = |text: &str| Ts::parse(text).unwrap();
    let cookie = engine.start_web_session("alice", idle).unwrap();
    assert_eq!(cookie.len(), 64);
    let hash = lore_core::ids::sha256_hex(cookie.as_bytes());
    let stored = engine.store().find_web_session(&hash).unwrap().unwrap();
    assert_eq!(stored.owner, "alice");
    assert!(engine.store().find_web_session(&cookie).unwrap().is_none());
    let owner = |engine: &lore_engine::Engine, cookie: &str| {
        engine.web_session_owner(cookie, idle).unwrap()
    };
    assert_eq!(owner(&engine, &cookie).as_deref(), Some("alice"));
    assert_eq!(owner(&engine, "not-a-cookie"), None);
    assert_eq!(owner(&engine, &"a".repeat(4096)), None);

    // Five minutes later: still signed in, the use not written yet.
    clock.set(at("2026-01-01T00:05:00Z"));
    assert_eq!(owner(&engine, &cookie).as_deref(), Some("alice"));
    let seen = |engine: &lore_engine::Engine| {
        engine
            .store()
            .find_web_session(&hash)
            .unwrap()
            .map(|s| s.last_seen_at)
    };
    assert_eq!(seen(&engine), Some(at("2026-01-01T00:00:00Z")));
    // Eleven minutes: written.
    clock.set(at("2026-01-01T00:11:00Z"));
    assert_eq!(owner(&engine, &cookie).as_deref(), Some("alice"));
    assert_eq!(seen(&engine), Some(at("2026-01-01T00:11:00Z")));
    // Used within the hour since then: alive; an hour unused: ended, and its row gone.
    clock.set(at("2026-01-01T01:10:00Z"));
    assert_eq!(owner(&engine, &cookie).as_deref(), Some("alice"));
    clock.set(at("2026-01-01T02:10:00Z"));
    assert_eq!(owner(&engine, &cookie), None, "idle for an hour");
    assert_eq!(seen(&engine), None);

    // Starting a session purges the idle ones of everyone.
    let bob = engine.start_web_session("bob", idle).unwrap();
    clock.set(at("2026-01-01T04:00:00Z"));
    let carol = engine.start_web_session("carol", idle).unwrap();
    let bob_hash = lore_core::ids::sha256_hex(bob.as_bytes());
    assert!(engine
        .store()
        .find_web_session(&bob_hash)
        .unwrap()
        .is_none());
    assert_eq!(owner(&engine, &carol).as_deref(), Some("carol"));
    engine.end_web_session(&carol).unwrap();
    assert_eq!(owner(&engine, &carol), None);
    engine.end_web_session(&carol).unwrap();
}

/// Erasure wins over history (SPEC 4, L13): the revision a meeting's deletion writes names the rows it
/// removed but keeps none of what the meeting said: no quote, title or name of it.
#[test]
fn a_deletions_revision_keeps_no_words_of_the_deleted_meeting() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let report = engine.ingest_bundle_json("alice", &example("01-")).unwrap();
    engine.ingest_bundle_json("alice", &example("02-")).unwrap();
    // A merge copies the claims and evidence it moves (with their quotes) into its revision.
    let merge = engine
        .merge_entities("alice", "alice.novak@globex.com", "priya@northwind.io")
        .unwrap();
    let meeting = engine.get_meeting("alice", &report.meeting).unwrap();
    let quotes: Vec<String> = engine
        .meeting_claims("alice", &report.meeting)
        .unwrap()
        .into_iter()
        .map(|row| row.quote)
        .filter(|quote| quote.len() > 12)
        .collect();
    assert!(!quotes.is_empty(), "the meeting supports claims");
    let deleted = engine
        .delete_source("alice", SourceRef::Meeting(&report.meeting))
        .unwrap();
    assert!(!deleted.deleted.is_empty(), "claims only it supported went");
    let revision = engine
        .read("alice", |tx| Ok(tx.find_revision(&deleted.revision)?))
        .unwrap()
        .expect("the deletion's revision");
    let text = format!("{} {}", revision.before, revision.after);
    for quote in &quotes {
        assert!(
            !text.contains(quote.as_str()),
            "the revision keeps {quote:?}"
        );
    }
    assert!(
        !text.contains(&meeting.title),
        "the revision keeps the title"
    );
    for participant in &meeting.participants {
        let name = format!("|{}|", participant.display_name);
        assert!(!text.contains(&name), "the revision keeps the name {name}");
    }
    // What it removed is still named: the meeting, and every claim the report lists.
    let removed = revision.before.as_object().unwrap();
    assert!(removed.contains_key(&format!("meeting:{}", report.meeting)));
    for claim in &deleted.deleted {
        assert!(removed.contains_key(&format!("claim:{claim}")), "{claim}");
    }
    // Nor does the revision that ingested it, or any other.
    assert_no_revision_contains(&engine, "alice", &quotes);
    assert_no_revision_contains(&engine, "alice", std::slice::from_ref(&meeting.title));
    // The merge's revision lost the meeting's rows and names the rest; it cannot be undone.
    let merged = engine
        .read("alice", |tx| Ok(tx.find_revision(&merge.revision)?))
        .unwrap()
        .expect("the merge's revision");
    assert!(!merged.after.as_object().unwrap().is_empty());
    match engine.undo("alice", &merge.revision) {
        Err(EngineError::Conflict(message)) => assert!(message.contains("erased"), "{message}"),
        other => panic!("undoing an erased merge: {other:?}"),
    }
    assert!(lore_engine::check_invariants(&engine, "alice")
        .unwrap()
        .is_empty());
}

/// Erasure at rest (SPEC 4, L13): a later meeting that mentions an entity records the entity's row in
/// its own revision. The row's projection (its attributes and brief) is derived from the entity's
/// claims, so it would carry what an earlier meeting said; revisions keep entity rows without their
/// derived fields, and deleting that earlier meeting leaves its values in no revision.
#[test]
fn a_deleted_meetings_values_leave_the_entity_rows_of_later_revisions() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let report = engine.ingest_bundle_json("alice", &example("01-")).unwrap();
    for later in ["02-", "03-", "04-"] {
        engine.ingest_bundle_json("alice", &example(later)).unwrap();
    }
    let said = engine.meeting_claims("alice", &report.meeting).unwrap();
    let deleted = engine
        .delete_source("alice", SourceRef::Meeting(&report.meeting))
        .unwrap();
    let remaining: Vec<String> = engine
        .read("alice", |tx| Ok(tx.list_claims()?))
        .unwrap()
        .into_iter()
        .filter_map(|claim| claim.value_text)
        .collect();
    // Values only the deleted meeting said: its claims that went, whose value no claim left has.
    let gone: Vec<String> = said
        .into_iter()
        .filter(|row| deleted.deleted.contains(&row.claim))
        .filter_map(|row| row.value)
        .filter(|value| value.len() > 3 && !remaining.iter().any(|kept| kept.contains(value)))
        .collect();
    assert!(!gone.is_empty(), "the first meeting alone said some values");
    assert_no_revision_contains(&engine, "alice", &gone);
}

fn assert_no_revision_contains(engine: &lore_engine::Engine, owner: &str, texts: &[String]) {
    let revisions = engine
        .read(owner, |tx| Ok(tx.list_revisions(1000)?))
        .unwrap();
    for revision in revisions {
        let text = format!("{} {}", revision.before, revision.after);
        for needle in texts {
            assert!(
                !text.contains(needle.as_str()),
                "revision {} ({:?}) keeps {needle:?}",
                revision.id,
                revision.action
            );
        }
    }
}

/// A meeting ingested again with different content: what only the earlier content said leaves every
/// revision (its ingest's, a merge's that moved its evidence, and the first states the replacing
/// ingest recorded); the ingest of the earlier content can no longer be undone.
#[test]
fn replaced_content_leaves_the_revisions() {
    let clock = TestClock::new("2026-11-29T12:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let first = example("01-");
    let report = engine.ingest_bundle_json("alice", &first).unwrap();
    engine.ingest_bundle_json("alice", &example("02-")).unwrap();
    // A merge that moves the first claim's evidence copies its quote into its revision.
    engine
        .merge_entities("alice", "alice.novak@globex.com", "priya@northwind.io")
        .unwrap();
    let quotes_of = |engine: &lore_engine::Engine| -> Vec<String> {
        engine
            .meeting_claims("alice", &report.meeting)
            .unwrap()
            .into_iter()
            .map(|row| row.quote)
            .collect()
    };
    let before = quotes_of(&engine);
    // The same meeting without its first claim (and that claim's words).
    let mut bundle: serde_json::Value = serde_json::from_str(&first).unwrap();
    bundle["claims"].as_array_mut().unwrap().remove(0);
    let replaced = engine
        .ingest_bundle_json("alice", &bundle.to_string())
        .unwrap();
    assert_eq!(replaced.outcome, lore_engine::IngestOutcome::Replaced);
    let after = quotes_of(&engine);
    let dropped: Vec<String> = before
        .into_iter()
        .filter(|quote| !after.contains(quote))
        .collect();
    assert!(!dropped.is_empty(), "the first claim's quote is gone");
    assert_no_revision_contains(&engine, "alice", &dropped);
    assert!(matches!(
        engine.undo("alice", &report.revision),
        Err(EngineError::Conflict(_))
    ));
    assert!(lore_engine::check_invariants(&engine, "alice")
        .unwrap()
        .is_empty());
}
