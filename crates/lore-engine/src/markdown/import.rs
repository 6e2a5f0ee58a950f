//! `lore import markdown DIR`: reads wiki pages (Lore's or OpenKB's) and merges their claims under
//! OpenKB's rules (SPEC 5.7), in one transaction with one revision.
//!
//! A claim that carries Lore's `lore` record is rebuilt from it: same claim id, same evidence, same
//! explicit links, so the rules derive the same state. A claim from OpenKB becomes a `note` claim on
//! the page's entity, backed by one evidence row whose source is the page and claim id; it keeps its
//! OpenKB fields so that a re-export gives it the same id. In Lore's own terms a `proposed` claim is
//! held as a guess (assistant authority, never current), `superseded` ends at its `as_of`, and
//! `abandoned` is a retraction.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lore_core::ids::short_id;
use lore_core::model::*;
use lore_core::normalize::{collapse_whitespace, truncate_chars};
use lore_core::slot::group_key;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;
use serde_json::{json, Value};

use super::export::{page_claims, Directory};
use super::openkb::{merge, normalize_claim, parse_as_of};
use super::{
    kind_of_page_type, parse_page, LoreClaim, LoreEntityPage, LoreSummaryPage, OpenKbOrigin,
    ParsedPage, OPENKB_KEY,
};
use crate::apply::{settle, Changes};
use crate::resolve::{resolve, suggest_same_name_merges};
use crate::{Engine, EngineError, EngineResult};

/// Something of a page that was not imported, and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct PageDrop {
    /// The page, relative to the wiki folder (`entities/alice-chen.md`).
    pub page: String,
    /// `page`, `claim`, `link` or `evidence`.
    pub what: String,
    /// The claim's position in the page's `claims` array.
    pub index: Option<usize>,
    /// The claim's OpenKB id (for a link: the superseding claim).
    pub claim: Option<String>,
    /// A link's target id.
    pub target: Option<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ImportReport {
    /// The revision written; `None` when nothing changed (a replay).
    pub revision: Option<String>,
    pub pages: usize,
    pub meetings: usize,
    pub entities: usize,
    pub claims_added: usize,
    pub claims_skipped: usize,
    pub links_applied: usize,
    pub dropped: Vec<PageDrop>,
    /// Notes from Lore's own rules (explicit links Lore's L9 did not apply).
    pub diagnostics: Vec<String>,
}

struct SourcePage {
    /// Relative to the wiki folder.
    label: String,
    folder: String,
    stem: String,
    parsed: Result<ParsedPage, String>,
}

impl Engine {
    /// Imports every page under `dir/wiki/` (or `dir` itself when it has no `wiki` folder).
    pub fn import_markdown(&self, owner: &str, dir: &Path) -> EngineResult<ImportReport> {
        let pages = read_pages(dir)?;
        let now = self.now();
        self.write(owner, |tx| {
            import_in_tx(tx, &pages, &dir.display().to_string(), now)
        })
    }
}

fn read_pages(dir: &Path) -> EngineResult<Vec<SourcePage>> {
    if !dir.is_dir() {
        return Err(EngineError::Invalid(format!(
            "no such folder: {}",
            dir.display()
        )));
    }
    let wiki = if dir.join("wiki").is_dir() {
        dir.join("wiki")
    } else {
        dir.to_path_buf()
    };
    let mut pages = Vec::new();
    for folder in ["summaries", "entities", "concepts"] {
        let path = wiki.join(folder);
        if !path.is_dir() {
            continue;
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
            .map_err(|e| EngineError::Invalid(format!("cannot read {}: {e}", path.display())))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for file in files {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let label = format!("{folder}/{stem}.md");
            let parsed = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|text| parse_page(&text));
            pages.push(SourcePage {
                label,
                folder: folder.to_string(),
                stem,
                parsed,
            });
        }
    }
    if pages.is_empty() {
        return Err(EngineError::Invalid(format!(
            "no wiki pages under {} (expected wiki/entities, wiki/concepts or wiki/summaries)",
            dir.display()
        )));
    }
    Ok(pages)
}

fn record<T: Serialize>(changes: &mut Changes, key: String, value: &T) {
    changes.record(key, None, serde_json::to_value(value).ok());
}

