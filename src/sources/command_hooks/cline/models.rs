//! Cline's model calls, as its session's messages file records them: each assistant message
//! carries the model (`modelInfo`), its tokens (`metrics`) and when it was written (`ts`), the
//! end of its call; the message before it (the prompt, or the tools' results) was the last
//! thing sent, so its `ts` is the call's start.
//!
//! Cline rewrites the whole file, pretty-printed, each time a message is added; the messages
//! before stay byte for byte as they were. So a reader keeps the byte offset just past the last
//! message it took, and reads on from there: what is new, and the few keys after the list.
//! A file that was written anew (a check at that offset fails) is read from its start, and the
//! calls before the turn's start are left out.

use std::borrow::Cow;

use serde::Deserialize;

use crate::sources::command_hooks::engine::files::{FileCursor, Transcripts};
use super::super::engine::model_call::{Answer, Cache, ModelCall, Reasoning, Tokens};
use crate::protocol::CallSent;

#[derive(Debug, Deserialize)]
pub(super) struct Message {
    id: String,
    role: String,
    #[serde(default)]
    ts: Option<u64>,
    #[serde(default, rename = "modelInfo")]
    model_info: Option<ModelInfo>,
    #[serde(default)]
    metrics: Option<Metrics>,
}

#[derive(Debug, Deserialize, Default)]
struct ModelInfo {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    provider: Option<String>,
}

