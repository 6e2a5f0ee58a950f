//! The shared machinery of every mutation: re-evaluating touched slots through the pure rules,
//! rebuilding touched entities, syncing the review queue, removing a source's evidence (L13), and
//! recording one revision with before/after snapshots.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_core::projection::{project, ProjectedClaim};
use lore_core::reading::MENTION_WEIGHT;
use lore_core::slot::{evaluate_views, ClaimView};
use lore_core::Ts;
use lore_store::FastMap;
use lore_store::ObservationSummary;
use lore_store::{EncodedRevision, SlotFact, Tx};
use serde_json::{json, Value};

use crate::EngineResult;

/// What a mutation touched, and the rows it changed, for re-evaluation and the revision.
#[derive(Default)]
pub struct Changes {
    pub slots: BTreeSet<SlotKey>,
    /// Entities to rebuild from scratch: anything of theirs may have changed.
    pub entities: BTreeSet<String>,
    /// Entities to rebuild whose claims, kind and manual data this mutation did not change, only
    /// the names they were called by, what refers to them (a name recorded or removed, a link, a
    /// participation, a claim pointing at them) or the evidence of their claims, not their status:
    /// see `touch_mention` and `touch_claim_evidence`. One also in `entities` is rebuilt from
    /// scratch.
    pub mentioned: BTreeSet<String>,
    /// First-seen state of every changed row, keyed `table:id` (`null` when the row is new).
    before: BTreeMap<String, Snap>,
    /// Last state of every changed row (`null` when the row is gone).
    after: BTreeMap<String, Snap>,
    /// Blobs that may have lost their last attachment.
    pub released_blobs: BTreeSet<String>,
    pub diagnostics: Vec<String>,
    /// Set by a mutation that rewrites the touched slots' status history from their facts once
    /// settled (a deletion: `temporal::rebuild_slot_histories`). `settle` then keeps every slot it
    /// loaded in `loaded_slots`, for that pass to reuse instead of reading them again (settling
    /// changes only the claims' derived state, which the pass does not read), and records no status
    /// change itself: no fact is recorded now, so the replay reaches the settled state at an earlier
    /// instant and would remove every row settling recorded.
    pub replays_history: bool,
    pub loaded_slots: FastMap<SlotKey, LoadedSlot>,
    /// For each slot that lost evidence rows (`remove_evidence`), the earliest time one of them was
    /// recorded: before it, the slot's facts as they were recorded are unchanged, so its status
    /// history needs replaying from there on only (`temporal::rebuild_slot_histories`).
    pub erased_from: FastMap<SlotKey, Ts>,
    /// A claim moved to another entity (`identity::repoint_claim`): its facts changed at every
    /// time, so every touched slot's history is replayed whole.
    pub claims_repointed: bool,
    /// The revisions that recorded a removed meeting's content (its ingests and extractions, from
    /// its extraction runs), for erasure (`erase_source_from_revisions`).
    pub source_revisions: BTreeSet<String>,
    /// Record entities whole, their derived fields included: only for a deletion's preview, which
    /// describes the entities whose summary changes and is rolled back. Every revision that is kept
    /// records entities without them (`write_revision`).
    pub keep_derived_entity_fields: bool,
    /// The mutation wrote claims and review-queue entries back from a revision's snapshots (undo):
    /// until it settles, an open conflict entry may belong to a claim whose restored state is not
    /// in conflict, so `settle` looks up every settled claim's entry.
    pub snapshots_restored: bool,
    /// Entities were rebuilt whose rows changed in derived fields only, which no revision records
    /// (see `refresh_entity_with`): the mutation still changed rows (`is_empty`).
    derived_only: bool,
}

/// A row's state as a revision records it: a typed row is kept as it is and turned into JSON once,
/// when the revision is written (a claim settled several times in one mutation is serialized once,
/// and a first state already recorded is never serialized at all).
pub enum Snap {
    Json(Value),
    Row(Box<dyn SnapRow>),
    /// A typed row cut to its identifying fields (erasure), kept as the JSON text the revision
    /// stores, with the row's `meeting`.
    Erased {
        text: String,
        meeting: Option<String>,
    },
}

/// A typed row a revision may record.
pub trait SnapRow: Send {
    fn to_json(&self) -> Value;
    /// The row cut to its identifying fields (`identifying_fields` of its JSON).
    fn identifying(&self) -> Value;
    /// `identifying` as JSON text, with the row's `meeting`; `None` for a row that is no struct.
    fn identifying_text(&self) -> Option<(String, Option<String>)>;
    /// Appends the JSON text of `to_json` (`null` for a row that does not serialize).
    fn write_json(&self, out: &mut Vec<u8>);
    /// The row's `meeting` field when it is a string; `json` is what `write_json` wrote.
    fn meeting(&self, json: &[u8]) -> Option<String>;
}

impl<T: serde::Serialize + Send> SnapRow for T {
    fn to_json(&self) -> Value {
        to_value(self)
    }

    fn identifying(&self) -> Value {
        crate::identifying::identifying(self, IDENTIFYING_FIELDS, ERASED_FIELD)
            .unwrap_or_else(|| identifying_fields(self.to_json()))
    }

    fn identifying_text(&self) -> Option<(String, Option<String>)> {
        crate::identifying::identifying_text(self, IDENTIFYING_FIELDS, ERASED_FIELD)
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        write_json(out, self);
    }

    fn meeting(&self, json: &[u8]) -> Option<String> {
        match crate::identifying::plain_field(self, "meeting") {
            Some(field) => field.as_ref().and_then(Value::as_str).map(str::to_string),
            None => meeting_of(&serde_json::from_slice(json).ok()?),
        }
    }
}

/// A snapshot row's `meeting` field when it is a string (what `lore_store::revision_meetings`
/// reads).
fn meeting_of(row: &Value) -> Option<String> {
    row.get("meeting")
        .and_then(Value::as_str)
        .map(str::to_string)
}

impl Snap {
    fn to_json(&self) -> Value {
        match self {
            Snap::Json(value) => value.clone(),
            Snap::Row(row) => row.to_json(),
            Snap::Erased { text, .. } => serde_json::from_str(text).unwrap_or(Value::Null),
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Snap::Json(Value::Null))
    }

    /// The row cut to its identifying fields (an absent row stays absent; a cut row stays as it
    /// is). A typed row is written as text right away.
    fn into_identifying(self) -> Snap {
        match self {
            Snap::Json(value) => Snap::Json(identifying_fields(value)),
            Snap::Row(row) => match row.identifying_text() {
                Some((text, meeting)) => Snap::Erased { text, meeting },
                None => Snap::Json(row.identifying()),
            },
            erased @ Snap::Erased { .. } => erased,
        }
    }

