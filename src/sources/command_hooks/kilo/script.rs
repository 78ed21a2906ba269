//! Kilo's events for the conformance suite's steps (test only): opencode's, as the same
//! plugin hands them on, under Kilo's spec.

use serde_json::Value;

use super::opencode::script::Opencode;
use crate::sources::command_hooks::spec::Spec;
use crate::sources::command_hooks::steps::{
    Gives,Model, Promise, Script, Step, Sub};

#[derive(Default)]
pub(crate) struct Kilo(Opencode);

impl Script for Kilo {
    fn spec(&self) -> &'static Spec {
        &super::SPEC
    }

    fn gives(&self) -> Gives {
        Gives {
            turn: "as opencode (its plugin API): a prompt to `session.idle`",
            tool_calls: "the start and end Kilo measured, with call ids; calls its rules refused are refused errors",
            model_calls: "from its events, as opencode",
            sub_agents: "under their `task` call",
            cannot: "as opencode",
        }
    }

    fn step(&mut self, step: Step<'_>, at: u64, log: &mut String) -> Vec<Value> {
        self.0.step(step, at, log)
    }

    fn sub_agent(&mut self, step: Sub<'_>, at: u64, log: &mut String) -> Option<Vec<Value>> {
        self.0.sub_agent(step, at, log)
    }

    fn model(&mut self, step: Model<'_>, at: u64, log: &mut String) -> Option<Vec<Value>> {
        self.0.model(step, at, log)
    }

    fn filler(&mut self, bytes: usize, at: u64, log: &mut String) {
        self.0.filler(bytes, at, log)
    }

    fn cannot(&self, promise: Promise) -> Option<&'static str> {
        matches!(
            promise,
            Promise::BlockedStopStaysOneTurn | Promise::ContinuationAfterExportKept
        )
        .then_some("no plugin can block Kilo's stop: `session.idle` is the turn's end")
    }
}

/// This agent's script, for the conformance suite's list in `command_hooks/mod.rs`.
pub(crate) fn script() -> Box<dyn Script> {
    Box::new(Kilo::default())
}
