//! The assembly on its own: protocol lines in, span trees checked field by field.

use std::collections::{HashMap, HashSet};

use super::semconv::*;
use super::span::{SpanKind, Status, Value};
use super::*;
use crate::ingest::decode_line;

fn run_with(config: AssembleConfig, lines: &[&str]) -> Output {
    let mut asm = Assembler::new(config);
    let mut out = Output::default();
    for line in lines {
        let rec = decode_line(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
        asm.push(&rec, &mut out);
    }
    asm.finish(&mut out);
    assert_no_dangling_parents(&out.spans);
    out
}

fn run(lines: &[&str]) -> Output {
    run_with(AssembleConfig::default(), lines)
}

/// The invariant: unique ids, every parent id names a span emitted in the same trace.
fn assert_no_dangling_parents(spans: &[Span]) {
    if let Err(e) = check_tree(spans) {
        panic!("{e}");
    }
}

fn by_name<'a>(out: &'a Output, name: &str) -> &'a Span {
    let found: Vec<_> = out.spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(
        found.len(),
        1,
        "exactly one span named {name}: {:#?}",
        names(out)
    );
    found[0]
}

fn names(out: &Output) -> Vec<&str> {
    out.spans.iter().map(|s| s.name.as_str()).collect()
}

fn str_attr<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    s.attr(key).and_then(Value::as_str)
}

fn int_attr(s: &Span, key: &str) -> Option<i64> {
    match s.attr(key) {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    }
}

