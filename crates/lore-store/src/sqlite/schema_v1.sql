-- Lore schema, version 1. Every table is keyed by owner first (L20).

CREATE TABLE meeting_series (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    calendar_account TEXT NOT NULL,
    calendar_id TEXT NOT NULL,
    recurring_event_id TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    UNIQUE (owner, calendar_account, calendar_id, recurring_event_id)
) WITHOUT ROWID;

CREATE TABLE meetings (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    title TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    platform TEXT,
    series TEXT,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    UNIQUE (owner, external_id),
    FOREIGN KEY (owner, series) REFERENCES meeting_series (owner, id)
) WITHOUT ROWID;

CREATE TABLE participants (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    idx INTEGER NOT NULL,
    display_name TEXT NOT NULL,
    email TEXT,
    platform_stable_id TEXT,
    device_id TEXT,
    speaker_label TEXT,
    person_entity TEXT,
    excluded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, meeting, idx),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX participants_by_person ON participants (owner, person_entity);

CREATE TABLE segments (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    start_ms INTEGER NOT NULL,
    end_ms INTEGER NOT NULL,
    speaker_label TEXT,
    attribution TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (owner, meeting, id),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE notes (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    meeting TEXT NOT NULL,
    local_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    author TEXT,
    text TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX notes_by_meeting ON notes (owner, meeting);

CREATE TABLE attachments (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    meeting TEXT NOT NULL,
    local_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    filename TEXT NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX attachments_by_meeting ON attachments (owner, meeting);
CREATE INDEX attachments_by_sha ON attachments (owner, sha256);

CREATE TABLE tags (
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    ranges TEXT NOT NULL,
    PRIMARY KEY (owner, name)
) WITHOUT ROWID;

CREATE TABLE entities (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    canonical_name TEXT NOT NULL,
    manual_name TEXT,
    normalized_key TEXT,
    emails TEXT NOT NULL,
    domains TEXT NOT NULL,
    external_keys TEXT NOT NULL,
    status TEXT NOT NULL,
    merged_into TEXT,
    do_not_merge_with TEXT NOT NULL,
    manual_attributes TEXT NOT NULL,
    manual_brief TEXT,
    pinned INTEGER NOT NULL,
    scope_meeting TEXT,
    first_observed_at INTEGER,
    last_observed_at INTEGER,
    current_attributes TEXT NOT NULL,
    current_brief TEXT NOT NULL,
    PRIMARY KEY (owner, id)
) WITHOUT ROWID;

-- Strong identifiers that resolve to an entity: email, domain, external key, project/concept key.
CREATE TABLE entity_identifiers (
    owner TEXT NOT NULL,
    scheme TEXT NOT NULL,
    value TEXT NOT NULL,
    entity TEXT NOT NULL,
    PRIMARY KEY (owner, scheme, value),
    FOREIGN KEY (owner, entity) REFERENCES entities (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX entity_identifiers_by_entity ON entity_identifiers (owner, entity);

CREATE TABLE entity_aliases (
    owner TEXT NOT NULL,
    entity TEXT NOT NULL,
    alias TEXT NOT NULL,
    alias_key TEXT NOT NULL,
    meeting TEXT NOT NULL,
    observed_at INTEGER NOT NULL,
    PRIMARY KEY (owner, entity, alias, meeting),
    FOREIGN KEY (owner, entity) REFERENCES entities (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX entity_aliases_by_key ON entity_aliases (owner, alias_key);
CREATE INDEX entity_aliases_by_meeting ON entity_aliases (owner, meeting);

CREATE TABLE claims (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    subject TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object_entity TEXT,
    value_text TEXT,
    value_json TEXT,
    value_key TEXT NOT NULL,
    context_entity TEXT,
    cardinality TEXT NOT NULL,
    group_key TEXT NOT NULL,
    explicit_valid_from INTEGER,
    explicit_valid_to INTEGER,
    retracted_at INTEGER,
    recorded_at INTEGER NOT NULL,
    status TEXT NOT NULL,
    authority TEXT NOT NULL,
    valid_from INTEGER,
    valid_to INTEGER,
    first_observed_at INTEGER,
    last_observed_at INTEGER,
    superseded_at INTEGER,
    superseded_by TEXT,
    conflict TEXT,
    end_outcome TEXT,
    periods TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, subject) REFERENCES entities (owner, id),
    FOREIGN KEY (owner, object_entity) REFERENCES entities (owner, id),
    FOREIGN KEY (owner, context_entity) REFERENCES entities (owner, id)
) WITHOUT ROWID;
-- Covering indexes for the projection and graph reads (PERF-NOTES).
CREATE INDEX claims_by_subject ON claims (owner, subject, status, predicate, object_entity);
CREATE INDEX claims_by_object ON claims (owner, object_entity, status, predicate, subject);
CREATE INDEX claims_by_slot ON claims (owner, subject, predicate, context_entity);
CREATE INDEX claims_by_context ON claims (owner, context_entity);

CREATE TABLE evidence (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    claim TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    source_id TEXT NOT NULL,
    meeting TEXT,
    observed_at INTEGER NOT NULL,
    segment_ids TEXT NOT NULL,
    start_ms INTEGER,
    end_ms INTEGER,
    speaker TEXT,
    speaker_label TEXT,
    attribution TEXT,
    quote TEXT NOT NULL,
    source_url TEXT,
    confidence REAL NOT NULL,
    extraction_run_id TEXT,
    kind TEXT NOT NULL,
    authority TEXT NOT NULL,
    outcome TEXT,
    recorded_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, claim) REFERENCES claims (owner, id) ON DELETE CASCADE
);
-- A rowid table, unlike its neighbours: a meeting's evidence rows (long, with their quotes) are
-- written together, so appended in rowid order they share a few pages, and only their short
-- primary-key and index entries land at random. Keyed by its hash-like id instead, each row took a
-- page of its own: ingest wrote 436 pages per meeting, now 393 (BENCHMARKS.md, eighth round).
CREATE INDEX evidence_by_claim ON evidence (owner, claim);
CREATE INDEX evidence_by_meeting ON evidence (owner, meeting);
CREATE INDEX evidence_by_source ON evidence (owner, source_kind, source_id);

CREATE TABLE claim_supersedes (
    owner TEXT NOT NULL,
    claim TEXT NOT NULL,
    target TEXT NOT NULL,
    evidence TEXT NOT NULL,
    PRIMARY KEY (owner, claim, target, evidence),
    FOREIGN KEY (owner, evidence) REFERENCES evidence (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- Transaction-time history of every claim's derived state (SPEC 4, --known-at).
CREATE TABLE claim_status_history (
    owner TEXT NOT NULL,
    claim TEXT NOT NULL,
    seq INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    derived TEXT NOT NULL,
    PRIMARY KEY (owner, claim, seq),
    FOREIGN KEY (owner, claim) REFERENCES claims (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE TABLE resource_links (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    entity TEXT,
    meeting TEXT,
    source_kind TEXT NOT NULL,
    source_id TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    url TEXT NOT NULL,
    external_key TEXT,
    title TEXT,
    provenance TEXT NOT NULL,
    ingested_status TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id)
) WITHOUT ROWID;
CREATE INDEX resource_links_by_entity ON resource_links (owner, entity);
CREATE INDEX resource_links_by_meeting ON resource_links (owner, meeting);

CREATE TABLE tasks (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    meeting TEXT,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    assignee TEXT,
    project TEXT,
    due_at INTEGER,
    evidence TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id)
) WITHOUT ROWID;
CREATE INDEX tasks_by_meeting ON tasks (owner, meeting);
CREATE INDEX tasks_by_assignee ON tasks (owner, assignee);
CREATE INDEX tasks_by_project ON tasks (owner, project);

CREATE TABLE extraction_runs (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    meeting TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    extractor TEXT NOT NULL,
    revision TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id),
    UNIQUE (owner, meeting, content_hash, extractor)
) WITHOUT ROWID;

CREATE TABLE revisions (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    secondary TEXT,
    before TEXT NOT NULL,
    after TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id)
) WITHOUT ROWID;
CREATE INDEX revisions_by_time ON revisions (owner, created_at);

CREATE TABLE suggestions (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    target TEXT NOT NULL,
    secondary TEXT,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (owner, id)
) WITHOUT ROWID;
CREATE INDEX suggestions_by_status ON suggestions (owner, status);

-- Read side: search, graph, time travel, deadlines.
--
-- Lexical search. `search_docs` holds one row per searchable text (entity names with their aliases,
-- claim values, transcript segments, notes) and `search_fts` indexes it (FTS5, external content).
-- Triggers on the source tables keep both in sync inside the writing transaction, so every write path
-- (ingest, edits, deletes, foreign-key cascades) maintains the index without engine code having to
-- remember it. FTS5 needs an integer rowid, so `doc` is the key here; `owner` leads the unique index,
-- and the `scope` column carries an owner token and a kind token (`o<hex(owner)> k<kind>`) that every
-- query ANDs into its MATCH expression, so FTS5 itself only returns the owner's documents.
CREATE TABLE search_docs (
    doc INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL,
    ref TEXT NOT NULL,
    meeting TEXT,
    start_ms INTEGER,
    at INTEGER,
    scope TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (owner, kind, ref)
);
CREATE VIRTUAL TABLE search_fts USING fts5(
    scope, body, content = 'search_docs', content_rowid = 'doc',
    tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3'
);
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, scope, body) VALUES (new.doc, new.scope, new.body);
END;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, scope, body) VALUES ('delete', old.doc, old.scope, old.body);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE OF scope, body ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, scope, body) VALUES ('delete', old.doc, old.scope, old.body);
    INSERT INTO search_fts (rowid, scope, body) VALUES (new.doc, new.scope, new.body);
END;

CREATE TRIGGER search_segments_ai AFTER INSERT ON segments BEGIN
    INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body)
    VALUES (new.owner, 'segment', new.meeting || '/' || new.id, new.meeting, new.start_ms,
            (SELECT started_at + new.start_ms FROM meetings WHERE owner = new.owner AND id = new.meeting),
            'o' || hex(new.owner) || ' ksegment', new.text);
END;
CREATE TRIGGER search_segments_ad AFTER DELETE ON segments BEGIN
    DELETE FROM search_docs WHERE owner = old.owner AND kind = 'segment' AND ref = old.meeting || '/' || old.id;
END;

CREATE TRIGGER search_notes_ai AFTER INSERT ON notes BEGIN
    INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body)
    VALUES (new.owner, 'note', new.id, new.meeting, NULL, new.created_at, 'o' || hex(new.owner) || ' knote', new.text);
