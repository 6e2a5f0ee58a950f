//! The read side's SQL: full-text search (FTS5), the graph neighborhood, transaction-time history,
//! deadlines and tasks. Hot queries are constants so that a test can check their query plans
//! (`EXPLAIN QUERY PLAN`) against the very text the store runs.

use lore_core::model::*;
use lore_core::search::{SearchQuery, SearchTerm};
use lore_core::Ts;
use rusqlite::{params, OptionalExtension};

use super::ranking;
use super::rows::*;
use super::{backend, SqliteTx, CLAIM_COLUMNS, LINK_COLUMNS, TASK_COLUMNS};
use crate::{MeetingLink, ProjectedClaim, SearchCandidate, StoreError, StoreResult};

/// Candidates: the owner's newest-indexed matches (of the kind, if given), bounded, with their bm25
/// rank (scope column weight 0). The window is found with the scoped expression `?1` and no ranking
/// (FTS5 stops after `?2` rows); bm25 is then computed with the body-only expression `?4` over the
/// window's rowid range. The rank is the same number either way (a scope phrase has weight 0 and every
/// phrase's document frequency is counted over the whole index), but bm25 no longer walks the scope
/// tokens' posting lists, which hold every document of the owner. Rows of other owners or kinds that
/// fall in the range are dropped by the join, so the rows are exactly the window's.
pub const SEARCH_CANDIDATES: &str =
    "SELECT d.doc, d.kind, d.ref, d.meeting, d.start_ms, d.at, c.rank \
     FROM (SELECT rowid AS doc, bm25(search_fts, 0.0, 1.0) AS rank FROM search_fts \
           WHERE search_fts MATCH ?4 AND rowid >= (SELECT min(w.doc) FROM (SELECT rowid AS doc \
             FROM search_fts WHERE search_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2) AS w)) AS c \
     JOIN search_docs AS d ON d.doc = c.doc WHERE d.owner = ?3 AND (?5 IS NULL OR d.kind = ?5)";
/// Candidates, first try: the body-only expression's matches newest first, each joined to its
/// document, flagged when it is the owner's (and of the kind), and ranked only then. The first `?`
/// flagged rows are exactly the window `SEARCH_CANDIDATES` finds (a document carries its owner's and
/// kind's scope tokens exactly when its row has that owner and kind) with the same bm25 (same
/// expression, same documents), found without walking the scope tokens' posting lists backwards,
/// which costs a pass over the whole index when the user's words are rare. The reader stops after
/// the window is full, or gives up for `SEARCH_CANDIDATES` after a bounded number of other owners'
/// or kinds' matches.
pub const SEARCH_NEWEST_MATCHES: &str =
    "SELECT search_fts.rowid, d.owner = ?2 AND (?3 IS NULL OR d.kind = ?3), d.kind, d.ref, d.meeting, \
       d.start_ms, d.at, CASE WHEN d.owner = ?2 AND (?3 IS NULL OR d.kind = ?3) \
       THEN bm25(search_fts, 0.0, 1.0) END \
     FROM search_fts JOIN search_docs AS d ON d.doc = search_fts.rowid \
     WHERE search_fts MATCH ?1 ORDER BY search_fts.rowid DESC";
/// `SEARCH_NEWEST_MATCHES` without the rank: each flagged row's scope and body instead, from which
/// `ranking` computes the same bm25.
pub const SEARCH_NEWEST_TEXTS: &str =
    "SELECT search_fts.rowid, d.owner = ?2 AND (?3 IS NULL OR d.kind = ?3), d.kind, d.ref, d.meeting, \
       d.start_ms, d.at, d.scope, d.body \
     FROM search_fts JOIN search_docs AS d ON d.doc = search_fts.rowid \
     WHERE search_fts MATCH ?1 ORDER BY search_fts.rowid DESC";
/// The index's totals (rows, tokens per column) for bm25's average row size.
pub const SEARCH_TOTALS: &str = "SELECT block FROM search_fts_data WHERE id = 1";
/// The documents whose body holds a token (schema_v13.sql).
pub const SEARCH_TOKEN_DOCUMENTS: &str = "SELECT docs FROM search_terms WHERE term = ?1";
/// The index's terms (its vocabulary, `SEARCH_VOCABULARY`) that
/// `search_terms` lacks or counts otherwise, and the counts of terms the index does not hold.
pub const SEARCH_TERMS_MISMATCH: &str = "SELECT \
     (SELECT count(*) FROM (SELECT term, doc FROM temp.search_vocab WHERE col = 'body' AND doc > 0 \
                            EXCEPT SELECT term, docs FROM search_terms)), \
     (SELECT count(*) FROM (SELECT term, docs FROM search_terms \
                            EXCEPT SELECT term, doc FROM temp.search_vocab WHERE col = 'body'))";
/// The index's vocabulary by column, in the connection's temporary schema (so a read-only
/// connection can have it too), for `SEARCH_TERMS_MISMATCH`.
pub const SEARCH_VOCABULARY: &str =
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_vocab USING fts5vocab(main, search_fts, col)";
/// The documents that match a phrase of several tokens.
pub const SEARCH_PHRASE_DOCUMENTS: &str =
    "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?1";
