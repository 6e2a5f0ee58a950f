//! The conformance suite every backend must pass, written once and run per implementation
//! (`tests/sqlite.rs` today). It checks the seam's promises, not lifecycle rules: owner isolation,
//! atomic transactions, read-only reads, and faithful round trips of every record kind.

use lore_core::model::*;
use lore_core::Ts;
use serde_json::json;

use crate::{Store, StoreError, StoreResult};

/// Runs every check on fresh stores made by `make_store`; panics with the failing check's name.
pub fn run_all(make_store: &dyn Fn() -> Box<dyn Store>) {
    owner_is_part_of_every_key(make_store().as_ref());
    failed_work_rolls_back(make_store().as_ref());
    reads_cannot_write(make_store().as_ref());
    records_round_trip(make_store().as_ref());
    deleting_a_meeting_cascades_to_its_rows(make_store().as_ref());
    api_tokens_round_trip_by_hash_only(make_store().as_ref());
}

/// API tokens are found by the hash of their secret, listed without it, and deleted by public id.
fn api_tokens_round_trip_by_hash_only(store: &dyn Store) {
    let token = crate::ApiToken {
        id: "t_1".into(),
        token_hash: "hash-of-secret".into(),
        owner: "alice".into(),
        scope: "write".into(),
        label: Some("laptop".into()),
        created_at: Ts::from_millis(1_000),
        expires_at: Some(Ts::from_millis(2_000)),
    };
    store.insert_api_token(&token).expect("insert token");
    assert!(
        store.insert_api_token(&token).is_err(),
        "api_tokens: a duplicate hash is refused"
    );
    assert_eq!(
        store.find_api_token_by_hash("hash-of-secret").unwrap(),
        Some(token.clone()),
        "api_tokens: round trip by hash"
    );
    assert_eq!(
        store.find_api_token_by_hash("t_1").unwrap(),
        None,
        "api_tokens: the id is not a secret"
    );
    assert_eq!(store.list_api_tokens().unwrap(), vec![token]);
    assert!(store.delete_api_token("t_1").unwrap());
    assert!(
        !store.delete_api_token("t_1").unwrap(),
        "api_tokens: second delete finds nothing"
    );
    assert_eq!(
        store.find_api_token_by_hash("hash-of-secret").unwrap(),
        None
    );
}

fn write(
    store: &dyn Store,
    owner: &str,
    mut work: impl FnMut(&mut dyn crate::Tx) -> StoreResult<()>,
) -> StoreResult<()> {
    store.write(owner, &mut |tx| work(tx))
}

pub fn sample_entity(id: &str) -> Entity {
    Entity {
        id: id.into(),
        kind: EntityKind::Person,
        canonical_name: "Alice Chen".into(),
        manual_name: None,
        normalized_key: None,
        emails: vec!["alice@acme.com".into()],
        domains: Vec::new(),
        external_keys: Vec::new(),
        status: EntityStatus::Active,
        merged_into: None,
        do_not_merge_with: Vec::new(),
        manual_attributes: Default::default(),
        manual_brief: None,
        pinned: false,
        scope_meeting: None,
        first_observed_at: Some(Ts(1)),
        last_observed_at: Some(Ts(2)),
        current_attributes: Default::default(),
        current_brief: "Alice Chen (person)".into(),
    }
}

pub fn sample_meeting(id: &str) -> Meeting {
    Meeting {
        id: id.into(),
        external_id: format!("ext-{id}"),
        title: "Weekly".into(),
        started_at: Ts(1_000),
        ended_at: Some(Ts(2_000)),
        platform: Some("zoom".into()),
        series: None,
        content_hash: "hash".into(),
    }
}

