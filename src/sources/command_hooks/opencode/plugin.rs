//! The plugin file `install opencode` writes: `plugin.js` with the hook command put in, and
//! that command read back from a file (for `doctor` and `uninstall`).

/// The plugin `install opencode` writes into opencode's plugin folder, with
/// [`PLUGIN_COMMAND_MARK`] replaced by the hook command as a JSON array.
pub const PLUGIN: &str = include_str!("plugin.js");
/// Where the hook command goes in [`PLUGIN`]; the line it is on ends with it too, so that
/// `doctor` and `uninstall` find the command again.
pub const PLUGIN_COMMAND_MARK: &str = "/*albedo-otel:command*/";

/// The plugin, starting `command` (the program and its arguments; no shell runs it).
pub fn plugin(command: &[String]) -> String {
    let list = serde_json::to_string(command).unwrap_or_else(|_| "[]".into());
    let mut parts = PLUGIN.splitn(3, PLUGIN_COMMAND_MARK);
    let (head, _, tail) = (parts.next(), parts.next(), parts.next());
    format!(
        "{}{PLUGIN_COMMAND_MARK}{list};{PLUGIN_COMMAND_MARK}{}",
        head.unwrap_or_default(),
        tail.unwrap_or_default()
    )
}

/// The command a plugin file of ours starts; `None` for a file that is not ours.
pub fn plugin_command(text: &str) -> Option<Vec<String>> {
    let mut parts = text.splitn(3, PLUGIN_COMMAND_MARK);
    let (_, list, _) = (parts.next()?, parts.next()?, parts.next()?);
    serde_json::from_str(list.trim().trim_end_matches(';')).ok()
}