/// The queued documents (`count_search_terms`): whether each was indexed, the old text it was
/// indexed with, and its text now (NULL once deleted). The queue leads: it holds a transaction's
/// documents, a few hundred at most, where `search_docs` holds every one.
pub const SEARCH_PENDING_TEXTS: &str = "SELECT p.scope IS NOT NULL, p.body, d.body \
     FROM search_pending AS p LEFT JOIN search_docs AS d ON d.doc = p.doc";
/// FTS5's own rank of the matches in a rowid range, for candidates `ranking` cannot tokenize.
pub const SEARCH_RANKS_IN_RANGE: &str = "SELECT rowid, bm25(search_fts, 0.0, 1.0) FROM search_fts \
     WHERE search_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3";
/// Matches of other owners or kinds read before the first try gives up, per candidate wanted.
const OTHER_MATCHES_PER_CANDIDATE: usize = 3;
/// Documents the search index does not hold, and documents it holds that no longer exist (its
/// `docsize` table has one row per indexed document) and whose deletion is not deferred
/// (schema_v14.sql); a deferred deletion the index does not hold counts as one it holds wrongly.
pub const SEARCH_INDEX_MISMATCH: &str = "SELECT \
     (SELECT count(*) FROM search_docs AS d \
      WHERE NOT EXISTS (SELECT 1 FROM search_fts_docsize AS s WHERE s.id = d.doc)), \
     (SELECT count(*) FROM search_fts_docsize AS s \
      WHERE NOT EXISTS (SELECT 1 FROM search_docs AS d WHERE d.doc = s.id) \
        AND NOT EXISTS (SELECT 1 FROM search_deferred AS q WHERE q.doc = s.id)) \
     + (SELECT count(*) FROM search_deferred AS q \
        WHERE NOT EXISTS (SELECT 1 FROM search_fts_docsize AS s WHERE s.id = q.doc) \
           OR EXISTS (SELECT 1 FROM search_docs AS d WHERE d.doc = q.doc))";
/// The text of the owner's documents among a JSON list of ids, for their snippets.
pub const SEARCH_SNIPPET_TEXTS: &str = "SELECT doc, body FROM search_docs \
     WHERE doc IN (SELECT value FROM json_each(?2)) AND owner = ?1 ORDER BY doc";
/// The index's tokenizer (schema_v11.sql), which the snippets' scratch index must share so that it
/// marks the words the search matched; a test holds the two equal.
pub const SEARCH_TOKENIZER: &str = "porter unicode61 remove_diacritics 2";

thread_local! {
    /// Each thread's scratch index for snippets: a private in-memory database whose full-text table
    /// has the search index's columns and tokenizer. The search index keeps no text
    /// (schema_v11.sql), so FTS5's `snippet()` cannot run on it; the hits' texts are indexed here
    /// inside a transaction that is rolled back, and `snippet()` runs on them with the same
    /// expression. A snippet depends only on the document and the expression's matches in it (no
    /// statistic of the whole index), so it is the one the search index would give.
    static SNIPPET_SCRATCH: std::cell::RefCell<Option<rusqlite::Connection>> =
        const { std::cell::RefCell::new(None) };
}

/// The snippets of `texts` (document, text) that match the body-only `expression`, as the search
/// index's `snippet(search_fts, 1, '[', ']', '…', 16)` would give them.
pub fn snippets_of(expression: &str, texts: &[(i64, String)]) -> StoreResult<Vec<(i64, String)>> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    SNIPPET_SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        let connection: &rusqlite::Connection = match &mut *scratch {
            Some(connection) => connection,
            empty => {
                let connection = rusqlite::Connection::open_in_memory().map_err(backend)?;
                connection
                    .execute_batch(&format!(
                        "CREATE VIRTUAL TABLE snippets USING fts5(scope, body, tokenize = '{SEARCH_TOKENIZER}')"
                    ))
                    .map_err(backend)?;
                empty.insert(connection)
            }
        };
        connection.execute_batch("BEGIN").map_err(backend)?;
        let snippets = (|| {
            let mut insert = connection
                .prepare_cached("INSERT INTO snippets (rowid, body) VALUES (?1, ?2)")?;
            for (doc, text) in texts {
                insert.execute(params![doc, text])?;
            }
            let mut select = connection.prepare_cached(
                "SELECT rowid, snippet(snippets, 1, '[', ']', '…', 16) FROM snippets \
                 WHERE snippets MATCH ?1 ORDER BY rowid",
            )?;
            let rows = select.query_map(params![expression], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<rusqlite::Result<Vec<(i64, String)>>>()
        })();
        // Nothing of the scratch index outlives the call, whatever happened.
        connection.execute_batch("ROLLBACK").map_err(backend)?;
        snippets.map_err(|error| search_error(backend(error)))
    })
}

/// The projection's claims: the active ones only (the `claims_by_subject` index leads with owner,
/// subject and status), and only the columns the entity page shows.
pub const PROJECTED_CLAIMS: &str =
    "SELECT id, predicate, value_text, object_entity, context_entity, authority, valid_from, valid_to \
     FROM claims WHERE owner = ?1 AND subject = ?2 AND status = 'active' ORDER BY predicate, id";