fn bool_attr(s: &Span, key: &str) -> Option<bool> {
    match s.attr(key) {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

const MS: u64 = 1_000_000;

#[test]
fn a_turn_with_a_cell_and_a_model_call_is_one_tree() {
    let out = run(&[
        r#"{"v":1,"kind":"session","session":"s1","at_ms":999,"agent":"coder","model":"claude-x","workspace":"/w"}"#,
        r#"{"v":1,"kind":"prompted","session":"s1","at_ms":1000,"text":"fix it"}"#,
        r#"{"v":1,"kind":"call_sent","session":"s1","id":"m1","request":{"model":"claude-x","max_tokens":100},"response":{"id":"msg_1","model":"claude-x-1","stop_reason":"tool_use"},"usage":{"input_tokens":10,"output_tokens":5,"cache_read_tokens":100,"cache_write_tokens":20},"started_ms":1001,"finished_ms":1500,"first_token_ms":1100}"#,
        r#"{"v":1,"kind":"calling","session":"s1","at_ms":1501,"call":{"id":"c1","name":"code","arguments":{"code":"run('ls')"},"within":null}}"#,
        r#"{"v":1,"kind":"calling","session":"s1","at_ms":1510,"call":{"id":"c2","name":"run","arguments":{"command":"ls"},"within":"c1"}}"#,
        r#"{"v":1,"kind":"called","session":"s1","call":{"id":"c2","name":"run","arguments":{"command":"ls"},"within":"c1"},"output":{"exit_code":0,"timed_out":false},"started_ms":1510,"finished_ms":1600}"#,
        r#"{"v":1,"kind":"called","session":"s1","call":{"id":"c1","name":"code","arguments":{"code":"run('ls')"},"within":null},"output":"done","started_ms":1501,"finished_ms":1700}"#,
        r#"{"v":1,"kind":"stopping","session":"s1","at_ms":1800,"reply":"fixed","held":0}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s1","at_ms":1900,"reason":"end_turn"}"#,
    ]);
    assert_eq!(
        names(&out),
        [
            "chat claude-x",
            "execute_tool run",
            "execute_tool code",
            "invoke_agent coder"
        ]
    );
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    let root = by_name(&out, "invoke_agent coder");
    let chat = by_name(&out, "chat claude-x");
    let code = by_name(&out, "execute_tool code");
    let run = by_name(&out, "execute_tool run");
    for s in &out.spans {
        assert_eq!(s.trace_id, root.trace_id, "one trace per turn");
        assert_eq!(str_attr(s, SESSION_ID), Some("s1"));
        assert_eq!(str_attr(s, GEN_AI_CONVERSATION_ID), Some("s1"));
    }
    assert_eq!(root.parent_span_id, None);
    assert_eq!(chat.parent_span_id, Some(root.span_id));
    assert_eq!(code.parent_span_id, Some(root.span_id));
    assert_eq!(
        run.parent_span_id,
        Some(code.span_id),
        "the inner call nests in its cell"
    );

    assert_eq!((root.start_ns, root.end_ns), (1000 * MS, 1900 * MS));
    assert_eq!((chat.start_ns, chat.end_ns), (1001 * MS, 1500 * MS));
    assert_eq!((code.start_ns, code.end_ns), (1501 * MS, 1700 * MS));
    assert_eq!((run.start_ns, run.end_ns), (1510 * MS, 1600 * MS));

    assert_eq!(str_attr(root, GEN_AI_OPERATION_NAME), Some("invoke_agent"));
    assert_eq!(str_attr(root, GEN_AI_AGENT_NAME), Some("coder"));
    assert_eq!(str_attr(root, OPENINFERENCE_SPAN_KIND), Some("AGENT"));
    assert_eq!(str_attr(root, ALBEDO_TURN_REASON), Some("end_turn"));
    assert_eq!(int_attr(root, ALBEDO_TURN_TOOL_CALLS), Some(2));
    assert_eq!(int_attr(root, ALBEDO_TURN_MODEL_CALLS), Some(1));
    assert_eq!(int_attr(root, ALBEDO_TURN_INPUT_TOKENS), Some(130));
    assert_eq!(int_attr(root, ALBEDO_TURN_OUTPUT_TOKENS), Some(5));
    assert_eq!(
        root.attr(INPUT_VALUE),
        None,
        "prompts are not exported by default"
    );
    assert_eq!(root.events.len(), 1);
    assert_eq!(root.events[0].name, EVENT_STOPPING);
    assert_eq!(root.events[0].time_ns, 1800 * MS);
    assert_eq!(root.events[0].attributes[0].value, Value::Int(0));

    assert_eq!(chat.kind, SpanKind::Client);
    assert_eq!(str_attr(chat, GEN_AI_OPERATION_NAME), Some("chat"));
    assert_eq!(str_attr(chat, GEN_AI_PROVIDER_NAME), Some("anthropic"));
    assert_eq!(str_attr(chat, GEN_AI_REQUEST_MODEL), Some("claude-x"));
    assert_eq!(str_attr(chat, GEN_AI_RESPONSE_MODEL), Some("claude-x-1"));
    assert_eq!(str_attr(chat, GEN_AI_RESPONSE_ID), Some("msg_1"));
    assert_eq!(
        chat.attr(GEN_AI_RESPONSE_FINISH_REASONS),
        Some(&Value::StrList(std::sync::Arc::from([
            std::sync::Arc::from("tool_use")
        ])))
    );
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_INPUT_TOKENS),
        Some(130),
        "input includes cache"
    );
    assert_eq!(int_attr(chat, GEN_AI_USAGE_OUTPUT_TOKENS), Some(5));
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS),
        Some(100)
    );
    assert_eq!(
        int_attr(chat, GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS),
        Some(20)
    );
    assert_eq!(int_attr(chat, LLM_TOKEN_COUNT_TOTAL), Some(135));
    assert_eq!(int_attr(chat, ALBEDO_CHAT_TIME_TO_FIRST_TOKEN_MS), Some(99));
    assert_eq!(chat.events[0].time_ns, 1100 * MS);

    assert_eq!(str_attr(run, GEN_AI_TOOL_NAME), Some("run"));
    assert_eq!(str_attr(run, GEN_AI_TOOL_CALL_ID), Some("c2"));
    assert_eq!(str_attr(run, ALBEDO_TOOL_WITHIN), Some("c1"));
    assert_eq!(str_attr(run, INPUT_VALUE), Some(r#"{"command":"ls"}"#));
    assert_eq!(int_attr(run, PROCESS_EXIT_CODE), Some(0));
    assert_eq!(bool_attr(run, ALBEDO_TOOL_TIMED_OUT), Some(false));
    assert_eq!(run.status, Status::Unset);
    assert_eq!(str_attr(code, OUTPUT_VALUE), Some(r#""done""#));
}

#[test]
fn refusals_and_timeouts_are_errors_that_say_why() {
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","arguments":{"command":"rm -rf /"}},"output":"blocked: dangerous","started_ms":2,"finished_ms":2,"refused":true}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"b","name":"run","arguments":{"command":"sleep 999"}},"output":{"exit_code":null,"timed_out":true},"started_ms":3,"finished_ms":9}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":10}"#,
    ]);
    let refused = &out.spans[0];
    assert_eq!(
        refused.status,
        Status::Error("refused by a hook: blocked: dangerous".into())
    );
    assert_eq!(bool_attr(refused, ALBEDO_TOOL_REFUSED), Some(true));
    let timed = &out.spans[1];
    assert_eq!(timed.status, Status::Error("`run` timed out".into()));
    assert_eq!(bool_attr(timed, ALBEDO_TOOL_TIMED_OUT), Some(true));
    assert_eq!(timed.attr(PROCESS_EXIT_CODE), None);
}

