//! Concurrent ingesters for one owner: eight threads ingest different meetings at once. The result
//! must equal a sequential ingestion of the same meetings (no duplicated entity or claim, every
//! slot re-evaluated with all evidence), on every backend.

mod common;

use lore_engine::state_dump;
use serde_json::Value;

use common::{assert_consistent, backend_engines, example_files, memory_engine, TestClock};

const OWNER: &str = "team";
const THREADS: usize = 8;

/// The example meetings, each copied under several external ids so that threads share people,
/// projects and slots but never a meeting.
fn bundles() -> Vec<lore_ingest::Bundle> {
    let registry = lore_core::Registry::builtin();
    let files = example_files();
    let mut bundles = Vec::new();
    for copy in 0..3 {
        for file in &files {
            let mut json: Value =
                serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            let external_id = format!(
                "{}-copy{copy}",
                json["meeting"]["external_id"].as_str().unwrap()
            );
            json["meeting"]["external_id"] = Value::String(external_id);
            bundles.push(
                lore_ingest::parse_bundle(&json.to_string(), &registry, file.parent()).unwrap(),
            );
        }
    }
    bundles
}

#[test]
fn eight_concurrent_ingesters_equal_one_sequential_ingester() {
    let bundles = bundles();
    let clock = TestClock::new("2026-12-01T00:00:00Z");
    let reference = memory_engine(&clock);
    for bundle in &bundles {
        reference.ingest_bundle(OWNER, bundle).unwrap();
    }
    let expected = state_dump(&reference, OWNER).unwrap();

    for (backend, engine, _dir) in backend_engines(&clock, "concurrent ingesters on postgres") {
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let (engine, bundles) = (&engine, &bundles);
                scope.spawn(move || {
                    for bundle in bundles.iter().skip(thread).step_by(THREADS) {
                        engine
                            .ingest_bundle(OWNER, bundle)
                            .unwrap_or_else(|e| panic!("{backend}: {e}"));
                    }
                });
            }
        });
        assert_consistent(&engine, OWNER, backend);
        let actual = state_dump(&engine, OWNER).unwrap();
        for table in [
            "entities",
            "claims",
            "evidence",
            "aliases",
            "links",
            "tasks",
            "suggestions",
        ] {
            assert_eq!(
                actual[table], expected[table],
                "{backend}: {table} differ from a sequential ingest"
            );
        }
    }
}