fn sample_claim(id: &str, subject: &str) -> Claim {
    Claim {
        id: id.into(),
        subject: subject.into(),
        predicate: "has_title".into(),
        object_entity: None,
        value_text: Some("Researcher".into()),
        value_json: Some(json!({"due_at": "2026-01-01T00:00:00.000Z"})),
        value_key: "researcher".into(),
        context_entity: None,
        cardinality: Cardinality::Single,
        group_key: String::new(),
        explicit_valid_from: None,
        explicit_valid_to: Some(Ts(9)),
        retracted_at: None,
        recorded_at: Ts(5),
        derived: ClaimDerived {
            status: ClaimStatus::Superseded,
            authority: Authority::FirstParty,
            valid_from: Some(Ts(1)),
            valid_to: Some(Ts(3)),
            first_observed_at: Some(Ts(1)),
            last_observed_at: Some(Ts(2)),
            superseded_at: Some(Ts(3)),
            superseded_by: Some("c2".into()),
            conflict: Some(ConflictReason::SameMeeting),
            end_outcome: Some(Outcome::Completed),
            periods: vec![Period {
                from: Ts(1),
                to: Some(Ts(3)),
            }],
        },
    }
}

fn sample_evidence(id: &str, claim: &str, meeting: &str) -> Evidence {
    Evidence {
        id: id.into(),
        claim: claim.into(),
        source_kind: SourceKind::Meeting,
        source_id: meeting.into(),
        meeting: Some(meeting.into()),
        observed_at: Ts(1_500),
        segment_ids: vec!["s1".into(), "s2".into()],
        start_ms: Some(500),
        end_ms: Some(900),
        speaker: Some("Alice Chen".into()),
        speaker_label: Some("S1".into()),
        attribution: Some(Attribution::OneMappedSource),
        quote: "I'm a researcher — “quoted”.".into(),
        source_url: None,
        confidence: 0.75,
        extraction_run_id: Some("x1".into()),
        kind: EvidenceKind::Support,
        authority: Authority::FirstParty,
        outcome: None,
        recorded_at: Ts(7),
    }
}

/// L20: rows written for one owner are invisible to another, even by exact id.
fn owner_is_part_of_every_key(store: &dyn Store) {
    write(store, "alice", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        tx.insert_identifier("email", "alice@acme.com", "e1")?;
        tx.insert_claim(&sample_claim("c1", "e1"))?;
        tx.insert_evidence(&sample_evidence("v1", "c1", "m1"))
            .map(|_| ())
    })
    .expect("owner_is_part_of_every_key: write");
    write(store, "mallory", |tx| {
        assert!(
            tx.find_meeting("m1")?.is_none(),
            "meeting leaked across owners"
        );
        assert!(
            tx.find_meeting_by_external_id("ext-m1")?.is_none(),
            "meeting leaked by external id"
        );
        assert!(
            tx.find_entity("e1")?.is_none(),
            "entity leaked across owners"
        );
        assert!(
            tx.find_entity_by_identifier("email", "alice@acme.com")?
                .is_none(),
            "identifier leaked"
        );
        assert!(tx.find_claim("c1")?.is_none(), "claim leaked across owners");
        assert!(
            tx.list_evidence_by_claim("c1")?.is_empty(),
            "evidence leaked across owners"
        );
        assert!(
            tx.list_entities()?.is_empty()
                && tx.list_claims()?.is_empty()
                && tx.list_meetings()?.is_empty()
        );
        // The same ids are free for another owner.
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        assert!(
            matches!(
                tx.update_claim_retracted("c1", Some(Ts(1))),
                Err(StoreError::NotFound(_))
            ),
            "update of another owner's claim must be not found"
        );
        Ok(())
    })
    .expect("owner_is_part_of_every_key: other owner");
    let mut owners = store.owners().expect("owners");
    owners.sort();
    assert_eq!(owners, vec!["alice".to_string(), "mallory".to_string()]);
}

/// A failing unit of work leaves nothing behind.
fn failed_work_rolls_back(store: &dyn Store) {
    let result = write(store, "o", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        Err(StoreError::Conflict("stop here".into()))
    });
    assert!(
        matches!(result, Err(StoreError::Conflict(_))),
        "failed_work_rolls_back: error passes through"
    );
    store
        .read("o", &mut |tx| {
            assert!(
                tx.find_meeting("m1")?.is_none(),
                "meeting survived a rolled-back transaction"
            );
            assert!(
                tx.find_entity("e1")?.is_none(),
                "entity survived a rolled-back transaction"
            );
            Ok(())
        })
        .expect("failed_work_rolls_back: read");
}

