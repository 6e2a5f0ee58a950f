//! Kill test: `lore ingest` killed with SIGKILL at arbitrary points must leave a database that
//! passes `lore check` (integrity, foreign keys, stored state == rebuild) and holds only whole
//! meetings; finishing the ingest afterwards yields the same state as an uninterrupted run
//! (L2, L14).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{lore_command, Run};
use serde_json::{json, Value};

const MEETINGS: usize = 60;
const PEOPLE: usize = 8;
const PROJECTS: usize = 4;

/// What a fully ingested synthetic meeting must look like in `lore meetings --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Expected {
    participants: u64,
    segments: u64,
    notes: u64,
    evidence: u64,
}

fn person(i: usize) -> Value {
    let i = i % PEOPLE;
    json!({"kind": "person", "name": format!("Person {i}"), "email": format!("p{i}@synth.example")})
}

fn project(i: usize) -> Value {
    let i = i % PROJECTS;
    json!({"kind": "project", "name": format!("Project {i}"), "key": format!("proj-{i}")})
}

/// One synthetic meeting bundle (SPEC 5.1) and what it should store.
fn synthetic_bundle(k: usize) -> (Value, Expected) {
    let n_participants = 4 + k % 3;
    let n_segments = 180 + (k * 7) % 41;
    let n_notes = 1 + k % 3;
    let n_claims = 36 + k % 9;
    let (month, day) = (1 + k / 28, 1 + k % 28);
    let started_at = format!("2026-{month:02}-{day:02}T10:00:00Z");
    let ended_at = format!("2026-{month:02}-{day:02}T11:00:00Z");
    let members: Vec<usize> = (0..n_participants).map(|i| (k + i) % PEOPLE).collect();
    let participants: Vec<Value> = members
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let mut entry = person(p);
            let map = entry.as_object_mut().unwrap();
            map.remove("kind");
            let name = map.remove("name").unwrap();
            map.insert("display_name".into(), name);
            map.insert("speaker_label".into(), json!(format!("S{}", i + 1)));
            entry
        })
        .collect();
    let segments: Vec<Value> = (0..n_segments)
        .map(|j| {
            json!({"id": format!("s{j}"), "start_ms": j * 9000, "end_ms": j * 9000 + 8000,
                   "speaker": format!("S{}", j % n_participants + 1),
                   "attribution": "one_mapped_source",
                   "text": format!("Meeting {k}, point {j}: we went through item {j} of the plan in some detail, \
                                    agreed on next steps and noted the open questions for later.")})
        })
        .collect();
    let notes: Vec<Value> = (0..n_notes)
        .map(|n| {
            json!({"id": format!("n{n}"), "created_at": format!("2026-{month:02}-{day:02}T10:{:02}:00Z", 10 + n),
                   "text": format!("Note {n} of meeting {k}.")})
        })
        .collect();
    let claims: Vec<Value> = (0..n_claims)
        .map(|c| {
            let j = c * n_segments / n_claims;
            let speaker = members[j % n_participants];
            let who = person(speaker);
            let proj = project(k + c);
            let mut claim = match c % 6 {
                0 => json!({"subject": who, "predicate": "has_title",
                            "value": format!("Title {}", (k / 3 + speaker) % 4)}),
                1 => json!({"subject": who, "predicate": "located_in",
                            "value": format!("City {}", (k / 5 + speaker) % 3)}),
                2 => json!({"subject": who, "predicate": "contributes_to", "object": proj}),
                3 => json!({"subject": proj, "predicate": "has_status",
                            "value": format!("status {}", (k / 2) % 3)}),
                4 => json!({"subject": proj, "predicate": "has_deadline",
                            "value": format!("Milestone {}", k / 4),
                            "due_at": format!("2026-{:02}-15", (month + 1).min(12))}),
                _ => json!({"subject": who, "predicate": "has_skill",
                            "value": format!("skill {}", (k + c) % 7)}),
            };
            // every few meetings someone stops contributing to a project (L5 termination)
            if k % 4 == 3 && c % 12 == 2 {
                claim["ends"] = json!(true);
            }
            claim["authority"] = json!("first_party");
            claim["confidence"] = json!(0.9);
            claim["evidence"] =
                json!({"segment_ids": [format!("s{j}")], "quote": format!("point {j}")});
            claim
        })
        .collect();
    let bundle = json!({
        "meeting": {"external_id": format!("synth-{k:03}"), "title": format!("Synthetic meeting {k}"),
                    "started_at": started_at, "ended_at": ended_at, "platform": "zoom"},
        "participants": participants,
        "segments": segments,
        "notes": notes,
        "claims": claims,
    });
    let expected = Expected {
        participants: n_participants as u64,
        segments: n_segments as u64,
        notes: n_notes as u64,
        evidence: n_claims as u64,
    };
    (bundle, expected)
}