#[test]
fn an_inner_call_before_its_cell_is_known_still_nests() {
    // The cell's `calling` was never seen: the inner call names it first.
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"in","name":"files.edit","within":"cell"},"started_ms":5,"finished_ms":6}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"cell","name":"code"},"started_ms":4,"finished_ms":8}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":10}"#,
    ]);
    assert_eq!(
        names(&out),
        [
            "execute_tool files.edit",
            "execute_tool code",
            "invoke_agent albedo"
        ]
    );
    let inner = by_name(&out, "execute_tool files.edit");
    let cell = by_name(&out, "execute_tool code");
    assert_eq!(inner.parent_span_id, Some(cell.span_id));
    assert_eq!(cell.attr(ALBEDO_SYNTHESIZED), None);
}

#[test]
fn a_within_never_seen_gets_a_synthesized_span_covering_its_children() {
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","within":"ghost"},"started_ms":5,"finished_ms":6}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"b","name":"run","within":"ghost"},"started_ms":7,"finished_ms":9}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":10}"#,
    ]);
    let ghost = out
        .spans
        .iter()
        .find(|s| str_attr(s, GEN_AI_TOOL_CALL_ID) == Some("ghost"))
        .expect("a span for the unknown within");
    assert_eq!(ghost.name, "execute_tool");
    assert_eq!((ghost.start_ns, ghost.end_ns), (5 * MS, 9 * MS));
    assert_eq!(bool_attr(ghost, ALBEDO_SYNTHESIZED), Some(true));
    assert_eq!(out.spans[0].parent_span_id, Some(ghost.span_id));
    assert_eq!(out.spans[1].parent_span_id, Some(ghost.span_id));
    assert!(out
        .notes
        .iter()
        .any(|n| matches!(n, Note::UnknownWithin { .. })));
}

#[test]
fn within_cycles_are_broken_at_the_turn() {
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":2,"call":{"id":"a","name":"run","within":"b"}}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":3,"call":{"id":"b","name":"run","within":"a"}}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","within":"b"},"started_ms":2,"finished_ms":4}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"b","name":"run","within":"a"},"started_ms":3,"finished_ms":5}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"c","name":"run","within":"c"},"started_ms":3,"finished_ms":5}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":10}"#,
    ]);
    let root = out.spans.last().unwrap();
    let by_id = |id: &str| {
        out.spans
            .iter()
            .find(|s| str_attr(s, GEN_AI_TOOL_CALL_ID) == Some(id))
            .unwrap()
    };
    assert_eq!(by_id("a").parent_span_id, Some(by_id("b").span_id));
    assert_eq!(by_id("b").parent_span_id, Some(root.span_id));
    assert_eq!(
        by_id("c").parent_span_id,
        Some(root.span_id),
        "a call within itself"
    );
    // Reported when `b` is announced, again when it finishes, and once for `c`.
    assert_eq!(
        out.notes
            .iter()
            .filter(|n| matches!(n, Note::WithinCycle { .. }))
            .count(),
        3
    );
}

