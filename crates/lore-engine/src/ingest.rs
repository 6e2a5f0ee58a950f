//! Ingesting one meeting bundle: sources, participants, supplied claim candidates, links and tasks, in
//! one transaction with one `extraction_commit` revision (L1, L2, L21).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use lore_core::guard;
use lore_core::ids::{sha256_hex, short_id};
use lore_core::model::*;
use lore_core::normalize::{collapse_whitespace, truncate_chars, value_key};
use lore_core::slot::group_key;
use lore_core::{ObjectSpec, Ts};
use lore_extract::Extractor;
use lore_ingest::{Bundle, ClaimCandidate, EvidenceInput, TaskInput};
use lore_store::Tx;
use serde_json::json;

use crate::apply::{rebuild_entities, remove_meeting, settle_slots, Changes};
use crate::resolve::{resolve, MeetingScope};
use crate::{Engine, EngineError, EngineResult};

/// The extractor id of claims supplied in the bundle itself.
pub const SUPPLIED_EXTRACTOR: &str = "supplied";

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IngestOutcome {
    /// New meeting stored.
    Created,
    /// The meeting existed with other content; it was replaced.
    Replaced,
    /// The same content was ingested before with the same extractor: nothing changed (L2).
    Unchanged,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct IngestReport {
    pub revision: String,
    pub meeting: String,
    pub external_id: String,
    pub outcome: IngestOutcome,
    pub claims: usize,
    pub rejected: usize,
    /// Things worth telling the user that did not stop the ingest (rejected candidates, dropped links).
    pub diagnostics: Vec<String>,
}

/// A claim candidate resolved to entity ids, ready to store.
struct Resolved<'a> {
    candidate: &'a ClaimCandidate,
    subject: String,
    object: Option<String>,
    context: Option<String>,
}

