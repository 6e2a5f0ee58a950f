//! One owner's knowledge in memory: the rows of the knowledge tables (entities, claims, evidence and
//! everything that hangs off them), each table with the indexes its reads need. Rows change only
//! through [`Knowledge::apply`], which keeps every index in step and returns the operation that
//! undoes the change, so a failed transaction is rolled back by applying its inverses in reverse.
//!
//! The same operations are what the log persists (`Op`, in the codec of `codec.rs`): replaying an
//! owner's log from an empty `Knowledge` gives the state the writes left.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use lore_core::model::*;
use lore_core::Ts;

use super::codec::{Codec, DecodeError, Decoded, Reader, Writer};
use crate::fast_hash::FastMap;

type SafeMap<K, V> = HashMap<K, V>;

/// A row of one of the knowledge tables.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Row {
    Entity(Box<Entity>),
    Redirect {
        old: String,
        new: String,
    },
    Identifier {
        scheme: String,
        value: String,
        entity: String,
    },
    Alias(Alias),
    Claim(Box<Claim>),
    Evidence(Box<Evidence>),
    Supersedes(SupersedesLink),
    Status {
        claim: String,
        seq: i64,
        change: Box<StatusChange>,
    },
    Link(Box<ResourceLink>),
    LinkAttachment(LinkAttachment),
    Task(Box<Task>),
    TaskDecision {
        task: String,
        status: TaskStatus,
    },
    Suggestion(Box<Suggestion>),
    Participant(Box<Participant>),
    Mapping(Box<ParticipantMapping>),
    IdentifierSource(IdentifierSource),
}

/// A row's primary key, table included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    Entity(String),
    Redirect(String),
    Identifier(String, String),
    Alias(String, String, String),
    Claim(String),
    Evidence(String),
    Supersedes(String, String, String),
    Status(String, i64),
    Link(String),
    LinkAttachment(String, String),
    Task(String),
    TaskDecision(String),
    Suggestion(String),
    Participant(String, i64),
    Mapping(String, String),
    IdentifierSource(String, String, String, String),
}

/// One change to the knowledge: a row written (inserted or replaced whole), a row removed, an
/// entity's observation fields written (the rest of its row unchanged), or everything cleared (the
/// first operation of a compacted log).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Put(Row),
    Del(Key),
    Observe(Box<EntityObserved>),
    Derive(Box<ClaimDerivedChange>),
    Reset,
}

/// A claim's derived fields, written alone (`Op::Derive`): a slot's re-evaluation changes nothing
/// else of a claim's row, which then is neither copied nor logged whole.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ClaimDerivedChange {
    pub(crate) claim: String,
    pub(crate) derived: ClaimDerived,
}

/// An entity's observation fields, written alone (`Op::Observe`): the rebuild of an entity a write
/// only mentions changes nothing else of its row, which then is neither copied nor logged whole.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EntityObserved {
    pub(crate) entity: String,
    pub(crate) observed: Observed,
}

impl Row {
    pub(crate) fn key(&self) -> Key {
        match self {
            Row::Entity(e) => Key::Entity(e.id.clone()),
            Row::Redirect { old, .. } => Key::Redirect(old.clone()),
            Row::Identifier { scheme, value, .. } => Key::Identifier(scheme.clone(), value.clone()),
            Row::Alias(a) => Key::Alias(a.entity.clone(), a.alias.clone(), a.meeting.clone()),
            Row::Claim(c) => Key::Claim(c.id.clone()),
            Row::Evidence(e) => Key::Evidence(e.id.clone()),
            Row::Supersedes(l) => {
                Key::Supersedes(l.claim.clone(), l.target.clone(), l.evidence.clone())
            }
            Row::Status { claim, seq, .. } => Key::Status(claim.clone(), *seq),
            Row::Link(l) => Key::Link(l.id.clone()),
            Row::LinkAttachment(a) => Key::LinkAttachment(a.link.clone(), a.entity.clone()),
            Row::Task(t) => Key::Task(t.id.clone()),
            Row::TaskDecision { task, .. } => Key::TaskDecision(task.clone()),
            Row::Suggestion(s) => Key::Suggestion(s.id.clone()),
            Row::Participant(p) => Key::Participant(p.meeting.clone(), p.idx),
            Row::Mapping(m) => Key::Mapping(m.meeting.clone(), m.key.clone()),
            Row::IdentifierSource(s) => Key::IdentifierSource(
                s.scheme.clone(),
                s.value.clone(),
                s.meeting.clone(),
                s.group.clone(),
            ),
        }
    }
}

/// A one-to-many index: for each key, the set of what it leads to, in order.
#[derive(Debug)]
pub(crate) struct Multi<K, V> {
    map: FastMap<K, BTreeSet<V>>,
}

impl<K, V> Default for Multi<K, V> {
    fn default() -> Self {
        Multi {
            map: FastMap::default(),
        }
    }
}

impl<K: Hash + Eq, V: Ord> Multi<K, V> {
    fn insert(&mut self, key: K, value: V) {
        self.map.entry(key).or_default().insert(value);
    }

    fn remove<Q>(&mut self, key: &Q, value: &V)
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(set) = self.map.get_mut(key) {
            set.remove(value);
            if set.is_empty() {
                self.map.remove(key);
            }
        }
    }

    /// What `key` leads to from `from` on, in order.
    pub(crate) fn get_from<'a, Q>(&'a self, key: &Q, from: &'a V) -> impl Iterator<Item = &'a V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map
            .get(key)
            .into_iter()
            .flat_map(move |set| set.range(from..))
    }

    /// What `key` leads to, in order (nothing for an unknown key).
    pub(crate) fn get<Q>(&self, key: &Q) -> impl DoubleEndedIterator<Item = &V> + Clone
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).into_iter().flatten()
    }

    pub(crate) fn has<Q>(&self, key: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.contains_key(key)
    }
}

