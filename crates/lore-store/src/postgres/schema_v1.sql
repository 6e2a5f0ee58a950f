-- Lore schema for PostgreSQL, version 1. Every table and index is keyed by owner first (L20), so the
-- schema can be distributed by owner (Citus) without changes. Mirrors ../sqlite/schema_v1.sql.

CREATE TABLE meeting_series (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    calendar_account TEXT NOT NULL,
    calendar_id TEXT NOT NULL,
    recurring_event_id TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    UNIQUE (owner, calendar_account, calendar_id, recurring_event_id)
);

CREATE TABLE meetings (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    external_id TEXT NOT NULL,
    title TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    platform TEXT,
    series TEXT,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    UNIQUE (owner, external_id),
    FOREIGN KEY (owner, series) REFERENCES meeting_series (owner, id)
);

CREATE TABLE participants (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    idx BIGINT NOT NULL,
    display_name TEXT NOT NULL,
    email TEXT,
    platform_stable_id TEXT,
    device_id TEXT,
    speaker_label TEXT,
    person_entity TEXT,
    excluded BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, meeting, idx),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
);
CREATE INDEX participants_by_person ON participants (owner, person_entity);

CREATE TABLE segments (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    start_ms BIGINT NOT NULL,
    end_ms BIGINT NOT NULL,
    speaker_label TEXT,
    attribution TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (owner, meeting, id),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
);

CREATE TABLE notes (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    meeting TEXT NOT NULL,
    local_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    author TEXT,
    text TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
);
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
    size BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
);
CREATE INDEX attachments_by_meeting ON attachments (owner, meeting);
CREATE INDEX attachments_by_sha ON attachments (owner, sha256);

CREATE TABLE tags (
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    ranges TEXT NOT NULL,
    PRIMARY KEY (owner, name)
);

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
    pinned BIGINT NOT NULL,
    scope_meeting TEXT,
    first_observed_at BIGINT,
    last_observed_at BIGINT,
    current_attributes TEXT NOT NULL,
    current_brief TEXT NOT NULL,
    PRIMARY KEY (owner, id)
);

-- Strong identifiers that resolve to an entity: email, domain, external key, project/concept key.
CREATE TABLE entity_identifiers (
    owner TEXT NOT NULL,
    scheme TEXT NOT NULL,
    value TEXT NOT NULL,
    entity TEXT NOT NULL,
    PRIMARY KEY (owner, scheme, value),
    FOREIGN KEY (owner, entity) REFERENCES entities (owner, id) ON DELETE CASCADE
);
CREATE INDEX entity_identifiers_by_entity ON entity_identifiers (owner, entity);

CREATE TABLE entity_aliases (
    owner TEXT NOT NULL,
    entity TEXT NOT NULL,
    alias TEXT NOT NULL,
    alias_key TEXT NOT NULL,
    meeting TEXT NOT NULL,
    observed_at BIGINT NOT NULL,
    PRIMARY KEY (owner, entity, alias, meeting),
    FOREIGN KEY (owner, entity) REFERENCES entities (owner, id) ON DELETE CASCADE
);
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
    explicit_valid_from BIGINT,
    explicit_valid_to BIGINT,
    retracted_at BIGINT,
    recorded_at BIGINT NOT NULL,
    status TEXT NOT NULL,
    authority TEXT NOT NULL,
    valid_from BIGINT,
    valid_to BIGINT,
    first_observed_at BIGINT,
    last_observed_at BIGINT,
    superseded_at BIGINT,
    superseded_by TEXT,
    conflict TEXT,
    end_outcome TEXT,
    periods TEXT NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, subject) REFERENCES entities (owner, id),
    FOREIGN KEY (owner, object_entity) REFERENCES entities (owner, id),
    FOREIGN KEY (owner, context_entity) REFERENCES entities (owner, id)
);
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
    observed_at BIGINT NOT NULL,
    segment_ids TEXT NOT NULL,
    start_ms BIGINT,
    end_ms BIGINT,
    speaker TEXT,
    speaker_label TEXT,
    attribution TEXT,
    quote TEXT NOT NULL,
    source_url TEXT,
    confidence DOUBLE PRECISION NOT NULL,
    extraction_run_id TEXT,
    kind TEXT NOT NULL,
    authority TEXT NOT NULL,
    outcome TEXT,
    recorded_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id),
    FOREIGN KEY (owner, claim) REFERENCES claims (owner, id) ON DELETE CASCADE
);
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
);

