//! Clock-dependent readings of stored state: expiry (L11), deadline states (L10) and topic weight (L19).
//! Stored state never depends on a clock; these functions take `now` and compute what a reader sees.

use crate::model::{ClaimDerived, ClaimStatus, DeadlineState, Outcome};
use crate::time::{Ts, MS_PER_DAY};

/// L11: an active claim whose explicit `valid_to` has passed reads as expired.
pub fn effective_status(derived: &ClaimDerived, now: Ts) -> ClaimStatus {
    status_at(derived.status, derived.valid_to, now)
}

/// [`effective_status`] from the two fields it reads (for callers that keep only those).
pub fn status_at(status: ClaimStatus, valid_to: Option<Ts>, now: Ts) -> ClaimStatus {
    match (status, valid_to) {
        (ClaimStatus::Active, Some(valid_to)) if valid_to <= now => ClaimStatus::Expired,
        (status, _) => status,
    }
}

/// L10: the state of a commitment due at `due_at`, read at `now`.
pub fn deadline_state(derived: &ClaimDerived, due_at: Ts, now: Ts) -> Option<DeadlineState> {
    match derived.status {
        ClaimStatus::Superseded => Some(DeadlineState::Rescheduled),
        ClaimStatus::Expired => Some(match derived.end_outcome {
            Some(Outcome::Completed) => DeadlineState::Completed,
            _ => DeadlineState::Canceled,
        }),
        ClaimStatus::Active if now < due_at => Some(DeadlineState::Upcoming),
        ClaimStatus::Active => Some(DeadlineState::PastDue),
        ClaimStatus::Provisional | ClaimStatus::Retracted => None,
    }
}

/// Weight of a manual tag and of a mention in the topic-weight sum (L19).
pub const TAG_WEIGHT: f64 = 2.0;
pub const MENTION_WEIGHT: f64 = 1.0;
const HALF_LIFE_MS: f64 = 30.0 * MS_PER_DAY as f64;

/// L19: `W(c, t) = Σ w_e · 2^(−(t − t_e) / 30 days)` over an entity's observations `(t_e, w_e)`.
/// Observations from the future (clock skew) count with full weight rather than growing.
pub fn topic_weight(observations: impl IntoIterator<Item = (Ts, f64)>, now: Ts) -> f64 {
    observations
        .into_iter()
        .map(|(observed_at, weight)| {
            let age_ms = (now.0 - observed_at.0).max(0) as f64;
            weight * (-age_ms / HALF_LIFE_MS).exp2()
        })
        .sum()
}

/// The reference time of stored weight bases (2026-01-01T00:00:00Z). `2^((t − E)/30 d)` stays a
/// finite, normal double for any `t` within about 80 years of it.
pub const WEIGHT_EPOCH_MS: i64 = 1_767_225_600_000;

/// The L19 sum kept with an entity so that reading its weight is O(1): `basis = Σ w_e ·
/// 2^((t_e − E) / 30 d)` over its observations, summed in ascending `(t_e, w_e)` order so the value
/// depends only on the set of observations (L14), and the latest observation time. Then
/// `W(t) = basis · 2^(−(t − E) / 30 d)` for every `t` at or after the latest observation.
pub fn weight_basis(mut observations: Vec<(Ts, f64)>) -> (f64, Option<Ts>) {
    observations.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let basis = observations
        .iter()
        .map(|(observed_at, weight)| {
            weight * ((observed_at.0 - WEIGHT_EPOCH_MS) as f64 / HALF_LIFE_MS).exp2()
        })
        .sum();
    (basis, observations.last().map(|(at, _)| *at))
}

/// `weight_basis` of observations that all weigh `weight`, bit for bit: the same terms summed in
/// the same order, each distinct time's term computed once (the observations of one meeting share
/// its time).
pub fn weight_basis_of_times(mut times: Vec<Ts>, weight: f64) -> (f64, Option<Ts>) {
    times.sort_unstable();
    weight_basis_of_counted(times.into_iter().map(|at| (at, 1)), weight)
}

