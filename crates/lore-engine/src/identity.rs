//! User decisions about identity (L15–L18): merging two entities, splitting evidence off to a new
//! entity, and acting on the review queue. Every decision is one revision that `undo` can reverse.
//!
//! Claim ids are hashes of `(subject, predicate, context, value)` (L1), so a merge cannot keep them:
//! every claim that names the absorbed entity is re-keyed to the id its statement has on the
//! survivor. When the survivor already holds that statement, the two claims collapse into one and the
//! evidence of both stays on it (a retraction on either side keeps the result retracted, L12).
//! Evidence ids are re-derived from the new claim id the same way ingestion derives them, so that
//! re-ingesting a source after a merge finds its rows instead of duplicating them.

use std::collections::BTreeMap;

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;

use crate::apply::{conflict_suggestion_id, settle, Changes};
use crate::resolve::find_entity;
use crate::{Engine, EngineError, EngineResult};

/// What an identity command reports: the revision it wrote and the entities it concerned.
#[derive(Clone, Debug, Serialize)]
pub struct IdentityReport {
    pub revision: String,
    /// The surviving (merge) or original (split) entity.
    pub entity: String,
    /// The absorbed (merge) or new (split) entity.
    pub other: Option<String>,
    pub claims_moved: usize,
}

/// How to choose what a split moves.
#[derive(Clone, Debug)]
pub enum SplitSelection {
    Evidence(Vec<String>),
    Meetings(Vec<String>),
}

