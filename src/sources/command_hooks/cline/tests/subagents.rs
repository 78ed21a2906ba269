//! Cline's sub-agents, as the real CLI ran them (docs/agents/cline.md §4): each under the
//! `spawn_agent` call that started it, with its own calls and its own messages file.

use super::*;
use crate::protocol::SessionInfo;
use crate::sources::command_hooks::engine::AgentRules;
use serde_json::json;

const LEAD_FILE: &str = "/h/.cline/data/sessions/s1/s1.messages.json";

/// A payload of sub-agent `agent` (its parent: the user's own agent, `a1`).
fn of(agent: &str, name: &str, at: &str, extra: serde_json::Value) -> Payload {
    let mut extra = extra;
    extra["agent_id"] = agent.into();
    extra["parent_agent_id"] = "a1".into();
    payload(name, at, extra)
}

fn spawn(id: &str, task: &str) -> serde_json::Value {
    json!({"id": id, "name": "spawn_agent", "input": {"task": task, "systemPrompt": "helper"}})
}

/// As Cline 3.0.65 ran it (docs/agents/cline.md): the user's agent calls `spawn_agent`, the
/// sub-agent's hooks carry its own `agent_id` and its parent's, and it writes its own
/// messages file. Its turn is under the call, its shell call and model calls under its turn.
#[test]
fn a_sub_agent_runs_under_its_spawn_agent_call_with_its_own_calls_and_model_calls() {
    use crate::assemble::semconv::{
        GEN_AI_OPERATION_NAME, GEN_AI_TOOL_CALL_ID, GEN_AI_USAGE_INPUT_TOKENS,
        GEN_AI_USAGE_OUTPUT_TOKENS, OP_CHAT, OP_INVOKE_AGENT,
    };
    use crate::assemble::span::Value;
    let sub = "/h/.cline/data/sessions/s1/agent_b.messages.json";
    let mut files = Files(vec![
        (
            LEAD_FILE.to_string(),
            file(
                "lead",
                &[
                    ("user", 1796328284793, "go", (0, 0)),
                    ("assistant", 1796328285082, "spawn", (1017, 21)),
                    ("user", 1796328286553, "result", (0, 0)),
                    ("assistant", 1796328286649, "done", (4017, 24)),
                ],
            ),
        ),
        (
            sub.to_string(),
            file(
                "subagent",
                &[
                    ("user", 1796328285118, "SUBTASK: run it", (0, 0)),
                    ("assistant", 1796328285164, "run", (2017, 22)),
                    ("user", 1796328286270, "result", (0, 0)),
                    ("assistant", 1796328286396, "done (3).", (3017, 23)),
                ],
            ),
        ),
    ]);
    let shell =
        json!({"id": "call_2_0", "name": "run_commands", "input": {"commands": ["echo sub"]}});
    let mut shell_result = shell.clone();
    shell_result["output"] = json!([{"result": "sub\n", "success": true}]);
    shell_result["startedAt"] = "2026-12-03T20:04:45.204Z".into();
    shell_result["endedAt"] = "2026-12-03T20:04:46.253Z".into();
    let mut spawned = spawn("call_1_0", "SUBTASK: run it");
    spawned["output"] = json!({"text": "done (3).", "finishReason": "completed"});
    spawned["startedAt"] = "2026-12-03T20:04:45.107Z".into();
    spawned["endedAt"] = "2026-12-03T20:04:46.428Z".into();
    let none = json!({});
    let mut a = Adapter::new();
    let mut out = Vec::new();
    let steps = [
        payload("agent_start", "2026-12-03T20:04:44.796Z", none.clone()),
        payload(
            "tool_call",
            "2026-12-03T20:04:45.092Z",
            json!({"tool_call": spawn("call_1_0", "SUBTASK: run it")}),
        ),
        of(
            "agent_b",
            "agent_start",
            "2026-12-03T20:04:45.118Z",
            none.clone(),
        ),
        of(
            "agent_b",
            "tool_call",
            "2026-12-03T20:04:45.179Z",
            json!({"tool_call": shell}),
        ),
        of(
            "agent_b",
            "tool_result",
            "2026-12-03T20:04:46.255Z",
            json!({"tool_result": shell_result}),
        ),
        of(
            "agent_b",
            "agent_end",
            "2026-12-03T20:04:46.416Z",
            none.clone(),
        ),
        payload(
            "tool_result",
            "2026-12-03T20:04:46.429Z",
            json!({"tool_result": spawned}),
        ),
        payload("agent_end", "2026-12-03T20:04:46.651Z", none),
    ];
    assert_eq!(steps[2].messages_path.as_deref(), Some(sub), "its own file");
    for (i, p) in steps.into_iter().enumerate() {
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
        if i == 2 {
            assert!(!a.at_rest("s1"), "a sub-agent is running");
        }
    }
    a.tick(1796328286651 + READ_GRACE_MS, &mut files, &mut out);
    assert_eq!(
        (a.open_turns(), a.kept()),
        (0, 1),
        "the sub-agent's session is closed"
    );
    assert!(a.at_rest("s1"));

    let spans = crate::testing::assembled(&out);
    let op = |s: &crate::assemble::Span| {
        s.attr(GEN_AI_OPERATION_NAME)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let int = |s: &crate::assemble::Span, k: &str| match s.attr(k) {
        Some(Value::Int(n)) => *n,
        _ => -1,
    };
    let ms = |ns: u64| ns / 1_000_000;
    let call = |id: &str| {
        let found = spans
            .iter()
            .find(|s| s.attr(GEN_AI_TOOL_CALL_ID).and_then(Value::as_str) == Some(id));
        found.unwrap_or_else(|| panic!("no call {id}: {spans:#?}"))
    };
    let (spawn_span, shell_span) = (call("call_1_0"), call("call_2_0"));
    assert_eq!(
        (ms(spawn_span.start_ns), ms(spawn_span.end_ns)),
        (1796328285107, 1796328286428)
    );
    let in_call = under(&spans, spawn_span);
    let [turn] = in_call.as_slice() else {
        panic!("not one span under the spawn_agent call: {spans:#?}")
    };
    let turn = *turn;
    assert_eq!(op(turn).as_deref(), Some(OP_INVOKE_AGENT));
    assert_eq!(
        (ms(turn.start_ns), ms(turn.end_ns)),
        (1796328285118, 1796328286416)
    );
    assert_eq!(shell_span.parent_span_id, Some(turn.span_id));
    assert_eq!(
        (ms(shell_span.start_ns), ms(shell_span.end_ns)),
        (1796328285204, 1796328286253)
    );
    let chats: Vec<(u64, u64, i64, i64)> = under(&spans, turn)
        .into_iter()
        .filter(|s| op(s).as_deref() == Some(OP_CHAT))
        .map(|s| {
            (
                ms(s.start_ns),
                ms(s.end_ns),
                int(s, GEN_AI_USAGE_INPUT_TOKENS),
                int(s, GEN_AI_USAGE_OUTPUT_TOKENS),
            )
        })
        .collect();
    assert_eq!(
        chats,
        [
            (1796328285118, 1796328285164, 2017, 22),
            (1796328286270, 1796328286396, 3017, 23)
        ]
    );
    // The user's own turn keeps only its own model calls.
    let root = spans.iter().find(|s| s.parent_span_id.is_none()).unwrap();
    let own: Vec<i64> = under(&spans, root)
        .into_iter()
        .filter(|s| op(s).as_deref() == Some(OP_CHAT))
        .map(|s| int(s, GEN_AI_USAGE_INPUT_TOKENS))
        .collect();
    assert_eq!(own, [1017, 4017]);
}

/// Two sub-agents started side by side: each takes the `spawn_agent` call whose task its
/// messages file opens with, whichever starts first; one whose file is not written yet takes
/// the oldest call left.
#[test]
fn side_by_side_sub_agents_each_take_the_call_that_gave_their_task() {
    let mut files = Files(vec![(
        "/h/.cline/data/sessions/s1/agent_y.messages.json".to_string(),
        file(
            "subagent",
            &[("user", 1796328312747, "SUBTASK B: run it", (0, 0))],
        ),
    )]);
    let none = json!({});
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in [
        payload("agent_start", "2026-12-03T20:05:12.456Z", none.clone()),
        payload(
            "tool_call",
            "2026-12-03T20:05:12.638Z",
            json!({"tool_call": spawn("call_1_0", "SUBTASK A: run it")}),
        ),
        payload(
            "tool_call",
            "2026-12-03T20:05:12.661Z",
            json!({"tool_call": spawn("call_1_1", "SUBTASK B: run it")}),
        ),
        of(
            "agent_y",
            "agent_start",
            "2026-12-03T20:05:12.752Z",
            none.clone(),
        ),
        of(
            "agent_x",
            "agent_start",
            "2026-12-03T20:05:12.753Z",
            none.clone(),
        ),
    ] {
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
    }
    let parents: Vec<(String, String, String)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Session(SessionInfo {
                parent: Some(p), ..
            }) => Some((
                r.session.to_string(),
                p.session.to_string(),
                p.call.to_string(),
            )),
            _ => None,
        })
        .collect();
    let want = |agent: &str, call: &str| {
        (
            format!("s1/agent-{agent}"),
            "s1".to_string(),
            call.to_string(),
        )
    };
    assert_eq!(
        parents,
        [want("agent_y", "call_1_1"), want("agent_x", "call_1_0")]
    );
    let tasks: Vec<&str> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Prompted { text, .. } if r.session.contains("/agent-") => Some(&**text),
            _ => None,
        })
        .collect();
    assert_eq!(tasks, ["SUBTASK B: run it", "SUBTASK A: run it"]);
}

