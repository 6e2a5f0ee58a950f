//! Reads the rows of an owner's [`GraphIndex`] from one SQLite read snapshot; the grouping and ordering
//! are shared with PostgreSQL (`GraphIndex::from_rows`).

use rusqlite::params;

use super::rows::*;
use super::SqliteTx;
use crate::graph_index::{GraphRows, GRAPH_SCAN_SQL};
use crate::{GraphIndex, StoreResult};

impl SqliteTx<'_> {
    pub(super) fn scan_graph_index(&self) -> StoreResult<GraphIndex> {
        let [entities, meetings, claims, tasks, attended, mentioned] = GRAPH_SCAN_SQL;
        let owner = params![self.owner];
        Ok(GraphIndex::from_rows(GraphRows {
            entities: self.all(&entities(), owner, entity_row)?,
            meetings: self.all(&meetings(), owner, meeting_row)?,
            claims: self.all(&claims(), owner, claim_row)?,
            tasks: self.all(&tasks(), owner, task_row)?,
            attended: self.all(&attended(), owner, |row| Ok((row.get(0)?, row.get(1)?)))?,
            mentioned: self.all(&mentioned(), owner, |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })?,
        }))
    }
}
