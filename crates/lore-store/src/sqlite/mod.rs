//! The SQLite backend: one file in WAL mode, `BEGIN IMMEDIATE` write transactions, foreign keys on.

mod graph_scan;
pub(crate) mod log_store;
pub(crate) mod page_index;
mod planner;
mod ranking;
mod read_cache;
mod read_side;
mod rows;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lore_core::model::*;
use lore_core::Ts;
use rusqlite::{params, Connection, OptionalExtension, Params, Row, TransactionBehavior};

use crate::owner_builds::OwnerBuilds;
use crate::{ApiToken, Store, StoreError, StoreResult, Tx, TxWork};
use rows::*;

pub use read_side::{fts_body_expression, hot_queries, PREWARM, SEARCH_TOKENIZER};

/// Versioned migrations; `PRAGMA user_version` records how many have run.
const MIGRATIONS: &[&str] = &[
    include_str!("schema_v1.sql"),
    include_str!("schema_v2.sql"),
    include_str!("schema_v3.sql"),
    include_str!("schema_v4.sql"),
    include_str!("schema_v5.sql"),
    include_str!("schema_v6.sql"),
    include_str!("schema_v7.sql"),
    include_str!("schema_v8.sql"),
    include_str!("schema_v9.sql"),
    include_str!("schema_v10.sql"),
    include_str!("schema_v11.sql"),
    include_str!("schema_v12.sql"),
    include_str!("schema_v13.sql"),
    include_str!("schema_v14.sql"),
];

/// Revisions from which the one-time upgrades that rewrite every revision say what they are doing.
const LARGE_REVISION_LOG: i64 = 10_000;

/// The schema version that added `revision_meetings`: opening an older database fills it in for
/// the revisions already written (`index_revision_meetings`).
const REVISION_MEETINGS_VERSION: usize = 3;

/// The schema version from which revisions keep entity rows without their derived fields: opening an
/// older database strips them from the revisions already written (`strip_derived_entity_fields`).
const ENTITY_SNAPSHOTS_VERSION: usize = 6;

pub struct SqliteStore {
    connection: Mutex<Connection>,
    /// A second, read-only connection for `read` (file databases only): reads need no toggling of
    /// `query_only` and do not wait for the writer (WAL readers see the last committed snapshot).
    reader: Option<Mutex<(Connection, read_cache::ReadCache)>>,
    /// Background WAL checkpoints (file databases only).
    checkpointer: Option<Checkpointer>,
    /// The owners' in-memory graph indexes and their build thread (file databases only).
    graphs: Option<crate::GraphBuilds>,
    /// The owners' entity pages and their build thread (file databases only; `page_index.rs`).
    pages: Option<OwnerBuilds<page_index::PageIndex>>,
    blob_dir: PathBuf,
    /// Statements run by write transactions (`Store::write_statements`).
    write_statements: std::sync::atomic::AtomicU64,
    /// The writer's commits that left deletions from the full-text index deferred.
    deferred: Arc<DeferredDeletions>,
}

/// Copies the write-ahead log into the database file on a thread of its own, so that a commit never
/// pays for a checkpoint: the writer wakes the thread after each commit, and once the log has grown
/// by `CHECKPOINT_GROWTH_BYTES` since the thread last copied it, the thread runs a PASSIVE checkpoint
/// on its own connection (it never blocks the writer or readers). The writer keeps SQLite's
/// automatic checkpoint only as a backstop.
/// Checkpoints are crash-safe wherever they stop.
///
/// Once writes have paused for `IDLE_BEFORE_TRUNCATE` this thread copies what is left of the log,
/// so the next write starts it over, and cuts the file back when it is larger than
/// `KEPT_LOG_BYTES`.
/// While writes follow each other closely the log cannot start over (each write transaction begins
/// before the copy of the last one has finished), so it grows up to the backstop; cutting a file of
/// that size back in the writer (SQLite's `journal_size_limit`) took 25 ms of a commit (BENCHMARKS.md,
/// twelfth round), so the writer's limit is the backstop's size and it rarely cuts anything.
struct Checkpointer {
    wal: PathBuf,
    wake: std::sync::mpsc::SyncSender<()>,
    thread: std::thread::JoinHandle<()>,
    merges: Arc<MergeProgress>,
}

/// How far the background merge of the full-text index has come: commits counted by the writer,
/// and the count the thread had seen when it last found nothing left to merge.
#[derive(Default)]
struct MergeProgress {
    commits: std::sync::atomic::AtomicU64,
    merged_after: Mutex<u64>,
    settled: std::sync::Condvar,
}

impl MergeProgress {
    fn settled_after(&self, commits: u64) {
        if let Ok(mut merged) = self.merged_after.lock() {
            *merged = (*merged).max(commits);
            self.settled.notify_all();
        }
    }

    /// Waits until the index holds no more merge work than it did after every commit made so far,
    /// or `limit` has passed (a reader of another process can keep the merge busy).
    fn wait_settled(&self, limit: std::time::Duration) {
        let commits = self.commits.load(std::sync::atomic::Ordering::SeqCst);
        let Ok(merged) = self.merged_after.lock() else {
            return;
        };
        let _ = self
            .settled
            .wait_timeout_while(merged, limit, |merged| *merged < commits);
    }
}

/// How long every connection waits for another's lock before it reports the database busy.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// The log size above which a dropped store cuts it.
const CHECKPOINT_BYTES: u64 = 4 << 20;
/// The log size the thread cuts the file back to once writes pause (`start_log_over`), instead of
/// nothing: the next writes start the log over and overwrite blocks the file already has, where a
/// log cut to nothing makes every commit extend the file, and its sync then also writes the file
/// system's record of the new size (BENCHMARKS.md, thirty-first round).
const KEPT_LOG_BYTES: u64 = 128 << 20;
/// While writes follow each other, the thread copies the log into the file only once it has grown
/// by this much since the thread last did: a page several writes change is copied once, not after
/// each of them, and the copy stays off the second core the writes use meanwhile. Copying after
/// every commit above `CHECKPOINT_BYTES` cost ingest 7 to 13 % and the committed delete 4 to 15 %
/// at the median in alternating runs (BENCHMARKS.md, twenty-ninth round). A log that starts over
/// does not grow until it passes its old size, so at most that size plus this much waits for a
/// copy; the writer's backstop bounds it.
const CHECKPOINT_GROWTH_BYTES: u64 = 64 << 20;
/// The writer's own checkpoint, at commit, once the log holds this many pages (256 MiB). During a
/// bulk ingest the log grows by 10 to 15 MB per commit of 32 meetings and cannot start over (above),
/// so at 16,384 pages (64 MiB) every fifth commit also copied the log into the file itself: three
/// alternating runs of each gave 3,099 claims/s at 16,384 pages and 3,522 at 65,536 (BENCHMARKS.md,
/// nineteenth round). Once writes pause the log is cut back to `KEPT_LOG_BYTES`.
const BACKSTOP_CHECKPOINT_PAGES: i64 = 65_536;
/// The log size the writer cuts back to after a transaction that took it past the backstop.
const WRITER_LOG_LIMIT_BYTES: i64 = BACKSTOP_CHECKPOINT_PAGES * 4096;
const IDLE_BEFORE_TRUNCATE: std::time::Duration = std::time::Duration::from_secs(2);
/// How long the checkpointer's cut may wait for readers; meanwhile it holds writers back.
const TRUNCATE_WAIT: std::time::Duration = std::time::Duration::from_millis(50);
/// How long a dropped store's cut may wait for readers (of other processes: its own are done).
const TRUNCATE_WAIT_AT_DROP: std::time::Duration = std::time::Duration::from_millis(500);

impl Checkpointer {
    fn start(path: &Path, deferred: Arc<DeferredDeletions>) -> StoreResult<Checkpointer> {
        let connection = Connection::open(path).map_err(backend)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        // A write of this connection that starts the log over cuts the file to this size.
        connection
            .pragma_update(None, "journal_size_limit", KEPT_LOG_BYTES as i64)
            .map_err(backend)?;
        let (wake, wakes) = std::sync::mpsc::sync_channel::<()>(1);
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        let log = wal.clone();
        let merges = Arc::new(MergeProgress::default());
        let progress = merges.clone();
        let thread = std::thread::Builder::new()
            .name("lore-checkpoint".into())
            .spawn(move || {
                use std::sync::mpsc::RecvTimeoutError;
                // What is left to do once writes pause: merge the full-text index, cut the log.
                let (mut pending_merge, mut pending_cut) = (false, false);
                // The log's size when this thread last copied it into the file.
                let mut copied_size: u64 = 0;
                loop {
                    let woken = match (pending_merge, pending_cut) {
                        (true, _) => wakes.recv_timeout(IDLE_BEFORE_MERGE),
                        (false, true) => wakes.recv_timeout(IDLE_BEFORE_TRUNCATE),
                        (false, false) => wakes.recv().map_err(|_| RecvTimeoutError::Disconnected),
                    };
                    match woken {
                        Ok(()) => {
                            pending_merge = true;
                            let size = log_bytes(&log);
                            copied_size = copied_size.min(size);
                            if size >= copied_size + CHECKPOINT_GROWTH_BYTES {
                                // A checkpoint that cannot run now (busy) is retried at the next
                                // wake-up; the writer's backstop bounds the log meanwhile.
                                let busy = connection.query_row(
                                    "PRAGMA wal_checkpoint(PASSIVE)",
                                    [],
                                    |row| row.get::<_, i64>(0),
                                );
                                if matches!(busy, Ok(0)) {
                                    copied_size = size;
                                }
                                pending_cut = true;
                            }
                        }
                        Err(RecvTimeoutError::Timeout) if pending_merge => {
                            // Commits counted before the merge starts are the ones it covers.
                            let commits =
                                progress.commits.load(std::sync::atomic::Ordering::SeqCst);
                            pending_merge = merge_search_index(&connection, &wakes, &deferred);
                            if !pending_merge {
                                progress.settled_after(commits);
                            }
                            pending_cut |= log_bytes(&log) > 0;
                        }
                        Err(RecvTimeoutError::Timeout) => {
                            pending_cut = false;
                            let size = log_bytes(&log);
                            if size > 0 {
                                start_log_over(&connection, size);
                            }
                        }
                        // The store (the only sender) was dropped.
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .map_err(|error| StoreError::Backend(format!("cannot start checkpointer: {error}")))?;
        Ok(Checkpointer {
            wal,
            wake,
            thread,
            merges,
        })
    }

    /// Ends the thread, once any checkpoint it is running has finished.
    fn stop(self) {
        drop(self.wake);
        let _ = self.thread.join();
    }

    /// Called after each commit: the thread merges the full-text index once writes pause, and
    /// checkpoints when the log has grown past the threshold.
    fn committed(&self) {
        self.merges
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // A full channel means the thread is already due to look.
        let _ = self.wake.try_send(());
    }
}

/// Leaf pages of the full-text index one background merge step writes (each its own transaction,
/// a few milliseconds), and how many segments on one level make it merge them (`usermerge`).
const MERGE_STEP_PAGES: i64 = 64;
/// How long writes must pause before the background thread merges the full-text index.
const IDLE_BEFORE_MERGE: std::time::Duration = std::time::Duration::from_millis(200);
/// The share of a level's entries, in percent, that deletions must have marked before the
/// background merge rewrites the level without them (FTS5's `deletemerge`, its default).
const DELETE_MERGE_PERCENT: i64 = 10;

/// Applies the deferred deletions (schema_v14.sql) and merges the full-text index in small steps
/// while no write commits (schema_v10.sql: writers merge only when eight segments pile up on a
/// level; here two are enough), and rewrites levels that deletions have marked enough
/// (schema_v11.sql: writers never do; `deletemerge` is on only inside this thread's steps, and off
/// again when each commits). Returns whether work is left, because a write came (`woken` holds its
/// notice, which the caller then reads) or the database was busy. Each step is a write transaction
/// of its own, so a writer waits for one step at most.
fn merge_search_index(
    connection: &Connection,
    woken: &std::sync::mpsc::Receiver<()>,
    deferred: &DeferredDeletions,
) -> bool {
    if connection.busy_timeout(std::time::Duration::ZERO).is_err() {
        return true;
    }
    // Deferred deletions first, so that the merges below drop their entries.
    let apply = || -> StoreResult<usize> {
        connection
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(backend)?;
        let applied = apply_deferred_deletions(connection, Some(DEFERRED_STEP_DOCUMENTS))?;
        let left = any_deferred(connection)?;
        connection.execute_batch("COMMIT").map_err(backend)?;
        if !left {
            deferred.committing(false);
        }
        Ok(applied)
    };
    loop {
        if !matches!(woken.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty)) {
            let _ = connection.busy_timeout(BUSY_TIMEOUT);
            return true;
        }
        match apply() {
            Ok(0) => break,
            Ok(_) => continue,
            Err(_) => {
                if !connection.is_autocommit() {
                    let _ = connection.execute_batch("ROLLBACK");
                }
                let _ = connection.busy_timeout(BUSY_TIMEOUT);
                return true;
            }
        }
    }
    let step = || -> rusqlite::Result<u64> {
        connection.execute_batch(&format!(
            "BEGIN IMMEDIATE; \
             INSERT INTO search_fts (search_fts, rank) VALUES ('deletemerge', {DELETE_MERGE_PERCENT});"
        ))?;
        let before = connection.total_changes();
        connection.execute_batch(&format!(
            "INSERT INTO search_fts (search_fts, rank) VALUES ('merge', {MERGE_STEP_PAGES});"
        ))?;
        let changes = connection.total_changes() - before;
        connection.execute_batch(
            "INSERT INTO search_fts (search_fts, rank) VALUES ('deletemerge', 0); COMMIT;",
        )?;
        Ok(changes)
    };
    let more = loop {
        if !matches!(woken.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty)) {
            // A write came (or the store is gone): merge again when writes pause.
            break true;
        }
        match step() {
            // Fewer than two changes: no level had enough segments or deletions, nothing was merged.
            Ok(changes) if changes < 2 => break false,
            Ok(_) => continue,
            Err(_) => {
                if !connection.is_autocommit() {
                    let _ = connection.execute_batch("ROLLBACK");
                }
                break true;
            }
        }
    };
    let _ = connection.busy_timeout(BUSY_TIMEOUT);
    more
}

impl Drop for SqliteStore {
    /// A store dropped before writes have paused long enough for the checkpointer (a one-shot
    /// command, the benchmark) cuts a large log itself, so the file does not keep up to the
    /// backstop's size on disk, nor make the next open read it back.
    fn drop(&mut self) {
        let Some(checkpointer) = self.checkpointer.take() else {
            return;
        };
        // The thread's own checkpoint would make this one give up at once.
        let wal = checkpointer.wal.clone();
        checkpointer.stop();
        // Deleted documents do not stay in the index past the store (a one-shot `lore delete`).
        if let Ok(connection) = self.connection.lock() {
            let applied = (|| {
                if !any_deferred(&connection)? {
                    return Ok(());
                }
                let transaction = connection.unchecked_transaction().map_err(backend)?;
                apply_deferred_deletions(&transaction, None)?;
                transaction.commit().map_err(backend)
            })();
            if let Err(error) = applied {
                tracing::warn!("removing deleted documents from the search index: {error}");
            }
        }
        if log_bytes(&wal) > CHECKPOINT_BYTES {
            if let Ok(connection) = self.connection.lock() {
                truncate_log(&connection, TRUNCATE_WAIT_AT_DROP);
            }
        }
    }
}

fn log_bytes(wal: &Path) -> u64 {
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// Copies what is left of the log into the file, waiting at most `TRUNCATE_WAIT` for readers, so
/// that the next write starts the log over from the start of the file; a log of `size` bytes above
/// `KEPT_LOG_BYTES` is then cut back to that size by a write of this connection (which starts the
/// log over: it writes the schema's migration count back unchanged). Nothing is cut when the copy
/// cannot finish.
fn start_log_over(connection: &Connection, size: u64) {
    if connection.busy_timeout(TRUNCATE_WAIT).is_ok() {
        // (busy, frames in the log, frames copied)
        let copied = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
            ))
        });
        if size > KEPT_LOG_BYTES && matches!(copied, Ok((0, frames, done)) if frames == done) {
            let cut = (|| -> rusqlite::Result<()> {
                connection.execute_batch("BEGIN IMMEDIATE")?;
                let migrations: i64 =
                    connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
                connection.execute_batch(&format!("PRAGMA user_version = {migrations}; COMMIT;"))
            })();
            if cut.is_err() && !connection.is_autocommit() {
                let _ = connection.execute_batch("ROLLBACK");
            }
        }
    }
    let _ = connection.busy_timeout(BUSY_TIMEOUT);
}

