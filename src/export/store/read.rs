//! Reading the store back: the model calls of a span of time (`report`), the sessions it holds
//! (`sessions`), and every row of one session or trace (`show`).

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Row as SqlRow};

use super::db::{Store, BUSY, VERSION};
use super::report::Tally;
use super::rows::{ModelCall, Place, ToolCall, Turn};
use super::StoreError;

/// One session, as `sessions` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub session: String,
    /// The agent of its first turn.
    pub agent: String,
    pub repository: Option<String>,
    pub first_ns: i64,
    pub last_ns: i64,
    /// Its turns: one trace each.
    pub turns: i64,
    pub model_calls: i64,
    /// Input neither read from nor written to the cache, as in `report`.
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
    pub cost: f64,
    /// Model calls the price table had no price for.
    pub unpriced: i64,
}

/// Every row of one session or trace.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rows {
    pub turns: Vec<Turn>,
    pub model_calls: Vec<ModelCall>,
    pub tool_calls: Vec<ToolCall>,
}

impl Rows {
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.model_calls.is_empty() && self.tool_calls.is_empty()
    }
}

/// The place columns, in the order every query here selects them first (a store of schema 1
/// has no `parent`).
fn place_columns(nests: bool) -> String {
    let parent = if nests { "parent" } else { "NULL" };
    format!("trace_id, span_id, {parent}, session, agent, repository, branch, user, started_ns, ended_ns")
}

fn place(r: &SqlRow<'_>) -> rusqlite::Result<Place> {
    Ok(Place {
        trace_id: r.get(0)?,
        span_id: r.get(1)?,
        parent_span_id: r.get(2)?,
        session: r.get(3)?,
        agent: r.get(4)?,
        repository: r.get(5)?,
        branch: r.get(6)?,
        user: r.get(7)?,
        started_ns: r.get(8)?,
        ended_ns: r.get(9)?,
    })
}

fn model_call(r: &SqlRow<'_>) -> rusqlite::Result<ModelCall> {
    Ok(ModelCall {
        place: place(r)?,
        key: r.get(10)?,
        model: r.get(11)?,
        provider: r.get(12)?,
        input: r.get(13)?,
        output: r.get(14)?,
        cache_read: r.get(15)?,
        cache_write: r.get(16)?,
        reasoning: r.get(17)?,
        cost: r.get(18)?,
    })
}

const MODEL_CALL: &str =
    "key, model, provider, input, output, cache_read, cache_write, reasoning, cost";

impl Store {
    /// Opens an existing store to read, if there is one at `path`.
    pub fn open_to_read(path: &Path) -> Result<Option<Store>, StoreError> {
        Store::open_to_read_within(path, BUSY)
    }

    /// The sessions the live route traced (those with a turn no batch job, an import or a
    /// replay, wrote), each with when its first such turn began and its last ended, in ns. An
    /// import of history whose calls the live route's cannot be matched with
    /// ([`History::Untraced`](crate::sources::command_hooks::spec::History::Untraced)) reads
    /// of those sessions only the turns before and after.
    pub fn traced_live(&self) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let marks: bool = (self.conn)
            .query_row(
                "SELECT count(*) FROM pragma_table_info('turns') WHERE name = 'imported'",
                [],
                |r| r.get(0),
            )
            .map_err(db)?;
        // A store no writer of this version has opened has no such column: every turn in it
        // is the live route's.
        let sql = match marks {
            true => {
                "SELECT session, min(started_ns), max(ended_ns) FROM turns WHERE imported = 0
                 GROUP BY session"
            }
            false => "SELECT session, min(started_ns), max(ended_ns) FROM turns GROUP BY session",
        };
        let mut q = self.conn.prepare(sql).map_err(db)?;
        let rows = q
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// As [`open_to_read`](Self::open_to_read), waiting at most `busy` for a writer.
    pub fn open_to_read_within(path: &Path, busy: Duration) -> Result<Option<Store>, StoreError> {
        if !path.exists() {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError::db(path, e))?;
        conn.busy_timeout(busy)
            .map_err(|e| StoreError::db(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            nests: true,
            rolls_up: true,
            imported: false,
        };
        let version: i64 = (store.conn)
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| StoreError::db(path, e))?;
        if version > VERSION {
            return Err(StoreError::Newer {
                path: path.to_path_buf(),
                version,
            });
        }
        if version == 0 {
            let tables: i64 = (store.conn)
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(|e| StoreError::db(path, e))?;
            if tables > 0 {
                return Err(StoreError::NotAStore {
                    path: path.to_path_buf(),
                    what: "another program's SQLite database",
                });
            }
            // Made, never written: nothing stored yet.
            return Ok(None);
        }
        store.nests = version >= 2;
        store.rolls_up = version >= 3;
        Ok(Some(store))
    }

