//! End-to-end tests of the identity commands (L15–L18, L19, L20): merge, split, undo, the review
//! queue, participants, tasks, pins and resource links, run through the real binary on the examples.

mod common;

use common::{example_external_id, examples_dir, Lore};
use serde_json::{json, Value};

const ALICE: &str = "alice@northwind.io";
const BOB: &str = "bob@northwind.io";

fn id_of(lore: &Lore, owner: &str, entity: &str) -> String {
    lore.json_as(owner, &["show", entity])["entity"]["id"]
        .as_str()
        .expect("entity id")
        .to_string()
}

fn history(lore: &Lore, entity: &str) -> String {
    lore.run(&[
        "show",
        entity,
        "--history",
        "--include-provisional",
        "--json",
    ])
    .success()
    .stdout
}

fn revision(report: &Value) -> String {
    report["revision"]
        .as_str()
        .unwrap_or_else(|| panic!("no revision in {report}"))
        .to_string()
}

#[test]
fn merge_then_undo_restores_both_pages_byte_for_byte_l18() {
    let lore = Lore::new();
    lore.ingest_examples();
    let sam = id_of(&lore, "local", "Sam");
    let bob = id_of(&lore, "local", BOB);
    let sam_before = history(&lore, &sam);
    let bob_before = history(&lore, &bob);

    let merged = lore.json(&["merge", BOB, &sam]);
    assert_eq!(merged["entity"], json!(bob));
    assert_eq!(merged["other"], json!(sam));
    // Reading the merged id reads the survivor; the merged entity is no longer listed.
    assert_eq!(lore.json(&["show", &sam])["entity"]["id"], json!(bob));
    let entities = lore.json(&["entities"]);
    assert!(!entities
        .as_array()
        .unwrap()
        .iter()
        .any(|row| row["id"] == json!(sam)));
    let bob_view = lore.json(&["show", BOB]);
    assert!(bob_view["entity"]["aliases"]
        .as_array()
        .unwrap()
        .contains(&json!("Sam")));
    lore.run(&["check"]).success();

    let undone = lore.json(&["undo", &revision(&merged)]);
    assert!(undone["revision"].is_string());
    assert_eq!(history(&lore, &sam), sam_before);
    assert_eq!(history(&lore, &bob), bob_before);
    lore.run(&["check"]).success();

    // Undoing twice is a conflict: the rows no longer look as the merge left them.
    let again = lore.run(&["undo", &revision(&merged)]).code(2);
    assert!(again.stderr.contains("changed since"), "{}", again.stderr);
}

#[test]
fn undo_refuses_source_deletions_and_unknown_revisions() {
    let lore = Lore::new();
    lore.ingest_examples();
    let deleted = lore.json(&["delete", "meeting", &example_external_id("07-")]);
    let refused = lore.run(&["undo", &revision(&deleted)]).code(2);
    assert!(
        refused.stderr.contains("cannot be undone"),
        "{}",
        refused.stderr
    );
    let unknown = lore.run(&["undo", "r_nope"]).code(2);
    assert!(unknown.stderr.contains("no revision"), "{}", unknown.stderr);
    assert!(unknown.stdout.is_empty());
}

#[test]
fn split_by_meeting_moves_evidence_and_is_never_re_merged_l18() {
    let lore = Lore::new();
    lore.ingest_examples();
    let sam = id_of(&lore, "local", "Sam");
    let bob = id_of(&lore, "local", BOB);
    let merged = lore.json(&["merge", BOB, &sam]);
    let sam_meeting = example_external_id("04-");
    let split = lore.json(&["split", BOB, "--meeting", &sam_meeting]);
    let new_id = split["other"].as_str().unwrap().to_string();
    assert_ne!(new_id, bob);
    let skill_holder = |lore: &Lore| {
        let view = lore.json(&["show", &new_id]);
        let has_skill = view["claims"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["value"] == "frontend design");
        let bob_view = lore.json(&["show", BOB]);
        let bob_has_skill = bob_view["claims"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["value"] == "frontend design");
        (has_skill, bob_has_skill)
    };
    assert_eq!(skill_holder(&lore), (true, false));
    lore.run(&["check"]).success();
    // Deleting the meeting and ingesting it again joins nothing: Sam's words stay off Bob.
    lore.json(&["delete", "meeting", &sam_meeting]);
    let file = common::example_file("04-");
    lore.json(&["ingest", file.to_str().unwrap()]);
    assert_eq!(skill_holder(&lore), (true, false));
    lore.run(&["check"]).success();
    let queue = lore.json(&["suggestions"]);
    for item in queue.as_array().unwrap() {
        let pair = [item["target"].clone(), item["secondary"].clone()];
        assert!(
            !(pair.contains(&json!(bob)) && pair.contains(&json!(new_id))),
            "{item}"
        );
    }
    // The old merge cannot be undone over the split and what followed it.
    lore.run(&["undo", &revision(&merged)]).code(2);
    lore.run(&["split", BOB]).code(2);
}

