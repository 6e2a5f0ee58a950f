//! Extractors: turn a meeting (a validated bundle without claims) into candidate claims and tasks.
//!
//! Two are built in: [`RulesExtractor`] (`rules`, deterministic and offline, the default) and
//! [`LlmExtractor`] (`llm`, any OpenAI-compatible chat-completions endpoint). Both emit candidates in the
//! bundle's own JSON shape, so the engine validates them with the same code as a bundle's `claims`
//! (`lore_ingest::validate_candidates`) and screens them with the same sensitive-data guard (L21) before
//! anything is stored. Extractors never touch storage.

mod dates;
mod llm;
mod rules;
mod tokens;

use lore_ingest::Bundle;
use serde_json::Value;

pub use dates::resolve_date;
pub use llm::{LlmConfig, LlmExtractor, PROMPT_VERSION};
pub use rules::{RulesExtractor, RULES_EXTRACTOR_ID};

/// What an extractor found in one meeting: candidates in bundle JSON shape, plus notes on what it skipped.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Extraction {
    pub claims: Vec<Value>,
    pub tasks: Vec<Value>,
    /// Rejected or skipped output, each with its reason (logged and shown to the user).
    pub diagnostics: Vec<String>,
}

/// Why an extraction could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// Missing or invalid configuration (no base URL, a bad model name).
    #[error("extractor configuration: {0}")]
    Config(String),
    /// The endpoint could not be reached or kept failing.
    #[error("extractor endpoint: {0}")]
    Endpoint(String),
}

/// Turns a meeting into candidates. Implementations must be deterministic for a given id where they can:
/// the engine records one run per (meeting, content hash, extractor id) and never repeats it (L2).
pub trait Extractor: Send + Sync {
    /// Name, model and prompt version, e.g. `rules@1` or `llm:gpt-4o-mini@prompt-1`.
    fn id(&self) -> String;
    fn extract(&self, bundle: &Bundle) -> Result<Extraction, ExtractError>;
}
