//! Prometheus, built by `scripts/stack build`, on a copy of one of deploy/'s configs (it reads
//! no environment in its config, so the copy moves the scrape targets, and, for a test that
//! should not wait 15 s per scrape, the scrape interval; nothing else), with the flags
//! deploy/docker-compose.yml runs it with, its OTLP receiver among them.

use std::path::Path;

use serde_json::Value;
use yaml_rust2::YamlLoader;

use super::repo_file;
use super::stack::{client, free_port, Proc, Tools};

/// The flags deploy/docker-compose.yml runs Prometheus with, but its config file: its
/// receivers (remote write, OTLP) and features (delta to cumulative among them).
pub fn compose_flags() -> Vec<String> {
    compose_flags_of("deploy/docker-compose.yml")
}

/// The flags the compose file `compose` runs Prometheus with, but its config file.
pub fn compose_flags_of(compose: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo_file(compose)).unwrap();
    let yaml = YamlLoader::load_from_str(&text).unwrap().remove(0);
    let flags: Vec<String> = yaml["services"]["prometheus"]["command"]
        .as_vec()
        .unwrap_or_else(|| panic!("{compose}: prometheus has a command list"))
        .iter()
        .filter_map(|f| f.as_str())
        .filter(|f| !f.starts_with("--config.file"))
        .map(String::from)
        .collect();
    assert!(!flags.is_empty(), "{compose}: no Prometheus flags");
    flags
}

/// Prometheus on a copy of a deploy/ config whose scrape targets (and interval) are the only
/// change, with the flags of the compose file beside that config.
pub struct Prometheus {
    pub proc: Proc,
    pub port: u16,
}

impl Prometheus {
    /// `replace`: each `(from, to)` of the config's text, which must be there.
    pub fn start(
        tools: &Tools,
        config: &str,
        replace: &[(&str, String)],
        dir: &Path,
    ) -> Prometheus {
        let mut text = std::fs::read_to_string(repo_file(config)).unwrap();
        for (from, to) in replace {
            assert!(text.contains(from), "{config} has no {from}");
            text = text.replace(from, to);
        }
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, text).unwrap();
        let port = free_port();
        let mut args = vec![
            format!("--config.file={}", file.display()),
            format!(
                "--storage.tsdb.path={}",
                dir.join("prometheus-data").display()
            ),
            format!("--web.listen-address=127.0.0.1:{port}"),
        ];
        let compose = Path::new(config).with_file_name("docker-compose.yml");
        args.extend(compose_flags_of(compose.to_str().unwrap()));
        let mut proc = Proc::spawn("prometheus", &tools.prometheus, &args, &[], dir);
        proc.wait_for(port);
        Prometheus { proc, port }
    }

    /// Where its OTLP receiver takes metrics over HTTP (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`).
    pub fn otlp_metrics_url(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1/otlp/v1/metrics", self.port)
    }

    /// An `/api/v1/…` call: its `data`, or Prometheus' error.
    fn api(&self, path: &str, params: &[(&str, &str)]) -> Result<Value, String> {
        let url = format!("http://127.0.0.1:{}/api/v1/{path}", self.port);
        let body: Value = client()
            .get(&url)
            .query(params)
            .send()
            .and_then(|r| r.json())
            .map_err(|e| e.to_string())?;
        if body["status"] != "success" {
            return Err(format!("{}: {}", body["errorType"], body["error"]));
        }
        Ok(body["data"].clone())
    }

    /// `/api/v1/query` at now: the result vector, or Prometheus' error.
    pub fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let data = self.api("query", &[("query", expr)])?;
        Ok(data["result"].as_array().cloned().unwrap_or_default())
    }

    /// `/api/v1/query` at `time` (Unix seconds, as Prometheus prints a sample's time).
    pub fn query_at(&self, expr: &str, time: &str) -> Result<Vec<Value>, String> {
        let data = self.api("query", &[("query", expr), ("time", time)])?;
        Ok(data["result"].as_array().cloned().unwrap_or_default())
    }

    /// `/api/v1/series?match[]=selector`: what a `label_values(selector, …)` variable lists.
    pub fn series(&self, selector: &str) -> Result<Vec<Value>, String> {
        Ok(self
            .api("series", &[("match[]", selector)])?
            .as_array()
            .cloned()
            .unwrap_or_default())
    }
}
