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
    /// opencode: a plugin, not a command hook, streams its events to one hook process.
    Opencode,
}

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Codex,
        Agent::Copilot,
        Agent::Opencode,
    ];

    /// The name on a hook's command line and in the journal.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Gemini => "gemini",
            Agent::Codex => "codex",
            Agent::Copilot => "copilot",
            Agent::Opencode => "opencode",
        }
    }

    /// The agent's name as its users know it.
    pub fn title(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Gemini => "Gemini CLI",
            Agent::Codex => "Codex CLI",
            Agent::Copilot => "Copilot CLI",
            Agent::Opencode => "opencode",
        }
    }

    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether the agent runs its hooks with its own whole environment. Such a hook's
    /// `OTEL_*` variables are the user's shell's, meant for other programs, so they are not
    /// handed off: the configuration file `install` wrote decides.
    pub fn passes_its_environment(self) -> bool {
        matches!(self, Agent::Gemini | Agent::Codex | Agent::Opencode)
    }

    /// Whether the hook reads a stream of payloads, one JSON object a line, until its input
    /// closes, rather than one payload. opencode has no command hooks: its plugin starts one
    /// hook process and writes every event into it, in order, for as long as opencode runs.
    pub fn streams(self) -> bool {
        self == Agent::Opencode
    }
}
