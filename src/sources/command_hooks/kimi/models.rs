//! Kimi's model calls, as an agent's `wire.jsonl` has them: `llm.request` is a call's start
//! (model, provider), `usage.record` its answer (its end, with input not cached, output, cache
//! read and creation), and the `step.end` that follows the step's tool calls says the rest
//! (first-token latency, the answer's id and finish reason). Between its answer and its step's
//! end a call waits in its turn's `answered`, so that however the turn ends it keeps its tokens.

use std::borrow::Cow;

use serde_json::Value;

use super::Turn;
use crate::protocol::{Event, Record, Usage};
use crate::sources::command_hooks::engine::model_call::{Answer, Cache, ModelCall, Reasoning, Tokens};
use crate::sources::command_hooks::engine::records::{record, Unanswered};

/// What a model call whose step ended without its answer says.
const CUT: &str = "no answer: the call was cut short";

/// `llm.request` at `at_ms`: a new call, and the step before is over, ended or not.
pub(super) fn requested(
    turn: &mut Turn,
    session: &str,
    v: &Value,
    at_ms: u64,
    out: &mut Vec<Record<'static>>,
) {
    for call in std::mem::take(&mut turn.answered) {
        out.push(record(session, Event::CallSent(call)));
    }
    turn.unanswered(session, at_ms, CUT, out);
    let text = |x: &Value| x.as_str().map(str::to_string).unwrap_or_default();
    let provider = Cow::Owned(text(&v["provider"]));
    let max_tokens = v["maxTokens"].as_u64();
    turn.start_model(None, text(&v["model"]), provider, max_tokens, at_ms);
}

/// `usage.record` at `at_ms`: the call in flight has its answer (the first record of it
/// counts).
pub(super) fn answered(turn: &mut Turn, usage: &Value, at_ms: u64) {
    let Some(call) = turn.models.pop() else {
        return;
    };
    let call = ModelCall {
        model: call.model,
        provider: Some(call.provider).filter(|p| !p.is_empty()),
        max_tokens: call.max_tokens,
        started_ms: call.started_ms,
        // The answer's end: its step ends after the step's tool calls.
        finished_ms: at_ms,
        usage: usage_of(usage),
        answer: Some(Answer::default()),
        ..ModelCall::default()
    };
    turn.answered.push(call.call_sent());
}

/// `step.end` at `at_ms`: the step's call goes out, with what the step says of it.
pub(super) fn step_ended(
    turn: &mut Turn,
    session: &str,
    e: &Value,
    at_ms: u64,
    out: &mut Vec<Record<'static>>,
) {
    let first = e["llmFirstTokenLatencyMs"].as_u64();
    let id = e["messageId"].as_str().map(|i| Cow::Owned(i.to_string()));
    if let Some(mut call) = turn.answered.pop() {
        call.first_token_ms =
            first.map(|t| call.started_ms.saturating_add(t).min(call.finished_ms));
        call.id.clone_from(&id);
        if let Some(r) = call.response.as_mut() {
            r.id = id;
            r.stop_reason = e["finishReason"]
                .as_str()
                .map(|f| Cow::Owned(f.to_string()));
        }
        out.push(record(session, Event::CallSent(call)));
    } else if let Some(call) = turn.models.pop() {
        let end = at_ms.max(call.started_ms);
        let call = Unanswered {
            id: id.map_or(call.id, Cow::into_owned),
            first_token_ms: first.map(|t| call.started_ms.saturating_add(t).min(end)),
            ..call
        };
        out.push(call.record(session, at_ms, CUT));
    }
}

/// Kimi's usage: `inputOther` is the input neither read from the cache nor written to it, as
/// the protocol counts it.
fn usage_of(u: &Value) -> Usage {
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    Tokens {
        input: n("inputOther"),
        output: n("output"),
        cache_read: n("inputCacheRead"),
        cache_write: n("inputCacheCreation"),
        ..Tokens::default()
    }
    .usage(Cache::Apart, Reasoning::Within)
}
