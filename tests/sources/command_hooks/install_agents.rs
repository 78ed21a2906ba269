//! `install`, `uninstall` and `doctor` for each agent beside Claude Code and Cursor (each
//! tested in a file of its own), as a user runs them under a clean HOME: the user's own hooks and files kept, a second install a no-op, a
//! test trace through the installed route, and what the user had given back.

use std::process::Command;

use crate::support::*;
use serde_json::Value;

/// Each agent's file as a user has it before albedo-otel, and what must be true of it after.
struct AgentFile {
    agent: &'static str,
    /// Where install writes, under HOME.
    file: &'static str,
    /// The file as the user had it; `None` for a file of albedo-otel's own.
    original: Option<&'static str>,
    /// A file of the user's beside it, which must be left alone.
    beside: Option<(&'static str, &'static str)>,
    doctor: &'static str,
}

const AGENT_FILES: &[AgentFile] = &[
    AgentFile {
        agent: "gemini",
        file: ".gemini/settings.json",
        original: Some(
            r#"{"theme": "Dracula", "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "my-guard", "timeout": 5000}]}]}}"#,
        ),
        beside: None,
        doctor: "Gemini CLI (user)",
    },
    AgentFile {
        agent: "codex",
        file: ".codex/hooks.json",
        original: Some(
            r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "my-guard", "timeout": 3}]}]}}"#,
        ),
        beside: None,
        doctor: "Codex CLI (user)",
    },
    AgentFile {
        agent: "droid",
        file: ".factory/settings.json",
        // Droid's settings hold the user's own models and their keys too: all of it must
        // come back as written.
        original: Some(
            r#"{"customModels": [{"model": "m", "displayName": "Mine", "baseUrl": "http://127.0.0.1:1/v1", "apiKey": "sk-kept-as-is", "provider": "openai"}], "hooks": {"PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "my-guard", "timeout": 5}]}]}}"#,
        ),
        beside: None,
        doctor: "Factory Droid (user)",
    },
    AgentFile {
        agent: "copilot",
        file: ".copilot/hooks/albedo-otel.json",
        original: None,
        beside: Some((
            ".copilot/hooks/mine.json",
            r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "my-guard"}]}}"#,
        )),
        doctor: "Copilot CLI (user)",
    },
    AgentFile {
        agent: "opencode",
        file: ".config/opencode/plugin/albedo-otel.js",
        original: None,
        beside: Some((
            ".config/opencode/plugin/mine.js",
            "export const Mine = async () => ({});\n",
        )),
        doctor: "opencode (user)",
    },
    AgentFile {
        agent: "kilo",
        file: ".config/kilo/plugin/albedo-otel.js",
        original: None,
        beside: Some((
            ".config/kilo/plugin/mine.js",
            "export const Mine = async () => ({});\n",
        )),
        doctor: "Kilo Code CLI (user)",
    },
    AgentFile {
        agent: "pi",
        file: ".pi/agent/extensions/albedo-otel.js",
        original: None,
        beside: Some((
            ".pi/agent/extensions/mine.ts",
            "export default function (pi) {}\n",
        )),
        doctor: "Pi (user)",
    },
    AgentFile {
        agent: "cline",
        // One of the scripts, one per event, that install writes into Cline's hooks folder.
        file: ".cline/hooks/TaskStart",
        original: None,
        beside: Some((
            ".cline/hooks/TaskStart.sh",
            "#!/bin/sh\necho '{\"cancel\": false}'\n",
        )),
        doctor: "Cline CLI (user)",
    },
    AgentFile {
        agent: "kimi",
        file: ".kimi-code/config.toml",
        // Kimi's one file holds its providers and keys too: all of it must come back as written.
        original: Some(
            "# my Kimi settings\ndefault_model = \"k2\" # the fast one\n\n[providers.moonshot]\ntype = \"kimi\"\napi_key = \"sk-kept-as-is\"\n\n[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"my-guard\"\ntimeout = 5\n",
        ),
        beside: None,
        doctor: "Kimi Code (user)",
    },
    AgentFile {
        agent: "qwen-code",
        file: ".qwen/settings.json",
        original: Some(
            r#"{"general": {"disableAutoUpdate": true}, "hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "my-guard", "timeout": 5}]}]}}"#,
        ),
        beside: None,
        doctor: "Qwen Code (user)",
    },
];

