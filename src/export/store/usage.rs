//! The store's usage by quarter hour: each model call's tokens and cost added to the row of its
//! quarter hour (by when its answer came), its session, agent, model, repository, branch and
//! user, and taken out again when the call is deleted (a duplicate's, a prune). `report` reads
//! these rows, a few per session-hour, rather than every call: a year of history is some 40,000
//! rows against 450,000 calls. A quarter hour lies within one day in every time zone (their
//! offsets are whole quarters), so the days come out as from the calls themselves.
//!
//! Triggers on `model_calls` keep the rows for any writer, so that a daemon of an earlier
//! version still running keeps them too. This version's writer turns triggers off on its
//! connection (see `db`) and keeps them itself, a transaction's calls added up into each row
//! once ([`Sums`]) and the calls it deletes taken out by the group ([`delete_calls`]): a trigger
//! run for each call, and the statement journal it made SQLite keep, were a third of the
//! store's time on a replay.

use std::collections::HashMap;

use rusqlite::{params, Connection, ToSql, Transaction};

use super::report::{Tally, Tokens};
use super::rows::ModelCall;

/// A quarter hour, in ns.
pub(super) const QUARTER_NS: i64 = 900_000_000_000;

/// How a row met again takes more calls in: the trigger's and [`Sums::write`]'s alike, so
/// that the two add up alike.
macro_rules! add_to_row {
    () => {
        "ON CONFLICT DO UPDATE SET calls = calls + excluded.calls,
        input = input + excluded.input, output = output + excluded.output,
        cache_read = cache_read + excluded.cache_read,
        cache_write = cache_write + excluded.cache_write, cost = cost + excluded.cost,
        first_ns = min(first_ns, excluded.first_ns), last_ns = max(last_ns, excluded.last_ns)"
    };
}

pub(super) const SCHEMA: &str = concat!(
    "
CREATE TABLE IF NOT EXISTS usage (
    quarter INTEGER NOT NULL, session TEXT NOT NULL, agent TEXT NOT NULL, model TEXT NOT NULL,
    repository TEXT NOT NULL, branch TEXT NOT NULL, user TEXT NOT NULL,
    priced INTEGER NOT NULL, calls INTEGER NOT NULL, input INTEGER NOT NULL,
    output INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL,
    cost REAL NOT NULL, first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL,
    PRIMARY KEY (quarter, session, agent, model, repository, branch, user, priced)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS usage_add AFTER INSERT ON model_calls BEGIN
    INSERT INTO usage VALUES (new.ended_ns / 900000000000, new.session, new.agent, new.model,
        coalesce(new.repository, ''), coalesce(new.branch, ''), coalesce(new.user, ''),
        new.cost IS NOT NULL, 1, new.input, new.output, new.cache_read, new.cache_write,
        coalesce(new.cost, 0.0), new.ended_ns, new.ended_ns)
    ",
    add_to_row!(),
    ";
END;
CREATE TRIGGER IF NOT EXISTS usage_take AFTER DELETE ON model_calls BEGIN
    UPDATE usage SET calls = calls - 1, input = input - old.input, output = output - old.output,
        cache_read = cache_read - old.cache_read, cache_write = cache_write - old.cache_write,
        cost = cost - coalesce(old.cost, 0.0)
    WHERE quarter = old.ended_ns / 900000000000 AND session = old.session
        AND agent = old.agent AND model = old.model
        AND repository = coalesce(old.repository, '') AND branch = coalesce(old.branch, '')
        AND user = coalesce(old.user, '') AND priced = (old.cost IS NOT NULL);
    DELETE FROM usage WHERE quarter = old.ended_ns / 900000000000 AND calls <= 0;
END;
"
);

/// A usage row's key: quarter, session, agent, model, repository, branch, user, priced.
type Key = (i64, String, String, String, String, String, String, bool);

/// A usage row's figures: calls, input, output, cache read, cache write, cost, first, last.
#[derive(Default)]
struct Sum {
    calls: i64,
    tokens: [i64; 4],
    cost: f64,
    first_ns: i64,
    last_ns: i64,
}

/// A transaction's new calls, added up by usage row before they are written.
#[derive(Default)]
pub(super) struct Sums(HashMap<Key, Sum>);

impl Sums {
    /// Adds call `m`, new to the store.
    pub(super) fn add(&mut self, m: &ModelCall) {
        let p = &m.place;
        let text = |s: &Option<String>| s.clone().unwrap_or_default();
        let key = (
            // As SQLite's integer division does (towards zero), which the trigger uses.
            p.ended_ns / QUARTER_NS,
            p.session.clone(),
            p.agent.clone(),
            m.model.clone(),
            text(&p.repository),
            text(&p.branch),
            text(&p.user),
            m.cost.is_some(),
        );
        let sum = self.0.entry(key).or_insert_with(|| Sum {
            first_ns: p.ended_ns,
            last_ns: p.ended_ns,
            ..Sum::default()
        });
        sum.calls += 1;
        for (t, n) in sum
            .tokens
            .iter_mut()
            .zip([m.input, m.output, m.cache_read, m.cache_write])
        {
            *t += n;
        }
        sum.cost += m.cost.unwrap_or(0.0);
        sum.first_ns = sum.first_ns.min(p.ended_ns);
        sum.last_ns = sum.last_ns.max(p.ended_ns);
    }

    /// Adds what was added up to the usage rows, and starts again.
    pub(super) fn write(&mut self, tx: &Transaction<'_>) -> rusqlite::Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        let mut q = tx.prepare_cached(concat!(
            "INSERT INTO usage VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
               ?14, ?15, ?16) ",
            add_to_row!()
        ))?;
        for ((quarter, session, agent, model, repo, branch, user, priced), s) in self.0.drain() {
            let [input, output, cache_read, cache_write] = s.tokens;
            q.execute(params![
                quarter,
                session,
                agent,
                model,
                repo,
                branch,
                user,
                priced,
                s.calls,
                input,
                output,
                cache_read,
                cache_write,
                s.cost,
                s.first_ns,
                s.last_ns
            ])?;
        }
        Ok(())
    }
}