impl Engine {
    /// Parses, validates and ingests one bundle file (JSON). Bad input is `EngineError::Invalid`.
    pub fn ingest_bundle_file(&self, owner: &str, path: &Path) -> EngineResult<IngestReport> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            EngineError::Invalid(format!("cannot read {}: {error}", path.display()))
        })?;
        let bundle =
            lore_ingest::parse_bundle(&text, &self.registry, path.parent()).map_err(|errors| {
                EngineError::Invalid(format!("invalid bundle {}:\n{errors}", path.display()))
            })?;
        self.ingest_bundle(owner, &bundle)
    }

    /// Ingests one validated bundle in one transaction. A bundle without `claims` goes through the
    /// engine's extractor (the rules extractor unless replaced), run before the transaction opens.
    pub fn ingest_bundle(&self, owner: &str, bundle: &Bundle) -> EngineResult<IngestReport> {
        let extractor = self.extractor.clone();
        self.ingest_bundle_with(owner, bundle, extractor.as_ref())
    }

    /// Ingests one bundle, extracting with `extractor` when the bundle supplies no claims.
    pub fn ingest_bundle_with(
        &self,
        owner: &str,
        bundle: &Bundle,
        extractor: &dyn Extractor,
    ) -> EngineResult<IngestReport> {
        // The same content with the same extractor is a no-op (L2): find out before extracting.
        let previous = self.read(owner, |tx| stored_run(tx, bundle, extractor))?;
        if let Some((existing, run)) = previous {
            return Ok(unchanged_report(existing, run.revision));
        }
        let (candidates, blobs) = self.prepare_bundle(bundle, extractor)?;
        let prepared = Prepared {
            bundle,
            blobs,
            candidates,
            now: self.now(),
        };
        self.write(owner, |tx| {
            ingest_in_tx(self, tx, owner, &prepared, EntityRebuild::Now)
        })
    }

    /// Ingests several validated bundles, in order, in ONE write transaction: each bundle goes
    /// through the full lifecycle of [`Engine::ingest_bundle`] and gets its own revision, but there is
    /// one durable commit for all of them, so a crash leaves the database as it was before the batch
    /// or after all of it. The entities the batch touched are rebuilt once, at its end, and their
    /// changes are recorded in the last bundle's revision. Returns one result per bundle, in order.
    ///
    /// A bundle that cannot be prepared (extraction or attachment failure) gets its error and the
    /// others go on. When the batch transaction fails, nothing of it is kept and every bundle is
    /// ingested again on its own, so each failing bundle gets its own error and the good ones are
    /// stored exactly as one-by-one ingestion would have stored them.
    pub fn ingest_bundles(
        &self,
        owner: &str,
        bundles: &[&Bundle],
    ) -> Vec<EngineResult<IngestReport>> {
        let parts = self.prepare_parts(owner, bundles, &BTreeSet::new());
        self.apply_parts(owner, bundles, parts)
    }

    /// Ingests batches of bundles as [`Engine::ingest_bundles`] does, one durable transaction per
    /// batch, with each batch's work before its transaction (drawing it from `batches`, where a
    /// caller parses its files, then extraction, the sensitive-data guard and attachments) done on a
    /// second thread while the batch before it is written. The state is the one `ingest_bundles`
    /// leaves batch after batch: the transaction checks again what the preparation read (L2).
    ///
    /// Each item carries the caller's `T` (a file name, say) and its bundle, or the error that
    /// stopped the caller from making one; `done` gets every batch's items back, in order, each
    /// with its report or error, as soon as the batch is committed. The thread preparing works at
    /// most one batch ahead.
    pub fn ingest_pipelined<T: Send>(
        &self,
        owner: &str,
        batches: impl Iterator<Item = Vec<(T, EngineResult<Bundle>)>> + Send,
        mut done: impl FnMut(Vec<(T, EngineResult<IngestReport>)>),
    ) {
        std::thread::scope(|scope| {
            // A rendezvous: the next batch is handed over only once the writer asks for it.
            let (sender, receiver) = std::sync::mpsc::sync_channel(0);
            scope.spawn(move || {
                // The meetings of the batch handed over last, which the writer may still be
                // applying: what the preparation reads of them may be about to change. Every
                // batch before it is committed (the writer took this one only after them).
                let mut in_flight = BTreeSet::new();
                for batch in batches {
                    let prepared = self.prepare_batch(owner, batch, &in_flight);
                    in_flight = prepared.external_ids();
                    if sender.send(prepared).is_err() {
                        break;
                    }
                }
            });
            for prepared in receiver {
                done(self.apply_batch(owner, prepared));
            }
        });
    }

    fn prepare_batch<T>(
        &self,
        owner: &str,
        items: Vec<(T, EngineResult<Bundle>)>,
        in_flight: &BTreeSet<String>,
    ) -> PreparedBatch<T> {
        let bundles: Vec<&Bundle> = items.iter().filter_map(|(_, b)| b.as_ref().ok()).collect();
        let parts = self.prepare_parts(owner, &bundles, in_flight);
        PreparedBatch { items, parts }
    }

    fn apply_batch<T>(
        &self,
        owner: &str,
        batch: PreparedBatch<T>,
    ) -> Vec<(T, EngineResult<IngestReport>)> {
        let bundles: Vec<&Bundle> = batch
            .items
            .iter()
            .filter_map(|(_, b)| b.as_ref().ok())
            .collect();
        let mut reports = self.apply_parts(owner, &bundles, batch.parts).into_iter();
        batch
            .items
            .into_iter()
            .map(|(item, bundle)| {
                let report = match bundle {
                    Ok(_) => reports.next().unwrap_or_else(|| {
                        Err(EngineError::Internal(
                            "a bundle of the batch was skipped".into(),
                        ))
                    }),
                    Err(error) => Err(error),
                };
                (item, report)
            })
            .collect()
    }

    /// The work before a batch's transaction: which bundles repeat what is stored (L2), their
    /// candidates (extracted and screened, L21) and their attachments' blobs. A bundle of a
    /// meeting in `in_flight` (external ids a transaction not yet committed may change) is prepared
    /// whatever is stored now, and its transaction decides.
    fn prepare_parts(
        &self,
        owner: &str,
        bundles: &[&Bundle],
        in_flight: &BTreeSet<String>,
    ) -> Vec<Preparation> {
        let extractor = self.extractor.clone();
        // Unchanged content is found before extracting, as for one bundle (L2).
        let previous = self.read(owner, |tx| {
            bundles
                .iter()
                .map(|bundle| stored_run(tx, bundle, extractor.as_ref()))
                .collect::<EngineResult<Vec<_>>>()
        });
        let previous = match previous {
            Ok(previous) => previous,
            Err(_) => bundles.iter().map(|_| None).collect(),
        };
        let mut parts = Vec::with_capacity(bundles.len());
        for (index, (bundle, previous)) in bundles.iter().zip(previous).enumerate() {
            // Unless an earlier bundle of the batch, or of the batch still being written,
            // replaces that meeting first (then the check runs inside the transaction, as for
            // every bundle).
            let external_id = &bundle.meeting.external_id;
            let replaced_earlier = in_flight.contains(external_id)
                || bundles[..index]
                    .iter()
                    .any(|earlier| &earlier.meeting.external_id == external_id);
            if let (Some((existing, run)), false) = (previous, replaced_earlier) {
                parts.push(Preparation::Done(Ok(unchanged_report(
                    existing,
                    run.revision,
                ))));
                continue;
            }
            parts.push(match self.prepare_bundle(bundle, extractor.as_ref()) {
                Ok((candidates, blobs)) => Preparation::Ready { candidates, blobs },
                Err(error) => Preparation::Done(Err(error)),
            });
        }
        parts
    }

    /// The batch's transaction over what `prepare_parts` made of the same bundles.
    fn apply_parts(
        &self,
        owner: &str,
        bundles: &[&Bundle],
        parts: Vec<Preparation>,
    ) -> Vec<EngineResult<IngestReport>> {
        let mut results: Vec<Option<EngineResult<IngestReport>>> =
            bundles.iter().map(|_| None).collect();
        let mut prepared = Vec::new();
        for (index, (bundle, part)) in bundles.iter().zip(parts).enumerate() {
            match part {
                Preparation::Done(result) => results[index] = Some(result),
                Preparation::Ready { candidates, blobs } => prepared.push((
                    index,
                    Prepared {
                        bundle,
                        candidates,
                        blobs,
                        now: self.now(),
                    },
                )),
            }
        }
        let batch = self.write(owner, |tx| {
            let mut reports = Vec::with_capacity(prepared.len());
            // The entities every bundle touches are rebuilt once, with the last bundle, whose
            // revision records their changes: a hub named in most meetings of the batch is rebuilt
            // once instead of once per meeting. Nothing a later bundle does reads an entity's
            // derived fields (names, times, weight, projection), and the rebuild is a function of
            // the stored rows alone (L14), so the state is the one-by-one state.
            let mut pending = PendingEntities::default();
            for (position, (_, one)) in prepared.iter().enumerate() {
                let entities = if position + 1 == prepared.len() {
                    EntityRebuild::WithPending(&mut pending)
                } else {
                    EntityRebuild::Defer(&mut pending)
                };
                reports.push(ingest_in_tx(self, tx, owner, one, entities)?);
                // The bundle's transcript is indexed beside the next one's work, not at the commit.
                tx.index_queued_search()?;
            }
            if !pending.is_empty() {
                // The last bundle turned out unchanged (it repeats the one before it): no revision
                // to record the rebuilt entities in, so the batch goes one bundle at a time.
                return Err(EngineError::Internal(
                    "a batch ended on an unchanged bundle".into(),
                ));
            }
            Ok(reports)
        });
        match batch {
            Ok(reports) => {
                for ((index, ..), report) in prepared.iter().zip(reports) {
                    results[*index] = Some(Ok(report));
                }
            }
            Err(_) => {
                for (index, one) in &prepared {
                    results[*index] = Some(self.write(owner, |tx| {
                        ingest_in_tx(self, tx, owner, one, EntityRebuild::Now)
                    }));
                }
            }
        }
        results
            .into_iter()
            .map(|result| {
                result.unwrap_or_else(|| {
                    Err(EngineError::Internal(
                        "a bundle of the batch was skipped".into(),
                    ))
                })
            })
            .collect()
    }

    /// A bundle's candidates (supplied, or extracted with `extractor`; screened, L21) and its
    /// attachments' blobs: everything its transaction needs that the transaction need not do.
    fn prepare_bundle(
        &self,
        bundle: &Bundle,
        extractor: &dyn Extractor,
    ) -> EngineResult<(Candidates, Blobs)> {
        let candidates = match &bundle.claims {
            Some(claims) => Candidates::screened(
                SUPPLIED_EXTRACTOR.to_string(),
                claims.clone(),
                Vec::new(),
                Vec::new(),
            ),
            None => run_extractor(self, bundle, extractor)?,
        };
        Ok((candidates, self.store_blobs(bundle)?))
    }

    /// Copies attachment bytes into the content-addressed blob folder before the transaction; a blob
    /// left behind by a failed transaction is harmless and reused.
    fn store_blobs(&self, bundle: &Bundle) -> EngineResult<Blobs> {
        let mut blobs = BTreeMap::new();
        for attachment in &bundle.attachments {
            let Some(path) = &attachment.path else {
                continue;
            };
            let bytes = std::fs::read(path).map_err(|error| {
                EngineError::Invalid(format!(
                    "cannot read attachment {}: {error}",
                    path.display()
                ))
            })?;
            let sha256 = sha256_hex(&bytes);
            let target = self.store.blob_dir().join(&sha256[..2]).join(&sha256);
            if !target.exists() {
                let folder = target.parent().expect("blob path has a folder");
                std::fs::create_dir_all(folder).map_err(|error| {
                    EngineError::Internal(format!("cannot create {}: {error}", folder.display()))
                })?;
                let temporary = folder.join(format!(".{sha256}.tmp"));
                std::fs::write(&temporary, &bytes)
                    .and_then(|()| std::fs::rename(&temporary, &target))
                    .map_err(|error| {
                        EngineError::Internal(format!("cannot store blob {sha256}: {error}"))
                    })?;
            }
            blobs.insert(attachment.id.clone(), (sha256, bytes.len() as i64));
        }
        Ok(blobs)
    }
}

