//! What every agent's trace must say, for every agent's CLI test: the two-turn session's
//! (one root a turn, every span inside its turn, the one-second shell call and the denied one,
//! the model calls' tokens against what the agent itself recorded and what the scripted API
//! sent), a sub-agent's, a killed agent's, a captured prompt's, and where the key may be.
//! The tests import what runs the agents from here too ([`super::agent_run`]).

use std::path::{Path, PathBuf};

pub use super::agent_run::*;
use super::gemini_api::Sent;
use super::{check_invariants, files_containing, render_trees, FlatSpan};

/// The collector's key is in the configuration file under `home`, and in nothing else there
/// or in the hook's folder.
pub fn key_only_in_config(home: &Path, hook_dir: &Path, key: &str) {
    assert_eq!(
        files_containing(home, key),
        vec![home.join(".config/albedo-otel/config.toml")],
        "the key is only in the configuration file"
    );
    assert!(files_containing(hook_dir, key).is_empty());
}

/// What one agent's trace should say.
pub struct Expect<'a> {
    /// `invoke_agent NAME`.
    pub root: &'a str,
    /// The session id every root carries, when the test knows it.
    pub session: Option<&'a str>,
    /// `execute_tool NAME` of the shell.
    pub tool: &'a str,
    /// The command the user's hook denied.
    pub denied: &'a str,
    pub provider: &'a str,
    pub model: &'a str,
    /// The tool spans carry the agent's own record of each call's start and end, which the
    /// test checks exactly apart (opencode's and Kilo's `check_tools`). The sleep is then as
    /// the agent timed it, from when its stream got to the call, which under load can be
    /// after the call began (Kilo: 972 ms for `sleep 1` in one CI run).
    pub own_tool_times: bool,
}

/// The model calls' `(input, output)` tokens, in the order they started.
pub fn chat_tokens(spans: &[FlatSpan]) -> Vec<(u64, u64)> {
    let mut chats: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
        .collect();
    chats.sort_by_key(|s| s.span.start_time_unix_nano);
    let tokens = |s: &FlatSpan, k: &str| s.attr(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    chats
        .iter()
        .map(|s| {
            (
                tokens(s, "gen_ai.usage.input_tokens"),
                tokens(s, "gen_ai.usage.output_tokens"),
            )
        })
        .collect()
}

/// Checks the trace; `recorded` is what the agent's own log says of its model calls, `sent`
/// what the API answered. `log` (the daemon's) goes with a failure.
pub fn check_two_turns(
    spans: &[FlatSpan],
    e: &Expect<'_>,
    recorded: &[(u64, u64)],
    sent: &[Sent],
    log: &str,
) {
    let tree = render_trees(
        spans,
        &[
            "gen_ai.tool.call.id",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
        ],
    );
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(spans),
        2,
        "one root a turn, every parent present:\n{tree}\n{log}"
    );
    for root in spans.iter().filter(|s| s.span.parent_span_id.is_empty()) {
        assert_eq!(root.span.name, e.root, "{tree}");
        // Message capture is off: no prompt is exported.
        assert_eq!(root.attr("input.value"), None, "{tree}");
        assert!(root.attr("albedo.unfinished").is_none(), "{tree}");
        // The configuration file decides, not the variables the agent's shell had.
        assert_eq!(
            root.resource.get("service.name").map(String::as_str),
            Some("albedo")
        );
        if let Some(session) = e.session {
            assert_eq!(root.attr("session.id").as_deref(), Some(session), "{tree}");
        }
        for s in spans
            .iter()
            .filter(|s| s.span.trace_id == root.span.trace_id)
        {
            assert!(
                s.span.start_time_unix_nano >= root.span.start_time_unix_nano
                    && s.span.end_time_unix_nano <= root.span.end_time_unix_nano,
                "{} is outside its turn:\n{tree}",
                s.span.name
            );
        }
    }
    let tools: Vec<&FlatSpan> = spans.iter().filter(|s| s.span.name == e.tool).collect();
    assert_eq!(tools.len(), 2, "{tree}");
    let slow = tools
        .iter()
        .find(|s| s.attr("albedo.tool.refused").is_none())
        .expect("the sleep call");
    let took = slow.span.end_time_unix_nano - slow.span.start_time_unix_nano;
    let least = match e.own_tool_times {
        true => 500_000_000,
        false => 1_000_000_000,
    };
    assert!(
        took >= least,
        "the call slept 1 s; its span says {took} ns:\n{tree}"
    );
    let denied = tools
        .iter()
        .find(|s| s.attr("albedo.tool.refused").is_some())
        .expect("the denied call");
    assert_eq!(
        denied.span.status.as_ref().map(|s| s.code),
        Some(2),
        "a denied call is an error:\n{tree}"
    );
    assert!(
        denied
            .attr("gen_ai.tool.call.arguments")
            .unwrap_or_default()
            .contains(e.denied),
        "{tree}"
    );

    let traced = chat_tokens(spans);
    assert_eq!(
        traced, recorded,
        "the trace's tokens against the agent's own record:\n{tree}"
    );
    let sent: Vec<(u64, u64)> = sent
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(traced, sent, "and against what the API answered");
    for c in spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
    {
        assert_eq!(
            c.attr("gen_ai.provider.name").as_deref(),
            Some(e.provider),
            "{tree}"
        );
        assert_eq!(
            c.attr("gen_ai.request.model").as_deref(),
            Some(e.model),
            "{tree}"
        );
    }
}