/// Agents whose install is tested in a file of its own.
const TESTED_APART: &[(&str, &str)] = &[
    ("claude-code", "tests/sources/command_hooks/install.rs"),
    ("cursor", "tests/sources/command_hooks/install_cursor.rs"),
];

/// Every agent has its row above, or a file of its own: a new agent's install is tested.
#[test]
fn every_agent_s_install_is_tested() {
    use albedo_otel::sources::command_hooks::agent::Agent;
    let missing: Vec<&str> = Agent::ALL
        .into_iter()
        .map(Agent::name)
        .filter(|n| !AGENT_FILES.iter().any(|a| a.agent == *n))
        .filter(|n| !TESTED_APART.iter().any(|(a, _)| a == n))
        .collect();
    assert!(
        missing.is_empty(),
        "no row in AGENT_FILES for {missing:?}: add the file a user has before install"
    );
}

/// For each agent: the user's own hooks and files are kept, a second install changes nothing,
/// `doctor` sends a test trace through the installed route, and `uninstall` leaves what the
/// user had.
#[test]
fn every_agents_install_keeps_the_users_own_and_uninstall_gives_it_back() {
    let rx = Receiver::start();
    for a in AGENT_FILES {
        let home = scratch(&format!("install-{}", a.agent));
        let run = |args: &[&str]| {
            let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
                .args(args)
                .current_dir(&home)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &home)
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
                "{} {args:?}: {said}{}",
                a.agent,
                String::from_utf8_lossy(&out.stderr)
            );
            said
        };
        let file = home.join(a.file);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        if let Some(original) = a.original {
            std::fs::write(&file, original).unwrap();
        }
        if let Some((path, text)) = a.beside {
            std::fs::write(home.join(path), text).unwrap();
        }
        let said = run(&["install", a.agent]);
        let once = std::fs::read_to_string(&file).unwrap();
        assert!(
            once.contains("albedo-otel-hook") && once.contains(a.agent),
            "{}: {once}",
            a.agent
        );
        if let Some(original) = a.original {
            assert!(said.contains("backup: "), "{said}");
            assert!(once.contains("my-guard"), "{}: {once}", a.agent);
            assert_eq!(
                std::fs::read_to_string(file.with_file_name(format!(
                    "{}.albedo-otel-backup",
                    file.file_name().unwrap().to_string_lossy()
                )))
                .unwrap(),
                original
            );
        }
        assert!(run(&["install", a.agent]).contains("already installed"));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            once,
            "{}: idempotent",
            a.agent
        );

        // The route as the agent runs it: the installed command, a test payload, the daemon.
        let before = rx.spans().len();
        let said = run(&["doctor"]);
        let through = format!("ok   hook, {}: through the hook and its daemon", a.doctor);
        assert!(said.contains(&through), "{}: {said}", a.agent);
        assert!(
            rx.spans().len() >= before + 2,
            "the direct test and the hook's"
        );

        run(&["uninstall", a.agent]);
        match a.original {
            // TOML is given back to the byte: comments and layout are the user's.
            Some(original) if a.file.ends_with(".toml") => {
                assert_eq!(
                    std::fs::read_to_string(&file).unwrap(),
                    original,
                    "{}",
                    a.agent
                )
            }
            Some(original) => assert_eq!(
                serde_json::from_str::<Value>(&std::fs::read_to_string(&file).unwrap()).unwrap(),
                serde_json::from_str::<Value>(original).unwrap(),
                "{}: only ours removed",
                a.agent
            ),
            None => assert!(
                !file.exists()
                    || !std::fs::read_to_string(&file)
                        .unwrap()
                        .contains("albedo-otel-hook"),
                "{}",
                a.agent
            ),
        }
        if let Some((path, text)) = a.beside {
            assert_eq!(std::fs::read_to_string(home.join(path)).unwrap(), text);
        }
    }
}

