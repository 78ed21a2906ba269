//! Input out of order or incomplete, refusals and timeouts, the content policy.

use super::*;
use crate::assemble::semconv::*;
use crate::assemble::span::{Status, Value};

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
    assert_eq!(
        chat.attr(GEN_AI_OUTPUT_MESSAGES),
        None,
        "messages need an opt-in"
    );
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
        str_attr(&out.spans[1], GEN_AI_OUTPUT_MESSAGES),
        Some(
            r#"[{"role":"assistant","parts":[{"type":"text","content":"hello"}],"finish_reason":"stop"}]"#
        )
    );
    assert_eq!(
        str_attr(&out.spans[1], "llm.output_messages.0.message.content"),
        Some("hello")
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
