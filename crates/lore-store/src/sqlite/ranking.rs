//! bm25 as FTS5's `bm25(search_fts, 0.0, 1.0)` gives it, computed outside FTS5 for the candidate
//! window of a search.
//!
//! FTS5's own bm25 asks, for every candidate, for the phrases' instances (a walk over the row's
//! position lists) and the row's size (a seek in `search_fts_docsize`), and once per query counts each
//! phrase's documents with a pass over its matches through the expression machinery. Here the
//! candidates' text, which the window reads from `search_docs` anyway, is tokenized as the index's
//! tokenizer (`porter unicode61 remove_diacritics 2`) tokenized it, and a phrase's document count
//! is one read of an `fts5vocab` table (or, for a phrase of several tokens, a count of its matches).
//! The formula and the order of its floating-point operations are FTS5's (`fts5Bm25Function`), so
//! the rank is the same number.
//!
//! The tokenizer here covers ASCII text and the separators of Unicode's general punctuation block;
//! a candidate with any other character is ranked by FTS5 itself (`rank_with_fts5` in the caller),
//! and a query with one, or with a prefix term, takes FTS5's path whole. Tests hold the tokenizer,
//! the stemmer and the ranks equal to SQLite's.

use lore_core::search::{SearchQuery, SearchTerm};

/// FTS5's bm25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Tokens longer than this (bytes) are not stemmed (`FTS5_PORTER_MAX_TOKEN`).
const PORTER_MAX_TOKEN: usize = 64;

/// Whether `c` separates tokens for the index's tokenizer and this module knows it: every
/// non-ASCII character outside these makes the text one this module does not tokenize.
fn is_known_separator(c: char) -> bool {
    // No-break space; the general punctuation block (spaces, dashes, quotes, ellipsis, invisible
    // format characters): none is a letter, a number or a private-use character. U+2065 to U+2069
    // were unassigned in the Unicode version of SQLite's tables, which makes them token characters.
    c == '\u{a0}'
        || ('\u{2000}'..='\u{2064}').contains(&c)
        || ('\u{206a}'..='\u{206f}').contains(&c)
}

/// Calls `token` with each token of `text` as it is written (ASCII letters and digits; FTS5
/// lowercases them), before stemming; `false` (after some calls, maybe) when the text has a
/// character this module cannot tokenize as the index does.
pub(crate) fn for_each_token(text: &str, mut token: impl FnMut(&[u8])) -> bool {
    let bytes = text.as_bytes();
    let mut start = None;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_alphanumeric() {
            start.get_or_insert(at);
            at += 1;
            continue;
        }
        if let Some(first) = start.take() {
            token(&bytes[first..at]);
        }
        if byte < 0x80 {
            at += 1;
            continue;
        }
        match text[at..].chars().next() {
            Some(c) if is_known_separator(c) => at += c.len_utf8(),
            _ => return false,
        }
    }
    if let Some(first) = start {
        token(&bytes[first..]);
    }
    true
}

/// The stem of a token as written: lowercased into `lower`, stemmed into `word`.
fn stem_written(token: &[u8], lower: &mut Vec<u8>, word: &mut Vec<u8>) {
    lower.clear();
    lower.extend(token.iter().map(u8::to_ascii_lowercase));
    stem(lower, word);
}

fn is_vowel(c: u8, y_is_vowel: bool) -> bool {
    matches!(c, b'a' | b'e' | b'i' | b'o' | b'u') || (y_is_vowel && c == b'y')
}

/// After a vowel then a consonant from the start of `stem`, the index just past that consonant;
/// 0 when there is no such pair (FTS5's `fts5PorterGobbleVC`).
fn gobble_vc(stem: &[u8], previous_consonant: bool) -> usize {
    let mut consonant = previous_consonant;
    let mut i = 0;
    while i < stem.len() {
        consonant = !is_vowel(stem[i], consonant);
        if !consonant {
            break;
        }
        i += 1;
    }
    i += 1;
    while i < stem.len() {
        consonant = !is_vowel(stem[i], consonant);
        if consonant {
            return i + 1;
        }
        i += 1;
    }
    0
}

/// m > 0.
fn m_gt0(stem: &[u8]) -> bool {
    gobble_vc(stem, false) != 0
}

/// m > 1.
fn m_gt1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n != 0 && gobble_vc(&stem[n..], true) != 0
}

