//! What model calls cost: each priced `chat` span says it as genai-prices computes it, at the
//! call's own time; a model the table does not know says nothing; a turn's root sums its own
//! calls under a name no backend adds to theirs.

use std::time::{Duration, UNIX_EPOCH};

use genai_prices::{PriceRequest, Usage as PriceUsage, UsageKey};
use serde_json::json;

use super::*;
use crate::assemble::pricing::Pricer;
use crate::assemble::semconv::*;
use crate::protocol::Usage;

fn double_attr(s: &Span, key: &str) -> Option<f64> {
    match s.attr(key) {
        Some(Value::Double(n)) => Some(*n),
        _ => None,
    }
}

const AT_MS: u64 = 1_796_000_000_020;

fn call(id: &str, model: &str, provider: Option<&str>, usage: serde_json::Value) -> String {
    let mut request = json!({"model": model, "max_tokens": 100});
    if let Some(p) = provider {
        request["provider"] = json!(p);
    }
    json!({"v":1,"kind":"call_sent","session":"s","id":id,"request":request,
        "response":{"stop_reason":"end_turn"},"usage":usage,
        "started_ms":AT_MS,"finished_ms":AT_MS + 500})
    .to_string()
}

/// The crate's own price for this usage, asked directly.
fn crate_price(
    model: &str,
    provider: &str,
    usage: &[(UsageKey, f64)],
    at_ms: u64,
) -> genai_prices::PriceCalculation {
    let usage: PriceUsage = usage.iter().cloned().collect();
    genai_prices::calculate(
        &PriceRequest::new(model, &usage)
            .with_provider_id(provider)
            .with_timestamp(UNIX_EPOCH + Duration::from_millis(at_ms)),
    )
    .unwrap()
}

#[test]
fn a_known_model_s_call_carries_what_genai_prices_says_it_cost() {
    let usage = json!({"input_tokens":1840,"output_tokens":210,"cache_read_tokens":12000,"cache_write_tokens":1500});
    let line = call("m1", "claude-sonnet-4-5", Some("anthropic"), usage);
    let out = run(&[&line]);
    let chat = by_name(&out, "chat claude-sonnet-4-5");
    // The table counts input with its cache reads and writes inside it.
    let expected = crate_price(
        "claude-sonnet-4-5",
        "anthropic",
        &[
            (UsageKey::INPUT_TOKENS, 15340.0),
            (UsageKey::CACHE_READ_TOKENS, 12000.0),
            (UsageKey::CACHE_WRITE_TOKENS, 1500.0),
            (UsageKey::OUTPUT_TOKENS, 210.0),
        ],
        AT_MS,
    );
    assert_eq!(
        double_attr(chat, GEN_AI_USAGE_COST),
        Some(expected.total_price)
    );
    assert_eq!(
        double_attr(chat, LLM_COST_TOTAL),
        Some(expected.total_price)
    );
    assert_eq!(
        double_attr(chat, LLM_COST_PROMPT),
        Some(expected.input_price)
    );
    assert_eq!(
        double_attr(chat, LLM_COST_COMPLETION),
        Some(expected.output_price)
    );
    // By hand, at Anthropic's list prices per million tokens: $3 input, $0.30 cache read,
    // $3.75 cache write, $15 output.
    let by_hand = (1840.0 * 3.0 + 12000.0 * 0.30 + 1500.0 * 3.75 + 210.0 * 15.0) / 1e6;
    let cost = double_attr(chat, GEN_AI_USAGE_COST).unwrap();
    assert!((cost - by_hand).abs() < 1e-12, "{cost} != {by_hand}");
    assert!((cost - 0.017895).abs() < 1e-12);
}

#[test]
fn gpt_4o_with_cache_reads_is_priced_as_openai_sells_it() {
    let usage = json!({"input_tokens":800,"output_tokens":120,"cache_read_tokens":3200});
    let out = run(&[&call("m1", "gpt-4o", Some("openai"), usage)]);
    let chat = by_name(&out, "chat gpt-4o");
    let expected = crate_price(
        "gpt-4o",
        "openai",
        &[
            (UsageKey::INPUT_TOKENS, 4000.0),
            (UsageKey::CACHE_READ_TOKENS, 3200.0),
            (UsageKey::OUTPUT_TOKENS, 120.0),
        ],
        AT_MS,
    );
    assert_eq!(
        double_attr(chat, GEN_AI_USAGE_COST),
        Some(expected.total_price)
    );
    // $2.50 input, $1.25 cached input, $10 output per million tokens.
    let by_hand = (800.0 * 2.5 + 3200.0 * 1.25 + 120.0 * 10.0) / 1e6;
    assert!((expected.total_price - by_hand).abs() < 1e-12);
}

