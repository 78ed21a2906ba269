//! One agent's `wire.jsonl` read into records: Kimi writes every event of an agent there,
//! each with its own time (Unix ms) and, for the agent's own, its `agentId`:
//! - a model call is `llm.request` (its start, model, provider), `usage.record` (its end,
//!   with input not cached, output, cache read and creation) and the `step.end` that follows
//!   the step's tool calls (first-token latency, the answer's id and finish reason);
//! - a tool call is `tool.call` to `tool.result` (with `isError`), by `toolCallId`;
//! - a sub-agent is `subagent.spawned` (its id and the `Agent` call that started it) to
//!   `subagent.completed`; its own events are in `agents/<id>/wire.jsonl` beside this one,
//!   read by a [`Reader`] of its own into a session nested under that call;
//! - `turn.ended` ends the agent's turn, with its reason.
//!
//! The file's lines are read as they are appended, whole lines only, from where the last read
//! stopped (`offset`).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::payload::{is_plain, wire_of};
use crate::protocol::{
    Call, CallSent, Event, Json, ParentRef, Record, Request, Response, SessionInfo, Usage,
};
use crate::sources::command_hooks::files::Transcripts;
use crate::sources::command_hooks::records::{record, Ended, Outcome};
use crate::sources::command_hooks::session_key;

/// How long a sub-agent's end in its parent's file waits for the sub-agent's own file to
/// catch up (see [`Reader::waits_for`]).
const SUB_GRACE_MS: u64 = 2_000;

/// A model call between its `llm.request` and its `step.end`.
#[derive(Debug)]
struct Pending {
    started: u64,
    model: String,
    provider: Option<String>,
    max_tokens: Option<u64>,
    /// `usage.record`: the answer is in, at this time, with these tokens.
    usage: Option<(u64, Usage)>,
}

