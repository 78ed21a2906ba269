//! The store's usage by quarter hour: each model call's tokens and cost added to the row of its
//! quarter hour (by when its answer came), its session, agent, model, repository, branch and
//! user, and taken out again when the call is pruned, by triggers on `model_calls`, so that
//! every writer keeps it, a daemon of an earlier version still running included. `report` reads these rows, a few per session-hour,
//! rather than every call: a year of history is some 40,000 rows against 450,000 calls. A
//! quarter hour lies within one day in every time zone (their offsets are whole quarters), so
//! the days come out as from the calls themselves.

use rusqlite::Connection;

use super::report::{Tally, Tokens};

/// A quarter hour, in ns.
pub(super) const QUARTER_NS: i64 = 900_000_000_000;

pub(super) const SCHEMA: &str = "
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
    ON CONFLICT DO UPDATE SET calls = calls + 1, input = input + excluded.input,
        output = output + excluded.output, cache_read = cache_read + excluded.cache_read,
        cache_write = cache_write + excluded.cache_write, cost = cost + excluded.cost,
        first_ns = min(first_ns, excluded.first_ns), last_ns = max(last_ns, excluded.last_ns);
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
";

/// The columns a group of calls is added up by, from `model_calls`.
const GROUPED: &str = "ended_ns / 900000000000, session, agent, model, coalesce(repository, ''),
    coalesce(branch, ''), coalesce(user, ''), cost IS NOT NULL, count(*), sum(input),
    sum(output), sum(cache_read), sum(cache_write), coalesce(sum(cost), 0.0), min(ended_ns),
    max(ended_ns)";

const GROUP_BY: &str = "GROUP BY 1, 2, 3, 4, 5, 6, 7, 8";

/// Fills the table from the calls there (a store made before it).
pub(super) fn fill(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        &format!("INSERT INTO usage SELECT {GROUPED} FROM model_calls {GROUP_BY}"),
        [],
    )
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
        (0..3 * 24 * 60 / 7)
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
        // A daemon of the version before, still running, writes a call as it always did.
        store
            .conn
            .execute_batch(
                "INSERT INTO model_calls (key, trace_id, span_id, session, agent, started_ns,
                   ended_ns, model, input, output, cache_read, cache_write, cost)
                 VALUES ('old:1', 't', 's', 's1', 'codex', 1772400000000000000,
                   1772400060000000000, 'gpt-5', 7, 3, 0, 0, 0.25)",
            )
            .unwrap();
        let (rolled, each) = both(&store);
        assert_eq!(rolled, each, "its call is in the report too");
        let _ = std::fs::remove_dir_all(dir);
    }
}
