//! `lore export markdown DIR`: one owner's knowledge as a deterministic Markdown wiki (SPEC 5.7).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lore_core::model::*;
use lore_core::time::format_offset;
use lore_store::Tx;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::openkb::{claim_id, WikiClaim};
use super::{
    day, folder_of, openkb_origin, page_type, slug, wiki_authority, wiki_status, yaml_safe_json,
    LoreClaim, LoreEntityPage, LoreSummaryPage,
};
use crate::{Engine, EngineError, EngineResult};

#[derive(Clone, Debug, Serialize)]
pub struct ExportReport {
    pub dir: PathBuf,
    pub pages: usize,
    pub claims: usize,
}

/// A page to write, by its path under the export folder.
struct Page {
    path: String,
    content: String,
}

impl Engine {
    /// Writes the wiki of one owner under `dir/wiki/`. The same database gives byte-identical files.
    pub fn export_markdown(&self, owner: &str, dir: &Path) -> EngineResult<ExportReport> {
        let (pages, claims) = self.read(owner, render_wiki)?;
        write_pages(dir, &pages)?;
        Ok(ExportReport {
            dir: dir.to_path_buf(),
            pages: pages.len(),
            claims,
        })
    }
}

fn io_error(path: &Path, error: std::io::Error) -> EngineError {
    EngineError::Invalid(format!("cannot write {}: {error}", path.display()))
}

/// Replaces the wiki's pages: stale pages of a previous export are removed, nothing else is touched.
fn write_pages(dir: &Path, pages: &[Page]) -> EngineResult<()> {
    let wiki = dir.join("wiki");
    for folder in ["entities", "concepts", "summaries"] {
        let folder = wiki.join(folder);
        std::fs::create_dir_all(&folder).map_err(|e| io_error(&folder, e))?;
        let entries = std::fs::read_dir(&folder).map_err(|e| io_error(&folder, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md") && path.is_file() {
                std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
            }
        }
    }
    for page in pages {
        let path = dir.join(&page.path);
        std::fs::write(&path, &page.content).map_err(|e| io_error(&path, e))?;
    }
    Ok(())
}

