//! The table decoded a provider at a time prices every call as the crate's whole bundled
//! table does: same provider, same model, same dollars, same refusals.

use std::time::{Duration, UNIX_EPOCH};

use genai_prices::{Calculator, PriceCalculation, PriceRequest, Usage, UsageKey};

use super::table::Table;

/// A call's outcome, as a line to compare and to read in a failure.
fn outcome(found: Option<genai_prices::Result<PriceCalculation>>) -> String {
    match found {
        Some(Ok(p)) => format!(
            "{} {} total {} input {} output {}",
            p.provider_id, p.model_id, p.total_price, p.input_price, p.output_price
        ),
        Some(Err(e)) => format!("{:?}", e.kind()),
        None => "no calculator".into(),
    }
}

fn ours(table: &Table, provider: Option<&str>, request: &PriceRequest<'_>) -> String {
    match table.choose(provider, request) {
        Ok(Some(chosen)) => outcome(table.price(chosen, request)),
        Ok(None) => "chose a provider the table does not have".into(),
        Err(e) => format!("{:?}", e.kind()),
    }
}

#[test]
fn every_price_is_the_crate_s_own() {
    let table = Table::get().expect("the data splits");
    let whole = Calculator::bundled();
    // A call under every tier's start, and one over the usual 200,000.
    let usages = [
        Usage::from([
            (UsageKey::INPUT_TOKENS, 1_200.0),
            (UsageKey::CACHE_READ_TOKENS, 300.0),
            (UsageKey::OUTPUT_TOKENS, 80.0),
        ]),
        Usage::from([
            (UsageKey::INPUT_TOKENS, 212_000.0),
            (UsageKey::CACHE_READ_TOKENS, 150_000.0),
            (UsageKey::CACHE_WRITE_TOKENS, 2_000.0),
            (UsageKey::OUTPUT_TOKENS, 900.0),
            (UsageKey::OUTPUT_REASONING_TOKENS, 300.0),
        ]),
    ];
    let mut names: Vec<(String, String)> = Vec::new();
    for p in whole.providers() {
        names.extend(p.models().map(|m| (p.id().to_string(), m.id().to_string())));
    }
    assert!(names.len() > 1_000, "the whole table: {}", names.len());
    let providers: Vec<&str> = whole.providers().map(|p| p.id()).collect();
    let sample: Vec<&str> = whole
        .providers()
        .flat_map(|p| {
            let models: Vec<&str> = p.models().map(|m| m.id()).collect();
            [
                models.first().copied(),
                models.get(1).copied(),
                models.last().copied(),
            ]
        })
        .flatten()
        .collect();
    // Names a host passes on that are aliases, a proxy, or nobody's.
    let others = [
        "gcp.gemini",
        "aws.bedrock",
        "mistral_ai",
        "github_copilot",
        "litellm",
        "nobody",
    ];
    let models = [
        "claude-sonnet-4-5",
        "anthropic/claude-sonnet-4-5",
        "gpt-5",
        "gemini-2.5-pro",
        "no-such-model",
    ];
    let mut differ = Vec::new();
    let mut compared = 0;
    let times = [1_700_000_000_000_u64, 1_796_182_194_000];
    for (at_ms, usage) in times
        .iter()
        .flat_map(|t| usages.iter().map(move |u| (*t, u)))
    {
        let at = UNIX_EPOCH + Duration::from_millis(at_ms);
        let mut check = |provider: Option<&str>, model: &str| {
            let mut r = PriceRequest::new(model, usage).with_timestamp(at);
            if let Some(p) = provider {
                r = r.with_provider_id(p);
            }
            let (want, got) = (
                outcome(Some(whole.calculate(&r))),
                ours(table, provider, &r),
            );
            compared += 1;
            if want != got {
                differ.push(format!("{provider:?} {model}: {got}, the crate: {want}"));
            }
        };
        for (provider, model) in &names {
            check(Some(provider), model);
            check(None, model);
        }
        for provider in others {
            for model in models {
                check(Some(provider), model);
            }
        }
        // Each provider asked for others' models: those it falls back on (Azure's OpenAI
        // models, Google's Anthropic ones) are priced, the rest are not.
        for provider in &providers {
            for model in &sample {
                check(Some(provider), model);
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {compared} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[test]
fn the_table_s_providers_are_the_crate_s() {
    let table = Table::get().expect("the data splits");
    let none = Usage::from([(UsageKey::INPUT_TOKENS, 0.0)]);
    for p in Calculator::bundled().providers() {
        let request = PriceRequest::new("", &none).with_provider_id(p.id());
        let chosen = table.choose(Some(p.id()), &request).unwrap();
        let chosen = chosen.unwrap_or_else(|| panic!("{} is in the index", p.id()));
        let decoded = table.price(chosen, &request);
        assert!(decoded.is_some(), "{} decodes", p.id());
    }
}