/// Reads one agent's `wire.jsonl` into the records of `session`.
#[derive(Debug)]
pub(super) struct Reader {
    /// `main`, or a sub-agent's id: only this agent's events are taken.
    agent: String,
    session: String,
    /// The session's folder, where sub-agents' files are.
    dir: String,
    pub path: String,
    /// The first byte not yet taken.
    pub offset: u64,
    /// The file's identity when last read (see [`Transcripts::identity`]).
    pub identity: Option<u64>,
    /// Whether the agent's turn has its prompt: a sub-agent's `turn.prompt` makes its one
    /// turn (the main agent's turns come from the hooks).
    prompted: bool,
    pending: Option<Pending>,
    running: HashMap<String, (String, Option<Json<'static>>, u64)>,
    children: Vec<Reader>,
    /// The agent's last `turn.ended` read: when, and its reason in the protocol's words.
    pub ended: Option<(u64, &'static str)>,
    /// When the agent was last seen at work (a model or tool call begun or ended).
    pub last_work: u64,
}

impl Reader {
    /// The main agent's reader of the session's `wire.jsonl` at `path`, in session folder `dir`.
    pub fn main(session: &str, dir: &str, path: &str, offset: u64) -> Reader {
        Reader {
            agent: "main".into(),
            session: session.into(),
            dir: dir.into(),
            path: path.into(),
            offset,
            identity: None,
            prompted: true,
            pending: None,
            running: HashMap::new(),
            children: Vec::new(),
            ended: None,
            last_work: 0,
        }
    }

    /// Whether anything of the agent is in flight: a model call, a tool call, a sub-agent.
    pub fn busy(&self) -> bool {
        self.pending.is_some() || !self.running.is_empty() || !self.children.is_empty()
    }

    /// Reads what was appended since the last read, taking events from `from` ms on, and
    /// what the open sub-agents appended to theirs; `now` is the daemon's time (see
    /// [`Reader::waits_for`]).
    pub fn read(
        &mut self,
        from: u64,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let bytes = files.read_from(&self.path, self.offset);
        let mut pos = 0;
        while let Some(n) = bytes[pos..].iter().position(|b| *b == b'\n') {
            let line = &bytes[pos..pos + n];
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                if self.waits_for(&v, now, files, out) {
                    break;
                }
                self.take(&v, from, now, files, out);
            }
            pos += n + 1;
            // The main agent's turn ends here: the lines after it are the next turn's, for
            // the next read (a daemon catching up reads several turns' lines at once).
            if self.ended.is_some() && self.agent == "main" {
                break;
            }
        }
        self.offset += pos as u64;
        self.identity = files.identity(&self.path);
        for child in &mut self.children {
            child.read(0, now, files, out);
        }
    }

    /// Whether this line, a sub-agent's end, must wait: Kimi writes each agent's file on its
    /// own, and the parent's `subagent.completed` can be on disk before the sub-agent's last
    /// lines (its last model call, its `turn.ended`). The line is read again at the next read,
    /// until the sub-agent's file has its end, or for [`SUB_GRACE_MS`] after the line's time.
    fn waits_for(
        &mut self,
        v: &Value,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) -> bool {
        if !matches!(
            v["type"].as_str(),
            Some("subagent.completed" | "subagent.failed")
        ) {
            return false;
        }
        let id = v["subagentId"].as_str().unwrap_or_default();
        let Some(child) = self.children.iter_mut().find(|c| c.agent == id) else {
            return false;
        };
        child.read(0, now, files, out);
        let at = v["time"].as_u64().unwrap_or(0);
        child.ended.is_none() && now < at.saturating_add(SUB_GRACE_MS)
    }

    fn take(
        &mut self,
        v: &Value,
        from: u64,
        now: u64,
        files: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let Some(at) = v["time"].as_u64().filter(|at| *at >= from) else {
            return;
        };
        if v["agentId"].as_str().is_some_and(|a| a != self.agent) {
            return;
        }
        let text = |x: &Value| x.as_str().map(str::to_string);
        match v["type"].as_str().unwrap_or_default() {
            "llm.request" => {
                self.flush(at, out);
                self.last_work = at;
                self.pending = Some(Pending {
                    started: at,
                    model: text(&v["model"]).unwrap_or_default(),
                    provider: text(&v["provider"]),
                    max_tokens: v["maxTokens"].as_u64(),
                    usage: None,
                });
            }
            "usage.record" => {
                self.last_work = at;
                if let Some(p) = self.pending.as_mut().filter(|p| p.usage.is_none()) {
                    p.usage = Some((at, usage_of(&v["usage"])));
                }
            }
            "turn.prompt" if !self.prompted => {
                self.prompted = true;
                let prompt = super::Payload {
                    prompt: Some(v["input"].clone()),
                    ..Default::default()
                };
                let text = Cow::Owned(prompt.prompt_text());
                out.push(record(&self.session, Event::Prompted { at_ms: at, text }));
            }
            "turn.ended" => {
                self.flush(at, out);
                self.ended = Some((at, reason_of(v["reason"].as_str())));
            }
            "subagent.spawned" => self.spawned(v, at, out),
            "subagent.completed" | "subagent.failed" => {
                let id = v["subagentId"].as_str().unwrap_or_default();
                if let Some(i) = self.children.iter().position(|c| c.agent == id) {
                    let mut child = self.children.remove(i);
                    child.read(0, now, files, out);
                    let failed = v["type"] == "subagent.failed";
                    child.finish(at, if failed { "error" } else { "end_turn" }, out);
                }
            }
            "context.append_loop_event" => self.loop_event(&v["event"], at, out),
            _ => {}
        }
    }

    fn loop_event(&mut self, e: &Value, at: u64, out: &mut Vec<Record<'static>>) {
        match e["type"].as_str().unwrap_or_default() {
            "tool.call" => {
                let Some(id) = e["toolCallId"].as_str().map(str::to_string) else {
                    return;
                };
                self.last_work = at;
                let name = e["name"].as_str().unwrap_or_default().to_string();
                let args = Json::of(&e["args"]).ok().filter(|_| !e["args"].is_null());
                out.push(record(
                    &self.session,
                    Event::Calling {
                        at_ms: at,
                        call: Call {
                            id: Cow::Owned(id.clone()),
                            name: Cow::Owned(name.clone()),
                            arguments: args.clone(),
                            within: None,
                        },
                    },
                ));
                self.running.insert(id, (name, args, at));
            }
            "tool.result" => {
                let id = e["toolCallId"].as_str().unwrap_or_default();
                let Some((name, arguments, started)) = self.running.remove(id) else {
                    return;
                };
                self.last_work = at;
                let output = &e["result"]["output"];
                // Kimi records a call another hook refused as it records one that failed:
                // an error, with the reason as its output.
                let failed = e["result"]["isError"].as_bool().unwrap_or(false);
                out.push(
                    Ended {
                        session: &self.session,
                        id: id.to_string(),
                        name,
                        arguments,
                        output: Json::of(output).ok().filter(|_| !output.is_null()),
                        started_ms: started,
                    }
                    .record(at, Outcome::of(false, failed)),
                );
            }
            "step.begin" => self.last_work = at,
            "step.end" => {
                let Some(p) = self.pending.take() else {
                    return;
                };
                let first = e["llmFirstTokenLatencyMs"].as_u64();
                let id = e["messageId"].as_str();
                let finish = e["finishReason"].as_str();
                out.push(call_sent(&self.session, p, at, first, id, finish));
            }
            _ => {}
        }
    }

    /// A sub-agent this agent started: a session of its own under the `Agent` call.
    fn spawned(&mut self, v: &Value, at: u64, out: &mut Vec<Record<'static>>) {
        let caller = v["callerAgentId"].as_str().or(v["parentAgentId"].as_str());
        let Some(id) = v["subagentId"].as_str().filter(|id| is_plain(id)) else {
            return;
        };
        let Some(call) = v["parentToolCallId"].as_str() else {
            return;
        };
        if caller.is_some_and(|c| c != self.agent) || self.children.iter().any(|c| c.agent == id) {
            return;
        }
        let session = session_key::sub_agent(&self.session, id);
        // The sub-agent's file can say it began before this line: it opens with its call.
        let at = self.running.get(call).map_or(at, |r| r.2.min(at));
        let name = v["subagentName"].as_str().unwrap_or("subagent").to_string();
        out.push(record(
            &session,
            Event::Session(SessionInfo {
                at_ms: at,
                agent: Some(Cow::Owned(name)),
                model: v["model"].as_str().map(|m| Cow::Owned(m.to_string())),
                workspace: None,
                parent: Some(ParentRef {
                    session: Cow::Owned(self.session.clone()),
                    call: Cow::Owned(call.to_string()),
                }),
            }),
        ));
        self.children.push(Reader {
            agent: id.into(),
            session,
            dir: self.dir.clone(),
            path: wire_of(&self.dir, id),
            offset: 0,
            identity: None,
            prompted: false,
            pending: None,
            running: HashMap::new(),
            children: Vec::new(),
            ended: None,
            last_work: 0,
        });
    }

    /// Sends a model call whose `step.end` never came (the next began, the turn ended): with
    /// its usage if its answer came, else as unanswered, ended at `at`.
    fn flush(&mut self, at: u64, out: &mut Vec<Record<'static>>) {
        if let Some(p) = self.pending.take() {
            out.push(call_sent(&self.session, p, at, None, None, None));
        }
    }

    /// A sub-agent done at `at`: its turn ends (as its `turn.ended` says, else for `why`) and
    /// its session closes, with its own sub-agents.
    fn finish(&mut self, at: u64, why: &'static str, out: &mut Vec<Record<'static>>) {
        self.flush(at, out);
        for mut child in std::mem::take(&mut self.children) {
            child.finish(at, "interrupted", out);
        }
        if self.prompted {
            let (end, reason) = self.ended.unwrap_or((at, why));
            let reason = Some(Cow::Borrowed(reason));
            out.push(record(
                &self.session,
                Event::TurnEnded {
                    at_ms: end.min(at),
                    reason,
                },
            ));
        }
        out.push(record(&self.session, Event::Closed { at_ms: at }));
    }

    /// The agent is gone at `at`: its model call in flight ends then, unanswered, and its
    /// sub-agents close with their turns unfinished (the main agent's turn is its caller's).
    pub fn abandon(&mut self, at: u64, out: &mut Vec<Record<'static>>) {
        self.flush(at, out);
        for mut child in std::mem::take(&mut self.children) {
            child.abandon(at, out);
            out.push(record(&child.session, Event::Closed { at_ms: at }));
        }
    }

    /// The turn ended at `at` (the next prompt came, the session ended): what is in flight
    /// ends with it.
    pub fn turn_over(&mut self, at: u64, out: &mut Vec<Record<'static>>) {
        self.flush(at, out);
        for mut child in std::mem::take(&mut self.children) {
            child.finish(at, "interrupted", out);
        }
        self.running.clear();
        self.ended = None;
    }
}

/// Kimi's usage: `inputOther` is the input not read from the cache, as the protocol counts it.
fn usage_of(u: &Value) -> Usage {
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    Usage {
        input_tokens: n("inputOther"),
        output_tokens: n("output"),
        cache_read_tokens: n("inputCacheRead"),
        cache_write_tokens: n("inputCacheCreation"),
        reasoning_tokens: None,
    }
}

/// A `turn.ended` reason in the protocol's words.
fn reason_of(reason: Option<&str>) -> &'static str {
    match reason {
        Some("completed") => "end_turn",
        Some("cancelled") => "interrupted",
        Some("blocked") => "blocked",
        _ => "error",
    }
}

