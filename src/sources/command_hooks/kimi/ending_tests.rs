//! How Kimi's turns end with calls in flight, each way a turn ends: what is still running then
//! ends with the turn (the shared open turn's flush), a model call with its tokens if its
//! answer came, and a turn its wire says ended ends there.

use crate::sources::command_hooks::engine::AgentRules;
use serde_json::{json, Value};

use super::*;
use crate::protocol::{CallSent, Called, Event};

const HOME: &str = "/home/u/.kimi-code";
const SID: &str = "s1";
const DIR: &str = "/home/u/.kimi-code/sessions/wd/s1";
const T: u64 = 1_796_000_000_000;

/// Kimi's files: the session index, the main agent's wire, and sub-agent `agent-0`'s.
#[derive(Default)]
struct Wires {
    main: String,
    sub: String,
}

impl Wires {
    fn add(&mut self, agent: &str, at: u64, mut v: Value) {
        v["time"] = (T + at).into();
        v["agentId"] = agent.into();
        let wire = if agent == "main" {
            &mut self.main
        } else {
            &mut self.sub
        };
        wire.push_str(&format!("{v}\n"));
    }

    fn call(&mut self, agent: &str, at: u64, id: &str, name: &str) {
        let e = json!({"type": "tool.call", "toolCallId": id, "name": name, "args": {}});
        self.add(
            agent,
            at,
            json!({"type": "context.append_loop_event", "event": e}),
        );
    }

    /// A model call asked at `at` and answered 10 ms later, with 10 tokens in and 5 out.
    fn model(&mut self, agent: &str, at: u64) {
        let req = json!({"type": "llm.request", "provider": "openai", "model": "kimi-test"});
        self.add(agent, at, req);
        let usage = json!({"inputOther": 10, "output": 5});
        self.add(
            agent,
            at + 10,
            json!({"type": "usage.record", "usage": usage}),
        );
    }
}

impl Transcripts for Wires {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        let text = match path {
            p if p == format!("{HOME}/session_index.jsonl") => {
                format!("{{\"sessionId\":\"{SID}\",\"sessionDir\":\"{DIR}\"}}\n")
            }
            p if p == wire_of(DIR, "main") => self.main.clone(),
            p if p == wire_of(DIR, "agent-0") => self.sub.clone(),
            _ => String::new(),
        };
        text.as_bytes()[(offset as usize).min(text.len())..].to_vec()
    }
}

fn hook(a: &mut Adapter, at: u64, event: &str, w: &mut Wires, out: &mut Vec<Record<'static>>) {
    let p = Payload {
        hook_event_name: event.into(),
        session_id: SID.into(),
        prompt: Some(json!("do it")),
        kimi_home: Some(HOME.into()),
        ..Default::default()
    };
    a.take(p, T + at, w, out);
}

fn called<'a>(out: &'a [Record<'static>], id: &str) -> Option<&'a Called<'static>> {
    out.iter().find_map(|r| match &r.event {
        Event::Called(c) if c.call.id == id => Some(c),
        _ => None,
    })
}

