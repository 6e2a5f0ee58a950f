//! The in-memory graph adjacency on PostgreSQL. Every owner write bumps `owner_versions` in its own
//! transaction (`run_once`), so the version a read snapshot sees names the owner's state in that
//! snapshot exactly, whichever server process wrote it. The indexes are kept per owner and version
//! and built off the readers' path, as on SQLite (`owner_builds.rs`): the second graph read of a
//! version asks the store's thread for one, and reads answer from queries until it is there.

use std::sync::Arc;

use super::rows::*;
use super::{backend, Connection, PgTx};
use crate::graph_index::{GraphRows, GRAPH_SCAN_SQL};
use crate::GraphBuilds;
use crate::{GraphIndex, StoreResult};

/// The statement every owner write runs before it commits.
pub(super) const BUMP_VERSION: &str = "INSERT INTO owner_versions (owner, version) VALUES (?1, 1) \
     ON CONFLICT (owner) DO UPDATE SET version = owner_versions.version + 1";

/// The store's graph index thread, on a connection of its own (opened when first needed, and again
/// after it breaks), each build in a REPEATABLE READ snapshot.
pub(super) fn start_graph_builds(url: String) -> StoreResult<GraphBuilds> {
    let mut connection: Option<Connection> = None;
    GraphBuilds::start(
        "lore-graph-index",
        crate::GRAPH_BUILD_AFTER_READS,
        Box::new(move |owner| {
            if connection.as_ref().is_none_or(|c| c.client.is_closed()) {
                connection = Some(super::connect(&url)?);
            }
            let Some(Connection { client, statements }) = connection.as_mut() else {
                unreachable!("connected above");
            };
            let mut transaction = client.transaction().map_err(backend)?;
            transaction
                .batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .map_err(backend)?;
            let mut tx = PgTx {
                transaction: &mut transaction,
                statements,
                owner: owner.to_string(),
                retry: None,
                graphs: None,
                identifiers: Default::default(),
            };
            let built = tx
                .owner_version()
                .and_then(|version| Ok((version, tx.scan_graph_index()?)));
            transaction.rollback().map_err(backend)?;
            built
        }),
    )
}

impl PgTx<'_, '_> {
    /// The owner's index when the build thread has it for the version this snapshot sees; otherwise
    /// `None` (the graph queries), and the second such read asks for a build.
    pub(super) fn graph_index(&mut self) -> StoreResult<Option<Arc<GraphIndex>>> {
        let Some(graphs) = self.graphs else {
            return Ok(None);
        };
        let version = self.owner_version()?;
        Ok(graphs.get(&self.owner, version))
    }

    /// The owner's version in this snapshot (0 before its first write).
    pub(super) fn owner_version(&mut self) -> StoreResult<i64> {
        let owner = self.owner.clone();
        Ok(self
            .one(crate::sqlite::OWNER_VERSION, &[&owner], |row| {
                Ok(row.get::<_, i64>(0))
            })?
            .unwrap_or(0))
    }

    fn scan_graph_index(&mut self) -> StoreResult<GraphIndex> {
        let [entities, meetings, claims, tasks, attended, mentioned] = GRAPH_SCAN_SQL;
        let owner = self.owner.clone();
        Ok(GraphIndex::from_rows(GraphRows {
            entities: self.all(&entities(), &[&owner], entity_row)?,
            meetings: self.all(&meetings(), &[&owner], meeting_row)?,
            claims: self.all(&claims(), &[&owner], claim_row)?,
            tasks: self.all(&tasks(), &[&owner], task_row)?,
            attended: self.all(&attended(), &[&owner], |row| Ok((row.get(0), row.get(1))))?,
            mentioned: self.all(&mentioned(), &[&owner], |row| {
                Ok((row.get(0), row.get(1), row.get(2)))
            })?,
        }))
    }
}
