//! deploy/'s configs loaded by the programs that run them: every collector config by the
//! OpenTelemetry Collector's `validate`, Jaeger's by Jaeger's; the collector built from
//! deploy/build/collector/manifest.yaml holds exactly the components those configs name; and
//! the programs built are the versions deploy/.env pins for compose.
//!
//! Needs `scripts/stack build` (Go); see tests/support/stack.rs. Skips without it, unless
//! ALBEDO_OTEL_REQUIRE_TOOLS=1.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::stack::{validate, Tools};
use crate::support::*;
use yaml_rust2::{Yaml, YamlLoader};

const SECTIONS: [&str; 5] = [
    "receivers",
    "processors",
    "exporters",
    "connectors",
    "extensions",
];

fn load(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap();
    YamlLoader::load_from_str(&text).unwrap().remove(0)
}

/// Every YAML file under deploy/ that is a collector config: it has pipelines. Jaeger's is
/// one too (Jaeger v2 is a collector), for Jaeger to check.
fn collector_configs() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml")
                && !load(&p)["service"]["pipelines"].is_badvalue()
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new(&repo_file("deploy")), &mut out);
    out.sort();
    out
}

fn is_jaegers(p: &Path) -> bool {
    p.ends_with("deploy/jaeger.yaml")
}

