//! Normalization of names, values, emails and keys, so that identity never depends on spacing or case.

/// Trims and collapses runs of white space to one space.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The comparison form of a value or name: collapsed white space, lowercase, no trailing punctuation.
pub fn value_key(text: &str) -> String {
    collapse_whitespace(text)
        .to_lowercase()
        .trim_end_matches(['.', '!', ';', ','])
        .to_string()
}

/// Emails compare case-insensitively after trimming.
pub fn normalize_email(email: &str) -> Option<String> {
    let trimmed = email.trim().to_lowercase();
    let (local, domain) = trimmed.split_once('@')?;
    if local.is_empty()
        || domain.is_empty()
        || !domain.contains('.')
        || trimmed.contains(char::is_whitespace)
    {
        return None;
    }
    Some(trimmed)
}

/// A domain from an email, URL or bare domain: lowercase, no scheme, path or `www.`.
pub fn normalize_domain(input: &str) -> Option<String> {
    let lowered = input.trim().to_lowercase();
    let without_user = lowered
        .rsplit_once('@')
        .map(|(_, domain)| domain)
        .unwrap_or(&lowered);
    let without_scheme = without_user
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or(without_user);
    let host = without_scheme
        .split(['/', '?', '#', ':'])
        .next()
        .unwrap_or("");
    let host = host
        .strip_prefix("www.")
        .unwrap_or(host)
        .trim_end_matches('.');
    if host.is_empty() || !host.contains('.') || host.contains(char::is_whitespace) {
        return None;
    }
    Some(host.to_string())
}

/// A slug for project and concept keys: lowercase ASCII letters and digits joined by `-`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    let mut pending_dash = false;
    for character in text.chars().flat_map(char::to_lowercase) {
        if character.is_alphanumeric() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(character);
        } else {
            pending_dash = true;
        }
    }
    out
}

/// Cuts text to at most `max_chars` characters on a character boundary.
pub fn truncate_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((byte_index, _)) => &text[..byte_index],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_without_case_or_spacing() {
        assert_eq!(
            value_key("  Principal   Researcher. "),
            "principal researcher"
        );
    }

    #[test]
    fn emails_need_a_local_part_and_a_dotted_domain() {
        assert_eq!(
            normalize_email(" Alice@Acme.COM ").as_deref(),
            Some("alice@acme.com")
        );
        assert_eq!(normalize_email("alice"), None);
        assert_eq!(normalize_email("@acme.com"), None);
        assert_eq!(normalize_email(""), None);
    }

    #[test]
    fn domains_come_from_urls_and_emails() {
        assert_eq!(
            normalize_domain("https://www.Acme.com/about").as_deref(),
            Some("acme.com")
        );
        assert_eq!(
            normalize_domain("bob@globex.com").as_deref(),
            Some("globex.com")
        );
        assert_eq!(normalize_domain("localhost"), None);
    }

    #[test]
    fn slugs_fold_punctuation() {
        assert_eq!(slug("Redis  migration!"), "redis-migration");
        assert_eq!(slug("Café Über"), "café-über");
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("hi", 10), "hi");
    }
}
