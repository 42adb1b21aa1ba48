//! Judging trials ahead of a listing, in a child process: which trials a waiver waives is known
//! only once they have run, and nextest skips only what the listing marks ignored. The test
//! binary runs itself on those trials, one at a time, so that an engine that aborts, hangs or
//! prints costs one trial's mark, never the listing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the listing waits for one trial judged ahead, by default.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(60);

/// The environment the child must not see: nextest's (a waived failure fails there, it is not
/// shown as ignored) and the bundle's (the child's run is not the run).
const WITHHELD: [&str; 3] = ["NEXTEST", "NEXTEST_RUN_ID", "GE_CONFORMANCE_OUT"];

/// Runs the trials `names` in children of this test binary, one at a time (`--exact`, the JSON
/// format, into a log file), and returns those that ended ignored at run time, each with its
/// reason: for a case or property trial of a declared capability, a waived failure. A trial
/// during which the child died or that ran past `limit` counts as not waived, and a new child
/// takes the trials left. Nothing the children print reaches this process's output.
pub fn waived(names: &[String], limit: Duration) -> BTreeMap<String, String> {
    let mut waived = BTreeMap::new();
    let mut left: Vec<String> = names.to_vec();
    while !left.is_empty() {
        let Some(settled) = one_child(&left, limit, &mut waived) else {
            break;
        };
        let before = left.len();
        left.retain(|n| !settled.contains(n));
        if left.len() == before {
            // A child that judged nothing (it could not start its run): the rest stay unmarked.
            break;
        }
    }
    waived
}

/// One child over `names`: the trials it started (ended or not), with the waived ones added to
/// `waived`. `None` when no child could be started.
fn one_child(
    names: &[String],
    limit: Duration,
    waived: &mut BTreeMap<String, String>,
) -> Option<BTreeSet<String>> {
    let log = tempfile::NamedTempFile::new().ok()?;
    let mut command = Command::new(std::env::current_exe().ok()?);
    command
        .args(["--exact", "--format", "json", "--test-threads", "1"])
        .args(["--color", "never", "--logfile"])
        .arg(log.path())
        .args(names)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for name in WITHHELD {
        command.env_remove(name);
    }
    let mut child = command.spawn().ok()?;
    watch(&mut child, log.path(), limit);
    let text = std::fs::read_to_string(log.path()).unwrap_or_default();
    let mut started = BTreeSet::new();
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(name) = event.get("name").and_then(|n| n.as_str()) else {
            continue;
        };
        match event.get("event").and_then(|e| e.as_str()) {
            Some("started") => {
                started.insert(name.to_owned());
            }
            Some("ignored") => {
                let reason = event.get("message").and_then(|m| m.as_str());
                waived.insert(name.to_owned(), reason.unwrap_or_default().to_owned());
            }
            _ => {}
        }
    }
    Some(started)
}

/// Waits for `child` to end, killing it when its log has not grown for `limit` (one trial
/// running too long).
fn watch(child: &mut Child, log: &Path, limit: Duration) {
    let (mut size, mut since) = (0, Instant::now());
    loop {
        if !matches!(child.try_wait(), Ok(None)) {
            return;
        }
        let now = std::fs::metadata(log).map_or(0, |m| m.len());
        if now != size {
            (size, since) = (now, Instant::now());
        } else if since.elapsed() > limit {
            // Killing fails only for a child already gone, which `wait` then reaps.
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
