//! The user's search syntax, parsed into a backend-neutral query. Backends render it into their own
//! full-text syntax (SQLite: FTS5), so nothing a user types ever reaches the database as syntax.
//!
//! Syntax: words are ANDed; `"a phrase"` matches words in order; `word*` matches a prefix; `OR`
//! between two terms accepts either; `-term` excludes. `AND` is accepted and means the default.

use serde::Serialize;

/// One searchable term: a word (optionally a prefix) or a phrase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum SearchTerm {
    Word { text: String, prefix: bool },
    Phrase(String),
}

/// A parsed query: every group must match (a group is terms joined by OR); no excluded term may.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchQuery {
    pub required: Vec<Vec<SearchTerm>>,
    pub excluded: Vec<SearchTerm>,
}

/// Why a query cannot be searched; the message is shown after "invalid search query: ".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SearchQueryError(pub String);

/// At most this many terms, so that one query cannot make the index do unbounded work.
pub const MAX_TERMS: usize = 32;

enum Token {
    Term { term: SearchTerm, negated: bool },
    Or,
    And,
}

fn has_word_character(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

fn tokenize(input: &str) -> Result<Vec<Token>, SearchQueryError> {
    let mut tokens = Vec::new();
    let mut chars = input.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut negated = false;
        if c == '-' {
            chars.next();
            negated = true;
            if chars.peek().is_none_or(|c| c.is_whitespace()) {
                return Err(SearchQueryError("'-' must be followed by a term".into()));
            }
        }
        if chars.peek() == Some(&'"') {
            chars.next();
            let mut phrase = String::new();
            let mut closed = false;
            for c in chars.by_ref() {
                if c == '"' {
                    closed = true;
                    break;
                }
                phrase.push(c);
            }
            if !closed {
                return Err(SearchQueryError("unclosed quote".into()));
            }
            let phrase = crate::normalize::collapse_whitespace(&phrase);
            if !has_word_character(&phrase) {
                return Err(SearchQueryError("empty phrase".into()));
            }
            tokens.push(Token::Term {
                term: SearchTerm::Phrase(phrase),
                negated,
            });
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '"' {
                break;
            }
            word.push(c);
            chars.next();
        }
        if !negated && word == "OR" {
            tokens.push(Token::Or);
            continue;
        }
        if !negated && word == "AND" {
            tokens.push(Token::And);
            continue;
        }
        let prefix = word.ends_with('*');
        let text = word.trim_end_matches('*').to_string();
        if text.contains('*') {
            return Err(SearchQueryError(format!(
                "'*' is only allowed at the end of a word (in '{word}')"
            )));
        }
        if !has_word_character(&text) {
            return Err(SearchQueryError(format!(
                "'{word}' has no letters or digits to search for"
            )));
        }
        tokens.push(Token::Term {
            term: SearchTerm::Word { text, prefix },
            negated,
        });
    }
    Ok(tokens)
}

/// Parses the user's query text.
pub fn parse_search_query(input: &str) -> Result<SearchQuery, SearchQueryError> {
    if input.chars().count() > 1000 {
        return Err(SearchQueryError(
            "too long (at most 1000 characters)".into(),
        ));
    }
    let tokens = tokenize(input)?;
    let mut query = SearchQuery {
        required: Vec::new(),
        excluded: Vec::new(),
    };
    let mut pending_or = false;
    let mut terms = 0;
    for token in tokens {
        match token {
            Token::Or => {
                if pending_or || query.required.is_empty() {
                    return Err(SearchQueryError("OR needs a term on each side".into()));
                }
                pending_or = true;
            }
            Token::And => {
                if pending_or {
                    return Err(SearchQueryError("OR needs a term on each side".into()));
                }
            }
            Token::Term { term, negated } => {
                terms += 1;
                if negated {
                    if pending_or {
                        return Err(SearchQueryError(
                            "an excluded term cannot be part of OR".into(),
                        ));
                    }
                    query.excluded.push(term);
                } else if pending_or {
                    query
                        .required
                        .last_mut()
                        .expect("OR follows a group")
                        .push(term);
                    pending_or = false;
                } else {
                    query.required.push(vec![term]);
                }
            }
        }
    }
    if pending_or {
        return Err(SearchQueryError("OR needs a term on each side".into()));
    }
    if terms > MAX_TERMS {
        return Err(SearchQueryError(format!(
            "too many terms (at most {MAX_TERMS})"
        )));
    }
    if query.required.is_empty() {
        return Err(SearchQueryError(if query.excluded.is_empty() {
            "nothing to search for".into()
        } else {
            "a query needs at least one term that is not excluded".into()
        }));
    }
    Ok(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> SearchTerm {
        SearchTerm::Word {
            text: text.into(),
            prefix: false,
        }
    }

    #[test]
    fn words_phrases_prefixes_or_and_exclusions() {
        let query =
            parse_search_query(r#"redis "cutover runbook" migr* OR atlas -beacon"#).unwrap();
        assert_eq!(
            query.required,
            vec![
                vec![word("redis")],
                vec![SearchTerm::Phrase("cutover runbook".into())],
                vec![
                    SearchTerm::Word {
                        text: "migr".into(),
                        prefix: true
                    },
                    word("atlas")
                ],
            ]
        );
        assert_eq!(query.excluded, vec![word("beacon")]);
    }

    #[test]
    fn syntax_errors_are_named() {
        for (input, wanted) in [
            ("", "nothing to search for"),
            ("   ", "nothing to search for"),
            ("\"open", "unclosed quote"),
            ("OR redis", "OR needs a term"),
            ("redis OR", "OR needs a term"),
            ("redis OR OR atlas", "OR needs a term"),
            ("-redis", "at least one term"),
            ("***", "no letters or digits"),
            ("re*dis", "only allowed at the end"),
            ("\"  \"", "empty phrase"),
            ("redis -", "must be followed"),
        ] {
            let error = parse_search_query(input).unwrap_err();
            assert!(
                error.0.contains(wanted),
                "{input:?} gave {:?}, wanted {wanted:?}",
                error.0
            );
        }
    }

    #[test]
    fn database_syntax_is_plain_text() {
        let query = parse_search_query("NEAR(a b) body:x ^start").unwrap();
        assert_eq!(query.required.len(), 4);
        assert_eq!(query.required[2], vec![word("body:x")]);
    }
}