/// An owner's knowledge tables and their indexes. Indexes hold keys, never rows.
#[derive(Default, Debug)]
pub(crate) struct Knowledge {
    /// How many rows the tables hold.
    pub(crate) rows: usize,
    /// The entity pages reads built, each forgotten when a change reaches its entity.
    pub(crate) pages: super::pages::PageCache,
    pub(crate) entities: FastMap<String, Entity>,
    pub(crate) redirects: BTreeMap<String, String>,
    /// `(scheme, value)` to the entity it identifies.
    pub(crate) identifiers: SafeMap<(String, String), String>,
    /// Entity to its `(scheme, value)` identifiers.
    pub(crate) identifiers_by_entity: Multi<String, (String, String)>,
    /// Entity to name to meeting to when the meeting said the name: nested, so a lookup compares
    /// the name once per level instead of a `(name, meeting)` pair.
    pub(crate) aliases: FastMap<String, BTreeMap<String, BTreeMap<String, Ts>>>,
    /// Meeting to `(entity, alias)`.
    pub(crate) aliases_by_meeting: Multi<String, (String, String)>,
    /// Name key to the entities whose names have it, with how many name rows do.
    pub(crate) alias_keys: SafeMap<String, BTreeMap<String, usize>>,
    pub(crate) claims: FastMap<String, Claim>,
    /// Subject to `(predicate, id)`.
    pub(crate) claims_by_subject: Multi<String, (String, String)>,
    pub(crate) claims_by_object: Multi<String, String>,
    pub(crate) claims_by_context: Multi<String, String>,
    pub(crate) claims_by_predicate: Multi<String, String>,
    pub(crate) evidence: FastMap<String, Evidence>,
    /// Claim to `(observed_at, start_ms, id)`: `list_evidence_by_claim` order.
    pub(crate) evidence_by_claim: Multi<String, (Ts, Option<i64>, String)>,
    /// Subject to when the evidence rows of its claims were observed, with how many rows at each
    /// time: an entity's observations without a lookup per claim (a hub has hundreds).
    pub(crate) evidence_times_by_subject: FastMap<String, BTreeMap<Ts, usize>>,
    /// Entity to when its names were said and what they were, with how many name rows said each
    /// name at each time: with the evidence times, an entity's observations in order without
    /// collecting and sorting them; its first key is the entity's earliest name.
    pub(crate) alias_times_by_entity: FastMap<String, BTreeMap<(Ts, String), usize>>,
    pub(crate) evidence_by_meeting: Multi<String, String>,
    /// `(source kind, source id)` to evidence ids.
    pub(crate) evidence_by_source: Multi<(SourceKind, String), String>,
    /// Claim to `(target, evidence)`.
    pub(crate) supersedes: Multi<String, (String, String)>,
    /// Evidence to `(claim, target)`: the links that go with an evidence row.
    pub(crate) supersedes_by_evidence: Multi<String, (String, String)>,
    /// Claim to its status history, by sequence number.
    pub(crate) status: FastMap<String, BTreeMap<i64, StatusChange>>,
    pub(crate) links: FastMap<String, ResourceLink>,
    /// Entity to `(first_seen_at, id)`.
    pub(crate) links_by_entity: Multi<String, (Ts, String)>,
    /// Meeting to `(first_seen_at, id)`.
    pub(crate) links_by_meeting: Multi<String, (Ts, String)>,
    pub(crate) link_attachments: FastMap<(String, String), LinkAttachment>,
    /// Entity to link.
    pub(crate) attachments_by_entity: Multi<String, String>,
    /// Meeting to `(link, entity)`.
    pub(crate) attachments_by_meeting: Multi<String, (String, String)>,
    pub(crate) tasks: FastMap<String, Task>,
    pub(crate) tasks_by_meeting: Multi<String, String>,
    /// Assignee or project to task id.
    pub(crate) tasks_by_entity: Multi<String, String>,
    pub(crate) task_decisions: FastMap<String, TaskStatus>,
    pub(crate) suggestions: BTreeMap<String, Suggestion>,
    /// Meeting to its participants by index.
    pub(crate) participants: FastMap<String, BTreeMap<i64, Participant>>,
    /// Person to `(meeting, idx)`.
    pub(crate) participants_by_person: Multi<String, (String, i64)>,
    /// Meeting to its mappings by key.
    pub(crate) mappings: FastMap<String, BTreeMap<String, ParticipantMapping>>,
    /// `(scheme, value)` to `(meeting, group)` to whether it was given as a primary address.
    pub(crate) identifier_sources: SafeMap<(String, String), BTreeMap<(String, String), bool>>,
    /// Meeting to `(scheme, value, group)`.
    pub(crate) identifier_sources_by_meeting: Multi<String, (String, String, String)>,
}

impl Knowledge {
    /// Applies one change and returns what undoes it (`None`: nothing changed, or a reset).
    pub(crate) fn apply(&mut self, op: Op) -> Option<Op> {
        match op {
            Op::Put(row) => {
                let row = match self.replace_in_place(row) {
                    Ok(old) => return Some(Op::Put(old)),
                    Err(row) => row,
                };
                let key = row.key();
                let old = self.remove(&key);
                self.insert(row);
                Some(match old {
                    Some(old) => Op::Put(old),
                    None => Op::Del(key),
                })
            }
            Op::Del(key) => self.remove(&key).map(Op::Put),
            Op::Observe(mut change) => {
                let entity = self.entities.get_mut(&change.entity)?;
                let old = entity.observed();
                entity.set_observed(change.observed);
                self.pages.forget(&change.entity);
                change.observed = old;
                Some(Op::Observe(change))
            }
            Op::Derive(mut change) => {
                let claim = self.claims.get_mut(&change.claim)?;
                std::mem::swap(&mut claim.derived, &mut change.derived);
                self.pages.forget(&claim.subject);
                Some(Op::Derive(change))
            }
            Op::Reset => {
                *self = Knowledge::default();
                None
            }
        }
    }

    /// Replaces a stored claim, evidence row or entity whose indexed fields the new row keeps (a
    /// claim's derived state or retraction, an entity's observations or projection) without
    /// touching an index; returns the old row, or gives the row back when it is new or moves in an
    /// index.
    fn replace_in_place(&mut self, row: Row) -> Result<Row, Row> {
        match row {
            Row::Claim(new) => match self.claims.get_mut(&new.id) {
                Some(old)
                    if old.subject == new.subject
                        && old.predicate == new.predicate
                        && old.object_entity == new.object_entity
                        && old.context_entity == new.context_entity =>
                {
                    self.pages.forget(&new.subject);
                    Ok(Row::Claim(Box::new(std::mem::replace(old, *new))))
                }
                _ => Err(Row::Claim(new)),
            },
            Row::Entity(new) => match self.entities.get_mut(&new.id) {
                Some(old) => {
                    self.pages.forget(&new.id);
                    Ok(Row::Entity(Box::new(std::mem::replace(old, *new))))
                }
                None => Err(Row::Entity(new)),
            },
            other => Err(other),
        }
    }

