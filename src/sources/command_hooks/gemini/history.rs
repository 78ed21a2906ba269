//! Gemini CLI's history from its own files, for `import`: each chat under
//! `~/.gemini/tmp/<project>/chats/` (`$GEMINI_CLI_HOME/.gemini` where that is set) read whole
//! into the records the hooks would have made: a turn per prompt, a model call per answer with
//! the tokens Gemini recorded for it, its tool calls from the answer that asked for them to
//! the time Gemini recorded their result. A sub-agent's chat (`chats/<session>/<id>.jsonl`) is
//! read at the `invoke_agent` call that ran it, and opens under it, as it does live.
//!
//! Gemini's hooks carry no id its chats keep, so a model call met both ways could not be told
//! for the same: `import` reads only the sessions the live route never traced
//! ([`History::Untraced`](crate::sources::command_hooks::spec::History::Untraced)). The one
//! I/O: the sub-agents' chats, and the project's `.project_root`, where the session ran.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{AGENT, PROVIDER};
use crate::protocol::{Call, Called, Event, Json, Record};
use crate::sources::command_hooks::engine::model_call::{
    Answer, Cache, ModelCall, Reasoning, Tokens,
};
use crate::sources::command_hooks::engine::records::{prompted, record, rfc3339_ms, turn_ended, SubAgent};
use crate::sources::command_hooks::engine::session_key;
use crate::sources::command_hooks::spec::{self, Env, Reading};

/// How deep sub-agents of sub-agents are followed.
const DEPTH: usize = 4;

/// Where Gemini CLI keeps its chats.
pub fn roots(env: Env<'_>) -> Vec<PathBuf> {
    match env("GEMINI_CLI_HOME").filter(|h| !h.is_empty()) {
        Some(home) => vec![Path::new(&home).join(".gemini/tmp")],
        None => spec::under_home(env, ".gemini/tmp").into_iter().collect(),
    }
}

/// A session's chat: `<project>/chats/session-<time>-<id>.jsonl` (`.json`: written whole, by
/// versions before 0.4x). A sub-agent's, in a folder of its parent's, is read with it.
pub fn is_session(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name.starts_with("session-")
        && (name.ends_with(".jsonl") || name.ends_with(".json"))
        && path.parent().is_some_and(|d| d.ends_with("chats"))
}

/// A message: the user's (a prompt, or tools' results), or Gemini's (an answer).
#[derive(Deserialize)]
struct Message {
    #[serde(default, deserialize_with = "null_as_empty")]
    id: String,
    #[serde(default, deserialize_with = "null_as_empty")]
    timestamp: String,
    #[serde(rename = "type", default, deserialize_with = "null_as_empty")]
    kind: String,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    tokens: Option<ChatTokens>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default, rename = "toolCalls", deserialize_with = "null_as_none")]
    tool_calls: Vec<ToolCall>,
}

/// A text written as `null` is an empty one.
fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// A list written as `null` is an empty one.
fn null_as_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ToolCall>, D::Error> {
    Ok(Option::<Vec<ToolCall>>::deserialize(d)?.unwrap_or_default())
}

/// An answer's counts, as Gemini's `usageMetadata` gave them.
#[derive(Deserialize, Default, Clone, Copy)]
struct ChatTokens {
    #[serde(default, deserialize_with = "count")]
    input: u64,
    #[serde(default, deserialize_with = "count")]
    output: u64,
    #[serde(default, deserialize_with = "count")]
    cached: u64,
    #[serde(default, deserialize_with = "count")]
    thoughts: u64,
}

/// A count as Gemini may write it: a number (whole or not), or `null` for none.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.map_or(0, |n| n.max(0.0) as u64))
}

#[derive(Deserialize)]
struct ToolCall {
    #[serde(default)]
    id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    status: Option<String>,
    /// When its result was recorded.
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default, rename = "resultDisplay")]
    shown: Option<Value>,
}

/// One chat: its session, when it began, its messages (each as last written: Gemini appends
/// a message again as it learns more of it).
struct Chat {
    session: String,
    started_ms: Option<u64>,
    messages: Vec<Message>,
}

