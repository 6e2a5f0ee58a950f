//! The typed, validated content of a meeting bundle (SPEC 5.1). Values here have passed every check in `parse`.

use std::path::PathBuf;

use lore_core::{
    AttachmentKind, Attribution, Authority, EntityKind, LinkProvenance, Outcome, ResourceType,
    TaskStatus, Ts,
};
use serde::Serialize;

/// One meeting bundle, validated as a whole.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bundle {
    pub meeting: MeetingInput,
    pub participants: Vec<ParticipantInput>,
    pub segments: Vec<SegmentInput>,
    pub notes: Vec<NoteInput>,
    pub attachments: Vec<AttachmentInput>,
    pub links: Vec<LinkInput>,
    pub tasks: Vec<TaskInput>,
    /// Tags the meeting applies; a tag may link a project or concept (L17: the tag keys it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<TagInput>,
    /// None when the bundle has no "claims" key (an extractor would run); Some(empty) when it is [].
    pub claims: Option<Vec<ClaimCandidate>>,
    /// sha256 hex of the canonical JSON of the whole input (object keys sorted recursively, compact), so that
    /// key order or whitespace changes do not change it.
    pub content_hash: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeetingInput {
    pub external_id: String,
    /// The external id when the bundle gives no title.
    pub title: String,
    pub started_at: Ts,
    pub ended_at: Option<Ts>,
    pub platform: Option<String>,
    pub series: Option<SeriesInput>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SeriesInput {
    pub calendar_account: String,
    pub calendar_id: String,
    pub recurring_event_id: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ParticipantInput {
    pub display_name: String,
    /// Normalized (trimmed, lowercase).
    pub email: Option<String>,
    pub platform_stable_id: Option<String>,
    /// The bundle's `emails`: normalized, deduplicated, never equal to `email` (L15).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_emails: Vec<String>,
    /// Meeting-scoped: never used to match people across meetings (L15).
    pub device_id: Option<String>,
    pub speaker_label: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SegmentInput {
    pub id: String,
    pub start_ms: i64,
    pub end_ms: i64,
    /// The speaker label as the transcript gives it; it may name no participant (an unmapped speaker).
    pub speaker: Option<String>,
    pub attribution: Attribution,
    /// As given, white space included: transcripts are data.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NoteInput {
    pub id: String,
    pub created_at: Ts,
    pub author: Option<String>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AttachmentInput {
    pub id: String,
    pub kind: AttachmentKind,
    pub filename: String,
    /// Given, or guessed from the filename's extension.
    pub media_type: String,
    pub created_at: Ts,
    /// The file to read: `base_dir` joined with the bundle's relative path when a base folder was given,
    /// otherwise the relative path as written.
    pub path: Option<PathBuf>,
}

/// A tag applied in a meeting (SPEC 2.1). `key` is the normalized name (`#Atlas Launch` ->
/// `atlas-launch`); a linked `entity` (a project or concept) resolves by that key instead of its slug.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TagInput {
    pub name: String,
    pub key: String,
    pub description: Option<String>,
    pub entity: Option<EntityRef>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkInput {
    /// Normalized by `normalize_url`.
    pub url: String,
    pub resource_type: ResourceType,
    pub external_key: Option<String>,
    /// The bundle's `label`.
    pub title: Option<String>,
    pub provenance: LinkProvenance,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskInput {
    pub title: String,
    /// Always a person.
    pub assignee: Option<EntityRef>,
    /// Always a project.
    pub project: Option<EntityRef>,
    pub due_at: Option<Ts>,
    pub status: TaskStatus,
    pub evidence: Option<EvidenceInput>,
}

/// How a bundle names an entity: its kind and name plus whatever identifies it (SPEC 5.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntityRef {
    pub kind: EntityKind,
    /// White space collapsed; for a person given only an email, the email's local part.
    pub name: String,
    /// Person only; normalized.
    pub email: Option<String>,
    /// Company only; from `domain` or `url`, normalized.
    pub domain: Option<String>,
    pub external_key: Option<String>,
    /// Project and concept only: the slug of the given key, or of the name when no key is given.
    pub key: Option<String>,
}

/// Where a statement was made: exactly one of segments, a note or an attachment of the same bundle.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EvidenceInput {
    /// In transcript order, without duplicates.
    pub segment_ids: Vec<String>,
    pub note: Option<String>,
    pub attachment: Option<String>,
    /// At most 1000 characters: the given quote (checked against the cited text), or the cited segments' or
    /// note's text when none is given. None for attachment evidence without a quote.
    pub quote: Option<String>,
    /// Normalized by `normalize_url`.
    pub source_url: Option<String>,
}

/// A claim as a bundle states it, checked against the predicate registry but not yet resolved or stored.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClaimCandidate {
    /// Position in the bundle's `claims` array.
    pub index: usize,
    pub subject: EntityRef,
    pub predicate: String,
    /// Text with white space collapsed, or a normalized URL for resource predicates (`has_link`).
    pub value: Option<String>,
    pub object: Option<EntityRef>,
    pub context: Option<EntityRef>,
    pub due_at: Option<Ts>,
    pub valid_from: Option<Ts>,
    pub valid_to: Option<Ts>,
    /// A termination (L5) rather than a support.
    pub ends: bool,
    pub outcome: Option<Outcome>,
    /// Never `Manual`: a source cannot touch a manual field (L22).
    pub authority: Authority,
    pub confidence: f64,
    pub evidence: EvidenceInput,
    /// As given; not checked against anything.
    pub supersedes: Vec<String>,
}
