//! Human-readable and JSON rendering of command results.

use std::fmt::Write;

use lore_engine::{EntityRow, EntityView};
use serde::Serialize;

/// Writes one line to stdout; a closed pipe (`lore ... | head`) ends the program quietly.
pub fn write_stdout_line(text: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write output: {error}");
        std::process::exit(1);
    }
}

macro_rules! emit_line {
    ($($arg:tt)*) => { $crate::output::write_stdout_line(&format!($($arg)*)) };
}
pub(crate) use emit_line;

pub fn print_json<T: Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => crate::output::emit_line!("{text}"),
        Err(error) => eprintln!("error: cannot render JSON: {error}"),
    }
}

/// Prints `value` as JSON with `--json`, otherwise the text `render` makes of it.
pub fn print_value<T: Serialize>(json: bool, value: &T, render: impl FnOnce(&T) -> String) {
    if json {
        print_json(value);
    } else {
        let text = render(value);
        if !text.is_empty() {
            crate::output::emit_line!("{text}");
        }
    }
}

pub fn entity_table(rows: &[EntityRow]) -> String {
    let mut out = String::new();
    for row in rows {
        let weight = row
            .topic_weight
            .map(|w| format!("{w:>8.3} "))
            .unwrap_or_default();
        let pin = if row.pinned { "* " } else { "" };
        let _ = writeln!(
            out,
            "{:<36} {:<8} {:<12} {weight}{pin}{}",
            row.id,
            row.kind.as_str(),
            row.status.as_str(),
            row.name
        );
    }
    out.trim_end().to_string()
}

