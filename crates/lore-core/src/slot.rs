//! Slot re-evaluation: the lifecycle state of every claim in one `(subject, predicate, context)` slot,
//! computed from the slot's remaining claims, their evidence and retractions alone (L4–L9, L12–L14).
//!
//! Nothing here depends on the order in which claims or evidence arrived: the result is a pure function
//! of the sets given, which is what makes ingestion order and deletion irrelevant to the final state (L14).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use crate::model::{
    Attribution, Authority, ClaimDerived, ClaimStatus, ConflictReason, Evidence, EvidenceKind,
    Outcome, Period,
};
use crate::time::Ts;

/// One evidence row as the rules see it.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotEvidence {
    pub id: String,
    pub observed_at: Ts,
    /// Position inside the source (segment start), breaking ties between equal times.
    pub order: i64,
    pub kind: EvidenceKind,
    pub authority: Authority,
    pub meeting: Option<String>,
    /// Who said it, when said in a meeting; `None` for notes, attachments and manual edits.
    pub speaker: Option<String>,
    pub attribution: Option<Attribution>,
    pub outcome: Option<Outcome>,
}

impl SlotEvidence {
    /// The rules' view of an evidence row.
    pub fn of(evidence: &Evidence) -> SlotEvidence {
        SlotEvidence {
            id: evidence.id.clone(),
            observed_at: evidence.observed_at,
            order: evidence.start_ms.unwrap_or(0),
            kind: evidence.kind,
            authority: evidence.authority,
            meeting: evidence.meeting.clone(),
            speaker: evidence
                .speaker_label
                .clone()
                .or_else(|| evidence.speaker.clone()),
            attribution: evidence.attribution,
            outcome: evidence.outcome,
        }
    }
}

/// One claim of the slot as the rules see it.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotClaim {
    pub id: String,
    /// Claims with the same group key compete for one value (see [`group_key`]).
    pub group_key: String,
    pub retracted: bool,
    pub explicit_valid_from: Option<Ts>,
    pub explicit_valid_to: Option<Ts>,
    pub evidence: Vec<SlotEvidence>,
    /// Claims this one explicitly names as replaced (L9).
    pub supersedes: Vec<String>,
}

impl SlotClaim {
    /// The claim as the rules read it, borrowed.
    pub fn view(&self) -> ClaimView<'_> {
        ClaimView {
            id: &self.id,
            group_key: &self.group_key,
            retracted: self.retracted,
            explicit_valid_from: self.explicit_valid_from,
            explicit_valid_to: self.explicit_valid_to,
            evidence: self.evidence.iter().collect(),
            supersedes: self.supersedes.iter().map(String::as_str).collect(),
        }
    }
}

/// One claim of the slot as the rules read it, borrowed from wherever its rows are kept: a status
/// history replay evaluates the slot at every instant over the facts recorded by then without
/// copying them (`evaluate_views`).
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimView<'a> {
    pub id: &'a str,
    pub group_key: &'a str,
    pub retracted: bool,
    pub explicit_valid_from: Option<Ts>,
    pub explicit_valid_to: Option<Ts>,
    pub evidence: Vec<&'a SlotEvidence>,
    pub supersedes: Vec<&'a str>,
}

/// An explicit `supersedes` link that was not applied, and why (L9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedLink {
    pub claim: String,
    pub target: String,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SlotOutcome {
    pub states: BTreeMap<String, ClaimDerived>,
    pub dropped_links: Vec<DroppedLink>,
}

/// The key under which claims of a slot compete. Single-valued predicates: one group for the whole slot.
/// Multi-valued: each value stands alone. Deadlines: one group per commitment, so a new due date for the
/// same commitment supersedes the old one (L10 rescheduling).
pub fn group_key(
    single_valued: bool,
    is_deadline: bool,
    value_key: &str,
    commitment_key: &str,
) -> String {
    if is_deadline {
        format!("deadline:{commitment_key}")
    } else if single_valued {
        String::new()
    } else {
        format!("value:{value_key}")
    }
}

/// Sort key of an evidence row on the slot's timeline.
fn timeline_key(evidence: &SlotEvidence) -> (Ts, i64, u8, &str) {
    let kind_rank = match evidence.kind {
        EvidenceKind::Support => 0,
        EvidenceKind::Termination => 1,
    };
    (
        evidence.observed_at,
        evidence.order,
        kind_rank,
        evidence.id.as_str(),
    )
}

