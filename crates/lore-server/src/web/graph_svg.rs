//! The neighborhood graph as SVG, laid out on the server: the center in the middle, each hop on its
//! own circle, a hop-2 node placed near the hop-1 nodes it hangs from. Nodes link to their pages;
//! claim edges link to the connection inspector.

use std::collections::BTreeMap;
use std::f64::consts::TAU;

use lore_engine::GraphView;
use maud::{html, Markup};

use super::pages::predicate_label;

const RADII: [f64; 3] = [0.0, 170.0, 320.0];
/// Hop-1 meetings sit inside the hop-1 ring, so that entities keep the ring to themselves.
const MEETING_RADIUS: f64 = 95.0;
/// Room around the outermost ring for labels.
const MARGIN: f64 = 120.0;

fn short(name: &str) -> String {
    let mut out: String = name.chars().take(22).collect();
    if name.chars().count() > 22 {
        out.push('…');
    }
    out
}

/// Positions of the nodes, by id.
fn layout(graph: &GraphView) -> BTreeMap<&str, (f64, f64)> {
    let mut positions = BTreeMap::new();
    positions.insert(graph.center(), (0.0, 0.0));
    let mut angles: BTreeMap<&str, f64> = BTreeMap::new();
    let ring = |hop: u8| -> Vec<lore_engine::GraphNode> {
        graph
            .nodes()
            .filter(|n| n.hop == hop && n.id != graph.center())
            .collect()
    };
    // Hop-1 entities spread evenly on their ring; hop-1 meetings on a smaller ring inside it.
    let first = ring(1);
    for group in [
        first
            .iter()
            .filter(|n| n.kind != "meeting")
            .collect::<Vec<_>>(),
        first
            .iter()
            .filter(|n| n.kind == "meeting")
            .collect::<Vec<_>>(),
    ] {
        // Meetings sit half a step off the entities' spokes, so that no meeting lies on an edge.
        let offset = match group.first() {
            Some(node) if node.kind == "meeting" => TAU / (2.0 * group.len().max(1) as f64),
            _ => 0.0,
        };
        for (index, node) in group.iter().enumerate() {
            let angle = TAU * index as f64 / group.len().max(1) as f64 - TAU / 4.0 + offset;
            angles.insert(node.id, angle);
        }
    }
    // Hop-2 nodes sorted by the mean angle of the hop-1 nodes they connect to, then spread evenly.
    let mut second: Vec<(f64, lore_engine::GraphNode)> = ring(2)
        .into_iter()
        .map(|node| {
            let parents: Vec<f64> = graph
                .edges()
                .filter_map(|e| {
                    if e.from == node.id {
                        angles.get(e.to).copied()
                    } else if e.to == node.id {
                        angles.get(e.from).copied()
                    } else {
                        None
                    }
                })
                .collect();
            let mean = if parents.is_empty() {
                0.0
            } else {
                parents.iter().sum::<f64>() / parents.len() as f64
            };
            (mean, node)
        })
        .collect();
    second.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.id.cmp(b.1.id)));
    for (index, (_, node)) in second.iter().enumerate() {
        let angle = TAU * index as f64 / second.len().max(1) as f64 - TAU / 4.0;
        angles.insert(node.id, angle);
    }
    for node in graph.nodes() {
        if node.id == graph.center() {
            continue;
        }
        let radius = if node.hop == 1 && node.kind == "meeting" {
            MEETING_RADIUS
        } else {
            RADII[usize::from(node.hop.min(2))]
        };
        let angle = angles.get(node.id).copied().unwrap_or(0.0);
        positions.insert(node.id, (radius * angle.cos(), radius * angle.sin()));
    }
    positions
}

fn round(value: f64) -> String {
    format!("{value:.1}")
}

/// The SVG drawing.
pub fn draw(graph: &GraphView) -> Markup {
    let positions = layout(graph);
    let outer = if graph.nodes().any(|n| n.hop >= 2) {
        RADII[2]
    } else {
        RADII[1]
    };
    let half = outer + MARGIN;
    let names: BTreeMap<&str, &str> = graph.nodes().map(|n| (n.id, n.name)).collect();
    // The center first, then entities, then meetings.
    let mut nodes: Vec<lore_engine::GraphNode> = graph.nodes().collect();
    nodes.sort_by_key(|n| (n.id != graph.center(), n.kind == "meeting", n.hop));
    html! {
        figure.graph {
            svg data-testid="graph" role="group" aria-label="Connection graph" viewBox={ (-half) " " (-half) " " (2.0 * half) " " (2.0 * half) } xmlns="http://www.w3.org/2000/svg" {
                @for ring in RADII[1..].iter().filter(|r| **r <= outer) {
                    circle.ring cx="0" cy="0" r=(ring) fill="none" {}
                }
                @for edge in graph.edges() {
                    @if let (Some(from), Some(to)) = (positions.get(edge.from), positions.get(edge.to)) {
                        @let label = format!("{} {} {}", names.get(edge.from).copied().unwrap_or("?"), predicate_label(edge.predicate), names.get(edge.to).copied().unwrap_or("?"));
                        @if let Some(claim) = edge.claim {
                            a.edge data-testid="graph-edge" href={ "/graph/" (graph.center()) "/edge/" (claim) } aria-label=(label) {
                                title { (label) }
                                line.edge-hit x1=(round(from.0)) y1=(round(from.1)) x2=(round(to.0)) y2=(round(to.1)) {}
                                line.edge-line x1=(round(from.0)) y1=(round(from.1)) x2=(round(to.0)) y2=(round(to.1)) {}
                            }
                        } @else {
                            line.edge-line.edge-plain x1=(round(from.0)) y1=(round(from.1)) x2=(round(to.0)) y2=(round(to.1)) {
                                title { (label) }
                            }
                        }
                    }
                }
                @for node in &nodes {
                    @if let Some((x, y)) = positions.get(node.id) {
                        @let is_meeting = node.kind == "meeting";
                        @let href = if is_meeting { format!("/meetings/{}", node.id) } else { format!("/entities/{}", node.id) };
                        @let radius = if node.id == graph.center() { 26.0 } else if is_meeting { 7.0 } else { 16.0 };
                        a.node.center[node.id == graph.center()].meeting[is_meeting] data-testid=(if is_meeting { "graph-meeting" } else { "graph-node" }) href=(href) aria-label={ (node.name) " (" (node.kind) ")" } {
                            title { (node.name) }
                            circle cx=(round(*x)) cy=(round(*y)) r=(radius) {}
                            @if !is_meeting {
                                text x=(round(*x)) y=(round(y + radius + 16.0)) text-anchor="middle" { (short(node.name)) }
                            }
                        }
                    }
                }
            }
            figcaption.hint { "Circles are people, companies and projects (small ones are meetings); select one to open it, or a line to see the evidence behind it." }
        }
    }
}
