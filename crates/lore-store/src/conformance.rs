//! The conformance suite every backend must pass, written once and run per implementation
//! (`tests/sqlite.rs` today). It checks the seam's promises, not lifecycle rules: owner isolation,
//! atomic transactions, read-only reads, and faithful round trips of every record kind.

use lore_core::model::*;
use lore_core::Ts;
use serde_json::json;

use crate::{MeetingCounts, SlotFact, Store, StoreError, StoreResult};

/// Runs every check on fresh stores made by `make_store`; panics with the failing check's name.
pub fn run_all(make_store: &dyn Fn() -> Box<dyn Store>) {
    owner_is_part_of_every_key(make_store().as_ref());
    failed_work_rolls_back(make_store().as_ref());
    reads_cannot_write(make_store().as_ref());
    records_round_trip(make_store().as_ref());
    a_slots_claims_follow_the_transactions_own_changes(make_store().as_ref());
    an_entitys_header_is_its_rows(make_store().as_ref());
    deleting_a_meeting_cascades_to_its_rows(make_store().as_ref());
    search_index_follows_every_write_and_stays_per_owner(make_store().as_ref());
    status_history_is_replaced_whole_and_read_as_of(make_store().as_ref());
    identity_rows_restore_in_place(make_store().as_ref());
    identity_facts_round_trip_per_owner(make_store().as_ref());
    api_tokens_round_trip_by_hash_only(make_store().as_ref());
    users_round_trip_by_name(make_store().as_ref());
    web_sessions_round_trip_by_cookie_hash(make_store().as_ref());
    segments_insert_in_one_batch_as_one_by_one(make_store().as_ref());
    an_entity_observed_again_keeps_the_rest_of_its_row(make_store().as_ref());
    projection_and_snippet_reads_equal_their_definitions(make_store().as_ref());
    search_window_is_the_owners_newest_matches(make_store().as_ref());
    evidence_by_slot_is_evidence_by_claim_of_the_slot(make_store().as_ref());
    set_based_deletion_reads_equal_their_definitions(make_store().as_ref());
    claim_derived_updates_reach_every_read(make_store().as_ref());
    revisions_round_trip_small_and_large(make_store().as_ref());
    entity_observations_equal_their_definition(make_store().as_ref());
    entity_redirects_point_old_ids_at_new_ones(make_store().as_ref());
    meeting_counts_equal_the_lists(make_store().as_ref());
    attached_links_equal_their_definition(make_store().as_ref());
    entities_taught_by_a_meeting_equal_their_definition(make_store().as_ref());
    a_meetings_identifier_sources_go_in_one_call(make_store().as_ref());
    identifier_lookups_follow_writes_in_one_transaction(make_store().as_ref());
}

/// Inside one write, `find_entity_by_identifier` answers what the table holds after every earlier
/// write of that transaction: an insert, an insert that lost to an existing holder, a delete, and
/// the cascade of deleting the holding entity; the next transaction reads the same from the rows,
/// and a rolled-back write leaves nothing behind for it.
fn identifier_lookups_follow_writes_in_one_transaction(store: &dyn Store) {
    write(store, "alice", |tx| {
        two_meetings_two_entities(tx)?;
        assert_eq!(tx.find_entity_by_identifier("email", "a@x.com")?, None);
        tx.insert_identifier("email", "a@x.com", "e1")?;
        assert_eq!(
            tx.find_entity_by_identifier("email", "a@x.com")?.as_deref(),
            Some("e1")
        );
        // The first holder keeps it (`DO NOTHING`).
        tx.insert_identifier("email", "a@x.com", "e2")?;
        assert_eq!(
            tx.find_entity_by_identifier("email", "a@x.com")?.as_deref(),
            Some("e1")
        );
        tx.insert_identifier("email", "b@x.com", "e2")?;
        assert_eq!(
            tx.find_entity_by_identifier("email", "b@x.com")?.as_deref(),
            Some("e2")
        );
        tx.delete_identifier("email", "b@x.com")?;
        assert_eq!(tx.find_entity_by_identifier("email", "b@x.com")?, None);
        tx.insert_identifier("email", "b@x.com", "e2")?;
        tx.insert_identifier("domain", "x.com", "e2")?;
        assert_eq!(
            tx.find_entity_by_identifier("domain", "x.com")?.as_deref(),
            Some("e2")
        );
        tx.delete_entity("e2")?;
        assert_eq!(tx.find_entity_by_identifier("email", "b@x.com")?, None);
        assert_eq!(tx.find_entity_by_identifier("domain", "x.com")?, None);
        assert_eq!(
            tx.find_entity_by_identifier("email", "a@x.com")?.as_deref(),
            Some("e1")
        );
        Ok(())
    })
    .expect("identifier writes and lookups");
    let failed = write(store, "alice", |tx| {
        tx.insert_identifier("email", "c@x.com", "e1")?;
        assert_eq!(
            tx.find_entity_by_identifier("email", "c@x.com")?.as_deref(),
            Some("e1")
        );
        Err(StoreError::Backend("abandoned".into()))
    });
    assert!(failed.is_err());
    write(store, "alice", |tx| {
        assert_eq!(
            tx.find_entity_by_identifier("email", "a@x.com")?.as_deref(),
            Some("e1")
        );
        assert_eq!(tx.find_entity_by_identifier("email", "b@x.com")?, None);
        assert_eq!(tx.find_entity_by_identifier("email", "c@x.com")?, None);
        Ok(())
    })
    .expect("a later write reads the rows");
    store
        .read("bob", &mut |tx| {
            assert_eq!(tx.find_entity_by_identifier("email", "a@x.com")?, None);
            Ok(())
        })
        .expect("bob holds no identifiers");
}

/// `delete_identifier_sources_by_meeting` removes exactly the meeting's sources and returns them as
/// `list_identifier_sources_by_meeting` listed them; `list_identifiers_still_taught` keeps the
/// identifiers `find_identifier_source` still finds, per owner.
fn a_meetings_identifier_sources_go_in_one_call(store: &dyn Store) {
    let source = identifier_source;
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            for row in [
                source("email", "b@x.example", "m1", "g1"),
                source("email", "a@x.example", "m1", "g2"),
                source("email", "a@x.example", "m1", "g1"),
                source("platform", "zoom:7", "m1", "g3"),
                source("email", "a@x.example", "m2", "g1"),
            ] {
                tx.insert_identifier_source(&row)?;
            }
            if owner == "bob" {
                tx.insert_identifier_source(&source("email", "b@x.example", "m2", "g1"))?;
            }
            Ok(())
        })
        .expect("identifier sources: writes");
    }
    let identifier = |scheme: &str, value: &str| (scheme.to_string(), value.to_string());
    let asked = [
        identifier("platform", "zoom:7"),
        identifier("email", "c@x.example"),
        identifier("email", "b@x.example"),
        identifier("email", "a@x.example"),
    ];
    for (owner, still) in [
        ("alice", vec![identifier("email", "a@x.example")]),
        (
            "bob",
            vec![
                identifier("email", "a@x.example"),
                identifier("email", "b@x.example"),
            ],
        ),
    ] {
        write(store, owner, |tx| {
            let listed = tx.list_identifier_sources_by_meeting("m1")?;
            assert_eq!(listed.len(), 4);
            assert_eq!(tx.delete_identifier_sources_by_meeting("m1")?, listed);
            assert!(tx.list_identifier_sources_by_meeting("m1")?.is_empty());
            assert_eq!(
                tx.list_identifier_sources_by_meeting("m2")?.len(),
                still.len()
            );
            let mut by_definition = Vec::new();
            for (scheme, value) in &asked {
                if tx.find_identifier_source(scheme, value)?.is_some() {
                    by_definition.push((scheme.clone(), value.clone()));
                }
            }
            by_definition.sort();
            assert_eq!(tx.list_identifiers_still_taught(&asked)?, by_definition);
            assert_eq!(by_definition, still, "{owner}");
            assert!(tx.list_identifiers_still_taught(&[])?.is_empty());
            assert!(tx.delete_identifier_sources_by_meeting("m1")?.is_empty());
            Ok(())
        })
        .expect("identifier sources: deletion");
    }
}

/// `list_entities_taught_by_meeting` (one join) answers what its definition reads source by source:
/// the `(group, entity)` of each of the meeting's sources whose identifier resolves, sorted and
/// distinct, and nothing of another meeting or owner.
fn entities_taught_by_a_meeting_equal_their_definition(store: &dyn Store) {
    let source =
        |value: &str, meeting: &str, group: &str| identifier_source("email", value, meeting, group);
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            tx.upsert_entity(&sample_entity("e1"))?;
            tx.upsert_entity(&sample_entity("e2"))?;
            tx.insert_identifier("email", "a@x.example", "e1")?;
            tx.insert_identifier("email", "b@x.example", "e2")?;
            if owner == "bob" {
                tx.insert_identifier("email", "c@x.example", "e2")?;
            }
            // Group names that sort differently in byte order and in a linguistic collation.
            for (value, meeting, group) in [
                ("b@x.example", "m1", "g1"),
                ("a@x.example", "m1", "g1"),
                ("a@x.example", "m1", "G2"),
                ("c@x.example", "m1", "g3"),
                ("b@x.example", "m2", "g4"),
            ] {
                tx.insert_identifier_source(&source(value, meeting, group))?;
            }
            Ok(())
        })
        .expect("entities taught: writes");
    }
    let pair = |group: &str, entity: &str| (group.to_string(), entity.to_string());
    for (owner, expected) in [
        (
            "alice",
            vec![pair("G2", "e1"), pair("g1", "e1"), pair("g1", "e2")],
        ),
        (
            "bob",
            vec![
                pair("G2", "e1"),
                pair("g1", "e1"),
                pair("g1", "e2"),
                pair("g3", "e2"),
            ],
        ),
    ] {
        store
            .read(owner, &mut |tx| {
                let taught = tx.list_entities_taught_by_meeting("m1")?;
                assert_eq!(taught, crate::entities_taught_by_definition(tx, "m1")?);
                assert_eq!(taught, expected, "{owner}");
                assert!(tx.list_entities_taught_by_meeting("m9")?.is_empty());
                Ok(())
            })
            .expect("entities taught: reads");
    }
}

