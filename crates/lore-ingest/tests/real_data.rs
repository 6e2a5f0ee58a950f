//! Parses every real transcript in `../shared/data` (council WebVTT captions, QMSum/AMI meetings) when that
//! folder is present; prints a message and passes when it is not (it is not part of the repository).

use std::path::{Path, PathBuf};

use lore_core::Registry;
use lore_ingest::{
    parse_ami, parse_bundle_value, parse_transcript, TranscriptFormat, TranscriptMeta,
};

fn shared_data(folder: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(folder);
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "skipped: {} not found (real data is not in the repository)",
            dir.display()
        );
        None
    }
}

fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    files
}

#[test]
fn every_council_caption_file_parses_into_a_valid_bundle() {
    let Some(dir) = shared_data("council-captions") else {
        return;
    };
    let registry = Registry::builtin();
    for path in files(&dir, "vtt") {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let transcript = parse_transcript(TranscriptFormat::Vtt, &text)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert!(transcript.segments.len() >= 5, "{}", path.display());
        assert!(transcript
            .segments
            .iter()
            .all(|s| !s.text.contains("&gt;") && !s.text.contains(">>")));
        let meta = TranscriptMeta {
            default_external_id: path.file_stem().unwrap().to_string_lossy().into_owned(),
            started_at: Some("2021-08-02T16:00:00Z".into()),
            ..TranscriptMeta::default()
        };
        let value = lore_ingest::transcript_bundle(&transcript, &meta).unwrap();
        parse_bundle_value(&value, &registry, None)
            .unwrap_or_else(|errors| panic!("{}: {errors}", path.display()));
    }
}

#[test]
fn every_ami_meeting_parses_into_a_valid_bundle() {
    let Some(dir) = shared_data("qmsum-ami") else {
        return;
    };
    let registry = Registry::builtin();
    let paths = files(&dir, "json");
    assert!(paths.len() >= 100);
    for path in paths {
        let code = path.file_stem().unwrap().to_string_lossy().into_owned();
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let meeting = parse_ami(&code, &document)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let bundle = parse_bundle_value(&meeting.bundle, &registry, None)
            .unwrap_or_else(|errors| panic!("{}: {errors}", path.display()));
        assert_eq!(
            bundle.meeting.series.as_ref().unwrap().recurring_event_id,
            &code[..code.len() - 1]
        );
    }
}
