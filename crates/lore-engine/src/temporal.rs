//! Time travel (SPEC 4): `--valid-at` (what was true at T by what Lore knows now), `--known-at` (what
//! Lore believed at T, from the status history), both combined, and the erasure rule that keeps the
//! history from remembering a deleted source.

use std::collections::{BTreeMap, BTreeSet};

use lore_core::model::*;
use lore_core::projection::{project, ProjectedClaim};
use lore_core::reading::{deadline_state, effective_status};
use lore_core::slot::{evaluate_views, ClaimView, SlotEvidence};
use lore_core::temporal::is_valid_at;
use lore_core::Ts;
use lore_store::{FastMap, SlotFact, Tx};
use serde::Serialize;

use crate::apply::{group_by_claim, LoadedSlot};
use crate::resolve::find_entity;
use crate::views::{entity_view_with_sources, EntityView, ShowOptions};
use crate::{Engine, EngineResult};

/// Which instants a view is read at: valid time, transaction time, or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeTravel {
    pub valid_at: Option<Ts>,
    pub known_at: Option<Ts>,
}

impl Engine {
    /// An entity's view at `at`. With `known_at` T every claim reads as Lore held it at T (its latest
    /// status-history row at or before T, only evidence recorded by then); with `valid_at` V only
    /// claims whose validity periods contain V are kept (never provisional or retracted), otherwise
    /// the claims active at T. Attributes and brief are rebuilt from the kept claims.
    pub fn show_at(&self, owner: &str, entity: &str, at: &TimeTravel) -> EngineResult<EntityView> {
        let now = self.now();
        self.read(owner, |tx| {
            let entity = find_entity(tx, entity)?;
            let all = ShowOptions {
                history: true,
                include_provisional: true,
            };
            let (mut view, sources) = entity_view_with_sources(tx, &entity, &all, now)?;
            let mut claims: BTreeMap<String, Claim> = sources
                .claims
                .into_iter()
                .map(|claim| (claim.id.clone(), claim))
                .collect();
            let reading_time = at.known_at.unwrap_or(now);
            if let Some(known_at) = at.known_at {
                let believed: BTreeMap<String, ClaimDerived> = tx
                    .list_status_as_of(&entity.id, known_at)?
                    .into_iter()
                    .map(|row| (row.claim, row.derived))
                    .collect();
                let mut kept = Vec::new();
                for mut claim_view in std::mem::take(&mut view.claims) {
                    let (Some(derived), Some(claim)) =
                        (believed.get(&claim_view.id), claims.get_mut(&claim_view.id))
                    else {
                        continue;
                    };
                    // The evidence rows come in the view's order; keep those recorded by then.
                    let visible: Vec<bool> = sources
                        .evidence_recorded_at
                        .get(&claim.id)
                        .map(|recorded| recorded.iter().map(|at| *at <= known_at).collect())
                        .unwrap_or_default();
                    if !visible.iter().any(|v| *v) {
                        continue;
                    }
                    let mut index = 0;
                    claim_view.evidence.retain(|_| {
                        index += 1;
                        visible.get(index - 1).copied().unwrap_or(false)
                    });
                    claim.derived = derived.clone();
                    claim_view.status = effective_status(derived, known_at);
                    claim_view.authority = derived.authority;
                    claim_view.valid_from = derived.valid_from;
                    claim_view.valid_to = derived.valid_to;
                    claim_view.superseded_by = derived.superseded_by.clone();
                    claim_view.conflict = derived.conflict;
                    claim_view.periods = derived.periods.clone();
                    claim_view.deadline_state = claim_view
                        .due_at
                        .and_then(|due| deadline_state(derived, due, known_at));
                    kept.push(claim_view);
                }
                view.claims = kept;
                claims.retain(|id, _| view.claims.iter().any(|c| &c.id == id));
            }
            view.claims.retain(|claim_view| {
                let Some(claim) = claims.get(&claim_view.id) else {
                    return false;
                };
                match at.valid_at {
                    Some(valid_at) => is_valid_at(&claim.derived, valid_at),
                    None => effective_status(&claim.derived, reading_time) == ClaimStatus::Active,
                }
            });
            // Attributes and brief as they read at that time: the kept claims, projected as active.
            let kept: BTreeSet<&str> = view.claims.iter().map(|c| c.id.as_str()).collect();
            let as_active: Vec<Claim> = claims
                .values()
                .filter(|claim| kept.contains(claim.id.as_str()))
                .map(|claim| {
                    let mut claim = claim.clone();
                    claim.derived.status = ClaimStatus::Active;
                    claim
                })
                .collect();
            let mut names = BTreeMap::new();
            for claim_view in &view.claims {
                for named in claim_view.object.iter().chain(claim_view.context.iter()) {
                    names.insert(named.id.clone(), named.name.clone());
                }
            }
            let projected: Vec<ProjectedClaim> = as_active
                .iter()
                .map(|claim| ProjectedClaim {
                    claim,
                    object_name: claim
                        .object_entity
                        .as_ref()
                        .and_then(|id| names.get(id))
                        .map(String::as_str),
                    context_name: claim
                        .context_entity
                        .as_ref()
                        .and_then(|id| names.get(id))
                        .map(String::as_str),
                })
                .collect();
            let (attributes, brief) = project(&entity, &projected);
            view.entity.attributes = attributes;
            view.entity.brief = brief;
            Ok(view)
        })
    }
}

