-- Web workspace sessions (SQLite's schema_v5.sql): by the SHA-256 of the cookie, not keyed by owner.
CREATE TABLE web_sessions (
    cookie_hash TEXT NOT NULL PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX web_sessions_by_owner ON web_sessions (owner);
CREATE INDEX web_sessions_by_last_seen ON web_sessions (last_seen_at);
