//! What the shared hook path needs of each agent, a [`Spec`] its folder writes: a leaf that
//! imports nothing, so the agents' folders depend on it and nothing depends back on them.

/// What the shared hook and daemon need to know of one agent, written once in its folder
/// (`SPEC` beside its adapter), not as a test on its name in shared code.
#[derive(Debug)]
pub struct Spec {
    /// The name on a hook's command line (`--agent`) and in the journal.
    pub name: &'static str,
    /// The agent's name as its users know it.
    pub title: &'static str,
    /// The module the spec is written in (`module_path!()`): its folder is the agent's.
    pub folder: &'static str,
    /// What the agent's folder holds: its row in the README's Layout table.
    pub holds: &'static str,
    /// The one other agent whose folder this one's builds on (Codex on Claude Code, Kilo on
    /// opencode): no agent's folder uses another's but this one.
    pub extends: Option<&'static str>,
    /// The agent's CLI as CI installs it for the tests that run it.
    pub cli: Option<Cli>,
    /// Whether the agent runs its hooks with its own whole environment. Such a hook's
    /// `OTEL_*` variables are the user's shell's, meant for other programs, so they are not
    /// handed off: the configuration file `install` wrote decides.
    pub passes_its_environment: bool,
    /// Whether the hook reads a stream of payloads, one JSON object a line, until its input
    /// closes, rather than one payload (opencode's plugin writes every event into one hook).
    pub streams: bool,
    /// The session whose journal a payload goes in, when not its own (a Copilot sub-agent's
    /// hooks go in its parent's, read in one order with the call that started it).
    pub journal_under: fn(payload: &str) -> Option<String>,
    /// The payload as journaled, when not as it came (Gemini's model hooks without the
    /// history they repeat; Copilot's prompt with the path of its log).
    pub rewrite: fn(payload: &str, env: Env<'_>) -> Option<String>,
    /// For an agent that runs Claude Code's hooks too (Cursor, beside its own `hooks.json`):
    /// whether it also hands this payload to our hook in a hooks file of its own, so that the
    /// route through Claude Code's hook gives way and the event is journaled once.
    pub runs_ours_too: fn(payload: &str, env: Env<'_>) -> bool,
    /// How `install` puts the hook in place.
    pub install: Install,
}

/// How `import` reads an agent's history from its own files.
#[derive(Debug, Clone, Copy)]
pub enum History {
    /// Its session files: under `roots`, each that `is_session` takes, read whole.
    Files(HistoryFiles),
    /// Its session files, whose calls carry no id the live route's do (the same call read
    /// both ways could not be told for one): of a session the live route traced, only the
    /// turns before the first it traced and after the last are read (`untraced`).
    Untraced(HistoryFiles),
    /// Its database: under `roots`, each file `is_database` takes, opened by `records`.
    Database(HistoryDatabase),
    /// Nothing to read yet, and why.
    Cannot(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct HistoryDatabase {
    /// Where the agent keeps its database, from the environment.
    pub roots: fn(env: Env<'_>) -> Vec<std::path::PathBuf>,
    /// Whether a file under a root is the agent's database.
    pub is_database: fn(path: &std::path::Path) -> bool,
    /// The records of every session in the database at `path` written to since `since_ms`
    /// (Unix ms), what the live route would have made of them, handed to `each` a session
    /// (with its sub-agents) at a time; an error says why it could not be read.
    pub records: fn(
        path: &std::path::Path,
        since_ms: Option<u64>,
        each: &mut Each<'_>,
    ) -> Result<(), String>,
}

/// Where a database's records go, a session (with its sub-agents) at a time.
pub type Each<'a> = dyn FnMut(Vec<crate::protocol::Record<'static>>) + 'a;

#[derive(Debug, Clone, Copy)]
pub struct HistoryFiles {
    /// Where the agent keeps its sessions, from the environment (its own variable, `HOME`).
    pub roots: fn(env: Env<'_>) -> Vec<std::path::PathBuf>,
    /// Whether a file under a root is a session's.
    pub is_session: fn(path: &std::path::Path) -> bool,
    /// The records of the session file at `path`, whose contents are `bytes`: what the live
    /// route would have made of it, read as `reading` says.
    pub records: fn(
        path: &std::path::Path,
        bytes: &[u8],
        reading: Reading,
    ) -> Vec<crate::protocol::Record<'static>>,
}

/// How an import reads an agent's files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    /// How much of its conversation a model call carries as its input messages, in bytes, as
    /// the live route's `message_budget`: 0, none (capture off, or an import into the store
    /// alone, which keeps no messages).
    pub message_budget: usize,
}

/// An agent's CLI, pinned: `.ci/run` installs exactly this (`agent_cli` lines, checked by the
/// conformance suite), and the tests that run it find it by `var`.
#[derive(Debug, Clone, Copy)]
pub struct Cli {
    /// The npm package.
    pub package: &'static str,
    pub version: &'static str,
    /// The executable it puts in `node_modules/.bin`.
    pub bin: &'static str,
    /// The variable naming that executable, for the tests.
    pub var: &'static str,
    /// Whether it needs Node 22 (Debian has 20): run with `ALBEDO_OTEL_NODE22_DIR` first on
    /// its `PATH`.
    pub node22: bool,
}

impl Spec {
    /// The agent's folder under `src/sources/command_hooks/`.
    pub fn folder_name(&self) -> &'static str {
        let after = self
            .folder
            .split_once("command_hooks::")
            .map_or(self.folder, |(_, rest)| rest);
        after.split("::").next().unwrap_or(after)
    }

    /// The line `.ci/run` installs the agent's CLI with, if it has one.
    pub fn ci_line(&self) -> Option<String> {
        let c = self.cli?;
        let node22 = if c.node22 { " node22" } else { "" };
        Some(format!(
            "agent_cli {} {} {} {} {}{node22}",
            self.name, c.package, c.version, c.bin, c.var
        ))
    }
}

/// Where a hook looks its variables up.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// For a spec whose payloads go in their own session's journal.
pub fn own_journal(_: &str) -> Option<String> {
    None
}

/// For a spec whose payloads are journaled as they come.
pub fn as_sent(_: &str, _: Env<'_>) -> Option<String> {
    None
}

/// For a spec whose agent never hands one payload to our hook twice.
pub fn runs_ours_once(_: &str, _: Env<'_>) -> bool {
    false
}

/// How `install` puts an agent's hook in place, and where: written once in the agent's
/// folder, so `install`, `uninstall` and `doctor` hold no list of agents of their own.
#[derive(Debug)]
pub struct Install {
    /// `install --help`'s line for the agent: where its hook goes in each scope.
    pub about: &'static str,
    /// The user's own file, from the environment; `None` when what it needs is unset.
    pub user_file: fn(env: Env<'_>) -> Option<std::path::PathBuf>,
    /// What [`Install::user_file`] needs, for the error when it finds nothing.
    pub user_needs: &'static str,
    /// A project's file, relative to the project's folder.
    pub project_file: &'static str,
    /// A hooks file, or a plugin of our own.
    pub form: Form,
    /// Whether the agent runs a hook only once the user trusts it (Codex): `--trust`.
    pub asks_trust: bool,
    /// Whether the agent runs a command that both scopes name once (Claude Code): then ours
    /// in both scopes records nothing twice.
    pub one_run_per_command: bool,
}

/// What `install` writes for an agent.
#[derive(Debug, Clone, Copy)]
pub enum Form {
    /// Our entries in the agent's `hooks` → event → groups file.
    Hooks(Hooks),
    /// A plugin file of our own, which starts the hook and hands it events (opencode has no
    /// command hooks).
    Plugin(Plugin),
    /// Our entries listed directly under each event of a `{"version": N, "hooks": …}` file,
    /// `{"command": …}` each, with no groups (Cursor's `hooks.json`).
    Flat(Flat),
    /// An executable script of our own per event, named after it, in the agent's hooks
    /// folder (Cline's): the install's file is that folder.
    Scripts(Scripts),
    /// Our `[[hooks]]` tables in the agent's TOML configuration, `event`, `command` and
    /// `timeout` each (Kimi Code's `config.toml`), among the user's own tables.
    TomlTables(TomlTables),
}

/// Hook scripts of albedo-otel's own, one per event: their text comes from the agent's
/// folder, which alone knows what the agent asks of a hook's output.
#[derive(Debug, Clone, Copy)]
pub struct Scripts {
    /// The events, each a script of that name.
    pub events: &'static [&'static str],
    /// A script's text, running `command` (its words).
    pub text: fn(command: &[String]) -> String,
    /// The command a script's text runs, if the text is our script's; `install` and
    /// `uninstall` touch no file but ours.
    pub command_in: fn(text: &str) -> Option<Vec<String>>,
}

/// How a TOML configuration takes our hook: a `[[hooks]]` table per event (Kimi Code's).
#[derive(Debug, Clone, Copy)]
pub struct TomlTables {
    /// The events the hook goes in for.
    pub events: &'static [&'static str],
    /// Events whose tables match on the tool name (`matcher = ".*"`).
    pub tool_events: &'static [&'static str],
    /// The hook's `timeout`, in seconds.
    pub timeout: u64,
}

/// A plugin file of albedo-otel's own: its text comes from the agent's folder, which alone
/// knows the agent's plugin API.
#[derive(Debug, Clone, Copy)]
pub struct Plugin {
    /// The events the plugin hands the hook.
    pub events: &'static [&'static str],
    /// The plugin's text, starting `command` (its words).
    pub text: fn(command: &[String]) -> String,
    /// The command a plugin's text starts, if the text is our plugin's; `install` and
    /// `uninstall` touch no file but ours, and `doctor` names what another's would run.
    pub command_in: fn(text: &str) -> Option<Vec<String>>,
}

