//! `install` and `uninstall`: albedo-otel's command hook in Claude Code's `settings.json` or in
//! albedo's `$ALBEDO_HOME/hooks.json` (the same format).
//!
//! The settings in force when `install` runs (flags and environment, headers included) are
//! written into the configuration file, and the hook command names that file: hosts strip the
//! environment from hooks (Claude Code removes every `OTEL_*`; albedo runs them with a clean
//! one), and a settings file may be committed, so the command carries no secret and no
//! setting, only where the file and the journals are.
//!
//! Every other hook, and every other setting, is kept as it was (key order included); a copy
//! of the file is written next to it before it changes; running `install` twice leaves the same
//! file as once; `uninstall` removes our entries and nothing else.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

use super::{process_env, ExportArgs};
use albedo_otel::config::{self, edit, mask, snapshot};

#[derive(Args)]
pub struct Target {
    #[command(subcommand)]
    host: Host,
}

#[derive(Subcommand)]
enum Host {
    /// Claude Code: ~/.claude/settings.json (default) or ./.claude/settings.json
    ClaudeCode {
        /// The user's settings, ~/.claude/settings.json
        #[arg(long, conflicts_with = "project")]
        user: bool,
        /// This project's settings, ./.claude/settings.json
        #[arg(long)]
        project: bool,
        /// Another settings file
        #[arg(long, value_name = "FILE", conflicts_with_all = ["user", "project"])]
        settings: Option<PathBuf>,
        /// Where journals go [default: $XDG_STATE_HOME/albedo-otel/hooks]
        #[arg(long, value_name = "DIR")]
        hook_dir: Option<PathBuf>,
        #[command(flatten)]
        export: ExportArgs,
    },
    /// albedo's `hooks` extension: $ALBEDO_HOME/hooks.json
    Albedo {
        /// albedo's home [env: ALBEDO_HOME]
        #[arg(long, value_name = "DIR")]
        albedo_home: Option<PathBuf>,
        /// Where journals go [default: $XDG_STATE_HOME/albedo-otel/hooks]
        #[arg(long, value_name = "DIR")]
        hook_dir: Option<PathBuf>,
        #[command(flatten)]
        export: ExportArgs,
    },
}

/// Claude Code's events that make a trace.
const CLAUDE_CODE_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
];
/// The events albedo's `hooks` extension runs command hooks for.
const ALBEDO_EVENTS: &[&str] = &["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"];
/// Events that match on the tool name.
const TOOL_EVENTS: &[&str] = &["PreToolUse", "PostToolUse", "PostToolUseFailure"];
impl Target {
    fn export(&self) -> &ExportArgs {
        match &self.host {
            Host::ClaudeCode { export, .. } | Host::Albedo { export, .. } => export,
        }
    }

    fn hook_dir_flag(&self) -> Option<PathBuf> {
        match &self.host {
            Host::ClaudeCode { hook_dir, .. } | Host::Albedo { hook_dir, .. } => hook_dir.clone(),
        }
    }

    /// The configuration file this install's hooks use: `--config`, else, for a project's
    /// settings (which people commit), a file of that project's own outside it, else the
    /// user's file.
    fn config_file(&self) -> Result<PathBuf> {
        let overrides = self.export().overrides(None);
        let user = config::config_path(&overrides, &process_env).context(
            "no place for the configuration file: set --config, ALBEDO_OTEL_CONFIG, XDG_CONFIG_HOME or HOME",
        )?;
        if overrides.config.is_some() || process_env(config::env::ALBEDO_OTEL_CONFIG).is_some() {
            return Ok(user);
        }
        match &self.host {
            Host::ClaudeCode { project: true, .. } => {
                let root = std::env::current_dir()?;
                let root = root.canonicalize().unwrap_or(root);
                let name: String = root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .take(40)
                    .collect();
                let hash = xxhash_rust::xxh3::xxh3_64(root.to_string_lossy().as_bytes());
                Ok(user
                    .with_file_name("projects")
                    .join(format!("{name}-{hash:08x}.toml", hash = hash as u32)))
            }
            _ => Ok(user),
        }
    }

