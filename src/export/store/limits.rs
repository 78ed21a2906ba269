//! Keeping the store within the limits the configuration sets: what began too long ago goes,
//! then the oldest days while the file is over its cap (never the newest day). Each writer does it as it opens the
//! store, so a store never used again stays as it was.

use super::db::Store;
use super::{Limits, StoreError};

/// A day, in nanoseconds: the least a cap removes at once.
const DAY_NS: i64 = 86_400_000_000_000;

impl Store {
    /// Keeps the store within `limits` at `now_ns`; how many rows went.
    pub fn keep_within(&mut self, limits: Limits, now_ns: i64) -> Result<u64, StoreError> {
        let mut gone = 0;
        if let Some(keep) = limits.keep {
            let age = i64::try_from(keep.as_nanos()).unwrap_or(i64::MAX);
            gone += self.prune(now_ns.saturating_sub(age))?;
        }
        let Some(max) = limits.max_bytes else {
            return Ok(gone);
        };
        self.checkpoint()?;
        // A tenth of what the store spans at a time (a day at least), oldest first.
        for _ in 0..32 {
            let held = self.holdings()?;
            let (Some(first), Some(last)) = (held.first_ns, held.last_ns) else {
                break;
            };
            if held.bytes <= max {
                break;
            }
            // Never the newest day: a store whose newest day alone is over its cap keeps it.
            let newest_day = last - last.rem_euclid(DAY_NS);
            let cut = first
                .saturating_add(((last - first) / 10).max(DAY_NS))
                .min(newest_day);
            if cut <= first {
                break;
            }
            let went = self.prune(cut)?;
            self.checkpoint()?;
            gone += went;
            // A file that gives no space back (its pages not freed) is not emptied for it.
            if went == 0 || self.holdings()?.bytes >= held.bytes {
                break;
            }
        }
        Ok(gone)
    }

    /// Moves the write-ahead log into the file and empties it, so that the size on disk is
    /// what the store holds.
    fn checkpoint(&self) -> Result<(), StoreError> {
        self.conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .map_err(|e| StoreError::db(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::export::store::rows::{ModelCall, Place, Row};

    fn call(i: i64, day: i64) -> Row {
        let place = Place {
            trace_id: format!("{i:032x}"),
            span_id: format!("{i:016x}"),
            session: format!("session-{day}"),
            agent: "claude-code".into(),
            started_ns: day * DAY_NS,
            ended_ns: day * DAY_NS + 1,
            ..Place::default()
        };
        Row::ModelCall(ModelCall::sample(place, &format!("anthropic:msg_{i}")))
    }

    /// 100 days of calls, 200 a day.
    fn filled(name: &str) -> (std::path::PathBuf, Store) {
        let dir =
            std::env::temp_dir().join(format!("albedo-otel-limits-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir.join("store.sqlite")).unwrap();
        let rows: Vec<Row> = (0..20_000).map(|i| call(i, i / 200)).collect();
        store.write(&rows).unwrap();
        (dir, store)
    }

    #[test]
    fn what_began_before_the_retention_goes_and_the_rest_stays() {
        let (dir, mut store) = filled("keep");
        let keep = Limits {
            keep: Some(Duration::from_secs(30 * 86_400)),
            max_bytes: None,
        };
        let gone = store.keep_within(keep, 100 * DAY_NS).unwrap();
        assert_eq!(
            gone,
            70 * 200,
            "days 0 to 69 began more than 30 days before day 100"
        );
        let held = store.holdings().unwrap();
        assert_eq!(
            (held.model_calls, held.first_ns),
            (30 * 200, Some(70 * DAY_NS))
        );
        assert_eq!(
            store.keep_within(keep, 100 * DAY_NS).unwrap(),
            0,
            "nothing more"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn over_its_cap_the_oldest_days_go_until_it_fits() {
        let (dir, mut store) = filled("cap");
        store.checkpoint().unwrap();
        let full = store.holdings().unwrap().bytes;
        let cap = Limits {
            keep: None,
            max_bytes: Some(full / 2),
        };
        let gone = store.keep_within(cap, 100 * DAY_NS).unwrap();
        let held = store.holdings().unwrap();
        assert!(
            held.bytes <= full / 2,
            "{} bytes, over {}",
            held.bytes,
            full / 2
        );
        assert!(
            gone > 0 && held.model_calls > 0,
            "{gone} gone, {} kept",
            held.model_calls
        );
        assert_eq!(held.last_ns, Some(99 * DAY_NS), "the newest day stays");
        assert_eq!(
            held.model_calls + gone,
            20_000,
            "what went is what is missing"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
