//! opencode's events to protocol records (what they carry: docs/agents/opencode.md).
//!
//! opencode has no command hooks. albedo-otel's plugin ([`PLUGIN`], which `install opencode`
//! writes) hands the events below to one `albedo-otel-hook --agent opencode` process, which
//! journals them like any agent's payloads. Every event carries its own times:
//! - `chat.message` (the plugin hook that carries the prompt) opens the turn, at the user
//!   message's creation; `session.idle` ends it;
//! - an assistant `message.updated` is a model call: it starts at the message's creation and
//!   ends once the message has `time.completed`, with its tokens and finish reason. Its
//!   `step-start` part is the first streamed chunk;
//! - a `tool` part is a call: it starts when it is `running` and ends `completed` or `error`,
//!   with the start and end opencode measured. A call opencode's permissions refused is an
//!   error that says so, and is marked refused;
//! - `session.created` with a `parentID` is a sub-agent's session (the `task` tool's): it is
//!   nested under the parent's `task` call that is running, and closed when its turn ends.
//!
//! The process exits once a `run` is over, and a later `run --session` goes on with the same
//! session id. The hook's input closes when opencode exits, however it exits, and the hook
//! then says [`EXITED`] for each session: the session closes (a turn still open goes out
//! unfinished), and the next process opens it again.
//!
//! Pure: no I/O. The records pass `protocol::validate` in the pipeline like every source's.

mod payload;
mod plugin;
mod subagents;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::value::RawValue;

pub use payload::Payload;
use payload::{Info, Part, ToolState};
pub use plugin::{plugin, plugin_command, PLUGIN, PLUGIN_COMMAND_MARK};

use super::records::{raw, record, Unanswered};
pub use super::stream::EXITED;
use crate::protocol::{Call, CallSent, Called, Event, Json, Record, Request, Response, Usage};

/// The agent name on opencode's turns.
pub const AGENT: &str = "opencode";

/// The events the plugin hands on: those that make a trace.
pub const HOOK_EVENTS: &[&str] = &[
    "session.created",
    "chat.message",
    "message.updated",
    "message.part.updated",
    "session.idle",
];

/// opencode's names for the refusals of its permission rules and of the user
/// (`PermissionNext.DeniedError`, `RejectedError`, `CorrectedError`), as 1.18.33 words them.
const REFUSALS: &[&str] = &[
    "The user has specified a rule which prevents",
    "The user rejected permission",
    "The user dismissed",
];

/// A model call: an assistant message not yet completed.
#[derive(Debug)]
struct ModelStart {
    at_ms: u64,
    model: String,
    provider: String,
    first_chunk_ms: Option<u64>,
}

/// A tool call that is running.
#[derive(Debug)]
struct Running {
    name: String,
    input: Option<Box<RawValue>>,
    at_ms: u64,
}

#[derive(Debug, Default)]
struct Turn {
    /// The user message that opened it (empty when a model call or a tool opened it).
    prompt: String,
    models: HashMap<String, ModelStart>,
    /// The turn's assistant messages, ended or not: a tool part names its message.
    messages: HashSet<String>,
    /// Model calls and tool calls already ended: opencode repeats its updates.
    ended: HashSet<String>,
    running: HashMap<String, Running>,
}

#[derive(Debug, Default)]
struct Session {
    started: bool,
    turn: Option<Turn>,
    /// A sub-agent's session: it closes when its turn ends, or with the session that
    /// started it.
    parent: Option<String>,
    /// `task` calls that already have their sub-agent.
    spawned: HashSet<String>,
    /// A sub-agent's session not yet opened: when it was created, and where.
    opening: Option<(u64, Option<String>)>,
}

/// Turns opencode's events into protocol records; see the module docs.
#[derive(Debug, Default)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
}

impl Adapter {
    pub fn new() -> Self {
        Adapter::default()
    }

    /// Sessions with a turn open.
    pub fn open_turns(&self) -> usize {
        self.sessions.values().filter(|s| s.turn.is_some()).count()
    }

    /// Whether session `id` is between turns.
    pub fn at_rest(&self, id: &str) -> bool {
        self.sessions.get(id).is_none_or(|s| s.turn.is_none())
    }

