//! Sub-agents (a `task` call's session) and a model call cut off by opencode's exit, on the
//! same recorded shapes as the tests beside them.

use super::*;
use crate::sources::command_hooks::engine::files::NoTranscripts;
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::opencode::subagents::OPENING_GRACE_MS;

const CHILD: &str = "ses_child";

/// A turn that delegates to a sub-agent, its events in the order opencode sends them: the
/// sub-agent's session is created while its call is pending, and the call's running state
/// (the fifth event) names it.
fn delegation() -> Vec<Payload> {
    let child = CHILD;
    // The plugin journals a sub-agent's events under the top session, naming their own.
    let in_child = |name: &str, ms: u64, props: Value| {
        let mut p = event(name, ms, props);
        p.session = Some(child.into());
        p
    };
    // As opencode orders them: the sub-agent's session is created while its call is
    // pending, and the call's running state names it.
    let mut events = vec![
        prompt("msg_u1", 0, "delegate it"),
        message("msg_a1", "msg_u1", 10, None),
        event(
            "message.part.updated",
            15,
            json!({"part": {"type": "tool", "tool": "task",
            "callID": "call_task", "messageID": "msg_a1", "state": {"status": "pending"}}}),
        ),
        in_child(
            "session.created",
            18,
            json!({"info": {"id": child, "parentID": SID, "time": {"created": T0 + 18}}}),
        ),
        event(
            "message.part.updated",
            20,
            json!({"part": {"type": "tool", "tool": "task",
            "callID": "call_task", "messageID": "msg_a1",
            "state": {"status": "running", "input": {"prompt": "look"}, "time": {"start": T0 + 20},
                      "metadata": {"sessionId": child, "parentSessionId": SID}}}}),
        ),
    ];
    events.push(in_child(
        "chat.message",
        31,
        json!({"message": {"id": "msg_cu", "time": {"created": T0 + 31}}, "text": "look"}),
    ));
    events.push(in_child("message.updated", 40, json!({"info": {"id": "msg_c1", "parentID": "msg_cu",
        "role": "assistant", "modelID": "mock-model", "providerID": "mock", "time": {"created": T0 + 40}}})));
    events.push(in_child(
        "message.updated",
        90,
        json!({"info": {"id": "msg_c1", "parentID": "msg_cu",
        "role": "assistant", "modelID": "mock-model", "providerID": "mock", "finish": "stop",
        "time": {"created": T0 + 40, "completed": T0 + 90}, "tokens": tokens(10, 2, 0, 0)}}),
    ));
    events.push(in_child("session.idle", 95, json!({})));
    events.push(event("message.part.updated", 100, json!({"part": {"type": "tool", "tool": "task",
        "callID": "call_task", "messageID": "msg_a1",
        "state": {"status": "completed", "output": "found it", "time": {"start": T0 + 20, "end": T0 + 100}}}})));
    events.push(message(
        "msg_a1",
        "msg_u1",
        10,
        Some((110, tokens(5, 1, 0, 0), "stop")),
    ));
    events.push(event("session.idle", 120, json!({})));
    events
}

#[test]
fn a_sub_agent_nests_under_the_task_call_that_started_it() {
    let (adapter, records) = run(&delegation());
    assert_eq!(adapter.open_turns(), 0);
    check_nested(&records);
}

/// Kilo under load: the sub-agent's prompt (a plugin hook) and first message overtake the
/// running state of the call that started it (an event on opencode's bus).
#[test]
fn a_sub_agent_s_events_before_its_call_runs_wait_for_it() {
    let mut events = delegation();
    let running = events.remove(4);
    assert_eq!(
        running.properties.part.as_ref().unwrap().tool.as_deref(),
        Some("task")
    );
    events.insert(6, running);
    let (adapter, records) = run(&events);
    assert_eq!(adapter.open_turns(), 0);
    check_nested(&records);
}

