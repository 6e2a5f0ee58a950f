//! Undo (L18): a revision's `before` snapshot holds the first state of every row the action changed,
//! keyed `table:id`, and its `after` the last. Undo checks that every such row still looks like
//! `after` (otherwise something changed it since, and undoing would lose that change: a conflict),
//! restores `before` (deleting rows that did not exist), re-settles the touched slots and entities,
//! and writes an `undo` revision of its own. Undoing a merge also records the pair as different.
//!
//! Source deletions are not undoable (erasure wins, SPEC 4). An ingest that created its meeting is
//! undone by removing the meeting with the L13 cascade, as long as it is still the meeting's
//! current content; an ingest that replaced earlier content is not (the earlier sources are not
//! snapshotted: ingesting the earlier bundle again restores them).

use std::collections::BTreeSet;

use lore_core::model::*;
use lore_store::Tx;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::apply::{settle, Changes};
use crate::identity::{tombstone_pair, IdentityReport};
use crate::{Engine, EngineError, EngineResult};

/// Tables in the order their rows are deleted; restoring runs in the reverse order, so that a row
/// is written after the rows it refers to.
const TABLES: &[&str] = &[
    "supersedes",
    "evidence",
    "claim_history",
    "claim",
    "alias",
    "identifier",
    "identifier_source",
    "participant_mapping",
    "participant",
    "link_attachment",
    "resource_link",
    "task",
    "task_decision",
    "suggestion",
    "entity",
];

impl Engine {
    /// Restores the rows a revision changed to their state before it (see the module comment).
    pub fn undo(&self, owner: &str, revision_id: &str) -> EngineResult<IdentityReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let revision = tx.find_revision(revision_id)?.ok_or_else(|| {
                EngineError::NotFound(format!("no revision with id '{revision_id}'"))
            })?;
            match revision.action {
                RevisionAction::SourceCascadeDelete => {
                    return Err(EngineError::Conflict(format!(
                        "revision {revision_id} deleted a source; a deletion cannot be undone"
                    )))
                }
                RevisionAction::ExtractionCommit => {
                    return undo_ingest(tx, &revision, now);
                }
                _ => {}
            }
            if crate::apply::has_erased_rows(&revision) {
                return Err(EngineError::Conflict(format!(
                    "revision {revision_id} held rows of a source deleted since, which were \
                     erased; it cannot be undone"
                )));
            }
            let empty = serde_json::Map::new();
            let before = revision.before.as_object().unwrap_or(&empty);
            let after = revision.after.as_object().unwrap_or(&empty);
            let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
            for key in &keys {
                let table = key.split_once(':').map_or("", |(table, _)| table);
                if !TABLES.contains(&table) {
                    return Err(EngineError::Conflict(format!(
                        "revision {revision_id} changed {key}, which undo cannot restore"
                    )));
                }
                let recorded_after = after.get(*key).unwrap_or(&Value::Null);
                let hint = if recorded_after.is_null() {
                    before.get(*key).unwrap_or(&Value::Null)
                } else {
                    recorded_after
                };
                let current = read_row(tx, table, hint)?.unwrap_or(Value::Null);
                if !same_as_recorded(table, &current, recorded_after) {
                    return Err(EngineError::Conflict(format!(
                        "cannot undo revision {revision_id}: {key} changed since; undo the later \
                         revisions first"
                    )));
                }
            }

            let mut changes = Changes::default();
            changes.snapshots_restored = true;
            for table in TABLES {
                for key in keys.iter().filter(|k| k.starts_with(&format!("{table}:"))) {
                    let old = before.get(*key).unwrap_or(&Value::Null);
                    let recorded_after = after.get(*key).unwrap_or(&Value::Null);
                    if old.is_null() && !recorded_after.is_null() {
                        delete_row(tx, table, recorded_after, &mut changes)?;
                        changes.record((*key).clone(), Some(recorded_after.clone()), None);
                    }
                }
            }
            for table in TABLES.iter().rev() {
                for key in keys.iter().filter(|k| k.starts_with(&format!("{table}:"))) {
                    let old = before.get(*key).unwrap_or(&Value::Null);
                    let recorded_after = after.get(*key).unwrap_or(&Value::Null);
                    if !old.is_null() && old != recorded_after {
                        write_row(tx, table, old, recorded_after, &mut changes, now)?;
                        let previous = (!recorded_after.is_null()).then(|| recorded_after.clone());
                        changes.record((*key).clone(), previous, Some(old.clone()));
                    }
                }
            }
            settle(tx, &mut changes, now)?;
            if revision.action == RevisionAction::EntityMerge {
                if let Some(secondary) = &revision.secondary {
                    tombstone_pair(tx, &revision.target, secondary, &mut changes)?;
                }
            }
            let id = changes.write_revision(
                tx,
                RevisionAction::Undo,
                &revision.id,
                Some(&revision.target),
                now,
            )?;
            Ok(IdentityReport {
                revision: id,
                entity: revision.target.clone(),
                other: revision.secondary.clone(),
                claims_moved: 0,
            })
        })
    }
}

