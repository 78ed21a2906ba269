//! The two values of a git config file we need, `remote.origin.url` and `user.email`, read as
//! git reads them: sections and subsections, quoting, comments, and `include` /
//! `includeIf "gitdir:..."` (a work folder's own `user.email` is often set that way). Read,
//! never run: no `git` process.

use std::path::{Path, PathBuf};

/// Includes followed at most this deep (git's own limit is 10).
const MAX_DEPTH: usize = 5;
/// A config file is small; anything bigger is not read.
const MAX_FILE: u64 = 1 << 20;

/// What one config file (and the files it includes) says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct GitConfig {
    /// The first `url` of `[remote "origin"]`, as written.
    pub origin_url: Option<String>,
    /// The last `email` of `[user]`, as git takes it.
    pub email: Option<String>,
}

/// Reads `path` and what it includes. `git_dir` decides `includeIf "gitdir:..."`; `home`
/// expands `~`. A missing or unreadable file says nothing.
pub(super) fn read(path: &Path, git_dir: Option<&Path>, home: Option<&Path>) -> GitConfig {
    let mut out = GitConfig::default();
    read_into(path, git_dir, home, 0, &mut out);
    out
}

fn read_into(
    path: &Path,
    git_dir: Option<&Path>,
    home: Option<&Path>,
    depth: usize,
    out: &mut GitConfig,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(text) = super::git::small_file(path, MAX_FILE) else {
        return;
    };
    let base = path.parent().unwrap_or(Path::new("/"));
    let mut section = String::new();
    let mut sub: Option<String> = None;
    for raw in text.lines() {
        let mut line = raw.trim_start();
        if let Some(rest) = line.strip_prefix('[') {
            let Some((header, after)) = rest.split_once(']') else {
                continue;
            };
            (section, sub) = parse_header(header);
            line = after.trim_start();
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), value_of(v)),
            None => continue,
        };
        match (section.as_str(), sub.as_deref(), key.as_str()) {
            ("remote", Some("origin"), "url") if out.origin_url.is_none() => {
                out.origin_url = Some(value);
            }
            ("user", None, "email") => out.email = Some(value),
            ("include", None, "path") => {
                if let Some(p) = resolve(&value, base, home) {
                    read_into(&p, git_dir, home, depth + 1, out);
                }
            }
            ("includeif", Some(cond), "path") if applies(cond, git_dir, base, home) => {
                if let Some(p) = resolve(&value, base, home) {
                    read_into(&p, git_dir, home, depth + 1, out);
                }
            }
            _ => {}
        }
    }
}

/// `remote "origin"` gives (`remote`, `origin`); the old `remote.origin` form too. Section
/// names are case-insensitive, quoted subsections are not.
fn parse_header(header: &str) -> (String, Option<String>) {
    let header = header.trim();
    if let Some((name, rest)) = header.split_once(char::is_whitespace) {
        let sub = rest.trim().trim_matches('"').replace("\\\"", "\"");
        return (name.to_ascii_lowercase(), Some(sub));
    }
    match header.split_once('.') {
        Some((name, sub)) => (name.to_ascii_lowercase(), Some(sub.to_ascii_lowercase())),
        None => (header.to_ascii_lowercase(), None),
    }
}

/// A value as git reads it: quotes removed, escapes undone, a comment outside quotes cut.
fn value_of(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// An include's path: `~/` from `home`, relative ones from the including file's folder.
fn resolve(path: &str, base: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = path.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let p = Path::new(path);
    Some(if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    })
}

/// `includeIf "gitdir:PATTERN"` (and `gitdir/i:`) for the common patterns: a folder, which
/// takes in everything under it (`~/work/`), or an exact git folder. Patterns with other
/// wildcards are not followed: better no email than a wrong one.
fn applies(cond: &str, git_dir: Option<&Path>, base: &Path, home: Option<&Path>) -> bool {
    let (pattern, fold) = if let Some(p) = cond.strip_prefix("gitdir:") {
        (p, false)
    } else if let Some(p) = cond.strip_prefix("gitdir/i:") {
        (p, true)
    } else {
        return false;
    };
    let Some(git_dir) = git_dir else {
        return false;
    };
    let pattern = pattern.strip_suffix("**").unwrap_or(pattern);
    if pattern.contains(['*', '?', '[']) {
        return false;
    }
    let full = match pattern.strip_prefix("./") {
        Some(relative) => Some(base.join(relative)),
        None => resolve(pattern, base, home),
    };
    let Some(full) = full else {
        return false;
    };
    let (mut want, mut have) = (
        full.to_string_lossy().into_owned(),
        format!("{}/", git_dir.to_string_lossy().trim_end_matches('/')),
    );
    if fold {
        want = want.to_lowercase();
        have = have.to_lowercase();
    }
    if want.ends_with('/') {
        have.starts_with(&want)
    } else {
        have.trim_end_matches('/') == want.trim_end_matches('/')
    }
}