/// The columns a group of calls is added up by, from `model_calls`, in `usage`'s order.
const GROUPED: &str = "ended_ns / 900000000000 AS quarter, session, agent, model,
    coalesce(repository, '') AS repository, coalesce(branch, '') AS branch,
    coalesce(user, '') AS user, cost IS NOT NULL AS priced, count(*) AS calls,
    sum(input) AS input, sum(output) AS output, sum(cache_read) AS cache_read,
    sum(cache_write) AS cache_write, coalesce(sum(cost), 0.0) AS cost,
    min(ended_ns) AS first_ns, max(ended_ns) AS last_ns";

const GROUP_BY: &str = "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8";

/// Fills the table from the calls there (a store made before it).
pub(super) fn fill(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        &format!("INSERT INTO usage SELECT {GROUPED} FROM model_calls {GROUP_BY}"),
        [],
    )
}

/// Deletes the model calls `which` selects (a `WHERE` clause's condition on `model_calls`,
/// with `params`), taking them out of their usage rows first, as the trigger would one by
/// one; how many went.
pub(super) fn delete_calls(
    conn: &Connection,
    which: &str,
    params: &[&dyn ToSql],
) -> rusqlite::Result<usize> {
    let quarters: (Option<i64>, Option<i64>) = conn
        .prepare_cached(&format!(
            "SELECT min(ended_ns) / 900000000000, max(ended_ns) / 900000000000
             FROM model_calls WHERE {which}"
        ))?
        .query_row(params, |r| Ok((r.get(0)?, r.get(1)?)))?;
    let (Some(first), Some(last)) = quarters else {
        return Ok(0);
    };
    conn.prepare_cached(&format!(
        "UPDATE usage SET calls = usage.calls - g.calls, input = usage.input - g.input,
           output = usage.output - g.output, cache_read = usage.cache_read - g.cache_read,
           cache_write = usage.cache_write - g.cache_write, cost = usage.cost - g.cost
         FROM (SELECT {GROUPED} FROM model_calls WHERE {which} {GROUP_BY}) AS g
         WHERE usage.quarter = g.quarter AND usage.session = g.session
           AND usage.agent = g.agent AND usage.model = g.model
           AND usage.repository = g.repository AND usage.branch = g.branch
           AND usage.user = g.user AND usage.priced = g.priced"
    ))?
    .execute(params)?;
    let gone = conn
        .prepare_cached(&format!("DELETE FROM model_calls WHERE {which}"))?
        .execute(params)?;
    conn.prepare_cached("DELETE FROM usage WHERE quarter BETWEEN ?1 AND ?2 AND calls <= 0")?
        .execute([first, last])?;
    Ok(gone)
}