/// `list_attached_links` (one join) answers what its definition reads attachment by attachment: only
/// attachments whose link is one of the attaching meeting's links, the meeting's external id (its
/// id when the meeting has no row), in link id order, and nothing of another owner's rows.
fn attached_links_equal_their_definition(store: &dyn Store) {
    let link = |id: &str, meeting: Option<&str>, entity: Option<&str>, url: &str| ResourceLink {
        id: id.into(),
        entity: entity.map(str::to_string),
        meeting: meeting.map(str::to_string),
        source_kind: SourceKind::Meeting,
        source_id: meeting.unwrap_or("m1").into(),
        resource_type: ResourceType::Webpage,
        url: url.into(),
        external_key: None,
        title: Some(format!("Title of {id}")),
        provenance: LinkProvenance::MeetingChat,
        ingested_status: "url_only".into(),
        first_seen_at: Ts(10),
        last_seen_at: Ts(20),
    };
    let attach = |link: &str, entity: &str, meeting: &str, reason: &str| LinkAttachment {
        link: link.into(),
        entity: entity.into(),
        meeting: meeting.into(),
        reason: reason.into(),
        evidence: (reason == "claim").then(|| format!("ev-{link}")),
    };
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            two_meetings_two_entities(tx)?;
            let url = |path: &str| format!("https://{owner}.example/{path}");
            for row in [
                link("l1", Some("m1"), None, &url("a")),
                link("l2", Some("m2"), None, &url("b")),
                link("l3", Some("m1"), None, &url("c")),
                link("l4", None, Some("e1"), &url("d")),
                // A meeting without a row (its external id is then its id).
                link("l5", Some("m3"), None, &url("e")),
            ] {
                tx.upsert_resource_link(&row)?;
            }
            let rows = if owner == "alice" {
                vec![
                    attach("l1", "e1", "m1", "claim"),
                    attach("l2", "e1", "m2", "title"),
                    // Not one of m2's links: not listed.
                    attach("l3", "e1", "m2", "title"),
                    attach("l5", "e1", "m3", "repository"),
                    // No such link.
                    attach("l9", "e1", "m1", "claim"),
                    attach("l1", "e2", "m1", "organization"),
                ]
            } else {
                vec![attach("l3", "e1", "m1", "claim")]
            };
            for row in rows {
                tx.upsert_link_attachment(&row)?;
            }
            Ok(())
        })
        .expect("attached links: writes");
    }
    write(store, "alice", |tx| {
        for entity in ["e1", "e2", "missing"] {
            let by_definition = crate::attached_links_by_definition(tx, entity)?;
            assert_eq!(tx.list_attached_links(entity)?, by_definition, "{entity}");
        }
        let e1 = tx.list_attached_links("e1")?;
        let listed: Vec<(&str, &str, &str)> = e1
            .iter()
            .map(|a| {
                (
                    a.link.id.as_str(),
                    a.meeting_external_id.as_str(),
                    a.link.url.as_str(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            vec![
                ("l1", "ext-m1", "https://alice.example/a"),
                ("l2", "ext-m2", "https://alice.example/b"),
                ("l5", "m3", "https://alice.example/e"),
            ]
        );
        assert_eq!(e1[0].attachment, attach("l1", "e1", "m1", "claim"));
        Ok(())
    })
    .expect("attached links equal their definition");
    write(store, "bob", |tx| {
        let e1 = tx.list_attached_links("e1")?;
        assert_eq!(e1.len(), 1);
        assert_eq!(e1[0].link.url, "https://bob.example/c");
        assert!(tx.list_attached_links("e2")?.is_empty());
        Ok(())
    })
    .expect("attached links are the owner's");
}

/// `meeting_counts` counts what the per-meeting lists return, for the owner only.
fn meeting_counts_equal_the_lists(store: &dyn Store) {
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            tx.insert_meeting(&sample_meeting("m1"))?;
            tx.insert_meeting(&sample_meeting("m2"))?;
            tx.upsert_entity(&sample_entity("e1"))?;
            tx.insert_claim(&sample_claim("c1", "e1"))?;
            tx.insert_evidence(&sample_evidence("v1", "c1", "m1"))?;
            tx.insert_segment(&sample_segment("m1", "s1", 0, "hello"))?;
            tx.insert_segment(&sample_segment("m1", "s2", 10, "again"))?;
            tx.insert_segment(&sample_segment("m2", "s1", 0, "other"))?;
            tx.insert_note(&sample_note("n1", "m1"))?;
            for idx in 0..3 {
                tx.insert_participant(&Participant {
                    meeting: "m1".into(),
                    idx,
                    display_name: format!("P{idx}"),
                    email: None,
                    platform_stable_id: None,
                    device_id: None,
                    speaker_label: None,
                    person_entity: None,
                    excluded: idx == 2,
                })?;
            }
            if owner == "bob" {
                tx.insert_evidence(&sample_evidence("v2", "c1", "m1"))?;
                tx.insert_segment(&sample_segment("m1", "s3", 20, "bob's"))?;
            }
            Ok(())
        })
        .expect("meeting counts: writes");
    }
    write(store, "alice", |tx| {
        for meeting in ["m1", "m2", "missing"] {
            let counts = tx.meeting_counts(meeting)?;
            assert_eq!(
                counts.segments,
                tx.list_segments(meeting)?.len(),
                "{meeting}"
            );
            assert_eq!(counts.notes, tx.list_notes(meeting)?.len(), "{meeting}");
            assert_eq!(
                counts.participants,
                tx.list_participants(meeting)?.len(),
                "{meeting}"
            );
            assert_eq!(
                counts.evidence,
                tx.list_evidence_by_meeting(meeting)?.len(),
                "{meeting}"
            );
        }
        let expected = MeetingCounts {
            segments: 2,
            notes: 1,
            participants: 3,
            evidence: 1,
        };
        assert_eq!(tx.meeting_counts("m1")?, expected, "bob's rows left out");
        Ok(())
    })
    .expect("meeting counts: alice");
}

/// `entity_observations` is `find_alias_bounds` and `list_observation_times` in one call: the
/// earliest name by time then text (ties included), the latest naming, and every observation time of
/// the entity's names and of its claims' evidence, for the owner only.
fn entity_observations_equal_their_definition(store: &dyn Store) {
    let alias = |entity: &str, name: &str, meeting: &str, at: i64| Alias {
        entity: entity.into(),
        alias: name.into(),
        meeting: meeting.into(),
        observed_at: Ts(at),
    };
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            tx.insert_meeting(&sample_meeting("m1"))?;
            tx.insert_meeting(&sample_meeting("m2"))?;
            for entity in ["e1", "e2", "e3"] {
                tx.upsert_entity(&sample_entity(entity))?;
            }
            tx.insert_claim(&sample_claim("c1", "e1"))?;
            tx.insert_claim(&sample_claim("c2", "e2"))?;
            let mut evidence = sample_evidence("v1", "c1", "m1");
            evidence.observed_at = Ts(15);
            tx.insert_evidence(&evidence)?;
            tx.insert_evidence(&sample_evidence("v2", "c2", "m2"))?;
            // Two names at the earliest time: the first by text wins ("Ann" < "Anne" < "ann").
            tx.insert_alias(&alias("e1", "ann", "m1", 20))?;
            tx.insert_alias(&alias("e1", "Anne", "m1", 20))?;
            tx.insert_alias(&alias("e1", "Ann", "m1", 20))?;
            tx.insert_alias(&alias("e1", "Ann", "m2", 40))?;
            if owner == "bob" {
                tx.insert_alias(&alias("e1", "Bob's name", "m2", 5))?;
            }
            Ok(())
        })
        .expect("entity observations: writes");
    }
    let agree = |tx: &mut dyn crate::Tx, step: &str| -> StoreResult<()> {
        for entity in ["e1", "e2", "e3", "missing"] {
            let (bounds, mut times) = tx.entity_observations(entity)?;
            assert_eq!(bounds, tx.find_alias_bounds(entity)?, "{entity} {step}");
            let mut expected = tx.list_observation_times(entity)?;
            times.sort();
            expected.sort();
            assert_eq!(times, expected, "{entity} {step}");
            // The folded times: the same count, bounds and weight basis, bit for bit.
            let weight = lore_core::reading::MENTION_WEIGHT;
            let (folded_bounds, folded) = tx.entity_observation_summary(entity, weight)?;
            let of = crate::ObservationSummary::of(times, weight);
            assert_eq!(folded_bounds, bounds, "{entity} {step}");
            assert_eq!(folded, of, "{entity} {step}");
            assert_eq!(folded.weight_basis.to_bits(), of.weight_basis.to_bits());
        }
        Ok(())
    };
    write(store, "alice", |tx| {
        agree(tx, "as written")?;
        let (bounds, times) = tx.entity_observations("e1")?;
        assert_eq!(bounds, Some(("Ann".to_string(), Ts(20), Ts(40))));
        assert_eq!(times.len(), 5, "four names and one evidence row");
        let (bounds, times) = tx.entity_observations("e2")?;
        assert_eq!(bounds, None, "no names");
        assert_eq!(times.len(), 1);
        assert_eq!(tx.entity_observations("e3")?, (None, Vec::new()));
        // A claim moved to another subject takes its evidence's times along; a deleted evidence
        // row or claim takes its own, within the transaction that changed them.
        tx.upsert_claim(&sample_claim("c2", "e1"))?;
        agree(tx, "after the move")?;
        assert_eq!(tx.entity_observations("e1")?.1.len(), 6);
        assert!(tx.entity_observations("e2")?.1.is_empty());
        tx.delete_evidence_many(&["v1".to_string()])?;
        agree(tx, "after the evidence deletion")?;
        tx.delete_evidence_many(&["v2".to_string()])?;
        tx.delete_claim("c2")?;
        agree(tx, "after the claim deletion")?;
        assert_eq!(tx.entity_observations("e1")?.1.len(), 4, "the names only");
        tx.delete_aliases_by_meeting("m1")?;
        agree(tx, "after a meeting's names left")?;
        assert_eq!(
            tx.entity_observations("e1")?.1.len(),
            1,
            "the second meeting's name"
        );
        Ok(())
    })
    .expect("entity observations: alice");
}