/// `(input, output)` pairs from the JSON lines of `files` that `pick` takes, in file order.
pub fn recorded_pairs(
    files: &[PathBuf],
    pick: impl Fn(&serde_json::Value) -> Option<(u64, u64)>,
) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            if let Some(pair) = serde_json::from_str(line).ok().as_ref().and_then(&pick) {
                out.push(pair);
            }
        }
    }
    out
}

/// What a sub-agent's trace must say: one turn; the sub-agent's turn under the call named
/// `call` (`execute_tool NAME`), inside it when the call `waits` for the sub-agent; its
/// `shell` call (`execute_tool NAME`) under its turn, a second long; and every model call's
/// tokens as the agent recorded them and as the API sent them (as multisets: parent and
/// sub-agent call the model at once). Returns the sub-agent's span.
pub fn check_sub_agent<'a>(
    spans: &'a [FlatSpan],
    call: &str,
    waits: bool,
    shell: &str,
    recorded: Vec<(u64, u64)>,
    sent: &[Sent],
    log: &str,
) -> &'a FlatSpan {
    let tree = render_trees(spans, &["gen_ai.tool.call.id", "gen_ai.usage.input_tokens"]);
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(spans),
        1,
        "one turn, every parent present:\n{tree}\n{log}"
    );
    let call = spans
        .iter()
        .find(|s| s.span.name == call)
        .unwrap_or_else(|| panic!("{call}:\n{tree}\n{log}"));
    let sub = spans
        .iter()
        .find(|s| s.span.name.starts_with("invoke_agent") && !s.span.parent_span_id.is_empty())
        .unwrap_or_else(|| panic!("the sub-agent's turn:\n{tree}\n{log}"));
    assert_eq!(sub.span.parent_span_id, call.span.span_id, "{tree}");
    if waits {
        assert!(
            sub.span.start_time_unix_nano >= call.span.start_time_unix_nano
                && sub.span.end_time_unix_nano <= call.span.end_time_unix_nano,
            "the call spans its sub-agent:\n{tree}"
        );
    }
    let slept = spans
        .iter()
        .find(|s| s.span.name == shell && s.span.parent_span_id == sub.span.span_id)
        .unwrap_or_else(|| panic!("the sub-agent's shell call:\n{tree}"));
    assert!(
        slept.span.end_time_unix_nano - slept.span.start_time_unix_nano >= 1_000_000_000,
        "{tree}"
    );
    assert!(
        spans.iter().any(|s| {
            s.attr("gen_ai.operation.name").as_deref() == Some("chat")
                && s.span.parent_span_id == sub.span.span_id
        }),
        "the sub-agent's model calls are its own:\n{tree}"
    );
    let sorted = |mut v: Vec<(u64, u64)>| {
        v.sort();
        v
    };
    let traced = sorted(chat_tokens(spans));
    assert_eq!(traced, sorted(recorded), "as the agent recorded:\n{tree}");
    let sent = sent
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(traced, sorted(sent), "as the API sent:\n{tree}");
    sub
}

/// With message capture on, each top turn carries its prompt (`input.value`), which began
/// with `head`, with [`PASTED_KEY`] redacted; and the key is nowhere in the trace.
pub fn check_captured_prompt(spans: &[FlatSpan], head: &str) {
    let everything = format!("{spans:?}");
    assert!(
        !everything.contains(PASTED_KEY),
        "the pasted key was exported"
    );
    let roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    assert!(!roots.is_empty());
    for root in roots {
        let prompt = root.attr("input.value").unwrap_or_default();
        assert!(
            prompt.starts_with(head) && prompt.contains("[REDACTED:anthropic-key]"),
            "the prompt, captured and scrubbed: {prompt:?}"
        );
    }
}

/// The trace of a session whose agent was killed during `tool` (`execute_tool NAME`): one
/// turn, exported, marked unfinished, the call in it unfinished too, every parent present.
pub fn check_killed(spans: &[FlatSpan], tool: &str, log: &str) {
    let tree = render_trees(spans, &["albedo.unfinished"]);
    assert_eq!(check_invariants(spans), 1, "{tree}\n{log}");
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    assert_eq!(
        root.attr("albedo.unfinished").as_deref(),
        Some("true"),
        "{tree}"
    );
    let call = spans
        .iter()
        .find(|s| s.span.name == tool)
        .unwrap_or_else(|| panic!("{tool}:\n{tree}\n{log}"));
    assert_eq!(
        call.attr("albedo.unfinished").as_deref(),
        Some("true"),
        "{tree}"
    );
}
