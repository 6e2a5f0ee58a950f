//! The storage seam: an owner-bound transaction trait, and its SQLite implementation.
//!
//! A [`Tx`] is opened for exactly one owner; none of its methods take an owner, so no query written
//! against it can cross owners (L20). Backends store and fetch rows; they apply no lifecycle rule.

use std::path::Path;

use lore_core::model::*;
use lore_core::Ts;

pub mod conformance;
mod fast_hash;
mod graph_adjacency;
mod graph_index;
mod owner_builds;
#[cfg(feature = "postgres")]
mod postgres;
mod sqlite;
pub mod testing;

#[cfg(feature = "postgres")]
pub use postgres::{search_candidates_statement, PostgresStore};

pub use fast_hash::{FastMap, FastSet};
pub use graph_adjacency::{
    AdjLink, Adjacency, EdgeInfo, GraphNodeInfo, LinkFilter, Runs, GRAPH_SCAN_LIMIT,
};
pub use graph_index::GraphIndex;

/// The meetings a revision's rows name: a row's `meeting` field and the id in a `meeting:ID` key,
/// in either snapshot. Stores keep them with the revision (`Tx::list_revisions_naming_meeting`).
pub fn revision_meetings(revision: &Revision) -> std::collections::BTreeSet<String> {
    let mut meetings = std::collections::BTreeSet::new();
    for snapshot in [&revision.before, &revision.after] {
        let Some(rows) = snapshot.as_object() else {
            continue;
        };
        for (key, row) in rows {
            if let Some(meeting) = key.strip_prefix("meeting:") {
                meetings.insert(meeting.to_string());
            }
            if let Some(meeting) = row.get("meeting").and_then(|m| m.as_str()) {
                meetings.insert(meeting.to_string());
            }
        }
    }
    meetings
}

/// A revision whose snapshots are already JSON text, as the engine writes them: a store keeps the
/// text instead of building a JSON value of every row and serializing it (`Tx::insert_encoded_revision`).
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedRevision {
    pub id: String,
    pub action: RevisionAction,
    pub target: String,
    pub secondary: Option<String>,
    /// The snapshots (`Revision::before`, `Revision::after`) as JSON text.
    pub before: String,
    pub after: String,
    /// The meetings its rows name (what `revision_meetings` finds in the snapshots).
    pub meetings: std::collections::BTreeSet<String>,
    pub created_at: Ts,
}

impl EncodedRevision {
    /// A revision with its snapshots serialized, and the meetings they name.
    pub fn encode(revision: &Revision) -> EncodedRevision {
        EncodedRevision {
            id: revision.id.clone(),
            action: revision.action,
            target: revision.target.clone(),
            secondary: revision.secondary.clone(),
            before: revision.before.to_string(),
            after: revision.after.to_string(),
            meetings: revision_meetings(revision),
            created_at: revision.created_at,
        }
    }

    /// The revision with its snapshots parsed.
    pub fn decode(&self) -> StoreResult<Revision> {
        let parse = |text: &str| {
            serde_json::from_str(text)
                .map_err(|error| StoreError::Backend(format!("a revision snapshot: {error}")))
        };
        Ok(Revision {
            id: self.id.clone(),
            action: self.action,
            target: self.target.clone(),
            secondary: self.secondary.clone(),
            before: parse(&self.before)?,
            after: parse(&self.after)?,
            created_at: self.created_at,
        })
    }
}

/// The owners' graph indexes of a store, built on a thread of its own (`owner_builds.rs`).
pub(crate) type GraphBuilds = owner_builds::OwnerBuilds<GraphIndex>;

/// Graph reads of one owner version answered by queries before its graph index is asked for: the
/// second, so a one-shot `lore graph` never pays for a whole scan to answer one neighborhood.
pub(crate) const GRAPH_BUILD_AFTER_READS: u32 = 2;

pub use sqlite::log_store::{open_embedded, LogStore};
pub use sqlite::{
    fts_body_expression as sqlite_body_expression, hot_queries, SqliteStore, PREWARM,
    SEARCH_TOKENIZER,
};

/// Rows stored for one meeting (`Tx::meeting_counts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeetingCounts {
    pub segments: usize,
    pub notes: usize,
    pub participants: usize,
    pub evidence: usize,
}

/// An entity's earliest name with the first and last times it was named, and every time it was
/// observed (`Tx::entity_observations`).
pub type EntityObservations = (Option<(String, Ts, Ts)>, Vec<Ts>);

/// An entity's observation times folded for its rebuild (`Tx::entity_observation_summary`): how
/// many there are, the earliest and the latest, and their L19 weight basis at one weight
/// (`lore_core::reading::weight_basis_of_times`, bit for bit).
#[derive(Clone, Debug, PartialEq)]
pub struct ObservationSummary {
    pub count: usize,
    pub earliest: Option<Ts>,
    pub latest: Option<Ts>,
    pub weight_basis: f64,
}

/// An entity's earliest name with the times it was first and last named, and its observations
/// folded (`Tx::entity_observation_summary`).
pub type FoldedObservations = (Option<(String, Ts, Ts)>, ObservationSummary);

impl ObservationSummary {
    pub fn of(times: Vec<Ts>, weight: f64) -> Self {
        let (count, earliest) = (times.len(), times.iter().min().copied());
        let (weight_basis, latest) = lore_core::reading::weight_basis_of_times(times, weight);
        ObservationSummary {
            count,
            earliest,
            latest,
            weight_basis,
        }
    }
}

/// A write transaction's memo of identifier lookups (`Tx::find_entity_by_identifier`), by (scheme,
/// value); `None`: no entity holds it. Both backends keep it current through the only writes of
/// identifiers: insert, delete, and the cascade of deleting the holding entity.
#[derive(Default)]
pub(crate) struct IdentifierMemo(std::collections::HashMap<(String, String), Option<String>>);

