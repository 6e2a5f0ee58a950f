//! The Markdown wiki (SPEC 5.7): OpenKB's claim rules on import, mirrored from OpenKB's own test cases,
//! the exact round trip of Lore's export, and an independent check of the files in Python.

mod common;

use std::path::Path;

use common::{assert_consistent, example_files, examples_dir, memory_engine, TestClock};
use lore_engine::markdown::openkb::claim_id;
use lore_engine::{Engine, ImportReport, ShowOptions};
use serde_json::{json, Value};

const OWNER: &str = "local";
const NOW: &str = "2026-11-29T12:00:00Z";

/// Writes one OpenKB concept page with these claims (OpenKB's own shape: no `lore` objects).
fn write_openkb_page(dir: &Path, slug: &str, claims: &[Value]) {
    let folder = dir.join("wiki/concepts");
    std::fs::create_dir_all(&folder).unwrap();
    let text = format!(
        "---\ntype: Concept\ndescription: A synthetic device\naliases: []\nclaims: {}\n---\n\n# {slug}\n\nProse.\n",
        serde_json::to_string(claims).unwrap()
    );
    std::fs::write(folder.join(format!("{slug}.md")), text).unwrap();
}

fn claim(text: &str, as_of: &str, status: &str, authority: Option<&str>) -> Value {
    let mut value = json!({"text": text, "as_of": as_of, "source_anchor": "sources/device.md#p1", "status": status});
    if let Some(authority) = authority {
        value["authority"] = json!(authority);
    }
    value
}

fn id_of(claim: &Value) -> String {
    claim_id(
        claim["text"].as_str().unwrap(),
        claim["as_of"].as_str().unwrap(),
        claim["source_anchor"].as_str().unwrap(),
    )
}

fn superseding(mut claim: Value, old: &[&Value]) -> Value {
    claim["supersedes"] = json!(old.iter().map(|c| id_of(c)).collect::<Vec<_>>());
    claim
}

fn import(engine: &Engine, dir: &Path) -> ImportReport {
    let report = engine.import_markdown(OWNER, dir).expect("import runs");
    assert_consistent(engine, OWNER, "after import");
    report
}

/// The `claims` of one exported page, by OpenKB id.
fn exported_claims(engine: &Engine, page: &str) -> Vec<Value> {
    let out = tempfile::tempdir().unwrap();
    engine.export_markdown(OWNER, out.path()).unwrap();
    let text = std::fs::read_to_string(out.path().join("wiki").join(page)).unwrap();
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("claims: "))
        .expect("claims line");
    serde_json::from_str::<Value>(line)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn find<'a>(claims: &'a [Value], id: &str) -> &'a Value {
    claims
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("claim {id} exported: {claims:#?}"))
}

fn link_drops(report: &ImportReport) -> Vec<String> {
    report
        .dropped
        .iter()
        .filter(|d| d.what == "link")
        .map(|d| d.reason.clone())
        .collect()
}

/// Imports `old` then `new` (which names `old` in `supersedes`) in one page; returns whether the link
/// was applied, checked on the report and on the re-exported page.
fn link_applies(old: Value, new: Value) -> bool {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let new = superseding(new, &[&old]);
    write_openkb_page(dir.path(), "device", &[old.clone(), new.clone()]);
    let report = import(&engine, dir.path());
    let claims = exported_claims(&engine, "concepts/device.md");
    let old_exported = find(&claims, &id_of(&old));
    let applied = report.links_applied == 1;
    assert_eq!(applied, link_drops(&report).is_empty(), "{report:#?}");
    assert_eq!(
        applied,
        old_exported["superseded_by"] == json!([id_of(&new)]),
        "{old_exported:#}"
    );
    if applied {
        assert_eq!(old_exported["status"], "superseded");
        assert_eq!(
            find(&claims, &id_of(&new))["supersedes"],
            json!([id_of(&old)])
        );
    }
    applied
}