fn chat(bytes: &[u8]) -> Option<Chat> {
    #[derive(Deserialize)]
    struct Head {
        #[serde(default, rename = "sessionId")]
        session: Option<String>,
        #[serde(default, rename = "startTime")]
        start: Option<String>,
        #[serde(default)]
        messages: Option<Vec<Value>>,
    }
    // Before 0.4x, one JSON document with its messages; one message of a shape not read is
    // passed over, not the whole chat.
    if let Ok(Head {
        session: Some(session),
        start,
        messages: Some(messages),
    }) = serde_json::from_slice::<Head>(bytes)
    {
        let started_ms = start.as_deref().and_then(rfc3339_ms);
        let messages = messages
            .into_iter()
            .filter_map(|m| serde_json::from_value::<Message>(m).ok())
            .collect();
        return Some(Chat {
            session,
            started_ms,
            messages,
        });
    }
    let (mut session, mut started_ms) = (None, None);
    let mut messages: Vec<Message> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for line in bytes.split(|&b| b == b'\n') {
        if line.starts_with(b"{\"$set\"") {
            continue;
        }
        if let Ok(m) = serde_json::from_slice::<Message>(line) {
            if !m.kind.is_empty() && !m.id.is_empty() {
                match at.get(&m.id) {
                    Some(&i) => messages[i] = m,
                    None => {
                        at.insert(m.id.clone(), messages.len());
                        messages.push(m);
                    }
                }
                continue;
            }
        }
        if session.is_none() {
            if let Ok(h) = serde_json::from_slice::<Head>(line) {
                started_ms = h.start.as_deref().and_then(rfc3339_ms);
                session = h.session;
            }
        }
    }
    Some(Chat {
        session: session?,
        started_ms,
        messages,
    })
}

/// What a session's chat says, as the records the live route would have made.
pub fn records(path: &Path, bytes: &[u8], _: Reading) -> Vec<Record<'static>> {
    let mut out = Vec::new();
    let Some(chat) = chat(bytes) else {
        return out;
    };
    let project = path.parent().and_then(Path::parent);
    let workspace = project
        .and_then(|p| std::fs::read_to_string(p.join(".project_root")).ok())
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty());
    let sub_agents = path.with_file_name(&chat.session);
    let session = chat.session.clone();
    let reader = Reader::new(workspace.as_deref(), &sub_agents);
    reader.replay(&session, None, chat, 0, &mut out);
    // A sub-agent no call took (no call's time held its start) still counts: as a session of
    // its own, named under the one it ran for.
    for child in reader.unplaced() {
        let id = session_key::sub_agent(&session, &child.session);
        let nested = sub_agents.join(&child.session);
        Reader::new(workspace.as_deref(), &nested).replay(&id, None, child, 1, &mut out);
    }
    out
}

/// What every chat of a session shares: where it ran, and where its sub-agents' chats are.
struct Reader<'a> {
    workspace: Option<&'a str>,
    sub_agents: &'a Path,
    /// The sub-agents' chats not yet placed under a call, read from `sub_agents` when the
    /// first `invoke_agent` call comes; each is placed once.
    unplaced: std::cell::RefCell<Option<Vec<Chat>>>,
}

impl<'a> Reader<'a> {
    fn new(workspace: Option<&'a str>, sub_agents: &'a Path) -> Reader<'a> {
        Reader {
            workspace,
            sub_agents,
            unplaced: Default::default(),
        }
    }

    /// The sub-agent's chat for an `invoke_agent` call from `at` to `end`: the first begun in
    /// that time (a second's leeway) that began with `asked`, the call's prompt, else the
    /// first begun in it with any; taken from those not yet placed, so each is placed once.
    fn placed(&self, asked: Option<&str>, at: u64, end: u64) -> Option<Chat> {
        let mut unplaced = self.unplaced.borrow_mut();
        let chats = unplaced.get_or_insert_with(|| chats_in(self.sub_agents));
        let during = |ch: &Chat| {
            ch.started_ms
                .is_none_or(|s| s.saturating_add(1_000) >= at && s <= end.saturating_add(1_000))
        };
        let first_prompt = |ch: &Chat| {
            ch.messages.iter().find_map(|m| match m.kind.as_str() {
                "user" => prompt(&m.content),
                _ => None,
            })
        };
        let i = chats
            .iter()
            .position(|ch| during(ch) && (asked.is_none() || first_prompt(ch).as_deref() == asked))
            .or_else(|| chats.iter().position(during))?;
        Some(chats.remove(i))
    }

    /// The sub-agents' chats no call took.
    fn unplaced(self) -> Vec<Chat> {
        self.unplaced
            .into_inner()
            .unwrap_or_else(|| chats_in(self.sub_agents))
    }
}

/// The chats in folder `dir` (a session's sub-agents'), in the order they began.
fn chats_in(dir: &Path) -> Vec<Chat> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    let mut chats: Vec<Chat> = paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|p| chat(&std::fs::read(p).ok()?))
        .collect();
    chats.sort_by_key(|c| c.started_ms);
    chats
}

