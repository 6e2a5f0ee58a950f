//! Getting knowledge out and back in: the Markdown wiki (SPEC 5.7), backups and restores.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Subcommand;
use lore_store::{SqliteStore, StoreError};

use crate::commands::{open_engine, BadInput};
use crate::output::{self, emit_line};

#[derive(Subcommand, Debug)]
pub enum ExportFormat {
    /// Write DIR/wiki/: index.md, entities/, concepts/ and summaries/ pages
    Markdown { dir: PathBuf },
}

#[derive(Subcommand, Debug)]
pub enum ImportFormat {
    /// Read DIR/wiki/ (or DIR) pages and merge their claims
    Markdown { dir: PathBuf },
}

pub fn export(db: &str, owner: &str, format: ExportFormat, json: bool) -> anyhow::Result<()> {
    let ExportFormat::Markdown { dir } = format;
    let report = open_engine(db)?.export_markdown(owner, &dir)?;
    output::print_value(json, &report, |r| {
        format!(
            "wrote {} pages ({} claims) to {}",
            r.pages,
            r.claims,
            r.dir.join("wiki").display()
        )
    });
    Ok(())
}

pub fn import(db: &str, owner: &str, format: ImportFormat, json: bool) -> anyhow::Result<()> {
    let ImportFormat::Markdown { dir } = format;
    let report = open_engine(db)?.import_markdown(owner, &dir)?;
    if json {
        output::print_json(&report);
        return Ok(());
    }
    for dropped in &report.dropped {
        let mut what = format!("dropped {} in {}", dropped.what, dropped.page);
        if let Some(index) = dropped.index {
            what.push_str(&format!(" claims[{index}]"));
        }
        if let Some(claim) = &dropped.claim {
            what.push_str(&format!(" {claim}"));
        }
        if let Some(target) = &dropped.target {
            what.push_str(&format!(" -> {target}"));
        }
        emit_line!("{what}: {}", dropped.reason);
    }
    for diagnostic in &report.diagnostics {
        eprintln!("note: {diagnostic}");
    }
    emit_line!(
        "{} ({} pages: {} meetings, {} entities, {} claims added, {} skipped as already stored, {} links applied, {} dropped)",
        report
            .revision
            .as_ref()
            .map(|r| format!("revision {r}"))
            .unwrap_or_else(|| "nothing changed".into()),
        report.pages,
        report.meetings,
        report.entities,
        report.claims_added,
        report.claims_skipped,
        report.links_applied,
        report.dropped.len()
    );
    Ok(())
}

fn sqlite_path(db: &str) -> anyhow::Result<&Path> {
    if crate::commands::is_postgres_url(db) {
        bail!(BadInput(
            "backup and restore work on SQLite files; for PostgreSQL use pg_dump and pg_restore"
                .into()
        ));
    }
    Ok(Path::new(db))
}

fn blob_dir(db: &Path) -> PathBuf {
    let mut dir = db.as_os_str().to_owned();
    dir.push(".blobs");
    PathBuf::from(dir)
}

/// Copies content-addressed blob files that the target folder does not have yet.
fn copy_blobs(from: &Path, to: &Path) -> anyhow::Result<usize> {
    if !from.is_dir() {
        return Ok(0);
    }
    let mut copied = 0;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let path = entry?.path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copied += copy_blobs(&path, &target)?;
        } else if !target.exists() && !path.to_string_lossy().ends_with(".tmp") {
            std::fs::create_dir_all(to)
                .with_context(|| format!("cannot create {}", to.display()))?;
            std::fs::copy(&path, &target)
                .with_context(|| format!("cannot copy {}", path.display()))?;
            copied += 1;
        }
    }
    Ok(copied)
}

pub fn backup(db: &str, file: &Path, json: bool) -> anyhow::Result<()> {
    let path = sqlite_path(db)?;
    if !path.is_file() {
        bail!(BadInput(format!("database {db} does not exist")));
    }
    if file.exists() {
        bail!(BadInput(format!(
            "{} already exists; choose a new file",
            file.display()
        )));
    }
    // Opening the store first migrates an older file, so the copy has this build's schema.
    drop(lore_store::open_embedded(path).with_context(|| format!("cannot open database {db}"))?);
    SqliteStore::backup_file(path, file)
        .with_context(|| format!("cannot back up to {}", file.display()))?;
    let problems = SqliteStore::verify_file(file)?;
    if !problems.is_empty() {
        bail!(
            "the backup {} failed verification: {}",
            file.display(),
            problems.join("; ")
        );
    }
    let blobs = copy_blobs(&blob_dir(path), &blob_dir(file))?;
    output::print_value(
        json,
        &serde_json::json!({"backup": file, "integrity": "ok", "blobs": blobs}),
        |_| {
            format!(
                "backed up {db} to {} (integrity ok, {blobs} blobs)",
                file.display()
            )
        },
    );
    Ok(())
}

pub fn restore(db: &str, file: &Path, json: bool) -> anyhow::Result<()> {
    let path = sqlite_path(db)?;
    if !file.is_file() {
        bail!(BadInput(format!("no such backup file: {}", file.display())));
    }
    match SqliteStore::restore_file(file, path) {
        Ok(()) => {}
        Err(StoreError::Conflict(message)) => bail!(BadInput(message)),
        Err(other) => return Err(other).context(format!("cannot restore {}", file.display())),
    }
    let blobs = copy_blobs(&blob_dir(file), &blob_dir(path))?;
    output::print_value(
        json,
        &serde_json::json!({"restored": db, "from": file, "blobs": blobs}),
        |_| format!("restored {db} from {} ({blobs} blobs)", file.display()),
    );
    Ok(())
}