/// The tallies of the calls whose answer came from `from_ns` to `to_ns` (both on quarter
/// hours, as the start of a day is in any time zone).
pub(super) fn read(conn: &Connection, from_ns: i64, to_ns: i64) -> rusqlite::Result<Vec<Tally>> {
    let mut q = conn.prepare(
        "SELECT session, agent, model, repository, branch, user, priced, calls, input, output,
           cache_read, cache_write, cost, first_ns, last_ns
         FROM usage WHERE quarter >= ?1 AND quarter < ?2",
    )?;
    let some = |s: String| (!s.is_empty()).then_some(s);
    let rows = q.query_map(
        [from_ns.div_euclid(QUARTER_NS), to_ns.div_euclid(QUARTER_NS)],
        |r| {
            Ok(Tally {
                session: r.get(0)?,
                agent: r.get(1)?,
                model: r.get(2)?,
                repository: some(r.get(3)?),
                branch: some(r.get(4)?),
                user: some(r.get(5)?),
                priced: r.get(6)?,
                calls: r.get::<_, i64>(7)?.max(0) as u64,
                tokens: Tokens {
                    input: r.get(8)?,
                    output: r.get(9)?,
                    cache_read: r.get(10)?,
                    cache_write: r.get(11)?,
                    cost: r.get(12)?,
                },
                first_ns: r.get(13)?,
                last_ns: r.get(14)?,
            })
        },
    )?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use crate::export::store::report::{build, Period, Tally};
    use crate::export::store::rows::{ModelCall, Place, Row};
    use crate::export::store::Store;
    use jiff::tz::TimeZone;

    const MINUTE: i64 = 60_000_000_000;

    /// A call every 7 minutes for three days, across sessions, agents and an unpriced model,
    /// each taking 1 to 37 minutes.
    fn calls() -> Vec<Row> {
        calls_from(0, 3 * 24 * 60 / 7)
    }

    /// Calls `from` to `from + n` of [`calls`]'s kind.
    fn calls_from(from: i64, n: i64) -> Vec<Row> {
        (from..from + n)
            .map(|i: i64| {
                let at = 1_772_400_000_000_000_000 + i * 7 * MINUTE;
                let place = Place {
                    trace_id: format!("{i:032x}"),
                    span_id: format!("{i:016x}"),
                    session: format!("s{}", i / 40),
                    agent: ["claude-code", "codex"][(i % 2) as usize].into(),
                    repository: (i % 3 == 0).then(|| "https://example.com/r.git".into()),
                    // Some long enough to begin a quarter hour or two before they end.
                    started_ns: at - (1 + i % 4 * 12) * MINUTE,
                    ended_ns: at,
                    ..Place::default()
                };
                let mut c = ModelCall::sample(place, &format!("k{i}"));
                if i % 5 == 0 {
                    c.model = "mystery-1".into();
                    c.cost = None;
                }
                Row::ModelCall(c)
            })
            .collect()
    }

    /// The report from the `usage` rows and from the calls themselves, in a zone whose days
    /// are not UTC's.
    fn both(store: &Store) -> (serde_json::Value, serde_json::Value) {
        let tz = TimeZone::get("Asia/Kolkata").unwrap();
        let report = |t: Vec<Tally>| {
            let r = crate::export::store::report::to_json(&build(t, Period::Daily, None, &tz));
            serde_json::to_string(&r).unwrap()
        };
        let rolled = report(store.tallies(0, i64::MAX).unwrap());
        let calls = store.model_calls(0, i64::MAX).unwrap();
        let each = report(calls.iter().map(Tally::from).collect());
        (
            serde_json::from_str(&rolled).unwrap(),
            serde_json::from_str(&each).unwrap(),
        )
    }

    #[test]
    fn the_quarter_hours_say_what_the_calls_say_written_again_and_pruned() {
        let dir = std::env::temp_dir().join(format!("albedo-otel-usage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir.join("store.sqlite")).unwrap();
        let rows = calls();
        store.write(&rows[..300]).unwrap();
        store.write(&rows[200..]).unwrap();
        let (rolled, each) = both(&store);
        assert_eq!(rolled, each);
        assert_eq!(
            rolled["daily"].as_array().unwrap().len(),
            4,
            "three days, in Kolkata four"
        );
        // Pruned in the middle of a quarter hour, by when calls began: what is left adds up as
        // the calls left do, those that began before and ended after the cut not among them.
        store
            .prune(1_772_400_000_000_000_000 + 1_000 * MINUTE + 3 * MINUTE)
            .unwrap();
        let (rolled, each) = both(&store);
        assert_eq!(rolled, each);
        // A store of schema 2, made before the table: a writer adds up its calls once.
        store
            .conn
            .execute_batch("DROP TABLE usage; PRAGMA user_version = 2;")
            .unwrap();
        drop(store);
        let reader = Store::open_to_read(&dir.join("store.sqlite"))
            .unwrap()
            .unwrap();
        assert_eq!(both(&reader).0, each, "read as it is, from its calls");
        let store = Store::open(&dir.join("store.sqlite")).unwrap();
        assert_eq!(both(&store), (each.clone(), each));
        // A daemon of the version before, still running, writes calls as it always did, on
        // its own connection, where the triggers add them up; and prunes, where they take
        // them out. This one's writes and prunes around them count each call once.
        let old = rusqlite::Connection::open(dir.join("store.sqlite")).unwrap();
        old.execute_batch(
            "INSERT INTO model_calls (key, trace_id, span_id, session, agent, started_ns,
               ended_ns, model, input, output, cache_read, cache_write, cost)
             VALUES ('old:1', 't', 's', 's1', 'codex', 1772400000000000000,
               1772400060000000000, 'gpt-5', 7, 3, 0, 0, 0.25),
             ('old:2', 't', 's2', 's1', 'codex', 1772500000000000000,
               1772500060000000000, 'gpt-5', 5, 1, 0, 0, 0.5)",
        )
        .unwrap();
        let mut store = store;
        store.write(&calls_from(1_000, 40)).unwrap();
        let (rolled, each) = both(&store);
        assert_eq!(
            rolled, each,
            "its calls are in the report too, and ours once"
        );
        old.execute(
            "DELETE FROM model_calls WHERE started_ns < ?1",
            [1_772_400_000_000_000_000 + 1_100 * MINUTE],
        )
        .unwrap();
        store
            .prune(1_772_400_000_000_000_000 + 1_200 * MINUTE)
            .unwrap();
        let (rolled, each) = both(&store);
        assert_eq!(rolled, each, "pruned by either");
        let _ = std::fs::remove_dir_all(dir);
    }
}
