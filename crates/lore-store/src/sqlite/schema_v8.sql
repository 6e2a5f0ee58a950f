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
