//! Prometheus, built by `scripts/stack build`, on a copy of one of deploy/'s configs (it reads
//! no environment in its config, so the copy moves the scrape targets and nothing else).

use std::path::Path;

use serde_json::Value;

use super::repo_file;
use super::stack::{client, free_port, Proc, Tools};

/// Prometheus on a copy of a deploy/ config whose scrape target is the only change.
pub struct Prometheus {
    pub proc: Proc,
    pub port: u16,
}

impl Prometheus {
    pub fn start(
        tools: &Tools,
        config: &str,
        targets: &[(&str, String)],
        dir: &Path,
    ) -> Prometheus {
        let mut text = std::fs::read_to_string(repo_file(config)).unwrap();
        for (from, to) in targets {
            assert!(text.contains(from), "{config} has no target {from}");
            text = text.replace(from, to);
        }
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, text).unwrap();
        let port = free_port();
        let args = [
            format!("--config.file={}", file.display()),
            format!(
                "--storage.tsdb.path={}",
                dir.join("prometheus-data").display()
            ),
            format!("--web.listen-address=127.0.0.1:{port}"),
            // As deploy/docker-compose.yml runs it.
            "--web.enable-remote-write-receiver".to_string(),
            "--enable-feature=exemplar-storage".to_string(),
            "--enable-feature=native-histograms".to_string(),
        ];
        let mut proc = Proc::spawn("prometheus", &tools.prometheus, &args, &[], dir);
        proc.wait_for(port);
        Prometheus { proc, port }
    }

    /// An `/api/v1/…` call: its `data`, or Prometheus' error.
    fn api(&self, path: &str, param: (&str, &str)) -> Result<Value, String> {
        let url = format!("http://127.0.0.1:{}/api/v1/{path}", self.port);
        let body: Value = client()
            .get(&url)
            .query(&[param])
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
        let data = self.api("query", ("query", expr))?;
        Ok(data["result"].as_array().cloned().unwrap_or_default())
    }

    /// `/api/v1/series?match[]=selector`: what a `label_values(selector, …)` variable lists.
    pub fn series(&self, selector: &str) -> Result<Vec<Value>, String> {
        Ok(self
            .api("series", ("match[]", selector))?
            .as_array()
            .cloned()
            .unwrap_or_default())
    }
}
