//! What opencode and Kilo Code (its fork) recorded themselves, for their CLI tests: the
//! session id a `run --format json` printed, and what `export SESSION` (read from the agent's
//! own database) says of each model call and tool call; and the check that each tool span
//! has the id, start and end the agent recorded.

use std::collections::BTreeMap;

use super::FlatSpan;

/// The session id of a `run --format json`'s output.
pub fn session_of(output: &str) -> String {
    output
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v["sessionID"].as_str().map(str::to_string))
        .expect("a session id in the run's output")
}

/// What the agent recorded of sessions' model calls and tool calls.
#[derive(Default, Debug)]
pub struct Recorded {
    /// Each model call's start and `(input, output)` tokens in the API's terms: cached tokens
    /// in the input, reasoning in the output.
    pub calls: Vec<(u64, u64, u64)>,
    /// Each tool call by its id: start and end in Unix ms, and its status.
    pub tools: BTreeMap<String, (u64, u64, String)>,
}

impl Recorded {
    /// Adds what one `export` printed (anything before its JSON is the agent's chatter).
    pub fn add_export(&mut self, text: &str) {
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        let start = text
            .find('{')
            .unwrap_or_else(|| panic!("export printed JSON: {text}"));
        let v: serde_json::Value = serde_json::from_str(&text[start..]).unwrap();
        for m in v["messages"].as_array().unwrap() {
            let info = &m["info"];
            if info["role"] != "assistant" {
                continue;
            }
            let t = &info["tokens"];
            self.calls.push((
                n(&info["time"]["created"]),
                n(&t["input"]) + n(&t["cache"]["read"]) + n(&t["cache"]["write"]),
                n(&t["output"]) + n(&t["reasoning"]),
            ));
            for part in m["parts"].as_array().into_iter().flatten() {
                if part["type"] == "tool" {
                    let state = &part["state"];
                    self.tools.insert(
                        part["callID"].as_str().unwrap_or_default().to_string(),
                        (
                            n(&state["time"]["start"]),
                            n(&state["time"]["end"]),
                            state["status"].as_str().unwrap_or_default().to_string(),
                        ),
                    );
                }
            }
        }
        self.calls.sort();
    }

    /// The model calls' `(input, output)` tokens, in the order they started.
    pub fn pairs(&self) -> Vec<(u64, u64)> {
        self.calls.iter().map(|&(_, i, o)| (i, o)).collect()
    }

    /// Each tool span has the id, start and end the agent recorded for its call, and is an
    /// error only where the agent recorded one.
    pub fn check_tools(&self, spans: &[FlatSpan]) {
        let tools: Vec<&FlatSpan> = spans
            .iter()
            .filter(|s| s.span.name.starts_with("execute_tool "))
            .collect();
        assert_eq!(tools.len(), self.tools.len(), "one span a call");
        for span in tools {
            let id = span.attr("gen_ai.tool.call.id").expect("a call id");
            let (start, end, status) = &self.tools[&id];
            assert_eq!(
                (span.span.start_time_unix_nano, span.span.end_time_unix_nano),
                (start * 1_000_000, end * 1_000_000),
                "{id}: the times the agent recorded"
            );
            let error = span.span.status.as_ref().is_some_and(|s| s.code == 2);
            assert_eq!(error, status == "error", "{id} is {status}");
        }
    }
}
