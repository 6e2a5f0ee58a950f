//! Meeting bundle validation (SPEC 5.1): every field checked, every problem reported, nothing partially accepted.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use lore_core::normalize::{
    collapse_whitespace, normalize_domain, normalize_email, slug, truncate_chars,
};
use lore_core::{
    AttachmentKind, Attribution, Authority, EntityKind, LinkProvenance, ObjectSpec, Outcome,
    PredicateDef, Registry, TaskStatus, Ts,
};
use serde_json::Value;

use crate::bundle::{
    AttachmentInput, Bundle, ClaimCandidate, EntityRef, EvidenceInput, LinkInput, MeetingInput,
    NoteInput, ParticipantInput, SegmentInput, SeriesInput, TagInput, TaskInput,
};
use crate::canonical::canonical_json_hash;
use crate::error::{BundleErrors, FieldError};
use crate::links::normalize_url;
use crate::reader::{child, field, item, Object, Reader};

/// Longest accepted `meeting.external_id`, in characters.
const MAX_EXTERNAL_ID_CHARS: usize = 200;
/// Longest stored evidence quote, in characters (SPEC 2.2).
const MAX_QUOTE_CHARS: usize = 1000;

const BUNDLE_FIELDS: &[&str] = &[
    "meeting",
    "participants",
    "segments",
    "notes",
    "attachments",
    "links",
    "tasks",
    "claims",
    "tags",
];
const MEETING_FIELDS: &[&str] = &[
    "external_id",
    "title",
    "started_at",
    "ended_at",
    "platform",
    "series",
];
const SERIES_FIELDS: &[&str] = &["calendar_account", "calendar_id", "recurring_event_id"];
const PARTICIPANT_FIELDS: &[&str] = &[
    "display_name",
    "email",
    "emails",
    "platform_stable_id",
    "device_id",
    "speaker_label",
];
const SEGMENT_FIELDS: &[&str] = &["id", "start_ms", "end_ms", "speaker", "attribution", "text"];
const NOTE_FIELDS: &[&str] = &["id", "created_at", "author", "text"];
const ATTACHMENT_FIELDS: &[&str] = &["id", "kind", "filename", "media_type", "created_at", "path"];
const LINK_FIELDS: &[&str] = &["url", "label", "provenance"];
const TAG_FIELDS: &[&str] = &["name", "description", "entity"];
const TASK_FIELDS: &[&str] = &[
    "title", "assignee", "project", "due_at", "status", "evidence",
];
const EVIDENCE_FIELDS: &[&str] = &["segment_ids", "note", "attachment", "quote", "source_url"];
const CLAIM_FIELDS: &[&str] = &[
    "id",
    "subject",
    "predicate",
    "value",
    "object",
    "context",
    "due_at",
    "valid_from",
    "valid_to",
    "ends",
    "outcome",
    "authority",
    "confidence",
    "evidence",
    "supersedes",
];
/// Fields every entity reference may carry; the kind decides which of `ENTITY_KIND_FIELDS` it may add.
const ENTITY_COMMON_FIELDS: &[&str] = &["kind", "name", "external_key"];
const ENTITY_KIND_FIELDS: &[&str] = &["email", "domain", "url", "key"];
const ENTITY_ALL_FIELDS: &[&str] = &[
    "kind",
    "name",
    "external_key",
    "email",
    "domain",
    "url",
    "key",
];

/// Parses and validates a meeting bundle.
///
/// `base_dir` is the folder the bundle came from: attachment paths are resolved against it and must exist there.
/// Without it, attachment paths are only checked to stay relative. On failure every problem is returned, in
/// document order.
pub fn parse_bundle(
    json: &str,
    registry: &Registry,
    base_dir: Option<&Path>,
) -> Result<Bundle, BundleErrors> {
    let document: Value = serde_json::from_str(json)
        .map_err(|error| BundleErrors(vec![FieldError::new("", error.to_string())]))?;
    parse_bundle_value(&document, registry, base_dir)
}

/// Validates a bundle already read as JSON (transcript and AMI converters build one).
pub fn parse_bundle_value(
    document: &Value,
    registry: &Registry,
    base_dir: Option<&Path>,
) -> Result<Bundle, BundleErrors> {
    let content_hash = canonical_json_hash(document);
    let mut reader = Reader::default();
    let Some(top) = document.as_object() else {
        return Err(BundleErrors(vec![FieldError::new(
            "",
            "a bundle must be a json object",
        )]));
    };
    reader.unknown_fields(top, "", BUNDLE_FIELDS);

    let meeting = match field(top, "meeting") {
        Some(value) => read_meeting(&mut reader, value),
        None => {
            reader.fail("meeting", "missing required field");
            None
        }
    };
    let participants = read_participants(&mut reader, top);
    let speaker_labels: HashSet<&str> = participants
        .iter()
        .filter_map(|participant| participant.speaker_label.as_deref())
        .collect();
    let segments = read_segments(&mut reader, top, &speaker_labels);
    let notes = read_notes(&mut reader, top);
    let attachments = read_attachments(&mut reader, top, base_dir);
    let links = read_links(&mut reader, top);
    let tags = read_tags(&mut reader, top);
    let sources = Sources::new(&segments, &notes, &attachments);
    let tasks = read_tasks(&mut reader, top, &sources);
    let claims =
        field(top, "claims").map(|value| read_claims(&mut reader, value, registry, &sources));

    match meeting {
        Some(meeting) if reader.errors.is_empty() => Ok(Bundle {
            meeting,
            participants,
            segments,
            notes,
            attachments,
            links,
            tasks,
            tags,
            claims,
            content_hash,
        }),
        _ => Err(BundleErrors(reader.errors)),
    }
}

