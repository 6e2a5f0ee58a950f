//! The log store: Lore's embedded store. One SQLite file, as the tables' store uses it, except that
//! each owner's knowledge (entities, names, identifiers, claims, evidence, status history, links,
//! tasks, suggestions, participants and their provenance) lives in memory, and every write
//! transaction appends the row changes it made to the owner's log in the same SQLite transaction
//! as the rest of its writes (meetings, transcripts, notes, attachments, revisions, the full-text
//! index). A commit is durable when it returns, as with the tables; what it writes is the log entry
//! (a few pages, appended) instead of every index page each changed row sits on.
//!
//! * **Reads** answer from memory (no statement for a claim, an entity page or a neighborhood), and
//!   from SQLite for what lives there.
//! * **Other connections** (another process, a command run while `lore serve` runs) are seen
//!   through the owner's version (`owner_versions`, bumped by every write): a transaction whose
//!   snapshot names a version the memory has not seen first replays the log entries after the
//!   last one it applied (and reloads the meeting rows it mirrors).
//! * **Compaction.** Once an owner's log holds twice as many operations since the last compaction as
//!   the knowledge has rows (and 50,000), the writer replaces it with one entry per chunk of the
//!   current rows, led by a reset, so an open replays at most about three operations per row.
//! * **Rollback.** Each change keeps its inverse; a failed transaction applies them in reverse.

mod codec;
mod lane;
mod pages;
mod tables;
mod tx;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use lore_core::model::Meeting;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{backend, flush_search, poisoned, run, ConnRef, ReadSnapshot, SqliteStore, SqliteTx};
use crate::fast_hash::FastMap;
use crate::{ApiToken, Store, StoreError, StoreResult, TxWork};
use tables::{Knowledge, Op};
use tx::{Journal, LogTx, StateRef, Undo};

/// The setting a database's knowledge format is kept under (`store_settings`).
pub(crate) const KNOWLEDGE_FORMAT: &str = "knowledge";
/// Knowledge in the log (this store).
pub(crate) const FORMAT_LOG: &str = "log";
/// Knowledge in the tables (`SqliteStore`).
pub(crate) const FORMAT_TABLES: &str = "tables";

/// A log entry larger than this is stored compressed (LZ4), with a format byte first.
const COMPRESS_ABOVE: usize = 512;
const ENTRY_PLAIN: u8 = 0;
const ENTRY_LZ4: u8 = 1;
/// Compaction waits until the log holds at least this many operations since the last one...
const COMPACT_MIN_OPS: u64 = 50_000;
/// ...and this many times as many as the knowledge has rows: an open then replays at most about
/// three operations per row, and each compaction writes a row for every two operations logged.
const COMPACT_FACTOR: u64 = 2;
/// Operations per entry of a compacted log.
const COMPACT_CHUNK_OPS: usize = 50_000;

/// The meeting rows of one owner, mirrored from the table for the reads that join them.
#[derive(Default, Debug)]
pub(crate) struct Meetings {
    by_id: FastMap<String, Meeting>,
    by_external_id: HashMap<String, String>,
}

impl Meetings {
    pub(crate) fn get(&self, id: &str) -> Option<&Meeting> {
        self.by_id.get(id)
    }

    pub(crate) fn by_external_id(&self, external_id: &str) -> Option<&Meeting> {
        self.by_id.get(self.by_external_id.get(external_id)?)
    }

    /// Every meeting by start, then id (`ORDER BY started_at, id`).
    pub(crate) fn in_order(&self) -> Vec<Meeting> {
        let mut meetings: Vec<Meeting> = self.by_id.values().cloned().collect();
        meetings.sort_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)));
        meetings
    }

    pub(crate) fn insert(&mut self, meeting: Meeting) -> Option<Meeting> {
        let old = self.remove(&meeting.id);
        self.by_external_id
            .insert(meeting.external_id.clone(), meeting.id.clone());
        self.by_id.insert(meeting.id.clone(), meeting);
        old
    }

    pub(crate) fn remove(&mut self, id: &str) -> Option<Meeting> {
        let old = self.by_id.remove(id)?;
        self.by_external_id.remove(&old.external_id);
        Some(old)
    }

    fn len(&self) -> usize {
        self.by_id.len()
    }
}

/// One owner's state in memory, and which of the database's states it is.
#[derive(Default)]
pub(crate) struct OwnerState {
    pub(crate) knowledge: Knowledge,
    pub(crate) meetings: Meetings,
    /// Whether the state was read from the database (a fresh slot, or one a panic left, is not).
    loaded: bool,
    /// The last log entry applied.
    seq: i64,
    /// The owner version (`owner_versions`) the state is the state of.
    version: i64,
    /// Bytes of log entries written since the last compaction, and the compacted entries' size.
    log_bytes: u64,
    base_bytes: u64,
    /// Operations logged since the last compaction (what an open replays beyond the rows).
    log_ops: u64,
    /// Whether this store wrote to the owner since it opened (only then does closing compact).
    wrote: bool,
    /// The reading connection's `PRAGMA data_version` when this state was last found to be the
    /// database's (`None`: not yet). While the connection reports the same value, no connection has
    /// committed anything since, and a read needs no statement to trust memory.
    verified: Mutex<Option<i64>>,
}

/// The owners' states, created empty on first use and loaded by the first transaction.
#[derive(Default)]
pub(crate) struct Owners {
    slots: Mutex<HashMap<String, Arc<RwLock<OwnerState>>>>,
}

