//! Runs one case against one backend and says pass, fail or not supported: the backend answers,
//! the harness judges (pattern, oracle), and a panicking backend fails only its own case.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use ge_spec::{Backend, Observation, Profile, Scenario, TableCase};

use crate::oracle;
use crate::pattern;

/// One reason a case failed, with the clauses it implicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The clauses broken: the oracle's clause for an invariant violation, the case's clauses
    /// for a departure from the table's expectation, none for a backend that broke down.
    pub clauses: Vec<String>,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.clauses.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "[{}] {}", self.clauses.join(", "), self.message)
        }
    }
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The observation matched.
    Pass,
    /// It did not; each problem says where and which clauses it breaks.
    Fail(Vec<Problem>),
    /// The backend does not implement the capability (and did not claim it).
    NotSupported(String),
}

impl Verdict {
    /// True for [`Verdict::Pass`].
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// A failure with one problem that implicates no clause (the backend broke down).
    pub fn broke(message: impl Into<String>) -> Self {
        Verdict::Fail(vec![Problem {
            clauses: Vec::new(),
            message: message.into(),
        }])
    }

    /// The clauses a failing verdict implicates (empty for other verdicts).
    pub fn broken_clauses(&self) -> Vec<String> {
        match self {
            Verdict::Fail(problems) => {
                let mut all: Vec<String> =
                    problems.iter().flat_map(|p| p.clauses.clone()).collect();
                all.sort();
                all.dedup();
                all
            }
            _ => Vec::new(),
        }
    }
}

/// A sandbox directory for `scenario`: a fresh temporary directory for weights scenarios (the
/// only capability that touches a filesystem), nothing for the others, which never look at it.
///
/// The directory goes under `$TMPDIR` when it is set, else under `/dev/shm` when that exists
/// (RAM-backed: creating and removing a directory there costs microseconds, on a disk
/// filesystem about a tenth of a millisecond, which dominated the weights fuzz targets), else
/// under the system's temporary directory.
pub fn sandbox(scenario: &Scenario) -> std::io::Result<Option<tempfile::TempDir>> {
    if !matches!(scenario, Scenario::Weights(_)) {
        return Ok(None);
    }
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let root = ROOT.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        if std::env::var_os("TMPDIR").is_none() && shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    });
    tempfile::Builder::new()
        .prefix("ge-sandbox-")
        .tempdir_in(root)
        .or_else(|_| tempfile::tempdir())
        .map(Some)
}

/// The path of an optional sandbox; the empty path stands for "no sandbox".
pub fn sandbox_path(dir: &Option<tempfile::TempDir>) -> &Path {
    dir.as_ref().map_or(Path::new(""), |d| d.path())
}

/// Asks `backend` about `scenario`, turning a panic into an error message. `sandbox` is the
/// directory weights scenarios work in; their `setup` (traps, other sessions' leftovers) is
/// planted there first, whoever asks.
pub fn ask(
    backend: &dyn Backend,
    scenario: &Scenario,
    sandbox: &Path,
) -> Result<Result<Observation, ge_spec::NotSupported>, String> {
    if let Scenario::Weights(s) = scenario {
        oracle::weights::plant(s, sandbox)
            .map_err(|e| format!("the scenario's setup cannot be planted: {e}"))?;
    }
    catch_unwind(AssertUnwindSafe(|| backend.answer(scenario, sandbox))).map_err(|payload| {
        // A subprocess backend whose request failed (timeout, crash, garbage) unwinds with this.
        if let Some(broken) = payload.downcast_ref::<crate::protocol::BrokenBackend>() {
            return broken.0.clone();
        }
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string payload".to_owned());
        format!("the backend panicked: {what}")
    })
}

/// Judges an observation against a case: the capability must match, the `expect` pattern must
/// match, and when the case asks for it, the oracle must find nothing.
pub fn judge_observation(case: &TableCase, observation: Observation) -> Verdict {
    judge_observation_in(Profile::Documented, case, observation)
}

