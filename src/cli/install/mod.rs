//! `install` and `uninstall`: albedo-otel's command hook where each agent's spec says, in the
//! form it says ([`writer`]): an entry in a JSON hooks file (Claude Code's, Gemini's, Codex's,
//! Copilot's, Qwen's, Cursor's, albedo's `$ALBEDO_HOME/hooks.json`: [`hooks_file`]), a plugin
//! file of our own (opencode, Kilo Code, Pi: [`plugin`]), a script per event (Cline:
//! [`scripts`]), or `[[hooks]]` tables in a TOML file (Kimi Code: [`toml_hooks`]).
//!
//! The settings in force when `install` runs (flags and environment, headers included) are
//! written into the configuration file, and the hook command names that file: hosts strip the
//! environment from hooks (Claude Code removes every `OTEL_*`; albedo runs them with a clean
//! one), and a settings file may be committed, so the command carries no secret and no
//! setting, only where the file and the journals are.
//!
//! Every other hook, and every other setting, is kept as it was (key order included); a copy
//! of the file is written before it changes (next to it, or for a project's, in the state
//! folder: [`project`]); running `install` twice leaves the same file as once; `uninstall`
//! removes our entries and nothing else.

mod codex_trust;
mod command;
mod hooks_file;
mod plugin;
mod project;
mod scope;
mod scripts;
mod settings;
mod statusline;
mod toml_hooks;
mod versions;
mod writer;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use command::command;
pub use command::{is_our_program, program, settings_before};
use writer::Writer;

use super::{process_env, ExportArgs};
use albedo_otel::config::{self, edit, mask, snapshot};
// What each agent's hook needs of `install` is in its folder's spec.
use albedo_otel::sources::command_hooks::agent::{Agent, Form, Hooks};

/// `install`'s and `uninstall`'s arguments: whose hooks, in which scope.
#[derive(Args)]
pub struct Target {
    /// Whose hooks
    #[arg(value_name = "AGENT", value_parser = whose_hooks())]
    whose: Whose,
    /// The user's settings file (the default)
    #[arg(long, conflicts_with = "project")]
    user: bool,
    /// This project's settings file
    #[arg(long)]
    project: bool,
    /// Another settings file
    #[arg(long, value_name = "FILE", conflicts_with_all = ["user", "project"])]
    settings: Option<PathBuf>,
    /// Where journals go [default: $XDG_STATE_HOME/albedo-otel/hooks]
    #[arg(long, value_name = "DIR")]
    hook_dir: Option<PathBuf>,
    /// Codex only: trust albedo-otel's own hooks in Codex's config.toml, so that Codex runs
    /// them without asking (it skips untrusted hooks without a word)
    #[arg(long)]
    trust: bool,
    /// Point other agents' hooks that run another version's copy of albedo-otel (install
    /// names them) at this one's
    #[arg(long)]
    move_others: bool,
    /// Claude Code only: also set its status line to `albedo-otel statusline` (cost and
    /// tokens from the local store)
    #[arg(long)]
    statusline: bool,
    /// With --statusline: replace a status line of your own (a backup is kept)
    #[arg(long, requires = "statusline")]
    force: bool,
    /// albedo only: albedo's home [env: ALBEDO_HOME]
    #[arg(long, value_name = "DIR")]
    albedo_home: Option<PathBuf>,
    #[command(flatten)]
    export: ExportArgs,
}

/// An agent of the registry, or albedo's `hooks` extension, which sends Claude Code's
/// payloads from a hooks file of its own.
#[derive(Debug, Clone, Copy)]
enum Whose {
    Agent(Agent),
    Albedo,
}

/// Every agent's name, with its spec's line for `--help`, and albedo.
fn whose_hooks() -> impl clap::builder::TypedValueParser<Value = Whose> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Agent::ALL
        .iter()
        .map(|a| PossibleValue::new(a.name()).help(a.spec().install.about))
        .chain([PossibleValue::new("albedo")
            .help("albedo's `hooks` extension: $ALBEDO_HOME/hooks.json")]);
    PossibleValuesParser::new(values)
        .map(|name| Agent::from_name(&name).map_or(Whose::Albedo, Whose::Agent))
}

/// The events albedo's `hooks` extension runs command hooks for.
const ALBEDO_EVENTS: &[&str] = &["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"];

/// albedo's hooks file takes Claude Code's hooks, for fewer events.
fn albedo_hooks() -> Hooks {
    match Agent::ClaudeCode.spec().install.form {
        Form::Hooks(h) => Hooks {
            events: ALBEDO_EVENTS,
            ..h
        },
        Form::Plugin(_) | Form::Flat(_) | Form::Scripts(_) | Form::TomlTables(_) => {
            unreachable!("Claude Code has a hooks file")
        }
    }
}

