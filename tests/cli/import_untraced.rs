//! Gemini's chats share no id with its hooks, so `import` reads of a session the hooks traced
//! part of only the turns they did not: here the hooks traced the session's first turn (a
//! live route's turn in the store, from `run`), and the chat (recorded from the real CLI) holds
//! a second turn after it. With no hook of ours in place any more, the import reads that turn;
//! with one still in place, it leaves the turn to the hooks.

use std::io::Write;
use std::process::Stdio;

use super::{albedo, command};
use crate::support::*;

const SESSION: &str = "e0b5e61e-318b-4d31-9c30-459c79be816c";

/// The session's turns in the store under `home`.
fn turns(home: &std::path::Path) -> u64 {
    let out = albedo(home, &["sessions", "--json"], &[]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|s| s["session"] == SESSION)
        .and_then(|s| s["turns"].as_u64())
        .unwrap_or(0)
}

/// The recorded chat where Gemini keeps it under `home`, and the hooks' trace of its first
/// turn (2026-12-07T17:05:54.8Z to 17:05:57.0Z; the second begins at 17:05:57.95Z) in the
/// store, written by `run`, as the live route writes.
fn traced_first_turn(home: &std::path::Path) {
    let chats = home.join(".gemini/tmp/project/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let recorded = repo_file("src/sources/command_hooks/gemini/recorded/main.jsonl");
    std::fs::copy(
        recorded,
        chats.join("session-2026-12-07T17-05-e0b5e61e.jsonl"),
    )
    .unwrap();
    let (start, end) = (1_796_663_154_800u64, 1_796_663_157_000u64);
    let records = [
        serde_json::json!({"v": 1, "kind": "session", "session": SESSION, "at_ms": start, "agent": "gemini"}),
        serde_json::json!({"v": 1, "kind": "prompted", "session": SESSION, "at_ms": start, "text": "go"}),
        serde_json::json!({"v": 1, "kind": "turn_ended", "session": SESSION, "at_ms": end, "reason": "end_turn"}),
    ];
    let mut run = command(home, &["run", "--exporter", "console"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = run.stdin.take().unwrap();
    for r in records {
        writeln!(stdin, "{r}").unwrap();
    }
    drop(stdin);
    assert!(run.wait().unwrap().success());
    assert_eq!(turns(home), 1, "the hooks' turn, in the store");
}

#[test]
fn a_turn_after_the_hooks_were_taken_out_is_imported_and_one_still_theirs_is_not() {
    let home = scratch("import-untraced-out");
    traced_first_turn(&home);
    albedo(&home, &["import", "gemini"], &[]);
    assert_eq!(
        turns(&home),
        2,
        "the hooks' turn, and the one after it the import read"
    );

    let home = scratch("import-untraced-in");
    traced_first_turn(&home);
    albedo(&home, &["install", "gemini"], &[]);
    albedo(&home, &["import", "gemini"], &[]);
    assert_eq!(
        turns(&home),
        1,
        "the turn after is the hooks' to trace while they are in place"
    );
}
