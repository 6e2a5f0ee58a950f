//! Transcripts as meeting tools export them (WebVTT, SRT, plain `Speaker: text`, QMSum/AMI turn JSON), read
//! into timed, attributed segments plus diagnostics, and turned into meeting bundles with metadata from a
//! sidecar or from flags.
//!
//! Parsers never panic: a file that cannot be read as its format at all is a `TranscriptError`; anything
//! smaller (a cue with a broken timing line, an empty cue) is skipped and reported as a diagnostic.

use std::fmt;

use serde::Serialize;
use serde_json::{json, Map, Value};

/// The formats Lore reads transcripts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptFormat {
    Vtt,
    Srt,
    Plain,
}

impl TranscriptFormat {
    /// The format a file's extension names (`vtt`, `srt`, `txt`), if any.
    pub fn from_extension(extension: &str) -> Option<TranscriptFormat> {
        match extension.to_ascii_lowercase().as_str() {
            "vtt" => Some(TranscriptFormat::Vtt),
            "srt" => Some(TranscriptFormat::Srt),
            "txt" => Some(TranscriptFormat::Plain),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TranscriptFormat::Vtt => "vtt",
            TranscriptFormat::Srt => "srt",
            TranscriptFormat::Plain => "plain text",
        }
    }
}

/// One stretch of speech.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TranscriptSegment {
    pub start_ms: i64,
    pub end_ms: i64,
    /// The speaker as the file names it (a voice tag, a `Name:` prefix, an AMI role); None when unknown.
    pub speaker: Option<String>,
    /// Markup removed, entities decoded, lines joined by one space.
    pub text: String,
}

/// Something skipped or repaired while reading, tied to the 1-based line it starts on (0: the whole file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Transcript {
    pub format: TranscriptFormat,
    pub segments: Vec<TranscriptSegment>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A file that cannot be read as a transcript of its format, e.g. `error parsing vtt line 1: ...`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TranscriptError {
    pub format: &'static str,
    /// 1-based; 0 when the problem is the file as a whole.
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "error parsing {}: {}", self.format, self.message)
        } else {
            write!(
                f,
                "error parsing {} line {}: {}",
                self.format, self.line, self.message
            )
        }
    }
}

impl std::error::Error for TranscriptError {}

/// Reads a transcript in the given format.
pub fn parse_transcript(
    format: TranscriptFormat,
    text: &str,
) -> Result<Transcript, TranscriptError> {
    let text = normalize_newlines(text.strip_prefix('\u{feff}').unwrap_or(text));
    match format {
        TranscriptFormat::Vtt => crate::vtt::parse(&text),
        TranscriptFormat::Srt => crate::srt::parse(&text),
        TranscriptFormat::Plain => crate::plain::parse(&text),
    }
}

fn normalize_newlines(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Splits text into blocks separated by blank lines, each with the 1-based line number it starts on.
pub(crate) fn blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut start = 0;
    for (index, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push((start, std::mem::take(&mut current)));
            }
        } else {
            if current.is_empty() {
                start = index + 1;
            }
            current.push(line);
        }
    }
    if !current.is_empty() {
        blocks.push((start, current));
    }
    blocks
}

