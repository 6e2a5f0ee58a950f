//! Reads the web workspace needs beyond `show` and `get_meeting`: the revisions that touched an
//! entity (for its undo list), one claim with its evidence (the graph's connection inspector), the
//! claims a meeting supports, and an attachment's bytes. Each is owner-scoped like every read: an id
//! of another owner is not found (L20).

use std::collections::BTreeSet;

use lore_core::model::*;
use lore_core::time::format_offset;
use lore_core::Ts;
use serde::Serialize;

use crate::sources::find_meeting_ref;
use crate::views::{entity_view, ClaimView, NamedRef};
use crate::{AttachmentView, Engine, EngineError, EngineResult, ShowOptions};

/// How many of the newest revisions `entity_revisions` looks through.
const REVISION_SCAN: usize = 2000;

/// One revision in an entity's recent changes.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RevisionRow {
    pub id: String,
    pub action: RevisionAction,
    pub target: String,
    pub secondary: Option<String>,
    pub created_at: Ts,
    /// Whether `undo` can be asked for it (source deletions, and revisions that lost rows to one,
    /// cannot be undone).
    pub undoable: bool,
    /// What it was about, readably: `has_title = Principal Researcher`, a meeting's title, or the
    /// entities a merge or split concerned.
    pub summary: String,
}

/// One claim as the connection inspector shows it: its subject and the claim with every evidence.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClaimInspection {
    pub subject: NamedRef,
    pub claim: ClaimView,
}

/// A claim a meeting supports, with the segments it cites there.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeetingClaimRow {
    pub claim: String,
    pub subject: NamedRef,
    pub predicate: String,
    pub value: Option<String>,
    pub object: Option<NamedRef>,
    pub status: ClaimStatus,
    pub segment_ids: Vec<String>,
    pub offset: Option<String>,
    pub quote: String,
}

/// A readable line for a revision from what its target and secondary name now.
fn revision_summary(tx: &mut dyn lore_store::Tx, revision: &Revision) -> EngineResult<String> {
    let mut parts = Vec::new();
    for id in std::iter::once(&revision.target).chain(revision.secondary.iter()) {
        if let Some(claim) = tx.find_claim(id)? {
            let value = match (&claim.value_text, &claim.object_entity) {
                (Some(value), _) => value.clone(),
                (None, Some(object)) => entity_name(tx, Some(object))?,
                (None, None) => String::new(),
            };
            parts.push(format!("{} = {value}", claim.predicate));
        } else if let Some(meeting) = tx.find_meeting(id)? {
            parts.push(format!("meeting “{}”", meeting.title));
        } else if let Some(entity) = tx.find_entity(id)? {
            parts.push(entity.display_name().to_string());
        } else if let Some(undone) = tx.find_revision(id)? {
            parts.push(format!(
                "undo of {}",
                undone.action.as_str().replace('_', " ")
            ));
        }
    }
    Ok(parts.join(" + "))
}

fn named(tx: &mut dyn lore_store::Tx, id: &str) -> EngineResult<Option<NamedRef>> {
    Ok(tx.find_entity(id)?.map(|e| NamedRef {
        id: e.id.clone(),
        kind: e.kind,
        name: e.display_name().to_string(),
    }))
}

impl Engine {
    /// The newest revisions (at most `limit`) that changed a row of this entity (named as `show`
    /// accepts it): revisions naming it,
    /// or whose snapshots mention its id (its claims, aliases, merges and splits).
    pub fn entity_revisions(
        &self,
        owner: &str,
        entity: &str,
        limit: usize,
    ) -> EngineResult<Vec<RevisionRow>> {
        self.read(owner, |tx| {
            let found = crate::resolve::find_entity(tx, entity)?;
            let claims: BTreeSet<String> = tx
                .list_claims_by_subject(&found.id)?
                .into_iter()
                .map(|c| c.id)
                .collect();
            let mut rows = Vec::new();
            for revision in tx.list_revisions(REVISION_SCAN)? {
                let names_it = revision.target == found.id
                    || revision.secondary.as_deref() == Some(found.id.as_str())
                    || claims.contains(&revision.target)
                    || revision.before.to_string().contains(&found.id)
                    || revision.after.to_string().contains(&found.id);
                if !names_it {
                    continue;
                }
                let summary = revision_summary(tx, &revision)?;
                rows.push(RevisionRow {
                    summary,
                    undoable: revision.action != RevisionAction::SourceCascadeDelete
                        && !crate::apply::has_erased_rows(&revision),
                    id: revision.id,
                    action: revision.action,
                    target: revision.target,
                    secondary: revision.secondary,
                    created_at: revision.created_at,
                });
                if rows.len() >= limit {
                    break;
                }
            }
            Ok(rows)
        })
    }