/// m = 1.
fn m_eq1(stem: &[u8]) -> bool {
    let n = gobble_vc(stem, false);
    n != 0 && gobble_vc(&stem[n..], true) == 0
}

/// *o: the stem ends consonant, vowel, consonant, and the last is not w, x or y.
fn o_star(stem: &[u8]) -> bool {
    let Some(&last) = stem.last() else {
        return false;
    };
    if matches!(last, b'w' | b'x' | b'y') {
        return false;
    }
    let mut mask = 0u32;
    let mut consonant = false;
    for &c in stem {
        consonant = !is_vowel(c, consonant);
        mask = (mask << 1) | u32::from(consonant);
    }
    mask & 7 == 5
}

/// m > 1 and the stem ends in s or t.
fn m_gt1_s_or_t(stem: &[u8]) -> bool {
    matches!(stem.last(), Some(b's' | b't')) && m_gt1(stem)
}

/// *v*: the stem holds a vowel (y counts after the first letter).
fn has_vowel(stem: &[u8]) -> bool {
    stem.iter().enumerate().any(|(i, &c)| is_vowel(c, i > 0))
}

type Condition = fn(&[u8]) -> bool;

/// A step's rules, tried in order: the first whose suffix ends the word (leaving a stem of at least
/// one letter) is the step's only candidate, applied when its condition holds. Whether it was.
fn apply_step(word: &mut Vec<u8>, rules: &[(&[u8], &[u8], Condition)]) -> bool {
    for &(suffix, output, condition) in rules {
        if word.len() > suffix.len() && word.ends_with(suffix) {
            let stem = word.len() - suffix.len();
            if !condition(&word[..stem]) {
                return false;
            }
            word.truncate(stem);
            word.extend_from_slice(output);
            return true;
        }
    }
    false
}

fn always(_: &[u8]) -> bool {
    true
}

const STEP2: &[(&[u8], &[u8], Condition)] = &[
    (b"ational", b"ate", m_gt0),
    (b"tional", b"tion", m_gt0),
    (b"enci", b"ence", m_gt0),
    (b"anci", b"ance", m_gt0),
    (b"izer", b"ize", m_gt0),
    (b"logi", b"log", m_gt0),
    (b"bli", b"ble", m_gt0),
    (b"alli", b"al", m_gt0),
    (b"entli", b"ent", m_gt0),
    (b"eli", b"e", m_gt0),
    (b"ousli", b"ous", m_gt0),
    (b"ization", b"ize", m_gt0),
    (b"ation", b"ate", m_gt0),
    (b"ator", b"ate", m_gt0),
    (b"alism", b"al", m_gt0),
    (b"iveness", b"ive", m_gt0),
    (b"fulness", b"ful", m_gt0),
    (b"ousness", b"ous", m_gt0),
    (b"aliti", b"al", m_gt0),
    (b"iviti", b"ive", m_gt0),
    (b"biliti", b"ble", m_gt0),
];

const STEP3: &[(&[u8], &[u8], Condition)] = &[
    (b"ical", b"ic", m_gt0),
    (b"ness", b"", m_gt0),
    (b"icate", b"ic", m_gt0),
    (b"iciti", b"ic", m_gt0),
    (b"ful", b"", m_gt0),
    (b"ative", b"", m_gt0),
    (b"alize", b"al", m_gt0),
];

const STEP4: &[(&[u8], &[u8], Condition)] = &[
    (b"al", b"", m_gt1),
    (b"ance", b"", m_gt1),
    (b"ence", b"", m_gt1),
    (b"er", b"", m_gt1),
    (b"ic", b"", m_gt1),
    (b"able", b"", m_gt1),
    (b"ible", b"", m_gt1),
    (b"ant", b"", m_gt1),
    (b"ement", b"", m_gt1),
    (b"ment", b"", m_gt1),
    (b"ent", b"", m_gt1),
    (b"ion", b"", m_gt1_s_or_t),
    (b"ou", b"", m_gt1),
    (b"ism", b"", m_gt1),
    (b"ate", b"", m_gt1),
    (b"iti", b"", m_gt1),
    (b"ous", b"", m_gt1),
    (b"ive", b"", m_gt1),
    (b"ize", b"", m_gt1),
];

const STEP1B2: &[(&[u8], &[u8], Condition)] = &[
    (b"at", b"ate", always),
    (b"bl", b"ble", always),
    (b"iz", b"ize", always),
];