    fn typed<T: serde::Serialize + Send + 'static>(row: Option<T>) -> Snap {
        match row {
            Some(row) => Snap::Row(Box::new(row)),
            None => Snap::Json(Value::Null),
        }
    }
}

/// A slot as `settle` read it: its claims, the rules' view of their evidence by claim, and its
/// supersedes links.
pub struct LoadedSlot {
    pub claims: Vec<Claim>,
    pub evidence: FastMap<String, Vec<SlotFact>>,
    pub links: Vec<SupersedesLink>,
    /// The claims' derived fields are the rules' outcome over these facts (`settle` kept the slot
    /// after evaluating it), not the state the slot was read in.
    pub settled: bool,
}

impl LoadedSlot {
    /// Reads a slot in three statements (the evidence and links only when it has claims).
    pub fn read(tx: &mut dyn Tx, slot: &SlotKey) -> EngineResult<Self> {
        let claims = tx.list_claims_by_slot(slot)?;
        let evidence = slot_evidence_by_claim(tx, slot, &claims)?;
        let links = match claims.is_empty() {
            true => Vec::new(),
            false => tx.list_supersedes_links_by_slot(slot)?,
        };
        Ok(LoadedSlot {
            claims,
            evidence,
            links,
            settled: false,
        })
    }
}

impl Changes {
    pub fn record(&mut self, key: String, before: Option<Value>, after: Option<Value>) {
        self.before
            .entry(key.clone())
            .or_insert(Snap::Json(before.unwrap_or(Value::Null)));
        self.after
            .insert(key, Snap::Json(after.unwrap_or(Value::Null)));
    }

    /// Records a typed row change (`None` = absent); the rows are copied, and serialized only when
    /// the revision is written (the first state only when the row had none recorded yet).
    pub fn record_row<T: serde::Serialize + Clone + Send + 'static>(
        &mut self,
        key: String,
        before: Option<&T>,
        after: Option<&T>,
    ) {
        self.record_snaps(
            key,
            || Snap::typed(before.cloned()),
            Snap::typed(after.cloned()),
        );
    }

    /// `record_row` taking the last state by value.
    pub fn record_owned<T: serde::Serialize + Clone + Send + 'static>(
        &mut self,
        key: String,
        before: Option<&T>,
        after: Option<T>,
    ) {
        self.record_snaps(key, || Snap::typed(before.cloned()), Snap::typed(after));
    }

    /// `record_row` for a row this mutation removed, taken by value.
    pub fn record_removed<T: serde::Serialize + Send + 'static>(&mut self, key: String, row: T) {
        self.record_snaps(key, || Snap::typed(Some(row)), Snap::Json(Value::Null));
    }

    /// Records a row's last state, and its first unless one is recorded already (`first` is made
    /// only then).
    fn record_snaps(&mut self, key: String, first: impl FnOnce() -> Snap, last: Snap) {
        if !self.before.contains_key(&key) {
            self.before.insert(key.clone(), first());
        }
        self.after.insert(key, last);
    }

    /// A claim changed: its slot is re-evaluated and its subject rebuilt from scratch. The entities
    /// it points at are only mentioned: an entity's stored state reads the claims it is the subject
    /// of, never those naming it.
    pub fn touch_claim(&mut self, claim: &Claim) {
        self.entities.insert(claim.subject.clone());
        self.touch_slot_and_named(claim);
    }

    /// A claim kept its identity and gained or lost evidence: its slot is re-evaluated, and its
    /// subject is only mentioned. The projection shows which claims are active, never their
    /// evidence, so when settling the slot changes the status of none of its claims, the subject
    /// keeps its projection; when it does, `reevaluate_slot` touches the claim (`touch_claim`).
    pub fn touch_claim_evidence(&mut self, claim: &Claim) {
        self.mentioned.insert(claim.subject.clone());
        self.touch_slot_and_named(claim);
    }

    /// The claim's slot is re-evaluated; the entities it points at are only mentioned.
    fn touch_slot_and_named(&mut self, claim: &Claim) {
        self.slots.insert(claim.slot());
        self.mentioned.extend(claim.object_entity.iter().cloned());
        self.mentioned.extend(claim.context_entity.iter().cloned());
    }

    /// An entity is rebuilt, and its claims, kind and manual data did not change by this
    /// mutation: the rebuild may keep its projection (see `refresh_entity_with`). Callers that
    /// change anything else of an entity put it in `entities`.
    pub fn touch_mention(&mut self, entity: &str) {
        self.mentioned.insert(entity.to_string());
    }

    /// No longer rebuilds this entity (it was moved away).
    pub fn forget_entity(&mut self, entity: &str) {
        self.entities.remove(entity);
        self.mentioned.remove(entity);
    }

    /// Whether the mutation changed no row at all.
    pub fn is_empty(&self) -> bool {
        self.after.is_empty() && !self.derived_only
    }

    /// Ids of the claims this mutation created, changed or removed.
    pub fn changed_claims(&self) -> Vec<String> {
        self.after
            .keys()
            .filter_map(|key| key.strip_prefix("claim:").map(str::to_string))
            .collect()
    }

    /// Erasure wins over history (SPEC 4, L13): what a source deletion's revision keeps of the rows
    /// it changed. Each row's first state keeps only the fields that name rows and their state
    /// (`IDENTIFYING_FIELDS`), not what a source said (quotes, values, titles, names, URLs); the
    /// last states are what remains after the deletion and stay whole. Keys that carry a name or an
    /// identifier's value (`alias:entity|name|meeting`, `identifier:email|…`) are replaced by a
    /// hash of what follows the table name.
    pub fn erase_source_content(&mut self) {
        self.erase_where(|_| true);
    }

    /// The same for the rows this mutation removed (whose last state is absent) only: what a
    /// re-ingest with different content keeps of the rows the earlier content had alone.
    pub fn erase_removed_content(&mut self) {
        let removed = self.removed_keys();
        self.erase_where(|key| removed.contains(key));
    }

    /// Hashes the content-carrying keys `erase` picks (in both snapshots, so a row's first and
    /// last states stay under one key; each key is hashed once) and cuts their first states to
    /// identifying fields. The maps are changed in place: only renamed keys move.
    fn erase_where(&mut self, erase: impl Fn(&str) -> bool) {
        for (key, row) in self.before.iter_mut() {
            if erase(key) {
                let first = std::mem::replace(row, Snap::Json(Value::Null));
                *row = first.into_identifying();
            }
        }
        let renamed: Vec<(String, String)> = self
            .before
            .keys()
            .chain(
                self.after
                    .keys()
                    .filter(|key| !self.before.contains_key(*key)),
            )
            .filter(|key| erase(key))
            .filter_map(|key| erased_key_of(key).map(|erased| (key.clone(), erased)))
            .collect();
        for (key, erased) in renamed {
            for rows in [&mut self.before, &mut self.after] {
                if let Some(row) = rows.remove(&key) {
                    rows.insert(erased.clone(), row);
                }
            }
        }
    }

    /// The keys of the rows this mutation removed (their last state is absent), as recorded.
    pub fn removed_keys(&self) -> BTreeSet<String> {
        self.after
            .iter()
            .filter(|(_, row)| row.is_null())
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// From when each touched slot's status history must be replayed (none: from its start):
    /// `erased_from`, unless a claim moved between entities.
    pub fn history_replay_from(&self) -> FastMap<SlotKey, Ts> {
        match self.claims_repointed {
            true => FastMap::default(),
            false => self.erased_from.clone(),
        }
    }

    /// Writes the revision for this mutation and returns its id.
    pub fn write_revision(
        &mut self,
        tx: &mut dyn Tx,
        action: RevisionAction,
        target: &str,
        secondary: Option<&str>,
        now: Ts,
    ) -> EngineResult<String> {
        let id = new_revision_id();
        let mut meetings = BTreeSet::new();
        let (before, after) = encode_snapshots(
            &self.before,
            &self.after,
            self.keep_derived_entity_fields,
            &mut meetings,
        );
        tx.insert_encoded_revision(&EncodedRevision {
            id: id.clone(),
            action,
            target: target.to_string(),
            secondary: secondary.map(str::to_string),
            before,
            after,
            meetings,
            created_at: now,
        })?;
        Ok(id)
    }
}

