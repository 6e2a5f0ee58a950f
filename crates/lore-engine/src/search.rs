//! Lexical search over entity names and aliases, claim values, transcript segments and notes.
//!
//! Ranking: bm25 from the full-text index, boosted for active claims and by an entity's topic weight
//! (L19). The bm25 candidate set is bounded (the newest `CANDIDATE_LIMIT` matches), so a common word
//! costs no more than a rare one; `newest_first` orders those candidates by time instead.

use std::collections::{BTreeMap, HashMap};

use lore_core::model::*;
use lore_core::reading::{effective_status, topic_weight, weight_from_basis, MENTION_WEIGHT};
use lore_core::search::parse_search_query;
use lore_core::time::format_offset;
use lore_core::Ts;
use lore_store::{SearchCandidate, StoreError, Tx};
use serde::Serialize;

use crate::views::NamedRef;
use crate::{Engine, EngineError, EngineResult};

/// At most this many matches are ranked by bm25 per query.
pub const CANDIDATE_LIMIT: usize = 1000;
/// Boost of an active claim's rank over a superseded or expired one's.
const ACTIVE_CLAIM_BOOST: f64 = 1.5;

#[derive(Clone, Debug)]
pub struct SearchRequest {
    pub query: String,
    /// `entity`, `claim`, `segment` or `note`.
    pub kind: Option<String>,
    pub limit: usize,
    pub newest_first: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MeetingRef {
    pub id: String,
    pub external_id: String,
    pub title: String,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SearchHit {
    pub kind: String,
    /// The entity, claim or note id; for a segment, its id within the meeting.
    pub id: String,
    pub title: String,
    /// The matched text, matches wrapped in `[` and `]`.
    pub snippet: String,
    pub score: f64,
    pub at: Option<Ts>,
    pub meeting: Option<MeetingRef>,
    /// `mm:ss` into the meeting, for segments and claims.
    pub offset: Option<String>,
    /// The entity the hit is about (claims: their subject).
    pub entity: Option<NamedRef>,
    /// A claim's status.
    pub status: Option<ClaimStatus>,
}

pub const SEARCH_KINDS: &[&str] = &["entity", "claim", "segment", "note"];

/// A candidate with its score; the rows stay boxed so ranking moves small values.
struct Scored {
    candidate: SearchCandidate,
    score: f64,
    claim: Option<Box<Claim>>,
    entity: Option<Box<Entity>>,
}

impl Engine {
    /// Searches the owner's text; a malformed query is `Invalid("invalid search query: ...")`.
    pub fn search(&self, owner: &str, request: &SearchRequest) -> EngineResult<Vec<SearchHit>> {
        let query = parse_search_query(&request.query)
            .map_err(|error| EngineError::Invalid(format!("invalid search query: {error}")))?;
        if let Some(kind) = &request.kind {
            if !SEARCH_KINDS.contains(&kind.as_str()) {
                return Err(EngineError::Invalid(format!(
                    "unknown search kind '{kind}'; use one of: {}",
                    SEARCH_KINDS.join(", ")
                )));
            }
        }
        let limit = request.limit.clamp(1, 200);
        let now = self.now();
        self.read(owner, |tx| {
            let candidates = tx
                .search_candidates(&query, request.kind.as_deref(), CANDIDATE_LIMIT)
                .map_err(|error| match error {
                    StoreError::Conflict(message) => {
                        EngineError::Invalid(format!("invalid search query: {message}"))
                    }
                    other => EngineError::from_store(other),
                })?;
            let mut scored = Vec::with_capacity(candidates.len());
            for candidate in candidates {
                let relevance = -candidate.rank;
                match candidate.kind.as_str() {
                    "claim" => {
                        let Some(claim) = tx.find_claim(&candidate.reference)? else {
                            continue;
                        };
                        let boost = match effective_status(&claim.derived, now) {
                            ClaimStatus::Active => ACTIVE_CLAIM_BOOST,
                            ClaimStatus::Superseded | ClaimStatus::Expired => 1.0,
                            ClaimStatus::Provisional | ClaimStatus::Retracted => 0.5,
                        };
                        scored.push(Scored {
                            score: relevance * boost,
                            candidate,
                            claim: Some(Box::new(claim)),
                            entity: None,
                        });
                    }
                    "entity" => {
                        let Some(entity) = tx.find_entity(&candidate.reference)? else {
                            continue;
                        };
                        if entity.status == EntityStatus::Merged {
                            continue;
                        }
                        let weight = entity_weight(tx, &entity, now)?;
                        scored.push(Scored {
                            score: relevance * (1.0 + (1.0 + weight).ln()),
                            candidate,
                            claim: None,
                            entity: Some(Box::new(entity)),
                        });
                    }
                    _ => scored.push(Scored {
                        score: relevance,
                        candidate,
                        claim: None,
                        entity: None,
                    }),
                }
            }
            // Both orders are total (documents are unique), so picking the top `limit` first and
            // sorting only those gives exactly the order of a full sort.
            let order = |a: &Scored, b: &Scored| {
                if request.newest_first {
                    b.candidate
                        .at
                        .cmp(&a.candidate.at)
                        .then(b.candidate.doc.cmp(&a.candidate.doc))
                } else {
                    b.score
                        .total_cmp(&a.score)
                        .then(b.candidate.doc.cmp(&a.candidate.doc))
                }
            };
            if scored.len() > limit {
                scored.select_nth_unstable_by(limit - 1, order);
                scored.truncate(limit);
            }
            scored.sort_unstable_by(order);
            let docs: Vec<i64> = scored.iter().map(|hit| hit.candidate.doc).collect();
            let mut snippets: HashMap<i64, String> = tx
                .list_search_snippets(&query, &docs)?
                .into_iter()
                .collect();
            let mut meetings = BTreeMap::new();
            let mut hits = Vec::with_capacity(scored.len());
            for hit in scored {
                let snippet = snippets.remove(&hit.candidate.doc).unwrap_or_default();
                hits.push(build_hit(tx, snippet, hit, &mut meetings)?);
            }
            Ok(hits)
        })
    }
}

/// An entity's topic weight (L19) from its observations: the evidence of its claims and its names.
/// Read from the basis stored with the entity (one multiplication); summed from the observations only
/// when the basis cannot answer exactly (an observation after `now`).
pub fn entity_weight(tx: &mut dyn Tx, entity: &Entity, now: Ts) -> EngineResult<f64> {
    if let Some(weight) = weight_from_basis(entity.weight_basis, entity.weight_latest, now) {
        return Ok(weight);
    }
    observed_weight(tx, &entity.id, now)
}

/// An entity's topic weight (L19) summed from all its observations (the definition itself).
pub fn observed_weight(tx: &mut dyn Tx, entity: &str, now: Ts) -> EngineResult<f64> {
    let times = tx.list_observation_times(entity)?;
    Ok(topic_weight(
        times.into_iter().map(|at| (at, MENTION_WEIGHT)),
        now,
    ))
}

fn meeting_ref(
    tx: &mut dyn Tx,
    id: &str,
    cache: &mut BTreeMap<String, Option<MeetingRef>>,
) -> EngineResult<Option<MeetingRef>> {
    if !cache.contains_key(id) {
        let found = tx.find_meeting(id)?.map(|m| MeetingRef {
            id: m.id,
            external_id: m.external_id,
            title: m.title,
        });
        cache.insert(id.to_string(), found);
    }
    Ok(cache[id].clone())
}

fn named(tx: &mut dyn Tx, id: &str) -> EngineResult<Option<NamedRef>> {
    Ok(tx.find_entity(id)?.map(|e| NamedRef {
        id: e.id.clone(),
        kind: e.kind,
        name: e.display_name().to_string(),
    }))
}

fn build_hit(
    tx: &mut dyn Tx,
    snippet: String,
    scored: Scored,
    meetings: &mut BTreeMap<String, Option<MeetingRef>>,
) -> EngineResult<SearchHit> {
    let candidate = &scored.candidate;
    let mut hit = SearchHit {
        kind: candidate.kind.clone(),
        id: candidate.reference.clone(),
        title: String::new(),
        snippet,
        score: (scored.score * 1000.0).round() / 1000.0,
        at: candidate.at,
        meeting: None,
        offset: None,
        entity: None,
        status: None,
    };
    match candidate.kind.as_str() {
        "entity" => {
            if let Some(entity) = &scored.entity {
                hit.title = format!("{} ({})", entity.display_name(), entity.kind);
                hit.entity = named(tx, &entity.id)?;
            }
        }
        "claim" => {
            if let Some(claim) = &scored.claim {
                hit.entity = named(tx, &claim.subject)?;
                hit.status = Some(claim.derived.status);
                hit.title = format!(
                    "{} · {}",
                    hit.entity.as_ref().map(|e| e.name.as_str()).unwrap_or("?"),
                    claim.predicate
                );
                let evidence = tx.list_evidence_by_claim(&claim.id)?;
                if let Some(first) = evidence.iter().find(|e| e.meeting.is_some()) {
                    if let Some(meeting) = &first.meeting {
                        hit.meeting = meeting_ref(tx, meeting, meetings)?;
                    }
                    hit.offset = first.start_ms.map(format_offset);
                }
            }
        }
        _ => {
            if let Some(meeting) = &candidate.meeting {
                hit.meeting = meeting_ref(tx, meeting, meetings)?;
            }
            hit.offset = candidate.start_ms.map(format_offset);
            if let Some((_, segment)) = candidate.reference.split_once('/') {
                hit.id = segment.to_string();
            }
            hit.title = hit
                .meeting
                .as_ref()
                .map(|m| m.title.clone())
                .unwrap_or_default();
        }
    }
    Ok(hit)
}
