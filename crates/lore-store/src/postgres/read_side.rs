//! The read side on PostgreSQL: full-text search over `search_docs.tsv` (GIN), the graph
//! neighborhood, transaction-time history, deadlines and tasks. The queries mirror the SQLite ones
//! (`../sqlite/read_side.rs`), with PostgreSQL's NULL ordering made explicit so both backends list
//! rows in the same order.

use lore_core::model::*;
use lore_core::search::{SearchQuery, SearchTerm};
use lore_core::Ts;

use super::rows::*;
use super::{to_json, PgTx, CLAIM_COLUMNS, OBSERVATION_TIMES, TASK_COLUMNS};
use crate::{MeetingLink, SearchCandidate, StoreResult};

/// Keeps the letters and digits of a word: nothing a user types is read as `tsquery` syntax.
fn lexeme(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase()
}

fn render_term(term: &SearchTerm) -> Option<String> {
    match term {
        SearchTerm::Word { text, prefix } => {
            let word = lexeme(text);
            (!word.is_empty()).then(|| if *prefix { format!("{word}:*") } else { word })
        }
        SearchTerm::Phrase(text) => {
            let words: Vec<String> = text
                .split_whitespace()
                .map(lexeme)
                .filter(|w| !w.is_empty())
                .collect();
            (!words.is_empty()).then(|| format!("({})", words.join(" <-> ")))
        }
    }
}

/// Renders a parsed query as `to_tsquery` input: AND of OR-groups, then NOT for exclusions.
pub fn tsquery_text(query: &SearchQuery) -> String {
    let mut parts: Vec<String> = query
        .required
        .iter()
        .filter_map(|group| {
            let terms: Vec<String> = group.iter().filter_map(render_term).collect();
            (!terms.is_empty()).then(|| format!("({})", terms.join(" | ")))
        })
        .collect();
    if parts.is_empty() {
        // Nothing searchable (only punctuation): a lexeme no document contains.
        parts.push("zzznomatchzzz".into());
    }
    parts.extend(
        query
            .excluded
            .iter()
            .filter_map(render_term)
            .map(|term| format!("!{term}")),
    );
    parts.join(" & ")
}

/// Candidates: the owner's newest-indexed matches (of the kind, if given), bounded (`?4`), with
/// `ts_rank` negated so that lower is better, as bm25. `?1` owner, `?2` the `tsquery` text, `?3` the
/// kind or NULL. The one statement, ordered by `$order`.
macro_rules! search_candidates {
    ($order:literal) => {
        concat!(
            "SELECT doc, kind, ref, meeting, start_ms, at, \
             -ts_rank(tsv, to_tsquery('english', ?2))::float8 AS rank FROM search_docs \
             WHERE owner = ?1 AND tsv @@ to_tsquery('english', ?2) AND (?3::text IS NULL OR kind = ?3) \
             ORDER BY ",
            $order,
            " DESC LIMIT ?4"
        )
    };
}

/// The candidates of a query without a phrase, newest first along the primary key.
pub const SEARCH_CANDIDATES: &str = search_candidates!("doc");

/// `SEARCH_CANDIDATES` for a query with a phrase. PostgreSQL's statistics cannot tell how often words
/// stand next to each other, so it estimates a phrase as often as all its words together (five times
/// too often for two random words of the benchmark's transcripts) and walks the owner's documents
/// newest first, expecting the window to fill early; with a rare phrase it reads every document of
/// the owner (85 ms at scale 1). Ordering by `doc + 0` keeps the order out of the primary key's index,
/// so the matches come from the GIN index, a read bounded by the documents holding every word of the
/// query, and are sorted after. Word queries keep the walk, which stops early for common words, and
/// the planner's estimate of a word is good.
pub const SEARCH_CANDIDATES_WITH_PHRASE: &str = search_candidates!("doc + 0");

