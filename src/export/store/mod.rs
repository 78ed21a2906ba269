//! The local store: every turn the pipeline finishes, from any source, with its model calls
//! (tokens, cost) and tool calls, kept in one SQLite file under `$XDG_DATA_HOME/albedo-otel/`,
//! so that `albedo-otel report` shows usage and cost with no collector at all. It keeps what
//! the export carries, and less: no prompt, message or tool content, ever.
//!
//! - [`rows`]: what is kept of a span (pure);
//! - [`db`]: the file, its schema, writing and pruning it;
//! - `insert`: writing rows so that nothing is counted twice;
//! - `limits`: keeping it within its retention and size;
//! - [`read`]: reading it back (the calls of a span of time, the sessions, one session's rows);
//! - `sent`: which of an import's traces a collector has had, so that none is sent twice;
//! - [`writer`]: the thread that writes, behind a bounded queue;
//! - `usage`: the model calls added up by quarter hour as they are written, which `report` reads;
//! - [`report`]: usage by day, week, month or session, in ccusage's JSON shape;
//! - [`show`]: one session's or trace's rows as spans again, for the console's tree.

pub mod db;
mod insert;
mod limits;
pub mod read;
pub mod report;
pub mod rows;
mod sent;
pub mod show;
mod usage;
mod writer;

use std::path::PathBuf;

use thiserror::Error;

pub use db::{Holdings, Status, Store};
pub use writer::StoreWriter;

/// Where the store is, when it is on, and what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    pub path: PathBuf,
    pub limits: Limits,
    /// A batch job's store (an import's, a replay's): the pipeline waits for room however
    /// long the disk takes, and no row is dropped for being slow; and the writer commits
    /// without a sync of its own and copies its log into the file less often
    /// ([`Store::for_batch_job`]). Off (the live route), a store slower than the spans for
    /// long loses rows, counted, rather than hold up the export.
    pub batch_job: bool,
}

/// How much the store keeps: what began within `keep`, in `max_bytes` at most (the oldest
/// days go first). Each writer keeps them when it opens the store.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub keep: Option<std::time::Duration>,
    pub max_bytes: Option<u64>,
}

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot open {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the store {path}: {source}")]
    Db {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "the store {path} was written by a newer albedo-otel (schema {version}); upgrade to read it"
    )]
    Newer { path: PathBuf, version: i64 },
    #[error(
        "{path} is not albedo-otel's store ({what}); it was left as it is: move it away (or set \
         store.path / ALBEDO_OTEL_STORE_PATH elsewhere) and the store starts anew, which \
         `albedo-otel import` fills again from your agents' own files"
    )]
    NotAStore { path: PathBuf, what: &'static str },
}

impl StoreError {
    fn db(path: &std::path::Path, source: rusqlite::Error) -> StoreError {
        if source.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) {
            return StoreError::NotAStore {
                path: path.to_path_buf(),
                what: "it is not a SQLite database, or a damaged one",
            };
        }
        StoreError::Db {
            path: path.to_path_buf(),
            source,
        }
    }
}
