//! The real binary against a real PostgreSQL server (`LORE_TEST_PG_URL`): `--db postgres://...` for
//! every command, and `lore migrate` from SQLite verified entity by entity.

use std::process::Command;

use lore_store::testing::{fresh_pg_database, pg_test_url};
use serde_json::Value;

fn lore(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(args)
        .current_dir(dir)
        .env("LORE_NOW", "2026-11-29T12:00:00Z")
        .env("LORE_BLOB_DIR", dir.join("blobs"))
        .output()
        .expect("run lore");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(
        !stderr.contains("panicked"),
        "lore {args:?} panicked: {stderr}"
    );
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).to_string(),
        stderr,
    )
}

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/meetings").to_string()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn every_command_works_on_postgres_and_owners_stay_apart() {
    let Some(base) = pg_test_url("every_command_works_on_postgres_and_owners_stay_apart") else {
        return;
    };
    let url = fresh_pg_database(&base);
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = lore(
        &["--db", &url, "--owner", "a", "ingest", &examples()],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, out, _) = lore(
        &[
            "--db",
            &url,
            "--owner",
            "a",
            "show",
            "alice@northwind.io",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0);
    assert_eq!(
        json(&out)["entity"]["attributes"]["has_title"],
        "Principal Researcher"
    );
    let (code, out, _) = lore(
        &["--db", &url, "--owner", "b", "entities", "--json"],
        dir.path(),
    );
    assert_eq!(
        (code, json(&out)),
        (0, Value::Array(Vec::new())),
        "owner b sees nothing (L20)"
    );
    let (code, _, _) = lore(
        &["--db", &url, "--owner", "b", "show", "alice@northwind.io"],
        dir.path(),
    );
    assert_eq!(code, 2, "another owner's entity is not found");
    let (code, _, stderr) = lore(
        &[
            "--db",
            &url,
            "--owner",
            "a",
            "delete",
            "meeting",
            "northwind-weekly-2026-10-05",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let (_, out, _) = lore(
        &[
            "--db",
            &url,
            "--owner",
            "a",
            "show",
            "alice@northwind.io",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(
        json(&out)["entity"]["attributes"]["has_title"],
        "Senior Researcher",
        "L13 on postgres"
    );
    let (code, out, _) = lore(&["--db", &url, "check", "--json"], dir.path());
    assert_eq!((code, json(&out)["ok"].clone()), (0, Value::Bool(true)));
}

#[test]
fn migrate_copies_sqlite_to_postgres_and_every_history_matches() {
    let Some(base) = pg_test_url("migrate_copies_sqlite_to_postgres_and_every_history_matches")
    else {
        return;
    };
    let url = fresh_pg_database(&base);
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("lore.db");
    let sqlite = sqlite.to_str().unwrap();
    assert_eq!(
        lore(&["--db", sqlite, "ingest", &examples()], dir.path()).0,
        0
    );
    assert_eq!(
        lore(
            &[
                "--db",
                sqlite,
                "claim",
                "add",
                "priya@northwind.io",
                "has_skill",
                "roadmaps"
            ],
            dir.path()
        )
        .0,
        0
    );
    let (code, out, stderr) = lore(
        &[
            "migrate",
            "--from",
            sqlite,
            "--to",
            &url,
            "--all-owners",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&out)[0]["mismatches"], Value::Array(Vec::new()));

    // Compare every entity's full history through the CLI on both backends.
    let (_, out, _) = lore(&["--db", sqlite, "entities", "--json"], dir.path());
    let entities = json(&out);
    assert!(entities.as_array().unwrap().len() > 10);
    for entity in entities.as_array().unwrap() {
        let id = entity["id"].as_str().unwrap();
        let show = |db: &str| {
            lore(
                &[
                    "--db",
                    db,
                    "show",
                    id,
                    "--history",
                    "--include-provisional",
                    "--json",
                ],
                dir.path(),
            )
            .1
        };
        assert_eq!(
            show(sqlite),
            show(&url),
            "history of {id} differs after migrate"
        );
    }
    let (code, _, stderr) = lore(&["migrate", "--from", sqlite, "--to", &url], dir.path());
    assert_eq!(
        code, 2,
        "a second migrate into a non-empty target is refused: {stderr}"
    );
}

/// `lore bench --backend postgres` runs end to end into an empty database (CI's smoke test of the
/// PostgreSQL benchmark: it never fails on timing), and `--reads-only URL` measures the reads again
/// on the database it filled, writing nothing.
#[test]
fn bench_on_postgres_then_reads_only_on_the_database_it_filled() {
    let Some(base) = pg_test_url("bench_on_postgres_then_reads_only_on_the_database_it_filled")
    else {
        return;
    };
    let url = fresh_pg_database(&base);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--db",
        &url,
        "bench",
        "--backend",
        "postgres",
        "--quick",
        "--samples",
        "5",
        "--json",
    ];
    let (code, out, stderr) = lore(&args, dir.path());
    assert_eq!(code, 0, "{stderr}");
    let report = json(&out);
    assert_eq!(report["backend"], "postgres");
    for op in [
        "projection",
        "hop1",
        "hop2_bounded",
        "fts_word",
        "fts_phrase",
        "known_at",
        "cascade_delete",
        "cascade_delete_rollback",
    ] {
        assert!(
            report["ops"][op]["n"].as_u64().unwrap_or(0) > 0,
            "{op} was not measured: {report}"
        );
    }
    assert!(report["ingest"]["claims_per_s"].as_f64().unwrap_or(0.0) > 0.0);
    let meetings = |dir: &std::path::Path| {
        let (code, out, stderr) = lore(
            &["--db", &url, "--owner", "bench", "meetings", "--json"],
            dir,
        );
        assert_eq!(code, 0, "{stderr}");
        json(&out).as_array().map(Vec::len).unwrap_or(0)
    };
    let before = meetings(dir.path());
    assert!(before > 100, "{before} meetings");

    let (code, out, stderr) = lore(
        &["bench", "--reads-only", &url, "--samples", "5", "--json"],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let report = json(&out);
    assert_eq!(report["backend"], "postgres");
    assert_eq!(
        report["scale"], 1,
        "the scale is inferred from the meetings"
    );
    assert!(report["ops"]["fts_phrase"]["n"].as_u64().unwrap_or(0) > 0);
    assert!(report["ops"]["cascade_delete"].is_null(), "{report}");
    assert!(report["ingest"].is_null(), "{report}");
    assert!(!stderr.contains("ingesting"), "{stderr}");
    assert_eq!(meetings(dir.path()), before, "a reads-only run wrote");
}
