//! Each agent's real CLI, offline, against a stand-in for its model API (tests/support), one
//! file per agent named by its folder in src/sources/command_hooks.

mod claude_code;
mod cline;
mod codex;
mod copilot;
mod droid;
mod gemini;
mod kilo;
mod kimi;
mod opencode;
mod opencode_plugin;
mod pi;
mod qwen;
