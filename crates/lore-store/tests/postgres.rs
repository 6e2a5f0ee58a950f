//! The backend conformance suite on a real PostgreSQL server (`LORE_TEST_PG_URL`).

#![cfg(feature = "postgres")]

use lore_store::testing::{fresh_pg_database, pg_test_url};
use lore_store::{conformance, PostgresStore, Store};

#[test]
fn postgres_passes_the_conformance_suite() {
    let Some(base) = pg_test_url("postgres_passes_the_conformance_suite") else {
        return;
    };
    let blobs = tempfile::tempdir().unwrap();
    conformance::run_all(&|| {
        Box::new(PostgresStore::open(&fresh_pg_database(&base), blobs.path()).unwrap())
            as Box<dyn Store>
    });
}

/// Opening a database of schema 5 strips the derived fields from the entity rows of the revisions
/// already written (schema_v6), and leaves every other row as it was (SQLite's twin in sqlite.rs).
#[test]
fn a_version_5_database_keeps_entities_in_revisions_without_derived_fields_on_postgres() {
    use lore_store::testing::{
        assert_upgraded_without_derived_entity_fields, revision_with_derived_entity_fields,
    };
    let Some(base) = pg_test_url(
        "a_version_5_database_keeps_entities_in_revisions_without_derived_fields_on_postgres",
    ) else {
        return;
    };
    let url = fresh_pg_database(&base);
    let blobs = tempfile::tempdir().unwrap();
    {
        let store = PostgresStore::open(&url, blobs.path()).unwrap();
        store
            .write("alice", &mut |tx| {
                tx.insert_revision(&revision_with_derived_entity_fields("r1", 1))?;
                tx.insert_revision(&revision_with_derived_entity_fields("r2", 60))
            })
            .unwrap();
    }
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute("UPDATE lore_schema_version SET version = 5")
        .unwrap();
    drop(client);
    let store = PostgresStore::open(&url, blobs.path()).unwrap();
    assert_upgraded_without_derived_entity_fields(&store, "alice", "r1", 1);
    assert_upgraded_without_derived_entity_fields(&store, "alice", "r2", 60);
}

/// PostgreSQL finds a deleted parent row's children with a query on the foreign key's child columns:
/// a sequential scan of the child table unless an index leads with them.
#[test]
fn every_foreign_key_leads_an_index_on_postgres() {
    let Some(base) = pg_test_url("every_foreign_key_leads_an_index_on_postgres") else {
        return;
    };
    let url = fresh_pg_database(&base);
    let blobs = tempfile::tempdir().unwrap();
    drop(PostgresStore::open(&url, blobs.path()).unwrap());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let keys: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' \
             AND connamespace = 'public'::regnamespace",
            &[],
        )
        .unwrap()
        .get(0);
    let missing: Vec<String> = client
        .query(
            "SELECT c.conrelid::regclass::text || ' ' || c.conname FROM pg_constraint AS c \
             WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace \
             AND NOT EXISTS (SELECT 1 FROM pg_index AS i WHERE i.indrelid = c.conrelid \
                 AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey \
                 AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey) \
             ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(keys >= 14, "only {keys} foreign keys found");
    assert!(
        missing.is_empty(),
        "foreign keys without an index: {missing:#?}"
    );
}

/// A phrase search reads the GIN index, not every document of the owner newest first: PostgreSQL
/// estimates a phrase as often as all its words together, so with `ORDER BY doc` it walks the primary
/// key backwards expecting to fill the window early, and a rare phrase reads every document
/// (`search_candidates_statement`). And the index keeps no pending list for searches to read through
/// (schema_v4). The corpus is shaped like the benchmark's transcripts: twelve words per segment from
/// forty.
#[test]
fn a_phrase_search_reads_the_full_text_index_on_postgres() {
    let Some(base) = pg_test_url("a_phrase_search_reads_the_full_text_index_on_postgres") else {
        return;
    };
    let url = fresh_pg_database(&base);
    let blobs = tempfile::tempdir().unwrap();
    drop(PostgresStore::open(&url, blobs.path()).unwrap());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let options: Vec<String> = client
        .query_one(
            "SELECT coalesce(reloptions, '{}') FROM pg_class WHERE relname = 'search_docs_tsv'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(
        options.contains(&"fastupdate=off".to_string()),
        "the full-text index keeps a pending list: {options:?}"
    );
    client
        .batch_execute(
            "SELECT setseed(0.25); \
             INSERT INTO search_docs (owner, kind, ref, body) \
             SELECT 'o', 'segment', 'm/' || g, \
               (SELECT string_agg((ARRAY['atlas', 'roadmap', 'latency', 'budget', 'customer', \
                  'pipeline', 'search', 'index', 'migration', 'review', 'launch', 'pricing', \
                  'metrics', 'design', 'rollout', 'feedback', 'incident', 'capacity', 'hiring', \
                  'contract', 'security', 'audit', 'storage', 'billing', 'mobile', 'onboarding', \
                  'partner', 'support', 'quality', 'testing', 'release', 'schedule', 'vendor', \
                  'training', 'analytics', 'network', 'compliance', 'forecast', 'strategy', \
                  'workshop'])[1 + floor(random() * 40)::int], ' ') \
                FROM generate_series(1, 12) AS w WHERE g > 0) \
             FROM generate_series(1, 40000) AS g; \
             ANALYZE search_docs;",
        )
        .unwrap();
    let mut plan = |query: &str| -> String {
        let parsed = lore_core::search::parse_search_query(query).unwrap();
        let sql = lore_store::search_candidates_statement(&parsed);
        let tsquery = match query.starts_with('"') {
            true => "(atlas <-> latency)",
            false => "(atlas)",
        };
        client
            .query(
                &format!("EXPLAIN {sql}"),
                &[&"o", &tsquery, &Some("segment"), &1000i64],
            )
            .unwrap()
            .iter()
            .map(|row| row.get::<_, String>(0))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let phrase = plan("\"atlas latency\"");
    assert!(
        phrase.contains("Bitmap Index Scan on search_docs_tsv"),
        "a phrase search does not read the full-text index:\n{phrase}"
    );
    let word = plan("atlas");
    assert!(
        word.contains("Index Scan Backward using search_docs_pkey"),
        "a common word no longer reads the newest documents first:\n{word}"
    );
}