    /// Whether a row with this key is stored.
    pub(crate) fn contains(&self, key: &Key) -> bool {
        match key {
            Key::Entity(id) => self.entities.contains_key(id),
            Key::Redirect(old) => self.redirects.contains_key(old),
            Key::Identifier(scheme, value) => self
                .identifiers
                .contains_key(&(scheme.clone(), value.clone())),
            Key::Alias(entity, alias, meeting) => self
                .aliases
                .get(entity)
                .and_then(|names| names.get(alias))
                .is_some_and(|meetings| meetings.contains_key(meeting)),
            Key::Claim(id) => self.claims.contains_key(id),
            Key::Evidence(id) => self.evidence.contains_key(id),
            Key::Supersedes(claim, target, evidence) => self
                .supersedes
                .get(claim)
                .any(|(t, e)| t == target && e == evidence),
            Key::Status(claim, seq) => self
                .status
                .get(claim)
                .is_some_and(|rows| rows.contains_key(seq)),
            Key::Link(id) => self.links.contains_key(id),
            Key::LinkAttachment(link, entity) => self
                .link_attachments
                .contains_key(&(link.clone(), entity.clone())),
            Key::Task(id) => self.tasks.contains_key(id),
            Key::TaskDecision(task) => self.task_decisions.contains_key(task),
            Key::Suggestion(id) => self.suggestions.contains_key(id),
            Key::Participant(meeting, idx) => self
                .participants
                .get(meeting)
                .is_some_and(|rows| rows.contains_key(idx)),
            Key::Mapping(meeting, key) => self
                .mappings
                .get(meeting)
                .is_some_and(|rows| rows.contains_key(key)),
            Key::IdentifierSource(scheme, value, meeting, group) => self
                .identifier_sources
                .get(&(scheme.clone(), value.clone()))
                .is_some_and(|rows| rows.contains_key(&(meeting.clone(), group.clone()))),
        }
    }

    fn insert(&mut self, row: Row) {
        self.rows += 1;
        self.forget_pages(&row);
        match row {
            Row::Entity(e) => {
                self.entities.insert(e.id.clone(), *e);
            }
            Row::Redirect { old, new } => {
                self.redirects.insert(old, new);
            }
            Row::Identifier {
                scheme,
                value,
                entity,
            } => {
                self.identifiers_by_entity
                    .insert(entity.clone(), (scheme.clone(), value.clone()));
                self.identifiers.insert((scheme, value), entity);
            }
            Row::Alias(a) => {
                let key = lore_core::normalize::value_key(&a.alias);
                *self
                    .alias_keys
                    .entry(key)
                    .or_default()
                    .entry(a.entity.clone())
                    .or_default() += 1;
                self.aliases_by_meeting
                    .insert(a.meeting.clone(), (a.entity.clone(), a.alias.clone()));
                count_times(
                    &mut self.alias_times_by_entity,
                    &a.entity,
                    std::iter::once((a.observed_at, a.alias.clone())),
                    true,
                );
                self.aliases
                    .entry(a.entity)
                    .or_default()
                    .entry(a.alias)
                    .or_default()
                    .insert(a.meeting, a.observed_at);
            }
            Row::Claim(c) => {
                self.count_claims_evidence(&c, true);
                self.claims_by_subject
                    .insert(c.subject.clone(), (c.predicate.clone(), c.id.clone()));
                if let Some(object) = &c.object_entity {
                    self.claims_by_object.insert(object.clone(), c.id.clone());
                }
                if let Some(context) = &c.context_entity {
                    self.claims_by_context.insert(context.clone(), c.id.clone());
                }
                self.claims_by_predicate
                    .insert(c.predicate.clone(), c.id.clone());
                self.claims.insert(c.id.clone(), *c);
            }
            Row::Evidence(e) => {
                self.count_evidence(&e, true);
                self.evidence_by_claim
                    .insert(e.claim.clone(), (e.observed_at, e.start_ms, e.id.clone()));
                if let Some(meeting) = &e.meeting {
                    self.evidence_by_meeting
                        .insert(meeting.clone(), e.id.clone());
                }
                self.evidence_by_source
                    .insert((e.source_kind, e.source_id.clone()), e.id.clone());
                self.evidence.insert(e.id.clone(), *e);
            }
            Row::Supersedes(l) => {
                self.supersedes_by_evidence
                    .insert(l.evidence.clone(), (l.claim.clone(), l.target.clone()));
                self.supersedes.insert(l.claim, (l.target, l.evidence));
            }
            Row::Status { claim, seq, change } => {
                self.status.entry(claim).or_default().insert(seq, *change);
            }
            Row::Link(l) => {
                if let Some(entity) = &l.entity {
                    self.links_by_entity
                        .insert(entity.clone(), (l.first_seen_at, l.id.clone()));
                }
                if let Some(meeting) = &l.meeting {
                    self.links_by_meeting
                        .insert(meeting.clone(), (l.first_seen_at, l.id.clone()));
                }
                self.links.insert(l.id.clone(), *l);
            }
            Row::LinkAttachment(a) => {
                self.attachments_by_entity
                    .insert(a.entity.clone(), a.link.clone());
                self.attachments_by_meeting
                    .insert(a.meeting.clone(), (a.link.clone(), a.entity.clone()));
                self.link_attachments
                    .insert((a.link.clone(), a.entity.clone()), a);
            }
            Row::Task(t) => {
                if let Some(meeting) = &t.meeting {
                    self.tasks_by_meeting.insert(meeting.clone(), t.id.clone());
                }
                for entity in t.assignee.iter().chain(t.project.iter()) {
                    self.tasks_by_entity.insert(entity.clone(), t.id.clone());
                }
                self.tasks.insert(t.id.clone(), *t);
            }
            Row::TaskDecision { task, status } => {
                self.task_decisions.insert(task, status);
            }
            Row::Suggestion(s) => {
                self.suggestions.insert(s.id.clone(), *s);
            }
            Row::Participant(p) => {
                if let Some(person) = &p.person_entity {
                    self.participants_by_person
                        .insert(person.clone(), (p.meeting.clone(), p.idx));
                }
                self.participants
                    .entry(p.meeting.clone())
                    .or_default()
                    .insert(p.idx, *p);
            }
            Row::Mapping(m) => {
                self.mappings
                    .entry(m.meeting.clone())
                    .or_default()
                    .insert(m.key.clone(), *m);
            }
            Row::IdentifierSource(s) => {
                self.identifier_sources_by_meeting.insert(
                    s.meeting.clone(),
                    (s.scheme.clone(), s.value.clone(), s.group.clone()),
                );
                self.identifier_sources
                    .entry((s.scheme, s.value))
                    .or_default()
                    .insert((s.meeting, s.group), s.primary);
            }
        }
    }

    /// Removes the row with this key and returns it.
    fn remove(&mut self, key: &Key) -> Option<Row> {
        let removed = self.remove_row(key);
        if let Some(row) = &removed {
            self.rows -= 1;
            self.forget_pages(row);
        }
        removed
    }