/// The porter stem of a lowercased token, as FTS5's `porter` tokenizer gives it (`fts5PorterCb`).
/// The first letter never changes, which `Phrases` relies on.
pub(crate) fn stem(token: &[u8], word: &mut Vec<u8>) {
    word.clear();
    word.extend_from_slice(token);
    if token.len() < 3 || token.len() > PORTER_MAX_TOKEN {
        return;
    }
    // Step 1a.
    let n = word.len();
    if word[n - 1] == b's' {
        if word[n - 2] == b'e' {
            if (n > 4 && word[n - 4] == b's' && word[n - 3] == b's')
                || (n > 3 && word[n - 3] == b'i')
            {
                word.truncate(n - 2);
            } else {
                word.truncate(n - 1);
            }
        } else if word[n - 2] != b's' {
            word.truncate(n - 1);
        }
    }
    // Step 1b.
    let removed = if word.len() > 3 && word.ends_with(b"eed") {
        let stem = word.len() - 3;
        if m_gt0(&word[..stem]) {
            word.truncate(stem + 2);
        }
        false
    } else if word.len() > 2 && word.ends_with(b"ed") {
        let stem = word.len() - 2;
        let removed = has_vowel(&word[..stem]);
        if removed {
            word.truncate(stem);
        }
        removed
    } else if word.len() > 3 && word.ends_with(b"ing") {
        let stem = word.len() - 3;
        let removed = has_vowel(&word[..stem]);
        if removed {
            word.truncate(stem);
        }
        removed
    } else {
        false
    };
    if removed && !apply_step(word, STEP1B2) {
        {
            let n = word.len();
            let c = word[n - 1];
            if !is_vowel(c, false) && !matches!(c, b'l' | b's' | b'z') && n >= 2 && c == word[n - 2]
            {
                word.truncate(n - 1);
            } else if m_eq1(word) && o_star(word) {
                word.push(b'e');
            }
        }
    }
    // Step 1c.
    let n = word.len();
    if word[n - 1] == b'y' && has_vowel(&word[..n - 1]) {
        word[n - 1] = b'i';
    }
    apply_step(word, STEP2);
    apply_step(word, STEP3);
    apply_step(word, STEP4);
    // Step 5a.
    let n = word.len();
    if word[n - 1] == b'e' {
        let stem = &word[..n - 1];
        if m_gt1(stem) || (m_eq1(stem) && !o_star(stem)) {
            word.truncate(n - 1);
        }
    }
    // Step 5b.
    let n = word.len();
    if n > 1 && word[n - 1] == b'l' && word[n - 2] == b'l' && m_gt1(&word[..n - 1]) {
        word.truncate(n - 1);
    }
}

/// The query's phrases as bm25 counts them: FTS5 numbers the phrases of the expression in order,
/// and an excluded phrase never occurs in a matching row (it adds nothing), so only the required
/// groups' terms are kept, each as its stemmed tokens.
#[derive(Debug)]
pub(crate) struct Phrases {
    /// The phrases' distinct stems, and each phrase as indexes into them.
    stems: Vec<Vec<u8>>,
    shapes: Vec<Vec<u32>>,
    /// First letters of the stems: a document token starting otherwise is none of them, so it is
    /// not stemmed (stemming never changes a token's first letter).
    first_letters: [bool; 256],
    /// Buffers reused from document to document.
    scratch: std::cell::RefCell<Scratch>,
}

#[derive(Debug, Default)]
struct Scratch {
    lower: Vec<u8>,
    word: Vec<u8>,
    /// The body's tokens as indexes into `stems` (`NO_STEM` for a token that is none of them).
    tokens: Vec<u32>,
}

const NO_STEM: u32 = u32::MAX;

impl Phrases {
    /// `None` when the query has a prefix term, or a term this module cannot tokenize or that has
    /// no token: FTS5 ranks it.
    pub(crate) fn of(query: &SearchQuery) -> Option<Phrases> {
        let mut phrases = Vec::new();
        let (mut lower, mut word) = (Vec::new(), Vec::new());
        for term in query.required.iter().flatten() {
            let text = match term {
                SearchTerm::Word { prefix: true, .. } => return None,
                SearchTerm::Word { text, .. } | SearchTerm::Phrase(text) => text,
            };
            let mut tokens = Vec::new();
            let known = for_each_token(text, |token| {
                stem_written(token, &mut lower, &mut word);
                tokens.push(word.clone());
            });
            if !known || tokens.is_empty() {
                return None;
            }
            phrases.push(tokens);
        }
        let mut stems: Vec<Vec<u8>> = Vec::new();
        let mut first_letters = [false; 256];
        let shapes = phrases
            .iter()
            .map(|tokens| {
                tokens
                    .iter()
                    .map(|token| {
                        first_letters[usize::from(token[0])] = true;
                        let index =
                            stems
                                .iter()
                                .position(|stem| stem == token)
                                .unwrap_or_else(|| {
                                    stems.push(token.clone());
                                    stems.len() - 1
                                });
                        index as u32
                    })
                    .collect()
            })
            .collect();
        Some(Phrases {
            stems,
            shapes,
            first_letters,
            scratch: Default::default(),
        })
    }