/// A claim's authority is the strongest authority among its evidence (a first-party confirmation of an
/// assistant's guess makes it first-party; deleting that confirmation makes it a guess again).
pub fn claim_authority(claim: &SlotClaim) -> Authority {
    view_authority(&claim.view())
}

fn view_authority(claim: &ClaimView) -> Authority {
    claim
        .evidence
        .iter()
        .map(|evidence| evidence.authority)
        .max()
        .unwrap_or(Authority::Document)
}

struct Working<'a> {
    claim: &'a ClaimView<'a>,
    authority: Authority,
    eligible: bool,
    /// Support evidence that enters the timeline (after L7 exclusions).
    included_support: Vec<&'a SlotEvidence>,
    exclusion: Option<ConflictReason>,
    periods: Vec<Period>,
    /// How the last period closed: by another claim, or by a termination.
    closed_by_termination: Option<(Ts, Option<Outcome>)>,
}

/// Computes the derived state of every claim in one slot.
pub fn evaluate_slot(claims: &[SlotClaim]) -> SlotOutcome {
    let views: Vec<ClaimView> = claims.iter().map(SlotClaim::view).collect();
    evaluate_views(&views)
}

/// `evaluate_slot` over borrowed claims.
pub fn evaluate_views(claims: &[ClaimView]) -> SlotOutcome {
    let mut working: BTreeMap<&str, Working> = BTreeMap::new();
    for claim in claims {
        let authority = view_authority(claim);
        working.insert(
            claim.id,
            Working {
                claim,
                authority,
                eligible: !claim.retracted && authority != Authority::Assistant,
                included_support: Vec::new(),
                exclusion: None,
                periods: Vec::new(),
                closed_by_termination: None,
            },
        );
    }

    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for claim in claims {
        groups.entry(claim.group_key).or_default().push(claim.id);
    }
    let mut holders: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for (group, members) in groups {
        select_timeline_evidence(&mut working, &members);
        let holder = walk_timeline(&mut working, &members);
        holders.insert(group, holder);
    }

    let mut states: BTreeMap<String, ClaimDerived> = BTreeMap::new();
    for claim in claims {
        let holder = holders.get(claim.group_key).copied().flatten();
        states.insert(claim.id.to_string(), derive_state(&working, claim, holder));
    }
    let dropped_links = apply_explicit_links(claims, &working, &mut states);
    SlotOutcome {
        states,
        dropped_links,
    }
}

