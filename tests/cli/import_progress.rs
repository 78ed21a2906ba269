//! `import`'s progress: a bar on a terminal (stderr), counting the agent's files as they are
//! read, and no trace of one when stderr is a pipe, where the plain line each agent ends with
//! is the account.

use std::process::Command;

use super::{albedo, history};
use crate::support::*;

/// Every transcript of the generated history, sub-agents' included.
fn transcripts(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .map(|p| match p.is_dir() {
            true => transcripts(&p),
            false => usize::from(p.extension().is_some_and(|e| e == "jsonl")),
        })
        .sum()
}

#[test]
fn an_import_shows_its_files_on_a_terminal_and_nothing_of_a_bar_in_a_pipe() {
    let home = scratch("import-progress");
    history::generate(&home, 6);
    let files = transcripts(&home.join(".claude/projects"));

    // A pipe: the plain line, and no bar.
    let piped = albedo(&home, &["import", "claude-code"], &[]);
    let (out, err) = (
        String::from_utf8_lossy(&piped.stdout),
        String::from_utf8_lossy(&piped.stderr),
    );
    assert!(out.contains("Claude Code: "), "{out}");
    assert!(!err.contains(" files, ") && !err.contains('\r'), "{err}");

    // A terminal, given by `script`: the bar counts the same files.
    let bin = env!("CARGO_BIN_EXE_albedo-otel");
    let command = format!(
        "env -i PATH=\"$PATH\" HOME='{h}' XDG_DATA_HOME='{h}/data2' XDG_STATE_HOME='{h}/state' \
         XDG_CONFIG_HOME='{h}/config' TERM=xterm '{bin}' import claude-code",
        h = home.display()
    );
    let typescript = home.join("typescript");
    let Some(script) = require_tool(
        "script",
        which("script"),
        "it is util-linux's (Debian's bsdutils) and macOS's own",
    ) else {
        return;
    };
    let mut script = Command::new(script);
    if cfg!(target_os = "macos") {
        script
            .args(["-q"])
            .arg(&typescript)
            .args(["sh", "-c", &command]);
    } else {
        script.args(["-q", "-e", "-c", &command]).arg(&typescript);
    }
    let ran = script.output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let seen = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    assert!(
        seen.contains("Claude Code [") && seen.contains(&format!("/{files} files, ")),
        "no bar over {files} files in: {seen}"
    );
    assert!(seen.contains("Claude Code: "), "{seen}");
}