impl Reader<'_> {
    /// Chat `chat` as session `sid`, opened under a call (`under`: the caller's session, the
    /// call, the sub-agent's name) for a sub-agent's.
    fn replay(
        &self,
        sid: &str,
        under: Option<(&str, &str, Option<&str>)>,
        chat: Chat,
        depth: usize,
        out: &mut Vec<Record<'static>>,
    ) {
        let first = chat.messages.iter().find_map(|m| rfc3339_ms(&m.timestamp));
        let Some(opened_ms) = chat.started_ms.or(first) else {
            return;
        };
        let session = SubAgent {
            name: under.and_then(|(_, _, name)| name).unwrap_or(AGENT).to_string(),
            model: None,
            workspace: self.workspace.map(str::to_string),
            under: under.map(|(session, call, _)| (session, call)),
        };
        out.push(session.opened(sid, opened_ms));
        // When the turn began, and when the last thing before the next model call happened.
        let (mut turn, mut since, mut last) = (None::<u64>, opened_ms, opened_ms);
        for m in chat.messages {
            let Some(at) = rfc3339_ms(&m.timestamp) else {
                continue;
            };
            let before = last;
            last = last.max(at);
            match m.kind.as_str() {
                "user" => {
                    if let Some(text) = prompt(&m.content) {
                        if turn.is_some() {
                            out.push(turn_ended(sid, before));
                        }
                        out.push(prompted(sid, at, text));
                        turn = Some(at);
                    }
                    since = at;
                }
                "gemini" => {
                    let turn_at = *turn.get_or_insert_with(|| {
                        out.push(prompted(sid, since, String::new()));
                        since
                    });
                    out.push(record(sid, Event::CallSent(answer(&m, since, at))));
                    since = at;
                    for call in m.tool_calls {
                        let end = self.tool_call(sid, turn_at, at, call, depth, out);
                        since = since.max(end);
                        last = last.max(end);
                    }
                }
                _ => {}
            }
        }
        if turn.is_some() {
            out.push(turn_ended(sid, last));
        }
        out.push(record(sid, Event::Closed { at_ms: last }));
    }

    /// A tool call asked for at `at`, in the turn of session `sid` begun at `turn_at`, and the
    /// sub-agent it ran; returns when it ended.
    fn tool_call(
        &self,
        sid: &str,
        turn_at: u64,
        at: u64,
        c: ToolCall,
        depth: usize,
        out: &mut Vec<Record<'static>>,
    ) -> u64 {
        let end = c.timestamp.as_deref().and_then(rfc3339_ms).unwrap_or(at).max(at);
        let call = Call {
            id: Cow::Owned(c.id.clone()),
            name: Cow::Owned(c.name.clone()),
            arguments: c.args.as_ref().and_then(|a| Json::of(a).ok()),
            within: None,
        };
        if c.name == super::subagents::TOOL && depth < DEPTH {
            out.push(record(
                sid,
                Event::Calling {
                    at_ms: at,
                    call: call.clone(),
                },
            ));
            self.sub_agent(sid, turn_at, at, &c, depth, out);
        }
        let status = c.status.as_deref().unwrap_or("success");
        let shown = c.shown.as_ref().and_then(Value::as_str).unwrap_or_default();
        // Blocked by a hook or a rule, or turned down by the user, before it ran.
        let refused = status == "cancelled" || shown.starts_with("Tool execution blocked");
        out.push(record(
            sid,
            Event::Called(Called {
                call,
                output: None,
                started_ms: at,
                finished_ms: end,
                refused,
                failed: status == "error" && !refused,
            }),
        ));
        end
    }

    /// The sub-agent `invoke_agent` call `c` ran: the chat beside its caller's that its prompt
    /// began (each chat under one call only), under the live route's name for it.
    fn sub_agent(
        &self,
        caller: &str,
        turn_at: u64,
        at: u64,
        c: &ToolCall,
        depth: usize,
        out: &mut Vec<Record<'static>>,
    ) {
        let asked = c.args.as_ref().and_then(|a| a["prompt"].as_str());
        let name = c.args.as_ref().and_then(|a| a["agent_name"].as_str());
        let end = c.timestamp.as_deref().and_then(rfc3339_ms).unwrap_or(at);
        let Some(child) = self.placed(asked, at, end) else {
            return;
        };
        let session = session_key::sub_agent(caller, &format!("{turn_at}-{}", c.id));
        let nested = self.sub_agents.join(&child.session);
        let inner = Reader::new(self.workspace, &nested);
        inner.replay(&session, Some((caller, &c.id, name)), child, depth + 1, out);
    }
}

/// What the user typed: a message's text parts (tools' results come as parts of their own).
fn prompt(content: &Value) -> Option<String> {
    if let Some(text) = content.as_str() {
        return Some(text.to_string());
    }
    let parts = content.as_array()?;
    let text: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// Answer `m`, asked for at `since`: a model call, counted as the live route counts it.
fn answer(m: &Message, since: u64, at: u64) -> crate::protocol::CallSent<'static> {
    let t = m.tokens.unwrap_or_default();
    ModelCall {
        id: Some(m.id.clone()),
        model: m.model.clone().unwrap_or_default(),
        provider: Some(Cow::Borrowed(PROVIDER)),
        started_ms: since,
        finished_ms: at,
        usage: Tokens {
            input: t.input,
            cache_read: t.cached,
            output: t.output,
            reasoning: t.thoughts,
            ..Tokens::default()
        }
        .usage(Cache::ReadsWithin, Reasoning::Apart),
        answer: Some(Answer::default()),
        ..ModelCall::default()
    }
    .call_sent()
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