    fn file_and_events(&self) -> Result<(PathBuf, &'static [&'static str])> {
        Ok(match &self.host {
            Host::ClaudeCode {
                project, settings, ..
            } => {
                let file = match (settings, project) {
                    (Some(f), _) => f.clone(),
                    (None, true) => PathBuf::from(".claude/settings.json"),
                    (None, false) => {
                        let home = std::env::var_os("HOME").context("HOME is not set")?;
                        Path::new(&home).join(".claude/settings.json")
                    }
                };
                (file, CLAUDE_CODE_EVENTS)
            }
            Host::Albedo { albedo_home, .. } => {
                let home = albedo_home
                    .clone()
                    .or_else(|| std::env::var_os("ALBEDO_HOME").map(PathBuf::from))
                    .context("set ALBEDO_HOME or --albedo-home")?;
                (home.join("hooks.json"), ALBEDO_EVENTS)
            }
        })
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hook command: `albedo-otel-hook` from this binary's folder when it is there (it starts
/// in half the time: see docs/performance.md), else this binary's `hook`, with the
/// configuration file and the journal folder. albedo runs hooks with a clean environment,
/// perhaps without `HOME`, so both are named, not left to defaults.
fn command(config: &Path, hook_dir: &Path) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let small = exe.with_file_name(HOOK_BIN);
    let mut parts = Vec::new();
    if small.is_file() {
        parts.push(shell_quote(&small.to_string_lossy()));
    } else {
        parts.push(shell_quote(&exe.to_string_lossy()));
        parts.push("hook".into());
    }
    parts.push("--config".into());
    parts.push(shell_quote(&config.to_string_lossy()));
    parts.push("--hook-dir".into());
    parts.push(shell_quote(&hook_dir.to_string_lossy()));
    Ok(parts.join(" "))
}

/// The words of a command as `shell_quote` writes them (and as older installs did, with
/// `NAME=value` settings first): enough to find the program and its first argument.
pub fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut in_quote, mut any) = (false, false);
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_quote = !in_quote;
                any = true;
            }
            '\\' if !in_quote => {
                word.extend(chars.next());
                any = true;
            }
            c if c.is_whitespace() && !in_quote => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The program a hook command runs, past any `NAME=value` settings before it.
pub fn program(command: &str) -> Option<(String, Vec<String>)> {
    let mut w = words(command)
        .into_iter()
        .skip_while(|w| w.contains('=') && !w.starts_with('/'));
    let program = w.next()?;
    Some((program, w.collect()))
}

/// The small hook executable `cargo install` puts beside `albedo-otel`.
const HOOK_BIN: &str = "albedo-otel-hook";

fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .and_then(program)
        .is_some_and(|(p, args)| {
            p.ends_with(HOOK_BIN)
                || (p.ends_with("albedo-otel") && args.first().is_some_and(|a| a == "hook"))
        })
}

/// Removes our hooks from `settings`; returns how many. Groups and events we leave empty go
/// too; anything the user left empty stays.
fn remove_ours(settings: &mut Map<String, Value>) -> usize {
    let mut removed = 0;
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return 0;
    };
    hooks.retain(|_, groups| {
        let Some(groups) = groups.as_array_mut() else {
            return true;
        };
        let mut emptied = false;
        groups.retain_mut(|group| {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = list.len();
            list.retain(|h| !is_ours(h));
            let ours = before - list.len();
            removed += ours;
            let keep = ours == 0 || !list.is_empty();
            emptied |= !keep;
            keep
        });
        !(emptied && groups.is_empty())
    });
    if removed > 0 && hooks.is_empty() {
        settings.remove("hooks");
    }
    removed
}

fn add_ours(settings: &mut Map<String, Value>, events: &[&str], command: &str) -> Result<()> {
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .context("`hooks` is not an object")?;
    for event in events {
        let groups = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .with_context(|| format!("`hooks.{event}` is not a list"))?;
        let hook = json!({"type": "command", "command": command, "timeout": 10});
        let group = if TOOL_EVENTS.contains(event) {
            json!({"matcher": "*", "hooks": [hook]})
        } else {
            json!({"hooks": [hook]})
        };
        groups.push(group);
    }
    Ok(())
}