#[test]
fn out_of_order_and_missing_events_leave_no_hole() {
    let out = run(&[
        // turn_ended with no turn open
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":1}"#,
        // a turn that starts with a tool call, no prompt
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":20,"finished_ms":10}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":15,"call":{"id":"slow","name":"run"}}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":30}"#,
        // a turn open at end of input
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":40,"text":"again"}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":41,"call":{"id":"b","name":"run"}}"#,
        r#"{"v":1,"kind":"call_sent","session":"s","request":{"model":"m"},"usage":{"input_tokens":1,"output_tokens":1},"started_ms":42,"finished_ms":45}"#,
    ]);
    assert_eq!(
        names(&out),
        [
            "execute_tool run",
            "execute_tool run",
            "invoke_agent albedo",
            "chat m",
            "execute_tool run",
            "invoke_agent albedo"
        ]
    );
    let clamped = &out.spans[0];
    assert_eq!((clamped.start_ns, clamped.end_ns), (20 * MS, 20 * MS));
    assert_eq!(bool_attr(clamped, ALBEDO_TIMING_CLAMPED), Some(true));
    let slow = &out.spans[1];
    assert_eq!(bool_attr(slow, ALBEDO_UNFINISHED), Some(true));
    assert_eq!(
        (slow.start_ns, slow.end_ns),
        (15 * MS, 30 * MS),
        "ends with its turn"
    );
    let first = &out.spans[2];
    assert_eq!(bool_attr(first, ALBEDO_TURN_PROMPTED), Some(false));
    assert_eq!(
        first.start_ns,
        15 * MS,
        "an unprompted turn starts at its first event"
    );
    assert_eq!(first.end_ns, 30 * MS);
    assert_eq!(first.attr(ALBEDO_UNFINISHED), None);
    let second = &out.spans[5];
    assert_eq!(bool_attr(second, ALBEDO_UNFINISHED), Some(true));
    assert_eq!((second.start_ns, second.end_ns), (40 * MS, 45 * MS));
    assert_eq!(second.links.len(), 1, "linked to the previous turn");
    assert_eq!(second.links[0].span_id, first.span_id);
    assert_eq!(second.links[0].trace_id, first.trace_id);
    assert_ne!(second.trace_id, first.trace_id);
    assert_eq!(
        out.spans[4].parent_span_id,
        Some(second.span_id),
        "the open call is closed under its turn"
    );
    assert!(out.notes.contains(&Note::TurnEndedWithoutTurn {
        session: "s".into()
    }));
    assert!(out
        .notes
        .iter()
        .any(|n| matches!(n, Note::EndBeforeStart { .. })));
}

#[test]
fn closed_ends_the_open_turn_and_forgets_the_session() {
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    for line in [
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":2,"call":{"id":"a","name":"run"}}"#,
        r#"{"v":1,"kind":"closed","session":"s","at_ms":9}"#,
    ] {
        asm.push(&decode_line(line.as_bytes()).unwrap(), &mut out);
    }
    assert_eq!(asm.open_sessions(), 0);
    assert_eq!(names(&out), ["execute_tool run", "invoke_agent albedo"]);
    assert_eq!(bool_attr(&out.spans[1], ALBEDO_UNFINISHED), Some(true));
    assert_no_dangling_parents(&out.spans);
}

