//! End-to-end tests of the read-side commands on the example meetings: `search`, `graph`,
//! `show --valid-at/--known-at`, `deadlines` and `tasks`, their JSON shapes, their bad-input exits,
//! erasure (L13) and owner isolation (L20).

mod common;

use common::{example_external_id, example_file, examples_dir, Lore, Run};
use serde_json::Value;

const ALICE: &str = "alice@northwind.io";
const BOB: &str = "bob@northwind.io";

fn array(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected an array: {value}"))
}

/// Runs `lore ARGS` with `LORE_NOW` set to `now`.
fn run_at(lore: &Lore, now: &str, args: &[&str]) -> Run {
    let mut command = lore.command();
    command.env("LORE_NOW", now).args(args);
    Run::from_command(command)
}

fn is_mm_ss(text: &str) -> bool {
    let parts: Vec<&str> = text.split(':').collect();
    parts.len() >= 2 && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
}

#[test]
fn search_finds_a_transcript_phrase_with_its_meeting_and_offset_and_loses_it_on_delete_l13() {
    let lore = Lore::new();
    lore.ingest_examples();
    let planning = example_external_id("03-");
    let hits = lore.json(&["search", "\"cutover runbook\"", "--kind", "segment"]);
    let from_planning: Vec<&Value> = array(&hits)
        .iter()
        .filter(|h| h["meeting"]["external_id"] == planning.as_str())
        .collect();
    assert_eq!(from_planning.len(), 2, "{hits:#}");
    for hit in array(&hits) {
        assert_eq!(hit["kind"], "segment");
        assert!(hit["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("[cutover runbook]"));
        assert!(is_mm_ss(hit["offset"].as_str().unwrap()), "{hit}");
        assert!(hit["meeting"]["title"].is_string());
    }
    // prefix queries, and entity names
    assert!(!array(&lore.json(&["search", "cutov*"])).is_empty());
    let people = lore.json(&["search", "okafor", "--kind", "entity"]);
    assert_eq!(array(&people).len(), 1, "{people:#}");
    assert_eq!(people[0]["entity"]["name"], "Bob Okafor");

    lore.run(&["delete", "meeting", &planning]).success();
    let hits = lore.json(&["search", "\"cutover runbook\"", "--kind", "segment"]);
    assert!(
        array(&hits)
            .iter()
            .all(|h| h["meeting"]["external_id"] != planning.as_str()),
        "erasure: a deleted meeting's text is gone from search: {hits:#}"
    );
    let text = lore.run(&["search", "\"cutover runbook\""]).success();
    assert!(!text.stdout.contains("Redis migration planning"));
}

#[test]
fn search_syntax_errors_exit_2_with_a_clear_message() {
    let lore = Lore::new();
    lore.ingest_examples();
    for query in ["\"unclosed", "", "OR atlas", "-atlas", "***", "a*b"] {
        let run = lore.run(&["search", query]).code(2);
        assert!(
            run.stderr.contains("invalid search query: "),
            "{}",
            run.describe()
        );
        assert!(!run.stderr.contains("fts5"), "{}", run.describe());
        assert!(run.stdout.is_empty());
    }
    // FTS5 operators in user text are plain words, never syntax
    lore.run(&["search", "NEAR(atlas beacon) scope:x ^atlas"])
        .success();
    let run = lore.run(&["search", "atlas", "--kind", "meeting"]).code(2);
    assert!(
        run.stderr.contains("unknown search kind"),
        "{}",
        run.describe()
    );
}

#[test]
fn graph_json_follows_the_contract_and_marks_truncation() {
    let lore = Lore::new();
    lore.ingest_examples();
    let graph = lore.json(&["graph", ALICE, "--hops", "2", "--limit", "8"]);
    let nodes = array(&graph["nodes"]);
    assert_eq!(nodes.len(), 8, "{graph:#}");
    assert_eq!(graph["truncated"], true);
    let ids: Vec<&str> = nodes.iter().map(|n| n["id"].as_str().unwrap()).collect();
    for node in nodes {
        assert!(
            node["name"].is_string() && node["kind"].is_string(),
            "{node}"
        );
    }
    assert_eq!(nodes[0]["name"], "Alice Chen");
    assert!(!array(&graph["edges"]).is_empty());
    for edge in array(&graph["edges"]) {
        assert!(
            edge["claim"].is_string() || edge["claim"].is_null(),
            "{edge}"
        );
        assert!(ids.contains(&edge["from"].as_str().unwrap()), "{edge}");
        assert!(ids.contains(&edge["to"].as_str().unwrap()), "{edge}");
        assert!(edge["predicate"].is_string());
        assert!(edge.get("status").is_some());
    }
    let whole = lore.json(&["graph", ALICE, "--hops", "2", "--limit", "500"]);
    assert_eq!(whole["truncated"], false, "{whole:#}");
    // people who only share a first name are not joined: the two Alices meet only through a meeting
    let names: Vec<&str> = array(&whole["nodes"])
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Atlas"));
    for (args, wanted) in [
        (vec!["graph", ALICE, "--hops", "3"], "--hops must be 1 or 2"),
        (
            vec!["graph", ALICE, "--limit", "0"],
            "--limit must be between",
        ),
        (vec!["graph", ALICE, "--valid-at", "soon"], "--valid-at"),
    ] {
        let run = lore.run(&args).code(2);
        assert!(run.stderr.contains(wanted), "{}", run.describe());
    }
}

#[test]
fn show_known_at_and_valid_at_read_both_time_dimensions() {
    let lore = Lore::new();
    for prefix in ["01-", "02-", "03-", "04-", "05-", "06-"] {
        let file = example_file(prefix);
        run_at(
            &lore,
            "2026-09-30T00:00:00Z",
            &["ingest", file.to_str().unwrap()],
        )
        .success();
    }
    let retro = example_file("07-");
    run_at(
        &lore,
        "2026-10-06T00:00:00Z",
        &["ingest", retro.to_str().unwrap()],
    )
    .success();
    let title = |view: &Value| view["entity"]["attributes"]["has_title"].clone();

    let believed = lore.json(&["show", ALICE, "--known-at", "2026-10-01"]);
    assert_eq!(title(&believed), "Senior Researcher", "{believed:#}");
    let titles: Vec<&Value> = array(&believed["claims"])
        .iter()
        .filter(|c| c["predicate"] == "has_title")
        .collect();
    assert_eq!(titles.len(), 1);
    assert_eq!(titles[0]["status"], "active");
    assert_eq!(titles[0]["valid_to"], Value::Null);

    let now = lore.json(&["show", ALICE, "--known-at", "2026-10-07"]);
    assert_eq!(title(&now), "Principal Researcher");
    let valid = lore.json(&["show", ALICE, "--valid-at", "2026-09-01"]);
    assert_eq!(title(&valid), "Senior Researcher");
    let superseded: Vec<&Value> = array(&valid["claims"])
        .iter()
        .filter(|c| c["predicate"] == "has_title")
        .collect();
    assert_eq!(superseded[0]["status"], "superseded");
    let both = lore.json(&[
        "show",
        ALICE,
        "--valid-at",
        "2026-10-20",
        "--known-at",
        "2026-10-01",
    ]);
    assert_eq!(title(&both), "Senior Researcher");
    let before = lore.json(&["show", ALICE, "--known-at", "2026-09-01"]);
    assert!(array(&before["claims"]).is_empty(), "{before:#}");

    // erasure wins over history: after deleting the retro, no earlier belief shows the promotion
    lore.run(&["delete", "meeting", &example_external_id("07-")])
        .success();
    let after = lore.json(&["show", ALICE, "--known-at", "2026-10-07"]);
    assert!(
        !after.to_string().contains("Principal Researcher"),
        "{after:#}"
    );
    for (args, wanted) in [
        (vec!["show", ALICE, "--known-at", "last week"], "--known-at"),
        (
            vec!["show", ALICE, "--valid-at", "2026-13-01"],
            "--valid-at",
        ),
        (
            vec!["show", ALICE, "--history", "--known-at", "2026-10-01"],
            "--history",
        ),
    ] {
        let run = lore.run(&args).code(2);
        assert!(run.stderr.contains(wanted), "{}", run.describe());
    }
}

#[test]
fn deadlines_and_tasks_views_filter_by_state_assignee_and_status() {
    let lore = Lore::new();
    lore.ingest_examples();
    let open = lore.json(&["deadlines"]);
    assert!(!array(&open).is_empty());
    for row in array(&open) {
        assert!(
            row["state"] == "upcoming" || row["state"] == "past_due",
            "{row}"
        );
        assert!(row["subject"]["name"].is_string() && row["due_at"].is_string());
    }
    let all = lore.json(&["deadlines", "--state", "all"]);
    let states: Vec<&str> = array(&all)
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    for wanted in ["completed", "rescheduled", "canceled", "upcoming"] {
        assert!(states.contains(&wanted), "{states:?}");
    }
    let past_due = lore.json(&["deadlines", "--state", "past_due"]);
    assert!(array(&past_due).iter().all(|r| r["state"] == "past_due"));
    lore.run(&["deadlines", "--state", "soon"]).code(2);

    let bobs = lore.json(&["tasks", "--assignee", BOB, "--status", "open"]);
    assert!(!array(&bobs).is_empty());
    for task in array(&bobs) {
        assert_eq!(task["assignee"]["name"], "Bob Okafor");
        assert_eq!(task["status"], "open");
    }
    let every = lore.json(&["tasks"]);
    assert!(array(&every).len() > array(&bobs).len());
    lore.run(&["tasks", "--status", "later"]).code(2);
    lore.run(&["tasks", "--assignee", "nobody@nowhere.io"])
        .code(2);
}

#[test]
fn another_owner_finds_nothing_through_the_read_side_l20() {
    let lore = Lore::new();
    let examples = examples_dir();
    lore.run_as("a", &["ingest", examples.to_str().unwrap()])
        .success();
    let alice = lore.json_as("a", &["show", ALICE]);
    let alice_id = alice["entity"]["id"].as_str().unwrap().to_string();
    assert!(!array(&lore.json_as("a", &["search", "cutover"])).is_empty());

    assert_eq!(
        lore.json_as("b", &["search", "cutover"]),
        Value::Array(vec![])
    );
    assert_eq!(
        lore.json_as("b", &["deadlines", "--state", "all"]),
        Value::Array(vec![])
    );
    assert_eq!(lore.json_as("b", &["tasks"]), Value::Array(vec![]));
    let unknown = lore.run_as("b", &["graph", "c_0000"]).code(2);
    for args in [
        vec!["graph", ALICE],
        vec!["graph", alice_id.as_str()],
        vec!["show", alice_id.as_str(), "--known-at", "2026-12-01"],
        vec!["show", ALICE, "--valid-at", "2026-09-01"],
        vec!["tasks", "--assignee", alice_id.as_str()],
    ] {
        let run = lore.run_as("b", &args).code(2);
        assert!(run.stdout.is_empty(), "{}", run.describe());
        assert!(run.stderr.starts_with("error: "), "{}", run.describe());
    }
    let by_id = lore.run_as("b", &["graph", &alice_id]).code(2);
    assert_eq!(
        by_id.stderr.replace(&alice_id, "X"),
        unknown.stderr.replace("c_0000", "X"),
        "an id of another owner behaves as one that does not exist"
    );
    // owner b's own data is searchable, owner a's results are unchanged
    lore.run_as("b", &["ingest", example_file("03-").to_str().unwrap()])
        .success();
    let b_hits = lore.json_as("b", &["search", "cutover", "--kind", "segment"]);
    let a_hits = lore.json_as("a", &["search", "cutover", "--kind", "segment"]);
    assert!(array(&b_hits).len() < array(&a_hits).len() || !array(&b_hits).is_empty());
    assert!(array(&b_hits)
        .iter()
        .all(|h| h["meeting"]["external_id"] == example_external_id("03-").as_str()));
}