fn read_meeting(reader: &mut Reader, value: &Value) -> Option<MeetingInput> {
    let path = "meeting";
    let map = reader.object(value, path, MEETING_FIELDS)?;
    let external_id = reader.required_string(map, path, "external_id");
    if let Some(id) = &external_id {
        if id.chars().count() > MAX_EXTERNAL_ID_CHARS {
            reader.fail(
                child(path, "external_id"),
                format!("must be at most {MAX_EXTERNAL_ID_CHARS} characters"),
            );
        }
    }
    let title = reader
        .optional_string(map, path, "title")
        .map(|title| collapse_whitespace(&title));
    let started_at = reader.required_time(map, path, "started_at");
    let ended_at = reader.optional_time(map, path, "ended_at");
    if let (Some(started), Some(ended)) = (started_at, ended_at) {
        if ended < started {
            reader.fail(child(path, "ended_at"), "ended_at is before started_at");
        }
    }
    let platform = reader.optional_string(map, path, "platform");
    let series =
        field(map, "series").and_then(|value| read_series(reader, value, &child(path, "series")));
    let external_id = external_id?;
    Some(MeetingInput {
        title: title.unwrap_or_else(|| external_id.clone()),
        external_id,
        started_at: started_at?,
        ended_at,
        platform,
        series,
    })
}

fn read_series(reader: &mut Reader, value: &Value, path: &str) -> Option<SeriesInput> {
    let map = reader.object(value, path, SERIES_FIELDS)?;
    let calendar_account = reader.required_string(map, path, "calendar_account");
    let calendar_id = reader.required_string(map, path, "calendar_id");
    let recurring_event_id = reader.required_string(map, path, "recurring_event_id");
    Some(SeriesInput {
        calendar_account: calendar_account?,
        calendar_id: calendar_id?,
        recurring_event_id: recurring_event_id?,
    })
}

fn read_participants(reader: &mut Reader, top: &Object) -> Vec<ParticipantInput> {
    let mut participants = Vec::new();
    let mut labels_seen = HashSet::new();
    for (index, value) in reader
        .optional_array(top, "", "participants")
        .iter()
        .enumerate()
    {
        let path = item("participants", index);
        let Some(map) = reader.object(value, &path, PARTICIPANT_FIELDS) else {
            continue;
        };
        let display_name = reader
            .required_string(map, &path, "display_name")
            .map(|name| collapse_whitespace(&name));
        let email = read_email(reader, map, &path);
        let platform_stable_id = reader.optional_string(map, &path, "platform_stable_id");
        let mut additional_emails: Vec<String> = Vec::new();
        for (position, raw) in reader
            .optional_array(map, &path, "emails")
            .iter()
            .enumerate()
        {
            match raw.as_str().and_then(normalize_email) {
                Some(normalized) => {
                    if Some(&normalized) != email.as_ref()
                        && !additional_emails.contains(&normalized)
                    {
                        additional_emails.push(normalized);
                    }
                }
                None => reader.fail(
                    format!("{}[{position}]", child(&path, "emails")),
                    format!("invalid email {raw}"),
                ),
            }
        }
        let device_id = reader.optional_string(map, &path, "device_id");
        let speaker_label = reader.optional_string(map, &path, "speaker_label");
        if let Some(label) = &speaker_label {
            if !labels_seen.insert(label.clone()) {
                reader.fail(
                    child(&path, "speaker_label"),
                    format!("duplicate speaker_label '{label}'"),
                );
            }
        }
        participants.push(ParticipantInput {
            display_name: display_name.unwrap_or_default(),
            email,
            platform_stable_id,
            additional_emails,
            device_id,
            speaker_label,
        });
    }
    participants
}

fn read_email(reader: &mut Reader, map: &Object, path: &str) -> Option<String> {
    let raw = reader.optional_string(map, path, "email")?;
    let normalized = normalize_email(&raw);
    if normalized.is_none() {
        reader.fail(child(path, "email"), format!("invalid email '{raw}'"));
    }
    normalized
}

/// Reads an id and reports it when another element of the same array already used it.
fn read_unique_id(
    reader: &mut Reader,
    map: &Object,
    path: &str,
    what: &str,
    seen: &mut HashSet<String>,
) -> Option<String> {
    let id = reader.required_string(map, path, "id")?;
    if !seen.insert(id.clone()) {
        reader.fail(child(path, "id"), format!("duplicate {what} id '{id}'"));
    }
    Some(id)
}

