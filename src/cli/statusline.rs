//! `statusline`: the command Claude Code runs for its status line. It reads Claude Code's
//! JSON on stdin (`session_id`, `model`, ...) and prints one line from the local store: this
//! session's cost and tokens (its exported turns), today's cost across every agent, and the
//! last hour's, as a burn rate. It never holds Claude Code up: the store is read without
//! waiting for a writer beyond a moment, and when it cannot answer at once (no store yet, the
//! store busy, input it cannot read) it prints the last line it printed. It always exits 0.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::Deserialize;

use albedo_otel::export::store::report::start_of;
use albedo_otel::export::store::Store;

/// How long the store may make the status line wait.
const BUSY: Duration = Duration::from_millis(100);

#[derive(Args)]
pub struct StatuslineArgs {
    /// The configuration file that says where the store is [env: ALBEDO_OTEL_CONFIG]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    model: Option<Model>,
}

#[derive(Deserialize)]
struct Model {
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

/// Where the last line is kept, for when there is no answer at once.
fn last_line_file() -> Option<PathBuf> {
    albedo_otel::config::state_dir(&super::process_env).map(|d| d.join("statusline.last"))
}

fn tokens(n: i64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.0}k", n as f64 / 1e3),
        n => n.to_string(),
    }
}

/// The line, if the store answers at once.
fn line(args: &StatuslineArgs, input: &Input) -> Option<String> {
    let path = super::report::store_path(args.config.clone()).ok()?;
    let store = Store::open_to_read_within(&path, BUSY).ok()??;
    let tz = jiff::tz::TimeZone::system();
    let now = jiff::Timestamp::now();
    let today = start_of(now.to_zoned_datetime(tz.clone()).date(), &tz);
    let hour_ago = (now.as_nanosecond() - 3_600_000_000_000).clamp(0, i128::from(i64::MAX)) as i64;
    let s = store.status(&input.session_id, today, hour_ago).ok()?;
    let model = input
        .model
        .as_ref()
        .and_then(|m| m.display_name.clone().or_else(|| m.id.clone()))
        .map(|m| format!("{m} · "))
        .unwrap_or_default();
    let unpriced = if s.session_unpriced { "+" } else { "" };
    Some(format!(
        "{model}session ${:.2}{unpriced} ({} tokens) · today ${:.2} · ${:.2}/h",
        s.session_cost,
        tokens(s.session_tokens),
        s.today_cost,
        s.hour_cost
    ))
}

/// The last line kept (`text`: its session, then the line), for `session`: whole if it was
/// this session's, else only what is not any one session's (today's cost, the burn rate).
fn last_for(text: &str, session: &str) -> Option<String> {
    let (theirs, line) = text.split_once('\n')?;
    if theirs == session {
        return Some(line.to_string());
    }
    line.split_once(" · today ")
        .map(|(_, rest)| format!("today {rest}"))
}

pub fn run(args: &StatuslineArgs) -> i32 {
    use std::io::{Read, Write};
    let mut text = String::new();
    let _ = std::io::stdin()
        .lock()
        .take(1 << 20)
        .read_to_string(&mut text);
    let answer = serde_json::from_str::<Input>(&text)
        .ok()
        .and_then(|input| line(args, &input));
    let session = serde_json::from_str::<Input>(&text)
        .map(|i| i.session_id)
        .unwrap_or_default();
    let kept = last_line_file();
    let shown = match answer {
        Some(l) => {
            if let Some(file) = &kept {
                if let Some(dir) = file.parent() {
                    let _ = albedo_otel::fs::create_private_dir(dir);
                }
                let _ = std::fs::write(file, format!("{session}\n{l}"));
            }
            l
        }
        None => kept
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|text| last_for(&text, &session))
            .unwrap_or_else(|| "albedo-otel: no usage stored yet".into()),
    };
    let _ = writeln!(std::io::stdout().lock(), "{shown}");
    0
}
