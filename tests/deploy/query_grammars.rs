//! The dashboards' TraceQL and PromQL parsed by the grammars Grafana's own query editors use,
//! and deploy/'s Prometheus configs checked by promtool: tests/deploy/deploy_config.rs checks what the
//! files name, this checks that Grafana, Tempo and Prometheus would accept how they say it.
//!
//! Needs node and the two grammar packages in one node_modules folder, named by
//! ALBEDO_OTEL_LEZER_DIR:
//!   npm install --prefix DIR @grafana/lezer-traceql@1.0.0 @prometheus-io/lezer-promql@0.305.0 \
//!       @lezer/lr@1.4.12 @lezer/highlight@1.2.5
//!   export ALBEDO_OTEL_LEZER_DIR=DIR/node_modules
//! and promtool from Debian's `prometheus` package, on PATH or named by ALBEDO_OTEL_PROMTOOL.
//! .ci/run installs all of them.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

use super::grammars::dashboards::{dashboard_queries, variable_query, Datasources, VariableQuery};
use super::grammars::grafana_vars::{Datasource, Selection, Variables};
use super::grammars::lezer::{expand, lezer, run, Grammar};
use super::grammars::prometheus_config::{
    file_refs, pinned_prometheus, strip, version, NEWER_KEYS,
};
use super::grammars::queries::{deploy_queries, yaml, DATASOURCES};
use crate::support::*;
use serde_json::json;
use yaml_rust2::{Yaml, YamlEmitter};

#[test]
fn every_dashboard_query_parses_with_grafanas_grammars() {
    let Some(lezer) = lezer() else {
        return;
    };
    // Only these hold anything Grafana queries with; alert rules, say, would need a parser here.
    let kinds: HashSet<String> = std::fs::read_dir(repo_file("deploy/grafana/provisioning"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        kinds,
        ["dashboards", "datasources"].map(String::from).into(),
        "deploy/grafana/provisioning has a new kind of provisioning: collect its queries here"
    );
    let (parses, mut failures) = deploy_queries(&[]);
    let (versions, parse_failures) = run(&lezer, &parses).unwrap();
    failures.extend(parse_failures);
    assert!(
        failures.is_empty(),
        "{} queries would not parse as Grafana sends them:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let count = |g: Grammar, selector: bool| {
        let origins: HashSet<_> = parses
            .iter()
            .filter(|p| p.grammar == g && p.selector == selector)
            .map(|p| &p.origin)
            .collect();
        origins.len()
    };
    let (traceql, promql, selectors) = (
        count(Grammar::TraceQL, false),
        count(Grammar::PromQL, false),
        count(Grammar::PromQL, true),
    );
    // The agents dashboard's rates, latencies, token rates and trace tables and its $session
    // variable; the team dashboard's cost, tokens, turns, tool calls and durations and its
    // four variables.
    assert!(
        traceql >= 2 && promql >= 30 && selectors >= 5,
        "only {traceql} TraceQL, {promql} PromQL queries and {selectors} selectors were found"
    );
    // The PromQL grammar is the pinned Prometheus release's: Prometheus publishes v3.N's as
    // 0.3NN.x on npm.
    let (major, minor) = pinned_prometheus("deploy/.env");
    let promql_version = versions["promql"].as_str().unwrap_or("");
    assert!(
        promql_version.starts_with(&format!("0.{}.", major * 100 + minor)),
        "@prometheus-io/lezer-promql {promql_version} is not the grammar of the pinned Prometheus v{major}.{minor}"
    );
    eprintln!(
        "{traceql} TraceQL queries by @grafana/lezer-traceql {}, {promql} PromQL queries and {selectors} \
         variable selectors by @prometheus-io/lezer-promql {promql_version}: {} texts, all parse",
        versions["traceql"].as_str().unwrap_or(""),
        parses.len()
    );
}

/// A grammar that accepted anything would pass the test above: these must fail, by the same
/// route, naming the panel, refId, offset and query; the fine panel must not.
#[test]
fn broken_queries_fail_by_the_same_route() {
    let Some(lezer) = lezer() else {
        return;
    };
    let prom = json!({"type": "prometheus", "uid": "albedo-prometheus"});
    let tempo = json!({"type": "tempo", "uid": "albedo-tempo"});
    let d = json!({
        "title": "broken",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [
            {"name": "session", "type": "query", "datasource": prom, "includeAll": true, "allValue": ".*",
             "query": {"query": "label_values(traces_span_metrics_calls_total, session_id)", "refId": "s"}},
            {"name": "summed", "type": "query", "datasource": prom,
             "query": "label_values(sum(traces_span_metrics_calls_total), session_id)"},
        ]},
        "panels": [
            {"id": 1, "title": "Unclosed spanset", "datasource": tempo, "targets": [{"refId": "A", "queryType": "traceql",
             "query": "{span.gen_ai.operation.name = \"chat\" && span.session.id =~ \"$session\" | select(span.session.id)"}]},
            {"id": 2, "title": "Dangling by", "datasource": prom, "targets": [{"refId": "B",
             "expr": "sum by ( (rate(traces_span_metrics_calls_total{session_id=~\"$session\"}[$__rate_interval]))"}]},
            {"id": 3, "title": "Undefined variable", "datasource": prom, "targets": [{"refId": "C",
             "expr": "rate(traces_span_metrics_calls_total{session_id=~\"$nosuch\"}[5m])"}]},
            {"id": 4, "title": "Fine", "datasource": {"type": "datasource", "uid": "-- Mixed --"}, "targets": [
                {"refId": "D", "datasource": prom,
                 "expr": "sum by (le) (rate(traces_span_metrics_duration_milliseconds_bucket{session_id=~\"$session\"}[$__rate_interval]))"},
                {"refId": "E", "datasource": tempo, "queryType": "traceql",
                 "query": "{span.session.id =~ \"$session\"} | select(span.session.id)"},
            ]},
        ],
    });
    let sources = Datasources::from_provisioning(&yaml(DATASOURCES));
    let (found, mut failures) = dashboard_queries("broken.json", &d, &sources);
    assert_eq!(found.len(), 7, "{found:#?}");
    let parses = expand(&found, &Variables::from_dashboard(&d), &mut failures);
    failures.extend(run(&lezer, &parses).unwrap().1);
    let report = failures.join("\n");
    for want in [
        "broken.json: panel \"Unclosed spanset\" (id 1), refId A: TraceQL parse error at offset 64",
        "broken.json: panel \"Dangling by\" (id 2), refId B: PromQL parse error at offset 9",
        "as stored: sum by ( (rate(",
        "broken.json: panel \"Undefined variable\" (id 3), refId C: $nosuch is not a variable",
        "broken.json: variable $summed: Grafana sends `sum(traces_span_metrics_calls_total)` to Prometheus \
         as a series selector (match[]), but it is a \"AggregateExpr\"",
    ] {
        assert!(report.contains(want), "expected `{want}` in:\n{report}");
    }
    assert!(
        !report.contains("Fine"),
        "a valid query was reported:\n{report}"
    );
    assert!(!report.contains("$session:"), "{report}");
}

