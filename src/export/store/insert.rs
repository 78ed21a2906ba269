//! Writing rows so that nothing is counted twice. A row met again is kept as it was: a span
//! by its ids, a model call by its key (its provider's response id). And a turn met twice,
//! by the live route and by an import of the same files, is kept once: the two trace it
//! under different ids (each from the time it saw the prompt), but its model calls have the
//! same keys. A trace one of whose model calls the store has under another trace is a
//! duplicate of that one: its turns and tool calls are not kept (those already written are
//! taken back), and the `duplicates` table remembers it for the rows that come after. Its
//! model calls the other trace did not have are kept, so the tokens are all there.
//!
//! Which of the two is the duplicate: the one written second, unless the first is an import's
//! (a batch job's) and the second the live route's. An import run while a turn is still going
//! reads only what the agent has written of it so far; the live route's trace, which comes
//! when the turn ends, is the whole turn, and takes the import's model calls under it.

use rusqlite::{params, OptionalExtension, Transaction};

use super::rows::{ModelCall, Row, ToolCall, Turn};

/// Writes `rows` inside `tx`; returns how many were new.
/// `imported`: they are a batch job's.
pub(super) fn rows(tx: &Transaction<'_>, rows: &[Row], imported: bool) -> rusqlite::Result<usize> {
    let mut new = 0;
    for row in rows {
        new += match row {
            Row::Turn(t) if !duplicate(tx, &t.place.trace_id)? => insert_turn(tx, t, imported)?,
            Row::ToolCall(c) if !duplicate(tx, &c.place.trace_id)? => insert_tool_call(tx, c)?,
            Row::Turn(_) | Row::ToolCall(_) => 0,
            Row::ModelCall(m) => {
                let n = insert_model_call(tx, m)?;
                if n == 0 {
                    met_again(tx, m, imported)?;
                }
                n
            }
        };
    }
    Ok(new)
}

/// Whether trace `trace_id` is a duplicate of another.
fn duplicate(tx: &Transaction<'_>, trace_id: &str) -> rusqlite::Result<bool> {
    tx.prepare_cached("SELECT 1 FROM duplicates WHERE trace_id = ?1")?
        .exists([trace_id])
}

/// Model call `m` is in the store already: if under another trace of the same session, one
/// of the two traces is a duplicate of the other (unless either is a duplicate already, taken
/// back): `m`'s, or, when `m` is the live route's and the other an import's, the other.
fn met_again(tx: &Transaction<'_>, m: &ModelCall, imported: bool) -> rusqlite::Result<()> {
    // Only within one session: a session forked from another (Claude Code's `--fork-session`)
    // copies the other's calls, ids and all, into turns of its own.
    let theirs: Option<String> = tx
        .prepare_cached("SELECT trace_id FROM model_calls WHERE key = ?1 AND session = ?2")?
        .query_row([&m.key, &m.place.session], |r| r.get(0))
        .optional()?;
    let ours = &m.place.trace_id;
    let Some(theirs) = theirs.filter(|t| t != ours) else {
        return Ok(());
    };
    if duplicate(tx, ours)? || duplicate(tx, &theirs)? {
        return Ok(());
    }
    let live_over_import = !imported
        && tx
            .prepare_cached("SELECT 1 FROM turns WHERE trace_id = ?1 AND imported = 1")?
            .exists([&theirs])?;
    let (copy, kept) = match live_over_import {
        true => (theirs.as_str(), ours.as_str()),
        false => (ours.as_str(), theirs.as_str()),
    };
    tx.prepare_cached("INSERT INTO duplicates (trace_id, of_trace) VALUES (?1, ?2)")?
        .execute([copy, kept])?;
    tx.prepare_cached("DELETE FROM turns WHERE trace_id = ?1")?
        .execute([copy])?;
    tx.prepare_cached("DELETE FROM tool_calls WHERE trace_id = ?1")?
        .execute([copy])?;
    if live_over_import {
        // The import's model calls go into the live trace, beside the call that met them.
        tx.prepare_cached("UPDATE model_calls SET trace_id = ?1, parent = ?2 WHERE trace_id = ?3")?
            .execute(params![ours, m.place.parent_span_id, theirs])?;
    }
    Ok(())
}

