//! Kilo Code CLI (`kilo`), a fork of opencode with opencode's plugin API: albedo-otel's
//! opencode plugin and adapter, under Kilo's name (what its events carry:
//! docs/agents/kilo.md).
//!
//! Kilo loads plugins from a `plugin` folder in each of its config folders (`~/.config/kilo`,
//! a project's `.kilo`), hands them opencode's bus events (`session.created`,
//! `message.updated` with each assistant message's tokens, tool parts with their times,
//! `session.idle`) and the `chat.message` hook, so [`opencode`]'s plugin text and its
//! [`Adapter`](opencode::Adapter) serve as they are: the plugin starts
//! `albedo-otel-hook --agent kilo`, and the adapter names its sessions `kilo`. What is Kilo's
//! own is where the plugin goes, and the name.

mod contract;
pub(crate) use contract::adapter;
pub use contract::{HISTORY, SPEC};
#[cfg(any(test, feature = "testing"))]
pub(crate) mod script;

use super::opencode;

/// The agent name on Kilo's turns.
pub const AGENT: &str = "kilo";

#[cfg(test)]
mod tests;
