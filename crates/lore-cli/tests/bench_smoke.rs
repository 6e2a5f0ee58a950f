//! `lore bench --quick` as CI's smoke test: the benchmark runs end to end through the ingest path and
//! reports every operation the JSON contract names. It never fails on timing, only when it breaks.

use std::process::Command;

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
    for op in [
        "projection",
        "projection_cold",
        "hop1",
        "hop2",
        "hop2_bounded",
        "fts_word",
        "fts_phrase",
        "cascade_delete",
        "cascade_delete_rollback",
        "known_at",
        "valid_at",
        "graph_index_rebuild",
    ] {
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
    // The reads were measured after the prewarm a server runs at start, and the report says so.
    assert!(report["prewarm_ms"].as_f64().is_some(), "no prewarm_ms");
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
