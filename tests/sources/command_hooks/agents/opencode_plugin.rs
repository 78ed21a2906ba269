//! albedo-otel's opencode plugin, the file `install opencode` writes, driven from Node the way
//! opencode calls it (tests/fixtures/opencode_plugin.mjs): whatever becomes of the hook it
//! starts, every handler resolves, none throws, and the plugin stops trying a hook that
//! cannot run. A live hook gets the events that make a trace, one JSON line each, in order,
//! and none of the rest.
//! Needs Node (`node` on PATH); `.ci/run` has it for the agent CLIs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;
use albedo_otel::sources::command_hooks::opencode::plugin;

/// Turns of the fixture's session; each is 19 handler calls.
const TURNS: usize = 3;
const CALLS: usize = 1 + 19 * TURNS;

#[derive(serde::Deserialize)]
struct Run {
    spawns: usize,
    threw: usize,
    calls: Vec<u64>,
}

fn node() -> Option<PathBuf> {
    require_tool(
        "node (Node.js)",
        which("node"),
        "install Node.js 20.16 or later",
    )
}

/// Writes the plugin with `command` in `dir` and drives it.
fn drive(node: &Path, dir: &Path, command: &[String], wait_exit: bool) -> Run {
    let file = dir.join("albedo-otel.mjs");
    std::fs::write(&file, plugin(command)).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode_plugin.mjs");
    let mut cmd = Command::new(node);
    cmd.arg(fixture).arg(&file).arg(TURNS.to_string());
    if wait_exit {
        cmd.arg("--wait-exit");
    }
    let out = cmd.current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "the plugin's driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Run = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    });
    assert_eq!(run.calls.len(), CALLS, "every handler call returned");
    assert_eq!(run.threw, 0, "no handler threw or rejected");
    run
}

#[test]
fn a_missing_hook_is_tried_once_and_opencode_goes_on() {
    let Some(node) = node() else { return };
    let dir = scratch("ocp-missing");
    let missing = dir.join("no-such-albedo-otel-hook").display().to_string();
    let run = drive(
        &node,
        &dir,
        &[missing, "--agent".into(), "opencode".into()],
        false,
    );
    assert_eq!(
        run.spawns, 1,
        "a hook that is not there is not looked for again"
    );
}

#[test]
fn a_hook_that_keeps_dying_is_given_up_on_after_three_starts() {
    let Some(node) = node() else { return };
    let dir = scratch("ocp-dying");
    // `false` exits at once, every time; the driver waits for each exit before the next call.
    let run = drive(&node, &dir, &["false".into()], true);
    assert_eq!(run.spawns, 3, "restarted twice, then left alone");
}

#[test]
fn a_live_hook_gets_the_events_that_make_a_trace_in_order_and_no_others() {
    let Some(node) = node() else { return };
    let dir = scratch("ocp-live");
    let got = dir.join("lines.jsonl");
    let command = [
        "sh".to_string(),
        "-c".into(),
        format!("cat > '{}'", got.display()),
    ];
    let run = drive(&node, &dir, &command, false);
    assert_eq!(run.spawns, 1, "one hook process for the whole session");
    let text = std::fs::read_to_string(&got).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let names: Vec<&str> = lines
        .iter()
        .map(|l| l["hook_event_name"].as_str().unwrap())
        .collect();
    // Per turn: the prompt, the assistant message, its step, the call running and done, the
    // usage, idle. The text deltas, the pending call and the malformed events are left out.
    let mut want = vec!["session.created"];
    for _ in 0..TURNS {
        want.extend([
            "chat.message",
            "message.updated",
            "message.part.updated",
            "message.part.updated",
            "message.part.updated",
            "message.updated",
            "session.idle",
        ]);
    }
    assert_eq!(names, want, "{text}");
    let statuses: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["properties"]["part"]["state"]["status"].as_str())
        .collect();
    assert_eq!(statuses, ["running", "completed"].repeat(TURNS));
    assert!(lines
        .iter()
        .all(|l| l["session_id"] == "ses_bench" && l["at_ms"].is_u64()));
}
