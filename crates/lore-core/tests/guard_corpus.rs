//! The sensitive-data guard (L21) measured on a corpus: `guard/positive.txt` (lines that must be rejected)
//! and `guard/negative.txt` (meeting talk that must pass: meeting ids, dial-in numbers, timestamps,
//! versions, order numbers, budgets). Prints precision and recall and every misclassified line; fails
//! below the thresholds here. Run `cargo test -p lore-core --test guard_corpus -- --nocapture` to see them.

use lore_core::guard;

const MIN_PRECISION: f64 = 0.97;
const MIN_RECALL: f64 = 0.95;

fn lines(name: &str) -> Vec<String> {
    let path = format!("{}/tests/guard/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{path}: {error}"))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn guard_precision_and_recall_on_the_corpus_l21() {
    let positives = lines("positive.txt");
    let negatives = lines("negative.txt");
    assert!(positives.len() >= 200 && negatives.len() >= 1000);
    let mut missed = Vec::new();
    let mut caught = 0;
    for line in &positives {
        match guard::check_text(line) {
            Some(_) => caught += 1,
            None => missed.push(line.as_str()),
        }
    }
    let mut false_alarms = Vec::new();
    for line in &negatives {
        if let Some(rejection) = guard::check_text(line) {
            false_alarms.push(format!(
                "{line}    <- {}: {}",
                rejection.kind, rejection.reason
            ));
        }
    }
    let precision = caught as f64 / (caught + false_alarms.len()) as f64;
    let recall = caught as f64 / positives.len() as f64;
    println!(
        "guard on {} positive and {} negative lines: precision {precision:.3}, recall {recall:.3} \
         ({caught} caught, {} missed, {} false alarms)",
        positives.len(),
        negatives.len(),
        missed.len(),
        false_alarms.len()
    );
    for line in &missed {
        println!("  missed: {line}");
    }
    for line in &false_alarms {
        println!("  false alarm: {line}");
    }
    assert!(
        precision >= MIN_PRECISION,
        "precision {precision:.3} < {MIN_PRECISION}"
    );
    assert!(recall >= MIN_RECALL, "recall {recall:.3} < {MIN_RECALL}");
}
