//! Sentences and words of a segment, with contractions expanded for matching while every word keeps the
//! span of the text it came from (quotes and names are always cut from the original).

/// One word for matching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// Lowercase, apostrophes straightened, contraction parts expanded (`I'm` gives `i`, `am`).
    pub(crate) norm: String,
    /// Byte span in the sentence of the original token this word comes from.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The original token starts with an uppercase letter.
    pub(crate) capitalized: bool,
    /// A punctuation token (`,`, `.`, `?`, `:`, ...).
    pub(crate) punct: bool,
}

/// Splits text into sentences: after `.`, `?`, `!` or `;` followed by white space. Returns byte spans,
/// trimmed, so that each is a verbatim slice of the text.
pub(crate) fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (index, (offset, ch)) in chars.iter().enumerate() {
        let next_is_space = chars
            .get(index + 1)
            .is_none_or(|(_, next)| next.is_whitespace());
        if matches!(ch, '.' | '?' | '!' | ';') && next_is_space {
            let end = offset + ch.len_utf8();
            push_trimmed(text, start, end, &mut spans);
            start = end;
        }
    }
    push_trimmed(text, start, text.len(), &mut spans);
    spans
}

fn push_trimmed(text: &str, start: usize, end: usize, spans: &mut Vec<(usize, usize)>) {
    let slice = &text[start..end];
    let leading = slice.len() - slice.trim_start().len();
    let trimmed = slice.trim();
    if !trimmed.is_empty() {
        spans.push((start + leading, start + leading + trimmed.len()));
    }
}

const PUNCTUATION: &[char] = &[
    ',', '.', '?', '!', ':', ';', '"', '(', ')', '[', ']', '“', '”', '…',
];

/// Words of one sentence.
pub(crate) fn words(sentence: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in sentence.split_whitespace() {
        let start = sentence[offset..].find(raw).map_or(offset, |p| p + offset);
        offset = start + raw.len();
        // Peel punctuation off both ends.
        let core_start = raw.len() - raw.trim_start_matches(PUNCTUATION).len();
        let trimmed_end = raw.trim_end_matches(PUNCTUATION);
        let core_end = trimmed_end.len().max(core_start);
        for ch in raw[..core_start].chars() {
            out.push(punct(ch, start));
        }
        let core = &raw[core_start..core_end];
        if !core.is_empty() {
            let capitalized = core.chars().next().is_some_and(char::is_uppercase);
            for norm in expand(core) {
                out.push(Word {
                    norm,
                    start: start + core_start,
                    end: start + core_end,
                    capitalized,
                    punct: false,
                });
            }
        }
        for ch in raw[core_end..].chars() {
            out.push(punct(ch, start + core_end));
        }
    }
    out
}

fn punct(ch: char, at: usize) -> Word {
    Word {
        norm: ch.to_string(),
        start: at,
        end: at + ch.len_utf8(),
        capitalized: false,
        punct: true,
    }
}

/// `I'm` → `i am`, `we'll` → `we will`, `don't` → `do not`, `won't` → `will not`, `Bob's` stays one word.
fn expand(core: &str) -> Vec<String> {
    let lower = core.to_lowercase().replace(['’', '‘'], "'");
    let special = match lower.as_str() {
        "won't" => Some(vec!["will", "not"]),
        "can't" | "cannot" => Some(vec!["can", "not"]),
        "i'm" => Some(vec!["i", "am"]),
        "let's" => Some(vec!["let", "us"]),
        _ => None,
    };
    if let Some(parts) = special {
        return parts.into_iter().map(str::to_string).collect();
    }
    for (suffix, expansion) in [
        ("n't", "not"),
        ("'ll", "will"),
        ("'re", "are"),
        ("'ve", "have"),
        ("'d", "would"),
        ("'m", "am"),
    ] {
        if let Some(stem) = lower.strip_suffix(suffix) {
            if !stem.is_empty() {
                return vec![stem.to_string(), expansion.to_string()];
            }
        }
    }
    // `he's`, `she's`, `it's`, `that's`: a verb; `Bob's`: a possessive, kept whole.
    if let Some(stem) = lower.strip_suffix("'s") {
        if matches!(
            stem,
            "he" | "she" | "it" | "that" | "there" | "what" | "who"
        ) {
            return vec![stem.to_string(), "is".to_string()];
        }
    }
    vec![lower]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_verbatim_slices() {
        let text = "Hi. I'm now Principal Researcher at Acme!  Is it 2.5?ok";
        let spans: Vec<&str> = sentences(text).iter().map(|(s, e)| &text[*s..*e]).collect();
        assert_eq!(
            spans,
            vec![
                "Hi.",
                "I'm now Principal Researcher at Acme!",
                "Is it 2.5?ok"
            ]
        );
    }

    #[test]
    fn contractions_expand_and_keep_spans() {
        let sentence = "I'm leading Atlas, aren't I?";
        let w = words(sentence);
        let norms: Vec<&str> = w.iter().map(|w| w.norm.as_str()).collect();
        assert_eq!(
            norms,
            vec!["i", "am", "leading", "atlas", ",", "are", "not", "i", "?"]
        );
        assert_eq!(&sentence[w[3].start..w[3].end], "Atlas");
        assert!(w[3].capitalized);
    }
}