fn write_bundles(folder: &Path) -> BTreeMap<String, Expected> {
    std::fs::create_dir_all(folder).unwrap();
    let mut expected = BTreeMap::new();
    for k in 0..MEETINGS {
        let (bundle, exp) = synthetic_bundle(k);
        std::fs::write(
            folder.join(format!("m{k:03}.json")),
            serde_json::to_vec(&bundle).unwrap(),
        )
        .unwrap();
        expected.insert(format!("synth-{k:03}"), exp);
    }
    expected
}

fn lore(dir: &Path, db: &Path, args: &[&str]) -> Run {
    let mut command = lore_command(dir, db);
    command.args(args);
    Run::from_command(command)
}

/// `check` passes and every listed meeting is wholly present; returns how many are listed.
fn verify(dir: &Path, db: &Path, expected: &BTreeMap<String, Expected>, when: &str) -> usize {
    let check = lore(dir, db, &["check", "--json"]);
    assert_eq!(check.code, 0, "{when}: check fails: {}", check.describe());
    assert_eq!(check.json()["ok"], true, "{when}: {}", check.describe());

    let meetings = lore(dir, db, &["meetings", "--json"]).success().json();
    let rows = meetings.as_array().expect("meetings --json is an array");
    let mut seen = std::collections::BTreeSet::new();
    for row in rows {
        let external_id = row["external_id"].as_str().expect("external_id");
        assert!(
            seen.insert(external_id.to_string()),
            "{when}: {external_id} listed twice"
        );
        let want = expected
            .get(external_id)
            .unwrap_or_else(|| panic!("{when}: unexpected meeting {row}"));
        let got = Expected {
            participants: row["participants"].as_u64().expect("participants count"),
            segments: row["segments"].as_u64().expect("segments count"),
            notes: row["notes"].as_u64().expect("notes count"),
            evidence: row["evidence"].as_u64().expect("evidence count"),
        };
        assert_eq!(
            &got, want,
            "{when}: meeting {external_id} is not wholly present"
        );
    }
    rows.len()
}

/// What a reader sees of the knowledge: every entity and every entity's full history.
fn knowledge(dir: &Path, db: &Path) -> Vec<String> {
    let mut out = vec![lore(dir, db, &["entities", "--json"]).success().stdout];
    for i in 0..PEOPLE {
        let email = format!("p{i}@synth.example");
        out.push(
            lore(
                dir,
                db,
                &[
                    "show",
                    &email,
                    "--history",
                    "--include-provisional",
                    "--json",
                ],
            )
            .success()
            .stdout,
        );
    }
    for i in 0..PROJECTS {
        let key = format!("project:proj-{i}");
        out.push(
            lore(
                dir,
                db,
                &["show", &key, "--history", "--include-provisional", "--json"],
            )
            .success()
            .stdout,
        );
    }
    out
}

