//! The real Factory Droid CLI (`droid exec`), offline, with a model of the user's own
//! (`customModels` in `~/.factory/settings.json`, an OpenAI-compatible stand-in), albedo-otel's
//! hook installed by `albedo-otel install droid` beside a stop hook of the user's own that
//! blocks each turn's first stop. Two sessions: a shell call that takes a second, then the
//! blocked stop's continuation; and a prompt answered at once, then its continuation. Every
//! model call's tokens are checked against what the API answered (Droid writes no usage per
//! call: the adapter takes it from the session's running totals), and the store's against
//! ccusage 20's reading of the same files.
//! Needs the CLI: `npm install droid@0.215.0`, and `DROID_BIN` (or `droid` on PATH);
//! `.ci/run` does both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::agent_trace::{
    albedo_otel, chat_tokens, drained, find_cli, install_as_user, isolated_env, key_only_in_config,
    lab,
};
use crate::support::ccusage;
use crate::support::openai_chat::{MockChat, CHAT_MARK, SLOW_COMMAND};
use crate::support::*;

const API_KEY: &str = "test-key-d401d7e3";
const SHELL: &str = "execute_tool Execute";
/// The model as the user named it to Droid, and as the stand-in is asked for it.
const MODEL: &str = "custom:Stand-In-0";
const UPSTREAM: &str = "stand-in-model";
/// What the user's own stop hook says when it blocks: the model answers it at once.
const BLOCK_REASON: &str = "JUST-CHAT: say that you are done";

/// The user's own settings before albedo-otel's: their model, and a stop hook that blocks
/// each turn's first stop. `install` must keep both.
fn user_settings(home: &Path, api: &MockChat) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let block = home.join("block-once.sh");
    std::fs::write(
        &block,
        format!(
            "#!/bin/sh\ncase \"$(cat)\" in *'\"stop_hook_active\":true'*) exit 0;; esac\n\
             echo '{{\"decision\":\"block\",\"reason\":\"{BLOCK_REASON}\"}}'\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&block, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = serde_json::json!({
        "customModels": [{"model": UPSTREAM, "displayName": "Stand In",
            "baseUrl": format!("http://{}/v1", api.addr), "apiKey": "sk-stand-in",
            "provider": "generic-chat-completion-api", "maxOutputTokens": 1024}],
        "hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": block.display().to_string(), "timeout": 5}]}]}
    });
    let file = home.join(".factory/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
    file
}