/// `weight_basis_of_times` of times given in ascending order, each with how many observations
/// share it (a time may come more than once): the same terms, summed one observation at a time in
/// the same order, so the same number bit for bit.
pub fn weight_basis_of_counted(
    times: impl IntoIterator<Item = (Ts, usize)>,
    weight: f64,
) -> (f64, Option<Ts>) {
    let mut term: Option<(Ts, f64)> = None;
    let mut latest = None;
    let basis = times
        .into_iter()
        .flat_map(|(at, count)| {
            latest = Some(at);
            let value = match term {
                Some((time, value)) if time == at => value,
                _ => {
                    let value = weight * ((at.0 - WEIGHT_EPOCH_MS) as f64 / HALF_LIFE_MS).exp2();
                    term = Some((at, value));
                    value
                }
            };
            std::iter::repeat_n(value, count)
        })
        .sum();
    (basis, latest)
}

/// The basis of a single mention at `at`: `weight_basis` of that one observation (a meeting's weight
/// in graph rankings).
pub fn mention_basis(at: Ts) -> f64 {
    MENTION_WEIGHT * ((at.0 - WEIGHT_EPOCH_MS) as f64 / HALF_LIFE_MS).exp2()
}

/// L19 weight at `now` from a stored basis, or `None` when the basis cannot answer exactly: an
/// observation lies in the future of `now` (it counts with full weight, not more) or the basis left
/// the range of a double. Callers then sum the observations with [`topic_weight`].
pub fn weight_from_basis(basis: f64, latest: Option<Ts>, now: Ts) -> Option<f64> {
    let Some(latest) = latest else {
        return Some(0.0);
    };
    if latest > now || !basis.is_finite() {
        return None;
    }
    let weight = basis * (-((now.0 - WEIGHT_EPOCH_MS) as f64) / HALF_LIFE_MS).exp2();
    weight.is_finite().then_some(weight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Authority;

    /// L14, L19: the basis of observations of one weight is `weight_basis`'s, bit for bit, in any
    /// order, with repeated times, and for none at all.
    #[test]
    fn the_basis_of_times_is_the_basis_of_their_observations_bit_for_bit() {
        let day = 86_400_000;
        let cases: Vec<Vec<Ts>> = vec![
            vec![],
            vec![Ts(WEIGHT_EPOCH_MS)],
            vec![
                Ts(WEIGHT_EPOCH_MS + 3 * day),
                Ts(WEIGHT_EPOCH_MS - day),
                Ts(WEIGHT_EPOCH_MS + 3 * day),
            ],
            (0..200)
                .map(|i| Ts(WEIGHT_EPOCH_MS + (i * 7919 % 97) * day / 3))
                .collect(),
        ];
        for times in cases {
            let (basis, latest) = weight_basis_of_times(times.clone(), MENTION_WEIGHT);
            let (want, want_latest) =
                weight_basis(times.iter().map(|at| (*at, MENTION_WEIGHT)).collect());
            assert_eq!(basis.to_bits(), want.to_bits(), "{times:?}");
            assert_eq!(latest, want_latest);
            let mut reversed = times.clone();
            reversed.reverse();
            assert_eq!(
                weight_basis_of_times(reversed, MENTION_WEIGHT).0.to_bits(),
                want.to_bits()
            );
            // Counted by distinct time, and with one time split over two runs (a merge of two
            // ordered indexes gives it from each).
            let mut sorted = times.clone();
            sorted.sort();
            let mut counted: Vec<(Ts, usize)> = Vec::new();
            for at in &sorted {
                match counted.last_mut() {
                    Some((time, count)) if time == at => *count += 1,
                    _ => counted.push((*at, 1)),
                }
            }
            let split: Vec<(Ts, usize)> = counted
                .iter()
                .flat_map(|&(at, count)| match count {
                    1 => vec![(at, 1)],
                    _ => vec![(at, 1), (at, count - 1)],
                })
                .collect();
            for runs in [counted, split] {
                let (basis, latest) = weight_basis_of_counted(runs, MENTION_WEIGHT);
                assert_eq!(basis.to_bits(), want.to_bits(), "{times:?}");
                assert_eq!(latest, want_latest);
            }
        }
    }

    fn derived(status: ClaimStatus) -> ClaimDerived {
        ClaimDerived {
            status,
            authority: Authority::FirstParty,
            valid_from: Some(Ts(0)),
            valid_to: None,
            first_observed_at: Some(Ts(0)),
            last_observed_at: Some(Ts(0)),
            superseded_at: None,
            superseded_by: None,
            conflict: None,
            end_outcome: None,
            periods: Vec::new(),
        }
    }

    #[test]
    fn l11_explicit_end_in_the_past_reads_expired() {
        let mut claim = derived(ClaimStatus::Active);
        claim.valid_to = Some(Ts(100));
        assert_eq!(effective_status(&claim, Ts(99)), ClaimStatus::Active);
        assert_eq!(effective_status(&claim, Ts(100)), ClaimStatus::Expired);
    }

    #[test]
    fn l10_deadline_states_follow_evidence_and_the_clock() {
        let due = Ts(10 * MS_PER_DAY);
        let active = derived(ClaimStatus::Active);
        assert_eq!(
            deadline_state(&active, due, Ts(0)),
            Some(DeadlineState::Upcoming)
        );
        assert_eq!(
            deadline_state(&active, due, Ts(11 * MS_PER_DAY)),
            Some(DeadlineState::PastDue)
        );
        assert_eq!(
            deadline_state(&derived(ClaimStatus::Superseded), due, Ts(0)),
            Some(DeadlineState::Rescheduled)
        );
        let mut completed = derived(ClaimStatus::Expired);
        completed.end_outcome = Some(Outcome::Completed);
        assert_eq!(
            deadline_state(&completed, due, Ts(0)),
            Some(DeadlineState::Completed)
        );
        assert_eq!(
            deadline_state(&derived(ClaimStatus::Expired), due, Ts(0)),
            Some(DeadlineState::Canceled)
        );
        assert_eq!(
            deadline_state(&derived(ClaimStatus::Provisional), due, Ts(0)),
            None
        );
    }

    #[test]
    fn l19_weight_halves_every_thirty_days_and_tags_count_double() {
        let now = Ts(60 * MS_PER_DAY);
        let mention_now = topic_weight([(now, MENTION_WEIGHT)], now);
        let mention_30_days_ago = topic_weight([(Ts(30 * MS_PER_DAY), MENTION_WEIGHT)], now);
        let tag_60_days_ago = topic_weight([(Ts(0), TAG_WEIGHT)], now);
        assert!((mention_now - 1.0).abs() < 1e-12);
        assert!((mention_30_days_ago - 0.5).abs() < 1e-12);
        assert!((tag_60_days_ago - 0.5).abs() < 1e-12);
        assert!((topic_weight([(Ts(0), 1.0), (now, 2.0)], now) - 2.25).abs() < 1e-12);
    }

    #[test]
    fn l19_weight_from_the_stored_basis_equals_the_sum_over_observations() {
        let day = MS_PER_DAY;
        let observations: Vec<(Ts, f64)> = (0..400)
            .map(|i| {
                (
                    Ts(WEIGHT_EPOCH_MS - 900 * day + i * 2 * day + i),
                    MENTION_WEIGHT,
                )
            })
            .chain([(Ts(WEIGHT_EPOCH_MS + 20 * day), TAG_WEIGHT)])
            .collect();
        let mut shuffled = observations.clone();
        shuffled.reverse();
        let (basis, latest) = weight_basis(observations.clone());
        // The basis depends on the set of observations, not their order (L14).
        assert_eq!(weight_basis(shuffled), (basis, latest));
        assert_eq!(latest, Some(Ts(WEIGHT_EPOCH_MS + 20 * day)));
        for now in [
            latest.unwrap().0,
            WEIGHT_EPOCH_MS + 45 * day,
            WEIGHT_EPOCH_MS + 4000 * day,
        ] {
            let now = Ts(now);
            let exact = topic_weight(observations.iter().copied(), now);
            let stored = weight_from_basis(basis, latest, now).unwrap();
            assert!(
                (stored - exact).abs() <= 1e-12 * exact.max(1.0),
                "{stored} vs {exact}"
            );
        }
        // An observation after `now` counts with full weight: the basis cannot say so, the sum does.
        assert_eq!(weight_from_basis(basis, latest, Ts(WEIGHT_EPOCH_MS)), None);
        assert_eq!(weight_from_basis(0.0, None, Ts(0)), Some(0.0));
    }
}
