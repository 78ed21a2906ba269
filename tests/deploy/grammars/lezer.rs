//! The route every query takes to the lezer grammars: expanded into the texts Grafana would
//! send, parsed in one `node tests/deploy/grammars/parse.mjs` run, failures named by panel and offset.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value as Json};

use super::dashboards::{variable_query, Found, Kind, VariableQuery};
use super::grafana_vars::{Datasource, Selection, Variables, SELECTIONS};
use crate::support::{repo_file, require_tool, which};

const INSTALL_LEZER: &str =
    "install them with `npm install --prefix DIR @grafana/lezer-traceql@1.0.0 \
     @prometheus-io/lezer-promql@0.305.0 @lezer/lr@1.4.12 @lezer/highlight@1.2.5` and set \
     ALBEDO_OTEL_LEZER_DIR=DIR/node_modules";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grammar {
    TraceQL,
    PromQL,
}

/// One text Grafana would send, with what it came from.
#[derive(Clone)]
pub struct Parse {
    pub origin: String,
    pub grammar: Grammar,
    pub stored: String,
    pub text: String,
    pub selection: Selection,
    /// A variable's `match[]`: Prometheus accepts only a series selector there.
    pub selector: bool,
}

/// Each query as Grafana would send it under each selection of the variables; the same text
/// once. What cannot be substituted goes to `problems`.
pub fn expand(found: &[Found], vars: &Variables, problems: &mut Vec<String>) -> Vec<Parse> {
    let mut out: Vec<Parse> = Vec::new();
    for f in found {
        for selection in SELECTIONS {
            let text = match vars.substitute(&f.text, f.ds, selection) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(format!("{}: {e}\n    query: {}", f.origin, f.text));
                    break;
                }
            };
            let (text, selector) = match f.kind {
                Kind::Query => (text, false),
                Kind::VariableQuery => match variable_query(&text) {
                    VariableQuery::Selector(s) => (s, true),
                    VariableQuery::Expr(e) => (e, false),
                    VariableQuery::Nothing => continue,
                },
            };
            if out.iter().any(|p| p.origin == f.origin && p.text == text) {
                continue;
            }
            out.push(Parse {
                origin: f.origin.clone(),
                grammar: match f.ds {
                    Datasource::Prometheus => Grammar::PromQL,
                    Datasource::Tempo => Grammar::TraceQL,
                },
                stored: f.text.clone(),
                text,
                selection,
                selector,
            });
        }
    }
    out
}

pub struct Lezer {
    node: PathBuf,
    modules: PathBuf,
}

pub fn lezer() -> Option<Lezer> {
    let node = require_tool("node", which("node"), "install Node.js 20 or later")?;
    let modules = std::env::var_os("ALBEDO_OTEL_LEZER_DIR")
        .map(PathBuf::from)
        .filter(|d| {
            d.join("@grafana/lezer-traceql").is_dir()
                && d.join("@prometheus-io/lezer-promql").is_dir()
        });
    let modules = require_tool("lezer-traceql/lezer-promql", modules, INSTALL_LEZER)?;
    Some(Lezer { node, modules })
}

/// The grammars' versions, and every text that does not parse, named.
pub fn run(lezer: &Lezer, parses: &[Parse]) -> Result<(Json, Vec<String>)> {
    let input: Vec<Json> = parses
        .iter()
        .enumerate()
        .map(|(id, p)| {
            let grammar = match p.grammar {
                Grammar::TraceQL => "traceql",
                Grammar::PromQL => "promql",
            };
            json!({"id": id, "grammar": grammar, "text": p.text})
        })
        .collect();
    let mut child = Command::new(&lezer.node)
        .arg(repo_file("tests/deploy/grammars/parse.mjs"))
        .arg(&lezer.modules)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting node")?;
    // parse.mjs reads all of stdin before it writes anything, so this cannot deadlock.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&input)?.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "tests/deploy/grammars/parse.mjs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let report: Json = serde_json::from_slice(&out.stdout).context("parse.mjs output")?;
    let mut failures = Vec::new();
    let results = report["results"].as_array().context("no results")?;
    if results.len() != parses.len() {
        bail!("{} queries in, {} results out", parses.len(), results.len());
    }
    for r in results {
        let p = &parses[r["id"].as_u64().context("id")? as usize];
        if let Some(e) = r["errors"].as_array().and_then(|e| e.first()) {
            let at = byte_offset(&p.text, e["from"].as_u64().unwrap_or(0) as usize);
            failures.push(format!(
                "{}: {:?} parse error at offset {at} (variables at {:?}): {}⟨here⟩{}\n    as stored: {}",
                p.origin,
                p.grammar,
                p.selection,
                &p.text[..at],
                &p.text[at..],
                p.stored
            ));
        } else if p.selector && r["first"] != "VectorSelector" {
            failures.push(format!(
                "{}: Grafana sends `{}` to Prometheus as a series selector (match[]), but it is a {}\n    as stored: {}",
                p.origin, p.text, r["first"], p.stored
            ));
        }
    }
    Ok((report["versions"].clone(), failures))
}

/// lezer counts UTF-16 code units; Rust slices bytes.
fn byte_offset(text: &str, utf16: usize) -> usize {
    let mut units = 0;
    for (i, ch) in text.char_indices() {
        if units >= utf16 {
            return i;
        }
        units += ch.len_utf16();
    }
    text.len()
}