#[test]
fn killed_ingest_leaves_a_consistent_database_with_only_whole_meetings() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let folder = dir.join("bundles");
    let expected = write_bundles(&folder);
    let folder_arg = folder.to_str().unwrap();

    // Calibrate: an uninterrupted ingest on its own database.
    let reference = dir.join("reference.db");
    let started = Instant::now();
    lore(dir, &reference, &["ingest", folder_arg]).success();
    let full = started.elapsed();
    eprintln!("full ingest of {MEETINGS} meetings took {full:?}");
    assert_eq!(verify(dir, &reference, &expected, "reference"), MEETINGS);

    // Kill trials, each continuing on the same database. A run re-reads the meetings already
    // stored (unchanged, cheap) and carries on, so cumulative fractions of the full time land
    // the kills at spread-out points of the whole run.
    let db = dir.join("lore.db");
    let fractions = [0.04, 0.1, 0.18, 0.27, 0.37];
    let mut killed_mid_run = false;
    let mut previous = 0;
    for (trial, fraction) in fractions.iter().enumerate() {
        let delay = full.mul_f64(*fraction).max(Duration::from_millis(30));
        // Small batches, so that kills land between commits as well as inside them.
        let mut child = lore_command(dir, &db)
            .args(["ingest", folder_arg, "--batch", "3"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn lore ingest");
        std::thread::sleep(delay);
        let finished_by_itself = child.try_wait().expect("try_wait").is_some();
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let when = format!("after trial {trial} (kill at {delay:?}, status {status})");
        let count = verify(dir, &db, &expected, &when);
        eprintln!("{when}: {count} meetings stored");
        assert!(
            count >= previous,
            "{when}: meetings were lost ({previous} -> {count})"
        );
        previous = count;
        if !finished_by_itself && count > 0 && count < MEETINGS {
            killed_mid_run = true;
        }
    }
    assert!(
        killed_mid_run,
        "no trial killed the ingest mid-run (full run {full:?}); the kill test proved nothing"
    );

    // Finish the ingest: every meeting is present, the database checks out, and the result is
    // exactly what the uninterrupted run produced.
    let report = lore(dir, &db, &["ingest", folder_arg, "--json"])
        .success()
        .json();
    assert_eq!(report["meetings"].as_array().unwrap().len(), MEETINGS);
    assert_eq!(
        verify(dir, &db, &expected, "after the final ingest"),
        MEETINGS
    );
    assert_eq!(
        knowledge(dir, &db),
        knowledge(dir, &reference),
        "interrupted-then-finished ingest differs from an uninterrupted one (L14)"
    );
    // and once more: nothing changes (L2)
    let again = lore(dir, &db, &["ingest", folder_arg, "--json"])
        .success()
        .json();
    for meeting in again["meetings"].as_array().unwrap() {
        assert_eq!(meeting["outcome"], "unchanged", "{meeting}");
    }
}

#[test]
fn killed_while_creating_the_database_leaves_a_usable_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let folder = dir.join("bundles");
    std::fs::create_dir_all(&folder).unwrap();
    let mut expected = BTreeMap::new();
    for k in 0..4 {
        let (bundle, exp) = synthetic_bundle(k);
        std::fs::write(
            folder.join(format!("m{k:03}.json")),
            serde_json::to_vec(&bundle).unwrap(),
        )
        .unwrap();
        expected.insert(format!("synth-{k:03}"), exp);
    }
    let folder_arg = folder.to_str().unwrap();
    // Very early kills: while the process starts, creates the file and migrates the schema.
    for (trial, millis) in [0u64, 2, 4, 7, 11, 16].into_iter().enumerate() {
        let db = dir.join(format!("early-{trial}.db"));
        // Small batches, so that kills land between commits as well as inside them.
        let mut child = lore_command(dir, &db)
            .args(["ingest", folder_arg, "--batch", "3"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn lore ingest");
        std::thread::sleep(Duration::from_millis(millis));
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let when = format!("early kill at {millis} ms ({status})");
        verify(dir, &db, &expected, &when);
        lore(dir, &db, &["ingest", folder_arg]).success();
        assert_eq!(
            verify(dir, &db, &expected, &format!("{when}, then a full ingest")),
            4
        );
    }
}
