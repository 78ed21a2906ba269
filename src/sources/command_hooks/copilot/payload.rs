//! What Copilot CLI hands a command hook in Claude Code's style (the events `install` names),
//! and what its session log, `events.jsonl`, says of each model and tool call.

use serde::Deserialize;
use serde_json::Value;

use crate::sources::command_hooks::engine::records::rfc3339_ms;

/// A hook payload. Copilot sends no call or turn id: the hooks mark a turn's start and end,
/// and the session log has the rest.
#[derive(Debug, Deserialize, Default)]
pub struct Payload {
    pub session_id: String,
    pub hook_event_name: String,
    /// ISO in Claude Code's style (epoch ms in Copilot's own).
    #[serde(default)]
    pub timestamp: Option<Value>,
    /// Set on a sub-agent's hooks, whose `session_id` is the sub-agent's own.
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    /// `Stop`: the session log.
    #[serde(default)]
    pub transcript_path: Option<String>,
}

impl Payload {
    pub fn at_ms(&self) -> Option<u64> {
        match self.timestamp.as_ref()? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => rfc3339_ms(s),
            _ => None,
        }
    }
}

/// One line of `events.jsonl`.
#[derive(Debug, Deserialize)]
pub struct LogEvent {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub data: Value,
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Set on a sub-agent's events.
    #[serde(default, rename = "agentId")]
    pub agent_id: Option<String>,
}

/// A `session.usage_record`'s usage: one model call, timed at its end.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_tokens: Option<u64>,
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
    /// Milliseconds.
    #[serde(default)]
    pub duration: Option<f64>,
    #[serde(default)]
    pub time_to_first_token_ms: Option<f64>,
    #[serde(default)]
    pub api_call_id: Option<String>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// `openai`, `anthropic`, `azure` for a provider of the user's own.
    #[serde(default)]
    pub provider_type: Option<String>,
}

/// The payload as the journal keeps it: a `UserPromptSubmit` gets the session log's path,
/// which Copilot names only at `Stop`, so that a turn whose Copilot is killed before its `Stop`
/// still finds its calls. `env` reads the hook's environment (`COPILOT_HOME`, else `HOME`'s
/// `.copilot`, as Copilot places its state). `None`: keep the payload as it came.
pub fn with_log(payload: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if !payload.contains("UserPromptSubmit") || payload.contains("\"transcript_path\"") {
        return None;
    }
    let mut v: Value = serde_json::from_str(payload).ok()?;
    if v["hook_event_name"] != "UserPromptSubmit" {
        return None;
    }
    let sid = v["session_id"]
        .as_str()
        .filter(|s| is_plain(s))?
        .to_string();
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    let home = set("COPILOT_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| set("HOME").map(|h| std::path::Path::new(&h).join(".copilot")))?;
    let log = home.join("session-state").join(sid).join("events.jsonl");
    v["transcript_path"] = Value::String(log.to_str()?.to_string());
    Some(v.to_string())
}

/// A session id that can only name one folder (Copilot's are UUIDs): letters, digits, `-`
/// and `_`, so no separator, no `..`, no drive.
fn is_plain(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A sub-agent's hook: the session that started the sub-agent (its `session_id` is the
/// sub-agent's own). The hook journals it there: the sub-agent never says its session ended,
/// and its turn is read from the parent's log anyway. Parsed only when the payload names one
/// (most do not), and leniently: a payload it cannot read stays under its own id.
pub fn sub_agents_parent(payload: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Parent {
        #[serde(default)]
        parent_agent_id: Option<String>,
    }
    if !payload.contains("\"parent_agent_id\"") {
        return None;
    }
    let parent = serde_json::from_str::<Parent>(payload)
        .ok()?
        .parent_agent_id?;
    (!parent.is_empty()).then_some(parent)
}
