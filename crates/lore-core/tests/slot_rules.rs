//! Unit-level checks of slot re-evaluation, one per lifecycle rule (the data-driven scenarios in
//! `lore-engine/tests/scenarios` exercise the same rules through storage).

use lore_core::model::{
    Attribution, Authority, ClaimStatus, ConflictReason, EvidenceKind, Outcome,
};
use lore_core::slot::{evaluate_slot, SlotClaim, SlotEvidence};
use lore_core::Ts;
use proptest::prelude::*;

const DAY: i64 = 86_400_000;

fn said(id: &str, day: i64, authority: Authority) -> SlotEvidence {
    SlotEvidence {
        id: id.to_string(),
        observed_at: Ts(day * DAY),
        order: 0,
        kind: EvidenceKind::Support,
        authority,
        meeting: Some(format!("m{day}")),
        speaker: Some("alice".into()),
        attribution: Some(Attribution::OneMappedSource),
        outcome: None,
    }
}

fn claim(id: &str, group: &str, evidence: Vec<SlotEvidence>) -> SlotClaim {
    SlotClaim {
        id: id.to_string(),
        group_key: group.to_string(),
        retracted: false,
        explicit_valid_from: None,
        explicit_valid_to: None,
        evidence,
        supersedes: Vec::new(),
    }
}

fn fp(id: &str, day: i64) -> SlotEvidence {
    said(id, day, Authority::FirstParty)
}

#[test]
fn l4_later_value_supersedes_and_late_arrival_enters_history() {
    // B (day 5) is newer than A (day 2), whatever order they are listed in.
    let outcome = evaluate_slot(&[
        claim("b", "", vec![fp("e2", 5)]),
        claim("a", "", vec![fp("e1", 2)]),
    ]);
    let (a, b) = (&outcome.states["a"], &outcome.states["b"]);
    assert_eq!(b.status, ClaimStatus::Active);
    assert_eq!(b.valid_from, Some(Ts(5 * DAY)));
    assert_eq!(a.status, ClaimStatus::Superseded);
    assert_eq!(a.superseded_by.as_deref(), Some("b"));
    assert_eq!(a.valid_to, Some(Ts(5 * DAY)));
}

#[test]
fn l4_flip_back_is_valid_again_from_its_reaffirmation() {
    let outcome = evaluate_slot(&[
        claim("a", "", vec![fp("e1", 1), fp("e3", 3)]),
        claim("b", "", vec![fp("e2", 2)]),
    ]);
    let (a, b) = (&outcome.states["a"], &outcome.states["b"]);
    assert_eq!(a.status, ClaimStatus::Active);
    assert_eq!(a.valid_from, Some(Ts(3 * DAY)));
    assert_eq!(a.periods.len(), 2, "history shows A's two periods");
    assert_eq!(b.status, ClaimStatus::Superseded);
    assert_eq!(b.superseded_by.as_deref(), Some("a"));
    assert_eq!(
        (b.valid_from, b.valid_to),
        (Some(Ts(2 * DAY)), Some(Ts(3 * DAY)))
    );
}

#[test]
fn l3_omission_changes_nothing() {
    // A claim with no competitor stays active however old it is.
    let outcome = evaluate_slot(&[claim("a", "", vec![fp("e1", 1)])]);
    assert_eq!(outcome.states["a"].status, ClaimStatus::Active);
}

#[test]
fn l5_multi_valued_claims_end_only_on_termination() {
    let mut ended = fp("e2", 4);
    ended.kind = EvidenceKind::Termination;
    let outcome = evaluate_slot(&[
        claim("atlas", "value:atlas", vec![fp("e1", 1), ended]),
        claim("beacon", "value:beacon", vec![fp("e3", 2)]),
    ]);
    assert_eq!(outcome.states["atlas"].status, ClaimStatus::Expired);
    assert_eq!(outcome.states["atlas"].valid_to, Some(Ts(4 * DAY)));
    assert_eq!(outcome.states["beacon"].status, ClaimStatus::Active);
}

#[test]
fn l6_manual_value_holds_and_newer_extraction_is_provisional() {
    let outcome = evaluate_slot(&[
        claim("old", "", vec![fp("e1", 1)]),
        claim("manual", "", vec![said("m", 2, Authority::Manual)]),
        claim("newer", "", vec![fp("e3", 3)]),
    ]);
    assert_eq!(outcome.states["manual"].status, ClaimStatus::Active);
    assert_eq!(outcome.states["old"].status, ClaimStatus::Superseded);
    assert_eq!(outcome.states["newer"].status, ClaimStatus::Provisional);
    assert_eq!(
        outcome.states["newer"].conflict,
        Some(ConflictReason::ManualValue)
    );
}

