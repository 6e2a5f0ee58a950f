//! The domain model of SPEC section 2: sources, entities, claims, evidence and their enumerations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::time::Ts;

/// Declares a closed string enumeration with `as_str`, `parse` and serde in snake_case.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the snake_case name; `None` for anything else.
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// The accepted names, for error messages.
            pub fn names() -> String {
                [$($text),+].join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// What an entity is.
    EntityKind { Person => "person", Company => "company", Project => "project", Concept => "concept" }
);
string_enum!(
    EntityStatus { Active => "active", Provisional => "provisional", Archived => "archived", Merged => "merged" }
);
string_enum!(
    /// A claim's lifecycle state (SPEC 2.2).
    ClaimStatus {
        Active => "active", Superseded => "superseded", Expired => "expired",
        Provisional => "provisional", Retracted => "retracted",
    }
);
string_enum!(
    /// Who stands behind a claim; ordered from weakest to strongest (L8).
    Authority { Assistant => "assistant", Document => "document", FirstParty => "first_party", Manual => "manual" }
);
string_enum!(
    /// How a transcript segment was attributed to its speaker.
    Attribution {
        OneMappedSource => "one_mapped_source", LocalMic => "local_mic",
        MixedSources => "mixed_sources", Unmapped => "unmapped",
    }
);
string_enum!(
    EvidenceKind { Support => "support", Termination => "termination" }
);
string_enum!(
    /// How a termination ended a claim: a deadline met, or a commitment dropped.
    Outcome { Completed => "completed", Canceled => "canceled" }
);
string_enum!(
    SourceKind { Meeting => "meeting", Note => "note", Attachment => "attachment", Manual => "manual" }
);
string_enum!(
    Cardinality { Single => "single", Multi => "multi" }
);
string_enum!(
    AttachmentKind { Screenshot => "screenshot", File => "file", AudioChunk => "audio_chunk", ReplayBundle => "replay_bundle" }
);
string_enum!(
    ResourceType {
        GithubRepo => "github_repo", GithubIssue => "github_issue", GithubPr => "github_pr",
        GoogleDriveFile => "google_drive_file", GoogleDriveFolder => "google_drive_folder",
        SlackThread => "slack_thread", SlackChannel => "slack_channel", Webpage => "webpage",
        UploadedFile => "uploaded_file", Screenshot => "screenshot",
    }
);
string_enum!(
    LinkProvenance {
        Manual => "manual", CalendarDescription => "calendar_description", MeetingChat => "meeting_chat",
        ScreenshotOcr => "screenshot_ocr", CompanionDrop => "companion_drop", TranscriptMention => "transcript_mention",
    }
);
string_enum!(
    TaskStatus { Open => "open", Done => "done", Canceled => "canceled" }
);
string_enum!(
    RevisionAction {
        ExtractionCommit => "extraction_commit", ManualOverride => "manual_override",
        ClaimSupersede => "claim_supersede", ClaimRetract => "claim_retract",
        EntityMerge => "entity_merge", EntitySplit => "entity_split",
        SourceCascadeDelete => "source_cascade_delete", Undo => "undo",
    }
);
string_enum!(
    SuggestionStatus { Open => "open", Accepted => "accepted", Rejected => "rejected", Obsolete => "obsolete" }
);
string_enum!(
    /// The deadline reading of L10, computed against a clock.
    DeadlineState {
        Upcoming => "upcoming", PastDue => "past_due", Completed => "completed",
        Rescheduled => "rescheduled", Canceled => "canceled",
    }
);
string_enum!(
    /// Why a claim is provisional instead of holding its slot.
    ConflictReason {
        Assistant => "assistant", ManualValue => "manual_value", HigherAuthority => "higher_authority",
        SameMeeting => "same_meeting", WeakAttribution => "weak_attribution",
    }
);

