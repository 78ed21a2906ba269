//! What a line of Factory Droid's session file says, and the session's usage beside it: Droid
//! writes no usage per message, only the session's running totals, in the
//! `<session>.settings.json` it rewrites before every hook.

use serde::Deserialize;
use serde_json::Value;

use crate::protocol::Usage;
use crate::sources::command_hooks::engine::model_call::{Cache, Reasoning, Tokens};
use crate::sources::command_hooks::engine::records::rfc3339_ms;

/// One line of `~/.factory/sessions/<project>/<session>.jsonl`, as far as a trace needs it.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    /// What the user typed: a user message right after its `context-<id>` line. (The reason a
    /// blocking stop hook gave comes as a user message too, but after the model's answer.)
    Prompt { id: String, text: String, at_ms: u64 },
    /// The model's message: one model call, and the tool calls it asked for, in order.
    Answer(Answer),
    /// Any other message (a tool's result, a hook's record), for its time.
    Other { at_ms: u64 },
}

impl Line {
    /// When Droid wrote it.
    pub fn at_ms(&self) -> u64 {
        match self {
            Line::Prompt { at_ms, .. } | Line::Other { at_ms } => *at_ms,
            Line::Answer(a) => a.at_ms,
        }
    }
}

#[derive(Debug, PartialEq)]
pub(super) struct Answer {
    /// The line's own id, unique in the session.
    pub id: String,
    /// The provider's id of the response (`openaiMessageId`), when Droid keeps it.
    pub response_id: Option<String>,
    /// The model as Droid names it (`claude-opus-4-7`, or `custom:<name>-<n>` for a model of
    /// the user's own).
    pub model: String,
    pub at_ms: u64,
    /// `(id, tool name)` of each `tool_use` block.
    pub calls: Vec<(String, String)>,
    /// Its text, for a stop's reply.
    pub text: String,
    /// The provider, where the model says it (one of the user's own).
    pub provider: Option<&'static str>,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    id: String,
    #[serde(default, rename = "parentId")]
    parent_id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    role: String,
    #[serde(default)]
    content: Value,
    #[serde(default, rename = "modelId")]
    model_id: Option<String>,
    #[serde(default, rename = "openaiMessageId")]
    openai_message_id: Option<String>,
    #[serde(default, rename = "hookEventName")]
    hook_event_name: Option<String>,
}

/// What `bytes` (one line, without its newline) says; `None` for a line that is not a
/// message (the session's start, a todo list, a turn's outcome) or not JSON.
pub(super) fn line(bytes: &[u8]) -> Option<Line> {
    let raw: Raw = serde_json::from_slice(bytes).ok()?;
    let m = raw.message.filter(|_| raw.kind == "message")?;
    let at_ms = raw.timestamp.as_deref().and_then(rfc3339_ms)?;
    let blocks = m.content.as_array().map(Vec::as_slice).unwrap_or_default();
    let text = || {
        blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let typed = raw
        .parent_id
        .as_deref()
        .is_some_and(|p| p.strip_prefix("context-") == Some(raw.id.as_str()));
    Some(match m.role.as_str() {
        "user" if typed && m.hook_event_name.is_none() => Line::Prompt {
            id: raw.id,
            text: text(),
            at_ms,
        },
        "assistant" => Line::Answer(Answer {
            id: raw.id,
            response_id: m.openai_message_id,
            model: m.model_id.unwrap_or_default(),
            at_ms,
            calls: blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| Some((b["id"].as_str()?.into(), b["name"].as_str()?.into())))
                .collect(),
            text: text(),
            provider: None,
        }),
        _ => Line::Other { at_ms },
    })
}

/// The session's usage so far, from its settings file: all of it, and the last call's.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Totals {
    pub all: Usage,
    pub last: Usage,
    /// `gen_ai.provider.name` of the provider the session is locked to, where it is one.
    pub provider: Option<&'static str>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Settings {
    #[serde(default)]
    token_usage: Counts,
    #[serde(default)]
    last_call_token_usage: Counts,
    #[serde(default)]
    provider_lock: Option<String>,
}

/// Droid's counts: its input leaves the cache's reads and writes out, as Anthropic's does.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Counts {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_tokens: u64,
    #[serde(default)]
    cache_read_tokens: u64,
    #[serde(default)]
    thinking_tokens: u64,
}

