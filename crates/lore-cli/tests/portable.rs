//! End-to-end runs of `export markdown`, `import markdown`, `backup` and `restore` on the real binary.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{lore_command, Lore};
use serde_json::{json, Value};

const LOAD_MEETINGS: usize = 40;
const SEGMENTS: usize = 150;

/// A synthetic meeting with enough rows that ingesting a few dozen takes a while.
fn load_bundle(k: usize) -> Value {
    let people: Vec<Value> = (0..3)
        .map(|i| {
            json!({"display_name": format!("Person {i}"), "email": format!("p{i}@load.example"),
                        "speaker_label": format!("S{i}")})
        })
        .collect();
    let segments: Vec<Value> = (0..SEGMENTS)
        .map(|j| {
            json!({"id": format!("s{j}"), "start_ms": j * 4000, "end_ms": j * 4000 + 3500,
                        "speaker": format!("S{}", j % 3), "attribution": "one_mapped_source",
                        "text": format!("In meeting {k} segment {j} we practised skill {j}.")})
        })
        .collect();
    let claims: Vec<Value> = (0..20)
        .map(|j| json!({"subject": {"kind": "person", "name": format!("Person {}", j % 3),
                                    "email": format!("p{}@load.example", j % 3)},
                        "predicate": "has_skill", "value": format!("skill {j}"), "authority": "first_party",
                        "evidence": {"segment_ids": [format!("s{j}")]}}))
        .collect();
    json!({
        "meeting": {"external_id": format!("load-{k:03}"), "title": format!("Load {k}"),
                    "started_at": format!("{}-{:02}-{:02}T10:00:00Z", 2026 + k / 336, 1 + (k / 28) % 12, 1 + k % 28)},
        "participants": people, "segments": segments, "claims": claims,
    })
}

/// Every listed meeting is whole: all its segments are there.
fn assert_whole_meetings(lore: &Lore, db: &Path) -> usize {
    let meetings = lore.run_db(db, &["meetings", "--json"]).success().json();
    let rows = meetings.as_array().unwrap();
    for row in rows {
        assert_eq!(row["segments"], SEGMENTS, "partial meeting {row}");
        assert_eq!(row["evidence"], 20, "partial meeting {row}");
    }
    rows.len()
}

fn assert_check_passes(lore: &Lore, db: &Path) {
    let check = lore.run_db(db, &["check", "--json"]);
    assert_eq!(check.code, 0, "check fails: {}", check.describe());
    assert_eq!(check.json()["ok"], true);
}