impl Attribution {
    /// Mapped attributions can stand against others; unmapped and mixed ones cannot (L7).
    pub fn is_strong(self) -> bool {
        matches!(self, Attribution::OneMappedSource | Attribution::LocalMic)
    }
}

/// A recurring calendar event that meetings belong to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeetingSeries {
    pub id: String,
    pub calendar_account: String,
    pub calendar_id: String,
    pub recurring_event_id: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meeting {
    pub id: String,
    pub external_id: String,
    pub title: String,
    pub started_at: Ts,
    pub ended_at: Option<Ts>,
    pub platform: Option<String>,
    pub series: Option<String>,
    pub content_hash: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Participant {
    pub meeting: String,
    pub idx: i64,
    pub display_name: String,
    pub email: Option<String>,
    pub platform_stable_id: Option<String>,
    pub device_id: Option<String>,
    pub speaker_label: Option<String>,
    pub person_entity: Option<String>,
    pub excluded: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub meeting: String,
    pub id: String,
    pub seq: i64,
    pub start_ms: i64,
    pub end_ms: i64,
    pub speaker_label: Option<String>,
    pub attribution: Attribution,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub id: String,
    pub meeting: String,
    pub local_id: String,
    pub created_at: Ts,
    pub author: Option<String>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    pub id: String,
    pub meeting: String,
    pub local_id: String,
    pub kind: AttachmentKind,
    pub filename: String,
    pub media_type: String,
    pub sha256: String,
    pub size: i64,
    pub created_at: Ts,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tag {
    pub name: String,
    pub description: String,
    pub ranges: serde_json::Value,
}

/// A person, company, project or concept. `current_*` fields are the stored projection (SPEC 2.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entity {
    pub id: String,
    pub kind: EntityKind,
    pub canonical_name: String,
    pub manual_name: Option<String>,
    pub normalized_key: Option<String>,
    pub emails: Vec<String>,
    pub domains: Vec<String>,
    pub external_keys: Vec<String>,
    pub status: EntityStatus,
    pub merged_into: Option<String>,
    pub do_not_merge_with: Vec<String>,
    pub manual_attributes: BTreeMap<String, String>,
    pub manual_brief: Option<String>,
    pub pinned: bool,
    /// The meeting a provisional, name-only entity is scoped to (L15).
    pub scope_meeting: Option<String>,
    /// The fields from here to the end are derived (`Entity::DERIVED_FIELDS`): revisions keep an
    /// entity's row without them, so they default when a row is read back from one.
    #[serde(default)]
    pub first_observed_at: Option<Ts>,
    #[serde(default)]
    pub last_observed_at: Option<Ts>,
    #[serde(default)]
    pub current_attributes: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub current_brief: String,
    /// Derived, like the projection: the L19 weight basis of the entity's observations and the latest
    /// of them (`reading::weight_basis`), so that ranking by topic weight reads one row. Not part of
    /// snapshots or dumps: every write that restores or changes an entity rebuilds them.
    #[serde(skip)]
    pub weight_basis: f64,
    #[serde(skip)]
    pub weight_latest: Option<Ts>,
}

impl Entity {
    /// The serialized fields every rebuild derives again from the entity's names and claims: its
    /// observation times and its projection (the weight basis is not serialized at all). Revisions
    /// record entities without them: every entity a revision's undo restores is rebuilt, and the
    /// projection repeats what the entity's claims said, which must leave the revision log with
    /// the meeting that said it (erasure, SPEC 4). The canonical name stays: an entity without
    /// names keeps the one it was given.
    pub const DERIVED_FIELDS: [&'static str; 4] = [
        "first_observed_at",
        "last_observed_at",
        "current_attributes",
        "current_brief",
    ];

    /// Removes `DERIVED_FIELDS` from an entity's serialized row; returns whether any was there.
    pub fn strip_derived_fields(row: &mut serde_json::Value) -> bool {
        let Some(fields) = row.as_object_mut() else {
            return false;
        };
        let mut stripped = false;
        for field in Self::DERIVED_FIELDS {
            stripped |= fields.remove(field).is_some();
        }
        stripped
    }

    pub fn display_name(&self) -> &str {
        self.manual_name.as_deref().unwrap_or(&self.canonical_name)
    }

    /// Whether the two rows differ in derived fields only (`DERIVED_FIELDS`, and the weight, which
    /// is not serialized): what a revision keeps of each is then the same row. Every field is named
    /// here, so a new one must be placed on one side or the other.
    pub fn same_but_derived(&self, other: &Entity) -> bool {
        let Entity {
            id,
            kind,
            canonical_name,
            manual_name,
            normalized_key,
            emails,
            domains,
            external_keys,
            status,
            merged_into,
            do_not_merge_with,
            manual_attributes,
            manual_brief,
            pinned,
            scope_meeting,
            first_observed_at: _,
            last_observed_at: _,
            current_attributes: _,
            current_brief: _,
            weight_basis: _,
            weight_latest: _,
        } = self;
        *id == other.id
            && *kind == other.kind
            && *canonical_name == other.canonical_name
            && *manual_name == other.manual_name
            && *normalized_key == other.normalized_key
            && *emails == other.emails
            && *domains == other.domains
            && *external_keys == other.external_keys
            && *status == other.status
            && *merged_into == other.merged_into
            && *do_not_merge_with == other.do_not_merge_with
            && *manual_attributes == other.manual_attributes
            && *manual_brief == other.manual_brief
            && *pinned == other.pinned
            && *scope_meeting == other.scope_meeting
    }

    /// Whether the two rows differ in their observation fields only (the first and last
    /// observation, the weight basis and its latest time), the projection included in what is the
    /// same: the rebuild of an entity a meeting only mentions (`Tx::update_entity_observed`).
    pub fn same_but_observed(&self, other: &Entity) -> bool {
        self.same_but_derived(other) && self.same_projection(other)
    }

    /// The row's kind, name, status and observation fields (`EntityHeader`), without copying its
    /// lists or its projection.
    pub fn header(&self) -> EntityHeader {
        EntityHeader {
            kind: self.kind,
            canonical_name: self.canonical_name.clone(),
            status: self.status,
            kept_apart: !self.do_not_merge_with.is_empty(),
            observed: self.observed(),
        }
    }

    /// The observation fields (`Observed`).
    pub fn observed(&self) -> Observed {
        Observed {
            first_observed_at: self.first_observed_at,
            last_observed_at: self.last_observed_at,
            weight_basis: self.weight_basis,
            weight_latest: self.weight_latest,
        }
    }

    /// Sets the observation fields.
    pub fn set_observed(&mut self, observed: Observed) {
        self.first_observed_at = observed.first_observed_at;
        self.last_observed_at = observed.last_observed_at;
        self.weight_basis = observed.weight_basis;
        self.weight_latest = observed.weight_latest;
    }

    /// Whether the two rows have the same projection (current attributes and brief), the derived
    /// fields `same_but_observed` adds to `same_but_derived`.
    pub fn same_projection(&self, other: &Entity) -> bool {
        self.current_attributes == other.current_attributes
            && self.current_brief == other.current_brief
    }
}

/// What an entity row says besides its lists and its projection (`Entity::header`): what the
/// rebuild of an entity a write only mentions reads, and what tells whether automatic resolution may
/// change a person. A hub's row holds a projection of hundreds of values, which a copy of the
/// whole row would copy each time.
#[derive(Clone, Debug, PartialEq)]
pub struct EntityHeader {
    pub kind: EntityKind,
    pub canonical_name: String,
    pub status: EntityStatus,
    /// Whether the entity is kept apart from some other by hand (`do_not_merge_with`).
    pub kept_apart: bool,
    pub observed: Observed,
}

/// An entity's observation fields, derived from its names and its claims' evidence times: the
/// first and last observation, the L19 weight basis and the latest observation it sums
/// (`Tx::update_entity_observed` writes them alone).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observed {
    pub first_observed_at: Option<Ts>,
    pub last_observed_at: Option<Ts>,
    pub weight_basis: f64,
    pub weight_latest: Option<Ts>,
}