/// The candidates' statement for `query` (in the store's `?N` form). Only a required phrase counts: an
/// excluded one does not choose the documents read.
pub fn search_candidates_sql(query: &SearchQuery) -> &'static str {
    let has_phrase = query.required.iter().flatten().any(
        |term| matches!(term, SearchTerm::Phrase(text) if text.split_whitespace().nth(1).is_some()),
    );
    match has_phrase {
        true => SEARCH_CANDIDATES_WITH_PHRASE,
        false => SEARCH_CANDIDATES,
    }
}

fn meeting_link_row(row: &postgres::Row) -> StoreResult<(String, String)> {
    Ok((
        first_text(row)?,
        row.try_get(1)
            .map_err(|e| crate::StoreError::Backend(e.to_string()))?,
    ))
}

fn candidate_row(row: &postgres::Row) -> StoreResult<SearchCandidate> {
    let get = |index: usize| crate::StoreError::Backend(format!("search column {index}"));
    Ok(SearchCandidate {
        doc: row.try_get(0).map_err(|_| get(0))?,
        kind: row.try_get(1).map_err(|_| get(1))?,
        reference: row.try_get(2).map_err(|_| get(2))?,
        meeting: row.try_get(3).map_err(|_| get(3))?,
        start_ms: row.try_get(4).map_err(|_| get(4))?,
        at: row
            .try_get::<_, Option<i64>>(5)
            .map_err(|_| get(5))?
            .map(Ts),
        rank: row.try_get(6).map_err(|_| get(6))?,
    })
}