/// Erasure wins over history (SPEC 4, L13): after a source deletion, rewrites the status history of
/// every claim left in the touched slots as if the deleted facts had never been recorded. The history
/// is replayed from the surviving facts at every instant one of them (or a status row) was recorded,
/// so no row keeps a deleted claim as `superseded_by`, a period only the deleted evidence opened, or a
/// claim that only the deleted source supported at that time.
///
/// `loaded` holds slots this mutation's `settle` already read (claims, evidence and supersedes links)
/// with the claims' derived state as it settled them, which the replay takes for its last instant
/// instead of evaluating the slot again; the others are read here.
///
/// `from` gives, for a slot whose only change was losing facts, the earliest time one of them had
/// been recorded (`Changes::history_replay_from`). Before it the slot's facts as recorded are the
/// same, so are the rows a replay gives there: the stored rows recorded before it are kept, and the
/// replay starts from them at that instant. A slot not in `from` is replayed from its start.
pub fn rebuild_slot_histories(
    tx: &mut dyn Tx,
    slots: &BTreeSet<SlotKey>,
    loaded: &mut FastMap<SlotKey, LoadedSlot>,
    from: &FastMap<SlotKey, Ts>,
) -> EngineResult<()> {
    for slot in slots {
        rebuild_slot_history(tx, slot, loaded.remove(slot), from.get(slot).copied())?;
    }
    Ok(())
}

/// Slots a replay on a second thread is worth starting for (`rebuild_slot_histories_alongside`):
/// below this many the thread's start costs about what the replays do.
const REPLAYS_ON_A_THREAD_MIN: usize = 4;

