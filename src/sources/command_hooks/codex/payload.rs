//! What Codex CLI hands a command hook: Claude Code's payload, plus the fields of its own
//! model hooks (`PreModelRequest`, `PostModelRequest`). No payload carries a time.

use serde::Deserialize;

use super::claude_code;

/// One payload, read twice: as Claude Code's, and for the model hooks' own fields.
#[derive(Debug)]
pub struct Payload {
    pub hook: claude_code::Payload,
    pub model: ModelHook,
}

impl Payload {
    pub fn parse(json: &str) -> Result<Payload, serde_json::Error> {
        Ok(Payload {
            hook: serde_json::from_str(json)?,
            model: serde_json::from_str(json)?,
        })
    }
}

/// Read twice, as Claude Code's hook and as Codex's model hook (`flatten` would lose the raw
/// JSON Claude Code's payload keeps).
impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        Payload::parse(raw.get()).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Deserialize, Default)]
pub struct ModelHook {
    /// Pairs a `PreModelRequest` with its `PostModelRequest`.
    #[serde(default)]
    pub request_id: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// `completed` or `failed`.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub response_id: Option<String>,
    #[serde(default)]
    pub token_usage: Option<TokenUsage>,
}

/// The response's usage, as the Responses API gave it: `input_tokens` includes the cached.
#[derive(Debug, Deserialize, Default, Clone, Copy)]
pub struct TokenUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub cached_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_write_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub reasoning_output_tokens: Option<u64>,
}

/// `spawn_agent`'s answer (a JSON text in `tool_response`) names the sub-agent it started.
#[derive(Debug, Deserialize)]
struct Spawned {
    agent_id: String,
}

/// `spawn_agent`'s input: the sub-agent's first message.
#[derive(Debug, Deserialize)]
struct SpawnInput {
    #[serde(default)]
    message: Option<String>,
}

/// The sub-agent a `spawn_agent` call's `PostToolUse` says it started.
pub fn spawned(hook: &claude_code::Payload) -> Option<String> {
    let answer = hook.tool_response.as_ref()?.get();
    // Codex hands the answer on as the model got it: a JSON text inside a JSON string.
    let text: String = serde_json::from_str(answer).unwrap_or_else(|_| answer.to_string());
    Some(serde_json::from_str::<Spawned>(&text).ok()?.agent_id)
}

/// The first message a `spawn_agent` call gives its sub-agent.
pub fn spawn_prompt(hook: &claude_code::Payload) -> String {
    hook.tool_input
        .as_ref()
        .and_then(|i| serde_json::from_str::<SpawnInput>(i.get()).ok())
        .and_then(|i| i.message)
        .unwrap_or_default()
}
