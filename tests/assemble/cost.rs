//! What the example session cost, as a collector receives it and as the console prints it:
//! each model call's price (issue 28) on its `chat` span, and each turn's own sum on its root.

use std::time::{Duration, UNIX_EPOCH};

use crate::support::*;
use genai_prices::{PriceRequest, Usage, UsageKey};
use opentelemetry_proto::tonic::common::v1::any_value::Value;

fn double(s: &FlatSpan, key: &str) -> Option<f64> {
    s.span
        .attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            Value::DoubleValue(d) => Some(*d),
            _ => None,
        })
}

/// genai-prices' own price for a demo call, from the tokens on its span.
fn priced(s: &FlatSpan) -> f64 {
    let n = |k: &str| s.attr(k).unwrap().parse::<f64>().unwrap();
    let usage = Usage::from([
        (UsageKey::INPUT_TOKENS, n("gen_ai.usage.input_tokens")),
        (
            UsageKey::CACHE_READ_TOKENS,
            n("gen_ai.usage.cache_read.input_tokens"),
        ),
        (
            UsageKey::CACHE_WRITE_TOKENS,
            n("gen_ai.usage.cache_write.input_tokens"),
        ),
        (UsageKey::OUTPUT_TOKENS, n("gen_ai.usage.output_tokens")),
    ]);
    let model = s.attr("gen_ai.response.model").unwrap();
    let at = UNIX_EPOCH + Duration::from_nanos(s.span.start_time_unix_nano);
    genai_prices::calculate(
        &PriceRequest::new(&model, &usage)
            .with_provider_id("anthropic")
            .with_timestamp(at),
    )
    .unwrap()
    .total_price
}

#[test]
fn every_model_call_of_the_demo_arrives_priced_and_each_turn_with_its_own_sum() {
    let rx = Receiver::start();
    let out = run_binary(
        &["run"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", rx.http_url().as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ],
        &demo_session(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans = rx.spans();
    assert_eq!(spans.len(), 21);
    let chats: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
        .collect();
    assert_eq!(chats.len(), 9);
    for c in &chats {
        let cost = double(c, "gen_ai.usage.cost").expect("a double, in dollars");
        assert_eq!(cost, priced(c), "{}", c.span.name);
        assert_eq!(double(c, "llm.cost.total"), Some(cost));
        let (p, q) = (
            double(c, "llm.cost.prompt").unwrap(),
            double(c, "llm.cost.completion").unwrap(),
        );
        assert!((p + q - cost).abs() < 1e-12);
    }
    // The first call: 1840 fresh, 12000 cache-read, 1500 cache-written and 210 output tokens
    // at $3, $0.30, $3.75 and $15 per million.
    let m1 = spans
        .iter()
        .find(|s| s.attr("gen_ai.response.id").as_deref() == Some("msg_m1"))
        .unwrap();
    assert!((double(m1, "gen_ai.usage.cost").unwrap() - 0.017895).abs() < 1e-12);

    let roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("invoke_agent"))
        .collect();
    assert_eq!(roots.len(), 3, "two turns and the helper's");
    for root in roots {
        let own: f64 = chats
            .iter()
            .filter(|c| c.span.parent_span_id == root.span.span_id)
            .map(|c| double(c, "gen_ai.usage.cost").unwrap())
            .sum();
        let turn = double(root, "albedo.turn.cost").expect("a priced turn says its cost");
        assert!(
            (turn - own).abs() < 1e-12,
            "{}: {turn} != {own}",
            root.span.name
        );
        for key in ["gen_ai.usage.cost", "llm.cost.total"] {
            assert_eq!(root.attr(key), None, "no backend counts a turn twice");
        }
    }
}

#[test]
fn the_console_shows_each_call_s_cost_and_each_turn_s() {
    let out = run_binary(
        &["replay", "-", "--exporter", "console"],
        &[],
        &demo_session(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let first_call = stderr
        .lines()
        .find(|l| l.contains("chat claude-sonnet-4-5") && l.contains("tokens 15340 in"))
        .expect("the first model call");
    assert!(first_call.contains(" · $0.0179"), "{first_call}");
    let turns: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("invoke_agent albedo"))
        .collect();
    assert_eq!(turns.len(), 2);
    for t in turns {
        assert!(t.contains(" out · $0."), "{t}");
    }
}
