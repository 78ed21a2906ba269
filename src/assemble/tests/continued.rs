//! What comes with no turn open after a turn ended, before the next prompt (the agent went on
//! after a stop another hook blocked once the turn had gone out): it continues that turn, in
//! its trace, under its root, at its own times.

use super::*;
use crate::assemble::semconv::*;

const LINES: &[&str] = &[
    r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"fix it"}"#,
    r#"{"v":1,"kind":"called","session":"s","call":{"id":"call-1","name":"run"},"started_ms":1100,"finished_ms":1300}"#,
    r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":1500,"reason":"end_turn"}"#,
    // 30 s on, the blocking hook answers: the agent goes on, with ids counted afresh.
    r#"{"v":1,"kind":"call_sent","session":"s","id":"model-1","request":{"model":"m"},"usage":{"input_tokens":3,"output_tokens":2},"started_ms":31600,"finished_ms":31900}"#,
    r#"{"v":1,"kind":"called","session":"s","call":{"id":"call-1","name":"run"},"started_ms":32000,"finished_ms":32400}"#,
    r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":32500,"reason":"end_turn"}"#,
    // Blocked again.
    r#"{"v":1,"kind":"called","session":"s","call":{"id":"call-1","name":"run"},"started_ms":40000,"finished_ms":40100}"#,
    r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":40200,"reason":"end_turn"}"#,
    // The next prompt is a turn of its own.
    r#"{"v":1,"kind":"prompted","session":"s","at_ms":50000,"text":"next"}"#,
    r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":50100,"reason":"end_turn"}"#,
];

#[test]
fn what_comes_after_a_turn_ended_continues_it_under_its_root() {
    let out = run(LINES);
    let agents: Vec<&Span> = out
        .spans
        .iter()
        .filter(|s| s.name == "invoke_agent albedo")
        .collect();
    let [first, cont1, cont2, next] = agents.as_slice() else {
        panic!("{:#?}", names(&out));
    };
    assert_eq!(first.parent_span_id, None);
    assert_eq!(bool_attr(first, ALBEDO_TURN_CONTINUED), None);
    for (c, from, to) in [(cont1, 31_600, 32_500), (cont2, 40_000, 40_200)] {
        assert_eq!(c.trace_id, first.trace_id, "in the turn's trace");
        assert_eq!(c.parent_span_id, Some(first.span_id), "under its root");
        assert_eq!(bool_attr(c, ALBEDO_TURN_CONTINUED), Some(true));
        assert_eq!(bool_attr(c, ALBEDO_TURN_PROMPTED), Some(false));
        assert_eq!(int_attr(c, ALBEDO_TURN_NUMBER), Some(1), "the same turn");
        assert_eq!(
            (c.start_ns, c.end_ns),
            (from * MS, to * MS),
            "its own times"
        );
        assert!(c.links.is_empty());
    }
    assert_eq!(int_attr(cont1, ALBEDO_TURN_MODEL_CALLS), Some(1));
    // The calls, each in the trace, under the continuation it came in.
    let tools: Vec<&Span> = out
        .spans
        .iter()
        .filter(|s| s.name == "execute_tool run")
        .collect();
    let parents: Vec<_> = tools.iter().map(|t| t.parent_span_id).collect();
    assert_eq!(
        parents,
        [
            Some(first.span_id),
            Some(cont1.span_id),
            Some(cont2.span_id)
        ]
    );
    assert!(tools.iter().all(|t| t.trace_id == first.trace_id));
    let chat = by_name(&out, "chat m");
    assert_eq!(
        (chat.trace_id, chat.parent_span_id),
        (first.trace_id, Some(cont1.span_id))
    );
    // The next prompt's turn: a trace of its own, linked to the turn it follows.
    assert_eq!(next.parent_span_id, None);
    assert_ne!(next.trace_id, first.trace_id);
    assert_eq!(int_attr(next, ALBEDO_TURN_NUMBER), Some(2));
    assert_eq!(next.links[0].span_id, first.span_id);
}

#[test]
fn a_replay_gives_a_continuation_the_same_ids() {
    let ids =
        |out: &Output| -> Vec<_> { out.spans.iter().map(|s| (s.trace_id, s.span_id)).collect() };
    assert_eq!(ids(&run(LINES)), ids(&run(LINES)));
}

#[test]
fn a_turn_cut_short_is_not_continued() {
    // No `turn_ended`: the prompt-less events after a cut turn's close begin a turn of their
    // own, as before.
    let out = run(&[
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1000,"text":"fix it"}"#,
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":2000,"text":"no, this"}"#,
        r#"{"v":1,"kind":"closed","session":"s","at_ms":3000}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"a","name":"run"},"started_ms":4000,"finished_ms":4100}"#,
    ]);
    let roots = out
        .spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .count();
    assert_eq!(roots, 3, "{:#?}", names(&out));
    assert!(out
        .spans
        .iter()
        .all(|s| bool_attr(s, ALBEDO_TURN_CONTINUED).is_none()));
}

/// An exporter restarted between any two turns (a hook daemon idled out while a stop hook
/// ran), handed the old one's seed as the daemon saves it: every span is as one exporter
/// would have made it, the continuations in their turn's trace included.
#[test]
fn an_exporter_restarted_between_turns_goes_on_as_one_would() {
    let records: Vec<Record<'static>> = LINES
        .iter()
        .map(|l| decode_line(l.as_bytes()).unwrap().into_owned())
        .collect();
    let whole = run(LINES).spans;
    let ended: Vec<usize> = (0..records.len())
        .filter(|&i| matches!(records[i].event, Event::TurnEnded { .. }))
        .collect();
    for &at in &ended {
        let mut out = Output::default();
        let mut first = Assembler::new(AssembleConfig::default());
        records[..=at].iter().for_each(|r| first.push(r, &mut out));
        let seed = first.seed("s").expect("a session between turns has a seed");
        first.finish(&mut out);
        let saved = serde_json::to_string(&seed).unwrap();
        let mut next = Assembler::new(AssembleConfig::default());
        next.resume("s", &serde_json::from_str(&saved).unwrap(), &mut out);
        records[at + 1..]
            .iter()
            .for_each(|r| next.push(r, &mut out));
        next.finish(&mut out);
        assert_no_dangling_parents(&out.spans);
        assert_eq!(out.spans, whole, "restarted after line {}", at + 1);
    }
}

#[test]
fn a_seed_never_overrides_what_the_exporter_knows() {
    let records: Vec<Record<'static>> = LINES
        .iter()
        .map(|l| decode_line(l.as_bytes()).unwrap().into_owned())
        .collect();
    let mut old = Assembler::new(AssembleConfig::default());
    let mut out = Output::default();
    records[..3].iter().for_each(|r| old.push(r, &mut out));
    let stale = old.seed("s").unwrap();
    // This one saw more of the session (a continuation): the stale seed is ignored, so the
    // next continuation does not take the first one's ids.
    let mut out = Output::default();
    let mut asm = Assembler::new(AssembleConfig::default());
    records[..6].iter().for_each(|r| asm.push(r, &mut out));
    asm.resume("s", &stale, &mut out);
    records[6..].iter().for_each(|r| asm.push(r, &mut out));
    asm.finish(&mut out);
    assert_eq!(out.spans, run(LINES).spans);
    // A turn in progress has no seed: it is read again from the journal.
    let mut open = Assembler::new(AssembleConfig::default());
    open.push(&records[0], &mut out);
    assert_eq!(open.seed("s"), None);
    assert_eq!(open.seed("unknown"), None);
}