impl Owners {
    fn slot(&self, owner: &str) -> StoreResult<Arc<RwLock<OwnerState>>> {
        let mut slots = self.slots.lock().map_err(poisoned)?;
        Ok(slots.entry(owner.to_string()).or_default().clone())
    }

    fn loaded(&self) -> StoreResult<Vec<(String, Arc<RwLock<OwnerState>>)>> {
        let slots = self.slots.lock().map_err(poisoned)?;
        Ok(slots
            .iter()
            .map(|(owner, slot)| (owner.clone(), slot.clone()))
            .collect())
    }
}

/// The exclusive hold on an owner's state; a state whose holder panicked is read again from the
/// database, which the panic's transaction did not change.
fn write_state(slot: &RwLock<OwnerState>) -> std::sync::RwLockWriteGuard<'_, OwnerState> {
    slot.write().unwrap_or_else(|poison| {
        let mut state = poison.into_inner();
        state.loaded = false;
        state
    })
}

pub struct LogStore {
    sql: SqliteStore,
    owners: Arc<Owners>,
    /// The owners' graph indexes, built from memory on a thread of their own (file databases).
    graphs: Option<crate::GraphBuilds>,
    /// Knowledge operations write transactions made (`Store::write_operations`).
    operations: std::sync::atomic::AtomicU64,
    /// The fewest operations since the last compaction that start one (`COMPACT_MIN_OPS`).
    compact_min_ops: u64,
    /// The last write's buffers, for the next (`EntryBuffers`).
    buffers: Mutex<EntryBuffers>,
}

/// The owner's version in the connection's current transaction (0 before its first write).
fn owner_version(connection: &Connection, owner: &str) -> StoreResult<i64> {
    connection
        .prepare_cached(super::OWNER_VERSION)
        .and_then(|mut statement| {
            statement
                .query_row([owner], |row| row.get::<_, i64>(0))
                .optional()
        })
        .map(|version| version.unwrap_or(0))
        .map_err(backend)
}

/// Encodes a log entry into `entry` (emptied first; its memory is reused): a format byte, then the
/// operations as they are, or compressed after their size (LZ4's size-prepended block format).
fn encode_entry(bytes: &[u8], entry: &mut Vec<u8>) -> StoreResult<()> {
    entry.clear();
    if bytes.len() <= COMPRESS_ABOVE {
        entry.push(ENTRY_PLAIN);
        entry.extend_from_slice(bytes);
        return Ok(());
    }
    let size = u32::try_from(bytes.len()).map_err(|_| {
        StoreError::Backend(format!(
            "a knowledge log entry of {} bytes is too large",
            bytes.len()
        ))
    })?;
    entry.push(ENTRY_LZ4);
    entry.extend_from_slice(&size.to_le_bytes());
    let start = entry.len();
    entry.resize(
        start + lz4_flex::block::get_maximum_output_size(bytes.len()),
        0,
    );
    let written = lz4_flex::block::compress_into(bytes, &mut entry[start..])
        .map_err(|error| StoreError::Backend(format!("compressing a log entry: {error}")))?;
    entry.truncate(start + written);
    Ok(())
}

/// Memory a write's log entry is built in, kept from one write to the next: a bulk ingest's entry
/// runs to megabytes, and growing fresh buffers for it in every write cost copies and page faults
/// (the kernel zeroing new pages), 7 % of the ingest's writer (BENCHMARKS.md, twenty-seventh round).
#[derive(Default)]
struct EntryBuffers {
    /// The operations (`Journal::log`).
    ops: Vec<u8>,
    /// The entry as stored (`encode_entry`).
    entry: Vec<u8>,
    /// The inverses (`Journal::undo`).
    undo: Vec<Undo>,
}

/// Buffers larger than this are not kept for the next write.
const KEEP_BUFFER_BYTES: usize = 64 << 20;

impl EntryBuffers {
    /// Keeps what a write used unless it grew past `KEEP_BUFFER_BYTES`.
    fn keep(&mut self, ops: Vec<u8>, entry: Vec<u8>, mut undo: Vec<Undo>) {
        if ops.capacity() <= KEEP_BUFFER_BYTES {
            self.ops = ops;
        }
        if entry.capacity() <= KEEP_BUFFER_BYTES {
            self.entry = entry;
        }
        if undo.capacity() * std::mem::size_of::<Undo>() <= KEEP_BUFFER_BYTES {
            undo.clear();
            self.undo = undo;
        }
    }
}

fn decode_entry(owner: &str, seq: i64, entry: &[u8]) -> StoreResult<Vec<Op>> {
    let damaged =
        |why: String| StoreError::Backend(format!("knowledge log of {owner}, entry {seq}: {why}"));
    let bytes = match entry.split_first() {
        Some((&ENTRY_PLAIN, rest)) => std::borrow::Cow::Borrowed(rest),
        Some((&ENTRY_LZ4, rest)) => std::borrow::Cow::Owned(
            lz4_flex::decompress_size_prepended(rest).map_err(|e| damaged(e.to_string()))?,
        ),
        Some((other, _)) => return Err(damaged(format!("unknown entry format {other}"))),
        None => return Err(damaged("empty entry".into())),
    };
    tables::decode_ops(&bytes).map_err(|e| damaged(e.0))
}

/// The owner's meeting rows, from the table.
fn load_meetings(connection: &Connection, owner: &str) -> StoreResult<Meetings> {
    use crate::Tx;
    let mut meetings = Meetings::default();
    for meeting in SqliteTx::plain(connection, owner).list_meetings()? {
        meetings.insert(meeting);
    }
    Ok(meetings)
}

