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

/// Set in the child, to the listing process's id: the child writes no report bundle (its run
/// is not the run) and ends when the listing process is gone.
const MARKER: &str = "GE_CONFORMANCE_JUDGING_AHEAD";

/// The environment the child must not see: nextest's (a waived failure fails there, it is not
/// shown as ignored) and the bundle's.
const WITHHELD: [&str; 3] = ["NEXTEST", "NEXTEST_RUN_ID", super::OUT_ENV];

/// The most bytes of trial names one child is given, well under the shortest limit on a
/// command line (32,767 characters on Windows).
const NAMES_PER_CHILD: usize = 8_000;

/// Runs the trials `names` in children of this test binary, one at a time (`--exact`, the JSON
/// format, into a log file), and returns those that ended ignored at run time, each with its
/// reason: for a case or property trial of a declared capability, a waived failure. A trial
/// during which the child died or that ran past `limit` counts as not waived, says so on
/// standard error, and a new child takes the trials left. Nothing the children print reaches
/// this process's output.
pub fn waived(names: &[String], limit: Duration) -> BTreeMap<String, String> {
    let mut waived = BTreeMap::new();
    let mut left: Vec<String> = names.to_vec();
    while !left.is_empty() {
        let batch = &left[..batch_len(&left)];
        let settled = match one_child(batch, limit, &mut waived) {
            Ok(settled) if !settled.is_empty() => settled,
            Ok(_) => {
                not_judged(&left, "the child judged none of them");
                break;
            }
            Err(why) => {
                not_judged(&left, &why);
                break;
            }
        };
        left.retain(|n| !settled.contains(n));
    }
    waived
}

/// How many of `names`, from the first, one child is given: as many as fit in
/// [`NAMES_PER_CHILD`] bytes, and at least one.
fn batch_len(names: &[String]) -> usize {
    let mut bytes = 0;
    let fit = names
        .iter()
        .take_while(|n| {
            bytes += n.len() + 1;
            bytes <= NAMES_PER_CHILD
        })
        .count();
    fit.max(1).min(names.len())
}

/// Says on standard error that the trials `left` are listed to run, unjudged, and why.
fn not_judged(left: &[String], why: &str) {
    eprintln!(
        "ge-conformance: {} trial(s) a waiver may waive could not be judged ahead ({why}): \
         listed to run, where a waived failure fails under nextest",
        left.len()
    );
}

/// One child over `names`: the trials it started (ended or not), with the waived ones added to
/// `waived`, or why no child could run.
fn one_child(
    names: &[String],
    limit: Duration,
    waived: &mut BTreeMap<String, String>,
) -> Result<BTreeSet<String>, String> {
    let log = tempfile::NamedTempFile::new().map_err(|e| format!("a log file: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("this test binary: {e}"))?;
    let mut command = Command::new(exe);
    command
        .args(["--exact", "--format", "json", "--test-threads", "1"])
        .args(["--color", "never", "--logfile"])
        .arg(log.path())
        .arg("--")
        .args(names)
        .env(MARKER, std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for name in WITHHELD {
        command.env_remove(name);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("starting this test binary: {e}"))?;
    let cut_short = watch(&mut child, log.path(), limit);
    let text = std::fs::read_to_string(log.path()).unwrap_or_default();
    let (mut started, mut ended) = (BTreeSet::new(), BTreeSet::new());
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
                // Only a waiver's or a baseline's ignoring counts: a trial the child ignored for any other
                // reason (a capability its engine did not declare there, say) runs, and is
                // decided, in the run nextest executes.
                let reason = event.get("message").and_then(|m| m.as_str());
                let skippable = |r: &&str| {
                    r.starts_with(crate::certify::WAIVED) || r.starts_with(super::baseline::KNOWN)
                };
                if let Some(reason) = reason.filter(skippable) {
                    waived.insert(name.to_owned(), reason.to_owned());
                }
                ended.insert(name.to_owned());
            }
            Some(_) => {
                ended.insert(name.to_owned());
            }
            None => {}
        }
    }
    for name in started.difference(&ended) {
        let how = if cut_short {
            format!("ran past {} ms", limit.as_millis())
        } else {
            "ended the process".to_owned()
        };
        eprintln!("ge-conformance: {name} {how} while judged ahead for the listing: listed to run");
    }
    Ok(started)
}

/// Waits for `child` to end, killing it when its log has not grown for `limit` (one trial
/// running too long) or when it can no longer be waited for. True when it was killed.
fn watch(child: &mut Child, log: &Path, limit: Duration) -> bool {
    let (mut size, mut since) = (0, Instant::now());
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return false,
            Ok(None) => {}
            Err(_) => break,
        }
        let now = std::fs::metadata(log).map_or(0, |m| m.len());
        if now != size {
            (size, since) = (now, Instant::now());
        } else if since.elapsed() > limit {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Killing fails only for a child already gone, which `wait` then reaps.
    let _ = child.kill();
    let _ = child.wait();
    true
}

/// In a child judging ahead: true, and the child ends by itself once the listing process that
/// started it is gone (killed, say), rather than judging on for nobody.
///
/// The marker counts only where a listing could have set it: never beside a bundle to write
/// (a listing withholds `GE_CONFORMANCE_OUT` from its children) and, on unix, only naming this
/// process's parent. Set by hand otherwise, it is ignored with a note, and the run writes its
/// bundle as any run does.
pub fn in_child() -> bool {
    let Some(parent) = std::env::var(MARKER).ok() else {
        return false;
    };
    let forged = |why: &str| {
        eprintln!(
            "ge-conformance: {MARKER} is set, but {why}: it is ignored, and this run is judged \
             and writes its bundle as any run (only a listing judging ahead sets it)"
        );
        false
    };
    if std::env::var_os(super::OUT_ENV).is_some() {
        return forged("so is GE_CONFORMANCE_OUT, which a listing never gives its children");
    }
    #[cfg(unix)]
    {
        let Ok(parent) = parent.parse::<u32>() else {
            return forged("not to a process id");
        };
        if std::os::unix::process::parent_id() != parent {
            return forged("it does not name this process's parent");
        }
        std::thread::spawn(move || loop {
            if std::os::unix::process::parent_id() != parent {
                std::process::exit(101);
            }
            std::thread::sleep(Duration::from_millis(200));
        });
    }
    #[cfg(not(unix))]
    let _ = parent;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_given_the_names_that_fit_and_at_least_one() {
        let names = |len: usize, count: usize| vec!["n".repeat(len); count];
        assert_eq!(batch_len(&names(10, 5)), 5);
        assert_eq!(batch_len(&names(5_000, 3)), 1);
        assert_eq!(batch_len(&names(20_000, 2)), 1);
        // 99 bytes a name with its separator: 80 fit in 8,000.
        assert_eq!(batch_len(&names(99, 500)), 80);
        assert_eq!(batch_len(&[]), 0);
    }
}
