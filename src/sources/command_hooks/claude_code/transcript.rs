//! Model calls from a Claude Code transcript.
//!
//! No hook payload carries token usage: it is only in the transcript's assistant lines. A
//! message with several content blocks is written as several lines repeating the same
//! `message.id` and `usage`, so each id is counted once. The call started when the request
//! went out (the `api-request` line just before it) and ended with its last line.
//!
//! Each call also gets what was sent with it, the conversation so far and the system prompt
//! ([`Conversation`]).
//!
//! The transcript is read incrementally: [`TranscriptCursor::feed`] takes the bytes after the
//! last complete line it saw, so each hook invocation costs only what was appended since.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::super::engine::model_call::{Cache, Reasoning, Tokens};
use crate::sources::command_hooks::engine::records::rfc3339_ms;
use super::conversation::Conversation;
use crate::protocol::Usage;

/// One model API call, as the transcript shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    pub id: String,
    pub model: String,
    pub max_tokens: Option<u64>,
    pub stop_reason: Option<String>,
    pub usage: Usage,
    pub started_ms: u64,
    pub finished_ms: u64,
    /// The message's content blocks, as JSON text of an array.
    pub content: String,
    /// The conversation sent with the call, as Anthropic's `messages` (JSON text).
    pub messages: Option<String>,
    /// The system prompt sent with it, as JSON text of its blocks.
    pub system: Option<String>,
}

/// Message ids remembered so a message is never counted twice.
const SEEN_IDS: usize = 4096;

/// Where a transcript has been read to, and the calls still being assembled.
#[derive(Debug, Default, Clone)]
pub struct TranscriptCursor {
    /// Bytes of the file consumed (complete lines only).
    pub offset: u64,
    /// The last `api-request`: when, for which model, with what `max_tokens`.
    request: Option<(u64, Option<String>, Option<u64>)>,
    previous_ms: Option<u64>,
    open: Vec<(ModelCall, Vec<Box<RawValue>>)>,
    seen: HashSet<String>,
    seen_order: VecDeque<String>,
    conversation: Conversation,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    params: Option<Params>,
    #[serde(borrow, default)]
    subtype: Option<Cow<'a, str>>,
    #[serde(default)]
    shape: Option<Shape>,
    /// Shown in the transcript, never sent to the model.
    #[serde(default, rename = "isVisibleInTranscriptOnly")]
    transcript_only: bool,
}

#[derive(Deserialize)]
struct Shape {
    system: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    usage: Option<TranscriptUsage>,
    content: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Params {
    model: Option<String>,
    max_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct TranscriptUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
    /// The cache writes by how long they are kept: `ephemeral_5m_input_tokens` and
    /// `ephemeral_1h_input_tokens`, which sum to `cache_creation_input_tokens`.
    #[serde(default)]
    cache_creation: Option<CacheCreation>,
    /// Tools Anthropic's servers ran: `web_search_requests`, `web_fetch_requests`.
    #[serde(default)]
    server_tool_use: Option<ServerToolUse>,
}

#[derive(Deserialize)]
struct OutputDetails {
    thinking_tokens: Option<u64>,
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct ServerToolUse {
    web_search_requests: Option<u64>,
}

impl TranscriptCursor {
    /// Consumes the complete lines of `bytes` (the file from `offset` on); returns how many
    /// bytes it took. A last line without its newline is left for the next read.
    pub fn feed(&mut self, bytes: &[u8]) -> usize {
        let mut consumed = 0;
        for end in memchr::memchr_iter(b'\n', bytes) {
            self.line(&bytes[consumed..end]);
            consumed = end + 1;
        }
        self.offset += consumed as u64;
        consumed
    }

    /// The conversation up to `offset`, without counting a call: after a restart the cursor
    /// resumes at a saved offset, and the calls after it were sent what came before. `bytes`
    /// is the file from `from` (a line cut there is skipped).
    pub fn recall(&mut self, bytes: &[u8], from: u64) {
        let upto = (self.offset.saturating_sub(from) as usize).min(bytes.len());
        let mut bytes = &bytes[..upto];
        if from > 0 {
            let first = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |n| n + 1);
            bytes = &bytes[first..];
        }
        for line in bytes.split(|b| *b == b'\n') {
            let Ok(line) = serde_json::from_slice::<Line<'_>>(line) else {
                continue;
            };
            match line.kind.as_deref() {
                Some("assistant") => {
                    if let Some(m) = &line.message {
                        if let (Some(id), Some(c)) = (m.id.as_deref(), m.content.as_deref()) {
                            self.conversation.assistant(id, c);
                        }
                    }
                }
                _ => self.converse(&line),
            }
        }
    }

    /// Whether the calls carry their input messages (a budget above 0).
    pub fn keeps_messages(&self) -> bool {
        self.conversation.keeps_any()
    }

    /// How much of the conversation to keep for the calls' input (0: none, capture off).
    pub fn set_message_budget(&mut self, bytes: usize) {
        self.conversation.set_budget(bytes);
    }

