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