fn parse<T: DeserializeOwned>(value: &Value) -> EngineResult<T> {
    serde_json::from_value(value.clone())
        .map_err(|error| EngineError::Internal(format!("unreadable revision snapshot: {error}")))
}

fn text<'v>(value: &'v Value, field: &str) -> &'v str {
    value.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// Whether a row still looks as the revision left it. For an entity, apart from its derived fields
/// (`Entity::DERIVED_FIELDS`): revisions keep entities without them, and a later write that changed
/// only these (a new meeting that mentions the entity) changed nothing undo would lose, since every
/// entity undo restores is rebuilt from scratch. The canonical name is compared (an entity without
/// names keeps the one it was given).
fn same_as_recorded(table: &str, current: &Value, recorded: &Value) -> bool {
    if table != "entity" {
        return current == recorded;
    }
    let facts = |row: &Value| {
        let mut row = row.clone();
        Entity::strip_derived_fields(&mut row);
        row
    };
    facts(current) == facts(recorded)
}

fn json<T: serde::Serialize>(row: Option<T>) -> Option<Value> {
    row.and_then(|row| serde_json::to_value(row).ok())
}

/// The current state of the row a snapshot describes, as JSON.
fn read_row(tx: &mut dyn Tx, table: &str, hint: &Value) -> EngineResult<Option<Value>> {
    Ok(match table {
        "entity" => json(tx.find_entity(text(hint, "id"))?),
        "claim" => json(tx.find_claim(text(hint, "id"))?),
        "claim_history" => {
            let changes: Vec<StatusChange> = parse(hint)?;
            let claim = changes.first().map(|c| c.claim.clone()).unwrap_or_default();
            let stored = tx.list_status_changes(&claim)?;
            (!stored.is_empty()).then(|| serde_json::to_value(stored).unwrap_or(Value::Null))
        }
        "evidence" => json(
            tx.list_evidence_by_claim(text(hint, "claim"))?
                .into_iter()
                .find(|row| row.id == text(hint, "id")),
        ),
        "supersedes" => {
            let link: SupersedesLink = parse(hint)?;
            json(
                tx.list_supersedes_links(&link.claim)?
                    .into_iter()
                    .find(|row| *row == link),
            )
        }
        "alias" => {
            let alias: Alias = parse(hint)?;
            json(
                tx.list_aliases(&alias.entity)?
                    .into_iter()
                    .find(|row| row.alias == alias.alias && row.meeting == alias.meeting),
            )
        }
        "identifier" => {
            let (scheme, value) = (text(hint, "scheme"), text(hint, "value"));
            tx.find_entity_by_identifier(scheme, value)?
                .map(|entity| crate::identity::identifier_value(scheme, value, &entity))
        }
        "participant" => {
            let wanted: Participant = parse(hint)?;
            json(
                tx.list_participants(&wanted.meeting)?
                    .into_iter()
                    .find(|row| row.idx == wanted.idx),
            )
        }
        "participant_mapping" => {
            let wanted: ParticipantMapping = parse(hint)?;
            json(
                tx.list_participant_mappings(&wanted.meeting)?
                    .into_iter()
                    .find(|row| row.key == wanted.key),
            )
        }
        "resource_link" => {
            let wanted: ResourceLink = parse(hint)?;
            let mut rows = match &wanted.entity {
                Some(entity) => tx.list_resource_links_by_entity(entity)?,
                None => Vec::new(),
            };
            if let Some(meeting) = &wanted.meeting {
                rows.extend(tx.list_resource_links_by_meeting(meeting)?);
            }
            json(rows.into_iter().find(|row| row.id == wanted.id))
        }
        "task" => json(tx.find_task(text(hint, "id"))?),
        "link_attachment" => {
            let wanted: LinkAttachment = parse(hint)?;
            json(
                tx.list_link_attachments_by_meeting(&wanted.meeting)?
                    .into_iter()
                    .find(|row| row.link == wanted.link && row.entity == wanted.entity),
            )
        }
        "identifier_source" => {
            let wanted: IdentifierSource = parse(hint)?;
            json(
                tx.list_identifier_sources(&wanted.scheme, &wanted.value)?
                    .into_iter()
                    .find(|row| row.meeting == wanted.meeting && row.group == wanted.group),
            )
        }
        "task_decision" => {
            let task = text(hint, "task");
            tx.find_task_decision(task)?
                .map(|status| serde_json::json!({"task": task, "status": status}))
        }
        "suggestion" => json(tx.find_suggestion(text(hint, "id"))?),
        _ => None,
    })
}