/// [`judge_observation`] with the oracles of `profile`.
pub fn judge_observation_in(
    profile: Profile,
    case: &TableCase,
    mut observation: Observation,
) -> Verdict {
    observation.canonicalize();
    let mut problems = Vec::new();
    // A case that runs under both profiles is judged on what they agree on: a converted
    // node may carry either profile's name (a profile-bound case checks the name).
    let violations = match (&case.case.scenario, &observation) {
        (ge_spec::Scenario::Weights(s), ge_spec::Observation::Weights(o))
            if case.case.profile.is_none() =>
        {
            oracle::weights::judge_shared_in(profile, s, o)
        }
        _ => oracle::judge_in(profile, &case.case.scenario, &observation),
    };
    for v in violations {
        if case.case.oracle || v.clause == "SCENARIO" {
            problems.push(Problem {
                clauses: vec![v.clause],
                message: v.message,
            });
        }
    }
    if let Some(expect) = &case.case.expect {
        match serde_json::to_value(&observation) {
            Ok(actual) => {
                if let Err(m) = pattern::check(expect, &actual) {
                    problems.push(Problem {
                        clauses: case.case.clauses.clone(),
                        message: format!("observation differs from the table {m}"),
                    });
                }
            }
            Err(e) => problems.push(Problem {
                clauses: Vec::new(),
                message: format!("observation cannot be serialised: {e}"),
            }),
        }
    }
    if problems.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(problems)
    }
}

/// Runs `case` against `backend` under the documented profile. Weights cases get a fresh
/// temporary sandbox.
pub fn run_case(backend: &dyn Backend, case: &TableCase) -> Verdict {
    run_case_in(Profile::Documented, backend, case)
}

/// Runs `case` against `backend`, judged with the oracles of `profile` (the caller picks the
/// cases that run under it: [`ge_spec::Case::runs_in`]).
pub fn run_case_in(profile: Profile, backend: &dyn Backend, case: &TableCase) -> Verdict {
    let sandbox = match sandbox(&case.case.scenario) {
        Ok(dir) => dir,
        Err(e) => return Verdict::broke(format!("cannot create a sandbox directory: {e}")),
    };
    let declared = backend.capabilities().contains(&case.capability());
    match ask(backend, &case.case.scenario, sandbox_path(&sandbox)) {
        Err(panic) => Verdict::broke(panic),
        Ok(Err(ns)) if declared => Verdict::broke(format!(
            "the backend declares capability `{}` but answered not supported: {}",
            case.capability(),
            ns.reason
        )),
        Ok(Err(ns)) => Verdict::NotSupported(ns.reason),
        Ok(Ok(_)) if !declared => Verdict::NotSupported(format!(
            "capability `{}` is not declared",
            case.capability()
        )),
        Ok(Ok(observation)) => {
            let mut verdict = judge_observation_in(profile, case, observation.clone());
            if let (ge_spec::Scenario::Weights(s), ge_spec::Observation::Weights(o)) =
                (&case.case.scenario, &observation)
            {
                let found =
                    oracle::weights::check_sandbox_in(profile, s, o, sandbox_path(&sandbox));
                if !found.is_empty() {
                    let mut problems = match verdict {
                        Verdict::Fail(p) => p,
                        _ => Vec::new(),
                    };
                    problems.extend(found.into_iter().map(|v| Problem {
                        clauses: vec![v.clause],
                        message: v.message,
                    }));
                    verdict = Verdict::Fail(problems);
                }
            }
            verdict
        }
    }
}

/// Runs every case of `capability` (all cases when `None`) against `backend` and returns, for
/// each clause implicated by a failure, the failing cases. Fault-injection tests use it to prove
/// that a deliberately wrong backend is caught by the clause it breaks.
pub fn caught_clauses(
    backend: &dyn Backend,
    capability: Option<ge_spec::Capability>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut caught: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for case in ge_spec::Spec::embedded().cases_in(Profile::Documented) {
        if capability.is_some_and(|c| c != case.capability()) {
            continue;
        }
        for clause in run_case(backend, case).broken_clauses() {
            caught.entry(clause).or_default().push(case.full_name());
        }
    }
    caught
}