impl IdentifierMemo {
    pub(crate) fn get(&self, scheme: &str, value: &str) -> Option<Option<String>> {
        self.0
            .get(&(scheme.to_string(), value.to_string()))
            .cloned()
    }

    /// What a lookup found.
    pub(crate) fn found(&mut self, scheme: &str, value: &str, entity: Option<String>) {
        self.0
            .insert((scheme.to_string(), value.to_string()), entity);
    }

    /// An insert that added a row (`inserted`) or lost to the holder already there (`DO NOTHING`,
    /// which may be a row this memo has not seen: it is looked up again).
    pub(crate) fn inserted(&mut self, scheme: &str, value: &str, entity: &str, inserted: bool) {
        let key = (scheme.to_string(), value.to_string());
        match inserted {
            true => self.0.insert(key, Some(entity.to_string())),
            false => self.0.remove(&key),
        };
    }

    /// The entity was deleted, and its identifiers with it (`ON DELETE CASCADE`).
    pub(crate) fn entity_deleted(&mut self, entity: &str) {
        self.0.retain(|_, holder| holder.as_deref() != Some(entity));
    }
}

/// `EntityObservations` from the rows `ENTITY_OBSERVATIONS` reads (both backends): an evidence time
/// has no name, a name comes with the time it was said. The earliest name is the first by time, then
/// by text in byte order (SQLite's binary collation, PostgreSQL's `"C"`), as `find_alias_bounds`
/// orders them.
pub(crate) fn observations_from_rows(rows: Vec<(Option<String>, i64)>) -> EntityObservations {
    let mut first: Option<(&String, i64)> = None;
    let mut last: Option<i64> = None;
    for (alias, at) in &rows {
        let Some(alias) = alias else { continue };
        if first.is_none_or(|(name, time)| (*at, alias) < (time, name)) {
            first = Some((alias, *at));
        }
        last = Some(last.map_or(*at, |l| l.max(*at)));
    }
    let bounds = first
        .zip(last)
        .map(|((alias, first), last)| (alias.clone(), Ts(first), Ts(last)));
    let times = rows.iter().map(|(_, at)| Ts(*at)).collect();
    (bounds, times)
}

/// One full-text search candidate: which document matched, where it sits, and its text rank
/// (bm25: lower is better). The engine adds boosts, picks the top hits and asks for snippets.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchCandidate {
    pub doc: i64,
    /// `entity`, `claim`, `segment` or `note`.
    pub kind: String,
    /// The entity, claim or note id; for a segment, `<meeting id>/<segment id>`.
    pub reference: String,
    pub meeting: Option<String>,
    pub start_ms: Option<i64>,
    pub at: Option<Ts>,
    pub rank: f64,
}

/// An evidence row of a slot as the lifecycle rules read it (`Tx::list_slot_facts`).
#[derive(Clone, Debug, PartialEq)]
pub struct SlotFact {
    pub claim: String,
    pub recorded_at: Ts,
    pub evidence: lore_core::slot::SlotEvidence,
}

impl SlotFact {
    pub fn of(evidence: &Evidence) -> SlotFact {
        SlotFact {
            claim: evidence.claim.clone(),
            recorded_at: evidence.recorded_at,
            evidence: lore_core::slot::SlotEvidence::of(evidence),
        }
    }
}

/// An active claim as the entity page shows it (the projection read): the claim's value and its
/// current validity, without its history or evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectedClaim {
    pub id: String,
    pub predicate: String,
    pub value_text: Option<String>,
    pub object_entity: Option<String>,
    pub context_entity: Option<String>,
    pub authority: Authority,
    pub valid_from: Option<Ts>,
    pub valid_to: Option<Ts>,
}

/// A meeting link attached to an entity (`link_attachments`), with the link's row and the
/// meeting's external id (its internal id when the meeting has no row): what an entity page lists of
/// it.
#[derive(Clone, Debug, PartialEq)]
pub struct AttachedLink {
    pub link: ResourceLink,
    pub attachment: LinkAttachment,
    pub meeting_external_id: String,
}

/// What [`Tx::list_entities_taught_by_meeting`] answers, from the reads it replaces: the meeting's
/// identifier sources, each resolved by `find_entity_by_identifier` (the trait's default, and what
/// the conformance suite holds the backends' joins to).
pub fn entities_taught_by_definition<X: Tx + ?Sized>(
    tx: &mut X,
    meeting: &str,
) -> StoreResult<Vec<(String, String)>> {
    let mut taught = std::collections::BTreeSet::new();
    for source in tx.list_identifier_sources_by_meeting(meeting)? {
        if let Some(entity) = tx.find_entity_by_identifier(&source.scheme, &source.value)? {
            taught.insert((source.group, entity));
        }
    }
    Ok(taught.into_iter().collect())
}

/// The `(group, entity)` rows of `ENTITIES_TAUGHT_BY_MEETING`, as `list_entities_taught_by_meeting`
/// answers them: sorted by byte order and distinct, whatever the backend's collation.
pub(crate) fn sorted_distinct(mut rows: Vec<(String, String)>) -> Vec<(String, String)> {
    rows.sort();
    rows.dedup();
    rows
}

/// One statement for [`Tx::list_entities_taught_by_meeting`], run as written by both backends.
pub(crate) const ENTITIES_TAUGHT_BY_MEETING: &str =
    "SELECT s.grp, i.entity FROM identifier_sources AS s \
     JOIN entity_identifiers AS i ON i.owner = s.owner AND i.scheme = s.scheme AND i.value = s.value \
     WHERE s.owner = ?1 AND s.meeting = ?2";

