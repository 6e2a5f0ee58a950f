//! Which entities a meeting's resource links concern (SPEC 2.2), stored as facts with their evidence.
//!
//! A link shared in a meeting (chat, calendar description, a URL said or written in a note) names no
//! entity of its own. At ingest it is attached to the entities it concerns, decided from the
//! meeting's own stored facts only:
//! * `claim`: the link is in a transcript segment or note that a claim about the entity (its subject)
//!   cites as evidence; the evidence row is kept with the attachment;
//! * `repository`: its GitHub repository is the key of a project named in the meeting;
//! * `organization`: its GitHub organization is the external key of a company named in the meeting;
//! * `title`: its label names (whole words) a project, company or concept by a name it was called in
//!   the meeting.
//!
//! The attachments of a meeting are a function of that meeting's facts (links, segments, notes,
//! names, evidence), so they never depend on ingestion order (L14), are re-derived whenever those
//! facts change (ingest, a merge or split, a note's deletion), are checked against a re-derivation by
//! `check_invariants`, and leave with their meeting (L13).

use std::collections::{BTreeMap, BTreeSet};

use lore_core::model::*;
use lore_core::normalize::{slug, value_key};
use lore_store::Tx;

use crate::apply::Changes;
use crate::EngineResult;

/// The organization and repository names in a `github:org/repo...` key.
fn github_parts(external_key: &str) -> Option<(&str, Option<&str>)> {
    let rest = external_key.strip_prefix("github:")?;
    match rest.split_once('/') {
        Some((org, repo)) => Some((
            org,
            Some(repo.split(['#', '/', '@']).next().unwrap_or(repo)),
        )),
        None => Some((rest.split(['#', '/', '@']).next().unwrap_or(rest), None)),
    }
}

/// Whether `title` mentions `name` as whole words.
fn mentions(title: &str, name: &str) -> bool {
    let name = value_key(name);
    if name.is_empty() {
        return false;
    }
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(value_key)
        .collect();
    let wanted: Vec<&str> = name.split_whitespace().collect();
    words
        .windows(wanted.len())
        .any(|window| window.iter().map(String::as_str).eq(wanted.iter().copied()))
}

pub fn attachment_key(attachment: &LinkAttachment) -> String {
    format!("link_attachment:{}|{}", attachment.link, attachment.entity)
}

/// The attachments one meeting's links should have, from the meeting's stored facts alone.
pub fn derive_meeting_attachments(
    tx: &mut dyn Tx,
    meeting: &str,
) -> EngineResult<Vec<LinkAttachment>> {
    derive_attachments_with(tx, meeting, None)
}

/// A meeting's transcript and notes as the caller has just written them (an ingest): `(segment id,
/// text)` and `(note id, text)` pairs.
#[derive(Clone, Copy)]
pub struct WrittenText<'w> {
    pub segments: &'w [(&'w str, &'w str)],
    pub notes: &'w [(&'w str, &'w str)],
}

