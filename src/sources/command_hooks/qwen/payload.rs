//! What Qwen Code hands a command hook on stdin (observed with 0.24.4:
//! docs/agents/qwen-code.md), and the lines of its transcript the adapter reads: Claude
//! Code's fields, plus the CLI's own time, the model turn's `prompt_id`, and the provider's
//! call id beside the CLI's own tool call id.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::sources::command_hooks::engine::records::rfc3339_ms;

/// One hook payload, with every field the events the adapter takes may carry.
#[derive(Debug, Deserialize, Default)]
pub struct Payload {
    pub session_id: String,
    pub hook_event_name: String,
    /// When the CLI fired the hook: `2026-12-03T15:41:14.557Z`.
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// The model turn: `<session>########<n>`; the same on a turn's continuations.
    #[serde(default)]
    pub prompt_id: Option<String>,
    /// What is sent to the model (with the CLI's reminders before the user's words); empty
    /// on a continuation after tool results.
    #[serde(default)]
    pub prompt: Option<String>,
    /// What the user typed: only on a prompt that opens a turn.
    #[serde(default)]
    pub submitted_prompt: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
    /// The CLI's id of a call (`toolu_…`), which pairs `PreToolUse` with its end.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// The provider's id of the call (`call_…`), which `PostToolBatch` names it by.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// Set on a sub-agent's own hooks, and on `SubagentStart`/`SubagentStop`.
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<BatchCall>>,
}

/// One call of a `PostToolBatch`.
#[derive(Debug, Deserialize)]
pub struct BatchCall {
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
}

impl Payload {
    /// The payload's own time in Unix ms, if it has a readable one.
    pub fn at_ms(&self) -> Option<u64> {
        rfc3339_ms(self.timestamp.as_deref()?)
    }
}

/// The `agent` tool's input: the sub-agent's first message.
#[derive(Debug, Deserialize)]
pub(super) struct AgentInput {
    #[serde(default)]
    pub prompt: Option<String>,
}

/// One transcript line, as far as the adapter reads it: the CLI's own telemetry about a model
/// call is kept in the transcript as a `system` line with a `ui_telemetry` subtype.
#[derive(Debug, Deserialize)]
pub(super) struct Line {
    #[serde(default, rename = "systemPayload")]
    pub system_payload: Option<SystemPayload>,
}

#[derive(Debug, Deserialize)]
pub(super) struct SystemPayload {
    #[serde(default, rename = "uiEvent")]
    pub ui_event: Option<ApiEvent>,
}

/// `qwen-code.api_response` (or `qwen-code.api_error`): one model call, written when it
/// ends, with its duration, time to first token and usage. Every count may be missing: a
/// count that cannot be read is no reason to lose the call.
#[derive(Debug, Deserialize)]
pub(super) struct ApiEvent {
    #[serde(rename = "event.name")]
    pub name: String,
    #[serde(default, rename = "event.timestamp")]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub response_id: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub ttft_ms: Option<u64>,
    /// Includes the cached tokens.
    #[serde(default)]
    pub input_token_count: Option<u64>,
    #[serde(default)]
    pub output_token_count: Option<u64>,
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
    /// Set for a sub-agent's calls, and for the CLI's own background agents' (memory
    /// extraction, skill review), which no hook announces.
    #[serde(default)]
    pub subagent_id: Option<String>,
    #[serde(default)]
    pub subagent_name: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    /// How the CLI reached the model: `openai`, `anthropic`, `gemini`, `qwen-oauth`, ...
    #[serde(default)]
    pub auth_type: Option<String>,
}

/// The API event a transcript line (without its newline) records, if it records one.
pub(super) fn api_event(line: &[u8]) -> Option<ApiEvent> {
    // Only telemetry lines name an API event: the rest (messages with whole tool outputs)
    // are not parsed.
    if !memchr_api(line) {
        return None;
    }
    let e = serde_json::from_slice::<Line>(line).ok()?.system_payload?.ui_event?;
    (e.name == "qwen-code.api_response" || e.name == "qwen-code.api_error").then_some(e)
}

fn memchr_api(line: &[u8]) -> bool {
    const MARK: &[u8] = b"\"qwen-code.api_";
    line.windows(MARK.len()).any(|w| w == MARK)
}
