//! QMSum/AMI meeting JSON (`meeting_transcripts`: `{speaker, content}` turns) turned into meeting bundles.
//!
//! AMI files carry no dates, times or people, so this module makes deterministic stand-ins, documented in
//! the README:
//! * the meeting code comes from the file name (`TS3011a`); its prefix without the final letter
//!   (`TS3011`) is the series, so `TS3011a..d` are four meetings of one series;
//! * `started_at` is [`AMI_BASE_DATE`] 10:00 UTC plus one day per series letter (a = +0 days, b = +1, ...);
//! * turn `i` starts at `i` seconds into the meeting and lasts one second (order is all that is known);
//! * each role (Project Manager, Marketing, ...) is a participant with a synthesized address under the
//!   reserved `.invalid` domain, one per role and series (`project-manager@ts3011.ami.invalid`): the corpus
//!   has the same four people in the same roles across a series, so this is the stable identity L15 asks
//!   for, and a person is neither split per meeting nor joined across series;
//! * the corpus's tokenized text (`I 'm here .`) is re-joined (`I'm here.`) and its `{vocalsound}`-style
//!   annotations dropped.

use serde_json::{json, Value};

use crate::transcript::{clip, tidy, Diagnostic, TranscriptError};

/// The day the first meeting of every AMI series is placed on.
pub const AMI_BASE_DATE: &str = "2005-01-03";

/// An AMI meeting read into bundle JSON.
#[derive(Debug)]
pub struct AmiMeeting {
    pub code: String,
    pub series: String,
    pub bundle: Value,
    pub diagnostics: Vec<Diagnostic>,
}

/// True when a JSON document looks like a QMSum/AMI meeting rather than a bundle.
pub fn is_ami_json(document: &Value) -> bool {
    document.get("meeting_transcripts").is_some() && document.get("meeting").is_none()
}

/// Reads an AMI meeting; `code` is the meeting code from the file name (e.g. `TS3011a`).
pub fn parse_ami(code: &str, document: &Value) -> Result<AmiMeeting, TranscriptError> {
    let error = |message: String| TranscriptError {
        format: "ami json",
        line: 0,
        message,
    };
    let code = code.trim();
    let (series, letter) = split_code(code).ok_or_else(|| {
        error(format!(
            "'{}' is not an AMI meeting code (like TS3011a)",
            clip(code)
        ))
    })?;
    let turns = document
        .get("meeting_transcripts")
        .and_then(Value::as_array)
        .ok_or_else(|| error("meeting_transcripts: expected an array of turns".into()))?;
    let mut diagnostics = Vec::new();
    let mut segments = Vec::new();
    let mut roles: Vec<String> = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        let speaker = turn.get("speaker").and_then(Value::as_str).map(tidy);
        let content = turn.get("content").and_then(Value::as_str);
        let Some(content) = content else {
            diagnostics.push(Diagnostic {
                line: 0,
                message: format!("meeting_transcripts[{index}]: no content; skipped"),
            });
            continue;
        };
        let text = detokenize(content);
        if text.is_empty() {
            continue;
        }
        let mut segment = json!({
            "id": format!("t{}", index + 1),
            "start_ms": index as i64 * 1000,
            "end_ms": index as i64 * 1000 + 1000,
            "text": text,
        });
        if let Some(speaker) = speaker.filter(|s| !s.is_empty()) {
            if !roles.contains(&speaker) {
                roles.push(speaker.clone());
            }
            segment["speaker"] = json!(speaker);
        }
        segments.push(segment);
    }
    if segments.is_empty() {
        return Err(error("meeting_transcripts: no turns with text".into()));
    }
    let day = (letter as u8 - b'a') as i64;
    let started_at = format!("{}T10:00:00Z", add_days(AMI_BASE_DATE, day));
    let participants: Vec<Value> = roles
        .iter()
        .map(|role| {
            let local: String = lore_core::normalize::slug(role)
                .chars()
                .filter(|ch| ch.is_ascii_alphanumeric() || *ch == '-')
                .collect();
            let mut participant = json!({"display_name": role, "speaker_label": role});
            if !local.is_empty() {
                participant["email"] =
                    json!(format!("{local}@{}.ami.invalid", series.to_lowercase()));
            }
            participant
        })
        .collect();
    let bundle = json!({
        "meeting": {
            "external_id": format!("ami-{code}"),
            "title": format!("AMI {code}"),
            "started_at": started_at,
            "platform": "ami",
            "series": {"calendar_account": "ami", "calendar_id": "qmsum", "recurring_event_id": series},
        },
        "participants": participants,
        "segments": segments,
    });
    Ok(AmiMeeting {
        code: code.to_string(),
        series: series.to_string(),
        bundle,
        diagnostics,
    })
}

/// `TS3011a` → (`TS3011`, 'a'); the letter must be a..z and the prefix letters then digits.
fn split_code(code: &str) -> Option<(&str, char)> {
    let letter = code.chars().last()?;
    if !letter.is_ascii_lowercase() {
        return None;
    }
    let prefix = &code[..code.len() - 1];
    let letters = prefix.chars().take_while(char::is_ascii_uppercase).count();
    let digits = &prefix[letters..];
    (letters >= 1 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then_some((prefix, letter))
}

fn add_days(date: &str, days: i64) -> String {
    let base = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").expect("valid base date");
    (base + chrono::Duration::days(days))
        .format("%Y-%m-%d")
        .to_string()
}

/// Drops `{vocalsound}`-style annotations and re-joins the corpus's tokens: no space before punctuation or clitics (`I 'm` → `I'm`, `do n't` →
/// `don't`, `word .` → `word.`).
pub fn detokenize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for token in text.split_whitespace() {
        // Annotations such as `{vocalsound}` or `{disfmarker}` are not speech.
        if token.starts_with('{') && token.ends_with('}') {
            continue;
        }
        let glue = matches!(token, "." | "," | "?" | "!" | ":" | ";" | "%" | ")")
            || token.starts_with('\'') && token.len() > 1
            || token == "n't";
        if !out.is_empty() && !glue && !out.ends_with('(') {
            out.push(' ');
        }
        out.push_str(token);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_split_into_series_and_letter() {
        assert_eq!(split_code("TS3011a"), Some(("TS3011", 'a')));
        assert_eq!(split_code("ES2002d"), Some(("ES2002", 'd')));
        assert_eq!(split_code("IS1000"), None);
        assert_eq!(split_code("a"), None);
        assert_eq!(split_code("ts3011a"), None);
    }

    #[test]
    fn tokens_rejoin() {
        assert_eq!(
            detokenize("I 'm here , do n't worry ."),
            "I'm here, don't worry."
        );
        assert_eq!(detokenize("G good morning ."), "G good morning.");
        assert_eq!(detokenize("Okay . {vocalsound} Um ,"), "Okay. Um,");
    }

    #[test]
    fn series_letters_are_consecutive_days() {
        let doc = json!({"meeting_transcripts": [{"speaker": "Marketing", "content": "Hi ."}]});
        let b = parse_ami("TS3011b", &doc).unwrap();
        assert_eq!(b.bundle["meeting"]["started_at"], "2005-01-04T10:00:00Z");
        assert_eq!(b.series, "TS3011");
        assert!(parse_ami("nope", &doc).is_err());
    }
}