END;
CREATE TRIGGER search_notes_ad AFTER DELETE ON notes BEGIN
    DELETE FROM search_docs WHERE owner = old.owner AND kind = 'note' AND ref = old.id;
END;

-- Claim values: text values only (a claim about an entity is found through the entity's name).
CREATE TRIGGER search_claims_ai AFTER INSERT ON claims WHEN new.value_text IS NOT NULL BEGIN
    INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body)
    VALUES (new.owner, 'claim', new.id, NULL, NULL, new.recorded_at, 'o' || hex(new.owner) || ' kclaim', new.value_text);
END;
CREATE TRIGGER search_claims_ad AFTER DELETE ON claims BEGIN
    DELETE FROM search_docs WHERE owner = old.owner AND kind = 'claim' AND ref = old.id;
END;

-- Entities: the display name, then every other name it was called by.
CREATE TRIGGER search_entities_ai AFTER INSERT ON entities BEGIN
    INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body)
    VALUES (new.owner, 'entity', new.id, NULL, NULL, new.first_observed_at, 'o' || hex(new.owner) || ' kentity',
            coalesce(new.manual_name, new.canonical_name));
END;
CREATE TRIGGER search_entities_au AFTER UPDATE OF canonical_name, manual_name ON entities
    WHEN old.canonical_name IS NOT new.canonical_name OR old.manual_name IS NOT new.manual_name BEGIN
    UPDATE search_docs SET body = coalesce(new.manual_name, new.canonical_name) || coalesce(' · ' ||
            (SELECT group_concat(DISTINCT alias) FROM entity_aliases WHERE owner = new.owner AND entity = new.id
             AND alias <> coalesce(new.manual_name, new.canonical_name)), '')
    WHERE owner = new.owner AND kind = 'entity' AND ref = new.id;
