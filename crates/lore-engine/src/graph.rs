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
use lore_core::reading::{
    effective_status, mention_basis, topic_weight, weight_from_basis, MENTION_WEIGHT,
};
use lore_core::temporal::is_valid_at;
use lore_core::Ts;
use lore_store::{GraphIndex, Tx};
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

/// One node of a neighborhood, read from its [`GraphView`].
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct GraphNode<'a> {
    pub id: &'a str,
    /// An entity kind, or `meeting`.
    pub kind: &'static str,
    pub name: &'a str,
    pub hop: u8,
    pub weight: f64,
}

/// One edge of a neighborhood, read from its [`GraphView`].
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct GraphEdge<'a> {
    /// The claim behind the edge (`null` for task and meeting edges).
    pub claim: Option<&'a str>,
    pub from: &'a str,
    pub to: &'a str,
    /// A claim's predicate, `task`, `attended` or `mentioned_in`.
    pub predicate: &'a str,
    /// A claim's or task's status; `null` for meeting edges.
    pub status: Option<&'static str>,
    /// A text value carried by the edge (a role, a task title).
    pub label: Option<&'a str>,
}

/// A node as the query path builds it.
#[derive(Clone, Debug)]
pub(crate) struct NodeRow {
    pub id: Arc<str>,
    pub kind: &'static str,
    pub name: Arc<str>,
    pub hop: u8,
    pub weight: f64,
}

/// An edge as the query path builds it.
#[derive(Clone, Debug)]
pub(crate) struct EdgeRow {
    pub claim: Option<Arc<str>>,
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub predicate: Arc<str>,
    pub status: Option<&'static str>,
    pub label: Option<Arc<str>>,
}

/// The neighborhood of one entity: nodes (the center first, then by hop, weight and id) and edges
/// (by claim, ends and predicate). Read through [`GraphView::nodes`] and [`GraphView::edges`]; it
/// serializes as `{"center", "nodes", "edges", "truncated"}`.
///
/// An answer from the store's in-memory adjacency holds node and edge numbers into it (one shared
/// reference for the whole answer) instead of a shared string per id, name and predicate: a hub's
/// answer has hundreds of nodes and edges, and taking and releasing a reference per string cost
/// more than the expansion itself.
#[derive(Clone)]
pub struct GraphView {
    center: Arc<str>,
    backing: Backing,
    pub truncated: bool,
}

#[derive(Clone)]
enum Backing {
    Rows {
        nodes: Vec<NodeRow>,
        edges: Vec<EdgeRow>,
    },
    Index {
        index: Arc<GraphIndex>,
        /// (node number, hop, rounded weight)
        nodes: Vec<(u32, u8, f64)>,
        /// (edge number, the status this reading shows)
        edges: Vec<(u32, Option<&'static str>)>,
    },
}

impl GraphView {
    pub(crate) fn from_rows(
        center: Arc<str>,
        nodes: Vec<NodeRow>,
        edges: Vec<EdgeRow>,
        truncated: bool,
    ) -> GraphView {
        GraphView {
            center,
            backing: Backing::Rows { nodes, edges },
            truncated,
        }
    }

    pub(crate) fn from_index(
        index: Arc<GraphIndex>,
        center: Arc<str>,
        nodes: Vec<(u32, u8, f64)>,
        edges: Vec<(u32, Option<&'static str>)>,
        truncated: bool,
    ) -> GraphView {
        GraphView {
            center,
            backing: Backing::Index {
                index,
                nodes,
                edges,
            },
            truncated,
        }
    }

    /// The id of the entity the neighborhood is around.
    pub fn center(&self) -> &str {
        &self.center
    }

    pub fn node_count(&self) -> usize {
        match &self.backing {
            Backing::Rows { nodes, .. } => nodes.len(),
            Backing::Index { nodes, .. } => nodes.len(),
        }
    }

    pub fn edge_count(&self) -> usize {
        match &self.backing {
            Backing::Rows { edges, .. } => edges.len(),
            Backing::Index { edges, .. } => edges.len(),
        }
    }

    /// The `at`th node (`at < node_count()`).
    pub fn node(&self, at: usize) -> GraphNode<'_> {
        match &self.backing {
            Backing::Rows { nodes, .. } => {
                let node = &nodes[at];
                GraphNode {
                    id: &node.id,
                    kind: node.kind,
                    name: &node.name,
                    hop: node.hop,
                    weight: node.weight,
                }
            }
            Backing::Index { index, nodes, .. } => {
                let (number, hop, weight) = nodes[at];
                let info = &index.adjacency().nodes[number as usize];
                GraphNode {
                    id: &info.id,
                    kind: info.kind,
                    name: &info.name,
                    hop,
                    weight,
                }
            }
        }
    }

    /// The `at`th edge (`at < edge_count()`).
    pub fn edge(&self, at: usize) -> GraphEdge<'_> {
        match &self.backing {
            Backing::Rows { edges, .. } => {
                let edge = &edges[at];
                GraphEdge {
                    claim: edge.claim.as_deref(),
                    from: &edge.from,
                    to: &edge.to,
                    predicate: &edge.predicate,
                    status: edge.status,
                    label: edge.label.as_deref(),
                }
            }
            Backing::Index { index, edges, .. } => {
                let (number, status) = edges[at];
                let adjacency = index.adjacency();
                let edge = &adjacency.edges[number as usize];
                GraphEdge {
                    claim: edge.claim.as_deref(),
                    from: &adjacency.nodes[edge.from as usize].id,
                    to: &adjacency.nodes[edge.to as usize].id,
                    predicate: &edge.predicate,
                    status,
                    label: edge.label.as_deref(),
                }
            }
        }
    }