/// A revision's snapshots as JSON text, each row serialized straight from what was recorded (a
/// typed row is never turned into a JSON value first: that, and serializing the value, were a
/// fifth of an ingest's instructions), and the meetings their rows name.
///
/// Entity rows are kept without their derived fields (`Entity::DERIVED_FIELDS`, erasure at rest),
/// and not at all when nothing else of the row changed (a meeting that only mentions an entity
/// moves its observation times and nothing undo restores), unless `keep_derived`.
fn encode_snapshots(
    before: &BTreeMap<String, Snap>,
    after: &BTreeMap<String, Snap>,
    keep_derived: bool,
    meetings: &mut BTreeSet<String>,
) -> (String, String) {
    // Entity rows, stripped, by key; a pair equal once stripped is in neither snapshot.
    let mut entities: HashMap<&str, [Value; 2]> = HashMap::new();
    if !keep_derived {
        let keys = before.keys().chain(after.keys());
        for key in keys.filter(|key| key.starts_with("entity:")) {
            let mut first = before.get(key).map_or(Value::Null, Snap::to_json);
            let mut last = after.get(key).map_or(Value::Null, Snap::to_json);
            Entity::strip_derived_fields(&mut first);
            Entity::strip_derived_fields(&mut last);
            entities.insert(key, [first, last]);
        }
    }
    let unchanged: BTreeSet<&str> = entities
        .iter()
        .filter(|(key, [first, last])| {
            before.contains_key(**key) && after.contains_key(**key) && first == last
        })
        .map(|(key, _)| *key)
        .collect();
    let mut write = |rows: &BTreeMap<String, Snap>, side: usize| {
        let mut out = Vec::with_capacity(256 * rows.len() + 2);
        out.push(b'{');
        for (key, row) in rows {
            if unchanged.contains(key.as_str()) {
                continue;
            }
            if out.len() > 1 {
                out.push(b',');
            }
            if let Some(meeting) = key.strip_prefix("meeting:") {
                meetings.insert(meeting.to_string());
            }
            write_json(&mut out, &key.as_str());
            out.push(b':');
            let start = out.len();
            let meeting = match (row, entities.get(key.as_str())) {
                (_, Some(stripped)) => {
                    write_json(&mut out, &stripped[side]);
                    meeting_of(&stripped[side])
                }
                (Snap::Json(value), _) => {
                    write_json(&mut out, value);
                    meeting_of(value)
                }
                (Snap::Row(typed), _) => {
                    typed.write_json(&mut out);
                    typed.meeting(&out[start..])
                }
                (Snap::Erased { text, meeting }, _) => {
                    out.extend_from_slice(text.as_bytes());
                    meeting.clone()
                }
            };
            meetings.extend(meeting);
        }
        out.push(b'}');
        // serde_json writes UTF-8 only.
        String::from_utf8(out)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
    };
    let first = write(before, 0);
    let last = write(after, 1);
    (first, last)
}

/// Appends a value's JSON text (`null` for one that does not serialize, as `to_value` gives).
fn write_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

/// Snapshot fields that name rows and their state rather than carry what a source said.
pub(crate) const IDENTIFYING_FIELDS: &[&str] = &[
    "id",
    "claim",
    "subject",
    "predicate",
    "object_entity",
    "context_entity",
    "entity",
    "meeting",
    "person_entity",
    "link",
    "target",
    "evidence",
    "kind",
    "source_kind",
    "status",
    "authority",
];

/// Tables whose snapshot keys carry a name or an identifier's value (see `alias_key`,
/// `identifier_key`, `identifier_source_key`, `mapping_record_key`, tags).
const KEYS_WITH_CONTENT: &[&str] = &[
    "alias",
    "identifier",
    "identifier_source",
    "participant_mapping",
    "tag",
];

/// A snapshot key with what follows the table name hashed when it carries content (once: a hashed
/// key stays as it is).
fn erased_key(key: String) -> String {
    erased_key_of(&key).unwrap_or(key)
}

/// `erased_key` for a key that changes; `None` for one that stays.
fn erased_key_of(key: &str) -> Option<String> {
    match key.split_once(':') {
        Some((table, rest)) if KEYS_WITH_CONTENT.contains(&table) && !rest.starts_with('#') => {
            Some(format!("{table}:#{}", short_id("", &[rest])))
        }
        _ => None,
    }
}

/// Erases revisions whole: both snapshots become `{"erased": true}`, written without reading them.
/// For the revisions that recorded a meeting's content (its ingests and extractions,
/// `Changes::source_revisions`) once that content is deleted or replaced: none can be undone any
/// more, and the deleting or replacing revision names the rows that went.
pub fn erase_whole_revisions(tx: &mut dyn Tx, revisions: &BTreeSet<String>) -> EngineResult<()> {
    let stub = serde_json::json!({ ERASED_FIELD: true });
    for id in revisions {
        tx.replace_revision_snapshots(id, &stub, &stub)?;
    }
    Ok(())
}