fn read_segments(
    reader: &mut Reader,
    top: &Object,
    speaker_labels: &HashSet<&str>,
) -> Vec<SegmentInput> {
    let mut segments = Vec::new();
    let mut ids_seen = HashSet::new();
    for (index, value) in reader
        .optional_array(top, "", "segments")
        .iter()
        .enumerate()
    {
        let path = item("segments", index);
        let Some(map) = reader.object(value, &path, SEGMENT_FIELDS) else {
            continue;
        };
        let id = read_unique_id(reader, map, &path, "segment", &mut ids_seen);
        let start_ms = match reader.optional_integer(map, &path, "start_ms") {
            Some(start) if start < 0 => {
                reader.fail(child(&path, "start_ms"), "must not be negative");
                None
            }
            Some(start) => Some(start),
            None if field(map, "start_ms").is_none() => {
                reader.fail(child(&path, "start_ms"), "missing required field");
                None
            }
            None => None,
        };
        let end_ms = reader.optional_integer(map, &path, "end_ms");
        if let (Some(start), Some(end)) = (start_ms, end_ms) {
            if end < start {
                reader.fail(child(&path, "end_ms"), "end_ms is before start_ms");
            }
        }
        let speaker = reader.optional_string(map, &path, "speaker");
        let attribution = reader.optional_enum(
            map,
            &path,
            "attribution",
            "attribution",
            Attribution::parse,
            Attribution::names,
        );
        let default_attribution = match &speaker {
            Some(label) if speaker_labels.contains(label.as_str()) => Attribution::OneMappedSource,
            _ => Attribution::Unmapped,
        };
        let text = reader.required_raw_string(map, &path, "text");
        let start_ms = start_ms.unwrap_or_default();
        segments.push(SegmentInput {
            id: id.unwrap_or_default(),
            start_ms,
            end_ms: end_ms.unwrap_or(start_ms),
            speaker,
            attribution: attribution.unwrap_or(default_attribution),
            text: text.unwrap_or_default(),
        });
    }
    segments
}

fn read_notes(reader: &mut Reader, top: &Object) -> Vec<NoteInput> {
    let mut notes = Vec::new();
    let mut ids_seen = HashSet::new();
    for (index, value) in reader.optional_array(top, "", "notes").iter().enumerate() {
        let path = item("notes", index);
        let Some(map) = reader.object(value, &path, NOTE_FIELDS) else {
            continue;
        };
        let id = read_unique_id(reader, map, &path, "note", &mut ids_seen);
        let created_at = reader.required_time(map, &path, "created_at");
        let author = reader.optional_string(map, &path, "author");
        let text = reader.required_raw_string(map, &path, "text");
        notes.push(NoteInput {
            id: id.unwrap_or_default(),
            created_at: created_at.unwrap_or(Ts(0)),
            author,
            text: text.unwrap_or_default(),
        });
    }
    notes
}

fn read_attachments(
    reader: &mut Reader,
    top: &Object,
    base_dir: Option<&Path>,
) -> Vec<AttachmentInput> {
    let mut attachments = Vec::new();
    let mut ids_seen = HashSet::new();
    for (index, value) in reader
        .optional_array(top, "", "attachments")
        .iter()
        .enumerate()
    {
        let path = item("attachments", index);
        let Some(map) = reader.object(value, &path, ATTACHMENT_FIELDS) else {
            continue;
        };
        let id = read_unique_id(reader, map, &path, "attachment", &mut ids_seen);
        let kind = reader.optional_enum(
            map,
            &path,
            "kind",
            "attachment kind",
            AttachmentKind::parse,
            AttachmentKind::names,
        );
        let filename = reader.required_string(map, &path, "filename");
        let media_type = reader.optional_string(map, &path, "media_type");
        let created_at = reader.required_time(map, &path, "created_at");
        let file_path = read_attachment_path(reader, map, &path, base_dir);
        let filename = filename.unwrap_or_default();
        attachments.push(AttachmentInput {
            id: id.unwrap_or_default(),
            kind: kind.unwrap_or(AttachmentKind::File),
            media_type: media_type.unwrap_or_else(|| guess_media_type(&filename).to_string()),
            filename,
            created_at: created_at.unwrap_or(Ts(0)),
            path: file_path,
        });
    }
    attachments
}

fn read_attachment_path(
    reader: &mut Reader,
    map: &Object,
    path: &str,
    base_dir: Option<&Path>,
) -> Option<PathBuf> {
    let relative = reader.optional_string(map, path, "path")?;
    let relative_path = Path::new(&relative);
    // Backslashes count as separators too, so that `..\\x` written on Windows cannot escape either.
    let stays_inside = !relative.starts_with(['/', '\\'])
        && !relative.split(['/', '\\']).any(|part| part == "..")
        && relative_path
            .components()
            .all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    if !stays_inside {
        reader.fail(child(path, "path"), OUTSIDE_FOLDER);
        return None;
    }
    let Some(base) = base_dir else {
        return Some(relative_path.to_path_buf());
    };
    let full = base.join(relative_path);
    if !full.is_file() {
        reader.fail(child(path, "path"), format!("file not found: {relative}"));
        return None;
    }
    // A symbolic link inside the folder must not lead out of it.
    match (full.canonicalize(), base.canonicalize()) {
        (Ok(real_file), Ok(real_base)) if real_file.starts_with(&real_base) => Some(full),
        (Ok(_), Ok(_)) => {
            reader.fail(child(path, "path"), OUTSIDE_FOLDER);
            None
        }
        _ => {
            reader.fail(child(path, "path"), format!("file not found: {relative}"));
            None
        }
    }
}

const OUTSIDE_FOLDER: &str = "path must stay inside the bundle's folder";

/// The media type implied by a filename's extension.
fn guess_media_type(filename: &str) -> &'static str {
    let extension = filename
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "mp3" => "audio/mpeg",
        "m4a" => "audio/mp4",
        "wav" => "audio/wav",
        _ => "application/octet-stream",
    }
}

