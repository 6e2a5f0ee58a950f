//! Tags (SPEC 2.1) and L17's linked tags. A bundle's tag may link a project or concept; in that
//! meeting the entity then resolves by `(kind, tag key)` instead of its slug, so the same tag in two
//! meetings names one entity whatever it was called. The link is stored with the meeting
//! (`meeting_tags`, gone with it); the owner's tag row is never deleted automatically.

use std::collections::BTreeMap;

use lore_core::model::*;
use lore_ingest::TagInput;
use lore_store::Tx;

use crate::apply::Changes;
use crate::resolve::{reference_key, resolve, MeetingScope};
use crate::EngineResult;

/// Stores the meeting's tags and their links; returns `(kind, slug or key)` -> tag key.
pub fn store_meeting_tags(
    tx: &mut dyn Tx,
    meeting: &str,
    tags: &[TagInput],
    changes: &mut Changes,
) -> EngineResult<BTreeMap<(EntityKind, String), String>> {
    let mut keys = BTreeMap::new();
    if tags.is_empty() {
        return Ok(keys);
    }
    let known = tx.list_tags()?;
    for tag in tags {
        if !known.iter().any(|t| t.name == tag.key) {
            let row = Tag {
                name: tag.key.clone(),
                description: tag.description.clone().unwrap_or_default(),
                ranges: serde_json::json!([]),
            };
            tx.upsert_tag(&row)?;
            changes.record_row(format!("tag:{}", row.name), None, Some(&row));
        }
        let Some(entity) = &tag.entity else {
            continue;
        };
        let link = MeetingTag {
            meeting: meeting.to_string(),
            tag: tag.key.clone(),
            kind: entity.kind,
            key: reference_key(entity),
        };
        tx.insert_meeting_tag(&link)?;
        keys.insert((link.kind, link.key), link.tag);
    }
    Ok(keys)
}

/// A tag link names its entity in the meeting (resolved by the tag).
pub fn name_tagged_entities(
    tx: &mut dyn Tx,
    tags: &[TagInput],
    scope: &MeetingScope,
    changes: &mut Changes,
) -> EngineResult<()> {
    for entity in tags.iter().filter_map(|tag| tag.entity.as_ref()) {
        resolve(tx, entity, Some(scope), changes)?;
    }
    Ok(())
}
