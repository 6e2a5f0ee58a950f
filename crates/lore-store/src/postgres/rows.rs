//! Mapping between PostgreSQL rows and domain values; the same encodings as the SQLite backend
//! (enumerations as names, times as milliseconds, lists and maps as JSON text).

use lore_core::model::*;
use lore_core::Ts;
use postgres::Row;
use serde::de::DeserializeOwned;

use crate::{StoreError, StoreResult};

fn column<'a, T: postgres::types::FromSql<'a>>(row: &'a Row, index: usize) -> StoreResult<T> {
    row.try_get(index)
        .map_err(|error| StoreError::Backend(format!("column {index}: {error}")))
}

pub fn text(row: &Row, index: usize) -> StoreResult<String> {
    column(row, index)
}

fn optional_text(row: &Row, index: usize) -> StoreResult<Option<String>> {
    column(row, index)
}

pub fn int(row: &Row, index: usize) -> StoreResult<i64> {
    column(row, index)
}

pub fn optional_int(row: &Row, index: usize) -> StoreResult<Option<i64>> {
    column(row, index)
}

fn ts(row: &Row, index: usize) -> StoreResult<Ts> {
    int(row, index).map(Ts)
}

fn optional_ts(row: &Row, index: usize) -> StoreResult<Option<Ts>> {
    optional_int(row, index).map(|value| value.map(Ts))
}

fn json<T: DeserializeOwned>(row: &Row, index: usize) -> StoreResult<T> {
    let raw = text(row, index)?;
    serde_json::from_str(&raw)
        .map_err(|error| StoreError::Backend(format!("column {index}: {error}")))
}

fn optional_json(row: &Row, index: usize) -> StoreResult<Option<serde_json::Value>> {
    optional_text(row, index)?
        .map(|raw| {
            serde_json::from_str(&raw)
                .map_err(|error| StoreError::Backend(format!("column {index}: {error}")))
        })
        .transpose()
}

fn name<T>(row: &Row, index: usize, parse: fn(&str) -> Option<T>) -> StoreResult<T> {
    let raw = text(row, index)?;
    parse(&raw).ok_or_else(|| StoreError::Backend(format!("column {index}: unknown value '{raw}'")))
}

fn optional_name<T>(
    row: &Row,
    index: usize,
    parse: fn(&str) -> Option<T>,
) -> StoreResult<Option<T>> {
    optional_text(row, index)?
        .map(|raw| {
            parse(&raw).ok_or_else(|| {
                StoreError::Backend(format!("column {index}: unknown value '{raw}'"))
            })
        })
        .transpose()
}

pub fn meeting_row(row: &Row) -> StoreResult<Meeting> {
    Ok(Meeting {
        id: text(row, 0)?,
        external_id: text(row, 1)?,
        title: text(row, 2)?,
        started_at: ts(row, 3)?,
        ended_at: optional_ts(row, 4)?,
        platform: optional_text(row, 5)?,
        series: optional_text(row, 6)?,
        content_hash: text(row, 7)?,
    })
}

pub fn participant_row(row: &Row) -> StoreResult<Participant> {
    Ok(Participant {
        meeting: text(row, 0)?,
        idx: int(row, 1)?,
        display_name: text(row, 2)?,
        email: optional_text(row, 3)?,
        platform_stable_id: optional_text(row, 4)?,
        device_id: optional_text(row, 5)?,
        speaker_label: optional_text(row, 6)?,
        person_entity: optional_text(row, 7)?,
        excluded: int(row, 8)? != 0,
    })
}

pub fn segment_row(row: &Row) -> StoreResult<Segment> {
    Ok(Segment {
        meeting: text(row, 0)?,
        id: text(row, 1)?,
        seq: int(row, 2)?,
        start_ms: int(row, 3)?,
        end_ms: int(row, 4)?,
        speaker_label: optional_text(row, 5)?,
        attribution: name(row, 6, Attribution::parse)?,
        text: text(row, 7)?,
    })
}

pub fn note_row(row: &Row) -> StoreResult<Note> {
    Ok(Note {
        id: text(row, 0)?,
        meeting: text(row, 1)?,
        local_id: text(row, 2)?,
        created_at: ts(row, 3)?,
        author: optional_text(row, 4)?,
        text: text(row, 5)?,
    })
}

pub fn attachment_row(row: &Row) -> StoreResult<Attachment> {
    Ok(Attachment {
        id: text(row, 0)?,
        meeting: text(row, 1)?,
        local_id: text(row, 2)?,
        kind: name(row, 3, AttachmentKind::parse)?,
        filename: text(row, 4)?,
        media_type: text(row, 5)?,
        sha256: text(row, 6)?,
        size: int(row, 7)?,
        created_at: ts(row, 8)?,
    })
}

