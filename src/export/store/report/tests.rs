use super::*;
use crate::export::store::rows::Place;

/// 2026-03-01T23:30:00Z.
const LATE_UTC: i64 = 1_772_407_800_000_000_000;
const HOUR: i64 = 3_600_000_000_000;

fn call(model: &str, at_ns: i64, cost: Option<f64>, agent: &str) -> ModelCall {
    ModelCall {
        place: Place {
            session: "s1".into(),
            agent: agent.into(),
            started_ns: at_ns,
            ended_ns: at_ns + 1,
            repository: Some("https://example.com/r.git".into()),
            ..Place::default()
        },
        key: format!("{model}{at_ns}"),
        model: model.into(),
        provider: Some("anthropic".into()),
        input: 10,
        output: 5,
        cache_read: 100,
        cache_write: 20,
        reasoning: None,
        cost,
    }
}

#[test]
fn a_day_is_the_user_s_day_and_an_unpriced_model_is_never_zero() {
    let calls = [
        call("claude-sonnet-4-5", LATE_UTC, Some(0.5), "claude-code"),
        call("mystery-1", LATE_UTC + HOUR, None, "claude-code"),
    ];
    let utc = build(
        calls.iter().map(Tally::from),
        Period::Daily,
        None,
        &TimeZone::UTC,
    );
    let days: Vec<&str> = utc.rows.iter().map(|r| r.period.as_str()).collect();
    assert_eq!(days, ["2026-03-01", "2026-03-02"]);
    let la = TimeZone::get("America/Los_Angeles").unwrap();
    let local = build(calls.iter().map(Tally::from), Period::Daily, None, &la);
    assert_eq!(local.rows.len(), 1, "both on the 1st in Los Angeles");
    assert_eq!(local.rows[0].period, "2026-03-01");
    let json = to_json(&local);
    let row = &json["daily"][0];
    assert_eq!(row["date"], "2026-03-01");
    assert_eq!(row["period"], "2026-03-01");
    assert_eq!(row["agent"], "claude-code");
    assert_eq!(row["inputTokens"], 20);
    assert_eq!(row["cacheCreationTokens"], 40);
    assert_eq!(row["cacheReadTokens"], 200);
    assert_eq!(row["totalTokens"], 270);
    assert_eq!(row["totalCost"], 0.5);
    assert_eq!(row["unpricedModels"], json!(["mystery-1"]));
    assert_eq!(row["modelsUsed"], json!(["claude-sonnet-4-5", "mystery-1"]));
    assert_eq!(row["modelBreakdowns"][1]["modelName"], "mystery-1");
    assert_eq!(json["totals"]["unpricedModels"], json!(["mystery-1"]));
    assert_eq!(json["totals"]["totalTokens"], 270);
}

#[test]
fn weeks_begin_on_monday_and_rows_split_by_agent() {
    // 2026-03-01 is a Sunday: its week began on 2026-02-23.
    let calls = [
        call("m", LATE_UTC, Some(1.0), "claude-code"),
        call("m", LATE_UTC + 2 * HOUR, Some(2.0), "codex"),
    ];
    let r = build(
        calls.iter().map(Tally::from),
        Period::Weekly,
        Some(By::Agent),
        &TimeZone::UTC,
    );
    let rows: Vec<(&str, Option<&str>)> = r
        .rows
        .iter()
        .map(|r| (r.period.as_str(), r.group.as_deref()))
        .collect();
    assert_eq!(
        rows,
        [
            ("2026-02-23", Some("claude-code")),
            ("2026-03-02", Some("codex"))
        ]
    );
    let json = to_json(&r);
    assert_eq!(json["weekly"][1]["week"], "2026-03-02");
    assert_eq!(json["weekly"][1]["agent"], "codex");
    assert_eq!(json["totals"]["totalCost"], 3.0);
}
