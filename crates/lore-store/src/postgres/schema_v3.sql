-- Entity ids that were replaced by another (a person re-keyed when its anchor identifier changed),
-- pointing at the new id so the old one still finds the entity (SQLite's schema_v4.sql).
CREATE TABLE entity_redirects (
    owner TEXT NOT NULL,
    old_id TEXT NOT NULL,
    new_id TEXT NOT NULL,
    PRIMARY KEY (owner, old_id)
);
