//! Whole-state inspection for tests and `lore check`: the invariant check (stored derived state equals
//! a rebuild from scratch) and a canonical dump of everything order-independent (L14).

use std::collections::BTreeSet;

use lore_core::model::*;
use lore_core::slot::evaluate_views;
use lore_store::Tx;
use serde_json::{json, Value};

use crate::apply::{rebuild_entity, slot_views, LoadedSlot};
use crate::{Engine, EngineResult};

/// A status history as `--known-at` reads it: at each instant its last row, and only where the state
/// changed.
fn as_read(history: &[StatusChange]) -> Vec<&StatusChange> {
    let mut read: Vec<&StatusChange> = Vec::new();
    for row in history {
        if read
            .last()
            .is_some_and(|last| last.recorded_at == row.recorded_at)
        {
            read.pop();
        }
        if read.last().map(|last| &last.derived) != Some(&row.derived) {
            read.push(row);
        }
    }
    read
}

/// Checks that every slot's status history reads as its facts replayed in the order they were
/// recorded (`temporal::replay_slot_history`): the same state at every instant. Holds while the
/// clock moves forward and nothing moved claims between entities (a merge or a re-keyed person
/// starts a moved claim's history afresh): what a deletion's replay from its earliest erased fact
/// on relies on (`Changes::history_replay_from`). Several writes at one instant, as a batch with
/// a fixed clock makes, may leave rows before the last one of that instant.
pub fn check_status_histories(engine: &Engine, owner: &str) -> EngineResult<Vec<String>> {
    engine.read(owner, |tx| {
        let mut problems = Vec::new();
        let claims = tx.list_claims()?;
        let slots: BTreeSet<SlotKey> = claims.iter().map(Claim::slot).collect();
        for slot in &slots {
            let loaded = crate::apply::LoadedSlot::read(tx, slot)?;
            let histories =
                crate::apply::group_by_claim(tx.list_status_changes_by_slot(slot)?, |row| {
                    &row.claim
                });
            for (claim, replayed) in crate::temporal::replay_slot_history(&loaded, &histories, None)
            {
                let stored = histories.get(&claim).map(Vec::as_slice).unwrap_or(&[]);
                if as_read(stored) != as_read(&replayed) {
                    problems.push(format!(
                        "claim {claim}: its status history ({} rows) is not its facts replayed ({} rows)",
                        stored.len(),
                        replayed.len()
                    ));
                }
            }
        }
        Ok(problems)
    })
}

/// Checks one owner's data; returns every violation found (empty when consistent).
pub fn check_invariants(engine: &Engine, owner: &str) -> EngineResult<Vec<String>> {
    engine.read(owner, |tx| {
        let mut problems = Vec::new();
        let claims = tx.list_claims()?;
        let slots: BTreeSet<SlotKey> = claims.iter().map(Claim::slot).collect();
        for slot in &slots {
            let loaded = LoadedSlot::read(tx, slot)?;
            let outcome = evaluate_views(&slot_views(&loaded));
            for claim in &loaded.claims {
                if outcome.states[&claim.id] != claim.derived {
                    problems.push(format!(
                        "claim {} ({} {}) stored {:?} but rules give {:?}",
                        claim.id,
                        claim.predicate,
                        claim.value_key,
                        claim.derived.status,
                        outcome.states[&claim.id].status
                    ));
                }
            }
        }
        // An open conflict entry in the review queue belongs to a claim stored in conflict (a claim
        // in conflict may have none: the user decided its entry, and it conflicts again since).
        let in_conflict: BTreeSet<String> = claims
            .iter()
            .filter(|claim| crate::apply::in_conflict(&claim.derived))
            .map(|claim| crate::apply::conflict_suggestion_id(&claim.id))
            .collect();
        for suggestion in tx.list_suggestions()? {
            if suggestion.kind == "claim_conflict"
                && suggestion.status == SuggestionStatus::Open
                && !in_conflict.contains(&suggestion.id)
            {
                problems.push(format!(
                    "conflict entry {} is open but claim {} is not in conflict",
                    suggestion.id, suggestion.target
                ));
            }
        }
        for claim in &claims {
            let evidence = tx.list_evidence_by_claim(&claim.id)?;
            if evidence.is_empty() && claim.retracted_at.is_none() {
                problems.push(format!("claim {} has no evidence", claim.id));
            }
            for row in &evidence {
                if let Some(meeting) = &row.meeting {
                    if tx.find_meeting(meeting)?.is_none() {
                        problems.push(format!(
                            "evidence {} cites missing meeting {meeting}",
                            row.id
                        ));
                    }
                }
            }
        }
        for meeting in tx.list_meetings()? {
            let stored = tx.list_link_attachments_by_meeting(&meeting.id)?;
            let derived = crate::links::derive_meeting_attachments(tx, &meeting.id)?;
            if stored != derived {
                problems.push(format!(
                    "meeting {} stores link attachments {stored:?} but its facts give {derived:?}",
                    meeting.id
                ));
            }
            for source in tx.list_identifier_sources_by_meeting(&meeting.id)? {
                if tx
                    .find_entity_by_identifier(&source.scheme, &source.value)?
                    .is_none()
                {
                    problems.push(format!(
                        "meeting {} taught {}:{}, which resolves to nothing",
                        meeting.id, source.scheme, source.value
                    ));
                }
            }
        }
        for entity in tx.list_entities()? {
            let rebuilt = rebuild_entity(tx, &entity)?;
            if rebuilt != entity {
                problems.push(format!(
                    "entity {} projection differs from a rebuild",
                    entity.id
                ));
            }
            if entity.status != EntityStatus::Merged
                && tx.count_entity_references(&entity.id)? == 0
                && entity.manual_name.is_none()
                && entity.manual_attributes.is_empty()
                && !entity.pinned
                && entity.do_not_merge_with.is_empty()
            {
                problems.push(format!("entity {} is supported by nothing", entity.id));
            }
        }
        Ok(problems)
    })
}