/// Candidates ready to store: supplied by a bundle, or extracted and validated, each screened by the
/// sensitive-data guard (L21) when the candidates are made, before any transaction opens.
pub(crate) struct Candidates {
    pub(crate) extractor: String,
    pub(crate) claims: Vec<ClaimCandidate>,
    pub(crate) tasks: Vec<TaskInput>,
    /// The guard's verdict on each claim and each task, in order: `Some` rejects it.
    pub(crate) claim_verdicts: Vec<Option<guard::Rejection>>,
    pub(crate) task_verdicts: Vec<Option<guard::Rejection>>,
    /// Extractor notes and rejected candidates, each with its reason.
    pub(crate) diagnostics: Vec<String>,
}

impl Candidates {
    pub(crate) fn screened(
        extractor: String,
        claims: Vec<ClaimCandidate>,
        tasks: Vec<TaskInput>,
        diagnostics: Vec<String>,
    ) -> Candidates {
        Candidates {
            claim_verdicts: claims.iter().map(screen).collect(),
            task_verdicts: tasks.iter().map(screen_task).collect(),
            extractor,
            claims,
            tasks,
            diagnostics,
        }
    }
}

/// Runs an extractor over a bundle and validates its output exactly as a bundle's claims are validated.
pub(crate) fn run_extractor(
    engine: &Engine,
    bundle: &Bundle,
    extractor: &dyn Extractor,
) -> EngineResult<Candidates> {
    let extraction = extractor
        .extract(bundle)
        .map_err(|error| EngineError::Unavailable(format!("extraction failed: {error}")))?;
    let validated = lore_ingest::validate_candidates(
        bundle,
        &extraction.claims,
        &extraction.tasks,
        &engine.registry,
    );
    let mut diagnostics = extraction.diagnostics;
    for rejected in &validated.rejected {
        let message = format!("{}: candidate rejected: {}", extractor.id(), rejected);
        tracing::info!("{message}");
        diagnostics.push(message);
    }
    Ok(Candidates::screened(
        extractor.id(),
        validated.claims,
        validated.tasks,
        diagnostics,
    ))
}

/// The stored meeting of the bundle's external id with its extraction run for this content and
/// extractor, when there is one: the bundle repeats what is stored (L2).
fn stored_run(
    tx: &mut dyn Tx,
    bundle: &Bundle,
    extractor: &dyn Extractor,
) -> EngineResult<Option<(Meeting, ExtractionRun)>> {
    let extractor_id = match bundle.claims {
        Some(_) => SUPPLIED_EXTRACTOR.to_string(),
        None => extractor.id(),
    };
    let Some(existing) = tx.find_meeting_by_external_id(&bundle.meeting.external_id)? else {
        return Ok(None);
    };
    let run = tx.find_run(&existing.id, &bundle.content_hash, &extractor_id)?;
    Ok(run.map(|run| (existing, run)))
}

fn unchanged_report(existing: Meeting, revision: String) -> IngestReport {
    IngestReport {
        revision,
        meeting: existing.id,
        external_id: existing.external_id,
        outcome: IngestOutcome::Unchanged,
        claims: 0,
        rejected: 0,
        diagnostics: Vec::new(),
    }
}