/// Erasure wins over history (SPEC 4): the revisions that hold rows of a deleted source lose its
/// words. The meeting's own ingests and extractions (`own`: `Changes::source_revisions`) are
/// erased whole (`erase_whole_revisions`). In any other revision whose rows name the meeting
/// (`Tx::list_revisions_naming_meeting`: a merge or a re-keyed person that moved its evidence, an
/// undo), the rows whose key was removed (`removed`, as `Changes::removed_keys` lists them) and the
/// rows `gone` says are the source's are cut to their identifying fields and marked erased; other
/// rows stay whole. With `whole_meeting` (the meeting itself is deleted), an ingest of it that its
/// runs no longer named is cut whole the same way.
pub fn erase_source_from_revisions(
    tx: &mut dyn Tx,
    meeting: &str,
    whole_meeting: bool,
    own: &BTreeSet<String>,
    removed: &BTreeSet<String>,
    gone: &dyn Fn(&str, &Value) -> bool,
) -> EngineResult<()> {
    erase_whole_revisions(tx, own)?;
    for id in tx.list_revisions_naming_meeting(meeting)? {
        if own.contains(&id) {
            continue;
        }
        let Some(stored) = tx.find_revision(&id)? else {
            continue;
        };
        let whole = whole_meeting
            && stored.target == meeting
            && stored.action == RevisionAction::ExtractionCommit;
        // The snapshots are moved through, not copied: an ingest's can hold thousands of rows.
        let mut changed = false;
        let mut erase = |snapshot: Value| match snapshot {
            Value::Object(rows) => Value::Object(
                rows.into_iter()
                    .map(|(key, row)| {
                        let cut = whole || removed.contains(&key) || gone(&key, &row);
                        if !cut || row.get(ERASED_FIELD) == Some(&Value::Bool(true)) {
                            return (key, row);
                        }
                        changed = true;
                        (erased_key(key), identifying_fields(row))
                    })
                    .collect(),
            ),
            other => other,
        };
        let (before, after) = (erase(stored.before), erase(stored.after));
        if changed {
            tx.replace_revision_snapshots(&id, &before, &after)?;
        }
    }
    Ok(())
}

/// Whether a snapshot row is one of this meeting's: its `meeting:ID` row, or a row whose `meeting`
/// field names it (evidence, names, participants, links, tasks).
pub fn row_of_meeting(meeting: &str, key: &str, row: &Value) -> bool {
    key.strip_prefix("meeting:") == Some(meeting)
        || row.get("meeting").and_then(Value::as_str) == Some(meeting)
}

/// A deleted source whose words leave the revision log (`erase_deleted_source`).
pub enum DeletedSource<'a> {
    /// A whole meeting: its rows wherever they were copied, its own ingests whole.
    Meeting(&'a str),
    /// A note or attachment of a meeting: its rows (by `source_id`) in the revisions naming that
    /// meeting.
    Part {
        meeting: &'a str,
        source_id: &'a str,
    },
}

/// Erasure wins over history (SPEC 4), inside the mutation that deleted a source (a deletion, or
/// an undone ingest): the earlier revisions lose its rows (`erase_source_from_revisions`) and the
/// mutation's own revision keeps only what names the rows it removed
/// (`Changes::erase_source_content`).
pub fn erase_deleted_source(
    tx: &mut dyn Tx,
    changes: &mut Changes,
    source: DeletedSource,
) -> EngineResult<()> {
    let removed = changes.removed_keys();
    let own = std::mem::take(&mut changes.source_revisions);
    match source {
        DeletedSource::Meeting(meeting) => {
            erase_source_from_revisions(tx, meeting, true, &own, &removed, &|key, row| {
                row_of_meeting(meeting, key, row)
            })?
        }
        DeletedSource::Part { meeting, source_id } => {
            erase_source_from_revisions(tx, meeting, false, &own, &removed, &|_, row| {
                row.get("source_id").and_then(Value::as_str) == Some(source_id)
            })?
        }
    };
    changes.erase_source_content();
    Ok(())
}

/// The field an erased row carries (`"erased": true`): undo refuses a revision holding one.
pub const ERASED_FIELD: &str = "erased";

pub(crate) fn identifying_fields(value: Value) -> Value {
    match value {
        Value::Object(row) => Value::Object(
            row.into_iter()
                // A list or an object (a task's evidence) may hold quotes: only plain values stay.
                .filter(|(field, value)| {
                    IDENTIFYING_FIELDS.contains(&field.as_str())
                        && !value.is_array()
                        && !value.is_object()
                })
                .chain([(ERASED_FIELD.to_string(), Value::Bool(true))])
                .collect(),
        ),
        // A row that did not exist (null) or a scalar snapshot stays as it is.
        other => other,
    }
}

/// Whether a revision lost rows, or all of them, to erasure (a deleted source's): it cannot be
/// undone.
pub fn has_erased_rows(revision: &Revision) -> bool {
    let marked = |row: &Value| row.get(ERASED_FIELD) == Some(&Value::Bool(true));
    [&revision.before, &revision.after].iter().any(|snapshot| {
        marked(snapshot)
            || snapshot
                .as_object()
                .is_some_and(|rows| rows.values().any(marked))
    })
}