/// Flags that do not fit the host are refused, with the reason, before anything is written;
/// and `--help` lists every agent of the registry with where its hook goes.
#[test]
fn flags_that_do_not_fit_the_host_are_refused_and_help_lists_every_agent() {
    let home = scratch("install-flags");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .args(args)
            .current_dir(&home)
            .env_clear()
            .env("HOME", &home)
            .env("ALBEDO_HOME", home.join(".albedo"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".state"))
            .output()
            .unwrap()
    };
    for (args, says) in [
        (
            &["install", "albedo", "--project"][..],
            "albedo has one hooks file",
        ),
        (
            &["install", "albedo", "--trust"][..],
            "albedo has one hooks file",
        ),
        (
            &["install", "gemini", "--albedo-home", "x"][..],
            "--albedo-home is for albedo, not gemini",
        ),
        (
            &["install", "gemini", "--trust"][..],
            "--trust is for Codex",
        ),
        (
            &["uninstall", "albedo", "--settings", "f.json"][..],
            "albedo has one hooks file",
        ),
        (
            &["install", "kimi", "--project"][..],
            "Kimi Code has no project scope",
        ),
    ] {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
    let written: Vec<_> = walk(&home);
    assert!(written.is_empty(), "nothing written: {written:?}");

    let help = String::from_utf8_lossy(&run(&["install", "--help"]).stdout).into_owned();
    use albedo_otel::sources::command_hooks::agent::Agent;
    for agent in Agent::ALL {
        let line = format!("- {}:", agent.name());
        assert!(help.contains(&line), "{line} in:\n{help}");
        assert!(help.contains(agent.spec().install.project_file), "{help}");
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// After an upgrade through npm, Gemini's hooks still run the old version's copy
/// (`~/.local/share/albedo-otel/npm/<version>/`), whose daemon may not know the newer agents
/// (issue 37, item 4). Installing another agent names them; with `--move-others` it points
/// them at this install's copy, the rest of their command and file kept.
#[test]
fn install_names_other_agents_hooks_on_another_versions_copy_and_moves_them() {
    let home = scratch("install-versions");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
            .args(args)
            .current_dir(&home)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".state"))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{args:?}: {said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        said
    };
    let gemini = home.join(".gemini/settings.json");
    run(&["install", "gemini"]);
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .canonicalize()
        .unwrap()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let old = home
        .join(".local/share/albedo-otel/npm/0.0.1")
        .to_string_lossy()
        .into_owned();
    let installed = std::fs::read_to_string(&gemini).unwrap();
    assert!(
        installed.contains(&format!("{ours}/albedo-otel")),
        "{installed}"
    );
    let on_old = installed.replace(&format!("{ours}/"), &format!("{old}/"));
    std::fs::write(&gemini, &on_old).unwrap();

    let claude = home.join(".claude/settings.json");
    let said = run(&["install", "claude-code"]);
    assert!(
        said.contains(&format!(
            "note: gemini's hooks in {} run albedo-otel 0.0.1's copy in {old}",
            gemini.display()
        )) && said.contains("--move-others"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(&gemini).unwrap(),
        on_old,
        "only named"
    );

    let said = run(&["install", "claude-code", "--move-others"]);
    assert!(
        said.contains(&format!(
            "moved: gemini's hooks in {} now run {ours}",
            gemini.display()
        )),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), installed);
    assert!(std::fs::read_to_string(&claude)
        .unwrap()
        .contains("albedo-otel-hook"));
    // Nothing left to name.
    let said = run(&["install", "claude-code"]);
    assert!(!said.contains("0.0.1"), "{said}");
}
