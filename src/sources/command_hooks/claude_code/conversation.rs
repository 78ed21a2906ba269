//! What Claude Code sent with each model call, rebuilt from its transcript.
//!
//! The transcript has no copy of the request, but it has the conversation: the user's prompt
//! and the tool results (`user` lines, several in a row making one message), and each
//! assistant message (one line per content block, repeating the message id). The input of a
//! model call is the conversation before that call's own message; the system prompt is the
//! `system` of the request shape in force (`api-request-shape`). A compact boundary starts
//! the conversation over, as it does for Claude Code.
//!
//! Kept in Anthropic's own `messages` shape; the assembly turns it into the conventions'
//! messages, with capture on only, through the scrubber and the length limit (dropping the
//! oldest messages). So that a long session costs bounded memory, only the newest
//! [`MAX_BYTES`] of it are kept here, the oldest messages going first, as the length limit
//! would drop them anyway.

use std::collections::VecDeque;

use serde_json::value::RawValue;

/// The most of a conversation kept, in bytes of JSON text, when nothing smaller is asked for.
pub const MAX_BYTES: usize = 256 << 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone)]
struct Message {
    role: Role,
    /// The assistant message's id, whose further blocks join it.
    id: Option<String>,
    /// Content blocks, each as JSON text.
    blocks: Vec<String>,
    bytes: usize,
}

#[derive(Debug, Clone)]
pub struct Conversation {
    messages: VecDeque<Message>,
    bytes: usize,
    /// The system prompt's blocks, as JSON text of an array.
    system: Option<String>,
    /// How many bytes are kept; 0 keeps nothing (messages are not exported).
    budget: usize,
}

impl Default for Conversation {
    fn default() -> Self {
        Conversation {
            messages: VecDeque::new(),
            bytes: 0,
            system: None,
            budget: MAX_BYTES,
        }
    }
}

impl Conversation {
    /// Keeps at most `bytes` of the conversation (at most [`MAX_BYTES`]); 0 keeps none, for
    /// a session whose messages are not exported (capture off): each model call would
    /// otherwise carry a copy of it only for the assembly to drop.
    pub fn set_budget(&mut self, bytes: usize) {
        self.budget = bytes.min(MAX_BYTES);
        if self.budget == 0 {
            self.messages.clear();
            self.bytes = 0;
            self.system = None;
        }
        self.bound();
    }

    /// Whether anything is kept (capture on).
    pub fn keeps_any(&self) -> bool {
        self.budget > 0
    }

    /// A `user` line's content: a string (a prompt), or blocks (tool results, text).
    pub fn user(&mut self, content: &RawValue) {
        if self.budget == 0 {
            return;
        }
        let blocks = blocks(content);
        if blocks.is_empty() {
            return;
        }
        match self.messages.back() {
            Some(m) if m.role == Role::User => self.extend_last(blocks),
            _ => self.push(Role::User, None, blocks),
        }
    }

    /// An `assistant` line's blocks, joining the message with the same id.
    pub fn assistant(&mut self, id: &str, content: &RawValue) {
        if self.budget == 0 {
            return;
        }
        let blocks = blocks(content);
        match self.messages.back() {
            Some(m) if m.role == Role::Assistant && m.id.as_deref() == Some(id) => {
                self.extend_last(blocks)
            }
            _ => self.push(Role::Assistant, Some(id.to_string()), blocks),
        }
    }

    /// The request shape's `system`: a string or a list of text blocks.
    pub fn system(&mut self, system: &RawValue) {
        if self.budget == 0 {
            return;
        }
        let blocks = blocks(system);
        self.system = (!blocks.is_empty()).then(|| format!("[{}]", blocks.join(",")));
    }

    /// A compact boundary: what follows is a new conversation (the system prompt stays).
    pub fn reset(&mut self) {
        self.messages.clear();
        self.bytes = 0;
    }

