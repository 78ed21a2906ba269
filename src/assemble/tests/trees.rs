//! Span trees: cells and their nested calls, sub-agents, parallel calls.

use super::*;
use crate::assemble::semconv::*;
use crate::assemble::span::{SpanKind, Status, Value};

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
        // Grouped with the session that spawned it; its own conversation kept apart.
        assert_eq!(str_attr(t, SESSION_ID), Some("p"));
        assert_eq!(str_attr(t, GEN_AI_CONVERSATION_ID), Some("kid"));
    }
    assert_ne!(kid_turns[0].span_id, kid_turns[1].span_id);
    assert_eq!(kid_turns[1].links[0].span_id, kid_turns[0].span_id);
    let k1 = by_name(&out, "execute_tool run");
    assert_eq!(k1.parent_span_id, Some(kid_turns[0].span_id));
    assert_eq!(str_attr(k1, SESSION_ID), Some("p"));
    assert_eq!(str_attr(k1, GEN_AI_CONVERSATION_ID), Some("kid"));
    assert_eq!(str_attr(k1, GEN_AI_AGENT_NAME), Some("helper"));
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
