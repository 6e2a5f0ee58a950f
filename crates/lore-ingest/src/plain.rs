//! Plain-text transcripts: `Speaker: text` lines, each optionally stamped `[hh:mm:ss]` or `[mm:ss]`.
//! A line without a speaker continues the previous turn; without stamps, turns keep the last known time.

use crate::transcript::{
    clip, parse_timestamp, split_speaker_prefix, tidy, Diagnostic, Transcript, TranscriptError,
    TranscriptFormat, TranscriptSegment,
};

pub(crate) fn parse(text: &str) -> Result<Transcript, TranscriptError> {
    let mut segments: Vec<TranscriptSegment> = Vec::new();
    let mut diagnostics = Vec::new();
    let mut last_ms = 0;
    // Whether the previous non-blank line may be continued by an unlabelled line.
    let mut can_continue = false;
    for (index, raw) in text.split('\n').enumerate() {
        let line_number = index + 1;
        let mut line = raw.trim();
        if line.is_empty() {
            can_continue = false;
            continue;
        }
        let mut stamp = None;
        if let Some(rest) = line.strip_prefix('[') {
            if let Some((inside, after)) = rest.split_once(']') {
                match parse_timestamp(inside) {
                    Some(ms) => {
                        stamp = Some(ms);
                        line = after.trim_start();
                    }
                    None => diagnostics.push(Diagnostic {
                        line: line_number,
                        message: format!("'[{}]' is not a time stamp; kept as text", clip(inside)),
                    }),
                }
            }
        }
        if let Some(ms) = stamp {
            if ms < last_ms {
                diagnostics.push(Diagnostic {
                    line: line_number,
                    message: "time stamp goes backwards; kept".into(),
                });
            }
            last_ms = ms;
        }
        let (speaker, words) = match split_speaker_prefix(line) {
            Some((name, rest)) => (Some(name), rest),
            None => (None, line),
        };
        let words = tidy(words);
        if words.is_empty() {
            continue;
        }
        if speaker.is_none() && stamp.is_none() && can_continue {
            if let Some(previous) = segments.last_mut() {
                previous.text.push(' ');
                previous.text.push_str(&words);
                continue;
            }
        }
        segments.push(TranscriptSegment {
            start_ms: last_ms,
            end_ms: last_ms,
            speaker,
            text: words,
        });
        can_continue = true;
    }
    // A turn ends where the next one starts.
    for index in 1..segments.len() {
        let next_start = segments[index].start_ms;
        let previous = &mut segments[index - 1];
        if next_start > previous.start_ms {
            previous.end_ms = next_start;
        }
    }
    if segments.is_empty() {
        return Err(TranscriptError {
            format: "plain text",
            line: 0,
            message: "the transcript is empty".into(),
        });
    }
    Ok(Transcript {
        format: TranscriptFormat::Plain,
        segments,
        diagnostics,
    })
}