-- Transaction-time history of every claim's derived state (SPEC 4, --known-at).
CREATE TABLE claim_status_history (
    owner TEXT NOT NULL,
    claim TEXT NOT NULL,
    seq BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    derived TEXT NOT NULL,
    PRIMARY KEY (owner, claim, seq),
    FOREIGN KEY (owner, claim) REFERENCES claims (owner, id) ON DELETE CASCADE
);

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
    first_seen_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id)
);
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
    due_at BIGINT,
    evidence TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id)
);
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
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id),
    UNIQUE (owner, meeting, content_hash, extractor)
);

CREATE TABLE revisions (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    secondary TEXT,
    before TEXT NOT NULL,
    after TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id)
);
CREATE INDEX revisions_by_time ON revisions (owner, created_at);

CREATE TABLE suggestions (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    target TEXT NOT NULL,
    secondary TEXT,
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id)
);
CREATE INDEX suggestions_by_status ON suggestions (owner, status);

-- Read side: search, graph, time travel, deadlines. Mirrors the SQLite section: `search_docs` holds
-- one row per searchable text, kept in sync by triggers inside the writing transaction, with a
-- `tsvector` column and a GIN index (PostgreSQL's counterpart of FTS5).
CREATE TABLE search_docs (
    owner TEXT NOT NULL,
    doc BIGSERIAL NOT NULL,
    kind TEXT NOT NULL,
    ref TEXT NOT NULL,
    meeting TEXT,
    start_ms BIGINT,
    at BIGINT,
    body TEXT NOT NULL,
    tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,
    PRIMARY KEY (owner, doc),
    UNIQUE (owner, kind, ref)
);
CREATE INDEX search_docs_tsv ON search_docs USING GIN (tsv);

CREATE FUNCTION lore_entity_search_body(p_owner TEXT, p_entity TEXT) RETURNS TEXT LANGUAGE SQL STABLE AS $$
    SELECT coalesce(e.manual_name, e.canonical_name) || coalesce(' · ' || (
        SELECT string_agg(DISTINCT a.alias, ',' ORDER BY a.alias) FROM entity_aliases AS a
        WHERE a.owner = p_owner AND a.entity = p_entity AND a.alias <> coalesce(e.manual_name, e.canonical_name)), '')
    FROM entities AS e WHERE e.owner = p_owner AND e.id = p_entity
$$;

CREATE FUNCTION lore_search_segments() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, body)
        VALUES (NEW.owner, 'segment', NEW.meeting || '/' || NEW.id, NEW.meeting, NEW.start_ms,
                (SELECT started_at + NEW.start_ms FROM meetings WHERE owner = NEW.owner AND id = NEW.meeting), NEW.text);
        RETURN NEW;
    END IF;
    DELETE FROM search_docs WHERE owner = OLD.owner AND kind = 'segment' AND ref = OLD.meeting || '/' || OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER search_segments AFTER INSERT OR DELETE ON segments FOR EACH ROW EXECUTE FUNCTION lore_search_segments();

CREATE FUNCTION lore_search_notes() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, body)
        VALUES (NEW.owner, 'note', NEW.id, NEW.meeting, NULL, NEW.created_at, NEW.text);
        RETURN NEW;
    END IF;
    DELETE FROM search_docs WHERE owner = OLD.owner AND kind = 'note' AND ref = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER search_notes AFTER INSERT OR DELETE ON notes FOR EACH ROW EXECUTE FUNCTION lore_search_notes();