/// One observation of a name for an entity, kept so that deleting its source forgets it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Alias {
    pub entity: String,
    pub alias: String,
    pub meeting: String,
    pub observed_at: Ts,
}

/// One supported or terminated period of validity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    pub from: Ts,
    pub to: Option<Ts>,
}

/// The part of a claim that lifecycle rules compute; everything else is what was said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimDerived {
    pub status: ClaimStatus,
    pub authority: Authority,
    pub valid_from: Option<Ts>,
    pub valid_to: Option<Ts>,
    pub first_observed_at: Option<Ts>,
    pub last_observed_at: Option<Ts>,
    pub superseded_at: Option<Ts>,
    pub superseded_by: Option<String>,
    pub conflict: Option<ConflictReason>,
    /// Set when a termination closed the claim's last period.
    pub end_outcome: Option<Outcome>,
    pub periods: Vec<Period>,
}

/// A fact: its identity (what was said) plus its derived lifecycle state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub id: String,
    pub subject: String,
    pub predicate: String,
    pub object_entity: Option<String>,
    pub value_text: Option<String>,
    pub value_json: Option<serde_json::Value>,
    /// Normalized value (or object id) that, with subject, predicate and context, names the claim.
    pub value_key: String,
    pub context_entity: Option<String>,
    pub cardinality: Cardinality,
    /// Claims of one slot that compete for one value; see `slot::group_key`.
    pub group_key: String,
    pub explicit_valid_from: Option<Ts>,
    pub explicit_valid_to: Option<Ts>,
    pub retracted_at: Option<Ts>,
    pub recorded_at: Ts,
    pub derived: ClaimDerived,
}

