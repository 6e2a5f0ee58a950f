//! The graph neighborhood over a store's in-memory adjacency ([`lore_store::Adjacency`]): the same
//! expansion as `graph.rs` (same links in the same order, same admission, same edges), done on node
//! numbers. Each expanded node costs one pass over its own links; admission walks the node's
//! neighbors in their precomputed rank order and stops once the room is used, so a bounded expansion
//! of a hub does not weigh or sort its whole fan-out. Membership tests use generation-stamped marks
//! kept per thread, so a read allocates only its answer.

use std::cell::RefCell;
use std::sync::Arc;

use lore_core::model::ClaimStatus;
use lore_core::reading::{
    effective_status, status_at, topic_weight, weight_from_basis, MENTION_WEIGHT,
};
use lore_core::temporal::is_valid_at;
use lore_core::Ts;
use lore_store::{GraphIndex, LinkFilter};

use crate::graph::{round, GraphOptions, GraphView};
use crate::EngineResult;

/// Generation-stamped membership marks, reused across reads on one thread.
#[derive(Default)]
struct Marks {
    generation: u32,
    /// Stamps the candidates of one node's expansion.
    round: u32,
    in_graph: Vec<u32>,
    candidate: Vec<u32>,
    edge_taken: Vec<u32>,
}

impl Marks {
    /// A fresh generation over arrays large enough for `nodes` nodes and `keys` edge keys.
    fn next(&mut self, nodes: usize, keys: usize) -> u32 {
        if self.in_graph.len() < nodes {
            self.in_graph.resize(nodes, 0);
            self.candidate.resize(nodes, 0);
        }
        if self.edge_taken.len() < keys {
            self.edge_taken.resize(keys, 0);
        }
        if self.generation >= u32::MAX - 1 {
            self.generation = 0;
            self.in_graph.fill(0);
            self.candidate.fill(0);
            self.edge_taken.fill(0);
        }
        self.generation += 1;
        self.generation
    }

    /// A fresh stamp for one node's candidates.
    fn next_round(&mut self) -> u32 {
        if self.round >= u32::MAX - 1 {
            self.round = 0;
            self.candidate.fill(0);
        }
        self.round += 1;
        self.round
    }
}

thread_local! {
    static MARKS: RefCell<Marks> = RefCell::new(Marks::default());
}

/// The neighborhood of `center` read from the adjacency. `observed_weight` gives an entity's weight
/// when its stored basis cannot (an observation after `now`), as `search::entity_weight` does.
pub(crate) fn expand(
    index: &Arc<GraphIndex>,
    center: u32,
    center_weight: f64,
    options: &GraphOptions,
    now: Ts,
    observed_weight: &mut dyn FnMut(&str) -> EngineResult<f64>,
) -> EngineResult<GraphView> {
    MARKS.with(|marks| {
        let marks = &mut *marks.borrow_mut();
        let adjacency = index.adjacency();
        let generation = marks.next(adjacency.nodes.len(), adjacency.key_count());
        let claims = index.claims();
        // Whether a link counts in this reading, and the status its edge shows.
        let counts = |filter: LinkFilter| -> Option<Option<&'static str>> {
            match filter {
                LinkFilter::Claim {
                    at,
                    status,
                    valid_to,
                } => match options.valid_at {
                    Some(when) => {
                        let derived = &claims[at as usize].derived;
                        is_valid_at(derived, when)
                            .then(|| Some(effective_status(derived, now).as_str()))
                    }
                    None => {
                        let effective = status_at(status, valid_to, now);
                        (effective == ClaimStatus::Active).then(|| Some(effective.as_str()))
                    }
                },
                LinkFilter::Task(created) => options
                    .valid_at
                    .is_none_or(|at| created <= at)
                    .then_some(None),
                LinkFilter::Meeting(started) => match options.valid_at {
                    Some(at) => started.is_some_and(|s| s <= at).then_some(None),
                    None => Some(None),
                },
                LinkFilter::Always => Some(None),
            }
        };
        let mut order: Vec<(u32, u8)> = vec![(center, 0)];
        marks.in_graph[center as usize] = generation;
        // Chosen edges: (key, edge, status).
        let mut edges: Vec<(u32, u32, Option<&'static str>)> = Vec::new();
        let mut truncated = false;
        let mut frontier = vec![center];
        for hop in 1..=options.hops {
            let mut next = Vec::new();
            for &node in &frontier {
                let links = adjacency.links.of(node);
                truncated |= adjacency.scan_cut[node as usize];
                let full = order.len() >= options.limit;
                // Candidates: counted links to admissible nodes not yet in the graph.
                let stamp = marks.next_round();
                let mut candidates = 0usize;
                for link in links {
                    if counts(link.filter).is_none() {
                        continue;
                    }
                    let neighbor = link.neighbor as usize;
                    if marks.in_graph[neighbor] == generation {
                        continue;
                    }
                    if full {
                        truncated = true;
                    } else if link.admissible && marks.candidate[neighbor] != stamp {
                        marks.candidate[neighbor] = stamp;
                        candidates += 1;
                    }
                }
                if candidates > 0 {
                    let room = options.limit - order.len();
                    if candidates > room {
                        truncated = true;
                    }
                    let mut admitted = 0usize;
                    for &neighbor in adjacency.ranked.of(node) {
                        if admitted == room.min(candidates) {
                            break;
                        }
                        if marks.candidate[neighbor as usize] == stamp {
                            marks.candidate[neighbor as usize] = 0;
                            marks.in_graph[neighbor as usize] = generation;
                            order.push((neighbor, hop));
                            next.push(neighbor);
                            admitted += 1;
                        }
                    }
                }
                for link in links {
                    if marks.in_graph[link.neighbor as usize] != generation {
                        continue;
                    }
                    let Some(status) = counts(link.filter) else {
                        continue;
                    };
                    let key = link.key as usize;
                    if marks.edge_taken[key] != generation {
                        marks.edge_taken[key] = generation;
                        edges.push((link.key, link.edge, status));
                    }
                }
            }
            frontier = next;
        }

        let mut nodes = Vec::with_capacity(order.len());
        for (at, hop) in order {
            let info = &adjacency.nodes[at as usize];
            let weight = if at == center {
                center_weight
            } else if let Some(started) = info.started_at {
                topic_weight([(started, MENTION_WEIGHT)], now)
            } else {
                match weight_from_basis(info.basis, info.weight_latest, now) {
                    Some(weight) => weight,
                    None => observed_weight(&info.id)?,
                }
            };
            nodes.push((info.id_rank, at, hop, round(weight)));
        }
        nodes.sort_unstable_by(
            |&(a_rank, _, a_hop, a_weight), &(b_rank, _, b_hop, b_weight)| {
                a_hop
                    .cmp(&b_hop)
                    .then(b_weight.total_cmp(&a_weight))
                    .then(a_rank.cmp(&b_rank))
            },
        );
        // A node's links are in key order, so a one-hop read's edges arrive sorted, which the sort
        // finds in one pass.
        edges.sort_unstable_by_key(|&(key, _, _)| key);
        Ok(GraphView::from_index(
            index.clone(),
            adjacency.nodes[center as usize].id.clone(),
            nodes
                .into_iter()
                .map(|(_, at, hop, weight)| (at, hop, weight))
                .collect(),
            edges
                .into_iter()
                .map(|(_, at, status)| (at, status.or(adjacency.edges[at as usize].status)))
                .collect(),
            truncated,
        ))
    })
}
