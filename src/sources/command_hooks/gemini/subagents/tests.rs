//! Sub-agents on hooks shaped as Gemini CLI 0.61.0 fired them for a `generalist` sub-agent.

use serde_json::json;

use super::super::tests::{chunk, model_request, payload, run, SID};
use crate::protocol::Event;

#[test]
fn the_hooks_inside_an_invoke_agent_call_are_its_sub_agents_nested_under_it() {
    let invoke = json!({"tool_name": "invoke_agent",
        "tool_input": {"agent_name": "generalist", "prompt": "Run `sleep 1; echo hi`."}});
    let shell =
        json!({"tool_name": "run_shell_command", "tool_input": {"command": "sleep 1; echo hi"}});
    let done = json!({"tool_name": "complete_task", "tool_input": {"result": {"response": "hi"}}});
    let with = |v: &serde_json::Value, response: serde_json::Value| {
        let mut v = v.clone();
        v["tool_response"] = response;
        v
    };
    // As Gemini CLI 0.61.0 fired them for a `generalist` sub-agent (the helper's run).
    let out = run([
        payload(
            "BeforeAgent",
            100,
            json!({"prompt": "DELEGATE: look around"}),
        ),
        payload("BeforeModel", 200, model_request()),
        payload("AfterModel", 300, chunk("", true)),
        payload("BeforeTool", 310, invoke.clone()),
        payload("BeforeModel", 320, model_request()),
        payload("AfterModel", 330, chunk("", true)),
        payload("BeforeTool", 340, shell.clone()),
        payload(
            "AfterTool",
            1_350,
            with(&shell, json!({"llmContent": "Output: hi"})),
        ),
        payload("BeforeModel", 1_360, model_request()),
        payload("AfterModel", 1_370, chunk("", true)),
        payload("BeforeTool", 1_380, done.clone()),
        payload(
            "AfterTool",
            1_390,
            with(&done, json!({"llmContent": "Output submitted"})),
        ),
        payload(
            "AfterTool",
            1_400,
            with(&invoke, json!({"llmContent": [{"text": "finished"}]})),
        ),
        payload("BeforeModel", 1_410, model_request()),
        payload("AfterModel", 1_420, chunk("done", true)),
        payload(
            "AfterAgent",
            1_430,
            json!({"prompt": "DELEGATE: look around"}),
        ),
    ]);
    let child = out
        .iter()
        .find_map(|r| match &r.event {
            Event::Session(s) if s.parent.is_some() => Some((r.session.clone(), s)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a sub-agent opens: {out:?}"));
    let parent = child.1.parent.as_ref().unwrap();
    let invoke_id = out
        .iter()
        .find_map(|r| match &r.event {
            Event::Calling { call, .. } if call.name == "invoke_agent" => Some(call.id.to_string()),
            _ => None,
        })
        .unwrap();
    assert_eq!((&*parent.session, &*parent.call), (SID, invoke_id.as_str()));
    assert_eq!(child.1.agent.as_deref(), Some("generalist"));
    let of = |session: &str, f: fn(&Event) -> bool| {
        out.iter()
            .filter(|r| r.session == session && f(&r.event))
            .count()
    };
    // Two model calls and two tool calls are the sub-agent's; two model calls and the
    // `invoke_agent` call are the parent's.
    assert_eq!(
        of(&child.0, |e| matches!(e, Event::CallSent(_))),
        2,
        "{out:?}"
    );
    assert_eq!(
        of(&child.0, |e| matches!(e, Event::Called(_))),
        2,
        "{out:?}"
    );
    assert_eq!(of(SID, |e| matches!(e, Event::CallSent(_))), 2, "{out:?}");
    assert_eq!(
        of(
            SID,
            |e| matches!(e, Event::Called(c) if c.call.name == "invoke_agent")
        ),
        1
    );
    let slept = out.iter().find_map(|r| match &r.event {
        Event::Called(c) if c.call.name == "run_shell_command" => Some((r.session.clone(), c)),
        _ => None,
    });
    assert!(slept.is_some_and(|(s, c)| s == child.0 && c.finished_ms - c.started_ms == 1_010));
    // The sub-agent closes before the call that ran it ends.
    let closed = out
        .iter()
        .position(|r| r.session == child.0 && matches!(r.event, Event::Closed { .. }));
    let ended = out
        .iter()
        .position(|r| matches!(&r.event, Event::Called(c) if c.call.name == "invoke_agent"));
    assert!(closed.is_some() && closed < ended, "{out:?}");
}

#[test]
fn a_sub_agent_still_running_when_the_session_ends_is_closed_with_it() {
    let invoke = json!({"tool_name": "invoke_agent", "tool_input": {"agent_name": "generalist", "prompt": "go"}});
    let out = run([
        payload("BeforeAgent", 100, json!({"prompt": "DELEGATE"})),
        payload("BeforeTool", 110, invoke),
        payload("BeforeModel", 120, model_request()),
        payload("SessionEnd", 130, json!({"reason": "exit"})),
    ]);
    let closed: Vec<&str> = out
        .iter()
        .filter(|r| matches!(r.event, Event::Closed { .. }))
        .map(|r| r.session.as_ref())
        .collect();
    assert_eq!(closed.len(), 2, "{out:?}");
    // Its model call in flight is exported, with an error.
    assert!(out
        .iter()
        .any(|r| r.session.starts_with(&format!("{SID}/agent-"))
            && matches!(&r.event, Event::CallSent(c) if c.error.is_some())));
    assert!(closed[0].starts_with(&format!("{SID}/agent-")) && closed[1] == SID);
}

/// Two sub-agents started side by side: each is a session under its own `invoke_agent` call,
/// and each call ends when its own `AfterTool` (matched by its input) says so.
#[test]
fn side_by_side_sub_agents_each_nest_under_their_own_call() {
    let invoke = |name: &str| {
        json!({"tool_name": "invoke_agent",
            "tool_input": {"agent_name": name, "prompt": format!("work as {name}")}})
    };
    let ended = |name: &str| {
        let mut v = invoke(name);
        v["tool_response"] = json!({"llmContent": [{"text": "finished"}]});
        v
    };
    let out = run([
        payload("BeforeAgent", 100, json!({"prompt": "two at once"})),
        payload("BeforeModel", 200, model_request()),
        payload("AfterModel", 300, chunk("", true)),
        payload("BeforeTool", 310, invoke("a")),
        payload("BeforeTool", 311, invoke("b")),
        payload("BeforeModel", 320, model_request()),
        payload("AfterModel", 330, chunk("", true)),
        // The first started ends last.
        payload("AfterTool", 3_000, ended("b")),
        payload("AfterTool", 5_000, ended("a")),
        payload("BeforeModel", 5_100, model_request()),
        payload("AfterModel", 5_200, chunk("done", true)),
    ]);
    // Both calls are the top session's, each ended by its own AfterTool.
    let calls: Vec<(String, u64)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) if c.call.name == "invoke_agent" => {
                Some((r.session.to_string(), c.finished_ms))
            }
            _ => None,
        })
        .collect();
    let t = |ms| super::super::tests::T0 + ms;
    assert_eq!(
        calls,
        [(SID.to_string(), t(3_000)), (SID.to_string(), t(5_000))],
        "two calls of the parent, each with its own end"
    );
    // Each sub-agent under its own call, closed at that call's end.
    let parents: Vec<(String, String)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Session(info) => info
                .parent
                .as_ref()
                .map(|p| (p.session.to_string(), p.call.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        parents,
        [
            (SID.to_string(), "call-1".to_string()),
            (SID.to_string(), "call-2".to_string())
        ]
    );
}
