//! The PostgreSQL backend: a small connection pool, migrations of its own, per-owner serialized write
//! transactions (an advisory lock on the owner plus retries of serialization failures), and the same
//! row encodings as SQLite. Every table and index leads with `owner` (Citus-ready).

mod graph_scan;
mod read_side;
mod rows;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use lore_core::model::*;
use lore_core::Ts;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Statement, Transaction};

use crate::sqlite::{
    ATTACHED_LINKS, CLAIM_COLUMNS, CLAIM_UPSERT, ENTITY_COLUMNS, ENTITY_OBSERVATIONS,
    EVIDENCE_COLUMNS, FIND_ENTITY_REDIRECT, INSERT_REVISION_MEETING, LINK_COLUMNS,
    LIST_ENTITY_REDIRECTS, MEETING_COLUMNS, OBSERVATION_TIMES, REPLACE_REVISION_SNAPSHOTS,
    REVISIONS_NAMING_MEETING, REVISION_COLUMNS, SET_ENTITY_REDIRECT, SUGGESTION_COLUMNS,
    TASK_COLUMNS,
};
use crate::{Store, StoreError, StoreResult, Tx, TxWork};
use rows::*;

const MIGRATIONS: &[&str] = &[
    include_str!("schema_v1.sql"),
    include_str!("schema_v2.sql"),
    include_str!("schema_v3.sql"),
    include_str!("schema_v4.sql"),
    include_str!("schema_v5.sql"),
    include_str!("schema_v6.sql"),
];
const MAX_IDLE_CONNECTIONS: usize = 16;
const MAX_ATTEMPTS: u32 = 6;

/// One pooled connection with its prepared statements.
struct Connection {
    client: Client,
    statements: HashMap<String, Statement>,
}

pub struct PostgresStore {
    url: String,
    idle: Mutex<Vec<Connection>>,
    blob_dir: PathBuf,
    /// The owners' in-memory graph indexes and their build thread (`owner_builds.rs`).
    graphs: crate::GraphBuilds,
}

fn backend(error: postgres::Error) -> StoreError {
    if let Some(db_error) = error.as_db_error() {
        let code = db_error.code().code();
        if code.starts_with("23") {
            return StoreError::Conflict(db_error.message().to_string());
        }
        return StoreError::Backend(format!("{} ({code})", db_error.message()));
    }
    StoreError::Backend(error.to_string())
}

/// Serialization failures and deadlocks are retried; everything else is final.
fn is_retryable(error: &postgres::Error) -> bool {
    error
        .code()
        .is_some_and(|code| matches!(code.code(), "40001" | "40P01"))
}

/// Turns the SQLite-flavoured SQL the backends share into PostgreSQL's: `?N` → `$N`, `IS ?N` → `IS NOT
/// DISTINCT FROM $N`.
fn dialect(sql: &str) -> String {
    let sql = sql.replace(" IS ?", " IS NOT DISTINCT FROM ?");
    let mut out = String::with_capacity(sql.len());
    for character in sql.chars() {
        out.push(if character == '?' { '$' } else { character });
    }
    out
}

/// The statement that finds `query`'s search candidates, as PostgreSQL runs it (for plan checks).
pub fn search_candidates_statement(query: &lore_core::search::SearchQuery) -> String {
    dialect(read_side::search_candidates_sql(query))
}

impl PostgresStore {
    /// Connects, migrates, and keeps blobs in `blob_dir`.
    pub fn open(url: &str, blob_dir: &Path) -> StoreResult<PostgresStore> {
        let store = PostgresStore {
            url: url.to_string(),
            idle: Mutex::new(Vec::new()),
            blob_dir: blob_dir.to_path_buf(),
            graphs: graph_scan::start_graph_builds(url.to_string())?,
        };
        let mut connection = store.connect()?;
        migrate(&mut connection.client)?;
        store.release(connection);
        Ok(store)
    }

    fn connect(&self) -> StoreResult<Connection> {
        connect(&self.url)
    }

    fn acquire(&self) -> StoreResult<Connection> {
        let pooled = self
            .idle
            .lock()
            .map_err(|_| StoreError::Backend("connection pool poisoned".into()))?
            .pop();
        match pooled {
            Some(connection) if !connection.client.is_closed() => Ok(connection),
            _ => self.connect(),
        }
    }

    fn release(&self, connection: Connection) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < MAX_IDLE_CONNECTIONS && !connection.client.is_closed() {
                idle.push(connection);
            }
        }
    }

    fn run(&self, owner: &str, read_only: bool, work: &mut TxWork<'_>) -> StoreResult<()> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut connection = self.acquire()?;
            let graphs = read_only.then_some(&self.graphs);
            let outcome = run_once(&mut connection, owner, graphs, work);
            self.release(connection);
            match outcome {
                Err(Attempt::Retry(error)) if attempt < MAX_ATTEMPTS => {
                    tracing_backoff(attempt, &error);
                }
                Err(Attempt::Retry(error)) => return Err(backend(error)),
                Err(Attempt::Fail(error)) => return Err(error),
                Ok(()) => return Ok(()),
            }
        }
    }
}

fn connect(url: &str) -> StoreResult<Connection> {
    let client = Client::connect(url, NoTls).map_err(|error| {
        let cause = std::error::Error::source(&error)
            .map(|cause| format!(": {cause}"))
            .unwrap_or_default();
        StoreError::Backend(format!("cannot connect to PostgreSQL: {error}{cause}"))
    })?;
    Ok(Connection {
        client,
        statements: HashMap::new(),
    })
}

const API_TOKEN_COLUMNS: &str =
    "SELECT token_hash, id, owner, scope, label, created_at, expires_at FROM api_tokens";

impl PostgresStore {
    /// Runs one statement outside any owner's transaction (the owner-agnostic token table).
    fn admin<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> StoreResult<T> {
        let mut connection = self.acquire()?;
        let outcome = work(&mut connection.client).map_err(backend);
        self.release(connection);
        outcome
    }
}

fn tracing_backoff(attempt: u32, _error: &postgres::Error) {
    std::thread::sleep(Duration::from_millis(5 * 2u64.pow(attempt)));
}

enum Attempt {
    Retry(postgres::Error),
    Fail(StoreError),
}

/// One transaction; `graphs` is the store's graph memo for a read, `None` for a write.
fn run_once(
    connection: &mut Connection,
    owner: &str,
    graphs: Option<&crate::GraphBuilds>,
    work: &mut TxWork<'_>,
) -> Result<(), Attempt> {
    let read_only = graphs.is_some();
    let classify = |error: postgres::Error| {
        if is_retryable(&error) {
            Attempt::Retry(error)
        } else {
            Attempt::Fail(backend(error))
        }
    };
    let Connection { client, statements } = connection;
    let mut transaction = client.transaction().map_err(classify)?;
    if read_only {
        transaction
            .batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .map_err(classify)?;
    } else {
        // Writers of one owner take turns; other owners and all readers proceed (MVCC).
        transaction
            .execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))",
                &[&owner],
            )
            .map_err(classify)?;
    }
    let mut tx = PgTx {
        transaction: &mut transaction,
        statements,
        owner: owner.to_string(),
        retry: None,
        graphs,
        identifiers: Default::default(),
    };
    let mut result = work(&mut tx);
    if result.is_ok() && !read_only {
        // Readers' graph indexes name the owner's state by this version (`graph_scan.rs`).
        let owner = tx.owner.clone();
        result = tx.exec(graph_scan::BUMP_VERSION, &[&owner]).map(|_| ());
    }
    if let Some(error) = tx.retry.take() {
        return Err(Attempt::Retry(error));
    }
    result.map_err(Attempt::Fail)?;
    if read_only {
        transaction.rollback().map_err(classify)
    } else {
        transaction.commit().map_err(classify)
    }
}

