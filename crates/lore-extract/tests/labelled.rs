//! Measures the rules extractor on the hand-labelled sentences in `labelled/sentences.json`: prints
//! precision and recall for claims and for tasks, and fails when claim precision drops below 0.9 or recall
//! below the floor recorded here. Run `cargo test -p lore-extract --test labelled -- --nocapture` to see
//! the figures and every miss and false positive.

use std::collections::BTreeSet;

use lore_core::{Registry, Ts};
use lore_extract::{Extractor, RulesExtractor};
use lore_ingest::{parse_bundle_value, validate_candidates};
use serde_json::{json, Value};

const MIN_CLAIM_PRECISION: f64 = 0.9;
const MIN_CLAIM_RECALL: f64 = 0.75;

fn name_of(entity: &Value) -> String {
    entity["name"].as_str().unwrap_or("").to_string()
}

/// Renders a candidate the way labels are written.
fn render_claim(claim: &Value) -> String {
    let mut parts = vec![
        name_of(&claim["subject"]),
        claim["predicate"].as_str().unwrap_or("").to_string(),
        claim["value"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| name_of(&claim["object"])),
    ];
    if claim.get("context").is_some() {
        parts.push(name_of(&claim["context"]));
    }
    if let Some(due) = claim["due_at"].as_str() {
        parts.push(format!("due {}", &due[..10]));
    }
    if claim["ends"].as_bool() == Some(true) {
        parts.push("ends".into());
    }
    parts.join(" | ").to_lowercase()
}

fn render_task(task: &Value) -> String {
    let mut parts = vec![
        "task".to_string(),
        name_of(&task["assignee"]),
        task["title"].as_str().unwrap_or("").to_string(),
    ];
    if let Some(due) = task["due_at"].as_str() {
        parts.push(format!("due {}", &due[..10]));
    }
    parts.join(" | ").to_lowercase()
}

#[derive(Default)]
struct Tally {
    true_positives: usize,
    false_positives: Vec<String>,
    misses: Vec<String>,
}

impl Tally {
    fn precision(&self) -> f64 {
        let found = self.true_positives + self.false_positives.len();
        if found == 0 {
            1.0
        } else {
            self.true_positives as f64 / found as f64
        }
    }

    fn recall(&self) -> f64 {
        let expected = self.true_positives + self.misses.len();
        if expected == 0 {
            1.0
        } else {
            self.true_positives as f64 / expected as f64
        }
    }

    fn add(&mut self, sentence: &str, expected: &BTreeSet<String>, actual: &BTreeSet<String>) {
        for item in actual {
            if expected.contains(item) {
                self.true_positives += 1;
            } else {
                self.false_positives
                    .push(format!("{item}    <- \"{sentence}\""));
            }
        }
        for item in expected.difference(actual) {
            self.misses.push(format!("{item}    <- \"{sentence}\""));
        }
    }
}

#[test]
fn rules_extractor_precision_and_recall_on_labelled_sentences() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/labelled/sentences.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let registry = Registry::builtin();
    let mut claims = Tally::default();
    let mut tasks = Tally::default();
    let mut n_sentences = 0;
    for meeting in data["meetings"].as_array().unwrap() {
        let sentences = meeting["sentences"].as_array().unwrap();
        let segments: Vec<Value> = sentences
            .iter()
            .enumerate()
            .map(|(index, s)| {
                json!({"id": format!("s{index}"), "start_ms": index * 1000, "speaker": s["speaker"], "text": s["text"]})
            })
            .collect();
        let bundle_json = json!({
            "meeting": {"external_id": meeting["name"], "started_at": meeting["started_at"]},
            "participants": meeting["participants"],
            "segments": segments,
        });
        let bundle = parse_bundle_value(&bundle_json, &registry, None).unwrap();
        let extraction = RulesExtractor.extract(&bundle).unwrap();
        // Everything the extractor emits must pass bundle validation.
        let validated =
            validate_candidates(&bundle, &extraction.claims, &extraction.tasks, &registry);
        assert!(validated.rejected.is_empty(), "{:?}", validated.rejected);
        for (index, sentence) in sentences.iter().enumerate() {
            n_sentences += 1;
            let segment_id = format!("s{index}");
            let cites = |value: &&Value| value["evidence"]["segment_ids"][0] == segment_id.as_str();
            let text = sentence["text"].as_str().unwrap();
            let expected: Vec<String> = sentence["expect"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_lowercase())
                .collect();
            let expected_claims: BTreeSet<String> = expected
                .iter()
                .filter(|e| !e.starts_with("task |"))
                .cloned()
                .collect();
            let expected_tasks: BTreeSet<String> = expected
                .iter()
                .filter(|e| e.starts_with("task |"))
                .cloned()
                .collect();
            let actual_claims: BTreeSet<String> = extraction
                .claims
                .iter()
                .filter(cites)
                .map(render_claim)
                .collect();
            let actual_tasks: BTreeSet<String> = extraction
                .tasks
                .iter()
                .filter(cites)
                .map(render_task)
                .collect();
            claims.add(text, &expected_claims, &actual_claims);
            tasks.add(text, &expected_tasks, &actual_tasks);
        }
    }
    let _ = Ts(0);
    println!("rules extractor on {n_sentences} labelled sentences:");
    println!(
        "  claims: precision {:.2}, recall {:.2} ({} correct, {} wrong, {} missed)",
        claims.precision(),
        claims.recall(),
        claims.true_positives,
        claims.false_positives.len(),
        claims.misses.len()
    );
    println!(
        "  tasks:  precision {:.2}, recall {:.2} ({} correct, {} wrong, {} missed)",
        tasks.precision(),
        tasks.recall(),
        tasks.true_positives,
        tasks.false_positives.len(),
        tasks.misses.len()
    );
    for wrong in claims.false_positives.iter().chain(&tasks.false_positives) {
        println!("  wrong:  {wrong}");
    }
    for missed in claims.misses.iter().chain(&tasks.misses) {
        println!("  missed: {missed}");
    }
    assert!(n_sentences >= 60);
    assert!(
        claims.precision() >= MIN_CLAIM_PRECISION,
        "claim precision {:.2} < {MIN_CLAIM_PRECISION}",
        claims.precision()
    );
    assert!(
        claims.recall() >= MIN_CLAIM_RECALL,
        "claim recall {:.2} < {MIN_CLAIM_RECALL}",
        claims.recall()
    );
}
