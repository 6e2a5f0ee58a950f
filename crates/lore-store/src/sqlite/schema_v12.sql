-- A meeting's transcript segments get their search documents from the store's own statement
-- (`SqliteTx::insert_segment_rows`): a multi-row insert of the documents beside the segments' own,
-- timed by the meeting's start looked up once, instead of a trigger fired once per segment whose
-- sub-program looked the meeting up again (BENCHMARKS.md, twenty-fourth round). Segments are
-- inserted nowhere else. Their deletion keeps its trigger: one statement deleting the meeting's
-- documents ran more instructions than the trigger's per-row deletes. The queue's triggers on
-- `search_docs` still queue every document for the index.
DROP TRIGGER IF EXISTS search_segments_ai;