/// Copies what is left of the log and cuts the file to nothing, waiting at most `wait` for readers (a
/// writer that arrives meanwhile waits for it); when it cannot, the file stays as it is.
fn truncate_log(connection: &Connection, wait: std::time::Duration) {
    if connection.busy_timeout(wait).is_ok() {
        let _ = connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    }
    let _ = connection.busy_timeout(BUSY_TIMEOUT);
}

fn backend(error: rusqlite::Error) -> StoreError {
    match error {
        rusqlite::Error::SqliteFailure(code, message)
            if code.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Conflict(message.unwrap_or_else(|| code.to_string()))
        }
        other => StoreError::Backend(other.to_string()),
    }
}

/// How long `wait_search_merged` waits for the full-text index's merge at most.
const MERGE_WAIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

impl SqliteStore {
    /// Opens (creating and migrating if needed) the database file; blobs live in `<file>.blobs/`.
    pub fn open(path: &Path) -> StoreResult<SqliteStore> {
        let mut store = SqliteStore::open_unbuilt(path)?;
        log_store::claim_format(&store, log_store::FORMAT_TABLES)?;
        store.graphs = Some(start_builds(
            path,
            "lore-graph-index",
            crate::GRAPH_BUILD_AFTER_READS,
            |tx| tx.scan_graph_index(),
        )?);
        store.pages = Some(start_builds(
            path,
            "lore-entity-pages",
            page_index::BUILD_AFTER_READS,
            |tx| tx.scan_page_index(),
        )?);
        Ok(store)
    }

    /// The file with its reader and checkpointer, without the threads that build indexes from the
    /// tables (the log store keeps its knowledge in memory and builds its own).
    fn open_unbuilt(path: &Path) -> StoreResult<SqliteStore> {
        let connection = Connection::open(path).map_err(backend)?;
        let mut blob_dir = path.as_os_str().to_owned();
        blob_dir.push(".blobs");
        let mut store = SqliteStore::setup(connection, PathBuf::from(blob_dir), true)?;
        let reader = open_reader(path)?;
        store.reader = Some(Mutex::new((reader, read_cache::ReadCache::default())));
        store
            .lock()?
            .pragma_update(None, "wal_autocheckpoint", BACKSTOP_CHECKPOINT_PAGES)
            .map_err(backend)?;
        // After a transaction larger than the backstop the writer cuts the log back to it; smaller
        // logs are cut back by the checkpointer once writes pause.
        store
            .lock()?
            .pragma_update(None, "journal_size_limit", WRITER_LOG_LIMIT_BYTES)
            .map_err(backend)?;
        store.checkpointer = Some(Checkpointer::start(path, store.deferred.clone())?);
        Ok(store)
    }

    /// A private in-memory database (tests, benchmarks), with blobs in `blob_dir`.
    pub fn open_in_memory(blob_dir: PathBuf) -> StoreResult<SqliteStore> {
        let connection = Connection::open_in_memory().map_err(backend)?;
        SqliteStore::setup(connection, blob_dir, false)
    }

    fn setup(mut connection: Connection, blob_dir: PathBuf, wal: bool) -> StoreResult<SqliteStore> {
        connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        if wal {
            let mode: String = connection
                .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
                .map_err(backend)?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Backend(format!(
                    "could not enable WAL mode (got {mode})"
                )));
            }
        }
        connection
            .execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;")
            .map_err(backend)?;
        migrate(&mut connection)?;
        tune(&connection, WRITER_CACHE_KIB)?;
        Ok(SqliteStore {
            connection: Mutex::new(connection),
            reader: None,
            checkpointer: None,
            graphs: None,
            pages: None,
            blob_dir,
            write_statements: Default::default(),
            deferred: Arc::default(),
        })
    }

    /// The owner's version in a fresh snapshot of the reader (`None`: an in-memory database).
    fn current_owner_version(&self, owner: &str) -> StoreResult<Option<i64>> {
        let Some(reader) = &self.reader else {
            return Ok(None);
        };
        let guard = reader.lock().map_err(poisoned)?;
        let (snapshot, _) = ReadSnapshot::begin(&guard.0)?;
        let version = SqliteTx::plain(&guard.0, owner).owner_version()?;
        snapshot.end()?;
        Ok(Some(version))
    }

    /// The schema version this database is at.
    pub fn schema_version(&self) -> StoreResult<i64> {
        let connection = self.lock()?;
        connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(backend)
    }

    /// Writes a consistent copy of the database file at `path` to `target` (`VACUUM INTO`), whichever
    /// store keeps its knowledge, on a connection of its own (writers wait for the copy).
    pub fn backup_file(path: &Path, target: &Path) -> StoreResult<()> {
        let connection = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(backend)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
        vacuum_into(&connection, target)
    }

    /// Writes a consistent copy of the database to `target` (`VACUUM INTO`).
    pub fn backup_to(&self, target: &Path) -> StoreResult<()> {
        vacuum_into(&*self.lock()?, target)
    }

    /// Checks a database file without changing it: it opens read-only, passes `PRAGMA integrity_check`
    /// and `foreign_key_check`, and has a Lore schema this build understands. Returns the problems.
    pub fn verify_file(path: &Path) -> StoreResult<Vec<String>> {
        if !path.is_file() {
            return Ok(vec![format!("{} is not a file", path.display())]);
        }
        let connection = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(backend)?;
        let mut problems = Vec::new();
        let integrity = (|| -> rusqlite::Result<Vec<String>> {
            let mut statement = connection.prepare("PRAGMA integrity_check")?;
            let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
            rows.collect()
        })();
        match integrity {
            Ok(rows) => problems.extend(rows.into_iter().filter(|row| row != "ok")),
            Err(error) => return Ok(vec![format!("not a readable SQLite database: {error}")]),
        }
        let violations: i64 = connection
            .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| {
                row.get(0)
            })
            .map_err(backend)?;
        if violations > 0 {
            problems.push(format!("{violations} foreign key violations"));
        }
        let version: i64 = connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(backend)?;
        let has_schema: bool = connection
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'claims'",
                [],
                |row| row.get(0),
            )
            .map_err(backend)?;
        if version < 1 || !has_schema {
            problems.push("not a Lore database (no Lore schema)".into());
        } else if version as usize > MIGRATIONS.len() {
            problems.push(format!(
                "schema version {version} is newer than this lore understands ({})",
                MIGRATIONS.len()
            ));
        }
        Ok(problems)
    }

    /// Replaces the database at `target` with a verified copy of `source`. Refuses, with
    /// `StoreError::Conflict`, while any other connection has `target` open.
    pub fn restore_file(source: &Path, target: &Path) -> StoreResult<()> {
        let problems = SqliteStore::verify_file(source)?;
        if !problems.is_empty() {
            return Err(StoreError::Conflict(format!(
                "{} failed verification: {}",
                source.display(),
                problems.join("; ")
            )));
        }
        if target.exists() {
            // An exclusive lock is granted only when no other connection has the file open.
            let connection = Connection::open(target).map_err(backend)?;
            connection
                .busy_timeout(std::time::Duration::ZERO)
                .map_err(backend)?;
            let locked = connection.execute_batch(
                "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT; PRAGMA wal_checkpoint(TRUNCATE);",
            );
            if let Err(error) = locked {
                return Err(match error {
                    rusqlite::Error::SqliteFailure(code, _)
                        if matches!(
                            code.code,
                            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                        ) =>
                    {
                        StoreError::Conflict(format!(
                            "{} is in use by another process; stop it before restoring",
                            target.display()
                        ))
                    }
                    other => backend(other),
                });
            }
            drop(connection);
        }
        let mut temporary = target.as_os_str().to_owned();
        temporary.push(".restoring");
        let temporary = PathBuf::from(temporary);
        let _ = std::fs::remove_file(&temporary);
        {
            let connection = Connection::open_with_flags(
                source,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(backend)?;
            let temporary_text = temporary
                .to_str()
                .ok_or_else(|| StoreError::Backend("restore path is not UTF-8".into()))?;
            connection
                .execute("VACUUM INTO ?1", [temporary_text])
                .map_err(backend)?;
        }
        let problems = SqliteStore::verify_file(&temporary)?;
        if !problems.is_empty() {
            let _ = std::fs::remove_file(&temporary);
            return Err(StoreError::Backend(format!(
                "the restored copy failed verification: {}",
                problems.join("; ")
            )));
        }
        for suffix in ["-wal", "-shm"] {
            let mut side = target.as_os_str().to_owned();
            side.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(side));
        }
        std::fs::rename(&temporary, target).map_err(|error| {
            StoreError::Backend(format!("cannot replace {}: {error}", target.display()))
        })
    }

    fn lock(&self) -> StoreResult<std::sync::MutexGuard<'_, Connection>> {
        self.connection.lock().map_err(poisoned)
    }

    fn run(
        &self,
        owner: &str,
        behavior: TransactionBehavior,
        commit: bool,
        work: &mut TxWork<'_>,
    ) -> StoreResult<()> {
        if let (false, Some(reader)) = (commit, &self.reader) {
            let mut guard = reader.lock().map_err(poisoned)?;
            let (connection, cache) = &mut *guard;
            let (snapshot, version) = ReadSnapshot::begin(connection)?;
            let mut tx = SqliteTx {
                connection: ConnRef::Plain(&*connection),
                owner,
                cache: Some(cache.for_snapshot(version, owner)),
                graphs: self.graphs.as_ref(),
                pages: self.pages.as_ref(),
                entities: Default::default(),
                identifiers: Default::default(),
                statements: Default::default(),
            };
            let outcome = work(&mut tx);
            drop(tx);
            cache.recount();
            outcome?;
            return snapshot.end();
        }
        let mut connection = self.lock()?;
        if !commit {
            connection
                .execute_batch("PRAGMA query_only = ON")
                .map_err(backend)?;
        }
        let outcome = (|| {
            let transaction = connection
                .transaction_with_behavior(behavior)
                .map_err(backend)?;
            let mut tx = SqliteTx::plain(&transaction, owner);
            let changes_before = transaction.total_changes();
            let outcome = work(&mut tx);
            if commit {
                self.write_statements
                    .fetch_add(tx.statements.get(), std::sync::atomic::Ordering::Relaxed);
            }
            drop(tx);
            outcome?;
            if commit {
                // The owner's version names its state (`owner_versions`): a transaction that
                // changed rows bumps it, one that changed nothing leaves every index in place.
                if transaction.total_changes() != changes_before {
                    transaction
                        .prepare_cached(BUMP_OWNER_VERSION)
                        .and_then(|mut statement| statement.execute([owner]))
                        .map_err(backend)?;
                }
                flush_search(&transaction, Some(&self.deferred))?;
                transaction.commit().map_err(backend)
            } else {
                transaction.rollback().map_err(backend)
            }
        })();
        if !commit {
            connection
                .execute_batch("PRAGMA query_only = OFF")
                .map_err(backend)?;
        }
        drop(connection);
        if let (true, Ok(()), Some(checkpointer)) = (commit, &outcome, &self.checkpointer) {
            checkpointer.committed();
        }
        outcome
    }
}

/// Writes a consistent copy of the connection's database to `target`.
fn vacuum_into(connection: &Connection, target: &Path) -> StoreResult<()> {
    let target = target
        .to_str()
        .ok_or_else(|| StoreError::Backend("backup path is not UTF-8".into()))?;
    connection
        .execute("VACUUM INTO ?1", [target])
        .map(|_| ())
        .map_err(backend)
}

/// A read transaction on the reader connection, ended with `ROLLBACK` (also when the work fails or
/// panics, so the connection never keeps an old snapshot).
struct ReadSnapshot<'c> {
    connection: &'c Connection,
    open: bool,
}

impl<'c> ReadSnapshot<'c> {
    /// Opens the snapshot with its first statement, `PRAGMA data_version`, and returns that version:
    /// whether the reader's memo still holds. `BEGIN`, the version check and `ROLLBACK` are prepared
    /// once per connection (rusqlite's `Transaction` parses its `BEGIN` and `ROLLBACK` on every
    /// call): every read pays for them.
    fn begin(connection: &'c Connection) -> StoreResult<(ReadSnapshot<'c>, i64)> {
        run(connection, "BEGIN DEFERRED")?;
        let snapshot = ReadSnapshot {
            connection,
            open: true,
        };
        let version = connection
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
            .map_err(backend)?;
        Ok((snapshot, version))
    }

    fn end(mut self) -> StoreResult<()> {
        self.open = false;
        run(self.connection, "ROLLBACK")
    }
}

impl Drop for ReadSnapshot<'_> {
    fn drop(&mut self) {
        if self.open && !self.connection.is_autocommit() {
            let _ = self.connection.execute_batch("ROLLBACK");
        }
    }
}

/// Runs one statement that takes no parameters (`BEGIN`, `COMMIT`, `ROLLBACK`), prepared once per
/// connection.
fn run(connection: &Connection, sql: &str) -> StoreResult<()> {
    connection
        .prepare_cached(sql)
        .and_then(|mut statement| statement.execute([]))
        .map(|_| ())
        .map_err(backend)
}

/// A connection's mutex whose holder panicked: the connection may be mid-transaction, so it is not used.
fn poisoned<E>(_: E) -> StoreError {
    StoreError::Backend("database connection poisoned".into())
}

/// The statement every write transaction that changed rows runs before it commits.
const BUMP_OWNER_VERSION: &str = "INSERT INTO owner_versions (owner, version) VALUES (?1, 1) \
     ON CONFLICT (owner) DO UPDATE SET version = version + 1";

/// A read-only connection to the file, tuned like the writer's.
fn open_reader(path: &Path) -> StoreResult<Connection> {
    let connection = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(backend)?;
    connection.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
    tune(&connection, READER_CACHE_KIB)?;
    Ok(connection)
}

/// A build thread of a file database (`owner_builds.rs`), reading each build's snapshot from a
/// read-only connection of its own.
fn start_builds<T: crate::owner_builds::Settle>(
    path: &Path,
    thread: &str,
    ask_after: u32,
    scan: fn(&SqliteTx) -> StoreResult<T>,
) -> StoreResult<OwnerBuilds<T>> {
    let connection = open_reader(path)?;
    OwnerBuilds::start(
        thread,
        ask_after,
        Box::new(move |owner| {
            let (snapshot, _) = ReadSnapshot::begin(&connection)?;
            let tx = SqliteTx::plain(&connection, owner);
            let version = tx.owner_version()?;
            let built = scan(&tx)?;
            snapshot.end()?;
            Ok((version, built))
        }),
    )
}

/// The most rows one segment insert takes (`Tx::insert_segments`); each statement takes a power of
/// two up to it, so a meeting of `n` segments runs as many statements as `n` has one bits below
/// 128 (a hundred segments: 64, 32 and 4), from seven prepared shapes.
const SEGMENT_ROWS_MAX: usize = 64;

/// `INSERT INTO segments ... VALUES` of `rows` rows (a power of two up to `SEGMENT_ROWS_MAX`), built
/// once: the owner is `?1`, each row's eight values follow.
fn segment_insert_sql(rows: usize) -> &'static str {
    static SHAPES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        chunk_shapes(
            "INSERT INTO segments (owner, meeting, id, seq, start_ms, end_ms, speaker_label, \
             attribution, text) VALUES ",
            |[meeting, id, seq, start, end, speaker, attribution, text]| {
                format!(
                    "(?1, ?{meeting}, ?{id}, ?{seq}, ?{start}, ?{end}, ?{speaker}, ?{attribution}, \
                     ?{text})"
                )
            },
        )
    });
    chunk_shape(&SHAPES, rows)
}

