-- The full-text queue's triggers test whether a document is already queued in their WHEN clause and
-- insert with VALUES. Written as `INSERT ... SELECT ... WHERE NOT EXISTS (SELECT ... FROM
-- search_pending)`, each one read the table it was inserting into, so SQLite first copied the row
-- into a temporary b-tree (a b-tree opened, filled and dropped for every changed document: every
-- segment of a meeting ingested or deleted, every entity whose search text moved). The queue keeps
-- only a document's first change of a transaction, as before; a conflict clause is still not used
-- (an outer statement's would override it).
DROP TRIGGER IF EXISTS search_docs_ai;
DROP TRIGGER IF EXISTS search_docs_ad;
DROP TRIGGER IF EXISTS search_docs_au;
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = new.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (new.doc, NULL, NULL);
END;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (old.doc, old.scope, old.body);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE OF scope, body ON search_docs
    WHEN NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc) BEGIN
    INSERT INTO search_pending (doc, scope, body) VALUES (old.doc, old.scope, old.body);
END;

-- Claims by object and by context keep entries only for claims that have one. The lookups by
-- object or context ask for a given entity (`object_entity = ?`), which such an index answers; the
-- other claims (a value's, every claim without a context) each had an entry at a place set by its
-- id, one more page written per claim ingested or deleted, and claims by object also moved the
-- entry of a value's claim whenever its status changed.
DROP INDEX IF EXISTS claims_by_object;
CREATE INDEX claims_by_object ON claims (owner, object_entity, status, predicate, subject)
    WHERE object_entity IS NOT NULL;
DROP INDEX IF EXISTS claims_by_context;
CREATE INDEX claims_by_context ON claims (owner, context_entity) WHERE context_entity IS NOT NULL;
