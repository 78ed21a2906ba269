//! What albedo-otel's Pi extension (`extension.js`) writes for each event it hands on: Pi's
//! event name and the fields of Pi's event that make a trace, under Pi's own names, with the
//! session and the time the extension saw it (observed: docs/agents/pi.md). Every field but
//! the session and the event may be missing: a field that cannot be read costs that field,
//! not the event.

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    /// Pi's session id (`ctx.sessionManager.getSessionId()`).
    #[serde(rename = "session_id")]
    pub session_id: String,
    /// Pi's event: `session_start`, `before_agent_start`, `before_provider_request`,
    /// `message_start`, `message_end`, `tool_execution_start`, `tool_execution_end`,
    /// `agent_settled`, `session_shutdown`; or the hook's own `agent.exited`.
    #[serde(rename = "hook_event_name")]
    pub hook_event_name: String,
    /// When the extension saw the event, in Unix ms.
    #[serde(default, rename = "at_ms")]
    pub at_ms: Option<u64>,
    /// `session_start`: the working folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `before_agent_start`: `user` for a prompt, `custom` for an extension's message.
    #[serde(default)]
    pub message_type: Option<String>,
    /// `before_agent_start`: the prompt's text.
    #[serde(default)]
    pub prompt: Option<String>,
    /// `before_provider_request`: the model the request goes to (Pi's `ctx.model`).
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// `message_start`/`message_end`: the assistant message, without its content.
    #[serde(default)]
    pub message: Option<Message>,
    /// `tool_execution_*`: the call.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub args: Option<Box<RawValue>>,
    /// The call of the tool that made this call (a tool calling a tool).
    #[serde(default)]
    pub parent_tool_call_id: Option<String>,
    /// `tool_execution_end`: whether the result is an error.
    #[serde(default)]
    pub is_error: bool,
    /// `tool_execution_end`: how long the tool ran; absent when it never ran (refused,
    /// unknown, invalid, or aborted first).
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// `tool_execution_end`: the result's text blocks.
    #[serde(default)]
    pub content: Option<Vec<Block>>,
    /// `agent_settled`: the run was aborted (Escape).
    #[serde(default)]
    pub aborted: bool,
}

/// An assistant message: one model call (Pi's `AssistantMessage`, less its content).
#[derive(Debug, Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// The model the provider says answered.
    #[serde(default)]
    pub response_model: Option<String>,
    #[serde(default)]
    pub response_id: Option<String>,
    #[serde(default)]
    pub usage: Option<Usage>,
    /// `stop`, `length`, `toolUse`, `error`, `aborted`; `pending` while it streams.
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub error_message: Option<String>,
    /// When Pi began the request, in Unix ms.
    #[serde(default)]
    pub timestamp: Option<u64>,
    /// How long the request took, from `timestamp`.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// Pi's token counts: `input` leaves out the cache's reads and writes, `output` holds the
/// reasoning (for 1017 prompt tokens, 100 cached, and 21 completion tokens it records input
/// 917, cache read 100, output 21): the protocol's own terms.
#[derive(Debug, Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input: Option<u64>,
    #[serde(default)]
    pub output: Option<u64>,
    #[serde(default)]
    pub cache_read: Option<u64>,
    #[serde(default)]
    pub cache_write: Option<u64>,
    #[serde(default)]
    pub reasoning: Option<u64>,
}

/// A content block of a tool's result.
#[derive(Debug, Deserialize, Default)]
pub struct Block {
    #[serde(default)]
    pub text: Option<String>,
}

impl Payload {
    /// The result's text, its blocks joined.
    pub fn text(&self) -> Option<String> {
        let blocks = self.content.as_ref()?;
        Some(
            blocks
                .iter()
                .filter_map(|b| b.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}
