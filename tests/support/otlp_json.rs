//! Spans read from OTLP/JSON into one form, whoever wrote it (albedo-otel's file exporter,
//! Jaeger's v3 API), so that what the exporter assembled and what a viewer gives back compare
//! field by field, attribute types included.

use std::collections::BTreeMap;

use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct JsonSpan {
    pub trace: String,
    pub span: String,
    pub parent: String,
    pub name: String,
    pub kind: i64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub status: (i64, String),
    /// Each value tagged with its OTLP type: `{"int": 3}`, `{"array": [...]}`.
    pub attributes: BTreeMap<String, Value>,
    pub resource: BTreeMap<String, Value>,
    pub scope: String,
}

impl JsonSpan {
    /// `trace/span`: the key spans are compared by.
    pub fn key(&self) -> String {
        format!("{}/{}", self.trace, self.span)
    }

    pub fn attr_str(&self, key: &str) -> Option<&str> {
        self.attributes.get(key)?.get("string")?.as_str()
    }
}

/// Every span of an export request (`{"resourceSpans": [...]}`), or of Jaeger's v3 answer
/// (`{"result": {"resourceSpans": [...]}}`).
pub fn spans(doc: &Value) -> Vec<JsonSpan> {
    let doc = if doc.get("result").is_some() {
        &doc["result"]
    } else {
        doc
    };
    let mut out = Vec::new();
    for rs in doc["resourceSpans"].as_array().into_iter().flatten() {
        let resource = attributes(&rs["resource"]["attributes"]);
        for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
            let scope = ss["scope"]["name"].as_str().unwrap_or("").to_string();
            for s in ss["spans"].as_array().into_iter().flatten() {
                let text = |k: &str| s[k].as_str().unwrap_or("").to_string();
                out.push(JsonSpan {
                    trace: text("traceId").to_lowercase(),
                    span: text("spanId").to_lowercase(),
                    parent: text("parentSpanId").to_lowercase(),
                    name: text("name"),
                    kind: kind(&s["kind"]),
                    start_ns: number(&s["startTimeUnixNano"]),
                    end_ns: number(&s["endTimeUnixNano"]),
                    status: (
                        status_code(&s["status"]["code"]),
                        s["status"]["message"].as_str().unwrap_or("").to_string(),
                    ),
                    attributes: attributes(&s["attributes"]),
                    resource: resource.clone(),
                    scope: scope.clone(),
                });
            }
        }
    }
    out
}

/// OTLP/JSON lines, as the file exporter writes them.
pub fn spans_of_lines(text: &str) -> Vec<JsonSpan> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .flat_map(|l| spans(&serde_json::from_str(l).unwrap()))
        .collect()
}

pub fn by_key(spans: Vec<JsonSpan>) -> BTreeMap<String, JsonSpan> {
    spans.into_iter().map(|s| (s.key(), s)).collect()
}

fn attributes(list: &Value) -> BTreeMap<String, Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|kv| {
            (
                kv["key"].as_str().unwrap_or("").to_string(),
                typed(&kv["value"]),
            )
        })
        .collect()
}

/// OTLP/JSON writes 64-bit integers as strings or as numbers; both are the same int here.
fn typed(any: &Value) -> Value {
    if let Some(v) = any.get("stringValue") {
        json!({"string": v})
    } else if let Some(v) = any.get("intValue") {
        json!({"int": number(v) as i64})
    } else if let Some(v) = any.get("boolValue") {
        json!({"bool": v})
    } else if let Some(v) = any.get("doubleValue") {
        json!({"double": v})
    } else if let Some(v) = any.get("arrayValue") {
        let items: Vec<Value> = v["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(typed)
            .collect();
        json!({"array": items})
    } else if let Some(v) = any.get("kvlistValue") {
        json!({"kvlist": attributes(&v["values"])})
    } else if let Some(v) = any.get("bytesValue") {
        json!({"bytes": v})
    } else {
        json!({"empty": null})
    }
}

fn number(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.parse::<i64>().map(|n| n as u64).unwrap_or(0),
        Value::Number(n) => n.as_i64().map(|n| n as u64).or(n.as_u64()).unwrap_or(0),
        _ => 0,
    }
}

fn kind(v: &Value) -> i64 {
    match v.as_str() {
        Some(s) => [
            "UNSPECIFIED",
            "INTERNAL",
            "SERVER",
            "CLIENT",
            "PRODUCER",
            "CONSUMER",
        ]
        .iter()
        .position(|k| s.ends_with(k))
        .unwrap_or(0) as i64,
        None => v.as_i64().unwrap_or(0),
    }
}

fn status_code(v: &Value) -> i64 {
    match v.as_str() {
        Some(s) if s.ends_with("ERROR") => 2,
        Some(s) if s.ends_with("OK") => 1,
        Some(_) => 0,
        None => v.as_i64().unwrap_or(0),
    }
}

/// What differs between the spans expected and the spans seen, a line each, naming the span
/// and the field: empty when they are the same.
pub fn differences(
    expected: &BTreeMap<String, JsonSpan>,
    got: &BTreeMap<String, JsonSpan>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (key, want) in expected {
        let Some(have) = got.get(key) else {
            out.push(format!("{key} ({}): missing", want.name));
            continue;
        };
        let mut field = |what: &str, w: String, h: String| {
            if w != h {
                out.push(format!(
                    "{key} ({}): {what}: expected {w}, got {h}",
                    want.name
                ));
            }
        };
        field("parent", want.parent.clone(), have.parent.clone());
        field("name", want.name.clone(), have.name.clone());
        field("kind", want.kind.to_string(), have.kind.to_string());
        field(
            "start",
            want.start_ns.to_string(),
            have.start_ns.to_string(),
        );
        field("end", want.end_ns.to_string(), have.end_ns.to_string());
        field(
            "status",
            format!("{:?}", want.status),
            format!("{:?}", have.status),
        );
        field("scope", want.scope.clone(), have.scope.clone());
        for (which, w, h) in [
            ("attribute", &want.attributes, &have.attributes),
            ("resource attribute", &want.resource, &have.resource),
        ] {
            for (k, v) in w {
                match h.get(k) {
                    None => field(&format!("{which} {k}"), v.to_string(), "nothing".into()),
                    Some(hv) => field(&format!("{which} {k}"), v.to_string(), hv.to_string()),
                }
            }
            for (k, v) in h.iter().filter(|(k, _)| !w.contains_key(*k)) {
                field(&format!("{which} {k}"), "nothing".into(), v.to_string());
            }
        }
    }
    for (key, have) in got.iter().filter(|(k, _)| !expected.contains_key(*k)) {
        out.push(format!("{key} ({}): not sent, but seen", have.name));
    }
    out
}