#[test]
fn suggestions_list_evidence_and_accept_or_reject_l6() {
    let lore = Lore::new();
    lore.ingest_examples();
    let queue = lore.json(&["suggestions"]);
    let conflict = queue
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "claim_conflict")
        .expect("a conflict in the examples")
        .clone();
    let claim = &conflict["details"]["claim"];
    assert!(
        !claim["evidence"].as_array().unwrap().is_empty(),
        "{conflict:#}"
    );
    let value = claim["value"].as_str().unwrap().to_string();
    let subject = claim["subject"].as_str().unwrap().to_string();
    let id = conflict["id"].as_str().unwrap().to_string();

    let accepted = lore.json(&["suggestions", "accept", &id]);
    let view = lore.json(&["show", &subject]);
    let predicate = claim["predicate"].as_str().unwrap();
    assert_eq!(view["entity"]["attributes"][predicate], json!(value));
    assert!(lore.json(&["suggestions"]).as_array().unwrap().is_empty());
    lore.run(&["suggestions", "accept", &id]).code(2);
    let all = lore.json(&["suggestions", "--all"]);
    assert!(all
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["status"] == "accepted"));

    lore.json(&["undo", &revision(&accepted)]);
    assert_eq!(lore.json(&["suggestions"]).as_array().unwrap().len(), 1);
    let rejected = lore.json(&["suggestions", "reject", &id]);
    assert!(rejected["revision"].is_string());
    let history = lore.json(&["show", &subject, "--history"]);
    let retracted = history["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"] == json!(value))
        .unwrap();
    assert_eq!(retracted["status"], "retracted");
    lore.run(&["suggestions", "accept", "s_unknown"]).code(2);
    lore.run(&["check"]).success();
}

#[test]
fn removed_participant_is_not_re_added_by_re_ingesting_the_bundle() {
    let lore = Lore::new();
    lore.ingest_examples();
    let meeting = example_external_id("01-");
    let listed = lore.json(&["participant", "list", &meeting]);
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["source"] == "auto"));
    lore.json(&["participant", "remove", &meeting, BOB]);
    let source_of_bob = |lore: &Lore| {
        lore.json(&["participant", "list", &meeting])
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["display_name"] == "Bob Okafor")
            .map(|p| p["source"].clone())
    };
    assert_eq!(source_of_bob(&lore), Some(json!("excluded")));
    lore.run(&["participant", "remove", &meeting, BOB]).code(2);

    // Delete the meeting and ingest the same bundle again: the tombstone holds.
    lore.json(&["delete", "meeting", &meeting]);
    let file = common::example_file("01-");
    lore.json(&["ingest", file.to_str().unwrap()]);
    assert_eq!(source_of_bob(&lore), Some(json!("excluded")));
    lore.run(&["check"]).success();

    // A manual add revives the mapping; adding again would duplicate it and is refused.
    lore.json(&["participant", "add", &meeting, BOB]);
    assert_eq!(source_of_bob(&lore), Some(json!("manual")));
    let rows = lore.json(&["participant", "list", &meeting]);
    assert_eq!(
        rows.as_array()
            .unwrap()
            .iter()
            .filter(|p| p["display_name"] == "Bob Okafor")
            .count(),
        1
    );
    lore.run(&["participant", "add", &meeting, BOB]).code(2);
}

