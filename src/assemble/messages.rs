//! Model messages, as the GenAI conventions record them (`gen_ai.input.messages`: a role and
//! parts, tool calls and tool results being parts) and as OpenInference flattens them
//! (`llm.input_messages.N.message.*`), so that Phoenix and Langfuse show a chat, not a blob.
//!
//! A host sends what it sent the provider: Anthropic's `messages` (content blocks, tool results
//! inside user messages, `system` apart) or OpenAI's chat messages (tool calls on the assistant
//! message, results as `tool` messages). Both are read into one shape here. Every text, and
//! every string inside tool arguments and results, goes through the content policy (the
//! scrubber, then the length limit). A list longer than the attribute limit loses its oldest
//! messages rather than being cut in the middle, since half a JSON value is not JSON.

use serde_json::{json, Value as J};

use super::policy::ContentPolicy;
use crate::text::truncate;

/// One message: who said it, and what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub role: String,
    pub parts: Vec<Part>,
}

/// A piece of a message, by the conventions' part types.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Reasoning(String),
    ToolCall {
        id: Option<String>,
        name: String,
        arguments: J,
    },
    ToolResult {
        id: Option<String>,
        response: J,
    },
    /// An image, a document, ...: its type only; the content is not exported.
    Other(String),
}

/// The conversation a request sent (`request.messages`), in either provider's shape.
pub(crate) fn input(raw: &str) -> Vec<Message> {
    match serde_json::from_str::<J>(raw) {
        Ok(J::Array(items)) => items.iter().filter_map(message).collect(),
        Ok(J::Object(o)) => match o.get("messages") {
            Some(J::Array(items)) => items.iter().filter_map(message).collect(),
            _ => message(&J::Object(o)).into_iter().collect(),
        },
        Ok(J::String(s)) => vec![text_message("user", s)],
        _ => Vec::new(),
    }
}

/// What the model answered (`response.content`): Anthropic's content blocks, an OpenAI
/// message or completion, or plain text.
pub(crate) fn output(raw: &str) -> Vec<Message> {
    match serde_json::from_str::<J>(raw) {
        Ok(J::Array(blocks)) => vec![Message {
            role: "assistant".into(),
            parts: blocks.iter().flat_map(blocks_of).collect(),
        }],
        Ok(J::Object(o)) => match o.get("choices") {
            Some(J::Array(choices)) => choices
                .iter()
                .filter_map(|c| c.get("message").and_then(message))
                .collect(),
            _ => message(&J::Object(o)).into_iter().collect(),
        },
        Ok(J::String(s)) => vec![text_message("assistant", s)],
        _ => Vec::new(),
    }
}

/// System instructions sent apart (`request.system`): a string or text blocks.
pub(crate) fn system(raw: &str) -> Vec<Part> {
    match serde_json::from_str::<J>(raw) {
        Ok(J::String(s)) => vec![Part::Text(s)],
        Ok(J::Array(blocks)) => blocks.iter().flat_map(blocks_of).collect(),
        _ => Vec::new(),
    }
}

/// The conventions' `finish_reason` for a provider's stop reason.
pub(crate) fn finish_reason(stop: &str) -> &str {
    match stop {
        "end_turn" | "stop_sequence" | "stop" | "pause_turn" => "stop",
        "tool_use" | "tool_calls" | "function_call" => "tool_call",
        "max_tokens" | "length" | "model_context_window_exceeded" => "length",
        "refusal" | "content_filter" => "content_filter",
        other => other,
    }
}

fn text_message(role: &str, text: String) -> Message {
    Message {
        role: role.into(),
        parts: vec![Part::Text(text)],
    }
}

