//! The local store and `report`, as a user with no collector meets them: every turn a replay
//! exports is stored; `report --json` adds up to what the spans carry, in ccusage's shape; a
//! replay of the same session adds nothing; the store is private, and off when told.

use std::path::Path;
use std::process::Command;

use super::albedo;
use crate::support::*;
use serde_json::Value;

const DEMO: &str = "examples/demo-session.ndjson";

fn replay(home: &Path, rx: &Receiver) {
    albedo(
        home,
        &[
            "replay",
            DEMO,
            "--protocol",
            "grpc",
            "--endpoint",
            &rx.grpc_url(),
        ],
        &[],
    );
}

fn report(home: &Path, args: &[&str]) -> Value {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = albedo(home, &all, &[]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn int(span: &FlatSpan, key: &str) -> i64 {
    span.attr(key).map_or(0, |v| v.parse().unwrap())
}

#[test]
fn the_report_adds_up_to_the_exported_model_calls_and_a_second_replay_adds_nothing() {
    let home = scratch("report");
    let rx = Receiver::start();
    replay(&home, &rx);
    let chats: Vec<FlatSpan> = rx
        .spans()
        .into_iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
        .collect();
    assert!(!chats.is_empty());
    let (mut input, mut output, mut read, mut write, mut cost) = (0, 0, 0, 0, 0.0);
    for c in &chats {
        let r = int(c, "gen_ai.usage.cache_read.input_tokens");
        let w = int(c, "gen_ai.usage.cache_write.input_tokens");
        input += int(c, "gen_ai.usage.input_tokens") - r - w;
        output += int(c, "gen_ai.usage.output_tokens");
        read += r;
        write += w;
        cost += c
            .attr("gen_ai.usage.cost")
            .map_or(0.0, |v| v.parse::<f64>().unwrap());
    }
    let first = report(&home, &["--timezone", "UTC"]);
    let totals = &first["totals"];
    assert_eq!(totals["inputTokens"], input);
    assert_eq!(totals["outputTokens"], output);
    assert_eq!(totals["cacheReadTokens"], read);
    assert_eq!(totals["cacheCreationTokens"], write);
    assert_eq!(totals["totalTokens"], input + output + read + write);
    assert!((totals["totalCost"].as_f64().unwrap() - cost).abs() < 1e-9);
    let day = &first["daily"][0];
    assert_eq!(day["date"], "2026-11-30");
    assert_eq!(day["period"], "2026-11-30");
    assert_eq!(
        day["modelCalls"],
        chats.len(),
        "each model call once: {first:#}"
    );
    // The same session again, as a replay (or an import of what the hook sent) would bring
    // it: nothing is counted twice.
    replay(&home, &rx);
    assert_eq!(report(&home, &["--timezone", "UTC"]), first);
    // By session: one row, its models each with their share.
    let sessions = report(&home, &["session"]);
    assert_eq!(sessions["session"].as_array().unwrap().len(), 1);
    assert_eq!(sessions["session"][0]["sessionId"], "demo-7f3a");
    let by_model: i64 = sessions["session"][0]["modelBreakdowns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["totalTokens"].as_i64().unwrap())
        .sum();
    assert_eq!(by_model, input + output + read + write);
    let store = albedo(&home, &["store"], &[]);
    let said = String::from_utf8_lossy(&store.stdout);
    assert!(
        said.contains(&format!("{} model calls", chats.len())),
        "{said}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = home.join("data/albedo-otel/store.sqlite");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the store is private");
    }
    // Days are the user's: in Tokyo the session is on the 30th too, in Honolulu the 29th.
    let honolulu = report(&home, &["--timezone", "Pacific/Honolulu"]);
    assert_eq!(honolulu["daily"][0]["date"], "2026-11-29");
    let none = report(&home, &["--since", "2026-12-01"]);
    assert_eq!(none["daily"], Value::Array(Vec::new()));
}

#[test]
fn with_nothing_stored_the_report_says_how_to_store_and_a_store_turned_off_keeps_nothing() {
    let home = scratch("report-empty");
    let out = albedo(&home, &["report"], &[]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("albedo-otel install"), "{said}");
    // A script still gets JSON.
    let json = report(&home, &["weekly"]);
    assert_eq!(json["weekly"], Value::Array(Vec::new()));
    assert_eq!(json["totals"]["totalTokens"], 0);
    let rx = Receiver::start();
    albedo(
        &home,
        &[
            "replay",
            DEMO,
            "--protocol",
            "grpc",
            "--endpoint",
            &rx.grpc_url(),
        ],
        &[("ALBEDO_OTEL_STORE", "false")],
    );
    assert!(!rx.spans().is_empty(), "the export goes on");
    assert!(
        !home.join("data/albedo-otel").exists(),
        "no store is made when it is off"
    );
}

/// A session the hook route already stored, imported from Claude Code's own files: not one
/// model call more; and the import alone, into an empty store, finds the same numbers.
#[test]
fn an_import_of_what_the_hooks_sent_adds_nothing_and_alone_finds_the_same() {
    use crate::support::hooks::{recorded, Setup};
    let fixture = "subagent";
    let home = scratch("import-live");
    let data = home.join("data");
    let rx = Receiver::start();
    let setup = Setup::new(&rx);
    let extra = [(
        std::ffi::OsString::from("XDG_DATA_HOME"),
        data.clone().into_os_string(),
    )];
    for payload in recorded(fixture) {
        setup.hook_with(&payload, &extra);
    }
    setup.wait_idle();
    let live = report(&home, &["--timezone", "UTC"]);
    assert!(
        live["totals"]["totalTokens"].as_i64().unwrap() > 0,
        "the hooks stored their turn: {live:#}"
    );
    super::claude_history(&home);
    let listed = crate::support::ccusage::shown(&data);
    // One turn (its sub-agent's in its trace), four model calls.
    assert_eq!(
        listed.values().copied().collect::<Vec<_>>(),
        [(1, 4)],
        "{listed:?}"
    );
    let said = albedo(&home, &["import", "claude-code"], &[]);
    assert!(
        String::from_utf8_lossy(&said.stdout).contains("Claude Code: 1 session, "),
        "{}",
        String::from_utf8_lossy(&said.stdout)
    );
    let both = report(&home, &["--timezone", "UTC"]);
    assert_eq!(both["totals"], live["totals"], "nothing counted twice");
    assert_eq!(
        crate::support::ccusage::shown(&data),
        listed,
        "each turn and model call listed once in `sessions`"
    );
    assert_eq!(
        both["daily"][0]["modelCalls"],
        live["daily"][0]["modelCalls"]
    );
    // Again: nothing more.
    albedo(&home, &["import"], &[]);
    assert_eq!(
        report(&home, &["--timezone", "UTC"])["totals"],
        live["totals"]
    );
    // The import alone, into a store of its own.
    let fresh = scratch("import-alone");
    std::fs::create_dir_all(fresh.join(".claude")).unwrap();
    let copy = |from: &Path, to: &Path| {
        for e in walk(from) {
            let dest = to.join(e.strip_prefix(from).unwrap());
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(&e, dest).unwrap();
        }
    };
    copy(&home.join(".claude"), &fresh.join(".claude"));
    albedo(&fresh, &["import"], &[]);
    assert_eq!(
        report(&fresh, &["--timezone", "UTC"])["totals"],
        live["totals"],
        "the same numbers from the files as from the hooks"
    );
    assert_eq!(
        crate::support::ccusage::shown(&fresh.join("data")),
        listed,
        "the same sessions, turns and model calls from the files as from the hooks"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `install claude-code --statusline` sets Claude Code's status line to ours, never over the
/// user's own without `--force`, and the command it wrote answers from the store at once:
/// the session's cost as `report` counts it; input it cannot read gets the last line.
#[test]
fn the_status_line_shows_the_session_s_cost_and_never_replaces_the_user_s_own_unasked() {
    let home = scratch("statusline");
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = r#"{"statusLine": {"type": "command", "command": "my-line"}}"#;
    std::fs::write(&settings, theirs).unwrap();
    let install = |extra: &[&str]| {
        let mut args = vec!["install", "claude-code", "--statusline"];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .args(&args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data"))
            .env("XDG_STATE_HOME", home.join("state"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .output()
            .unwrap()
    };
    let refused = install(&[]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("my-line"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs);
    let forced = install(&["--force"]);
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let command = written["statusLine"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(command.contains(" statusline --config "), "{command}");
    assert!(
        String::from_utf8_lossy(&forced.stdout).contains("backup:"),
        "{}",
        String::from_utf8_lossy(&forced.stdout)
    );
    // A session in the store, by an import of Claude Code's own file.
    let session = "6d09e084-1b81-4594-8f08-206a088c3e66";
    let project = home.join(".claude/projects/-home-dev-demo");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        repo_file("tests/fixtures/claude-code/bash_write/transcript.jsonl"),
        project.join(format!("{session}.jsonl")),
    )
    .unwrap();
    albedo(&home, &["import"], &[]);
    let cost = report(&home, &["session"])["session"][0]["totalCost"]
        .as_f64()
        .unwrap();
    // As Claude Code runs it: the command through a shell, its JSON on stdin.
    let run_with = |stdin: &str, data: &Path| {
        use std::io::Write;
        let mut child = Command::new("sh")
            .args(["-c", &command])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_DATA_HOME", data)
            .env("XDG_STATE_HOME", home.join("state"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let run = |stdin: &str| run_with(stdin, &home.join("data"));
    let input = format!(
        r#"{{"session_id":"{session}","model":{{"display_name":"Opus"}},"cost":{{"total_cost_usd":1}}}}"#
    );
    let line = run(&input);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(
        line.starts_with(&format!("Opus · session ${cost:.2} (")),
        "{line} (the session cost {cost})"
    );
    // No answer at once (here, no store where it looks): the last line, this session's.
    assert_eq!(run_with(&input, &home.join("elsewhere")), line);
    // Another session's, or input it cannot read: only what is no one session's.
    let today = line.split_once(" · today ").unwrap().1;
    assert_eq!(run("not json"), format!("today {today}"));
    // Uninstall takes ours out, and only ours.
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["uninstall", "claude-code"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert!(left.get("statusLine").is_none(), "{left}");
}

/// Where ccusage and albedo-otel read the same Claude Code files (a session's transcript and
/// its sub-agent's), they count the same tokens: each of the four kinds, to the token.
#[test]
fn the_import_counts_the_tokens_ccusage_counts_in_the_same_files() {
    let Some(ccusage) = crate::support::ccusage::find() else {
        return;
    };
    let kinds = [
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
        "totalTokens",
    ];
    for fixture in ["bash_write", "multi_tool", "pretool_block", "subagent"] {
        let dir = repo_file(&format!("tests/fixtures/claude-code/{fixture}"));
        let home = scratch(&format!("ccusage-{fixture}"));
        let project = home.join(".claude/projects/-home-dev-demo");
        let transcript = std::fs::read_to_string(format!("{dir}/transcript.jsonl")).unwrap();
        let first: Value = serde_json::from_str(transcript.lines().next().unwrap()).unwrap();
        let session = first["sessionId"].as_str().unwrap();
        std::fs::create_dir_all(project.join(session).join("subagents")).unwrap();
        std::fs::write(project.join(format!("{session}.jsonl")), &transcript).unwrap();
        for sub in std::fs::read_dir(format!("{dir}/transcripts"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = format!("agent-{}", sub.file_name().to_string_lossy());
            std::fs::copy(
                sub.path(),
                project.join(session).join("subagents").join(name),
            )
            .unwrap();
        }
        let out = Command::new(&ccusage)
            .args(["daily", "--json", "--offline"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ccusage: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
        albedo(&home, &["import", "claude-code"], &[]);
        let ours = report(&home, &[]);
        for k in kinds {
            assert_eq!(
                ours["totals"][k], theirs["totals"][k],
                "{fixture}: {k}: ours {ours:#}\nccusage's {theirs:#}"
            );
            assert!(theirs["totals"][k].as_i64().unwrap() >= 0);
        }
        assert!(
            ours["totals"]["totalTokens"].as_i64().unwrap() > 0,
            "{fixture}"
        );
    }
}