fn migrate(client: &mut Client) -> StoreResult<()> {
    let mut transaction = client.transaction().map_err(backend)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock(4242424242)", &[])
        .map_err(backend)?;
    transaction
        .batch_execute("CREATE TABLE IF NOT EXISTS lore_schema_version (version BIGINT NOT NULL)")
        .map_err(backend)?;
    let version: i64 = transaction
        .query_opt("SELECT version FROM lore_schema_version", &[])
        .map_err(backend)?
        .map(|row| row.get(0))
        .unwrap_or(0);
    if version as usize > MIGRATIONS.len() {
        return Err(StoreError::Backend(format!(
            "database schema version {version} is newer than this lore understands ({}); upgrade lore",
            MIGRATIONS.len()
        )));
    }
    for migration in MIGRATIONS.iter().skip(version as usize) {
        transaction.batch_execute(migration).map_err(backend)?;
    }
    transaction
        .execute("DELETE FROM lore_schema_version", &[])
        .map_err(backend)?;
    transaction
        .execute(
            "INSERT INTO lore_schema_version (version) VALUES ($1)",
            &[&(MIGRATIONS.len() as i64)],
        )
        .map_err(backend)?;
    transaction.commit().map_err(backend)
}

impl Store for PostgresStore {
    fn write(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()> {
        self.run(owner, false, work)
    }

    fn read(&self, owner: &str, work: &mut TxWork<'_>) -> StoreResult<()> {
        self.run(owner, true, work)
    }

    fn blob_dir(&self) -> &Path {
        &self.blob_dir
    }

    fn owners(&self) -> StoreResult<Vec<String>> {
        let mut connection = self.acquire()?;
        let rows = connection
            .client
            .query(
                "SELECT owner FROM entities UNION SELECT owner FROM meetings UNION SELECT owner FROM revisions ORDER BY 1",
                &[],
            )
            .map_err(backend);
        self.release(connection);
        rows?.iter().map(first_text).collect()
    }

    fn integrity_problems(&self) -> StoreResult<Vec<String>> {
        // PostgreSQL enforces its constraints on every write; check that the schema is complete.
        let mut connection = self.acquire()?;
        let missing = connection
            .client
            .query(
                "SELECT t FROM unnest(ARRAY['meetings','entities','claims','evidence','revisions']) AS t \
                 WHERE to_regclass(t) IS NULL",
                &[],
            )
            .map_err(backend);
        self.release(connection);
        Ok(missing?
            .iter()
            .filter_map(|row| first_text(row).ok())
            .map(|t| format!("missing table {t}"))
            .collect())
    }

    fn ingest_batch(&self) -> usize {
        1
    }

    fn cached_graph(&self, owner: &str) -> bool {
        let version = self.admin(|client| {
            client
                .query_opt(&dialect(crate::sqlite::OWNER_VERSION), &[&owner])
                .map(|row| row.map_or(0, |row| row.get::<_, i64>(0)))
        });
        version.is_ok_and(|version| self.graphs.held(owner, version).is_some())
    }

    fn finish_background_work(&self) {
        self.graphs.wait_idle();
    }

    fn backend_name(&self) -> &'static str {
        "postgres"
    }

    fn insert_api_token(&self, token: &crate::ApiToken) -> StoreResult<()> {
        self.admin(|client| {
            client.execute(
                "INSERT INTO api_tokens (token_hash, id, owner, scope, label, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &token.token_hash, &token.id, &token.owner, &token.scope, &token.label, &token.created_at.0,
                    &millis(token.expires_at),
                ],
            )
        })
        .map(|_| ())
    }

    fn find_api_token_by_hash(&self, token_hash: &str) -> StoreResult<Option<crate::ApiToken>> {
        let rows = self.admin(|client| {
            client.query(
                &format!("{API_TOKEN_COLUMNS} WHERE token_hash = $1"),
                &[&token_hash],
            )
        })?;
        rows.iter().map(api_token_row).next().transpose()
    }

    fn list_api_tokens(&self) -> StoreResult<Vec<crate::ApiToken>> {
        let rows = self.admin(|client| {
            client.query(&format!("{API_TOKEN_COLUMNS} ORDER BY created_at, id"), &[])
        })?;
        rows.iter().map(api_token_row).collect()
    }

    fn delete_api_token(&self, id: &str) -> StoreResult<bool> {
        self.admin(|client| client.execute("DELETE FROM api_tokens WHERE id = $1", &[&id]))
            .map(|changed| changed > 0)
    }

    fn insert_user(&self, user: &crate::User) -> StoreResult<()> {
        self.admin(|client| {
            client.execute(
                "INSERT INTO users (name, password_hash, created_at) VALUES ($1, $2, $3)",
                &[&user.name, &user.password_hash, &user.created_at.0],
            )
        })
        .map(|_| ())
    }

    fn find_user(&self, name: &str) -> StoreResult<Option<crate::User>> {
        let rows = self.admin(|client| {
            client.query(
                "SELECT name, password_hash, created_at FROM users WHERE name = $1",
                &[&name],
            )
        })?;
        Ok(rows.iter().map(user_row).next())
    }

    fn list_users(&self) -> StoreResult<Vec<crate::User>> {
        let rows = self.admin(|client| {
            client.query(
                "SELECT name, password_hash, created_at FROM users ORDER BY name",
                &[],
            )
        })?;
        Ok(rows.iter().map(user_row).collect())
    }

    fn delete_user(&self, name: &str) -> StoreResult<bool> {
        // One statement: the user and the sessions signed in as it go together.
        self.admin(|client| {
            client.execute(
                "WITH sessions AS (DELETE FROM web_sessions WHERE owner = $1) \
                 DELETE FROM users WHERE name = $1",
                &[&name],
            )
        })
        .map(|changed| changed > 0)
    }

    fn insert_web_session(&self, session: &crate::WebSession) -> StoreResult<()> {
        self.admin(|client| {
            client.execute(
                "INSERT INTO web_sessions (cookie_hash, owner, created_at, last_seen_at) \
                 VALUES ($1, $2, $3, $4)",
                &[
                    &session.cookie_hash,
                    &session.owner,
                    &session.created_at.0,
                    &session.last_seen_at.0,
                ],
            )
        })
        .map(|_| ())
    }

    fn find_web_session(&self, cookie_hash: &str) -> StoreResult<Option<crate::WebSession>> {
        let rows = self.admin(|client| {
            client.query(
                "SELECT cookie_hash, owner, created_at, last_seen_at FROM web_sessions \
                 WHERE cookie_hash = $1",
                &[&cookie_hash],
            )
        })?;
        Ok(rows.first().map(|row| crate::WebSession {
            cookie_hash: row.get(0),
            owner: row.get(1),
            created_at: Ts(row.get(2)),
            last_seen_at: Ts(row.get(3)),
        }))
    }

    fn touch_web_session(&self, cookie_hash: &str, at: Ts) -> StoreResult<bool> {
        self.admin(|client| {
            client.execute(
                "UPDATE web_sessions SET last_seen_at = $2 WHERE cookie_hash = $1",
                &[&cookie_hash, &at.0],
            )
        })
        .map(|changed| changed > 0)
    }

    fn delete_web_session(&self, cookie_hash: &str) -> StoreResult<bool> {
        self.admin(|client| {
            client.execute(
                "DELETE FROM web_sessions WHERE cookie_hash = $1",
                &[&cookie_hash],
            )
        })
        .map(|changed| changed > 0)
    }

    fn delete_web_sessions_idle_since(&self, before: Ts) -> StoreResult<usize> {
        self.admin(|client| {
            client.execute(
                "DELETE FROM web_sessions WHERE last_seen_at < $1",
                &[&before.0],
            )
        })
        .map(|changed| changed as usize)
    }
}

