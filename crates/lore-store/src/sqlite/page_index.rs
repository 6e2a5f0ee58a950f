//! An owner's entity pages held in memory on the reader (issue 8): for every entity, what the
//! projection (`show`) reads of it: its row, its active claims and its resource links.
//!
//! Read through SQLite, a projection descends three b-trees (entities, `claims_by_subject`,
//! `resource_links_by_entity`). In a large file each descent's lower levels are no longer in the CPU's
//! cache, so the read grows with the database even though it reads no more rows (BENCHMARKS.md,
//! eighth round). From this index it is one hash lookup and copies of rows that were read together.
//!
//! It lives in the reader's memo (`read_cache.rs`) and is dropped with it whenever `PRAGMA
//! data_version` moves, so each answer is exactly what the matching query answers in that snapshot:
//! `find_entity`, `list_projected_claims` and `list_resource_links_by_entity`. It is built from one
//! scan per table, by `Store::prewarm` (which `lore serve` and `lore mcp` run at start) and again once
//! a snapshot version has answered [`BUILD_AFTER_READS`] projections by queries, so a one-shot process
//! (`lore show`) never scans the whole owner to answer one entity.

use lore_core::model::*;
use rusqlite::params;

use super::rows::*;
use super::{SqliteTx, ENTITY_COLUMNS, LINK_COLUMNS};
use crate::fast_hash::FastMap;
use crate::{CachedPages, ProjectedClaim, StoreResult};

/// Projections a snapshot version answers by queries before the reader builds the index: the reads'
/// cost (about 10 µs each) then matches a build's at the scale of the benchmark's first block.
pub(super) const BUILD_AFTER_READS: u32 = 1_000;

/// The scans an index is built from (`?1` is the owner). Rows are grouped and ordered in memory, in
/// the order the per-entity reads return them (`PROJECTED_CLAIMS`, `LINKS_BY_ENTITY`): text compares
/// as bytes in both, as SQLite's default collation does.
const ACTIVE_CLAIMS: &str = "SELECT subject, id, predicate, value_text, object_entity, \
     context_entity, authority, valid_from, valid_to FROM claims \
     WHERE owner = ?1 AND status = 'active'";

/// One entity's page: its row (`None` for an id that only claims or links name) and its rows in the
/// order the per-entity reads return them.
#[derive(Default)]
struct Page {
    entity: Option<Entity>,
    claims: Vec<ProjectedClaim>,
    links: Vec<ResourceLink>,
}

#[derive(Default)]
pub(super) struct PageIndex {
    /// Boxed, so the table's slots stay small (a page with its entity row is about 500 bytes).
    pages: FastMap<String, Box<Page>>,
}

impl PageIndex {
    pub fn entity(&self, id: &str) -> Option<Entity> {
        self.pages.get(id).and_then(|page| page.entity.clone())
    }

    pub fn projected_claims(&self, subject: &str) -> Vec<ProjectedClaim> {
        self.pages
            .get(subject)
            .map_or_else(Vec::new, |page| page.claims.clone())
    }

    /// How many entity rows the index holds, and its size estimated from what the rows hold.
    pub fn held(&self) -> CachedPages {
        let text = |s: &str| s.len();
        let maybe = |s: &Option<String>| s.as_deref().map_or(0, str::len);
        let list = |v: &[String]| {
            v.iter()
                .map(|s| s.len() + size_of::<String>())
                .sum::<usize>()
        };
        let mut bytes = self.pages.capacity() * (size_of::<(String, Box<Page>)>() + 1);
        for (id, page) in &self.pages {
            bytes += id.len() + size_of::<Page>();
            if let Some(e) = &page.entity {
                bytes += text(&e.id) + text(&e.canonical_name) + maybe(&e.manual_name);
                bytes += maybe(&e.normalized_key) + maybe(&e.merged_into) + maybe(&e.manual_brief);
                bytes += maybe(&e.scope_meeting) + text(&e.current_brief);
                bytes += list(&e.emails) + list(&e.domains) + list(&e.external_keys);
                bytes += list(&e.do_not_merge_with);
                bytes += e
                    .manual_attributes
                    .iter()
                    .map(|(k, v)| k.len() + v.len() + 64)
                    .sum::<usize>();
                bytes += e
                    .current_attributes
                    .iter()
                    .map(|(k, v)| k.len() + v.to_string().len() + 64)
                    .sum::<usize>();
            }
            bytes += page.claims.capacity() * size_of::<ProjectedClaim>();
            for c in &page.claims {
                bytes += text(&c.id) + text(&c.predicate) + maybe(&c.value_text);
                bytes += maybe(&c.object_entity) + maybe(&c.context_entity);
            }
            bytes += page.links.capacity() * size_of::<ResourceLink>();
            for l in &page.links {
                bytes += text(&l.id) + maybe(&l.entity) + maybe(&l.meeting) + text(&l.source_id);
                bytes += text(&l.url) + maybe(&l.external_key) + maybe(&l.title);
                bytes += text(&l.ingested_status);
            }
        }
        CachedPages {
            entities: self.pages.values().filter(|p| p.entity.is_some()).count(),
            bytes,
        }
    }

    pub fn links(&self, entity: &str) -> Vec<ResourceLink> {
        self.pages
            .get(entity)
            .map_or_else(Vec::new, |page| page.links.clone())
    }
}

impl SqliteTx<'_> {
    /// Reads an owner's pages from this snapshot: three scans, grouped by entity.
    pub(super) fn scan_page_index(&self) -> StoreResult<PageIndex> {
        let owner = params![self.owner];
        let mut pages: FastMap<String, Box<Page>> = FastMap::default();
        let entities = format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE owner = ?1");
        for entity in self.all(&entities, owner, entity_row)? {
            let id = entity.id.clone();
            pages.entry(id).or_default().entity = Some(entity);
        }
        let claims = self.all(ACTIVE_CLAIMS, owner, |row| {
            Ok((row.get::<_, String>(0)?, projected_claim(row, 1)?))
        })?;
        for (subject, claim) in claims {
            pages.entry(subject).or_default().claims.push(claim);
        }
        let links = format!(
            "SELECT {LINK_COLUMNS} FROM resource_links WHERE owner = ?1 AND entity IS NOT NULL"
        );
        for link in self.all(&links, owner, link_row)? {
            let entity = link.entity.clone().unwrap_or_default();
            pages.entry(entity).or_default().links.push(link);
        }
        for page in pages.values_mut() {
            page.claims
                .sort_unstable_by(|a, b| (&a.predicate, &a.id).cmp(&(&b.predicate, &b.id)));
            page.links
                .sort_unstable_by(|a, b| (a.first_seen_at, &a.id).cmp(&(b.first_seen_at, &b.id)));
        }
        Ok(PageIndex { pages })
    }
}