END;
-- Newest-first search orders by `at`: an entity's and a claim's latest observation.
CREATE TRIGGER search_entities_observed AFTER UPDATE OF last_observed_at ON entities
    WHEN old.last_observed_at IS NOT new.last_observed_at BEGIN
    UPDATE search_docs SET at = new.last_observed_at WHERE owner = new.owner AND kind = 'entity' AND ref = new.id;
END;
CREATE TRIGGER search_claims_observed AFTER UPDATE OF last_observed_at ON claims
    WHEN old.last_observed_at IS NOT new.last_observed_at BEGIN
    UPDATE search_docs SET at = new.last_observed_at WHERE owner = new.owner AND kind = 'claim' AND ref = new.id;
END;
CREATE TRIGGER search_entities_ad AFTER DELETE ON entities BEGIN
    DELETE FROM search_docs WHERE owner = old.owner AND kind = 'entity' AND ref = old.id;
END;
-- A name the entity already had (from another meeting) leaves its search text as it was.
CREATE TRIGGER search_aliases_ai AFTER INSERT ON entity_aliases
    WHEN NOT EXISTS (SELECT 1 FROM entity_aliases WHERE owner = new.owner AND entity = new.entity
                     AND alias = new.alias AND meeting <> new.meeting) BEGIN
    UPDATE search_docs SET body = (SELECT coalesce(e.manual_name, e.canonical_name) || coalesce(' · ' ||
            (SELECT group_concat(DISTINCT alias) FROM entity_aliases WHERE owner = new.owner AND entity = new.entity
             AND alias <> coalesce(e.manual_name, e.canonical_name)), '')
            FROM entities AS e WHERE e.owner = new.owner AND e.id = new.entity)
    WHERE owner = new.owner AND kind = 'entity' AND ref = new.entity
      AND EXISTS (SELECT 1 FROM entities WHERE owner = new.owner AND id = new.entity);