/// `INSERT INTO search_docs ... VALUES` of `rows` segments' documents (a power of two up to
/// `SEGMENT_ROWS_MAX`): the owner is `?1`, each row's meeting, segment id, start, time and text
/// follow (schema_v12.sql: the store writes them, no trigger does).
fn segment_document_sql(rows: usize) -> &'static str {
    static SHAPES: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        chunk_shapes(
            "INSERT INTO search_docs (owner, kind, ref, meeting, start_ms, at, scope, body) VALUES ",
            |[meeting, id, start, at, text]| {
                format!(
                    "(?1, 'segment', ?{meeting} || '/' || ?{id}, ?{meeting}, ?{start}, ?{at}, \
                     'o' || hex(?1) || ' ksegment', ?{text})"
                )
            },
        )
    });
    chunk_shape(&SHAPES, rows)
}

/// A multi-row statement for every chunk size, a power of two up to `SEGMENT_ROWS_MAX`: `head`,
/// then `rows` tuples, each written by `row` from its `N` parameter numbers (`?1` is the owner's).
fn chunk_shapes<const N: usize>(head: &str, row: fn([usize; N]) -> String) -> Vec<String> {
    (0..=SEGMENT_ROWS_MAX.trailing_zeros())
        .map(|shift| {
            let tuples: Vec<String> = (0..1usize << shift)
                .map(|index| row(std::array::from_fn(|column| 2 + index * N + column)))
                .collect();
            format!("{head}{}", tuples.join(", "))
        })
        .collect()
}

fn chunk_shape(shapes: &[String], rows: usize) -> &str {
    debug_assert!(rows.is_power_of_two() && rows <= SEGMENT_ROWS_MAX);
    &shapes[rows.trailing_zeros() as usize]
}

/// Applies the writing transaction's queued full-text changes (`search_pending` in the schema) in two
/// statements, so the index is flushed once per transaction instead of after nearly every statement:
/// the documents the index held are deleted by rowid (schema_v11.sql), then the queued documents that
/// still exist are indexed with their text as the transaction leaves it.
///
/// Deleted documents are not in the queue: they wait in `search_deferred` (schema_v14.sql), and are
/// taken out of the index first, all of them, when a queued document has the rowid of one (SQLite
/// gives a new row the rowid after the largest, which may be a deleted one's) or, at a commit
/// (`deferral`), once enough commits have left deletions deferred.
fn flush_search(connection: &Connection, deferral: Option<&DeferredDeletions>) -> StoreResult<()> {
    let pending = exists(connection, "SELECT EXISTS (SELECT 1 FROM search_pending)")?;
    let due = deferral.is_some_and(DeferredDeletions::due);
    if pending || due {
        let reused = pending
            && exists(
                connection,
                "SELECT EXISTS (SELECT 1 FROM search_pending AS p \
                 JOIN search_deferred AS q ON q.doc = p.doc)",
            )?;
        if reused || due {
            apply_deferred_deletions(connection, None)?;
        }
    }
    if pending {
        count_search_terms(connection, read_side::SEARCH_PENDING_TEXTS, [])?;
        for sql in [
            "DELETE FROM search_fts WHERE rowid IN \
             (SELECT doc FROM search_pending WHERE scope IS NOT NULL)",
            "INSERT INTO search_fts (rowid, scope, body) \
             SELECT d.doc, d.scope, d.body FROM search_pending AS p JOIN search_docs AS d ON d.doc = p.doc \
             ORDER BY p.doc",
            "DELETE FROM search_pending",
        ] {
            connection
                .prepare_cached(sql)
                .and_then(|mut statement| statement.execute([]))
                .map_err(backend)?;
        }
    }
    if let Some(deferral) = deferral {
        deferral.committing(any_deferred(connection)?);
    }
    Ok(())
}

fn exists(connection: &Connection, sql: &str) -> StoreResult<bool> {
    connection
        .prepare_cached(sql)
        .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
        .map_err(backend)
}

/// Whether any deletion from the full-text index is deferred (schema_v14.sql).
fn any_deferred(connection: &Connection) -> StoreResult<bool> {
    exists(connection, "SELECT EXISTS (SELECT 1 FROM search_deferred)")
}

/// How many commits in a row may leave deleted documents in the full-text index before a commit
/// applies them (`flush_search`), when writes do not pause for the background thread to: with a
/// meeting's hundred segments per deletion, batches of up to about 6,400 documents.
const DEFERRED_COMMITS_MAX: u32 = 64;
/// Deferred deletions the background thread applies per transaction (a few milliseconds).
const DEFERRED_STEP_DOCUMENTS: usize = 2_000;

/// The writer's count of its commits that left deletions deferred since they were last applied.
#[derive(Default)]
struct DeferredDeletions {
    commits: std::sync::atomic::AtomicU32,
}

impl DeferredDeletions {
    fn due(&self) -> bool {
        self.commits.load(std::sync::atomic::Ordering::Relaxed) >= DEFERRED_COMMITS_MAX
    }

    /// A transaction about to commit leaves deletions deferred (`left`), or none.
    fn committing(&self, left: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        if left {
            self.commits.fetch_add(1, Relaxed);
        } else {
            self.commits.store(0, Relaxed);
        }
    }
}

/// Takes deferred deletions (schema_v14.sql) out of the index: the `limit` lowest documents, or all
/// of them; their text's tokens leave the term counts. Returns how many were applied.
fn apply_deferred_deletions(connection: &Connection, limit: Option<usize>) -> StoreResult<usize> {
    let last = match limit {
        Some(limit) => connection
            .prepare_cached("SELECT doc FROM search_deferred ORDER BY doc LIMIT 1 OFFSET ?1")
            .and_then(|mut statement| {
                statement
                    .query_row([limit.saturating_sub(1) as i64], |row| row.get(0))
                    .optional()
            })
            .map_err(backend)?,
        None => None,
    }
    .unwrap_or(i64::MAX);
    count_search_terms(
        connection,
        "SELECT 1, body, NULL FROM search_deferred WHERE doc <= ?1",
        [last],
    )?;
    connection
        .prepare_cached(
            "DELETE FROM search_fts WHERE rowid IN (SELECT doc FROM search_deferred WHERE doc <= ?1)",
        )
        .and_then(|mut statement| statement.execute([last]))
        .map_err(backend)?;
    connection
        .prepare_cached("DELETE FROM search_deferred WHERE doc <= ?1")
        .and_then(|mut statement| statement.execute([last]))
        .map_err(backend)
}

