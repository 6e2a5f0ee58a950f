//! An owner's entity pages held in memory on the reader (issue 8): for every entity, what the
//! projection (`show`) reads of it: its row, its active claims, its resource links and the meeting
//! links attached to it.
//!
//! Read through SQLite, a projection descends three b-trees (entities, `claims_by_subject`,
//! `resource_links_by_entity`). In a large file each descent's lower levels are no longer in the CPU's
//! cache, so the read grows with the database even though it reads no more rows (BENCHMARKS.md,
//! eighth round). Here it is one hash lookup and one buffer read from start to end: each page is
//! encoded in a single allocation (held as Rust values, an entity's rows were some fifty allocations
//! spread over the heap, and at scale 10 reading them grew 1.6× for the same reason).
//!
//! It is kept per owner and owner version (`owner_versions`) by the store's `lore-entity-pages`
//! thread (`owner_builds.rs`), so each answer is exactly what the matching query answers in a
//! snapshot that sees that version: `find_entity`, `list_projected_claims`,
//! `list_resource_links_by_entity` and `list_attached_links`; another owner's write leaves it in
//! place. It is built in one pass over four scans in entity order, from a snapshot of the thread's own connection, when
//! `Store::prewarm` asks (`lore serve` and `lore mcp` run it at start) and once a version has answered
//! [`BUILD_AFTER_READS`] projections by queries, so a one-shot process (`lore show`) never scans the
//! whole owner to answer one entity, and no read waits for a build. The reader's memo holds the pages
//! it found for the rest of its data version. The build keeps nothing but the encoded pages
//! (BENCHMARKS.md, ninth round, tells why that matters).

use std::collections::BTreeMap;
use std::hash::{BuildHasher, BuildHasherDefault};

use lore_core::model::*;
use lore_core::Ts;
use rusqlite::params;

use super::rows::*;
use super::{backend, SqliteTx, ENTITY_COLUMNS, LINK_COLUMNS};
use crate::fast_hash::{FastHasher, FastMap, FastSet};
use crate::{AttachedLink, CachedPages, ProjectedClaim, StoreResult};

/// Projections an owner version answers by queries before the pages are asked for: a thousand such
/// reads (about 10 µs each) cost about what a build costs at scale 1 of `lore bench`; a larger
/// owner's build costs more (about 0.2 s at scale 10, 1.5 s at scale 100), on the build thread.
pub(super) const BUILD_AFTER_READS: u32 = 1_000;

/// The scans an index is built from, each in entity id order so that one pass merges them (text
/// compares as bytes in SQLite's default collation, as in Rust). Within an entity, claims come in the
/// order `PROJECTED_CLAIMS` returns them (status is one value here) and links as `LINKS_BY_ENTITY`.
const ACTIVE_CLAIMS: &str = "SELECT subject, id, predicate, value_text, object_entity, \
     context_entity, authority, valid_from, valid_to FROM claims INDEXED BY claims_by_subject \
     WHERE owner = ?1 AND status = 'active' ORDER BY subject, status, predicate, id";

#[derive(Default)]
pub(super) struct PageIndex {
    /// Each page encoded in one buffer ([`encode`]), by the hash of its entity id; the buffer starts
    /// with the id, so a lookup checks it.
    pages: FastMap<u64, Box<[u8]>>,
    /// Hashes two ids share (not expected to happen, but possible): those ids are read by queries.
    shared: FastSet<u64>,
    entities: usize,
    bytes: usize,
}

fn digest(id: &str) -> u64 {
    BuildHasherDefault::<FastHasher>::default().hash_one(id)
}

/// What the index answers for an id: `None` when it cannot (the caller queries), `Some(None)` when
/// the owner has no page for it (no row, no claims, no links), else the page.
type Lookup<'a> = Option<Option<Decoder<'a>>>;

impl crate::owner_builds::Settle for PageIndex {}

