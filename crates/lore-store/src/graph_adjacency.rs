//! The graph index's compact form: every entity and meeting numbered, each node's links in the order
//! the graph neighborhood reads them, each node's distinct neighbors ranked once by weight, and every
//! edge's sort position precomputed, so that expanding a node costs integer work over its own links
//! and a bounded expansion reads only as many ranked neighbors as it admits.
//!
//! Built from the [`GraphIndex`] lists (which mirror the store's graph queries, limits included), so it
//! answers what the queries would. Ranking uses the L19 weight basis: an entity's stored
//! `weight_basis`, a meeting's one mention at its start. Every reading at a time `now` multiplies all
//! bases by the same positive factor, so the order by basis is the order by weight at any `now` not
//! before the latest observation; the graph ranks by basis at every reading time (an observation in
//! the future of the reading counts with its full weight in the weight shown, not in the ranking).

use std::sync::Arc;

use lore_core::model::*;
use lore_core::reading::mention_basis;
use lore_core::Ts;

use crate::fast_hash::FastMap;
use crate::GraphIndex;

/// Links read per node, as the store's graph queries limit them (`list_claims_linking` and the
/// meeting-link reads); the engine's graph neighborhood uses the same bound.
pub const GRAPH_SCAN_LIMIT: usize = 500;

/// One entity or meeting; ids referenced by a link but absent from the index get a node that is never
/// admitted (`admissible` false), as the query path skips what it cannot find.
#[derive(Debug)]
pub struct GraphNodeInfo {
    pub id: Arc<str>,
    pub name: Arc<str>,
    /// An entity kind's name, or `meeting`.
    pub kind: &'static str,
    pub is_meeting: bool,
    /// Present, and not merged into another entity.
    pub admissible: bool,
    /// The L19 weight basis used to rank (see the module docs).
    pub basis: f64,
    pub weight_latest: Option<Ts>,
    /// A meeting's start (for `valid_at` and its weight).
    pub started_at: Option<Ts>,
    /// Position of `id` among all node ids in byte order (the tie-break of every ranking).
    pub id_rank: u32,
}

/// What decides whether a link counts in a reading.
#[derive(Clone, Copy, Debug)]
pub enum LinkFilter {
    /// A claim (index into `GraphIndex::claims`): active now, or valid at `valid_at`. The two fields a
    /// reading at `now` needs are copied here, so that the common reading does not visit the claim.
    Claim {
        at: u32,
        status: ClaimStatus,
        valid_to: Option<Ts>,
    },
    /// A task created at this time: counts unless created after `valid_at`.
    Task(Ts),
    /// An entity's meeting: counts unless it started after `valid_at` (`None`: meeting unknown).
    Meeting(Option<Ts>),
    /// A meeting's entity: always counts.
    Always,
}

/// One link of a node, with what an expansion reads of its far end and its edge copied in, so that
/// walking a node's links reads one contiguous run of memory.
#[derive(Clone, Copy, Debug)]
pub struct AdjLink {
    pub neighbor: u32,
    pub edge: u32,
    /// The edge's `EdgeInfo::key`.
    pub key: u32,
    /// The neighbor's `GraphNodeInfo::admissible`.
    pub admissible: bool,
    pub filter: LinkFilter,
}

impl AdjLink {
    /// A link whose key and admissibility are filled in once every edge and node is known.
    fn new(neighbor: u32, edge: u32, filter: LinkFilter) -> AdjLink {
        AdjLink {
            neighbor,
            edge,
            key: 0,
            admissible: false,
            filter,
        }
    }
}

/// An edge as the graph reports it. `key` is the position of `(claim, from, to, predicate)` in byte
/// order among all edge keys; edges sharing a key (two tasks of one assignee and project) are told
/// apart by whichever a reading meets first.
#[derive(Debug)]
pub struct EdgeInfo {
    pub key: u32,
    pub claim: Option<Arc<str>>,
    pub from: u32,
    pub to: u32,
    pub predicate: Arc<str>,
    /// A task's status; a claim's is read at query time.
    pub status: Option<&'static str>,
    pub label: Option<Arc<str>>,
}

/// Per-node lists stored end to end in one vector (node `n`'s items are
/// `items[start[n]..start[n + 1]]`): one allocation, and neighbors' lists near each other.
#[derive(Debug)]
pub struct Runs<T> {
    items: Vec<T>,
    start: Vec<u32>,
}

impl<T> Default for Runs<T> {
    fn default() -> Self {
        Runs {
            items: Vec::new(),
            start: Vec::new(),
        }
    }
}