    /// Takes one event that reached the journal at `received_ms`; appends records to `out`.
    pub fn push(&mut self, received_ms: u64, p: &Payload, out: &mut Vec<Record<'static>>) {
        let sid = p.own_session();
        if sid.is_empty() {
            return;
        }
        let seen = p.seen_ms().unwrap_or(received_ms);
        let props = &p.properties;
        match p.hook_event_name.as_str() {
            "session.created" => {
                let info = props.info.as_ref();
                let at = info.and_then(|i| i.time.created).unwrap_or(seen);
                let parent = info.and_then(|i| i.parent_id.as_deref());
                self.open_session(
                    sid,
                    at,
                    info.and_then(|i| i.directory.as_deref()),
                    parent,
                    out,
                );
            }
            "chat.message" => {
                let message = props.message.as_ref();
                let at = message.and_then(|m| m.time.created).unwrap_or(seen);
                let id = message.and_then(|m| m.id.clone()).unwrap_or_default();
                let text = props.text.clone().unwrap_or_default();
                self.on_prompt(sid, at, id, text, out);
            }
            "message.updated" => match props.info.as_ref() {
                Some(info) if info.role.as_deref() == Some("assistant") => {
                    self.on_message(sid, seen, info, out);
                }
                _ => {}
            },
            "message.part.updated" => match props.part.as_ref() {
                Some(part) if part.kind == "step-start" => self.on_first_chunk(sid, seen, part),
                Some(part) if part.kind == "tool" => self.on_tool(sid, seen, part, out),
                _ => {}
            },
            "session.idle" => self.end_turn(sid, seen, "end_turn", out),
            EXITED => self.abandon(sid, seen, out),
            _ => {}
        }
    }

    fn on_prompt(
        &mut self,
        sid: &str,
        at_ms: u64,
        id: String,
        text: String,
        out: &mut Vec<Record<'static>>,
    ) {
        self.open_session(sid, at_ms, None, None, out);
        let s = self.sessions.get_mut(sid).expect("opened above");
        if s.turn
            .as_ref()
            .is_some_and(|t| !id.is_empty() && t.prompt == id)
        {
            return;
        }
        // A turn that never went idle (opencode was stopped) ends where the next begins.
        self.end_turn(sid, at_ms, "interrupted", out);
        self.begin(sid, at_ms, id, text, out);
    }

    fn begin(
        &mut self,
        sid: &str,
        at_ms: u64,
        id: String,
        text: String,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(sid.to_string()).or_default();
        s.turn = Some(Turn {
            prompt: id,
            ..Turn::default()
        });
        out.push(record(
            sid,
            Event::Prompted {
                at_ms,
                text: Cow::Owned(text),
            },
        ));
    }

    /// The open turn, opened at `at_ms` without a prompt if there is none: a call seen
    /// without its prompt (a sub-agent's, or a turn the plugin joined late) still has a turn.
    fn turn(&mut self, sid: &str, at_ms: u64, out: &mut Vec<Record<'static>>) -> &mut Turn {
        self.open_session(sid, at_ms, None, None, out);
        if self.at_rest(sid) {
            self.begin(sid, at_ms, String::new(), String::new(), out);
        }
        let s = self.sessions.get_mut(sid).expect("opened above");
        s.turn.as_mut().expect("begun above")
    }

