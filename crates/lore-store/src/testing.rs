//! Test support for backends that need a server: fresh PostgreSQL databases from `LORE_TEST_PG_URL`.

/// The server URL for PostgreSQL tests, or `None` (with a message saying the tests were skipped).
pub fn pg_test_url(test: &str) -> Option<String> {
    match std::env::var("LORE_TEST_PG_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            // Written to the stderr handle directly so that the test harness does not swallow it.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: set LORE_TEST_PG_URL (scripts/pg-test-cluster.sh start) to run the PostgreSQL half"
            );
            None
        }
    }
}

/// Creates an empty database on the server of `base_url` and returns its URL.
#[cfg(feature = "postgres")]
pub fn fresh_pg_database(base_url: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "lore_t_{}_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    );
    let mut client =
        postgres::Client::connect(base_url, postgres::NoTls).expect("connect to LORE_TEST_PG_URL");
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create test database");
    match base_url.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{name}"),
        None => format!("{base_url}/{name}"),
    }
}
