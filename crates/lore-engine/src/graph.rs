//! The bounded 1–2 hop neighborhood of an entity (SPEC 5.3 `graph`, 5.6).
//!
//! Edges come only from stored facts: claims whose object or context is an entity, tasks (assignee to
//! project), and meetings (attendance, and evidence about the entity, so two entities cited by the
//! same meeting meet at its node). Display-name similarity never creates an edge. Expansion is
//! bounded: each node reads at most `SCAN_LIMIT` links, keeps its highest-weight neighbors (topic
//! weight, L19; a meeting weighs by recency the same way), and the whole graph stops at `limit` nodes;
//! `truncated` says that something was cut.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use lore_core::model::*;
use lore_core::reading::{effective_status, topic_weight, MENTION_WEIGHT};
use lore_core::temporal::is_valid_at;
use lore_core::Ts;
use lore_store::{GraphIndex, MeetingLink, Tx};
use serde::Serialize;

use crate::resolve::find_entity;
use crate::search::entity_weight;
use crate::{Engine, EngineError, EngineResult};

/// Links read per node before ranking; bounds the cost of expanding a hub.
pub const SCAN_LIMIT: usize = 500;
pub const MAX_NODES: usize = 500;

#[derive(Clone, Debug)]
pub struct GraphOptions {
    pub hops: u8,
    /// Most nodes in the result, the center included.
    pub limit: usize,
    pub valid_at: Option<Ts>,
}

