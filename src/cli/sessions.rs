//! `sessions` and `show`: the sessions the local store holds, newest first, and one session's
//! or trace's turns drawn as the console exporter draws them, with no collector.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use jiff::tz::TimeZone;
use jiff::Timestamp;

use albedo_otel::export::otlp::encode;
use albedo_otel::export::store::{read, show, Store};
use albedo_otel::export::{console, store};

use super::report::{say, store_path, tokens, EMPTY};

#[derive(Args)]
pub struct SessionsArgs {
    /// How many sessions, newest first
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    limit: u64,
    /// Only this agent's sessions (claude-code, codex, droid, ...)
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// One JSON object a session, on a line of its own
    #[arg(long)]
    json: bool,
    /// The configuration file that says where the store is [env: ALBEDO_OTEL_CONFIG]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Args)]
pub struct ShowArgs {
    /// A session's id (as `sessions` lists it), or a trace's
    id: String,
    /// The configuration file that says where the store is [env: ALBEDO_OTEL_CONFIG]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub fn sessions(args: &SessionsArgs) -> Result<i32> {
    let path = store_path(args.config.clone())?;
    let Some(store) = Store::open_to_read(&path)? else {
        if !args.json {
            say(EMPTY);
        }
        return Ok(0);
    };
    let limit = usize::try_from(args.limit).unwrap_or(usize::MAX);
    let list = store.sessions(args.agent.as_deref(), limit)?;
    if args.json {
        for s in &list {
            say(&serde_json::to_string(&json(s))?);
        }
        return Ok(0);
    }
    if list.is_empty() {
        say(EMPTY);
        return Ok(0);
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::DynamicFullWidth)
        .set_width(80)
        .set_header([
            "Last active",
            "Agent",
            "Session",
            "Repository",
            "Turns",
            "Tokens",
            "Cost",
        ]);
    let tz = TimeZone::system();
    let number = |n: String| Cell::new(n).set_alignment(CellAlignment::Right);
    for s in &list {
        t.add_row(vec![
            Cell::new(when(s.last_ns, &tz)),
            Cell::new(&s.agent),
            Cell::new(&s.session),
            Cell::new(s.repository.as_deref().map_or("", short_repository)),
            number(s.turns.to_string()),
            number(tokens(s.input + s.output + s.cache_read + s.cache_write)),
            number(cost(s)),
        ]);
    }
    say(&t.to_string());
    Ok(0)
}

pub fn show(args: &ShowArgs) -> Result<i32> {
    let path = store_path(args.config.clone())?;
    let rows = match Store::open_to_read(&path)? {
        Some(store) => store.rows_of(&args.id)?,
        None => read::Rows::default(),
    };
    if rows.is_empty() {
        bail!(
            "no session or trace {} in the store ({}); `albedo-otel sessions` lists what it holds",
            args.id,
            path.display()
        );
    }
    for trace in show::traces(&rows) {
        let spans: Vec<_> = trace.iter().map(encode::span).collect();
        let continued = false;
        say(console::render(&spans, continued).trim_end());
        say("");
    }
    Ok(0)
}

/// The session as a JSON object, its cost `null` where nothing was priced.
fn json(s: &store::read::Session) -> serde_json::Value {
    serde_json::json!({
        "session": s.session, "agent": s.agent, "repository": s.repository,
        "firstActivity": Timestamp::from_nanosecond(s.first_ns.into()).ok().map(|t| t.to_string()),
        "lastActivity": Timestamp::from_nanosecond(s.last_ns.into()).ok().map(|t| t.to_string()),
        "turns": s.turns, "modelCalls": s.model_calls, "inputTokens": s.input,
        "outputTokens": s.output, "cacheReadTokens": s.cache_read,
        "cacheCreationTokens": s.cache_write,
        "totalCost": (s.model_calls > s.unpriced).then_some(s.cost),
        "unpricedModelCalls": s.unpriced,
    })
}

fn when(ns: i64, tz: &TimeZone) -> String {
    Timestamp::from_nanosecond(ns.into())
        .map(|t| {
            t.to_zoned_datetime(tz.clone())
                .strftime("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_default()
}

/// The repository's last part (`github.com/me/app.git` as `app`).
fn short_repository(url: &str) -> &str {
    let last = url.trim_end_matches('/').rsplit('/').next().unwrap_or(url);
    last.strip_suffix(".git").unwrap_or(last)
}

fn cost(s: &store::read::Session) -> String {
    match (s.model_calls, s.unpriced) {
        (0, _) => String::new(),
        (n, u) if u == n => "unpriced".into(),
        (_, 0) => format!("${:.2}", s.cost),
        (_, u) => format!("${:.2} + {u} unpriced", s.cost),
    }
}