impl<T> Runs<T> {
    fn from_lists(lists: Vec<Vec<T>>) -> Runs<T> {
        let mut runs = Runs {
            items: Vec::with_capacity(lists.iter().map(Vec::len).sum()),
            start: Vec::with_capacity(lists.len() + 1),
        };
        runs.start.push(0);
        for list in lists {
            runs.items.extend(list);
            runs.start.push(runs.items.len() as u32);
        }
        runs
    }

    /// Node `node`'s items (none for a node out of range).
    pub fn of(&self, node: u32) -> &[T] {
        let node = node as usize;
        match (self.start.get(node), self.start.get(node + 1)) {
            (Some(&from), Some(&to)) => &self.items[from as usize..to as usize],
            _ => &[],
        }
    }
}

#[derive(Debug, Default)]
pub struct Adjacency {
    pub nodes: Vec<GraphNodeInfo>,
    pub node_of: FastMap<Arc<str>, u32>,
    pub edges: Vec<EdgeInfo>,
    /// Per node, its links in query order.
    pub links: Runs<AdjLink>,
    /// Per node, its distinct neighbors by basis (descending), then id.
    pub ranked: Runs<u32>,
    /// Per node, whether its link reads reached the scan limit.
    pub scan_cut: Vec<bool>,
    key_count: usize,
}

impl Adjacency {
    /// Distinct edge keys (every `EdgeInfo::key` is below it).
    pub fn key_count(&self) -> usize {
        self.key_count
    }

    pub fn node(&self, id: &str) -> Option<u32> {
        self.node_of.get(id).copied()
    }
}

/// `(claim position in GraphIndex::claims, from, to, predicate number)`.
type EdgeKey = (Option<u32>, u32, u32, u32);

/// Interns ids while the adjacency is built.
struct Builder<'i> {
    index: &'i GraphIndex,
    adjacency: Adjacency,
    edge_of: FastMap<(u32, Option<u32>), u32>,
    key_of: FastMap<EdgeKey, u32>,
    keys: Vec<EdgeKey>,
    /// Interned predicates, numbered by first use.
    predicate_of: FastMap<String, u32>,
    predicates: Vec<Arc<str>>,
    /// Each claim's id, shared by its edges.
    claim_ids: Vec<Option<Arc<str>>>,
}

impl Builder<'_> {
    fn node(&mut self, id: &str) -> u32 {
        if let Some(&at) = self.adjacency.node_of.get(id) {
            return at;
        }
        let id: Arc<str> = Arc::from(id);
        let at = self.adjacency.nodes.len() as u32;
        self.adjacency.nodes.push(GraphNodeInfo {
            id: id.clone(),
            name: id.clone(),
            kind: "unknown",
            is_meeting: false,
            admissible: false,
            basis: 0.0,
            weight_latest: None,
            started_at: None,
            id_rank: 0,
        });
        self.adjacency.node_of.insert(id, at);
        at
    }

    fn predicate(&mut self, name: &str) -> u32 {
        if let Some(&at) = self.predicate_of.get(name) {
            return at;
        }
        let at = self.predicates.len() as u32;
        self.predicates.push(Arc::from(name));
        self.predicate_of.insert(name.to_string(), at);
        at
    }

    fn claim_id(&mut self, position: u32) -> Arc<str> {
        let slot = &mut self.claim_ids[position as usize];
        slot.get_or_insert_with(|| Arc::from(self.index.claims[position as usize].id.as_str()))
            .clone()
    }

    /// The edge with this key (and task, for task edges), created on first use.
    #[allow(clippy::too_many_arguments)]
    fn edge(
        &mut self,
        claim: Option<u32>,
        from: u32,
        to: u32,
        predicate: &str,
        task: Option<u32>,
        status: Option<&'static str>,
        label: Option<&str>,
    ) -> u32 {
        let predicate = self.predicate(predicate);
        let key = (claim, from, to, predicate);
        // Keys are numbered by first use here and renumbered in byte order in `finish`.
        let key_at = match self.key_of.get(&key) {
            Some(&at) => at,
            None => {
                let at = self.keys.len() as u32;
                self.keys.push(key);
                self.key_of.insert(key, at);
                at
            }
        };
        if let Some(&edge) = self.edge_of.get(&(key_at, task)) {
            return edge;
        }
        let edge = self.adjacency.edges.len() as u32;
        let claim = claim.map(|position| self.claim_id(position));
        self.adjacency.edges.push(EdgeInfo {
            key: key_at,
            claim,
            from,
            to,
            predicate: self.predicates[predicate as usize].clone(),
            status,
            label: label.map(Arc::from),
        });
        self.edge_of.insert((key_at, task), edge);
        edge
    }
}

