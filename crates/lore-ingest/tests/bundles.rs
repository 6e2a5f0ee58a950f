//! Data-driven bundle tests: `bundles/ok/*.json` must parse to the rendering in the `.expected` file beside
//! each, and `bundles/err/*.json` must fail with exactly the error text in theirs. `UPDATE_EXPECT=1` rewrites
//! the expected files from the actual results.

use std::fs;
use std::path::{Path, PathBuf};

use lore_core::Registry;
use lore_ingest::parse_bundle;

/// Stands in for the absolute bundle folder in rendered attachment paths, so expected files are portable.
const BUNDLE_DIR_PLACEHOLDER: &str = "<bundle-dir>";

fn cases(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bundles")
        .join(folder);
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    paths.sort();
    paths
}

/// What a case produced: the pretty JSON of the bundle, or the error text; and whether it parsed.
fn run(path: &Path) -> (String, bool) {
    let json = fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
    let base_dir = path.parent().expect("case files live in a folder");
    match parse_bundle(&json, &Registry::builtin(), Some(base_dir)) {
        Ok(bundle) => {
            let rendered = serde_json::to_string_pretty(&bundle).expect("bundles serialize");
            let folder =
                serde_json::to_string(&base_dir.display().to_string()).expect("paths serialize");
            let folder = folder.trim_matches('"');
            (
                rendered.replace(folder, BUNDLE_DIR_PLACEHOLDER) + "\n",
                true,
            )
        }
        Err(errors) => (errors.to_string() + "\n", false),
    }
}

/// Compares every case with its expected file; returns one description per mismatch.
fn check(folder: &str, should_parse: bool) -> Vec<String> {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    let paths = cases(folder);
    assert!(!paths.is_empty(), "no cases in {folder}");
    for path in paths {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (actual, parsed) = run(&path);
        if parsed != should_parse {
            failures.push(format!(
                "{folder}/{name}: expected {}, got:\n{actual}",
                if should_parse { "success" } else { "an error" }
            ));
            continue;
        }
        // An err case tests one rule, so it must fail for exactly one reason.
        if !should_parse && !name.starts_with("many_") && actual.lines().count() != 1 {
            failures.push(format!(
                "{folder}/{name}: expected exactly one error, got:\n{actual}"
            ));
        }
        let expected_path = path.with_extension("expected");
        if update {
            fs::write(&expected_path, &actual).expect("writing expected file");
            continue;
        }
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{folder}/{name}:\n--- expected\n{expected}--- actual\n{actual}"
            )),
            Err(_) => failures.push(format!(
                "{folder}/{name}: no .expected file (run with UPDATE_EXPECT=1)\n{actual}"
            )),
        }
    }
    failures
}

#[test]
fn bundle_cases_match_expected_files() {
    let mut failures = check("ok", true);
    failures.extend(check("err", false));
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn content_hash_ignores_key_order_and_white_space() {
    let registry = Registry::builtin();
    let compact = r#"{"meeting":{"external_id":"m","started_at":"2026-11-09"},"segments":[{"id":"s1","start_ms":0,"text":"Hi."}]}"#;
    let reordered = "{\n  \"segments\": [ {\"text\": \"Hi.\", \"start_ms\": 0, \"id\": \"s1\"} ],\n  \"meeting\": {\"started_at\": \"2026-11-09\", \"external_id\": \"m\"}\n}\n";
    let changed = compact.replace("Hi.", "Hi!");
    let hash = |json: &str| parse_bundle(json, &registry, None).map(|bundle| bundle.content_hash);
    assert_eq!(hash(compact), hash(reordered));
    assert_ne!(hash(compact), hash(&changed));
}
