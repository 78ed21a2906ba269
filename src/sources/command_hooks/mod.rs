//! The command-hook source (every agent that runs a command per hook event, and albedo's
//! `hooks` extension), a folder per role: the hook process ([`hook`]), the per-session journal
//! it appends to ([`journal`]), and the daemon that turns journaled payloads into records
//! ([`daemon`]). How one agent's payloads become records lives
//! in a folder of its own ([`claude_code`], [`qwen`], ...), declared by the one list of agents
//! below; [`engine`] keeps the contract for all of them, [`agent`] names whose a payload is,
//! and [`registry`] hands it to that agent's adapter.
//!
//! ```text
//!  agent ──payload on stdin──> albedo-otel hook ──append──> journal ──> albedo-otel daemon ──> pipeline
//!                              (exit 0, no output)          (per session)  (started on demand)
//! ```
//!
//! The hook is on the agent's critical path, so it does the least it can: check the payload
//! is JSON, append it to its session's journal, and start the daemon if none holds the lock.
//! It never talks to a collector, never prints, and always exits 0.
//!
//! [`invoke`] ([`hook`]) is that whole process. It runs as `albedo-otel hook` and as `albedo-otel-hook`,
//! a separate small binary: a process is started for every event, and most of its cost is the
//! kernel loading the executable, which grows with its size. The small binary links only this
//! module and is what `albedo-otel install` puts in the agent's settings when it is there.

pub mod agent;
#[cfg(test)]
mod conformance;
pub mod daemon;
pub mod doctor;
pub mod engine;
pub mod foreign;
pub mod hook;
pub mod journal;
mod problems;
mod profiles;
pub mod registry;
pub mod spec;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod steps;
pub mod untraced;

// Every agent: its name in code, and its folder (declared here, by the list), which holds
// its adapter, its `SPEC` and its conformance script. A new agent is a folder and a line
// here. The first is the agent of a hook without `--agent`: Claude Code, whose payloads
// albedo's `hooks` extension sends too.
agent::agents! {
    ClaudeCode: claude_code,
    Gemini: gemini,
    Codex: codex,
    Copilot: copilot,
    // A plugin, not a command hook: it streams its events to one hook process.
    Opencode: opencode,
    Cursor: cursor,
    // opencode's plugin and adapter, under Kilo's name.
    Kilo: kilo,
    // An extension, not a command hook: it streams its events to one hook process.
    Pi: pi,
    // A script per event in its hooks folder.
    Cline: cline,
    Kimi: kimi,
    Qwen: qwen,
    Droid: droid,
}

pub use hook::append::hand_off;
pub use hook::handoff::{is_session_place, HandOff, Head, HookArgs, HookError};
pub(crate) use hook::handoff::{RawHead, MAX_PAYLOAD};
pub use hook::spawn::{daemon_may_inherit, ensure_daemon};
pub use hook::{hook_dir, invoke};
pub(crate) use problems::{caught, log_problems, panic_message};