#[test]
fn tasks_change_status_and_show_on_person_and_project() {
    let lore = Lore::new();
    lore.ingest_examples();
    let alice = lore.json(&["show", ALICE]);
    let task = alice["tasks"][0].clone();
    let id = task["id"].as_str().unwrap().to_string();
    let project = task["project"].as_str().unwrap().to_string();
    let on_project = lore.json(&["show", &project]);
    assert!(on_project["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == json!(id)));
    let done = lore.json(&["task", "done", &id]);
    assert_eq!(lore.json(&["show", ALICE])["tasks"][0]["status"], "done");
    lore.run(&["task", "done", &id]).code(2);
    lore.json(&["task", "reopen", &id]);
    lore.json(&["task", "cancel", &id]);
    assert_eq!(
        lore.json(&["show", &project])["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == json!(id))
            .unwrap()["status"],
        "canceled"
    );
    lore.run(&["undo", &revision(&done)]).code(2);
    lore.run(&["task", "done", "t_unknown"]).code(2);

    // The user's status outlives deleting and re-ingesting every meeting; undo takes it back.
    let status_on_alice = |lore: &Lore| {
        lore.json(&["show", ALICE])["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == json!(id))
            .unwrap()["status"]
            .clone()
    };
    let reopened = lore.json(&["task", "reopen", &id]);
    lore.json(&["undo", &revision(&reopened)]);
    assert_eq!(status_on_alice(&lore), "canceled");
    for meeting in lore.json(&["meetings"]).as_array().unwrap() {
        lore.json(&["delete", "meeting", meeting["id"].as_str().unwrap()]);
    }
    lore.ingest_examples();
    assert_eq!(status_on_alice(&lore), "canceled");
    lore.run(&["check"]).success();
}

#[test]
fn pinned_entities_lead_the_weight_order_l19() {
    let lore = Lore::new();
    lore.ingest_examples();
    let rows = lore.json(&["entities", "--sort", "weight"]);
    let rows = rows.as_array().unwrap();
    let weights: Vec<f64> = rows
        .iter()
        .map(|r| r["topic_weight"].as_f64().unwrap())
        .collect();
    assert!(weights.windows(2).all(|w| w[0] >= w[1]), "{weights:?}");
    let last = rows.last().unwrap()["id"].as_str().unwrap().to_string();
    lore.json(&["pin", &last]);
    let pinned = lore.json(&["entities", "--sort", "weight"]);
    assert_eq!(pinned[0]["id"], json!(last));
    assert_eq!(pinned[0]["pinned"], json!(true));
    lore.json(&["pin", &last, "--off"]);
    let unpinned = lore.json(&["entities", "--sort", "weight"]);
    assert_ne!(unpinned[0]["id"], json!(last));
    lore.run(&["entities", "--sort", "size"]).code(2);
}

/// `lore rename`: the manual name is what `show`, `entities` and search show, the sources' name
/// stays beside it, `--clear` and `undo` bring the sources' name back, and bad input is exit 2.
#[test]
fn rename_names_an_entity_by_hand_and_clear_brings_the_sources_name_back() {
    let lore = Lore::new();
    lore.ingest_examples();
    let renamed = lore.json(&["rename", "project:atlas", "Orion"]);
    let rename = revision(&renamed);
    let atlas = lore.json(&["show", "project:atlas"]);
    assert_eq!(atlas["entity"]["name"], "Orion");
    assert_eq!(atlas["entity"]["derived_name"], "Atlas");
    let id = atlas["entity"]["id"].as_str().unwrap().to_string();
    let listed = lore.json(&["entities"]);
    let row = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == json!(id))
        .expect("listed");
    assert_eq!(row["name"], "Orion");
    let hits = lore.json(&["search", "orion", "--kind", "entity"]);
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .any(|hit| hit["id"] == json!(id)),
        "{hits}"
    );
    // The people on the project show its new name.
    let alice = lore.run(&["show", ALICE]).success().stdout;
    assert!(alice.contains("Orion"), "{alice}");

    // Bad input: no name, an empty one, the same name again, an unknown entity.
    lore.run(&["rename", "project:atlas"]).code(2);
    lore.run(&["rename", "project:atlas", "  "]).code(2);
    lore.run(&["rename", "project:atlas", "Orion"]).code(2);
    lore.run(&["rename", "project:nothing-here", "Orion"])
        .code(2);
    lore.run(&["rename", "project:atlas", "Orion", "--clear"])
        .code(2);

    lore.json(&["undo", &rename]);
    let atlas = lore.json(&["show", "project:atlas"]);
    assert_eq!(atlas["entity"]["name"], "Atlas");
    assert!(atlas["entity"].get("derived_name").is_none(), "{atlas}");

    lore.json(&["rename", "project:atlas", "Orion"]);
    lore.json(&["rename", "project:atlas", "--clear"]);
    assert_eq!(
        lore.json(&["show", "project:atlas"])["entity"]["name"],
        "Atlas"
    );
    lore.run(&["rename", "project:atlas", "--clear"]).code(2);
    assert!(lore.json(&["check"])["ok"].as_bool().unwrap());
}

#[test]
fn meeting_links_show_on_the_entities_they_concern_url_only() {
    let lore = Lore::new();
    lore.ingest_examples();
    let atlas = lore.json(&["show", "project:atlas"]);
    let links = atlas["links"].as_array().unwrap();
    let pr = links
        .iter()
        .find(|l| l["url"] == "https://github.com/northwind/atlas/pull/42")
        .expect("the Atlas PR shared in chat");
    assert_eq!(pr["resource_type"], "github_pr");
    assert_eq!(pr["external_key"], "github:northwind/atlas#42");
    assert!(links.iter().all(|l| l["ingested_status"] == "url_only"));
    let beacon = lore.json(&["show", "project:beacon"]);
    assert!(!beacon["links"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["url"] == "https://github.com/northwind/atlas/pull/42"));
    // Deleting the meeting takes its link away (L13).
    lore.json(&["delete", "meeting", &example_external_id("01-")]);
    let atlas = lore.json(&["show", "project:atlas"]);
    assert!(!atlas["links"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["url"] == "https://github.com/northwind/atlas/pull/42"));
}

#[test]
fn another_owner_cannot_touch_identity_l20() {
    let lore = Lore::new();
    let examples = examples_dir();
    lore.run_as("a", &["ingest", examples.to_str().unwrap()])
        .success();
    let sam = id_of(&lore, "a", "Sam");
    let bob = id_of(&lore, "a", BOB);
    let alice = lore.json_as("a", &["show", ALICE]);
    let task = alice["tasks"][0]["id"].as_str().unwrap().to_string();
    let merged = lore.json_as("a", &["merge", &bob, &sam]);
    let queue = lore.json_as("a", &["suggestions"]);
    let suggestion = queue[0]["id"].as_str().unwrap().to_string();
    let meeting = example_external_id("01-");
    let snapshot = |lore: &Lore| {
        [
            vec!["entities", "--json"],
            vec!["suggestions", "--all", "--json"],
            vec!["participant", "list", &meeting, "--json"],
            vec!["show", &bob, "--history", "--json"],
        ]
        .iter()
        .map(|args| lore.run_as("a", args).success().stdout)
        .collect::<Vec<_>>()
    };
    let before = snapshot(&lore);
    for args in [
        vec!["merge", &bob, &sam],
        vec!["undo", merged["revision"].as_str().unwrap()],
        vec!["split", &bob, "--meeting", &meeting],
        vec!["suggestions", "accept", &suggestion],
        vec!["suggestions", "reject", &suggestion],
        vec!["participant", "list", &meeting],
        vec!["participant", "remove", &meeting, &bob],
        vec!["task", "done", &task],
        vec!["pin", &bob],
        vec!["rename", &bob, "Robert"],
        vec!["rename", &bob, "--clear"],
    ] {
        let run = lore.run_as("b", &args).code(2);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    assert_eq!(before, snapshot(&lore));
}

#[test]
fn undoing_an_ingest_removes_its_meeting_with_the_l13_cascade() {
    let lore = Lore::new();
    let report = lore.ingest_examples();
    let revisions: Vec<String> = report["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    let last = revisions.last().unwrap().clone();
    let meetings_before = lore.json(&["meetings"]).as_array().unwrap().len();
    lore.json(&["undo", &last]);
    assert_eq!(
        lore.json(&["meetings"]).as_array().unwrap().len(),
        meetings_before - 1
    );
    lore.run(&["check"]).success();
    lore.run(&["undo", &last]).code(2);
    // Ingesting it again brings it back as new.
    let again = lore.ingest_examples();
    assert!(again["meetings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["outcome"] == "created"));
}

/// Every entity page (history, provisional claims) and the whole review queue.
fn everything(lore: &Lore) -> Vec<String> {
    let mut pages: Vec<String> = lore
        .json(&["entities"])
        .as_array()
        .unwrap()
        .iter()
        .map(|row| history(lore, row["id"].as_str().unwrap()))
        .collect();
    pages.push(
        lore.run(&["suggestions", "--all", "--json"])
            .success()
            .stdout,
    );
    pages
}

#[test]
fn independent_merges_undone_in_any_order_restore_every_page_and_the_queue_l18() {
    let lore = Lore::new();
    lore.ingest_examples();
    let before = everything(&lore);
    // Beacon's conflicting status claims land in Atlas's slot (L7); Dana's claims join Alice's.
    let projects = lore.json(&["merge", "project:atlas", "project:beacon"]);
    lore.run(&["check"]).success();
    let people = lore.json(&["merge", ALICE, "dana@northwind.io"]);
    lore.run(&["check"]).success();
    // The two merges touched different rows, so either can be undone first.
    lore.json(&["undo", &revision(&projects)]);
    lore.run(&["check"]).success();
    lore.json(&["undo", &revision(&people)]);
    lore.run(&["check"]).success();
    assert_eq!(everything(&lore), before);
}

#[test]
fn split_by_evidence_moves_one_statement_to_a_new_entity() {
    let lore = Lore::new();
    lore.ingest_examples();
    let bob = lore.json(&["show", BOB, "--history"]);
    let claim = bob["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["evidence"].as_array().unwrap().len() == 1)
        .expect("a claim with one evidence row")
        .clone();
    let evidence = claim["evidence"][0]["id"].as_str().unwrap().to_string();
    let before = history(&lore, BOB);
    let split = lore.json(&["split", BOB, "--evidence", &evidence]);
    let new_id = split["other"].as_str().unwrap().to_string();
    let moved = lore.json(&["show", &new_id, "--history"]);
    assert_eq!(moved["claims"][0]["predicate"], claim["predicate"]);
    assert_eq!(
        moved["claims"][0]["evidence"][0]["quote"],
        claim["evidence"][0]["quote"]
    );
    assert!(!lore.json(&["show", BOB, "--history"])["claims"]
        .as_array()
        .unwrap()
        .iter()
        .any(
            |c| c["evidence"][0]["quote"] == claim["evidence"][0]["quote"]
                && c["predicate"] == claim["predicate"]
        ));
    lore.run(&["check"]).success();
    lore.run(&["split", BOB, "--evidence", "v_unknown"]).code(2);
    lore.json(&["undo", &revision(&split)]);
    assert_eq!(history(&lore, BOB), before);
    lore.run(&["show", &new_id]).code(2);
    lore.run(&["check"]).success();
}

#[test]
fn the_owner_is_never_added_as_a_participant() {
    let lore = Lore::new();
    let bundle = json!({
        "meeting": {"external_id": "one-on-one", "started_at": "2026-11-02T10:00:00Z"},
        "participants": [
            {"display_name": "Me", "email": "Me@Example.com"},
            {"display_name": "Kim Lee", "email": "kim@lee.io"}
        ],
        "segments": [{"id": "s1", "start_ms": 0, "end_ms": 1000, "text": "Hello."}],
        "claims": []
    });
    let file = lore.write_json("one-on-one.json", &bundle);
    lore.run_as("me@example.com", &["ingest", &file]).success();
    let rows = lore.json_as("me@example.com", &["participant", "list", "one-on-one"]);
    let me = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["display_name"] == "Me")
        .unwrap();
    assert_eq!(me["person"], Value::Null);
    let entities = lore.json_as("me@example.com", &["entities"]);
    assert_eq!(entities.as_array().unwrap().len(), 1, "{entities:#}");
    assert_eq!(entities[0]["name"], "Kim Lee");
    // Another owner ingesting the same bundle gets both people.
    lore.run_as("someone-else", &["ingest", &file]).success();
    assert_eq!(
        lore.json_as("someone-else", &["entities"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
