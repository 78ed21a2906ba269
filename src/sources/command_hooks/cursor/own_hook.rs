//! Cursor runs the hooks of its own `hooks.json` files and, after them, those of Claude Code's
//! settings: a user who installed our hook for both would have every Cursor event journaled
//! twice. The route through Claude Code's hook gives way when Cursor's own file (the user's,
//! or the workspace's) has our hook on that event.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::HOOK_EVENTS;
use crate::sources::command_hooks::spec::{under_home, Env};

#[derive(Deserialize)]
struct Where {
    #[serde(default)]
    hook_event_name: Option<String>,
    #[serde(default)]
    workspace_roots: Option<Vec<Value>>,
}

/// Whether Cursor also hands this payload (one it sent to Claude Code's hook) to our hook
/// in one of its own `hooks.json` files.
pub fn runs_ours_too(payload: &str, env: Env<'_>) -> bool {
    let Ok(w) = serde_json::from_str::<Where>(payload) else {
        return false;
    };
    let Some(event) = w
        .hook_event_name
        .filter(|e| HOOK_EVENTS.contains(&e.as_str()))
    else {
        return false;
    };
    let project = w
        .workspace_roots
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(|r| Path::new(r).join(".cursor/hooks.json")));
    under_home(env, ".cursor/hooks.json")
        .into_iter()
        .chain(project)
        .any(|file| has_ours(&file, &event))
}

/// Whether hooks file `file` runs our hook, as `install cursor` writes it, on `event`.
fn has_ours(file: &PathBuf, event: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else {
        return false;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    v["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["command"].as_str())
        .any(|c| c.contains("albedo-otel") && c.trim_end().ends_with("--agent cursor"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claude_route_gives_way_only_where_cursors_own_file_has_our_hook() {
        let home =
            std::env::temp_dir().join(format!("albedo-otel-cursor-own-{}", std::process::id()));
        let ws = home.join("ws");
        std::fs::create_dir_all(ws.join(".cursor")).unwrap();
        let env = |k: &str| (k == "HOME").then(|| home.to_string_lossy().into_owned());
        let p = |event: &str| {
            serde_json::json!({"conversation_id": "c", "hook_event_name": event,
                "workspace_roots": [ws.to_string_lossy()]})
            .to_string()
        };
        assert!(!runs_ours_too(&p("stop"), &env), "no file");
        std::fs::write(
            ws.join(".cursor/hooks.json"),
            r#"{"version":1,"hooks":{"stop":[{"command":"/bin/albedo-otel-hook --config c --agent cursor"}],"preToolUse":[{"command":"my-guard"}]}}"#,
        )
        .unwrap();
        assert!(runs_ours_too(&p("stop"), &env));
        assert!(
            !runs_ours_too(&p("preToolUse"), &env),
            "not ours on that event"
        );
        assert!(
            !runs_ours_too(&p("beforeShellExecution"), &env),
            "not an event we install"
        );
        std::fs::remove_dir_all(&home).unwrap();
    }
}