fn read_links(reader: &mut Reader, top: &Object) -> Vec<LinkInput> {
    let mut links = Vec::new();
    for (index, value) in reader.optional_array(top, "", "links").iter().enumerate() {
        let path = item("links", index);
        let Some(map) = reader.object(value, &path, LINK_FIELDS) else {
            continue;
        };
        let normalized = read_url(reader, map, &path, "url", true);
        let title = reader
            .optional_string(map, &path, "label")
            .map(|label| collapse_whitespace(&label));
        let provenance = reader.optional_enum(
            map,
            &path,
            "provenance",
            "provenance",
            LinkProvenance::parse,
            LinkProvenance::names,
        );
        if let Some(normalized) = normalized {
            links.push(LinkInput {
                url: normalized.url,
                resource_type: normalized.resource_type,
                external_key: normalized.external_key,
                title,
                provenance: provenance.unwrap_or(LinkProvenance::MeetingChat),
            });
        }
    }
    links
}

/// Tags: a name, an optional description, and optionally the project or concept the tag links.
fn read_tags(reader: &mut Reader, top: &Object) -> Vec<TagInput> {
    let mut tags: Vec<TagInput> = Vec::new();
    for (index, value) in reader.optional_array(top, "", "tags").iter().enumerate() {
        let path = item("tags", index);
        let Some(map) = reader.object(value, &path, TAG_FIELDS) else {
            continue;
        };
        let name = reader
            .required_string(map, &path, "name")
            .map(|name| collapse_whitespace(&name));
        let key = name.as_deref().map(slug).unwrap_or_default();
        if name.is_some() && key.is_empty() {
            reader.fail(child(&path, "name"), "a tag name needs letters or digits");
        }
        let description = reader
            .optional_string(map, &path, "description")
            .map(|text| collapse_whitespace(&text))
            .filter(|text| !text.is_empty());
        let entity_path = child(&path, "entity");
        let entity =
            field(map, "entity").and_then(|value| read_entity(reader, value, &entity_path));
        if let Some(entity) = &entity {
            if !matches!(entity.kind, EntityKind::Project | EntityKind::Concept) {
                reader.fail(
                    child(&entity_path, "kind"),
                    format!("a tag links a project or a concept, not a {}", entity.kind),
                );
            }
        }
        if let (Some(other), Some(entity)) = (tags.iter().find(|t| t.key == key), &entity) {
            if other.entity.as_ref().is_some_and(|e| e != entity) {
                reader.fail(
                    child(&path, "name"),
                    format!("tag '{key}' links two different entities in one bundle"),
                );
            }
        }
        if let Some(name) = name {
            tags.push(TagInput {
                name,
                key,
                description,
                entity,
            });
        }
    }
    tags
}

fn read_url(
    reader: &mut Reader,
    map: &Object,
    path: &str,
    key: &str,
    required: bool,
) -> Option<crate::NormalizedLink> {
    let raw = if required {
        reader.required_string(map, path, key)
    } else {
        reader.optional_string(map, path, key)
    }?;
    match normalize_url(&raw) {
        Ok(normalized) => Some(normalized),
        Err(message) => {
            reader.fail(child(path, key), message);
            None
        }
    }
}

/// The segments, notes and attachments that evidence may cite, by id.
struct Sources<'b> {
    /// Id to (transcript position, text).
    segments: HashMap<&'b str, (usize, &'b str)>,
    notes: HashMap<&'b str, &'b str>,
    attachments: HashSet<&'b str>,
}

impl<'b> Sources<'b> {
    fn new(
        segments: &'b [SegmentInput],
        notes: &'b [NoteInput],
        attachments: &'b [AttachmentInput],
    ) -> Sources<'b> {
        let mut sources = Sources {
            segments: HashMap::new(),
            notes: HashMap::new(),
            attachments: HashSet::new(),
        };
        for (position, segment) in segments
            .iter()
            .enumerate()
            .filter(|(_, segment)| !segment.id.is_empty())
        {
            sources
                .segments
                .entry(segment.id.as_str())
                .or_insert((position, segment.text.as_str()));
        }
        for note in notes.iter().filter(|note| !note.id.is_empty()) {
            sources
                .notes
                .entry(note.id.as_str())
                .or_insert(note.text.as_str());
        }
        sources.attachments.extend(
            attachments
                .iter()
                .map(|attachment| attachment.id.as_str())
                .filter(|id| !id.is_empty()),
        );
        sources
    }
}

fn read_tasks(reader: &mut Reader, top: &Object, sources: &Sources) -> Vec<TaskInput> {
    let mut tasks = Vec::new();
    for (index, value) in reader.optional_array(top, "", "tasks").iter().enumerate() {
        let path = item("tasks", index);
        let Some(map) = reader.object(value, &path, TASK_FIELDS) else {
            continue;
        };
        let title = reader
            .required_string(map, &path, "title")
            .map(|title| collapse_whitespace(&title));
        let assignee = read_entity_of_kind(reader, map, &path, "assignee", EntityKind::Person);
        let project = read_entity_of_kind(reader, map, &path, "project", EntityKind::Project);
        let due_at = reader.optional_time(map, &path, "due_at");
        let status = reader.optional_enum(
            map,
            &path,
            "status",
            "task status",
            TaskStatus::parse,
            TaskStatus::names,
        );
        let evidence = field(map, "evidence")
            .map(|value| read_evidence(reader, value, &child(&path, "evidence"), sources));
        tasks.push(TaskInput {
            title: title.unwrap_or_default(),
            assignee,
            project,
            due_at,
            status: status.unwrap_or(TaskStatus::Open),
            evidence,
        });
    }
    tasks
}

