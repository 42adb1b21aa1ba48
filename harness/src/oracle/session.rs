//! The session oracle: the invariants every session observation must hold, whoever produced it.

use ge_spec::vocab::session::{SessionObservation, SessionScenario};

use super::Violation;

/// Judges a session observation.
pub fn judge(scenario: &SessionScenario, observation: &SessionObservation) -> Vec<Violation> {
    let _ = (scenario, observation);
    Vec::new()
}
