//! Codex CLI's payloads for the conformance suite's steps (test only): Claude Code's, with
//! its model named.

use serde_json::Value;

use crate::sources::command_hooks::claude_code::script::payload;
use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{Script, Step};

#[derive(Default)]
pub(crate) struct Codex;

impl Script for Codex {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn step(&mut self, step: Step<'_>, _: u64, _: &mut String) -> Vec<Value> {
        let mut p = payload(step);
        p["model"] = "gpt-5".into();
        vec![p]
    }
}

/// This agent's script, for the conformance suite's list in `agent.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Codex::default())
}