fn user_row(row: &postgres::Row) -> crate::User {
    crate::User {
        name: row.get(0),
        password_hash: row.get(1),
        created_at: Ts(row.get(2)),
    }
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

struct PgTx<'t, 'c> {
    transaction: &'t mut Transaction<'c>,
    statements: &'t mut HashMap<String, Statement>,
    owner: String,
    /// A serialization failure seen inside the work; the whole transaction is retried.
    retry: Option<postgres::Error>,
    /// The store's graph memo, in a read.
    graphs: Option<&'t crate::GraphBuilds>,
    /// Identifier lookups this attempt made or wrote, by (scheme, value) (`None`: no entity holds
    /// it); kept current as the SQLite writer's memo is (`SqliteTx::identifiers`). An attempt that
    /// is retried starts a fresh one.
    identifiers: crate::IdentifierMemo,
}

impl PgTx<'_, '_> {
    /// Inserts a claim row; `conflict` is empty (a duplicate id fails) or `CLAIM_UPSERT`.
    fn write_claim(&mut self, c: &Claim, conflict: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        let d = &c.derived;
        self.exec(
            &[
                "INSERT INTO claims (owner, ",
                CLAIM_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, \
                 ?21, ?22, ?23, ?24, ?25, ?26)",
                conflict
            ].concat(),
            &[
                &owner, &c.id, &c.subject, &c.predicate, &c.object_entity, &c.value_text,
                &c.value_json.as_ref().map(|v| v.to_string()), &c.value_key, &c.context_entity, &c.cardinality.as_str(),
                &c.group_key, &millis(c.explicit_valid_from), &millis(c.explicit_valid_to), &millis(c.retracted_at),
                &c.recorded_at.0, &d.status.as_str(), &d.authority.as_str(), &millis(d.valid_from), &millis(d.valid_to),
                &millis(d.first_observed_at), &millis(d.last_observed_at), &millis(d.superseded_at), &d.superseded_by,
                &d.conflict.map(|r| r.as_str()), &d.end_outcome.map(|o| o.as_str()), &to_json(&d.periods),
            ],
        )
        .map(|_| ())
    }

    fn statement(&mut self, sql: &str) -> StoreResult<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.transaction.prepare(&dialect(sql)).map_err(backend)?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    fn exec(&mut self, sql: &str, params: Params) -> StoreResult<u64> {
        let statement = self.statement(sql)?;
        match self.transaction.execute(&statement, params) {
            Ok(count) => Ok(count),
            Err(error) if is_retryable(&error) => {
                let message = error.to_string();
                self.retry = Some(error);
                Err(StoreError::Backend(message))
            }
            Err(error) => Err(backend(error)),
        }
    }

    fn all<T>(
        &mut self,
        sql: &str,
        params: Params,
        map: fn(&postgres::Row) -> StoreResult<T>,
    ) -> StoreResult<Vec<T>> {
        let statement = self.statement(sql)?;
        match self.transaction.query(&statement, params) {
            Ok(rows) => rows.iter().map(map).collect(),
            Err(error) if is_retryable(&error) => {
                let message = error.to_string();
                self.retry = Some(error);
                Err(StoreError::Backend(message))
            }
            Err(error) => Err(backend(error)),
        }
    }

    fn one<T>(
        &mut self,
        sql: &str,
        params: Params,
        map: fn(&postgres::Row) -> StoreResult<T>,
    ) -> StoreResult<Option<T>> {
        Ok(self.all(sql, params, map)?.into_iter().next())
    }
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("domain values serialize")
}

fn millis(ts: Option<Ts>) -> Option<i64> {
    ts.map(|t| t.0)
}

fn expect_one(changed: u64, what: &str, id: &str) -> StoreResult<()> {
    if changed == 0 {
        Err(StoreError::NotFound(format!("{what} {id}")))
    } else {
        Ok(())
    }
}

macro_rules! sql {
    ($($part:expr),+ $(,)?) => { &[$($part),+].concat() };
}

impl Tx for PgTx<'_, '_> {
    fn find_graph_index(&mut self) -> StoreResult<Option<std::sync::Arc<crate::GraphIndex>>> {
        self.graph_index()
    }

