//! A scripted stand-in for OpenAI's Responses API (`POST /v1/responses`, answered as
//! server-sent events), for running the real Codex CLI offline. The script: a request whose
//! last item is the user's asks for one `exec_command` (a force-push when the prompt says so,
//! which the test's own hook denies; else a one-second sleep); a request that carries the
//! command's output gets a text answer. Each answer's usage is recorded for the test.
//!
//! Sub-agents: a prompt with [`DELEGATE_MARK`] asks for `spawn_agent` with a
//! [`SUBTASK_MARK`] message; the request that carries its answer (the sub-agent's id) asks for
//! `wait_agent` on that id; the requests after follow the script above. The sub-agent's own prompt gets the
//! sleep, as any other.

use super::mock_server::MockServer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{json, Value};

// What each agent's test imports from its own mock (not every test uses each).
#[allow(unused_imports)]
pub use super::gemini_api::{
    command_for, Sent, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND,
    SLOW_COMMAND,
};
pub use super::openai_chat::SUBTASK_MARK;

/// Codex 0.171.0's namespace for its sub-agent tools.
const AGENT_TOOLS: &str = "multi_agent_v1";

#[derive(Default)]
struct State {
    sent: Vec<Sent>,
}

pub struct MockResponses {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _server: MockServer,
}

fn event(out: &mut String, kind: &str, data: Value) {
    out.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
}

/// A function call item, added and done, with call id `call_{n}`.
fn call(out: &mut String, n: u64, namespace: Option<&str>, name: &str, args: &Value) {
    let mut item = json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"), "name": name, "arguments": "", "status": "in_progress"});
    if let Some(ns) = namespace {
        item["namespace"] = json!(ns);
    }
    event(
        out,
        "response.output_item.added",
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    );
    item["status"] = json!("completed");
    item["arguments"] = json!(args.to_string());
    event(
        out,
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    );
}

async fn responses(
    axum::extract::State(state): axum::extract::State<Arc<Mutex<State>>>,
    body: Bytes,
) -> axum::response::Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let items = req["input"].as_array().cloned().unwrap_or_default();
    let n = {
        let mut s = state.lock().unwrap();
        let n = s.sent.len() as u64 + 1;
        s.sent.push(Sent {
            prompt_tokens: 1000 * n + 17,
            output_tokens: 20 + n,
        });
        n
    };
    let last_user = items
        .iter()
        .rev()
        .find(|i| i["type"] == "message" && i["role"] == "user")
        .map(|i| i["content"].to_string())
        .unwrap_or_default();
    let last = items.last().cloned().unwrap_or(Value::Null);
    let answers_a_call = last["type"] == "function_call_output";
    // `spawn_agent`'s answer names the sub-agent: `{"agent_id": …, "nickname": …}`.
    let spawn_answered = answers_a_call
        && items.iter().any(|i| {
            i["type"] == "function_call"
                && i["call_id"] == last["call_id"]
                && i["name"] == "spawn_agent"
        });
    let spawned = spawn_answered
        .then(|| last["output"].as_str())
        .flatten()
        .and_then(|o| serde_json::from_str::<Value>(o).ok())
        .and_then(|o| o["agent_id"].as_str().map(str::to_string));
    let id = format!("resp_{n}");
    let mut out = String::new();
    event(
        &mut out,
        "response.created",
        json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}}),
    );
    if let Some(agent) = spawned {
        let args = json!({"targets": [agent], "timeout_ms": 60000});
        call(&mut out, n, Some(AGENT_TOOLS), "wait_agent", &args);
    } else if answers_a_call {
        let item = json!({"type": "message", "id": format!("msg_{n}"), "role": "assistant", "status": "in_progress", "content": []});
        event(
            &mut out,
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        );
        let text = format!("The command ran ({n}).");
        event(
            &mut out,
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": format!("msg_{n}"), "output_index": 0, "content_index": 0, "delta": text}),
        );
        let mut done = item.clone();
        done["status"] = json!("completed");
        done["content"] = json!([{"type": "output_text", "text": text, "annotations": []}]);
        event(
            &mut out,
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
        );
    } else if last_user.contains(DELEGATE_MARK) && !last_user.contains(SUBTASK_MARK) {
        let args =
            json!({"message": format!("{SUBTASK_MARK}: run the command"), "agent_type": "default"});
        call(&mut out, n, Some(AGENT_TOOLS), "spawn_agent", &args);
    } else {
        let command = command_for(&last_user);
        let args = json!({"cmd": command, "yield_time_ms": 10000});
        call(&mut out, n, None, "exec_command", &args);
    }
    let usage = json!({"input_tokens": 1000 * n + 17, "input_tokens_details": {"cached_tokens": 100 * n},
        "output_tokens": 20 + n, "output_tokens_details": {"reasoning_tokens": n}, "total_tokens": 1000 * n + 37 + n});
    event(
        &mut out,
        "response.completed",
        json!({"type": "response.completed", "response": {"id": id, "status": "completed", "usage": usage}}),
    );
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        out,
    )
        .into_response()
}

impl MockResponses {
    pub fn start() -> MockResponses {
        let state = Arc::new(Mutex::new(State::default()));
        let app = axum::Router::new()
            .route("/v1/responses", axum::routing::post(responses))
            .with_state(state.clone());
        let server = MockServer::start(app);
        MockResponses {
            addr: server.addr,
            state,
            _server: server,
        }
    }

    /// The usage of each answer, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.state.lock().unwrap().sent.clone()
    }
}
