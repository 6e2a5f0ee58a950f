//! Every example meeting shipped in `examples/meetings` parses with the built-in predicate registry.

use std::fs;
use std::path::Path;

use lore_core::Registry;
use lore_ingest::parse_bundle;

#[test]
fn example_meetings_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/meetings");
    let mut paths: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    paths.sort();
    assert!(
        !paths.is_empty(),
        "no example meetings in {}",
        dir.display()
    );
    let registry = Registry::builtin();
    let mut failures = Vec::new();
    for path in &paths {
        let json = fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
        match parse_bundle(&json, &registry, Some(&dir)) {
            Ok(bundle) => assert!(bundle.claims.is_some(), "{} has claims", path.display()),
            Err(errors) => failures.push(format!("{}:\n{errors}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} example(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
