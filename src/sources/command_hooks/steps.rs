//! The conformance suite's steps, in words every agent's script (a `script.rs` in its folder)
//! turns into that agent's own payloads: a leaf the scripts depend on, so that no agent's
//! folder depends on the suite that drives it. The fuzzer (feature `testing`) drives the same
//! scripts through the same steps; what only the suite asks of them (its promises, the
//! README's table) it leaves unused.
#![cfg_attr(not(test), allow(dead_code))]

use serde_json::Value;

use super::engine::files::Transcripts;
use super::spec::Spec;

/// What the user's agent did, whatever its hooks call it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    /// A prompt: a new turn.
    Prompt(&'a str),
    /// A shell call starts (its id, where the agent has ids).
    ToolStart(&'a str),
    /// That call ends with its result.
    ToolEnd(&'a str),
    /// The agent stops (another hook may block it, and it goes on).
    Stop,
}

/// The promises of this suite, for a script to say which it cannot keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Promise {
    InterruptedTurnKeepsItsCalls,
    KilledTurnKeepsItsCalls,
    BlockedStopStaysOneTurn,
    /// What the agent does after a stop blocked only once its turn went out goes into that
    /// turn's trace.
    ContinuationAfterExportKept,
    RetiredSessionIsForgotten,
    /// Sub-agents started side by side each nest under their own call, which ends at its own end.
    SubagentsSideBySide,
    /// The calls each of those sub-agents makes are its own.
    SubagentCallsStayTheirs,
    /// A new daemon resumes a session reading only what is new, in bounded memory.
    RestartReadsOnlyWhatIsNew,
    /// A turn cut short keeps its own model calls, and the next turn gets only its own.
    InterruptedTurnKeepsItsModelCalls,
    /// A model call in flight when the agent dies is kept, unanswered, until it was last seen.
    KilledTurnKeepsItsModelCall,
}

impl Promise {
    pub(crate) const ALL: [Promise; 10] = [
        Promise::InterruptedTurnKeepsItsCalls,
        Promise::KilledTurnKeepsItsCalls,
        Promise::BlockedStopStaysOneTurn,
        Promise::ContinuationAfterExportKept,
        Promise::RetiredSessionIsForgotten,
        Promise::SubagentsSideBySide,
        Promise::SubagentCallsStayTheirs,
        Promise::RestartReadsOnlyWhatIsNew,
        Promise::InterruptedTurnKeepsItsModelCalls,
        Promise::KilledTurnKeepsItsModelCall,
    ];

    /// The promise in the README's words.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Promise::InterruptedTurnKeepsItsCalls => {
                "an interrupted turn keeps its own calls, and the next turn gets only its own"
            }
            Promise::KilledTurnKeepsItsCalls => {
                "a killed agent's turn keeps its running call, which ends when the agent was last seen"
            }
            Promise::BlockedStopStaysOneTurn => {
                "a stop that another hook blocks keeps its continuation in the same turn"
            }
            Promise::ContinuationAfterExportKept => {
                "what the agent does after a stop blocked only once its turn went out (30 s on) goes into that turn's trace"
            }
            Promise::RetiredSessionIsForgotten => {
                "a session whose agent is gone between turns is forgotten"
            }
            Promise::SubagentsSideBySide => {
                "sub-agents started side by side each nest under their own call, which ends at its own end"
            }
            Promise::SubagentCallsStayTheirs => {
                "the calls of sub-agents started side by side each stay in their own sub-agent"
            }
            Promise::RestartReadsOnlyWhatIsNew => {
                "a daemon restarted mid-session reads only what is new, in memory bounded whatever the log's size"
            }
            Promise::InterruptedTurnKeepsItsModelCalls => {
                "an interrupted turn keeps its own model calls, and the next turn gets only its own"
            }
            Promise::KilledTurnKeepsItsModelCall => {
                "a killed agent's model call in flight is kept, as an error, until the agent was last seen"
            }
        }
    }
}

/// The sub-agent steps: a second set, so that a script written before them still compiles
/// (its [`Script::sub_agent`] gives none, and the suite says so).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sub<'a> {
    /// The parent starts `call`, a call that runs sub-agent `agent` (`agent` also names it).
    Spawn { call: &'a str, agent: &'a str },
    /// Sub-agent `agent`, started by `call`, begins (its agent's own start event).
    Started { call: &'a str, agent: &'a str },
    /// A shell call `id` starts inside sub-agent `agent`.
    ToolStart { agent: &'a str, id: &'a str },
    /// That call ends.
    ToolEnd { agent: &'a str, id: &'a str },
    /// Sub-agent `agent` is done (its agent's own stop event).
    Stopped { agent: &'a str },
    /// The parent's `call` returns the sub-agent's answer.
    Returned { call: &'a str, agent: &'a str },
}

