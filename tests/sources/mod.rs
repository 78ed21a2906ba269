//! What the sources take in: the command-hook route (the hook, its daemon, each agent) and
//! the library API a host embeds.

mod command_hooks;
mod host;