/// Assigns `folder/slug` paths; equal slugs get `-2`, `-3`, ... in id order.
fn assign_paths(items: Vec<(&'static str, String, String)>) -> BTreeMap<String, String> {
    let mut sorted = items;
    sorted.sort();
    let mut used = BTreeSet::new();
    let mut paths = BTreeMap::new();
    for (folder, base, id) in sorted {
        let mut candidate = format!("{folder}/{base}");
        let mut n = 2;
        while used.contains(&candidate) {
            candidate = format!("{folder}/{base}-{n}");
            n += 1;
        }
        used.insert(candidate.clone());
        paths.insert(id, candidate);
    }
    paths
}

/// Names and page paths of everything a page may link to.
pub(crate) struct Directory {
    pub entities: BTreeMap<String, Entity>,
    pub entity_paths: BTreeMap<String, String>,
    pub meetings: BTreeMap<String, Meeting>,
    pub meeting_paths: BTreeMap<String, String>,
}

impl Directory {
    pub fn load(tx: &mut dyn Tx) -> EngineResult<Directory> {
        let entities: BTreeMap<String, Entity> = tx
            .list_entities()?
            .into_iter()
            .filter(|e| e.status != EntityStatus::Merged)
            .map(|e| (e.id.clone(), e))
            .collect();
        let entity_paths = assign_paths(
            entities
                .values()
                .map(|e| (folder_of(e.kind), slug(e.display_name()), e.id.clone()))
                .collect(),
        );
        let meetings: BTreeMap<String, Meeting> = tx
            .list_meetings()?
            .into_iter()
            .map(|m| (m.id.clone(), m))
            .collect();
        let meeting_paths = assign_paths(
            meetings
                .values()
                .map(|m| ("summaries", slug(&m.external_id), m.id.clone()))
                .collect(),
        );
        Ok(Directory {
            entities,
            entity_paths,
            meetings,
            meeting_paths,
        })
    }

    fn name(&self, id: &str) -> String {
        self.entities
            .get(id)
            .map(|e| e.display_name().to_string())
            .unwrap_or_else(|| id.to_string())
    }

    fn link(&self, id: &str) -> String {
        match self.entity_paths.get(id) {
            Some(path) => format!("[[{path}|{}]]", self.name(id)),
            None => self.name(id),
        }
    }

    fn meeting_link(&self, id: &str) -> String {
        match (self.meeting_paths.get(id), self.meetings.get(id)) {
            (Some(path), Some(meeting)) => format!("[[{path}|{}]]", meeting.title),
            _ => id.to_string(),
        }
    }
}

/// A claim of a page with its evidence, explicit links and OpenKB view.
pub(crate) struct PageClaim {
    pub claim: Claim,
    pub evidence: Vec<Evidence>,
    pub links: Vec<SupersedesLink>,
    pub wiki: WikiClaim,
}

/// The text of a Lore claim: subject, predicate, value or object, context and due date.
fn claim_text(directory: &Directory, claim: &Claim) -> String {
    let mut text = format!(
        "{} {}",
        directory.name(&claim.subject),
        claim.predicate.replace('_', " ")
    );
    let value = match &claim.object_entity {
        Some(object) => Some(directory.name(object)),
        None => claim.value_text.clone(),
    };
    if let Some(value) = value {
        text.push(' ');
        text.push_str(&value);
    }
    if let Some(context) = &claim.context_entity {
        let _ = write!(text, " (in {})", directory.name(context));
    }
    if let Some(due) = claim.due_at() {
        let _ = write!(text, " (due {})", day(due));
    }
    text.trim().to_string()
}

/// `<meeting external_id>#<segment ids>` of the first evidence (other sources name themselves).
fn source_anchor(directory: &Directory, claim: &Claim, evidence: &[Evidence]) -> String {
    let Some(first) = evidence.first() else {
        return format!("lore#{}", claim.id);
    };
    let meeting = first
        .meeting
        .as_ref()
        .and_then(|id| directory.meetings.get(id))
        .map(|m| m.external_id.clone());
    match (meeting, first.source_kind) {
        (Some(external_id), SourceKind::Meeting) => {
            format!("{external_id}#{}", first.segment_ids.join(","))
        }
        (Some(external_id), kind) => format!("{external_id}#{kind}:{}", first.source_id),
        (None, kind) => format!("{kind}#{}", first.source_id),
    }
}

/// Every claim of an entity's page in history order, with its OpenKB fields and page-local links.
pub(crate) fn page_claims(
    tx: &mut dyn Tx,
    directory: &Directory,
    entity: &str,
) -> EngineResult<Vec<PageClaim>> {
    let mut claims = tx.list_claims_by_subject(entity)?;
    claims.sort_by(|a, b| {
        (a.derived.first_observed_at, &a.predicate, &a.id).cmp(&(
            b.derived.first_observed_at,
            &b.predicate,
            &b.id,
        ))
    });
    let mut page = Vec::with_capacity(claims.len());
    for claim in claims {
        let evidence = tx.list_evidence_by_claim(&claim.id)?;
        let links = tx.list_supersedes_links(&claim.id)?;
        let (text, as_of, anchor, status, authority) = match openkb_origin(&claim) {
            Some(origin) => (
                origin.text,
                origin.as_of,
                origin.source_anchor,
                origin.status,
                origin.authority,
            ),
            None => {
                let as_of = claim
                    .derived
                    .valid_from
                    .or(claim.derived.first_observed_at)
                    .unwrap_or(claim.recorded_at);
                (
                    claim_text(directory, &claim),
                    as_of.to_rfc3339(),
                    source_anchor(directory, &claim, &evidence),
                    wiki_status(claim.derived.status).to_string(),
                    Some(wiki_authority(claim.derived.authority).to_string()),
                )
            }
        };
        page.push(PageClaim {
            wiki: WikiClaim {
                id: claim_id(&text, &as_of, &anchor),
                text,
                as_of,
                source_anchor: anchor,
                status,
                authority,
                supersedes: Vec::new(),
                superseded_by: Vec::new(),
            },
            claim,
            evidence,
            links,
        });
    }
    // Page-local supersession: Lore's own `superseded_by`, and links an OpenKB import applied.
    let index: BTreeMap<String, usize> = page
        .iter()
        .enumerate()
        .map(|(i, c)| (c.claim.id.clone(), i))
        .collect();
    let mut pairs: Vec<(usize, usize, bool)> = Vec::new();
    for (old, entry) in page.iter().enumerate() {
        if let Some(new) = entry
            .claim
            .derived
            .superseded_by
            .as_ref()
            .and_then(|id| index.get(id))
        {
            pairs.push((*new, old, false));
        }
    }
    for (new, entry) in page.iter().enumerate() {
        if openkb_origin(&entry.claim).is_some() {
            for link in &entry.links {
                if let Some(old) = index.get(&link.target) {
                    pairs.push((new, *old, true));
                }
            }
        }
    }
    pairs.sort();
    pairs.dedup();
    for (new, old, from_openkb) in pairs {
        let (new_id, old_id) = (page[new].wiki.id.clone(), page[old].wiki.id.clone());
        if !page[new].wiki.supersedes.contains(&old_id) {
            page[new].wiki.supersedes.push(old_id);
        }
        if !page[old].wiki.superseded_by.contains(&new_id) {
            page[old].wiki.superseded_by.push(new_id);
        }
        if from_openkb {
            page[old].wiki.status = "superseded".into();
        }
    }
    Ok(page)
}

/// The frontmatter object of one claim, keys in SPEC 5.7 order.
fn claim_json(entry: &PageClaim) -> Value {
    let mut object = Map::new();
    object.insert("id".into(), json!(entry.wiki.id));
    object.insert("text".into(), json!(entry.wiki.text));
    object.insert("as_of".into(), json!(entry.wiki.as_of));
    object.insert("source_anchor".into(), json!(entry.wiki.source_anchor));
    object.insert("status".into(), json!(entry.wiki.status));
    object.insert("authority".into(), json!(entry.wiki.authority));
    object.insert("supersedes".into(), json!(entry.wiki.supersedes));
    object.insert("superseded_by".into(), json!(entry.wiki.superseded_by));
    let lore = LoreClaim {
        status: Some(entry.claim.derived.status),
        authority: Some(entry.claim.derived.authority),
        valid_from: entry.claim.derived.valid_from,
        valid_to: entry.claim.derived.valid_to,
        claim: entry.claim.clone(),
        evidence: entry.evidence.clone(),
        supersedes_links: entry.links.clone(),
    };
    object.insert(
        "lore".into(),
        serde_json::to_value(&lore).unwrap_or(Value::Null),
    );
    Value::Object(object)
}

fn frontmatter(fields: &[(&str, Value)]) -> String {
    let mut out = String::from("---\n");
    for (key, value) in fields {
        let _ = writeln!(out, "{key}: {}", yaml_safe_json(value));
    }
    out.push_str("---\n");
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn render_wiki(tx: &mut dyn Tx) -> EngineResult<(Vec<Page>, usize)> {
    let directory = Directory::load(tx)?;
    let mut pages = Vec::new();
    let mut claim_count = 0;
    let mut index_entities = Vec::new();
    let mut index_concepts = Vec::new();
    for (id, entity) in &directory.entities {
        let path = directory.entity_paths[id].clone();
        let claims = page_claims(tx, &directory, id)?;
        claim_count += claims.len();
        let content = entity_page(tx, &directory, entity, &claims)?;
        let entry = format!(
            "- [[{path}]] ({}) — {}",
            entity.kind,
            one_line(&entity.current_brief)
        );
        match entity.kind {
            EntityKind::Concept => index_concepts.push((path.clone(), entry)),
            _ => index_entities.push((path.clone(), entry)),
        }
        pages.push(Page {
            path: format!("wiki/{path}.md"),
            content,
        });
    }
    let mut index_summaries = Vec::new();
    for (id, meeting) in &directory.meetings {
        let path = directory.meeting_paths[id].clone();
        index_summaries.push((
            path.clone(),
            format!(
                "- [[{path}]] ({}) — {}",
                day(meeting.started_at),
                one_line(&meeting.title)
            ),
        ));
        pages.push(Page {
            path: format!("wiki/{path}.md"),
            content: summary_page(tx, &directory, meeting)?,
        });
    }
    let mut index = String::from("# Index\n");
    for (title, mut entries) in [
        ("Entities", index_entities),
        ("Concepts", index_concepts),
        ("Summaries", index_summaries),
    ] {
        entries.sort();
        let _ = write!(index, "\n## {title}\n\n");
        for (_, entry) in entries {
            index.push_str(&entry);
            index.push('\n');
        }
    }
    pages.push(Page {
        path: "wiki/index.md".into(),
        content: index,
    });
    pages.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((pages, claim_count))
}

fn evidence_chip(directory: &Directory, evidence: &Evidence) -> String {
    let mut chip = match (&evidence.meeting, evidence.source_kind) {
        (Some(meeting), _) => directory.meeting_link(meeting),
        (None, SourceKind::Manual) => format!("manual edit {}", day(evidence.observed_at)),
        (None, _) => format!(
            "{} ({})",
            evidence
                .source_url
                .as_deref()
                .unwrap_or(&evidence.source_id),
            day(evidence.observed_at)
        ),
    };
    if let Some(start) = evidence.start_ms {
        let _ = write!(chip, " {}", format_offset(start));
    }
    if let Some(speaker) = &evidence.speaker {
        let _ = write!(chip, ", {speaker}");
    }
    if !evidence.quote.is_empty() {
        let _ = write!(chip, ": “{}”", one_line(&evidence.quote));
    }
    if evidence.kind == EvidenceKind::Termination {
        chip.push_str(" (ends it)");
    }
    chip
}

fn claim_line(directory: &Directory, entry: &PageClaim) -> String {
    let claim = &entry.claim;
    let value = match (&claim.object_entity, openkb_origin(claim)) {
        (Some(object), _) => directory.link(object),
        (None, Some(origin)) => origin.text,
        (None, None) => claim.value_text.clone().unwrap_or_default(),
    };
    let mut line = format!("**{}**: {}", claim.predicate.replace('_', " "), value);
    if let Some(context) = &claim.context_entity {
        let _ = write!(line, " (in {})", directory.link(context));
    }
    if let Some(due) = claim.due_at() {
        let _ = write!(line, " (due {})", day(due));
    }
    line
}

fn validity(derived: &ClaimDerived) -> String {
    match (derived.valid_from, derived.valid_to) {
        (Some(from), Some(to)) => format!("{} → {}", day(from), day(to)),
        (Some(from), None) => format!("since {}", day(from)),
        (None, Some(to)) => format!("until {}", day(to)),
        (None, None) => "no validity".into(),
    }
}

fn entity_page(
    tx: &mut dyn Tx,
    directory: &Directory,
    entity: &Entity,
    claims: &[PageClaim],
) -> EngineResult<String> {
    let aliases = tx.list_aliases(&entity.id)?;
    let mut alias_names: Vec<String> = aliases.iter().map(|a| a.alias.clone()).collect();
    alias_names.sort();
    alias_names.dedup();
    alias_names.retain(|a| a != entity.display_name());
    let lore = LoreEntityPage {
        entity: entity.clone(),
        identifiers: tx.list_identifiers_by_entity(&entity.id)?,
        aliases,
    };
    let mut out = frontmatter(&[
        ("type", json!(page_type(entity.kind))),
        ("description", json!(one_line(&entity.current_brief))),
        ("aliases", json!(alias_names)),
        (
            "claims",
            Value::Array(claims.iter().map(claim_json).collect()),
        ),
        ("lore", serde_json::to_value(&lore).unwrap_or(Value::Null)),
    ]);
    let _ = write!(
        out,
        "\n# {}\n\n{}\n\n*{} · {}*",
        entity.display_name(),
        entity.current_brief,
        entity.kind,
        entity.status
    );
    for email in &entity.emails {
        let _ = write!(out, " · {email}");
    }
    for domain in &entity.domains {
        let _ = write!(out, " · {domain}");
    }
    out.push('\n');
    if !alias_names.is_empty() {
        let _ = write!(out, "\nAlso known as: {}\n", alias_names.join(", "));
    }

    out.push_str("\n## Current\n\n");
    let mut any_current = false;
    for (key, value) in &entity.manual_attributes {
        any_current = true;
        let _ = writeln!(
            out,
            "- **{}**: {value} (set by hand)",
            key.replace('_', " ")
        );
    }
    for entry in claims
        .iter()
        .filter(|c| c.claim.derived.status == ClaimStatus::Active)
    {
        any_current = true;
        let _ = writeln!(
            out,
            "- {} ({})",
            claim_line(directory, entry),
            validity(&entry.claim.derived)
        );
        for evidence in &entry.evidence {
            let _ = writeln!(out, "  - {}", evidence_chip(directory, evidence));
        }
    }
    if !any_current {
        out.push_str("Nothing current.\n");
    }

    out.push_str("\n## History\n\n");
    if claims.is_empty() {
        out.push_str("No claims.\n");
    }
    for entry in claims {
        let derived = &entry.claim.derived;
        let mut line = claim_line(directory, entry);
        if matches!(
            derived.status,
            ClaimStatus::Superseded | ClaimStatus::Expired | ClaimStatus::Retracted
        ) {
            line = format!("~~{line}~~");
        }
        let _ = write!(
            out,
            "- {line} — {}, {}, {}",
            derived.status,
            derived.authority,
            validity(derived)
        );
        if let Some(by) = derived
            .superseded_by
            .as_ref()
            .and_then(|id| claims.iter().find(|c| &c.claim.id == id))
        {
            let _ = write!(out, "; replaced by {}", claim_line(directory, by));
        }
        let _ = writeln!(out, " `{}`", entry.wiki.id);
        for evidence in &entry.evidence {
            let _ = writeln!(out, "  - {}", evidence_chip(directory, evidence));
        }
    }

    // As `show` lists them. Import derives attachments from the meetings again, so this section is
    // read by people only.
    let links = crate::views::shown_links(tx, &entity.id)?;
    if !links.is_empty() {
        out.push_str("\n## Links\n\n");
        for (link, attached) in &links {
            let title = link.title.clone().unwrap_or_else(|| link.url.clone());
            let _ = write!(
                out,
                "- [{}]({}) ({}, {})",
                one_line(&title),
                link.url,
                link.resource_type,
                link.ingested_status
            );
            if let Some(by) = attached {
                let note = format!("attached by meeting {}: {}", by.meeting, by.reason);
                let _ = write!(out, "; {}", one_line(&note));
            }
            out.push('\n');
        }
    }
    let tasks = tx.list_tasks_by_entity(&entity.id)?;
    if !tasks.is_empty() {
        out.push_str("\n## Tasks\n\n");
        for task in &tasks {
            let _ = writeln!(out, "- {}", task_line(directory, task));
        }
    }
    Ok(out)
}

fn task_line(directory: &Directory, task: &Task) -> String {
    let mark = match task.status {
        TaskStatus::Done => "[x]",
        TaskStatus::Canceled => "[-]",
        TaskStatus::Open => "[ ]",
    };
    let mut line = format!("{mark} {}", one_line(&task.title));
    if let Some(assignee) = &task.assignee {
        let _ = write!(line, " — {}", directory.link(assignee));
    }
    if let Some(project) = &task.project {
        let _ = write!(line, " ({})", directory.link(project));
    }
    if let Some(due) = task.due_at {
        let _ = write!(line, ", due {}", day(due));
    }
    line
}

fn summary_page(tx: &mut dyn Tx, directory: &Directory, meeting: &Meeting) -> EngineResult<String> {
    let series = match &meeting.series {
        Some(id) => tx.find_series(id)?,
        None => None,
    };
    let lore = LoreSummaryPage {
        meeting: meeting.clone(),
        series,
        participants: tx.list_participants(&meeting.id)?,
        segments: tx.list_segments(&meeting.id)?,
        notes: tx.list_notes(&meeting.id)?,
        attachments: tx.list_attachments(&meeting.id)?,
        links: tx.list_resource_links_by_meeting(&meeting.id)?,
        tasks: tx.list_tasks_by_meeting(&meeting.id)?,
    };
    let mut out = frontmatter(&[
        ("type", json!("Summary")),
        (
            "description",
            json!(format!(
                "{} ({})",
                one_line(&meeting.title),
                day(meeting.started_at)
            )),
        ),
        ("sources", json!([meeting.external_id])),
        ("aliases", json!([])),
        ("claims", json!([])),
        ("lore", serde_json::to_value(&lore).unwrap_or(Value::Null)),
    ]);
    let _ = write!(
        out,
        "\n# {}\n\n*{}*",
        meeting.title,
        meeting.started_at.to_rfc3339()
    );
    if let Some(platform) = &meeting.platform {
        let _ = write!(out, " · {platform}");
    }
    let _ = writeln!(out, " · `{}`", meeting.external_id);

    if !lore.participants.is_empty() {
        out.push_str("\n## Participants\n\n");
        for participant in &lore.participants {
            let who = match &participant.person_entity {
                Some(person) if directory.entity_paths.contains_key(person) => {
                    format!(
                        "[[{}|{}]]",
                        directory.entity_paths[person], participant.display_name
                    )
                }
                _ => participant.display_name.clone(),
            };
            let _ = writeln!(out, "- {who}");
        }
    }

    let mut evidence = tx.list_evidence_by_meeting(&meeting.id)?;
    evidence.sort_by(|a, b| {
        (a.observed_at, a.start_ms, &a.id).cmp(&(b.observed_at, b.start_ms, &b.id))
    });
    if !evidence.is_empty() {
        out.push_str("\n## Knowledge from this meeting\n\n");
        for row in &evidence {
            let Some(claim) = tx.find_claim(&row.claim)? else {
                continue;
            };
            let entry = PageClaim {
                wiki: WikiClaim {
                    id: String::new(),
                    text: String::new(),
                    as_of: String::new(),
                    source_anchor: String::new(),
                    status: String::new(),
                    authority: None,
                    supersedes: Vec::new(),
                    superseded_by: Vec::new(),
                },
                claim,
                evidence: Vec::new(),
                links: Vec::new(),
            };
            let offset = row
                .start_ms
                .map(|ms| format!("{} ", format_offset(ms)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- {offset}{}: {} ({})",
                directory.link(&entry.claim.subject),
                claim_line(directory, &entry),
                entry.claim.derived.status
            );
        }
    }
    if !lore.segments.is_empty() {
        out.push_str("\n## Transcript\n\n");
        let names: BTreeMap<&str, &str> = lore
            .participants
            .iter()
            .filter_map(|p| {
                p.speaker_label
                    .as_deref()
                    .map(|label| (label, p.display_name.as_str()))
            })
            .collect();
        for segment in &lore.segments {
            let speaker = segment
                .speaker_label
                .as_deref()
                .map(|label| names.get(label).copied().unwrap_or(label))
                .unwrap_or("unknown");
            let _ = writeln!(
                out,
                "- {} **{speaker}**: {}",
                format_offset(segment.start_ms),
                one_line(&segment.text)
            );
        }
    }
    if !lore.notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        for note in &lore.notes {
            let _ = writeln!(out, "- {}", one_line(&note.text));
        }
    }
    if !lore.attachments.is_empty() {
        out.push_str("\n## Attachments\n\n");
        for attachment in &lore.attachments {
            let _ = writeln!(
                out,
                "- {} ({}, {} bytes, sha256 {})",
                attachment.filename, attachment.media_type, attachment.size, attachment.sha256
            );
        }
    }
    if !lore.links.is_empty() {
        out.push_str("\n## Links\n\n");
        for link in &lore.links {
            let title = link.title.clone().unwrap_or_else(|| link.url.clone());
            let _ = writeln!(out, "- [{}]({})", one_line(&title), link.url);
        }
    }
    if !lore.tasks.is_empty() {
        out.push_str("\n## Tasks\n\n");
        for task in &lore.tasks {
            let _ = writeln!(out, "- {}", task_line(directory, task));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_slugs_get_deterministic_suffixes_in_id_order() {
        let paths = assign_paths(vec![
            ("entities", "alice".into(), "e_b".into()),
            ("entities", "alice".into(), "e_a".into()),
            ("concepts", "alice".into(), "e_c".into()),
            ("entities", "alice".into(), "e_d".into()),
        ]);
        assert_eq!(paths["e_a"], "entities/alice");
        assert_eq!(paths["e_b"], "entities/alice-2");
        assert_eq!(paths["e_d"], "entities/alice-3");
        assert_eq!(paths["e_c"], "concepts/alice");
    }
}