    /// The messages so far, as Anthropic's `messages` (JSON text); `None` if there are none.
    pub fn messages_json(&self) -> Option<String> {
        if self.messages.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(self.bytes + 32 * self.messages.len());
        out.push('[');
        for (i, m) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(match m.role {
                Role::User => r#"{"role":"user","content":["#,
                Role::Assistant => r#"{"role":"assistant","content":["#,
            });
            out.push_str(&m.blocks.join(","));
            out.push_str("]}");
        }
        out.push(']');
        Some(out)
    }

    /// The system prompt in force, as JSON text of its blocks.
    pub fn system_json(&self) -> Option<String> {
        self.system.clone()
    }

    fn push(&mut self, role: Role, id: Option<String>, blocks: Vec<String>) {
        let bytes = blocks.iter().map(String::len).sum();
        self.bytes += bytes;
        self.messages.push_back(Message {
            role,
            id,
            blocks,
            bytes,
        });
        self.bound();
    }

    fn extend_last(&mut self, blocks: Vec<String>) {
        let added: usize = blocks.iter().map(String::len).sum();
        if let Some(m) = self.messages.back_mut() {
            m.blocks.extend(blocks);
            m.bytes += added;
            self.bytes += added;
        }
        self.bound();
    }

    /// Drops the oldest messages past the budget; the newest always stays.
    fn bound(&mut self) {
        while self.bytes > self.budget && self.messages.len() > 1 {
            if let Some(old) = self.messages.pop_front() {
                self.bytes -= old.bytes;
            }
        }
    }
}

/// Content as blocks: a string is one text block, a list is its blocks, anything else none.
fn blocks(content: &RawValue) -> Vec<String> {
    let text = content.get().trim_start();
    if text.starts_with('"') {
        let Ok(s) = serde_json::from_str::<String>(content.get()) else {
            return Vec::new();
        };
        if s.is_empty() {
            return Vec::new();
        }
        return vec![serde_json::json!({"type": "text", "text": s}).to_string()];
    }
    serde_json::from_str::<Vec<Box<RawValue>>>(content.get())
        .map(|b| b.into_iter().map(|b| b.get().to_string()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn tool_results_join_one_user_message_and_blocks_join_their_message() {
        let mut c = Conversation::default();
        c.user(&raw(r#""fix it""#));
        c.assistant(
            "m1",
            &raw(r#"[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]"#),
        );
        c.assistant(
            "m1",
            &raw(r#"[{"type":"tool_use","id":"t2","name":"Read","input":{}}]"#),
        );
        c.user(&raw(
            r#"[{"type":"tool_result","tool_use_id":"t2","content":"a"}]"#,
        ));
        c.user(&raw(
            r#"[{"type":"tool_result","tool_use_id":"t1","content":"b"}]"#,
        ));
        let v: serde_json::Value = serde_json::from_str(&c.messages_json().unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 3);
        assert_eq!(v[0]["content"][0]["text"], "fix it");
        assert_eq!(v[1]["role"], "assistant");
        assert_eq!(v[1]["content"].as_array().unwrap().len(), 2);
        assert_eq!(v[2]["content"][1]["tool_use_id"], "t1");
        c.reset();
        assert_eq!(c.messages_json(), None);
    }

    #[test]
    fn a_long_conversation_keeps_its_newest_messages() {
        let mut c = Conversation::default();
        let big = format!(r#""{}""#, "x".repeat(100_000));
        for i in 0..10 {
            c.user(&raw(&big));
            c.assistant(&format!("m{i}"), &raw(r#"[{"type":"text","text":"ok"}]"#));
        }
        assert!(c.bytes <= MAX_BYTES, "{}", c.bytes);
        let v: serde_json::Value = serde_json::from_str(&c.messages_json().unwrap()).unwrap();
        assert_eq!(v.as_array().unwrap().last().unwrap()["role"], "assistant");
        c.set_budget(0);
        c.user(&raw(r#""more""#));
        assert_eq!(c.messages_json(), None, "nothing kept with no budget");
    }
}
