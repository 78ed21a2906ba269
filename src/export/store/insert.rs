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
//!
//! A turn with no model call the two share (one cut short before any answer, one whose calls
//! carry no id) is known by its time instead: a turn of a session's own (not a sub-agent's)
//! from an import and one from the live route that overlap for at least half the shorter are
//! one turn, as a session runs its turns one after another.

use rusqlite::{params, OptionalExtension, Transaction};

use super::rows::{ModelCall, Row, ToolCall, Turn};
use super::usage::{self, Sums};

/// Writes `rows` inside `tx`; returns how many were new.
/// `imported`: they are a batch job's.
pub(super) fn rows(tx: &Transaction<'_>, rows: &[Row], imported: bool) -> rusqlite::Result<usize> {
    let mut new = 0;
    // The new calls' usage, written at the end, and before any call is taken back (see
    // `copy_of`).
    let mut sums = Sums::default();
    for row in rows {
        new += match row {
            Row::Turn(t) if !duplicate(tx, &t.place.trace_id)? => {
                match traced_apart(tx, t, imported)? {
                    Some(theirs) if imported => {
                        let copy = &t.place.trace_id;
                        copy_of(tx, &mut sums, &t.place.session, copy, &theirs, None)?;
                        0
                    }
                    Some(theirs) => {
                        let ours = (t.place.trace_id.as_str(), Some(t.place.span_id.as_str()));
                        let session = &t.place.session;
                        copy_of(tx, &mut sums, session, &theirs, ours.0, Some(ours.1))?;
                        insert_turn(tx, t, imported)?
                    }
                    None => insert_turn(tx, t, imported)?,
                }
            }
            Row::ToolCall(c) if !duplicate(tx, &c.place.trace_id)? => insert_tool_call(tx, c)?,
            Row::Turn(_) | Row::ToolCall(_) => 0,
            // Known by no id of its own, in a trace that is another's copy: that trace's call.
            Row::ModelCall(m) if unkeyed(m) && duplicate(tx, &m.place.trace_id)? => 0,
            Row::ModelCall(m) => {
                let n = insert_model_call(tx, m, imported)?;
                match n {
                    0 => met_again(tx, m, imported, &mut sums)?,
                    _ => sums.add(m),
                }
                n
            }
        };
    }
    sums.write(tx)?;
    Ok(new)
}

/// Whether model call `m` is known by its span, having no id of its own (see [`ModelCall::key`]).
fn unkeyed(m: &ModelCall) -> bool {
    m.key
        .strip_prefix(m.place.trace_id.as_str())
        .and_then(|rest| rest.strip_prefix(':'))
        == Some(m.place.span_id.as_str())
}

/// Whether trace `trace_id` is a duplicate of another.
fn duplicate(tx: &Transaction<'_>, trace_id: &str) -> rusqlite::Result<bool> {
    tx.prepare_cached("SELECT 1 FROM duplicates WHERE trace_id = ?1")?
        .exists([trace_id])
}

