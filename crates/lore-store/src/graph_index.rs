//! An owner's graph adjacency held in memory (issue 8): every row the graph neighborhood reads, grouped
//! by the entity or meeting it is read for, in the order the store's graph queries return them.
//!
//! A store builds it from one scan of a read snapshot and keeps it while the database is unchanged
//! (the SQLite reader rebuilds it whenever `PRAGMA data_version` moves, see `sqlite/read_cache.rs`), so
//! each accessor answers exactly what the matching `Tx` read would answer in that snapshot:
//! [`GraphIndex::claims_linking`] is `list_claims_linking`, [`GraphIndex::tasks_by_entity`] is
//! `list_tasks_by_entity`, and so on, limits included. Stores without one return `None` from
//! `Tx::find_graph_index` and the graph queries as before.

use std::collections::HashMap;

use lore_core::model::*;

use crate::MeetingLink;

#[derive(Debug, Default)]
pub struct GraphIndex {
    pub(crate) entities: HashMap<String, Entity>,
    pub(crate) meetings: HashMap<String, Meeting>,
    /// All claims that link two entities, in the graph's claim order.
    pub(crate) claims: Vec<Claim>,
    /// Per entity, positions in `claims` (ascending, so in the graph's claim order).
    pub(crate) claims_linking: HashMap<String, Vec<usize>>,
    pub(crate) tasks: Vec<Task>,
    /// Per entity, positions in `tasks` (by creation time, then id).
    pub(crate) tasks_by_entity: HashMap<String, Vec<usize>>,
    /// Per entity: its meetings, newest first, then by meeting id and relation.
    pub(crate) links_by_entity: HashMap<String, Vec<MeetingLink>>,
    /// Per meeting: its entities, by entity id and relation.
    pub(crate) links_by_meeting: HashMap<String, Vec<MeetingLink>>,
    /// The same graph numbered and ranked for fast expansion (`graph_adjacency.rs`).
    pub(crate) adjacency: crate::Adjacency,
}

impl GraphIndex {
    /// The compact, ranked form of the same graph.
    pub fn adjacency(&self) -> &crate::Adjacency {
        &self.adjacency
    }

    /// Every claim linking two entities, in the graph's claim order.
    pub fn claims(&self) -> &[Claim] {
        &self.claims
    }

    /// `Tx::find_entity`.
    pub fn entity(&self, id: &str) -> Option<&Entity> {
        self.entities.get(id)
    }

    /// `Tx::find_meeting`.
    pub fn meeting(&self, id: &str) -> Option<&Meeting> {
        self.meetings.get(id)
    }

    /// `Tx::list_claims_linking`: claims whose object or context is the entity, or whose subject it is
    /// when they have an object or context; active first, then newest observation, then id.
    pub fn claims_linking(&self, entity: &str, limit: usize) -> Vec<&Claim> {
        self.claims_linking.get(entity).map_or_else(Vec::new, |at| {
            at.iter().take(limit).map(|&i| &self.claims[i]).collect()
        })
    }

    /// `Tx::list_tasks_by_entity`.
    pub fn tasks_by_entity(&self, entity: &str) -> Vec<&Task> {
        self.tasks_by_entity
            .get(entity)
            .map_or_else(Vec::new, |at| at.iter().map(|&i| &self.tasks[i]).collect())
    }

    /// `Tx::list_meeting_links_by_entity`.
    pub fn meeting_links_by_entity(&self, entity: &str, limit: usize) -> &[MeetingLink] {
        self.links_by_entity
            .get(entity)
            .map_or(&[], |links| &links[..links.len().min(limit)])
    }

    /// `Tx::list_meeting_links_by_meeting`.
    pub fn meeting_links_by_meeting(&self, meeting: &str, limit: usize) -> &[MeetingLink] {
        self.links_by_meeting
            .get(meeting)
            .map_or(&[], |links| &links[..links.len().min(limit)])
    }

    /// Rows held, for the memo's size bound.
    pub fn len(&self) -> usize {
        self.entities.len()
            + self.meetings.len()
            + self.claims.len()
            + self.tasks.len()
            + self.links_by_entity.values().map(Vec::len).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
