//! A memo of the graph's hot reads on the read-only connection (file databases only).
//!
//! Every read transaction first reads `PRAGMA data_version` inside its snapshot. SQLite changes that
//! number whenever any other connection (this process's writer, another process) commits, so a memo
//! filled under one version is exactly the database as that snapshot sees it; on a new version the
//! whole memo is dropped before anything is read. Entries are per owner, so nothing crosses owners
//! (L20). Only the reader connection has a memo: writes, and reads inside a write, always query.

use std::collections::HashMap;
use std::sync::Arc;

use lore_core::model::*;

use super::page_index::PageIndex;
use crate::{GraphIndex, MeetingLink};

/// Entries kept before the memo starts over (bounds memory on very large graphs).
const MAX_ENTRIES: usize = 200_000;

#[derive(Default)]
pub(super) struct ReadCache {
    version: Option<i64>,
    entries: usize,
    owners: HashMap<String, OwnerCache>,
}

/// One owner's memo: each read keyed by its argument (and the row limit it was asked with).
#[derive(Default)]
pub(super) struct OwnerCache {
    pub entities: HashMap<String, Option<Entity>>,
    pub meetings: HashMap<String, Option<Meeting>>,
    pub claims_linking: HashMap<String, (usize, Vec<Claim>)>,
    pub tasks_by_entity: HashMap<String, Vec<Task>>,
    pub links_by_entity: HashMap<String, (usize, Vec<MeetingLink>)>,
    pub links_by_meeting: HashMap<String, (usize, Vec<MeetingLink>)>,
    /// The owner's graph index, once the store's build thread has it for the owner's version in
    /// this snapshot (`owner_builds.rs`; not counted in the size bound: one per owner).
    pub graph: Option<Arc<GraphIndex>>,
    /// The owner's entity pages (`page_index.rs`), once the store's build thread has them for the
    /// owner's version in this snapshot.
    pub pages: Option<Arc<PageIndex>>,
    /// The owner's version (`owner_versions`) in this snapshot, once read.
    pub owner_version: Option<i64>,
}

impl ReadCache {
    /// The owner's memo for a snapshot at `version`, emptied first if the database changed since.
    pub fn for_snapshot(&mut self, version: i64, owner: &str) -> &mut OwnerCache {
        if self.version != Some(version) || self.entries > MAX_ENTRIES {
            self.owners.clear();
            self.entries = 0;
            self.version = Some(version);
        }
        if !self.owners.contains_key(owner) {
            self.owners.insert(owner.to_string(), OwnerCache::default());
        }
        self.owners.get_mut(owner).expect("inserted above")
    }

    /// Recounts the entries after a read, for the size bound.
    pub fn recount(&mut self) {
        self.entries = self.owners.values().map(OwnerCache::len).sum();
    }
}

impl OwnerCache {
    pub fn len(&self) -> usize {
        self.entities.len()
            + self.meetings.len()
            + self.claims_linking.len()
            + self.tasks_by_entity.len()
            + self.links_by_entity.len()
            + self.links_by_meeting.len()
    }
}
