//! Extraction runs (L2, L1, L21): a bundle without claims goes through the rules extractor at ingest; the
//! same run is never repeated; another extractor adds its own evidence to the same claims without
//! duplicating them; a dry run stores nothing; every extractor's candidates pass the sensitive-data guard;
//! a meeting of another owner is not found (L20). The invariant check runs after every step.

mod common;

use common::{assert_consistent, file_engine, TestClock};
use lore_engine::{state_dump, EngineError, ExtractOutcome, IngestOutcome};
use lore_extract::{ExtractError, Extraction, Extractor, RulesExtractor};
use lore_ingest::{parse_bundle_value, Bundle};
use serde_json::{json, Value};

const OWNER: &str = "alice-team";

fn transcript_bundle(extra_text: &str) -> Bundle {
    let document = json!({
        "meeting": {"external_id": "weekly-1", "title": "Weekly", "started_at": "2026-11-09T15:00:00Z"},
        "participants": [
            {"display_name": "Alice Chen", "email": "alice@acme.com", "speaker_label": "S1"},
            {"display_name": "Bob Okafor", "email": "bob@acme.com", "speaker_label": "S2"}
        ],
        "segments": [
            {"id": "s1", "start_ms": 0, "end_ms": 4000, "speaker": "S1", "text": "I'm now Principal Researcher at Acme."},
            {"id": "s2", "start_ms": 5000, "end_ms": 9000, "speaker": "S2", "text": format!("I'm leading Beacon. {extra_text}")},
            {"id": "s3", "start_ms": 9000, "end_ms": 12000, "speaker": "S2", "text": "I'll update the runbook by Friday."}
        ]
    });
    parse_bundle_value(&document, &lore_core::Registry::builtin(), None).expect("valid bundle")
}

/// A second extractor that restates one claim the rules extractor also finds, in its own words.
struct Restater {
    id: &'static str,
    claims: Vec<Value>,
}

impl Extractor for Restater {
    fn id(&self) -> String {
        self.id.to_string()
    }
    fn extract(&self, _bundle: &Bundle) -> Result<Extraction, ExtractError> {
        Ok(Extraction {
            claims: self.claims.clone(),
            tasks: Vec::new(),
            diagnostics: Vec::new(),
        })
    }
}

fn title_claim(quote: &str, segment: &str) -> Value {
    json!({"subject": {"kind": "person", "name": "Alice Chen", "email": "alice@acme.com"},
           "predicate": "has_title", "value": "Principal Researcher",
           "evidence": {"segment_ids": [segment], "quote": quote}})
}

fn evidence_count(dump: &Value) -> usize {
    dump["evidence"].as_array().map_or(0, Vec::len)
}

fn count(dump: &Value, key: &str) -> usize {
    dump[key].as_array().map_or(0, Vec::len)
}

