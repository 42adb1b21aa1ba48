//! The memory oracle: the invariants every memory observation must hold, whoever produced it.

use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};

use super::Violation;

/// Judges a memory observation.
pub fn judge(scenario: &MemoryScenario, observation: &MemoryObservation) -> Vec<Violation> {
    let _ = (scenario, observation);
    Vec::new()
}
