//! The benchmark's own meetings ingested in batches give exactly the state of ingesting them one by
//! one (L14): every bundle of a batch settles its slots at once, while the entities the batch
//! touches (the hubs most of all) are rebuilt once, with its last bundle. Batches prepared on a
//! second thread while the batch before them is written (`Engine::ingest_pipelined`) leave it too.

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
    let mut bundles: Vec<lore_ingest::Bundle> = dataset
        .bundles()
        .take(120)
        .map(|text| lore_ingest::parse_bundle(&text, &registry, None).expect("bundle"))
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
    let pipelined = engine(&dir, "pipelined.db");
    for chunk in bundles.chunks(32) {
        let refs: Vec<&lore_ingest::Bundle> = chunk.iter().collect();
        for result in batched.ingest_bundles(OWNER, &refs) {
            result.expect("batched ingest");
        }
    }
    // The same batches prepared on a second thread while the one before is written, with an item
    // the caller could not make a bundle of in the middle of a batch: it comes back with its error,
    // in its place, and the others are stored.
    let items: Vec<(usize, lore_engine::EngineResult<lore_ingest::Bundle>)> =
        bundles.iter().cloned().map(Ok).enumerate().collect();
    let mut items = items.into_iter();
    let batches = std::iter::from_fn(|| {
        let mut batch: Vec<_> = items.by_ref().take(32).collect();
        if batch.len() == 32 {
            let error = lore_engine::EngineError::Invalid("not a bundle".into());
            batch.insert(10, (usize::MAX, Err(error)));
        }
        (!batch.is_empty()).then_some(batch)
    });
    let mut returned = Vec::new();
    pipelined.ingest_pipelined(OWNER, batches, |results| {
        for (index, result) in results {
            match (index, result) {
                (usize::MAX, Err(error)) => assert!(error.to_string().contains("not a bundle")),
                (usize::MAX, Ok(_)) => panic!("the item without a bundle was ingested"),
                (index, result) => {
                    result.expect("pipelined ingest");
                    returned.push(index);
                }
            }
        }
    });
    assert_eq!(returned, (0..bundles.len()).collect::<Vec<_>>());
    for bundle in &bundles {
        single.ingest_bundle(OWNER, bundle).expect("single ingest");
    }
    assert_eq!(
        check_invariants(&batched, OWNER).expect("check"),
        Vec::<String>::new()
    );
    let one_by_one = state_dump(&single, OWNER).expect("dump");
    assert!(
        state_dump(&batched, OWNER).expect("dump") == one_by_one,
        "batches left another state than one-by-one ingestion"
    );
    assert!(
        state_dump(&pipelined, OWNER).expect("dump") == one_by_one,
        "pipelined batches left another state than one-by-one ingestion"
    );
}
