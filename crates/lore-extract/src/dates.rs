//! Dates as people say them, resolved against the meeting's start (its UTC calendar day).
//!
//! Understood: ISO dates (`2026-11-12`); month and day with or without a year (`November 12th`,
//! `Nov 12, 2027`, `12 November`); weekdays (`Friday`, `this Friday`: the first such day after the
//! meeting's day); `next Tuesday` (the Tuesday of the following week: one week after the first Tuesday
//! after the meeting when that falls in the meeting's own Monday-to-Sunday week); `tomorrow`;
//! `end of the week` (the Friday of the meeting's week, or the next one when the meeting is on a weekend);
//! `end of the month` (its last day). A date without a year is the first such date on or after the
//! meeting's day. Everything resolves to midnight UTC.

use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use lore_core::Ts;

const WEEKDAYS: &[(&str, Weekday)] = &[
    ("monday", Weekday::Mon),
    ("tuesday", Weekday::Tue),
    ("wednesday", Weekday::Wed),
    ("thursday", Weekday::Thu),
    ("friday", Weekday::Fri),
    ("saturday", Weekday::Sat),
    ("sunday", Weekday::Sun),
];

const MONTHS: &[(&str, u32)] = &[
    ("january", 1),
    ("jan", 1),
    ("february", 2),
    ("feb", 2),
    ("march", 3),
    ("mar", 3),
    ("april", 4),
    ("apr", 4),
    ("may", 5),
    ("june", 6),
    ("jun", 6),
    ("july", 7),
    ("jul", 7),
    ("august", 8),
    ("aug", 8),
    ("september", 9),
    ("sep", 9),
    ("sept", 9),
    ("october", 10),
    ("oct", 10),
    ("november", 11),
    ("nov", 11),
    ("december", 12),
    ("dec", 12),
];

pub(crate) fn weekday(word: &str) -> Option<Weekday> {
    WEEKDAYS
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, day)| *day)
}

pub(crate) fn month(word: &str) -> Option<u32> {
    MONTHS
        .iter()
        .find(|(name, _)| *name == word.trim_end_matches('.'))
        .map(|(_, month)| *month)
}

fn to_ts(date: NaiveDate) -> Ts {
    let midnight = date.and_hms_opt(0, 0, 0).expect("midnight exists");
    Ts(Utc.from_utc_datetime(&midnight).timestamp_millis())
}

fn meeting_day(meeting: Ts) -> Option<NaiveDate> {
    Utc.timestamp_millis_opt(meeting.0)
        .single()
        .map(|dt| dt.date_naive())
}

/// A day-of-month word: `12`, `12th`, `1st`, `2nd`, `3rd`.
fn day_number(word: &str) -> Option<u32> {
    let digits = word
        .trim_end_matches(',')
        .trim_end_matches("st")
        .trim_end_matches("nd")
        .trim_end_matches("rd")
        .trim_end_matches("th");
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|day| (1..=31).contains(day))
}

