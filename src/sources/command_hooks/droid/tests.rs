//! Droid's adapter on a session recorded from the real CLI (0.215.0, `droid exec` against a
//! local model of the user's own, a stop hook blocking once): each hook is handed the
//! session file as it stood when that hook ran (Droid records every hook run in it).

use serde_json::{json, Value};

use super::{transcript, Adapter, Payload};
use crate::protocol::{Event, Record};
use crate::sources::command_hooks::engine::AgentRules;
use crate::sources::command_hooks::engine::files::Transcripts;

const RECORDED: &str = include_str!("recorded/stop_blocked.jsonl");
const PATH: &str = "/h/.factory/sessions/-p/4ed9e04e.jsonl";
const SESSION: &str = "4ed9e04e-8ea8-4dba-899b-b00d4de996c6";

/// The session file up to a hook's own line, and the settings Droid had written by then.
struct AsItStood {
    file: String,
    settings: String,
}

impl Transcripts for AsItStood {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        let text = if path == PATH { &self.file } else { &self.settings };
        text.as_bytes()[(offset as usize).min(text.len())..].to_vec()
    }
}

/// The settings after `calls` model calls of the recorded run (each: 120 tokens in, 20 of
/// them read from the cache, 15 out; Droid counts the input without the cache).
fn settings(calls: u64) -> String {
    let last = if calls > 0 { (100, 15, 20) } else { (0, 0, 0) };
    json!({"providerLock": "generic-chat-completion-api",
        "tokenUsage": {"inputTokens": 100 * calls, "outputTokens": 15 * calls,
            "cacheCreationTokens": 0, "cacheReadTokens": 20 * calls, "thinkingTokens": 0},
        "lastCallTokenUsage": {"inputTokens": last.0, "outputTokens": last.1, "cacheReadTokens": last.2}})
    .to_string()
}

/// The file up to and including the `n`th line Droid wrote for hook `event`.
fn up_to_hook(event: &str, n: usize) -> String {
    let mut seen = 0;
    let mut out = String::new();
    for line in RECORDED.lines() {
        out.push_str(line);
        out.push('\n');
        let v: Value = serde_json::from_str(line).unwrap();
        if v["message"]["hookEventName"] == event {
            seen += 1;
            if seen == n {
                return out;
            }
        }
    }
    panic!("no hook line {n} for {event}")
}

fn hook(event: &str, extra: Value) -> Payload {
    let mut p = json!({"session_id": SESSION, "transcript_path": PATH, "cwd": "/p",
        "permission_mode": "auto-low", "hook_event_name": event});
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    Payload::parse(&p.to_string()).unwrap()
}

/// The recorded run, hook by hook, the settings holding the usage of `calls[i]` model calls
/// at hook `i`.
fn play(calls: [u64; 6]) -> Vec<Record<'static>> {
    let shell = json!({"command": "echo hello-from-droid", "riskLevel": "low", "riskLevelReason": "echo"});
    let steps = [
        ("SessionStart", 1, json!({"source": "startup"})),
        ("PreToolUse", 1, json!({"tool_name": "Execute", "tool_input": shell})),
        ("PostToolUse", 1, json!({"tool_name": "Execute", "tool_input": shell,
            "tool_response": "hello-from-droid\n\n\n[Process exited with code 0]"})),
        ("Stop", 1, json!({"stop_hook_active": false})),
        ("Stop", 2, json!({"stop_hook_active": true})),
        ("SessionEnd", 1, json!({"reason": "other"})),
    ];
    let mut adapter = Adapter::new(1_000);
    let mut out = Vec::new();
    for (i, (event, n, extra)) in steps.into_iter().enumerate() {
        let mut files = AsItStood {
            file: up_to_hook(event, n),
            settings: settings(calls[i]),
        };
        let at = 1_796_622_409_700 + 100 * i as u64;
        adapter.take(hook(event, extra), at, &mut files, &mut out);
    }
    assert!(adapter.readings.is_empty(), "an ended session is forgotten");
    out
}

/// Usage as the settings had it at each hook: as soon as each answer (the daemon read late),
/// and as Droid 0.215.0 writes it with a stop hook blocking once (each answer's a hook late,
/// the last only by the session's end).
const AT_ONCE: [u64; 6] = [0, 1, 1, 2, 3, 3];
const AS_DROID_WRITES: [u64; 6] = [0, 1, 1, 1, 2, 3];