/// Model call `m` is in the store already: if under another trace of the same session, one
/// of the two traces is a duplicate of the other (unless either is a duplicate already, taken
/// back): `m`'s, or, when `m` is the live route's and the other an import's, the other.
fn met_again(
    tx: &Transaction<'_>,
    m: &ModelCall,
    imported: bool,
    sums: &mut Sums,
) -> rusqlite::Result<()> {
    // Only within one session: a session forked from another (Claude Code's `--fork-session`)
    // copies the other's calls, ids and all, into turns of its own.
    let theirs: Option<(String, bool)> = tx
        .prepare_cached(
            "SELECT trace_id, imported FROM model_calls WHERE key = ?1 AND session = ?2",
        )?
        .query_row([&m.key, &m.place.session], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let ours = &m.place.trace_id;
    let Some((theirs, their_import)) = theirs.filter(|(t, _)| t != ours) else {
        return Ok(());
    };
    if duplicate(tx, ours)? || duplicate(tx, &theirs)? {
        return Ok(());
    }
    // Known by the call, not by the turn: an import commits a turn's calls and its root in
    // two transactions at times, and the live route's turn can come between.
    let live_over_import = !imported && their_import;
    let session = &m.place.session;
    match live_over_import {
        true => {
            let parent = Some(m.place.parent_span_id.as_deref());
            copy_of(tx, sums, session, &theirs, ours, parent)
        }
        false => copy_of(tx, sums, session, ours, &theirs, None),
    }
}

/// The trace of the same turn, written by the other route, where `t` is a session's own turn
/// (see the module's docs); `imported`: `t` is an import's.
fn traced_apart(
    tx: &Transaction<'_>,
    t: &Turn,
    imported: bool,
) -> rusqlite::Result<Option<String>> {
    let p = &t.place;
    if p.parent_span_id.is_some() || t.continued {
        return Ok(None);
    }
    let mut q = tx.prepare_cached(
        "SELECT trace_id, started_ns, ended_ns FROM turns
         WHERE session = ?1 AND parent IS NULL AND continued = 0 AND imported != ?2
           AND trace_id != ?3 AND started_ns <= ?5 AND ended_ns >= ?4",
    )?;
    let mut rows = q.query(params![
        p.session,
        imported,
        p.trace_id,
        p.started_ns,
        p.ended_ns
    ])?;
    while let Some(r) = rows.next()? {
        let (start, end): (i64, i64) = (r.get(1)?, r.get(2)?);
        // A turn read before anything of it was answered starts and ends at its prompt: it is
        // the same turn if that instant is inside the other.
        let overlap = end.min(p.ended_ns) - start.max(p.started_ns);
        let shorter = (end - start).min(p.ended_ns - p.started_ns);
        if overlap >= 0 && overlap.saturating_mul(2) >= shorter {
            return Ok(Some(r.get(0)?));
        }
    }
    Ok(None)
}

/// Trace `copy` is a duplicate of `kept`, both of `session` (every row of a trace carries the
/// session at the top of its chain): its turns and tool calls are taken back, and what comes
/// of it later is not kept. `calls_to`: its model calls go into `kept`, nested under the
/// span given (the copy is an import's, `kept` the live route's whole turn); its model calls
/// known by no id of their own (the same calls, read again) go either way, taken out of their
/// usage rows: `sums`, the transaction's new calls not yet in them, are written first.
fn copy_of(
    tx: &Transaction<'_>,
    sums: &mut Sums,
    session: &str,
    copy: &str,
    kept: &str,
    calls_to: Option<Option<&str>>,
) -> rusqlite::Result<()> {
    sums.write(tx)?;
    tx.prepare_cached("INSERT INTO duplicates (trace_id, of_trace) VALUES (?1, ?2)")?
        .execute([copy, kept])?;
    tx.prepare_cached("DELETE FROM turns WHERE trace_id = ?1")?
        .execute([copy])?;
    tx.prepare_cached("DELETE FROM tool_calls WHERE trace_id = ?1")?
        .execute([copy])?;
    // The two traces are of one session: its calls are found by it (an index), not by a
    // scan of every call.
    usage::delete_calls(
        tx,
        "session = ?1 AND trace_id = ?2 AND key = trace_id || ':' || span_id",
        &[&session, &copy],
    )?;
    if let Some(parent) = calls_to {
        tx.prepare_cached(
            "UPDATE model_calls SET trace_id = ?1, parent = ?2, imported = 0
             WHERE session = ?3 AND trace_id = ?4",
        )?
        .execute(params![kept, parent, session, copy])?;
    }
    Ok(())
}

/// Writes turn `t`. Met again under the same ids (the two routes agreed to the millisecond,
/// or a replay): the live route's word that it is its turn, and the later end, are kept.
fn insert_turn(
    tx: &rusqlite::Transaction<'_>,
    t: &Turn,
    imported: bool,
) -> rusqlite::Result<usize> {
    let p = &t.place;
    tx.prepare_cached(
        "INSERT INTO turns (trace_id, span_id, session, agent, repository, branch,
         user, started_ns, ended_ns, number, prompted, continued, parent, imported)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (trace_id, span_id) DO UPDATE
           SET imported = min(imported, excluded.imported),
               ended_ns = max(ended_ns, excluded.ended_ns)
           WHERE excluded.imported < turns.imported OR excluded.ended_ns > turns.ended_ns",
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

fn insert_model_call(
    tx: &rusqlite::Transaction<'_>,
    m: &ModelCall,
    imported: bool,
) -> rusqlite::Result<usize> {
    let p = &m.place;
    tx.prepare_cached(
        "INSERT OR IGNORE INTO model_calls (key, trace_id, span_id, session, agent, repository,
         branch, user, started_ns, ended_ns, model, provider, input, output, cache_read,
         cache_write, reasoning, cost, parent, imported)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
         ?19, ?20)",
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
        p.parent_span_id,
        imported
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
pub(super) mod tests;
