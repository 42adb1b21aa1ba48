//! The reference transfer capability (being written; see the transfer issue).

use ge_spec::vocab::transfer::{TransferObservation, TransferScenario};
use ge_spec::vocab::Capability;
use ge_spec::{Answer, NotSupported};

/// Plans the host-to-device transfer of the user inputs of one run.
pub fn plan(scenario: &TransferScenario) -> Answer<TransferObservation> {
    let _ = scenario;
    Err(NotSupported::new(
        Capability::Transfer,
        "not implemented yet",
    ))
}
