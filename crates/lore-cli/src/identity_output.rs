//! The identity commands (merge, split, undo, participants, tasks, pin, rename) and their output.

use std::fmt::Write;

use anyhow::bail;
use lore_core::TaskStatus;
use lore_engine::{Engine, IdentityReport, ReviewItem, SplitSelection};

use crate::commands::{BadInput, Command, ParticipantAction, TaskAction};
use crate::output::{emit_line, print_json, print_value};

pub fn run(engine: &Engine, owner: &str, json: bool, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Merge { a, b } => {
            let report = engine.merge_entities(owner, &a, &b)?;
            print_identity(json, &report, "merged");
        }
        Command::Split {
            entity,
            evidence,
            meeting,
        } => {
            let selection = match (evidence.is_empty(), meeting.is_empty()) {
                (false, true) => SplitSelection::Evidence(evidence),
                (true, false) => SplitSelection::Meetings(meeting),
                _ => bail!(BadInput(
                    "split needs either --evidence ID... or --meeting ID...".into()
                )),
            };
            let report = engine.split_entity(owner, &entity, &selection)?;
            print_identity(json, &report, "split");
        }
        Command::Undo { revision } => {
            let report = engine.undo(owner, &revision)?;
            print_identity(json, &report, "undone");
        }
        Command::Participant { action } => match action {
            ParticipantAction::List { meeting } => {
                let rows = engine.list_participants(owner, &meeting)?;
                print_value(json, &rows, |rows| {
                    let mut out = String::new();
                    for row in rows {
                        let _ = writeln!(
                            out,
                            "{:<3} {:<9} {:<24} {:<28} {}",
                            row.idx,
                            row.source.as_str(),
                            row.display_name,
                            row.email.as_deref().unwrap_or("-"),
                            row.person.as_deref().unwrap_or("-")
                        );
                    }
                    out.trim_end().to_string()
                });
            }
            ParticipantAction::Add { meeting, person } => {
                let report = engine.add_participant(owner, &meeting, &person)?;
                print_value(json, &report, |r| format!("revision {}", r.revision));
            }
            ParticipantAction::Remove { meeting, person } => {
                let report = engine.remove_participant(owner, &meeting, &person)?;
                print_value(json, &report, |r| format!("revision {}", r.revision));
            }
        },
        Command::Task { action } => {
            let (id, status) = match action {
                TaskAction::Done { id } => (id, TaskStatus::Done),
                TaskAction::Cancel { id } => (id, TaskStatus::Canceled),
                TaskAction::Reopen { id } => (id, TaskStatus::Open),
            };
            let report = engine.set_task_status(owner, &id, status)?;
            print_value(json, &report, |r| {
                format!("revision {} (task {id} {status})", r.revision)
            });
        }
        Command::Pin { entity, off } => {
            let report = engine.set_pinned(owner, &entity, !off)?;
            print_value(json, &report, |r| format!("revision {}", r.revision));
        }
        Command::Rename { entity, name, .. } => {
            let report = engine.set_manual_name(owner, &entity, name.as_deref())?;
            print_value(json, &report, |r| format!("revision {}", r.revision));
        }
        _ => unreachable!("only identity commands are routed here"),
    }
    Ok(())
}

pub fn print_identity(json: bool, report: &IdentityReport, verb: &str) {
    if json {
        print_json(report);
    } else {
        emit_line!(
            "revision {} ({verb}: {}{})",
            report.revision,
            report.entity,
            report
                .other
                .as_ref()
                .map(|o| format!(", {o}"))
                .unwrap_or_default()
        );
    }
}

pub fn review_text(items: &[ReviewItem]) -> String {
    if items.is_empty() {
        return "no suggestions".into();
    }
    let mut out = String::new();
    for item in items {
        let _ = writeln!(out, "{}  {} ({})", item.id, item.kind, item.status);
        if let Some(entities) = item.details.get("entities").and_then(|e| e.as_array()) {
            for entity in entities.iter().filter(|e| !e.is_null()) {
                let _ = writeln!(
                    out,
                    "    {} {} {} in {}",
                    entity["id"].as_str().unwrap_or_default(),
                    entity["name"].as_str().unwrap_or_default(),
                    entity["emails"],
                    entity["meetings"]
                );
            }
        }
        for role in ["claim", "holder"] {
            let claim = &item.details[role];
            if claim.is_null() {
                continue;
            }
            let _ = writeln!(
                out,
                "    {role}: {} {} = {} ({}, {})",
                claim["subject_name"].as_str().unwrap_or_default(),
                claim["predicate"].as_str().unwrap_or_default(),
                claim["value"].as_str().unwrap_or_default(),
                claim["status"].as_str().unwrap_or_default(),
                claim["authority"].as_str().unwrap_or_default()
            );
            for evidence in claim["evidence"].as_array().into_iter().flatten() {
                let _ = writeln!(
                    out,
                    "      {} {}: \"{}\"",
                    evidence["meeting"].as_str().unwrap_or("manual"),
                    evidence["speaker"].as_str().unwrap_or("-"),
                    evidence["quote"].as_str().unwrap_or_default()
                );
            }
        }
    }
    out.trim_end().to_string()
}