#[test]
fn a_model_supplied_id_is_ignored() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let mut supplied = claim("Device uses revision A", "2026-11-01", "validated", None);
    supplied["id"] = json!("0000000000000000");
    write_openkb_page(dir.path(), "device", &[supplied.clone()]);
    let report = import(&engine, dir.path());
    assert_eq!(report.claims_added, 1);
    let claims = exported_claims(&engine, "concepts/device.md");
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0]["id"], id_of(&supplied));
    assert_ne!(claims[0]["id"], "0000000000000000");
    // The OpenKB fields survive, so the id is the same one OpenKB computes.
    assert_eq!(claims[0]["as_of"], "2026-11-01");
    assert_eq!(claims[0]["source_anchor"], "sources/device.md#p1");
}

#[test]
fn invalid_fields_drop_the_claim_with_a_reason() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let valid = claim("Device uses revision A", "2026-11-01", "validated", None);
    let mut no_anchor = valid.clone();
    no_anchor["source_anchor"] = json!("  ");
    let claims = vec![
        claim("  ", "2026-11-01", "validated", None),
        claim("Device A", "last week", "validated", None),
        claim("Device A", "2026-11-01", "confirmed", None),
        no_anchor,
        claim("Device A", "2026-11-01", "validated", Some("oracle")),
        json!("not an object"),
        valid.clone(),
    ];
    write_openkb_page(dir.path(), "device", &claims);
    let report = import(&engine, dir.path());
    assert_eq!(report.claims_added, 1);
    let reasons: Vec<(Option<usize>, String)> = report
        .dropped
        .iter()
        .map(|d| (d.index, d.reason.clone()))
        .collect();
    assert_eq!(
        reasons,
        vec![
            (Some(0), "the `text` field is empty".to_string()),
            (Some(1), "the `as_of` field is invalid".to_string()),
            (Some(2), "the `status` field is invalid".to_string()),
            (Some(3), "the `source_anchor` field is empty".to_string()),
            (Some(4), "the `authority` field is invalid".to_string()),
            (Some(5), "the claim is not a JSON object".to_string()),
        ]
    );
    let exported = exported_claims(&engine, "concepts/device.md");
    assert_eq!(exported.len(), 1);
    assert_eq!(exported[0]["id"], id_of(&valid));
}

#[test]
fn chronology_compares_calendar_days_when_either_side_is_a_date() {
    let old = || claim("Limit is 40 units", "2026-11-09", "validated", None);
    let new = |as_of: &str| claim("Limit is 100 units", as_of, "validated", None);
    assert!(link_applies(old(), new("2026-11-10")), "later day");
    assert!(link_applies(old(), new("2026-11-09")), "same day");
    // A time on the same UTC day as a date-only claim counts as that day, even if it reads earlier.
    assert!(
        link_applies(
            claim(
                "Limit is 40 units",
                "2026-11-09T23:00:00Z",
                "validated",
                None
            ),
            new("2026-11-09")
        ),
        "same day, date against time"
    );
    assert!(!link_applies(old(), new("2026-11-08")), "earlier day");
    assert!(
        !link_applies(
            claim(
                "Limit is 40 units",
                "2026-11-09T12:00:01Z",
                "validated",
                None
            ),
            new("2026-11-09T12:00:00Z")
        ),
        "an earlier instant"
    );
}

#[test]
fn noon_utc_supersedes_seven_am_at_minus_five() {
    // 07:00-05:00 is 12:00Z: not earlier, so the link applies.
    assert!(link_applies(
        claim(
            "Device uses revision A",
            "2026-11-09T07:00-05:00",
            "validated",
            None
        ),
        claim(
            "Device uses revision B",
            "2026-11-09T12:00Z",
            "validated",
            None
        ),
    ));
    assert!(!link_applies(
        claim(
            "Device uses revision A",
            "2026-11-09T07:00:01-05:00",
            "validated",
            None
        ),
        claim(
            "Device uses revision B",
            "2026-11-09T12:00Z",
            "validated",
            None
        ),
    ));
}

