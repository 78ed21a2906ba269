//! A `Stop` a hook blocked once the turn had gone out: Copilot logs the hook's answer, then
//! submits its reason as a prompt, and its log can lag behind that prompt's hook.

use super::*;
use crate::sources::command_hooks::engine::AgentRules;

const REASON: &str = "the tests fail: run them again";

#[test]
fn a_blocked_stops_reason_logged_after_its_prompt_came_still_continues_the_turn() {
    let path = json!({"transcript_path": "/x/events.jsonl"});
    let bash = |id: &str| json!({"toolCallId": id, "toolName": "bash", "arguments": {}});
    let done = |id: &str| json!({"toolCallId": id, "success": true, "result": {"content": ""}});
    let mut logs = Log(line("tool.execution_start", 100, bash("c1"))
        + &line("tool.execution_complete", 300, done("c1")));
    let (mut a, mut out) = (Adapter::new(), Vec::new());
    a.take(hook("UserPromptSubmit", 0, json!({"prompt": "fix it"})), 0, &mut logs, &mut out);
    a.take(hook("Stop", 500, path.clone()), 0, &mut logs, &mut out);
    // The turn goes out; 30 s on, the hook blocks, and the prompt comes before the log says so.
    a.tick(T0 + 3_000, &mut logs, &mut out);
    let on = 30_500;
    a.take(hook("UserPromptSubmit", on, json!({"prompt": REASON})), 0, &mut logs, &mut out);
    assert!(!a.at_rest(SID), "the prompt waits for the log");
    let answer =
        json!({"hookType": "agentStop", "output": {"decision": "block", "reason": REASON}});
    logs.0 += &(line("hook.end", on - 20, answer)
        + &line("tool.execution_start", on + 100, bash("c2"))
        + &line("tool.execution_complete", on + 400, done("c2")));
    a.tick(T0 + on + 500, &mut logs, &mut out);
    a.take(hook("Stop", on + 600, path), 0, &mut logs, &mut out);
    a.tick(T0 + on + 3_000, &mut logs, &mut out);
    let prompts = out
        .iter()
        .filter(|r| matches!(r.event, Event::Prompted { .. }))
        .count();
    assert_eq!(prompts, 1, "the reason is no prompt of a turn: {out:#?}");
    let ended: Vec<u64> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::TurnEnded { at_ms, .. } => Some(*at_ms),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        [T0 + 500, T0 + on + 600],
        "the turn, then its continuation"
    );
    let called: Vec<(&str, u64)> = out
        .iter()
        .filter_map(|r| match &r.event {
            Event::Called(c) => Some((c.call.id.as_ref(), c.started_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(called, [("c1", T0 + 100), ("c2", T0 + on + 100)]);
}
