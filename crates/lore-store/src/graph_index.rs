//! An owner's graph adjacency held in memory (issue 8): every row the graph neighborhood reads, grouped
//! by the entity or meeting it is read for, in the order the store's graph queries return them.
//!
//! A store builds it from one scan of a read snapshot and keeps it while the database is unchanged
//! (the SQLite reader rebuilds it whenever `PRAGMA data_version` moves, see `sqlite/read_cache.rs`;
//! PostgreSQL per `owner_versions`, see `postgres/graph_scan.rs`), so each list holds exactly what the
//! matching `Tx` read would answer in that snapshot (`list_claims_linking`, `list_tasks_by_entity`,
//! the meeting-link reads), limits included; [`crate::Adjacency`] is built from them. Stores without
//! one return `None` from `Tx::find_graph_index` and the graph queries.

use std::cmp::Reverse;

use lore_core::model::*;

use crate::fast_hash::{FastMap, FastSet};
use crate::sqlite::{CLAIM_COLUMNS, ENTITY_COLUMNS, MEETING_COLUMNS, TASK_COLUMNS};
use crate::MeetingLink;

/// The statements an index is read with, in both backends' shared dialect (`?1` is the owner), in the
/// order of [`GraphRows`]' fields. Each list is ordered as the matching graph query orders its rows
/// (`read_side.rs`): claims as `list_claims_linking` (a missing observation time last), tasks by
/// creation time and id. Text compares as bytes in `from_rows` (ids are ASCII).
pub(crate) const GRAPH_SCAN_SQL: [fn() -> String; 6] = [
    || format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE owner = ?1"),
    || format!("SELECT {MEETING_COLUMNS} FROM meetings WHERE owner = ?1"),
    || {
        format!(
            "SELECT {CLAIM_COLUMNS} FROM claims WHERE owner = ?1 \
             AND (object_entity IS NOT NULL OR context_entity IS NOT NULL) \
             ORDER BY status = 'active' DESC, last_observed_at DESC NULLS LAST, id"
        )
    },
    || format!("SELECT {TASK_COLUMNS} FROM tasks WHERE owner = ?1 ORDER BY created_at, id"),
    || {
        "SELECT meeting, person_entity FROM participants \
         WHERE owner = ?1 AND person_entity IS NOT NULL"
            .to_string()
    },
    || {
        "SELECT e.meeting, c.subject, c.object_entity FROM evidence AS e \
         JOIN claims AS c ON c.owner = e.owner AND c.id = e.claim \
         WHERE e.owner = ?1 AND e.meeting IS NOT NULL"
            .to_string()
    },
];

/// The rows an index is built from, as a backend's scan reads them ([`GRAPH_SCAN_SQL`]).
pub(crate) struct GraphRows {
    pub entities: Vec<Entity>,
    pub meetings: Vec<Meeting>,
    /// Claims linking two entities, in `list_claims_linking` order.
    pub claims: Vec<Claim>,
    /// Tasks by creation time, then id.
    pub tasks: Vec<Task>,
    /// `(meeting, person entity)` of each attendance.
    pub attended: Vec<(String, String)>,
    /// `(meeting, subject, object)` of the claims each meeting's evidence supports.
    pub mentioned: Vec<(String, String, Option<String>)>,
}

/// An owner's graph: while it is built, the scanned rows grouped by the node they are read for; once
/// it is in use, only the compact adjacency and the claims (the build thread frees the rest).
#[derive(Debug, Default)]
pub struct GraphIndex {
    pub(crate) entities: FastMap<String, Entity>,
    pub(crate) meetings: FastMap<String, Meeting>,
    /// All claims that link two entities, in the graph's claim order.
    pub(crate) claims: Vec<Claim>,
    /// Per entity, positions in `claims` (ascending, so in the graph's claim order).
    pub(crate) claims_linking: FastMap<String, Vec<usize>>,
    pub(crate) tasks: Vec<Task>,
    /// Per entity, positions in `tasks` (by creation time, then id).
    pub(crate) tasks_by_entity: FastMap<String, Vec<usize>>,
    /// Per entity: its meetings, newest first, then by meeting id and relation.
    pub(crate) links_by_entity: FastMap<String, Vec<MeetingLink>>,
    /// Per meeting: its entities, by entity id and relation.
    pub(crate) links_by_meeting: FastMap<String, Vec<MeetingLink>>,
    /// The same graph numbered and ranked for fast expansion (`graph_adjacency.rs`).
    pub(crate) adjacency: crate::Adjacency,
}

