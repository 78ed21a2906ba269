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
