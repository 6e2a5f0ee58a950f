//! Ingesting a transcript (`.vtt`, `.srt`, `.txt`) with its meeting metadata: parse it, build the
//! meeting bundle, ingest that. The command line (files with sidecars or flags) and the REST API
//! (a JSON body) both come through here.

use lore_ingest::{
    parse_bundle_value, parse_transcript, transcript_bundle, Bundle, TranscriptFormat,
    TranscriptMeta,
};

use crate::{Engine, EngineError, EngineResult, IngestReport};

impl Engine {
    /// The bundle a transcript and its metadata make, and the parser's diagnostics as report lines.
    /// Errors are `Invalid` and name the problem (the caller adds where the text came from).
    pub fn transcript_to_bundle(
        &self,
        format: TranscriptFormat,
        text: &str,
        meta: &TranscriptMeta,
    ) -> EngineResult<(Bundle, Vec<String>)> {
        let transcript = parse_transcript(format, text)
            .map_err(|error| EngineError::Invalid(error.to_string()))?;
        let document = transcript_bundle(&transcript, meta).map_err(EngineError::Invalid)?;
        let bundle = parse_bundle_value(&document, self.registry(), None).map_err(|errors| {
            EngineError::Invalid(format!("invalid meeting metadata:\n{errors}"))
        })?;
        let mut diagnostics = Vec::new();
        if let Some(first) = transcript.diagnostics.first() {
            diagnostics.push(format!(
                "{} {} line(s) skipped or repaired, first: {first}",
                transcript.diagnostics.len(),
                format.as_str(),
            ));
        }
        Ok((bundle, diagnostics))
    }

    /// Ingests a transcript as a meeting (see [`Engine::transcript_to_bundle`]).
    pub fn ingest_transcript(
        &self,
        owner: &str,
        format: TranscriptFormat,
        text: &str,
        meta: &TranscriptMeta,
    ) -> EngineResult<IngestReport> {
        let (bundle, diagnostics) = self.transcript_to_bundle(format, text, meta)?;
        let mut report = self.ingest_bundle(owner, &bundle)?;
        report.diagnostics.extend(diagnostics);
        Ok(report)
    }
}