/// When the entities a bundle touched are rebuilt.
enum EntityRebuild<'a> {
    /// In the bundle's own settle, recorded in its revision.
    Now,
    /// Later in the same transaction: they join the batch's pending entities.
    Defer(&'a mut PendingEntities),
    /// Now, with the batch's pending entities (emptied), all recorded in this bundle's revision.
    WithPending(&'a mut PendingEntities),
}

/// The entities earlier bundles of a batch left to rebuild: `Changes::entities` and
/// `Changes::mentioned`.
#[derive(Default)]
struct PendingEntities {
    entities: BTreeSet<String>,
    mentioned: BTreeSet<String>,
}

impl PendingEntities {
    fn is_empty(&self) -> bool {
        self.entities.is_empty() && self.mentioned.is_empty()
    }
}

/// Attachment blobs by attachment id: their SHA-256 and size.
type Blobs = BTreeMap<String, (String, i64)>;

/// What the work before a batch's transaction made of one bundle.
enum Preparation {
    /// Its outcome is known without the transaction: unchanged (L2), or an error.
    Done(EngineResult<IngestReport>),
    /// Ready to apply.
    Ready {
        candidates: Candidates,
        blobs: Blobs,
    },
}

/// A batch of `Engine::ingest_pipelined` after the work before its transaction: the caller's items,
/// and a `Preparation` for each bundle among them, in order.
struct PreparedBatch<T> {
    items: Vec<(T, EngineResult<Bundle>)>,
    parts: Vec<Preparation>,
}

impl<T> PreparedBatch<T> {
    /// The external ids of the meetings its bundles ingest.
    fn external_ids(&self) -> BTreeSet<String> {
        self.items
            .iter()
            .filter_map(|(_, bundle)| bundle.as_ref().ok())
            .map(|bundle| bundle.meeting.external_id.clone())
            .collect()
    }
}

/// A bundle ready to apply: its candidates extracted and its attachments stored as blobs (both
/// before the write transaction), and the transaction time it is recorded at.
struct Prepared<'a> {
    bundle: &'a Bundle,
    candidates: Candidates,
    blobs: Blobs,
    now: Ts,
}