impl Default for GraphOptions {
    fn default() -> GraphOptions {
        GraphOptions {
            hops: 1,
            limit: 50,
            valid_at: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GraphNode {
    pub id: String,
    /// An entity kind, or `meeting`.
    pub kind: String,
    pub name: String,
    pub hop: u8,
    pub weight: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GraphEdge {
    /// The claim behind the edge (`null` for task and meeting edges).
    pub claim: Option<String>,
    pub from: String,
    pub to: String,
    /// A claim's predicate, `task`, `attended` or `mentioned_in`.
    pub predicate: String,
    /// A claim's or task's status; `null` for meeting edges.
    pub status: Option<String>,
    /// A text value carried by the edge (a role, a task title).
    pub label: Option<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GraphView {
    pub center: String,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    pub truncated: bool,
}

/// A neighbor found from one node, with the edge that reaches it.
struct Link {
    neighbor: String,
    neighbor_is_meeting: bool,
    edge: GraphEdge,
}

impl Engine {
    pub fn graph(
        &self,
        owner: &str,
        entity: &str,
        options: &GraphOptions,
    ) -> EngineResult<GraphView> {
        if !(1..=2).contains(&options.hops) {
            return Err(EngineError::Invalid(format!(
                "--hops must be 1 or 2, not {}",
                options.hops
            )));
        }
        if !(1..=MAX_NODES).contains(&options.limit) {
            return Err(EngineError::Invalid(format!(
                "--limit must be between 1 and {MAX_NODES}, not {}",
                options.limit
            )));
        }
        let now = self.now();
        self.read(owner, |tx| {
            let center = find_entity(tx, entity)?;
            // The store's in-memory adjacency when it keeps one (same answers as the reads below).
            let index = tx.find_graph_index()?;
            let mut graph = Builder {
                index,
                options,
                now,
                nodes: BTreeMap::new(),
                order: Vec::new(),
                edges: HashMap::new(),
                truncated: false,
            };
            let weight = entity_weight(tx, &center, now)?;
            graph.add_node(GraphNode {
                id: center.id.clone(),
                kind: center.kind.to_string(),
                name: center.display_name().to_string(),
                hop: 0,
                weight: round(weight),
            });
            let mut frontier = vec![(center.id.clone(), false)];
            for hop in 1..=options.hops {
                let mut next = Vec::new();
                for (node, is_meeting) in &frontier {
                    let links = if *is_meeting {
                        graph.meeting_links(tx, node)?
                    } else {
                        graph.entity_links(tx, node)?
                    };
                    next.extend(graph.admit(tx, links, hop)?);
                }
                frontier = next;
            }
            let mut nodes: Vec<GraphNode> = graph
                .order
                .iter()
                .map(|id| graph.nodes[id].clone())
                .collect();
            nodes.sort_by(|a, b| {
                a.hop
                    .cmp(&b.hop)
                    .then(b.weight.total_cmp(&a.weight))
                    .then(a.id.cmp(&b.id))
            });
            let mut edges: Vec<(EdgeKey, GraphEdge)> = graph.edges.into_iter().collect();
            edges.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            Ok(GraphView {
                center: center.id.clone(),
                nodes,
                edges: edges.into_iter().map(|(_, edge)| edge).collect(),
                truncated: graph.truncated,
            })
        })
    }
}

fn round(weight: f64) -> f64 {
    (weight * 1000.0).round() / 1000.0
}

type EdgeKey = (String, String, String, String);

struct Builder<'o> {
    index: Option<Arc<GraphIndex>>,
    options: &'o GraphOptions,
    now: Ts,
    nodes: BTreeMap<String, GraphNode>,
    order: Vec<String>,
    /// Edges by `(claim, from, to, predicate)`; sorted by that key when the view is built.
    edges: HashMap<EdgeKey, GraphEdge>,
    truncated: bool,
}

impl Builder<'_> {
    fn add_node(&mut self, node: GraphNode) {
        self.order.push(node.id.clone());
        self.nodes.insert(node.id.clone(), node);
    }

    fn add_edge(&mut self, edge: GraphEdge) {
        let key = (
            edge.claim.clone().unwrap_or_default(),
            edge.from.clone(),
            edge.to.clone(),
            edge.predicate.clone(),
        );
        self.edges.entry(key).or_insert(edge);
    }

    /// Whether a claim is an edge in this reading: active now, or valid at `valid_at`.
    fn claim_counts(&self, claim: &Claim) -> bool {
        match self.options.valid_at {
            Some(at) => is_valid_at(&claim.derived, at),
            None => effective_status(&claim.derived, self.now) == ClaimStatus::Active,
        }
    }

    fn entity_links(&mut self, tx: &mut dyn Tx, entity: &str) -> EngineResult<Vec<Link>> {
        let mut links = Vec::new();
        let index = self.index.clone();
        let owned_claims;
        let claims: Vec<&Claim> = match &index {
            Some(index) => index.claims_linking(entity, SCAN_LIMIT),
            None => {
                owned_claims = tx.list_claims_linking(entity, SCAN_LIMIT)?;
                owned_claims.iter().collect()
            }
        };
        let mut seen = claims.len();
        // With the graph full, `admit` only records edges to present nodes and whether a neighbor
        // was cut: links to absent neighbors are not built, only counted as a cut.
        let full = self.nodes.len() >= self.options.limit;
        let mut cut = false;
        let nodes = &self.nodes;
        let mut absent = |neighbor: &str| {
            let skip = full && !nodes.contains_key(neighbor);
            cut |= skip;
            skip
        };
        for claim in claims.into_iter().filter(|claim| self.claim_counts(claim)) {
            let status = Some(effective_status(&claim.derived, self.now).to_string());
            let mut push = |neighbor: &str, from: &str, to: &str| {
                if absent(neighbor) {
                    return;
                }
                links.push(Link {
                    neighbor: neighbor.to_string(),
                    neighbor_is_meeting: false,
                    edge: GraphEdge {
                        claim: Some(claim.id.clone()),
                        from: from.to_string(),
                        to: to.to_string(),
                        predicate: claim.predicate.clone(),
                        status: status.clone(),
                        label: claim.value_text.clone(),
                    },
                })
            };
            if claim.subject == entity {
                for other in claim
                    .object_entity
                    .iter()
                    .chain(claim.context_entity.iter())
                {
                    push(other, &claim.subject, other);
                }
            } else {
                // The entity is the claim's object or context: the edge comes from the subject.
                push(&claim.subject, &claim.subject, entity);
            }
        }
        let owned_tasks;
        let tasks: Vec<&Task> = match &index {
            Some(index) => index.tasks_by_entity(entity),
            None => {
                owned_tasks = tx.list_tasks_by_entity(entity)?;
                owned_tasks.iter().collect()
            }
        };
        seen += tasks.len();
        for task in tasks {
            if self.options.valid_at.is_some_and(|at| task.created_at > at) {
                continue;
            }
            let (Some(assignee), Some(project)) = (&task.assignee, &task.project) else {
                continue;
            };
            let neighbor = if assignee == entity {
                project
            } else {
                assignee
            };
            if absent(neighbor) {
                continue;
            }
            links.push(Link {
                neighbor: neighbor.clone(),
                neighbor_is_meeting: false,
                edge: GraphEdge {
                    claim: None,
                    from: assignee.clone(),
                    to: project.clone(),
                    predicate: "task".into(),
                    status: Some(task.status.to_string()),
                    label: Some(task.title.clone()),
                },
            });
        }
        let owned_meetings;
        let meetings: &[MeetingLink] = match &index {
            Some(index) => index.meeting_links_by_entity(entity, SCAN_LIMIT),
            None => {
                owned_meetings = tx.list_meeting_links_by_entity(entity, SCAN_LIMIT)?;
                &owned_meetings
            }
        };
        let scan_cut = seen >= SCAN_LIMIT || meetings.len() >= SCAN_LIMIT;
        for link in meetings {
            if let Some(at) = self.options.valid_at {
                let started = match &index {
                    Some(index) => index.meeting(&link.meeting).map(|m| m.started_at),
                    None => tx.find_meeting(&link.meeting)?.map(|m| m.started_at),
                };
                if started.is_none_or(|started| started > at) {
                    continue;
                }
            }
            if absent(&link.meeting) {
                continue;
            }
            links.push(Link {
                neighbor: link.meeting.clone(),
                neighbor_is_meeting: true,
                edge: GraphEdge {
                    claim: None,
                    from: entity.to_string(),
                    to: link.meeting.clone(),
                    predicate: link.relation.clone(),
                    status: None,
                    label: None,
                },
            });
        }
        if cut || scan_cut {
            self.truncated = true;
        }
        Ok(links)
    }

    fn meeting_links(&mut self, tx: &mut dyn Tx, meeting: &str) -> EngineResult<Vec<Link>> {
        let index = self.index.clone();
        let owned;
        let links: &[MeetingLink] = match &index {
            Some(index) => index.meeting_links_by_meeting(meeting, SCAN_LIMIT),
            None => {
                owned = tx.list_meeting_links_by_meeting(meeting, SCAN_LIMIT)?;
                &owned
            }
        };
        if links.len() >= SCAN_LIMIT {
            self.truncated = true;
        }
        // As in `entity_links`: with the graph full, only links to present nodes matter.
        let full = self.nodes.len() >= self.options.limit;
        if full
            && links
                .iter()
                .any(|link| !self.nodes.contains_key(&link.entity))
        {
            self.truncated = true;
        }
        Ok(links
            .iter()
            .filter(|link| !full || self.nodes.contains_key(&link.entity))
            .map(|link| Link {
                neighbor: link.entity.clone(),
                neighbor_is_meeting: false,
                edge: GraphEdge {
                    claim: None,
                    from: link.entity.clone(),
                    to: link.meeting.clone(),
                    predicate: link.relation.clone(),
                    status: None,
                    label: None,
                },
            })
            .collect())
    }

    /// Ranks the new neighbors by weight, admits as many as the node limit allows, and records the
    /// edges between admitted nodes. Returns the admitted neighbors, to expand at the next hop.
    fn admit(
        &mut self,
        tx: &mut dyn Tx,
        links: Vec<Link>,
        hop: u8,
    ) -> EngineResult<Vec<(String, bool)>> {
        let mut candidates: BTreeMap<String, GraphNode> = BTreeMap::new();
        let mut kinds: BTreeMap<String, bool> = BTreeMap::new();
        let full = self.nodes.len() >= self.options.limit;
        for link in &links {
            if full {
                // No room left: nothing to weigh, only whether something was cut.
                if !self.nodes.contains_key(&link.neighbor) {
                    self.truncated = true;
                }
                continue;
            }
            if self.nodes.contains_key(&link.neighbor) || candidates.contains_key(&link.neighbor) {
                continue;
            }
            let index = self.index.clone();
            let node = if link.neighbor_is_meeting {
                let owned;
                let meeting = match &index {
                    Some(index) => index.meeting(&link.neighbor),
                    None => {
                        owned = tx.find_meeting(&link.neighbor)?;
                        owned.as_ref()
                    }
                };
                let Some(meeting) = meeting else {
                    continue;
                };
                GraphNode {
                    id: meeting.id.clone(),
                    kind: "meeting".into(),
                    name: meeting.title.clone(),
                    hop,
                    weight: round(topic_weight(
                        [(meeting.started_at, MENTION_WEIGHT)],
                        self.now,
                    )),
                }
            } else {
                let owned;
                let entity = match &index {
                    Some(index) => index.entity(&link.neighbor),
                    None => {
                        owned = tx.find_entity(&link.neighbor)?;
                        owned.as_ref()
                    }
                };
                let Some(entity) = entity else {
                    continue;
                };
                if entity.status == EntityStatus::Merged {
                    continue;
                }
                GraphNode {
                    id: entity.id.clone(),
                    kind: entity.kind.to_string(),
                    name: entity.display_name().to_string(),
                    hop,
                    weight: round(entity_weight(tx, entity, self.now)?),
                }
            };
            kinds.insert(node.id.clone(), link.neighbor_is_meeting);
            candidates.insert(node.id.clone(), node);
        }
        let mut ranked: Vec<GraphNode> = candidates.into_values().collect();
        ranked.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.id.cmp(&b.id)));
        let room = self.options.limit.saturating_sub(self.nodes.len());
        if ranked.len() > room {
            self.truncated = true;
            ranked.truncate(room);
        }
        let admitted: Vec<(String, bool)> = ranked
            .iter()
            .map(|node| (node.id.clone(), kinds[&node.id]))
            .collect();
        for node in ranked {
            self.add_node(node);
        }
        for link in links {
            if self.nodes.contains_key(&link.edge.from) && self.nodes.contains_key(&link.edge.to) {
                self.add_edge(link.edge);
            }
        }
        Ok(admitted)
    }
}
