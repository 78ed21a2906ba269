//! Cursor, through the real hook binaries and daemon, on payload sequences written from
//! Cursor's hooks documentation (its CLI needs a login, so none was recorded from Cursor
//! itself): the hook as `install cursor` writes it (`--agent cursor`), and as Claude Code's
//! hook that Cursor also runs. The spans are checked at an OTLP receiver.

use std::process::Command;
use std::time::Duration;

use crate::support::hooks::{Setup, StandIn};
use crate::support::*;
use serde_json::{json, Value};

/// A payload as Cursor sends it: what every event carries, and the event's own fields.
fn cursor(conversation: &str, event: &str, extra: Value) -> String {
    let mut v = json!({"conversation_id": conversation, "generation_id": "gen-7f3a",
        "hook_event_name": event, "model": "claude-4.5-sonnet", "cursor_version": "2.4.21",
        "workspace_roots": ["/home/dev/demo"], "user_email": "dev@example.com",
        "transcript_path": null});
    v.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    v.to_string()
}

/// Hooks as `install cursor` writes them: a configuration file and `--agent cursor`. Cursor
/// runs its hooks with its whole environment, whose `OTEL_*` are not for them: the file
/// decides.
fn cursors_own(rx: &Receiver) -> Setup {
    let mut setup = Setup::new(rx);
    let config = setup.hook_dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[otlp]\nendpoint = \"{}\"\nprotocol = \"grpc\"\n\n[bsp]\nschedule_delay = 100\n",
            rx.grpc_url()
        ),
    )
    .unwrap();
    setup.args.extend([
        "--config".into(),
        config.into(),
        "--agent".into(),
        "cursor".into(),
    ]);
    setup
}

fn op<'a>(spans: &'a [FlatSpan], op: &str) -> Vec<&'a FlatSpan> {
    spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some(op))
        .collect()
}

fn tool<'a>(spans: &'a [FlatSpan], name: &str) -> &'a FlatSpan {
    op(spans, "execute_tool")
        .into_iter()
        .find(|s| s.attr("gen_ai.tool.name").as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no {name} call in\n{}", render_trees(spans, &[])))
}

fn ms(s: &FlatSpan) -> u64 {
    (s.span.end_time_unix_nano - s.span.start_time_unix_nano) / 1_000_000
}

/// Two turns of one conversation (tests/fixtures/cursor/two_turns.jsonl, written from Cursor's
/// documentation): a shell command of known length, one a hook denied, a read that failed, a
/// sub-agent under its `Task` call; then a second prompt, and the end. A `sleep_ms` line is
/// time passing between two hooks.
fn two_turns(conv: &str, hook: &dyn Fn(&str)) {
    let path = repo_file("tests/fixtures/cursor/two_turns.jsonl");
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let line = line.replace("CONVERSATION", conv);
        let mut v: Value = serde_json::from_str(&line).unwrap();
        if let Some(ms) = v["sleep_ms"].as_u64() {
            std::thread::sleep(Duration::from_millis(ms));
            continue;
        }
        let event = v["hook_event_name"].as_str().unwrap().to_string();
        v.as_object_mut().unwrap().remove("hook_event_name");
        hook(&cursor(conv, &event, v));
    }
}

