//! The supervisor of a run that loads an engine in-process (`certify --backend dylib:`): the run
//! happens in a child process, the same command line, which leaves a token saying its exit
//! status when `main` returns. Only the token's status is the run's. A child that ends any other
//! way, by an engine's `_exit`, `quick_exit` or `exit_group`, an `exit` from one of its threads,
//! an `atexit` handler of its own or a fork whose parent exits, ends the run with status 3,
//! never with the status the engine chose; a child ended by a signal ends it with 128 plus the
//! signal's number. Unix only: elsewhere the run stays in-process, as before.

use std::path::Path;
use std::process::ExitCode;

/// The environment variable naming the token file of a supervised run.
pub const TOKEN_ENV: &str = "GE_CONFORMANCE_RUN_TOKEN";

/// The exit statuses the harness itself gives a run an in-process engine ended, after its note:
/// an `exit` inside an engine call, a call past its timeout.
const HARNESS_STATUSES: [i32; 2] = [ge_dylib::EXIT_STATUS, ge_dylib::TIMEOUT_STATUS];

/// In a supervised child: records that `main` returned with `code`, and which process did
/// (a fork of the child is not the child).
pub fn leave_token(code: u8) {
    if let Some(path) = std::env::var_os(TOKEN_ENV) {
        let _ = std::fs::write(path, format!("{} {code}", std::process::id()));
    }
}

/// True inside a supervised child.
pub fn supervised() -> bool {
    std::env::var_os(TOKEN_ENV).is_some()
}

/// Runs this process's command line again as a supervised child and gives the run's status;
/// `None` when no child could be started (the caller then runs in-process).
///
/// The supervisor also ends what the child cannot: interrupted (Ctrl-C, SIGTERM, SIGHUP), it
/// passes the signal on and kills the child if it has not ended [`GRACE`] later (an engine's
/// thread can hold a lock the child's own exit needs); and a child still running
/// [`GRACE_BEYOND_BOUND`] past `bound`, the whole run's bound, is killed and the run ends with
/// status 4 and a note.
#[cfg(unix)]
pub fn run(engine: &str, bound: Option<std::time::Duration>) -> Option<ExitCode> {
    use std::os::unix::process::ExitStatusExt;
    let token = tempfile::NamedTempFile::new().ok()?;
    let exe = std::env::current_exe().ok()?;
    let mut child = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(TOKEN_ENV, token.path())
        .spawn()
        .ok()?;
    let pid = child.id();
    let status = match watch(&mut child, bound.map(|b| b + b.min(GRACE_BEYOND_BOUND)))? {
        Watched::Ended(status) => status,
        Watched::Interrupted { killed } => {
            if killed {
                eprintln!(
                    "interrupted: the run of the engine `{engine}` did not stop within {} s \
                     and was killed",
                    GRACE.as_secs()
                );
            }
            return Some(ExitCode::from(130));
        }
        Watched::PastBound(bound) => {
            eprintln!(
                "ge-conformance: the run of the engine `{engine}` loaded in-process was still \
                 going {} s after it started, past its bound (--give-up-after-secs) and a grace: \
                 it was killed, no report. Certify it isolated, where the bound fails the \
                 remaining trials and the report is written: --backend 'exec:ge-conformance \
                 serve-dylib {engine}'",
                bound.as_secs()
            );
            return Some(ExitCode::from(4));
        }
    };
    Some(
        match (left_by(token.path(), pid), status.code(), status.signal()) {
            // `main` returned: its status is the run's, whatever an engine's handler did later.
            (Some(code), _, _) => ExitCode::from(code),
            (None, Some(code), _) if HARNESS_STATUSES.contains(&code) => {
                ExitCode::from(u8::try_from(code).unwrap_or(1))
            }
            (None, _, Some(signal)) => ExitCode::from(u8::try_from(128 + signal).unwrap_or(255)),
            (None, code, _) => {
                let status = code.map_or_else(|| "no status".to_owned(), |c| format!("status {c}"));
                eprintln!(
                    "ge-conformance: the engine `{engine}` loaded in-process ended the process \
                 ({status}) before the run finished: no report. Certify it isolated, where an \
                 exit fails one trial and the run goes on: --backend 'exec:ge-conformance \
                 serve-dylib {engine}'"
                );
                ExitCode::from(3)
            }
        },
    )
}

/// How long an interrupted child has to end on its own before it is killed.
#[cfg(unix)]
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The most the supervisor waits past the whole run's bound before it kills the child (it
/// waits as long as the bound itself when that is shorter): the child's calls end at their
/// timeouts, so a run that gets this far is one an engine keeps from ending.
#[cfg(unix)]
pub const GRACE_BEYOND_BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// How a supervised child's watch ended.
#[cfg(unix)]
enum Watched {
    /// The child ended on its own.
    Ended(std::process::ExitStatus),
    /// The supervisor was interrupted; the child is gone, `killed` when it did not end on
    /// its own within [`GRACE`].
    Interrupted { killed: bool },
    /// The child ran past this time and was killed.
    PastBound(std::time::Duration),
}

/// Waits for `child`, passing interruptions on and killing it once `limit` has passed.
#[cfg(unix)]
fn watch(child: &mut std::process::Child, limit: Option<std::time::Duration>) -> Option<Watched> {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let started = Instant::now();
    let interrupted = Arc::new(AtomicBool::new(false));
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)?;
    {
        let interrupted = Arc::clone(&interrupted);
        let _ = ctrlc::set_handler(move || {
            interrupted.store(true, Ordering::SeqCst);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        });
    }
    let mut since: Option<Instant> = None;
    let mut killed = false;
    loop {
        if let Some(status) = child.try_wait().ok()? {
            return Some(if interrupted.load(Ordering::SeqCst) {
                Watched::Interrupted { killed }
            } else {
                Watched::Ended(status)
            });
        }
        if interrupted.load(Ordering::SeqCst) {
            let at = *since.get_or_insert_with(Instant::now);
            if at.elapsed() >= GRACE && !killed {
                killed = child.kill().is_ok();
            }
        } else if let Some(limit) = limit.filter(|l| started.elapsed() >= *l) {
            let _ = child.kill();
            let _ = child.wait();
            return Some(Watched::PastBound(limit));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Elsewhere, nothing supervises.
#[cfg(not(unix))]
pub fn run(_engine: &str, _bound: Option<std::time::Duration>) -> Option<ExitCode> {
    None
}

/// The status the token at `path` records, when the child `pid` itself left it (a token from
/// a fork of the child, whose parent the engine ended, is not the run's).
fn left_by(path: &Path, pid: u32) -> Option<u8> {
    let text = std::fs::read_to_string(path).ok()?;
    let (writer, code) = text.split_once(' ')?;
    (writer.parse::<u32>().ok()? == pid).then_some(())?;
    code.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_counts_only_from_the_child_itself() {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "41 1").unwrap();
        assert_eq!(left_by(file.path(), 41), Some(1));
        assert_eq!(left_by(file.path(), 42), None, "a fork's token");
        std::fs::write(file.path(), "").unwrap();
        assert_eq!(
            left_by(file.path(), 41),
            None,
            "no token: main never returned"
        );
    }
}
