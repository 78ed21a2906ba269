//! `install`, `uninstall` and `doctor` against files someone else wrote: a user's own hook
//! whose name only ends like ours, a checkout's plugin or hooks file naming another program,
//! a checkout's settings file linked to the user's own; and a project's backup kept out of
//! the checkout. Each was a finding of the code review (issue 27, H3 and M6).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::*;

/// `albedo-otel ARGS` in `cwd`, with HOME, configuration and state under `home` and no
/// collector.
fn run(cwd: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_albedo-otel"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("ALBEDO_OTEL_IDLE_EXIT", "1s")
        .output()
        .unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every file under `dir`, links included and not followed.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A home and a checkout, apart.
fn home_and_checkout(dir: &Path) -> (PathBuf, PathBuf) {
    let (home, checkout) = (dir.join("home"), dir.join("checkout"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&checkout).unwrap();
    (home, checkout)
}

#[test]
fn a_users_hook_that_ends_like_ours_is_theirs() {
    let dir = scratch("not-ours");
    let (home, checkout) = home_and_checkout(&dir);
    let settings = home.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/local/bin/my-albedo-otel-hook --fast"}]}]}}"#;
    std::fs::write(&settings, original).unwrap();
    let out = run(&checkout, &home, &["uninstall", "claude-code"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("nothing to remove"), "{}", said(&out));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);

    let out = run(&checkout, &home, &["install", "claude-code"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(!said(&out).contains("already installed"), "{}", said(&out));
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(
        text.contains("/usr/local/bin/my-albedo-otel-hook --fast"),
        "the user's hook is kept: {text}"
    );
    let out = run(&checkout, &home, &["uninstall", "claude-code"]);
    assert!(said(&out).contains("removed"), "{}", said(&out));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&settings).unwrap())
            .unwrap(),
        serde_json::from_str::<serde_json::Value>(original).unwrap()
    );
}

/// A checkout's plugin file has our text but starts a shell; its hooks file names a program
/// called `my-albedo-otel-hook`. `doctor --project` runs neither.
#[cfg(unix)]
#[test]
fn doctor_runs_no_command_but_ours() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("doctor-not-ours");
    let (home, checkout) = home_and_checkout(&dir);
    let marker = dir.join("MARKER");
    let plugin = albedo_otel::sources::command_hooks::opencode::plugin(&[
        "/bin/sh".into(),
        "-c".into(),
        format!("touch '{}'", marker.display()),
    ]);
    let plugin_file = checkout.join(".opencode/plugin/albedo-otel.js");
    std::fs::create_dir_all(plugin_file.parent().unwrap()).unwrap();
    std::fs::write(&plugin_file, plugin).unwrap();

    let theirs = dir.join("x/my-albedo-otel-hook");
    let hook_marker = dir.join("HOOK-MARKER");
    std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
    std::fs::write(
        &theirs,
        format!("#!/bin/sh\ntouch '{}'\n", hook_marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = checkout.join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": theirs.display().to_string()}]}]}})
            .to_string(),
    )
    .unwrap();

    let out = run(&checkout, &home, &["doctor", "--project"]);
    let said = said(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(!marker.exists(), "the plugin's shell ran: {said}");
    assert!(!hook_marker.exists(), "my-albedo-otel-hook ran: {said}");
    assert!(
        said.contains("FAIL hook, opencode (this project): `/bin/sh` is not albedo-otel's command"),
        "{said}"
    );
    assert!(
        said.contains("hook, Claude Code (this project): not installed"),
        "{said}"
    );
    // Nor do install and uninstall take that plugin for ours.
    let out = run(&checkout, &home, &["uninstall", "opencode", "--project"]);
    assert!(!out.status.success(), "{}", self::said(&out));
    assert!(plugin_file.exists());
}

#[cfg(unix)]
#[test]
fn a_project_install_writes_through_no_link_out_of_the_project() {
    let dir = scratch("link-out");
    let (home, checkout) = home_and_checkout(&dir);
    let outside = home.join(".claude/settings.json");
    std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
    let secret = r#"{ "env": { "ANTHROPIC_API_KEY": "sk-ant-test-secret" } }"#;
    std::fs::write(&outside, secret).unwrap();
    let link = checkout.join(".claude/settings.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let before = files(&checkout);
    for verb in ["install", "uninstall"] {
        let out = run(&checkout, &home, &[verb, "claude-code", "--project"]);
        let said = said(&out);
        assert!(!out.status.success(), "{verb}: {said}");
        assert!(
            said.contains("settings.json is a symbolic link to")
                && said.contains(&outside.display().to_string())
                && said.contains("outside this project"),
            "{verb}: {said}"
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), secret, "{verb}");
        assert_eq!(
            files(&checkout),
            before,
            "{verb}: nothing written in the checkout"
        );
    }

    // A folder on the way, linked out, is refused as well.
    std::fs::remove_file(&link).unwrap();
    std::fs::remove_dir(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(outside.parent().unwrap(), checkout.join(".claude")).unwrap();
    let out = run(&checkout, &home, &["install", "claude-code", "--project"]);
    assert!(!out.status.success(), "{}", said(&out));
    assert!(
        said(&out).contains(".claude is a symbolic link to"),
        "{}",
        said(&out)
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), secret);

    // A link that stays in the project is the project's: written through, still a link.
    std::fs::remove_file(checkout.join(".claude")).unwrap();
    std::fs::create_dir_all(checkout.join(".claude")).unwrap();
    std::fs::create_dir_all(checkout.join("shared")).unwrap();
    std::fs::write(checkout.join("shared/settings.json"), "{}").unwrap();
    std::os::unix::fs::symlink("../shared/settings.json", &link).unwrap();
    let out = run(&checkout, &home, &["install", "claude-code", "--project"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        std::fs::read_to_string(checkout.join("shared/settings.json"))
            .unwrap()
            .contains("albedo-otel")
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), secret);
}

#[cfg(unix)]
#[test]
fn a_project_backup_goes_to_the_state_folder_not_the_checkout() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = scratch("project-backup");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let backups = home.join(".state/albedo-otel/backups");
    // Two checkouts of one name: their backups must not meet.
    let mut seen = Vec::new();
    for (i, parent) in ["a", "b"].into_iter().enumerate() {
        let checkout = dir.join(parent).join("checkout");
        let settings = checkout.join(".claude/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        let original = format!(r#"{{ "model": "opus-{parent}" }}"#);
        std::fs::write(&settings, &original).unwrap();
        let out = run(&checkout, &home, &["install", "claude-code", "--project"]);
        let said = said(&out);
        assert!(out.status.success(), "{said}");
        let in_checkout: Vec<_> = files(&checkout)
            .into_iter()
            .filter(|p| p.to_string_lossy().contains("albedo-otel-backup"))
            .collect();
        assert!(in_checkout.is_empty(), "{in_checkout:?}");
        let made: Vec<_> = files(&backups)
            .into_iter()
            .filter(|p| !seen.contains(p))
            .collect();
        assert_eq!(made.len(), 1, "{made:?}; {said}");
        let backup = &made[0];
        assert!(
            said.contains(&format!("backup: {}", backup.display())),
            "{said}"
        );
        assert_eq!(std::fs::read_to_string(backup).unwrap(), original);
        assert_eq!(mode(backup), 0o600);
        assert_eq!(mode(&backups), 0o700);
        seen.push(backup.clone());
        assert_eq!(seen.len(), i + 1);
    }
}