#[test]
fn a_child_session_nests_under_the_spawn_call_in_the_parent_trace() {
    let out = run(&[
        r#"{"v":1,"kind":"session","session":"p","at_ms":1}"#,
        r#"{"v":1,"kind":"prompted","session":"p","at_ms":2,"text":"delegate"}"#,
        r#"{"v":1,"kind":"calling","session":"p","at_ms":3,"call":{"id":"cell","name":"code"}}"#,
        r#"{"v":1,"kind":"calling","session":"p","at_ms":4,"call":{"id":"sp","name":"agents.spawn","within":"cell"}}"#,
        r#"{"v":1,"kind":"session","session":"kid","at_ms":5,"agent":"helper","parent":{"session":"p","call":"sp"}}"#,
        r#"{"v":1,"kind":"called","session":"p","call":{"id":"sp","name":"agents.spawn","within":"cell"},"output":"ok","started_ms":4,"finished_ms":6}"#,
        r#"{"v":1,"kind":"prompted","session":"kid","at_ms":7,"text":"do it"}"#,
        r#"{"v":1,"kind":"called","session":"kid","call":{"id":"k1","name":"run"},"started_ms":8,"finished_ms":9}"#,
        r#"{"v":1,"kind":"turn_ended","session":"kid","at_ms":10}"#,
        r#"{"v":1,"kind":"prompted","session":"kid","at_ms":11,"text":"more"}"#,
        r#"{"v":1,"kind":"turn_ended","session":"kid","at_ms":12}"#,
        r#"{"v":1,"kind":"called","session":"p","call":{"id":"cell","name":"code"},"started_ms":3,"finished_ms":13}"#,
        r#"{"v":1,"kind":"turn_ended","session":"p","at_ms":14}"#,
    ]);
    let spawn = by_name(&out, "execute_tool agents.spawn");
    let kid_turns: Vec<_> = out
        .spans
        .iter()
        .filter(|s| s.name == "invoke_agent helper")
        .collect();
    assert_eq!(kid_turns.len(), 2);
    for t in &kid_turns {
        assert_eq!(t.trace_id, spawn.trace_id, "in the parent's trace");
        assert_eq!(t.parent_span_id, Some(spawn.span_id));
        assert_eq!(str_attr(t, ALBEDO_PARENT_SESSION), Some("p"));
        assert_eq!(str_attr(t, SESSION_ID), Some("kid"));
    }
    assert_ne!(kid_turns[0].span_id, kid_turns[1].span_id);
    assert_eq!(kid_turns[1].links[0].span_id, kid_turns[0].span_id);
    let k1 = by_name(&out, "execute_tool run");
    assert_eq!(k1.parent_span_id, Some(kid_turns[0].span_id));
}

#[test]
fn parallel_calls_are_siblings_with_their_own_times() {
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":100,"text":"x"}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":101,"call":{"id":"a","name":"run"}}"#,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":102,"call":{"id":"b","name":"web_search"}}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"b","name":"web_search"},"started_ms":102,"finished_ms":150}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":101,"finished_ms":190}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":200}"#,
    ]);
    let root = out.spans.last().unwrap();
    assert_eq!(out.spans[0].parent_span_id, Some(root.span_id));
    assert_eq!(out.spans[1].parent_span_id, Some(root.span_id));
    assert_eq!(
        (out.spans[0].start_ns, out.spans[0].end_ns),
        (102 * MS, 150 * MS)
    );
    assert_eq!(
        (out.spans[1].start_ns, out.spans[1].end_ns),
        (101 * MS, 190 * MS)
    );
}