#[test]
fn backup_during_a_concurrent_ingest_restores_to_a_consistent_database() {
    let lore = Lore::new();
    lore.run(&["init"]).success();
    // Back up over and over while another process ingests. How long an ingest takes against one
    // backup depends on the machine's load, so rounds of fresh meetings continue until some backup
    // has overlapped an ingest (bounded: every round adds meetings, so ingests only get longer).
    let mut backups = Vec::new();
    let mut during_ingest = 0;
    let mut meetings = 0;
    for round in 0..6 {
        if during_ingest > 0 {
            break;
        }
        let folder = lore.path().join(format!("load-{round}"));
        std::fs::create_dir_all(&folder).unwrap();
        let batch = LOAD_MEETINGS << round;
        for k in meetings..meetings + batch {
            std::fs::write(
                folder.join(format!("m{k:04}.json")),
                serde_json::to_vec(&load_bundle(k)).unwrap(),
            )
            .unwrap();
        }
        meetings += batch;
        let mut ingest = lore
            .command()
            .args(["ingest", folder.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn lore ingest");
        loop {
            let running_before = ingest.try_wait().unwrap().is_none();
            let file = lore.path().join(format!("backup-{}.db", backups.len()));
            let run = lore
                .run(&["backup", file.to_str().unwrap(), "--json"])
                .success();
            assert_eq!(run.json()["integrity"], "ok");
            let running_after = ingest.try_wait().unwrap().is_none();
            if running_before && running_after {
                during_ingest += 1;
            }
            backups.push(file);
            if !running_after {
                break;
            }
        }
        assert!(ingest.wait().unwrap().success());
    }
    let last = lore.path().join("backup-last.db");
    lore.run(&["backup", last.to_str().unwrap()]).success();
    backups.push(last);
    assert!(
        during_ingest > 0,
        "no backup overlapped the ingest; the test proved nothing"
    );

    // Every backup is consistent on its own, and restores into a database that checks out.
    for (n, backup) in backups.iter().enumerate() {
        assert_check_passes(&lore, backup);
        let restored = lore.path().join(format!("restored-{n}.db"));
        lore.run_db(&restored, &["restore", backup.to_str().unwrap()])
            .success();
        assert_check_passes(&lore, &restored);
        let count = assert_whole_meetings(&lore, &restored);
        eprintln!("backup {n}: {count} whole meetings");
    }
    // The last backup was taken after the ingest had finished: everything is there.
    let last = lore
        .path()
        .join(format!("restored-{}.db", backups.len() - 1));
    assert_eq!(assert_whole_meetings(&lore, &last), meetings);

    // Restoring over the live database works once nobody has it open.
    lore.run(&["restore", backups[0].to_str().unwrap()])
        .success();
    assert_check_passes(&lore, &lore.db);
}

#[test]
fn restore_refuses_a_database_in_use_and_a_bad_backup() {
    let lore = Lore::new();
    lore.ingest_examples();
    let backup = lore.path().join("backup.db");
    lore.run(&["backup", backup.to_str().unwrap()]).success();
    // Never overwrite an existing file.
    let again = lore.run(&["backup", backup.to_str().unwrap()]).code(2);
    assert!(
        again.stderr.contains("already exists"),
        "{}",
        again.describe()
    );

    let holder = rusqlite::Connection::open(&lore.db).unwrap();
    let _: i64 = holder
        .query_row("SELECT count(*) FROM meetings", [], |row| row.get(0))
        .unwrap();
    let refused = lore.run(&["restore", backup.to_str().unwrap()]).code(2);
    assert!(refused.stderr.contains("in use"), "{}", refused.describe());
    drop(holder);
    lore.run(&["restore", backup.to_str().unwrap()]).success();
    assert_check_passes(&lore, &lore.db);

    let garbage = lore.path().join("garbage.db");
    std::fs::write(&garbage, b"this is not a database").unwrap();
    let bad = lore.run(&["restore", garbage.to_str().unwrap()]).code(2);
    assert!(
        bad.stderr.contains("failed verification"),
        "{}",
        bad.describe()
    );
    let missing = lore.run(&["restore", "nope.db"]).code(2);
    assert!(missing.stderr.contains("nope.db"), "{}", missing.describe());
    assert_check_passes(&lore, &lore.db);
}

#[test]
fn export_and_import_markdown_round_trip_through_the_binary() {
    let lore = Lore::new();
    lore.ingest_examples();
    let wiki = lore.path().join("wiki-out");
    let report = lore.json(&["export", "markdown", wiki.to_str().unwrap()]);
    assert!(report["pages"].as_u64().unwrap() > 10, "{report}");
    assert!(wiki.join("wiki/index.md").is_file());
    assert!(wiki.join("wiki/entities/alice-chen.md").is_file());

    let fresh = lore.path().join("fresh.db");
    let mut command = lore_command(lore.path(), &fresh);
    command.args(["import", "markdown", wiki.to_str().unwrap(), "--json"]);
    let imported = common::Run::from_command(command).success().json();
    assert!(imported["revision"].is_string(), "{imported}");
    assert_eq!(imported["dropped"], json!([]));
    for row in lore.json(&["entities"]).as_array().unwrap() {
        let id = row["id"].as_str().unwrap();
        let original = lore
            .run(&["show", id, "--history", "--json"])
            .success()
            .stdout;
        let copy = lore
            .run_db(&fresh, &["show", id, "--history", "--json"])
            .success()
            .stdout;
        assert_eq!(original, copy, "show --history differs for {id}");
    }
    // A replay changes nothing and says so.
    let replay = lore.run_db(&fresh, &["import", "markdown", wiki.to_str().unwrap()]);
    assert!(replay.success().stdout.contains("nothing changed"));

    // Another owner exports nothing of this owner's knowledge.
    let other = lore.path().join("other-out");
    let empty = lore.json_as("mallory", &["export", "markdown", other.to_str().unwrap()]);
    assert_eq!(
        (empty["pages"].clone(), empty["claims"].clone()),
        (json!(1), json!(0))
    );

    let missing = lore.run(&["import", "markdown", "no-such-folder"]).code(2);
    assert!(
        missing.stderr.contains("no-such-folder"),
        "{}",
        missing.describe()
    );
}
