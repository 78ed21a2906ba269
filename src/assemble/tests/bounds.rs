//! Memory bounds: sessions and calls per turn, and ending many sessions a few at a time.

use super::*;
use crate::assemble::semconv::*;

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
fn finishing_a_few_sessions_at_a_time_gives_the_same_spans_as_all_at_once() {
    use crate::testing::{generate, GenConfig};
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