/// `--known-at`: each claim's latest status row at or before a transaction time.
pub const STATUS_AS_OF: &str =
    "SELECT h.claim, h.recorded_at, h.derived FROM claim_status_history AS h \
     WHERE h.owner = ?1 AND h.claim IN (SELECT id FROM claims WHERE owner = ?1 AND subject = ?2) \
     AND h.seq = (SELECT max(seq) FROM claim_status_history \
                  WHERE owner = ?1 AND claim = h.claim AND recorded_at <= ?3) ORDER BY h.claim";
/// An entity's resource links, oldest first.
pub static LINKS_BY_ENTITY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {LINK_COLUMNS} FROM resource_links WHERE owner = ?1 AND entity = ?2 \
         ORDER BY first_seen_at, id"
    )
});
/// An entity's attached meeting links (`Tx::list_attached_links`; PostgreSQL runs the same text).
pub static ATTACHED_LINKS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| attached_links("AND entity = ?2", "a_link"));
/// Every attached link of the owner, by entity (the entity pages' build).
pub static ALL_ATTACHED_LINKS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| attached_links("", "a_entity, a_link"));

/// Attachments joined to their link, which must be one of the attaching meeting's links, and to the
/// meeting's external id. The attachment's columns are renamed so that the link's need no prefix:
/// the link's columns, then entity, reason, evidence, meeting and the meeting's external id.
fn attached_links(filter: &str, order: &str) -> String {
    format!(
        "WITH a (a_entity, a_link, a_meeting, a_reason, a_evidence) AS (\
         SELECT entity, link, meeting, reason, evidence FROM link_attachments \
         WHERE owner = ?1 {filter}) \
         SELECT {LINK_COLUMNS}, a_entity, a_reason, a_evidence, a_meeting, \
         COALESCE((SELECT external_id FROM meetings WHERE owner = ?1 AND id = a_meeting), a_meeting) \
         FROM a JOIN resource_links ON owner = ?1 AND id = a_link AND meeting = a_meeting \
         ORDER BY {order}"
    )
}
pub const CLAIMS_BY_PREDICATE: &str = "FROM claims WHERE owner = ?1 AND predicate = ?2 ORDER BY id";
/// Graph, one hop from an entity through claims: written with `IN (SELECT ...)`, never a JOIN
/// (PERF-NOTES: a JOIN here makes SQLite scan the whole claims index through a Bloom filter).
pub const CLAIMS_LINKING: &str = "FROM claims WHERE owner = ?1 AND id IN (\
     SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 AND object_entity IS NOT NULL \
     UNION SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 AND context_entity IS NOT NULL \
     UNION SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2 \
     UNION SELECT id FROM claims WHERE owner = ?1 AND context_entity = ?2) \
     ORDER BY status = 'active' DESC, last_observed_at DESC, id LIMIT ?3";
/// Graph, entity to meetings: attendance, and evidence of claims about the entity (two hops, IN).
pub const MEETING_LINKS_BY_ENTITY: &str = "SELECT l.meeting, l.relation FROM (\
     SELECT meeting, 'attended' AS relation FROM participants WHERE owner = ?1 AND person_entity = ?2 \
     UNION SELECT meeting, 'mentioned_in' FROM evidence WHERE owner = ?1 AND meeting IS NOT NULL \
       AND claim IN (SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 \
                     UNION ALL SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2)) AS l \
     ORDER BY (SELECT started_at FROM meetings WHERE owner = ?1 AND id = l.meeting) DESC, l.meeting, l.relation \
     LIMIT ?3";
/// Graph, meeting to entities: participants, and subjects and objects of the claims its evidence supports.
pub const MEETING_LINKS_BY_MEETING: &str = "SELECT entity, relation FROM (\
     SELECT person_entity AS entity, 'attended' AS relation FROM participants \
       WHERE owner = ?1 AND meeting = ?2 AND person_entity IS NOT NULL \
     UNION SELECT subject, 'mentioned_in' FROM claims \
       WHERE owner = ?1 AND id IN (SELECT claim FROM evidence WHERE owner = ?1 AND meeting = ?2) \
     UNION SELECT object_entity, 'mentioned_in' FROM claims WHERE owner = ?1 AND object_entity IS NOT NULL \
       AND id IN (SELECT claim FROM evidence WHERE owner = ?1 AND meeting = ?2)) \
     ORDER BY entity, relation LIMIT ?3";
/// Claims by id (`?2` a JSON array of ids, `Tx::find_claims`): the primary key probed in id order.
pub const CLAIMS_BY_IDS: &str =
    "FROM claims WHERE owner = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id";
