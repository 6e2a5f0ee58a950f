-- The entities each name key belongs to, one row per (key, entity) instead of an index entry per
-- name occurrence. Entity resolution looks entities up by name key; `entity_aliases` keeps a row for
-- every meeting that said a name (about twenty per distinct key in the benchmark's dataset), and an
-- index by key put every one of them on a page of its own at ingest and again at deletion. The
-- triggers keep this table equal to `SELECT DISTINCT owner, alias_key, entity FROM entity_aliases`
-- (`integrity_problems` checks it): an occurrence adds its pair if new; removing one drops the pair
-- once no name of that entity has the key. An entity deleted takes its names by cascade, and their
-- pairs go through that trigger (so no foreign key here, which would want an index by entity).
-- Written to run again over a database that already has it, as the migration tests do.
CREATE TABLE IF NOT EXISTS entity_alias_keys (
    owner TEXT NOT NULL,
    alias_key TEXT NOT NULL,
    entity TEXT NOT NULL,
    PRIMARY KEY (owner, alias_key, entity)
) WITHOUT ROWID;
INSERT OR IGNORE INTO entity_alias_keys (owner, alias_key, entity)
    SELECT DISTINCT owner, alias_key, entity FROM entity_aliases;
DROP INDEX IF EXISTS entity_aliases_by_key;
CREATE TRIGGER IF NOT EXISTS entity_alias_keys_ai AFTER INSERT ON entity_aliases BEGIN
    INSERT OR IGNORE INTO entity_alias_keys (owner, alias_key, entity)
    VALUES (new.owner, new.alias_key, new.entity);
END;
-- The first test is one primary-key descent and is false for almost every deleted occurrence (the
-- same name from another meeting); only then are the entity's other names read for the key.
CREATE TRIGGER IF NOT EXISTS entity_alias_keys_ad AFTER DELETE ON entity_aliases
    WHEN NOT EXISTS (SELECT 1 FROM entity_aliases WHERE owner = old.owner AND entity = old.entity
                     AND alias = old.alias)
     AND NOT EXISTS (SELECT 1 FROM entity_aliases WHERE owner = old.owner AND entity = old.entity
                     AND alias_key = old.alias_key) BEGIN
    DELETE FROM entity_alias_keys
    WHERE owner = old.owner AND alias_key = old.alias_key AND entity = old.entity;
END;
-- Rows are never updated in place today; should one be, it moves its pair like a delete and an insert.
CREATE TRIGGER IF NOT EXISTS entity_alias_keys_au AFTER UPDATE ON entity_aliases BEGIN
    DELETE FROM entity_alias_keys
    WHERE owner = old.owner AND alias_key = old.alias_key AND entity = old.entity
      AND NOT EXISTS (SELECT 1 FROM entity_aliases WHERE owner = old.owner AND entity = old.entity
                      AND alias_key = old.alias_key);
    INSERT OR IGNORE INTO entity_alias_keys (owner, alias_key, entity)
    VALUES (new.owner, new.alias_key, new.entity);
END;

-- Claims by predicate (the deadlines read, `ORDER BY id`) without the status: every change of a
-- claim's derived state sets `status`, and an index keyed by it rewrote the claim's entry each time
-- (a page of its own), while the read filters on the predicate alone. Keyed by predicate, the entries
-- are in id order, so the read no longer sorts either.
DROP INDEX IF EXISTS claims_by_predicate;
CREATE INDEX claims_by_predicate ON claims (owner, predicate);
