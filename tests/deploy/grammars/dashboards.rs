//! Every query Grafana would send from what deploy/ provisions: panel targets, annotations and
//! query variables of the dashboards, and the provisioned datasources' own queries; each with
//! the datasource it goes to and where it is, so a failure can name it.

use std::collections::HashMap;

use serde_json::Value as Json;
use yaml_rust2::Yaml;

use super::grafana_vars::Datasource;

/// What a query's text is, for the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A query in the datasource's language.
    Query,
    /// A Prometheus query variable: one of Grafana's templating functions, classified only after
    /// substitution, as Grafana does (see `variable_query`).
    VariableQuery,
}

#[derive(Clone, Debug)]
pub struct Found {
    /// File, then panel title and id, and refId: what a failure names.
    pub origin: String,
    pub ds: Datasource,
    pub kind: Kind,
    pub text: String,
}

/// The provisioned datasources by uid and by name, and the default one.
pub struct Datasources {
    types: HashMap<String, String>,
    default: Option<String>,
}

impl Datasources {
    pub fn from_provisioning(y: &Yaml) -> Datasources {
        let mut types = HashMap::new();
        let mut default = None;
        for ds in y["datasources"].as_vec().into_iter().flatten() {
            let kind = ds["type"].as_str().unwrap_or("").to_string();
            for key in ["uid", "name"] {
                if let Some(k) = ds[key].as_str() {
                    types.insert(k.to_string(), kind.clone());
                }
            }
            if ds["isDefault"].as_bool() == Some(true) {
                default = Some(kind);
            }
        }
        Datasources { types, default }
    }

    /// The plugin type a datasource reference resolves to: `{type, uid}`, a uid or a name
    /// (older dashboards), a `${ds}` datasource variable, or nothing (the default datasource).
    fn resolve(&self, r: &Json, dashboard: &Json) -> Option<String> {
        let by_key = |k: &str| -> Option<String> {
            if let Some(var) = k
                .strip_prefix("${")
                .and_then(|k| k.strip_suffix('}'))
                .or(k.strip_prefix('$'))
            {
                // A datasource variable's `query` is the plugin type it lists.
                return dashboard["templating"]["list"]
                    .as_array()?
                    .iter()
                    .find(|v| v["name"] == var && v["type"] == "datasource")
                    .and_then(|v| v["query"].as_str().map(String::from));
            }
            self.types.get(k).cloned()
        };
        match r {
            Json::Null => self.default.clone(),
            Json::String(k) => by_key(k),
            Json::Object(o) => match (
                o.get("type").and_then(Json::as_str),
                o.get("uid").and_then(Json::as_str),
            ) {
                (Some(t), _) if t != "datasource" => Some(t.to_string()),
                (_, Some(uid)) => by_key(uid).or_else(|| Some(uid.to_string())),
                _ => self.default.clone(),
            },
            _ => None,
        }
    }
}

fn is_mixed(t: &Option<String>) -> bool {
    matches!(t.as_deref(), Some("-- Mixed --" | "mixed"))
}

fn walk_panels<'a>(panels: &'a [Json], out: &mut Vec<&'a Json>) {
    for p in panels {
        out.push(p);
        // A collapsed row keeps its panels inside it.
        if let Some(inner) = p["panels"].as_array() {
            walk_panels(inner, out);
        }
    }
}

/// Datasource plugin types whose queries are not text in a query language: nothing to parse.
const NO_LANGUAGE: &[&str] = &[
    "jaeger",     // search fields (service, operation, tags)
    "__expr__",   // server-side expressions: math over other refIds
    "grafana",    // the built-in annotations and random walk
    "datasource", // a reference by uid alone to one of the special datasources below
    "-- Grafana --",
    "-- Dashboard --", // another panel's results
];

/// What a dashboard yields: queries to parse, and what stopped one being collected.
#[derive(Default)]
struct Collected {
    found: Vec<Found>,
    problems: Vec<String>,
}

impl Collected {
    fn push(
        &mut self,
        origin: String,
        ds_type: Option<String>,
        text: Option<&str>,
        field: &str,
        kind: Kind,
    ) {
        let ds = match ds_type.as_deref() {
            Some("prometheus") => Datasource::Prometheus,
            Some("tempo") => Datasource::Tempo,
            Some(t) if NO_LANGUAGE.contains(&t) => return,
            other => {
                self.problems.push(format!(
                    "{origin}: datasource {other:?} has no grammar in this test"
                ));
                return;
            }
        };
        match text.map(str::trim) {
            Some(t) if !t.is_empty() => self.found.push(Found {
                origin,
                ds,
                kind,
                text: t.to_string(),
            }),
            _ => self
                .problems
                .push(format!("{origin}: no `{field}` to parse")),
        }
    }
}