/// Brings the state up to the version the connection's transaction sees: replays the log entries it
/// has not applied (all of them when it has none, or when the log was compacted past its last one)
/// and reads the meeting rows again.
fn sync(state: &mut OwnerState, connection: &Connection, owner: &str) -> StoreResult<()> {
    let version = owner_version(connection, owner)?;
    if state.loaded && state.version == version {
        return Ok(());
    }
    let after = if state.loaded { state.seq } else { 0 };
    let first: Option<i64> = connection
        .prepare_cached("SELECT min(seq) FROM knowledge_log WHERE owner = ?1 AND seq > ?2")
        .and_then(|mut s| s.query_row(params![owner, after], |row| row.get(0)))
        .map_err(backend)?;
    // Entries after the last one applied must follow it; otherwise the log was compacted meanwhile
    // and the state is read again from its start (which a compaction leads with a reset).
    let from = match (state.loaded, first) {
        (true, Some(first)) if first != state.seq + 1 => 0,
        _ => after,
    };
    if from == 0 {
        *state = OwnerState::default();
    }
    let mut statement = connection
        .prepare_cached(
            "SELECT seq, base, ops FROM knowledge_log WHERE owner = ?1 AND seq > ?2 ORDER BY seq",
        )
        .map_err(backend)?;
    let mut rows = statement.query(params![owner, from]).map_err(backend)?;
    while let Some(row) = rows.next().map_err(backend)? {
        let seq: i64 = row.get(0).map_err(backend)?;
        let base: bool = row.get(1).map_err(backend)?;
        let entry = row.get_ref(2).map_err(backend)?.as_blob().map_err(|e| {
            StoreError::Backend(format!("knowledge log of {owner}, entry {seq}: {e}"))
        })?;
        let ops = decode_entry(owner, seq, entry)?;
        if matches!(ops.first(), Some(Op::Reset)) {
            state.base_bytes = 0;
            state.log_bytes = 0;
            state.log_ops = 0;
        }
        if !base {
            state.log_ops += ops.len() as u64;
        }
        for op in ops {
            state.knowledge.apply(op);
        }
        match base {
            true => state.base_bytes += entry.len() as u64,
            false => state.log_bytes += entry.len() as u64,
        }
        state.seq = seq;
    }
    state.meetings = load_meetings(connection, owner)?;
    state.knowledge.pages.clear();
    state.version = version;
    state.loaded = true;
    Ok(())
}

/// Appends one log entry (`base`: of a compacted log); returns its size.
fn append_entry(
    connection: &Connection,
    owner: &str,
    seq: i64,
    base: bool,
    ops: &[u8],
    entry: &mut Vec<u8>,
) -> StoreResult<u64> {
    encode_entry(ops, entry)?;
    insert_entry(connection, owner, seq, base, entry)
}

/// Appends an entry `encode_entry` made; returns its size.
fn insert_entry(
    connection: &Connection,
    owner: &str,
    seq: i64,
    base: bool,
    entry: &[u8],
) -> StoreResult<u64> {
    connection
        .prepare_cached("INSERT INTO knowledge_log (owner, seq, base, ops) VALUES (?1, ?2, ?3, ?4)")
        .and_then(|mut statement| statement.execute(params![owner, seq, base, entry]))
        .map_err(backend)?;
    Ok(entry.len() as u64)
}

fn bump_version(connection: &Connection, owner: &str) -> StoreResult<()> {
    connection
        .prepare_cached(super::BUMP_OWNER_VERSION)
        .and_then(|mut statement| statement.execute([owner]))
        .map(|_| ())
        .map_err(backend)
}

/// Ends the read snapshot a connection has open, if any, when dropped.
struct EndSnapshot<'c>(&'c Connection);

impl Drop for EndSnapshot<'_> {
    fn drop(&mut self) {
        if !self.0.is_autocommit() {
            let _ = run(self.0, "ROLLBACK");
        }
    }
}

/// Undoes a failed transaction's changes to memory, last first.
fn undo(state: &mut OwnerState, changes: Vec<Undo>) {
    for change in changes.into_iter().rev() {
        match change {
            Undo::Knowledge(op) => {
                state.knowledge.apply(op);
            }
            Undo::Meeting(_, Some(meeting)) => {
                state.knowledge.pages.clear();
                state.meetings.insert(meeting);
            }
            Undo::Meeting(id, None) => {
                state.knowledge.pages.clear();
                state.meetings.remove(&id);
            }
        }
    }
}

/// Opens an embedded database file with the store that keeps its knowledge: the log store for a new
/// file or one it wrote, the tables' store (`SqliteStore`) for a file an earlier Lore wrote, which
/// `lore migrate` copies into a new file of the log store.
pub fn open_embedded(path: &Path) -> StoreResult<Box<dyn Store>> {
    let format = {
        let sql = SqliteStore::open_unbuilt(path)?;
        let connection = sql.lock()?;
        stored_format(&connection)?
    };
    match format.as_deref() {
        Some(FORMAT_TABLES) => Ok(Box::new(SqliteStore::open(path)?)),
        _ => Ok(Box::new(LogStore::open(path)?)),
    }
}

fn stored_format(connection: &Connection) -> StoreResult<Option<String>> {
    let stored: Option<String> = connection
        .query_row(
            "SELECT value FROM store_settings WHERE key = ?1",
            [KNOWLEDGE_FORMAT],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    if stored.is_some() {
        return Ok(stored);
    }
    let has_tables_knowledge: bool = connection
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM entities) OR EXISTS (SELECT 1 FROM claims) \
             OR EXISTS (SELECT 1 FROM participants)",
            [],
            |row| row.get(0),
        )
        .map_err(backend)?;
    Ok(has_tables_knowledge.then(|| FORMAT_TABLES.to_string()))
}

