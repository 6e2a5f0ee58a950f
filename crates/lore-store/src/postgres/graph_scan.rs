//! The in-memory graph adjacency on PostgreSQL. Every owner write bumps `owner_versions` in its own
//! transaction (`run_once`), so the version a read snapshot sees names the owner's state in that
//! snapshot exactly, whichever server process wrote it. Reads keep one index per owner and version:
//! built from one scan of the snapshot on the second graph read of a version (a single neighborhood
//! never pays for a whole scan), dropped when a read sees a newer version. Writes always query.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::rows::*;
use super::PgTx;
use crate::graph_index::{GraphRows, GRAPH_SCAN_SQL};
use crate::{GraphIndex, StoreResult};

/// Owners whose index is kept at once; past it the memo starts over (bounds memory on a busy server).
const MAX_OWNERS: usize = 32;

#[derive(Default)]
struct Entry {
    version: i64,
    index: Option<Arc<GraphIndex>>,
    /// Graph reads answered by queries at this version.
    reads: u32,
}

/// The per-owner indexes of one store, shared by its connections.
#[derive(Default)]
pub(super) struct GraphMemo(Mutex<HashMap<String, Entry>>);

/// The statement every owner write runs before it commits.
pub(super) const BUMP_VERSION: &str = "INSERT INTO owner_versions (owner, version) VALUES (?1, 1) \
     ON CONFLICT (owner) DO UPDATE SET version = owner_versions.version + 1";

impl PgTx<'_, '_> {
    pub(super) fn graph_index(&mut self) -> StoreResult<Option<Arc<GraphIndex>>> {
        let Some(memo) = self.graphs else {
            return Ok(None);
        };
        let owner = self.owner.clone();
        let version = self
            .one(
                "SELECT version FROM owner_versions WHERE owner = ?1",
                &[&owner],
                |row| Ok(row.get::<_, i64>(0)),
            )?
            .unwrap_or(0);
        {
            let mut entries = memo.0.lock().map_err(|_| poisoned())?;
            if !entries.contains_key(&owner) && entries.len() >= MAX_OWNERS {
                entries.clear();
            }
            let entry = entries.entry(owner.clone()).or_default();
            if entry.version != version {
                *entry = Entry {
                    version,
                    ..Entry::default()
                };
            }
            if let Some(index) = &entry.index {
                return Ok(Some(index.clone()));
            }
            entry.reads += 1;
            if entry.reads < 2 {
                return Ok(None);
            }
        }
        let index = Arc::new(self.scan_graph_index()?);
        let mut entries = memo.0.lock().map_err(|_| poisoned())?;
        if let Some(entry) = entries.get_mut(&owner) {
            if entry.version == version {
                entry.index = Some(index.clone());
            }
        }
        Ok(Some(index))
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

fn poisoned() -> crate::StoreError {
    crate::StoreError::Backend("graph memo poisoned".into())
}
