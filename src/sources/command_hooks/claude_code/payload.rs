//! What a command hook is handed on stdin (Claude Code's payload, which albedo's `hooks`
//! extension also speaks), and the one thing the adapter reads besides it: the transcript.

use serde::Deserialize;
use serde_json::value::RawValue;

/// One hook payload, with every field any event may carry.
#[derive(Clone, Debug, Deserialize, Default)]
pub struct Payload {
    pub session_id: String,
    pub hook_event_name: String,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub agent_transcript_path: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<BatchCall>>,
    #[serde(default)]
    pub reason: Option<String>,
    /// Only on `albedo-otel doctor`'s test payload: which test it is.
    #[serde(default)]
    pub doctor_id: Option<String>,
}

/// One call of a `PostToolBatch`.
#[derive(Clone, Debug, Deserialize)]
pub struct BatchCall {
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    pub tool_use_id: String,
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
}

/// An `Agent` call's input, for the prompt of the sub-agent it starts.
#[derive(Deserialize)]
pub(super) struct AgentInput {
    pub prompt: Option<String>,
}
