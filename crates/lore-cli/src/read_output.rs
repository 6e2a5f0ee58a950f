//! Text rendering of the read-side commands: graph, search, deadlines, tasks.

use std::fmt::Write;

use lore_core::DeadlineState;
use lore_engine::{DeadlineRow, GraphView, SearchHit, TaskRow};

use crate::commands::BadInput;

pub fn graph_text(graph: &GraphView) -> String {
    let mut out = String::new();
    let names = |id| graph.name_of(id).to_string();
    let _ = writeln!(out, "Nodes");
    for node in graph.nodes() {
        let _ = writeln!(
            out,
            "  [{}] {} ({}, weight {:.2})  {}",
            node.hop, node.name, node.kind, node.weight, node.id
        );
    }
    let _ = writeln!(out, "\nEdges");
    for edge in graph.edges() {
        let label = edge
            .label
            .as_ref()
            .map(|l| format!(" \"{l}\""))
            .unwrap_or_default();
        let status = edge
            .status
            .as_ref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} -{}{}-> {}{status}",
            names(edge.from),
            edge.predicate,
            label,
            names(edge.to)
        );
    }
    if graph.truncated {
        let _ = writeln!(
            out,
            "\n(truncated: only the highest-weight neighbors are shown; raise --limit)"
        );
    }
    out.trim_end().to_string()
}

pub fn search_text(hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return "no matches".into();
    }
    let mut out = String::new();
    for hit in hits {
        let place = match (&hit.meeting, &hit.offset) {
            (Some(meeting), Some(offset)) => format!("  ({} · {offset})", meeting.title),
            (Some(meeting), None) => format!("  ({})", meeting.title),
            _ => String::new(),
        };
        let status = hit.status.map(|s| format!(" [{s}]")).unwrap_or_default();
        let _ = writeln!(out, "{:<8} {}{status}{place}", hit.kind, hit.title);
        let _ = writeln!(out, "         {}", hit.snippet);
    }
    out.trim_end().to_string()
}

/// `--state` values: none means the open ones (upcoming and past due); `all` means every state.
pub fn deadline_states(values: &[String]) -> anyhow::Result<Vec<DeadlineState>> {
    if values.is_empty() {
        return Ok(vec![DeadlineState::Upcoming, DeadlineState::PastDue]);
    }
    let mut states = Vec::new();
    for value in values.iter().flat_map(|v| v.split(',')) {
        if value == "all" {
            return Ok(DeadlineState::ALL.to_vec());
        }
        states.push(DeadlineState::parse(value.trim()).ok_or_else(|| {
            BadInput(format!(
                "unknown deadline state '{value}'; use one of: {}, all",
                DeadlineState::names()
            ))
        })?);
    }
    Ok(states)
}

pub fn deadline_text(rows: &[DeadlineRow]) -> String {
    if rows.is_empty() {
        return "no deadlines".into();
    }
    let mut out = String::new();
    for row in rows {
        let _ = writeln!(
            out,
            "{}  {:<11} {} · {}{}",
            &row.due_at.to_rfc3339()[..10],
            row.state.as_str(),
            row.subject.name,
            row.commitment.as_deref().unwrap_or(""),
            row.meeting
                .as_ref()
                .map(|m| format!("  ({m} {})", row.offset.as_deref().unwrap_or("")))
                .unwrap_or_default()
        );
    }
    out.trim_end().to_string()
}

pub fn task_text(rows: &[TaskRow]) -> String {
    if rows.is_empty() {
        return "no tasks".into();
    }
    let mut out = String::new();
    for row in rows {
        let due = row
            .due_at
            .map(|d| format!(" due {}", &d.to_rfc3339()[..10]))
            .unwrap_or_default();
        let who = row
            .assignee
            .as_ref()
            .map(|a| format!(" · {}", a.name))
            .unwrap_or_default();
        let project = row
            .project
            .as_ref()
            .map(|p| format!(" [{}]", p.name))
            .unwrap_or_default();
        let _ = writeln!(out, "[{}] {}{who}{project}{due}", row.status, row.title);
    }
    out.trim_end().to_string()
}
