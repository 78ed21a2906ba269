//! Other agents' hooks that run another version's copy of albedo-otel. The npm launcher (and
//! `install` run from uv's or pipx's cache) keeps a copy per version, in
//! `$XDG_DATA_HOME/albedo-otel/<source>/<version>/`: after an upgrade, the agents installed
//! before it still run the old copy, and that version's daemon may not know a newer agent's
//! payloads (a newer hook's daemon takes over from it, but only while that agent runs).
//! `install` names them; with `--move-others` it points them at this install's copy.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::command::{program, shell_quote};
use super::settings::{save_text, Backup};
use super::{albedo_hooks, installed_commands, Form};
use albedo_otel::sources::command_hooks::agent::Agent;

/// The per-version copy that `program` is in, and its version, when it is in one:
/// `…/albedo-otel/<source>/<version>/<program>`.
fn version_copy(program: &Path) -> Option<(PathBuf, String)> {
    let dir = program.parent()?;
    let version = dir.file_name()?.to_str()?;
    let root = dir.parent()?.parent()?;
    (root.file_name()? == "albedo-otel" && version.starts_with(|c: char| c.is_ascii_digit()))
        .then(|| (dir.to_path_buf(), version.to_string()))
}

/// A hook file of another agent whose hook runs another version's copy.
struct Stale {
    who: &'static str,
    file: PathBuf,
    copy: PathBuf,
    version: String,
}

/// The user's hook files of every agent but the one `install` writes (`skip`), and albedo's
/// when `ALBEDO_HOME` says where, whose hooks run another version's copy than `ours`.
fn stale(skip: &Path, ours: &Path) -> Vec<Stale> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut files: Vec<(&'static str, PathBuf, Form)> = Agent::ALL
        .iter()
        .filter_map(|a| {
            let install = &a.spec().install;
            Some((a.name(), (install.user_file)(&env)?, install.form))
        })
        .collect();
    if let Some(home) = env("ALBEDO_HOME") {
        files.push((
            "albedo",
            PathBuf::from(home).join("hooks.json"),
            Form::Hooks(albedo_hooks()),
        ));
    }
    let same = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut out: Vec<Stale> = Vec::new();
    for (who, file, form) in files {
        if same(&file) == same(skip) || out.iter().any(|s| same(&s.file) == same(&file)) {
            continue;
        }
        let copy = installed_commands(&file, &form).iter().find_map(|c| {
            let (copy, version) = version_copy(Path::new(&program(c)?.0))?;
            (copy != ours && version != env!("CARGO_PKG_VERSION")).then_some((copy, version))
        });
        if let Some((copy, version)) = copy {
            out.push(Stale {
                who,
                file,
                copy,
                version,
            });
        }
    }
    out
}

/// Points the hooks in `s.file` at `ours` instead of `s.copy`: the folder is replaced
/// wherever the file names it, the rest kept, a backup first. Whether it could be done so
/// (a folder of scripts, or a path that needs quoting, is installed again instead).
fn move_hooks(s: &Stale, ours: &Path) -> Result<bool> {
    let (from, to) = (s.copy.to_string_lossy(), ours.to_string_lossy());
    let plain = |p: &str| shell_quote(p) == p && !p.contains(['"', '\\']);
    if !s.file.is_file() || !plain(&from) || !plain(&to) {
        return Ok(false);
    }
    let before = std::fs::read_to_string(&s.file)?;
    let after = before.replace(&format!("{from}/"), &format!("{to}/"));
    save_text(&s.file, Some(&before), &after, &Backup::Beside)?;
    Ok(true)
}

/// What `install` says of other agents' hooks that run another version's copy than
/// `command`'s (written in `file`), and, with `move_others`, what it moved.
pub(super) fn others(file: &Path, command: &str, move_others: bool) -> Result<Vec<String>> {
    let Some(ours) = program(command).and_then(|(p, _)| Some(Path::new(&p).parent()?.to_owned()))
    else {
        return Ok(Vec::new());
    };
    let mut lines = Vec::new();
    for s in stale(file, &ours) {
        let (who, version) = (s.who, &s.version);
        if !move_others {
            lines.push(format!(
                "note: {who}'s hooks in {} run albedo-otel {version}'s copy in {}, whose daemon \
                 may not know this version's agents; `--move-others` points them at this one's \
                 ({})",
                s.file.display(),
                s.copy.display(),
                ours.display()
            ));
        } else if move_hooks(&s, &ours)? {
            lines.push(format!(
                "moved: {who}'s hooks in {} now run {} (they ran albedo-otel {version}'s copy)",
                s.file.display(),
                ours.display()
            ));
        } else {
            lines.push(format!(
                "note: {who}'s hooks in {} run albedo-otel {version}'s copy in {}; `albedo-otel \
                 install {who}` points them at this one's",
                s.file.display(),
                s.copy.display()
            ));
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_per_version_copy_is_told_by_its_folders() {
        let copy = |p: &str| version_copy(Path::new(p));
        assert_eq!(
            copy("/h/.local/share/albedo-otel/npm/0.1.0/albedo-otel-hook"),
            Some((
                "/h/.local/share/albedo-otel/npm/0.1.0".into(),
                "0.1.0".into()
            ))
        );
        assert_eq!(copy("/usr/local/bin/albedo-otel-hook"), None);
        assert_eq!(copy("/h/albedo-otel/npm/latest/albedo-otel-hook"), None);
        assert_eq!(copy("albedo-otel-hook"), None);
    }
}
