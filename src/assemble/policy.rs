//! The content policy: what text from the agent may leave the machine, and how much of it.
//!
//! Names, ids, timings and token counts are always exported. Tool arguments and outputs are
//! exported by default, cut to a length limit; prompts and model messages only when the user
//! opts in. Every string taken from input goes through one of the functions here, which run the
//! secret scrubber first, so nothing reaches a span unscrubbed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::redact::Scrubber;
use crate::text::{floor_char_boundary, truncate};

/// Names and ids (tool names, models, call ids) are cut to this length.
const MAX_LABEL_LEN: usize = 256;

/// How far past the cut the scrubber still looks, so that a secret straddling the cut is
/// matched whole and not left half-visible.
const SCRUB_MARGIN: usize = 4096;

/// Distinct names kept by [`ContentPolicy::name`] before it starts afresh.
const NAMES_KEPT: usize = 4096;

#[derive(Debug)]
pub struct ContentPolicy {
    /// Export tool arguments and outputs (`input.value`, `output.value`, `gen_ai.tool.call.*`).
    pub capture_tool_content: bool,
    /// Export prompts, stop replies and model messages
    /// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).
    pub capture_messages: bool,
    /// Cut content to this many bytes (`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`).
    pub max_value_len: usize,
    pub scrubber: Arc<Scrubber>,
    /// Tool, model, agent and provider names come back over and over: each is scrubbed once
    /// and then shared, not scrubbed and copied for every span that carries it.
    names: RefCell<HashMap<Box<str>, Arc<str>, foldhash::fast::RandomState>>,
}

impl Clone for ContentPolicy {
    fn clone(&self) -> Self {
        ContentPolicy {
            capture_tool_content: self.capture_tool_content,
            capture_messages: self.capture_messages,
            max_value_len: self.max_value_len,
            scrubber: self.scrubber.clone(),
            names: RefCell::default(),
        }
    }
}

impl Default for ContentPolicy {
    fn default() -> Self {
        ContentPolicy {
            capture_tool_content: true,
            capture_messages: false,
            max_value_len: super::defaults::MAX_VALUE_LEN,
            scrubber: Arc::new(Scrubber::builtin()),
            names: RefCell::default(),
        }
    }
}

impl ContentPolicy {
    /// How much of a conversation each model call keeps for its input messages, where its
    /// agent's transcript has them (Claude Code's): none with capture off; with it on, four
    /// times the attribute length limit (the messages are cut to that, oldest first; the
    /// conventions' form is shorter than Anthropic's), 16 KiB at least.
    pub fn message_budget(&self) -> usize {
        if self.capture_messages {
            self.max_value_len.saturating_mul(4).max(16 << 10)
        } else {
            0
        }
    }

    /// A policy with these settings.
    pub fn new(
        capture_tool_content: bool,
        capture_messages: bool,
        max_value_len: usize,
        scrubber: Arc<Scrubber>,
    ) -> Self {
        ContentPolicy {
            capture_tool_content,
            capture_messages,
            max_value_len,
            scrubber,
            names: RefCell::default(),
        }
    }

    /// A name from a small set (a tool, a model, an agent, a provider): as [`label`](Self::label),
    /// shared.
    pub fn name(&self, text: &str) -> Arc<str> {
        let mut names = self.names.borrow_mut();
        if let Some(n) = names.get(text) {
            return n.clone();
        }
        if names.len() >= NAMES_KEPT {
            names.clear();
        }
        let n: Arc<str> = self.label(text).into();
        names.insert(text.into(), n.clone());
        n
    }

    /// Free text (arguments, outputs, messages): scrubbed, then cut to the value limit.
    pub fn content(&self, text: &str) -> String {
        self.clean(text, self.max_value_len)
    }

    /// A name or an id: scrubbed and cut short.
    pub fn label(&self, text: &str) -> String {
        self.clean(text, MAX_LABEL_LEN.min(self.max_value_len.max(16)))
    }

    fn clean(&self, text: &str, limit: usize) -> String {
        // Scrub only what can survive the cut, plus a margin.
        let window = &text[..floor_char_boundary(text, limit.saturating_add(SCRUB_MARGIN))];
        let scrubbed = self.scrubber.scrub(window);
        truncate(&scrubbed, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_across_the_cut_is_scrubbed_not_halved() {
        let p = ContentPolicy {
            max_value_len: 20,
            ..ContentPolicy::default()
        };
        let out = p.content("xxxxxxxxxx sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(out, "xxxxxxxxxx [REDAC…");
        assert!(!out.contains("sk-ant"));
    }
}