#[test]
fn a_first_party_correction_supersedes_two_assistant_proposals_in_one_batch() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    // An assistant's "validated" is stored as proposed.
    let revision = claim(
        "Device uses revision A",
        "2026-11-01",
        "validated",
        Some("assistant"),
    );
    let limit = claim(
        "Operating limit is 40 units",
        "2026-11-01",
        "proposed",
        Some("assistant"),
    );
    let correction = superseding(
        claim(
            "Device uses revision B with an operating limit of 100 units",
            "2026-11-05",
            "validated",
            Some("first_party"),
        ),
        &[&revision, &limit],
    );
    write_openkb_page(
        dir.path(),
        "device",
        &[revision.clone(), limit.clone(), correction.clone()],
    );
    let report = import(&engine, dir.path());
    assert_eq!((report.claims_added, report.links_applied), (3, 2));
    assert!(report.dropped.is_empty(), "{report:#?}");
    let claims = exported_claims(&engine, "concepts/device.md");
    assert_eq!(claims.len(), 3, "both proposals stay in history");
    for old in [&revision, &limit] {
        let exported = find(&claims, &id_of(old));
        assert_eq!(exported["status"], "superseded");
        assert_eq!(exported["authority"], "assistant");
        assert_eq!(exported["superseded_by"], json!([id_of(&correction)]));
    }
    let exported = find(&claims, &id_of(&correction));
    assert_eq!(exported["status"], "validated");
    let mut supersedes: Vec<String> =
        serde_json::from_value(exported["supersedes"].clone()).unwrap();
    supersedes.sort();
    let mut expected = vec![id_of(&revision), id_of(&limit)];
    expected.sort();
    assert_eq!(supersedes, expected);
    // Lore itself never holds an assistant's guess as current; the correction is.
    let view = engine
        .show(OWNER, "concept:device", &ShowOptions::default())
        .unwrap();
    let current: Vec<&str> = view
        .claims
        .iter()
        .filter_map(|c| c.value.as_deref())
        .collect();
    assert_eq!(
        current,
        vec!["Device uses revision B with an operating limit of 100 units"]
    );
}

#[test]
fn replaying_an_import_changes_nothing() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let old = claim("Limit is 40 units", "2026-11-01", "validated", None);
    let new = superseding(
        claim("Limit is 100 units", "2026-11-02", "validated", None),
        &[&old],
    );
    write_openkb_page(dir.path(), "device", &[old, new]);
    let first = import(&engine, dir.path());
    assert!(first.revision.is_some());
    let state = lore_engine::state_dump(&engine, OWNER).unwrap();
    let again = import(&engine, dir.path());
    assert_eq!(again.revision, None, "a replay writes no revision");
    assert_eq!((again.claims_added, again.claims_skipped), (0, 2));
    assert_eq!(lore_engine::state_dump(&engine, OWNER).unwrap(), state);
}

#[test]
fn a_duplicate_id_cannot_inject_a_link_or_relabel_status_or_authority() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let target = claim("Device uses revision A", "2026-11-01", "validated", None);
    let stored = claim(
        "Device uses revision B",
        "2026-11-02",
        "proposed",
        Some("document"),
    );
    write_openkb_page(dir.path(), "device", &[target.clone(), stored.clone()]);
    import(&engine, dir.path());

    // Same text, as_of and anchor (same id) with another status, authority and a link.
    let mut duplicate = superseding(stored.clone(), &[&target]);
    duplicate["status"] = json!("validated");
    duplicate["authority"] = json!("first_party");
    write_openkb_page(dir.path(), "device", &[duplicate]);
    let report = import(&engine, dir.path());
    assert_eq!(report.revision, None);
    assert_eq!(report.links_applied, 0);
    assert_eq!(
        report.dropped[0].reason,
        "a claim with this id is already stored; the stored claim is kept whole"
    );
    let claims = exported_claims(&engine, "concepts/device.md");
    let kept = find(&claims, &id_of(&stored));
    assert_eq!(
        (&kept["status"], &kept["authority"], &kept["supersedes"]),
        (&json!("proposed"), &json!("document"), &json!([]))
    );
    let untouched = find(&claims, &id_of(&target));
    assert_eq!(
        (&untouched["status"], &untouched["superseded_by"]),
        (&json!("validated"), &json!([]))
    );
}