END;
CREATE TRIGGER search_aliases_ad AFTER DELETE ON entity_aliases
    WHEN NOT EXISTS (SELECT 1 FROM entity_aliases WHERE owner = old.owner AND entity = old.entity
                     AND alias = old.alias) BEGIN
    UPDATE search_docs SET body = (SELECT coalesce(e.manual_name, e.canonical_name) || coalesce(' · ' ||
            (SELECT group_concat(DISTINCT alias) FROM entity_aliases WHERE owner = old.owner AND entity = old.entity
             AND alias <> coalesce(e.manual_name, e.canonical_name)), '')
            FROM entities AS e WHERE e.owner = old.owner AND e.id = old.entity)
    WHERE owner = old.owner AND kind = 'entity' AND ref = old.entity
      AND EXISTS (SELECT 1 FROM entities WHERE owner = old.owner AND id = old.entity);
END;

-- Deadlines across the owner's knowledge.
CREATE INDEX claims_by_predicate ON claims (owner, predicate, status);

-- Identity: user decisions about participants. A row with source 'excluded' is a tombstone
-- that automatic sync never re-adds; 'manual' rows are re-applied whenever the meeting is re-ingested.
CREATE TABLE participant_mappings (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    display_name TEXT NOT NULL,
    email TEXT,
    person_entity TEXT,
    PRIMARY KEY (owner, meeting, key)
) WITHOUT ROWID;

-- Identity: a task status set by the user, kept across re-ingestion of its meeting.
CREATE TABLE task_decisions (
    owner TEXT NOT NULL,
    task TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (owner, task)
) WITHOUT ROWID;

-- API tokens (`lore serve`, `lore token`). The one table not keyed by owner: a request arrives with
-- nothing but its bearer token, so the token (stored only as its SHA-256) is what names the owner.
CREATE TABLE api_tokens (
    token_hash TEXT NOT NULL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    scope TEXT NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER
) WITHOUT ROWID;
CREATE INDEX api_tokens_by_owner ON api_tokens (owner);

-- (An index of aliases by entity and time stood here. Entity rebuilds read an entity's names once,
-- through the primary key, and take the earliest and latest themselves (`entity_observations`): the
-- index cost a random page per alias written, about a tenth of what ingest and deletion wrote.)

-- Identity: which entities a resource link concerns, decided at ingest from the meeting's
-- own facts and stored with the meeting (and evidence) that showed it; deleting the meeting removes
-- them with its links (L13).
CREATE TABLE link_attachments (
    owner TEXT NOT NULL,
    link TEXT NOT NULL,
    entity TEXT NOT NULL,
    meeting TEXT NOT NULL,
    reason TEXT NOT NULL,
    evidence TEXT,
    PRIMARY KEY (owner, link, entity)
) WITHOUT ROWID;
CREATE INDEX link_attachments_by_entity ON link_attachments (owner, entity);
CREATE INDEX link_attachments_by_meeting ON link_attachments (owner, meeting);

-- Identity: the meetings that taught each email or platform id of a person. An identifier
-- goes when the last meeting that taught it is deleted; rows of one meeting sharing `grp` were given
-- together for one participant.
CREATE TABLE identifier_sources (
    owner TEXT NOT NULL,
    scheme TEXT NOT NULL,
    value TEXT NOT NULL,
    meeting TEXT NOT NULL,
    grp TEXT NOT NULL,
    is_primary INTEGER NOT NULL,
    PRIMARY KEY (owner, scheme, value, meeting, grp)
) WITHOUT ROWID;
CREATE INDEX identifier_sources_by_meeting ON identifier_sources (owner, meeting);

-- Identity: tags a meeting linked to a project or concept (L17: in that meeting, the
-- entity whose slug is `key` resolves by the tag). Deleted with the meeting; `tags` rows stay.
CREATE TABLE meeting_tags (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    tag TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (owner, meeting, tag, kind, key),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
) WITHOUT ROWID;

