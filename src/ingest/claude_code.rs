//! Command-hook payloads (Claude Code's, and albedo's `hooks` extension, which speaks the same
//! format) to protocol records.
//!
//! Each hook invocation is a separate process that sees one event, so the pairing that gives a
//! tool span its start and end happens here, in the one place that sees them all:
//! - `UserPromptSubmit` opens the turn; `PreToolUse` starts a call, `PostToolUse` or
//!   `PostToolUseFailure` (paired by `tool_use_id`) ends it;
//! - a call blocked by another hook gets no `PostToolUse`, only a `PostToolBatch`: it is ended
//!   there as refused;
//! - `Stop` reads the transcript for the turn's model calls and ends the turn. The end is held
//!   back for a grace period: if a hook blocked the stop, the turn goes on (the next event is a
//!   tool call or another `Stop` with `stop_hook_active`) and stays one turn;
//! - `SubagentStart` opens a child session nested under the `Agent` call that started it;
//!   calls inside carry `agent_id` and go to that child; `SubagentStop` reads its transcript;
//! - `SessionEnd` closes the session.
//!
//! Reading transcripts is the caller's I/O, behind [`Transcripts`]; everything else is pure.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::protocol::{
    Call, CallSent, Called, Event, Json, ParentRef, Record, Request, Response, SessionInfo,
};
use super::transcript::{ModelCall, TranscriptCursor};

/// The agent name on turns from command hooks.
pub const AGENT: &str = "claude-code";
/// Tools that run a sub-agent.
const AGENT_TOOLS: &[&str] = &["Agent", "Task"];
/// How Claude Code words the prompt that tells the agent a background task finished.
const TASK_NOTIFICATION: &str = "<task-notification>";

/// One hook payload, with every field any event may carry.
#[derive(Debug, Deserialize, Default)]
pub struct Payload {
    pub session_id: String,
    pub hook_event_name: String,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub agent_type: Option<String>,
    #[serde(default)]
    pub agent_transcript_path: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<BatchCall>>,
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct BatchCall {
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Option<Box<RawValue>>,
    pub tool_use_id: String,
    #[serde(default)]
    pub tool_response: Option<Box<RawValue>>,
}

/// Reads what was appended to a transcript since `offset`.
pub trait Transcripts {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8>;
}

/// Transcripts on the local disk.
pub struct Files;

impl Transcripts for Files {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(path) else {
            return Vec::new();
        };
        let mut buf = Vec::new();
        if f.seek(SeekFrom::Start(offset)).is_ok() {
            let _ = f.read_to_end(&mut buf);
        }
        buf
    }
}

#[derive(Debug)]
struct Pending {
    at_ms: u64,
    name: String,
    input: Option<Box<RawValue>>,
}

#[derive(Debug, Default)]
struct Session {
    started: bool,
    turn_open: bool,
    /// Calls announced by `PreToolUse` and not ended yet, by `tool_use_id`.
    pending: HashMap<String, Pending>,
    /// `Agent` calls waiting for their `SubagentStart`, oldest first.
    agent_calls: Vec<String>,
    /// `agent_id` to the child session's id.
    agents: HashMap<String, String>,
    /// A `Stop` whose turn end is held back: when it came.
    stop_at: Option<u64>,
    /// A `Stop` came while sub-agents ran (they run in the background): the turn is not over
    /// before they are, and the agent usually answers again once they report.
    stop_after_agents: bool,
    stops: u32,
    transcript: TranscriptCursor,
}

/// Turns command-hook payloads into protocol records; see the module docs.
#[derive(Debug)]
pub struct Adapter {
    sessions: HashMap<String, Session>,
    grace_ms: u64,
}

fn json_text(text: &str) -> Json<'static> {
    Json::of(text).expect("a string always serializes")
}

fn raw(value: &Option<Box<RawValue>>) -> Option<Json<'static>> {
    value.as_ref().map(|v| Json(Cow::Owned(v.clone())))
}

