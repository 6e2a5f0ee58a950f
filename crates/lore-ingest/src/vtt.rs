//! WebVTT (W3C) as Zoom, Teams, Google Meet and caption services write it: a `WEBVTT` header, `NOTE`,
//! `STYLE` and `REGION` blocks (skipped), cues with optional identifiers and settings, `<v Name>` voice
//! tags, other markup, HTML entities, and `>>` speaker-change markers (the speaker stays unknown).

use crate::transcript::{
    blocks, clip, decode_entities, parse_timing, split_speaker_prefix, strip_tags, tidy,
    Diagnostic, Transcript, TranscriptError, TranscriptFormat, TranscriptSegment,
};

pub(crate) fn parse(text: &str) -> Result<Transcript, TranscriptError> {
    let error = |line: usize, message: String| TranscriptError {
        format: "vtt",
        line,
        message,
    };
    let first_line = text.split('\n').next().unwrap_or("");
    let header_ok = first_line
        .strip_prefix("WEBVTT")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
    if !header_ok {
        return Err(error(
            1,
            format!(
                "expected the file to start with WEBVTT, found '{}'",
                clip(first_line)
            ),
        ));
    }
    let mut segments = Vec::new();
    let mut diagnostics = Vec::new();
    let mut n_cues = 0;
    for (block_index, (line_number, lines)) in blocks(text).into_iter().enumerate() {
        if block_index == 0 {
            // The header block, with any header metadata lines.
            continue;
        }
        let first = lines[0];
        let keyword = first.split([' ', '\t']).next().unwrap_or("");
        if matches!(keyword, "NOTE" | "STYLE" | "REGION") && !first.contains("-->") {
            continue;
        }
        // An optional cue identifier precedes the timing line.
        let (timing_offset, timing_line) = if first.contains("-->") {
            (0, first)
        } else if lines.len() > 1 && lines[1].contains("-->") {
            (1, lines[1])
        } else {
            diagnostics.push(Diagnostic {
                line: line_number,
                message: format!("block without a timing line skipped: '{}'", clip(first)),
            });
            continue;
        };
        n_cues += 1;
        let (start_ms, mut end_ms) = match parse_timing(timing_line) {
            Some(Ok(times)) => times,
            Some(Err(message)) => {
                diagnostics.push(Diagnostic {
                    line: line_number + timing_offset,
                    message: format!("cue skipped: {message}"),
                });
                continue;
            }
            None => continue,
        };
        if end_ms < start_ms {
            diagnostics.push(Diagnostic {
                line: line_number + timing_offset,
                message: "cue ends before it starts; end set to its start".into(),
            });
            end_ms = start_ms;
        }
        let payload = &lines[timing_offset + 1..];
        let mut speaker = None;
        let mut parts = Vec::new();
        for raw in payload {
            if let Some(name) = voice_name(raw) {
                speaker.get_or_insert(name);
            }
            let cleaned = decode_entities(&strip_tags(raw));
            let cleaned = strip_change_markers(&cleaned);
            if !cleaned.trim().is_empty() {
                parts.push(cleaned.trim().to_string());
            }
        }
        let mut text = tidy(&parts.join(" "));
        if speaker.is_none() {
            if let Some((name, rest)) = split_speaker_prefix(&text) {
                speaker = Some(name);
                text = rest.to_string();
            }
        }
        if text.is_empty() {
            diagnostics.push(Diagnostic {
                line: line_number,
                message: "empty cue skipped".into(),
            });
            continue;
        }
        segments.push(TranscriptSegment {
            start_ms,
            end_ms,
            speaker,
            text,
        });
    }
    if n_cues == 0 {
        return Err(error(0, "no cues found".into()));
    }
    Ok(Transcript {
        format: TranscriptFormat::Vtt,
        segments,
        diagnostics,
    })
}

/// The name in a `<v Name>` or `<v.class Name>` voice tag on this line, if any.
fn voice_name(line: &str) -> Option<String> {
    let start = line.find("<v")?;
    let after = &line[start + 2..];
    if !after.starts_with([' ', '\t', '.']) {
        return None;
    }
    let end = after.find('>')?;
    let inside = &after[..end];
    // Skip classes: `<v.loud Name>`.
    let name = match inside.strip_prefix('.') {
        Some(classes) => classes.split_once([' ', '\t']).map_or("", |(_, name)| name),
        None => inside,
    };
    let name = tidy(&decode_entities(name));
    (!name.is_empty()).then_some(name)
}

/// Removes `>>`/`>>>` speaker-change markers that captions put where a name would go.
fn strip_change_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(position) = rest.find(">>") {
        out.push_str(&rest[..position]);
        rest = rest[position..].trim_start_matches('>');
        out.push(' ');
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voice_names_with_and_without_classes() {
        assert_eq!(voice_name("<v Alice Chen>Hi"), Some("Alice Chen".into()));
        assert_eq!(voice_name("<v.loud Bob>Hi"), Some("Bob".into()));
        assert_eq!(voice_name("<i>Hi</i>"), None);
        assert_eq!(voice_name("<v>Hi"), None);
    }

    #[test]
    fn change_markers_go() {
        assert_eq!(
            tidy(&strip_change_markers(">>> GOOD MORNING >> hi")),
            "GOOD MORNING hi"
        );
    }
}
