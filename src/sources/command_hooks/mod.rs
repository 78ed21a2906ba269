//! The command-hook source (every agent that runs a command per hook event, and albedo's
//! `hooks` extension): the hook process, the per-session journal it appends to, and the daemon
//! that turns journaled payloads into records. How one agent's payloads become records lives
//! in a folder of its own ([`claude_code`], [`qwen`], ...); [`agent`] lists every agent, and
//! [`registry`] says which payload is whose.
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
//! [`invoke`] (`hook.rs`) is that whole process. It runs as `albedo-otel hook` and as `albedo-otel-hook`,
//! a separate small binary: a process is started for every event, and most of its cost is the
//! kernel loading the executable, which grows with its size. The small binary links only this
//! module and is what `albedo-otel install` puts in the agent's settings when it is there.

pub mod adapter;
pub mod agent;
mod append;
pub mod claude_code;
pub mod cline;
pub mod codex;
#[cfg(test)]
mod conformance;
pub mod copilot;
pub mod cursor;
pub mod daemon;
pub mod doctor;
pub mod engine;
pub mod files;
pub mod foreign;
pub mod gemini;
mod handoff;
mod held;
mod hook;
pub mod journal;
pub mod kilo;
pub mod kimi;
pub mod opencode;
pub mod oversized;
pub mod pi;
mod problems;
mod profiles;
pub mod qwen;
mod records;
pub mod registry;
pub mod session_key;
mod spawn;
pub mod spec;
#[cfg(test)]
mod steps;
pub mod stream;
mod turn;

pub use append::hand_off;
pub use handoff::{is_session_place, HandOff, HookArgs, HookError};
pub(crate) use handoff::{Minimal, MAX_PAYLOAD};
pub use hook::{hook_dir, invoke};
pub(crate) use problems::{caught, log_problems, panic_message};
pub use spawn::{daemon_may_inherit, ensure_daemon};
