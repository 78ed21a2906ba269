//! A model call's messages on its span, with message capture on: the GenAI conventions'
//! JSON attributes, and OpenInference's flattened ones beside them.
//!
//! OpenInference spells each message out in its own keys (`llm.input_messages.3.message.role`).
//! Attribute keys are static names here (see `span.rs`), so those keys come from a table made
//! once, for the first [`FLAT_MESSAGES`] messages and [`FLAT_CALLS`] tool calls of each; the
//! JSON attributes carry every message that fits the length limit.

use std::sync::OnceLock;

use serde_json::Value as J;

use crate::assemble::messages::{self, Message, Part};
use crate::assemble::policy::ContentPolicy;
use crate::assemble::semconv::*;
use crate::assemble::span::{Span, Value};
use crate::protocol::CallSent;

/// Messages of each direction flattened for OpenInference; the newest are kept.
pub(crate) const FLAT_MESSAGES: usize = 64;
/// Tool calls flattened per message.
pub(crate) const FLAT_CALLS: usize = 16;

/// The request's and the response's messages on `span` (only called with capture on).
pub(super) fn push(span: &mut Span, c: &CallSent<'_>, policy: &ContentPolicy) {
    let limit = policy.max_value_len;
    let system = c
        .request
        .system
        .as_ref()
        .map(|s| messages::clean_parts(messages::system(s.get()), policy))
        .filter(|p| !p.is_empty());
    if let Some(parts) = &system {
        let instructions = Message {
            role: "system".into(),
            parts: parts.clone(),
        };
        // The schema is a list of parts, not of messages: take the parts of the fitted one.
        let fitted = messages::fit(std::slice::from_ref(&instructions), None, limit);
        let parts = serde_json::from_str::<J>(&fitted.json)
            .ok()
            .and_then(|v| v.get(0).and_then(|m| m.get("parts")).cloned())
            .unwrap_or(J::Array(Vec::new()));
        span.push(GEN_AI_SYSTEM_INSTRUCTIONS, Value::Str(parts.to_string()));
    }
    let mut flat_input = Vec::new();
    if let Some(raw) = &c.request.messages {
        let input = messages::clean(messages::input(raw.get()), policy);
        if !input.is_empty() {
            let fitted = messages::fit(&input, None, limit);
            span.push(GEN_AI_INPUT_MESSAGES, Value::Str(fitted.json));
            if fitted.dropped > 0 {
                span.push(
                    ALBEDO_CHAT_INPUT_MESSAGES_DROPPED,
                    super::int(fitted.dropped as u64),
                );
            }
            flat_input = input[fitted.first..].to_vec();
        }
    }
    if let Some(parts) = system {
        flat_input.insert(
            0,
            Message {
                role: "system".into(),
                parts,
            },
        );
    }
    flatten(span, Direction::Input, &flat_input);
    let response = c.response.as_ref();
    if let Some(raw) = response.and_then(|r| r.content.as_ref()) {
        let output = messages::clean(messages::output(raw.get()), policy);
        if !output.is_empty() {
            let finish = match (response.and_then(|r| r.stop_reason.as_deref()), &c.error) {
                (Some(stop), _) => policy.label(messages::finish_reason(stop)),
                (None, Some(_)) => "error".into(),
                (None, None) => "stop".into(),
            };
            let fitted = messages::fit(&output, Some(&finish), limit);
            span.push(GEN_AI_OUTPUT_MESSAGES, Value::Str(fitted.json));
            flatten(span, Direction::Output, &output[fitted.first..]);
        }
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Input,
    Output,
}

/// OpenInference's messages: one per message, and one per tool result (a `tool` message
/// answering one call), the newest [`FLAT_MESSAGES`].
fn flatten(span: &mut Span, dir: Direction, messages: &[Message]) {
    let mut flat: Vec<Flat> = Vec::new();
    for m in messages {
        let text: Vec<&str> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        let calls: Vec<(&Option<String>, &str, &J)> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                } => Some((id, name.as_str(), arguments)),
                _ => None,
            })
            .collect();
        if !text.is_empty() || !calls.is_empty() {
            flat.push(Flat {
                role: m.role.clone(),
                content: (!text.is_empty()).then(|| text.join("\n\n")),
                tool_call_id: None,
                calls: calls
                    .into_iter()
                    .map(|(id, name, args)| (id.clone(), name.to_string(), args.to_string()))
                    .collect(),
            });
        }
        for p in &m.parts {
            if let Part::ToolResult { id, response } = p {
                flat.push(Flat {
                    role: "tool".into(),
                    content: Some(match response {
                        J::String(s) => s.clone(),
                        other => other.to_string(),
                    }),
                    tool_call_id: id.clone(),
                    calls: Vec::new(),
                });
            }
        }
    }
    let skip = flat.len().saturating_sub(FLAT_MESSAGES);
    let table = keys();
    let table = match dir {
        Direction::Input => &table.input,
        Direction::Output => &table.output,
    };
    for (keys, f) in table.iter().zip(flat.into_iter().skip(skip)) {
        span.push(keys.role, Value::Str(f.role));
        if let Some(c) = f.content {
            span.push(keys.content, Value::Str(c));
        }
        if let Some(id) = f.tool_call_id {
            span.push(keys.tool_call_id, Value::Str(id));
        }
        for (k, (id, name, args)) in keys.calls.iter().zip(f.calls) {
            if let Some(id) = id {
                span.push(k.id, Value::Str(id));
            }
            span.push(k.name, Value::Str(name));
            span.push(k.arguments, Value::Str(args));
        }
    }
}

struct Flat {
    role: String,
    content: Option<String>,
    tool_call_id: Option<String>,
    calls: Vec<(Option<String>, String, String)>,
}

/// The flattened keys of one message.
pub(crate) struct MessageKeys {
    pub role: &'static str,
    pub content: &'static str,
    pub tool_call_id: &'static str,
    pub calls: Vec<CallKeys>,
}

pub(crate) struct CallKeys {
    pub id: &'static str,
    pub name: &'static str,
    pub arguments: &'static str,
}

pub(crate) struct Keys {
    pub input: Vec<MessageKeys>,
    pub output: Vec<MessageKeys>,
}

/// The table of flattened keys, made once: a fixed set of about 6,500 short strings.
pub(crate) fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let dir = |prefix: &str| -> Vec<MessageKeys> {
            (0..FLAT_MESSAGES)
                .map(|i| {
                    let m = format!("{prefix}.{i}.message");
                    MessageKeys {
                        role: leak(format!("{m}.role")),
                        content: leak(format!("{m}.content")),
                        tool_call_id: leak(format!("{m}.tool_call_id")),
                        calls: (0..FLAT_CALLS)
                            .map(|k| {
                                let c = format!("{m}.tool_calls.{k}.tool_call");
                                CallKeys {
                                    id: leak(format!("{c}.id")),
                                    name: leak(format!("{c}.function.name")),
                                    arguments: leak(format!("{c}.function.arguments")),
                                }
                            })
                            .collect(),
                    }
                })
                .collect()
        };
        Keys {
            input: dir(LLM_INPUT_MESSAGES),
            output: dir(LLM_OUTPUT_MESSAGES),
        }
    })
}
