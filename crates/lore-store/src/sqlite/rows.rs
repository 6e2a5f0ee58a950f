//! Mapping between SQLite rows and domain values. Enumerations are stored as their snake_case names,
//! times as milliseconds, lists and maps as JSON text.

use lore_core::model::*;
use lore_core::Ts;
use rusqlite::types::{FromSql, Type, ValueRef};
use rusqlite::Row;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("domain values serialize")
}

fn conversion_error(index: usize, message: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, message.into())
}

/// A text column borrowed from the row (no copy); `None` for NULL.
fn optional_text<'r>(row: &'r Row, index: usize) -> rusqlite::Result<Option<&'r str>> {
    match row.get_ref(index)? {
        ValueRef::Null => Ok(None),
        value => value.as_str().map(Some).map_err(|error| {
            rusqlite::Error::FromSqlConversionFailure(index, Type::Text, error.into())
        }),
    }
}

fn text<'r>(row: &'r Row, index: usize) -> rusqlite::Result<&'r str> {
    optional_text(row, index)?
        .ok_or_else(|| rusqlite::Error::InvalidColumnType(index, String::new(), Type::Null))
}

pub fn from_json<T: DeserializeOwned>(row: &Row, index: usize) -> rusqlite::Result<T> {
    serde_json::from_str(text(row, index)?)
        .map_err(|error| conversion_error(index, error.to_string()))
}

/// Revision snapshots are the bulk of what an ingest writes (about half the file as JSON text), and
/// their JSON repeats the same field names row after row: one that serializes to more than
/// `SNAPSHOT_COMPRESS_FROM` bytes is stored as a blob, a format byte followed by the LZ4 block
/// (uncompressed size first). Smaller ones, and rows written before, are JSON text.
const SNAPSHOT_COMPRESS_FROM: usize = 512;
const SNAPSHOT_LZ4: u8 = 1;

pub fn snapshot_to_sql(value: &serde_json::Value) -> rusqlite::types::Value {
    let json = serde_json::to_string(value).expect("JSON values serialize");
    snapshot_text_to_sql(&json)
}

/// `snapshot_to_sql` of a snapshot already serialized.
pub fn snapshot_text_to_sql(json: &str) -> rusqlite::types::Value {
    if json.len() < SNAPSHOT_COMPRESS_FROM {
        return rusqlite::types::Value::Text(json.to_string());
    }
    let mut blob = vec![SNAPSHOT_LZ4];
    blob.extend(lz4_flex::compress_prepend_size(json.as_bytes()));
    rusqlite::types::Value::Blob(blob)
}

fn snapshot(row: &Row, index: usize) -> rusqlite::Result<serde_json::Value> {
    let json = match row.get_ref(index)? {
        ValueRef::Text(text) => std::borrow::Cow::Borrowed(text),
        ValueRef::Blob([SNAPSHOT_LZ4, compressed @ ..]) => {
            lz4_flex::decompress_size_prepended(compressed)
                .map(std::borrow::Cow::Owned)
                .map_err(|error| conversion_error(index, format!("snapshot: {error}")))?
        }
        ValueRef::Blob(_) => {
            return Err(conversion_error(
                index,
                "snapshot in an unknown format".into(),
            ));
        }
        other => {
            return Err(rusqlite::Error::InvalidColumnType(
                index,
                String::new(),
                other.data_type(),
            ))
        }
    };
    serde_json::from_slice(&json).map_err(|error| conversion_error(index, error.to_string()))
}

fn optional_json(row: &Row, index: usize) -> rusqlite::Result<Option<serde_json::Value>> {
    optional_text(row, index)?
        .map(|text| {
            serde_json::from_str(text).map_err(|error| conversion_error(index, error.to_string()))
        })
        .transpose()
}

fn ts(row: &Row, index: usize) -> rusqlite::Result<Ts> {
    Ok(Ts(row.get(index)?))
}

pub fn optional_ts(row: &Row, index: usize) -> rusqlite::Result<Option<Ts>> {
    Ok(row.get::<_, Option<i64>>(index)?.map(Ts))
}

/// Reads a stored enumeration name back into its type.
pub fn name<T>(row: &Row, index: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text = text(row, index)?;
    parse(text).ok_or_else(|| conversion_error(index, format!("unknown value '{text}'")))
}

