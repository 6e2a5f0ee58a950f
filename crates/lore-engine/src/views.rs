//! Read views with a stable JSON shape (SPEC 5.3): entity lists, the current view, and history.

use std::collections::{BTreeMap, HashMap};

use lore_core::model::*;
use lore_core::reading::{deadline_state, effective_status, topic_weight, MENTION_WEIGHT};
use lore_core::time::format_offset;
use lore_core::Ts;
use lore_store::Tx;
use serde::Serialize;
use serde_json::Value;

use crate::resolve::find_entity;
use crate::{Engine, EngineResult};

#[derive(Clone, Debug, Default)]
pub struct ShowOptions {
    pub history: bool,
    pub include_provisional: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EntityRow {
    pub id: String,
    pub kind: EntityKind,
    pub name: String,
    pub status: EntityStatus,
    pub pinned: bool,
    /// Set when the listing is sorted by weight (L19).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_weight: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeetingRow {
    pub id: String,
    pub external_id: String,
    pub title: String,
    pub started_at: Ts,
    /// The meeting series' id, when the meeting belongs to one.
    pub series: Option<String>,
    pub participants: usize,
    pub segments: usize,
    pub notes: usize,
    pub evidence: usize,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NamedRef {
    pub id: String,
    pub kind: EntityKind,
    pub name: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EvidenceView {
    /// For `lore split --evidence`.
    pub id: String,
    pub meeting: Option<String>,
    pub meeting_title: Option<String>,
    pub observed_at: Ts,
    pub offset: Option<String>,
    pub segment_ids: Vec<String>,
    pub speaker: Option<String>,
    pub quote: String,
    pub kind: EvidenceKind,
    pub source: SourceKind,
    pub authority: Authority,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClaimView {
    pub id: String,
    pub predicate: String,
    pub value: Option<String>,
    pub object: Option<NamedRef>,
    pub context: Option<NamedRef>,
    pub status: ClaimStatus,
    pub authority: Authority,
    pub valid_from: Option<Ts>,
    pub valid_to: Option<Ts>,
    pub superseded_by: Option<String>,
    pub due_at: Option<Ts>,
    pub deadline_state: Option<DeadlineState>,
    pub conflict: Option<ConflictReason>,
    pub periods: Vec<Period>,
    pub evidence: Vec<EvidenceView>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EntityHeader {
    pub id: String,
    pub kind: EntityKind,
    pub name: String,
    /// When the entity is named by hand (`name` is that name): the name its sources give it, which
    /// clearing the manual name brings back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived_name: Option<String>,
    pub status: EntityStatus,
    pub emails: Vec<String>,
    pub domains: Vec<String>,
    pub aliases: Vec<String>,
    pub attributes: BTreeMap<String, Value>,
    pub brief: String,
    pub topic_weight: f64,
    pub pinned: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkView {
    pub url: String,
    pub resource_type: ResourceType,
    pub title: Option<String>,
    pub ingested_status: String,
    pub external_key: Option<String>,
    pub provenance: LinkProvenance,
    /// For a meeting link attached to the entity: the meeting (external id) and why it concerns
    /// the entity (`claim` with its evidence id, `repository`, `organization` or `title`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attached: Option<AttachedBy>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AttachedBy {
    pub meeting: String,
    pub reason: String,
    pub evidence: Option<String>,
}

/// The links an entity's page lists (`show`, the markdown export): its own, then those a meeting
/// attached to it (a URL said or written near what the meeting said about it) and it does not have
/// already, each with the meeting (by external id) and the reason.
pub(crate) fn shown_links(
    tx: &mut dyn Tx,
    entity: &str,
) -> EngineResult<Vec<(ResourceLink, Option<AttachedBy>)>> {
    let mut links: Vec<(ResourceLink, Option<AttachedBy>)> = tx
        .list_resource_links_by_entity(entity)?
        .into_iter()
        .map(|link| (link, None))
        .collect();
    for attached in crate::links::attached_links(tx, entity)? {
        if !links
            .iter()
            .any(|(listed, _)| listed.url == attached.link.url)
        {
            let by = AttachedBy {
                meeting: attached.meeting_external_id,
                reason: attached.attachment.reason,
                evidence: attached.attachment.evidence,
            };
            links.push((attached.link, Some(by)));
        }
    }
    Ok(links)
}

/// [`shown_links`] as the entity page lists them.
pub(crate) fn link_views(tx: &mut dyn Tx, entity: &str) -> EngineResult<Vec<LinkView>> {
    Ok(shown_links(tx, entity)?
        .into_iter()
        .map(|(l, attached)| LinkView {
            url: l.url,
            resource_type: l.resource_type,
            title: l.title,
            ingested_status: l.ingested_status,
            external_key: l.external_key,
            provenance: l.provenance,
            attached,
        })
        .collect())
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskView {
    pub id: String,
    pub title: String,
    pub status: TaskStatus,
    pub due_at: Option<Ts>,
    pub assignee: Option<String>,
    pub project: Option<String>,
}

/// The lean current view: what an entity page shows above the fold.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Projection {
    pub id: String,
    pub kind: EntityKind,
    pub name: String,
    pub status: EntityStatus,
    pub attributes: BTreeMap<String, Value>,
    pub brief: String,
    pub claims: Vec<ProjectedClaimView>,
    pub links: Vec<LinkView>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProjectedClaimView {
    pub id: String,
    pub predicate: String,
    pub value: Option<String>,
    pub object: Option<String>,
    pub context: Option<String>,
    pub authority: Authority,
    pub valid_from: Option<Ts>,
    pub valid_to: Option<Ts>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct EntityView {
    pub entity: EntityHeader,
    pub claims: Vec<ClaimView>,
    pub links: Vec<LinkView>,
    pub tasks: Vec<TaskView>,
}

impl Engine {
    /// Every entity not merged away, provisional ones included.
    pub fn list_entities(&self, owner: &str) -> EngineResult<Vec<EntityRow>> {
        self.read(owner, |tx| {
            Ok(tx
                .list_entities()?
                .into_iter()
                .filter(|e| e.status != EntityStatus::Merged)
                .map(|e| EntityRow {
                    id: e.id.clone(),
                    kind: e.kind,
                    name: e.display_name().to_string(),
                    status: e.status,
                    pinned: e.pinned,
                    topic_weight: None,
                })
                .collect())
        })
    }

    /// The current view (or the full history) of one entity, named as `find_entity` accepts.
    pub fn show(
        &self,
        owner: &str,
        entity: &str,
        options: &ShowOptions,
    ) -> EngineResult<EntityView> {
        let now = self.now();
        self.read(owner, |tx| {
            let entity = find_entity(tx, entity)?;
            entity_view(tx, &entity, options, now)
        })
    }

    /// Every meeting with how much of it is stored.
    pub fn list_meetings(&self, owner: &str) -> EngineResult<Vec<MeetingRow>> {
        self.read(owner, |tx| {
            let mut rows = Vec::new();
            for meeting in tx.list_meetings()? {
                let counts = tx.meeting_counts(&meeting.id)?;
                rows.push(MeetingRow {
                    segments: counts.segments,
                    notes: counts.notes,
                    participants: counts.participants,
                    evidence: counts.evidence,
                    id: meeting.id,
                    external_id: meeting.external_id,
                    title: meeting.title,
                    started_at: meeting.started_at,
                    series: meeting.series,
                });
            }
            Ok(rows)
        })
    }

    /// The current projection of one entity by id: stored attributes and brief, active claims, its
    /// resource links and the meeting links attached to it, as `show` lists them (the hot read behind
    /// entity pages; no evidence).
    pub fn projection(&self, owner: &str, id: &str) -> EngineResult<Projection> {
        self.read(owner, |tx| {
            let entity = tx
                .find_entity(id)?
                .ok_or_else(|| crate::EngineError::NotFound(format!("no entity with id '{id}'")))?;
            let claims = tx
                .list_projected_claims(id)?
                .into_iter()
                .map(|claim| ProjectedClaimView {
                    predicate: claim.predicate,
                    value: claim.value_text,
                    object: claim.object_entity,
                    context: claim.context_entity,
                    authority: claim.authority,
                    valid_from: claim.valid_from,
                    valid_to: claim.valid_to,
                    id: claim.id,
                })
                .collect();
            let links = link_views(tx, id)?;
            Ok(Projection {
                id: entity.id.clone(),
                kind: entity.kind,
                name: entity.display_name().to_string(),
                status: entity.status,
                attributes: entity.current_attributes,
                brief: entity.current_brief,
                claims,
                links,
            })
        })
    }

    pub fn list_suggestions(&self, owner: &str) -> EngineResult<Vec<Suggestion>> {
        self.read(owner, |tx| Ok(tx.list_suggestions()?))
    }
}

pub(crate) fn entity_view(
    tx: &mut dyn Tx,
    entity: &Entity,
    options: &ShowOptions,
    now: Ts,
) -> EngineResult<EntityView> {
    Ok(entity_view_with_sources(tx, entity, options, now)?.0)
}

/// The rows an entity view was built from, for readers that rework the view (time travel) without
/// reading them again: the subject's claims, and each claim's evidence recording times in the
/// order of its evidence views.
pub(crate) struct ViewSources {
    pub claims: Vec<Claim>,
    pub evidence_recorded_at: HashMap<String, Vec<Ts>>,
}

pub(crate) fn entity_view_with_sources(
    tx: &mut dyn Tx,
    entity: &Entity,
    options: &ShowOptions,
    now: Ts,
) -> EngineResult<(EntityView, ViewSources)> {
    let mut evidence_recorded_at = HashMap::new();
    let mut names = NameCache::default();
    let mut meetings: BTreeMap<String, Option<Meeting>> = BTreeMap::new();
    let mut claims = tx.list_claims_by_subject(&entity.id)?;
    claims.sort_by(|a, b| {
        (a.derived.first_observed_at, &a.predicate, &a.id).cmp(&(
            b.derived.first_observed_at,
            &b.predicate,
            &b.id,
        ))
    });
    // All the claims' evidence in one read, each claim's rows in their usual order.
    let mut evidence_of: HashMap<String, Vec<Evidence>> = HashMap::new();
    for row in tx.list_evidence_by_subject(&entity.id)? {
        evidence_of.entry(row.claim.clone()).or_default().push(row);
    }
    let mut views = Vec::new();
    let mut observations = Vec::new();
    for claim in &claims {
        let status = effective_status(&claim.derived, now);
        let shown = options.history
            || status == ClaimStatus::Active
            || (options.include_provisional && status == ClaimStatus::Provisional);
        let evidence = evidence_of.remove(&claim.id).unwrap_or_default();
        observations.extend(evidence.iter().map(|e| (e.observed_at, MENTION_WEIGHT)));
        evidence_recorded_at.insert(
            claim.id.clone(),
            evidence.iter().map(|e| e.recorded_at).collect::<Vec<_>>(),
        );
        if !shown {
            continue;
        }
        let mut evidence_views = Vec::new();
        for row in &evidence {
            let meeting = match &row.meeting {
                Some(id) => {
                    if !meetings.contains_key(id) {
                        let found = tx.find_meeting(id)?;
                        meetings.insert(id.clone(), found);
                    }
                    meetings[id].clone()
                }
                None => None,
            };
            evidence_views.push(EvidenceView {
                id: row.id.clone(),
                meeting: meeting.as_ref().map(|m| m.external_id.clone()),
                meeting_title: meeting.as_ref().map(|m| m.title.clone()),
                observed_at: row.observed_at,
                offset: row.start_ms.map(format_offset),
                segment_ids: row.segment_ids.clone(),
                speaker: row.speaker.clone(),
                quote: row.quote.clone(),
                kind: row.kind,
                source: row.source_kind,
                authority: row.authority,
            });
        }
        let due_at = claim.due_at();
        views.push(ClaimView {
            id: claim.id.clone(),
            predicate: claim.predicate.clone(),
            value: claim.value_text.clone(),
            object: names.named(tx, claim.object_entity.as_deref())?,
            context: names.named(tx, claim.context_entity.as_deref())?,
            status,
            authority: claim.derived.authority,
            valid_from: claim.derived.valid_from,
            valid_to: claim.derived.valid_to,
            superseded_by: claim.derived.superseded_by.clone(),
            due_at,
            deadline_state: due_at.and_then(|due| deadline_state(&claim.derived, due, now)),
            conflict: claim.derived.conflict,
            periods: claim.derived.periods.clone(),
            evidence: evidence_views,
        });
    }
    if !options.history {
        views.sort_by(|a, b| {
            (&a.predicate, a.valid_from, &a.id).cmp(&(&b.predicate, b.valid_from, &b.id))
        });
    }
    let aliases = tx.list_aliases(&entity.id)?;
    let mut alias_names: Vec<String> = aliases.iter().map(|a| a.alias.clone()).collect();
    alias_names.sort();
    alias_names.dedup();
    alias_names.retain(|a| a != entity.display_name());
    observations.extend(aliases.iter().map(|a| (a.observed_at, MENTION_WEIGHT)));

    let links = link_views(tx, &entity.id)?;
    let mut tasks = Vec::new();
    for task in tx.list_tasks_by_entity(&entity.id)? {
        let assignee = names.named(tx, task.assignee.as_deref())?.map(|n| n.name);
        let project = names.named(tx, task.project.as_deref())?.map(|n| n.name);
        tasks.push(TaskView {
            id: task.id,
            title: task.title,
            status: task.status,
            due_at: task.due_at,
            assignee,
            project,
        });
    }
    let view = EntityView {
        entity: EntityHeader {
            id: entity.id.clone(),
            kind: entity.kind,
            name: entity.display_name().to_string(),
            derived_name: entity
                .manual_name
                .as_ref()
                .map(|_| entity.canonical_name.clone()),
            status: entity.status,
            emails: entity.emails.clone(),
            domains: entity.domains.clone(),
            aliases: alias_names,
            attributes: entity.current_attributes.clone(),
            brief: entity.current_brief.clone(),
            topic_weight: (topic_weight(observations, now) * 1000.0).round() / 1000.0,
            pinned: entity.pinned,
        },
        claims: views,
        links,
        tasks,
    };
    Ok((
        view,
        ViewSources {
            claims,
            evidence_recorded_at,
        },
    ))
}

#[derive(Default)]
struct NameCache {
    names: BTreeMap<String, Option<NamedRef>>,
}

impl NameCache {
    fn named(&mut self, tx: &mut dyn Tx, id: Option<&str>) -> EngineResult<Option<NamedRef>> {
        let Some(id) = id else { return Ok(None) };
        if !self.names.contains_key(id) {
            let named = tx.find_entity(id)?.map(|e| NamedRef {
                id: e.id.clone(),
                kind: e.kind,
                name: e.display_name().to_string(),
            });
            self.names.insert(id.to_string(), named);
        }
        Ok(self.names[id].clone())
    }
}