    /// Forgets the page of every entity whose page shows this row: an entity's own row, a claim's
    /// subject, a link's entity and the entities its meeting attached it to, an attachment's entity.
    fn forget_pages(&mut self, row: &Row) {
        match row {
            Row::Entity(e) => self.pages.forget(&e.id),
            Row::Claim(c) => self.pages.forget(&c.subject),
            Row::Link(l) => {
                if let Some(entity) = &l.entity {
                    self.pages.forget(entity);
                }
                if let Some(meeting) = &l.meeting {
                    let attached: Vec<String> = self
                        .attachments_by_meeting
                        .get(meeting.as_str())
                        .filter(|(link, _)| *link == l.id)
                        .map(|(_, entity)| entity.clone())
                        .collect();
                    for entity in attached {
                        self.pages.forget(&entity);
                    }
                }
            }
            Row::LinkAttachment(a) => self.pages.forget(&a.entity),
            _ => {}
        }
    }

    /// Counts (`add`) or uncounts a claim's evidence times under its subject: the claim comes or
    /// goes, its evidence rows stay.
    fn count_claims_evidence(&mut self, claim: &Claim, add: bool) {
        let times = self
            .evidence_by_claim
            .get(claim.id.as_str())
            .map(|(at, _, _)| *at);
        count_times(
            &mut self.evidence_times_by_subject,
            &claim.subject,
            times,
            add,
        );
    }

    /// Counts (`add`) or uncounts an evidence row's time under its claim's subject, when the claim
    /// is stored (otherwise the claim's own put counts it).
    fn count_evidence(&mut self, evidence: &Evidence, add: bool) {
        if let Some(claim) = self.claims.get(&evidence.claim) {
            count_times(
                &mut self.evidence_times_by_subject,
                &claim.subject,
                std::iter::once(evidence.observed_at),
                add,
            );
        }
    }

    fn remove_row(&mut self, key: &Key) -> Option<Row> {
        match key {
            Key::Entity(id) => self.entities.remove(id).map(|e| Row::Entity(Box::new(e))),
            Key::Redirect(old) => self.redirects.remove(old).map(|new| Row::Redirect {
                old: old.clone(),
                new,
            }),
            Key::Identifier(scheme, value) => {
                let pair = (scheme.clone(), value.clone());
                let entity = self.identifiers.remove(&pair)?;
                self.identifiers_by_entity.remove(&entity, &pair);
                Some(Row::Identifier {
                    scheme: pair.0,
                    value: pair.1,
                    entity,
                })
            }
            Key::Alias(entity, alias, meeting) => {
                let names = self.aliases.get_mut(entity)?;
                let meetings = names.get_mut(alias)?;
                // The stored meeting id goes on into the removed row.
                let (meeting_id, observed_at) = meetings.remove_entry(meeting)?;
                if meetings.is_empty() {
                    names.remove(alias);
                    if names.is_empty() {
                        self.aliases.remove(entity);
                    }
                }
                let pair = (entity.clone(), alias.clone());
                self.aliases_by_meeting.remove(meeting, &pair);
                let (entity_id, alias_name) = pair;
                count_times(
                    &mut self.alias_times_by_entity,
                    entity,
                    std::iter::once((observed_at, alias.clone())),
                    false,
                );
                let alias_key = lore_core::normalize::value_key(alias);
                if let Some(entities) = self.alias_keys.get_mut(&alias_key) {
                    if let Some(count) = entities.get_mut(entity) {
                        *count -= 1;
                        if *count == 0 {
                            entities.remove(entity);
                        }
                    }
                    if entities.is_empty() {
                        self.alias_keys.remove(&alias_key);
                    }
                }
                Some(Row::Alias(Alias {
                    entity: entity_id,
                    alias: alias_name,
                    meeting: meeting_id,
                    observed_at,
                }))
            }
            Key::Claim(id) => {
                let c = self.claims.remove(id)?;
                self.count_claims_evidence(&c, false);
                self.claims_by_subject
                    .remove(&c.subject, &(c.predicate.clone(), c.id.clone()));
                if let Some(object) = &c.object_entity {
                    self.claims_by_object.remove(object, &c.id);
                }
                if let Some(context) = &c.context_entity {
                    self.claims_by_context.remove(context, &c.id);
                }
                self.claims_by_predicate.remove(&c.predicate, &c.id);
                Some(Row::Claim(Box::new(c)))
            }
            Key::Evidence(id) => {
                let e = self.evidence.remove(id)?;
                self.count_evidence(&e, false);
                self.evidence_by_claim
                    .remove(&e.claim, &(e.observed_at, e.start_ms, e.id.clone()));
                if let Some(meeting) = &e.meeting {
                    self.evidence_by_meeting.remove(meeting, &e.id);
                }
                self.evidence_by_source
                    .remove(&(e.source_kind, e.source_id.clone()), &e.id);
                Some(Row::Evidence(Box::new(e)))
            }
            Key::Supersedes(claim, target, evidence) => {
                let pair = (target.clone(), evidence.clone());
                if !self.supersedes.get(claim).any(|stored| *stored == pair) {
                    return None;
                }
                self.supersedes.remove(claim, &pair);
                self.supersedes_by_evidence
                    .remove(evidence, &(claim.clone(), target.clone()));
                Some(Row::Supersedes(SupersedesLink {
                    claim: claim.clone(),
                    target: target.clone(),
                    evidence: evidence.clone(),
                }))
            }
            Key::Status(claim, seq) => {
                let rows = self.status.get_mut(claim)?;
                let change = rows.remove(seq)?;
                if rows.is_empty() {
                    self.status.remove(claim);
                }
                Some(Row::Status {
                    claim: claim.clone(),
                    seq: *seq,
                    change: Box::new(change),
                })
            }
            Key::Link(id) => {
                let l = self.links.remove(id)?;
                if let Some(entity) = &l.entity {
                    self.links_by_entity
                        .remove(entity, &(l.first_seen_at, l.id.clone()));
                }
                if let Some(meeting) = &l.meeting {
                    self.links_by_meeting
                        .remove(meeting, &(l.first_seen_at, l.id.clone()));
                }
                Some(Row::Link(Box::new(l)))
            }
            Key::LinkAttachment(link, entity) => {
                let a = self
                    .link_attachments
                    .remove(&(link.clone(), entity.clone()))?;
                self.attachments_by_entity.remove(&a.entity, &a.link);
                self.attachments_by_meeting
                    .remove(&a.meeting, &(a.link.clone(), a.entity.clone()));
                Some(Row::LinkAttachment(a))
            }
            Key::Task(id) => {
                let t = self.tasks.remove(id)?;
                if let Some(meeting) = &t.meeting {
                    self.tasks_by_meeting.remove(meeting, &t.id);
                }
                for entity in t.assignee.iter().chain(t.project.iter()) {
                    self.tasks_by_entity.remove(entity, &t.id);
                }
                Some(Row::Task(Box::new(t)))
            }
            Key::TaskDecision(task) => {
                self.task_decisions
                    .remove(task)
                    .map(|status| Row::TaskDecision {
                        task: task.clone(),
                        status,
                    })
            }
            Key::Suggestion(id) => self
                .suggestions
                .remove(id)
                .map(|s| Row::Suggestion(Box::new(s))),
            Key::Participant(meeting, idx) => {
                let rows = self.participants.get_mut(meeting)?;
                let p = rows.remove(idx)?;
                if rows.is_empty() {
                    self.participants.remove(meeting);
                }
                if let Some(person) = &p.person_entity {
                    self.participants_by_person
                        .remove(person, &(p.meeting.clone(), p.idx));
                }
                Some(Row::Participant(Box::new(p)))
            }
            Key::Mapping(meeting, key) => {
                let rows = self.mappings.get_mut(meeting)?;
                let m = rows.remove(key)?;
                if rows.is_empty() {
                    self.mappings.remove(meeting);
                }
                Some(Row::Mapping(Box::new(m)))
            }
            Key::IdentifierSource(scheme, value, meeting, group) => {
                let pair = (scheme.clone(), value.clone());
                let rows = self.identifier_sources.get_mut(&pair)?;
                let primary = rows.remove(&(meeting.clone(), group.clone()))?;
                if rows.is_empty() {
                    self.identifier_sources.remove(&pair);
                }
                self.identifier_sources_by_meeting
                    .remove(meeting, &(scheme.clone(), value.clone(), group.clone()));
                Some(Row::IdentifierSource(IdentifierSource {
                    scheme: scheme.clone(),
                    value: value.clone(),
                    meeting: meeting.clone(),
                    group: group.clone(),
                    primary,
                }))
            }
        }
    }

