//! URL normalization and classification into resource types and external keys (SPEC 2.2, resource link).

use lore_core::ResourceType;
use serde::Serialize;
use url::Url;

/// A URL in its comparison form, with what it points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NormalizedLink {
    pub url: String,
    pub resource_type: ResourceType,
    /// `github:org/repo#42`, `drive:FILE_ID`, `slack:TEAM/CHANNEL/TS`; None for plain web pages.
    pub external_key: Option<String>,
}

/// Normalizes an http(s) URL: lowercase host without `www.`, no default port, credentials, fragment, tracking
/// parameters or trailing slash; GitHub, Google Drive and Slack URLs are reduced to their canonical form.
pub fn normalize_url(raw: &str) -> Result<NormalizedLink, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err("empty url".to_string());
    }
    let mut url = match Url::parse(trimmed) {
        Ok(url) => url,
        // "github.com/acme/atlas": people paste URLs without a scheme.
        Err(url::ParseError::RelativeUrlWithoutBase) if looks_like_host(trimmed) => {
            Url::parse(&format!("https://{trimmed}"))
                .map_err(|error| format!("invalid url '{trimmed}': {error}"))?
        }
        Err(error) => return Err(format!("invalid url '{trimmed}': {error}")),
    };
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("unsupported URL scheme '{}'", url.scheme()));
    }
    let host = match url.host_str() {
        Some(host) if !host.is_empty() => host.trim_end_matches('.').to_lowercase(),
        _ => return Err(format!("invalid url '{trimmed}': no host")),
    };
    let host = match host.strip_prefix("www.") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => host,
    };
    url.set_host(Some(&host))
        .map_err(|error| format!("invalid url '{trimmed}': {error}"))?;
    // Credentials in a shared link are never worth keeping.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_fragment(None);
    let kept_query = url.query().map(|query| {
        query
            .split('&')
            .filter(|pair| !pair.is_empty() && !is_tracking_parameter(pair))
            .collect::<Vec<_>>()
            .join("&")
    });
    url.set_query(kept_query.as_deref().filter(|query| !query.is_empty()));
    let path = url.path().to_string();
    if path.len() > 1 && path.ends_with('/') {
        let trimmed_path = path.trim_end_matches('/');
        url.set_path(if trimmed_path.is_empty() {
            "/"
        } else {
            trimmed_path
        });
    }
    let segments: Vec<String> = url
        .path_segments()
        .map(|segments| {
            segments
                .filter(|segment| !segment.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let classified = classify(&host, &segments, &url);
    Ok(classified.unwrap_or_else(|| NormalizedLink {
        url: url.to_string(),
        resource_type: ResourceType::Webpage,
        external_key: None,
    }))
}

fn looks_like_host(text: &str) -> bool {
    let first = text.split(['/', '?', '#']).next().unwrap_or("");
    first.contains('.') && !first.contains(char::is_whitespace) && !first.starts_with('.')
}

fn is_tracking_parameter(pair: &str) -> bool {
    let key = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
    key.starts_with("utm_") || key == "fbclid" || key == "gclid"
}

fn classify(host: &str, segments: &[String], url: &Url) -> Option<NormalizedLink> {
    let link = |url: String, resource_type, key: String| NormalizedLink {
        url,
        resource_type,
        external_key: Some(key),
    };
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match host {
        "github.com" => {
            let (org, repo) = match parts.as_slice() {
                [org, repo, ..]
                    if !GITHUB_RESERVED.contains(&org.to_ascii_lowercase().as_str()) =>
                {
                    let repo = repo.strip_suffix(".git").unwrap_or(repo);
                    (org.to_lowercase(), repo.to_lowercase())
                }
                _ => return None,
            };
            let repo_url = format!("https://github.com/{org}/{repo}");
            match parts.as_slice() {
                [_, _] => Some(link(
                    repo_url,
                    ResourceType::GithubRepo,
                    format!("github:{org}/{repo}"),
                )),
                [_, _, "issues", number, ..] if is_number(number) => Some(link(
                    format!("{repo_url}/issues/{number}"),
                    ResourceType::GithubIssue,
                    format!("github:{org}/{repo}#{number}"),
                )),
                [_, _, "pull", number, ..] if is_number(number) => Some(link(
                    format!("{repo_url}/pull/{number}"),
                    ResourceType::GithubPr,
                    format!("github:{org}/{repo}#{number}"),
                )),
                _ => None,
            }
        }
        "docs.google.com" => match parts.as_slice() {
            [kind, "d", id, ..] | [kind, "u", _, "d", id, ..]
                if GOOGLE_DOC_KINDS.contains(kind) && is_drive_id(id) =>
            {
                Some(link(
                    format!("https://docs.google.com/{kind}/d/{id}"),
                    ResourceType::GoogleDriveFile,
                    format!("drive:{id}"),
                ))
            }
            _ => None,
        },
        "drive.google.com" => match parts.as_slice() {
            ["file", "d", id, ..] | ["file", "u", _, "d", id, ..] if is_drive_id(id) => Some(link(
                format!("https://drive.google.com/file/d/{id}"),
                ResourceType::GoogleDriveFile,
                format!("drive:{id}"),
            )),
            ["drive", "folders", id, ..] | ["drive", "u", _, "folders", id, ..]
                if is_drive_id(id) =>
            {
                Some(link(
                    format!("https://drive.google.com/drive/folders/{id}"),
                    ResourceType::GoogleDriveFolder,
                    format!("drive:{id}"),
                ))
            }
            ["open"] => {
                let id = url
                    .query_pairs()
                    .find(|(key, _)| key == "id")
                    .map(|(_, value)| value.into_owned())?;
                is_drive_id(&id).then(|| {
                    link(
                        format!("https://drive.google.com/open?id={id}"),
                        ResourceType::GoogleDriveFile,
                        format!("drive:{id}"),
                    )
                })
            }
            _ => None,
        },
        _ => {
            let team = host
                .strip_suffix(".slack.com")
                .filter(|team| !team.is_empty() && !team.contains('.'))?;
            match parts.as_slice() {
                ["archives", channel] => Some(link(
                    format!("https://{team}.slack.com/archives/{channel}"),
                    ResourceType::SlackChannel,
                    format!("slack:{team}/{channel}"),
                )),
                ["archives", channel, message] => {
                    let digits = message
                        .strip_prefix('p')
                        .filter(|digits| digits.len() > 6 && is_number(digits))?;
                    let (seconds, micros) = digits.split_at(digits.len() - 6);
                    Some(link(
                        format!("https://{team}.slack.com/archives/{channel}/{message}"),
                        ResourceType::SlackThread,
                        format!("slack:{team}/{channel}/{seconds}.{micros}"),
                    ))
                }
                _ => None,
            }
        }
    }
}

/// First path segments on github.com that are not organizations.
const GITHUB_RESERVED: &[&str] = &[
    "about",
    "apps",
    "collections",
    "enterprise",
    "explore",
    "features",
    "login",
    "marketplace",
    "notifications",
    "orgs",
    "pricing",
    "search",
    "settings",
    "sponsors",
    "topics",
    "trending",
    "users",
];

const GOOGLE_DOC_KINDS: &[&str] = &["document", "spreadsheets", "presentation"];

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

fn is_drive_id(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// Every http(s) URL in free text (a note, a transcript segment), normalized, in order, without
/// duplicates. Trailing punctuation that ends a sentence is not part of the URL.
pub fn find_urls(text: &str) -> Vec<NormalizedLink> {
    let mut found: Vec<NormalizedLink> = Vec::new();
    // Most texts have no URL: one search of the whole text instead of two per word.
    if !text.contains("http") {
        return found;
    }
    for token in text.split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'')) {
        let Some(start) = token.find("http://").or_else(|| token.find("https://")) else {
            continue;
        };
        let candidate =
            token[start..].trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}']);
        if let Ok(link) = normalize_url(candidate) {
            if !found.iter().any(|f| f.url == link.url) {
                found.push(link);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, expected url, resource type, external key); an expected url starting with "error: " expects
    /// that error message instead.
    const CASES: &[(&str, &str, &str, Option<&str>)] = &[
        ("https://example.com", "https://example.com/", "webpage", None),
        ("https://Example.COM/", "https://example.com/", "webpage", None),
        ("HTTPS://WWW.Example.com/About/", "https://example.com/About", "webpage", None),
        ("http://example.com:80/a", "http://example.com/a", "webpage", None),
        ("https://example.com:443/a", "https://example.com/a", "webpage", None),
        ("https://example.com:8443/a", "https://example.com:8443/a", "webpage", None),
        ("https://example.com/a#section-2", "https://example.com/a", "webpage", None),
        (
            "https://example.com/a?utm_source=x&id=7&UTM_Medium=y&fbclid=z&gclid=w",
            "https://example.com/a?id=7",
            "webpage",
            None,
        ),
        ("https://example.com/?utm_campaign=fall", "https://example.com/", "webpage", None),
        ("https://user:secret@example.com/x", "https://example.com/x", "webpage", None),
        ("  example.com/docs  ", "https://example.com/docs", "webpage", None),
        ("ftp://example.com/file", "error: unsupported URL scheme 'ftp'", "", None),
        ("mailto:alice@acme.com", "error: unsupported URL scheme 'mailto'", "", None),
        ("not a url", "error: invalid url 'not a url': relative URL without a base", "", None),
        ("", "error: empty url", "", None),
        ("https://github.com/Acme/Atlas", "https://github.com/acme/atlas", "github_repo", Some("github:acme/atlas")),
        ("https://www.github.com/acme/atlas.git/", "https://github.com/acme/atlas", "github_repo", Some("github:acme/atlas")),
        (
            "https://github.com/acme/atlas/issues/7#issuecomment-1",
            "https://github.com/acme/atlas/issues/7",
            "github_issue",
            Some("github:acme/atlas#7"),
        ),
        (
            "https://github.com/Acme/Atlas/pull/42/files?w=1",
            "https://github.com/acme/atlas/pull/42",
            "github_pr",
            Some("github:acme/atlas#42"),
        ),
        ("github.com/acme/atlas/pull/42", "https://github.com/acme/atlas/pull/42", "github_pr", Some("github:acme/atlas#42")),
        ("https://github.com/acme/atlas/blob/main/README.md", "https://github.com/acme/atlas/blob/main/README.md", "webpage", None),
        ("https://github.com/acme/atlas/issues/new", "https://github.com/acme/atlas/issues/new", "webpage", None),
        ("https://github.com/orgs/acme", "https://github.com/orgs/acme", "webpage", None),
        ("https://github.com/acme", "https://github.com/acme", "webpage", None),
        (
            "https://docs.google.com/document/d/1AbC_d-E/edit?usp=sharing",
            "https://docs.google.com/document/d/1AbC_d-E",
            "google_drive_file",
            Some("drive:1AbC_d-E"),
        ),
        (
            "https://docs.google.com/spreadsheets/d/1XyZ/edit#gid=0",
            "https://docs.google.com/spreadsheets/d/1XyZ",
            "google_drive_file",
            Some("drive:1XyZ"),
        ),
        (
            "https://docs.google.com/presentation/u/0/d/1Pres/view",
            "https://docs.google.com/presentation/d/1Pres",
            "google_drive_file",
            Some("drive:1Pres"),
        ),
        (
            "https://drive.google.com/file/d/1aB3xYz9Qw/view?usp=drive_link",
            "https://drive.google.com/file/d/1aB3xYz9Qw",
            "google_drive_file",
            Some("drive:1aB3xYz9Qw"),
        ),
        (
            "https://drive.google.com/open?id=1OpenId&authuser=0",
            "https://drive.google.com/open?id=1OpenId",
            "google_drive_file",
            Some("drive:1OpenId"),
        ),
        (
            "https://drive.google.com/drive/folders/0BFolder",
            "https://drive.google.com/drive/folders/0BFolder",
            "google_drive_folder",
            Some("drive:0BFolder"),
        ),
        (
            "https://drive.google.com/drive/u/0/folders/0BFolder?usp=sharing",
            "https://drive.google.com/drive/folders/0BFolder",
            "google_drive_folder",
            Some("drive:0BFolder"),
        ),
        ("https://docs.google.com/forms/d/1Form/viewform", "https://docs.google.com/forms/d/1Form/viewform", "webpage", None),
        (
            "https://Northwind.slack.com/archives/C04REDIS01/p1700000000123456",
            "https://northwind.slack.com/archives/C04REDIS01/p1700000000123456",
            "slack_thread",
            Some("slack:northwind/C04REDIS01/1700000000.123456"),
        ),
        (
            "https://acme.slack.com/archives/C01/p1700000000123456?thread_ts=1700000000.000100&cid=C01",
            "https://acme.slack.com/archives/C01/p1700000000123456",
            "slack_thread",
            Some("slack:acme/C01/1700000000.123456"),
        ),
        ("https://acme.slack.com/archives/C01/", "https://acme.slack.com/archives/C01", "slack_channel", Some("slack:acme/C01")),
        ("https://acme.slack.com/archives/C01/pnotatimestamp", "https://acme.slack.com/archives/C01/pnotatimestamp", "webpage", None),
        ("https://app.slack.com/client/T01/C01", "https://app.slack.com/client/T01/C01", "webpage", None),
        ("https://münchen.example/straße", "https://xn--mnchen-3ya.example/stra%C3%9Fe", "webpage", None),
    ];

    #[test]
    fn normalize_url_table() {
        let mut failures = Vec::new();
        for (input, expected_url, expected_type, expected_key) in CASES {
            let actual = match normalize_url(input) {
                Ok(link) => (
                    link.url,
                    link.resource_type.as_str().to_string(),
                    link.external_key,
                ),
                Err(message) => (format!("error: {message}"), String::new(), None),
            };
            let expected = (
                expected_url.to_string(),
                expected_type.to_string(),
                expected_key.map(str::to_string),
            );
            if actual != expected {
                failures.push(format!(
                    "{input:?}\n  expected {expected:?}\n  actual   {actual:?}"
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases failed:\n{}",
            failures.len(),
            CASES.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn normalizing_twice_changes_nothing() {
        for (input, ..) in CASES {
            if let Ok(once) = normalize_url(input) {
                let twice = normalize_url(&once.url).expect("a normalized url normalizes again");
                assert_eq!(once, twice, "{input}");
            }
        }
    }

    #[test]
    fn urls_are_found_in_free_text_without_trailing_punctuation() {
        let found = find_urls(
            "See https://github.com/acme/atlas/pull/42. Also (https://www.example.com/a?utm_source=x), \
             and https://github.com/acme/atlas/pull/42 again; not ftp://x.y or plain words.",
        );
        let urls: Vec<&str> = found.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(
            urls,
            vec![
                "https://github.com/acme/atlas/pull/42",
                "https://example.com/a"
            ]
        );
        assert_eq!(
            found[0].external_key.as_deref(),
            Some("github:acme/atlas#42")
        );
        assert!(find_urls("no links here").is_empty());
    }
}