/// Deletes the row a snapshot describes.
fn delete_row(
    tx: &mut dyn Tx,
    table: &str,
    row: &Value,
    changes: &mut Changes,
) -> EngineResult<()> {
    match table {
        "entity" => tx.delete_entity(text(row, "id"))?,
        "claim" => {
            let claim: Claim = parse(row)?;
            tx.delete_claim(&claim.id)?;
            changes.touch_claim(&claim);
            // Its conflict entry was derived by settle after the revision, not snapshotted.
            let suggestion = crate::apply::conflict_suggestion_id(&claim.id);
            if let Some(open) = tx.find_suggestion(&suggestion)? {
                tx.delete_suggestion(&suggestion)?;
                changes.record_row(format!("suggestion:{suggestion}"), Some(&open), None);
            }
        }
        "evidence" => tx.delete_evidence(text(row, "id"))?,
        "supersedes" => tx.delete_supersedes_link(&parse(row)?)?,
        "alias" => {
            let alias: Alias = parse(row)?;
            tx.delete_alias(&alias)?;
            changes.entities.insert(alias.entity);
        }
        "identifier" => tx.delete_identifier(text(row, "scheme"), text(row, "value"))?,
        "participant" => {
            let participant: Participant = parse(row)?;
            tx.delete_participant(&participant.meeting, participant.idx)?;
            changes.entities.extend(participant.person_entity);
        }
        "participant_mapping" => {
            tx.delete_participant_mapping(text(row, "meeting"), text(row, "key"))?
        }
        "resource_link" => tx.delete_resource_link(text(row, "id"))?,
        "task" => tx.delete_task(text(row, "id"))?,
        "link_attachment" => tx.delete_link_attachment(text(row, "link"), text(row, "entity"))?,
        "identifier_source" => tx.delete_identifier_source(&parse(row)?)?,
        "task_decision" => tx.delete_task_decision(text(row, "task"))?,
        "suggestion" => tx.delete_suggestion(text(row, "id"))?,
        _ => {}
    }
    Ok(())
}

