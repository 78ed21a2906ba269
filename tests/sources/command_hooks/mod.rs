//! The command-hook route as users meet it: the hook binary and its daemon, the configuration
//! file through hooks, Cursor and foreign payloads, and `install`/`uninstall`/`doctor`.

mod agents;
mod config_file;
mod cursor;
mod foreign_payloads;
mod hooks;
mod install;
mod install_agents;
mod install_cursor;
mod install_safety;