/// The evidence rows of the entity's claims (`?2` is the entity), a literal so that
/// `ENTITY_OBSERVATIONS` and `OBSERVATION_TIMES` can be built from it, and the entity's names.
///
/// A loop over the subject's claims (`c`) with a lookup of each claim's evidence (`e`), not
/// `claim IN (SELECT ...)`: SQLite would first copy the claims' ids into a temporary b-tree, one
/// insert per claim of a hub and a b-tree built and dropped per call. `CROSS JOIN` fixes the order
/// of the loops in SQLite (claims outside); it is a plain join on PostgreSQL.
macro_rules! subject_evidence {
    () => {
        "FROM claims AS c CROSS JOIN evidence AS e \
         WHERE c.owner = ?1 AND c.subject = ?2 AND e.owner = ?1 AND e.claim = c.id"
    };
}
macro_rules! entity_names {
    () => {
        "FROM entity_aliases WHERE owner = ?1 AND entity = ?2"
    };
}
/// What an entity rebuild reads of its observations (`Tx::entity_observations`), in one statement:
/// the evidence times of its claims (no name), then its names with the times they were said.
pub const ENTITY_OBSERVATIONS: &str = concat!(
    "SELECT NULL, e.observed_at ",
    subject_evidence!(),
    " UNION ALL SELECT alias, observed_at ",
    entity_names!()
);
/// Topic weight inputs (L19): evidence times of the entity's claims and the times it was named.
pub const OBSERVATION_TIMES: &str = concat!(
    "SELECT e.observed_at ",
    subject_evidence!(),
    " UNION ALL SELECT observed_at ",
    entity_names!()
);
/// A slot's claims joined to their rows of another table (`?2`, `?3`, `?4`: subject, predicate,
/// context), written as loops like `subject_evidence!`: the slot's claims through `claims_by_slot`,
/// each claim's rows through the table's own index, and no temporary b-tree of ids.
macro_rules! slot_claims_join {
    ($table:literal) => {
        concat!(
            "FROM claims AS c CROSS JOIN ",
            $table,
            " AS r WHERE c.owner = ?1 AND c.subject = ?2 AND c.predicate = ?3 \
             AND c.context_entity IS ?4 AND r.owner = ?1 AND r.claim = c.id"
        )
    };
}
/// A column list (`EVIDENCE_COLUMNS`) with every column read through `alias`: the joins with claims
/// share column names (`id`, `recorded_at`).
fn qualified(columns: &str, alias: &str) -> String {
    columns
        .split(',')
        .map(|column| format!("{alias}.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}
/// A slot's evidence (`Tx::list_evidence_by_slot`).
pub static EVIDENCE_BY_SLOT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {} {} ORDER BY r.claim, r.observed_at, r.start_ms, r.id",
        qualified(super::EVIDENCE_COLUMNS, "r"),
        slot_claims_join!("evidence")
    )
});
/// The evidence of an entity's claims (`Tx::list_evidence_by_subject`, the entity view).
pub static EVIDENCE_BY_SUBJECT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT {} {} ORDER BY e.claim, e.observed_at, e.start_ms, e.id",
        qualified(super::EVIDENCE_COLUMNS, "e"),
        subject_evidence!()
    )
});
/// A slot's status history (`Tx::list_status_changes_by_slot`), by claim and sequence.
pub const STATUS_CHANGES_BY_SLOT: &str = concat!(
    "SELECT r.claim, r.recorded_at, r.derived ",
    slot_claims_join!("claim_status_history"),
    " ORDER BY r.claim, r.seq"
);
/// A slot's supersedes links (`Tx::list_supersedes_links_by_slot`).
pub const SUPERSEDES_BY_SLOT: &str = concat!(
    "SELECT r.claim, r.target, r.evidence ",
    slot_claims_join!("claim_supersedes"),
    " ORDER BY r.claim, r.target, r.evidence"
);
pub const TASKS_BY_ASSIGNEE: &str =
    "FROM tasks WHERE owner = ?1 AND assignee = ?2 ORDER BY due_at, created_at, id";

/// What `Store::prewarm` runs on the reader connection: one walk over every page of each b-tree the
/// per-entity reads descend (the entity row, the projection's active claims and resource links, the
/// graph's claims by object), with the plan each walk must have (checked by the query-plan test). A
/// page walk answers nothing: the sums are discarded, and no row of any owner leaves the store.
pub const PREWARM: [(&str, &str); 4] = [
    (
        "SELECT sum(length(current_brief)) FROM entities NOT INDEXED",
        "SCAN entities",
    ),
    (
        "SELECT sum(length(value_text)) FROM claims INDEXED BY claims_by_subject",
        "SCAN claims USING COVERING INDEX claims_by_subject",
    ),
    (
        "SELECT sum(length(subject)) FROM claims INDEXED BY claims_by_object \
         WHERE object_entity IS NOT NULL",
        "SCAN claims USING COVERING INDEX claims_by_object",
    ),
    (
        "SELECT sum(first_seen_at) FROM resource_links INDEXED BY resource_links_by_entity",
        "SCAN resource_links USING COVERING INDEX resource_links_by_entity",
    ),
];

/// Entity resolution: the entities a name key belongs to (`Tx::list_entities_by_alias_key`), from
/// the distinct pairs schema_v7.sql keeps.
pub const ENTITIES_BY_ALIAS_KEY: &str =
    "SELECT entity FROM entity_alias_keys WHERE owner = ?1 AND alias_key = ?2 ORDER BY entity";
