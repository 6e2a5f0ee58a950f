//! Small user curation: task status, pinning, entities ordered by topic weight (L19), and the review
//! queue with the evidence behind each entry.

use lore_core::model::*;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;
use serde_json::{json, Value};

use crate::apply::{settle, touch_replaced_entity, Changes};
use crate::edit::EditReport;
use crate::resolve::find_entity;
use crate::search::entity_weight;
use crate::views::EntityRow;
use crate::{Engine, EngineError, EngineResult};

/// The longest manual name, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// How `entities` orders its rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EntitySort {
    /// By kind, then name.
    #[default]
    Name,
    /// Pinned entities first, then by topic weight, highest first (L19).
    Weight,
}

/// One review-queue entry with what a reviewer needs to decide it.
#[derive(Clone, Debug, Serialize)]
pub struct ReviewItem {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub status: SuggestionStatus,
    pub target: String,
    pub secondary: Option<String>,
    pub payload: Value,
    pub created_at: Ts,
    /// The claims (conflict) or entities (merge) concerned, with their evidence.
    pub details: Value,
}

/// L19 topic weight of an entity at `now`: its claims' evidence and the names it was called by, each a
/// mention; the same sum `show` computes, read from the entity's stored basis.
pub fn entity_topic_weight(tx: &mut dyn Tx, entity: &str, now: Ts) -> EngineResult<f64> {
    let Some(entity) = tx.find_entity(entity)? else {
        return Ok(0.0);
    };
    Ok((entity_weight(tx, &entity, now)? * 1000.0).round() / 1000.0)
}

impl Engine {
    /// Every entity not merged away, in the chosen order, with its topic weight and pin.
    pub fn list_entities_sorted(
        &self,
        owner: &str,
        sort: EntitySort,
    ) -> EngineResult<Vec<EntityRow>> {
        let now = self.now();
        let mut rows = self.list_entities(owner)?;
        if sort == EntitySort::Weight {
            self.read(owner, |tx| {
                for row in rows.iter_mut() {
                    row.topic_weight = Some(entity_topic_weight(tx, &row.id, now)?);
                }
                Ok(())
            })?;
            rows.sort_by(|a, b| {
                b.pinned
                    .cmp(&a.pinned)
                    .then(
                        b.topic_weight
                            .unwrap_or(0.0)
                            .total_cmp(&a.topic_weight.unwrap_or(0.0)),
                    )
                    .then(a.name.cmp(&b.name))
                    .then(a.id.cmp(&b.id))
            });
        }
        Ok(rows)
    }

    /// Pins an entity (it stays surfaced whatever its weight, L19) or unpins it.
    pub fn set_pinned(&self, owner: &str, entity: &str, pinned: bool) -> EngineResult<EditReport> {
        self.edit_entity(owner, entity, |entity| {
            entity.pinned = pinned;
            Ok(())
        })
    }

    /// Names an entity by hand (`Some`), or goes back to the name Lore derives from its sources
    /// (`None`). The manual name is what every view shows (L6: a manual value wins), and what
    /// search finds beside the entity's other names; the entity keeps its identity, its sources' names
    /// and its canonical name, which come back when the manual name is cleared. The entities whose
    /// current view shows this one's name (their claims point at it) are rebuilt with the new name.
    pub fn set_manual_name(
        &self,
        owner: &str,
        entity: &str,
        name: Option<&str>,
    ) -> EngineResult<EditReport> {
        let name = match name.map(str::trim) {
            Some("") => {
                return Err(EngineError::Invalid("the name must not be empty".into()));
            }
            Some(name) if name.chars().count() > MAX_NAME_CHARS => {
                return Err(EngineError::Invalid(format!(
                    "the name is longer than {MAX_NAME_CHARS} characters"
                )));
            }
            Some(name) if name.chars().any(char::is_control) => {
                return Err(EngineError::Invalid(
                    "the name must be one line without control characters".into(),
                ));
            }
            Some(name) => Some(lore_core::normalize::collapse_whitespace(name)),
            None => None,
        };
        self.edit_entity(owner, entity, |entity| {
            if entity.manual_name == name {
                return Err(EngineError::Conflict(match &name {
                    Some(name) => format!("{} is already named '{name}'", entity.id),
                    None => format!("{} has no manual name", entity.id),
                }));
            }
            entity.manual_name = name.clone();
            Ok(())
        })
    }

