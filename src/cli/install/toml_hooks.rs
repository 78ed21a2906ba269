//! The route of an agent whose hooks are `[[hooks]]` tables in its TOML configuration (Kimi
//! Code's `config.toml`, which also holds its providers, models and keys): our tables are
//! added, replaced and removed with `toml_edit`, so every other table, key and comment of
//! the user's file stays as it was written. A table is ours only when its `command` runs
//! albedo-otel's hook, by the program's exact file name ([`is_our_command`]).

use std::path::Path;

use anyhow::{bail, Context, Result};
use toml_edit::{value, ArrayOfTables, DocumentMut, Item, Table};

use super::command::is_our_command;
use super::settings::{save_text, Backup};
use super::writer::{installed, Writer};
use super::Target;
use albedo_otel::sources::command_hooks::agent::TomlTables;

/// The file's text (`None` when there is none yet) and its document.
fn load(file: &Path) -> Result<(Option<String>, DocumentMut)> {
    match std::fs::read_to_string(file) {
        Ok(text) => {
            let doc = text.parse::<DocumentMut>().with_context(|| {
                format!("{} is not valid TOML; not touching it", file.display())
            })?;
            Ok((Some(text), doc))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, DocumentMut::new())),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

fn is_ours(table: &Table) -> bool {
    table
        .get("command")
        .and_then(Item::as_str)
        .is_some_and(is_our_command)
}

/// The document's `[[hooks]]`, if it has any; an error if `hooks` is something else.
fn hooks_of<'a>(doc: &'a mut DocumentMut, file: &Path) -> Result<Option<&'a mut ArrayOfTables>> {
    match doc.get_mut("hooks") {
        None => Ok(None),
        Some(item) => match item.as_array_of_tables_mut() {
            Some(aot) => Ok(Some(aot)),
            None => bail!(
                "`hooks` in {} is not a list of [[hooks]] tables; not touching it",
                file.display()
            ),
        },
    }
}

/// Removes our tables; returns how many there were.
fn remove_ours(doc: &mut DocumentMut, file: &Path) -> Result<usize> {
    let Some(aot) = hooks_of(doc, file)? else {
        return Ok(0);
    };
    let before = aot.len();
    aot.retain(|t| !is_ours(t));
    let removed = before - aot.len();
    if removed > 0 && aot.is_empty() {
        doc.remove("hooks");
    }
    Ok(removed)
}

/// Adds a table for each event, after the user's own.
fn add_ours(doc: &mut DocumentMut, file: &Path, tables: &TomlTables, command: &str) -> Result<()> {
    if hooks_of(doc, file)?.is_none() {
        doc.insert("hooks", Item::ArrayOfTables(ArrayOfTables::new()));
    }
    let aot = hooks_of(doc, file)?.context("`hooks` was just added")?;
    for event in tables.events {
        let mut t = Table::new();
        t.insert("event", value(*event));
        if tables.tool_events.contains(event) {
            t.insert("matcher", value(".*"));
        }
        t.insert("command", value(command));
        t.insert("timeout", value(tables.timeout as i64));
        aot.push(t);
    }
    Ok(())
}

/// The writer of `[[hooks]]` tables in a TOML file.
pub(super) struct Tables<'a>(pub &'a TomlTables);

impl Writer for Tables<'_> {
    fn check(&self, file: &Path) -> Result<()> {
        load(file).map(drop)
    }

    fn install(
        &self,
        file: &Path,
        command: &str,
        events: &str,
        target: &Target,
    ) -> Result<Vec<String>> {
        let changed = install(file, self.0, command, &target.backup_of(file)?)?;
        Ok(vec![format!(
            "{}: `{command}` on {events}",
            installed(changed, file)
        )])
    }

    fn uninstall(&self, file: &Path, target: &Target) -> Result<Vec<String>> {
        Ok(vec![match uninstall(file, &target.backup_of(file)?)? {
            0 => format!("nothing to remove in {}", file.display()),
            n => format!("removed {n} albedo-otel hooks from {}", file.display()),
        }])
    }

    fn commands(&self, file: &Path) -> Vec<String> {
        commands(file)
    }
}

