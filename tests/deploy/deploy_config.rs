//! The deploy/ stack and the dashboards, checked without Docker: collector pipelines are wired
//! (every component defined and used, every connector fed and read, current component names),
//! the compose files pin their images and validate against the compose schema, and every
//! attribute and metric name a dashboard queries is one albedo-otel or the collector's span
//! metrics really make.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::process::Command;

use crate::support::*;
use albedo_otel::assemble::semconv;
use albedo_otel::pipeline::metrics::names as genai;
use regex::Regex;
use serde_json::Value as Json;
use yaml_rust2::{Yaml, YamlLoader};

fn yaml(path: &str) -> Yaml {
    let text = std::fs::read_to_string(repo_file(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .remove(0)
}

fn keys(y: &Yaml) -> Vec<String> {
    y.as_hash()
        .map(|h| {
            h.keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec()
        .map(|v| {
            v.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

const COLLECTOR_CONFIGS: &[&str] = &[
    "deploy/otel-collector.yaml",
    "deploy/scale/gateway-collector.yaml",
    "deploy/scale/sampler-collector.yaml",
    "deploy/test/otel-collector.file.yaml",
];

/// Component types by their current names; the old ones log deprecation warnings or are gone.
const CURRENT: &[(&str, &[&str])] = &[
    ("receivers", &["otlp"]),
    (
        "processors",
        &[
            "memory_limiter",
            "batch",
            "tail_sampling",
            "delta_to_cumulative",
        ],
    ),
    (
        "exporters",
        &[
            "otlp_grpc",
            "otlp_http",
            "prometheus",
            "debug",
            "file",
            "load_balancing",
        ],
    ),
    ("connectors", &["span_metrics"]),
];

fn kind(id: &str) -> &str {
    id.split('/').next().unwrap()
}

#[test]
fn collector_pipelines_are_wired_with_current_component_names() {
    for path in COLLECTOR_CONFIGS {
        let c = yaml(path);
        let defined =
            |section: &str| -> HashSet<String> { keys(&c[section]).into_iter().collect() };
        let (receivers, processors, exporters, connectors) = (
            defined("receivers"),
            defined("processors"),
            defined("exporters"),
            defined("connectors"),
        );
        for (section, allowed) in CURRENT {
            for id in defined(section) {
                assert!(
                    allowed.contains(&kind(&id)),
                    "{path}: {section}.{id} is not a current component name"
                );
            }
        }
        let pipelines = &c["service"]["pipelines"];
        assert!(!keys(pipelines).is_empty(), "{path}: no pipelines");
        let (mut used, mut fed, mut read) = (HashSet::new(), HashSet::new(), HashSet::new());
        for name in keys(pipelines) {
            assert!(
                ["traces", "metrics", "logs"].contains(&kind(&name)),
                "{path}: pipeline {name}"
            );
            let p = &pipelines[name.as_str()];
            let rs = strings(&p["receivers"]);
            assert!(!rs.is_empty(), "{path}: pipeline {name} has no receivers");
            for r in rs {
                assert!(
                    receivers.contains(&r) || connectors.contains(&r),
                    "{path}: {name} reads undefined {r}"
                );
                if connectors.contains(&r) {
                    read.insert(r.clone());
                }
                used.insert(r);
            }
            let ps = strings(&p["processors"]);
            if let Some(i) = ps.iter().position(|x| kind(x) == "memory_limiter") {
                assert_eq!(i, 0, "{path}: {name}: memory_limiter must come first");
            }
            for x in ps {
                assert!(
                    processors.contains(&x),
                    "{path}: {name} uses undefined processor {x}"
                );
                used.insert(x);
            }
            let es = strings(&p["exporters"]);
            assert!(!es.is_empty(), "{path}: pipeline {name} has no exporters");
            for e in es {
                assert!(
                    exporters.contains(&e) || connectors.contains(&e),
                    "{path}: {name} sends to undefined {e}"
                );
                if connectors.contains(&e) {
                    fed.insert(e.clone());
                }
                used.insert(e);
            }
        }
        for id in receivers
            .iter()
            .chain(&processors)
            .chain(&exporters)
            .chain(&connectors)
        {
            assert!(used.contains(id), "{path}: {id} is defined but not used");
        }
        for id in &connectors {
            assert!(fed.contains(id), "{path}: connector {id} is never fed");
            assert!(read.contains(id), "{path}: connector {id} is never read");
        }
        // Span metrics dimensions must be attributes albedo-otel emits.
        for dim in c["connectors"]["span_metrics"]["dimensions"]
            .as_vec()
            .into_iter()
            .flatten()
        {
            let name = dim["name"].as_str().unwrap();
            assert!(
                semconv::ALL.contains(&name),
                "{path}: span_metrics dimension {name} is not emitted"
            );
        }
    }
    // The main stack: traces to Jaeger and Tempo, span metrics to Prometheus.
    let c = yaml("deploy/otel-collector.yaml");
    let traces = strings(&c["service"]["pipelines"]["traces"]["exporters"]);
    for e in ["otlp_grpc/jaeger", "otlp_grpc/tempo", "span_metrics"] {
        assert!(traces.contains(&e.to_string()), "traces pipeline lacks {e}");
    }
    // albedo-otel's own metrics: delta made cumulative, then the exporter Prometheus scrapes.
    let metrics = &c["service"]["pipelines"]["metrics"];
    assert_eq!(strings(&metrics["receivers"]), ["otlp"]);
    assert!(strings(&metrics["processors"]).contains(&"delta_to_cumulative".to_string()));
    assert_eq!(strings(&metrics["exporters"]), ["prometheus"]);
    let dims: Vec<_> = c["connectors"]["span_metrics"]["dimensions"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    for d in [
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "gen_ai.request.model",
    ] {
        assert!(dims.contains(&d), "span_metrics lacks dimension {d}");
    }
}

fn env_file(path: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(repo_file(path))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn compose_files_pin_their_images_and_mount_files_that_exist() {
    for (compose, env) in [
        ("deploy/docker-compose.yml", "deploy/.env"),
        ("deploy/scale/docker-compose.yml", "deploy/scale/.env"),
        ("deploy/test/docker-compose.yml", "deploy/.env"),
    ] {
        let vars = env_file(env);
        for (k, v) in &vars {
            let tag = v.rsplit(':').next().unwrap();
            assert!(
                v.contains(':') && tag != "latest" && !tag.is_empty(),
                "{env}: {k}={v} is not pinned"
            );
        }
        let c = yaml(compose);
        let dir = Path::new(compose).parent().unwrap();
        for name in keys(&c["services"]) {
            let service = &c["services"][name.as_str()];
            // `<<: *anchor` merges a shared block; yaml-rust2 leaves the merge to us.
            let field = |key: &str| -> Yaml {
                match &service[key] {
                    Yaml::BadValue => service["<<"][key].clone(),
                    v => v.clone(),
                }
            };
            let s = &Yaml::Hash(
                ["image", "volumes"]
                    .iter()
                    .map(|k| (Yaml::String(k.to_string()), field(k)))
                    .collect(),
            );
            let image = s["image"]
                .as_str()
                .unwrap_or_else(|| panic!("{compose}: {name} has no image"));
            let var = image.trim_start_matches("${").trim_end_matches('}');
            assert!(
                image.starts_with("${") && vars.iter().any(|(k, _)| k == var),
                "{compose}: {name} image {image} is not pinned in {env}"
            );
            for v in strings(&s["volumes"]) {
                let src = v.split(':').next().unwrap();
                if src.starts_with('.') {
                    let p = Path::new(&repo_file(&dir.to_string_lossy())).join(src);
                    assert!(
                        p.exists(),
                        "{compose}: {name} mounts {src}, which does not exist"
                    );
                }
            }
        }
    }
    let c = yaml("deploy/docker-compose.yml");
    let ports: BTreeSet<String> = keys(&c["services"])
        .iter()
        .flat_map(|n| strings(&c["services"][n.as_str()]["ports"]))
        .collect();
    for p in [
        "4317:4317",
        "4318:4318",
        "16686:16686",
        "3000:3000",
        "3200:3200",
        "9090:9090",
    ] {
        assert!(ports.contains(p), "the stack does not publish {p}");
    }
}

/// The tests run Prometheus with compose's flags (tests/support/prometheus.rs reads them);
/// `scripts/stack up` must too, or its Prometheus would refuse what compose's takes.
#[test]
fn scripts_stack_runs_prometheus_as_compose_does() {
    let flags = crate::support::prometheus::compose_flags();
    for f in [
        "--web.enable-otlp-receiver",
        "--enable-feature=otlp-deltatocumulative",
    ] {
        assert!(
            flags.iter().any(|x| x == f),
            "compose's Prometheus lacks {f}"
        );
    }
    let script = std::fs::read_to_string(repo_file("scripts/stack")).unwrap();
    for f in flags {
        assert!(
            script.contains(&f),
            "scripts/stack runs Prometheus without {f}"
        );
    }
}

#[test]
fn compose_files_validate_against_the_compose_schema() {
    // On PATH, or as a module of the python3 that pip installed it for.
    let as_module = || {
        Command::new("python3")
            .args(["-c", "import check_jsonschema"])
            .status()
            .is_ok_and(|s| s.success())
            .then(|| std::path::PathBuf::from("python3"))
    };
    let Some(checker) = require_tool(
        "check-jsonschema",
        which("check-jsonschema").or_else(as_module),
        "install it with `pip install check-jsonschema`",
    ) else {
        return;
    };
    let module = checker.as_os_str() == "python3";
    for compose in [
        "deploy/docker-compose.yml",
        "deploy/scale/docker-compose.yml",
        "deploy/test/docker-compose.yml",
    ] {
        let mut cmd = Command::new(&checker);
        if module {
            cmd.args(["-m", "check_jsonschema"]);
        }
        let out = cmd
            .args(["--builtin-schema", "vendor.compose-spec"])
            .arg(repo_file(compose))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{compose}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Metric names the span_metrics connector makes (default namespace), as Prometheus shows them.
const SPAN_METRICS: &[&str] = &[
    "traces_span_metrics_calls_total",
    "traces_span_metrics_duration_milliseconds_bucket",
    "traces_span_metrics_duration_milliseconds_sum",
    "traces_span_metrics_duration_milliseconds_count",
];

/// albedo-otel's GenAI metrics as Prometheus names them (the collector's prometheus exporter
/// and Prometheus's OTLP receiver alike): dots to underscores, the unit `s` as `_seconds`
/// (`{token}` adds nothing), `_total` on the monotonic sum, and a histogram's three series.
fn genai_metrics() -> Vec<String> {
    let prom = |n: &str| n.replace('.', "_");
    let mut out = vec![format!("{}_USD_total", prom(genai::ALBEDO_USAGE_COST))];
    for (name, suffix) in [
        (genai::GEN_AI_CLIENT_TOKEN_USAGE, ""),
        (genai::GEN_AI_CLIENT_OPERATION_DURATION, "_seconds"),
        (genai::GEN_AI_INVOKE_AGENT_DURATION, "_seconds"),
        (genai::GEN_AI_EXECUTE_TOOL_DURATION, "_seconds"),
    ] {
        for series in ["_bucket", "_sum", "_count"] {
            out.push(format!("{}{suffix}{series}", prom(name)));
        }
    }
    out
}

fn walk_panels<'a>(panels: &'a [Json], out: &mut Vec<&'a Json>) {
    for p in panels {
        out.push(p);
        if let Some(inner) = p["panels"].as_array() {
            walk_panels(inner, out);
        }
    }
}

fn datasource_uids() -> HashSet<String> {
    let d = yaml("deploy/grafana/provisioning/datasources/datasources.yaml");
    d["datasources"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|ds| ds["uid"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dashboards_query_only_what_the_exporter_emits() {
    let uids = datasource_uids();
    assert_eq!(
        uids,
        ["albedo-prometheus", "albedo-tempo", "albedo-jaeger"]
            .map(String::from)
            .into()
    );
    let c = yaml("deploy/otel-collector.yaml");
    let mut labels: HashSet<String> = [
        "service_name",
        "span_name",
        "span_kind",
        "status_code",
        "le",
        "job",
        "instance",
    ]
    .map(String::from)
    .into();
    for dim in c["connectors"]["span_metrics"]["dimensions"]
        .as_vec()
        .unwrap()
    {
        labels.insert(dim["name"].as_str().unwrap().replace('.', "_"));
    }
    for key in genai::POINT_KEYS.iter().chain([&genai::GEN_AI_TOKEN_TYPE]) {
        labels.insert(key.replace('.', "_"));
    }
    let mut metrics: Vec<String> = SPAN_METRICS.iter().map(|m| m.to_string()).collect();
    metrics.extend(genai_metrics());
    let selector = Regex::new(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}").unwrap();
    let matcher = Regex::new(r#"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*""#).unwrap();
    let grouping = Regex::new(r"\b(?:by|without)\s*\(([^)]*)\)").unwrap();
    let label_values = Regex::new(
        r"label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)",
    )
    .unwrap();
    let traceql_attr = Regex::new(r"\bspan\.([a-zA-Z0-9_.]*[a-zA-Z0-9_])").unwrap();

    let dir = repo_file("dashboards");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    assert!(!files.is_empty(), "no dashboards");
    let (mut promql, mut traceql) = (0, 0);
    for file in files {
        let name = file.display().to_string();
        let d: Json = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            d["uid"].as_str().is_some_and(|u| !u.is_empty()),
            "{name}: no uid"
        );
        let mut panels = Vec::new();
        walk_panels(d["panels"].as_array().unwrap(), &mut panels);
        let mut ids = HashSet::new();
        for p in &panels {
            let id = p["id"]
                .as_i64()
                .unwrap_or_else(|| panic!("{name}: a panel without id"));
            assert!(ids.insert(id), "{name}: panel id {id} is used twice");
        }
        let check_uid = |ds: &Json, what: &str| {
            if let Some(uid) = ds["uid"].as_str() {
                assert!(
                    uids.contains(uid) || uid.starts_with('$'),
                    "{name}: {what} uses datasource {uid}, which is not provisioned"
                );
            }
        };
        let mut queries: Vec<(String, String)> = Vec::new();
        for p in &panels {
            check_uid(&p["datasource"], p["title"].as_str().unwrap_or("?"));
            for t in p["targets"].as_array().into_iter().flatten() {
                check_uid(&t["datasource"], p["title"].as_str().unwrap_or("?"));
                let ds = t["datasource"]["type"]
                    .as_str()
                    .or(p["datasource"]["type"].as_str())
                    .unwrap_or("");
                if let Some(e) = t["expr"].as_str() {
                    queries.push((ds.to_string(), e.to_string()));
                }
                if let Some(q) = t["query"].as_str() {
                    queries.push((ds.to_string(), q.to_string()));
                }
            }
        }
        for v in d["templating"]["list"].as_array().into_iter().flatten() {
            check_uid(&v["datasource"], "a variable");
            if let Some(q) = v["definition"].as_str() {
                queries.push(("prometheus".into(), q.to_string()));
            }
        }
        for (ds, q) in queries {
            match ds.as_str() {
                "prometheus" => {
                    promql += 1;
                    for cap in selector.captures_iter(&q) {
                        assert!(
                            metrics.iter().any(|m| m == &cap[1]),
                            "{name}: `{}` is neither a span metric nor a GenAI metric: {q}",
                            &cap[1]
                        );
                        for m in matcher.captures_iter(&cap[2]) {
                            assert!(
                                labels.contains(&m[1]),
                                "{name}: label `{}` is no span_metrics dimension or metric attribute: {q}",
                                &m[1]
                            );
                        }
                    }
                    for g in grouping.captures_iter(&q) {
                        for l in g[1].split(',').map(str::trim).filter(|l| !l.is_empty()) {
                            assert!(
                                labels.contains(l),
                                "{name}: grouping by `{l}`, which no series has: {q}"
                            );
                        }
                    }
                    for lv in label_values.captures_iter(&q) {
                        assert!(metrics.iter().any(|m| m == &lv[1]), "{name}: {q}");
                        assert!(labels.contains(&lv[2]), "{name}: {q}");
                    }
                }
                "tempo" => {
                    traceql += 1;
                    let attrs: Vec<_> = traceql_attr
                        .captures_iter(&q)
                        .map(|c| c[1].to_string())
                        .collect();
                    assert!(!attrs.is_empty(), "{name}: {q}");
                    for a in attrs {
                        assert!(
                            semconv::ALL.contains(&a.as_str()),
                            "{name}: span.{a} is not an attribute albedo-otel emits: {q}"
                        );
                    }
                }
                other => panic!("{name}: a query on an unexpected datasource type {other}: {q}"),
            }
        }
    }
    // Rates, latencies, errors and tokens; cost and usage by user, repository, model and
    // agent; the two trace tables.
    assert!(
        promql >= 25 && traceql >= 2,
        "the dashboards cover less than they did: {promql} PromQL, {traceql} TraceQL queries"
    );
}

#[test]
fn grafana_provisions_the_dashboards_the_compose_stack_mounts() {
    let p = yaml("deploy/grafana/provisioning/dashboards/dashboards.yaml");
    let path = p["providers"][0]["options"]["path"].as_str().unwrap();
    let c = yaml("deploy/docker-compose.yml");
    let mounts = strings(&c["services"]["grafana"]["volumes"]);
    assert!(
        mounts
            .iter()
            .any(|m| m.starts_with("../dashboards:") && m.contains(path)),
        "grafana must mount ../dashboards at {path}: {mounts:?}"
    );
}

#[test]
fn every_deploy_yaml_file_parses() {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(&repo_file("deploy")), &mut files);
    assert!(files.len() >= 12, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let docs =
            YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            docs.first().and_then(Yaml::as_hash).is_some(),
            "{}: not a mapping",
            f.display()
        );
    }
}