#[test]
fn content_policy_scrubs_truncates_and_opts_in_to_messages() {
    let lines = [
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"my key is sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWX"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","arguments":{"command":"export API_TOKEN=hunter2hunter2 && curl x"}},"output":"0123456789012345678901234567890123456789012345678901234567890123456789","started_ms":2,"finished_ms":3}"#,
        r#"{"v":1,"kind":"call_sent","session":"s","request":{"model":"m","messages":[{"role":"user","content":"hi"}]},"response":{"content":[{"type":"text","text":"hello"}]},"usage":{"input_tokens":1,"output_tokens":1},"started_ms":4,"finished_ms":5}"#,
        r#"{"v":1,"kind":"stopping","session":"s","at_ms":6,"reply":"bye","held":1}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":7}"#,
    ];
    let mut policy = ContentPolicy::default();
    policy.max_value_len = 48;
    let out = run_with(
        AssembleConfig {
            policy,
            ..AssembleConfig::default()
        },
        &lines,
    );
    let tool = &out.spans[0];
    let args = str_attr(tool, INPUT_VALUE).unwrap();
    assert!(
        args.starts_with(r#"{"command":"export API_TOKEN=[REDACTED"#),
        "{args}"
    );
    assert!(!args.contains("hunter2"));
    assert!(args.len() <= 48);
    assert_eq!(str_attr(tool, GEN_AI_TOOL_CALL_ARGUMENTS), Some(args));
    assert!(str_attr(tool, OUTPUT_VALUE).unwrap().ends_with('…'));
    let chat = &out.spans[1];
    assert_eq!(chat.attr(INPUT_VALUE), None, "messages need an opt-in");
    let root = &out.spans[2];
    assert_eq!(root.attr(INPUT_VALUE), None);
    assert_eq!(
        root.events[0].attributes.len(),
        1,
        "no reply without opt-in"
    );

    let mut policy = ContentPolicy::default();
    policy.capture_messages = true;
    policy.capture_tool_content = false;
    let out = run_with(
        AssembleConfig {
            policy,
            ..AssembleConfig::default()
        },
        &lines,
    );
    assert_eq!(
        out.spans[0].attr(INPUT_VALUE),
        None,
        "tool content can be turned off"
    );
    assert_eq!(out.spans[0].attr(OUTPUT_VALUE), None);
    assert_eq!(
        str_attr(&out.spans[1], OUTPUT_VALUE),
        Some(r#"[{"type":"text","text":"hello"}]"#)
    );
    assert_eq!(
        str_attr(&out.spans[2], INPUT_VALUE),
        Some("my key is [REDACTED:anthropic-key]")
    );
    assert_eq!(
        out.spans[2].events[0].attributes[1].value,
        Value::Str("bye".into())
    );
}

#[test]
fn the_same_input_gives_the_same_ids() {
    let lines = [
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":2,"finished_ms":3}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":4,"finished_ms":5}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":7}"#,
    ];
    let a = run(&lines);
    let b = run(&lines);
    assert_eq!(a.spans, b.spans);
    assert_ne!(
        a.spans[0].span_id, a.spans[1].span_id,
        "a reused call id gets its own span"
    );
    assert!(a
        .notes
        .iter()
        .any(|n| matches!(n, Note::DuplicateCall { .. })));
}

#[test]
fn interleaved_sessions_do_not_mix() {
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"a","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"prompted","session":"b","at_ms":1,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"b","call":{"id":"c","name":"run"},"started_ms":2,"finished_ms":3}"#,
        r#"{"v":1,"kind":"called","session":"a","call":{"id":"c","name":"run"},"started_ms":2,"finished_ms":3}"#,
        r#"{"v":1,"kind":"turn_ended","session":"a","at_ms":4}"#,
        r#"{"v":1,"kind":"turn_ended","session":"b","at_ms":4}"#,
    ]);
    let traces: HashMap<&str, TraceId> = out
        .spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .map(|s| (str_attr(s, SESSION_ID).unwrap(), s.trace_id))
        .collect();
    assert_eq!(traces.len(), 2);
    assert_ne!(traces["a"], traces["b"]);
    for s in &out.spans {
        assert_eq!(s.trace_id, traces[str_attr(s, SESSION_ID).unwrap()]);
    }
}