    /// Changes an entity's manual fields (`edit`, on its stored row), settles, and records a
    /// `manual_override` revision. When the change renames the entity, the entities whose current
    /// view shows its name (the subjects of claims pointing at it) are rebuilt too: the stored row
    /// already carries the new name, so the entity's own rebuild cannot see the change.
    fn edit_entity(
        &self,
        owner: &str,
        entity: &str,
        edit: impl Fn(&mut Entity) -> EngineResult<()>,
    ) -> EngineResult<EditReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let entity = find_entity(tx, entity)?;
            let mut updated = entity.clone();
            edit(&mut updated)?;
            let mut changes = Changes::default();
            tx.upsert_entity(&updated)?;
            changes.record_row(
                format!("entity:{}", entity.id),
                Some(&entity),
                Some(&updated),
            );
            touch_replaced_entity(tx, Some(&entity), &updated, &mut changes)?;
            settle(tx, &mut changes, now)?;
            let revision = changes.write_revision(
                tx,
                RevisionAction::ManualOverride,
                &entity.id,
                None,
                now,
            )?;
            Ok(EditReport {
                revision,
                claim: None,
                deleted: Vec::new(),
            })
        })
    }

    /// Sets a task's status (done, canceled, or open again).
    pub fn set_task_status(
        &self,
        owner: &str,
        task: &str,
        status: TaskStatus,
    ) -> EngineResult<EditReport> {
        let now = self.now();
        self.write(owner, |tx| {
            let stored = tx
                .find_task(task)?
                .ok_or_else(|| EngineError::NotFound(format!("no task with id '{task}'")))?;
            if stored.status == status {
                return Err(EngineError::Conflict(format!(
                    "task {task} is already {status}"
                )));
            }
            let mut changes = Changes::default();
            let mut updated = stored.clone();
            updated.status = status;
            tx.insert_task(&updated)?;
            changes.record_row(format!("task:{task}"), Some(&stored), Some(&updated));
            let decision = tx.find_task_decision(task)?;
            tx.upsert_task_decision(task, status)?;
            changes.record(
                format!("task_decision:{task}"),
                decision.map(|d| json!({"task": task, "status": d})),
                Some(json!({"task": task, "status": status})),
            );
            changes
                .entities
                .extend(stored.assignee.iter().chain(stored.project.iter()).cloned());
            settle(tx, &mut changes, now)?;
            let revision =
                changes.write_revision(tx, RevisionAction::ManualOverride, task, None, now)?;
            Ok(EditReport {
                revision,
                claim: None,
                deleted: Vec::new(),
            })
        })
    }

    /// The review queue: open entries (every entry with `include_decided`), each with its evidence.
    pub fn review_queue(
        &self,
        owner: &str,
        include_decided: bool,
    ) -> EngineResult<Vec<ReviewItem>> {
        self.read(owner, |tx| {
            let mut items = Vec::new();
            for suggestion in tx.list_suggestions()? {
                if !include_decided && suggestion.status != SuggestionStatus::Open {
                    continue;
                }
                let details = match suggestion.kind.as_str() {
                    "claim_conflict" => json!({
                        "claim": claim_details(tx, &suggestion.target)?,
                        "holder": match &suggestion.secondary {
                            Some(holder) => claim_details(tx, holder)?,
                            None => Value::Null,
                        },
                    }),
                    _ => json!({
                        "entities": [
                            entity_details(tx, &suggestion.target)?,
                            match &suggestion.secondary {
                                Some(other) => entity_details(tx, other)?,
                                None => Value::Null,
                            },
                        ],
                    }),
                };
                items.push(ReviewItem {
                    id: suggestion.id,
                    kind: suggestion.kind,
                    status: suggestion.status,
                    target: suggestion.target,
                    secondary: suggestion.secondary,
                    payload: suggestion.payload,
                    created_at: suggestion.created_at,
                    details,
                });
            }
            Ok(items)
        })
    }
}

fn evidence_details(tx: &mut dyn Tx, claim: &str) -> EngineResult<Vec<Value>> {
    let mut rows = Vec::new();
    for evidence in tx.list_evidence_by_claim(claim)? {
        let meeting = match &evidence.meeting {
            Some(id) => tx.find_meeting(id)?,
            None => None,
        };
        rows.push(json!({
            "meeting": meeting.as_ref().map(|m| &m.external_id),
            "meeting_id": meeting.as_ref().map(|m| &m.id),
            "meeting_title": meeting.as_ref().map(|m| &m.title),
            "segment": evidence.segment_ids.first(),
            "offset": evidence.start_ms.map(lore_core::time::format_offset),
            "observed_at": evidence.observed_at, "speaker": evidence.speaker,
            "quote": evidence.quote, "authority": evidence.authority, "source": evidence.source_kind,
        }));
    }
    Ok(rows)
}

fn claim_details(tx: &mut dyn Tx, id: &str) -> EngineResult<Value> {
    let Some(claim) = tx.find_claim(id)? else {
        return Ok(Value::Null);
    };
    let subject = tx.find_entity(&claim.subject)?;
    let object = match &claim.object_entity {
        Some(object) => tx
            .find_entity(object)?
            .map(|e| e.display_name().to_string()),
        None => None,
    };
    Ok(json!({
        "id": claim.id, "subject": claim.subject,
        "subject_name": subject.map(|e| e.display_name().to_string()),
        "predicate": claim.predicate, "value": claim.value_text.or(object),
        "status": claim.derived.status, "authority": claim.derived.authority,
        "evidence": evidence_details(tx, id)?,
    }))
}

fn entity_details(tx: &mut dyn Tx, id: &str) -> EngineResult<Value> {
    let Some(entity) = tx.find_entity(id)? else {
        return Ok(Value::Null);
    };
    let mut meetings = Vec::new();
    for alias in tx.list_aliases(id)? {
        if let Some(meeting) = tx.find_meeting(&alias.meeting)? {
            if !meetings.contains(&meeting.external_id) {
                meetings.push(meeting.external_id);
            }
        }
    }
    Ok(json!({
        "id": entity.id, "kind": entity.kind, "name": entity.display_name(), "status": entity.status,
        "emails": entity.emails, "meetings": meetings,
    }))
}
