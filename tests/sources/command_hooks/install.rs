//! `install`, `uninstall` and `doctor` for the command-hook routes, as a user runs them:
//! other hooks kept, idempotent, private files kept private and links written through, and
//! a test trace sent through the installed route.

use std::process::Command;

use crate::support::*;
use serde_json::Value;

/// `albedo-otel ARGS --settings SETTINGS` with its configuration under `config_home` and its
/// state under `dir`; its standard output, once it succeeded.
fn install_cmd(
    args: &[&str],
    settings: &std::path::Path,
    config_home: &std::path::Path,
    dir: &std::path::Path,
    env: &[(&str, &str)],
) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(args)
        .arg("--settings")
        .arg(settings)
        .envs(env.iter().copied())
        .env("XDG_CONFIG_HOME", config_home)
        .env("XDG_STATE_HOME", dir.join("state"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn install_keeps_other_hooks_is_idempotent_and_uninstall_removes_only_ours() {
    let dir = scratch("install");
    let settings = dir.join("settings.json");
    let original = r#"{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [ { "type": "command", "command": "my-guard" } ] }
    ]
  }
}
"#;
    std::fs::write(&settings, original).unwrap();
    let config_home = dir.join("config");
    let run = |args: &[&str]| {
        install_cmd(
            args,
            &settings,
            &config_home,
            &dir,
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")],
        )
    };
    let said = run(&["install", "claude-code"]);
    let config = config_home.join("albedo-otel/config.toml");
    assert!(said.contains("backup: "), "{said}");
    assert!(
        said.contains(&format!("settings written to {} (0600):", config.display()))
            && said.contains("otlp.endpoint = http://collector:4317"),
        "{said}"
    );
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains(r#"endpoint = "http://collector:4317""#));
    let once = std::fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&once).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "my-guard"
    );
    let ours = v["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    // The command names the configuration file and the journals, and carries no setting.
    assert!(
        ours.contains("/albedo-otel-hook --config ")
            && ours.contains(&config.display().to_string())
            && ours.contains(" --hook-dir ")
            && !ours.contains("OTEL_"),
        "{ours}"
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "SessionEnd",
    ] {
        assert!(v["hooks"][event].is_array(), "{event}");
    }
    assert!(run(&["install", "claude-code"]).contains("already installed"));
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        once,
        "idempotent"
    );
    run(&["uninstall", "claude-code"]);
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        after,
        serde_json::from_str::<Value>(original).unwrap(),
        "only ours removed"
    );
    let backups = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("backup")
        })
        .count();
    assert!(backups >= 1);
}

/// People keep `env.ANTHROPIC_API_KEY` in `~/.claude/settings.json`, often 0600, often a link
/// into a dotfiles repository. `install` used to leave both the file and a backup per run at
/// the umask's 0644, and to replace the link with a plain file the linked original never saw.
#[cfg(unix)]
#[test]
fn install_keeps_a_private_settings_file_private_and_writes_through_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = scratch("install-private");
    let dotfiles = dir.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    let secret = r#"{ "env": { "ANTHROPIC_API_KEY": "sk-ant-test-secret" } }"#;
    std::fs::write(&real, secret).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let claude = dir.join("claude");
    std::fs::create_dir_all(&claude).unwrap();
    let settings = claude.join("settings.json");
    std::os::unix::fs::symlink(&real, &settings).unwrap();
    // A backup an older version left, readable by anyone.
    let old_backup = claude.join("settings.json.albedo-otel-backup-1764000000");
    std::fs::write(&old_backup, secret).unwrap();
    std::fs::set_permissions(&old_backup, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = |args: &[&str]| install_cmd(args, &settings, &dir.join("config"), &dir, &[]);
    run(&["install", "claude-code"]);
    run(&["uninstall", "claude-code"]);
    run(&["install", "claude-code"]);
    assert!(
        std::fs::symlink_metadata(&settings)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert!(
        v["hooks"]["Stop"].is_array(),
        "the linked original has the hook"
    );
    assert_eq!(v["env"]["ANTHROPIC_API_KEY"], "sk-ant-test-secret");
    assert_eq!(mode(&real), 0o600, "the settings file stays private");
    let backups: Vec<_> = std::fs::read_dir(&claude)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("backup") && *p != old_backup)
        .collect();
    assert_eq!(backups.len(), 1, "one backup, not one per run: {backups:?}");
    assert_eq!(
        mode(&backups[0]),
        0o600,
        "the backup is as private as the file"
    );
    assert_eq!(
        mode(&old_backup),
        0o600,
        "an older version's backup is made private"
    );
    assert!(
        std::fs::read_dir(&dotfiles).unwrap().count() == 1,
        "nothing but the file itself in the linked folder"
    );
}