#[test]
fn a_session_id_reused_in_one_trace_still_gets_unique_span_ids() {
    // Two children with the same session id, one after the other, under one parent turn: their
    // turns share the parent's trace, and their calls and model calls reuse ids.
    let mut lines =
        vec![r#"{"v":1,"kind":"prompted","session":"p","at_ms":1,"text":"x"}"#.to_string()];
    for (n, spawn) in ["sp1", "sp2"].iter().enumerate() {
        let t = 10 + n as u64 * 100;
        lines.push(format!(r#"{{"v":1,"kind":"calling","session":"p","at_ms":{t},"call":{{"id":"{spawn}","name":"agents.spawn"}}}}"#));
        lines.push(format!(r#"{{"v":1,"kind":"session","session":"kid","at_ms":{},"parent":{{"session":"p","call":"{spawn}"}}}}"#, t + 1));
        lines.push(format!(
            r#"{{"v":1,"kind":"prompted","session":"kid","at_ms":{},"text":"x"}}"#,
            t + 2
        ));
        lines.push(format!(r#"{{"v":1,"kind":"call_sent","session":"kid","request":{{"model":"m"}},"started_ms":{},"finished_ms":{}}}"#, t + 3, t + 4));
        lines.push(format!(r#"{{"v":1,"kind":"called","session":"kid","call":{{"id":"c1","name":"run"}},"started_ms":{},"finished_ms":{}}}"#, t + 5, t + 6));
        lines.push(format!(
            r#"{{"v":1,"kind":"closed","session":"kid","at_ms":{}}}"#,
            t + 7
        ));
        lines.push(format!(r#"{{"v":1,"kind":"called","session":"p","call":{{"id":"{spawn}","name":"agents.spawn"}},"started_ms":{t},"finished_ms":{}}}"#, t + 8));
    }
    lines.push(r#"{"v":1,"kind":"turn_ended","session":"p","at_ms":300}"#.to_string());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let out = run(&refs);
    assert_eq!(
        out.spans.len(),
        9,
        "a parent turn, two spawns, and per child a turn, a chat, a call"
    );
    let trace = out.spans[0].trace_id;
    assert!(out.spans.iter().all(|s| s.trace_id == trace));
    // `run` checked that all span ids are unique and no parent dangles.
}

#[test]
fn a_session_flood_is_bounded_and_the_least_recent_session_goes_first() {
    let mut asm = Assembler::new(AssembleConfig {
        max_sessions: 3,
        ..AssembleConfig::default()
    });
    let mut out = Output::default();
    let push = |asm: &mut Assembler, out: &mut Output, line: String| {
        asm.push(&decode_line(line.as_bytes()).unwrap(), out);
    };
    for s in ["a", "b", "c"] {
        push(
            &mut asm,
            &mut out,
            format!(r#"{{"v":1,"kind":"prompted","session":"{s}","at_ms":1,"text":"x"}}"#),
        );
    }
    // `a` is active again, so `b` is now the least recently active.
    push(&mut asm, &mut out, r#"{"v":1,"kind":"called","session":"a","call":{"id":"c","name":"run"},"started_ms":2,"finished_ms":3}"#.into());
    assert!(out.spans.len() == 1 && out.notes.is_empty());
    push(
        &mut asm,
        &mut out,
        r#"{"v":1,"kind":"prompted","session":"d","at_ms":4,"text":"x"}"#.into(),
    );
    assert_eq!(asm.open_sessions(), 3);
    assert_eq!(
        out.notes,
        [Note::SessionEvicted {
            session: "b".into(),
            open: 3
        }]
    );
    let evicted = out.spans.last().unwrap();
    assert_eq!(str_attr(evicted, SESSION_ID), Some("b"));
    assert_eq!(bool_attr(evicted, ALBEDO_UNFINISHED), Some(true));
    // 10,000 more sessions: never more than 3 open, every turn exported exactly once.
    for i in 0..10_000 {
        push(
            &mut asm,
            &mut out,
            format!(r#"{{"v":1,"kind":"prompted","session":"s{i}","at_ms":5,"text":"x"}}"#),
        );
        assert!(asm.open_sessions() <= 3);
    }
    asm.finish(&mut out);
    let roots = out
        .spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .count();
    assert_eq!(roots, 4 + 10_000);
    assert_no_dangling_parents(&out.spans);
}

#[test]
fn calls_per_turn_are_bounded_without_holes_or_duplicates() {
    let mut lines =
        vec![r#"{"v":1,"kind":"prompted","session":"s","at_ms":1,"text":"x"}"#.to_string()];
    // A long-running cell, then many finished calls, then more running ones.
    lines.push(
        r#"{"v":1,"kind":"calling","session":"s","at_ms":2,"call":{"id":"cell","name":"code"}}"#
            .into(),
    );
    for i in 0..50 {
        lines.push(format!(r#"{{"v":1,"kind":"called","session":"s","call":{{"id":"f{i}","name":"run","within":"cell"}},"started_ms":3,"finished_ms":4}}"#));
    }
    for i in 0..20 {
        lines.push(format!(r#"{{"v":1,"kind":"calling","session":"s","at_ms":5,"call":{{"id":"o{i}","name":"run"}}}}"#));
    }
    // A call that names a forgotten finished call, then the cell finishes.
    lines.push(r#"{"v":1,"kind":"called","session":"s","call":{"id":"late","name":"run","within":"f0"},"started_ms":6,"finished_ms":7}"#.into());
    lines.push(r#"{"v":1,"kind":"called","session":"s","call":{"id":"cell","name":"code"},"started_ms":2,"finished_ms":8}"#.into());
    lines.push(r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":9}"#.into());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let out = run_with(
        AssembleConfig {
            max_calls_per_turn: 10,
            ..AssembleConfig::default()
        },
        &refs,
    );
    // `run_with` checks: unique ids, no dangling parent. Every call has a span, and the stand-in
    // for the forgotten f0 has its own id; the cell, let go as unfinished while it ran, gets a
    // second span when its result comes.
    let tools = out
        .spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool"))
        .count();
    assert_eq!(tools, 2 + 50 + 20 + 1 + 1, "{:?}", names(&out));
    let cells: Vec<_> = out
        .spans
        .iter()
        .filter(|s| s.name == "execute_tool code")
        .collect();
    assert_eq!(bool_attr(cells[0], ALBEDO_UNFINISHED), Some(true));
    assert_eq!((cells[1].start_ns, cells[1].end_ns), (2 * MS, 8 * MS));
    assert!(out
        .notes
        .iter()
        .any(|n| matches!(n, Note::CallsEvicted { .. })));
}

#[test]
fn a_session_closed_and_started_again_does_not_reuse_span_ids() {
    // Found by the fuzzer: the same session id, closed, then the same turn again.
    let turn = [
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":1001,"finished_ms":1002}"#,
        r#"{"v":1,"kind":"closed","session":"s","at_ms":1003}"#,
    ];
    let twice: Vec<&str> = turn.iter().chain(turn.iter()).copied().collect();
    let out = run(&twice);
    assert_eq!(out.spans.len(), 4, "{:?}", names(&out));
    // `run` checked that the four ids are unique.
    assert_ne!(out.spans[1].trace_id, out.spans[3].trace_id);
}

#[test]
fn a_turn_gets_the_same_ids_in_any_process_that_sees_it() {
    let first = [
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"x"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":1001,"finished_ms":1002}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":1003}"#,
    ];
    let second = [
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":2000,"text":"y"}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"b","name":"run"},"started_ms":2001,"finished_ms":2002}"#,
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":2003}"#,
    ];
    let both: Vec<&str> = first.iter().chain(second.iter()).copied().collect();
    let whole = run(&both);
    // A restarted exporter that only sees the second turn.
    let resumed = run(&second);
    let ids = |out: &Output| {
        out.spans
            .iter()
            .map(|s| (s.trace_id, s.span_id, s.parent_span_id))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&whole)[2..], ids(&resumed)[..]);
}

#[test]
fn turns_that_start_in_the_same_millisecond_get_different_ids() {
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"x"}"#,
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"x"}"#,
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":2000,"text":"x"}"#,
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"x"}"#,
    ]);
    let traces: HashSet<_> = out.spans.iter().map(|s| s.trace_id).collect();
    assert_eq!(traces.len(), 4);
}

#[test]
fn finishing_a_few_sessions_at_a_time_gives_the_same_spans_as_all_at_once() {
    use crate::generate::{generate, GenConfig};
    let (lines, _) = generate(&GenConfig {
        sessions: 40,
        turns_per_session: 2,
        ..GenConfig::default()
    });
    // Only a prefix, so that many sessions still have an open turn at the end.
    let lines = &lines[..lines.len() / 2];
    let feed = |asm: &mut Assembler, out: &mut Output| {
        for l in lines {
            asm.push(&decode_line(l.as_bytes()).unwrap(), out);
        }
    };
    let mut whole = Output::default();
    let mut asm = Assembler::new(AssembleConfig::default());
    feed(&mut asm, &mut whole);
    let before = whole.spans.len();
    asm.finish(&mut whole);
    assert!(whole.spans.len() > before, "some turns were still open");

    let mut stepped = Output::default();
    let mut asm = Assembler::new(AssembleConfig::default());
    feed(&mut asm, &mut stepped);
    let mut steps = 0;
    while asm.finish_some(&mut stepped, 3) {
        steps += 1;
    }
    assert!(steps > 1, "it took more than one step");
    assert_eq!(asm.open_sessions(), 0);
    assert!(!asm.finish_some(&mut stepped, 3), "nothing is left");
    assert_eq!(stepped.spans, whole.spans);
}
