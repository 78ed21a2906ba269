//! Writers at once and writers killed: an import killed with SIGKILL and run again counts what
//! one clean import counts; two replays and an import writing the store at the same time leave
//! each of their calls in it once.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::albedo;
use super::history::{generate, Tokens};
use crate::support::*;

fn command(home: &Path, args: &[&str]) -> Command {
    let mut cmd = super::command(home, args);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

fn totals(home: &Path) -> Tokens {
    let out = albedo(home, &["report", "--json"], &[]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    [
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
    ]
    .map(|k| v["totals"][k].as_i64().unwrap_or(-1))
}

/// Model calls the store holds, read as another process reads it while it is written.
fn stored(home: &Path) -> i64 {
    let path = home.join("data/albedo-otel/store.sqlite");
    let Ok(db) =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    db.query_row("SELECT count(*) FROM model_calls", [], |r| r.get(0))
        .unwrap_or(0)
}

#[cfg(unix)]
#[test]
fn an_import_killed_and_run_again_counts_what_one_clean_import_counts() {
    let home = scratch("import-killed");
    let written = generate(&home, 400);
    let sum = written.values().fold([0; 4], |mut s, t| {
        s.iter_mut().zip(t).for_each(|(a, b)| *a += b);
        s
    });
    let mut first = command(&home, &["import", "claude-code"]).spawn().unwrap();
    // Killed once some of it is on disk, and (as a rule) long before the end.
    wait_until(
        Duration::from_secs(60),
        "the import to store its first calls",
        || stored(&home) > 0 || first.try_wait().unwrap().is_some(),
    );
    let killed_mid_way = first.try_wait().unwrap().is_none();
    let _ = first.kill();
    first.wait().unwrap();
    let before = stored(&home);
    eprintln!("killed mid-way: {killed_mid_way}, {before} calls stored then");
    albedo(&home, &["import", "claude-code"], &[]);
    assert_eq!(totals(&home), sum, "an import run again after SIGKILL");
    albedo(&home, &["import", "claude-code"], &[]);
    assert_eq!(totals(&home), sum, "and once more");
}

#[test]
fn two_replays_and_an_import_at_once_each_store_their_calls_once() {
    let home = scratch("writers");
    let written = generate(&home, 60);
    let mut sum = written.values().fold([0; 4], |mut s, t| {
        s.iter_mut().zip(t).for_each(|(a, b)| *a += b);
        s
    });
    // Two replays of the example session, its session and its answers under ids of their
    // own (the same answer twice is one call), beside the import.
    let demo = std::fs::read_to_string(repo_file("examples/demo-session.ndjson")).unwrap();
    let mut writers = Vec::new();
    for n in 0..2 {
        let file = home.join(format!("demo-{n}.ndjson"));
        let own = demo
            .replace("demo-7f3a", &format!("demo-{n}"))
            .replace("\"msg_", &format!("\"msg_{n}_"));
        std::fs::write(&file, own).unwrap();
        let args = [
            "replay",
            file.to_str().unwrap(),
            "--exporter",
            "file",
            "--file",
            "/dev/null",
        ];
        writers.push(command(&home, &args).spawn().unwrap());
    }
    writers.push(command(&home, &["import", "claude-code"]).spawn().unwrap());
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("never reached the local store"), "{said}");
    }
    // The example session's calls, as one replay of it alone stores them.
    let alone = scratch("writers-alone");
    albedo(
        &alone,
        &[
            "replay",
            "examples/demo-session.ndjson",
            "--exporter",
            "file",
            "--file",
            "/dev/null",
        ],
        &[],
    );
    let one = totals(&alone);
    for _ in 0..2 {
        sum.iter_mut().zip(one).for_each(|(a, b)| *a += b);
    }
    assert_eq!(totals(&home), sum, "two replays and an import, at once");
}