/// Cline's token counts: `inputTokens` includes the cache's, reads and writes. It is the AI
/// SDK's `inputTokens.total`, which its Anthropic provider makes `input_tokens` plus
/// `cache_read_input_tokens` plus `cache_creation_input_tokens` (`@ai-sdk/anthropic` 4.0.112,
/// `convertAnthropicUsage`), and an OpenAI-compatible one `prompt_tokens`; Cline's own price
/// takes both out of it (`@cline/llms` 3.0.65).
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metrics {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

/// What a read found: the model calls between `from` and `to`, where the file was read to,
/// and the time of the last message taken (the next call's start).
pub(super) struct Read {
    pub calls: Vec<CallSent<'static>>,
    pub cursor: FileCursor,
    pub last_ts: Option<u64>,
}

/// Reads `path` on from `at` (where the last read stopped, if it was this file): the calls of
/// the messages timed from `from` to `to`; the first message after `to` and those behind it
/// are left for the next read. `last_ts`: the time of the message before `at`.
pub(super) fn read(
    path: &str,
    at: Option<&FileCursor>,
    mut last_ts: Option<u64>,
    from: u64,
    to: u64,
    files: &mut dyn Transcripts,
) -> Read {
    let held = at
        .filter(|c| c.path == path || c.path.is_empty())
        .map_or(0, |c| c.offset);
    let mut base = held.saturating_sub(1);
    let mut bytes = if held > 0 {
        files.read_from(path, base)
    } else {
        Vec::new()
    };
    // Read on only from just past a message's `}`, with the list going on or closing after it.
    let mut pos = match bytes.first() {
        Some(b'}') if matches!(next_token(&bytes, 1), Some(b',' | b']')) => Some(1),
        _ => None,
    };
    if pos.is_none() {
        base = 0;
        last_ts = None;
        bytes = files.read_from(path, 0);
        pos = list_start(&bytes);
    }
    let mut calls = Vec::new();
    let Some(mut pos) = pos else {
        return Read {
            calls,
            cursor: at.cloned().unwrap_or_default(),
            last_ts,
        };
    };
    let mut done = base + pos as u64;
    while let Some(i) = skip_ws(&bytes, pos) {
        pos = match bytes[i] {
            b',' => i + 1,
            b'{' => i,
            _ => break,
        };
        let mut stream = serde_json::Deserializer::from_slice(&bytes[pos..]).into_iter::<Message>();
        let Some(Ok(m)) = stream.next() else { break };
        let ts = m.ts.unwrap_or(0);
        if ts > to {
            break;
        }
        pos += stream.byte_offset();
        done = base + pos as u64;
        if m.role == "assistant" && ts >= from {
            if let Some(c) = call_of(m, last_ts.unwrap_or(from).max(from)) {
                calls.push(c);
            }
        }
        last_ts = Some(ts);
    }
    Read {
        calls,
        cursor: FileCursor {
            path: path.to_string(),
            offset: done,
            // The file is replaced on every write: its inode says nothing of its bytes.
            identity: None,
        },
        last_ts,
    }
}

/// The text of the file's first message, if it is the user's: a sub-agent's task, as its
/// `spawn_agent` call gave it. Read while the file is young (at the sub-agent's start).
pub(super) fn task(path: &str, files: &mut dyn Transcripts) -> Option<String> {
    #[derive(Deserialize)]
    struct Opening {
        role: String,
        #[serde(default)]
        content: Vec<Block>,
    }
    #[derive(Deserialize)]
    struct Block {
        #[serde(default)]
        text: Option<String>,
    }
    let bytes = files.read_from(path, 0);
    let open = skip_ws(&bytes, list_start(&bytes)?).filter(|&i| bytes[i] == b'{')?;
    let mut stream = serde_json::Deserializer::from_slice(&bytes[open..]).into_iter::<Opening>();
    let first = stream.next()?.ok()?;
    let text: String = first.content.into_iter().filter_map(|b| b.text).collect();
    (first.role == "user" && !text.is_empty()).then_some(text)
}

fn skip_ws(bytes: &[u8], from: usize) -> Option<usize> {
    (from..bytes.len()).find(|&i| !bytes[i].is_ascii_whitespace())
}

fn next_token(bytes: &[u8], from: usize) -> Option<u8> {
    skip_ws(bytes, from).map(|i| bytes[i])
}

/// Just inside the `messages` list: the first key of that name is the list's, as Cline
/// writes the session's own keys before it.
fn list_start(bytes: &[u8]) -> Option<usize> {
    let key = b"\"messages\"";
    let at = bytes.windows(key.len()).position(|w| w == key)? + key.len();
    let colon = skip_ws(bytes, at).filter(|&i| bytes[i] == b':')?;
    let open = skip_ws(bytes, colon + 1).filter(|&i| bytes[i] == b'[')?;
    Some(open + 1)
}

/// An assistant message with its tokens, as a model call started at `started`.
pub(super) fn call_of(m: Message, started: u64) -> Option<CallSent<'static>> {
    let metrics = m.metrics?;
    let end = m.ts.unwrap_or(started).max(started);
    let info = m.model_info.unwrap_or_default();
    let model = info.id.unwrap_or_default();
    Some(
        ModelCall {
            id: Some(m.id.clone()),
            model,
            provider: Some(provider(info.provider.as_deref())),
            started_ms: started,
            finished_ms: end,
            // Cline counts the cache's tokens, written and read, inside the input's.
            usage: Tokens {
                input: metrics.input_tokens.unwrap_or(0),
                cache_read: metrics.cache_read_tokens.unwrap_or(0),
                cache_write: metrics.cache_write_tokens.unwrap_or(0),
                output: metrics.output_tokens.unwrap_or(0),
                ..Tokens::default()
            }
            .usage(Cache::ReadsAndWritesWithin, Reasoning::Within),
            answer: Some(Answer {
                id: Some(m.id),
                ..Answer::default()
            }),
            ..ModelCall::default()
        }
        .call_sent(),
    )
}

/// `gen_ai.provider.name` for Cline's provider ids, as the GenAI conventions name them where
/// they do; Cline's own id otherwise.
fn provider(id: Option<&str>) -> Cow<'static, str> {
    match id.unwrap_or("cline") {
        "anthropic" => Cow::Borrowed("anthropic"),
        "openai" | "openai-native" | "openai-compatible" => Cow::Borrowed("openai"),
        "gemini" => Cow::Borrowed("gcp.gemini"),
        "bedrock" => Cow::Borrowed("aws.bedrock"),
        "vertex" => Cow::Borrowed("gcp.vertex_ai"),
        "deepseek" => Cow::Borrowed("deepseek"),
        "xai" => Cow::Borrowed("x_ai"),
        "mistral" => Cow::Borrowed("mistral_ai"),
        other => Cow::Owned(other.to_string()),
    }
}