/// The model call `p`, its step ended at `step_end`: timed from its request to its usage
/// (the answer's end; a step ends after its tool calls), or unanswered without usage.
fn call_sent(
    session: &str,
    p: Pending,
    step_end: u64,
    first_token: Option<u64>,
    id: Option<&str>,
    finish: Option<&str>,
) -> Record<'static> {
    let (finished, usage) = p.usage.unwrap_or((step_end, Usage::default()));
    let answered = p.usage.is_some();
    let id = id.map(|i| Cow::Owned(i.to_string()));
    record(
        session,
        Event::CallSent(CallSent {
            id: id.clone(),
            request: Request {
                model: Cow::Owned(p.model.clone()),
                provider: p.provider.map(Cow::Owned),
                max_tokens: p.max_tokens,
                messages: None,
                system: None,
            },
            response: answered.then(|| Response {
                id,
                model: Some(Cow::Owned(p.model)),
                stop_reason: finish.map(|f| Cow::Owned(f.to_string())),
                content: None,
            }),
            usage,
            started_ms: p.started,
            finished_ms: finished.max(p.started),
            first_token_ms: first_token
                .map(|t| p.started.saturating_add(t).min(finished.max(p.started))),
            error: if answered {
                None
            } else {
                Json::of("no answer: the call was cut short").ok()
            },
        }),
    )
}
