//! Data-driven transcript parser tests: every file in `transcripts/ok` must parse to the rendering in the
//! `.expected` file beside it, and every file in `transcripts/err` must fail with exactly the error text in
//! its `.expected` file. `.vtt`, `.srt` and `.txt` files are transcripts; `.json` files are QMSum/AMI
//! meetings whose code is the last `_`-separated part of the file name. `UPDATE_EXPECT=1` rewrites the
//! expected files from the actual results.

use std::fs;
use std::path::{Path, PathBuf};

use lore_core::Registry;
use lore_ingest::{parse_ami, parse_bundle_value, parse_transcript, TranscriptFormat};

fn cases(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/transcripts")
        .join(folder);
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|e| matches!(e.to_str(), Some("vtt" | "srt" | "txt" | "json")))
        })
        .collect();
    paths.sort();
    paths
}

/// What a case produced, and whether it parsed.
fn run(path: &Path) -> (String, bool) {
    let bytes = fs::read(path).expect("case file");
    let text = String::from_utf8_lossy(&bytes);
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if extension == "json" {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let code = stem.rsplit('_').next().unwrap_or(stem);
        let document: serde_json::Value = serde_json::from_str(&text).expect("case json");
        return match parse_ami(code, &document) {
            Ok(meeting) => {
                // The bundle must also pass bundle validation.
                let bundle = parse_bundle_value(&meeting.bundle, &Registry::builtin(), None)
                    .map(|_| "valid")
                    .unwrap_or_else(|_| "INVALID");
                let rendered = serde_json::json!({
                    "series": meeting.series, "bundle": meeting.bundle,
                    "diagnostics": meeting.diagnostics, "bundle_validation": bundle,
                });
                (
                    serde_json::to_string_pretty(&rendered).unwrap() + "\n",
                    true,
                )
            }
            Err(error) => (error.to_string() + "\n", false),
        };
    }
    let format = TranscriptFormat::from_extension(extension).expect("known extension");
    match parse_transcript(format, &text) {
        Ok(transcript) => (
            serde_json::to_string_pretty(&transcript).unwrap() + "\n",
            true,
        ),
        Err(error) => (error.to_string() + "\n", false),
    }
}

fn check(folder: &str, should_parse: bool) -> Vec<String> {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    let paths = cases(folder);
    assert!(!paths.is_empty(), "no cases in {folder}");
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (actual, parsed) = run(&path);
        if parsed != should_parse {
            failures.push(format!(
                "{folder}/{name}: expected {}, got:\n{actual}",
                if should_parse { "success" } else { "an error" }
            ));
            continue;
        }
        let expected_path = PathBuf::from(format!("{}.expected", path.display()));
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
fn transcript_cases_match_expected_files() {
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
fn parsers_never_panic_on_mangled_input() {
    // Every prefix and a few byte-level manglings of every ok case.
    for path in cases("ok") {
        let text = fs::read_to_string(&path).unwrap_or_default();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let Some(format) = TranscriptFormat::from_extension(extension) else {
            continue;
        };
        let chars: Vec<char> = text.chars().collect();
        for cut in 0..chars.len() {
            let prefix: String = chars[..cut].iter().collect();
            let _ = parse_transcript(format, &prefix);
            let swapped: String = prefix.replace(':', "<").replace('>', "&#x");
            let _ = parse_transcript(format, &swapped);
        }
    }
}