/// The trace of [`two_turns`] for conversation `conv`: two turns under `invoke_agent`, the
/// calls with their real times, the refused and failed ones as errors, the sub-agent under
/// its call.
fn assert_two_turns(spans: &[FlatSpan], conv: &str) {
    let spans: Vec<FlatSpan> = spans
        .iter()
        .filter(|s| s.attr("session.id").as_deref() == Some(conv))
        .cloned()
        .collect();
    let tree = render_trees(&spans, &["gen_ai.tool.name", "albedo.tool.refused"]);
    assert_eq!(
        check_invariants(&spans),
        2,
        "two turns, one trace each:\n{tree}"
    );
    let mut roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    roots.sort_by_key(|r| r.span.start_time_unix_nano);
    for r in &roots {
        assert_eq!(
            r.attr("gen_ai.operation.name").as_deref(),
            Some("invoke_agent")
        );
        assert_eq!(r.attr("gen_ai.agent.name").as_deref(), Some("cursor"));
        assert_eq!(
            r.attr("albedo.turn.reason").as_deref(),
            Some("end_turn"),
            "{tree}"
        );
        assert_ne!(r.attr("albedo.unfinished").as_deref(), Some("true"));
    }
    let sleep = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("toolu_1"))
        .expect("the shell call");
    assert!(
        (400..2_000).contains(&ms(sleep)),
        "the command's real length: {} ms",
        ms(sleep)
    );
    assert_eq!(sleep.span.parent_span_id, roots[0].span.span_id);
    let push = spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id").as_deref() == Some("toolu_2"))
        .unwrap();
    assert_eq!(
        push.attr("albedo.tool.refused").as_deref(),
        Some("true"),
        "{tree}"
    );
    let read = tool(&spans, "Read");
    let error = |s: &FlatSpan| s.span.status.as_ref().is_some_and(|st| st.code == 2);
    assert!(error(push) && error(read) && !error(sleep), "{tree}");
    let task = tool(&spans, "Task");
    let sub = spans
        .iter()
        .find(|s| s.span.parent_span_id == task.span.span_id)
        .unwrap_or_else(|| panic!("the sub-agent under its Task call:\n{tree}"));
    assert_eq!(
        sub.attr("gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(sub.attr("gen_ai.agent.name").as_deref(), Some("explore"));
    assert!((100..2_000).contains(&ms(sub)), "{} ms", ms(sub));
    let second: Vec<&FlatSpan> = op(&spans, "execute_tool")
        .into_iter()
        .filter(|s| s.span.trace_id == roots[1].span.trace_id)
        .collect();
    assert_eq!(
        second.len(),
        1,
        "the second turn has its own call only:\n{tree}"
    );
    for s in &spans {
        assert!(
            !s.attrs().values().any(|v| v.contains("dev@example.com")),
            "no e-mail in {}",
            s.span.name
        );
    }
}

#[test]
fn two_turns_from_cursors_own_hooks_make_two_traces_with_their_calls_and_sub_agent() {
    let rx = Receiver::start();
    let setup = cursors_own(&rx);
    let conv = "c0ffee00-cursor-own-0001";
    two_turns(conv, &|p| {
        setup.hook(p);
    });
    setup.wait_idle();
    assert_two_turns(&rx.spans(), conv);
    assert!(
        !setup.daemon_log().contains("skipped"),
        "{}",
        setup.daemon_log()
    );
}

/// Cursor also runs Claude Code's hooks: the same payloads through `install claude-code`'s
/// hook (no `--agent`) make the same Cursor trace.
#[test]
fn the_same_payloads_through_claude_codes_hook_make_the_same_cursor_trace() {
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let conv = "c0ffee00-via-claude-0002";
    let env = [("CURSOR_VERSION".into(), "2.4.21".into())];
    two_turns(conv, &|p| {
        setup.hook_with(p, &env);
    });
    setup.wait_idle();
    assert_two_turns(&rx.spans(), conv);
    assert!(
        !setup.daemon_log().contains("runs Claude Code's hooks"),
        "{}",
        setup.daemon_log()
    );
}

/// `cursor-agent -p` fires no `beforeSubmitPrompt` and no `stop`: the turn opens at its first
/// call and still goes out, ended by `sessionEnd`.
#[test]
fn a_print_run_without_prompt_or_stop_hooks_still_exports_its_turn() {
    let rx = Receiver::start();
    let setup = cursors_own(&rx);
    let conv = "c0ffee00-print-0003";
    let ls = json!({"tool_name": "Shell", "tool_use_id": "t1", "tool_input": {"command": "ls"}});
    setup.hook(&cursor(conv, "sessionStart", json!({"session_id": conv})));
    setup.hook(&cursor(conv, "preToolUse", ls.clone()));
    setup.hook(&cursor(conv, "postToolUse", ls));
    setup.hook(&cursor(
        conv,
        "sessionEnd",
        json!({"session_id": conv, "reason": "completed"}),
    ));
    setup.wait_idle();
    let spans = rx.spans();
    assert_eq!(check_invariants(&spans), 1, "{}", render_trees(&spans, &[]));
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    assert_eq!(root.attr("albedo.turn.reason").as_deref(), Some("end_turn"));
    assert_ne!(root.attr("albedo.unfinished").as_deref(), Some("true"));
    assert_eq!(tool(&spans, "Shell").span.parent_span_id, root.span.span_id);
}

/// A Cursor killed mid-call sends nothing more: the daemon sees its process gone, and the
/// turn goes out unfinished with the call still running, ended when Cursor was last seen.
#[test]
fn a_killed_cursors_turn_goes_out_unfinished_with_its_running_call() {
    let Some(python) = require_tool("python3", which("python3"), "install Python 3") else {
        return;
    };
    let rx = Receiver::start();
    let setup = cursors_own(&rx);
    let mut cmd = Command::new(python);
    // The daemon says at debug level each time it finds the agent alive.
    cmd.envs(setup.env()).env("ALBEDO_OTEL_LOG", "debug");
    let config = setup.hook_dir.join("config.toml");
    let config = config.to_str().unwrap();
    let hook = env!("CARGO_BIN_EXE_albedo-otel-hook");
    let mut agent = StandIn::start(cmd, &[hook, "--config", config, "--agent", "cursor"]);
    let mut run = |payload: &str| agent.run(payload);
    let conv = "c0ffee00-killed-0004";
    run(&cursor(
        conv,
        "beforeSubmitPrompt",
        json!({"prompt": "build it"}),
    ));
    run(&cursor(
        conv,
        "preToolUse",
        json!({"tool_name": "Shell", "tool_use_id": "t1",
        "tool_input": {"command": "cargo build"}}),
    ));
    // Cursor runs on with the command; the daemon sees it alive, then it is killed.
    setup.wait_for_alive_checks(2);
    agent.kill();
    let spans = rx.wait_for_spans(2, Duration::from_secs(30));
    let root = spans
        .iter()
        .find(|s| s.span.parent_span_id.is_empty())
        .unwrap();
    let call = tool(&spans, "Shell");
    assert_eq!(root.attr("albedo.unfinished").as_deref(), Some("true"));
    assert_eq!(call.attr("albedo.unfinished").as_deref(), Some("true"));
    assert!(
        ms(call) > 0,
        "the call ends when Cursor was last seen, not at its start"
    );
    assert_eq!(call.span.end_time_unix_nano, root.span.end_time_unix_nano);
    assert!(
        setup.daemon_log().contains("is gone with a turn open"),
        "{}",
        setup.daemon_log()
    );
}

/// With both `install cursor` and `install claude-code` done, Cursor hands every event to both
/// hooks (its own file first): the Claude Code route leaves to Cursor's own file the events it
/// runs our hook for, and the trace has each call once.
#[test]
fn with_both_routes_installed_each_event_is_recorded_once() {
    let rx = Receiver::start();
    let own = cursors_own(&rx);
    let config = own.hook_dir.join("config.toml");
    let claude = Setup::with_config(&own.hook_dir, &config);
    // Cursor's own file, as `install cursor` writes it, in the HOME both hooks run with.
    let home = own.hook_dir.join("home");
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    let command = format!(
        "{} --config {} --agent cursor",
        env!("CARGO_BIN_EXE_albedo-otel-hook"),
        config.display()
    );
    let hooks: serde_json::Map<String, Value> =
        albedo_otel::sources::command_hooks::cursor::HOOK_EVENTS
            .iter()
            .map(|e| (e.to_string(), json!([{ "command": command }])))
            .collect();
    std::fs::write(
        home.join(".cursor/hooks.json"),
        json!({"version": 1, "hooks": hooks}).to_string(),
    )
    .unwrap();
    let env = [
        ("HOME".into(), home.clone().into_os_string()),
        ("CURSOR_VERSION".into(), "2.4.21".into()),
    ];
    let conv = "c0ffee00-both-0005";
    two_turns(conv, &|p| {
        own.hook_with(p, &env);
        claude.hook_with(p, &env);
    });
    own.wait_idle();
    assert_two_turns(&rx.spans(), conv);
}

/// A sub-agent's own hooks, naming its conversation and its parent's, go in the parent's
/// journal, so they are read after the `subagentStart` that opened it: its calls nest under
/// it, under its `Task` call.
#[test]
fn a_sub_agents_own_hooks_nest_its_calls_under_it() {
    let rx = Receiver::start();
    let setup = cursors_own(&rx);
    let conv = "c0ffee00-sub-0006";
    let task = json!({"tool_name": "Task", "tool_use_id": "toolu_t",
        "tool_input": {"subagent_type": "explore", "prompt": "look"}});
    let own = |event: &str, extra: Value| {
        let mut v: Value = serde_json::from_str(&cursor("sub-77", event, extra)).unwrap();
        v["parent_conversation_id"] = conv.into();
        v.to_string()
    };
    let grep =
        json!({"tool_name": "Grep", "tool_use_id": "toolu_g", "tool_input": {"pattern": "main"}});
    for p in [
        cursor(conv, "beforeSubmitPrompt", json!({"prompt": "find main"})),
        cursor(conv, "preToolUse", task.clone()),
        cursor(
            conv,
            "subagentStart",
            json!({"subagent_id": "sub-77", "subagent_type": "explore",
            "task": "look", "tool_call_id": "toolu_t", "parent_conversation_id": conv}),
        ),
        own("preToolUse", grep.clone()),
        own("postToolUse", grep),
        cursor(
            conv,
            "subagentStop",
            json!({"subagent_id": "sub-77", "subagent_type": "explore",
            "status": "completed", "summary": "src/main.rs"}),
        ),
        cursor(conv, "postToolUse", task),
        cursor(conv, "stop", json!({"status": "completed"})),
        cursor(
            conv,
            "sessionEnd",
            json!({"session_id": conv, "reason": "completed"}),
        ),
    ] {
        setup.hook(&p);
    }
    setup.wait_idle();
    let spans = rx.spans();
    let tree = render_trees(&spans, &[]);
    assert_eq!(check_invariants(&spans), 1, "{tree}");
    let sub = spans
        .iter()
        .find(|s| s.span.parent_span_id == tool(&spans, "Task").span.span_id)
        .unwrap_or_else(|| panic!("the sub-agent under its call:\n{tree}"));
    assert_eq!(
        tool(&spans, "Grep").span.parent_span_id,
        sub.span.span_id,
        "{tree}"
    );
}