impl LogStore {
    /// Runs a read on `connection` against the state in memory when that is the database's state
    /// there; `None` (nothing run, or a run that found it was not) when it must catch up first.
    /// Memory is trusted without a statement while the connection's data version has not moved
    /// since the state was last found current; otherwise the owner's version is compared first. A
    /// snapshot of the tables is begun only if the work reads one.
    fn read_on(
        &self,
        connection: &Connection,
        owner: &str,
        state: &OwnerState,
        work: &mut TxWork<'_>,
    ) -> StoreResult<Option<StoreResult<()>>> {
        let data_version: i64 = connection
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
            .map_err(backend)?;
        // Whatever happens below, the connection leaves without a snapshot.
        let _end = EndSnapshot(connection);
        let mut verified = state.verified.lock().map_err(poisoned)?;
        let snapshot = match *verified == Some(data_version) {
            true => tx::Snapshot::Pending(state.version),
            false => {
                run(connection, "BEGIN DEFERRED")?;
                if owner_version(connection, owner)? != state.version {
                    return Ok(None);
                }
                *verified = Some(data_version);
                tx::Snapshot::Begun
            }
        };
        drop(verified);
        let graphs = self.graphs.as_ref().map(|graphs| (graphs, state.version));
        let mut tx = LogTx {
            sql_tx: SqliteTx::plain(connection, owner),
            snapshot,
            state: StateRef::Read(state),
            journal: Journal::default(),
            graphs,
            last_page: None,
            lane: None,
            last_slot: Default::default(),
        };
        // A panic (a bug) in a read is its error; a read changes nothing to undo.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut tx)))
            .unwrap_or_else(|panic| {
                Err(StoreError::Backend(format!(
                    "the read failed unexpectedly: {}",
                    crate::panic_message(&panic)
                )))
            });
        if matches!(tx.snapshot, tx::Snapshot::Stale) {
            *state.verified.lock().map_err(poisoned)? = None;
            return Ok(None);
        }
        Ok(Some(outcome))
    }

    /// Opens (creating and migrating if needed) the database file; blobs live in `<file>.blobs/`. A
    /// database whose knowledge an earlier Lore kept in the tables is refused (`open_embedded` opens
    /// it with the tables' store).
    pub fn open(path: &Path) -> StoreResult<LogStore> {
        let sql = SqliteStore::open_unbuilt(path)?;
        claim_format(&sql, FORMAT_LOG)?;
        let owners = Arc::new(Owners::default());
        let graphs = Some(start_graph_builds(owners.clone())?);
        Ok(LogStore {
            sql,
            owners,
            graphs,
            operations: Default::default(),
            compact_min_ops: COMPACT_MIN_OPS,
            buffers: Mutex::default(),
        })
    }

    /// A private in-memory database (tests, benchmarks), with blobs in `blob_dir`.
    pub fn open_in_memory(blob_dir: PathBuf) -> StoreResult<LogStore> {
        let sql = SqliteStore::open_in_memory(blob_dir)?;
        claim_format(&sql, FORMAT_LOG)?;
        Ok(LogStore {
            sql,
            owners: Arc::default(),
            graphs: None,
            operations: Default::default(),
            compact_min_ops: COMPACT_MIN_OPS,
            buffers: Mutex::default(),
        })
    }

    /// The schema version this database is at.
    pub fn schema_version(&self) -> StoreResult<i64> {
        self.sql.schema_version()
    }

    /// Writes a consistent copy of the database to `target` (`VACUUM INTO`).
    pub fn backup_to(&self, target: &Path) -> StoreResult<()> {
        self.sql.backup_to(target)
    }

    /// Runs a write's work inside its transaction, with a helper thread for the statements whose
    /// answers it does not need (`lane`). Returns when every statement has run.
    fn work_in_lanes(
        &self,
        connection: &mut Connection,
        owner: &str,
        state: &mut OwnerState,
        // The write's journal, and the buffer its log entry is encoded into.
        (journal, entry): (&mut Journal, &mut Vec<u8>),
        work: &mut TxWork<'_>,
        panicked: &mut bool,
    ) -> StoreResult<()> {
        let shared = lane::Shared::new(connection, owner);
        let (outcome, statements) = std::thread::scope(|scope| {
            let spawn = |jobs| {
                std::thread::Builder::new()
                    .name("lore-write-sql".into())
                    .spawn_scoped(scope, || shared.serve(jobs))
                    .map(drop)
            };
            let mut tx = LogTx {
                sql_tx: SqliteTx::on(ConnRef::Lent, owner),
                snapshot: tx::Snapshot::Open,
                state: StateRef::Write(state),
                journal: std::mem::take(journal),
                graphs: None,
                last_page: None,
                lane: Some(lane::Lane::new(&shared, &spawn)),
                last_slot: Default::default(),
            };
            // A panic (a bug) inside the work is an error of this write: the transaction rolls
            // back, and memory, which the panic may have left between two changes, is read again
            // from the database by the next transaction.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut tx)))
                .unwrap_or_else(|panic| {
                    *panicked = true;
                    Err(StoreError::Backend(format!(
                        "the write failed unexpectedly: {}",
                        crate::panic_message(&panic)
                    )))
                });
            // The connection goes back to the lock before the helper's last jobs need it.
            tx.sql_tx.connection = ConnRef::Lent;
            // The log entry is encoded (compressed) while the helper runs its last statements.
            let logged = tx.journal.logged;
            let encoded = match outcome.is_ok() && logged > 0 {
                true => encode_entry(tx.journal.log.counted(logged), entry),
                false => Ok(()),
            };
            let finished = tx.lane.as_mut().map_or(Ok(()), lane::Lane::finish);
            *journal = std::mem::take(&mut tx.journal);
            (
                outcome.and(finished).and(encoded),
                tx.sql_tx.statements.get(),
            )
        });
        use std::sync::atomic::Ordering::Relaxed;
        self.sql
            .write_statements
            .fetch_add(statements + shared.statements(), Relaxed);
        self.operations.fetch_add(journal.logged as u64, Relaxed);
        outcome
    }

