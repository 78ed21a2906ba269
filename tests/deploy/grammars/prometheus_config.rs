//! What promtool needs around it: the Prometheus version an .env file pins, and the keys a
//! promtool older than that release does not know, to check without them, but not unchecked.

use yaml_rust2::Yaml;

/// `prom/prometheus:v3.5.0` in an .env file → (3, 5).
pub fn pinned_prometheus(env: &str) -> (u32, u32) {
    let text = std::fs::read_to_string(crate::support::repo_file(env)).unwrap();
    let image = text
        .lines()
        .find_map(|l| l.strip_prefix("PROMETHEUS_IMAGE="))
        .unwrap_or_else(|| panic!("{env}: no PROMETHEUS_IMAGE"));
    version(image).unwrap_or_else(|| panic!("{env}: {image} has no version tag"))
}

pub fn version(s: &str) -> Option<(u32, u32)> {
    let c = regex::Regex::new(r"(\d+)\.(\d+)\.\d+")
        .unwrap()
        .captures(s)?;
    Some((c[1].parse().ok()?, c[2].parse().ok()?))
}

/// Keys the pinned Prometheus accepts that an older promtool does not know, and when they came.
pub struct NewerKey {
    pub key: &'static str,
    pub since: (u32, u32),
    /// The values Prometheus v3 accepts, so that checking without the key still checks it.
    pub values: &'static [&'static str],
}

pub const NEWER_KEYS: &[NewerKey] = &[NewerKey {
    // Prometheus v2.49.0 (#12738), in `global` and in each scrape config.
    key: "scrape_protocols",
    since: (2, 49),
    values: &[
        "PrometheusProto",
        "PrometheusText0.0.4",
        "PrometheusText1.0.0",
        "OpenMetricsText0.0.1",
        "OpenMetricsText1.0.0",
    ],
}];

/// Removes `key` from `global` and every scrape config; returns what it held.
pub fn strip(doc: &mut Yaml, key: &str) -> Vec<(String, Yaml)> {
    let k = Yaml::String(key.into());
    let mut removed = Vec::new();
    let Yaml::Hash(top) = doc else { return removed };
    if let Some(Yaml::Hash(g)) = top.get_mut(&Yaml::String("global".into())) {
        if let Some(v) = g.remove(&k) {
            removed.push(("global".to_string(), v));
        }
    }
    if let Some(Yaml::Array(jobs)) = top.get_mut(&Yaml::String("scrape_configs".into())) {
        for job in jobs {
            if let Yaml::Hash(j) = job {
                let name = j
                    .get(&Yaml::String("job_name".into()))
                    .and_then(Yaml::as_str)
                    .unwrap_or("?")
                    .to_string();
                if let Some(v) = j.remove(&k) {
                    removed.push((format!("job {name}"), v));
                }
            }
        }
    }
    removed
}

/// Keys naming other files Prometheus would load.
pub fn file_refs(y: &Yaml, path: &str, out: &mut Vec<String>) {
    match y {
        Yaml::Hash(h) => {
            for (k, v) in h {
                let k = k.as_str().unwrap_or("");
                if k == "rule_files" || k.ends_with("_file") || k.ends_with("_files") {
                    out.push(format!("{path}.{k}"));
                }
                file_refs(v, &format!("{path}.{k}"), out);
            }
        }
        Yaml::Array(a) => a.iter().for_each(|v| file_refs(v, path, out)),
        _ => {}
    }
}
