//! Grafana's template variables, substituted the way Grafana substitutes them before a query
//! leaves for Prometheus or Tempo: the grammars must see what the datasource would receive, not
//! `$session`, which lezer-traceql even accepts as a template-variable node.
//!
//! The rules, from Grafana's source (public/app/features/templating, packages/grafana-prometheus,
//! the Tempo datasource, pkg/promlib/models/query.go):
//! - a reference is `$name`, `[[name]]`, `[[name:format]]`, `${name}`, `${name.field}` or
//!   `${name:format}` (Grafana's VARIABLE_REGEX);
//! - without a format, Prometheus queries use `interpolateQueryExpr`: a variable that is
//!   neither multi-value nor has "All" only gets `\` and `'` escaped; otherwise every value is
//!   regex-escaped and several are joined as `(a|b)`. Tempo queries use the `pipe` format: values
//!   joined by `|`, unescaped;
//! - "All" with a custom all value (`allValue`, `.*` here) inserts it as is, unformatted;
//! - the interval and range variables: `$__interval` like Grafana's FormatInterval (`21s`),
//!   `$__range` as `<seconds>s`, the `_ms`/`_s` forms as integers, and, in Prometheus queries
//!   only, `$__rate_interval` as Go prints a duration (`1m0s`): max(interval + scrape interval,
//!   4 × scrape interval), with the datasource's default 15 s scrape interval;
//! - a name Grafana does not know stays in the text as written.

use regex::Regex;
use serde_json::Value as Json;

/// The datasource a query goes to: it decides how values are formatted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datasource {
    Prometheus,
    Tempo,
}

/// Which selection of every variable to render: Grafana sends a different text for each, and
/// each must parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// "All": the custom all value, or every option.
    All,
    /// One value picked.
    One,
    /// Two values picked, where the variable allows several.
    Many,
}

pub const SELECTIONS: [Selection; 3] = [Selection::All, Selection::One, Selection::Many];

/// Values no dashboard stores for a query variable (its options come from Prometheus at run
/// time). The `.` makes the regex escaping show.
const SAMPLES: [&str; 2] = ["albedo.sample-1", "albedo.sample-2"];

/// The scrape interval Grafana assumes for a Prometheus datasource without `timeInterval`.
const SCRAPE_S: i64 = 15;
/// Dashboard time: 2023-11-14T22:13:20Z minus the range, to then.
const TO_MS: i64 = 1_700_000_000_000;

struct Variable {
    name: String,
    multi: bool,
    include_all: bool,
    all_value: Option<String>,
    samples: Vec<String>,
}

/// A dashboard's variables and time range: everything a substitution needs.
pub struct Variables {
    vars: Vec<Variable>,
    title: String,
    range_s: i64,
    /// Variables the caller scopes in (Grafana's scopedVars), e.g. `__tags` for trace-to-metrics.
    scoped: Vec<(String, String)>,
}

/// A value as Grafana holds it before formatting.
enum Value {
    One(String),
    Many(Vec<String>),
    /// The custom all value: inserted unformatted.
    CustomAll(String),
}

impl Variables {
    pub fn from_dashboard(d: &Json) -> Variables {
        let vars = d["templating"]["list"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| {
                Some(Variable {
                    name: v["name"].as_str()?.to_string(),
                    multi: v["multi"].as_bool().unwrap_or(false),
                    include_all: v["includeAll"].as_bool().unwrap_or(false),
                    all_value: v["allValue"]
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                    samples: samples(v),
                })
            })
            .collect();
        Variables {
            vars,
            title: d["title"].as_str().unwrap_or("").to_string(),
            range_s: range_s(&d["time"]),
            scoped: Vec::new(),
        }
    }

    /// No dashboard around the query (a provisioned datasource's queries).
    pub fn none() -> Variables {
        Variables::from_dashboard(&Json::Null)
    }

    /// `name` takes these values instead of what the dashboard stores or made-up ones.
    pub fn with_samples(mut self, name: &str, values: &[&str]) -> Variables {
        for v in self.vars.iter_mut().filter(|v| v.name == name) {
            v.samples = values.iter().map(|s| s.to_string()).collect();
        }
        self
    }

    pub fn scoped(mut self, name: &str, value: &str) -> Variables {
        self.scoped.push((name.to_string(), value.to_string()));
        self
    }

