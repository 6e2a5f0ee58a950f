-- Which meetings each revision's rows name (a row's `meeting` field, a `meeting:ID` key), written
-- with the revision by the store (`revision_meetings` in lib.rs): deleting a meeting erases its words
-- from every revision that copied its rows, found here instead of by reading every revision.
CREATE TABLE revision_meetings (
    owner TEXT NOT NULL,
    meeting TEXT NOT NULL,
    revision TEXT NOT NULL,
    PRIMARY KEY (owner, meeting, revision)
);
-- Revisions written before: the same derivation over their JSON snapshots.
INSERT INTO revision_meetings (owner, meeting, revision)
SELECT DISTINCT r.owner, named.meeting, r.id
FROM revisions AS r
CROSS JOIN LATERAL (
    SELECT CASE
        WHEN row.key LIKE 'meeting:%' THEN substr(row.key, 9)
        WHEN jsonb_typeof(row.value) = 'object' AND jsonb_typeof(row.value -> 'meeting') = 'string'
            THEN row.value ->> 'meeting'
    END AS meeting
    FROM (SELECT r.before::jsonb AS snapshot UNION ALL SELECT r.after::jsonb) AS s
    CROSS JOIN LATERAL jsonb_each(
        CASE WHEN jsonb_typeof(s.snapshot) = 'object' THEN s.snapshot ELSE '{}'::jsonb END
    ) AS row
) AS named
WHERE named.meeting IS NOT NULL
ON CONFLICT DO NOTHING;