/// With no call to take it, a sub-agent waits [`OPENING_GRACE_MS`] and then goes out as a
/// turn of its own rather than never.
#[test]
fn a_sub_agent_whose_call_never_runs_opens_after_the_grace() {
    let events: Vec<Payload> = delegation()
        .into_iter()
        .take(7)
        .filter(|p| {
            p.properties
                .part
                .as_ref()
                .is_none_or(|t| t.tool.as_deref() != Some("task"))
        })
        .collect();
    let (mut adapter, mut records) = run(&events);
    let of_child =
        |records: &[Record<'static>]| records.iter().filter(|r| r.session == CHILD).count();
    assert_eq!(of_child(&records), 0, "held: {records:?}");
    adapter.tick(T0 + OPENING_GRACE_MS - 1, &mut NoTranscripts, &mut records);
    assert_eq!(of_child(&records), 0, "held: {records:?}");
    adapter.tick(T0 + OPENING_GRACE_MS, &mut NoTranscripts, &mut records);
    let child: Vec<&Event> = records
        .iter()
        .filter(|r| r.session == CHILD)
        .map(|r| &r.event)
        .collect();
    assert!(
        matches!(child.as_slice(), [Event::Session(info), Event::Prompted { .. }, ..] if info.parent.is_none()),
        "{child:?}"
    );
}

fn check_nested(records: &[Record<'static>]) {
    let child = CHILD;
    let Some(Event::Session(info)) = records
        .iter()
        .find(|r| r.session == child)
        .map(|r| &r.event)
    else {
        panic!("{records:?}")
    };
    let parent = info.parent.as_ref().expect("nested");
    assert_eq!((&*parent.session, &*parent.call), (SID, "call_task"));
    assert!(matches!(
        records.last().map(|r| &r.event),
        Some(Event::TurnEnded { .. })
    ));
    assert!(records
        .iter()
        .any(|r| r.session == child && matches!(r.event, Event::Closed { .. })));

    let spans = spans(records);
    let task = spans
        .iter()
        .find(|s| s.name == "execute_tool task")
        .expect("the task call");
    let sub = spans
        .iter()
        .find(|s| s.name.starts_with("invoke_agent") && s.parent_span_id.is_some())
        .expect("the sub-agent's turn");
    assert_eq!(sub.parent_span_id, Some(task.span_id));
    assert_eq!(sub.trace_id, task.trace_id);
}

#[test]
fn the_agent_gone_closes_its_session_and_its_sub_agents() {
    let mut events = session();
    events.truncate(5);
    let mut child = event(
        "session.created",
        2_590,
        json!({"info": {"id": "ses_c", "parentID": SID,
        "time": {"created": T0 + 2_590}}}),
    );
    child.session = Some("ses_c".into());
    events.push(child);
    events.push(event(
        "message.part.updated",
        2_600,
        json!({"part": {"type": "tool", "tool": "task",
        "callID": "call_task", "messageID": "msg_a1",
        "state": {"status": "running", "input": {}, "time": {"start": T0 + 2_600},
                  "metadata": {"sessionId": "ses_c"}}}}),
    ));
    // A second sub-agent whose call never ran: never opened, so nothing closes it.
    let mut orphan = event(
        "session.created",
        2_700,
        json!({"info": {"id": "ses_o", "parentID": SID}}),
    );
    orphan.session = Some("ses_o".into());
    events.push(orphan);
    events.push(event(EXITED, 3_000, json!({})));
    let (adapter, records) = run(&events);
    assert_eq!(adapter.open_turns(), 0);
    let closed: Vec<&str> = records
        .iter()
        .filter(|r| matches!(r.event, Event::Closed { .. }))
        .map(|r| &*r.session)
        .collect();
    assert_eq!(closed, ["ses_c", SID]);
    let spans = spans(&records);
    let root = spans.iter().find(|s| s.parent_span_id.is_none()).unwrap();
    assert!(root.attr("albedo.unfinished").is_some(), "{root:?}");
}

/// opencode killed while a model call streams, in a sub-agent too: the call goes out as an
/// error (it was dropped), and both sessions close.
#[test]
fn a_model_call_streaming_when_opencode_is_gone_goes_out_as_an_error() {
    let child = "ses_child";
    let mut payloads: Vec<Payload> = session().into_iter().take(3).collect();
    payloads.push(
        serde_json::from_value(json!({"session_id": SID, "session": child,
            "hook_event_name": "session.created", "at_ms": T0 + 2_250,
            "properties": {"sessionID": child, "info": {"id": child, "parentID": SID,
                "time": {"created": T0 + 2_250}}}}))
        .unwrap(),
    );
    payloads.push(
        serde_json::from_value(json!({"session_id": SID, "session": child,
            "hook_event_name": "chat.message", "at_ms": T0 + 2_300,
            "properties": {"message": {"id": "msg_cu", "role": "user", "sessionID": child,
                "time": {"created": T0 + 2_300}}, "text": "sub"}}))
        .unwrap(),
    );
    payloads.push(
        serde_json::from_value(json!({"session_id": SID, "session": child,
            "hook_event_name": "message.updated", "at_ms": T0 + 2_400,
            "properties": {"sessionID": child, "info": {"id": "msg_ca", "parentID": "msg_cu",
                "role": "assistant", "modelID": "mock-model", "providerID": "mock",
                "sessionID": child, "time": {"created": T0 + 2_400}}}}))
        .unwrap(),
    );
    let (mut a, mut out) = run(&payloads);
    a.abandon(SID, T0 + 9_000, &mut NoTranscripts, &mut out);
    let errors: Vec<(&str, u64)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) if c.error.is_some() => Some((r.session.as_ref(), c.finished_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [(child, T0 + 9_000), (SID, T0 + 9_000)],
        "each session's streaming call, ended when opencode was last seen"
    );
    let closed = out
        .iter()
        .filter(|r| matches!(r.event, Event::Closed { .. }))
        .count();
    assert_eq!(closed, 2);
}
