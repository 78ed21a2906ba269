//! Which agent's hooks a payload comes from: named on the hook's command line (`--agent`),
//! written into its journal line, and read by the daemon. Imports nothing, so the journal and
//! the hook can name an agent without the adapters.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Agent {
    /// Claude Code, and albedo's `hooks` extension.
    #[default]
    ClaudeCode,
    Gemini,
    Codex,
    Copilot,
}

impl Agent {
    pub const ALL: [Agent; 4] = [
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Codex,
        Agent::Copilot,
    ];

    /// The name on a hook's command line and in the journal.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether the agent runs its hooks with its own whole environment. Such a hook's
    /// `OTEL_*` variables are the user's shell's, meant for other programs, so they are not
    /// handed off: the configuration file `install` wrote decides.
    pub fn passes_its_environment(self) -> bool {
        matches!(self, Agent::Gemini | Agent::Codex)
    }
}
