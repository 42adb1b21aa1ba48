//! Helpers a backend started and that left its process group (`setpgid(0, 0)`, `setsid()`):
//! killing the group does not reach them, so the harness adopts them (it is the subreaper of
//! what it starts, on Linux) and kills what it adopted once their backend is gone.
//!
//! A process is taken for a backend's helper only when three things hold: its parent is this
//! process (it was adopted, or is a backend), it is not a running backend, and its environment
//! names this process in [`HARNESS_VAR`], which every backend gets and what it starts inherits.
//! So a process the rest of the program started (a test spawning a command) is never touched,
//! and a helper that escaped both its group and its environment is out of reach: that would
//! take cgroups, which an unprivileged run does not have.

/// The variable every backend is started with: this process's id. What the backend starts
/// inherits it, and so a helper that left the backend's process group is still known as one.
pub const HARNESS_VAR: &str = "GE_CONFORMANCE_HARNESS";

/// Makes this process the subreaper of what it starts (Linux), once: a helper whose backend
/// ends is then adopted here, where [`reap`] finds it, rather than by the machine's init.
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        });
    }
}

/// Kills and reaps every helper of a backend that this process adopted, and the helpers'
/// own process groups, except the processes `running` (the backends still running, whose
/// list the caller holds locked, so that none starts meanwhile unlisted). Killing a helper
/// hands its own children to this process, so it looks again, a bounded number of times.
#[cfg(target_os = "linux")]
pub fn reap(running: &std::collections::BTreeSet<u32>) {
    use rustix::process::{kill_process, kill_process_group, waitpid, Pid, Signal, WaitOptions};
    let me = std::process::id();
    let marker = format!("{HARNESS_VAR}={me}");
    for _ in 0..16 {
        let strays: Vec<Pid> = adopted(me)
            .filter(|pid| !running.contains(pid) && carries(*pid, &marker))
            .filter_map(|pid| i32::try_from(pid).ok().and_then(Pid::from_raw))
            .collect();
        if strays.is_empty() {
            return;
        }
        for &pid in &strays {
            // A helper that made a group of its own takes it along.
            let _ = kill_process_group(pid, Signal::KILL);
            let _ = kill_process(pid, Signal::KILL);
        }
        for &pid in &strays {
            let _ = waitpid(Some(pid), WaitOptions::empty());
        }
    }
}

/// Waits until every process of `pids` has exited (a zombie, or gone), at most `within`: their
/// helpers are handed to this process when they exit, and not before.
#[cfg(target_os = "linux")]
pub fn await_exit(pids: &std::collections::BTreeSet<u32>, within: std::time::Duration) {
    let deadline = std::time::Instant::now() + within;
    let running = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").starts_with(" Z"))
    };
    while pids.iter().any(running) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Elsewhere, the group kill is all there is.
#[cfg(not(target_os = "linux"))]
pub fn await_exit(_pids: &std::collections::BTreeSet<u32>, _within: std::time::Duration) {}

/// Where there is no subreaper, the group kill is all there is.
#[cfg(not(target_os = "linux"))]
pub fn reap(_running: &std::collections::BTreeSet<u32>) {}

/// The processes whose parent is `me`, read from `/proc`.
#[cfg(target_os = "linux")]
fn adopted(me: u32) -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(move |&pid| parent_of(pid) == Some(me))
}

/// The parent of `pid`: the second field after the command name in `/proc/<pid>/stat` (the
/// name is in parentheses and may hold anything, so the fields are read after the last `)`).
#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    parent_in(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The parent's id in the text of a `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn parent_in(stat: &str) -> Option<u32> {
    let (_, fields) = stat.rsplit_once(')')?;
    fields.split_whitespace().nth(1)?.parse().ok()
}

/// The most bytes of a process's environment [`carries`] reads: four times the 2 MiB a Linux
/// `exec` takes by default for arguments and environment together. A helper that points its
/// environment at gigabytes of its memory (`PR_SET_MM`, as root) costs the harness this much
/// at most (round six, L3).
#[cfg(target_os = "linux")]
const MAX_ENVIRON: u64 = 8 << 20;

/// True when `pid` was started with `marker` (`NAME=value`) in its environment, read one entry
/// at a time, [`MAX_ENVIRON`] bytes at most.
#[cfg(target_os = "linux")]
fn carries(pid: u32, marker: &str) -> bool {
    use std::io::{BufRead, Read};
    let Ok(environ) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
        return false;
    };
    std::io::BufReader::new(environ.take(MAX_ENVIRON))
        .split(0)
        .map_while(Result::ok)
        .any(|entry| entry == marker.as_bytes())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_a_name_with_parentheses_and_spaces() {
        assert_eq!(parent_in("41 (a) b (c) S 7 41 41 0 -1"), Some(7));
        assert_eq!(parent_in("41 (sleep) Z 1 41 41"), Some(1));
        assert_eq!(parent_in("41 (no parent"), None);
        // This process's own entry: its parent is whoever ran the tests.
        let me = std::process::id();
        let parent = rustix::process::getppid().map(|p| p.as_raw_nonzero().get() as u32);
        assert_eq!(parent_of(me), parent);
        assert_eq!(parent_of(u32::MAX), None);
    }

    #[test]
    fn a_process_is_ours_only_with_the_marker_in_its_environment() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(HARNESS_VAR, "someone-else")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        assert!(adopted(std::process::id()).any(|p| p == pid));
        // The kernel fills in the environment a moment after `spawn` returns.
        let theirs = format!("{HARNESS_VAR}=someone-else");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !carries(pid, &theirs) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(carries(pid, &theirs));
        assert!(!carries(
            pid,
            &format!("{HARNESS_VAR}={}", std::process::id())
        ));
        // Not carrying this process's marker, it is left alone.
        reap(&std::collections::BTreeSet::new());
        assert_eq!(
            child.try_wait().expect("a status"),
            None,
            "reap killed a stranger"
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}