#[test]
fn a_later_batch_supersedes_a_stored_claim() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let old = claim("Limit is 40 units", "2026-11-01", "validated", None);
    write_openkb_page(dir.path(), "device", std::slice::from_ref(&old));
    import(&engine, dir.path());
    let new = superseding(
        claim("Limit is 100 units", "2026-11-02", "validated", None),
        &[&old],
    );
    write_openkb_page(dir.path(), "device", &[old.clone(), new.clone()]);
    let report = import(&engine, dir.path());
    assert_eq!(
        (
            report.claims_added,
            report.claims_skipped,
            report.links_applied
        ),
        (1, 1, 1)
    );
    let claims = exported_claims(&engine, "concepts/device.md");
    assert_eq!(find(&claims, &id_of(&old))["status"], "superseded");
    assert_eq!(
        find(&claims, &id_of(&old))["superseded_by"],
        json!([id_of(&new)])
    );
    // Lore applies the same link (L9): the old value leaves the current view.
    let view = engine
        .show(OWNER, "concept:device", &ShowOptions::default())
        .unwrap();
    let current: Vec<&str> = view
        .claims
        .iter()
        .filter_map(|c| c.value.as_deref())
        .collect();
    assert_eq!(current, vec!["Limit is 100 units"]);
}

#[test]
fn imported_claims_pass_the_sensitive_data_guard() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    write_openkb_page(
        dir.path(),
        "device",
        &[
            claim("Bob's salary is 150k now", "2026-11-01", "validated", None),
            claim("Device uses revision A", "2026-11-01", "validated", None),
        ],
    );
    let report = import(&engine, dir.path());
    assert_eq!(report.claims_added, 1);
    assert!(
        report.dropped[0]
            .reason
            .starts_with("rejected by the sensitive-data guard"),
        "{report:#?}"
    );
    let state = lore_engine::state_dump(&engine, OWNER).unwrap().to_string();
    assert!(!state.contains("150k"), "L21: the words are never stored");
}

#[test]
fn links_outside_the_page_and_self_links_are_dropped() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = claim("Elsewhere", "2026-11-01", "validated", None);
    let mut new = claim("Device uses revision B", "2026-11-02", "validated", None);
    new["supersedes"] = json!([id_of(&new), id_of(&elsewhere)]);
    write_openkb_page(dir.path(), "device", &[new]);
    let report = import(&engine, dir.path());
    assert_eq!(
        link_drops(&report),
        vec![
            "a claim cannot supersede itself",
            "the target is not a claim on the same page"
        ]
    );
}

#[test]
fn authority_and_status_checks_refuse_in_openkb_order() {
    let validated = |authority| claim("Limit is 40 units", "2026-11-01", "validated", authority);
    let newer = |status, authority| claim("Limit is 100 units", "2026-11-02", status, authority);

    // Proposed over validated.
    assert!(!link_applies(
        validated(Some("document")),
        newer("proposed", Some("document"))
    ));
    // Assistant over first-party.
    assert!(!link_applies(
        validated(Some("first_party")),
        newer("validated", Some("assistant"))
    ));
    assert!(!link_applies(
        claim(
            "Limit is 40 units",
            "2026-11-01",
            "superseded",
            Some("first_party")
        ),
        newer("proposed", Some("assistant"))
    ));
    // Abandoned assistant over a validated document claim.
    assert!(!link_applies(
        validated(Some("document")),
        newer("abandoned", Some("assistant"))
    ));
    // Document over first-party.
    assert!(!link_applies(
        validated(Some("first_party")),
        newer("validated", Some("document"))
    ));
    // Allowed: first-party over first-party, document over document, and unlabelled claims.
    assert!(link_applies(
        validated(Some("first_party")),
        newer("validated", Some("first_party"))
    ));
    assert!(link_applies(
        validated(Some("document")),
        newer("validated", Some("document"))
    ));
    assert!(link_applies(validated(None), newer("validated", None)));
    // An abandoned (non-assistant) claim may supersede a validated one, as in OpenKB.
    assert!(link_applies(validated(None), newer("abandoned", None)));
}

