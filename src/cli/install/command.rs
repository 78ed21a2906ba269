//! The hook command `install` writes, and reading one back: quoting paths for the shell,
//! and finding the program in a command an older install (or a user) wrote.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

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

/// This executable, or, when it is one `npx` will throw away, the copy kept of it.
fn kept_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let env = |k: &str| std::env::var_os(k);
    Ok(match throwaway_source(&exe, &env) {
        Some(source) => kept_copy(&exe, source, &env)?,
        None => exe,
    })
}

/// Claude Code's status line command: this binary's `statusline`, with the configuration
/// file (the store's place is in it, or its default).
pub(super) fn statusline_command(config: &Path) -> Result<String> {
    let exe = kept_exe()?;
    Ok(format!(
        "{} statusline --config {}",
        shell_quote(&exe.to_string_lossy()),
        shell_quote(&config.to_string_lossy())
    ))
}

/// The hook command: `albedo-otel-hook` from this binary's folder when it is there (it starts
/// in half the time: see docs/performance.md), else this binary's `hook`, with the
/// configuration file and the journal folder. albedo runs hooks with a clean environment,
/// perhaps without `HOME`, so both are named, not left to defaults.
pub(super) fn command(config: &Path, hook_dir: &Path, agent: Option<&str>) -> Result<String> {
    let exe = kept_exe()?;
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

/// The caches that running a package without installing it works from, by who runs it: `uvx`
/// (`uv tool run`) runs from uv's cache, which `uv cache clean` empties, and `pipx run` from
/// pipx's, whose environments expire after days. A hook command pointing there would stop
/// working with nothing said. uv's cache is `UV_CACHE_DIR`, else `$XDG_CACHE_HOME/uv`, else
/// `~/.cache/uv` (on macOS too, by uv's documentation; `~/Library/Caches/uv` is looked at as
/// well); pipx's is `$PIPX_HOME/.cache`, else the platform's cache folder (`~/.cache/pipx`,
/// `~/Library/Caches/pipx`), or `.cache` in an older pipx's home.
fn throwaway_caches(env: &dyn Fn(&str) -> Option<OsString>) -> Vec<(&'static str, PathBuf)> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = var("HOME");
    let mut caches = Vec::new();
    if let Some(dir) = var("UV_CACHE_DIR") {
        caches.push(("uv", dir));
    }
    if let Some(dir) = var("PIPX_HOME") {
        caches.push(("pipx", dir.join(".cache")));
    }
    if let Some(cache) = var("XDG_CACHE_HOME") {
        caches.push(("uv", cache.join("uv")));
        caches.push(("pipx", cache.join("pipx")));
    }
    if let Some(home) = home {
        for (source, dir) in [
            ("uv", ".cache/uv"),
            ("uv", "Library/Caches/uv"),
            ("pipx", ".cache/pipx"),
            ("pipx", "Library/Caches/pipx"),
            ("pipx", ".local/pipx/.cache"),
            ("pipx", ".local/share/pipx/.cache"),
            ("pipx", "Library/Application Support/pipx/.cache"),
        ] {
            caches.push((source, home.join(dir)));
        }
    }
    caches
}

/// Who put this executable (`exe`, with its links resolved) in a cache, if one did.
fn throwaway_source(exe: &Path, env: &dyn Fn(&str) -> Option<OsString>) -> Option<&'static str> {
    throwaway_caches(env).into_iter().find_map(|(source, dir)| {
        let dir = dir.canonicalize().ok()?;
        exe.starts_with(dir).then_some(source)
    })
}

