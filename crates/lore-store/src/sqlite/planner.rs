//! Planner statistics for owner-first keys. Without `ANALYZE` data SQLite assumes that an equality on
//! an index's first column leaves about ten rows, so it prefers a primary key `(owner, id)` range over a
//! selective secondary index `(owner, claim)` and walks every row of the owner. Lore's keys all lead
//! with `owner`, which is the least selective column there is, so a fresh database gets default
//! statistics saying so: `owner` keeps every row, each further column narrows. A later `ANALYZE`
//! replaces them with measured ones.

use rusqlite::Connection;

/// Rows assumed per table, and rows left after an equality on each column after `owner`.
const ASSUMED_ROWS: i64 = 1_000_000;
const NARROWING: &[i64] = &[20, 8, 4, 2];

/// Writes default statistics for every index that has none; measured rows are never replaced.
pub fn seed_planner_statistics(connection: &Connection) -> rusqlite::Result<()> {
    connection.execute_batch("ANALYZE sqlite_schema")?;
    let mut statement = connection.prepare(
        "SELECT m.name, l.name, l.\"unique\" FROM sqlite_schema AS m, pragma_index_list(m.name) AS l \
         WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'search_fts%' \
         AND NOT EXISTS (SELECT 1 FROM sqlite_stat1 AS s WHERE s.tbl = m.name AND s.idx = l.name)",
    )?;
    let indexes: Vec<(String, String, bool)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
        .collect::<Result<_, _>>()?;
    if indexes.is_empty() {
        return Ok(());
    }
    for (table, index, unique) in indexes {
        let columns: i64 = connection.query_row(
            "SELECT count(*) FROM pragma_index_info(?1)",
            [&index],
            |row| row.get(0),
        )?;
        let leads_with_owner: bool = connection.query_row(
            "SELECT name = 'owner' FROM pragma_index_info(?1) WHERE seqno = 0",
            [&index],
            |row| row.get(0),
        )?;
        let mut stat = vec![ASSUMED_ROWS];
        for position in 0..columns {
            let rows = if position == 0 && leads_with_owner {
                ASSUMED_ROWS
            } else {
                let step = if leads_with_owner {
                    position - 1
                } else {
                    position
                };
                NARROWING.get(step as usize).copied().unwrap_or(1)
            };
            stat.push(rows);
        }
        if unique {
            if let Some(last) = stat.last_mut() {
                *last = 1;
            }
        }
        let stat = stat
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        connection.execute(
            "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?1, ?2, ?3)",
            [&table, &index, &stat],
        )?;
    }
    connection.execute_batch("ANALYZE sqlite_schema")
}