    /// Every row, table by table: what a compacted log starts from.
    pub(crate) fn rows(&self) -> impl Iterator<Item = Row> + '_ {
        let entities = self
            .entities
            .values()
            .map(|e| Row::Entity(Box::new(e.clone())));
        let redirects = self.redirects.iter().map(|(old, new)| Row::Redirect {
            old: old.clone(),
            new: new.clone(),
        });
        let identifiers =
            self.identifiers
                .iter()
                .map(|((scheme, value), entity)| Row::Identifier {
                    scheme: scheme.clone(),
                    value: value.clone(),
                    entity: entity.clone(),
                });
        let aliases = self.aliases.iter().flat_map(|(entity, names)| {
            names.iter().flat_map(move |(alias, meetings)| {
                meetings.iter().map(move |(meeting, at)| {
                    Row::Alias(Alias {
                        entity: entity.clone(),
                        alias: alias.clone(),
                        meeting: meeting.clone(),
                        observed_at: *at,
                    })
                })
            })
        });
        let claims = self
            .claims
            .values()
            .map(|c| Row::Claim(Box::new(c.clone())));
        let evidence = self
            .evidence
            .values()
            .map(|e| Row::Evidence(Box::new(e.clone())));
        let supersedes = self.supersedes.map.iter().flat_map(|(claim, links)| {
            links.iter().map(|(target, evidence)| {
                Row::Supersedes(SupersedesLink {
                    claim: claim.clone(),
                    target: target.clone(),
                    evidence: evidence.clone(),
                })
            })
        });
        let status = self.status.iter().flat_map(|(claim, rows)| {
            rows.iter().map(|(seq, change)| Row::Status {
                claim: claim.clone(),
                seq: *seq,
                change: Box::new(change.clone()),
            })
        });
        let links = self.links.values().map(|l| Row::Link(Box::new(l.clone())));
        let attachments = self
            .link_attachments
            .values()
            .map(|a| Row::LinkAttachment(a.clone()));
        let tasks = self.tasks.values().map(|t| Row::Task(Box::new(t.clone())));
        let decisions = self
            .task_decisions
            .iter()
            .map(|(task, status)| Row::TaskDecision {
                task: task.clone(),
                status: *status,
            });
        let suggestions = self
            .suggestions
            .values()
            .map(|s| Row::Suggestion(Box::new(s.clone())));
        let participants = self
            .participants
            .values()
            .flat_map(|rows| rows.values().map(|p| Row::Participant(Box::new(p.clone()))));
        let mappings = self
            .mappings
            .values()
            .flat_map(|rows| rows.values().map(|m| Row::Mapping(Box::new(m.clone()))));
        let sources = self
            .identifier_sources
            .iter()
            .flat_map(|((scheme, value), rows)| {
                rows.iter().map(|((meeting, group), primary)| {
                    Row::IdentifierSource(IdentifierSource {
                        scheme: scheme.clone(),
                        value: value.clone(),
                        meeting: meeting.clone(),
                        group: group.clone(),
                        primary: *primary,
                    })
                })
            });
        entities
            .chain(redirects)
            .chain(identifiers)
            .chain(aliases)
            .chain(claims)
            .chain(evidence)
            .chain(supersedes)
            .chain(status)
            .chain(links)
            .chain(attachments)
            .chain(tasks)
            .chain(decisions)
            .chain(suggestions)
            .chain(participants)
            .chain(mappings)
            .chain(sources)
    }

    /// Problems in the indexes: each must hold exactly the keys of the rows it indexes. What
    /// `integrity_problems` reports; a failure is a bug in `apply`.
    pub(crate) fn index_problems(&self) -> Vec<String> {
        let mut rebuilt = Knowledge::default();
        for row in self.rows() {
            rebuilt.insert(row);
        }
        let mut problems = Vec::new();
        macro_rules! same {
            ($($field:ident),+) => {$(
                if format!("{:?}", sorted(&self.$field.map)) != format!("{:?}", sorted(&rebuilt.$field.map)) {
                    problems.push(format!("knowledge index {} differs from its rows", stringify!($field)));
                }
            )+};
        }
        same!(
            identifiers_by_entity,
            aliases_by_meeting,
            claims_by_subject,
            claims_by_object,
            claims_by_context,
            claims_by_predicate,
            evidence_by_claim,
            evidence_by_meeting,
            evidence_by_source,
            supersedes,
            supersedes_by_evidence,
            links_by_entity,
            links_by_meeting,
            attachments_by_entity,
            attachments_by_meeting,
            tasks_by_meeting,
            tasks_by_entity,
            participants_by_person,
            identifier_sources_by_meeting
        );
        if sorted(&self.alias_keys) != sorted(&rebuilt.alias_keys) {
            problems.push("knowledge index alias_keys differs from its rows".into());
        }
        if sorted(&self.evidence_times_by_subject) != sorted(&rebuilt.evidence_times_by_subject) {
            problems.push("knowledge index evidence_times_by_subject differs from its rows".into());
        }
        if sorted(&self.alias_times_by_entity) != sorted(&rebuilt.alias_times_by_entity) {
            problems.push("knowledge index alias_times_by_entity differs from its rows".into());
        }
        problems
    }
}