impl Claim {
    pub fn due_at(&self) -> Option<Ts> {
        self.value_json
            .as_ref()
            .and_then(|json| json.get("due_at"))
            .and_then(|due| due.as_str())
            .and_then(|due| Ts::parse(due).ok())
    }

    pub fn slot(&self) -> SlotKey {
        SlotKey {
            subject: self.subject.clone(),
            predicate: self.predicate.clone(),
            context: self.context_entity.clone(),
        }
    }
}

/// `(subject, predicate, context)`: the unit that lifecycle rules re-evaluate (L13, L14).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SlotKey {
    pub subject: String,
    pub predicate: String,
    pub context: Option<String>,
}

/// One supporting or terminating occurrence of a claim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub id: String,
    pub claim: String,
    pub source_kind: SourceKind,
    pub source_id: String,
    /// The meeting the source belongs to (none for manual evidence).
    pub meeting: Option<String>,
    pub observed_at: Ts,
    pub segment_ids: Vec<String>,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub speaker: Option<String>,
    pub speaker_label: Option<String>,
    pub attribution: Option<Attribution>,
    pub quote: String,
    pub source_url: Option<String>,
    pub confidence: f64,
    pub extraction_run_id: Option<String>,
    pub kind: EvidenceKind,
    pub authority: Authority,
    pub outcome: Option<Outcome>,
    pub recorded_at: Ts,
}

/// A candidate's explicit "this replaces that" link, kept with the evidence that named it (L9).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SupersedesLink {
    pub claim: String,
    pub target: String,
    pub evidence: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLink {
    pub id: String,
    pub entity: Option<String>,
    pub meeting: Option<String>,
    pub source_kind: SourceKind,
    pub source_id: String,
    pub resource_type: ResourceType,
    pub url: String,
    pub external_key: Option<String>,
    pub title: Option<String>,
    pub provenance: LinkProvenance,
    /// Always `url_only` for links seen in meetings: Lore never claims to have read them.
    pub ingested_status: String,
    pub first_seen_at: Ts,
    pub last_seen_at: Ts,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub meeting: Option<String>,
    pub title: String,
    pub status: TaskStatus,
    pub assignee: Option<String>,
    pub project: Option<String>,
    pub due_at: Option<Ts>,
    pub evidence: serde_json::Value,
    pub created_at: Ts,
}

