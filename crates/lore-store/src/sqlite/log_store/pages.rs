//! The log store's entity pages: what the projection (`show`) reads of an entity (its row, its active
//! claims, its resource links and the meeting links attached to it), encoded in one buffer the first
//! time a read asks for it (`page_index.rs`' encoding) and kept until a change touches the entity.
//!
//! Answered from the tables in memory, a projection follows a pointer per claim and per string (the
//! claim by its id, then each of its fields), and each is a cache miss once the knowledge outgrows
//! the CPU's caches: about 13 µs at scale 1 of `lore bench`, where a page read from one buffer took
//! 5 µs (BENCHMARKS.md, twenty-first round). `Knowledge::apply` forgets the page of every entity a
//! change reaches (`forget_*`), so a page always says what the tables say.

use std::sync::{Arc, Mutex};

use crate::fast_hash::FastMap;
use crate::sqlite::page_index::OnePage;

#[derive(Default)]
pub(crate) struct PageCache {
    pages: Mutex<FastMap<String, Arc<OnePage>>>,
}

impl std::fmt::Debug for PageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageCache")
    }
}

impl PageCache {
    /// The entity's page, built by `build` when none is kept.
    pub(crate) fn get_or_build(
        &self,
        entity: &str,
        build: impl FnOnce() -> OnePage,
    ) -> Arc<OnePage> {
        if let Some(page) = self.lock().get(entity) {
            return page.clone();
        }
        let page = Arc::new(build());
        self.lock().insert(entity.to_string(), page.clone());
        page
    }

    /// Forgets one entity's page (a change reached it); `&mut`: no other thread reads meanwhile.
    pub(crate) fn forget(&mut self, entity: &str) {
        let pages = self
            .pages
            .get_mut()
            .unwrap_or_else(|poison| poison.into_inner());
        if !pages.is_empty() {
            pages.remove(entity);
        }
    }

    /// Forgets every page (a meeting row changed: attached links show meetings' external ids).
    pub(crate) fn clear(&mut self) {
        self.pages
            .get_mut()
            .unwrap_or_else(|poison| poison.into_inner())
            .clear();
    }

    /// The bytes of the pages kept.
    pub(crate) fn bytes(&self) -> usize {
        self.lock().values().map(|page| page.len()).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FastMap<String, Arc<OnePage>>> {
        self.pages
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}