#[test]
fn a_call_is_priced_at_the_price_of_its_own_day() {
    // OpenAI cut o3's price on 2025-06-10, from $10/$40 to $2/$8 per million tokens.
    let day = |y_m_d: &str| -> u64 {
        let t = humantime::parse_rfc3339(&format!("{y_m_d}T12:00:00Z")).unwrap();
        t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
    };
    let usage = Usage {
        input_tokens: 1_000,
        output_tokens: 1_000,
        ..Usage::default()
    };
    let mut pricer = Pricer::default();
    let before = pricer
        .cost(Some("openai"), "o3", &usage, day("2025-06-01"))
        .unwrap();
    let after = pricer
        .cost(Some("openai"), "o3", &usage, day("2025-07-01"))
        .unwrap();
    assert!((before.total - 0.05).abs() < 1e-12, "{before:?}");
    assert!((after.total - 0.01).abs() < 1e-12, "{after:?}");
}

#[test]
fn a_model_with_no_known_price_has_no_cost_not_a_cost_of_zero() {
    let usage = json!({"input_tokens":10,"output_tokens":5});
    let lines = [
        call("a", "claude-x", Some("anthropic"), usage.clone()),
        call("b", "my-own-model", None, usage.clone()),
        // The same model run locally costs nothing anyone could know of.
        call("c", "gpt-4o", Some("ollama"), usage),
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":1796000001000}"#.to_string(),
    ];
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let out = run(&refs);
    for s in &out.spans {
        for key in [
            GEN_AI_USAGE_COST,
            LLM_COST_TOTAL,
            LLM_COST_PROMPT,
            LLM_COST_COMPLETION,
            ALBEDO_TURN_COST,
        ] {
            assert_eq!(s.attr(key), None, "{} has {key}", s.name);
        }
    }
    assert_eq!(out.spans.len(), 4);
}

#[test]
fn a_provider_the_table_does_not_know_is_priced_by_its_model_s_maker() {
    let usage = Usage {
        input_tokens: 2_000,
        output_tokens: 300,
        ..Usage::default()
    };
    let mut pricer = Pricer::default();
    let via = pricer.cost(Some("opencode"), "claude-sonnet-4-5", &usage, AT_MS);
    let direct = pricer.cost(Some("anthropic"), "claude-sonnet-4-5", &usage, AT_MS);
    assert!(direct.is_some());
    assert_eq!(via, direct);
    // Asked again, the memo gives the same answer.
    assert_eq!(
        pricer.cost(Some("opencode"), "claude-sonnet-4-5", &usage, AT_MS),
        direct
    );
    // More reasoning than output (a host that counts them apart) still prices the call.
    let odd = Usage {
        reasoning_tokens: Some(900),
        ..usage
    };
    assert!(pricer
        .cost(Some("anthropic"), "claude-sonnet-4-5", &odd, AT_MS)
        .is_some());
}