impl GraphIndex {
    /// Builds the compact form from the index's lists (called once per index, after the scan).
    pub(crate) fn build_adjacency(&mut self) {
        // Sized up front (growing rehashes every key): an edge per claim end and per meeting link.
        let nodes = self.entities.len() + self.meetings.len();
        let edges = 2 * self.claims.len()
            + self.tasks.len()
            + self.links_by_entity.values().map(Vec::len).sum::<usize>();
        let mut adjacency = Adjacency::default();
        adjacency.nodes.reserve(nodes);
        adjacency.node_of.reserve(nodes);
        adjacency.edges.reserve(edges);
        let mut builder = Builder {
            index: self,
            adjacency,
            edge_of: FastMap::with_capacity_and_hasher(edges, Default::default()),
            key_of: FastMap::with_capacity_and_hasher(edges, Default::default()),
            keys: Vec::with_capacity(edges),
            predicate_of: FastMap::default(),
            predicates: Vec::new(),
            claim_ids: vec![None; self.claims.len()],
        };
        let mut entity_ids: Vec<&String> = builder.index.entities.keys().collect();
        entity_ids.sort();
        for id in entity_ids {
            let entity = &builder.index.entities[id];
            let at = builder.node(id);
            let node = &mut builder.adjacency.nodes[at as usize];
            node.name = Arc::from(entity.display_name());
            node.kind = entity.kind.as_str();
            node.admissible = entity.status != EntityStatus::Merged;
            node.basis = entity.weight_basis;
            node.weight_latest = entity.weight_latest;
        }
        let mut meeting_ids: Vec<&String> = builder.index.meetings.keys().collect();
        meeting_ids.sort();
        for id in meeting_ids {
            let meeting = &builder.index.meetings[id];
            let at = builder.node(id);
            let node = &mut builder.adjacency.nodes[at as usize];
            node.name = Arc::from(meeting.title.as_str());
            node.kind = "meeting";
            node.is_meeting = true;
            node.admissible = true;
            node.basis = mention_basis(meeting.started_at);
            node.started_at = Some(meeting.started_at);
        }
        let known = builder.adjacency.nodes.len();
        let mut links: Vec<Vec<AdjLink>> = Vec::with_capacity(known);
        let mut scan_cut = Vec::with_capacity(known);
        for at in 0..known {
            let (node_links, cut) = if builder.adjacency.nodes[at].is_meeting {
                meeting_node_links(&mut builder, at as u32)
            } else {
                entity_node_links(&mut builder, at as u32)
            };
            links.push(node_links);
            scan_cut.push(cut);
        }
        // Nodes met only as a link's far end have no links of their own.
        links.resize_with(builder.adjacency.nodes.len(), Vec::new);
        scan_cut.resize(builder.adjacency.nodes.len(), false);
        let Builder {
            index,
            mut adjacency,
            keys,
            predicates,
            ..
        } = builder;
        finish(&mut adjacency, &keys, &index.claims, &predicates);
        // Each link carries its edge's final key and its neighbor's admissibility.
        for link in links.iter_mut().flatten() {
            link.key = adjacency.edges[link.edge as usize].key;
            link.admissible = adjacency.nodes[link.neighbor as usize].admissible;
        }
        // A node's links in key order: the edges a read takes from them then come out sorted.
        for node_links in &mut links {
            node_links.sort_by_key(|link| link.key);
        }
        let ranked = links
            .iter()
            .map(|links| {
                let mut neighbors: Vec<u32> = links.iter().map(|link| link.neighbor).collect();
                let nodes = &adjacency.nodes;
                neighbors.sort_unstable_by(|&a, &b| {
                    let (a, b) = (&nodes[a as usize], &nodes[b as usize]);
                    b.basis.total_cmp(&a.basis).then(a.id_rank.cmp(&b.id_rank))
                });
                neighbors.dedup();
                neighbors
            })
            .collect();
        let order = locality_order(&links);
        renumber(&mut adjacency, &mut links, ranked, scan_cut, &order);
        self.adjacency = adjacency;
    }
}

/// Node numbers in breadth-first order from the best-linked node of each part of the graph still
/// unnumbered: a node's neighbors get numbers near each other, so their links lie together in
/// `Adjacency::links`, and a neighborhood reads a stretch of memory about its own size however large
/// the whole graph is (a graph of ten separate communities keeps each community in its own tenth).
/// Returns the old number of each new one.
fn locality_order(links: &[Vec<AdjLink>]) -> Vec<u32> {
    let count = links.len();
    let mut seeds: Vec<u32> = (0..count as u32).collect();
    seeds.sort_by_key(|&node| (std::cmp::Reverse(links[node as usize].len()), node));
    let mut numbered = vec![false; count];
    let mut order = Vec::with_capacity(count);
    for seed in seeds {
        if numbered[seed as usize] {
            continue;
        }
        numbered[seed as usize] = true;
        let mut head = order.len();
        order.push(seed);
        while head < order.len() {
            let node = order[head] as usize;
            head += 1;
            for link in &links[node] {
                if !numbered[link.neighbor as usize] {
                    numbered[link.neighbor as usize] = true;
                    order.push(link.neighbor);
                }
            }
        }
    }
    order
}