/// `integrity_problems`: the name keys missing from `entity_alias_keys`, and its pairs no name has.
pub const ALIAS_KEYS_MISMATCH: &str = "SELECT \
     (SELECT count(*) FROM (SELECT owner, alias_key, entity FROM entity_aliases \
      EXCEPT SELECT owner, alias_key, entity FROM entity_alias_keys)), \
     (SELECT count(*) FROM (SELECT owner, alias_key, entity FROM entity_alias_keys \
      EXCEPT SELECT owner, alias_key, entity FROM entity_aliases))";
/// Erasure: the revisions whose rows name a meeting (`Tx::list_revisions_naming_meeting`).
pub const REVISIONS_NAMING_MEETING: &str =
    "SELECT revision FROM revision_meetings WHERE owner = ?1 AND meeting = ?2 ORDER BY revision";

/// Hot queries with the index each must use, for the query-plan test and ARCHITECTURE.md. Statements
/// the store assembles at run time are assembled here the same way, so the test checks the very text
/// the store runs. The first entries mirror the write side's reads (projection, cascade).
pub fn hot_queries() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "projection: claims by subject",
            "SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 ORDER BY predicate, id".into(),
            "claims_by_slot (owner=? AND subject=?)",
        ),
        (
            "deletion: claims by id",
            format!("SELECT id {CLAIMS_BY_IDS}"),
            "claims USING PRIMARY KEY (owner=? AND id=?)",
        ),
        (
            "entity resolution: entities by name key",
            ENTITIES_BY_ALIAS_KEY.into(),
            "entity_alias_keys USING PRIMARY KEY (owner=? AND alias_key=?)",
        ),
        (
            "erasure: revisions naming a meeting",
            REVISIONS_NAMING_MEETING.into(),
            "revision_meetings USING PRIMARY KEY (owner=? AND meeting=?)",
        ),
        (
            "claims by object (mentions)",
            "SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2 AND status = 'active'".into(),
            "claims_by_object",
        ),
        (
            "claims by context (mentions)",
            "SELECT id FROM claims WHERE owner = ?1 AND context_entity = ?2".into(),
            "claims_by_context",
        ),
        (
            "evidence by claim",
            "SELECT id FROM evidence WHERE owner = ?1 AND claim = ?2 ORDER BY observed_at, start_ms, id".into(),
            "evidence_by_claim (owner=? AND claim=?)",
        ),
        (
            "cascade: evidence by meeting",
            "SELECT id FROM evidence WHERE owner = ?1 AND meeting = ?2 ORDER BY id".into(),
            "evidence_by_meeting",
        ),
        (
            "cascade: evidence by source",
            "SELECT id FROM evidence WHERE owner = ?1 AND source_kind = ?2 AND source_id = ?3 ORDER BY id"
                .into(),
            "evidence_by_source",
        ),
        (
            "graph: claims linking an entity",
            format!("SELECT {CLAIM_COLUMNS} {CLAIMS_LINKING}"),
            "claims_by_object",
        ),
        (
            "graph: meetings of an entity",
            MEETING_LINKS_BY_ENTITY.into(),
            "evidence_by_claim (owner=? AND claim=?)",
        ),
        (
            "graph: entities of a meeting",
            MEETING_LINKS_BY_MEETING.into(),
            "evidence_by_meeting (owner=? AND meeting=?)",
        ),
        (
            "topic weight: observation times",
            OBSERVATION_TIMES.into(),
            "evidence_by_claim (owner=? AND claim=?)",
        ),
        (
            "entity rebuild: evidence times and names",
            ENTITY_OBSERVATIONS.into(),
            "evidence_by_claim (owner=? AND claim=?)",
        ),
        (
            "entity view: the subject's evidence",
            EVIDENCE_BY_SUBJECT.clone(),
            "evidence_by_claim (owner=? AND claim=?)",
        ),
        (
            "settle: a slot's evidence",
            EVIDENCE_BY_SLOT.clone(),
            "evidence_by_claim (owner=? AND claim=?)",
        ),
        (
            "settle: a slot's status history",
            STATUS_CHANGES_BY_SLOT.into(),
            "SEARCH r USING PRIMARY KEY (owner=? AND claim=?)",
        ),
        (
            "settle: a slot's supersedes links",
            SUPERSEDES_BY_SLOT.into(),
            "SEARCH r USING PRIMARY KEY (owner=? AND claim=?)",
        ),
        (
            "known-at: status as of",
            STATUS_AS_OF.into(),
            "claim_status_history USING PRIMARY KEY (owner=? AND claim=?)",
        ),
        (
            "deadlines: claims by predicate",
            format!("SELECT {CLAIM_COLUMNS} {CLAIMS_BY_PREDICATE}"),
            "claims_by_predicate (owner=? AND predicate=?)",
        ),
        (
            "tasks by assignee",
            format!("SELECT {TASK_COLUMNS} {TASKS_BY_ASSIGNEE}"),
            "tasks_by_assignee",
        ),
        ("search: candidates", SEARCH_CANDIDATES.into(), "VIRTUAL TABLE INDEX"),
        (
            "search terms: the queued documents' texts",
            SEARCH_PENDING_TEXTS.into(),
            "SEARCH d USING INTEGER PRIMARY KEY",
        ),
        (
            "search terms: a token's documents",
            SEARCH_TOKEN_DOCUMENTS.into(),
            "search_terms USING PRIMARY KEY",
        ),
        (
            "search: newest matches",
            SEARCH_NEWEST_MATCHES.into(),
            "SEARCH d USING INTEGER PRIMARY KEY",
        ),
        (
            "projection: active claims",
            PROJECTED_CLAIMS.into(),
            "COVERING INDEX claims_by_subject (owner=? AND subject=? AND status=?)",
        ),
        (
            "projection: resource links",
            LINKS_BY_ENTITY.clone(),
            "COVERING INDEX resource_links_by_entity (owner=? AND entity=?)",
        ),
        (
            "projection: attached meeting links",
            ATTACHED_LINKS.clone(),
            "link_attachments_by_entity (owner=? AND entity=?)",
        ),
    ]
}

