//! The promise that nothing an agent does after its turn went out is lost (issue 37: a
//! verifier's `Stop` hook blocked Copilot's stop seconds after the turn was exported, and the
//! continuation's model and tool calls went into no trace): the continuation goes into that
//! turn's trace, under its root, at its own times, however late the block came.

use super::{each_agent, Run};
use crate::assemble::semconv::{GEN_AI_OPERATION_NAME, OP_CHAT, OP_EXECUTE_TOOL};
use crate::assemble::span::{Span, Value};
use crate::sources::command_hooks::steps::{Model, Promise, Step, T0};

const MS: u64 = 1_000_000;

/// How long the blocking hook (a verifier running the tests) took to answer: far past every
/// grace, so the turn went out before the agent went on.
const BLOCKED_FOR: u64 = 30_000;

/// Whether `span` hangs, through its parents, under `root`.
fn under(span: &Span, root: &Span, spans: &[Span]) -> bool {
    let mut at = span;
    // A tree is shallow; the bound only stops a loop.
    for _ in 0..64 {
        let Some(p) = at.parent_span_id else {
            return false;
        };
        if p == root.span_id {
            return true;
        }
        match spans
            .iter()
            .find(|s| s.trace_id == at.trace_id && s.span_id == p)
        {
            Some(s) => at = s,
            None => return false,
        }
    }
    false
}

/// The spans, one a line: name, times after [`T0`], and whether each is a root.
fn listing(spans: &[Span]) -> String {
    let at = |ns: u64| (ns / MS).saturating_sub(T0);
    spans
        .iter()
        .map(|s| {
            let root = if s.parent_span_id.is_none() {
                " (root)"
            } else {
                ""
            };
            format!(
                "  {} +{}..+{} ms{root}",
                s.name,
                at(s.start_ns),
                at(s.end_ns)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn op(span: &Span) -> Option<&str> {
    span.attr(GEN_AI_OPERATION_NAME).and_then(Value::as_str)
}

/// A stop that another hook blocked only once the turn went out: the agent goes on (a model
/// call, a tool call, another model call) and stops again, and all of it is in the turn's
/// trace, under its root, at the times it happened.
#[test]
fn a_continuation_after_the_turn_went_out_goes_into_its_trace() {
    each_agent(Promise::ContinuationAfterExportKept, |run| {
        continued(run, false)
    });
}

/// The same, the daemon restarted while the blocking hook ran (the old one idled out once the
/// turn went out, past `ALBEDO_OTEL_IDLE_EXIT`): the new one goes on from what the old one
/// saved, and the continuation is in the turn's trace all the same.
#[test]
fn a_continuation_after_a_daemon_restart_goes_into_its_trace() {
    each_agent(Promise::ContinuationAfterExportKept, |run| {
        continued(run, true)
    });
}

/// One turn, exported; the blocked stop's continuation (after a daemon restart if
/// `restarted`); then the checks.
fn continued(run: &mut Run, restarted: bool) -> Result<(), String> {
    run.steps(&[
        (0, Step::Prompt("fix it")),
        (100, Step::ToolStart("call_1")),
        (300, Step::ToolEnd("call_1")),
        (500, Step::Stop),
    ]);
    // Past every grace: the turn is exported while the blocking hook still runs.
    run.tick(20_000);
    if restarted {
        run.restart();
    }
    let on = 500 + BLOCKED_FOR;
    // An agent whose hooks say nothing of model calls (Cursor) goes on with a tool call.
    let models = run
        .script
        .cannot(Promise::InterruptedTurnKeepsItsModelCalls)
        .is_none();
    if models {
        run.models(&[
            (on + 100, Model::Asked("m1")),
            (on + 400, Model::Answered("m1")),
        ])?;
    }
    run.steps(&[
        (on + 500, Step::ToolStart("call_2")),
        (on + 900, Step::ToolEnd("call_2")),
    ]);
    if models {
        run.models(&[
            (on + 1_000, Model::Asked("m2")),
            (on + 1_400, Model::Answered("m2")),
        ])?;
    }
    run.steps(&[(on + 1_500, Step::Stop)]);
    run.tick(on + 60_000);
    let spans = run.spans();
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    let [root] = roots.as_slice() else {
        return Err(format!(
            "{} turns, not 1:\n{}",
            roots.len(),
            listing(&spans)
        ));
    };
    if let Some(s) = spans
        .iter()
        .find(|s| s.span_id != root.span_id && !under(s, root, &spans))
    {
        return Err(format!("{} is not under the turn's root", s.name));
    }
    // The continuation's call, at its own times.
    let (from, to) = ((T0 + on + 500) * MS, (T0 + on + 900) * MS);
    let calls: Vec<&Span> = spans
        .iter()
        .filter(|s| op(s) == Some(OP_EXECUTE_TOOL) && s.start_ns >= (T0 + on) * MS)
        .collect();
    if !matches!(calls.as_slice(), [c] if (c.start_ns, c.end_ns) == (from, to)) {
        return Err(format!(
            "the continuation has not its one call, +{} ms to +{}:\n{}",
            on + 500,
            on + 900,
            listing(&spans)
        ));
    }
    // Its model calls, each ending when it was answered (some agents cannot say when one
    // was sent).
    let answered = [on + 400, on + 1_400].map(|ms| (T0 + ms) * MS);
    let chats = answered.map(|end| {
        spans
            .iter()
            .any(|s| op(s) == Some(OP_CHAT) && s.end_ns == end)
    });
    if models && chats != [true, true] {
        return Err(format!(
            "the continuation has not its model calls, answered at +{} and +{} ms:\n{}",
            on + 400,
            on + 1_400,
            listing(&spans)
        ));
    }
    Ok(())
}