-- Web workspace users (`lore user add`, hosted sign-in): like api_tokens, not keyed by owner, since a
-- sign-in arrives with nothing but a name and a password; the user's name is the owner it signs in
-- as. Only an argon2 PHC string is stored, never a password.
CREATE TABLE users (
    name TEXT NOT NULL PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Graph ranking: each entity keeps its L19 topic-weight basis and latest observation time,
-- rebuilt with its projection, so ranking a neighbor by weight reads one row instead of its evidence.
ALTER TABLE entities ADD COLUMN weight_basis REAL NOT NULL DEFAULT 0;
ALTER TABLE entities ADD COLUMN weight_latest INTEGER;

-- Evidence indexes that cover the graph and topic-weight reads: observation times of an
-- entity's claims and the claims a meeting supports are read from the index alone.
DROP INDEX evidence_by_claim;
CREATE INDEX evidence_by_claim ON evidence (owner, claim, observed_at);
DROP INDEX evidence_by_meeting;
CREATE INDEX evidence_by_meeting ON evidence (owner, meeting, claim);

-- Batched segment inserts: a meeting's transcript segments reach the full-text index in one
-- statement, so the index gets one larger segment per meeting instead of one per transcript line.
-- Merging at two segments per level (instead of four) keeps the number of index segments a
-- search must visit as low as the line-by-line inserts left it.
INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', 2);

-- The projection (entity page) reads a subject's active claims from the index alone: the subject
-- index also carries the columns the page shows (same leading columns, so every read that used it
-- still does).
DROP INDEX claims_by_subject;
CREATE INDEX claims_by_subject ON claims (owner, subject, status, predicate, object_entity,
    value_text, context_entity, authority, valid_from, valid_to);

-- Deferred full-text maintenance: `search_docs` changes are queued in `search_pending` and applied
-- to `search_fts` in two statements just before the writing transaction commits (`flush_search`).
-- SQLite opens a statement savepoint for every statement that fires a trigger inside a transaction,
-- and FTS5 writes its pending terms out as a new index segment (and merges) at every savepoint; with
-- the index written by each trigger, a meeting's ingest flushed the index after nearly every
-- statement. Now a transaction flushes it once. A queued row holds what the index holds for that
-- document (scope and body as last committed; NULL when it was not indexed), so only a document's
-- first change in a transaction is queued (checked with NOT EXISTS rather than OR IGNORE: an outer
-- statement's conflict clause would override the trigger's). A search inside a writing transaction
-- applies the queue first; a rolled-back transaction leaves it empty.
CREATE TABLE search_pending (
    doc INTEGER PRIMARY KEY,
    scope TEXT,
    body TEXT
);
DROP TRIGGER search_docs_ai;
DROP TRIGGER search_docs_ad;
DROP TRIGGER search_docs_au;
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_pending (doc, scope, body) SELECT new.doc, NULL, NULL
        WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = new.doc);
END;
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_pending (doc, scope, body) SELECT old.doc, old.scope, old.body
        WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc);
END;
CREATE TRIGGER search_docs_au AFTER UPDATE OF scope, body ON search_docs BEGIN
    INSERT INTO search_pending (doc, scope, body) SELECT old.doc, old.scope, old.body
        WHERE NOT EXISTS (SELECT 1 FROM search_pending WHERE doc = old.doc);
END;

-- The projection reads a subject's active claims in (predicate, id) order, and an entity's resource
-- links in (first_seen_at, id) order, in index order: neither read sorts its rows any more.
DROP INDEX claims_by_subject;
CREATE INDEX claims_by_subject ON claims (owner, subject, status, predicate, id, object_entity,
    value_text, context_entity, authority, valid_from, valid_to);
DROP INDEX resource_links_by_entity;
CREATE INDEX resource_links_by_entity ON resource_links (owner, entity, first_seen_at, id);

-- The projection reads an entity's resource links from the index alone: it carries every column the
-- page shows, so the read is one range of one b-tree instead of a table lookup per link (a random
-- page each, which in a large file is a cache miss each).
DROP INDEX resource_links_by_entity;
CREATE INDEX resource_links_by_entity ON resource_links (owner, entity, first_seen_at, id, meeting,
    source_kind, source_id, resource_type, url, external_key, title, provenance, ingested_status,
    last_seen_at);

-- Every foreign key's child columns lead an index. Deleting a parent row makes SQLite find its
-- children; without such an index that is a scan of the whole child table per deleted row (an
-- evidence row's supersedes links: a meeting's deletion scanned `claim_supersedes` once per
-- evidence row it removed). `tests/query_plans.rs` checks the rule for every foreign key.
CREATE INDEX claim_supersedes_by_evidence ON claim_supersedes (owner, evidence);
CREATE INDEX meetings_by_series ON meetings (owner, series);
