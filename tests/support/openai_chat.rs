//! A scripted stand-in for OpenAI's chat completions (`POST /v1/chat/completions`, streamed),
//! for running the real Copilot CLI offline with a provider of the user's own. The script: a
//! request whose last message is the user's asks for one `bash` call (a force-push when the
//! prompt says so, which the test's own hook denies; else a one-second sleep); a request that
//! carries the tool's result gets a text answer. Each answer's usage is recorded.
//!
//! For opencode: a request without tools (its small model writing a title, which it records
//! nowhere) gets a text answer and is counted apart; a prompt with [`DELEGATE_MARK`] asks for
//! a `task` call that starts a sub-agent, and the sub-agent's prompt ([`SUBTASK_MARK`]) gets a
//! text answer. Copilot's `task` (it takes an `agent_type`) gets a prompt with no mark, so its
//! sub-agent runs the sleep. Cline, whose shell is `run_commands`, gets its command there, and
//! its sub-agents' tool, `spawn_agent`, a task with no mark (its sub-agent runs the sleep).
//!
//! For Factory Droid: its shell is `Execute`, which takes the command's risk as well.
//!
//! For Qwen Code: its shell is `run_shell_command` and its sub-agents' tool is `agent`
//! (asked to wait for its sub-agent, which runs the sleep, as Copilot's does); a prompt with
//! [`CHAT_MARK`] gets a text answer at once (a turn after which Qwen runs its background
//! memory agent).

use super::agent_run::PASTED_KEY;
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
    command_for, Sent, DELEGATE_MARK, DENIED_COMMAND, DENY_MARK, FAILING_COMMAND, FAIL_MARK,
    LINGER_MARK, LONG_COMMAND, SLOW_COMMAND,
};
/// The sub-agent's prompt: it gets a text answer.
pub const SUBTASK_MARK: &str = "SUBTASK";
/// The long command for Qwen Code, which refuses any command that starts with a sleep of two
/// seconds or more (`detectBlockedSleepPattern` in 0.24.4) before any hook sees it.
pub const QWEN_LONG_COMMAND: &str = "echo waiting && sleep 30";
/// A prompt with this gets a text answer, no tool call.
pub const CHAT_MARK: &str = "JUST-CHAT";

pub struct MockChat {
    pub addr: SocketAddr,
    state: State,
    _server: MockServer,
}

#[derive(Clone, Default)]
struct State {
    sent: Arc<Mutex<Vec<Sent>>>,
    untooled: Arc<Mutex<u32>>,
}

async fn completions(
    axum::extract::State(state): axum::extract::State<State>,
    body: Bytes,
) -> axum::response::Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    // Copilot's `task` takes an `agent_type`; opencode's a `subagent_type`.
    let copilot_task = req["tools"].as_array().into_iter().flatten().any(|t| {
        t["function"]["name"] == "task"
            && t["function"]["parameters"]["properties"]["agent_type"].is_object()
    });
    let tools: Vec<String> = req["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    let model = req["model"].as_str().unwrap_or("gpt-4.1").to_string();
    if tools.is_empty() {
        *state.untooled.lock().unwrap() += 1;
        let c = json!({"id": "chatcmpl-title", "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "A title"}, "finish_reason": "stop"}]});
        return (
            [(header::CONTENT_TYPE, "text/event-stream")],
            format!("data: {c}\n\ndata: [DONE]\n\n"),
        )
            .into_response();
    }
    let sent = &state.sent;
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
    let mut out = String::new();
    let after_tool = messages.last().is_some_and(|m| m["role"] == "tool");
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let call = |name: &str, args: Value| {
        let mut out = chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": format!("call_{n}"), "type": "function",
            "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        );
        out += &chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": args.to_string()}}]}),
            Value::Null,
        );
        out + &chunk(json!({}), json!("tool_calls"))
    };
    // Qwen Code's shell, Factory Droid's; every other agent's is `bash`.
    let shell = if tools.iter().any(|t| t == "run_shell_command") {
        "run_shell_command"
    } else if tools.iter().any(|t| t == "Execute") {
        "Execute"
    } else {
        "bash"
    };
    if after_tool || user.contains(SUBTASK_MARK) || user.contains(CHAT_MARK) {
        out += &chunk(
            json!({"role": "assistant", "content": format!("The command ran ({n}).")}),
            Value::Null,
        );
        out += &chunk(json!({}), json!("stop"));
    } else if user.contains(DELEGATE_MARK) && tools.iter().any(|t| t == "task") {
        let args = if copilot_task {
            // Copilot's sub-agent runs the sleep, as any prompt without a mark does.
            json!({"description": "run the command", "prompt": "run the command", "name": "helper",
                   "agent_type": "general-purpose", "mode": "sync"})
        } else {
            json!({"description": "look around", "prompt": format!("{SUBTASK_MARK}: say what you see"),
                   "subagent_type": "general"})
        };
        out += &call("task", args);
    } else if user.contains(DELEGATE_MARK) && tools.iter().any(|t| t == "spawn_agent") {
        // Cline's sub-agent (`task` and `systemPrompt`, both required): its task has no mark,
        // so it runs the sleep; it carries a key the user pasted, which a trace must not.
        let task = format!("run the command, my key is {PASTED_KEY}");
        let args = json!({"task": task, "systemPrompt": "You are a helper."});
        out += &call("spawn_agent", args);
    } else if tools.iter().any(|t| t == "run_commands") {
        // Cline's shell: a list of commands.
        out += &call("run_commands", json!({"commands": [command_for(&user)]}));
    } else if user.contains(DELEGATE_MARK) && tools.iter().any(|t| t == "agent") {
        // Qwen's sub-agent runs the sleep; the call waits for it.
        let args = json!({"description": "run the command", "prompt": "run the command",
                          "subagent_type": "general-purpose", "run_in_background": false});
        out += &call("agent", args);
    } else {
        let command = match command_for(&user) {
            // Qwen refuses a command that starts with a long sleep before any hook sees it.
            LONG_COMMAND if shell == "run_shell_command" => QWEN_LONG_COMMAND,
            command => command,
        };
        let args = if shell == "Execute" {
            // Droid asks the model how risky the command is.
            json!({"command": command, "riskLevel": "low", "riskLevelReason": "the test's command"})
        } else {
            json!({"command": command, "description": "the test's command", "mode": "sync"})
        };
        out += &call(shell, args);
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
        let state = State::default();
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(completions))
            .with_state(state.clone());
        let server = MockServer::start(app);
        MockChat {
            addr: server.addr,
            state,
            _server: server,
        }
    }

    /// What each request with tools was answered, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.state.sent.lock().unwrap().clone()
    }

    /// How many requests came without tools (opencode's titles).
    pub fn untooled(&self) -> u32 {
        *self.state.untooled.lock().unwrap()
    }
}