#[test]
fn refused_links_are_reported_with_their_reason() {
    let engine = memory_engine(&TestClock::new(NOW));
    let dir = tempfile::tempdir().unwrap();
    let first_party = claim(
        "Limit is 40 units",
        "2026-11-01",
        "validated",
        Some("first_party"),
    );
    let document = superseding(
        claim(
            "Limit is 100 units",
            "2026-11-02",
            "validated",
            Some("document"),
        ),
        &[&first_party],
    );
    let assistant = superseding(
        claim(
            "Limit is 90 units",
            "2026-11-03",
            "abandoned",
            Some("assistant"),
        ),
        &[&document],
    );
    let proposal = superseding(
        claim("Limit is 80 units", "2026-11-04", "proposed", None),
        &[&document],
    );
    write_openkb_page(
        dir.path(),
        "device",
        &[first_party, document, assistant, proposal],
    );
    let report = import(&engine, dir.path());
    assert_eq!(
        link_drops(&report),
        vec![
            "only a first_party claim can supersede a first_party claim",
            "an assistant claim cannot supersede a validated claim",
            "a claim that is not validated or abandoned cannot supersede a validated claim",
        ]
    );
}

fn demo_engine() -> Engine {
    let engine = memory_engine(&TestClock::new(NOW));
    let files = example_files();
    for file in files {
        engine.ingest_bundle_file(OWNER, &file).unwrap();
    }
    let edits: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(examples_dir().join("../edits.json")).unwrap(),
    )
    .unwrap();
    for edit in edits {
        let field = |name: &str| edit[name].as_str().unwrap().to_string();
        engine
            .apply_override(
                OWNER,
                &field("entity"),
                &field("predicate"),
                &field("value"),
            )
            .unwrap();
    }
    engine
        .retract_claim(OWNER, &first_claim_of(&engine, "project:beacon"))
        .unwrap();
    engine
}

fn first_claim_of(engine: &Engine, entity: &str) -> String {
    let view = engine
        .show(
            OWNER,
            entity,
            &ShowOptions {
                history: true,
                ..Default::default()
            },
        )
        .unwrap();
    view.claims[0].id.clone()
}

fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

fn histories(engine: &Engine) -> Vec<Value> {
    let history = ShowOptions {
        history: true,
        ..Default::default()
    };
    engine
        .list_entities(OWNER)
        .unwrap()
        .iter()
        .map(|row| serde_json::to_value(engine.show(OWNER, &row.id, &history).unwrap()).unwrap())
        .collect()
}

#[test]
fn demo_data_round_trips_exactly() {
    let original = demo_engine();
    // Claims that came from OpenKB, with an applied link and an abandoned one, travel too.
    let page = tempfile::tempdir().unwrap();
    let old = claim(
        "Limit is 40 units",
        "2026-11-01",
        "proposed",
        Some("assistant"),
    );
    let new = superseding(
        claim(
            "Limit is 100 units",
            "2026-11-02T09:30:00+02:00",
            "validated",
            Some("first_party"),
        ),
        &[&old],
    );
    let dropped = claim("Limit is 0 units", "2026-11-03", "abandoned", None);
    let history = claim(
        "Limit was 10 units",
        "2026-10-01",
        "superseded",
        Some("document"),
    );
    write_openkb_page(page.path(), "device", &[old, new, dropped, history]);
    let report = import(&original, page.path());
    assert_eq!((report.claims_added, report.links_applied), (4, 1));
    let first = tempfile::tempdir().unwrap();
    original.export_markdown(OWNER, first.path()).unwrap();
    let again = tempfile::tempdir().unwrap();
    original.export_markdown(OWNER, again.path()).unwrap();
    assert!(
        read_tree(first.path()) == read_tree(again.path()),
        "export is deterministic"
    );

    let restored = memory_engine(&TestClock::new(NOW));
    let report = import(&restored, first.path());
    assert!(report.dropped.is_empty(), "{:#?}", report.dropped);
    let second = tempfile::tempdir().unwrap();
    restored.export_markdown(OWNER, second.path()).unwrap();
    let (before, after) = (read_tree(first.path()), read_tree(second.path()));
    assert_eq!(before.len(), after.len());
    for ((name, bytes), (other_name, other_bytes)) in before.iter().zip(&after) {
        assert_eq!(name, other_name);
        assert!(
            bytes == other_bytes,
            "{name} differs after the round trip:\n{}\n---\n{}",
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(other_bytes)
        );
    }
    assert_eq!(histories(&original), histories(&restored));
    assert_eq!(
        original.list_entities(OWNER).unwrap(),
        restored.list_entities(OWNER).unwrap()
    );
}

