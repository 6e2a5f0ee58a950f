-- Entity ids that were replaced by another: a person re-keyed when its anchor identifier changed
-- (a smaller email joined it) points its old id at the new one, so a link, a bookmark or an
-- assistant's note that names the old id still finds the person. Not part of the knowledge (an
-- ingest order that never made the old id leaves no row), so state comparisons leave it out.
CREATE TABLE entity_redirects (
    owner TEXT NOT NULL,
    old_id TEXT NOT NULL,
    new_id TEXT NOT NULL,
    PRIMARY KEY (owner, old_id)
) WITHOUT ROWID;