/// `rebuild_slot_histories` with `alongside` run on this thread meanwhile: the slots in `loaded`
/// have their stored histories read first, then their replays (pure work over what was read) run
/// on a scoped thread while `alongside` works with the transaction, and their histories are
/// written once both are done; the other slots are read and replayed after, as
/// `rebuild_slot_histories` does. `alongside` must not write claims, evidence, supersedes links or
/// status rows, which the replays read (a deletion's entity rebuild writes entities only).
pub fn rebuild_slot_histories_alongside<T>(
    tx: &mut dyn Tx,
    slots: &BTreeSet<SlotKey>,
    loaded: &mut FastMap<SlotKey, LoadedSlot>,
    from: &FastMap<SlotKey, Ts>,
    alongside: impl FnOnce(&mut dyn Tx) -> EngineResult<T>,
) -> EngineResult<T> {
    let mut ready = Vec::new();
    let mut later = Vec::new();
    for slot in slots {
        match loaded.remove(slot) {
            Some(slot_loaded) if !slot_loaded.claims.is_empty() => {
                let stored = stored_history(tx, slot)?;
                ready.push((slot_loaded, stored, from.get(slot).copied()));
            }
            Some(_) => {}
            None => later.push(slot),
        }
    }
    // The replays take the slots and drop them when done (on their thread, off this one's path).
    let replay_all = |ready: Vec<(LoadedSlot, StoredHistory, Option<Ts>)>| -> Vec<_> {
        ready
            .into_iter()
            .map(|(loaded, stored, from)| {
                let replayed = replay_slot_history(&loaded, &stored, from);
                (stored, replayed)
            })
            .collect()
    };
    let (result, replayed) = if ready.len() < REPLAYS_ON_A_THREAD_MIN {
        (alongside(tx), Ok(replay_all(ready)))
    } else {
        // The thread takes the slots from here; if it cannot start, they are still here after.
        let mut pending = Some(ready);
        let (result, joined) = std::thread::scope(|scope| {
            let replays = std::thread::Builder::new()
                .name("lore-replay".into())
                .spawn_scoped(scope, || replay_all(pending.take().unwrap_or_default()));
            let result = alongside(tx);
            (
                result,
                replays.ok().map(std::thread::ScopedJoinHandle::join),
            )
        });
        let replayed = match joined {
            Some(joined) => joined.map_err(|panic| {
                crate::EngineError::Internal(format!(
                    "replaying status histories failed: {}",
                    lore_store::panic_message(&panic)
                ))
            }),
            // No thread to be had: the replays run here.
            None => Ok(replay_all(pending.take().unwrap_or_default())),
        };
        (result, replayed)
    };
    let (result, replayed) = (result?, replayed?);
    for (stored, rows) in replayed {
        write_replayed(tx, stored, rows)?;
    }
    for slot in later {
        rebuild_slot_history(tx, slot, None, from.get(slot).copied())?;
    }
    Ok(result)
}

/// A slot's stored status history, by claim.
type StoredHistory = FastMap<String, Vec<StatusChange>>;

/// The slot's status history, read in one statement, by claim.
fn stored_history(tx: &mut dyn Tx, slot: &SlotKey) -> EngineResult<StoredHistory> {
    Ok(group_by_claim(
        tx.list_status_changes_by_slot(slot)?,
        |row| &row.claim,
    ))
}

/// Writes the histories a replay gave where they differ from the stored ones.
fn write_replayed(
    tx: &mut dyn Tx,
    mut stored: StoredHistory,
    replayed: BTreeMap<String, Vec<StatusChange>>,
) -> EngineResult<()> {
    for (claim, rows) in replayed {
        // Most claims of a touched slot keep their history; rewriting it would change no row.
        let read = stored.remove(&claim).unwrap_or_default();
        if read != rows {
            tx.replace_status_history_read(&claim, &read, &rows)?;
        }
    }
    Ok(())
}

fn rebuild_slot_history(
    tx: &mut dyn Tx,
    slot: &SlotKey,
    loaded: Option<LoadedSlot>,
    from: Option<Ts>,
) -> EngineResult<()> {
    let loaded = match loaded {
        Some(loaded) => loaded,
        None => LoadedSlot::read(tx, slot)?,
    };
    if loaded.claims.is_empty() {
        return Ok(());
    }
    let stored = stored_history(tx, slot)?;
    let replayed = replay_slot_history(&loaded, &stored, from);
    write_replayed(tx, stored, replayed)
}

