//! Sources: where records come from. Each turns what its host hands over into protocol
//! records (or lines of them) and feeds the pipeline; none of them knows about spans.
//!
//! - [`stream`]: NDJSON lines on stdin or in files (`run`, `replay`, albedo's extension port);
//! - [`host`]: the in-process API for a Rust host, in the shape of albedo's extension;
//! - [`command_hooks`]: one process per hook event (Claude Code, albedo's `hooks` extension),
//!   a journal per session, and the daemon that turns payloads into records. Each agent's
//!   payload format is a folder of its own there (`claude_code/`); a second agent's hooks are
//!   a folder beside it.

pub mod command_hooks;
pub mod host;
pub mod stream;
