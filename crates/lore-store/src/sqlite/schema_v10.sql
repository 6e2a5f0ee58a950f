-- The full-text index merges off the writers' path. At `automerge 2` every transaction's flush merged
-- the index whenever two segments of a level met, a cascade whose larger steps (tens of milliseconds
-- every sixteen or thirty-two writes) set a write's 95th percentile (BENCHMARKS.md, twenty-first
-- round). Writers now merge once eight segments pile up on a level; the store's background thread
-- merges, in small steps of their own, whenever writes pause, down to two per level (`usermerge`),
-- which keeps searches reading as few segments as before.
INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', 8);
INSERT INTO search_fts (search_fts, rank) VALUES ('usermerge', 2);
