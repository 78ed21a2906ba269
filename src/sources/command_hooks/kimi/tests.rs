//! Kimi Code's adapter on a session recorded from the real CLI (2.1.0, `tests/sources/command_hooks/agents/kimi.rs`'s
//! three turns: a one-second shell call, one a hook denied, a sub-agent that runs the shell
//! call), its hooks' payloads as journaled and its two `wire.jsonl` files, trimmed to the
//! lines the adapter reads: read as the files grew, and all at once by a daemon that started
//! late; both must give the same trace.

use super::*;
use crate::assemble::semconv::{GEN_AI_OPERATION_NAME, OP_CHAT, OP_EXECUTE_TOOL};
use crate::assemble::span::Value;
use crate::assemble::Span;
use crate::sources::command_hooks::engine::AgentRules;

const HOOKS: &str = include_str!("recorded/hooks.jsonl");
const MAIN: &str = include_str!("recorded/main.wire.jsonl");
const SUB: &str = include_str!("recorded/agent-0.wire.jsonl");
const SESSION: &str = "session_07019dbe-0b3c-4761-a9a9-591b7dc08440";
const DIR: &str =
    "/home/u/.kimi-code/sessions/wd_work_0/session_07019dbe-0b3c-4761-a9a9-591b7dc08440";

/// Kimi's files as they were at `now` (every line written by then; the sub-agent's only
/// those written `lag` ms before: Kimi writes each agent's file on its own, and the parent's
/// can be ahead).
struct Recorded {
    now: u64,
    lag: u64,
}

impl Transcripts for Recorded {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        let index = format!("{{\"sessionId\":\"{SESSION}\",\"sessionDir\":\"{DIR}\"}}\n");
        let text = match path {
            "/home/u/.kimi-code/session_index.jsonl" => index,
            p if p == wire_of(DIR, "main") => written(MAIN, self.now),
            p if p == wire_of(DIR, "agent-0") => written(SUB, self.now.saturating_sub(self.lag)),
            _ => String::new(),
        };
        text.as_bytes()[(offset as usize).min(text.len())..].to_vec()
    }
}

fn written(wire: &str, now: u64) -> String {
    wire.lines()
        .take_while(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["time"]
                .as_u64()
                .is_none_or(|t| t <= now)
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The recorded hooks, each at its time, with a tick every 100 ms between them (`late`: the
/// daemon sees the files only as they were at the end; `lag`: see [`Recorded`]).
fn replay(late: bool, lag: u64) -> Vec<Span> {
    let end = u64::MAX / 4;
    let mut a = Adapter::new();
    let mut out = Vec::new();
    let mut last = 0;
    for line in HOOKS.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let at = v["received_ms"].as_u64().unwrap();
        let p: Payload = serde_json::from_value(v["payload"].clone()).unwrap();
        let files = &mut Recorded {
            now: if late { end } else { at },
            lag,
        };
        let mut t = if last == 0 { at } else { last + 100 };
        while t < at {
            a.tick(t, &mut Recorded { now: t, lag }, &mut out);
            t += 100;
        }
        a.take(p, at, files, &mut out);
        last = at;
    }
    a.tick(last + 60_000, &mut Recorded { now: end, lag: 0 }, &mut out);
    a.abandon(
        SESSION,
        last + 70_000,
        &mut Recorded { now: end, lag: 0 },
        &mut out,
    );
    crate::testing::assembled(&out)
}

fn op(s: &Span) -> &str {
    s.attr(GEN_AI_OPERATION_NAME)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The trace's shape: each turn's root, with its direct children's names.
fn shape(spans: &[Span]) -> Vec<(String, Vec<String>)> {
    let mut roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    roots.sort_by_key(|r| r.start_ns);
    roots
        .iter()
        .map(|r| {
            let mut kids: Vec<&Span> = spans
                .iter()
                .filter(|s| s.parent_span_id == Some(r.span_id))
                .collect();
            kids.sort_by_key(|s| s.start_ns);
            (
                r.name.to_string(),
                kids.iter().map(|s| s.name.to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn a_recorded_session_is_a_turn_a_prompt_with_its_calls_read_as_the_wire_grew() {
    check(&replay(false, 0));
}

/// Seen live: the parent's `subagent.completed` on disk while the sub-agent's file still
/// lacked its last model call and its `turn.ended`.
#[test]
fn a_sub_agents_file_that_lags_its_parents_still_gives_all_its_calls() {
    check(&replay(false, 300));
}

fn check(spans: &[Span]) {
    let turns = shape(spans);
    let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        turns,
        [
            (
                "invoke_agent kimi".to_string(),
                names(&["chat kimi-test", "execute_tool Bash", "chat kimi-test"])
            ),
            (
                "invoke_agent kimi".to_string(),
                names(&["chat kimi-test", "execute_tool Bash", "chat kimi-test"])
            ),
            (
                "invoke_agent kimi".to_string(),
                names(&["chat kimi-test", "execute_tool Agent", "chat kimi-test"])
            ),
        ]
    );
    // Tokens as Kimi recorded them: input with the cache, as the API counted it.
    let mut chats: Vec<&Span> = spans.iter().filter(|s| op(s) == OP_CHAT).collect();
    chats.sort_by_key(|s| s.start_ns);
    let input: Vec<i64> = chats
        .iter()
        .filter_map(|s| match s.attr("gen_ai.usage.input_tokens") {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        })
        .collect();
    assert_eq!(input, [1017, 2017, 3017, 4017, 5017, 6017, 7017, 8017]);
    // The sub-agent, under its `Agent` call, inside it, with its own calls.
    let agent = spans
        .iter()
        .find(|s| s.name == "execute_tool Agent")
        .unwrap();
    let sub = spans
        .iter()
        .find(|s| s.parent_span_id == Some(agent.span_id))
        .expect("the sub-agent under its call");
    assert!(sub.start_ns >= agent.start_ns && sub.end_ns <= agent.end_ns);
    // It ends at its own `turn.ended`, not at its parent's word that it completed.
    assert_eq!(sub.end_ns, 1_796_313_560_590_000_000);
    let inside: Vec<&str> = spans
        .iter()
        .filter(|s| s.parent_span_id == Some(sub.span_id))
        .map(op)
        .collect();
    assert_eq!(inside.len(), 3, "{inside:?}");
    assert!(inside.contains(&OP_EXECUTE_TOOL));
    // The denied call is an error; the slept one took its second.
    let shells: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "execute_tool Bash")
        .collect();
    assert_eq!(
        shells
            .iter()
            .filter(|s| matches!(s.status, crate::assemble::span::Status::Error(_)))
            .count(),
        1
    );
    assert!(shells
        .iter()
        .any(|s| s.end_ns - s.start_ns >= 1_000_000_000));
}

#[test]
fn a_daemon_that_reads_the_whole_wire_late_makes_the_same_turns() {
    assert_eq!(shape(&replay(true, 0)), shape(&replay(false, 0)));
}