#[test]
fn install_for_albedo_writes_its_four_events() {
    let home = scratch("albedo-home");
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(["install", "albedo"])
        .env("ALBEDO_HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("hooks.json")).unwrap()).unwrap();
    let events: Vec<_> = v["hooks"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        events,
        ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    );
}

#[test]
fn doctor_sends_a_test_trace_and_says_where_it_went() {
    let rx = Receiver::start();
    let out = run_binary(
        &["doctor", "--protocol", "grpc", "--endpoint", &rx.grpc_url()],
        &[],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "ok   direct test: the collector at {} (grpc) accepted a test trace",
            rx.grpc_url()
        )),
        "{stdout}"
    );
    let spans = rx.spans();
    assert_eq!(spans.len(), 1);
    assert_eq!(spans[0].span.name, "albedo-otel doctor");
    let trace = spans[0]
        .span
        .trace_id
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    assert!(stdout.contains(&trace), "{stdout}");

    let port = free_port();
    let out = run_binary(
        &["doctor", "--endpoint", &format!("http://127.0.0.1:{port}")],
        &[],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains(&format!(
            "FAIL direct test: no collector at 127.0.0.1:{port} ("
        )),
        "{stdout}"
    );
}

/// The agent runs the hooks of the user's settings and of the project's: ours in both would
/// record every event twice, so `install` and `doctor` say so, and name the way out.
#[test]
fn our_hook_in_both_scopes_is_called_out() {
    let dir = scratch("two-scopes");
    let (home, checkout) = (dir.join("home"), dir.join("checkout"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&checkout).unwrap();
    let run_in = |cwd: &std::path::Path, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .args(args)
            .current_dir(cwd)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
            .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
            .env_remove("ALBEDO_OTEL_CONFIG")
            .env_remove("ALBEDO_HOME")
            .output()
            .unwrap();
        assert!(
            out.status.success() || args[0] == "doctor",
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let run = |args: &[&str]| run_in(&checkout, args);
    let said = run(&["install", "claude-code"]);
    assert!(!said.contains("warning"), "{said}");
    // A project at HOME is the user's own settings: one file, no warning.
    let said = run_in(&home, &["install", "claude-code", "--project"]);
    assert!(!said.contains("warning"), "{said}");
    let said = run(&["install", "claude-code", "--project"]);
    assert!(
        said.contains(&format!(
            "warning: {} has albedo-otel's hook too",
            home.join(".claude/settings.json").display()
        )) && said.contains("`albedo-otel uninstall claude-code` removes that one"),
        "{said}"
    );
    let said = run(&["doctor"]);
    assert!(
        said.contains("warn hook, Claude Code:") && said.contains("both have our hook"),
        "{said}"
    );
    run(&["uninstall", "claude-code", "--project"]);
    let said = run(&["doctor"]);
    assert!(!said.contains("both have our hook"), "{said}");
    // The doctor's hooks started a daemon in the folder about to be removed.
    let hooks = home.join(".state/albedo-otel/hooks");
    wait_until(
        std::time::Duration::from_secs(30),
        "the doctor's daemon to exit",
        || !albedo_otel::sources::command_hooks::daemon::running(&hooks),
    );
}
