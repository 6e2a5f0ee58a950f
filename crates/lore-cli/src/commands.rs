//! Command definitions and their wiring to the engine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use lore_core::Ts;
use lore_engine::{Engine, EngineError, ManualClaim, ShowOptions, SourceRef};
use lore_store::{LogStore, SqliteStore};

use crate::output;

#[derive(Parser, Debug)]
#[command(
    name = "lore",
    version,
    about = "Meetings in, living knowledge out: an evidence-backed, bi-temporal graph"
)]
pub struct Cli {
    /// Database: a SQLite file path (created on first use) or a postgres:// URL
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
    /// Ingest meeting bundles, transcripts (.vtt, .srt, .txt) and AMI meetings (files, or folders of them)
    Ingest {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        transcript: crate::transcripts::TranscriptFlags,
        /// Meetings applied per durable transaction (1 = a commit per meeting; default 32 on SQLite,
        /// 1 on PostgreSQL); a crash keeps every batch committed before it
        #[arg(long)]
        batch: Option<usize>,
    },
    /// List entities (provisional ones included)
    Entities {
        /// `name` (default) or `weight`: pinned first, then by topic weight
        #[arg(long, default_value = "name")]
        sort: String,
    },
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
        /// What was true at this time, by what Lore knows now (RFC 3339 or YYYY-MM-DD)
        #[arg(long)]
        valid_at: Option<String>,
        /// What Lore believed at this time (transaction time)
        #[arg(long)]
        known_at: Option<String>,
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
    /// The review queue: conflicts and proposed merges; accept or reject one
    Suggestions {
        #[command(subcommand)]
        action: Option<SuggestionAction>,
        /// Also list accepted and rejected entries
        #[arg(long)]
        all: bool,
    },
    /// Check the database: integrity, and stored state against a rebuild from scratch
    Check,
    /// Ingest the example meetings into a fresh database and print every entity's brief
    Demo {
        /// Folder of example bundles (default: examples/meetings)
        #[arg(long)]
        examples: Option<PathBuf>,
        /// Where the web workspace listens afterwards
        #[arg(long, default_value = "127.0.0.1:7700")]
        addr: String,
        /// Only ingest and print the briefs; do not serve the workspace
        #[arg(long)]
        no_serve: bool,
    },
    /// Copy an owner's data (or every owner's) between databases, e.g. SQLite to PostgreSQL, and verify it
    Migrate {
        /// Source database (SQLite path or postgres:// URL)
        #[arg(long)]
        from: String,
        /// Target database; it must hold no data for the owners copied
        #[arg(long)]
        to: String,
        /// Copy every owner instead of --owner
        #[arg(long)]
        all_owners: bool,
    },
    /// The bounded 1-2 hop neighborhood of an entity
    Graph {
        entity: String,
        /// 1 or 2
        #[arg(long, default_value_t = 1)]
        hops: u8,
        /// Most nodes shown (the highest-weight neighbors are kept)
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Edges valid at this time instead of the current ones
        #[arg(long)]
        valid_at: Option<String>,
    },
    /// Search names, claim values, transcripts and notes ("phrase", prefix*, OR, -exclude)
    Search {
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// entity, claim, segment or note
        #[arg(long)]
        kind: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Newest first instead of best match first
        #[arg(long)]
        newest: bool,
    },
    /// Commitments and their state (default: upcoming and past_due)
    Deadlines {
        /// upcoming, past_due, completed, rescheduled, canceled, or all
        #[arg(long)]
        state: Vec<String>,
    },
    /// Tasks across all meetings
    Tasks {
        /// Only tasks assigned to this entity
        #[arg(long)]
        assignee: Option<String>,
        /// open, done or canceled
        #[arg(long)]
        status: Option<String>,
    },
    /// Merge entity B into entity A (B's claims, evidence, links and mappings move to A)
    Merge {
        /// The survivor
        a: String,
        /// The entity merged away
        b: String,
    },
    /// Move chosen evidence (or every evidence row of chosen meetings) to a new entity
    Split {
        /// The entity to split: an id, an email, kind:key, or an unambiguous name
        entity: String,
        /// Evidence ids to move
        #[arg(long, num_args = 1..)]
        evidence: Vec<String>,
        /// Meetings (id or external id) whose evidence moves
        #[arg(long, num_args = 1..)]
        meeting: Vec<String>,
    },
    /// Undo a revision (merge, split, manual edit, retraction, suggestion decision)
    Undo {
        /// The revision id a state-changing command printed
        revision: String,
    },
    /// List a meeting's participants, or add or remove one by hand
    Participant {
        #[command(subcommand)]
        action: ParticipantAction,
    },
    /// Mark a task done, canceled, or open again
    Task {
        #[command(subcommand)]
        action: TaskAction,
    },
    /// Pin an entity so it stays surfaced whatever its topic weight
    Pin {
        entity: String,
        /// Unpin instead
        #[arg(long)]
        off: bool,
    },
    /// Name an entity by hand (every view shows it; its sources' names stay), or --clear to go back
    /// to the name Lore derives
    Rename {
        entity: String,
        /// The name to show
        #[arg(required_unless_present = "clear", conflicts_with = "clear")]
        name: Option<String>,
        /// Remove the manual name
        #[arg(long)]
        clear: bool,
    },
    /// Export knowledge as a Markdown wiki (OpenKB- and Obsidian-compatible)
    Export {
        #[command(subcommand)]
        format: crate::portable::ExportFormat,
    },
    /// Import a Markdown wiki (Lore's or OpenKB's) under OpenKB's claim rules
    Import {
        #[command(subcommand)]
        format: crate::portable::ImportFormat,
    },
    /// Write a consistent, verified copy of the live database to FILE
    Backup { file: PathBuf },
    /// Replace the database with a verified backup; refuses while the database is in use
    Restore { file: PathBuf },
    /// Re-extract an ingested meeting with the rules or the LLM extractor
    Extract {
        /// The meeting: id or external id
        meeting: String,
        /// rules (offline) or llm (LORE_LLM_BASE_URL, LORE_LLM_MODEL, LORE_LLM_API_KEY)
        #[arg(long, default_value = "rules", value_parser = ["rules", "llm"])]
        extractor: String,
        /// Print the candidates without storing anything
        #[arg(long)]
        dry_run: bool,
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
    /// Generate the seed-shaped dataset through the ingest path and measure reads and writes
    Bench {
        /// Dataset size: 1 = 1,000 meetings and ~10,000 claims
        #[arg(long, default_value_t = 1)]
        scale: usize,
        /// sqlite (Lore's embedded store on a fresh file in the temp folder), sqlite-tables (the same
        /// file kept by the tables' store, as Lore kept it before the log store) or postgres (the
        /// empty database --db names)
        #[arg(long, default_value = "sqlite")]
        backend: String,
        /// Targets measured per operation
        #[arg(long, default_value_t = 300)]
        samples: usize,
        /// A short smoke run: 150 meetings of the dataset and 30 targets per operation
        #[arg(long)]
        quick: bool,
        /// Meetings ingested per durable transaction (1 = a commit per meeting; default 32 on SQLite,
        /// 1 on PostgreSQL)
        #[arg(long)]
        batch: Option<usize>,
        /// Draw the targets from the whole dataset instead of its first block (at scale 1 the same;
        /// at larger scales the reads spread over every block)
        #[arg(long)]
        all_targets: bool,
        /// Keep the SQLite database when done (its path is printed), for --reads-only
        #[arg(long)]
        keep: bool,
        /// Measure only the reads, on a database a --keep run left, or the PostgreSQL database
        /// (postgres://...) a --backend postgres run filled (its scale is the number of meetings it
        /// holds, in thousands): no ingest, edits or deletions, nothing written
        #[arg(long, value_name = "FILE|URL", conflicts_with_all = ["scale", "quick", "batch", "keep", "backend"])]
        reads_only: Option<std::path::PathBuf>,
        /// Full runs, each on a fresh SQLite database (or the reads again with --reads-only); the
        /// report gives the median of every figure over them, and each run's timings with --json
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20), conflicts_with = "keep")]
        runs: u32,
    },
    /// Web workspace users with passwords (hosted mode): each user signs in as the owner of that name
    User {
        #[command(subcommand)]
        action: crate::web::UserAction,
    },
}

