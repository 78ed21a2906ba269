//! A daemon restarted mid-session (the old one idled out between turns) resumes each session
//! where the old one left it: the promise, run against every adapter. An agent whose adapter
//! reads no log or transcript (Codex, Gemini, opencode) keeps the memory half trivially: it
//! reads nothing; the calls must still each appear once.

use std::collections::HashSet;

use super::{each_agent, Run};
use crate::assemble::semconv::{GEN_AI_OPERATION_NAME, OP_CHAT, OP_EXECUTE_TOOL};
use crate::assemble::span::Value;
use crate::sources::command_hooks::steps::{Promise, Step};

/// The most a new adapter may read before its resume point, whatever its agent: the suite's
/// bound, not an agent's setting. An adapter that reads a conversation's tail again (with
/// capture on, the messages the next calls were sent) keeps that tail within it, one that
/// checks it resumes at a line's start reads the newline before it, the others read nothing;
/// one that reads more fails here.
const TAIL: u64 = 8 << 20;

/// The output the first turn's call writes to the log: more than [`TAIL`], so that a read
/// from the log's start cannot pass for a tail.
const FILLER: usize = (TAIL as usize) + (4 << 20);

/// Two turns, the daemon restarted between them (the first call's output is many MB of log):
/// the new adapter reads from its resume point on (at most [`TAIL`] before it), each read no
/// more than that tail and what is new, whatever the log's size; each turn has its own
/// calls and model calls, each once.
#[test]
fn a_restarted_daemon_reads_only_what_is_new_in_memory_bounded_by_a_tail() {
    each_agent(Promise::RestartReadsOnlyWhatIsNew, |run: &mut Run| {
        run.steps(&[(0, Step::Prompt("first")), (100, Step::ToolStart("call_1"))]);
        run.filler(FILLER, 200);
        run.steps(&[(300, Step::ToolEnd("call_1")), (500, Step::Stop)]);
        run.tick(60_000);
        let before = run.log.len() as u64;
        let resumed = run.restart();
        run.steps(&[
            (70_000, Step::Prompt("second")),
            (70_100, Step::ToolStart("call_2")),
            (70_300, Step::ToolEnd("call_2")),
            (70_500, Step::Stop),
        ]);
        run.tick(130_000);
        if before > 0 && resumed == 0 {
            return Err(format!(
                "the adapter reported no resume point in a {before}-byte log it had read"
            ));
        }
        let new = run.log.len() as u64 - resumed;
        for &(offset, got) in &run.reads {
            if offset + TAIL < resumed {
                return Err(format!(
                    "the new adapter read from byte {offset}, more than {TAIL} before its resume point {resumed}"
                ));
            }
            if got as u64 > TAIL + new {
                return Err(format!(
                    "the new adapter read {got} bytes at once: more than the tail ({TAIL}) and what is new ({new})"
                ));
            }
        }
        each_call_once(run)
    });
}

/// Each turn has its one tool call; no model call or tool call is there twice, and none
/// starts before its turn (a re-read of the first turn's would, in the second).
fn each_call_once(run: &Run) -> Result<(), String> {
    let spans = run.spans();
    let op = |s: &crate::assemble::Span| {
        s.attr(GEN_AI_OPERATION_NAME)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    roots.sort_by_key(|r| r.start_ns);
    let mut tools = Vec::new();
    let mut seen = HashSet::new();
    for root in &roots {
        let mine: Vec<_> = spans
            .iter()
            .filter(|s| s.trace_id == root.trace_id && s.parent_span_id.is_some())
            .collect();
        tools.push(
            mine.iter()
                .filter(|s| op(s).as_deref() == Some(OP_EXECUTE_TOOL))
                .count(),
        );
        for s in mine {
            if s.start_ns < root.start_ns {
                return Err(format!("`{}` starts before its turn", s.name));
            }
            let kind = op(s);
            if matches!(kind.as_deref(), Some(OP_CHAT | OP_EXECUTE_TOOL))
                && !seen.insert((kind, s.start_ns, s.end_ns))
            {
                return Err(format!("`{}` is there twice", s.name));
            }
        }
    }
    if tools != [1, 1] {
        return Err(format!("tool calls per turn {tools:?}, not [1, 1]"));
    }
    Ok(())
}
