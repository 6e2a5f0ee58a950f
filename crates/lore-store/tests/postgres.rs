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