impl Engine {
    /// Merges `absorbed` into `survivor` (L18): everything that names the absorbed entity is
    /// repointed, the absorbed one becomes `merged` with `merged_into`, and the survivor's slots are
    /// re-evaluated. A user's merge overrides an earlier "these are different" between the two.
    pub fn merge_entities(
        &self,
        owner: &str,
        survivor: &str,
        absorbed: &str,
    ) -> EngineResult<IdentityReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let (survivor_text, absorbed_text) = (survivor, absorbed);
            let survivor = find_entity(tx, survivor)?;
            let absorbed = find_entity(tx, absorbed)?;
            if survivor.id == absorbed.id {
                return Err(EngineError::Invalid(format!(
                    "'{survivor_text}' and '{absorbed_text}' are the same entity ({}), or one \
                     was merged into the other",
                    survivor.id
                )));
            }
            let mut changes = Changes::default();
            let moved = merge_in_tx(tx, &survivor, &absorbed, &mut changes)?;
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(
                tx,
                RevisionAction::EntityMerge,
                &survivor.id,
                Some(&absorbed.id),
                now,
            )?;
            Ok(IdentityReport {
                revision,
                entity: survivor.id.clone(),
                other: Some(absorbed.id.clone()),
                claims_moved: moved,
            })
        })
    }

    /// Moves the chosen evidence (given by id, or every evidence row of the given meetings) and the
    /// claims it supports to a new entity, and records that the two are different (L18).
    pub fn split_entity(
        &self,
        owner: &str,
        entity: &str,
        selection: &SplitSelection,
    ) -> EngineResult<IdentityReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let original = find_entity(tx, entity)?;
            let mut changes = Changes::default();
            let (new_id, moved) = split_in_tx(tx, &original, selection, &mut changes)?;
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(
                tx,
                RevisionAction::EntitySplit,
                &original.id,
                Some(&new_id),
                now,
            )?;
            Ok(IdentityReport {
                revision,
                entity: original.id.clone(),
                other: Some(new_id),
                claims_moved: moved,
            })
        })
    }

    /// Accepts a review-queue entry: a proposed merge is performed; a provisional claim becomes a
    /// manual decision that holds its slot (L6).
    pub fn accept_suggestion(&self, owner: &str, id: &str) -> EngineResult<IdentityReport> {
        self.decide_suggestion(owner, id, true)
    }

    /// Rejects a review-queue entry: a proposed merge becomes a `do_not_merge_with` tombstone on both
    /// entities; a provisional claim is retracted (L12).
    pub fn reject_suggestion(&self, owner: &str, id: &str) -> EngineResult<IdentityReport> {
        self.decide_suggestion(owner, id, false)
    }

    fn decide_suggestion(
        &self,
        owner: &str,
        id: &str,
        accept: bool,
    ) -> EngineResult<IdentityReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let suggestion = tx
                .find_suggestion(id)?
                .ok_or_else(|| EngineError::NotFound(format!("no suggestion with id '{id}'")))?;
            if suggestion.status != SuggestionStatus::Open {
                return Err(EngineError::Conflict(format!(
                    "suggestion {id} is already {}",
                    suggestion.status
                )));
            }
            let mut changes = Changes::default();
            let mut decided = suggestion.clone();
            decided.status = if accept {
                SuggestionStatus::Accepted
            } else {
                SuggestionStatus::Rejected
            };
            tx.upsert_suggestion(&decided)?;
            changes.record_row(
                format!("suggestion:{id}"),
                Some(&suggestion),
                Some(&decided),
            );
            let (action, entity, other, moved) = match (suggestion.kind.as_str(), accept) {
                ("entity_merge", _) => {
                    let secondary = suggestion.secondary.clone().ok_or_else(|| {
                        EngineError::Internal(format!("merge suggestion {id} names one entity"))
                    })?;
                    let provisional = find_entity(tx, &suggestion.target)?;
                    let other = find_entity(tx, &secondary)?;
                    if accept {
                        let moved = merge_in_tx(tx, &other, &provisional, &mut changes)?;
                        (RevisionAction::EntityMerge, other.id, provisional.id, moved)
                    } else {
                        tombstone_pair(tx, &provisional.id, &other.id, &mut changes)?;
                        (RevisionAction::EntitySplit, provisional.id, other.id, 0)
                    }
                }
                ("claim_conflict", true) => {
                    let claim = find_claim(tx, &suggestion.target)?;
                    let revision_id = crate::apply::new_revision_id();
                    let evidence = manual_evidence(&claim.id, &revision_id, now);
                    tx.insert_evidence(&evidence)?;
                    changes.record_row(format!("evidence:{}", evidence.id), None, Some(&evidence));
                    changes.touch_claim(&claim);
                    (RevisionAction::ManualOverride, claim.subject, claim.id, 0)
                }
                ("claim_conflict", false) => {
                    let claim = find_claim(tx, &suggestion.target)?;
                    if claim.retracted_at.is_none() {
                        tx.update_claim_retracted(&claim.id, Some(now))?;
                        let mut retracted = claim.clone();
                        retracted.retracted_at = Some(now);
                        changes.record_row(
                            format!("claim:{}", claim.id),
                            Some(&claim),
                            Some(&retracted),
                        );
                    }
                    changes.touch_claim(&claim);
                    (RevisionAction::ClaimRetract, claim.subject, claim.id, 0)
                }
                (other, _) => {
                    return Err(EngineError::Invalid(format!(
                        "suggestion {id} has unknown type '{other}'"
                    )))
                }
            };
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(tx, action, &entity, Some(&other), now)?;
            Ok(IdentityReport {
                revision,
                entity,
                other: Some(other),
                claims_moved: moved,
            })
        })
    }
}

fn find_claim(tx: &mut dyn Tx, id: &str) -> EngineResult<Claim> {
    tx.find_claim(id)?
        .ok_or_else(|| EngineError::NotFound(format!("no claim with id '{id}'")))
}

/// A user's confirmation of a claim, as manual evidence (L6).
pub fn manual_evidence(claim: &str, revision_id: &str, now: Ts) -> Evidence {
    Evidence {
        id: short_id("v_", &[claim, "manual", revision_id]),
        claim: claim.to_string(),
        source_kind: SourceKind::Manual,
        source_id: revision_id.to_string(),
        meeting: None,
        observed_at: now,
        segment_ids: Vec::new(),
        start_ms: None,
        end_ms: None,
        speaker: None,
        speaker_label: None,
        attribution: None,
        quote: String::new(),
        source_url: None,
        confidence: 1.0,
        extraction_run_id: None,
        kind: EvidenceKind::Support,
        authority: Authority::Manual,
        outcome: None,
        recorded_at: now,
    }
}