/// What [`Tx::list_attached_links`] answers, from the reads it replaces: each of the entity's
/// attachments whose link is one of the attaching meeting's links, in link id order (the trait's
/// default, and what the conformance suite holds the backends' joins to).
pub fn attached_links_by_definition<X: Tx + ?Sized>(
    tx: &mut X,
    entity: &str,
) -> StoreResult<Vec<AttachedLink>> {
    let mut found = Vec::new();
    for attachment in tx.list_link_attachments_by_entity(entity)? {
        let link = tx
            .list_resource_links_by_meeting(&attachment.meeting)?
            .into_iter()
            .find(|link| link.id == attachment.link);
        if let Some(link) = link {
            let meeting_external_id = tx
                .find_meeting(&attachment.meeting)?
                .map_or_else(|| attachment.meeting.clone(), |m| m.external_id);
            found.push(AttachedLink {
                link,
                attachment,
                meeting_external_id,
            });
        }
    }
    found.sort_by(|a, b| a.link.id.cmp(&b.link.id));
    Ok(found)
}

/// What a store holds of an owner's entity pages in memory (`Store::cached_pages`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CachedPages {
    /// Entities with a row among them.
    pub entities: usize,
    /// The memory they take, estimated from their rows' sizes (allocator overhead not counted).
    pub bytes: usize,
    /// Ids whose pages it does not hold after all, because another id's page took their key: their
    /// reads query. Expected to be none.
    pub left_to_queries: usize,
}

/// A meeting linked to an entity: the entity attended it, or the meeting's evidence speaks about it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MeetingLink {
    pub meeting: String,
    pub entity: String,
    /// `attended` or `mentioned_in`.
    pub relation: String,
}

/// What can go wrong in storage. Engine errors travel through [`StoreError::Aborted`] untouched.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found: {0}")]
    NotFound(String),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database error: {0}")]
    Backend(String),
    #[error("{0}")]
    Aborted(Box<dyn std::error::Error + Send + Sync>),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// The work done inside one transaction.
pub type TxWork<'a> = dyn FnMut(&mut dyn Tx) -> StoreResult<()> + 'a;

/// A database that runs owner-scoped transactions.
pub trait Store: Send + Sync {
    /// Runs `work` in one write transaction: all of it commits, or none of it does.
    fn write(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()>;
    /// Runs `work` against one consistent snapshot; writes inside it fail.
    fn read(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()>;
    /// The folder where attachment bytes live, content-addressed by SHA-256.
    fn blob_dir(&self) -> &Path;
    /// Every owner with data, for administration and whole-database checks.
    fn owners(&self) -> StoreResult<Vec<String>>;
    /// Backend self-check (SQLite: `PRAGMA integrity_check`); empty when healthy.
    fn integrity_problems(&self) -> StoreResult<Vec<String>>;
    /// A short name for messages: `sqlite` or `postgres`.
    fn backend_name(&self) -> &'static str;
    /// Meetings applied per write transaction when many are ingested at once. SQLite gains from
    /// fewer durable commits; PostgreSQL loses (a long transaction's repeated updates of the same hub
    /// rows pile up row versions that no one can prune until it ends), so it commits each meeting.
    fn ingest_batch(&self) -> usize {
        32
    }
    /// Brings the pages of the per-entity reads' b-trees into the reading connection's view of the
    /// database, so that a long-lived process (`lore serve`, `lore mcp`) answers its first reads of
    /// each entity as fast as later ones; returns how many statements it ran. The SQLite reader maps
    /// the file, and each page it has not touched yet costs a page fault on first read: about 2 µs,
    /// and more pages per read the larger the database (BENCHMARKS.md). It then asks the store's
    /// threads for each owner's entity pages (`cached_pages`), which `show` reads until the owner's
    /// next write, and graph index (`cached_graph`), without waiting for them.
    /// A backend with a shared buffer pool of its own (PostgreSQL) has nothing to do here.
    fn prewarm(&self) -> StoreResult<usize> {
        Ok(0)
    }

    /// How many statements write transactions have run since the store opened (rolled-back ones
    /// included), or `None` where the backend does not count them (PostgreSQL). For the benchmark:
    /// a write's statements are a measure of its work that does not depend on the machine's speed
    /// or load.
    fn write_statements(&self) -> Option<u64> {
        None
    }

    /// How many knowledge rows write transactions have written or removed since the store opened
    /// (committed or not), or `None` where the backend does not keep its knowledge as row changes
    /// of its own (the log store does: each is an operation of its log). Like `write_statements`, a
    /// measure of a write's work that does not depend on the machine.
    fn write_operations(&self) -> Option<u64> {
        None
    }

    /// The entity pages the store holds in memory for `owner` in its current read snapshot version,
    /// for `show` and the other per-entity reads (SQLite's page index, built on a thread of the
    /// store's own when `prewarm` or enough projections ask); `None` when it holds none. For the
    /// benchmark's report and for tests.
    fn cached_pages(&self, owner: &str) -> Option<CachedPages> {
        let _ = owner;
        None
    }

    /// Whether the store holds `owner`'s in-memory graph index for its current version (the SQLite
    /// store's, built on a thread of its own: `owner_builds.rs`). For the benchmark and tests.
    fn cached_graph(&self, owner: &str) -> bool {
        let _ = owner;
        false
    }

    /// Waits until the work the store does in the background for reads (building entity pages and
    /// graph indexes) is done, so that a measurement or a test reads what a long-running server reads once it is.
    fn finish_background_work(&self) {}

    /// Waits until the full-text index has been merged after the writes made so far (on SQLite a
    /// background thread merges it in small steps once writes pause; at most a minute), as a
    /// server's index is a few seconds after its last write.
    fn wait_search_merged(&self) {}

    // API tokens: the one administrative exception to owner-bound access. A request is known only by
    // its bearer token, so the lookup cannot be scoped by an owner; it returns the owner instead.
    // Only the SHA-256 of a token is ever stored.
    fn insert_api_token(&self, token: &ApiToken) -> StoreResult<()>;
    fn find_api_token_by_hash(&self, token_hash: &str) -> StoreResult<Option<ApiToken>>;
    /// Every token's metadata (never a secret), oldest first.
    fn list_api_tokens(&self) -> StoreResult<Vec<ApiToken>>;
    /// Deletes the token with this public id; `false` when there was none.
    fn delete_api_token(&self, id: &str) -> StoreResult<bool>;

    // Web workspace users: administrative like API tokens (a sign-in names no owner but its user).
    fn insert_user(&self, user: &User) -> StoreResult<()>;
    fn find_user(&self, name: &str) -> StoreResult<Option<User>>;
    /// Every user, by name (password hashes included; callers never print them).
    fn list_users(&self) -> StoreResult<Vec<User>>;
    /// Deletes the user with this name, and the web sessions signed in as it; `false` when there
    /// was no such user.
    fn delete_user(&self, name: &str) -> StoreResult<bool>;

    // Web workspace sessions: administrative like API tokens (a request is known only by its
    // cookie). Only the SHA-256 of a cookie is stored.
    /// Stores a new session; a cookie hash already stored is an error.
    fn insert_web_session(&self, session: &WebSession) -> StoreResult<()>;
    fn find_web_session(&self, cookie_hash: &str) -> StoreResult<Option<WebSession>>;
    /// Records that the session was used at `at`; `false` when there is no such session.
    fn touch_web_session(&self, cookie_hash: &str, at: Ts) -> StoreResult<bool>;
    /// Ends a session; `false` when there was none.
    fn delete_web_session(&self, cookie_hash: &str) -> StoreResult<bool>;
    /// Ends every session last used before `before`; how many there were.
    fn delete_web_sessions_idle_since(&self, before: Ts) -> StoreResult<usize>;
}

/// A web workspace session as stored: the SHA-256 of its cookie (never the cookie), the owner it is
/// signed in as, when it started and when it was last used (recorded at most every few minutes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebSession {
    pub cookie_hash: String,
    pub owner: String,
    pub created_at: Ts,
    pub last_seen_at: Ts,
}

/// A web workspace user: its name is the owner it signs in as; `password_hash` is an argon2 PHC string.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct User {
    pub name: String,
    #[serde(skip)]
    pub password_hash: String,
    pub created_at: Ts,
}

