//! Which agent's hooks a payload comes from: named on the hook's command line (`--agent`),
//! written into its journal line, and read by the daemon; and what the shared hook path needs
//! of each agent, its [`Spec`], which each agent's folder writes.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Agent {
    /// Claude Code, and albedo's `hooks` extension.
    #[default]
    ClaudeCode,
    Gemini,
    Codex,
    Copilot,
    /// opencode: a plugin, not a command hook, streams its events to one hook process.
    Opencode,
}

/// What the shared hook and daemon need to know of one agent, written once in its folder
/// (`SPEC` beside its adapter), not as a test on its name in shared code.
#[derive(Debug)]
pub struct Spec {
    /// The name on a hook's command line (`--agent`) and in the journal.
    pub name: &'static str,
    /// The agent's name as its users know it.
    pub title: &'static str,
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

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Codex,
        Agent::Copilot,
        Agent::Opencode,
    ];

    /// The agent's spec, from its folder.
    pub fn spec(self) -> &'static Spec {
        match self {
            Agent::ClaudeCode => &super::claude_code::SPEC,
            Agent::Gemini => &super::gemini::SPEC,
            Agent::Codex => &super::codex::SPEC,
            Agent::Copilot => &super::copilot::SPEC,
            Agent::Opencode => &super::opencode::SPEC,
        }
    }

    /// The name on a hook's command line and in the journal.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The agent's name as its users know it.
    pub fn title(self) -> &'static str {
        self.spec().title
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// See [`Spec::passes_its_environment`].
    pub fn passes_its_environment(self) -> bool {
        self.spec().passes_its_environment
    }

    /// See [`Spec::streams`].
    pub fn streams(self) -> bool {
        self.spec().streams
    }
}
