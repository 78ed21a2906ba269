//! The hook command `install` writes, and reading one back: quoting paths for the shell,
//! and finding the program in a command an older install (or a user) wrote.

use std::path::Path;

use anyhow::{Context, Result};

pub(super) fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hook command: `albedo-otel-hook` from this binary's folder when it is there (it starts
/// in half the time: see docs/performance.md), else this binary's `hook`, with the
/// configuration file and the journal folder. albedo runs hooks with a clean environment,
/// perhaps without `HOME`, so both are named, not left to defaults.
pub(super) fn command(config: &Path, hook_dir: &Path, agent: Option<&str>) -> Result<String> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let small = exe.with_file_name(HOOK_BIN);
    let mut parts = Vec::new();
    if small.is_file() {
        parts.push(shell_quote(&small.to_string_lossy()));
    } else {
        parts.push(shell_quote(&exe.to_string_lossy()));
        parts.push("hook".into());
    }
    parts.push("--config".into());
    parts.push(shell_quote(&config.to_string_lossy()));
    parts.push("--hook-dir".into());
    parts.push(shell_quote(&hook_dir.to_string_lossy()));
    if let Some(agent) = agent {
        parts.push("--agent".into());
        parts.push(shell_quote(agent));
    }
    Ok(parts.join(" "))
}

/// The words of a command as `shell_quote` writes them (and as older installs did, with
/// `NAME=value` settings first): enough to find the program and its first argument.
pub(super) fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let (mut in_quote, mut any) = (false, false);
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_quote = !in_quote;
                any = true;
            }
            '\\' if !in_quote => {
                word.extend(chars.next());
                any = true;
            }
            c if c.is_whitespace() && !in_quote => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

/// The program a hook command runs, past any `NAME=value` settings before it.
pub fn program(command: &str) -> Option<(String, Vec<String>)> {
    let mut w = words(command).into_iter().skip_while(|w| is_setting(w));
    let program = w.next()?;
    Some((program, w.collect()))
}

/// The `NAME=value` settings before the program, as a shell would put them in its
/// environment.
pub fn settings_before(command: &str) -> Vec<(String, String)> {
    words(command)
        .into_iter()
        .take_while(|w| is_setting(w))
        .filter_map(|w| {
            w.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// `NAME=value` before the program (a path may hold `=` too, but starts with `/`).
fn is_setting(word: &str) -> bool {
    word.contains('=') && !word.starts_with('/')
}

/// The small hook executable `cargo install` puts beside `albedo-otel`.
pub(super) const HOOK_BIN: &str = "albedo-otel-hook";

/// Whether `program` (with `args` after it) is albedo-otel's hook: `albedo-otel-hook`, or
/// `albedo-otel hook`, by the program's file name, all of it. This is the one test of what is
/// ours: `install` and `uninstall` replace and remove only such hooks, and `doctor` runs
/// nothing else, since whoever wrote a checkout wrote its settings and plugin files. A name
/// that merely ends so (`my-albedo-otel-hook`) is someone else's.
pub fn is_our_program(program: &str, args: &[String]) -> bool {
    let Some(name) = Path::new(program).file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    // Windows names executables with `.exe`; the command keeps it.
    let name = name.strip_suffix(".exe").unwrap_or(name);
    name == HOOK_BIN || (name == "albedo-otel" && args.first().is_some_and(|a| a == "hook"))
}

/// Whether a hook command, as a shell would read it, runs albedo-otel's hook.
pub fn is_our_command(command: &str) -> bool {
    program(command).is_some_and(|(p, args)| is_our_program(&p, &args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_odd_paths_whole() {
        assert_eq!(shell_quote("/usr/bin/albedo-otel"), "/usr/bin/albedo-otel");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        let command = format!(
            "{} --config {}",
            shell_quote("/a b/it's"),
            shell_quote("/c d")
        );
        assert_eq!(words(&command), ["/a b/it's", "--config", "/c d"]);
        assert_eq!(
            program("OTEL_EXPORTER_OTLP_ENDPOINT=http://x:4317 /bin/albedo-otel-hook"),
            Some(("/bin/albedo-otel-hook".into(), vec![]))
        );
        assert_eq!(
            settings_before("A=1 'B=x y' /bin/albedo-otel-hook C=3"),
            [("A".into(), "1".into()), ("B".into(), "x y".into())]
        );
    }

    #[test]
    fn only_our_own_program_is_ours() {
        for (command, ours) in [
            ("/usr/bin/albedo-otel-hook --config /c", true),
            ("albedo-otel-hook", true),
            ("'/a b/albedo-otel' hook --config /c", true),
            ("albedo-otel hook", true),
            ("albedo-otel-hook.exe --config /c", true),
            ("A=1 /opt/albedo-otel.exe hook", true),
            ("/x/my-albedo-otel-hook", false),
            ("/x/albedo-otel-hook-evil", false),
            ("/x/my-albedo-otel hook", false),
            ("albedo-otel doctor", false),
            ("albedo-otel", false),
            ("/bin/sh -c albedo-otel-hook", false),
            ("/bin/sh -c 'albedo-otel hook'", false),
            ("", false),
        ] {
            assert_eq!(is_our_command(command), ours, "{command}");
        }
        assert!(is_our_program("/usr/bin/albedo-otel-hook", &[]));
        assert!(!is_our_program("/x/my-albedo-otel-hook", &[]));
        assert!(is_our_program("albedo-otel", &["hook".into()]));
        assert!(is_our_program("albedo-otel-hook.exe", &[]));
        assert!(!is_our_program(
            "/bin/sh",
            &["-c".into(), "albedo-otel-hook".into()]
        ));
    }
}