/// An entity's header is its row's (`Entity::header`), follows the row's changes in the same
/// transaction, and is not found for a missing id or another owner's.
fn an_entitys_header_is_its_rows(store: &dyn Store) {
    write(store, "alice", |tx| {
        let mut entity = sample_entity("e1");
        entity.do_not_merge_with = vec!["e2".into()];
        entity.weight_basis = 1.5;
        tx.upsert_entity(&entity)?;
        let header = tx.find_entity_header("e1")?.expect("a header");
        assert_eq!(header, entity.header());
        assert!(header.kept_apart);
        assert_eq!(header.observed, entity.observed());
        let observed = Observed {
            first_observed_at: Some(Ts(3)),
            last_observed_at: Some(Ts(9)),
            weight_basis: 2.0,
            weight_latest: Some(Ts(9)),
        };
        tx.update_entity_observed("e1", &observed)?;
        assert_eq!(
            tx.find_entity_header("e1")?.map(|h| h.observed),
            Some(observed)
        );
        entity.status = EntityStatus::Merged;
        entity.canonical_name = "Alice C.".into();
        tx.upsert_entity(&entity)?;
        let header = tx.find_entity_header("e1")?.expect("a header");
        assert_eq!(
            (header.status, header.canonical_name.as_str()),
            (EntityStatus::Merged, "Alice C.")
        );
        assert_eq!(tx.find_entity_header("missing")?, None);
        Ok(())
    })
    .expect("an_entitys_header_is_its_rows: alice");
    store
        .read("bob", &mut |tx| {
            assert_eq!(tx.find_entity_header("e1")?, None, "another owner's entity");
            Ok(())
        })
        .expect("an_entitys_header_is_its_rows: bob");
}

/// A redirect is found by its old id, a second one for the same id replaces it, and another owner
/// sees none.
fn entity_redirects_point_old_ids_at_new_ones(store: &dyn Store) {
    write(store, "alice", |tx| {
        tx.set_entity_redirect("e_old", "e_mid")?;
        tx.set_entity_redirect("e_mid", "e_new")?;
        tx.set_entity_redirect("e_old", "e_new")
    })
    .expect("redirects are written");
    write(store, "bob", |tx| tx.set_entity_redirect("e_other", "e_x")).expect("bob's redirect");
    store
        .read("alice", &mut |tx| {
            assert_eq!(tx.find_entity_redirect("e_old")?.as_deref(), Some("e_new"));
            assert_eq!(tx.find_entity_redirect("e_mid")?.as_deref(), Some("e_new"));
            assert_eq!(tx.find_entity_redirect("e_new")?, None);
            assert_eq!(tx.find_entity_redirect("e_other")?, None);
            assert_eq!(
                tx.list_entity_redirects()?,
                vec![
                    ("e_mid".to_string(), "e_new".to_string()),
                    ("e_old".to_string(), "e_new".to_string())
                ]
            );
            Ok(())
        })
        .expect("alice's redirects read back");
}

/// A revision whose snapshots are a few bytes and one whose snapshots are many kilobytes (what an
/// ingest writes: rows of repeated field names, non-ASCII text) read back exactly, by id and newest
/// first, and only for their owner.
fn revisions_round_trip_small_and_large(store: &dyn Store) {
    let rows: serde_json::Map<String, serde_json::Value> = (0..200)
        .map(|at| {
            (
                format!("claim:c{at}"),
                json!({"id": format!("c{at}"), "subject": "e1", "predicate": "has_title",
                       "value_text": format!("Directrice générale n°{at} — 東京"), "valid_from": at * 1000,
                       "periods": [{"from": at, "to": null}], "conflict": null}),
            )
        })
        .collect();
    let small = Revision {
        id: "r1".into(),
        action: RevisionAction::ManualOverride,
        target: "e1".into(),
        secondary: None,
        before: json!({}),
        after: json!({"entity:e1": {"pinned": true}}),
        created_at: Ts(10),
    };
    let large = Revision {
        id: "r2".into(),
        action: RevisionAction::ExtractionCommit,
        target: "m1".into(),
        secondary: Some("run".into()),
        before: serde_json::Value::Object(rows.clone()),
        after: json!({"rows": rows, "count": 200}),
        created_at: Ts(20),
    };
    write(store, "o", |tx| {
        tx.insert_revision(&small)?;
        tx.insert_revision(&large)?;
        Ok(())
    })
    .expect("revisions are written");
    store
        .read("o", &mut |tx| {
            assert_eq!(tx.find_revision("r1")?.as_ref(), Some(&small));
            assert_eq!(tx.find_revision("r2")?.as_ref(), Some(&large));
            assert_eq!(tx.list_revisions(10)?, vec![large.clone(), small.clone()]);
            Ok(())
        })
        .expect("revisions read back");
    store
        .read("other", &mut |tx| {
            assert_eq!(tx.find_revision("r2")?, None);
            assert!(tx.list_revisions(10)?.is_empty());
            Ok(())
        })
        .expect("another owner reads none");
    // Rewriting snapshots changes only them, only for the owner; an unknown id is a no-op.
    let erased = Revision {
        before: json!({"claim:c1": {"id": "c1"}}),
        after: json!({"claim:c1": null}),
        ..large.clone()
    };
    write(store, "other", |tx| {
        tx.insert_revision(&small)?;
        tx.replace_revision_snapshots("r1", &erased.before, &erased.after)
    })
    .expect("another owner's revision is rewritten");
    write(store, "o", |tx| {
        tx.replace_revision_snapshots("r2", &erased.before, &erased.after)?;
        tx.replace_revision_snapshots("missing", &erased.before, &erased.after)
    })
    .expect("snapshots are rewritten");
    // Revisions are found by the meetings their rows name, for their owner only.
    let naming = Revision {
        id: "r3".into(),
        before: json!({"meeting:m2": {"id": "m2"}, "claim:c1": {"id": "c1"}}),
        after: json!({"evidence:v1": {"id": "v1", "meeting": "m1"}, "meeting:m2": null}),
        ..small.clone()
    };
    write(store, "o", |tx| tx.insert_revision(&naming)).expect("a revision naming meetings");
    write(store, "o", |tx| {
        assert_eq!(tx.list_revisions_naming_meeting("m1")?, ["r3"]);
        assert_eq!(tx.list_revisions_naming_meeting("m2")?, ["r3"]);
        assert!(tx.list_revisions_naming_meeting("c1")?.is_empty());
        Ok(())
    })
    .expect("revisions by meeting");
    write(store, "other", |tx| {
        assert!(tx.list_revisions_naming_meeting("m1")?.is_empty());
        Ok(())
    })
    .expect("another owner's revisions by meeting");
    store
        .read("o", &mut |tx| {
            assert_eq!(tx.find_revision("r2")?.as_ref(), Some(&erased));
            assert_eq!(tx.find_revision("r1")?.as_ref(), Some(&small));
            assert_eq!(
                tx.list_revisions(10)?,
                vec![erased.clone(), naming.clone(), small.clone()]
            );
            Ok(())
        })
        .expect("rewritten revisions read back");
    // A revision written as JSON text reads back as its parsed snapshots, compressed or not, and is
    // found by the meetings it names.
    let encoded = crate::EncodedRevision {
        id: "r4".into(),
        action: RevisionAction::SourceCascadeDelete,
        target: "m5".into(),
        secondary: None,
        before: serde_json::Value::Object(rows).to_string(),
        after: r#"{"meeting:m5":null,"note:n1":{"id":"n1","meeting":"m6"}}"#.into(),
        meetings: ["m5".to_string(), "m6".to_string()].into(),
        created_at: Ts(5),
    };
    write(store, "o", |tx| tx.insert_encoded_revision(&encoded)).expect("an encoded revision");
    write(store, "o", |tx| {
        assert_eq!(tx.find_revision("r4")?, Some(encoded.decode()?));
        assert_eq!(tx.list_revisions_naming_meeting("m5")?, ["r4"]);
        assert_eq!(tx.list_revisions_naming_meeting("m6")?, ["r4"]);
        Ok(())
    })
    .expect("an encoded revision reads back");
    store
        .read("other", &mut |tx| {
            assert_eq!(tx.find_revision("r4")?, None);
            Ok(())
        })
        .expect("another owner reads none");
}

