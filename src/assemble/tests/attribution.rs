//! Who and where, as handed in with a record: on the turn's root and on every model call of
//! the turn, as they were when the turn started; nothing when nothing was handed in.

use std::sync::Arc;

use super::*;
use crate::assemble::semconv::*;

fn who(branch: &str) -> Arc<Attribution> {
    Arc::new(Attribution {
        repository: Some("https://github.com/o/r".into()),
        branch: Some(branch.into()),
        revision: Some("0123456789abcdef0123456789abcdef01234567".into()),
        user: Some("dev@example.com".into()),
    })
}

fn push(asm: &mut Assembler, out: &mut Output, line: &str, facts: Option<Arc<Attribution>>) {
    let rec = decode_line(line.as_bytes()).unwrap();
    asm.push_attributed(&rec, facts, out);
}

const SESSION: &str =
    r#"{"v":1,"kind":"session","session":"s","at_ms":1,"agent":"albedo","workspace":"/w"}"#;
const CHILD: &str = r#"{"v":1,"kind":"session","session":"k","at_ms":3,"agent":"helper","parent":{"session":"s","call":"sp"}}"#;

fn chat(session: &str, id: &str, at: u64) -> String {
    format!(
        r#"{{"v":1,"kind":"call_sent","session":"{session}","id":"{id}","request":{{"model":"claude-sonnet-4-5","provider":"anthropic"}},"usage":{{"input_tokens":1,"output_tokens":1}},"started_ms":{at},"finished_ms":{}}}"#,
        at + 1
    )
}

fn prompted(at: u64) -> String {
    format!(r#"{{"v":1,"kind":"prompted","session":"s","at_ms":{at},"text":"x"}}"#)
}

#[test]
fn a_turn_and_its_model_calls_say_who_and_where_it_started() {
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    push(&mut asm, &mut out, SESSION, Some(who("main")));
    assert_eq!(asm.workspace("s"), Some("/w"));
    push(&mut asm, &mut out, &prompted(10), Some(who("main")));
    push(&mut asm, &mut out, &chat("s", "m1", 11), None);
    // A checkout mid-turn is the next turn's: this one keeps what it started with.
    push(&mut asm, &mut out, &prompted(20), Some(who("next")));
    push(&mut asm, &mut out, &chat("s", "m2", 21), None);
    asm.finish(&mut out);
    let spans: Vec<&Span> = out.spans.iter().collect();
    let on = |s: &Span, k: &str| s.attr(k).and_then(Value::as_str).map(str::to_string);
    let (roots, calls): (Vec<&Span>, Vec<&Span>) =
        spans.iter().partition(|s| s.parent_span_id.is_none());
    assert_eq!((roots.len(), calls.len()), (2, 2));
    for (root, call, branch) in [(roots[0], calls[0], "main"), (roots[1], calls[1], "next")] {
        for s in [root, call] {
            assert_eq!(
                on(s, VCS_REF_HEAD_NAME).as_deref(),
                Some(branch),
                "{}",
                s.name
            );
            assert_eq!(
                on(s, VCS_REPOSITORY_URL_FULL).as_deref(),
                Some("https://github.com/o/r")
            );
            assert_eq!(
                on(s, VCS_REF_HEAD_REVISION).as_deref(),
                Some("0123456789abcdef0123456789abcdef01234567")
            );
            assert_eq!(on(s, USER_ID).as_deref(), Some("dev@example.com"));
        }
    }
}

#[test]
fn a_sub_agent_works_where_its_parent_does_and_nothing_handed_in_says_nothing() {
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    push(&mut asm, &mut out, SESSION, None);
    push(&mut asm, &mut out, CHILD, None);
    assert_eq!(asm.workspace("k"), Some("/w"), "the parent's folder");
    push(&mut asm, &mut out, &chat("k", "k1", 4), None);
    push(&mut asm, &mut out, &chat("s", "m1", 5), None);
    asm.finish(&mut out);
    for s in &out.spans {
        for k in [
            VCS_REPOSITORY_URL_FULL,
            VCS_REF_HEAD_NAME,
            VCS_REF_HEAD_REVISION,
            USER_ID,
        ] {
            assert_eq!(s.attr(k), None, "{} says {k}", s.name);
        }
    }
}

#[test]
fn a_tool_call_says_who_and_which_repository_finished_or_not() {
    let mut asm = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    push(&mut asm, &mut out, SESSION, Some(who("main")));
    push(&mut asm, &mut out, &prompted(10), Some(who("main")));
    push(
        &mut asm,
        &mut out,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run","arguments":{}},"output":"ok","started_ms":11,"finished_ms":12}"#,
        None,
    );
    push(
        &mut asm,
        &mut out,
        r#"{"v":1,"kind":"calling","session":"s","at_ms":13,"call":{"id":"b","name":"run","arguments":{}}}"#,
        None,
    );
    asm.finish(&mut out);
    let tools: Vec<&Span> = out
        .spans
        .iter()
        .filter(|s| s.name == "execute_tool run")
        .collect();
    assert_eq!(tools.len(), 2, "the finished call and the one cut short");
    for t in tools {
        let on = |k: &str| t.attr(k).and_then(Value::as_str).map(str::to_string);
        assert_eq!(on(USER_ID).as_deref(), Some("dev@example.com"));
        assert_eq!(
            on(VCS_REPOSITORY_URL_FULL).as_deref(),
            Some("https://github.com/o/r")
        );
        assert_eq!(on(VCS_REF_HEAD_NAME), None, "the branch stays on the turn");
    }
}
