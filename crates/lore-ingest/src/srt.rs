//! SubRip (SRT): numbered blocks of a `00:00:01,000 --> 00:00:04,000` timing line and text lines, with
//! `<i>`/`<font>` markup and an optional `Speaker: text` first line.

use crate::transcript::{
    blocks, clip, decode_entities, parse_timing, split_speaker_prefix, strip_tags, tidy,
    Diagnostic, Transcript, TranscriptError, TranscriptFormat, TranscriptSegment,
};

pub(crate) fn parse(text: &str) -> Result<Transcript, TranscriptError> {
    let mut segments = Vec::new();
    let mut diagnostics = Vec::new();
    let mut n_blocks = 0;
    for (line_number, lines) in blocks(text) {
        // The sequence number is optional in practice; the timing line is not.
        let Some(timing_offset) = lines.iter().take(2).position(|line| line.contains("-->")) else {
            diagnostics.push(Diagnostic {
                line: line_number,
                message: format!("block without a timing line skipped: '{}'", clip(lines[0])),
            });
            continue;
        };
        n_blocks += 1;
        let timing_line = lines[timing_offset];
        let (start_ms, mut end_ms) = match parse_timing(timing_line) {
            Some(Ok(times)) => times,
            Some(Err(message)) => {
                diagnostics.push(Diagnostic {
                    line: line_number + timing_offset,
                    message: format!("subtitle skipped: {message}"),
                });
                continue;
            }
            None => continue,
        };
        if end_ms < start_ms {
            diagnostics.push(Diagnostic {
                line: line_number + timing_offset,
                message: "subtitle ends before it starts; end set to its start".into(),
            });
            end_ms = start_ms;
        }
        let joined = lines[timing_offset + 1..]
            .iter()
            .map(|line| decode_entities(&strip_tags(line)))
            .collect::<Vec<_>>()
            .join(" ");
        let mut text = tidy(&joined);
        let mut speaker = None;
        if let Some((name, rest)) = split_speaker_prefix(&text) {
            speaker = Some(name);
            text = rest.to_string();
        }
        if text.is_empty() {
            diagnostics.push(Diagnostic {
                line: line_number,
                message: "empty subtitle skipped".into(),
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
    if n_blocks == 0 {
        return Err(TranscriptError {
            format: "srt",
            line: 0,
            message: "no subtitles found (expected blocks with a 'start --> end' line)".into(),
        });
    }
    Ok(Transcript {
        format: TranscriptFormat::Srt,
        segments,
        diagnostics,
    })
}
