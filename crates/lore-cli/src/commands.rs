//! Command definitions and their wiring to the engine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use lore_core::Ts;
use lore_engine::{Engine, EngineError, ManualClaim, ShowOptions, SourceRef};
use lore_store::SqliteStore;

use crate::output;

#[derive(Parser, Debug)]
#[command(
    name = "lore",
    version,
    about = "Meetings in, living knowledge out: an evidence-backed, bi-temporal graph"
)]
pub struct Cli {
    /// Database: a SQLite file path (created on first use)
    #[arg(long, global = true, env = "LORE_DB", default_value = "lore.db")]
    pub db: String,
    /// Whose knowledge to read and write
    #[arg(long, global = true, env = "LORE_OWNER", default_value = "local")]
    pub owner: String,
    /// Print machine-readable JSON
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create (or migrate) the database
    Init,
    /// Ingest meeting bundles (JSON files, or folders of them)
    Ingest {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List entities (provisional ones included)
    Entities,
    /// List meetings with their segment, note and evidence counts
    Meetings,
    /// Show an entity: its current view, or its history
    Show {
        /// An id, an email, kind:key (project:atlas), or an unambiguous name
        entity: String,
        /// Every claim, superseded and expired included, in evidence order
        #[arg(long)]
        history: bool,
        /// Also list provisional claims
        #[arg(long)]
        include_provisional: bool,
    },
    /// Add, override or retract claims
    Claim {
        #[command(subcommand)]
        action: ClaimAction,
    },
    /// Delete a meeting, note or attachment and everything only it supported
    Delete {
        #[command(subcommand)]
        source: DeleteSource,
    },
    /// The review queue: conflicts and proposed merges
    Suggestions,
    /// Check the database: integrity, and stored state against a rebuild from scratch
    Check,
    /// Ingest the example meetings into a fresh database and print every entity's brief
    Demo {
        /// Folder of example bundles (default: examples/meetings)
        #[arg(long)]
        examples: Option<PathBuf>,
    },
    /// Create, list or revoke API tokens for `lore serve`
    Token {
        #[command(subcommand)]
        action: crate::serve::TokenAction,
    },
    /// Serve the REST API (/api/v1) and MCP (/mcp) over HTTP
    Serve(crate::serve::ServeArgs),
    /// Serve MCP over stdin/stdout for --owner (for an AI assistant that starts lore itself)
    Mcp,
}

#[derive(Args, Debug)]
pub struct ClaimArgs {
    /// The subject entity
    pub entity: String,
    /// A predicate from the registry (works_at, has_title, ...)
    pub predicate: String,
    /// The value, for text predicates
    pub value: Option<String>,
    /// The object entity, for predicates that point at an entity
    #[arg(long)]
    pub object: Option<String>,
    /// The context entity (a project, for has_role)
    #[arg(long)]
    pub context: Option<String>,
    /// The due date, for deadlines (RFC 3339 or YYYY-MM-DD)
    #[arg(long)]
    pub due_at: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum ClaimAction {
    /// Add a manual claim (it holds its slot against extraction)
    Add(ClaimArgs),
    /// Set a single-valued attribute by hand, replacing the current value
    Override(ClaimArgs),
    /// Retract a claim; it stays retracted when found again
    Retract { claim: String },
}

#[derive(Subcommand, Debug)]
pub enum DeleteSource {
    /// A meeting, by id or external id
    Meeting {
        id: String,
    },
    Note {
        id: String,
    },
    Attachment {
        id: String,
    },
}

/// Bad input (exit 2) as opposed to a failure of the system (exit 1).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

pub fn exit_code(error: &anyhow::Error) -> u8 {
    let bad_input = error.chain().any(|cause| {
        cause.downcast_ref::<BadInput>().is_some()
            || cause
                .downcast_ref::<EngineError>()
                .is_some_and(EngineError::is_bad_input)
    });
    if bad_input {
        2
    } else {
        1
    }
}

fn clock() -> anyhow::Result<lore_engine::Clock> {
    match std::env::var("LORE_NOW") {
        Ok(text) => {
            let fixed = Ts::parse(&text).map_err(|error| BadInput(format!("LORE_NOW: {error}")))?;
            Ok(Arc::new(move || fixed))
        }
        Err(_) => Ok(Arc::new(Ts::now_wall_clock)),
    }
}

pub fn open_engine(db: &str) -> anyhow::Result<Engine> {
    if db.starts_with("postgres://") || db.starts_with("postgresql://") {
        bail!(BadInput(
            "PostgreSQL is not available in this build; use a SQLite file path".into()
        ));
    }
    let path = Path::new(db);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            bail!(BadInput(format!(
                "folder {} does not exist",
                parent.display()
            )));
        }
    }
    let store = SqliteStore::open(path).with_context(|| format!("cannot open database {db}"))?;
    Ok(Engine::new(Box::new(store)).with_clock(clock()?))
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let owner = cli.owner.trim().to_string();
    if owner.is_empty() {
        bail!(BadInput("--owner must not be empty".into()));
    }
    match cli.command {
        Command::Demo { examples } => return demo(&cli.db, &owner, examples, cli.json),
        Command::Init => {
            let engine = open_engine(&cli.db)?;
            output::print_value(
                cli.json,
                &serde_json::json!({"database": cli.db, "backend": engine.store().backend_name()}),
                |_| format!("database ready: {}", cli.db),
            );
        }
        Command::Ingest { paths } => {
            return ingest(&open_engine(&cli.db)?, &owner, &paths, cli.json)
        }
        Command::Entities => {
            let rows = open_engine(&cli.db)?.list_entities(&owner)?;
            output::print_value(cli.json, &rows, |_| output::entity_table(&rows));
        }
        Command::Meetings => {
            let rows = open_engine(&cli.db)?.list_meetings(&owner)?;
            output::print_value(cli.json, &rows, |rows| {
                rows.iter()
                    .map(|m| {
                        format!(
                            "{}  {}  {} ({} segments, {} evidence)",
                            &m.started_at.to_rfc3339()[..10],
                            m.external_id,
                            m.title,
                            m.segments,
                            m.evidence
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Show {
            entity,
            history,
            include_provisional,
        } => {
            let view = open_engine(&cli.db)?.show(
                &owner,
                &entity,
                &ShowOptions {
                    history,
                    include_provisional,
                },
            )?;
            output::print_value(cli.json, &view, |_| output::entity_text(&view, history));
        }
        Command::Claim { action } => {
            let engine = open_engine(&cli.db)?;
            let report = match action {
                ClaimAction::Add(args) => engine.add_manual_claim(&owner, &manual_claim(args)?)?,
                ClaimAction::Override(args) => {
                    engine.override_claim(&owner, &manual_claim(args)?)?
                }
                ClaimAction::Retract { claim } => engine.retract_claim(&owner, &claim)?,
            };
            output::print_value(cli.json, &report, |r| {
                format!(
                    "revision {}{}",
                    r.revision,
                    r.claim
                        .as_ref()
                        .map(|c| format!(" (claim {c})"))
                        .unwrap_or_default()
                )
            });
        }
        Command::Delete { source } => {
            let engine = open_engine(&cli.db)?;
            let source = match &source {
                DeleteSource::Meeting { id } => SourceRef::Meeting(id),
                DeleteSource::Note { id } => SourceRef::Note(id),
                DeleteSource::Attachment { id } => SourceRef::Attachment(id),
            };
            let report = engine.delete_source(&owner, source)?;
            output::print_value(cli.json, &report, |r| {
                format!(
                    "revision {} ({} claims changed or removed)",
                    r.revision,
                    r.deleted.len()
                )
            });
        }
        Command::Suggestions => {
            let suggestions = open_engine(&cli.db)?.list_suggestions(&owner)?;
            let rows: Vec<serde_json::Value> = suggestions
                .iter()
                .map(|s| {
                    serde_json::json!({"id": s.id, "type": s.kind, "status": s.status, "target": s.target,
                                       "secondary": s.secondary, "payload": s.payload, "created_at": s.created_at})
                })
                .collect();
            output::print_value(cli.json, &rows, |_| output::suggestion_text(&suggestions));
        }
        Command::Check => {
            let engine = open_engine(&cli.db)?;
            let mut problems = engine.store().integrity_problems()?;
            for other in engine.store().owners()? {
                problems.extend(
                    lore_engine::check_invariants(&engine, &other)?
                        .into_iter()
                        .map(|p| format!("owner {other}: {p}")),
                );
            }
            output::print_value(
                cli.json,
                &serde_json::json!({"ok": problems.is_empty(), "problems": problems}),
                |_| {
                    if problems.is_empty() {
                        "ok".to_string()
                    } else {
                        problems.join("\n")
                    }
                },
            );
            if !problems.is_empty() {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Token { action } => {
            crate::serve::token(&open_engine(&cli.db)?, &owner, action, cli.json)?
        }
        Command::Serve(args) => crate::serve::serve(open_engine(&cli.db)?, args)?,
        Command::Mcp => crate::serve::mcp_stdio(open_engine(&cli.db)?, &owner)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn manual_claim(args: ClaimArgs) -> anyhow::Result<ManualClaim> {
    let due_at = args
        .due_at
        .as_deref()
        .map(Ts::parse)
        .transpose()
        .map_err(|error| BadInput(format!("--due-at: {error}")))?;
    Ok(ManualClaim {
        entity: args.entity,
        predicate: args.predicate,
        value: args.value,
        object: args.object,
        context: args.context,
        due_at,
    })
}

/// Expands files and folders into bundle files, sorted, skipping transcript sidecars.
pub fn collect_bundles(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot read folder {}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .filter(|p| !p.to_string_lossy().ends_with(".meeting.json"))
                .collect();
            found.sort();
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            bail!(BadInput(format!(
                "no such file or folder: {}",
                path.display()
            )));
        }
    }
    Ok(files)
}

fn ingest(engine: &Engine, owner: &str, paths: &[PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    let files = collect_bundles(paths)?;
    let progress = indicatif::ProgressBar::new(files.len() as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .expect("valid progress template"),
    );
    let mut reports = Vec::new();
    let mut failures = Vec::new();
    let mut worst = 0u8;
    for file in &files {
        progress.set_message(
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        match engine.ingest_bundle_file(owner, file) {
            Ok(report) => {
                for diagnostic in &report.diagnostics {
                    progress.suspend(|| eprintln!("warning: {}: {diagnostic}", file.display()));
                }
                reports.push(report);
            }
            Err(error) => {
                worst = worst.max(if error.is_bad_input() { 2 } else { 1 });
                progress.suspend(|| eprintln!("error: {error}"));
                failures.push(serde_json::json!({"file": file, "error": error.to_string()}));
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    if json {
        let revisions: Vec<&str> = reports.iter().map(|r| r.revision.as_str()).collect();
        output::print_json(&serde_json::json!({
            "revision": revisions.last(), "revisions": revisions, "meetings": reports, "failed": failures,
        }));
    } else {
        for report in &reports {
            crate::output::emit_line!(
                "{:<10} {}  revision {}  ({} claims{})",
                format!("{:?}", report.outcome).to_lowercase(),
                report.external_id,
                report.revision,
                report.claims,
                if report.rejected > 0 {
                    format!(", {} rejected", report.rejected)
                } else {
                    String::new()
                }
            );
        }
    }
    Ok(if worst == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(worst)
    })
}

fn demo(db: &str, owner: &str, examples: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let db = if db == "lore.db" { "lore-demo.db" } else { db };
    let examples = examples.unwrap_or_else(|| {
        let local = PathBuf::from("examples/meetings");
        if local.is_dir() {
            local
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/meetings")
        }
    });
    if !examples.is_dir() {
        bail!(BadInput(format!(
            "example folder {} not found; pass --examples DIR",
            examples.display()
        )));
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{db}{suffix}"));
    }
    let _ = std::fs::remove_dir_all(format!("{db}.blobs"));
    let engine = open_engine(db)?;
    let files = collect_bundles(std::slice::from_ref(&examples))?;
    let progress = indicatif::ProgressBar::new(files.len() as u64);
    for file in &files {
        let report = engine.ingest_bundle_file(owner, file)?;
        for diagnostic in &report.diagnostics {
            progress.suspend(|| eprintln!("note: {}: {diagnostic}", file.display()));
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    let edits_file = examples.parent().map(|p| p.join("edits.json"));
    if let Some(edits_file) = edits_file.filter(|p| p.is_file()) {
        let text = std::fs::read_to_string(&edits_file)?;
        let edits: Vec<serde_json::Value> = serde_json::from_str(&text)
            .with_context(|| format!("cannot read {}", edits_file.display()))?;
        for edit in edits {
            let field = |name: &str| {
                edit.get(name)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            engine.apply_override(
                owner,
                &field("entity"),
                &field("predicate"),
                &field("value"),
            )?;
        }
    }
    let rows = engine.list_entities(owner)?;
    let mut views = Vec::new();
    for row in &rows {
        views.push(engine.show(owner, &row.id, &ShowOptions::default())?);
    }
    if json {
        output::print_json(&serde_json::json!({"database": db, "entities": views}));
    } else {
        crate::output::emit_line!("Ingested {} meetings into {db}.\n", files.len());
        for view in &views {
            crate::output::emit_line!("{}", view.entity.brief);
        }
        crate::output::emit_line!("\nTry: lore --db {db} show alice@northwind.io --history");
    }
    Ok(ExitCode::SUCCESS)
}