fn ingest_in_tx(
    engine: &Engine,
    tx: &mut dyn Tx,
    owner: &str,
    prepared: &Prepared,
    entities: EntityRebuild<'_>,
) -> EngineResult<IngestReport> {
    let Prepared {
        bundle,
        candidates,
        blobs,
        now,
    } = prepared;
    let (bundle, now) = (*bundle, *now);
    let input = &bundle.meeting;
    let meeting_id = short_id("m_", &[&input.external_id]);
    let extractor = candidates.extractor.as_str();
    let mut changes = Changes::default();
    changes
        .diagnostics
        .extend(candidates.diagnostics.iter().cloned());
    let mut outcome = IngestOutcome::Created;
    let mut previously_recorded: BTreeMap<String, Ts> = BTreeMap::new();
    let mut replaced_people = BTreeSet::new();
    if let Some(existing) = tx.find_meeting_by_external_id(&input.external_id)? {
        if let Some(run) = tx.find_run(&existing.id, &bundle.content_hash, extractor)? {
            return Ok(unchanged_report(existing, run.revision));
        }
        // A statement the new content repeats keeps the transaction time it was first recorded at;
        // what the new content drops is erased, from the status history too (below).
        for row in tx.list_evidence_by_meeting(&existing.id)? {
            previously_recorded.insert(row.id, row.recorded_at);
        }
        replaced_people = crate::people::people_taught_by(tx, &existing.id)?;
        remove_meeting(tx, &existing, &mut changes)?;
        // The revisions that recorded the earlier content (its ingests and extractions) keep none
        // of it (erasure, SPEC 4).
        crate::apply::erase_whole_revisions(tx, &std::mem::take(&mut changes.source_revisions))?;
        outcome = IngestOutcome::Replaced;
    }

    let series_id = match &input.series {
        Some(series) => {
            let id = short_id(
                "ms_",
                &[
                    &series.calendar_account,
                    &series.calendar_id,
                    &series.recurring_event_id,
                ],
            );
            tx.upsert_series(&MeetingSeries {
                id: id.clone(),
                calendar_account: series.calendar_account.clone(),
                calendar_id: series.calendar_id.clone(),
                recurring_event_id: series.recurring_event_id.clone(),
            })?;
            Some(id)
        }
        None => None,
    };
    let meeting = Meeting {
        id: meeting_id.clone(),
        external_id: input.external_id.clone(),
        title: input.title.clone(),
        started_at: input.started_at,
        ended_at: input.ended_at,
        platform: input.platform.clone(),
        series: series_id.clone(),
        content_hash: bundle.content_hash.clone(),
    };
    tx.insert_meeting(&meeting)?;
    changes.record_row(format!("meeting:{meeting_id}"), None, Some(&meeting));

    let mut scope = MeetingScope {
        meeting_id: &meeting_id,
        series_id: series_id.as_deref(),
        observed_at: input.started_at,
        participants_by_name: BTreeMap::new(),
        participant_domains: bundle
            .participants
            .iter()
            .flat_map(|p| p.email.iter().chain(p.additional_emails.iter()))
            .filter_map(|email| email.split_once('@').map(|(_, domain)| domain.to_string()))
            .collect(),
        tag_keys: crate::tags::store_meeting_tags(tx, &meeting_id, &bundle.tags, &mut changes)?,
        recorded_aliases: Default::default(),
    };
    let mut speaker_names: BTreeMap<String, String> = BTreeMap::new();
    let mappings = tx.list_participant_mappings(&meeting_id)?;
    let mut applied_mappings = Vec::new();
    for (idx, participant) in bundle.participants.iter().enumerate() {
        if let Some(label) = &participant.speaker_label {
            speaker_names.insert(label.clone(), participant.display_name.clone());
        }
        let decision = crate::participants::decision_for(
            &mappings,
            &participant.display_name,
            participant.email.as_deref(),
        );
        let excluded = decision
            .as_ref()
            .is_some_and(|d| d.source == MappingSource::Excluded);
        applied_mappings.extend(decision.as_ref().map(|d| d.key.clone()));
        // The owner is never added as a participant of their own meetings.
        let is_owner = participant
            .email
            .as_deref()
            .is_some_and(|email| email.eq_ignore_ascii_case(owner));
        let manual_person = match &decision {
            Some(d) if d.source == MappingSource::Manual => {
                crate::participants::mapped_person(tx, d)?
            }
            _ => None,
        };
        let person = if excluded || is_owner {
            None
        } else if let Some(person) = manual_person {
            crate::resolve::record_participant_alias(
                tx,
                &person,
                &participant.display_name,
                &scope,
            )?;
            changes.touch_mention(&person);
            Some(person)
        } else {
            Some(crate::resolve::resolve_participant(
                tx,
                participant,
                &scope,
                &mut changes,
            )?)
        };
        if let Some(person) = &person {
            scope
                .participants_by_name
                .insert(value_key(&participant.display_name), person.clone());
        }
        tx.insert_participant(&Participant {
            meeting: meeting_id.clone(),
            idx: idx as i64,
            display_name: participant.display_name.clone(),
            email: participant.email.clone(),
            platform_stable_id: participant.platform_stable_id.clone(),
            device_id: participant.device_id.clone(),
            speaker_label: participant.speaker_label.clone(),
            person_entity: person,
            excluded,
        })?;
    }
    crate::tags::name_tagged_entities(tx, &bundle.tags, &scope, &mut changes)?;
    // Manual adds that the bundle does not list are re-applied after it.
    let mut next_idx = bundle.participants.len() as i64;
    for mapping in &mappings {
        if mapping.source != MappingSource::Manual || applied_mappings.contains(&mapping.key) {
            continue;
        }
        let Some(person) = crate::participants::mapped_person(tx, mapping)? else {
            continue;
        };
        crate::resolve::record_participant_alias(tx, &person, &mapping.display_name, &scope)?;
        changes.touch_mention(&person);
        tx.insert_participant(&Participant {
            meeting: meeting_id.clone(),
            idx: next_idx,
            display_name: mapping.display_name.clone(),
            email: mapping.email.clone(),
            platform_stable_id: None,
            device_id: None,
            speaker_label: None,
            person_entity: Some(person),
            excluded: false,
        })?;
        next_idx += 1;
    }
    let segments: Vec<Segment> = bundle
        .segments
        .iter()
        .enumerate()
        .map(|(seq, segment)| Segment {
            meeting: meeting_id.clone(),
            id: segment.id.clone(),
            seq: seq as i64,
            start_ms: segment.start_ms,
            end_ms: segment.end_ms,
            speaker_label: segment.speaker.clone(),
            attribution: segment.attribution,
            text: segment.text.clone(),
        })
        .collect();
    tx.insert_segments(&segments)?;
    let mut note_ids = BTreeMap::new();
    for note in &bundle.notes {
        let id = short_id("n_", &[&meeting_id, &note.id]);
        tx.insert_note(&Note {
            id: id.clone(),
            meeting: meeting_id.clone(),
            local_id: note.id.clone(),
            created_at: note.created_at,
            author: note.author.clone(),
            text: note.text.clone(),
        })?;
        note_ids.insert(note.id.clone(), id);
    }
    let mut attachment_ids = BTreeMap::new();
    for attachment in &bundle.attachments {
        let id = short_id("a_", &[&meeting_id, &attachment.id]);
        let (sha256, size) = blobs.get(&attachment.id).cloned().unwrap_or_default();
        tx.insert_attachment(&Attachment {
            id: id.clone(),
            meeting: meeting_id.clone(),
            local_id: attachment.id.clone(),
            kind: attachment.kind,
            filename: attachment.filename.clone(),
            media_type: attachment.media_type.clone(),
            sha256,
            size,
            created_at: attachment.created_at,
        })?;
        attachment_ids.insert(attachment.id.clone(), id);
    }
    for link in &bundle.links {
        let resource = ResourceLink {
            id: short_id("l_", &[&meeting_id, &link.url]),
            entity: None,
            meeting: Some(meeting_id.clone()),
            source_kind: SourceKind::Meeting,
            source_id: meeting_id.clone(),
            resource_type: link.resource_type,
            url: link.url.clone(),
            external_key: link.external_key.clone(),
            title: link.title.clone(),
            provenance: link.provenance,
            ingested_status: "url_only".into(),
            first_seen_at: input.started_at,
            last_seen_at: input.started_at,
        };
        tx.upsert_resource_link(&resource)?;
        changes.record_row(
            format!("resource_link:{}", resource.id),
            None,
            Some(&resource),
        );
    }

    // URLs mentioned in notes and the transcript are links too (url_only, never read).
    let mentioned = bundle
        .notes
        .iter()
        .map(|note| (note.text.as_str(), note.created_at))
        .chain(bundle.segments.iter().map(|segment| {
            (
                segment.text.as_str(),
                input.started_at.plus_millis(segment.start_ms),
            )
        }));
    let mut seen_links: BTreeSet<String> = bundle
        .links
        .iter()
        .map(|link| short_id("l_", &[&meeting_id, &link.url]))
        .collect();
    for (text, seen_at) in mentioned {
        for found in lore_ingest::find_urls(text) {
            let id = short_id("l_", &[&meeting_id, &found.url]);
            if !seen_links.insert(id.clone()) {
                continue;
            }
            let resource = ResourceLink {
                id,
                entity: None,
                meeting: Some(meeting_id.clone()),
                source_kind: SourceKind::Meeting,
                source_id: meeting_id.clone(),
                resource_type: found.resource_type,
                url: found.url,
                external_key: found.external_key,
                title: None,
                provenance: LinkProvenance::TranscriptMention,
                ingested_status: "url_only".into(),
                first_seen_at: seen_at,
                last_seen_at: seen_at,
            };
            tx.upsert_resource_link(&resource)?;
            changes.record_row(
                format!("resource_link:{}", resource.id),
                None,
                Some(&resource),
            );
        }
    }

    let run_id = short_id("x_", &[&meeting_id, &bundle.content_hash, extractor]);
    let context = EvidenceContext {
        meeting: &meeting,
        bundle,
        speaker_names: &speaker_names,
        note_ids: &note_ids,
        attachment_ids: &attachment_ids,
        run_id: &run_id,
        extractor,
        now,
        previously_recorded: &previously_recorded,
    };
    let task_verdicts: Vec<_> = bundle.tasks.iter().map(screen_task).collect();
    store_tasks(
        tx,
        &bundle.tasks,
        &task_verdicts,
        &scope,
        &context,
        &mut changes,
    )?;
    let (stored_claims, rejected) =
        store_extraction(engine, tx, candidates, &scope, &context, &mut changes)?;

    crate::people::reconcile_people(tx, Some(&meeting_id), &replaced_people, &mut changes)?;
    let touched_slots = changes.slots.clone();
    settle_slots(tx, &mut changes, now)?;
    match entities {
        EntityRebuild::Now => rebuild_entities(tx, &mut changes)?,
        EntityRebuild::Defer(pending) => {
            pending.entities.append(&mut changes.entities);
            pending.mentioned.append(&mut changes.mentioned);
        }
        EntityRebuild::WithPending(pending) => {
            changes.entities.append(&mut pending.entities);
            changes.mentioned.append(&mut pending.mentioned);
            rebuild_entities(tx, &mut changes)?;
        }
    }
    // The transcript and notes are the bundle's, as written above (the meeting was inserted by this
    // ingest, after removing the content it replaces).
    let segments: Vec<(&str, &str)> = bundle
        .segments
        .iter()
        .map(|segment| (segment.id.as_str(), segment.text.as_str()))
        .collect();
    let notes: Vec<(&str, &str)> = bundle
        .notes
        .iter()
        .filter_map(|note| Some((note_ids.get(&note.id)?.as_str(), note.text.as_str())))
        .collect();
    let written = crate::links::WrittenText {
        segments: &segments,
        notes: &notes,
    };
    crate::links::sync_ingested_meeting_attachments(tx, &meeting_id, written, &mut changes)?;
    if outcome == IngestOutcome::Replaced {
        let from = changes.history_replay_from();
        crate::temporal::rebuild_slot_histories(
            tx,
            &touched_slots,
            &mut Default::default(),
            &from,
        )?;
        // What only the earlier content said leaves the history with it (erasure, SPEC 4): from
        // the revisions that copied those rows (a merge that moved its evidence), and from this one.
        // A row of the meeting elsewhere (a merge re-derives evidence ids) is the earlier
        // content's when the new content does not say its words.
        let removed = changes.removed_keys();
        let said: BTreeSet<String> = tx
            .list_evidence_by_meeting(&meeting_id)?
            .into_iter()
            .map(|row| row.quote)
            .collect();
        let gone = |key: &str, row: &serde_json::Value| {
            crate::apply::row_of_meeting(&meeting_id, key, row)
                && row
                    .get("quote")
                    .and_then(|q| q.as_str())
                    .is_some_and(|quote| !said.contains(quote))
        };
        crate::apply::erase_source_from_revisions(
            tx,
            &meeting_id,
            false,
            &BTreeSet::new(),
            &removed,
            &gone,
        )?;
        changes.erase_removed_content();
    }
    let diagnostics = std::mem::take(&mut changes.diagnostics);
    let revision =
        changes.write_revision(tx, RevisionAction::ExtractionCommit, &meeting_id, None, now)?;
    tx.insert_run(&ExtractionRun {
        id: run_id.clone(),
        meeting: meeting_id.clone(),
        content_hash: bundle.content_hash.clone(),
        extractor: extractor.to_string(),
        revision: revision.clone(),
        created_at: now,
    })?;
    Ok(IngestReport {
        revision,
        meeting: meeting_id,
        external_id: input.external_id.clone(),
        outcome,
        claims: stored_claims,
        rejected,
        diagnostics,
    })
}