fn models<'a>(out: &'a [Record<'static>]) -> Vec<&'a CallSent<'static>> {
    out.iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Each turn's end in `session`: when, and why.
fn ends(out: &[Record<'static>], session: &str) -> Vec<(u64, String)> {
    out.iter()
        .filter(|r| r.session == session)
        .filter_map(|r| match &r.event {
            Event::TurnEnded { at_ms, reason } => {
                Some((at_ms - T, reason.as_deref().unwrap_or_default().to_string()))
            }
            _ => None,
        })
        .collect()
}

/// The user stops Kimi mid-call (its `Interrupt` hook, then `turn.ended` cancelled): the call
/// was cut short, failed at the turn's end; the model call before it keeps its tokens.
#[test]
fn a_call_running_when_the_user_interrupts_ends_failed_with_the_turn() {
    let (mut a, mut w, mut out) = (Adapter::new(), Wires::default(), Vec::new());
    hook(&mut a, 0, "UserPromptSubmit", &mut w, &mut out);
    w.model("main", 10);
    w.call("main", 30, "call_1", "Bash");
    a.tick(T + 50, &mut w, &mut out);
    hook(&mut a, 100, "Interrupt", &mut w, &mut out);
    w.add(
        "main",
        110,
        json!({"type": "turn.ended", "reason": "cancelled"}),
    );
    a.tick(T + 200, &mut w, &mut out);
    let c = called(&out, "call_1").expect("the running call ends");
    assert!(c.failed && !c.refused);
    assert_eq!(c.finished_ms, T + 110);
    let [m] = models(&out)[..] else {
        panic!("one model call")
    };
    assert_eq!((m.usage.input_tokens, m.finished_ms), (10, T + 20));
    assert!(m.error.is_none());
    assert_eq!(ends(&out, SID), [(110, "interrupted".to_string())]);
    assert!(a.at_rest(SID));
}

/// The next prompt with no stop: the turn was cut short there, and so was its running call.
#[test]
fn the_next_prompt_ends_the_running_call_with_the_turn_it_cut_short() {
    let (mut a, mut w, mut out) = (Adapter::new(), Wires::default(), Vec::new());
    hook(&mut a, 0, "UserPromptSubmit", &mut w, &mut out);
    w.model("main", 10);
    w.call("main", 30, "call_1", "Bash");
    w.add(
        "main",
        40,
        json!({"type": "llm.request", "model": "kimi-test"}),
    );
    hook(&mut a, 500, "UserPromptSubmit", &mut w, &mut out);
    let c = called(&out, "call_1").expect("the running call ends");
    assert!(c.failed && c.finished_ms == T + 500);
    // The answered call keeps its tokens; the one in flight is an error at the turn's end.
    let got: Vec<(u64, bool)> = models(&out)
        .iter()
        .map(|m| (m.finished_ms - T, m.error.is_some()))
        .collect();
    assert_eq!(got, [(20, false), (500, true)]);
    assert_eq!(ends(&out, SID), [(500, "interrupted".to_string())]);
    assert!(!a.at_rest(SID));
}

/// A prompt read with the last turn's `turn.ended` not yet read (no tick between, as when a
/// daemon catches up): that turn ended where its wire says, as it says, not at the prompt.
#[test]
fn a_turn_its_wire_says_ended_ends_there_whatever_ends_it() {
    let (mut a, mut w, mut out) = (Adapter::new(), Wires::default(), Vec::new());
    hook(&mut a, 0, "UserPromptSubmit", &mut w, &mut out);
    w.model("main", 10);
    w.add(
        "main",
        60,
        json!({"type": "turn.ended", "reason": "completed"}),
    );
    hook(&mut a, 900, "UserPromptSubmit", &mut w, &mut out);
    assert_eq!(ends(&out, SID), [(60, "end_turn".to_string())]);
    hook(&mut a, 1_000, "SessionEnd", &mut w, &mut out);
    assert_eq!(ends(&out, SID)[1], (1_000, "interrupted".to_string()));
}

/// A sub-agent at work when its parent's turn is cut short: its running call fails and its
/// turn is cut short with the parent's, then its session closes.
#[test]
fn a_sub_agents_running_call_ends_with_its_parents_turn() {
    let (mut a, mut w, mut out) = (Adapter::new(), Wires::default(), Vec::new());
    hook(&mut a, 0, "UserPromptSubmit", &mut w, &mut out);
    w.call("main", 10, "call_a", "Agent");
    let spawned = json!({"type": "subagent.spawned", "subagentId": "agent-0",
        "parentToolCallId": "call_a", "callerAgentId": "main"});
    w.add("main", 20, spawned);
    let prompt = json!({"type": "turn.prompt", "input": [{"type": "text", "text": "go"}]});
    w.add("agent-0", 25, prompt);
    w.call("agent-0", 30, "call_b", "Bash");
    a.tick(T + 40, &mut w, &mut out);
    hook(&mut a, 300, "UserPromptSubmit", &mut w, &mut out);
    let sub = crate::sources::command_hooks::engine::session_key::sub_agent(SID, "agent-0");
    let b = called(&out, "call_b").expect("the sub-agent's running call ends");
    assert!(b.failed && b.finished_ms == T + 300);
    assert_eq!(ends(&out, &sub), [(300, "interrupted".to_string())]);
    let closed = out.iter().any(|r| {
        r.session == sub && matches!(r.event, Event::Closed { at_ms } if at_ms == T + 300)
    });
    assert!(closed, "the sub-agent's session closes");
    let call = called(&out, "call_a").expect("the Agent call ends");
    assert!(call.failed && call.finished_ms == T + 300);
}

/// Kimi gone mid-call: the model call in flight ends, an error, when Kimi was last seen; the
/// running call is left open for the session's close, unfinished; no turn end is made up.
#[test]
fn a_killed_kimis_calls_end_unseen_when_it_was_last_seen() {
    let (mut a, mut w, mut out) = (Adapter::new(), Wires::default(), Vec::new());
    hook(&mut a, 0, "UserPromptSubmit", &mut w, &mut out);
    w.call("main", 10, "call_1", "Bash");
    w.add(
        "main",
        50,
        json!({"type": "llm.request", "model": "kimi-test"}),
    );
    a.abandon(SID, T + 40, &mut w, &mut out);
    assert!(called(&out, "call_1").is_none());
    let [m] = models(&out)[..] else {
        panic!("one model call")
    };
    assert!(m.error.is_some() && m.finished_ms == T + 50);
    assert!(ends(&out, SID).is_empty());
    assert_eq!(a.kept(), 0);
}
