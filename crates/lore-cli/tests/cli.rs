//! End-to-end tests of the `lore` binary against the command-line contract (SPEC 5.3) and the
//! lifecycle rules it exposes (SPEC 3, cited as L1..L22). Every test runs the real binary on its
//! own temp folder and database, with `LORE_NOW` fixed.

mod common;

use std::collections::BTreeSet;

use common::{example_external_id, examples_dir, is_rfc3339_millis_z, pseudo_random_bytes, Lore};
use serde_json::{json, Value};

const ALICE: &str = "alice@northwind.io";
const BOB: &str = "bob@northwind.io";

// ---------------------------------------------------------------------------------------------
// helpers

fn examples_arg() -> String {
    examples_dir().to_str().expect("utf-8 path").to_string()
}

/// A minimal valid bundle (SPEC 5.1) with the given parts.
fn bundle(
    external_id: &str,
    started_at: &str,
    participants: Value,
    segments: Value,
    claims: Value,
) -> Value {
    json!({
        "meeting": {"external_id": external_id, "title": format!("Test meeting {external_id}"),
                    "started_at": started_at, "ended_at": null, "platform": "zoom"},
        "participants": participants,
        "segments": segments,
        "claims": claims,
    })
}

/// A one-person bundle where that person says `text` in segment s1 and the claims cite it.
fn zed_bundle(external_id: &str, claims: Value) -> Value {
    bundle(
        external_id,
        "2026-11-01T10:00:00Z",
        json!([{"display_name": "Zed Quinn", "email": "zed@quinn.io", "speaker_label": "S1"}]),
        json!([{"id": "s1", "start_ms": 0, "end_ms": 4000, "speaker": "S1",
                "attribution": "one_mapped_source", "text": "I'm the CTO of Quinn now."}]),
        claims,
    )
}

fn zed_title_claim(segment: &str) -> Value {
    json!({"subject": {"kind": "person", "name": "Zed Quinn", "email": "zed@quinn.io"},
           "predicate": "has_title", "value": "CTO", "authority": "first_party", "confidence": 0.9,
           "evidence": {"segment_ids": [segment], "quote": "I'm the CTO"}})
}

fn as_array(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected a JSON array, got {value}"))
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("expected string field {key:?} in {value}"))
}

fn claims(view: &Value) -> &Vec<Value> {
    as_array(&view["claims"])
}

/// The claims of `view` with this predicate.
fn claims_with<'a>(view: &'a Value, predicate: &str) -> Vec<&'a Value> {
    claims(view)
        .iter()
        .filter(|c| c["predicate"] == predicate)
        .collect()
}

/// The single claim of `view` with this predicate and text value.
fn claim_valued<'a>(view: &'a Value, predicate: &str, value: &str) -> &'a Value {
    let found: Vec<&Value> = claims(view)
        .iter()
        .filter(|c| c["predicate"] == predicate && c["value"] == value)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected exactly one {predicate} = {value:?} claim in {view:#}"
    );
    found[0]
}

fn ids(rows: &Value) -> BTreeSet<String> {
    as_array(rows)
        .iter()
        .map(|r| str_field(r, "id").to_string())
        .collect()
}

/// The entity id `show ENTITY --json` resolves to.
fn entity_id(lore: &Lore, owner: Option<&str>, entity: &str) -> String {
    let view = match owner {
        Some(owner) => lore.json_as(owner, &["show", entity]),
        None => lore.json(&["show", entity]),
    };
    str_field(&view["entity"], "id").to_string()
}

// ---------------------------------------------------------------------------------------------
// 1. init

#[test]
fn init_creates_the_database_file_and_any_command_migrates_a_fresh_path() {
    let lore = Lore::new();
    assert!(!lore.db.exists());
    lore.run(&["init"]).success();
    assert!(lore.db.is_file(), "init must create {}", lore.db.display());
    // init twice is harmless
    lore.run(&["init"]).success();
    let init = lore.json(&["init"]);
    assert!(init.is_object(), "init --json prints an object: {init}");

    // Any command on a fresh path creates and migrates the database.
    let fresh = lore.path().join("fresh.db");
    let entities = lore.run_db(&fresh, &["entities", "--json"]).success();
    assert_eq!(entities.json(), json!([]));
    assert!(fresh.is_file());
    let fresh2 = lore.path().join("fresh2.db");
    let check = lore.run_db(&fresh2, &["check", "--json"]).success().json();
    assert_eq!(check["ok"], true, "{check}");
    let fresh3 = lore.path().join("fresh3.db");
    lore.run_db(&fresh3, &["ingest", &examples_arg()]).success();
    assert!(fresh3.is_file());

    // A database in a folder that does not exist is bad usage.
    let missing = lore.path().join("no/such/folder/lore.db");
    let run = lore.run_db(&missing, &["init"]).code(2);
    assert!(!run.stderr.trim().is_empty());
}

// ---------------------------------------------------------------------------------------------
// 2. ingest, and L2 idempotence

#[test]
fn ingest_examples_reports_revision_and_reingest_is_unchanged_l2() {
    let lore = Lore::new();
    let first = lore.ingest_examples();
    let revision = str_field(&first, "revision");
    assert!(!revision.is_empty());
    let reports = as_array(&first["meetings"]);
    assert_eq!(reports.len(), 10, "{first:#}");
    for report in reports {
        assert_eq!(report["outcome"], "created", "{report}");
        assert!(report["revision"].is_string(), "{report}");
    }
    assert_eq!(first["failed"], json!([]));

    let entities_before = lore.run(&["entities", "--json"]).success().stdout;
    let meetings_before = lore.run(&["meetings", "--json"]).success().stdout;
    let alice_before = lore
        .run(&[
            "show",
            ALICE,
            "--history",
            "--include-provisional",
            "--json",
        ])
        .success()
        .stdout;
    let suggestions_before = lore.run(&["suggestions", "--json"]).success().stdout;

    let second = lore.ingest_examples();
    let reports = as_array(&second["meetings"]);
    assert_eq!(reports.len(), 10);
    for report in reports {
        assert_eq!(
            report["outcome"], "unchanged",
            "L2: re-running changes nothing: {report}"
        );
    }

    assert_eq!(
        entities_before,
        lore.run(&["entities", "--json"]).success().stdout
    );
    assert_eq!(
        meetings_before,
        lore.run(&["meetings", "--json"]).success().stdout
    );
    assert_eq!(
        alice_before,
        lore.run(&[
            "show",
            ALICE,
            "--history",
            "--include-provisional",
            "--json"
        ])
        .success()
        .stdout
    );
    assert_eq!(
        suggestions_before,
        lore.run(&["suggestions", "--json"]).success().stdout
    );

    // Text mode prints one line per meeting with its outcome and revision.
    let text = lore.run(&["ingest", &examples_arg()]).success();
    assert_eq!(
        text.stdout
            .lines()
            .filter(|l| l.starts_with("unchanged"))
            .count(),
        10,
        "{}",
        text.describe()
    );
    assert!(text.stdout.contains("revision"));
}