/// Keeps `search_terms` (schema_v13.sql) with the index before changes are applied to it: `sql`
/// gives each changed document's row (whether it was indexed, the text it was indexed with, its text
/// now or NULL), as `SEARCH_PENDING_TEXTS` does for the queue. A document that was indexed takes its
/// old text's tokens out of their counts, and one that exists now adds its text's. Text `ranking`
/// tokenizes is tokenized here; other text is tokenized by FTS5 itself, in a scratch index of the
/// connection's temporary schema.
fn count_search_terms(
    connection: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> StoreResult<()> {
    let mut terms = ranking::TermCounts::default();
    let mut others: [Vec<String>; 2] = Default::default();
    {
        let mut statement = connection.prepare_cached(sql).map_err(backend)?;
        let mut rows = statement.query(params).map_err(backend)?;
        while let Some(row) = rows.next().map_err(backend)? {
            let text = |index| -> StoreResult<Option<&str>> {
                row.get_ref(index)
                    .and_then(|value| Ok(value.as_str_or_null()?))
                    .map_err(backend)
            };
            let indexed: bool = row.get(0).map_err(backend)?;
            let (old, new) = (text(1)?, text(2)?);
            if indexed && old.is_none() {
                return Err(StoreError::Backend(
                    "a queued search document has no text".into(),
                ));
            }
            let old = old.filter(|_| indexed);
            // A document written again with the same text keeps its terms.
            if old.is_some() && old == new {
                continue;
            }
            for (side, (text, sign)) in [(old, -1), (new, 1)].into_iter().enumerate() {
                if let Some(text) = text {
                    if !terms.add(text, sign) {
                        others[side].push(text.to_string());
                    }
                }
            }
        }
    }
    for (texts, sign) in others.iter().zip([-1, 1]) {
        if texts.is_empty() {
            continue;
        }
        connection
            .execute_batch(&format!(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_terms_scratch USING fts5(body, \
                   content = '', contentless_delete = 1, tokenize = '{SEARCH_TOKENIZER}'); \
                 CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_terms_scratch_vocab \
                   USING fts5vocab(temp, search_terms_scratch, row);"
            ))
            .map_err(backend)?;
        {
            let mut insert = connection
                .prepare_cached(
                    "INSERT INTO temp.search_terms_scratch (rowid, body) VALUES (?1, ?2)",
                )
                .map_err(backend)?;
            for (rowid, text) in texts.iter().enumerate() {
                insert
                    .execute(rusqlite::params![rowid as i64 + 1, text])
                    .map_err(backend)?;
            }
        }
        {
            let mut counts = connection
                .prepare_cached("SELECT term, doc FROM temp.search_terms_scratch_vocab")
                .map_err(backend)?;
            let mut rows = counts.query([]).map_err(backend)?;
            while let Some(row) = rows.next().map_err(backend)? {
                let term: String = row.get(0).map_err(backend)?;
                terms.add_counted(&term, row.get(1).map_err(backend)?, sign);
            }
        }
        connection
            .execute_batch(
                "INSERT INTO temp.search_terms_scratch (search_terms_scratch) VALUES ('delete-all')",
            )
            .map_err(backend)?;
    }
    let mut add = connection
        .prepare_cached(
            "INSERT INTO search_terms (term, docs) VALUES (?1, ?2) \
             ON CONFLICT (term) DO UPDATE SET docs = docs + excluded.docs",
        )
        .map_err(backend)?;
    let mut remove = connection
        .prepare_cached(
            "UPDATE search_terms SET docs = docs + ?2 WHERE term = ?1 AND docs + ?2 > 0",
        )
        .map_err(backend)?;
    let mut remove_last = connection
        .prepare_cached("DELETE FROM search_terms WHERE term = ?1")
        .map_err(backend)?;
    for (term, delta) in terms.changes() {
        let term = String::from_utf8(term)
            .map_err(|_| StoreError::Backend("a search term is not UTF-8".into()))?;
        match delta {
            0 => {}
            1.. => {
                add.execute(rusqlite::params![term, delta])
                    .map_err(backend)?;
            }
            // A count that would reach zero goes with its term. One that would go below zero is
            // wrong already: the write goes on (a count only weighs a search's ranks) and the
            // integrity check reports the difference with the index's vocabulary.
            _ => {
                if remove
                    .execute(rusqlite::params![term, delta])
                    .map_err(backend)?
                    == 0
                {
                    remove_last.execute([&term]).map_err(backend)?;
                }
            }
        }
    }
    Ok(())
}

/// The two counts of one row (the integrity checks' mismatches: one way, the other way).
fn two_counts(connection: &Connection, sql: &str) -> StoreResult<(i64, i64)> {
    connection
        .query_row(sql, [], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(backend)
}

/// A reader's page cache: 64 MiB of the pages it reads from the log (the file's pages come through
/// the memory map).
const READER_CACHE_KIB: u32 = 65_536;

/// The writer's page cache, 8 MiB: the pages a write changes and those it reads from the log. It is
/// kept small because SQLite walks the whole cache at the end of most writes: a b-tree rebalance
/// swaps two pages through a page number past the file's end (SQLite's pending-byte page), and the
/// commit then drops every cached page past the end by visiting each slot of the cache's hash
/// table. With 64 MiB that walk was 6 % of a committed meeting deletion; reads the smaller cache
/// misses come from the operating system's cache, and were not seen in a profile (BENCHMARKS.md,
/// thirty-second round).
const WRITER_CACHE_KIB: u32 = 8_192;

/// Per-connection settings for speed: every hot statement stays prepared (the engine runs a few
/// dozen distinct ones; rusqlite keeps 16 by default), the page cache holds a working set
/// (`READER_CACHE_KIB`, `WRITER_CACHE_KIB`), and the first 2 GiB of the file (SQLite's cap) are
/// read through a memory map instead of being copied into the cache, so per-entity reads cost about
/// the same when the database outgrows the cache. A larger map was measured and not kept: once the
/// file outgrew the free memory (20 GB at scale 100), every page fault read 128 KiB around its page
/// and the process thrashed (BENCHMARKS.md, seventh round). Temporary files stay in
/// memory: a statement that fires triggers inside a transaction keeps a statement journal of every
/// page it changes, and past 64 KiB SQLite spilled it to a temporary file, a `pwrite` per page (a
/// fifth of an alias insert's time, whose triggers rewrite the entity's search text).
///
/// The query planner's stability guarantee is on: a plan never depends on the values bound to a
/// statement. Without it SQLite marked some statements (the graph's claims linking an entity and
/// its meeting links, read when no graph index is there) to be prepared again whenever a parameter
/// changed, a third of a graph read's instructions (BENCHMARKS.md, nineteenth round). Every plan is
/// then the one `tests/query_plans.rs` checks.
fn tune(connection: &Connection, cache_kib: u32) -> StoreResult<()> {
    connection.set_prepared_statement_cache_capacity(256);
    connection
        .set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )
        .map_err(backend)?;
    connection
        .execute_batch(&format!(
            "PRAGMA cache_size = -{cache_kib}; PRAGMA mmap_size = 2147418112; \
             PRAGMA temp_store = MEMORY;",
        ))
        .map_err(backend)
}

fn migrate(connection: &mut Connection) -> StoreResult<()> {
    let version: i64 = connection
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(backend)?;
    if version as usize > MIGRATIONS.len() {
        return Err(StoreError::Backend(format!(
            "database schema version {version} is newer than this lore understands ({}); upgrade lore",
            MIGRATIONS.len()
        )));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        transaction.execute_batch(migration).map_err(backend)?;
        if index + 1 == REVISION_MEETINGS_VERSION {
            index_revision_meetings(&transaction)?;
        }
        if index + 1 == ENTITY_SNAPSHOTS_VERSION {
            strip_derived_entity_fields(&transaction)?;
        }
        transaction
            .pragma_update(None, "user_version", (index + 1) as i64)
            .map_err(backend)?;
        transaction.commit().map_err(backend)?;
    }
    planner::seed_planner_statistics(connection).map_err(backend)
}

/// Runs `visit` over every revision already written, with its owner, for a one-time upgrade of the
/// revision log (snapshots may be compressed, so upgrades run here rather than in a migration's SQL).
/// A large log pauses the open once, so the upgrade says what it is `doing`.
fn upgrade_revisions(
    connection: &Connection,
    doing: &str,
    mut visit: impl FnMut(String, Revision) -> StoreResult<()>,
) -> StoreResult<()> {
    let count: i64 = connection
        .query_row("SELECT count(*) FROM revisions", [], |row| row.get(0))
        .map_err(backend)?;
    if count >= LARGE_REVISION_LOG {
        tracing::warn!("upgrading the database: {doing} in {count} revisions (once)");
    }
    let mut read = connection
        .prepare(
            &[
                "SELECT owner, ",
                REVISION_COLUMNS,
                " FROM revisions ORDER BY owner, id",
            ]
            .concat(),
        )
        .map_err(backend)?;
    let mut rows = read.query([]).map_err(backend)?;
    while let Some(row) = rows.next().map_err(backend)? {
        let owner: String = row.get(0).map_err(backend)?;
        visit(owner, rows::revision_row_at(row, 1).map_err(backend)?)?;
    }
    Ok(())
}

/// Records, for every revision already written, the meetings its rows name.
fn index_revision_meetings(connection: &Connection) -> StoreResult<()> {
    let mut insert = connection
        .prepare(INSERT_REVISION_MEETING)
        .map_err(backend)?;
    upgrade_revisions(
        connection,
        "indexing the meetings named",
        |owner, revision| {
            for meeting in crate::revision_meetings(&revision) {
                insert
                    .execute(params![owner, meeting, revision.id])
                    .map_err(backend)?;
            }
            Ok(())
        },
    )
}

/// Rewrites the revisions already written without their entity rows' derived fields
/// (`Revision::strip_derived_entity_fields`); the revisions that had none are left as they are.
fn strip_derived_entity_fields(connection: &Connection) -> StoreResult<()> {
    let mut replace = connection
        .prepare(REPLACE_REVISION_SNAPSHOTS)
        .map_err(backend)?;
    upgrade_revisions(
        connection,
        "removing the entity rows' derived fields",
        |owner, mut revision| {
            let before = Revision::strip_derived_entity_fields(&mut revision.before);
            let after = Revision::strip_derived_entity_fields(&mut revision.after);
            if before || after {
                replace
                    .execute(params![
                        owner,
                        revision.id,
                        snapshot_to_sql(&revision.before),
                        snapshot_to_sql(&revision.after)
                    ])
                    .map_err(backend)?;
            }
            Ok(())
        },
    )
}

/// Statements both backends run as written (PostgreSQL's through `dialect()`).
pub(crate) const INSERT_REVISION_MEETING: &str =
    "INSERT INTO revision_meetings (owner, meeting, revision) VALUES (?1, ?2, ?3) \
     ON CONFLICT DO NOTHING";
pub(crate) const REPLACE_REVISION_SNAPSHOTS: &str =
    "UPDATE revisions SET before = ?3, after = ?4 WHERE owner = ?1 AND id = ?2";
pub(crate) use read_side::{
    ATTACHED_LINKS, ENTITY_OBSERVATIONS, OBSERVATION_TIMES, REVISIONS_NAMING_MEETING,
};
/// An owner's write count (`owner_versions`), read by both backends' transactions and PostgreSQL's
/// store.
pub(crate) const OWNER_VERSION: &str = "SELECT version FROM owner_versions WHERE owner = ?1";
pub(crate) const SET_ENTITY_REDIRECT: &str =
    "INSERT INTO entity_redirects (owner, old_id, new_id) VALUES (?1, ?2, ?3) \
     ON CONFLICT (owner, old_id) DO UPDATE SET new_id = excluded.new_id";
pub(crate) const FIND_ENTITY_REDIRECT: &str =
    "SELECT new_id FROM entity_redirects WHERE owner = ?1 AND old_id = ?2";
pub(crate) const LIST_ENTITY_REDIRECTS: &str =
    "SELECT old_id, new_id FROM entity_redirects WHERE owner = ?1 ORDER BY old_id";

impl Store for SqliteStore {
    fn write_statements(&self) -> Option<u64> {
        Some(
            self.write_statements
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    fn write(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()> {
        self.run(owner, TransactionBehavior::Immediate, true, work)
    }

    fn read(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()> {
        self.run(owner, TransactionBehavior::Deferred, false, work)
    }

    fn blob_dir(&self) -> &Path {
        &self.blob_dir
    }

    fn owners(&self) -> StoreResult<Vec<String>> {
        let connection = self.lock()?;
        let mut statement = connection
            .prepare("SELECT owner FROM entities UNION SELECT owner FROM meetings UNION SELECT owner FROM revisions ORDER BY 1")
            .map_err(backend)?;
        let owners = statement.query_map([], |row| row.get(0)).map_err(backend)?;
        owners.collect::<Result<Vec<String>, _>>().map_err(backend)
    }

    fn integrity_problems(&self) -> StoreResult<Vec<String>> {
        let connection = self.lock()?;
        let mut problems = Vec::new();
        let mut statement = connection
            .prepare("PRAGMA integrity_check")
            .map_err(backend)?;
        for row in statement
            .query_map([], |row| row.get::<_, String>(0))
            .map_err(backend)?
        {
            let row = row.map_err(backend)?;
            if row != "ok" {
                problems.push(row);
            }
        }
        let mut statement = connection
            .prepare("PRAGMA foreign_key_check")
            .map_err(backend)?;
        let violations = statement
            .query_map([], |row| {
                Ok(format!(
                    "foreign key violation in {}",
                    row.get::<_, String>(0)?
                ))
            })
            .map_err(backend)?;
        for violation in violations {
            problems.push(violation.map_err(backend)?);
        }
        // The name keys must be the distinct keys of the names (schema_v7.sql's triggers keep them).
        let (missing, extra) = two_counts(&connection, read_side::ALIAS_KEYS_MISMATCH)?;
        if missing + extra > 0 {
            problems.push(format!(
                "entity name keys: {missing} missing, {extra} without a name"
            ));
        }
        // The search index must be consistent (FTS5's own check) and index exactly the documents:
        // it keeps no text (schema_v11.sql), but a row of sizes per document it holds.
        if let Err(error) = connection.execute(
            "INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)",
            [],
        ) {
            problems.push(format!("search index: {error}"));
        }
        let (unindexed, stale) = two_counts(&connection, read_side::SEARCH_INDEX_MISMATCH)?;
        if unindexed + stale > 0 {
            problems.push(format!(
                "search index: {unindexed} documents not indexed, {stale} indexed documents that no longer exist"
            ));
        }
        connection
            .execute_batch(read_side::SEARCH_VOCABULARY)
            .map_err(backend)?;
        let (missing, wrong) = two_counts(&connection, read_side::SEARCH_TERMS_MISMATCH)?;
        if missing + wrong > 0 {
            problems.push(format!(
                "search term counts: {missing} of the index's terms missing or miscounted, {wrong} counts the index does not have"
            ));
        }
        Ok(problems)
    }

    fn backend_name(&self) -> &'static str {
        "sqlite-tables"
    }

    /// Walks the per-entity b-trees on the reader connection, one statement at a time, releasing the
    /// connection between them so that reads arriving meanwhile wait for one walk at most. An
    /// in-memory database (no reader connection) has nothing to map.
    fn prewarm(&self) -> StoreResult<usize> {
        let Some(reader) = &self.reader else {
            return Ok(0);
        };
        for (sql, _) in PREWARM {
            let guard = reader.lock().map_err(poisoned)?;
            guard
                .0
                .query_row(sql, [], |row| row.get::<_, Option<i64>>(0))
                .map_err(backend)?;
        }
        // Then each owner's entity pages (`page_index.rs`) and graph index, asked of the store's
        // threads, not built here: the first reads find them there.
        let owners = self.owners()?;
        for owner in &owners {
            let version = self.current_owner_version(owner)?;
            if let (Some(version), Some(pages), Some(graphs)) = (version, &self.pages, &self.graphs)
            {
                pages.prefetch(owner, version);
                graphs.prefetch(owner, version);
            }
        }
        Ok(PREWARM.len() + 1 + owners.len())
    }

    fn cached_pages(&self, owner: &str) -> Option<crate::CachedPages> {
        let version = self.current_owner_version(owner).ok()??;
        Some(self.pages.as_ref()?.held(owner, version)?.held())
    }

    fn cached_graph(&self, owner: &str) -> bool {
        let version = self.current_owner_version(owner).ok().flatten();
        version
            .and_then(|version| self.graphs.as_ref()?.held(owner, version))
            .is_some()
    }

    fn finish_background_work(&self) {
        if let (Some(pages), Some(graphs)) = (&self.pages, &self.graphs) {
            pages.wait_idle();
            graphs.wait_idle();
        }
    }

    fn wait_search_merged(&self) {
        if let Some(checkpointer) = &self.checkpointer {
            checkpointer.merges.wait_settled(MERGE_WAIT_LIMIT);
        }
    }

    fn insert_api_token(&self, token: &ApiToken) -> StoreResult<()> {
        let connection = self.lock()?;
        connection
            .execute(
                "INSERT INTO api_tokens (token_hash, id, owner, scope, label, created_at, expires_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    token.token_hash,
                    token.id,
                    token.owner,
                    token.scope,
                    token.label,
                    token.created_at.millis(),
                    token.expires_at.map(Ts::millis)
                ],
            )
            .map(|_| ())
            .map_err(backend)
    }

    fn find_api_token_by_hash(&self, token_hash: &str) -> StoreResult<Option<ApiToken>> {
        self.admin_find(
            &format!("{API_TOKEN_COLUMNS} WHERE token_hash = ?1"),
            token_hash,
            api_token_row,
        )
    }

    fn list_api_tokens(&self) -> StoreResult<Vec<ApiToken>> {
        self.admin_list(
            &format!("{API_TOKEN_COLUMNS} ORDER BY created_at, id"),
            api_token_row,
        )
    }

    fn delete_api_token(&self, id: &str) -> StoreResult<bool> {
        self.admin_delete("DELETE FROM api_tokens WHERE id = ?1", id)
    }

    fn insert_user(&self, user: &crate::User) -> StoreResult<()> {
        let connection = self.lock()?;
        connection
            .execute(
                "INSERT INTO users (name, password_hash, created_at) VALUES (?1, ?2, ?3)",
                params![user.name, user.password_hash, user.created_at.millis()],
            )
            .map(|_| ())
            .map_err(backend)
    }

    fn find_user(&self, name: &str) -> StoreResult<Option<crate::User>> {
        self.admin_find(&format!("{USER_COLUMNS} WHERE name = ?1"), name, user_row)
    }

    fn list_users(&self) -> StoreResult<Vec<crate::User>> {
        self.admin_list(&format!("{USER_COLUMNS} ORDER BY name"), user_row)
    }

    fn delete_user(&self, name: &str) -> StoreResult<bool> {
        let connection = self.lock()?;
        let transaction = connection.unchecked_transaction().map_err(backend)?;
        transaction
            .execute("DELETE FROM web_sessions WHERE owner = ?1", [name])
            .map_err(backend)?;
        let deleted = transaction
            .execute("DELETE FROM users WHERE name = ?1", [name])
            .map_err(backend)?;
        transaction.commit().map_err(backend)?;
        Ok(deleted > 0)
    }

    fn insert_web_session(&self, session: &crate::WebSession) -> StoreResult<()> {
        let connection = self.lock()?;
        connection
            .execute(
                "INSERT INTO web_sessions (cookie_hash, owner, created_at, last_seen_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    session.cookie_hash,
                    session.owner,
                    session.created_at.millis(),
                    session.last_seen_at.millis()
                ],
            )
            .map(|_| ())
            .map_err(backend)
    }

    fn find_web_session(&self, cookie_hash: &str) -> StoreResult<Option<crate::WebSession>> {
        self.admin_find(
            "SELECT cookie_hash, owner, created_at, last_seen_at FROM web_sessions \
             WHERE cookie_hash = ?1",
            cookie_hash,
            |row| {
                Ok(crate::WebSession {
                    cookie_hash: row.get(0)?,
                    owner: row.get(1)?,
                    created_at: Ts::from_millis(row.get(2)?),
                    last_seen_at: Ts::from_millis(row.get(3)?),
                })
            },
        )
    }

    fn touch_web_session(&self, cookie_hash: &str, at: Ts) -> StoreResult<bool> {
        let connection = self.lock()?;
        connection
            .execute(
                "UPDATE web_sessions SET last_seen_at = ?2 WHERE cookie_hash = ?1",
                params![cookie_hash, at.millis()],
            )
            .map(|changed| changed > 0)
            .map_err(backend)
    }

    fn delete_web_session(&self, cookie_hash: &str) -> StoreResult<bool> {
        self.admin_delete(
            "DELETE FROM web_sessions WHERE cookie_hash = ?1",
            cookie_hash,
        )
    }

    fn delete_web_sessions_idle_since(&self, before: Ts) -> StoreResult<usize> {
        let connection = self.lock()?;
        connection
            .execute(
                "DELETE FROM web_sessions WHERE last_seen_at < ?1",
                [before.millis()],
            )
            .map_err(backend)
    }
}

impl SqliteStore {
    /// The one row of an owner-agnostic table that `sql` selects by `key` (a token, user or session
    /// lookup, which every request makes): on the reader connection when there is one, so that a
    /// request does not wait for a write in progress; it sees every committed write.
    fn admin_find<T>(
        &self,
        sql: &str,
        key: &str,
        map: fn(&Row) -> rusqlite::Result<T>,
    ) -> StoreResult<Option<T>> {
        let find = |connection: &Connection| {
            connection
                .prepare_cached(sql)
                .and_then(|mut statement| statement.query_row([key], map).optional())
                .map_err(backend)
        };
        match &self.reader {
            Some(reader) => find(&reader.lock().map_err(poisoned)?.0),
            None => find(&*self.lock()?),
        }
    }

    /// Every row of an owner-agnostic table (api tokens, users) that `sql` selects.
    fn admin_list<T>(
        &self,
        sql: &str,
        map: fn(&Row) -> rusqlite::Result<T>,
    ) -> StoreResult<Vec<T>> {
        let connection = self.lock()?;
        let mut statement = connection.prepare(sql).map_err(backend)?;
        let rows = statement.query_map([], map).map_err(backend)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(backend)
    }

    /// Deletes the row of an owner-agnostic table that `sql` names by `key`; whether there was one.
    fn admin_delete(&self, sql: &str, key: &str) -> StoreResult<bool> {
        let connection = self.lock()?;
        connection
            .execute(sql, [key])
            .map(|changed| changed > 0)
            .map_err(backend)
    }
}

const USER_COLUMNS: &str = "SELECT name, password_hash, created_at FROM users";

fn user_row(row: &Row) -> rusqlite::Result<crate::User> {
    Ok(crate::User {
        name: row.get(0)?,
        password_hash: row.get(1)?,
        created_at: Ts::from_millis(row.get(2)?),
    })
}

const API_TOKEN_COLUMNS: &str =
    "SELECT token_hash, id, owner, scope, label, created_at, expires_at FROM api_tokens";

fn api_token_row(row: &Row) -> rusqlite::Result<ApiToken> {
    Ok(ApiToken {
        token_hash: row.get(0)?,
        id: row.get(1)?,
        owner: row.get(2)?,
        scope: row.get(3)?,
        label: row.get(4)?,
        created_at: Ts::from_millis(row.get(5)?),
        expires_at: row.get::<_, Option<i64>>(6)?.map(Ts::from_millis),
    })
}

/// The connection a [`SqliteTx`] runs its statements on: borrowed, or held through the lock a log
/// store's write shares with its helper thread (`log_store::lane`), or lent to that thread (the log
/// store's transaction takes it back before its next statement).
pub(crate) enum ConnRef<'c> {
    Plain(&'c Connection),
    Locked(Box<dyn std::ops::Deref<Target = Connection> + 'c>),
    Lent,
}

impl std::ops::Deref for ConnRef<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        match self {
            ConnRef::Plain(connection) => connection,
            ConnRef::Locked(guard) => guard,
            // `LogTx::sql` takes the connection back before any statement.
            ConnRef::Lent => unreachable!("a statement on a connection lent to the write's helper"),
        }
    }
}

struct SqliteTx<'c> {
    connection: ConnRef<'c>,
    owner: &'c str,
    /// The reader's memo of hot reads for this owner and snapshot (`None` when writing).
    cache: Option<&'c mut read_cache::OwnerCache>,
    /// The store's graph indexes and entity pages, for a read on the reader connection (`None`
    /// when writing).
    graphs: Option<&'c crate::GraphBuilds>,
    pages: Option<&'c OwnerBuilds<page_index::PageIndex>>,
    /// Entity rows this transaction read or wrote, by id (`None`: not there). Only
    /// `upsert_entity` and `delete_entity` write entity rows (no trigger or foreign-key action
    /// changes one), and both keep this current, so a rebuild that reads the same hub many times in
    /// one transaction reads it once.
    entities: std::collections::HashMap<String, Option<Entity>>,
    /// The transaction's memo of identifier lookups, by (scheme, value) (`None`: no entity holds it).
    /// Identifiers change only through `insert_identifier`, `delete_identifier` and the cascade of
    /// `delete_entity`, and all three keep this current, so resolving a meeting's references, which
    /// asks for the same identifiers several times (an email, then the same email again to record
    /// where it was learned), queries each once.
    identifiers: crate::IdentifierMemo,
    /// Statements this transaction ran through `exec`, `all` and `one`.
    statements: std::cell::Cell<u64>,
}