/// `derive_meeting_attachments`, with the meeting's text when the caller has just written it (an
/// ingest), instead of reading it back.
fn derive_attachments_with(
    tx: &mut dyn Tx,
    meeting: &str,
    written: Option<WrittenText<'_>>,
) -> EngineResult<Vec<LinkAttachment>> {
    let links: Vec<ResourceLink> = tx
        .list_resource_links_by_meeting(meeting)?
        .into_iter()
        .filter(|link| link.entity.is_none())
        .collect();
    if links.is_empty() {
        return Ok(Vec::new());
    }
    // Where each URL occurs: `segment:<id>` or `note:<note id>`.
    let mut places: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // The meeting's text as written, or read back: segments, then notes.
    let (stored_segments, stored_notes) = match written {
        Some(_) => (Vec::new(), Vec::new()),
        None => (tx.list_segments(meeting)?, tx.list_notes(meeting)?),
    };
    let read_segments: Vec<(&str, &str)> = stored_segments
        .iter()
        .map(|segment| (segment.id.as_str(), segment.text.as_str()))
        .collect();
    let read_notes: Vec<(&str, &str)> = stored_notes
        .iter()
        .map(|note| (note.id.as_str(), note.text.as_str()))
        .collect();
    let texts = match written {
        Some(w) => [("segment", w.segments), ("note", w.notes)],
        None => [("segment", &read_segments[..]), ("note", &read_notes[..])],
    };
    for (kind, rows) in texts {
        for (id, text) in rows {
            for found in lore_ingest::find_urls(text) {
                places
                    .entry(found.url)
                    .or_default()
                    .insert(format!("{kind}:{id}"));
            }
        }
    }
    // Which claim subjects each place's evidence speaks about, with the evidence row (smallest id).
    // Only the places where a URL occurs are asked about.
    let linked: BTreeSet<&str> = places.values().flatten().map(String::as_str).collect();
    let mut evidence = match linked.is_empty() {
        true => Vec::new(),
        false => tx.list_evidence_by_meeting(meeting)?,
    };
    evidence.sort_by(|a, b| a.id.cmp(&b.id));
    let mut subjects: BTreeMap<String, String> = BTreeMap::new();
    let mut cited: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for row in &evidence {
        let mut cites: Vec<String> = match row.source_kind {
            SourceKind::Meeting => row
                .segment_ids
                .iter()
                .map(|id| format!("segment:{id}"))
                .collect(),
            SourceKind::Note => vec![format!("note:{}", row.source_id)],
            _ => Vec::new(),
        };
        cites.retain(|place| linked.contains(place.as_str()));
        if cites.is_empty() {
            continue;
        }
        let subject = match subjects.get(&row.claim) {
            Some(subject) => subject.clone(),
            None => {
                let Some(claim) = tx.find_claim(&row.claim)? else {
                    continue;
                };
                subjects.insert(row.claim.clone(), claim.subject.clone());
                claim.subject
            }
        };
        for place in cites {
            cited
                .entry(place)
                .or_default()
                .push((subject.clone(), row.id.clone()));
        }
    }
    // Entities named in the meeting, with the names they were called by there: only a link's
    // GitHub key or title is matched against them.
    let mut named: BTreeMap<String, (EntityKind, BTreeSet<String>)> = BTreeMap::new();
    let by_name = links.iter().any(|link| {
        link.title.is_some()
            || link
                .external_key
                .as_deref()
                .and_then(github_parts)
                .is_some()
    });
    let aliases = match by_name {
        true => tx.list_aliases_by_meeting(meeting)?,
        false => Vec::new(),
    };
    for alias in aliases {
        if !named.contains_key(&alias.entity) {
            let Some(entity) = tx.find_entity_header(&alias.entity)? else {
                continue;
            };
            named.insert(alias.entity.clone(), (entity.kind, BTreeSet::new()));
        }
        if let Some((_, names)) = named.get_mut(&alias.entity) {
            names.insert(alias.alias.clone());
        }
    }

    let mut found: BTreeMap<(String, String), LinkAttachment> = BTreeMap::new();
    let mut attach = |link: &ResourceLink, entity: &str, reason: &str, evidence: Option<&str>| {
        found
            .entry((link.id.clone(), entity.to_string()))
            .or_insert_with(|| LinkAttachment {
                link: link.id.clone(),
                entity: entity.to_string(),
                meeting: meeting.to_string(),
                reason: reason.to_string(),
                evidence: evidence.map(str::to_string),
            });
    };
    for link in &links {
        for place in places.get(&link.url).into_iter().flatten() {
            for (subject, evidence) in cited.get(place).into_iter().flatten() {
                attach(link, subject, "claim", Some(evidence));
            }
        }
        if let Some((org, repo)) = link.external_key.as_deref().and_then(github_parts) {
            if let Some(repo) = repo {
                if let Some(project) = tx.find_entity_by_identifier("key:project", &slug(repo))? {
                    if named.contains_key(&project) {
                        attach(link, &project, "repository", None);
                    }
                }
            }
            let org_key = format!("github:{}", org.to_lowercase());
            if let Some(company) = tx.find_entity_by_identifier("external", &org_key)? {
                if named.contains_key(&company) {
                    attach(link, &company, "organization", None);
                }
            }
        }
        if let Some(title) = &link.title {
            for (entity, (kind, names)) in &named {
                if *kind != EntityKind::Person && names.iter().any(|name| mentions(title, name)) {
                    attach(link, entity, "title", None);
                }
            }
        }
    }
    Ok(found.into_values().collect())
}

/// Makes the meeting's stored attachments equal to a fresh derivation, recording every change.
pub fn sync_meeting_attachments(
    tx: &mut dyn Tx,
    meeting: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    sync_attachments_with(tx, meeting, None, changes)
}

