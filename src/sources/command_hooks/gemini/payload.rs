//! What Gemini CLI hands a command hook on stdin (observed: docs/agents/gemini.md). Every
//! payload has the session, the event and an ISO time; the rest depends on the event.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::sources::command_hooks::engine::records::rfc3339_ms;

#[derive(Debug, Deserialize, Default)]
pub struct Payload {
    pub session_id: String,
    pub hook_event_name: String,
    /// When the CLI fired the hook: `2026-12-01T20:03:39.563Z`.
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// `BeforeAgent`: what the user asked.
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    /// `AfterTool`: `{llmContent, returnDisplay}`, or `{error}` when the tool itself failed.
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
    #[serde(default)]
    pub llm_request: Option<LlmRequest>,
    #[serde(default)]
    pub llm_response: Option<LlmResponse>,
}

#[derive(Debug, Deserialize, Default)]
pub struct LlmRequest {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub config: Option<RequestConfig>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct RequestConfig {
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
}

/// One streamed chunk of a model call: only the last has a finish reason and the usage.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct LlmResponse {
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    #[serde(default)]
    pub usage_metadata: Option<UsageMetadata>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// Gemini's token counts. The hook gets the first three; the cached and reasoning ones are
/// read when present (the CLI drops them from hooks today).
#[derive(Debug, Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    // Each may be null or missing: a count that cannot be read is not a reason to lose the
    // model call.
    #[serde(default)]
    pub prompt_token_count: Option<u64>,
    #[serde(default)]
    pub candidates_token_count: Option<u64>,
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
}

impl Payload {
    /// The payload's own time in Unix ms, if it has a readable one.
    pub fn at_ms(&self) -> Option<u64> {
        rfc3339_ms(self.timestamp.as_deref()?)
    }

    /// The finish reason of a chunk that ends its model call.
    pub fn finish_reason(&self) -> Option<&str> {
        let r = self.llm_response.as_ref()?;
        r.candidates.iter().find_map(|c| c.finish_reason.as_deref())
    }
}

/// The payload as the journal keeps it: without what the adapter never reads and that grows
/// with the conversation. Gemini's `BeforeModel` and every `AfterModel` chunk carry the whole
/// history (`llm_request.messages`); journaled as they come, a long session would write its
/// history once per streamed chunk. `None` when there is nothing to drop (or it is not JSON:
/// the caller keeps it as it came).
pub fn slim(payload: &str) -> Option<String> {
    if !payload.contains("\"llm_request\"") && !payload.contains("\"llm_response\"") {
        return None;
    }
    let mut v: serde_json::Value = serde_json::from_str(payload).ok()?;
    if let Some(r) = v.get_mut("llm_request").and_then(|r| r.as_object_mut()) {
        r.remove("messages");
    }
    if let Some(r) = v.get_mut("llm_response").and_then(|r| r.as_object_mut()) {
        r.remove("text");
        for c in r
            .get_mut("candidates")
            .and_then(|c| c.as_array_mut())
            .into_iter()
            .flatten()
        {
            if let Some(c) = c.as_object_mut() {
                c.remove("content");
            }
        }
    }
    Some(v.to_string())
}