    /// How many phrases the query has.
    pub(crate) fn len(&self) -> usize {
        self.shapes.len()
    }

    /// Each phrase's only stem, `None` for a phrase of several tokens.
    pub(crate) fn single_stems(&self) -> impl Iterator<Item = Option<&[u8]>> {
        self.shapes.iter().map(|shape| match shape.as_slice() {
            [one] => Some(self.stems[*one as usize].as_slice()),
            _ => None,
        })
    }

    /// The document's size in tokens (scope and body) and each phrase's occurrences in its body;
    /// `None` when its text has a character this module cannot tokenize.
    pub(crate) fn count(&self, scope: &str, body: &str, counts: &mut Vec<f64>) -> Option<f64> {
        let mut size = 0usize;
        if !for_each_token(scope, |_| size += 1) {
            return None;
        }
        let mut scratch = self.scratch.borrow_mut();
        let Scratch {
            lower,
            word,
            tokens,
        } = &mut *scratch;
        tokens.clear();
        let known = for_each_token(body, |token| {
            let mut found = NO_STEM;
            if self.first_letters[usize::from(token[0].to_ascii_lowercase())] {
                stem_written(token, lower, word);
                if let Some(index) = self.stems.iter().position(|stem| stem == word) {
                    found = index as u32;
                }
            }
            tokens.push(found);
        });
        if !known {
            return None;
        }
        size += tokens.len();
        counts.clear();
        for shape in &self.shapes {
            let hits = match shape.as_slice() {
                [one] => tokens.iter().filter(|token| *token == one).count(),
                _ => tokens
                    .windows(shape.len())
                    .filter(|window| *window == shape.as_slice())
                    .count(),
            };
            counts.push(hits as f64);
        }
        Some(size as f64)
    }
}

/// How the documents of a write change each stem's number of documents (`search_terms`): each
/// text added or removed counts once for every distinct stem it has. A token is stemmed once per
/// writing, whatever the number of its occurrences.
#[derive(Debug, Default)]
pub(crate) struct TermCounts {
    /// Tokens as written, and stems, to their stem's index.
    tokens: std::collections::HashMap<Vec<u8>, u32>,
    stems: std::collections::HashMap<Vec<u8>, u32>,
    /// Per stem index: the stem and the change of its count.
    changes: Vec<(Vec<u8>, i64)>,
    document: Vec<u32>,
    lower: Vec<u8>,
    word: Vec<u8>,
}

impl TermCounts {
    /// Counts `text`'s distinct stems `sign` times (1 added, -1 removed); `false`, counting nothing,
    /// when the text has a character this module cannot tokenize.
    pub(crate) fn add(&mut self, text: &str, sign: i64) -> bool {
        let TermCounts {
            tokens,
            stems,
            changes,
            document,
            lower,
            word,
        } = self;
        document.clear();
        let known = for_each_token(text, |token| {
            let index = match tokens.get(token) {
                Some(&index) => index,
                None => {
                    stem_written(token, lower, word);
                    let index = match stems.get(word.as_slice()) {
                        Some(&index) => index,
                        None => {
                            let index = changes.len() as u32;
                            changes.push((word.clone(), 0));
                            stems.insert(word.clone(), index);
                            index
                        }
                    };
                    tokens.insert(token.to_vec(), index);
                    index
                }
            };
            document.push(index);
        });
        if !known {
            return false;
        }
        document.sort_unstable();
        document.dedup();
        for &index in document.iter() {
            changes[index as usize].1 += sign;
        }
        true
    }

