//! The log store's transaction: the knowledge tables answered from and written to the owner's
//! in-memory [`Knowledge`], everything else (meetings and their transcripts, notes, attachments,
//! extraction runs, tags, revisions, the full-text index) through the SQLite transaction beside it.
//!
//! Every method answers what the SQLite tables' store answers for the same rows: the same order
//! (the SQL's `ORDER BY`, text compared as bytes, a missing value first), the same conflicts
//! (duplicate keys and foreign keys), the same `NotFound` for updates of no row. The conformance
//! suite holds both to that. Changes to the knowledge are recorded twice as they are applied: the
//! encoded operation for the log, and its inverse for a rollback.

use std::collections::{BTreeMap, BTreeSet};

use lore_core::model::*;
use lore_core::Ts;
use rusqlite::params;

use super::codec::Writer;
use super::tables::{ClaimDerivedChange, EntityObserved, Key, Knowledge, Op, Row};
use super::OwnerState;
use crate::sqlite::{ConnRef, SqliteTx};
use crate::{StoreError, StoreResult, Tx};

/// What a write changed, kept until it commits or rolls back.
pub(crate) struct Journal {
    /// The operations to append to the log, encoded (`Writer::for_ops`).
    pub(crate) log: Writer,
    /// How many operations `log` holds.
    pub(crate) logged: usize,
    /// What undoes each change, in the order the changes were made.
    pub(crate) undo: Vec<Undo>,
}

impl Journal {
    /// An empty journal in the memory of an earlier one (`log`, `undo`: emptied here).
    pub(crate) fn reusing(log: Vec<u8>, mut undo: Vec<Undo>) -> Journal {
        undo.clear();
        Journal {
            log: Writer::for_ops(log),
            logged: 0,
            undo,
        }
    }
}

impl Default for Journal {
    fn default() -> Journal {
        Journal::reusing(Vec::new(), Vec::new())
    }
}

/// The inverse of one change to the owner's memory.
pub(crate) enum Undo {
    Knowledge(Op),
    /// A meeting row of the mirror, as it was (`None`: there was none).
    Meeting(String, Option<Meeting>),
}

/// The owner's state as a transaction sees it: shared for a read, exclusive for a write.
pub(crate) enum StateRef<'a> {
    Read(&'a OwnerState),
    Write(&'a mut OwnerState),
}

/// Where a transaction's SQLite snapshot stands. A write's is open from the start; a read opens one
/// only when it first reads a table (most reads answer from memory alone), and then checks that the
/// snapshot is the state memory holds.
pub(crate) enum Snapshot {
    Open,
    /// Not begun; memory is the state of this owner version.
    Pending(i64),
    /// Begun by this read (`ROLLBACK` ends it).
    Begun,
    /// Begun, and another connection had written this owner meanwhile: the read starts over.
    Stale,
}

pub(crate) struct LogTx<'a> {
    pub(crate) sql_tx: SqliteTx<'a>,
    pub(crate) snapshot: Snapshot,
    pub(crate) state: StateRef<'a>,
    pub(crate) journal: Journal,
    /// For a read: the store's graph indexes and the owner version the read sees.
    pub(crate) graphs: Option<(&'a crate::GraphBuilds, i64)>,
    /// For a read: the last entity page it asked for. A projection asks for one entity's page four
    /// times (the row, its claims, its links, its attached links); a read cannot change a page.
    pub(crate) last_page: Option<(String, std::sync::Arc<crate::sqlite::page_index::OnePage>)>,
    /// For a write: the helper thread its statements that answer nothing go to (`lane`); the
    /// connection is lent to it while it has them.
    pub(crate) lane: Option<super::lane::Lane<'a>>,
    /// The claim ids of the slot last asked for (`slot_claim_ids`): reading a slot asks for its
    /// claims, their evidence and their links in turn. Forgotten when a claim row changes.
    pub(crate) last_slot: LastSlot,
}

/// A slot and its claim ids, as `LogTx::slot_claim_ids` found them.
pub(crate) type LastSlot = std::cell::Cell<Option<(SlotKey, std::sync::Arc<[String]>)>>;

/// What a write in a read transaction gets (SQLite's own message for the same).
fn read_only() -> StoreError {
    StoreError::Backend("attempt to write a readonly database".into())
}

fn conflict(what: &str) -> StoreError {
    StoreError::Conflict(format!("FOREIGN KEY constraint failed ({what})"))
}

fn duplicate(what: &str, id: &str) -> StoreError {
    StoreError::Conflict(format!("UNIQUE constraint failed: {what} {id}"))
}

fn not_found(what: &str, id: &str) -> StoreError {
    StoreError::NotFound(format!("{what} {id}"))
}

/// An entity's search text, as the tables' triggers write it: its display name, then every other
/// name it was called by (distinct, in byte order) after ` · `.
pub(super) fn entity_search_body(k: &Knowledge, entity: &Entity) -> String {
    let display = entity.display_name();
    let others: Vec<&str> = k
        .aliases
        .get(&entity.id)
        .into_iter()
        .flat_map(|names| names.keys().map(String::as_str))
        .filter(|alias| *alias != display)
        .collect();
    if others.is_empty() {
        display.to_string()
    } else {
        format!("{display} · {}", others.join(","))
    }
}

impl SqliteTx<'_> {
    /// Writes (or rewrites) the search document of one knowledge row: an entity's names or a
    /// claim's text value. Its `at` stays empty: the log store answers it from memory.
    fn put_search_document(&self, kind: &str, reference: &str, body: &str) -> StoreResult<()> {
        self.exec(
            "INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body) \
             VALUES (?1, ?2, ?3, NULL, NULL, NULL, 'o' || hex(?1) || ' k' || ?2, ?4) \
             ON CONFLICT (owner, kind, ref) DO UPDATE SET body = excluded.body \
             WHERE body IS NOT excluded.body",
            params![self.owner, kind, reference, body],
        )
        .map(|_| ())
    }

    fn delete_search_document(&self, kind: &str, reference: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM search_docs WHERE owner = ?1 AND kind = ?2 AND ref = ?3",
            params![self.owner, kind, reference],
        )
        .map(|_| ())
    }

    /// How many segments and notes a meeting has (the part of `meeting_counts` the tables keep).
    fn meeting_text_counts(&self, meeting: &str) -> StoreResult<(usize, usize)> {
        let counts: (i64, i64) = self
            .one(
                "SELECT (SELECT count(*) FROM segments WHERE owner = ?1 AND meeting = ?2), \
                    (SELECT count(*) FROM notes WHERE owner = ?1 AND meeting = ?2)",
                params![self.owner, meeting],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?
            .unwrap_or_default();
        Ok((counts.0 as usize, counts.1 as usize))
    }
}

impl<'a> LogTx<'a> {
    /// The SQLite transaction, its snapshot begun if this read had not begun it yet.
    fn sql(&mut self) -> StoreResult<&mut SqliteTx<'a>> {
        if let (Some(lane), ConnRef::Lent) = (&self.lane, &self.sql_tx.connection) {
            self.sql_tx.connection = ConnRef::Locked(lane.take()?);
        }
        if let Snapshot::Pending(version) = self.snapshot {
            crate::sqlite::run(&self.sql_tx.connection, "BEGIN DEFERRED")?;
            self.snapshot = Snapshot::Begun;
            if super::owner_version(&self.sql_tx.connection, self.sql_tx.owner)? != version {
                self.snapshot = Snapshot::Stale;
                return Err(StoreError::Conflict(
                    "another connection wrote meanwhile; the read starts over".into(),
                ));
            }
        }
        Ok(&mut self.sql_tx)
    }

    /// Runs statements whose answer the write does not need: on the helper thread when the write
    /// has one (their error fails the write at its next statement or at its end), otherwise here.
    fn sql_write(
        &mut self,
        job: impl FnOnce(&mut SqliteTx<'_>) -> StoreResult<()> + Send + 'static,
    ) -> StoreResult<()> {
        self.writable()?;
        match &mut self.lane {
            Some(lane) => {
                self.sql_tx.connection = ConnRef::Lent;
                lane.send(Box::new(job))
            }
            None => job(self.sql()?),
        }
    }

    fn put_document(
        &mut self,
        kind: &'static str,
        reference: &str,
        body: String,
    ) -> StoreResult<()> {
        let reference = reference.to_string();
        self.sql_write(move |sql| sql.put_search_document(kind, &reference, &body))
    }

    fn drop_document(&mut self, kind: &'static str, reference: &str) -> StoreResult<()> {
        let reference = reference.to_string();
        self.sql_write(move |sql| sql.delete_search_document(kind, &reference))
    }
}