#[test]
fn a_turn_s_cost_is_the_sum_of_its_own_calls_and_only_under_albedo_turn_cost() {
    let out = run(&[
        r#"{"v":1,"kind":"session","session":"s","at_ms":1796000000000,"agent":"albedo"}"#,
        r#"{"v":1,"kind":"prompted","session":"s","at_ms":1796000000001,"text":"go"}"#,
        &call(
            "m1",
            "claude-sonnet-4-5",
            Some("anthropic"),
            json!({"input_tokens":1000,"output_tokens":100,"cache_read_tokens":5000}),
        ),
        r#"{"v":1,"kind":"calling","session":"s","at_ms":1796000000600,"call":{"id":"sp","name":"agents.spawn","arguments":{}}}"#,
        r#"{"v":1,"kind":"session","session":"k","at_ms":1796000000700,"agent":"helper","parent":{"session":"s","call":"sp"}}"#,
        &call(
            "k1",
            "claude-haiku-4-5",
            Some("anthropic"),
            json!({"input_tokens":400,"output_tokens":50}),
        )
        .replace(r#""session":"s""#, r#""session":"k""#),
        r#"{"v":1,"kind":"turn_ended","session":"k","at_ms":1796000000900}"#,
        r#"{"v":1,"kind":"called","session":"s","call":{"id":"sp","name":"agents.spawn","arguments":{}},"output":"done","started_ms":1796000000600,"finished_ms":1796000000950}"#,
        &call(
            "m2",
            "claude-sonnet-4-5",
            Some("anthropic"),
            json!({"input_tokens":300,"output_tokens":40,"cache_read_tokens":6000}),
        )
        .replace(
            r#""started_ms":1796000000020,"finished_ms":1796000000520"#,
            r#""started_ms":1796000000960,"finished_ms":1796000000990"#,
        ),
        r#"{"v":1,"kind":"turn_ended","session":"s","at_ms":1796000001000}"#,
    ]);
    let root = by_name(&out, "invoke_agent albedo");
    let own: f64 = out
        .spans
        .iter()
        .filter(|s| s.name == "chat claude-sonnet-4-5")
        .map(|s| double_attr(s, GEN_AI_USAGE_COST).unwrap())
        .sum();
    let turn = double_attr(root, ALBEDO_TURN_COST).unwrap();
    assert!((turn - own).abs() < 1e-15, "{turn} != {own}");
    let helper = by_name(&out, "invoke_agent helper");
    let helper_call = by_name(&out, "chat claude-haiku-4-5");
    assert_eq!(
        double_attr(helper, ALBEDO_TURN_COST),
        double_attr(helper_call, GEN_AI_USAGE_COST),
        "a sub-agent's turn has its own"
    );
    assert!(helper_call.attr(GEN_AI_USAGE_COST).is_some());
    for key in [
        GEN_AI_USAGE_COST,
        LLM_COST_TOTAL,
        LLM_COST_PROMPT,
        LLM_COST_COMPLETION,
    ] {
        assert_eq!(root.attr(key), None, "the root never says {key}");
    }
}

/// A model's base price for `key`, read from the table the crate was built from.
fn table_rate(provider: &str, model: &str, key: &str) -> f64 {
    let table: serde_json::Value =
        serde_json::from_str(include_str!("../pricing/prices.json")).unwrap();
    let p = table.as_array().unwrap().iter();
    let p = p.clone().find(|p| p["id"] == provider).unwrap();
    let m = p["models"].as_array().unwrap().iter();
    let prices = &m.clone().find(|m| m["id"] == model).unwrap()["prices"];
    let price = &prices[key];
    price["base"].as_f64().or(price.as_f64()).unwrap()
}

/// Issue 37: Anthropic's one-hour cache writes cost more than its five-minute ones, and its
/// web searches cost per search. Both reach the price, at the table's rates, and the span.
#[test]
fn one_hour_cache_writes_and_web_searches_are_priced_at_the_table_s_rates() {
    let usage = json!({"input_tokens":1840,"output_tokens":210,"cache_read_tokens":12000,
        "cache_write_tokens":1500,"cache_write_1h_tokens":1200,"web_searches":3});
    let out = run(&[&call("m1", "claude-sonnet-4-5", Some("anthropic"), usage)]);
    let chat = by_name(&out, "chat claude-sonnet-4-5");
    let rate = |key| table_rate("anthropic", "claude-sonnet-4-5", key);
    let by_table = (1840.0 * rate("input_mtok")
        + 12000.0 * rate("cache_read_mtok")
        + 300.0 * rate("cache_write_mtok")
        + 1200.0 * rate("cache_write_1h_mtok")
        + 210.0 * rate("output_mtok"))
        / 1e6
        + 3.0 * rate("web_searches_kcount") / 1e3;
    // $3 input, $0.30 cache read, $3.75 and $6 cache writes (5 min, 1 h), $15 output per
    // million tokens; $10 per thousand searches.
    let by_hand =
        (1840.0 * 3.0 + 12000.0 * 0.3 + 300.0 * 3.75 + 1200.0 * 6.0 + 210.0 * 15.0) / 1e6 + 0.03;
    assert!(
        (by_table - by_hand).abs() < 1e-12,
        "{by_table} != {by_hand}"
    );
    let cost = double_attr(chat, GEN_AI_USAGE_COST).unwrap();
    assert!((cost - by_table).abs() < 1e-12, "{cost} != {by_table}");
    let expected = crate_price(
        "claude-sonnet-4-5",
        "anthropic",
        &[
            (UsageKey::INPUT_TOKENS, 15340.0),
            (UsageKey::CACHE_READ_TOKENS, 12000.0),
            (UsageKey::CACHE_WRITE_TOKENS, 1500.0),
            (UsageKey::CACHE_WRITE_1H_TOKENS, 1200.0),
            (UsageKey::WEB_SEARCHES, 3.0),
            (UsageKey::OUTPUT_TOKENS, 210.0),
        ],
        AT_MS,
    );
    assert_eq!(Some(cost), Some(expected.total_price));
    assert_eq!(double_attr(chat, LLM_COST_TOTAL), Some(cost));
    assert_eq!(
        double_attr(chat, LLM_COST_PROMPT),
        Some(expected.input_price)
    );
    assert_eq!(
        chat.attr(ALBEDO_CHAT_CACHE_WRITE_1H_TOKENS),
        Some(&Value::Int(1200))
    );
    assert_eq!(chat.attr(ALBEDO_CHAT_WEB_SEARCHES), Some(&Value::Int(3)));
    assert_eq!(
        chat.attr(GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS),
        Some(&Value::Int(1500))
    );

    // More hour-long writes than writes (a host's slip) prices all the writes at the hour's
    // rate, not the call at nothing; a call without either says neither.
    let mut pricer = Pricer::default();
    let odd = Usage {
        input_tokens: 100,
        cache_write_tokens: 50,
        cache_write_1h_tokens: 80,
        ..Usage::default()
    };
    let odd = pricer.cost(Some("anthropic"), "claude-sonnet-4-5", &odd, AT_MS);
    let whole = (100.0 * 3.0 + 50.0 * 6.0) / 1e6;
    assert!((odd.unwrap().total - whole).abs() < 1e-12, "{odd:?}");
    let plain = run(&[&call(
        "m2",
        "claude-sonnet-4-5",
        Some("anthropic"),
        json!({"input_tokens":1,"output_tokens":1}),
    )]);
    let plain = by_name(&plain, "chat claude-sonnet-4-5");
    assert_eq!(plain.attr(ALBEDO_CHAT_CACHE_WRITE_1H_TOKENS), None);
    assert_eq!(plain.attr(ALBEDO_CHAT_WEB_SEARCHES), None);
}
