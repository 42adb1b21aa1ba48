//! Runs one case against one backend and says pass, fail or not supported: the backend answers,
//! the harness judges (pattern, oracle), and a panicking backend fails only its own case.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use ge_spec::{Backend, Observation, Scenario, TableCase};

use crate::oracle;
use crate::pattern;

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The observation matched.
    Pass,
    /// It did not; the reason says where.
    Fail(String),
    /// The backend does not implement the capability (and did not claim it).
    NotSupported(String),
}

impl Verdict {
    /// True for [`Verdict::Pass`].
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }
}

/// Asks `backend` about `scenario`, turning a panic into an error message. `sandbox` is the
/// directory weights scenarios work in.
pub fn ask(
    backend: &dyn Backend,
    scenario: &Scenario,
    sandbox: &Path,
) -> Result<Result<Observation, ge_spec::NotSupported>, String> {
    catch_unwind(AssertUnwindSafe(|| backend.answer(scenario, sandbox))).map_err(|payload| {
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
pub fn judge_observation(case: &TableCase, mut observation: Observation) -> Verdict {
    observation.canonicalize();
    let mut problems = Vec::new();
    for v in oracle::judge(&case.case.scenario, &observation) {
        if case.case.oracle || v.clause == "SCENARIO" {
            problems.push(v.to_string());
        }
    }
    if let Some(expect) = &case.case.expect {
        match serde_json::to_value(&observation) {
            Ok(actual) => {
                if let Err(m) = pattern::check(expect, &actual) {
                    problems.push(format!("observation differs from the table {m}"));
                }
            }
            Err(e) => problems.push(format!("observation cannot be serialised: {e}")),
        }
    }
    if problems.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(problems.join("\n"))
    }
}

/// Runs `case` against `backend`. Weights cases get a fresh temporary sandbox.
pub fn run_case(backend: &dyn Backend, case: &TableCase) -> Verdict {
    let sandbox = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => return Verdict::Fail(format!("cannot create a sandbox directory: {e}")),
    };
    let declared = backend.capabilities().contains(&case.capability());
    match ask(backend, &case.case.scenario, sandbox.path()) {
        Err(panic) => Verdict::Fail(panic),
        Ok(Err(ns)) if declared => Verdict::Fail(format!(
            "the backend declares capability `{}` but answered not supported: {}",
            case.capability(),
            ns.reason
        )),
        Ok(Err(ns)) => Verdict::NotSupported(ns.reason),
        Ok(Ok(_)) if !declared => Verdict::NotSupported(format!(
            "capability `{}` is not declared",
            case.capability()
        )),
        Ok(Ok(observation)) => judge_observation(case, observation),
    }
}
