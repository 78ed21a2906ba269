//! Other processes: is one still running, and which process is the agent behind a hook.
//!
//! The spool asks whether the process that claimed a batch is gone (then the batch is given
//! back); the hook daemon asks whether the agent behind a session is gone (then its open turn
//! is exported, unfinished, instead of waiting an hour). Both must work on macOS, where many
//! Claude Code users are, so nothing here reads `/proc` without another way beside it.
//!
//! A pid alone does not name a process for long: pids are reused (macOS wraps at 99,999),
//! and in another pid namespace (a container sharing the hook folder) the same number is
//! another process. So the agent is recorded as a [`ProcessId`]: the pid, when that process
//! started, and the pid namespace the number belongs to.

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

/// A process as it was seen: enough to tell it from a later one with the same pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessId {
    pub pid: u32,
    /// When it started, in the OS's own unit (clock ticks since boot on Linux, microseconds
    /// since the epoch on macOS); `None` where the OS does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    /// The pid namespace the pid is in (its inode, Linux); `None` elsewhere, or where it was
    /// not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns: Option<u64>,
}

impl ProcessId {
    /// Process `pid` as it is now, if it runs.
    pub fn of(pid: u32) -> Option<ProcessId> {
        if !alive(pid) {
            return None;
        }
        Some(ProcessId {
            pid,
            start: stat_of(pid).and_then(|s| s.start),
            ns: own_pid_namespace(),
        })
    }

    /// Whether this process still runs, as the process it was: `Some(false)` once it is gone
    /// or its pid has been given to another; `None` when this process cannot tell (the pid
    /// belongs to another pid namespace).
    pub fn still_running(&self) -> Option<bool> {
        // A record without a namespace (an older hook's) is taken to be from this one.
        if let (Some(theirs), Some(ours)) = (self.ns, own_pid_namespace()) {
            if theirs != ours {
                return None;
            }
        }
        if !alive(self.pid) {
            return Some(false);
        }
        match (self.start, stat_of(self.pid).and_then(|s| s.start)) {
            (Some(then), Some(now)) => Some(then == now),
            // A process whose start cannot be read now (it may have just exited): its pid
            // still answers, and the next check looks again.
            _ => Some(true),
        }
    }
}

/// The pid namespace this process is in: the inode in `/proc/self/ns/pid` (`pid:[N]`).
fn own_pid_namespace() -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        static NS: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
        *NS.get_or_init(|| {
            let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
            let text = link.to_str()?;
            text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
        })
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        None
    }
}

/// What the OS says of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    ppid: u32,
    name: String,
    start: Option<u64>,
}

/// Shells that run a hook's command line (`sh -c '…'`) and exit with it: the agent is their
/// parent, not them.
const SHELLS: &[&str] = &[
    "sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
];

/// The process that ran this hook and outlives it: the agent (Claude Code's `node`, say).
/// Hosts start a hook through a shell, which may exit when the hook does, so a parent that is
/// a shell is skipped for its own parent. `None` where the OS does not say.
pub fn hook_host() -> Option<ProcessId> {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        let stat = stat_of(parent);
        let (pid, start) = match &stat {
            Some(s) if SHELLS.contains(&s.name.as_str()) && s.ppid > 1 => {
                (s.ppid, stat_of(s.ppid).and_then(|g| g.start))
            }
            _ if parent > 1 => (parent, stat.and_then(|s| s.start)),
            _ => return None,
        };
        Some(ProcessId {
            pid,
            start,
            ns: own_pid_namespace(),
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// `pid`'s parent, command name and start, from `/proc/<pid>/stat` (Linux).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn stat_of(pid: u32) -> Option<Stat> {
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

/// `pid`'s parent, command name and start, from `proc_pidinfo` (macOS).
#[cfg(target_os = "macos")]
fn stat_of(pid: u32) -> Option<Stat> {
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
    Some(Stat {
        ppid: info.pbi_ppid,
        name: String::from_utf8_lossy(&name).into_owned(),
        start: Some(info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec),
    })
}

/// Elsewhere the parent's parent is not asked for: the hook's own parent is taken as the host.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
fn stat_of(_pid: u32) -> Option<Stat> {
    None
}

/// `pid (comm) state ppid … starttime …`: the command name may hold spaces and parentheses,
/// so it ends at the last `)`; `starttime` is the 22nd field (proc(5)).
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn parse_stat(stat: &str) -> Option<Stat> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    // Fields 5 to 21 lie between ppid (4) and starttime (22).
    let start = rest.nth(17).and_then(|t| t.parse().ok());
    Some(Stat { ppid, name, start })
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
        let line = "123 (my (odd) name) S 45 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 200";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 45,
                name: "my (odd) name".into(),
                start: Some(98765)
            })
        );
        assert_eq!(
            parse_stat("123 (short) S 45 1").map(|s| s.start),
            Some(None)
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[cfg(any(target_os = "linux", target_os = "macos"))]
    #[test]
    fn the_parent_of_a_shell_child_is_found() {
        // `sh -c 'cat /proc/self/stat'` style: ask from inside a child about its parent.
        let me = std::process::id();
        let stat = stat_of(me).unwrap();
        assert_eq!(stat.ppid, std::os::unix::process::parent_id());
        assert!(!stat.name.is_empty());
        assert!(stat.start.is_some());
    }

    /// A pid that now belongs to another process (reused) is not the process recorded: the
    /// start time tells them apart, although `kill(pid, 0)` answers for both. And a process
    /// seen from another pid namespace is neither alive nor dead here.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    #[test]
    fn a_reused_pid_is_another_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let seen = ProcessId::of(child.id()).unwrap();
        assert_eq!(seen.still_running(), Some(true));
        let earlier = ProcessId {
            start: seen.start.map(|s| s - 1),
            ..seen
        };
        assert_eq!(
            earlier.still_running(),
            Some(false),
            "same pid, other process"
        );
        #[cfg(target_os = "linux")]
        {
            let elsewhere = ProcessId {
                ns: seen.ns.map(|n| n + 1),
                ..seen
            };
            assert_eq!(elsewhere.still_running(), None, "another namespace's pid");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(seen.still_running(), Some(false));
    }
}
