//! `doctor`: does the route work as the host runs it? The configuration is resolved and a
//! test trace sent directly; then each installed hook command is run as the host runs it
//! (with no `OTEL_*` in its environment, as Claude Code leaves it, from another folder) with
//! a test payload, and the daemon's answer says whether the collector took a test trace with
//! the settings that payload was handed off with. Each failure is one line, with its fix;
//! any failure exits 1.
//!
//! A hook command is never handed to a shell: it is parsed, and only our own executable
//! (`albedo-otel-hook`, or `albedo-otel hook`, by its file name) is started, with its
//! arguments (and the `NAME=value` settings older installs put first); any other command is
//! a failure, not run. A checkout's `.claude/settings.json` is tested only with `--project`:
//! whoever wrote the checkout wrote that file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::{install, ExportArgs, HookArgs};
use albedo_otel::config::ExporterKind;
use albedo_otel::sources::command_hooks::agent::{Agent, Form};
use albedo_otel::sources::command_hooks::{daemon, doctor, journal};

/// How long the daemon has to answer a test payload (it sends a trace with a 10 s timeout).
const ANSWER_WITHIN: Duration = Duration::from_secs(20);

/// Prints a result line; returns whether it was a success.
fn report(ok: bool, what: &str, message: &str) -> bool {
    println!("{} {what}: {message}", if ok { "ok  " } else { "FAIL" });
    ok
}

pub fn run(
    args: &ExportArgs,
    hook_args: &HookArgs,
    settings_files: &[PathBuf],
    project: bool,
) -> Result<i32> {
    println!("albedo-otel {}", env!("CARGO_PKG_VERSION"));
    let mut ok = true;
    match args.settings(Some(hook_args)) {
        Err(e) => ok &= report(false, "configuration", &format!("{e:#}")),
        Ok(resolved) => {
            match &resolved.file {
                Some(f) => println!("configuration file: {}", f.path.display()),
                None => println!("configuration file: none"),
            }
            if let (ExporterKind::Otlp, Some(otlp)) = (&resolved.exporter, &resolved.otlp) {
                let keys: Vec<_> = otlp.headers.iter().map(|(k, _)| k.as_str()).collect();
                if !keys.is_empty() {
                    println!("  headers: {} (values hidden)", keys.join(", "));
                }
                if let Some(hint) = otlp.port_hint() {
                    println!("  note: {hint}");
                }
            }
            let answer = doctor::probe(&resolved, Duration::from_secs(10));
            ok &= report(answer.ok, "direct test", &answer.message);
            if answer.ok && !answer.trace_id.is_empty() {
                println!(
                    "  find it: service `{}`, span `albedo-otel doctor`, trace id {}",
                    resolved.pipeline.resource.service_name(),
                    answer.trace_id
                );
            }
        }
    }
    // Each place a hook of ours may be, and how that file takes it; albedo's and a named
    // settings file are hooks files of Claude Code's shape.
    let hooks_file = Agent::ClaudeCode.spec().install.form;
    let mut places: Vec<(String, PathBuf, Form)> = settings_files
        .iter()
        .map(|f| {
            (
                "Claude Code (--settings)".to_string(),
                f.clone(),
                hooks_file,
            )
        })
        .collect();
    if settings_files.is_empty() {
        // Every agent's files, where its spec says `install` puts them.
        let env = |k: &str| std::env::var(k).ok();
        for agent in Agent::ALL {
            let install = &agent.spec().install;
            let title = agent.title();
            let user = (install.user_file)(&env);
            if let Some(user) = &user {
                places.push((format!("{title} (user)"), user.clone(), install.form));
            }
            let here = PathBuf::from(install.project_file);
            if let Some(user) = &user {
                both_scopes(agent, user, &here);
            }
            if project {
                places.push((format!("{title} (this project)"), here, install.form));
            } else if !install::installed_commands(&here, &install.form).is_empty() {
                println!(
                    "hook, {title} (this project): {} has our hook; not run (`doctor --project` tests it, which runs the command it names)",
                    here.display()
                );
            }
        }
        if let Some(a) = std::env::var_os("ALBEDO_HOME") {
            places.push((
                "albedo hooks".into(),
                PathBuf::from(a).join("hooks.json"),
                hooks_file,
            ));
        }
    }
    for (what, file, form) in places {
        let commands = install::installed_commands(&file, &form);
        if commands.is_empty() {
            println!("hook, {what}: not installed ({})", file.display());
            continue;
        }
        for command in commands {
            println!("hook, {what}: {} runs `{command}`", file.display());
            let (passed, message) = test_route(&command);
            ok &= report(passed, &format!("hook, {what}"), &message);
        }
    }
    let hook_dir = args
        .settings(Some(hook_args))
        .ok()
        .and_then(|s| s.hooks.dir);
    if let Some(dir) = hook_dir {
        println!(
            "hook journals: {} ({} open), daemon {}",
            dir.display(),
            journal::list(&dir).len(),
            if dir.exists() && daemon::running(&dir) {
                "running"
            } else {
                "not running (a hook starts it)"
            }
        );
    }
    Ok(if ok { 0 } else { 1 })
}