/// Adds (`add`) or takes away one row per item of `times` (an evidence time, or a name's time and
/// text) under `subject`; a time no row has any more, and a subject with no times, are dropped.
fn count_times<T: Ord>(
    index: &mut FastMap<String, BTreeMap<T, usize>>,
    subject: &str,
    times: impl Iterator<Item = T>,
    add: bool,
) {
    let mut times = times.peekable();
    if times.peek().is_none() {
        return;
    }
    if add {
        let counts = match index.get_mut(subject) {
            Some(counts) => counts,
            None => index.entry(subject.to_string()).or_default(),
        };
        for at in times {
            *counts.entry(at).or_default() += 1;
        }
        return;
    }
    let Some(counts) = index.get_mut(subject) else {
        return;
    };
    for at in times {
        if let Some(count) = counts.get_mut(&at) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&at);
            }
        }
    }
    if counts.is_empty() {
        index.remove(subject);
    }
}

fn sorted<K: Ord + Clone + Hash, V: Clone, S>(map: &HashMap<K, V, S>) -> BTreeMap<K, V> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

// The log's encoding of operations.

const OP_PUT: u8 = 1;
const OP_DEL: u8 = 2;
const OP_RESET: u8 = 3;
const OP_OBSERVE: u8 = 4;
const OP_DERIVE: u8 = 5;

macro_rules! tags {
    ($($name:ident = $value:expr),+ $(,)?) => { $(const $name: u8 = $value;)+ };
}
tags!(
    T_ENTITY = 1,
    T_REDIRECT = 2,
    T_IDENTIFIER = 3,
    T_ALIAS = 4,
    T_CLAIM = 5,
    T_EVIDENCE = 6,
    T_SUPERSEDES = 7,
    T_STATUS = 8,
    T_LINK = 9,
    T_LINK_ATTACHMENT = 10,
    T_TASK = 11,
    T_TASK_DECISION = 12,
    T_SUGGESTION = 13,
    T_PARTICIPANT = 14,
    T_MAPPING = 15,
    T_IDENTIFIER_SOURCE = 16,
);

impl Codec for Op {
    fn encode(&self, w: &mut Writer) {
        match self {
            Op::Reset => w.byte(OP_RESET),
            Op::Observe(change) => {
                w.byte(OP_OBSERVE);
                w.put(&change.entity);
                w.put(&change.observed);
            }
            Op::Derive(change) => {
                w.byte(OP_DERIVE);
                w.put(&change.claim);
                w.put(&change.derived);
            }
            Op::Put(row) => {
                w.byte(OP_PUT);
                match row {
                    Row::Entity(e) => {
                        w.byte(T_ENTITY);
                        w.put(&**e);
                    }
                    Row::Redirect { old, new } => {
                        w.byte(T_REDIRECT);
                        w.put(old);
                        w.put(new);
                    }
                    Row::Identifier {
                        scheme,
                        value,
                        entity,
                    } => {
                        w.byte(T_IDENTIFIER);
                        w.put(scheme);
                        w.put(value);
                        w.put(entity);
                    }
                    Row::Alias(a) => {
                        w.byte(T_ALIAS);
                        w.put(a);
                    }
                    Row::Claim(c) => {
                        w.byte(T_CLAIM);
                        w.put(&**c);
                    }
                    Row::Evidence(e) => {
                        w.byte(T_EVIDENCE);
                        w.put(&**e);
                    }
                    Row::Supersedes(l) => {
                        w.byte(T_SUPERSEDES);
                        w.put(l);
                    }
                    Row::Status { claim, seq, change } => {
                        w.byte(T_STATUS);
                        w.put(claim);
                        w.put(seq);
                        w.put(&**change);
                    }
                    Row::Link(l) => {
                        w.byte(T_LINK);
                        w.put(&**l);
                    }
                    Row::LinkAttachment(a) => {
                        w.byte(T_LINK_ATTACHMENT);
                        w.put(a);
                    }
                    Row::Task(t) => {
                        w.byte(T_TASK);
                        w.put(&**t);
                    }
                    Row::TaskDecision { task, status } => {
                        w.byte(T_TASK_DECISION);
                        w.put(task);
                        w.put(status);
                    }
                    Row::Suggestion(s) => {
                        w.byte(T_SUGGESTION);
                        w.put(&**s);
                    }
                    Row::Participant(p) => {
                        w.byte(T_PARTICIPANT);
                        w.put(&**p);
                    }
                    Row::Mapping(m) => {
                        w.byte(T_MAPPING);
                        w.put(&**m);
                    }
                    Row::IdentifierSource(s) => {
                        w.byte(T_IDENTIFIER_SOURCE);
                        w.put(s);
                    }
                }
            }
            Op::Del(key) => {
                w.byte(OP_DEL);
                match key {
                    Key::Entity(id) => {
                        w.byte(T_ENTITY);
                        w.put(id);
                    }
                    Key::Redirect(old) => {
                        w.byte(T_REDIRECT);
                        w.put(old);
                    }
                    Key::Identifier(scheme, value) => {
                        w.byte(T_IDENTIFIER);
                        w.put(scheme);
                        w.put(value);
                    }
                    Key::Alias(entity, alias, meeting) => {
                        w.byte(T_ALIAS);
                        w.put(entity);
                        w.put(alias);
                        w.put(meeting);
                    }
                    Key::Claim(id) => {
                        w.byte(T_CLAIM);
                        w.put(id);
                    }
                    Key::Evidence(id) => {
                        w.byte(T_EVIDENCE);
                        w.put(id);
                    }
                    Key::Supersedes(claim, target, evidence) => {
                        w.byte(T_SUPERSEDES);
                        w.put(claim);
                        w.put(target);
                        w.put(evidence);
                    }
                    Key::Status(claim, seq) => {
                        w.byte(T_STATUS);
                        w.put(claim);
                        w.put(seq);
                    }
                    Key::Link(id) => {
                        w.byte(T_LINK);
                        w.put(id);
                    }
                    Key::LinkAttachment(link, entity) => {
                        w.byte(T_LINK_ATTACHMENT);
                        w.put(link);
                        w.put(entity);
                    }
                    Key::Task(id) => {
                        w.byte(T_TASK);
                        w.put(id);
                    }
                    Key::TaskDecision(task) => {
                        w.byte(T_TASK_DECISION);
                        w.put(task);
                    }
                    Key::Suggestion(id) => {
                        w.byte(T_SUGGESTION);
                        w.put(id);
                    }
                    Key::Participant(meeting, idx) => {
                        w.byte(T_PARTICIPANT);
                        w.put(meeting);
                        w.put(idx);
                    }
                    Key::Mapping(meeting, key) => {
                        w.byte(T_MAPPING);
                        w.put(meeting);
                        w.put(key);
                    }
                    Key::IdentifierSource(scheme, value, meeting, group) => {
                        w.byte(T_IDENTIFIER_SOURCE);
                        w.put(scheme);
                        w.put(value);
                        w.put(meeting);
                        w.put(group);
                    }
                }
            }
        }
    }

