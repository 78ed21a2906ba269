//! `install cursor`, `uninstall cursor` and `doctor` as a user runs them under a clean HOME:
//! Cursor's own `hooks.json` (`{"version": 1, "hooks": {event: [{"command"}]}}`), its hooks
//! kept, a backup first, a second install a no-op, only events Cursor knows (it discards a
//! whole file that names another), and what the user had given back.

use std::path::Path;
use std::process::Command;

use crate::support::*;
use serde_json::Value;

/// Every event Cursor's hooks documentation names (cursor.com/docs/agent/hooks), written
/// here from the documentation rather than taken from the code under test.
const CURSOR_EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "beforeSubmitPrompt",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "afterAgentResponse",
    "afterAgentThought",
    "preCompact",
    "stop",
    "beforeTabFileRead",
    "afterTabFileEdit",
];

const USERS_OWN: &str = r#"{"version": 1, "hooks": {"afterFileEdit": [{"command": "./hooks/format.sh"}], "stop": [{"command": "notify-send done", "timeout": 5}]}}"#;

fn albedo_otel(home: &Path, cwd: &Path, rx: &Receiver, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", rx.grpc_url())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// The file is Cursor's shape: a version, and under each event a flat list of
/// `{"command"}`s; ours on exactly `events`, and every event one Cursor knows.
fn ours_in(file: &Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(v["version"], 1, "{v}");
    let mut events = Vec::new();
    // An uninstall that removed all there was leaves `{"version": 1}`.
    for (event, list) in v["hooks"].as_object().into_iter().flatten() {
        assert!(
            CURSOR_EVENTS.contains(&event.as_str()),
            "{event} is not an event Cursor knows: it would discard the whole file"
        );
        for hook in list.as_array().unwrap() {
            let command = hook["command"].as_str().expect("a flat {command} entry");
            if command.contains("albedo-otel-hook") {
                assert!(command.ends_with("--agent cursor"), "{command}");
                assert_eq!(hook.as_object().unwrap().len(), 1, "only a command: {hook}");
                events.push(event.clone());
            }
        }
    }
    events.sort();
    events
}

#[test]
fn install_keeps_the_users_hooks_writes_only_events_cursor_knows_and_uninstall_gives_them_back() {
    let rx = Receiver::start();
    let home = scratch("install-cursor");
    let file = home.join(".cursor/hooks.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, USERS_OWN).unwrap();

    let said = albedo_otel(&home, &home, &rx, &["install", "cursor"]);
    assert!(said.contains("backup: "), "{said}");
    let backup = file.with_file_name("hooks.json.albedo-otel-backup");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), USERS_OWN);
    let mut expected: Vec<String> = [
        "sessionStart",
        "beforeSubmitPrompt",
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "subagentStart",
        "subagentStop",
        "afterAgentResponse",
        "stop",
        "sessionEnd",
    ]
    .map(String::from)
    .to_vec();
    expected.sort();
    assert_eq!(ours_in(&file), expected);
    let once = std::fs::read_to_string(&file).unwrap();
    assert!(once.contains("./hooks/format.sh") && once.contains("notify-send done"));

    assert!(albedo_otel(&home, &home, &rx, &["install", "cursor"]).contains("already installed"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), once, "idempotent");

    // The route as Cursor runs it: the installed command, a test payload, the daemon.
    let before = rx.spans().len();
    let said = albedo_otel(&home, &home, &rx, &["doctor"]);
    assert!(
        said.contains("ok   hook, Cursor (user): through the hook and its daemon"),
        "{said}"
    );
    assert!(
        rx.spans().len() >= before + 2,
        "the direct test and the hook's"
    );

    albedo_otel(&home, &home, &rx, &["uninstall", "cursor"]);
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(&file).unwrap()).unwrap(),
        serde_json::from_str::<Value>(USERS_OWN).unwrap(),
        "only ours removed"
    );
    assert!(albedo_otel(&home, &home, &rx, &["uninstall", "cursor"]).contains("nothing to remove"));
}

#[test]
fn a_projects_file_is_made_with_its_version_and_the_help_names_cursor() {
    let rx = Receiver::start();
    let home = scratch("install-cursor-project");
    let project = home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    albedo_otel(&home, &project, &rx, &["install", "cursor", "--project"]);
    let file = project.join(".cursor/hooks.json");
    assert_eq!(ours_in(&file).len(), 10);
    assert!(
        !home.join(".cursor/hooks.json").exists(),
        "the user's file is not touched"
    );
    albedo_otel(&home, &project, &rx, &["uninstall", "cursor", "--project"]);
    assert!(ours_in(&file).is_empty());

    let help = albedo_otel(&home, &home, &rx, &["--help"]);
    assert!(help.contains("Cursor"), "{help}");
    let help = albedo_otel(&home, &home, &rx, &["install", "--help"]);
    assert!(
        help.contains("- cursor:") && help.contains(".cursor/hooks.json"),
        "{help}"
    );
}