/// The id of an evidence row: the same words of the same source for the same claim, found by the
/// same extractor, are one row (L2); another extractor's finding is its own row.
pub(crate) fn derive_evidence_id(
    claim: &str,
    source_kind: SourceKind,
    source_id: &str,
    segment_ids: &[String],
    kind: EvidenceKind,
    extractor: &str,
) -> String {
    short_id(
        "v_",
        &[
            claim,
            source_kind.as_str(),
            source_id,
            &segment_ids.join(","),
            kind.as_str(),
            extractor,
        ],
    )
}

/// Stores tasks (a bundle's, or an extractor's) with their evidence.
pub(crate) fn store_tasks(
    tx: &mut dyn Tx,
    tasks: &[TaskInput],
    verdicts: &[Option<guard::Rejection>],
    scope: &MeetingScope,
    context: &EvidenceContext,
    changes: &mut Changes,
) -> EngineResult<()> {
    let meeting_id = &context.meeting.id;
    for (index, (task, verdict)) in tasks.iter().zip(verdicts).enumerate() {
        if let Some(rejection) = verdict {
            let message = format!(
                "tasks[{index}]: rejected by the sensitive-data guard ({}): {}",
                rejection.kind, rejection.reason
            );
            tracing::info!("{message}");
            changes.diagnostics.push(message);
            continue;
        }
        let assignee = task
            .assignee
            .as_ref()
            .map(|r| resolve(tx, r, Some(scope), changes))
            .transpose()?;
        let project = task
            .project
            .as_ref()
            .map(|r| resolve(tx, r, Some(scope), changes))
            .transpose()?;
        let evidence = task.evidence.as_ref().map(|e| context.locate(e));
        let task_id = short_id("t_", &[meeting_id, &value_key(&task.title)]);
        // A status the user set outlives re-ingestion of the meeting.
        let status = tx.find_task_decision(&task_id)?.unwrap_or(task.status);
        let stored = Task {
            id: task_id,
            meeting: Some(meeting_id.clone()),
            title: collapse_whitespace(&task.title),
            status,
            assignee,
            project,
            due_at: task.due_at,
            evidence: evidence.map(|located| {
                json!({"segment_ids": located.segment_ids, "quote": located.quote, "start_ms": located.start_ms,
                       "speaker": located.speaker, "observed_at": located.observed_at})
            })
            .unwrap_or(serde_json::Value::Null),
            created_at: context.meeting.started_at,
        };
        tx.insert_task(&stored)?;
        changes
            .entities
            .extend(stored.assignee.iter().chain(stored.project.iter()).cloned());
        changes.record_row(format!("task:{}", stored.id), None, Some(&stored));
    }
    Ok(())
}