impl PageIndex {
    fn page(&self, id: &str) -> Lookup<'_> {
        let key = digest(id);
        if self.shared.contains(&key) {
            return None;
        }
        let Some(buffer) = self.pages.get(&key) else {
            return Some(None);
        };
        let mut page = Decoder {
            bytes: buffer,
            at: 0,
        };
        Some((page.str()? == id).then_some(page))
    }

    /// Part `n` of the id's page (0 entity, 1 claims, 2 links, 3 attached links) read by `read`; `absent` for an id
    /// with no page, `None` when the index cannot tell (read it by query then).
    fn part<T>(
        &self,
        id: &str,
        n: usize,
        absent: T,
        read: fn(&mut Decoder) -> Option<T>,
    ) -> Option<T> {
        match self.page(id)? {
            None => Some(absent),
            Some(mut page) => {
                page.skip_to(n)?;
                read(&mut page)
            }
        }
    }

    pub fn entity(&self, id: &str) -> Option<Option<Entity>> {
        self.part(id, 0, None, |page| page.entity())
    }

    pub fn projected_claims(&self, subject: &str) -> Option<Vec<ProjectedClaim>> {
        self.part(subject, 1, Vec::new(), |page| page.list(Decoder::claim))
    }

    pub fn links(&self, entity: &str) -> Option<Vec<ResourceLink>> {
        self.part(entity, 2, Vec::new(), |page| page.list(Decoder::link))
    }

    pub fn attached(&self, entity: &str) -> Option<Vec<AttachedLink>> {
        self.part(entity, 3, Vec::new(), |page| page.list(Decoder::attached))
    }

    /// How many entity rows the index holds, and the bytes of its buffers and table.
    pub fn held(&self) -> CachedPages {
        CachedPages {
            entities: self.entities,
            bytes: self.bytes + self.pages.capacity() * (size_of::<(u64, Box<[u8]>)>() + 1),
            left_to_queries: self.shared.len(),
        }
    }
}

/// One entity's rows before encoding: its row (`None` for an id that only claims or links name) and
/// its rows in the order the per-entity reads return them.
#[derive(Default)]
pub(crate) struct Page {
    pub(crate) entity: Option<Entity>,
    pub(crate) claims: Vec<ProjectedClaim>,
    pub(crate) links: Vec<ResourceLink>,
    pub(crate) attached: Vec<AttachedLink>,
}

/// One entity's page encoded on its own (the log store keeps such pages as it reads them, see
/// `log_store/pages.rs`), read back part by part like the index's.
pub(crate) struct OnePage(Box<[u8]>);

impl OnePage {
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn encode(id: &str, page: &Page) -> OnePage {
        let mut buffer = Encoder(Vec::new());
        encode(id, page, &mut buffer);
        OnePage(buffer.0.into_boxed_slice())
    }

    fn part<T>(&self, n: usize, read: fn(&mut Decoder) -> Option<T>) -> Option<T> {
        let mut page = Decoder {
            bytes: &self.0,
            at: 0,
        };
        page.str()?;
        page.skip_to(n)?;
        read(&mut page)
    }

    pub(crate) fn entity(&self) -> Option<Option<Entity>> {
        self.part(0, |page| page.entity())
    }

    pub(crate) fn projected_claims(&self) -> Option<Vec<ProjectedClaim>> {
        self.part(1, |page| page.list(Decoder::claim))
    }

    pub(crate) fn links(&self) -> Option<Vec<ResourceLink>> {
        self.part(2, |page| page.list(Decoder::link))
    }

    pub(crate) fn attached(&self) -> Option<Vec<AttachedLink>> {
        self.part(3, |page| page.list(Decoder::attached))
    }
}