/// Answers a read from the memo when it holds it, otherwise queries and remembers the answer.
macro_rules! memo {
    ($tx:ident, $map:ident, $key:expr, $load:expr) => {{
        if let Some(hit) = $tx.cache.as_ref().and_then(|c| c.$map.get($key)) {
            return Ok(hit.clone());
        }
        let rows = $load?;
        if let Some(cache) = $tx.cache.as_mut() {
            cache.$map.insert($key.to_string(), rows.clone());
        }
        Ok(rows)
    }};
}

/// The same for reads bounded by a row limit: a memo answers only the limit it was filled with.
macro_rules! memo_limited {
    ($tx:ident, $map:ident, $key:expr, $limit:expr, $load:expr) => {{
        if let Some((limit, hit)) = $tx.cache.as_ref().and_then(|c| c.$map.get($key)) {
            if *limit == $limit {
                return Ok(hit.clone());
            }
        }
        let rows = $load?;
        if let Some(cache) = $tx.cache.as_mut() {
            cache.$map.insert($key.to_string(), ($limit, rows.clone()));
        }
        Ok(rows)
    }};
}

impl<'c> SqliteTx<'c> {
    /// A transaction's view with no memo, indexes or pages: writes, and the build threads' scans.
    fn plain(connection: &'c Connection, owner: &'c str) -> SqliteTx<'c> {
        SqliteTx::on(ConnRef::Plain(connection), owner)
    }

    fn on(connection: ConnRef<'c>, owner: &'c str) -> SqliteTx<'c> {
        SqliteTx {
            connection,
            owner,
            cache: None,
            graphs: None,
            pages: None,
            entities: Default::default(),
            identifiers: Default::default(),
            statements: Default::default(),
        }
    }

    /// The owner's entity pages for a projection read: `None` while writing or until the store's
    /// thread has built them, which the [`page_index::BUILD_AFTER_READS`]th such read of a version
    /// asks for.
    fn page_index(&mut self) -> Option<&page_index::PageIndex> {
        self.find_pages(true)
    }

    /// The owner's entity pages for this snapshot when the store's build thread has them
    /// (`owner_builds.rs`), kept in the reader's memo for the rest of its version; `None` while
    /// writing or until they are built. A `projection` read that finds none counts towards asking
    /// for them.
    fn find_pages(&mut self, projection: bool) -> Option<&page_index::PageIndex> {
        let builds = self.pages?;
        if self.cache.as_ref()?.pages.is_none() {
            let version = self.memo_owner_version().ok()?;
            let found = if projection {
                builds.get(self.owner, version)
            } else {
                builds.held(self.owner, version)
            };
            self.cache.as_mut()?.pages = found;
        }
        self.cache.as_ref()?.pages.as_deref()
    }

    /// [`Self::owner_version`], read once per version of the reader's memo.
    fn memo_owner_version(&mut self) -> StoreResult<i64> {
        if let Some(version) = self.cache.as_ref().and_then(|cache| cache.owner_version) {
            return Ok(version);
        }
        let version = self.owner_version()?;
        if let Some(cache) = self.cache.as_mut() {
            cache.owner_version = Some(version);
        }
        Ok(version)
    }

    /// The owner's version in this snapshot (`owner_versions`; 0 before its first write).
    fn owner_version(&self) -> StoreResult<i64> {
        Ok(self
            .one(OWNER_VERSION, params![self.owner], |row| row.get(0))?
            .unwrap_or(0))
    }

    /// The owner's entity pages for this snapshot if they are built, without counting a read.
    fn held_pages(&mut self) -> Option<&page_index::PageIndex> {
        self.find_pages(false)
    }

    /// Inserts a claim row; `conflict` is empty (a duplicate id fails) or [`CLAIM_UPSERT`].
    fn write_claim(&mut self, c: &Claim, conflict: &str) -> StoreResult<()> {
        let d = &c.derived;
        self.exec(
            &[
                "INSERT INTO claims (owner, ",
                CLAIM_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, \
                 ?21, ?22, ?23, ?24, ?25, ?26)",
                conflict
            ].concat(),
            params![
                self.owner, c.id, c.subject, c.predicate, c.object_entity, c.value_text,
                c.value_json.as_ref().map(|v| v.to_string()), c.value_key, c.context_entity, c.cardinality.as_str(),
                c.group_key, c.explicit_valid_from.map(|t| t.0), c.explicit_valid_to.map(|t| t.0),
                c.retracted_at.map(|t| t.0), c.recorded_at.0, d.status.as_str(), d.authority.as_str(),
                d.valid_from.map(|t| t.0), d.valid_to.map(|t| t.0), d.first_observed_at.map(|t| t.0),
                d.last_observed_at.map(|t| t.0), d.superseded_at.map(|t| t.0), d.superseded_by,
                d.conflict.map(|r| r.as_str()), d.end_outcome.map(|o| o.as_str()), to_json(&d.periods)
            ],
        )
        .map(|_| ())
    }

    /// A search inside a writing transaction sees that transaction's writes: the queued full-text
    /// changes are applied first (the reader's snapshots never have any queued). A log store's
    /// ingest also runs it between a batch's meetings (`Tx::index_queued_search`).
    fn flush_search_in_writer(&self) -> StoreResult<()> {
        if self.cache.is_none() {
            flush_search(&self.connection, None)?;
        }
        Ok(())
    }

    /// One `INSERT` of `segments` as rows of bound values (`segment_insert_sql`).
    fn insert_segment_rows(&self, segments: &[Segment]) -> StoreResult<()> {
        let attributions: Vec<&str> = segments.iter().map(|s| s.attribution.as_str()).collect();
        self.exec_chunk(
            segment_insert_sql(segments.len()),
            segments.iter().zip(&attributions).map(|(s, attribution)| {
                [
                    &s.meeting as &dyn rusqlite::ToSql,
                    &s.id,
                    &s.seq,
                    &s.start_ms,
                    &s.end_ms,
                    &s.speaker_label,
                    attribution,
                    &s.text,
                ]
            }),
        )?;
        // Their search documents (schema_v12.sql), timed by their meeting's start; the queue's
        // trigger queues them for the index.
        let mut started: Vec<(&str, Option<i64>)> = Vec::new();
        let mut times = Vec::with_capacity(segments.len());
        for s in segments {
            let start = match started.iter().find(|(meeting, _)| *meeting == s.meeting) {
                Some((_, start)) => *start,
                None => {
                    let start = self.one(
                        "SELECT started_at FROM meetings WHERE owner = ?1 AND id = ?2",
                        params![self.owner, s.meeting],
                        |row| row.get::<_, i64>(0),
                    )?;
                    started.push((&s.meeting, start));
                    start
                }
            };
            times.push(start.map(|start| start + s.start_ms));
        }
        self.exec_chunk(
            segment_document_sql(segments.len()),
            segments.iter().zip(&times).map(|(s, at)| {
                [
                    &s.meeting as &dyn rusqlite::ToSql,
                    &s.id,
                    &s.start_ms,
                    at,
                    &s.text,
                ]
            }),
        )
    }

    /// Runs a multi-row statement (`chunk_shapes`) with the owner as `?1` and each row's values after.
    fn exec_chunk<'v, const N: usize>(
        &'v self,
        sql: &str,
        rows: impl ExactSizeIterator<Item = [&'v dyn rusqlite::ToSql; N]>,
    ) -> StoreResult<()> {
        let mut values: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(1 + rows.len() * N);
        values.push(&self.owner);
        for row in rows {
            values.extend(row);
        }
        self.exec(sql, rusqlite::params_from_iter(values))
            .map(|_| ())
    }

    fn exec<P: Params>(&self, sql: &str, params: P) -> StoreResult<usize> {
        self.statements.set(self.statements.get() + 1);
        self.connection
            .prepare_cached(sql)
            .map_err(backend)?
            .execute(params)
            .map_err(backend)
    }

    fn all<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        map: fn(&Row) -> rusqlite::Result<T>,
    ) -> StoreResult<Vec<T>> {
        self.statements.set(self.statements.get() + 1);
        let mut statement = self.connection.prepare_cached(sql).map_err(backend)?;
        let rows = statement.query_map(params, map).map_err(backend)?;
        rows.collect::<Result<Vec<T>, _>>().map_err(backend)
    }

    fn one<T, P: Params>(
        &self,
        sql: &str,
        params: P,
        map: fn(&Row) -> rusqlite::Result<T>,
    ) -> StoreResult<Option<T>> {
        self.statements.set(self.statements.get() + 1);
        let mut statement = self.connection.prepare_cached(sql).map_err(backend)?;
        statement.query_row(params, map).optional().map_err(backend)
    }
}

pub(crate) const MEETING_COLUMNS: &str =
    "id, external_id, title, started_at, ended_at, platform, series, content_hash";
pub(crate) const ENTITY_COLUMNS: &str = "id, kind, canonical_name, manual_name, normalized_key, emails, domains, external_keys, \
     status, merged_into, do_not_merge_with, manual_attributes, manual_brief, pinned, scope_meeting, \
     first_observed_at, last_observed_at, current_attributes, current_brief, weight_basis, weight_latest";
pub(crate) const CLAIM_UPSERT: &str = " ON CONFLICT (owner, id) DO UPDATE SET subject = excluded.subject, \
     predicate = excluded.predicate, object_entity = excluded.object_entity, \
     value_text = excluded.value_text, value_json = excluded.value_json, value_key = excluded.value_key, \
     context_entity = excluded.context_entity, cardinality = excluded.cardinality, \
     group_key = excluded.group_key, explicit_valid_from = excluded.explicit_valid_from, \
     explicit_valid_to = excluded.explicit_valid_to, retracted_at = excluded.retracted_at, \
     recorded_at = excluded.recorded_at, status = excluded.status, authority = excluded.authority, \
     valid_from = excluded.valid_from, valid_to = excluded.valid_to, \
     first_observed_at = excluded.first_observed_at, last_observed_at = excluded.last_observed_at, \
     superseded_at = excluded.superseded_at, superseded_by = excluded.superseded_by, \
     conflict = excluded.conflict, end_outcome = excluded.end_outcome, periods = excluded.periods";
pub(crate) const CLAIM_COLUMNS: &str = "id, subject, predicate, object_entity, value_text, value_json, value_key, context_entity, \
     cardinality, group_key, explicit_valid_from, explicit_valid_to, retracted_at, recorded_at, status, authority, \
     valid_from, valid_to, first_observed_at, last_observed_at, superseded_at, superseded_by, conflict, end_outcome, periods";
pub(crate) const EVIDENCE_COLUMNS: &str = "id, claim, source_kind, source_id, meeting, observed_at, segment_ids, start_ms, end_ms, \
     speaker, speaker_label, attribution, quote, source_url, confidence, extraction_run_id, kind, authority, outcome, recorded_at";
pub(crate) const LINK_COLUMNS: &str =
    "id, entity, meeting, source_kind, source_id, resource_type, url, external_key, title, \
     provenance, ingested_status, first_seen_at, last_seen_at";
pub(crate) const TASK_COLUMNS: &str =
    "id, meeting, title, status, assignee, project, due_at, evidence, created_at";
pub(crate) const REVISION_COLUMNS: &str =
    "id, action, target, secondary, before, after, created_at";
pub(crate) const SUGGESTION_COLUMNS: &str =
    "id, kind, status, target, secondary, payload, created_at";

macro_rules! sql {
    ($($part:expr),+ $(,)?) => { &[$($part),+].concat() };
}