#[test]
fn every_collector_config_in_deploy_passes_the_collectors_own_validate() {
    let Some(tools) = Tools::find() else { return };
    let configs = collector_configs();
    let names: Vec<String> = configs
        .iter()
        .map(|p| p.display().to_string().replace(&repo_file(""), ""))
        .collect();
    // The main stack, the scale tier's two, the compose test's, and Jaeger's.
    for want in [
        "deploy/otel-collector.yaml",
        "deploy/scale/gateway-collector.yaml",
        "deploy/scale/sampler-collector.yaml",
        "deploy/test/otel-collector.file.yaml",
        "deploy/jaeger.yaml",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} was not found among {names:?}"
        );
    }
    let mut refused = Vec::new();
    for (path, name) in configs.iter().zip(&names) {
        let program = if is_jaegers(path) {
            &tools.jaeger
        } else {
            &tools.otelcol
        };
        if let Err(words) = validate(program, path) {
            refused.push(format!("{name}:\n{words}"));
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n\n"));
    eprintln!("{} configs valid: {}", names.len(), names.join(", "));
}

/// The check above can fail: a misspelt component type and a misspelt key are each refused,
/// in the collector's words, naming what is wrong.
#[test]
fn a_misspelt_component_or_key_is_refused_in_the_collectors_words() {
    let Some(tools) = Tools::find() else { return };
    let dir = scratch("stack-validate");
    let original = std::fs::read_to_string(repo_file("deploy/otel-collector.yaml")).unwrap();
    for (n, (from, to, words)) in [
        (
            "span_metrics",
            "span_metrcs",
            r#"unknown type: "span_metrcs""#,
        ),
        ("dimensions:", "dimensons:", "dimensons"),
        (
            "otlp_grpc/jaeger",
            "otlp_grcp/jaeger",
            r#"unknown type: "otlp_grcp""#,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        assert!(
            original.contains(from),
            "deploy/otel-collector.yaml has no {from}"
        );
        let file = dir.join(format!("misspelt-{n}.yaml"));
        std::fs::write(&file, original.replace(from, to)).unwrap();
        let refusal = validate(&tools.otelcol, &file)
            .expect_err(&format!("the collector accepted {to} for {from}"));
        assert!(
            refusal.contains(words),
            "{to}: the refusal does not say {words}:\n{refusal}"
        );
    }
}

/// What the built collector holds, from its own `components` command: `kind/type` strings.
fn built_components(otelcol: &Path) -> BTreeSet<String> {
    let out = Command::new(otelcol).arg("components").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = YamlLoader::load_from_str(&String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .remove(0);
    let mut have = BTreeSet::new();
    for kind in SECTIONS {
        for c in doc[kind].as_vec().into_iter().flatten() {
            have.insert(format!("{kind}/{}", c["name"].as_str().unwrap()));
        }
    }
    for p in doc["providers"].as_vec().into_iter().flatten() {
        have.insert(format!("providers/{}", p["scheme"].as_str().unwrap()));
    }
    have
}

#[test]
fn the_collector_is_built_with_exactly_the_components_deploys_configs_name() {
    let Some(tools) = Tools::find() else { return };
    let mut used = BTreeSet::new();
    for path in collector_configs().iter().filter(|p| !is_jaegers(p)) {
        let doc = load(path);
        for kind in SECTIONS {
            for id in doc[kind].as_hash().into_iter().flat_map(|h| h.keys()) {
                let id = id.as_str().unwrap();
                used.insert(format!("{kind}/{}", id.split('/').next().unwrap()));
            }
        }
        let text = std::fs::read_to_string(path).unwrap();
        if text.contains("${env:") {
            used.insert("providers/env".to_string());
        }
    }
    // `--config=FILE` is read by the file provider.
    used.insert("providers/file".to_string());
    let built = built_components(&tools.otelcol);
    let missing: Vec<_> = used.difference(&built).collect();
    let unused: Vec<_> = built.difference(&used).collect();
    assert!(
        missing.is_empty() && unused.is_empty(),
        "deploy/build/collector/manifest.yaml and deploy/'s configs differ: the configs use {missing:?} \
         which the build lacks; the build has {unused:?} which no config uses"
    );
}

fn pinned_tag(env_file: &str, key: &str) -> String {
    let text = std::fs::read_to_string(repo_file(env_file)).unwrap();
    let image = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{env_file} pins no {key}"));
    image
        .rsplit(':')
        .next()
        .unwrap()
        .trim_start_matches('v')
        .to_string()
}

/// The version a module is required at in one of deploy/build/'s go.mod files.
fn required(go_mod: &str, module: &str) -> (u32, u32, u32) {
    let text = std::fs::read_to_string(repo_file(go_mod)).unwrap();
    let version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{module} ")))
        .unwrap_or_else(|| panic!("{go_mod} does not require {module}"));
    semver(version.split_whitespace().next().unwrap())
}

fn semver(v: &str) -> (u32, u32, u32) {
    let mut n = v
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u32>().unwrap());
    (n.next().unwrap(), n.next().unwrap(), n.next().unwrap())
}

/// What is built is what deploy/.env pins, read from what the builds are made of: the modules
/// the collector holds (its `components` command) and the modules Jaeger's and Prometheus'
/// go.mod files require. Jaeger 2.x is published as module v1.(x+63); Prometheus 3.x as
/// v0.3xx.
#[test]
fn the_modules_built_are_the_versions_deploy_env_pins() {
    let Some(tools) = Tools::find() else { return };
    let out = Command::new(&tools.otelcol)
        .arg("components")
        .output()
        .unwrap();
    let components = String::from_utf8_lossy(&out.stdout).into_owned();
    for env in ["deploy/.env", "deploy/scale/.env"] {
        let pinned = pinned_tag(env, "OTELCOL_IMAGE");
        let (_, minor, patch) = semver(&pinned);
        for line in components
            .lines()
            .filter_map(|l| l.trim().strip_prefix("module: "))
        {
            let (module, version) = line.split_once(' ').unwrap();
            let (major, m, p) = semver(version);
            // Stable core modules (v1.x) are released with the v0.x ones, 94 minors behind.
            let ok = if major == 1 {
                (m + 94, p) == (minor, patch)
            } else {
                (m, p) == (minor, patch)
            };
            assert!(
                ok,
                "{env} pins the collector {pinned}, but the build holds {module} {version}"
            );
        }
    }
    let (major, minor, patch) = required(
        "deploy/build/jaeger/go.mod",
        "github.com/jaegertracing/jaeger",
    );
    assert_eq!(major, 1);
    let jaeger = format!("2.{}.{patch}", minor - 63);
    assert_eq!(
        pinned_tag("deploy/.env", "JAEGER_IMAGE"),
        jaeger,
        "deploy/.env pins another Jaeger than deploy/build/jaeger builds"
    );
    let (major, minor, patch) = required(
        "deploy/build/prometheus/go.mod",
        "github.com/prometheus/prometheus",
    );
    assert_eq!((major, minor / 100), (0, 3));
    let prometheus = format!("3.{}.{patch}", minor % 100);
    for env in ["deploy/.env", "deploy/scale/.env"] {
        assert_eq!(
            pinned_tag(env, "PROMETHEUS_IMAGE"),
            prometheus,
            "{env} pins another Prometheus than deploy/build/prometheus builds"
        );
    }
}

fn printed(program: &Path, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_programs_built_are_the_versions_deploy_env_pins() {
    let Some(tools) = Tools::find() else { return };
    let otelcol = printed(&tools.otelcol, &["--version"]);
    let jaeger = printed(&tools.jaeger, &["version"]);
    let prometheus = printed(&tools.prometheus, &["--version"]);
    for (env, key, says) in [
        (
            "deploy/.env",
            "OTELCOL_IMAGE",
            format!("version {}", pinned_tag("deploy/.env", "OTELCOL_IMAGE")),
        ),
        (
            "deploy/scale/.env",
            "OTELCOL_IMAGE",
            format!(
                "version {}",
                pinned_tag("deploy/scale/.env", "OTELCOL_IMAGE")
            ),
        ),
        (
            "deploy/.env",
            "JAEGER_IMAGE",
            format!(
                "\"gitVersion\":\"v{}\"",
                pinned_tag("deploy/.env", "JAEGER_IMAGE")
            ),
        ),
        (
            "deploy/.env",
            "PROMETHEUS_IMAGE",
            format!("version {} ", pinned_tag("deploy/.env", "PROMETHEUS_IMAGE")),
        ),
        (
            "deploy/scale/.env",
            "PROMETHEUS_IMAGE",
            format!(
                "version {} ",
                pinned_tag("deploy/scale/.env", "PROMETHEUS_IMAGE")
            ),
        ),
    ] {
        let output = match key {
            "OTELCOL_IMAGE" => &otelcol,
            "JAEGER_IMAGE" => &jaeger,
            _ => &prometheus,
        };
        assert!(
            output.contains(&says),
            "{env} {key} pins what CI does not build: the program says {output:?}, not {says:?}"
        );
    }
}
