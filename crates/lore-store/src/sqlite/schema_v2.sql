-- Each owner's write count. Every write transaction that changes rows bumps its owner's count before
-- it commits, so the count a read snapshot sees names that owner's state in the snapshot exactly,
-- whichever connection or process wrote it (PostgreSQL keeps the same table). The in-memory graph
-- index is kept per owner and count: a write by one owner leaves every other owner's index in place.
CREATE TABLE owner_versions (
    owner TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) WITHOUT ROWID;