fn import_in_tx(
    tx: &mut dyn Tx,
    pages: &[SourcePage],
    dir: &str,
    now: Ts,
) -> EngineResult<ImportReport> {
    let mut report = ImportReport {
        pages: pages.len(),
        ..Default::default()
    };
    let mut changes = Changes::default();
    let drop_page = |report: &mut ImportReport, page: &SourcePage, reason: String| {
        report.dropped.push(PageDrop {
            page: page.label.clone(),
            what: "page".into(),
            index: None,
            claim: None,
            target: None,
            reason,
        });
    };

    // Meetings first: evidence and participants point at them.
    let mut new_meetings: Vec<LoreSummaryPage> = Vec::new();
    for page in pages.iter().filter(|p| p.folder == "summaries") {
        let parsed = match &page.parsed {
            Ok(parsed) => parsed,
            Err(reason) => {
                drop_page(&mut report, page, reason.clone());
                continue;
            }
        };
        if let Some(count) = parsed
            .fields
            .get("claims")
            .and_then(Value::as_array)
            .map(Vec::len)
        {
            if count > 0 && !parsed.fields.contains_key("lore") {
                drop_page(
                    &mut report,
                    page,
                    format!(
                        "{count} claims on a summary page name no entity; they are not imported"
                    ),
                );
            }
        }
        let Some(lore) = parsed.fields.get("lore") else {
            continue;
        };
        let summary: LoreSummaryPage = match serde_json::from_value(lore.clone()) {
            Ok(summary) => summary,
            Err(error) => {
                drop_page(
                    &mut report,
                    page,
                    format!("unreadable `lore` object: {error}"),
                );
                continue;
            }
        };
        if tx.find_meeting(&summary.meeting.id)?.is_some()
            || tx
                .find_meeting_by_external_id(&summary.meeting.external_id)?
                .is_some()
        {
            continue;
        }
        if let Some(series) = &summary.series {
            tx.upsert_series(series)?;
        }
        tx.insert_meeting(&summary.meeting)?;
        record(
            &mut changes,
            format!("meeting:{}", summary.meeting.id),
            &summary.meeting,
        );
        for participant in &summary.participants {
            tx.insert_participant(participant)?;
            changes.entities.extend(participant.person_entity.clone());
        }
        for segment in &summary.segments {
            tx.insert_segment(segment)?;
        }
        for note in &summary.notes {
            tx.insert_note(note)?;
        }
        for attachment in &summary.attachments {
            tx.insert_attachment(attachment)?;
        }
        report.meetings += 1;
        new_meetings.push(summary);
    }

    // Entities: Lore pages name theirs; OpenKB pages resolve by kind and title.
    let mut page_entities: BTreeMap<&str, String> = BTreeMap::new();
    let mut new_aliases: Vec<Alias> = Vec::new();
    for page in pages.iter().filter(|p| p.folder != "summaries") {
        let Ok(parsed) = &page.parsed else {
            if let Err(reason) = &page.parsed {
                drop_page(&mut report, page, reason.clone());
            }
            continue;
        };
        if let Some(lore) = parsed.fields.get("lore") {
            let entity_page: LoreEntityPage = match serde_json::from_value(lore.clone()) {
                Ok(entity_page) => entity_page,
                Err(error) => {
                    drop_page(
                        &mut report,
                        page,
                        format!("unreadable `lore` object: {error}"),
                    );
                    continue;
                }
            };
            let id = entity_page.entity.id.clone();
            if tx.find_entity(&id)?.is_none() {
                tx.upsert_entity(&entity_page.entity)?;
                for (scheme, value) in &entity_page.identifiers {
                    tx.insert_identifier(scheme, value, &id)?;
                }
                record(&mut changes, format!("entity:{id}"), &entity_page.entity);
                report.entities += 1;
            }
            for alias in &entity_page.aliases {
                let alias = Alias {
                    entity: id.clone(),
                    ..alias.clone()
                };
                if !tx.list_aliases(&id)?.contains(&alias) {
                    tx.insert_alias(&alias)?;
                    new_aliases.push(alias);
                }
            }
            changes.entities.insert(id.clone());
            page_entities.insert(page.label.as_str(), id);
            continue;
        }
        let page_type = parsed
            .fields
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = kind_of_page_type(page_type).or(match page.folder.as_str() {
            "concepts" => Some(EntityKind::Concept),
            _ => None,
        });
        let Some(kind) = kind else {
            drop_page(
                &mut report,
                page,
                format!("page type '{page_type}' is not Person, Organization, Project or Concept"),
            );
            continue;
        };
        let name = parsed
            .body
            .lines()
            .find_map(|line| line.strip_prefix("# "))
            .map(collapse_whitespace)
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| page.stem.replace(['-', '_'], " "));
        let before = tx.list_entities()?.len();
        let reference = lore_ingest::EntityRef {
            kind,
            name,
            email: None,
            domain: None,
            external_key: None,
            key: None,
        };
        let id = resolve(tx, &reference, None, &mut changes)?;
        if tx.list_entities()?.len() > before {
            report.entities += 1;
        }
        page_entities.insert(page.label.as_str(), id);
    }
    for alias in &new_aliases {
        suggest_same_name_merges(tx, &alias.entity, &alias.alias, alias.observed_at)?;
    }
    for summary in &new_meetings {
        for link in &summary.links {
            tx.upsert_resource_link(link)?;
            changes.entities.extend(link.entity.clone());
            record(&mut changes, format!("resource_link:{}", link.id), link);
        }
        for task in &summary.tasks {
            tx.insert_task(task)?;
            changes
                .entities
                .extend(task.assignee.iter().chain(task.project.iter()).cloned());
            record(&mut changes, format!("task:{}", task.id), task);
        }
    }

    // Claims, page by page, under OpenKB's merge rules.
    let directory = Directory::load(tx)?;
    for page in pages.iter().filter(|p| p.folder != "summaries") {
        let (Ok(parsed), Some(entity)) = (&page.parsed, page_entities.get(page.label.as_str()))
        else {
            continue;
        };
        let incoming = match parsed.fields.get("claims") {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items.clone(),
            Some(_) => {
                drop_page(
                    &mut report,
                    page,
                    "`claims` is not one line of JSON holding an array".into(),
                );
                continue;
            }
        };
        import_page_claims(
            tx,
            &directory,
            page,
            entity,
            &incoming,
            now,
            &mut changes,
            &mut report,
        )?;
    }

    settle(tx, &mut changes, now)?;
    for summary in &new_meetings {
        crate::links::sync_meeting_attachments(tx, &summary.meeting.id, &mut changes)?;
    }
    report.diagnostics = std::mem::take(&mut changes.diagnostics);
    if changes.is_empty() {
        return Ok(report);
    }
    let revision = changes.write_revision(
        tx,
        RevisionAction::ExtractionCommit,
        &format!("markdown:{dir}"),
        None,
        now,
    )?;
    for summary in &new_meetings {
        let meeting = &summary.meeting;
        tx.insert_run(&ExtractionRun {
            id: short_id(
                "x_",
                &[
                    &meeting.id,
                    &meeting.content_hash,
                    crate::ingest::SUPPLIED_EXTRACTOR,
                ],
            ),
            meeting: meeting.id.clone(),
            content_hash: meeting.content_hash.clone(),
            extractor: crate::ingest::SUPPLIED_EXTRACTOR.to_string(),
            revision: revision.clone(),
            created_at: now,
        })?;
    }
    report.revision = Some(revision);
    Ok(report)
}