// ---------------------------------------------------------------------------------------------
// 3. show --json contract (SPEC 5.3)

fn assert_entity_ref(value: &Value) {
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("expected {{id, kind, name}}, got {value}"));
    for key in ["id", "kind", "name"] {
        assert!(
            object.get(key).is_some_and(Value::is_string),
            "{key} in {value}"
        );
    }
}

fn assert_time(value: &Value, what: &str) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{what} must be a string: {value}"));
    assert!(
        is_rfc3339_millis_z(text),
        "{what} must be RFC 3339 with ms and Z: {text:?}"
    );
}

fn assert_optional_time(value: &Value, what: &str) {
    if !value.is_null() {
        assert_time(value, what);
    }
}

/// Checks one claim object against the SPEC 5.3 shape.
fn assert_claim_shape(claim: &Value, external_ids: &BTreeSet<String>) {
    let object = claim
        .as_object()
        .unwrap_or_else(|| panic!("claim must be an object: {claim}"));
    for key in [
        "id",
        "predicate",
        "value",
        "object",
        "context",
        "status",
        "authority",
        "valid_from",
        "valid_to",
        "superseded_by",
        "due_at",
        "deadline_state",
        "evidence",
    ] {
        assert!(object.contains_key(key), "claim lacks {key:?}: {claim:#}");
    }
    assert!(claim["id"].is_string() && claim["predicate"].is_string());
    assert!(
        claim["value"].is_null() || claim["value"].is_string(),
        "{claim}"
    );
    for key in ["object", "context"] {
        if !claim[key].is_null() {
            assert_entity_ref(&claim[key]);
        }
    }
    assert!(
        [
            "active",
            "superseded",
            "expired",
            "provisional",
            "retracted"
        ]
        .contains(&str_field(claim, "status")),
        "{claim}"
    );
    assert!(
        ["manual", "first_party", "document", "assistant"].contains(&str_field(claim, "authority")),
        "{claim}"
    );
    assert_optional_time(&claim["valid_from"], "valid_from");
    assert_optional_time(&claim["valid_to"], "valid_to");
    assert_optional_time(&claim["due_at"], "due_at");
    assert!(claim["superseded_by"].is_null() || claim["superseded_by"].is_string());
    assert!(claim["deadline_state"].is_null() || claim["deadline_state"].is_string());
    let evidence = as_array(&claim["evidence"]);
    assert!(
        !evidence.is_empty(),
        "an extracted claim has evidence: {claim:#}"
    );
    for row in evidence {
        let row_object = row
            .as_object()
            .unwrap_or_else(|| panic!("evidence must be an object: {row}"));
        for key in [
            "meeting",
            "observed_at",
            "segment_ids",
            "speaker",
            "quote",
            "kind",
        ] {
            assert!(
                row_object.contains_key(key),
                "evidence lacks {key:?}: {row:#}"
            );
        }
        if !row["meeting"].is_null() {
            let meeting = str_field(row, "meeting");
            assert!(
                external_ids.contains(meeting),
                "evidence.meeting must be the bundle's external_id, got {meeting:?}"
            );
        }
        assert_time(&row["observed_at"], "evidence.observed_at");
        assert!(as_array(&row["segment_ids"]).iter().all(Value::is_string));
        assert!(row["quote"].is_string());
        assert!(
            ["support", "termination"].contains(&str_field(row, "kind")),
            "{row}"
        );
    }
}