/// `update_claim_derived` changes every derived field, whichever of them change together, and the
/// reads that answer from indexes (the projection, claims by predicate) see the new state; an unknown
/// claim is not found.
fn claim_derived_updates_reach_every_read(store: &dyn Store) {
    write(store, "o", |tx| {
        tx.upsert_entity(&sample_entity("e1"))?;
        let mut claim = sample_claim("c1", "e1");
        claim.derived.superseded_by = None;
        tx.insert_claim(&claim)?;
        type Row = (String, Authority, Option<Ts>, Option<Ts>);
        let projected = |tx: &mut dyn crate::Tx| -> StoreResult<Vec<Row>> {
            Ok(tx
                .list_projected_claims("e1")?
                .into_iter()
                .map(|p| (p.id, p.authority, p.valid_from, p.valid_to))
                .collect())
        };
        let by_predicate = |tx: &mut dyn crate::Tx| -> StoreResult<Vec<ClaimStatus>> {
            Ok(tx
                .list_claims_by_predicate("has_title")?
                .into_iter()
                .map(|c| c.derived.status)
                .collect())
        };
        assert!(projected(tx)?.is_empty(), "superseded: not projected");
        let mut derived = claim.derived.clone();
        // Only the observation times and the period list change.
        derived.last_observed_at = Some(Ts(40));
        derived.periods.push(Period {
            from: Ts(5),
            to: None,
        });
        tx.update_claim_derived("c1", &derived)?;
        assert_eq!(tx.find_claim("c1")?.unwrap().derived, derived);
        assert!(projected(tx)?.is_empty());
        // Status, authority and validity change.
        derived.status = ClaimStatus::Active;
        derived.authority = Authority::Manual;
        derived.valid_from = Some(Ts(2));
        derived.valid_to = None;
        derived.superseded_at = None;
        tx.update_claim_derived("c1", &derived)?;
        assert_eq!(tx.find_claim("c1")?.unwrap().derived, derived);
        assert_eq!(tx.list_claims_by_subject("e1")?[0].derived, derived);
        assert_eq!(
            projected(tx)?,
            [("c1".to_string(), Authority::Manual, Some(Ts(2)), None)]
        );
        assert_eq!(by_predicate(tx)?, [ClaimStatus::Active]);
        // Only the validity changes.
        derived.valid_to = Some(Ts(90));
        tx.update_claim_derived("c1", &derived)?;
        assert_eq!(
            projected(tx)?,
            [(
                "c1".to_string(),
                Authority::Manual,
                Some(Ts(2)),
                Some(Ts(90))
            )]
        );
        // Only the status changes.
        derived.status = ClaimStatus::Expired;
        tx.update_claim_derived("c1", &derived)?;
        assert_eq!(tx.find_claim("c1")?.unwrap().derived, derived);
        assert!(projected(tx)?.is_empty());
        assert_eq!(by_predicate(tx)?, [ClaimStatus::Expired]);
        assert!(matches!(
            tx.update_claim_derived("nothing", &derived),
            Err(StoreError::NotFound(_))
        ));
        Ok(())
    })
    .expect("claim_derived_updates_reach_every_read");
}

/// Four claims of subject `e1` for the per-slot cases: c1 and c2 share the slot (`has_title`), c3
/// is another predicate's slot and c4 the same predicate in the context of `e2`.
fn slot_claims() -> [Claim; 4] {
    let claim = |id: &str, predicate: &str, context: Option<&str>| {
        let mut claim = sample_claim(id, "e1");
        claim.predicate = predicate.into();
        claim.context_entity = context.map(str::to_string);
        claim.derived.superseded_by = None;
        claim
    };
    [
        claim("c2", "has_title", None),
        claim("c1", "has_title", None),
        claim("c3", "works_at", None),
        claim("c4", "has_title", Some("e2")),
    ]
}

/// The set-based reads and writes of a source deletion (L13) answer exactly what their one-by-one
/// definitions answer: `delete_evidence_many` = `delete_evidence` per id, `find_claims` = `find_claim`
/// per distinct id in id order, `list_claims_without_evidence`
/// = `list_evidence_by_claim(..).is_empty()` per claim, `find_identifier_source` = the first of
/// `list_identifier_sources`, and the by-slot status history and supersedes links = the per-claim
/// reads of the slot's claims; other slots, contexts and owners are left out.
fn set_based_deletion_reads_equal_their_definitions(store: &dyn Store) {
    let change = |claim: &str, at: i64, status: ClaimStatus| {
        let mut derived = sample_claim(claim, "e1").derived;
        derived.status = status;
        StatusChange {
            claim: claim.into(),
            recorded_at: Ts(at),
            derived,
        }
    };
    let link = |claim: &str, target: &str, evidence: &str| SupersedesLink {
        claim: claim.into(),
        target: target.into(),
        evidence: evidence.into(),
    };
    let source =
        |value: &str, meeting: &str, group: &str| identifier_source("email", value, meeting, group);
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            two_meetings_two_entities(tx)?;
            for claim in slot_claims() {
                tx.insert_claim(&claim)?;
            }
            for (id, claim) in [("v1", "c1"), ("v2", "c1"), ("v3", "c2"), ("v4", "c3")] {
                tx.insert_evidence(&sample_evidence(id, claim, "m1"))?;
            }
            tx.insert_evidence(&sample_evidence("v5", "c4", "m2"))?;
            tx.insert_supersedes_link(&link("c2", "c1", "v3"))?;
            tx.insert_supersedes_link(&link("c1", "c2", "v2"))?;
            tx.insert_supersedes_link(&link("c1", "c0", "v1"))?;
            tx.insert_supersedes_link(&link("c4", "c3", "v5"))?;
            for row in [
                change("c2", 10, ClaimStatus::Active),
                change("c1", 10, ClaimStatus::Active),
                change("c1", 20, ClaimStatus::Superseded),
                change("c3", 10, ClaimStatus::Active),
                change("c4", 10, ClaimStatus::Active),
            ] {
                tx.insert_status_change(&row)?;
            }
            tx.insert_identifier_source(&source("a@x.example", "m2", "g2"))?;
            tx.insert_identifier_source(&source("a@x.example", "m1", "g1"))?;
            if owner == "bob" {
                let mut only_bobs = slot_claims()[2].clone();
                only_bobs.id = "c9".into();
                tx.insert_claim(&only_bobs)?;
                tx.insert_evidence(&sample_evidence("v6", "c2", "m2"))?;
                tx.insert_identifier_source(&source("b@x.example", "m1", "g1"))?;
            }
            Ok(())
        })
        .expect("set-based deletion: writes");
    }
    write(store, "alice", |tx| {
        let slot = SlotKey {
            subject: "e1".into(),
            predicate: "has_title".into(),
            context: None,
        };
        let mut history = tx.list_status_changes("c1")?;
        history.extend(tx.list_status_changes("c2")?);
        assert_eq!(tx.list_status_changes_by_slot(&slot)?, history);
        assert_eq!(history.len(), 3, "the slot's history, claim by claim");
        let mut links = tx.list_supersedes_links("c1")?;
        links.extend(tx.list_supersedes_links("c2")?);
        assert_eq!(tx.list_supersedes_links_by_slot(&slot)?, links);
        assert_eq!(links.len(), 3, "the slot's links, claim by claim");
        let in_context = SlotKey {
            context: Some("e2".into()),
            ..slot.clone()
        };
        assert_eq!(
            tx.list_supersedes_links_by_slot(&in_context)?,
            tx.list_supersedes_links("c4")?
        );
        assert_eq!(tx.list_status_changes_by_slot(&in_context)?.len(), 1);
        let empty = SlotKey {
            subject: "nobody".into(),
            ..slot
        };
        assert!(tx.list_status_changes_by_slot(&empty)?.is_empty());
        assert!(tx.list_supersedes_links_by_slot(&empty)?.is_empty());

        let first = tx.list_identifier_sources("email", "a@x.example")?[0].clone();
        assert_eq!(first.meeting, "m1");
        assert_eq!(
            tx.find_identifier_source("email", "a@x.example")?,
            Some(first)
        );
        assert_eq!(
            tx.find_identifier_source("email", "b@x.example")?,
            None,
            "bob's"
        );

        let claims: Vec<String> = ["c3", "c1", "c2", "nothing"].map(String::from).into();
        let mut found = Vec::new();
        for id in ["c1", "c2", "c3"] {
            found.extend(tx.find_claim(id)?);
        }
        assert_eq!(found.len(), 3);
        let asked: Vec<String> = ["c3", "c1", "nothing", "c9", "c2", "c1"]
            .map(String::from)
            .into();
        assert_eq!(
            tx.find_claims(&asked)?,
            found,
            "in id order, bob's c9 left out"
        );
        assert!(tx.find_claims(&[])?.is_empty());
        assert_eq!(tx.list_claims_without_evidence(&claims)?, ["nothing"]);
        tx.delete_evidence_many(&[])?;
        tx.delete_evidence_many(&["v1".into(), "v3".into(), "v4".into(), "missing".into()])?;
        assert_eq!(
            tx.list_claims_without_evidence(&claims)?,
            ["c3", "c2", "nothing"],
            "in the order given"
        );
        assert_eq!(tx.list_evidence_by_claim("c1")?.len(), 1);
        assert!(tx.list_claims_without_evidence(&[])?.is_empty());
        Ok(())
    })
    .expect("set-based deletion: alice");
    write(store, "bob", |tx| {
        // Alice's deletion left Bob's rows alone.
        let claims: Vec<String> = ["c1", "c2", "c3", "c4"].map(String::from).into();
        assert!(tx.list_claims_without_evidence(&claims)?.is_empty());
        assert_eq!(tx.list_evidence_by_claim("c2")?.len(), 2);
        Ok(())
    })
    .expect("set-based deletion: bob");
}