#[test]
fn l7_different_speakers_disagreeing_in_one_meeting_are_provisional() {
    let mut bob = fp("e2", 1);
    bob.speaker = Some("bob".into());
    bob.order = 10;
    let outcome = evaluate_slot(&[
        claim("on_track", "", vec![fp("e1", 1)]),
        claim("at_risk", "", vec![bob]),
    ]);
    assert_eq!(outcome.states["on_track"].status, ClaimStatus::Provisional);
    assert_eq!(outcome.states["at_risk"].status, ClaimStatus::Provisional);
    assert_eq!(
        outcome.states["at_risk"].conflict,
        Some(ConflictReason::SameMeeting)
    );
}

#[test]
fn l7_a_speaker_correcting_themselves_resolves_it() {
    let mut correction = fp("e2", 1);
    correction.order = 10;
    let outcome = evaluate_slot(&[
        claim("first", "", vec![fp("e1", 1)]),
        claim("second", "", vec![correction]),
    ]);
    assert_eq!(outcome.states["second"].status, ClaimStatus::Active);
    assert_eq!(outcome.states["first"].status, ClaimStatus::Superseded);
}

#[test]
fn l7_unmapped_speaker_cannot_contradict_a_mapped_statement() {
    let mut unmapped = fp("e2", 3);
    unmapped.attribution = Some(Attribution::Unmapped);
    unmapped.speaker = Some("unknown".into());
    let outcome = evaluate_slot(&[
        claim("mapped", "", vec![fp("e1", 1)]),
        claim("rumour", "", vec![unmapped]),
    ]);
    assert_eq!(outcome.states["mapped"].status, ClaimStatus::Active);
    assert_eq!(outcome.states["rumour"].status, ClaimStatus::Provisional);
    assert_eq!(
        outcome.states["rumour"].conflict,
        Some(ConflictReason::WeakAttribution)
    );
}

/// L7 over several claims: a weak statement yields to a strong statement of another claim made at
/// or before it (the earliest of them decides), and stands when every other claim's strong
/// statements came later, whatever its own claim's strong statements.
#[test]
fn l7_a_weak_statement_yields_only_to_other_claims_strong_statements_at_or_before_it() {
    let weak = |id: &str, day: i64| {
        let mut evidence = fp(id, day);
        evidence.attribution = Some(Attribution::Unmapped);
        evidence.speaker = Some("unknown".into());
        // Another meeting than the strong statement of the same day: no same-meeting conflict.
        evidence.meeting = Some(format!("weak-{day}"));
        evidence
    };
    // "later"'s weak day-5 statement and "same"'s weak day-3 statement yield to "strong"'s day-3
    // statement; "early"'s weak day-2 statement precedes every strong one and stands.
    let outcome = evaluate_slot(&[
        claim("strong", "", vec![fp("e1", 3), fp("e2", 6)]),
        claim("same", "", vec![weak("e3", 3)]),
        claim("later", "", vec![weak("e4", 5)]),
        claim("early", "", vec![weak("e5", 2)]),
    ]);
    for yielded in ["same", "later"] {
        assert_eq!(
            outcome.states[yielded].conflict,
            Some(ConflictReason::WeakAttribution),
            "{yielded}"
        );
    }
    assert_eq!(outcome.states["early"].conflict, None);
    assert_eq!(outcome.states["strong"].status, ClaimStatus::Active);
    // The earliest strong statement is "own"'s (day 1); "rival"'s weak day-2 statement yields to
    // it, while "own"'s weak day-4 statement yields to "other"'s day-4 one, not its own.
    let outcome = evaluate_slot(&[
        claim("own", "", vec![fp("e6", 1), weak("e7", 4)]),
        claim("other", "", vec![fp("e8", 4)]),
        claim("rival", "", vec![weak("e9", 2)]),
    ]);
    assert_eq!(
        outcome.states["rival"].conflict,
        Some(ConflictReason::WeakAttribution)
    );
    assert_eq!(outcome.states["other"].status, ClaimStatus::Active);
    assert_eq!(outcome.states["own"].status, ClaimStatus::Superseded);
    // Its own claim's earlier strong statement does not silence a weak one: "back" ended on day 2
    // and is said again, weakly, on day 3, before "next"'s day-4 statement, so it held again until
    // then and was superseded rather than left ended.
    let mut ended = fp("e10", 2);
    ended.kind = EvidenceKind::Termination;
    let outcome = evaluate_slot(&[
        claim("back", "", vec![fp("e11", 1), ended, weak("e12", 3)]),
        claim("next", "", vec![fp("e13", 4)]),
    ]);
    assert_eq!(outcome.states["back"].status, ClaimStatus::Superseded);
    assert_eq!(
        outcome.states["back"].superseded_by.as_deref(),
        Some("next")
    );
}

