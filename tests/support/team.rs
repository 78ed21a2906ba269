//! A small team's sessions, for the tests that follow albedo-otel's GenAI metrics into
//! Prometheus: the example session worked by two people, each in a checkout of their own
//! repository (its `origin` remote and git `user.email` are where albedo-otel finds repository
//! and user), and what the model-call spans of a set of runs total per person: what
//! Prometheus must show, tokens exactly and cost to the cent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::prometheus::Prometheus;
use super::scratch::{git_checkout, Scratch};
use super::traces::assembled;
use super::{demo_session, repo_file};

/// Who, and the repository they work in: the remote as the checkout's config holds it, and as
/// albedo-otel reports it (`.git` removed).
pub struct Member {
    pub user: &'static str,
    pub remote: &'static str,
    pub repository: &'static str,
}

pub const ALICE: Member = Member {
    user: "alice@example.com",
    remote: "https://github.com/acme/parser.git",
    repository: "https://github.com/acme/parser",
};
pub const BOB: Member = Member {
    user: "bob@example.com",
    remote: "https://github.com/acme/web.git",
    repository: "https://github.com/acme/web",
};

/// The example session's agents and models, as the team dashboard's variables list them; the
/// first of each is one that the first member's sessions have together.
pub const AGENTS: [&str; 2] = ["albedo", "helper"];
pub const MODELS: [&str; 2] = ["claude-sonnet-4-5", "claude-haiku-4-5"];

/// A checkout on `main`, written file by file as git leaves one (no `git` needed).
pub fn checkout(member: &Member) -> Scratch {
    git_checkout(
        member.remote,
        "main",
        "0123456789abcdef0123456789abcdef01234567",
        Some(member.user),
    )
}

/// The example session (two agents, two models, tool calls, one refused) under session ids of
/// its own (`demo-TAG`), worked in `checkout`: a run of one exporter process.
pub fn session(dir: &Path, checkout: &Path, tag: &str) -> PathBuf {
    let workspace = serde_json::to_string(checkout.to_str().unwrap()).unwrap();
    let text = String::from_utf8(demo_session())
        .unwrap()
        .replace("demo-7f3a", &format!("demo-{tag}"))
        .replace("\"/home/dev/parser\"", &workspace);
    assert!(
        text.contains(&workspace),
        "{} no longer works in /home/dev/parser",
        repo_file("examples/demo-session.ndjson")
    );
    let path = dir.join(format!("session-{tag}.ndjson"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Input and output tokens and US dollars.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub input: f64,
    pub output: f64,
    pub cost: f64,
}

impl Totals {
    /// Tokens exactly, cost to the cent.
    pub fn agrees(&self, other: &Totals) -> bool {
        self.input == other.input
            && self.output == other.output
            && (self.cost - other.cost).abs() < 0.005
    }
}

/// What the chat spans of the runs of `inputs` total, by their `user.id`: the spans the
/// exporter sends for them, as its file exporter writes them (ids and values are derived from
/// the input, so every run assembles the same ones).
pub fn span_totals(inputs: &[&Path]) -> BTreeMap<String, Totals> {
    let mut out: BTreeMap<String, Totals> = BTreeMap::new();
    for input in inputs {
        for s in assembled(input) {
            if s.attr_str("gen_ai.operation.name") != Some("chat") {
                continue;
            }
            let user = s.attr_str("user.id").unwrap_or("").to_string();
            let num = |k: &str, t: &str| {
                s.attributes
                    .get(k)
                    .and_then(|v| v[t].as_f64())
                    .unwrap_or(0.0)
            };
            let t = out.entry(user).or_default();
            t.input += num("gen_ai.usage.input_tokens", "int");
            t.output += num("gen_ai.usage.output_tokens", "int");
            t.cost += num("gen_ai.usage.cost", "double");
        }
    }
    out
}

/// What Prometheus holds now: the cumulative series summed by `user_id`.
pub fn prometheus_totals(prometheus: &Prometheus) -> Result<BTreeMap<String, Totals>, String> {
    let mut out: BTreeMap<String, Totals> = BTreeMap::new();
    let value = |s: &serde_json::Value| -> f64 {
        s["value"][1]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let tokens = "sum by (user_id, gen_ai_token_type) (gen_ai_client_token_usage_sum)";
    for s in prometheus.query(tokens)? {
        let t = out
            .entry(s["metric"]["user_id"].as_str().unwrap_or("").to_string())
            .or_default();
        match s["metric"]["gen_ai_token_type"].as_str() {
            Some("input") => t.input = value(&s),
            Some("output") => t.output = value(&s),
            other => return Err(format!("a token type {other:?}: {s}")),
        }
    }
    for s in prometheus.query("sum by (user_id) (albedo_usage_cost_USD_total)")? {
        out.entry(s["metric"]["user_id"].as_str().unwrap_or("").to_string())
            .or_default()
            .cost = value(&s);
    }
    Ok(out)
}

/// Waits until Prometheus's totals are `expected`, person by person; what they were at the
/// deadline otherwise.
pub fn wait_for_totals(
    prometheus: &Prometheus,
    expected: &BTreeMap<String, Totals>,
    timeout: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let now = prometheus_totals(prometheus);
        let same = now.as_ref().is_ok_and(|now| {
            now.len() == expected.len()
                && expected
                    .iter()
                    .all(|(user, t)| now.get(user).is_some_and(|n| n.agrees(t)))
        });
        if same {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "after {timeout:?}, Prometheus has\n  {now:?}\nand the spans say\n  {expected:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
