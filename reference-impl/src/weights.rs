//! The reference weights capability (being written; see the weights issue).

use ge_spec::vocab::weights::{WeightsObservation, WeightsScenario};
use ge_spec::vocab::Capability;
use ge_spec::{Answer, NotSupported};

/// Loads (and maybe unloads) a model with external weights inside a sandbox.
pub fn load(scenario: &WeightsScenario, sandbox: &std::path::Path) -> Answer<WeightsObservation> {
    let _ = (scenario, sandbox);
    Err(NotSupported::new(
        Capability::Weights,
        "not implemented yet",
    ))
}
