//! OpenKB's claim rules, as OpenKB applies them to one page: the claim id formula, field validation,
//! and the merge of incoming claims into a page's stored claims (SPEC 5.7). Pure: no storage, no clock.
//!
//! Every claim or link OpenKB would drop silently is returned here with its reason, so that an import
//! can report it.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use serde_json::Value;

pub const STATUSES: [&str; 4] = ["proposed", "validated", "superseded", "abandoned"];
pub const AUTHORITIES: [&str; 3] = ["first_party", "document", "assistant"];

/// One claim as OpenKB keeps it on a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WikiClaim {
    pub id: String,
    pub text: String,
    pub as_of: String,
    pub source_anchor: String,
    pub status: String,
    pub authority: Option<String>,
    pub supersedes: Vec<String>,
    pub superseded_by: Vec<String>,
}

/// OpenKB's id: the first 16 hex characters of SHA-256 over the compact JSON array
/// `[text, as_of, source_anchor]` (each trimmed, non-ASCII kept as is, separators `,` and `:`).
pub fn claim_id(text: &str, as_of: &str, source_anchor: &str) -> String {
    let payload = serde_json::to_string(&[text.trim(), as_of.trim(), source_anchor.trim()])
        .expect("strings serialize");
    lore_core::ids::sha256_hex(payload.as_bytes())[..16].to_string()
}

/// An `as_of` value: a calendar date, or an instant (naive times read as UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsOf {
    Date(NaiveDate),
    Instant(DateTime<Utc>),
}

impl AsOf {
    pub fn utc_day(self) -> NaiveDate {
        match self {
            AsOf::Date(date) => date,
            AsOf::Instant(instant) => instant.date_naive(),
        }
    }

    /// Midnight UTC for a date, the instant itself otherwise.
    pub fn to_ts(self) -> lore_core::Ts {
        match self {
            AsOf::Date(date) => {
                lore_core::Ts(date.and_time(NaiveTime::MIN).and_utc().timestamp_millis())
            }
            AsOf::Instant(instant) => lore_core::Ts(instant.timestamp_millis()),
        }
    }
}

/// Reads `as_of` as OpenKB does: `YYYY-MM-DD`, optionally followed by `T` or a space, `HH:MM`,
/// optional seconds and fraction, and an optional `Z` or `±HH[:]MM` offset.
pub fn parse_as_of(value: &str) -> Option<AsOf> {
    let text = value.trim();
    if !text.is_ascii() {
        return None;
    }
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let well_formed = digits(0..4)
        && bytes.get(4) == Some(&b'-')
        && digits(5..7)
        && bytes.get(7) == Some(&b'-')
        && digits(8..10);
    if !well_formed {
        return None;
    }
    let date = NaiveDate::parse_from_str(&text[..10], "%Y-%m-%d").ok()?;
    if text.len() == 10 {
        return Some(AsOf::Date(date));
    }
    if !matches!(bytes[10], b'T' | b' ') {
        return None;
    }
    let rest = &text[11..];
    let (clock, offset_minutes) = split_offset(rest)?;
    let time = parse_clock(clock)?;
    let naive = NaiveDateTime::new(date, time);
    let utc = naive.and_utc() - chrono::Duration::minutes(offset_minutes);
    Some(AsOf::Instant(utc))
}

/// Splits `HH:MM[:SS[.f]]` from its offset; a missing offset is UTC.
fn split_offset(rest: &str) -> Option<(&str, i64)> {
    if let Some(clock) = rest.strip_suffix('Z') {
        return Some((clock, 0));
    }
    if let Some(position) = rest.rfind(['+', '-']) {
        let (clock, offset) = rest.split_at(position);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let body = &offset[1..];
        let (hours, minutes) = match body.len() {
            5 if body.as_bytes()[2] == b':' => (&body[..2], &body[3..]),
            4 => (&body[..2], &body[2..]),
            _ => return None,
        };
        if !(hours.bytes().all(|b| b.is_ascii_digit())
            && minutes.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        let (hours, minutes): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
        if hours > 23 || minutes > 59 {
            return None;
        }
        return Some((clock, sign * (hours * 60 + minutes)));
    }
    Some((rest, 0))
}

fn parse_clock(clock: &str) -> Option<NaiveTime> {
    let (main, fraction) = match clock.split_once('.') {
        Some((main, fraction)) => (main, Some(fraction)),
        None => (clock, None),
    };
    let parts: Vec<&str> = main.split(':').collect();
    if !(parts.len() == 2 || parts.len() == 3)
        || parts
            .iter()
            .any(|p| p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()))
        || (fraction.is_some() && parts.len() != 3)
    {
        return None;
    }
    let nanos = match fraction {
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            let padded: String = digits.chars().chain("000000000".chars()).take(9).collect();
            padded.parse::<u32>().ok()?
        }
        Some(_) => return None,
        None => 0,
    };
    let number = |index: usize| parts.get(index).map_or(Some(0), |p| p.parse::<u32>().ok());
    NaiveTime::from_hms_nano_opt(number(0)?, number(1)?, number(2)?, nanos)
}

