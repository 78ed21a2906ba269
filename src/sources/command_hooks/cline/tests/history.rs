//! `import` of Cline's messages files, as Cline 3.0.65 writes them (docs/agents/cline.md,
//! sections 3 and 4): a session whose `spawn_agent` call ran a sub-agent, read back into the
//! live route's spans.

use serde_json::json;

use crate::assemble::semconv::GEN_AI_CONVERSATION_ID;
use crate::assemble::Span;

const T0: u64 = 1_796_642_260_000;

fn spans(path: &std::path::Path) -> Vec<Span> {
    let bytes = std::fs::read(path).unwrap();
    crate::testing::assembled(&super::super::history::records(path, &bytes, Default::default()))
}

fn answer(id: &str, at: u64, input: u64, content: serde_json::Value) -> serde_json::Value {
    json!({"role": "assistant", "id": id, "ts": T0 + at, "content": content,
        "modelInfo": {"id": "gpt-4.1", "provider": "openai-compatible"},
        "metrics": {"inputTokens": input, "outputTokens": 20, "cacheReadTokens": 100,
            "cacheWriteTokens": 0}})
}

#[test]
fn a_session_and_its_sub_agent_come_back_nested_and_the_sub_agent_s_file_alone_adds_nothing() {
    let dir = std::env::temp_dir().join(format!("albedo-otel-cline-history-{}", std::process::id()));
    let root = "1796642260443_8dq80";
    let (session, agent) = (dir.join(root), "agent_1796642260790_rv0yja");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&session).unwrap();
    let task = "run the command";
    let lead = json!({"version": 1, "agent": "lead", "sessionId": root, "messages": [
        {"role": "user", "id": "u1", "ts": T0, "content": [{"type": "text",
            "text": "<user_input mode=\"act\">look around</user_input>"}]},
        answer("msg_1", 200, 1_017, json!([{"type": "tool_use", "id": "call_1",
            "name": "spawn_agent", "input": {"task": task, "systemPrompt": "…"}}])),
        {"role": "user", "id": "u2", "ts": T0 + 1_500, "content": [{"type": "tool_result",
            "tool_use_id": "call_1", "content": "{}"}]},
        answer("msg_4", 1_520, 4_017, json!([{"type": "text", "text": "done"}])),
    ]});
    let sub = json!({"version": 1, "agent": "subagent", "messages": [
        {"role": "user", "id": "u3", "ts": T0 + 260, "content": [{"type": "text", "text": task}]},
        answer("msg_2", 300, 2_017, json!([{"type": "tool_use", "id": "call_2",
            "name": "run_commands", "input": {"commands": ["ls"]}}])),
        {"role": "user", "id": "u4", "ts": T0 + 1_300, "content": [{"type": "tool_result",
            "tool_use_id": "call_2", "content": []}]},
        answer("msg_3", 1_400, 3_017, json!([{"type": "text", "text": "seen"}])),
    ]});
    let lead_file = session.join(format!("{root}.messages.json"));
    std::fs::write(&lead_file, serde_json::to_vec_pretty(&lead).unwrap()).unwrap();
    let sub_file = session.join(format!("{agent}.messages.json"));
    std::fs::write(&sub_file, serde_json::to_vec_pretty(&sub).unwrap()).unwrap();

    let got = spans(&lead_file);
    let turns: Vec<&Span> = got.iter().filter(|s| s.name.starts_with("invoke_agent")).collect();
    assert_eq!(turns.len(), 2, "the turn and its sub-agent's");
    let spawn = got.iter().find(|s| s.name == "execute_tool spawn_agent").unwrap();
    let child = turns
        .iter()
        .find(|t| t.parent_span_id.is_some())
        .expect("the sub-agent's turn");
    assert_eq!(child.parent_span_id, Some(spawn.span_id), "under its spawn_agent call");
    assert_eq!(
        child.attr(GEN_AI_CONVERSATION_ID).and_then(|v| v.as_str()),
        Some(format!("{root}/agent-{agent}").as_str()),
        "the live route's name for it"
    );
    assert_eq!(got.iter().filter(|s| s.name.starts_with("chat")).count(), 4);
    let shell = got.iter().find(|s| s.name == "execute_tool run_commands").unwrap();
    assert_eq!(
        (shell.start_ns, shell.end_ns),
        ((T0 + 300) * 1_000_000, (T0 + 1_300) * 1_000_000),
        "from the answer that asked for it to its result"
    );
    assert!(
        super::super::history::records(
            &sub_file,
            &std::fs::read(&sub_file).unwrap(),
            Default::default(),
        ).is_empty(),
        "read with its session's file, not again"
    );
    let _ = std::fs::remove_dir_all(dir);
}
