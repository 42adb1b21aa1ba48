//! The weights oracle: the invariants every weights observation must hold, whoever produced it.

use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};

use std::path::Path;

use super::Violation;

/// Judges a weights observation.
pub fn judge(scenario: &WeightsScenario, observation: &WeightsObservation) -> Vec<Violation> {
    let _ = (scenario, observation);
    Vec::new()
}

/// Checks what a weights backend says against what is really in `sandbox` after it answered:
/// the harness never takes a backend's word for the filesystem.
pub fn check_sandbox(
    scenario: &WeightsScenario,
    observation: &WeightsObservation,
    sandbox: &Path,
) -> Vec<Violation> {
    let _ = (scenario, observation, sandbox);
    Vec::new()
}
