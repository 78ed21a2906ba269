//! The adapter on payload sequences written from Cursor's hooks documentation (no Cursor has
//! run them: its CLI needs a login): docs/agents/cursor.md.

use serde_json::{json, Value};

use super::*;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::AgentRules;
use crate::assemble::semconv::{
    ALBEDO_TOOL_REFUSED, ALBEDO_TURN_REASON, ALBEDO_UNFINISHED, GEN_AI_OPERATION_NAME,
    GEN_AI_TOOL_NAME, OP_EXECUTE_TOOL, OP_INVOKE_AGENT,
};
use crate::assemble::span::{Status, Value as Attr};
use crate::assemble::Span;

const CONV: &str = "668320d2-2fd8-4888-b33c-2a466fec86e7";
const T0: u64 = 1_796_155_419_000;
const MS: u64 = 1_000_000;

/// A payload as Cursor sends it, then as the hook journals it.
fn p(event: &str, extra: Value) -> Payload {
    let mut v = json!({"conversation_id": CONV, "generation_id": "a4b2-gen", "hook_event_name": event,
        "model": "claude-4.5-sonnet", "cursor_version": "2.4.21", "workspace_roots": ["/work/proj"],
        "user_email": "dev@example.com", "transcript_path": null});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_str(&journaled(&v.to_string()).unwrap()).unwrap()
}

fn run(payloads: &[(u64, Payload)], then: u64) -> (Adapter, Vec<Record<'static>>) {
    let mut a = Adapter::with_grace(1_000);
    let mut out = Vec::new();
    for (ms, p) in payloads {
        a.take(p.clone(), T0 + ms, &mut NoTranscripts, &mut out);
    }
    a.tick(T0 + then, &mut NoTranscripts, &mut out);
    (a, out)
}

fn spans(records: &[Record<'static>]) -> Vec<Span> {
    crate::testing::assembled(records)
}

fn op<'a>(spans: &'a [Span], op: &str) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| s.attr(GEN_AI_OPERATION_NAME).and_then(Attr::as_str) == Some(op))
        .collect()
}