/// Every claim's status history in a slot replayed from its facts (`stored`: the histories as
/// stored, by claim, which the replay keeps before `from` and otherwise reads only for the instants
/// they were recorded at): at every instant a fact or a stored row was recorded, the slot is
/// evaluated over the facts recorded by then, and a row is written where a claim's state changed.
pub fn replay_slot_history(
    loaded: &LoadedSlot,
    stored: &FastMap<String, Vec<StatusChange>>,
    from: Option<Ts>,
) -> BTreeMap<String, Vec<StatusChange>> {
    let claims = &loaded.claims;
    let no_rows: Vec<SlotFact> = Vec::new();
    let mut links_by_claim: FastMap<&str, Vec<&SupersedesLink>> = FastMap::default();
    for link in &loaded.links {
        links_by_claim
            .entry(link.claim.as_str())
            .or_default()
            .push(link);
    }
    let mut instants = BTreeSet::new();
    for claim in claims {
        let rows = loaded.evidence.get(&claim.id).unwrap_or(&no_rows);
        instants.extend(rows.iter().map(|row| row.recorded_at));
        instants.extend(claim.retracted_at);
        if let Some(history) = stored.get(&claim.id) {
            instants.extend(history.iter().map(|row| row.recorded_at));
        }
    }
    // The stored rows recorded before `from` stand; the replay continues from them.
    let mut histories: BTreeMap<String, Vec<StatusChange>> = claims
        .iter()
        .map(|claim| {
            let kept = match (from, stored.get(&claim.id)) {
                (Some(from), Some(history)) => history
                    .iter()
                    .take_while(|row| row.recorded_at < from)
                    .cloned()
                    .collect(),
                _ => Vec::new(),
            };
            (claim.id.clone(), kept)
        })
        .collect();
    if let Some(from) = from {
        instants.retain(|at| *at >= from);
    }
    // An evidence row, and a supersedes link citing it, count from the instant the row was recorded;
    // the rules' view of each row is read once (`list_slot_facts`) and borrowed at every instant.
    let recorded: FastMap<&str, Ts> = loaded
        .evidence
        .values()
        .flatten()
        .map(|row| (row.evidence.id.as_str(), row.recorded_at))
        .collect();
    let facts: Vec<&[SlotFact]> = claims
        .iter()
        .map(|claim| {
            loaded
                .evidence
                .get(&claim.id)
                .unwrap_or(&no_rows)
                .as_slice()
        })
        .collect();
    // At the last instant every fact is visible: when `settle` kept the slot and every claim has
    // evidence (so the views are the ones it evaluated), its outcome is in the claims.
    let last = instants.last().copied();
    let settled = loaded.settled
        && facts.iter().all(|facts| !facts.is_empty())
        && loaded
            .links
            .iter()
            .all(|link| recorded.contains_key(link.evidence.as_str()));
    for at in instants {
        if settled && Some(at) == last {
            for claim in claims {
                record_state(&mut histories, &claim.id, at, &claim.derived);
            }
            continue;
        }
        let visible = |id: &str| recorded.get(id).is_some_and(|recorded| *recorded <= at);
        let views: Vec<ClaimView> = claims
            .iter()
            .zip(&facts)
            .filter_map(|(claim, facts)| {
                let evidence: Vec<&SlotEvidence> = facts
                    .iter()
                    .filter(|row| row.recorded_at <= at)
                    .map(|row| &row.evidence)
                    .collect();
                if evidence.is_empty() {
                    return None;
                }
                let mut supersedes: Vec<&str> = links_by_claim
                    .get(claim.id.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|link| visible(&link.evidence))
                    .map(|link| link.target.as_str())
                    .collect();
                supersedes.dedup();
                Some(ClaimView {
                    id: &claim.id,
                    group_key: &claim.group_key,
                    retracted: claim.retracted_at.is_some_and(|r| r <= at),
                    explicit_valid_from: claim.explicit_valid_from,
                    explicit_valid_to: claim.explicit_valid_to,
                    evidence,
                    supersedes,
                })
            })
            .collect();
        if views.is_empty() {
            continue;
        }
        let outcome = evaluate_views(&views);
        for view in &views {
            record_state(&mut histories, view.id, at, &outcome.states[view.id]);
        }
    }
    histories
}

/// Adds a row to a claim's replayed history where its state at `at` differs from its last row's.
fn record_state(
    histories: &mut BTreeMap<String, Vec<StatusChange>>,
    claim: &str,
    at: Ts,
    derived: &ClaimDerived,
) {
    let history = histories
        .get_mut(claim)
        .expect("every slot claim has a history");
    if history.last().map(|row| &row.derived) != Some(derived) {
        history.push(StatusChange {
            claim: claim.to_string(),
            recorded_at: at,
            derived: derived.clone(),
        });
    }
}
