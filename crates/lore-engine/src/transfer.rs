//! Copying one owner's data between databases (`lore migrate`), e.g. from a laptop's SQLite file to a
//! team's PostgreSQL server. Rows are copied as they are (facts and derivations alike), then every
//! entity's full history is compared on both sides.

use lore_core::model::*;
use lore_store::Tx;

use crate::{Engine, EngineError, EngineResult, ShowOptions};

/// Everything one owner has, in an order that satisfies foreign keys when written back.
#[derive(Default)]
struct OwnerData {
    series: Vec<MeetingSeries>,
    meetings: Vec<Meeting>,
    participants: Vec<Participant>,
    segments: Vec<Segment>,
    notes: Vec<Note>,
    attachments: Vec<Attachment>,
    runs: Vec<ExtractionRun>,
    entities: Vec<Entity>,
    identifiers: Vec<(String, String, String)>,
    aliases: Vec<Alias>,
    claims: Vec<Claim>,
    evidence: Vec<Evidence>,
    links: Vec<SupersedesLink>,
    history: Vec<StatusChange>,
    resource_links: Vec<ResourceLink>,
    tasks: Vec<Task>,
    revisions: Vec<Revision>,
    suggestions: Vec<Suggestion>,
    tags: Vec<Tag>,
    participant_mappings: Vec<ParticipantMapping>,
    task_decisions: Vec<(String, TaskStatus)>,
    link_attachments: Vec<LinkAttachment>,
    identifier_sources: Vec<IdentifierSource>,
    meeting_tags: Vec<MeetingTag>,
    entity_redirects: Vec<(String, String)>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct CopyReport {
    pub owner: String,
    pub meetings: usize,
    pub entities: usize,
    pub claims: usize,
    pub evidence: usize,
    pub revisions: usize,
    /// Entities whose `show --history` differs between source and target (empty when verified).
    pub mismatches: Vec<String>,
}

fn read_all(tx: &mut dyn Tx) -> EngineResult<OwnerData> {
    let mut data = OwnerData {
        meetings: tx.list_meetings()?,
        ..OwnerData::default()
    };
    for meeting in &data.meetings {
        if let Some(series_id) = &meeting.series {
            if !data.series.iter().any(|s| &s.id == series_id) {
                data.series.extend(tx.find_series(series_id)?);
            }
        }
        data.participants.extend(tx.list_participants(&meeting.id)?);
        data.segments.extend(tx.list_segments(&meeting.id)?);
        data.notes.extend(tx.list_notes(&meeting.id)?);
        data.attachments.extend(tx.list_attachments(&meeting.id)?);
        data.runs.extend(tx.list_runs(&meeting.id)?);
        data.resource_links
            .extend(tx.list_resource_links_by_meeting(&meeting.id)?);
        data.tasks.extend(tx.list_tasks_by_meeting(&meeting.id)?);
        data.participant_mappings
            .extend(tx.list_participant_mappings(&meeting.id)?);
        data.link_attachments
            .extend(tx.list_link_attachments_by_meeting(&meeting.id)?);
        data.identifier_sources
            .extend(tx.list_identifier_sources_by_meeting(&meeting.id)?);
        data.meeting_tags.extend(tx.list_meeting_tags(&meeting.id)?);
    }
    data.entities = tx.list_entities()?;
    for entity in &data.entities {
        for (scheme, value) in tx.list_identifiers_by_entity(&entity.id)? {
            data.identifiers.push((scheme, value, entity.id.clone()));
        }
        data.aliases.extend(tx.list_aliases(&entity.id)?);
        for link in tx.list_resource_links_by_entity(&entity.id)? {
            if link.meeting.is_none() {
                data.resource_links.push(link);
            }
        }
        for task in tx.list_tasks_by_entity(&entity.id)? {
            if task.meeting.is_none() && !data.tasks.iter().any(|t| t.id == task.id) {
                data.tasks.push(task);
            }
        }
    }
    data.claims = tx.list_claims()?;
    for claim in &data.claims {
        data.evidence.extend(tx.list_evidence_by_claim(&claim.id)?);
        data.links.extend(tx.list_supersedes_links(&claim.id)?);
        data.history.extend(tx.list_status_changes(&claim.id)?);
    }
    data.revisions = tx.list_revisions(i64::MAX as usize)?;
    data.revisions.reverse();
    for task in tx.list_tasks()? {
        if let Some(status) = tx.find_task_decision(&task.id)? {
            data.task_decisions.push((task.id.clone(), status));
        }
    }
    data.suggestions = tx.list_suggestions()?;
    data.tags = tx.list_tags()?;
    data.entity_redirects = tx.list_entity_redirects()?;
    Ok(data)
}

fn write_all(tx: &mut dyn Tx, data: &OwnerData) -> EngineResult<()> {
    if !tx.list_meetings()?.is_empty() || !tx.list_entities()?.is_empty() {
        return Err(EngineError::Conflict(
            "the target database already has data for this owner".into(),
        ));
    }
    for series in &data.series {
        tx.upsert_series(series)?;
    }
    for meeting in &data.meetings {
        tx.insert_meeting(meeting)?;
    }
    for row in &data.participants {
        tx.insert_participant(row)?;
    }
    for row in &data.segments {
        tx.insert_segment(row)?;
    }
    for row in &data.notes {
        tx.insert_note(row)?;
    }
    for row in &data.attachments {
        tx.insert_attachment(row)?;
    }
    for row in &data.runs {
        tx.insert_run(row)?;
    }
    for row in &data.entities {
        tx.upsert_entity(row)?;
    }
    for (scheme, value, entity) in &data.identifiers {
        tx.insert_identifier(scheme, value, entity)?;
    }
    for row in &data.aliases {
        tx.insert_alias(row)?;
    }
    for row in &data.claims {
        tx.insert_claim(row)?;
    }
    for row in &data.evidence {
        tx.insert_evidence(row)?;
    }
    for row in &data.links {
        tx.insert_supersedes_link(row)?;
    }
    for row in &data.history {
        tx.insert_status_change(row)?;
    }
    for row in &data.resource_links {
        tx.upsert_resource_link(row)?;
    }
    for row in &data.tasks {
        tx.insert_task(row)?;
    }
    for row in &data.revisions {
        tx.insert_revision(row)?;
    }
    for row in &data.suggestions {
        tx.upsert_suggestion(row)?;
    }
    for row in &data.tags {
        tx.upsert_tag(row)?;
    }
    for row in &data.participant_mappings {
        tx.upsert_participant_mapping(row)?;
    }
    for (task, status) in &data.task_decisions {
        tx.upsert_task_decision(task, *status)?;
    }
    for row in &data.link_attachments {
        tx.upsert_link_attachment(row)?;
    }
    for row in &data.identifier_sources {
        tx.insert_identifier_source(row)?;
    }
    for row in &data.meeting_tags {
        tx.insert_meeting_tag(row)?;
    }
    for (old_id, new_id) in &data.entity_redirects {
        tx.set_entity_redirect(old_id, new_id)?;
    }
    Ok(())
}

impl Engine {
    /// Copies `owner`'s data from this engine's database into `target`'s (which must have none for
    /// that owner), with attachment bytes, in one target transaction; then verifies every entity.
    pub fn copy_owner_to(&self, target: &Engine, owner: &str) -> EngineResult<CopyReport> {
        let data = self.read(owner, read_all)?;
        for attachment in &data.attachments {
            if attachment.sha256.len() > 2 {
                let relative =
                    std::path::Path::new(&attachment.sha256[..2]).join(&attachment.sha256);
                let (from, to) = (
                    self.store().blob_dir().join(&relative),
                    target.store().blob_dir().join(&relative),
                );
                if from.exists() && !to.exists() {
                    let folder = to.parent().expect("blob path has a folder");
                    std::fs::create_dir_all(folder)
                        .and_then(|()| std::fs::copy(&from, &to).map(|_| ()))
                        .map_err(|error| {
                            EngineError::Internal(format!(
                                "cannot copy blob {}: {error}",
                                attachment.sha256
                            ))
                        })?;
                }
            }
        }
        target.write(owner, |tx| write_all(tx, &data))?;
        let options = ShowOptions {
            history: true,
            include_provisional: true,
        };
        let mut mismatches = Vec::new();
        for entity in &data.entities {
            let before =
                serde_json::to_value(self.show(owner, &entity.id, &options)?).unwrap_or_default();
            let after =
                serde_json::to_value(target.show(owner, &entity.id, &options)?).unwrap_or_default();
            if before != after {
                mismatches.push(entity.id.clone());
            }
        }
        Ok(CopyReport {
            owner: owner.to_string(),
            meetings: data.meetings.len(),
            entities: data.entities.len(),
            claims: data.claims.len(),
            evidence: data.evidence.len(),
            revisions: data.revisions.len(),
            mismatches,
        })
    }
}