    pub fn nodes(&self) -> impl ExactSizeIterator<Item = GraphNode<'_>> + Clone + '_ {
        (0..self.node_count()).map(|at| self.node(at))
    }

    pub fn edges(&self) -> impl ExactSizeIterator<Item = GraphEdge<'_>> + Clone + '_ {
        (0..self.edge_count()).map(|at| self.edge(at))
    }

    /// A node's display name by id (the id itself when it is not in the answer).
    pub fn name_of<'a>(&'a self, id: &'a str) -> &'a str {
        self.nodes()
            .find(|node| node.id == id)
            .map_or(id, |node| node.name)
    }
}

impl PartialEq for GraphView {
    fn eq(&self, other: &GraphView) -> bool {
        self.center == other.center
            && self.truncated == other.truncated
            && self.nodes().eq(other.nodes())
            && self.edges().eq(other.edges())
    }
}

impl std::fmt::Debug for GraphView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphView")
            .field("center", &self.center)
            .field("nodes", &self.nodes().collect::<Vec<_>>())
            .field("edges", &self.edges().collect::<Vec<_>>())
            .field("truncated", &self.truncated)
            .finish()
    }
}

impl Serialize for GraphView {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Seq<I>(I);
        impl<I: Iterator + Clone> Serialize for Seq<I>
        where
            I::Item: Serialize,
        {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.clone())
            }
        }
        let mut state = serializer.serialize_struct("GraphView", 4)?;
        state.serialize_field("center", &*self.center)?;
        state.serialize_field("nodes", &Seq(self.nodes()))?;
        state.serialize_field("edges", &Seq(self.edges()))?;
        state.serialize_field("truncated", &self.truncated)?;
        state.end()
    }
}

/// A neighbor found from one node, with the edge that reaches it.
struct Link {
    neighbor: String,
    neighbor_is_meeting: bool,
    edge: EdgeRow,
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
            // The store's in-memory adjacency when it keeps one (same answers as the reads below).
            let index = tx.find_graph_index()?;
            let mut center = None;
            if let Some(index) = &index {
                let adjacency = index.adjacency();
                // An entity named by its id is found in the adjacency alone, without its row.
                let by_id = adjacency.node(entity.trim()).filter(|&at| {
                    let info = &adjacency.nodes[at as usize];
                    info.admissible && !info.is_meeting
                });
                let at = match by_id {
                    Some(at) => Some(at),
                    None => {
                        let found = find_entity(tx, entity)?;
                        let at = adjacency.node(&found.id);
                        center = Some(found);
                        at
                    }
                };
                if let Some(at) = at {
                    // The node's basis is the entity's stored one: `entity_weight`, without the row.
                    let info = &adjacency.nodes[at as usize];
                    let weight = match weight_from_basis(info.basis, info.weight_latest, now) {
                        Some(weight) => weight,
                        None => observed_weight(tx, &info.id, now)?,
                    };
                    let mut observed = |id: &str| observed_weight(tx, id, now);
                    return crate::graph_expand::expand(
                        index,
                        at,
                        weight,
                        options,
                        now,
                        &mut observed,
                    );
                }
            }
            let center = match center {
                Some(center) => center,
                None => find_entity(tx, entity)?,
            };
            let weight = entity_weight(tx, &center, now)?;
            let mut graph = Builder {
                options,
                now,
                nodes: BTreeMap::new(),
                order: Vec::new(),
                edges: HashMap::new(),
                truncated: false,
            };
            graph.add_node(NodeRow {
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
            let mut nodes: Vec<NodeRow> = graph
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
            let mut edges: Vec<(EdgeKey, EdgeRow)> = graph.edges.into_iter().collect();
            edges.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            Ok(GraphView::from_rows(
                Arc::from(center.id.as_str()),
                nodes,
                edges.into_iter().map(|(_, edge)| edge).collect(),
                graph.truncated,
            ))
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
    nodes: BTreeMap<String, NodeRow>,
    order: Vec<String>,
    /// Edges by `(claim, from, to, predicate)`; sorted by that key when the view is built.
    edges: HashMap<EdgeKey, EdgeRow>,
    truncated: bool,
}

impl Builder<'_> {
    fn add_node(&mut self, node: NodeRow) {
        self.order.push(node.id.to_string());
        self.nodes.insert(node.id.to_string(), node);
    }

    fn add_edge(&mut self, edge: EdgeRow) {
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
                    edge: EdgeRow {
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
                edge: EdgeRow {
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
                edge: EdgeRow {
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
                edge: EdgeRow {
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
        let mut candidates: BTreeMap<String, (f64, bool, NodeRow)> = BTreeMap::new();
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
                    NodeRow {
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
                    NodeRow {
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
        let mut ranked: Vec<(f64, bool, NodeRow)> = candidates.into_values().collect();
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
