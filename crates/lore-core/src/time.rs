//! Instants as milliseconds since the Unix epoch, formatted as RFC 3339 UTC with millisecond precision.

use std::fmt;

use chrono::{DateTime, NaiveDate, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant in UTC, millisecond precision. Rules take it as data; they never read a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ts(pub i64);

/// Why a time string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid time '{input}': expected RFC 3339 (2026-11-09T15:00:00Z) or a date (2026-11-09)")]
pub struct TimeParseError {
    pub input: String,
}

pub const MS_PER_DAY: i64 = 86_400_000;

impl Ts {
    pub fn from_millis(ms: i64) -> Ts {
        Ts(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    /// Parses RFC 3339 with any offset, or a bare `YYYY-MM-DD` date (midnight UTC).
    pub fn parse(input: &str) -> Result<Ts, TimeParseError> {
        let trimmed = input.trim();
        if let Ok(datetime) = DateTime::parse_from_rfc3339(trimmed) {
            return Ok(Ts(datetime.with_timezone(&Utc).timestamp_millis()));
        }
        if let Ok(date) = NaiveDate::parse_from_str(trimmed, "%Y-%m-%d") {
            if let Some(midnight) = date.and_hms_opt(0, 0, 0) {
                return Ok(Ts(Utc.from_utc_datetime(&midnight).timestamp_millis()));
            }
        }
        // Name the input, but never echo a huge value back.
        let mut shown: String = input.chars().take(64).collect();
        if shown.len() < input.len() {
            shown.push('…');
        }
        Err(TimeParseError { input: shown })
    }

    /// `true` when the input is a bare calendar date without a time of day.
    pub fn is_date_only(input: &str) -> bool {
        NaiveDate::parse_from_str(input.trim(), "%Y-%m-%d").is_ok()
    }

    pub fn to_rfc3339(self) -> String {
        match Utc.timestamp_millis_opt(self.0).single() {
            Some(datetime) => datetime.to_rfc3339_opts(SecondsFormat::Millis, true),
            None => format!("@{}ms", self.0),
        }
    }

    /// The UTC calendar day, as days since the epoch.
    pub fn utc_day(self) -> i64 {
        self.0.div_euclid(MS_PER_DAY)
    }

    pub fn plus_millis(self, ms: i64) -> Ts {
        Ts(self.0.saturating_add(ms))
    }

    /// The current wall-clock time. Only edges (CLI, server) call this; rules receive `now`.
    pub fn now_wall_clock() -> Ts {
        Ts(Utc::now().timestamp_millis())
    }
}

impl fmt::Display for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Ts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Ts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Ts, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ts::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Formats an offset within a meeting as `mm:ss` (or `h:mm:ss` past an hour).
pub fn format_offset(ms: i64) -> String {
    let total_seconds = ms.max(0) / 1000;
    let (hours, minutes, seconds) = (
        total_seconds / 3600,
        (total_seconds / 60) % 60,
        total_seconds % 60,
    );
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes:02}:{seconds:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_millisecond_precision() {
        let ts = Ts::parse("2026-11-09T15:00:00.123+01:00").unwrap();
        assert_eq!(ts.to_rfc3339(), "2026-11-09T14:00:00.123Z");
        assert_eq!(Ts::parse(&ts.to_rfc3339()).unwrap(), ts);
    }

    #[test]
    fn bare_dates_are_midnight_utc() {
        assert_eq!(
            Ts::parse("2026-11-12").unwrap().to_rfc3339(),
            "2026-11-12T00:00:00.000Z"
        );
        assert!(Ts::is_date_only("2026-11-12"));
        assert!(!Ts::is_date_only("2026-11-12T00:00:00Z"));
    }

    #[test]
    fn rejects_garbage_with_the_input_named() {
        let error = Ts::parse("next tuesday").unwrap_err();
        assert!(error.to_string().contains("next tuesday"));
    }

    #[test]
    fn offsets_read_as_minutes_and_seconds() {
        assert_eq!(format_offset(0), "00:00");
        assert_eq!(format_offset(754_000), "12:34");
        assert_eq!(format_offset(3_725_000), "1:02:05");
    }
}