/// `list_evidence_by_slot` returns exactly the evidence of the slot's claims, grouped by claim in id
/// order and each claim's rows in `list_evidence_by_claim` order; other slots (of the same subject,
/// with predicates before and after), contexts and owners are left out. `list_slot_facts` is the
/// rules' view of the same rows in the same order.
fn evidence_by_slot_is_evidence_by_claim_of_the_slot(store: &dyn Store) {
    let evidence = |id: &str, claim: &str, observed_at: i64, start_ms: i64| {
        let mut row = sample_evidence(id, claim, "m1");
        row.observed_at = Ts(observed_at);
        row.start_ms = Some(start_ms);
        row
    };
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            tx.insert_meeting(&sample_meeting("m1"))?;
            tx.upsert_entity(&sample_entity("e1"))?;
            tx.upsert_entity(&sample_entity("e2"))?;
            for claim in slot_claims() {
                tx.insert_claim(&claim)?;
            }
            // A predicate of the same subject ordered before the slot's.
            let mut before = sample_claim("c0", "e1");
            before.predicate = "attended".into();
            tx.insert_claim(&before)?;
            tx.insert_evidence(&evidence("v0", "c0", 15, 0))?;
            tx.insert_evidence(&evidence("v3", "c2", 30, 0))?;
            tx.insert_evidence(&evidence("v1", "c2", 10, 5))?;
            tx.insert_evidence(&evidence("v2", "c2", 10, 1))?;
            tx.insert_evidence(&evidence("v4", "c1", 20, 0))?;
            tx.insert_evidence(&evidence("v5", "c3", 20, 0))?;
            tx.insert_evidence(&evidence("v6", "c4", 20, 0))?;
            if owner == "bob" {
                tx.insert_evidence(&evidence("v7", "c1", 5, 0))?;
            }
            Ok(())
        })
        .expect("evidence by slot: writes");
    }
    let ids = |rows: Vec<Evidence>| rows.into_iter().map(|row| row.id).collect::<Vec<_>>();
    write(store, "alice", |tx| {
        let slot = SlotKey {
            subject: "e1".into(),
            predicate: "has_title".into(),
            context: None,
        };
        let mut expected = tx.list_evidence_by_claim("c1")?;
        expected.extend(tx.list_evidence_by_claim("c2")?);
        let rows = tx.list_evidence_by_slot(&slot)?;
        assert_eq!(rows, expected, "the slot's evidence, claim by claim");
        assert_eq!(ids(rows), ["v4", "v2", "v1", "v3"]);
        let in_context = SlotKey {
            context: Some("e2".into()),
            ..slot.clone()
        };
        assert_eq!(ids(tx.list_evidence_by_slot(&in_context)?), ["v6"]);
        let other_predicate = SlotKey {
            predicate: "works_at".into(),
            ..slot.clone()
        };
        assert_eq!(ids(tx.list_evidence_by_slot(&other_predicate)?), ["v5"]);
        let empty = SlotKey {
            subject: "nobody".into(),
            predicate: "has_title".into(),
            context: None,
        };
        assert!(tx.list_evidence_by_slot(&empty)?.is_empty());
        for slot in [&slot, &in_context, &other_predicate, &empty] {
            let facts: Vec<SlotFact> = tx
                .list_evidence_by_slot(slot)?
                .iter()
                .map(SlotFact::of)
                .collect();
            assert_eq!(
                tx.list_slot_facts(slot)?,
                facts,
                "the rules' view of {slot:?}"
            );
        }
        Ok(())
    })
    .expect("evidence by slot: reads");
}

/// `update_entity_observed` writes the observation fields, within the transaction (its reads see
/// them) and after it, for this owner's entity only; the rest of the row stays as stored.
fn an_entity_observed_again_keeps_the_rest_of_its_row(store: &dyn Store) {
    let stored = sample_entity("e1");
    let mut observed = stored.clone();
    observed.first_observed_at = None;
    observed.last_observed_at = Some(Ts(9_000));
    observed.weight_basis = 4.25;
    observed.weight_latest = Some(Ts(9_000));
    assert!(observed.same_but_observed(&stored));
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| tx.upsert_entity(&stored)).expect("entity: insert");
    }
    write(store, "alice", |tx| {
        assert_eq!(tx.find_entity("e1")?, Some(stored.clone()));
        tx.update_entity_observed("e1", &observed.observed())?;
        assert_eq!(tx.find_entity("e1")?, Some(observed.clone()));
        // No stored entity: nothing is written.
        tx.update_entity_observed("e-none", &observed.observed())?;
        assert_eq!(tx.find_entity("e-none")?, None);
        Ok(())
    })
    .expect("entity: observed again");
    store
        .read("alice", &mut |tx| {
            assert_eq!(tx.find_entity("e1")?, Some(observed.clone()));
            Ok(())
        })
        .expect("entity: read back");
    store
        .read("bob", &mut |tx| {
            assert_eq!(
                tx.find_entity("e1")?,
                Some(stored.clone()),
                "bob's entity moved"
            );
            Ok(())
        })
        .expect("entity: bob");
}

/// `insert_segments` stores exactly what one `insert_segment` per row stores (order, nulls,
/// unicode), indexes every row for search, and stays per owner. The lengths take every statement
/// shape SQLite splits a meeting into (rows of 64 down to 1 by powers of two): 130 is 64 + 64 + 2,
/// 61 is 32 + 16 + 8 + 4 + 1.
fn segments_insert_in_one_batch_as_one_by_one(store: &dyn Store) {
    let mut rows: Vec<Segment> = (0..130)
        .map(|i| {
            sample_segment(
                "m1",
                &format!("s{i}"),
                i * 1_000,
                &format!("ünïcode line {i} 'quoted'"),
            )
        })
        .collect();
    rows[3].speaker_label = Some("Speaker \"A\"".into());
    rows[4].attribution = Attribution::LocalMic;
    rows[5].text = "wordonlyinfive".into();
    let short: Vec<Segment> = (0..61)
        .map(|i| sample_segment("m3", &format!("t{i}"), i * 10, &format!("short {i}")))
        .collect();
    write(store, "alice", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.insert_segments(&rows)?;
        tx.insert_meeting(&sample_meeting("m2"))?;
        tx.insert_segments(&[sample_segment("m2", "only", 5, "single row")])?;
        tx.insert_segments(&[])?;
        tx.insert_meeting(&sample_meeting("m3"))?;
        tx.insert_segments(&short)?;
        Ok(())
    })
    .expect("segments: batch insert");
    write(store, "bob", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        assert!(
            tx.list_segments("m1")?.is_empty(),
            "bob sees alice's segments"
        );
        Ok(())
    })
    .expect("segments: bob");
    store
        .read("alice", &mut |tx| {
            assert_eq!(tx.list_segments("m1")?, rows);
            assert_eq!(tx.list_segments("m2")?.len(), 1);
            assert_eq!(tx.list_segments("m3")?, short);
            let hits = search(tx, "wordonlyinfive", Some("segment"))?;
            assert_eq!(hits.len(), 1);
            assert_eq!(hits[0].reference, "m1/s5");
            assert_eq!(hits[0].at, Some(Ts(1_000 + 5_000)));
            Ok(())
        })
        .expect("segments: read back");
}

/// Workspace users are found, listed (by name) and deleted by name; a name is taken once.
fn users_round_trip_by_name(store: &dyn Store) {
    let user = |name: &str| crate::User {
        name: name.into(),
        password_hash: format!("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$hash-of-{name}"),
        created_at: Ts::from_millis(1_000),
    };
    store.insert_user(&user("zoe")).expect("insert user");
    store.insert_user(&user("ada")).expect("insert user");
    assert!(
        store.insert_user(&user("zoe")).is_err(),
        "users: a name is taken once"
    );
    assert_eq!(store.find_user("zoe").unwrap(), Some(user("zoe")));
    assert_eq!(store.find_user("nobody").unwrap(), None);
    assert_eq!(
        store.list_users().unwrap(),
        vec![user("ada"), user("zoe")],
        "users: listed by name"
    );
    assert!(store.delete_user("zoe").unwrap());
    assert!(
        !store.delete_user("zoe").unwrap(),
        "users: second delete finds nothing"
    );
    assert_eq!(store.find_user("zoe").unwrap(), None);
}

