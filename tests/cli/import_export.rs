//! `import --export`: the history goes to the collector too, at its original times, with the
//! GenAI metrics of what it imported, and into the store as without `--export`; and what a
//! collector has had is not sent again.

use super::{albedo, claude_history};
use crate::export::metrics::{metric_totals, span_totals};
use crate::support::*;

/// 2026-11-29T21:09:00Z and 21:11:00Z, around the recorded session, in ns.
const RECORDED: std::ops::Range<u64> = 1_795_986_540_000_000_000..1_795_986_660_000_000_000;

/// `import claude-code --export` of `home`'s history, in `env`, to a collector of its own:
/// that collector, once the import has exited, and what the import printed.
fn exported(home: &std::path::Path, env: &[(&str, &str)]) -> (Receiver, String) {
    let rx = Receiver::start();
    let endpoint = rx.grpc_url();
    let args = ["import", "claude-code", "--export", "--protocol", "grpc"];
    let args: Vec<&str> = args
        .into_iter()
        .chain(["--endpoint", endpoint.as_str()])
        .collect();
    let out = albedo(home, &args, env);
    (rx, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn an_import_with_export_sends_the_history_at_its_times_with_metrics_that_add_up() {
    let home = scratch("import-export");
    claude_history(&home);
    let (rx, _) = exported(&home, &[]);
    let spans = rx.spans();
    let roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "the session's one turn, once");
    assert!(
        spans.len() > 4,
        "its model and tool calls and its sub-agent's: {}",
        spans.len()
    );
    for s in &spans {
        assert!(
            RECORDED.contains(&s.span.start_time_unix_nano)
                && RECORDED.contains(&s.span.end_time_unix_nano),
            "{} at its recorded time, not now: {}",
            s.span.name,
            s.span.start_time_unix_nano
        );
    }
    // The metrics say what the spans say.
    let (by_spans, by_metrics) = (span_totals(&spans), metric_totals(&rx));
    assert!(by_spans.0 > 0.0);
    assert_eq!((by_metrics.0, by_metrics.1), (by_spans.0, by_spans.1));
    assert!(
        (by_metrics.2 - by_spans.2).abs() < 0.005,
        "{by_metrics:?} {by_spans:?}"
    );
    // And the store has it, as an import without `--export` would.
    let report = albedo(&home, &["report", "--json"], &[]);
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let stored = report["totals"]["inputTokens"].as_f64().unwrap()
        + report["totals"]["cacheReadTokens"].as_f64().unwrap()
        + report["totals"]["cacheCreationTokens"].as_f64().unwrap();
    assert_eq!(
        stored, by_spans.0,
        "the store's input, cache included, is the spans'"
    );
}

/// A metric point is a delta no collector can tell from a new one, and a span sent again is
/// one more in many backends: an import sends what no collector has had, and nothing else.
#[test]
fn an_import_with_export_sends_each_turn_once_however_often_it_runs() {
    let home = scratch("import-export-twice");
    claude_history(&home);
    let (first, _) = exported(&home, &[]);
    let sent = first.spans();
    assert!(sent.len() > 4, "the history, sent: {}", sent.len());
    let (again, said) = exported(&home, &[]);
    assert_eq!(again.spans().len(), 0, "spans sent again");
    assert!(again.metrics().is_empty(), "metric points sent again");
    assert!(said.contains("nothing to send"), "{said}");

    // Imported first without `--export`: the first `--export` sends it all, metrics that add
    // up included, and only once.
    let home = scratch("import-then-export");
    claude_history(&home);
    albedo(&home, &["import", "claude-code"], &[]);
    let (later, said) = exported(&home, &[]);
    let spans = later.spans();
    let ids = |spans: &[FlatSpan]| -> std::collections::BTreeSet<(Vec<u8>, Vec<u8>)> {
        let ids = spans
            .iter()
            .map(|s| (s.span.trace_id.clone(), s.span.span_id.clone()));
        ids.collect()
    };
    assert_eq!(
        ids(&spans),
        ids(&sent),
        "the same spans as an import that exports at once"
    );
    assert_eq!(spans.len(), sent.len(), "each once");
    let (by_spans, by_metrics) = (span_totals(&spans), metric_totals(&later));
    assert_eq!((by_metrics.0, by_metrics.1), (by_spans.0, by_spans.1));
    assert!(said.contains("sent 1 turn"), "{said}");
    let (again, _) = exported(&home, &[]);
    assert_eq!(again.spans().len(), 0, "spans sent again");
    assert!(again.metrics().is_empty(), "metric points sent again");
}

/// The model calls an import sends carry their conversation as the live route's would: with
/// capture on, the messages before each call; with it off (the default), none.
#[test]
fn an_import_with_export_carries_the_conversation_only_with_capture_on() {
    let chat_messages = |capture: &str| {
        let home = scratch(&format!("import-messages-{capture}"));
        claude_history(&home);
        let capture = [(
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            capture,
        )];
        let (rx, _) = exported(&home, &capture);
        let chats: Vec<Option<String>> = rx
            .spans()
            .iter()
            .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
            .map(|s| s.attr("gen_ai.input.messages"))
            .collect();
        assert!(!chats.is_empty(), "no model call exported");
        chats
    };
    let on = chat_messages("true");
    assert!(
        on.iter()
            .all(|m| m.as_deref().is_some_and(|m| m.contains("\"role\""))),
        "{on:?}"
    );
    assert!(chat_messages("false").iter().all(Option::is_none));
}
