//! Attachment paths resolve inside the bundle's folder and nowhere else, symbolic links included.

use std::fs;
use std::path::Path;

use lore_core::Registry;
use lore_ingest::parse_bundle;

fn bundle_with_path(path: &str) -> String {
    serde_json::json!({
        "meeting": {"external_id": "attachments", "started_at": "2026-11-09T15:00:00Z"},
        "attachments": [{"id": "a1", "filename": "plan.pdf", "created_at": "2026-11-09T15:12:00Z", "path": path}]
    })
    .to_string()
}

fn parse_in(dir: &Path, path: &str) -> Result<Option<std::path::PathBuf>, String> {
    parse_bundle(&bundle_with_path(path), &Registry::builtin(), Some(dir))
        .map(|bundle| bundle.attachments[0].path.clone())
        .map_err(|errors| errors.to_string())
}

#[test]
fn nested_files_resolve_against_the_bundle_folder() {
    let dir = tempfile::tempdir().expect("temporary folder");
    fs::create_dir(dir.path().join("files")).expect("create folder");
    fs::write(dir.path().join("files/plan.pdf"), b"%PDF").expect("write file");
    assert_eq!(
        parse_in(dir.path(), "./files/plan.pdf"),
        Ok(Some(dir.path().join("./files/plan.pdf")))
    );
    assert_eq!(
        parse_in(dir.path(), "files"),
        Err("attachments[0].path: file not found: files".to_string())
    );
}

#[test]
fn paths_without_a_base_folder_stay_relative() {
    let parsed = parse_bundle(
        &bundle_with_path("files/plan.pdf"),
        &Registry::builtin(),
        None,
    )
    .map(|bundle| bundle.attachments[0].path.clone());
    assert_eq!(parsed, Ok(Some(Path::new("files/plan.pdf").to_path_buf())));
}

#[test]
fn escapes_are_rejected_in_every_spelling() {
    let dir = tempfile::tempdir().expect("temporary folder");
    for path in [
        "../plan.pdf",
        "files/../../plan.pdf",
        "..\\plan.pdf",
        "/etc/passwd",
        "\\\\server\\share",
    ] {
        assert_eq!(
            parse_in(dir.path(), path),
            Err("attachments[0].path: path must stay inside the bundle's folder".to_string()),
            "{path}"
        );
    }
}

#[cfg(unix)]
#[test]
fn symbolic_links_cannot_lead_out_of_the_folder() {
    let outside = tempfile::tempdir().expect("temporary folder");
    let secret = outside.path().join("secret.txt");
    fs::write(&secret, b"secret").expect("write file");
    let dir = tempfile::tempdir().expect("temporary folder");
    std::os::unix::fs::symlink(&secret, dir.path().join("plan.pdf")).expect("symlink");
    assert_eq!(
        parse_in(dir.path(), "plan.pdf"),
        Err("attachments[0].path: path must stay inside the bundle's folder".to_string())
    );
}
