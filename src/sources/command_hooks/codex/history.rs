//! Codex CLI's history from its own files, for `import`: each rollout under
//! `$CODEX_HOME/sessions/` (`~/.codex/sessions/` by default) read whole into the records the
//! hooks would have made: a turn per task (`task_started` to `task_complete`, or
//! `turn_aborted`), its shell calls with the times Codex measured, and a model call per
//! response (`token_usage_record`) with its usage, keyed by the response's id as the live
//! route keys it, so a call met both ways is counted once. A sub-agent's rollout is a session
//! of its own. Pure, but for the file handed in.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::payload::TokenUsage;
use super::{model_call, AGENT};
use crate::protocol::{Call, Called, Event, Json, Record, SessionInfo};
use crate::sources::command_hooks::engine::records::{record, rfc3339_ms};
use crate::sources::command_hooks::spec::{self, Env, Reading};

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    payload: Value,
}

/// Where Codex keeps its rollouts.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    match env("CODEX_HOME").filter(|h| !h.is_empty()) {
        Some(home) => vec![Path::new(&home).join("sessions")],
        None => spec::under_home(env, ".codex/sessions").into_iter().collect(),
    }
}

/// A rollout: `rollout-<time>-<session>.jsonl`.
pub fn is_session(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("rollout-") && name.ends_with(".jsonl")
}

/// What a rollout's lines say, as the records the live route would have made.
pub fn records(_path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let mut r = Reader::default();
    for raw in bytes.split(|&b| b == b'\n') {
        let Ok(line) = serde_json::from_slice::<Line>(raw) else {
            continue;
        };
        let Some(at) = line.timestamp.as_deref().and_then(rfc3339_ms) else {
            continue;
        };
        r.take(&line, at);
        r.last_ms = r.last_ms.max(at);
    }
    r.end_turn(None);
    if let Some(sid) = &r.session {
        r.out.push(record(sid, Event::Closed { at_ms: r.last_ms }));
    }
    r.out
}

#[derive(Default)]
struct Reader {
    session: Option<String>,
    out: Vec<Record<'static>>,
    /// A turn is open.
    open: bool,
    /// The model the turn's context names.
    model: String,
    /// When the rollout last said something: the next response was asked for then.
    last_ms: u64,
}

impl Reader {
    fn take(&mut self, line: &Line, at: u64) {
        let p = &line.payload;
        let text = |v: &Value| v.as_str().map(str::to_string);
        match (line.kind.as_str(), p["type"].as_str().unwrap_or("")) {
            ("session_meta", _) if self.session.is_none() => {
                let Some(id) = text(&p["session_id"]).or_else(|| text(&p["id"])) else {
                    return;
                };
                let info = SessionInfo {
                    at_ms: at,
                    agent: Some(Cow::Borrowed(AGENT)),
                    workspace: text(&p["cwd"]).map(Cow::Owned),
                    ..SessionInfo::default()
                };
                self.out.push(record(&id, Event::Session(info)));
                self.session = Some(id);
            }
            ("turn_context", _) => {
                if let Some(m) = text(&p["model"]) {
                    self.model = m;
                }
            }
            ("event_msg", "task_started") => {
                self.end_turn(None);
                self.open = true;
            }
            // The prompt: the task's user message.
            ("event_msg", "item_completed") if p["item"]["type"] == "UserMessage" => {
                let prompt: Vec<&str> = (p["item"]["content"].as_array().into_iter().flatten())
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                self.push(Event::Prompted {
                    at_ms: at,
                    text: Cow::Owned(prompt.join("\n")),
                });
            }
            ("event_msg", "item_completed") if p["item"]["type"] == "CommandExecution" => {
                self.command(&p["item"], p, at);
            }
            ("token_usage_record", _) => {
                let usage: TokenUsage = serde_json::from_value(p["usage"].clone()).unwrap_or_default();
                let response = text(&p["response_id"]);
                let id = response.clone().unwrap_or_else(|| format!("response-{at}"));
                let started = self.last_ms.min(at);
                let call = model_call(id, self.model.clone(), response, usage, started, at, None);
                self.push(Event::CallSent(call));
            }
            ("event_msg", "task_complete") => self.end_turn(Some(("end_turn", at))),
            ("event_msg", "turn_aborted") => self.end_turn(Some(("interrupted", at))),
            _ => {}
        }
    }

    /// A shell call, as the live route names it (`Bash`, its command), with Codex's times.
    fn command(&mut self, item: &Value, p: &Value, at: u64) {
        let Some(id) = item["id"].as_str() else {
            return;
        };
        let command = (item["command"].as_array())
            .and_then(|c| c.last())
            .and_then(Value::as_str)
            .unwrap_or("");
        let started = p["started_at_ms"].as_u64().unwrap_or(at);
        let finished = p["completed_at_ms"].as_u64().unwrap_or(at).max(started);
        let call = Call {
            id: Cow::Owned(id.to_string()),
            name: Cow::Borrowed("Bash"),
            arguments: Json::of(&serde_json::json!({ "command": command })).ok(),
            within: None,
        };
        self.push(Event::Called(Called {
            call,
            output: None,
            started_ms: started,
            finished_ms: finished,
            refused: false,
            failed: item["exit_code"].as_i64().is_some_and(|c| c != 0),
        }));
    }

    /// A record of the open turn's.
    fn push(&mut self, event: Event<'static>) {
        if let Some(sid) = &self.session {
            self.out.push(record(sid, event));
        }
    }

    /// Ends the open turn, at `end` (its reason and time) or at the last line.
    fn end_turn(&mut self, end: Option<(&'static str, u64)>) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        let (reason, at_ms) = end.unwrap_or(("unfinished", self.last_ms));
        self.push(Event::TurnEnded {
            at_ms,
            reason: Some(Cow::Borrowed(reason)),
        });
    }
}