/// An API token as stored: its public id, owner and scope, and the SHA-256 of its secret.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ApiToken {
    pub id: String,
    #[serde(skip)]
    pub token_hash: String,
    pub owner: String,
    /// `read` or `write` (write includes read).
    pub scope: String,
    pub label: Option<String>,
    pub created_at: Ts,
    pub expires_at: Option<Ts>,
}

/// Scheme of a strong identifier that resolves to one entity (email, domain, key, ...).
pub type IdentifierScheme = str;

/// The trait's default for the per-slot reads: `read` for every claim of the slot, in claim id order.
fn per_slot_claim<X: Tx + ?Sized, T>(
    tx: &mut X,
    slot: &SlotKey,
    mut read: impl FnMut(&mut X, &str) -> StoreResult<Vec<T>>,
) -> StoreResult<Vec<T>> {
    let mut claims: Vec<String> = tx
        .list_claims_by_slot(slot)?
        .into_iter()
        .map(|claim| claim.id)
        .collect();
    claims.sort();
    let mut rows = Vec::new();
    for claim in claims {
        rows.extend(read(tx, &claim)?);
    }
    Ok(rows)
}

/// Row operations inside one owner's transaction. Verbs follow one pattern: `insert_*`, `upsert_*`,
/// `find_*` (one or none), `list_*` (many), `update_*`, `delete_*`.
pub trait Tx {
    // Sources.
    fn upsert_series(&mut self, series: &MeetingSeries) -> StoreResult<()>;
    fn find_series(&mut self, id: &str) -> StoreResult<Option<MeetingSeries>>;
    fn insert_meeting(&mut self, meeting: &Meeting) -> StoreResult<()>;
    fn find_meeting(&mut self, id: &str) -> StoreResult<Option<Meeting>>;
    fn find_meeting_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Meeting>>;
    fn list_meetings(&mut self) -> StoreResult<Vec<Meeting>>;
    /// Deletes the meeting with its participants, segments, notes and attachments.
    fn delete_meeting(&mut self, id: &str) -> StoreResult<()>;
    fn insert_participant(&mut self, participant: &Participant) -> StoreResult<()>;
    fn list_participants(&mut self, meeting: &str) -> StoreResult<Vec<Participant>>;
    fn insert_segment(&mut self, segment: &Segment) -> StoreResult<()>;
    fn list_segments(&mut self, meeting: &str) -> StoreResult<Vec<Segment>>;
    fn insert_note(&mut self, note: &Note) -> StoreResult<()>;
    fn find_note(&mut self, id: &str) -> StoreResult<Option<Note>>;
    fn list_notes(&mut self, meeting: &str) -> StoreResult<Vec<Note>>;
    fn delete_note(&mut self, id: &str) -> StoreResult<()>;
    fn insert_attachment(&mut self, attachment: &Attachment) -> StoreResult<()>;
    fn find_attachment(&mut self, id: &str) -> StoreResult<Option<Attachment>>;
    fn list_attachments(&mut self, meeting: &str) -> StoreResult<Vec<Attachment>>;
    fn delete_attachment(&mut self, id: &str) -> StoreResult<()>;
    /// How many attachments of this owner still point at a blob.
    fn count_attachments_with_sha256(&mut self, sha256: &str) -> StoreResult<i64>;