#[allow(clippy::too_many_arguments)]
fn import_page_claims(
    tx: &mut dyn Tx,
    directory: &Directory,
    page: &SourcePage,
    entity: &str,
    incoming: &[Value],
    now: Ts,
    changes: &mut Changes,
    report: &mut ImportReport,
) -> EngineResult<()> {
    let stored = page_claims(tx, directory, entity)?;
    // OpenKB id -> (Lore claim id, the evidence an applied link hangs on).
    let mut lore_ids: BTreeMap<String, (String, Option<String>)> = stored
        .iter()
        .map(|c| {
            let evidence = c.evidence.first().map(|e| e.id.clone());
            (c.wiki.id.clone(), (c.claim.id.clone(), evidence))
        })
        .collect();
    let stored_wiki: Vec<_> = stored.into_iter().map(|c| c.wiki).collect();
    let outcome = merge(&stored_wiki, incoming);
    let label = page.label.clone();
    for dropped in &outcome.dropped_claims {
        report.dropped.push(PageDrop {
            page: label.clone(),
            what: "claim".into(),
            index: Some(dropped.index),
            claim: dropped.id.clone(),
            target: None,
            reason: dropped.reason.clone(),
        });
        if dropped.id.is_some() {
            report.claims_skipped += 1;
        }
    }
    for dropped in &outcome.dropped_links {
        report.dropped.push(PageDrop {
            page: label.clone(),
            what: "link".into(),
            index: None,
            claim: Some(dropped.claim.clone()),
            target: Some(dropped.target.clone()),
            reason: dropped.reason.clone(),
        });
    }

    let mut from_openkb: BTreeMap<String, bool> = BTreeMap::new();
    for (index, wiki_id) in &outcome.added {
        let raw = &incoming[*index];
        let lore = raw
            .get("lore")
            .filter(|v| !v.is_null())
            .map(|v| serde_json::from_value::<LoreClaim>(v.clone()));
        let result = match lore {
            Some(Ok(lore)) => restore_lore_claim(tx, entity, lore, changes)?
                .map(|ids| ids.map(|ids| (ids, false))),
            Some(Err(error)) => Err(format!("unreadable `lore` object: {error}")),
            None => import_openkb_claim(tx, &page.label, entity, raw, now, changes)?
                .map(|ids| Some((ids, true))),
        };
        match result {
            Ok(Some(((claim, evidence), openkb))) => {
                report.claims_added += 1;
                lore_ids.insert(wiki_id.clone(), (claim, evidence));
                from_openkb.insert(wiki_id.clone(), openkb);
            }
            Ok(None) => {}
            Err(reason) => report.dropped.push(PageDrop {
                page: label.clone(),
                what: "claim".into(),
                index: Some(*index),
                claim: Some(wiki_id.clone()),
                target: None,
                reason,
            }),
        }
    }
    for (new, old) in &outcome.applied_links {
        report.links_applied += 1;
        // Lore's own records carry their links; an OpenKB claim's applied link becomes a fact (L9).
        if from_openkb.get(new) != Some(&true) {
            continue;
        }
        let (Some((new_claim, Some(evidence))), Some((old_claim, _))) =
            (lore_ids.get(new), lore_ids.get(old))
        else {
            continue;
        };
        tx.insert_supersedes_link(&SupersedesLink {
            claim: new_claim.clone(),
            target: old_claim.clone(),
            evidence: evidence.clone(),
        })?;
        changes.record(
            format!("supersedes:{new_claim}:{old_claim}"),
            None,
            Some(json!({"claim": new_claim, "target": old_claim, "evidence": evidence})),
        );
    }
    Ok(())
}