fn run_droid(bin: &Path, prompt: &str, home: &Path, work: &Path, spool: &Path) {
    let mut cmd = Command::new(bin);
    isolated_env(&mut cmd, home, spool);
    let out = cmd
        .args(["exec", "--auto", "low", "-m", MODEL, "-o", "json", prompt])
        .current_dir(work)
        .stdin(Stdio::null())
        // Variables meant for other programs, which the hook must not take.
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("OTEL_SERVICE_NAME", "not-albedo")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "droid exec {prompt:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The sessions Droid recorded, by the names of their files.
fn sessions(home: &Path) -> Vec<String> {
    files_under(&home.join(".factory/sessions"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
        .collect()
}

#[test]
fn a_real_droid_session_becomes_a_trace_per_turn() {
    let Some(bin) = find_cli("droid") else { return };
    let (rx, home, work, hook_dir, spool) = lab("dr", API_KEY);
    let api = MockChat::start();
    let settings = user_settings(&home, &api);
    let install = albedo_otel(isolated_env, &home, &spool);
    install_as_user(install, &["droid"], &hook_dir, &rx, API_KEY);
    let ours = std::fs::read_to_string(&settings).unwrap();
    assert!(
        ours.contains("--agent droid")
            && ours.contains("block-once.sh")
            && ours.contains(UPSTREAM)
            && !ours.contains(API_KEY),
        "{ours}"
    );

    run_droid(&bin, "run the command", &home, &work, &spool);
    run_droid(&bin, &format!("{CHAT_MARK}: hello"), &home, &work, &spool);
    let log = drained(&hook_dir, &rx);
    key_only_in_config(&home, &hook_dir, API_KEY);

    let spans = rx.spans();
    let tree = render_trees(
        &spans,
        &[
            "gen_ai.tool.call.id",
            "gen_ai.usage.input_tokens",
            "gen_ai.request.model",
        ],
    );
    eprintln!("{tree}");
    assert_eq!(
        check_invariants(&spans),
        2,
        "a trace per turn:\n{tree}\n{log}"
    );
    let mut roots: Vec<&FlatSpan> = spans
        .iter()
        .filter(|s| s.span.parent_span_id.is_empty())
        .collect();
    roots.sort_by_key(|s| s.span.start_time_unix_nano);
    let recorded = sessions(&home);
    for root in &roots {
        assert_eq!(root.span.name, "invoke_agent droid", "{tree}");
        assert!(root.attr("albedo.unfinished").is_none(), "{tree}");
        let session = root.attr("session.id").unwrap_or_default();
        assert!(
            recorded.contains(&session),
            "{session} not in {recorded:?}:\n{tree}"
        );
        assert_eq!(
            root.resource.get("service.name").map(String::as_str),
            Some("albedo"),
            "the configuration file decides, not the agent's shell"
        );
    }
    let in_trace = |root: &FlatSpan, name: &str| -> Vec<&FlatSpan> {
        spans
            .iter()
            .filter(|s| s.span.trace_id == root.span.trace_id && s.span.name == name)
            .collect()
    };
    // The first turn: the shell call by its own id, a second long, and the continuation of
    // the blocked stop in the same trace: three model calls.
    let shell = in_trace(roots[0], SHELL);
    assert_eq!(shell.len(), 1, "{tree}");
    assert_eq!(
        shell[0].attr("gen_ai.tool.call.id").as_deref(),
        Some("call_1"),
        "{tree}"
    );
    assert!(
        shell[0]
            .attr("gen_ai.tool.call.arguments")
            .unwrap_or_default()
            .contains(SLOW_COMMAND),
        "{tree}"
    );
    let took = shell[0].span.end_time_unix_nano - shell[0].span.start_time_unix_nano;
    assert!(
        took >= 1_000_000_000,
        "the call slept 1 s; its span says {took} ns:\n{tree}"
    );
    let chats = |root: &FlatSpan| {
        spans
            .iter()
            .filter(|s| {
                s.span.trace_id == root.span.trace_id
                    && s.attr("gen_ai.operation.name").as_deref() == Some("chat")
            })
            .count()
    };
    // The second: its answer, and the continuation of its blocked stop.
    assert_eq!((chats(roots[0]), chats(roots[1])), (3, 2), "{tree}");
    assert!(in_trace(roots[1], SHELL).is_empty(), "{tree}");
    for c in spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name").as_deref() == Some("chat"))
    {
        assert_eq!(
            c.attr("gen_ai.request.model").as_deref(),
            Some(UPSTREAM),
            "{tree}"
        );
        for s in &roots {
            if s.span.trace_id == c.span.trace_id {
                assert!(
                    c.span.start_time_unix_nano >= s.span.start_time_unix_nano
                        && c.span.end_time_unix_nano <= s.span.end_time_unix_nano,
                    "a model call outside its turn:\n{tree}"
                );
            }
        }
    }
    // Each call's tokens, as the API answered them (input with the cache's reads).
    let sent: Vec<(u64, u64)> = api
        .sent()
        .iter()
        .map(|s| (s.prompt_tokens, s.output_tokens))
        .collect();
    assert_eq!(
        chat_tokens(&spans),
        sent,
        "the trace's tokens against the API's:\n{tree}\n{log}"
    );
    reconciled_with_ccusage(&home);
}

/// ccusage 20 reads Droid's session totals: the live route's store, which took each call's
/// usage from them, counts the same tokens, session by session.
fn reconciled_with_ccusage(home: &Path) {
    let Some(ccusage) = ccusage::find() else {
        return;
    };
    let live = ccusage::report(&home.join(".local/share"));
    let found = ccusage::sessions(&ccusage, "droid", &[("HOME", home)]);
    assert_eq!(live.len(), 2, "{live:?}");
    assert_eq!(
        live,
        ccusage::matched(&found, &live),
        "the live route's store against ccusage droid"
    );
}