/// OpenKB's chronology check: the new `as_of` is not earlier than the old one, compared as UTC
/// calendar days when either side is a date only. Unreadable values never allow a link.
pub fn as_of_allows_supersession(incoming: &str, old: &str) -> bool {
    let (Some(incoming), Some(old)) = (parse_as_of(incoming), parse_as_of(old)) else {
        return false;
    };
    match (incoming, old) {
        (AsOf::Instant(new), AsOf::Instant(old)) => new >= old,
        _ => incoming.utc_day() >= old.utc_day(),
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Validates one raw claim and computes its id (a supplied `id` is ignored). An assistant claim
/// marked validated becomes proposed. `Err` carries the reason the claim is dropped.
pub fn normalize_claim(raw: &Value, keep_superseded_by: bool) -> Result<WikiClaim, String> {
    let Some(object) = raw.as_object() else {
        return Err("the claim is not a JSON object".into());
    };
    let text = object.get("text").and_then(Value::as_str).map(str::trim);
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return Err("the `text` field is empty".into());
    };
    let as_of = object.get("as_of").and_then(Value::as_str).map(str::trim);
    let Some(as_of) = as_of.filter(|a| parse_as_of(a).is_some()) else {
        return Err("the `as_of` field is invalid".into());
    };
    let status = object.get("status").and_then(Value::as_str);
    let Some(mut status) = status.filter(|s| STATUSES.contains(s)) else {
        return Err("the `status` field is invalid".into());
    };
    let anchor = object
        .get("source_anchor")
        .and_then(Value::as_str)
        .map(str::trim);
    let Some(source_anchor) = anchor.filter(|a| !a.is_empty()) else {
        return Err("the `source_anchor` field is empty".into());
    };
    let authority = match object.get("authority") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) if AUTHORITIES.contains(&text.as_str()) => Some(text.clone()),
        Some(_) => return Err("the `authority` field is invalid".into()),
    };
    if authority.as_deref() == Some("assistant") && status == "validated" {
        status = "proposed";
    }
    Ok(WikiClaim {
        id: claim_id(text, as_of, source_anchor),
        text: text.to_string(),
        as_of: as_of.to_string(),
        source_anchor: source_anchor.to_string(),
        status: status.to_string(),
        authority,
        supersedes: string_list(object.get("supersedes")),
        superseded_by: if keep_superseded_by {
            string_list(object.get("superseded_by"))
        } else {
            Vec::new()
        },
    })
}

/// A claim the merge did not take, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DroppedClaim {
    /// Position in the page's incoming `claims` array.
    pub index: usize,
    /// The OpenKB id, when the claim was valid enough to have one.
    pub id: Option<String>,
    pub reason: String,
}

/// A supersession link the merge did not apply, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DroppedLink {
    pub claim: String,
    pub target: String,
    pub reason: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeOutcome {
    /// The page's claims after the merge: stored ones first, then new ones, in order.
    pub claims: Vec<WikiClaim>,
    /// For each new claim, its index in the incoming array.
    pub added: Vec<(usize, String)>,
    pub dropped_claims: Vec<DroppedClaim>,
    /// `(new, old)` links applied.
    pub applied_links: Vec<(String, String)>,
    pub dropped_links: Vec<DroppedLink>,
}