fn record(session: &str, event: Event<'static>) -> Record<'static> {
    Record {
        session: Cow::Owned(session.to_string()),
        event,
    }
}

impl Adapter {
    /// `grace_ms`: how long a `Stop` waits for a held stop's continuation before the turn ends.
    pub fn new(grace_ms: u64) -> Self {
        Adapter {
            sessions: HashMap::new(),
            grace_ms,
        }
    }

    /// Sessions with a turn open or a stop held back.
    pub fn open_turns(&self) -> usize {
        self.sessions
            .values()
            .filter(|s| s.turn_open || s.stop_at.is_some())
            .count()
    }

    /// Whether session `id` is between turns: nothing of it is in flight in the adapter.
    pub fn at_rest(&self, id: &str) -> bool {
        self.sessions
            .get(id)
            .is_none_or(|s| !s.turn_open && s.stop_at.is_none() && s.agents.is_empty())
    }

    /// Where session `id`'s transcript has been read to (to resume after a restart).
    pub fn transcript_offset(&self, id: &str) -> u64 {
        self.sessions.get(id).map_or(0, |s| s.transcript.offset)
    }

    /// Resumes a session whose transcript was read up to `offset` by an earlier process.
    pub fn resume(&mut self, id: &str, transcript_offset: u64) {
        let s = self.sessions.entry(id.to_string()).or_default();
        s.transcript.offset = transcript_offset;
    }

    fn ensure(&mut self, id: &str, at_ms: u64, cwd: Option<&str>, out: &mut Vec<Record<'static>>) {
        let s = self.sessions.entry(id.to_string()).or_default();
        if !s.started {
            s.started = true;
            out.push(record(
                id,
                Event::Session(SessionInfo {
                    at_ms,
                    agent: Some(Cow::Borrowed(AGENT)),
                    model: None,
                    workspace: cwd.map(|c| Cow::Owned(c.to_string())),
                    parent: None,
                }),
            ));
        }
    }

    /// Ends a held-back turn, at the time of its `Stop`.
    fn end_held(&mut self, id: &str, out: &mut Vec<Record<'static>>) {
        if let Some(s) = self.sessions.get_mut(id) {
            if let Some(at) = s.stop_at.take() {
                s.turn_open = false;
                s.stops = 0;
                out.push(record(
                    id,
                    Event::TurnEnded {
                        at_ms: at,
                        reason: Some(Cow::Borrowed("end_turn")),
                    },
                ));
            }
        }
    }

    /// The session a payload's event belongs to: the child of its `agent_id`, if any.
    fn target(&self, p: &Payload) -> String {
        p.agent_id
            .as_ref()
            .and_then(|a| self.sessions.get(&p.session_id)?.agents.get(a).cloned())
            .unwrap_or_else(|| p.session_id.clone())
    }

    /// Takes one hook payload received at `at_ms`; appends protocol records to `out`.
    pub fn push(
        &mut self,
        at_ms: u64,
        p: &Payload,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let sid = p.session_id.as_str();
        if sid.is_empty() {
            return;
        }
        self.ensure(sid, at_ms, p.cwd.as_deref(), out);
        let target = self.target(p);
        match p.hook_event_name.as_str() {
            "UserPromptSubmit" => {
                // A background sub-agent reporting back comes as a prompt nobody typed; the
                // agent's answer to it belongs to the turn that started the sub-agent.
                let notification = p
                    .prompt
                    .as_deref()
                    .is_some_and(|t| t.trim_start().starts_with(TASK_NOTIFICATION));
                let s = self.sessions.get_mut(sid).expect("ensured");
                if notification && s.turn_open {
                    s.stop_at = None;
                    s.stop_after_agents = false;
                    return;
                }
                self.end_held(sid, out);
                let s = self.sessions.get_mut(sid).expect("ensured");
                s.turn_open = true;
                out.push(record(
                    sid,
                    Event::Prompted {
                        at_ms,
                        text: Cow::Owned(p.prompt.clone().unwrap_or_default()),
                    },
                ));
            }
            "PreToolUse" => {
                let (Some(id), Some(name)) = (&p.tool_use_id, &p.tool_name) else {
                    return;
                };
                if target == sid {
                    // A call after a `Stop`: that stop was held, the turn goes on.
                    let s = self.sessions.get_mut(sid).expect("ensured");
                    s.stop_at = None;
                    s.stop_after_agents = false;
                    s.turn_open = true;
                    if AGENT_TOOLS.contains(&name.as_str()) {
                        s.agent_calls.push(id.clone());
                    }
                }
                let call = Call {
                    id: Cow::Owned(id.clone()),
                    name: Cow::Owned(name.clone()),
                    arguments: raw(&p.tool_input),
                    within: None,
                };
                out.push(record(&target, Event::Calling { at_ms, call }));
                let s = self.sessions.entry(target.clone()).or_default();
                s.pending.insert(
                    id.clone(),
                    Pending {
                        at_ms,
                        name: name.clone(),
                        input: p.tool_input.clone(),
                    },
                );
            }
            "PostToolUse" | "PostToolUseFailure" => {
                let Some(id) = &p.tool_use_id else { return };
                let failed = p.hook_event_name == "PostToolUseFailure";
                let pending = self
                    .sessions
                    .get_mut(&target)
                    .and_then(|s| s.pending.remove(id));
                let (started, name, input) = match pending {
                    Some(pre) => (pre.at_ms, pre.name, pre.input),
                    None => (
                        at_ms.saturating_sub(p.duration_ms.unwrap_or(0)),
                        p.tool_name.clone().unwrap_or_default(),
                        p.tool_input.clone(),
                    ),
                };
                // The tool's own measured duration is truer than hook-to-hook time.
                let finished = p.duration_ms.map_or(at_ms, |d| started + d).max(started);
                let output = if failed {
                    p.error.as_deref().map(json_text)
                } else {
                    raw(&p.tool_response)
                };
                out.push(record(
                    &target,
                    Event::Called(Called {
                        call: Call {
                            id: Cow::Owned(id.clone()),
                            name: Cow::Owned(p.tool_name.clone().unwrap_or(name)),
                            arguments: raw(&p.tool_input).or_else(|| raw(&input)),
                            within: None,
                        },
                        output,
                        started_ms: started,
                        finished_ms: finished,
                        refused: false,
                        failed,
                    }),
                ));
            }
            "PostToolBatch" => {
                // A call still pending here never ran: another hook blocked it.
                for c in p.tool_calls.iter().flatten() {
                    let Some(pre) = self
                        .sessions
                        .get_mut(&target)
                        .and_then(|s| s.pending.remove(&c.tool_use_id))
                    else {
                        continue;
                    };
                    if let Some(s) = self.sessions.get_mut(sid) {
                        s.agent_calls.retain(|a| a != &c.tool_use_id);
                    }
                    out.push(record(
                        &target,
                        Event::Called(Called {
                            call: Call {
                                id: Cow::Owned(c.tool_use_id.clone()),
                                name: Cow::Owned(c.tool_name.clone()),
                                arguments: raw(&c.tool_input).or_else(|| raw(&pre.input)),
                                within: None,
                            },
                            output: raw(&c.tool_response),
                            started_ms: pre.at_ms,
                            finished_ms: at_ms.max(pre.at_ms),
                            refused: true,
                            failed: false,
                        }),
                    ));
                }
            }
            "SubagentStart" => {
                let Some(agent) = &p.agent_id else { return };
                let child = format!("{sid}/agent-{agent}");
                let s = self.sessions.get_mut(sid).expect("ensured");
                let parent_call = if s.agent_calls.is_empty() {
                    None
                } else {
                    Some(s.agent_calls.remove(0))
                };
                s.agents.insert(agent.clone(), child.clone());
                let prompt = parent_call
                    .as_ref()
                    .and_then(|c| s.pending.get(c))
                    .and_then(|pre| pre.input.as_ref())
                    .and_then(|i| serde_json::from_str::<AgentInput>(i.get()).ok())
                    .and_then(|i| i.prompt)
                    .unwrap_or_default();
                out.push(record(
                    &child,
                    Event::Session(SessionInfo {
                        at_ms,
                        agent: Some(Cow::Owned(
                            p.agent_type.clone().unwrap_or_else(|| "subagent".into()),
                        )),
                        model: None,
                        workspace: p.cwd.clone().map(Cow::Owned),
                        parent: parent_call.map(|c| ParentRef {
                            session: Cow::Owned(sid.to_string()),
                            call: Cow::Owned(c),
                        }),
                    }),
                ));
                out.push(record(
                    &child,
                    Event::Prompted {
                        at_ms,
                        text: Cow::Owned(prompt),
                    },
                ));
                let c = self.sessions.entry(child).or_default();
                c.started = true;
                c.turn_open = true;
            }
            "SubagentStop" => {
                let Some(agent) = &p.agent_id else { return };
                let Some(child) = self
                    .sessions
                    .get_mut(sid)
                    .and_then(|s| s.agents.remove(agent))
                else {
                    return;
                };
                if let Some(path) = p.agent_transcript_path.as_deref().filter(|p| !p.is_empty()) {
                    self.read_transcript(&child, path, transcripts, out);
                }
                out.push(record(
                    &child,
                    Event::Stopping {
                        at_ms,
                        reply: Cow::Owned(p.last_assistant_message.clone().unwrap_or_default()),
                        held: 0,
                    },
                ));
                out.push(record(
                    &child,
                    Event::TurnEnded {
                        at_ms,
                        reason: Some(Cow::Borrowed("end_turn")),
                    },
                ));
                out.push(record(&child, Event::Closed { at_ms }));
                self.sessions.remove(&child);
                // The parent stopped while this one ran: now its turn may end (unless it
                // answers again, which puts the end off once more).
                if let Some(s) = self.sessions.get_mut(sid) {
                    if s.agents.is_empty() && s.stop_after_agents {
                        s.stop_after_agents = false;
                        s.stop_at = Some(at_ms);
                    }
                }
            }
            "Stop" => {
                if let Some(path) = p.transcript_path.as_deref().filter(|p| !p.is_empty()) {
                    self.read_transcript(sid, path, transcripts, out);
                }
                let s = self.sessions.get_mut(sid).expect("ensured");
                out.push(record(
                    sid,
                    Event::Stopping {
                        at_ms,
                        reply: Cow::Owned(p.last_assistant_message.clone().unwrap_or_default()),
                        held: s.stops,
                    },
                ));
                s.stops += 1;
                s.turn_open = true;
                if s.agents.is_empty() {
                    s.stop_at = Some(at_ms);
                } else {
                    s.stop_after_agents = true;
                }
            }
            "SessionEnd" => {
                if let Some(path) = p.transcript_path.as_deref().filter(|p| !p.is_empty()) {
                    self.read_transcript(sid, path, transcripts, out);
                }
                self.end_held(sid, out);
                out.push(record(sid, Event::Closed { at_ms }));
                if let Some(s) = self.sessions.remove(sid) {
                    // Sub-agents still open end with their parent.
                    for child in s.agents.values() {
                        out.push(record(child, Event::Closed { at_ms }));
                        self.sessions.remove(child);
                    }
                }
            }
            // SessionStart, InstructionsLoaded, Notification, PreCompact, ...: the session
            // is known now; nothing else to trace.
            _ => {}
        }
    }

    fn read_transcript(
        &mut self,
        session: &str,
        path: &str,
        transcripts: &mut dyn Transcripts,
        out: &mut Vec<Record<'static>>,
    ) {
        let s = self.sessions.entry(session.to_string()).or_default();
        let bytes = transcripts.read_from(path, s.transcript.offset);
        s.transcript.feed(&bytes);
        for call in s.transcript.take_calls() {
            out.push(record(session, Event::CallSent(call_sent(call))));
        }
    }

    /// Ends the turns whose `Stop` is older than the grace period.
    pub fn tick(&mut self, now_ms: u64, out: &mut Vec<Record<'static>>) {
        let due: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.stop_at.is_some_and(|at| now_ms >= at + self.grace_ms))
            .map(|(k, _)| k.clone())
            .collect();
        for id in due {
            self.end_held(&id, out);
        }
    }

    /// Ends every held-back turn now (the exporter is closing).
    pub fn flush(&mut self, out: &mut Vec<Record<'static>>) {
        let ids: Vec<String> = self.sessions.keys().cloned().collect();
        for id in ids {
            self.end_held(&id, out);
        }
    }

    /// Forgets a session that went quiet without a `SessionEnd`.
    pub fn forget(&mut self, id: &str) {
        self.sessions.remove(id);
    }
}

