//! A turn that ends with no `Stop` (Esc sends nothing; a killed agent sends nothing): it keeps
//! its own model calls, from the transcript, and the next turn gets only its own.

use super::*;
use crate::sources::command_hooks::engine::AgentRules;

/// The recorded `bash_write` session up to (not with) its `Stop`: the user pressed Esc, which
/// sends no hook; then `last` is pushed, and the turns are assembled.
fn interrupted_then(
    last: impl FnOnce(&mut Adapter, u64, &mut Fixture, &mut Vec<Record<'static>>),
) -> Output {
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/claude-code/bash_write/hooks.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut adapter = Adapter::new(15_000);
    let mut records = Vec::new();
    let mut transcripts = Fixture("bash_write");
    let mut at = 0;
    for line in text.lines() {
        let r: Recorded = serde_json::from_str(line).unwrap();
        let p: Payload = serde_json::from_str(r.payload.get()).unwrap();
        if p.hook_event_name == "Stop" {
            break;
        }
        at = (r.received_unix_s * 1000.0).round() as u64;
        adapter.take(p, at, &mut transcripts, &mut records);
    }
    last(&mut adapter, at, &mut transcripts, &mut records);
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for r in &records {
        asm.push(r, &mut out);
    }
    asm.finish(&mut out);
    assert_eq!(check_tree(&out.spans), Ok(()));
    out
}

fn chats_by_trace(out: &Output) -> Vec<(crate::assemble::span::TraceId, usize)> {
    let mut roots: Vec<&Span> = out
        .spans
        .iter()
        .filter(|x| x.parent_span_id.is_none())
        .collect();
    roots.sort_by_key(|r| r.start_ns);
    roots
        .iter()
        .map(|r| {
            let chats = out
                .spans
                .iter()
                .filter(|x| x.trace_id == r.trace_id && s(x, GEN_AI_OPERATION_NAME) == Some("chat"))
                .inspect(|c| assert!(c.start_ns >= r.start_ns, "a model call before its turn"))
                .count();
            (r.trace_id, chats)
        })
        .collect()
}

/// Esc sends no hook: the interrupted turn keeps its own model calls (read from the
/// transcript when the next prompt comes), and the next turn gets only its own.
#[test]
fn an_interrupted_turn_keeps_its_model_calls_and_the_next_gets_none_of_them() {
    let out = interrupted_then(|a, at, t, records| {
        let next = Payload {
            session_id: "6d09e084-1b81-4594-8f08-206a088c3e66".into(),
            hook_event_name: "UserPromptSubmit".into(),
            prompt: Some("something else".into()),
            ..Payload::default()
        };
        a.take(next, at + 60_000, t, records);
    });
    let turns = chats_by_trace(&out);
    assert_eq!(turns.len(), 2, "two turns");
    assert_eq!(
        turns[0].1, 3,
        "the interrupted turn's model calls: {turns:?}"
    );
    assert_eq!(turns[1].1, 0, "the next turn has none of them");
}

/// An agent killed mid-turn: its open turn goes out with the model calls its transcript holds.
#[test]
fn a_killed_agents_turn_keeps_its_model_calls() {
    let out = interrupted_then(|a, at, t, records| {
        a.abandon(
            "6d09e084-1b81-4594-8f08-206a088c3e66",
            at + 2_000,
            t,
            records,
        );
    });
    let turns = chats_by_trace(&out);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].1, 3, "the killed turn's model calls");
    let root = out
        .spans
        .iter()
        .find(|x| x.parent_span_id.is_none())
        .unwrap();
    assert_eq!(root.attr(ALBEDO_UNFINISHED), Some(&Value::Bool(true)));
}