/// The id an evidence row gets on a claim, derived as ingestion and manual edits derive it
/// (ingestion names the extractor, found through the row's extraction run).
fn evidence_id(tx: &mut dyn Tx, claim: &str, evidence: &Evidence) -> EngineResult<String> {
    if evidence.source_kind == SourceKind::Manual {
        return Ok(short_id("v_", &[claim, "manual", &evidence.source_id]));
    }
    let mut extractor = crate::ingest::SUPPLIED_EXTRACTOR.to_string();
    if let (Some(meeting), Some(run)) = (&evidence.meeting, &evidence.extraction_run_id) {
        if let Some(found) = tx.list_runs(meeting)?.into_iter().find(|r| &r.id == run) {
            extractor = found.extractor;
        }
    }
    Ok(crate::ingest::derive_evidence_id(
        claim,
        evidence.source_kind,
        &evidence.source_id,
        &evidence.segment_ids,
        evidence.kind,
        &extractor,
    ))
}

/// Records that two entities are different: each enters the other's `do_not_merge_with` (L18), and
/// any open merge suggestion between them is rejected.
pub fn tombstone_pair(
    tx: &mut dyn Tx,
    first: &str,
    second: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    for (this, other) in [(first, second), (second, first)] {
        if let Some(entity) = tx.find_entity(this)? {
            if !entity.do_not_merge_with.iter().any(|id| id == other) {
                let mut updated = entity.clone();
                updated.do_not_merge_with.push(other.to_string());
                updated.do_not_merge_with.sort();
                tx.upsert_entity(&updated)?;
                changes.record_row(format!("entity:{this}"), Some(&entity), Some(&updated));
            }
        }
    }
    for suggestion in tx.list_suggestions()? {
        let pair = [
            Some(suggestion.target.as_str()),
            suggestion.secondary.as_deref(),
        ];
        if suggestion.kind == "entity_merge"
            && suggestion.status == SuggestionStatus::Open
            && pair.contains(&Some(first))
            && pair.contains(&Some(second))
        {
            let mut rejected = suggestion.clone();
            rejected.status = SuggestionStatus::Rejected;
            tx.upsert_suggestion(&rejected)?;
            changes.record_row(
                format!("suggestion:{}", suggestion.id),
                Some(&suggestion),
                Some(&rejected),
            );
        }
    }
    Ok(())
}

