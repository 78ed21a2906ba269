//! Which agent's hooks a payload comes from: named on the hook's command line (`--agent`),
//! written into its journal line, and read by the daemon, with the [`Spec`] its folder writes.

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

pub use super::spec::{as_sent, own_journal, Env, Form, Hooks, Install, Spec};

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
