//! Usage and cost by day, week, month or session, from the store's model calls: the numbers
//! `albedo-otel report` prints, and its `--json` in ccusage 20's shape (so that a script
//! written for ccusage reads it), with our own fields beside. A model the price table has no
//! price for is listed as unpriced, never counted as $0. Pure, but for the clock's time zone.

use std::collections::{BTreeMap, BTreeSet};

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde_json::{json, Map, Value};

use super::rows::ModelCall;

/// What one row of the report covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Daily,
    /// Weeks from Monday.
    Weekly,
    Monthly,
    Session,
}

impl Period {
    /// The key ccusage gives the rows, and their own field for the period.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Period::Daily => ("daily", "date"),
            Period::Weekly => ("weekly", "week"),
            Period::Monthly => ("monthly", "month"),
            Period::Session => ("session", "sessionId"),
        }
    }
}

/// What rows are split by, besides their period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Agent,
    Model,
    Repository,
    Branch,
    User,
}

/// Token counts and cost, as ccusage counts them: `input` is neither read from nor written
/// to the cache.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tokens {
    pub input: i64,
    pub output: i64,
    pub cache_write: i64,
    pub cache_read: i64,
    /// US dollars, of the priced calls.
    pub cost: f64,
}

impl Tokens {
    pub fn total(&self) -> i64 {
        self.input + self.output + self.cache_write + self.cache_read
    }

    fn add(&mut self, t: &Tokens) {
        self.input += t.input;
        self.output += t.output;
        self.cache_write += t.cache_write;
        self.cache_read += t.cache_read;
        self.cost += t.cost;
    }

    fn json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("inputTokens".into(), self.input.into());
        m.insert("outputTokens".into(), self.output.into());
        m.insert("cacheCreationTokens".into(), self.cache_write.into());
        m.insert("cacheReadTokens".into(), self.cache_read.into());
        m.insert("totalTokens".into(), self.total().into());
        m
    }
}

/// Model calls alike in everything a report splits by, and in their quarter hour, added up:
/// what the store's `usage` table keeps, or one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    pub session: String,
    pub agent: String,
    pub model: String,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub user: Option<String>,
    /// Whether the price table had a price (else `tokens.cost` is 0 and says nothing).
    pub priced: bool,
    pub calls: u64,
    pub tokens: Tokens,
    /// When the first and last of their answers came, in ns since the epoch.
    pub first_ns: i64,
    pub last_ns: i64,
}

impl From<&ModelCall> for Tally {
    fn from(c: &ModelCall) -> Tally {
        let p = &c.place;
        Tally {
            session: p.session.clone(),
            agent: p.agent.clone(),
            model: c.model.clone(),
            repository: p.repository.clone(),
            branch: p.branch.clone(),
            user: p.user.clone(),
            priced: c.cost.is_some(),
            calls: 1,
            tokens: Tokens {
                input: c.input,
                output: c.output,
                cache_write: c.cache_write,
                cache_read: c.cache_read,
                cost: c.cost.unwrap_or(0.0),
            },
            first_ns: p.ended_ns,
            last_ns: p.ended_ns,
        }
    }
}

/// One row: a period (and a group, with `--by`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub period: String,
    pub group: Option<String>,
    pub tokens: Tokens,
    pub models: BTreeMap<String, Tokens>,
    pub agents: BTreeSet<String>,
    pub repositories: BTreeSet<String>,
    pub branches: BTreeSet<String>,
    pub users: BTreeSet<String>,
    /// Models of calls the price table had no price for: their cost is not in `tokens`.
    pub unpriced: BTreeSet<String>,
    pub calls: u64,
    /// The first and last calls' starts, in ns since the epoch.
    pub first_ns: i64,
    pub last_ns: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub period: Period,
    pub by: Option<By>,
    pub rows: Vec<Row>,
    pub totals: Tokens,
    pub unpriced: BTreeSet<String>,
}

/// The period `t` falls in, in `tz`.
fn period_of(t: &Tally, period: Period, tz: &TimeZone) -> String {
    if period == Period::Session {
        return t.session.clone();
    }
    // A call counts when its answer came, as ccusage counts a message: a call that began
    // before midnight and ended after it is the new day's.
    let at = Timestamp::from_nanosecond(i128::from(t.first_ns))
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_zoned_datetime(tz.clone());
    let date = at.date();
    match period {
        Period::Daily => date.to_string(),
        Period::Weekly => {
            let back = i64::from(date.weekday().to_monday_zero_offset());
            date.checked_sub(jiff::Span::new().days(back))
                .unwrap_or(date)
                .to_string()
        }
        Period::Monthly => format!("{:04}-{:02}", date.year(), date.month()),
        Period::Session => unreachable!("returned above"),
    }
}

fn group_of(t: &Tally, by: By) -> String {
    let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
    match by {
        By::Agent => t.agent.clone(),
        By::Model => t.model.clone(),
        By::Repository => or_none(&t.repository),
        By::Branch => or_none(&t.branch),
        By::User => or_none(&t.user),
    }
}

