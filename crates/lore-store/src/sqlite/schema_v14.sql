-- A deleted document leaves the full-text index later, in a batch, instead of in the deleting
-- transaction. Deleting a meeting's hundred documents from the index marked each in the tombstones
-- of every index segment that may hold it: at scale 1 about a hundred of the 165 pages a cascade
-- delete wrote, and a tenth of its CPU (BENCHMARKS.md, twenty-seventh round). A batch of many
-- meetings' documents writes each tombstone page once.
--
-- The deleted document's row goes here with the scope and text it was indexed with (the term counts
-- of schema_v13.sql are decremented from that text when the batch is applied). Until then the index
-- still holds it, and so do its statistics (bm25's document counts and average size, the term
-- counts), but no search returns it: every search joins the index's matches to `search_docs`, where
-- the document no longer is. The batch is applied (`apply_deferred_deletions`) by the store's
-- background thread once writes pause, by a write after enough writes deferred deletions, by any
-- write that indexes a document under the rowid of a deferred one, and by a store that closes.
CREATE TABLE IF NOT EXISTS search_deferred (
    doc INTEGER PRIMARY KEY,
    scope TEXT NOT NULL,
    body TEXT NOT NULL
);
-- A document deleted in the transaction that queued it (inserted, or changed, since the last
-- flush) stays in the queue, which knows whether and how it was indexed.
DROP TRIGGER IF EXISTS search_docs_ad;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_deferred (doc, scope, body) VALUES (old.doc, old.scope, old.body);
END;