fn message(v: &J) -> Option<Message> {
    let o = v.as_object()?;
    let role = o.get("role").and_then(J::as_str).unwrap_or("user");
    let mut parts: Vec<Part> = match o.get("content") {
        Some(J::String(s)) if role == "tool" => vec![Part::ToolResult {
            id: o
                .get("tool_call_id")
                .and_then(J::as_str)
                .map(str::to_string),
            response: J::String(s.clone()),
        }],
        Some(J::String(s)) => vec![Part::Text(s.clone())],
        Some(J::Array(blocks)) => blocks.iter().flat_map(blocks_of).collect(),
        _ => Vec::new(),
    };
    // OpenAI: the calls ride on the assistant message, their arguments a JSON string.
    for call in o
        .get("tool_calls")
        .and_then(J::as_array)
        .into_iter()
        .flatten()
    {
        let f = call.get("function");
        parts.push(Part::ToolCall {
            id: call.get("id").and_then(J::as_str).map(str::to_string),
            name: f
                .and_then(|f| f.get("name"))
                .and_then(J::as_str)
                .unwrap_or_default()
                .to_string(),
            arguments: f
                .and_then(|f| f.get("arguments"))
                .map(as_object)
                .unwrap_or(J::Null),
        });
    }
    // Anthropic sends tool results as a user message; the conventions give them role `tool`.
    let all_results =
        !parts.is_empty() && parts.iter().all(|p| matches!(p, Part::ToolResult { .. }));
    let role = if all_results { "tool" } else { role };
    Some(Message {
        role: role.to_string(),
        parts,
    })
}

/// The parts of one content block.
fn blocks_of(b: &J) -> Vec<Part> {
    let Some(kind) = b.get("type").and_then(J::as_str) else {
        return match b.as_str() {
            Some(s) => vec![Part::Text(s.to_string())],
            None => Vec::new(),
        };
    };
    let str_of = |k: &str| b.get(k).and_then(J::as_str).map(str::to_string);
    match kind {
        "text" | "input_text" | "output_text" => {
            str_of("text").map(Part::Text).into_iter().collect()
        }
        "thinking" => str_of("thinking")
            .map(Part::Reasoning)
            .into_iter()
            .collect(),
        "tool_use" | "server_tool_use" => vec![Part::ToolCall {
            id: str_of("id"),
            name: str_of("name").unwrap_or_default(),
            arguments: b.get("input").cloned().unwrap_or(J::Null),
        }],
        "tool_result" => vec![Part::ToolResult {
            id: str_of("tool_use_id"),
            response: match b.get("content") {
                // A list of text blocks is the text; anything else stays as it is.
                Some(J::Array(inner)) => {
                    let texts: Vec<String> = inner
                        .iter()
                        .flat_map(blocks_of)
                        .filter_map(|p| match p {
                            Part::Text(t) => Some(t),
                            _ => None,
                        })
                        .collect();
                    J::String(texts.join("\n"))
                }
                Some(v) => v.clone(),
                None => J::Null,
            },
        }],
        other => vec![Part::Other(other.to_string())],
    }
}

/// A JSON string holding an object, as the object (the conventions ask for a best effort).
fn as_object(v: &J) -> J {
    match v {
        J::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// Every string in `v` through the policy (a map's keys are names, and stay).
fn clean_json(v: &J, policy: &ContentPolicy) -> J {
    match v {
        J::String(s) => J::String(policy.content(s)),
        J::Array(items) => J::Array(items.iter().map(|i| clean_json(i, policy)).collect()),
        J::Object(o) => J::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), clean_json(v, policy)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The messages with every text through the policy.
pub(crate) fn clean(messages: Vec<Message>, policy: &ContentPolicy) -> Vec<Message> {
    messages
        .into_iter()
        .map(|m| Message {
            role: policy.label(&m.role),
            parts: clean_parts(m.parts, policy),
        })
        .collect()
}

pub(crate) fn clean_parts(parts: Vec<Part>, policy: &ContentPolicy) -> Vec<Part> {
    parts
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => Part::Text(policy.content(&t)),
            Part::Reasoning(t) => Part::Reasoning(policy.content(&t)),
            Part::ToolCall {
                id,
                name,
                arguments,
            } => Part::ToolCall {
                id: id.map(|i| policy.label(&i)),
                name: policy.label(&name),
                arguments: clean_json(&arguments, policy),
            },
            Part::ToolResult { id, response } => Part::ToolResult {
                id: id.map(|i| policy.label(&i)),
                response: clean_json(&response, policy),
            },
            Part::Other(t) => Part::Other(policy.label(&t)),
        })
        .collect()
}

pub(crate) fn part_json(p: &Part) -> J {
    match p {
        Part::Text(t) => json!({"type": "text", "content": t}),
        Part::Reasoning(t) => json!({"type": "reasoning", "content": t}),
        Part::ToolCall {
            id,
            name,
            arguments,
        } => json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments}),
        Part::ToolResult { id, response } => {
            json!({"type": "tool_call_response", "id": id, "response": response})
        }
        Part::Other(t) => json!({ "type": t }),
    }
}