pub fn entity_row(row: &Row) -> StoreResult<Entity> {
    Ok(Entity {
        id: text(row, 0)?,
        kind: name(row, 1, EntityKind::parse)?,
        canonical_name: text(row, 2)?,
        manual_name: optional_text(row, 3)?,
        normalized_key: optional_text(row, 4)?,
        emails: json(row, 5)?,
        domains: json(row, 6)?,
        external_keys: json(row, 7)?,
        status: name(row, 8, EntityStatus::parse)?,
        merged_into: optional_text(row, 9)?,
        do_not_merge_with: json(row, 10)?,
        manual_attributes: json(row, 11)?,
        manual_brief: optional_text(row, 12)?,
        pinned: int(row, 13)? != 0,
        scope_meeting: optional_text(row, 14)?,
        first_observed_at: optional_ts(row, 15)?,
        last_observed_at: optional_ts(row, 16)?,
        current_attributes: json(row, 17)?,
        current_brief: text(row, 18)?,
        weight_basis: column(row, 19)?,
        weight_latest: optional_ts(row, 20)?,
    })
}

pub fn claim_row(row: &Row) -> StoreResult<Claim> {
    Ok(Claim {
        id: text(row, 0)?,
        subject: text(row, 1)?,
        predicate: text(row, 2)?,
        object_entity: optional_text(row, 3)?,
        value_text: optional_text(row, 4)?,
        value_json: optional_json(row, 5)?,
        value_key: text(row, 6)?,
        context_entity: optional_text(row, 7)?,
        cardinality: name(row, 8, Cardinality::parse)?,
        group_key: text(row, 9)?,
        explicit_valid_from: optional_ts(row, 10)?,
        explicit_valid_to: optional_ts(row, 11)?,
        retracted_at: optional_ts(row, 12)?,
        recorded_at: ts(row, 13)?,
        derived: ClaimDerived {
            status: name(row, 14, ClaimStatus::parse)?,
            authority: name(row, 15, Authority::parse)?,
            valid_from: optional_ts(row, 16)?,
            valid_to: optional_ts(row, 17)?,
            first_observed_at: optional_ts(row, 18)?,
            last_observed_at: optional_ts(row, 19)?,
            superseded_at: optional_ts(row, 20)?,
            superseded_by: optional_text(row, 21)?,
            conflict: optional_name(row, 22, ConflictReason::parse)?,
            end_outcome: optional_name(row, 23, Outcome::parse)?,
            periods: json(row, 24)?,
        },
    })
}

pub fn evidence_row(row: &Row) -> StoreResult<Evidence> {
    Ok(Evidence {
        id: text(row, 0)?,
        claim: text(row, 1)?,
        source_kind: name(row, 2, SourceKind::parse)?,
        source_id: text(row, 3)?,
        meeting: optional_text(row, 4)?,
        observed_at: ts(row, 5)?,
        segment_ids: json(row, 6)?,
        start_ms: optional_int(row, 7)?,
        end_ms: optional_int(row, 8)?,
        speaker: optional_text(row, 9)?,
        speaker_label: optional_text(row, 10)?,
        attribution: optional_name(row, 11, Attribution::parse)?,
        quote: text(row, 12)?,
        source_url: optional_text(row, 13)?,
        confidence: column(row, 14)?,
        extraction_run_id: optional_text(row, 15)?,
        kind: name(row, 16, EvidenceKind::parse)?,
        authority: name(row, 17, Authority::parse)?,
        outcome: optional_name(row, 18, Outcome::parse)?,
        recorded_at: ts(row, 19)?,
    })
}

pub fn link_row(row: &Row) -> StoreResult<ResourceLink> {
    Ok(ResourceLink {
        id: text(row, 0)?,
        entity: optional_text(row, 1)?,
        meeting: optional_text(row, 2)?,
        source_kind: name(row, 3, SourceKind::parse)?,
        source_id: text(row, 4)?,
        resource_type: name(row, 5, ResourceType::parse)?,
        url: text(row, 6)?,
        external_key: optional_text(row, 7)?,
        title: optional_text(row, 8)?,
        provenance: name(row, 9, LinkProvenance::parse)?,
        ingested_status: text(row, 10)?,
        first_seen_at: ts(row, 11)?,
        last_seen_at: ts(row, 12)?,
    })
}

/// A row of the attached links' join (SQLite's `read_side::ATTACHED_LINKS`): the link's columns,
/// then the attachment's.
pub fn attached_link_row(row: &Row) -> StoreResult<crate::AttachedLink> {
    let link = link_row(row)?;
    Ok(crate::AttachedLink {
        attachment: LinkAttachment {
            link: link.id.clone(),
            entity: text(row, 13)?,
            reason: text(row, 14)?,
            evidence: optional_text(row, 15)?,
            meeting: text(row, 16)?,
        },
        meeting_external_id: text(row, 17)?,
        link,
    })
}