fn year_number(word: &str) -> Option<i32> {
    let digits = word.trim_end_matches(',');
    (digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// The first date with this month and day on or after `from`.
fn next_month_day(from: NaiveDate, month: u32, day: u32) -> Option<NaiveDate> {
    (0..=4).find_map(|offset| {
        NaiveDate::from_ymd_opt(from.year() + offset, month, day).filter(|date| *date >= from)
    })
}

/// The first `day` strictly after `from`.
fn next_weekday(from: NaiveDate, day: Weekday) -> NaiveDate {
    let mut date = from + Duration::days(1);
    while date.weekday() != day {
        date += Duration::days(1);
    }
    date
}

/// Resolves the date that starts at `words[0]` (lowercase words) against the meeting; returns it with the
/// number of words it used.
pub fn resolve_date(words: &[&str], meeting: Ts) -> Option<(Ts, usize)> {
    let today = meeting_day(meeting)?;
    let word = |index: usize| words.get(index).copied().unwrap_or("");
    let first = word(0).trim_end_matches([',', '.']);
    // ISO date.
    if first.len() == 10 && first.as_bytes()[4] == b'-' && first.as_bytes()[7] == b'-' {
        return NaiveDate::parse_from_str(first, "%Y-%m-%d")
            .ok()
            .map(|date| (to_ts(date), 1));
    }
    if first == "tomorrow" {
        return Some((to_ts(today + Duration::days(1)), 1));
    }
    if let Some(day) = weekday(first) {
        return Some((to_ts(next_weekday(today, day)), 1));
    }
    if first == "this" {
        if let Some(day) = weekday(word(1).trim_end_matches([',', '.'])) {
            return Some((to_ts(next_weekday(today, day)), 2));
        }
    }
    if first == "next" {
        if let Some(day) = weekday(word(1).trim_end_matches([',', '.'])) {
            let upcoming = next_weekday(today, day);
            let same_week = upcoming.iso_week() == today.iso_week();
            let date = if same_week {
                upcoming + Duration::days(7)
            } else {
                upcoming
            };
            return Some((to_ts(date), 2));
        }
    }
    if first == "end" && word(1) == "of" {
        let (target, used) = if word(2) == "the" {
            (word(3), 4)
        } else {
            (word(2), 3)
        };
        match target.trim_end_matches([',', '.']) {
            "week" => {
                let friday = if today.weekday().num_days_from_monday() <= 4 {
                    today + Duration::days(4 - today.weekday().num_days_from_monday() as i64)
                } else {
                    next_weekday(today, Weekday::Fri)
                };
                return Some((to_ts(friday), used));
            }
            "month" => {
                let (year, month) = if today.month() == 12 {
                    (today.year() + 1, 1)
                } else {
                    (today.year(), today.month() + 1)
                };
                let last = NaiveDate::from_ymd_opt(year, month, 1)? - Duration::days(1);
                return Some((to_ts(last), used));
            }
            _ => return None,
        }
    }
    // Month day [year] | day month [year].
    let (month_number, day, mut used) = if let Some(m) = month(first) {
        (m, day_number(word(1))?, 2)
    } else if let Some(d) = day_number(first) {
        let m = month(word(1).trim_end_matches([',', '.']))?;
        (m, d, 2)
    } else {
        return None;
    };
    let date = match year_number(word(used).trim_end_matches('.')) {
        Some(year) => {
            used += 1;
            NaiveDate::from_ymd_opt(year, month_number, day)?
        }
        None => next_month_day(today, month_number, day)?,
    };
    Some((to_ts(date), used))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str, meeting: &str) -> Option<String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        resolve_date(&words, Ts::parse(meeting).unwrap())
            .map(|(ts, _)| ts.to_rfc3339()[..10].to_string())
    }

    #[test]
    fn relative_days_resolve_against_the_meeting_day() {
        // 2026-11-09 is a Monday.
        let monday = "2026-11-09T15:00:00Z";
        assert_eq!(resolve("friday", monday).as_deref(), Some("2026-11-13"));
        assert_eq!(
            resolve("this friday", monday).as_deref(),
            Some("2026-11-13")
        );
        assert_eq!(
            resolve("next tuesday", monday).as_deref(),
            Some("2026-11-17")
        );
        assert_eq!(resolve("monday", monday).as_deref(), Some("2026-11-16"));
        assert_eq!(resolve("tomorrow", monday).as_deref(), Some("2026-11-10"));
        assert_eq!(
            resolve("end of the week", monday).as_deref(),
            Some("2026-11-13")
        );
        assert_eq!(
            resolve("end of month", monday).as_deref(),
            Some("2026-11-30")
        );
        // From a Saturday, next Tuesday is the coming one (it is already next week).
        assert_eq!(
            resolve("next tuesday", "2026-11-14T10:00:00Z").as_deref(),
            Some("2026-11-17")
        );
    }

    #[test]
    fn absolute_dates_with_and_without_years() {
        let meeting = "2026-11-09T15:00:00Z";
        assert_eq!(
            resolve("2026-11-12", meeting).as_deref(),
            Some("2026-11-12")
        );
        assert_eq!(
            resolve("november 12th", meeting).as_deref(),
            Some("2026-11-12")
        );
        assert_eq!(
            resolve("nov 12, 2027", meeting).as_deref(),
            Some("2027-11-12")
        );
        assert_eq!(resolve("3 march", meeting).as_deref(), Some("2027-03-03"));
        assert_eq!(resolve("february 30", meeting), None);
        assert_eq!(resolve("soon", meeting), None);
    }
}