    /// One claim by id with its subject and evidence, whatever its status.
    pub fn inspect_claim(&self, owner: &str, claim: &str) -> EngineResult<ClaimInspection> {
        let now = self.now();
        self.read(owner, |tx| {
            let not_found = || EngineError::NotFound(format!("no claim with id '{claim}'"));
            let stored = tx.find_claim(claim)?.ok_or_else(not_found)?;
            let subject = tx.find_entity(&stored.subject)?.ok_or_else(not_found)?;
            let options = ShowOptions {
                history: true,
                include_provisional: true,
            };
            let view = entity_view(tx, &subject, &options, now)?;
            let claim = view
                .claims
                .into_iter()
                .find(|c| c.id == stored.id)
                .ok_or_else(not_found)?;
            Ok(ClaimInspection {
                subject: NamedRef {
                    id: subject.id.clone(),
                    kind: subject.kind,
                    name: subject.display_name().to_string(),
                },
                claim,
            })
        })
    }

    /// The claims a meeting's evidence supports, in the order of the segments they cite.
    pub fn meeting_claims(&self, owner: &str, meeting: &str) -> EngineResult<Vec<MeetingClaimRow>> {
        self.read(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            let mut rows: Vec<(i64, MeetingClaimRow)> = Vec::new();
            let mut seen = BTreeSet::new();
            for evidence in tx.list_evidence_by_meeting(&found.id)? {
                if !seen.insert(evidence.claim.clone()) {
                    continue;
                }
                let Some(claim) = tx.find_claim(&evidence.claim)? else {
                    continue;
                };
                let Some(subject) = named(tx, &claim.subject)? else {
                    continue;
                };
                let object = match &claim.object_entity {
                    Some(id) => named(tx, id)?,
                    None => None,
                };
                rows.push((
                    evidence.start_ms.unwrap_or(i64::MAX),
                    MeetingClaimRow {
                        claim: claim.id.clone(),
                        subject,
                        predicate: claim.predicate.clone(),
                        value: claim.value_text.clone(),
                        object,
                        status: lore_core::reading::effective_status(&claim.derived, self.now()),
                        segment_ids: evidence.segment_ids.clone(),
                        offset: evidence.start_ms.map(format_offset),
                        quote: evidence.quote.clone(),
                    },
                ));
            }
            rows.sort_by(|a, b| (a.0, &a.1.claim).cmp(&(b.0, &b.1.claim)));
            Ok(rows.into_iter().map(|(_, row)| row).collect())
        })
    }

    /// An attachment of a meeting with its bytes.
    pub fn attachment_bytes(
        &self,
        owner: &str,
        meeting: &str,
        attachment: &str,
    ) -> EngineResult<(AttachmentView, Vec<u8>)> {
        let stored = self.read(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            tx.find_attachment(attachment)?
                .filter(|a| a.meeting == found.id)
                .ok_or_else(|| {
                    EngineError::NotFound(format!("no attachment with id '{attachment}'"))
                })
        })?;
        let path = self
            .store()
            .blob_dir()
            .join(stored.sha256.get(..2).unwrap_or_default())
            .join(&stored.sha256);
        let bytes = std::fs::read(&path).map_err(|error| {
            EngineError::Internal(format!("cannot read attachment {}: {error}", stored.id))
        })?;
        Ok((
            AttachmentView {
                id: stored.id,
                kind: stored.kind,
                filename: stored.filename,
                media_type: stored.media_type,
                sha256: stored.sha256,
                size: stored.size,
                created_at: stored.created_at,
            },
            bytes,
        ))
    }
}

/// One row a meeting deletion would remove or change (L13), for the confirmation page.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CascadeItem {
    /// `meeting`, `claim`, `task`, `resource_link`, `alias`, `entity`, `evidence`, ...
    pub table: String,
    pub id: String,
    /// `removed`, `changed` or `added`.
    pub change: String,
    /// A readable description of the row.
    pub label: String,
}

