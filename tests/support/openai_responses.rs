//! A scripted stand-in for OpenAI's Responses API (`POST /v1/responses`, answered as
//! server-sent events), for running the real Codex CLI offline. The script: a request whose
//! last item is the user's asks for one `exec_command` (a force-push when the prompt says so,
//! which the test's own hook denies; else a one-second sleep); a request that carries the
//! command's output gets a text answer. Each answer's usage is recorded for the test.

use super::mock_server::MockServer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{json, Value};

pub use super::gemini_api::{Sent, DENIED_COMMAND, DENY_MARK, SLOW_COMMAND};

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
    let answers_a_call = items
        .last()
        .is_some_and(|i| i["type"] == "function_call_output");
    let id = format!("resp_{n}");
    let mut out = String::new();
    event(
        &mut out,
        "response.created",
        json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}}),
    );
    if answers_a_call {
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
    } else {
        let command = if last_user.contains(DENY_MARK) {
            DENIED_COMMAND
        } else {
            SLOW_COMMAND
        };
        let item = json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"), "name": "exec_command", "arguments": "", "status": "in_progress"});
        event(
            &mut out,
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        );
        let mut done = item.clone();
        done["status"] = json!("completed");
        done["arguments"] = json!(json!({"cmd": command, "yield_time_ms": 10000}).to_string());
        event(
            &mut out,
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
        );
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