/// Writes a snapshot row back (`current` is what the revision left, `null` when it deleted the row).
fn write_row(
    tx: &mut dyn Tx,
    table: &str,
    row: &Value,
    current: &Value,
    changes: &mut Changes,
    now: lore_core::Ts,
) -> EngineResult<()> {
    match table {
        "entity" => {
            let entity: Entity = parse(row)?;
            let replaced: Option<Entity> =
                (!current.is_null()).then(|| parse(current)).transpose()?;
            crate::apply::touch_replaced_entity(tx, replaced.as_ref(), &entity, changes)?;
            tx.upsert_entity(&entity)?;
        }
        "claim" => {
            let claim: Claim = parse(row)?;
            let replaced: Option<Claim> =
                (!current.is_null()).then(|| parse(current)).transpose()?;
            tx.upsert_claim(&claim)?;
            if replaced.is_some_and(|r| r.derived != claim.derived) {
                tx.insert_status_change(&StatusChange {
                    claim: claim.id.clone(),
                    recorded_at: now,
                    derived: claim.derived.clone(),
                })?;
            }
            changes.touch_claim(&claim);
        }
        "claim_history" => {
            let history: Vec<StatusChange> = parse(row)?;
            for change in &history {
                tx.insert_status_change(change)?;
            }
        }
        "evidence" => {
            let evidence: Evidence = parse(row)?;
            if !current.is_null() {
                tx.delete_evidence(&evidence.id)?;
            }
            tx.insert_evidence(&evidence)?;
        }
        "supersedes" => tx.insert_supersedes_link(&parse(row)?)?,
        "alias" => {
            let alias: Alias = parse(row)?;
            tx.insert_alias(&alias)?;
            changes.entities.insert(alias.entity);
        }
        "identifier" => {
            let (scheme, value) = (text(row, "scheme"), text(row, "value"));
            tx.delete_identifier(scheme, value)?;
            tx.insert_identifier(scheme, value, text(row, "entity"))?;
        }
        "participant" => {
            let participant: Participant = parse(row)?;
            if current.is_null() {
                tx.insert_participant(&participant)?;
            } else {
                tx.update_participant(&participant)?;
            }
            changes.entities.extend(participant.person_entity);
        }
        "participant_mapping" => tx.upsert_participant_mapping(&parse(row)?)?,
        "resource_link" => {
            let link: ResourceLink = parse(row)?;
            tx.delete_resource_link(&link.id)?;
            tx.upsert_resource_link(&link)?;
            changes.entities.extend(link.entity);
        }
        "task" => {
            let task: Task = parse(row)?;
            tx.insert_task(&task)?;
            changes
                .entities
                .extend(task.assignee.iter().chain(task.project.iter()).cloned());
        }
        "link_attachment" => tx.upsert_link_attachment(&parse(row)?)?,
        "identifier_source" => {
            let source: IdentifierSource = parse(row)?;
            if !current.is_null() {
                tx.delete_identifier_source(&source)?;
            }
            tx.insert_identifier_source(&source)?;
        }
        "task_decision" => {
            let status: TaskStatus = parse(&row["status"])?;
            tx.upsert_task_decision(text(row, "task"), status)?
        }
        "suggestion" => tx.upsert_suggestion(&parse(row)?)?,
        _ => {}
    }
    Ok(())
}

/// Undoes an ingest that created its meeting: the meeting goes with everything only it supported.
fn undo_ingest(
    tx: &mut dyn Tx,
    revision: &Revision,
    now: lore_core::Ts,
) -> EngineResult<IdentityReport> {
    let meeting_key = format!("meeting:{}", revision.target);
    let replaced = revision
        .before
        .get(&meeting_key)
        .is_some_and(|before| !before.is_null());
    if replaced {
        return Err(EngineError::Conflict(format!(
            "revision {} replaced an earlier version of its meeting; ingest that version again \
             instead",
            revision.id
        )));
    }
    let current = match tx.find_meeting(&revision.target)? {
        Some(meeting) => tx
            .find_run(
                &meeting.id,
                &meeting.content_hash,
                crate::ingest::SUPPLIED_EXTRACTOR,
            )?
            .filter(|run| run.revision == revision.id)
            .map(|_| meeting),
        None => None,
    };
    let Some(meeting) = current else {
        return Err(EngineError::Conflict(format!(
            "cannot undo revision {}: its meeting changed or was deleted since",
            revision.id
        )));
    };
    let mut changes = Changes::default();
    let people = crate::people::people_taught_by(tx, &meeting.id)?;
    crate::apply::remove_meeting(tx, &meeting, &mut changes)?;
    crate::people::reconcile_people(tx, None, &people, &mut changes)?;
    settle(tx, &mut changes, now)?;
    // The meeting leaves as by a deletion, and its words with it (erasure, SPEC 4): this undo
    // cannot be undone (meetings are not restorable rows), ingesting the bundle again restores it.
    crate::apply::erase_deleted_source(
        tx,
        &mut changes,
        crate::apply::DeletedSource::Meeting(&meeting.id),
    )?;
    let id = changes.write_revision(
        tx,
        RevisionAction::Undo,
        &revision.id,
        Some(&meeting.id),
        now,
    )?;
    Ok(IdentityReport {
        revision: id,
        entity: meeting.id.clone(),
        other: None,
        claims_moved: 0,
    })
}