    fn decode(r: &mut Reader) -> Decoded<Self> {
        let op = r.byte()?;
        if op == OP_RESET {
            return Ok(Op::Reset);
        }
        if op == OP_OBSERVE {
            return Ok(Op::Observe(Box::new(EntityObserved {
                entity: r.get()?,
                observed: r.get()?,
            })));
        }
        if op == OP_DERIVE {
            return Ok(Op::Derive(Box::new(ClaimDerivedChange {
                claim: r.get()?,
                derived: r.get()?,
            })));
        }
        let table = r.byte()?;
        match op {
            OP_PUT => Ok(Op::Put(match table {
                T_ENTITY => Row::Entity(Box::new(r.get()?)),
                T_REDIRECT => Row::Redirect {
                    old: r.get()?,
                    new: r.get()?,
                },
                T_IDENTIFIER => Row::Identifier {
                    scheme: r.get()?,
                    value: r.get()?,
                    entity: r.get()?,
                },
                T_ALIAS => Row::Alias(r.get()?),
                T_CLAIM => Row::Claim(Box::new(r.get()?)),
                T_EVIDENCE => Row::Evidence(Box::new(r.get()?)),
                T_SUPERSEDES => Row::Supersedes(r.get()?),
                T_STATUS => Row::Status {
                    claim: r.get()?,
                    seq: r.get()?,
                    change: Box::new(r.get()?),
                },
                T_LINK => Row::Link(Box::new(r.get()?)),
                T_LINK_ATTACHMENT => Row::LinkAttachment(r.get()?),
                T_TASK => Row::Task(Box::new(r.get()?)),
                T_TASK_DECISION => Row::TaskDecision {
                    task: r.get()?,
                    status: r.get()?,
                },
                T_SUGGESTION => Row::Suggestion(Box::new(r.get()?)),
                T_PARTICIPANT => Row::Participant(Box::new(r.get()?)),
                T_MAPPING => Row::Mapping(Box::new(r.get()?)),
                T_IDENTIFIER_SOURCE => Row::IdentifierSource(r.get()?),
                other => return Err(DecodeError(format!("unknown table {other}"))),
            })),
            OP_DEL => Ok(Op::Del(match table {
                T_ENTITY => Key::Entity(r.get()?),
                T_REDIRECT => Key::Redirect(r.get()?),
                T_IDENTIFIER => Key::Identifier(r.get()?, r.get()?),
                T_ALIAS => Key::Alias(r.get()?, r.get()?, r.get()?),
                T_CLAIM => Key::Claim(r.get()?),
                T_EVIDENCE => Key::Evidence(r.get()?),
                T_SUPERSEDES => Key::Supersedes(r.get()?, r.get()?, r.get()?),
                T_STATUS => Key::Status(r.get()?, r.get()?),
                T_LINK => Key::Link(r.get()?),
                T_LINK_ATTACHMENT => Key::LinkAttachment(r.get()?, r.get()?),
                T_TASK => Key::Task(r.get()?),
                T_TASK_DECISION => Key::TaskDecision(r.get()?),
                T_SUGGESTION => Key::Suggestion(r.get()?),
                T_PARTICIPANT => Key::Participant(r.get()?, r.get()?),
                T_MAPPING => Key::Mapping(r.get()?, r.get()?),
                T_IDENTIFIER_SOURCE => {
                    Key::IdentifierSource(r.get()?, r.get()?, r.get()?, r.get()?)
                }
                other => return Err(DecodeError(format!("unknown table {other}"))),
            })),
            other => Err(DecodeError(format!("unknown operation {other}"))),
        }
    }
}

/// Encodes a list of operations: their count, then each.
#[cfg(test)]
pub(crate) fn encode_ops(ops: &[Op]) -> Vec<u8> {
    let mut writer = Writer::default();
    writer.put(&(ops.len() as i64));
    for op in ops {
        writer.put(op);
    }
    writer.bytes
}

/// Room a writer of operations keeps at its front for their count: the longest variable-length
/// number a count can take.
const COUNT_ROOM: usize = 10;

impl Writer {
    /// An empty writer of operations over `bytes`, whose memory (kept from an earlier write) it
    /// reuses, with room at the front for their count (`counted`).
    pub(crate) fn for_ops(mut bytes: Vec<u8>) -> Writer {
        bytes.clear();
        bytes.resize(COUNT_ROOM, 0);
        Writer { bytes }
    }

    /// Forgets the operations written, keeping the room for their count.
    pub(crate) fn restart_ops(&mut self) {
        self.bytes.truncate(COUNT_ROOM);
    }

    /// The `count` operations written since `for_ops` (or `restart_ops`), led by their count: what
    /// `encode_ops` writes, without copying the operations.
    pub(crate) fn counted(&mut self, count: usize) -> &[u8] {
        let mut head = Writer {
            bytes: Vec::with_capacity(COUNT_ROOM),
        };
        head.put(&(count as i64));
        let start = COUNT_ROOM - head.bytes.len();
        self.bytes[start..COUNT_ROOM].copy_from_slice(&head.bytes);
        &self.bytes[start..]
    }
}