/// Renumbers every node so that new node `n` is old node `order[n]`, and stores the per-node lists
/// in that order.
fn renumber(
    adjacency: &mut Adjacency,
    links: &mut [Vec<AdjLink>],
    mut ranked: Vec<Vec<u32>>,
    scan_cut: Vec<bool>,
    order: &[u32],
) {
    let mut new_of = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    let mut old_nodes: Vec<Option<GraphNodeInfo>> = std::mem::take(&mut adjacency.nodes)
        .into_iter()
        .map(Some)
        .collect();
    adjacency.nodes = order
        .iter()
        .map(|&old| {
            old_nodes[old as usize]
                .take()
                .expect("each node numbered once")
        })
        .collect();
    for number in adjacency.node_of.values_mut() {
        *number = new_of[*number as usize];
    }
    for edge in &mut adjacency.edges {
        edge.from = new_of[edge.from as usize];
        edge.to = new_of[edge.to as usize];
    }
    let mut new_links = Vec::with_capacity(order.len());
    let mut new_ranked = Vec::with_capacity(order.len());
    for &old in order {
        let mut node_links = std::mem::take(&mut links[old as usize]);
        for link in &mut node_links {
            link.neighbor = new_of[link.neighbor as usize];
        }
        new_links.push(node_links);
        let mut node_ranked = std::mem::take(&mut ranked[old as usize]);
        for neighbor in &mut node_ranked {
            *neighbor = new_of[*neighbor as usize];
        }
        new_ranked.push(node_ranked);
    }
    adjacency.links = Runs::from_lists(new_links);
    adjacency.ranked = Runs::from_lists(new_ranked);
    adjacency.scan_cut = order.iter().map(|&old| scan_cut[old as usize]).collect();
}

/// Each of `count` items' position in the order `compare` gives.
fn rank_by(count: usize, compare: impl Fn(usize, usize) -> std::cmp::Ordering) -> Vec<u32> {
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_unstable_by(|&a, &b| compare(a, b));
    let mut rank = vec![0u32; count];
    for (position, at) in order.into_iter().enumerate() {
        rank[at] = position as u32;
    }
    rank
}

/// Numbers node ids and edge keys in byte order.
fn finish(adjacency: &mut Adjacency, keys: &[EdgeKey], claims: &[Claim], predicates: &[Arc<str>]) {
    let mut by_id: Vec<u32> = (0..adjacency.nodes.len() as u32).collect();
    by_id.sort_unstable_by(|&a, &b| {
        adjacency.nodes[a as usize]
            .id
            .cmp(&adjacency.nodes[b as usize].id)
    });
    for (rank, &at) in by_id.iter().enumerate() {
        adjacency.nodes[at as usize].id_rank = rank as u32;
    }
    // Each part of a key ranked once, so the keys sort as integers: a claim id (none sorts first, as
    // the empty string would), the two node ids, the predicate.
    let claim_rank = rank_by(claims.len(), |a, b| claims[a].id.cmp(&claims[b].id));
    let predicate_rank = rank_by(predicates.len(), |a, b| predicates[a].cmp(&predicates[b]));
    let nodes = &adjacency.nodes;
    let sort_key = |key: &EdgeKey| {
        (
            key.0.map_or(0, |claim| claim_rank[claim as usize] + 1),
            nodes[key.1 as usize].id_rank,
            nodes[key.2 as usize].id_rank,
            predicate_rank[key.3 as usize],
        )
    };
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by_key(|&at| sort_key(&keys[at as usize]));
    adjacency.key_count = keys.len();
    let mut rank_of = vec![0u32; keys.len()];
    for (rank, &at) in order.iter().enumerate() {
        rank_of[at as usize] = rank as u32;
    }
    for edge in &mut adjacency.edges {
        edge.key = rank_of[edge.key as usize];
    }
}