/// The model-call steps: a third set (see [`Sub`] for why apart).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Model<'a> {
    /// Model call `id` is sent.
    Asked(&'a str),
    /// Its answer comes: [`ANSWER_TOKENS`] in and out.
    Answered(&'a str),
}

/// The input and output tokens of every answer in [`Model::Answered`].
pub(crate) const ANSWER_TOKENS: (u64, u64) = (10, 5);

/// What a trace of the agent holds: its row in the README's table of what each agent gives,
/// written by its folder (the suite makes the table).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gives {
    /// From which event to which the turn runs.
    pub turn: &'static str,
    pub tool_calls: &'static str,
    pub model_calls: &'static str,
    pub sub_agents: &'static str,
    /// What the agent hands over nothing of.
    pub cannot: &'static str,
}

/// One agent's payloads for each step.
pub(crate) trait Script {
    /// The agent's spec (from its folder), whose name says which agent it is.
    fn spec(&self) -> &'static Spec;

    /// What a trace of the agent holds.
    fn gives(&self) -> Gives;
    /// The payloads `step` makes at `at_ms`; an agent that logs its calls elsewhere (Copilot)
    /// appends to `log` instead, which its adapter reads.
    fn step(&mut self, step: Step<'_>, at_ms: u64, log: &mut String) -> Vec<Value>;
    /// The payloads sub-agent step `step` makes at `at_ms` (`None`: the script has none yet,
    /// which fails the sub-agent promises until it has them or says it `cannot`).
    fn sub_agent(&mut self, step: Sub<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let _ = (step, at_ms, log);
        None
    }
    /// The payloads model-call step `step` makes at `at_ms` (`None`: the script has none yet,
    /// which fails the model-call promises until it has them or says it `cannot`).
    fn model(&mut self, step: Model<'_>, at_ms: u64, log: &mut String) -> Option<Vec<Value>> {
        let _ = (step, at_ms, log);
        None
    }
    /// Appends to `log` about `bytes` of a running call's output, as the agent writes a long
    /// output there (nothing, for an agent whose adapter reads no log or transcript).
    fn filler(&mut self, bytes: usize, at_ms: u64, log: &mut String) {
        let _ = (bytes, at_ms, log);
    }
    /// A file of the agent's other than `log`, by the path its adapter reads it at (a
    /// sub-agent's own transcript); `None`: the path is `log`'s.
    fn file(&self, path: &str) -> Option<&str> {
        let _ = path;
        None
    }
    /// Why this agent cannot keep `promise`, if it cannot.
    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        let _ = promise;
        None
    }
}

/// The log or transcript an agent's adapter reads: what its script wrote so far, or another
/// file the script keeps by that path (a sub-agent's own, Droid's settings). Each read of the
/// log is recorded (where it started, how many bytes it got).
pub(crate) struct Log<'a> {
    pub text: &'a str,
    pub script: &'a dyn Script,
    pub reads: &'a mut Vec<(u64, usize)>,
}

impl Transcripts for Log<'_> {
    fn read_from(&mut self, path: &str, offset: u64) -> Vec<u8> {
        self.read_at_most(path, offset, usize::MAX)
    }

    fn read_at_most(&mut self, path: &str, offset: u64, max: usize) -> Vec<u8> {
        let (text, log) = match self.script.file(path) {
            Some(other) => (other, false),
            None => (self.text, true),
        };
        let from = (offset as usize).min(text.len());
        let bytes = text.as_bytes()[from..from.saturating_add(max).min(text.len())].to_vec();
        if log {
            self.reads.push((offset, bytes.len()));
        }
        bytes
    }
}

/// The session every script speaks for.
pub(crate) const SESSION: &str = "conformance-session";

/// When the scripts' sessions begin.
pub(crate) const T0: u64 = 1_796_000_000_000;

/// `at_ms` as RFC 3339, as agents that time their payloads write it.
pub(crate) fn iso(at_ms: u64) -> String {
    // humantime writes years up to 9999 only (the fuzzer's times go past them).
    let at_ms = at_ms.min(253_402_300_799_000);
    humantime::format_rfc3339_millis(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(at_ms),
    )
    .to_string()
}