impl SqliteTx<'_> {
    /// Reads an owner's pages from this snapshot: four scans in entity order, merged in one pass and
    /// each page encoded as soon as it is complete. Only the encoded pages stay: rows decoded into
    /// Rust values (some fifty allocations per entity) are freed at once, instead of all of them
    /// after the build, which left the allocator handing out cold memory to the reads that followed.
    pub(super) fn scan_page_index(&self) -> StoreResult<PageIndex> {
        let owner = params![self.owner];
        let entities =
            format!("SELECT {ENTITY_COLUMNS} FROM entities WHERE owner = ?1 ORDER BY id");
        let links = format!(
            "SELECT {LINK_COLUMNS} FROM resource_links WHERE owner = ?1 AND entity IS NOT NULL \
             ORDER BY entity, first_seen_at, id"
        );
        let mut entities = self.connection.prepare(&entities).map_err(backend)?;
        let mut claims = self.connection.prepare(ACTIVE_CLAIMS).map_err(backend)?;
        let mut links = self.connection.prepare(&links).map_err(backend)?;
        let mut attachments = self
            .connection
            .prepare(&super::read_side::ALL_ATTACHED_LINKS)
            .map_err(backend)?;
        let mut entities = entities.query(owner).map_err(backend)?;
        let mut claims = claims.query(owner).map_err(backend)?;
        let mut links = links.query(owner).map_err(backend)?;
        let mut attachments = attachments.query(owner).map_err(backend)?;
        fn next<T>(
            rows: &mut rusqlite::Rows<'_>,
            map: impl Fn(&rusqlite::Row) -> rusqlite::Result<T>,
        ) -> StoreResult<Option<T>> {
            match rows.next().map_err(backend)? {
                Some(row) => map(row).map(Some).map_err(backend),
                None => Ok(None),
            }
        }
        let claim_row =
            |row: &rusqlite::Row| Ok((row.get::<_, String>(0)?, projected_claim(row, 1)?));
        let mut entity = next(&mut entities, entity_row)?;
        let mut claim = next(&mut claims, claim_row)?;
        let mut link = next(&mut links, link_row)?;
        let mut attached = next(&mut attachments, attached_link_row)?;
        let mut index = PageIndex::default();
        let mut buffer = Encoder(Vec::new());
        loop {
            let heads = [
                entity.as_ref().map(|e| e.id.as_str()),
                claim.as_ref().map(|(subject, _)| subject.as_str()),
                link.as_ref()
                    .map(|l| l.entity.as_deref().unwrap_or_default()),
                attached.as_ref().map(|a| a.attachment.entity.as_str()),
            ];
            let Some(id) = heads.into_iter().flatten().min().map(str::to_string) else {
                break;
            };
            let mut page = Page::default();
            if entity.as_ref().is_some_and(|e| e.id == id) {
                page.entity = entity.take();
                entity = next(&mut entities, entity_row)?;
            }
            while let Some((_, row)) = claim.take_if(|(subject, _)| *subject == id) {
                page.claims.push(row);
                claim = next(&mut claims, claim_row)?;
            }
            while let Some(row) = link.take_if(|l| l.entity.as_deref() == Some(id.as_str())) {
                page.links.push(row);
                link = next(&mut links, link_row)?;
            }
            while let Some(row) = attached.take_if(|a| a.attachment.entity == id) {
                page.attached.push(row);
                attached = next(&mut attachments, attached_link_row)?;
            }
            index.insert(&id, &page, &mut buffer);
        }
        Ok(index)
    }
}

impl PageIndex {
    /// Encodes `page` (in `buffer`, reused) and keeps it under its id's hash; two ids with one hash
    /// are both left to queries.
    fn insert(&mut self, id: &str, page: &Page, buffer: &mut Encoder) {
        self.entities += usize::from(page.entity.is_some());
        let key = digest(id);
        if self.shared.contains(&key) {
            return;
        }
        buffer.0.clear();
        encode(id, page, buffer);
        self.bytes += buffer.0.len();
        if let Some(other) = self.pages.insert(key, buffer.0.as_slice().into()) {
            self.bytes -= other.len() + buffer.0.len();
            self.pages.remove(&key);
            self.shared.insert(key);
        }
    }
}

/// A page as one buffer: the id, then the offsets (4 bytes each) of its four parts, then the entity
/// row (a presence byte first), the claims, the links and the attached links (each a count, then the
/// rows). Lengths and
/// counts are LEB128, times zigzag LEB128, enumerations their names.
fn encode(id: &str, page: &Page, out: &mut Encoder) {
    out.str(id);
    let offsets = out.0.len();
    out.0.extend_from_slice(&[0; 16]);
    let part = |out: &mut Encoder, at: usize| {
        let here = u32::try_from(out.0.len()).unwrap_or(u32::MAX).to_le_bytes();
        out.0[offsets + 4 * at..offsets + 4 * at + 4].copy_from_slice(&here);
    };
    part(out, 0);
    match &page.entity {
        None => out.0.push(0),
        Some(entity) => {
            out.0.push(1);
            out.entity(entity);
        }
    }
    part(out, 1);
    out.len(page.claims.len());
    for claim in &page.claims {
        out.claim(claim);
    }
    part(out, 2);
    out.len(page.links.len());
    for link in &page.links {
        out.link(link);
    }
    part(out, 3);
    out.len(page.attached.len());
    for attached in &page.attached {
        out.link(&attached.link);
        let a = &attached.attachment;
        out.str(&a.entity);
        out.str(&a.reason);
        out.opt(a.evidence.as_deref());
        out.str(&a.meeting);
        out.str(&attached.meeting_external_id);
    }
}