/// Everything that must not depend on ingestion order, as canonical JSON: entities, claims without
/// transaction time, evidence, links, tasks and open suggestions.
pub fn state_dump(engine: &Engine, owner: &str) -> EngineResult<Value> {
    engine.read(owner, |tx| dump(tx))
}

fn dump(tx: &mut dyn Tx) -> EngineResult<Value> {
    let entities: Vec<Value> = tx.list_entities()?.iter().map(|e| json!(e)).collect();
    let mut claims = Vec::new();
    let mut evidence = Vec::new();
    for claim in tx.list_claims()? {
        let mut value = json!(claim);
        if let Some(object) = value.as_object_mut() {
            object.remove("recorded_at");
        }
        if claim.retracted_at.is_some() {
            value["retracted_at"] = json!(true);
        }
        claims.push(value);
        for row in tx.list_evidence_by_claim(&claim.id)? {
            let mut value = json!(row);
            if let Some(object) = value.as_object_mut() {
                object.remove("recorded_at");
            }
            if row.source_kind == SourceKind::Manual {
                if let Some(object) = value.as_object_mut() {
                    for transaction_specific in ["id", "source_id", "observed_at"] {
                        object.remove(transaction_specific);
                    }
                }
            }
            evidence.push(value);
        }
    }
    let mut aliases = Vec::new();
    let mut links = Vec::new();
    let mut tasks = Vec::new();
    let mut attachments = Vec::new();
    let mut identifiers = Vec::new();
    for meeting in tx.list_meetings()? {
        attachments.extend(
            tx.list_link_attachments_by_meeting(&meeting.id)?
                .iter()
                .map(|a| json!(a)),
        );
        identifiers.extend(
            tx.list_identifier_sources_by_meeting(&meeting.id)?
                .iter()
                .map(|s| json!(s)),
        );
        links.extend(
            tx.list_resource_links_by_meeting(&meeting.id)?
                .iter()
                .map(|l| json!(l)),
        );
        tasks.extend(
            tx.list_tasks_by_meeting(&meeting.id)?
                .iter()
                .map(|t| json!(t)),
        );
    }
    for entity in tx.list_entities()? {
        aliases.extend(tx.list_aliases(&entity.id)?.iter().map(|a| json!(a)));
        for (scheme, value) in tx.list_identifiers_by_entity(&entity.id)? {
            identifiers.push(json!({"scheme": scheme, "value": value, "entity": entity.id}));
        }
    }
    let suggestions: Vec<Value> = tx
        .list_suggestions()?
        .iter()
        .map(|s| json!({"id": s.id, "kind": s.kind, "status": s.status, "target": s.target}))
        .collect();
    let mut suggestions = suggestions;
    suggestions.sort_by_key(|s| s["id"].to_string());
    Ok(json!({
        "entities": entities, "claims": claims, "evidence": evidence, "aliases": aliases,
        "links": links, "tasks": tasks, "suggestions": suggestions,
        "link_attachments": attachments, "identifiers": identifiers,
    }))
}