/// Screens (L21), resolves and stores every candidate; returns how many were stored and rejected.
pub(crate) fn store_extraction(
    engine: &Engine,
    tx: &mut dyn Tx,
    candidates: &Candidates,
    scope: &MeetingScope,
    context: &EvidenceContext,
    changes: &mut Changes,
) -> EngineResult<(usize, usize)> {
    let (tasks, verdicts) = (&candidates.tasks, &candidates.task_verdicts);
    store_tasks(tx, tasks, verdicts, scope, context, changes)?;
    let mut stored_claims = 0;
    let mut rejected = 0;
    for (candidate, verdict) in candidates.claims.iter().zip(&candidates.claim_verdicts) {
        if let Some(rejection) = verdict {
            rejected += 1;
            let message = format!(
                "claims[{}]: rejected by the sensitive-data guard ({}): {}",
                candidate.index, rejection.kind, rejection.reason
            );
            tracing::info!("{message}");
            changes.diagnostics.push(message);
            continue;
        }
        let resolved = Resolved {
            candidate,
            subject: resolve(tx, &candidate.subject, Some(scope), changes)?,
            object: candidate
                .object
                .as_ref()
                .map(|r| resolve(tx, r, Some(scope), changes))
                .transpose()?,
            context: candidate
                .context
                .as_ref()
                .map(|r| resolve(tx, r, Some(scope), changes))
                .transpose()?,
        };
        store_candidate(engine, tx, &resolved, context, changes)?;
        stored_claims += 1;
    }
    Ok((stored_claims, rejected))
}

/// L21 for tasks: the title and the quote.
pub(crate) fn screen_task(task: &TaskInput) -> Option<guard::Rejection> {
    let mut texts = vec![task.title.as_str()];
    texts.extend(task.evidence.as_ref().and_then(|e| e.quote.as_deref()));
    guard::check_candidate(texts)
}

/// L21: every candidate passes the sensitive-data guard before it is stored.
pub(crate) fn screen(candidate: &ClaimCandidate) -> Option<guard::Rejection> {
    let mut texts: Vec<&str> = vec![candidate.predicate.as_str()];
    texts.extend(candidate.value.as_deref());
    texts.extend(candidate.evidence.quote.as_deref());
    texts.extend(candidate.object.as_ref().map(|o| o.name.as_str()));
    guard::check_candidate(texts)
}

pub(crate) struct EvidenceContext<'a> {
    pub(crate) meeting: &'a Meeting,
    pub(crate) bundle: &'a Bundle,
    pub(crate) speaker_names: &'a BTreeMap<String, String>,
    pub(crate) note_ids: &'a BTreeMap<String, String>,
    pub(crate) attachment_ids: &'a BTreeMap<String, String>,
    pub(crate) run_id: &'a str,
    /// Part of every evidence id, so that another extractor's evidence for the same words is its own row.
    pub(crate) extractor: &'a str,
    pub(crate) now: Ts,
    /// Transaction times of the replaced content's evidence, by evidence id.
    pub(crate) previously_recorded: &'a BTreeMap<String, Ts>,
}

/// Where a piece of evidence sits: its source, time and words.
struct Located {
    source_kind: SourceKind,
    source_id: String,
    observed_at: Ts,
    segment_ids: Vec<String>,
    start_ms: Option<i64>,
    end_ms: Option<i64>,
    speaker: Option<String>,
    speaker_label: Option<String>,
    attribution: Option<Attribution>,
    quote: String,
}

impl EvidenceContext<'_> {
    fn locate(&self, evidence: &EvidenceInput) -> Located {
        let quote_or = |fallback: &str| {
            let quote = evidence
                .quote
                .clone()
                .unwrap_or_else(|| fallback.to_string());
            truncate_chars(&quote, 1000).to_string()
        };
        if let Some(note) = &evidence.note {
            let stored = self.bundle.notes.iter().find(|n| &n.id == note);
            return Located {
                source_kind: SourceKind::Note,
                source_id: self.note_ids.get(note).cloned().unwrap_or_default(),
                observed_at: stored.map_or(self.meeting.started_at, |n| n.created_at),
                segment_ids: Vec::new(),
                start_ms: None,
                end_ms: None,
                speaker: stored.and_then(|n| n.author.clone()),
                speaker_label: None,
                attribution: None,
                quote: quote_or(stored.map_or("", |n| n.text.as_str())),
            };
        }
        if let Some(attachment) = &evidence.attachment {
            let stored = self.bundle.attachments.iter().find(|a| &a.id == attachment);
            return Located {
                source_kind: SourceKind::Attachment,
                source_id: self
                    .attachment_ids
                    .get(attachment)
                    .cloned()
                    .unwrap_or_default(),
                observed_at: stored.map_or(self.meeting.started_at, |a| a.created_at),
                segment_ids: Vec::new(),
                start_ms: None,
                end_ms: None,
                speaker: None,
                speaker_label: None,
                attribution: None,
                quote: quote_or(stored.map_or("", |a| a.filename.as_str())),
            };
        }
        let segments: Vec<_> = evidence
            .segment_ids
            .iter()
            .filter_map(|id| self.bundle.segments.iter().find(|s| &s.id == id))
            .collect();
        let first = segments.iter().min_by_key(|s| s.start_ms);
        let joined = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let label = first.and_then(|s| s.speaker.clone());
        Located {
            source_kind: SourceKind::Meeting,
            source_id: self.meeting.id.clone(),
            observed_at: self
                .meeting
                .started_at
                .plus_millis(first.map_or(0, |s| s.start_ms)),
            segment_ids: evidence.segment_ids.clone(),
            start_ms: first.map(|s| s.start_ms),
            end_ms: segments.iter().map(|s| s.end_ms).max(),
            speaker: label.as_ref().map(|l| {
                self.speaker_names
                    .get(l)
                    .cloned()
                    .unwrap_or_else(|| l.clone())
            }),
            speaker_label: label,
            attribution: first.map(|s| s.attribution),
            quote: quote_or(&joined),
        }
    }
}

/// The identity-bearing value of a candidate: text, normalized key, JSON extras and group.
pub struct ClaimValue {
    pub value_text: Option<String>,
    pub value_json: Option<serde_json::Value>,
    pub value_key: String,
    pub group_key: String,
}

/// Computes a claim's value and identity parts from what was stated (shared with manual claims).
pub fn claim_value(
    definition: &lore_core::PredicateDef,
    value: Option<&str>,
    object: Option<&str>,
    due_at: Option<Ts>,
) -> ClaimValue {
    let text = value.map(collapse_whitespace);
    let single = definition.cardinality == Cardinality::Single;
    let object_or_text_key = match (object, &text) {
        (Some(object), _) => object.to_string(),
        (None, Some(text)) if matches!(definition.object, ObjectSpec::Resource) => text.clone(),
        (None, Some(text)) => value_key(text),
        (None, None) => String::new(),
    };
    match (definition.is_deadline, due_at) {
        (true, Some(due)) => ClaimValue {
            value_text: text,
            value_json: Some(json!({"due_at": due.to_rfc3339()})),
            value_key: format!("{object_or_text_key}|due={}", due.to_rfc3339()),
            group_key: group_key(single, true, "", &object_or_text_key),
        },
        _ => ClaimValue {
            value_text: text,
            value_json: None,
            group_key: group_key(single, false, &object_or_text_key, ""),
            value_key: object_or_text_key,
        },
    }
}