/// Web sessions are found by the hash of their cookie, touched, expired by idle time, ended one by
/// one, and ended with their user.
fn web_sessions_round_trip_by_cookie_hash(store: &dyn Store) {
    let session = |hash: &str, owner: &str, seen: i64| crate::WebSession {
        cookie_hash: hash.into(),
        owner: owner.into(),
        created_at: Ts::from_millis(1_000),
        last_seen_at: Ts::from_millis(seen),
    };
    store
        .insert_web_session(&session("h1", "alice", 1_000))
        .unwrap();
    assert!(
        store
            .insert_web_session(&session("h1", "bob", 1_000))
            .is_err(),
        "web_sessions: a duplicate cookie hash is refused"
    );
    store
        .insert_web_session(&session("h2", "alice", 5_000))
        .unwrap();
    store
        .insert_web_session(&session("h3", "bob", 1_000))
        .unwrap();
    assert_eq!(
        store.find_web_session("h1").unwrap(),
        Some(session("h1", "alice", 1_000)),
        "web_sessions: round trip by hash"
    );
    assert_eq!(store.find_web_session("alice").unwrap(), None);
    assert!(store
        .touch_web_session("h1", Ts::from_millis(9_000))
        .unwrap());
    assert!(!store
        .touch_web_session("h9", Ts::from_millis(9_000))
        .unwrap());
    assert_eq!(
        store.find_web_session("h1").unwrap(),
        Some(session("h1", "alice", 9_000)),
        "web_sessions: a touch moves only last_seen_at"
    );
    // Idle since before 5,000: only bob's h3 (alice's h1 was just used, h2 at 5,000 is not before).
    assert_eq!(
        store
            .delete_web_sessions_idle_since(Ts::from_millis(5_000))
            .unwrap(),
        1
    );
    assert_eq!(store.find_web_session("h3").unwrap(), None);
    assert!(store.find_web_session("h2").unwrap().is_some());
    assert!(store.delete_web_session("h2").unwrap());
    assert!(
        !store.delete_web_session("h2").unwrap(),
        "web_sessions: second delete finds nothing"
    );
    // Removing a user ends the sessions signed in as it, and no one else's.
    store
        .insert_web_session(&session("h4", "carol", 1_000))
        .unwrap();
    store
        .insert_user(&crate::User {
            name: "alice".into(),
            password_hash: "$argon2id$...".into(),
            created_at: Ts::from_millis(1_000),
        })
        .unwrap();
    assert!(store.delete_user("alice").unwrap());
    assert_eq!(store.find_web_session("h1").unwrap(), None);
    assert!(store.find_web_session("h4").unwrap().is_some());
    assert!(!store.delete_user("alice").unwrap());
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

/// An identifier source; the first group is the primary one.
fn identifier_source(scheme: &str, value: &str, meeting: &str, group: &str) -> IdentifierSource {
    IdentifierSource {
        scheme: scheme.into(),
        value: value.into(),
        meeting: meeting.into(),
        group: group.into(),
        primary: group == "g1",
    }
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
        weight_basis: 0.123_456_789_012_345_67,
        weight_latest: Some(Ts(2)),
    }
}

/// Meetings `m1` and `m2` and entities `e1` and `e2`.
fn two_meetings_two_entities(tx: &mut dyn crate::Tx) -> StoreResult<()> {
    tx.insert_meeting(&sample_meeting("m1"))?;
    tx.insert_meeting(&sample_meeting("m2"))?;
    tx.upsert_entity(&sample_entity("e1"))?;
    tx.upsert_entity(&sample_entity("e2"))
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

pub fn sample_claim(id: &str, subject: &str) -> Claim {
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

pub fn sample_evidence(id: &str, claim: &str, meeting: &str) -> Evidence {
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
    store
        .read("alice", &mut |tx| {
            assert_eq!(
                tx.list_identifiers_by_entity("e1")?,
                vec![("email".to_string(), "alice@acme.com".to_string())],
                "identifiers of an entity list back"
            );
            Ok(())
        })
        .expect("owner_is_part_of_every_key: identifiers");
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
        assert!(
            tx.list_identifiers_by_entity("e1")?.is_empty(),
            "identifier list leaked across owners"
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

/// A slot's claims, evidence and links, read again after the same transaction added, moved or
/// removed one of its claims, are the slot's new ones (a store that keeps the last slot's claim ids
/// between reads must forget them).
fn a_slots_claims_follow_the_transactions_own_changes(store: &dyn Store) {
    write(store, "o", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        tx.upsert_entity(&sample_entity("e2"))?;
        let first = sample_claim("c1", "e1");
        let slot = first.slot();
        tx.insert_claim(&first)?;
        tx.insert_evidence(&sample_evidence("v1", "c1", "m1"))?;
        assert_eq!(tx.list_claims_by_slot(&slot)?, vec![first.clone()]);
        assert_eq!(tx.list_slot_facts(&slot)?.len(), 1);
        let mut second = sample_claim("c2", "e1");
        tx.insert_claim(&second)?;
        tx.insert_evidence(&sample_evidence("v2", "c2", "m1"))?;
        let ids = |claims: Vec<Claim>| claims.into_iter().map(|c| c.id).collect::<Vec<_>>();
        assert_eq!(ids(tx.list_claims_by_slot(&slot)?), ["c1", "c2"]);
        assert_eq!(tx.list_slot_facts(&slot)?.len(), 2);
        // Moved to another subject: it leaves this slot and is in that one.
        second.subject = "e2".into();
        tx.upsert_claim(&second)?;
        assert_eq!(ids(tx.list_claims_by_slot(&slot)?), ["c1"]);
        assert_eq!(tx.list_slot_facts(&slot)?.len(), 1);
        assert_eq!(ids(tx.list_claims_by_slot(&second.slot())?), ["c2"]);
        tx.delete_claim("c1")?;
        assert!(tx.list_claims_by_slot(&slot)?.is_empty());
        assert!(tx.list_slot_facts(&slot)?.is_empty());
        assert!(tx.list_supersedes_links_by_slot(&slot)?.is_empty());
        Ok(())
    })
    .expect("a_slots_claims_follow_the_transactions_own_changes");
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
        tx.insert_note(&sample_note("n1", "m1"))?;
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

fn sample_note(id: &str, meeting: &str) -> Note {
    Note {
        id: id.into(),
        meeting: meeting.into(),
        local_id: id.into(),
        created_at: Ts(5),
        author: None,
        text: "note".into(),
    }
}

/// A transcript segment of `meeting` starting at `start_ms`.
/// The turns of the AMI meeting transcripts in `../shared/data`, in file order, at most `limit`.
/// That folder is not part of the repository: none (and a message) when it is absent.
pub fn transcript_lines(limit: usize) -> Vec<String> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/qmsum-ami");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipped the transcripts: {} not found", dir.display());
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    paths.sort();
    let mut lines = Vec::new();
    for path in paths {
        let meeting: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for turn in meeting["meeting_transcripts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if lines.len() == limit {
                return lines;
            }
            lines.push(turn["content"].as_str().unwrap_or_default().to_string());
        }
    }
    lines
}

pub fn sample_segment(meeting: &str, id: &str, start_ms: i64, text: &str) -> Segment {
    Segment {
        meeting: meeting.into(),
        id: id.into(),
        seq: start_ms,
        start_ms,
        end_ms: start_ms + 10,
        speaker_label: None,
        attribution: Attribution::Unmapped,
        text: text.into(),
    }
}

fn search(
    tx: &mut dyn crate::Tx,
    text: &str,
    kind: Option<&str>,
) -> StoreResult<Vec<crate::SearchCandidate>> {
    let query = lore_core::search::parse_search_query(text).expect("valid test query");
    tx.search_candidates(&query, kind, 100)
}

/// The search index follows inserts, renames, aliases and deletes (cascades included) in the same
/// transaction, and never returns another owner's text (L13, L20).
fn search_index_follows_every_write_and_stays_per_owner(store: &dyn Store) {
    write(store, "alice", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.insert_segment(&sample_segment(
            "m1",
            "s1",
            61_000,
            "The cutover runbook is ready",
        ))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        tx.insert_claim(&sample_claim("c1", "e1"))?;
        Ok(())
    })
    .expect("search: alice writes");
    let bobs_doc = std::cell::Cell::new(None);
    write(store, "bob", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.insert_segment(&sample_segment("m1", "s1", 0, "Bob's cutover runbook"))?;
        bobs_doc.set(search(tx, "runbook", None)?.first().map(|hit| hit.doc));
        Ok(())
    })
    .expect("search: bob writes");
    let bobs_doc = bobs_doc.get().expect("bob's segment is found");
    write(store, "alice", |tx| {
        let query = lore_core::search::parse_search_query("runbook").expect("query");
        assert_eq!(
            tx.find_search_snippet(&query, bobs_doc)?,
            None,
            "another owner's document has no snippet (L20)"
        );
        assert!(tx.list_search_snippets(&query, &[bobs_doc])?.is_empty());
        let hits = search(tx, "\"cutover runbook\"", None)?;
        assert_eq!(hits.len(), 1, "search returned another owner's text");
        assert_eq!(hits[0].kind, "segment");
        assert_eq!(hits[0].reference, "m1/s1");
        assert_eq!(hits[0].meeting.as_deref(), Some("m1"));
        assert_eq!(hits[0].start_ms, Some(61_000));
        assert_eq!(hits[0].at, Some(Ts(1_000 + 61_000)));
        let query = lore_core::search::parse_search_query("runbook").expect("query");
        let snippet = tx.find_search_snippet(&query, hits[0].doc)?;
        assert_eq!(snippet.as_deref(), Some("The cutover [runbook] is ready"));
        assert_eq!(search(tx, "researcher", Some("claim"))?.len(), 1);
        assert_eq!(search(tx, "researcher", Some("segment"))?.len(), 0);
        assert_eq!(search(tx, "chen", Some("entity"))?.len(), 1);
        tx.insert_alias(&Alias {
            entity: "e1".into(),
            alias: "Ally Chen".into(),
            meeting: "m1".into(),
            observed_at: Ts(1_000),
        })?;
        assert_eq!(search(tx, "ally", None)?.len(), 1, "aliases are searchable");
        let mut renamed = sample_entity("e1");
        renamed.manual_name = Some("Dr Alice Chen".into());
        tx.upsert_entity(&renamed)?;
        assert_eq!(search(tx, "dr", None)?.len(), 1, "renames are searchable");
        tx.delete_claim("c1")?;
        assert!(
            search(tx, "researcher", None)?.is_empty(),
            "deleted claim found"
        );
        tx.delete_meeting("m1")?;
        tx.delete_aliases_by_meeting("m1")?;
        assert!(
            search(tx, "runbook OR ally", None)?.is_empty(),
            "a deleted meeting's segments and aliases are still found"
        );
        tx.delete_entity("e1")?;
        assert!(search(tx, "chen", None)?.is_empty(), "deleted entity found");
        Ok(())
    })
    .expect("search: alice reads and deletes");
    store
        .read("bob", &mut |tx| {
            assert_eq!(search(tx, "runbook", None)?.len(), 1, "bob lost his text");
            Ok(())
        })
        .expect("search: bob reads");
}