/// The report of `tallies` (already chosen by time and agent), by `period`, split `by`.
pub fn build(
    tallies: impl IntoIterator<Item = Tally>,
    period: Period,
    by: Option<By>,
    tz: &TimeZone,
) -> Report {
    let mut rows: BTreeMap<(String, Option<String>), Row> = BTreeMap::new();
    let mut totals = Tokens::default();
    let mut unpriced = BTreeSet::new();
    for t in tallies {
        let key = (period_of(&t, period, tz), by.map(|b| group_of(&t, b)));
        let row = rows.entry(key).or_insert_with_key(|key| Row {
            period: key.0.clone(),
            group: key.1.clone(),
            ..Row::default()
        });
        row.tokens.add(&t.tokens);
        match row.models.get_mut(&t.model) {
            Some(m) => m.add(&t.tokens),
            None => {
                row.models.insert(t.model.clone(), t.tokens.clone());
            }
        }
        if !row.agents.contains(&t.agent) {
            row.agents.insert(t.agent.clone());
        }
        row.repositories.extend(t.repository);
        row.branches.extend(t.branch);
        row.users.extend(t.user);
        if !t.priced {
            row.unpriced.insert(t.model.clone());
            unpriced.insert(t.model.clone());
        }
        if row.calls == 0 || t.first_ns < row.first_ns {
            row.first_ns = t.first_ns;
        }
        row.calls += t.calls;
        row.last_ns = row.last_ns.max(t.last_ns);
        totals.add(&t.tokens);
    }
    let mut rows: Vec<Row> = rows.into_values().collect();
    if period == Period::Session {
        // As ccusage lists sessions: the most recently active last.
        rows.sort_by_key(|r| r.last_ns);
    }
    Report {
        period,
        by,
        rows,
        totals,
        unpriced,
    }
}

/// When `date` begins in `tz`, in ns since the epoch.
pub fn start_of(date: Date, tz: &TimeZone) -> i64 {
    date.to_zoned_datetime(tz.clone())
        .map(|z| z.timestamp().as_nanosecond())
        .unwrap_or(0)
        .clamp(0, i128::from(i64::MAX)) as i64
}

/// The report as JSON: ccusage 20's shape (a key named for the period kind, `daily`, `weekly`,
/// `monthly` or `session`, holding its rows,
/// each with its period, tokens, cost, models and their breakdown, then `totals`), with
/// `period`, `agent`, `agents`, `repositories`, `branches`, `users` and `unpricedModels`
/// beside.
pub fn to_json(r: &Report) -> Value {
    let (kind, own) = r.period.keys();
    let rows: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            let mut m = Map::new();
            m.insert(own.into(), row.period.clone().into());
            m.insert("period".into(), row.period.clone().into());
            let agent = match (r.by, &row.group) {
                (Some(By::Agent), Some(g)) => g.clone(),
                _ if row.agents.len() == 1 => row.agents.iter().next().cloned().unwrap_or_default(),
                _ => "all".into(),
            };
            m.insert("agent".into(), agent.into());
            if let (Some(_), Some(g)) = (r.by, &row.group) {
                m.insert("group".into(), g.clone().into());
            }
            m.extend(row.tokens.json());
            m.insert("totalCost".into(), json!(row.tokens.cost));
            m.insert(
                "modelsUsed".into(),
                row.models.keys().cloned().collect::<Vec<_>>().into(),
            );
            let breakdowns: Vec<Value> = row
                .models
                .iter()
                .map(|(name, t)| {
                    let mut b = Map::new();
                    b.insert("modelName".into(), name.clone().into());
                    b.extend(t.json());
                    b.insert("cost".into(), json!(t.cost));
                    if row.unpriced.contains(name) {
                        b.insert("missingPricing".into(), true.into());
                    }
                    Value::Object(b)
                })
                .collect();
            m.insert("modelBreakdowns".into(), breakdowns.into());
            if r.period == Period::Session {
                let at = |ns: i64| {
                    Timestamp::from_nanosecond(i128::from(ns))
                        .map(|t| t.to_string())
                        .unwrap_or_default()
                };
                m.insert("firstActivity".into(), at(row.first_ns).into());
                m.insert("lastActivity".into(), at(row.last_ns).into());
                // Where ccusage 20 puts them.
                m.insert(
                    "metadata".into(),
                    json!({"firstActivity": at(row.first_ns), "lastActivity": at(row.last_ns)}),
                );
            }
            let list = |s: &BTreeSet<String>| Value::from(s.iter().cloned().collect::<Vec<_>>());
            m.insert("agents".into(), list(&row.agents));
            m.insert("repositories".into(), list(&row.repositories));
            m.insert("branches".into(), list(&row.branches));
            m.insert("users".into(), list(&row.users));
            m.insert("unpricedModels".into(), list(&row.unpriced));
            m.insert("modelCalls".into(), row.calls.into());
            Value::Object(m)
        })
        .collect();
    let mut totals = r.totals.json();
    totals.insert("totalCost".into(), json!(r.totals.cost));
    totals.insert(
        "unpricedModels".into(),
        r.unpriced.iter().cloned().collect::<Vec<_>>().into(),
    );
    let mut out = Map::new();
    out.insert(kind.into(), rows.into());
    out.insert("totals".into(), Value::Object(totals));
    Value::Object(out)
}

#[cfg(test)]
mod tests;
