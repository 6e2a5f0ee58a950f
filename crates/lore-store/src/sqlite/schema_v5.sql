-- Web workspace sessions (`lore serve`), kept in the database so that a restart signs nobody out
-- and removing a user ends their sessions at once (`delete_user`). Like `api_tokens` and `users`,
-- not keyed by owner: a request arrives with nothing but its cookie, and the row gives the owner.
-- Only the SHA-256 of the cookie is stored; the form token (CSRF) is derived from the cookie.
CREATE TABLE web_sessions (
    cookie_hash TEXT NOT NULL PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX web_sessions_by_owner ON web_sessions (owner);
CREATE INDEX web_sessions_by_last_seen ON web_sessions (last_seen_at);
