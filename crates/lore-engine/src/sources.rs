//! Meetings as sources: their transcript, excerpts around a cited segment, notes, links and
//! attachments added after ingest, and the owner-wide deadline and task lists.

use std::collections::BTreeMap;

use lore_core::ids::{sha256_hex, short_id};
use lore_core::model::*;
use lore_core::time::format_offset;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;

use crate::apply::Changes;
use crate::{Engine, EngineError, EngineResult};

/// Longest note text accepted.
pub const MAX_NOTE_CHARS: usize = 20_000;
/// Largest attachment accepted through `add_attachment`.
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;
/// Most segments on either side of a cited one in an excerpt.
pub const MAX_EXCERPT_AROUND: usize = 20;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeetingParticipant {
    pub display_name: String,
    pub email: Option<String>,
    pub speaker_label: Option<String>,
    pub person: Option<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NoteView {
    pub id: String,
    pub created_at: Ts,
    pub author: Option<String>,
    pub text: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AttachmentView {
    pub id: String,
    pub kind: AttachmentKind,
    pub filename: String,
    pub media_type: String,
    pub sha256: String,
    pub size: i64,
    pub created_at: Ts,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeetingLinkView {
    pub id: String,
    pub url: String,
    pub resource_type: ResourceType,
    pub title: Option<String>,
    pub provenance: LinkProvenance,
    pub ingested_status: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeetingDetail {
    pub id: String,
    pub external_id: String,
    pub title: String,
    pub started_at: Ts,
    pub ended_at: Option<Ts>,
    pub platform: Option<String>,
    pub segments: usize,
    pub participants: Vec<MeetingParticipant>,
    pub notes: Vec<NoteView>,
    pub attachments: Vec<AttachmentView>,
    pub links: Vec<MeetingLinkView>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SegmentView {
    pub id: String,
    /// `mm:ss` from the start of the meeting.
    pub offset: String,
    pub start_ms: i64,
    pub end_ms: i64,
    /// The speaker's display name when the label maps to a participant, else the label.
    pub speaker: Option<String>,
    pub attribution: Attribution,
    pub text: String,
}

/// A meeting's transcript, whole or an excerpt around one segment.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Transcript {
    pub meeting: String,
    pub external_id: String,
    pub title: String,
    pub started_at: Ts,
    /// The segment an excerpt is centred on.
    pub cited: Option<String>,
    pub segments: Vec<SegmentView>,
}

/// What adding a note, link or attachment reports: the revision and the new row's id.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SourceReport {
    pub revision: String,
    pub id: String,
}

/// A meeting by id or external id; another owner's meeting is not found (L20).
pub(crate) fn find_meeting_ref(tx: &mut dyn Tx, meeting: &str) -> EngineResult<Meeting> {
    match tx.find_meeting(meeting)? {
        Some(found) => Ok(found),
        None => tx.find_meeting_by_external_id(meeting)?.ok_or_else(|| {
            EngineError::NotFound(format!("no meeting with id or external id '{meeting}'"))
        }),
    }
}

fn segment_views(tx: &mut dyn Tx, meeting: &Meeting) -> EngineResult<Vec<SegmentView>> {
    let speakers: BTreeMap<String, String> = tx
        .list_participants(&meeting.id)?
        .into_iter()
        .filter_map(|p| p.speaker_label.map(|label| (label, p.display_name)))
        .collect();
    Ok(tx
        .list_segments(&meeting.id)?
        .into_iter()
        .map(|segment| SegmentView {
            offset: format_offset(segment.start_ms),
            speaker: segment.speaker_label.as_ref().map(|label| {
                speakers
                    .get(label)
                    .cloned()
                    .unwrap_or_else(|| label.clone())
            }),
            id: segment.id,
            start_ms: segment.start_ms,
            end_ms: segment.end_ms,
            attribution: segment.attribution,
            text: segment.text,
        })
        .collect())
}

fn note_view(note: Note) -> NoteView {
    NoteView {
        id: note.id,
        created_at: note.created_at,
        author: note.author,
        text: note.text,
    }
}

impl Engine {
    /// Parses, validates and ingests a bundle received as text (an upload). It reads no file: an
    /// attachment that names a `path` is refused, since the path would be on this machine, not the
    /// sender's; attachment bytes are uploaded separately.
    pub fn ingest_bundle_json(&self, owner: &str, text: &str) -> EngineResult<crate::IngestReport> {
        let bundle = lore_ingest::parse_bundle(text, &self.registry, None)
            .map_err(|errors| EngineError::Invalid(format!("invalid bundle:\n{errors}")))?;
        if let Some(index) = bundle.attachments.iter().position(|a| a.path.is_some()) {
            return Err(EngineError::Invalid(format!(
                "attachments[{index}].path: an uploaded bundle cannot name a file; upload the bytes to the meeting's attachments instead"
            )));
        }
        self.ingest_bundle(owner, &bundle)
    }

    /// One meeting with its participants, notes, attachments and links.
    pub fn get_meeting(&self, owner: &str, meeting: &str) -> EngineResult<MeetingDetail> {
        self.read(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            let participants = tx
                .list_participants(&found.id)?
                .into_iter()
                .filter(|p| !p.excluded)
                .map(|p| MeetingParticipant {
                    display_name: p.display_name,
                    email: p.email,
                    speaker_label: p.speaker_label,
                    person: p.person_entity,
                })
                .collect();
            let notes = tx
                .list_notes(&found.id)?
                .into_iter()
                .map(note_view)
                .collect();
            let attachments = tx
                .list_attachments(&found.id)?
                .into_iter()
                .map(|a| AttachmentView {
                    id: a.id,
                    kind: a.kind,
                    filename: a.filename,
                    media_type: a.media_type,
                    sha256: a.sha256,
                    size: a.size,
                    created_at: a.created_at,
                })
                .collect();
            let links = tx
                .list_resource_links_by_meeting(&found.id)?
                .into_iter()
                .filter(|l| l.entity.is_none())
                .map(|l| MeetingLinkView {
                    id: l.id,
                    url: l.url,
                    resource_type: l.resource_type,
                    title: l.title,
                    provenance: l.provenance,
                    ingested_status: l.ingested_status,
                })
                .collect();
            Ok(MeetingDetail {
                segments: tx.list_segments(&found.id)?.len(),
                id: found.id,
                external_id: found.external_id,
                title: found.title,
                started_at: found.started_at,
                ended_at: found.ended_at,
                platform: found.platform,
                participants,
                notes,
                attachments,
                links,
            })
        })
    }

    /// The whole transcript of a meeting, in order.
    pub fn meeting_transcript(&self, owner: &str, meeting: &str) -> EngineResult<Transcript> {
        self.read(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            let segments = segment_views(tx, &found)?;
            Ok(Transcript {
                meeting: found.id,
                external_id: found.external_id,
                title: found.title,
                started_at: found.started_at,
                cited: None,
                segments,
            })
        })
    }

    /// The segments around a cited one: `around` before and after it (at most `MAX_EXCERPT_AROUND`).
    pub fn meeting_excerpt(
        &self,
        owner: &str,
        meeting: &str,
        segment: &str,
        around: usize,
    ) -> EngineResult<Transcript> {
        let around = around.min(MAX_EXCERPT_AROUND);
        let mut transcript = self.meeting_transcript(owner, meeting)?;
        let index = transcript
            .segments
            .iter()
            .position(|s| s.id == segment)
            .ok_or_else(|| {
                EngineError::NotFound(format!("meeting has no segment with id '{segment}'"))
            })?;
        let start = index.saturating_sub(around);
        let end = (index + around + 1).min(transcript.segments.len());
        transcript.segments = transcript.segments[start..end].to_vec();
        transcript.cited = Some(segment.to_string());
        Ok(transcript)
    }

    pub fn list_notes(&self, owner: &str, meeting: &str) -> EngineResult<Vec<NoteView>> {
        self.read(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            Ok(tx
                .list_notes(&found.id)?
                .into_iter()
                .map(note_view)
                .collect())
        })
    }

    /// Adds a note to a meeting. A note is a source: deleting it later cascades like any other (L13).
    pub fn add_note(
        &self,
        owner: &str,
        meeting: &str,
        text: &str,
        author: Option<&str>,
    ) -> EngineResult<SourceReport> {
        let text = text.trim();
        if text.is_empty() {
            return Err(EngineError::Invalid("note text must not be empty".into()));
        }
        if text.chars().count() > MAX_NOTE_CHARS {
            return Err(EngineError::Invalid(format!(
                "note text is longer than {MAX_NOTE_CHARS} characters"
            )));
        }
        let now = self.now();
        self.write(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            let local_id = format!("manual-{}", uuid::Uuid::now_v7().simple());
            let note = Note {
                id: short_id("n_", &[&found.id, &local_id]),
                meeting: found.id.clone(),
                local_id,
                created_at: now,
                author: author
                    .map(str::trim)
                    .filter(|a| !a.is_empty())
                    .map(str::to_string),
                text: text.to_string(),
            };
            tx.insert_note(&note)?;
            let mut changes = Changes::default();
            changes.record(
                format!("note:{}", note.id),
                None,
                serde_json::to_value(&note).ok(),
            );
            let revision =
                changes.write_revision(tx, RevisionAction::ManualOverride, &note.id, None, now)?;
            Ok(SourceReport {
                revision,
                id: note.id.clone(),
            })
        })
    }

    /// Records a link shared in a meeting (`url_only`: Lore never claims to have read it).
    pub fn add_meeting_link(
        &self,
        owner: &str,
        meeting: &str,
        url: &str,
        title: Option<&str>,
    ) -> EngineResult<SourceReport> {
        let normalized = lore_ingest::normalize_url(url)
            .map_err(|error| EngineError::Invalid(format!("url: {error}")))?;
        let now = self.now();
        self.write(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            let link = ResourceLink {
                id: short_id("l_", &[&found.id, &normalized.url]),
                entity: None,
                meeting: Some(found.id.clone()),
                source_kind: SourceKind::Meeting,
                source_id: found.id.clone(),
                resource_type: normalized.resource_type,
                url: normalized.url.clone(),
                external_key: normalized.external_key.clone(),
                title: title
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
                provenance: LinkProvenance::Manual,
                ingested_status: "url_only".into(),
                first_seen_at: now,
                last_seen_at: now,
            };
            tx.upsert_resource_link(&link)?;
            let mut changes = Changes::default();
            changes.record(
                format!("resource_link:{}", link.id),
                None,
                serde_json::to_value(&link).ok(),
            );
            crate::links::sync_meeting_attachments(tx, &found.id, &mut changes)?;
            let revision =
                changes.write_revision(tx, RevisionAction::ManualOverride, &link.id, None, now)?;
            Ok(SourceReport {
                revision,
                id: link.id.clone(),
            })
        })
    }

    /// Stores uploaded bytes content-addressed and attaches them to a meeting.
    pub fn add_attachment(
        &self,
        owner: &str,
        meeting: &str,
        filename: &str,
        media_type: &str,
        bytes: &[u8],
    ) -> EngineResult<SourceReport> {
        let filename = filename.trim();
        if filename.is_empty() || filename.len() > 255 || filename.contains(['/', '\\', '\0']) {
            return Err(EngineError::Invalid(
                "filename must be a plain file name (no folders), 1 to 255 bytes".into(),
            ));
        }
        if bytes.len() > MAX_ATTACHMENT_BYTES {
            return Err(EngineError::Invalid(format!(
                "attachment is larger than {MAX_ATTACHMENT_BYTES} bytes"
            )));
        }
        let sha256 = sha256_hex(bytes);
        let target = self.store.blob_dir().join(&sha256[..2]).join(&sha256);
        if !target.exists() {
            let folder = target.parent().expect("blob path has a folder");
            let temporary = folder.join(format!(".{sha256}.{}.tmp", uuid::Uuid::now_v7().simple()));
            std::fs::create_dir_all(folder)
                .and_then(|()| std::fs::write(&temporary, bytes))
                .and_then(|()| std::fs::rename(&temporary, &target))
                .map_err(|error| {
                    EngineError::Internal(format!("cannot store blob {sha256}: {error}"))
                })?;
        }
        let now = self.now();
        self.write(owner, |tx| {
            let found = find_meeting_ref(tx, meeting)?;
            let local_id = format!("upload-{}", uuid::Uuid::now_v7().simple());
            let attachment = Attachment {
                id: short_id("a_", &[&found.id, &local_id]),
                meeting: found.id.clone(),
                local_id,
                kind: AttachmentKind::File,
                filename: filename.to_string(),
                media_type: media_type.to_string(),
                sha256: sha256.clone(),
                size: bytes.len() as i64,
                created_at: now,
            };
            tx.insert_attachment(&attachment)?;
            let mut changes = Changes::default();
            changes.record(
                format!("attachment:{}", attachment.id),
                None,
                serde_json::to_value(&attachment).ok(),
            );
            let revision = changes.write_revision(
                tx,
                RevisionAction::ManualOverride,
                &attachment.id,
                None,
                now,
            )?;
            Ok(SourceReport {
                revision,
                id: attachment.id.clone(),
            })
        })
    }
}