/// Substitution needs no tools: check it against what Grafana's code does.
#[test]
fn grafana_variables_are_substituted_as_grafana_does() {
    use Selection::*;
    let d = json!({"title": "t", "time": {"from": "now-6h", "to": "now"}, "templating": {"list": [
        {"name": "session", "type": "query", "includeAll": true, "allValue": ".*", "current": {"value": "$__all"}},
        {"name": "tool", "type": "custom", "multi": true, "includeAll": true, "query": "Bash,Read.file"},
        {"name": "model", "type": "custom", "query": "claude's"},
    ]}});
    let v = Variables::from_dashboard(&d);
    let prom = |t: &str, s| v.substitute(t, Datasource::Prometheus, s).unwrap();
    let tempo = |t: &str, s| v.substitute(t, Datasource::Tempo, s);
    assert_eq!(
        prom(r#"x{s=~"$session"}[$__rate_interval]"#, All),
        r#"x{s=~".*"}[1m0s]"#
    );
    assert_eq!(
        prom(r#"x{s=~"${session}"}"#, One),
        r#"x{s=~"albedo\\.sample-1"}"#
    );
    assert_eq!(
        prom(r#"x{t=~"[[tool]]"}"#, Many),
        r#"x{t=~"(Bash|Read\\.file)"}"#
    );
    // "All" without a custom all value: every option.
    assert_eq!(
        prom(r#"x{t=~"$tool"}"#, All),
        r#"x{t=~"(Bash|Read\\.file)"}"#
    );
    assert_eq!(prom(r#"x{m="$model"}"#, One), r#"x{m="claude\\'s"}"#);
    assert_eq!(
        prom(r#"x{t="${tool:csv}"}"#, Many),
        r#"x{t="Bash,Read.file"}"#
    );
    assert_eq!(
        prom("${__interval} $__interval_ms $__range ${__range_s} [[__range_ms]] ${__rate_interval_ms}", One),
        "21s 21000 21600s 21600 21600000 60000"
    );
    assert_eq!(
        prom(r#"label_replace(x, "a", "$1", "b", "(.*)")"#, One),
        r#"label_replace(x, "a", "$1", "b", "(.*)")"#
    );
    assert_eq!(
        tempo(r#"{span.t =~ "$tool"}"#, Many).unwrap(),
        r#"{span.t =~ "Bash|Read.file"}"#
    );
    assert_eq!(
        tempo(r#"{span.s =~ "$session"}"#, All).unwrap(),
        r#"{span.s =~ ".*"}"#
    );
    assert!(tempo("$nosuch", One)
        .unwrap_err()
        .contains("$nosuch is not a variable"));
    assert!(tempo("[$__rate_interval]", One)
        .unwrap_err()
        .contains("only in Prometheus"));
    assert!(tempo("$__bogus", One).unwrap_err().contains("__bogus"));

    let sel = |t: &str| match variable_query(t) {
        VariableQuery::Selector(s) => format!("selector {s}"),
        VariableQuery::Expr(e) => format!("expr {e}"),
        VariableQuery::Nothing => "nothing".into(),
    };
    assert_eq!(
        sel("label_values(x{a=\"b\"}, session_id)"),
        "selector x{a=\"b\"}"
    );
    assert_eq!(sel("label_values(session_id)"), "nothing");
    assert_eq!(sel("label_names()"), "nothing");
    assert_eq!(sel("metrics(traces_.*)"), "nothing");
    assert_eq!(sel("query_result(topk(5, x))"), "expr topk(5, x)");
    assert_eq!(sel("up{job=\"tempo\"}"), "selector up{job=\"tempo\"}");
}
#[test]
fn prometheus_configs_pass_promtool_check_config() {
    let found = std::env::var_os("ALBEDO_OTEL_PROMTOOL")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| which("promtool"));
    let Some(promtool) = require_tool(
        "promtool",
        found,
        "install Debian's `prometheus` package, or extract usr/bin/promtool from it and set ALBEDO_OTEL_PROMTOOL",
    ) else {
        return;
    };
    let out = Command::new(&promtool).arg("--version").output().unwrap();
    let banner =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let tool = version(&banner).unwrap_or_else(|| panic!("promtool --version: {banner}"));
    for (config, env) in [
        ("deploy/prometheus.yml", "deploy/.env"),
        ("deploy/scale/prometheus.yml", "deploy/scale/.env"),
    ] {
        let pinned = pinned_prometheus(env);
        let mut doc = yaml(config);
        // The compose files mount prometheus.yml alone: a rule or secret file it named would be
        // missing in the container too, and would need mounting and mapping here.
        let mut refs = Vec::new();
        file_refs(&doc, "", &mut refs);
        assert!(
            refs.is_empty(),
            "{config} names files the compose file does not mount: {refs:?}"
        );
        let mut notes = Vec::new();
        for k in NEWER_KEYS {
            if tool >= k.since {
                continue;
            }
            for (place, v) in strip(&mut doc, k.key) {
                assert!(
                    pinned >= k.since,
                    "{config}: {place}: {} needs Prometheus {:?}, the pinned image is {pinned:?}",
                    k.key,
                    k.since
                );
                let values: Vec<&str> = v
                    .as_vec()
                    .into_iter()
                    .flatten()
                    .filter_map(Yaml::as_str)
                    .collect();
                let unique: HashSet<_> = values.iter().collect();
                assert!(
                    !values.is_empty()
                        && unique.len() == values.len()
                        && values.iter().all(|p| k.values.contains(p)),
                    "{config}: {place}: {} {values:?}: each must be one of {:?}, once",
                    k.key,
                    k.values
                );
                notes.push(format!(
                    "{place}: {} (Prometheus {}.{}+, this promtool is {}.{}; its values checked here)",
                    k.key, k.since.0, k.since.1, tool.0, tool.1
                ));
            }
        }
        let path = if notes.is_empty() {
            PathBuf::from(repo_file(config))
        } else {
            let mut text = String::new();
            YamlEmitter::new(&mut text).dump(&doc).unwrap();
            let p = temp_dir("promtool").join("prometheus.yml");
            std::fs::write(&p, text).unwrap();
            p
        };
        let out = Command::new(&promtool)
            .args(["check", "config"])
            .arg(&path)
            .output()
            .unwrap();
        let without = if notes.is_empty() {
            String::new()
        } else {
            format!(" without {}", notes.join(", "))
        };
        assert!(
            out.status.success(),
            "{config}{without}: promtool {}.{} rejects it:\n{}{}",
            tool.0,
            tool.1,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // A failing copy stays behind, to look at.
        if !notes.is_empty() {
            let _ = std::fs::remove_dir_all(path.parent().unwrap());
        }
        eprintln!(
            "{config}: promtool {}.{} check config passes{without}",
            tool.0, tool.1
        );
    }
}