/// A message in the conventions' schema; an output message also has its `finish_reason`.
pub(crate) fn message_json(m: &Message, finish: Option<&str>) -> J {
    let parts: Vec<J> = m.parts.iter().map(part_json).collect();
    match finish {
        Some(f) => json!({"role": m.role, "parts": parts, "finish_reason": f}),
        None => json!({"role": m.role, "parts": parts}),
    }
}

/// The newest messages whose JSON list fits in `limit` bytes, the list, and how many of the
/// oldest were left out. When even the newest alone is too long, its strings are cut further.
pub(crate) fn fit(messages: &[Message], finish: Option<&str>, limit: usize) -> Fitted {
    let rendered: Vec<String> = messages
        .iter()
        .map(|m| message_json(m, finish).to_string())
        .collect();
    // `[`, `]`, and a comma between two.
    let mut total = 2;
    let mut first = messages.len();
    for (i, r) in rendered.iter().enumerate().rev() {
        let add = r.len() + usize::from(i + 1 < messages.len());
        if total + add > limit {
            break;
        }
        total += add;
        first = i;
    }
    if first == messages.len() && !messages.is_empty() {
        // Not even the newest fits: cut its strings to a share of the limit each.
        let last = messages.len() - 1;
        let mut value = message_json(&messages[last], finish);
        let strings = count_strings(&value).max(1);
        let mut share = (limit / strings).max(8);
        loop {
            let cut = cut_strings(&value, share);
            let text = format!("[{cut}]");
            if text.len() <= limit || share <= 8 {
                value = cut;
                break;
            }
            share /= 2;
        }
        return Fitted {
            json: format!("[{value}]"),
            first: last,
            dropped: last,
        };
    }
    Fitted {
        json: format!("[{}]", rendered[first..].join(",")),
        first,
        dropped: first,
    }
}

/// What [`fit`] kept.
pub(crate) struct Fitted {
    pub json: String,
    /// The index of the oldest message kept.
    pub first: usize,
    /// Messages left out, oldest first.
    pub dropped: usize,
}

/// Keys whose values are part of the schema (a role, a part type, an id), never cut.
const KEPT_WHOLE: &[&str] = &["role", "type", "finish_reason", "id", "name"];

fn count_strings(v: &J) -> usize {
    match v {
        J::String(_) => 1,
        J::Array(a) => a.iter().map(count_strings).sum(),
        J::Object(o) => o
            .iter()
            .filter(|(k, _)| !KEPT_WHOLE.contains(&k.as_str()))
            .map(|(_, v)| count_strings(v))
            .sum(),
        _ => 0,
    }
}

fn cut_strings(v: &J, max: usize) -> J {
    match v {
        J::String(s) => J::String(truncate(s, max)),
        J::Array(a) => J::Array(a.iter().map(|i| cut_strings(i, max)).collect()),
        J::Object(o) => J::Object(
            o.iter()
                .map(|(k, v)| {
                    let v = if KEPT_WHOLE.contains(&k.as_str()) {
                        v.clone()
                    } else {
                        cut_strings(v, max)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