    /// The text Grafana sends for `text` with every variable at `selection`, or what it
    /// could not substitute.
    pub fn substitute(&self, text: &str, ds: Datasource, sel: Selection) -> Result<String, String> {
        let re = Regex::new(
            r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}",
        )
        .unwrap();
        let mut out = String::new();
        let mut errors = Vec::new();
        let mut last = 0;
        for c in re.captures_iter(text) {
            let whole = c.get(0).unwrap();
            out.push_str(&text[last..whole.start()]);
            last = whole.end();
            let name = c.get(1).or(c.get(2)).or(c.get(4)).unwrap().as_str();
            let field = c.get(5).map(|m| m.as_str());
            let format = c.get(3).or(c.get(6)).map(|m| m.as_str());
            match self.value_of(name, field, format, ds, sel) {
                Some(Ok(v)) => out.push_str(&v),
                Some(Err(e)) => errors.push(format!("{}: {e}", whole.as_str())),
                // Grafana leaves `$1` (label_replace's group reference) alone, as every name it
                // does not know; any other unknown name would reach the datasource verbatim.
                None if name.chars().all(|ch| ch.is_ascii_digit()) => out.push_str(whole.as_str()),
                None => errors.push(format!(
                    "{} is not a variable of this dashboard nor one of Grafana's; Grafana would send it as written",
                    whole.as_str()
                )),
            }
        }
        out.push_str(&text[last..]);
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors.join("; "))
        }
    }

    fn value_of(
        &self,
        name: &str,
        field: Option<&str>,
        format: Option<&str>,
        ds: Datasource,
        sel: Selection,
    ) -> Option<Result<String, String>> {
        if let Some((_, v)) = self.scoped.iter().find(|(n, _)| n == name) {
            return Some(Ok(v.clone()));
        }
        if let Some(var) = self.vars.iter().find(|v| v.name == name) {
            return Some(render(var, sel, ds, format));
        }
        self.builtin(name, field, format, ds)
    }

    fn builtin(
        &self,
        name: &str,
        field: Option<&str>,
        format: Option<&str>,
        ds: Datasource,
    ) -> Option<Result<String, String>> {
        let range_s = self.range_s;
        // Grafana's frontend: range / max data points (about the panel's width in pixels),
        // never below the scrape interval. It then rounds to a "nice" step; the grammar does not
        // care about the number, only its form.
        let interval_s = (range_s / 1000).max(SCRAPE_S);
        let rate_s = (interval_s + SCRAPE_S).max(4 * SCRAPE_S);
        let prometheus_only = |v: String| match ds {
            Datasource::Prometheus => Ok(v),
            Datasource::Tempo => Err(format!(
                "Grafana substitutes ${name} only in Prometheus queries"
            )),
        };
        let time = |ms: i64| match format {
            None => Ok(ms.to_string()),
            Some("date:seconds") => Ok((ms / 1000).to_string()),
            Some(f) => Err(format!("format {f} is not one this test renders")),
        };
        Some(match name {
            "__interval" => Ok(format_interval(interval_s)),
            "__interval_ms" => Ok((interval_s * 1000).to_string()),
            "__range" => Ok(format!("{range_s}s")),
            "__range_s" => Ok(range_s.to_string()),
            "__range_ms" => Ok((range_s * 1000).to_string()),
            "__rate_interval" => prometheus_only(go_duration(rate_s)),
            "__rate_interval_ms" => prometheus_only((rate_s * 1000).to_string()),
            "__from" => time(TO_MS - range_s * 1000),
            "__to" => time(TO_MS),
            "__dashboard" => Ok(self.title.clone()),
            "__org" => Ok(if field == Some("name") {
                "Main Org."
            } else {
                "1"
            }
            .into()),
            "__user" => Ok(match field {
                Some("login") => "admin",
                Some("email") => "admin@localhost",
                _ => "1",
            }
            .into()),
            n if n.starts_with("__") => Err(format!(
                "{n} is not a Grafana variable this test knows how to substitute"
            )),
            _ => return None,
        })
    }
}

/// The values a variable can take: what the dashboard stores, or samples.
fn samples(v: &Json) -> Vec<String> {
    let concrete = |s: &str| !s.is_empty() && !s.starts_with("$__");
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        let s = s.trim();
        if concrete(s) && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    match &v["current"]["value"] {
        Json::String(s) => add(s),
        Json::Array(a) => a.iter().filter_map(Json::as_str).for_each(&mut add),
        _ => {}
    }
    for o in v["options"].as_array().into_iter().flatten() {
        if let Some(s) = o["value"].as_str() {
            add(s);
        }
    }
    // Custom, interval and constant variables list their values in `query`, comma-separated.
    if matches!(
        v["type"].as_str(),
        Some("custom" | "interval" | "constant" | "textbox")
    ) {
        if let Some(q) = v["query"].as_str() {
            q.split(',').for_each(&mut add);
        }
    }
    if out.is_empty() {
        out = SAMPLES.map(String::from).to_vec();
    }
    out
}