impl LogTx<'_> {
    fn k(&self) -> &Knowledge {
        match &self.state {
            StateRef::Read(state) => &state.knowledge,
            StateRef::Write(state) => &state.knowledge,
        }
    }

    fn state(&self) -> &OwnerState {
        match &self.state {
            StateRef::Read(state) => state,
            StateRef::Write(state) => state,
        }
    }

    fn writable(&mut self) -> StoreResult<&mut OwnerState> {
        match &mut self.state {
            StateRef::Write(state) => Ok(state),
            StateRef::Read(_) => Err(read_only()),
        }
    }

    /// Applies a change to the owner's knowledge, logging it and keeping its inverse.
    fn apply(&mut self, op: Op) -> StoreResult<()> {
        self.apply_logged(op).map(drop)
    }

    /// `apply`: whether the change had an inverse (a row changed), and the log's length before
    /// the change was logged.
    fn apply_logged(&mut self, op: Op) -> StoreResult<(bool, usize)> {
        let StateRef::Write(state) = &mut self.state else {
            return Err(read_only());
        };
        if matches!(
            op,
            Op::Put(Row::Claim(_)) | Op::Del(Key::Claim(_)) | Op::Reset
        ) {
            self.last_slot.set(None);
        }
        let mark = self.journal.log.bytes.len();
        self.journal.log.put(&op);
        self.journal.logged += 1;
        let inverse = state.knowledge.apply(op);
        let changed = inverse.is_some();
        if let Some(inverse) = inverse {
            self.journal.undo.push(Undo::Knowledge(inverse));
        }
        Ok((changed, mark))
    }

    fn put(&mut self, row: Row) -> StoreResult<()> {
        self.apply(Op::Put(row))
    }

    fn del(&mut self, key: Key) -> StoreResult<()> {
        self.remove_key(key).map(drop)
    }

    /// Deletes the row with this key, if one is stored (whether one was). The deletion is logged
    /// before it is applied (applying takes the key) and taken back out of the log when no row had
    /// the key: one lookup instead of a `contains` and then the removal.
    fn remove_key(&mut self, key: Key) -> StoreResult<bool> {
        let (removed, mark) = self.apply_logged(Op::Del(key))?;
        if !removed {
            self.journal.log.bytes.truncate(mark);
            self.journal.logged -= 1;
        }
        Ok(removed)
    }

    fn require_entity(&self, id: &str, what: &str) -> StoreResult<()> {
        match self.k().entities.contains_key(id) {
            true => Ok(()),
            false => Err(conflict(what)),
        }
    }

    /// Rewrites an entity's search document from its row and names (a new entity, a rename, a name
    /// gained or lost).
    fn sync_entity_document(&mut self, entity: &str) -> StoreResult<()> {
        let Some(row) = self.k().entities.get(entity) else {
            return Ok(());
        };
        let body = entity_search_body(self.k(), row);
        self.put_document("entity", entity, body)
    }

    fn claims_of<'k>(k: &'k Knowledge, ids: impl Iterator<Item = &'k String>) -> Vec<Claim> {
        ids.filter_map(|id| k.claims.get(id)).cloned().collect()
    }

    /// The ids of a slot's claims, in id order.
    fn slot_claim_ids(&self, slot: &SlotKey) -> std::sync::Arc<[String]> {
        if let Some((last, ids)) = self.last_slot.take() {
            let same = last == *slot;
            let found = same.then(|| ids.clone());
            self.last_slot.set(Some((last, ids)));
            if let Some(ids) = found {
                return ids;
            }
        }
        // The subject's claims are ordered by predicate, then id: only the slot's are walked, and
        // they come in id order.
        let from = (slot.predicate.clone(), String::new());
        let ids: std::sync::Arc<[String]> = self
            .k()
            .claims_by_subject
            .get_from(slot.subject.as_str(), &from)
            .take_while(|(predicate, _)| *predicate == slot.predicate)
            .filter(|(_, id)| {
                self.k()
                    .claims
                    .get(id)
                    .is_some_and(|c| c.context_entity == slot.context)
            })
            .map(|(_, id)| id.clone())
            .collect();
        self.last_slot.set(Some((slot.clone(), ids.clone())));
        ids
    }

    fn evidence_of_claim(&self, claim: &str) -> Vec<Evidence> {
        let k = self.k();
        k.evidence_by_claim
            .get(claim)
            .filter_map(|(_, _, id)| k.evidence.get(id))
            .cloned()
            .collect()
    }

    fn status_of_claim(&self, claim: &str) -> Vec<StatusChange> {
        self.k()
            .status
            .get(claim)
            .map(|rows| rows.values().cloned().collect())
            .unwrap_or_default()
    }

    fn supersedes_of_claim(&self, claim: &str) -> Vec<SupersedesLink> {
        self.k()
            .supersedes
            .get(claim)
            .map(|(target, evidence)| SupersedesLink {
                claim: claim.to_string(),
                target: target.clone(),
                evidence: evidence.clone(),
            })
            .collect()
    }

    fn delete_evidence_row(&mut self, id: &str) -> StoreResult<()> {
        let links: Vec<(String, String)> =
            self.k().supersedes_by_evidence.get(id).cloned().collect();
        for (claim, target) in links {
            self.del(Key::Supersedes(claim, target, id.to_string()))?;
        }
        self.del(Key::Evidence(id.to_string()))
    }

    /// Deletes a name row; the entity's search text loses the name when no meeting says it any
    /// more.
    fn delete_alias_row(&mut self, entity: &str, alias: &str, meeting: &str) -> StoreResult<()> {
        let key = Key::Alias(entity.to_string(), alias.to_string(), meeting.to_string());
        if self.remove_key(key)? && !self.says_name(entity, alias) {
            self.sync_entity_document(entity)?;
        }
        Ok(())
    }

    /// Whether some meeting calls the entity by this name (a name no meeting says any more is
    /// not kept).
    fn says_name(&self, entity: &str, alias: &str) -> bool {
        self.k()
            .aliases
            .get(entity)
            .is_some_and(|names| names.contains_key(alias))
    }

    fn participants_of(&self, meeting: &str) -> Vec<Participant> {
        self.k()
            .participants
            .get(meeting)
            .map(|rows| rows.values().cloned().collect())
            .unwrap_or_default()
    }

    fn meeting_started(&self, meeting: &str) -> Option<Ts> {
        self.state().meetings.get(meeting).map(|m| m.started_at)
    }

    fn put_meeting_mirror(&mut self, meeting: Option<Meeting>, id: &str) -> StoreResult<()> {
        let state = self.writable()?;
        // Attached links show meetings' external ids.
        state.knowledge.pages.clear();
        let old = match meeting {
            Some(meeting) => state.meetings.insert(meeting),
            None => state.meetings.remove(id),
        };
        self.journal.undo.push(Undo::Meeting(id.to_string(), old));
        Ok(())
    }
}

impl LogTx<'_> {
    /// For a read, the entity's page (built now when no read has since the entity last changed);
    /// `None` in a write, which reads the tables.
    fn page(&mut self, entity: &str) -> Option<std::sync::Arc<crate::sqlite::page_index::OnePage>> {
        let StateRef::Read(state) = &self.state else {
            return None;
        };
        if let Some((id, page)) = &self.last_page {
            if id == entity {
                return Some(page.clone());
            }
        }
        let k = &state.knowledge;
        let page = k.pages.get_or_build(entity, || {
            let page = crate::sqlite::page_index::Page {
                entity: k.entities.get(entity).cloned(),
                claims: projected_of(k, entity),
                links: links_of(k, entity),
                attached: attached_of(k, &state.meetings, entity),
            };
            crate::sqlite::page_index::OnePage::encode(entity, &page)
        });
        self.last_page = Some((entity.to_string(), page.clone()));
        Some(page)
    }
}