impl Counts {
    /// Droid's counts are Anthropic's, whatever the provider: the input apart from the
    /// cache, the thinking inside the output.
    fn usage(&self) -> Usage {
        Tokens {
            input: self.input_tokens,
            output: self.output_tokens,
            cache_read: self.cache_read_tokens,
            cache_write: self.cache_creation_tokens,
            reasoning: self.thinking_tokens,
            ..Tokens::default()
        }
        .usage(Cache::Apart, Reasoning::Within)
    }
}

/// The settings file beside the session's `transcript`.
pub(super) fn settings_path(transcript: &str) -> String {
    let stem = transcript.strip_suffix(".jsonl").unwrap_or(transcript);
    format!("{stem}.settings.json")
}

/// The usage a settings file holds; `None` when it is not one.
pub(super) fn totals(bytes: &[u8]) -> Option<Totals> {
    let s: Settings = serde_json::from_slice(bytes).ok()?;
    Some(Totals {
        all: s.token_usage.usage(),
        last: s.last_call_token_usage.usage(),
        provider: match s.provider_lock.as_deref() {
            Some("anthropic") => Some("anthropic"),
            Some("openai") => Some("openai"),
            _ => None,
        },
    })
}

/// What `now` adds to `before`, each count on its own (a count that went down, a session
/// cleared, adds nothing).
pub(super) fn added(now: &Usage, before: &Usage) -> Usage {
    let reasoning = now
        .reasoning_tokens
        .unwrap_or(0)
        .saturating_sub(before.reasoning_tokens.unwrap_or(0));
    Usage {
        input_tokens: now.input_tokens.saturating_sub(before.input_tokens),
        output_tokens: now.output_tokens.saturating_sub(before.output_tokens),
        cache_read_tokens: now.cache_read_tokens.saturating_sub(before.cache_read_tokens),
        cache_write_tokens: now.cache_write_tokens.saturating_sub(before.cache_write_tokens),
        reasoning_tokens: (reasoning > 0).then_some(reasoning),
        ..Usage::default()
    }
}

/// The user's settings (`~/.factory/settings.json`), found from a session file under
/// `~/.factory/sessions/<project>/`.
pub(super) fn user_settings_path(transcript: &str) -> Option<String> {
    let project = std::path::Path::new(transcript).parent()?;
    let sessions = project.parent().filter(|s| s.ends_with("sessions"))?;
    Some(sessions.parent()?.join("settings.json").to_string_lossy().into_owned())
}

/// A model of the user's own, as Droid names it (`custom:<display name>-<index>`): the model
/// the provider is asked for, and the provider, from the user's settings. Nothing else of
/// the entry (its key) is kept.
pub(super) fn custom_model(settings: &[u8], id: &str) -> Option<(String, Option<&'static str>)> {
    let (_, index) = id.strip_prefix("custom:")?.rsplit_once('-')?;
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct User {
        #[serde(default)]
        custom_models: Vec<Custom>,
    }
    #[derive(Deserialize)]
    struct Custom {
        model: String,
        #[serde(default)]
        provider: Option<String>,
    }
    let user: User = serde_json::from_slice(settings).ok()?;
    let entry = user.custom_models.into_iter().nth(index.parse().ok()?)?;
    let provider = match entry.provider.as_deref() {
        Some("anthropic") => Some("anthropic"),
        Some("openai") => Some("openai"),
        _ => None,
    };
    Some((entry.model, provider))
}

/// The least of two usages, count by count.
pub(super) fn least(a: &Usage, b: &Usage) -> Usage {
    let reasoning = a.reasoning_tokens.unwrap_or(0).min(b.reasoning_tokens.unwrap_or(0));
    Usage {
        input_tokens: a.input_tokens.min(b.input_tokens),
        output_tokens: a.output_tokens.min(b.output_tokens),
        cache_read_tokens: a.cache_read_tokens.min(b.cache_read_tokens),
        cache_write_tokens: a.cache_write_tokens.min(b.cache_write_tokens),
        reasoning_tokens: (reasoning > 0).then_some(reasoning),
        ..Usage::default()
    }
}