struct Encoder(Vec<u8>);

impl Encoder {
    fn len(&mut self, mut n: usize) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn str(&mut self, text: &str) {
        self.len(text.len());
        self.0.extend_from_slice(text.as_bytes());
    }

    /// `None` as length 0, else the length plus one.
    fn opt(&mut self, text: Option<&str>) {
        match text {
            None => self.len(0),
            Some(text) => {
                self.len(text.len() + 1);
                self.0.extend_from_slice(text.as_bytes());
            }
        }
    }

    fn ts(&mut self, at: Ts) {
        self.len(((at.0 << 1) ^ (at.0 >> 63)) as usize);
    }

    fn opt_ts(&mut self, at: Option<Ts>) {
        match at {
            None => self.0.push(0),
            Some(at) => {
                self.0.push(1);
                self.ts(at);
            }
        }
    }

    fn list(&mut self, items: &[String]) {
        self.len(items.len());
        for item in items {
            self.str(item);
        }
    }

    fn value(&mut self, value: &serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::Null => self.0.push(0),
            Value::Bool(b) => self.0.push(1 + u8::from(*b)),
            Value::Number(n) => {
                self.0.push(3);
                self.str(&n.to_string());
            }
            Value::String(s) => {
                self.0.push(4);
                self.str(s);
            }
            Value::Array(items) => {
                self.0.push(5);
                self.len(items.len());
                items.iter().for_each(|item| self.value(item));
            }
            Value::Object(map) => {
                self.0.push(6);
                self.len(map.len());
                for (key, item) in map {
                    self.str(key);
                    self.value(item);
                }
            }
        }
    }

    fn entity(&mut self, e: &Entity) {
        self.str(&e.id);
        self.str(e.kind.as_str());
        self.str(&e.canonical_name);
        self.opt(e.manual_name.as_deref());
        self.opt(e.normalized_key.as_deref());
        self.list(&e.emails);
        self.list(&e.domains);
        self.list(&e.external_keys);
        self.str(e.status.as_str());
        self.opt(e.merged_into.as_deref());
        self.list(&e.do_not_merge_with);
        self.len(e.manual_attributes.len());
        for (key, value) in &e.manual_attributes {
            self.str(key);
            self.str(value);
        }
        self.opt(e.manual_brief.as_deref());
        self.0.push(u8::from(e.pinned));
        self.opt(e.scope_meeting.as_deref());
        self.opt_ts(e.first_observed_at);
        self.opt_ts(e.last_observed_at);
        self.len(e.current_attributes.len());
        for (key, value) in &e.current_attributes {
            self.str(key);
            self.value(value);
        }
        self.str(&e.current_brief);
        self.0
            .extend_from_slice(&e.weight_basis.to_bits().to_le_bytes());
        self.opt_ts(e.weight_latest);
    }

    fn claim(&mut self, c: &ProjectedClaim) {
        self.str(&c.id);
        self.str(&c.predicate);
        self.opt(c.value_text.as_deref());
        self.opt(c.object_entity.as_deref());
        self.opt(c.context_entity.as_deref());
        self.str(c.authority.as_str());
        self.opt_ts(c.valid_from);
        self.opt_ts(c.valid_to);
    }

    fn link(&mut self, l: &ResourceLink) {
        self.str(&l.id);
        self.opt(l.entity.as_deref());
        self.opt(l.meeting.as_deref());
        self.str(l.source_kind.as_str());
        self.str(&l.source_id);
        self.str(l.resource_type.as_str());
        self.str(&l.url);
        self.opt(l.external_key.as_deref());
        self.opt(l.title.as_deref());
        self.str(l.provenance.as_str());
        self.str(&l.ingested_status);
        self.ts(l.first_seen_at);
        self.ts(l.last_seen_at);
    }
}