fn optional_name<T>(
    row: &Row,
    index: usize,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<Option<T>> {
    optional_text(row, index)?
        .map(|text| {
            parse(text).ok_or_else(|| conversion_error(index, format!("unknown value '{text}'")))
        })
        .transpose()
}

fn get<T: FromSql>(row: &Row, index: usize) -> rusqlite::Result<T> {
    row.get(index)
}

pub fn meeting_row(row: &Row) -> rusqlite::Result<Meeting> {
    Ok(Meeting {
        id: get(row, 0)?,
        external_id: get(row, 1)?,
        title: get(row, 2)?,
        started_at: ts(row, 3)?,
        ended_at: optional_ts(row, 4)?,
        platform: get(row, 5)?,
        series: get(row, 6)?,
        content_hash: get(row, 7)?,
    })
}

pub fn participant_row(row: &Row) -> rusqlite::Result<Participant> {
    Ok(Participant {
        meeting: get(row, 0)?,
        idx: get(row, 1)?,
        display_name: get(row, 2)?,
        email: get(row, 3)?,
        platform_stable_id: get(row, 4)?,
        device_id: get(row, 5)?,
        speaker_label: get(row, 6)?,
        person_entity: get(row, 7)?,
        excluded: get(row, 8)?,
    })
}

pub fn segment_row(row: &Row) -> rusqlite::Result<Segment> {
    Ok(Segment {
        meeting: get(row, 0)?,
        id: get(row, 1)?,
        seq: get(row, 2)?,
        start_ms: get(row, 3)?,
        end_ms: get(row, 4)?,
        speaker_label: get(row, 5)?,
        attribution: name(row, 6, Attribution::parse)?,
        text: get(row, 7)?,
    })
}

pub fn note_row(row: &Row) -> rusqlite::Result<Note> {
    Ok(Note {
        id: get(row, 0)?,
        meeting: get(row, 1)?,
        local_id: get(row, 2)?,
        created_at: ts(row, 3)?,
        author: get(row, 4)?,
        text: get(row, 5)?,
    })
}

pub fn attachment_row(row: &Row) -> rusqlite::Result<Attachment> {
    Ok(Attachment {
        id: get(row, 0)?,
        meeting: get(row, 1)?,
        local_id: get(row, 2)?,
        kind: name(row, 3, AttachmentKind::parse)?,
        filename: get(row, 4)?,
        media_type: get(row, 5)?,
        sha256: get(row, 6)?,
        size: get(row, 7)?,
        created_at: ts(row, 8)?,
    })
}

pub fn entity_row(row: &Row) -> rusqlite::Result<Entity> {
    Ok(Entity {
        id: get(row, 0)?,
        kind: name(row, 1, EntityKind::parse)?,
        canonical_name: get(row, 2)?,
        manual_name: get(row, 3)?,
        normalized_key: get(row, 4)?,
        emails: from_json(row, 5)?,
        domains: from_json(row, 6)?,
        external_keys: from_json(row, 7)?,
        status: name(row, 8, EntityStatus::parse)?,
        merged_into: get(row, 9)?,
        do_not_merge_with: from_json(row, 10)?,
        manual_attributes: from_json(row, 11)?,
        manual_brief: get(row, 12)?,
        pinned: get(row, 13)?,
        scope_meeting: get(row, 14)?,
        first_observed_at: optional_ts(row, 15)?,
        last_observed_at: optional_ts(row, 16)?,
        current_attributes: from_json(row, 17)?,
        current_brief: get(row, 18)?,
        weight_basis: get(row, 19)?,
        weight_latest: optional_ts(row, 20)?,
    })
}

pub fn claim_row(row: &Row) -> rusqlite::Result<Claim> {
    Ok(Claim {
        id: get(row, 0)?,
        subject: get(row, 1)?,
        predicate: get(row, 2)?,
        object_entity: get(row, 3)?,
        value_text: get(row, 4)?,
        value_json: optional_json(row, 5)?,
        value_key: get(row, 6)?,
        context_entity: get(row, 7)?,
        cardinality: name(row, 8, Cardinality::parse)?,
        group_key: get(row, 9)?,
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
            superseded_by: get(row, 21)?,
            conflict: optional_name(row, 22, ConflictReason::parse)?,
            end_outcome: optional_name(row, 23, Outcome::parse)?,
            periods: from_json(row, 24)?,
        },
    })
}