    /// Replaces an owner's log with its current rows (what an open then replays), now.
    pub fn compact(&self, owner: &str) -> StoreResult<()> {
        let slot = self.owners.slot(owner)?;
        let started = std::time::Instant::now();
        let mut state = write_state(&slot);
        let mut connection = self.sql.lock()?;
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(backend)?;
        sync(&mut state, &transaction, owner)?;
        let (seq, bytes) = write_compacted(&state, &transaction, owner)?;
        bump_version(&transaction, owner)?;
        transaction.commit().map_err(backend)?;
        tracing::debug!(
            "compacted the knowledge log of {owner}: {} rows, {bytes} bytes, in {:.1} ms",
            state.knowledge.rows,
            started.elapsed().as_secs_f64() * 1e3
        );
        state.seq = seq;
        state.version += 1;
        state.base_bytes = bytes;
        state.log_bytes = 0;
        state.log_ops = 0;
        Ok(())
    }

    /// Compacts an owner's log once it holds `ops` operations since the last compaction (and twice
    /// as many as the knowledge has rows) instead of `COMPACT_MIN_OPS`: for tests of compaction on
    /// small data.
    pub fn compact_after(mut self, ops: u64) -> LogStore {
        self.compact_min_ops = ops;
        self
    }

    /// Bytes of an owner's log: `(since the last compaction, the compacted part)`.
    pub fn log_size(&self, owner: &str) -> StoreResult<(u64, u64)> {
        let slot = self.owners.slot(owner)?;
        let state = slot.read().map_err(poisoned)?;
        Ok((state.log_bytes, state.base_bytes))
    }

    fn owner_names(&self) -> StoreResult<Vec<String>> {
        let connection = self.sql.lock()?;
        let mut statement = connection
            .prepare(
                "SELECT owner FROM knowledge_log UNION SELECT owner FROM meetings \
                 UNION SELECT owner FROM revisions ORDER BY 1",
            )
            .map_err(backend)?;
        let owners = statement.query_map([], |row| row.get(0)).map_err(backend)?;
        owners.collect::<Result<Vec<String>, _>>().map_err(backend)
    }

    /// Loads an owner's state if no transaction has yet (checks).
    fn load(&self, owner: &str) -> StoreResult<()> {
        self.read(owner, &mut |_| Ok(()))
    }
}

/// Writes the owner's current rows as a compacted log (a reset, then every row, in chunks) after
/// removing its entries; returns the last sequence number written and the entries' bytes.
fn write_compacted(
    state: &OwnerState,
    connection: &Connection,
    owner: &str,
) -> StoreResult<(i64, u64)> {
    connection
        .prepare_cached("DELETE FROM knowledge_log WHERE owner = ?1")
        .and_then(|mut statement| statement.execute([owner]))
        .map_err(backend)?;
    let mut seq = state.seq;
    let mut bytes = 0;
    // Each row is encoded as it is produced, into one buffer every chunk reuses: holding a chunk's
    // rows before encoding them, and growing a fresh buffer per chunk, was most of a compaction's
    // time (copies and the page faults of new memory).
    let mut chunk = codec::Writer::for_ops(Vec::new());
    let mut entry = Vec::new();
    chunk.put(&Op::Reset);
    let mut count = 1;
    let mut rows = state.knowledge.rows().peekable();
    loop {
        let done = rows.peek().is_none();
        if count >= COMPACT_CHUNK_OPS || (done && count > 0) {
            seq += 1;
            bytes += append_entry(
                connection,
                owner,
                seq,
                true,
                chunk.counted(count),
                &mut entry,
            )?;
            chunk.restart_ops();
            count = 0;
        }
        match rows.next() {
            Some(row) => {
                chunk.put(&Op::Put(row));
                count += 1;
            }
            None => break,
        }
    }
    Ok((seq, bytes))
}

/// Records which store keeps this database's knowledge on first open, and refuses a database that
/// the other one keeps.
pub(super) fn claim_format(sql: &SqliteStore, format: &str) -> StoreResult<()> {
    let connection = sql.lock()?;
    let has_log: bool = connection
        .query_row("SELECT EXISTS (SELECT 1 FROM knowledge_log)", [], |row| {
            row.get(0)
        })
        .map_err(backend)?;
    let stored = stored_format(&connection)?;
    let found = match stored.as_deref() {
        Some(found) => found.to_string(),
        None => {
            let found = if has_log { FORMAT_LOG } else { format };
            connection
                .execute(
                    "INSERT INTO store_settings (key, value) VALUES (?1, ?2)",
                    params![KNOWLEDGE_FORMAT, found],
                )
                .map_err(backend)?;
            found.to_string()
        }
    };
    match found.as_str() {
        found if found == format => Ok(()),
        FORMAT_TABLES => Err(StoreError::Conflict(
            "this database keeps its knowledge in tables, as Lore did before the log store; \
             open it with the tables' store, or copy it into a new file with \
             `lore migrate --from OLD.db --to NEW.db --all-owners`"
                .into(),
        )),
        FORMAT_LOG => Err(StoreError::Conflict(
            "this database keeps its knowledge in the log store; open it with `lore` itself".into(),
        )),
        other => Err(StoreError::Backend(format!(
            "unknown knowledge format '{other}' (written by a newer lore?)"
        ))),
    }
}