/// Moves a claim's chosen evidence to the claim that the same statement makes about `to` instead of
/// `from`. The old claim goes when it keeps no evidence (or, a bare retraction tombstone, when the
/// whole claim moves). Returns the old and new claim ids.
fn repoint_claim(
    tx: &mut dyn Tx,
    claim: &Claim,
    moving: &[Evidence],
    whole: bool,
    (from, to): (&str, &str),
    changes: &mut Changes,
    pending_links: &mut Vec<SupersedesLink>,
) -> EngineResult<String> {
    changes.claims_repointed = true;
    let swap = |id: &String| {
        if id == from {
            to.to_string()
        } else {
            id.clone()
        }
    };
    let subject = swap(&claim.subject);
    let object = claim.object_entity.as_ref().map(swap);
    let context = claim.context_entity.as_ref().map(swap);
    let value_key = claim.value_key.replace(from, to);
    let new_id = short_id(
        "c_",
        &[
            &subject,
            &claim.predicate,
            context.as_deref().unwrap_or(""),
            &value_key,
        ],
    );
    match tx.find_claim(&new_id)? {
        Some(existing) => {
            if claim.retracted_at.is_some() && existing.retracted_at.is_none() && whole {
                tx.update_claim_retracted(&existing.id, claim.retracted_at)?;
                let mut retracted = existing.clone();
                retracted.retracted_at = claim.retracted_at;
                changes.record_row(
                    format!("claim:{}", existing.id),
                    Some(&existing),
                    Some(&retracted),
                );
            }
            changes.touch_claim(&existing);
        }
        None => {
            let mut created = claim.clone();
            created.id = new_id.clone();
            created.subject = subject;
            created.object_entity = object;
            created.context_entity = context;
            created.value_key = value_key;
            created.group_key = claim.group_key.replace(from, to);
            if !whole {
                created.retracted_at = None;
            }
            tx.insert_claim(&created)?;
            changes.record_row(format!("claim:{new_id}"), None, Some(&created));
            changes.touch_claim(&created);
        }
    }
    let links = tx.list_supersedes_links(&claim.id)?;
    for row in moving {
        for link in links.iter().filter(|l| l.evidence == row.id) {
            changes.record_row(
                format!(
                    "supersedes:{}|{}|{}",
                    link.claim, link.target, link.evidence
                ),
                Some(link),
                None,
            );
        }
        tx.delete_evidence(&row.id)?;
        changes.record_row(format!("evidence:{}", row.id), Some(row), None);
        let mut moved = row.clone();
        moved.claim = new_id.clone();
        moved.id = evidence_id(tx, &new_id, row)?;
        if tx.insert_evidence(&moved)? {
            changes.record_row(format!("evidence:{}", moved.id), None, Some(&moved));
            for link in links.iter().filter(|l| l.evidence == row.id) {
                pending_links.push(SupersedesLink {
                    claim: new_id.clone(),
                    target: link.target.clone(),
                    evidence: moved.id.clone(),
                });
            }
        }
    }
    changes.touch_claim(claim);
    let remaining = tx.list_evidence_by_claim(&claim.id)?;
    if remaining.is_empty() && (whole || claim.retracted_at.is_none()) {
        for link in tx.list_supersedes_links(&claim.id)? {
            changes.record_row(
                format!(
                    "supersedes:{}|{}|{}",
                    link.claim, link.target, link.evidence
                ),
                Some(&link),
                None,
            );
        }
        // The transaction-time history goes with the row (cascade); keep it for undo.
        let history = tx.list_status_changes(&claim.id)?;
        if !history.is_empty() {
            changes.record_row(format!("claim_history:{}", claim.id), Some(&history), None);
        }
        tx.delete_claim(&claim.id)?;
        changes.record_row(format!("claim:{}", claim.id), Some(claim), None);
        let suggestion = conflict_suggestion_id(&claim.id);
        if let Some(open) = tx.find_suggestion(&suggestion)? {
            tx.delete_suggestion(&suggestion)?;
            changes.record_row(format!("suggestion:{suggestion}"), Some(&open), None);
        }
    }
    Ok(new_id)
}

/// Inserts the supersedes links of moved evidence, with targets that moved too renamed.
fn restore_links(
    tx: &mut dyn Tx,
    pending: Vec<SupersedesLink>,
    renamed: &BTreeMap<String, String>,
    changes: &mut Changes,
) -> EngineResult<()> {
    for mut link in pending {
        if let Some(target) = renamed.get(&link.target) {
            link.target = target.clone();
        }
        tx.insert_supersedes_link(&link)?;
        changes.record_row(
            format!(
                "supersedes:{}|{}|{}",
                link.claim, link.target, link.evidence
            ),
            None,
            Some(&link),
        );
    }
    Ok(())
}

/// Every claim that names the entity as subject, object or context.
fn claims_naming(tx: &mut dyn Tx, entity: &str) -> EngineResult<Vec<Claim>> {
    let mut claims = tx.list_claims_by_subject(entity)?;
    for claim in tx.list_claims_mentioning(entity)? {
        if !claims.iter().any(|c| c.id == claim.id) {
            claims.push(claim);
        }
    }
    claims.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(claims)
}