pub fn evidence_row(row: &Row) -> rusqlite::Result<Evidence> {
    Ok(Evidence {
        id: get(row, 0)?,
        claim: get(row, 1)?,
        source_kind: name(row, 2, SourceKind::parse)?,
        source_id: get(row, 3)?,
        meeting: get(row, 4)?,
        observed_at: ts(row, 5)?,
        segment_ids: from_json(row, 6)?,
        start_ms: get(row, 7)?,
        end_ms: get(row, 8)?,
        speaker: get(row, 9)?,
        speaker_label: get(row, 10)?,
        attribution: optional_name(row, 11, Attribution::parse)?,
        quote: get(row, 12)?,
        source_url: get(row, 13)?,
        confidence: get(row, 14)?,
        extraction_run_id: get(row, 15)?,
        kind: name(row, 16, EvidenceKind::parse)?,
        authority: name(row, 17, Authority::parse)?,
        outcome: optional_name(row, 18, Outcome::parse)?,
        recorded_at: ts(row, 19)?,
    })
}

/// A projected claim's columns in `PROJECTED_CLAIMS` order, from column `first` on.
pub fn projected_claim(row: &Row, first: usize) -> rusqlite::Result<crate::ProjectedClaim> {
    Ok(crate::ProjectedClaim {
        id: row.get(first)?,
        predicate: row.get(first + 1)?,
        value_text: row.get(first + 2)?,
        object_entity: row.get(first + 3)?,
        context_entity: row.get(first + 4)?,
        authority: name(row, first + 5, Authority::parse)?,
        valid_from: optional_ts(row, first + 6)?,
        valid_to: optional_ts(row, first + 7)?,
    })
}

pub fn link_row(row: &Row) -> rusqlite::Result<ResourceLink> {
    Ok(ResourceLink {
        id: get(row, 0)?,
        entity: get(row, 1)?,
        meeting: get(row, 2)?,
        source_kind: name(row, 3, SourceKind::parse)?,
        source_id: get(row, 4)?,
        resource_type: name(row, 5, ResourceType::parse)?,
        url: get(row, 6)?,
        external_key: get(row, 7)?,
        title: get(row, 8)?,
        provenance: name(row, 9, LinkProvenance::parse)?,
        ingested_status: get(row, 10)?,
        first_seen_at: ts(row, 11)?,
        last_seen_at: ts(row, 12)?,
    })
}

/// A row of `read_side::ATTACHED_LINKS`: the link's columns, then the attachment's.
pub fn attached_link_row(row: &Row) -> rusqlite::Result<crate::AttachedLink> {
    let link = link_row(row)?;
    Ok(crate::AttachedLink {
        attachment: LinkAttachment {
            link: link.id.clone(),
            entity: get(row, 13)?,
            reason: get(row, 14)?,
            evidence: get(row, 15)?,
            meeting: get(row, 16)?,
        },
        meeting_external_id: get(row, 17)?,
        link,
    })
}

pub fn task_row(row: &Row) -> rusqlite::Result<Task> {
    Ok(Task {
        id: get(row, 0)?,
        meeting: get(row, 1)?,
        title: get(row, 2)?,
        status: name(row, 3, TaskStatus::parse)?,
        assignee: get(row, 4)?,
        project: get(row, 5)?,
        due_at: optional_ts(row, 6)?,
        evidence: from_json(row, 7)?,
        created_at: ts(row, 8)?,
    })
}

pub fn revision_row(row: &Row) -> rusqlite::Result<Revision> {
    revision_row_at(row, 0)
}

/// A revision whose columns (`REVISION_COLUMNS`) start at `first`.
pub fn revision_row_at(row: &Row, first: usize) -> rusqlite::Result<Revision> {
    Ok(Revision {
        id: get(row, first)?,
        action: name(row, first + 1, RevisionAction::parse)?,
        target: get(row, first + 2)?,
        secondary: get(row, first + 3)?,
        before: snapshot(row, first + 4)?,
        after: snapshot(row, first + 5)?,
        created_at: ts(row, first + 6)?,
    })
}

pub fn suggestion_row(row: &Row) -> rusqlite::Result<Suggestion> {
    Ok(Suggestion {
        id: get(row, 0)?,
        kind: get(row, 1)?,
        status: name(row, 2, SuggestionStatus::parse)?,
        target: get(row, 3)?,
        secondary: get(row, 4)?,
        payload: from_json(row, 5)?,
        created_at: ts(row, 6)?,
    })
}

pub fn participant_mapping_row(row: &Row) -> rusqlite::Result<ParticipantMapping> {
    Ok(ParticipantMapping {
        meeting: get(row, 0)?,
        key: get(row, 1)?,
        source: name(row, 2, MappingSource::parse)?,
        display_name: get(row, 3)?,
        email: get(row, 4)?,
        person_entity: get(row, 5)?,
    })
}
