//! What the store keeps of a turn met twice, by its model calls' keys and by its time.

use crate::export::store::report::Tally;
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
pub(in crate::export::store) fn turn(trace: &str, at: i64, keys: &[&str]) -> Vec<Row> {
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

pub(in crate::export::store) fn store(name: &str) -> (std::path::PathBuf, Store) {
    let dir =
        std::env::temp_dir().join(format!("albedo-otel-insert-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Store::open(&dir.join("store.sqlite")).unwrap();
    (dir, store)
}

/// Turns, tool calls and model calls held; and the usage rows add up as the calls kept do
/// (a call taken back is taken out of them, the writer having added it first).
fn held(store: &Store) -> (u64, u64, u64) {
    let h = store.holdings().unwrap();
    let tally = |t: &[Tally]| {
        t.iter().fold((0, 0, 0), |(n, i, o), t| {
            (n + t.calls, i + t.tokens.input, o + t.tokens.output)
        })
    };
    let each: Vec<Tally> = (store.model_calls(0, i64::MAX).unwrap().iter())
        .map(Tally::from)
        .collect();
    assert_eq!(tally(&store.tallies(0, i64::MAX).unwrap()), tally(&each));
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

/// What [`traces`] gives of the whole turn `turn("a", _, &["msg_1", "msg_2"])` wrote under
/// trace `a`: its root, its tool call, and both model calls under it.
fn whole_turn(a: &str) -> (Vec<String>, Vec<String>, Vec<(String, String)>) {
    let calls = ["anthropic:msg_1", "anthropic:msg_2"].map(|k| (k.to_string(), a.to_string()));
    (vec![a.to_string()], vec![a.to_string()], calls.to_vec())
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
        whole_turn(&a),
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
fn a_live_turn_that_comes_between_an_imports_calls_and_its_root_is_the_one_kept() {
    let (dir, mut live) = store("between");
    let mut import = Store::open(&live.path).unwrap().for_batch_job().unwrap();
    // The import's transaction ends after the turn's calls, before its root.
    let (root, calls): (Vec<Row>, Vec<Row>) = turn("b", 1_003, &["msg_1"])
        .into_iter()
        .partition(|r| matches!(r, Row::Turn(_)));
    import.write(&calls).unwrap();
    live.write(&turn("a", 1_000, &["msg_1", "msg_2"])).unwrap();
    import.write(&root).unwrap();
    let a = "a".repeat(32);
    assert_eq!(
        traces(&live),
        whole_turn(&a),
        "the live route's whole turn, not the import's half"
    );
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

/// A session's own turn from `start` to `end` (ns) under trace `trace`, with one tool call
/// and model calls known by no id (`unkeyed` of them): what a route makes of a turn cut short,
/// or of an agent whose calls carry none.
fn timed(trace: &str, start: i64, end: i64, unkeyed: u64) -> Vec<Row> {
    let at = |span: u64, from: i64, to: i64| Place {
        started_ns: from,
        ended_ns: to,
        ..place(trace, span, 0)
    };
    let mut rows = vec![Row::ToolCall(ToolCall {
        place: at(2, start + 10, start + 20),
        name: "Bash".into(),
        failed: false,
    })];
    for i in 0..unkeyed {
        let p = at(10 + i, start + 1, start + 5);
        let key = format!("{}:{}", p.trace_id, p.span_id);
        rows.push(Row::ModelCall(ModelCall::sample(p, &key)));
    }
    rows.push(Row::Turn(Turn {
        place: at(1, start, end),
        number: Some(1),
        prompted: true,
        continued: false,
    }));
    rows
}

const S: i64 = 1_000_000_000;

#[test]
fn a_turn_with_no_call_the_two_share_is_kept_once_by_its_time() {
    let (dir, mut live) = store("by-time");
    let mut import = Store::open(&live.path).unwrap().for_batch_job().unwrap();
    // The live route's, then an import's of the same turn (its prompt 3 ms later, its end
    // 10 ms sooner): one turn, one tool call, the unkeyed call once.
    live.write(&timed("a", 10 * S, 40 * S, 1)).unwrap();
    import
        .write(&timed("b", 10 * S + 3_000_000, 40 * S - 10_000_000, 1))
        .unwrap();
    assert_eq!(held(&live), (1, 1, 1));
    assert_eq!(traces(&live).0, vec!["a".repeat(32)]);
    // An import first (a turn still going), then the live route's: the live route's stays.
    import.write(&timed("c", 100 * S, 110 * S, 1)).unwrap();
    live.write(&timed("d", 100 * S - 2_000_000, 130 * S, 1))
        .unwrap();
    assert_eq!(held(&live), (2, 2, 2));
    assert!(traces(&live).0.contains(&"d".repeat(32)));
    // The next turn, begun just after, is a turn of its own; so is a sub-agent's turn, which
    // runs inside its parent's.
    import.write(&timed("e", 41 * S, 60 * S, 0)).unwrap();
    let mut sub = timed("f", 11 * S, 30 * S, 0);
    if let Some(Row::Turn(t)) = sub.last_mut() {
        t.place.parent_span_id = Some("00000000000000aa".into());
    }
    import.write(&sub).unwrap();
    assert_eq!(held(&live).0, 4);
    // Imported again: nothing more.
    import
        .write(&timed("b", 10 * S + 3_000_000, 40 * S - 10_000_000, 1))
        .unwrap();
    import.write(&timed("c", 100 * S, 110 * S, 1)).unwrap();
    assert_eq!(held(&live), (4, 4, 2));
    // A live turn cut short before any answer, in a quarter hour of its own, and an import's
    // of it with its call: the call is taken back in the write that brought it, and out of
    // the usage the writer had added it to.
    live.write(&timed("g", 5_000 * S, 5_010 * S, 0)).unwrap();
    import.write(&timed("h", 5_000 * S, 5_009 * S, 1)).unwrap();
    assert_eq!(held(&live), (5, 5, 2));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_turn_read_before_its_first_answer_and_one_traced_under_the_same_ids_are_kept_once() {
    let (dir, mut live) = store("point");
    let mut import = Store::open(&live.path).unwrap().for_batch_job().unwrap();
    // An import read the prompt and nothing after: its turn begins and ends there.
    let mut point = timed("p", 10 * S + 4_000_000, 10 * S + 4_000_000, 0);
    point.retain(|r| matches!(r, Row::Turn(_)));
    import.write(&point).unwrap();
    live.write(&timed("q", 10 * S, 30 * S, 0)).unwrap();
    assert_eq!(held(&live), (1, 1, 0));
    assert_eq!(traces(&live).0, vec!["q".repeat(32)]);
    // The two routes agreed to the millisecond: the same ids. The import's row, written
    // first and cut short, becomes the live route's, with its end.
    import.write(&timed("r", 50 * S, 55 * S, 0)).unwrap();
    live.write(&timed("r", 50 * S, 70 * S, 0)).unwrap();
    assert_eq!(held(&live), (2, 2, 0));
    let (ended, imported): (i64, bool) = live
        .conn
        .query_row(
            "SELECT ended_ns, imported FROM turns WHERE trace_id = ?1",
            ["r".repeat(32)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((ended, imported), (70 * S, false));
    // Written again by either, nothing changes.
    assert_eq!(import.write(&timed("r", 50 * S, 55 * S, 0)).unwrap(), 0);
    assert_eq!(live.write(&timed("r", 50 * S, 70 * S, 0)).unwrap(), 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_store_written_before_calls_were_marked_knows_the_calls_an_import_wrote() {
    let (dir, store) = store("calls-marked");
    let path = store.path.clone();
    drop(store);
    let mut import = Store::open(&path).unwrap().for_batch_job().unwrap();
    import.write(&turn("b", 1_003, &["msg_1"])).unwrap();
    drop(import);
    // As a binary from before left it: its turns marked, its calls not.
    let old = rusqlite::Connection::open(&path).unwrap();
    old.execute_batch("ALTER TABLE model_calls DROP COLUMN imported;")
        .unwrap();
    drop(old);
    let mut live = Store::open(&path).unwrap();
    live.write(&turn("a", 1_000, &["msg_1", "msg_2"])).unwrap();
    assert_eq!(
        traces(&live).0,
        vec!["a".repeat(32)],
        "the live route's turn, over the import's"
    );
    let _ = std::fs::remove_dir_all(dir);
}
