//! A scripted stand-in for the Gemini API (`POST /v1beta/models/MODEL:streamGenerateContent`,
//! answered as server-sent events), for running the real Gemini CLI offline. The script: a
//! request whose last turn is the user's asks for one `run_shell_command` (a force-push when the
//! prompt says so, which the test's own hook denies; else a one-second sleep); a request that
//! carries the tool's result gets a text answer in two chunks. Each answer's usage is
//! recorded, for the test to compare with the trace.
//!
//! Sub-agents: a prompt with [`DELEGATE_MARK`] asks for `invoke_agent` (the `generalist`
//! agent, told to run the command); the sub-agent's prompt has no mark, so it runs the sleep,
//! and once it has the result it calls `complete_task`, which a Gemini sub-agent must.

use super::mock_server::MockServer;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{json, Value};

/// A prompt with this asks for the command the test's hook denies.
pub const DENY_MARK: &str = "FORCE-PUSH";
pub const SLOW_COMMAND: &str = "sleep 1; echo hi";
pub const DENIED_COMMAND: &str = "git push --force origin main";
/// A prompt with this asks for a sub-agent.
pub const DELEGATE_MARK: &str = "DELEGATE";
/// A prompt with this asks for a command that runs until the test kills the agent.
pub const LINGER_MARK: &str = "LINGER";
pub const LONG_COMMAND: &str = "sleep 30";
/// A prompt with this asks for a command that fails (exits 3).
pub const FAIL_MARK: &str = "MAKE-IT-FAIL";
pub const FAILING_COMMAND: &str = "exit 3";

/// The shell command the scripted model asks for, for a prompt: the denied one, the long one,
/// the failing one, or the one-second sleep.
pub fn command_for(prompt: &str) -> &'static str {
    if prompt.contains(DENY_MARK) {
        DENIED_COMMAND
    } else if prompt.contains(LINGER_MARK) {
        LONG_COMMAND
    } else if prompt.contains(FAIL_MARK) {
        FAILING_COMMAND
    } else {
        SLOW_COMMAND
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    pub prompt_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Default)]
struct State {
    requests: Vec<Value>,
    sent: Vec<Sent>,
}

pub struct MockGemini {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _server: MockServer,
}

fn last_user_text(req: &Value) -> String {
    let contents = req["contents"].as_array().cloned().unwrap_or_default();
    contents
        .iter()
        .rev()
        .find(|c| c["role"] == "user")
        .and_then(|c| c["parts"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p["text"].as_str().map(String::from))
        .collect::<Vec<_>>()
        .join(" ")
}

fn answers_a_tool(req: &Value) -> bool {
    req["contents"]
        .as_array()
        .and_then(|c| c.last())
        .and_then(|c| c["parts"].as_array())
        .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
}

fn chunk(parts: Value, last: Option<Sent>) -> String {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut body = json!({"modelVersion": "gemini-2.5-flash"});
    if let Some(sent) = last {
        candidate["finishReason"] = json!("STOP");
        body["usageMetadata"] = json!({
            "promptTokenCount": sent.prompt_tokens,
            "candidatesTokenCount": sent.output_tokens,
            "totalTokenCount": sent.prompt_tokens + sent.output_tokens,
        });
    }
    body["candidates"] = json!([candidate]);
    format!("data: {body}\r\n\r\n")
}

async fn generate(
    axum::extract::State(state): axum::extract::State<Arc<Mutex<State>>>,
    body: Bytes,
) -> axum::response::Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (n, sent) = {
        let mut s = state.lock().unwrap();
        s.requests.push(req.clone());
        let n = s.requests.len() as u64;
        let sent = Sent {
            prompt_tokens: 1000 * n + 17,
            output_tokens: 20 + n,
        };
        s.sent.push(sent);
        (n, sent)
    };
    let offers = |name: &str| {
        req["tools"].as_array().into_iter().flatten().any(|t| {
            t["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|f| f["name"] == name)
        })
    };
    let stream = if answers_a_tool(&req) && offers("complete_task") {
        let call = json!({"functionCall": {"name": "complete_task",
            "args": {"result": {"response": "The command printed hi."}}}});
        chunk(json!([call]), Some(sent))
    } else if answers_a_tool(&req) {
        chunk(json!([{"text": "The command "}]), None)
            + &chunk(json!([{"text": format!("ran ({n}).")}]), Some(sent))
    } else if last_user_text(&req).contains(DELEGATE_MARK) && offers("invoke_agent") {
        let call = json!({"functionCall": {"name": "invoke_agent",
            "args": {"agent_name": "generalist", "prompt": "Run the command and say what it printed."}}});
        chunk(json!([call]), Some(sent))
    } else {
        let command = command_for(&last_user_text(&req));
        let call = json!({"functionCall": {"name": "run_shell_command",
            "args": {"command": command, "description": "the test's command"}}});
        chunk(json!([{"text": "I'll run it."}, call]), Some(sent))
    };
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        stream,
    )
        .into_response()
}

impl MockGemini {
    pub fn start() -> MockGemini {
        let state = Arc::new(Mutex::new(State::default()));
        let app = axum::Router::new()
            .route("/v1beta/models/{call}", axum::routing::post(generate))
            .with_state(state.clone());
        let server = MockServer::start(app);
        MockGemini {
            addr: server.addr,
            state,
            _server: server,
        }
    }

    /// The usage of each answer, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.state.lock().unwrap().sent.clone()
    }

    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().unwrap().requests.clone()
    }
}