/// Warns when an agent's user settings and this project's both have a hook of ours: it runs
/// the hooks of both, so every event would be recorded twice (unless it runs a command both
/// name once, as Claude Code does).
fn both_scopes(agent: Agent, user: &Path, project: &Path) {
    let same = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (theirs, ours) = (
        install::installed_commands(user, &agent.spec().install.form),
        install::installed_commands(project, &agent.spec().install.form),
    );
    let once = agent.spec().install.one_run_per_command && theirs == ours;
    if theirs.is_empty() || ours.is_empty() || once || same(user) == same(project) {
        return;
    }
    println!(
        "warn hook, {title}: {} and {} both have our hook, and {title} runs both, so every event is recorded twice; keep one (`albedo-otel uninstall {} --project` removes this project's)",
        user.display(),
        project.display(),
        agent.name(),
        title = agent.title(),
    );
}

/// Runs `command` as the host would, with a test payload, and waits for the daemon's answer.
fn test_route(command: &str) -> (bool, String) {
    let Some((program, words)) = install::program(command) else {
        return (
            false,
            "the hook command is empty; run `albedo-otel install` again".into(),
        );
    };
    // A checkout's files name what they like (a plugin's command is any program): only our
    // own hook is run.
    if !install::is_our_program(&program, &words) {
        return (
            false,
            format!(
                "`{program}` is not albedo-otel's command (albedo-otel-hook, or albedo-otel hook); not run. Remove it, or run `albedo-otel install` again"
            ),
        );
    }
    if !Path::new(&program).is_file() {
        return (
            false,
            format!(
                "the hook command points at a binary that no longer exists ({program}); run `albedo-otel install` again"
            ),
        );
    }
    let hook_dir = words
        .iter()
        .position(|w| w == "--hook-dir")
        .and_then(|i| words.get(i + 1))
        .map(PathBuf::from)
        .or_else(|| albedo_otel::config::default_hook_dir(&|k| std::env::var(k).ok()));
    let Some(hook_dir) = hook_dir else {
        return (false, "the hook command names no journal folder and HOME is not set; run `albedo-otel install` again".into());
    };
    let id = format!("{:x}", albedo_otel::clock::unix_ns());
    let payload = serde_json::json!({
        "session_id": format!("albedo-otel-doctor-{id}"),
        "hook_event_name": doctor::EVENT,
        "doctor_id": id,
    });
    let answer_file = doctor::answer_path(&hook_dir, &id);
    // As Claude Code runs it, with no OTEL_* variables, in another folder; but our executable
    // itself rather than a shell, so nothing else in the line runs.
    let mut cmd = Command::new(&program);
    cmd.args(&words)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("OTEL_") {
            cmd.env_remove(k);
        }
    }
    // After the removals: the command's own `NAME=value` settings are what a shell would set.
    cmd.envs(install::settings_before(command));
    let child = cmd.spawn().and_then(|mut c| {
        if let Some(mut stdin) = c.stdin.take() {
            stdin.write_all(payload.to_string().as_bytes())?;
        }
        c.wait_with_output()
    });
    match child {
        Err(e) => return (false, format!("the hook command could not run: {e}")),
        Ok(out) if !out.status.success() => {
            return (
                false,
                format!(
                    "the hook command exited with {}: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            )
        }
        Ok(_) => {}
    }
    let deadline = Instant::now() + ANSWER_WITHIN;
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read(&answer_file) {
            let _ = std::fs::remove_file(&answer_file);
            return match serde_json::from_slice::<doctor::Answer>(&text) {
                Ok(a) => (
                    a.ok,
                    format!("through the hook and its daemon: {}", a.message),
                ),
                Err(e) => (false, format!("the daemon's answer is unreadable: {e}")),
            };
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (
        false,
        format!(
            "the hook ran, but its daemon did not answer within {} s; see {}",
            ANSWER_WITHIN.as_secs(),
            hook_dir.join(journal::DAEMON_LOG).display()
        ),
    )
}