/// The subject's active claims in `(predicate, id)` order, as the projection reads them.
fn projected_of(k: &Knowledge, entity: &str) -> Vec<crate::ProjectedClaim> {
    k.claims_by_subject
        .get(entity)
        .filter_map(|(_, id)| k.claims.get(id))
        .filter(|claim| claim.derived.status == ClaimStatus::Active)
        .map(|claim| crate::ProjectedClaim {
            id: claim.id.clone(),
            predicate: claim.predicate.clone(),
            value_text: claim.value_text.clone(),
            object_entity: claim.object_entity.clone(),
            context_entity: claim.context_entity.clone(),
            authority: claim.derived.authority,
            valid_from: claim.derived.valid_from,
            valid_to: claim.derived.valid_to,
        })
        .collect()
}

/// The entity's resource links, oldest first.
fn links_of(k: &Knowledge, entity: &str) -> Vec<ResourceLink> {
    k.links_by_entity
        .get(entity)
        .filter_map(|(_, id)| k.links.get(id))
        .cloned()
        .collect()
}

/// The meeting links attached to the entity, each with its link row (one of the attaching meeting's
/// links) and the meeting's external id, by link id.
fn attached_of(
    k: &Knowledge,
    meetings: &super::Meetings,
    entity: &str,
) -> Vec<crate::AttachedLink> {
    let mut found = Vec::new();
    for link_id in k.attachments_by_entity.get(entity) {
        let Some(attachment) = k
            .link_attachments
            .get(&(link_id.clone(), entity.to_string()))
        else {
            continue;
        };
        let Some(link) = k
            .links
            .get(link_id)
            .filter(|link| link.meeting.as_deref() == Some(attachment.meeting.as_str()))
        else {
            continue;
        };
        let meeting_external_id = meetings
            .get(&attachment.meeting)
            .map_or_else(|| attachment.meeting.clone(), |m| m.external_id.clone());
        found.push(crate::AttachedLink {
            link: link.clone(),
            attachment: attachment.clone(),
            meeting_external_id,
        });
    }
    found
}

/// Tasks in `ORDER BY due_at, created_at, id` (a missing due date first).
fn by_due(tasks: &mut [Task]) {
    tasks.sort_by(|a, b| (a.due_at, a.created_at, &a.id).cmp(&(b.due_at, b.created_at, &b.id)));
}

fn by_created(tasks: &mut [Task]) {
    tasks.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
}