/// The graph builds of a file database: each reads the owner's state in memory (never SQLite).
fn start_graph_builds(owners: Arc<Owners>) -> StoreResult<crate::GraphBuilds> {
    crate::owner_builds::OwnerBuilds::start(
        "lore-graph-index",
        crate::GRAPH_BUILD_AFTER_READS,
        Box::new(move |owner| {
            let slot = owners.slot(owner)?;
            let (version, rows) = {
                let state = slot.read().map_err(poisoned)?;
                if !state.loaded {
                    return Err(StoreError::Backend(format!("{owner} is not loaded")));
                }
                (state.version, graph_rows(&state))
            };
            Ok((version, crate::GraphIndex::from_rows(rows)))
        }),
    )
}

/// What the graph index is built from, as the tables' scan reads it (`GRAPH_SCAN_SQL`).
fn graph_rows(state: &OwnerState) -> crate::graph_index::GraphRows {
    let k = &state.knowledge;
    let mut claims: Vec<lore_core::model::Claim> = k
        .claims
        .values()
        .filter(|c| c.object_entity.is_some() || c.context_entity.is_some())
        .cloned()
        .collect();
    claims.sort_by(|a, b| {
        let inactive =
            |c: &lore_core::model::Claim| c.derived.status != lore_core::model::ClaimStatus::Active;
        (
            inactive(a),
            std::cmp::Reverse(a.derived.last_observed_at),
            &a.id,
        )
            .cmp(&(
                inactive(b),
                std::cmp::Reverse(b.derived.last_observed_at),
                &b.id,
            ))
    });
    let mut tasks: Vec<lore_core::model::Task> = k.tasks.values().cloned().collect();
    tasks.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    let attended = k
        .participants
        .values()
        .flat_map(|rows| rows.values())
        .filter_map(|p| Some((p.meeting.clone(), p.person_entity.clone()?)))
        .collect();
    let mentioned = k
        .evidence
        .values()
        .filter_map(|e| {
            let meeting = e.meeting.clone()?;
            let claim = k.claims.get(&e.claim)?;
            Some((meeting, claim.subject.clone(), claim.object_entity.clone()))
        })
        .collect();
    crate::graph_index::GraphRows {
        entities: k.entities.values().cloned().collect(),
        meetings: state.meetings.by_id.values().cloned().collect(),
        claims,
        tasks,
        attended,
        mentioned,
    }
}

impl Drop for LogStore {
    /// A store closing after writes (a `lore ingest`, a server stopping) compacts each owner it
    /// wrote whose log since its last compaction holds more operations than its knowledge has rows
    /// (and at least `compact_min_ops`), so the next command that opens the file replays about as
    /// many operations as there are rows, where a write would have waited for twice as many. A
    /// store that only read writes nothing.
    fn drop(&mut self) {
        let Ok(owners) = self.owners.loaded() else {
            return;
        };
        for (owner, slot) in owners {
            let due = slot.read().is_ok_and(|state| {
                state.loaded
                    && state.wrote
                    && state.log_ops > self.compact_min_ops
                    && state.log_ops > state.knowledge.rows as u64
            });
            if due {
                if let Err(error) = self.compact(&owner) {
                    tracing::warn!("compacting the knowledge log of {owner} on close: {error}");
                }
            }
        }
    }
}