/// L7: excludes evidence from meetings where different speakers left incompatible values unresolved,
/// and weakly attributed evidence that contradicts an earlier mapped statement.
fn select_timeline_evidence(working: &mut BTreeMap<&str, Working>, members: &[&str]) {
    // Per meeting, each speaker's last statement decides what that speaker holds at the meeting's end.
    let mut last_by_speaker: BTreeMap<(&str, &str), (&SlotEvidence, &str)> = BTreeMap::new();
    for &claim_id in members {
        let entry = &working[claim_id];
        if !entry.eligible {
            continue;
        }
        for &evidence in &entry.claim.evidence {
            if evidence.kind != EvidenceKind::Support {
                continue;
            }
            let (Some(meeting), Some(speaker)) =
                (evidence.meeting.as_deref(), evidence.speaker.as_deref())
            else {
                continue;
            };
            let slot = last_by_speaker
                .entry((meeting, speaker))
                .or_insert((evidence, claim_id));
            if timeline_key(evidence) > timeline_key(slot.0) {
                *slot = (evidence, claim_id);
            }
        }
    }
    let mut claims_by_meeting: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for ((meeting, _speaker), (_evidence, claim_id)) in &last_by_speaker {
        claims_by_meeting
            .entry(meeting)
            .or_default()
            .insert(claim_id);
    }
    let conflicted_meetings: BTreeSet<&str> = claims_by_meeting
        .iter()
        .filter(|(_, claim_ids)| claim_ids.len() > 1)
        .map(|(meeting, _)| *meeting)
        .collect();

    // Strong evidence of each claim, after the same-meeting exclusion.
    let mut included: BTreeMap<&str, Vec<&SlotEvidence>> = BTreeMap::new();
    for &claim_id in members {
        let entry = &working[claim_id];
        if !entry.eligible {
            continue;
        }
        let kept = entry
            .claim
            .evidence
            .iter()
            .copied()
            .filter(|evidence| evidence.kind == EvidenceKind::Support)
            .filter(|evidence| {
                !evidence
                    .meeting
                    .as_deref()
                    .is_some_and(|m| conflicted_meetings.contains(m))
            })
            .collect();
        included.insert(claim_id, kept);
    }
    let is_strong =
        |evidence: &SlotEvidence| evidence.attribution.is_none_or(Attribution::is_strong);
    // A weak statement yields to another claim's strong one made at or before it: each claim's
    // earliest strong time, and the two earliest of different claims, answer that for every weak
    // statement without comparing every pair of claims.
    let earliest_strong: Vec<(Ts, &str)> = included
        .iter()
        .filter_map(|(&claim_id, kept)| {
            kept.iter()
                .filter(|evidence| is_strong(evidence))
                .map(|evidence| evidence.observed_at)
                .min()
                .map(|at| (at, claim_id))
        })
        .collect();
    let mut firsts: [Option<(Ts, &str)>; 2] = [None, None];
    for &(at, claim_id) in &earliest_strong {
        if firsts[0].is_none_or(|(first, _)| at < first) {
            firsts = [Some((at, claim_id)), firsts[0]];
        } else if firsts[1].is_none_or(|(second, _)| at < second) {
            firsts[1] = Some((at, claim_id));
        }
    }
    let earliest_strong_of_others = |claim_id: &str| match firsts {
        [Some((_, first)), second] if first == claim_id => second.map(|(at, _)| at),
        [first, _] => first.map(|(at, _)| at),
    };
    let mut after_weak_filter: BTreeMap<&str, Vec<&SlotEvidence>> = BTreeMap::new();
    for (&claim_id, kept) in &included {
        let others = earliest_strong_of_others(claim_id);
        let filtered = kept
            .iter()
            .copied()
            .filter(|evidence| {
                is_strong(evidence) || others.is_none_or(|at| at > evidence.observed_at)
            })
            .collect();
        after_weak_filter.insert(claim_id, filtered);
    }

    for &claim_id in members {
        let entry = working.get_mut(claim_id).expect("member of the slot");
        if !entry.eligible {
            continue;
        }
        let before = included.get(claim_id).map_or(0, Vec::len);
        let kept = after_weak_filter.remove(claim_id).unwrap_or_default();
        let had_support = entry
            .claim
            .evidence
            .iter()
            .any(|e| e.kind == EvidenceKind::Support);
        if had_support && kept.is_empty() {
            entry.exclusion = Some(if before == 0 {
                ConflictReason::SameMeeting
            } else {
                ConflictReason::WeakAttribution
            });
        }
        entry.included_support = kept;
    }
}

/// Walks the group's evidence in time order; returns the claim holding the group at the end.
fn walk_timeline<'a>(
    working: &mut BTreeMap<&'a str, Working<'a>>,
    members: &[&'a str],
) -> Option<&'a str> {
    let mut events: Vec<(&'a SlotEvidence, &'a str)> = Vec::new();
    for &claim_id in members {
        let entry = &working[claim_id];
        if !entry.eligible {
            continue;
        }
        events.extend(
            entry
                .included_support
                .iter()
                .map(|evidence| (*evidence, claim_id)),
        );
        events.extend(
            entry
                .claim
                .evidence
                .iter()
                .filter(|evidence| evidence.kind == EvidenceKind::Termination)
                .map(|evidence| (*evidence, claim_id)),
        );
    }
    events.sort_by(|a, b| {
        timeline_key(a.0)
            .cmp(&timeline_key(b.0))
            .then_with(|| a.1.cmp(b.1))
    });

    let mut holder: Option<&'a str> = None;
    for (evidence, claim_id) in events {
        match evidence.kind {
            EvidenceKind::Support => {
                if holder == Some(claim_id) {
                    continue;
                }
                let takes_slot = match holder {
                    None => true,
                    Some(current) => working[claim_id].authority >= working[current].authority,
                };
                if !takes_slot {
                    continue;
                }
                if let Some(current) = holder {
                    close_last_period(
                        working.get_mut(current).expect("holder"),
                        evidence.observed_at,
                    );
                }
                let entry = working.get_mut(claim_id).expect("member");
                entry.periods.push(Period {
                    from: evidence.observed_at,
                    to: None,
                });
                entry.closed_by_termination = None;
                holder = Some(claim_id);
            }
            EvidenceKind::Termination => {
                if holder == Some(claim_id) {
                    let entry = working.get_mut(claim_id).expect("holder");
                    close_last_period(entry, evidence.observed_at);
                    entry.closed_by_termination = Some((evidence.observed_at, evidence.outcome));
                    holder = None;
                }
            }
        }
    }
    holder
}

