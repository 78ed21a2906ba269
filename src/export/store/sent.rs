//! Which of an import's traces a collector has had. `import --export` sends only the others,
//! and marks what it sent once it was delivered: importing again, or importing turns the hooks
//! already sent, sends nothing twice (no span again, and no metric point, which a collector
//! cannot tell from a new one).

use std::collections::HashSet;

use super::db::Store;
use super::StoreError;

impl Store {
    /// The traces of the turns a batch job (an import, a replay) wrote that no
    /// `import --export` has sent. The live route's turns are not among them (the hooks sent
    /// them), nor an import's copies of those (taken back as duplicates, see `insert`).
    pub fn unsent(&self) -> Result<HashSet<String>, StoreError> {
        let db = |e| StoreError::db(&self.path, e);
        let mut q = self
            .conn
            .prepare(
                "SELECT DISTINCT trace_id FROM turns WHERE imported = 1
                 AND trace_id NOT IN (SELECT trace_id FROM sent)",
            )
            .map_err(db)?;
        let rows = q.query_map([], |r| r.get(0)).map_err(db)?;
        rows.collect::<Result<_, _>>().map_err(db)
    }

    /// Marks `traces` as sent, in one transaction; returns how many were not already.
    pub fn mark_sent<'a>(
        &mut self,
        traces: impl IntoIterator<Item = &'a str>,
    ) -> Result<usize, StoreError> {
        let path = self.path.clone();
        let db = |e| StoreError::db(&path, e);
        let tx = self.conn.transaction().map_err(db)?;
        let mut new = 0;
        {
            let mut insert = tx
                .prepare_cached("INSERT OR IGNORE INTO sent (trace_id) VALUES (?1)")
                .map_err(db)?;
            for trace in traces {
                new += insert.execute([trace]).map_err(db)?;
            }
        }
        tx.commit().map_err(db)?;
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::super::insert::tests::{store, turn};
    use super::*;

    fn ids(traces: &[&str]) -> HashSet<String> {
        traces.iter().map(|t| t.repeat(32)).collect()
    }

    #[test]
    fn what_an_import_wrote_is_unsent_until_marked_and_the_hooks_turns_never_are() {
        let (dir, mut live) = store("sent");
        let mut import = Store::open(live.path()).unwrap().for_batch_job().unwrap();
        live.write(&turn("a", 1_000, &["msg_1"])).unwrap();
        // The import's: a turn of its own, and its copy of the hooks' turn (the same call).
        import.write(&turn("b", 5_000, &["msg_2"])).unwrap();
        import.write(&turn("c", 1_003, &["msg_1"])).unwrap();
        assert_eq!(import.unsent().unwrap(), ids(&["b"]));

        assert_eq!(import.mark_sent(["b".repeat(32).as_str()]).unwrap(), 1);
        assert_eq!(import.mark_sent(["b".repeat(32).as_str()]).unwrap(), 0);
        assert!(import.unsent().unwrap().is_empty());
        // Imported again: still sent.
        import.write(&turn("b", 5_000, &["msg_2"])).unwrap();
        assert!(import.unsent().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_trace_sent_then_pruned_and_imported_again_is_not_sent_again() {
        let (dir, store) = store("sent-pruned");
        let mut import = store.for_batch_job().unwrap();
        import.write(&turn("b", 5_000, &["msg_2"])).unwrap();
        import.mark_sent(["b".repeat(32).as_str()]).unwrap();
        import.prune(10_000).unwrap();
        assert_eq!(import.holdings().unwrap().turns, 0);
        import.write(&turn("b", 5_000, &["msg_2"])).unwrap();
        assert!(import.unsent().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