    // Entities.
    fn upsert_entity(&mut self, entity: &Entity) -> StoreResult<()>;
    /// Writes a stored entity's observation fields (first and last observation, weight basis and
    /// latest), the rest of its row unchanged: the rebuild of an entity a write only mentions. No
    /// stored entity: nothing changes.
    fn update_entity_observed(&mut self, id: &str, observed: &Observed) -> StoreResult<()> {
        match self.find_entity(id)? {
            Some(mut entity) => {
                entity.set_observed(*observed);
                self.upsert_entity(&entity)
            }
            None => Ok(()),
        }
    }
    fn find_entity(&mut self, id: &str) -> StoreResult<Option<Entity>>;
    /// The entity's header (`Entity::header`): a store that keeps rows in memory answers without
    /// copying the whole row.
    fn find_entity_header(&mut self, id: &str) -> StoreResult<Option<EntityHeader>> {
        Ok(self.find_entity(id)?.map(|entity| entity.header()))
    }
    /// The name every view shows for the entity (`Entity::display_name`); a store that keeps rows
    /// in memory answers without copying the row.
    fn find_entity_display_name(&mut self, id: &str) -> StoreResult<Option<String>> {
        Ok(self
            .find_entity(id)?
            .map(|entity| entity.display_name().to_string()))
    }
    /// Whether the entity lists this email (`None`: no such entity); a store that keeps rows in
    /// memory answers without copying the row.
    fn entity_has_email(&mut self, id: &str, email: &str) -> StoreResult<Option<bool>> {
        Ok(self
            .find_entity(id)?
            .map(|entity| entity.emails.iter().any(|e| e == email)))
    }
    /// Points an entity id that another replaced (a person re-keyed when its anchor identifier
    /// changed) at the new id; a later call for the same old id replaces the target.
    fn set_entity_redirect(&mut self, old_id: &str, new_id: &str) -> StoreResult<()>;
    /// Where a replaced entity id points, if anywhere.
    fn find_entity_redirect(&mut self, old_id: &str) -> StoreResult<Option<String>>;
    /// Every redirect, `(old id, new id)` by old id (for copies).
    fn list_entity_redirects(&mut self) -> StoreResult<Vec<(String, String)>>;
    fn list_entities(&mut self) -> StoreResult<Vec<Entity>>;
    fn delete_entity(&mut self, id: &str) -> StoreResult<()>;
    fn insert_identifier(
        &mut self,
        scheme: &IdentifierScheme,
        value: &str,
        entity: &str,
    ) -> StoreResult<()>;
    fn find_entity_by_identifier(
        &mut self,
        scheme: &IdentifierScheme,
        value: &str,
    ) -> StoreResult<Option<String>>;
    fn insert_alias(&mut self, alias: &Alias) -> StoreResult<()>;
    fn list_aliases(&mut self, entity: &str) -> StoreResult<Vec<Alias>>;
    fn list_entities_by_alias_key(&mut self, alias_key: &str) -> StoreResult<Vec<String>>;
    /// Deletes the meeting's aliases and returns the entities they named.
    fn delete_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>>;
    /// How many kinds of rows (claims as subject, object or context, aliases, participants, tasks,
    /// links) still mention the entity: 0 when nothing does. Each kind stops at its first row, so the
    /// answer costs the same for a hub as for a leaf.
    fn count_entity_references(&mut self, entity: &str) -> StoreResult<i64>;

    // Claims and evidence.
    fn insert_claim(&mut self, claim: &Claim) -> StoreResult<()>;
    fn find_claim(&mut self, id: &str) -> StoreResult<Option<Claim>>;
    fn update_claim_derived(&mut self, id: &str, derived: &ClaimDerived) -> StoreResult<()>;
    fn update_claim_retracted(&mut self, id: &str, retracted_at: Option<Ts>) -> StoreResult<()>;
    fn delete_claim(&mut self, id: &str) -> StoreResult<()>;
    fn list_claims_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Claim>>;
    fn list_claims_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Claim>>;
    /// Calls `visit` once with the entity's claims, in `list_claims_by_subject`'s order; a store
    /// that keeps rows in memory lends them instead of copying (a hub has hundreds).
    fn visit_claims_by_subject(
        &mut self,
        entity: &str,
        visit: &mut dyn FnMut(&[&Claim]),
    ) -> StoreResult<()> {
        let claims = self.list_claims_by_subject(entity)?;
        visit(&claims.iter().collect::<Vec<_>>());
        Ok(())
    }
    /// Claims whose object or context is the entity.
    fn list_claims_mentioning(&mut self, entity: &str) -> StoreResult<Vec<Claim>>;
    fn list_claims(&mut self) -> StoreResult<Vec<Claim>>;
    /// Inserts evidence; returns `false` when a row with this id already exists (L1, L2).
    fn insert_evidence(&mut self, evidence: &Evidence) -> StoreResult<bool>;
    fn list_evidence_by_claim(&mut self, claim: &str) -> StoreResult<Vec<Evidence>>;
    fn list_evidence_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Evidence>>;
    fn list_evidence_by_source(
        &mut self,
        kind: SourceKind,
        source_id: &str,
    ) -> StoreResult<Vec<Evidence>>;
    fn list_evidence(&mut self) -> StoreResult<Vec<Evidence>>;
    fn delete_evidence(&mut self, id: &str) -> StoreResult<()>;
    fn insert_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()>;
    fn list_supersedes_links(&mut self, claim: &str) -> StoreResult<Vec<SupersedesLink>>;
    fn insert_status_change(&mut self, change: &StatusChange) -> StoreResult<()>;
    fn list_status_changes(&mut self, claim: &str) -> StoreResult<Vec<StatusChange>>;

