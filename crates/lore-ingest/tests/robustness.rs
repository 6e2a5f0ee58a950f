//! `parse_bundle` never panics: garbage, truncated documents, deep nesting and wrong types all come back as
//! errors.

use lore_core::Registry;
use lore_ingest::parse_bundle;
use proptest::prelude::*;

const VALID: &str = r#"{
  "meeting": {"external_id": "acme-weekly", "title": "Acme weekly", "started_at": "2026-11-09T15:00:00Z"},
  "participants": [{"display_name": "Alice Chen", "email": "alice@acme.com", "speaker_label": "S1"}],
  "segments": [{"id": "s1", "start_ms": 0, "end_ms": 4200, "speaker": "S1",
                "text": "I'm now Principal Researcher at Acme."}],
  "notes": [{"id": "n1", "created_at": "2026-11-09T15:10:00Z", "text": "Alice: Principal Researcher"}],
  "links": [{"url": "https://github.com/acme/atlas/pull/42", "label": "Atlas PR"}],
  "tasks": [{"title": "Send the deck", "assignee": {"kind": "person", "name": "Alice Chen"},
             "evidence": {"note": "n1"}}],
  "claims": [{"subject": {"kind": "person", "name": "Alice Chen", "email": "alice@acme.com"},
              "predicate": "has_title", "value": "Principal Researcher",
              "evidence": {"segment_ids": ["s1"], "quote": "Principal Researcher"}}]
}"#;

fn parses(json: &str) -> bool {
    parse_bundle(json, &Registry::builtin(), None).is_ok()
}

#[test]
fn the_fixture_itself_parses() {
    assert!(parses(VALID));
}

#[test]
fn every_truncation_is_an_error() {
    let mut cut_points: Vec<usize> = VALID.char_indices().map(|(index, _)| index).collect();
    cut_points.retain(|index| !VALID[*index..].trim().is_empty());
    for cut in cut_points {
        assert!(!parses(&VALID[..cut]), "truncated at byte {cut} parsed");
    }
}

#[test]
fn deep_nesting_is_an_error() {
    for depth in [10, 200, 100_000] {
        let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(!parses(&arrays));
        let nested_in_field = VALID.replacen("\"notes\": [", &format!("\"notes\": [{arrays}, "), 1);
        assert!(!parses(&nested_in_field));
        let objects = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        assert!(!parses(&objects));
    }
}

#[test]
fn wrong_types_everywhere_are_errors() {
    let replacements = [
        "null", "0", "-1", "1.5", "true", "\"\"", "[]", "{}", "[[]]", "\"x\"", "1e400",
    ];
    // Replace each value-bearing token of the fixture in turn with a value of another type.
    let value: serde_json::Value = serde_json::from_str(VALID).expect("fixture is valid json");
    let mut paths = Vec::new();
    collect_paths(&value, &mut Vec::new(), &mut paths);
    for path in paths {
        for replacement in replacements {
            let Ok(replacement) = serde_json::from_str::<serde_json::Value>(replacement) else {
                continue;
            };
            let mut mutated = value.clone();
            if let Some(slot) = pointer_mut(&mut mutated, &path) {
                *slot = replacement;
            }
            // Either outcome is fine; what matters is that no input panics.
            let _ = parse_bundle(&mutated.to_string(), &Registry::builtin(), None);
        }
    }
}

fn collect_paths(value: &serde_json::Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                prefix.push(key.clone());
                collect_paths(item, prefix, out);
                prefix.pop();
            }
        }
        serde_json::Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                prefix.push(index.to_string());
                collect_paths(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'v>(
    value: &'v mut serde_json::Value,
    path: &[String],
) -> Option<&'v mut serde_json::Value> {
    let pointer: String = path
        .iter()
        .map(|part| format!("/{}", part.replace('~', "~0").replace('/', "~1")))
        .collect();
    value.pointer_mut(&pointer)
}

/// A deterministic generator, so that failures reproduce without a seed file.
fn garbage(seed: u64, length: usize) -> String {
    const ALPHABET: &[u8] = b"{}[]:,\"\\ \n0123456789.-+eEtrufalsn abcdefghijklmnopqrstuvwxyz_";
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..length)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ALPHABET[((state >> 33) as usize) % ALPHABET.len()] as char
        })
        .collect()
}

#[test]
fn deterministic_garbage_never_panics() {
    for seed in 0..2000 {
        let text = garbage(seed, (seed % 300) as usize);
        assert!(!parses(&text), "garbage {seed} parsed: {text:?}");
    }
}

proptest! {
    #[test]
    fn arbitrary_strings_never_panic(text in "\\PC{0,400}") {
        let _ = parse_bundle(&text, &Registry::builtin(), None);
    }

    #[test]
    fn arbitrary_edits_of_a_valid_bundle_never_panic(position in 0usize..2000, insert in "[\\[\\]{}\",:a-z0-9 ]{0,8}") {
        let mut text = VALID.to_string();
        let mut position = position % (text.len() + 1);
        while !text.is_char_boundary(position) {
            position -= 1;
        }
        text.insert_str(position, &insert);
        let _ = parse_bundle(&text, &Registry::builtin(), None);
    }
}