#[test]
fn another_owner_sees_nothing_of_an_export_or_import() {
    let engine = demo_engine();
    let dir = tempfile::tempdir().unwrap();
    let report = engine.export_markdown("mallory", dir.path()).unwrap();
    assert_eq!((report.pages, report.claims), (1, 0), "only the index");
    engine.export_markdown(OWNER, dir.path()).unwrap();
    let before = lore_engine::state_dump(&engine, OWNER).unwrap();
    let imported = engine.import_markdown("mallory", dir.path()).unwrap();
    assert!(imported.claims_added > 0, "mallory gets her own copy");
    assert_consistent(&engine, "mallory", "other owner's import");
    assert_eq!(lore_engine::state_dump(&engine, OWNER).unwrap(), before);
    assert_eq!(
        histories(&engine).len(),
        engine.list_entities("mallory").unwrap().len()
    );
}

#[test]
fn python_recomputes_every_id_and_parses_every_frontmatter_as_yaml() {
    let engine = demo_engine();
    let dir = tempfile::tempdir().unwrap();
    engine.export_markdown(OWNER, dir.path()).unwrap();
    // OpenKB-shaped claims with non-ASCII text join the check.
    let page = tempfile::tempdir().unwrap();
    write_openkb_page(
        page.path(),
        "zoe",
        &[claim(
            "Zoë’s device uses révision A — “quoted”",
            "2026-11-09T07:00-05:00",
            "validated",
            None,
        )],
    );
    engine.import_markdown(OWNER, page.path()).unwrap();
    engine.export_markdown(OWNER, dir.path()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_wiki.py");
    let output = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir.path().join("wiki"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "python check failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("ids ok"), "{stdout}");
}

/// An entity's exported page lists the links its `show` lists: its own, and those a meeting attached
/// to it, with the meeting and the reason.
#[test]
fn exported_pages_list_attached_links_as_show_does() {
    let engine = demo_engine();
    let out = tempfile::tempdir().unwrap();
    engine.export_markdown(OWNER, out.path()).unwrap();
    let pages: Vec<String> = read_tree(out.path())
        .into_iter()
        .map(|(_, bytes)| String::from_utf8(bytes).unwrap())
        .collect();
    let mut attached = 0;
    for row in engine.list_entities(OWNER).unwrap() {
        let view = engine
            .show(OWNER, &row.id, &lore_engine::ShowOptions::default())
            .unwrap();
        for link in &view.links {
            let Some(by) = &link.attached else {
                continue;
            };
            attached += 1;
            let line = format!("({}) ({}, ", link.url, link.resource_type);
            let expected = format!("; attached by meeting {}: ", by.meeting);
            assert!(
                pages.iter().any(|page| page.contains(&row.id)
                    && page
                        .lines()
                        .any(|l| l.contains(&line) && l.contains(&expected))),
                "{}'s page lacks {}",
                row.name,
                link.url
            );
        }
    }
    assert!(attached > 0, "the demo attaches links to entities");
}