/// The FTS5 token every document of an owner carries in its `scope` column (see the schema).
fn owner_token(owner: &str) -> String {
    let hex: String = owner.bytes().map(|b| format!("{b:02X}")).collect();
    format!("o{hex}")
}

fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

fn render_term(term: &SearchTerm) -> String {
    match term {
        SearchTerm::Word { text, prefix: true } => format!("{} *", quoted(text)),
        SearchTerm::Word { text, .. } | SearchTerm::Phrase(text) => quoted(text),
    }
}

/// Renders a parsed query into an FTS5 expression, scoped to the owner (and kind) by the scope tokens.
/// Every user word is a quoted string, so no user text is ever read as FTS5 syntax.
pub fn fts_expression(owner: &str, query: &SearchQuery, kind: Option<&str>) -> String {
    let mut scope = quoted(&owner_token(owner));
    if let Some(kind) = kind {
        scope.push_str(" AND ");
        scope.push_str(&quoted(&format!("k{kind}")));
    }
    format!("scope : ({scope}) AND {}", fts_body_expression(query))
}

/// The user's part of the expression alone, restricted to the body column.
pub fn fts_body_expression(query: &SearchQuery) -> String {
    let groups: Vec<String> = query
        .required
        .iter()
        .map(|group| {
            let terms: Vec<String> = group.iter().map(render_term).collect();
            format!("({})", terms.join(" OR "))
        })
        .collect();
    let mut body = format!("({})", groups.join(" AND "));
    for excluded in &query.excluded {
        body.push_str(" NOT ");
        body.push_str(&render_term(excluded));
    }
    format!("body : ({body})")
}

fn search_error(error: StoreError) -> StoreError {
    match error {
        StoreError::Backend(message) if message.contains("fts5") => {
            StoreError::Conflict(format!("search query: {message}"))
        }
        other => other,
    }
}