/// Parses `hh:mm:ss.mmm`, `mm:ss.mmm` (a comma works as the decimal mark too, as SRT writes it).
pub(crate) fn parse_timestamp(text: &str) -> Option<i64> {
    let text = text.trim();
    let (clock, fraction) = match text.rsplit_once(['.', ',']) {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (text, None),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let number = |part: &str| -> Option<i64> {
        if part.is_empty() || part.len() > 6 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let mut values = Vec::with_capacity(3);
    for part in &parts {
        values.push(number(part)?);
    }
    let (hours, minutes, seconds) = match values.as_slice() {
        [minutes, seconds] => (0, *minutes, *seconds),
        [hours, minutes, seconds] => (*hours, *minutes, *seconds),
        _ => return None,
    };
    if minutes >= 60 || seconds >= 60 {
        return None;
    }
    let millis = match fraction {
        None => 0,
        Some(fraction)
            if !fraction.is_empty()
                && fraction.len() <= 3
                && fraction.bytes().all(|b| b.is_ascii_digit()) =>
        {
            let padded = format!("{fraction:0<3}");
            padded.parse::<i64>().ok()?
        }
        Some(_) => return None,
    };
    Some(((hours * 60 + minutes) * 60 + seconds) * 1000 + millis)
}

/// Parses a `start --> end [settings]` line; None when it is not one.
pub(crate) fn parse_timing(line: &str) -> Option<Result<(i64, i64), String>> {
    let (start, rest) = line.split_once("-->")?;
    let end = rest.split_whitespace().next().unwrap_or("");
    let parsed_start = parse_timestamp(start);
    let parsed_end = parse_timestamp(end);
    Some(match (parsed_start, parsed_end) {
        (Some(start), Some(end)) => Ok((start, end)),
        (None, _) => Err(format!("invalid start time '{}'", clip(start.trim()))),
        (_, None) => Err(format!("invalid end time '{}'", clip(end))),
    })
}

/// At most 40 characters of an input, for messages.
pub(crate) fn clip(text: &str) -> String {
    let mut shown: String = text.chars().take(40).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    shown
}

/// Decodes the HTML character references captions use (`&amp;`, `&gt;`, `&#39;`, `&#x2019;`, `&nbsp;`).
pub(crate) fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find('&') {
        out.push_str(&rest[..position]);
        let after = &rest[position..];
        let end = after
            .char_indices()
            .take(12)
            .find(|(_, ch)| *ch == ';')
            .map(|(index, _)| index);
        let decoded = end.and_then(|end| {
            let name = &after[1..end];
            let ch = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "lrm" | "rlm" => Some('\u{200b}'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                    .and_then(char::from_u32),
            };
            ch.map(|ch| (ch, end))
        });
        match decoded {
            Some(('\u{200b}', end)) => rest = &after[end + 1..],
            Some((ch, end)) => {
                out.push(ch);
                rest = &after[end + 1..];
            }
            None => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Removes `<...>` markup (`<i>`, `<c.yellow>`, `<00:00:01.000>`, `<font color=...>`), keeping the text.
pub(crate) fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for ch in text.chars() {
        match (in_tag, ch) {
            (false, '<') => in_tag = true,
            (true, '>') => in_tag = false,
            (false, _) => out.push(ch),
            (true, _) => {}
        }
    }
    if in_tag {
        // An unclosed `<` was text after all ("a < b").
        return text.to_string();
    }
    out
}

/// Collapses runs of white space to one space and trims.
pub(crate) fn tidy(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits a `Name: text` first line the way Zoom, SRT exporters and plain transcripts write speakers.
///
/// The name must look like one: one to five words, at most 40 characters, starting with a letter, digits
/// only in labels of one or two words (`S1`, `Speaker 2`), and not a word that commonly precedes a colon in speech ("Note", "Agenda", "Update", ...).
pub(crate) fn split_speaker_prefix(line: &str) -> Option<(String, &str)> {
    let (name, rest) = line.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 40 || rest.starts_with("//") {
        return None;
    }
    let words: Vec<&str> = name.split_whitespace().collect();
    if words.len() > 5 {
        return None;
    }
    // Digits only in short labels such as `S1`, `Speaker 2` or `SPEAKER_01`.
    let digits_allowed = words.len() <= 2;
    let looks_like_name = name.chars().next().is_some_and(char::is_alphabetic)
        && name.chars().all(|ch| {
            ch.is_alphabetic()
                || (digits_allowed && ch.is_ascii_digit())
                || matches!(ch, ' ' | '.' | '\'' | '-' | '_')
        });
    const NOT_SPEAKERS: &[&str] = &[
        "note",
        "notes",
        "agenda",
        "update",
        "todo",
        "action",
        "action item",
        "re",
        "fyi",
        "question",
        "answer",
        "summary",
        "decision",
        "http",
        "https",
        "warning",
        "error",
    ];
    if !looks_like_name || NOT_SPEAKERS.contains(&name.to_lowercase().as_str()) {
        return None;
    }
    Some((name.to_string(), rest.trim_start()))
}

/// Metadata for a transcript's meeting: a sidecar's `meeting` and `participants`, overridden by flags.
#[derive(Clone, Debug, Default)]
pub struct TranscriptMeta {
    /// `{"meeting": {...}, "participants": [...]}` as a bundle writes them.
    pub sidecar: Option<Value>,
    /// Used when neither the sidecar nor `external_id` gives one (the file's stem).
    pub default_external_id: String,
    pub external_id: Option<String>,
    pub title: Option<String>,
    pub started_at: Option<String>,
    /// `Name <email>` or a bare name, as `--participant` gives them.
    pub participants: Vec<String>,
    /// `LABEL=email` pairs, as `--speaker` gives them.
    pub speakers: Vec<String>,
}

/// Builds the JSON of a meeting bundle (SPEC 5.1) from a transcript and its metadata, ready for
/// `parse_bundle_value`. Speakers whose name matches a participant's display name (ignoring case) are
/// mapped to that participant; named speakers matching nobody become name-only participants (L15 keeps
/// them provisional and meeting-scoped); generic labels with digits (`S1`) matching nobody stay unmapped.
pub fn transcript_bundle(transcript: &Transcript, meta: &TranscriptMeta) -> Result<Value, String> {
    let sidecar = meta.sidecar.as_ref();
    if let Some(sidecar) = sidecar {
        let Some(object) = sidecar.as_object() else {
            return Err("the sidecar must be a json object".into());
        };
        if let Some(key) = object
            .keys()
            .find(|key| !matches!(key.as_str(), "meeting" | "participants"))
        {
            return Err(format!(
                "unknown field '{key}' in the sidecar (it holds only 'meeting' and 'participants')"
            ));
        }
    }
    let mut meeting: Map<String, Value> = sidecar
        .and_then(|s| s.get("meeting"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if let Some(id) = &meta.external_id {
        meeting.insert("external_id".into(), json!(id));
    }
    if !meeting.contains_key("external_id") {
        meeting.insert("external_id".into(), json!(meta.default_external_id));
    }
    if let Some(title) = &meta.title {
        meeting.insert("title".into(), json!(title));
    }
    if let Some(started_at) = &meta.started_at {
        meeting.insert("started_at".into(), json!(started_at));
    }
    if !meeting.contains_key("started_at") {
        return Err(
            "the meeting has no start time: give --started-at or a sidecar FILE.meeting.json"
                .into(),
        );
    }
    let mut participants: Vec<Value> = sidecar
        .and_then(|s| s.get("participants"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for flag in &meta.participants {
        participants.push(participant_from_flag(flag)?);
    }
    for flag in &meta.speakers {
        let (label, email) = flag
            .split_once('=')
            .map(|(label, email)| (label.trim(), email.trim().to_lowercase()))
            .filter(|(label, email)| !label.is_empty() && !email.is_empty())
            .ok_or_else(|| format!("--speaker '{}': expected LABEL=email", clip(flag)))?;
        let participant = participants
            .iter_mut()
            .find(|p| {
                p.get("email")
                    .and_then(Value::as_str)
                    .is_some_and(|e| e.trim().to_lowercase() == email)
            })
            .ok_or_else(|| {
                format!("--speaker '{label}={email}': no participant has the email {email}")
            })?;
        participant["speaker_label"] = json!(label);
    }
    // Speakers named in the transcript, in order of first appearance.
    let mut speakers: Vec<&str> = Vec::new();
    for segment in &transcript.segments {
        if let Some(speaker) = segment.speaker.as_deref() {
            if !speakers.contains(&speaker) {
                speakers.push(speaker);
            }
        }
    }
    for speaker in speakers {
        let labelled = participants
            .iter()
            .any(|p| p.get("speaker_label").and_then(Value::as_str) == Some(speaker));
        if labelled {
            continue;
        }
        let same_name = participants.iter_mut().find(|p| {
            p.get("speaker_label").is_none()
                && p.get("display_name")
                    .and_then(Value::as_str)
                    .is_some_and(|name| tidy(name).to_lowercase() == speaker.to_lowercase())
        });
        match same_name {
            Some(participant) => participant["speaker_label"] = json!(speaker),
            // A generic label (`S1`, `SPEAKER_01`) names nobody: its segments stay unmapped.
            None if speaker.chars().any(|ch| ch.is_ascii_digit()) => {}
            None => participants.push(json!({"display_name": speaker, "speaker_label": speaker})),
        }
    }
    let segments: Vec<Value> = transcript
        .segments
        .iter()
        .enumerate()
        .map(|(index, segment)| {
            let mut value = json!({
                "id": format!("s{}", index + 1),
                "start_ms": segment.start_ms,
                "end_ms": segment.end_ms,
                "text": segment.text,
            });
            if let Some(speaker) = &segment.speaker {
                value["speaker"] = json!(speaker);
            }
            value
        })
        .collect();
    Ok(json!({"meeting": meeting, "participants": participants, "segments": segments}))
}

/// `Name <email>`, `<email>` or a bare name.
fn participant_from_flag(flag: &str) -> Result<Value, String> {
    let flag = flag.trim();
    if let Some((name, rest)) = flag.split_once('<') {
        let email = rest
            .strip_suffix('>')
            .map(str::trim)
            .filter(|email| email.contains('@'))
            .ok_or_else(|| format!("--participant '{}': expected \"Name <email>\"", clip(flag)))?;
        let name = tidy(name);
        let mut value = json!({"email": email});
        if !name.is_empty() {
            value["display_name"] = json!(name);
        } else {
            value["display_name"] = json!(email.split('@').next().unwrap_or(email));
        }
        return Ok(value);
    }
    if flag.is_empty() {
        return Err("--participant must not be empty".into());
    }
    if flag.contains('@') && !flag.contains(' ') {
        return Ok(json!({"display_name": flag.split('@').next().unwrap_or(flag), "email": flag}));
    }
    Ok(json!({"display_name": tidy(flag)}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_both_decimal_marks_and_short_forms() {
        assert_eq!(parse_timestamp("00:01:02.345"), Some(62_345));
        assert_eq!(parse_timestamp("01:02,5"), Some(62_500));
        assert_eq!(parse_timestamp("1:00:00.000"), Some(3_600_000));
        assert_eq!(parse_timestamp("00:61:00.000"), None);
        assert_eq!(parse_timestamp("aa:bb"), None);
        assert_eq!(parse_timestamp("12"), None);
    }

    #[test]
    fn entities_and_tags_are_cleaned() {
        assert_eq!(
            decode_entities("&gt;&gt; A &amp; B &#39;x&#x27; &bogus; &"),
            ">> A & B 'x' &bogus; &"
        );
        assert_eq!(strip_tags("<v Bob>Hi <i>there</i></v>"), "Hi there");
        assert_eq!(strip_tags("a < b"), "a < b");
    }

    #[test]
    fn speaker_prefixes_must_look_like_names() {
        assert_eq!(
            split_speaker_prefix("Alice Chen: hello"),
            Some(("Alice Chen".to_string(), "hello"))
        );
        assert_eq!(split_speaker_prefix("Note: hello"), None);
        assert_eq!(
            split_speaker_prefix("SPEAKER_01: hi"),
            Some(("SPEAKER_01".to_string(), "hi"))
        );
        assert_eq!(split_speaker_prefix("THE TIME IS 9:31 A.M."), None);
        assert_eq!(split_speaker_prefix("see https://x.io"), None);
    }

    #[test]
    fn participants_from_flags() {
        assert_eq!(
            participant_from_flag("Alice Chen <alice@acme.com>").unwrap(),
            json!({"email": "alice@acme.com", "display_name": "Alice Chen"})
        );
        assert!(participant_from_flag("Alice <nope>").is_err());
        assert_eq!(
            participant_from_flag("Bob").unwrap(),
            json!({"display_name": "Bob"})
        );
    }
}