fn store_candidate(
    engine: &Engine,
    tx: &mut dyn Tx,
    resolved: &Resolved,
    context: &EvidenceContext,
    changes: &mut Changes,
) -> EngineResult<()> {
    let candidate = resolved.candidate;
    let definition = engine.registry.get(&candidate.predicate).ok_or_else(|| {
        EngineError::Invalid(format!(
            "claims[{}].predicate: unknown predicate",
            candidate.index
        ))
    })?;
    let value = claim_value(
        definition,
        candidate.value.as_deref(),
        resolved.object.as_deref(),
        candidate.due_at,
    );
    let located = context.locate(&candidate.evidence);
    let claim = upsert_claim(
        tx,
        NewClaim {
            subject: &resolved.subject,
            predicate: &candidate.predicate,
            object: resolved.object.as_deref(),
            context: resolved.context.as_deref(),
            cardinality: definition.cardinality,
            value,
            valid_from: candidate.valid_from,
            valid_to: candidate.valid_to,
        },
        context.now,
        changes,
    )?;
    let kind = if candidate.ends {
        EvidenceKind::Termination
    } else {
        EvidenceKind::Support
    };
    let evidence_id = derive_evidence_id(
        &claim.id,
        located.source_kind,
        &located.source_id,
        &located.segment_ids,
        kind,
        context.extractor,
    );
    let recorded_at = context
        .previously_recorded
        .get(&evidence_id)
        .copied()
        .unwrap_or(context.now);
    let evidence = Evidence {
        id: evidence_id,
        claim: claim.id.clone(),
        source_kind: located.source_kind,
        source_id: located.source_id,
        meeting: Some(context.meeting.id.clone()),
        observed_at: located.observed_at,
        segment_ids: located.segment_ids,
        start_ms: located.start_ms,
        end_ms: located.end_ms,
        speaker: located.speaker,
        speaker_label: located.speaker_label,
        attribution: located.attribution,
        quote: located.quote,
        source_url: candidate.evidence.source_url.clone(),
        confidence: candidate.confidence,
        extraction_run_id: Some(context.run_id.to_string()),
        kind,
        authority: candidate.authority,
        outcome: candidate.outcome,
        recorded_at,
    };
    if tx.insert_evidence(&evidence)? {
        changes.record_row(format!("evidence:{}", evidence.id), None, Some(&evidence));
    }
    if matches!(definition.object, ObjectSpec::Resource) {
        if let Some(normalized) = candidate
            .value
            .as_deref()
            .and_then(|url| lore_ingest::normalize_url(url).ok())
        {
            let link = ResourceLink {
                id: short_id(
                    "l_",
                    &[&context.meeting.id, &resolved.subject, &normalized.url],
                ),
                entity: Some(resolved.subject.clone()),
                meeting: Some(context.meeting.id.clone()),
                source_kind: SourceKind::Meeting,
                source_id: context.meeting.id.clone(),
                resource_type: normalized.resource_type,
                url: normalized.url,
                external_key: normalized.external_key,
                title: None,
                provenance: LinkProvenance::TranscriptMention,
                ingested_status: "url_only".into(),
                first_seen_at: evidence.observed_at,
                last_seen_at: evidence.observed_at,
            };
            tx.upsert_resource_link(&link)?;
            changes.record_row(format!("resource_link:{}", link.id), None, Some(&link));
        }
    }
    for target in &candidate.supersedes {
        tx.insert_supersedes_link(&SupersedesLink {
            claim: claim.id.clone(),
            target: target.clone(),
            evidence: evidence.id.clone(),
        })?;
    }
    Ok(())
}

pub struct NewClaim<'a> {
    pub subject: &'a str,
    pub predicate: &'a str,
    pub object: Option<&'a str>,
    pub context: Option<&'a str>,
    pub cardinality: Cardinality,
    pub value: ClaimValue,
    pub valid_from: Option<Ts>,
    pub valid_to: Option<Ts>,
}

/// Returns the claim with this identity, creating it when new (L1: same identity, same claim).
pub fn upsert_claim(
    tx: &mut dyn Tx,
    new: NewClaim,
    now: Ts,
    changes: &mut Changes,
) -> EngineResult<Claim> {
    let id = short_id(
        "c_",
        &[
            new.subject,
            new.predicate,
            new.context.unwrap_or(""),
            &new.value.value_key,
        ],
    );
    if let Some(existing) = tx.find_claim(&id)? {
        // The caller adds evidence to it; settling tells whether its status changed.
        changes.touch_claim_evidence(&existing);
        return Ok(existing);
    }
    let claim = Claim {
        id,
        subject: new.subject.to_string(),
        predicate: new.predicate.to_string(),
        object_entity: new.object.map(str::to_string),
        value_text: new.value.value_text,
        value_json: new.value.value_json,
        value_key: new.value.value_key,
        context_entity: new.context.map(str::to_string),
        cardinality: new.cardinality,
        group_key: new.value.group_key,
        explicit_valid_from: new.valid_from,
        explicit_valid_to: new.valid_to,
        retracted_at: None,
        recorded_at: now,
        derived: ClaimDerived {
            status: ClaimStatus::Provisional,
            authority: Authority::Document,
            valid_from: None,
            valid_to: None,
            first_observed_at: None,
            last_observed_at: None,
            superseded_at: None,
            superseded_by: None,
            conflict: None,
            end_outcome: None,
            periods: Vec::new(),
        },
    };
    tx.insert_claim(&claim)?;
    changes.record_row(format!("claim:{}", claim.id), None, Some(&claim));
    changes.touch_claim(&claim);
    Ok(claim)
}