    // Links, tasks, runs, revisions, suggestions, tags.
    fn upsert_resource_link(&mut self, link: &ResourceLink) -> StoreResult<()>;
    fn list_resource_links_by_entity(&mut self, entity: &str) -> StoreResult<Vec<ResourceLink>>;
    fn list_resource_links_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<ResourceLink>>;
    fn delete_resource_link(&mut self, id: &str) -> StoreResult<()>;
    fn insert_task(&mut self, task: &Task) -> StoreResult<()>;
    fn list_tasks_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Task>>;
    /// Tasks assigned to the entity or filed under it as a project.
    fn list_tasks_by_entity(&mut self, entity: &str) -> StoreResult<Vec<Task>>;
    fn delete_task(&mut self, id: &str) -> StoreResult<()>;
    fn insert_run(&mut self, run: &ExtractionRun) -> StoreResult<()>;
    fn find_run(
        &mut self,
        meeting: &str,
        content_hash: &str,
        extractor: &str,
    ) -> StoreResult<Option<ExtractionRun>>;
    fn delete_runs_by_meeting(&mut self, meeting: &str) -> StoreResult<()>;
    fn insert_revision(&mut self, revision: &Revision) -> StoreResult<()>;
    /// Inserts a revision whose snapshots are JSON text; the same row as `insert_revision` of the
    /// parsed revision, which is what a store without a faster way does.
    fn insert_encoded_revision(&mut self, revision: &EncodedRevision) -> StoreResult<()> {
        self.insert_revision(&revision.decode()?)
    }
    fn find_revision(&mut self, id: &str) -> StoreResult<Option<Revision>>;
    /// Rewrites a revision's snapshots (erasure: a deleted source's words leave the revisions that
    /// recorded them); a revision of another owner or none is left alone.
    fn replace_revision_snapshots(
        &mut self,
        id: &str,
        before: &serde_json::Value,
        after: &serde_json::Value,
    ) -> StoreResult<()>;
    fn list_revisions(&mut self, limit: usize) -> StoreResult<Vec<Revision>>;
    /// The ids of the revisions whose rows name this meeting (`revision_meetings`), by id.
    fn list_revisions_naming_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>>;
    fn upsert_suggestion(&mut self, suggestion: &Suggestion) -> StoreResult<()>;
    fn find_suggestion(&mut self, id: &str) -> StoreResult<Option<Suggestion>>;
    fn list_suggestions(&mut self) -> StoreResult<Vec<Suggestion>>;
    fn delete_suggestion(&mut self, id: &str) -> StoreResult<()>;
    fn upsert_tag(&mut self, tag: &Tag) -> StoreResult<()>;
    fn list_tags(&mut self) -> StoreResult<Vec<Tag>>;

    // Whole-owner copies (`lore migrate`).
    fn list_runs(&mut self, meeting: &str) -> StoreResult<Vec<ExtractionRun>>;