#[derive(Subcommand, Debug)]
pub enum SuggestionAction {
    /// Accept: perform the merge, or make the provisional claim a manual decision
    Accept { id: String },
    /// Reject: record the pair as different, or retract the provisional claim
    Reject { id: String },
}

#[derive(Subcommand, Debug)]
pub enum ParticipantAction {
    /// List a meeting's participants with the source of each mapping
    List { meeting: String },
    /// Add a person to a meeting by hand (revives a removed mapping)
    Add { meeting: String, person: String },
    /// Remove a person from a meeting; re-ingesting the meeting never re-adds them
    Remove { meeting: String, person: String },
}

#[derive(Subcommand, Debug)]
pub enum TaskAction {
    Done { id: String },
    Cancel { id: String },
    Reopen { id: String },
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
    Ok(Engine::new(open_store(db)?).with_clock(clock()?))
}

/// Whether `--db` (or `--reads-only`) names a PostgreSQL database rather than a SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// Opens the database `--db` names: a `postgres://` URL selects PostgreSQL, anything else is a SQLite
/// file (created and migrated on first use).
pub fn open_store(db: &str) -> anyhow::Result<Box<dyn lore_store::Store>> {
    if is_postgres_url(db) {
        let blobs = std::env::var("LORE_BLOB_DIR").unwrap_or_else(|_| "lore-blobs".to_string());
        let store = lore_store::PostgresStore::open(db, Path::new(&blobs))
            .with_context(|| format!("cannot open PostgreSQL database {}", redact_url(db)))?;
        return Ok(Box::new(store));
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
    lore_store::open_embedded(path).with_context(|| format!("cannot open database {db}"))
}

/// A database URL fit for messages: the password replaced by `***`.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let credentials = &url[scheme_end + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let owner = cli.owner.trim().to_string();
    if owner.is_empty() {
        bail!(BadInput("--owner must not be empty".into()));
    }
    match cli.command {
        Command::Demo {
            examples,
            addr,
            no_serve,
        } => {
            let (db, code) = demo(&cli.db, &owner, examples, cli.json)?;
            if no_serve {
                return Ok(code);
            }
            crate::serve::serve(
                open_engine(&db)?,
                crate::serve::ServeArgs::local(addr, !cli.json),
                &owner,
            )?;
            return Ok(code);
        }
        Command::Init => {
            let engine = open_engine(&cli.db)?;
            output::print_value(
                cli.json,
                &serde_json::json!({"database": cli.db, "backend": engine.store().backend_name()}),
                |_| format!("database ready: {}", cli.db),
            );
        }
        Command::Ingest {
            paths,
            transcript,
            batch,
        } => {
            if batch == Some(0) {
                bail!(BadInput("--batch must be at least 1".into()));
            }
            let engine = open_engine(&cli.db)?;
            let batch = batch.unwrap_or_else(|| engine.store().ingest_batch());
            return ingest(&engine, &owner, &paths, &transcript, batch, cli.json);
        }
        Command::Entities { sort } => {
            let sort = match sort.as_str() {
                "name" => lore_engine::EntitySort::Name,
                "weight" => lore_engine::EntitySort::Weight,
                other => bail!(BadInput(format!(
                    "--sort '{other}': expected name or weight"
                ))),
            };
            let rows = open_engine(&cli.db)?.list_entities_sorted(&owner, sort)?;
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
            valid_at,
            known_at,
        } if valid_at.is_some() || known_at.is_some() => {
            if history {
                bail!(BadInput(
                    "--history lists every claim; it does not combine with --valid-at or --known-at"
                        .into()
                ));
            }
            let at = lore_engine::TimeTravel {
                valid_at: parse_time("--valid-at", valid_at.as_deref())?,
                known_at: parse_time("--known-at", known_at.as_deref())?,
            };
            let _ = include_provisional;
            let view = open_engine(&cli.db)?.show_at(&owner, &entity, &at)?;
            output::print_value(cli.json, &view, |_| output::entity_text(&view, false));
        }
        Command::Show {
            entity,
            history,
            include_provisional,
            ..
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
        Command::Suggestions { action, all } => {
            let engine = open_engine(&cli.db)?;
            match action {
                None => {
                    let items = engine.review_queue(&owner, all)?;
                    output::print_value(cli.json, &items, |items| {
                        crate::identity_output::review_text(items)
                    });
                }
                Some(SuggestionAction::Accept { id }) => {
                    let report = engine.accept_suggestion(&owner, &id)?;
                    crate::identity_output::print_identity(cli.json, &report, "accepted");
                }
                Some(SuggestionAction::Reject { id }) => {
                    let report = engine.reject_suggestion(&owner, &id)?;
                    crate::identity_output::print_identity(cli.json, &report, "rejected");
                }
            }
        }
        Command::Migrate {
            from,
            to,
            all_owners,
        } => {
            let (source, target) = (open_engine(&from)?, open_engine(&to)?);
            let owners = if all_owners {
                source.store().owners()?
            } else {
                vec![owner.clone()]
            };
            let mut reports = Vec::new();
            for owner in &owners {
                reports.push(
                    source
                        .copy_owner_to(&target, owner)
                        .with_context(|| format!("copying owner {owner}"))?,
                );
            }
            let mismatched = reports.iter().any(|r| !r.mismatches.is_empty());
            output::print_value(cli.json, &reports, |reports| {
                reports
                    .iter()
                    .map(|r| {
                        format!(
                            "owner {}: {} meetings, {} entities, {} claims, {} evidence, {} revisions copied; {}",
                            r.owner, r.meetings, r.entities, r.claims, r.evidence, r.revisions,
                            if r.mismatches.is_empty() { "every entity's history verified".to_string() }
                            else { format!("{} entities differ: {}", r.mismatches.len(), r.mismatches.join(", ")) }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            if mismatched {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Bench {
            scale,
            backend,
            samples,
            quick,
            batch,
            all_targets,
            keep,
            reads_only,
            runs,
        } => {
            let config = lore_bench::BenchConfig {
                scale,
                samples: if quick { samples.min(30) } else { samples },
                meetings: quick.then_some(150),
                // Zero: the store's own batch size, known once it is open.
                batch: batch.unwrap_or(0),
                all_targets,
                reads_only: reads_only.is_some(),
            };
            let file = match reads_only {
                Some(path) => BenchFile::Existing(path),
                None if keep => BenchFile::Kept,
                None => BenchFile::Temporary,
            };
            return bench(&cli.db, &backend, config, file, runs as usize, cli.json);
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
        Command::Graph {
            entity,
            hops,
            limit,
            valid_at,
        } => {
            let options = lore_engine::GraphOptions {
                hops,
                limit,
                valid_at: parse_time("--valid-at", valid_at.as_deref())?,
            };
            let graph = open_engine(&cli.db)?.graph(&owner, &entity, &options)?;
            output::print_value(cli.json, &graph, crate::read_output::graph_text);
        }
        Command::Search {
            query,
            kind,
            limit,
            newest,
        } => {
            let request = lore_engine::SearchRequest {
                query,
                kind,
                limit,
                newest_first: newest,
            };
            let hits = open_engine(&cli.db)?.search(&owner, &request)?;
            output::print_value(cli.json, &hits, |hits| {
                crate::read_output::search_text(hits)
            });
        }
        Command::Deadlines { state } => {
            let states = crate::read_output::deadline_states(&state)?;
            let rows = open_engine(&cli.db)?.deadlines(&owner, &states)?;
            output::print_value(cli.json, &rows, |rows| {
                crate::read_output::deadline_text(rows)
            });
        }
        Command::Tasks { assignee, status } => {
            let status = status
                .as_deref()
                .map(|s| {
                    lore_core::TaskStatus::parse(s).ok_or_else(|| {
                        BadInput(format!(
                            "unknown task status '{s}'; use one of: {}",
                            lore_core::TaskStatus::names()
                        ))
                    })
                })
                .transpose()?;
            let rows = open_engine(&cli.db)?.tasks(&owner, assignee.as_deref(), status)?;
            output::print_value(cli.json, &rows, |rows| crate::read_output::task_text(rows));
        }
        command @ (Command::Merge { .. }
        | Command::Split { .. }
        | Command::Undo { .. }
        | Command::Participant { .. }
        | Command::Task { .. }
        | Command::Pin { .. }
        | Command::Rename { .. }) => {
            crate::identity_output::run(&open_engine(&cli.db)?, &owner, cli.json, command)?
        }
        Command::Export { format } => crate::portable::export(&cli.db, &owner, format, cli.json)?,
        Command::Import { format } => crate::portable::import(&cli.db, &owner, format, cli.json)?,
        Command::Backup { file } => crate::portable::backup(&cli.db, &file, cli.json)?,
        Command::Restore { file } => crate::portable::restore(&cli.db, &file, cli.json)?,
        Command::Extract {
            meeting,
            extractor,
            dry_run,
        } => {
            let engine = open_engine(&cli.db)?;
            let extractor: Box<dyn lore_extract::Extractor> = match extractor.as_str() {
                "llm" => Box::new(lore_extract::LlmExtractor::new(
                    lore_extract::LlmConfig::from_env().map_err(|e| BadInput(e.to_string()))?,
                )),
                _ => Box::new(lore_extract::RulesExtractor),
            };
            let report = engine.extract_meeting(&owner, &meeting, extractor.as_ref(), dry_run)?;
            for diagnostic in &report.diagnostics {
                eprintln!("note: {diagnostic}");
            }
            output::print_value(cli.json, &report, output::extract_text);
        }
        Command::Token { action } => {
            crate::serve::token(&open_engine(&cli.db)?, &owner, action, cli.json)?
        }
        Command::Serve(args) => crate::serve::serve(open_engine(&cli.db)?, args, &owner)?,
        Command::Mcp => crate::serve::mcp_stdio(open_engine(&cli.db)?, &owner)?,
        Command::User { action } => crate::web::user(&open_engine(&cli.db)?, action, cli.json)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_time(flag: &str, text: Option<&str>) -> anyhow::Result<Option<Ts>> {
    text.map(Ts::parse)
        .transpose()
        .map_err(|error| BadInput(format!("{flag}: {error}")).into())
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
                .filter(|p| {
                    p.is_file()
                        && p.extension().is_some_and(|e| {
                            crate::transcripts::INGESTED_EXTENSIONS
                                .contains(&e.to_string_lossy().to_ascii_lowercase().as_str())
                        })
                })
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

fn ingest(
    engine: &Engine,
    owner: &str,
    paths: &[PathBuf],
    flags: &crate::transcripts::TranscriptFlags,
    batch: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let files = collect_bundles(paths)?;
    let progress = indicatif::ProgressBar::new(files.len() as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .expect("valid progress template"),
    );
    let mut reports = Vec::new();
    let mut failures = Vec::new();
    let mut worst = 0u8;
    // Parsed files are applied `batch` at a time, one durable transaction per batch; a file
    // that fails gets its own error and the others of its batch are still stored.
    let mut fail = |file: &PathBuf, error: EngineError, progress: &indicatif::ProgressBar| {
        worst = worst.max(if error.is_bad_input() { 2 } else { 1 });
        let message = error.to_string();
        let shown = file.display().to_string();
        let message = if message.contains(&shown) {
            message
        } else {
            format!("{shown}: {message}")
        };
        progress.suspend(|| eprintln!("error: {message}"));
        failures.push(serde_json::json!({"file": file, "error": message}));
    };
    // The files of the next batch are read, parsed and extracted on a second thread while the
    // batch before them is written.
    let batches = files.chunks(batch).map(|chunk| {
        chunk
            .iter()
            .map(|file| {
                progress.set_message(
                    file.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                );
                match crate::transcripts::prepare_file(engine, file, flags) {
                    Ok((bundle, diagnostics)) => ((file, diagnostics), Ok(bundle)),
                    Err(error) => ((file, Vec::new()), Err(error)),
                }
            })
            .collect::<Vec<_>>()
    });
    engine.ingest_pipelined(owner, batches, |results| {
        for ((file, diagnostics), result) in results {
            match result {
                Ok(mut report) => {
                    report.diagnostics.extend(diagnostics);
                    for diagnostic in &report.diagnostics {
                        progress.suspend(|| eprintln!("warning: {}: {diagnostic}", file.display()));
                    }
                    reports.push(report);
                }
                Err(error) => fail(file, error, &progress),
            }
            progress.inc(1);
        }
    });
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

fn demo(
    db: &str,
    owner: &str,
    examples: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<(String, ExitCode)> {
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
    remove_database_files(Path::new(db));
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
    Ok((db.to_string(), ExitCode::SUCCESS))
}

/// Where `lore bench` keeps its SQLite database.
enum BenchFile {
    /// A fresh file in the temp folder, removed when done.
    Temporary,
    /// A fresh file in the temp folder, kept when done.
    Kept,
    /// A database an earlier kept run left, only read.
    Existing(std::path::PathBuf),
}

fn bench(
    db: &str,
    backend: &str,
    mut config: lore_bench::BenchConfig,
    place: BenchFile,
    runs: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let scale = config.scale;
    if !(1..=1000).contains(&scale) {
        bail!(BadInput("--scale must be between 1 and 1000".into()));
    }
    if runs > 1 && backend == "postgres" && !matches!(place, BenchFile::Existing(_)) {
        bail!(BadInput(
            "--runs needs a fresh database for every run: use it on SQLite, or with --reads-only"
                .into()
        ));
    }
    let mut reports = Vec::with_capacity(runs);
    for run in 1..=runs {
        if runs > 1 {
            eprintln!("lore bench: run {run} of {runs}");
        }
        reports.push(bench_run(db, backend, &mut config, &place)?);
    }
    let mut report = lore_bench::median_of_runs(reports)
        .ok_or_else(|| anyhow::anyhow!("benchmark failed: no run was made"))?;
    lore_bench::check_targets(&mut report, &config);
    output::print_value(json, &report, output::bench_table);
    Ok(ExitCode::SUCCESS)
}

/// One full run of `lore bench`: the database it opens or creates, the measurements, and the size.
fn bench_run(
    db: &str,
    backend: &str,
    config: &mut lore_bench::BenchConfig,
    place: &BenchFile,
) -> anyhow::Result<lore_bench::BenchReport> {
    let scale = config.scale;
    let (engine, file) = match (backend, place) {
        (_, BenchFile::Existing(path)) if is_postgres_url(&path.to_string_lossy()) => {
            (open_engine(&path.to_string_lossy())?, None)
        }
        (_, BenchFile::Existing(path)) => {
            if !path.is_file() {
                bail!(BadInput(format!(
                    "--reads-only: no database at {} (keep one with lore bench --keep)",
                    path.display()
                )));
            }
            (
                Engine::new(lore_store::open_embedded(path)?).with_clock(clock()?),
                None,
            )
        }
        ("sqlite" | "sqlite-tables", _) => {
            let path =
                std::env::temp_dir().join(format!("lore-bench-{}-{scale}.db", std::process::id()));
            remove_database_files(&path);
            let files = BenchFiles {
                path,
                keep: matches!(place, BenchFile::Kept),
            };
            files.on_interrupt();
            let store: Box<dyn lore_store::Store> = match backend {
                "sqlite" => Box::new(LogStore::open(&files.path)?),
                _ => Box::new(SqliteStore::open(&files.path)?),
            };
            (Engine::new(store).with_clock(clock()?), Some(files))
        }
        ("postgres", _) if is_postgres_url(db) => (open_engine(db)?, None),
        ("postgres", _) => bail!(BadInput(
            "--backend postgres needs --db postgres://... naming an empty database".into()
        )),
        (other, _) => bail!(BadInput(format!(
            "unknown backend '{other}'; use sqlite, sqlite-tables or postgres"
        ))),
    };
    // The engine is dropped (the database closed) before the file is removed, on every path.
    let (file, engine) = (file, engine);
    let progress = indicatif::ProgressBar::new_spinner();
    // The spinner draws only on a terminal; elsewhere (CI logs, scripts) each step is a line.
    let lines = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    if config.batch == 0 {
        config.batch = engine.store().ingest_batch();
    }
    let mut report = lore_bench::run(&engine, config, |message| {
        if lines {
            eprintln!("lore bench: {message}");
        }
        progress.set_message(message.to_string())
    })
    .map_err(|error| anyhow::anyhow!("benchmark failed: {error}"))?;
    progress.finish_and_clear();
    if let Some(files) = &file {
        drop(engine);
        let path = &files.path;
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
            + std::fs::metadata(format!("{}-wal", path.display()))
                .map(|m| m.len())
                .unwrap_or(0);
        let claims = report.dataset.get("claims").copied().unwrap_or(1).max(1);
        report.db_bytes_per_1000_claims = Some(bytes * 1000 / claims);
        if files.keep {
            eprintln!(
                "lore bench: kept the database at {} (measure its reads again with --reads-only)",
                path.display()
            );
        }
    }
    // Removes the database unless kept (`BenchFiles`' drop, also on an error above).
    drop(file);
    Ok(report)
}

/// The database file of a `lore bench` run on SQLite, in the temp folder. Unless the run keeps it,
/// it is removed when the run ends, however it ends: done, failed, or stopped by Ctrl-C or SIGTERM
/// (a scale-1 database is about 170 MB, and a stopped run would otherwise leave it behind).
struct BenchFiles {
    path: PathBuf,
    keep: bool,
}

/// Removes a SQLite database with its log, shared-memory file and blob folder, whichever exist.
fn remove_database_files(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let _ = std::fs::remove_dir_all(format!("{}.blobs", path.display()));
}

impl BenchFiles {
    /// On Ctrl-C or SIGTERM: removes the database (or says where the partial one stays, with
    /// `--keep`) and exits with 130, as a shell reports an interrupted command. The signals are
    /// registered before this returns, so one that arrives once the database exists is caught.
    #[cfg(unix)]
    fn on_interrupt(&self) {
        use tokio::signal::unix::{signal, SignalKind};
        let (path, keep) = (self.path.clone(), self.keep);
        let registered = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .and_then(|runtime| {
                // Registered inside the runtime, which then drives them on the watcher's thread.
                let (interrupt, terminate) = {
                    let _entered = runtime.enter();
                    (
                        signal(SignalKind::interrupt())?,
                        signal(SignalKind::terminate())?,
                    )
                };
                Ok((runtime, interrupt, terminate))
            });
        let watcher = registered.and_then(|(runtime, mut interrupt, mut terminate)| {
            std::thread::Builder::new()
                .name("lore-bench-stop".into())
                .spawn(move || {
                    runtime.block_on(async {
                        tokio::select! {
                            _ = interrupt.recv() => {},
                            _ = terminate.recv() => {},
                        }
                    });
                    if keep {
                        eprintln!(
                            "\nlore bench: stopped; the partial database stays at {}",
                            path.display()
                        );
                    } else {
                        remove_database_files(&path);
                        eprintln!("\nlore bench: stopped; removed its database");
                    }
                    std::process::exit(130);
                })
        });
        if let Err(error) = watcher {
            tracing::warn!("cannot watch for Ctrl-C ({error}); a stopped run leaves its database");
        }
    }

    #[cfg(not(unix))]
    fn on_interrupt(&self) {}
}

impl Drop for BenchFiles {
    fn drop(&mut self) {
        if !self.keep {
            remove_database_files(&self.path);
        }
    }
}