impl Store for LogStore {
    fn write(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()> {
        let slot = self.owners.slot(owner)?;
        let mut state = write_state(&slot);
        let mut guard = self.sql.lock()?;
        let connection: &mut Connection = &mut guard;
        // A write that panicked past its own guards left its transaction open: it ends here.
        if !connection.is_autocommit() {
            run(connection, "ROLLBACK")?;
        }
        run(connection, "BEGIN IMMEDIATE")?;
        let mut panicked = false;
        let mut buffers = std::mem::take(&mut *self.buffers.lock().map_err(poisoned)?);
        let mut journal = Journal::reusing(
            std::mem::take(&mut buffers.ops),
            std::mem::take(&mut buffers.undo),
        );
        let mut entry = std::mem::take(&mut buffers.entry);
        let committed = sync(&mut state, connection, owner).and_then(|()| {
            let changes_before = connection.total_changes();
            self.work_in_lanes(
                connection,
                owner,
                &mut state,
                (&mut journal, &mut entry),
                work,
                &mut panicked,
            )?;
            let mut bytes = 0;
            if journal.logged > 0 {
                bytes = insert_entry(connection, owner, state.seq + 1, false, &entry)?;
            }
            let changed = connection.total_changes() != changes_before;
            if changed {
                bump_version(connection, owner)?;
            }
            flush_search(connection, Some(&self.sql.deferred))?;
            run(connection, "COMMIT")?;
            Ok((bytes, changed))
        });
        if committed.is_err() && !connection.is_autocommit() {
            // The write's error is what it reports; a failed rollback shows at the next `BEGIN`.
            let _ = run(connection, "ROLLBACK");
        }
        drop(guard);
        let Journal {
            log,
            logged,
            undo: changes,
        } = journal;
        match committed {
            Ok((bytes, changed)) => {
                if logged > 0 {
                    state.wrote = true;
                    state.seq += 1;
                    state.log_bytes += bytes;
                    state.log_ops += logged as u64;
                }
                if changed {
                    state.version += 1;
                }
                if let Some(checkpointer) = &self.sql.checkpointer {
                    checkpointer.committed();
                }
                if let Ok(mut kept) = self.buffers.lock() {
                    kept.keep(log.bytes, entry, changes);
                }
                if state.log_ops > self.compact_min_ops
                    && state.log_ops > COMPACT_FACTOR * state.knowledge.rows as u64
                {
                    drop(state);
                    // The write is committed; a compaction that fails leaves the log as it was.
                    if let Err(error) = self.compact(owner) {
                        tracing::warn!("compacting the knowledge log of {owner}: {error}");
                    }
                }
                Ok(())
            }
            Err(error) if panicked => {
                state.loaded = false;
                Err(error)
            }
            Err(error) => {
                undo(&mut state, changes);
                Err(error)
            }
        }
    }

    fn read(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()> {
        let slot = self.owners.slot(owner)?;
        loop {
            {
                let state = slot.read().map_err(poisoned)?;
                if state.loaded {
                    let done = match &self.sql.reader {
                        Some(reader) => {
                            let guard = reader.lock().map_err(poisoned)?;
                            self.read_on(&guard.0, owner, &state, work)?
                        }
                        None => {
                            let connection = self.sql.lock()?;
                            self.read_on(&connection, owner, &state, work)?
                        }
                    };
                    if let Some(outcome) = done {
                        return outcome;
                    }
                }
            }
            // The database moved on (another connection wrote, or this is the first transaction):
            // catch up under the exclusive hold, then read again.
            let mut state = write_state(&slot);
            let catch_up = |connection: &Connection, state: &mut OwnerState| {
                let (snapshot, data_version) = ReadSnapshot::begin(connection)?;
                sync(state, connection, owner)?;
                *state.verified.lock().map_err(poisoned)? = Some(data_version);
                snapshot.end()
            };
            match &self.sql.reader {
                Some(reader) => catch_up(&reader.lock().map_err(poisoned)?.0, &mut state)?,
                None => catch_up(&*self.sql.lock()?, &mut state)?,
            }
        }
    }

    fn blob_dir(&self) -> &Path {
        self.sql.blob_dir()
    }

    fn owners(&self) -> StoreResult<Vec<String>> {
        self.owner_names()
    }

    fn integrity_problems(&self) -> StoreResult<Vec<String>> {
        let mut problems = self.sql.integrity_problems()?;
        for owner in self.owner_names()? {
            self.load(&owner)?;
            let slot = self.owners.slot(&owner)?;
            let state = slot.read().map_err(poisoned)?;
            problems.extend(
                state
                    .knowledge
                    .index_problems()
                    .into_iter()
                    .map(|problem| format!("{owner}: {problem}")),
            );
            let connection = self.sql.lock()?;
            problems.extend(search_document_problems(&connection, &owner, &state)?);
            problems.extend(log_problems(&connection, &owner, &state)?);
        }
        Ok(problems)
    }

    fn backend_name(&self) -> &'static str {
        "sqlite"
    }

    fn write_statements(&self) -> Option<u64> {
        self.sql.write_statements()
    }

    fn write_operations(&self) -> Option<u64> {
        Some(self.operations.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Loads every owner's knowledge into memory and asks for their graph indexes, so that a
    /// long-lived process answers its first reads as fast as later ones.
    fn prewarm(&self) -> StoreResult<usize> {
        let owners = self.owner_names()?;
        for owner in &owners {
            // Loading the state, and every entity's page (`pages.rs`), which reads then keep until
            // a write reaches the entity.
            self.read(owner, &mut |tx| {
                for entity in tx.list_entities()? {
                    tx.list_projected_claims(&entity.id)?;
                }
                Ok(())
            })?;
            if let Some(graphs) = &self.graphs {
                let slot = self.owners.slot(owner)?;
                let version = slot.read().map_err(poisoned)?.version;
                graphs.prefetch(owner, version);
            }
        }
        Ok(owners.len())
    }

    fn cached_pages(&self, owner: &str) -> Option<crate::CachedPages> {
        let slots = self.owners.loaded().ok()?;
        let (_, slot) = slots.into_iter().find(|(name, _)| name == owner)?;
        let state = slot.read().ok()?;
        state.loaded.then(|| crate::CachedPages {
            entities: state.knowledge.entities.len(),
            bytes: state.knowledge.pages.bytes(),
            left_to_queries: 0,
        })
    }

    fn cached_graph(&self, owner: &str) -> bool {
        let Ok(slot) = self.owners.slot(owner) else {
            return false;
        };
        let Ok(state) = slot.read() else {
            return false;
        };
        self.graphs
            .as_ref()
            .is_some_and(|graphs| graphs.held(owner, state.version).is_some())
    }

    fn finish_background_work(&self) {
        if let Some(graphs) = &self.graphs {
            graphs.wait_idle();
        }
    }

    fn wait_search_merged(&self) {
        self.sql.wait_search_merged();
    }

    fn insert_api_token(&self, token: &ApiToken) -> StoreResult<()> {
        self.sql.insert_api_token(token)
    }
    fn find_api_token_by_hash(&self, token_hash: &str) -> StoreResult<Option<ApiToken>> {
        self.sql.find_api_token_by_hash(token_hash)
    }
    fn list_api_tokens(&self) -> StoreResult<Vec<ApiToken>> {
        self.sql.list_api_tokens()
    }
    fn delete_api_token(&self, id: &str) -> StoreResult<bool> {
        self.sql.delete_api_token(id)
    }
    fn insert_user(&self, user: &crate::User) -> StoreResult<()> {
        self.sql.insert_user(user)
    }
    fn find_user(&self, name: &str) -> StoreResult<Option<crate::User>> {
        self.sql.find_user(name)
    }
    fn list_users(&self) -> StoreResult<Vec<crate::User>> {
        self.sql.list_users()
    }
    fn delete_user(&self, name: &str) -> StoreResult<bool> {
        self.sql.delete_user(name)
    }
    fn insert_web_session(&self, session: &crate::WebSession) -> StoreResult<()> {
        self.sql.insert_web_session(session)
    }
    fn find_web_session(&self, cookie_hash: &str) -> StoreResult<Option<crate::WebSession>> {
        self.sql.find_web_session(cookie_hash)
    }
    fn touch_web_session(&self, cookie_hash: &str, at: lore_core::Ts) -> StoreResult<bool> {
        self.sql.touch_web_session(cookie_hash, at)
    }
    fn delete_web_session(&self, cookie_hash: &str) -> StoreResult<bool> {
        self.sql.delete_web_session(cookie_hash)
    }
    fn delete_web_sessions_idle_since(&self, before: lore_core::Ts) -> StoreResult<usize> {
        self.sql.delete_web_sessions_idle_since(before)
    }
}

/// The search documents of entities and claims must be what memory says: one per entity with its
/// names, one per claim with a text value, and no other.
fn search_document_problems(
    connection: &Connection,
    owner: &str,
    state: &OwnerState,
) -> StoreResult<Vec<String>> {
    let mut expected: BTreeMap<(String, String), String> = BTreeMap::new();
    for entity in state.knowledge.entities.values() {
        expected.insert(
            ("entity".into(), entity.id.clone()),
            tx::entity_search_body(&state.knowledge, entity),
        );
    }
    for claim in state.knowledge.claims.values() {
        if let Some(value) = &claim.value_text {
            expected.insert(("claim".into(), claim.id.clone()), value.clone());
        }
    }
    let mut statement = connection
        .prepare(
            "SELECT kind, ref, body FROM search_docs WHERE owner = ?1 AND kind IN ('entity', 'claim')",
        )
        .map_err(backend)?;
    let stored = statement
        .query_map([owner], |row| Ok(((row.get(0)?, row.get(1)?), row.get(2)?)))
        .map_err(backend)?
        .collect::<Result<BTreeMap<(String, String), String>, _>>()
        .map_err(backend)?;
    let mut problems = Vec::new();
    for (key, body) in &expected {
        match stored.get(key) {
            None => problems.push(format!(
                "{owner}: no search document for {} {}",
                key.0, key.1
            )),
            Some(found) if found != body => problems.push(format!(
                "{owner}: search document of {} {} reads '{found}', not '{body}'",
                key.0, key.1
            )),
            Some(_) => {}
        }
    }
    for key in stored.keys().filter(|key| !expected.contains_key(*key)) {
        problems.push(format!(
            "{owner}: search document of no {} {}",
            key.0, key.1
        ));
    }
    Ok(problems)
}

/// The log must give back what memory holds: replayed from its first entry, the same rows.
fn log_problems(
    connection: &Connection,
    owner: &str,
    state: &OwnerState,
) -> StoreResult<Vec<String>> {
    let mut replayed = OwnerState::default();
    sync(&mut replayed, connection, owner)?;
    let rows = |k: &Knowledge| {
        let mut rows: Vec<String> = k.rows().map(|row| format!("{row:?}")).collect();
        rows.sort();
        rows
    };
    let (stored, held) = (rows(&replayed.knowledge), rows(&state.knowledge));
    if stored == held && replayed.meetings.len() == state.meetings.len() {
        return Ok(Vec::new());
    }
    let missing = held.iter().filter(|row| !stored.contains(row)).count();
    let extra = stored.iter().filter(|row| !held.contains(row)).count();
    Ok(vec![format!(
        "{owner}: the knowledge log replays to other rows than memory holds \
         ({missing} rows missing from it, {extra} more in it)"
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries are encoded into a reused buffer, in the format every earlier build wrote: a plain
    /// entry as it is, a larger one as LZ4's size-prepended block (what `compress_prepend_size`
    /// gives), so logs written before and after read back alike.
    #[test]
    fn entries_keep_their_format_in_a_reused_buffer() {
        let mut entry = vec![7; 100_000];
        let small: Vec<u8> = (0..COMPRESS_ABOVE as u32)
            .map(|n| (n % 251) as u8)
            .collect();
        let large: Vec<u8> = (0..200_000u32).map(|n| (n % 7 + n / 1000) as u8).collect();
        for bytes in [&small, &large, &small] {
            encode_entry(bytes, &mut entry).unwrap();
            let expected = if bytes.len() <= COMPRESS_ABOVE {
                [vec![ENTRY_PLAIN], bytes.to_vec()].concat()
            } else {
                [vec![ENTRY_LZ4], lz4_flex::compress_prepend_size(bytes)].concat()
            };
            assert_eq!(entry, expected);
        }
        encode_entry(&large, &mut entry).unwrap();
        assert!(entry.len() < large.len() / 4);
    }
}
