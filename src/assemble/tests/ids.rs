//! Ids: the same input gives the same ids; different turns and sessions never share one.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::assemble::semconv::*;

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