pub fn new_revision_id() -> String {
    format!("r_{}", uuid::Uuid::now_v7().simple())
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Re-evaluates every touched slot and rebuilds every touched entity.
pub fn settle(tx: &mut dyn Tx, changes: &mut Changes, now: Ts) -> EngineResult<()> {
    settle_slots(tx, changes, now)?;
    rebuild_entities(tx, changes)
}

/// Re-evaluates every touched slot; the entities they touch stay in `changes.entities`.
pub fn settle_slots(tx: &mut dyn Tx, changes: &mut Changes, now: Ts) -> EngineResult<()> {
    let slots = std::mem::take(&mut changes.slots);
    for slot in &slots {
        reevaluate_slot(tx, slot, changes, now)?;
    }
    Ok(())
}

/// Rebuilds every entity in `changes.entities` (derived fields and projection, or deletion). An
/// entity's current view shows the names of the entities its claims point at, so when a rebuild
/// changes an entity's display name (a deletion took its earliest name, a manual name was set), the
/// subjects of the claims pointing at it are rebuilt too, after it (again if they came first). Their
/// own names do not change by that, so it goes one step deep.
pub fn rebuild_entities(tx: &mut dyn Tx, changes: &mut Changes) -> EngineResult<()> {
    let mut pending = std::mem::take(&mut changes.entities);
    let mentioned = std::mem::take(&mut changes.mentioned);
    // Entities only mentioned keep their projection unless their display name changes.
    let mut projection_kept: BTreeSet<String> = mentioned.difference(&pending).cloned().collect();
    pending.extend(mentioned);
    let mut names = Names::default();
    let mut renamed = BTreeSet::new();
    while !pending.is_empty() {
        let mut showing = BTreeSet::new();
        for entity in &pending {
            let claims_unchanged = projection_kept.contains(entity);
            if refresh_entity_with(tx, entity, changes, &mut names, claims_unchanged)?
                && renamed.insert(entity.clone())
            {
                showing.extend(subjects_showing_name_of(tx, entity)?);
            }
        }
        // A name these show changed: their projections are rebuilt from scratch.
        pending = showing;
        projection_kept.clear();
    }
    Ok(())
}

/// The entities whose current view shows `entity`'s name: the subjects of the claims that point at
/// it (as object or context), itself left out.
pub fn subjects_showing_name_of(tx: &mut dyn Tx, entity: &str) -> EngineResult<BTreeSet<String>> {
    let mut subjects = BTreeSet::new();
    for claim in tx.list_claims_linking(entity, i64::MAX as usize)? {
        let points_here = claim.object_entity.as_deref() == Some(entity)
            || claim.context_entity.as_deref() == Some(entity);
        if points_here && claim.subject != entity {
            subjects.insert(claim.subject);
        }
    }
    Ok(subjects)
}

/// An entity's row is replaced by `updated` (an edit by hand, an undo): it is rebuilt, and when its
/// display name changed, so are the entities whose view shows that name. The stored row already
/// carries the new name when the settle runs, so the entity's own rebuild cannot see the change.
pub fn touch_replaced_entity(
    tx: &mut dyn Tx,
    previous: Option<&Entity>,
    updated: &Entity,
    changes: &mut Changes,
) -> EngineResult<()> {
    changes.entities.insert(updated.id.clone());
    if previous.is_some_and(|previous| previous.display_name() != updated.display_name()) {
        changes
            .entities
            .extend(subjects_showing_name_of(tx, &updated.id)?);
    }
    Ok(())
}

/// Display names of entities read while settling, kept current as entities are rewritten, so that a
/// hub linked from many rebuilt entities is read once per mutation, not once per rebuild.
type Names = FastMap<String, String>;

/// The rules' view of a slot's claims, borrowed from what was read.
pub fn slot_views(loaded: &LoadedSlot) -> Vec<ClaimView<'_>> {
    let mut links_by_claim: FastMap<&str, Vec<&str>> = FastMap::default();
    for link in &loaded.links {
        links_by_claim
            .entry(link.claim.as_str())
            .or_default()
            .push(link.target.as_str());
    }
    let mut views = Vec::with_capacity(loaded.claims.len());
    for claim in &loaded.claims {
        let evidence = loaded
            .evidence
            .get(&claim.id)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut supersedes = links_by_claim.remove(claim.id.as_str()).unwrap_or_default();
        supersedes.dedup();
        views.push(ClaimView {
            id: &claim.id,
            group_key: &claim.group_key,
            retracted: claim.retracted_at.is_some(),
            explicit_valid_from: claim.explicit_valid_from,
            explicit_valid_to: claim.explicit_valid_to,
            evidence: evidence.iter().map(|fact| &fact.evidence).collect(),
            supersedes,
        });
    }
    views
}

/// The rules' view of the evidence of a slot's claims, by claim, each claim's rows as
/// `list_evidence_by_claim` orders them, read in one statement.
pub fn slot_evidence_by_claim(
    tx: &mut dyn Tx,
    slot: &SlotKey,
    claims: &[Claim],
) -> EngineResult<FastMap<String, Vec<SlotFact>>> {
    if claims.is_empty() {
        return Ok(FastMap::default());
    }
    Ok(group_by_claim(tx.list_slot_facts(slot)?, |row| &row.claim))
}

/// Rows of a slot's claims (evidence, status history, supersedes links) grouped by their claim, in
/// the order they were read. A claim's id is copied once, for its first row.
pub fn group_by_claim<T>(rows: Vec<T>, claim: fn(&T) -> &String) -> FastMap<String, Vec<T>> {
    let mut by_claim: FastMap<String, Vec<T>> = FastMap::default();
    for row in rows {
        match by_claim.get_mut(claim(&row)) {
            Some(grouped) => grouped.push(row),
            None => {
                by_claim.insert(claim(&row).clone(), vec![row]);
            }
        }
    }
    by_claim
}

fn reevaluate_slot(
    tx: &mut dyn Tx,
    slot: &SlotKey,
    changes: &mut Changes,
    now: Ts,
) -> EngineResult<()> {
    let mut loaded = LoadedSlot::read(tx, slot)?;
    if loaded.claims.is_empty() {
        return Ok(());
    }
    let outcome = evaluate_views(&slot_views(&loaded));
    let claims = &loaded.claims;
    for dropped in &outcome.dropped_links {
        let message = format!(
            "supersedes link {} -> {} dropped: {}",
            dropped.claim, dropped.target, dropped.reason
        );
        tracing::info!("{message}");
        changes.diagnostics.push(message);
    }
    let holder = claims
        .iter()
        .find(|claim| outcome.states[&claim.id].status == ClaimStatus::Active);
    for claim in claims {
        let derived = &outcome.states[&claim.id];
        if *derived != claim.derived {
            tx.update_claim_derived(&claim.id, derived)?;
            if !changes.replays_history {
                tx.insert_status_change(&StatusChange {
                    claim: claim.id.clone(),
                    recorded_at: now,
                    derived: derived.clone(),
                })?;
            }
            let mut updated = claim.clone();
            updated.derived = derived.clone();
            changes.record_owned(format!("claim:{}", claim.id), Some(claim), Some(updated));
            // Only a change of status changes which claims the subject's projection shows.
            match derived.status == claim.derived.status {
                true => changes.touch_claim_evidence(claim),
                false => changes.touch_claim(claim),
            }
        }
        sync_conflict_suggestion(
            tx,
            claim,
            derived,
            holder.map(|h| h.id.as_str()),
            now,
            changes.snapshots_restored,
        )?;
    }
    if changes.replays_history {
        // The replay's last instant sees every fact, as this evaluation did: it reads the outcome
        // from the claims instead of evaluating the slot again.
        let mut states = outcome.states;
        for claim in &mut loaded.claims {
            if let Some(derived) = states.remove(&claim.id) {
                claim.derived = derived;
            }
        }
        loaded.settled = true;
        changes.loaded_slots.insert(slot.clone(), loaded);
    }
    Ok(())
}