/// One audit-log entry; `before` and `after` snapshot every row the action changed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Revision {
    pub id: String,
    pub action: RevisionAction,
    pub target: String,
    pub secondary: Option<String>,
    pub before: serde_json::Value,
    pub after: serde_json::Value,
    pub created_at: Ts,
}

impl Revision {
    /// Removes `Entity::DERIVED_FIELDS` from the `entity:` rows of a snapshot (the map of rows a
    /// revision keeps); returns whether any was there. What revisions are written with, and what an
    /// older database's revisions are upgraded to.
    pub fn strip_derived_entity_fields(snapshot: &mut serde_json::Value) -> bool {
        let Some(rows) = snapshot.as_object_mut() else {
            return false;
        };
        let mut stripped = false;
        for (key, row) in rows.iter_mut() {
            if key.starts_with("entity:") {
                stripped |= Entity::strip_derived_fields(row);
            }
        }
        stripped
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    pub id: String,
    pub kind: String,
    pub status: SuggestionStatus,
    pub target: String,
    pub secondary: Option<String>,
    pub payload: serde_json::Value,
    pub created_at: Ts,
}

/// A record of one extraction run, keyed by `(meeting, content hash, extractor)` (L2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtractionRun {
    pub id: String,
    pub meeting: String,
    pub content_hash: String,
    pub extractor: String,
    pub revision: String,
    pub created_at: Ts,
}

/// A row of the transaction-time status history (SPEC 4, `--known-at`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusChange {
    pub claim: String,
    pub recorded_at: Ts,
    pub derived: ClaimDerived,
}

string_enum!(
    /// Where a participant-to-person mapping came from: a bundle, the user, or a user's removal.
    MappingSource { Auto => "auto", Manual => "manual", Excluded => "excluded" }
);

/// A user's decision about one participant of a meeting (`key` is the participant's email, or
/// `name:` and its normalized display name). Kept apart from the participant rows, which are
/// rebuilt whenever the meeting is re-ingested, so that automatic sync never undoes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParticipantMapping {
    pub meeting: String,
    pub key: String,
    pub source: MappingSource,
    pub display_name: String,
    pub email: Option<String>,
    pub person_entity: Option<String>,
}

/// A resource link attached to an entity it concerns, with what showed it (SPEC 2.2). Stored at
/// ingest from the meeting's own facts, so it leaves with its meeting (L13). `reason` is `claim`
/// (the link is in a segment or note that a claim about the entity cites; `evidence` names that
/// evidence row), `repository` (its GitHub repository is the project's key), `organization` (its
/// GitHub organization is the company's external key) or `title` (its label names the entity).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LinkAttachment {
    pub link: String,
    pub entity: String,
    pub meeting: String,
    pub reason: String,
    pub evidence: Option<String>,
}

/// Which meeting taught an entity identifier (an email or a stable platform id). Rows of one
/// meeting that share `group` were given together for one participant (a primary email with its
/// additional ones), which is what makes them one person (L15). `primary` marks an email given as a
/// participant's or a reference's primary address.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IdentifierSource {
    pub scheme: String,
    pub value: String,
    pub meeting: String,
    pub group: String,
    pub primary: bool,
}

/// A tag a meeting applied to a project or concept (L17): in that meeting, a reference to the
/// entity whose slug (or key) is `key` resolves by the tag instead, so the same tag in two meetings
/// names one entity whatever it was called. Deleted with its meeting; the owner's `Tag` row stays.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MeetingTag {
    pub meeting: String,
    pub tag: String,
    pub kind: EntityKind,
    pub key: String,
}
