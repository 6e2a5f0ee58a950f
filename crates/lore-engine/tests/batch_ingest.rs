//! `Engine::ingest_bundles`: several meetings in one write transaction give exactly the state,
//! outcomes and revisions of ingesting them one by one (L1, L2, L14), and a bundle that fails inside
//! the batch gets its own error while the others are still stored.

mod common;

use lore_engine::{state_dump, Engine, EngineError, IngestOutcome};
use lore_ingest::Bundle;

use common::{assert_consistent, backend_engines, example_files, examples_dir, TestClock};

const OWNER: &str = "batch";

fn example_bundles() -> Vec<Bundle> {
    let files = example_files();
    let registry = lore_core::Registry::builtin();
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            lore_ingest::parse_bundle(&text, &registry, file.parent()).unwrap()
        })
        .collect()
}

/// The first example with its title changed: other content for the same meeting (a replacement).
fn retitled(bundle: &Bundle) -> Bundle {
    let mut text: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(first_example_file()).expect("first example"),
    )
    .expect("json");
    text["meeting"]["title"] = serde_json::json!("Kickoff (retitled)");
    let registry = lore_core::Registry::builtin();
    let folder = examples_dir();
    let changed = lore_ingest::parse_bundle(&text.to_string(), &registry, Some(folder.as_path()))
        .expect("retitled bundle");
    assert_eq!(changed.meeting.external_id, bundle.meeting.external_id);
    changed
}

fn first_example_file() -> std::path::PathBuf {
    let mut files = example_files();
    files.remove(0)
}

