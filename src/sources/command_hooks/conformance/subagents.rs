//! The sub-agent promises, one test each, run against every agent's adapter: two sub-agents
//! started side by side from one turn (the case that nested one inside the other in Gemini's,
//! issue 27's M2).

use super::{each_agent, Run};
use crate::assemble::semconv::{GEN_AI_OPERATION_NAME, OP_EXECUTE_TOOL};
use crate::assemble::span::{Span, Value};
use crate::sources::command_hooks::steps::{Promise, Step, Sub, T0};

const MS: u64 = 1_000_000;

/// One turn starts sub-agents `a` (call `call_a`) and `b` (call `call_b`) side by side; each
/// runs one shell call, their calls overlapping; `b` ends first.
fn side_by_side(run: &mut Run) -> Result<Vec<Span>, String> {
    let (a, b) = (("call_a", "agent_a"), ("call_b", "agent_b"));
    run.steps(&[(0, Step::Prompt("two at once"))]);
    run.sub_agents(&[
        (
            100,
            Sub::Spawn {
                call: a.0,
                agent: a.1,
            },
        ),
        (
            110,
            Sub::Spawn {
                call: b.0,
                agent: b.1,
            },
        ),
        (
            120,
            Sub::Started {
                call: a.0,
                agent: a.1,
            },
        ),
        (
            130,
            Sub::Started {
                call: b.0,
                agent: b.1,
            },
        ),
        (
            200,
            Sub::ToolStart {
                agent: a.1,
                id: "sub_a1",
            },
        ),
        (
            210,
            Sub::ToolStart {
                agent: b.1,
                id: "sub_b1",
            },
        ),
        (
            300,
            Sub::ToolEnd {
                agent: b.1,
                id: "sub_b1",
            },
        ),
        (
            400,
            Sub::ToolEnd {
                agent: a.1,
                id: "sub_a1",
            },
        ),
        (1_000, Sub::Stopped { agent: b.1 }),
        (
            1_010,
            Sub::Returned {
                call: b.0,
                agent: b.1,
            },
        ),
        (2_000, Sub::Stopped { agent: a.1 }),
        (
            2_010,
            Sub::Returned {
                call: a.0,
                agent: a.1,
            },
        ),
    ])?;
    run.steps(&[(3_000, Step::Stop)]);
    run.tick(60_000);
    Ok(run.spans())
}

fn is_tool(s: &Span) -> bool {
    s.attr(GEN_AI_OPERATION_NAME).and_then(Value::as_str) == Some(OP_EXECUTE_TOOL)
}

fn children<'a>(spans: &'a [Span], of: &Span) -> Vec<&'a Span> {
    let mut c: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == Some(of.span_id))
        .collect();
    c.sort_by_key(|s| s.start_ns);
    c
}

/// The turn's calls, first started first, each with the one sub-agent span under it.
fn calls_and_agents(spans: &[Span]) -> Result<Vec<(&Span, &Span)>, String> {
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    let [root] = roots.as_slice() else {
        return Err(format!("{} turns, not 1", roots.len()));
    };
    let calls: Vec<&Span> = children(spans, root)
        .into_iter()
        .filter(|s| is_tool(s))
        .collect();
    if calls.len() != 2 {
        return Err(format!("the turn shows {} calls, not 2", calls.len()));
    }
    calls
        .into_iter()
        .map(|call| match children(spans, call).as_slice() {
            [agent] => Ok((call, *agent)),
            under => Err(format!(
                "call `{}` at +{} ms has {} spans under it, not its one sub-agent",
                call.name,
                at(call.start_ns),
                under.len()
            )),
        })
        .collect()
}

/// Milliseconds after [`T0`].
fn at(ns: u64) -> u64 {
    (ns / MS).saturating_sub(T0)
}

/// Each sub-agent's turn is under its own call, the parent shows both calls, and each call
/// ends when it returned (the first started, `a`, at +2010 ms; `b` at +1010 ms), its
/// sub-agent inside it.
#[test]
fn side_by_side_sub_agents_each_nest_under_their_own_call_with_its_own_end() {
    each_agent(Promise::SubagentsSideBySide, |run: &mut Run| {
        let spans = side_by_side(run)?;
        let pairs = calls_and_agents(&spans)?;
        for ((call, agent), returned) in pairs.iter().zip([2_010, 1_010]) {
            if at(call.end_ns) != returned {
                return Err(format!(
                    "the call started at +{} ms ends at +{} ms, not when it returned (+{returned} ms)",
                    at(call.start_ns),
                    at(call.end_ns)
                ));
            }
            if agent.end_ns > call.end_ns || agent.start_ns < call.start_ns {
                return Err(format!(
                    "the sub-agent (+{}..+{} ms) is not inside its call (+{}..+{} ms)",
                    at(agent.start_ns),
                    at(agent.end_ns),
                    at(call.start_ns),
                    at(call.end_ns)
                ));
            }
        }
        Ok(())
    });
}

/// The shell call each sub-agent made is under that sub-agent: `a`'s ran +200..+400 ms,
/// `b`'s +210..+300 ms.
#[test]
fn side_by_side_sub_agents_each_keep_their_own_calls() {
    each_agent(Promise::SubagentCallsStayTheirs, |run: &mut Run| {
        let spans = side_by_side(run)?;
        for ((_, agent), ran) in calls_and_agents(&spans)?
            .iter()
            .zip([(200, 400), (210, 300)])
        {
            let mine: Vec<(u64, u64)> = descendants(&spans, agent)
                .into_iter()
                .filter(|s| is_tool(s))
                .map(|s| (at(s.start_ns), at(s.end_ns)))
                .collect();
            if mine != [ran] {
                return Err(format!(
                    "the sub-agent started at +{} ms has calls {mine:?}, not [{ran:?}] (ms)",
                    at(agent.start_ns)
                ));
            }
        }
        Ok(())
    });
}

fn descendants<'a>(spans: &'a [Span], of: &Span) -> Vec<&'a Span> {
    let mut out = Vec::new();
    let mut todo = vec![of];
    while let Some(s) = todo.pop() {
        for c in children(spans, s) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}