/// Whether a claim in this derived state belongs in the review queue: provisional, in conflict with
/// another claim (an assistant's claim waits for confirmation without an entry).
pub fn in_conflict(derived: &ClaimDerived) -> bool {
    derived.status == ClaimStatus::Provisional
        && derived
            .conflict
            .is_some_and(|reason| reason != ConflictReason::Assistant)
}

/// Keeps one open review-queue entry per provisional claim that conflicts with another (L6, L7, L8).
/// An open entry exists only while the claim's stored state is `in_conflict` (`check_invariants`
/// checks it), so a claim that was not and is not in conflict has none to look up, unless the
/// mutation `restored` rows from a revision's snapshots (`Changes::snapshots_restored`).
fn sync_conflict_suggestion(
    tx: &mut dyn Tx,
    claim: &Claim,
    derived: &ClaimDerived,
    holder: Option<&str>,
    now: Ts,
    restored: bool,
) -> EngineResult<()> {
    let conflicting = in_conflict(derived);
    if !conflicting && !in_conflict(&claim.derived) && !restored {
        return Ok(());
    }
    let id = conflict_suggestion_id(&claim.id);
    let existing = tx.find_suggestion(&id)?;
    match (conflicting, existing) {
        (true, None) => tx.upsert_suggestion(&Suggestion {
            id,
            kind: "claim_conflict".into(),
            status: SuggestionStatus::Open,
            target: claim.id.clone(),
            secondary: holder.map(str::to_string),
            payload: json!({
                "subject": claim.subject, "predicate": claim.predicate,
                "value": claim.value_text, "object": claim.object_entity,
                "reason": derived.conflict.map(|r| r.as_str()),
            }),
            created_at: now,
        })?,
        (false, Some(existing)) if existing.status == SuggestionStatus::Open => {
            tx.delete_suggestion(&id)?
        }
        _ => {}
    }
    Ok(())
}

pub fn conflict_suggestion_id(claim: &str) -> String {
    short_id("s_", &["claim_conflict", claim])
}

/// Rebuilds an entity's derived fields and projection; deletes it when nothing refers to it any more.
/// Returns whether its display name changed (a deleted entity has nothing pointing at it).
///
/// With `claims_unchanged` (the mutation changed none of its claims, its kind or manual data, and no
/// name its projection shows), the projection is a function of what did not change, so only the
/// names' and observations' fields are derived again, from the names and the evidence times without
/// reading the claims, unless the display name changes, which the projection's brief shows.
fn refresh_entity_with(
    tx: &mut dyn Tx,
    id: &str,
    changes: &mut Changes,
    names: &mut Names,
    claims_unchanged: bool,
) -> EngineResult<bool> {
    // Most entities a mutation reaches are only mentioned, and keep their name: only their
    // observation fields are derived again and written, without copying the row.
    if claims_unchanged && !changes.keep_derived_entity_fields {
        let Some(header) = tx.find_entity_header(id)? else {
            return Ok(false);
        };
        let (alias_bounds, observations) = tx.entity_observation_summary(id, MENTION_WEIGHT)?;
        let name_kept = alias_bounds
            .as_ref()
            .is_none_or(|(first, _, _)| *first == header.canonical_name);
        // Neither named nor observed: the general path below may delete it.
        if name_kept && observations.count > 0 {
            let observed = observed_fields(&alias_bounds, observations, None);
            if observed != header.observed {
                tx.update_entity_observed(id, &observed)?;
                changes.derived_only = true;
            }
            return Ok(false);
        }
    }
    let Some(entity) = tx.find_entity(id)? else {
        return Ok(false);
    };
    let has_manual_data = entity.manual_name.is_some()
        || !entity.manual_attributes.is_empty()
        || entity.manual_brief.is_some()
        || entity.pinned
        || !entity.do_not_merge_with.is_empty();
    // The rebuild reads the entity's names and its claims (or their evidence) anyway; either one is
    // a reference, so the count of every kind of reference is only needed when both are gone.
    let kept = match claims_unchanged {
        true => rebuild_observations(tx, &entity)?,
        false => None,
    };
    let (rebuilt, named_or_subject) = match kept {
        Some(kept) => kept,
        None => rebuild_entity_with(tx, &entity, names)?,
    };
    // A merged entity stays as a redirect to its survivor (L18), whatever refers to it.
    if !has_manual_data
        && entity.status != EntityStatus::Merged
        && !named_or_subject
        && tx.count_entity_references(id)? == 0
    {
        for (scheme, value) in tx.list_identifiers_by_entity(id)? {
            changes.record(
                format!("identifier:{scheme}|{value}"),
                Some(json!({"scheme": scheme, "value": value, "entity": id})),
                None,
            );
        }
        tx.delete_entity(id)?;
        names.insert(id.to_string(), String::new());
        for suggestion in tx.list_suggestions()? {
            if suggestion.target == id || suggestion.secondary.as_deref() == Some(id) {
                tx.delete_suggestion(&suggestion.id)?;
            }
        }
        changes.record_row(format!("entity:{id}"), Some(&entity), None);
        return Ok(false);
    }
    let renamed = rebuilt.display_name() != entity.display_name();
    if rebuilt != entity {
        // `same_but_observed`, with the comparison of the underived fields made once for both uses.
        let same_but_derived = rebuilt.same_but_derived(&entity);
        match same_but_derived && rebuilt.same_projection(&entity) {
            true => tx.update_entity_observed(id, &rebuilt.observed())?,
            false => tx.upsert_entity(&rebuilt)?,
        }
        names.insert(id.to_string(), rebuilt.display_name().to_string());
        // A revision keeps entity rows without their derived fields, and none at all when the
        // rest did not change (`encode_snapshots`): such a rebuild, most of those a
        // meeting causes, records nothing, instead of serializing the row twice to drop it. A row
        // recorded earlier in the mutation keeps its recorded last state, which differs from this
        // one in derived fields only.
        match changes.keep_derived_entity_fields || !same_but_derived {
            true => changes.record_row(format!("entity:{id}"), Some(&entity), Some(&rebuilt)),
            false => changes.derived_only = true,
        }
    }
    Ok(renamed)
}

/// What an entity's derived fields should be, computed from its aliases and claims alone.
pub fn rebuild_entity(tx: &mut dyn Tx, entity: &Entity) -> EngineResult<Entity> {
    Ok(rebuild_entity_with(tx, entity, &mut Names::default())?.0)
}

