//! Readable renderings of engine views for MCP results (the structured JSON rides beside them):
//! facts with their verbatim quotes, meeting titles and `mm:ss` offsets, so a model can cite them.

use lore_engine::{ClaimView, DeadlineRow, EntityView, GraphView, SearchHit, TaskRow, Transcript};

fn claim_value(claim: &ClaimView) -> String {
    match (&claim.object, &claim.value) {
        (Some(object), _) => object.name.clone(),
        (None, Some(value)) => value.clone(),
        (None, None) => String::new(),
    }
}

pub fn entity_text(view: &EntityView, history: bool) -> String {
    let entity = &view.entity;
    let mut lines = vec![format!(
        "{} ({}, {}) id {}",
        entity.name,
        entity.kind.as_str(),
        entity.status.as_str(),
        entity.id
    )];
    if !entity.brief.is_empty() {
        lines.push(entity.brief.clone());
    }
    lines.push(if history {
        "History (every claim, in evidence order):".to_string()
    } else {
        "Current facts:".to_string()
    });
    if view.claims.is_empty() {
        lines.push("  (none)".to_string());
    }
    for claim in &view.claims {
        let mut line = format!(
            "- {}: {} [{}, {}; claim {}]",
            claim.predicate,
            claim_value(claim),
            claim.status.as_str(),
            claim.authority.as_str(),
            claim.id
        );
        if let Some(context) = &claim.context {
            line.push_str(&format!(" in {}", context.name));
        }
        if let Some(due) = claim.due_at {
            line.push_str(&format!(" due {}", &due.to_rfc3339()[..10]));
        }
        if let Some(from) = claim.valid_from {
            line.push_str(&format!(" valid from {}", &from.to_rfc3339()[..10]));
        }
        if let Some(to) = claim.valid_to {
            line.push_str(&format!(" to {}", &to.to_rfc3339()[..10]));
        }
        lines.push(line);
        for evidence in &claim.evidence {
            if evidence.quote.is_empty() {
                lines.push(format!(
                    "    (entered by hand, {})",
                    &evidence.observed_at.to_rfc3339()[..10]
                ));
                continue;
            }
            let mut source = evidence
                .meeting_title
                .clone()
                .unwrap_or_else(|| "a note".to_string());
            if let Some(offset) = &evidence.offset {
                source.push_str(&format!(" at {offset}"));
            }
            if let Some(meeting) = &evidence.meeting {
                source.push_str(&format!(" (meeting {meeting}"));
                if !evidence.segment_ids.is_empty() {
                    source.push_str(&format!(", segment {}", evidence.segment_ids.join(",")));
                }
                source.push(')');
            }
            lines.push(format!(
                "    \"{}\" - {}, {}",
                evidence.quote,
                evidence.speaker.as_deref().unwrap_or("unknown speaker"),
                source
            ));
        }
    }
    for link in &view.links {
        lines.push(format!("link: {}", link.url));
    }
    lines.join("\n")
}

pub fn deadlines_text(rows: &[DeadlineRow]) -> String {
    if rows.is_empty() {
        return "No deadlines in force.".to_string();
    }
    rows.iter()
        .map(|row| {
            format!(
                "- {} {}: {} due {} ({})",
                row.subject.kind.as_str(),
                row.subject.name,
                row.commitment.as_deref().unwrap_or("commitment"),
                &row.due_at.to_rfc3339()[..10],
                row.state.as_str()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn tasks_text(rows: &[TaskRow]) -> String {
    if rows.is_empty() {
        return "No tasks.".to_string();
    }
    rows.iter()
        .map(|row| {
            let mut line = format!("- [{}] {}", row.status.as_str(), row.title);
            if let Some(assignee) = &row.assignee {
                line.push_str(&format!(" (assignee {})", assignee.name));
            }
            if let Some(project) = &row.project {
                line.push_str(&format!(" (project {})", project.name));
            }
            if let Some(due) = row.due_at {
                line.push_str(&format!(" due {}", &due.to_rfc3339()[..10]));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn transcript_text(transcript: &Transcript) -> String {
    let mut lines = vec![format!(
        "{} ({}), {}",
        transcript.title,
        transcript.external_id,
        &transcript.started_at.to_rfc3339()[..10]
    )];
    for segment in &transcript.segments {
        let marker = if transcript.cited.as_deref() == Some(segment.id.as_str()) {
            ">>"
        } else {
            "  "
        };
        lines.push(format!(
            "{marker} [{}] {}: {}",
            segment.offset,
            segment.speaker.as_deref().unwrap_or("unknown"),
            segment.text
        ));
    }
    lines.join("\n")
}

pub fn search_text(hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return "No matches.".to_string();
    }
    hits.iter()
        .map(|hit| {
            let mut line = format!("- {} {} ({})", hit.kind, hit.title, hit.id);
            if let Some(status) = hit.status {
                line.push_str(&format!(" [{}]", status.as_str()));
            }
            if let Some(entity) = &hit.entity {
                line.push_str(&format!(" about {} ({})", entity.name, entity.id));
            }
            if let Some(meeting) = &hit.meeting {
                line.push_str(&format!(
                    " in \"{}\" (meeting {})",
                    meeting.title, meeting.id
                ));
            }
            if let Some(offset) = &hit.offset {
                line.push_str(&format!(" at {offset}"));
            }
            line.push_str(&format!("\n    {}", hit.snippet));
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn graph_text(graph: &GraphView) -> String {
    let name_of = |id| graph.name_of(id).to_string();
    let mut lines = vec![format!("Neighborhood of {}:", name_of(graph.center()))];
    for node in graph.nodes().filter(|node| node.id != graph.center()) {
        lines.push(format!(
            "- {} {} ({}), hop {}",
            node.kind, node.name, node.id, node.hop
        ));
    }
    if graph.edge_count() == 0 {
        lines.push("No connections.".to_string());
    } else {
        lines.push("Connections:".to_string());
    }
    for edge in graph.edges() {
        let mut line = format!(
            "- {} --{}--> {}",
            name_of(edge.from),
            edge.predicate,
            name_of(edge.to)
        );
        if let Some(label) = edge.label {
            line.push_str(&format!(" ({label})"));
        }
        if let Some(status) = &edge.status {
            line.push_str(&format!(" [{status}]"));
        }
        if let Some(claim) = &edge.claim {
            line.push_str(&format!(" claim {claim}"));
        }
        lines.push(line);
    }
    if graph.truncated {
        lines.push("(truncated: raise limit or lower hops for the rest)".to_string());
    }
    lines.join("\n")
}
