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