    /// The model calls answered in `[from_ns, to_ns)`, oldest first.
    pub fn model_calls(&self, from_ns: i64, to_ns: i64) -> Result<Vec<ModelCall>, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let columns = place_columns(self.nests);
        let sql = format!(
            "SELECT {columns}, {MODEL_CALL} FROM model_calls
             WHERE ended_ns >= ?1 AND ended_ns < ?2 ORDER BY ended_ns"
        );
        let mut q = self.conn.prepare(&sql).map_err(db)?;
        let rows = q.query_map([from_ns, to_ns], model_call).map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    /// The model calls whose answer came from `from_ns` to `to_ns`, added up as `report`
    /// takes them: from the `usage` table, or (a store of an older schema, not yet brought up
    /// to date by a writer) from the calls themselves.
    pub fn tallies(&self, from_ns: i64, to_ns: i64) -> Result<Vec<Tally>, StoreError> {
        if self.rolls_up {
            return super::usage::read(&self.conn, from_ns, to_ns)
                .map_err(|e| StoreError::db(&self.path, e));
        }
        Ok(self
            .model_calls(from_ns, to_ns)?
            .iter()
            .map(Tally::from)
            .collect())
    }

    /// The `limit` sessions active last, newest first (only `agent`'s, if given).
    pub fn sessions(&self, agent: Option<&str>, limit: usize) -> Result<Vec<Session>, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let mut q = self
            .conn
            .prepare(
                "WITH rows AS (
                   SELECT session, trace_id, agent, repository, started_ns, ended_ns, 0 AS call,
                     0 AS i, 0 AS o, 0 AS cr, 0 AS cw, 0.0 AS cost, 0 AS unpriced FROM turns
                   UNION ALL
                   SELECT session, NULL, agent, repository, started_ns, ended_ns, 1, input, output,
                     cache_read, cache_write, coalesce(cost, 0.0), cost IS NULL FROM model_calls
                 ),
                 s AS (
                   SELECT session, min(started_ns) AS first_ns, max(ended_ns) AS last_ns,
                     count(DISTINCT trace_id) AS turns, sum(call) AS calls, sum(i) AS i,
                     sum(o) AS o, sum(cr) AS cr, sum(cw) AS cw, sum(cost) AS cost,
                     sum(unpriced) AS unpriced, max(repository) AS repository
                   FROM rows GROUP BY session
                 )
                 SELECT s.session,
                   coalesce((SELECT agent FROM turns t WHERE t.session = s.session
                     ORDER BY started_ns LIMIT 1),
                     (SELECT agent FROM model_calls m WHERE m.session = s.session LIMIT 1), ''),
                   s.repository, s.first_ns, s.last_ns, s.turns, s.calls, s.i, s.o, s.cr, s.cw,
                   s.cost, s.unpriced
                 FROM s ORDER BY s.last_ns DESC",
            )
            .map_err(db)?;
        let rows = q
            .query_map([], |r| {
                Ok(Session {
                    session: r.get(0)?,
                    agent: r.get(1)?,
                    repository: r.get(2)?,
                    first_ns: r.get(3)?,
                    last_ns: r.get(4)?,
                    turns: r.get(5)?,
                    model_calls: r.get(6)?,
                    input: r.get(7)?,
                    output: r.get(8)?,
                    cache_read: r.get(9)?,
                    cache_write: r.get(10)?,
                    cost: r.get(11)?,
                    unpriced: r.get(12)?,
                })
            })
            .map_err(db)?;
        let mut out = Vec::new();
        for s in rows {
            let s = s.map_err(db)?;
            if agent.is_none_or(|a| a == s.agent) {
                out.push(s);
                if out.len() == limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// Every row of session `id`, or of the trace `id` names; oldest first.
    pub fn rows_of(&self, id: &str) -> Result<Rows, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let which = "WHERE session = ?1 OR trace_id = ?1 ORDER BY started_ns";
        let columns = place_columns(self.nests);
        let turns = self
            .conn
            .prepare(&format!(
                "SELECT {columns}, number, prompted, continued FROM turns {which}"
            ))
            .map_err(db)?
            .query_map([id], |r| {
                Ok(Turn {
                    place: place(r)?,
                    number: r.get(10)?,
                    prompted: r.get(11)?,
                    continued: r.get(12)?,
                })
            })
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        let model_calls = self
            .conn
            .prepare(&format!(
                "SELECT {columns}, {MODEL_CALL} FROM model_calls {which}"
            ))
            .map_err(db)?
            .query_map([id], model_call)
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        let tool_calls = self
            .conn
            .prepare(&format!(
                "SELECT {columns}, name, failed FROM tool_calls {which}"
            ))
            .map_err(db)?
            .query_map([id], |r| {
                Ok(ToolCall {
                    place: place(r)?,
                    name: r.get(10)?,
                    failed: r.get(11)?,
                })
            })
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        Ok(Rows {
            turns,
            model_calls,
            tool_calls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::store::rows::Row;

    #[test]
    fn the_sessions_the_hooks_traced_come_with_their_first_start_and_last_end() {
        use crate::export::store::insert::tests::{store, turn};
        let (dir, mut live) = store("traced-live");
        let mut import = Store::open(live.path()).unwrap().for_batch_job().unwrap();
        live.write(&turn("a", 1_000, &["msg_1"])).unwrap();
        live.write(&turn("b", 3_000, &["msg_2"])).unwrap();
        import.write(&turn("c", 9_000, &["msg_3"])).unwrap();
        let traced = import.traced_live().unwrap();
        assert_eq!(
            traced.into_iter().collect::<Vec<_>>(),
            [("s1".into(), (1_000, 3_001))]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A store written by the version before (no `parent` columns, no incremental vacuum)
    /// opens, gains both, keeps its rows, and takes new ones with their parents.
    #[test]
    fn a_store_of_the_version_before_is_brought_up_to_date_and_keeps_its_rows() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-store-v1-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.sqlite");
        let old = rusqlite::Connection::open(&path).unwrap();
        old.execute_batch(
            "CREATE TABLE turns (trace_id TEXT NOT NULL, span_id TEXT NOT NULL,
               session TEXT NOT NULL, agent TEXT NOT NULL, repository TEXT, branch TEXT,
               user TEXT, started_ns INTEGER NOT NULL, ended_ns INTEGER NOT NULL,
               number INTEGER, prompted INTEGER NOT NULL, continued INTEGER NOT NULL,
               PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID;
             CREATE TABLE model_calls (key TEXT PRIMARY KEY, trace_id TEXT NOT NULL,
               span_id TEXT NOT NULL, session TEXT NOT NULL, agent TEXT NOT NULL,
               repository TEXT, branch TEXT, user TEXT, started_ns INTEGER NOT NULL,
               ended_ns INTEGER NOT NULL, model TEXT NOT NULL, provider TEXT,
               input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL,
               cache_write INTEGER NOT NULL, reasoning INTEGER, cost REAL);
             CREATE TABLE tool_calls (trace_id TEXT NOT NULL, span_id TEXT NOT NULL,
               session TEXT NOT NULL, agent TEXT NOT NULL, repository TEXT, branch TEXT,
               user TEXT, started_ns INTEGER NOT NULL, ended_ns INTEGER NOT NULL,
               name TEXT NOT NULL, failed INTEGER NOT NULL,
               PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID;
             INSERT INTO turns VALUES ('t1', 'r1', 's', 'a', NULL, NULL, NULL, 1, 9, 1, 1, 0);
             PRAGMA user_version = 1;",
        )
        .unwrap();
        drop(old);
        let mut store = Store::open(&path).unwrap();
        let vacuum: i64 = (store.conn)
            .pragma_query_value(None, "auto_vacuum", |r| r.get(0))
            .unwrap();
        assert_eq!(
            vacuum, 2,
            "made over with incremental vacuum, so that a prune gives space back"
        );
        let place = |span: &str, parent: Option<&str>| Place {
            trace_id: "t1".into(),
            span_id: span.into(),
            parent_span_id: parent.map(str::to_string),
            session: "s".into(),
            agent: "a".into(),
            started_ns: 2,
            ended_ns: 3,
            ..Place::default()
        };
        let call = ToolCall {
            place: place("c1", Some("r1")),
            name: "Bash".into(),
            failed: false,
        };
        store.write(&[Row::ToolCall(call.clone())]).unwrap();
        let rows = store.rows_of("s").unwrap();
        assert_eq!(rows.turns.len(), 1, "the old row is kept");
        assert_eq!(rows.turns[0].place.parent_span_id, None);
        assert_eq!(rows.tool_calls, [call]);
        assert_eq!(
            store.rows_of("t1").unwrap(),
            rows,
            "by its trace as by its session"
        );
        let listed = store.sessions(None, 10).unwrap();
        assert_eq!((listed.len(), listed[0].turns), (1, 1));
        assert!(store.sessions(Some("other"), 10).unwrap().is_empty());
        // The turn met again with a later end: kept once, with it, on the old tables' keys.
        let turn = Turn {
            place: Place {
                started_ns: 1,
                ended_ns: 12,
                ..place("r1", None)
            },
            number: Some(1),
            prompted: true,
            continued: false,
        };
        store.write(&[Row::Turn(turn)]).unwrap();
        let turns = store.rows_of("s").unwrap().turns;
        assert_eq!((turns.len(), turns[0].place.ended_ns), (1, 12));
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