fn render(
    var: &Variable,
    sel: Selection,
    ds: Datasource,
    format: Option<&str>,
) -> Result<String, String> {
    let first = var.samples[0].clone();
    let value = match sel {
        Selection::All if var.include_all => match &var.all_value {
            Some(all) => Value::CustomAll(all.clone()),
            None => Value::Many(var.samples.clone()),
        },
        _ if var.multi => Value::Many(
            var.samples
                .iter()
                .take(if sel == Selection::One { 1 } else { 2 })
                .cloned()
                .collect(),
        ),
        _ => Value::One(first),
    };
    let values = match value {
        // Grafana skips formatting a custom all value, except for the text formats.
        Value::CustomAll(all) => {
            return Ok(if format == Some("text") {
                "All".into()
            } else {
                all
            });
        }
        Value::One(v) => vec![v],
        Value::Many(vs) => vs,
    };
    let many = values.len() > 1;
    Ok(match format {
        None => match ds {
            Datasource::Prometheus if !var.multi && !var.include_all => {
                prometheus_regular_escape(&values[0])
            }
            Datasource::Prometheus => {
                let escaped: Vec<_> = values.iter().map(|v| prometheus_regex_escape(v)).collect();
                if many {
                    format!("({})", escaped.join("|"))
                } else {
                    escaped[0].clone()
                }
            }
            Datasource::Tempo => values.join("|"),
        },
        Some("raw") | Some("csv") => values.join(","),
        Some("pipe") => values.join("|"),
        Some("text") => values.join(" + "),
        Some("regex") => {
            let escaped: Vec<_> = values.iter().map(|v| regex_escape(v)).collect();
            if many {
                format!("({})", escaped.join("|"))
            } else {
                escaped[0].clone()
            }
        }
        Some("doublequote") => values
            .iter()
            .map(|v| format!("\"{}\"", v.replace('"', "\\\"")))
            .collect::<Vec<_>>()
            .join(","),
        Some("singlequote") => values
            .iter()
            .map(|v| format!("'{}'", v.replace('\'', "\\'")))
            .collect::<Vec<_>>()
            .join(","),
        Some("glob") if many => format!("{{{}}}", values.join(",")),
        Some("glob") => values[0].clone(),
        Some("json") if many => serde_json::to_string(&values).unwrap(),
        Some("json") => serde_json::to_string(&values[0]).unwrap(),
        Some(f) => return Err(format!("format {f} is not one this test renders")),
    })
}

/// Grafana's prometheusRegularEscape.
fn prometheus_regular_escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\'', "\\\\'")
}

/// Grafana's prometheusSpecialRegexEscape: the regex escape, doubled for a PromQL string.
fn prometheus_regex_escape(v: &str) -> String {
    let mut out = String::new();
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\\\\\"),
            '$' | '^' | '*' | '{' | '}' | '[' | ']' | '\'' | '+' | '?' | '.' | '(' | ')' | '|' => {
                out.push_str("\\\\");
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Grafana's `regex` format (lodash-style escapeRegExp, one backslash).
fn regex_escape(v: &str) -> String {
    let mut out = String::new();
    for ch in v.chars() {
        if "\\^$*+?.()|[]{}/".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The dashboard's relative range (`now-6h` to `now`) in seconds; 6 h when it is anything else.
fn range_s(time: &Json) -> i64 {
    let from = time["from"].as_str().unwrap_or("");
    let amount = |s: &str| -> Option<i64> {
        let (n, unit) = s.split_at(s.len().checked_sub(1)?);
        let unit = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            "w" => 604_800,
            _ => return None,
        };
        Some(n.parse::<i64>().ok()? * unit)
    };
    match (from.strip_prefix("now-"), time["to"].as_str()) {
        (Some(rel), Some("now")) => amount(rel).unwrap_or(6 * 3600),
        _ => 6 * 3600,
    }
}

/// grafana-plugin-sdk-go's gtime.FormatInterval: the largest whole unit.
fn format_interval(s: i64) -> String {
    for (unit, len) in [("y", 365 * 86_400), ("d", 86_400), ("h", 3600), ("m", 60)] {
        if s >= len {
            return format!("{}{unit}", s / len);
        }
    }
    format!("{s}s")
}

/// Go's time.Duration.String for whole seconds: `1m0s`, `1h2m3s`, `45s`.
fn go_duration(s: i64) -> String {
    let (h, m, s) = (s / 3600, s % 3600 / 60, s % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}