/// An entity's links as `Builder::entity_links` of the engine reads them: claims linking it (first
/// `GRAPH_SCAN_LIMIT`), its tasks with both an assignee and a project, its meetings (first
/// `GRAPH_SCAN_LIMIT`).
fn entity_node_links(builder: &mut Builder<'_>, at: u32) -> (Vec<AdjLink>, bool) {
    let index = builder.index;
    let id = builder.adjacency.nodes[at as usize].id.clone();
    let mut links = Vec::new();
    let claims = index.claims_linking.get(&*id).map_or(&[][..], |claims| {
        &claims[..claims.len().min(GRAPH_SCAN_LIMIT)]
    });
    for &position in claims {
        let claim = &index.claims[position];
        let filter = LinkFilter::Claim {
            at: position as u32,
            status: claim.derived.status,
            valid_to: claim.derived.valid_to,
        };
        // (neighbor, edge from, edge to): from the subject to each object or context, or from the
        // subject to this entity when it is the claim's object or context.
        let ends: Vec<(u32, u32, u32)> = if *claim.subject == *id {
            claim
                .object_entity
                .iter()
                .chain(claim.context_entity.iter())
                .map(|other| {
                    let neighbor = builder.node(other);
                    (neighbor, at, neighbor)
                })
                .collect()
        } else {
            let neighbor = builder.node(&claim.subject);
            vec![(neighbor, neighbor, at)]
        };
        for (neighbor, from, to) in ends {
            let edge = builder.edge(
                Some(position as u32),
                from,
                to,
                &claim.predicate,
                None,
                None,
                claim.value_text.as_deref(),
            );
            links.push(AdjLink::new(neighbor, edge, filter));
        }
    }
    let tasks = index
        .tasks_by_entity
        .get(&*id)
        .map_or(&[][..], Vec::as_slice);
    let seen = claims.len() + tasks.len();
    for &position in tasks {
        let task = &index.tasks[position];
        let (Some(assignee), Some(project)) = (&task.assignee, &task.project) else {
            continue;
        };
        let (assignee, project) = (builder.node(assignee), builder.node(project));
        let neighbor = if assignee == at { project } else { assignee };
        let position = position as u32;
        let edge = builder.edge(
            None,
            assignee,
            project,
            "task",
            Some(position),
            Some(task.status.as_str()),
            Some(&task.title),
        );
        links.push(AdjLink::new(
            neighbor,
            edge,
            LinkFilter::Task(task.created_at),
        ));
    }
    let meetings = index.meeting_links_by_entity(&id, GRAPH_SCAN_LIMIT);
    for link in meetings {
        let started = index.meeting(&link.meeting).map(|m| m.started_at);
        let neighbor = builder.node(&link.meeting);
        let edge = builder.edge(None, at, neighbor, &link.relation, None, None, None);
        links.push(AdjLink::new(neighbor, edge, LinkFilter::Meeting(started)));
    }
    let cut = seen >= GRAPH_SCAN_LIMIT || meetings.len() >= GRAPH_SCAN_LIMIT;
    (links, cut)
}

/// A meeting's entities (first `GRAPH_SCAN_LIMIT`).
fn meeting_node_links(builder: &mut Builder<'_>, at: u32) -> (Vec<AdjLink>, bool) {
    let index = builder.index;
    let id = builder.adjacency.nodes[at as usize].id.clone();
    let meeting_links = index.meeting_links_by_meeting(&id, GRAPH_SCAN_LIMIT);
    let mut links = Vec::with_capacity(meeting_links.len());
    for link in meeting_links {
        let neighbor = builder.node(&link.entity);
        let edge = builder.edge(None, neighbor, at, &link.relation, None, None, None);
        links.push(AdjLink::new(neighbor, edge, LinkFilter::Always));
    }
    (links, meeting_links.len() >= GRAPH_SCAN_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(pairs: &[(u32, u32)], count: usize) -> Vec<Vec<AdjLink>> {
        let mut links = vec![Vec::new(); count];
        for &(a, b) in pairs {
            links[a as usize].push(AdjLink::new(b, 0, LinkFilter::Always));
            links[b as usize].push(AdjLink::new(a, 0, LinkFilter::Always));
        }
        links
    }

    /// Two communities whose nodes are numbered alternately come out each in one run of numbers,
    /// each read breadth-first from its best-linked node; every node is numbered once, isolated
    /// ones last.
    #[test]
    fn locality_order_keeps_each_community_together() {
        // Even nodes: a star around 0 with a chain from 6; odd nodes: a star around 1; 9, 11 and 12
        // have no links.
        let pairs = [
            (0, 2),
            (0, 4),
            (0, 6),
            (6, 8),
            (8, 10),
            (1, 3),
            (1, 5),
            (1, 7),
        ];
        let order = locality_order(&links(&pairs, 13));
        assert_eq!(order, vec![0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11, 12]);
    }
}