/// Reads back what `encode_ops` wrote.
pub(crate) fn decode_ops(bytes: &[u8]) -> Decoded<Vec<Op>> {
    let mut reader = Reader::new(bytes);
    let count: i64 = reader.get()?;
    if count < 0 {
        return Err(DecodeError(format!("a count of {count} operations")));
    }
    let mut ops = Vec::with_capacity((count as usize).min(bytes.len()));
    for _ in 0..count {
        ops.push(reader.get()?);
    }
    if !reader.is_done() {
        return Err(DecodeError("bytes after the last operation".into()));
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::sample_entity;

    fn alias(entity: &str, alias: &str, meeting: &str) -> Alias {
        Alias {
            entity: entity.into(),
            alias: alias.into(),
            meeting: meeting.into(),
            observed_at: Ts(7),
        }
    }

    #[test]
    fn undoing_in_reverse_restores_every_table_and_index() {
        let mut k = Knowledge::default();
        k.apply(Op::Put(Row::Entity(Box::new(sample_entity("e1")))));
        k.apply(Op::Put(Row::Alias(alias("e1", "Ann", "m1"))));
        let claim = crate::conformance::sample_claim("c1", "e1");
        k.apply(Op::Put(Row::Claim(Box::new(claim.clone()))));
        let before = format!("{:?}", k.rows().collect::<Vec<_>>());
        let mut undo = Vec::new();
        let derived = ClaimDerived {
            status: ClaimStatus::Retracted,
            ..claim.derived.clone()
        };
        for op in [
            Op::Derive(Box::new(ClaimDerivedChange {
                claim: "c1".into(),
                derived: derived.clone(),
            })),
            Op::Derive(Box::new(ClaimDerivedChange {
                claim: "nothing".into(),
                derived,
            })),
            Op::Put(Row::Alias(alias("e1", "ann", "m2"))),
            Op::Put(Row::Alias(alias("e2", "Ann", "m1"))),
            Op::Del(Key::Alias("e1".into(), "Ann".into(), "m1".into())),
            Op::Put(Row::Entity(Box::new(sample_entity("e2")))),
            Op::Observe(Box::new(EntityObserved {
                entity: "e1".into(),
                observed: Observed {
                    first_observed_at: Some(Ts(1)),
                    last_observed_at: Some(Ts(99)),
                    weight_basis: 2.5,
                    weight_latest: Some(Ts(99)),
                },
            })),
            Op::Del(Key::Entity("e1".into())),
            Op::Del(Key::Entity("nothing".into())),
            Op::Observe(Box::new(EntityObserved {
                entity: "nothing".into(),
                observed: Observed::default(),
            })),
        ] {
            undo.extend(k.apply(op));
        }
        assert_eq!(k.alias_keys["ann"].len(), 2);
        assert_eq!(k.claims["c1"].derived.status, ClaimStatus::Retracted);
        for op in undo.into_iter().rev() {
            k.apply(op);
        }
        assert_eq!(format!("{:?}", k.rows().collect::<Vec<_>>()), before);
        assert!(k.index_problems().is_empty());
        assert_eq!(k.alias_keys["ann"]["e1"], 1);
        assert!(!k.aliases_by_meeting.has("m2"));
    }

    #[test]
    fn evidence_times_follow_claims_and_evidence_in_any_order() {
        use crate::conformance::{sample_claim, sample_evidence};
        let evidence = |id: &str, claim: &str, at: i64| {
            let mut row = sample_evidence(id, claim, "m1");
            row.observed_at = Ts(at);
            Op::Put(Row::Evidence(Box::new(row)))
        };
        let claim =
            |id: &str, subject: &str| Op::Put(Row::Claim(Box::new(sample_claim(id, subject))));
        let times = |k: &Knowledge, subject: &str| -> Vec<(i64, usize)> {
            let counts = k.evidence_times_by_subject.get(subject);
            counts
                .into_iter()
                .flatten()
                .map(|(at, n)| (at.0, *n))
                .collect()
        };
        let mut k = Knowledge::default();
        let mut undo = Vec::new();
        // Each step, and the times with their counts under e1 and e2 after it.
        type Counts = Vec<(i64, usize)>;
        let steps: Vec<(Op, Counts, Counts)> = vec![
            // Evidence before its claim counts once the claim is there.
            (evidence("v1", "c1", 5), vec![], vec![]),
            (claim("c1", "e1"), vec![(5, 1)], vec![]),
            (evidence("v2", "c1", 5), vec![(5, 2)], vec![]),
            (evidence("v3", "c1", 9), vec![(5, 2), (9, 1)], vec![]),
            // A claim moved to another subject takes its evidence times along.
            (claim("c1", "e2"), vec![], vec![(5, 2), (9, 1)]),
            // Evidence moved to another claim, and one observed at another time.
            (claim("c2", "e1"), vec![], vec![(5, 2), (9, 1)]),
            (evidence("v3", "c2", 9), vec![(9, 1)], vec![(5, 2)]),
            (evidence("v2", "c1", 7), vec![(9, 1)], vec![(5, 1), (7, 1)]),
            (
                Op::Del(Key::Evidence("v1".into())),
                vec![(9, 1)],
                vec![(7, 1)],
            ),
            // A claim gone leaves its evidence rows uncounted, and their removal changes nothing.
            (Op::Del(Key::Claim("c1".into())), vec![(9, 1)], vec![]),
            (Op::Del(Key::Evidence("v2".into())), vec![(9, 1)], vec![]),
            (Op::Del(Key::Evidence("v3".into())), vec![], vec![]),
        ];
        for (step, (op, e1, e2)) in steps.into_iter().enumerate() {
            undo.extend(k.apply(op));
            assert_eq!((times(&k, "e1"), times(&k, "e2")), (e1, e2), "step {step}");
            assert!(k.index_problems().is_empty(), "step {step}");
        }
        assert!(k.evidence_times_by_subject.is_empty());
        for op in undo.into_iter().rev() {
            k.apply(op);
        }
        assert!(k.evidence_times_by_subject.is_empty());
        assert!(k.index_problems().is_empty());
    }

    #[test]
    fn operations_round_trip_through_the_codec() {
        let ops = vec![
            Op::Reset,
            Op::Put(Row::Entity(Box::new(sample_entity("e1")))),
            Op::Put(Row::Alias(alias("e1", "Ann", "m1"))),
            Op::Put(Row::TaskDecision {
                task: "t".into(),
                status: TaskStatus::Done,
            }),
            Op::Del(Key::IdentifierSource(
                "email".into(),
                "a@x".into(),
                "m1".into(),
                "g".into(),
            )),
            Op::Del(Key::Status("c1".into(), 3)),
            Op::Derive(Box::new(ClaimDerivedChange {
                claim: "c1".into(),
                derived: ClaimDerived {
                    status: ClaimStatus::Superseded,
                    superseded_by: Some("c2".into()),
                    superseded_at: Some(Ts(7)),
                    ..crate::conformance::sample_claim("c1", "e1").derived
                },
            })),
            Op::Observe(Box::new(EntityObserved {
                entity: "e1".into(),
                observed: Observed {
                    first_observed_at: Some(Ts(-4)),
                    last_observed_at: None,
                    weight_basis: 0.1 + 0.2,
                    weight_latest: Some(Ts(i64::MAX)),
                },
            })),
        ];
        assert_eq!(decode_ops(&encode_ops(&ops)).unwrap(), ops);
        assert!(decode_ops(&[1, 9, 9]).is_err());
    }

    /// A write's operations are counted in place (`Writer::counted`) in a buffer the next write
    /// reuses: each time the bytes are what `encode_ops` writes, for counts of one- and two-byte
    /// lengths and after a longer write left more in the buffer.
    #[test]
    fn operations_counted_in_place_are_what_encode_ops_writes() {
        let mut writer = Writer::for_ops(vec![0xAA; 3]);
        for count in [200, 1, 64, 0, 3] {
            let ops: Vec<Op> = (0..count)
                .map(|n| Op::Put(Row::Alias(alias("e1", &format!("name {n}"), "m1"))))
                .collect();
            for op in &ops {
                writer.put(op);
            }
            assert_eq!(writer.counted(ops.len()), encode_ops(&ops).as_slice());
            assert_eq!(decode_ops(writer.counted(ops.len())).unwrap(), ops);
            writer.restart_ops();
        }
    }
}