#[derive(Deserialize)]
struct AgentInput {
    prompt: Option<String>,
}

fn call_sent(c: ModelCall) -> CallSent<'static> {
    CallSent {
        id: Some(Cow::Owned(c.id.clone())),
        request: Request {
            model: Cow::Owned(c.model.clone()),
            provider: Some(Cow::Borrowed("anthropic")),
            max_tokens: c.max_tokens,
            messages: None,
        },
        response: Some(Response {
            id: Some(Cow::Owned(c.id)),
            model: Some(Cow::Owned(c.model)),
            stop_reason: c.stop_reason.map(Cow::Owned),
            content: Json::parse(&c.content).ok(),
        }),
        usage: c.usage,
        started_ms: c.started_ms,
        finished_ms: c.finished_ms.max(c.started_ms),
        first_token_ms: None,
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::semconv::*;
    use crate::assemble::span::{Status, Value};
    use crate::assemble::{check_tree, AssembleConfig, Assembler, Output, Span};

    /// Fixture transcripts, by the file name the recorded payloads point at.
    struct Fixture(&'static str);

    impl Transcripts for Fixture {
        fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
            let file = if path.contains("/subagents/") {
                format!("{}/transcripts/subagent-agent.jsonl", self.0)
            } else {
                format!("{}/transcript.jsonl", self.0)
            };
            let all = std::fs::read(format!(
                "{}/tests/fixtures/claude-code/{file}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            all[(offset as usize).min(all.len())..].to_vec()
        }
    }

    #[derive(Deserialize)]
    struct Recorded {
        received_unix_s: f64,
        payload: Box<RawValue>,
    }

    fn replay(name: &'static str) -> Output {
        let text = std::fs::read_to_string(format!(
            "{}/tests/fixtures/claude-code/{name}/hooks.jsonl",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut adapter = Adapter::new(15_000);
        let mut records = Vec::new();
        let mut transcripts = Fixture(name);
        let mut last = 0;
        for line in text.lines() {
            let r: Recorded = serde_json::from_str(line).unwrap();
            let p: Payload = serde_json::from_str(r.payload.get()).unwrap();
            last = (r.received_unix_s * 1000.0).round() as u64;
            adapter.push(last, &p, &mut transcripts, &mut records);
        }
        adapter.tick(last + 15_000, &mut records);
        assert_eq!(adapter.open_turns(), 0);
        let mut asm = Assembler::new(AssembleConfig::default());
        let mut out = Output::default();
        for r in &records {
            asm.push(r, &mut out);
        }
        asm.finish(&mut out);
        assert_eq!(check_tree(&out.spans), Ok(()));
        out
    }

    fn s<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
        span.attr(key).and_then(Value::as_str)
    }

    fn tools(out: &Output) -> Vec<&Span> {
        out.spans
            .iter()
            .filter(|x| s(x, GEN_AI_OPERATION_NAME) == Some(OP_EXECUTE_TOOL))
            .collect()
    }

    #[test]
    fn parallel_calls_a_failure_and_the_model_calls_of_a_turn() {
        let out = replay("multi_tool");
        let roots: Vec<_> = out
            .spans
            .iter()
            .filter(|x| x.parent_span_id.is_none())
            .collect();
        assert_eq!(roots.len(), 1, "one turn");
        let root = roots[0];
        assert_eq!(root.name, "invoke_agent claude-code");
        assert!(
            root.attr(ALBEDO_UNFINISHED).is_none(),
            "the turn ended at its Stop"
        );
        assert_eq!(root.end_ns, 1_795_986_590_345 * 1_000_000, "at the Stop");
        let t = tools(&out);
        let names: Vec<_> = t.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "execute_tool Read",
                "execute_tool Bash",
                "execute_tool Edit",
                "execute_tool Bash"
            ]
        );
        // Read: PreToolUse at .934, 14 ms of its own.
        assert_eq!(
            (t[0].start_ns, t[0].end_ns),
            (1_795_986_589_934 * 1_000_000, 1_795_986_589_948 * 1_000_000)
        );
        // Parallel with Bash, which started a millisecond earlier and took 44 ms.
        assert_eq!(
            (t[1].start_ns, t[1].end_ns),
            (1_795_986_589_933 * 1_000_000, 1_795_986_589_977 * 1_000_000)
        );
        assert!(t.iter().all(|x| x.parent_span_id == Some(root.span_id)));
        assert_eq!(t[3].status, Status::Error("failed: Exit code 3".into()));
        let chats: Vec<_> = out
            .spans
            .iter()
            .filter(|x| s(x, GEN_AI_OPERATION_NAME) == Some(OP_CHAT))
            .collect();
        assert_eq!(chats.len(), 4, "one per message id");
        assert_eq!(
            chats[0].attr(GEN_AI_USAGE_INPUT_TOKENS),
            Some(&Value::Int(4 + 14211))
        );
        assert!(chats.iter().all(|c| c.parent_span_id == Some(root.span_id)));
        assert_eq!(root.attr(ALBEDO_TURN_MODEL_CALLS), Some(&Value::Int(4)));
    }

    #[test]
    fn a_blocked_call_appears_refused() {
        let out = replay("pretool_block");
        let t = tools(&out);
        assert_eq!(t.len(), 2);
        assert_eq!(s(t[0], GEN_AI_TOOL_CALL_ID), Some("toolu_01Mockmain0000"));
        assert_eq!(t[0].attr(ALBEDO_TOOL_REFUSED), Some(&Value::Bool(true)));
        match &t[0].status {
            Status::Error(m) => assert!(
                m.contains("Blocked by policy: rm -rf is not allowed"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(t[1].status, Status::Unset);
    }

    #[test]
    fn a_sub_agent_nests_under_its_agent_call_with_its_own_model_calls() {
        let out = replay("subagent");
        let agent_call = out
            .spans
            .iter()
            .find(|x| x.name == "execute_tool Agent")
            .unwrap();
        let sub = out
            .spans
            .iter()
            .find(|x| x.name == "invoke_agent general-purpose")
            .unwrap();
        assert_eq!(sub.parent_span_id, Some(agent_call.span_id));
        assert_eq!(sub.trace_id, agent_call.trace_id);
        let inner = out
            .spans
            .iter()
            .find(|x| s(x, GEN_AI_TOOL_CALL_ID) == Some("toolu_01Mocksub0001"))
            .unwrap();
        assert_eq!(inner.parent_span_id, Some(sub.span_id));
        let sub_chats = out
            .spans
            .iter()
            .filter(|x| {
                s(x, GEN_AI_OPERATION_NAME) == Some(OP_CHAT)
                    && x.parent_span_id == Some(sub.span_id)
            })
            .count();
        assert!(
            sub_chats >= 1,
            "the sub-agent's model calls come from its own transcript"
        );
        assert_eq!(
            out.spans
                .iter()
                .filter(|x| x.parent_span_id.is_none())
                .count(),
            1
        );
    }

    /// An adapter fed payloads of session `s` (without transcripts), keeping what it emits.
    struct Fed {
        adapter: Adapter,
        out: Vec<Record<'static>>,
    }

    impl Fed {
        fn new(grace_ms: u64) -> Self {
            Fed {
                adapter: Adapter::new(grace_ms),
                out: Vec::new(),
            }
        }

        /// Hands over a `hook_event_name` payload whose other fields are `extra`.
        fn hook(&mut self, at_ms: u64, event: &str, extra: &str) {
            let p: Payload = serde_json::from_str(&format!(
                r#"{{"session_id":"s","hook_event_name":"{event}"{extra}}}"#
            ))
            .unwrap();
            self.adapter.push(at_ms, &p, &mut Files, &mut self.out);
        }

        fn tick(&mut self, now_ms: u64) {
            self.adapter.tick(now_ms, &mut self.out);
        }

        fn turn_ended(&self) -> bool {
            self.out
                .iter()
                .any(|r| matches!(r.event, Event::TurnEnded { .. }) && r.session == "s")
        }

        /// When each ended turn ended.
        fn turn_ends(&self) -> Vec<u64> {
            self.out
                .iter()
                .filter(|r| r.session == "s")
                .filter_map(|r| match r.event {
                    Event::TurnEnded { at_ms, .. } => Some(at_ms),
                    _ => None,
                })
                .collect()
        }
    }

    #[test]
    fn a_stop_while_a_background_sub_agent_runs_does_not_end_the_turn() {
        let mut a = Fed::new(1_000);
        a.hook(1_000, "UserPromptSubmit", r#","prompt":"go""#);
        a.hook(
            1_100,
            "PreToolUse",
            r#","tool_name":"Agent","tool_use_id":"ag","tool_input":{"prompt":"x"}"#,
        );
        a.hook(
            1_120,
            "PostToolUse",
            r#","tool_name":"Agent","tool_use_id":"ag","duration_ms":20"#,
        );
        a.hook(
            1_150,
            "SubagentStart",
            r#","agent_id":"k","agent_type":"helper""#,
        );
        a.hook(1_200, "Stop", r#","stop_hook_active":false"#);
        a.tick(9_000);
        assert!(!a.turn_ended(), "the sub-agent still runs");
        a.hook(9_100, "SubagentStop", r#","agent_id":"k""#);
        // The sub-agent's report comes back as a prompt; the agent answers once more.
        a.hook(
            9_200,
            "UserPromptSubmit",
            r#","prompt":"<task-notification>\n<task-id>k</task-id>""#,
        );
        a.hook(9_500, "Stop", r#","stop_hook_active":false"#);
        a.tick(10_500);
        assert_eq!(a.turn_ends(), [9_500], "one turn, ended by the last Stop");
        let prompts = a
            .out
            .iter()
            .filter(|r| matches!(r.event, Event::Prompted { .. }) && r.session == "s")
            .count();
        assert_eq!(prompts, 1, "the notification is no new turn");
    }

    #[test]
    fn a_held_stop_keeps_one_turn_and_a_late_continuation_starts_another() {
        let mut a = Fed::new(1_000);
        a.hook(1_000, "UserPromptSubmit", r#","prompt":"go""#);
        a.hook(2_000, "Stop", r#","stop_hook_active":false"#);
        // A hook held the stop: a tool call comes within the grace period.
        a.hook(
            2_500,
            "PreToolUse",
            r#","tool_name":"Bash","tool_use_id":"t1","tool_input":{}"#,
        );
        a.tick(3_100);
        assert!(!a.turn_ended(), "still one turn");
        a.hook(
            2_600,
            "PostToolUse",
            r#","tool_name":"Bash","tool_use_id":"t1","duration_ms":50"#,
        );
        a.hook(3_000, "Stop", r#","stop_hook_active":true"#);
        a.tick(3_999);
        assert!(!a.turn_ended());
        a.tick(4_000);
        assert_eq!(a.turn_ends(), [3_000], "the turn ends at its last Stop");
        let held: Vec<_> = a
            .out
            .iter()
            .filter_map(|r| match r.event {
                Event::Stopping { held, .. } => Some(held),
                _ => None,
            })
            .collect();
        assert_eq!(held, [0, 1]);
    }
}