fn insert_turn(
    tx: &rusqlite::Transaction<'_>,
    t: &Turn,
    imported: bool,
) -> rusqlite::Result<usize> {
    let p = &t.place;
    tx.prepare_cached(
        "INSERT OR IGNORE INTO turns (trace_id, span_id, session, agent, repository, branch,
         user, started_ns, ended_ns, number, prompted, continued, parent, imported)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )?
    .execute(params![
        p.trace_id,
        p.span_id,
        p.session,
        p.agent,
        p.repository,
        p.branch,
        p.user,
        p.started_ns,
        p.ended_ns,
        t.number,
        t.prompted,
        t.continued,
        p.parent_span_id,
        imported
    ])
}

fn insert_model_call(tx: &rusqlite::Transaction<'_>, m: &ModelCall) -> rusqlite::Result<usize> {
    let p = &m.place;
    tx.prepare_cached(
        "INSERT OR IGNORE INTO model_calls (key, trace_id, span_id, session, agent, repository,
         branch, user, started_ns, ended_ns, model, provider, input, output, cache_read,
         cache_write, reasoning, cost, parent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
         ?19)",
    )?
    .execute(params![
        m.key,
        p.trace_id,
        p.span_id,
        p.session,
        p.agent,
        p.repository,
        p.branch,
        p.user,
        p.started_ns,
        p.ended_ns,
        m.model,
        m.provider,
        m.input,
        m.output,
        m.cache_read,
        m.cache_write,
        m.reasoning,
        m.cost,
        p.parent_span_id
    ])
}

fn insert_tool_call(tx: &rusqlite::Transaction<'_>, c: &ToolCall) -> rusqlite::Result<usize> {
    let p = &c.place;
    tx.prepare_cached(
        "INSERT OR IGNORE INTO tool_calls (trace_id, span_id, session, agent, repository,
         branch, user, started_ns, ended_ns, name, failed, parent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
        p.trace_id,
        p.span_id,
        p.session,
        p.agent,
        p.repository,
        p.branch,
        p.user,
        p.started_ns,
        p.ended_ns,
        c.name,
        c.failed,
        p.parent_span_id
    ])
}

#[cfg(test)]
mod tests {
    use crate::export::store::rows::{ModelCall, Place, Row, ToolCall, Turn};
    use crate::export::store::Store;

    fn place(trace: &str, span: u64, at: i64) -> Place {
        Place {
            trace_id: trace.repeat(32),
            span_id: format!("{span:016x}"),
            session: "s1".into(),
            agent: "claude-code".into(),
            started_ns: at,
            ended_ns: at + 1,
            ..Place::default()
        }
    }

    /// One turn as a route traces it (under trace `trace`, prompted at `at`): its root, a tool
    /// call and model calls with the agent's `keys`.
    fn turn(trace: &str, at: i64, keys: &[&str]) -> Vec<Row> {
        let mut rows = vec![Row::ToolCall(ToolCall {
            place: place(trace, 2, at + 5),
            name: "Bash".into(),
            failed: false,
        })];
        for (i, key) in keys.iter().enumerate() {
            let place = place(trace, 10 + i as u64, at + 2);
            rows.push(Row::ModelCall(ModelCall::sample(
                place,
                &format!("anthropic:{key}"),
            )));
        }
        rows.push(Row::Turn(Turn {
            place: place(trace, 1, at),
            number: Some(1),
            prompted: true,
            continued: false,
        }));
        rows
    }

