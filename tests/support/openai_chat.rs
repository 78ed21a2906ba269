//! A scripted stand-in for OpenAI's chat completions (`POST /v1/chat/completions`, streamed),
//! for running the real Copilot CLI offline with a provider of the user's own. The script: a
//! request whose last message is the user's asks for one `bash` call (a force-push when the
//! prompt says so, which the test's own hook denies; else a one-second sleep); a request that
//! carries the tool's result gets a text answer. Each answer's usage is recorded.

use super::mock_server::MockServer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{json, Value};

pub use super::gemini_api::{Sent, DENIED_COMMAND, DENY_MARK, SLOW_COMMAND};

pub struct MockChat {
    pub addr: SocketAddr,
    sent: Arc<Mutex<Vec<Sent>>>,
    _server: MockServer,
}

async fn completions(
    axum::extract::State(sent): axum::extract::State<Arc<Mutex<Vec<Sent>>>>,
    body: Bytes,
) -> axum::response::Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let n = {
        let mut s = sent.lock().unwrap();
        let n = s.len() as u64 + 1;
        s.push(Sent {
            prompt_tokens: 1000 * n + 17,
            output_tokens: 20 + n,
        });
        n
    };
    let model = req["model"].as_str().unwrap_or("gpt-4.1").to_string();
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let mut out = String::new();
    let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
    if after_tool {
        out += &chunk(
            json!({"role": "assistant", "content": format!("The command ran ({n}).")}),
            Value::Null,
        );
        out += &chunk(json!({}), json!("stop"));
    } else {
        let user = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        let command = if user.contains(DENY_MARK) {
            DENIED_COMMAND
        } else {
            SLOW_COMMAND
        };
        let args = json!({"command": command, "description": "the test's command", "mode": "sync"})
            .to_string();
        out += &chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function",
            "function": {"name": "bash", "arguments": ""}}]}),
            Value::Null,
        );
        out += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}),
            Value::Null,
        );
        out += &chunk(json!({}), json!("tool_calls"));
    }
    let usage = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [],
        "usage": {"prompt_tokens": 1000 * n + 17, "completion_tokens": 20 + n, "total_tokens": 1000 * n + 37 + n,
                  "prompt_tokens_details": {"cached_tokens": 100 * n}}});
    out += &format!("data: {usage}\n\ndata: [DONE]\n\n");
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        out,
    )
        .into_response()
}

impl MockChat {
    pub fn start() -> MockChat {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(completions))
            .with_state(sent.clone());
        let server = MockServer::start(app);
        MockChat {
            addr: server.addr,
            sent,
            _server: server,
        }
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}