/// Reads a page back. Every step returns `None` on a buffer it cannot read (which [`encode`] never
/// writes); the caller then queries instead.
struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Decoder<'a> {
    fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn len(&mut self) -> Option<usize> {
        let mut n = 0usize;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            n |= usize::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(n);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a str> {
        let bytes = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        std::str::from_utf8(bytes).ok()
    }

    fn str(&mut self) -> Option<&'a str> {
        let n = self.len()?;
        self.take(n)
    }

    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_string)
    }

    fn opt(&mut self) -> Option<Option<String>> {
        match self.len()? {
            0 => Some(None),
            n => Some(Some(self.take(n - 1)?.to_string())),
        }
    }

    fn ts(&mut self) -> Option<Ts> {
        let n = self.len()? as u64;
        Some(Ts(((n >> 1) as i64) ^ -((n & 1) as i64)))
    }

    fn opt_ts(&mut self) -> Option<Option<Ts>> {
        match self.byte()? {
            0 => Some(None),
            _ => Some(Some(self.ts()?)),
        }
    }

    fn strings(&mut self) -> Option<Vec<String>> {
        self.list(Decoder::string)
    }

    fn list<T>(&mut self, item: fn(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let n = self.len()?;
        let mut items = Vec::with_capacity(n.min(self.bytes.len()));
        for _ in 0..n {
            items.push(item(self)?);
        }
        Some(items)
    }

    fn name<T>(&mut self, parse: fn(&str) -> Option<T>) -> Option<T> {
        parse(self.str()?)
    }

    /// Moves to the start of part `n` (0 entity, 1 claims, 2 links, 3 attached links), after the id.
    fn skip_to(&mut self, n: usize) -> Option<()> {
        let slot = self.bytes.get(self.at + 4 * n..self.at + 4 * n + 4)?;
        self.at = u32::from_le_bytes(slot.try_into().ok()?) as usize;
        Some(())
    }

    fn value(&mut self) -> Option<serde_json::Value> {
        use serde_json::Value;
        Some(match self.byte()? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => Value::Number(self.str()?.parse().ok()?),
            4 => Value::String(self.string()?),
            5 => Value::Array(self.list(Decoder::value)?),
            6 => {
                let n = self.len()?;
                let mut map = serde_json::Map::new();
                for _ in 0..n {
                    let key = self.string()?;
                    map.insert(key, self.value()?);
                }
                Value::Object(map)
            }
            _ => return None,
        })
    }

    fn entity(&mut self) -> Option<Option<Entity>> {
        if self.byte()? == 0 {
            return Some(None);
        }
        let id = self.string()?;
        let kind = self.name(EntityKind::parse)?;
        let canonical_name = self.string()?;
        let manual_name = self.opt()?;
        let normalized_key = self.opt()?;
        let emails = self.strings()?;
        let domains = self.strings()?;
        let external_keys = self.strings()?;
        let status = self.name(EntityStatus::parse)?;
        let merged_into = self.opt()?;
        let do_not_merge_with = self.strings()?;
        let mut manual_attributes = BTreeMap::new();
        for _ in 0..self.len()? {
            let key = self.string()?;
            manual_attributes.insert(key, self.string()?);
        }
        let manual_brief = self.opt()?;
        let pinned = self.byte()? != 0;
        let scope_meeting = self.opt()?;
        let first_observed_at = self.opt_ts()?;
        let last_observed_at = self.opt_ts()?;
        let mut current_attributes = BTreeMap::new();
        for _ in 0..self.len()? {
            let key = self.string()?;
            current_attributes.insert(key, self.value()?);
        }
        let current_brief = self.string()?;
        let bits = self.bytes.get(self.at..self.at + 8)?;
        self.at += 8;
        let weight_basis = f64::from_bits(u64::from_le_bytes(bits.try_into().ok()?));
        let weight_latest = self.opt_ts()?;
        Some(Some(Entity {
            id,
            kind,
            canonical_name,
            manual_name,
            normalized_key,
            emails,
            domains,
            external_keys,
            status,
            merged_into,
            do_not_merge_with,
            manual_attributes,
            manual_brief,
            pinned,
            scope_meeting,
            first_observed_at,
            last_observed_at,
            current_attributes,
            current_brief,
            weight_basis,
            weight_latest,
        }))
    }

    fn claim(&mut self) -> Option<ProjectedClaim> {
        Some(ProjectedClaim {
            id: self.string()?,
            predicate: self.string()?,
            value_text: self.opt()?,
            object_entity: self.opt()?,
            context_entity: self.opt()?,
            authority: self.name(Authority::parse)?,
            valid_from: self.opt_ts()?,
            valid_to: self.opt_ts()?,
        })
    }

    fn link(&mut self) -> Option<ResourceLink> {
        Some(ResourceLink {
            id: self.string()?,
            entity: self.opt()?,
            meeting: self.opt()?,
            source_kind: self.name(SourceKind::parse)?,
            source_id: self.string()?,
            resource_type: self.name(ResourceType::parse)?,
            url: self.string()?,
            external_key: self.opt()?,
            title: self.opt()?,
            provenance: self.name(LinkProvenance::parse)?,
            ingested_status: self.string()?,
            first_seen_at: self.ts()?,
            last_seen_at: self.ts()?,
        })
    }

    fn attached(&mut self) -> Option<AttachedLink> {
        let link = self.link()?;
        Some(AttachedLink {
            attachment: LinkAttachment {
                link: link.id.clone(),
                entity: self.string()?,
                reason: self.string()?,
                evidence: self.opt()?,
                meeting: self.string()?,
            },
            meeting_external_id: self.string()?,
            link,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entity(id: &str) -> Entity {
        Entity {
            id: id.into(),
            kind: EntityKind::Company,
            canonical_name: "Zürich Ünïcode AG".into(),
            manual_name: Some(String::new()),
            normalized_key: None,
            emails: vec![],
            domains: vec!["example.com".into(), "example.org".into()],
            external_keys: vec!["x".repeat(300)],
            status: EntityStatus::Merged,
            merged_into: Some("e_other".into()),
            do_not_merge_with: vec!["e_a".into()],
            manual_attributes: [("role".to_string(), "lead".to_string())].into(),
            manual_brief: None,
            pinned: true,
            scope_meeting: None,
            first_observed_at: Some(Ts(-5)),
            last_observed_at: Some(Ts(1_790_000_000_000)),
            current_attributes: [
                ("works_on".to_string(), json!(["Atlas", "Redis"])),
                ("lead_of".to_string(), json!({"Atlas": "yes"})),
                (
                    "odd".to_string(),
                    json!([null, true, false, 1.5, -7, u64::MAX]),
                ),
            ]
            .into(),
            current_brief: "A company.".into(),
            weight_basis: 0.1 + 0.2,
            weight_latest: None,
        }
    }

    fn claim(id: &str, value: Option<&str>) -> ProjectedClaim {
        ProjectedClaim {
            id: id.into(),
            predicate: "works_at".into(),
            value_text: value.map(str::to_string),
            object_entity: value.is_none().then(|| "e_acme".to_string()),
            context_entity: None,
            authority: Authority::FirstParty,
            valid_from: Some(Ts(0)),
            valid_to: None,
        }
    }

    fn link(id: &str) -> ResourceLink {
        ResourceLink {
            id: id.into(),
            entity: Some("e_1".into()),
            meeting: None,
            source_kind: SourceKind::Meeting,
            source_id: "m_1".into(),
            resource_type: ResourceType::GithubPr,
            url: "https://example.com/a?b=c".into(),
            external_key: Some("org/repo#1".into()),
            title: None,
            provenance: LinkProvenance::MeetingChat,
            ingested_status: "url_only".into(),
            first_seen_at: Ts(i64::MIN / 4),
            last_seen_at: Ts(i64::MAX / 4),
        }
    }

    fn attached(id: &str, evidence: Option<&str>) -> AttachedLink {
        AttachedLink {
            link: ResourceLink {
                entity: None,
                meeting: Some("m_1".into()),
                ..link(id)
            },
            attachment: LinkAttachment {
                link: id.into(),
                entity: "e_1".into(),
                meeting: "m_1".into(),
                reason: "claim".into(),
                evidence: evidence.map(str::to_string),
            },
            meeting_external_id: "standup-2026-03-02".into(),
        }
    }

    /// Every field of every row comes back as it went in, from the index itself (`Some`), not from
    /// the fallback to queries a buffer it cannot read would cause.
    #[test]
    fn pages_read_back_what_was_encoded() {
        // An entity with claims and links, an id that only claims name (no entity row), and an
        // entity row alone.
        let pages = [
            (
                "e_1",
                Page {
                    entity: Some(entity("e_1")),
                    claims: vec![claim("c_1", None), claim("c_2", Some("émoji 🦀"))],
                    links: vec![link("r_1"), link("r_2")],
                    attached: vec![attached("r_3", Some("ev_1")), attached("r_4", None)],
                },
            ),
            (
                "e_2",
                Page {
                    entity: None,
                    claims: vec![claim("c_3", Some(""))],
                    ..Page::default()
                },
            ),
            (
                "e_3",
                Page {
                    entity: Some(entity("e_3")),
                    ..Page::default()
                },
            ),
        ];
        let mut index = PageIndex::default();
        let mut buffer = Encoder(Vec::new());
        for (id, page) in &pages {
            index.insert(id, page, &mut buffer);
        }
        assert_eq!(index.entity("e_1"), Some(Some(entity("e_1"))));
        assert_eq!(
            index.projected_claims("e_1"),
            Some(vec![claim("c_1", None), claim("c_2", Some("émoji 🦀"))])
        );
        assert_eq!(index.links("e_1"), Some(vec![link("r_1"), link("r_2")]));
        assert_eq!(
            index.attached("e_1"),
            Some(vec![attached("r_3", Some("ev_1")), attached("r_4", None)])
        );
        assert_eq!(index.entity("e_2"), Some(None));
        assert_eq!(
            index.projected_claims("e_2"),
            Some(vec![claim("c_3", Some(""))])
        );
        assert_eq!(index.links("e_2"), Some(vec![]));
        assert_eq!(index.attached("e_2"), Some(vec![]));
        assert_eq!(index.entity("e_3"), Some(Some(entity("e_3"))));
        assert_eq!(index.projected_claims("e_3"), Some(vec![]));
        // An id with no page: nothing, without asking the database.
        assert_eq!(index.entity("e_9"), Some(None));
        assert_eq!(index.projected_claims("e_9"), Some(vec![]));
        assert_eq!(index.links("e_9"), Some(vec![]));
        assert_eq!(index.attached("e_9"), Some(vec![]));
        assert_eq!(index.held().entities, 2);
        assert_eq!(index.held().left_to_queries, 0);
    }

    /// An id whose hash another id shares is not answered (the store queries it), and a damaged
    /// buffer is not either: neither is ever answered wrongly.
    #[test]
    fn shared_hashes_and_damaged_pages_are_left_to_queries() {
        let page = Page {
            entity: Some(entity("e_2")),
            claims: vec![claim("c_1", None)],
            links: vec![link("r_1")],
            attached: vec![attached("r_2", None)],
        };
        let mut index = PageIndex::default();
        let mut buffer = Encoder(Vec::new());
        // A second page under a key already taken (what two ids with one hash would do).
        index.insert("e_1", &page, &mut buffer);
        index.insert("e_1", &page, &mut buffer);
        assert_eq!(index.entity("e_1"), None);
        assert_eq!(index.projected_claims("e_1"), None);
        assert_eq!(index.held().bytes, index.pages.capacity() * 25);
        assert_eq!(index.held().left_to_queries, 1);
        let mut whole = Encoder(Vec::new());
        encode("e_2", &page, &mut whole);
        let whole = whole.0;
        index
            .pages
            .insert(digest("e_2"), whole[..whole.len() - 3].into());
        assert_eq!(index.entity("e_2"), Some(Some(entity("e_2"))));
        assert_eq!(index.links("e_2"), Some(vec![link("r_1")]));
        assert_eq!(index.attached("e_2"), None);
        // A different id under the same key (as if hashes collided) reads as no page.
        index.pages.insert(digest("e_3"), whole.into());
        assert_eq!(index.entity("e_3"), Some(None));
    }
}