type Restored = EngineResult<Result<Option<(String, Option<String>)>, String>>;

/// Rebuilds a claim from its Lore record. Inner `Err` is a reason to drop it.
fn restore_lore_claim(
    tx: &mut dyn Tx,
    entity: &str,
    lore: LoreClaim,
    changes: &mut Changes,
) -> Restored {
    let mut claim = lore.claim;
    if claim.subject != entity {
        return Ok(Err(format!(
            "its subject {} is not this page's entity {entity}",
            claim.subject
        )));
    }
    for other in [&claim.object_entity, &claim.context_entity]
        .into_iter()
        .flatten()
    {
        if tx.find_entity(other)?.is_none() {
            return Ok(Err(format!(
                "it refers to entity {other}, which has no page"
            )));
        }
    }
    let mut evidence = Vec::new();
    for mut row in lore.evidence {
        if let Some(meeting) = &row.meeting {
            if tx.find_meeting(meeting)?.is_none() {
                return Ok(Err(format!(
                    "its evidence {} cites meeting {meeting}, which has no summary page",
                    row.id
                )));
            }
        }
        row.claim = claim.id.clone();
        evidence.push(row);
    }
    if evidence.is_empty() && claim.retracted_at.is_none() {
        return Ok(Err("it has no evidence".into()));
    }
    if tx.find_claim(&claim.id)?.is_none() {
        claim.derived = ClaimDerived {
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
        };
        tx.insert_claim(&claim)?;
        record(changes, format!("claim:{}", claim.id), &claim);
    }
    changes.touch_claim(&claim);
    for row in &evidence {
        if tx.insert_evidence(row)? {
            record(changes, format!("evidence:{}", row.id), row);
        }
    }
    for link in &lore.supersedes_links {
        if evidence.iter().any(|e| e.id == link.evidence) {
            tx.insert_supersedes_link(&SupersedesLink {
                claim: claim.id.clone(),
                ..link.clone()
            })?;
        }
    }
    Ok(Ok(Some((
        claim.id.clone(),
        evidence.first().map(|e| e.id.clone()),
    ))))
}

