//! Who and where, as a collector receives it (issue 28): a turn worked on in a git checkout
//! says its repository, branch and commit, and who worked on it, on its root and on its model
//! calls; a token in the remote's URL reaches no export, no journal and no log.

use crate::support::hooks::{recorded, Setup};
use crate::support::*;
use prost::Message;

const SECRET: &str = "ghp_secret123";
const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

/// A checkout on `main`, written file by file as git leaves one, its remote's URL holding a
/// token, its own `user.email` set.
fn checkout() -> Scratch {
    git_checkout(
        &format!("https://user:{SECRET}@github.com/o/r.git"),
        "main",
        SHA,
        Some("committer@example.com"),
    )
}

fn turn(sid: &str, workspace: &std::path::Path, at: u64) -> String {
    let w = serde_json::to_string(workspace.to_str().unwrap()).unwrap();
    [
        format!(r#"{{"v":1,"kind":"session","session":"{sid}","at_ms":{at},"agent":"albedo","workspace":{w}}}"#),
        format!(r#"{{"v":1,"kind":"prompted","session":"{sid}","at_ms":{},"text":"go"}}"#, at + 1),
        format!(r#"{{"v":1,"kind":"call_sent","session":"{sid}","id":"m","request":{{"model":"claude-sonnet-4-5","provider":"anthropic"}},"usage":{{"input_tokens":100,"output_tokens":10}},"started_ms":{},"finished_ms":{}}}"#, at + 2, at + 3),
        format!(r#"{{"v":1,"kind":"turn_ended","session":"{sid}","at_ms":{}}}"#, at + 4),
    ]
    .join("\n")
        + "\n"
}

fn contains(bytes: &[u8], needle: &str) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_turn_in_a_checkout_says_where_and_who_and_never_the_remote_s_token() {
    let repo = checkout();
    let elsewhere = scratch("not-a-checkout");
    let home = scratch("home");
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\temail = dev@example.com\n",
    )
    .unwrap();
    let rx = Receiver::start();
    let input = turn("in-repo", &repo, 1_796_000_000_000)
        + &turn("elsewhere", &elsewhere, 1_796_000_000_100);
    let home_s = home.to_str().unwrap();
    let out = run_binary(
        &["run"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", rx.http_url().as_str()),
            ("HOME", home_s),
            ("ALBEDO_OTEL_LOG", "trace"),
        ],
        input.as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let spans = rx.spans();
    assert_eq!(spans.len(), 4);
    for s in &spans {
        let a = s.attrs();
        if s.attr("session.id").as_deref() == Some("in-repo") {
            assert_eq!(
                a["vcs.repository.url.full"], "https://github.com/o/r",
                "{}",
                s.span.name
            );
            assert_eq!(a["vcs.ref.head.name"], "main");
            assert_eq!(a["vcs.ref.head.revision"], SHA);
            assert_eq!(
                a["user.id"], "committer@example.com",
                "the checkout's own email"
            );
        } else {
            for k in [
                "vcs.repository.url.full",
                "vcs.ref.head.name",
                "vcs.ref.head.revision",
            ] {
                assert!(!a.contains_key(k), "{} says {k}", s.span.name);
            }
            assert_eq!(a["user.id"], "dev@example.com", "the user's own git email");
        }
        let host = s
            .resource
            .get("host.name")
            .expect("host.name on the resource");
        assert!(!host.is_empty());
    }
    // Not in the bytes sent, nor in anything the run printed, at the most verbose log level.
    for r in rx.requests() {
        assert!(!contains(&r.request.encode_to_vec(), SECRET));
    }
    assert!(!contains(&out.stderr, SECRET) && !contains(&out.stdout, SECRET));

    // Into a file, with identity turned off: the file's bytes, too, hold no token.
    let dir = scratch("file-export");
    let file = dir.join("traces.jsonl");
    let out = run_binary(
        &[
            "run",
            "--exporter",
            "file",
            "--file",
            file.to_str().unwrap(),
        ],
        &[("ALBEDO_OTEL_USER_ID", "none"), ("HOME", home_s)],
        input.as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read(&file).unwrap();
    assert!(contains(&written, "https://github.com/o/r"));
    assert!(!contains(&written, SECRET));
    assert!(
        !contains(&written, "user.id"),
        "ALBEDO_OTEL_USER_ID=none: no identity"
    );
}

#[test]
fn through_the_hooks_the_token_is_in_no_journal_log_or_span() {
    let repo = checkout();
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let cwd = serde_json::to_string(repo.to_str().unwrap()).unwrap();
    for payload in recorded("multi_tool") {
        setup.hook(&payload.replace(r#""cwd":"/home/dev/demo""#, &format!(r#""cwd":{cwd}"#)));
    }
    setup.wait_idle();
    let spans = rx.spans();
    let root = spans
        .iter()
        .find(|s| s.span.name == "invoke_agent claude-code")
        .expect("the turn");
    assert_eq!(
        root.attr("vcs.repository.url.full").as_deref(),
        Some("https://github.com/o/r")
    );
    assert_eq!(root.attr("vcs.ref.head.revision").as_deref(), Some(SHA));
    let calls: Vec<_> = spans
        .iter()
        .filter(|s| s.span.name.starts_with("chat "))
        .collect();
    assert!(!calls.is_empty());
    for c in calls {
        assert_eq!(c.attr("vcs.ref.head.name").as_deref(), Some("main"));
        assert_eq!(c.attr("user.id").as_deref(), Some("committer@example.com"));
    }
    for r in rx.requests() {
        assert!(!contains(&r.request.encode_to_vec(), SECRET));
    }
    assert!(files_containing(&setup.hook_dir, SECRET).is_empty());
    assert!(files_containing(&setup.spool, SECRET).is_empty());
    assert!(!setup.daemon_log().contains(SECRET));
}

/// Issue 37: a FIFO where the checkout's HEAD should be made attribution wait for a writer
/// that never came, on the one thread every session's turns go through; `replay` exited 0
/// with nothing exported. Now the FIFO is not opened: the turn arrives whole, without a
/// branch, and the command ends at once with 0.
#[cfg(unix)]
#[test]
fn a_fifo_for_head_holds_up_nothing() {
    let repo = checkout();
    let head = repo.join(".git/HEAD");
    std::fs::remove_file(&head).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&head)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let session = repo.join("session.ndjson");
    std::fs::write(&session, turn("fifo", &repo, 1_796_000_000_000)).unwrap();
    let rx = Receiver::start();
    let out = run_within(
        &[
            "replay",
            session.to_str().unwrap(),
            "--flush-timeout",
            "3s",
            "--endpoint",
            rx.http_url().as_str(),
        ],
        std::time::Duration::from_secs(30),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let spans = rx.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.span.name.as_str()).collect();
    assert_eq!(spans.len(), 2, "the turn and its model call: {names:?}");
    let root = spans
        .iter()
        .find(|s| s.span.name.starts_with("invoke_agent"))
        .expect("the turn");
    assert_eq!(
        root.attr("vcs.repository.url.full").as_deref(),
        Some("https://github.com/o/r"),
        "the config is still read"
    );
    assert_eq!(root.attr("vcs.ref.head.name"), None, "HEAD was not read");
}

/// Runs the binary with `args`, as `run_binary` does but without input, waiting for it at
/// most `limit`: past that it is killed and the test fails, instead of hanging.
#[cfg(unix)]
fn run_within(args: &[&str], limit: std::time::Duration) -> std::process::Output {
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_albedo-otel"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("ALBEDO_OTEL") {
            cmd.env_remove(k);
        }
    }
    let (spool, config, home) = (scratch("spool"), scratch("config"), scratch("home"));
    cmd.env("ALBEDO_OTEL_LOG", "info")
        .env("ALBEDO_OTEL_SPOOL_DIR", &*spool)
        .env("XDG_CONFIG_HOME", &*config)
        .env("HOME", &*home);
    let child = cmd.spawn().expect("the binary starts");
    let pid = child.id().to_string();
    let (tx, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match done.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid]).status();
            panic!(
                "`albedo-otel {}` still running after {limit:?}",
                args.join(" ")
            );
        }
    }
}
