//! The agents, one [`Agent`] each, made from the list in `command_hooks/mod.rs`: whose hooks a
//! payload comes from, named on the hook's command line (`--agent gemini`, written by
//! `install`), written into its journal line, and read by the daemon, with the [`Spec`] its
//! folder writes. A hook without `--agent` is Claude Code's, or albedo's, which sends Claude
//! Code's payloads.

pub use super::spec::{
    as_sent, own_journal, Env, Flat, Form, History, HistoryDatabase, HistoryFiles, Hooks, Install,
    Plugin, Reading, Scripts, Spec, TomlTables,
};
pub use super::Agent;

/// Makes [`Agent`] from the list in `command_hooks/mod.rs`: each agent's folder (its module
/// declaration), the variants, [`Agent::ALL`], and for each agent its folder's [`Spec`],
/// adapter and conformance script, so that nothing else lists agents.
macro_rules! agents {
    ($default:ident: $default_folder:ident, $($variant:ident: $folder:ident),* $(,)?) => {
        pub mod $default_folder;
        $(pub mod $folder;)*

        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
        pub enum Agent {
            #[default]
            $default,
            $($variant),*
        }

        impl Agent {
            pub const ALL: [Agent; 1 + [$(stringify!($variant)),*].len()] =
                [Agent::$default, $(Agent::$variant),*];

            /// The agent's spec, from its folder.
            pub fn spec(self) -> &'static spec::Spec {
                match self {
                    Agent::$default => &$default_folder::SPEC,
                    $(Agent::$variant => &$folder::SPEC),*
                }
            }

            /// How `import` reads the agent's history, from its folder (`HISTORY` beside its
            /// `SPEC`).
            pub fn history(self) -> spec::History {
                match self {
                    Agent::$default => $default_folder::HISTORY,
                    $(Agent::$variant => $folder::HISTORY),*
                }
            }

            /// The daemon's adapter for the agent, from its folder.
            pub(super) fn adapter(
                self,
                grace_ms: u64,
            ) -> Box<dyn engine::adapter::Dispatch> {
                match self {
                    Agent::$default => $default_folder::adapter(grace_ms),
                    $(Agent::$variant => $folder::adapter(grace_ms)),*
                }
            }

            /// The agent's script for the conformance suite (and the fuzzer), from its folder.
            #[cfg(any(test, feature = "testing"))]
            pub(crate) fn script(self) -> Box<dyn steps::Script> {
                match self {
                    Agent::$default => $default_folder::script::script(),
                    $(Agent::$variant => $folder::script::script()),*
                }
            }
        }
    };
}
pub(super) use agents;

impl Agent {
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
