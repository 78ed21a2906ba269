//! A scripted stand-in for OpenAI's chat completions as Kimi Code 2.1.0 calls them (a
//! provider of `type = "openai"`), for running the real Kimi CLI offline. Kimi's tools are
//! `Bash` and `Agent`, and it adds `<system-reminder>` user messages after the prompt, so the
//! prompt is the last user message that is not one. The script: a prompt asks for one `Bash`
//! call (the force-push the test's hook denies, with [`DENY_MARK`]; the long command, with
//! [`LINGER_MARK`]; else a one-second sleep); [`DELEGATE_MARK`] asks for an `Agent` call whose
//! sub-agent's prompt ([`SUBTASK_MARK`]) runs the sleep too; a request that carries a tool's
//! result gets a text answer. Each answer's usage is recorded.

use super::mock_server::MockServer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{json, Value};

#[allow(unused_imports)]
pub use super::gemini_api::{
    command_for, Sent, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, LINGER_MARK, LONG_COMMAND,
    SLOW_COMMAND,
};
/// The sub-agent's prompt: it runs the sleep.
pub const SUBTASK_MARK: &str = "SUBTASK";

pub struct MockKimi {
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
    let model = req["model"].as_str().unwrap_or("kimi-test").to_string();
    let n = {
        let mut s = sent.lock().unwrap();
        let n = s.len() as u64 + 1;
        s.push(Sent {
            prompt_tokens: 1000 * n + 17,
            output_tokens: 20 + n,
        });
        n
    };
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let text = |m: &Value| {
        m["content"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| m["content"].to_string())
    };
    let user = messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(text)
        .find(|t| !t.trim_start().starts_with("<system-reminder>"))
        .unwrap_or_default();
    let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
    let mut out = String::new();
    if after_tool {
        out += &chunk(
            json!({"role": "assistant", "content": format!("The command ran ({n}).")}),
            Value::Null,
        );
        out += &chunk(json!({}), json!("stop"));
    } else {
        let (name, args) = if user.contains(DELEGATE_MARK) {
            (
                "Agent",
                json!({"description": "run the command", "prompt": format!("{SUBTASK_MARK}: run the command")}),
            )
        } else {
            ("Bash", json!({"command": command_for(&user)}))
        };
        out += &chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{n}"),
                "type": "function", "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        );
        out += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args.to_string()}}]}),
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

impl MockKimi {
    pub fn start() -> MockKimi {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(completions))
            .with_state(sent.clone());
        let server = MockServer::start(app);
        MockKimi {
            addr: server.addr,
            sent,
            _server: server,
        }
    }

    /// What each request was answered, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}
