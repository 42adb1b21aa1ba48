//! What the commands of the `ge-conformance` binary share: the usage error, how an `exec:`
//! backend is run, the profile, level and report-format arguments, the seed parser, and the
//! `out!`/`outn!` macros that print on standard output. Each command lives in a module of its
//! own below.

use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;
use ge_conformance::backends::{self, BackendHandle};
use ge_conformance::confine::Confine;
use ge_conformance::judging::Judging;
use ge_conformance::local::LocalCases;
use ge_conformance::protocol;
use ge_spec::{Capability, Conformance, Profile};

/// Prints a line on standard output; a closed pipe (`| head`) is not an error worth a panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Prints on standard output without a newline, ignoring a closed pipe.
macro_rules! outn {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($t)*);
    }};
}

// The macros above are in scope in the modules declared below them, and only there.
pub mod certify;
pub mod compare;
pub mod corpus;
pub mod divergence;
pub mod eval;
pub mod explain;
pub mod matrix;
pub mod promote;
pub mod sancov;
pub mod serve;
pub mod spec;
pub mod supervise;
pub mod verify;

/// A failure of set-up or usage: exit status 2.
#[derive(Debug)]
pub struct Usage(pub String);

/// The format of the report `certify` prints.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Junit,
}

/// The behaviour profile (see `ge_spec::Profile`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum ProfileArg {
    /// What the source text documents.
    #[default]
    Documented,
    /// What the open-source GE implementation does.
    Upstream,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Documented => Profile::Documented,
            ProfileArg::Upstream => Profile::Upstream,
        }
    }
}

/// The conformance level (see `ge_spec::Conformance`).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq, Default)]
pub enum LevelArg {
    /// What the source text states; the suite's own choices are deviations, never failures.
    #[default]
    Documented,
    /// The suite's own choices (reference-defined clauses) bind as well.
    Strict,
}

impl From<LevelArg> for Conformance {
    fn from(l: LevelArg) -> Conformance {
        match l {
            LevelArg::Documented => Conformance::Documented,
            LevelArg::Strict => Conformance::Strict,
        }
    }
}

/// How a command judges: its `--profile` and `--level`.
pub fn judging(profile: ProfileArg, level: LevelArg) -> Judging {
    Judging::new(profile.into(), level.into())
}

/// The default of `--timeout-ms`.
pub const DEFAULT_TIMEOUT_MS: u64 = protocol::DEFAULT_TIMEOUT.as_millis() as u64;

/// How an `exec:` backend is run: `--timeout-ms`, `--no-confine`, `--require-confinement`,
/// `--give-up-after`, `--give-up-after-crashes` and `--give-up-after-restarts`.
#[derive(Debug, Clone, Copy)]
pub struct Exec {
    timeout: std::time::Duration,
    confine: Confine,
    give_up: backends::GiveUp,
}

impl Exec {
    /// The run of `--timeout-ms` and `--no-confine`.
    pub fn new(timeout_ms: u64, no_confine: bool) -> Exec {
        Exec {
            timeout: std::time::Duration::from_millis(timeout_ms),
            confine: if no_confine {
                Confine::Off
            } else {
                Confine::On
            },
            give_up: backends::GiveUp::default(),
        }
    }

    /// With `required` (`--require-confinement`), a backend that Landlock cannot confine is
    /// not run ([`Confine::Required`]).
    pub fn requiring_confinement(self, required: bool) -> Exec {
        if required {
            Exec {
                confine: Confine::Required,
                ..self
            }
        } else {
            self
        }
    }

    /// Declares the backend dead as `give_up` says (0 in a field: never on that count).
    pub fn giving_up(self, give_up: backends::GiveUp) -> Exec {
        Exec { give_up, ..self }
    }
}

/// Starts the backend a `--backend` argument names.
pub fn open_backend(arg: &str, exec: Exec, profile: Profile) -> Result<BackendHandle, Usage> {
    backends::open_giving_up(arg, exec.timeout, profile, exec.confine, exec.give_up).map_err(Usage)
}

/// The vendor's case tables of a `--cases-dir`, when there is one.
pub fn load_local(dir: Option<&Path>) -> Result<Option<LocalCases>, Usage> {
    match dir {
        Some(dir) => Ok(Some(
            LocalCases::load(dir).map_err(|e| Usage(e.to_string()))?,
        )),
        None => Ok(None),
    }
}

/// Why a bundle does not verify, ready to print: its findings name files of an untrusted
/// directory, so each line is made safe ([`ge_conformance::input::one_line`]).
pub fn bundle_findings(e: &ge_conformance::bundle::BundleError) -> String {
    use ge_conformance::input::{one_line, MAX_TEXT};
    let lines: Vec<String> = e
        .to_string()
        .lines()
        .map(|l| one_line(l, MAX_TEXT))
        .collect();
    lines.join("\n")
}

/// Exit status 1 when something failed, 0 otherwise.
pub fn status(failed: bool) -> ExitCode {
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The capabilities whose properties check a clause (under the documented profile).
pub fn properties_of(id: &str) -> Vec<Capability> {
    Capability::ALL
        .iter()
        .copied()
        .filter(|cap| {
            ge_conformance::certify::property_clauses(Profile::Documented, *cap)
                .iter()
                .any(|c| c == id)
        })
        .collect()
}

/// A seed: a decimal `u64`, or `random` for a fresh one (printed on standard error).
pub fn parse_seed(text: &str) -> Result<u64, String> {
    if text == "random" {
        let seed = ge_conformance::certify::random_seed();
        eprintln!("seed {seed} (random; replay with --seed {seed})");
        return Ok(seed);
    }
    text.parse::<u64>()
        .map_err(|_| format!("{text:?} is neither a number from 0 to 2^64-1 nor `random`"))
}
