//! The weights oracle: the invariants every weights observation must hold, whoever produced it.

use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};

use super::Violation;

/// Judges a weights observation.
pub fn judge(scenario: &WeightsScenario, observation: &WeightsObservation) -> Vec<Violation> {
    let _ = (scenario, observation);
    Vec::new()
}