#[test]
fn a_blocked_stop_stays_one_turn_with_its_call_by_its_own_id_and_each_model_call_once() {
    for calls in [AT_ONCE, AS_DROID_WRITES] {
        one_turn_each_call_once(play(calls));
    }
}

fn one_turn_each_call_once(out: Vec<Record<'static>>) {
    let prompts: Vec<_> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Prompted { text, .. } => Some(text.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts, ["run echo"], "the prompt from the file, once; the block's reason is none");
    let called: Vec<_> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) => Some((c.call.id.to_string(), c.call.name.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(called, [("call_1".to_string(), "Execute".to_string())]);
    let sent: Vec<_> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 3, "three answers, each once: {sent:#?}");
    for c in &sent {
        assert_eq!((c.usage.input_tokens, c.usage.output_tokens, c.usage.cache_read_tokens), (100, 15, 20));
        assert_eq!(c.request.model, "custom:Mock-Local-0");
        assert!(c.started_ms < c.finished_ms, "{c:?}");
    }
    // The first call ran from the prompt's line to the answer's, as Droid timed them.
    let ms = |s: &str| crate::sources::command_hooks::engine::records::rfc3339_ms(s).unwrap();
    assert_eq!(sent[0].started_ms, ms("2026-12-07T05:46:49.734Z"));
    assert_eq!(sent[0].finished_ms, ms("2026-12-07T05:46:49.863Z"));
    // The continuation's call began at the block's reason.
    assert_eq!(sent[2].started_ms, ms("2026-12-07T05:46:50.167Z"));
    assert!(matches!(out.last().map(|r| &r.event), Some(Event::Closed { .. })), "{:?}", out.last());
}

#[test]
fn calls_read_before_their_usage_wait_for_it_and_the_sum_is_exact() {
    let mut adapter = Adapter::new(1_000);
    let mut out = Vec::new();
    // The answer is in the file, its usage not yet in the settings.
    let mut files = AsItStood {
        file: up_to_hook("PreToolUse", 1),
        settings: settings(0),
    };
    let shell = json!({"command": "echo hello-from-droid", "riskLevel": "low", "riskLevelReason": "echo"});
    adapter.take(hook("PreToolUse", json!({"tool_name": "Execute", "tool_input": shell})), 10, &mut files, &mut out);
    let sent = |out: &[Record<'_>]| out.iter().filter(|r| matches!(r.event, Event::CallSent(_))).count();
    assert_eq!(sent(&out), 0, "it waits");
    // Two more answers by the second stop, and the usage of all three.
    files.file = up_to_hook("Stop", 2);
    files.settings = settings(3);
    adapter.take(hook("Stop", json!({"stop_hook_active": true})), 20, &mut files, &mut out);
    // Two calls' worth or more: the oldest two go out, the newest waits on; the session's end
    // sends it with what is left, so that the sum is exact.
    assert_eq!(sent(&out), 2);
    files.file = RECORDED.to_string();
    adapter.take(hook("SessionEnd", json!({"reason": "other"})), 30, &mut files, &mut out);
    let usage: Vec<_> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::CallSent(c) => Some(c.usage.input_tokens),
            _ => None,
        })
        .collect();
    assert_eq!(usage.iter().sum::<u64>(), 300, "{usage:?}");
    assert_eq!(usage.len(), 3, "each call once");
}

#[test]
fn a_line_says_what_it_is() {
    let lines: Vec<_> = RECORDED.lines().filter_map(|l| transcript::line(l.as_bytes())).collect();
    let prompts = lines.iter().filter(|l| matches!(l, transcript::Line::Prompt { .. })).count();
    let answers = lines.iter().filter(|l| matches!(l, transcript::Line::Answer(_))).count();
    assert_eq!((prompts, answers), (1, 3));
    assert_eq!(transcript::line(b"not json"), None);
    assert_eq!(transcript::line(br#"{"type":"todo_state","todos":[]}"#), None);
    assert_eq!(
        transcript::settings_path("/h/s/abc.jsonl"),
        "/h/s/abc.settings.json"
    );
}
