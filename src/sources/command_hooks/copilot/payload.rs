//! What Copilot CLI hands a command hook in Claude Code's style (the events `install` names),
//! and what its session log, `events.jsonl`, says of each model and tool call.

use serde::Deserialize;
use serde_json::Value;

use super::super::records::rfc3339_ms;

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