fn load(file: &Path) -> Result<(Option<String>, Map<String, Value>)> {
    match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => Ok((Some(text), Map::new())),
        Ok(text) => {
            let v: Value = serde_json::from_str(&text).with_context(|| {
                format!("{} is not valid JSON; not touching it", file.display())
            })?;
            match v {
                Value::Object(m) => Ok((Some(text), m)),
                _ => bail!("{} is not a JSON object; not touching it", file.display()),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, Map::new())),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

fn save(file: &Path, before: Option<&str>, settings: &Map<String, Value>) -> Result<bool> {
    let mut text = serde_json::to_string_pretty(settings)?;
    text.push('\n');
    if before == Some(text.as_str()) {
        return Ok(false);
    }
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if let Some(old) = before {
        let secs = albedo_otel::clock::unix_ms() / 1000;
        let backup = file.with_file_name(format!(
            "{}.albedo-otel-backup-{secs}",
            file.file_name().unwrap_or_default().to_string_lossy()
        ));
        std::fs::write(&backup, old)
            .with_context(|| format!("writing the backup {}", backup.display()))?;
        println!("backup: {}", backup.display());
    }
    let tmp = file.with_extension("albedo-otel-tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("replacing {}", file.display()))?;
    Ok(true)
}

pub fn install(target: &Target) -> Result<i32> {
    let (file, events) = target.file_and_events()?;
    let (before, mut settings) = load(&file)?;
    // The settings in force now go into the configuration file first.
    let export = target.export();
    let overrides = export.overrides(None);
    let config_file = target.config_file()?;
    let taken = snapshot(&overrides, &process_env);
    edit::write_snapshot(&config_file, &taken)?;
    // They must resolve as the daemon will resolve them: a bad value is an error now.
    let resolved = config::Settings::load(
        &config::Overrides {
            config: Some(config_file.clone()),
            ..config::Overrides::default()
        },
        &|k| {
            // The hook's environment, as Claude Code leaves it: no OTEL_*.
            if k.starts_with("OTEL_") {
                None
            } else {
                process_env(k)
            }
        },
    )?;
    let hook_dir = target
        .hook_dir_flag()
        .or_else(|| resolved.hooks.dir.clone())
        .context("no folder for hook journals: set --hook-dir, XDG_STATE_HOME or HOME")?;
    let written: Vec<String> = taken
        .values
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .chain(
            taken
                .headers
                .iter()
                .map(|(k, v)| format!("otlp.headers.{k} = {}", mask(v))),
        )
        .collect();
    if written.is_empty() {
        println!(
            "settings: none set in flags or the environment; {} keeps what it has (0600)",
            config_file.display()
        );
    } else {
        println!("settings written to {} (0600):", config_file.display());
        for w in &written {
            println!("  {w}");
        }
    }
    if let Some(otlp) = &resolved.otlp {
        println!(
            "hooks export to {} ({})",
            otlp.endpoint,
            otlp.protocol.as_str()
        );
    }
    remove_ours(&mut settings);
    let command = command(&config_file, &hook_dir)?;
    add_ours(&mut settings, events, &command)?;
    let changed = save(&file, before.as_deref(), &settings)?;
    println!(
        "{} {}: `{command}` on {}",
        if changed {
            "installed in"
        } else {
            "already installed in"
        },
        file.display(),
        events.join(", ")
    );
    Ok(0)
}

pub fn uninstall(target: &Target) -> Result<i32> {
    let (file, _) = target.file_and_events()?;
    let (before, mut settings) = load(&file)?;
    let removed = remove_ours(&mut settings);
    if removed == 0 {
        println!("nothing to remove in {}", file.display());
        return Ok(0);
    }
    save(&file, before.as_deref(), &settings)?;
    println!(
        "removed {removed} albedo-otel hooks from {}",
        file.display()
    );
    Ok(0)
}

/// Our hook commands in `file` (one per event, usually the same), for `doctor`.
pub fn installed_commands(file: &Path) -> Vec<String> {
    let Ok((_, settings)) = load(file) else {
        return Vec::new();
    };
    let mut out: Vec<String> = settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|h| h.values())
        .flat_map(|g| g.as_array().into_iter().flatten())
        .flat_map(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|h| is_ours(h))
        .filter_map(|h| h.get("command").and_then(Value::as_str).map(str::to_string))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_hooks_survive_and_install_is_idempotent() {
        let mut s: Map<String, Value> = serde_json::from_str(
            r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"my-guard"}]}],"Stop":[{"hooks":[{"type":"command","command":"/opt/albedo-otel hook"},{"type":"command","command":"notify"}]}]}}"#,
        )
        .unwrap();
        remove_ours(&mut s);
        add_ours(&mut s, CLAUDE_CODE_EVENTS, "/bin/albedo-otel hook").unwrap();
        let once = serde_json::to_string(&s).unwrap();
        remove_ours(&mut s);
        add_ours(&mut s, CLAUDE_CODE_EVENTS, "/bin/albedo-otel hook").unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), once, "idempotent");
        assert!(once.contains("my-guard") && once.contains("notify"));
        assert_eq!(
            once.matches("albedo-otel hook").count(),
            CLAUDE_CODE_EVENTS.len()
        );
        assert!(
            once.starts_with(r#"{"model":"x","hooks""#),
            "key order kept"
        );
        assert_eq!(remove_ours(&mut s), CLAUDE_CODE_EVENTS.len());
        let after = serde_json::to_string(&s).unwrap();
        assert_eq!(
            after,
            r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"my-guard"}]}],"Stop":[{"hooks":[{"type":"command","command":"notify"}]}]}}"#
        );
    }

    #[test]
    fn quoting_keeps_odd_paths_whole() {
        assert_eq!(shell_quote("/usr/bin/albedo-otel"), "/usr/bin/albedo-otel");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        let command = format!(
            "{} --config {}",
            shell_quote("/a b/it's"),
            shell_quote("/c d")
        );
        assert_eq!(words(&command), ["/a b/it's", "--config", "/c d"]);
        assert_eq!(
            program("OTEL_EXPORTER_OTLP_ENDPOINT=http://x:4317 /bin/albedo-otel-hook"),
            Some(("/bin/albedo-otel-hook".into(), vec![]))
        );
    }
}