    fn on_message(&mut self, sid: &str, seen: u64, info: &Info, out: &mut Vec<Record<'static>>) {
        let Some(id) = info.id.clone() else { return };
        let completed = info.time.completed;
        let open = self.sessions.get(sid).and_then(|s| s.turn.as_ref());
        // An update of a message this turn does not know, once it is over, is an older
        // turn's: opencode updates a message again after it has finished.
        let known = open.is_some_and(|t| t.messages.contains(&id) && !t.ended.contains(&id));
        let ours = open.is_some_and(|t| info.parent_id.as_deref() == Some(t.prompt.as_str()));
        if completed.is_some() && !known && !ours {
            return;
        }
        if open.is_some_and(|t| t.ended.contains(&id)) {
            return;
        }
        let created = info.time.created.unwrap_or(seen);
        let turn = self.turn(sid, created, out);
        turn.messages.insert(id.clone());
        let start = turn.models.entry(id.clone()).or_insert_with(|| ModelStart {
            at_ms: created,
            model: String::new(),
            provider: String::new(),
            first_chunk_ms: None,
        });
        if let Some(m) = &info.model_id {
            start.model.clone_from(m);
        }
        if let Some(p) = &info.provider_id {
            start.provider = provider(p).to_string();
        }
        let Some(done) = completed else { return };
        let start = turn.models.remove(&id).expect("inserted above");
        turn.ended.insert(id.clone());
        let t = info.tokens.unwrap_or_default();
        let reasoning = t.reasoning.unwrap_or(0);
        let error = info.error.as_ref().map(|e| Json(Cow::Owned(e.clone())));
        out.push(record(
            sid,
            Event::CallSent(CallSent {
                id: Some(Cow::Owned(id.clone())),
                request: Request {
                    model: Cow::Owned(start.model.clone()),
                    provider: Some(Cow::Owned(start.provider)),
                    max_tokens: None,
                    messages: None,
                    system: None,
                },
                response: Some(Response {
                    id: Some(Cow::Owned(id)),
                    model: Some(Cow::Owned(start.model)),
                    stop_reason: info.finish.clone().map(Cow::Owned),
                    content: None,
                }),
                // The protocol's output counts what the API billed as completion, reasoning
                // included; opencode's `output` leaves the reasoning out.
                usage: Usage {
                    input_tokens: t.input.unwrap_or(0),
                    output_tokens: t.output.unwrap_or(0) + reasoning,
                    cache_read_tokens: t.cache.read.unwrap_or(0),
                    cache_write_tokens: t.cache.write.unwrap_or(0),
                    reasoning_tokens: (reasoning > 0).then_some(reasoning),
                },
                started_ms: start.at_ms,
                finished_ms: done.max(start.at_ms),
                first_token_ms: start
                    .first_chunk_ms
                    .map(|f| f.clamp(start.at_ms, done.max(start.at_ms))),
                error,
            }),
        ));
    }

    fn on_first_chunk(&mut self, sid: &str, seen: u64, part: &Part) {
        let Some(turn) = self.sessions.get_mut(sid).and_then(|s| s.turn.as_mut()) else {
            return;
        };
        let Some(m) = part
            .message_id
            .as_ref()
            .and_then(|m| turn.models.get_mut(m))
        else {
            return;
        };
        m.first_chunk_ms.get_or_insert(seen);
    }

    fn on_tool(&mut self, sid: &str, seen: u64, part: &Part, out: &mut Vec<Record<'static>>) {
        let (Some(id), Some(state)) = (part.call_id.clone(), part.state.as_ref()) else {
            return;
        };
        let name = part.tool.clone().unwrap_or_default();
        let open = self.sessions.get(sid).and_then(|s| s.turn.as_ref());
        if open.is_some_and(|t| t.ended.contains(&id)) {
            return;
        }
        let start = state.time.start.unwrap_or(seen);
        match state.status.as_str() {
            "running" => {
                let turn = self.turn(sid, start, out);
                if turn.running.contains_key(&id) {
                    return;
                }
                turn.running.insert(
                    id.clone(),
                    Running {
                        name: name.clone(),
                        input: state.input.clone(),
                        at_ms: start,
                    },
                );
                out.push(record(
                    sid,
                    Event::Calling {
                        at_ms: start,
                        call: Call {
                            id: Cow::Owned(id.clone()),
                            name: Cow::Owned(name),
                            arguments: raw(&state.input),
                            within: None,
                        },
                    },
                ));
                // A running `task` call names the sub-agent's session it started.
                let child = state.metadata.as_ref().and_then(|m| m.session_id.clone());
                if let Some(child) = child {
                    let waiting = self.sessions.get(&child).and_then(|c| c.opening.clone());
                    if let Some((at, cwd)) = waiting {
                        self.opened(&child, at, cwd, Some((sid.to_string(), id)), out);
                    }
                }
            }
            "completed" | "error" => {
                // An end this turn never saw start is another turn's, unless its message is
                // this turn's (the plugin saw no `running`, or joined late).
                let mine = open.is_some_and(|t| {
                    t.running.contains_key(&id)
                        || part
                            .message_id
                            .as_ref()
                            .is_some_and(|m| t.messages.contains(m))
                });
                if !mine {
                    return;
                }
                let turn = self.turn(sid, start, out);
                let pre = turn.running.remove(&id);
                turn.ended.insert(id.clone());
                let started = pre.as_ref().map_or(start, |p| p.at_ms);
                let end = state.time.end.unwrap_or(seen).max(started);
                out.push(ended(sid, id, pre, name, state, started, end));
            }
            // `pending`: the model is still writing the call's input.
            _ => {}
        }
    }