impl Tx for LogTx<'_> {
    // Sources: the tables, with the meetings mirrored in memory.

    fn upsert_series(&mut self, series: &MeetingSeries) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.upsert_series(series)
    }

    fn find_series(&mut self, id: &str) -> StoreResult<Option<MeetingSeries>> {
        self.sql()?.find_series(id)
    }

    fn insert_meeting(&mut self, meeting: &Meeting) -> StoreResult<()> {
        let row = meeting.clone();
        self.sql_write(move |sql| sql.insert_meeting(&row))?;
        self.put_meeting_mirror(Some(meeting.clone()), &meeting.id)
    }

    fn find_meeting(&mut self, id: &str) -> StoreResult<Option<Meeting>> {
        Ok(self.state().meetings.get(id).cloned())
    }

    fn find_meeting_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Meeting>> {
        Ok(self.state().meetings.by_external_id(external_id).cloned())
    }

    fn list_meetings(&mut self) -> StoreResult<Vec<Meeting>> {
        Ok(self.state().meetings.in_order())
    }

    fn delete_meeting(&mut self, id: &str) -> StoreResult<()> {
        let meeting = id.to_string();
        self.sql_write(move |sql| sql.delete_meeting(&meeting))?;
        if self.state().meetings.get(id).is_some() {
            self.put_meeting_mirror(None, id)?;
        }
        // The participants went with the meeting (`ON DELETE CASCADE` in the tables).
        let indexes: Vec<i64> = self
            .k()
            .participants
            .get(id)
            .map(|rows| rows.keys().copied().collect())
            .unwrap_or_default();
        for idx in indexes {
            self.del(Key::Participant(id.to_string(), idx))?;
        }
        Ok(())
    }

    fn insert_participant(&mut self, participant: &Participant) -> StoreResult<()> {
        self.writable()?;
        if self.state().meetings.get(&participant.meeting).is_none() {
            return Err(conflict("participant of no meeting"));
        }
        let key = Key::Participant(participant.meeting.clone(), participant.idx);
        if self.k().contains(&key) {
            return Err(duplicate(
                "participants",
                &format!("{}/{}", participant.meeting, participant.idx),
            ));
        }
        self.put(Row::Participant(Box::new(participant.clone())))
    }

    fn list_participants(&mut self, meeting: &str) -> StoreResult<Vec<Participant>> {
        Ok(self.participants_of(meeting))
    }

    fn insert_segment(&mut self, segment: &Segment) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.insert_segment(segment)
    }

    fn list_segments(&mut self, meeting: &str) -> StoreResult<Vec<Segment>> {
        self.sql()?.list_segments(meeting)
    }

    fn insert_note(&mut self, note: &Note) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.insert_note(note)
    }

    fn find_note(&mut self, id: &str) -> StoreResult<Option<Note>> {
        self.sql()?.find_note(id)
    }

    fn list_notes(&mut self, meeting: &str) -> StoreResult<Vec<Note>> {
        self.sql()?.list_notes(meeting)
    }

    fn delete_note(&mut self, id: &str) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.delete_note(id)
    }

    fn insert_attachment(&mut self, attachment: &Attachment) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.insert_attachment(attachment)
    }

    fn find_attachment(&mut self, id: &str) -> StoreResult<Option<Attachment>> {
        self.sql()?.find_attachment(id)
    }

    fn list_attachments(&mut self, meeting: &str) -> StoreResult<Vec<Attachment>> {
        self.sql()?.list_attachments(meeting)
    }

    fn delete_attachment(&mut self, id: &str) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.delete_attachment(id)
    }

    fn count_attachments_with_sha256(&mut self, sha256: &str) -> StoreResult<i64> {
        self.sql()?.count_attachments_with_sha256(sha256)
    }

    // Entities.

    fn upsert_entity(&mut self, entity: &Entity) -> StoreResult<()> {
        let renamed = match self.k().entities.get(&entity.id) {
            None => true,
            Some(stored) => {
                stored.canonical_name != entity.canonical_name
                    || stored.manual_name != entity.manual_name
            }
        };
        self.put(Row::Entity(Box::new(entity.clone())))?;
        if renamed {
            self.sync_entity_document(&entity.id)?;
        }
        Ok(())
    }

    fn update_entity_observed(&mut self, id: &str, observed: &Observed) -> StoreResult<()> {
        if !self.k().entities.contains_key(id) {
            // The tables' UPDATE of no row changes nothing.
            return self.writable().map(|_| ());
        }
        self.apply(Op::Observe(Box::new(EntityObserved {
            entity: id.to_string(),
            observed: *observed,
        })))
    }

    fn find_entity(&mut self, id: &str) -> StoreResult<Option<Entity>> {
        if let Some(page) = self.page(id) {
            if let Some(found) = page.entity() {
                return Ok(found);
            }
        }
        Ok(self.k().entities.get(id).cloned())
    }

    fn find_entity_header(&mut self, id: &str) -> StoreResult<Option<EntityHeader>> {
        Ok(self.k().entities.get(id).map(Entity::header))
    }

    fn find_entity_display_name(&mut self, id: &str) -> StoreResult<Option<String>> {
        Ok(self
            .k()
            .entities
            .get(id)
            .map(|entity| entity.display_name().to_string()))
    }

    fn entity_has_email(&mut self, id: &str, email: &str) -> StoreResult<Option<bool>> {
        Ok(self
            .k()
            .entities
            .get(id)
            .map(|entity| entity.emails.iter().any(|e| e == email)))
    }

    fn set_entity_redirect(&mut self, old_id: &str, new_id: &str) -> StoreResult<()> {
        self.put(Row::Redirect {
            old: old_id.to_string(),
            new: new_id.to_string(),
        })
    }

    fn find_entity_redirect(&mut self, old_id: &str) -> StoreResult<Option<String>> {
        Ok(self.k().redirects.get(old_id).cloned())
    }

    fn list_entity_redirects(&mut self) -> StoreResult<Vec<(String, String)>> {
        Ok(self
            .k()
            .redirects
            .iter()
            .map(|(old, new)| (old.clone(), new.clone()))
            .collect())
    }

    fn list_entities(&mut self) -> StoreResult<Vec<Entity>> {
        let mut entities: Vec<Entity> = self.k().entities.values().cloned().collect();
        entities.sort_by(|a, b| {
            (a.kind.as_str(), &a.canonical_name, &a.id).cmp(&(
                b.kind.as_str(),
                &b.canonical_name,
                &b.id,
            ))
        });
        Ok(entities)
    }

    fn delete_entity(&mut self, id: &str) -> StoreResult<()> {
        self.writable()?;
        let k = self.k();
        if !k.entities.contains_key(id) {
            return Ok(());
        }
        if k.claims_by_subject.has(id) || k.claims_by_object.has(id) || k.claims_by_context.has(id)
        {
            return Err(conflict("claims still name the entity"));
        }
        // Its identifiers and names go with it (`ON DELETE CASCADE`).
        let identifiers: Vec<(String, String)> = k.identifiers_by_entity.get(id).cloned().collect();
        let names: Vec<(String, String)> = k
            .aliases
            .get(id)
            .into_iter()
            .flatten()
            .flat_map(|(alias, meetings)| {
                meetings
                    .keys()
                    .map(move |meeting| (alias.clone(), meeting.clone()))
            })
            .collect();
        for (scheme, value) in identifiers {
            self.del(Key::Identifier(scheme, value))?;
        }
        for (alias, meeting) in names {
            self.del(Key::Alias(id.to_string(), alias, meeting))?;
        }
        self.del(Key::Entity(id.to_string()))?;
        self.drop_document("entity", id)
    }

    fn insert_identifier(&mut self, scheme: &str, value: &str, entity: &str) -> StoreResult<()> {
        self.writable()?;
        if self
            .k()
            .identifiers
            .contains_key(&(scheme.to_string(), value.to_string()))
        {
            return Ok(());
        }
        self.require_entity(entity, "identifier of no entity")?;
        self.put(Row::Identifier {
            scheme: scheme.to_string(),
            value: value.to_string(),
            entity: entity.to_string(),
        })
    }

    fn find_entity_by_identifier(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Option<String>> {
        Ok(self
            .k()
            .identifiers
            .get(&(scheme.to_string(), value.to_string()))
            .cloned())
    }

    fn insert_alias(&mut self, alias: &Alias) -> StoreResult<()> {
        self.writable()?;
        let key = Key::Alias(
            alias.entity.clone(),
            alias.alias.clone(),
            alias.meeting.clone(),
        );
        if self.k().contains(&key) {
            return Ok(());
        }
        self.require_entity(&alias.entity, "name of no entity")?;
        let new_name = !self.says_name(&alias.entity, &alias.alias);
        self.put(Row::Alias(alias.clone()))?;
        if new_name {
            self.sync_entity_document(&alias.entity)?;
        }
        Ok(())
    }

    fn list_aliases(&mut self, entity: &str) -> StoreResult<Vec<Alias>> {
        let mut aliases: Vec<Alias> = self
            .k()
            .aliases
            .get(entity)
            .into_iter()
            .flatten()
            .flat_map(|(alias, meetings)| {
                meetings.iter().map(move |(meeting, at)| Alias {
                    entity: entity.to_string(),
                    alias: alias.clone(),
                    meeting: meeting.clone(),
                    observed_at: *at,
                })
            })
            .collect();
        aliases.sort_by(|a, b| {
            (a.observed_at, &a.alias, &a.meeting).cmp(&(b.observed_at, &b.alias, &b.meeting))
        });
        Ok(aliases)
    }

    fn list_entities_by_alias_key(&mut self, alias_key: &str) -> StoreResult<Vec<String>> {
        Ok(self
            .k()
            .alias_keys
            .get(alias_key)
            .map(|entities| entities.keys().cloned().collect())
            .unwrap_or_default())
    }

    fn delete_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>> {
        self.writable()?;
        let rows: Vec<(String, String)> =
            self.k().aliases_by_meeting.get(meeting).cloned().collect();
        let mut entities: Vec<String> = Vec::with_capacity(rows.len());
        for (entity, alias) in rows {
            self.delete_alias_row(&entity, &alias, meeting)?;
            entities.push(entity);
        }
        entities.sort();
        entities.dedup();
        Ok(entities)
    }

    fn count_entity_references(&mut self, entity: &str) -> StoreResult<i64> {
        let k = self.k();
        let kinds = [
            k.claims_by_subject.has(entity),
            k.claims_by_object.has(entity),
            k.claims_by_context.has(entity),
            k.aliases.contains_key(entity),
            k.participants_by_person.has(entity),
            k.tasks_by_entity.has(entity),
            k.links_by_entity.has(entity),
        ];
        Ok(kinds.iter().filter(|found| **found).count() as i64)
    }

    // Claims and evidence.

    fn insert_claim(&mut self, claim: &Claim) -> StoreResult<()> {
        self.writable()?;
        if self.k().claims.contains_key(&claim.id) {
            return Err(duplicate("claims", &claim.id));
        }
        self.require_claim_entities(claim)?;
        self.put(Row::Claim(Box::new(claim.clone())))?;
        if let Some(value) = &claim.value_text {
            self.put_document("claim", &claim.id, value.clone())?;
        }
        Ok(())
    }

    fn find_claim(&mut self, id: &str) -> StoreResult<Option<Claim>> {
        Ok(self.k().claims.get(id).cloned())
    }

    fn update_claim_derived(&mut self, id: &str, derived: &ClaimDerived) -> StoreResult<()> {
        self.writable()?;
        if !self.k().claims.contains_key(id) {
            return Err(not_found("claim", id));
        }
        self.apply(Op::Derive(Box::new(ClaimDerivedChange {
            claim: id.to_string(),
            derived: derived.clone(),
        })))
    }

    fn update_claim_retracted(&mut self, id: &str, retracted_at: Option<Ts>) -> StoreResult<()> {
        self.writable()?;
        let Some(mut claim) = self.k().claims.get(id).cloned() else {
            return Err(not_found("claim", id));
        };
        claim.retracted_at = retracted_at;
        self.put(Row::Claim(Box::new(claim)))
    }

    fn delete_claim(&mut self, id: &str) -> StoreResult<()> {
        self.writable()?;
        if !self.k().claims.contains_key(id) {
            return Ok(());
        }
        // Its evidence (and their supersedes links) and its status history go with it.
        let evidence: Vec<String> = self
            .k()
            .evidence_by_claim
            .get(id)
            .map(|(_, _, evidence)| evidence.clone())
            .collect();
        for evidence in evidence {
            self.delete_evidence_row(&evidence)?;
        }
        let seqs: Vec<i64> = self
            .k()
            .status
            .get(id)
            .map(|rows| rows.keys().copied().collect())
            .unwrap_or_default();
        for seq in seqs {
            self.del(Key::Status(id.to_string(), seq))?;
        }
        self.del(Key::Claim(id.to_string()))?;
        self.drop_document("claim", id)
    }

    fn list_claims_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Claim>> {
        let ids = self.slot_claim_ids(slot);
        Ok(Self::claims_of(self.k(), ids.iter()))
    }

    fn list_claims_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Claim>> {
        let k = self.k();
        Ok(Self::claims_of(
            k,
            k.claims_by_subject.get(entity).map(|(_, id)| id),
        ))
    }

    fn visit_claims_by_subject(
        &mut self,
        entity: &str,
        visit: &mut dyn FnMut(&[&Claim]),
    ) -> StoreResult<()> {
        let k = self.k();
        let claims: Vec<&Claim> = k
            .claims_by_subject
            .get(entity)
            .filter_map(|(_, id)| k.claims.get(id))
            .collect();
        visit(&claims);
        Ok(())
    }

    fn list_claims_mentioning(&mut self, entity: &str) -> StoreResult<Vec<Claim>> {
        let k = self.k();
        let ids: BTreeSet<&String> = k
            .claims_by_object
            .get(entity)
            .chain(k.claims_by_context.get(entity))
            .collect();
        let mut claims = Self::claims_of(k, ids.into_iter());
        claims.sort_by(|a, b| (&a.predicate, &a.id).cmp(&(&b.predicate, &b.id)));
        Ok(claims)
    }

    fn list_claims(&mut self) -> StoreResult<Vec<Claim>> {
        let mut claims: Vec<Claim> = self.k().claims.values().cloned().collect();
        claims.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(claims)
    }

    fn insert_evidence(&mut self, evidence: &Evidence) -> StoreResult<bool> {
        self.writable()?;
        if self.k().evidence.contains_key(&evidence.id) {
            return Ok(false);
        }
        if !self.k().claims.contains_key(&evidence.claim) {
            return Err(conflict("evidence of no claim"));
        }
        self.put(Row::Evidence(Box::new(evidence.clone())))?;
        Ok(true)
    }

    fn list_evidence_by_claim(&mut self, claim: &str) -> StoreResult<Vec<Evidence>> {
        Ok(self.evidence_of_claim(claim))
    }

    fn list_evidence_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Evidence>> {
        let k = self.k();
        Ok(k.evidence_by_meeting
            .get(meeting)
            .filter_map(|id| k.evidence.get(id))
            .cloned()
            .collect())
    }

    fn list_evidence_by_source(
        &mut self,
        kind: SourceKind,
        source_id: &str,
    ) -> StoreResult<Vec<Evidence>> {
        let k = self.k();
        Ok(k.evidence_by_source
            .get(&(kind, source_id.to_string()))
            .filter_map(|id| k.evidence.get(id))
            .cloned()
            .collect())
    }

    fn list_evidence(&mut self) -> StoreResult<Vec<Evidence>> {
        let mut rows: Vec<Evidence> = self.k().evidence.values().cloned().collect();
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(rows)
    }

    fn delete_evidence(&mut self, id: &str) -> StoreResult<()> {
        self.writable()?;
        self.delete_evidence_row(id)
    }

    fn insert_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()> {
        self.writable()?;
        let key = Key::Supersedes(
            link.claim.clone(),
            link.target.clone(),
            link.evidence.clone(),
        );
        if self.k().contains(&key) {
            return Ok(());
        }
        if !self.k().evidence.contains_key(&link.evidence) {
            return Err(conflict("supersedes link of no evidence"));
        }
        self.put(Row::Supersedes(link.clone()))
    }

    fn list_supersedes_links(&mut self, claim: &str) -> StoreResult<Vec<SupersedesLink>> {
        Ok(self.supersedes_of_claim(claim))
    }

    fn insert_status_change(&mut self, change: &StatusChange) -> StoreResult<()> {
        self.writable()?;
        if !self.k().claims.contains_key(&change.claim) {
            return Err(conflict("status of no claim"));
        }
        let seq = self
            .k()
            .status
            .get(&change.claim)
            .and_then(|rows| rows.keys().next_back().copied())
            .unwrap_or(0)
            + 1;
        self.put(Row::Status {
            claim: change.claim.clone(),
            seq,
            change: Box::new(change.clone()),
        })
    }

    fn list_status_changes(&mut self, claim: &str) -> StoreResult<Vec<StatusChange>> {
        Ok(self.status_of_claim(claim))
    }

    // Links, tasks, runs, revisions, suggestions, tags.

    fn upsert_resource_link(&mut self, link: &ResourceLink) -> StoreResult<()> {
        let row = match self.k().links.get(&link.id) {
            // `ON CONFLICT DO UPDATE`: the stored row keeps its columns but for the title (a new
            // one wins) and the first and last times it was seen (widened).
            Some(stored) => {
                let mut merged = stored.clone();
                merged.title = link.title.clone().or_else(|| stored.title.clone());
                merged.first_seen_at = stored.first_seen_at.min(link.first_seen_at);
                merged.last_seen_at = stored.last_seen_at.max(link.last_seen_at);
                merged
            }
            None => link.clone(),
        };
        self.put(Row::Link(Box::new(row)))
    }

    fn list_resource_links_by_entity(&mut self, entity: &str) -> StoreResult<Vec<ResourceLink>> {
        if let Some(links) = self.page(entity).and_then(|page| page.links()) {
            return Ok(links);
        }
        Ok(links_of(self.k(), entity))
    }

    fn list_resource_links_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<ResourceLink>> {
        let k = self.k();
        Ok(k.links_by_meeting
            .get(meeting)
            .filter_map(|(_, id)| k.links.get(id))
            .cloned()
            .collect())
    }

    fn delete_resource_link(&mut self, id: &str) -> StoreResult<()> {
        self.del(Key::Link(id.to_string()))
    }

    fn insert_task(&mut self, task: &Task) -> StoreResult<()> {
        self.put(Row::Task(Box::new(task.clone())))
    }

    fn list_tasks_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Task>> {
        let k = self.k();
        let mut tasks: Vec<Task> = k
            .tasks_by_meeting
            .get(meeting)
            .filter_map(|id| k.tasks.get(id))
            .cloned()
            .collect();
        by_created(&mut tasks);
        Ok(tasks)
    }

    fn list_tasks_by_entity(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        let k = self.k();
        let mut tasks: Vec<Task> = k
            .tasks_by_entity
            .get(entity)
            .filter_map(|id| k.tasks.get(id))
            .cloned()
            .collect();
        by_created(&mut tasks);
        Ok(tasks)
    }

    fn delete_task(&mut self, id: &str) -> StoreResult<()> {
        self.del(Key::Task(id.to_string()))
    }

    fn insert_run(&mut self, run: &ExtractionRun) -> StoreResult<()> {
        let run = run.clone();
        self.sql_write(move |sql| sql.insert_run(&run))
    }

    fn find_run(
        &mut self,
        meeting: &str,
        content_hash: &str,
        extractor: &str,
    ) -> StoreResult<Option<ExtractionRun>> {
        self.sql()?.find_run(meeting, content_hash, extractor)
    }

    fn delete_runs_by_meeting(&mut self, meeting: &str) -> StoreResult<()> {
        let meeting = meeting.to_string();
        self.sql_write(move |sql| sql.delete_runs_by_meeting(&meeting))
    }

    fn insert_revision(&mut self, revision: &Revision) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.insert_revision(revision)
    }

    fn insert_encoded_revision(&mut self, revision: &crate::EncodedRevision) -> StoreResult<()> {
        let revision = revision.clone();
        self.sql_write(move |sql| sql.insert_encoded_revision(&revision))
    }

    fn find_revision(&mut self, id: &str) -> StoreResult<Option<Revision>> {
        self.sql()?.find_revision(id)
    }

    fn replace_revision_snapshots(
        &mut self,
        id: &str,
        before: &serde_json::Value,
        after: &serde_json::Value,
    ) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.replace_revision_snapshots(id, before, after)
    }

    fn list_revisions(&mut self, limit: usize) -> StoreResult<Vec<Revision>> {
        self.sql()?.list_revisions(limit)
    }

    fn list_revisions_naming_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>> {
        self.sql()?.list_revisions_naming_meeting(meeting)
    }

    fn upsert_suggestion(&mut self, suggestion: &Suggestion) -> StoreResult<()> {
        self.put(Row::Suggestion(Box::new(suggestion.clone())))
    }

    fn find_suggestion(&mut self, id: &str) -> StoreResult<Option<Suggestion>> {
        Ok(self.k().suggestions.get(id).cloned())
    }

    fn list_suggestions(&mut self) -> StoreResult<Vec<Suggestion>> {
        let mut suggestions: Vec<Suggestion> = self.k().suggestions.values().cloned().collect();
        suggestions.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(suggestions)
    }

    fn delete_suggestion(&mut self, id: &str) -> StoreResult<()> {
        self.del(Key::Suggestion(id.to_string()))
    }

    fn upsert_tag(&mut self, tag: &Tag) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.upsert_tag(tag)
    }

    fn list_tags(&mut self) -> StoreResult<Vec<Tag>> {
        self.sql()?.list_tags()
    }

    fn list_runs(&mut self, meeting: &str) -> StoreResult<Vec<ExtractionRun>> {
        self.sql()?.list_runs(meeting)
    }

    // Read side.

    fn search_candidates(
        &mut self,
        query: &lore_core::search::SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<crate::SearchCandidate>> {
        let mut candidates = self.sql()?.search_candidates(query, kind, limit)?;
        // An entity's or a claim's latest observation lives in memory, not in its document.
        let k = self.k();
        for candidate in &mut candidates {
            match candidate.kind.as_str() {
                "entity" => {
                    candidate.at = k
                        .entities
                        .get(&candidate.reference)
                        .and_then(|e| e.last_observed_at.or(e.first_observed_at));
                }
                "claim" => {
                    candidate.at = k
                        .claims
                        .get(&candidate.reference)
                        .map(|c| c.derived.last_observed_at.unwrap_or(c.recorded_at));
                }
                _ => {}
            }
        }
        Ok(candidates)
    }

    fn find_search_snippet(
        &mut self,
        query: &lore_core::search::SearchQuery,
        doc: i64,
    ) -> StoreResult<Option<String>> {
        self.sql()?.find_search_snippet(query, doc)
    }

    fn list_status_as_of(&mut self, subject: &str, at: Ts) -> StoreResult<Vec<StatusChange>> {
        let k = self.k();
        let mut claims: Vec<&String> = k.claims_by_subject.get(subject).map(|(_, id)| id).collect();
        claims.sort();
        let mut rows = Vec::new();
        for claim in claims {
            let latest = k.status.get(claim).and_then(|history| {
                history
                    .values()
                    .rev()
                    .find(|change| change.recorded_at <= at)
            });
            rows.extend(latest.cloned());
        }
        Ok(rows)
    }

    fn replace_status_history(&mut self, claim: &str, rows: &[StatusChange]) -> StoreResult<()> {
        self.writable()?;
        // The history ends numbered 1..=rows.len(). A stored row that already holds its new place
        // stays; one whose place holds another row is written over (one operation, not a removal
        // and an insertion: a replay that takes a row out of the middle shifts every later one);
        // the places past the end go.
        let (stale, changed): (Vec<i64>, Vec<usize>) = match self.k().status.get(claim) {
            Some(history) => (
                history
                    .keys()
                    .filter(|seq| !(1..=rows.len() as i64).contains(seq))
                    .copied()
                    .collect(),
                (0..rows.len())
                    .filter(|index| history.get(&(*index as i64 + 1)) != Some(&rows[*index]))
                    .collect(),
            ),
            None => (Vec::new(), (0..rows.len()).collect()),
        };
        for seq in stale {
            self.del(Key::Status(claim.to_string(), seq))?;
        }
        if !changed.is_empty() && !self.k().claims.contains_key(claim) {
            return Err(conflict("status of no claim"));
        }
        for index in changed {
            self.put(Row::Status {
                claim: claim.to_string(),
                seq: index as i64 + 1,
                change: Box::new(rows[index].clone()),
            })?;
        }
        Ok(())
    }

    fn list_claims_by_predicate(&mut self, predicate: &str) -> StoreResult<Vec<Claim>> {
        let k = self.k();
        Ok(Self::claims_of(k, k.claims_by_predicate.get(predicate)))
    }

    fn list_claims_linking(&mut self, entity: &str, limit: usize) -> StoreResult<Vec<Claim>> {
        let k = self.k();
        let mut ids: BTreeSet<&String> = k
            .claims_by_subject
            .get(entity)
            .map(|(_, id)| id)
            .filter(|id| {
                k.claims
                    .get(*id)
                    .is_some_and(|c| c.object_entity.is_some() || c.context_entity.is_some())
            })
            .collect();
        ids.extend(k.claims_by_object.get(entity));
        ids.extend(k.claims_by_context.get(entity));
        let mut claims: Vec<&Claim> = ids.into_iter().filter_map(|id| k.claims.get(id)).collect();
        claims.sort_by(|a, b| {
            let active = |c: &Claim| c.derived.status != ClaimStatus::Active;
            (
                active(a),
                std::cmp::Reverse(a.derived.last_observed_at),
                &a.id,
            )
                .cmp(&(
                    active(b),
                    std::cmp::Reverse(b.derived.last_observed_at),
                    &b.id,
                ))
        });
        Ok(claims.into_iter().take(limit).cloned().collect())
    }

    fn list_meeting_links_by_entity(
        &mut self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<crate::MeetingLink>> {
        let k = self.k();
        let mut links: BTreeSet<(String, &'static str)> = BTreeSet::new();
        for (meeting, _) in k.participants_by_person.get(entity) {
            links.insert((meeting.clone(), "attended"));
        }
        let claims = k
            .claims_by_subject
            .get(entity)
            .map(|(_, id)| id)
            .chain(k.claims_by_object.get(entity));
        for claim in claims {
            for (_, _, id) in k.evidence_by_claim.get(claim.as_str()) {
                if let Some(meeting) = k.evidence.get(id).and_then(|e| e.meeting.as_ref()) {
                    links.insert((meeting.clone(), "mentioned_in"));
                }
            }
        }
        let mut links: Vec<(Option<Ts>, String, &'static str)> = links
            .into_iter()
            .map(|(meeting, relation)| (self.meeting_started(&meeting), meeting, relation))
            .collect();
        // `ORDER BY started_at DESC, meeting, relation`: a meeting with no row (NULL) last.
        links.sort_by(|a, b| {
            std::cmp::Reverse(a.0)
                .cmp(&std::cmp::Reverse(b.0))
                .then_with(|| a.1.cmp(&b.1))
                .then_with(|| a.2.cmp(b.2))
        });
        Ok(links
            .into_iter()
            .take(limit)
            .map(|(_, meeting, relation)| crate::MeetingLink {
                meeting,
                entity: entity.to_string(),
                relation: relation.to_string(),
            })
            .collect())
    }

    fn list_meeting_links_by_meeting(
        &mut self,
        meeting: &str,
        limit: usize,
    ) -> StoreResult<Vec<crate::MeetingLink>> {
        let k = self.k();
        let mut links: BTreeSet<(String, &'static str)> = BTreeSet::new();
        for participant in k
            .participants
            .get(meeting)
            .into_iter()
            .flat_map(|rows| rows.values())
        {
            if let Some(person) = &participant.person_entity {
                links.insert((person.clone(), "attended"));
            }
        }
        for id in k.evidence_by_meeting.get(meeting) {
            let Some(claim) = k.evidence.get(id).and_then(|e| k.claims.get(&e.claim)) else {
                continue;
            };
            links.insert((claim.subject.clone(), "mentioned_in"));
            if let Some(object) = &claim.object_entity {
                links.insert((object.clone(), "mentioned_in"));
            }
        }
        Ok(links
            .into_iter()
            .take(limit)
            .map(|(entity, relation)| crate::MeetingLink {
                meeting: meeting.to_string(),
                entity,
                relation: relation.to_string(),
            })
            .collect())
    }

    fn list_observation_times(&mut self, entity: &str) -> StoreResult<Vec<Ts>> {
        Ok(self.entity_observations(entity)?.1)
    }

    fn list_tasks(&mut self) -> StoreResult<Vec<Task>> {
        let mut tasks: Vec<Task> = self.k().tasks.values().cloned().collect();
        by_due(&mut tasks);
        Ok(tasks)
    }

    fn list_tasks_by_assignee(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        let k = self.k();
        let mut tasks: Vec<Task> = k
            .tasks_by_entity
            .get(entity)
            .filter_map(|id| k.tasks.get(id))
            .filter(|task| task.assignee.as_deref() == Some(entity))
            .cloned()
            .collect();
        by_due(&mut tasks);
        Ok(tasks)
    }

    // Identity: merge, split, undo, participants, tasks.

    fn upsert_claim(&mut self, claim: &Claim) -> StoreResult<()> {
        self.writable()?;
        self.require_claim_entities(claim)?;
        let new = !self.k().claims.contains_key(&claim.id);
        self.put(Row::Claim(Box::new(claim.clone())))?;
        // The tables' trigger writes a claim's document when the row is inserted only.
        if let (true, Some(value)) = (new, &claim.value_text) {
            self.put_document("claim", &claim.id, value.clone())?;
        }
        Ok(())
    }

    fn delete_alias(&mut self, alias: &Alias) -> StoreResult<()> {
        self.writable()?;
        self.delete_alias_row(&alias.entity, &alias.alias, &alias.meeting)
    }

    fn list_identifiers_by_entity(&mut self, entity: &str) -> StoreResult<Vec<(String, String)>> {
        Ok(self
            .k()
            .identifiers_by_entity
            .get(entity)
            .cloned()
            .collect())
    }

    fn delete_identifier(&mut self, scheme: &str, value: &str) -> StoreResult<()> {
        self.del(Key::Identifier(scheme.to_string(), value.to_string()))
    }

    fn list_participants_by_person(&mut self, entity: &str) -> StoreResult<Vec<Participant>> {
        let k = self.k();
        Ok(k.participants_by_person
            .get(entity)
            .filter_map(|(meeting, idx)| k.participants.get(meeting)?.get(idx))
            .cloned()
            .collect())
    }

    fn update_participant(&mut self, participant: &Participant) -> StoreResult<()> {
        self.writable()?;
        let key = Key::Participant(participant.meeting.clone(), participant.idx);
        if !self.k().contains(&key) {
            return Err(not_found(
                "participant",
                &format!("{}/{}", participant.meeting, participant.idx),
            ));
        }
        self.put(Row::Participant(Box::new(participant.clone())))
    }

    fn delete_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()> {
        self.del(Key::Supersedes(
            link.claim.clone(),
            link.target.clone(),
            link.evidence.clone(),
        ))
    }

    fn find_task(&mut self, id: &str) -> StoreResult<Option<Task>> {
        Ok(self.k().tasks.get(id).cloned())
    }

    fn upsert_participant_mapping(&mut self, mapping: &ParticipantMapping) -> StoreResult<()> {
        self.put(Row::Mapping(Box::new(mapping.clone())))
    }

    fn list_participant_mappings(&mut self, meeting: &str) -> StoreResult<Vec<ParticipantMapping>> {
        Ok(self
            .k()
            .mappings
            .get(meeting)
            .map(|rows| rows.values().cloned().collect())
            .unwrap_or_default())
    }

    fn delete_participant_mapping(&mut self, meeting: &str, key: &str) -> StoreResult<()> {
        self.del(Key::Mapping(meeting.to_string(), key.to_string()))
    }

    fn delete_participant(&mut self, meeting: &str, idx: i64) -> StoreResult<()> {
        self.del(Key::Participant(meeting.to_string(), idx))
    }

    fn upsert_task_decision(&mut self, task: &str, status: TaskStatus) -> StoreResult<()> {
        self.put(Row::TaskDecision {
            task: task.to_string(),
            status,
        })
    }

    fn find_task_decision(&mut self, task: &str) -> StoreResult<Option<TaskStatus>> {
        Ok(self.k().task_decisions.get(task).copied())
    }

    fn delete_task_decision(&mut self, task: &str) -> StoreResult<()> {
        self.del(Key::TaskDecision(task.to_string()))
    }

    fn find_alias_bounds(&mut self, entity: &str) -> StoreResult<Option<(String, Ts, Ts)>> {
        Ok(name_bounds(self.k(), entity))
    }

    fn list_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Alias>> {
        let k = self.k();
        Ok(k.aliases_by_meeting
            .get(meeting)
            .filter_map(|(entity, alias)| {
                let at = k.aliases.get(entity)?.get(alias)?.get(meeting)?;
                Some(Alias {
                    entity: entity.clone(),
                    alias: alias.clone(),
                    meeting: meeting.to_string(),
                    observed_at: *at,
                })
            })
            .collect())
    }

    fn upsert_link_attachment(&mut self, attachment: &LinkAttachment) -> StoreResult<()> {
        self.put(Row::LinkAttachment(attachment.clone()))
    }

    fn list_link_attachments_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<LinkAttachment>> {
        let k = self.k();
        Ok(k.attachments_by_meeting
            .get(meeting)
            .filter_map(|(link, entity)| k.link_attachments.get(&(link.clone(), entity.clone())))
            .cloned()
            .collect())
    }

    fn list_link_attachments_by_entity(
        &mut self,
        entity: &str,
    ) -> StoreResult<Vec<LinkAttachment>> {
        let k = self.k();
        Ok(k.attachments_by_entity
            .get(entity)
            .filter_map(|link| k.link_attachments.get(&(link.clone(), entity.to_string())))
            .cloned()
            .collect())
    }

    fn delete_link_attachment(&mut self, link: &str, entity: &str) -> StoreResult<()> {
        self.del(Key::LinkAttachment(link.to_string(), entity.to_string()))
    }

    fn list_attached_links(&mut self, entity: &str) -> StoreResult<Vec<crate::AttachedLink>> {
        if let Some(attached) = self.page(entity).and_then(|page| page.attached()) {
            return Ok(attached);
        }
        Ok(attached_of(self.k(), &self.state().meetings, entity))
    }

    fn insert_identifier_source(&mut self, source: &IdentifierSource) -> StoreResult<()> {
        let stored = self
            .k()
            .identifier_sources
            .get(&(source.scheme.clone(), source.value.clone()))
            .and_then(|rows| rows.get(&(source.meeting.clone(), source.group.clone())))
            .copied();
        let primary = stored.unwrap_or(false) || source.primary;
        if stored == Some(primary) {
            return self.writable().map(|_| ());
        }
        let mut row = source.clone();
        row.primary = primary;
        self.put(Row::IdentifierSource(row))
    }

    fn list_identifier_sources(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        Ok(self
            .k()
            .identifier_sources
            .get(&(scheme.to_string(), value.to_string()))
            .into_iter()
            .flatten()
            .map(|((meeting, group), primary)| IdentifierSource {
                scheme: scheme.to_string(),
                value: value.to_string(),
                meeting: meeting.clone(),
                group: group.clone(),
                primary: *primary,
            })
            .collect())
    }

    fn list_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        let k = self.k();
        Ok(k.identifier_sources_by_meeting
            .get(meeting)
            .filter_map(|(scheme, value, group)| {
                let primary = k
                    .identifier_sources
                    .get(&(scheme.clone(), value.clone()))?
                    .get(&(meeting.to_string(), group.clone()))?;
                Some(IdentifierSource {
                    scheme: scheme.clone(),
                    value: value.clone(),
                    meeting: meeting.to_string(),
                    group: group.clone(),
                    primary: *primary,
                })
            })
            .collect())
    }

    fn list_entities_taught_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<(String, String)>> {
        let k = self.k();
        let taught: BTreeSet<(String, String)> = k
            .identifier_sources_by_meeting
            .get(meeting)
            .filter_map(|(scheme, value, group)| {
                let entity = k.identifiers.get(&(scheme.clone(), value.clone()))?;
                Some((group.clone(), entity.clone()))
            })
            .collect();
        Ok(taught.into_iter().collect())
    }

    /// Each of the meeting's sources is removed by its key, and returned from the row its removal
    /// took back, instead of being read first and then looked up again to be deleted.
    fn delete_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        self.writable()?;
        let keys: Vec<(String, String, String)> = self
            .k()
            .identifier_sources_by_meeting
            .get(meeting)
            .cloned()
            .collect();
        let mut removed = Vec::with_capacity(keys.len());
        for (scheme, value, group) in keys {
            let key = Key::IdentifierSource(scheme, value, meeting.to_string(), group);
            if self.remove_key(key)? {
                if let Some(Undo::Knowledge(Op::Put(Row::IdentifierSource(source)))) =
                    self.journal.undo.last()
                {
                    removed.push(source.clone());
                }
            }
        }
        Ok(removed)
    }

    fn delete_identifier_source(&mut self, source: &IdentifierSource) -> StoreResult<()> {
        self.del(Key::IdentifierSource(
            source.scheme.clone(),
            source.value.clone(),
            source.meeting.clone(),
            source.group.clone(),
        ))
    }

    fn insert_meeting_tag(&mut self, tag: &MeetingTag) -> StoreResult<()> {
        self.writable()?;
        self.sql()?.insert_meeting_tag(tag)
    }

    fn list_meeting_tags(&mut self, meeting: &str) -> StoreResult<Vec<MeetingTag>> {
        self.sql()?.list_meeting_tags(meeting)
    }

    fn insert_segments(&mut self, segments: &[Segment]) -> StoreResult<()> {
        let segments = segments.to_vec();
        self.sql_write(move |sql| sql.insert_segments(&segments))
    }

    fn list_evidence_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Evidence>> {
        let ids = self.slot_claim_ids(slot);
        Ok(ids
            .iter()
            .flat_map(|id| self.evidence_of_claim(id))
            .collect())
    }

    fn list_slot_facts(&mut self, slot: &SlotKey) -> StoreResult<Vec<crate::SlotFact>> {
        let k = self.k();
        Ok(self
            .slot_claim_ids(slot)
            .iter()
            .flat_map(|claim| k.evidence_by_claim.get(claim.as_str()))
            .filter_map(|(_, _, id)| k.evidence.get(id))
            .map(crate::SlotFact::of)
            .collect())
    }

    fn find_graph_index(&mut self) -> StoreResult<Option<std::sync::Arc<crate::GraphIndex>>> {
        // Only reads use one: a write changes the rows under it.
        Ok(self
            .graphs
            .and_then(|(graphs, version)| graphs.get(self.sql_tx.owner, version)))
    }

    fn list_projected_claims(&mut self, entity: &str) -> StoreResult<Vec<crate::ProjectedClaim>> {
        if let Some(claims) = self.page(entity).and_then(|page| page.projected_claims()) {
            return Ok(claims);
        }
        Ok(projected_of(self.k(), entity))
    }

    fn list_evidence_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Evidence>> {
        let claims: Vec<String> = self
            .k()
            .claims_by_subject
            .get(entity)
            .map(|(_, id)| id.clone())
            .collect();
        Ok(claims
            .iter()
            .flat_map(|claim| self.evidence_of_claim(claim))
            .collect())
    }

    fn list_search_snippets(
        &mut self,
        query: &lore_core::search::SearchQuery,
        docs: &[i64],
    ) -> StoreResult<Vec<(i64, String)>> {
        self.sql()?.list_search_snippets(query, docs)
    }

    fn delete_evidence_many(&mut self, ids: &[String]) -> StoreResult<()> {
        self.writable()?;
        for id in ids {
            self.delete_evidence_row(id)?;
        }
        Ok(())
    }

    fn list_claims_without_evidence(&mut self, claims: &[String]) -> StoreResult<Vec<String>> {
        let k = self.k();
        Ok(claims
            .iter()
            .filter(|claim| !k.evidence_by_claim.has(claim.as_str()))
            .cloned()
            .collect())
    }

    fn find_claims(&mut self, ids: &[String]) -> StoreResult<Vec<Claim>> {
        let ids: BTreeSet<&String> = ids.iter().collect();
        Ok(Self::claims_of(self.k(), ids.into_iter()))
    }

    fn find_identifier_source(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Option<IdentifierSource>> {
        Ok(self
            .k()
            .identifier_sources
            .get(&(scheme.to_string(), value.to_string()))
            .and_then(|rows| rows.iter().next())
            .map(|((meeting, group), primary)| IdentifierSource {
                scheme: scheme.to_string(),
                value: value.to_string(),
                meeting: meeting.clone(),
                group: group.clone(),
                primary: *primary,
            }))
    }

    fn list_identifiers_still_taught(
        &mut self,
        identifiers: &[(String, String)],
    ) -> StoreResult<Vec<(String, String)>> {
        let k = self.k();
        let taught: BTreeSet<(String, String)> = identifiers
            .iter()
            .filter(|pair| k.identifier_sources.contains_key(*pair))
            .cloned()
            .collect();
        Ok(taught.into_iter().collect())
    }

    fn meeting_counts(&mut self, meeting: &str) -> StoreResult<crate::MeetingCounts> {
        let (segments, notes) = self.sql()?.meeting_text_counts(meeting)?;
        let k = self.k();
        Ok(crate::MeetingCounts {
            segments,
            notes,
            participants: k.participants.get(meeting).map_or(0, BTreeMap::len),
            evidence: k.evidence_by_meeting.get(meeting).count(),
        })
    }

    fn index_queued_search(&mut self) -> StoreResult<()> {
        // Only where a helper runs beside the write; otherwise the commit flushes them.
        if self.lane.is_some() {
            self.sql_write(|sql| sql.flush_search_in_writer())?;
        }
        Ok(())
    }

    fn entity_observations(&mut self, entity: &str) -> StoreResult<crate::EntityObservations> {
        let k = self.k();
        let mut times: Vec<Ts> = Vec::new();
        for (at, rows) in k
            .evidence_times_by_subject
            .get(entity)
            .into_iter()
            .flatten()
        {
            times.extend(std::iter::repeat_n(*at, *rows));
        }
        times.extend(
            k.aliases
                .get(entity)
                .into_iter()
                .flatten()
                .flat_map(|(_, meetings)| meetings.values().copied()),
        );
        Ok((name_bounds(k, entity), times))
    }

    fn entity_observation_summary(
        &mut self,
        entity: &str,
        weight: f64,
    ) -> StoreResult<crate::FoldedObservations> {
        let k = self.k();
        let evidence = k.evidence_times_by_subject.get(entity);
        let names = k.alias_times_by_entity.get(entity);
        // Both indexes hold their times in order: merged, they are the observations sorted.
        let mut evidence = evidence
            .into_iter()
            .flatten()
            .map(|(at, count)| (*at, *count))
            .peekable();
        let mut names = names
            .into_iter()
            .flatten()
            .map(|((at, _), count)| (*at, *count))
            .peekable();
        // (A time may come twice, each name said then counted apart: the sum is the same.)
        let merged = std::iter::from_fn(|| match (evidence.peek(), names.peek()) {
            (Some(a), Some(b)) if b.0 < a.0 => names.next(),
            (Some(_), _) => evidence.next(),
            (None, _) => names.next(),
        });
        let mut count = 0;
        let mut earliest = None;
        let counted = merged.inspect(|(at, rows)| {
            earliest.get_or_insert(*at);
            count += rows;
        });
        let (weight_basis, latest) = lore_core::reading::weight_basis_of_counted(counted, weight);
        Ok((
            name_bounds(k, entity),
            crate::ObservationSummary {
                count,
                earliest,
                latest,
                weight_basis,
            },
        ))
    }

    fn list_status_changes_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<StatusChange>> {
        let ids = self.slot_claim_ids(slot);
        Ok(ids.iter().flat_map(|id| self.status_of_claim(id)).collect())
    }

    fn list_supersedes_links_by_slot(
        &mut self,
        slot: &SlotKey,
    ) -> StoreResult<Vec<SupersedesLink>> {
        let ids = self.slot_claim_ids(slot);
        Ok(ids
            .iter()
            .flat_map(|id| self.supersedes_of_claim(id))
            .collect())
    }
}

impl LogTx<'_> {
    /// A claim's subject, object and context must be entities (the tables' foreign keys).
    fn require_claim_entities(&self, claim: &Claim) -> StoreResult<()> {
        self.require_entity(&claim.subject, "claim subject")?;
        for entity in claim
            .object_entity
            .iter()
            .chain(claim.context_entity.iter())
        {
            self.require_entity(entity, "claim object or context")?;
        }
        Ok(())
    }
}

/// An entity's earliest name (the first by time, then by text in byte order, as
/// `find_alias_bounds` orders them) with the first and the last time it was named: the first and
/// the last key of the name-times index, which holds them in that order.
fn name_bounds(k: &Knowledge, entity: &str) -> Option<(String, Ts, Ts)> {
    let times = k.alias_times_by_entity.get(entity)?;
    let ((first, alias), _) = times.first_key_value()?;
    let ((last, _), _) = times.last_key_value()?;
    Some((alias.clone(), *first, *last))
}
