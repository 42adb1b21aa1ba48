//! Backends the command line can name: the built-in reference (`reference`), an engine built as
//! a shared library against the C ABI loaded in-process (`dylib:<path>`, [`crate::dylib`]) and,
//! through the subprocess protocol, any engine (`exec:<command line>`).
//!
//! The command line after `exec:` is split into words like a POSIX shell would
//! ([`crate::protocol::split_command_line`]: blanks, quotes and backslashes), but no shell runs:
//! no variables, globs, pipes or redirections. Wrap it in `sh -c '...'` to get those.

use std::time::Duration;

use ge_reference::Reference;
use ge_spec::{Backend, Profile};

use crate::confine::Confine;
pub use crate::protocol::GiveUp;
use crate::protocol::{ExecBackend, StderrLog};

/// A backend opened from a command-line name, with what it printed on standard error.
pub struct BackendHandle {
    backend: Box<dyn Backend>,
    stderr: Option<StderrLog>,
    confinement: Option<String>,
}

impl std::fmt::Debug for BackendHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendHandle")
            .field("backend", &self.backend.name())
            .finish()
    }
}

impl BackendHandle {
    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// How a subprocess backend is confined ([`crate::confine`]), for the report; `None` for
    /// an in-process backend.
    pub fn confinement(&self) -> Option<String> {
        self.confinement.clone()
    }

    /// What the backend wrote to standard error so far (empty for in-process backends), with
    /// the harness's notes on every restart of a subprocess backend.
    pub fn stderr(&self) -> String {
        self.stderr
            .as_ref()
            .map(StderrLog::text)
            .unwrap_or_default()
    }
}

/// Opens the backend named `arg` for a certification against `profile`: `reference` is the
/// reference of that profile, and a subprocess backend is started, told the profile in the
/// hello (and refused when it does not declare it), and gets `timeout` per request (an engine
/// loaded in-process too: a call past it ends the process, [`ge_dylib::TIMEOUT_STATUS`]). A
/// backend that never greets, however often it is started, is an error: nothing can be judged.
pub fn open(arg: &str, timeout: Duration, profile: Profile) -> Result<BackendHandle, String> {
    open_confined(arg, timeout, profile, Confine::On)
}

/// [`open`], with a subprocess backend confined as `confine` says ([`crate::confine`]).
pub fn open_confined(
    arg: &str,
    timeout: Duration,
    profile: Profile,
    confine: Confine,
) -> Result<BackendHandle, String> {
    open_giving_up(arg, timeout, profile, confine, GiveUp::default())
}

/// [`open_confined`], with a subprocess backend declared dead as `give_up` says.
pub fn open_giving_up(
    arg: &str,
    timeout: Duration,
    profile: Profile,
    confine: Confine,
    give_up: GiveUp,
) -> Result<BackendHandle, String> {
    if let Some(command_line) = arg.strip_prefix("exec:") {
        let exec = ExecBackend::bounded(command_line, timeout, profile, confine, give_up)
            .map_err(|e| format!("backend `{arg}`: {e}"))?;
        exec.greet().map_err(|e| {
            // The backend's own words, without the harness's notes on each start.
            let stderr: Vec<String> = exec
                .stderr_log()
                .text()
                .lines()
                .filter(|l| !l.starts_with("[ge-conformance] "))
                .map(str::to_owned)
                .collect();
            if stderr.iter().all(|l| l.trim().is_empty()) {
                format!("backend `{arg}`: {e}")
            } else {
                format!(
                    "backend `{arg}`: {e}\nits standard error:\n{}",
                    stderr.join("\n")
                )
            }
        })?;
        let stderr = Some(exec.stderr_log());
        let confinement = exec.confinement();
        return Ok(BackendHandle {
            backend: Box::new(exec),
            stderr,
            confinement,
        });
    }
    if let Some(path) = arg.strip_prefix("dylib:") {
        if confine == Confine::Required {
            return Err(format!(
                "backend `{arg}`: confinement is required (--require-confinement) and an engine loaded in-process shares the harness's process, which nothing confines; run it isolated, `exec:ge-conformance serve-dylib {path}`"
            ));
        }
        let path = std::path::Path::new(path);
        let note = crate::dylib::in_process_crash_note(path);
        let dylib = crate::dylib::DylibBackend::open(path, &note)
            .and_then(|d| d.require_profile(profile).map(|()| d))
            .map_err(|e| format!("backend `{arg}`: {e}"))?;
        // In-process, the timeout is the watchdog's: a call past it ends the run (status 4).
        dylib.set_timeout(Some(timeout));
        return Ok(BackendHandle {
            backend: Box::new(dylib),
            stderr: None,
            confinement: None,
        });
    }
    match arg {
        "reference" => Ok(BackendHandle {
            backend: Box::new(Reference::new(profile)),
            stderr: None,
            confinement: None,
        }),
        other => Err(format!(
            "unknown backend `{other}`: use `reference`, `dylib:<path>` or `exec:<command line>`"
        )),
    }
}
