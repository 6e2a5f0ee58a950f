//! The benchmark's own meetings ingested in batches give exactly the state of ingesting them one by
//! one (L14): every bundle of a batch settles its slots at once, while the entities the batch
//! touches (the hubs most of all) are rebuilt once, with its last bundle.

use std::sync::Arc;

use lore_core::Ts;
use lore_engine::{check_invariants, state_dump, Engine};
use lore_store::SqliteStore;

const OWNER: &str = "bench";

fn engine(dir: &tempfile::TempDir, name: &str) -> Engine {
    let store = SqliteStore::open(&dir.path().join(name)).expect("open sqlite");
    let now = Ts::parse("2026-11-20T09:00:00Z").expect("time");
    Engine::new(Box::new(store)).with_clock(Arc::new(move || now))
}

#[test]
fn batches_leave_the_state_of_one_by_one_ingestion() {
    let registry = lore_core::Registry::builtin();
    let dataset = lore_bench::generate(1);
    let mut bundles: Vec<lore_ingest::Bundle> = dataset.bundles[..120]
        .iter()
        .map(|text| lore_ingest::parse_bundle(text, &registry, None).expect("bundle"))
        .collect();
    // A batch that replaces meetings of earlier batches, and one of its own.
    let mut replacement = bundles[5].clone();
    replacement.meeting.title = "Meeting 5, again".into();
    replacement.content_hash = "changed".into();
    bundles.insert(70, replacement);
    bundles.insert(75, bundles[3].clone());
    bundles.insert(80, bundles[3].clone());
    let dir = tempfile::tempdir().expect("temp dir");
    let (batched, single) = (engine(&dir, "batched.db"), engine(&dir, "single.db"));
    for chunk in bundles.chunks(32) {
        let refs: Vec<&lore_ingest::Bundle> = chunk.iter().collect();
        for result in batched.ingest_bundles(OWNER, &refs) {
            result.expect("batched ingest");
        }
    }
    for bundle in &bundles {
        single.ingest_bundle(OWNER, bundle).expect("single ingest");
    }
    assert_eq!(
        check_invariants(&batched, OWNER).expect("check"),
        Vec::<String>::new()
    );
    assert!(
        state_dump(&batched, OWNER).expect("dump") == state_dump(&single, OWNER).expect("dump"),
        "batches left another state than one-by-one ingestion"
    );
}