fn reads_cannot_write(store: &dyn Store) {
    let result = store.read("o", &mut |tx| tx.insert_meeting(&sample_meeting("m1")));
    assert!(result.is_err(), "a read transaction accepted a write");
    write(store, "o", |tx| tx.insert_meeting(&sample_meeting("m1")))
        .expect("reads_cannot_write: later write works");
}

fn records_round_trip(store: &dyn Store) {
    write(store, "o", |tx| {
        let meeting = sample_meeting("m1");
        tx.insert_meeting(&meeting)?;
        assert_eq!(tx.find_meeting("m1")?.as_ref(), Some(&meeting));
        let mut entity = sample_entity("e1");
        entity
            .manual_attributes
            .insert("nickname".into(), "Al".into());
        entity
            .current_attributes
            .insert("has_title".into(), json!("Researcher"));
        tx.upsert_entity(&entity)?;
        assert_eq!(tx.find_entity("e1")?.as_ref(), Some(&entity));
        entity.canonical_name = "Alice C.".into();
        tx.upsert_entity(&entity)?;
        assert_eq!(
            tx.find_entity("e1")?.as_ref(),
            Some(&entity),
            "upsert updates in place"
        );
        let claim = sample_claim("c1", "e1");
        tx.insert_claim(&claim)?;
        assert_eq!(tx.find_claim("c1")?.as_ref(), Some(&claim));
        assert_eq!(tx.list_claims_by_slot(&claim.slot())?, vec![claim.clone()]);
        let evidence = sample_evidence("v1", "c1", "m1");
        assert!(tx.insert_evidence(&evidence)?, "first insert");
        assert!(
            !tx.insert_evidence(&evidence)?,
            "second insert of the same id is a no-op"
        );
        assert_eq!(tx.list_evidence_by_claim("c1")?, vec![evidence.clone()]);
        let alias = Alias {
            entity: "e1".into(),
            alias: "Alice".into(),
            meeting: "m1".into(),
            observed_at: Ts(3),
        };
        tx.insert_alias(&alias)?;
        assert_eq!(tx.list_aliases("e1")?, vec![alias]);
        assert_eq!(
            tx.list_entities_by_alias_key("alice")?,
            vec!["e1".to_string()]
        );
        tx.insert_status_change(&StatusChange {
            claim: "c1".into(),
            recorded_at: Ts(4),
            derived: claim.derived.clone(),
        })?;
        tx.insert_status_change(&StatusChange {
            claim: "c1".into(),
            recorded_at: Ts(6),
            derived: claim.derived.clone(),
        })?;
        assert_eq!(tx.list_status_changes("c1")?.len(), 2);
        let suggestion = Suggestion {
            id: "s1".into(),
            kind: "claim_conflict".into(),
            status: SuggestionStatus::Open,
            target: "c1".into(),
            secondary: None,
            payload: json!({"reason": "manual_value"}),
            created_at: Ts(8),
        };
        tx.upsert_suggestion(&suggestion)?;
        assert_eq!(tx.list_suggestions()?, vec![suggestion]);
        Ok(())
    })
    .expect("records_round_trip");
}

fn deleting_a_meeting_cascades_to_its_rows(store: &dyn Store) {
    write(store, "o", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.insert_segment(&Segment {
            meeting: "m1".into(),
            id: "s1".into(),
            seq: 0,
            start_ms: 0,
            end_ms: 10,
            speaker_label: Some("S1".into()),
            attribution: Attribution::Unmapped,
            text: "hello".into(),
        })?;
        tx.insert_note(&Note {
            id: "n1".into(),
            meeting: "m1".into(),
            local_id: "n1".into(),
            created_at: Ts(5),
            author: None,
            text: "note".into(),
        })?;
        tx.delete_meeting("m1")?;
        assert!(
            tx.list_segments("m1")?.is_empty(),
            "segments outlived their meeting"
        );
        assert!(
            tx.find_note("n1")?.is_none(),
            "notes outlived their meeting"
        );
        Ok(())
    })
    .expect("deleting_a_meeting_cascades_to_its_rows");
}
