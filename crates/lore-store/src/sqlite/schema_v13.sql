-- Each token's number of documents whose body holds it: bm25's document frequency of a one-token
-- phrase (ranking.rs), read with one key lookup where counting it walked the token's whole posting
-- list on every search, the part of a search that grew with the index (BENCHMARKS.md,
-- twenty-sixth round). The writer keeps it as it indexes and unindexes documents
-- (`flush_search`), from the documents' text, so a deleted document's old text is queued again.
-- The integrity check holds it equal to the index's own vocabulary.
CREATE TABLE IF NOT EXISTS search_terms (
    term TEXT PRIMARY KEY,
    docs INTEGER NOT NULL CHECK (docs > 0)
) WITHOUT ROWID;
DELETE FROM search_terms;
CREATE VIRTUAL TABLE temp.search_vocab_v13 USING fts5vocab(main, search_fts, col);
INSERT INTO search_terms (term, docs)
    SELECT term, doc FROM temp.search_vocab_v13 WHERE col = 'body' AND doc > 0;
DROP TABLE temp.search_vocab_v13;
DROP TRIGGER IF EXISTS search_docs_ad;
DROP TRIGGER IF EXISTS search_docs_au;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (old.doc, old.scope, old.body);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE OF scope, body ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (old.doc, old.scope, old.body);
END;
