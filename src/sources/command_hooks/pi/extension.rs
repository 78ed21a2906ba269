//! The extension file `install pi` writes: `extension.js` with the hook command put in, and
//! that command read back from a file (for `doctor` and `uninstall`).

/// The extension `install pi` writes into Pi's extensions folder, with
/// [`EXTENSION_COMMAND_MARK`] replaced by the hook command as a JSON array.
pub const EXTENSION: &str = include_str!("extension.js");
/// Where the hook command goes in [`EXTENSION`]; the line it is on ends with it too, so that
/// `doctor` and `uninstall` find the command again.
pub const EXTENSION_COMMAND_MARK: &str = "/*albedo-otel:command*/";

/// The extension, starting `command` (the program and its arguments; no shell runs it).
pub fn extension(command: &[String]) -> String {
    let list = serde_json::to_string(command).unwrap_or_else(|_| "[]".into());
    let mut parts = EXTENSION.splitn(3, EXTENSION_COMMAND_MARK);
    let (head, _, tail) = (parts.next(), parts.next(), parts.next());
    format!(
        "{}{EXTENSION_COMMAND_MARK}{list};{EXTENSION_COMMAND_MARK}{}",
        head.unwrap_or_default(),
        tail.unwrap_or_default()
    )
}

/// The command an extension file of ours starts; `None` for a file that is not ours.
pub fn extension_command(text: &str) -> Option<Vec<String>> {
    // Ours only: another extension that happens to hold the mark is not.
    if !text.contains("albedo-otel's Pi extension") {
        return None;
    }
    let mut parts = text.splitn(3, EXTENSION_COMMAND_MARK);
    let (_, list, _) = (parts.next()?, parts.next()?, parts.next()?);
    serde_json::from_str(list.trim().trim_end_matches(';')).ok()
}