impl SqliteTx<'_> {
    pub(super) fn read_search_candidates(
        &self,
        query: &SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<SearchCandidate>> {
        if let Some(candidates) = self.read_newest_matches(query, kind, limit)? {
            return Ok(candidates);
        }
        let expression = fts_expression(self.owner, query, kind);
        self.all(
            SEARCH_CANDIDATES,
            params![
                expression,
                limit as i64,
                self.owner,
                fts_body_expression(query),
                kind
            ],
            |row| {
                Ok(SearchCandidate {
                    doc: row.get(0)?,
                    kind: row.get(1)?,
                    reference: row.get(2)?,
                    meeting: row.get(3)?,
                    start_ms: row.get(4)?,
                    at: row.get::<_, Option<i64>>(5)?.map(Ts),
                    rank: row.get(6)?,
                })
            },
        )
        .map_err(search_error)
    }

    pub(super) fn read_search_snippet(
        &self,
        query: &SearchQuery,
        doc: i64,
    ) -> StoreResult<Option<String>> {
        Ok(self
            .read_search_snippets(query, &[doc])?
            .pop()
            .map(|(_, snippet)| snippet))
    }

    /// The window of `read_search_candidates` from the newest body matches, or `None` when too many
    /// of them are other owners' or kinds'. Ranked by `ranking` when the query's terms are words or
    /// phrases it can tokenize (`SEARCH_NEWEST_TEXTS`), else by FTS5 (`SEARCH_NEWEST_MATCHES`).
    fn read_newest_matches(
        &self,
        query: &SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Option<Vec<SearchCandidate>>> {
        if limit == 0 {
            return Ok(Some(Vec::new()));
        }
        let ranked = match ranking::Phrases::of(query) {
            Some(phrases) => self
                .search_statistics(query, &phrases)?
                .map(|statistics| (phrases, statistics)),
            None => None,
        };
        let Some((phrases, statistics)) = ranked else {
            return self
                .newest_matches(SEARCH_NEWEST_MATCHES, query, kind, limit, |row| row.get(7));
        };
        let mut frequencies = Vec::with_capacity(phrases.len());
        let mut untokenized = Vec::new();
        let found = self.newest_matches(SEARCH_NEWEST_TEXTS, query, kind, limit, |row| {
            let text = |index| row.get_ref(index).and_then(|value| Ok(value.as_str()?));
            Ok(match phrases.count(text(7)?, text(8)?, &mut frequencies) {
                Some(size) => statistics.rank(size, &frequencies),
                None => {
                    untokenized.push(row.get::<_, i64>(0)?);
                    f64::NAN
                }
            })
        })?;
        let Some(mut found) = found else {
            return Ok(None);
        };
        if let (Some(&newest), Some(&oldest)) = (untokenized.first(), untokenized.last()) {
            let ranks: std::collections::HashMap<i64, f64> = self
                .all(
                    SEARCH_RANKS_IN_RANGE,
                    params![fts_body_expression(query), oldest, newest],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .map_err(search_error)?
                .into_iter()
                .collect();
            for candidate in &mut found {
                if candidate.rank.is_nan() {
                    candidate.rank = ranks.get(&candidate.doc).copied().ok_or_else(|| {
                        StoreError::Backend(format!(
                            "search document {} has no rank in its own range",
                            candidate.doc
                        ))
                    })?;
                }
            }
        }
        Ok(Some(found))
    }

    /// The index-wide figures of bm25 for the query's phrases; `None` for an index without rows.
    fn search_statistics(
        &self,
        query: &SearchQuery,
        phrases: &ranking::Phrases,
    ) -> StoreResult<Option<ranking::Statistics>> {
        let fail = |error| search_error(backend(error));
        let record: Option<Vec<u8>> = self
            .connection
            .prepare_cached(SEARCH_TOTALS)
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)).optional())
            .map_err(fail)?;
        let Some((rows, tokens)) = record.as_deref().and_then(ranking::totals) else {
            return Ok(None);
        };
        let mut matching = Vec::with_capacity(phrases.len());
        for (term, stem) in query.required.iter().flatten().zip(phrases.single_stems()) {
            let count: i64 = match stem {
                Some(token) => self
                    .connection
                    .prepare_cached(SEARCH_TOKEN_DOCUMENTS)
                    .and_then(|mut statement| {
                        statement
                            .query_row([String::from_utf8_lossy(token)], |row| row.get(0))
                            .optional()
                    })
                    .map_err(fail)?
                    .unwrap_or(0),
                None => self
                    .connection
                    .prepare_cached(SEARCH_PHRASE_DOCUMENTS)
                    .and_then(|mut statement| {
                        statement
                            .query_row([format!("body : {}", render_term(term))], |row| row.get(0))
                    })
                    .map_err(fail)?,
            };
            matching.push(count);
        }
        Ok(Some(ranking::Statistics::new(rows, tokens, &matching)))
    }

    /// The newest body matches of `sql` (`SEARCH_NEWEST_MATCHES` or `SEARCH_NEWEST_TEXTS`), the
    /// owner's (and kind's) up to `limit`, each ranked by `rank`; `None` when too many of them are
    /// other owners' or kinds'.
    fn newest_matches(
        &self,
        sql: &str,
        query: &SearchQuery,
        kind: Option<&str>,
        limit: usize,
        mut rank: impl FnMut(&rusqlite::Row) -> rusqlite::Result<f64>,
    ) -> StoreResult<Option<Vec<SearchCandidate>>> {
        let mut found = Vec::new();
        let fail = |error| search_error(backend(error));
        let mut statement = self.connection.prepare_cached(sql).map_err(fail)?;
        let mut rows = statement
            .query(params![fts_body_expression(query), self.owner, kind])
            .map_err(fail)?;
        let mut others = 0usize;
        while let Some(row) = rows.next().map_err(fail)? {
            if !row.get::<_, bool>(1).map_err(fail)? {
                others += 1;
                if others > limit.saturating_mul(OTHER_MATCHES_PER_CANDIDATE) {
                    return Ok(None);
                }
                continue;
            }
            found.push(
                (|| {
                    Ok(SearchCandidate {
                        doc: row.get(0)?,
                        kind: row.get(2)?,
                        reference: row.get(3)?,
                        meeting: row.get(4)?,
                        start_ms: row.get(5)?,
                        at: row.get::<_, Option<i64>>(6)?.map(Ts),
                        rank: rank(row)?,
                    })
                })()
                .map_err(fail)?,
            );
            if found.len() == limit {
                break;
            }
        }
        Ok(Some(found))
    }

    /// The snippets of the owner's documents among `docs` that match the query (documents of other
    /// owners have none), from their text in `search_docs` (`snippets_of`).
    pub(super) fn read_search_snippets(
        &self,
        query: &SearchQuery,
        docs: &[i64],
    ) -> StoreResult<Vec<(i64, String)>> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        let list = format!(
            "[{}]",
            docs.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        let texts = self.all(SEARCH_SNIPPET_TEXTS, params![self.owner, list], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?;
        snippets_of(&fts_body_expression(query), &texts)
    }

    pub(super) fn read_projected_claims(&self, subject: &str) -> StoreResult<Vec<ProjectedClaim>> {
        self.all(PROJECTED_CLAIMS, params![self.owner, subject], |row| {
            projected_claim(row, 0)
        })
    }

    pub(super) fn read_status_as_of(
        &self,
        subject: &str,
        at: Ts,
    ) -> StoreResult<Vec<StatusChange>> {
        self.all(STATUS_AS_OF, params![self.owner, subject, at.0], |row| {
            Ok(StatusChange {
                claim: row.get(0)?,
                recorded_at: Ts(row.get(1)?),
                derived: from_json(row, 2)?,
            })
        })
    }

    pub(super) fn write_status_history(
        &self,
        claim: &str,
        rows: &[StatusChange],
    ) -> StoreResult<()> {
        // The stored rows the new history starts with stay as they are: a deletion rewrites a
        // history from the deleted source's first instant on, and rewriting the identical rows
        // before it dirtied the same pages (and WAL frames) for nothing.
        let stored: Vec<(i64, i64, String)> = self.all(
            "SELECT seq, recorded_at, derived FROM claim_status_history WHERE owner = ?1 AND claim = ?2 \
             ORDER BY seq",
            params![self.owner, claim],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )?;
        let kept = stored
            .iter()
            .zip(rows)
            .enumerate()
            .take_while(|(index, ((seq, at, derived), row))| {
                *seq == *index as i64 + 1
                    && *at == row.recorded_at.0
                    && *derived == to_json(&row.derived)
            })
            .count();
        self.write_status_history_after(claim, stored.len(), kept, rows)
    }

    /// `write_status_history` given the stored rows as the caller read them in this transaction:
    /// their sequence numbers run from 1 (every writer appends at the end or cuts the tail), so the
    /// rows both histories start with are found without reading them again.
    pub(super) fn write_status_history_read(
        &self,
        claim: &str,
        stored: &[StatusChange],
        rows: &[StatusChange],
    ) -> StoreResult<()> {
        let kept = stored
            .iter()
            .zip(rows)
            .take_while(|(stored, row)| stored == row)
            .count();
        self.write_status_history_after(claim, stored.len(), kept, rows)
    }

    /// Cuts a history of `stored` rows after its first `kept` and appends the rest of `rows`.
    fn write_status_history_after(
        &self,
        claim: &str,
        stored: usize,
        kept: usize,
        rows: &[StatusChange],
    ) -> StoreResult<()> {
        if stored > kept {
            self.exec(
                "DELETE FROM claim_status_history WHERE owner = ?1 AND claim = ?2 AND seq > ?3",
                params![self.owner, claim, kept as i64],
            )?;
        }
        for (index, row) in rows.iter().enumerate().skip(kept) {
            self.exec(
                "INSERT INTO claim_status_history (owner, claim, seq, recorded_at, derived) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    self.owner,
                    claim,
                    index as i64 + 1,
                    row.recorded_at.0,
                    to_json(&row.derived)
                ],
            )?;
        }
        Ok(())
    }

    pub(super) fn read_claims_by_predicate(&self, predicate: &str) -> StoreResult<Vec<Claim>> {
        self.all(
            &format!("SELECT {CLAIM_COLUMNS} {CLAIMS_BY_PREDICATE}"),
            params![self.owner, predicate],
            claim_row,
        )
    }

    pub(super) fn read_claims_linking(
        &self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<Claim>> {
        self.all(
            &format!("SELECT {CLAIM_COLUMNS} {CLAIMS_LINKING}"),
            params![self.owner, entity, limit as i64],
            claim_row,
        )
    }

    pub(super) fn read_meeting_links_by_entity(
        &self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<MeetingLink>> {
        let rows: Vec<(String, String)> = self.all(
            MEETING_LINKS_BY_ENTITY,
            params![self.owner, entity, limit as i64],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok(rows
            .into_iter()
            .map(|(meeting, relation)| MeetingLink {
                meeting,
                entity: entity.to_string(),
                relation,
            })
            .collect())
    }

    pub(super) fn read_meeting_links_by_meeting(
        &self,
        meeting: &str,
        limit: usize,
    ) -> StoreResult<Vec<MeetingLink>> {
        let rows: Vec<(String, String)> = self.all(
            MEETING_LINKS_BY_MEETING,
            params![self.owner, meeting, limit as i64],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok(rows
            .into_iter()
            .map(|(entity, relation)| MeetingLink {
                meeting: meeting.to_string(),
                entity,
                relation,
            })
            .collect())
    }

    pub(super) fn read_observation_times(&self, entity: &str) -> StoreResult<Vec<Ts>> {
        self.all(OBSERVATION_TIMES, params![self.owner, entity], |row| {
            Ok(Ts(row.get(0)?))
        })
    }

    pub(super) fn read_tasks(&self) -> StoreResult<Vec<Task>> {
        self.all(
            &format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE owner = ?1 ORDER BY due_at, created_at, id"
            ),
            params![self.owner],
            task_row,
        )
    }

    pub(super) fn read_tasks_by_assignee(&self, entity: &str) -> StoreResult<Vec<Task>> {
        self.all(
            &format!("SELECT {TASK_COLUMNS} {TASKS_BY_ASSIGNEE}"),
            params![self.owner, entity],
            task_row,
        )
    }
}