/// The merge itself, inside the caller's transaction; the caller settles and writes the revision.
pub fn merge_in_tx(
    tx: &mut dyn Tx,
    survivor: &Entity,
    absorbed: &Entity,
    changes: &mut Changes,
) -> EngineResult<usize> {
    if survivor.id == absorbed.id {
        return Err(EngineError::Invalid(format!(
            "cannot merge {} into itself",
            survivor.id
        )));
    }
    if survivor.kind != absorbed.kind {
        return Err(EngineError::Invalid(format!(
            "cannot merge a {} into a {}",
            absorbed.kind, survivor.kind
        )));
    }
    let (from, to) = (absorbed.id.as_str(), survivor.id.as_str());
    let mut renamed = BTreeMap::new();
    let mut pending_links = Vec::new();
    let claims = claims_naming(tx, from)?;
    for claim in &claims {
        let evidence = tx.list_evidence_by_claim(&claim.id)?;
        let new_id = repoint_claim(
            tx,
            claim,
            &evidence,
            true,
            (from, to),
            changes,
            &mut pending_links,
        )?;
        renamed.insert(claim.id.clone(), new_id);
    }
    restore_links(tx, pending_links, &renamed, changes)?;

    for alias in tx.list_aliases(from)? {
        tx.delete_alias(&alias)?;
        changes.record_row(alias_key(&alias), Some(&alias), None);
        let moved = Alias {
            entity: to.to_string(),
            ..alias.clone()
        };
        if !tx.list_aliases(to)?.contains(&moved) {
            tx.insert_alias(&moved)?;
            changes.record_row(alias_key(&moved), None, Some(&moved));
        }
    }
    for (scheme, value) in tx.list_identifiers_by_entity(from)? {
        tx.delete_identifier(&scheme, &value)?;
        tx.insert_identifier(&scheme, &value, to)?;
        changes.record(
            identifier_key(&scheme, &value),
            Some(identifier_value(&scheme, &value, from)),
            Some(identifier_value(&scheme, &value, to)),
        );
    }
    for participant in tx.list_participants_by_person(from)? {
        let mut moved = participant.clone();
        moved.person_entity = Some(to.to_string());
        tx.update_participant(&moved)?;
        changes.record_row(
            participant_key(&participant),
            Some(&participant),
            Some(&moved),
        );
    }
    for link in tx.list_resource_links_by_entity(from)? {
        move_link(tx, &link, to, changes)?;
    }
    for task in tx.list_tasks_by_entity(from)? {
        let mut moved = task.clone();
        let swap = |id: &Option<String>| {
            id.as_ref().map(|id| {
                if id == from {
                    to.to_string()
                } else {
                    id.clone()
                }
            })
        };
        moved.assignee = swap(&task.assignee);
        moved.project = swap(&task.project);
        tx.insert_task(&moved)?;
        changes.record_row(format!("task:{}", task.id), Some(&task), Some(&moved));
    }
    for suggestion in tx.list_suggestions()? {
        let names_absorbed =
            suggestion.target == from || suggestion.secondary.as_deref() == Some(from);
        if suggestion.kind == "entity_merge"
            && suggestion.status == SuggestionStatus::Open
            && names_absorbed
        {
            tx.delete_suggestion(&suggestion.id)?;
            changes.record_row(
                format!("suggestion:{}", suggestion.id),
                Some(&suggestion),
                None,
            );
        }
    }

    let survivor_now = tx.find_entity(to)?.unwrap_or_else(|| survivor.clone());
    let mut merged = survivor_now.clone();
    for email in &absorbed.emails {
        if !merged.emails.contains(email) {
            merged.emails.push(email.clone());
        }
    }
    if merged.kind == EntityKind::Person {
        merged.emails = crate::people::canonical_emails(&merged.id, &merged.emails);
    }
    for domain in &absorbed.domains {
        if !merged.domains.contains(domain) {
            merged.domains.push(domain.clone());
        }
    }
    for key in &absorbed.external_keys {
        if !merged.external_keys.contains(key) {
            merged.external_keys.push(key.clone());
        }
    }
    for (name, value) in &absorbed.manual_attributes {
        merged
            .manual_attributes
            .entry(name.clone())
            .or_insert_with(|| value.clone());
    }
    merged.manual_name = merged.manual_name.or(absorbed.manual_name.clone());
    merged.manual_brief = merged.manual_brief.or(absorbed.manual_brief.clone());
    merged.pinned |= absorbed.pinned;
    merged.normalized_key = merged.normalized_key.or(absorbed.normalized_key.clone());
    // A user's merge is a confirmation (L15): a provisional person joined to a known one is known.
    if absorbed.status == EntityStatus::Active {
        merged.status = EntityStatus::Active;
        merged.scope_meeting = None;
    }
    for other in &absorbed.do_not_merge_with {
        if other != to && !merged.do_not_merge_with.contains(other) {
            merged.do_not_merge_with.push(other.clone());
        }
    }
    merged.do_not_merge_with.retain(|id| id != from);
    merged.do_not_merge_with.sort();
    tx.upsert_entity(&merged)?;
    changes.record_row(format!("entity:{to}"), Some(&survivor_now), Some(&merged));

    let absorbed_now = tx.find_entity(from)?.unwrap_or_else(|| absorbed.clone());
    let mut gone = absorbed_now.clone();
    gone.status = EntityStatus::Merged;
    gone.merged_into = Some(to.to_string());
    gone.do_not_merge_with.retain(|id| id != to);
    tx.upsert_entity(&gone)?;
    changes.record_row(format!("entity:{from}"), Some(&absorbed_now), Some(&gone));
    changes.entities.insert(to.to_string());
    changes.entities.insert(from.to_string());
    let pair = [to.to_string(), from.to_string()].into_iter().collect();
    crate::links::sync_entities_meetings(tx, &pair, changes)?;
    Ok(claims.len())
}