pub fn task_row(row: &Row) -> StoreResult<Task> {
    Ok(Task {
        id: text(row, 0)?,
        meeting: optional_text(row, 1)?,
        title: text(row, 2)?,
        status: name(row, 3, TaskStatus::parse)?,
        assignee: optional_text(row, 4)?,
        project: optional_text(row, 5)?,
        due_at: optional_ts(row, 6)?,
        evidence: json(row, 7)?,
        created_at: ts(row, 8)?,
    })
}

pub fn revision_row(row: &Row) -> StoreResult<Revision> {
    Ok(Revision {
        id: text(row, 0)?,
        action: name(row, 1, RevisionAction::parse)?,
        target: text(row, 2)?,
        secondary: optional_text(row, 3)?,
        before: json(row, 4)?,
        after: json(row, 5)?,
        created_at: ts(row, 6)?,
    })
}

pub fn suggestion_row(row: &Row) -> StoreResult<Suggestion> {
    Ok(Suggestion {
        id: text(row, 0)?,
        kind: text(row, 1)?,
        status: name(row, 2, SuggestionStatus::parse)?,
        target: text(row, 3)?,
        secondary: optional_text(row, 4)?,
        payload: json(row, 5)?,
        created_at: ts(row, 6)?,
    })
}

pub fn alias_row(row: &Row) -> StoreResult<Alias> {
    Ok(Alias {
        entity: text(row, 0)?,
        alias: text(row, 1)?,
        meeting: text(row, 2)?,
        observed_at: ts(row, 3)?,
    })
}

pub fn series_row(row: &Row) -> StoreResult<MeetingSeries> {
    Ok(MeetingSeries {
        id: text(row, 0)?,
        calendar_account: text(row, 1)?,
        calendar_id: text(row, 2)?,
        recurring_event_id: text(row, 3)?,
    })
}

pub fn run_row(row: &Row) -> StoreResult<ExtractionRun> {
    Ok(ExtractionRun {
        id: text(row, 0)?,
        meeting: text(row, 1)?,
        content_hash: text(row, 2)?,
        extractor: text(row, 3)?,
        revision: text(row, 4)?,
        created_at: ts(row, 5)?,
    })
}

pub fn status_change_row(row: &Row) -> StoreResult<StatusChange> {
    Ok(StatusChange {
        claim: text(row, 0)?,
        recorded_at: ts(row, 1)?,
        derived: json(row, 2)?,
    })
}

pub fn tag_row(row: &Row) -> StoreResult<Tag> {
    Ok(Tag {
        name: text(row, 0)?,
        description: text(row, 1)?,
        ranges: json(row, 2)?,
    })
}

pub fn link_pair_row(row: &Row) -> StoreResult<SupersedesLink> {
    Ok(SupersedesLink {
        claim: text(row, 0)?,
        target: text(row, 1)?,
        evidence: text(row, 2)?,
    })
}

pub fn first_text(row: &Row) -> StoreResult<String> {
    text(row, 0)
}

pub fn first_int(row: &Row) -> StoreResult<i64> {
    int(row, 0)
}

pub fn identifier_row(row: &Row) -> StoreResult<(String, String)> {
    Ok((text(row, 0)?, text(row, 1)?))
}

pub fn participant_mapping_row(row: &Row) -> StoreResult<ParticipantMapping> {
    Ok(ParticipantMapping {
        meeting: text(row, 0)?,
        key: text(row, 1)?,
        source: name(row, 2, MappingSource::parse)?,
        display_name: text(row, 3)?,
        email: optional_text(row, 4)?,
        person_entity: optional_text(row, 5)?,
    })
}

pub fn task_status_row(row: &Row) -> StoreResult<TaskStatus> {
    name(row, 0, TaskStatus::parse)
}

pub fn api_token_row(row: &Row) -> StoreResult<crate::ApiToken> {
    Ok(crate::ApiToken {
        token_hash: text(row, 0)?,
        id: text(row, 1)?,
        owner: text(row, 2)?,
        scope: text(row, 3)?,
        label: optional_text(row, 4)?,
        created_at: ts(row, 5)?,
        expires_at: optional_ts(row, 6)?,
    })
}

pub fn alias_first_row(row: &Row) -> StoreResult<(String, i64)> {
    Ok((text(row, 0)?, int(row, 1)?))
}

/// A row of `ENTITY_OBSERVATIONS`: a name (none for an evidence time) and a time.
pub fn observation_row(row: &Row) -> StoreResult<(Option<String>, i64)> {
    Ok((optional_text(row, 0)?, int(row, 1)?))
}