#[test]
fn ingest_runs_the_rules_extractor_once_per_content_l2() {
    let clock = TestClock::new("2026-11-10T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let bundle = transcript_bundle("");
    let first = engine.ingest_bundle(OWNER, &bundle).unwrap();
    assert_eq!(first.outcome, IngestOutcome::Created);
    assert!(first.claims >= 2, "rules found {} claims", first.claims);
    assert_consistent(&engine, OWNER, "after ingest");
    let before = state_dump(&engine, OWNER).unwrap();
    let again = engine.ingest_bundle(OWNER, &bundle).unwrap();
    assert_eq!(again.outcome, IngestOutcome::Unchanged);
    assert_eq!(again.revision, first.revision);
    // `lore extract --extractor rules` on the same content is the same run.
    let extract = engine
        .extract_meeting(OWNER, "weekly-1", &RulesExtractor, false)
        .unwrap();
    assert_eq!(extract.outcome, ExtractOutcome::Unchanged);
    assert_eq!(extract.revision.as_deref(), Some(first.revision.as_str()));
    assert_eq!(state_dump(&engine, OWNER).unwrap(), before);
}

#[test]
fn another_extractor_adds_evidence_without_duplicating_claims_l1_l2() {
    let clock = TestClock::new("2026-11-10T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    engine.ingest_bundle(OWNER, &transcript_bundle("")).unwrap();
    let before = state_dump(&engine, OWNER).unwrap();
    let restater = Restater {
        id: "restater@1",
        claims: vec![title_claim("Principal Researcher at Acme", "s1")],
    };
    let report = engine
        .extract_meeting(OWNER, "weekly-1", &restater, false)
        .unwrap();
    assert_eq!(report.outcome, ExtractOutcome::Extracted);
    assert_eq!(report.claims, 1);
    assert_consistent(&engine, OWNER, "after a second extractor");
    let after = state_dump(&engine, OWNER).unwrap();
    assert_eq!(
        count(&after, "claims"),
        count(&before, "claims"),
        "no duplicated claim"
    );
    assert_eq!(
        evidence_count(&after),
        evidence_count(&before) + 1,
        "its own evidence row"
    );
    // The same run again is a no-op.
    let again = engine
        .extract_meeting(OWNER, "weekly-1", &restater, false)
        .unwrap();
    assert_eq!(again.outcome, ExtractOutcome::Unchanged);
    assert_eq!(again.revision, report.revision);
    assert_eq!(state_dump(&engine, OWNER).unwrap(), after);
    // Re-ingesting changed content replaces the meeting, every extractor's evidence with it.
    let replaced = engine
        .ingest_bundle(OWNER, &transcript_bundle("Thanks."))
        .unwrap();
    assert_eq!(replaced.outcome, IngestOutcome::Replaced);
    assert_consistent(&engine, OWNER, "after replacing the meeting");
    let replaced_dump = state_dump(&engine, OWNER).unwrap();
    assert_eq!(evidence_count(&replaced_dump), evidence_count(&before));
}

#[test]
fn dry_run_lists_candidates_and_stores_nothing() {
    let clock = TestClock::new("2026-11-10T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    engine.ingest_bundle(OWNER, &transcript_bundle("")).unwrap();
    let before = state_dump(&engine, OWNER).unwrap();
    let restater = Restater {
        id: "restater@1",
        claims: vec![title_claim("Principal Researcher at Acme", "s1")],
    };
    let dry = engine
        .extract_meeting(OWNER, "weekly-1", &restater, true)
        .unwrap();
    assert_eq!(dry.outcome, ExtractOutcome::DryRun);
    assert_eq!(dry.revision, None);
    assert_eq!(dry.candidates.len(), 1);
    assert_eq!(dry.candidates[0]["predicate"], "has_title");
    assert_eq!(state_dump(&engine, OWNER).unwrap(), before);
    // A dry run of the rules extractor lists what ingest stored, tasks included.
    let rules = engine
        .extract_meeting(OWNER, "weekly-1", &RulesExtractor, true)
        .unwrap();
    assert!(rules.claims >= 2 && rules.tasks == 1, "{rules:?}");
    assert_eq!(state_dump(&engine, OWNER).unwrap(), before);
}

#[test]
fn every_extractor_goes_through_validation_and_the_guard_l21() {
    let clock = TestClock::new("2026-11-10T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let ingest = engine
        .ingest_bundle(
            OWNER,
            &transcript_bundle(
                "My salary is 150k now. I'll send my account number 12345678 to HR by Friday.",
            ),
        )
        .unwrap();
    // The rules extractor's task carrying an account number was screened out at ingest.
    assert!(
        ingest
            .diagnostics
            .iter()
            .any(|d| d.starts_with("tasks[") && d.contains("bank account")),
        "{:?}",
        ingest.diagnostics
    );
    let leaky = Restater {
        id: "leaky@1",
        claims: vec![
            json!({"subject": {"kind": "person", "name": "Bob Okafor", "email": "bob@acme.com"},
                   "predicate": "has_responsibility", "value": "salary is 150k",
                   "evidence": {"segment_ids": ["s2"], "quote": "My salary is 150k now."}}),
            json!({"subject": {"kind": "person", "name": "Bob Okafor"},
                   "predicate": "is_ceo", "value": "yes",
                   "evidence": {"segment_ids": ["s2"], "quote": "I'm leading Beacon."}}),
            title_claim("a quote nobody said", "s1"),
        ],
    };
    let report = engine
        .extract_meeting(OWNER, "weekly-1", &leaky, false)
        .unwrap();
    assert_eq!(report.claims, 0);
    assert_eq!(report.rejected, 1, "{:?}", report.diagnostics);
    let text = report.diagnostics.join("\n");
    assert!(text.contains("sensitive-data guard"), "{text}");
    assert!(text.contains("unknown predicate 'is_ceo'"), "{text}");
    assert!(text.contains("quote not found"), "{text}");
    let dump = state_dump(&engine, OWNER).unwrap().to_string();
    assert!(!dump.contains("150k"), "nothing sensitive stored");
    assert!(
        !dump.contains("account number 12345678 to HR"),
        "no sensitive task stored"
    );
    assert_consistent(&engine, OWNER, "after rejected candidates");
}

#[test]
fn a_meeting_of_another_owner_is_not_found_l20() {
    let clock = TestClock::new("2026-11-10T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let report = engine.ingest_bundle(OWNER, &transcript_bundle("")).unwrap();
    for reference in ["weekly-1", report.meeting.as_str()] {
        let error = engine
            .extract_meeting("someone-else", reference, &RulesExtractor, false)
            .unwrap_err();
        assert!(matches!(error, EngineError::NotFound(_)), "{error}");
    }
}

#[test]
fn deleting_the_meeting_removes_every_extractors_evidence_and_its_runs_l13_l2() {
    let clock = TestClock::new("2026-11-10T00:00:00Z");
    let (engine, _dir) = file_engine(&clock);
    let empty = state_dump(&engine, OWNER).unwrap();
    engine.ingest_bundle(OWNER, &transcript_bundle("")).unwrap();
    let restater = Restater {
        id: "restater@1",
        claims: vec![title_claim("Principal Researcher at Acme", "s1")],
    };
    engine
        .extract_meeting(OWNER, "weekly-1", &restater, false)
        .unwrap();
    engine
        .delete_source(OWNER, lore_engine::SourceRef::Meeting("weekly-1"))
        .unwrap();
    assert_consistent(&engine, OWNER, "after deleting the meeting");
    let dump = state_dump(&engine, OWNER).unwrap();
    assert_eq!(evidence_count(&dump), 0);
    assert_eq!(count(&dump, "claims"), count(&empty, "claims"));
    // The runs went with the meeting: ingesting and extracting again are new runs.
    let again = engine.ingest_bundle(OWNER, &transcript_bundle("")).unwrap();
    assert_eq!(again.outcome, IngestOutcome::Created);
    let report = engine
        .extract_meeting(OWNER, "weekly-1", &restater, false)
        .unwrap();
    assert_eq!(report.outcome, ExtractOutcome::Extracted);
}
