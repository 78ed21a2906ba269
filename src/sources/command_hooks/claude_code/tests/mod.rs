//! The adapter on recorded Claude Code sessions, and on hand-written payload sequences.

use super::*;
use crate::assemble::semconv::*;
use crate::assemble::span::{Status, Value};
use crate::assemble::{AssembleConfig, Assembler, Output, Span};
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::{Files, NoTranscripts};
use crate::testing::check_tree;
use serde::Deserialize;
use serde_json::value::RawValue;

/// Fixture transcripts, by the file name the recorded payloads point at.
struct Fixture(&'static str);

impl Transcripts for Fixture {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        let file = if path.contains("/subagents/") {
            format!("{}/transcripts/subagent-agent.jsonl", self.0)
        } else {
            format!("{}/transcript.jsonl", self.0)
        };
        let all = std::fs::read(format!(
            "{}/tests/fixtures/claude-code/{file}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        all[(offset as usize).min(all.len())..].to_vec()
    }
}

#[derive(Deserialize)]
struct Recorded {
    received_unix_s: f64,
    payload: Box<RawValue>,
}

fn replay(name: &'static str) -> Output {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/claude-code/{name}/hooks.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut adapter = Adapter::new(15_000);
    let mut records = Vec::new();
    let mut transcripts = Fixture(name);
    let mut last = 0;
    for line in text.lines() {
        let r: Recorded = serde_json::from_str(line).unwrap();
        let p: Payload = serde_json::from_str(r.payload.get()).unwrap();
        last = (r.received_unix_s * 1000.0).round() as u64;
        adapter.take(p, last, &mut transcripts, &mut records);
    }
    AgentRules::tick(&mut adapter, last + 15_000, &mut NoTranscripts, &mut records);
    assert_eq!(adapter.open_turns(), 0);
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for r in &records {
        asm.push(r, &mut out);
    }
    asm.finish(&mut out);
    assert_eq!(check_tree(&out.spans), Ok(()));
    out
}

fn s<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    span.attr(key).and_then(Value::as_str)
}

fn tools(out: &Output) -> Vec<&Span> {
    out.spans
        .iter()
        .filter(|x| s(x, GEN_AI_OPERATION_NAME) == Some(OP_EXECUTE_TOOL))
        .collect()
}

#[test]
fn parallel_calls_a_failure_and_the_model_calls_of_a_turn() {
    let out = replay("multi_tool");
    let roots: Vec<_> = out
        .spans
        .iter()
        .filter(|x| x.parent_span_id.is_none())
        .collect();
    assert_eq!(roots.len(), 1, "one turn");
    let root = roots[0];
    assert_eq!(root.name, "invoke_agent claude-code");
    assert!(
        root.attr(ALBEDO_UNFINISHED).is_none(),
        "the turn ended at its Stop"
    );
    assert_eq!(root.end_ns, 1_795_986_590_345 * 1_000_000, "at the Stop");
    let t = tools(&out);
    let names: Vec<_> = t.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "execute_tool Read",
            "execute_tool Bash",
            "execute_tool Edit",
            "execute_tool Bash"
        ]
    );
    // Read: PreToolUse at .934, 14 ms of its own.
    assert_eq!(
        (t[0].start_ns, t[0].end_ns),
        (1_795_986_589_934 * 1_000_000, 1_795_986_589_948 * 1_000_000)
    );
    // Parallel with Bash, which started a millisecond earlier and took 44 ms.
    assert_eq!(
        (t[1].start_ns, t[1].end_ns),
        (1_795_986_589_933 * 1_000_000, 1_795_986_589_977 * 1_000_000)
    );
    assert!(t.iter().all(|x| x.parent_span_id == Some(root.span_id)));
    assert_eq!(t[3].status, Status::Error("failed: Exit code 3".into()));
    let chats: Vec<_> = out
        .spans
        .iter()
        .filter(|x| s(x, GEN_AI_OPERATION_NAME) == Some(OP_CHAT))
        .collect();
    assert_eq!(chats.len(), 4, "one per message id");
    assert_eq!(
        chats[0].attr(GEN_AI_USAGE_INPUT_TOKENS),
        Some(&Value::Int(4 + 14211))
    );
    assert!(chats.iter().all(|c| c.parent_span_id == Some(root.span_id)));
    assert_eq!(root.attr(ALBEDO_TURN_MODEL_CALLS), Some(&Value::Int(4)));
}