/// `replace_status_history` of claim c1, or `replace_status_history_read` given its rows as read.
fn replace_history(
    tx: &mut dyn crate::Tx,
    rows: &[StatusChange],
    given_read: bool,
) -> StoreResult<()> {
    match given_read {
        true => {
            let read = tx.list_status_changes("c1")?;
            tx.replace_status_history_read("c1", &read, rows)
        }
        false => tx.replace_status_history("c1", rows),
    }
}

fn status_history_is_replaced_whole_and_read_as_of(store: &dyn Store) {
    write(store, "o", |tx| {
        tx.upsert_entity(&sample_entity("e1"))?;
        let claim = sample_claim("c1", "e1");
        tx.insert_claim(&claim)?;
        let mut active = claim.derived.clone();
        active.status = ClaimStatus::Active;
        let mut superseded = claim.derived.clone();
        superseded.status = ClaimStatus::Superseded;
        superseded.superseded_by = Some("c2".into());
        for (at, derived) in [(10, &active), (20, &superseded)] {
            tx.insert_status_change(&StatusChange {
                claim: "c1".into(),
                recorded_at: Ts(at),
                derived: derived.clone(),
            })?;
        }
        assert!(tx.list_status_as_of("e1", Ts(9))?.is_empty());
        assert_eq!(tx.list_status_as_of("e1", Ts(15))?[0].derived, active);
        assert_eq!(tx.list_status_as_of("e1", Ts(20))?[0].derived, superseded);
        let rewritten = vec![StatusChange {
            claim: "c1".into(),
            recorded_at: Ts(12),
            derived: active.clone(),
        }];
        tx.replace_status_history("c1", &rewritten)?;
        assert_eq!(tx.list_status_changes("c1")?, rewritten);
        assert_eq!(tx.list_status_as_of("e1", Ts(30))?[0].derived, active);
        // A new history that shares a first part with the stored one (a backend may keep those
        // rows), then differs, grows, shrinks, or differs only in the derived state.
        let row = |at: i64, derived: &ClaimDerived| StatusChange {
            claim: "c1".into(),
            recorded_at: Ts(at),
            derived: derived.clone(),
        };
        let mut later = superseded.clone();
        later.last_observed_at = Some(Ts(40));
        for history in [
            vec![row(12, &active), row(20, &superseded), row(30, &active)],
            vec![row(12, &active), row(20, &superseded), row(30, &later)],
            vec![row(12, &active), row(25, &superseded)],
            vec![row(12, &active), row(25, &later), row(30, &active)],
            vec![row(12, &active)],
            vec![row(11, &active), row(25, &later)],
            Vec::new(),
            vec![row(12, &active)],
        ] {
            // Each replacement both ways: alone, and given the history as read (the same rows).
            for given_read in [false, true] {
                replace_history(tx, &history, given_read)?;
                assert_eq!(tx.list_status_changes("c1")?, history);
                // Appending after a replacement continues the sequence.
                let next = row(50, &later);
                tx.insert_status_change(&next)?;
                let mut grown = history.clone();
                grown.push(next);
                assert_eq!(tx.list_status_changes("c1")?, grown);
                replace_history(tx, &history, given_read)?;
            }
        }
        Ok(())
    })
    .expect("status_history_is_replaced_whole_and_read_as_of");
}

/// Merge, split and undo rewrite rows in place: replacing a claim keeps its evidence and history,
/// identifiers and participants move between entities, and user decisions about participants stay
/// with their owner.
fn identity_rows_restore_in_place(store: &dyn Store) {
    write(store, "o", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        tx.upsert_entity(&sample_entity("e2"))?;
        let mut claim = sample_claim("c1", "e1");
        tx.upsert_claim(&claim)?;
        tx.insert_evidence(&sample_evidence("v1", "c1", "m1"))?;
        tx.insert_status_change(&StatusChange {
            claim: "c1".into(),
            recorded_at: Ts(4),
            derived: claim.derived.clone(),
        })?;
        claim.subject = "e2".into();
        claim.retracted_at = Some(Ts(9));
        claim.derived.status = ClaimStatus::Retracted;
        tx.upsert_claim(&claim)?;
        assert_eq!(
            tx.find_claim("c1")?.as_ref(),
            Some(&claim),
            "every column replaced"
        );
        assert_eq!(tx.list_evidence_by_claim("c1")?.len(), 1, "evidence kept");
        assert_eq!(tx.list_status_changes("c1")?.len(), 1, "history kept");

        tx.insert_identifier("email", "a@x.io", "e1")?;
        assert_eq!(
            tx.list_identifiers_by_entity("e1")?,
            vec![("email".to_string(), "a@x.io".to_string())]
        );
        tx.delete_identifier("email", "a@x.io")?;
        tx.insert_identifier("email", "a@x.io", "e2")?;
        assert_eq!(
            tx.find_entity_by_identifier("email", "a@x.io")?.as_deref(),
            Some("e2")
        );

        let alias = Alias {
            entity: "e1".into(),
            alias: "Al".into(),
            meeting: "m1".into(),
            observed_at: Ts(3),
        };
        tx.insert_alias(&alias)?;
        tx.delete_alias(&alias)?;
        assert!(tx.list_aliases("e1")?.is_empty());

        let mut participant = Participant {
            meeting: "m1".into(),
            idx: 0,
            display_name: "Al".into(),
            email: None,
            platform_stable_id: None,
            device_id: None,
            speaker_label: None,
            person_entity: Some("e1".into()),
            excluded: false,
        };
        tx.insert_participant(&participant)?;
        participant.person_entity = None;
        participant.excluded = true;
        tx.update_participant(&participant)?;
        assert_eq!(tx.list_participants("m1")?, vec![participant.clone()]);
        assert!(tx.list_participants_by_person("e1")?.is_empty());
        tx.delete_participant("m1", 0)?;
        assert!(tx.list_participants("m1")?.is_empty());

        let mapping = ParticipantMapping {
            meeting: "m1".into(),
            key: "name:al".into(),
            source: MappingSource::Excluded,
            display_name: "Al".into(),
            email: None,
            person_entity: Some("e1".into()),
        };
        tx.upsert_participant_mapping(&mapping)?;
        assert_eq!(tx.list_participant_mappings("m1")?, vec![mapping.clone()]);
        tx.upsert_task_decision("t1", TaskStatus::Open)?;
        tx.upsert_task_decision("t1", TaskStatus::Done)?;
        assert_eq!(tx.find_task_decision("t1")?, Some(TaskStatus::Done));
        Ok(())
    })
    .expect("identity_rows_restore_in_place");
    write(store, "other", |tx| {
        assert!(tx.list_participant_mappings("m1")?.is_empty());
        assert!(tx.list_identifiers_by_entity("e2")?.is_empty());
        assert!(tx.find_task("t1")?.is_none());
        assert!(tx.find_task_decision("t1")?.is_none());
        Ok(())
    })
    .expect("identity rows are owner-scoped");
    write(store, "o", |tx| {
        tx.delete_participant_mapping("m1", "name:al")?;
        tx.delete_task_decision("t1")?;
        assert!(tx.find_task_decision("t1")?.is_none());
        assert!(tx.list_participant_mappings("m1")?.is_empty());
        Ok(())
    })
    .expect("deleting a participant mapping");
}

/// Link attachments, identifier sources and meeting tags: round trips, replacement, deletion, the
/// meeting's cascade for its tags, and owner isolation.
fn identity_facts_round_trip_per_owner(store: &dyn Store) {
    let attachment = LinkAttachment {
        link: "l1".into(),
        entity: "e1".into(),
        meeting: "m1".into(),
        reason: "claim".into(),
        evidence: Some("v1".into()),
    };
    let source = IdentifierSource {
        scheme: "email".into(),
        value: "a@x.io".into(),
        meeting: "m1".into(),
        group: "email:a@x.io".into(),
        primary: false,
    };
    let tag = MeetingTag {
        meeting: "m1".into(),
        tag: "launch".into(),
        kind: EntityKind::Project,
        key: "atlas".into(),
    };
    write(store, "o", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        tx.upsert_entity(&sample_entity("e1"))?;
        tx.insert_alias(&Alias {
            entity: "e1".into(),
            alias: "Al".into(),
            meeting: "m1".into(),
            observed_at: Ts(3),
        })?;
        assert_eq!(tx.list_aliases_by_meeting("m1")?.len(), 1);
        tx.upsert_link_attachment(&attachment)?;
        let mut replaced = attachment.clone();
        replaced.reason = "title".into();
        replaced.evidence = None;
        tx.upsert_link_attachment(&replaced)?;
        assert_eq!(
            tx.list_link_attachments_by_meeting("m1")?,
            vec![replaced.clone()]
        );
        assert_eq!(tx.list_link_attachments_by_entity("e1")?, vec![replaced]);
        tx.insert_identifier_source(&source)?;
        let mut primary = source.clone();
        primary.primary = true;
        tx.insert_identifier_source(&primary)?;
        tx.insert_identifier_source(&source)?;
        assert_eq!(
            tx.list_identifier_sources("email", "a@x.io")?,
            vec![primary.clone()],
            "a source once primary stays primary"
        );
        assert_eq!(tx.list_identifier_sources_by_meeting("m1")?, vec![primary]);
        tx.insert_meeting_tag(&tag)?;
        tx.insert_meeting_tag(&tag)?;
        assert_eq!(tx.list_meeting_tags("m1")?, vec![tag.clone()]);
        Ok(())
    })
    .expect("identity facts round trip");
    write(store, "other", |tx| {
        assert!(tx.list_link_attachments_by_meeting("m1")?.is_empty());
        assert!(tx.list_link_attachments_by_entity("e1")?.is_empty());
        assert!(tx.list_identifier_sources("email", "a@x.io")?.is_empty());
        assert!(tx.list_identifier_sources_by_meeting("m1")?.is_empty());
        assert!(tx.list_meeting_tags("m1")?.is_empty());
        assert!(tx.list_aliases_by_meeting("m1")?.is_empty());
        Ok(())
    })
    .expect("identity facts are owner-scoped");
    write(store, "o", |tx| {
        tx.delete_link_attachment("l1", "e1")?;
        tx.delete_identifier_source(&source)?;
        assert!(tx.list_link_attachments_by_entity("e1")?.is_empty());
        assert!(tx.list_identifier_sources("email", "a@x.io")?.is_empty());
        tx.delete_meeting("m1")?;
        assert!(
            tx.list_meeting_tags("m1")?.is_empty(),
            "tags go with their meeting"
        );
        Ok(())
    })
    .expect("deleting identity facts");
}