impl Tx for SqliteTx<'_> {
    fn upsert_series(&mut self, series: &MeetingSeries) -> StoreResult<()> {
        self.exec(
            "INSERT INTO meeting_series (owner, id, calendar_account, calendar_id, recurring_event_id) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (owner, id) DO NOTHING",
            params![self.owner, series.id, series.calendar_account, series.calendar_id, series.recurring_event_id],
        )
        .map(|_| ())
    }

    fn find_series(&mut self, id: &str) -> StoreResult<Option<MeetingSeries>> {
        self.one(
            "SELECT id, calendar_account, calendar_id, recurring_event_id FROM meeting_series WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
            |row| {
                Ok(MeetingSeries {
                    id: row.get(0)?,
                    calendar_account: row.get(1)?,
                    calendar_id: row.get(2)?,
                    recurring_event_id: row.get(3)?,
                })
            },
        )
    }

    fn insert_meeting(&mut self, meeting: &Meeting) -> StoreResult<()> {
        self.exec(
            "INSERT INTO meetings (owner, id, external_id, title, started_at, ended_at, platform, series, content_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                self.owner, meeting.id, meeting.external_id, meeting.title, meeting.started_at.0,
                meeting.ended_at.map(|t| t.0), meeting.platform, meeting.series, meeting.content_hash
            ],
        )
        .map(|_| ())
    }

    fn find_meeting(&mut self, id: &str) -> StoreResult<Option<Meeting>> {
        memo!(
            self,
            meetings,
            id,
            self.one(
                sql!(
                    "SELECT ",
                    MEETING_COLUMNS,
                    " FROM meetings WHERE owner = ?1 AND id = ?2"
                ),
                params![self.owner, id],
                meeting_row,
            )
        )
    }

    fn find_meeting_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Meeting>> {
        self.one(
            sql!(
                "SELECT ",
                MEETING_COLUMNS,
                " FROM meetings WHERE owner = ?1 AND external_id = ?2"
            ),
            params![self.owner, external_id],
            meeting_row,
        )
    }

    fn list_meetings(&mut self) -> StoreResult<Vec<Meeting>> {
        self.all(
            sql!(
                "SELECT ",
                MEETING_COLUMNS,
                " FROM meetings WHERE owner = ?1 ORDER BY started_at, id"
            ),
            params![self.owner],
            meeting_row,
        )
    }

    fn delete_meeting(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM meetings WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn insert_participant(&mut self, p: &Participant) -> StoreResult<()> {
        self.exec(
            "INSERT INTO participants (owner, meeting, idx, display_name, email, platform_stable_id, device_id, \
             speaker_label, person_entity, excluded) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                self.owner, p.meeting, p.idx, p.display_name, p.email, p.platform_stable_id, p.device_id,
                p.speaker_label, p.person_entity, p.excluded
            ],
        )
        .map(|_| ())
    }

    fn list_participants(&mut self, meeting: &str) -> StoreResult<Vec<Participant>> {
        self.all(
            "SELECT meeting, idx, display_name, email, platform_stable_id, device_id, speaker_label, person_entity, \
             excluded FROM participants WHERE owner = ?1 AND meeting = ?2 ORDER BY idx",
            params![self.owner, meeting],
            participant_row,
        )
    }

    fn insert_segment(&mut self, s: &Segment) -> StoreResult<()> {
        self.insert_segment_rows(std::slice::from_ref(s))
    }

    fn list_segments(&mut self, meeting: &str) -> StoreResult<Vec<Segment>> {
        self.all(
            "SELECT meeting, id, seq, start_ms, end_ms, speaker_label, attribution, text FROM segments \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY seq",
            params![self.owner, meeting],
            segment_row,
        )
    }

    fn insert_note(&mut self, n: &Note) -> StoreResult<()> {
        self.exec(
            "INSERT INTO notes (owner, id, meeting, local_id, created_at, author, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![self.owner, n.id, n.meeting, n.local_id, n.created_at.0, n.author, n.text],
        )
        .map(|_| ())
    }

    fn find_note(&mut self, id: &str) -> StoreResult<Option<Note>> {
        self.one(
            "SELECT id, meeting, local_id, created_at, author, text FROM notes WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
            note_row,
        )
    }

    fn list_notes(&mut self, meeting: &str) -> StoreResult<Vec<Note>> {
        self.all(
            "SELECT id, meeting, local_id, created_at, author, text FROM notes WHERE owner = ?1 AND meeting = ?2 \
             ORDER BY created_at, id",
            params![self.owner, meeting],
            note_row,
        )
    }

    fn delete_note(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM notes WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn insert_attachment(&mut self, a: &Attachment) -> StoreResult<()> {
        self.exec(
            "INSERT INTO attachments (owner, id, meeting, local_id, kind, filename, media_type, sha256, size, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                self.owner, a.id, a.meeting, a.local_id, a.kind.as_str(), a.filename, a.media_type, a.sha256, a.size,
                a.created_at.0
            ],
        )
        .map(|_| ())
    }

    fn find_attachment(&mut self, id: &str) -> StoreResult<Option<Attachment>> {
        self.one(
            "SELECT id, meeting, local_id, kind, filename, media_type, sha256, size, created_at FROM attachments \
             WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
            attachment_row,
        )
    }

    fn list_attachments(&mut self, meeting: &str) -> StoreResult<Vec<Attachment>> {
        self.all(
            "SELECT id, meeting, local_id, kind, filename, media_type, sha256, size, created_at FROM attachments \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY created_at, id",
            params![self.owner, meeting],
            attachment_row,
        )
    }

    fn delete_attachment(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM attachments WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn count_attachments_with_sha256(&mut self, sha256: &str) -> StoreResult<i64> {
        Ok(self
            .one(
                "SELECT count(*) FROM attachments WHERE owner = ?1 AND sha256 = ?2",
                params![self.owner, sha256],
                |row| row.get(0),
            )?
            .unwrap_or(0))
    }

    fn upsert_entity(&mut self, e: &Entity) -> StoreResult<()> {
        self.exec(
            sql!(
                "INSERT INTO entities (owner, ",
                ENTITY_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22) \
                 ON CONFLICT (owner, id) DO UPDATE SET kind = excluded.kind, canonical_name = excluded.canonical_name, \
                 manual_name = excluded.manual_name, normalized_key = excluded.normalized_key, emails = excluded.emails, \
                 domains = excluded.domains, external_keys = excluded.external_keys, status = excluded.status, \
                 merged_into = excluded.merged_into, do_not_merge_with = excluded.do_not_merge_with, \
                 manual_attributes = excluded.manual_attributes, manual_brief = excluded.manual_brief, \
                 pinned = excluded.pinned, scope_meeting = excluded.scope_meeting, \
                 first_observed_at = excluded.first_observed_at, last_observed_at = excluded.last_observed_at, \
                 current_attributes = excluded.current_attributes, current_brief = excluded.current_brief, \
                 weight_basis = excluded.weight_basis, weight_latest = excluded.weight_latest"
            ),
            params![
                self.owner, e.id, e.kind.as_str(), e.canonical_name, e.manual_name, e.normalized_key,
                to_json(&e.emails), to_json(&e.domains), to_json(&e.external_keys), e.status.as_str(), e.merged_into,
                to_json(&e.do_not_merge_with), to_json(&e.manual_attributes), e.manual_brief, e.pinned, e.scope_meeting,
                e.first_observed_at.map(|t| t.0), e.last_observed_at.map(|t| t.0), to_json(&e.current_attributes),
                e.current_brief, e.weight_basis, e.weight_latest.map(|t| t.0)
            ],
        )?;
        self.entities.insert(e.id.clone(), Some(e.clone()));
        Ok(())
    }

    fn update_entity_observed(&mut self, id: &str, observed: &Observed) -> StoreResult<()> {
        // Four columns instead of the whole row: no JSON column serialized again, no conflict
        // path, and no trigger on the names run (BENCHMARKS.md, twentieth round).
        self.exec(
            "UPDATE entities SET first_observed_at = ?3, last_observed_at = ?4, weight_basis = ?5, \
             weight_latest = ?6 WHERE owner = ?1 AND id = ?2",
            params![
                self.owner,
                id,
                observed.first_observed_at.map(|t| t.0),
                observed.last_observed_at.map(|t| t.0),
                observed.weight_basis,
                observed.weight_latest.map(|t| t.0)
            ],
        )?;
        // The transaction's copy of the row, when it holds one, follows.
        if let Some(Some(entity)) = self.entities.get_mut(id) {
            entity.set_observed(*observed);
        }
        Ok(())
    }

    fn find_entity(&mut self, id: &str) -> StoreResult<Option<Entity>> {
        let load = |tx: &Self| {
            tx.one(
                sql!(
                    "SELECT ",
                    ENTITY_COLUMNS,
                    " FROM entities WHERE owner = ?1 AND id = ?2"
                ),
                params![tx.owner, id],
                entity_row,
            )
        };
        if let Some(known) = self.held_pages().and_then(|pages| pages.entity(id)) {
            return Ok(known);
        }
        if self.cache.is_none() {
            // The writer's memo of entity rows (kept current by upsert_entity/delete_entity).
            if let Some(known) = self.entities.get(id) {
                return Ok(known.clone());
            }
            let found = load(self)?;
            self.entities.insert(id.to_string(), found.clone());
            return Ok(found);
        }
        memo!(self, entities, id, load(self))
    }

    fn list_entities(&mut self) -> StoreResult<Vec<Entity>> {
        self.all(
            sql!(
                "SELECT ",
                ENTITY_COLUMNS,
                " FROM entities WHERE owner = ?1 ORDER BY kind, canonical_name, id"
            ),
            params![self.owner],
            entity_row,
        )
    }

    fn delete_entity(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM entities WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )?;
        self.entities.insert(id.to_string(), None);
        // The entity's identifiers went with it (`ON DELETE CASCADE`).
        self.identifiers.entity_deleted(id);
        Ok(())
    }

    fn insert_identifier(&mut self, scheme: &str, value: &str, entity: &str) -> StoreResult<()> {
        let inserted = self.exec(
            "INSERT INTO entity_identifiers (owner, scheme, value, entity) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (owner, scheme, value) DO NOTHING",
            params![self.owner, scheme, value, entity],
        )?;
        self.identifiers
            .inserted(scheme, value, entity, inserted > 0);
        Ok(())
    }

    fn find_entity_by_identifier(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Option<String>> {
        if let Some(known) = self.identifiers.get(scheme, value) {
            return Ok(known);
        }
        let found: Option<String> = self.one(
            "SELECT entity FROM entity_identifiers WHERE owner = ?1 AND scheme = ?2 AND value = ?3",
            params![self.owner, scheme, value],
            |row| row.get(0),
        )?;
        self.identifiers.found(scheme, value, found.clone());
        Ok(found)
    }

    fn insert_alias(&mut self, a: &Alias) -> StoreResult<()> {
        self.exec(
            "INSERT INTO entity_aliases (owner, entity, alias, alias_key, meeting, observed_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, entity, alias, meeting) DO NOTHING",
            params![self.owner, a.entity, a.alias, lore_core::normalize::value_key(&a.alias), a.meeting, a.observed_at.0],
        )
        .map(|_| ())
    }

    fn list_aliases(&mut self, entity: &str) -> StoreResult<Vec<Alias>> {
        self.all(
            "SELECT entity, alias, meeting, observed_at FROM entity_aliases WHERE owner = ?1 AND entity = ?2 \
             ORDER BY observed_at, alias, meeting",
            params![self.owner, entity],
            |row| Ok(Alias { entity: row.get(0)?, alias: row.get(1)?, meeting: row.get(2)?, observed_at: Ts(row.get(3)?) }),
        )
    }

    fn list_entities_by_alias_key(&mut self, alias_key: &str) -> StoreResult<Vec<String>> {
        self.all(
            read_side::ENTITIES_BY_ALIAS_KEY,
            params![self.owner, alias_key],
            |row| row.get(0),
        )
    }

    fn delete_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>> {
        // One statement: the rows go and name their entities on the way out.
        let mut entities: Vec<String> = self.all(
            "DELETE FROM entity_aliases WHERE owner = ?1 AND meeting = ?2 RETURNING entity",
            params![self.owner, meeting],
            |row| row.get(0),
        )?;
        entities.sort();
        entities.dedup();
        Ok(entities)
    }

    fn count_entity_references(&mut self, entity: &str) -> StoreResult<i64> {
        Ok(self
            .one(
                "SELECT (SELECT count(*) FROM (SELECT 1 FROM claims WHERE owner = ?1 AND subject = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM claims WHERE owner = ?1 AND object_entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM claims WHERE owner = ?1 AND context_entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM entity_aliases WHERE owner = ?1 AND entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM participants WHERE owner = ?1 AND person_entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE owner = ?1 AND (assignee = ?2 OR project = ?2) LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM resource_links WHERE owner = ?1 AND entity = ?2 LIMIT 1) AS r)",
                params![self.owner, entity],
                |row| row.get(0),
            )?
            .unwrap_or(0))
    }

    fn insert_claim(&mut self, c: &Claim) -> StoreResult<()> {
        self.write_claim(c, "")
    }

    fn find_claim(&mut self, id: &str) -> StoreResult<Option<Claim>> {
        self.one(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND id = ?2"
            ),
            params![self.owner, id],
            claim_row,
        )
    }

    fn update_claim_derived(&mut self, id: &str, d: &ClaimDerived) -> StoreResult<()> {
        // SQLite rewrites the entries of every index holding a column an UPDATE sets, changed or
        // not, so the indexed columns (status, authority, validity: the subject, object and
        // predicate indexes) are set only when one of them changes: first every column, for a row
        // whose indexed columns change (a new claim settling, a change of status: one statement),
        // else the others alone. Most updates (a claim losing or gaining evidence) change
        // observation times only, and each skipped index entry is a page the commit does not write.
        let (first, last) = (
            d.first_observed_at.map(|t| t.0),
            d.last_observed_at.map(|t| t.0),
        );
        let superseded_at = d.superseded_at.map(|t| t.0);
        let (conflict, outcome) = (
            d.conflict.map(|r| r.as_str()),
            d.end_outcome.map(|o| o.as_str()),
        );
        let (valid_from, valid_to) = (d.valid_from.map(|t| t.0), d.valid_to.map(|t| t.0));
        let periods = to_json(&d.periods);
        let indexed = self.exec(
            "UPDATE claims SET status = ?3, authority = ?4, valid_from = ?5, valid_to = ?6, \
             first_observed_at = ?7, last_observed_at = ?8, superseded_at = ?9, superseded_by = ?10, \
             conflict = ?11, end_outcome = ?12, periods = ?13 \
             WHERE owner = ?1 AND id = ?2 AND (status IS NOT ?3 OR authority IS NOT ?4 \
             OR valid_from IS NOT ?5 OR valid_to IS NOT ?6)",
            params![
                self.owner, id, d.status.as_str(), d.authority.as_str(), valid_from, valid_to,
                first, last, superseded_at, d.superseded_by, conflict, outcome, periods
            ],
        )?;
        if indexed == 1 {
            return Ok(());
        }
        let changed = self.exec(
            "UPDATE claims SET first_observed_at = ?3, last_observed_at = ?4, superseded_at = ?5, \
             superseded_by = ?6, conflict = ?7, end_outcome = ?8, periods = ?9 WHERE owner = ?1 AND id = ?2",
            params![
                self.owner, id, first, last, superseded_at, d.superseded_by, conflict, outcome,
                periods
            ],
        )?;
        expect_one(changed, "claim", id)
    }

    fn update_claim_retracted(&mut self, id: &str, retracted_at: Option<Ts>) -> StoreResult<()> {
        let changed = self.exec(
            "UPDATE claims SET retracted_at = ?3 WHERE owner = ?1 AND id = ?2",
            params![self.owner, id, retracted_at.map(|t| t.0)],
        )?;
        expect_one(changed, "claim", id)
    }

    fn delete_claim(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM claims WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn list_claims_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Claim>> {
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND subject = ?2 AND predicate = ?3 AND context_entity IS ?4 ORDER BY id"
            ),
            params![self.owner, slot.subject, slot.predicate, slot.context],
            claim_row,
        )
    }

    fn list_claims_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Claim>> {
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND subject = ?2 ORDER BY predicate, id"
            ),
            params![self.owner, entity],
            claim_row,
        )
    }

    fn list_claims_mentioning(&mut self, entity: &str) -> StoreResult<Vec<Claim>> {
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND id IN (SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2 \
                 UNION SELECT id FROM claims WHERE owner = ?1 AND context_entity = ?2) ORDER BY predicate, id"
            ),
            params![self.owner, entity],
            claim_row,
        )
    }

    fn list_claims(&mut self) -> StoreResult<Vec<Claim>> {
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 ORDER BY id"
            ),
            params![self.owner],
            claim_row,
        )
    }

    fn insert_evidence(&mut self, e: &Evidence) -> StoreResult<bool> {
        let inserted = self.exec(
            sql!(
                "INSERT INTO evidence (owner, ",
                EVIDENCE_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21) \
                 ON CONFLICT (owner, id) DO NOTHING"
            ),
            params![
                self.owner, e.id, e.claim, e.source_kind.as_str(), e.source_id, e.meeting, e.observed_at.0,
                to_json(&e.segment_ids), e.start_ms, e.end_ms, e.speaker, e.speaker_label,
                e.attribution.map(|a| a.as_str()), e.quote, e.source_url, e.confidence, e.extraction_run_id,
                e.kind.as_str(), e.authority.as_str(), e.outcome.map(|o| o.as_str()), e.recorded_at.0
            ],
        )?;
        Ok(inserted == 1)
    }

    fn list_evidence_by_claim(&mut self, claim: &str) -> StoreResult<Vec<Evidence>> {
        self.all(
            sql!(
                "SELECT ",
                EVIDENCE_COLUMNS,
                " FROM evidence WHERE owner = ?1 AND claim = ?2 ORDER BY observed_at, start_ms, id"
            ),
            params![self.owner, claim],
            evidence_row,
        )
    }

    fn list_evidence_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Evidence>> {
        self.all(
            sql!(
                "SELECT ",
                EVIDENCE_COLUMNS,
                " FROM evidence WHERE owner = ?1 AND meeting = ?2 ORDER BY id"
            ),
            params![self.owner, meeting],
            evidence_row,
        )
    }

    fn list_evidence_by_source(
        &mut self,
        kind: SourceKind,
        source_id: &str,
    ) -> StoreResult<Vec<Evidence>> {
        self.all(
            sql!("SELECT ", EVIDENCE_COLUMNS, " FROM evidence WHERE owner = ?1 AND source_kind = ?2 AND source_id = ?3 ORDER BY id"),
            params![self.owner, kind.as_str(), source_id],
            evidence_row,
        )
    }

    fn list_evidence(&mut self) -> StoreResult<Vec<Evidence>> {
        self.all(
            sql!(
                "SELECT ",
                EVIDENCE_COLUMNS,
                " FROM evidence WHERE owner = ?1 ORDER BY id"
            ),
            params![self.owner],
            evidence_row,
        )
    }

    fn delete_evidence(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM evidence WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn insert_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()> {
        self.exec(
            "INSERT INTO claim_supersedes (owner, claim, target, evidence) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT DO NOTHING",
            params![self.owner, link.claim, link.target, link.evidence],
        )
        .map(|_| ())
    }

    fn list_supersedes_links(&mut self, claim: &str) -> StoreResult<Vec<SupersedesLink>> {
        self.all(
            "SELECT claim, target, evidence FROM claim_supersedes WHERE owner = ?1 AND claim = ?2 ORDER BY target, evidence",
            params![self.owner, claim],
            |row| Ok(SupersedesLink { claim: row.get(0)?, target: row.get(1)?, evidence: row.get(2)? }),
        )
    }

    fn insert_status_change(&mut self, change: &StatusChange) -> StoreResult<()> {
        self.exec(
            "INSERT INTO claim_status_history (owner, claim, seq, recorded_at, derived) VALUES (?1, ?2, \
             (SELECT coalesce(max(seq), 0) + 1 FROM claim_status_history WHERE owner = ?1 AND claim = ?2), ?3, ?4)",
            params![self.owner, change.claim, change.recorded_at.0, to_json(&change.derived)],
        )
        .map(|_| ())
    }

    fn list_status_changes(&mut self, claim: &str) -> StoreResult<Vec<StatusChange>> {
        self.all(
            "SELECT claim, recorded_at, derived FROM claim_status_history WHERE owner = ?1 AND claim = ?2 ORDER BY seq",
            params![self.owner, claim],
            |row| Ok(StatusChange { claim: row.get(0)?, recorded_at: Ts(row.get(1)?), derived: from_json(row, 2)? }),
        )
    }

    fn upsert_resource_link(&mut self, l: &ResourceLink) -> StoreResult<()> {
        self.exec(
            sql!(
                "INSERT INTO resource_links (owner, ",
                LINK_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
                 ON CONFLICT (owner, id) DO UPDATE SET title = coalesce(excluded.title, title), \
                 first_seen_at = min(first_seen_at, excluded.first_seen_at), \
                 last_seen_at = max(last_seen_at, excluded.last_seen_at)"
            ),
            params![
                self.owner,
                l.id,
                l.entity,
                l.meeting,
                l.source_kind.as_str(),
                l.source_id,
                l.resource_type.as_str(),
                l.url,
                l.external_key,
                l.title,
                l.provenance.as_str(),
                l.ingested_status,
                l.first_seen_at.0,
                l.last_seen_at.0
            ],
        )
        .map(|_| ())
    }

    fn list_resource_links_by_entity(&mut self, entity: &str) -> StoreResult<Vec<ResourceLink>> {
        if let Some(links) = self.held_pages().and_then(|pages| pages.links(entity)) {
            return Ok(links);
        }
        self.all(
            &read_side::LINKS_BY_ENTITY,
            params![self.owner, entity],
            link_row,
        )
    }

    fn list_resource_links_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<ResourceLink>> {
        self.all(
            sql!(
                "SELECT ",
                LINK_COLUMNS,
                " FROM resource_links WHERE owner = ?1 AND meeting = ?2 ORDER BY first_seen_at, id"
            ),
            params![self.owner, meeting],
            link_row,
        )
    }

    fn delete_resource_link(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM resource_links WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn insert_task(&mut self, t: &Task) -> StoreResult<()> {
        self.exec(
            sql!(
                "INSERT OR REPLACE INTO tasks (owner, ",
                TASK_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
            ),
            params![
                self.owner,
                t.id,
                t.meeting,
                t.title,
                t.status.as_str(),
                t.assignee,
                t.project,
                t.due_at.map(|d| d.0),
                t.evidence.to_string(),
                t.created_at.0
            ],
        )
        .map(|_| ())
    }

    fn list_tasks_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Task>> {
        self.all(
            sql!(
                "SELECT ",
                TASK_COLUMNS,
                " FROM tasks WHERE owner = ?1 AND meeting = ?2 ORDER BY created_at, id"
            ),
            params![self.owner, meeting],
            task_row,
        )
    }

    fn list_tasks_by_entity(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        memo!(
            self,
            tasks_by_entity,
            entity,
            self.all(
                sql!(
                    "SELECT ",
                    TASK_COLUMNS,
                    " FROM tasks WHERE owner = ?1 AND id IN (SELECT id FROM tasks WHERE owner = ?1 AND assignee = ?2 \
                     UNION SELECT id FROM tasks WHERE owner = ?1 AND project = ?2) ORDER BY created_at, id"
                ),
                params![self.owner, entity],
                task_row,
            )
        )
    }

    fn delete_task(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM tasks WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn insert_run(&mut self, r: &ExtractionRun) -> StoreResult<()> {
        self.exec(
            "INSERT INTO extraction_runs (owner, id, meeting, content_hash, extractor, revision, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![self.owner, r.id, r.meeting, r.content_hash, r.extractor, r.revision, r.created_at.0],
        )
        .map(|_| ())
    }

    fn find_run(
        &mut self,
        meeting: &str,
        content_hash: &str,
        extractor: &str,
    ) -> StoreResult<Option<ExtractionRun>> {
        self.one(
            "SELECT id, meeting, content_hash, extractor, revision, created_at FROM extraction_runs \
             WHERE owner = ?1 AND meeting = ?2 AND content_hash = ?3 AND extractor = ?4",
            params![self.owner, meeting, content_hash, extractor],
            |row| {
                Ok(ExtractionRun {
                    id: row.get(0)?,
                    meeting: row.get(1)?,
                    content_hash: row.get(2)?,
                    extractor: row.get(3)?,
                    revision: row.get(4)?,
                    created_at: Ts(row.get(5)?),
                })
            },
        )
    }

    fn delete_runs_by_meeting(&mut self, meeting: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM extraction_runs WHERE owner = ?1 AND meeting = ?2",
            params![self.owner, meeting],
        )
        .map(|_| ())
    }

    fn insert_revision(&mut self, r: &Revision) -> StoreResult<()> {
        self.insert_encoded_revision(&crate::EncodedRevision::encode(r))
    }

    fn insert_encoded_revision(&mut self, r: &crate::EncodedRevision) -> StoreResult<()> {
        self.exec(
            sql!(
                "INSERT INTO revisions (owner, ",
                REVISION_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ),
            params![
                self.owner,
                r.id,
                r.action.as_str(),
                r.target,
                r.secondary,
                snapshot_text_to_sql(&r.before),
                snapshot_text_to_sql(&r.after),
                r.created_at.0
            ],
        )?;
        for meeting in &r.meetings {
            self.exec(INSERT_REVISION_MEETING, params![self.owner, meeting, r.id])?;
        }
        Ok(())
    }

    fn list_revisions_naming_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>> {
        self.all(
            REVISIONS_NAMING_MEETING,
            params![self.owner, meeting],
            |row| row.get(0),
        )
    }

    fn set_entity_redirect(&mut self, old_id: &str, new_id: &str) -> StoreResult<()> {
        self.exec(SET_ENTITY_REDIRECT, params![self.owner, old_id, new_id])
            .map(|_| ())
    }

    fn find_entity_redirect(&mut self, old_id: &str) -> StoreResult<Option<String>> {
        self.one(FIND_ENTITY_REDIRECT, params![self.owner, old_id], |row| {
            row.get(0)
        })
    }

    fn list_entity_redirects(&mut self) -> StoreResult<Vec<(String, String)>> {
        self.all(LIST_ENTITY_REDIRECTS, params![self.owner], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
    }

    fn replace_revision_snapshots(
        &mut self,
        id: &str,
        before: &serde_json::Value,
        after: &serde_json::Value,
    ) -> StoreResult<()> {
        self.exec(
            REPLACE_REVISION_SNAPSHOTS,
            params![
                self.owner,
                id,
                snapshot_to_sql(before),
                snapshot_to_sql(after)
            ],
        )
        .map(|_| ())
    }

    fn find_revision(&mut self, id: &str) -> StoreResult<Option<Revision>> {
        self.one(
            sql!(
                "SELECT ",
                REVISION_COLUMNS,
                " FROM revisions WHERE owner = ?1 AND id = ?2"
            ),
            params![self.owner, id],
            revision_row,
        )
    }

    fn list_revisions(&mut self, limit: usize) -> StoreResult<Vec<Revision>> {
        self.all(
            sql!(
                "SELECT ",
                REVISION_COLUMNS,
                " FROM revisions WHERE owner = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2"
            ),
            params![self.owner, limit as i64],
            revision_row,
        )
    }

    fn upsert_suggestion(&mut self, s: &Suggestion) -> StoreResult<()> {
        self.exec(
            sql!(
                "INSERT OR REPLACE INTO suggestions (owner, ",
                SUGGESTION_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ),
            params![
                self.owner,
                s.id,
                s.kind,
                s.status.as_str(),
                s.target,
                s.secondary,
                s.payload.to_string(),
                s.created_at.0
            ],
        )
        .map(|_| ())
    }

    fn find_suggestion(&mut self, id: &str) -> StoreResult<Option<Suggestion>> {
        self.one(
            sql!(
                "SELECT ",
                SUGGESTION_COLUMNS,
                " FROM suggestions WHERE owner = ?1 AND id = ?2"
            ),
            params![self.owner, id],
            suggestion_row,
        )
    }

    fn list_suggestions(&mut self) -> StoreResult<Vec<Suggestion>> {
        self.all(
            sql!(
                "SELECT ",
                SUGGESTION_COLUMNS,
                " FROM suggestions WHERE owner = ?1 ORDER BY created_at, id"
            ),
            params![self.owner],
            suggestion_row,
        )
    }

    fn delete_suggestion(&mut self, id: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM suggestions WHERE owner = ?1 AND id = ?2",
            params![self.owner, id],
        )
        .map(|_| ())
    }

    fn upsert_tag(&mut self, tag: &Tag) -> StoreResult<()> {
        self.exec(
            "INSERT OR REPLACE INTO tags (owner, name, description, ranges) VALUES (?1, ?2, ?3, ?4)",
            params![self.owner, tag.name, tag.description, tag.ranges.to_string()],
        )
        .map(|_| ())
    }

    fn list_tags(&mut self) -> StoreResult<Vec<Tag>> {
        self.all(
            "SELECT name, description, ranges FROM tags WHERE owner = ?1 ORDER BY name",
            params![self.owner],
            |row| {
                Ok(Tag {
                    name: row.get(0)?,
                    description: row.get(1)?,
                    ranges: from_json(row, 2)?,
                })
            },
        )
    }

    fn upsert_claim(&mut self, c: &Claim) -> StoreResult<()> {
        self.write_claim(c, CLAIM_UPSERT)
    }

    fn delete_alias(&mut self, a: &Alias) -> StoreResult<()> {
        self.exec(
            "DELETE FROM entity_aliases WHERE owner = ?1 AND entity = ?2 AND alias = ?3 AND meeting = ?4",
            params![self.owner, a.entity, a.alias, a.meeting],
        )
        .map(|_| ())
    }

    fn list_identifiers_by_entity(&mut self, entity: &str) -> StoreResult<Vec<(String, String)>> {
        self.all(
            "SELECT scheme, value FROM entity_identifiers WHERE owner = ?1 AND entity = ?2 ORDER BY scheme, value",
            params![self.owner, entity],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
    }

    fn delete_identifier(&mut self, scheme: &str, value: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM entity_identifiers WHERE owner = ?1 AND scheme = ?2 AND value = ?3",
            params![self.owner, scheme, value],
        )?;
        self.identifiers.found(scheme, value, None);
        Ok(())
    }

    fn list_participants_by_person(&mut self, entity: &str) -> StoreResult<Vec<Participant>> {
        self.all(
            "SELECT meeting, idx, display_name, email, platform_stable_id, device_id, speaker_label, person_entity, \
             excluded FROM participants WHERE owner = ?1 AND person_entity = ?2 ORDER BY meeting, idx",
            params![self.owner, entity],
            participant_row,
        )
    }

    fn update_participant(&mut self, p: &Participant) -> StoreResult<()> {
        let changed = self.exec(
            "UPDATE participants SET display_name = ?4, email = ?5, platform_stable_id = ?6, device_id = ?7, \
             speaker_label = ?8, person_entity = ?9, excluded = ?10 WHERE owner = ?1 AND meeting = ?2 AND idx = ?3",
            params![
                self.owner, p.meeting, p.idx, p.display_name, p.email, p.platform_stable_id, p.device_id,
                p.speaker_label, p.person_entity, p.excluded
            ],
        )?;
        expect_one(changed, "participant", &format!("{}/{}", p.meeting, p.idx))
    }

    fn delete_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()> {
        self.exec(
            "DELETE FROM claim_supersedes WHERE owner = ?1 AND claim = ?2 AND target = ?3 AND evidence = ?4",
            params![self.owner, link.claim, link.target, link.evidence],
        )
        .map(|_| ())
    }

    fn find_task(&mut self, id: &str) -> StoreResult<Option<Task>> {
        self.one(
            sql!(
                "SELECT ",
                TASK_COLUMNS,
                " FROM tasks WHERE owner = ?1 AND id = ?2"
            ),
            params![self.owner, id],
            task_row,
        )
    }

    fn upsert_participant_mapping(&mut self, m: &ParticipantMapping) -> StoreResult<()> {
        self.exec(
            "INSERT INTO participant_mappings (owner, meeting, key, source, display_name, email, person_entity) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (owner, meeting, key) DO UPDATE SET \
             source = excluded.source, display_name = excluded.display_name, email = excluded.email, \
             person_entity = excluded.person_entity",
            params![self.owner, m.meeting, m.key, m.source.as_str(), m.display_name, m.email, m.person_entity],
        )
        .map(|_| ())
    }

    fn list_participant_mappings(&mut self, meeting: &str) -> StoreResult<Vec<ParticipantMapping>> {
        self.all(
            "SELECT meeting, key, source, display_name, email, person_entity FROM participant_mappings \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY key",
            params![self.owner, meeting],
            participant_mapping_row,
        )
    }

    fn delete_participant_mapping(&mut self, meeting: &str, key: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM participant_mappings WHERE owner = ?1 AND meeting = ?2 AND key = ?3",
            params![self.owner, meeting, key],
        )
        .map(|_| ())
    }

    fn delete_participant(&mut self, meeting: &str, idx: i64) -> StoreResult<()> {
        self.exec(
            "DELETE FROM participants WHERE owner = ?1 AND meeting = ?2 AND idx = ?3",
            params![self.owner, meeting, idx],
        )
        .map(|_| ())
    }

    fn upsert_task_decision(&mut self, task: &str, status: TaskStatus) -> StoreResult<()> {
        self.exec(
            "INSERT INTO task_decisions (owner, task, status) VALUES (?1, ?2, ?3) \
             ON CONFLICT (owner, task) DO UPDATE SET status = excluded.status",
            params![self.owner, task, status.as_str()],
        )
        .map(|_| ())
    }

    fn find_task_decision(&mut self, task: &str) -> StoreResult<Option<TaskStatus>> {
        self.one(
            "SELECT status FROM task_decisions WHERE owner = ?1 AND task = ?2",
            params![self.owner, task],
            |row| {
                let text: String = row.get(0)?;
                TaskStatus::parse(&text).ok_or_else(|| {
                    rusqlite::Error::FromSqlConversionFailure(
                        0,
                        rusqlite::types::Type::Text,
                        format!("unknown task status '{text}'").into(),
                    )
                })
            },
        )
    }

    fn delete_task_decision(&mut self, task: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM task_decisions WHERE owner = ?1 AND task = ?2",
            params![self.owner, task],
        )
        .map(|_| ())
    }

    fn list_runs(&mut self, meeting: &str) -> StoreResult<Vec<ExtractionRun>> {
        self.all(
            "SELECT id, meeting, content_hash, extractor, revision, created_at FROM extraction_runs \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY created_at, id",
            params![self.owner, meeting],
            |row| {
                Ok(ExtractionRun {
                    id: row.get(0)?,
                    meeting: row.get(1)?,
                    content_hash: row.get(2)?,
                    extractor: row.get(3)?,
                    revision: row.get(4)?,
                    created_at: Ts(row.get(5)?),
                })
            },
        )
    }

    fn search_candidates(
        &mut self,
        query: &lore_core::search::SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<crate::SearchCandidate>> {
        self.flush_search_in_writer()?;
        self.read_search_candidates(query, kind, limit)
    }

    fn find_search_snippet(
        &mut self,
        query: &lore_core::search::SearchQuery,
        doc: i64,
    ) -> StoreResult<Option<String>> {
        self.flush_search_in_writer()?;
        self.read_search_snippet(query, doc)
    }

    fn list_status_as_of(&mut self, subject: &str, at: Ts) -> StoreResult<Vec<StatusChange>> {
        self.read_status_as_of(subject, at)
    }

    fn replace_status_history(&mut self, claim: &str, rows: &[StatusChange]) -> StoreResult<()> {
        self.write_status_history(claim, rows)
    }

    fn replace_status_history_read(
        &mut self,
        claim: &str,
        stored: &[StatusChange],
        rows: &[StatusChange],
    ) -> StoreResult<()> {
        self.write_status_history_read(claim, stored, rows)
    }

    fn list_claims_by_predicate(&mut self, predicate: &str) -> StoreResult<Vec<Claim>> {
        self.read_claims_by_predicate(predicate)
    }

    fn list_claims_linking(&mut self, entity: &str, limit: usize) -> StoreResult<Vec<Claim>> {
        memo_limited!(
            self,
            claims_linking,
            entity,
            limit,
            self.read_claims_linking(entity, limit)
        )
    }

    fn list_meeting_links_by_entity(
        &mut self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<crate::MeetingLink>> {
        memo_limited!(
            self,
            links_by_entity,
            entity,
            limit,
            self.read_meeting_links_by_entity(entity, limit)
        )
    }

    fn list_meeting_links_by_meeting(
        &mut self,
        meeting: &str,
        limit: usize,
    ) -> StoreResult<Vec<crate::MeetingLink>> {
        memo_limited!(
            self,
            links_by_meeting,
            meeting,
            limit,
            self.read_meeting_links_by_meeting(meeting, limit)
        )
    }

    fn list_observation_times(&mut self, entity: &str) -> StoreResult<Vec<Ts>> {
        self.read_observation_times(entity)
    }

    fn meeting_counts(&mut self, meeting: &str) -> StoreResult<crate::MeetingCounts> {
        // Each count walks the meeting's range of one index (no row is read).
        let counts: (i64, i64, i64, i64) = self
            .one(
                "SELECT (SELECT count(*) FROM segments WHERE owner = ?1 AND meeting = ?2), \
                    (SELECT count(*) FROM notes WHERE owner = ?1 AND meeting = ?2), \
                    (SELECT count(*) FROM participants WHERE owner = ?1 AND meeting = ?2), \
                    (SELECT count(*) FROM evidence WHERE owner = ?1 AND meeting = ?2)",
                params![self.owner, meeting],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )?
            .unwrap_or_default();
        Ok(crate::MeetingCounts {
            segments: counts.0 as usize,
            notes: counts.1 as usize,
            participants: counts.2 as usize,
            evidence: counts.3 as usize,
        })
    }

    fn entity_observations(&mut self, entity: &str) -> StoreResult<crate::EntityObservations> {
        // One statement: the evidence times (no name), then the names once, in primary-key order.
        let rows: Vec<(Option<String>, i64)> = self.all(
            read_side::ENTITY_OBSERVATIONS,
            params![self.owner, entity],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok(crate::observations_from_rows(rows))
    }

    fn list_tasks(&mut self) -> StoreResult<Vec<Task>> {
        self.read_tasks()
    }

    fn list_tasks_by_assignee(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        self.read_tasks_by_assignee(entity)
    }

    fn find_alias_bounds(&mut self, entity: &str) -> StoreResult<Option<(String, Ts, Ts)>> {
        let first: Option<(String, i64)> = self.one(
            "SELECT alias, observed_at FROM entity_aliases WHERE owner = ?1 AND entity = ?2 \
             ORDER BY observed_at, alias LIMIT 1",
            params![self.owner, entity],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        let Some((alias, first_at)) = first else {
            return Ok(None);
        };
        let last_at: i64 = self
            .one(
                "SELECT max(observed_at) FROM entity_aliases WHERE owner = ?1 AND entity = ?2",
                params![self.owner, entity],
                |row| row.get(0),
            )?
            .unwrap_or(first_at);
        Ok(Some((alias, Ts(first_at), Ts(last_at))))
    }

    fn list_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Alias>> {
        self.all(
            "SELECT entity, alias, meeting, observed_at FROM entity_aliases WHERE owner = ?1 AND meeting = ?2 \
             ORDER BY entity, alias",
            params![self.owner, meeting],
            |row| Ok(Alias { entity: row.get(0)?, alias: row.get(1)?, meeting: row.get(2)?, observed_at: Ts(row.get(3)?) }),
        )
    }

    fn upsert_link_attachment(&mut self, a: &LinkAttachment) -> StoreResult<()> {
        self.exec(
            "INSERT INTO link_attachments (owner, link, entity, meeting, reason, evidence) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, link, entity) DO UPDATE SET \
             meeting = excluded.meeting, reason = excluded.reason, evidence = excluded.evidence",
            params![self.owner, a.link, a.entity, a.meeting, a.reason, a.evidence],
        )
        .map(|_| ())
    }

    fn list_link_attachments_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<LinkAttachment>> {
        self.all(
            "SELECT link, entity, meeting, reason, evidence FROM link_attachments \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY link, entity",
            params![self.owner, meeting],
            |row| {
                Ok(LinkAttachment {
                    link: row.get(0)?,
                    entity: row.get(1)?,
                    meeting: row.get(2)?,
                    reason: row.get(3)?,
                    evidence: row.get(4)?,
                })
            },
        )
    }

    fn list_link_attachments_by_entity(
        &mut self,
        entity: &str,
    ) -> StoreResult<Vec<LinkAttachment>> {
        self.all(
            "SELECT link, entity, meeting, reason, evidence FROM link_attachments \
             WHERE owner = ?1 AND entity = ?2 ORDER BY link",
            params![self.owner, entity],
            |row| {
                Ok(LinkAttachment {
                    link: row.get(0)?,
                    entity: row.get(1)?,
                    meeting: row.get(2)?,
                    reason: row.get(3)?,
                    evidence: row.get(4)?,
                })
            },
        )
    }

    fn list_attached_links(&mut self, entity: &str) -> StoreResult<Vec<crate::AttachedLink>> {
        if let Some(links) = self.held_pages().and_then(|pages| pages.attached(entity)) {
            return Ok(links);
        }
        self.all(
            &read_side::ATTACHED_LINKS,
            params![self.owner, entity],
            attached_link_row,
        )
    }

    fn delete_link_attachment(&mut self, link: &str, entity: &str) -> StoreResult<()> {
        self.exec(
            "DELETE FROM link_attachments WHERE owner = ?1 AND link = ?2 AND entity = ?3",
            params![self.owner, link, entity],
        )
        .map(|_| ())
    }

    fn insert_identifier_source(&mut self, s: &IdentifierSource) -> StoreResult<()> {
        self.exec(
            "INSERT INTO identifier_sources (owner, scheme, value, meeting, grp, is_primary) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, scheme, value, meeting, grp) \
             DO UPDATE SET is_primary = max(is_primary, excluded.is_primary)",
            params![
                self.owner,
                s.scheme,
                s.value,
                s.meeting,
                s.group,
                s.primary as i64
            ],
        )
        .map(|_| ())
    }

    fn list_identifier_sources(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        self.all(
            "SELECT scheme, value, meeting, grp, is_primary FROM identifier_sources \
             WHERE owner = ?1 AND scheme = ?2 AND value = ?3 ORDER BY meeting, grp",
            params![self.owner, scheme, value],
            identifier_source_row,
        )
    }

    fn list_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        self.all(
            "SELECT scheme, value, meeting, grp, is_primary FROM identifier_sources \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY scheme, value, grp",
            params![self.owner, meeting],
            identifier_source_row,
        )
    }

    fn list_entities_taught_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<(String, String)>> {
        let rows = self.all(
            crate::ENTITIES_TAUGHT_BY_MEETING,
            params![self.owner, meeting],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok(crate::sorted_distinct(rows))
    }

    fn delete_identifier_source(&mut self, s: &IdentifierSource) -> StoreResult<()> {
        self.exec(
            "DELETE FROM identifier_sources WHERE owner = ?1 AND scheme = ?2 AND value = ?3 \
             AND meeting = ?4 AND grp = ?5",
            params![self.owner, s.scheme, s.value, s.meeting, s.group],
        )
        .map(|_| ())
    }

    fn insert_meeting_tag(&mut self, t: &MeetingTag) -> StoreResult<()> {
        self.exec(
            "INSERT INTO meeting_tags (owner, meeting, tag, kind, key) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (owner, meeting, tag, kind, key) DO NOTHING",
            params![self.owner, t.meeting, t.tag, t.kind.as_str(), t.key],
        )
        .map(|_| ())
    }

    fn list_meeting_tags(&mut self, meeting: &str) -> StoreResult<Vec<MeetingTag>> {
        self.all(
            "SELECT meeting, tag, kind, key FROM meeting_tags WHERE owner = ?1 AND meeting = ?2 \
             ORDER BY tag, kind, key",
            params![self.owner, meeting],
            |row| {
                let kind: String = row.get(2)?;
                Ok(MeetingTag {
                    meeting: row.get(0)?,
                    tag: row.get(1)?,
                    kind: EntityKind::parse(&kind).ok_or_else(|| {
                        rusqlite::Error::FromSqlConversionFailure(
                            2,
                            rusqlite::types::Type::Text,
                            format!("unknown entity kind '{kind}'").into(),
                        )
                    })?,
                    key: row.get(3)?,
                })
            },
        )
    }

    fn insert_segments(&mut self, segments: &[Segment]) -> StoreResult<()> {
        // A few statements per meeting, their values bound as they are: the largest power of two
        // of rows left, up to `SEGMENT_ROWS_MAX`, inserted in order (the search documents' rowids
        // as one-by-one inserts would give them). A JSON array of the rows, parsed by `json_each`,
        // took a fifth more of the writer's instructions for a meeting's transcript.
        let mut rest = segments;
        while !rest.is_empty() {
            let rows = 1 << rest.len().min(SEGMENT_ROWS_MAX).ilog2();
            let (chunk, tail) = rest.split_at(rows);
            self.insert_segment_rows(chunk)?;
            rest = tail;
        }
        Ok(())
    }

    fn list_evidence_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Evidence>> {
        self.all(
            &read_side::EVIDENCE_BY_SLOT,
            params![self.owner, slot.subject, slot.predicate, slot.context],
            evidence_row,
        )
    }

    fn find_graph_index(&mut self) -> StoreResult<Option<std::sync::Arc<crate::GraphIndex>>> {
        // Only reads on the reader connection use one: a write's snapshot changes under it.
        let (Some(graphs), Some(cache)) = (self.graphs, self.cache.as_ref()) else {
            return Ok(None);
        };
        if let Some(index) = &cache.graph {
            return Ok(Some(index.clone()));
        }
        let index = graphs.get(self.owner, self.memo_owner_version()?);
        if let Some(cache) = self.cache.as_mut() {
            cache.graph = index.clone();
        }
        Ok(index)
    }

    fn list_projected_claims(&mut self, entity: &str) -> StoreResult<Vec<crate::ProjectedClaim>> {
        if let Some(claims) = self
            .page_index()
            .and_then(|pages| pages.projected_claims(entity))
        {
            return Ok(claims);
        }
        self.read_projected_claims(entity)
    }

    fn list_evidence_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Evidence>> {
        self.all(
            &read_side::EVIDENCE_BY_SUBJECT,
            params![self.owner, entity],
            evidence_row,
        )
    }

    fn list_search_snippets(
        &mut self,
        query: &lore_core::search::SearchQuery,
        docs: &[i64],
    ) -> StoreResult<Vec<(i64, String)>> {
        self.read_search_snippets(query, docs)
    }

    fn delete_evidence_many(&mut self, ids: &[String]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.exec(
            "DELETE FROM evidence WHERE owner = ?1 AND id IN (SELECT value FROM json_each(?2))",
            params![self.owner, to_json(&ids)],
        )
        .map(|_| ())
    }

    fn find_claims(&mut self, ids: &[String]) -> StoreResult<Vec<Claim>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.all(
            sql!("SELECT ", CLAIM_COLUMNS, " ", read_side::CLAIMS_BY_IDS),
            params![self.owner, to_json(&ids)],
            claim_row,
        )
    }

    fn list_claims_without_evidence(&mut self, claims: &[String]) -> StoreResult<Vec<String>> {
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        self.all(
            "SELECT c.value FROM json_each(?2) AS c WHERE NOT EXISTS \
             (SELECT 1 FROM evidence WHERE owner = ?1 AND claim = c.value) ORDER BY c.key",
            params![self.owner, to_json(&claims)],
            |row| row.get(0),
        )
    }

    fn delete_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        let mut sources = self.all(
            "DELETE FROM identifier_sources WHERE owner = ?1 AND meeting = ?2 \
             RETURNING scheme, value, meeting, grp, is_primary",
            params![self.owner, meeting],
            identifier_source_row,
        )?;
        // RETURNING gives the rows in no set order: the listing's order (scheme, value, group).
        sources
            .sort_by(|a, b| (&a.scheme, &a.value, &a.group).cmp(&(&b.scheme, &b.value, &b.group)));
        Ok(sources)
    }

    fn list_identifiers_still_taught(
        &mut self,
        identifiers: &[(String, String)],
    ) -> StoreResult<Vec<(String, String)>> {
        if identifiers.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.all(
            "SELECT DISTINCT i.value ->> 0, i.value ->> 1 FROM json_each(?2) AS i WHERE EXISTS \
             (SELECT 1 FROM identifier_sources AS s WHERE s.owner = ?1 \
              AND s.scheme = i.value ->> 0 AND s.value = i.value ->> 1)",
            params![self.owner, to_json(&identifiers)],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok(crate::sorted_distinct(rows))
    }

    fn find_identifier_source(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Option<IdentifierSource>> {
        self.one(
            "SELECT scheme, value, meeting, grp, is_primary FROM identifier_sources \
             WHERE owner = ?1 AND scheme = ?2 AND value = ?3 ORDER BY meeting, grp LIMIT 1",
            params![self.owner, scheme, value],
            identifier_source_row,
        )
    }

    fn list_status_changes_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<StatusChange>> {
        self.all(
            read_side::STATUS_CHANGES_BY_SLOT,
            params![self.owner, slot.subject, slot.predicate, slot.context],
            |row| {
                Ok(StatusChange {
                    claim: row.get(0)?,
                    recorded_at: Ts(row.get(1)?),
                    derived: from_json(row, 2)?,
                })
            },
        )
    }

    fn list_supersedes_links_by_slot(
        &mut self,
        slot: &SlotKey,
    ) -> StoreResult<Vec<SupersedesLink>> {
        self.all(
            read_side::SUPERSEDES_BY_SLOT,
            params![self.owner, slot.subject, slot.predicate, slot.context],
            |row| {
                Ok(SupersedesLink {
                    claim: row.get(0)?,
                    target: row.get(1)?,
                    evidence: row.get(2)?,
                })
            },
        )
    }
}

fn expect_one(changed: usize, what: &str, id: &str) -> StoreResult<()> {
    if changed == 0 {
        Err(StoreError::NotFound(format!("{what} {id}")))
    } else {
        Ok(())
    }
}

/// An `identifier_sources` row read as `scheme, value, meeting, grp, is_primary`.
fn identifier_source_row(row: &rusqlite::Row) -> rusqlite::Result<IdentifierSource> {
    Ok(IdentifierSource {
        scheme: row.get(0)?,
        value: row.get(1)?,
        meeting: row.get(2)?,
        group: row.get(3)?,
        primary: row.get::<_, i64>(4)? != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How often the graph's read of the claims linking an entity was prepared again over three
    /// runs with other values bound, on a connection `tune` set up (`stable`) or the same without
    /// the stability guarantee.
    fn reprepares(stable: bool) -> i32 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.db");
        drop(SqliteStore::open(&path).unwrap());
        let connection = open_reader(&path).unwrap();
        connection
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
                stable,
            )
            .unwrap();
        let sql = format!("SELECT {CLAIM_COLUMNS} {}", read_side::CLAIMS_LINKING);
        let mut statement = connection.prepare(&sql).unwrap();
        for (entity, limit) in [("e1", 10), ("e2", 500), ("e3", 20)] {
            let rows = statement
                .query_map(params!["o", entity, limit], |_| Ok(()))
                .unwrap();
            assert_eq!(rows.count(), 0);
        }
        statement.get_status(rusqlite::StatementStatus::RePrepare)
    }

    #[test]
    fn statements_are_not_prepared_again_for_other_values() {
        assert_eq!(reprepares(true), 0);
        assert!(
            reprepares(false) > 0,
            "the check would not see a re-prepare"
        );
    }
}
