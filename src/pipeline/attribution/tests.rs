//! Checkouts written by hand, file by file, as git leaves them: what each turn is said to be
//! attributed to, and what it is not.

use std::path::{Path, PathBuf};

use super::git::web_address;
use super::*;

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";
const SHA2: &str = "89abcdef0123456789abcdef0123456789abcdef";

/// A fresh folder of this test's own, removed when the test is done with it.
#[derive(Debug)]
struct Temp(PathBuf);

impl std::ops::Deref for Temp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn folder(name: &str) -> Temp {
    let d = std::env::temp_dir().join(format!("albedo-otel-attr-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Temp(d)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // As git writes a ref: a new file put in place, so a reader sees it whole.
    let tmp = path.with_extension("lock");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://user:ghp_secret123@github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[user]\n\temail = dev@example.com ; the work one\n";

/// A checkout on `branch` at `SHA`, its ref loose.
fn checkout(name: &str, branch: &str) -> Temp {
    let d = folder(name);
    write(&d.join(".git/HEAD"), &format!("ref: refs/heads/{branch}\n"));
    write(&d.join(".git/config"), CONFIG);
    write(
        &d.join(format!(".git/refs/heads/{branch}")),
        &format!("{SHA}\n"),
    );
    d
}

fn nobody() -> UserEnv {
    UserEnv {
        home: None,
        xdg_config_home: None,
        login: Some("dev".into()),
    }
}

fn facts(dir: &Path) -> Arc<Attribution> {
    Attributor::new(UserId::Auto, nobody()).facts(dir.to_str())
}

#[test]
fn a_checkout_says_its_repository_without_credentials_its_branch_commit_and_user() {
    let d = checkout("plain", "feature/x");
    let f = facts(&d);
    assert_eq!(f.repository.as_deref(), Some("https://github.com/o/r"));
    assert_eq!(f.branch.as_deref(), Some("feature/x"));
    assert_eq!(f.revision.as_deref(), Some(SHA));
    assert_eq!(f.user.as_deref(), Some("dev@example.com"));
    assert!(!format!("{f:?}").contains("ghp_secret123"));
    // From a folder inside it too, as git finds it.
    std::fs::create_dir_all(d.join("src/deep")).unwrap();
    assert_eq!(facts(&d.join("src/deep")), f);
}

#[test]
fn remotes_become_web_addresses_with_no_credentials() {
    for (remote, want) in [
        (
            "https://user:ghp_secret123@github.com/o/r.git",
            Some("https://github.com/o/r"),
        ),
        (
            "https://ghp_secret123@github.com/o/r",
            Some("https://github.com/o/r"),
        ),
        (
            "https://x:p/a@ss@host.example/o/r/",
            Some("https://host.example/o/r"),
        ),
        (
            "https://gitlab.example:8443/g/s/r.git?private_token=abc#x",
            Some("https://gitlab.example:8443/g/s/r"),
        ),
        ("git@github.com:o/r.git", Some("https://github.com/o/r")),
        (
            "ssh://git@host.example:2222/o/r.git",
            Some("https://host.example/o/r"),
        ),
        ("http://host.local/r", Some("http://host.local/r")),
        ("/srv/git/r.git", None),
        ("../sibling", None),
        ("file:///srv/git/r.git", None),
        ("", None),
    ] {
        assert_eq!(web_address(remote).as_deref(), want, "{remote}");
    }
}

#[test]
fn a_detached_head_has_a_commit_and_no_branch() {
    let d = checkout("detached", "main");
    write(&d.join(".git/HEAD"), &format!("{SHA2}\n"));
    let f = facts(&d);
    assert_eq!(f.branch, None);
    assert_eq!(f.revision.as_deref(), Some(SHA2));
    assert_eq!(f.repository.as_deref(), Some("https://github.com/o/r"));
}

#[test]
fn a_packed_ref_is_found_and_a_new_branch_has_no_commit_yet() {
    let d = folder("packed");
    write(&d.join(".git/HEAD"), "ref: refs/heads/main\n");
    write(&d.join(".git/config"), CONFIG);
    write(
        &d.join(".git/packed-refs"),
        &format!("# pack-refs with: peeled fully-peeled sorted \n{SHA2} refs/heads/other\n{SHA} refs/heads/main\n^{SHA2}\n"),
    );
    assert_eq!(facts(&d).revision.as_deref(), Some(SHA));
    write(&d.join(".git/HEAD"), "ref: refs/heads/unborn\n");
    let f = facts(&d);
    assert_eq!(
        (f.branch.as_deref(), f.revision.as_deref()),
        (Some("unborn"), None)
    );
}

#[test]
fn a_worktree_reads_its_head_and_shares_refs_and_config() {
    let main = checkout("wt-main", "main");
    let wt_git = main.join(".git/worktrees/wt");
    write(&wt_git.join("HEAD"), "ref: refs/heads/topic\n");
    write(&wt_git.join("commondir"), "../..\n");
    write(&main.join(".git/refs/heads/topic"), &format!("{SHA2}\n"));
    let wt = folder("wt-tree");
    write(&wt.join(".git"), &format!("gitdir: {}\n", wt_git.display()));
    let f = facts(&wt);
    assert_eq!(f.branch.as_deref(), Some("topic"));
    assert_eq!(f.revision.as_deref(), Some(SHA2));
    assert_eq!(f.repository.as_deref(), Some("https://github.com/o/r"));
}

#[test]
fn a_folder_that_is_not_a_checkout_or_a_broken_one_says_only_who() {
    let plain = folder("plain-folder");
    let broken = folder("broken");
    write(&broken.join(".git"), "not a gitdir line\n");
    let garbage = folder("garbage");
    write(&garbage.join(".git/HEAD"), "\u{0}\u{1}nonsense");
    write(&garbage.join(".git/config"), "[remote \"origin\"\nurl = \n");
    for d in [&plain, &broken, &garbage] {
        let f = facts(d);
        assert_eq!(
            (&f.repository, &f.branch, &f.revision),
            (&None, &None, &None),
            "{d:?}"
        );
        assert_eq!(
            f.user.as_deref(),
            Some("dev"),
            "the login, when git names no one"
        );
    }
    let missing = plain.join("gone");
    assert_eq!(facts(&missing).repository, None);
    assert_eq!(facts(&missing).user.as_deref(), Some("dev"));
}

#[test]
fn a_commit_or_a_checkout_since_the_last_turn_is_seen() {
    let d = checkout("fresh", "main");
    let mut a = Attributor::new(UserId::Auto, nobody());
    let first = a.facts(d.to_str());
    assert_eq!(first.revision.as_deref(), Some(SHA));
    assert!(Arc::ptr_eq(&first, &a.facts(d.to_str())), "unchanged: kept");
    write(&d.join(".git/refs/heads/main"), &format!("{SHA2}\n"));
    assert_eq!(a.facts(d.to_str()).revision.as_deref(), Some(SHA2));
    write(&d.join(".git/refs/heads/next"), &format!("{SHA}\n"));
    write(&d.join(".git/HEAD"), "ref: refs/heads/next\n");
    let now = a.facts(d.to_str());
    assert_eq!(
        (now.branch.as_deref(), now.revision.as_deref()),
        (Some("next"), Some(SHA))
    );
}

#[test]
fn who_is_the_setting_else_the_checkout_s_email_the_global_one_or_the_login() {
    let d = checkout("who", "main");
    let plain = folder("who-plain");
    let home = folder("who-home");
    write(
        &home.join(".gitconfig"),
        "[user]\n\tname = Dev\n\temail = \"home@example.com\"\n",
    );
    let env = UserEnv {
        home: Some(home.to_path_buf()),
        ..nobody()
    };
    let who = |user: UserId, dir: &Path| {
        Attributor::new(user, env.clone())
            .facts(dir.to_str())
            .user
            .clone()
    };
    assert_eq!(
        who(UserId::Fixed("alice".into()), &d).as_deref(),
        Some("alice")
    );
    assert_eq!(who(UserId::Off, &d), None);
    assert_eq!(who(UserId::Auto, &d).as_deref(), Some("dev@example.com"));
    assert_eq!(
        who(UserId::Auto, &plain).as_deref(),
        Some("home@example.com")
    );
    let mut a = Attributor::new(UserId::Auto, env.clone());
    a.global_every = Duration::ZERO;
    assert_eq!(a.facts(None).user.as_deref(), Some("home@example.com"));
    // A work folder's email set by `includeIf "gitdir:..."` wins for checkouts under it.
    write(
        &home.join(".gitconfig"),
        &format!(
            "[user]\n\temail = home@example.com\n[includeIf \"gitdir:{}/\"]\n\tpath = work.inc\n",
            plain.display()
        ),
    );
    write(
        &home.join("work.inc"),
        "[user]\n\temail = work@example.com\n",
    );
    let inner = plain.join("repo");
    write(&inner.join(".git/HEAD"), "ref: refs/heads/main\n");
    assert_eq!(
        who(UserId::Auto, &inner).as_deref(),
        Some("work@example.com")
    );
    // The global file changed since it was read: the next turn says the new email.
    assert_eq!(a.facts(None).user.as_deref(), Some("home@example.com"));
    write(
        &home.join(".gitconfig"),
        "[user]\n\temail = new@example.com\n",
    );
    assert_eq!(a.facts(None).user.as_deref(), Some("new@example.com"));
    let none = UserEnv {
        login: None,
        ..nobody()
    };
    assert_eq!(Attributor::new(UserId::Auto, none).facts(None).user, None);
}

/// A FIFO at `path`, in place of the file git would have there.
#[cfg(unix)]
fn fifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "{path:?}");
}

/// Issue 37: a FIFO where git keeps a file (HEAD, a ref, the config, an included config, the
/// `.git` of a worktree) is not opened, so nothing waits for a writer that never comes: the
/// facts come back at once, with what the regular files say.
#[cfg(unix)]
#[test]
fn a_fifo_in_a_checkout_is_never_waited_on() {
    let head = checkout("fifo-head", "main");
    fifo(&head.join(".git/HEAD"));
    let branch = checkout("fifo-ref", "main");
    fifo(&branch.join(".git/refs/heads/main"));
    let config = checkout("fifo-config", "main");
    fifo(&config.join(".git/config"));
    let include = checkout("fifo-include", "main");
    write(&include.join(".git/config"), "[include]\n\tpath = more\n");
    fifo(&include.join(".git/more"));
    let dot_git = folder("fifo-dot-git");
    fifo(&dot_git.join(".git"));
    let dirs: Vec<PathBuf> = [&head, &branch, &config, &include, &dot_git]
        .iter()
        .map(|d| d.to_path_buf())
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let all: Vec<Attribution> = dirs.iter().map(|d| (*facts(d)).clone()).collect();
        let _ = tx.send(all);
    });
    let all = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("a FIFO in a checkout held up attribution");
    let said = |a: &Attribution| (a.branch.clone(), a.revision.clone());
    assert_eq!(said(&all[0]), (None, None), "HEAD is a FIFO: no branch");
    assert_eq!(all[0].repository.as_deref(), Some("https://github.com/o/r"));
    assert_eq!(
        said(&all[1]),
        (Some("main".into()), None),
        "the ref is a FIFO"
    );
    assert_eq!(said(&all[2]), (Some("main".into()), Some(SHA.into())));
    assert_eq!(all[2].repository, None, "the config is a FIFO");
    assert_eq!(said(&all[3]), (Some("main".into()), Some(SHA.into())));
    assert_eq!(all[4].repository, None, "`.git` is a FIFO: not a checkout");
    assert_eq!(all[4].user.as_deref(), Some("dev"));
}
