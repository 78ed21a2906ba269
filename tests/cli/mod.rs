//! The commands a user with no collector runs: the local store, `report`, `sessions` and
//! `show`.

use std::path::Path;
use std::process::{Command, Output};

mod history;
mod import_export;
mod import_progress;
mod import_untraced;
mod report;
mod sessions;
mod store_faults;
mod store_writers;

/// `albedo-otel ARGS` with the store and configuration under `home`, and nothing else of this
/// process's environment but its `PATH`.
pub(super) fn command(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"));
    cmd
}

/// [`command`], with `env` besides, run to its end: it must succeed.
pub(super) fn albedo(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = command(home, args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "albedo-otel {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Claude Code's files of the recorded `subagent` session where Claude Code keeps them under
/// `home`: the session's transcript, and its sub-agent's, named as Claude Code names it.
pub(super) fn claude_history(home: &Path) {
    let dir = crate::support::repo_file("tests/fixtures/claude-code/subagent");
    let session = "c71c3c62-f782-4a6c-a25d-4c765f05b950";
    let project = home.join(".claude/projects/-home-dev-demo");
    std::fs::create_dir_all(project.join(session).join("subagents")).unwrap();
    std::fs::copy(
        format!("{dir}/transcript.jsonl"),
        project.join(format!("{session}.jsonl")),
    )
    .unwrap();
    std::fs::copy(
        format!("{dir}/transcripts/subagent-agent.jsonl"),
        project
            .join(session)
            .join("subagents/agent-aa93efc368e2db732.jsonl"),
    )
    .unwrap();
}
