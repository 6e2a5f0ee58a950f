//! The rules extractor and the date resolver never panic, and everything the extractor emits passes bundle
//! validation, whatever the transcript says.

use lore_core::{Registry, Ts};
use lore_extract::{resolve_date, Extractor, RulesExtractor};
use lore_ingest::{parse_bundle_value, validate_candidates};
use proptest::prelude::*;
use serde_json::json;

/// Words that drive the patterns, mixed with arbitrary text.
fn speech() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("I'm".to_string()),
        Just("I'll".to_string()),
        Just("we".to_string()),
        Just("Alice,".to_string()),
        Just("Bob".to_string()),
        Just("Atlas".to_string()),
        Just("the".to_string()),
        Just("leading".to_string()),
        Just("handing".to_string()),
        Just("off".to_string()),
        Just("to".to_string()),
        Just("by".to_string()),
        Just("next".to_string()),
        Just("Friday.".to_string()),
        Just("send".to_string()),
        Just("can you".to_string()),
        Just("is".to_string()),
        Just("on hold".to_string()),
        Just("Head of".to_string()),
        Just("engineer".to_string()),
        Just("’s".to_string()),
        "\\PC{0,6}",
    ];
    prop::collection::vec(word, 0..24).prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn rules_never_panic_and_emit_only_valid_candidates(texts in prop::collection::vec(speech(), 1..4)) {
        let segments: Vec<_> = texts
            .iter()
            .enumerate()
            .map(|(index, text)| json!({"id": format!("s{index}"), "start_ms": index * 1000,
                                        "speaker": if index % 2 == 0 { "S1" } else { "S2" }, "text": text}))
            .collect();
        let document = json!({
            "meeting": {"external_id": "m", "started_at": "2026-11-09T15:00:00Z"},
            "participants": [
                {"display_name": "Alice Chen", "email": "alice@acme.com", "speaker_label": "S1"},
                {"display_name": "Bob Okafor", "speaker_label": "S2"}
            ],
            "segments": segments,
        });
        let registry = Registry::builtin();
        let bundle = parse_bundle_value(&document, &registry, None).unwrap();
        let extraction = RulesExtractor.extract(&bundle).unwrap();
        let validated = validate_candidates(&bundle, &extraction.claims, &extraction.tasks, &registry);
        prop_assert!(validated.rejected.is_empty(), "{:?}", validated.rejected);
    }

    #[test]
    fn dates_never_panic(words in prop::collection::vec("\\PC{0,10}", 0..6), day in 0i64..40_000) {
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let _ = resolve_date(&words, Ts(day * 86_400_000));
    }
}