/// `list_projected_claims` is exactly the active claims of `list_claims_by_subject`, in its order,
/// and `list_search_snippets` is exactly one `find_search_snippet` per matching document; both stay
/// per owner, on the reader (read) and inside a write.
fn projection_and_snippet_reads_equal_their_definitions(store: &dyn Store) {
    let statuses = [
        ClaimStatus::Active,
        ClaimStatus::Superseded,
        ClaimStatus::Active,
        ClaimStatus::Retracted,
        ClaimStatus::Active,
    ];
    for owner in ["alice", "bob"] {
        write(store, owner, |tx| {
            tx.upsert_entity(&sample_entity("e1"))?;
            tx.upsert_entity(&sample_entity("e2"))?;
            tx.insert_meeting(&sample_meeting("m1"))?;
            for (index, status) in statuses.iter().enumerate() {
                let mut claim = sample_claim(&format!("c{}", 9 - index), "e1");
                claim.predicate = ["works_at", "has_title"][index % 2].into();
                claim.derived.status = *status;
                claim.derived.valid_to = (index == 2).then_some(Ts(7));
                claim.object_entity = (index == 4).then(|| "e2".to_string());
                claim.value_text = (index != 4).then(|| format!("{owner} value {index}"));
                tx.insert_claim(&claim)?;
                for seen in 0..index {
                    let mut evidence =
                        sample_evidence(&format!("v{index}{seen}"), &claim.id, "m1");
                    evidence.observed_at = Ts(2_000 - 100 * seen as i64);
                    tx.insert_evidence(&evidence)?;
                }
            }
            let mut elsewhere = sample_claim("c_other", "e2");
            elsewhere.derived.status = ClaimStatus::Active;
            tx.insert_claim(&elsewhere)?;
            tx.insert_evidence(&sample_evidence("v_other", "c_other", "m1"))?;
            let texts = [
                "the cutover runbook is ready",
                "nothing here",
                "runbook review and another runbook",
                "a long line about the runbook that goes on and on well past the sixteen tokens a snippet shows",
            ];
            for (index, text) in texts.iter().enumerate() {
                tx.insert_segment(&sample_segment("m1", &format!("s{index}"), index as i64, text))?;
            }
            Ok(())
        })
        .expect("projection and snippets: writes");
    }
    let check = |tx: &mut dyn crate::Tx| -> StoreResult<()> {
        let expected: Vec<String> = tx
            .list_claims_by_subject("e1")?
            .into_iter()
            .filter(|claim| claim.derived.status == ClaimStatus::Active)
            .map(|claim| claim.id)
            .collect();
        let projected = tx.list_projected_claims("e1")?;
        assert_eq!(
            projected.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
            expected
        );
        assert_eq!(projected.len(), 3, "only the active claims");
        for claim in &projected {
            let full = tx.find_claim(&claim.id)?.expect("projected claim exists");
            assert_eq!(claim.predicate, full.predicate);
            assert_eq!(claim.value_text, full.value_text);
            assert_eq!(claim.object_entity, full.object_entity);
            assert_eq!(claim.context_entity, full.context_entity);
            assert_eq!(claim.authority, full.derived.authority);
            assert_eq!(claim.valid_from, full.derived.valid_from);
            assert_eq!(claim.valid_to, full.derived.valid_to);
        }
        assert_eq!(tx.list_projected_claims("e2")?.len(), 1);
        let mut expected_evidence = Vec::new();
        for claim in tx.list_claims_by_subject("e1")? {
            expected_evidence.push(tx.list_evidence_by_claim(&claim.id)?);
        }
        let mut by_subject: Vec<Vec<Evidence>> = Vec::new();
        for row in tx.list_evidence_by_subject("e1")? {
            match by_subject.last_mut() {
                Some(group) if group[0].claim == row.claim => group.push(row),
                _ => by_subject.push(vec![row]),
            }
        }
        expected_evidence.retain(|group| !group.is_empty());
        expected_evidence.sort_by(|a, b| a[0].claim.cmp(&b[0].claim));
        by_subject.sort_by(|a, b| a[0].claim.cmp(&b[0].claim));
        assert_eq!(
            by_subject, expected_evidence,
            "each claim's evidence, in its order"
        );
        assert_eq!(by_subject.iter().map(Vec::len).sum::<usize>(), 10);
        assert!(tx.list_evidence_by_subject("nobody")?.is_empty());
        assert!(tx.list_projected_claims("nobody")?.is_empty());
        let query = lore_core::search::parse_search_query("runbook").expect("query");
        let docs: Vec<i64> = search(tx, "runbook OR nothing", Some("segment"))?
            .iter()
            .map(|hit| hit.doc)
            .collect();
        assert_eq!(docs.len(), 4);
        let mut expected = Vec::new();
        for &doc in &docs {
            if let Some(snippet) = tx.find_search_snippet(&query, doc)? {
                expected.push((doc, snippet));
            }
        }
        let mut batched = tx.list_search_snippets(&query, &docs)?;
        batched.sort();
        expected.sort();
        assert_eq!(batched, expected);
        assert!(tx.list_search_snippets(&query, &[])?.is_empty());
        let one = tx.list_search_snippets(&query, &docs[..1])?;
        assert!(one.len() <= 1 && one.iter().all(|(doc, _)| *doc == docs[0]));
        Ok(())
    };
    store
        .read("alice", &mut |tx| check(tx))
        .expect("projection and snippets: read");
    write(store, "bob", |tx| check(tx)).expect("projection and snippets: inside a write");
    store
        .read("bob", &mut |tx| {
            let values: Vec<Option<String>> = tx
                .list_projected_claims("e1")?
                .into_iter()
                .map(|claim| claim.value_text)
                .collect();
            assert!(
                values
                    .iter()
                    .flatten()
                    .all(|value| value.starts_with("bob ")),
                "another owner's claim in the projection: {values:?}"
            );
            Ok(())
        })
        .expect("projection and snippets: per owner");
}

/// The bounded candidate window holds the owner's newest matches of the kind, however many newer
/// matches other owners or other kinds hold (a backend may look for it among the newest matches
/// first and must then fall back), and the ranks do not depend on how it was found.
fn search_window_is_the_owners_newest_matches(store: &dyn Store) {
    write(store, "alice", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        for index in 0..6 {
            let text = format!("zebra crossing number {index}");
            tx.insert_segment(&sample_segment("m1", &format!("s{index}"), index, &text))?;
        }
        Ok(())
    })
    .expect("window: alice writes");
    write(store, "bob", |tx| {
        tx.insert_meeting(&sample_meeting("m1"))?;
        let rows: Vec<Segment> = (0..40)
            .map(|index| sample_segment("m1", &format!("s{index}"), index, "zebra zebra herd"))
            .collect();
        tx.insert_segments(&rows)?;
        Ok(())
    })
    .expect("window: bob writes");
    write(store, "alice", |tx| {
        tx.insert_note(&Note {
            id: "n1".into(),
            meeting: "m1".into(),
            local_id: "n1".into(),
            created_at: Ts(9),
            author: None,
            text: "a zebra note".into(),
        })?;
        Ok(())
    })
    .expect("window: alice writes a note");
    store
        .read("alice", &mut |tx| {
            let query = lore_core::search::parse_search_query("zebra").expect("query");
            let all = tx.search_candidates(&query, Some("segment"), 100)?;
            let mut references: Vec<String> = all.iter().map(|c| c.reference.clone()).collect();
            references.sort();
            assert_eq!(
                references,
                (0..6).map(|i| format!("m1/s{i}")).collect::<Vec<_>>()
            );
            // Three per-candidate other matches at most: bob's forty are more than that for a window of 2.
            let mut newest = tx.search_candidates(&query, Some("segment"), 2)?;
            newest.sort_by_key(|c| c.doc);
            let mut expected = all.clone();
            expected.sort_by_key(|c| c.doc);
            assert_eq!(
                newest,
                expected[4..].to_vec(),
                "the owner's two newest, same ranks"
            );
            let notes = tx.search_candidates(&query, Some("note"), 1)?;
            assert_eq!(notes.len(), 1);
            assert_eq!(notes[0].reference, "n1");
            let any = tx.search_candidates(&query, None, 1)?;
            assert_eq!(any.len(), 1);
            assert_eq!(any[0].reference, "n1", "the note is the newest match");
            assert!(tx.search_candidates(&query, Some("claim"), 5)?.is_empty());
            Ok(())
        })
        .expect("window: alice reads");
}