fn read_entity_of_kind(
    reader: &mut Reader,
    map: &Object,
    path: &str,
    key: &str,
    kind: EntityKind,
) -> Option<EntityRef> {
    let entity_path = child(path, key);
    let entity = read_entity(reader, field(map, key)?, &entity_path)?;
    if entity.kind != kind {
        reader.fail(
            child(&entity_path, "kind"),
            format!("{key} must be a {kind}, not a {}", entity.kind),
        );
    }
    Some(entity)
}

/// Reads an entity reference. Returns it whenever its kind could be read, so that callers can check the kind
/// even when another of its fields was reported.
fn read_entity(reader: &mut Reader, value: &Value, path: &str) -> Option<EntityRef> {
    let Some(map) = value.as_object() else {
        reader.fail(path, "expected an object");
        return None;
    };
    let kind = reader.required_string(map, path, "kind").and_then(|text| {
        let kind = EntityKind::parse(&text);
        if kind.is_none() {
            reader.fail(
                child(path, "kind"),
                format!(
                    "unknown entity kind '{text}'; expected one of: {}",
                    EntityKind::names()
                ),
            );
        }
        kind
    });
    let kind_fields: &[&str] = match kind {
        Some(EntityKind::Person) => &["email"],
        Some(EntityKind::Company) => &["domain", "url"],
        Some(EntityKind::Project | EntityKind::Concept) => &["key"],
        None => ENTITY_KIND_FIELDS,
    };
    for key in map.keys() {
        let key = key.as_str();
        if ENTITY_COMMON_FIELDS.contains(&key) || kind_fields.contains(&key) {
            continue;
        }
        match kind {
            Some(kind) if ENTITY_KIND_FIELDS.contains(&key) => {
                reader.fail(path, format!("field '{key}' does not apply to a {kind}"));
            }
            _ => reader.unknown_field(path, key, ENTITY_ALL_FIELDS),
        }
    }
    let kind = kind?;
    let given_name = reader
        .optional_string(map, path, "name")
        .map(|name| collapse_whitespace(&name));
    let external_key = reader.optional_string(map, path, "external_key");
    let mut entity = EntityRef {
        kind,
        name: String::new(),
        email: None,
        domain: None,
        external_key,
        key: None,
    };
    match kind {
        EntityKind::Person => entity.email = read_email(reader, map, path),
        EntityKind::Company => entity.domain = read_company_domain(reader, map, path),
        EntityKind::Project | EntityKind::Concept => {
            if let Some(raw_key) = reader.optional_string(map, path, "key") {
                let key = slug(&raw_key);
                if key.is_empty() {
                    reader.fail(
                        child(path, "key"),
                        format!("key '{raw_key}' has no letters or digits"),
                    );
                }
                entity.key = Some(key);
            }
        }
    }
    entity.name = match given_name {
        Some(name) => name,
        None => match entity
            .email
            .as_deref()
            .and_then(|email| email.split_once('@'))
        {
            Some((local_part, _)) => local_part.to_string(),
            None => {
                // A wrong-typed name or an invalid email was already reported; one error is enough.
                let email_given = kind == EntityKind::Person && field(map, "email").is_some();
                let name_wrong_type = field(map, "name").is_some_and(|name| !name.is_string());
                if !email_given && !name_wrong_type {
                    let message = if kind == EntityKind::Person {
                        "missing required field (a person needs a name or an email)"
                    } else {
                        "missing required field"
                    };
                    reader.fail(child(path, "name"), message);
                }
                String::new()
            }
        },
    };
    if matches!(kind, EntityKind::Project | EntityKind::Concept)
        && entity.key.is_none()
        && !entity.name.is_empty()
    {
        let key = slug(&entity.name);
        if key.is_empty() {
            reader.fail(
                child(path, "name"),
                format!(
                    "name '{}' has no letters or digits to make a key from",
                    entity.name
                ),
            );
        }
        entity.key = Some(key);
    }
    Some(entity)
}

fn read_company_domain(reader: &mut Reader, map: &Object, path: &str) -> Option<String> {
    let domain = reader.optional_string(map, path, "domain");
    let url = reader.optional_string(map, path, "url");
    match (domain, url) {
        (Some(_), Some(_)) => {
            reader.fail(path, "give either domain or url, not both");
            None
        }
        (Some(domain), None) => {
            let normalized = normalize_domain(&domain);
            if normalized.is_none() {
                reader.fail(child(path, "domain"), format!("invalid domain '{domain}'"));
            }
            normalized
        }
        (None, Some(url)) => {
            let normalized = normalize_domain(&url);
            if normalized.is_none() {
                reader.fail(child(path, "url"), format!("invalid url '{url}'"));
            }
            normalized
        }
        (None, None) => None,
    }
}

