//! Valid-time reading (SPEC 4, `--valid-at`): whether a claim was true at an instant according to what
//! is known now. Pure: the caller passes the instant.

use crate::model::{ClaimDerived, ClaimStatus};
use crate::time::Ts;

/// A claim is valid at `at` when one of its validity periods `[from, to)` contains it. Provisional
/// and retracted claims are never valid: they are not what Lore holds true. A claim with several
/// periods (a value that flipped back, L4) is valid in each of them and not in the gaps.
pub fn is_valid_at(derived: &ClaimDerived, at: Ts) -> bool {
    if matches!(
        derived.status,
        ClaimStatus::Provisional | ClaimStatus::Retracted
    ) {
        return false;
    }
    if derived.periods.is_empty() {
        return derived.valid_from.is_some_and(|from| from <= at)
            && derived.valid_to.is_none_or(|to| at < to);
    }
    // The last period ends at `valid_to`, which also carries supersession and an explicit end (L11).
    let last = derived.periods.len() - 1;
    derived.periods.iter().enumerate().any(|(index, period)| {
        let to = if index == last {
            derived.valid_to.or(period.to)
        } else {
            period.to
        };
        period.from <= at && to.is_none_or(|to| at < to)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Authority, Period};

    fn derived(status: ClaimStatus, periods: &[(i64, Option<i64>)]) -> ClaimDerived {
        ClaimDerived {
            status,
            authority: Authority::FirstParty,
            valid_from: periods.first().map(|p| Ts(p.0)),
            valid_to: periods.last().and_then(|p| p.1.map(Ts)),
            first_observed_at: None,
            last_observed_at: None,
            superseded_at: None,
            superseded_by: None,
            conflict: None,
            end_outcome: None,
            periods: periods
                .iter()
                .map(|&(from, to)| Period {
                    from: Ts(from),
                    to: to.map(Ts),
                })
                .collect(),
        }
    }

    #[test]
    fn periods_are_half_open_and_gaps_are_not_valid() {
        let flipped = derived(ClaimStatus::Active, &[(10, Some(20)), (30, None)]);
        assert!(!is_valid_at(&flipped, Ts(9)));
        assert!(is_valid_at(&flipped, Ts(10)));
        assert!(!is_valid_at(&flipped, Ts(20)));
        assert!(!is_valid_at(&flipped, Ts(25)));
        assert!(is_valid_at(&flipped, Ts(30)));
        assert!(is_valid_at(&flipped, Ts(1_000)));
    }

    #[test]
    fn superseded_claims_are_valid_in_their_period_provisional_and_retracted_never() {
        let superseded = derived(ClaimStatus::Superseded, &[(10, Some(20))]);
        assert!(is_valid_at(&superseded, Ts(15)));
        assert!(!is_valid_at(
            &derived(ClaimStatus::Provisional, &[(10, None)]),
            Ts(15)
        ));
        assert!(!is_valid_at(
            &derived(ClaimStatus::Retracted, &[(10, None)]),
            Ts(15)
        ));
    }
}
