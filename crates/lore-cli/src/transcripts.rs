//! Turning the files `lore ingest` accepts into bundles: meeting bundle JSON, QMSum/AMI meeting JSON, and
//! transcripts (`.vtt`, `.srt`, `.txt`) with their metadata from a sidecar `FILE.meeting.json` or flags.

use std::path::Path;

use clap::Args;
use lore_engine::{Engine, EngineError};
use lore_ingest::{
    is_ami_json, parse_ami, parse_bundle_value, Bundle, TranscriptFormat, TranscriptMeta,
};

/// Meeting metadata for transcripts given on the command line (a sidecar's values are overridden).
#[derive(Args, Debug, Default, Clone)]
pub struct TranscriptFlags {
    /// Meeting title for transcripts (default: the sidecar's, or the file name)
    #[arg(long)]
    pub title: Option<String>,
    /// Meeting start for transcripts (RFC 3339 or YYYY-MM-DD)
    #[arg(long)]
    pub started_at: Option<String>,
    /// External id for transcripts (default: the sidecar's, or the file name without extension)
    #[arg(long)]
    pub external_id: Option<String>,
    /// A participant of the transcribed meeting, "Name <email>" (repeatable)
    #[arg(long = "participant")]
    pub participants: Vec<String>,
    /// Maps a transcript speaker label to a participant's email, LABEL=email (repeatable)
    #[arg(long = "speaker")]
    pub speakers: Vec<String>,
}

/// The extensions `lore ingest` reads from folders.
pub const INGESTED_EXTENSIONS: &[&str] = &["json", "vtt", "srt", "txt"];

/// Parses one file into a validated bundle, with the parser's diagnostics; errors name the file.
pub fn prepare_file(
    engine: &Engine,
    path: &Path,
    flags: &TranscriptFlags,
) -> Result<(Bundle, Vec<String>), EngineError> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let invalid = |message: String| EngineError::Invalid(format!("{}: {message}", path.display()));
    let read_text = || {
        std::fs::read(path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|error| invalid(format!("cannot read: {error}")))
    };
    let bundle_file = || {
        let text = std::fs::read_to_string(path).map_err(|error| {
            EngineError::Invalid(format!("cannot read {}: {error}", path.display()))
        })?;
        let bundle = lore_ingest::parse_bundle(&text, engine.registry(), path.parent()).map_err(
            |errors| EngineError::Invalid(format!("invalid bundle {}:\n{errors}", path.display())),
        )?;
        Ok((bundle, Vec::new()))
    };
    if extension == "json" {
        let text = read_text()?;
        let document: serde_json::Value = match serde_json::from_str(&text) {
            Ok(document) => document,
            // Let the bundle reader report the syntax error with its position.
            Err(_) => return bundle_file(),
        };
        if !is_ami_json(&document) {
            return bundle_file();
        }
        let code = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let meeting = parse_ami(code, &document).map_err(|error| invalid(error.to_string()))?;
        let bundle = parse_bundle_value(&meeting.bundle, engine.registry(), None)
            .map_err(|errors| invalid(format!("invalid bundle:\n{errors}")))?;
        let diagnostics = meeting.diagnostics.iter().map(|d| d.to_string()).collect();
        return Ok((bundle, diagnostics));
    }
    let Some(format) = TranscriptFormat::from_extension(&extension) else {
        return Err(invalid(
            "unknown file type; expected .json, .vtt, .srt or .txt".into(),
        ));
    };
    let text = read_text()?;
    let sidecar_path = sidecar_path(path);
    let sidecar = if sidecar_path.is_file() {
        let text = std::fs::read_to_string(&sidecar_path)
            .map_err(|error| invalid(format!("cannot read {}: {error}", sidecar_path.display())))?;
        Some(
            serde_json::from_str(&text)
                .map_err(|error| invalid(format!("sidecar {}: {error}", sidecar_path.display())))?,
        )
    } else {
        None
    };
    let meta = TranscriptMeta {
        sidecar,
        default_external_id: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        external_id: flags.external_id.clone(),
        title: flags.title.clone(),
        started_at: flags.started_at.clone(),
        participants: flags.participants.clone(),
        speakers: flags.speakers.clone(),
    };
    let (bundle, diagnostics) =
        engine
            .transcript_to_bundle(format, &text, &meta)
            .map_err(|error| match error {
                EngineError::Invalid(message) => invalid(message),
                other => other,
            })?;
    Ok((bundle, diagnostics))
}

/// `talk.vtt` → `talk.meeting.json`.
pub fn sidecar_path(path: &Path) -> std::path::PathBuf {
    path.with_extension("meeting.json")
}