fn close_last_period(entry: &mut Working, at: Ts) {
    if let Some(period) = entry.periods.last_mut() {
        if period.to.is_none() {
            period.to = Some(at);
        }
    }
}

fn derive_state(
    working: &BTreeMap<&str, Working>,
    claim: &ClaimView,
    holder: Option<&str>,
) -> ClaimDerived {
    let entry = &working[claim.id];
    let first_observed_at = claim.evidence.iter().map(|e| e.observed_at).min();
    let last_observed_at = claim.evidence.iter().map(|e| e.observed_at).max();
    let first_support = claim
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::Support)
        .map(|e| e.observed_at)
        .min()
        .or(first_observed_at);
    let mut derived = ClaimDerived {
        status: ClaimStatus::Provisional,
        authority: entry.authority,
        valid_from: first_support,
        valid_to: None,
        first_observed_at,
        last_observed_at,
        superseded_at: None,
        superseded_by: None,
        conflict: None,
        end_outcome: None,
        periods: entry.periods.clone(),
    };

    if claim.retracted {
        derived.status = ClaimStatus::Retracted;
        derived.periods.clear();
        return derived;
    }
    if entry.authority == Authority::Assistant {
        derived.conflict = Some(ConflictReason::Assistant);
        return derived;
    }

    let termination_only = entry.included_support.is_empty()
        && entry.exclusion.is_none()
        && claim
            .evidence
            .iter()
            .any(|e| e.kind == EvidenceKind::Termination);
    if termination_only {
        let ending = claim
            .evidence
            .iter()
            .filter(|e| e.kind == EvidenceKind::Termination)
            .min_by(|a, b| timeline_key(a).cmp(&timeline_key(b)))
            .copied()
            .expect("a termination");
        derived.status = ClaimStatus::Expired;
        derived.valid_to = Some(ending.observed_at);
        derived.end_outcome = ending.outcome;
        return finish(derived, claim, working);
    }
    if let Some(reason) = entry.exclusion {
        derived.conflict = Some(reason);
        return derived;
    }

    if holder == Some(claim.id) {
        derived.status = ClaimStatus::Active;
    } else if let Some((at, outcome)) = entry.closed_by_termination {
        derived.status = ClaimStatus::Expired;
        derived.valid_to = Some(at);
        derived.end_outcome = outcome;
    } else if let Some((successor, at)) = next_superseder(working, claim, entry) {
        derived.status = ClaimStatus::Superseded;
        derived.superseded_by = Some(successor.to_string());
        derived.superseded_at = Some(at);
        derived.valid_to = Some(at);
    } else {
        let holder_authority = holder.map(|id| working[id].authority);
        derived.conflict = Some(if holder_authority == Some(Authority::Manual) {
            ConflictReason::ManualValue
        } else {
            ConflictReason::HigherAuthority
        });
    }
    finish(derived, claim, working)
}

/// The claim whose evidence next follows this claim's last evidence, with at least its authority (L4, L8).
fn next_superseder<'a>(
    working: &BTreeMap<&'a str, Working<'a>>,
    claim: &ClaimView,
    entry: &Working,
) -> Option<(&'a str, Ts)> {
    let last_own = entry
        .included_support
        .iter()
        .map(|e| timeline_key(e))
        .max()?;
    working
        .iter()
        .filter(|(id, other)| {
            **id != claim.id
                && other.eligible
                && other.claim.group_key == claim.group_key
                && other.authority >= entry.authority
        })
        .flat_map(|(id, other)| other.included_support.iter().map(move |e| (*id, *e)))
        .filter(|(_, evidence)| timeline_key(evidence) > last_own)
        .min_by(|a, b| {
            timeline_key(a.1)
                .cmp(&timeline_key(b.1))
                .then_with(|| a.0.cmp(b.0))
        })
        .map(|(id, evidence)| (id, evidence.observed_at))
}