/// The rebuild, reading linked entities' names through `names`; also whether the entity has a name
/// (alias) or a claim of its own.
fn rebuild_entity_with(
    tx: &mut dyn Tx,
    entity: &Entity,
    names_read: &mut Names,
) -> EngineResult<(Entity, bool)> {
    let (alias_bounds, observations) = tx.entity_observation_summary(&entity.id, MENTION_WEIGHT)?;
    // The claims are lent twice, not copied: first for their time bounds and the entities they
    // name, then, with those entities' names read, for the projection.
    let mut bounds = (None, None);
    let mut has_claims = false;
    let mut linked: BTreeSet<String> = BTreeSet::new();
    tx.visit_claims_by_subject(&entity.id, &mut |claims| {
        has_claims = !claims.is_empty();
        let claim_times = || {
            claims
                .iter()
                .flat_map(|c| [c.derived.first_observed_at, c.derived.last_observed_at])
                .flatten()
        };
        bounds = (claim_times().min(), claim_times().max());
        for claim in claims {
            for other in claim
                .object_entity
                .iter()
                .chain(claim.context_entity.iter())
            {
                if !linked.contains(other) {
                    linked.insert(other.clone());
                }
            }
        }
    })?;
    let mut rebuilt = entity.clone();
    derive_observed(&mut rebuilt, &alias_bounds, observations, Some(bounds));

    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for other in linked {
        let name = match names_read.get(&other) {
            Some(name) => name.clone(),
            None => {
                let name = tx.find_entity_display_name(&other)?.unwrap_or_default();
                names_read.insert(other.clone(), name.clone());
                name
            }
        };
        names.insert(other, name);
    }
    let name_of = |id: &String| names.get(id).map_or("", String::as_str);
    let mut projection = None;
    tx.visit_claims_by_subject(&entity.id, &mut |claims| {
        let projected: Vec<ProjectedClaim> = claims
            .iter()
            .map(|claim| ProjectedClaim {
                claim,
                object_name: claim.object_entity.as_ref().map(name_of),
                context_name: claim.context_entity.as_ref().map(name_of),
            })
            .collect();
        projection = Some(project(&rebuilt, &projected));
    })?;
    let (attributes, brief) = projection.unwrap_or_default();
    rebuilt.current_attributes = attributes;
    rebuilt.current_brief = brief;
    let named_or_subject = alias_bounds.is_some() || has_claims;
    Ok((rebuilt, named_or_subject))
}

/// The rebuild of an entity whose claims, kind and manual data did not change: its names and
/// observations derived again, its projection kept. `None` when its display name changed (the
/// projection shows it: the caller rebuilds from scratch).
///
/// The claims are not read. A settled claim's first and last observation are the earliest and the
/// latest time of its evidence (`lore_core::slot`), and every claim the mutation touched is settled
/// before entities are rebuilt, so the earliest and latest of the subject's claims' bounds are the
/// earliest and latest of its evidence times, which `observations` holds with its names' times.
/// An entity neither named nor observed may still be referred to (the subject of a retraction's
/// tombstone, a link, a task): its caller counts every kind of reference before deleting it.
fn rebuild_observations(tx: &mut dyn Tx, entity: &Entity) -> EngineResult<Option<(Entity, bool)>> {
    let (alias_bounds, observations) = tx.entity_observation_summary(&entity.id, MENTION_WEIGHT)?;
    // The names' times are among the observations.
    let named_or_observed = observations.count > 0;
    let mut rebuilt = entity.clone();
    derive_observed(&mut rebuilt, &alias_bounds, observations, None);
    if rebuilt.display_name() != entity.display_name() {
        return Ok(None);
    }
    Ok(Some((rebuilt, named_or_observed)))
}

/// An entity's fields derived from its names and observations: the canonical name (its earliest
/// name) and `observed_fields`.
fn derive_observed(
    rebuilt: &mut Entity,
    alias_bounds: &Option<(String, Ts, Ts)>,
    observations: ObservationSummary,
    claims: Option<(Option<Ts>, Option<Ts>)>,
) {
    if let Some((first_alias, _, _)) = alias_bounds {
        rebuilt.canonical_name = first_alias.clone();
    }
    rebuilt.set_observed(observed_fields(alias_bounds, observations, claims));
}

/// The first and last observation (of the entity's names and its claims' time bounds, the earliest
/// and the latest of them in `claims`; `None`: those of `observations`, which hold every evidence
/// time of the entity's claims, see `rebuild_observations`) and the L19 weight basis of the
/// observations.
fn observed_fields(
    alias_bounds: &Option<(String, Ts, Ts)>,
    observations: ObservationSummary,
    claims: Option<(Option<Ts>, Option<Ts>)>,
) -> Observed {
    let claims = claims.unwrap_or((observations.earliest, observations.latest));
    let observed = alias_bounds
        .iter()
        .flat_map(|(_, first, last)| [*first, *last])
        .chain(claims.0)
        .chain(claims.1);
    let (mut first, mut last) = (None::<Ts>, None::<Ts>);
    for at in observed {
        first = Some(first.map_or(at, |f| f.min(at)));
        last = Some(last.map_or(at, |l| l.max(at)));
    }
    Observed {
        first_observed_at: first,
        last_observed_at: last,
        weight_basis: observations.weight_basis,
        weight_latest: observations.latest,
    }
}

/// L13: removes evidence rows, then every non-manual claim left without evidence (retraction
/// tombstones stay, L12), marking their slots and entities for re-evaluation.
pub fn remove_evidence(
    tx: &mut dyn Tx,
    evidence: Vec<Evidence>,
    changes: &mut Changes,
) -> EngineResult<()> {
    // Set-based: the rows go in one statement, and one more tells which claims kept no evidence.
    let ids: Vec<String> = evidence.iter().map(|row| row.id.clone()).collect();
    tx.delete_evidence_many(&ids)?;
    // Each claim's earliest removed row, by when it was recorded.
    let mut earliest: FastMap<String, Ts> = FastMap::default();
    for row in evidence {
        match earliest.get_mut(&row.claim) {
            Some(at) => *at = (*at).min(row.recorded_at),
            None => {
                earliest.insert(row.claim.clone(), row.recorded_at);
            }
        }
        changes.record_removed(format!("evidence:{}", row.id), row);
    }
    let mut claim_ids: Vec<String> = earliest.keys().cloned().collect();
    claim_ids.sort_unstable();
    let unsupported: BTreeSet<String> = tx
        .list_claims_without_evidence(&claim_ids)?
        .into_iter()
        .collect();
    for claim in tx.find_claims(&claim_ids)? {
        if let Some(at) = earliest.get(claim.id.as_str()) {
            let from = changes.erased_from.entry(claim.slot()).or_insert(*at);
            *from = (*from).min(*at);
        }
        if !unsupported.contains(&claim.id) || claim.retracted_at.is_some() {
            changes.touch_claim_evidence(&claim);
            continue;
        }
        changes.touch_claim(&claim);
        tx.delete_claim(&claim.id)?;
        // Deleting a missing review-queue entry is a no-op.
        tx.delete_suggestion(&conflict_suggestion_id(&claim.id))?;
        changes.record_removed(format!("claim:{}", claim.id), claim);
    }
    Ok(())
}

