-- Revisions keep entity rows without their derived fields (`Entity::DERIVED_FIELDS` in lore-core:
-- observation times and the projection, which repeat what the entity's claims said and must leave the
-- revision log with the meeting that said it). Snapshots may be compressed, so the rows written
-- before are rewritten by the store when it opens the database (`strip_derived_entity_fields`).
SELECT 1;