pub fn entity_text(view: &EntityView, history: bool) -> String {
    let entity = &view.entity;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}, {})  {}",
        entity.name, entity.kind, entity.status, entity.id
    );
    for email in &entity.emails {
        let _ = writeln!(out, "  email: {email}");
    }
    if !entity.aliases.is_empty() {
        let _ = writeln!(out, "  also called: {}", entity.aliases.join(", "));
    }
    let _ = writeln!(out, "  {}", entity.brief);
    let _ = writeln!(out, "\n{}", if history { "History" } else { "Current" });
    for claim in &view.claims {
        let value = claim
            .object
            .as_ref()
            .map(|o| o.name.clone())
            .or_else(|| claim.value.clone())
            .unwrap_or_default();
        let context = claim
            .context
            .as_ref()
            .map(|c| format!(" [in {}]", c.name))
            .unwrap_or_default();
        let due = claim
            .due_at
            .map(|d| {
                format!(
                    " due {} ({})",
                    &d.to_rfc3339()[..10],
                    claim.deadline_state.map(|s| s.as_str()).unwrap_or("-")
                )
            })
            .unwrap_or_default();
        let validity = match (claim.valid_from, claim.valid_to) {
            (Some(from), Some(to)) => {
                format!("{} → {}", &from.to_rfc3339()[..10], &to.to_rfc3339()[..10])
            }
            (Some(from), None) => format!("since {}", &from.to_rfc3339()[..10]),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {} = {value}{context}{due}  [{}, {}] {validity}  {}",
            claim.predicate, claim.status, claim.authority, claim.id
        );
        for evidence in &claim.evidence {
            let chip = [
                evidence.meeting_title.clone(),
                evidence.offset.clone(),
                evidence.speaker.clone(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ");
            let marker = if evidence.kind == lore_core::EvidenceKind::Termination {
                " (ends)"
            } else {
                ""
            };
            let chip = if chip.is_empty() {
                evidence.source.to_string()
            } else {
                chip
            };
            let _ = writeln!(out, "      {chip}{marker}: \"{}\"", evidence.quote);
        }
    }
    if !view.links.is_empty() {
        let _ = writeln!(out, "\nLinks");
        for link in &view.links {
            let _ = writeln!(
                out,
                "  {} ({}, {})",
                link.url,
                link.resource_type,
                link.ingested_status.replace('_', " ")
            );
        }
    }
    if !view.tasks.is_empty() {
        let _ = writeln!(out, "\nTasks");
        for task in &view.tasks {
            let _ = writeln!(out, "  [{}] {}", task.status, task.title);
        }
    }
    out.trim_end().to_string()
}

pub fn bench_table(report: &lore_bench::BenchReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "lore bench: scale {} on {} (read targets from the {})",
        report.scale, report.backend, report.targets
    );
    if report.runs > 1 {
        let _ = writeln!(
            out,
            "{} runs: every figure below is the median of the runs' (each percentile on its own)",
            report.runs
        );
    }
    let sizes: Vec<String> = report
        .dataset
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(out, "dataset: {}", sizes.join(", "));
    let _ = writeln!(
        out,
        "reads after a prewarm of {:.1} ms (projection_cold: before it), once the entity pages and \
         the graph index it asked for were built, {:.1} ms after it began, and the full-text index \
         merged after the ingest, {:.1} ms after it began",
        report.prewarm_ms, report.indexes_ready_ms, report.search_merged_ms
    );
    if let Some(entities) = report.page_index_entities {
        let size = report
            .page_index_mb
            .map_or(String::new(), |mb| format!(", about {mb:.1} MB"));
        let _ = writeln!(out, "page index: {entities} entities in memory{size}");
    }
    let _ = writeln!(
        out,
        "\n{:<26} {:>10} {:>10} {:>10} {:>6}",
        "operation", "p50 µs", "p95 µs", "p99 µs", "n"
    );
    for (name, op) in &report.ops {
        let _ = writeln!(
            out,
            "{:<26} {:>10.1} {:>10.1} {:>10.1} {:>6}",
            name, op.p50_us, op.p95_us, op.p99_us, op.n
        );
    }
    for (name, sizes) in &report.graph_sizes {
        let get = |key: &str| sizes.get(key).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "{name} answers: nodes p50/p95/max {}/{}/{}, edges {}/{}/{}",
            get("nodes_p50"),
            get("nodes_p95"),
            get("nodes_max"),
            get("edges_p50"),
            get("edges_p95"),
            get("edges_max")
        );
    }
    match &report.ingest {
        Some(ingest) => {
            let _ = writeln!(
                out,
                "\ningest: {:.0} claims/s, {:.1} meetings/s ({:.1} s, {} meeting(s) per durable commit)",
                ingest.claims_per_s, ingest.meetings_per_s, ingest.seconds, ingest.batch
            );
        }
        None => {
            let _ = writeln!(out, "\nreads only: no ingest, edits or deletions measured");
        }
    }
    let per_meeting = report
        .ingest
        .as_ref()
        .and_then(|ingest| ingest.statements_per_meeting);
    if let (Some(per_meeting), Some(per_delete)) = (per_meeting, report.statements_per_delete) {
        let _ = writeln!(
            out,
            "statements run by writes: {per_meeting:.1} per meeting ingested, {per_delete:.1} per committed delete"
        );
    }
    let ops_per_meeting = report
        .ingest
        .as_ref()
        .and_then(|ingest| ingest.knowledge_ops_per_meeting);
    if let (Some(per_meeting), Some(per_delete)) =
        (ops_per_meeting, report.knowledge_ops_per_delete)
    {
        let _ = writeln!(
            out,
            "knowledge rows written or removed: {per_meeting:.1} per meeting ingested, {per_delete:.1} per committed delete"
        );
    }
    if let Some(bytes) = report.db_bytes_per_1000_claims {
        let _ = writeln!(out, "database size: {bytes} bytes per 1,000 claims");
    }
    if !report.target_checks.is_empty() {
        let _ = writeln!(out, "\ntargets (SQLite, scale 1):");
        for check in &report.target_checks {
            let (bound, unit) = match check.measure.as_str() {
                "claims_per_s" => ("≥", "claims/s"),
                _ => ("≤", "µs at p95"),
            };
            let _ = writeln!(
                out,
                "  {:<16} {} {:>8.0} {:<10} measured {:>10.1}  {}",
                check.op,
                bound,
                check.target,
                unit,
                check.measured,
                if check.met { "met" } else { "MISSED" }
            );
        }
    }
    out.trim_end().to_string()
}

/// `lore extract`: the run's outcome, or for a dry run every candidate as one JSON line.
pub fn extract_text(report: &lore_engine::ExtractReport) -> String {
    use lore_engine::ExtractOutcome;
    match report.outcome {
        ExtractOutcome::DryRun => {
            let mut lines: Vec<String> = report
                .candidates
                .iter()
                .map(|candidate| candidate.to_string())
                .collect();
            lines.push(format!(
                "dry run: {} claims, {} tasks, {} rejected by the guard; nothing stored",
                report.claims, report.tasks, report.rejected
            ));
            lines.join("\n")
        }
        ExtractOutcome::Unchanged => format!(
            "unchanged  {} with {}  revision {}",
            report.external_id,
            report.extractor,
            report.revision.as_deref().unwrap_or("-")
        ),
        ExtractOutcome::Extracted => format!(
            "extracted  {} with {}  revision {}  ({} claims, {} tasks{})",
            report.external_id,
            report.extractor,
            report.revision.as_deref().unwrap_or("-"),
            report.claims,
            report.tasks,
            if report.rejected > 0 {
                format!(", {} rejected", report.rejected)
            } else {
                String::new()
            }
        ),
    }
}
