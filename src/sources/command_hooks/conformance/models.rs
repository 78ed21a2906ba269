//! The promises about model calls, run against every agent's adapter: the calls a turn made
//! stay in it however it ends (H1: Claude Code lost an interrupted turn's model calls, and
//! gave them to the next), and a call in flight when the agent dies is not lost (M4).

use super::{each_agent, Run};
use crate::assemble::semconv::{
    ALBEDO_UNFINISHED, GEN_AI_OPERATION_NAME, GEN_AI_USAGE_INPUT_TOKENS,
    GEN_AI_USAGE_OUTPUT_TOKENS, OP_CHAT,
};
use crate::assemble::span::{Span, Status, Value};
use crate::sources::command_hooks::steps::{Model, Promise, Step, ANSWER_TOKENS, T0};

const MS: u64 = 1_000_000;

/// The turns' roots, oldest first, each with the model-call spans of its trace.
fn turns(spans: &[Span]) -> Vec<(&Span, Vec<&Span>)> {
    let mut roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    roots.sort_by_key(|r| r.start_ns);
    roots
        .into_iter()
        .map(|root| {
            let chats = spans
                .iter()
                .filter(|s| {
                    s.trace_id == root.trace_id
                        && s.attr(GEN_AI_OPERATION_NAME).and_then(Value::as_str) == Some(OP_CHAT)
                })
                .collect();
            (root, chats)
        })
        .collect()
}

fn tokens(span: &Span) -> (Option<&Value>, Option<&Value>) {
    (
        span.attr(GEN_AI_USAGE_INPUT_TOKENS),
        span.attr(GEN_AI_USAGE_OUTPUT_TOKENS),
    )
}

/// A turn cut short (the next prompt came with no stop) keeps the model calls it made, with
/// their tokens; the next turn's are its own, none starting before it.
#[test]
fn an_interrupted_turn_keeps_its_model_calls_and_the_next_gets_only_its_own() {
    each_agent(
        Promise::InterruptedTurnKeepsItsModelCalls,
        |run: &mut Run| {
            run.steps(&[(0, Step::Prompt("first"))]);
            run.models(&[(100, Model::Asked("m1")), (600, Model::Answered("m1"))])?;
            run.steps(&[(2_000, Step::Prompt("second"))]);
            run.models(&[(2_100, Model::Asked("m2")), (2_400, Model::Answered("m2"))])?;
            run.steps(&[(2_500, Step::Stop)]);
            run.tick(60_000);
            let spans = run.spans();
            let turns = turns(&spans);
            let [(first, mine), (second, theirs)] = turns.as_slice() else {
                return Err(format!("{} turns, not 2", turns.len()));
            };
            let [call] = mine.as_slice() else {
                return Err(format!(
                    "the cut turn has {} model calls, not 1",
                    mine.len()
                ));
            };
            let (input, output) = ANSWER_TOKENS;
            let want = (
                Some(&Value::Int(input as i64)),
                Some(&Value::Int(output as i64)),
            );
            if tokens(call) != want {
                return Err(format!("its model call's tokens are {:?}", tokens(call)));
            }
            if call.start_ns < first.start_ns || call.end_ns > second.start_ns {
                return Err("its model call is not inside it".into());
            }
            if theirs.is_empty() || theirs.iter().any(|c| c.start_ns < second.start_ns) {
                return Err(format!(
                    "the next turn has {} model calls, or one that starts before it",
                    theirs.len()
                ));
            }
            Ok(())
        },
    );
}

/// The agent dies while its model answers: the call is in the turn, an error, ending when the
/// agent was last seen, and the turn is unfinished.
#[test]
fn a_killed_agents_model_call_in_flight_is_kept_until_it_was_last_seen() {
    each_agent(Promise::KilledTurnKeepsItsModelCall, |run: &mut Run| {
        run.steps(&[(0, Step::Prompt("build"))]);
        run.models(&[(100, Model::Asked("m1"))])?;
        run.tick(3_000);
        run.abandon(9_000);
        let spans = run.spans();
        let turns = turns(&spans);
        let [(root, chats)] = turns.as_slice() else {
            return Err(format!("{} turns, not 1", turns.len()));
        };
        let [call] = chats.as_slice() else {
            return Err(format!("{} model calls, not 1", chats.len()));
        };
        if root.attr(ALBEDO_UNFINISHED) != Some(&Value::Bool(true)) {
            return Err("the turn is not unfinished".into());
        }
        if !matches!(call.status, Status::Error(_)) {
            return Err("the model call in flight is not an error".into());
        }
        let last_seen = (T0 + 9_000) * MS;
        if call.start_ns != (T0 + 100) * MS || call.end_ns != last_seen {
            return Err(format!(
                "the model call runs +{} ms to +{} ms, not +100 to when the agent was last seen (+9000)",
                (call.start_ns / MS).saturating_sub(T0),
                (call.end_ns / MS).saturating_sub(T0)
            ));
        }
        Ok(())
    });
}