fn example_external_ids() -> BTreeSet<String> {
    std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let bundle: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            bundle["meeting"]["external_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn show_json_matches_the_spec_5_3_contract() {
    let lore = Lore::new();
    lore.ingest_examples();
    let external_ids = example_external_ids();
    let view = lore.json(&["show", ALICE]);

    let top: BTreeSet<&str> = view
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert!(top.contains("entity") && top.contains("claims"), "{top:?}");

    let entity = &view["entity"];
    for key in ["id", "kind", "name", "status", "emails", "attributes"] {
        assert!(
            entity.get(key).is_some(),
            "entity lacks {key:?}: {entity:#}"
        );
    }
    assert!(entity["id"].is_string());
    assert_eq!(entity["kind"], "person");
    assert_eq!(entity["name"], "Alice Chen");
    assert_eq!(entity["status"], "active");
    assert!(
        as_array(&entity["emails"]).contains(&json!(ALICE)),
        "{entity}"
    );
    assert!(entity["attributes"].is_object());
    assert_eq!(entity["attributes"]["has_title"], "Principal Researcher");

    // Default: the current view holds only active claims.
    assert!(!claims(&view).is_empty());
    for claim in claims(&view) {
        assert_claim_shape(claim, &external_ids);
        assert_eq!(
            claim["status"], "active",
            "default view lists only active claims: {claim:#}"
        );
    }
    let titles = claims_with(&view, "has_title");
    assert_eq!(titles.len(), 1, "one active title: {titles:?}");
    let principal = titles[0];
    assert_eq!(principal["value"], "Principal Researcher");
    assert_eq!(principal["authority"], "first_party");
    assert_eq!(principal["valid_to"], Value::Null);
    assert_eq!(principal["superseded_by"], Value::Null);
    // observed_at = meeting.started_at + start_ms (segment s2 of meeting 07 starts at 12.6 s).
    assert_eq!(principal["valid_from"], "2026-10-05T15:00:12.600Z");
    let evidence = &as_array(&principal["evidence"])[0];
    assert_eq!(evidence["meeting"], json!(example_external_id("07-")));
    assert_eq!(evidence["observed_at"], "2026-10-05T15:00:12.600Z");
    assert_eq!(evidence["segment_ids"], json!(["s2"]));
    assert_eq!(evidence["speaker"], "Alice Chen");
    assert_eq!(evidence["kind"], "support");
    assert!(str_field(evidence, "quote").contains("Principal Researcher"));
    // object refs carry {id, kind, name}
    let works_at = claims_with(&view, "works_at");
    assert_eq!(works_at.len(), 1);
    assert_eq!(works_at[0]["object"]["kind"], "company");
    assert_eq!(works_at[0]["object"]["name"], "Northwind Labs");
    assert_eq!(works_at[0]["value"], Value::Null);

    // --history adds the superseded title, pointing at its successor (L4).
    let history = lore.json(&["show", ALICE, "--history"]);
    for claim in claims(&history) {
        assert_claim_shape(claim, &external_ids);
    }
    let senior = claim_valued(&history, "has_title", "Senior Researcher");
    let principal_h = claim_valued(&history, "has_title", "Principal Researcher");
    assert_eq!(senior["status"], "superseded");
    assert_eq!(senior["superseded_by"], principal_h["id"]);
    assert_eq!(senior["valid_to"], "2026-10-05T15:00:12.600Z");
    assert_eq!(principal_h["status"], "active");
    assert!(claims(&history).len() > claims(&view).len());
    let current_ids = ids(&view["claims"]);
    assert!(current_ids.is_subset(&ids(&history["claims"])));
    // "in evidence order": by each claim's earliest evidence.
    let firsts: Vec<String> = claims(&history)
        .iter()
        .map(|c| {
            as_array(&c["evidence"])
                .iter()
                .map(|e| str_field(e, "observed_at").to_string())
                .min()
                .unwrap()
        })
        .collect();
    let mut sorted = firsts.clone();
    sorted.sort();
    assert_eq!(firsts, sorted, "--history lists claims in evidence order");

    // --include-provisional adds provisional claims (Beacon has a same-meeting conflict, L7,
    // and an assistant claim, L8).
    let beacon = lore.json(&["show", "project:beacon"]);
    assert!(claims(&beacon).iter().all(|c| c["status"] == "active"));
    let beacon_all = lore.json(&["show", "project:beacon", "--include-provisional"]);
    for claim in claims(&beacon_all) {
        assert_claim_shape(claim, &external_ids);
        assert!(
            ["active", "provisional"].contains(&str_field(claim, "status")),
            "{claim}"
        );
    }
    let provisional: Vec<&Value> = claims(&beacon_all)
        .iter()
        .filter(|c| c["status"] == "provisional")
        .collect();
    assert!(!provisional.is_empty(), "{beacon_all:#}");
    assert!(
        provisional.iter().any(|c| c["authority"] == "assistant"),
        "L8: an assistant claim is provisional: {beacon_all:#}"
    );
    assert!(ids(&beacon["claims"]).is_subset(&ids(&beacon_all["claims"])));
    assert_eq!(
        claims(&beacon_all).len(),
        claims(&beacon).len() + provisional.len()
    );

    // deadlines carry due_at and a state
    let atlas = lore.json(&["show", "project:atlas"]);
    let deadlines = claims_with(&atlas, "has_deadline");
    assert!(!deadlines.is_empty(), "{atlas:#}");
    for deadline in deadlines {
        assert_time(&deadline["due_at"], "due_at");
        assert!(deadline["deadline_state"].is_string(), "{deadline}");
    }
}

// ---------------------------------------------------------------------------------------------
// 4. entities

#[test]
fn entities_json_lists_provisional_sam_and_never_merges_people_by_name_l15() {
    let lore = Lore::new();
    lore.ingest_examples();
    let entities = lore.json(&["entities"]);
    let rows = as_array(&entities);
    assert!(!rows.is_empty());
    for row in rows {
        for key in ["id", "kind", "name", "status"] {
            assert!(
                row[key].is_string(),
                "entity row lacks string {key:?}: {row}"
            );
        }
        assert!(["person", "company", "project", "concept"].contains(&str_field(row, "kind")));
        assert_ne!(
            row["status"], "merged",
            "merged entities are not listed: {row}"
        );
    }
    let named = |name: &str| -> Vec<&Value> { rows.iter().filter(|r| r["name"] == name).collect() };

    let sam = named("Sam");
    assert_eq!(sam.len(), 1, "{entities:#}");
    assert_eq!(sam[0]["kind"], "person");
    assert_eq!(sam[0]["status"], "provisional");

    let chen = named("Alice Chen");
    let novak = named("Alice Novak");
    assert_eq!(chen.len(), 1, "{entities:#}");
    assert_eq!(novak.len(), 1, "{entities:#}");
    assert_eq!(chen[0]["kind"], "person");
    assert_eq!(novak[0]["kind"], "person");
    assert_ne!(chen[0]["id"], novak[0]["id"]);
    assert_eq!(json!(entity_id(&lore, None, ALICE)), chen[0]["id"]);
    assert_eq!(
        json!(entity_id(&lore, None, "alice.novak@globex.com")),
        novak[0]["id"]
    );
    // an unambiguous full name resolves too, as does kind:key
    assert_eq!(json!(entity_id(&lore, None, "Alice Novak")), novak[0]["id"]);
    let atlas = named("Atlas");
    assert_eq!(atlas.len(), 1);
    assert_eq!(
        json!(entity_id(&lore, None, "project:atlas")),
        atlas[0]["id"]
    );
    // emails match case-insensitively (L15)
    assert_eq!(
        json!(entity_id(&lore, None, "ALICE@Northwind.IO")),
        chen[0]["id"]
    );
    for person in ["Bob Okafor", "Dana Ruiz", "Priya Shah"] {
        assert_eq!(named(person).len(), 1, "{person} in {entities:#}");
    }
    for project in ["Beacon", "Redis migration"] {
        assert_eq!(named(project).len(), 1, "{project} in {entities:#}");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. ambiguous names

#[test]
fn ambiguous_name_exits_2_and_lists_every_candidate() {
    let lore = Lore::new();
    let file = lore.write_json(
        "jordans.json",
        &bundle(
            "two-jordans",
            "2026-11-02T09:00:00Z",
            json!([{"display_name": "Jordan Lee", "email": "jordan@one.io", "speaker_label": "S1"},
                   {"display_name": "Jordan Lee", "email": "jordan@two.io", "speaker_label": "S2"}]),
            json!([{"id": "s1", "start_ms": 0, "end_ms": 1000, "speaker": "S1",
                    "attribution": "one_mapped_source", "text": "Hi, I'm Jordan."},
                   {"id": "s2", "start_ms": 1000, "end_ms": 2000, "speaker": "S2",
                    "attribution": "one_mapped_source", "text": "Me too!"}]),
            json!([]),
        ),
    );
    lore.run(&["ingest", &file]).success();
    let one = entity_id(&lore, None, "jordan@one.io");
    let two = entity_id(&lore, None, "jordan@two.io");
    assert_ne!(one, two, "same name, different emails: two people (L15)");

    for args in [
        vec!["show", "Jordan Lee"],
        vec!["show", "Jordan Lee", "--json"],
    ] {
        let run = lore.run(&args).code(2);
        assert!(
            run.stderr.contains(&one),
            "candidate {one} listed: {}",
            run.describe()
        );
        assert!(
            run.stderr.contains(&two),
            "candidate {two} listed: {}",
            run.describe()
        );
        assert!(
            run.stderr.to_lowercase().contains("ambiguous"),
            "{}",
            run.describe()
        );
        assert!(run.stdout.trim().is_empty(), "{}", run.describe());
    }
}

// ---------------------------------------------------------------------------------------------
// 6. unknown entity

#[test]
fn unknown_entity_exits_2_with_a_message_and_no_stdout() {
    let lore = Lore::new();
    lore.ingest_examples();
    for who in [
        "nobody@nowhere.io",
        "Nobody At All",
        "e_00000000000000000000000000000000",
        "project:nope",
    ] {
        for json_flag in [false, true] {
            let mut args = vec!["show", who];
            if json_flag {
                args.push("--json");
            }
            let run = lore.run(&args).code(2);
            assert!(
                run.stdout.is_empty(),
                "nothing on stdout: {}",
                run.describe()
            );
            assert!(
                run.stderr.contains(who),
                "stderr names the entity: {}",
                run.describe()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 7. invalid bundles

#[test]
fn invalid_bundle_exits_2_naming_the_field_path_and_leaves_the_database_unchanged() {
    let lore = Lore::new();
    lore.ingest_examples();
    let entities_before = lore.run(&["entities", "--json"]).success().stdout;
    let meetings_before = lore.run(&["meetings", "--json"]).success().stdout;

    // a claim citing an unknown segment
    let bad_segment = lore.write_json(
        "bad-segment.json",
        &zed_bundle("bad-segment", json!([zed_title_claim("s9")])),
    );
    let run = lore.run(&["ingest", &bad_segment]).code(2);
    assert!(
        run.stderr.contains("claims[0].evidence.segment_ids[0]"),
        "stderr names the field path: {}",
        run.describe()
    );

    // a missing meeting.started_at
    let mut no_start = zed_bundle("no-start", json!([zed_title_claim("s1")]));
    no_start["meeting"]
        .as_object_mut()
        .unwrap()
        .remove("started_at");
    let no_start = lore.write_json("no-start.json", &no_start);
    let run = lore.run(&["ingest", &no_start]).code(2);
    assert!(
        run.stderr.contains("meeting.started_at"),
        "{}",
        run.describe()
    );

    // a quote that is not in the cited segment
    let mut bad_quote = zed_title_claim("s1");
    bad_quote["evidence"]["quote"] = json!("I resign");
    let bad_quote = lore.write_json(
        "bad-quote.json",
        &zed_bundle("bad-quote", json!([zed_title_claim("s1"), bad_quote])),
    );
    let run = lore.run(&["ingest", &bad_quote]).code(2);
    assert!(
        run.stderr.contains("claims[1].evidence.quote"),
        "{}",
        run.describe()
    );

    // an unknown predicate
    let mut bad_predicate = zed_title_claim("s1");
    bad_predicate["predicate"] = json!("is_secretly");
    let bad_predicate = lore.write_json(
        "bad-predicate.json",
        &zed_bundle("bad-predicate", json!([bad_predicate])),
    );
    let run = lore.run(&["ingest", &bad_predicate]).code(2);
    assert!(
        run.stderr.contains("claims[0].predicate"),
        "{}",
        run.describe()
    );

    // a path that does not exist
    let run = lore.run(&["ingest", "does-not-exist.json"]).code(2);
    assert!(
        run.stderr.contains("does-not-exist.json"),
        "{}",
        run.describe()
    );

    assert_eq!(
        entities_before,
        lore.run(&["entities", "--json"]).success().stdout
    );
    assert_eq!(
        meetings_before,
        lore.run(&["meetings", "--json"]).success().stdout
    );
    let run = lore.run(&["show", "zed@quinn.io"]).code(2);
    assert!(run.stdout.is_empty());

    // A folder with one bad and one good bundle: exit 2, but the good one is ingested.
    lore.write_json(
        "mixed/a-bad.json",
        &zed_bundle("mixed-bad", json!([zed_title_claim("s9")])),
    );
    lore.write_json(
        "mixed/b-good.json",
        &zed_bundle("mixed-good", json!([zed_title_claim("s1")])),
    );
    let mixed = lore.path().join("mixed");
    let run = lore
        .run(&["ingest", mixed.to_str().unwrap(), "--json"])
        .code(2);
    assert!(
        run.stderr.contains("claims[0].evidence.segment_ids[0]"),
        "{}",
        run.describe()
    );
    let report = run.json();
    let reports = as_array(&report["meetings"]);
    assert_eq!(reports.len(), 1, "{report:#}");
    assert_eq!(reports[0]["external_id"], "mixed-good");
    assert_eq!(as_array(&report["failed"]).len(), 1, "{report:#}");
    assert!(report["revision"].is_string());

    let meetings = lore.json(&["meetings"]);
    let external: BTreeSet<&str> = as_array(&meetings)
        .iter()
        .map(|m| str_field(m, "external_id"))
        .collect();
    assert!(external.contains("mixed-good"));
    assert!(!external.contains("mixed-bad"));
    assert_eq!(external.len(), 11);
    let zed = lore.json(&["show", "zed@quinn.io"]);
    assert_eq!(zed["entity"]["attributes"]["has_title"], "CTO");
    lore.run(&["check"]).success();
}

// ---------------------------------------------------------------------------------------------
// 8. garbage never panics

#[test]
fn garbage_input_exits_2_and_never_panics() {
    let lore = Lore::new();
    let valid = zed_bundle("garbage-base", json!([zed_title_claim("s1")]));
    let mut cases: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| {
        cases.push((name.to_string(), lore.write_bytes(name, &bytes)));
    };
    add("random.json", pseudo_random_bytes(0x5eed, 64 * 1024));
    add(
        "random-ascii.json",
        pseudo_random_bytes(42, 16 * 1024)
            .iter()
            .map(|b| b' ' + b % 95)
            .collect(),
    );
    add("empty.json", Vec::new());
    add("whitespace.json", b"  \n\t ".to_vec());
    add("array.json", b"[1, 2, 3]".to_vec());
    add("null.json", b"null".to_vec());
    add("number.json", b"42".to_vec());
    add("string.json", b"\"meeting\"".to_vec());
    add(
        "truncated.json",
        serde_json::to_vec(&valid).unwrap()[..40].to_vec(),
    );
    add(
        "deep.json",
        format!("{{\"meeting\": {}", "[".repeat(200_000)).into_bytes(),
    );
    let mut bad_utf8 = serde_json::to_vec(&valid).unwrap();
    bad_utf8.splice(20..20, [0xff, 0xfe, 0xc0]);
    add("bad-utf8.json", bad_utf8);
    let huge = "x".repeat(5 * 1024 * 1024);
    let mut huge_id = valid.clone();
    huge_id["meeting"]["external_id"] = json!(huge);
    add(
        "huge-external-id.json",
        serde_json::to_vec(&huge_id).unwrap(),
    );
    let mut huge_time = valid.clone();
    huge_time["meeting"]["started_at"] = json!(huge);
    add(
        "huge-started-at.json",
        serde_json::to_vec(&huge_time).unwrap(),
    );
    let mut huge_segment = valid.clone();
    huge_segment["claims"][0]["evidence"]["segment_ids"] = json!([huge]);
    add(
        "huge-segment-id.json",
        serde_json::to_vec(&huge_segment).unwrap(),
    );
    let mut wrong_types = valid.clone();
    wrong_types["participants"] = json!(5);
    wrong_types["segments"][0]["start_ms"] = json!("zero");
    wrong_types["claims"][0]["confidence"] = json!(7.5);
    add(
        "wrong-types.json",
        serde_json::to_vec(&wrong_types).unwrap(),
    );
    let mut negative = valid.clone();
    negative["segments"][0]["start_ms"] = json!(-5);
    negative["segments"][0]["end_ms"] = json!(u64::MAX);
    add("negative.json", serde_json::to_vec(&negative).unwrap());
    let mut bad_kind = valid.clone();
    bad_kind["claims"][0]["subject"]["kind"] = json!("spaceship");
    add("bad-kind.json", serde_json::to_vec(&bad_kind).unwrap());
    let mut meeting_number = valid.clone();
    meeting_number["meeting"] = json!(42);
    add(
        "meeting-number.json",
        serde_json::to_vec(&meeting_number).unwrap(),
    );

    for (name, path) in &cases {
        let run = lore.run(&["ingest", path]);
        assert_eq!(run.code, 2, "{name}: bad input exits 2: {}", run.describe());
        assert!(
            !run.stderr.contains("panicked"),
            "{name}: {}",
            run.describe()
        );
        assert!(!run.stderr.trim().is_empty(), "{name}: a reason on stderr");
    }
    // a folder full of garbage, ingested in one go
    let all: Vec<&str> = cases.iter().map(|(_, p)| p.as_str()).collect();
    let mut args = vec!["ingest"];
    args.extend(all);
    let run = lore.run(&args).code(2);
    assert!(!run.stderr.contains("panicked"));
    assert_eq!(lore.json(&["entities"]), json!([]));
    assert_eq!(lore.json(&["meetings"]), json!([]));
    lore.run(&["check"]).success();

    // A database file that is not a database is an error, not a panic.
    let not_db = lore.write_bytes("not-a.db", &pseudo_random_bytes(7, 8192));
    let run = lore.run_db(std::path::Path::new(&not_db), &["entities"]);
    assert!([1, 2].contains(&run.code), "{}", run.describe());
    assert!(!run.stderr.contains("panicked"));
}

// ---------------------------------------------------------------------------------------------
// 9. claim add / override (L6)

#[test]
fn claim_add_and_override_write_manual_claims_l6() {
    let lore = Lore::new();
    lore.ingest_examples();

    let text = lore
        .run(&["claim", "add", ALICE, "located_in", "Remote"])
        .success();
    assert!(text.stdout.contains("revision"), "{}", text.describe());
    let report = lore.json(&["claim", "add", ALICE, "located_in", "Remote"]);
    assert!(str_field(&report, "revision").len() > 1, "{report}");

    let alice = lore.json(&["show", ALICE]);
    assert_eq!(alice["entity"]["attributes"]["located_in"], "Remote");
    let located = claims_with(&alice, "located_in");
    assert_eq!(
        located.len(),
        1,
        "one manual claim, not two (L1): {located:?}"
    );
    assert_eq!(located[0]["value"], "Remote");
    assert_eq!(located[0]["authority"], "manual");
    assert_eq!(located[0]["status"], "active");

    // override a single-valued attribute
    let report = lore.json(&[
        "claim",
        "override",
        "project:beacon",
        "has_status",
        "paused",
    ]);
    assert!(report["revision"].is_string(), "{report}");
    let beacon = lore.json(&["show", "project:beacon"]);
    assert_eq!(beacon["entity"]["attributes"]["has_status"], "paused");
    let status = claims_with(&beacon, "has_status");
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(status[0]["authority"], "manual");
    assert_eq!(status[0]["value"], "paused");

    // bad usage
    let run = lore
        .run(&["claim", "add", ALICE, "likes_cheese", "yes"])
        .code(2);
    assert!(run.stderr.contains("likes_cheese"), "{}", run.describe());
    assert!(run.stdout.is_empty());
    let run = lore
        .run(&[
            "claim",
            "override",
            BOB,
            "owns_project",
            "--object",
            "project:atlas",
        ])
        .code(2);
    assert!(run.stderr.contains("owns_project"), "{}", run.describe());
    lore.run(&["claim", "add", "nobody@nowhere.io", "located_in", "Mars"])
        .code(2);

    // L6: a later extracted claim contradicting the manual value is provisional and raised as a
    // suggestion; the manual value holds.
    let mut early = lore.command();
    early.env("LORE_NOW", "2026-11-15T00:00:00Z").args([
        "claim",
        "add",
        "priya@northwind.io",
        "located_in",
        "Lisbon",
    ]);
    common::Run::from_command(early).success();
    let paris = bundle(
        "priya-moves-again",
        "2026-11-20T10:00:00Z",
        json!([{"display_name": "Priya Shah", "email": "priya@northwind.io", "speaker_label": "S1"}]),
        json!([{"id": "s1", "start_ms": 0, "end_ms": 3000, "speaker": "S1",
                "attribution": "one_mapped_source", "text": "I moved to Paris last week."}]),
        json!([{"subject": {"kind": "person", "name": "Priya Shah", "email": "priya@northwind.io"},
                "predicate": "located_in", "value": "Paris", "authority": "first_party", "confidence": 0.9,
                "evidence": {"segment_ids": ["s1"], "quote": "I moved to Paris"}}]),
    );
    let paris = lore.write_json("paris.json", &paris);
    lore.run(&["ingest", &paris]).success();
    let priya = lore.json(&["show", "priya@northwind.io", "--include-provisional"]);
    assert_eq!(priya["entity"]["attributes"]["located_in"], "Lisbon");
    let paris_claim = claim_valued(&priya, "located_in", "Paris");
    assert_eq!(paris_claim["status"], "provisional", "{paris_claim:#}");
    let suggestions = lore.json(&["suggestions"]);
    assert!(
        as_array(&suggestions)
            .iter()
            .any(|s| s["type"] == "claim_conflict"
                && s.to_string().contains(str_field(paris_claim, "id"))),
        "a suggestion for the conflict: {suggestions:#}"
    );
    lore.run(&["check"]).success();
}

// ---------------------------------------------------------------------------------------------
// 10. retract (L12)

#[test]
fn claim_retract_removes_from_current_view_and_stays_retracted_l12() {
    let lore = Lore::new();
    lore.ingest_examples();
    let alice = lore.json(&["show", ALICE]);
    let works_at = claims_with(&alice, "works_at");
    assert_eq!(works_at.len(), 1);
    let claim_id = str_field(works_at[0], "id").to_string();

    let report = lore.json(&["claim", "retract", &claim_id]);
    assert!(report["revision"].is_string(), "{report}");

    let alice = lore.json(&["show", ALICE]);
    assert!(
        !ids(&alice["claims"]).contains(&claim_id),
        "retracted claim left the current view"
    );
    assert!(
        alice["entity"]["attributes"].get("works_at").is_none(),
        "{alice:#}"
    );
    let alice_all = lore.json(&["show", ALICE, "--include-provisional"]);
    assert!(!ids(&alice_all["claims"]).contains(&claim_id));
    let history = lore.json(&["show", ALICE, "--history"]);
    let retracted: Vec<&Value> = claims(&history)
        .iter()
        .filter(|c| c["id"] == claim_id.as_str())
        .collect();
    assert_eq!(retracted.len(), 1);
    assert_eq!(retracted[0]["status"], "retracted");
    let evidence_before = as_array(&retracted[0]["evidence"]).len();

    // Found again by extraction: the new evidence is kept but the claim does not return.
    let again = bundle(
        "alice-still-at-northwind",
        "2026-11-20T10:00:00Z",
        json!([{"display_name": "Alice Chen", "email": ALICE, "speaker_label": "S1"}]),
        json!([{"id": "s1", "start_ms": 0, "end_ms": 3000, "speaker": "S1",
                "attribution": "one_mapped_source", "text": "I still work at Northwind Labs."}]),
        json!([{"subject": {"kind": "person", "name": "Alice Chen", "email": ALICE},
                "predicate": "works_at",
                "object": {"kind": "company", "name": "Northwind Labs", "domain": "northwind.io"},
                "authority": "first_party", "confidence": 0.9,
                "evidence": {"segment_ids": ["s1"], "quote": "I still work at Northwind Labs"}}]),
    );
    let again = lore.write_json("again.json", &again);
    lore.run(&["ingest", &again]).success();
    let history = lore.json(&["show", ALICE, "--history"]);
    let retracted: Vec<&Value> = claims(&history)
        .iter()
        .filter(|c| c["id"] == claim_id.as_str())
        .collect();
    assert_eq!(retracted.len(), 1, "same identity, same claim (L1)");
    assert_eq!(retracted[0]["status"], "retracted", "L12: stays retracted");
    assert_eq!(
        as_array(&retracted[0]["evidence"]).len(),
        evidence_before + 1,
        "new evidence kept"
    );
    let alice = lore.json(&["show", ALICE, "--include-provisional"]);
    assert!(!ids(&alice["claims"]).contains(&claim_id));
    assert!(claims_with(&alice, "works_at").is_empty());

    // unknown ids are bad input
    let run = lore
        .run(&["claim", "retract", "c_00000000000000000000000000000000"])
        .code(2);
    assert!(run.stdout.is_empty());
    assert!(!run.stderr.trim().is_empty());
    lore.run(&["claim", "retract", "not-even-an-id"]).code(2);
    lore.run(&["check"]).success();
}

// ---------------------------------------------------------------------------------------------
// 11. delete meeting (L13)

#[test]
fn delete_meeting_restores_the_superseded_title_l13() {
    let lore = Lore::new();
    lore.ingest_examples();
    let promoted_in = example_external_id("07-");
    let report = lore.json(&["delete", "meeting", &promoted_in]);
    assert!(report["revision"].is_string(), "{report}");

    let alice = lore.json(&["show", ALICE]);
    assert_eq!(
        alice["entity"]["attributes"]["has_title"],
        "Senior Researcher"
    );
    let titles = claims_with(&alice, "has_title");
    assert_eq!(titles.len(), 1);
    assert_eq!(titles[0]["value"], "Senior Researcher");
    assert_eq!(titles[0]["status"], "active");
    assert_eq!(titles[0]["valid_to"], Value::Null);
    assert_eq!(titles[0]["superseded_by"], Value::Null);
    let history = lore.json(&["show", ALICE, "--history", "--include-provisional"]);
    assert!(
        !history.to_string().contains("Principal Researcher"),
        "erasure: nothing only meeting 07 supported remains: {history:#}"
    );
    assert!(!history.to_string().contains(&promoted_in));

    let meetings = lore.json(&["meetings"]);
    assert_eq!(as_array(&meetings).len(), 9);
    assert!(as_array(&meetings)
        .iter()
        .all(|m| m["external_id"] != promoted_in.as_str()));

    // deleting it again: not found
    let run = lore.run(&["delete", "meeting", &promoted_in]).code(2);
    assert!(run.stderr.contains(&promoted_in), "{}", run.describe());
    assert!(run.stdout.is_empty());

    // by internal id
    let first = &as_array(&meetings)[0];
    let internal = str_field(first, "id").to_string();
    let external = str_field(first, "external_id").to_string();
    let text = lore.run(&["delete", "meeting", &internal]).success();
    assert!(text.stdout.contains("revision"), "{}", text.describe());
    let meetings = lore.json(&["meetings"]);
    assert_eq!(as_array(&meetings).len(), 8);
    assert!(as_array(&meetings)
        .iter()
        .all(|m| m["id"] != internal.as_str() && m["external_id"] != external.as_str()));
    lore.run(&["delete", "meeting", &internal]).code(2);
    lore.run(&["delete", "meeting", "no-such-meeting"]).code(2);
    lore.run(&["check"]).success();

    // L14: re-ingesting the deleted meeting restores the promotion.
    lore.run(&["ingest", common::example_file("07-").to_str().unwrap()])
        .success();
    let alice = lore.json(&["show", ALICE]);
    assert_eq!(
        alice["entity"]["attributes"]["has_title"],
        "Principal Researcher"
    );
    lore.run(&["check"]).success();
}

// ---------------------------------------------------------------------------------------------
// 12. owner isolation (L20)

#[test]
fn another_owner_sees_and_touches_nothing_l20() {
    let lore = Lore::new();
    let examples = examples_arg();
    lore.run_as("a", &["ingest", &examples]).success();
    let snapshot = |lore: &Lore| -> Vec<String> {
        [
            vec!["entities", "--json"],
            vec!["meetings", "--json"],
            vec!["suggestions", "--json"],
            vec![
                "show",
                ALICE,
                "--history",
                "--include-provisional",
                "--json",
            ],
        ]
        .iter()
        .map(|args| lore.run_as("a", args).success().stdout)
        .collect()
    };
    let before = snapshot(&lore);

    let alice = lore.json_as("a", &["show", ALICE]);
    let alice_id = str_field(&alice["entity"], "id").to_string();
    let claim_id = str_field(&claims(&alice)[0], "id").to_string();
    let meetings = lore.json_as("a", &["meetings"]);
    let meeting = &as_array(&meetings)[0];
    let meeting_id = str_field(meeting, "id").to_string();
    let promoted_in = example_external_id("07-");

    assert_eq!(lore.json_as("b", &["entities"]), json!([]));
    assert_eq!(lore.json_as("b", &["meetings"]), json!([]));
    assert_eq!(lore.json_as("b", &["suggestions"]), json!([]));
    let unknown = lore.run_as("b", &["show", "nobody@nowhere.io"]).code(2);
    let by_email = lore.run_as("b", &["show", ALICE]).code(2);
    assert!(by_email.stdout.is_empty());
    // "exactly like an id that does not exist": same message shape as an unknown entity
    assert_eq!(
        by_email.stderr.replace(ALICE, "X"),
        unknown.stderr.replace("nobody@nowhere.io", "X")
    );
    let by_id = lore.run_as("b", &["show", &alice_id]).code(2);
    assert!(by_id.stdout.is_empty());
    lore.run_as("b", &["show", "Alice Chen"]).code(2);
    lore.run_as("b", &["show", "project:atlas"]).code(2);
    let retract = lore.run_as("b", &["claim", "retract", &claim_id]).code(2);
    let retract_unknown = lore
        .run_as(
            "b",
            &["claim", "retract", "c_00000000000000000000000000000000"],
        )
        .code(2);
    assert_eq!(
        retract.stderr.replace(&claim_id, "X"),
        retract_unknown
            .stderr
            .replace("c_00000000000000000000000000000000", "X")
    );
    lore.run_as("b", &["delete", "meeting", &promoted_in])
        .code(2);
    lore.run_as("b", &["delete", "meeting", &meeting_id])
        .code(2);
    lore.run_as("b", &["claim", "add", ALICE, "located_in", "Mars"])
        .code(2);
    lore.run_as("b", &["claim", "add", &alice_id, "located_in", "Mars"])
        .code(2);
    lore.run_as(
        "b",
        &[
            "claim",
            "override",
            "project:beacon",
            "has_status",
            "hijacked",
        ],
    )
    .code(2);

    assert_eq!(before, snapshot(&lore), "owner a's data is unchanged");

    // Owner b ingests the same meetings and deletes one: owner a still unaffected.
    lore.run_as("b", &["ingest", &examples]).success();
    lore.run_as("b", &["delete", "meeting", &promoted_in])
        .success();
    assert_eq!(
        lore.json_as("b", &["show", ALICE])["entity"]["attributes"]["has_title"],
        "Senior Researcher"
    );
    assert_eq!(before, snapshot(&lore), "owner a's data is unchanged");
    assert_eq!(
        lore.json_as("a", &["show", ALICE])["entity"]["attributes"]["has_title"],
        "Principal Researcher"
    );
    // the default owner sees neither
    assert_eq!(lore.json(&["entities"]), json!([]));
    lore.run(&["check"]).success();
}

// ---------------------------------------------------------------------------------------------
// 13. suggestions

#[test]
fn suggestions_list_claim_conflicts_and_name_only_merge_proposals_l7_l15() {
    let lore = Lore::new();
    assert_eq!(lore.json(&["suggestions"]), json!([]));
    lore.ingest_examples();
    let suggestions = lore.json(&["suggestions"]);
    for s in as_array(&suggestions) {
        assert!(s["id"].is_string() && s["type"].is_string(), "{s}");
    }
    let types: Vec<&str> = as_array(&suggestions)
        .iter()
        .map(|s| str_field(s, "type"))
        .collect();
    assert!(
        types.contains(&"claim_conflict"),
        "meeting 06 leaves a conflict (L7): {suggestions:#}"
    );
    assert!(
        !types.contains(&"entity_merge"),
        "'Sam' shares no name: {suggestions:#}"
    );

    // A name-only "Bob Okafor" becomes a provisional person with a merge suggestion (L15).
    let name_only = bundle(
        "bob-from-a-phone",
        "2026-11-12T09:00:00Z",
        json!([{"display_name": "Bob Okafor", "speaker_label": "S1"}]),
        json!([{"id": "s1", "start_ms": 0, "end_ms": 2000, "speaker": "S1",
                "attribution": "one_mapped_source", "text": "Hi all, Bob dialing in from my phone."}]),
        json!([]),
    );
    let name_only = lore.write_json("bob-name-only.json", &name_only);
    lore.run(&["ingest", &name_only]).success();
    let bob_id = entity_id(&lore, None, BOB);
    let entities = lore.json(&["entities"]);
    let bobs: Vec<&Value> = as_array(&entities)
        .iter()
        .filter(|e| e["name"] == "Bob Okafor")
        .collect();
    assert_eq!(bobs.len(), 2, "never merged by name alone: {entities:#}");
    let provisional_bob = bobs.iter().find(|b| b["id"] != bob_id.as_str()).unwrap();
    assert_eq!(provisional_bob["status"], "provisional");

    let suggestions = lore.json(&["suggestions"]);
    let merges: Vec<&Value> = as_array(&suggestions)
        .iter()
        .filter(|s| s["type"] == "entity_merge")
        .collect();
    assert_eq!(merges.len(), 1, "{suggestions:#}");
    let merge = merges[0].to_string();
    assert!(merge.contains(&bob_id), "{merge}");
    assert!(merge.contains(str_field(provisional_bob, "id")), "{merge}");
    // the text mode lists them too
    let text = lore.run(&["suggestions"]).success();
    assert!(
        text.stdout.contains("entity_merge") && text.stdout.contains("claim_conflict"),
        "{}",
        text.describe()
    );
}

// ---------------------------------------------------------------------------------------------
// 14. demo

#[test]
fn demo_ingests_examples_and_prints_briefs() {
    let lore = Lore::new();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lore"));
    command
        .current_dir(lore.path())
        .env_remove("LORE_DB")
        .env_remove("LORE_OWNER")
        .env("LORE_NOW", common::NOW)
        .args(["demo", "--no-serve", "--examples", &examples_arg()]);
    let run = common::Run::from_command(command).success();
    assert!(
        run.stdout
            .lines()
            .any(|l| l.contains("Alice Chen") && l.contains("Principal Researcher")),
        "{}",
        run.describe()
    );
    assert!(run.stdout.contains("Alice Novak"));
    // examples/edits.json is applied: Priya's manual location
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("Priya Shah") && l.contains("Berlin (remote)")),
        "{}",
        run.describe()
    );
    assert!(
        lore.path().join("lore-demo.db").is_file(),
        "demo db lands in the current folder"
    );
    assert!(!lore.path().join("lore.db").exists());
    // running it twice starts afresh
    let mut again = std::process::Command::new(env!("CARGO_BIN_EXE_lore"));
    again
        .current_dir(lore.path())
        .env_remove("LORE_DB")
        .env_remove("LORE_OWNER")
        .env("LORE_NOW", common::NOW)
        .args(["demo", "--no-serve", "--examples", &examples_arg()]);
    let second = common::Run::from_command(again).success();
    assert_eq!(run.stdout, second.stdout);

    lore.run(&["demo", "--examples", "no/such/folder"]).code(2);
}

// ---------------------------------------------------------------------------------------------
// 15. check

#[test]
fn check_reports_ok_after_ingesting_examples() {
    let lore = Lore::new();
    lore.ingest_examples();
    let run = lore.run(&["check"]).success();
    assert_eq!(run.stdout.trim(), "ok", "{}", run.describe());
    let json = lore.json(&["check"]);
    assert_eq!(json["ok"], true, "{json:#}");
    assert_eq!(json["problems"], json!([]));
}

// ---------------------------------------------------------------------------------------------
// 16. help and usage errors

#[test]
fn help_exits_0_and_unknown_subcommand_exits_2() {
    let lore = Lore::new();
    let help = lore.run(&["--help"]).success();
    for command in [
        "init",
        "ingest",
        "entities",
        "show",
        "claim",
        "delete",
        "suggestions",
        "check",
        "demo",
    ] {
        assert!(
            help.stdout.contains(command),
            "--help mentions {command}: {}",
            help.describe()
        );
    }
    let show_help = lore.run(&["show", "--help"]).success();
    assert!(
        show_help.stdout.contains("--history"),
        "{}",
        show_help.describe()
    );
    assert!(show_help.stdout.contains("--include-provisional"));
    lore.run(&["help"]).success();
    lore.run(&["--version"]).success();

    let run = lore.run(&["frobnicate"]).code(2);
    assert!(run.stderr.contains("frobnicate"), "{}", run.describe());
    assert!(run.stdout.is_empty());
    lore.run(&[]).code(2);
    lore.run(&["show"]).code(2);
    lore.run(&["ingest"]).code(2);
    lore.run(&["show", ALICE, "--no-such-flag"]).code(2);
    lore.run(&["claim", "frob"]).code(2);
    lore.run(&["delete", "universe", "x"]).code(2);
    lore.run(&["--owner", "  ", "entities"]).code(2);
    let mut bad_clock = lore.command();
    bad_clock.env("LORE_NOW", "yesterday-ish").arg("entities");
    common::Run::from_command(bad_clock).code(2);
}

// ---------------------------------------------------------------------------------------------
// 17. sensitive data (L21)

#[test]
fn salary_claim_is_rejected_by_the_sensitive_data_guard_l21() {
    let lore = Lore::new();
    let run = lore.run(&["ingest", &examples_arg(), "--json"]).success();
    assert!(
        run.stderr.to_lowercase().contains("sensitive"),
        "stderr warns about the sensitive-data guard: {}",
        run.describe()
    );
    let report = run.json();
    let handoff = example_external_id("09-");
    let row = as_array(&report["meetings"])
        .iter()
        .find(|m| m["external_id"] == handoff.as_str())
        .expect("meeting 09 reported");
    assert_eq!(row["rejected"], 1, "{row}");

    let bob = lore.json(&["show", BOB, "--history", "--include-provisional"]);
    assert!(!claims(&bob).is_empty());
    for claim in claims(&bob) {
        let value = claim["value"].as_str().unwrap_or_default().to_lowercase();
        assert!(
            !value.contains("salary") && !value.contains("150k"),
            "{claim:#}"
        );
    }
    assert!(
        !bob.to_string().to_lowercase().contains("salary"),
        "{bob:#}"
    );
    // the legitimate claim from the same meeting is kept
    claim_valued(&bob, "has_responsibility", "platform infrastructure");

    // the guard also applies to a bundle of our own
    let pay = bundle(
        "pay-talk",
        "2026-11-21T10:00:00Z",
        json!([{"display_name": "Zed Quinn", "email": "zed@quinn.io", "speaker_label": "S1"}]),
        json!([{"id": "s1", "start_ms": 0, "end_ms": 3000, "speaker": "S1",
                "attribution": "one_mapped_source", "text": "My salary is 200k and I bank with Acme Bank."}]),
        json!([{"subject": {"kind": "person", "name": "Zed Quinn", "email": "zed@quinn.io"},
                "predicate": "note", "value": "salary is 200k", "authority": "first_party", "confidence": 0.9,
                "evidence": {"segment_ids": ["s1"], "quote": "My salary is 200k"}}]),
    );
    let pay = lore.write_json("pay.json", &pay);
    let run = lore.run(&["ingest", &pay]).success();
    assert!(
        run.stderr.to_lowercase().contains("sensitive"),
        "{}",
        run.describe()
    );
    let zed = lore.json(&["show", "zed@quinn.io", "--history", "--include-provisional"]);
    assert!(
        !zed.to_string().to_lowercase().contains("salary"),
        "{zed:#}"
    );
}

// ---------------------------------------------------------------------------------------------
// 18. a closed stdout (`lore ... | head`) is not a panic

#[test]
fn closed_stdout_pipe_does_not_panic() {
    let lore = Lore::new();
    lore.ingest_examples();
    for args in [vec!["entities", "--json"], vec!["show", ALICE, "--history"]] {
        // A pipe whose only reader has already exited: every write gets EPIPE, as with `| head -0`.
        let mut reader = std::process::Command::new("true")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("spawn `true`");
        let write_end = reader.stdin.take().expect("pipe");
        reader.wait().expect("`true` exits");
        let mut command = lore.command();
        command
            .args(&args)
            .stdout(std::process::Stdio::from(write_end))
            .stderr(std::process::Stdio::piped());
        let output = command
            .spawn()
            .expect("spawn lore")
            .wait_with_output()
            .expect("wait");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("panicked") && output.status.code() != Some(101),
            "lore {args:?} with a closed stdout must exit quietly, not panic \
             (status {}):\n{stderr}",
            output.status
        );
    }
}
