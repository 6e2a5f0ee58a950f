//! `lore bench --quick` as CI's smoke test: the benchmark runs end to end through the ingest path and
//! reports every operation the JSON contract names. It never fails on timing, only when it breaks.

use std::process::Command;

/// The reads the JSON contract names (a reads-only run measures these alone).
const READ_OPS: &[&str] = &[
    "projection",
    "projection_cold",
    "hop1",
    "hop2",
    "hop2_bounded",
    "fts_word",
    "fts_phrase",
    "known_at",
    "valid_at",
];

/// The writes: the cascade delete and the graph index rebuild after a write.
const WRITE_OPS: &[&str] = &[
    "cascade_delete",
    "cascade_delete_rollback",
    "graph_after_write",
    "graph_index_rebuild",
];

#[test]
fn bench_quick_reports_every_operation() {
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["bench", "--quick", "--json"])
        .output()
        .expect("run lore bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "lore bench failed: {stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("bench prints JSON");
    assert_eq!(report["scale"], 1);
    assert_eq!(report["backend"], "sqlite");
    for op in READ_OPS.iter().chain(WRITE_OPS) {
        let stats = &report["ops"][op];
        assert!(
            stats["n"].as_u64().unwrap_or(0) > 0,
            "{op} was not measured: {stats}"
        );
        for field in ["p50_us", "p95_us", "p99_us"] {
            assert!(stats[field].as_f64().is_some(), "{op}.{field} missing");
        }
    }
    assert!(report["ingest"]["claims_per_s"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(report["ingest"]["meetings_per_s"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(report["dataset"]["claims"].as_u64().unwrap_or(0) > 0);
    assert!(report["db_bytes_per_1000_claims"].as_u64().unwrap_or(0) > 0);
    // The writes' statements and knowledge rows, measures of their work that do not depend on the
    // machine: the log store runs a few statements (the meeting's transcript, its revision, its log
    // entry) and writes its knowledge rows to its log.
    for (what, statements, operations) in [
        (
            "per meeting",
            &report["ingest"]["statements_per_meeting"],
            &report["ingest"]["knowledge_ops_per_meeting"],
        ),
        (
            "per delete",
            &report["statements_per_delete"],
            &report["knowledge_ops_per_delete"],
        ),
    ] {
        assert!(
            statements.as_f64().unwrap_or(0.0) > 1.0,
            "statements {what}: {statements}"
        );
        assert!(
            operations.as_f64().unwrap_or(0.0) > 10.0,
            "knowledge rows {what}: {operations}"
        );
    }
    // The reads were measured after the prewarm a server runs at start, and the report says so.
    assert!(report["prewarm_ms"].as_f64().is_some(), "no prewarm_ms");
    assert!(
        report["indexes_ready_ms"].as_f64().is_some(),
        "no indexes_ready_ms"
    );
    // ...and once the full-text index's background merge had caught up with the ingest.
    let merged = report["search_merged_ms"].as_f64().unwrap_or(-1.0);
    assert!(
        merged >= report["indexes_ready_ms"].as_f64().unwrap_or(0.0),
        "search_merged_ms {merged}"
    );
    // On SQLite the prewarm leaves the entity pages in memory (every entity of the run's owner).
    let entities = report["dataset"]["entities"].as_u64().unwrap_or(0);
    assert!(entities > 0);
    assert_eq!(report["page_index_entities"].as_u64(), Some(entities));
    // Off a terminal, progress is one line per step on stderr (stdout stays the JSON alone).
    for step in [
        "ingesting",
        "measuring the projection",
        "prewarming",
        "measuring deletions",
    ] {
        assert!(stderr.contains(step), "no '{step}' progress line: {stderr}");
    }
}

/// `--keep` leaves the database behind, and `--reads-only` measures the reads on it again without
/// ingesting or writing: the way to repeat a large scale's reads without its hour of ingest.
#[test]
fn bench_keep_then_reads_only_measures_the_reads_again() {
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["bench", "--quick", "--keep", "--json"])
        .output()
        .expect("run lore bench");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "lore bench --keep failed: {stderr}"
    );
    let path = stderr
        .split("kept the database at ")
        .nth(1)
        .and_then(|rest| rest.split(" (measure").next())
        .unwrap_or_else(|| panic!("no kept path in: {stderr}"))
        .to_string();
    let cleanup = Cleanup(path.clone());
    let before = std::fs::metadata(&path).expect("the kept database exists");

    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["bench", "--reads-only", &path, "--samples", "20", "--json"])
        .output()
        .expect("run lore bench --reads-only");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "lore bench --reads-only failed: {stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("bench prints JSON");
    assert_eq!(
        report["scale"], 1,
        "the scale is inferred from the meetings"
    );
    for op in READ_OPS {
        assert!(
            report["ops"][op]["n"].as_u64().unwrap_or(0) > 0,
            "{op} was not measured: {report}"
        );
    }
    for write in [
        "cascade_delete",
        "cascade_delete_rollback",
        "graph_after_write",
        "graph_index_rebuild",
    ] {
        assert!(report["ops"][write].is_null(), "{write} was measured");
    }
    assert!(report["statements_per_delete"].is_null(), "{report}");
    assert!(
        report["ingest"].is_null(),
        "a reads-only run reports no ingest"
    );
    assert!(!stderr.contains("ingesting"), "{stderr}");
    // Nothing was written: the same meetings are there for a second run.
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(before.len(), after.len());

    // `--runs 2`: each figure is the median of the two runs' (their mean), and both runs are listed.
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args([
            "bench",
            "--reads-only",
            &path,
            "--samples",
            "10",
            "--runs",
            "2",
        ])
        .args(["--json"])
        .output()
        .expect("run lore bench --runs 2");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "lore bench --runs 2 failed: {stderr}"
    );
    assert!(stderr.contains("run 2 of 2"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("bench prints JSON");
    assert_eq!(report["runs"], 2);
    let runs = report["per_run"]
        .as_array()
        .expect("per_run lists the runs");
    assert_eq!(runs.len(), 2);
    for op in READ_OPS {
        for field in ["p50_us", "p95_us", "p99_us"] {
            let of = |run: &serde_json::Value| run["ops"][op][field].as_f64().unwrap();
            let median = report["ops"][op][field].as_f64().unwrap();
            assert!(
                (median - (of(&runs[0]) + of(&runs[1])) / 2.0).abs() < 1e-6,
                "{op}.{field}: {median} is not the median of {} and {}",
                of(&runs[0]),
                of(&runs[1])
            );
        }
    }
    // A quick dataset is not the issue's: no targets are checked against it.
    assert!(report["target_checks"].is_null(), "{report}");

    // A missing file is a clear error, not a fresh database.
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["bench", "--reads-only", &format!("{path}.missing")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no database at"));
    drop(cleanup);
}

/// Removes a kept benchmark database and its side files.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0));
        }
        let _ = std::fs::remove_dir_all(format!("{}.blobs", self.0));
    }
}

/// A run stopped by Ctrl-C removes its database (about 170 MB at scale 1) instead of leaving it in
/// the temp folder, and exits with 130.
#[cfg(unix)]
#[test]
fn bench_stopped_by_ctrl_c_removes_its_database() {
    let temp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["bench", "--quick", "--json"])
        .env("TMPDIR", temp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lore bench");
    let bench_files = || {
        std::fs::read_dir(temp.path())
            .unwrap()
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("lore-bench-"))
            .collect::<Vec<_>>()
    };
    let started = std::time::Instant::now();
    while bench_files().is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "lore bench ended before creating its database"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "no database after a minute"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Let the run get into its ingest, so there is something to remove.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "stderr: {stderr}");
    assert!(stderr.contains("removed its database"), "stderr: {stderr}");
    assert_eq!(bench_files(), Vec::<String>::new(), "stderr: {stderr}");
}