/// Two engines per backend, each on a database of its own: one takes the batch, the other the same
/// bundles one by one.
struct Pair {
    backend: &'static str,
    batch: Engine,
    single: Engine,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn engine_pairs(clock: &TestClock, test: &str) -> Vec<Pair> {
    let mut singles = backend_engines(clock, &format!("{test}_single"));
    backend_engines(clock, test)
        .into_iter()
        .map(|(backend, batch, dir)| {
            let at = singles
                .iter()
                .position(|(name, ..)| *name == backend)
                .expect("same backend");
            let (_, single, single_dir) = singles.remove(at);
            Pair {
                backend,
                batch,
                single,
                _dirs: (dir, single_dir),
            }
        })
        .collect()
}

fn one_by_one(engine: &Engine, bundles: &[&Bundle]) -> Vec<Result<IngestOutcome, String>> {
    bundles
        .iter()
        .map(|bundle| {
            engine
                .ingest_bundle(OWNER, bundle)
                .map(|report| report.outcome)
                .map_err(|error| error.to_string())
        })
        .collect()
}

fn batched(engine: &Engine, bundles: &[&Bundle]) -> Vec<Result<IngestOutcome, String>> {
    engine
        .ingest_bundles(OWNER, bundles)
        .into_iter()
        .map(|result| {
            result
                .map(|report| report.outcome)
                .map_err(|error| error.to_string())
        })
        .collect()
}

fn revision_count(engine: &Engine) -> usize {
    engine
        .read(OWNER, |tx| Ok(tx.list_revisions(100_000)?.len()))
        .expect("revisions")
}

#[test]
fn a_batch_equals_one_by_one_ingestion() {
    let examples = example_bundles();
    let changed = retitled(&examples[0]);
    // Every example, the first again (unchanged, L2), then the first with other content (replaced),
    // then the first again as it was (replaced back).
    let mut bundles: Vec<&Bundle> = examples.iter().collect();
    bundles.push(&examples[0]);
    bundles.push(&changed);
    bundles.push(&examples[0]);
    let clock = TestClock::new("2026-11-20T09:00:00Z");
    for Pair {
        backend,
        batch: batch_engine,
        single: single_engine,
        _dirs,
    } in engine_pairs(&clock, "batch_equals")
    {
        let expected = one_by_one(&single_engine, &bundles);
        let actual = batched(&batch_engine, &bundles);
        assert_eq!(actual, expected, "{backend}: outcomes");
        assert_eq!(
            expected[examples.len()..],
            [
                Ok(IngestOutcome::Unchanged),
                Ok(IngestOutcome::Replaced),
                Ok(IngestOutcome::Replaced)
            ],
            "{backend}: the batch's own repeats"
        );
        assert_consistent(&batch_engine, OWNER, backend);
        assert!(
            state_dump(&batch_engine, OWNER).unwrap() == state_dump(&single_engine, OWNER).unwrap(),
            "{backend}: a batch left another state than one-by-one ingestion"
        );
        assert_eq!(
            revision_count(&batch_engine),
            revision_count(&single_engine),
            "{backend}: one revision per applied bundle"
        );
        // The whole batch again: every bundle is unchanged.
        let again = batched(&batch_engine, &bundles[..examples.len()]);
        assert!(again
            .iter()
            .all(|outcome| *outcome == Ok(IngestOutcome::Unchanged)));
    }
}

#[test]
fn a_failing_bundle_gets_its_error_and_the_others_are_stored() {
    let examples = example_bundles();
    let mut broken = examples[3].clone();
    let claims = broken.claims.as_mut().expect("the example supplies claims");
    claims[0].predicate = "no_such_predicate".into();
    let mut bundles: Vec<&Bundle> = examples.iter().collect();
    bundles[3] = &broken;
    let survivors: Vec<&Bundle> = bundles
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 3)
        .map(|(_, bundle)| *bundle)
        .collect();
    let clock = TestClock::new("2026-11-20T09:00:00Z");
    for Pair {
        backend,
        batch: batch_engine,
        single: single_engine,
        _dirs,
    } in engine_pairs(&clock, "batch_failing")
    {
        let results = batch_engine.ingest_bundles(OWNER, &bundles);
        assert_eq!(results.len(), bundles.len());
        for (index, result) in results.iter().enumerate() {
            match (index, result) {
                (3, Err(EngineError::Invalid(message))) => {
                    assert!(message.contains("unknown predicate"), "{message}")
                }
                (3, other) => panic!("{backend}: the broken bundle gave {other:?}"),
                (_, Ok(report)) => assert_eq!(report.outcome, IngestOutcome::Created),
                (_, Err(error)) => panic!("{backend}: bundle {index} failed: {error}"),
            }
        }
        one_by_one(&single_engine, &survivors);
        assert_consistent(&batch_engine, OWNER, backend);
        assert!(
            state_dump(&batch_engine, OWNER).unwrap() == state_dump(&single_engine, OWNER).unwrap(),
            "{backend}: the batch lost or added something next to its failing bundle"
        );
    }
}

fn pipelined(
    engine: &Engine,
    bundles: &[&Bundle],
    batch: usize,
) -> Vec<Result<IngestOutcome, String>> {
    let batches = bundles.chunks(batch).map(|chunk| {
        chunk
            .iter()
            .map(|bundle| ((), Ok((*bundle).clone())))
            .collect::<Vec<_>>()
    });
    let mut outcomes = Vec::new();
    engine.ingest_pipelined(OWNER, batches, |results| {
        outcomes.extend(results.into_iter().map(|(_, result)| {
            result
                .map(|report| report.outcome)
                .map_err(|error| error.to_string())
        }))
    });
    outcomes
}

