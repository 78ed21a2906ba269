//! A scripted stand-in for the Anthropic Messages API, for running the real Claude Code CLI
//! offline: streaming (SSE) and plain responses, text and `tool_use` blocks, usage with cache
//! reads. The script: the main agent runs `Bash`, then starts a sub-agent with the `Agent`
//! tool; the sub-agent runs `Bash` and answers; the main agent answers. Any other request
//! (titles, summaries) gets a short text. Never a 4xx or 5xx: the CLI would retry for minutes.

use super::mock_server::MockServer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use serde_json::{json, Value};

pub const SUBAGENT_MARK: &str = "SUBAGENT-TASK";
/// A prompt with this asks for one long `Bash` call (30 s), to kill the CLI during it.
pub const LONG_TOOL_MARK: &str = "LONG-TOOL";

pub struct MockAnthropic {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<Value>>>,
    _server: MockServer,
}

enum Block {
    Text(&'static str),
    Tool {
        id: String,
        name: &'static str,
        input: Value,
    },
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(text_of).collect::<Vec<_>>().join(" "),
        Value::Object(o) => o.values().map(text_of).collect::<Vec<_>>().join(" "),
        _ => String::new(),
    }
}

/// What to answer to a request body.
fn script(req: &Value, n: usize) -> (Block, &'static str) {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let has_tools = req["tools"].as_array().is_some_and(|t| !t.is_empty());
    let all = messages
        .iter()
        .map(|m| text_of(&m["content"]))
        .collect::<Vec<_>>()
        .join(" ");
    let tool_results = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .count();
    if !has_tools {
        return (Block::Text("albedo-otel test"), "end_turn");
    }
    let first_user = messages
        .first()
        .map(|m| text_of(&m["content"]))
        .unwrap_or_default();
    if first_user.contains(SUBAGENT_MARK) {
        return match tool_results {
            0 => (
                Block::Tool {
                    id: format!("toolu_01Mocksub{n:04}"),
                    name: "Bash",
                    input: json!({"command": "echo hello from the subagent", "description": "Print greeting"}),
                },
                "tool_use",
            ),
            _ => (
                Block::Text("The command printed: hello from the subagent"),
                "end_turn",
            ),
        };
    }
    let _ = all;
    if first_user.contains(LONG_TOOL_MARK) {
        return match tool_results {
            0 => (
                Block::Tool {
                    id: format!("toolu_01Mocklong{n:04}"),
                    name: "Bash",
                    input: json!({"command": "timeout 30 tail -f /dev/null", "description": "Wait"}),
                },
                "tool_use",
            ),
            _ => (Block::Text("done waiting"), "end_turn"),
        };
    }
    match tool_results {
        0 => (
            Block::Tool {
                id: format!("toolu_01Mockmain{n:04}"),
                name: "Bash",
                input: json!({"command": "sleep 0.2; echo hello", "description": "Print hello"}),
            },
            "tool_use",
        ),
        1 => (
            Block::Tool {
                id: format!("toolu_01Mockmain{n:04}"),
                name: "Agent",
                input: json!({
                    "description": "Say hello in shell",
                    "prompt": format!("{SUBAGENT_MARK}: run `echo hello from the subagent` and report what it printed."),
                    "subagent_type": "general-purpose"
                }),
            },
            "tool_use",
        ),
        _ => (
            Block::Text("The helper agent said: hello from the subagent"),
            "end_turn",
        ),
    }
}

fn usage(n: usize) -> Value {
    // As the real API sends it: the cache writes, and how they split between the 5-minute and
    // the 1-hour cache (Claude Code records the split as zeros when it is missing, and ccusage
    // counts the split).
    json!({"input_tokens": 10 + n, "output_tokens": 1, "cache_creation_input_tokens": 100,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 0},
        "cache_read_input_tokens": 1000 * n})
}

fn sse(model: &str, id: &str, block: &Block, stop: &str, n: usize) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    event(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage(n)}}),
    );
    match block {
        Block::Text(t) => {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
            );
        }
        Block::Tool { id, name, input } => {
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            );
            event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            );
        }
    }
    event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    );
    event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 25 + n}}),
    );
    event("message_stop", json!({"type": "message_stop"}));
    out
}

fn plain(model: &str, id: &str, block: &Block, stop: &str, n: usize) -> Value {
    let content = match block {
        Block::Text(t) => json!([{"type": "text", "text": t}]),
        Block::Tool { id, name, input } => {
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}])
        }
    };
    let mut u = usage(n);
    u["output_tokens"] = json!(25 + n);
    json!({"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop, "stop_sequence": null, "usage": u})
}

async fn messages(
    axum::extract::State(requests): axum::extract::State<Arc<Mutex<Vec<Value>>>>,
    body: Bytes,
) -> axum::response::Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let n = {
        let mut r = requests.lock().unwrap();
        r.push(req.clone());
        r.len()
    };
    let model = req["model"].as_str().unwrap_or("claude-mock").to_string();
    let (block, stop) = script(&req, n);
    let id = format!("msg_01Mock{n:06}");
    if req["stream"].as_bool().unwrap_or(false) {
        (
            [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            sse(&model, &id, &block, stop, n),
        )
            .into_response()
    } else {
        axum::Json(plain(&model, &id, &block, stop, n)).into_response()
    }
}

async fn count_tokens() -> axum::response::Response {
    axum::Json(json!({"input_tokens": 42})).into_response()
}

async fn other() -> axum::response::Response {
    (StatusCode::OK, axum::Json(json!({}))).into_response()
}

impl MockAnthropic {
    pub fn start() -> MockAnthropic {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/messages", axum::routing::post(messages))
            .route(
                "/v1/messages/count_tokens",
                axum::routing::post(count_tokens),
            )
            .fallback(other)
            .with_state(requests.clone());
        let server = MockServer::start(app);
        MockAnthropic {
            addr: server.addr,
            requests,
            _server: server,
        }
    }
}