#[test]
fn a_blocked_call_appears_refused() {
    let out = replay("pretool_block");
    let t = tools(&out);
    assert_eq!(t.len(), 2);
    assert_eq!(s(t[0], GEN_AI_TOOL_CALL_ID), Some("toolu_01Mockmain0000"));
    assert_eq!(t[0].attr(ALBEDO_TOOL_REFUSED), Some(&Value::Bool(true)));
    match &t[0].status {
        Status::Error(m) => assert!(
            m.contains("Blocked by policy: rm -rf is not allowed"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(t[1].status, Status::Unset);
}

#[test]
fn a_sub_agent_nests_under_its_agent_call_with_its_own_model_calls() {
    let out = replay("subagent");
    let agent_call = out
        .spans
        .iter()
        .find(|x| x.name == "execute_tool Agent")
        .unwrap();
    let sub = out
        .spans
        .iter()
        .find(|x| x.name == "invoke_agent general-purpose")
        .unwrap();
    assert_eq!(sub.parent_span_id, Some(agent_call.span_id));
    assert_eq!(sub.trace_id, agent_call.trace_id);
    let inner = out
        .spans
        .iter()
        .find(|x| s(x, GEN_AI_TOOL_CALL_ID) == Some("toolu_01Mocksub0001"))
        .unwrap();
    assert_eq!(inner.parent_span_id, Some(sub.span_id));
    let sub_chats = out
        .spans
        .iter()
        .filter(|x| {
            s(x, GEN_AI_OPERATION_NAME) == Some(OP_CHAT) && x.parent_span_id == Some(sub.span_id)
        })
        .count();
    assert!(
        sub_chats >= 1,
        "the sub-agent's model calls come from its own transcript"
    );
    assert_eq!(
        out.spans
            .iter()
            .filter(|x| x.parent_span_id.is_none())
            .count(),
        1
    );
}

/// An adapter fed payloads of session `s` (without transcripts), keeping what it emits.
struct Fed {
    adapter: Adapter,
    out: Vec<Record<'static>>,
}

impl Fed {
    fn new(grace_ms: u64) -> Self {
        Fed {
            adapter: Adapter::new(grace_ms),
            out: Vec::new(),
        }
    }

    /// Hands over a `hook_event_name` payload whose other fields are `extra`.
    fn hook(&mut self, at_ms: u64, event: &str, extra: &str) {
        let p: Payload = serde_json::from_str(&format!(
            r#"{{"session_id":"s","hook_event_name":"{event}"{extra}}}"#
        ))
        .unwrap();
        self.adapter.take(p, at_ms, &mut Files, &mut self.out);
    }

    fn tick(&mut self, now_ms: u64) {
        AgentRules::tick(&mut self.adapter, now_ms, &mut NoTranscripts, &mut self.out);
    }

    fn turn_ended(&self) -> bool {
        self.out
            .iter()
            .any(|r| matches!(r.event, Event::TurnEnded { .. }) && r.session == "s")
    }

    /// When each ended turn ended.
    fn turn_ends(&self) -> Vec<u64> {
        self.out
            .iter()
            .filter(|r| r.session == "s")
            .filter_map(|r| match r.event {
                Event::TurnEnded { at_ms, .. } => Some(at_ms),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn a_stop_while_a_background_sub_agent_runs_does_not_end_the_turn() {
    let mut a = Fed::new(1_000);
    a.hook(1_000, "UserPromptSubmit", r#","prompt":"go""#);
    a.hook(
        1_100,
        "PreToolUse",
        r#","tool_name":"Agent","tool_use_id":"ag","tool_input":{"prompt":"x"}"#,
    );
    a.hook(
        1_120,
        "PostToolUse",
        r#","tool_name":"Agent","tool_use_id":"ag","duration_ms":20"#,
    );
    a.hook(
        1_150,
        "SubagentStart",
        r#","agent_id":"k","agent_type":"helper""#,
    );
    a.hook(1_200, "Stop", r#","stop_hook_active":false"#);
    a.tick(9_000);
    assert!(!a.turn_ended(), "the sub-agent still runs");
    a.hook(9_100, "SubagentStop", r#","agent_id":"k""#);
    // The sub-agent's report comes back as a prompt; the agent answers once more.
    a.hook(
        9_200,
        "UserPromptSubmit",
        r#","prompt":"<task-notification>\n<task-id>k</task-id>""#,
    );
    a.hook(9_500, "Stop", r#","stop_hook_active":false"#);
    a.tick(10_500);
    assert_eq!(a.turn_ends(), [9_500], "one turn, ended by the last Stop");
    let prompts = a
        .out
        .iter()
        .filter(|r| matches!(r.event, Event::Prompted { .. }) && r.session == "s")
        .count();
    assert_eq!(prompts, 1, "the notification is no new turn");
}

#[test]
fn a_held_stop_keeps_one_turn_and_a_late_continuation_starts_another() {
    let mut a = Fed::new(1_000);
    a.hook(1_000, "UserPromptSubmit", r#","prompt":"go""#);
    a.hook(2_000, "Stop", r#","stop_hook_active":false"#);
    // A hook held the stop: a tool call comes within the grace period.
    a.hook(
        2_500,
        "PreToolUse",
        r#","tool_name":"Bash","tool_use_id":"t1","tool_input":{}"#,
    );
    a.tick(3_100);
    assert!(!a.turn_ended(), "still one turn");
    a.hook(
        2_600,
        "PostToolUse",
        r#","tool_name":"Bash","tool_use_id":"t1","duration_ms":50"#,
    );
    a.hook(3_000, "Stop", r#","stop_hook_active":true"#);
    a.tick(3_999);
    assert!(!a.turn_ended());
    a.tick(4_000);
    assert_eq!(a.turn_ends(), [3_000], "the turn ends at its last Stop");
    let held: Vec<_> = a
        .out
        .iter()
        .filter_map(|r| match r.event {
            Event::Stopping { held, .. } => Some(held),
            _ => None,
        })
        .collect();
    assert_eq!(held, [0, 1]);
}

/// Times in payloads are outside values: a wild `duration_ms` saturates instead of wrapping
/// (or panicking), and the record it makes is then refused by the checks every record passes,
/// naming the field.
#[test]
fn a_wild_duration_saturates_and_validation_names_the_field() {
    let mut a = Fed::new(1_000);
    a.hook(1_000, "UserPromptSubmit", r#","prompt":"go""#);
    a.hook(
        1_100,
        "PostToolUse",
        &format!(
            r#","tool_name":"Bash","tool_use_id":"t","duration_ms":{}"#,
            u64::MAX
        ),
    );
    let called = a
        .out
        .iter()
        .find(|r| matches!(r.event, Event::Called(_)))
        .unwrap();
    let Event::Called(c) = &called.event else {
        unreachable!()
    };
    assert_eq!(c.finished_ms, u64::MAX);
    assert_eq!(
        crate::protocol::validate(called).unwrap_err().field,
        "finished_ms"
    );
    // The grace period is added to an outside time too.
    a.hook(u64::MAX - 10, "Stop", "");
    a.tick(u64::MAX - 1);
    assert!(
        !a.turn_ended(),
        "the sum saturates, it does not wrap to the past"
    );
    a.tick(u64::MAX);
    assert!(a.turn_ended());
}

mod interrupted;