    fn store(name: &str) -> (std::path::PathBuf, Store) {
        let dir =
            std::env::temp_dir().join(format!("albedo-otel-insert-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir.join("store.sqlite")).unwrap();
        (dir, store)
    }

    fn held(store: &Store) -> (u64, u64, u64) {
        let h = store.holdings().unwrap();
        (h.turns, h.tool_calls, h.model_calls)
    }

    #[test]
    fn a_turn_traced_twice_under_other_ids_is_kept_once_with_every_model_call() {
        let (dir, mut store) = store("twice");
        // The live route: its rows come as its spans end, the root last.
        store.write(&turn("a", 1_000, &["msg_1", "msg_2"])).unwrap();
        // An import of the same files: another trace (its own time for the prompt), the same
        // calls, and one the live route did not see. In two writes, the turn's root and tool
        // call before the call that tells it is the same turn.
        let import = turn("b", 1_003, &["msg_1", "msg_3"]);
        let (calls, rest): (Vec<Row>, Vec<Row>) = import
            .into_iter()
            .partition(|r| matches!(r, Row::ModelCall(_)));
        store.write(&rest).unwrap();
        store.write(&calls).unwrap();
        assert_eq!(
            held(&store),
            (1, 1, 3),
            "one turn, one tool call, three model calls"
        );
        // Imported again, in one write: nothing more.
        assert_eq!(
            store.write(&turn("b", 1_003, &["msg_1", "msg_3"])).unwrap(),
            0
        );
        assert_eq!(held(&store), (1, 1, 3));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The rows' traces and the trace each model call is under.
    fn traces(store: &Store) -> (Vec<String>, Vec<String>, Vec<(String, String)>) {
        let all = |sql: &str| -> Vec<String> {
            let mut q = store.conn.prepare(sql).unwrap();
            let rows = q.query_map([], |r| r.get(0)).unwrap();
            rows.map(Result::unwrap).collect()
        };
        let mut q = store
            .conn
            .prepare("SELECT key, trace_id FROM model_calls ORDER BY key")
            .unwrap();
        let calls = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        (
            all("SELECT trace_id FROM turns"),
            all("SELECT trace_id FROM tool_calls"),
            calls.map(Result::unwrap).collect(),
        )
    }

    #[test]
    fn a_turn_imported_while_it_went_on_gives_way_to_the_live_routes_whole_turn() {
        let (dir, mut live) = store("mid-turn");
        // The import read the turn half-way: one model call of two, one tool call.
        let mut import = Store::open(&live.path).unwrap().for_batch_job().unwrap();
        import.write(&turn("b", 1_003, &["msg_1"])).unwrap();
        // The turn ends, and the live route's trace of it comes: both calls, and its own tool
        // call and root.
        live.write(&turn("a", 1_000, &["msg_1", "msg_2"])).unwrap();
        let a = "a".repeat(32);
        assert_eq!(
            traces(&live),
            (
                vec![a.clone()],
                vec![a.clone()],
                vec![
                    ("anthropic:msg_1".into(), a.clone()),
                    ("anthropic:msg_2".into(), a.clone())
                ]
            ),
            "the live route's turn, with every model call under it"
        );
        // The import run again later adds nothing, and takes nothing back.
        import
            .write(&turn("b", 1_003, &["msg_1", "msg_2"]))
            .unwrap();
        assert_eq!(held(&live), (1, 1, 2));
        assert_eq!(traces(&live).0, vec![a.clone()]);
        // Two imports of one turn: the second gives way, as before.
        import.write(&turn("c", 9_000, &["msg_9"])).unwrap();
        import.write(&turn("d", 9_001, &["msg_9"])).unwrap();
        assert_eq!(held(&live), (2, 2, 3));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_session_forked_from_another_keeps_its_turn_with_the_calls_it_copied() {
        let (dir, mut store) = store("fork");
        store.write(&turn("a", 1_000, &["msg_1"])).unwrap();
        let mut fork = turn("d", 5_000, &["msg_1", "msg_5"]);
        for row in &mut fork {
            match row {
                Row::Turn(Turn { place, .. })
                | Row::ToolCall(ToolCall { place, .. })
                | Row::ModelCall(ModelCall { place, .. }) => place.session = "s2".into(),
            }
        }
        store.write(&fork).unwrap();
        assert_eq!(
            held(&store),
            (2, 2, 2),
            "its own turn, the copied call once"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_same_trace_written_again_and_other_turns_are_all_kept() {
        let (dir, mut store) = store("again");
        store.write(&turn("a", 1_000, &["msg_1"])).unwrap();
        store.write(&turn("a", 1_000, &["msg_1"])).unwrap();
        store.write(&turn("c", 9_000, &["msg_9"])).unwrap();
        assert_eq!(
            held(&store),
            (2, 2, 2),
            "a replay is the same turn; another turn is its own"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