/// Reads evidence that must cite exactly one source of this bundle, and fills in or checks its quote.
fn read_evidence(
    reader: &mut Reader,
    value: &Value,
    path: &str,
    sources: &Sources,
) -> EvidenceInput {
    let mut evidence = EvidenceInput::default();
    let Some(map) = reader.object(value, path, EVIDENCE_FIELDS) else {
        return evidence;
    };

    // The text the quote must come from; None when it cannot be known (errors, or an attachment).
    let mut cited_text: Option<String> = None;
    let mut cited_what = "";
    let segment_ids_given = field(map, "segment_ids").is_some();
    if segment_ids_given {
        let ids_path = child(path, "segment_ids");
        let ids = reader.optional_array(map, path, "segment_ids");
        if ids.is_empty() && field(map, "segment_ids").is_some_and(Value::is_array) {
            reader.fail(&ids_path, "must not be empty");
        }
        let mut cited: Vec<(usize, &str, &str)> = Vec::new();
        let mut all_known = !ids.is_empty();
        for (index, id_value) in ids.iter().enumerate() {
            let id_path = item(&ids_path, index);
            match id_value.as_str().map(str::trim) {
                None => {
                    reader.fail(id_path, "expected a string");
                    all_known = false;
                }
                Some(id) => match sources.segments.get_key_value(id) {
                    Some((known_id, (position, text))) => {
                        if !cited.iter().any(|(_, cited_id, _)| cited_id == known_id) {
                            cited.push((*position, known_id, text));
                        }
                    }
                    None => {
                        reader.fail(id_path, format!("unknown segment '{id}'"));
                        all_known = false;
                    }
                },
            }
        }
        cited.sort_by_key(|(position, ..)| *position);
        evidence.segment_ids = cited.iter().map(|(_, id, _)| id.to_string()).collect();
        if all_known {
            cited_text = Some(
                cited
                    .iter()
                    .map(|(.., text)| *text)
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        cited_what = "the cited segments";
    }
    evidence.note = reader.optional_string(map, path, "note");
    if let Some(note) = &evidence.note {
        match sources.notes.get(note.as_str()) {
            Some(text) => cited_text = Some(text.to_string()),
            None => reader.fail(child(path, "note"), format!("unknown note '{note}'")),
        }
        cited_what = "the cited note";
    }
    evidence.attachment = reader.optional_string(map, path, "attachment");
    if let Some(attachment) = &evidence.attachment {
        if !sources.attachments.contains(attachment.as_str()) {
            reader.fail(
                child(path, "attachment"),
                format!("unknown attachment '{attachment}'"),
            );
        }
    }
    let n_cited = usize::from(segment_ids_given)
        + usize::from(evidence.note.is_some())
        + usize::from(evidence.attachment.is_some());
    if n_cited == 0 {
        reader.fail(
            path,
            "evidence must cite segment_ids, a note or an attachment",
        );
    } else if n_cited > 1 {
        reader.fail(
            path,
            "evidence must cite only one of segment_ids, note or attachment",
        );
        cited_text = None;
    }

    let quote = reader.optional_string(map, path, "quote");
    evidence.quote = match (quote, cited_text) {
        (Some(quote), Some(text)) => {
            let haystack = collapse_whitespace(&text).to_lowercase();
            if !haystack.contains(&collapse_whitespace(&quote).to_lowercase()) {
                reader.fail(
                    child(path, "quote"),
                    format!("quote not found in {cited_what}"),
                );
            }
            Some(truncate_chars(&quote, MAX_QUOTE_CHARS).to_string())
        }
        (Some(quote), None) => Some(truncate_chars(&quote, MAX_QUOTE_CHARS).to_string()),
        (None, Some(text)) => Some(truncate_chars(&text, MAX_QUOTE_CHARS).to_string()),
        (None, None) => None,
    };
    evidence.source_url = read_url(reader, map, path, "source_url", false).map(|link| link.url);
    evidence
}

fn read_claims(
    reader: &mut Reader,
    value: &Value,
    registry: &Registry,
    sources: &Sources,
) -> Vec<ClaimCandidate> {
    let Some(items) = value.as_array() else {
        reader.fail("claims", "expected an array");
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(index, value)| read_claim(reader, value, index, registry, sources))
        .collect()
}

fn read_claim(
    reader: &mut Reader,
    value: &Value,
    index: usize,
    registry: &Registry,
    sources: &Sources,
) -> Option<ClaimCandidate> {
    let path = item("claims", index);
    let path = path.as_str();
    let map = reader.object(value, path, CLAIM_FIELDS)?;
    // `id` is accepted and ignored: claim ids are hashes of what a claim says (SPEC 2.2).
    let subject = match field(map, "subject") {
        Some(value) => read_entity(reader, value, &child(path, "subject")),
        None => {
            reader.fail(child(path, "subject"), "missing required field");
            None
        }
    };
    let predicate_name = reader.required_string(map, path, "predicate");
    let definition = predicate_name.as_deref().and_then(|name| {
        let definition = registry.get(name);
        if definition.is_none() {
            reader.fail(
                child(path, "predicate"),
                format!("unknown predicate '{name}'"),
            );
        }
        definition
    });
    let claim_value = read_claim_value(reader, map, path);
    let object =
        field(map, "object").and_then(|value| read_entity(reader, value, &child(path, "object")));
    let context =
        field(map, "context").and_then(|value| read_entity(reader, value, &child(path, "context")));
    let due_at = reader.optional_time(map, path, "due_at");
    let valid_from = reader.optional_time(map, path, "valid_from");
    let valid_to = reader.optional_time(map, path, "valid_to");
    if let (Some(from), Some(to)) = (valid_from, valid_to) {
        if to <= from {
            reader.fail(child(path, "valid_to"), "valid_to must be after valid_from");
        }
    }
    let ends = reader.optional_bool(map, path, "ends").unwrap_or(false);
    let outcome = reader.optional_enum(
        map,
        path,
        "outcome",
        "outcome",
        Outcome::parse,
        Outcome::names,
    );
    if field(map, "outcome").is_some() && !ends {
        reader.fail(
            child(path, "outcome"),
            "outcome applies only to a claim with ends: true",
        );
    }
    let authority = reader.optional_enum(
        map,
        path,
        "authority",
        "authority",
        Authority::parse,
        Authority::names,
    );
    if authority == Some(Authority::Manual) {
        reader.fail(
            child(path, "authority"),
            "manual authority cannot come from a bundle; use `lore claim add`",
        );
    }
    let confidence = reader.optional_number(map, path, "confidence");
    if let Some(confidence) = confidence {
        if !(0.0..=1.0).contains(&confidence) {
            reader.fail(
                child(path, "confidence"),
                format!("confidence must be between 0 and 1, got {confidence}"),
            );
        }
    }
    let evidence = match field(map, "evidence") {
        Some(value) => read_evidence(reader, value, &child(path, "evidence"), sources),
        None => {
            reader.fail(child(path, "evidence"), "missing required field");
            EvidenceInput::default()
        }
    };
    let supersedes = read_supersedes(reader, map, path);

    let mut value = None;
    if let Some(definition) = definition {
        if let Some(subject) = &subject {
            if !definition.accepts_subject(subject.kind) {
                let accepted = kinds_text(&definition.subject_kinds);
                reader.fail(
                    child(path, "subject.kind"),
                    format!(
                        "predicate '{}' takes a {accepted} subject, not a {}",
                        definition.name, subject.kind
                    ),
                );
            }
        }
        value = check_object(reader, path, definition, claim_value, object.as_ref());
        check_context(reader, path, definition, context.as_ref());
        if definition.is_deadline && due_at.is_none() && field(map, "due_at").is_none() {
            reader.fail(
                child(path, "due_at"),
                format!("predicate '{}' needs a due_at", definition.name),
            );
        } else if !definition.is_deadline && field(map, "due_at").is_some() {
            reader.fail(
                child(path, "due_at"),
                format!("predicate '{}' takes no due_at", definition.name),
            );
        }
    }

    Some(ClaimCandidate {
        index,
        subject: subject?,
        predicate: predicate_name?,
        value,
        object,
        context,
        due_at,
        valid_from,
        valid_to,
        ends,
        outcome,
        authority: authority.unwrap_or(Authority::Document),
        confidence: confidence.unwrap_or(1.0),
        evidence,
        supersedes,
    })
}

fn read_supersedes(reader: &mut Reader, map: &Object, path: &str) -> Vec<String> {
    let supersedes_path = child(path, "supersedes");
    let mut supersedes = Vec::new();
    for (index, value) in reader
        .optional_array(map, path, "supersedes")
        .iter()
        .enumerate()
    {
        match value.as_str().map(str::trim) {
            Some(id) if !id.is_empty() => supersedes.push(id.to_string()),
            Some(_) => reader.fail(item(&supersedes_path, index), "must not be empty"),
            None => reader.fail(item(&supersedes_path, index), "expected a string"),
        }
    }
    supersedes
}

/// A claim's `value` field as written.
enum ClaimValue {
    Absent,
    /// White space collapsed, non-empty.
    Text(String),
    Blank,
    /// Not a string; already reported.
    WrongType,
}

fn read_claim_value(reader: &mut Reader, map: &Object, path: &str) -> ClaimValue {
    match field(map, "value") {
        None => ClaimValue::Absent,
        Some(Value::String(text)) => {
            let collapsed = collapse_whitespace(text);
            if collapsed.is_empty() {
                ClaimValue::Blank
            } else {
                ClaimValue::Text(collapsed)
            }
        }
        Some(_) => {
            reader.fail(child(path, "value"), "expected a string");
            ClaimValue::WrongType
        }
    }
}

/// Checks value and object against the predicate's object spec; returns the value to store.
fn check_object(
    reader: &mut Reader,
    path: &str,
    definition: &PredicateDef,
    value: ClaimValue,
    object: Option<&EntityRef>,
) -> Option<String> {
    let name = &definition.name;
    let value_path = child(path, "value");
    let object_path = child(path, "object");
    let check_object_kind = |reader: &mut Reader, kinds: &[EntityKind], object: &EntityRef| {
        if !kinds.contains(&object.kind) {
            reader.fail(
                child(&object_path, "kind"),
                format!(
                    "predicate '{name}' takes a {} object, not a {}",
                    kinds_text(kinds),
                    object.kind
                ),
            );
        }
    };
    match (&definition.object, value, object) {
        (ObjectSpec::Text, _, Some(_)) => {
            reader.fail(
                child(path, "object"),
                format!("predicate '{name}' takes a text value, not an object"),
            );
            None
        }
        (ObjectSpec::Text | ObjectSpec::TextOrEntity(_), ClaimValue::Text(text), None) => {
            Some(text)
        }
        (ObjectSpec::Text, ClaimValue::Absent, None) => {
            reader.fail(value_path, format!("predicate '{name}' needs a value"));
            None
        }
        (
            ObjectSpec::Entity(_),
            ClaimValue::Text(_) | ClaimValue::Blank | ClaimValue::WrongType,
            _,
        ) => {
            reader.fail(
                value_path,
                format!("predicate '{name}' takes an object, not a value"),
            );
            None
        }
        (ObjectSpec::Entity(_), ClaimValue::Absent, None) => {
            reader.fail(
                child(path, "object"),
                format!("predicate '{name}' needs an object"),
            );
            None
        }
        (
            ObjectSpec::Entity(kinds) | ObjectSpec::TextOrEntity(kinds),
            ClaimValue::Absent,
            Some(object),
        ) => {
            check_object_kind(reader, kinds, object);
            None
        }
        (
            ObjectSpec::TextOrEntity(_),
            ClaimValue::Text(_) | ClaimValue::Blank | ClaimValue::WrongType,
            Some(_),
        ) => {
            reader.fail(
                path,
                format!("predicate '{name}' takes a value or an object, not both"),
            );
            None
        }
        (ObjectSpec::TextOrEntity(_), ClaimValue::Absent, None) => {
            reader.fail(
                path,
                format!("predicate '{name}' needs a value or an object"),
            );
            None
        }
        (ObjectSpec::Resource, _, Some(_)) => {
            reader.fail(
                child(path, "object"),
                format!("predicate '{name}' takes a url value, not an object"),
            );
            None
        }
        (ObjectSpec::Resource, ClaimValue::Absent, None) => {
            reader.fail(value_path, format!("predicate '{name}' needs a url value"));
            None
        }
        (ObjectSpec::Resource, ClaimValue::Text(raw), None) => match normalize_url(&raw) {
            Ok(link) => Some(link.url),
            Err(message) => {
                reader.fail(value_path, message);
                None
            }
        },
        (_, ClaimValue::Blank, None) => {
            reader.fail(value_path, "must not be empty");
            None
        }
        (_, ClaimValue::WrongType, None) => None,
    }
}

fn check_context(
    reader: &mut Reader,
    path: &str,
    definition: &PredicateDef,
    context: Option<&EntityRef>,
) {
    let context_path = child(path, "context");
    let name = &definition.name;
    match (definition.context_kind, context) {
        (None, Some(_)) => {
            reader.fail(context_path, format!("predicate '{name}' takes no context"))
        }
        (Some(kind), None) => reader.fail(
            context_path,
            format!("predicate '{name}' needs a context (a {kind})"),
        ),
        (Some(kind), Some(context)) if context.kind != kind => reader.fail(
            child(&context_path, "kind"),
            format!(
                "predicate '{name}' takes a {kind} context, not a {}",
                context.kind
            ),
        ),
        _ => {}
    }
}

/// "person", "person or company"; "any" for an empty list (a predicate that accepts every kind).
fn kinds_text(kinds: &[EntityKind]) -> String {
    if kinds.is_empty() {
        return "any".to_string();
    }
    kinds
        .iter()
        .map(|kind| kind.as_str())
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Candidates an extractor produced, each validated exactly as a bundle's `claims` and `tasks` are.
#[derive(Debug, Default)]
pub struct ValidatedCandidates {
    pub claims: Vec<ClaimCandidate>,
    pub tasks: Vec<TaskInput>,
    /// One entry per rejected candidate, naming it (`claims[3]`) and every problem found.
    pub rejected: Vec<FieldError>,
}

/// Validates extractor output against a bundle's sources and the predicate registry. Unlike a bundle, a
/// bad candidate does not reject the others: it is dropped with its reasons.
pub fn validate_candidates(
    bundle: &Bundle,
    claims: &[Value],
    tasks: &[Value],
    registry: &Registry,
) -> ValidatedCandidates {
    let sources = Sources::new(&bundle.segments, &bundle.notes, &bundle.attachments);
    let mut validated = ValidatedCandidates::default();
    for (index, value) in claims.iter().enumerate() {
        let mut reader = Reader::default();
        let claim = read_claim(&mut reader, value, index, registry, &sources);
        match claim {
            Some(claim) if reader.errors.is_empty() => validated.claims.push(claim),
            _ => validated
                .rejected
                .push(joined_errors(item("claims", index), reader.errors)),
        }
    }
    for (index, value) in tasks.iter().enumerate() {
        let mut reader = Reader::default();
        let wrapped: Object = [("tasks".to_string(), Value::Array(vec![value.clone()]))]
            .into_iter()
            .collect();
        let mut read = read_tasks(&mut reader, &wrapped, &sources);
        match read.pop() {
            Some(task) if reader.errors.is_empty() => validated.tasks.push(task),
            _ => validated.rejected.push(joined_errors(
                item("tasks", index),
                reader
                    .errors
                    .into_iter()
                    .map(|error| {
                        FieldError::new(error.path.replacen("tasks[0]", "", 1), error.message)
                    })
                    .collect(),
            )),
        }
    }
    validated
}

fn joined_errors(path: String, errors: Vec<FieldError>) -> FieldError {
    let message = if errors.is_empty() {
        "invalid".to_string()
    } else {
        errors
            .iter()
            .map(|error| {
                let own = error
                    .path
                    .strip_prefix(&path)
                    .unwrap_or(&error.path)
                    .trim_start_matches('.');
                if own.is_empty() {
                    error.message.clone()
                } else {
                    format!("{own}: {}", error.message)
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    FieldError::new(path, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_follow_extensions() {
        assert_eq!(guess_media_type("plan.PDF"), "application/pdf");
        assert_eq!(guess_media_type("shot.jpeg"), "image/jpeg");
        assert_eq!(guess_media_type("chunk.m4a"), "audio/mp4");
        assert_eq!(guess_media_type("README"), "application/octet-stream");
    }

    #[test]
    fn kinds_read_as_a_list() {
        assert_eq!(
            kinds_text(&[EntityKind::Person, EntityKind::Company]),
            "person or company"
        );
        assert_eq!(kinds_text(&[]), "any");
    }
}