/// L13 for a whole meeting: its evidence, claims only it supported, aliases, links, tasks, runs and
/// source rows. The caller settles and writes the revision.
pub fn remove_meeting(
    tx: &mut dyn Tx,
    meeting: &Meeting,
    changes: &mut Changes,
) -> EngineResult<()> {
    let evidence = tx.list_evidence_by_meeting(&meeting.id)?;
    remove_evidence(tx, evidence, changes)?;
    for entity in tx.delete_aliases_by_meeting(&meeting.id)? {
        changes.touch_mention(&entity);
    }
    crate::links::remove_meeting_attachments(tx, &meeting.id, changes)?;
    crate::resolve::forget_meeting_identifiers(tx, &meeting.id, changes)?;
    for link in tx.list_resource_links_by_meeting(&meeting.id)? {
        tx.delete_resource_link(&link.id)?;
        if let Some(entity) = &link.entity {
            changes.touch_mention(entity);
        }
        changes.record_row(format!("resource_link:{}", link.id), Some(&link), None);
    }
    for task in tx.list_tasks_by_meeting(&meeting.id)? {
        tx.delete_task(&task.id)?;
        for entity in task.assignee.iter().chain(task.project.iter()) {
            changes.touch_mention(entity);
        }
        changes.record_row(format!("task:{}", task.id), Some(&task), None);
    }
    for participant in tx.list_participants(&meeting.id)? {
        if let Some(person) = &participant.person_entity {
            changes.touch_mention(person);
        }
    }
    for attachment in tx.list_attachments(&meeting.id)? {
        changes.released_blobs.insert(attachment.sha256.clone());
    }
    changes.source_revisions.extend(
        tx.list_runs(&meeting.id)?
            .into_iter()
            .map(|run| run.revision),
    );
    tx.delete_runs_by_meeting(&meeting.id)?;
    tx.delete_meeting(&meeting.id)?;
    changes.record_row(format!("meeting:{}", meeting.id), Some(meeting), None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_store::conformance::{sample_claim, sample_entity, sample_evidence, sample_meeting};

    /// What a revision's snapshots were when every row was turned into a JSON value first: the
    /// encoded text must be the same, byte for byte, and name the same meetings.
    fn by_values(
        before: &BTreeMap<String, Snap>,
        after: &BTreeMap<String, Snap>,
        keep_derived: bool,
    ) -> (String, String, BTreeSet<String>) {
        let value = |rows: &BTreeMap<String, Snap>| {
            Value::Object(
                rows.iter()
                    .map(|(key, row)| (key.clone(), row.to_json()))
                    .collect(),
            )
        };
        let (mut first, mut last) = (value(before), value(after));
        if !keep_derived {
            Revision::strip_derived_entity_fields(&mut first);
            Revision::strip_derived_entity_fields(&mut last);
            let (Value::Object(b), Value::Object(a)) = (&mut first, &mut last) else {
                unreachable!("objects")
            };
            let unchanged: Vec<String> = a
                .iter()
                .filter(|(key, row)| key.starts_with("entity:") && b.get(*key) == Some(*row))
                .map(|(key, _)| key.clone())
                .collect();
            // Keys in order (`remove` would move the last key into the gap).
            for key in unchanged {
                b.shift_remove(&key);
                a.shift_remove(&key);
            }
        }
        let revision = Revision {
            id: "r".into(),
            action: RevisionAction::ExtractionCommit,
            target: "t".into(),
            secondary: None,
            before: first,
            after: last,
            created_at: Ts(1),
        };
        (
            revision.before.to_string(),
            revision.after.to_string(),
            lore_store::revision_meetings(&revision),
        )
    }

    #[test]
    fn encoded_snapshots_are_the_text_of_the_rows_json_values() {
        let mut changes = Changes::default();
        let meeting = sample_meeting("m\"1");
        changes.record_row("meeting:m\"1".into(), None, Some(&meeting));
        let claim = sample_claim("c1", "e1");
        let mut settled = claim.clone();
        settled.derived.status = ClaimStatus::Superseded;
        changes.record_row("claim:c1".into(), Some(&claim), Some(&settled));
        changes.record_row("claim:c2".into(), Some(&claim), None);
        // An entity changed in derived fields only: in neither snapshot (unless kept whole).
        let entity = sample_entity("e1");
        let mut observed = entity.clone();
        observed.last_observed_at = Some(Ts(99));
        changes.record_row("entity:e1".into(), Some(&entity), Some(&observed));
        // One renamed: kept, without its derived fields.
        let mut renamed = sample_entity("e2");
        renamed.manual_name = Some("Zed".into());
        changes.record_row(
            "entity:e2".into(),
            Some(&sample_entity("e2")),
            Some(&renamed),
        );
        changes.record_row("entity:e3".into(), None, Some(&sample_entity("e3")));
        // Rows recorded as JSON, one naming a meeting, one not a struct.
        changes.record(
            "alias:e1|Ann|m9".into(),
            Some(serde_json::json!({"entity": "e1", "meeting": "m9"})),
            None,
        );
        changes.record_row("tag:x".into(), None, Some(&vec!["a", "b"]));
        let mut evidence = sample_evidence("v1", "c1", "m7");
        evidence.speaker = Some("Ann \u{e9}\n".into());
        changes.record_row("evidence:v1".into(), None, Some(&evidence));
        for keep_derived in [false, true] {
            let mut meetings = BTreeSet::new();
            let (before, after) =
                encode_snapshots(&changes.before, &changes.after, keep_derived, &mut meetings);
            let (want_before, want_after, want_meetings) =
                by_values(&changes.before, &changes.after, keep_derived);
            assert_eq!(before, want_before, "keep_derived {keep_derived}");
            assert_eq!(after, want_after, "keep_derived {keep_derived}");
            assert_eq!(meetings, want_meetings);
            assert_eq!(
                after.contains("\"entity:e1\""),
                keep_derived,
                "an entity changed in derived fields only"
            );
        }
        let names: Vec<&str> = ["m\"1", "m7", "m9"].to_vec();
        let mut meetings = BTreeSet::new();
        encode_snapshots(&changes.before, &changes.after, false, &mut meetings);
        assert_eq!(
            meetings.iter().map(String::as_str).collect::<Vec<_>>(),
            names
        );
    }
}
