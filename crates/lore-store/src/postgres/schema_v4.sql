-- The full-text index without a pending list. With `fastupdate` on (the default), GIN queues new
-- entries in an unsorted list of up to 4 MB that every search reads through from start to end until
-- a vacuum or a full list merges it: after a bulk ingest at scale 1 the list held 19,571 entries in
-- 384 pages, and finding a phrase's candidates in the index took 15 ms instead of 5. Without it,
-- each inserted document updates the index at once.
ALTER INDEX search_docs_tsv SET (fastupdate = off);
SELECT gin_clean_pending_list('search_docs_tsv'::regclass);