fn split_in_tx(
    tx: &mut dyn Tx,
    original: &Entity,
    selection: &SplitSelection,
    changes: &mut Changes,
) -> EngineResult<(String, usize)> {
    let claims = claims_naming(tx, &original.id)?;
    let mut chosen: Vec<(Claim, Vec<Evidence>)> = Vec::new();
    let mut meetings: Vec<String> = Vec::new();
    if let SplitSelection::Meetings(requested) = selection {
        for text in requested {
            let meeting = match tx.find_meeting(text)? {
                Some(meeting) => meeting,
                None => tx.find_meeting_by_external_id(text)?.ok_or_else(|| {
                    EngineError::NotFound(format!("no meeting with id or external id '{text}'"))
                })?,
            };
            meetings.push(meeting.id);
        }
    }
    let mut found_ids = Vec::new();
    for claim in claims {
        let evidence = tx.list_evidence_by_claim(&claim.id)?;
        let picked: Vec<Evidence> = evidence
            .into_iter()
            .filter(|row| match selection {
                SplitSelection::Evidence(ids) => ids.contains(&row.id),
                SplitSelection::Meetings(_) => {
                    row.meeting.as_ref().is_some_and(|m| meetings.contains(m))
                }
            })
            .collect();
        found_ids.extend(picked.iter().map(|row| row.id.clone()));
        if !picked.is_empty() {
            chosen.push((claim, picked));
        }
    }
    if let SplitSelection::Evidence(ids) = selection {
        if let Some(missing) = ids.iter().find(|id| !found_ids.contains(id)) {
            return Err(EngineError::NotFound(format!(
                "no evidence '{missing}' on a claim of {}",
                original.id
            )));
        }
        if ids.is_empty() {
            return Err(EngineError::Invalid(
                "split needs --evidence or --meeting".into(),
            ));
        }
    }
    let aliases: Vec<Alias> = tx
        .list_aliases(&original.id)?
        .into_iter()
        .filter(|alias| meetings.contains(&alias.meeting))
        .collect();
    if chosen.is_empty() && aliases.is_empty() {
        return Err(EngineError::Invalid(format!(
            "nothing of {} matches the chosen evidence or meetings",
            original.id
        )));
    }
    let mut key_parts: Vec<String> = found_ids.clone();
    key_parts.extend(meetings.iter().cloned());
    key_parts.sort();
    let new_id = short_id("e_", &[original.id.as_str(), "split", &key_parts.join(",")]);
    if tx.find_entity(&new_id)?.is_some() {
        return Err(EngineError::Conflict(format!(
            "this split was made before: entity {new_id} exists"
        )));
    }
    let created = Entity {
        id: new_id.clone(),
        kind: original.kind,
        canonical_name: original.display_name().to_string(),
        manual_name: None,
        normalized_key: None,
        emails: Vec::new(),
        domains: Vec::new(),
        external_keys: Vec::new(),
        status: EntityStatus::Active,
        merged_into: None,
        do_not_merge_with: vec![original.id.clone()],
        manual_attributes: Default::default(),
        manual_brief: None,
        pinned: false,
        scope_meeting: None,
        first_observed_at: None,
        last_observed_at: None,
        current_attributes: Default::default(),
        current_brief: String::new(),
        weight_basis: 0.0,
        weight_latest: None,
    };
    tx.upsert_entity(&created)?;
    changes.record_row(format!("entity:{new_id}"), None, Some(&created));
    changes.entities.insert(new_id.clone());
    changes.entities.insert(original.id.clone());

    let mut renamed = BTreeMap::new();
    let mut pending_links = Vec::new();
    let moved = chosen.len();
    for (claim, picked) in &chosen {
        let new_claim = repoint_claim(
            tx,
            claim,
            picked,
            false,
            (&original.id, &new_id),
            changes,
            &mut pending_links,
        )?;
        renamed.insert(claim.id.clone(), new_claim);
    }
    restore_links(tx, pending_links, &renamed, changes)?;
    for alias in aliases {
        tx.delete_alias(&alias)?;
        changes.record_row(alias_key(&alias), Some(&alias), None);
        let moved = Alias {
            entity: new_id.clone(),
            ..alias.clone()
        };
        tx.insert_alias(&moved)?;
        changes.record_row(alias_key(&moved), None, Some(&moved));
    }
    move_participants(tx, &original.id, &new_id, &meetings, changes)?;
    // Identifiers scoped to a moved meeting (a name-only person's) follow it, so the next ingest of
    // that meeting resolves to the new entity.
    for (scheme, value) in tx.list_identifiers_by_entity(&original.id)? {
        let scoped_to_moved = scheme
            .strip_prefix("scoped:")
            .is_some_and(|meeting| meetings.iter().any(|m| m == meeting));
        if scoped_to_moved {
            tx.delete_identifier(&scheme, &value)?;
            tx.insert_identifier(&scheme, &value, &new_id)?;
            changes.record(
                identifier_key(&scheme, &value),
                Some(identifier_value(&scheme, &value, &original.id)),
                Some(identifier_value(&scheme, &value, &new_id)),
            );
        }
    }
    // In a moved meeting, whatever resolved to the original (an email, a key, a linked tag) now
    // resolves to the new entity, so re-ingesting that meeting never joins the pair again (L18).
    for meeting in &meetings {
        let scheme = crate::resolve::split_scheme(meeting);
        if tx
            .find_entity_by_identifier(&scheme, &original.id)?
            .is_none()
        {
            tx.insert_identifier(&scheme, &original.id, &new_id)?;
            changes.record(
                identifier_key(&scheme, &original.id),
                None,
                Some(identifier_value(&scheme, &original.id, &new_id)),
            );
        }
    }
    tombstone_pair(tx, &original.id, &new_id, changes)?;
    let pair = [original.id.clone(), new_id.clone()].into_iter().collect();
    crate::links::sync_entities_meetings(tx, &pair, changes)?;
    Ok((new_id, moved))
}

