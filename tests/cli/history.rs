//! A Claude Code history made here, with every token count known: 40 days, one to three
//! sessions a day (some running past midnight), turns of one to three model calls, sub-agents
//! in files of their own, cache writes to the 5-minute and the 1-hour cache. `import` then
//! `report daily` give each day exactly what was written on it, and ccusage 20 agrees.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::albedo;
use crate::support::*;
use albedo_otel::testing::Rng;

/// 2026-10-01T00:00:00Z, in ms.
const START_MS: u64 = 1_790_812_800_000;
const DAY_MS: u64 = 86_400_000;
const DAYS: u64 = 40;

/// The four counts `report` and ccusage give a day: input (not from or to the cache), output,
/// cache writes, cache reads.
pub(super) type Tokens = [i64; 4];

fn iso(ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
        .to_string()
}

/// One model call's line, and its counts on the day it ended (UTC).
fn answer(
    rng: &mut Rng,
    id: &str,
    session: &str,
    at: u64,
    side: bool,
    days: &mut BTreeMap<u64, Tokens>,
) -> Value {
    let (input, output) = (1 + rng.below(50), 1 + rng.below(900));
    let (five, hour, read) = (
        rng.below(4_000),
        rng.below(2) * rng.below(3_000),
        rng.below(60_000),
    );
    let day = days.entry((at - START_MS) / DAY_MS).or_default();
    let add = [input, output, five + hour, read];
    for (d, a) in day.iter_mut().zip(add) {
        *d += a as i64;
    }
    json!({"type": "assistant", "isSidechain": side, "sessionId": session, "timestamp": iso(at),
        "requestId": format!("req_{id}"), "uuid": format!("u-{id}"), "cwd": "/home/dev/app",
        "message": {"id": format!("msg_{id}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "done"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": input, "output_tokens": output,
                "cache_read_input_tokens": read, "cache_creation_input_tokens": five + hour,
                "cache_creation": {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour}}}})
}

fn prompt(session: &str, at: u64, side: bool, text: &str) -> Value {
    json!({"type": "user", "isSidechain": side, "sessionId": session, "timestamp": iso(at),
        "cwd": "/home/dev/app", "uuid": format!("p-{session}-{at}"),
        "message": {"role": "user", "content": text}})
}

fn lines(values: &[Value]) -> String {
    values.iter().map(|v| v.to_string() + "\n").collect()
}

/// Writes `days` days of history under `home`; returns each day's counts.
pub(super) fn generate(home: &Path, days_of_history: u64) -> BTreeMap<u64, Tokens> {
    let project = home.join(".claude/projects/-home-dev-app");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut days = BTreeMap::new();
    let mut n = 0;
    for day in 0..days_of_history {
        for s in 0..1 + rng.below(3) {
            let session = format!("0000{day:04}-{s:04}-4000-8000-000000000000");
            // Sessions start through the day; the last of some runs past midnight.
            let mut at = START_MS + day * DAY_MS + 3_600_000 * (8 + 5 * s) + rng.below(3_600_000);
            if s == 2 {
                at = START_MS + day * DAY_MS + DAY_MS - 120_000;
            }
            let mut main = Vec::new();
            for t in 0..1 + rng.below(4) {
                main.push(prompt(&session, at, false, &format!("turn {t}")));
                for _ in 0..1 + rng.below(3) {
                    at += 1_000 + rng.below(60_000);
                    n += 1;
                    main.push(answer(
                        &mut rng,
                        &n.to_string(),
                        &session,
                        at,
                        false,
                        &mut days,
                    ));
                }
                at += 60_000;
            }
            std::fs::create_dir_all(project.join(&session).join("subagents")).unwrap();
            if rng.below(3) == 0 {
                let mut side = vec![prompt(&session, at, true, "look around")];
                for _ in 0..2 {
                    at += 2_000;
                    n += 1;
                    side.push(answer(
                        &mut rng,
                        &n.to_string(),
                        &session,
                        at,
                        true,
                        &mut days,
                    ));
                }
                let file = project.join(&session).join("subagents/agent-a1.jsonl");
                std::fs::write(file, lines(&side)).unwrap();
            }
            std::fs::write(project.join(format!("{session}.jsonl")), lines(&main)).unwrap();
        }
    }
    days
}

fn by_day(report: &Value, key: &str) -> BTreeMap<String, Tokens> {
    let kinds = [
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
    ];
    (report[key].as_array().into_iter().flatten())
        .map(|row| {
            let day = row["date"]
                .as_str()
                .or(row["period"].as_str())
                .unwrap_or("");
            (
                day.to_string(),
                kinds.map(|k| row[k].as_i64().unwrap_or(-1)),
            )
        })
        .collect()
}

#[test]
fn report_gives_each_day_what_the_history_wrote_on_it_as_ccusage_does() {
    let home = scratch("history");
    let written: BTreeMap<String, Tokens> = generate(&home, DAYS)
        .into_iter()
        .map(|(d, t)| (iso(START_MS + d * DAY_MS)[..10].to_string(), t))
        .collect();
    assert!(written.len() >= DAYS as usize, "{written:?}");
    albedo(&home, &["import", "claude-code"], &[]);
    let out = albedo(
        &home,
        &["report", "daily", "--json", "--timezone", "UTC"],
        &[],
    );
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        by_day(&ours, "daily"),
        written,
        "report against the generator"
    );
    // Imported again: nothing more.
    albedo(&home, &["import", "claude-code"], &[]);
    let again = albedo(
        &home,
        &["report", "daily", "--json", "--timezone", "UTC"],
        &[],
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&again.stdout).unwrap(),
        ours
    );

    let Some(ccusage) = crate::support::ccusage::find() else {
        return;
    };
    let out = Command::new(ccusage)
        .args([
            "claude",
            "daily",
            "--json",
            "--offline",
            "--timezone",
            "UTC",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        by_day(&theirs, "daily"),
        written,
        "ccusage against the generator"
    );
}

/// An agent whose history cannot be read is named with the reason, and nothing else is done.
#[test]
fn import_says_why_it_reads_no_history_for_albedo_cursor_and_droid() {
    let home = scratch("import-why");
    let out = albedo(&home, &["import", "albedo", "cursor", "droid"], &[]);
    let said = String::from_utf8_lossy(&out.stdout);
    for why in [
        "albedo: it keeps no history of its own",
        "Cursor: Cursor keeps no token usage in its files",
        "Factory Droid: not read yet",
    ] {
        assert!(said.contains(why), "{why}: {said}");
    }
}