impl Target {
    fn agent(&self) -> Option<Agent> {
        match self.whose {
            Whose::Agent(a) => Some(a),
            Whose::Albedo => None,
        }
    }

    fn export(&self) -> &ExportArgs {
        &self.export
    }

    fn trust(&self) -> bool {
        self.trust
    }

    fn hook_dir_flag(&self) -> Option<PathBuf> {
        self.hook_dir.clone()
    }

    /// Flags that do not fit whose hooks they are: albedo has one hooks file and no trust; only albedo
    /// has a home to name.
    fn check_flags(&self) -> Result<()> {
        match self.agent() {
            None if self.user || self.project || self.settings.is_some() || self.trust => {
                anyhow::bail!("albedo has one hooks file, $ALBEDO_HOME/hooks.json: --user, --project, --settings and --trust are for agents")
            }
            Some(a) if self.albedo_home.is_some() => {
                anyhow::bail!("--albedo-home is for albedo, not {}", a.name())
            }
            a if self.statusline && a != Some(Agent::default()) => {
                anyhow::bail!("--statusline is for Claude Code, whose status line runs a command")
            }
            _ => Ok(()),
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
        if self.agent().is_some() && self.project {
            let root = std::env::current_dir()?;
            let root = root.canonicalize().unwrap_or(root);
            return Ok(user
                .with_file_name("projects")
                .join(format!("{}.toml", project::label(&root, &root))));
        }
        Ok(user)
    }
}

pub fn install(target: &Target) -> Result<i32> {
    target.check_flags()?;
    let (file, form) = target.file_and_form()?;
    target.check_project_file(&file)?;
    if target.trust() && !target.agent().is_some_and(|a| a.spec().install.asks_trust) {
        anyhow::bail!("--trust is for Codex, the one agent that asks to trust each hook");
    }
    if target.trust() && target.codex_key_file().is_none() {
        anyhow::bail!("--trust needs Codex's own hooks file (the user's or this project's), not --settings: Codex reads no other");
    }
    let writer = writer_of(&form);
    writer.check(&file)?;
    if target.statusline {
        statusline::check(&file, target.force)?;
    }
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
            // The hook's environment, as Claude Code and Copilot leave it: no OTEL_*.
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
            otlp.shown_endpoint(),
            otlp.protocol.as_str()
        );
    }
    // A hook without `--agent` is Claude Code's (or albedo's, which sends Claude Code's
    // payloads).
    let agent_flag = target
        .agent()
        .filter(|a| *a != Agent::default())
        .map(Agent::name);
    let command = command(&config_file, &hook_dir, agent_flag)?;
    for line in writer.install(&file, &command, &form.events().join(", "), target)? {
        println!("{line}");
    }
    if let Some(warning) = target.both_scopes(&file, &command) {
        println!("warning: {warning}");
    }
    for line in versions::others(&file, &command, target.move_others)? {
        println!("{line}");
    }
    if target.statusline {
        let line = command::statusline_command(&config_file)?;
        println!(
            "{}",
            statusline::set(&file, &line, target.force, &target.backup_of(&file)?)?
        );
    }
    Ok(0)
}

pub fn uninstall(target: &Target) -> Result<i32> {
    target.check_flags()?;
    let (file, form) = target.file_and_form()?;
    target.check_project_file(&file)?;
    if target.trust() {
        anyhow::bail!("--trust is for install; uninstall takes our hooks' trust out by itself");
    }
    if target.move_others {
        anyhow::bail!("--move-others is for install");
    }
    for line in writer_of(&form).uninstall(&file, target)? {
        println!("{line}");
    }
    if target.agent() == Some(Agent::default()) {
        if let Some(said) = statusline::remove(&file, &target.backup_of(&file)?)? {
            println!("{said}");
        }
    }
    Ok(0)
}

/// The writer of `form`.
fn writer_of(form: &Form) -> Box<dyn Writer + '_> {
    match form {
        Form::Hooks(_) | Form::Flat(_) => Box::new(hooks_file::HooksFile(form)),
        Form::Plugin(p) => Box::new(plugin::PluginFile(p)),
        Form::Scripts(s) => Box::new(scripts::HookScripts(s)),
        Form::TomlTables(t) => Box::new(toml_hooks::Tables(t)),
    }
}

/// Our hook commands in `file`, which takes our hook as `form` says (one per event, usually
/// the same), for `doctor`.
pub fn installed_commands(file: &std::path::Path, form: &Form) -> Vec<String> {
    writer_of(form).commands(file)
}
