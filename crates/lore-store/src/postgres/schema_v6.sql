-- Revisions keep entity rows without their derived fields (`Entity::DERIVED_FIELDS` in lore-core:
-- observation times and the projection, which repeat what the entity's claims said and must leave the
-- revision log with the meeting that said it; SQLite's schema_v6.sql). The revisions written before
-- lose them here.
CREATE FUNCTION pg_temp.lore_without_derived_entity_fields(snapshot TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(snapshot::jsonb) <> 'object' THEN snapshot ELSE (
        SELECT coalesce(jsonb_object_agg(
            row.key,
            CASE WHEN row.key LIKE 'entity:%' AND jsonb_typeof(row.value) = 'object'
                THEN row.value - ARRAY['first_observed_at', 'last_observed_at',
                                       'current_attributes', 'current_brief']
                ELSE row.value END
        ), '{}'::jsonb)::text
        FROM jsonb_each(snapshot::jsonb) AS row
    ) END
$$;
UPDATE revisions
SET before = pg_temp.lore_without_derived_entity_fields(before),
    after = pg_temp.lore_without_derived_entity_fields(after)
WHERE before LIKE '%"entity:%' OR after LIKE '%"entity:%';
DROP FUNCTION pg_temp.lore_without_derived_entity_fields(TEXT);
