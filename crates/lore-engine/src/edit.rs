//! User edits: manual claims (L6), retractions (L12) and source deletion (L13).

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_core::ObjectSpec;

use crate::apply::{
    erase_deleted_source, remove_evidence, remove_meeting, settle, Changes, DeletedSource,
};
use crate::ingest::{claim_value, upsert_claim, NewClaim};
use crate::resolve::find_entity;
use crate::{Engine, EngineError, EngineResult};

/// A manual claim as the user states it; entities are named as `lore show` accepts them.
#[derive(Clone, Debug, Default)]
pub struct ManualClaim {
    pub entity: String,
    pub predicate: String,
    pub value: Option<String>,
    pub object: Option<String>,
    pub context: Option<String>,
    pub due_at: Option<lore_core::Ts>,
}

/// What a state-changing command reports: the revision it wrote and what it is about.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EditReport {
    pub revision: String,
    pub claim: Option<String>,
    pub deleted: Vec<String>,
}

/// Which source to delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceRef<'a> {
    Meeting(&'a str),
    Note(&'a str),
    Attachment(&'a str),
}

impl Engine {
    /// Adds a manual claim. Manual claims hold their slot against any extraction (L6).
    pub fn add_manual_claim(&self, owner: &str, request: &ManualClaim) -> EngineResult<EditReport> {
        let definition = self
            .registry
            .get(&request.predicate)
            .ok_or_else(|| {
                let known: Vec<&str> = self.registry.names().collect();
                EngineError::Invalid(format!(
                    "unknown predicate '{}'; known: {}",
                    request.predicate,
                    known.join(", ")
                ))
            })?
            .clone();
        let now = self.now();
        self.write(owner, |tx| {
            let subject = find_entity(tx, &request.entity)?;
            if !definition.accepts_subject(subject.kind) {
                return Err(EngineError::Invalid(format!(
                    "predicate '{}' does not apply to a {}",
                    definition.name, subject.kind
                )));
            }
            let object = match (&definition.object, &request.object, &request.value) {
                (ObjectSpec::Entity(kinds), Some(object), None)
                | (ObjectSpec::TextOrEntity(kinds), Some(object), None) => {
                    let object = find_entity(tx, object)?;
                    if !kinds.contains(&object.kind) {
                        return Err(EngineError::Invalid(format!(
                            "predicate '{}' needs an object of kind {}, not {}",
                            definition.name,
                            kinds
                                .iter()
                                .map(|k| k.as_str())
                                .collect::<Vec<_>>()
                                .join(" or "),
                            object.kind
                        )));
                    }
                    Some(object.id)
                }
                (ObjectSpec::Entity(_), _, _) => {
                    return Err(EngineError::Invalid(format!(
                        "predicate '{}' needs --object ENTITY and no value",
                        definition.name
                    )))
                }
                (_, None, Some(value)) if !value.trim().is_empty() => None,
                _ => {
                    return Err(EngineError::Invalid(format!(
                        "predicate '{}' needs a value",
                        definition.name
                    )))
                }
            };
            let context = match (definition.context_kind, &request.context) {
                (Some(kind), Some(context)) => {
                    let context = find_entity(tx, context)?;
                    if context.kind != kind {
                        return Err(EngineError::Invalid(format!("--context must be a {kind}")));
                    }
                    Some(context.id)
                }
                (Some(kind), None) => {
                    return Err(EngineError::Invalid(format!(
                        "predicate '{}' needs --context (a {kind})",
                        definition.name
                    )))
                }
                (None, Some(_)) => {
                    return Err(EngineError::Invalid(format!(
                        "predicate '{}' takes no --context",
                        definition.name
                    )))
                }
                (None, None) => None,
            };
            if definition.is_deadline != request.due_at.is_some() {
                return Err(EngineError::Invalid(if definition.is_deadline {
                    format!("predicate '{}' needs --due-at", definition.name)
                } else {
                    format!("predicate '{}' takes no --due-at", definition.name)
                }));
            }
            let mut changes = Changes::default();
            let value = claim_value(
                &definition,
                request.value.as_deref(),
                object.as_deref(),
                request.due_at,
            );
            let claim = upsert_claim(
                tx,
                NewClaim {
                    subject: &subject.id,
                    predicate: &definition.name,
                    object: object.as_deref(),
                    context: context.as_deref(),
                    cardinality: definition.cardinality,
                    value,
                    valid_from: None,
                    valid_to: None,
                },
                now,
                &mut changes,
            )?;
            let revision_id = crate::apply::new_revision_id();
            let evidence = Evidence {
                id: short_id("v_", &[&claim.id, "manual", &revision_id]),
                claim: claim.id.clone(),
                source_kind: SourceKind::Manual,
                source_id: revision_id.clone(),
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
            };
            tx.insert_evidence(&evidence)?;
            changes.record(
                format!("evidence:{}", evidence.id),
                None,
                serde_json::to_value(&evidence).ok(),
            );
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(
                tx,
                RevisionAction::ManualOverride,
                &claim.id,
                Some(&subject.id),
                now,
            )?;
            Ok(EditReport {
                revision,
                claim: Some(claim.id),
                deleted: Vec::new(),
            })
        })
    }

    /// Retracts a claim: it leaves every current view and stays retracted when found again (L12).
    pub fn retract_claim(&self, owner: &str, claim_id: &str) -> EngineResult<EditReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let claim = tx
                .find_claim(claim_id)?
                .ok_or_else(|| EngineError::NotFound(format!("no claim with id '{claim_id}'")))?;
            if claim.retracted_at.is_some() {
                return Err(EngineError::Conflict(format!(
                    "claim {claim_id} is already retracted"
                )));
            }
            let mut changes = Changes::default();
            tx.update_claim_retracted(&claim.id, Some(now))?;
            let mut retracted = claim.clone();
            retracted.retracted_at = Some(now);
            changes.record(
                format!("claim:{}", claim.id),
                serde_json::to_value(&claim).ok(),
                serde_json::to_value(&retracted).ok(),
            );
            changes.touch_claim(&claim);
            settle(tx, &mut changes, now)?;
            let revision =
                changes.write_revision(tx, RevisionAction::ClaimRetract, &claim.id, None, now)?;
            Ok(EditReport {
                revision,
                claim: Some(claim.id.clone()),
                deleted: Vec::new(),
            })
        })
    }

    /// Deletes a meeting (by id or external id), note or attachment with the L13 cascade.
    pub fn delete_source(&self, owner: &str, source: SourceRef) -> EngineResult<EditReport> {
        let now = self.now();
        let (report, released_blobs) = self.write(owner, |tx| {
            cascade_delete(tx, source, now, Snapshot::Erased)
        })?;
        self.release_blobs(owner, &released_blobs);
        Ok(report)
    }

    /// What deleting a source would remove or change (L13), computed by running the cascade in a
    /// transaction that is then rolled back. The report's revision id is never written.
    pub fn preview_delete(&self, owner: &str, source: SourceRef) -> EngineResult<EditReport> {
        let now = self.now();
        self.dry_run(owner, |tx| {
            Ok(cascade_delete(tx, source, now, Snapshot::Erased)?.0)
        })
    }

    /// Removes blob files no attachment of any owner uses any more (after the deleting commit).
    fn release_blobs(&self, owner: &str, candidates: &[String]) {
        for sha256 in candidates {
            let used_elsewhere = self.store.owners().unwrap_or_default().iter().any(|other| {
                other != owner
                    && self
                        .read(other, |tx| Ok(tx.count_attachments_with_sha256(sha256)?))
                        .map(|count| count > 0)
                        .unwrap_or(true)
            });
            if !used_elsewhere && sha256.len() > 2 {
                let path = self.store.blob_dir().join(&sha256[..2]).join(sha256);
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Sets a single-valued attribute (or a deadline) by hand; a multi-valued predicate is refused, since
    /// overriding one value among many has no meaning (add it instead).
    pub fn override_claim(&self, owner: &str, request: &ManualClaim) -> EngineResult<EditReport> {
        if let Some(definition) = self.registry.get(&request.predicate) {
            if definition.cardinality == lore_core::Cardinality::Multi && !definition.is_deadline {
                return Err(EngineError::Invalid(format!(
                    "'{}' is multi-valued; add a value instead of overriding",
                    request.predicate
                )));
            }
        }
        self.add_manual_claim(owner, request)
    }

    /// Applies a scripted edit from `examples/edits.json` style input.
    pub fn apply_override(
        &self,
        owner: &str,
        entity: &str,
        predicate: &str,
        value: &str,
    ) -> EngineResult<EditReport> {
        self.add_manual_claim(
            owner,
            &ManualClaim {
                entity: entity.to_string(),
                predicate: predicate.to_string(),
                value: Some(value.to_string()),
                ..Default::default()
            },
        )
    }
}

/// What a cascade's revision keeps of the rows it removed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Snapshot {
    /// Only what names them (erasure, SPEC 4): every deletion that is committed.
    Erased,
    /// Everything, for a preview that describes the rows and is rolled back.
    Whole,
}

/// The L13 cascade for one source, inside the caller's transaction; returns the report and the blobs
/// that lost their last attachment.
pub(crate) fn cascade_delete(
    tx: &mut dyn lore_store::Tx,
    source: SourceRef,
    now: lore_core::Ts,
    snapshot: Snapshot,
) -> EngineResult<(EditReport, Vec<String>)> {
    let mut changes = Changes::default();
    changes.keep_derived_entity_fields = snapshot == Snapshot::Whole;
    // The source's id, and the meeting whose revisions may hold its rows.
    let (target, meeting) = match source {
        SourceRef::Meeting(id) => {
            let meeting = match tx.find_meeting(id)? {
                Some(meeting) => meeting,
                None => tx.find_meeting_by_external_id(id)?.ok_or_else(|| {
                    EngineError::NotFound(format!("no meeting with id or external id '{id}'"))
                })?,
            };
            let people = crate::people::people_taught_by(tx, &meeting.id)?;
            remove_meeting(tx, &meeting, &mut changes)?;
            crate::people::reconcile_people(tx, None, &people, &mut changes)?;
            (meeting.id.clone(), meeting.id)
        }
        SourceRef::Note(id) => {
            let note = tx
                .find_note(id)?
                .ok_or_else(|| EngineError::NotFound(format!("no note with id '{id}'")))?;
            let evidence = tx.list_evidence_by_source(SourceKind::Note, &note.id)?;
            remove_evidence(tx, evidence, &mut changes)?;
            tx.delete_note(&note.id)?;
            crate::links::sync_meeting_attachments(tx, &note.meeting, &mut changes)?;
            changes.record(
                format!("note:{}", note.id),
                serde_json::to_value(&note).ok(),
                None,
            );
            (note.id, note.meeting)
        }
        SourceRef::Attachment(id) => {
            let attachment = tx
                .find_attachment(id)?
                .ok_or_else(|| EngineError::NotFound(format!("no attachment with id '{id}'")))?;
            let evidence = tx.list_evidence_by_source(SourceKind::Attachment, &attachment.id)?;
            remove_evidence(tx, evidence, &mut changes)?;
            tx.delete_attachment(&attachment.id)?;
            changes.released_blobs.insert(attachment.sha256.clone());
            changes.record(
                format!("attachment:{}", attachment.id),
                serde_json::to_value(&attachment).ok(),
                None,
            );
            (attachment.id, attachment.meeting)
        }
    };
    let touched_slots = changes.slots.clone();
    changes.replays_history = true;
    crate::apply::settle_slots(tx, &mut changes, now)?;
    // Erasure wins over history: rewrite the touched slots' status history from what is left,
    // replayed while the touched entities are rebuilt (which writes entities only).
    let mut loaded = std::mem::take(&mut changes.loaded_slots);
    let from = changes.history_replay_from();
    crate::temporal::rebuild_slot_histories_alongside(
        tx,
        &touched_slots,
        &mut loaded,
        &from,
        |tx| crate::apply::rebuild_entities(tx, &mut changes),
    )?;
    let deleted = changes.changed_claims();
    if snapshot == Snapshot::Erased {
        // Earlier revisions that copied the source's rows (its ingests, a merge or re-keyed person
        // that moved its evidence, an undo) lose them too.
        let deleted = match source {
            SourceRef::Meeting(_) => DeletedSource::Meeting(&meeting),
            _ => DeletedSource::Part {
                meeting: &meeting,
                source_id: &target,
            },
        };
        erase_deleted_source(tx, &mut changes, deleted)?;
    }
    let revision =
        changes.write_revision(tx, RevisionAction::SourceCascadeDelete, &target, None, now)?;
    let still_used: Vec<String> = changes
        .released_blobs
        .iter()
        .filter(|sha| {
            tx.count_attachments_with_sha256(sha)
                .map(|n| n > 0)
                .unwrap_or(true)
        })
        .cloned()
        .collect();
    let released: Vec<String> = changes
        .released_blobs
        .iter()
        .filter(|sha| !still_used.contains(sha))
        .cloned()
        .collect();
    Ok((
        EditReport {
            revision,
            claim: None,
            deleted,
        },
        released,
    ))
}