impl PgTx<'_, '_> {
    pub(super) fn read_search_candidates(
        &mut self,
        query: &SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<SearchCandidate>> {
        let owner = self.owner.clone();
        let text = tsquery_text(query);
        self.all(
            search_candidates_sql(query),
            &[&owner, &text, &kind, &(limit as i64)],
            candidate_row,
        )
    }

    pub(super) fn read_search_snippet(
        &mut self,
        query: &SearchQuery,
        doc: i64,
    ) -> StoreResult<Option<String>> {
        let owner = self.owner.clone();
        let text = tsquery_text(query);
        // ts_headline marks each word; FTS5 marks a matched phrase once: join adjacent marks alike.
        let snippet = self.one(
            "SELECT ts_headline('english', body, to_tsquery('english', ?2), \
             'StartSel=[, StopSel=], MaxWords=16, MinWords=6, ShortWord=2, MaxFragments=1, FragmentDelimiter=…') \
             FROM search_docs WHERE owner = ?1 AND doc = ?3",
            &[&owner, &text, &doc],
            first_text,
        )?;
        Ok(snippet.map(|text| text.replace("] [", " ")))
    }

    pub(super) fn read_status_as_of(
        &mut self,
        subject: &str,
        at: Ts,
    ) -> StoreResult<Vec<StatusChange>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT h.claim, h.recorded_at, h.derived FROM claim_status_history AS h \
             WHERE h.owner = ?1 AND h.claim IN (SELECT id FROM claims WHERE owner = ?1 AND subject = ?2) \
             AND h.seq = (SELECT max(seq) FROM claim_status_history \
                          WHERE owner = ?1 AND claim = h.claim AND recorded_at <= ?3) ORDER BY h.claim",
            &[&owner, &subject, &at.0],
            status_change_row,
        )
    }

    pub(super) fn write_status_history(
        &mut self,
        claim: &str,
        rows: &[StatusChange],
    ) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM claim_status_history WHERE owner = ?1 AND claim = ?2",
            &[&owner, &claim],
        )?;
        for (index, row) in rows.iter().enumerate() {
            self.exec(
                "INSERT INTO claim_status_history (owner, claim, seq, recorded_at, derived) VALUES (?1, ?2, ?3, ?4, ?5)",
                &[&owner, &claim, &(index as i64 + 1), &row.recorded_at.0, &to_json(&row.derived)],
            )?;
        }
        Ok(())
    }

    pub(super) fn read_claims_by_predicate(&mut self, predicate: &str) -> StoreResult<Vec<Claim>> {
        let owner = self.owner.clone();
        self.all(
            &format!("SELECT {CLAIM_COLUMNS} FROM claims WHERE owner = ?1 AND predicate = ?2 ORDER BY id"),
            &[&owner, &predicate],
            claim_row,
        )
    }

    pub(super) fn read_claims_linking(
        &mut self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<Claim>> {
        let owner = self.owner.clone();
        self.all(
            &format!(
                "SELECT {CLAIM_COLUMNS} FROM claims WHERE owner = ?1 AND id IN (\
                 SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 AND object_entity IS NOT NULL \
                 UNION SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 AND context_entity IS NOT NULL \
                 UNION SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2 \
                 UNION SELECT id FROM claims WHERE owner = ?1 AND context_entity = ?2) \
                 ORDER BY status = 'active' DESC, last_observed_at DESC NULLS LAST, id LIMIT ?3"
            ),
            &[&owner, &entity, &(limit as i64)],
            claim_row,
        )
    }

    pub(super) fn read_meeting_links_by_entity(
        &mut self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<MeetingLink>> {
        let owner = self.owner.clone();
        let rows = self.all(
            "SELECT l.meeting, l.relation FROM (\
             SELECT meeting, 'attended'::text AS relation FROM participants WHERE owner = ?1 AND person_entity = ?2 \
             UNION SELECT meeting, 'mentioned_in' FROM evidence WHERE owner = ?1 AND meeting IS NOT NULL \
               AND claim IN (SELECT id FROM claims WHERE owner = ?1 AND subject = ?2 \
                             UNION ALL SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2)) AS l \
             ORDER BY (SELECT started_at FROM meetings WHERE owner = ?1 AND id = l.meeting) DESC NULLS LAST, \
             l.meeting, l.relation LIMIT ?3",
            &[&owner, &entity, &(limit as i64)],
            meeting_link_row,
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
        &mut self,
        meeting: &str,
        limit: usize,
    ) -> StoreResult<Vec<MeetingLink>> {
        let owner = self.owner.clone();
        let rows = self.all(
            "SELECT entity, relation FROM (\
             SELECT person_entity AS entity, 'attended'::text AS relation FROM participants \
               WHERE owner = ?1 AND meeting = ?2 AND person_entity IS NOT NULL \
             UNION SELECT subject, 'mentioned_in' FROM claims \
               WHERE owner = ?1 AND id IN (SELECT claim FROM evidence WHERE owner = ?1 AND meeting = ?2) \
             UNION SELECT object_entity, 'mentioned_in' FROM claims WHERE owner = ?1 AND object_entity IS NOT NULL \
               AND id IN (SELECT claim FROM evidence WHERE owner = ?1 AND meeting = ?2)) AS l \
             ORDER BY entity, relation LIMIT ?3",
            &[&owner, &meeting, &(limit as i64)],
            meeting_link_row,
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

    pub(super) fn read_observation_times(&mut self, entity: &str) -> StoreResult<Vec<Ts>> {
        let owner = self.owner.clone();
        let times = self.all(OBSERVATION_TIMES, &[&owner, &entity], first_int)?;
        Ok(times.into_iter().map(Ts).collect())
    }

    pub(super) fn read_tasks(&mut self) -> StoreResult<Vec<Task>> {
        let owner = self.owner.clone();
        self.all(
            &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE owner = ?1 ORDER BY due_at NULLS FIRST, created_at, id"),
            &[&owner],
            task_row,
        )
    }

    pub(super) fn read_tasks_by_assignee(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        let owner = self.owner.clone();
        self.all(
            &format!(
                "SELECT {TASK_COLUMNS} FROM tasks WHERE owner = ?1 AND assignee = ?2 \
                 ORDER BY due_at NULLS FIRST, created_at, id"
            ),
            &[&owner, &entity],
            task_row,
        )
    }
}
