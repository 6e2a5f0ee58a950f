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
use lore_core::reading::{effective_status, mention_basis, topic_weight, MENTION_WEIGHT};
use lore_core::temporal::is_valid_at;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;

use crate::resolve::find_entity;
use crate::search::{entity_weight, observed_weight};
use crate::{Engine, EngineError, EngineResult};

/// Links read per node before ranking; bounds the cost of expanding a hub.
pub const SCAN_LIMIT: usize = lore_store::GRAPH_SCAN_LIMIT;
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
    pub id: Arc<str>,
    /// An entity kind, or `meeting`.
    pub kind: &'static str,
    pub name: Arc<str>,
    pub hop: u8,
    pub weight: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GraphEdge {
    /// The claim behind the edge (`null` for task and meeting edges).
    pub claim: Option<Arc<str>>,
    pub from: Arc<str>,
    pub to: Arc<str>,
    /// A claim's predicate, `task`, `attended` or `mentioned_in`.
    pub predicate: Arc<str>,
    /// A claim's or task's status; `null` for meeting edges.
    pub status: Option<&'static str>,
    /// A text value carried by the edge (a role, a task title).
    pub label: Option<Arc<str>>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GraphView {
    pub center: Arc<str>,
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
            let weight = entity_weight(tx, &center, now)?;
            if let Some(index) = tx.find_graph_index()? {
                if let Some(at) = index.adjacency().node(&center.id) {
                    let mut observed = |id: &str| observed_weight(tx, id, now);
                    return crate::graph_expand::expand(
                        &index,
                        at,
                        weight,
                        options,
                        now,
                        &mut observed,
                    );
                }
            }
            let mut graph = Builder {
                options,
                now,
                nodes: BTreeMap::new(),
                order: Vec::new(),
                edges: HashMap::new(),
                truncated: false,
            };
            graph.add_node(GraphNode {
                id: Arc::from(center.id.as_str()),
                kind: center.kind.as_str(),
                name: Arc::from(center.display_name()),
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
                center: Arc::from(center.id.as_str()),
                nodes,
                edges: edges.into_iter().map(|(_, edge)| edge).collect(),
                truncated: graph.truncated,
            })
        })
    }
}

pub(crate) fn round(weight: f64) -> f64 {
    (weight * 1000.0).round() / 1000.0
}

type EdgeKey = (String, String, String, String);

/// The neighborhood read with the store's graph queries (no in-memory adjacency).
struct Builder<'o> {
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
        self.order.push(node.id.to_string());
        self.nodes.insert(node.id.to_string(), node);
    }

    fn add_edge(&mut self, edge: GraphEdge) {
        let key = (
            edge.claim.as_deref().unwrap_or_default().to_string(),
            edge.from.to_string(),
            edge.to.to_string(),
            edge.predicate.to_string(),
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
        let claims = tx.list_claims_linking(entity, SCAN_LIMIT)?;
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
        for claim in claims.iter().filter(|claim| self.claim_counts(claim)) {
            let status = Some(effective_status(&claim.derived, self.now).as_str());
            let mut push = |neighbor: &str, from: &str, to: &str| {
                if absent(neighbor) {
                    return;
                }
                links.push(Link {
                    neighbor: neighbor.to_string(),
                    neighbor_is_meeting: false,
                    edge: GraphEdge {
                        claim: Some(Arc::from(claim.id.as_str())),
                        from: Arc::from(from),
                        to: Arc::from(to),
                        predicate: Arc::from(claim.predicate.as_str()),
                        status,
                        label: claim.value_text.as_deref().map(Arc::from),
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
        let tasks = tx.list_tasks_by_entity(entity)?;
        seen += tasks.len();
        for task in &tasks {
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
                    from: Arc::from(assignee.as_str()),
                    to: Arc::from(project.as_str()),
                    predicate: Arc::from("task"),
                    status: Some(task.status.as_str()),
                    label: Some(Arc::from(task.title.as_str())),
                },
            });
        }
        let meetings = tx.list_meeting_links_by_entity(entity, SCAN_LIMIT)?;
        let scan_cut = seen >= SCAN_LIMIT || meetings.len() >= SCAN_LIMIT;
        for link in &meetings {
            if let Some(at) = self.options.valid_at {
                let started = tx.find_meeting(&link.meeting)?.map(|m| m.started_at);
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
                    from: Arc::from(entity),
                    to: Arc::from(link.meeting.as_str()),
                    predicate: Arc::from(link.relation.as_str()),
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
        let links = tx.list_meeting_links_by_meeting(meeting, SCAN_LIMIT)?;
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
                    from: Arc::from(link.entity.as_str()),
                    to: Arc::from(link.meeting.as_str()),
                    predicate: Arc::from(link.relation.as_str()),
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
        // Each candidate with its rank and whether it is a meeting. The rank is the L19 weight basis
        // (an entity's stored one, a meeting's one mention at its start): at any reading time every
        // weight is its basis times one common factor, so this is the order by exact weight, and unlike
        // rounded weights it does not depend on when the graph is read.
        let mut candidates: BTreeMap<String, (f64, bool, GraphNode)> = BTreeMap::new();
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
            let node = if link.neighbor_is_meeting {
                let Some(meeting) = tx.find_meeting(&link.neighbor)? else {
                    continue;
                };
                let weight = topic_weight([(meeting.started_at, MENTION_WEIGHT)], self.now);
                (
                    mention_basis(meeting.started_at),
                    GraphNode {
                        id: Arc::from(meeting.id.as_str()),
                        kind: "meeting",
                        name: Arc::from(meeting.title.as_str()),
                        hop,
                        weight: round(weight),
                    },
                )
            } else {
                let Some(entity) = tx.find_entity(&link.neighbor)? else {
                    continue;
                };
                if entity.status == EntityStatus::Merged {
                    continue;
                }
                let weight = entity_weight(tx, &entity, self.now)?;
                (
                    entity.weight_basis,
                    GraphNode {
                        id: Arc::from(entity.id.as_str()),
                        kind: entity.kind.as_str(),
                        name: Arc::from(entity.display_name()),
                        hop,
                        weight: round(weight),
                    },
                )
            };
            let (rank, node) = node;
            candidates.insert(node.id.to_string(), (rank, link.neighbor_is_meeting, node));
        }
        let mut ranked: Vec<(f64, bool, GraphNode)> = candidates.into_values().collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.id.cmp(&b.2.id)));
        let room = self.options.limit.saturating_sub(self.nodes.len());
        if ranked.len() > room {
            self.truncated = true;
            ranked.truncate(room);
        }
        let admitted: Vec<(String, bool)> = ranked
            .iter()
            .map(|(_, is_meeting, node)| (node.id.to_string(), *is_meeting))
            .collect();
        for (_, _, node) in ranked {
            self.add_node(node);
        }
        for link in links {
            if self.nodes.contains_key(&*link.edge.from) && self.nodes.contains_key(&*link.edge.to)
            {
                self.add_edge(link.edge);
            }
        }
        Ok(admitted)
    }
}