/// Moves what meetings said about `from` to the existing entity `to`: the evidence of those
/// meetings (claims re-keyed as in a merge), the names and participant rows of those meetings, their
/// tasks and links, and the given identifiers. Used when a person's identifiers fell apart (L14).
pub fn move_meetings_in_tx(
    tx: &mut dyn Tx,
    from: &Entity,
    to: &str,
    meetings: &[String],
    identifiers: &[(String, String)],
    changes: &mut Changes,
) -> EngineResult<()> {
    let in_meetings =
        |meeting: &Option<String>| meeting.as_ref().is_some_and(|m| meetings.contains(m));
    let mut renamed = BTreeMap::new();
    let mut pending_links = Vec::new();
    for claim in claims_naming(tx, &from.id)? {
        let picked: Vec<Evidence> = tx
            .list_evidence_by_claim(&claim.id)?
            .into_iter()
            .filter(|row| in_meetings(&row.meeting))
            .collect();
        if picked.is_empty() {
            continue;
        }
        let new_id = repoint_claim(
            tx,
            &claim,
            &picked,
            false,
            (&from.id, to),
            changes,
            &mut pending_links,
        )?;
        renamed.insert(claim.id.clone(), new_id);
    }
    restore_links(tx, pending_links, &renamed, changes)?;
    let existing_aliases = tx.list_aliases(to)?;
    for alias in tx.list_aliases(&from.id)? {
        if !meetings.contains(&alias.meeting) {
            continue;
        }
        tx.delete_alias(&alias)?;
        changes.record_row(alias_key(&alias), Some(&alias), None);
        let moved = Alias {
            entity: to.to_string(),
            ..alias.clone()
        };
        if !existing_aliases.contains(&moved) {
            tx.insert_alias(&moved)?;
            changes.record_row(alias_key(&moved), None, Some(&moved));
        }
    }
    move_participants(tx, &from.id, to, meetings, changes)?;
    move_participant_mappings(tx, meetings, &from.id, to, changes)?;
    let swap = |id: &Option<String>| {
        id.as_ref().map(|id| {
            if *id == from.id {
                to.to_string()
            } else {
                id.clone()
            }
        })
    };
    for task in tx.list_tasks_by_entity(&from.id)? {
        if in_meetings(&task.meeting) {
            let mut moved = task.clone();
            moved.assignee = swap(&task.assignee);
            moved.project = swap(&task.project);
            tx.insert_task(&moved)?;
            changes.record_row(format!("task:{}", task.id), Some(&task), Some(&moved));
        }
    }
    for link in tx.list_resource_links_by_entity(&from.id)? {
        if in_meetings(&link.meeting) {
            move_link(tx, &link, to, changes)?;
        }
    }
    for (scheme, value) in identifiers {
        if tx.find_entity_by_identifier(scheme, value)?.as_deref() == Some(from.id.as_str()) {
            tx.delete_identifier(scheme, value)?;
            tx.insert_identifier(scheme, value, to)?;
            changes.record(
                identifier_key(scheme, value),
                Some(identifier_value(scheme, value, &from.id)),
                Some(identifier_value(scheme, value, to)),
            );
        }
    }
    changes.entities.insert(from.id.clone());
    changes.entities.insert(to.to_string());
    let pair = [from.id.clone(), to.to_string()].into_iter().collect();
    crate::links::sync_entities_meetings(tx, &pair, changes)?;
    Ok(())
}