impl crate::owner_builds::Settle for GraphIndex {
    /// Reads expand over the adjacency alone (and the claims, for `--valid-at`): the grouped rows it
    /// was built from would only hold memory (most of the index's). Freeing them takes long (6 s of
    /// a 42 s build at scale 100), so the build thread frees them after the index is in use.
    fn leftovers(&mut self) -> crate::owner_builds::Leftovers {
        Some(Box::new((
            std::mem::take(&mut self.entities),
            std::mem::take(&mut self.meetings),
            std::mem::take(&mut self.claims_linking),
            std::mem::take(&mut self.tasks),
            std::mem::take(&mut self.tasks_by_entity),
            std::mem::take(&mut self.links_by_entity),
            std::mem::take(&mut self.links_by_meeting),
        )))
    }
}

impl GraphIndex {
    /// Groups a snapshot's rows by the node the graph reads them for, each list in its query's order,
    /// and builds the compact adjacency.
    pub(crate) fn from_rows(rows: GraphRows) -> GraphIndex {
        // Every map is sized from the rows up front: growing them rehashed every key (a tenth of a
        // build's time).
        fn sized<V>(count: usize) -> FastMap<String, V> {
            FastMap::with_capacity_and_hasher(count, Default::default())
        }
        let mut index = GraphIndex {
            entities: sized(rows.entities.len()),
            meetings: sized(rows.meetings.len()),
            claims_linking: sized(rows.entities.len()),
            ..GraphIndex::default()
        };
        for entity in rows.entities {
            index.entities.insert(entity.id.clone(), entity);
        }
        for meeting in rows.meetings {
            index.meetings.insert(meeting.id.clone(), meeting);
        }
        for (at, claim) in rows.claims.iter().enumerate() {
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
        index.claims = rows.claims;
        index.tasks = rows.tasks;
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
        let mut links: FastSet<(String, String, &'static str)> = FastSet::with_capacity_and_hasher(
            rows.attended.len() + rows.mentioned.len(),
            Default::default(),
        );
        for (meeting, entity) in rows.attended {
            links.insert((meeting, entity, "attended"));
        }
        for (meeting, subject, object) in rows.mentioned {
            if let Some(object) = object {
                links.insert((meeting.clone(), object, "mentioned_in"));
            }
            links.insert((meeting, subject, "mentioned_in"));
        }
        let mut by_entity: FastMap<String, Vec<MeetingLink>> = sized(index.entities.len());
        let mut by_meeting: FastMap<String, Vec<MeetingLink>> = sized(index.meetings.len());
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
            let mut keyed: Vec<(Reverse<Option<lore_core::Ts>>, MeetingLink)> = links
                .drain(..)
                .map(|link| {
                    let started = index.meetings.get(&link.meeting).map(|m| m.started_at);
                    (Reverse(started), link)
                })
                .collect();
            keyed.sort_by(|a, b| {
                a.0.cmp(&b.0)
                    .then_with(|| a.1.meeting.cmp(&b.1.meeting))
                    .then_with(|| a.1.relation.cmp(&b.1.relation))
            });
            links.extend(keyed.into_iter().map(|(_, link)| link));
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
        index
    }

    /// The compact, ranked form of the same graph.
    pub fn adjacency(&self) -> &crate::Adjacency {
        &self.adjacency
    }

    /// Every claim linking two entities, in the graph's claim order.
    pub fn claims(&self) -> &[Claim] {
        &self.claims
    }

    /// `Tx::find_meeting`.
    pub(crate) fn meeting(&self, id: &str) -> Option<&Meeting> {
        self.meetings.get(id)
    }

    /// `Tx::list_meeting_links_by_entity`.
    pub(crate) fn meeting_links_by_entity(&self, entity: &str, limit: usize) -> &[MeetingLink] {
        self.links_by_entity
            .get(entity)
            .map_or(&[], |links| &links[..links.len().min(limit)])
    }

    /// `Tx::list_meeting_links_by_meeting`.
    pub(crate) fn meeting_links_by_meeting(&self, meeting: &str, limit: usize) -> &[MeetingLink] {
        self.links_by_meeting
            .get(meeting)
            .map_or(&[], |links| &links[..links.len().min(limit)])
    }
}
