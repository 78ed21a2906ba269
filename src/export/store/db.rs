//! The store's file: one SQLite database, private to the user, written in transactions that
//! are on disk before they are acknowledged (WAL, `synchronous = FULL`), shared by every
//! daemon, `run`, `replay` and import at once (each waits its turn, `busy_timeout`). A row
//! met twice (the same model call by its response id, the same span by its ids, the same turn
//! traced twice: see `insert`) is kept once.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::Connection;

use super::rows::Row;
use super::StoreError;
use super::{insert, usage};

/// The schema's version, in `PRAGMA user_version`.
pub(super) const VERSION: i64 = 3;

/// The writer's page cache, in KiB (SQLite's negative `cache_size`): at most this, taken as
/// pages are read.
const CACHE_KIB: i64 = -16_384;

/// How long a writer waits for another to finish before it gives up on a transaction.
pub(super) const BUSY: Duration = Duration::from_secs(10);

/// The tables. Turns and tool calls are kept in the order they are written, their ids in an
/// index of their own, where a store made before kept each row in the tree of its random ids:
/// a batch touched leaf pages all over that tree, each written again to the log at each commit
/// (a fifth of the store's time on a replay). Both layouts take the same statements.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS turns (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent TEXT, session TEXT NOT NULL,
    agent TEXT NOT NULL,
    repository TEXT, branch TEXT, user TEXT, started_ns INTEGER NOT NULL,
    ended_ns INTEGER NOT NULL, number INTEGER, prompted INTEGER NOT NULL,
    continued INTEGER NOT NULL, imported INTEGER NOT NULL DEFAULT 0,
    UNIQUE (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session, started_ns);
CREATE TABLE IF NOT EXISTS model_calls (
    key TEXT PRIMARY KEY, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent TEXT,
    session TEXT NOT NULL, agent TEXT NOT NULL, repository TEXT, branch TEXT, user TEXT,
    started_ns INTEGER NOT NULL, ended_ns INTEGER NOT NULL, model TEXT NOT NULL,
    provider TEXT, input INTEGER NOT NULL, output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, reasoning INTEGER, cost REAL,
    imported INTEGER NOT NULL DEFAULT 0
);
DROP INDEX IF EXISTS model_calls_by_time;
CREATE INDEX IF NOT EXISTS model_calls_by_end ON model_calls (ended_ns);
CREATE INDEX IF NOT EXISTS model_calls_by_session ON model_calls (session);
CREATE TABLE IF NOT EXISTS tool_calls (
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent TEXT, session TEXT NOT NULL,
    agent TEXT NOT NULL,
    repository TEXT, branch TEXT, user TEXT, started_ns INTEGER NOT NULL,
    ended_ns INTEGER NOT NULL, name TEXT NOT NULL, failed INTEGER NOT NULL,
    UNIQUE (trace_id, span_id)
);
CREATE TABLE IF NOT EXISTS duplicates (
    trace_id TEXT PRIMARY KEY, of_trace TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sent (trace_id TEXT PRIMARY KEY) WITHOUT ROWID;
";

/// An open store.
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
    /// Schema 2's `parent` columns are there (a store of schema 1 read before any writer
    /// brought it up to date has none).
    pub(super) nests: bool,
    /// Schema 3's `usage` table is there.
    pub(super) rolls_up: bool,
    /// Its rows are a batch job's (an import, a replay), which yield to the live route's.
    pub(super) imported: bool,
}

/// What the store holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holdings {
    pub turns: u64,
    pub model_calls: u64,
    pub tool_calls: u64,
    /// The first and last model call or turn, in ns since the epoch.
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    /// The database and its write-ahead log, in bytes.
    pub bytes: u64,
}

