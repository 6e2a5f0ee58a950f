-- The full-text index keeps no copy of the documents (`content = ''`) and deletes by rowid
-- (`contentless_delete = 1`, SQLite 3.43 and later). As an external-content index it needed each
-- deleted document's old text to write delete markers: a meeting's deletion tokenized its hundred
-- segments again and flushed their markers as a new index segment, which the writer then merged,
-- about a quarter of a cascade delete's instructions (BENCHMARKS.md, twenty-third round). Now a
-- deletion records the rowid in the tombstones of the index segments that may hold it, and merges
-- drop the deleted entries (off the writers' path, below). `search_docs` still holds every document's text: snippets are computed
-- from it (read_side.rs, `snippets_of`), not from the index, which has no text to show.
--
-- The queue (`search_pending`) keeps whether a document was indexed (`scope` not NULL), no longer
-- its old text: the delete needs only the rowid.
DROP TABLE search_fts;
CREATE VIRTUAL TABLE search_fts USING fts5(
    scope, body, content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3'
);
INSERT INTO search_fts (rowid, scope, body) SELECT doc, scope, body FROM search_docs ORDER BY doc;
INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', 8);
INSERT INTO search_fts (search_fts, rank) VALUES ('usermerge', 2);
-- Rewriting a level without its deleted entries once they pass a tenth of it (FTS5's `deletemerge`)
-- happened in the deleting writer's flush: at scale 1 a rewrite of the whole index every hundred
-- meeting deletions, which nearly doubled a deletion's instructions. Writers never do it; the
-- store's background thread does, when writes pause, turning it on for its own merge steps only
-- (`merge_search_index`).
INSERT INTO search_fts (search_fts, rank) VALUES ('deletemerge', 0);
DROP TRIGGER IF EXISTS search_docs_ad;
DROP TRIGGER IF EXISTS search_docs_au;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (old.doc, old.scope, NULL);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE OF scope, body ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (old.doc, old.scope, NULL);
END;