    fn end_turn(
        &mut self,
        sid: &str,
        at_ms: u64,
        reason: &'static str,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(s) = self.sessions.get_mut(sid) else {
            return;
        };
        let Some(turn) = s.turn.take() else { return };
        let child = s.parent.is_some();
        let mut models: Vec<_> = turn.models.into_iter().collect();
        models.sort_by_key(|(_, m)| m.at_ms);
        for (id, m) in models {
            let call = Unanswered {
                id,
                model: m.model,
                provider: "opencode",
                max_tokens: None,
                started_ms: m.at_ms,
                first_token_ms: m.first_chunk_ms,
            };
            let mut r = call.record(sid, at_ms, "the turn ended before the model call did");
            if let Event::CallSent(c) = &mut r.event {
                if !m.provider.is_empty() {
                    c.request.provider = Some(Cow::Owned(m.provider));
                }
            }
            out.push(r);
        }
        let mut running: Vec<_> = turn.running.into_iter().collect();
        running.sort_by_key(|(_, r)| r.at_ms);
        for (id, r) in running {
            let state = ToolState {
                status: "error".into(),
                error: Some("the turn ended before the call did".into()),
                ..ToolState::default()
            };
            let (name, at) = (r.name.clone(), r.at_ms);
            out.push(ended(sid, id, Some(r), name, &state, at, at_ms.max(at)));
        }
        out.push(record(
            sid,
            Event::TurnEnded {
                at_ms,
                reason: Some(Cow::Borrowed(reason)),
            },
        ));
        // A sub-agent's session has done its one task.
        if child {
            self.abandon(sid, at_ms, out);
        }
    }

    /// Gives up on a session that will send nothing more (opencode is gone): its open turn
    /// is exported, marked unfinished, and the session is forgotten. A later `run --session`
    /// opens it again.
    pub fn abandon(&mut self, id: &str, at_ms: u64, out: &mut Vec<Record<'static>>) {
        // Its sub-agents (and theirs) first: they run inside its calls. Each once, whatever
        // loops the parent ids make.
        let mut family = vec![id.to_string()];
        let mut i = 0;
        while i < family.len() {
            let children: Vec<String> = self
                .sessions
                .iter()
                .filter(|(c, s)| {
                    s.parent.as_deref() == Some(family[i].as_str()) && !family.contains(c)
                })
                .map(|(c, _)| c.clone())
                .collect();
            family.extend(children);
            i += 1;
        }
        for child in family.iter().skip(1).rev() {
            if self.sessions.remove(child).is_some_and(|s| s.started) {
                out.push(record(child, Event::Closed { at_ms }));
            }
        }
        // A sub-agent whose call never ran was never opened: nothing to close.
        if self.sessions.remove(id).is_some_and(|s| s.started) {
            out.push(record(id, Event::Closed { at_ms }));
        }
    }
}

/// A tool call's end: refused when opencode's permissions (or the user) said no, failed on
/// any other error.
fn ended(
    sid: &str,
    id: String,
    pre: Option<Running>,
    name: String,
    state: &ToolState,
    started_ms: u64,
    finished_ms: u64,
) -> Record<'static> {
    let (name, input) = match pre {
        Some(p) => (p.name, p.input.or_else(|| state.input.clone())),
        None => (name, state.input.clone()),
    };
    let error = state.error.as_deref().filter(|_| state.status == "error");
    let refused = error.is_some_and(|e| REFUSALS.iter().any(|r| e.starts_with(r)));
    let output = match error {
        Some(e) => Json::of(e).ok(),
        None => raw(&state.output),
    };
    record(
        sid,
        Event::Called(Called {
            call: Call {
                id: Cow::Owned(id),
                name: Cow::Owned(name),
                arguments: raw(&input),
                within: None,
            },
            output,
            started_ms,
            finished_ms,
            refused,
            failed: error.is_some() && !refused,
        }),
    )
}

/// `gen_ai.provider.name` for an opencode provider id: the GenAI conventions' name where
/// there is one, else opencode's own id (a provider of the user's own keeps its name).
fn provider(id: &str) -> &str {
    match id {
        "anthropic" => "anthropic",
        "openai" => "openai",
        "google" => "gcp.gemini",
        "google-vertex" | "google-vertex-anthropic" => "gcp.vertex_ai",
        "amazon-bedrock" => "aws.bedrock",
        "azure" => "azure.ai.openai",
        "mistral" => "mistral_ai",
        "groq" => "groq",
        "deepseek" => "deepseek",
        "xai" => "x_ai",
        "perplexity" => "perplexity",
        "cohere" => "cohere",
        other => other,
    }
}

#[cfg(test)]
mod tests;