/// Cline gone while a sub-agent runs: the session's end closes the sub-agent's too.
#[test]
fn a_session_given_up_closes_its_running_sub_agent() {
    let mut files = Files(Vec::new());
    let none = json!({});
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in [
        payload("agent_start", "2026-12-03T20:05:12.456Z", none.clone()),
        payload(
            "tool_call",
            "2026-12-03T20:05:12.638Z",
            json!({"tool_call": spawn("call_1_0", "work")}),
        ),
        of("agent_x", "agent_start", "2026-12-03T20:05:12.752Z", none),
    ] {
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
    }
    a.abandon("s1", 1796328313000, &mut files, &mut out);
    let closed: Vec<&str> = out
        .iter()
        .filter(|r| matches!(r.event, Event::Closed { .. }))
        .map(|r| &*r.session)
        .collect();
    assert_eq!(closed, ["s1/agent-agent_x", "s1"]);
    assert_eq!(a.kept(), 0);
}

/// Cline runs its hooks without waiting for them: a sub-agent's first hooks can reach the
/// journal before its call's `PreToolUse`. Its records wait for that call, and go under it.
#[test]
fn a_sub_agent_whose_hooks_come_before_its_call_still_goes_under_it() {
    let mut files = Files(vec![(
        "/h/.cline/data/sessions/s1/agent_x.messages.json".to_string(),
        file(
            "subagent",
            &[("user", 1796328285118, "SUBTASK: run it", (0, 0))],
        ),
    )]);
    let none = json!({});
    let shell = json!({"id": "call_2_0", "name": "run_commands",
        "input": {"commands": ["echo sub"]}});
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in [
        payload("agent_start", "2026-12-03T20:04:44.796Z", none.clone()),
        of("agent_x", "agent_start", "2026-12-03T20:04:45.118Z", none),
        of(
            "agent_x",
            "tool_call",
            "2026-12-03T20:04:45.179Z",
            json!({"tool_call": shell}),
        ),
    ] {
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
    }
    let mine = |out: &[Record<'static>]| -> Vec<Event<'static>> {
        out.iter()
            .filter(|r| r.session.contains("/agent-"))
            .map(|r| r.event.clone())
            .collect()
    };
    assert!(mine(&out).is_empty(), "it waits for its call");
    let call = json!({"tool_call": spawn("call_1_0", "SUBTASK: run it")});
    let spawned = payload("tool_call", "2026-12-03T20:04:45.092Z", call);
    AgentRules::take(&mut a, spawned, 0, &mut files, &mut out);
    let placed = mine(&out);
    assert!(
        matches!(placed.as_slice(), [
            Event::Session(SessionInfo { parent: Some(p), at_ms: 1796328285118, .. }),
            Event::Prompted { text, .. },
            Event::Calling { .. },
        ] if p.call == "call_1_0" && text == "SUBTASK: run it"),
        "{placed:?}"
    );
}

/// A sub-agent whose call never comes goes out a second later, as a trace of its own.
#[test]
fn a_sub_agent_whose_call_never_comes_goes_out_on_its_own() {
    let mut files = Files(Vec::new());
    let none = json!({});
    let mut a = Adapter::new();
    let mut out = Vec::new();
    for p in [
        payload("agent_start", "2026-12-03T20:04:44.796Z", none.clone()),
        of("agent_x", "agent_start", "2026-12-03T20:04:45.118Z", none),
    ] {
        AgentRules::take(&mut a, p, 0, &mut files, &mut out);
    }
    a.tick(1796328285118 + READ_GRACE_MS - 1, &mut files, &mut out);
    assert!(!out.iter().any(|r| r.session.contains("/agent-")));
    a.tick(1796328285118 + READ_GRACE_MS, &mut files, &mut out);
    let opened = out.iter().find_map(|r| match &r.event {
        Event::Session(info) if r.session == "s1/agent-agent_x" => Some(info.parent.clone()),
        _ => None,
    });
    assert_eq!(opened, Some(None), "opened, under no call");
}
