-- The log store (`log_store/`), Lore's embedded store: each owner's knowledge is held in memory and
-- every write transaction appends the row changes it made here, in the same transaction as its other
-- writes. `base` marks the entries of a compacted log (a reset, then the owner's rows). A rowid
-- table: entries are long and written in order, so they append to the last pages.
CREATE TABLE IF NOT EXISTS knowledge_log (
    owner TEXT NOT NULL,
    seq INTEGER NOT NULL,
    base INTEGER NOT NULL DEFAULT 0,
    ops BLOB NOT NULL,
    UNIQUE (owner, seq)
);

-- Settings of the database itself. `knowledge` says which store keeps the knowledge: `log` (the
-- log store) or `tables` (the tables' store, `SqliteStore`: every knowledge row in its table); each
-- refuses a database the other keeps. Written to run again over a database that already has them, as
-- the migration tests do.
CREATE TABLE IF NOT EXISTS store_settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