/// Sets `valid_from`/`valid_to` from periods and the claim's explicit validity (L11).
fn finish(
    mut derived: ClaimDerived,
    claim: &ClaimView,
    working: &BTreeMap<&str, Working>,
) -> ClaimDerived {
    if let Some(explicit_from) = claim.explicit_valid_from {
        // An explicit start applies to a claim that opened its group's timeline and held it once.
        let opened_timeline = derived.periods.len() == 1
            && working
                .values()
                .filter(|w| w.claim.group_key == claim.group_key)
                .all(|other| {
                    other.claim.id == claim.id
                        || other
                            .periods
                            .iter()
                            .all(|p| p.from >= derived.periods[0].from)
                });
        if opened_timeline && explicit_from < derived.periods[0].from {
            derived.periods[0].from = explicit_from;
        }
    }
    if let Some(last) = derived.periods.last() {
        derived.valid_from = Some(last.from);
        if derived.status != ClaimStatus::Superseded || last.to.is_some() {
            derived.valid_to = last.to.or(derived.valid_to);
        }
    }
    if let Some(explicit_to) = claim.explicit_valid_to {
        derived.valid_to = Some(
            derived
                .valid_to
                .map_or(explicit_to, |to| to.min(explicit_to)),
        );
    }
    derived
}

/// L9: applies explicit `supersedes` links that pass every check; returns those dropped with a reason.
fn apply_explicit_links(
    claims: &[ClaimView],
    working: &BTreeMap<&str, Working>,
    states: &mut BTreeMap<String, ClaimDerived>,
) -> Vec<DroppedLink> {
    let mut links: Vec<(&ClaimView, &str)> = claims
        .iter()
        .flat_map(|claim| claim.supersedes.iter().map(move |target| (claim, *target)))
        .collect();
    links.sort_by(|a, b| {
        let last = |claim: &ClaimView| states[claim.id].last_observed_at;
        last(a.0)
            .cmp(&last(b.0))
            .then_with(|| a.0.id.cmp(b.0.id))
            .then_with(|| a.1.cmp(b.1))
    });
    links.dedup_by(|a, b| a.0.id == b.0.id && a.1 == b.1);

    let mut dropped = Vec::new();
    for (claim, target) in links {
        let drop = |reason: String| DroppedLink {
            claim: claim.id.to_string(),
            target: target.to_string(),
            reason,
        };
        if target == claim.id {
            dropped.push(drop("a claim cannot supersede itself".into()));
            continue;
        }
        let Some(target_state) = states.get(target).cloned() else {
            dropped.push(drop(
                "target is not a claim of the same subject, predicate and context".into(),
            ));
            continue;
        };
        let new_state = states[claim.id].clone();
        if matches!(
            new_state.status,
            ClaimStatus::Provisional | ClaimStatus::Retracted
        ) {
            dropped.push(drop(format!("superseding claim is {}", new_state.status)));
            continue;
        }
        if new_state.last_observed_at < target_state.last_observed_at {
            dropped.push(drop("superseding claim is older than its target".into()));
            continue;
        }
        let (new_authority, target_authority) =
            (working[claim.id].authority, working[target].authority);
        if new_authority.cmp(&target_authority) == Ordering::Less {
            dropped.push(drop(format!(
                "{new_authority} claim cannot supersede a {target_authority} claim"
            )));
            continue;
        }
        if reaches(states, claim.id, target) {
            dropped.push(drop("link would create a supersession cycle".into()));
            continue;
        }
        if target_state.status != ClaimStatus::Active {
            continue;
        }
        let at = new_state
            .last_observed_at
            .max(target_state.last_observed_at)
            .expect("both claims have evidence");
        let entry = states.get_mut(target).expect("target state");
        entry.status = ClaimStatus::Superseded;
        entry.superseded_by = Some(claim.id.to_string());
        entry.superseded_at = Some(at);
        entry.valid_to = Some(entry.valid_to.map_or(at, |to| to.min(at)));
        if let Some(period) = entry.periods.last_mut() {
            if period.to.is_none() {
                period.to = Some(at);
            }
        }
    }
    dropped
}

/// Whether following `superseded_by` from `from` reaches `to`.
fn reaches(states: &BTreeMap<String, ClaimDerived>, from: &str, to: &str) -> bool {
    let mut current = from;
    let mut seen = BTreeSet::new();
    while let Some(next) = states
        .get(current)
        .and_then(|state| state.superseded_by.as_deref())
    {
        if next == to {
            return true;
        }
        if !seen.insert(next) {
            return false;
        }
        current = next;
    }
    false
}