impl Engine {
    /// Exactly what deleting a meeting would remove or change: the L13 cascade is run in a
    /// transaction that is rolled back, and the rows its revision snapshot lists are described.
    pub fn preview_delete_meeting(
        &self,
        owner: &str,
        meeting: &str,
    ) -> EngineResult<Vec<CascadeItem>> {
        let now = self.now();
        self.dry_run(owner, |tx| {
            // The preview describes the rows it would remove from its own revision, which is
            // rolled back: it keeps them whole.
            let (report, _) = crate::edit::cascade_delete(
                tx,
                crate::SourceRef::Meeting(meeting),
                now,
                crate::edit::Snapshot::Whole,
            )?;
            let revision = tx
                .find_revision(&report.revision)?
                .ok_or_else(|| EngineError::Internal("the preview's revision is missing".into()))?;
            describe_cascade(tx, &revision)
        })
    }
}

fn entity_name(tx: &mut dyn lore_store::Tx, id: Option<&str>) -> EngineResult<String> {
    let Some(id) = id else {
        return Ok(String::new());
    };
    Ok(tx
        .find_entity(id)?
        .map(|e| e.display_name().to_string())
        .unwrap_or_else(|| id.to_string()))
}

fn describe_cascade(
    tx: &mut dyn lore_store::Tx,
    revision: &Revision,
) -> EngineResult<Vec<CascadeItem>> {
    let empty = serde_json::Map::new();
    let before = revision.before.as_object().unwrap_or(&empty);
    let after = revision.after.as_object().unwrap_or(&empty);
    let mut items = Vec::new();
    let mut evidence = 0usize;
    for (key, new) in after {
        let old = before.get(key).unwrap_or(&serde_json::Value::Null);
        let (table, id) = key.split_once(':').unwrap_or((key.as_str(), ""));
        let change = match (old.is_null(), new.is_null()) {
            (true, _) => "added",
            (false, true) => "removed",
            (false, false) => "changed",
        };
        let row = if new.is_null() { old } else { new };
        let text = |field: &str| row.get(field).and_then(|v| v.as_str()).map(str::to_string);
        let label = match table {
            "evidence" => {
                evidence += 1;
                continue;
            }
            "meeting" => format!(
                "meeting “{}” with its transcript, notes and attachments",
                text("title").unwrap_or_default()
            ),
            "claim" => {
                let subject = entity_name(tx, text("subject").as_deref())?;
                let value = match text("value_text") {
                    Some(value) => value,
                    None => entity_name(tx, text("object_entity").as_deref())?,
                };
                let status = |row: &serde_json::Value| {
                    row.pointer("/derived/status")
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string()
                };
                // As people read it: `has_title` → `title`, `works_at` → `works at`.
                let predicate = text("predicate").unwrap_or_default();
                let predicate = predicate
                    .strip_prefix("has_")
                    .unwrap_or(&predicate)
                    .replace('_', " ");
                match change {
                    "changed" if status(old) != status(new) => format!(
                        "{subject}: {predicate} = {value} ({} → {})",
                        status(old),
                        status(new)
                    ),
                    "changed" => format!(
                        "{subject}: {predicate} = {value} (loses this meeting's evidence, stays {})",
                        status(new)
                    ),
                    _ => format!("{subject}: {predicate} = {value}"),
                }
            }
            "task" => format!("task “{}”", text("title").unwrap_or_default()),
            "resource_link" => format!("link {}", text("url").unwrap_or_default()),
            "entity" if change == "changed" => {
                format!(
                    "{}: names and summary re-derived",
                    entity_name(tx, Some(id))?
                )
            }
            "entity" => format!("entity {}", entity_name(tx, Some(id))?),
            "alias" => format!("name “{}”", text("alias").unwrap_or_default()),
            other => format!("{other} {id}"),
        };
        items.push(CascadeItem {
            table: table.to_string(),
            id: id.to_string(),
            change: change.to_string(),
            label,
        });
    }
    // The meeting first, then what is removed, then what changes.
    items.sort_by_key(|item| {
        (
            item.table != "meeting",
            item.change != "removed",
            item.table == "entity",
        )
    });
    if evidence > 0 {
        items.push(CascadeItem {
            table: "evidence".into(),
            id: String::new(),
            change: "removed".into(),
            label: format!("{evidence} evidence rows (quotes cited from this meeting)"),
        });
    }
    Ok(items)
}

impl Engine {
    /// Meeting ids by external id (evidence views name meetings by external id); unknown ones are left out.
    pub fn meeting_ids(
        &self,
        owner: &str,
        external_ids: &[String],
    ) -> EngineResult<std::collections::BTreeMap<String, String>> {
        self.read(owner, |tx| {
            let mut ids = std::collections::BTreeMap::new();
            for external in external_ids {
                if let Some(meeting) = tx.find_meeting_by_external_id(external)? {
                    ids.insert(external.clone(), meeting.id);
                }
            }
            Ok(ids)
        })
    }
}