#[test]
fn l8_lower_authority_cannot_displace_higher() {
    let outcome = evaluate_slot(&[
        claim("first_party", "", vec![fp("e1", 1)]),
        claim("document", "", vec![said("e2", 2, Authority::Document)]),
        claim("assistant", "", vec![said("e3", 3, Authority::Assistant)]),
    ]);
    assert_eq!(outcome.states["first_party"].status, ClaimStatus::Active);
    assert_eq!(outcome.states["document"].status, ClaimStatus::Provisional);
    assert_eq!(
        outcome.states["document"].conflict,
        Some(ConflictReason::HigherAuthority)
    );
    assert_eq!(outcome.states["assistant"].status, ClaimStatus::Provisional);
    assert_eq!(
        outcome.states["assistant"].conflict,
        Some(ConflictReason::Assistant)
    );
}

#[test]
fn l8_older_lower_authority_is_superseded_by_newer_higher() {
    let outcome = evaluate_slot(&[
        claim("document", "", vec![said("e1", 1, Authority::Document)]),
        claim("first_party", "", vec![fp("e2", 2)]),
    ]);
    assert_eq!(outcome.states["document"].status, ClaimStatus::Superseded);
    assert_eq!(outcome.states["first_party"].status, ClaimStatus::Active);
}

#[test]
fn l9_explicit_links_are_checked_before_they_apply() {
    let mut newer = claim("beacon", "value:beacon", vec![fp("e2", 5)]);
    newer.supersedes = vec!["atlas".into(), "beacon".into(), "ghost".into()];
    let mut older_claims_newer = claim("apollo", "value:apollo", vec![fp("e3", 1)]);
    older_claims_newer.supersedes = vec!["beacon".into()];
    let outcome = evaluate_slot(&[
        claim("atlas", "value:atlas", vec![fp("e1", 2)]),
        newer,
        older_claims_newer,
    ]);
    assert_eq!(outcome.states["atlas"].status, ClaimStatus::Superseded);
    assert_eq!(
        outcome.states["atlas"].superseded_by.as_deref(),
        Some("beacon")
    );
    assert_eq!(outcome.states["beacon"].status, ClaimStatus::Active);
    let reasons: Vec<&str> = outcome
        .dropped_links
        .iter()
        .map(|d| d.reason.as_str())
        .collect();
    assert!(reasons.iter().any(|r| r.contains("itself")), "{reasons:?}");
    assert!(
        reasons.iter().any(|r| r.contains("same subject")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("older")), "{reasons:?}");
}

#[test]
fn l9_links_cannot_climb_the_authority_ladder() {
    let mut document = claim("doc", "value:b", vec![said("e2", 5, Authority::Document)]);
    document.supersedes = vec!["fp".into()];
    let outcome = evaluate_slot(&[claim("fp", "value:a", vec![fp("e1", 1)]), document]);
    assert_eq!(outcome.states["fp"].status, ClaimStatus::Active);
    assert!(outcome.dropped_links[0].reason.contains("cannot supersede"));
}

#[test]
fn l10_new_due_date_for_the_same_commitment_reschedules() {
    let mut done = fp("e3", 9);
    done.kind = EvidenceKind::Termination;
    done.outcome = Some(Outcome::Completed);
    let outcome = evaluate_slot(&[
        claim("ga_nov", "deadline:atlas ga", vec![fp("e1", 1)]),
        claim("ga_dec", "deadline:atlas ga", vec![fp("e2", 5)]),
        claim("beta", "deadline:atlas beta", vec![fp("e4", 1), done]),
    ]);
    assert_eq!(outcome.states["ga_nov"].status, ClaimStatus::Superseded);
    assert_eq!(outcome.states["ga_dec"].status, ClaimStatus::Active);
    assert_eq!(outcome.states["beta"].status, ClaimStatus::Expired);
    assert_eq!(outcome.states["beta"].end_outcome, Some(Outcome::Completed));
}