/// OpenKB's `merge_claims`: appends new claims, skipping whole any claim whose id is already stored,
/// then applies each new claim's page-local `supersedes` links that pass the checks, in OpenKB's order.
pub fn merge(stored: &[WikiClaim], incoming: &[Value]) -> MergeOutcome {
    let mut outcome = MergeOutcome {
        claims: stored.to_vec(),
        ..Default::default()
    };
    let mut pending: Vec<(String, String, Vec<String>)> = Vec::new();
    for (index, raw) in incoming.iter().enumerate() {
        let claim = match normalize_claim(raw, false) {
            Ok(claim) => claim,
            Err(reason) => {
                outcome.dropped_claims.push(DroppedClaim {
                    index,
                    id: None,
                    reason,
                });
                continue;
            }
        };
        if outcome.claims.iter().any(|c| c.id == claim.id) {
            let reason = if pending.iter().any(|(id, _, _)| id == &claim.id) {
                "duplicate id within the page; the first claim is kept"
            } else {
                "a claim with this id is already stored; the stored claim is kept whole"
            };
            outcome.dropped_claims.push(DroppedClaim {
                index,
                id: Some(claim.id.clone()),
                reason: reason.into(),
            });
            continue;
        }
        pending.push((
            claim.id.clone(),
            claim.as_of.clone(),
            claim.supersedes.clone(),
        ));
        outcome.added.push((index, claim.id.clone()));
        outcome.claims.push(claim);
    }

    for (incoming_id, incoming_as_of, targets) in pending {
        for old_id in targets {
            let drop = |reason: &str| DroppedLink {
                claim: incoming_id.clone(),
                target: old_id.clone(),
                reason: reason.to_string(),
            };
            if old_id == incoming_id {
                outcome
                    .dropped_links
                    .push(drop("a claim cannot supersede itself"));
                continue;
            }
            let Some(old_index) = outcome.claims.iter().position(|c| c.id == old_id) else {
                outcome
                    .dropped_links
                    .push(drop("the target is not a claim on the same page"));
                continue;
            };
            let new = outcome
                .claims
                .iter()
                .find(|c| c.id == incoming_id)
                .expect("new claim is on the page")
                .clone();
            let old = &outcome.claims[old_index];
            let reason =
                if old.status == "validated" && new.authority.as_deref() == Some("assistant") {
                    Some("an assistant claim cannot supersede a validated claim")
                } else if old.authority.as_deref() == Some("first_party")
                    && new.authority.as_deref() != Some("first_party")
                {
                    Some("only a first_party claim can supersede a first_party claim")
                } else if old.status == "validated"
                    && !matches!(new.status.as_str(), "validated" | "abandoned")
                {
                    Some(
                    "a claim that is not validated or abandoned cannot supersede a validated claim",
                )
                } else if !as_of_allows_supersession(&incoming_as_of, &old.as_of) {
                    Some("the new as_of is earlier than the old one, or they cannot be compared")
                } else {
                    None
                };
            if let Some(reason) = reason {
                outcome.dropped_links.push(drop(reason));
                continue;
            }
            let old = &mut outcome.claims[old_index];
            old.status = "superseded".into();
            if !old.superseded_by.contains(&incoming_id) {
                old.superseded_by.push(incoming_id.clone());
            }
            outcome
                .applied_links
                .push((incoming_id.clone(), old_id.clone()));
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_matches_openkb_formula_with_non_ascii_text() {
        // Python: hashlib.sha256(json.dumps(["Zoë leads Atlas","2026-11-09","m#s1"],
        //   ensure_ascii=False, separators=(",",":")).encode()).hexdigest()[:16]
        let payload = r#"["Zoë leads Atlas","2026-11-09","m#s1"]"#;
        assert_eq!(
            claim_id(" Zoë leads Atlas ", "2026-11-09", "m#s1"),
            lore_core::ids::sha256_hex(payload.as_bytes())[..16]
        );
    }

    #[test]
    fn as_of_accepts_openkb_forms() {
        for ok in [
            "2026-11-09",
            "2026-11-09T12:00",
            "2026-11-09 12:00:00",
            "2026-11-09T12:00:00.5Z",
            "2026-11-09T07:00-05:00",
            "2026-11-09T07:00:00-0500",
        ] {
            assert!(parse_as_of(ok).is_some(), "{ok}");
        }
        for bad in [
            "2026-13-01",
            "yesterday",
            "2026-11-09T7:00",
            "2026-11-09T12:00:00+5",
            "",
        ] {
            assert!(parse_as_of(bad).is_none(), "{bad}");
        }
        assert_eq!(
            parse_as_of("2026-11-09T07:00-05:00"),
            parse_as_of("2026-11-09T12:00Z")
        );
    }

    #[test]
    fn as_of_never_panics_on_odd_input() {
        let pieces = [
            "2026-11-09",
            "T",
            " ",
            "12",
            ":",
            "00",
            ".",
            "5",
            "Z",
            "+",
            "-",
            "é",
            "１",
            "0500",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    for d in pieces {
                        let _ = parse_as_of(&format!("{a}{b}{c}{d}"));
                    }
                }
            }
        }
        assert!(parse_as_of("2026-11-09T12:00+1é1").is_none());
    }

    #[test]
    fn merge_reports_in_openkb_check_order() {
        let old = serde_json::json!({"text": "A", "as_of": "2026-11-02", "source_anchor": "s",
                                     "status": "validated", "authority": "first_party"});
        let stored = vec![normalize_claim(&old, true).unwrap()];
        // An assistant claim over a validated first-party one: the assistant check comes first.
        let new = serde_json::json!({"text": "B", "as_of": "2026-11-01", "source_anchor": "s",
                                     "status": "proposed", "authority": "assistant",
                                     "supersedes": [stored[0].id]});
        let outcome = merge(&stored, &[new]);
        assert_eq!(
            outcome.dropped_links[0].reason,
            "an assistant claim cannot supersede a validated claim"
        );
        assert_eq!(outcome.claims[0].status, "validated");
    }
}