/// Batches prepared while the batch before them is written (`Engine::ingest_pipelined`) give the
/// outcomes and state of one-by-one ingestion. A meeting the batch still being written replaces is
/// not judged unchanged (L2) from what was stored before that batch: the first example, replaced by
/// other content, then ingested as it was, is replaced back.
#[test]
fn pipelined_batches_equal_one_by_one_ingestion() {
    let examples = example_bundles();
    let changed = retitled(&examples[0]);
    let mut bundles: Vec<&Bundle> = examples.iter().collect();
    bundles.extend([&examples[0], &changed, &examples[0], &examples[0]]);
    let clock = TestClock::new("2026-11-20T09:00:00Z");
    for batch in [1, 3] {
        for Pair {
            backend,
            batch: engine,
            single: single_engine,
            _dirs,
        } in engine_pairs(&clock, &format!("pipelined_{batch}"))
        {
            let expected = one_by_one(&single_engine, &bundles);
            assert_eq!(
                expected[examples.len()..],
                [
                    Ok(IngestOutcome::Unchanged),
                    Ok(IngestOutcome::Replaced),
                    Ok(IngestOutcome::Replaced),
                    Ok(IngestOutcome::Unchanged)
                ],
                "{backend}: one by one"
            );
            let actual = pipelined(&engine, &bundles, batch);
            assert_eq!(actual, expected, "{backend}, batches of {batch}: outcomes");
            assert_consistent(&engine, OWNER, backend);
            assert!(
                state_dump(&engine, OWNER).unwrap() == state_dump(&single_engine, OWNER).unwrap(),
                "{backend}, batches of {batch}: another state than one-by-one ingestion"
            );
        }
    }
}

/// Every word of the examples' transcripts, as search terms (letters only, lowercased, distinct).
fn transcript_words(bundles: &[Bundle]) -> Vec<String> {
    let mut words = std::collections::BTreeSet::new();
    for bundle in bundles {
        for segment in &bundle.segments {
            for word in segment.text.split(|c: char| !c.is_ascii_alphabetic()) {
                if word.len() > 2 {
                    words.insert(word.to_ascii_lowercase());
                }
            }
        }
    }
    words.into_iter().collect()
}

fn segment_hits(engine: &Engine, word: &str) -> Vec<(String, String, Option<String>)> {
    let request = lore_engine::SearchRequest {
        query: word.to_string(),
        kind: Some("segment".into()),
        limit: 50,
        newest_first: false,
    };
    engine
        .search(OWNER, &request)
        .expect("search")
        .into_iter()
        .map(|hit| {
            let meeting = hit.meeting.map(|m| m.external_id);
            (hit.id, format!("{:.9}", hit.score), meeting)
        })
        .collect()
}

/// A batch's transcripts are indexed as each bundle is done, beside the next one's work
/// (`Tx::index_queued_search`), not at the commit; a meeting the batch replaces and then replaces
/// back reuses its segments' documents meanwhile. Every word of the transcripts finds the same
/// segments as after one-by-one ingestion (on the log store with the same scores), and the index's
/// term counts agree with FTS5's own (`assert_consistent`).
#[test]
fn a_batchs_transcripts_are_searched_as_one_by_ones() {
    let examples = example_bundles();
    let changed = retitled(&examples[0]);
    let mut bundles: Vec<&Bundle> = examples.iter().collect();
    bundles.extend([&changed, &examples[0]]);
    let words = transcript_words(&examples);
    assert!(words.len() > 50, "the examples have transcripts");
    let clock = TestClock::new("2026-11-20T09:00:00Z");
    for Pair {
        backend,
        batch: engine,
        single: single_engine,
        _dirs,
    } in engine_pairs(&clock, "batch_search")
    {
        one_by_one(&single_engine, &bundles);
        let outcomes = pipelined(&engine, &bundles, bundles.len());
        assert!(
            outcomes.iter().all(Result::is_ok),
            "{backend}: {outcomes:?}"
        );
        assert_consistent(&engine, OWNER, backend);
        let mut finding = 0;
        for word in &words {
            let (mut found, mut expected) = (
                segment_hits(&engine, word),
                segment_hits(&single_engine, word),
            );
            // PostgreSQL's English configuration drops stop words ('about').
            finding += usize::from(!found.is_empty());
            // The tables' store's scores count the replaced documents still in its index until
            // their deletion is applied, which a batch and single commits do at other times.
            if backend != "log" {
                for hits in [&mut found, &mut expected] {
                    hits.iter_mut().for_each(|hit| hit.1.clear());
                    hits.sort();
                }
            }
            assert_eq!(found, expected, "{backend}: '{word}'");
        }
        assert!(
            finding * 4 > words.len() * 3,
            "{backend}: {finding} of {} words find their segments",
            words.len()
        );
    }
}