/// Puts our tables, running `command`, in `file` (a backup of it first); returns whether
/// that changed it.
fn install(file: &Path, tables: &TomlTables, command: &str, backup: &Backup) -> Result<bool> {
    let (before, mut doc) = load(file)?;
    remove_ours(&mut doc, file)?;
    add_ours(&mut doc, file, tables, command)?;
    save_text(file, before.as_deref(), &doc.to_string(), backup)
}

/// Removes our tables from `file` (a backup of it first); returns how many there were.
fn uninstall(file: &Path, backup: &Backup) -> Result<usize> {
    let (before, mut doc) = load(file)?;
    let removed = remove_ours(&mut doc, file)?;
    if removed > 0 {
        save_text(file, before.as_deref(), &doc.to_string(), backup)?;
    }
    Ok(removed)
}

/// Our hook commands in `file`, for `doctor`.
fn commands(file: &Path) -> Vec<String> {
    let Ok((_, doc)) = load(file) else {
        return Vec::new();
    };
    let mut out: Vec<String> = doc
        .get("hooks")
        .and_then(Item::as_array_of_tables)
        .into_iter()
        .flat_map(ArrayOfTables::iter)
        .filter(|t| is_ours(t))
        .filter_map(|t| t.get("command").and_then(Item::as_str).map(str::to_string))
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIMI: TomlTables = TomlTables {
        events: &["UserPromptSubmit", "Stop"],
        tool_events: &[],
        timeout: 10,
    };

    const USERS: &str = r#"# my Kimi settings
default_model = "k2" # the fast one

[providers.moonshot]
type = "kimi"
api_key = "sk-kept-as-is"

[[hooks]]
event = "PreToolUse"
matcher = "Bash"
command = "my-albedo-otel-hook --guard"   # not ours: another program
timeout = 5

[loop_control]
max_steps_per_turn = 50
"#;

    fn edit(text: &str, f: impl FnOnce(&mut DocumentMut)) -> String {
        let mut doc = text.parse::<DocumentMut>().unwrap();
        f(&mut doc);
        doc.to_string()
    }

    #[test]
    fn ours_go_in_beside_the_users_tables_and_come_out_alone() {
        let file = Path::new("config.toml");
        let command = "/opt/bin/albedo-otel-hook --config /c.toml --agent kimi";
        let add = |doc: &mut DocumentMut| {
            remove_ours(doc, file).unwrap();
            add_ours(doc, file, &KIMI, command).unwrap();
        };
        let once = edit(USERS, add);
        assert_eq!(edit(&once, add), once, "twice changes nothing");
        // Everything of the user's is still there, as written.
        for kept in USERS.lines() {
            assert!(once.contains(kept), "lost {kept:?} in:\n{once}");
        }
        let doc = once.parse::<DocumentMut>().unwrap();
        let ours: Vec<&str> = doc["hooks"]
            .as_array_of_tables()
            .unwrap()
            .iter()
            .filter(|t| is_ours(t))
            .map(|t| t["event"].as_str().unwrap())
            .collect();
        assert_eq!(ours, ["UserPromptSubmit", "Stop"]);
        let back = edit(&once, |doc| assert_eq!(remove_ours(doc, file).unwrap(), 2));
        assert_eq!(back, USERS, "uninstall leaves the user's file as it was");
    }

    #[test]
    fn hooks_that_are_not_tables_are_left_alone() {
        let mut doc = "hooks = \"nope\"\n".parse::<DocumentMut>().unwrap();
        let err = add_ours(&mut doc, Path::new("c.toml"), &KIMI, "albedo-otel-hook");
        assert!(err.unwrap_err().to_string().contains("not touching it"));
    }
}