    // Read side: search, graph neighborhood, time travel, deadlines and tasks.
    /// Full-text candidates for `query` among the owner's documents (of one `kind` when given), the
    /// most recently indexed first, at most `limit`: ranking cost stays bounded however common a word.
    fn search_candidates(
        &mut self,
        query: &lore_core::search::SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<SearchCandidate>>;
    /// The document's text around the matches of `query`, matches wrapped in `[` and `]`.
    fn find_search_snippet(
        &mut self,
        query: &lore_core::search::SearchQuery,
        doc: i64,
    ) -> StoreResult<Option<String>>;
    /// For every claim of `subject`, its latest status-history row recorded at or before `at`.
    fn list_status_as_of(&mut self, subject: &str, at: Ts) -> StoreResult<Vec<StatusChange>>;
    /// Replaces a claim's whole status history with `rows`, in order.
    fn replace_status_history(&mut self, claim: &str, rows: &[StatusChange]) -> StoreResult<()>;
    /// The same, given the history as this transaction read it (`list_status_changes_by_slot`, in
    /// order): a backend may keep the rows both start with without reading them again (SQLite).
    fn replace_status_history_read(
        &mut self,
        claim: &str,
        stored: &[StatusChange],
        rows: &[StatusChange],
    ) -> StoreResult<()> {
        let _ = stored;
        self.replace_status_history(claim, rows)
    }
    fn list_claims_by_predicate(&mut self, predicate: &str) -> StoreResult<Vec<Claim>>;
    /// Claims that link the entity to another (it is subject with an object or context, or it is the
    /// object or context): active ones first, then the most recently observed, at most `limit`.
    fn list_claims_linking(&mut self, entity: &str, limit: usize) -> StoreResult<Vec<Claim>>;
    /// Meetings the entity attended or whose evidence speaks about it, most recent first.
    fn list_meeting_links_by_entity(
        &mut self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<MeetingLink>>;
    /// Entities that attended the meeting or that its evidence speaks about.
    fn list_meeting_links_by_meeting(
        &mut self,
        meeting: &str,
        limit: usize,
    ) -> StoreResult<Vec<MeetingLink>>;
    /// When the entity was observed (evidence of its claims, names it was called by), for topic weight.
    fn list_observation_times(&mut self, entity: &str) -> StoreResult<Vec<Ts>>;
    fn list_tasks(&mut self) -> StoreResult<Vec<Task>>;
    fn list_tasks_by_assignee(&mut self, entity: &str) -> StoreResult<Vec<Task>>;

    // Identity: merge, split, undo, participants, tasks (issue 3).
    /// Inserts the claim, or replaces every column of the stored one (restoring a snapshot).
    fn upsert_claim(&mut self, claim: &Claim) -> StoreResult<()>;
    fn delete_alias(&mut self, alias: &Alias) -> StoreResult<()>;
    /// Every `(scheme, value)` identifier that resolves to the entity.
    fn list_identifiers_by_entity(&mut self, entity: &str) -> StoreResult<Vec<(String, String)>>;
    fn delete_identifier(&mut self, scheme: &IdentifierScheme, value: &str) -> StoreResult<()>;
    /// Participant rows (of any meeting) mapped to the person.
    fn list_participants_by_person(&mut self, entity: &str) -> StoreResult<Vec<Participant>>;
    /// Replaces the participant row `(meeting, idx)`.
    fn update_participant(&mut self, participant: &Participant) -> StoreResult<()>;
    fn delete_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()>;
    fn find_task(&mut self, id: &str) -> StoreResult<Option<Task>>;
    /// A user's decision about one participant of one meeting; it outlives re-ingestion.
    fn upsert_participant_mapping(&mut self, mapping: &ParticipantMapping) -> StoreResult<()>;
    fn list_participant_mappings(&mut self, meeting: &str) -> StoreResult<Vec<ParticipantMapping>>;
    fn delete_participant_mapping(&mut self, meeting: &str, key: &str) -> StoreResult<()>;
    fn delete_participant(&mut self, meeting: &str, idx: i64) -> StoreResult<()>;
    /// A status the user set on a task; ingestion re-applies it when the meeting comes again.
    fn upsert_task_decision(&mut self, task: &str, status: TaskStatus) -> StoreResult<()>;
    fn find_task_decision(&mut self, task: &str) -> StoreResult<Option<TaskStatus>>;
    fn delete_task_decision(&mut self, task: &str) -> StoreResult<()>;

    // Entity rebuilds.
    /// The entity's earliest name (by observation time, then text) with the first and last times it
    /// was named; `None` when it has no names. Entity rebuilds read it through
    /// `entity_observations`, with the observation times.
    fn find_alias_bounds(&mut self, entity: &str) -> StoreResult<Option<(String, Ts, Ts)>>;

    // Identity: stored link attachments and identifier provenance (issue 3).
    /// The names recorded in one meeting, with the entities they named.
    fn list_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Alias>>;
    /// Inserts an attachment; an existing `(link, entity)` row is replaced.
    fn upsert_link_attachment(&mut self, attachment: &LinkAttachment) -> StoreResult<()>;
    fn list_link_attachments_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<LinkAttachment>>;
    fn list_link_attachments_by_entity(&mut self, entity: &str)
        -> StoreResult<Vec<LinkAttachment>>;
    fn delete_link_attachment(&mut self, link: &str, entity: &str) -> StoreResult<()>;
    /// The meeting links attached to the entity, each with its link row and the attaching meeting's
    /// external id, in link id order ([`attached_links_by_definition`]; a backend answers in one
    /// statement, the SQLite reader from its entity pages).
    fn list_attached_links(&mut self, entity: &str) -> StoreResult<Vec<AttachedLink>> {
        attached_links_by_definition(self, entity)
    }
    /// Records that a meeting taught an identifier; an identical row is kept once.
    fn insert_identifier_source(&mut self, source: &IdentifierSource) -> StoreResult<()>;
    /// Every meeting that taught this identifier.
    fn list_identifier_sources(
        &mut self,
        scheme: &IdentifierScheme,
        value: &str,
    ) -> StoreResult<Vec<IdentifierSource>>;
    fn list_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>>;
    /// What the identifiers `meeting` taught resolve to: `(group, entity)` for each of its identifier
    /// sources whose identifier resolves, sorted and distinct ([`entities_taught_by_definition`]; a
    /// backend answers in one statement instead of a lookup per source).
    fn list_entities_taught_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<(String, String)>> {
        entities_taught_by_definition(self, meeting)
    }
    fn delete_identifier_source(&mut self, source: &IdentifierSource) -> StoreResult<()>;
    /// Records that a meeting tagged a project or concept (deleted with the meeting).
    fn insert_meeting_tag(&mut self, tag: &MeetingTag) -> StoreResult<()>;
    fn list_meeting_tags(&mut self, meeting: &str) -> StoreResult<Vec<MeetingTag>>;

    // Write batching (benchmarks).
    /// Inserts a meeting's transcript segments in order, as `insert_segment` does one by one. A
    /// backend may write them in one statement: SQLite's full-text index flushes its pending terms
    /// at every statement that writes to it, so one statement per meeting writes one index segment
    /// instead of one per transcript segment.
    fn insert_segments(&mut self, segments: &[Segment]) -> StoreResult<()> {
        for segment in segments {
            self.insert_segment(segment)?;
        }
        Ok(())
    }

    // Write path: slot loads.
    /// Every evidence row of the claims of one slot (`list_claims_by_slot`), ordered by claim, then
    /// as `list_evidence_by_claim` orders them: what re-evaluating a slot reads, in one statement
    /// where the backend can.
    fn list_evidence_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Evidence>> {
        per_slot_claim(self, slot, |tx, claim| tx.list_evidence_by_claim(claim))
    }
    /// The rules' view of `list_evidence_by_slot`'s rows, in its order: what settling a slot and
    /// replaying its history read, without the rows' quotes, sources and positions.
    fn list_slot_facts(&mut self, slot: &SlotKey) -> StoreResult<Vec<SlotFact>> {
        Ok(self
            .list_evidence_by_slot(slot)?
            .iter()
            .map(SlotFact::of)
            .collect())
    }

    // Read path.
    /// The owner's graph adjacency held in memory for this snapshot, when the store keeps one (the
    /// SQLite reader of a file database); `None` means: answer the graph with the `list_*` reads.
    fn find_graph_index(&mut self) -> StoreResult<Option<std::sync::Arc<GraphIndex>>> {
        Ok(None)
    }
    /// The subject's active claims in `list_claims_by_subject` order (predicate, id), as the entity
    /// page shows them. A backend may read only these columns of only the active rows.
    fn list_projected_claims(&mut self, entity: &str) -> StoreResult<Vec<ProjectedClaim>> {
        Ok(self
            .list_claims_by_subject(entity)?
            .into_iter()
            .filter(|claim| claim.derived.status == ClaimStatus::Active)
            .map(|claim| ProjectedClaim {
                predicate: claim.predicate,
                value_text: claim.value_text,
                object_entity: claim.object_entity,
                context_entity: claim.context_entity,
                authority: claim.derived.authority,
                valid_from: claim.derived.valid_from,
                valid_to: claim.derived.valid_to,
                id: claim.id,
            })
            .collect())
    }
    /// The evidence of every claim whose subject is `entity`: each claim's rows in
    /// `list_evidence_by_claim` order, the claims in any order. A backend may read them in one
    /// statement.
    fn list_evidence_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Evidence>> {
        let mut rows = Vec::new();
        for claim in self.list_claims_by_subject(entity)? {
            rows.extend(self.list_evidence_by_claim(&claim.id)?);
        }
        Ok(rows)
    }
    /// `find_search_snippet` for several documents at once: `(doc, snippet)` for each of `docs` that
    /// matches `query`, in any order. A backend may compute them in one statement.
    fn list_search_snippets(
        &mut self,
        query: &lore_core::search::SearchQuery,
        docs: &[i64],
    ) -> StoreResult<Vec<(i64, String)>> {
        let mut snippets = Vec::with_capacity(docs.len());
        for &doc in docs {
            if let Some(snippet) = self.find_search_snippet(query, doc)? {
                snippets.push((doc, snippet));
            }
        }
        Ok(snippets)
    }

    // Write path: source deletion (L13), set-based where the backend can.
    /// Deletes the evidence rows with these ids (ids that do not exist, or belong to another owner,
    /// are skipped), as `delete_evidence` does one by one. A backend may do it in one statement.
    fn delete_evidence_many(&mut self, ids: &[String]) -> StoreResult<()> {
        for id in ids {
            self.delete_evidence(id)?;
        }
        Ok(())
    }
    /// Those of `claims` that have no evidence row left (whether or not the claim exists), in the
    /// order given: what `list_evidence_by_claim(..).is_empty()` answers for each, in one statement
    /// where the backend can.
    fn list_claims_without_evidence(&mut self, claims: &[String]) -> StoreResult<Vec<String>> {
        let mut unsupported = Vec::new();
        for claim in claims {
            if self.list_evidence_by_claim(claim)?.is_empty() {
                unsupported.push(claim.clone());
            }
        }
        Ok(unsupported)
    }
    /// The claims with these ids, in id order: what `find_claim` answers for each distinct id, the
    /// ids of no claim (or of another owner's) left out, in one statement where the backend can.
    fn find_claims(&mut self, ids: &[String]) -> StoreResult<Vec<Claim>> {
        let ids: std::collections::BTreeSet<&String> = ids.iter().collect();
        let mut claims = Vec::with_capacity(ids.len());
        for id in ids {
            claims.extend(self.find_claim(id)?);
        }
        Ok(claims)
    }
    /// One source of an identifier, the first in `list_identifier_sources` order, or `None`: whether
    /// anything still teaches it, without reading every source.
    fn find_identifier_source(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Option<IdentifierSource>> {
        Ok(self
            .list_identifier_sources(scheme, value)?
            .into_iter()
            .next())
    }
    /// Deletes every identifier source of `meeting` and returns them, in
    /// `list_identifier_sources_by_meeting` order (SQLite: one statement).
    fn delete_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        let sources = self.list_identifier_sources_by_meeting(meeting)?;
        for source in &sources {
            self.delete_identifier_source(source)?;
        }
        Ok(sources)
    }
    /// Of these `(scheme, value)` identifiers, the ones that some meeting still teaches (an
    /// identifier source names them), sorted and distinct (SQLite: one statement, where the default
    /// asks `find_identifier_source` for each).
    fn list_identifiers_still_taught(
        &mut self,
        identifiers: &[(String, String)],
    ) -> StoreResult<Vec<(String, String)>> {
        let mut taught = std::collections::BTreeSet::new();
        for (scheme, value) in identifiers {
            if self.find_identifier_source(scheme, value)?.is_some() {
                taught.insert((scheme.clone(), value.clone()));
            }
        }
        Ok(taught.into_iter().collect())
    }
    /// How much of a meeting is stored: its segments, notes, participants and evidence rows, as the
    /// lengths of `list_segments`, `list_notes`, `list_participants` and `list_evidence_by_meeting`.
    /// A backend may count them without reading the rows.
    fn meeting_counts(&mut self, meeting: &str) -> StoreResult<MeetingCounts> {
        Ok(MeetingCounts {
            segments: self.list_segments(meeting)?.len(),
            notes: self.list_notes(meeting)?.len(),
            participants: self.list_participants(meeting)?.len(),
            evidence: self.list_evidence_by_meeting(meeting)?.len(),
        })
    }
    /// A write that goes on after a unit of its work (one meeting of a batch) says so: a backend
    /// that indexes the search documents queued so far only when the transaction commits may index
    /// them now, beside the rest of the write, as long as what the transaction reads stays the same
    /// (the SQLite log store runs its full-text flush on the write's second lane). The default does
    /// nothing.
    fn index_queued_search(&mut self) -> StoreResult<()> {
        Ok(())
    }
    /// What an entity rebuild reads of its observations: `find_alias_bounds` and
    /// `list_observation_times` (the times in any order). A backend may read the names once for both.
    fn entity_observations(&mut self, entity: &str) -> StoreResult<EntityObservations> {
        Ok((
            self.find_alias_bounds(entity)?,
            self.list_observation_times(entity)?,
        ))
    }
    /// `entity_observations` with the times folded at `weight` (`ObservationSummary::of`). A
    /// backend that keeps the times in order may fold them without collecting them.
    fn entity_observation_summary(
        &mut self,
        entity: &str,
        weight: f64,
    ) -> StoreResult<FoldedObservations> {
        let (bounds, times) = self.entity_observations(entity)?;
        Ok((bounds, ObservationSummary::of(times, weight)))
    }
    /// The status history of every claim of one slot (`list_claims_by_slot`): by claim id, each
    /// claim's rows in `list_status_changes` order. A backend may read them in one statement.
    fn list_status_changes_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<StatusChange>> {
        per_slot_claim(self, slot, |tx, claim| tx.list_status_changes(claim))
    }
    /// The supersedes links of every claim of one slot: by claim id, each claim's links in
    /// `list_supersedes_links` order. A backend may read them in one statement.
    fn list_supersedes_links_by_slot(
        &mut self,
        slot: &SlotKey,
    ) -> StoreResult<Vec<SupersedesLink>> {
        per_slot_claim(self, slot, |tx, claim| tx.list_supersedes_links(claim))
    }
}

/// What a caught panic said (a write's, or a helper thread's).
pub fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}
