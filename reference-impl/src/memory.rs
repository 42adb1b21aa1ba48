//! The reference memory capability (being written; see the memory issue).

use ge_spec::vocab::memory::{MemoryObservation, MemoryScenario};
use ge_spec::vocab::Capability;
use ge_spec::{Answer, NotSupported};

/// Plans the device memory of one graph.
pub fn plan(scenario: &MemoryScenario) -> Answer<MemoryObservation> {
    let _ = scenario;
    Err(NotSupported::new(Capability::Memory, "not implemented yet"))
}
