//! Which meeting-level resource links concern an entity (SPEC 2.2). A link shared in a meeting
//! (chat, calendar description) names no entity; it concerns an entity named in the same meeting when
//! its GitHub repository is the project's key, or its title names the entity. Computed when read, from
//! stored facts only, so it never depends on ingestion order (L14) and leaves with its meeting (L13).

use lore_core::model::*;
use lore_core::normalize::{slug, value_key};
use lore_store::Tx;

use crate::EngineResult;

/// The repository name in a `github:org/repo...` key.
fn github_repository(external_key: &str) -> Option<&str> {
    let rest = external_key.strip_prefix("github:")?;
    let (_, repo) = rest.split_once('/')?;
    Some(repo.split(['#', '/', '@']).next().unwrap_or(repo))
}

/// Whether `title` mentions `name` as whole words.
fn mentions(title: &str, name: &str) -> bool {
    let name = value_key(name);
    if name.is_empty() {
        return false;
    }
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(value_key)
        .collect();
    let wanted: Vec<&str> = name.split_whitespace().collect();
    words
        .windows(wanted.len())
        .any(|window| window.iter().map(String::as_str).eq(wanted.iter().copied()))
}

/// Meeting links (with no entity of their own) that concern the entity, from the meetings it was
/// named in.
pub fn links_concerning(
    tx: &mut dyn Tx,
    entity: &Entity,
    aliases: &[Alias],
) -> EngineResult<Vec<ResourceLink>> {
    if entity.kind == EntityKind::Person {
        return Ok(Vec::new());
    }
    let mut meetings: Vec<&str> = aliases.iter().map(|a| a.meeting.as_str()).collect();
    meetings.sort();
    meetings.dedup();
    let key = entity.normalized_key.clone().unwrap_or_default();
    let mut found: Vec<ResourceLink> = Vec::new();
    for meeting in meetings {
        for link in tx.list_resource_links_by_meeting(meeting)? {
            if link.entity.is_some() || found.iter().any(|l| l.url == link.url) {
                continue;
            }
            let by_repository = entity.kind == EntityKind::Project
                && link
                    .external_key
                    .as_deref()
                    .and_then(github_repository)
                    .is_some_and(|repo| slug(repo) == key);
            let by_title = link
                .title
                .as_deref()
                .is_some_and(|title| mentions(title, entity.display_name()));
            if by_repository || by_title {
                found.push(link);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_keys_name_their_repository() {
        assert_eq!(
            github_repository("github:northwind/atlas#42"),
            Some("atlas")
        );
        assert_eq!(github_repository("github:northwind/atlas"), Some("atlas"));
        assert_eq!(github_repository("drive:abc"), None);
    }

    #[test]
    fn titles_mention_whole_words_only() {
        assert!(mentions("Atlas x Globex integration doc", "Globex"));
        assert!(mentions(
            "#infra thread: Redis migration",
            "Redis migration"
        ));
        assert!(!mentions("Atlases everywhere", "Atlas"));
    }
}
