-- Which meetings each revision's rows name (a row's `meeting` field, a `meeting:ID` key), written
-- with the revision by the store (`revision_meetings` in lib.rs). Deleting a meeting erases its
-- words from every revision that copied its rows (a merge, a re-keyed person, an undo), found here
-- instead of by reading every revision. Revisions written before this table are added to it when
-- the database is opened (`SqliteStore::setup`).
CREATE TABLE revision_meetings (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    revision TEXT NOT NULL,
    PRIMARY KEY (owner, meeting, revision)
) WITHOUT ROWID;