/// `sync_meeting_attachments` for a meeting whose transcript and notes the caller has just written
/// (all the text the meeting has): an ingest does not read back what it wrote.
pub fn sync_ingested_meeting_attachments(
    tx: &mut dyn Tx,
    meeting: &str,
    written: WrittenText<'_>,
    changes: &mut Changes,
) -> EngineResult<()> {
    sync_attachments_with(tx, meeting, Some(written), changes)
}

fn sync_attachments_with(
    tx: &mut dyn Tx,
    meeting: &str,
    written: Option<WrittenText<'_>>,
    changes: &mut Changes,
) -> EngineResult<()> {
    let stored = tx.list_link_attachments_by_meeting(meeting)?;
    let derived = derive_attachments_with(tx, meeting, written)?;
    for row in &stored {
        if !derived.contains(row) {
            tx.delete_link_attachment(&row.link, &row.entity)?;
            changes.record_row(attachment_key(row), Some(row), None);
        }
    }
    for row in &derived {
        if !stored.contains(row) {
            let previous = stored
                .iter()
                .find(|s| s.link == row.link && s.entity == row.entity);
            tx.upsert_link_attachment(row)?;
            changes.record_row(attachment_key(row), previous, Some(row));
        }
    }
    Ok(())
}

/// Removes a meeting's attachments (its links are going: L13).
pub fn remove_meeting_attachments(
    tx: &mut dyn Tx,
    meeting: &str,
    changes: &mut Changes,
) -> EngineResult<()> {
    for row in tx.list_link_attachments_by_meeting(meeting)? {
        tx.delete_link_attachment(&row.link, &row.entity)?;
        changes.record_row(attachment_key(&row), Some(&row), None);
    }
    Ok(())
}

/// Re-derives the attachments of every meeting that names, cites or is attached to these entities
/// (after a merge, split or undo moved their names and evidence).
pub fn sync_entities_meetings(
    tx: &mut dyn Tx,
    entities: &BTreeSet<String>,
    changes: &mut Changes,
) -> EngineResult<()> {
    let mut meetings: BTreeSet<String> = BTreeSet::new();
    for entity in entities {
        meetings.extend(tx.list_aliases(entity)?.into_iter().map(|a| a.meeting));
        meetings.extend(
            tx.list_link_attachments_by_entity(entity)?
                .into_iter()
                .map(|a| a.meeting),
        );
        for claim in tx.list_claims_by_subject(entity)? {
            meetings.extend(
                tx.list_evidence_by_claim(&claim.id)?
                    .into_iter()
                    .filter_map(|e| e.meeting),
            );
        }
    }
    for meeting in &meetings {
        if tx.find_meeting(meeting)?.is_some() {
            sync_meeting_attachments(tx, meeting, changes)?;
        }
    }
    Ok(())
}

/// The meeting links attached to the entity, as stored, with the attachment that shows each and the
/// attaching meeting's external id (for `show`); a URL attached from several meetings is listed once,
/// from the earliest.
pub fn attached_links(
    tx: &mut dyn Tx,
    entity: &str,
) -> EngineResult<Vec<lore_store::AttachedLink>> {
    let mut found = tx.list_attached_links(entity)?;
    found.sort_by(|a, b| {
        (a.link.first_seen_at, &a.link.url, &a.link.id).cmp(&(
            b.link.first_seen_at,
            &b.link.url,
            &b.link.id,
        ))
    });
    let mut seen = BTreeSet::new();
    found.retain(|attached| seen.insert(attached.link.url.clone()));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_keys_name_their_organization_and_repository() {
        assert_eq!(
            github_parts("github:northwind/atlas#42"),
            Some(("northwind", Some("atlas")))
        );
        assert_eq!(
            github_parts("github:northwind/atlas"),
            Some(("northwind", Some("atlas")))
        );
        assert_eq!(github_parts("github:northwind"), Some(("northwind", None)));
        assert_eq!(github_parts("drive:abc"), None);
    }

    #[test]
    fn titles_mention_whole_words_only() {
        assert!(mentions("Atlas x Globex integration doc", "Globex"));
        assert!(mentions(
            "#infra thread: Redis migration",
            "Redis migration"
        ));
        assert!(!mentions("Atlases everywhere", "Atlas"));
    }
}
