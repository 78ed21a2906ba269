//! Other processes: is one still running, and which process is the agent behind a hook.
//!
//! The spool asks whether the process that claimed a batch is gone (then the batch is given
//! back); the hook daemon asks whether the agent behind a session is gone (then its open turn
//! is exported, unfinished, instead of waiting an hour). Both must work on macOS, where many
//! Claude Code users are, so nothing here reads `/proc` without another way beside it.

/// Whether process `pid` still runs. `kill(pid, 0)` delivers no signal; it fails with `ESRCH`
/// only when no such process exists (`EPERM` means it exists but is someone else's). Where
/// that cannot be asked (not Unix), every process is taken to be running: a claim is then
/// never taken from a live process, at the cost of never taking one from a dead one.
pub fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        !matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        )
    }
    #[cfg(not(unix))]
    {
        pid != 0
    }
}

/// Shells that run a hook's command line (`sh -c '…'`) and exit with it: the agent is their
/// parent, not them.
const SHELLS: &[&str] = &[
    "sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
];

/// The process that ran this hook and outlives it: the agent (Claude Code's `node`, say).
/// Hosts start a hook through a shell, which may exit when the hook does, so a parent that is
/// a shell is skipped for its own parent. `None` where the OS does not say.
pub fn hook_host() -> Option<u32> {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        match parent_of(parent) {
            Some((grandparent, name)) if SHELLS.contains(&name.as_str()) && grandparent > 1 => {
                Some(grandparent)
            }
            _ if parent > 1 => Some(parent),
            _ => None,
        }
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The parent of `pid` and `pid`'s own command name, from `/proc/<pid>/stat` (Linux).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn parent_of(pid: u32) -> Option<(u32, String)> {
    use std::io::Read;
    // One read: the fields wanted are in the first few dozen bytes, and a hook pays for
    // every system call (procfs reports no size, so reading to the end takes six).
    let mut buf = [0u8; 512];
    let n = std::fs::File::open(format!("/proc/{pid}/stat"))
        .ok()?
        .read(&mut buf)
        .ok()?;
    parse_stat(&String::from_utf8_lossy(&buf[..n]))
}

/// The parent of `pid` and `pid`'s own command name, from `proc_pidinfo` (macOS).
#[cfg(target_os = "macos")]
fn parent_of(pid: u32) -> Option<(u32, String)> {
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
    // SAFETY: `info` is a `proc_bsdinfo` of `size` bytes, which is what PROC_PIDTBSDINFO
    // writes; the call writes nothing when it fails.
    let written = unsafe {
        libc::proc_pidinfo(
            i32::try_from(pid).ok()?,
            libc::PROC_PIDTBSDINFO,
            0,
            (&mut info as *mut libc::proc_bsdinfo).cast(),
            size,
        )
    };
    if written != size {
        return None;
    }
    let name: Vec<u8> = info
        .pbi_comm
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    Some((info.pbi_ppid, String::from_utf8_lossy(&name).into_owned()))
}

/// Elsewhere the parent's parent is not asked for: the hook's own parent is taken as the host.
#[cfg(all(
    unix,
    not(any(target_os = "linux", target_os = "android", target_os = "macos"))
))]
fn parent_of(_pid: u32) -> Option<(u32, String)> {
    None
}

/// `pid (comm) state ppid …`: the command name may hold spaces and parentheses, so it ends at
/// the last `)`.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn parse_stat(stat: &str) -> Option<(u32, String)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((ppid, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_reaped_child_does_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!alive(pid), "a reaped child is gone");
    }

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(
            parse_stat("123 (my (odd) name) S 45 123 123 0"),
            Some((45, "my (odd) name".into()))
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[cfg(any(target_os = "linux", target_os = "macos"))]
    #[test]
    fn the_parent_of_a_shell_child_is_found() {
        // `sh -c 'cat /proc/self/stat'` style: ask from inside a child about its parent.
        let me = std::process::id();
        let (parent, name) = parent_of(me).unwrap();
        assert_eq!(parent, std::os::unix::process::parent_id());
        assert!(!name.is_empty());
    }
}