/// Stores an OpenKB claim as a `note` claim on the page's entity.
fn import_openkb_claim(
    tx: &mut dyn Tx,
    page: &str,
    entity: &str,
    raw: &Value,
    now: Ts,
    changes: &mut Changes,
) -> EngineResult<Result<(String, Option<String>), String>> {
    let wiki = match normalize_claim(raw, false) {
        Ok(wiki) => wiki,
        Err(reason) => return Ok(Err(reason)),
    };
    // L21: an OpenKB claim is a candidate from outside; the guard sees it before it is stored.
    if let Some(rejection) = lore_core::guard::check_candidate([wiki.text.as_str()]) {
        return Ok(Err(format!(
            "rejected by the sensitive-data guard ({}): {}",
            rejection.kind, rejection.reason
        )));
    }
    let observed_at = parse_as_of(&wiki.as_of)
        .map(|as_of| as_of.to_ts())
        .unwrap_or(now);
    let origin = OpenKbOrigin {
        text: wiki.text.clone(),
        as_of: wiki.as_of.clone(),
        source_anchor: wiki.source_anchor.clone(),
        status: wiki.status.clone(),
        authority: wiki.authority.clone(),
    };
    let value_key = format!("openkb:{}", wiki.id);
    let claim_id = short_id("c_", &[entity, "note", "", &value_key]);
    if tx.find_claim(&claim_id)?.is_some() {
        return Ok(Err("this OpenKB claim is already stored on the page".into()));
    }
    let claim = Claim {
        id: claim_id.clone(),
        subject: entity.to_string(),
        predicate: "note".into(),
        object_entity: None,
        value_text: Some(collapse_whitespace(&wiki.text)),
        value_json: Some(json!({ OPENKB_KEY: origin })),
        group_key: group_key(false, false, &value_key, ""),
        value_key,
        context_entity: None,
        cardinality: Cardinality::Multi,
        explicit_valid_from: None,
        explicit_valid_to: None,
        retracted_at: (wiki.status == "abandoned").then_some(now),
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
    record(changes, format!("claim:{claim_id}"), &claim);
    changes.touch_claim(&claim);
    let authority = match (wiki.status.as_str(), wiki.authority.as_deref()) {
        ("proposed", _) | (_, Some("assistant")) => Authority::Assistant,
        (_, Some("first_party")) => Authority::FirstParty,
        _ => Authority::Document,
    };
    let source_id = format!("wiki:{page}#{}", wiki.id);
    let mut kinds = vec![EvidenceKind::Support];
    if wiki.status == "superseded" {
        kinds.push(EvidenceKind::Termination);
    }
    let mut first_evidence = None;
    for kind in kinds {
        let evidence = Evidence {
            id: short_id("v_", &[&claim_id, "note", &source_id, "", kind.as_str()]),
            claim: claim_id.clone(),
            source_kind: SourceKind::Note,
            source_id: source_id.clone(),
            meeting: None,
            observed_at,
            segment_ids: Vec::new(),
            start_ms: None,
            end_ms: None,
            speaker: None,
            speaker_label: None,
            attribution: None,
            quote: truncate_chars(&wiki.text, 1000).to_string(),
            source_url: Some(wiki.source_anchor.clone()),
            confidence: 1.0,
            extraction_run_id: None,
            kind,
            authority,
            outcome: None,
            recorded_at: now,
        };
        if tx.insert_evidence(&evidence)? {
            record(changes, format!("evidence:{}", evidence.id), &evidence);
        }
        first_evidence.get_or_insert(evidence.id);
    }
    Ok(Ok((claim_id, first_evidence)))
}
