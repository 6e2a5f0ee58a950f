//! Builds an owner's [`GraphIndex`] from one scan of the read snapshot. Each list is ordered exactly as
//! the matching graph query orders its rows (`read_side.rs`), so the index answers what the queries
//! would: claims in `CLAIMS_LINKING` order (the scan sorts them the same way), tasks by creation time
//! and id, an entity's meetings newest first, a meeting's entities by id and relation. Text compares
//! as bytes on both sides (SQLite's BINARY collation, Rust's `str` order).

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

use rusqlite::params;

use super::rows::*;
use super::{SqliteTx, CLAIM_COLUMNS, ENTITY_COLUMNS, MEETING_COLUMNS, TASK_COLUMNS};
use crate::{GraphIndex, MeetingLink, StoreResult};

impl SqliteTx<'_> {
    pub(super) fn scan_graph_index(&self) -> StoreResult<GraphIndex> {
        let mut index = GraphIndex::default();
        for entity in self.all(
            &format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE owner = ?1"),
            params![self.owner],
            entity_row,
        )? {
            index.entities.insert(entity.id.clone(), entity);
        }
        for meeting in self.all(
            &format!("SELECT {MEETING_COLUMNS} FROM meetings WHERE owner = ?1"),
            params![self.owner],
            meeting_row,
        )? {
            index.meetings.insert(meeting.id.clone(), meeting);
        }
        // Claims linking two entities, in the order of `CLAIMS_LINKING`.
        let claims = self.all(
            &format!(
                "SELECT {CLAIM_COLUMNS} FROM claims WHERE owner = ?1 \
                 AND (object_entity IS NOT NULL OR context_entity IS NOT NULL) \
                 ORDER BY status = 'active' DESC, last_observed_at DESC, id"
            ),
            params![self.owner],
            claim_row,
        )?;
        for (at, claim) in claims.iter().enumerate() {
            let mut linked: Vec<&String> = vec![&claim.subject];
            linked.extend(claim.object_entity.iter());
            linked.extend(claim.context_entity.iter());
            linked.sort();
            linked.dedup();
            for entity in linked {
                index
                    .claims_linking
                    .entry(entity.clone())
                    .or_default()
                    .push(at);
            }
        }
        index.claims = claims;
        // Tasks of an entity (as assignee or project), by creation time and id.
        index.tasks = self.all(
            &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE owner = ?1 ORDER BY created_at, id"),
            params![self.owner],
            task_row,
        )?;
        for (at, task) in index.tasks.iter().enumerate() {
            let mut linked: Vec<&String> =
                task.assignee.iter().chain(task.project.iter()).collect();
            linked.dedup();
            for entity in linked {
                index
                    .tasks_by_entity
                    .entry(entity.clone())
                    .or_default()
                    .push(at);
            }
        }
        // Meeting links: attendance, and the subjects and objects of claims a meeting's evidence supports.
        let mut links: HashSet<(String, String, &'static str)> = HashSet::new();
        for (meeting, entity) in self.all(
            "SELECT meeting, person_entity FROM participants WHERE owner = ?1 AND person_entity IS NOT NULL",
            params![self.owner],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
        )? {
            links.insert((meeting, entity, "attended"));
        }
        for (meeting, subject, object) in self.all(
            "SELECT DISTINCT e.meeting, c.subject, c.object_entity FROM evidence AS e \
             JOIN claims AS c ON c.owner = e.owner AND c.id = e.claim \
             WHERE e.owner = ?1 AND e.meeting IS NOT NULL",
            params![self.owner],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?,
                ))
            },
        )? {
            if let Some(object) = object {
                links.insert((meeting.clone(), object, "mentioned_in"));
            }
            links.insert((meeting, subject, "mentioned_in"));
        }
        let mut by_entity: HashMap<String, Vec<MeetingLink>> = HashMap::new();
        let mut by_meeting: HashMap<String, Vec<MeetingLink>> = HashMap::new();
        for (meeting, entity, relation) in links {
            let link = MeetingLink {
                meeting,
                entity,
                relation: relation.to_string(),
            };
            by_meeting
                .entry(link.meeting.clone())
                .or_default()
                .push(link.clone());
            by_entity.entry(link.entity.clone()).or_default().push(link);
        }
        for links in by_entity.values_mut() {
            // `ORDER BY started_at DESC, meeting, relation`; a missing meeting (NULL) sorts last.
            let started =
                |link: &MeetingLink| index.meetings.get(&link.meeting).map(|m| m.started_at);
            links.sort_by(|a, b| {
                Reverse(started(a))
                    .cmp(&Reverse(started(b)))
                    .then_with(|| a.meeting.cmp(&b.meeting))
                    .then_with(|| a.relation.cmp(&b.relation))
            });
        }
        for links in by_meeting.values_mut() {
            links.sort_by(|a, b| {
                a.entity
                    .cmp(&b.entity)
                    .then_with(|| a.relation.cmp(&b.relation))
            });
        }
        index.links_by_entity = by_entity;
        index.links_by_meeting = by_meeting;
        index.build_adjacency();
        Ok(index)
    }
}