    fn upsert_series(&mut self, series: &MeetingSeries) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO meeting_series (owner, id, calendar_account, calendar_id, recurring_event_id) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (owner, id) DO NOTHING",
            &[&owner, &series.id, &series.calendar_account, &series.calendar_id, &series.recurring_event_id],
        )
        .map(|_| ())
    }

    fn find_series(&mut self, id: &str) -> StoreResult<Option<MeetingSeries>> {
        let owner = self.owner.clone();
        self.one(
            "SELECT id, calendar_account, calendar_id, recurring_event_id FROM meeting_series WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
            series_row,
        )
    }

    fn insert_meeting(&mut self, m: &Meeting) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO meetings (owner, id, external_id, title, started_at, ended_at, platform, series, content_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &[&owner, &m.id, &m.external_id, &m.title, &m.started_at.0, &millis(m.ended_at), &m.platform, &m.series, &m.content_hash],
        )
        .map(|_| ())
    }

    fn find_meeting(&mut self, id: &str) -> StoreResult<Option<Meeting>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                MEETING_COLUMNS,
                " FROM meetings WHERE owner = ?1 AND id = ?2"
            ),
            &[&owner, &id],
            meeting_row,
        )
    }

    fn find_meeting_by_external_id(&mut self, external_id: &str) -> StoreResult<Option<Meeting>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                MEETING_COLUMNS,
                " FROM meetings WHERE owner = ?1 AND external_id = ?2"
            ),
            &[&owner, &external_id],
            meeting_row,
        )
    }

    fn list_meetings(&mut self) -> StoreResult<Vec<Meeting>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                MEETING_COLUMNS,
                " FROM meetings WHERE owner = ?1 ORDER BY started_at, id"
            ),
            &[&owner],
            meeting_row,
        )
    }

    fn delete_meeting(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM meetings WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn insert_participant(&mut self, p: &Participant) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO participants (owner, meeting, idx, display_name, email, platform_stable_id, device_id, \
             speaker_label, person_entity, excluded) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &[
                &owner, &p.meeting, &p.idx, &p.display_name, &p.email, &p.platform_stable_id, &p.device_id,
                &p.speaker_label, &p.person_entity, &(p.excluded as i64),
            ],
        )
        .map(|_| ())
    }

    fn list_participants(&mut self, meeting: &str) -> StoreResult<Vec<Participant>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT meeting, idx, display_name, email, platform_stable_id, device_id, speaker_label, person_entity, \
             excluded FROM participants WHERE owner = ?1 AND meeting = ?2 ORDER BY idx",
            &[&owner, &meeting],
            participant_row,
        )
    }

    fn insert_segment(&mut self, s: &Segment) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO segments (owner, meeting, id, seq, start_ms, end_ms, speaker_label, attribution, text) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &[&owner, &s.meeting, &s.id, &s.seq, &s.start_ms, &s.end_ms, &s.speaker_label, &s.attribution.as_str(), &s.text],
        )
        .map(|_| ())
    }

    fn list_segments(&mut self, meeting: &str) -> StoreResult<Vec<Segment>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT meeting, id, seq, start_ms, end_ms, speaker_label, attribution, text FROM segments \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY seq",
            &[&owner, &meeting],
            segment_row,
        )
    }

    fn insert_note(&mut self, n: &Note) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO notes (owner, id, meeting, local_id, created_at, author, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[&owner, &n.id, &n.meeting, &n.local_id, &n.created_at.0, &n.author, &n.text],
        )
        .map(|_| ())
    }

    fn find_note(&mut self, id: &str) -> StoreResult<Option<Note>> {
        let owner = self.owner.clone();
        self.one(
            "SELECT id, meeting, local_id, created_at, author, text FROM notes WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
            note_row,
        )
    }

    fn list_notes(&mut self, meeting: &str) -> StoreResult<Vec<Note>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT id, meeting, local_id, created_at, author, text FROM notes WHERE owner = ?1 AND meeting = ?2 \
             ORDER BY created_at, id",
            &[&owner, &meeting],
            note_row,
        )
    }

    fn delete_note(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM notes WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn insert_attachment(&mut self, a: &Attachment) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO attachments (owner, id, meeting, local_id, kind, filename, media_type, sha256, size, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &[&owner, &a.id, &a.meeting, &a.local_id, &a.kind.as_str(), &a.filename, &a.media_type, &a.sha256, &a.size, &a.created_at.0],
        )
        .map(|_| ())
    }

    fn find_attachment(&mut self, id: &str) -> StoreResult<Option<Attachment>> {
        let owner = self.owner.clone();
        self.one(
            "SELECT id, meeting, local_id, kind, filename, media_type, sha256, size, created_at FROM attachments \
             WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
            attachment_row,
        )
    }

    fn list_attachments(&mut self, meeting: &str) -> StoreResult<Vec<Attachment>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT id, meeting, local_id, kind, filename, media_type, sha256, size, created_at FROM attachments \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY created_at, id",
            &[&owner, &meeting],
            attachment_row,
        )
    }

    fn delete_attachment(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM attachments WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn count_attachments_with_sha256(&mut self, sha256: &str) -> StoreResult<i64> {
        let owner = self.owner.clone();
        Ok(self
            .one(
                "SELECT count(*) FROM attachments WHERE owner = ?1 AND sha256 = ?2",
                &[&owner, &sha256],
                first_int,
            )?
            .unwrap_or(0))
    }

    fn upsert_entity(&mut self, e: &Entity) -> StoreResult<()> {
        let owner = self.owner.clone();
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
            &[
                &owner, &e.id, &e.kind.as_str(), &e.canonical_name, &e.manual_name, &e.normalized_key,
                &to_json(&e.emails), &to_json(&e.domains), &to_json(&e.external_keys), &e.status.as_str(), &e.merged_into,
                &to_json(&e.do_not_merge_with), &to_json(&e.manual_attributes), &e.manual_brief, &(e.pinned as i64),
                &e.scope_meeting, &millis(e.first_observed_at), &millis(e.last_observed_at), &to_json(&e.current_attributes),
                &e.current_brief, &e.weight_basis, &millis(e.weight_latest),
            ],
        )
        .map(|_| ())
    }

    fn find_entity(&mut self, id: &str) -> StoreResult<Option<Entity>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                ENTITY_COLUMNS,
                " FROM entities WHERE owner = ?1 AND id = ?2"
            ),
            &[&owner, &id],
            entity_row,
        )
    }

    fn list_entities(&mut self) -> StoreResult<Vec<Entity>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                ENTITY_COLUMNS,
                " FROM entities WHERE owner = ?1 ORDER BY kind, canonical_name COLLATE \"C\", id"
            ),
            &[&owner],
            entity_row,
        )
    }

    fn delete_entity(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM entities WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )?;
        // The entity's identifiers went with it (`ON DELETE CASCADE`).
        self.identifiers.entity_deleted(id);
        Ok(())
    }

    fn insert_identifier(&mut self, scheme: &str, value: &str, entity: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        let inserted = self.exec(
            "INSERT INTO entity_identifiers (owner, scheme, value, entity) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (owner, scheme, value) DO NOTHING",
            &[&owner, &scheme, &value, &entity],
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
        let owner = self.owner.clone();
        let found = self.one(
            "SELECT entity FROM entity_identifiers WHERE owner = ?1 AND scheme = ?2 AND value = ?3",
            &[&owner, &scheme, &value],
            first_text,
        )?;
        self.identifiers.found(scheme, value, found.clone());
        Ok(found)
    }

    fn insert_alias(&mut self, a: &Alias) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO entity_aliases (owner, entity, alias, alias_key, meeting, observed_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, entity, alias, meeting) DO NOTHING",
            &[&owner, &a.entity, &a.alias, &lore_core::normalize::value_key(&a.alias), &a.meeting, &a.observed_at.0],
        )
        .map(|_| ())
    }

    fn list_aliases(&mut self, entity: &str) -> StoreResult<Vec<Alias>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT entity, alias, meeting, observed_at FROM entity_aliases WHERE owner = ?1 AND entity = ?2 \
             ORDER BY observed_at, alias COLLATE \"C\", meeting",
            &[&owner, &entity],
            alias_row,
        )
    }

    fn list_entities_by_alias_key(&mut self, alias_key: &str) -> StoreResult<Vec<String>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT DISTINCT entity FROM entity_aliases WHERE owner = ?1 AND alias_key = ?2 ORDER BY entity",
            &[&owner, &alias_key],
            first_text,
        )
    }

    fn delete_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>> {
        let owner = self.owner.clone();
        let entities = self.all(
            "SELECT DISTINCT entity FROM entity_aliases WHERE owner = ?1 AND meeting = ?2 ORDER BY entity",
            &[&owner, &meeting],
            first_text,
        )?;
        self.exec(
            "DELETE FROM entity_aliases WHERE owner = ?1 AND meeting = ?2",
            &[&owner, &meeting],
        )?;
        Ok(entities)
    }

    fn count_entity_references(&mut self, entity: &str) -> StoreResult<i64> {
        let owner = self.owner.clone();
        Ok(self
            .one(
                "SELECT (SELECT count(*) FROM (SELECT 1 FROM claims WHERE owner = ?1 AND subject = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM claims WHERE owner = ?1 AND object_entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM claims WHERE owner = ?1 AND context_entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM entity_aliases WHERE owner = ?1 AND entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM participants WHERE owner = ?1 AND person_entity = ?2 LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM tasks WHERE owner = ?1 AND (assignee = ?2 OR project = ?2) LIMIT 1) AS r) \
                 + (SELECT count(*) FROM (SELECT 1 FROM resource_links WHERE owner = ?1 AND entity = ?2 LIMIT 1) AS r)",
                &[&owner, &entity],
                first_int,
            )?
            .unwrap_or(0))
    }

    fn insert_claim(&mut self, c: &Claim) -> StoreResult<()> {
        self.write_claim(c, "")
    }

    fn find_claim(&mut self, id: &str) -> StoreResult<Option<Claim>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND id = ?2"
            ),
            &[&owner, &id],
            claim_row,
        )
    }

    fn update_claim_derived(&mut self, id: &str, d: &ClaimDerived) -> StoreResult<()> {
        let owner = self.owner.clone();
        let changed = self.exec(
            "UPDATE claims SET status = ?3, authority = ?4, valid_from = ?5, valid_to = ?6, first_observed_at = ?7, \
             last_observed_at = ?8, superseded_at = ?9, superseded_by = ?10, conflict = ?11, end_outcome = ?12, \
             periods = ?13 WHERE owner = ?1 AND id = ?2",
            &[
                &owner, &id, &d.status.as_str(), &d.authority.as_str(), &millis(d.valid_from), &millis(d.valid_to),
                &millis(d.first_observed_at), &millis(d.last_observed_at), &millis(d.superseded_at), &d.superseded_by,
                &d.conflict.map(|r| r.as_str()), &d.end_outcome.map(|o| o.as_str()), &to_json(&d.periods),
            ],
        )?;
        expect_one(changed, "claim", id)
    }

    fn update_claim_retracted(&mut self, id: &str, retracted_at: Option<Ts>) -> StoreResult<()> {
        let owner = self.owner.clone();
        let changed = self.exec(
            "UPDATE claims SET retracted_at = ?3 WHERE owner = ?1 AND id = ?2",
            &[&owner, &id, &millis(retracted_at)],
        )?;
        expect_one(changed, "claim", id)
    }

    fn delete_claim(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM claims WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn list_claims_by_slot(&mut self, slot: &SlotKey) -> StoreResult<Vec<Claim>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND subject = ?2 AND predicate = ?3 AND context_entity IS ?4 ORDER BY id"
            ),
            &[&owner, &slot.subject, &slot.predicate, &slot.context],
            claim_row,
        )
    }

    fn list_claims_by_subject(&mut self, entity: &str) -> StoreResult<Vec<Claim>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND subject = ?2 ORDER BY predicate, id"
            ),
            &[&owner, &entity],
            claim_row,
        )
    }

    fn list_claims_mentioning(&mut self, entity: &str) -> StoreResult<Vec<Claim>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND id IN (SELECT id FROM claims WHERE owner = ?1 AND object_entity = ?2 \
                 UNION SELECT id FROM claims WHERE owner = ?1 AND context_entity = ?2) ORDER BY predicate, id"
            ),
            &[&owner, &entity],
            claim_row,
        )
    }

    fn list_claims(&mut self) -> StoreResult<Vec<Claim>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 ORDER BY id"
            ),
            &[&owner],
            claim_row,
        )
    }

    fn insert_evidence(&mut self, e: &Evidence) -> StoreResult<bool> {
        let owner = self.owner.clone();
        let inserted = self.exec(
            sql!(
                "INSERT INTO evidence (owner, ",
                EVIDENCE_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21) \
                 ON CONFLICT (owner, id) DO NOTHING"
            ),
            &[
                &owner, &e.id, &e.claim, &e.source_kind.as_str(), &e.source_id, &e.meeting, &e.observed_at.0,
                &to_json(&e.segment_ids), &e.start_ms, &e.end_ms, &e.speaker, &e.speaker_label,
                &e.attribution.map(|a| a.as_str()), &e.quote, &e.source_url, &e.confidence, &e.extraction_run_id,
                &e.kind.as_str(), &e.authority.as_str(), &e.outcome.map(|o| o.as_str()), &e.recorded_at.0,
            ],
        )?;
        Ok(inserted == 1)
    }

    fn list_evidence_by_claim(&mut self, claim: &str) -> StoreResult<Vec<Evidence>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                EVIDENCE_COLUMNS,
                " FROM evidence WHERE owner = ?1 AND claim = ?2 ORDER BY observed_at, start_ms, id"
            ),
            &[&owner, &claim],
            evidence_row,
        )
    }

    fn list_evidence_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Evidence>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                EVIDENCE_COLUMNS,
                " FROM evidence WHERE owner = ?1 AND meeting = ?2 ORDER BY id"
            ),
            &[&owner, &meeting],
            evidence_row,
        )
    }

    fn list_evidence_by_source(
        &mut self,
        kind: SourceKind,
        source_id: &str,
    ) -> StoreResult<Vec<Evidence>> {
        let owner = self.owner.clone();
        self.all(
            sql!("SELECT ", EVIDENCE_COLUMNS, " FROM evidence WHERE owner = ?1 AND source_kind = ?2 AND source_id = ?3 ORDER BY id"),
            &[&owner, &kind.as_str(), &source_id],
            evidence_row,
        )
    }

    fn list_evidence(&mut self) -> StoreResult<Vec<Evidence>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                EVIDENCE_COLUMNS,
                " FROM evidence WHERE owner = ?1 ORDER BY id"
            ),
            &[&owner],
            evidence_row,
        )
    }

    fn delete_evidence(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM evidence WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn delete_evidence_many(&mut self, ids: &[String]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM evidence WHERE owner = ?1 AND id = ANY(?2)",
            &[&owner, &ids],
        )
        .map(|_| ())
    }

    fn find_claims(&mut self, ids: &[String]) -> StoreResult<Vec<Claim>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                CLAIM_COLUMNS,
                " FROM claims WHERE owner = ?1 AND id = ANY(?2) ORDER BY id COLLATE \"C\""
            ),
            &[&owner, &ids],
            claim_row,
        )
    }

    fn list_claims_without_evidence(&mut self, claims: &[String]) -> StoreResult<Vec<String>> {
        if claims.is_empty() {
            return Ok(Vec::new());
        }
        let owner = self.owner.clone();
        self.all(
            "SELECT c.claim FROM unnest(?2::text[]) WITH ORDINALITY AS c (claim, n) WHERE NOT EXISTS \
             (SELECT 1 FROM evidence WHERE owner = ?1 AND claim = c.claim) ORDER BY c.n",
            &[&owner, &claims],
            first_text,
        )
    }

    fn insert_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO claim_supersedes (owner, claim, target, evidence) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
            &[&owner, &link.claim, &link.target, &link.evidence],
        )
        .map(|_| ())
    }

    fn list_supersedes_links(&mut self, claim: &str) -> StoreResult<Vec<SupersedesLink>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT claim, target, evidence FROM claim_supersedes WHERE owner = ?1 AND claim = ?2 ORDER BY target, evidence",
            &[&owner, &claim],
            link_pair_row,
        )
    }

    fn insert_status_change(&mut self, change: &StatusChange) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO claim_status_history (owner, claim, seq, recorded_at, derived) VALUES (?1, ?2, \
             (SELECT coalesce(max(seq), 0) + 1 FROM claim_status_history WHERE owner = ?1 AND claim = ?2), ?3, ?4)",
            &[&owner, &change.claim, &change.recorded_at.0, &to_json(&change.derived)],
        )
        .map(|_| ())
    }

    fn list_status_changes(&mut self, claim: &str) -> StoreResult<Vec<StatusChange>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT claim, recorded_at, derived FROM claim_status_history WHERE owner = ?1 AND claim = ?2 ORDER BY seq",
            &[&owner, &claim],
            status_change_row,
        )
    }

    fn upsert_resource_link(&mut self, l: &ResourceLink) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            sql!(
                "INSERT INTO resource_links (owner, ",
                LINK_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
                 ON CONFLICT (owner, id) DO UPDATE SET title = coalesce(excluded.title, resource_links.title), \
                 first_seen_at = LEAST(resource_links.first_seen_at, excluded.first_seen_at), \
                 last_seen_at = GREATEST(resource_links.last_seen_at, excluded.last_seen_at)"
            ),
            &[
                &owner, &l.id, &l.entity, &l.meeting, &l.source_kind.as_str(), &l.source_id, &l.resource_type.as_str(),
                &l.url, &l.external_key, &l.title, &l.provenance.as_str(), &l.ingested_status, &l.first_seen_at.0,
                &l.last_seen_at.0,
            ],
        )
        .map(|_| ())
    }

    fn list_resource_links_by_entity(&mut self, entity: &str) -> StoreResult<Vec<ResourceLink>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                LINK_COLUMNS,
                " FROM resource_links WHERE owner = ?1 AND entity = ?2 ORDER BY first_seen_at, id"
            ),
            &[&owner, &entity],
            link_row,
        )
    }

    fn list_resource_links_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<ResourceLink>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                LINK_COLUMNS,
                " FROM resource_links WHERE owner = ?1 AND meeting = ?2 ORDER BY first_seen_at, id"
            ),
            &[&owner, &meeting],
            link_row,
        )
    }

    fn delete_resource_link(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM resource_links WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn insert_task(&mut self, t: &Task) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            sql!(
                "INSERT INTO tasks (owner, ",
                TASK_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT (owner, id) DO UPDATE SET \
                 meeting = excluded.meeting, title = excluded.title, status = excluded.status, assignee = excluded.assignee, \
                 project = excluded.project, due_at = excluded.due_at, evidence = excluded.evidence, created_at = excluded.created_at"
            ),
            &[
                &owner, &t.id, &t.meeting, &t.title, &t.status.as_str(), &t.assignee, &t.project, &millis(t.due_at),
                &t.evidence.to_string(), &t.created_at.0,
            ],
        )
        .map(|_| ())
    }

    fn list_tasks_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Task>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                TASK_COLUMNS,
                " FROM tasks WHERE owner = ?1 AND meeting = ?2 ORDER BY created_at, id"
            ),
            &[&owner, &meeting],
            task_row,
        )
    }

    fn list_tasks_by_entity(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                TASK_COLUMNS,
                " FROM tasks WHERE owner = ?1 AND id IN (SELECT id FROM tasks WHERE owner = ?1 AND assignee = ?2 \
                 UNION SELECT id FROM tasks WHERE owner = ?1 AND project = ?2) ORDER BY created_at, id"
            ),
            &[&owner, &entity],
            task_row,
        )
    }

    fn delete_task(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM tasks WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn insert_run(&mut self, r: &ExtractionRun) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO extraction_runs (owner, id, meeting, content_hash, extractor, revision, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[&owner, &r.id, &r.meeting, &r.content_hash, &r.extractor, &r.revision, &r.created_at.0],
        )
        .map(|_| ())
    }

    fn find_run(
        &mut self,
        meeting: &str,
        content_hash: &str,
        extractor: &str,
    ) -> StoreResult<Option<ExtractionRun>> {
        let owner = self.owner.clone();
        self.one(
            "SELECT id, meeting, content_hash, extractor, revision, created_at FROM extraction_runs \
             WHERE owner = ?1 AND meeting = ?2 AND content_hash = ?3 AND extractor = ?4",
            &[&owner, &meeting, &content_hash, &extractor],
            run_row,
        )
    }

    fn delete_runs_by_meeting(&mut self, meeting: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM extraction_runs WHERE owner = ?1 AND meeting = ?2",
            &[&owner, &meeting],
        )
        .map(|_| ())
    }

    fn insert_revision(&mut self, r: &Revision) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            sql!(
                "INSERT INTO revisions (owner, ",
                REVISION_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ),
            &[
                &owner,
                &r.id,
                &r.action.as_str(),
                &r.target,
                &r.secondary,
                &r.before.to_string(),
                &r.after.to_string(),
                &r.created_at.0,
            ],
        )?;
        for meeting in crate::revision_meetings(r) {
            self.exec(INSERT_REVISION_MEETING, &[&owner, &meeting, &r.id])?;
        }
        Ok(())
    }

    fn list_revisions_naming_meeting(&mut self, meeting: &str) -> StoreResult<Vec<String>> {
        let owner = self.owner.clone();
        self.all(REVISIONS_NAMING_MEETING, &[&owner, &meeting], first_text)
    }

    fn set_entity_redirect(&mut self, old_id: &str, new_id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(SET_ENTITY_REDIRECT, &[&owner, &old_id, &new_id])
            .map(|_| ())
    }

    fn find_entity_redirect(&mut self, old_id: &str) -> StoreResult<Option<String>> {
        let owner = self.owner.clone();
        self.one(FIND_ENTITY_REDIRECT, &[&owner, &old_id], first_text)
    }

    fn list_entity_redirects(&mut self) -> StoreResult<Vec<(String, String)>> {
        let owner = self.owner.clone();
        self.all(LIST_ENTITY_REDIRECTS, &[&owner], |row| {
            Ok((text(row, 0)?, text(row, 1)?))
        })
    }

    fn replace_revision_snapshots(
        &mut self,
        id: &str,
        before: &serde_json::Value,
        after: &serde_json::Value,
    ) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            REPLACE_REVISION_SNAPSHOTS,
            &[&owner, &id, &before.to_string(), &after.to_string()],
        )
        .map(|_| ())
    }

    fn find_revision(&mut self, id: &str) -> StoreResult<Option<Revision>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                REVISION_COLUMNS,
                " FROM revisions WHERE owner = ?1 AND id = ?2"
            ),
            &[&owner, &id],
            revision_row,
        )
    }

    fn list_revisions(&mut self, limit: usize) -> StoreResult<Vec<Revision>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                REVISION_COLUMNS,
                " FROM revisions WHERE owner = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2"
            ),
            &[&owner, &(limit as i64)],
            revision_row,
        )
    }

    fn upsert_suggestion(&mut self, s: &Suggestion) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            sql!(
                "INSERT INTO suggestions (owner, ",
                SUGGESTION_COLUMNS,
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (owner, id) DO UPDATE SET kind = excluded.kind, \
                 status = excluded.status, target = excluded.target, secondary = excluded.secondary, \
                 payload = excluded.payload, created_at = excluded.created_at"
            ),
            &[&owner, &s.id, &s.kind, &s.status.as_str(), &s.target, &s.secondary, &s.payload.to_string(), &s.created_at.0],
        )
        .map(|_| ())
    }

    fn find_suggestion(&mut self, id: &str) -> StoreResult<Option<Suggestion>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                SUGGESTION_COLUMNS,
                " FROM suggestions WHERE owner = ?1 AND id = ?2"
            ),
            &[&owner, &id],
            suggestion_row,
        )
    }

    fn list_suggestions(&mut self) -> StoreResult<Vec<Suggestion>> {
        let owner = self.owner.clone();
        self.all(
            sql!(
                "SELECT ",
                SUGGESTION_COLUMNS,
                " FROM suggestions WHERE owner = ?1 ORDER BY created_at, id"
            ),
            &[&owner],
            suggestion_row,
        )
    }

    fn delete_suggestion(&mut self, id: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM suggestions WHERE owner = ?1 AND id = ?2",
            &[&owner, &id],
        )
        .map(|_| ())
    }

    fn upsert_tag(&mut self, tag: &Tag) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO tags (owner, name, description, ranges) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (owner, name) \
             DO UPDATE SET description = excluded.description, ranges = excluded.ranges",
            &[&owner, &tag.name, &tag.description, &tag.ranges.to_string()],
        )
        .map(|_| ())
    }

    fn list_tags(&mut self) -> StoreResult<Vec<Tag>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT name, description, ranges FROM tags WHERE owner = ?1 ORDER BY name",
            &[&owner],
            tag_row,
        )
    }

    fn list_identifiers_by_entity(&mut self, entity: &str) -> StoreResult<Vec<(String, String)>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT scheme, value FROM entity_identifiers WHERE owner = ?1 AND entity = ?2 ORDER BY scheme, value",
            &[&owner, &entity],
            identifier_row,
        )
    }

    fn list_runs(&mut self, meeting: &str) -> StoreResult<Vec<ExtractionRun>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT id, meeting, content_hash, extractor, revision, created_at FROM extraction_runs \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY created_at, id",
            &[&owner, &meeting],
            run_row,
        )
    }

    fn search_candidates(
        &mut self,
        query: &lore_core::search::SearchQuery,
        kind: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<crate::SearchCandidate>> {
        self.read_search_candidates(query, kind, limit)
    }

    fn find_search_snippet(
        &mut self,
        query: &lore_core::search::SearchQuery,
        doc: i64,
    ) -> StoreResult<Option<String>> {
        self.read_search_snippet(query, doc)
    }

    fn list_status_as_of(&mut self, subject: &str, at: Ts) -> StoreResult<Vec<StatusChange>> {
        self.read_status_as_of(subject, at)
    }

    fn replace_status_history(&mut self, claim: &str, rows: &[StatusChange]) -> StoreResult<()> {
        self.write_status_history(claim, rows)
    }

    fn list_claims_by_predicate(&mut self, predicate: &str) -> StoreResult<Vec<Claim>> {
        self.read_claims_by_predicate(predicate)
    }

    fn list_claims_linking(&mut self, entity: &str, limit: usize) -> StoreResult<Vec<Claim>> {
        self.read_claims_linking(entity, limit)
    }

    fn list_meeting_links_by_entity(
        &mut self,
        entity: &str,
        limit: usize,
    ) -> StoreResult<Vec<crate::MeetingLink>> {
        self.read_meeting_links_by_entity(entity, limit)
    }

    fn list_meeting_links_by_meeting(
        &mut self,
        meeting: &str,
        limit: usize,
    ) -> StoreResult<Vec<crate::MeetingLink>> {
        self.read_meeting_links_by_meeting(meeting, limit)
    }

    fn list_observation_times(&mut self, entity: &str) -> StoreResult<Vec<Ts>> {
        self.read_observation_times(entity)
    }

    fn entity_observations(&mut self, entity: &str) -> StoreResult<crate::EntityObservations> {
        // One round trip instead of three (the earliest name, the latest, the times).
        let owner = self.owner.clone();
        let rows = self.all(ENTITY_OBSERVATIONS, &[&owner, &entity], observation_row)?;
        Ok(crate::observations_from_rows(rows))
    }

    fn list_tasks(&mut self) -> StoreResult<Vec<Task>> {
        self.read_tasks()
    }

    fn list_tasks_by_assignee(&mut self, entity: &str) -> StoreResult<Vec<Task>> {
        self.read_tasks_by_assignee(entity)
    }

    fn upsert_claim(&mut self, c: &Claim) -> StoreResult<()> {
        self.write_claim(c, CLAIM_UPSERT)
    }

    fn delete_alias(&mut self, a: &Alias) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM entity_aliases WHERE owner = ?1 AND entity = ?2 AND alias = ?3 AND meeting = ?4",
            &[&owner, &a.entity, &a.alias, &a.meeting],
        )
        .map(|_| ())
    }

    fn delete_identifier(&mut self, scheme: &str, value: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM entity_identifiers WHERE owner = ?1 AND scheme = ?2 AND value = ?3",
            &[&owner, &scheme, &value],
        )?;
        self.identifiers.found(scheme, value, None);
        Ok(())
    }

    fn list_participants_by_person(&mut self, entity: &str) -> StoreResult<Vec<Participant>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT meeting, idx, display_name, email, platform_stable_id, device_id, speaker_label, person_entity, \
             excluded FROM participants WHERE owner = ?1 AND person_entity = ?2 ORDER BY meeting, idx",
            &[&owner, &entity],
            participant_row,
        )
    }

    fn update_participant(&mut self, p: &Participant) -> StoreResult<()> {
        let owner = self.owner.clone();
        let changed = self.exec(
            "UPDATE participants SET display_name = ?4, email = ?5, platform_stable_id = ?6, device_id = ?7, \
             speaker_label = ?8, person_entity = ?9, excluded = ?10 WHERE owner = ?1 AND meeting = ?2 AND idx = ?3",
            &[
                &owner, &p.meeting, &p.idx, &p.display_name, &p.email, &p.platform_stable_id, &p.device_id,
                &p.speaker_label, &p.person_entity, &(p.excluded as i64),
            ],
        )?;
        expect_one(changed, "participant", &format!("{}/{}", p.meeting, p.idx))
    }

    fn delete_supersedes_link(&mut self, link: &SupersedesLink) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM claim_supersedes WHERE owner = ?1 AND claim = ?2 AND target = ?3 AND evidence = ?4",
            &[&owner, &link.claim, &link.target, &link.evidence],
        )
        .map(|_| ())
    }

    fn find_task(&mut self, id: &str) -> StoreResult<Option<Task>> {
        let owner = self.owner.clone();
        self.one(
            sql!(
                "SELECT ",
                TASK_COLUMNS,
                " FROM tasks WHERE owner = ?1 AND id = ?2"
            ),
            &[&owner, &id],
            task_row,
        )
    }

    fn upsert_participant_mapping(&mut self, m: &ParticipantMapping) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO participant_mappings (owner, meeting, key, source, display_name, email, person_entity) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (owner, meeting, key) DO UPDATE SET \
             source = excluded.source, display_name = excluded.display_name, email = excluded.email, \
             person_entity = excluded.person_entity",
            &[&owner, &m.meeting, &m.key, &m.source.as_str(), &m.display_name, &m.email, &m.person_entity],
        )
        .map(|_| ())
    }

    fn list_participant_mappings(&mut self, meeting: &str) -> StoreResult<Vec<ParticipantMapping>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT meeting, key, source, display_name, email, person_entity FROM participant_mappings \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY key",
            &[&owner, &meeting],
            participant_mapping_row,
        )
    }

    fn delete_participant_mapping(&mut self, meeting: &str, key: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM participant_mappings WHERE owner = ?1 AND meeting = ?2 AND key = ?3",
            &[&owner, &meeting, &key],
        )
        .map(|_| ())
    }

    fn delete_participant(&mut self, meeting: &str, idx: i64) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM participants WHERE owner = ?1 AND meeting = ?2 AND idx = ?3",
            &[&owner, &meeting, &idx],
        )
        .map(|_| ())
    }

    fn upsert_task_decision(&mut self, task: &str, status: TaskStatus) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO task_decisions (owner, task, status) VALUES (?1, ?2, ?3) \
             ON CONFLICT (owner, task) DO UPDATE SET status = excluded.status",
            &[&owner, &task, &status.as_str()],
        )
        .map(|_| ())
    }

    fn find_task_decision(&mut self, task: &str) -> StoreResult<Option<TaskStatus>> {
        let owner = self.owner.clone();
        self.one(
            "SELECT status FROM task_decisions WHERE owner = ?1 AND task = ?2",
            &[&owner, &task],
            task_status_row,
        )
    }

    fn delete_task_decision(&mut self, task: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM task_decisions WHERE owner = ?1 AND task = ?2",
            &[&owner, &task],
        )
        .map(|_| ())
    }

    fn find_alias_bounds(&mut self, entity: &str) -> StoreResult<Option<(String, Ts, Ts)>> {
        let owner = self.owner.clone();
        let first = self.one(
            "SELECT alias, observed_at FROM entity_aliases WHERE owner = ?1 AND entity = ?2 \
             ORDER BY observed_at, alias COLLATE \"C\" LIMIT 1",
            &[&owner, &entity],
            alias_first_row,
        )?;
        let Some((alias, first_at)) = first else {
            return Ok(None);
        };
        let last_at = self
            .one(
                "SELECT max(observed_at) FROM entity_aliases WHERE owner = ?1 AND entity = ?2",
                &[&owner, &entity],
                first_int,
            )?
            .unwrap_or(first_at);
        Ok(Some((alias, Ts(first_at), Ts(last_at))))
    }

    fn list_aliases_by_meeting(&mut self, meeting: &str) -> StoreResult<Vec<Alias>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT entity, alias, meeting, observed_at FROM entity_aliases WHERE owner = ?1 AND meeting = ?2 \
             ORDER BY entity COLLATE \"C\", alias COLLATE \"C\"",
            &[&owner, &meeting],
            alias_row,
        )
    }

    fn upsert_link_attachment(&mut self, a: &LinkAttachment) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO link_attachments (owner, link, entity, meeting, reason, evidence) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, link, entity) DO UPDATE SET \
             meeting = excluded.meeting, reason = excluded.reason, evidence = excluded.evidence",
            &[
                &owner,
                &a.link,
                &a.entity,
                &a.meeting,
                &a.reason,
                &a.evidence,
            ],
        )
        .map(|_| ())
    }

    fn list_link_attachments_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<LinkAttachment>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT link, entity, meeting, reason, evidence FROM link_attachments \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY link COLLATE \"C\", entity COLLATE \"C\"",
            &[&owner, &meeting],
            link_attachment_row,
        )
    }

    fn list_link_attachments_by_entity(
        &mut self,
        entity: &str,
    ) -> StoreResult<Vec<LinkAttachment>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT link, entity, meeting, reason, evidence FROM link_attachments \
             WHERE owner = ?1 AND entity = ?2 ORDER BY link COLLATE \"C\"",
            &[&owner, &entity],
            link_attachment_row,
        )
    }

    fn list_attached_links(&mut self, entity: &str) -> StoreResult<Vec<crate::AttachedLink>> {
        let owner = self.owner.clone();
        self.all(&ATTACHED_LINKS, &[&owner, &entity], attached_link_row)
    }

    fn delete_link_attachment(&mut self, link: &str, entity: &str) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM link_attachments WHERE owner = ?1 AND link = ?2 AND entity = ?3",
            &[&owner, &link, &entity],
        )
        .map(|_| ())
    }

    fn insert_identifier_source(&mut self, s: &IdentifierSource) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO identifier_sources (owner, scheme, value, meeting, grp, is_primary) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (owner, scheme, value, meeting, grp) \
             DO UPDATE SET is_primary = greatest(identifier_sources.is_primary, excluded.is_primary)",
            &[&owner, &s.scheme, &s.value, &s.meeting, &s.group, &(s.primary as i64)],
        )
        .map(|_| ())
    }

    fn list_identifier_sources(
        &mut self,
        scheme: &str,
        value: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT scheme, value, meeting, grp, is_primary FROM identifier_sources \
             WHERE owner = ?1 AND scheme = ?2 AND value = ?3 ORDER BY meeting COLLATE \"C\", grp COLLATE \"C\"",
            &[&owner, &scheme, &value],
            identifier_source_row,
        )
    }

    fn list_entities_taught_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<(String, String)>> {
        let owner = self.owner.clone();
        let rows = self.all(
            crate::ENTITIES_TAUGHT_BY_MEETING,
            &[&owner, &meeting],
            |row| Ok((rows::text(row, 0)?, rows::text(row, 1)?)),
        )?;
        Ok(crate::sorted_distinct(rows))
    }

    fn list_identifier_sources_by_meeting(
        &mut self,
        meeting: &str,
    ) -> StoreResult<Vec<IdentifierSource>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT scheme, value, meeting, grp, is_primary FROM identifier_sources \
             WHERE owner = ?1 AND meeting = ?2 ORDER BY scheme COLLATE \"C\", value COLLATE \"C\", grp COLLATE \"C\"",
            &[&owner, &meeting],
            identifier_source_row,
        )
    }

    fn delete_identifier_source(&mut self, s: &IdentifierSource) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "DELETE FROM identifier_sources WHERE owner = ?1 AND scheme = ?2 AND value = ?3 \
             AND meeting = ?4 AND grp = ?5",
            &[&owner, &s.scheme, &s.value, &s.meeting, &s.group],
        )
        .map(|_| ())
    }

    fn insert_meeting_tag(&mut self, t: &MeetingTag) -> StoreResult<()> {
        let owner = self.owner.clone();
        self.exec(
            "INSERT INTO meeting_tags (owner, meeting, tag, kind, key) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (owner, meeting, tag, kind, key) DO NOTHING",
            &[&owner, &t.meeting, &t.tag, &t.kind.as_str(), &t.key],
        )
        .map(|_| ())
    }

    fn list_meeting_tags(&mut self, meeting: &str) -> StoreResult<Vec<MeetingTag>> {
        let owner = self.owner.clone();
        self.all(
            "SELECT meeting, tag, kind, key FROM meeting_tags WHERE owner = ?1 AND meeting = ?2 \
             ORDER BY tag COLLATE \"C\", kind COLLATE \"C\", key COLLATE \"C\"",
            &[&owner, &meeting],
            meeting_tag_row,
        )
    }
}

