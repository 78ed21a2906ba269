//! The library API a Rust host embeds: `hook` answers proceed at once, `observe` and `close`
//! feed the same pipeline, and the guard delivers everything before it returns.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use crate::support::*;
use albedo_otel::config::{resolve_otlp, OtlpOverrides, OtlpSettings, Protocol};
use albedo_otel::host::{HookEvent, Observed, SessionMeta, TraceExporter, Verdict};
use albedo_otel::pipeline::PipelineConfig;
use albedo_otel::protocol::{Call, CallSent, Called, Json, Request, Usage};

fn settings(rx: &Receiver) -> OtlpSettings {
    resolve_otlp(
        &OtlpOverrides {
            endpoint: Some(rx.grpc_url()),
            protocol: Some(Protocol::Grpc),
            ..OtlpOverrides::default()
        },
        &|_| None,
    )
    .unwrap()
}

fn call(id: &str, name: &str, within: Option<&str>) -> Call<'static> {
    Call {
        id: Cow::Owned(id.into()),
        name: Cow::Owned(name.into()),
        arguments: Some(Json::parse(r#"{"command":"ls"}"#).unwrap()),
        within: within.map(|w| Cow::Owned(w.to_string())),
    }
}

#[test]
fn a_session_through_hook_and_observe_arrives_as_one_tree() {
    let rx = Receiver::start();
    let (exporter, guard) = TraceExporter::start(PipelineConfig::default(), settings(&rx)).unwrap();
    let session = exporter.session(
        "host-1",
        SessionMeta {
            agent: Some("embedded".into()),
            ..SessionMeta::default()
        },
    );
    let t = 1_796_300_000_000;
    assert_eq!(
        session.hook(&HookEvent::Prompted { text: "go".into() }),
        Verdict::Proceed
    );
    assert_eq!(
        session.hook(&HookEvent::Calling {
            call: Arc::new(call("cell", "code", None))
        }),
        Verdict::Proceed
    );
    session.hook(&HookEvent::Called(Arc::new(Called {
        call: call("inner", "run", Some("cell")),
        output: Some(Json::parse(r#"{"exit_code":0,"timed_out":false}"#).unwrap()),
        started_ms: t + 10,
        finished_ms: t + 20,
        refused: false,
        failed: false,
    })));
    session.hook(&HookEvent::Called(Arc::new(Called {
        call: call("cell", "code", None),
        output: None,
        started_ms: t,
        finished_ms: t + 30,
        refused: false,
        failed: false,
    })));
    session.observe(&Observed::CallSent(Arc::new(CallSent {
        id: None,
        request: Request {
            model: Cow::Borrowed("claude-sonnet-4-5"),
            provider: None,
            max_tokens: None,
            messages: None,
            system: None,
        },
        response: None,
        usage: Usage {
            input_tokens: 5,
            output_tokens: 7,
            ..Usage::default()
        },
        started_ms: t + 40,
        finished_ms: t + 50,
        first_token_ms: None,
        error: None,
    })));
    session.hook(&HookEvent::Stopping {
        reply: "ok".into(),
        held: 0,
    });
    session.observe(&Observed::TurnEnded { reason: None });
    session.close();
    let summary = guard.close();
    assert_eq!(
        (summary.spans, summary.exported, summary.dropped_events),
        (4, 4, 0),
        "{summary}"
    );

    let spans = rx.spans();
    assert_eq!(check_invariants(&spans), 1);
    let names: Vec<_> = {
        let mut n: Vec<_> = spans.iter().map(|s| s.span.name.clone()).collect();
        n.sort();
        n
    };
    assert_eq!(
        names,
        [
            "chat claude-sonnet-4-5",
            "execute_tool code",
            "execute_tool run",
            "invoke_agent embedded"
        ]
    );
    let inner = spans
        .iter()
        .find(|s| s.span.name == "execute_tool run")
        .unwrap();
    let cell = spans
        .iter()
        .find(|s| s.span.name == "execute_tool code")
        .unwrap();
    assert_eq!(inner.span.parent_span_id, cell.span.span_id);
    assert_eq!(inner.span.start_time_unix_nano, (t + 10) * 1_000_000);
}

#[test]
fn a_full_or_closed_queue_drops_and_counts_but_never_blocks() {
    // A collector that answers 503 to everything: the export thread retries, the batch queue
    // fills, the assemble thread waits for it, and the hook's queue of one overflows.
    let rx = Receiver::start();
    rx.refuse_next(u64::MAX);
    // One export at a time, as the count below assumes: with the default eight, the export
    // thread may take up to seven more batches while the burst runs, as fast as it keeps pace.
    let config = PipelineConfig {
        queue_size: 1,
        batch_size: 1,
        max_concurrent_exports: 1,
        ..PipelineConfig::default()
    };
    let (exporter, guard) = TraceExporter::start(config, settings(&rx)).unwrap();
    let session = exporter.session("flood", SessionMeta::default());
    let called = |i: u64| {
        HookEvent::Called(Arc::new(Called {
            call: call(&format!("c{i}"), "run", None),
            output: None,
            started_ms: 1_796_300_000_000 + i,
            finished_ms: 1_796_300_000_001 + i,
            refused: false,
            failed: false,
        }))
    };
    // One event in first (once the queue of one has room), so the export thread is certainly
    // busy retrying it...
    wait_until(
        Duration::from_secs(10),
        "the session event to be taken in",
        || exporter.stats().events >= 1,
    );
    assert_eq!(session.hook(&called(0)), Verdict::Proceed);
    wait_until(
        Duration::from_secs(10),
        "the first event to be taken in",
        || exporter.stats().events >= 2,
    );
    // ...then a burst. At most a dozen more fit (8 batches queued, one being retried, one in
    // hand, one in the queue of one); everything else must be dropped and counted.
    const SENT: u64 = 1_000;
    for i in 1..SENT {
        assert_eq!(session.hook(&called(i)), Verdict::Proceed);
    }
    wait_until(
        Duration::from_secs(10),
        "the collector to refuse a request",
        || rx.refused() > 0,
    );
    let summary = guard.close_within(Duration::from_secs(1));
    // Every event was either taken in or counted as dropped: none vanished silently.
    assert_eq!(
        summary.events + summary.dropped_events,
        SENT + 1,
        "{summary}"
    );
    assert!(summary.dropped_events >= SENT - 13, "{summary}");
    // Every span taken in was given up on, and counted, when the deadline came.
    assert_eq!(summary.exported, 0);
    assert_eq!(summary.failed, summary.spans, "{summary}");
    // After close nothing is accepted, and that is counted too.
    session.hook(&HookEvent::Prompted {
        text: "late".into(),
    });
    assert_eq!(exporter.stats().dropped_events, summary.dropped_events + 1);
}