CREATE FUNCTION lore_search_claims() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.value_text IS NOT NULL THEN
            INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, body)
            VALUES (NEW.owner, 'claim', NEW.id, NULL, NULL, NEW.recorded_at, NEW.value_text);
        END IF;
        RETURN NEW;
    ELSIF TG_OP = 'UPDATE' THEN
        IF NEW.last_observed_at IS DISTINCT FROM OLD.last_observed_at THEN
            UPDATE search_docs SET at = NEW.last_observed_at WHERE owner = NEW.owner AND kind = 'claim' AND ref = NEW.id;
        END IF;
        RETURN NEW;
    END IF;
    DELETE FROM search_docs WHERE owner = OLD.owner AND kind = 'claim' AND ref = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER search_claims AFTER INSERT OR UPDATE OR DELETE ON claims FOR EACH ROW EXECUTE FUNCTION lore_search_claims();

CREATE FUNCTION lore_search_entities() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, body)
        VALUES (NEW.owner, 'entity', NEW.id, NULL, NULL, NEW.first_observed_at, coalesce(NEW.manual_name, NEW.canonical_name));
        RETURN NEW;
    ELSIF TG_OP = 'UPDATE' THEN
        IF NEW.canonical_name IS DISTINCT FROM OLD.canonical_name OR NEW.manual_name IS DISTINCT FROM OLD.manual_name THEN
            UPDATE search_docs SET body = lore_entity_search_body(NEW.owner, NEW.id)
            WHERE owner = NEW.owner AND kind = 'entity' AND ref = NEW.id;
        END IF;
        IF NEW.last_observed_at IS DISTINCT FROM OLD.last_observed_at THEN
            UPDATE search_docs SET at = NEW.last_observed_at WHERE owner = NEW.owner AND kind = 'entity' AND ref = NEW.id;
        END IF;
        RETURN NEW;
    END IF;
    DELETE FROM search_docs WHERE owner = OLD.owner AND kind = 'entity' AND ref = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER search_entities AFTER INSERT OR UPDATE OR DELETE ON entities FOR EACH ROW EXECUTE FUNCTION lore_search_entities();

CREATE FUNCTION lore_search_aliases() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
    changed RECORD;
BEGIN
    IF TG_OP = 'INSERT' THEN changed := NEW; ELSE changed := OLD; END IF;
    -- A name the entity has from another meeting too leaves its search text as it was.
    IF EXISTS (SELECT 1 FROM entity_aliases WHERE owner = changed.owner AND entity = changed.entity
               AND alias = changed.alias AND meeting <> changed.meeting) THEN
        RETURN changed;
    END IF;
    UPDATE search_docs SET body = lore_entity_search_body(changed.owner, changed.entity)
    WHERE owner = changed.owner AND kind = 'entity' AND ref = changed.entity
      AND EXISTS (SELECT 1 FROM entities WHERE owner = changed.owner AND id = changed.entity);
    RETURN changed;
END $$;
CREATE TRIGGER search_aliases AFTER INSERT OR DELETE ON entity_aliases FOR EACH ROW EXECUTE FUNCTION lore_search_aliases();

CREATE INDEX claims_by_predicate ON claims (owner, predicate, status);

-- Identity: user decisions about participants ('excluded' rows are tombstones that automatic sync
-- never re-adds; 'manual' rows are re-applied on re-ingest), and task statuses set by the user.
CREATE TABLE participant_mappings (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    key TEXT NOT NULL,
    source TEXT NOT NULL,
    display_name TEXT NOT NULL,
    email TEXT,
    person_entity TEXT,
    PRIMARY KEY (owner, meeting, key)
);

CREATE TABLE task_decisions (
    owner TEXT NOT NULL,
    task TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (owner, task)
);

-- API tokens (`lore serve`, `lore token`): the one table not keyed by owner, because a request
-- arrives with nothing but its bearer token; only the token's SHA-256 is stored.
CREATE TABLE api_tokens (
    token_hash TEXT NOT NULL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    scope TEXT NOT NULL,
    label TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
);
CREATE INDEX api_tokens_by_owner ON api_tokens (owner);