    /// What a line adds to the conversation, assistant messages aside (those go with their
    /// call).
    fn converse(&mut self, line: &Line<'_>) {
        match line.kind.as_deref() {
            Some("user") if !line.transcript_only => {
                if let Some(content) = line.message.as_ref().and_then(|m| m.content.as_deref()) {
                    self.conversation.user(content);
                }
            }
            Some("api-request-shape") => {
                if let Some(system) = line.shape.as_ref().and_then(|s| s.system.as_deref()) {
                    self.conversation.system(system);
                }
            }
            Some("system") if line.subtype.as_deref() == Some("compact_boundary") => {
                self.conversation.reset();
            }
            _ => {}
        }
    }

    fn line(&mut self, raw: &[u8]) {
        let Ok(line) = serde_json::from_slice::<Line<'_>>(raw) else {
            return;
        };
        self.converse(&line);
        let ts = line.timestamp.as_deref().and_then(rfc3339_ms);
        match line.kind.as_deref() {
            Some("api-request") => {
                if let Some(ts) = ts {
                    let params = line.params;
                    self.request = Some((
                        ts,
                        params.as_ref().and_then(|p| p.model.clone()),
                        params.and_then(|p| p.max_tokens),
                    ));
                }
            }
            Some("assistant") => {
                if let (Some(ts), Some(m)) = (ts, line.message) {
                    self.assistant(ts, m);
                }
            }
            _ => {}
        }
        if ts.is_some() {
            self.previous_ms = ts;
        }
    }

    fn assistant(&mut self, ts: u64, m: Message) {
        let Some(id) = m.id else { return };
        if self.seen.contains(&id) {
            // The call was taken already (a `SubagentStop` read mid-message); its later blocks
            // still belong to the conversation the next calls are sent.
            if let Some(content) = m.content.as_deref() {
                self.conversation.assistant(&id, content);
            }
            return;
        }
        // Anthropic's counts are the protocol's: the input apart from the cache, the
        // thinking inside the output.
        let usage = m.usage.map(|u| {
            Tokens {
                input: u.input_tokens,
                output: u.output_tokens,
                cache_read: u.cache_read_input_tokens.unwrap_or(0),
                cache_write: u.cache_creation_input_tokens.unwrap_or(0),
                cache_write_1h: u
                    .cache_creation
                    .and_then(|c| c.ephemeral_1h_input_tokens)
                    .map_or(0, saturate),
                reasoning: u
                    .output_tokens_details
                    .and_then(|d| d.thinking_tokens)
                    .unwrap_or(0),
                web_searches: u
                    .server_tool_use
                    .and_then(|s| s.web_search_requests)
                    .map_or(0, saturate),
            }
            .usage(Cache::Apart, Reasoning::Within)
        });
        let open = self.open.iter().any(|(c, _)| c.id == id);
        // The input of a new call is the conversation before its own message.
        let sent = (!open).then(|| {
            (
                self.conversation.messages_json(),
                self.conversation.system_json(),
            )
        });
        if let Some(content) = m.content.as_deref() {
            self.conversation.assistant(&id, content);
        }
        if let Some((call, blocks)) = self.open.iter_mut().find(|(c, _)| c.id == id) {
            // Another block of the same message: the same usage again, a later end.
            call.finished_ms = call.finished_ms.max(ts);
            if m.stop_reason.is_some() {
                call.stop_reason = m.stop_reason;
            }
            if let Some(u) = usage {
                call.usage = u;
            }
            blocks.extend(blocks_of(m.content));
            return;
        }
        let (started, model, max_tokens) = match &self.request {
            Some((at, model, max)) if *at <= ts => (*at, model.clone(), *max),
            _ => (
                self.previous_ms.filter(|p| *p <= ts).unwrap_or(ts),
                None,
                None,
            ),
        };
        // A request line starts one call only.
        self.request = None;
        let (messages, system) = sent.unwrap_or_default();
        self.open.push((
            ModelCall {
                id,
                model: m.model.or(model).unwrap_or_else(|| "unknown".into()),
                max_tokens,
                stop_reason: m.stop_reason,
                usage: usage.unwrap_or_default(),
                started_ms: started,
                finished_ms: ts,
                content: String::new(),
                messages,
                system,
            },
            blocks_of(m.content),
        ));
    }

    /// The calls read so far, each once. Call when the transcript is known complete (at
    /// `Stop`, `SubagentStop`, `SessionEnd`).
    pub fn take_calls(&mut self) -> Vec<ModelCall> {
        let mut calls = Vec::with_capacity(self.open.len());
        for (mut call, blocks) in self.open.drain(..) {
            let texts: Vec<&str> = blocks.iter().map(|b| b.get()).collect();
            call.content = format!("[{}]", texts.join(","));
            if self.seen.insert(call.id.clone()) {
                self.seen_order.push_back(call.id.clone());
                if self.seen_order.len() > SEEN_IDS {
                    if let Some(old) = self.seen_order.pop_front() {
                        self.seen.remove(&old);
                    }
                }
            }
            calls.push(call);
        }
        calls
    }
}

fn blocks_of(content: Option<Box<RawValue>>) -> Vec<Box<RawValue>> {
    content
        .and_then(|c| serde_json::from_str::<Vec<Box<RawValue>>>(c.get()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