/// The queries of one dashboard, and why any could not be collected.
pub fn dashboard_queries(file: &str, d: &Json, sources: &Datasources) -> (Vec<Found>, Vec<String>) {
    let mut out = Collected::default();
    let mut panels = Vec::new();
    walk_panels(
        d["panels"].as_array().map(Vec::as_slice).unwrap_or(&[]),
        &mut panels,
    );
    for p in panels {
        let title = p["title"].as_str().unwrap_or("(untitled)");
        let panel_ds = sources.resolve(&p["datasource"], d);
        for t in p["targets"].as_array().into_iter().flatten() {
            let origin = format!(
                "{file}: panel \"{title}\" (id {}), refId {}",
                p["id"],
                t["refId"].as_str().unwrap_or("?")
            );
            let ds = match &t["datasource"] {
                Json::Null if !is_mixed(&panel_ds) => panel_ds.clone(),
                r => sources
                    .resolve(r, d)
                    .filter(|t| !is_mixed(&Some(t.clone()))),
            };
            match ds.as_deref() {
                Some("prometheus") => out.push(origin, ds, t["expr"].as_str(), "expr", Kind::Query),
                Some("tempo") => match t["queryType"].as_str() {
                    None | Some("traceql") => {
                        out.push(origin, ds, t["query"].as_str(), "query", Kind::Query)
                    }
                    // Built by Grafana from form fields or a trace id: no TraceQL is stored.
                    Some("traceqlSearch" | "serviceMap" | "traceId" | "upload" | "clear") => {}
                    Some(q) => out.problems.push(format!(
                        "{origin}: Tempo queryType {q} is unknown to this test"
                    )),
                },
                _ => out.push(origin, ds, None, "expr", Kind::Query),
            }
        }
    }

    for a in d["annotations"]["list"].as_array().into_iter().flatten() {
        if a["builtIn"].as_i64() == Some(1) {
            continue;
        }
        let origin = format!(
            "{file}: annotation \"{}\"",
            a["name"].as_str().unwrap_or("?")
        );
        let ds = sources.resolve(&a["datasource"], d);
        let field = if ds.as_deref() == Some("tempo") {
            "query"
        } else {
            "expr"
        };
        out.push(origin, ds, a[field].as_str(), field, Kind::Query);
    }

    for v in d["templating"]["list"].as_array().into_iter().flatten() {
        if v["type"] != "query" {
            continue;
        }
        let origin = format!("{file}: variable ${}", v["name"].as_str().unwrap_or("?"));
        let ds = sources.resolve(&v["datasource"], d);
        match ds.as_deref() {
            // The stored query is a string, or (Grafana 10+) an object keeping it in `query`.
            Some("prometheus") => {
                let q = v["query"].as_str().or(v["query"]["query"].as_str());
                out.push(origin, ds, q, "query", Kind::VariableQuery)
            }
            // Tempo variables list tag names or one tag's values (`label`): no TraceQL.
            Some("tempo") => {}
            _ => out.push(origin, ds, None, "query", Kind::VariableQuery),
        }
    }
    (out.found, out.problems)
}

/// Queries the provisioned datasources run themselves: Tempo's trace-to-metrics links.
pub fn datasource_queries(file: &str, y: &Yaml, sources: &Datasources) -> Vec<Found> {
    let mut found = Vec::new();
    for ds in y["datasources"].as_vec().into_iter().flatten() {
        let t2m = &ds["jsonData"]["tracesToMetrics"];
        let target = t2m["datasourceUid"]
            .as_str()
            .and_then(|u| sources.types.get(u));
        for q in t2m["queries"].as_vec().into_iter().flatten() {
            if let (Some("prometheus"), Some(text)) =
                (target.map(String::as_str), q["query"].as_str())
            {
                found.push(Found {
                    origin: format!(
                        "{file}: {} tracesToMetrics query \"{}\"",
                        ds["name"].as_str().unwrap_or("?"),
                        q["name"].as_str().unwrap_or("?")
                    ),
                    ds: Datasource::Prometheus,
                    kind: Kind::Query,
                    text: text.to_string(),
                });
            }
        }
    }
    found
}

/// What Grafana does with a Prometheus variable's query once substituted (its
/// metric_find_query / variableMigration): `label_values(selector, label)` and a bare
/// selector send the selector as `match[]`, which Prometheus parses as a series selector;
/// `query_result(expr)` runs a PromQL query; `label_values(label)`, `label_names()` and
/// `metrics(regex)` send no PromQL at all.
pub enum VariableQuery {
    Selector(String),
    Expr(String),
    Nothing,
}

pub fn variable_query(text: &str) -> VariableQuery {
    let text = text.trim();
    let re = |r: &str| regex::Regex::new(r).unwrap();
    if re(r"^label_names\((.*)\)\s*$").is_match(text) || re(r"^metrics\((.+)\)\s*$").is_match(text)
    {
        return VariableQuery::Nothing;
    }
    if let Some(c) =
        re(r"^label_values\((?:(.+),\s*)?([a-zA-Z_$][a-zA-Z0-9_]*)\)\s*$").captures(text)
    {
        return match c.get(1) {
            Some(selector) => VariableQuery::Selector(selector.as_str().to_string()),
            None => VariableQuery::Nothing,
        };
    }
    if let Some(c) = re(r"^query_result\((.+)\)\s*$").captures(text) {
        return VariableQuery::Expr(c[1].to_string());
    }
    VariableQuery::Selector(text.to_string())
}