/// Copies this executable and the hook beside it out of a cache into
/// `$XDG_DATA_HOME/albedo-otel/<source>/<version>/` (else `~/.local/share/...`), as the npm
/// launcher does for npx, and returns the copy of `exe`, for the hook command to name. An
/// identical copy already there is kept; a new one is written beside its final name and
/// renamed into place, so a hook running the old one never sees half a file.
fn kept_copy(exe: &Path, source: &str, env: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    let var = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let data = var("XDG_DATA_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/share")))
        .with_context(|| {
            format!(
                "{} runs from {source}'s cache, which is cleaned, and neither XDG_DATA_HOME nor \
                 HOME is set to copy it out of there: install it (`uv tool install albedo-otel`, \
                 `pipx install albedo-otel`) and run `install` from that",
                exe.display()
            )
        })?;
    let dir = data
        .join("albedo-otel")
        .join(source)
        .join(env!("CARGO_PKG_VERSION"));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = exe
        .file_name()
        .context("this executable has no file name")?;
    let hook = format!("{HOOK_BIN}{}", std::env::consts::EXE_SUFFIX);
    for (from, needed) in [(exe.to_path_buf(), true), (exe.with_file_name(hook), false)] {
        // Without albedo-otel-hook the command runs `albedo-otel hook`.
        let bytes = match std::fs::read(&from) {
            Ok(bytes) => bytes,
            Err(_) if !needed && !from.exists() => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", from.display())),
        };
        let to = dir.join(from.file_name().unwrap_or_default());
        if std::fs::read(&to).is_ok_and(|there| there == bytes) {
            continue;
        }
        albedo_otel::fs::write_durably(&to, &bytes, 0o755)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    tracing::info!(
        "this albedo-otel runs from {source}'s cache, which gets cleaned: the hook runs a copy \
         in {} instead",
        dir.display()
    );
    Ok(dir.join(name))
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
    fn a_binary_in_uvs_or_pipxs_cache_is_copied_out_once() {
        let root = std::env::temp_dir().join(format!("albedo-otel-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        let put = |dir: &Path, main: &[u8]| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join("albedo-otel"), main).unwrap();
            std::fs::write(dir.join(HOOK_BIN), b"hook").unwrap();
            dir.join("albedo-otel").canonicalize().unwrap()
        };
        let home_var = home.clone().into_os_string();
        let env = move |k: &str| (k == "HOME").then(|| home_var.clone());

        let uvx = put(&home.join(".cache/uv/archive-v0/abc/bin"), b"main");
        assert_eq!(throwaway_source(&uvx, &env), Some("uv"));
        let pipx_run = put(&home.join(".cache/pipx/0123abc/bin"), b"main");
        assert_eq!(throwaway_source(&pipx_run, &env), Some("pipx"));
        for installed in [
            ".local/share/uv/tools/albedo-otel/bin",
            ".local/bin",
            ".cargo/bin",
        ] {
            let exe = put(&home.join(installed), b"main");
            assert_eq!(throwaway_source(&exe, &env), None, "{installed}");
        }
        let elsewhere = root.join("uv-cache");
        let exe = put(&elsewhere.join("archive-v0/x/bin"), b"main");
        let cache_var = elsewhere.clone().into_os_string();
        let uv_cache_dir = move |k: &str| (k == "UV_CACHE_DIR").then(|| cache_var.clone());
        assert_eq!(throwaway_source(&exe, &uv_cache_dir), Some("uv"));

        let kept = kept_copy(&uvx, "uv", &env).unwrap();
        let dir = home.join(format!(
            ".local/share/albedo-otel/uv/{}",
            env!("CARGO_PKG_VERSION")
        ));
        assert_eq!(kept, dir.join("albedo-otel"));
        assert_eq!(std::fs::read(&kept).unwrap(), b"main");
        assert_eq!(std::fs::read(dir.join(HOOK_BIN)).unwrap(), b"hook");
        #[cfg(unix)]
        {
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            let meta = |p: &Path| std::fs::metadata(p).unwrap();
            assert_eq!(meta(&kept).permissions().mode() & 0o777, 0o755);
            assert_eq!(
                meta(&dir.join(HOOK_BIN)).permissions().mode() & 0o777,
                0o755
            );
            // The same build again: the copy there is kept, not written anew.
            let before = meta(&kept).ino();
            kept_copy(&uvx, "uv", &env).unwrap();
            assert_eq!(meta(&kept).ino(), before);
        }
        // A newer build of the same version replaces it.
        put(uvx.parent().unwrap(), b"main, rebuilt");
        kept_copy(&uvx, "uv", &env).unwrap();
        assert_eq!(std::fs::read(&kept).unwrap(), b"main, rebuilt");
        std::fs::remove_dir_all(&root).unwrap();
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