-- Entity rebuilds read an entity's earliest name and its first and last naming through this index,
-- whatever the number of names (a hub is named in hundreds of meetings).
CREATE INDEX entity_aliases_by_time ON entity_aliases (owner, entity, observed_at, alias);

-- Identity: which entities a resource link concerns, decided at ingest from the meeting's own facts
-- and stored with the meeting (and evidence) that showed it; deleting the meeting removes them (L13).
CREATE TABLE link_attachments (
    owner TEXT NOT NULL,
    link TEXT NOT NULL,
    entity TEXT NOT NULL,
    meeting TEXT NOT NULL,
    reason TEXT NOT NULL,
    evidence TEXT,
    PRIMARY KEY (owner, link, entity)
);
CREATE INDEX link_attachments_by_entity ON link_attachments (owner, entity);
CREATE INDEX link_attachments_by_meeting ON link_attachments (owner, meeting);

-- Identity: the meetings that taught each email or platform id of a person; an identifier goes when
-- the last meeting that taught it is deleted. Rows of one meeting sharing `grp` were given together.
CREATE TABLE identifier_sources (
    owner TEXT NOT NULL,
    scheme TEXT NOT NULL,
    value TEXT NOT NULL,
    meeting TEXT NOT NULL,
    grp TEXT NOT NULL,
    is_primary BIGINT NOT NULL,
    PRIMARY KEY (owner, scheme, value, meeting, grp)
);
CREATE INDEX identifier_sources_by_meeting ON identifier_sources (owner, meeting);

-- Identity: tags a meeting linked to a project or concept (L17); deleted with the meeting.
CREATE TABLE meeting_tags (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    tag TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (owner, meeting, tag, kind, key),
    FOREIGN KEY (owner, meeting) REFERENCES meetings (owner, id) ON DELETE CASCADE
);

-- Web workspace users (`lore user add`, hosted sign-in): like api_tokens, not keyed by owner, since a
-- sign-in arrives with nothing but a name and a password; the user's name is the owner it signs in
-- as. Only an argon2 PHC string is stored, never a password.
CREATE TABLE users (
    name TEXT NOT NULL PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Graph ranking: each entity keeps its L19 topic-weight basis and latest observation time,
-- rebuilt with its projection, so ranking a neighbor by weight reads one row instead of its evidence.
ALTER TABLE entities ADD COLUMN weight_basis DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE entities ADD COLUMN weight_latest BIGINT;

-- Evidence indexes that cover the graph and topic-weight reads: observation times of an
-- entity's claims and the claims a meeting supports are read from the index alone.
DROP INDEX evidence_by_claim;
CREATE INDEX evidence_by_claim ON evidence (owner, claim, observed_at);
DROP INDEX evidence_by_meeting;
CREATE INDEX evidence_by_meeting ON evidence (owner, meeting, claim);

-- Graph index versions: every write transaction of an owner bumps its row, in the same
-- transaction as its changes, so a read snapshot's version names exactly the owner's state in it.
-- The server keeps an in-memory graph adjacency per owner and version (`postgres/graph_scan.rs`).
CREATE TABLE owner_versions (
    owner TEXT NOT NULL PRIMARY KEY,
    version BIGINT NOT NULL
);

-- The projection (entity page) reads a subject's active claims from the index alone: the subject
-- index also carries the columns the page shows (same leading columns, so every read that used it
-- still does).
DROP INDEX claims_by_subject;
CREATE INDEX claims_by_subject ON claims (owner, subject, status, predicate, object_entity)
    INCLUDE (value_text, context_entity, authority, valid_from, valid_to);

-- Every foreign key's child columns lead an index: PostgreSQL finds a deleted parent's children
-- with a query on them, a sequential scan of the child table without one (an evidence row's
-- supersedes links, per deleted evidence row). `tests/postgres.rs` checks the rule.
CREATE INDEX claim_supersedes_by_evidence ON claim_supersedes (owner, evidence);
CREATE INDEX meetings_by_series ON meetings (owner, series);