/// Re-points a `has_link` resource link to another entity, under the id ingestion gives it there.
/// Points the participants of `from` in `meetings` at `to`.
fn move_participants(
    tx: &mut dyn Tx,
    from: &str,
    to: &str,
    meetings: &[String],
    changes: &mut Changes,
) -> EngineResult<()> {
    for participant in tx.list_participants_by_person(from)? {
        if meetings.contains(&participant.meeting) {
            let mut moved = participant.clone();
            moved.person_entity = Some(to.to_string());
            tx.update_participant(&moved)?;
            changes.record_row(
                participant_key(&participant),
                Some(&participant),
                Some(&moved),
            );
        }
    }
    Ok(())
}

/// Points the user's participant decisions (mappings) naming `from` in `meetings` at `to`.
pub(crate) fn move_participant_mappings<'a>(
    tx: &mut dyn Tx,
    meetings: impl IntoIterator<Item = &'a String>,
    from: &str,
    to: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    for meeting in meetings {
        for mapping in tx.list_participant_mappings(meeting)? {
            if mapping.person_entity.as_deref() == Some(from) {
                let mut moved = mapping.clone();
                moved.person_entity = Some(to.to_string());
                tx.upsert_participant_mapping(&moved)?;
                changes.record_row(
                    crate::participants::mapping_record_key(&mapping),
                    Some(&mapping),
                    Some(&moved),
                );
            }
        }
    }
    Ok(())
}

fn move_link(
    tx: &mut dyn Tx,
    link: &ResourceLink,
    to: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    let mut moved = link.clone();
    moved.entity = Some(to.to_string());
    if let Some(meeting) = &link.meeting {
        moved.id = short_id("l_", &[meeting, to, &link.url]);
    }
    tx.delete_resource_link(&link.id)?;
    changes.record_row(format!("resource_link:{}", link.id), Some(link), None);
    tx.upsert_resource_link(&moved)?;
    changes.record_row(format!("resource_link:{}", moved.id), None, Some(&moved));
    Ok(())
}

pub fn alias_key(alias: &Alias) -> String {
    format!("alias:{}|{}|{}", alias.entity, alias.alias, alias.meeting)
}

pub fn identifier_key(scheme: &str, value: &str) -> String {
    format!("identifier:{scheme}|{value}")
}

pub fn identifier_value(scheme: &str, value: &str, entity: &str) -> serde_json::Value {
    serde_json::json!({"scheme": scheme, "value": value, "entity": entity})
}

pub fn participant_key(participant: &Participant) -> String {
    format!("participant:{}|{}", participant.meeting, participant.idx)
}