    /// Counts `documents` texts (`sign` as in `add`) as holding `stem`: FTS5's count for text this
    /// module cannot tokenize.
    pub(crate) fn add_counted(&mut self, stem: &str, documents: i64, sign: i64) {
        let index = match self.stems.get(stem.as_bytes()) {
            Some(&index) => index,
            None => {
                let index = self.changes.len() as u32;
                self.changes.push((stem.as_bytes().to_vec(), 0));
                self.stems.insert(stem.as_bytes().to_vec(), index);
                index
            }
        };
        self.changes[index as usize].1 += sign * documents;
    }

    /// Each stem counted and the change of its count (zero when the texts' changes cancel).
    pub(crate) fn changes(self) -> impl Iterator<Item = (Vec<u8>, i64)> {
        self.changes.into_iter()
    }
}

/// The index-wide figures bm25 needs: rows, their average size in tokens, and each phrase's IDF.
#[derive(Debug)]
pub(crate) struct Statistics {
    pub(crate) average_size: f64,
    pub(crate) idf: Vec<f64>,
}

impl Statistics {
    /// From the index's totals (rows, tokens) and each phrase's number of matching rows, as
    /// `fts5Bm25GetData` computes them.
    pub(crate) fn new(rows: i64, tokens: i64, matching: &[i64]) -> Statistics {
        let idf = matching
            .iter()
            .map(|&hits| {
                let idf = ((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5);
                let idf = idf.ln();
                if idf <= 0.0 {
                    1e-6
                } else {
                    idf
                }
            })
            .collect();
        Statistics {
            average_size: tokens as f64 / rows as f64,
            idf,
        }
    }

    /// The rank (lower is better) of a row of `size` tokens with these phrase frequencies.
    pub(crate) fn rank(&self, size: f64, frequencies: &[f64]) -> f64 {
        let mut score = 0.0;
        for (idf, &frequency) in self.idf.iter().zip(frequencies) {
            score += idf
                * ((frequency * (K1 + 1.0))
                    / (frequency + K1 * (1.0 - B + B * size / self.average_size)));
        }
        -score
    }
}

/// The index's totals from its averages record (`search_fts_data` row 1): the rows, then the tokens
/// of each column, as SQLite varints.
pub(crate) fn totals(record: &[u8]) -> Option<(i64, i64)> {
    let mut at = 0;
    let rows = varint(record, &mut at)?;
    let mut tokens = 0u64;
    while at < record.len() {
        tokens = tokens.wrapping_add(varint(record, &mut at)?);
    }
    let (rows, tokens) = (i64::try_from(rows).ok()?, i64::try_from(tokens).ok()?);
    (rows > 0).then_some((rows, tokens))
}

/// One SQLite varint: big-endian groups of seven bits, the ninth byte whole.
fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for index in 0..9 {
        let byte = *bytes.get(*at)?;
        *at += 1;
        if index == 8 {
            return Some((value << 8) | u64::from(byte));
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Option<Vec<String>> {
        let mut found = Vec::new();
        for_each_token(text, |token| {
            found.push(String::from_utf8(token.to_ascii_lowercase()).expect("ascii"))
        })
        .then_some(found)
    }

    #[test]
    fn ascii_text_splits_on_everything_but_letters_and_digits() {
        assert_eq!(
            tokens("Q3 budget—it’s FINAL, e-mail_me!").unwrap(),
            ["q3", "budget", "it", "s", "final", "e", "mail", "me"]
        );
        assert_eq!(tokens("café"), None);
        assert_eq!(tokens(""), Some(vec![]));
    }

    #[test]
    fn varints_decode_as_sqlite_writes_them() {
        let mut at = 0;
        assert_eq!(varint(&[0x81, 0x00], &mut at), Some(128));
        assert_eq!(totals(&[0x04, 0x08, 0x0b]), Some((4, 19)));
        assert_eq!(totals(&[0x00]), None);
        assert_eq!(totals(&[0x81]), None);
        let mut at = 0;
        assert_eq!(varint(&[0xff; 9], &mut at), Some(u64::MAX));
    }

    /// Words of the AMI meeting transcripts in `../shared/data` (not part of the repository: none
    /// when the folder is absent).
    fn transcript_words() -> Vec<String> {
        let mut words = std::collections::BTreeSet::new();
        for line in crate::conformance::transcript_lines(usize::MAX) {
            for word in line.split(|c: char| !c.is_ascii_alphanumeric()) {
                if !word.is_empty() {
                    words.insert(word.to_string());
                }
            }
        }
        words.into_iter().collect()
    }

    /// Stems and suffixes that reach every rule of every step (and the words they make).
    fn generated_words() -> Vec<String> {
        let stems = [
            "", "a", "e", "y", "by", "ay", "sy", "tr", "relat", "hop", "fil", "agre", "sky",
            "happ", "conflat", "troubl", "siz", "fall", "hiss", "fizz", "fail", "fil", "cand",
            "sens", "formal", "electr", "hope", "adopt", "irrit", "depend", "adjust", "bowdler",
            "effect", "activ", "ang", "gener", "oscill", "roll", "control", "plot", "motor", "cry",
            "ski", "feed", "bleed", "sing", "bed", "xyz", "queue", "aing", "eed", "wy", "ox",
            "tap",
        ];
        let suffixes = [
            "", "s", "es", "ss", "sses", "ies", "ed", "eed", "ing", "ings", "y", "ational",
            "tional", "enci", "anci", "izer", "logi", "bli", "alli", "entli", "eli", "ousli",
            "ization", "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti",
            "biliti", "ical", "ness", "icate", "iciti", "ful", "ative", "alize", "al", "ance",
            "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "sion",
            "tion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "le", "ll", "at", "bl",
            "iz", "ated", "bled", "ized", "ting", "pping", "lling", "ssing", "zzing", "ying",
            "ied", "eeds", "ements",
        ];
        let mut words = Vec::new();
        for stem in stems {
            for suffix in suffixes {
                for tail in ["", "s", "ed", "ing"] {
                    let word = format!("{stem}{suffix}{tail}");
                    if !word.is_empty() {
                        words.push(word);
                    }
                }
            }
        }
        words.push("x".repeat(64) + "ing");
        words.push("y".repeat(65) + "ies");
        words
    }

    /// SQLite's tokens (term and position) for `text` with `tokenizer`, in order.
    fn sqlite_tokens(tokenizer: &str, text: &str) -> Vec<String> {
        let connection = rusqlite::Connection::open_in_memory().unwrap();
        connection
            .execute_batch(&format!(
                "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenizer}');
                 CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);"
            ))
            .unwrap();
        connection
            .execute("INSERT INTO t (rowid, x) VALUES (1, ?1)", [text])
            .unwrap();
        let mut statement = connection
            .prepare("SELECT term FROM v WHERE doc = 1 ORDER BY offset")
            .unwrap();
        let rows = statement.query_map([], |row| row.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    }

    fn stems_of(text: &str) -> Vec<String> {
        let mut stems = Vec::new();
        let (mut lower, mut word) = (Vec::new(), Vec::new());
        assert!(for_each_token(text, |token| {
            stem_written(token, &mut lower, &mut word);
            stems.push(String::from_utf8(word.clone()).unwrap());
        }));
        stems
    }

    /// The stemmer gives FTS5's porter stems for every word of the transcripts and for words built
    /// to reach every rule.
    #[test]
    fn the_stemmer_is_the_index_tokenizers() {
        let mut words = generated_words();
        words.extend(transcript_words());
        let text = words.join(" ");
        let expected = sqlite_tokens(crate::SEARCH_TOKENIZER, &text);
        let stems = stems_of(&text);
        assert_eq!(stems.len(), expected.len());
        let wrong: Vec<String> = words
            .iter()
            .zip(stems.iter().zip(&expected))
            .filter(|(_, (ours, theirs))| ours != theirs)
            .map(|(word, (ours, theirs))| format!("{word}: {ours} vs {theirs}"))
            .take(20)
            .collect();
        assert!(
            wrong.is_empty(),
            "{} words of {}: {wrong:?}",
            wrong.len(),
            words.len()
        );
    }

    /// Every ASCII character and every known separator splits (or joins) tokens as the index's
    /// tokenizer does; a character outside them is reported, not guessed.
    #[test]
    fn tokens_split_where_the_index_tokenizers_split() {
        let mut text = String::new();
        let separators = ('\u{a0}'..='\u{2100}').filter(|&c| is_known_separator(c));
        for c in (0x20u8..0x7f).map(char::from).chain(separators) {
            text.push('w');
            text.push(c);
            text.push('z');
            text.push(' ');
        }
        let expected = sqlite_tokens("unicode61 remove_diacritics 2", &text);
        assert_eq!(tokens(&text).unwrap(), expected);
        for unknown in ["é", "ß", "²", "\u{301}", "中", "\u{e000}", "€", "\u{2066}"] {
            assert_eq!(tokens(&format!("a{unknown}b")), None, "{unknown}");
        }
    }
}
