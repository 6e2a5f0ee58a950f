//! Re-extracting an ingested meeting with a chosen extractor (`lore extract`): one run per (meeting,
//! content hash, extractor id), recorded with its revision, so that running it again changes nothing (L2);
//! another extractor adds its own evidence rows to the same claims (L1) without replacing anyone's.

use std::collections::BTreeMap;

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_core::normalize::value_key;
use lore_core::Ts;
use lore_extract::Extractor;
use lore_ingest::{
    AttachmentInput, Bundle, MeetingInput, NoteInput, ParticipantInput, SegmentInput,
};
use lore_store::Tx;
use serde_json::{json, Value};

use crate::apply::{settle, Changes};
use crate::ingest::{run_extractor, store_extraction, Candidates, EvidenceContext};
use crate::resolve::MeetingScope;
use crate::{Engine, EngineError, EngineResult};

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractOutcome {
    /// Candidates were stored under a new run.
    Extracted,
    /// This extractor already ran on this content: nothing changed (L2).
    Unchanged,
    /// `--dry-run`: candidates listed, nothing stored.
    DryRun,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ExtractReport {
    /// The revision written (or, when unchanged, the one the earlier run wrote); None for a dry run.
    pub revision: Option<String>,
    pub meeting: String,
    pub external_id: String,
    pub extractor: String,
    pub outcome: ExtractOutcome,
    /// Claims stored (or, for a dry run, that would be stored).
    pub claims: usize,
    pub tasks: usize,
    /// Candidates the sensitive-data guard rejected (L21).
    pub rejected: usize,
    /// For a dry run: every candidate that passed validation and the guard, in bundle JSON shape.
    pub candidates: Vec<Value>,
    pub diagnostics: Vec<String>,
}

impl Engine {
    /// Runs `extractor` on a stored meeting (by id or external id). Extraction happens outside any
    /// transaction (an LLM call can take a while); storing happens in one, with one revision.
    pub fn extract_meeting(
        &self,
        owner: &str,
        meeting_ref: &str,
        extractor: &dyn Extractor,
        dry_run: bool,
    ) -> EngineResult<ExtractReport> {
        let extractor_id = extractor.id();
        let (meeting, bundle, previous_run) = self.read(owner, |tx| {
            let meeting = find_meeting(tx, meeting_ref)?;
            let run = tx.find_run(&meeting.id, &meeting.content_hash, &extractor_id)?;
            let bundle = stored_bundle(tx, &meeting)?;
            Ok((meeting, bundle, run))
        })?;
        let report = |outcome, revision| ExtractReport {
            revision,
            meeting: meeting.id.clone(),
            external_id: meeting.external_id.clone(),
            extractor: extractor_id.clone(),
            outcome,
            claims: 0,
            tasks: 0,
            rejected: 0,
            candidates: Vec::new(),
            diagnostics: Vec::new(),
        };
        if let (Some(run), false) = (&previous_run, dry_run) {
            return Ok(report(
                ExtractOutcome::Unchanged,
                Some(run.revision.clone()),
            ));
        }
        let candidates = run_extractor(self, &bundle, extractor)?;
        if dry_run {
            let mut dry = report(ExtractOutcome::DryRun, None);
            dry.diagnostics = candidates.diagnostics.clone();
            for (candidate, verdict) in candidates.claims.iter().zip(&candidates.claim_verdicts) {
                if let Some(rejection) = verdict {
                    dry.rejected += 1;
                    dry.diagnostics.push(format!(
                        "claims[{}]: rejected by the sensitive-data guard ({}): {}",
                        candidate.index, rejection.kind, rejection.reason
                    ));
                    continue;
                }
                dry.claims += 1;
                dry.candidates.push(candidate_json(candidate));
            }
            let tasks = candidates.tasks.iter().zip(&candidates.task_verdicts);
            for (index, (task, verdict)) in tasks.enumerate() {
                if let Some(rejection) = verdict {
                    dry.rejected += 1;
                    dry.diagnostics.push(format!(
                        "tasks[{index}]: rejected by the sensitive-data guard ({}): {}",
                        rejection.kind, rejection.reason
                    ));
                    continue;
                }
                dry.tasks += 1;
                dry.candidates.push(json!({"task": without_empty(
                    serde_json::to_value(task).unwrap_or(Value::Null)
                )}));
            }
            return Ok(dry);
        }
        let now = self.now();
        self.write(owner, |tx| {
            extract_in_tx(self, tx, &meeting, &bundle, &candidates, now)
        })
    }
}

fn find_meeting(tx: &mut dyn Tx, meeting_ref: &str) -> EngineResult<Meeting> {
    match tx.find_meeting(meeting_ref)? {
        Some(meeting) => Ok(meeting),
        None => tx.find_meeting_by_external_id(meeting_ref)?.ok_or_else(|| {
            EngineError::NotFound(format!("no meeting with id or external id '{meeting_ref}'"))
        }),
    }
}

/// The stored meeting as an extractor sees it: a bundle of its participants, segments and notes.
fn stored_bundle(tx: &mut dyn Tx, meeting: &Meeting) -> EngineResult<Bundle> {
    let participants = tx
        .list_participants(&meeting.id)?
        .into_iter()
        .filter(|p| !p.excluded)
        .map(|p| ParticipantInput {
            display_name: p.display_name,
            email: p.email,
            platform_stable_id: p.platform_stable_id,
            device_id: p.device_id,
            speaker_label: p.speaker_label,
            additional_emails: Vec::new(),
        })
        .collect();
    let segments = tx
        .list_segments(&meeting.id)?
        .into_iter()
        .map(|s| SegmentInput {
            id: s.id,
            start_ms: s.start_ms,
            end_ms: s.end_ms,
            speaker: s.speaker_label,
            attribution: s.attribution,
            text: s.text,
        })
        .collect();
    let notes = tx
        .list_notes(&meeting.id)?
        .into_iter()
        .map(|n| NoteInput {
            id: n.local_id,
            created_at: n.created_at,
            author: n.author,
            text: n.text,
        })
        .collect();
    let attachments = tx
        .list_attachments(&meeting.id)?
        .into_iter()
        .map(|a| AttachmentInput {
            id: a.local_id,
            kind: a.kind,
            filename: a.filename,
            media_type: a.media_type,
            created_at: a.created_at,
            path: None,
        })
        .collect();
    Ok(Bundle {
        meeting: MeetingInput {
            external_id: meeting.external_id.clone(),
            title: meeting.title.clone(),
            started_at: meeting.started_at,
            ended_at: meeting.ended_at,
            platform: meeting.platform.clone(),
            series: None,
        },
        participants,
        segments,
        notes,
        attachments,
        links: Vec::new(),
        tasks: Vec::new(),
        tags: Vec::new(),
        claims: None,
        content_hash: meeting.content_hash.clone(),
    })
}

fn extract_in_tx(
    engine: &Engine,
    tx: &mut dyn Tx,
    meeting: &Meeting,
    bundle: &Bundle,
    candidates: &Candidates,
    now: Ts,
) -> EngineResult<ExtractReport> {
    // The meeting may have changed or gone between the read and this transaction.
    let current = find_meeting(tx, &meeting.id)?;
    if current.content_hash != meeting.content_hash {
        return Err(EngineError::Conflict(format!(
            "meeting {} changed while extracting; run the extraction again",
            meeting.external_id
        )));
    }
    let base = ExtractReport {
        revision: None,
        meeting: meeting.id.clone(),
        external_id: meeting.external_id.clone(),
        extractor: candidates.extractor.clone(),
        outcome: ExtractOutcome::Extracted,
        claims: 0,
        tasks: candidates.tasks.len(),
        rejected: 0,
        candidates: Vec::new(),
        diagnostics: Vec::new(),
    };
    if let Some(run) = tx.find_run(&meeting.id, &meeting.content_hash, &candidates.extractor)? {
        return Ok(ExtractReport {
            revision: Some(run.revision),
            outcome: ExtractOutcome::Unchanged,
            tasks: 0,
            ..base
        });
    }
    let participants = tx.list_participants(&meeting.id)?;
    let mut scope = MeetingScope {
        meeting_id: &meeting.id,
        series_id: meeting.series.as_deref(),
        observed_at: meeting.started_at,
        participants_by_name: BTreeMap::new(),
        participant_domains: participants
            .iter()
            .filter(|p| !p.excluded)
            .filter_map(|p| p.email.as_deref())
            .filter_map(|email| email.split_once('@').map(|(_, domain)| domain.to_string()))
            .collect(),
        tag_keys: tx
            .list_meeting_tags(&meeting.id)?
            .into_iter()
            .map(|t| ((t.kind, t.key), t.tag))
            .collect(),
        recorded_aliases: Default::default(),
    };
    let mut speaker_names = BTreeMap::new();
    for participant in participants.iter().filter(|p| !p.excluded) {
        if let Some(person) = &participant.person_entity {
            scope
                .participants_by_name
                .insert(value_key(&participant.display_name), person.clone());
        }
        if let Some(label) = &participant.speaker_label {
            speaker_names.insert(label.clone(), participant.display_name.clone());
        }
    }
    let note_ids: BTreeMap<String, String> = tx
        .list_notes(&meeting.id)?
        .into_iter()
        .map(|n| (n.local_id, n.id))
        .collect();
    let attachment_ids: BTreeMap<String, String> = tx
        .list_attachments(&meeting.id)?
        .into_iter()
        .map(|a| (a.local_id, a.id))
        .collect();
    let run_id = short_id(
        "x_",
        &[&meeting.id, &meeting.content_hash, &candidates.extractor],
    );
    let context = EvidenceContext {
        meeting,
        bundle,
        speaker_names: &speaker_names,
        note_ids: &note_ids,
        attachment_ids: &attachment_ids,
        run_id: &run_id,
        extractor: &candidates.extractor,
        now,
        previously_recorded: &BTreeMap::new(),
    };
    let mut changes = Changes::default();
    changes
        .diagnostics
        .extend(candidates.diagnostics.iter().cloned());
    let (stored, rejected) =
        store_extraction(engine, tx, candidates, &scope, &context, &mut changes)?;
    settle(tx, &mut changes, now)?;
    let diagnostics = std::mem::take(&mut changes.diagnostics);
    let revision =
        changes.write_revision(tx, RevisionAction::ExtractionCommit, &meeting.id, None, now)?;
    tx.insert_run(&ExtractionRun {
        id: run_id.clone(),
        meeting: meeting.id.clone(),
        content_hash: meeting.content_hash.clone(),
        extractor: candidates.extractor.clone(),
        revision: revision.clone(),
        created_at: now,
    })?;
    Ok(ExtractReport {
        revision: Some(revision),
        claims: stored,
        rejected,
        diagnostics,
        ..base
    })
}

/// A validated candidate in the bundle's claim shape, for `--dry-run`: unset fields left out.
fn candidate_json(candidate: &lore_ingest::ClaimCandidate) -> Value {
    let mut value = serde_json::to_value(candidate).unwrap_or(Value::Null);
    if let Some(object) = value.as_object_mut() {
        object.remove("index");
    }
    without_empty(value)
}

fn without_empty(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| {
                    !v.is_null() && v != &Value::Array(Vec::new()) && v != &Value::Bool(false)
                })
                .map(|(k, v)| (k, without_empty(v)))
                .collect(),
        ),
        other => other,
    }
}