/// How a flat hooks file takes our hook (Cursor's).
#[derive(Debug, Clone, Copy)]
pub struct Flat {
    /// The events the hook goes in for. Each must be one the agent knows: Cursor discards a
    /// whole file that names one it does not.
    pub events: &'static [&'static str],
    /// Every event the agent knows, for the check that we write no other.
    pub known: &'static [&'static str],
    /// The `version` the file carries (set when the file has none).
    pub version: u64,
}

/// How an agent's hooks file takes our hook: the same shape for all, with these
/// differences.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// The events the hook goes in for: those that make a trace.
    pub events: &'static [&'static str],
    /// Events whose groups match on the tool name (`"matcher": "*"`).
    pub tool_events: &'static [&'static str],
    /// The hook's `timeout`, in the agent's unit: ten seconds (Gemini counts milliseconds).
    pub timeout: u64,
    /// Events whose timeout the agent cuts to three seconds (and says so on every run if it
    /// is longer): Codex's `SessionEnd` and `Interrupt`.
    pub short: &'static [&'static str],
    /// Whether each hook carries a `name`.
    pub named: bool,
}

impl Form {
    /// The events our hook is handed.
    pub fn events(&self) -> &'static [&'static str] {
        match self {
            Form::Hooks(h) => h.events,
            Form::Plugin(p) => p.events,
            Form::Flat(f) => f.events,
            Form::Scripts(s) => s.events,
            Form::TomlTables(t) => t.events,
        }
    }
}

/// A file under `$HOME`, for [`Install::user_file`].
pub fn under_home(env: Env<'_>, path: &str) -> Option<std::path::PathBuf> {
    Some(std::path::Path::new(&env("HOME").filter(|h| !h.is_empty())?).join(path))
}
