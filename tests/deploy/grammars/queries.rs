//! Everything deploy/ makes Grafana send, as Grafana would send it: the dashboards' queries and
//! the datasources' own. Shared by the grammar checks (tests/deploy/query_grammars.rs) and the run
//! against a real Prometheus (tests/deploy/stack_metrics.rs).

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use yaml_rust2::{Yaml, YamlLoader};

use super::dashboards::{dashboard_queries, datasource_queries, Datasources};
use super::grafana_vars::Variables;
use super::lezer::{expand, Parse};
use crate::support::repo_file;

pub const DATASOURCES: &str = "deploy/grafana/provisioning/datasources/datasources.yaml";

pub fn yaml(path: &str) -> Yaml {
    let text = std::fs::read_to_string(repo_file(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .remove(0)
}

fn dashboard_files(dir: &Path, out: &mut Vec<PathBuf>) {
    // Grafana's file provider reads subfolders too.
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            dashboard_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// Every query, under every selection of its variables. `samples` gives a query variable the
/// values a test knows to exist (Grafana would list them from Prometheus); without them, the
/// variables take made-up values, which is all a grammar needs.
pub fn deploy_queries(samples: &[(&str, &[&str])]) -> (Vec<Parse>, Vec<String>) {
    let provisioned = yaml(DATASOURCES);
    let sources = Datasources::from_provisioning(&provisioned);
    let (mut parses, mut problems) = (Vec::new(), Vec::new());
    let mut files = Vec::new();
    dashboard_files(Path::new(&repo_file("dashboards")), &mut files);
    files.sort();
    assert!(!files.is_empty(), "no dashboards");
    let root = repo_file("");
    for file in files {
        let name = file.display().to_string().replace(&root, "");
        let d: Json = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let (found, p) = dashboard_queries(&name, &d, &sources);
        problems.extend(p);
        let mut vars = Variables::from_dashboard(&d);
        for (name, values) in samples {
            vars = vars.with_samples(name, values);
        }
        parses.extend(expand(&found, &vars, &mut problems));
    }
    // Grafana fills `$__tags` with the span's mapped tags as label matchers.
    let vars = Variables::none().scoped("__tags", r#"service_name="albedo""#);
    let found = datasource_queries(DATASOURCES, &provisioned, &sources);
    parses.extend(expand(&found, &vars, &mut problems));
    (parses, problems)
}