#[test]
fn l12_retracted_claims_stay_retracted_and_leave_the_slot() {
    let mut retracted = claim("b", "", vec![fp("e2", 5), fp("e3", 7)]);
    retracted.retracted = true;
    let outcome = evaluate_slot(&[claim("a", "", vec![fp("e1", 2)]), retracted]);
    assert_eq!(outcome.states["b"].status, ClaimStatus::Retracted);
    assert_eq!(outcome.states["a"].status, ClaimStatus::Active);
}

#[test]
fn l13_removing_the_superseder_restores_the_old_value_without_blind_resurrection() {
    // A superseded by B superseded by C; deleting B's evidence leaves A superseded by C.
    let outcome = evaluate_slot(&[
        claim("a", "", vec![fp("e1", 1)]),
        claim("c", "", vec![fp("e3", 3)]),
    ]);
    assert_eq!(outcome.states["a"].superseded_by.as_deref(), Some("c"));
    // Deleting C as well: A holds again.
    let outcome = evaluate_slot(&[claim("a", "", vec![fp("e1", 1)])]);
    assert_eq!(outcome.states["a"].status, ClaimStatus::Active);
    // A terminated claim does not come back when its successor goes.
    let mut ended = fp("e2", 2);
    ended.kind = EvidenceKind::Termination;
    let outcome = evaluate_slot(&[claim("a", "", vec![fp("e1", 1), ended])]);
    assert_eq!(outcome.states["a"].status, ClaimStatus::Expired);
}

#[test]
fn l11_explicit_valid_to_is_kept() {
    let mut bounded = claim("a", "", vec![fp("e1", 1)]);
    bounded.explicit_valid_to = Some(Ts(3 * DAY));
    let outcome = evaluate_slot(&[bounded]);
    assert_eq!(outcome.states["a"].valid_to, Some(Ts(3 * DAY)));
}

fn arbitrary_slot() -> impl Strategy<Value = Vec<SlotClaim>> {
    let evidence = (0i64..6, 0usize..4, 0usize..3, any::<bool>(), 0i64..3).prop_map(
        |(day, authority, speaker, termination, order)| {
            let mut evidence = said("", day, Authority::ALL[authority]);
            evidence.speaker = Some(format!("s{speaker}"));
            evidence.order = order;
            evidence.attribution = Some(if speaker == 2 {
                Attribution::Unmapped
            } else {
                Attribution::OneMappedSource
            });
            if termination {
                evidence.kind = EvidenceKind::Termination;
            }
            evidence
        },
    );
    proptest::collection::vec(
        (
            proptest::collection::vec(evidence, 1..4),
            any::<bool>(),
            0usize..2,
        ),
        1..5,
    )
    .prop_map(|claims| {
        claims
            .into_iter()
            .enumerate()
            .map(|(index, (mut evidence, retracted, group))| {
                for (n, item) in evidence.iter_mut().enumerate() {
                    item.id = format!("e{index}-{n}");
                }
                let mut slot_claim = claim(&format!("c{index}"), &format!("g{group}"), evidence);
                slot_claim.retracted = retracted && index == 0;
                if index > 0 {
                    slot_claim.supersedes = vec![format!("c{}", index - 1)];
                }
                slot_claim
            })
            .collect()
    })
}

proptest! {
    /// L14: the state is a function of the sets of claims and evidence, not of their order.
    #[test]
    fn l14_order_of_claims_and_evidence_does_not_matter(claims in arbitrary_slot(), seed in any::<u64>()) {
        let expected = evaluate_slot(&claims);
        let mut shuffled = claims.clone();
        let mut state = seed;
        let mut next = || { state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (state >> 33) as usize };
        for i in (1..shuffled.len()).rev() { let j = next() % (i + 1); shuffled.swap(i, j); }
        for slot_claim in &mut shuffled {
            for i in (1..slot_claim.evidence.len()).rev() { let j = next() % (i + 1); slot_claim.evidence.swap(i, j); }
        }
        let actual = evaluate_slot(&shuffled);
        prop_assert_eq!(&actual.states, &expected.states);
        // At most one claim holds each group.
        for group in ["g0", "g1"] {
            let holders = claims.iter().filter(|c| c.group_key == group && actual.states[&c.id].status == ClaimStatus::Active).count();
            prop_assert!(holders <= 1);
        }
    }
}
