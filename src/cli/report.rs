//! `report` and `store`: usage and cost from the local store, on standard output, as a table
//! readable at 80 columns or as ccusage's JSON; and where the store is, what it holds, and
//! pruning it.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use jiff::civil::Date;
use jiff::tz::TimeZone;

use albedo_otel::config::{Overrides, Settings};
use albedo_otel::export::store::report::{self, By, Period};
use albedo_otel::export::store::Store;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeriodArg {
    Daily,
    Weekly,
    Monthly,
    Session,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByArg {
    Agent,
    Model,
    Repository,
    Branch,
    User,
}

#[derive(Args)]
pub struct ReportArgs {
    /// What each row covers
    #[arg(value_enum, default_value = "daily")]
    period: PeriodArg,
    /// From this day on (YYYY-MM-DD)
    #[arg(long, value_name = "DATE")]
    since: Option<Date>,
    /// Up to this day, inclusive (YYYY-MM-DD)
    #[arg(long, value_name = "DATE")]
    until: Option<Date>,
    /// The time zone days begin in (IANA, such as Europe/Paris) [default: the system's]
    #[arg(long, value_name = "ZONE")]
    timezone: Option<String>,
    /// Only this agent's model calls, by the name its traces carry (`gen_ai.agent.name`:
    /// claude-code, gemini-cli, codex, ...)
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// Split each period's row by this
    #[arg(long, value_enum)]
    by: Option<ByArg>,
    /// ccusage's JSON shape, with ours beside
    #[arg(long)]
    json: bool,
    /// The configuration file that says where the store is [env: ALBEDO_OTEL_CONFIG]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

#[derive(Args)]
pub struct StoreArgs {
    /// Remove what began more than this long ago, such as 90days
    #[arg(long, value_name = "AGE", value_parser = humantime::parse_duration)]
    prune_older_than: Option<std::time::Duration>,
    /// The configuration file that says where the store is [env: ALBEDO_OTEL_CONFIG]
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Prints a line on standard output; a reader that went away (`| head`) is no error.
pub(super) fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// Where the store is, as the settings say; an error when it is off.
pub(super) fn store_path(config: Option<PathBuf>) -> Result<PathBuf> {
    let overrides = Overrides {
        config,
        ..Overrides::default()
    };
    let settings = Settings::load(&overrides, &super::process_env)?;
    match settings.pipeline.store {
        Some(s) => Ok(s.path),
        None => bail!(
            "the local store is off (ALBEDO_OTEL_STORE=false, or store.enabled = false in the configuration file)"
        ),
    }
}

pub(super) const EMPTY: &str =
    "Nothing is stored yet. Turns are stored as they are exported: install the hook \
(`albedo-otel install claude-code`, or another agent) or send sessions with `albedo-otel run` or \
`albedo-otel replay FILE`.";

pub fn report(args: &ReportArgs) -> Result<i32> {
    let path = store_path(args.config.clone())?;
    let tz = match &args.timezone {
        Some(name) => TimeZone::get(name).with_context(|| format!("--timezone {name}"))?,
        None => TimeZone::system(),
    };
    let Some(store) = Store::open_to_read(&path)? else {
        if args.json {
            let empty = report::build(Vec::new(), period(args.period), by(args.by), &tz);
            say(&serde_json::to_string_pretty(&report::to_json(&empty))?);
        } else {
            say(EMPTY);
        }
        return Ok(0);
    };
    let from = args.since.map_or(0, |d| report::start_of(d, &tz));
    let to = match args.until {
        Some(d) => report::start_of(d.tomorrow().context("--until")?, &tz),
        None => i64::MAX,
    };
    let mut tallies = store.tallies(from, to)?;
    if let Some(agent) = &args.agent {
        tallies.retain(|t| &t.agent == agent);
    }
    let r = report::build(tallies, period(args.period), by(args.by), &tz);
    if args.json {
        say(&serde_json::to_string_pretty(&report::to_json(&r))?);
        return Ok(0);
    }
    if r.rows.is_empty() {
        say(EMPTY);
        return Ok(0);
    }
    print_table(&r);
    Ok(0)
}

fn period(p: PeriodArg) -> Period {
    match p {
        PeriodArg::Daily => Period::Daily,
        PeriodArg::Weekly => Period::Weekly,
        PeriodArg::Monthly => Period::Monthly,
        PeriodArg::Session => Period::Session,
    }
}

fn by(b: Option<ByArg>) -> Option<By> {
    b.map(|b| match b {
        ByArg::Agent => By::Agent,
        ByArg::Model => By::Model,
        ByArg::Repository => By::Repository,
        ByArg::Branch => By::Branch,
        ByArg::User => By::User,
    })
}

pub(super) fn tokens(n: i64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn print_table(r: &report::Report) {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::DynamicFullWidth)
        .set_width(80);
    let first = match r.period {
        Period::Daily => "Day",
        Period::Weekly => "Week of",
        Period::Monthly => "Month",
        Period::Session => "Session",
    };
    let mut header = vec![first.to_string()];
    if r.by.is_some() {
        header.push("Of".into());
    }
    header.extend(
        [
            "Models",
            "Input",
            "Output",
            "Cache write",
            "Cache read",
            "Cost",
        ]
        .map(String::from),
    );
    t.set_header(header);
    let number = |n: String| Cell::new(n).set_alignment(CellAlignment::Right);
    for row in &r.rows {
        let mut cells = vec![Cell::new(&row.period)];
        if let Some(g) = &row.group {
            cells.push(Cell::new(g));
        }
        let models: Vec<&str> = row.models.keys().map(String::as_str).collect();
        cells.push(Cell::new(models.join("\n")));
        cells.push(number(tokens(row.tokens.input)));
        cells.push(number(tokens(row.tokens.output)));
        cells.push(number(tokens(row.tokens.cache_write)));
        cells.push(number(tokens(row.tokens.cache_read)));
        let mark = if row.unpriced.is_empty() { "" } else { " *" };
        cells.push(number(format!("${:.2}{mark}", row.tokens.cost)));
        t.add_row(cells);
    }
    let mut total = vec![Cell::new("Total")];
    if r.by.is_some() {
        total.push(Cell::new(""));
    }
    total.push(Cell::new(""));
    total.push(number(tokens(r.totals.input)));
    total.push(number(tokens(r.totals.output)));
    total.push(number(tokens(r.totals.cache_write)));
    total.push(number(tokens(r.totals.cache_read)));
    total.push(number(format!("${:.2}", r.totals.cost)));
    t.add_row(total);
    say(&t.to_string());
    if !r.unpriced.is_empty() {
        let names: Vec<&str> = r.unpriced.iter().map(String::as_str).collect();
        say(&format!(
            "* not in the cost: no price is known for {} (genai-prices has none)",
            names.join(", ")
        ));
    }
}

pub fn store(args: &StoreArgs) -> Result<i32> {
    let path = store_path(args.config.clone())?;
    println!("store: {}", path.display());
    if let Some(age) = args.prune_older_than {
        let Some(_) = Store::open_to_read(&path)? else {
            println!("  empty (nothing was ever stored here)");
            return Ok(0);
        };
        let mut store = Store::open(&path)?;
        let now = jiff::Timestamp::now().as_nanosecond();
        let before = (now - age.as_nanos() as i128).clamp(0, i128::from(i64::MAX)) as i64;
        let gone = store.prune(before)?;
        println!(
            "  pruned {gone} rows older than {}",
            humantime::format_duration(age)
        );
    }
    let Some(store) = Store::open_to_read(&path)? else {
        println!("  empty (nothing was ever stored here)");
        return Ok(0);
    };
    let h = store.holdings()?;
    let day = |ns: Option<i64>| {
        ns.and_then(|n| jiff::Timestamp::from_nanosecond(i128::from(n)).ok())
            .map(|t| t.strftime("%Y-%m-%d").to_string())
            .unwrap_or_else(|| "-".into())
    };
    println!(
        "  {} turns, {} model calls, {} tool calls, from {} to {}; {} bytes",
        h.turns,
        h.model_calls,
        h.tool_calls,
        day(h.first_ns),
        day(h.last_ns),
        h.bytes
    );
    Ok(0)
}