fn meeting_tag_row(row: &postgres::Row) -> StoreResult<MeetingTag> {
    let value = |index: usize| -> StoreResult<String> {
        row.try_get(index)
            .map_err(|error| StoreError::Backend(error.to_string()))
    };
    let kind = value(2)?;
    Ok(MeetingTag {
        meeting: value(0)?,
        tag: value(1)?,
        kind: EntityKind::parse(&kind)
            .ok_or_else(|| StoreError::Backend(format!("unknown entity kind '{kind}'")))?,
        key: value(3)?,
    })
}

fn link_attachment_row(row: &postgres::Row) -> StoreResult<LinkAttachment> {
    let value = |index: usize| -> StoreResult<Option<String>> {
        row.try_get(index)
            .map_err(|error| StoreError::Backend(error.to_string()))
    };
    Ok(LinkAttachment {
        link: value(0)?.unwrap_or_default(),
        entity: value(1)?.unwrap_or_default(),
        meeting: value(2)?.unwrap_or_default(),
        reason: value(3)?.unwrap_or_default(),
        evidence: value(4)?,
    })
}

fn identifier_source_row(row: &postgres::Row) -> StoreResult<IdentifierSource> {
    let value = |index: usize| -> StoreResult<String> {
        row.try_get(index)
            .map_err(|error| StoreError::Backend(error.to_string()))
    };
    let primary: i64 = row
        .try_get(4)
        .map_err(|error| StoreError::Backend(error.to_string()))?;
    Ok(IdentifierSource {
        scheme: value(0)?,
        value: value(1)?,
        meeting: value(2)?,
        group: value(3)?,
        primary: primary != 0,
    })
}
