//! Each promise, one test, run against every agent's adapter.

use super::{each_agent, turns, Run};
use crate::assemble::semconv::{ALBEDO_TURN_REASON, ALBEDO_UNFINISHED, OP_EXECUTE_TOOL};
use crate::assemble::span::{Span, Value};
use crate::sources::command_hooks::steps::{Promise, Step, SESSION, T0};

const MS: u64 = 1_000_000;

fn unfinished(span: &Span) -> bool {
    span.attr(ALBEDO_UNFINISHED) == Some(&Value::Bool(true))
}

/// A turn that did not end as the agent ends one: unfinished, or ended as interrupted.
fn cut_short(span: &Span) -> bool {
    unfinished(span) || span.attr(ALBEDO_TURN_REASON).and_then(Value::as_str) == Some("interrupted")
}

/// No span of a trace starts before its turn began.
fn inside(turns: &[(&Span, Vec<&Span>)]) -> Result<(), String> {
    for (root, tools) in turns {
        if let Some(t) = tools.iter().find(|t| t.start_ns < root.start_ns) {
            return Err(format!("{} starts before its turn", t.name));
        }
    }
    Ok(())
}

/// A turn the user cut short (Esc sends no hook) keeps its own calls, and the next turn gets
/// only its own.
#[test]
fn an_interrupted_turn_keeps_its_calls_and_the_next_gets_only_its_own() {
    each_agent(Promise::InterruptedTurnKeepsItsCalls, |run: &mut Run| {
        run.steps(&[
            (0, Step::Prompt("first")),
            (100, Step::ToolStart("call_1")),
            (500, Step::ToolEnd("call_1")),
            (2_000, Step::Prompt("second")),
            (2_100, Step::ToolStart("call_2")),
            (2_400, Step::ToolEnd("call_2")),
            (2_500, Step::Stop),
        ]);
        run.tick(60_000);
        let spans = run.spans();
        let turns = turns(&spans, OP_EXECUTE_TOOL);
        let calls: Vec<usize> = turns.iter().map(|(_, t)| t.len()).collect();
        if calls != [1, 1] {
            return Err(format!("calls per turn {calls:?}, not [1, 1]"));
        }
        if !cut_short(turns[0].0) || cut_short(turns[1].0) {
            return Err("the cut turn, and only it, is marked cut short".into());
        }
        inside(&turns)
    });
}

/// An agent killed mid-call: its open turn goes out, unfinished, with the call in it, which
/// ends when the agent was last seen alive, not at its own start.
#[test]
fn a_killed_agents_turn_keeps_its_running_call_until_it_was_last_seen() {
    each_agent(Promise::KilledTurnKeepsItsCalls, |run: &mut Run| {
        run.steps(&[(0, Step::Prompt("build")), (100, Step::ToolStart("call_1"))]);
        run.tick(3_000);
        run.abandon(9_000);
        let spans = run.spans();
        let turns = turns(&spans, OP_EXECUTE_TOOL);
        let [(root, tools)] = turns.as_slice() else {
            return Err(format!("{} turns, not 1", turns.len()));
        };
        let [call] = tools.as_slice() else {
            return Err(format!("{} calls, not 1", tools.len()));
        };
        if !unfinished(root) || !unfinished(call) {
            return Err("the turn and its call are unfinished".into());
        }
        let last_seen = (T0 + 9_000) * MS;
        if call.end_ns != last_seen || root.end_ns != last_seen {
            return Err(format!(
                "the call ends at +{} ms and the turn at +{} ms, not when the agent was last seen (+9000 ms)",
                (call.end_ns / MS).saturating_sub(T0),
                (root.end_ns / MS).saturating_sub(T0)
            ));
        }
        Ok(())
    });
}

/// A stop that another hook blocked: the agent goes on, and what it does then stays in the
/// same turn.
#[test]
fn a_blocked_stop_keeps_its_continuation_in_the_same_turn() {
    each_agent(Promise::BlockedStopStaysOneTurn, |run: &mut Run| {
        run.steps(&[
            (0, Step::Prompt("fix it")),
            (100, Step::ToolStart("call_1")),
            (300, Step::ToolEnd("call_1")),
            (500, Step::Stop),
            (600, Step::ToolStart("call_2")),
        ]);
        // The continuation runs on past every grace.
        run.tick(30_000);
        run.steps(&[(40_000, Step::ToolEnd("call_2")), (40_100, Step::Stop)]);
        run.tick(90_000);
        let spans = run.spans();
        let turns = turns(&spans, OP_EXECUTE_TOOL);
        let calls: Vec<usize> = turns.iter().map(|(_, t)| t.len()).collect();
        if calls != [2] {
            return Err(format!("calls per turn {calls:?}, not [2]"));
        }
        if unfinished(turns[0].0) {
            return Err("the turn is marked unfinished".into());
        }
        inside(&turns)
    });
}

/// A session whose agent is gone between turns is retired (the daemon abandons it): its adapter
/// keeps nothing of it, so a daemon that never idles does not grow with the sessions it saw.
#[test]
fn a_retired_session_is_forgotten() {
    each_agent(Promise::RetiredSessionIsForgotten, |run: &mut Run| {
        run.steps(&[
            (0, Step::Prompt("once")),
            (100, Step::ToolStart("call_1")),
            (300, Step::ToolEnd("call_1")),
            (500, Step::Stop),
        ]);
        run.tick(60_000);
        if run.kept() == 0 {
            return Err("the adapter kept nothing of a live session".into());
        }
        run.abandon(70_000);
        match run.kept() {
            0 => Ok(()),
            n => Err(format!("{n} session(s) kept after the session was retired")),
        }
    });
}

/// A payload that names no session is no session's: the engine leaves it out, for every agent
/// (each agent's prompt, with every value that names the session emptied).
#[test]
fn a_payload_that_names_no_session_makes_nothing() {
    fn blank(v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::String(s) if s == SESSION => Value::String(String::new()),
            Value::Array(a) => Value::Array(a.into_iter().map(blank).collect()),
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, blank(v))).collect()),
            other => other,
        }
    }
    let mut failed = Vec::new();
    for script in super::scripts() {
        let name = script.spec().name;
        let mut run = Run::new(script);
        let payloads = run.script.step(Step::Prompt("go"), T0, &mut run.log);
        run.feed(payloads.into_iter().map(blank).collect(), T0);
        run.tick(60_000);
        if !run.records.is_empty() {
            failed.push(format!("{name}: {:?}", run.records));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