impl Store {
    /// Opens the store at `path`, making it (and its folder, private) if it is not there.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let io = |e: std::io::Error| StoreError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        if let Some(dir) = path.parent() {
            crate::fs::create_private_dir(dir).map_err(io)?;
        }
        if !path.exists() {
            // Private from the start: SQLite makes its journal files with the same mode.
            crate::fs::private_file_options()
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(io)?;
        }
        let conn = Connection::open(path).map_err(|e| StoreError::db(path, e))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
            nests: true,
            rolls_up: true,
            imported: false,
        };
        store.prepare()?;
        Ok(store)
    }

    /// Makes the file the store, or brings it up to date, under the write lock: several
    /// writers opening a new store at once find it made once, by the first.
    fn prepare(&self) -> Result<(), StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        self.conn.busy_timeout(BUSY).map_err(db)?;
        // Space freed by a prune can be given back without a `VACUUM`, which would lock every
        // writer out while it copies the whole file. It takes only on a file with no table
        // yet (before the journal mode and the first table fix its header), and does nothing
        // to one that has them.
        self.conn
            .pragma_update(None, "auto_vacuum", "INCREMENTAL")
            .map_err(db)?;
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(db)?;
        let made = self.make_or_update();
        let end = if made.is_ok() { "COMMIT" } else { "ROLLBACK" };
        self.conn.execute_batch(end).map_err(db)?;
        made?;
        // Schema 1 set its journal mode first, which left its files without incremental
        // vacuum: one `VACUUM` makes them over, so that a prune gives space back. One that
        // cannot (a full disk, another writer) is tried again at the next open.
        let vacuum: i64 = (self.conn)
            .pragma_query_value(None, "auto_vacuum", |r| r.get(0))
            .map_err(db)?;
        if vacuum == 0 {
            if let Err(e) = self
                .conn
                .execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")
            {
                tracing::warn!(
                    "the local store {}: not made over yet: {e}",
                    self.path.display()
                );
            }
        }
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(db)?;
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(db)?;
        // A statement that may have to be undone on its own (one that writes several rows, an
        // insert that fired a trigger when this writer let them) keeps a statement journal,
        // and SQLite keeps those in temporary files by default: two system calls a page
        // (`strace -c` of a replay, with the triggers: 120,623 `pwrite64` calls, 44,111 with
        // this). And
        // a batch's pages, random all over the trees, outgrow the 2 MiB default cache and are
        // spilled to the write-ahead log and read back (24,319 with 16 MiB; an import of 90
        // days peaks at 47 MiB with it). Both are per connection, none in the file.
        self.conn
            .pragma_update(None, "temp_store", "MEMORY")
            .map_err(db)?;
        self.conn
            .pragma_update(None, "cache_size", CACHE_KIB)
            .map_err(db)?;
        // This writer keeps `usage` itself (see `usage`); the triggers are for other writers.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)
            .map_err(db)?;
        Ok(())
    }

    /// Inside [`prepare`](Self::prepare)'s transaction: the schema made or brought up to date.
    fn make_or_update(&self) -> Result<(), StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db)?;
        if version > VERSION {
            return Err(StoreError::Newer {
                path: self.path.clone(),
                version,
            });
        }
        if version == 0 {
            // Ours from its start, or empty: another program's database is not made over.
            let tables: i64 = self
                .conn
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(db)?;
            if tables > 0 {
                return Err(StoreError::NotAStore {
                    path: self.path.clone(),
                    what: "another program's SQLite database",
                });
            }
        }
        if version == 1 {
            // Schema 2 keeps what each row nests under (`show` draws the tree from it).
            self.conn
                .execute_batch(
                    "ALTER TABLE turns ADD COLUMN parent TEXT;
                     ALTER TABLE model_calls ADD COLUMN parent TEXT;
                     ALTER TABLE tool_calls ADD COLUMN parent TEXT;",
                )
                .map_err(db)?;
        }
        if version >= 1 {
            // Whether a batch job wrote a turn or a model call (the live route's turns win
            // over an import's, see `insert`), added to a store without it; the rows already
            // there count as the live route's. Not a version of its own: a binary from before
            // reads and writes the store as it did, and its rows are the live route's.
            for table in ["turns", "model_calls"] {
                if self.has_column(table, "imported")? {
                    continue;
                }
                self.conn
                    .execute_batch(&format!(
                        "ALTER TABLE {table} ADD COLUMN imported INTEGER NOT NULL DEFAULT 0;"
                    ))
                    .map_err(db)?;
                // The calls of the turns a batch job wrote are that job's.
                if table == "model_calls" {
                    self.conn
                        .execute_batch(
                            "UPDATE model_calls SET imported = 1 WHERE trace_id IN
                               (SELECT trace_id FROM turns WHERE imported = 1);",
                        )
                        .map_err(db)?;
                }
            }
        }
        self.conn.execute_batch(SCHEMA).map_err(db)?;
        self.conn.execute_batch(usage::SCHEMA).map_err(db)?;
        if (1..3).contains(&version) {
            // Schema 3 adds up the calls by quarter hour: those already there, once.
            usage::fill(&self.conn).map_err(db)?;
        }
        self.conn
            .pragma_update(None, "user_version", VERSION)
            .map_err(db)?;
        Ok(())
    }

    /// Whether `table` has column `name`.
    fn has_column(&self, table: &str, name: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                [table, name],
                |r| r.get(0),
            )
            .map_err(|e| StoreError::db(&self.path, e))
    }

    /// The store for a batch job (an import, a replay), which can be run again: its commits
    /// are not synced one by one (the write-ahead log keeps them through a crash of the
    /// process; a crash of the machine can take the last ones, which the job puts back when
    /// run again), and its log is copied into the file every 64 MiB rather than 4 MiB, each
    /// page once for many commits. An import of 90 days: a sixth of its CPU was `fsync` and
    /// those copies. Its turns are marked as a batch job's: the live route's trace of the same
    /// turn wins over them (see `insert`).
    pub fn for_batch_job(mut self) -> Result<Store, StoreError> {
        self.imported = true;
        let db = |e| StoreError::db(&self.path, e);
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(db)?;
        self.conn
            .pragma_update(None, "wal_autocheckpoint", 16_384)
            .map_err(db)?;
        Ok(self)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `rows` in one transaction, on disk when this returns; rows already there are
    /// kept as they were. Returns how many were new.
    pub fn write(&mut self, rows: &[Row]) -> Result<usize, StoreError> {
        let path = self.path.clone();
        let db = |e| StoreError::db(&path, e);
        let tx = self.conn.transaction().map_err(db)?;
        let new = insert::rows(&tx, rows, self.imported).map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(new)
    }

    /// What the store holds.
    pub fn holdings(&self) -> Result<Holdings, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let count = |table: &str| -> Result<u64, StoreError> {
            self.conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|n| n as u64)
                .map_err(db)
        };
        let (first_ns, last_ns): (Option<i64>, Option<i64>) = self
            .conn
            .query_row(
                "SELECT min(t), max(t) FROM (SELECT started_ns AS t FROM model_calls
                 UNION ALL SELECT started_ns FROM turns)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(db)?;
        let size = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        Ok(Holdings {
            turns: count("turns")?,
            model_calls: count("model_calls")?,
            tool_calls: count("tool_calls")?,
            first_ns,
            last_ns,
            bytes: size(self.path.clone()) + size(PathBuf::from(wal)),
        })
    }

    /// Removes what began before `before_ns`; how many rows went.
    pub fn prune(&mut self, before_ns: i64) -> Result<u64, StoreError> {
        let path = self.path.clone();
        let db = |e| StoreError::db(&path, e);
        let tx = self.conn.transaction().map_err(db)?;
        let mut gone =
            usage::delete_calls(&tx, "started_ns < ?1", &[&before_ns]).map_err(db)? as u64;
        for table in ["turns", "tool_calls"] {
            gone += tx
                .execute(
                    &format!("DELETE FROM {table} WHERE started_ns < ?1"),
                    [before_ns],
                )
                .map_err(db)? as u64;
        }
        // A duplicate is remembered while what it duplicates is kept. A trace sent is
        // remembered always: imported again after it was pruned, it is not sent again.
        tx.execute(
            "DELETE FROM duplicates WHERE of_trace NOT IN (SELECT trace_id FROM model_calls)",
            [],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        // Each step gives back one free page: stepped to the end, it gives back all of them.
        let mut vacuum = self.conn.prepare("PRAGMA incremental_vacuum").map_err(db)?;
        let mut steps = vacuum.query([]).map_err(db)?;
        while steps.next().map_err(db)?.is_some() {}
        Ok(gone)
    }

    /// What a status line says: `session`'s tokens and cost, and the cost of the calls that
    /// began since `today_ns` and since `hour_ns`.
    pub fn status(&self, session: &str, today_ns: i64, hour_ns: i64) -> Result<Status, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let (tokens, cost, unpriced): (Option<i64>, Option<f64>, i64) = self
            .conn
            .query_row(
                "SELECT sum(input + output + cache_read + cache_write), sum(cost),
                 sum(cost IS NULL) FROM model_calls WHERE session = ?1",
                [session],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    ))
                },
            )
            .map_err(db)?;
        let since = |from: i64| -> Result<f64, StoreError> {
            self.conn
                .query_row(
                    "SELECT coalesce(sum(cost), 0) FROM model_calls WHERE ended_ns >= ?1",
                    [from],
                    |r| r.get(0),
                )
                .map_err(db)
        };
        Ok(Status {
            session_tokens: tokens.unwrap_or(0),
            session_cost: cost.unwrap_or(0.0),
            session_unpriced: unpriced > 0,
            today_cost: since(today_ns)?,
            hour_cost: since(hour_ns)?,
        })
    }
}

/// What a status line says (see [`Store::status`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub session_tokens: i64,
    pub session_cost: f64,
    /// Some of the session's calls have no price.
    pub session_unpriced: bool,
    pub today_cost: f64,
    /// The cost of the last hour's calls: the burn rate, per hour.
    pub hour_cost: f64,
}