fn tool<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    op(spans, OP_EXECUTE_TOOL)
        .into_iter()
        .find(|s| s.attr(GEN_AI_TOOL_NAME).and_then(Attr::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no {name} span"))
}

fn shell(id: &str) -> Value {
    json!({"tool_name": "Shell", "tool_use_id": id, "cwd": "/work/proj",
        "tool_input": {"command": "sleep 2", "working_directory": "/work/proj"}})
}

fn with(mut v: Value, extra: Value) -> Value {
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v
}

#[test]
fn a_turn_has_its_calls_with_their_times_and_the_refused_and_failed_ones_as_such() {
    let out = json!({"tool_output": "{\"exitCode\":0,\"stdout\":\"\"}", "duration": 2004});
    let (a, records) = run(
        &[
            (
                0,
                p(
                    "sessionStart",
                    json!({"session_id": CONV, "is_background_agent": false}),
                ),
            ),
            (
                100,
                p(
                    "beforeSubmitPrompt",
                    json!({"prompt": "sleep, then push", "attachments": []}),
                ),
            ),
            (300, p("preToolUse", shell("tool_1"))),
            // Cursor's own shell hooks repeat the call: not counted twice.
            (
                310,
                p(
                    "beforeShellExecution",
                    json!({"command": "sleep 2", "cwd": "/work/proj"}),
                ),
            ),
            (
                2_310,
                p(
                    "afterShellExecution",
                    json!({"command": "sleep 2", "output": "", "duration": 2000}),
                ),
            ),
            (2_320, p("postToolUse", with(shell("tool_1"), out))),
            (
                2_400,
                p(
                    "preToolUse",
                    json!({"tool_name": "Shell", "tool_use_id": "tool_2",
                "tool_input": {"command": "git push"}}),
                ),
            ),
            (
                2_450,
                p(
                    "postToolUseFailure",
                    json!({"tool_name": "Shell", "tool_use_id": "tool_2",
                "failure_type": "permission_denied", "error_message": "denied by a hook"}),
                ),
            ),
            (
                2_500,
                p(
                    "preToolUse",
                    json!({"tool_name": "Read", "tool_use_id": "tool_3",
                "tool_input": {"path": "/nope"}}),
                ),
            ),
            (
                2_520,
                p(
                    "postToolUseFailure",
                    json!({"tool_name": "Read", "tool_use_id": "tool_3",
                "failure_type": "error", "error_message": "ENOENT"}),
                ),
            ),
            (
                2_600,
                p(
                    "afterAgentResponse",
                    json!({"text": "Slept; the push was refused."}),
                ),
            ),
            (
                2_610,
                p("stop", json!({"status": "completed", "loop_count": 0})),
            ),
        ],
        10_000,
    );
    assert_eq!(a.open_turns(), 0);
    let spans = spans(&records);
    let [root] = op(&spans, OP_INVOKE_AGENT)[..] else {
        panic!("one turn")
    };
    assert_eq!(
        (root.start_ns, root.end_ns),
        ((T0 + 100) * MS, (T0 + 2_610) * MS)
    );
    assert_eq!(
        root.attr(ALBEDO_TURN_REASON).and_then(Attr::as_str),
        Some("end_turn")
    );
    assert_eq!(
        op(&spans, OP_EXECUTE_TOOL).len(),
        3,
        "no call counted twice"
    );
    let sleep = tool(&spans, "Shell");
    assert_eq!(
        (sleep.start_ns, sleep.end_ns),
        ((T0 + 300) * MS, (T0 + 2_320) * MS)
    );
    let pushed = op(&spans, OP_EXECUTE_TOOL)
        .into_iter()
        .find(|s| s.attr(ALBEDO_TOOL_REFUSED) == Some(&Attr::Bool(true)))
        .expect("the denied call is refused");
    assert_eq!(pushed.start_ns, (T0 + 2_400) * MS);
    let read = tool(&spans, "Read");
    assert!(
        matches!(read.status, Status::Error(_)),
        "a tool that failed is an error"
    );
    assert!(!matches!(sleep.status, Status::Error(_)));
}

#[test]
fn a_print_run_without_prompt_or_stop_hooks_still_exports_its_turn() {
    // `cursor-agent -p` fires sessionStart, the tool hooks and sessionEnd only.
    let (a, records) = run(
        &[
            (0, p("sessionStart", json!({"session_id": CONV}))),
            (200, p("preToolUse", shell("tool_1"))),
            (2_200, p("postToolUse", shell("tool_1"))),
            (
                2_900,
                p(
                    "sessionEnd",
                    json!({"session_id": CONV, "reason": "completed", "duration_ms": 2900}),
                ),
            ),
        ],
        60_000,
    );
    assert_eq!(a.sessions.len(), 0, "the ended session is forgotten");
    let spans = spans(&records);
    let [root] = op(&spans, OP_INVOKE_AGENT)[..] else {
        panic!("one turn")
    };
    assert_eq!(
        (root.start_ns, root.end_ns),
        ((T0 + 200) * MS, (T0 + 2_900) * MS)
    );
    assert_ne!(root.attr(ALBEDO_UNFINISHED), Some(&Attr::Bool(true)));
    assert_eq!(tool(&spans, "Shell").end_ns, (T0 + 2_200) * MS);
}

#[test]
fn an_older_cursor_without_tool_hooks_gets_its_calls_from_the_shell_mcp_and_edit_hooks() {
    let (_, records) = run(
        &[
            (0, p("beforeSubmitPrompt", json!({"prompt": "go"}))),
            (
                100,
                p(
                    "beforeShellExecution",
                    json!({"command": "make", "cwd": "/work/proj"}),
                ),
            ),
            (
                1_100,
                p(
                    "afterShellExecution",
                    json!({"command": "make", "output": "ok", "duration": 990}),
                ),
            ),
            (
                1_200,
                p(
                    "beforeMCPExecution",
                    json!({"tool_name": "query", "tool_input": "{\"q\":1}",
                "command": "npx db-mcp"}),
                ),
            ),
            (
                1_500,
                p(
                    "afterMCPExecution",
                    json!({"tool_name": "query", "tool_input": "{\"q\":1}",
                "result_json": "{\"rows\":[]}", "duration": 280}),
                ),
            ),
            (
                1_600,
                p(
                    "afterFileEdit",
                    json!({"file_path": "/work/proj/a.rs",
                "edits": [{"old_string": "a", "new_string": "b"}]}),
                ),
            ),
            (1_700, p("stop", json!({"status": "completed"}))),
        ],
        10_000,
    );
    let spans = spans(&records);
    let make = tool(&spans, "Shell");
    assert_eq!(
        (make.start_ns, make.end_ns),
        ((T0 + 100) * MS, (T0 + 1_100) * MS)
    );
    let mcp = tool(&spans, "MCP:query");
    assert_eq!(
        (mcp.start_ns, mcp.end_ns),
        ((T0 + 1_200) * MS, (T0 + 1_500) * MS)
    );
    assert_eq!(tool(&spans, "Edit").start_ns, (T0 + 1_600) * MS);
}

#[test]
fn a_sub_agent_nests_under_the_task_call_that_started_it() {
    let task = json!({"tool_name": "Task", "tool_use_id": "task_1",
        "tool_input": {"subagent_type": "explore", "prompt": "find the bug"}});
    let mut own = p(
        "preToolUse",
        json!({"tool_name": "Grep", "tool_use_id": "g1", "tool_input": {"pattern": "x"}}),
    );
    own.conversation_id = Some("sub-1".into());
    let mut own_end = p(
        "postToolUse",
        json!({"tool_name": "Grep", "tool_use_id": "g1"}),
    );
    own_end.conversation_id = Some("sub-1".into());
    let (a, records) = run(
        &[
            (0, p("beforeSubmitPrompt", json!({"prompt": "find it"}))),
            (100, p("preToolUse", task.clone())),
            (
                150,
                p(
                    "subagentStart",
                    json!({"subagent_id": "sub-1", "subagent_type": "explore",
                "task": "find the bug", "tool_call_id": "task_1", "parent_conversation_id": CONV}),
                ),
            ),
            (300, own),
            (700, own_end),
            (
                900,
                p(
                    "subagentStop",
                    json!({"subagent_type": "explore", "status": "completed",
                "summary": "in a.rs", "duration_ms": 750}),
                ),
            ),
            (950, p("postToolUse", task)),
            (1_000, p("stop", json!({"status": "completed"}))),
        ],
        10_000,
    );
    assert_eq!(a.sessions.len(), 1, "the sub-agent's session is forgotten");
    let spans = spans(&records);
    let call = tool(&spans, "Task");
    let agents = op(&spans, OP_INVOKE_AGENT);
    let child = agents
        .iter()
        .find(|s| s.parent_span_id == Some(call.span_id))
        .expect("the sub-agent under its Task call");
    assert_eq!(
        (child.start_ns, child.end_ns),
        ((T0 + 150) * MS, (T0 + 900) * MS)
    );
    let grep = tool(&spans, "Grep");
    assert_eq!(
        grep.parent_span_id,
        Some(child.span_id),
        "its own calls under it"
    );
}

#[test]
fn a_sub_agent_whose_call_was_not_seen_gets_one_and_a_killed_turn_stays_unfinished() {
    let (a, mut records) = run(
        &[
            (0, p("beforeSubmitPrompt", json!({"prompt": "look"}))),
            (
                100,
                p(
                    "subagentStart",
                    json!({"subagent_id": "sub-2", "subagent_type": "explore", "task": "look"}),
                ),
            ),
            (200, p("preToolUse", shell("tool_9"))),
        ],
        3_000,
    );
    let mut a = a;
    a.abandon(CONV, T0 + 9_000, &mut NoTranscripts, &mut records);
    assert_eq!(a.sessions.len(), 0);
    let spans = spans(&records);
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    assert_eq!(roots.len(), 1);
    assert_eq!(roots[0].attr(ALBEDO_UNFINISHED), Some(&Attr::Bool(true)));
    assert_eq!(roots[0].end_ns, (T0 + 9_000) * MS);
    let running = tool(&spans, "Shell");
    assert_eq!(
        running.end_ns,
        (T0 + 9_000) * MS,
        "ends when the agent was last seen"
    );
    let task = tool(&spans, "Task");
    assert!(op(&spans, OP_INVOKE_AGENT)
        .iter()
        .any(|s| s.parent_span_id == Some(task.span_id)));
}

#[test]
fn the_journal_names_the_conversation_as_the_session_and_keeps_no_email() {
    let sent = json!({"conversation_id": "c-1", "session_id": "s-9", "hook_event_name": "sessionEnd",
        "user_email": "dev@example.com", "reason": "window_close"});
    let kept: Value = serde_json::from_str(&journaled(&sent.to_string()).unwrap()).unwrap();
    assert_eq!(kept["session_id"], "c-1");
    assert_eq!(kept["cursor_session_id"], "s-9");
    assert!(kept.get("user_email").is_none());
    assert_eq!(conversation(&sent.to_string()).as_deref(), Some("c-1"));
    // A sub-agent's hook that names its parent goes in the parent's journal.
    let sub = json!({"conversation_id": "sub-1", "parent_conversation_id": "c-1", "hook_event_name": "preToolUse"});
    assert_eq!(conversation(&sub.to_string()).as_deref(), Some("c-1"));
    // A field of an unexpected type loses nothing else.
    let odd: Payload =
        serde_json::from_value(json!({"conversation_id": "c-1", "hook_event_name": "stop",
        "status": 3, "workspace_roots": "/w", "duration": "long", "loop_count": null}))
        .unwrap();
    assert_eq!((odd.session(), odd.status.as_deref()), ("c-1", None));
}

#[test]
fn every_event_installed_is_one_cursor_knows() {
    for event in HOOK_EVENTS {
        assert!(KNOWN_EVENTS.contains(event), "{event}");
    }
}
